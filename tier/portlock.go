package tier

import "github.com/tierbench/tierbench/host/tcpport"

// KindPortLock is an nftables table that closes a server's loopback ports
// to every local user but root and the server's own (package host/tcpport).
const KindPortLock = "port-lock"

// LockPorts is tcpport.Lock recorded in the workspace's ledger, so `tierbench
// cleanup` removes the table after a kill.
func (w *Workspace) LockPorts(name string, ports, uids []int) (unlock func() error, err error) {
	if w.ledger == nil {
		table := tcpport.LockTable(name)
		if err := tcpport.Lock(table, ports, uids); err != nil {
			return nil, err
		}
		return func() error { return tcpport.Unlock(table) }, nil
	}
	return w.ledger.LockPorts(name, ports, uids)
}

// LockPorts is tcpport.Lock recorded in the ledger before the table is made.
func (l *Ledger) LockPorts(name string, ports, uids []int) (unlock func() error, err error) {
	table := tcpport.LockTable(name)
	r, err := l.Intend(Resource{Kind: KindPortLock, Path: table})
	if err != nil {
		return nil, err
	}
	if err := tcpport.Lock(table, ports, uids); err != nil {
		_ = l.Done(r)
		return nil, err
	}
	return func() error {
		if err := tcpport.Unlock(table); err != nil {
			return err
		}
		return l.Done(r)
	}, nil
}
