package study

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/ceph"
	"github.com/tierbench/tierbench/engine/ceph/rbdtier"
	"github.com/tierbench/tierbench/hostenv"
	"github.com/tierbench/tierbench/tool"
)

// readyEngine is an engine whose Preflight says what the test tells it.
type readyEngine struct{ err error }

func (e readyEngine) Spec() engine.Spec { return pebbleSpec }
func (e readyEngine) Open(context.Context, engine.Config) (engine.DB, error) {
	return nil, errors.New("not for opening")
}
func (e readyEngine) Preflight() error { return e.err }

// machine answers Preflight's questions: one engine, one tool, each ready
// or not as the case says.
type machine struct {
	engineErr, toolErr error
}

func (m machine) Engine(name string) (engine.Engine, bool) {
	return readyEngine{m.engineErr}, name == "pebble" || name == "rocks"
}

func (m machine) Tool(name string) (tool.Tool, bool) {
	t := benchTool
	t.Preflight = func() error { return m.toolErr }
	return t, name == "bench"
}

func (machine) Ceph() rbdtier.Ceph { return ceph.Engine{} }

// TestPreflight checks each thing a study needs from the machine: one
// problem per missing thing, naming it and the command that installs it.
func TestPreflight(t *testing.T) {
	empty := t.TempDir() // PATH for "nothing is installed"
	cases := []struct {
		name  string
		edits []string
		src   string
		m     machine
		path  string // PATH for the case; "" keeps it
		want  string // "" when the study is ready
		line  string // marker of the problem's line; "" for none
	}{
		{name: "ready", edits: nil},
		{name: "engine not installed", m: machine{engineErr: errors.New("redis-server is not installed: apt-get install redis-server")},
			want: "engine pebble cannot start on this machine: redis-server is not installed: apt-get install redis-server"},
		{name: "target needs no engine binary", src: "name: t\nengine: rocks\ntarget: rocks://127.0.0.1:1/x\nworkload: {name: ycsb-a}\nclients: 1\nduration: 1s\n",
			m: machine{engineErr: errors.New("not installed")}},
		{name: "tool driver not installed", src: "name: t\nengine: rocks\ntarget: rocks://127.0.0.1:1/x\nworkload: {name: ycsb-a}\nclients: 1\nduration: 1s\ndriver: [builtin, bench]\n",
			m: machine{toolErr: errors.New("bench is not installed: apt-get install bench")}, want: "driver bench cannot run on this machine: bench is not installed: apt-get install bench"},
		{name: "fio missing for probe quick", edits: []string{"repeat: 1", "repeat: 1\nprobe: quick"}, path: empty,
			want: "probe: quick runs fio on every tier, and fio is not installed: apt-get install fio"},
		{name: "fio not needed for cached probes", edits: []string{"repeat: 1", "repeat: 1\nprobe: cached"}, path: empty},
		// Each fits in memory (a larger RAM tier is refused when the study
		// is read); together they do not fit in /dev/shm.
		{name: "loop images larger than their backing", edits: []string{"tiers:\n", fmt.Sprintf("tiers:\n  big: {loop: {backing: ram, size: %d}}\n  big2: {loop: {backing: ram, size: %[1]d}}\n", hostenv.MemoryBytes()*9/10)},
			want: "loop tiers big, big2 (backing: ram) together need", line: "big:"},
		{name: "folder with less free space than the data", edits: []string{"records: 100000", "records: 1000000000000000"},
			want: `tier "disk" has`, line: "disk: {"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.path != "" {
				t.Setenv("PATH", c.path)
			}
			fill, _, _ := fixture(t)
			src := c.src
			if src == "" {
				src = edit(t, example, c.edits)
			}
			src = fill(src)
			st := mustParse(t, src)
			err := Preflight(st, c.m, t.TempDir())
			if c.want == "" {
				if err != nil {
					t.Fatalf("Preflight: %v", err)
				}
				return
			}
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Preflight returned %v, want Problems", err)
			}
			line := 0
			if c.line != "" {
				line = lineOf(t, src, c.line)
			}
			found := false
			for _, p := range ps {
				found = found || p.Line == line && strings.Contains(p.Msg, c.want) && p.File == "study.yaml"
			}
			if !found {
				t.Errorf("no problem at line %d containing\n  %s\ngot:\n%v", line, c.want, err)
			}
		})
	}
}

// TestPreflightProvisionedNeedsRoot checks that a tier tierbench mounts is
// refused up front for a user who cannot mount.
func TestPreflightProvisionedNeedsRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("the case of a user who is not root; root may mount") // on purpose, not for want of anything
	}
	fill, _, _ := fixture(t)
	st := mustParse(t, fill(edit(t, example, []string{"ram:  {path: RAMDIR}", "ram:  {tmpfs: {size: 1GiB}}"})))
	err := Preflight(st, machine{}, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `tier "ram" is mounted by tierbench, which needs root`) {
		t.Errorf("Preflight = %v, want the root problem", err)
	}
}
