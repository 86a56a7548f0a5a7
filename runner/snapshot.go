package runner

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A snapshot is a copy of an engine's component folders right after a
// workload.LoadedOnce workload's load and a clean close: later runs of the
// study start from a copy of it instead of loading again. It lives in the
// study's scratch folder and goes with it.
type snapshot struct {
	dir string
	// dirs are the component folders it was taken from, whose paths
	// symlinks between components may name.
	dirs map[string]string
	// records is what the load reported, recorded with every run.
	records int64
}

// snapshotKey names the snapshot a run can start from: the engine's
// options other than memory sizes (which are read at start, not written
// into the files) decide what the load wrote.
func (s *studyRun) snapshotKey(options map[string]string) string {
	spec := s.eng.Spec()
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(options)) {
		if o, ok := spec.Option(name); ok && o.Memory {
			continue
		}
		parts = append(parts, name+"="+options[name])
	}
	return strings.Join(parts, ",")
}

// loadsOnce reports whether the run's workload is loaded once per study:
// it is a workload.LoadedOnce and the run has folders to copy.
func (r *run) loadsOnce() bool {
	return r.loadOnce && r.folders != nil
}

// restore copies the study's snapshot for this run's options into the
// run's empty folders, before the engine opens on them; restored is false
// when there is none yet.
func (r *run) restore(ctx context.Context) (restored bool, err error) {
	snap, ok := r.snapshots[r.snapshotKey(r.rec.Options)]
	if !ok {
		return false, nil
	}
	r.opt.Progress.Live(r.label + " copying the study's loaded data set (loaded once per study)...")
	start := time.Now()
	for comp, dst := range r.cfg.Dirs {
		if err := copyFolder(ctx, filepath.Join(snap.dir, comp), dst); err != nil {
			return false, fmt.Errorf("start from the study's loaded data set: %w", err)
		}
		if err := repoint(dst, snap.dirs, r.cfg.Dirs); err != nil {
			return false, fmt.Errorf("start from the study's loaded data set: %w", err)
		}
	}
	r.rec.LoadS, r.rec.LoadRecords, r.rec.LoadCopied = time.Since(start).Seconds(), snap.records, true
	return true, nil
}

// takeSnapshot closes the engine cleanly after the load, copies its
// folders into the scratch folder, and opens the engine again on them.
func (r *run) takeSnapshot(ctx context.Context) error {
	key := r.snapshotKey(r.rec.Options)
	if _, ok := r.snapshots[key]; ok {
		return nil
	}
	r.opt.Progress.Live(r.label + " keeping a copy of the loaded data set for the study's later runs...")
	db := r.db
	r.db = nil // closed, whatever Close says
	if err := db.Close(); err != nil {
		return fmt.Errorf("close the engine to keep its loaded data set: %w", err)
	}
	dir, err := os.MkdirTemp(r.ws.Scratch(), "loaded-")
	if err != nil {
		return fmt.Errorf("keep the loaded data set: %w", err)
	}
	for comp, src := range r.cfg.Dirs {
		if err := copyFolder(ctx, src, filepath.Join(dir, comp)); err != nil {
			os.RemoveAll(dir)
			return fmt.Errorf("keep the loaded data set: %w", err)
		}
	}
	r.snapshots[key] = snapshot{dir: dir, dirs: r.cfg.Dirs, records: r.rec.LoadRecords}
	if err := r.memoryLimit(); err != nil { // the load ran unbounded (run.open)
		return err
	}
	db, err = r.eng.Open(ctx, r.cfg)
	if err != nil {
		return openError(r.st.Engine, err)
	}
	r.db = db
	return nil
}

// copyFolder copies src's contents into dst (made if missing) with
// owners, modes, times and symlinks as they are: cp -a.
func copyFolder(ctx context.Context, src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", src+"/.", dst).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cp -a %s %s: %v: %s", src, dst, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// repoint rewrites symlinks under dir that point into one of the
// snapshot's component folders (PostgreSQL's pg_wal -> the wal folder) to
// the same place in this run's folders.
func repoint(dir string, was, now map[string]string) error {
	return filepath.WalkDir(dir, func(path string, de os.DirEntry, err error) error {
		if err != nil || de.Type()&os.ModeSymlink == 0 {
			return err
		}
		target, err := os.Readlink(path)
		if err != nil {
			return err
		}
		for comp, old := range was {
			rest, ok := strings.CutPrefix(target, old)
			if !ok || (rest != "" && rest[0] != '/') {
				continue
			}
			if err := os.Remove(path); err != nil {
				return err
			}
			return os.Symlink(now[comp]+rest, path)
		}
		return nil
	})
}
