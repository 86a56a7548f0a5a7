package server

import (
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/tcpport"
)

// LockPorts closes a server's loopback TCP ports to every local user but
// root and uids, for a server that cannot require a password (OpenSearch
// OSS): through cfg.LockPorts, which records the lock for cleanup, or
// directly when the engine runs outside a study (tests).
func LockPorts(cfg engine.Config, name string, ports, uids []int) (unlock func() error, err error) {
	if cfg.LockPorts != nil {
		return cfg.LockPorts(name, ports, uids)
	}
	table := tcpport.LockTable(name)
	if err := tcpport.Lock(table, ports, uids); err != nil {
		return nil, err
	}
	return func() error { return tcpport.Unlock(table) }, nil
}
