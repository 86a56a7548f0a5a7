package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/testenv"
)

// tierbenchEnv runs the test binary in folder dir with extra environment
// variables (later ones win over the test process's own).
func tierbenchEnv(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	return runBinary(t, binary, dir, env, args...)
}

// runBinary runs the tierbench binary at path, as tierbench does, for at
// most 5 minutes, and in a test's body not past testenv.Deadline: a
// command that would run into the binary's -timeout is killed in time for
// the test's cleanups (which, once t.Context has ended, get their 5
// minutes) to undo what it started.
func runBinary(t *testing.T, path, dir string, env []string, args ...string) result {
	t.Helper()
	end := time.Now().Add(5 * time.Minute)
	if d, ok := testenv.Deadline(t); ok && t.Context().Err() == nil && d.Before(end) {
		end = d
	}
	ctx, cancel := context.WithDeadline(context.Background(), end)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// badStudy is a valid pebble study whose pieces the cases below replace:
// TIERS, PLACEMENTS, WORKLOAD, CLIENTS and EXTRA.
const badStudy = `name: bad
engine: pebble
tiers:
TIERS
placements:
PLACEMENTS
baseline: all-disk
durability: [sync]
workload:
WORKLOAD
clients: CLIENTS
duration: 1s
EXTRA
`

// TestValidateRefusesBadInput is the table of bad inputs run used to
// accept (issue 11, sections 3 and 4): each is refused by validate and by
// run with exit code 2 and one clear error naming the problem and the fix,
// before anything is created: no results folder, no state folder (so no
// ledger entry, mount or image), no tier folder.
func TestValidateRefusesBadInput(t *testing.T) {
	empty := t.TempDir() // PATH where nothing is installed
	link := filepath.Join(t.TempDir(), "etc-link")
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	type tc struct {
		name string
		// Replacements of badStudy's pieces; missing ones keep the default.
		tiers, placements, workload, clients, extra string
		env                                         []string
		want                                        []string // fragments of stderr
	}
	cases := []tc{
		{name: "tier name that is a path", tiers: "  ../../../../tmp/x: {tmpfs: {size: 64MiB}}\n  disk: {path: DISK}",
			want: []string{`tier name "../../../../tmp/x" is not an identifier: use letters, digits, - and _`}},
		{name: "tier on /etc", tiers: "  disk: {path: /etc}",
			want: []string{"path /etc is a system folder (/etc), not a place for a tier", "choose a folder of its own"}},
		{name: "tier on /", tiers: "  disk: {path: /}", want: []string{"path / is the root folder"}},
		{name: "tier on /proc", tiers: "  disk: {path: /proc}", want: []string{"path /proc is a system folder (/proc)"}},
		{name: "tier on /sys", tiers: "  disk: {path: /sys/fs}", want: []string{"path /sys/fs is a system folder (/sys)"}},
		{name: "tier that is a symlink to /etc", tiers: "  disk: {path: " + link + "}",
			want: []string{link + " (a symlink to /etc) is a system folder (/etc)"}},
		{name: "two tiers on one folder", tiers: "  disk: {path: DISK}\n  disk2: {path: DISK/}",
			placements: "  all-disk: {data: disk, wal: disk}\n  other: {data: disk2, wal: disk2}",
			want:       []string{`tier "disk2" is the same folder as tier "disk"`}},
		{name: "readproportion above 1", workload: "  name: ycsb-a\n  readproportion: 1.5",
			want: []string{`workload ycsb-a parameter readproportion 1.5 is out of range: it must be from 0 to 1`}},
		{name: "proportions that do not sum to 1", workload: "  name: ycsb-a\n  readproportion: 0.9",
			want: []string{"proportions sum to 1.4 (readproportion 0.9 + updateproportion 0.5), not 1"}},
		{name: "clients beyond the engine's bound", clients: "[1, 100000000]",
			want: []string{"clients 100000000 is more than engine pebble takes (at most 1024): pebble runs inside tierbench, and each client is a goroutine", "use at most 1024 clients"}},
		{name: "loop tier in RAM larger than the memory", tiers: "  disk: {path: DISK}\n  huge: {loop: {backing: ram, size: 100TiB}}",
			placements: "  all-disk: {data: disk, wal: disk}\n  wal-huge: {data: disk, wal: huge}",
			want:       []string{`tier "huge": size 100TiB is more than this machine's memory`, "the tier lives in RAM; make it smaller"}},
		{name: "tmpfs tier larger than the memory", tiers: "  disk: {path: DISK}\n  huge: {tmpfs: {size: 1PiB}}",
			placements: "  all-disk: {data: disk, wal: disk}\n  wal-huge: {data: disk, wal: huge}",
			want:       []string{`tier "huge": size 1PiB is more than this machine's memory`}},
		{name: "tmpfs tier smaller than the data", tiers: "  disk: {path: DISK}\n  tiny: {tmpfs: {size: 1KiB}}",
			placements: "  all-disk: {data: disk, wal: disk}\n  all-tiny: {data: tiny, wal: tiny}",
			want:       []string{`tier "tiny" (tmpfs, 1.0 KiB) is smaller than the data placement "all-tiny" puts on it: workload ycsb-a loads at least 984 KiB`}},
		{name: "SQL workload on an engine that serves records", workload: "  name: tpcb",
			want: []string{"workload tpcb needs the sql data model, which engine pebble does not serve (it serves records): use one of the engines mariadb, postgres"}},
		{name: "repeat min above max", extra: "repeat: {min: 10, max: 6}",
			want: []string{"repeat min 10 is more than max 6; make max at least min"}},
		{name: "repeat min 1", extra: "repeat: {min: 1}", want: []string{"repeat min 1 is out of range: it must be from 2 to 10000 (one round gives no interval to judge"}},
		{name: "repeat until 0", extra: "repeat: {until: 0%}", want: []string{`repeat until "0%" must be a percentage above 0% and below 100%`}},
		{name: "repeat until above 100%", extra: "repeat: {until: 120%}", want: []string{`repeat until "120%" must be a percentage above 0% and below 100%`}},
		{name: "repeat budget 0", extra: "repeat: {budget: 0s}", want: []string{"repeat budget must be more than 0, got 0s"}},
		{name: "fio missing for probe quick", extra: "probe: quick", env: []string{"PATH=" + empty},
			want: []string{"probe: quick runs fio on every tier, and fio is not installed: apt-get install fio"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			disk := filepath.Join(dir, "disk")
			text := strings.NewReplacer(
				"TIERS", or(c.tiers, "  disk: {path: DISK}"),
				"PLACEMENTS", or(c.placements, "  all-disk: {data: disk, wal: disk}"),
				"WORKLOAD", or(c.workload, "  name: ycsb-a"),
				"CLIENTS", or(c.clients, "[1]"),
				"EXTRA", c.extra,
			).Replace(badStudy)
			text = strings.ReplaceAll(text, "DISK", disk)
			refused(t, dir, writeStudy(t, dir, text), c.env, c.want...)
			if _, err := os.Stat(disk); !os.IsNotExist(err) {
				t.Error("bad input created the tier folder")
			}
		})
	}
}

// refused runs validate and run on study and checks that both exit 2 with
// every fragment in want on stderr, as one problem, having created nothing.
func refused(t *testing.T, dir, study string, env []string, want ...string) {
	t.Helper()
	results := filepath.Join(dir, "results")
	state := filepath.Join(dir, "state")
	env = append([]string{"TIERBENCH_STATE_DIR=" + state}, env...)
	for _, args := range [][]string{{"validate", study}, {"run", study, "--results", results}} {
		r := tierbenchEnv(t, dir, env, args...)
		if r.code != 2 {
			t.Errorf("%s: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", args[0], r.code, r.stdout, r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", args[0], w, r.stderr)
			}
		}
		if !strings.Contains(r.stderr, "1 problem(s)") {
			t.Errorf("%s: want exactly one problem:\n%s", args[0], r.stderr)
		}
	}
	for _, p := range []string{results, state, filepath.Join(dir, "tierbench-results")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("bad input created %s", p)
		}
	}
}

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TestTargetURLErrorAlone checks that a wrong target URL is one problem,
// not one followed by "missing required key" for the keys a target makes
// optional.
func TestTargetURLErrorAlone(t *testing.T) {
	dir := t.TempDir()
	st := writeStudy(t, dir, "name: t\nengine: postgres\ntarget: localhost:5432\nworkload: {name: tpcb}\nclients: 1\nduration: 1s\n")
	refused(t, dir, st, nil, `target "localhost:5432" is not a server URL`)
	r := tierbenchEnv(t, dir, []string{"TIERBENCH_STATE_DIR=" + filepath.Join(dir, "state")}, "validate", st)
	if strings.Contains(r.stderr, "missing required key") {
		t.Errorf("a bad target also reported missing keys:\n%s", r.stderr)
	}
}

