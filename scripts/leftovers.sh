#!/usr/bin/env bash
# Fails when the test suite left something behind: .ci/run runs it after
# the suite, passed or failed. `tierbench cleanup --check` undoes what
# dead processes left in a ledger and exits 1 when it found anything (or
# a node still runs on this machine). It checks the state folder
# ($TIERBENCH_STATE_DIR, else the default), then every state folder of a
# cmd/tierbench test binary that did not end by itself: its TestMain
# removes ${TMPDIR:-/tmp}/tierbench-bin-* when the tests end, so one that
# is still there was killed, typically by its -timeout. With
# TIERBENCH_LEFTOVERS_SINCE naming a file (.ci/run's stamp), only test
# binaries' folders made after it count: an earlier session's are not
# this run's to answer for.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${TIERBENCH:-bin/tierbench}
rc=0

check() {
	echo "--- tierbench cleanup --check: ${1:-the default state folder}"
	if [ -n "$1" ]; then
		TIERBENCH_STATE_DIR=$1 "$bin" cleanup --check || rc=1
	else
		"$bin" cleanup --check || rc=1
	fi
}

check "${TIERBENCH_STATE_DIR:-}"
shopt -s nullglob
for dir in "${TMPDIR:-/tmp}"/tierbench-bin-*/; do
	if [ -n "${TIERBENCH_LEFTOVERS_SINCE:-}" ] && ! [ "${dir%/}" -nt "$TIERBENCH_LEFTOVERS_SINCE" ]; then
		continue
	fi
	echo "--- ${dir%/} is a test binary's, which did not end by itself: remove it once checked"
	rc=1
	for state in "$dir"state*/; do
		check "${state%/}"
	done
done
exit $rc
