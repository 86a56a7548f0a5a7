package objects

import (
	"testing"

	"github.com/tierbench/tierbench/engine/enginetest"
)

// TestMain removes the clusters' shared test folder after the tests.
func TestMain(m *testing.M) { enginetest.Main(m, "objects") }
