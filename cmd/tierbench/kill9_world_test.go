package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/mountinfo"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/tier"
)

// kill9World is TestKill9AtRandomMoments's folders and what it saw
// stored.
type kill9World struct {
	t                         *testing.T
	ram, disk, state, results string
	// stored holds every run stored so far, by id, as JSON.
	stored map[string]string
	// done holds the studies found done and checked.
	done map[string]bool
}

func (w *kill9World) env() []string { return []string{"TIERBENCH_STATE_DIR=" + w.state} }

// writeEvent is a write inotify saw: to the results store, or a new
// ledger (inotify merges two such events in a row that were not read yet).
type writeEvent struct {
	store bool
	at    time.Time
}

// watchWrites reports each write to the results store (its database and
// WAL) in resultsDir and each new ledger file in stateDir, which the
// ledger writes whole and renames into place.
func watchWrites(t *testing.T, resultsDir, stateDir string) <-chan writeEvent {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	storeWD, err := unix.InotifyAddWatch(fd, resultsDir, unix.IN_MODIFY)
	if err != nil {
		t.Fatalf("watch %s: %v", resultsDir, err)
	}
	if _, err := unix.InotifyAddWatch(fd, stateDir, unix.IN_MOVED_TO); err != nil {
		t.Fatalf("watch %s: %v", stateDir, err)
	}
	ch := make(chan writeEvent, 1<<14)
	t.Cleanup(func() { unix.Close(fd) }) // ends the reader's read
	go func() {
		buf := make([]byte, 1<<16)
		for {
			n, err := unix.Read(fd, buf)
			if err != nil || n <= 0 {
				return
			}
			now := time.Now()
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
				off += unix.SizeofInotifyEvent + int(ev.Len)
				e := writeEvent{store: int(ev.Wd) == storeWD, at: now}
				if (e.store && strings.HasPrefix(name, results.DBFile)) || (!e.store && name == "ledger.json") {
					select {
					case ch <- e:
					default: // nobody listens between attempts
					}
				}
			}
		}
	}()
	return ch
}

// attemptOutcome is how an attempt ended.
type attemptOutcome struct {
	killed bool
	code   int
	took   time.Duration
	// moment says what the kill came after; last is the last progress
	// line tierbench printed.
	moment, last string
	stderr       string
}

// attempt runs tierbench with args and kills it with -9 at moment m (never
// when m.kind is empty).
func (w *kill9World) attempt(args []string, m moment, events <-chan writeEvent) attemptOutcome {
	w.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), w.env()...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	for len(events) > 0 {
		<-events
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out attemptOutcome
	var stderr strings.Builder
	anchored := m.kind != "" && m.line == nil && !m.afterScratch
	anchorAt, seen, anchorText := start, 0, "the start"
	var timer <-chan time.Time
	setTimer := func() { // at a store write, the timer starts there
		if anchored && !m.atStoreWrite {
			timer = time.After(time.Until(anchorAt.Add(m.delay)))
		}
	}
	setTimer()
	kill := func(why string) {
		cmd.Process.Signal(syscall.SIGKILL)
		out.took, out.moment = time.Since(start), why
		m.kind = ""
	}
	for open := true; open; {
		select {
		case l, ok := <-lines:
			if open = ok; !ok {
				break
			}
			stderr.WriteString(l + "\n")
			out.last = l
			if m.kind != "" && m.line != nil && !anchored && m.line.MatchString(l) {
				if seen++; seen == m.nth {
					anchored, anchorAt, anchorText = true, time.Now(), fmt.Sprintf("line %q", clip(l, 60))
					setTimer()
				}
			}
		case e := <-events:
			switch {
			case e.at.Before(start) || m.kind == "":
			case !e.store && m.afterScratch && !anchored:
				// inotify merges renames that follow each other unread:
				// the ledger itself says what it holds.
				if w.scratchRecorded() {
					anchored, anchorAt, anchorText = true, time.Now(), "the scratch folder's record in the ledger"
				}
			case e.store && anchored && m.atStoreWrite && timer == nil:
				anchorAt, anchorText = time.Now(), "the first results store write after "+anchorText
				timer = time.After(m.delay)
			}
		case <-timer:
			timer = nil
			kill(fmt.Sprintf("%s after %s", m.delay.Round(100*time.Microsecond), anchorText))
		}
	}
	err = cmd.Wait()
	out.stderr = stderr.String()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		out.code = ee.ExitCode()
		ws, ok := ee.Sys().(syscall.WaitStatus)
		out.killed = ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
	case err != nil:
		w.t.Fatal(err)
	}
	if !out.killed { // it ended before the moment, or before the signal came
		out.took = time.Since(start)
	}
	return out
}

