package tier

import "github.com/tierbench/tierbench/host/cgroupfs"

// KindMemoryGroup is a memory cgroup a run's engine processes start in
// (the study's memory setting; package cgroupfs), removed with whatever is still in it.
const KindMemoryGroup = "memory-cgroup"

// MemoryGroup makes the memory cgroup name with limit, recorded in the
// workspace's ledger before it is made, so `tierbench cleanup` removes it
// after a kill; remove kills what is left in it and removes it.
func (w *Workspace) MemoryGroup(name string, limit int64) (g *cgroupfs.MemoryGroup, remove func() error, err error) {
	if w.ledger == nil {
		if g, err = cgroupfs.CreateMemory(name, limit); err != nil {
			return nil, nil, err
		}
		return g, g.Remove, nil
	}
	path, err := cgroupfs.MemoryPath(name)
	if err != nil {
		return nil, nil, err
	}
	r, err := w.ledger.Intend(Resource{Kind: KindMemoryGroup, Path: path})
	if err != nil {
		return nil, nil, err
	}
	if g, err = cgroupfs.CreateMemory(name, limit); err != nil {
		_ = w.ledger.Done(r)
		return nil, nil, err
	}
	return g, func() error {
		if err := g.Remove(); err != nil {
			return err
		}
		return w.ledger.Done(r)
	}, nil
}

// undoMemoryGroup removes a recorded memory cgroup, if it is still there.
func undoMemoryGroup(r Resource) error {
	g, err := cgroupfs.OpenMemory(r.Path)
	if err != nil {
		return nil // gone
	}
	return g.Remove()
}
