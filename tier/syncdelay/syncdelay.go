// Package syncdelay makes the syncs of files under chosen folders take as
// long as a device's, at the system call, with no filesystem layer in
// between: the commonest what-if ("a WAL on a device whose flush takes
// this long") without the FUSE layer's costs (package emulate), whose
// round trip on every read, write and fsync (6-16 µs at p50 here) is
// slower than the fast devices it would stand for, and whose inode lock
// holds a file's writes while that file is being fsynced, which undoes a
// database's group commit.
//
// A Rule names a folder and the sync latency of the device it stands for
// (a median and a 99th percentile, drawn as package emulate draws them).
// fsync(2), fdatasync(2), sync_file_range(2) and syncfs(2) of a file or
// folder under it take that long in all, the backing folder's own sync
// included. Reads and writes are not delayed: they run at the backing
// folder's speed (RAM, for a profile), which is how a buffered database
// meets a fast device anyway (a page-cache write, a cached read) and is
// why this is used where a profile's reads and writes are what the FUSE
// floor cannot represent. Writes through O_DIRECT or O_SYNC are not
// delayed either: a tier whose engine writes that way wants the FUSE layer.
//
// Two ways to apply the rules, one mechanism each:
//
//   - Programs tierbench starts (servers, fio) run under a seccomp filter
//     that hands those four system calls to a supervisor in tierbench
//     (SECCOMP_RET_USER_NOTIF; Command, Supervisor). The supervisor finds
//     the file the call names (/proc/PID/fd), and for a file under a rule
//     makes the sync itself on a copy of the caller's descriptor
//     (pidfd_getfd), waits out the rest of the draw and returns the
//     sync's own result; any other call continues untouched. A helper
//     process (this executable, re-executed) installs the filter and then
//     becomes the program, so the filter holds for it and all it forks.
//   - Go code in tierbench's own process (the embedded Pebble) wraps its
//     files' Sync methods with Rules.Timer.
//
// Linux 5.9 or later (pidfd_getfd, the continue flag); Supported says why
// not elsewhere.
package syncdelay

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tierbench/tierbench/tier/emulate"
)

// Rule delays the syncs of files under Dir.
type Rule struct {
	Dir string `json:"dir"`
	// Latency is the device's latency, of which the rule applies the
	// fsync: its median (Fsync), 99th percentile (FsyncP99; 0 or not
	// above Fsync: a constant) and growth with the folder's syncs in
	// flight (FsyncAtOnce). Its JSON is the rule's, as it crosses to the
	// supervisor.
	emulate.Latency
	// Calibration is what Calibrated measured for the rule, which
	// InProcess takes instead of measuring again; nil: InProcess measures.
	Calibration *Calibration `json:"calibration,omitempty"`
}

// Calibration is a rule's cost in this process, measured once per study
// (Rules.Calibrated) and shared by every rule of one median: each engine
// start measuring its own, under the load of its moment, would give two
// tiers of one spec, or two runs of one tier, delays apart.
type Calibration struct {
	// Overshoot is how late a sleep at the rule's calibration target
	// wakes up (emulate.SleepOvershootAt): InProcess's overhead.
	Overshoot time.Duration `json:"overshoot_ns"`
}

// Calibrated is rs with every rule calibrated: a rule without a
// calibration takes that of a rule of the same calibration target, or
// one measured now, once per target.
func (rs Rules) Calibrated() Rules {
	out := slices.Clone(rs)
	byTarget := map[time.Duration]*Calibration{}
	for _, r := range out {
		if r.Calibration != nil {
			if _, ok := byTarget[calibrationTarget(r)]; !ok {
				byTarget[calibrationTarget(r)] = r.Calibration
			}
		}
	}
	for i, r := range out {
		t := calibrationTarget(r)
		if r.Calibration != nil || t == 0 {
			continue
		}
		c, ok := byTarget[t]
		if !ok {
			c = &Calibration{Overshoot: emulate.SleepOvershootAt(t)}
			byTarget[t] = c
		}
		out[i].Calibration = c
	}
	return out
}

