// Package pebble is tierbench's embedded engine: CockroachDB's Pebble LSM,
// opened in-process with its data folder and its WAL folder (Pebble's WALDir)
// placed on separate tiers. It needs nothing installed, so a study runs on a
// laptop.
package pebble

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
)

// Component names.
const (
	Data = "data"
	WAL  = "wal"
)

// Option names.
const (
	optCache                 = "cache"
	optMemtable              = "memtable"
	optL0CompactionThreshold = "l0_compaction_threshold"
)

// Engine opens Pebble instances.
type Engine struct{}

var _ engine.Engine = Engine{}

// Spec declares Pebble's components, durability modes and options.
func (Engine) Spec() engine.Spec {
	return engine.Spec{
		Name:      "pebble",
		InProcess: true,
		// A crash run opens it in a child process (child.go).
		Crashable: true,
		// The whole-machine bound of tierbench's own driver: pebble runs
		// inside tierbench.
		MaxClients: 1024, MaxClientsWhy: "pebble runs inside tierbench, and " + engine.DriverClientsWhy,
		Models: []engine.Model{engine.ModelRecords},
		Doc:    "embedded Pebble LSM key-value store (CockroachDB's storage engine), in-process",
		Components: []engine.Component{
			{Name: Data, Role: engine.RoleData, Doc: "sstables, MANIFEST and OPTIONS (the DB folder)"},
			{Name: WAL, Role: engine.RoleCommitLog, Doc: "write-ahead log files (Options.WALDir)"},
		},
		Modes: []engine.Mode{
			{Durability: engine.Sync, Doc: "every commit waits for the WAL fsync (Sync write option); concurrent commits share one fsync (group commit). Survives power loss.", Survives: []string{engine.CrashProcess, engine.CrashPower}},
			{Durability: engine.NoSync, Doc: "commits are acknowledged once appended to the WAL's in-memory block, before any fsync; Pebble's flusher writes a block to the OS only when it fills (32 KiB) or a synced write asks. A process crash loses the acknowledged commits still in that block (measured: tens of ms of them); a power loss also those the OS had not written."},
			{Durability: engine.NoWAL, Doc: "no WAL at all (DisableWAL): unflushed memtables are lost on any crash."},
		},
		Options: []setting.Setting{
			{Name: optCache, Kind: setting.Size, Memory: true, Default: "64MiB", Doc: "block cache size"},
			{Name: optMemtable, Kind: setting.Size, Memory: true, Default: "4MiB", Min: "64KiB", Doc: "memtable size (Options.MemTableSize); a much smaller one cannot hold a commit beside its skiplists and Pebble stops on an assertion (1B did, in every run)"},
			{Name: optL0CompactionThreshold, Kind: setting.Int, Default: "4", Min: "1", Doc: "L0 file count that triggers compaction"},
		},
	}
}

// Open creates a fresh Pebble instance in cfg.Dirs, in this process or,
// with cfg.InChild, in a child process (child.go).
func (e Engine) Open(ctx context.Context, cfg engine.Config) (engine.DB, error) {
	dataDir, walDir := cfg.Dirs[Data], cfg.Dirs[WAL]
	if dataDir == "" || walDir == "" {
		return nil, fmt.Errorf("need folders for components %s and %s", Data, WAL)
	}
	if cfg.InChild {
		return openChild(ctx, cfg)
	}
	o := cfg.Options
	l0 := o.Int(optL0CompactionThreshold)
	cache := pebble.NewCache(o.Size(optCache))
	defer cache.Unref() // the DB holds its own reference
	opts := &pebble.Options{
		Cache:                 cache,
		MemTableSize:          uint64(o.Size(optMemtable)),
		L0CompactionThreshold: l0,
		WALDir:                walDir,
		DisableWAL:            cfg.Durability == engine.NoWAL,
		Merger:                fieldMerger,
	}
	d := &DB{}
	opts.Logger = fatalLogger{fatal: &d.fatal}
	opts.EventListener = listener(&d.events)
	if len(cfg.SyncDelays) > 0 {
		// Pebble's own default FS (disk-health checks over vfs.Default),
		// with the sync delays under it.
		opts.FS = withSyncDelays(vfs.Default, cfg.SyncDelays)
		opts.WithFSDefaults()
	}
	var wo *pebble.WriteOptions
	switch cfg.Durability {
	case engine.Sync:
		wo = pebble.Sync
	case engine.NoSync, engine.NoWAL:
		wo = pebble.NoSync
	default:
		return nil, fmt.Errorf("durability %q is not supported (use sync, nosync or nowal)", cfg.Durability)
	}
	db, err := open(dataDir, opts, &d.fatal)
	if err != nil {
		return nil, fmt.Errorf("in %s (wal %s): %w", dataDir, walDir, err)
	}
	d.db, d.wo = db, wo
	return d, nil
}

// open opens Pebble, turning a fatal error during the open into an error.
func open(dir string, opts *pebble.Options, fatal *atomic.Pointer[FatalError]) (db *pebble.DB, err error) {
	defer func() {
		if p := recover(); p != nil {
			fe, ok := p.(*FatalError)
			if !ok {
				panic(p)
			}
			err = fe
		}
	}()
	db, err = pebble.Open(dir, opts)
	if fe := fatal.Load(); err == nil && fe != nil {
		err = fe
	}
	return db, err
}

