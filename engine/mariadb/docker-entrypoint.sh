#!/bin/sh
# docker-entrypoint.sh of tierbench.local/mariadb: the subset of the
# official mariadb image's entrypoint that tierbench's pods use. On the
# first start (no mysql/ in the server's datadir) it makes the system
# tables with mariadb-install-db, given the server's own arguments (those
# that lay out files, such as --innodb-*, must agree), then, on a server
# of its own that listens on the socket only, keeps root to
# MARIADB_ROOT_HOST and makes MARIADB_DATABASE and MARIADB_USER. Every
# password goes to the server as SQL on standard input, never on a
# command line. Then it runs the server as the pod says.
set -eu

# As the official image: flags alone are the server's.
if [ -n "${1:-}" ] && [ "${1#-}" != "$1" ]; then
	set -- mariadbd "$@"
fi

note() { echo "docker-entrypoint.sh: $*" >&2; }

# config NAME SERVER ARGS... prints the server's setting NAME given its
# arguments and configuration files, as the official entrypoint reads it.
config() {
	name=$1
	shift
	"$@" --verbose --help 2>/dev/null | awk -v n="$name" '$1 == n && /^[^ \t]/ { sub(/^[^ \t]+[ \t]+/, ""); print; exit }'
}

# sql prints a line of SQL: printf, for dash's echo would read
# backslashes in it.
sql() {
	printf '%s\n' "$1"
}

# sql_string prints its argument as the inside of a '…' SQL string.
sql_string() {
	printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g"
}

if [ "${1:-}" = mariadbd ] || [ "${1:-}" = mysqld ]; then
	datadir=$(config datadir "$@")
	socket=$(config socket "$@")
	if [ -z "$datadir" ]; then
		note "cannot read the datadir from $1 --verbose --help; is the configuration right?"
		"$@" --verbose --help >/dev/null
		exit 1
	fi
fi

if { [ "${1:-}" = mariadbd ] || [ "${1:-}" = mysqld ]; } && [ ! -d "$datadir/mysql" ]; then
	: "${MARIADB_ROOT_HOST:=%}"
	: "${MARIADB_DATABASE:=}" "${MARIADB_USER:=}" "${MARIADB_PASSWORD:=}"
	: "${MARIADB_ROOT_PASSWORD:=}" "${MARIADB_ALLOW_EMPTY_ROOT_PASSWORD:=}"
	if [ -z "$MARIADB_ROOT_PASSWORD" ] && [ -z "$MARIADB_ALLOW_EMPTY_ROOT_PASSWORD" ]; then
		note "give MARIADB_ROOT_PASSWORD or MARIADB_ALLOW_EMPTY_ROOT_PASSWORD"
		exit 1
	fi
	if [ -n "$MARIADB_USER" ] && [ -z "$MARIADB_PASSWORD" ]; then
		note "MARIADB_USER is set but not MARIADB_PASSWORD"
		exit 1
	fi
	note "initializing database files in $datadir"
	mkdir -p "$datadir"
	server=$1
	shift
	# Root may log in over the socket without a password until the SQL
	# below sets one; the test database is not made.
	mariadb-install-db --datadir="$datadir" --rpm --auth-root-authentication-method=normal "$@" \
		--skip-test-db --old-mode='UTF8_IS_UTF8MB3' --default-time-zone=SYSTEM \
		--enforce-storage-engine= --skip-log-bin --expire-logs-days=0 \
		--loose-innodb_buffer_pool_load_at_startup=0 \
		--loose-innodb_buffer_pool_dump_at_shutdown=0
	set -- "$server" "$@"

	note "starting a server on $socket only"
	"$@" --skip-networking --default-time-zone=SYSTEM --socket="$socket" --wsrep_on=OFF \
		--expire-logs-days=0 --skip-slave-start \
		--loose-innodb_buffer_pool_load_at_startup=0 &
	pid=$!
	i=0
	until mariadb --protocol=socket --socket="$socket" -uroot --database=mysql -e 'SELECT 1' >/dev/null 2>&1; do
		i=$((i + 1))
		if [ "$i" -ge 60 ] || ! kill -0 "$pid" 2>/dev/null; then
			note "the server did not start"
			exit 1
		fi
		sleep 1
	done

	{
		sql "SET @@SESSION.SQL_LOG_BIN=0;"
		sql "SET @@SESSION.SQL_MODE=REPLACE(@@SESSION.SQL_MODE, 'NO_BACKSLASH_ESCAPES', '');"
		sql "DROP USER IF EXISTS root@'127.0.0.1', root@'::1';"
		sql "EXECUTE IMMEDIATE CONCAT('DROP USER IF EXISTS root@\\'', @@hostname, '\\'');"
		rootpw=$(sql_string "$MARIADB_ROOT_PASSWORD")
		if [ -n "$MARIADB_ROOT_PASSWORD" ]; then
			sql "SET PASSWORD FOR 'root'@'localhost' = PASSWORD('$rootpw');"
		fi
		if [ "$MARIADB_ROOT_HOST" != localhost ]; then
			host=$(sql_string "$MARIADB_ROOT_HOST")
			sql "CREATE USER 'root'@'$host' IDENTIFIED BY '$rootpw';"
			sql "GRANT ALL ON *.* TO 'root'@'$host' WITH GRANT OPTION;"
			sql "GRANT PROXY ON ''@'%' TO 'root'@'$host' WITH GRANT OPTION;"
		fi
		if [ -n "$MARIADB_DATABASE" ]; then
			db=$(printf '%s' "$MARIADB_DATABASE" | sed -e 's/`/``/g')
			sql "CREATE DATABASE IF NOT EXISTS \`$db\`;"
		fi
		if [ -n "$MARIADB_USER" ]; then
			user=$(sql_string "$MARIADB_USER")
			pw=$(sql_string "$MARIADB_PASSWORD")
			sql "CREATE USER '$user'@'%' IDENTIFIED BY '$pw';"
			if [ -n "$MARIADB_DATABASE" ]; then
				sql "GRANT ALL ON \`$db\`.* TO '$user'@'%';"
			fi
		fi
	} | mariadb --protocol=socket --socket="$socket" -uroot --database=mysql --binary-mode

	kill "$pid"
	wait "$pid"
	note "MariaDB init process done; ready for start up"
fi

exec "$@"
