package tool

import "testing"

func TestBuiltinLanes(t *testing.T) {
	for _, tc := range []struct {
		d       string
		lanes   int
		set, ok bool
	}{
		{"builtin", 0, false, true},
		{"builtin:lanes=0", 0, true, true},
		{"builtin:lanes=2", 2, true, true},
		{"builtin:lanes=64", 64, true, true},
		{"builtin:lanes=65", 0, false, false},
		{"builtin:lanes=-1", 0, false, false},
		{"builtin:lanes=02", 0, false, false},
		{"builtin:lanes=", 0, false, false},
		{"builtin:threads=2", 0, false, false},
	} {
		lanes, set, err := BuiltinLanes(tc.d)
		if lanes != tc.lanes || set != tc.set || (err == nil) != tc.ok {
			t.Errorf("BuiltinLanes(%q) = %d, %v, %v", tc.d, lanes, set, err)
		}
		if !IsBuiltin(tc.d) {
			t.Errorf("IsBuiltin(%q) = false", tc.d)
		}
	}
	if IsBuiltin("pgbench") || IsBuiltin("builtinx") {
		t.Error("IsBuiltin takes a tool for the builtin driver")
	}
}