// Rules are every delayed folder of a study. No two should nest; the
// longest folder that holds a file wins if they do.
type Rules []Rule

// String describes a rule, for labels.
func (r Rule) String() string {
	if r.FsyncP99 > r.Fsync {
		return fmt.Sprintf("fsync p50 %s p99 %s", r.Fsync, r.FsyncP99)
	}
	return fmt.Sprintf("fsync %s", r.Fsync)
}

// cleaned is rs with each folder in clean form, made once so that match,
// on every trapped call, compares strings only.
func (rs Rules) cleaned() Rules {
	out := make(Rules, len(rs))
	for i, r := range rs {
		r.Dir = filepath.Clean(r.Dir)
		out[i] = r
	}
	return out
}

// match is the index of the rule whose folder holds path, or -1; rs is
// cleaned.
func (rs Rules) match(path string) int {
	best, bestLen := -1, -1
	for i, r := range rs {
		if (path == r.Dir || strings.HasPrefix(path, r.Dir+"/")) && len(r.Dir) > bestLen {
			best, bestLen = i, len(r.Dir)
		}
	}
	return best
}

// timers makes one timer per rule, at its overhead and roundTrip (see
// emulate.NewSyncTimer).
func (rs Rules) timers(overhead func(Rule) time.Duration, roundTrip time.Duration) []*emulate.SyncTimer {
	ts := make([]*emulate.SyncTimer, len(rs))
	for i, r := range rs {
		ts[i] = emulate.NewSyncTimer(r.SyncsOnly(), overhead(r), roundTrip)
	}
	return ts
}

// calibrationTargets are the rules' medians (calibrationTarget), each
// once, ascending: a delay layer's cost around a wait is measured at each
// (see calibrationCalls).
func (rs Rules) calibrationTargets() []time.Duration {
	var out []time.Duration
	for _, r := range rs {
		if t := calibrationTarget(r); t > 0 && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// calibrationMin and calibrationMax bound the wait a rule's cost is
// measured at. A shorter rule (an Optane's 10 µs, an NVMe's 30 µs) takes
// the cost measured at calibrationMin, which holds a sleep's overshoot:
// so its draws spin rather than sleep, as a sleep alone would overshoot
// them (measured at their own median, the cost came out at the median,
// and every draw above it slept: +17% at p50 and +333% at p99 for the
// P4800X). A longer rule (an HDD's, or a test's hour) takes the cost
// measured at calibrationMax, a small part of its wait, and calibration
// stays short.
const (
	calibrationMin = 100 * time.Microsecond
	calibrationMax = 2 * time.Millisecond
)

// calibrationTarget is the wait r's cost is measured at: its median,
// within calibrationMin and calibrationMax; 0 for a rule that asks none.
func calibrationTarget(r Rule) time.Duration {
	if r.Fsync <= 0 {
		return 0
	}
	return min(max(r.Fsync, calibrationMin), calibrationMax)
}

// InProcess times syncs made by Go code in this process (the embedded
// Pebble): its only overhead is the sleep's overshoot.
type InProcess struct {
	rules  Rules
	timers []*emulate.SyncTimer
}

// InProcess readies the rules for this process's own files, at their
// calibrations (Calibrated), measuring those they lack.
func (rs Rules) InProcess() *InProcess {
	rs = rs.Calibrated()
	over := func(r Rule) time.Duration {
		if r.Calibration == nil {
			return 0
		}
		return r.Calibration.Overshoot
	}
	return &InProcess{rules: rs.cleaned(), timers: rs.timers(over, 0)}
}

// Sync runs sync, the sync of the file at path, and waits the rest of its
// rule's draw; a file under no rule is synced undelayed.
func (p *InProcess) Sync(path string, sync func() error) error {
	i := p.rules.match(filepath.Clean(path))
	if i < 0 {
		return sync()
	}
	var err error
	p.timers[i].Time(time.Now(), func() { err = sync() })
	return err
}
