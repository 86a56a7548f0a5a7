package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/results"
)

// hostileStudy is a valid pebble study whose pieces the cases of
// TestRefusesHostileInput replace: NAME, PLACEMENT, DURATION and EXTRA;
// DISK becomes its tier's folder.
const hostileStudy = `name: NAME
engine: pebble
tiers: {disk: {path: DISK}}
placements:
  PLACEMENT: {data: disk, wal: disk}
durability: [sync]
workload: {name: ycsb-a}
clients: [1]
duration: DURATION
EXTRA
`

// aliasBombStudy is 1.3 KB of merge keys nested 8 levels deep, each level a
// mapping merging 30 aliases of the level below: 30^8 mappings to walk.
func aliasBombStudy() string {
	var b strings.Builder
	b.WriteString("x0: &l0 {name: bomb}\n")
	for i := 1; i <= 8; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 30), ", ")
		if i == 8 {
			fmt.Fprintf(&b, "<<: [%s]\n", refs)
			break
		}
		fmt.Fprintf(&b, "x%d: &l%d {<<: [%s]}\n", i, i, refs)
	}
	return b.String()
}

// TestRefusesHostileInput is issue 49's table of inputs tried by a hostile
// user that run and validate used to accept (or, for the alias bomb, work
// on forever): each is refused by both with exit code 2 and one problem
// naming the fix, before anything is created (see refused).
func TestRefusesHostileInput(t *testing.T) {
	type tc struct {
		name string
		// Replacements of hostileStudy's pieces; study, when set, is the
		// whole study instead.
		studyName, placement, duration, extra, study string
		want                                         []string // fragments of stderr
	}
	cases := []tc{
		// Not numbers, or numbers past any sense.
		{name: "until NaN%", extra: "repeat: {until: NaN%}", want: []string{`repeat until "NaN%" must be a percentage above 0% and below 100%`}},
		{name: "until +Inf%", extra: "repeat: {until: +Inf%}", want: []string{`repeat until "+Inf%" must be a percentage`}},
		{name: "margin NaN%", extra: "margin: NaN%", want: []string{`margin "NaN%" must be a percentage above 0% and below 100%`}},
		{name: "steady NaN%", extra: "warmup: {steady: NaN%}", want: []string{`warmup steady "NaN%" must be a percentage`}},
		{name: "target_rate NaN", extra: "target_rate: NaN", want: []string{`target_rate "NaN" is not a number`}},
		{name: "repeat near 2^62", extra: "repeat: 4611686018427387904", want: []string{"repeat 4611686018427387904 is out of range: it must be from 1 to 10000"}},
		{name: "repeat max near 2^63", extra: "repeat: {max: 9223372036854775807}", want: []string{"repeat max 9223372036854775807 is out of range: it must be from 2 to 10000"}},
		{name: "a 292-year duration", duration: "2562047h", want: []string{"duration 2562047h is more than 24h0m0s"}},
		{name: "a warmup of more than a day", extra: "warmup: 25h", want: []string{"warmup 25h is more than 24h0m0s"}},
		{name: "more runs than the bound", extra: "repeat: 10000\noptions: {memtable: [1MiB, 2MiB, 3MiB, 4MiB, 5MiB, 6MiB, 7MiB, 8MiB, 9MiB, 10MiB, 11MiB]}",
			want: []string{"the study has more than 100000 runs (1 placements x 11 swept combinations x 1 durability x 1 client counts x 10000 rounds)"}},
		{name: "more measuring than the bound", duration: "24h", extra: "repeat: 31",
			want: []string{"the study's runs warm up and measure for up to 31 days added up, more than 30 days"}},
		{name: "a crash in a window too short", duration: "500ms", extra: "crash: process",
			want: []string{"which duration 500ms leaves too little time for; make duration at least 1s"}},
		{name: "an adaptive budget past the bound", extra: "repeat: {budget: 1000h}", want: []string{"repeat budget 1000h is more than 30 days"}},

		// A capacity study's objective, search and prices (docs/capacity.md).
		{name: "an slo without a unit", extra: "slo: {p99: 20}", want: []string{`slo p99 "20" is not a latency (it has no unit)`}},
		{name: "an unknown percentile", extra: "slo: {p97: 20ms}", want: []string{`unknown key "p97" in slo`}},
		{name: "need without slo", extra: "need: 20000", want: []string{"need is for a capacity study"}},
		{name: "a price tierbench cannot read", extra: "slo: {p99: 20ms}\nhost: {cost: {per_month: 25/mo}}", want: []string{`host cost per_month "25/mo" is not a price tierbench can read`}},
		{name: "an until the search's resolution cannot reach", extra: "slo: {p99: 20ms}\nsearch: {resolution: 5%}\nrepeat: {min: 3, until: 4%}",
			want: []string{"repeat until: 4% is at or below the search's resolution of 5%", "write until: 10% or more, or a finer search"}},
		{name: "slo with another driver", extra: "slo: {p99: 20ms}\ndriver: pgbench", want: []string{"driver"}},

		// Lanes where clients never run on lanes.
		{name: "lanes on pebble", extra: `driver: [builtin, "builtin:lanes=2"]`,
			want: []string{"driver builtin:lanes=2: engine pebble's clients never run on lanes (only those of mariadb, postgres and redis do), so it would be driver builtin under another name; use driver: builtin"}},
		{name: "lanes with tpcc on postgres", study: `name: tpcc
engine: postgres
tiers: {disk: {path: DISK}}
placements: {all-disk: {data: disk, wal: disk}}
durability: [sync]
workload: {name: tpcc}
clients: [1]
duration: 1s
driver: [builtin, "builtin:lanes=0"]
`, want: []string{"driver builtin:lanes=0: workload tpcc's clients never run on lanes"}},
		{name: "lanes on ignite", study: `name: ig
engine: ignite
tiers: {disk: {path: DISK}}
placements: {all-disk: {persistence: disk, wal: disk}}
durability: [sync]
workload: {name: puts}
clients: [1]
duration: 1s
driver: "builtin:lanes=1"
`, want: []string{"engine ignite's clients never run on lanes"}},
		{name: "lanes on opensearch", study: `name: os
engine: opensearch
tiers: {disk: {path: DISK}}
placements: {all-disk: {data: disk, logs: disk}}
durability: [sync]
workload: {name: ingest}
clients: [1]
duration: 1s
driver: "builtin:lanes=1"
`, want: []string{"engine opensearch's clients never run on lanes"}},
		{name: "lanes on ceph", study: `name: ceph
engine: ceph
tiers: {disk: {path: DISK}}
placements: {all-disk: {block: disk}}
durability: [sync]
workload: {name: object-70-30}
clients: [1]
duration: 1s
driver: "builtin:lanes=1"
`, want: []string{"engine ceph's clients never run on lanes"}},
		{name: "lanes on a TLS target", study: `name: tls
engine: postgres
target: postgres://bench@127.0.0.1:1/db?sslmode=require
workload: {name: tpcb}
clients: [1]
duration: 1s
driver: [builtin, "builtin:lanes=2"]
`, want: []string{"driver builtin:lanes=2: clients run on lanes over plain connections only, and the target's sslmode=require takes TLS: make it sslmode=disable, or use driver: builtin"}},

		// Names.
		{name: "a study name with an ANSI escape", studyName: `"\e[31mred"`, want: []string{`study name "\x1b[31mred" holds a control or bidirectional character (U+001B)`}},
		{name: "a study name with a newline", studyName: `"a\nb"`, want: []string{`study name "a\nb" holds a control or bidirectional character (U+000A)`}},
		{name: "a study name with a NUL escape", studyName: `"a\0b"`, want: []string{`study name "a\x00b" holds a control or bidirectional character (U+0000)`}},
		{name: "a study name with a right-to-left override", studyName: `"\u202Eevil"`, want: []string{`study name "\u202eevil" holds a control or bidirectional character (U+202E)`}},
		{name: "a study name of 100000 characters", studyName: strings.Repeat("s", 100000), want: []string{`study name "ssssssssssssssssssssssss"... is too long (100000 characters)`}},
		{name: "a placement name with an ANSI escape", placement: `"\e[2Jp"`, want: []string{`placement name "\x1b[2Jp" holds a control or bidirectional character (U+001B)`}},
		{name: "a placement name with a newline", placement: `"a\nb"`, want: []string{`placement name "a\nb" holds a control or bidirectional character`}},
		{name: "a placement name with a NUL escape", placement: `"a\0b"`, want: []string{`placement name "a\x00b" holds a control or bidirectional character`}},
		{name: "a placement name with a right-to-left override", placement: `"\u202Ep"`, want: []string{`placement name "\u202ep" holds a control or bidirectional character (U+202E)`}},
		{name: "a placement name of 100000 characters", placement: strings.Repeat("p", 100000), want: []string{":5: a key of 100000 characters is too long: YAML reads keys of at most 1024, and a name in a study is at most 64; use a shorter name"}},
		{name: "a tier name of 5000 characters", study: strings.Replace(hostileStudy, "tiers: {disk: {path: DISK}}", "tiers:\n  "+strings.Repeat("t", 5000)+": {path: DISK}", 1),
			want: []string{":4: a key of 5000 characters is too long"}},

		// YAML.
		{name: "an alias bomb", study: aliasBombStudy(), want: []string{":4: YAML aliases and merge keys (*, <<) expand the study past 10000 values by this line"}},
		{name: "an undefined alias", study: strings.Replace(hostileStudy, "clients: [1]", "clients: *counts", 1),
			want: []string{":8: YAML alias *counts names no anchor defined before it"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			disk := filepath.Join(dir, "disk")
			text := c.study
			if text == "" {
				text = hostileStudy
			}
			text = strings.NewReplacer(
				"NAME", or(c.studyName, "hostile"),
				"PLACEMENT", or(c.placement, "all-disk"),
				"DURATION", or(c.duration, "1s"),
				"EXTRA", c.extra,
				"DISK", disk,
			).Replace(text)
			refused(t, dir, writeStudy(t, dir, text), nil, c.want...)
			if _, err := os.Stat(disk); !os.IsNotExist(err) {
				t.Error("bad input created the tier folder")
			}
		})
	}
}

