#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc
#
# Deadline bound.  16 threads keep random reads waiting in the upper half
# of the SD card, and one read goes to sector 0, far below all of them.
# The sweep reaches sector 0 only at a wrap.  read_expire is set to
# 10 ms, below the time the card takes for the 16 waiting reads (about
# 10 ms on a fast host, 40 ms on a busy one), so reads left behind the
# sweep position go out by expiry whatever the host's speed, and the
# expiry path must have been taken.  (At 50 ms a fast host never let a
# read wait that long.)
#
# The bound is checked in commands, not milliseconds, because the guest
# can stall for hundreds of milliseconds when the host is busy: once a
# read's deadline has passed (plus 8 ms, two jiffies of expiry
# granularity at HZ=250), at most 18 other requests may be dispatched
# before it.  That is the bound of Documentation/block/fwdsched-iosched.rst
# for this load: expired reads go out oldest first, so it may wait for
# the at most 15 expired before it (one per other reader) and the one
# already taken for the card, plus a margin of two.  The waits in ms are
# printed for information.  The commands are counted in D order, which
# under full preemption is not pick order (order_judged): there the
# bound is shown, and the expiry path must still have been taken.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
expire=10
slack_cmds=18
reset_tunables "$d"
pure_sweep "$d"
tunable_set "$d" read_expire "$expire"

e0=$(stat_get "$d" expired)
blk_start "$d" deadline
FWD_RUNTIME=6 FWD_OFFSET=2g FWD_SIZE=1g run_fio "$d" selftest/r16-randread "$FWD_OUT/r16-randread" &
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

# For every read: "sector waited_ms late", late being how many requests
# were dispatched after its deadline (plus two jiffies) and before it.
fwdlib deadline "$(blk_file deadline)" "$expire"
printf '%s\n' "$FWDLIB_OUT" > "$FWD_OUT/waits"
n=$(grep -c . "$FWD_OUT/waits")
read -r msec mms mlate < <(sort -k3 -n "$FWD_OUT/waits" | tail -n 1)
maxms=$(sort -k2 -n "$FWD_OUT/waits" | tail -n 1 | cut -d' ' -f2)
read -r _ lowms lowlate < <(awk '$1 == 0 { print; exit }' "$FWD_OUT/waits")
diag "$n reads; longest wait $maxms ms; most dispatched after a deadline: $mlate (sector $msec, waited $mms ms)"
diag "sector 0 waited ${lowms:-?} ms, ${lowlate:-?} dispatched after its deadline; expired +$((e1 - e0)); bound $slack_cmds"
[ "$n" -ge 100 ] || fail "only $n reads traced: load too small to judge"
[ -n "$lowlate" ] || fail "no insert and dispatch of sector 0 in the trace"
if order_judged "the bound in commands"; then
	[ "$lowlate" -le "$slack_cmds" ] ||
		fail "sector 0: $lowlate requests dispatched after its deadline before it"
	[ "$mlate" -le "$slack_cmds" ] ||
		fail "sector $msec: $mlate requests dispatched after its deadline before it"
fi
[ $((e1 - e0)) -ge 1 ] || fail "no request was dispatched as expired"
reset_tunables "$d"
exit 0
