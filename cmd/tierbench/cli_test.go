package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/testenv"
)

// TestVersion checks --version names the build and the platform.
func TestVersion(t *testing.T) {
	r := tierbench(t, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "tierbench ") || !strings.Contains(r.stdout, runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("--version: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestOneEngineOrWorkload checks that engines and workloads show one by
// name, and refuse an unknown name listing the known ones.
func TestOneEngineOrWorkload(t *testing.T) {
	cases := []struct {
		args      []string
		code      int
		want, not []string // in and not in stdout
		wantErr   string
	}{
		{args: []string{"engines", "pebble"}, want: []string{"pebble: embedded Pebble", "components:", "nosync"}, not: []string{"postgres:", "memory cgroup with this limit"}},
		// memory, the runner's, is listed with a server's options, as a study writes it.
		{args: []string{"engines", "postgres"}, want: []string{"options:", "shared_buffers", "memory cgroup with this limit"}},
		{args: []string{"engines"}, want: []string{"pebble:", "postgres:"}},
		{args: []string{"engines", "rocksdb"}, code: 2, wantErr: `unknown engine "rocksdb": the engines are ceph, elasticsearch`},
		{args: []string{"engines", "a", "b"}, code: 2, wantErr: "accepts at most 1 arg"},
		{args: []string{"workloads", "ycsb-a"}, want: []string{"ycsb-a:", "records", "engines: ", "pebble", "drivers: builtin"}, not: []string{"tpcb:", "ycsb-b:"}},
		{args: []string{"workloads", "tpcb"}, want: []string{"tpcb:", "engines: mariadb, postgres", "pgbench (with postgres)"}},
		{args: []string{"workloads", "ycsb-z"}, code: 2, wantErr: `unknown workload "ycsb-z": the workloads are`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := tierbench(t, c.args...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, c.code, r.stdout, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
				}
			}
			for _, n := range c.not {
				if strings.Contains(r.stdout, n) {
					t.Errorf("stdout has %q, which is another's:\n%s", n, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, c.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", c.wantErr, r.stderr)
			}
		})
	}
}

// TestNothingStored checks what list, show, report and compare say of a
// results folder with nothing to show: where they looked, with one exit
// code (4) for no store, no study and no such id; an id prefix that
// matches several studies is refused listing them (exit 2).
func TestNothingStored(t *testing.T) {
	work := t.TempDir()
	// rel is given relative to work; messages name it absolute.
	none, empty, two := "none", "empty", "two"
	for _, dir := range []string{empty, two} {
		s, err := results.Open(filepath.Join(work, dir))
		if err != nil {
			t.Fatal(err)
		}
		if dir == two {
			t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			for i, id := range []string{"20261122-100000-aaaaaa", "20261122-110000-bbbbbb"} {
				st := &results.Study{ID: id, Name: "s", Engine: "pebble", Workload: "ycsb-a", Status: results.StudyDone, StartedAt: t0.Add(time.Duration(i) * time.Hour)}
				if err := s.PutStudy(context.Background(), st); err != nil {
					t.Fatal(err)
				}
			}
		}
		s.Close()
	}
	abs := func(dir string) string { return filepath.Join(work, dir) }
	cases := []struct {
		name string
		args []string
		code int
		want string // in stderr, or in stdout when code is 0
	}{
		{"list, no store", []string{"list", "--results", none}, exitNothingStored, "no results in " + abs(none) + ": run a study first"},
		{"list, default folder", []string{"list"}, exitNothingStored, "no results in " + abs("tierbench-results")},
		{"show, no store", []string{"show", "--results", none}, exitNothingStored, "no results in " + abs(none)},
		{"report, no store", []string{"report", "--results", none}, exitNothingStored, "no results in " + abs(none)},
		{"compare, no store", []string{"compare", "a", "b", "--results", none}, exitNothingStored, "no results in " + abs(none)},
		{"list, empty store", []string{"list", "--results", empty}, exitNothingStored, "no studies in " + abs(empty) + " yet"},
		{"show, empty store", []string{"show", "--results", empty}, exitNothingStored, "no studies in " + abs(empty) + " yet"},
		{"show, no such study", []string{"show", "nosuchstudy", "--results", two}, exitNothingStored, `study "nosuchstudy" not found in ` + abs(two)},
		{"compare, no such study", []string{"compare", "nosuchstudy", "20261122-10", "--results", two}, exitNothingStored, `study "nosuchstudy" not found in ` + abs(two)},
		{"list", []string{"list", "--results", two}, 0, "studies in " + abs(two) + ", newest first:"},
		{"show, ambiguous prefix", []string{"show", "2026", "--results", two}, exitBadInput,
			"ambiguous study id \"2026\": it matches 2 studies in " + abs(two) + "; give more of the id of the one you mean:\n  20261122-110000-bbbbbb"},
		{"report, ambiguous prefix", []string{"report", "20261122", "--results", two}, exitBadInput, "20261122-100000-aaaaaa"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := tierbenchEnv(t, work, nil, c.args...)
			out := r.stderr
			if c.code == 0 {
				out = r.stdout
			}
			if r.code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", r.code, c.code, c.want, r.stdout, r.stderr)
			}
		})
	}
	if _, err := os.Stat(abs(none)); !os.IsNotExist(err) {
		t.Error("a command that reads the store created the results folder")
	}
}

// TestReportFormatFromName checks that report -o takes the format from the
// file's extension and refuses a --format that contradicts it, or a name
// that says no format, before anything is read or written.
func TestReportFormatFromName(t *testing.T) {
	cases := []struct {
		out, format string
		want        string
	}{
		{"r.html", "markdown", "-o r.html is a html file name but --format is markdown: name the file r.md, or drop --format"},
		{"r.md", "html", "-o r.md is a markdown file name but --format is html: name the file r.html"},
		{"r.HTM", "markdown", "is a html file name"},
		{"r.txt", "", "-o r.txt: cannot tell the report's format from its name; end it in .html or .md"},
		{"report", "", "cannot tell the report's format"},
	}
	for _, c := range cases {
		t.Run(c.out+" "+c.format, func(t *testing.T) {
			work := t.TempDir()
			args := []string{"report", "-o", c.out, "--results", t.TempDir()}
			if c.format != "" {
				args = append(args, "--format", c.format)
			}
			r := tierbenchEnv(t, work, nil, args...)
			if r.code != exitBadInput || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, want 2 with %q\n%s", r.code, c.want, r.stderr)
			}
			if ents, _ := os.ReadDir(work); len(ents) != 0 {
				t.Errorf("a refused report wrote %v", ents)
			}
		})
	}
}

