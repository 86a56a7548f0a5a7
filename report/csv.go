package report

import (
	"encoding/csv"
	"io"
	"strconv"
)

// The CSV tables of `tierbench export --format csv`, read from the same
// Document as the JSON, one row per group or per comparison; each column
// is named as its JSON field, an interval split into _low and _high, and
// a figure the JSON leaves out is an empty cell. Runs are results.WriteCSV's.
// ratio_ci95 is the interval adjusted to match the verdict (at
// ratio_ci_level), as in the JSON; the comparison's own 95% interval
// follows at the end.

// groupsHeader names GroupsCSV's columns.
var groupsHeader = []string{"study_id", "placement", "durability", "clients", "n", "failed", "disturbed",
	"throughput_median", "throughput_ci95_low", "throughput_ci95_high", "throughput_cv", "p50_us_median", "p99_us_median",
	"ratio_vs_baseline", "ratio_ci95_low", "ratio_ci95_high", "ratio_ci90_low", "ratio_ci90_high", "pairs", "rounds_left_out",
	"verdict", "p", "p_adjusted", "journal_writes_per_s_median", "journal_flushes_per_s_median",
	"ratio_ci_level", "ratio_ci95_per_comparison_low", "ratio_ci95_per_comparison_high"}

// GroupsCSV writes one row per group of doc (groups[] of the JSON).
func GroupsCSV(w io.Writer, doc Document) error {
	rows := [][]string{groupsHeader}
	for _, g := range doc.Groups {
		lo, hi := interval(g.ThroughputCI)
		rlo, rhi := interval(g.RatioCI)
		r90lo, r90hi := interval(g.RatioCI90)
		plo, phi := interval(g.RatioCIPerComparison)
		rows = append(rows, []string{doc.Study.ID, g.Series, g.Durability, strconv.Itoa(g.Clients), strconv.Itoa(g.N),
			strconv.Itoa(g.Failed), strconv.Itoa(g.Disturbed), num(g.ThroughputMedian), lo, hi, num(g.ThroughputCV),
			num(g.P50Median), num(g.P99Median), num(g.Ratio), rlo, rhi, r90lo, r90hi, strconv.Itoa(g.Pairs),
			strconv.Itoa(g.RoundsLeftOut), g.Verdict, optNum(g.P), optNum(g.PAdjusted), num(g.JournalWritesMedian),
			num(g.JournalFlushesMedian), levelNum(g.RatioCILevel), plo, phi})
	}
	return writeCSV(w, rows)
}

// comparisonsHeader names ComparisonsCSV's columns.
var comparisonsHeader = []string{"study_id", "kind", "placement", "durability", "clients", "against", "against_durability",
	"adjacent", "ratio", "ratio_ci95_low", "ratio_ci95_high", "ratio_ci90_low", "ratio_ci90_high", "pairs",
	"p", "p_adjusted", "p_equivalence", "p_equivalence_adjusted", "verdict",
	"ratio_ci_level", "ratio_ci95_per_comparison_low", "ratio_ci95_per_comparison_high"}

// ComparisonsCSV writes one row per comparison the study judged
// (comparisons[] of the JSON), with its raw and adjusted p values.
func ComparisonsCSV(w io.Writer, doc Document) error {
	rows := [][]string{comparisonsHeader}
	for _, c := range doc.Comparisons {
		lo, hi := interval(c.CI95)
		lo90, hi90 := interval(c.CI90)
		plo, phi := interval(c.CI95PerComparison)
		rows = append(rows, []string{doc.Study.ID, c.Kind, c.Series, c.Durability, strconv.Itoa(c.Clients), c.Against,
			c.AgainstDurability, strconv.FormatBool(c.Adjacent), num(c.Ratio), lo, hi, lo90, hi90, strconv.Itoa(c.Pairs),
			optNum(c.P), optNum(c.PAdjusted), optNum(c.PEquivalence), optNum(c.PEquivalenceAdjusted), c.Verdict,
			levelNum(c.CILevel), plo, phi})
	}
	return writeCSV(w, rows)
}

func writeCSV(w io.Writer, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// levelNum is an interval's level, empty when the JSON leaves it out (0).
func levelNum(v float64) string {
	if v == 0 {
		return ""
	}
	return num(v)
}

// optNum is a figure the JSON may leave out: empty when absent.
func optNum(v *float64) string {
	if v == nil {
		return ""
	}
	return num(*v)
}

// interval is an interval's ends, empty without one.
func interval(ci *[2]float64) (lo, hi string) {
	if ci == nil {
		return "", ""
	}
	return num(ci[0]), num(ci[1])
}
