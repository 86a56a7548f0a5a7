package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/host/userfile"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/probe"
	"github.com/tierbench/tierbench/tier/profile"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// probeFlags are probe's options.
type probeFlags struct {
	resultsDir, format, profile, saveProfile, emulate string
	quick, floor                                      bool
	runtime                                           time.Duration
	size                                              int64
}

// options are the probe's options; a probe that saves a profile also
// measures the fsync with several writers at once, for its fsync_at_once.
func (f probeFlags) options() probe.Options {
	o := probe.Options{Quick: f.quick, Runtime: f.runtime, Size: f.size}
	if f.saveProfile != "" {
		o.SyncsAtOnce = probe.ProfileSyncsAtOnce
	}
	return o
}

func newProbeCmd() *cobra.Command {
	var f probeFlags
	cmd := &cobra.Command{
		Use:   "probe [PATH...]",
		Short: "Characterise storage with fio (default: every writable data filesystem and /dev/shm) and store the figures",
		Long: `Characterise storage with fio (default: every writable data filesystem and /dev/shm) and store the figures.

--floor also measures the FUSE layer's own cost on this machine (the floor
no emulated tier is faster than) and the sync calls' cost, in a RAM folder;
--profile NAME makes an emulated tier for the profile (on PATH, or a RAM
folder tierbench makes and removes; --emulate syscall, the default, delays
its sync calls, --emulate fuse serves it through the FUSE layer), probes it
and shows each figure asked against achieved, with the floor;
--save-profile FILE writes the one PATH's figures as a profile.`,
		RunE: func(cmd *cobra.Command, paths []string) error {
			return runProbe(cmd.Context(), f, paths)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.resultsDir, "results", defaultResults, "results directory (probes are stored for studies with probe: cached)")
	fl.StringVar(&f.format, "format", "table", "output format: table or json")
	fl.BoolVar(&f.quick, "quick", false, "short fio jobs: under 30 s per tier")
	fl.BoolVar(&f.floor, "floor", false, "also measure the FUSE layer's floor on this machine (kept for validate)")
	fl.StringVar(&f.profile, "profile", "", "probe an emulated tier for this profile (a name from tierbench profiles, or a profile file) and compare")
	fl.StringVar(&f.emulate, "emulate", "", "with --profile, how the profile is applied: syscall (the sync calls alone; the default) or fuse (every operation, through the FUSE layer)")
	fl.StringVar(&f.saveProfile, "save-profile", "", "write the probed PATH's figures as a profile file")
	fl.DurationVar(&f.runtime, "runtime", 0, "each fio job's runtime (default 10s, 2s with --quick)")
	fl.Int64Var(&f.size, "size", 0, "fio test file size in bytes (default 1 GiB, 256 MiB with --quick)")
	_ = fl.MarkHidden("runtime")
	_ = fl.MarkHidden("size")
	return cmd
}

// runProbe checks every input before it measures or writes anything.
func runProbe(ctx context.Context, f probeFlags, paths []string) error {
	if f.format != "table" && f.format != "json" {
		return badInput(fmt.Errorf("unknown --format %q: use table or json", f.format))
	}
	var prof *profile.Profile
	if f.profile != "" {
		if f.saveProfile != "" {
			return badInput(errors.New("--profile probes an emulated tier and --save-profile a real one: give one of them"))
		}
		if len(paths) > 1 {
			return badInput(fmt.Errorf("--profile mounts one emulated tier: give at most one PATH to put it on, not %d", len(paths)))
		}
		p, err := profile.Load(f.profile, "")
		if err != nil {
			return badInput(err)
		}
		prof = &p
	}
	switch {
	case f.emulate != "" && prof == nil:
		return badInput(errors.New("--emulate says how --profile is applied: give --profile NAME too, or remove --emulate"))
	case f.emulate != "" && f.emulate != string(tier.ThroughFUSE) && f.emulate != string(tier.AtSyncCalls):
		return badInput(fmt.Errorf("unknown --emulate %q: use syscall or fuse", f.emulate))
	}
	if f.saveProfile != "" {
		if len(paths) != 1 {
			return badInput(errors.New("--save-profile measures one device: give the one PATH to measure"))
		}
		if err := checkWritable(f.saveProfile); err != nil {
			return badInput(err)
		}
	}
	if len(paths) == 0 && prof == nil {
		var err error
		if paths, err = probe.DefaultPaths(); err != nil {
			return err
		}
	}
	for _, p := range paths {
		if err := tier.CheckPath(p); err != nil {
			return badInput(err)
		}
	}
	if err := probe.Available(); err != nil {
		return badInput(err)
	}
	if prof != nil {
		return probeProfile(ctx, f, *prof, paths)
	}
	rep, err := probePaths(ctx, f, paths)
	if err != nil {
		return err
	}
	if f.floor {
		fl, err := measureFloor(ctx, f, "")
		if err != nil {
			return err
		}
		rep.Floor = &fl
	}
	if f.saveProfile != "" {
		if err := saveProfile(f.saveProfile, paths[0], rep.Tiers[0]); err != nil {
			return err
		}
	}
	return writeProbe(f, rep)
}

// probePaths probes each path and stores what it measured.
func probePaths(ctx context.Context, f probeFlags, paths []string) (probe.Report, error) {
	store, err := results.Open(f.resultsDir)
	if err != nil {
		return probe.Report{}, err
	}
	defer store.Close()
	var rep probe.Report
	for _, p := range paths {
		fmt.Fprintf(os.Stderr, "probing %s with fio...\n", p)
		pt, err := probe.Probe(ctx, p, f.options())
		if errors.Is(err, probe.ErrNoFio) {
			return rep, badInput(err)
		}
		if err != nil {
			pt.Error = err.Error()
		}
		rep.Tiers = append(rep.Tiers, pt)
		if info, ierr := tier.Inspect(p, p); ierr == nil && err == nil {
			if err := store.PutProbe(ctx, results.Probe{TakenAt: time.Now().UTC(), MountPoint: info.MountPoint, Quick: f.quick, Tier: pt}); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// provisioner records what a probe mounts and makes in tierbench's
// ledger, so that `tierbench cleanup` undoes it after a kill; its Close
// undoes it otherwise.
func provisioner(purpose string) (*tier.Provisioner, error) {
	ledger, err := tier.OpenLedger(tier.StateDir())
	if err != nil {
		return nil, err
	}
	return &tier.Provisioner{Ledger: ledger, Tag: purpose + "-" + strconv.Itoa(os.Getpid())}, nil
}

// ramFolder makes a folder in /dev/shm that prov removes.
func ramFolder(prov *tier.Provisioner) (string, error) {
	dir := filepath.Join("/dev/shm", "tierbench-"+prov.Tag)
	if err := tier.CheckInRAM("/dev/shm"); err != nil {
		return "", fmt.Errorf("no RAM folder for the probe: %w; give a PATH", err)
	}
	return dir, prov.Mkdir(dir)
}

// measureFloor measures the FUSE floor in base (a RAM folder when empty)
// and keeps it in the state folder for validate.
func measureFloor(ctx context.Context, f probeFlags, base string) (probe.Floor, error) {
	prov, err := provisioner("floor")
	if err != nil {
		return probe.Floor{}, err
	}
	defer prov.Close()
	if base == "" {
		if base, err = ramFolder(prov); err != nil {
			return probe.Floor{}, err
		}
	}
	fmt.Fprintf(os.Stderr, "measuring the FUSE layer's floor in %s with fio...\n", base)
	fl, err := probe.MeasureFloor(ctx, prov, base, f.options())
	if err != nil {
		return probe.Floor{}, err
	}
	if err := prov.Close(); err != nil {
		return probe.Floor{}, err
	}
	return fl, probe.SaveFloor(tier.StateDir(), fl)
}

// probeProfile mounts an emulated tier for prof on paths[0] (or a RAM
// folder), probes it, and compares each figure with the profile's.
func probeProfile(ctx context.Context, f probeFlags, prof profile.Profile, paths []string) error {
	base := ""
	if len(paths) == 1 {
		base = paths[0]
	}
	fl, err := measureFloor(ctx, f, base)
	if err != nil {
		return err
	}
	prov, err := provisioner("profile")
	if err != nil {
		return err
	}
	defer prov.Close()
	if base == "" {
		if base, err = ramFolder(prov); err != nil {
			return err
		}
	}
	applied := tier.ApplyProfile(prof, false, false, tier.LatencyPath(f.emulate))
	var pt probe.Tier
	opt := f.options()
	opt.SyncsAtOnce = prof.SyncsAtOnce()
	if lat := applied.Latency; lat.SyncCalls() {
		fmt.Fprintf(os.Stderr, "probing a tier for profile %s at the sync calls (%s) with fio...\n", prof.Name, lat.String())
		opt.SyncDelays = syncdelay.Rules{tier.SyncRule(base, lat)}
		if pt, err = probe.Probe(ctx, base, opt); err != nil {
			return err
		}
	} else {
		mnt, err := prov.Latency("profile", base, lat, false)
		if err != nil {
			return err
		}
		cal, _ := prov.LatencyCalibration("profile")
		fmt.Fprintf(os.Stderr, "probing an emulated tier for profile %s through the FUSE layer (%s; %s) with fio...\n", prof.Name, lat.String(), cal.String())
		if pt, err = probe.Probe(ctx, mnt, opt); err != nil {
			return err
		}
	}
	if err := prov.Close(); err != nil {
		return err
	}
	rep := probe.Report{Tiers: []probe.Tier{pt}, Floor: &fl, Profile: prof.Name, Fidelity: probe.Fidelity(prof, pt.Fio),
		NotApplied: applied.NotApplied, BelowFloor: probe.BelowText(prof, &fl, applied.Latency.Path)}
	return writeProbe(f, rep)
}

// writeProbe prints the report as asked.
func writeProbe(f probeFlags, rep probe.Report) error {
	if f.format == "json" {
		return probe.WriteReport(os.Stdout, rep)
	}
	probe.WriteTable(os.Stdout, rep.Tiers)
	if rep.Floor != nil {
		fmt.Println()
		probe.WriteFloor(os.Stdout, *rep.Floor)
	}
	if rep.Profile != "" {
		fmt.Printf("\nprofile %s: asked against achieved\n", rep.Profile)
		probe.WriteFidelity(os.Stdout, rep.Fidelity)
		for _, n := range rep.NotApplied {
			fmt.Println("not applied: " + n)
		}
		if rep.BelowFloor != "" {
			fmt.Println("warning: " + rep.BelowFloor)
		}
	}
	return nil
}

// checkWritable refuses a profile path that cannot be written (a missing
// folder, a folder, a block device), before anything is measured.
func checkWritable(path string) error {
	if _, err := userfile.Resolve(path); err != nil {
		return fmt.Errorf("--save-profile %w", err)
	}
	return nil
}

// saveProfile writes the figures the probe of path measured as a profile.
func saveProfile(file, path string, pt probe.Tier) error {
	if pt.Fio == nil {
		return fmt.Errorf("--save-profile: the probe of %s measured nothing: %s", path, pt.Error)
	}
	host, _ := os.Hostname()
	p := probe.ProfileOf(pt, host, time.Now())
	data, err := p.Marshal()
	if err != nil {
		return err
	}
	if err := userfile.WriteFile(file, data, 0o644); err != nil {
		return fmt.Errorf("--save-profile: %w", err)
	}
	fmt.Fprintf(os.Stderr, "wrote profile %s to %s\n", p.Name, file)
	return nil
}