// TestValidateAndShowStopOnSignals checks that validate and show, which
// write nothing, stop on SIGINT and SIGTERM wherever they are (exit 130),
// rather than finishing first: validate stuck reading a study from a pipe
// no one writes, show stuck writing to a full pipe. The deadline is only
// how long to wait before calling the command stuck.
func TestValidateAndShowStopOnSignals(t *testing.T) {
	work := t.TempDir()
	// A study stored with enough runs that show's CSV passes a page.
	resultsDir := filepath.Join(work, "results")
	store, err := results.Open(resultsDir)
	if err != nil {
		t.Fatal(err)
	}
	st := &results.Study{ID: "20261128-100000-aaaaaa", Name: "s", Engine: "pebble", Workload: "ycsb-a", Status: results.StudyDone, StartedAt: time.Now()}
	if err := store.PutStudy(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 40; i++ {
		r := &results.Run{ID: fmt.Sprintf("%s-%03d", st.ID, i), StudyID: st.ID, Seq: i, Placement: "all-disk", Durability: "sync", Clients: 1, Repeat: i,
			Status: results.RunFailed, Error: strings.Repeat("a run that failed, with a long reason. ", 5)}
		if err := store.AddRun(context.Background(), r, nil); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	fifo := filepath.Join(work, "study.yaml")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		sig  syscall.Signal
	}{
		{"validate, SIGTERM", []string{"validate", fifo}, syscall.SIGTERM},
		{"validate, SIGINT", []string{"validate", fifo}, syscall.SIGINT},
		{"show, SIGTERM", []string{"show", "--format", "csv", "--results", resultsDir}, syscall.SIGTERM},
		{"show, SIGINT", []string{"show", "--format", "csv", "--results", resultsDir}, syscall.SIGINT},
	} {
		t.Run(c.name, func(t *testing.T) {
			state := filepath.Join(work, "state-"+strings.Fields(c.name)[0])
			cmd := exec.Command(binary, c.args...)
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "TIERBENCH_STATE_DIR="+state)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			// busy reports when the command is where it would wait forever.
			var busy func() bool
			if c.args[0] == "validate" {
				// Held open for writing (and reading, so the open does not
				// wait): validate's read of the study waits for bytes that
				// never come.
				w, err := os.OpenFile(fifo, os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				busy = func() bool { return holds(cmd.Process.Pid, fifo) }
			} else {
				// A pipe of one page no one reads: show's write past it waits.
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				size, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 4096)
				if err != nil {
					t.Fatal(err)
				}
				cmd.Stdout = w
				defer w.Close()
				busy = func() bool {
					n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ) // FIONREAD: bytes waiting
					return err == nil && n >= size
				}
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ended := make(chan error, 1)
			go func() { ended <- cmd.Wait() }()
			deadline := time.After(30 * time.Second)
			for !busy() {
				select {
				case err := <-ended:
					t.Fatalf("%v ended before the signal: %v\n%s", c.args, err, stderr.String())
				case <-deadline:
					cmd.Process.Kill()
					t.Fatalf("%v never reached its wait", c.args)
				case <-time.After(10 * time.Millisecond):
				}
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ended:
			case <-deadline:
				cmd.Process.Kill()
				t.Fatalf("%v did not stop on %v", c.args, c.sig)
			}
			if code := cmd.ProcessState.ExitCode(); code != exitInterrupt || !strings.Contains(stderr.String(), "interrupted; nothing was written") {
				t.Errorf("%v on %v: exit %d, want %d saying it was interrupted:\n%s", c.args, c.sig, code, exitInterrupt, stderr.String())
			}
			if _, err := os.Stat(state); !os.IsNotExist(err) {
				t.Errorf("%v wrote %s", c.args, state)
			}
		})
	}
}

