package redis

import (
	"fmt"
	"slices"

	"github.com/tierbench/tierbench/engine"
)

// Image is the official image a run on a cluster uses unless the study
// names another.
const Image = "redis:7"

// In the official image: the redis user's uid and gid, its data folder,
// and where the run's config file (the password) is mounted.
const (
	imageUID      = 999
	dataMount     = "/data"
	confMount     = "/etc/tierbench/" + confName
	containerPort = 6379
)

var _ engine.Containerizer = Engine{}

// Container runs redis-server in the official image with the same
// arguments as a local run (serverArgs: durability, maxmemory, io
// threads), the AOF on the data claim, and the password in a config file
// from the run's Secret, as locally. Only the address differs: the pod's,
// which the run's NetworkPolicy opens to its load generator alone.
func (Engine) Container(cfg engine.ContainerConfig) (engine.Container, error) {
	args, err := serverArgs(dataMount, engine.Config{Durability: cfg.Durability, Options: cfg.Options})
	if err != nil {
		return engine.Container{}, err
	}
	if i := slices.Index(args, "--bind"); i >= 0 {
		args[i+1] = "0.0.0.0"
	}
	return engine.Container{
		Image: cfg.ImageOr(Image),
		Args:  append([]string{"redis-server", confMount}, append(args, "--port", fmt.Sprint(containerPort))...),
		// redis-cli, the readiness probe, reads the password from here.
		PasswordEnv:      "REDISCLI_AUTH",
		PasswordFile:     confMount,
		PasswordFileText: "requirepass %s\n",
		Mounts:           map[string]string{Data: dataMount},
		Port:             containerPort,
		User:             imageUID,
		FSGroup:          imageUID,
		Target:           fmt.Sprintf("redis://%s:%d", engine.TargetHost, containerPort),
		ReadyCommand:     []string{"redis-cli", "-p", fmt.Sprint(containerPort), "ping"},
	}, nil
}
