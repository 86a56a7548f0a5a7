package radosload

import (
	"context"
	"errors"
	"reflect"
	"strconv"
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
		{"bad mode", map[string]string{"mode": "read"}, Settings{}, nil,
			`mode "read" is not one of rados bench's; write mode: write, seq or rand`},
		{"not a size", map[string]string{"object_size": "big"}, Settings{}, nil,
			`option object_size "big" is not a size; write a byte count such as 64MiB, 512KiB or 1GB`},
		{"zero size", map[string]string{"object_size": "0"}, Settings{}, nil,
			`option object_size must be more than 0 bytes, got "0"; write e.g. object_size: 64MiB`},
		{"too large", map[string]string{"object_size": "128MiB"}, Settings{}, nil,
			`object_size "128MiB" is more than 64MiB, beyond what an OSD takes in one write (osd_max_write_size); write a smaller size`},
		{"objects with write", map[string]string{"objects": "100"}, Settings{}, nil,
			"objects sizes the write pass before seq and rand read; mode write writes new objects for the whole run: remove objects or set mode: seq or rand"},
		{"objects zero", map[string]string{"mode": "rand", "objects": "0"}, Settings{}, nil,
			`objects "0": must be a whole number from 1 to 1073741824`},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := New(c.overrides)
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
			if got := w.Params()["object_size"]; got == "" || got != itoa(c.want.ObjectSize) {
				t.Errorf("params object_size = %q, want %d bytes", got, c.want.ObjectSize)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestNoClientsOfItsOwn: tierbench's driver cannot run it, and an engine
// that is not an object store is refused at the load.
func TestNoClientsOfItsOwn(t *testing.T) {
	w, err := New(nil)
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
