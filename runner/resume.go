package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/tier"
)

// ErrNotResumable refuses `run --resume` of a study that is not interrupted.
var ErrNotResumable = errors.New("study cannot be resumed")

// resumed takes up the stored record of an interrupted study: the same id
// and start, marked running again, and the cells that already have an ok
// run, which are not run again. A study killed before its end stored its
// record only as it began, without the engine version its first run
// learnt: that comes from its stored runs, since a resume with no cell
// left to run learns none.
func resumed(ctx context.Context, store *results.Store, prev *results.Study) (*results.Study, map[int]bool, error) {
	if err := Resumable(prev); err != nil {
		return nil, nil, err
	}
	runs, err := store.Runs(ctx, prev.ID)
	if err != nil {
		return nil, nil, err
	}
	rec := *prev
	done := map[int]bool{}
	for _, r := range runs {
		if r.Status == results.RunOK {
			done[r.Seq] = true
		}
		if rec.EngineVersion == "" {
			rec.EngineVersion = r.EngineVersion
		}
	}
	rec.Status, rec.FinishedAt = results.StudyRunning, nil
	rec.ResumedAt = append(append([]time.Time(nil), prev.ResumedAt...), time.Now().UTC())
	return &rec, done, nil
}

// throughRound is runs of round and the rounds before it. A resumed
// study judges the end of a round it finished before the kill again (the
// stop rule, the capacity drops), and must do so on what that round's end
// saw: the next round's searches, cut short by the kill, would count as
// capacities they are not yet.
func throughRound(runs []results.Run, round int) []results.Run {
	out := make([]results.Run, 0, len(runs))
	for _, r := range runs {
		if r.Repeat <= round {
			out = append(out, r)
		}
	}
	return out
}

// Resumable says why a study cannot be taken up by `run --resume`: only an
// interrupted one can (a running one may still have its tierbench, or was
// killed and needs `tierbench cleanup` first; a done one has nothing left).
func Resumable(st *results.Study) error {
	switch st.Status {
	case results.StudyInterrupted:
		return nil
	case results.StudyRunning:
		return fmt.Errorf("%w: study %s is marked running: if its tierbench was killed, run `tierbench cleanup` first, which marks it interrupted", ErrNotResumable, st.ID)
	default:
		return fmt.Errorf("%w: study %s is %s: nothing to resume", ErrNotResumable, st.ID, st.Status)
	}
}

// recordStudy writes the running study into the ledger, so that after a
// kill `tierbench cleanup` marks it interrupted in its results store (see
// MarkInterrupted); forget removes the record when the study ends.
func recordStudy(ledger *tier.Ledger, store *results.Store, id string) (forget func(), err error) {
	if ledger == nil {
		return func() {}, nil
	}
	dir, err := filepath.Abs(store.Dir()) // cleanup may run from another folder
	if err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	r, err := ledger.Intend(tier.Resource{Kind: tier.KindStudy, Path: dir, Study: id})
	if err != nil {
		return nil, err
	}
	return func() { ledger.Done(r) }, nil
}

// MarkInterrupted is how `tierbench cleanup` undoes a study whose tierbench
// was killed: its stored status becomes interrupted (the runs it finished
// stay), so `run --resume` can take it up. A results folder that is gone
// leaves nothing to mark.
func MarkInterrupted(r tier.Resource) error {
	store, err := results.OpenExisting(r.Path)
	if errors.Is(err, results.ErrNoStudy) {
		return nil // the results were removed with their folder
	}
	if err != nil {
		// Locked, or unreadable: keep the record, so that a later
		// cleanup marks the study once the store opens.
		return fmt.Errorf("mark study %s interrupted: %w", r.Study, err)
	}
	defer store.Close()
	ctx := context.Background()
	st, err := store.Study(ctx, r.Study)
	if errors.Is(err, results.ErrNoStudy) {
		return nil // not in this store any more
	}
	if err != nil {
		return fmt.Errorf("mark study %s interrupted: %w", r.Study, err)
	}
	if st.Status != results.StudyRunning {
		return nil
	}
	now := time.Now().UTC()
	st.Status, st.FinishedAt = results.StudyInterrupted, &now
	return store.PutStudy(ctx, st)
}

// A study record is undone by MarkInterrupted; the kinds of the rbd tiers
// and the cluster runs the runner serves register themselves (engine/ceph/rbdtier,
// platform/kube), linked in with the runner.
func init() { tier.RegisterKind(tier.KindStudy, tier.KindFuncs{Undo: MarkInterrupted}) }
