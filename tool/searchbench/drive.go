package searchbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/logtail"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/searchload"
)

// Driver runs one of the tools for one run. Use Bench.New.
type Driver struct {
	Bench
	// Program is the tool's program in its virtualenv.
	Program      string
	Node         engine.SearchNode
	WorkloadName string
	// Workload is the run's workload, loaded: Verify is told what the
	// tool indexed.
	Workload workload.Workload
	// Params are the workload's resolved parameters, which size the track.
	Params setting.Values
	// Dir receives the track, the tool's HOME, its output (<name>.log)
	// and its CSV summary. Empty: a temporary folder, removed after the
	// run.
	Dir string

	watch driver.LoadWatch
}

var (
	_ driver.External     = (*Driver)(nil)
	_ driver.LoadReporter = (*Driver)(nil)
)

// WatchLoad makes Drive report the tool's process to w.
func (d *Driver) WatchLoad(w driver.LoadWatch) { d.watch = w }

// Timeouts beyond the run's warmup and duration.
const (
	// startAllowance is what the tool may take to start, load its track
	// and prepare the corpus (an offset file per client), and to write
	// its report: Rally and OSB take 10-30 s on 2 busy cores.
	startAllowance = 3 * time.Minute
	// tailBytes is how much of the tool's output an error quotes.
	tailBytes = 4096
	// logTailLines is how many of its log file's last lines an error
	// quotes: the tools print a one-line error and log the cause.
	logTailLines = 15
)

// The run's files in Dir.
const (
	trackDir   = "track"
	homeDir    = "home"
	reportFile = "report.csv"
)

// toolLogs are where the tools write their logs, under their HOME.
var toolLogs = []string{".rally/logs/rally.log", ".benchmark/logs/benchmark.log"}

// indexedNotifier is the searchload workloads' way of hearing of
// documents a tool indexed past their clients, which Verify must expect.
type indexedNotifier interface{ IndexedByTool(n int64) }

var _ indexedNotifier = (*searchload.Workload)(nil)

// Args returns the tool's command line for the track in dir, writing its
// summary to report.
func (d *Driver) Args(dir, report string, p plan) ([]string, error) {
	u, err := url.Parse(d.Node.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("driver %s: node URL %q: want http://host:port", d.Name, d.Node.URL)
	}
	return []string{d.Subcommand, "--offline", "--pipeline=benchmark-only", "--target-hosts=" + u.Host,
		d.PathFlag + "=" + dir, d.ParamsFlag + "=" + p.paramsFlag(),
		d.ReportFlags[0] + "=csv", d.ReportFlags[1] + "=" + report}, nil
}

// Drive writes the run's track and runs the tool on it with clients
// (split between its tasks as the workload splits its ops) for
// cfg.Warmup + cfg.Duration, both rounded to whole seconds; the tool's
// CSV summary becomes the result. Closed loop only. Cancelling ctx kills
// the tool and every process it started; so does its outliving its time
// by cfg.StopGrace plus startAllowance (driver.ErrHung). What the tool
// indexed, by the node's own count, is told to the workload's Verify.
func (d *Driver) Drive(ctx context.Context, cfg driver.Config, clients int) (*driver.Result, error) {
	if clients < 1 {
		return nil, fmt.Errorf("driver %s: need at least one client", d.Name)
	}
	if cfg.TargetRate > 0 {
		return nil, fmt.Errorf("driver %s: drives closed loop only; a target_rate (open loop) is not supported with it", d.Name)
	}
	p := newPlan(d.WorkloadName, d.Params, clients, cfg.Warmup, cfg.Duration)
	dir, done, err := tool.WorkDir(d.Dir, d.Name)
	if err != nil {
		return nil, err
	}
	defer done()
	track, home := filepath.Join(dir, trackDir), filepath.Join(dir, homeDir)
	for _, sub := range []string{track, home, filepath.Join(home, "tmp")} {
		os.RemoveAll(sub) // an earlier Drive's, had it been killed
		if err := os.Mkdir(sub, 0o700); err != nil {
			return nil, fmt.Errorf("driver %s: %w", d.Name, err)
		}
	}
	if _, err := d.writeTrack(track, p, d.Node); err != nil {
		return nil, fmt.Errorf("driver %s: %w", d.Name, err)
	}
	report := filepath.Join(dir, reportFile)
	os.Remove(report) // the tools append to it
	args, err := d.Args(track, report, p)
	if err != nil {
		return nil, err
	}
	before, err := indexedDocs(ctx, d.Node)
	if err != nil {
		return nil, fmt.Errorf("driver %s: %w", d.Name, err)
	}

	warmup, period := time.Duration(p.warmupS)*time.Second, time.Duration(p.periodS)*time.Second
	grace := cfg.StopGrace
	if grace <= 0 {
		grace = driver.DefaultStopGrace
	}
	runCtx, cancel := context.WithTimeout(ctx, warmup+period+grace+startAllowance)
	defer cancel()
	tail, waitErr := d.run(runCtx, dir, home, args)
	d.tellIndexed(before)
	cmdline := d.Command + " " + strings.Join(args, " ")
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case runCtx.Err() != nil:
		return nil, fmt.Errorf("%w: %s was still running %v after its %v warmup and %v period (killed): %s%s",
			driver.ErrHung, d.Name, grace+startAllowance, warmup, period, cmdline, d.tails(tail, home))
	case waitErr != nil:
		return nil, fmt.Errorf("driver %s failed (%v): %s%s", d.Name, waitErr, cmdline, d.tails(tail, home))
	}
	f, err := os.Open(report)
	if err != nil {
		return nil, fmt.Errorf("driver %s wrote no summary: %w: %s%s", d.Name, err, cmdline, d.tails(tail, home))
	}
	defer f.Close()
	figs, err := ParseCSV(f)
	if err != nil {
		return nil, fmt.Errorf("driver %s: %w", d.Name, err)
	}
	res, err := result(d.Name, figs, p, cfg.Ops, warmup, period)
	if err != nil {
		return nil, fmt.Errorf("%w%s", err, d.tails(tail, home))
	}
	if cfg.OnTick != nil {
		cfg.OnTick(res.Intervals[0])
	}
	return res, nil
}

