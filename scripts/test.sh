#!/usr/bin/env bash
# The whole test suite, as `make test` runs it after setup and lint, in
# two lanes at once; it fails if either does, and prints both.
#
# The main lane runs the packages one at a time (-p 1): the tests that
# time engines must not compete with each other for 2 cores.
#
# The side lane runs, meanwhile, tests that assert no figure and mostly
# wait on servers to start, one package at a time: first runner's
# TestIgniteCrash (what Ignite's JVMs keep through crashes) and its crash
# tests of the other engines (TestProcessCrash, TestPowerCrash,
# TestPowerModelsSynced: which writes a crash loses, never how fast a run
# was), which keep the lanes about even; the tiny Ceph
# clusters' packages, which wait on monitors and OSDs (engine/ceph,
# tool/radosbench, workload/objects); the packages whose servers and tools
# are JVMs and Python programs that take tens of seconds to start
# (engine/ignite, engine/search, tool/searchbench, workload/searchload);
# last those that start this machine's one Kubernetes node, one after the
# other (cmd/tierbench's TestRealNode, which waits on containerd, the
# kubelet and pods; platform/kube/node), and cmd/tierbench's
# TestTimeoutUndoes, which waits out two child test binaries' -timeout
# around a PostgreSQL run, its kill -9 tests (TestKill9AtRandomMoments,
# TestKill9CapacityResume), which kill studies and check what resume
# makes of them, whatever their figures, and its Kubernetes tests on
# kubetest's control planes (TestKubernetesStudy,
# TestKubernetesClusterEngine, TestKubernetesKill9), which wait on them. They check files, errors, counts
# and processes. Every test keeps to folders, ports, ledgers and processes
# of its own, whichever lane runs it.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
flags=(-count=1 -p 1 -timeout 25m)
module=github.com/tierbench/tierbench
node=(./cmd/tierbench ./platform/kube/node)
ceph=(./engine/ceph ./tool/radosbench ./workload/objects)
slow=(./engine/ignite ./engine/search ./tool/searchbench ./workload/searchload)

# side is the side lane's tests by name, skipped in the main lane.
side='^(TestIgniteCrash|TestProcessCrash|TestPowerCrash|TestPowerModelsSynced|TestRealNode|TestServeUndoes|TestTimeoutUndoes|TestKill9AtRandomMoments|TestKill9CapacityResume|TestKubernetesStudy|TestKubernetesClusterEngine|TestKubernetesKill9)$'

if [ "${1:-}" = --side ]; then
	start=$SECONDS rc=0
	"$GO" test "${flags[@]}" -run "$side" ./runner || rc=1
	"$GO" test "${flags[@]}" "${ceph[@]}" "${slow[@]}" || rc=1
	"$GO" test "${flags[@]}" -run "$side" "${node[@]}" || rc=1
	echo "side lane: $((SECONDS - start)) s"
	exit $rc
fi

side_log=$(mktemp "${TMPDIR:-/tmp}/tierbench-test-side-XXXXXX")
lane=
stop() {
	# The side lane is a session of its own (setsid): end all of it.
	[ -n "$lane" ] && kill -TERM -- "-$lane" 2>/dev/null
	rm -f "$side_log"
	exit 130
}
trap stop INT TERM
trap 'rm -f "$side_log"' EXIT

# The main lane's packages: all but the side lane's whole ones (runner's
# and cmd/tierbench's other tests run here).
side_pkgs=$(printf "$module/%s\n" "${node[@]#./}" "${ceph[@]#./}" "${slow[@]#./}" | grep -v -x "$module/cmd/tierbench")
mapfile -t main < <($GO list ./... | grep -v -x -F "$side_pkgs")

setsid -w "$0" --side >"$side_log" 2>&1 &
lane=$!

start=$SECONDS
"$GO" test "${flags[@]}" -skip "$side" "${main[@]}"
main_rc=$?
echo "main lane: $((SECONDS - start)) s"
wait "$lane"
side_rc=$?
lane=
echo "--- side lane: TestIgniteCrash, TestProcessCrash, TestPowerCrash, TestPowerModelsSynced, ${ceph[*]} ${slow[*]}, TestRealNode, TestTimeoutUndoes, TestKill9AtRandomMoments, TestKill9CapacityResume, TestKubernetes*, platform/kube/node"
cat "$side_log"
if [ "$main_rc" -ne 0 ] || [ "$side_rc" -ne 0 ]; then
	echo "FAIL: main lane exit $main_rc, side lane exit $side_rc"
	exit 1
fi
