#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc nullb scsi
#
# Switching schedulers under load: while fio writes and verifies
# (verify_backlog), the disk is switched fwdsched -> mq-deadline -> none
# -> fwdsched many times.  Each switch must finish within 30 s (a held
# request would hang the queue freeze), and fio must end without error.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
rounds=${FWD_SWITCH_ROUNDS:-12}
reset_tunables "$d"
FWD_RUNTIME=$((rounds * 2 + 10)) FWD_SIZE=16m run_fio "$d" selftest/verify-backlog.fio &
fio_pid=$!
sleep 2
n=0
for r in $(seq "$rounds"); do
	for s in mq-deadline none fwdsched; do
		timeout 30 bash -c "echo $s > /sys/block/$d/queue/scheduler" ||
			{ kill "$fio_pid"; fail "switch to $s hung or failed (round $r)"; }
		n=$((n + 1))
		sleep 0.3
	done
	kill -0 "$fio_pid" 2>/dev/null || break
done
wait "$fio_pid" || fail "fio failed while switching (see $FWD_OUT)"
[ "$(cur_sched "$d")" = fwdsched ] || fail "ended on $(cur_sched "$d")"
[ "$n" -ge 9 ] || fail "only $n switches happened under load"
diag "$n switches under verifying I/O"
exit 0
