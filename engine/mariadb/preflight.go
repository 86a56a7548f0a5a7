package mariadb

import (
	"fmt"

	"github.com/tierbench/tierbench/host/proc"
)

// Preflight reports whether the MariaDB server and its install tool are
// installed (the same candidates Open uses), so a study is refused before
// it creates anything rather than storing every run failed for want of them.
func (Engine) Preflight() error {
	for _, cands := range [][]string{mariadbdPaths, installDBPaths} {
		if _, err := proc.Find("mariadb-server", cands...); err != nil {
			return fmt.Errorf("%w (or run `make setup`)", err)
		}
	}
	return nil
}

// ServerUser is the OS user mariadbd runs as (none when tierbench is not
// root), for study preflight's check that it can reach the tiers' folders.
func (Engine) ServerUser() (label, user string) {
	u, _ := proc.RunAs("mariadbd", "mariadb-server", serverUser)
	return "MariaDB", u
}
