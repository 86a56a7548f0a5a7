#!/usr/bin/env bash
# The whole test suite, as `make test` runs it after setup and lint, in
# two lanes at once; it fails if either does, and prints both.
#
# The side lane runs tests that assert no figure and mostly wait: first
# those that start this machine's one Kubernetes node, one after the
# other (cmd/tierbench's TestRealNode waits on containerd, the kubelet and
# pods; platform/kube/node's TestServeUndoes; one node at a time), then
# the packages whose servers and tools are JVMs and Python programs that
# take tens of seconds to start (engine/ignite, engine/search,
# tool/searchbench, workload/searchload). Every test there keeps to
# folders, ports, ledgers and processes of its own, as in the main lane.
#
# The main lane runs every other package one at a time (-p 1): the tests
# that time engines must not compete with each other for 2 cores.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
flags=(-count=1 -p 1 -timeout 25m)
module=github.com/tierbench/tierbench
node=(./cmd/tierbench ./platform/kube/node)
slow=(./engine/ignite ./engine/search ./tool/searchbench ./workload/searchload)

if [ "${1:-}" = --side ]; then
	start=$SECONDS rc=0
	"$GO" test "${flags[@]}" -run '^(TestRealNode|TestServeUndoes)$' "${node[@]}" || rc=1
	"$GO" test "${flags[@]}" "${slow[@]}" || rc=1
	echo "side lane: $((SECONDS - start)) s"
	exit $rc
fi

side_log=$(mktemp "${TMPDIR:-/tmp}/tierbench-test-side-XXXXXX")
side=
stop() {
	# The side lane is a session of its own (setsid): end all of it.
	[ -n "$side" ] && kill -TERM -- "-$side" 2>/dev/null
	rm -f "$side_log"
	exit 130
}
trap stop INT TERM
trap 'rm -f "$side_log"' EXIT

# The main lane's packages: all but the side lane's (TestRealNode is
# skipped by name in cmd/tierbench, whose other tests run here).
side_pkgs=$(printf "$module/%s\n" "${node[@]#./}" "${slow[@]#./}" | grep -v -x "$module/cmd/tierbench")
mapfile -t main < <($GO list ./... | grep -v -x -F "$side_pkgs")

setsid -w "$0" --side >"$side_log" 2>&1 &
side=$!

start=$SECONDS
"$GO" test "${flags[@]}" -skip '^TestRealNode$' "${main[@]}"
main_rc=$?
echo "main lane: $((SECONDS - start)) s"
wait "$side"
side_rc=$?
side=
echo "--- side lane: TestRealNode, platform/kube/node, ${slow[*]}"
cat "$side_log"
if [ "$main_rc" -ne 0 ] || [ "$side_rc" -ne 0 ]; then
	echo "FAIL: main lane exit $main_rc, side lane exit $side_rc"
	exit 1
fi
