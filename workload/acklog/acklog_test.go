package acklog

import (
	"errors"
	"testing"
	"time"
)

// TestRule: a slot may hold any write not made stale by an acknowledged
// write that began after it ended; holding anything else loses its latest
// acknowledged write.
func TestRule(t *testing.T) {
	type step struct {
		begin string // a value to begin writing, or
		end   string // the value whose write ends
		ok    bool   // acknowledged
	}
	cases := []struct {
		name  string
		steps []step
		holds map[string]bool // value -> acceptable survivor
	}{
		{"one acknowledged", []step{{begin: "a"}, {end: "a", ok: true}},
			map[string]bool{"a": true, "x": false}},
		{"a later write makes it stale", []step{{begin: "a"}, {end: "a", ok: true}, {begin: "b"}, {end: "b", ok: true}},
			map[string]bool{"a": false, "b": true}},
		{"overlapping writes may land in either order", []step{{begin: "a"}, {begin: "b"}, {end: "a", ok: true}, {end: "b", ok: true}},
			map[string]bool{"a": true, "b": true}},
		{"a write cut by the crash may have landed", []step{{begin: "a"}, {end: "a", ok: true}, {begin: "b"}, {end: "b", ok: false}},
			map[string]bool{"a": true, "b": true}},
		{"a failed write stays possible after later ones", []step{{begin: "a"}, {end: "a", ok: false}, {begin: "b"}, {end: "b", ok: true}},
			map[string]bool{"a": true, "b": true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := New()
			open := map[string]Pending{}
			for _, s := range c.steps {
				if s.begin != "" {
					open[s.begin] = l.Begin(7, []byte(s.begin))
					continue
				}
				l.End(open[s.end], s.ok)
			}
			for v, want := range c.holds {
				if got := l.Holds(7, []byte(v)); got != want {
					t.Errorf("holding %q: acceptable %v, want %v", v, got, want)
				}
			}
		})
	}
}

// TestCheck: Check reads the slots with an acknowledged write in order,
// counts the lost ones (a changed or a missing value) and says when the
// oldest lost one was acknowledged; a read error stops it.
func TestCheck(t *testing.T) {
	l := New()
	for slot, v := range map[int64]string{3: "c", 1: "a", 2: "b"} {
		l.End(l.Begin(slot, []byte(v)), true)
	}
	l.End(l.Begin(4, []byte("never acknowledged")), false)
	stored := map[int64][]byte{1: []byte("a"), 2: []byte("stale")} // 3 is gone
	var order []int64
	res, err := l.Check(func(slot int64) ([]byte, error) {
		order = append(order, slot)
		return stored[slot], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Checked != 3 || res.Lost != 2 || res.OldestLost.IsZero() || res.First.IsZero() {
		t.Errorf("result %+v, want 3 checked, 2 lost", res)
	}
	if len(order) != 3 || order[0] != 1 || order[1] != 2 || order[2] != 3 {
		t.Errorf("read slots %v, want 1 2 3", order)
	}
	boom := errors.New("boom")
	if _, err := l.Check(func(int64) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("err %v, want the read's", err)
	}
}

// TestAdd: writes another process reported, in any order, are judged as
// if they had been recorded as they happened.
func TestAdd(t *testing.T) {
	l := New()
	at := func(ms int) time.Time { return l.base.Add(time.Duration(ms) * time.Millisecond) }
	// Slot 1: "new" began after "old" was acknowledged; reported first.
	l.Add(1, []byte("new"), at(30), at(40), true)
	l.Add(1, []byte("old"), at(10), at(20), true)
	// Slot 2: an acknowledged write and one whose outcome is unknown.
	l.Add(2, []byte("acked"), at(10), at(20), true)
	l.Add(2, []byte("maybe"), at(30), time.Time{}, false)
	cases := []struct {
		slot  int64
		value string
		holds bool
	}{
		{1, "new", true},
		{1, "old", false},
		{2, "acked", true},
		{2, "maybe", true},
		{2, "other", false},
	}
	for _, c := range cases {
		if got := l.Holds(c.slot, []byte(c.value)); got != c.holds {
			t.Errorf("slot %d holding %q: %v, want %v", c.slot, c.value, got, c.holds)
		}
	}
	if got := l.Slots(); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("slots %v, want [1 2]", got)
	}
}
