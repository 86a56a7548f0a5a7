#!/bin/sh
# docker-entrypoint.sh of tierbench.local/postgres: the subset of the
# official postgres image's entrypoint that tierbench's pods use. On the
# first start (no PG_VERSION in PGDATA) it makes the cluster with initdb
# (the superuser's password from a file, never on a command line), lets
# every host in with POSTGRES_HOST_AUTH_METHOD, and makes POSTGRES_DB;
# then it runs the server as the pod says.
set -eu

# As the official image: flags alone are the server's.
if [ -n "${1:-}" ] && [ "${1#-}" != "$1" ]; then
	set -- postgres "$@"
fi

if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
	: "${POSTGRES_USER:=postgres}"
	: "${POSTGRES_DB:=$POSTGRES_USER}"
	: "${POSTGRES_HOST_AUTH_METHOD:=scram-sha-256}"
	: "${POSTGRES_INITDB_ARGS:=}"
	if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
		echo "docker-entrypoint.sh: POSTGRES_PASSWORD is not set (or POSTGRES_HOST_AUTH_METHOD=trust)" >&2
		exit 1
	fi
	mkdir -p "$PGDATA"
	chmod 0700 "$PGDATA"
	waldir=
	if [ -n "${POSTGRES_INITDB_WALDIR:-}" ]; then
		# initdb makes the folder itself, with the modes it wants.
		mkdir -p "$(dirname "$POSTGRES_INITDB_WALDIR")"
		waldir='--waldir="$POSTGRES_INITDB_WALDIR"'
	fi
	pwfile=$(mktemp)
	# printf is the shell's own: the password is on no process's command line.
	printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$pwfile"
	# eval, as the official entrypoint: POSTGRES_INITDB_ARGS may quote.
	if ! eval 'initdb --username="$POSTGRES_USER" --pwfile="$pwfile" '"$waldir $POSTGRES_INITDB_ARGS"; then
		rm -f "$pwfile"
		exit 1
	fi
	rm -f "$pwfile"
	printf '\nhost all all all %s\n' "$POSTGRES_HOST_AUTH_METHOD" >>"$PGDATA/pg_hba.conf"

	if [ "$POSTGRES_DB" != postgres ]; then
		# A server on the unix socket only, for as long as it takes.
		pg_ctl -D "$PGDATA" -w -o "-c listen_addresses='' -p ${PGPORT:-5432}" start
		PGPASSWORD=${POSTGRES_PASSWORD:-} psql -v ON_ERROR_STOP=1 --no-psqlrc --no-password \
			--username "$POSTGRES_USER" --port "${PGPORT:-5432}" --dbname postgres \
			--set db="$POSTGRES_DB" <<-'EOSQL'
			CREATE DATABASE :"db" ;
		EOSQL
		pg_ctl -D "$PGDATA" -m fast -w stop
	fi
	echo "docker-entrypoint.sh: PostgreSQL init process complete; ready for start up."
fi

exec "$@"
