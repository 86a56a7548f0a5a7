package pebble

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
)

// TestFlushAndCompactionEvents writes records, flushes and compacts a
// real Pebble, and finds both among its events, with their bytes.
func TestFlushAndCompactionEvents(t *testing.T) {
	d, _, _ := openTest(t, engine.NoSync)
	ctx := context.Background()
	from := time.Now()
	s := &Session{d: d}
	value := []byte(strings.Repeat("v", 100))
	for i := range 3000 {
		if err := s.Insert(ctx, []byte(fmt.Sprintf("user%06d", i)), [][]byte{value}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.db.Compact(ctx, []byte("user"), []byte("user999999"), true); err != nil {
		t.Fatal(err)
	}
	kinds := map[string][]engine.Event{}
	for _, e := range d.Events(ctx, from, time.Now()) {
		kinds[e.Kind] = append(kinds[e.Kind], e)
	}
	for _, c := range []struct{ kind, detail string }{
		{engine.EventFlush, " memtable(s) of "},
		{engine.EventCompaction, " -> L"},
	} {
		es := kinds[c.kind]
		if len(es) == 0 {
			t.Errorf("no %s among the events: %+v", c.kind, kinds)
			continue
		}
		for _, e := range es {
			if !strings.Contains(e.Detail, c.detail) || e.At.Before(from) || e.Duration < 0 {
				t.Errorf("%s event %+v", c.kind, e)
			}
		}
		t.Logf("%s: %s (%s)", c.kind, es[0].Detail, es[0].Duration)
	}
	if before := d.Events(ctx, from.Add(-time.Hour), from.Add(-time.Minute)); len(before) != 0 {
		t.Errorf("events before the writes: %+v", before)
	}
}
