package search

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
)

// Tests against real nodes: each start takes 20-60 s on 2 cores, so there
// are few, each checking several things.

// TestMain removes the shared test folder (/var/tmp) after the tests.
func TestMain(m *testing.M) { enginetest.Main(m, "search") }

// testOptions keep the nodes small.
var testOptions = map[string]string{optHeap: strconv.Itoa(512 << 20)}

// testOptionsOf are testOptions resolved for e, as a run's Config has them.
func testOptionsOf(e Engine) engine.Options { return e.Spec().MustResolveOptions(testOptions) }

// kind names an engine for enginetest's folders.
func kind(e Engine) enginetest.SQLEngine {
	return enginetest.SQLEngine{Name: string(e.flavor), Engine: e, Components: []string{Data, Logs}}
}

// need skips t unless a node of e can start here: root (the node runs as
// user tierbench, as the other servers' tests run theirs), java, the user
// and the bundled build.
func need(t *testing.T, e Engine) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root: the nodes run as OS user tierbench")
	}
	if err := e.Preflight(); err != nil {
		testenv.Skip(t, err)
	}
}

// twoTiers gives data and logs folders under different parents, as a
// placement that puts them on two tiers.
func twoTiers(t *testing.T, e Engine) map[string]string {
	t.Helper()
	k := kind(e)
	return map[string]string{Data: enginetest.Folders(t, k, "")[Data], Logs: enginetest.Folders(t, k, "")[Logs]}
}

// nodesFor lists live processes whose command line names dir (the
// runner's -dataPath, a distribution's -E path.data=).
func nodesFor(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if !bytes.Contains(cmd, []byte(dir)) {
			continue
		}
		if st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); bytes.Contains(st, []byte(") Z ")) {
			continue
		}
		out = append(out, e.Name()+" "+string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))[:80])
	}
	return out
}