// run runs the tool with args in dir, HOME home, in a PID namespace of
// its own where it can (proctree.go), telling the load watch of each of
// its processes, and returns the end of its output and how it ended.
// Cancelling ctx kills unshare and the tool, and with the tool its
// namespace.
func (d *Driver) run(ctx context.Context, dir, home string, args []string) (*logtail.Writer, error) {
	tail := &logtail.Writer{Max: tailBytes}
	logf, err := os.Create(filepath.Join(dir, d.Name+".log"))
	if err != nil {
		return tail, fmt.Errorf("log: %w", err)
	}
	defer logf.Close()
	argv := append(slices.Clip(containment()), d.Program)
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], args...)...)
	cmd.Dir = dir
	cmd.Env = toolEnv(home)
	cmd.Stdout = io.MultiWriter(logf, tail)
	cmd.Stderr = cmd.Stdout
	cmd.WaitDelay = 5 * time.Second
	proc.OwnGroup(cmd)
	if len(argv) == 1 {
		fmt.Fprintf(logf, "tierbench: no PID namespace for %s here (unshare missing or not permitted): its actor processes, a daemon of their own, may outlive it if it is killed\n", d.Name)
	}
	if err := cmd.Start(); err != nil {
		return tail, fmt.Errorf("start %s: %w", d.Program, err)
	}
	waited := driver.WatchCmd(d.watch, d.Name, cmd)
	stopWatching := make(chan struct{})
	treeDone := watchTree(d.watch, d.Name, cmd.Process.Pid, stopWatching)
	logDone := followLog(&taskStart{watch: d.watch}, home, stopWatching)
	err = cmd.Wait()
	close(stopWatching)
	<-treeDone
	<-logDone
	// The namespace died with the tool; without one, its group at least
	// goes, whatever the tool did on the way out.
	_ = proc.KillGroup(cmd.Process.Pid)
	waited()
	return tail, err
}

// taskStart tells the load watch when the tool's workers start the
// track's tasks, from the tool's log: OSB logs "Worker[0] is executing
// tasks at index [0]", Rally "Worker[0] executing tasks: [...]". The track
// holds only the measured tasks, so their start is the warmup's, and the
// 15-35 s the tool takes to start before it are left out of the window.
// (Their progress lines would say it too, but the workers' actor system
// prints them to its own output, not the tool's.)
type taskStart struct {
	watch driver.LoadWatch
	line  []byte // the line being written, up to maxLogLine bytes
	told  bool
}

// taskStartMarks are the log's words for a worker starting its tasks.
var taskStartMarks = []string{"is executing tasks at index", "] executing tasks: "}

// maxLogLine is as much of a log line as taskStart reads.
const maxLogLine = 4096

func (t *taskStart) Write(p []byte) (int, error) {
	for _, b := range p {
		if t.told {
			break
		}
		if b != '\n' {
			if len(t.line) < maxLogLine {
				t.line = append(t.line, b)
			}
			continue
		}
		for _, m := range taskStartMarks {
			if bytes.Contains(t.line, []byte(m)) {
				t.told = true
				t.watch.Begin()
			}
		}
		t.line = t.line[:0]
	}
	return len(p), nil
}

