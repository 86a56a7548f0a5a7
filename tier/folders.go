package tier

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// RunFolderPrefix starts the name of every run folder tierbench creates, so
// leftovers are recognisable.
const RunFolderPrefix = "tierbench-run-"

// RunFolders are one run's fresh folders: one per tier the placement uses,
// named RunFolderPrefix + the run id and recorded in the ledger (when there
// is one), with a subfolder per component.
type RunFolders struct {
	// Dirs maps each component to its own empty folder.
	Dirs map[string]string
	// Devices maps each component to its tier's device (Info.Device), for
	// engines that place a component on a device rather than in a folder.
	Devices map[string]string
	ledger  *Ledger
	created []Resource
}

// RunFolders creates run runID's folders for a placement (component ->
// tier name). A folder that already exists is someone else's: the run
// fails and the folder is neither recorded nor removed. On failure, what
// was created is removed.
func (w *Workspace) RunFolders(runID string, placement map[string]string) (*RunFolders, error) {
	f := &RunFolders{Dirs: map[string]string{}, Devices: map[string]string{}, ledger: w.ledger}
	roots := map[string]string{}
	comps := make([]string, 0, len(placement))
	for c := range placement {
		comps = append(comps, c)
	}
	sort.Strings(comps)
	for _, c := range comps {
		tname := placement[c]
		root, ok := roots[tname]
		if !ok {
			root = filepath.Join(w.tiers[tname].Path, RunFolderPrefix+runID)
			r, err := w.mkdirOwned(root)
			if err != nil {
				// Not ours (it existed before): never recorded, never removed.
				return nil, errors.Join(fmt.Errorf("run folder on tier %s: %w", tname, err), f.Remove())
			}
			f.created = append(f.created, r)
			roots[tname] = root
		}
		dir := filepath.Join(root, c)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, errors.Join(fmt.Errorf("create folder for %s on tier %s: %w", c, tname, err), f.Remove())
		}
		f.Dirs[c] = dir
		f.Devices[c] = w.tiers[tname].Device
	}
	return f, nil
}

// mkdirOwned creates a folder tierbench owns, through the ledger when there
// is one (see Ledger.Mkdir).
func (w *Workspace) mkdirOwned(dir string) (Resource, error) {
	if w.ledger != nil {
		return w.ledger.Mkdir(dir, 0o755)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return Resource{}, fmt.Errorf("create %s: %w", dir, err)
	}
	return Resource{Kind: KindDir, Path: dir}, nil
}

// Remove deletes the folders (after each run, unless --keep).
func (f *RunFolders) Remove() error {
	var errs []error
	for _, r := range f.created {
		if err := Undo(r); err != nil {
			errs = append(errs, fmt.Errorf("remove run folder: %w", err))
			continue
		}
		errs = append(errs, f.forget(r))
	}
	f.created = nil
	return errors.Join(errs...)
}

// Keep leaves the folders in place and forgets them, so `tierbench cleanup`
// does not delete what --keep asked to keep.
func (f *RunFolders) Keep() error {
	var errs []error
	for _, r := range f.created {
		errs = append(errs, f.forget(r))
	}
	f.created = nil
	return errors.Join(errs...)
}

func (f *RunFolders) forget(r Resource) error {
	if f.ledger == nil {
		return nil
	}
	return f.ledger.Done(r)
}

// Mkdir creates the folder path and records it in the ledger, so that
// `tierbench cleanup` removes it after a kill. The record is written before
// the folder is made, marked pending, and confirmed once os.Mkdir has
// succeeded: a kill in between still leaves a record, and a folder that
// already existed (someone else's, or a leftover) is never taken for
// tierbench's: its pending record is dropped at once, and a pending record
// found by cleanup removes its folder only while it is empty.
func (l *Ledger) Mkdir(path string, perm os.FileMode) (Resource, error) {
	pending, err := l.Intend(Resource{Kind: KindDir, Path: path, Pending: true})
	if err != nil {
		return Resource{}, err
	}
	if err := os.Mkdir(path, perm); err != nil {
		if derr := l.Done(pending); derr != nil {
			err = errors.Join(err, derr)
		}
		return Resource{}, fmt.Errorf("create %s: %w", path, err)
	}
	made := pending
	made.Pending = false
	if err := l.Update(pending, made); err != nil {
		return pending, err // still recorded, as pending: cleanup removes it while empty
	}
	return made, nil
}

// removePending undoes a folder whose Mkdir was never confirmed: removed if
// it is empty (tierbench made it and was killed before confirming), left
// alone otherwise (it was somebody else's, or tierbench's before it was
// confirmed, which holds nothing).
func removePending(path string) error {
	err := os.Remove(path)
	switch {
	case err == nil, errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		return nil
	}
	return fmt.Errorf("remove %s: %w", path, err)
}
