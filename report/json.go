package report

import (
	"encoding/json"
	"io"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// Document is the JSON of `tierbench show --format json`.
type Document struct {
	Study  *results.Study `json:"study"`
	Runs   []results.Run  `json:"runs"`
	Groups []*stats.Group `json:"groups"`
	// Verdicts are the answer sentences, one per durability mode.
	Verdicts []string `json:"verdicts"`
	// CrashCosts is the crash trade-off (CrashCosts) of a study that
	// crashed its runs: what each cell lost beside what it bought.
	CrashCosts []CrashCost `json:"crash_costs,omitempty"`
}

// JSON writes a study, its runs and its per-group statistics.
func JSON(w io.Writer, st *results.Study, runs []results.Run) error {
	if runs == nil {
		runs = []results.Run{}
	}
	runs = stats.Explain(st, runs)
	view, viewRuns := results.SeriesView(st, runs)
	a := stats.Analyze(view, viewRuns)
	doc := Document{Study: st, Runs: runs, Groups: a.Groups, Verdicts: Verdicts(view, a, 0), CrashCosts: CrashCosts(st, runs)}
	if doc.Verdicts == nil {
		doc.Verdicts = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
