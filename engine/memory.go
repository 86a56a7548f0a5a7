package engine

// MemoryGroup is a memory cgroup a server's processes start in (package
// cgroupfs's MemoryGroup, made by the runner for a study's memory
// setting, which no engine reads: the limit is the runner's to apply).
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
// sum of its options marked Memory (caches, heaps).
func (s Spec) MemoryNeedOf(o Options) (int64, []string) {
	if s.MemoryNeed != nil {
		return s.MemoryNeed(o)
	}
	var need int64
	var what []string
	for _, d := range s.Options {
		if d.Memory && o.Has(d.Name) {
			need += o.Size(d.Name)
			what = append(what, d.Name)
		}
	}
	return need, what
}
