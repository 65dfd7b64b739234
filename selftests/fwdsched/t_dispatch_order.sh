#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc nullb scsi
#
# Dispatch order under 16 threads of 4 KiB random reads: in blktrace's D
# events the sweep only moves backward where fwdsched says it wrapped,
# served an expired request or served an at-head request, and the
# debugfs counters agree with what blktrace saw.
#
# blktrace merges per-CPU buffers by time stamp, and on a disk with many
# tags two CPUs can start requests of one sweep in the opposite order, so
# the comparison allows 1 % of the dispatches plus two.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
reset_tunables "$d"
pure_sweep "$d"

s0=$(cat "$(schedfs "$d")/stats")
blk_start "$d" order
# At most 16 x 256 reads: enough to judge, and few enough that blktrace
# keeps up and blkparse stays quick on a fast disk under emulation.
FWD_RUNTIME=${FWD_RUNTIME:-8} FWD_SIZE=128m FWD_IOSIZE=1m \
	run_fio "$d" selftest/r16-randread.fio
blk_stop
s1=$(cat "$(schedfs "$d")/stats")
delta() { echo $(( $(awk -v n="$1" '$1 == n {print $2}' <<< "$s1") - \
		   $(awk -v n="$1" '$1 == n {print $2}' <<< "$s0") )); }

read -r nd back < <(blk_backward order)
disp=$(delta dispatched)
bwd=$(delta backward)
fwd=$(delta forward)
excused=$(( $(delta wraps) + $(delta expired) + $(delta head) ))
tol=$(( nd / 100 + 2 ))
diag "blktrace: $nd dispatches, $back backward"
diag "debugfs: dispatched $disp forward $fwd backward $bwd wraps+expired+head $excused"

[ "$nd" -ge 200 ] || fail "only $nd dispatches seen: load too small to judge"
[ $((fwd + bwd)) -eq "$disp" ] || fail "forward + backward != dispatched"
[ "$bwd" -le "$excused" ] ||
	fail "fwdsched moved backward $bwd times but wrapped/expired/head only $excused"
diff=$(( disp > nd ? disp - nd : nd - disp ))
[ "$diff" -le "$tol" ] || fail "debugfs dispatched $disp vs blktrace $nd"
diff=$(( bwd > back ? bwd - back : back - bwd ))
[ "$diff" -le "$tol" ] || fail "debugfs backward $bwd vs blktrace $back"
# On the SD card (one command at a time) most of the 16 requests wait in
# the scheduler, so a sweep serves several of them between wraps: random
# order would go backward about half the time, the sweep at most a
# quarter (7 % on 6.12, 15 % on 6.1, whose MMC driver takes requests out
# of the scheduler earlier).  On the fast disks the queue rarely holds
# more than one or two, and wraps are as frequent as forward moves
# whatever the scheduler.
if [ "$(disk_kind "$d")" = mmc ]; then
	[ $((back * 4)) -le "$nd" ] ||
		fail "$back of $nd dispatches went backward: not a sweep"
fi
diag "forward fraction $(( (nd - back) * 1000 / nd )) per mille"
exit 0
