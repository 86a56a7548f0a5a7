package runner

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/testenv"
)

// TestABusyNeighbourDisturbsRuns: beside a busy loop that is not
// tierbench's, every run is marked disturbed with who took what, and an
// adaptive study runs rounds in the disturbed ones' place, up to its max.
func TestABusyNeighbourDisturbsRuns(t *testing.T) {
	pid := testenv.BusyNeighbour(t)[0]
	root := t.TempDir()
	st := tinyStudy(t, map[string]string{"disk": filepath.Join(root, "disk")}, []study.Placement{
		{Name: "all-disk", Components: map[string]string{"data": "disk", "wal": "disk"}},
		{Name: "again", Components: map[string]string{"data": "disk", "wal": "disk"}},
	})
	st.Repeat, st.Adaptive = 3, &study.Adaptive{Min: 2, Until: 0.99}
	rec, a, lines := runStudy(t, root, st, nil)
	g := a.Group(a.Groups[0].Key())
	t.Logf("%d rounds; first run: %s", rec.Rounds, g.Runs[0].DisturbedBy)
	for _, grp := range a.Groups {
		for _, r := range grp.Runs {
			if !r.Disturbed || !strings.Contains(r.DisturbedBy, "other processes took") {
				t.Errorf("run %d beside busy pid %d: disturbed %v (%q); others %+v", r.Seq, pid, r.Disturbed, r.DisturbedBy, r.Telemetry.Others)
			}
		}
		if grp.Disturbed != grp.N {
			t.Errorf("%s: %d of %d runs counted disturbed", grp.Series, grp.Disturbed, grp.N)
		}
	}
	// Converged at once (until 99%), it still ran past min for the
	// disturbed rounds, up to max.
	if rec.Rounds != 3 || !strings.Contains(lines, "had a run disturbed by other processes: running another in its place") {
		t.Errorf("ran %d rounds, want 3 (min 2, both disturbed, max 3):\n%s", rec.Rounds, lines)
	}
}
