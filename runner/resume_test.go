package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/progress"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/tier"
)

// TestResumeRunsOnlyCellsWithoutAnOkRun interrupts a three-run study in its
// second run, marks it interrupted as cleanup would after a kill, and
// resumes it: only the two unfinished cells run, into the same study, and
// the ledger keeps no record of it afterwards.
func TestResumeRunsOnlyCellsWithoutAnOkRun(t *testing.T) {
	root := t.TempDir()
	ledger, err := tier.OpenLedger(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	tiers := map[string]string{"disk": filepath.Join(root, "disk")}
	st := tinyStudy(t, tiers, []study.Placement{{Name: "p", Components: map[string]string{"data": "disk", "wal": "disk"}}})
	st.Clients = []int{1, 2, 3}
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	lines := &syncWriter{}
	ctx := ctrlCAt(lines, "[2/3", 0)
	first, err := Run(ctx, st, Options{Catalog: catalog.Default(), Store: store, Ledger: ledger, Progress: progress.NewPlain(lines)})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Interrupted || first.OK != 1 {
		t.Fatalf("first attempt: %+v, want interrupted after one ok run", first)
	}
	// The study was recorded while it ran and forgotten when it ended.
	if all, _ := ledger.All(); len(all) != 0 {
		t.Errorf("ledger after the study: %v", all)
	}

	prev, err := store.Study(context.Background(), first.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	lines2 := &syncWriter{}
	sum, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store, Ledger: ledger,
		Progress: progress.NewPlain(lines2), Resume: prev})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Study.ID != prev.ID || sum.OK != 3 || sum.Failed != 0 || sum.Interrupted {
		t.Errorf("resumed: %+v, want the same study with 3 ok runs", sum)
	}
	if !strings.Contains(lines2.String(), "resuming: 1 of 3 runs are already ok") {
		t.Errorf("progress does not say what was skipped:\n%s", lines2)
	}
	if n := len(regexp.MustCompile(`\[\d/3 .*\] ok:`).FindAllString(lines2.String(), -1)); n != 2 {
		t.Errorf("resume ran %d runs, want the 2 unfinished:\n%s", n, lines2)
	}
	got, _ := store.Study(context.Background(), prev.ID)
	runs, _ := store.Runs(context.Background(), prev.ID)
	if got.Status != results.StudyDone || len(got.ResumedAt) != 1 || len(runs) != 3 {
		t.Errorf("stored study %s resumed %v with %d runs; want done, resumed once, 3 runs", got.Status, got.ResumedAt, len(runs))
	}

	// A study that is done has nothing to resume.
	if _, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store, Resume: got}); !errors.Is(err, ErrNotResumable) {
		t.Errorf("resume of a done study: %v", err)
	}
}

// TestResumeWithNothingLeftKeepsTheEngineVersion stores a study as a kill
// after its last run leaves it (its record as it began, without the
// engine version, then marked interrupted by cleanup): the resume runs
// nothing and stores the study done with its runs' engine version.
func TestResumeWithNothingLeftKeepsTheEngineVersion(t *testing.T) {
	root := t.TempDir()
	st := tinyStudy(t, map[string]string{"disk": filepath.Join(root, "disk")},
		[]study.Placement{{Name: "p", Components: map[string]string{"data": "disk", "wal": "disk"}}})
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	first, err := Run(ctx, st, Options{Catalog: catalog.Default(), Store: store})
	if err != nil || first.OK != 1 {
		t.Fatalf("first attempt: %+v, %v", first, err)
	}
	killed := *first.Study
	killed.Status, killed.EngineVersion, killed.Rounds, killed.StopReason = results.StudyInterrupted, "", 0, ""
	if err := store.PutStudy(ctx, &killed); err != nil {
		t.Fatal(err)
	}
	lines := &syncWriter{}
	if _, err := Run(ctx, st, Options{Catalog: catalog.Default(), Store: store, Progress: progress.NewPlain(lines), Resume: &killed}); err != nil {
		t.Fatal(err)
	}
	got, _ := store.Study(ctx, killed.ID)
	if got.Status != results.StudyDone || got.EngineVersion == "" || got.EngineVersion != first.Study.EngineVersion {
		t.Errorf("resumed study %s with engine version %q, want done with %q\n%s", got.Status, got.EngineVersion, first.Study.EngineVersion, lines)
	}
}