// TestPreflightRefusesMissingPrograms checks that a study whose engine or
// driver is not installed is refused up front, with the install command,
// instead of storing one failed run per cell.
func TestPreflightRefusesMissingPrograms(t *testing.T) {
	empty := t.TempDir()
	cases := []struct {
		name, study string
		env         []string
		want        []string
	}{
		{name: "ignite launcher not built",
			study: `name: ig
engine: ignite
tiers: {disk: {path: DISK}}
placements: {all-disk: {persistence: disk, wal: disk, wal_archive: disk}}
baseline: all-disk
durability: [async]
workload: {name: puts, keys: 1000}
clients: [1]
duration: 1s
`,
			// An empty launcher folder, run from a folder with no source tree
			// above it: nothing to find.
			env:  []string{"TIERBENCH_IGNITE_DIR=" + empty},
			want: []string{"engine ignite cannot start on this machine", "make setup"}},
		{name: "sysbench not installed",
			study: `name: sb
engine: postgres
tiers: {disk: {path: DISK}}
placements: {all-disk: {data: disk, wal: disk}}
baseline: all-disk
durability: [sync]
workload: {name: oltp-read-write}
driver: sysbench
clients: [1]
duration: 1s
`,
			env:  []string{"PATH=" + empty},
			want: []string{"driver sysbench cannot run on this machine: sysbench is not installed: apt-get install sysbench", "make setup"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The server's OS user must reach the tier (validate checks
			// that too, and t.TempDir's parent is closed to others): only
			// the missing program is wanted here.
			dir, err := os.MkdirTemp("", "tierbench-preflight-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			st := writeStudy(t, dir, strings.ReplaceAll(c.study, "DISK", filepath.Join(dir, "disk")))
			refused(t, dir, st, c.env, c.want...)
		})
	}
}

// TestProbeRefusesPseudoFilesystems checks that probe refuses /proc and
// /sys (exit 2, nothing stored) instead of calling them durable.
func TestProbeRefusesPseudoFilesystems(t *testing.T) {
	for _, p := range []string{"/proc", "/sys", "/sys/fs/cgroup"} {
		dir := t.TempDir()
		results := filepath.Join(dir, "results")
		r := tierbenchEnv(t, dir, nil, "probe", p, "--results", results)
		if r.code != 2 || !strings.Contains(r.stderr, "is a system folder") {
			t.Errorf("probe %s: exit %d, want 2 naming a system folder:\n%s", p, r.code, r.stderr)
		}
		if _, err := os.Stat(results); !os.IsNotExist(err) {
			t.Errorf("probe %s created %s", p, results)
		}
	}
}

// TestReportRefusesBadFlags checks report's flags against a stored study:
// a negative or unknown client count, and an output folder that does not
// exist, named as the user gave it.
func TestReportRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	st := writeStudy(t, dir, fmt.Sprintf(`name: small
engine: pebble
tiers: {disk: {path: %q}}
placements: {all-disk: {data: disk, wal: disk}}
baseline: all-disk
durability: [nosync]
workload: {name: ycsb-c, records: 200}
clients: [1, 2]
duration: 200ms
probe: off
`, filepath.Join(dir, "disk")))
	if r := tierbench(t, "run", st, "--results", results); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	missing := filepath.Join(dir, "no-such-folder", "r.html")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--clients", "-3"}, "--clients -3 is negative"},
		{[]string{"--clients", "3"}, "--clients 3: study"},
		{[]string{"-o", missing}, "cannot write the report to " + missing + ": folder " + filepath.Dir(missing) + " does not exist"},
		{[]string{"-o", dir}, "it is a folder"},
	} {
		r := tierbench(t, append([]string{"report", "--results", results}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("report %v: exit %d, want 2 with %q:\n%s", c.args, r.code, c.want, r.stderr)
		}
		if strings.Contains(r.stderr, ".tierbench-report-") {
			t.Errorf("report %v names the temporary file:\n%s", c.args, r.stderr)
		}
	}
	out := filepath.Join(dir, "r.html")
	if r := tierbench(t, "report", "--results", results, "--clients", "2", "-o", out); r.code != 0 {
		t.Errorf("report --clients 2: exit %d\n%s", r.code, r.stderr)
	}
}

