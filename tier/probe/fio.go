package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// testFile is the one file every job shares, laid out once so that reads
// hit real data and no job pays for allocating it.
const testFile = "probe.dat"

// findFio resolves the fio binary, turning "not found" into ErrNoFio.
func findFio(path string) (string, error) {
	if path == "" {
		path = "fio"
	}
	p, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("%w (looked for %s: %v)", ErrNoFio, path, err)
	}
	return p, nil
}

// hasEngine reports whether this fio build lists an I/O engine; Debian's
// does list libaio, but fio can be built without it.
func hasEngine(ctx context.Context, fio, engine string) bool {
	out, err := exec.CommandContext(ctx, fio, "--enghelp").Output()
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(l) == engine {
			return true
		}
	}
	return false
}

// runner runs the probe's fio jobs in one scratch folder.
type runner struct {
	fio     string
	dir     string
	size    int64
	runtime time.Duration
	direct  bool            // O_DIRECT works in dir
	libaio  bool            // queue depth via libaio rather than threads
	syncs   syncdelay.Rules // fio runs under them (Options.SyncDelays)
	atOnce  []int           // writer counts of the fsync job (Options.SyncsAtOnce)
}

// job is one fio run.
type job struct {
	name  string
	rw    string // randread, randwrite, read, write
	bs    string
	depth int
	sync  bool // write + fdatasync after every write
}

// measure lays out the test file, then runs reads before writes so that
// dirty pages left by writes cannot slow the reads, and the fdatasync job
// last after a syncfs so it starts with nothing else to flush.
func (r *runner) measure(ctx context.Context) (*Fio, error) {
	if _, err := r.run(ctx, r.layoutArgs(), 0); err != nil {
		return nil, fmt.Errorf("lay out test file: %w", err)
	}
	f := &Fio{Direct: r.direct}
	var notes []string
	rand := []struct {
		job job
		dst *IOResult
	}{
		{job{name: "randread_qd1", rw: "randread", bs: "4k", depth: 1}, &f.RandReadQD1},
		{job{name: "randread_qd32", rw: "randread", bs: "4k", depth: 32}, &f.RandReadQD32},
	}
	writes := []struct {
		job job
		dst *IOResult
	}{
		{job{name: "randwrite_qd1", rw: "randwrite", bs: "4k", depth: 1}, &f.RandWriteQD1},
		{job{name: "randwrite_qd32", rw: "randwrite", bs: "4k", depth: 32}, &f.RandWriteQD32},
	}
	for _, j := range rand {
		res, err := r.runJob(ctx, j.job, &f.FioVersion)
		if err != nil {
			return nil, err
		}
		*j.dst = res.result()
	}
	seq, err := r.runJob(ctx, job{name: "seqread", rw: "read", bs: "1m", depth: 8}, &f.FioVersion)
	if err != nil {
		return nil, err
	}
	f.SeqReadMBps = seq.mbps()
	for _, j := range writes {
		res, err := r.runJob(ctx, j.job, &f.FioVersion)
		if err != nil {
			return nil, err
		}
		*j.dst = res.result()
	}
	seq, err = r.runJob(ctx, job{name: "seqwrite", rw: "write", bs: "1m", depth: 8}, &f.FioVersion)
	if err != nil {
		return nil, err
	}
	f.SeqWriteMBps = seq.mbps()
	if err := syncfs(r.dir); err != nil {
		return nil, err
	}
	fs, err := r.runJob(ctx, job{name: "fsync", rw: "write", bs: "4k", depth: 1, sync: true}, &f.FioVersion)
	if err != nil {
		return nil, err
	}
	lat, exact := fs.syncLatency()
	if !exact {
		notes = append(notes, f.FioVersion+" reports no fdatasync percentiles: "+
			"fsync p50 is the mean write+fdatasync time and p99 is unknown")
	}
	f.FsyncLat = lat
	if lat.P50 > 0 {
		f.SyncCeilingPerS = 1e6 / lat.P50
	}
	for _, n := range r.atOnce {
		out, err := r.run(ctx, r.syncsAtOnceArgs(n), r.runtime+ramp(r.runtime)+time.Minute)
		if err != nil || len(out.Jobs) != 1 {
			return nil, fmt.Errorf("fio job fsync with %d writers: %v (jobs %d)", n, err, len(out.Jobs))
		}
		lat, _ := out.Jobs[0].syncLatency()
		f.FsyncAtOnce = append(f.FsyncAtOnce, SyncsAtOnce{Syncs: n, Lat: lat})
	}
	f.Note = strings.Join(notes, "; ")
	return f, nil
}

