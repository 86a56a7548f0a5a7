package study

import (
	"slices"
	"strconv"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
)

// Memory is the run setting memory: the engine's whole memory, page cache
// included. A study writes it among the engine's options (options:
// {memory: 512MiB}) and may sweep it like them, but no engine reads it: the
// runner starts the engine's processes in a memory cgroup with this limit
// (engine.Config.Memory), or on a cluster makes it the engine container's
// memory request and limit. An engine's own caches stay options of its own
// and must fit inside it.
var Memory = setting.Setting{
	Name: "memory", Kind: setting.Size, Memory: true, Min: "64MiB",
	Doc: "the engine's whole memory, page cache included: its processes run in a memory cgroup with this limit (on a cluster, the container's memory request and limit); unset: no limit",
	Why: "below it a server does not start",
}

// OptionSettings are what a study may write under options: for an engine:
// its options, and memory for a server, whose processes the runner can
// bound (an engine inside tierbench's own process has none).
func OptionSettings(spec engine.Spec) []setting.Setting {
	if spec.InProcess {
		return spec.Options
	}
	return append(slices.Clip(spec.Options), Memory)
}

// memoryIn is the memory limit in bytes of a run of the study's given
// settings (fixed and swept, in normal form), 0 for none: the one place
// the study's memory text becomes a size (Variant.Memory).
func memoryIn(settings map[string]string) int64 {
	n, _ := strconv.ParseInt(settings[Memory.Name], 10, 64)
	return n
}
