package cachekv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
)

func TestSpecs(t *testing.T) {
	byName := map[string]workload.Spec{}
	for _, s := range Specs() {
		byName[s.Name] = s
	}
	for name, want := range map[string]struct {
		ops     string
		preload int64
	}{"puts": {"[put]", 0}, "gets": {"[get]", 1000000}, "putget": {"[put get]", 1000000}} {
		w, err := byName[name].Build(nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cw := w.(*Workload)
		if fmt.Sprint(w.Ops()) != want.ops || cw.preload != want.preload || cw.work.Keys != 1000000 || cw.work.ValueSize != 1024 {
			t.Errorf("%s: ops %v, preload %d, keys %d, value %d", name, w.Ops(), cw.preload, cw.work.Keys, cw.work.ValueSize)
		}
	}
	for _, tc := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"keys": "0"}, "keys 0 is out of range: it must be at least 1"},
		{map[string]string{"keys": "x"}, `keys "x" is not a whole number`},
		{map[string]string{"value_size": "0"}, "value_size 0 is out of range: it must be from 1 to 16MiB"},
		{map[string]string{"value_size": "17MiB"}, "value_size 17MiB is out of range: it must be from 1 to 16MiB"},
		{map[string]string{"preload": "some"}, `preload "some" is not a whole number`},
		{map[string]string{"preload": "-1"}, "preload -1 is out of range: it must be at least 0, or all or none"},
		{map[string]string{"keys": "10", "preload": "11"}, "workload puts: preload 11 is more than keys (10): write all, none or a number of keys from 0 to 10"},
	} {
		if _, err := byName["puts"].Build(tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.params, err, tc.want)
		}
	}
	for _, s := range Specs() {
		for _, p := range s.Params {
			if err := p.Check(); err != nil {
				t.Errorf("%s: %v", s.Name, err)
			}
		}
	}
	// A value size may be written as a size; preload none and 0 are the same.
	w, err := byName["puts"].Build(map[string]string{"value_size": "4KiB", "preload": "0"})
	if err != nil || w.(*Workload).work.ValueSize != 4096 || w.(*Workload).preload != 0 {
		t.Errorf("value_size 4KiB: %v, %v", w, err)
	}
	w, _ = byName["gets"].Build(map[string]string{"keys": "10", "preload": "5"})
	if w.(*Workload).preload != 5 || w.(*Workload).work.ValueSize != 1024 {
		t.Errorf("gets with preload 5: %+v", w)
	}
}

// otherDB is an engine without the Cache ability.
type otherDB struct{}

func (otherDB) NewSession(context.Context) (engine.Session, error) { return nil, nil }
func (otherDB) Version() string                                    { return "" }
func (otherDB) Close() error                                       { return nil }

// fakeCache returns result as the engine's client would have measured it,
// and records what it was asked to run.
type fakeCache struct {
	otherDB
	result  *driver.Result
	work    engine.CacheWork
	cfg     driver.Config
	clients int
}

func (f *fakeCache) Preload(_ context.Context, keys int64, _ int) (int64, error) { return keys, nil }

func (f *fakeCache) DriveCache(_ context.Context, work engine.CacheWork, cfg driver.Config, clients int) (*driver.Result, error) {
	f.work, f.cfg, f.clients = work, cfg, clients
	return f.result, nil
}

func TestOtherEngines(t *testing.T) {
	w, _ := Specs()[0].Build(nil)
	if _, err := w.Load(context.Background(), otherDB{}, 1); !errors.Is(err, engine.ErrNoModel) || !strings.Contains(err.Error(), "runs on engine ignite only") {
		t.Errorf("Load on redis: %v", err)
	}
	if _, err := w.NewClient(0, nil); err == nil {
		t.Error("NewClient succeeded")
	}
	if _, err := w.(workload.Delegated).External(otherDB{}); !errors.Is(err, engine.ErrNoModel) || !strings.Contains(err.Error(), "ignite only") {
		t.Errorf("External on redis: %v", err)
	}
}

func TestDrive(t *testing.T) {
	spec := Specs()[2] // putget
	w, _ := spec.Build(map[string]string{"keys": "100", "value_size": "64"})
	f := &fakeCache{result: &driver.Result{Measured: driver.PhaseResult{Ops: 8, Length: time.Second}}}
	ls, err := w.Load(context.Background(), f, 4)
	if err != nil || ls.Records != 100 {
		t.Fatalf("load: %+v, %v", ls, err)
	}
	ext, err := w.(workload.Delegated).External(f)
	if err != nil {
		t.Fatal(err)
	}
	cfg := driver.Config{Ops: w.Ops(), Warmup: 2 * time.Second, Duration: 3 * time.Second}
	res, err := ext.Drive(context.Background(), cfg, 16)
	if err != nil {
		t.Fatal(err)
	}
	if res.Measured.Ops != 8 || res.Measured.Throughput() != 8 {
		t.Errorf("measured %+v", res.Measured)
	}
	if w := f.work; w.Mix != engine.CachePutGet || w.Keys != 100 || w.ValueSize != 64 || w.OnWrite != nil || f.clients != 16 ||
		f.cfg.Warmup != 2*time.Second || f.cfg.Duration != 3*time.Second || fmt.Sprint(f.cfg.Ops) != "[put get]" {
		t.Errorf("work %+v, %d clients, config %+v", f.work, f.clients, f.cfg)
	}
	cfg.TargetRate = 1000
	if _, err := ext.Drive(context.Background(), cfg, 16); err == nil || !strings.Contains(err.Error(), "open loop is not supported") {
		t.Errorf("open loop: %v", err)
	}
}