// holds reports whether process pid has path open.
func holds(pid int, path string) bool {
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if to, err := os.Readlink(fd); err == nil && to == path {
			return true
		}
	}
	return false
}

// TestUnknownCommandsExit2 checks that a command cobra does not know, at
// any level of the tree, exits 2 naming it (cobra alone prints a group's
// help and exits 0), and that flags are checked before anything starts.
func TestUnknownCommandsExit2(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string // in stderr, or in stdout when code is 0
	}{
		{[]string{"frobnicate"}, exitBadInput, `unknown command "frobnicate" for "tierbench"`},
		{[]string{"valdate", "study.yaml"}, exitBadInput, `unknown command "valdate" for "tierbench"; did you mean "validate"?`},
		{[]string{"cluster", "start", "study.yaml"}, exitBadInput, `unknown command "start" for "tierbench cluster" (its commands: down, up); see ` + "`tierbench cluster --help`"},
		{[]string{"completion", "tcsh"}, exitBadInput, `unknown command "tcsh" for "tierbench completion"`},
		{[]string{"help", "frobnicate"}, exitBadInput, `unknown help topic "frobnicate"`},
		{[]string{"help", "cluster", "start"}, exitBadInput, `unknown help topic "cluster start"`},
		{[]string{"cluster", "up", "--timeout", "0s", "study.yaml"}, exitBadInput, "--timeout 0s must be more than 0"},
		{[]string{"cluster", "up", "--timeout", "-1m", "study.yaml"}, exitBadInput, "--timeout -1m0s must be more than 0"},
		{[]string{"cluster"}, exitOK, "tierbench cluster [command]"},
		{[]string{"help", "cluster", "up"}, exitOK, "tierbench cluster up STUDY.yaml"},
		{[]string{"--help"}, exitOK, "Available Commands"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := tierbenchEnv(t, dir, []string{"TIERBENCH_STATE_DIR=" + filepath.Join(dir, "state")}, c.args...)
			out := r.stderr
			if c.code == exitOK {
				out = r.stdout
			}
			if r.code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", r.code, c.code, c.want, r.stdout, r.stderr)
			}
			if c.code != exitOK && strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("want one line on stderr:\n%s", r.stderr)
			}
		})
	}
}
