package search

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/host/proc"
)

// What a node is started from: the bundled build of java/opensearch (the
// runner's jars, the Elasticsearch OSS distribution), or a distribution
// folder the study names (option home).

// The build java/opensearch makes (`make setup`: mvn package).
const (
	jarName     = "tierbench-opensearch.jar"
	mainClass   = "io.tierbench.opensearch.Main"
	bundledES   = "elasticsearch-6.8.23"
	buildDirEnv = "TIERBENCH_OPENSEARCH_DIR"
)

// serverUser is the OS user nodes run as when tierbench is root:
// Elasticsearch refuses root, and a node other local users can reach must
// not hold it. `make setup` makes it.
const serverUser = "tierbench"

// javaCandidates are where java is looked for after $JAVA_HOME.
var javaCandidates = []string{"java", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java", "/usr/bin/java"}

// findJava finds a java binary, or names the package that installs one.
func findJava() (string, error) {
	cands := javaCandidates
	if home := os.Getenv("JAVA_HOME"); home != "" {
		cands = append([]string{filepath.Join(home, "bin", "java")}, cands...)
	}
	return proc.Find("openjdk-17-jre-headless", cands...)
}

// javaHome is the JDK folder of a java binary (its symlinks followed), for
// the distributions' scripts, which look for $JAVA_HOME/bin/java.
func javaHome(java string) string {
	if r, err := filepath.EvalSymlinks(java); err == nil {
		java = r
	}
	return filepath.Dir(filepath.Dir(java))
}

// runAs is the OS user the node runs as: tierbench's own user when not
// root (which owns every folder already), else serverUser.
func runAs() (string, error) {
	if os.Geteuid() != 0 {
		return "", nil
	}
	if _, _, err := proc.LookupUser(serverUser); err != nil {
		return "", fmt.Errorf("search nodes run as OS user %s, which does not exist: run `make setup`, or useradd --system --user-group --no-create-home --shell /usr/sbin/nologin %s", serverUser, serverUser)
	}
	return serverUser, nil
}

// buildDirs lists the folders the build is looked for in (server.BuildDirs).
func buildDirs() []string { return server.BuildDirs("opensearch", buildDirEnv) }

// findBuilt returns the first build folder holding every one of parts.
func findBuilt(parts ...string) (string, bool) {
	for _, d := range buildDirs() {
		ok := true
		for _, p := range parts {
			if _, err := os.Stat(filepath.Join(d, p)); err != nil {
				ok = false
				break
			}
		}
		if ok {
			abs, err := filepath.Abs(d)
			return abs, err == nil
		}
	}
	return "", false
}

// errNotBuilt says how to get the bundled node.
func errNotBuilt(what string) error {
	return fmt.Errorf("%s is not built: run `make setup` (mvn package in java/opensearch) and, for an installed tierbench, `make install`; or set %s to the folder holding it: %w",
		what, buildDirEnv, proc.ErrNotInstalled)
}

// launch is how one node is started: the runner (dist nil) or a
// distribution's script.
type launch struct {
	runnerDir string // holds jarName and lib/
	dist      *distribution
}

// bundled returns the engine's own node: the runner for opensearch, the
// OSS distribution for elasticsearch.
func (e Engine) bundled() (launch, error) {
	if e.flavor == engine.FlavorOpenSearch {
		dir, ok := findBuilt(jarName, "lib")
		if !ok {
			return launch{}, errNotBuilt("the OpenSearch runner java/opensearch/target/" + jarName)
		}
		return launch{runnerDir: dir}, nil
	}
	dir, ok := findBuilt(filepath.Join(bundledES, "bin", "elasticsearch"))
	if !ok {
		return launch{}, errNotBuilt("Elasticsearch OSS java/opensearch/target/" + bundledES)
	}
	d, err := inspect(filepath.Join(dir, bundledES), e.flavor)
	return launch{dist: d}, err
}

// launchFor returns what a run with settings s starts.
func (e Engine) launchFor(s settings) (launch, error) {
	if s.home == "" {
		return e.bundled()
	}
	d, err := inspect(s.home, e.flavor)
	return launch{dist: d}, err
}

// distribution is an OpenSearch or Elasticsearch distribution folder.
type distribution struct {
	home    string
	flavor  engine.SearchFlavor
	version string // from its lib/<flavor>-X.Y.Z.jar
	// bundledJDK: it has its own jdk/, which its script prefers.
	bundledJDK bool
	// security is the -E setting that switches its security plugin off,
	// when it has one.
	security string
}

// script is the distribution's start script.
func (d *distribution) script() string { return filepath.Join(d.home, "bin", string(d.flavor)) }

// envPrefix is the prefix of its scripts' variables (ES_JAVA_OPTS,
// OPENSEARCH_JAVA_OPTS).
func (d *distribution) envPrefix() string {
	if d.flavor == engine.FlavorOpenSearch {
		return "OPENSEARCH"
	}
	return "ES"
}

// versionJar matches the server jar in a distribution's lib/.
var versionJar = map[engine.SearchFlavor]*regexp.Regexp{
	engine.FlavorOpenSearch:    regexp.MustCompile(`^opensearch-([0-9]+\.[0-9]+\.[0-9]+)\.jar$`),
	engine.FlavorElasticsearch: regexp.MustCompile(`^elasticsearch-([0-9]+\.[0-9]+\.[0-9]+)\.jar$`),
}

// inspect checks that home is a distribution of flavor and reads what its
// start needs. A folder of the other flavor is named as such.
func inspect(home string, flavor engine.SearchFlavor) (*distribution, error) {
	abs, err := filepath.Abs(home)
	if err != nil {
		return nil, fmt.Errorf("option home %q: %w", home, err)
	}
	d := &distribution{home: abs, flavor: flavor}
	if fi, err := os.Stat(d.script()); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		other := engine.FlavorElasticsearch
		if flavor == engine.FlavorElasticsearch {
			other = engine.FlavorOpenSearch
		}
		if _, oerr := os.Stat(filepath.Join(abs, "bin", string(other))); oerr == nil {
			return nil, fmt.Errorf("option home %s is an %s distribution (it has bin/%s, not bin/%s): use engine %s", abs, other, other, flavor, other)
		}
		return nil, fmt.Errorf("option home %s is not an %s distribution: it has no executable bin/%s", abs, flavor, flavor)
	}
	ents, err := os.ReadDir(filepath.Join(abs, "lib"))
	if err != nil {
		return nil, fmt.Errorf("option home %s is not an %s distribution: %w", abs, flavor, err)
	}
	for _, e := range ents {
		if m := versionJar[flavor].FindStringSubmatch(e.Name()); m != nil {
			d.version = m[1]
		}
	}
	if d.version == "" {
		return nil, fmt.Errorf("option home %s is not an %s distribution: its lib/ has no %s-X.Y.Z.jar", abs, flavor, flavor)
	}
	if _, err := os.Stat(filepath.Join(abs, "jdk", "bin", "java")); err == nil {
		d.bundledJDK = true
	}
	switch {
	case flavor == engine.FlavorOpenSearch && exists(filepath.Join(abs, "plugins", "opensearch-security")):
		d.security = "plugins.security.disabled=true"
	case flavor == engine.FlavorElasticsearch && exists(filepath.Join(abs, "modules", "x-pack-security")):
		d.security = "xpack.security.enabled=false"
	}
	return d, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// node is one node's start: its folders, ports and name.
type node struct {
	// host is the address the node listens on: 127.0.0.1 here, every
	// address in a pod (empty: 127.0.0.1).
	host          string
	java          string
	data, logs    string
	private       string // conf/, base/ and tmp/ of this run, 0700
	httpPort      int
	transportPort int
	cluster       string
	heap          []string // the JVM's own flags (settings.javaOpts)
}

// settings every node gets, whoever made it: loopback only (here), one node,
// and no disk watermarks, so that a tier that fills fails writes with
// "No space left on device" as with every engine, instead of the node
// blocking writes at 95% full.
func (n node) settings() []string {
	host := n.host
	if host == "" {
		host = "127.0.0.1"
	}
	return []string{
		"network.host=" + host,
		"http.port=" + strconv.Itoa(n.httpPort),
		"transport.port=" + strconv.Itoa(n.transportPort),
		"discovery.type=single-node",
		"cluster.name=" + n.cluster,
		"cluster.routing.allocation.disk.threshold_enabled=false",
	}
}

// runnerJVM are the JVM options OpenSearch's distribution gives its node
// (its jvm.options and its launcher's system options, for JDK 17), which
// the runner, started with plain java, would otherwise lack.
var runnerJVM = []string{
	"-XX:+UseG1GC", "-XX:G1ReservePercent=25", "-XX:InitiatingHeapOccupancyPercent=30",
	"-XX:+HeapDumpOnOutOfMemoryError",
	"-Dopensearch.networkaddress.cache.ttl=60", "-Dopensearch.networkaddress.cache.negative.ttl=10",
	"-XX:+AlwaysPreTouch", "-Xss1m", "-Djava.awt.headless=true", "-Dfile.encoding=UTF-8", "-Djna.nosys=true",
	"-XX:-OmitStackTraceInFastThrow", "-XX:+ShowCodeDetailsInExceptionMessages",
	"-Dio.netty.noUnsafe=true", "-Dio.netty.noKeySetOptimization=true", "-Dio.netty.recycler.maxCapacityPerThread=0",
	"-Dio.netty.allocator.numDirectArenas=0",
	"-Dlog4j.shutdownHookEnabled=false", "-Dlog4j2.disable.jmx=true",
	"-Djava.locale.providers=SPI,COMPAT",
}

// runnerCommand is the runner's command line; its settings go in
// conf/opensearch.yml, which writeRunnerConf writes (the runner has no
// flag for them).
func (l launch) runnerCommand(n node) (path string, args []string) {
	args = append(append([]string{}, n.heap...), runnerJVM...)
	args = append(args,
		"-Djava.io.tmpdir="+filepath.Join(n.private, "tmp"),
		"-XX:HeapDumpPath="+n.data,
		"-XX:ErrorFile="+filepath.Join(n.logs, "hs_err_pid%p.log"),
		"-Xlog:gc*,gc+age=trace,safepoint:file="+filepath.Join(n.logs, "gc.log")+":utctime,pid,tags:filecount=32,filesize=64m",
		"-cp", filepath.Join(l.runnerDir, jarName)+":"+filepath.Join(l.runnerDir, "lib", "*"), mainClass,
		"-basePath", filepath.Join(n.private, "base"),
		"-confPath", filepath.Join(n.private, "conf"),
		"-dataPath", n.data,
		"-logsPath", n.logs,
		"-numOfNode", "1",
		// The node's HTTP port is the base + 1 (Main makes it exactly that).
		"-baseHttpPort", strconv.Itoa(n.httpPort-1),
		"-clusterName", n.cluster,
	)
	return n.java, args
}

// writeRunnerConf writes the runner's opensearch.yml (runnerConf). (It
// adds its log4j2.properties beside it.)
func writeRunnerConf(n node) error {
	return os.WriteFile(filepath.Join(n.private, "conf", "opensearch.yml"), []byte(runnerConf(n)), 0o600)
}

// runnerConf is the runner's opensearch.yml: the settings the runner has
// no flag for.
func runnerConf(n node) string {
	var b strings.Builder
	b.WriteString("# Written by tierbench for one run.\n")
	for _, s := range n.settings() {
		k, v, _ := strings.Cut(s, "=")
		if k == "http.port" || k == "cluster.name" {
			continue // the runner's flags
		}
		fmt.Fprintf(&b, "%s: %s\n", k, v)
	}
	return b.String()
}

// distCommand is the distribution's script with the run's settings, and
// the environment that points it at the run's config copy, temporary
// folder, heap and (unless it brings its own) JDK.
func (d *distribution) distCommand(n node) (path string, args, env []string) {
	for _, s := range append(append([]string{"path.data=" + n.data, "path.logs=" + n.logs}, n.settings()...), d.security) {
		if s != "" {
			args = append(args, "-E", s)
		}
	}
	p := d.envPrefix()
	env = []string{
		p + "_PATH_CONF=" + filepath.Join(n.private, "conf"),
		p + "_TMPDIR=" + filepath.Join(n.private, "tmp"),
		p + "_JAVA_OPTS=" + strings.Join(n.heap, " "),
	}
	if !d.bundledJDK {
		jh := javaHome(n.java)
		env = append(env, "JAVA_HOME="+jh, p+"_JAVA_HOME="+jh)
	}
	return d.script(), args, env
}

// copyConf copies the distribution's config folder into the run's
// private conf/ (the node writes its keystore there), pointing the
// relative paths of its jvm.options files at the run's folders.
func (d *distribution) copyConf(n node) error {
	conf := filepath.Join(n.private, "conf")
	src := filepath.Join(d.home, "config")
	if err := server.CopyTree(src, func(rel string) string { return filepath.Join(conf, rel) }); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	files, _ := filepath.Glob(filepath.Join(conf, "jvm.options.d", "*.options"))
	for _, f := range append([]string{filepath.Join(conf, "jvm.options")}, files...) {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(f, []byte(rewriteJVMOptions(string(b), n.data, n.logs)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// relativeJVMPaths are the relative paths in the distributions'
// jvm.options (Elasticsearch 6.x-8.x, OpenSearch 1.x-2.x), which resolve in
// the distribution's folder, where its script runs the JVM.
var relativeJVMPaths = regexp.MustCompile(`(file=|-Xloggc:|-XX:ErrorFile=)logs/|(-XX:HeapDumpPath=)data\b`)

// rewriteJVMOptions points the relative logs/ and data paths of a
// jvm.options text at the run's logs and data folders.
func rewriteJVMOptions(text, data, logs string) string {
	return relativeJVMPaths.ReplaceAllStringFunc(text, func(m string) string {
		if strings.HasSuffix(m, "logs/") {
			return strings.TrimSuffix(m, "logs/") + logs + "/"
		}
		return strings.TrimSuffix(m, "data") + data
	})
}
