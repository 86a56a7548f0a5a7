package sysbench

import (
	"fmt"

	"github.com/tierbench/tierbench/host/proc"
)

// Preflight reports whether sysbench is installed, so a study with driver:
// sysbench is refused before it creates anything.
func Preflight() error {
	if _, err := proc.Find("sysbench", "sysbench"); err != nil {
		return fmt.Errorf("%w (or run `make setup`)", err)
	}
	return nil
}
