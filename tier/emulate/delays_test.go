package emulate

import (
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

// The draws around a latency with a p99 have that median and that 99th
// percentile; without a p99 every operation waits the latency itself.
func TestDrawDistribution(t *testing.T) {
	for _, c := range []struct {
		name     string
		p50, p99 time.Duration
	}{
		{"constant", 2 * time.Millisecond, 0},
		{"p99 equal to p50", 2 * time.Millisecond, 2 * time.Millisecond},
		{"ssd tail", 90 * time.Microsecond, 200 * time.Microsecond},
		{"hdd tail", 8300 * time.Microsecond, 20 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := sigma(c.p50, c.p99)
			const n = 200000
			ds := make([]time.Duration, n)
			for i := range ds {
				ds[i] = draw(c.p50, s)
			}
			slices.Sort(ds)
			want99 := max(c.p99, c.p50)
			for _, q := range []struct {
				name      string
				got, want time.Duration
			}{{"p50", ds[n/2], c.p50}, {"p99", ds[n*99/100], want99}} {
				if r := float64(q.got) / float64(q.want); r < 0.97 || r > 1.03 {
					t.Errorf("%s of draws %s, want %s", q.name, q.got, q.want)
				}
			}
		})
	}
}

// The helper's command line carries the tails to the server.
func TestHelperArgsCarryTails(t *testing.T) {
	lat := Latency{Read: time.Millisecond, ReadP99: 3 * time.Millisecond, Fsync: 2 * time.Millisecond, FsyncP99: 5 * time.Millisecond, DirectWrites: true,
		FsyncAtOnce: []SyncsAtOnce{{Syncs: 2, P50: 3 * time.Millisecond, P99: 7 * time.Millisecond}, {Syncs: 8, P50: 6500 * time.Microsecond}}}
	cmd := helperCommand("/b", "/m", lat, Options{}, nil)
	cfg, err := parseHelperArgs(cmd.Args[2:])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.lat, lat) {
		t.Fatalf("helper got %+v, want %+v", cfg.lat, lat)
	}
}

// A sync's median follows the syncs in flight: the one-sync figure at 1,
// each point's at its count, log-log in between, the last point's beyond.
func TestFsyncTargetBySyncsInFlight(t *testing.T) {
	us := func(n float64) time.Duration { return time.Duration(n * float64(time.Microsecond)) }
	d := newDelays(Latency{Fsync: us(100), FsyncP99: us(200),
		FsyncAtOnce: []SyncsAtOnce{{Syncs: 2, P50: us(150), P99: us(300)}, {Syncs: 8, P50: us(300), P99: us(900)}}})
	for _, tc := range []struct {
		syncs int
		want  time.Duration
	}{{0, us(100)}, {1, us(100)}, {2, us(150)}, {4, us(212.132)}, {8, us(300)}, {16, us(300)}} {
		got, spread := d.fsyncTarget(tc.syncs)
		if diff := got - tc.want; diff < -time.Microsecond || diff > time.Microsecond {
			t.Errorf("%d syncs: median %s, want %s", tc.syncs, got, tc.want)
		}
		if spread <= 0 {
			t.Errorf("%d syncs: no spread", tc.syncs)
		}
	}
	if _, s := d.fsyncTarget(8); math.Abs(s-sigma(us(300), us(900))) > 1e-9 {
		t.Errorf("8 syncs: spread %g, want the point's %g", s, sigma(us(300), us(900)))
	}
	// Without points every count draws from the one-sync figure.
	flat := newDelays(Latency{Fsync: us(100)})
	if got, _ := flat.fsyncTarget(8); got != us(100) {
		t.Errorf("no points: 8 syncs take %s, want 100µs", got)
	}
	// beginSync counts each sync in flight until its end.
	_, end1 := d.beginSync()
	_, end2 := d.beginSync()
	if n := d.syncing.Load(); n != 2 {
		t.Errorf("%d syncs in flight, want 2", n)
	}
	end1()
	end2()
	if n := d.syncing.Load(); n != 0 {
		t.Errorf("%d syncs in flight after both ended, want 0", n)
	}
}