// TestInstalledBinaryFindsIgniteLauncher installs tierbench with `make
// install` into a temporary PREFIX (with a stand-in launcher: the lookup is
// what is tested, not Ignite) and validates an Ignite study with the
// installed binary from an unrelated folder: it must find
// $(PREFIX)/lib/tierbench/ignite. Without the launcher, the same
// validation is refused with the command that builds it.
func TestInstalledBinaryFindsIgniteLauncher(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		testenv.Skip(t, "make is not installed")
	}
	if _, err := exec.LookPath("java"); err != nil {
		testenv.Skip(t, "java is not installed; the launcher lookup comes after it")
	}
	tmp := t.TempDir()
	launcher := filepath.Join(tmp, "ignite-build")
	if err := os.MkdirAll(filepath.Join(launcher, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"tierbench-ignite.jar", "lib/ignite-core-2.16.0.jar"} {
		if err := os.WriteFile(filepath.Join(launcher, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prefix := filepath.Join(tmp, "prefix")
	// -o build -o setup: the binary is the one TestMain built and the
	// launcher the one make setup built, so make runs neither setup
	// (apt-get, mvn, pip) nor the build from a test.
	mk := exec.Command("make", "-C", "../..", "-o", "build", "-o", "setup", "install",
		"PREFIX="+prefix, "BIN="+binary, "IGNITE_BUILD="+launcher)
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	installed := filepath.Join(prefix, "bin", "tierbench")
	elsewhere := t.TempDir()
	st := writeStudy(t, elsewhere, fmt.Sprintf(`name: ig
engine: ignite
tiers: {disk: {path: %q}}
placements: {all-disk: {persistence: disk, wal: disk, wal_archive: disk}}
baseline: all-disk
durability: [async]
workload: {name: puts, keys: 1000}
clients: [1]
duration: 1s
`, filepath.Join(elsewhere, "disk")))
	env := []string{"TIERBENCH_IGNITE_DIR=", "TIERBENCH_STATE_DIR=" + filepath.Join(elsewhere, "state")}
	if r := runBinary(t, installed, elsewhere, env, "validate", st); r.code != 0 {
		t.Errorf("installed validate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := os.RemoveAll(filepath.Join(prefix, "lib")); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, installed, elsewhere, env, "validate", st)
	if r.code != 2 || !strings.Contains(r.stderr, "make install") {
		t.Errorf("without the launcher: exit %d, want 2 naming make install:\n%s", r.code, r.stderr)
	}
}

// TestShippedStudiesValidate validates every study file the repository
// ships (studies/*.yaml), as a user's first `tierbench validate` would:
// with the machine's own state folder, where setup installed the tools
// some workloads need (validate writes nothing there).
func TestShippedStudiesValidate(t *testing.T) {
	files, err := filepath.Glob("../../studies/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no study files found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if r := tierbenchEnv(t, "", []string{"TIERBENCH_STATE_DIR="}, "validate", f); r.code != 0 {
				t.Errorf("validate %s: exit %d\n%s%s", f, r.code, r.stdout, r.stderr)
			}
		})
	}
}