// DB is an open Pebble instance.
type DB struct {
	db *pebble.DB
	wo *pebble.WriteOptions
	// fatal is the first fatal error Pebble reported (see fatal.go).
	fatal atomic.Pointer[FatalError]
	// events are the flushes and compactions Pebble reported (events.go).
	events engine.EventLog
}

var _ engine.Checker = (*DB)(nil)

// Version reports the Pebble module version linked into tierbench.
func (d *DB) Version() string { return Version() }

// Version reports the Pebble module version linked into this binary.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/cockroachdb/pebble/v2" {
				return "pebble " + m.Version
			}
		}
	}
	return "pebble (unknown version)"
}

// Close closes the instance; its folders are left for the caller to remove.
// A broken instance (see fatal.go) is abandoned, not closed: its parked
// goroutines would make Pebble's Close wait for ever.
func (d *DB) Close() error {
	if d.broken() != nil {
		return nil
	}
	if err := d.db.Close(); err != nil {
		return fmt.Errorf("close pebble: %w", err)
	}
	return nil
}

// NewSession returns a per-client session with its own encode buffer.
func (d *DB) NewSession(context.Context) (engine.Session, error) {
	return &Session{d: d}, nil
}

// Session serves the records data model. Not safe for concurrent use.
type Session struct {
	d   *DB
	buf []byte
}

var (
	_ engine.Records      = (*Session)(nil)
	_ engine.FieldsReader = (*Session)(nil)
)

// Close releases nothing; sessions share the DB.
func (s *Session) Close() error { return nil }

// Insert writes a whole record as one value.
func (s *Session) Insert(_ context.Context, key []byte, fields [][]byte) (err error) {
	if err := s.d.broken(); err != nil {
		return err
	}
	defer s.d.guard(&err)
	s.buf = encodeRecord(s.buf[:0], fields)
	return s.d.db.Set(key, s.buf, s.d.wo)
}

// InsertBatch writes records in one batch with the run's durability.
func (s *Session) InsertBatch(_ context.Context, keys [][]byte, fields [][][]byte) (err error) {
	if err := s.d.broken(); err != nil {
		return err
	}
	defer s.d.guard(&err)
	b := s.d.db.NewBatch()
	defer b.Close()
	for i, k := range keys {
		s.buf = encodeRecord(s.buf[:0], fields[i])
		if err := b.Set(k, s.buf, nil); err != nil {
			return fmt.Errorf("batch set: %w", err)
		}
	}
	return b.Commit(s.d.wo)
}

// Read fetches a record with all its fields (merging any partial updates).
func (s *Session) Read(_ context.Context, key []byte) (found bool, err error) {
	if err := s.d.broken(); err != nil {
		return false, err
	}
	defer s.d.guard(&err)
	v, closer, err := s.d.db.Get(key)
	if err == pebble.ErrNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_ = v
	return true, closer.Close()
}

// ReadFields reads a record's field values (engine.FieldsReader), for the
// check of acknowledged writes after a crash; nil when it is absent.
func (s *Session) ReadFields(_ context.Context, key []byte) (fields [][]byte, err error) {
	if err := s.d.broken(); err != nil {
		return nil, err
	}
	defer s.d.guard(&err)
	v, closer, err := s.d.db.Get(key)
	if err == pebble.ErrNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	err = decodeFields(v, func(i int, b []byte) {
		for len(fields) <= i {
			fields = append(fields, nil)
		}
		fields[i] = append([]byte(nil), b...)
	})
	return fields, err
}

// Update writes only the given fields, as a Pebble merge operand, so an
// update is a blind write like a SQL UPDATE of one column.
func (s *Session) Update(_ context.Context, key []byte, fields []engine.Field) (err error) {
	if err := s.d.broken(); err != nil {
		return err
	}
	defer s.d.guard(&err)
	s.buf = s.buf[:0]
	for _, f := range fields {
		s.buf = appendField(s.buf, f.Index, f.Value)
	}
	return s.d.db.Merge(key, s.buf, s.d.wo)
}

// Scan reads up to count records in key order starting at start.
func (s *Session) Scan(_ context.Context, start []byte, count int) (n int, err error) {
	if err := s.d.broken(); err != nil {
		return 0, err
	}
	defer s.d.guard(&err)
	it, err := s.d.db.NewIter(nil)
	if err != nil {
		return 0, err
	}
	for valid := it.SeekGE(start); valid && n < count; valid = it.Next() {
		if _, err := it.ValueAndErr(); err != nil {
			it.Close()
			return n, err
		}
		n++
	}
	return n, it.Close()
}

var _ io.Closer = (*DB)(nil)

// KeepReason implements engine.StepKeeper: YCSB's updates rewrite records
// in place in the LSM, so a step leaves the data set its size; what it
// leaves behind (memtables, compaction debt) is the steady state the next
// step's warmup reaches anyway.
func (Engine) KeepReason() string {
	return "Pebble runs in tierbench's process; a step's writes update records in place, leaving the data set its loaded size, and its memtables and compaction debt are the steady state the next step's warmup reaches anyway"
}
