package pebble

import (
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tierbench/tierbench/tier/syncdelay"
)

// syncDelayFS makes the syncs of files under the rules' folders take as
// long as their tiers' devices' (engine.Config.SyncDelays): Pebble runs in
// this process, so its files' Sync methods wait, where a server's sync
// system calls are trapped (package syncdelay).
type syncDelayFS struct {
	vfs.FS
	delays *syncdelay.InProcess
}

// withSyncDelays wraps fs.
func withSyncDelays(fs vfs.FS, rules syncdelay.Rules) vfs.FS {
	return syncDelayFS{FS: fs, delays: rules.InProcess()}
}

func (fs syncDelayFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return f, err
	}
	return syncDelayFile{File: f, name: name, delays: fs.delays}, nil
}

func (fs syncDelayFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f, err)
}

func (fs syncDelayFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	return fs.wrap(name, f, err)
}

func (fs syncDelayFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.wrap(name, f, err)
}

func (fs syncDelayFS) OpenDir(name string) (vfs.File, error) {
	f, err := fs.FS.OpenDir(name)
	return fs.wrap(name, f, err)
}

func (fs syncDelayFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(newname, f, err)
}

func (fs syncDelayFS) Unwrap() vfs.FS { return fs.FS }

// syncDelayFile is a file whose syncs wait.
type syncDelayFile struct {
	vfs.File
	name   string
	delays *syncdelay.InProcess
}

func (f syncDelayFile) Sync() error {
	return f.delays.Sync(f.name, f.File.Sync)
}

func (f syncDelayFile) SyncData() error {
	return f.delays.Sync(f.name, f.File.SyncData)
}

func (f syncDelayFile) SyncTo(length int64) (fullSync bool, err error) {
	err = f.delays.Sync(f.name, func() error {
		var e error
		fullSync, e = f.File.SyncTo(length)
		return e
	})
	return fullSync, err
}
