package redis

import (
	"fmt"

	"github.com/tierbench/tierbench/host/proc"
)

// Preflight reports whether redis-server is installed, so a study is
// refused before it creates anything rather than storing every run failed
// for want of it.
func (Engine) Preflight() error {
	if _, err := proc.Find("redis-server", binaries...); err != nil {
		return fmt.Errorf("%w (or run `make setup`)", err)
	}
	return nil
}

// ServerUser is the OS user redis-server runs as (none when tierbench is
// not root), for study preflight's check that it can reach the tiers'
// folders.
func (Engine) ServerUser() (label, user string) {
	u, _ := proc.RunAs("redis-server", "redis-server", serverUsers...)
	return "Redis", u
}
