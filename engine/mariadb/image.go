package mariadb

import (
	_ "embed"
	"os"

	"github.com/tierbench/tierbench/images"
)

//go:embed docker-entrypoint.sh
var imageEntrypoint []byte

// imageConf is the official image's 05-skipcache.cnf (a pod's peers
// are addresses, not names: no reverse lookups) and the character set
// of Debian's and the official image's 50-server.cnf, which the -core
// packages do not bring.
const imageConf = `[mariadbd]
skip-host-cache
skip-name-resolve
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
`

var _ images.LabImager = Engine{}

// LabImage is MariaDB 10.11 from Debian, the image `tierbench cluster up`
// makes for the lab node, run as the official mariadb:10.11 image (Image)
// is: uid and gid 999 (user mysql), the server's arguments as the pod
// gives them, MARIADB_DATABASE, MARIADB_USER, MARIADB_PASSWORD,
// MARIADB_ROOT_HOST and MARIADB_ALLOW_EMPTY_ROOT_PASSWORD (or
// MARIADB_ROOT_PASSWORD) honoured by docker-entrypoint.sh on the first
// start. It takes Debian's -core server and mariadb-client (for
// mariadb-admin, the readiness probe) rather than mariadb-server, whose
// dependencies (galera, rsync, socat) and postinst (a database in
// /var/lib/mysql) a pod has no use for. Any change to it changes its key,
// and every machine builds the image again.
func (Engine) LabImage() (images.Recipe, error) {
	return images.Recipe{
		Name:     "tierbench.local/mariadb:10.11",
		Suite:    images.Suite,
		Packages: []string{"mariadb-server-core", "mariadb-client"},
		Hooks: []string{
			images.AddUserHook("mysql", 999, "/var/lib/mysql"),
			// The official image's datadir, for a pod that mounts no volume.
			`install -d -o 999 -g 999 -m 1777 "$1/var/lib/mysql"`,
		},
		Files: []images.File{
			{Path: "/usr/local/bin/docker-entrypoint.sh", Mode: 0o755, Data: imageEntrypoint},
			{Path: "/etc/mysql/mariadb.conf.d/05-tierbench.cnf", Mode: 0o644, Data: []byte(imageConf)},
			// The server's socket folder: writable by any uid, as in the
			// official image.
			{Path: "/run/mysqld", Mode: os.ModeDir | os.ModeSticky | 0o777},
		},
		Config: images.Config{
			Entrypoint: []string{"docker-entrypoint.sh"},
			Cmd:        []string{"mariadbd"},
			Env:        []string{"PATH=" + images.StdPath},
			User:       "999",
		},
	}, nil
}
