package syncdelay

import (
	"slices"
	"testing"
	"time"

	"github.com/tierbench/tierbench/tier/emulate"
)

// Each rule's cost is measured at its own median, once per median,
// within calibrationMin and calibrationMax.
func TestCalibrationTargets(t *testing.T) {
	us := time.Microsecond
	rs := Rules{{Dir: "/a", Latency: emulate.Latency{Fsync: 125 * us}}, {Dir: "/b", Latency: emulate.Latency{Fsync: 30 * us}}, {Dir: "/c", Latency: emulate.Latency{Fsync: 125 * us}}, {Dir: "/d", Latency: emulate.Latency{Fsync: time.Hour}}, {Dir: "/e"}, {Dir: "/f", Latency: emulate.Latency{Fsync: 500 * us}}}
	want := []time.Duration{calibrationMin, 125 * us, 500 * us, calibrationMax}
	if got := rs.calibrationTargets(); !slices.Equal(got, want) {
		t.Errorf("calibration targets %v, want %v", got, want)
	}
}

// Rules of one median share one calibration, measured once; a rule that
// has one keeps it, and so does every later rule of its median.
func TestCalibratedOncePerMedian(t *testing.T) {
	us := time.Microsecond
	kept := &Calibration{Overshoot: 7 * us}
	rs := Rules{{Dir: "/a", Latency: emulate.Latency{Fsync: 125 * us}}, {Dir: "/b", Latency: emulate.Latency{Fsync: 2 * time.Millisecond}, Calibration: kept}, {Dir: "/c", Latency: emulate.Latency{Fsync: 125 * us}}, {Dir: "/d"}}
	got := rs.Calibrated()
	if rs[0].Calibration != nil {
		t.Error("Calibrated changed the rules it was given")
	}
	if got[0].Calibration == nil || got[0].Calibration != got[2].Calibration {
		t.Errorf("rules of one median carry calibrations %v and %v, want one", got[0].Calibration, got[2].Calibration)
	}
	if got[1].Calibration != kept || got[3].Calibration != nil {
		t.Errorf("a calibrated rule got %v, a rule with no latency %v", got[1].Calibration, got[3].Calibration)
	}
	more := append(got, Rule{Dir: "/e", Latency: emulate.Latency{Fsync: 125 * us}}, Rule{Dir: "/f", Latency: emulate.Latency{Fsync: 3 * time.Millisecond}}).Calibrated()
	if more[4].Calibration != got[0].Calibration || more[5].Calibration != kept {
		t.Errorf("a later rule of a calibrated median measured its own: %v, %v", more[4].Calibration, more[5].Calibration)
	}
}
