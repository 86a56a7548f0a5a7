package report

import (
	"encoding/json"
	"io"
	"math"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// Document is the JSON of `tierbench show --format json` and `export
// --format json`, which follows results' JSON Schema (results/schema,
// docs/results-schema.md).
type Document struct {
	// SchemaVersion is the version of that schema the document follows
	// (results.SchemaVersion), so a reader can tell which it has.
	SchemaVersion int            `json:"schema_version"`
	Study         *results.Study `json:"study"`
	Runs          []results.Run  `json:"runs"`
	Groups        []*stats.Group `json:"groups"`
	// Verdicts are the answer sentences, one per durability mode.
	Verdicts []string `json:"verdicts"`
	// CrashCosts is the crash trade-off (CrashCosts) of a study that
	// crashed its runs: what each cell lost beside what it bought.
	CrashCosts []CrashCost `json:"crash_costs,omitempty"`
	// Answer is the answer as `show` opens with it (answerLines).
	Answer []string `json:"answer"`
	// Comparisons are every comparison the study judged, with raw and
	// adjusted p values (stats.Judged).
	Comparisons []*stats.Judged `json:"comparisons"`
	// A capacity study's decision (stats.Decide): each series' capacity
	// and cost, per durability x clients block its frontier and the
	// cheapest series meeting the need, the dominated series and why, and
	// the search's time against a fixed-rate study's.
	Capacity       []*stats.CapacityEntry `json:"capacity,omitempty"`
	Frontier       []stats.Frontier       `json:"frontier,omitempty"`
	Recommendation []stats.Recommendation `json:"recommendation,omitempty"`
	Dominated      []stats.Domination     `json:"dominated,omitempty"`
	SearchTime     *stats.SearchTime      `json:"search_time,omitempty"`
}

// JSON writes a study, its runs and its per-group statistics.
func JSON(w io.Writer, st *results.Study, runs []results.Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Build(st, runs))
}

// Build analyses a study as every output does and returns the document
// JSON writes; the CSV tables of `export` are read from it too, so they
// hold the same figures.
func Build(st *results.Study, runs []results.Run) Document {
	if runs == nil {
		runs = []results.Run{}
	}
	runs = stats.Explain(st, runs)
	view, viewRuns := results.SeriesView(st, runs)
	a := stats.Analyze(view, viewRuns)
	crashes := CrashCosts(st, runs)
	doc := Document{SchemaVersion: results.SchemaVersion, Study: withAnalysis(st, a), Runs: runs, Groups: a.Groups, Verdicts: Verdicts(view, a, 0), CrashCosts: crashes,
		Answer: answerLines(view, a, viewRuns, crashes), Comparisons: a.Comparisons}
	if d := stats.Decide(view, a, viewRuns); d != nil {
		doc.Capacity, doc.Frontier, doc.Recommendation, doc.Dominated, doc.SearchTime = d.Capacity, d.Frontiers, d.Recommendations, d.Dominated, &d.Time
	}
	if doc.Groups == nil {
		doc.Groups = []*stats.Group{}
	}
	if doc.Verdicts == nil {
		doc.Verdicts = []string{}
	}
	if doc.Answer == nil {
		doc.Answer = []string{}
	}
	if doc.Comparisons == nil {
		doc.Comparisons = []*stats.Judged{}
	}
	return doc
}

// withAnalysis is a copy of st holding what its analysis says of it as a
// whole: the guard its verdicts were judged under, and the widest paired
// half-width reached beside the one an adaptive study asked for.
func withAnalysis(st *results.Study, a *stats.Analysis) *results.Study {
	c := *st
	c.Multiplicity = stats.Multiplicity
	if w := stats.Widest(a); w.Found && !math.IsInf(w.HalfWidth, 1) {
		hw := w.HalfWidth
		c.HalfWidthReached = &hw
	}
	return &c
}
