package engine

import "github.com/tierbench/tierbench/setting"

// MemoryOption is the option every server engine declares: the engine's
// whole memory, page cache included, as a container's memory limit
// bounds it. Its processes start in a memory cgroup with this limit
// (Config.Memory); on a Kubernetes cluster it is the engine container's
// memory request and limit. An engine's own caches (a buffer pool, a JVM
// heap) stay options of their own, and must fit inside it.
var MemoryOption = setting.Setting{
	Name: "memory", Kind: setting.Size, Memory: true, Min: "64MiB",
	Doc: "the engine's whole memory, page cache included: its processes run in a memory cgroup with this limit (on a cluster, the container's memory request and limit); unset: no limit",
	Why: "below it a server does not start",
}

// MemoryGroup is a memory cgroup a server's processes start in (package
// cgroupfs's MemoryGroup, made by the runner).
type MemoryGroup interface {
	// Command wraps a program so the process joins the group before it
	// runs; what it forks later is in the group too.
	Command(path string, args []string) (string, []string)
	// Delegate lets processes of uid and gid move themselves in.
	Delegate(uid, gid int) error
	// Limit is the group's memory limit in bytes.
	Limit() int64
}

// MemoryNeedOf is what an engine's own settings hold in memory under the
// given options, and the options that say so: Spec.MemoryNeed, or else the
// sum of its options marked Memory (caches, heaps) except memory itself.
func (s Spec) MemoryNeedOf(options map[string]string) (int64, []string) {
	if s.MemoryNeed != nil {
		return s.MemoryNeed(options)
	}
	o, err := s.ResolveOptions(options)
	if err != nil {
		return 0, nil
	}
	var need int64
	var what []string
	for _, d := range s.Options {
		if d.Memory && d.Name != MemoryOption.Name && o.Has(d.Name) {
			need += o.Size(d.Name)
			what = append(what, d.Name)
		}
	}
	return need, what
}
