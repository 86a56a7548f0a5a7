package images

import _ "embed"

//go:embed entrypoint/redis.sh
var redisEntrypoint []byte

// Redis is Redis 7 (7.0) from Debian, run as the official redis:7 image
// is: uid and gid 999, in /data, with the server's arguments as the pod
// gives them and redis-cli for the readiness probe.
func Redis() Recipe {
	return Recipe{
		Name:     "tierbench.local/redis:7",
		Suite:    Suite,
		Packages: []string{"redis-server"},
		Hooks: []string{
			setIDHook("redis", 999),
			`install -d -o 999 -g 999 -m 0755 "$1/data"`,
		},
		Files: []File{
			{Path: "/usr/local/bin/docker-entrypoint.sh", Mode: 0o755, Data: redisEntrypoint},
		},
		Config: Config{
			Entrypoint: []string{"docker-entrypoint.sh"},
			Cmd:        []string{"redis-server"},
			Env:        []string{"PATH=" + StdPath},
			User:       "999",
			WorkingDir: "/data",
		},
	}
}