// atOnceFileSize is each writer's file in the fsync job with several
// writers: laid out whole first (overwrite), so that, as in the one-writer
// job on the laid-out test file, the writes allocate nothing.
const atOnceFileSize = 4 << 20

// syncsAtOnceArgs is the fsync job with n writers at once, each a thread
// writing 4 KiB and fdatasync-ing on a file of its own (fsync_atN.J.0 in
// the scratch folder, which the probe removes), reported as one group.
func (r *runner) syncsAtOnceArgs(n int) []string {
	a := []string{"--output-format=json", "--eta=never", "--thread",
		"--name=fsync_at" + strconv.Itoa(n), "--directory=" + r.dir,
		"--size=" + strconv.Itoa(atOnceFileSize), "--overwrite=1",
		"--rw=write", "--bs=4k", "--ioengine=sync", "--fdatasync=1", "--direct=0",
		"--numjobs=" + strconv.Itoa(n), "--group_reporting",
		"--time_based", "--runtime=" + ms(r.runtime)}
	if rp := ramp(r.runtime); rp > 0 {
		a = append(a, "--ramp_time="+ms(rp))
	}
	return a
}

// runJob runs one timed job and returns its (single, group-reported) result.
func (r *runner) runJob(ctx context.Context, j job, version *string) (fioJob, error) {
	// A watchdog on top of ctx: a time-based job that overruns its runtime
	// by a minute is stuck (hung device, fio bug) and would hang the probe.
	limit := r.runtime + ramp(r.runtime) + time.Minute
	out, err := r.run(ctx, r.jobArgs(j), limit)
	if err != nil {
		return fioJob{}, fmt.Errorf("fio job %s: %w", j.name, err)
	}
	if len(out.Jobs) != 1 {
		return fioJob{}, fmt.Errorf("fio job %s: expected 1 job in fio's JSON, got %d", j.name, len(out.Jobs))
	}
	if *version == "" {
		*version = out.Version
	}
	return out.Jobs[0], nil
}

// ramp is the warm-up excluded from the statistics: long enough to skip
// the first-I/O outliers, short enough not to dominate a quick probe.
func ramp(runtime time.Duration) time.Duration {
	return min(runtime/5, time.Second)
}

func ms(d time.Duration) string { return strconv.FormatInt(max(d.Milliseconds(), 1), 10) + "ms" }

func (r *runner) commonArgs(name string) []string {
	return []string{
		"--output-format=json", "--eta=never",
		// Threads, not processes: fio's forked workers call setsid(), so
		// killing fio (even its process group) would orphan them, still
		// doing I/O and holding our stdout pipe. Threads die with fio.
		"--thread",
		"--name=" + name,
		"--directory=" + r.dir, "--filename=" + testFile,
		"--size=" + strconv.FormatInt(r.size, 10),
	}
}

// layoutArgs writes the whole test file once, sequentially, and fsyncs it,
// so later jobs find real allocated data and a clean page cache.
func (r *runner) layoutArgs() []string {
	return append(r.commonArgs("layout"), "--rw=write", "--bs=1m", "--ioengine=psync", "--end_fsync=1")
}

