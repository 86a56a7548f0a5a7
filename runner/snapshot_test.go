package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/progress"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/workload"
)

// onceCatalog serves the real catalog; its workloads are loaded once per
// study (workload.LoadedOnce), as the analytics workload is.
type onceCatalog struct{ *catalog.Catalog }

func (c onceCatalog) Workload(name string) (workload.Spec, bool) {
	s, ok := c.Catalog.Workload(name)
	inner := s.New
	s.New = func(p setting.Values) (workload.Workload, error) {
		w, err := inner(p)
		return onceWorkload{w}, err
	}
	return s, ok
}

type onceWorkload struct{ workload.Workload }

func (onceWorkload) LoadOnce() {}

// TestLoadedOnceStartsLaterRunsFromACopy runs a workload loaded once per
// study on real PostgreSQL servers: the first run loads it, the others
// start from a copy of its folders, on other tiers too (the WAL symlink is
// re-pointed), and read the data the first run loaded.
func TestLoadedOnceStartsLaterRunsFromACopy(t *testing.T) {
	root, tiers := serverTiers(t, "a", "b")
	for _, d := range tiers {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	st := postgresStudy(t, tiers, []study.Placement{
		{Name: "all-a", Components: map[string]string{"data": "a", "wal": "a"}},
		{Name: "wal-b", Components: map[string]string{"data": "a", "wal": "b"}},
	}, "1000")
	st.Workload.Name = "ycsb-c"
	st.Clients, st.Probe = []int{1, 2}, study.ProbeOff
	// A second's reads show the copied data set is there.
	st.Duration = time.Second
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	lines := &syncWriter{}
	sum, err := Run(context.Background(), st, Options{Catalog: onceCatalog{catalog.Default()}, Store: store, Progress: progress.NewPlain(lines)})
	if err != nil || sum.OK != 4 {
		t.Fatalf("run: %+v %v\n%s", sum, err, lines)
	}
	if n := strings.Count(lines.String(), "keeping a copy of the loaded data set"); n != 1 {
		t.Errorf("%d snapshots taken, want 1:\n%s", n, lines)
	}
	runs, err := store.Runs(context.Background(), sum.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range runs {
		if r.LoadCopied != (i > 0) || r.LoadRecords != 1000 {
			t.Errorf("run %d: load_copied %v, load_records %d; want the first to load 1000 records and the others to copy them", i+1, r.LoadCopied, r.LoadRecords)
		}
		if r.Errors > 0 || r.Ops == 0 {
			t.Errorf("run %d read %d records with %d errors: the copied data set must be there", i+1, r.Ops, r.Errors)
		}
	}
}
