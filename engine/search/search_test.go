package search

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/testenv"
)

// Tests that start no node.

// wantError fails t unless err says want (or, with want empty, unless err
// is nil), and reports whether the case goes on to check a result.
func wantError(t *testing.T, err error, want string) bool {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatal(err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("error %v, want one saying %q", err, want)
	}
	return want == ""
}

func TestParseSettings(t *testing.T) {
	e := OpenSearch()
	for _, tc := range []struct {
		name    string
		d       engine.Durability
		opts    map[string]string
		want    map[string]any
		wantErr string
	}{
		{name: "sync defaults", d: engine.Sync, want: map[string]any{
			"index.number_of_shards": 1, "index.number_of_replicas": 0, "index.refresh_interval": "1s",
			"index.translog.durability": "request"}},
		{name: "async", d: engine.Async, opts: map[string]string{"shards": "3", "refresh_interval": "-1"}, want: map[string]any{
			"index.number_of_shards": 3, "index.number_of_replicas": 0, "index.refresh_interval": "-1",
			"index.translog.durability": "async", "index.translog.sync_interval": "5s"}},
		{name: "nosync", d: engine.NoSync, wantErr: "not supported"},
		{name: "small heap", d: engine.Sync, opts: map[string]string{"heap": "134217728"}, wantErr: "at least 256MiB"},
		{name: "no shards", d: engine.Sync, opts: map[string]string{"shards": "0"}, wantErr: "from 1 to 1024"},
		{name: "negative replicas", d: engine.Sync, opts: map[string]string{"replicas": "-1"}, wantErr: "from 0 to 8"},
		{name: "refresh without unit", d: engine.Sync, opts: map[string]string{"refresh_interval": "5"}, wantErr: `refresh_interval "5" is not a duration`},
		{name: "unknown option", d: engine.Sync, opts: map[string]string{"cache": "1"}, wantErr: "unknown option"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A bad value is refused where the Config is built, a bad
			// mode when the settings are made of it.
			o, err := e.Spec().ResolveOptions(tc.opts)
			var s settings
			if err == nil {
				s, err = e.parseSettings(engine.Config{Durability: tc.d, Options: o})
			}
			if !wantError(t, err, tc.wantErr) {
				return
			}
			if got := s.indexSettings(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("index settings %v, want %v", got, tc.want)
			}
			if got := s.javaOpts(); !reflect.DeepEqual(got, []string{"-Xms1024m", "-Xmx1024m", "-XX:MaxDirectMemorySize=536870912", "-XX:-UsePerfData"}) {
				t.Errorf("JVM flags %v, want the default 1GiB heap, half of it of direct memory and no perf data", got)
			}
		})
	}
}

func TestSpecs(t *testing.T) {
	for _, e := range []Engine{OpenSearch(), Elasticsearch()} {
		s := e.Spec()
		if s.Name != string(e.flavor) || !s.Serves(engine.ModelSearch) || !s.HasComponent(Data) || !s.HasComponent(Logs) {
			t.Errorf("%s: spec %+v", e.flavor, s)
		}
		if s.MaxClients == 0 || s.MaxClientsWhy == "" {
			t.Errorf("%s: no client bound with its reason", e.flavor)
		}
		if heap, _ := s.Option(optHeap); !heap.Memory {
			t.Errorf("%s: heap is not a memory option", e.flavor)
		}
		// A memory limit must hold the JVM beside its heap: the direct
		// memory its flags allow and its own, or the node stalls at the
		// limit or is killed there (exit 137 in a pod).
		o, err := s.ResolveOptions(map[string]string{optHeap: "2GiB"})
		if err != nil {
			t.Fatal(err)
		}
		if need, what := s.MemoryNeedOf(o); need != 2<<30+1<<30+256<<20 || len(what) != 3 {
			t.Errorf("%s: a 2GiB heap needs %d bytes (%v), want 3.25GiB: heap, half of it of direct memory, 256MiB of the JVM's own", e.flavor, need, what)
		}
		for _, m := range s.Modes {
			if !strings.Contains(m.Doc, "crash") {
				t.Errorf("%s %s: the doc does not say what a crash loses", e.flavor, m.Durability)
			}
		}
	}
}

