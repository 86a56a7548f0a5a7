package syncdelay

import (
	"slices"
	"testing"
	"time"
)

// Each rule's cost is measured at its own median, once per median,
// within calibrationMin and calibrationMax.
func TestCalibrationTargets(t *testing.T) {
	us := time.Microsecond
	rs := Rules{{Dir: "/a", Fsync: 125 * us}, {Dir: "/b", Fsync: 30 * us}, {Dir: "/c", Fsync: 125 * us}, {Dir: "/d", Fsync: time.Hour}, {Dir: "/e"}, {Dir: "/f", Fsync: 500 * us}}
	want := []time.Duration{calibrationMin, 125 * us, 500 * us, calibrationMax}
	if got := rs.calibrationTargets(); !slices.Equal(got, want) {
		t.Errorf("calibration targets %v, want %v", got, want)
	}
}
