package mariadb

import (
	"fmt"
	"slices"

	"github.com/tierbench/tierbench/engine"
)

// Image is the official image a run on a cluster uses unless the study
// names another.
const Image = "mariadb:10.11"

// In the official image: the mysql user's uid and gid, and the mounts.
// The datadir is a folder in its claim (a mount's root holds lost+found,
// which the server would list as a database); the redo log is written at
// its claim's root.
const (
	imageUID      = 999
	dataMount     = "/var/lib/mysql"
	redoMount     = "/var/lib/mysql-redo"
	socketPath    = "/run/mysqld/mysqld.sock"
	containerPort = 3306
)

var _ engine.Containerizer = Engine{}

// Container runs mariadbd in the official image with the same arguments
// as a local run (serverArgs: durability, buffer pool, redo size, binary
// log). The image's entrypoint creates the database and the clients'
// account with the run's password from its Secret, as a local run's setup
// does; root has no password and logs in only from inside the pod
// (localhost), as locally only over the socket.
func (Engine) Container(cfg engine.ContainerConfig) (engine.Container, error) {
	flush, err := flushAtCommit(cfg.Durability)
	if err != nil {
		return engine.Container{}, err
	}
	opts := parseOptions(cfg.Options)
	args := serverArgs(dataMount+"/data", redoMount, socketPath, containerPort, flush, opts, cfg.Durability)
	if i := slices.Index(args, "--bind-address=127.0.0.1"); i >= 0 {
		args[i] = "--bind-address=0.0.0.0"
	}
	return engine.Container{
		Image: cfg.ImageOr(Image),
		Args:  append([]string{"mariadbd"}, args...),
		Env: []engine.EnvVar{
			{Name: "MARIADB_DATABASE", Value: Database},
			{Name: "MARIADB_USER", Value: clientUser},
			{Name: "MARIADB_ROOT_HOST", Value: "localhost"},
			{Name: "MARIADB_ALLOW_EMPTY_ROOT_PASSWORD", Value: "1"},
		},
		PasswordEnv:  "MARIADB_PASSWORD",
		Mounts:       map[string]string{Data: dataMount, Redo: redoMount},
		Port:         containerPort,
		User:         imageUID,
		FSGroup:      imageUID,
		Target:       fmt.Sprintf("mysql://%s@%s:%d/%s", clientUser, engine.TargetHost, containerPort, Database),
		ReadyCommand: []string{"mariadb-admin", "ping", "-h", "127.0.0.1", "-P", fmt.Sprint(containerPort)},
	}, nil
}
