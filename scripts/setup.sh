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
# and Maven build and run the Ignite engine's launcher (java/ignite) and
# the search engines' nodes (java/opensearch).
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
# nftables closes the ports of servers that cannot require a password
# (OpenSearch, Elasticsearch OSS) to other local users.
command -v nft >/dev/null 2>&1 || [ -x /usr/sbin/nft ] || missing+=(nftables)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
# The ceph engine: a monitor, a manager, OSDs (BlueStore on files), the
# RADOS Gateway (S3), the ceph/rados/rbd tools, and rbd-fuse for Ceph block
# images as tiers (no kernel rbd module here). Ceph 16.2 from Debian.
for b in ceph-mon ceph-mgr ceph-osd radosgw:radosgw ceph:ceph-common rbd-fuse:rbd-fuse; do
	prog="${b%%:*}" pkg="${b#*:}"
	command -v "$prog" >/dev/null 2>&1 || [ -x "/usr/bin/$prog" ] || missing+=("$pkg")
done
# gcc: tests only, a cgo build of tierbench, which cluster up must refuse.
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
# etcd for the Kubernetes tests' control plane (platform/kube/kubetest).
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
# tierbench cluster up's node (platform/kube/node): containerd and runc run
# the pods, the CNI plugins (bridge, host-local, portmap) give them a
# network, mmdebstrap makes the engines' images from Debian packages,
# iptables for the bridge's masquerading.
command -v containerd >/dev/null 2>&1 || missing+=(containerd)
command -v runc >/dev/null 2>&1 || [ -x /usr/sbin/runc ] || missing+=(runc)
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
command -v iptables >/dev/null 2>&1 || [ -x /usr/sbin/iptables ] || missing+=(iptables)
# Prometheus scrapes `run --metrics` and runs the Grafana dashboard's
# queries in cmd/tierbench's TestPrometheusRunsTheDashboard (tests only).
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
# Headless Chromium lays the HTML report out at a desktop's and a phone's
# width in the report's tests (report/browser_test.go).
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if ((${#missing[@]})); then
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup: missing Debian packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}" >&2
		exit 1
	fi
	echo "setup: installing ${missing[*]}"
	apt-get update -qq
	# No package may start its service (Ceph's, MariaDB's): tierbench
	# starts servers per run. policy-rc.d is Debian's switch for that; one
	# that was there already is left as it is.
	policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\n# tierbench setup: no service starts while packages install\nexit 101\n' >"$policy"
		chmod 755 "$policy"
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null || { [ -z "$policy" ] || rm -f "$policy"; exit 1; }
	[ -z "$policy" ] || rm -f "$policy"
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

# The search engines (java/opensearch): OpenSearch 2.19's embedded runner
# and its jars, and the Elasticsearch OSS 6.8.23 distribution, from Maven
# Central. Built only when missing or older than their sources.
search_jar=java/opensearch/target/tierbench-opensearch.jar
if [ ! -f "$search_jar" ] || [ ! -d java/opensearch/target/lib ] ||
	[ ! -x java/opensearch/target/elasticsearch-6.8.23/bin/elasticsearch ] ||
	[ -n "$(find java/opensearch/pom.xml java/opensearch/src -newer "$search_jar" -print -quit)" ]; then
	echo "setup: building java/opensearch (mvn package)"
	(cd java/opensearch && mvn -q -B -DskipTests package)
fi
# HdrHistogram's own jar (Maven Central), whose HistogramLogProcessor the
# tests run on the interval logs `tierbench export --hdr` writes.
if [ ! -f "$HOME/.m2/repository/org/hdrhistogram/HdrHistogram/2.2.2/HdrHistogram-2.2.2.jar" ]; then
	echo "setup: fetching HdrHistogram 2.2.2 (mvn dependency:get)"
	mvn -q -B dependency:get -Dartifact=org.hdrhistogram:HdrHistogram:2.2.2
fi
# The OS user the search nodes run as (Elasticsearch refuses root).
if [ "$(id -u)" -eq 0 ] && ! id tierbench >/dev/null 2>&1; then
	echo "setup: adding system user tierbench (search nodes run as it)"
	useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin tierbench
fi

# The analytics workload's data generator: DuckDB and its tpch extension
# (TPC-H's dbgen) from PyPI, pinned together, in a virtualenv of their own
# in tierbench's state folder, where tierbench looks for it (the folder
# tier.StateDir names; TIERBENCH_TPCH_VENV overrides). Made only when
# missing or not the pinned version.
state="${TIERBENCH_STATE_DIR:-}"
if [ -z "$state" ]; then
	if [ "$(id -u)" -eq 0 ]; then state=/var/lib/tierbench; else state="$HOME/.local/state/tierbench"; fi
fi
tpch_venv="${TIERBENCH_TPCH_VENV:-$state/venv-tpch}"
if ! "$tpch_venv/bin/python" -c 'import duckdb, importlib.metadata as m; assert duckdb.__version__ == "1.4.4" and m.version("duckdb-ext-tpch").startswith("1.4.4.")' >/dev/null 2>&1; then
	echo "setup: installing duckdb 1.4.4 and its tpch extension in $tpch_venv"
	mkdir -p "$(dirname "$tpch_venv")"
	python3 -m venv "$tpch_venv"
	"$tpch_venv/bin/pip" install -q "duckdb==1.4.4" "duckdb-ext-tpch==1.4.4.*"
fi

# The search engines' standard tools, drivers osb and rally:
# opensearch-benchmark and esrally from PyPI, pinned, each in a virtualenv
# of its own in the state folder, where tierbench looks for them
# (TIERBENCH_OSB_VENV and TIERBENCH_RALLY_VENV override). Made only when
# missing or not the pinned version; pip takes some minutes for each.
tool_venv() { # venv package version
	if ! "$1/bin/python" -c "import importlib.metadata as m; assert m.version('$2') == '$3'" >/dev/null 2>&1; then
		echo "setup: installing $2 $3 in $1"
		mkdir -p "$(dirname "$1")"
		python3 -m venv --clear "$1"
		"$1/bin/pip" install -q "$2==$3"
	fi
}
tool_venv "${TIERBENCH_OSB_VENV:-$state/venv-osb}" opensearch-benchmark 2.4.0
tool_venv "${TIERBENCH_RALLY_VENV:-$state/venv-rally}" esrally 2.13.0

# The Kubernetes tests' control plane (kube-apiserver, kube-scheduler,
# kube-controller-manager from k8s.io/kubernetes, and kwok) and the node's
# kubelet, kube-proxy and kubectl (tierbench cluster up), built once per
# machine into the state folder (30-50 minutes the first time; see
# scripts/kube-build.sh), where platform/kube/kubetest looks for it
# (TIERBENCH_KUBE_BIN overrides). The default state folder, not
# TIERBENCH_STATE_DIR: tests point that at folders of their own.
kube_state=/var/lib/tierbench
[ "$(id -u)" -eq 0 ] || kube_state="$HOME/.local/state/tierbench"
./scripts/kube-build.sh "${TIERBENCH_KUBE_BIN:-$kube_state/k8s/1.34.1}"
