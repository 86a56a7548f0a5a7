package emulate

import (
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
	lat := Latency{Read: time.Millisecond, ReadP99: 3 * time.Millisecond, Fsync: 2 * time.Millisecond, FsyncP99: 5 * time.Millisecond, DirectWrites: true}
	cmd := helperCommand("/b", "/m", lat, Options{}, nil)
	cfg, err := parseHelperArgs(cmd.Args[2:])
	if err != nil {
		t.Fatal(err)
	}
	if cfg.lat != lat {
		t.Fatalf("helper got %+v, want %+v", cfg.lat, lat)
	}
}
