package redis

import (
	_ "embed"

	"github.com/tierbench/tierbench/images"
)

//go:embed docker-entrypoint.sh
var imageEntrypoint []byte

var _ images.LabImager = Engine{}

// LabImage is Redis 7 (7.0) from Debian, the image `tierbench cluster up`
// makes for the lab node, run as the official redis:7 image (Image) is:
// uid and gid 999, in /data, with the server's arguments as the pod gives
// them and redis-cli for the readiness probe. Any change to it changes
// its key, and every machine builds the image again.
func (Engine) LabImage() (images.Recipe, error) {
	return images.Recipe{
		Name:     "tierbench.local/redis:7",
		Suite:    images.Suite,
		Packages: []string{"redis-server"},
		Hooks: []string{
			images.SetIDHook("redis", 999),
			`install -d -o 999 -g 999 -m 0755 "$1/data"`,
		},
		Files: []images.File{
			{Path: "/usr/local/bin/docker-entrypoint.sh", Mode: 0o755, Data: imageEntrypoint},
		},
		Config: images.Config{
			Entrypoint: []string{"docker-entrypoint.sh"},
			Cmd:        []string{"redis-server"},
			Env:        []string{"PATH=" + images.StdPath},
			User:       "999",
			WorkingDir: "/data",
		},
	}, nil
}
