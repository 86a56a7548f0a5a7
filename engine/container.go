package engine

import (
	"fmt"
	"time"
)

// ContainerConfig is one run of a containerized engine.
type ContainerConfig struct {
	// Durability is one of the engine's supported modes.
	Durability Durability
	// Options are the run's engine options, resolved as Config.Options.
	Options Options
	// Image overrides the engine's default image (empty: Container.Image
	// is the engine's official one).
	Image string
	// Placement maps each placed component to its tier's name, for an
	// engine whose layout depends on which components share a tier.
	Placement map[string]string
	// Name is the engine's Service: a cluster engine's nodes (Container.Nodes)
	// reach each other at Peer(i).
	Name string
}

// Peer is the address of a cluster engine's node i: its pod's name under
// the engine's headless Service.
func (c ContainerConfig) Peer(i int) string { return fmt.Sprintf("%s-%d.%s", c.Name, i, c.Name) }

// ImageOr is the image to run: the study's, else the engine's official.
func (c ContainerConfig) ImageOr(official string) string {
	if c.Image != "" {
		return c.Image
	}
	return official
}

// Container is how a server engine runs as one container.
type Container struct {
	// Image is the engine's image (its official one unless overridden).
	Image string
	// Command, when set, replaces the image's entrypoint (an engine whose
	// server is tierbench's own launcher run by the image's java).
	Command []string
	// Args are the container's arguments (after the image's entrypoint):
	// the server's command line with the run's settings. $(NAME) is the
	// value of the container's variable NAME (Kubernetes expands it).
	Args []string
	// Env is the container's plain environment, in order.
	Env []EnvVar
	// Nodes, when above 0, makes the engine a cluster of that many pods,
	// each with claims of its own, reaching each other at
	// ContainerConfig.Peer(i); 0 is one pod.
	Nodes int
	// PeerPorts are further TCP ports the nodes open to each other and to
	// the engine's own client (Ignite's communication port).
	PeerPorts []int
	// Files are files from this machine the container reads (tierbench's
	// launcher jars), by their path under FilesDir.
	FilesDir string
	Files    map[string][]byte
	// Scratch, when set, is a folder the container may write that no
	// component owns (the JVM's temporary files and a client's work folder).
	Scratch string
	// PasswordEnv names the variable that carries the run's password to
	// the server (from the run's Secret, never the object's text); empty
	// when the server reads it from a file (PasswordFile).
	PasswordEnv string
	// PasswordFile, when set, is a file the server reads its password
	// from (a config file): the run's Secret holds its text,
	// PasswordFileText with the password in place of its one %s, and is
	// mounted read-only in the file's folder.
	PasswordFile, PasswordFileText string
	// Mounts maps each component to the folder it is mounted at.
	Mounts map[string]string
	// Port is the server's TCP port (for a cluster engine, the one its
	// client joins at).
	Port int
	// User is the uid the server runs as (never root) and FSGroup the
	// group that owns the mounted claims, so the server can write them.
	User, FSGroup int64
	// Target is the URL the load generator connects to, without the
	// password, with HOST where the server's address goes
	// (postgres://postgres@HOST:5432/postgres).
	Target string
	// ReadyCommand is run in the container to tell when it accepts
	// clients (the readiness probe); empty: Port accepts connections.
	ReadyCommand []string
	// MemoryLimit, set by the runner from the study's memory setting, is
	// the container's memory request and limit in bytes; 0: none.
	MemoryLimit int64
	// MemoryRequest, set by the runner when the study sets no memory, is
	// what the engine's own settings hold in one pod (Spec.MemoryNeed):
	// the container asks for it, with no limit. A pod that asks for no
	// memory is BestEffort, the one the kernel's OOM killer picks first
	// when its node runs short (exit 137), and is placed with no regard
	// to the memory its heap will take.
	MemoryRequest int64
}

// EnvVar is one environment variable of a container: Value, or the pod's
// field Field (status.podIP, metadata.name) when Field is set.
type EnvVar struct{ Name, Value, Field string }

// ClientRun is one run of an engine's own client on a cluster: load
// Preload keys, then drive Work with Clients threads.
type ClientRun struct {
	Work             CacheWork
	Preload          int64
	Clients          int
	Warmup, Duration time.Duration
}

// TargetHost is the placeholder for the server's address in
// Container.Target.
const TargetHost = "HOST"