// TestInit checks init's output: the commented default study on stdout,
// a new file with -o, and refusals (exit 2, nothing written) of an
// existing file, a missing folder and an unknown engine.
func TestInit(t *testing.T) {
	work := t.TempDir()
	existing := filepath.Join(work, "mine.yaml")
	if err := os.WriteFile(existing, []byte("name: mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		want   string // in stdout, or stderr when refused
		exists string // a file the case must leave as it found it, or have written
	}{
		{name: "default study to stdout", args: []string{"init"}, want: "engine: pebble"},
		{name: "comments on each key", args: []string{"init"}, want: "# The placement every other is compared with"},
		{name: "another engine", args: []string{"init", "--engine", "redis"}, want: "Components of redis: data."},
		{name: "to a new file", args: []string{"init", "-o", filepath.Join(work, "new.yaml")}, exists: filepath.Join(work, "new.yaml")},
		{name: "existing file", args: []string{"init", "-o", existing}, code: 2, want: existing + " exists, and init does not overwrite a file", exists: existing},
		{name: "missing folder", args: []string{"init", "-o", filepath.Join(work, "no", "s.yaml")}, code: 2, want: "its folder does not exist"},
		{name: "unknown engine", args: []string{"init", "--engine", "rocksdb"}, code: 2, want: `unknown engine "rocksdb": the engines are`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := tierbench(t, c.args...)
			out := r.stdout
			if c.code != 0 {
				out = r.stderr
			}
			if r.code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", r.code, c.code, c.want, r.stdout, r.stderr)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "name: mine\n" {
		t.Errorf("init changed an existing file: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "new.yaml")); !strings.Contains(string(b), "engine: pebble") {
		t.Errorf("init -o wrote %q", b)
	}
}

// TestInitValidatesForEveryEngine checks that the study init writes for
// each engine of the catalog is one validate accepts, as the shipped
// studies are (with the machine's state folder, where setup installs what
// engines need; validate writes nothing there).
func TestInitValidatesForEveryEngine(t *testing.T) {
	for _, name := range catalog.Default().EngineNames() {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), name+".yaml")
			if r := tierbench(t, "init", "--engine", name, "-o", f); r.code != 0 {
				t.Fatalf("init: exit %d\n%s", r.code, r.stderr)
			}
			if r := tierbenchEnv(t, "", []string{"TIERBENCH_STATE_DIR="}, "validate", f); r.code != 0 {
				t.Errorf("validate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestNothingMeasured runs a study whose one run fills its tier while
// loading, before its measured window: run exits 3, not 1, saying that
// nothing was measured. The tier (tmpfs, 2 MiB) is larger than the
// workload's lower bound, so validate accepts it, but not than its WAL.
func TestNothingMeasured(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "root, to mount a tmpfs tier")
	}
	work := t.TempDir()
	st := writeStudy(t, work, `name: full
engine: pebble
tiers:
  tiny: {tmpfs: {size: 2MiB}}
placements:
  all-tiny: {data: tiny, wal: tiny}
durability: [sync]
workload: {name: ycsb-a, records: 2050}
clients: [1]
duration: 1s
probe: off
`)
	env := []string{"TIERBENCH_STATE_DIR=" + filepath.Join(work, "state")}
	if r := tierbenchEnv(t, work, env, "validate", st); r.code != 0 {
		t.Fatalf("validate: exit %d\n%s", r.code, r.stderr)
	}
	r := tierbenchEnv(t, work, env, "run", st, "--results", filepath.Join(work, "results"))
	if r.code != exitNothingMeasured || !strings.Contains(r.stderr, "nothing was measured: all 1 runs failed before their measured window") {
		t.Errorf("run: exit %d, want 3 saying nothing was measured\n%s", r.code, r.stderr)
	}
}

// TestAnyMeasured checks which stored runs count as having measured
// something: an ok run, or a failed one that got into its window.
func TestAnyMeasured(t *testing.T) {
	cases := []struct {
		name string
		runs []results.Run
		want bool
	}{
		{"no runs", nil, false},
		{"failed while loading", []results.Run{{Status: results.RunFailed, LoadRecords: 10}}, false},
		{"failed in its window", []results.Run{{Status: results.RunFailed, Ops: 5}}, true},
		{"failed with a measured second", []results.Run{{Status: results.RunFailed, Timeline: []results.Interval{{Phase: "measured"}}}}, true},
		{"failed in its warmup", []results.Run{{Status: results.RunFailed, Timeline: []results.Interval{{Phase: "warmup"}}}}, false},
		{"one ok among failed", []results.Run{{Status: results.RunFailed}, {Status: results.RunOK}}, true},
	}
	for _, c := range cases {
		if got := anyMeasured(c.runs); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRunRefusesFoldersItCannotMake checks that run and validate refuse,
// before anything is created, a results or state folder run could not
// make (exit 2), instead of failing after the checks passed.
func TestRunRefusesFoldersItCannotMake(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st := writeStudy(t, work, fmt.Sprintf(tinyStudy, filepath.Join(work, "ram"), filepath.Join(work, "disk")))
	state := "TIERBENCH_STATE_DIR=" + filepath.Join(work, "state")
	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"results below a file", []string{"run", st, "--results", filepath.Join(file, "results")}, []string{state},
			"--results " + filepath.Join(file, "results") + " cannot be made: " + filepath.Join(file, "results") + " is below a file, not a folder"},
		{"run, state folder below a file", []string{"run", st, "--results", filepath.Join(work, "results")}, []string{"TIERBENCH_STATE_DIR=" + filepath.Join(file, "state")},
			"tierbench's state folder " + filepath.Join(file, "state") + " (where a run records what it makes, for cleanup) cannot be made"},
		{"validate, state folder below a file", []string{"validate", st}, []string{"TIERBENCH_STATE_DIR=" + filepath.Join(file, "state")},
			"set TIERBENCH_STATE_DIR to a folder you can write"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := tierbenchEnv(t, work, c.env, c.args...)
			if r.code != exitBadInput || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, want 2 with %q\n%s", r.code, c.want, r.stderr)
			}
			for _, made := range []string{"results", "state", "ram", "disk"} {
				if _, err := os.Stat(filepath.Join(work, made)); !os.IsNotExist(err) {
					t.Errorf("a refused %s made %s", c.args[0], made)
				}
			}
		})
	}
}
