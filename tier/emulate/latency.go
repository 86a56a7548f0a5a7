package emulate

// This file is a device's latency, the one type that goes from a device
// profile (tier.ApplyProfile) or a study's latency: to the places it acts:
// this package's FUSE layer (its helper's -latency flag), the sync-call
// supervisor and the in-process wrapper (package syncdelay's Rule), each
// taking it whole, encoded across a process boundary as its JSON.

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Latency is how long each operation takes in all (see the package doc).
// Zero leaves that operation undelayed.
//
// A P99 above its operation's latency makes the layer draw each
// operation's whole time from a log-normal distribution whose median is
// the latency and whose 99th percentile is the P99 (a device's spread:
// most operations near the median, a tail of slow ones), rather than
// wait the same for every operation. Calibration is unaffected: it
// measures medians, and the median of the draws is the latency.
type Latency struct {
	Read     time.Duration `json:"read_ns,omitempty"`
	Write    time.Duration `json:"write_ns,omitempty"`
	Fsync    time.Duration `json:"fsync_ns"`
	ReadP99  time.Duration `json:"read_p99_ns,omitempty"`
	WriteP99 time.Duration `json:"write_p99_ns,omitempty"`
	FsyncP99 time.Duration `json:"fsync_p99_ns,omitempty"`
	// DirectWrites delays only writes through a handle opened O_DIRECT,
	// O_SYNC or O_DSYNC; a buffered write returns at the layer's own cost,
	// as on a device it lands in the page cache (a device profile's write
	// latency is measured so). Without it every write is delayed.
	DirectWrites bool `json:"direct_writes,omitempty"`
	// FsyncAtOnce is how a sync's time grows with the syncs in flight on
	// the tier (Fsync and FsyncP99 are the one-sync point): points of
	// rising Syncs above 1. Empty: every sync draws from Fsync alone.
	FsyncAtOnce []SyncsAtOnce `json:"fsync_at_once,omitempty"`
	// Path is where the latency acts: through this FUSE layer (every
	// operation; "" too) or at the sync system calls alone (package
	// syncdelay, which takes the fsync part).
	Path Path `json:"path,omitempty"`
}

// SyncsAtOnce is a sync's time, median and 99th percentile, while Syncs
// syncs (this one included) are in flight on one device: a device's
// flushes queue behind each other, so the time grows with them.
type SyncsAtOnce struct {
	Syncs int           `json:"syncs"`
	P50   time.Duration `json:"p50_ns"`
	P99   time.Duration `json:"p99_ns,omitempty"`
}

// Path is how a latency is applied (emulate: in a study).
type Path string

const (
	// ThroughFUSE serves the tier through the FUSE layer, which delays
	// reads, writes and syncs, at its own cost on each (its floor) and
	// with writes to a file held while it syncs.
	ThroughFUSE Path = "fuse"
	// AtSyncCalls delays only the sync system calls of files under the
	// tier (package syncdelay): no layer, no floor on reads and writes,
	// which run at the backing folder's speed.
	AtSyncCalls Path = "syscall"
)

// Paths are the values of emulate:, in the order messages list them.
var Paths = []string{string(ThroughFUSE), string(AtSyncCalls)}

// Delays counts the operations the latency delays (read, write, fsync):
// 0 for a latency that sets nothing.
func (l Latency) Delays() int {
	n := 0
	for _, d := range []time.Duration{l.Read, l.Write, l.Fsync} {
		if d > 0 {
			n++
		}
	}
	return n
}

// SyncCalls reports whether the latency is applied at the sync calls.
func (l Latency) SyncCalls() bool { return l.Path == AtSyncCalls }

// SyncsOnly is the part of l the sync calls apply: its fsync.
func (l Latency) SyncsOnly() Latency {
	return Latency{Fsync: l.Fsync, FsyncP99: l.FsyncP99, FsyncAtOnce: l.FsyncAtOnce}
}

// Encode is l as it crosses a process boundary (the helper's command
// line): its JSON.
func (l Latency) Encode() string {
	b, _ := json.Marshal(l)
	return string(b)
}

// DecodeLatency reads what Encode wrote.
func DecodeLatency(s string) (Latency, error) {
	var l Latency
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return Latency{}, fmt.Errorf("latency %q: %w", s, err)
	}
	return l, nil
}

// String describes the latency, for labels.
func (l Latency) String() string {
	if l.SyncCalls() {
		l.Read, l.Write = 0, 0
	}
	var parts []string
	for _, p := range []struct {
		name    string
		d, tail time.Duration
	}{{"read", l.Read, l.ReadP99}, {l.writeName(), l.Write, l.WriteP99}, {"fsync", l.Fsync, l.FsyncP99}} {
		switch {
		case p.d > 0 && p.tail > p.d:
			parts = append(parts, fmt.Sprintf("%s p50 %s p99 %s", p.name, p.d, p.tail))
		case p.d > 0:
			parts = append(parts, fmt.Sprintf("%s %s", p.name, p.d))
		}
	}
	if len(l.FsyncAtOnce) > 0 {
		var at []string
		for _, a := range l.FsyncAtOnce {
			at = append(at, fmt.Sprintf("%d: %s", a.Syncs, a.P50))
		}
		parts = append(parts, "fsync p50 by syncs in flight "+strings.Join(at, ", "))
	}
	if l.SyncCalls() {
		return strings.Join(parts, ", ") + " at the sync calls"
	}
	return strings.Join(parts, ", ")
}

// writeName names the write latency in labels: "direct write" when only
// direct and synchronous writes are delayed.
func (l Latency) writeName() string {
	if l.DirectWrites {
		return "direct write"
	}
	return "write"
}
