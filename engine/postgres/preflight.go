package postgres

import "fmt"

// Preflight reports whether PostgreSQL's server programs (postgres and
// initdb) are installed, so a study is refused before it creates anything
// rather than storing every run failed for want of them.
func (Engine) Preflight() error {
	if _, err := findBinaries(); err != nil {
		return fmt.Errorf("%w (or run `make setup`)", err)
	}
	return nil
}
