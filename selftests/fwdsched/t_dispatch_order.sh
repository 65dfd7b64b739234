#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc nullb scsi ufs
#
# Dispatch order under 16 threads of 4 KiB random reads: in blktrace's D
# events the sweep only moves backward where fwdsched says it wrapped,
# served an expired request or served an at-head request, and the
# debugfs counters agree with what blktrace saw.  On the SD card and
# scsi_debug every dispatch is also checked against the sweep rebuilt
# from the trace alone (fwdlib.py sweep): the lowest waiting sector at or
# above the position, or the lowest of all at a wrap.
#
# blktrace merges per-CPU buffers by time stamp, and two CPUs can start
# requests of one sweep in the opposite order.  null_blk and scsi_debug
# have a hardware queue per CPU here, and fio runs on one CPU
# (run_fio_ordered), so one CPU dispatches everything and D order is pick
# order; the test checks that it was so.  The comparisons allow 1 % of
# the dispatches plus two for a dispatcher preempted between pick and
# start.  Under full preemption (the debug kernels, Android) that can
# happen at any dispatch, so the order is shown but not judged there
# (order_judged); the counters still are.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
reset_tunables "$d"
pure_sweep "$d"

s0=$(cat "$(schedfs "$d")/stats")
blk_start "$d" order
# At most 16 x 256 reads: enough to judge, and few enough that blktrace
# keeps up and blkparse stays quick on a fast disk under emulation.
FWD_RUNTIME=${FWD_RUNTIME:-8} FWD_SIZE=128m FWD_IOSIZE=1m \
	run_fio_ordered "$d" selftest/r16-randread "$FWD_OUT/r16-randread"
blk_stop
s1=$(cat "$(schedfs "$d")/stats")
delta() { stat_delta "$s0" "$s1" "$1"; }

fwdlib reads "$(blk_file order)"
read -r nd back cpus <<< "$FWDLIB_OUT"
disp=$(delta dispatched)
bwd=$(delta backward)
fwd=$(delta forward)
excused=$(( $(delta wraps) + $(delta expired) + $(delta head) ))
tol=$(( nd / 100 + 2 ))
diag "blktrace: $nd dispatches, $back backward"
diag "debugfs: dispatched $disp forward $fwd backward $bwd wraps+expired+head $excused"

[ "$nd" -ge 200 ] || fail "only $nd dispatches seen: load too small to judge"
check_pick_order "$d" "$cpus"
[ $((fwd + bwd)) -eq "$disp" ] || fail "forward + backward != dispatched"
[ "$bwd" -le "$excused" ] ||
	fail "fwdsched moved backward $bwd times but wrapped/expired/head only $excused"
diff=$(( disp > nd ? disp - nd : nd - disp ))
[ "$diff" -le "$tol" ] || fail "debugfs dispatched $disp vs blktrace $nd"
diff=$(( bwd > back ? bwd - back : back - bwd ))
if order_judged "backward moves in blktrace"; then
	[ "$diff" -le "$tol" ] || fail "debugfs backward $bwd vs blktrace $back"
fi
# The sweep, rebuilt from the trace.  On the SD card (one command at a
# time) most reads wait in the scheduler, so the check sees hundreds of
# choices whatever the host's speed; on scsi_debug few reads wait, and
# the check only covers those.  The share of backward moves is not
# checked: it depends on how many reads wait, that is on timing.
kind=$(disk_kind "$d")
if [ "$kind" != nullb ]; then
	sweep_check "$d" order "$tol"
	[ "$kind" != mmc ] || [ "$SWEEP_CHOICES" -ge 100 ] ||
		fail "only $SWEEP_CHOICES dispatches had others waiting: too few to judge"
fi
diag "forward fraction $(( (nd - back) * 1000 / nd )) per mille"
exit 0
