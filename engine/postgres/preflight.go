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

// ServerUser is the OS user the server runs as, for study preflight's
// check that it can reach the tiers' folders.
func (Engine) ServerUser() (label, user string) {
	if _, err := lookupOSUser(); err != nil {
		return "PostgreSQL", ""
	}
	return "PostgreSQL", osUser
}
