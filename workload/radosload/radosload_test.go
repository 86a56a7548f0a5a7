package radosload

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

func TestNew(t *testing.T) {
	for _, c := range []struct {
		name      string
		overrides map[string]string
		want      Settings
		ops       []string
		err       string
	}{
		{"defaults", nil, Settings{ObjectSize: 4096, Mode: Write, Objects: 2000}, []string{"write"}, ""},
		{"size with a unit", map[string]string{"object_size": "4MiB", "mode": "rand"}, Settings{ObjectSize: 4 << 20, Mode: Rand, Objects: 2000}, []string{"read"}, ""},
		{"seq with objects", map[string]string{"mode": "seq", "objects": "500"}, Settings{ObjectSize: 4096, Mode: Seq, Objects: 500}, []string{"read"}, ""},
		{"largest size", map[string]string{"object_size": "64MiB", "mode": "seq"}, Settings{ObjectSize: 64 << 20, Mode: Seq, Objects: 2000}, []string{"read"}, ""},
		{"bad mode", map[string]string{"mode": "read"}, Settings{}, nil,
			`workload rados: mode "read" must be write, seq or rand`},
		{"not a size", map[string]string{"object_size": "big"}, Settings{}, nil,
			`workload rados: object_size "big" is not a size; write e.g. object_size: 4096`},
		{"zero size", map[string]string{"object_size": "0"}, Settings{}, nil,
			`workload rados: object_size 0 is out of range: it must be from 1B to 64MiB; write e.g. object_size: 4096`},
		{"too large", map[string]string{"object_size": "128MiB"}, Settings{}, nil,
			`workload rados: object_size 128MiB is out of range: it must be from 1B to 64MiB; write e.g. object_size: 4096`},
		{"objects with write", map[string]string{"objects": "100"}, Settings{}, nil,
			"workload rados: objects sizes the write pass before seq and rand read; mode write writes new objects for the whole run: remove objects or set mode: seq or rand"},
		{"objects zero", map[string]string{"mode": "rand", "objects": "0"}, Settings{}, nil,
			`workload rados: objects 0 is out of range: it must be from 1 to 1073741824; write e.g. objects: 1`},
		{"objects too many", map[string]string{"mode": "rand", "objects": "1073741825"}, Settings{}, nil,
			`workload rados: objects 1073741825 is out of range: it must be from 1 to 1073741824; write e.g. objects: 1`},
		{"objects not a number", map[string]string{"mode": "seq", "objects": "lots"}, Settings{}, nil,
			`workload rados: objects "lots" is not a whole number; write e.g. objects: 1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ww, err := Spec().Build(c.overrides)
			w, _ := ww.(*Workload)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("New: %v\nwant %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w.Settings() != c.want || !reflect.DeepEqual(w.Ops(), c.ops) {
				t.Errorf("settings %+v ops %v, want %+v %v", w.Settings(), w.Ops(), c.want, c.ops)
			}
		})
	}
}

// TestNoClientsOfItsOwn: tierbench's driver cannot run it, and an engine
// that is not an object store is refused at the load.
func TestNoClientsOfItsOwn(t *testing.T) {
	w, err := Spec().Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.NewClient(0, nil); err == nil {
		t.Error("NewClient succeeded; only driver rados-bench runs the workload")
	}
	if _, err := w.Load(context.Background(), nil, 1); !errors.Is(err, engine.ErrNoModel) {
		t.Errorf("Load on no object store: %v, want ErrNoModel", err)
	}
	if s := Spec(); s.Driver != Driver || s.Model != engine.ModelObjects {
		t.Errorf("spec driver %q model %q", s.Driver, s.Model)
	}
}

// TestParamsCheck: every declared parameter is a setting that can work.
func TestParamsCheck(t *testing.T) {
	for _, p := range Spec().Params {
		if err := p.Check(); err != nil {
			t.Error(err)
		}
	}
}
