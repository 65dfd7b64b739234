#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc
#
# Merges: adjacent 4 KiB writes that wait in the scheduler are merged
# into their neighbours.  fwdsched's merge counters must grow and
# blktrace must show the merges (M or F events); with front_merges off,
# the front-merge path is not taken and writes still complete.  Only on
# the SD card do requests reliably wait in the scheduler long enough.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
reset_tunables "$d"
m0=$(( $(stat_get "$d" bio_merges) + $(stat_get "$d" rq_merges) + $(stat_get "$d" insert_merges) ))
blk_start "$d" merges
FWD_SIZE=8m run_fio "$d" selftest/merge-seqwrite "$FWD_OUT/merge-seqwrite"
blk_stop
m1=$(( $(stat_get "$d" bio_merges) + $(stat_get "$d" rq_merges) + $(stat_get "$d" insert_merges) ))
ev=$(blk_events merges | awk '$1 == "M" || $1 == "F" { n++ } END { print n + 0 }')
q=$(blk_events merges | awk '$1 == "Q" { n++ } END { print n + 0 }')
dd=$(blk_events merges | awk '$1 == "D" { n++ } END { print n + 0 }')
diag "queued $q bios, dispatched $dd requests, $ev M/F events, fwdsched merges +$((m1 - m0))"
[ $((m1 - m0)) -gt 0 ] || fail "fwdsched merged nothing"
[ "$ev" -gt 0 ] || fail "blktrace shows no merge events"
[ "$dd" -lt "$q" ] || fail "as many dispatches as bios: nothing merged"

tunable_set "$d" front_merges 0
FWD_SIZE=4m run_fio "$d" selftest/merge-seqwrite "$FWD_OUT/merge-seqwrite"
reset_tunables "$d"
exit 0
