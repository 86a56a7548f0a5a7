package study

import (
	"fmt"
	"os"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/cgroupfs"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/probe"
	"github.com/tierbench/tierbench/tier/throttle"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload"
)

// Machine is what Preflight asks of the catalog: the engine and tool
// implementations, which know what they need installed (a tier's kind
// knows what it needs: tier.Kind.Preflight). A Machine that
// also names workloads (Workload(name) (workload.Spec, bool), as the
// catalog does) has the study's workload asked too.
type Machine interface {
	Engine(name string) (engine.Engine, bool)
	Tool(name string) (tool.Tool, bool)
}

// Preflight checks that this machine has what every run of a valid study
// needs, before anything is created: the engine's programs
// (engine.Preflighter), the workload's (workload.Preflighter), each standard
// tool driver's, fio for probe: quick or
// full, root and the tools of provisioned tiers, the space their images
// and the loaded data take, and of folder tiers the files the engine
// preallocates and whether its server's OS user can reach them
// (preflight_folders.go): what a run would find only when it starts.
// Parse judges the study file; Preflight judges the machine, so a study missing a server binary is refused once, with the
// command that installs it, instead of storing N runs failed with the same
// error. stateDir is where loop images with backing: disk go (tier.StateDir).
// It returns Problems, like Parse.
func Preflight(s *Study, m Machine, stateDir string) error {
	c := &preflight{s: s}
	if s.Kubernetes == nil {
		// On a cluster the engine, the tools and the workload's programs
		// run in the cluster's images, not here.
		c.engine(m)
		c.memory()
		c.tools(m)
		c.workload(m)
	}
	if s.Probe == ProbeQuick || s.Probe == ProbeFull {
		if err := probe.Available(); err != nil {
			c.addf(0, "probe: %s runs fio on every tier, and %v; install it or set probe: cached", s.Probe, err)
		}
	}
	c.provisioned(m)
	c.loopSpace(stateDir)
	c.folderSpace()
	c.engineFileSpace(m)
	c.reach(m)
	c.stateFolder(stateDir)
	if len(c.probs) > 0 {
		return c.probs
	}
	return nil
}

// preflight collects Preflight's problems.
type preflight struct {
	s     *Study
	probs Problems
}

