#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: nullb ufs
#
# Fairness does not throttle a device with parallelism to spare.  On a
# null_blk disk of its own with 1 ms completions, 64 tags and a hardware
# queue per CPU (what UFS or NVMe look like to the scheduler), a reader
# keeping 32 requests in flight runs beside a synchronous reader
# (fio-jobs/selftest/deep-sync-regions.fio; the two read different
# regions, so the trace tells their requests apart by sector).  Before,
# the fairness hold ran the deep reader at queue depth 1 whenever the
# synchronous reader was between two requests.  The same on the UFS disk
# of the UFS transport (31 tags, one hardware queue: a phone's disk), the
# disk itself with its default tunables.  Now:
#  - dispatch_depth defaults to 0 there, and nothing is held (no fairness
#    hold, no anticipation);
#  - at the deep reader's own dispatches, blktrace shows it with at
#    least 4 requests in flight before them, and at least a third of what
#    it keeps under mq-deadline in the same test (medians over the run;
#    the hold left it 1 or 0).  mq-deadline is the reference because fio
#    keeps all 32 in flight only where the guest's CPUs keep up.  The
#    guests run without the local APIC timer (tools/runner/vm-run), so
#    null_blk's 1 ms completions come at 4 ms ticks, all 32 at once, and
#    fio refills in a burst: the median is then about 16 under either
#    scheduler.  The count at the synchronous reader's dispatches (shown)
#    is 0 or 31 depending on which of the two readers wins the race after
#    each tick, so it is not judged.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
if [ "$(disk_kind "$1")" = ufs ]; then
	dev=$1
	trap 'fwd_test_exit; reset_tunables "$dev"' EXIT
else
	dev=nullb7
	own_nullb "$dev" irqmode=2 completion_nsec=1000000 hw_queue_depth=64 \
		submit_queues="$(nproc)" size=2048
fi
sfs=$(schedfs "$dev")
fresh_sched "$dev" fwdsched
depth=$(cat "$(iosched "$dev")/dispatch_depth")
[ "$depth" = 0 ] || fail "dispatch_depth defaults to $depth on $dev ($(disk_kind "$dev"))"

# fwdlib inflight-at reads dispatches, completions and requeues only:
# the rest was 3 in 5 lines of a trace (5 in 7 on 6.12), parsed in the
# guest.
BLK_KEEP=DCR
# inflight <scheduler> <name>: the load under the scheduler, traced; the
# median of the deep reader's requests in flight at its own dispatches in
# MED.
inflight() {
	local n sync_med own_n
	fresh_sched "$dev" "$1"
	blk_start "$dev" "$2"
	# 256 MiB each: the sync reader from 1 GiB (sector 2097152) on.
	FWD_RUNTIME=${FWD_RUNTIME:-3} FWD_SIZE=256m FWD_DEEP_OFFSET=0 FWD_SYNC_OFFSET=1g \
		run_fio "$dev" selftest/deep-sync-regions.fio "$FWD_OUT/$2"
	blk_stop
	fwdlib inflight-at "$(blk_file "$2")" 2097152
	read -r n sync_med _ own_n MED _ <<< "$FWDLIB_OUT"
	[ "${n:-0}" -ge 200 ] || fail "$1: only ${n:-0} dispatches of the sync reader: too few to judge"
	diag "$1: deep reader's requests in flight at its $own_n dispatches: median $MED;" \
		"at the sync reader's: median $sync_med"
	"$FWD_PY" - "$FWD_OUT/$2.json" <<'PY'
import json, sys
for j in json.load(open(sys.argv[1]))["jobs"]:
    print("# %s: %.0f IOPS" % (j["jobname"], j["read"]["iops"]))
PY
}

# The reference: how many requests fio keeps in flight on this guest's
# CPUs (a slow guest keeps fewer than 32), under mq-deadline.
inflight mq-deadline ref
ref=$MED
inflight fwdsched deep
s1=$(cat "$sfs/stats")
for c in fair_holds antic_holds depth_holds; do
	[ "$(stat_of "$s1" $c)" -eq 0 ] || fail "$c is $(stat_of "$s1" $c) on a deep device"
done
if [ "${ref:-0}" -lt 8 ]; then
	# The UFS disk (a plain image) completes reads faster than fio
	# refills its queue (seen on 6.1: a median of 3 in flight at its
	# dispatches under mq-deadline, 6 under fwdsched): there
	# what the test stands for is that nothing is held, judged above; the
	# counts in flight are shown.
	[ "$(disk_kind "$dev")" != ufs ] ||
		{ diag "in flight not judged: fio kept only ${ref:-0} under mq-deadline"; exit 0; }
	skip "fio kept only ${ref:-0} requests in flight under mq-deadline: too slow a guest to judge"
fi
[ $(( ${MED:-0} * 3 )) -ge "$ref" ] && [ "${MED:-0}" -ge 4 ] ||
	fail "the deep reader had a median of ${MED:-0} requests in flight at its dispatches, under mq-deadline $ref"
exit 0
