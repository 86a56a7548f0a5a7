package ignite

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/engine"
)

// On a cluster, every node and the client run tierbench's own launcher,
// as here, with the Ignite image's java and jars: the server command line
// is serverArgs, the same as a local node's, only with the pod's name and
// address. The launcher's jar and HdrHistogram's (what the image lacks)
// come from this machine's build, mounted into each pod.

// Image is the official image: Ignite 2.16 on a Java 11 JRE. The launcher
// is built for Java 11 (java/ignite's pom) so that it runs there.
const Image = "apacheignite/ignite:2.16.0"

const (
	// ImageLibDir holds the image's Ignite jars (IGNITE_HOME/libs); the
	// node's own Ignite image puts them there too.
	ImageLibDir = "/opt/ignite/apache-ignite/libs"
	imageLibs   = ImageLibDir + "/*"
	// podFiles is where the launcher's jars are mounted.
	podFiles = "/opt/tierbench"
	// podMounts holds each component's claim, by component name.
	podMounts = "/var/lib/ignite"
	// podScratch is the pods' writable folder that no component owns.
	podScratch = "/tmp"
	// The ports every pod listens on (its own address, so no clash).
	podDiscoPort = 47500
	podCommPort  = 47100
	// podUID runs the JVMs: not root (the image's default user is).
	podUID = 10001
)

// podAddr is a node in a pod: its name and address, expanded by
// Kubernetes from the container's variables.
var podAddr = nodeAddr{id: "$(POD_NAME)", host: "$(POD_IP)", discoPort: podDiscoPort, commPort: podCommPort}

var podEnv = []engine.EnvVar{{Name: "POD_NAME", Field: "metadata.name"}, {Name: "POD_IP", Field: "status.podIP"}}

var _ engine.ClientContainerizer = Engine{}

// Container is the cluster's server nodes: one pod each, every pod with
// its own claims, joined by discovery at the pods' names under the
// engine's Service.
func (Engine) Container(cfg engine.ContainerConfig) (engine.Container, error) {
	set, ctr, err := podContainer(cfg)
	if err != nil {
		return engine.Container{}, err
	}
	ctr.Mounts = map[string]string{}
	for comp := range cfg.Placement {
		ctr.Mounts[comp] = podMounts + "/" + strings.ReplaceAll(comp, "_", "-")
	}
	if ctr.Mounts[Persistence] == "" || ctr.Mounts[WAL] == "" {
		return engine.Container{}, fmt.Errorf("ignite needs components %s and %s placed", Persistence, WAL)
	}
	// As here, each node's work folder is on the persistence tier.
	work := ctr.Mounts[Persistence] + "/work"
	var dirs []string
	if !set.persistence {
		// In memory nothing is written to the WAL's tiers: no claims.
		delete(ctr.Mounts, WAL)
		delete(ctr.Mounts, WALArchive)
	} else {
		dirs = []string{ctr.Mounts[Persistence], ctr.Mounts[WAL], ctr.Mounts[WALArchive]}
		// As here: the archive on wal's tier is wal's own folder, which
		// turns archiving off; its claim is then not made.
		if tier, ok := cfg.Placement[WALArchive]; !ok || tier == cfg.Placement[WAL] {
			dirs[2] = dirs[1]
			delete(ctr.Mounts, WALArchive)
		}
	}
	l := podLauncher()
	// Its own address first: a node whose discovery list holds no
	// address of its own never becomes the first node of a cluster, and
	// its own name may not resolve yet when it starts (the Service's
	// endpoints lag the pod's address). Seen in real pods: every node
	// waited for another to let it join, for ever.
	disco := append([]string{podAddr.host + ":" + strconv.Itoa(podDiscoPort)}, peers(cfg, set.nodes)...)
	ctr.Args = l.args(set.heap, serverArgs(set, podAddr, disco, work, dirs)...)
	ctr.Nodes = set.nodes
	ctr.PeerPorts = []int{podCommPort}
	return ctr, nil
}

// ClientContainer is the load generator: the launcher's client, which
// joins the nodes, activates the cluster once all have joined, preloads,
// and drives one run.
func (Engine) ClientContainer(cfg engine.ContainerConfig, run engine.ClientRun) (engine.Container, error) {
	set, ctr, err := podContainer(cfg)
	if err != nil {
		return engine.Container{}, err
	}
	args := append([]string{"client",
		"--mode=run",
		"--discovery=" + strings.Join(peers(cfg, set.nodes), ","),
		"--local-host=" + podAddr.host,
		"--comm-port=" + strconv.Itoa(podCommPort),
		"--work-dir=" + podScratch + "/work",
		"--activate-servers=" + strconv.Itoa(set.nodes),
		"--preload=" + strconv.FormatInt(run.Preload, 10),
	}, runArgs(run.Work, run.Warmup, run.Duration, run.Clients)...)
	ctr.Args = podLauncher().args(set.heap, args...)
	return ctr, nil
}

// podContainer is what the nodes' and the client's containers share: the
// run's settings, the image, java, the launcher's jars, the pod's name and
// address.
func podContainer(cfg engine.ContainerConfig) (settings, engine.Container, error) {
	set, err := parseSettings(engine.Config{Durability: cfg.Durability, Options: cfg.Options})
	if err != nil {
		return set, engine.Container{}, err
	}
	files, err := launcherFiles()
	if err != nil {
		return set, engine.Container{}, err
	}
	return set, engine.Container{
		Image:    cfg.ImageOr(Image),
		Command:  []string{"java"},
		Env:      podEnv,
		FilesDir: podFiles,
		Files:    files,
		Scratch:  podScratch,
		Port:     podDiscoPort,
		User:     podUID,
		FSGroup:  podUID,
	}, nil
}

// podLauncher runs the mounted launcher with the image's Ignite jars.
func podLauncher() *launcher {
	return &launcher{java: "java", dir: podFiles, libs: []string{imageLibs}}
}

// peers are the nodes' discovery addresses.
func peers(cfg engine.ContainerConfig, nodes int) []string {
	out := make([]string, nodes)
	for i := range out {
		out[i] = cfg.Peer(i) + ":" + strconv.Itoa(podDiscoPort)
	}
	return out
}

// launcherFiles are the built launcher's jar and the jars of its lib/
// that the image does not have (all but Ignite's own and their
// dependencies), by their path under podFiles.
func launcherFiles() (map[string][]byte, error) {
	dir, err := findJarDir()
	if err != nil {
		return nil, err
	}
	hdr, _ := filepath.Glob(filepath.Join(dir, "lib", "HdrHistogram-*.jar"))
	if len(hdr) != 1 {
		return nil, fmt.Errorf("the Ignite launcher in %s has no single lib/HdrHistogram-*.jar: run `make setup`", dir)
	}
	out := map[string][]byte{}
	for rel, path := range map[string]string{jarName: filepath.Join(dir, jarName), "lib/" + filepath.Base(hdr[0]): hdr[0]} {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("the Ignite launcher: %w", err)
		}
		out[rel] = b
	}
	return out, nil
}
