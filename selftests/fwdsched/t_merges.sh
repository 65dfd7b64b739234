#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: nullb
#
# Merges: adjacent 4 KiB writes that wait in the scheduler are merged
# into their neighbours.  fwdsched's merge counters must grow and
# blktrace must show the merges (M or F events); with front_merges off,
# writes still complete.
#
# Requests only wait in the scheduler while the disk is busy, so the
# test makes its own null_blk disk that serves one request at a time and
# holds each for 8 ms, with 64 scheduler requests (blk-mq gives a disk of
# one tag two, and takes the second out of the scheduler at once into
# its dispatch list, where nothing merges): with fio keeping 32 writes
# in flight, all but one or two wait whatever the guest's speed.  On the
# SD card whether they waited depended on how fast fio refilled against
# how fast QEMU emulated a 4 KiB write: one CI run merged nothing of
# 2,048 writes where others had merged 240 to 1,700.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=nullb5
own_nullb "$d" irqmode=2 completion_nsec=8000000 hw_queue_depth=1 \
	submit_queues=1 size=64
echo 64 > "/sys/block/$d/queue/nr_requests" ||
	fail "cannot set nr_requests of $d to 64"
merges() {
	echo $(( $(stat_get "$d" bio_merges) + $(stat_get "$d" rq_merges) +
		 $(stat_get "$d" insert_merges) ))
}
m0=$(merges)
blk_start "$d" merges
FWD_SIZE=8m run_fio "$d" selftest/merge-seqwrite "$FWD_OUT/merge-seqwrite"
blk_stop
m1=$(merges)
ev=$(blk_events merges |
	awk '$1 == "M" || $1 == "F" { n++ } END { print n + 0 }')
q=$(blk_events merges | awk '$1 == "Q" { n++ } END { print n + 0 }')
dd=$(blk_events merges | awk '$1 == "D" { n++ } END { print n + 0 }')
diag "queued $q bios, dispatched $dd requests, $ev M/F events, fwdsched merges +$((m1 - m0))"
[ "$q" -ge 2048 ] || fail "blktrace shows $q bios queued for 2048 writes"
[ $((m1 - m0)) -gt 0 ] || fail "fwdsched merged nothing"
[ "$ev" -gt 0 ] || fail "blktrace shows no merge events"
# All but the first writes of each service wait: most are merged.
[ $((dd * 2)) -lt "$q" ] || fail "$dd dispatches for $q bios: most were not merged"

tunable_set "$d" front_merges 0
FWD_SIZE=2m run_fio "$d" selftest/merge-seqwrite "$FWD_OUT/merge-seqwrite"
exit 0