// addf records a problem at line (0: about the whole study).
func (c *preflight) addf(line int, format string, args ...any) {
	c.probs = append(c.probs, Problem{File: c.s.File, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// engine asks the engine whether its programs are installed. A target
// study starts nothing, so it needs none of them.
func (c *preflight) engine(m Machine) {
	if c.s.Target != "" {
		return
	}
	e, ok := m.Engine(c.s.Engine)
	if !ok {
		return
	}
	if pf, ok := e.(engine.OptionsPreflighter); ok {
		seen := map[string]bool{}
		for _, v := range c.s.optionVariants() {
			o, err := c.s.EngineOptions(e.Spec(), v)
			if err == nil {
				err = pf.PreflightOptions(o)
			}
			if err != nil && !seen[err.Error()] {
				seen[err.Error()] = true
				c.addf(0, "engine %s cannot start on this machine: %v", c.s.Engine, err)
			}
		}
		return
	}
	if pf, ok := e.(engine.Preflighter); ok {
		if err := pf.Preflight(); err != nil {
			c.addf(0, "engine %s cannot start on this machine: %v", c.s.Engine, err)
		}
	}
}

// memory checks that a study with a memory limit on this machine has a
// memory cgroup controller to set it with.
func (c *preflight) memory() {
	if c.s.Target != "" || c.s.Kubernetes != nil {
		return
	}
	for _, v := range c.s.optionVariants() {
		if v.Memory > 0 {
			if _, err := cgroupfs.FindMemory(); err != nil {
				c.addf(0, "option memory needs a memory cgroup controller: %v", err)
			}
			return
		}
	}
}

// workload asks the study's workload, built from its parameters, whether
// its load can run here. The machine names workloads when it is the
// catalog; a workload Parse refused is not asked.
func (c *preflight) workload(m Machine) {
	wm, ok := m.(interface {
		Workload(name string) (workload.Spec, bool)
	})
	if !ok {
		return
	}
	spec, ok := wm.Workload(c.s.Workload.Name)
	if !ok || spec.New == nil {
		return
	}
	w, err := spec.Build(c.s.Workload.Params)
	if err != nil {
		return
	}
	if pf, ok := w.(workload.Preflighter); ok {
		if err := pf.Preflight(); err != nil {
			c.addf(0, "workload %s cannot load on this machine: %v", c.s.Workload.Name, err)
		}
	}
}

// tools asks each standard tool driver whether it is installed.
func (c *preflight) tools(m Machine) {
	for _, d := range c.s.Drivers {
		if tool.IsBuiltin(d) {
			continue
		}
		t, ok := m.Tool(d)
		if !ok || t.Preflight == nil {
			continue
		}
		if err := t.Preflight(); err != nil {
			c.addf(0, "driver %s cannot run on this machine: %v", d, err)
		}
	}
}

// provisioned checks what provisioning each tier needs: root to mount,
// mkfs and losetup for loop tiers, a real PMEM device, Ceph, rbd and
// rbd-fuse for rbd tiers, FUSE for latency, the crash-capable layer and
// pmem_emulated, and the block I/O controller for throttle.
func (c *preflight) provisioned(m Machine) {
	for _, t := range c.s.Tiers {
		if !t.Provisioned() {
			continue
		}
		abil := t.Abilities()
		if abil.Mounts && os.Geteuid() != 0 {
			fix := "{path: <folder>}"
			if abil.WithoutRoot != "" {
				fix = abil.WithoutRoot
			}
			c.addf(t.Line, "tier %q is mounted by tierbench, which needs root: run tierbench as root (sudo), or give the tier as %s", t.Name, fix)
			continue
		}
		err := t.TierKind().Preflight()
		if err == nil && abil.Layer == tier.LayerAlways {
			if err = emulate.Supported(); err != nil {
				err = fmt.Errorf("%s is RAM served through tierbench's power-loss layer, which cannot run here: %w; or use {path: /dev/shm/<folder>} (RAM, not durable)", t.TierKind().Key(), err)
			}
		}
		if err == nil && (t.Stack.Latency != nil || t.Stack.CrashLayer) {
			err = emulate.Supported()
		}
		if err == nil && t.Stack.Throttle != nil {
			err = throttle.Supported()
		}
		if err != nil {
			c.addf(t.Line, "tier %q: %v", t.Name, err)
		}
	}
}

// loopSpace refuses loop tiers whose images do not fit where they are
// created: the images are allocated in full when the study starts, so
// together they must fit the free space of /dev/shm (backing: ram) or of
// the state folder's filesystem (backing: disk).
func (c *preflight) loopSpace(stateDir string) {
	for _, backing := range []string{"ram", "disk"} {
		var names []string
		var need int64
		line := 0
		for _, t := range c.s.Tiers {
			a, ok := t.Kind.(tier.Allocated)
			if !ok {
				continue
			}
			if inRAM, bytes := a.Allocates(); inRAM == (backing == "ram") {
				names = append(names, t.Name)
				need += bytes
				if line == 0 {
					line = t.Line
				}
			}
		}
		if need == 0 {
			continue
		}
		dir := tier.ImageDir(stateDir, backing)
		free, _, err := tier.FreeBytes(dir)
		if err != nil {
			c.addf(line, "loop tiers with backing: %s: %v", backing, err)
			continue
		}
		if need > free {
			what := fmt.Sprintf("tier %q (backing: %s) needs %s for its image file", names[0], backing, humanize.IBytes(uint64(need)))
			if len(names) > 1 {
				what = fmt.Sprintf("tiers %s (backing: %s) together need %s for their image files", strings.Join(names, ", "), backing, humanize.IBytes(uint64(need)))
			}
			c.addf(line, "loop %s in %s, which has %s free; make the tier smaller%s, or free space in %s",
				what, dir, humanize.IBytes(uint64(free)), otherBacking(backing, stateDir), dir)
		}
	}
}

// otherBacking suggests the other backing, with its free space.
func otherBacking(backing, stateDir string) string {
	other := map[string]string{"ram": "disk", "disk": "ram"}[backing]
	dir := tier.ImageDir(stateDir, other)
	free, _, err := tier.FreeBytes(dir)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(", use backing: %s (%s has %s free)", other, dir, humanize.IBytes(uint64(free)))
}

// folderSpace refuses a folder tier whose filesystem has less free space
// than the data a placement puts on it (the workload's lower bound).
func (c *preflight) folderSpace() {
	need := c.s.Workload.EstimatedBytes
	if need <= 0 || c.s.Target != "" || c.s.DataComponent == "" {
		return
	}
	done := map[string]bool{}
	for _, pl := range c.s.Placements {
		name, ok := pl.Components[c.s.DataComponent]
		if !ok || done[name] {
			continue
		}
		done[name] = true
		t, ok := c.s.Tier(name)
		if !ok || t.Path == "" {
			continue
		}
		free, at, err := tier.FreeBytes(t.Path)
		if err != nil {
			c.addf(t.Line, "tier %q: %v", name, err)
			continue
		}
		if free < need {
			c.addf(t.Line, "tier %q has %s free (%s), less than the data placement %q puts on it: workload %s loads at least %s; free space there, choose another folder or load a smaller data set",
				name, humanize.IBytes(uint64(free)), at, pl.Name, c.s.Workload.Name, humanize.IBytes(uint64(need)))
		}
	}
}
