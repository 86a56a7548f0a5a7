package engine

import "testing"

func TestPositiveOption(t *testing.T) {
	opts := map[string]string{"cache": "1024", "zero": "0", "unit": "64MiB"}
	if n, err := PositiveOption("x", opts, "cache", 7, "a size"); n != 1024 || err != nil {
		t.Errorf("set: %d, %v", n, err)
	}
	if n, err := PositiveOption("x", opts, "unset", 7, "a size"); n != 7 || err != nil {
		t.Errorf("default: %d, %v", n, err)
	}
	for _, name := range []string{"zero", "unit"} {
		_, err := PositiveOption("x", opts, name, 7, "a size")
		if want := "open x: option " + name + "=\"" + opts[name] + "\" must be a size"; err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", name, err, want)
		}
	}
}