// followLog feeds the tool's log files under home to t as they grow, each
// logPoll, until stop is closed.
func followLog(t *taskStart, home string, stop <-chan struct{}) (done <-chan struct{}) {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		if t.watch == nil {
			return
		}
		offsets := make([]int64, len(toolLogs))
		tick := time.NewTicker(logPoll)
		defer tick.Stop()
		for !t.told {
			for i, l := range toolLogs {
				offsets[i] += copyFrom(t, filepath.Join(home, l), offsets[i])
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return ch
}

// logPoll is how often followLog reads the tool's log.
const logPoll = 200 * time.Millisecond

// copyFrom writes what path holds past offset to w, and returns how much.
func copyFrom(w io.Writer, path string, offset int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n, _ := io.Copy(w, io.NewSectionReader(f, offset, 1<<40))
	return n
}

// toolEnv is the tool's environment: tierbench's, with HOME the run's
// private folder (the tools keep their configuration, logs and races under
// it) and without the variables that would point them elsewhere.
func toolEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "HOME" || name == "TMPDIR" || strings.HasPrefix(name, "RALLY_") || strings.HasPrefix(name, "BENCHMARK_") || strings.HasPrefix(name, "OSB_") {
			continue
		}
		env = append(env, kv)
	}
	// TMPDIR in its home: Python's multiprocessing leaves its pymp-*
	// folders (a listener socket each) in /tmp otherwise.
	return append(env, "HOME="+home, "TMPDIR="+filepath.Join(home, "tmp"))
}

// tails quotes the end of the tool's output and of its log file, for an
// error.
func (d *Driver) tails(out *logtail.Writer, home string) string {
	s := "\nlast lines of its output:\n" + indent(out.Last(25))
	for _, l := range toolLogs {
		b, err := os.ReadFile(filepath.Join(home, l))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		s += "\nlast lines of its log (" + l + "):\n" + indent(strings.Join(lines[max(len(lines)-logTailLines, 0):], "\n"))
	}
	return s
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// tellIndexed tells the workload how many documents the tool indexed: the
// growth of the node's count of indexing operations on the index since
// before, which Verify then expects in the index after a refresh. The count
// is read once the node runs no bulk and the count holds still: a killed
// tool can leave bulks the node has queued or is indexing, document by
// document. Nothing is told when the node cannot say: Verify fails, as it
// should on a node that stopped answering.
func (d *Driver) tellIndexed(before int64) {
	n, ok := d.Workload.(indexedNotifier)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	last, err := indexedDocs(ctx, d.Node)
	for err == nil {
		time.Sleep(settleTime)
		var now, bulks int64
		if now, err = indexedDocs(ctx, d.Node); err == nil && now == last {
			if bulks, err = runningBulks(ctx, d.Node); err == nil && bulks == 0 {
				break
			}
		}
		last = now
	}
	if err == nil && last > before {
		n.IndexedByTool(last - before)
	}
}

// settleTime is how long the node's indexing count must hold still to be
// the tool's last.
const settleTime = 300 * time.Millisecond

// runningBulks is how many bulk tasks the node has, queued or running.
func runningBulks(ctx context.Context, node engine.SearchNode) (int64, error) {
	var tasks struct {
		Nodes map[string]struct {
			Tasks map[string]json.RawMessage `json:"tasks"`
		} `json:"nodes"`
	}
	if err := getJSON(ctx, node, "/_tasks?actions=indices:data/write/bulk*", &tasks); err != nil {
		return 0, err
	}
	var n int64
	for _, nd := range tasks.Nodes {
		n += int64(len(nd.Tasks))
	}
	return n, nil
}

// indexedDocs is the node's count of documents indexed into the
// workload's index (its primaries' indexing operations).
func indexedDocs(ctx context.Context, node engine.SearchNode) (int64, error) {
	var stats struct {
		All struct {
			Primaries struct {
				Indexing struct {
					IndexTotal *int64 `json:"index_total"`
				} `json:"indexing"`
			} `json:"primaries"`
		} `json:"_all"`
	}
	path := "/" + searchload.IndexName + "/_stats/indexing"
	if err := getJSON(ctx, node, path, &stats); err != nil {
		return 0, err
	}
	if stats.All.Primaries.Indexing.IndexTotal == nil {
		return 0, fmt.Errorf("GET %s: no _all.primaries.indexing.index_total", path)
	}
	return *stats.All.Primaries.Indexing.IndexTotal, nil
}

// getJSON reads the node's answer to GET path into v.
func getJSON(ctx context.Context, node engine.SearchNode, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, node.URL+path, nil)
	if err != nil {
		return err
	}
	hc := node.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d: %s", path, res.StatusCode, bytes.TrimSpace(body[:min(len(body), 300)]))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}
