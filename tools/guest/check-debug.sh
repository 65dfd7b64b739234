#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/guest/check-debug.sh [run_tests.sh options]
#
# The guest side of the debug kernels in tools/check: runs the selftest
# suite (selftests/fwdsched/run_tests.sh, its KTAP on stdout) between two
# looks at what the console does not show.  Before it, kmemleak's
# suspects from the boot are reported and cleared, so that only leaks
# from here on count.  After it, every disk is switched away from
# fwdsched, fwdsched and mmc_history are unloaded, and kmemleak scans.
# Into FWD_RESULTS it writes
#   kmemleak.loaded   kmemleak's report before the unload, whose
#                     backtraces still name the modules' functions
#   kmemleak          kmemleak's report after the unload: every object in
#                     it is a leak
#   lockdep_stats     /proc/lockdep_stats at the end (debug_locks: 1 while
#                     lockdep still watches)
# which tools/analysis/splats.py judges on the host.  Exits with the
# suite's status, or 1 when the modules do not unload.
set -u

# shellcheck source=tools/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
results=${FWD_RESULTS:?FWD_RESULTS must name the results directory}
kml=/sys/kernel/debug/kmemleak
[ -w "$kml" ] || die "no $kml: not a debug kernel?"

# kmemleak reports an object that is older than 5 s and unreferenced in
# two scans in a row (the first may only see its contents change);
# "clear" marks everything reported so far as seen.
kmemleak_scan() {
	sleep 6
	echo scan > "$kml"
	echo scan > "$kml"
}
start=$(date +%s)
kmemleak_scan
echo clear > "$kml"
echo "# check-debug: kmemleak: boot's suspects cleared in $(($(date +%s) - start)) s"

# The debug checkers slow the tests 2 to 6 times
# (selftests/fwdsched/README.md): each may run three times the stock
# kernels' limit.
FWD_TEST_TIMEOUT=${FWD_TEST_TIMEOUT:-2700} \
	"$FWD_ROOT/selftests/fwdsched/run_tests.sh" "$@"
rc=$?
mkdir -p "$results"

start=$(date +%s)
for f in /sys/block/*/queue/scheduler; do
	d=${f#/sys/block/}
	d=${d%%/*}
	if [ "$(cur_sched "$d")" = fwdsched ] && ! (set_sched "$d" none); then
		echo "# check-debug: cannot switch $d away from fwdsched"
		rc=1
	fi
done
kmemleak_scan
cat "$kml" > "$results/kmemleak.loaded"
for m in fwdsched mmc_history; do
	[ -d "/sys/module/$m" ] || continue
	if ! rmmod "$m"; then
		echo "# check-debug: rmmod $m failed: $(lsmod | grep "^$m " || true)"
		rc=1
	fi
done
kmemleak_scan
cat "$kml" > "$results/kmemleak"
cat /proc/lockdep_stats > "$results/lockdep_stats"
echo "# check-debug: kmemleak: $(grep -c '^unreferenced object' "$results/kmemleak") suspects after the unload ($(($(date +%s) - start)) s)"
exit "$rc"
