package report

import (
	"fmt"

	"github.com/tierbench/tierbench/results"
)

// timeText says how a finished study spent its wall time: measured
// windows, transients cut (warmups), loading, crash recovery and the rest
// (engines starting and stopping, probes): the line that tells whether a
// study measured or waited. "" for a study unfinished or resumed, whose
// wall time holds a pause.
func timeText(st *results.Study, runs []results.Run) string {
	if st.FinishedAt == nil || len(st.ResumedAt) > 0 || len(runs) == 0 {
		return ""
	}
	wall := st.FinishedAt.Sub(st.StartedAt).Seconds()
	if wall <= 0 {
		return ""
	}
	var measured, transient, loading, recovery float64
	for _, r := range runs {
		measured += r.DurationS
		transient += r.WarmupS
		loading += r.LoadS
		if r.Crash != nil {
			recovery += r.Crash.RecoveryS
		}
	}
	rest := max(0, wall-measured-transient-loading-recovery)
	s := fmt.Sprintf("Time: %.0f s, of which measured %.0f s (%.0f%%), transients %.0f s, loading %.0f s", wall, measured, 100*measured/wall, transient, loading)
	if recovery > 0 {
		s += fmt.Sprintf(", crash recovery %.0f s", recovery)
	}
	return s + fmt.Sprintf(", the rest %.0f s (engines starting and stopping, probes, analysis).", rest)
}
