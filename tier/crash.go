package tier

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/tier/emulate"
)

// CrashLayerNote is how a tier under the crash-capable layer is labelled:
// every read and write goes through a FUSE server, which costs what the
// report's throughput then includes.
const CrashLayerNote = "under the crash-capable layer (FUSE, every read and write through it, for crash: power)"

// PmemEmulatedNote is how a pmem_emulated tier is labelled: what it stands
// for, what its durability rests on and whose speed it has.
const PmemEmulatedNote = "persistent-memory-like: RAM under the crash-capable FUSE layer, durable only as far as that layer models it " +
	"(what an fsync covered survives tierbench's power cut, as a flush into PMEM's persistence domain does; a real power cut loses it all); " +
	"its speed is the FUSE layer's over RAM, not persistent memory's"

// Settle makes everything written so far on the named tiers' crash layers
// count as durable: what the kernel's writeback would have done long
// before a crash. Tiers without a layer are skipped.
func (w *Workspace) Settle(names []string) error {
	var errs []error
	for _, n := range names {
		if srv := w.prov.crashLayers[n]; srv != nil {
			errs = append(errs, srv.Settle())
		}
	}
	return errors.Join(errs...)
}

// PowerCut cuts the power of the named tiers' crash layers: from now on
// every operation on them fails, and each rolls its folder back to what
// was durable. It returns, by tier, what was lost. The engine is to be
// killed next, then PowerOn.
func (w *Workspace) PowerCut(names []string) (map[string]string, error) {
	lost, _, err := w.PowerCutModel(names, emulate.Model{})
	return lost, err
}

// CutSummary is what a model's cut did over its tiers, for the run's
// record.
type CutSummary struct {
	// AtomicWrite is, for the torn model, the smallest atomic-write unit
	// among the tiers' layers (0 otherwise).
	AtomicWrite int64
	// Unlogged is, for the reorder model, the writes lost whole because
	// their tier's write log was full.
	Unlogged int64
}

// PowerCutModel is PowerCut under power-loss model m (which unsynced data
// survives), drawn the same on every tier; it also says what the model
// did over the tiers.
func (w *Workspace) PowerCutModel(names []string, m emulate.Model) (map[string]string, CutSummary, error) {
	lost := map[string]string{}
	var sum CutSummary
	var errs []error
	for _, n := range names {
		srv := w.prov.crashLayers[n]
		if srv == nil {
			continue
		}
		l, err := srv.PowerCutModel(m)
		if err != nil {
			errs = append(errs, fmt.Errorf("tier %s: power cut: %w", n, err))
			continue
		}
		lost[n] = l.String()
		if l.AtomicWrite > 0 && (sum.AtomicWrite == 0 || l.AtomicWrite < sum.AtomicWrite) {
			sum.AtomicWrite = l.AtomicWrite
		}
		sum.Unlogged += l.Unlogged
	}
	return lost, sum, errors.Join(errs...)
}

// PowerOn ends the named tiers' power cut: their layers serve again, on
// the durable state.
func (w *Workspace) PowerOn(names []string) error {
	var errs []error
	for _, n := range names {
		if srv := w.prov.crashLayers[n]; srv != nil {
			if err := srv.PowerOn(); err != nil {
				errs = append(errs, fmt.Errorf("tier %s: power on: %w", n, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Wipe empties dir, a run folder on a tier that keeps nothing through a
// power loss (tmpfs, a RAM-backed loop device): what the power cut leaves
// of it. The folder itself stays, with its owner, for the restart to find.
func Wipe(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("wipe %s: %w", dir, err)
	}
	var errs []error
	for _, e := range ents {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("wipe %s: %w", dir, err)
	}
	return nil
}

// LostText joins what each tier lost, by tier name, for a run's record.
func LostText(lost map[string]string) string {
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(lost)) {
		parts = append(parts, n+": "+lost[n])
	}
	return strings.Join(parts, "; ")
}
