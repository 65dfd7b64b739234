#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc
#
# The bound on being passed over holds dispatch by dispatch, across reads
# and writes, and when the bounded scan has to take its fallback.  On the
# SD card (dispatch order is device order), with deadlines out of the way
# (read_expire and write_expire at their maximum), blktrace must show no
# request passed over by another process more than the documented
# (2 * fair_slack + c_P + 1) / c_Q + 1 times while it waited (fwdlib
# fair-bound; 2 * fair_slack + 3 for 4 KiB requests):
#  1. a writer (one 4 KiB write at a time) against a streaming reader (16
#     sequential reads in flight), with fifo_batch 1024.  Before, the
#     fairness check looked only at the direction of the current batch, so
#     the writer could wait (writes_starved + 1) * fifo_batch = 3072
#     dispatches of the reader;
#  2. a synchronous reader below a deep reader's region, so that more than
#     16 of the deep reader's requests often lie between the sweep position
#     and the top: the scan gives up after 16 and takes the synchronous
#     reader's oldest request (fair_fallbacks), which must happen, and
#     the bound must still hold.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
sfs=$(schedfs "$d")
reset_tunables "$d"
tunable_set "$d" read_expire 600000
tunable_set "$d" write_expire 600000
slack=$(cat "$(iosched "$d")/fair_slack")

# judge <trace name> <min requests>: the bound over the whole trace.
judge() {
	local reqs owners viol
	fwdlib fair-bound "$(blk_file "$1")" "$slack" 2> "$FWD_OUT/$1.diag"
	read -r reqs owners viol <<< "$FWDLIB_OUT"
	diag "$(cat "$FWD_OUT/$1.diag")"
	diag "$1: $reqs requests of $owners processes, $viol beyond the bound (fair_slack $slack)"
	[ "$owners" -ge 2 ] || fail "$1: the trace shows $owners processes, 2 ran"
	[ "$reqs" -ge "$2" ] || fail "$1: only $reqs requests: too few to judge"
	[ "$viol" -eq 0 ] || fail "$1: $viol requests were passed over beyond the bound"
}

# 1. A writer against a streaming reader.
tunable_set "$d" fifo_batch 1024
s0=$(cat "$sfs/stats")
blk_start "$d" writer
FWD_RUNTIME=${FWD_RUNTIME:-4} FWD_SIZE=64m FWD_SYNC_OFFSET=1g \
	run_fio "$d" selftest/writer-vs-stream.fio "$FWD_OUT/writer"
blk_stop
s1=$(cat "$sfs/stats")
diag "writer vs stream: fair_switches $(stat_delta "$s0" "$s1" fair_switches), expired $(stat_delta "$s0" "$s1" expired)"
judge writer 300
[ "$(stat_delta "$s0" "$s1" fair_switches)" -gt 0 ] ||
	fail "fairness never switched the direction for the writer"

# 2. The scan's fallback.
tunable_set "$d" fifo_batch 16
s0=$(cat "$sfs/stats")
blk_start "$d" fallback
FWD_RUNTIME=${FWD_RUNTIME:-3} FWD_SIZE=64m FWD_DEEP_OFFSET=1g FWD_SYNC_OFFSET=0 \
	run_fio "$d" selftest/deep-sync-regions.fio "$FWD_OUT/fallback"
blk_stop
s1=$(cat "$sfs/stats")
diag "fallback: fair_fallbacks $(stat_delta "$s0" "$s1" fair_fallbacks), detours $(stat_delta "$s0" "$s1" detours)"
judge fallback 300
[ "$(stat_delta "$s0" "$s1" fair_fallbacks)" -gt 0 ] ||
	fail "the scan never fell back: the case was not exercised"

reset_tunables "$d"
exit 0
