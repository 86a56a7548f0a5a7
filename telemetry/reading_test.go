package telemetry

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/tier"
)

// TestOnSampleHandsOutEverySample: the readings handed to OnSample as they
// are taken hold, in order, every sample the report ends with: host,
// engine and, where the tier has a device, disk.
func TestOnSampleHandsOutEverySample(t *testing.T) {
	dir := t.TempDir()
	info, err := tier.Inspect("tmp", dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var host, engine []float64
	disk := map[string][]float64{}
	devices := map[string]string{}
	s, err := Start(context.Background(), Config{
		Tiers:    map[string]string{"disk": info.Device, "ram": "tmpfs"},
		PID:      os.Getpid(),
		Interval: testInterval,
		OnSample: func(r Reading) {
			mu.Lock()
			defer mu.Unlock()
			if r.Host != nil {
				host = append(host, r.Host.T)
			}
			if r.Engine != nil {
				engine = append(engine, r.Engine.T)
			}
			for tier, x := range r.Tiers {
				disk[tier] = append(disk[tier], x.T)
				devices[tier] = x.Device
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	writeAndSync(t, dir, 8<<20)
	time.Sleep(4 * testInterval)
	r := s.Stop()
	mu.Lock()
	defer mu.Unlock()
	times := func(n int, at func(int) float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = at(i)
		}
		return out
	}
	for name, c := range map[string]struct{ got, want []float64 }{
		"host":   {host, times(len(r.Host), func(i int) float64 { return r.Host[i].T })},
		"engine": {engine, times(len(r.Engine), func(i int) float64 { return r.Engine[i].T })},
		"disk":   {disk["disk"], times(len(r.Tiers["disk"]), func(i int) float64 { return r.Tiers["disk"][i].T })},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: readings at %v, the report's samples at %v", name, c.got, c.want)
		}
	}
	if len(host) < 2 || len(engine) < 2 {
		t.Errorf("%d host and %d engine readings, want several", len(host), len(engine))
	}
	if _, ok := disk["ram"]; ok {
		t.Errorf("the tmpfs tier, without a device, had readings: %v", disk["ram"])
	}
	if strings.HasPrefix(info.Device, "/dev/") && (len(disk["disk"]) == 0 || devices["disk"] != r.Summary.Tiers["disk"].Device) {
		t.Errorf("disk readings %v on device %q; the report's device %q", disk["disk"], devices["disk"], r.Summary.Tiers["disk"].Device)
	}
}
