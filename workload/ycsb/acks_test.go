package ycsb

import (
	"hash/maphash"
	"testing"
)

// TestAckLogRule: a field may hold any write not made stale by an
// acknowledged write that began after it ended; holding anything else
// loses its latest acknowledged write.
func TestAckLogRule(t *testing.T) {
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
			l := newAckLog(1)
			open := map[string]pendingWrite{}
			for _, s := range c.steps {
				if s.begin != "" {
					open[s.begin] = l.begin(7, 0, []byte(s.begin))
					continue
				}
				l.end(open[s.end], s.ok)
			}
			fw := l.shards[7%ackShards].slots[7]
			for v, want := range c.holds {
				if got := fw.holds(maphash.Bytes(l.seed, []byte(v))); got != want {
					t.Errorf("holding %q: acceptable %v, want %v", v, got, want)
				}
			}
		})
	}
}
