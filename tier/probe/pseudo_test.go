package probe

import (
	"context"
	"errors"
	"testing"
)

// TestProbeRefusesPseudoFilesystems checks that /proc and /sys are refused
// as not storage, never measured or called durable.
func TestProbeRefusesPseudoFilesystems(t *testing.T) {
	for _, p := range []string{"/proc", "/sys"} {
		got, err := Probe(context.Background(), p, Options{Quick: true})
		if !errors.Is(err, ErrNotStorage) {
			t.Errorf("Probe(%s) error = %v, want ErrNotStorage", p, err)
		}
		if got.Durable || got.Fio != nil {
			t.Errorf("Probe(%s) = durable %v, fio %v; want neither", p, got.Durable, got.Fio)
		}
	}
}