// jobArgs turns a job into fio options. The engine choice:
//   - depth 1: psync (one pread/pwrite at a time), O_DIRECT when it works;
//   - sequential 1 MiB jobs: one stream, libaio with iodepth 8 when r.libaio
//     (so the device sees a queue, as with kernel readahead), else psync;
//   - depth > 1 when r.libaio (O_DIRECT on a block device, not DAX): libaio
//     with that iodepth;
//   - depth > 1 otherwise (tmpfs, DAX, buffered I/O, no libaio): that many
//     psync threads on the same file, which works on every filesystem and
//     kernel, unlike io_uring (which a sysctl or seccomp can disable);
//   - the fsync job: the sync engine, buffered, fdatasync after every write,
//     like a write-ahead log.
func (r *runner) jobArgs(j job) []string {
	a := append(r.commonArgs(j.name),
		"--rw="+j.rw, "--bs="+j.bs,
		"--time_based", "--runtime="+ms(r.runtime),
		// Random offsets need no full coverage map, and a fixed seed would
		// let two probes of one file see identical (cached) offsets.
		"--norandommap", "--randrepeat=0",
	)
	if rp := ramp(r.runtime); rp > 0 {
		a = append(a, "--ramp_time="+ms(rp))
	}
	switch {
	case j.sync:
		return append(a, "--ioengine=sync", "--fdatasync=1", "--direct=0")
	case !r.direct:
		// Buffered reads measure the page cache: keep it (invalidate=0),
		// and have the first read job pre-read the file so every read job
		// sees a warm cache rather than a mix of cold and warm. One
		// pre-read is enough, and 32 threads would each read the file.
		a = append(a, "--direct=0", "--invalidate=0")
		if j.rw == "randread" && j.depth <= 1 {
			a = append(a, "--pre_read=1")
		}
	default:
		a = append(a, "--direct=1")
	}
	switch {
	case j.depth <= 1 || (!r.libaio && !strings.HasPrefix(j.rw, "rand")):
		// A sequential job is one stream: without libaio it stays one
		// thread, as threads would each stream the file and add up.
		a = append(a, "--ioengine=psync")
	case r.libaio:
		a = append(a, "--ioengine=libaio", "--iodepth="+strconv.Itoa(j.depth))
	default:
		a = append(a, "--ioengine=psync", "--numjobs="+strconv.Itoa(j.depth), "--group_reporting")
	}
	return a
}

// run runs fio with args (plus an optional time limit) and parses its JSON.
// fio runs its jobs as threads (see commonArgs) in its own process group,
// which is killed as a whole on cancel, and dies with tierbench
// (Pdeathsig), so no fio outlives a cancelled or killed probe.
func (r *runner) run(ctx context.Context, args []string, limit time.Duration) (fioOutput, error) {
	parent := ctx
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, r.fio, args...)
	proc.OwnGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var err error
	if len(r.syncs) > 0 {
		err = syncdelay.Run(cmd, r.syncs)
	} else {
		err = cmd.Run()
	}
	if parentErr := parent.Err(); parentErr != nil {
		return fioOutput{}, fmt.Errorf("fio killed: %w", parentErr)
	}
	if ctx.Err() != nil {
		return fioOutput{}, fmt.Errorf("fio did not finish within %s: killed", limit)
	}
	if err != nil {
		return fioOutput{}, fmt.Errorf("fio %s: %w: %s", strings.Join(args, " "), err, lastLines(stderr.String()+stdout.String(), 5))
	}
	out, err := parseFio(stdout.Bytes())
	if err != nil {
		return fioOutput{}, err
	}
	for _, j := range out.Jobs {
		if j.Error != 0 {
			return fioOutput{}, fmt.Errorf("fio job %s failed with errno %d (%s): %s",
				j.Name, j.Error, syscall.Errno(j.Error), lastLines(stderr.String(), 5))
		}
	}
	return out, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// syncfs flushes the filesystem holding dir, so dirty pages left by the
// buffered write jobs are not written back during the fdatasync job.
func syncfs(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s to sync it: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}

// fioOutput is the part of fio's --output-format=json that probe reads.
type fioOutput struct {
	Version string   `json:"fio version"`
	Jobs    []fioJob `json:"jobs"`
}

