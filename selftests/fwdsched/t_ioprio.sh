#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc nullb
#
# I/O priority classes: two processes each keep 32 random reads in flight
# (fio-jobs/selftest/deep-randread.fio), one under a higher ionice class
# than the other.  A class is served only while no higher class has
# requests waiting, except for requests that waited prio_aging_expire
# ("aged" dispatches) and at-head requeues ("head").  So, from debugfs
# "procs" and "stats":
#  - real-time before best-effort: while the real-time process had a
#    request waiting, at most aged + head other requests were dispatched;
#  - idle after best-effort: likewise for the best-effort process, and
#    the idle-class process still made progress (aging).
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
command -v ionice > /dev/null || skip "ionice is not installed"
reset_tunables "$d"
sfs=$(schedfs "$d")
tunable_set "$d" prio_aging_expire 1000

# pair <hi-class> <lo-class>: run both, check the higher one's waits.
pair() {
	local hi=$1 lo=$2 s0 s1 procs pids=() c bypass hp lr
	echo reset > "$sfs/procs" || fail "cannot reset procs"
	s0=$(cat "$sfs/stats")
	for c in "$hi" "$lo"; do
		FWD_DEV=/dev/$d FWD_RUNTIME=${FWD_RUNTIME:-6} FWD_SIZE=256m \
			ionice -c "$c" fio --output-format=json \
			--output="$FWD_OUT/class$c.json" \
			"$FWD_ROOT/fio-jobs/selftest/deep-randread.fio" &
		pids+=($!)
	done
	for c in "${pids[@]}"; do
		wait "$c" || fail "fio (pid $c) failed on $d"
	done
	s1=$(cat "$sfs/stats")
	procs=$(cat "$sfs/procs")
	printf '%s\n' "$procs" > "$FWD_OUT/procs-$hi-$lo.txt"
	diag "$procs"
	bypass=$(( $(stat_delta "$s0" "$s1" aged) + $(stat_delta "$s0" "$s1" head) ))
	name() { case $1 in 1) echo rt ;; 2) echo be ;; 3) echo idle ;; esac; }
	# max_passed of the higher class, requests of the lower class
	hp=$(procs_get "$procs" class max_passed comm |
		awk -v c="$(name "$hi")" '$3 == "fio" && $1 == c { print $2 }')
	lr=$(procs_get "$procs" class rd_reqs comm |
		awk -v c="$(name "$lo")" '$3 == "fio" && $1 == c { print $2 }')
	[ -n "$hp" ] || fail "no $(name "$hi") fio process in procs"
	[ -n "$lr" ] || fail "no $(name "$lo") fio process in procs"
	diag "$(name "$hi") waited for at most $hp dispatches of others; aged+head $bypass; $(name "$lo") dispatched $lr"
	[ "$hp" -le "$bypass" ] ||
		fail "$(name "$lo") requests were served $hp times while $(name "$hi") waited, only $bypass aged/head"
	[ "$lr" -gt 0 ] || fail "the $(name "$lo") process made no progress"
}

pair 1 2
pair 2 3

reset_tunables "$d"
exit 0