// scratchRecorded reports whether the ledger holds a study's scratch
// folder, made and confirmed.
func (w *kill9World) scratchRecorded() bool {
	ledger, err := tier.OpenLedger(w.state)
	if err != nil {
		return false
	}
	rs, _ := ledger.All()
	for _, r := range rs {
		if r.Kind == tier.KindDir && !r.Pending && filepath.Dir(r.Path) == filepath.Join(w.state, "scratch") {
			return true
		}
	}
	return false
}

// check opens the results store as tierbench does after a kill and
// returns each study's status. The store passes SQLite's integrity check;
// every run stored before is there unchanged (a failed run may have been
// replaced by its cell's new attempt); every ok run's histograms decode
// and count its operations; show reads every study not yet done (a done
// study's runs must not change).
func (w *kill9World) check(when string) map[string]string {
	t := w.t
	t.Helper()
	status := map[string]string{}
	path := filepath.Join(w.results, results.DBFile)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return status // killed before the store was made
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatalf("%s: open %s: %v", when, path, err)
	}
	var integrity string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Errorf("%s: integrity check of the results store: %q %v", when, integrity, err)
	}
	db.Close()
	store, err := results.OpenExisting(w.results)
	if err != nil {
		t.Fatalf("%s: open the results store: %v", when, err)
	}
	defer store.Close()
	ctx := context.Background()
	studies, err := store.Studies(ctx)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	now := map[string]string{}
	for _, st := range studies {
		status[st.ID] = st.Status
		runs, err := store.Runs(ctx, st.ID)
		if err != nil {
			t.Fatalf("%s: runs of %s: %v", when, st.ID, err)
		}
		for _, r := range runs {
			b, _ := json.Marshal(r)
			now[r.ID] = string(b)
			if r.Status == results.RunOK {
				w.checkHistograms(when, store, r)
			}
		}
		if w.done[st.ID] {
			continue
		}
		r := runBinary(t, binary, "", w.env(), "show", st.ID, "--results", w.results, "--format", "json")
		var got showJSON
		if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 0 || err != nil || len(got.Runs) != len(runs) {
			t.Errorf("%s: show %s: exit %d, %v, %d runs of %d stored\n%s", when, st.ID, r.code, err, len(got.Runs), len(runs), r.stderr)
		}
	}
	for id, doc := range w.stored {
		var r results.Run
		json.Unmarshal([]byte(doc), &r)
		switch {
		case now[id] == "":
			t.Errorf("%s: run %s (%s) was stored before and is gone", when, id, r.Status)
		case now[id] != doc && r.Status == results.RunOK:
			t.Errorf("%s: ok run %s changed:\nbefore %s\nnow    %s", when, id, doc, now[id])
		}
	}
	w.stored = now
	return status
}

// checkHistograms loads an ok run's measured latency histograms, of all
// operations and of each (a closed loop stores no service time), which
// must count the run's operations.
func (w *kill9World) checkHistograms(when string, store *results.Store, r results.Run) {
	ctx := context.Background()
	want := map[string]int64{results.OpAll: r.Ops}
	for op, s := range r.ByOp {
		want[op] = s.Ops
	}
	for op, ops := range want {
		h, err := store.Histogram(ctx, r.ID, op, results.KindLatency, "measured")
		if err != nil {
			w.t.Errorf("%s: run %s: %v", when, r.ID, err)
			continue
		}
		if h.TotalCount() != ops {
			w.t.Errorf("%s: run %s: the %s latency histogram counts %d operations, the run %d", when, r.ID, op, h.TotalCount(), ops)
		}
	}
}

