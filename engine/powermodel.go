package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// PowerModel is one way a power cut can treat the data a tier had not made
// durable (a study's crash: {power: torn}): the crash-capable layer's
// models (tier/emulate's Model), described here for the study's checks,
// the run's record and the reports' labels.
type PowerModel struct {
	// Name is how a study writes it; "" is plain power.
	Name string
	// Unit names what the model keeps or loses whole.
	Unit string
	// Does and DoesNot say what the model models and what it leaves out,
	// for show, the report and docs/crash-runs.md.
	Does, DoesNot string
}

// Power-loss models' names, as a study and tier/emulate write them.
const (
	PowerSurvive = "survive"
	PowerTorn    = "torn"
	PowerReorder = "reorder"
)

// PowerModels lists the models of a power cut, plain power first.
var PowerModels = []PowerModel{
	{Name: "", Unit: "file",
		Does:    "every write not made durable by an fsync is lost (LazyFS's lose-unfsynced-writes)",
		DoesNot: "no write-back before the cut, no torn or reordered writes"},
	{Name: PowerSurvive, Unit: "4 KiB page",
		Does:    "each page overwritten since its file's last fsync is kept with the given probability, independently: write-back got part of the way, in no order",
		DoesNot: "growth past a file's durable size and directory changes are still lost; no page is torn inside; no reordering across an fsync"},
	{Name: PowerTorn, Unit: "atomic-write unit",
		Does:    "each atomic-write unit (aligned in the file) of data overwritten since its file's last fsync is kept with the given probability (0.5 unless given), independently: a write larger than the unit can be part new, part old",
		DoesNot: "no partial writes inside a unit (so none below 512 B); growth past a file's durable size and directory changes are still lost; no reordering across an fsync"},
	{Name: PowerReorder, Unit: "write",
		Does:    "each write made to a file since its last fsync is kept whole with the given probability (0.5 unless given), independently, and the kept ones land in their original order over the durable bytes: any subset of the writes between two flushes, as some order of persisting them leaves it (CrashMonkey and ACE, ALICE, LazyFS's torn sequences)",
		DoesNot: "no reordering across an fsync; no write torn inside (a write over 1 MiB reaches the layer, and is kept or lost, in 1 MiB pieces); growth past a file's durable size, other size changes, fallocate's punched or zeroed ranges and directory changes are still lost; writes through O_SYNC or O_DSYNC (and O_DIRECT, unless write_cache: volatile) are durable when they return; past 256 MiB of unsynced writes logged per tier, further writes are lost whole (the run records how many; the report says so)"},
}

// DefaultKeep is the probability a model keeps a unit with when the study
// gives none.
const DefaultKeep = 0.5

// FindPowerModel returns the model named name.
func FindPowerModel(name string) (PowerModel, bool) {
	for _, m := range PowerModels {
		if m.Name == name {
			return m, true
		}
	}
	return PowerModel{}, false
}

// PowerModelNames are the models a study can name.
func PowerModelNames() []string {
	var out []string
	for _, m := range PowerModels[1:] {
		out = append(out, m.Name)
	}
	return out
}

// CrashValue is the crash axis value of a power cut under model name,
// keeping units with probability keep: "power:torn",
// "power:survive=0.3"; plain "power" for no model.
func CrashValue(name string, keep float64) string {
	switch {
	case name == "":
		return CrashPower
	case keep == DefaultKeep || keep == 0:
		return CrashPower + ":" + name
	}
	return CrashPower + ":" + name + "=" + strconv.FormatFloat(keep, 'g', -1, 64)
}

// SplitCrash reads a crash axis value: its kind, and for a power cut
// its model's name ("" for plain power) and the probability it keeps a
// unit with.
func SplitCrash(value string) (kind CrashKind, model string, keep float64, err error) {
	k, ok := FindCrash(value)
	if !ok {
		return CrashKind{}, "", 0, fmt.Errorf("unknown crash %q", value)
	}
	_, rest, has := strings.Cut(value, ":")
	if !has {
		return k, "", 0, nil
	}
	name, p, hasP := strings.Cut(rest, "=")
	if _, ok := FindPowerModel(name); !ok || name == "" || k.Name != CrashPower {
		return CrashKind{}, "", 0, fmt.Errorf("unknown power-loss model in %q", value)
	}
	keep = DefaultKeep
	if hasP {
		if keep, err = strconv.ParseFloat(p, 64); err != nil || !(keep > 0 && keep < 1) {
			return CrashKind{}, "", 0, fmt.Errorf("power-loss model %q: the probability must be above 0 and below 1", value)
		}
	}
	return k, name, keep, nil
}

// ModelLabel says which model a crash value names and what it does and
// does not model, for show and the report: "" for a crash that is not a
// power cut.
func ModelLabel(value string) string {
	k, name, keep, err := SplitCrash(value)
	if err != nil || !k.Machine {
		return ""
	}
	m, _ := FindPowerModel(name)
	label := "plain power"
	if name != "" {
		label = fmt.Sprintf("%s (each %s kept with probability %g)", name, m.Unit, keep)
	}
	return fmt.Sprintf("%s: %s; not modelled: %s", label, m.Does, m.DoesNot)
}
