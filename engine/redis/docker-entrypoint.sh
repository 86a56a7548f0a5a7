#!/bin/sh
# docker-entrypoint.sh of tierbench.local/redis: what the official redis
# image's entrypoint does for a server that already runs as its user.
set -eu

# Flags alone, or a configuration file first, are the server's.
case "${1:-}" in
-* | *.conf) set -- redis-server "$@" ;;
esac

# As the official image: the server's files are its own alone.
if [ "${1:-}" = redis-server ]; then
	umask 0077
fi

exec "$@"
