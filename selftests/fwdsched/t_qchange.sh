#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc nullb ufs
#
# Queue changes under load.  While fio writes and verifies
# (verify_backlog, until stopped), with dispatch_depth 2 (the SD card's
# default; set for the test elsewhere) so that fwdsched holds requests:
#  1. nr_requests is lowered and raised (4, 16, 256, 8, the default);
#     after each change async_depth is within 1..nr_requests (before 7.0
#     fwdsched's own: 3/4 of nr_requests while not written; from 7.0 the
#     queue's, which iosched/async_depth shows), and dispatch_depth keeps
#     its value;
#  2. the queue is frozen and unfrozen again and again: each
#     nr_requests write freezes it (blk_mq_update_nr_requests on 6.1, the
#     sysfs store on 6.12 and 7.2), so does a changed wbt_lat_usec on all
#     three (freeze and quiesce), and max_sectors_kb on 6.12 and 7.2
#     (queue_limits_commit_update_frozen; 6.1 changes it without one);
#  3. async_depth written to nr_requests, then nr_requests lowered to 8:
#     async_depth follows it down (before 7.0 to exactly 8, and stays
#     there when nr_requests grows again);
#  4. the scheduler is switched to mq-deadline and back in the middle,
#     and nr_requests changed again under the new fwdsched.
# Every write must return within 60 s (a hold that nothing ends would
# block the freeze for ever), fio must still be running at each change
# and end without an error; a wrong depth is noted as it is seen and
# fails the test at the end.  On the SD card the holds must have happened
# meanwhile (counted by fwdsched), or nothing was judged.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
kind=$(disk_kind "$d")
qd=/sys/block/$d/queue
json=$FWD_OUT/verify-backlog.json
fio_pid=
wbt0='' msk0=''
cleanup() {
	fwd_test_exit
	[ -z "$fio_pid" ] || kill -9 "$fio_pid"
	[ -z "$wbt0" ] || echo "$wbt0" > "$qd/wbt_lat_usec"
	[ -z "$msk0" ] || echo "$msk0" > "$qd/max_sectors_kb"
	reset_tunables "$d"
} 2>/dev/null
trap cleanup EXIT

reset_tunables "$d"
tunable_set "$d" dispatch_depth 2
nr0=$(cat "$qd/nr_requests")
[ -e "$qd/wbt_lat_usec" ] && wbt0=$(cat "$qd/wbt_lat_usec")
msk0=$(cat "$qd/max_sectors_kb")
holds() {
	echo $(( $(stat_get "$d" depth_holds) + $(stat_get "$d" fair_holds) +
		 $(stat_get "$d" antic_holds) ))
}
h=0

verify_backlog_start "$d" "$json" 900
sleep 2

running() {
	kill -0 "$fio_pid" 2>/dev/null || fail "fio ended before $1 (see $json)"
}

# check_depths <nr> [<async_depth expected before 7.0>]: a wrong depth
# is noted and the test goes on (the freezes and the switch are still
# tested); it fails at the end.
wrong=0
check_depths() {
	local a dd
	a=$(cat "$(iosched "$d")/async_depth")
	dd=$(cat "$(iosched "$d")/dispatch_depth")
	if [ "$a" -lt 1 ] || [ "$a" -gt "$1" ]; then
		diag "WRONG: async_depth $a outside 1..$1 after nr_requests $1"
		wrong=$((wrong + 1))
	fi
	if [ "$dd" != 2 ]; then
		diag "WRONG: dispatch_depth changed to $dd after nr_requests $1"
		wrong=$((wrong + 1))
	fi
	if [ -e "$qd/async_depth" ]; then
		if [ "$(cat "$qd/async_depth")" != "$a" ]; then
			diag "WRONG: iosched/async_depth $a, queue/async_depth $(cat "$qd/async_depth")"
			wrong=$((wrong + 1))
		fi
	elif [ -n "${2:-}" ] && [ "$a" != "$2" ]; then
		diag "WRONG: async_depth $a after nr_requests $1, expected $2"
		wrong=$((wrong + 1))
	fi
}

# freeze <n>: freeze and unfreeze the queue through sysfs limits
freeze() {
	local v
	if [ -n "$wbt0" ]; then
		v=$((wbt0 + 1000 * ($1 % 2 + 1)))
		guarded_write "$qd/wbt_lat_usec" "$v" ||
			fail "writing $v to wbt_lat_usec failed"
	fi
	v=$((msk0 / ($1 % 2 + 1)))
	[ "$v" -ge 4 ] || v=$msk0
	guarded_write "$qd/max_sectors_kb" "$v" ||
		fail "writing $v to max_sectors_kb failed"
}

# change_nr <what> <nr>...: nr_requests set to each <nr> in turn under
# load, the depths checked, and a freeze after each; the holds counted.
change_nr() {
	local what=$1 nr
	shift
	for nr; do
		running "nr_requests $nr$what"
		nr_requests_set "$d" "$nr"
		check_depths "$nr" $(( nr * 75 / 100 ))
		n=$((n + 1))
		freeze "$n"
		sleep 0.5
	done
	h=$((h + $(holds)))
}

n=0
change_nr "" 4 16 256 8 "$nr0"

# async_depth written: it follows nr_requests down, and (before 7.0)
# keeps the written value when nr_requests grows again.
tunable_set "$d" async_depth "$nr0"
running "nr_requests 8 (async_depth written)"
nr_requests_set "$d" 8
check_depths 8 8
running "nr_requests $nr0 (async_depth written)"
nr_requests_set "$d" "$nr0"
check_depths "$nr0" 8
n=$((n + 2))

# A switch in the middle, then more changes under the new fwdsched.
for s in mq-deadline fwdsched; do
	running "the switch to $s"
	guarded_write "$qd/scheduler" "$s" || fail "switch to $s failed"
	[ "$(cur_sched "$d")" = "$s" ] || fail "switched to $(cur_sched "$d"), not $s"
done
tunable_set "$d" dispatch_depth 2
change_nr " after the switch" 4 "$(cat "$qd/nr_requests")"

running "the end"
pid=$fio_pid
fio_pid=
fio_stop "$pid" "$json" || fail "fio exited with $? (see $json)"
verified_jobs "$json" 2 || fail "fio reported a failure during the changes (see $json)"
diag "$n nr_requests changes and a switch under load; $h holds meanwhile"
[ "$kind" != mmc ] || [ "$h" -gt 0 ] ||
	fail "no hold on the SD card: freezes with holds were not tested"
[ "$wrong" -eq 0 ] || fail "$wrong depths wrong after nr_requests changes (see above)"
exit 0