// okRuns counts the study's ok runs stored (0 for "").
func (w *kill9World) okRuns(id string) int {
	n := 0
	for _, doc := range w.stored {
		var r results.Run
		json.Unmarshal([]byte(doc), &r)
		if r.StudyID == id && r.Status == results.RunOK {
			n++
		}
	}
	return n
}

// runStored says whether the run the last line names was stored.
func (w *kill9World) runStored(study, last string) string {
	m := runLabel.FindStringSubmatch(last)
	if m == nil || study == "" {
		return ""
	}
	seq, _ := strconv.Atoi(m[1])
	if _, ok := w.stored[fmt.Sprintf("%s-%03d", study, seq)]; ok {
		return " (stored)"
	}
	return " (not stored)"
}

// unfinished is the one stored study not done yet, "" if none.
func (w *kill9World) unfinished(status map[string]string) string {
	w.t.Helper()
	var found []string
	for id := range status {
		if !w.done[id] {
			found = append(found, id)
		}
	}
	if len(found) > 1 {
		w.t.Fatalf("%d unfinished studies stored, want one: %v", len(found), found)
	}
	if len(found) == 0 {
		return ""
	}
	return found[0]
}

// checkDone asserts a done study: exactly one ok run per cell and round,
// its rounds and engine version recorded. It counts the study done.
func (w *kill9World) checkDone(id string) {
	t := w.t
	t.Helper()
	w.done[id] = true
	store, err := results.OpenExisting(w.results)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	st, err := store.Study(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := store.Runs(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]int{}
	for _, r := range runs {
		if r.Status != results.RunOK {
			t.Errorf("study %s: run %s is %s: %s", id, r.ID, r.Status, r.Error)
		}
		cells[fmt.Sprintf("%s %s c=%d #%d", r.Placement, r.Durability, r.Clients, r.Repeat)]++
	}
	for _, p := range []string{"all-disk", "wal-ram"} {
		for _, c := range []int{1, 4} {
			for round := 1; round <= 2; round++ {
				if k := fmt.Sprintf("%s sync c=%d #%d", p, c, round); cells[k] != 1 {
					t.Errorf("study %s: %d runs of %s, want 1", id, cells[k], k)
				}
			}
		}
	}
	if len(runs) != kill9Runs || st.Status != results.StudyDone || st.Rounds != 2 || st.StopReason != results.StopFixed ||
		st.FinishedAt == nil || st.EngineVersion == "" {
		t.Errorf("study %s: %d runs, status %s, rounds %d, stop %q, finished %v, engine version %q; want %d runs, done, 2 rounds, fixed, finished, a version",
			id, len(runs), st.Status, st.Rounds, st.StopReason, st.FinishedAt, st.EngineVersion, kill9Runs)
	}
}

// checkNothingLeft asserts that no ledger record, scratch or run folder,
// mount or tierbench process is left.
func (w *kill9World) checkNothingLeft(when string) {
	t := w.t
	t.Helper()
	ledger, err := tier.OpenLedger(w.state)
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := ledger.All(); err != nil || len(rs) > 0 {
		t.Errorf("%s: the ledger holds %v (%v)", when, rs, err)
	}
	scratch, _ := os.ReadDir(filepath.Join(w.state, "scratch"))
	for _, e := range scratch {
		t.Errorf("%s: scratch folder %s left", when, e.Name())
	}
	for _, dir := range []string{w.ram, w.disk} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			t.Errorf("%s: %s left in tier folder %s", when, e.Name(), dir)
		}
	}
	mounts, err := mountinfo.Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mounts {
		for _, dir := range []string{w.state, w.ram, w.disk, w.results} {
			if m.Point == dir || strings.HasPrefix(m.Point, dir+"/") {
				t.Errorf("%s: %s is still mounted", when, m.Point)
			}
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, p := range procs {
		if exe, err := os.Readlink(p); err == nil && exe == binary {
			t.Errorf("%s: a tierbench process is left: %s", when, filepath.Dir(p))
		}
	}
}
