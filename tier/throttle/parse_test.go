package throttle

import (
	"testing"

	"github.com/tierbench/tierbench/host/cgroupfs"
)

func TestLimitsString(t *testing.T) {
	got := Limits{ReadIOPS: 200, WriteBPS: 4 << 20}.String()
	if want := "riops=200 wiops=max rbps=max wbps=4194304"; got != want {
		t.Errorf("io.max limits = %q, want %q", got, want)
	}
	if err := (Limits{WriteIOPS: -1}).validate(); err == nil {
		t.Error("negative limit accepted")
	}
}

func TestValidName(t *testing.T) {
	for _, n := range []string{"", ".", "..", "a/b", cgroupfs.LeafName} {
		if validName(n) == nil {
			t.Errorf("name %q accepted", n)
		}
	}
	if err := validName("tierbench-s1-slow"); err != nil {
		t.Error(err)
	}
}
