package emulate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// Calibration is what the layer measured of itself when it mounted.
type Calibration struct {
	// Overhead is the layer's own cost on a delayed operation (the FUSE
	// round trip, waking the threads on both sides, the sleep's
	// overshoot), which every wait is shortened by.
	Overhead time.Duration `json:"overhead_ns"`
	// FsyncP50 is the median time of fdatasync after a 4 KiB write,
	// measured through the mount once calibrated; zero when no fsync
	// latency was asked for, or one so long (over 100 ms) that measuring
	// it would hold the mount up for seconds.
	FsyncP50 time.Duration `json:"fsync_p50_ns,omitempty"`
	// Samples is the number of fdatasyncs FsyncP50 is the median of.
	Samples int `json:"samples,omitempty"`
	// RoundTrip is the median fdatasync through the mount with no delay:
	// the layer's cost without a sleep, which a wait too short to sleep
	// through spins on top of.
	RoundTrip time.Duration `json:"round_trip_ns,omitempty"`
	// Shared marks an Overhead and RoundTrip that another mount of the
	// same latencies measured and this one took (Options.Calibrated):
	// two layers of one spec measured apart, each under the load of its
	// own moment, delivered delays a quarter apart, which a study would
	// read as a difference between its tiers.
	Shared bool `json:"shared,omitempty"`
}

// String says what was measured, for the tier's record.
func (c Calibration) String() string {
	where := "measured at mount"
	if c.Shared {
		where = "measured at the first mount of this spec"
	}
	if c.FsyncP50 == 0 {
		return fmt.Sprintf("the layer's own %dµs is taken off each delay (%s)", c.Overhead.Microseconds(), where)
	}
	if c.Shared {
		return fmt.Sprintf("measured at mount: fsync p50 %dµs over %d fdatasyncs; the layer's own %dµs, %s, taken off each delay",
			c.FsyncP50.Microseconds(), c.Samples, c.Overhead.Microseconds(), where)
	}
	return fmt.Sprintf("measured at mount: fsync p50 %dµs over %d fdatasyncs, the layer's own %dµs taken off each delay",
		c.FsyncP50.Microseconds(), c.Samples, c.Overhead.Microseconds())
}

// Calibration bounds.
const (
	// calibrationMin and calibrationMax bound the fsync latency the layer
	// is calibrated at: its overhead does not depend on the latency, so a
	// long one (an HDD's 10 ms) is calibrated at calibrationMax to keep
	// mounting quick, and tiers that delay only reads or writes at
	// calibrationMin.
	calibrationMin = time.Millisecond
	calibrationMax = 5 * time.Millisecond
	// calibrationRounds of calibrationSpan each: the first measures the
	// overhead, the second corrects what the first got wrong.
	calibrationRounds = 2
	calibrationSpan   = 150 * time.Millisecond
	// checkSpan is how long the final measurement at the asked latency
	// takes, within minSamples..maxSamples fdatasyncs; an fsync latency
	// above maxChecked is not measured at mount (it would take seconds,
	// and the layer's overhead is lost in it anyway).
	checkSpan  = 300 * time.Millisecond
	minSamples = 5
	maxSamples = 100
	maxChecked = 100 * time.Millisecond
	// maxAlongside bounds the fdatasyncs FsyncAlongside makes through
	// each mount: more than a calibration's, since tiers of one spec are
	// told apart by a few per cent.
	maxAlongside = 1000
	// roundTripSamples undelayed fdatasyncs measure the round trip: a few
	// ms at most.
	roundTripSamples = 50
	// calibrationFile is written through the mount, in its root, and
	// removed again.
	calibrationFile = ".tierbench-calibration"
	// ringBlocks 4 KiB blocks are written in turn, so a tiny tier has room.
	ringBlocks = 16
)

