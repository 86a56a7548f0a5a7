#!/usr/bin/env bash
# Installs what tierbench needs on a fresh Debian machine. Idempotent: it
# installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need_go="$(sed -n 's/^go \([0-9.]*\).*/\1/p' go.mod)"
if ! command -v go >/dev/null 2>&1; then
	echo "setup: Go $need_go or newer is required (https://go.dev/dl/); Debian's golang-go is too old" >&2
	exit 1
fi

# Debian packages: fio characterises tiers (tierbench probe); e2fsprogs and
# xfsprogs format loop tiers; mount gives losetup; the server engines run
# PostgreSQL (usually present), MariaDB and Redis; pgbench comes with
# PostgreSQL, sysbench is the MariaDB/PostgreSQL standard driver; a JDK 17
# and Maven build and run the Ignite engine's launcher (java/ignite).
missing=()
[ -x "$(ls -d /usr/lib/postgresql/*/bin/postgres 2>/dev/null | tail -1)" ] || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v mariadbd >/dev/null 2>&1 || missing+=(mariadb-server)
command -v sysbench >/dev/null 2>&1 || missing+=(sysbench)
command -v fio >/dev/null 2>&1 || missing+=(fio)
command -v mkfs.ext4 >/dev/null 2>&1 || missing+=(e2fsprogs)
command -v mkfs.xfs >/dev/null 2>&1 || missing+=(xfsprogs)
command -v losetup >/dev/null 2>&1 || missing+=(mount)
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
if ((${#missing[@]})); then
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup: missing Debian packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}" >&2
		exit 1
	fi
	echo "setup: installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Go modules come from the Go module proxy.
go mod download

# The Ignite engine's launcher: Ignite and HdrHistogram come from Maven
# Central. Built only when its jar is missing or older than its sources.
ignite_jar=java/ignite/target/tierbench-ignite.jar
if [ ! -f "$ignite_jar" ] || [ ! -d java/ignite/target/lib ] ||
	[ -n "$(find java/ignite/pom.xml java/ignite/src -newer "$ignite_jar" -print -quit)" ]; then
	echo "setup: building java/ignite (mvn package)"
	(cd java/ignite && mvn -q -B -DskipTests package)
fi
