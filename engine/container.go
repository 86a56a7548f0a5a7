package engine

// Containerizer is an engine that can run as a container on a cluster
// (platform: kubernetes). The engine says what it would run locally, the
// server's settings for the run's durability and options, and only where
// it runs changes: an image instead of this machine's binaries, claims
// mounted where the image expects each component instead of run folders.
type Containerizer interface {
	Container(cfg ContainerConfig) (Container, error)
}

// ContainerConfig is one run of a containerized engine.
type ContainerConfig struct {
	// Durability is one of the engine's supported modes.
	Durability Durability
	// Options are the run's engine options, as Config.Options.
	Options map[string]string
	// Image overrides the engine's default image (empty: Container.Image
	// is the engine's official one).
	Image string
}

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
	// Args are the container's arguments (after the image's entrypoint):
	// the server's command line with the run's settings.
	Args []string
	// Env is the container's plain environment, in order.
	Env []EnvVar
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
	// Port is the server's TCP port.
	Port int
	// User is the uid the server runs as (never root) and FSGroup the
	// group that owns the mounted claims, so the server can write them.
	User, FSGroup int64
	// Target is the URL the load generator connects to, without the
	// password, with HOST where the server's address goes
	// (postgres://postgres@HOST:5432/postgres).
	Target string
	// ReadyCommand is run in the container to tell when it accepts
	// clients (the readiness probe).
	ReadyCommand []string
}

// EnvVar is one environment variable of a container.
type EnvVar struct{ Name, Value string }

// TargetHost is the placeholder for the server's address in
// Container.Target.
const TargetHost = "HOST"