type fioJob struct {
	Name  string  `json:"jobname"`
	Error int     `json:"error"`
	Read  fioDir  `json:"read"`
	Write fioDir  `json:"write"`
	Sync  fioSync `json:"sync"`
}

// fioDir is one direction (read or write) of a job.
type fioDir struct {
	IOPS    float64 `json:"iops"`
	BW      float64 `json:"bw"`       // KiB/s
	BWBytes float64 `json:"bw_bytes"` // bytes/s; fio >= 3.0 only
	// ClatNS is completion latency in ns (fio >= 3.0); fio 2.x wrote Clat in
	// microseconds instead.
	ClatNS fioLat `json:"clat_ns"`
	Clat   fioLat `json:"clat"`
}

// fioSync is fdatasync/fsync latency, reported since fio 3.5. Its total_ios
// is 0 even when lat_ns.N counts every sync (seen on fio 3.33), so only
// lat_ns is trusted.
type fioSync struct {
	LatNS fioLat `json:"lat_ns"`
}

type fioLat struct {
	N    float64 `json:"N"`
	Mean float64 `json:"mean"`
	// Percentile maps "50.000000" to a latency; fio omits it when N is 0.
	Percentile map[string]float64 `json:"percentile"`
}

// pct returns percentile p, matching keys numerically because the number
// of decimals in fio's keys is a formatting detail.
func (l fioLat) pct(p float64) (float64, bool) {
	for k, v := range l.Percentile {
		if f, err := strconv.ParseFloat(k, 64); err == nil && math.Abs(f-p) < 1e-6 {
			return v, true
		}
	}
	return 0, false
}

// latencyUS converts a latency block to microseconds given its unit.
func (l fioLat) latencyUS(unitNS float64) (Latency, bool) {
	p50, ok50 := l.pct(50)
	p99, ok99 := l.pct(99)
	if !ok50 || !ok99 {
		return Latency{}, false
	}
	return Latency{P50: p50 * unitNS / 1000, P99: p99 * unitNS / 1000}, true
}

// dir picks the direction that did I/O (a job here only reads or writes).
func (j fioJob) dir() fioDir {
	if j.Write.IOPS > j.Read.IOPS {
		return j.Write
	}
	return j.Read
}

func (j fioJob) result() IOResult {
	d := j.dir()
	lat, ok := d.ClatNS.latencyUS(1)
	if !ok {
		lat, _ = d.Clat.latencyUS(1000)
	}
	return IOResult{IOPS: d.IOPS, Lat: lat}
}

// mbps is the bandwidth in MB/s (10^6 bytes).
func (j fioJob) mbps() float64 {
	d := j.dir()
	if d.BWBytes > 0 {
		return d.BWBytes / 1e6
	}
	return d.BW * 1024 / 1e6
}

// syncLatency is the fdatasync latency; exact is false when this fio has no
// sync section, in which case p50 falls back to the mean time of one
// write+fdatasync (1e6/IOPS) and p99 to 0.
func (j fioJob) syncLatency() (lat Latency, exact bool) {
	if l, ok := j.Sync.LatNS.latencyUS(1); ok {
		return l, true
	}
	if iops := j.dir().IOPS; iops > 0 {
		return Latency{P50: 1e6 / iops}, false
	}
	return Latency{}, false
}

// parseFio decodes fio's JSON output. fio sometimes prints warnings on
// stdout before the JSON ("fio: ..." lines) even with --output-format=json,
// so decoding starts at the first line that opens an object, and stops at
// the end of that object.
func parseFio(out []byte) (fioOutput, error) {
	start := 0
	if !bytes.HasPrefix(out, []byte("{")) {
		i := bytes.Index(out, []byte("\n{"))
		if i < 0 {
			return fioOutput{}, fmt.Errorf("no JSON in fio output: %s", lastLines(string(out), 5))
		}
		start = i + 1
	}
	var o fioOutput
	if err := json.NewDecoder(bytes.NewReader(out[start:])).Decode(&o); err != nil {
		return fioOutput{}, fmt.Errorf("parse fio JSON: %w", err)
	}
	return o, nil
}
