package tier

import "github.com/tierbench/tierbench/portlock"

// KindPortLock is an nftables table that closes a server's loopback ports
// to every local user but root and the server's own (package portlock).
const KindPortLock = "port-lock"

// LockPorts is portlock.Lock recorded in the workspace's ledger, so `tierbench
// cleanup` removes the table after a kill.
func (w *Workspace) LockPorts(name string, ports, uids []int) (unlock func() error, err error) {
	if w.ledger == nil {
		table := portlock.Table(name)
		if err := portlock.Lock(table, ports, uids); err != nil {
			return nil, err
		}
		return func() error { return portlock.Unlock(table) }, nil
	}
	return w.ledger.LockPorts(name, ports, uids)
}

// LockPorts is portlock.Lock recorded in the ledger before the table is made.
func (l *Ledger) LockPorts(name string, ports, uids []int) (unlock func() error, err error) {
	table := portlock.Table(name)
	r, err := l.Intend(Resource{Kind: KindPortLock, Path: table})
	if err != nil {
		return nil, err
	}
	if err := portlock.Lock(table, ports, uids); err != nil {
		_ = l.Done(r)
		return nil, err
	}
	return func() error {
		if err := portlock.Unlock(table); err != nil {
			return err
		}
		return l.Done(r)
	}, nil
}
