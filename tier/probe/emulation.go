package probe

import (
	"fmt"
	"math"
	"strings"

	"github.com/tierbench/tierbench/tier"
)

// Tolerances within which a probe confirms an emulated tier: the fsync p50
// fio measures against the asked fsync latency, and the queue-depth-32
// IOPS against the throttle's caps.
const (
	FsyncTolerance = 0.10
	IOPSTolerance  = 0.10
)

// EmulationCheck compares a probe of an emulated tier with what the tier was
// configured to emulate (lat and thr may be nil): fsync p50 within
// FsyncTolerance of the asked fsync latency, IOPS within IOPSTolerance of
// the caps. It returns one line for the tier's record, which starts with
// its verdict ("confirmed", "NOT confirmed", "nothing to confirm") and
// always gives the fsync p50 the probe measured.
func EmulationCheck(lat *tier.LatencySpec, thr *tier.ThrottleSpec, p Tier) string {
	if p.Fio == nil {
		return "not confirmed: the probe measured nothing"
	}
	var good, bad []string
	check := func(what string, got, want, tol float64, unit string) {
		line := fmt.Sprintf("%s %.0f%s vs %.0f%s configured", what, got, unit, want, unit)
		if want > 0 {
			line += fmt.Sprintf(" (%+.1f%%)", 100*(got-want)/want)
		}
		if want > 0 && math.Abs(got-want)/want <= tol {
			good = append(good, line)
		} else {
			bad = append(bad, line)
		}
	}
	fsyncChecked := lat != nil && lat.Fsync > 0
	if fsyncChecked {
		check("fsync p50", p.Fio.FsyncLat.P50, float64(lat.Fsync.Microseconds()), FsyncTolerance, "µs")
	}
	if thr != nil {
		if thr.WriteIOPS > 0 {
			check("4k random write IOPS (qd32)", p.Fio.RandWriteQD32.IOPS, float64(thr.WriteIOPS), IOPSTolerance, "")
		}
		if thr.ReadIOPS > 0 {
			check("4k random read IOPS (qd32)", p.Fio.RandReadQD32.IOPS, float64(thr.ReadIOPS), IOPSTolerance, "")
		}
	}
	all := strings.Join(append(bad, good...), "; ")
	if !fsyncChecked {
		all = joinNonEmpty(all, fmt.Sprintf("fsync p50 %.0fµs", p.Fio.FsyncLat.P50))
	}
	switch {
	case len(bad) > 0:
		return "NOT confirmed: " + all
	case len(good) > 0:
		return "confirmed: " + all
	}
	return "nothing to confirm (only bandwidth caps or read/write latency, which the probe does not isolate): " + all
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
