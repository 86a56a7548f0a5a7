package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/tier"
)

func TestEmulationCheck(t *testing.T) {
	fio := func(fsyncP50, writeIOPS float64) Tier {
		return Tier{Fio: &Fio{FsyncLat: Latency{P50: fsyncP50}, RandWriteQD32: IOResult{IOPS: writeIOPS}}}
	}
	lat2ms := &tier.LatencySpec{Fsync: 2 * time.Millisecond}
	cases := []struct {
		name  string
		lat   *tier.LatencySpec
		thr   *tier.ThrottleSpec
		probe Tier
		want  []string // the line starts with want[0] and contains the rest
	}{
		{"fsync within 10%", lat2ms, nil, fio(2150, 0),
			[]string{"confirmed: ", "fsync p50 2150µs vs 2000µs configured (+7.5%)"}},
		{"fsync 30% over", lat2ms, nil, fio(2605, 0),
			[]string{"NOT confirmed: ", "fsync p50 2605µs vs 2000µs configured (+30.2%)"}},
		{"fsync under", lat2ms, nil, fio(1700, 0),
			[]string{"NOT confirmed: ", "(-15.0%)"}},
		{"IOPS cap, fsync figure given too", nil, &tier.ThrottleSpec{WriteIOPS: 1000}, fio(30, 990),
			[]string{"confirmed: ", "4k random write IOPS (qd32) 990 vs 1000 configured (-1.0%)", "; fsync p50 30µs"}},
		{"a bad figure comes first", lat2ms, &tier.ThrottleSpec{WriteIOPS: 1000}, fio(2000, 500),
			[]string{"NOT confirmed: 4k random write IOPS", "fsync p50 2000µs vs 2000µs configured (+0.0%)"}},
		{"write latency only", &tier.LatencySpec{Write: time.Millisecond}, nil, fio(900, 0),
			[]string{"nothing to confirm", "fsync p50 900µs"}},
		{"no fio figures", lat2ms, nil, Tier{},
			[]string{"not confirmed: the probe measured nothing"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := EmulationCheck(tc.lat, tc.thr, tc.probe)
			if !strings.HasPrefix(got, tc.want[0]) {
				t.Errorf("%q does not start with %q", got, tc.want[0])
			}
			for _, w := range tc.want[1:] {
				if !strings.Contains(got, w) {
					t.Errorf("%q does not contain %q", got, w)
				}
			}
		})
	}
}