// TestNodes starts each engine's node with data and logs on two tiers,
// under one durability mode each: the node runs as tierbench, listens on
// 127.0.0.1 only, answers with its version, indexes a small bulk with the
// run's index settings and with the other mode's, and its files land on
// the right tiers. Close leaves no process and nothing tracked; reopened
// on its folders (a cold restart), a node finds its documents.
func TestNodes(t *testing.T) {
	for _, tc := range []struct {
		e       Engine
		d       engine.Durability
		version string
		reopen  bool
	}{
		{OpenSearch(), engine.Sync, "OpenSearch 2.19.1", false},
		{Elasticsearch(), engine.Async, "Elasticsearch 6.8.23 (oss)", true},
	} {
		t.Run(string(tc.e.flavor), func(t *testing.T) {
			need(t, tc.e)
			dirs := twoTiers(t, tc.e)
			tracked := map[int]bool{}
			cfg := engine.Config{Dirs: dirs, Durability: tc.d, Options: testOptionsOf(tc.e), Track: func(pid int) func() {
				tracked[pid] = true
				return func() { delete(tracked, pid) }
			}}
			db, err := tc.e.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			d := db.(*DB)
			closed := false
			t.Cleanup(func() {
				if !closed {
					d.Close()
				}
			})
			if !tracked[d.PID()] {
				t.Errorf("node pid %d not tracked", d.PID())
			}
			if got := d.Version(); got != tc.version {
				t.Errorf("version %q, want %q", got, tc.version)
			}
			checkProcess(t, d.PID())
			checkLocked(t, d.url)
			for _, dir := range dirs {
				if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
					t.Errorf("%s: mode %v, want 0700", dir, st.Mode())
				}
			}

			s, err := d.NewSession(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			node := s.(engine.Search).SearchNode()
			if node.Flavor != tc.e.flavor || !strings.HasPrefix(node.URL, "http://127.0.0.1:") || node.Client == nil {
				t.Errorf("search node %+v", node)
			}
			// This run's mode, then the other one's settings on the same node.
			other := engine.Async
			if tc.d == engine.Async {
				other = engine.Sync
			}
			otherSet, err := tc.e.parseSettings(engine.Config{Durability: other, Options: testOptionsOf(tc.e)})
			if err != nil {
				t.Fatal(err)
			}
			for _, idx := range []struct {
				name     string
				settings map[string]any
			}{{"run-" + string(tc.d), node.IndexSettings}, {"run-" + string(other), otherSet.indexSettings()}} {
				durability := idx.settings["index.translog.durability"]
				bulkIndex(t, node, idx.name, idx.settings, 200)
				got := indexSetting(t, node, idx.name, "translog", "durability")
				if got != durability {
					t.Errorf("index %s: translog durability %q, want %q", idx.name, got, durability)
				}
			}
			s.Close()

			// The same node as a target (a node tierbench did not start, as
			// tierbench drive reaches one on a cluster): the index settings
			// are the target run's own, its cluster may have any name, and
			// closing it leaves the node running.
			target, err := tc.e.Open(context.Background(), engine.Config{Target: d.url, Durability: other, Options: testOptionsOf(tc.e)})
			if err != nil {
				t.Fatalf("open as a target: %v", err)
			}
			if got := target.(*DB).SearchNode(); got.IndexSettings["index.translog.durability"] != otherSet.indexSettings()["index.translog.durability"] ||
				got.URL != d.url || target.(*DB).Version() != tc.version {
				t.Errorf("target: node %+v, version %q", got, target.(*DB).Version())
			}
			if err := target.Close(); err != nil || d.Check() != nil {
				t.Errorf("close the target: %v; the node: %v", err, d.Check())
			}
			withUser := strings.Replace(d.url, "http://", "http://elastic@", 1)
			if _, err := tc.e.Open(context.Background(), engine.Config{Target: withUser, Durability: tc.d, Options: testOptionsOf(tc.e)}); err == nil || !strings.Contains(err.Error(), "no authentication") {
				t.Errorf("a target with a user: %v, want it refused", err)
			}

			// Data: the indices and their translog; logs: the node's own.
			dataFiles, logFiles := filesUnder(t, dirs[Data]), filesUnder(t, dirs[Logs])
			if !anyMatch(dataFiles, "/translog/translog-", ".tlog") || !anyMatch(dataFiles, "/indices/", ".si") {
				t.Errorf("no translog or segment in the data folder: %v", dataFiles)
			}
			for _, want := range []string{d.cluster + ".log", "gc.log", ConsoleLog} {
				if !anyMatch(logFiles, "", want) {
					t.Errorf("no %s in the logs folder: %v", want, logFiles)
				}
			}
			if anyMatch(dataFiles, "", ".log") || anyMatch(logFiles, "/indices/", "") {
				t.Errorf("files on the wrong tier: data %v, logs %v", dataFiles, logFiles)
			}

			closed = true
			if err := d.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if len(tracked) != 0 {
				t.Errorf("still tracked after Close: %v", tracked)
			}
			if left := nodesFor(dirs[Data]); len(left) != 0 {
				t.Errorf("processes left after Close: %v", left)
			}
			if !tc.reopen {
				return
			}
			// A cold restart reopens the same folders: the documents are there.
			db, err = tc.e.Open(context.Background(), cfg)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer func() {
				if err := db.Close(); err != nil {
					t.Errorf("close the reopened node: %v", err)
				}
			}()
			node = db.(*DB).SearchNode()
			var count struct{ Count int }
			if err := json.Unmarshal(call(t, node, http.MethodGet, "/run-*/_count", "", nil), &count); err != nil || count.Count != 400 {
				t.Errorf("after reopening: %d documents (%v), want 400", count.Count, err)
			}
		})
	}
}

// checkProcess checks that the node runs as tierbench and listens on
// 127.0.0.1 only (ss's view).
func checkProcess(t *testing.T, pid int) {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	_, uid, _ := strings.Cut(string(status), "\nUid:")
	want, _, _ := strings.Cut(strings.TrimSpace(uid), "\t")
	if u, _ := userID(serverUser); want != u {
		t.Errorf("node runs as uid %s, want %s's %s", want, serverUser, u)
	}
	out, err := exec.Command("ss", "-H", "-ltnp").Output()
	if err != nil {
		t.Logf("ss: %v: not checking the listening addresses", err)
		return
	}
	listening := 0
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, "pid="+strconv.Itoa(pid)+",") {
			continue
		}
		listening++
		f := strings.Fields(line)
		host, _, _ := net.SplitHostPort(f[3])
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() || ip.To4() == nil {
			t.Errorf("node listens on %s, not on loopback only", f[3])
		}
	}
	if listening != 2 {
		t.Errorf("node listens on %d sockets, want 2 (HTTP, transport):\n%s", listening, out)
	}
}

func userID(name string) (string, error) {
	out, err := exec.Command("id", "-u", name).Output()
	return strings.TrimSpace(string(out)), err
}

