package search

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/reach"
	"github.com/tierbench/tierbench/host/tcpport"
)

// ConsoleLog is the node's standard output and error, in its logs folder:
// where a node that did not start says why.
const ConsoleLog = "console.log"

// freePorts picks distinct free loopback ports (two calls of a one-port
// pick may get the same port back, and the node then fails to bind its
// second); a variable so a test can hand out a taken one.
var freePorts = tcpport.FreeN

// DB is a running node.
type DB struct {
	proc     *server.Process
	closers  server.Closers // what Open got, given back by Close
	flavor   engine.SearchFlavor
	set      settings
	url      string
	cluster  string
	client   *http.Client
	version  string // "2.19.1"
	distName string // "OpenSearch", "Elasticsearch"
	build    string // Elasticsearch's build_flavor ("oss", "default"), if it says
}

var (
	_ engine.DB      = (*DB)(nil)
	_ engine.Search  = (*DB)(nil)
	_ engine.Checker = (*DB)(nil)
	_ engine.PIDer   = (*DB)(nil)
)

// Open starts a node on cfg.Dirs' data and logs folders and waits until
// its cluster is yellow or green. Folders a node had before (a cold
// restart) are opened with their indices.
func (e Engine) Open(ctx context.Context, cfg engine.Config) (_ engine.DB, err error) {
	set, err := e.parseSettings(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Target != "" {
		return e.openTarget(ctx, cfg.Target, set)
	}
	dirs, err := server.RunDirs(cfg.Dirs, Data, Logs)
	if err != nil {
		return nil, err
	}
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	l, err := e.launchFor(set)
	if err != nil {
		return nil, err
	}
	user, err := runAs()
	if err != nil {
		return nil, err
	}
	if err := server.OwnFolders(ctx, "the search node", user, dirs...); err != nil {
		return nil, err
	}
	if err := checkInstall(ctx, user, l); err != nil {
		return nil, err
	}
	d := &DB{flavor: e.flavor, set: set}
	defer d.closers.CloseOnError(&err)
	n := node{java: java, data: dirs[0], logs: dirs[1], heap: set.javaOpts()}
	if n.private, err = server.PrivateFolder(ctx, "the search node", cfg.Scratch, "search", user); err != nil {
		return nil, err
	}
	d.closers.RemoveAll(n.private)
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	n.httpPort, n.transportPort = ports[0], ports[1]
	n.cluster = clusterName(n.data)
	// Neither OpenSearch without its security plugin nor Elasticsearch
	// OSS can require a password: the kernel keeps other local users off
	// both ports instead.
	uid, _, err := proc.LookupUser(user)
	if err != nil {
		return nil, err
	}
	unlock, err := server.LockPorts(cfg, n.cluster, []int{n.httpPort, n.transportPort}, []int{uid})
	if err != nil {
		return nil, err
	}
	d.closers.Add("reopen the node's ports", unlock)
	d.cluster, d.url = n.cluster, "http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(n.httpPort))
	spec := server.Spec{Name: string(e.flavor), Dir: n.data, Log: filepath.Join(n.logs, ConsoleLog), User: user, Track: cfg.Track, Memory: cfg.Memory, SyncDelays: cfg.SyncDelays}
	if spec.Path, spec.Args, spec.Env, err = l.prepare(n, user); err != nil {
		return nil, err
	}
	if d.proc, err = server.Start(spec); err != nil {
		return nil, err
	}
	d.closers.Add("stop "+string(e.flavor), d.stop)
	d.client = newClient(64)
	d.closers.Do(d.client.CloseIdleConnections)
	if err := d.proc.WaitReady(ctx, startTimeout, d.ready); err != nil {
		return nil, withExceptions(err, spec.Log)
	}
	return d, nil
}

// exceptionLine is the first line of a Java exception in a log: its class
// (and message), or a "Caused by:" of it; not its stack frames.
var exceptionLine = regexp.MustCompile(`^(Caused by: )?([a-z][a-z0-9_]*\.)+[A-Za-z0-9_$]*(Exception|Error)\b`)

// withExceptions adds to a failed start's error the exceptions its log
// names, which a node prints before many lines of stack frames and of
// shutting down, so the log's tail alone often misses them (a taken port's
// BindHttpException).
func withExceptions(err error, log string) error {
	b, rerr := os.ReadFile(log)
	if rerr != nil {
		return err
	}
	var found []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if exceptionLine.MatchString(line) && !slices.Contains(found, line) {
			found = append(found, line)
		}
		if len(found) == 6 {
			break
		}
	}
	if len(found) == 0 {
		return err
	}
	return fmt.Errorf("%w\nexceptions in its log:\n%s", err, strings.Join(found, "\n"))
}

// prepare writes the run's config in its private folder and returns the
// command that starts the node.
func (l launch) prepare(n node, user string) (path string, args, env []string, err error) {
	for _, sub := range []string{"conf", "base", "tmp"} {
		if err := os.Mkdir(filepath.Join(n.private, sub), 0o700); err != nil {
			return "", nil, nil, fmt.Errorf("run config: %w", err)
		}
	}
	if l.dist == nil {
		err = writeRunnerConf(n)
		path, args = l.runnerCommand(n)
	} else {
		err = l.dist.copyConf(n)
		path, args, env = l.dist.distCommand(n)
	}
	if err == nil && user != "" {
		err = proc.ChownAll(user, n.private)
	}
	if err != nil {
		return "", nil, nil, fmt.Errorf("run config: %w", err)
	}
	return path, args, env, nil
}

