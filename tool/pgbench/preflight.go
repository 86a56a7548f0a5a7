package pgbench

import (
	"fmt"

	"github.com/tierbench/tierbench/host/proc"
)

// pgbenchCandidates are where pgbench is looked for: PATH, then Debian's
// versioned folders, which are not in PATH.
var pgbenchCandidates = []string{"pgbench",
	"/usr/lib/postgresql/17/bin/pgbench", "/usr/lib/postgresql/16/bin/pgbench", "/usr/lib/postgresql/15/bin/pgbench"}

// Preflight reports whether pgbench is installed, so a study with driver:
// pgbench is refused before it creates anything.
func Preflight() error {
	if _, err := proc.Find("postgresql-client", pgbenchCandidates...); err != nil {
		return fmt.Errorf("%w (or run `make setup`)", err)
	}
	return nil
}
