package radosbench

import (
	"testing"

	"github.com/tierbench/tierbench/engine/enginetest"
)

// TestMain removes the cluster's shared test folder after the tests.
func TestMain(m *testing.M) { enginetest.Main(m, "radosbench") }
