#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: nullb ufs
#
# A deep reader (32 requests in flight) beside a synchronous reader
# (fio-jobs/selftest/deep-sync-regions.fio; the two read different
# regions, so the trace tells their requests apart by sector), on a
# device with command queueing, where dispatch_depth defaults to 0 and
# nothing idles the device (no anticipation, no depth hold):
#  - null_blk with 1 ms completions, 64 tags and a hardware queue per CPU
#    (parallelism to spare, like NVMe): sync_depth defaults to 0 and
#    fairness does not throttle the deep reader.  Nothing is held, and at
#    the deep reader's own dispatches blktrace shows it with at least 4
#    requests in flight before them, and at least a third of what it
#    keeps under mq-deadline in the same test (medians over the run).
#    mq-deadline is the reference because fio keeps all 32 in flight only
#    where the guest's CPUs keep up.  The guests run without the local
#    APIC timer (tools/runner/vm-run), so null_blk's 1 ms completions
#    come at 4 ms ticks, all 32 at once, and fio refills in a burst: the
#    median is then about 16 under either scheduler.  The count at the
#    synchronous reader's dispatches (shown) is 0 or 31 depending on
#    which of the two readers wins the race after each tick.
#  - the UFS disk of the UFS transport (31 tags, one hardware queue: a
#    phone's disk) with its default tunables: sync_depth defaults to 1,
#    so while the synchronous reader is between two reads the deep
#    reader has at most one request in flight beside the reader's own.
#    The cap held (fair_holds), the deep reader kept being served, and
#    at the synchronous reader's dispatches blktrace shows a median of at
#    most one of the deep reader's requests in flight where mq-deadline,
#    in the same test, left more (the plain image may complete reads as
#    fast as fio refills: then the median is shown, not judged).
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
if [ "$(disk_kind "$1")" = ufs ]; then
	dev=$1
	trap 'fwd_test_exit; reset_tunables "$dev"' EXIT
else
	dev=nullb7
	own_nullb "$dev" irqmode=2 completion_nsec=1000000 hw_queue_depth=64 \
		submit_queues="$(nproc)" size=2048
fi
kind=$(disk_kind "$dev")
sfs=$(schedfs "$dev")
fresh_sched "$dev" fwdsched
depth=$(cat "$(iosched "$dev")/dispatch_depth")
[ "$depth" = 0 ] || fail "dispatch_depth defaults to $depth on $dev ($kind)"
sync_depth=$(cat "$(iosched "$dev")/sync_depth")
want=0
[ "$kind" = ufs ] && want=1
[ "$sync_depth" = "$want" ] ||
	fail "sync_depth defaults to $sync_depth on $dev ($kind), not $want"

# fwdlib inflight-at reads dispatches, completions and requeues only:
# the rest was 3 in 5 lines of a trace (5 in 7 on 6.12), parsed in the
# guest.
BLK_KEEP=DCR
# inflight <scheduler> <name>: the load under the scheduler, traced; the
# median of the deep reader's requests in flight at its own dispatches in
# MED, at the synchronous reader's in SYNC_MED, and how many of its own
# dispatches in OWN_N.
inflight() {
	local n sync_p90
	fresh_sched "$dev" "$1"
	blk_start "$dev" "$2"
	# 256 MiB each: the sync reader from 1 GiB (sector 2097152) on.
	FWD_RUNTIME=${FWD_RUNTIME:-2} FWD_SIZE=256m FWD_DEEP_OFFSET=0 FWD_SYNC_OFFSET=1g \
		run_fio "$dev" selftest/deep-sync-regions.fio "$FWD_OUT/$2"
	blk_stop
	fwdlib inflight-at "$(blk_file "$2")" 2097152
	read -r n SYNC_MED _ sync_p90 OWN_N MED _ _ <<< "$FWDLIB_OUT"
	[ "${n:-0}" -ge 200 ] || fail "$1: only ${n:-0} dispatches of the sync reader: too few to judge"
	diag "$1: deep reader's requests in flight at its $OWN_N dispatches: median $MED;" \
		"at the sync reader's $n: median $SYNC_MED, 90th percentile $sync_p90"
	host_py - "$FWD_OUT/$2.json" <<'PY'
import json, sys
for j in json.load(open(sys.argv[1]))["jobs"]:
    print("# %s: %.0f IOPS" % (j["jobname"], j["read"]["iops"]))
PY
}

# The reference: how many requests fio keeps in flight on this guest's
# CPUs (a slow guest keeps fewer than 32), under mq-deadline.
inflight mq-deadline ref
ref=$MED ref_sync=$SYNC_MED
inflight fwdsched deep
s1=$(cat "$sfs/stats")
for c in antic_holds depth_holds; do
	[ "$(stat_of "$s1" $c)" -eq 0 ] || fail "$c is $(stat_of "$s1" $c) on $kind"
done
if [ "$kind" = ufs ]; then
	[ "$(stat_of "$s1" fair_holds)" -gt 0 ] ||
		fail "no fair_holds with sync_depth $sync_depth on $kind"
	[ "${OWN_N:-0}" -ge 100 ] || fail "the deep reader was dispatched only ${OWN_N:-0} times"
	# The plain image may complete reads about as fast as fio refills
	# its queue: where mq-deadline too left at most sync_depth in
	# flight, the median cannot show the cap (fair_holds, above, does).
	[ "${ref_sync:-0}" -gt "$sync_depth" ] || {
		diag "median in flight at the sync reader's dispatches not judged: mq-deadline left ${ref_sync:-0}"
		exit 0
	}
	[ "${SYNC_MED:-99}" -le "$sync_depth" ] ||
		fail "the sync reader found a median of $SYNC_MED deep requests in flight at its dispatches (sync_depth $sync_depth; mq-deadline $ref_sync)"
	exit 0
fi
[ "$(stat_of "$s1" fair_holds)" -eq 0 ] ||
	fail "fair_holds is $(stat_of "$s1" fair_holds) on $kind"
[ "${ref:-0}" -ge 8 ] ||
	skip "fio kept only ${ref:-0} requests in flight under mq-deadline: too slow a guest to judge"
[ $(( ${MED:-0} * 3 )) -ge "$ref" ] && [ "${MED:-0}" -ge 4 ] ||
	fail "the deep reader had a median of ${MED:-0} requests in flight at its dispatches, under mq-deadline $ref"
exit 0
