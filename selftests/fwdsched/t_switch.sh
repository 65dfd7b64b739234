#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc nullb ufs
#
# Switching schedulers under load: while fio writes and verifies
# (verify_backlog), the disk is switched fwdsched -> mq-deadline -> none
# -> fwdsched, FWD_SWITCH_ROUNDS times (5; 3 on the SD card, where one
# switch drains the card for up to seconds).  Each switch must finish
# within 120 s, a hang guard, as removal's (a held request would hang the
# queue freeze for good; under TCG the guest now and then stands still
# for 20-30 s, reported as a soft lockup of an idle CPU, and one switch
# on 7.2 ran past the 20 s allowed before), fio must be
# running at every switch, and it must end without an error once the
# switching is done.
#
# fio runs until it is stopped rather than for a fixed time: a switch
# freezes the queue and waits for everything in flight, and on the SD
# card under emulation one switch took from under a second to five, so
# a fixed run let anywhere from 6 to 15 switches happen under load.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
rounds=5
[ "$(disk_kind "$1")" != mmc ] || rounds=3
rounds=${FWD_SWITCH_ROUNDS:-$rounds}
json=$FWD_OUT/verify-backlog.json
reset_tunables "$d"
# The runtime is only an upper bound here; fio is stopped with SIGINT.
verify_backlog_start "$d" "$json" 600
sleep 2
n=0
declare -A ms
for r in $(seq "$rounds"); do
	for s in mq-deadline none fwdsched; do
		kill -0 "$fio_pid" 2>/dev/null ||
			fail "fio ended before switch $((n + 1)) (see $json)"
		t=${EPOCHREALTIME/./}
		# 7.x refuses a switch with EBUSY while its lock is taken
		# elsewhere (as set_sched retries); a switch that blocks
		# fails the test at 60 s.
		switch_to "$d" "$s"
		t=$(( (${EPOCHREALTIME/./} - t) / 1000 ))
		[ "${ms[$s]:-0}" -ge "$t" ] || ms[$s]=$t
		n=$((n + 1))
		sleep 0.3
	done
done
# Not judged (timing): the slowest switch to each scheduler.
diag "slowest switch, ms: to mq-deadline ${ms[mq-deadline]}, to none ${ms[none]}, to fwdsched ${ms[fwdsched]}"
fio_stop "$fio_pid" "$json" || fail "fio exited with $? (see $json)"
verified_jobs "$json" 2 || fail "fio reported a failure while switching (see $json)"
[ "$(cur_sched "$d")" = fwdsched ] || fail "ended on $(cur_sched "$d")"
diag "$n switches under verifying I/O"
exit 0
