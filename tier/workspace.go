package tier

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

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
