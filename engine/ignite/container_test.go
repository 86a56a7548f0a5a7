package ignite

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/driver/stream"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/tcpport"

	"github.com/tierbench/tierbench/host/logtail"
)

// podSub is something a pod gets from Kubernetes or its image (a
// variable, a peer's name, a port, a mount, the image's jars) and what
// stands for it on this machine.
type podSub struct{ pod, here string }

// hereArgs are a pod's arguments with each sub's pod text replaced by its
// here text: in one pass, longest pod text first, so no replacement is
// replaced again and no shorter text cuts into a longer one.
func hereArgs(args []string, subs []podSub) []string {
	subs = slices.Clone(subs)
	slices.SortStableFunc(subs, func(a, b podSub) int { return len(b.pod) - len(a.pod) })
	pairs := make([]string, 0, 2*len(subs))
	for _, s := range subs {
		pairs = append(pairs, s.pod, s.here)
	}
	r := strings.NewReplacer(pairs...)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}

// TestPodCommandLines runs the command lines Container and ClientContainer
// give a cluster's pods here, with only what Kubernetes and the image
// provide substituted: one server node with persistence, then the client,
// whose driver/stream lines must make a whole run.
func TestPodCommandLines(t *testing.T) {
	l := needIgnite(t)
	cfg := engine.ContainerConfig{Durability: engine.Sync, Name: "tb-x-engine",
		Options:   Engine{}.Spec().MustResolveOptions(map[string]string{optNodes: "1", optHeap: "268435456", optRegionSize: "268435456"}),
		Placement: map[string]string{Persistence: "t", WAL: "t", WALArchive: "t"}}
	run := engine.ClientRun{Work: engine.CacheWork{Mix: engine.CachePutGet, Keys: 200, ValueSize: 64},
		Preload: 200, Clients: 2, Warmup: time.Second, Duration: 2 * time.Second}
	srv, err := Engine{}.Container(cfg)
	if err != nil {
		t.Fatalf("Container: %v", err)
	}
	cli, err := Engine{}.ClientContainer(cfg, run)
	if err != nil {
		t.Fatalf("ClientContainer: %v", err)
	}
	if len(srv.PeerPorts) != 1 {
		t.Fatalf("server peer ports %v, want one (communication)", srv.PeerPorts)
	}
	for _, c := range []engine.Container{srv, cli} {
		if !slices.Equal(c.Command, []string{"java"}) || c.FilesDir != srv.FilesDir {
			t.Fatalf("container: command %q, files in %s", c.Command, c.FilesDir)
		}
		// Kubernetes expands $(NAME) only for the container's own variables.
		for _, m := range regexp.MustCompile(`\$\(([A-Z_]+)\)`).FindAllStringSubmatch(strings.Join(c.Args, " "), -1) {
			if !slices.ContainsFunc(c.Env, func(e engine.EnvVar) bool { return e.Name == m[1] }) {
				t.Errorf("args refer to $(%s), which the container's Env lacks", m[1])
			}
		}
	}

	// The pod's filesystem: the mounted launcher jars, the claims (which
	// exist once mounted) and the scratch folder; nothing under them.
	base := t.TempDir()
	files := filepath.Join(base, "files")
	for rel, b := range srv.Files {
		p := filepath.Join(files, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ports, err := tcpport.FreeN(3) // the server's discovery and communication ports, the client's communication port
	if err != nil {
		t.Fatal(err)
	}
	itoa := strconv.Itoa
	common := []podSub{
		{"$(POD_NAME)", "node0"},
		{"$(POD_IP)", loopback},
		{cfg.Peer(0) + ":" + itoa(srv.Port), loopback + ":" + itoa(ports[0])},
		{"--disco-port=" + itoa(srv.Port), "--disco-port=" + itoa(ports[0])},
		{srv.FilesDir, files},
		{imageLibs, filepath.Join(l.dir, "lib", "*")},
	}
	srvSubs := append(slices.Clone(common), podSub{"--comm-port=" + itoa(srv.PeerPorts[0]), "--comm-port=" + itoa(ports[1])})
	cliSubs := append(slices.Clone(common), podSub{"--comm-port=" + itoa(srv.PeerPorts[0]), "--comm-port=" + itoa(ports[2])})
	srvScratch, cliScratch := filepath.Join(base, "server-scratch"), filepath.Join(base, "client-scratch")
	srvSubs = append(srvSubs, podSub{srv.Scratch, srvScratch})
	cliSubs = append(cliSubs, podSub{cli.Scratch, cliScratch})
	dirs := []string{srvScratch, cliScratch}
	for comp, m := range srv.Mounts {
		dirs = append(dirs, filepath.Join(base, "claim-"+comp))
		srvSubs = append(srvSubs, podSub{m, dirs[len(dirs)-1]})
	}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srvArgs, cliArgs := hereArgs(srv.Args, srvSubs), hereArgs(cli.Args, cliSubs)
	for _, a := range append(slices.Clone(srvArgs), cliArgs...) {
		for _, left := range []string{"$(", cfg.Name, "/opt/", podMounts} {
			if strings.Contains(a, left) {
				t.Fatalf("argument %q still has the pod's %q", a, left)
			}
		}
	}
	t.Logf("server: java %s", strings.Join(srvArgs[slices.Index(srvArgs, mainClass):], " "))
	t.Logf("client: java %s", strings.Join(cliArgs[slices.Index(cliArgs, mainClass):], " "))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()

	// The server: stdout carries only its ready line; stderr (Ignite's
	// console) can be large, so both go to files.
	srvOut, srvErr := filepath.Join(base, "server.stdout"), filepath.Join(base, "server.stderr")
	cmd := exec.Command(l.java, srvArgs...)
	for path, dst := range map[string]*io.Writer{srvOut: &cmd.Stdout, srvErr: &cmd.Stderr} {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		*dst = f
	}
	proc.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var exitErr error
	go func() { exitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = proc.KillGroup(cmd.Process.Pid)
		<-exited
	})
	for ready := false; !ready; {
		select {
		case <-exited:
			t.Fatalf("the server exited before it was ready (%v); its stderr's tail:\n%s", exitErr, logtail.File(srvErr, 30))
		case <-ctx.Done():
			t.Fatalf("the server was not ready (%v); its stderr's tail:\n%s", ctx.Err(), logtail.File(srvErr, 30))
		case <-time.After(100 * time.Millisecond):
		}
		b, _ := os.ReadFile(srvOut)
		ready = strings.Contains(string(b), readyLine("node0"))
	}
	t.Logf("server ready after %s", time.Since(start).Round(time.Millisecond))

	// The client: its stdout is the run, as a pod's log.
	cliErr := filepath.Join(base, "client.stderr")
	ccmd := exec.CommandContext(ctx, l.java, cliArgs...)
	f, err := os.Create(cliErr)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ccmd.Stderr = f
	proc.OwnGroup(ccmd)
	stdout, err := ccmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := ccmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := stream.NewReader("the pod's Ignite client", driver.Config{Ops: []string{"put", "get"}, Warmup: run.Warmup, Duration: run.Duration})
	loaded := int64(-1)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		if n, ok := stream.LoadedRecords(sc.Bytes()); ok {
			loaded = n
		}
		r.Line(sc.Bytes())
	}
	_, _ = io.Copy(io.Discard, stdout)
	res, err := r.Result(ccmd.Wait())
	t.Logf("client done after %s", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("the client's run: %v\nits stderr's tail:\n%s\nthe server's:\n%s", err, logtail.File(cliErr, 30), logtail.File(srvErr, 15))
	}
	if loaded != run.Preload {
		t.Errorf("loaded %d records, want %d", loaded, run.Preload)
	}
	for i, want := range []string{"put", "get"} {
		if o := res.Measured.ByOp[i]; o.Name != want || o.Ops <= 0 {
			t.Errorf("measured op %d: %s with %d ops, want %s with some", i, o.Name, o.Ops, want)
		}
	}
	if !r.Done() {
		t.Error("the client's output did not end with done")
	}
	t.Logf("measured %d ops (%d put, %d get), %d errors", res.Measured.Ops, res.Measured.ByOp[0].Ops, res.Measured.ByOp[1].Ops, res.Measured.Errors)
}
