#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc
#
# Deadline bound.  16 threads keep random reads waiting in the upper half
# of the SD card, and one read goes to sector 0, far below all of them.
# The sweep reaches sector 0 only at a wrap; read_expire is set to 50 ms,
# about a sweep over 16 waiting requests on the emulated card, so
# requests left behind the sweep position go out by expiry.  Every read,
# sector 0's included, must be dispatched within read_expire plus a
# slack of 200 ms, and the expiry path must have been taken.  The slack
# is the bound of Documentation/block/fwdsched-iosched.rst for this
# load: expired reads go out oldest first, so one may wait for the (at
# most 15, one per other reader) expired before it, each a command of up
# to about 10 ms on the card under emulation, plus one jiffy of expiry
# granularity.  Only the SD card serves one command
# at a time, so only there do requests reliably wait in the scheduler.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
expire=50
slack=200
reset_tunables "$d"
pure_sweep "$d"
tunable_set "$d" read_expire "$expire"

e0=$(stat_get "$d" expired)
blk_start "$d" deadline
FWD_RUNTIME=6 FWD_OFFSET=2g FWD_SIZE=1g run_fio "$d" selftest/r16-randread.fio &
fio_pid=$!
# fio takes seconds to start under emulation: wait for the load to flow.
d0=$(stat_get "$d" dispatched)
for _ in $(seq 200); do
	[ $(( $(stat_get "$d" dispatched) - d0 )) -ge 64 ] && break
	sleep 0.1
done
[ $(( $(stat_get "$d" dispatched) - d0 )) -ge 64 ] ||
	fail "the random readers did not start within 20 s"
dd if="/dev/$d" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null ||
	fail "the low read failed"
wait "$fio_pid" || fail "the random readers failed"
blk_stop
e1=$(stat_get "$d" expired)

# Wait from insert (I) to dispatch (D) of every read, in ms.
blk_events deadline | awk '
	$5 ~ /R/ && $1 == "I" { ins[$2] = $4 }
	$5 ~ /R/ && $1 == "D" && ($2 in ins) {
		printf "%d %d\n", $2, ($4 - ins[$2]) * 1000
		delete ins[$2]
	}' > "$FWD_OUT/waits"
n=$(wc -l < "$FWD_OUT/waits")
max=$(sort -k2 -n "$FWD_OUT/waits" | tail -n 1)
low=$(awk '$1 == 0 { print $2; exit }' "$FWD_OUT/waits")
diag "$n reads; longest wait ${max#* } ms (sector ${max% *}); sector 0 waited ${low:-?} ms; expired +$((e1 - e0)); bound $((expire + slack)) ms"
[ "$n" -ge 100 ] || fail "only $n reads traced: load too small to judge"
[ -n "$low" ] || fail "no insert and dispatch of sector 0 in the trace"
[ "$low" -le $((expire + slack)) ] || fail "sector 0 waited $low ms"
[ "${max#* }" -le $((expire + slack)) ] ||
	fail "a read at sector ${max% *} waited ${max#* } ms"
[ $((e1 - e0)) -ge 1 ] || fail "no request was dispatched as expired"
reset_tunables "$d"
exit 0