func TestRewriteJVMOptions(t *testing.T) {
	in := strings.Join([]string{
		"-XX:HeapDumpPath=data",
		"-XX:ErrorFile=logs/hs_err_pid%p.log",
		"8:-Xloggc:logs/gc.log",
		"9-:-Xlog:gc*,gc+age=trace,safepoint:file=logs/gc.log:utctime,pid,tags:filecount=32,filesize=64m",
		"-XX:HeapDumpPath=/var/lib/elasticsearch",
		"-Djava.io.tmpdir=${ES_TMPDIR}",
	}, "\n")
	want := strings.Join([]string{
		"-XX:HeapDumpPath=/t/data",
		"-XX:ErrorFile=/t/logs/hs_err_pid%p.log",
		"8:-Xloggc:/t/logs/gc.log",
		"9-:-Xlog:gc*,gc+age=trace,safepoint:file=/t/logs/gc.log:utctime,pid,tags:filecount=32,filesize=64m",
		"-XX:HeapDumpPath=/var/lib/elasticsearch",
		"-Djava.io.tmpdir=${ES_TMPDIR}",
	}, "\n")
	if got := rewriteJVMOptions(in, "/t/data", "/t/logs"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestInspect checks what a home folder must hold, with fake
// distributions: a bad one is refused with a sentence that says why.
func TestInspect(t *testing.T) {
	root := t.TempDir()
	fake := func(name, script string, jars ...string) string {
		home := filepath.Join(root, name)
		for _, d := range []string{"bin", "lib"} {
			if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if script != "" {
			if err := os.WriteFile(filepath.Join(home, "bin", script), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, j := range jars {
			if err := os.WriteFile(filepath.Join(home, "lib", j), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return home
	}
	es8 := fake("es8", "elasticsearch", "elasticsearch-8.15.0.jar", "elasticsearch-x-content-8.15.0.jar")
	if err := os.MkdirAll(filepath.Join(es8, "modules", "x-pack-security"), 0o755); err != nil {
		t.Fatal(err)
	}
	os2 := fake("os2", "opensearch", "opensearch-2.19.1.jar")
	if err := os.MkdirAll(filepath.Join(os2, "jdk", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(os2, "jdk", "bin", "java"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		home    string
		flavor  engine.SearchFlavor
		want    distribution
		wantErr string
	}{
		{name: "elasticsearch 8", home: es8, flavor: engine.FlavorElasticsearch,
			want: distribution{home: es8, flavor: engine.FlavorElasticsearch, version: "8.15.0", security: "xpack.security.enabled=false"}},
		{name: "opensearch 2 with its jdk", home: os2, flavor: engine.FlavorOpenSearch,
			want: distribution{home: os2, flavor: engine.FlavorOpenSearch, version: "2.19.1", bundledJDK: true}},
		{name: "other flavor", home: es8, flavor: engine.FlavorOpenSearch, wantErr: "is an elasticsearch distribution (it has bin/elasticsearch, not bin/opensearch): use engine elasticsearch"},
		{name: "missing", home: filepath.Join(root, "nope"), flavor: engine.FlavorElasticsearch, wantErr: "has no executable bin/elasticsearch"},
		{name: "no server jar", home: fake("nojar", "opensearch", "lucene-core-9.12.1.jar"), flavor: engine.FlavorOpenSearch, wantErr: "its lib/ has no opensearch-X.Y.Z.jar"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := inspect(tc.home, tc.flavor)
			if !wantError(t, err, tc.wantErr) {
				return
			}
			if *d != tc.want {
				t.Errorf("got %+v, want %+v", *d, tc.want)
			}
		})
	}
}

// TestDistCommand checks the environment and settings a distribution is
// started with.
func TestDistCommand(t *testing.T) {
	d := &distribution{home: "/opt/es", flavor: engine.FlavorElasticsearch, version: "8.15.0", security: "xpack.security.enabled=false"}
	n := node{java: "/usr/bin/java", data: "/t/data", logs: "/t/logs", private: "/p", httpPort: 9201, transportPort: 9301,
		cluster: "tierbench-x", heap: []string{"-Xms512m", "-Xmx512m"}}
	path, args, env := d.distCommand(n)
	if path != "/opt/es/bin/elasticsearch" {
		t.Errorf("script %s", path)
	}
	cmd := strings.Join(args, " ")
	for _, want := range []string{"-E path.data=/t/data", "-E path.logs=/t/logs", "-E network.host=127.0.0.1", "-E http.port=9201",
		"-E transport.port=9301", "-E discovery.type=single-node", "-E cluster.name=tierbench-x", "-E xpack.security.enabled=false"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("arguments %q lack %q", cmd, want)
		}
	}
	e := strings.Join(env, " ")
	for _, want := range []string{"ES_PATH_CONF=/p/conf", "ES_TMPDIR=/p/tmp", "ES_JAVA_OPTS=-Xms512m -Xmx512m", "JAVA_HOME="} {
		if !strings.Contains(e, want) {
			t.Errorf("environment %q lacks %q", e, want)
		}
	}
}

// TestPreflightNamesJava: without java, Preflight names the package that
// installs it.
func TestPreflightNamesJava(t *testing.T) {
	saved := javaCandidates
	javaCandidates = []string{"/nonexistent/bin/java"}
	t.Cleanup(func() { javaCandidates = saved })
	t.Setenv("JAVA_HOME", "")
	for _, e := range []Engine{OpenSearch(), Elasticsearch()} {
		if err := e.Preflight(); err == nil || !strings.Contains(err.Error(), "apt-get install openjdk-17-jre-headless") {
			t.Errorf("%s: preflight without java: %v", e.flavor, err)
		}
	}
}

// TestPreflightSeesHome checks preflight with option home judges the named
// distribution, not the bundled node.
func TestPreflightSeesHome(t *testing.T) {
	if _, err := findJava(); err != nil {
		testenv.Skip(t, "java not installed")
	}
	if _, err := runAs(); err != nil {
		testenv.Skip(t, err)
	}
	dir := t.TempDir()
	err := OpenSearch().PreflightOptions(OpenSearch().Spec().MustResolveOptions(map[string]string{optHome: dir}))
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("preflight with home %s (not a distribution): %v; want an error naming it", dir, err)
	}
}
