package pebble

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

// TestChild runs Pebble in a child process (engine.Config.InChild): every
// records operation goes through it, a clean close leaves the data for a
// reopen, a crash (SIGKILL) keeps what synced commits acknowledged, and
// neither leaves the child behind.
func TestChild(t *testing.T) {
	ctx := context.Background()
	dirs := map[string]string{Data: filepath.Join(t.TempDir(), "data"), WAL: filepath.Join(t.TempDir(), "wal")}
	for _, p := range dirs {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var tracked []int
	scratch := t.TempDir()
	cfg := engine.Config{Dirs: dirs, Durability: engine.Sync, Options: Engine{}.Spec().MustResolveOptions(nil), InChild: true, Scratch: scratch,
		Track: func(pid int) func() { tracked = append(tracked, pid); return func() {} }}
	logs := func() []string {
		m, _ := filepath.Glob(filepath.Join(scratch, "pebble-child-*.log"))
		return m
	}
	open := func() (engine.DB, engine.Session) {
		t.Helper()
		db, err := Engine{}.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		s, err := db.NewSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return db, s
	}
	fieldsOf := func(s engine.Session, key string) []string {
		t.Helper()
		fs, err := s.(engine.FieldsReader).ReadFields(ctx, []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, string(f))
		}
		return out
	}

	db, s := open()
	rec := s.(engine.Records)
	if err := rec.InsertBatch(ctx, [][]byte{[]byte("a"), []byte("b")}, [][][]byte{{[]byte("a0"), []byte("a1")}, {[]byte("b0"), []byte("b1")}}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Update(ctx, []byte("a"), []engine.Field{{Index: 1, Value: []byte("A1")}}); err != nil {
		t.Fatal(err)
	}
	if found, err := rec.Read(ctx, []byte("b")); err != nil || !found {
		t.Errorf("read b: found %v, %v", found, err)
	}
	if n, err := rec.Scan(ctx, []byte("a"), 10); err != nil || n != 2 {
		t.Errorf("scan: %d, %v; want 2", n, err)
	}
	if got := fieldsOf(s, "a"); len(got) != 2 || got[1] != "A1" {
		t.Errorf("fields of a %q, want the update merged", got)
	}
	if pid := db.(engine.PIDer).PID(); pid == os.Getpid() || len(tracked) != 1 || tracked[0] != pid {
		t.Errorf("engine pid %d, tracked %v: want the child's, tracked", pid, tracked)
	}
	if l := logs(); len(l) != 1 {
		t.Errorf("child logs in the scratch folder: %v; want its stderr in one", l)
	}
	s.Close()
	if err := db.Close(); err != nil {
		t.Fatalf("clean close: %v", err)
	}
	if l := logs(); len(l) != 0 {
		t.Errorf("a clean close left the child's log: %v", l)
	}

	db, s = open()
	if got := fieldsOf(s, "b"); len(got) != 2 || got[0] != "b0" {
		t.Errorf("after a clean close, fields of b %q", got)
	}
	if err := s.(engine.Records).Insert(ctx, []byte("c"), [][]byte{[]byte("c0")}); err != nil {
		t.Fatal(err)
	}
	pid := db.(engine.PIDer).PID()
	if err := db.(engine.Crasher).Crash(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("child %d alive after Crash", pid)
	}
	if _, err := s.(engine.Records).Read(ctx, []byte("c")); err == nil {
		t.Error("a read after the crash succeeded")
	}
	s.Close()
	if err := db.Close(); err != nil {
		t.Errorf("close after a crash: %v", err)
	}

	db, s = open()
	defer db.Close()
	defer s.Close()
	if got := fieldsOf(s, "c"); len(got) != 1 || got[0] != "c0" {
		t.Errorf("a synced insert acknowledged before the crash: fields %q", got)
	}
}