// bulkIndex creates index with settings and indexes n small documents in
// one bulk, refreshed, then checks the count.
func bulkIndex(t *testing.T, node engine.SearchNode, index string, settings map[string]any, n int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"settings": settings})
	call(t, node, http.MethodPut, "/"+index, "application/json", body)
	// Mapping types are gone from 7 on; 6.x needs one.
	action := `{"index":{}}`
	if strings.HasPrefix(node.Version, "6.") {
		action = `{"index":{"_type":"_doc"}}`
	}
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "%s\n{\"@timestamp\":\"2026-01-01T00:00:%02dZ\",\"status\":%d,\"message\":\"GET /page/%d\"}\n", action, i%60, 200+i%5, i)
	}
	var res struct {
		Errors bool  `json:"errors"`
		Items  []any `json:"items"`
	}
	if err := json.Unmarshal(call(t, node, http.MethodPost, "/"+index+"/_bulk?refresh=true", "application/x-ndjson", b.Bytes()), &res); err != nil {
		t.Fatal(err)
	}
	if res.Errors || len(res.Items) != n {
		t.Fatalf("bulk into %s: errors %v, %d items of %d", index, res.Errors, len(res.Items), n)
	}
	var count struct{ Count int }
	if err := json.Unmarshal(call(t, node, http.MethodGet, "/"+index+"/_count", "", nil), &count); err != nil || count.Count != n {
		t.Fatalf("count of %s: %d (%v), want %d", index, count.Count, err, n)
	}
}

// indexSetting reads index.<path> from GET /index/_settings.
func indexSetting(t *testing.T, node engine.SearchNode, index string, path ...string) any {
	t.Helper()
	var res map[string]struct {
		Settings struct {
			Index map[string]any `json:"index"`
		} `json:"settings"`
	}
	if err := json.Unmarshal(call(t, node, http.MethodGet, "/"+index+"/_settings", "", nil), &res); err != nil {
		t.Fatal(err)
	}
	var v any = res[index].Settings.Index
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

// call sends one request and returns the body of a 2xx answer.
func call(t *testing.T, node engine.SearchNode, method, path, contentType string, body []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, node.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := node.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s %v: %.500s", method, path, resp.Status, err, out)
	}
	return out
}

// filesUnder lists the regular files under dir, relative to it with a
// leading slash.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, "/"+rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// anyMatch reports whether a path contains part and ends with suffix.
func anyMatch(paths []string, part, suffix string) bool {
	for _, p := range paths {
		if strings.Contains(p, part) && strings.HasSuffix(p, suffix) {
			return true
		}
	}
	return false
}

// TestStartFailures opens nodes that cannot start: a heap larger than
// the machine's memory (the JVM fails at once), a taken HTTP port, and
// homes that are no distribution of the engine's kind. Each Open fails
// with what went wrong (the node's log's tail when it started) and leaves
// no process behind.
func TestStartFailures(t *testing.T) {
	es := Elasticsearch()
	need(t, es)
	bundledES, err := es.bundled()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		e    Engine
		opts map[string]string
		port bool // take the node's HTTP port first
		want []string
	}{
		{name: "opensearch heap beyond memory", e: OpenSearch(), opts: map[string]string{optHeap: strconv.Itoa(1 << 40)},
			want: []string{"did not start", "last lines of its log", "console.log"}},
		{name: "elasticsearch heap beyond memory", e: es, opts: map[string]string{optHeap: strconv.Itoa(1 << 40)},
			want: []string{"did not start", "last lines of its log"}},
		{name: "elasticsearch port taken", e: es, port: true,
			want: []string{"did not start", "last lines of its log", "BindHttpException"}},
		{name: "home of the other kind", e: OpenSearch(), opts: map[string]string{optHome: bundledES.dist.home},
			want: []string{"is an elasticsearch distribution", "use engine elasticsearch"}},
		{name: "home that is no distribution", e: es, opts: map[string]string{optHome: t.TempDir()},
			want: []string{"is not an elasticsearch distribution", "no executable bin/elasticsearch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			need(t, tc.e)
			dirs := twoTiers(t, tc.e)
			opts := map[string]string{optHeap: testOptions[optHeap]}
			for k, v := range tc.opts {
				opts[k] = v
			}
			if tc.port {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				taken := l.Addr().(*net.TCPAddr).Port
				// The first port Open gets is the HTTP port.
				free := freePorts
				freePorts = func(n int) ([]int, error) {
					ports, err := free(n)
					if err == nil {
						ports[0] = taken
					}
					return ports, err
				}
				defer func() { freePorts = free }()
			}
			db, err := tc.e.Open(context.Background(), engine.Config{Dirs: dirs, Durability: engine.Sync, Options: tc.e.Spec().MustResolveOptions(opts)})
			if err == nil {
				db.Close()
				t.Fatal("opened")
			}
			t.Logf("open: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q", w)
				}
			}
			if left := nodesFor(dirs[Data]); len(left) != 0 {
				t.Errorf("processes left after a failed Open: %v", left)
			}
		})
	}
}

