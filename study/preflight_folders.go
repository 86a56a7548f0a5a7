package study

// This file holds the checks of folders that a run would otherwise make
// only when it starts: whether the server's OS user can reach the folder
// tiers, whether they hold the files the engine preallocates, and whether
// tierbench's state folder can be made. validate makes them too, so a
// study validate accepts does not fail at its start.

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/reach"
	"github.com/tierbench/tierbench/tier"
)

// folderTiers are the study's tiers that placements use and that are
// folders of the user's (path:, unprovisioned), in study order.
func (c *preflight) folderTiers() []Tier {
	used := map[string]bool{}
	for _, pl := range c.s.Placements {
		for _, name := range pl.Components {
			used[name] = true
		}
	}
	var out []Tier
	for _, t := range c.s.Tiers {
		if used[t.Name] && t.Path != "" && !t.Provisioned() {
			out = append(out, t)
		}
	}
	return out
}

// reach checks, as the OS user a server engine runs as
// (engine.ServerUser), that it can enter each folder tier a placement
// uses, or the parent folder a missing tier is made in: the run folders
// inside are given to that user, and a parent closed to it (a home folder
// of mode 0700) would fail every run when its server starts.
func (c *preflight) reach(m Machine) {
	if c.s.Target != "" || c.s.Kubernetes != nil {
		return
	}
	e, ok := m.Engine(c.s.Engine)
	if !ok {
		return
	}
	su, ok := e.(engine.ServerUser)
	if !ok {
		return
	}
	label, user := su.ServerUser()
	if user == "" {
		return
	}
	for _, t := range c.folderTiers() {
		dir := t.Path
		if _, err := os.Stat(dir); err != nil {
			dir = filepath.Dir(dir)
		}
		if err := reach.CheckEnterable(context.Background(), label, user, dir); err != nil {
			c.addf(t.Line, "tier %q: %s", t.Name, strings.TrimSuffix(err.Error(), ": "+reach.ErrUnreachable.Error()))
		}
	}
}

// engineFileSpace refuses a folder tier whose filesystem has less free
// space than the files the engine preallocates there
// (engine.Spec.TierBytes: Ceph's device files) with, when the placement
// puts the data there too, the workload's data set, under any placement
// and swept option value. Parse checks the same of provisioned tiers
// against their size; the free space of a folder is the machine's.
func (c *preflight) engineFileSpace(m Machine) {
	if c.s.Target != "" || c.s.Kubernetes != nil {
		return
	}
	e, ok := m.Engine(c.s.Engine)
	if !ok {
		return
	}
	spec := e.Spec()
	if spec.TierBytes == nil {
		return
	}
	folders := map[string]Tier{}
	for _, t := range c.folderTiers() {
		folders[t.Name] = t
	}
	var sets []engine.Options
	for _, v := range c.s.optionVariants() {
		if o, err := c.s.EngineOptions(spec, v); err == nil { // else Parse said why
			sets = append(sets, o)
		}
	}
	reported := map[string]bool{}
	for _, pl := range c.s.Placements {
		for _, o := range sets {
			for name, files := range spec.TierBytes(pl.Components, o) {
				t, ok := folders[name]
				if !ok || reported[name] {
					continue
				}
				need, what := files, "the "+humanize.IBytes(uint64(files))+" of files engine "+spec.Name+" makes there"
				data := c.s.Workload.EstimatedBytes
				if data > 0 && pl.Components[c.s.DataComponent] == name {
					need += data
					what += " and the " + humanize.IBytes(uint64(data)) + " workload " + c.s.Workload.Name + " loads at least"
				} else {
					data = 0
				}
				free, at, err := tier.FreeBytes(t.Path)
				if err != nil || free >= need || free < data {
					continue // an unreadable filesystem, or too little for the data alone, is folderSpace's to report
				}
				reported[name] = true
				c.addf(t.Line, "tier %q has %s free (%s), less than placement %q puts on it: %s; free space there, choose another folder, or lower the engine's size options (see tierbench engines %s)",
					name, humanize.IBytes(uint64(free)), at, pl.Name, what, spec.Name)
			}
		}
	}
}

// stateFolder refuses a state folder (tier.StateDir: the ledger of what a
// run makes, its scratch folder and loop images) that run could not make.
func (c *preflight) stateFolder(stateDir string) {
	if stateDir == "" {
		return
	}
	if err := tier.CheckCreatable(stateDir); err != nil {
		c.addf(0, "tierbench's state folder %s (where a run records what it makes, for cleanup) cannot be made: %v; set TIERBENCH_STATE_DIR to a folder you can write, or run as the user whose folder it is", stateDir, err)
	}
}
