package postgres

import (
	"fmt"

	"github.com/tierbench/tierbench/engine"
)

// Image is the official image a run on a cluster uses unless the study
// names another.
const Image = "postgres:15"

// In the official image: the postgres user's uid and gid, and where the
// cluster and its WAL go (each component's claim is mounted one level up,
// as the image's documentation asks: a mount's root holds lost+found,
// which initdb refuses).
const (
	imageUID      = 999
	dataMount     = "/var/lib/postgresql/data"
	walMount      = "/var/lib/postgresql/wal"
	containerPort = 5432
)

var _ engine.Containerizer = Engine{}

// Container runs the run's server in the official image: the image's
// entrypoint runs initdb (with its WAL on the wal claim, as initdb
// --waldir places it) and sets the password from the run's Secret, then
// starts postgres with the same settings a local run writes into
// postgresql.auto.conf. Only the doors differ: the server listens on the
// pod's address (the run's NetworkPolicy admits its load generator only)
// and logins need the run's password (scram-sha-256).
func (Engine) Container(cfg engine.ContainerConfig) (engine.Container, error) {
	set, err := parseSettings(engine.Config{Durability: cfg.Durability, Options: cfg.Options})
	if err != nil {
		return engine.Container{}, err
	}
	args := []string{"postgres", "-c", "listen_addresses=*", "-c", fmt.Sprintf("port=%d", containerPort)}
	for _, p := range set.params() {
		args = append(args, "-c", p[0]+"="+p[1])
	}
	return engine.Container{
		Image: cfg.ImageOr(Image),
		Args:  args,
		Env: []engine.EnvVar{
			{Name: "PGDATA", Value: dataMount + "/pgdata"},
			{Name: "POSTGRES_INITDB_WALDIR", Value: walMount + "/pg_wal"},
			{Name: "POSTGRES_USER", Value: osUser},
			{Name: "POSTGRES_DB", Value: database},
			// No trust anywhere: the image's default for remote logins
			// would be the password method given here, and initdb's
			// --auth-host sets the same for its own pg_hba.conf.
			{Name: "POSTGRES_HOST_AUTH_METHOD", Value: "scram-sha-256"},
			{Name: "POSTGRES_INITDB_ARGS", Value: "--auth-host=scram-sha-256 --auth-local=scram-sha-256"},
		},
		PasswordEnv:  "POSTGRES_PASSWORD",
		Mounts:       map[string]string{Data: dataMount, WAL: walMount},
		Port:         containerPort,
		User:         imageUID,
		FSGroup:      imageUID,
		Target:       fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", osUser, engine.TargetHost, containerPort, database),
		ReadyCommand: []string{"pg_isready", "-h", "127.0.0.1", "-p", fmt.Sprint(containerPort), "-U", osUser, "-d", database},
	}, nil
}