// killEnv hands the kill -9 test's folders to its helper process.
const killEnv = "TIERBENCH_SEARCH_KILL_TEST"

// TestKill9LeavesNoJVM starts a node in a helper process that records it
// in a ledger as tierbench does, kills the helper with -9 and then runs
// the ledger's cleanup (what `tierbench cleanup` does): no JVM of that
// node may be left.
func TestKill9LeavesNoJVM(t *testing.T) {
	e := Elasticsearch()
	need(t, e)
	dirs := twoTiers(t, e)
	state := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9HelperProcess$", "-test.v")
	cmd.Env = append(os.Environ(), killEnv+"="+strings.Join([]string{state, dirs[Data], dirs[Logs]}, ","))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "NODE READY") || strings.Contains(sc.Text(), "FAIL") {
				ready <- sc.Text()
			}
		}
		close(ready)
	}()
	select {
	case line := <-ready:
		if !strings.HasPrefix(line, "NODE READY") {
			t.Fatalf("helper: %s", line)
		}
	case <-time.After(startTimeout + 30*time.Second):
		cmd.Process.Kill()
		t.Fatal("the helper's node did not start")
	}
	if len(nodesFor(dirs[Data])) == 0 {
		t.Fatal("no node running before the kill")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	ledger, err := tier.OpenLedger(state)
	if err != nil {
		t.Fatal(err)
	}
	left, err := ledger.Leftovers()
	kinds := map[string]int{}
	for _, r := range left {
		kinds[r.Kind]++
	}
	if err != nil || len(left) != 2 || kinds[tier.KindProcess] != 1 || kinds[tier.KindPortLock] != 1 {
		t.Fatalf("ledger leftovers %v, %v: want the node's process and its port lock", left, err)
	}
	lock := left[0].Path
	if left[1].Kind == tier.KindPortLock {
		lock = left[1].Path
	}
	if _, err := ledger.Cleanup(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(nodesFor(dirs[Data])) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := nodesFor(dirs[Data]); len(left) != 0 {
		t.Errorf("processes left after kill -9 and cleanup: %v", left)
	}
	if out, err := exec.Command("nft", "list", "table", "inet", lock).CombinedOutput(); err == nil {
		t.Errorf("port lock %s left after cleanup:\n%s", lock, out)
	}
}

// TestKill9HelperProcess is TestKill9LeavesNoJVM's tierbench: it opens a
// node with its pid in a ledger, says so, and waits to be killed.
func TestKill9HelperProcess(t *testing.T) {
	v := os.Getenv(killEnv)
	if v == "" {
		t.Skip("run by TestKill9LeavesNoJVM")
	}
	parts := strings.Split(v, ",")
	ledger, err := tier.OpenLedger(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	track := func(pid int) func() {
		r, err := ledger.Intend(tier.ProcessResource(pid, "engine server"))
		if err != nil {
			t.Fatal(err)
		}
		return func() { ledger.Done(r) }
	}
	scratch := filepath.Join(filepath.Dir(parts[1]), "scratch")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Elasticsearch().Open(context.Background(), engine.Config{Dirs: map[string]string{Data: parts[1], Logs: parts[2]},
		Durability: engine.Sync, Options: testOptionsOf(Elasticsearch()), Track: track, LockPorts: ledger.LockPorts, Scratch: scratch})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("NODE READY")
	time.Sleep(10 * time.Minute)
}

// checkLocked checks that another local user (nobody) cannot connect to
// the node's HTTP port: the kernel refuses it (server.LockPorts).
func checkLocked(t *testing.T, url string) {
	t.Helper()
	port := url[strings.LastIndex(url, ":")+1:]
	cmd := exec.Command("bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/"+port)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("user nobody connected to the node at %s: %s", url, out)
	}
}
