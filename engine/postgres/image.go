package postgres

import (
	_ "embed"
	"os"

	"github.com/tierbench/tierbench/images"
)

//go:embed docker-entrypoint.sh
var imageEntrypoint []byte

var _ images.LabImager = Engine{}

// LabImage is PostgreSQL 15 from Debian, the image `tierbench cluster up`
// makes for the lab node, run as the official postgres:15 image (Image)
// is: uid and gid 999, PGDATA and POSTGRES_INITDB_WALDIR, POSTGRES_USER,
// POSTGRES_DB, POSTGRES_PASSWORD, POSTGRES_HOST_AUTH_METHOD and
// POSTGRES_INITDB_ARGS honoured by docker-entrypoint.sh on the first
// start, and the server's own binaries (pg_isready, psql) first on PATH,
// ahead of Debian's wrappers. Any change to it changes its key, and every
// machine builds the image again.
func (Engine) LabImage() (images.Recipe, error) {
	return images.Recipe{
		Name:     "tierbench.local/postgres:15",
		Suite:    images.Suite,
		Packages: []string{"postgresql-15"},
		Hooks: []string{
			// Debian's postinst made a cluster; the entrypoint makes one
			// in PGDATA instead.
			`rm -rf "$1/var/lib/postgresql/15/main" "$1/etc/postgresql/15/main" "$1"/var/log/postgresql/*`,
			images.SetIDHook("postgres", 999),
			// The official image's PGDATA, for a pod that mounts no volume.
			`install -d -o 999 -g 999 -m 1777 "$1/var/lib/postgresql/data"`,
		},
		Files: []images.File{
			{Path: "/usr/local/bin/docker-entrypoint.sh", Mode: 0o755, Data: imageEntrypoint},
			// The server's socket folder (/var/run is a link to /run):
			// writable by any uid, as in the official image, for the
			// temporary server and pg_isready's default.
			{Path: "/run/postgresql", Mode: os.ModeDir | os.ModeSetgid | os.ModeSticky | 0o777},
		},
		Config: images.Config{
			Entrypoint: []string{"docker-entrypoint.sh"},
			Cmd:        []string{"postgres"},
			Env: []string{
				"PATH=/usr/lib/postgresql/15/bin:" + images.StdPath,
				"LANG=C.UTF-8",
				"PGDATA=/var/lib/postgresql/data",
			},
			User: "999",
		},
	}, nil
}
