#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc
#
# Deadline bound: a read at sector 0, far below one continuous forward
# stream, is never reached by the sweep (the stream always has requests
# above the sweep position), so only its deadline gets it dispatched.
# It must be dispatched as an expired request, within read_expire plus
# a slack of 100 ms: one jiffy of expiry granularity, the command in
# flight on the card when it expires, and the guest's emulation delays.
# Only the SD card serves one command at a time, so only there is the
# sweep sure to hold the request back.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
expire=200
slack=100
reset_tunables "$d"
pure_sweep "$d"
tunable_set "$d" read_expire "$expire"

e0=$(stat_get "$d" expired)
blk_start "$d" deadline
FWD_RUNTIME=4 run_fio "$d" selftest/deadline-stream.fio &
fio_pid=$!
sleep 2
dd if="/dev/$d" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null ||
	fail "the low read failed"
wait "$fio_pid" || fail "the forward stream failed"
blk_stop
e1=$(stat_get "$d" expired)

read -r t_i t_d < <(blk_events deadline | awk '
	$2 == 0 && $5 ~ /R/ && $1 == "I" && !ti { ti = $4 }
	$2 == 0 && $5 ~ /R/ && $1 == "D" && ti && !td { td = $4 }
	END { print ti + 0, td + 0 }')
[ "$t_i" != 0 ] || fail "no insert (I) of sector 0 in the trace"
[ "$t_d" != 0 ] || fail "no dispatch (D) of sector 0 in the trace"
wait_ms=$(awk -v a="$t_i" -v b="$t_d" 'BEGIN { printf "%d", (b - a) * 1000 }')
diag "sector 0 waited $wait_ms ms (read_expire $expire ms); expired +$((e1 - e0))"
[ $((e1 - e0)) -ge 1 ] || fail "no request was dispatched as expired"
[ "$wait_ms" -le $((expire + slack)) ] ||
	fail "waited $wait_ms ms, bound is $((expire + slack)) ms"
reset_tunables "$d"
exit 0