// TestCleanupMarksAKilledStudyInterrupted leaves a study record in the
// ledger under a dead owner, as a kill -9 does: cleanup marks the stored
// study interrupted, in one pass.
func TestCleanupMarksAKilledStudyInterrupted(t *testing.T) {
	root := t.TempDir()
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rec := &results.Study{ID: "20260101-000000-abcdef", Name: "killed", Engine: "pebble", Workload: "ycsb-a",
		StartedAt: time.Now().UTC(), Status: results.StudyRunning}
	if err := store.PutStudy(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	ledger, err := tier.OpenLedger(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	forget, err := recordStudy(ledger, store, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	_ = forget
	// Hand the record to a dead owner, as after a kill.
	all, _ := ledger.All()
	dead := all[0]
	dead.Owner = deadPID(t)
	if err := ledger.Update(all[0], dead); err != nil {
		t.Fatal(err)
	}
	done, err := ledger.Cleanup()
	if err != nil || len(done) != 1 {
		t.Fatalf("cleanup undid %v, %v", done, err)
	}
	got, _ := store.Study(context.Background(), rec.ID)
	if got.Status != results.StudyInterrupted || got.FinishedAt == nil {
		t.Errorf("after cleanup the study is %s", got.Status)
	}
	if left, _ := ledger.All(); len(left) != 0 {
		t.Errorf("ledger after cleanup: %v", left)
	}
}

// TestRunNeverRemovesAFolderItDidNotCreate has someone else create the next
// run's folder, with a file in it, between two runs: that run fails, and the
// folder and its file are left as they were.
func TestRunNeverRemovesAFolderItDidNotCreate(t *testing.T) {
	root := t.TempDir()
	ledger, err := tier.OpenLedger(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(root, "disk")
	st := tinyStudy(t, map[string]string{"disk": disk}, []study.Placement{{Name: "p", Components: map[string]string{"data": "disk", "wal": "disk"}}})
	st.Clients = []int{1, 2}
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	squat := &squatter{t: t, disk: disk}
	sum, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store, Ledger: ledger, Progress: squat})
	if err != nil {
		t.Fatal(err)
	}
	if sum.OK != 1 || sum.Failed != 1 {
		t.Errorf("ok %d failed %d, want the squatted run failed", sum.OK, sum.Failed)
	}
	if b, err := os.ReadFile(filepath.Join(squat.dir, "theirs")); err != nil || string(b) != "keep me" {
		t.Errorf("the folder tierbench did not create lost its file: %v", err)
	}
	if left, _ := ledger.All(); len(left) != 0 {
		t.Errorf("ledger after the study: %v", left)
	}
}

// TestResumeReplacesAFailedRun resumes a study whose second run failed
// (someone else's folder was in its way, since removed): the resume runs
// that cell again, and its ok run takes the failed one's place.
func TestResumeReplacesAFailedRun(t *testing.T) {
	root := t.TempDir()
	ledger, err := tier.OpenLedger(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(root, "disk")
	st := tinyStudy(t, map[string]string{"disk": disk}, []study.Placement{{Name: "p", Components: map[string]string{"data": "disk", "wal": "disk"}}})
	st.Clients = []int{1, 2}
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	squat := &squatter{t: t, disk: disk}
	first, err := Run(ctx, st, Options{Catalog: catalog.Default(), Store: store, Ledger: ledger, Progress: squat})
	if err != nil || first.OK != 1 || first.Failed != 1 {
		t.Fatalf("first attempt: %+v, %v; want one run failed", first, err)
	}
	if err := os.RemoveAll(squat.dir); err != nil {
		t.Fatal(err)
	}
	killed := *first.Study
	killed.Status = results.StudyInterrupted
	if err := store.PutStudy(ctx, &killed); err != nil {
		t.Fatal(err)
	}
	if sum, err := Run(ctx, st, Options{Catalog: catalog.Default(), Store: store, Ledger: ledger, Resume: &killed}); err != nil || sum.OK != 2 {
		t.Fatalf("resume: %+v, %v", sum, err)
	}
	runs, _ := store.Runs(ctx, killed.ID)
	if len(runs) != 2 || runs[0].Status != results.RunOK || runs[1].Status != results.RunOK || runs[1].ID != RunID(killed.ID, 2) {
		t.Errorf("runs after the resume: %+v; want both ok, the second in the failed one's place", runs)
	}
}

// squatter creates the second run's folder when the first run is reported.
type squatter struct {
	t        *testing.T
	disk, id string
	dir      string
}

func (s *squatter) Line(l string) {
	if m := regexp.MustCompile(`^study (\S+) `).FindStringSubmatch(l); m != nil {
		s.id = m[1]
	}
	if strings.HasPrefix(l, "[1/2") && s.dir == "" {
		s.dir = filepath.Join(s.disk, tier.RunFolderPrefix+s.id+"-002")
		if err := os.Mkdir(s.dir, 0o755); err != nil {
			s.t.Error(err)
		}
		if err := os.WriteFile(filepath.Join(s.dir, "theirs"), []byte("keep me"), 0o644); err != nil {
			s.t.Error(err)
		}
	}
}
func (s *squatter) Live(string)   {}
func (s *squatter) Runs(int, int) {}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	return p.Pid
}

// TestMarkInterruptedKeepsWhatItCannotMark: cleanup forgets a study's
// record when its results are gone, but keeps it (an error) when the
// store is there and cannot be read, so a later cleanup can mark it.
func TestMarkInterruptedKeepsWhatItCannotMark(t *testing.T) {
	gone := tier.Resource{Kind: tier.KindStudy, Path: filepath.Join(t.TempDir(), "removed"), Study: "20261128-130000-aaaaaa"}
	if err := MarkInterrupted(gone); err != nil {
		t.Errorf("results removed with their folder: %v, want nil (nothing to mark)", err)
	}
	unreadable := t.TempDir()
	if err := os.WriteFile(filepath.Join(unreadable, results.DBFile), []byte("not a database, long enough to be read as a header by sqlite"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := tier.Resource{Kind: tier.KindStudy, Path: unreadable, Study: "20261128-130000-aaaaaa"}
	if err := MarkInterrupted(r); err == nil || !strings.Contains(err.Error(), "mark study 20261128-130000-aaaaaa interrupted") {
		t.Errorf("an unreadable store: %v, want an error that keeps the record", err)
	}
}
