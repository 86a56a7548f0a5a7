package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/probe"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// ProbeMaxAge is how old a stored probe may be for `probe: cached`.
const ProbeMaxAge = 7 * 24 * time.Hour

// probeShort, when set, replaces a probe's test file size and fio job
// runtime. Tests that check what a probe records, not its figures, set
// it to probe in a few seconds; a study's probe leaves it unset.
var probeShort probe.Options

// probeTiers finds or measures each tier the workspace made (made, in
// the study's order) as the study asks (mode), in the probe cache, and
// stores the ones it measures there. A stored probe counts only for the
// same device, filesystem and mount. An emulated tier's record (in
// tiers) gets the probe's verdict on its emulation
// (probe.EmulationCheck).
func probeTiers(ctx context.Context, mode string, made []tier.Made, tiers map[string]tier.Info, cache results.ProbeCache, opt Options) (map[string]*results.Probe, error) {
	noteFloor(made, tiers, opt)
	switch mode {
	case study.ProbeOff:
		return nil, nil
	case "":
		mode = study.ProbeCached
	}
	out := map[string]*results.Probe{}
	for _, t := range made {
		info, st := tiers[t.Name], t.Stack
		atSyncCalls := st.Latency != nil && st.Latency.SyncCalls()
		if mode == study.ProbeCached && atSyncCalls {
			// A cached probe is of the folder without its delays.
			continue
		}
		if mode == study.ProbeCached {
			p, err := cache.LatestProbe(ctx, info.Device, info.FSType, info.MountPoint, time.Now().Add(-ProbeMaxAge))
			if err != nil {
				return nil, err
			}
			if p != nil {
				out[t.Name] = p
			}
			continue
		}
		quick := mode == study.ProbeQuick
		opt.Progress.Live(fmt.Sprintf("probing tier %s (%s) with fio%s...", t.Name, info.Path, map[bool]string{true: ", quick", false: ""}[quick]))
		popt := probe.Options{Quick: quick, Size: probeShort.Size, Runtime: probeShort.Runtime}
		if atSyncCalls {
			popt.SyncDelays = syncdelay.Rules{tier.SyncRule(info.Path, *st.Latency)}
		}
		if st.Profile != nil {
			popt.SyncsAtOnce = st.Profile.SyncsAtOnce()
		}
		pt, err := probe.Probe(ctx, info.Path, popt)
		if err != nil {
			return nil, fmt.Errorf("probe tier %s: %w", t.Name, err)
		}
		pt.Emulated = pt.Emulated || info.Emulated
		// A tier under the crash layer alone emulates nothing to confirm:
		// its probe is the layer's cost, shown with the tier's figures.
		if info.Emulated && (st.Latency != nil || st.Throttle != nil) {
			info.EmulationCheck = probe.EmulationCheck(st.Latency, st.Throttle, pt)
			tiers[t.Name] = info
			opt.Progress.Line(fmt.Sprintf("tier %s is emulated (%s): %s", t.Name, info.Emulation, info.EmulationCheck))
		}
		if st.Profile != nil {
			info.Fidelity = probe.Fidelity(*st.Profile, pt.Fio)
			tiers[t.Name] = info
		}
		p := &results.Probe{TakenAt: time.Now().UTC(), MountPoint: info.MountPoint, Quick: quick, Tier: pt}
		if err := cache.PutProbe(context.WithoutCancel(ctx), *p); err != nil {
			return nil, err
		}
		if pt.Fio != nil {
			opt.Progress.Line(fmt.Sprintf("tier %s: fsync p50 %s, sync ceiling %.0f/s, 4k random write %.0f IOPS (qd32), sequential write %.0f MB/s",
				t.Name, hist.FormatMicros(pt.Fio.FsyncLat.P50), pt.Fio.SyncCeilingPerS, pt.Fio.RandWriteQD32.IOPS, pt.Fio.SeqWriteMBps))
		}
		out[t.Name] = p
	}
	return out, nil
}

// noteFloor adds to the record of each tier with a profile the figures it
// cannot represent: those below the FUSE layer's floor (measured by
// tierbench probe --floor on this machine, else assumed), so that the
// report says so beside every figure from the tier.
func noteFloor(made []tier.Made, tiers map[string]tier.Info, opt Options) {
	var floor *probe.Floor
	loaded := false
	for _, t := range made {
		info, ok := tiers[t.Name]
		if t.Stack.Profile == nil || t.Stack.Latency == nil || !ok {
			continue
		}
		if !loaded {
			var err error
			if floor, err = probe.LoadFloor(tier.StateDir()); err != nil {
				opt.Progress.Line(fmt.Sprintf("%v; the assumed floor is used", err))
			}
			loaded = true
		}
		if b := probe.BelowText(*t.Stack.Profile, floor, t.Stack.Latency.Path); b != "" {
			info.Emulation += "; " + b
			tiers[t.Name] = info
			opt.Progress.Line(fmt.Sprintf("tier %s: %s", t.Name, b))
		}
	}
}
