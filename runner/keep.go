package runner

import (
	"fmt"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/cgroupfs"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/workload"
)

// A capacity search's steps differ only in their rate, so where the
// engine allows it (engine.StepKeeper) a search keeps one engine open,
// on its folders and loaded data, across its steps: the first step opens
// and loads it like any run, and each later step only drives it, stored
// as a run of its own (results.Run.EngineKeptFrom names the step that
// opened it). A step that fails closes the engine, and the next opens a
// fresh one; a resumed search opens its own, since the kill took the
// engine with it.

// kept is the engine a search keeps open between its steps: what a run's
// open and load phases made, which its close would undo.
type kept struct {
	folders      *tier.RunFolders
	cfg          engine.Config
	db           engine.DB
	w            workload.Workload
	memory       *cgroupfs.MemoryGroup
	removeMemory func() error
	dirs         map[string]string
	restored     bool
	// openedBy is the run id of the step that opened the engine.
	openedBy string
}

// keeps says whether a search of cell keeps its engine open across its
// steps: the engine allows it, and nothing in the cell needs a fresh
// one (a crash run, cache: cold) or runs elsewhere (a cluster).
func (s *studyRun) keeps(cell study.Cell) bool {
	_, ok := s.eng.(engine.StepKeeper)
	return ok && s.cluster == nil && cell.Variant.Cache != study.CacheCold &&
		(cell.Variant.Crash == "" || cell.Variant.Crash == study.CrashNone)
}

// adopt gives the run the search's open engine: it opens and loads
// nothing.
func (r *run) adopt(k *kept) {
	r.folders, r.cfg, r.db, r.w = k.folders, k.cfg, k.db, k.w
	r.memory, r.removeMemory, r.restored = k.memory, k.removeMemory, k.restored
	r.rec.Dirs, r.rec.EngineVersion, r.rec.EngineKeptFrom = k.dirs, k.db.Version(), k.openedBy
}

// handOver moves the run's open engine to k, for the search's next step,
// so that the run's close leaves it open.
func (r *run) handOver(k *kept) {
	*k = kept{folders: r.folders, cfg: r.cfg, db: r.db, w: r.w, memory: r.memory, removeMemory: r.removeMemory,
		dirs: r.rec.Dirs, restored: r.restored, openedBy: r.rec.EngineKeptFrom}
	if k.openedBy == "" {
		k.openedBy = r.rec.ID
	}
	r.folders, r.db, r.removeMemory = nil, nil, nil
}

// open reports whether k holds an open engine.
func (k *kept) open() bool { return k != nil && k.db != nil }

// close closes the kept engine, as a run's close would have, and says
// what went wrong on the progress line: the steps that drove it are
// stored already.
func (s *studyRun) closeKept(k *kept) {
	if !k.open() {
		return
	}
	var errs []error
	if err := k.db.Close(); err != nil {
		errs = append(errs, err)
	}
	if k.removeMemory != nil {
		if err := k.removeMemory(); err != nil {
			errs = append(errs, err)
		}
	}
	if k.folders != nil {
		done := k.folders.Remove
		if s.opt.Keep {
			done = k.folders.Keep
		}
		if err := done(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, err := range errs {
		s.opt.Progress.Line(fmt.Sprintf("capacity: closing the engine %s opened: warning: %v", k.openedBy, err))
	}
	*k = kept{}
}
