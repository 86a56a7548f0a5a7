package redis

import (
	"fmt"

	"github.com/tierbench/tierbench/engine/server"
)

// Preflight reports whether redis-server is installed, so a study is
// refused before it creates anything rather than storing every run failed
// for want of it.
func (Engine) Preflight() error {
	if _, err := server.Find("redis-server", binaries...); err != nil {
		return fmt.Errorf("%w (or run `make setup`)", err)
	}
	return nil
}
