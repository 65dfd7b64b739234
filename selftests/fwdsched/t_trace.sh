#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc nullb
#
# fwdsched's own tracepoints (trace system "fwdsched") report its
# decisions one for one with its debugfs counters.  While a deep reader
# runs against a synchronous reader (fio-jobs/selftest/fair-deep-sync.fio;
# on null_blk with dispatch_depth 2, so that holds happen there too), the
# events are recorded in the trace buffer; afterwards, with nothing lost:
#  - fwdsched_decide events of each kind equal the counters' growth:
#    wrap = wraps, expired, aged, head, detour = detours, fair_idle;
#  - fwdsched_hold events of each reason equal depth_holds, fair_holds
#    and antic_holds;
#  - fwdsched_anticipated events equal antic_hits ("arrived") and
#    antic_timeouts ("timed out");
#  - every anticipation that started ended once (at most the last one
#    is still in effect);
#  - some decisions were made at all (wraps and holds), or nothing was
#    judged.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
t=$FWD_TRACEFS
sfs=$(schedfs "$d")
reset_tunables "$d"
[ "$(disk_kind "$d")" = mmc ] || tunable_set "$d" dispatch_depth 2
tracefs_ready
[ -d "$t/events/fwdsched" ] || fail "no fwdsched trace events in $t/events"

echo 16384 > "$t/buffer_size_kb"
: > "$t/trace"
echo 1 > "$t/events/fwdsched/enable" || fail "cannot enable the fwdsched events"
s0=$(cat "$sfs/stats")
FWD_RUNTIME=${FWD_RUNTIME:-5} FWD_SIZE=256m \
	run_fio "$d" selftest/fair-deep-sync.fio "$FWD_OUT/trace"
s1=$(cat "$sfs/stats")
echo 0 > "$t/events/fwdsched/enable"
cp "$t/trace" "$FWD_OUT/trace.txt"
: > "$t/trace"
lost=$(awk '/overrun:/ { n += $2 } END { print n + 0 }' "$t"/per_cpu/cpu*/stats)
[ "$lost" -eq 0 ] || fail "the trace buffer overran by $lost events"

# The events of each kind, counted in one pass ("<event> <kind>=<n>"
# lines): on null_blk the trace has about 190,000 events (20 MB), and a
# grep a kind over the 9p mount took 19 s under TCG.
counts=$(awk '{
	for (i = 1; i < NF - 1; i++)
		if ($i ~ /^fwdsched_[a-z]+:$/) {
			k = $i == "fwdsched_anticipated:" ? \
				($NF == "out" ? "timed out" : $NF) : $(i + 2)
			n[substr($i, 1, length($i) - 1) " " k]++
			break
		}
} END { for (x in n) print x "=" n[x] }' "$FWD_OUT/trace.txt") ||
	fail "cannot count the events of $FWD_OUT/trace.txt"
count() {
	local v
	v=$(grep -x "$1 $2=[0-9]*" <<< "$counts")
	echo "${v##*=}"
}
bad=0
pair() {
	local ev=$1 kind=$2 counter=$3 n c
	n=$(count "$ev" "$kind")
	n=${n:-0}
	c=$(stat_delta "$s0" "$s1" "$counter")
	diag "$ev $kind: $n events, $counter +$c"
	[ "$n" -eq "$c" ] || bad=$((bad + 1))
}
pair fwdsched_decide wrap wraps
pair fwdsched_decide expired expired
pair fwdsched_decide aged aged
pair fwdsched_decide head head
pair fwdsched_decide detour detours
pair fwdsched_decide fair_idle fair_idle
pair fwdsched_hold depth depth_holds
pair fwdsched_hold fair fair_holds
pair fwdsched_hold anticipate antic_holds
pair fwdsched_anticipated arrived antic_hits
pair fwdsched_anticipated "timed out" antic_timeouts
[ "$bad" -eq 0 ] || fail "$bad kinds of events differ from the counters"
# Each anticipation ends once: by its timer, or before it.  At most the
# last one is still in effect when the counters are read.
started=$(stat_delta "$s0" "$s1" antic_holds)
ended=$(( $(stat_delta "$s0" "$s1" antic_hits) + $(stat_delta "$s0" "$s1" antic_timeouts) ))
diag "anticipations: $started started, $ended ended"
[ "$ended" -le "$started" ] && [ "$started" -le $((ended + 1)) ] ||
	fail "$started anticipations started but $ended ended"
[ "$(stat_delta "$s0" "$s1" wraps)" -gt 0 ] || fail "no wraps: nothing was judged"
[ $(( $(stat_delta "$s0" "$s1" depth_holds) + $(stat_delta "$s0" "$s1" fair_holds) )) -gt 0 ] ||
	fail "no holds: nothing was judged"
reset_tunables "$d"
exit 0
