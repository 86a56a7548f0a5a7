package study

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tool"
)

// serverEngine is a server engine for preflight: it runs as OS user user
// (engine.ServerUser) and preallocates files bytes on the data
// component's tier (engine.Spec.TierBytes).
type serverEngine struct {
	readyEngine
	user  string
	files int64
}

func (e serverEngine) ServerUser() (string, string) { return "Rocks", e.user }

func (e serverEngine) Spec() engine.Spec {
	s := pebbleSpec
	if e.files > 0 {
		s.TierBytes = func(placement map[string]string, _ engine.Options) map[string]int64 {
			return map[string]int64{placement["data"]: e.files}
		}
	}
	return s
}

// serverMachine is a machine whose one engine is a serverEngine.
type serverMachine struct {
	machine
	eng serverEngine
}

func (m serverMachine) Engine(name string) (engine.Engine, bool) { return m.eng, name == "pebble" }
func (m serverMachine) Tool(name string) (tool.Tool, bool)       { return m.machine.Tool(name) }

// TestPreflightFolderTiers checks what validate now finds of folder tiers
// that a run found only when its engine started: a folder the server's
// OS user cannot reach, and less free space than the files the engine
// preallocates. Each is one problem on the tier's line, naming the fix.
func TestPreflightFolderTiers(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "root, to check a folder as another OS user")
	}
	// closed is under t.TempDir(), a folder of mode 0700 others cannot
	// enter; open is under /var/tmp, which every user can.
	closed := t.TempDir()
	open, err := os.MkdirTemp("/var/tmp", "tierbench-preflight-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(open) })
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		root string // the tier's parent folder
		made bool   // whether the tier's folder exists yet
		eng  serverEngine
		want []string // fragments of the one problem; none when ready
	}{
		{name: "reachable folder", root: open, made: true, eng: serverEngine{user: "nobody"}},
		{name: "folder under one closed to the server's user", root: closed, made: true, eng: serverEngine{user: "nobody"},
			want: []string{`tier "disk": Rocks runs as OS user nobody, which cannot reach ` + filepath.Join(closed, "disk") + ": folder " + filepath.Dir(closed) + " is closed to it",
				"run chmod o+x " + filepath.Dir(closed)}},
		{name: "folder not made yet, in one closed to the server's user", root: closed, eng: serverEngine{user: "nobody"},
			want: []string{`tier "disk": Rocks runs as OS user nobody, which cannot reach ` + closed + ": folder " + filepath.Dir(closed) + " is closed to it"}},
		{name: "engine running as tierbench's own user", root: closed, made: true, eng: serverEngine{user: ""}},
		{name: "engine files beyond the free space", root: open, made: true, eng: serverEngine{user: "nobody", files: 1 << 60},
			want: []string{`tier "disk" has`, `less than placement "all-disk" puts on it: the 1.0 EiB of files engine pebble makes there`,
				"lower the engine's size options"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(c.root, "disk")
			os.RemoveAll(dir)
			if c.made {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			src := fmt.Sprintf(`name: s
engine: pebble
tiers:
  disk: {path: %s}
placements:
  all-disk: {data: disk, wal: disk}
durability: [sync]
workload: {name: ycsb-a}
clients: 1
duration: 1s
`, dir)
			st := mustParse(t, src)
			err := Preflight(st, serverMachine{eng: c.eng}, t.TempDir())
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("Preflight: %v", err)
				}
				return
			}
			var ps Problems
			if !errors.As(err, &ps) || len(ps) != 1 {
				t.Fatalf("Preflight returned %v, want one problem", err)
			}
			if ps[0].Line != lineOf(t, src, "disk: {") {
				t.Errorf("problem at line %d, want the tier's", ps[0].Line)
			}
			for _, w := range c.want {
				if !strings.Contains(ps[0].Msg, w) {
					t.Errorf("problem lacks %q:\n%s", w, ps[0].Msg)
				}
			}
		})
	}
}

// TestPreflightStateFolder checks that a state folder run could not make
// is refused before anything is created.
func TestPreflightStateFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, state, want string
	}{
		{"folder to make", filepath.Join(t.TempDir(), "state", "deeper"), ""},
		{"below a file", filepath.Join(file, "state"), "tierbench's state folder " + filepath.Join(file, "state") + " (where a run records what it makes, for cleanup) cannot be made: " +
			filepath.Join(file, "state") + " is below a file, not a folder; set TIERBENCH_STATE_DIR"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fill, _, _ := fixture(t)
			err := Preflight(mustParse(t, fill(example)), machine{}, c.state)
			if c.want == "" {
				if err != nil {
					t.Fatalf("Preflight: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Preflight: %v, want %q", err, c.want)
			}
		})
	}
}