// checkInstall checks that the node's user can enter the folder it starts
// from (the build in a root-only home folder would fail with a bare
// ClassNotFoundException).
func checkInstall(ctx context.Context, user string, l launch) error {
	dir := l.runnerDir
	if l.dist != nil {
		dir = l.dist.home
	}
	return reach.CheckEnterable(ctx, "the search node", user, filepath.Join(dir, "lib"))
}

// clusterName names the cluster after its data folder, which is the
// run's own: the ready check knows its node by it, never someone else's
// on a reused port, and a node reopened on the same folder (cache: cold)
// is the same cluster.
func clusterName(data string) string {
	sum := sha256.Sum256([]byte(data))
	return "tierbench-" + hex.EncodeToString(sum[:6])
}

// newClient is an HTTP client of the node, keeping up to conns idle
// connections. It never goes through a proxy; requests are bounded by
// their contexts, since a bulk on a slow tier may take long.
func newClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}}
}

// ready reports whether the node answers as this run's cluster and its
// cluster is at least yellow (elected, state recovered), and records the
// node's version.
func (d *DB) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var root struct {
		ClusterName string `json:"cluster_name"`
		Version     struct {
			Number       string `json:"number"`
			Distribution string `json:"distribution"`
			BuildFlavor  string `json:"build_flavor"`
		} `json:"version"`
	}
	if err := d.getJSON(ctx, "/", &root); err != nil {
		return err
	}
	if d.cluster != "" && root.ClusterName != d.cluster {
		return fmt.Errorf("%s answers for cluster %q, not this run's %s", d.url, root.ClusterName, d.cluster)
	}
	var health struct {
		Status string `json:"status"`
	}
	if err := d.getJSON(ctx, "/_cluster/health?wait_for_status=yellow&timeout=2s", &health); err != nil {
		return err
	}
	d.version, d.build = root.Version.Number, root.Version.BuildFlavor
	d.distName = "Elasticsearch"
	if root.Version.Distribution == "opensearch" {
		d.distName = "OpenSearch"
	}
	return nil
}

// getJSON GETs path and decodes a 200 answer into v.
func (d *DB) getJSON(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url+path, nil)
	if err != nil {
		return err
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %.200s", path, resp.Status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

// SearchNode is how workloads and tools reach the node.
func (d *DB) SearchNode() engine.SearchNode { return d.searchNode(d.client) }

func (d *DB) searchNode(c *http.Client) engine.SearchNode {
	return engine.SearchNode{URL: d.url, Client: c, Flavor: d.flavor, Version: d.version, IndexSettings: d.set.indexSettings()}
}

// Version names the node's distribution and version ("OpenSearch
// 2.19.1", "Elasticsearch 6.8.23 (oss)"), as GET / says.
func (d *DB) Version() string {
	v := d.distName + " " + d.version
	if d.build != "" {
		v += " (" + d.build + ")"
	}
	return v
}

// URL is the node's HTTP base URL.
func (d *DB) URL() string { return d.url }

// PID is the node's process id: its JVM (a distribution's script execs
// it; Elasticsearch 8's is the launcher JVM, whose child is the node); 0
// for a target.
func (d *DB) PID() int {
	if d.proc == nil {
		return 0
	}
	return d.proc.PID()
}

// Check reports a node that has exited, with the tail of its console log
// (nil for a target: its server is not ours to watch).
func (d *DB) Check() error {
	if d.proc == nil {
		return nil
	}
	return d.proc.Died()
}

// NewSession returns a client's handle on the node: the same node with an
// HTTP client of its own, so no two clients share a connection pool.
func (d *DB) NewSession(context.Context) (engine.Session, error) {
	if err := d.Check(); err != nil {
		return nil, fmt.Errorf("%s session: %w", d.flavor, err)
	}
	return &Session{db: d, client: newClient(2)}, nil
}

// Close stops the node (SIGTERM, killed after a grace) and removes its
// private config folder; the component folders are left for the caller.
// A node that had already exited is reported with its log.
func (d *DB) Close() error {
	died := d.Check()
	err := d.closers.Close()
	if died != nil {
		return fmt.Errorf("close %s: node had already stopped: %w", d.flavor, died)
	}
	return err
}

// stop stops the node. It reports what went wrong in stopping it (a kill
// after the grace), not a death before, which Close reports.
func (d *DB) stop() error {
	if err := d.proc.Stop(stopGrace); err != nil {
		return d.proc.WithLog(err)
	}
	return nil
}

// Session is one client's handle on the node.
type Session struct {
	db     *DB
	client *http.Client
}

var (
	_ engine.Search    = (*Session)(nil)
	_ engine.Explainer = (*Session)(nil)
)

// SearchNode is the node, reached through the session's own client.
func (s *Session) SearchNode() engine.SearchNode { return s.db.searchNode(s.client) }

// Explain adds the node's log to an error when the node died or dropped
// the connection, and marks a full tier (the node's "No space left on
// device") as such.
func (s *Session) Explain(err error) error {
	return s.db.proc.Explain(err, server.ConnLost(err))
}

// Close closes the session's connections.
func (s *Session) Close() error {
	s.client.CloseIdleConnections()
	return nil
}