// calibrate measures the layer's overhead on fdatasync through the mount,
// as fio's fsync job and a database's log writer use it (a 4 KiB write,
// then fdatasync), sets it as the delays' overhead, and measures the
// result at the asked fsync latency. With given (another mount's of the
// same latencies), it takes given's overhead and round trip instead of
// measuring its own, and only measures the result.
func (s *fsServer) calibrate(lat Latency, given *Calibration) (Calibration, error) {
	if lat.Read == 0 && lat.Write == 0 && lat.Fsync == 0 {
		return Calibration{}, nil
	}
	path := filepath.Join(s.mountPoint, calibrationFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Calibration{}, fmt.Errorf("create %s: %w", path, err)
	}
	defer os.Remove(path)
	defer f.Close()
	c := &syncer{fd: int(f.Fd()), buf: make([]byte, 4096)}

	if given != nil {
		s.delays.roundTrip.Store(int64(given.RoundTrip))
		s.delays.overhead.Store(int64(given.Overhead))
		cal := Calibration{Overhead: given.Overhead, RoundTrip: given.RoundTrip, Shared: true}
		return cal, s.check(c, lat, &cal)
	}
	at := min(max(lat.Fsync, calibrationMin), calibrationMax)
	defer s.delays.fsync.Store(int64(lat.Fsync))
	// The round trip first, with a delay that never waits (1ns).
	s.delays.fsync.Store(1)
	if _, err := c.p50(minSamples); err != nil { // warm up: file blocks, threads
		return Calibration{}, err
	}
	rt, err := c.p50(roundTripSamples)
	if err != nil {
		return Calibration{}, err
	}
	s.delays.roundTrip.Store(int64(rt))
	s.delays.fsync.Store(int64(at))
	var overhead time.Duration
	for range calibrationRounds {
		p50, err := c.p50(samples(at, calibrationSpan))
		if err != nil {
			return Calibration{}, err
		}
		overhead = min(max(overhead+p50-at, 0), at)
		s.delays.overhead.Store(int64(overhead))
	}
	cal := Calibration{Overhead: overhead, RoundTrip: rt}
	return cal, s.check(c, lat, &cal)
}

// check measures the fsync p50 the mount delivers at the asked latency
// into cal, unless none was asked or it is too long to measure.
func (s *fsServer) check(c *syncer, lat Latency, cal *Calibration) error {
	if lat.Fsync == 0 || lat.Fsync > maxChecked {
		return nil
	}
	s.delays.fsync.Store(int64(lat.Fsync))
	if _, err := c.p50(minSamples); err != nil { // warm up: file blocks, threads
		return err
	}
	cal.Samples = samples(lat.Fsync, checkSpan)
	p50, err := c.p50(cal.Samples)
	cal.FsyncP50 = p50
	return err
}

// Checkable reports whether FsyncAlongside can measure mounts of lat:
// an fsync latency asked, short enough to measure quickly.
func (l Latency) Checkable() bool { return l.Fsync > 0 && l.Fsync <= maxChecked }

// FsyncAlongside measures the fsync p50 of each of mounts, folders
// served by layers of one spec, in turn (a write and fdatasync through
// each, round after round), so that what loads the machine meanwhile
// loads each alike; what tells them apart is then the layers themselves.
// It writes a file in each folder and removes it again.
func FsyncAlongside(mounts []string, lat Latency) ([]time.Duration, error) {
	n := min(max(int(checkSpan/lat.Fsync), minSamples), maxAlongside)
	syncers := make([]*syncer, len(mounts))
	for i, dir := range mounts {
		path := filepath.Join(dir, calibrationFile)
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		defer os.Remove(path)
		defer f.Close()
		syncers[i] = &syncer{fd: int(f.Fd()), buf: make([]byte, 4096)}
	}
	times := make([][]time.Duration, len(mounts))
	for round := range n + minSamples {
		for i, c := range syncers {
			d, err := c.p50(1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", mounts[i], err)
			}
			if round >= minSamples { // the first ones warm up
				times[i] = append(times[i], d)
			}
		}
	}
	p50s := make([]time.Duration, len(mounts))
	for i, ds := range times {
		slices.Sort(ds)
		p50s[i] = ds[len(ds)/2]
	}
	return p50s, nil
}

// samples is how many fdatasyncs of latency d fit in span, within bounds.
func samples(d, span time.Duration) int {
	return min(max(int(span/d), minSamples), maxSamples)
}

// syncer writes 4 KiB blocks in turn and times the fdatasync after each.
type syncer struct {
	fd  int
	buf []byte
	n   int64
}

// p50 is the median fdatasync time of n write + fdatasync cycles.
func (c *syncer) p50(n int) (time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	for range n {
		if _, err := unix.Pwrite(c.fd, c.buf, (c.n%ringBlocks)*int64(len(c.buf))); err != nil {
			return 0, fmt.Errorf("write: %w", err)
		}
		c.n++
		start := time.Now()
		if err := unix.Fdatasync(c.fd); err != nil {
			return 0, fmt.Errorf("fdatasync: %w", err)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds[len(ds)/2], nil
}
