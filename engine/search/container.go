package search

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
)

// Image is OpenSearch's official image, what engine opensearch runs on a
// cluster.
const Image = "opensearchproject/opensearch:2.19.1"

// In the image: its home, the user it runs as, the node's ports.
const (
	podHome          = "/usr/share/opensearch"
	podUID           = 1000
	podHTTPPort      = 9200
	podTransportPort = 9300
	podCluster       = "tierbench"
)

// RunnerImage is the image tierbench cluster up makes for OpenSearch
// (LabImage): Debian's Java 17, curl, and this machine's build of the
// runner (java/opensearch) in RunnerPodDir. With it as
// engine_image a pod runs the runner's command line, the one a local
// node runs, instead of the distribution's entrypoint.
const RunnerImage = "tierbench.local/opensearch:2.19.1"

// In RunnerImage: the runner's jar and lib/, the run's opensearch.yml
// (mounted), and the node's own writable folder.
const (
	RunnerPodDir     = "/opt/tierbench-opensearch"
	runnerPodFiles   = "/opt/tierbench-files"
	runnerPodPrivate = "/tmp/opensearch"
)

var _ engine.Containerizer = Engine{}

// Container is the node in OpenSearch's image: the same settings as here
// (node.settings, but listening on the pod's addresses), the heap in
// OPENSEARCH_JAVA_OPTS, the security plugin off as here, so the node has
// no password: only the run's NetworkPolicy keeps other pods off it. The
// index settings (durability, shards, replicas, refresh) are the client's,
// which tierbench drive applies as it does here.
func (e Engine) Container(cfg engine.ContainerConfig) (engine.Container, error) {
	if e.flavor != engine.FlavorOpenSearch {
		return engine.Container{}, fmt.Errorf("engine %s has no container image tierbench knows; engine opensearch has", e.flavor)
	}
	set, err := e.parseSettings(engine.Config{Durability: cfg.Durability, Options: cfg.Options})
	if err != nil {
		return engine.Container{}, err
	}
	if set.home != "" {
		return engine.Container{}, fmt.Errorf("option %s names a distribution on this machine; on a cluster the image is the distribution (platform.kubernetes.engine_image)", optHome)
	}
	n := node{host: "0.0.0.0", data: podHome + "/data", logs: podHome + "/logs",
		httpPort: podHTTPPort, transportPort: podTransportPort, cluster: podCluster}
	// The image's entrypoint runs opensearch with arguments that start
	// with a dash.
	args := []string{"-Epath.data=" + n.data, "-Epath.logs=" + n.logs}
	for _, s := range n.settings() {
		args = append(args, "-E"+s)
	}
	health := fmt.Sprintf("http://127.0.0.1:%d/_cluster/health?wait_for_status=yellow&timeout=1s", podHTTPPort)
	ctr := engine.Container{
		Image: cfg.ImageOr(Image),
		Args:  args,
		Env: []engine.EnvVar{
			{Name: "OPENSEARCH_JAVA_OPTS", Value: strings.Join(set.javaOpts(), " ")},
			{Name: "DISABLE_SECURITY_PLUGIN", Value: "true"},
			{Name: "DISABLE_INSTALL_DEMO_CONFIG", Value: "true"},
			{Name: "DISABLE_PERFORMANCE_ANALYZER_AGENT_CLI", Value: "true"},
		},
		Mounts:       map[string]string{Data: n.data, Logs: n.logs},
		Port:         podHTTPPort,
		User:         podUID,
		FSGroup:      podUID,
		Target:       fmt.Sprintf("http://%s:%d", engine.TargetHost, podHTTPPort),
		ReadyCommand: []string{"curl", "-sf", "-o", "/dev/null", health},
	}
	if ctr.Image == RunnerImage {
		runnerContainer(&ctr, n, set)
	}
	return ctr, nil
}

// runnerContainer makes ctr run the runner in RunnerImage: its command
// line as a local node's (runnerCommand), after copying the run's
// opensearch.yml, mounted read-only, to the node's writable conf folder
// (the runner writes its logging configuration beside it).
func runnerContainer(ctr *engine.Container, n node, set settings) {
	n.java, n.private, n.heap = "java", runnerPodPrivate, set.javaOpts()
	_, args := launch{runnerDir: RunnerPodDir}.runnerCommand(n)
	ctr.Command = []string{"sh", "-c", fmt.Sprintf(`mkdir -p %[1]s/conf %[1]s/base %[1]s/tmp && cp %[2]s/opensearch.yml %[1]s/conf/ && exec "$@"`,
		runnerPodPrivate, runnerPodFiles), "sh"}
	ctr.Args = append([]string{n.java}, args...)
	ctr.Env = nil
	ctr.FilesDir, ctr.Files = runnerPodFiles, map[string][]byte{"opensearch.yml": []byte(runnerConf(n))}
	ctr.Scratch = "/tmp"
}

// openTarget reaches a node tierbench did not start (http://host:port):
// the workload's index settings are this run's (set), as with a node of
// its own; its cluster may have any name.
func (e Engine) openTarget(ctx context.Context, target string, set settings) (engine.DB, error) {
	parse := func(u *url.URL) (string, error) {
		if u.User != nil {
			return "", errors.New("the node has no authentication (its security plugin is off, as tierbench runs it): give the URL without a user")
		}
		return u.Scheme + "://" + u.Host, nil
	}
	return server.OpenTarget(ctx, e.Spec(), target, parse, func(ctx context.Context, base string) (engine.DB, error) {
		d := &DB{flavor: e.flavor, set: set, url: base, client: newClient(64)}
		if err := d.ready(ctx); err != nil {
			d.client.CloseIdleConnections()
			return nil, err
		}
		d.closers.Do(d.client.CloseIdleConnections)
		return d, nil
	})
}
