package report

import (
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// answerLines is the study's answer, first in `show`, at the end of `run`
// and on the report's first screen: one line per question, each with its
// ratio, CI and verdict and every qualification that changes what a
// reader should do.
func answerLines(st *results.Study, a *stats.Analysis, runs []results.Run) []string {
	return Verdicts(st, a, 0)
}
