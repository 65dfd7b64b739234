#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: nullb
#
# Zoned disks, on a zoned null_blk of the test's own (16 zones of 8 MiB,
# memory backed).  What is right depends on the kernel:
#  - before 6.10 the block layer leaves the order of a zone's writes to
#    the scheduler: a zoned queue requires ELEVATOR_F_ZBD_SEQ_WRITE
#    (q->required_elevator_features, set by null_blk and sd_zbc), which
#    only mq-deadline claims (zone write locking).  fwdsched does not, so
#    it is not offered (elv_iosched_show), selecting it fails with EINVAL
#    (elevator_get() finds no match) and the scheduler in use stays;
#  - from 6.10 zone write plugging (block/blk-zoned.c) issues one write
#    at a time per zone whatever the scheduler, and the required features
#    are gone: fwdsched is selected, and two writers with 8 writes in
#    flight each, 4 zones apiece, write their zones sequentially under it
#    and verify them (crc32c); each zone then reports full.  A write
#    issued out of order fails on the device and fails fio.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
z=nullb_zn
cleanup() {
	fwd_test_exit
	nullb_remove "$z"
} 2>/dev/null
trap cleanup EXIT

nullb_create "$z" zoned=1 zone_size=8 size=128 memory_backed=1 \
	hw_queue_depth=64 submit_queues="$(nproc)" || fail "cannot create zoned $z"
udevadm settle 2>/dev/null
[ "$(cat "/sys/block/$z/queue/zoned")" = host-managed ] ||
	fail "$z is not host-managed: $(cat "/sys/block/$z/queue/zoned")"
grep -qw fwdsched "/sys/block/$d/queue/scheduler" ||
	fail "fwdsched is not offered on $d, a disk that is not zoned"
ver=$(uname -r | awk -F. '{ print $1 * 100 + $2 }')
if [ "$ver" -lt 610 ]; then
	old=$(cur_sched "$z")
	grep -qw fwdsched "/sys/block/$z/queue/scheduler" &&
		fail "fwdsched offered on zoned $z: $(cat "/sys/block/$z/queue/scheduler")"
	err=$( { echo fwdsched > "/sys/block/$z/queue/scheduler"; } 2>&1 ) &&
		fail "selecting fwdsched on zoned $z was accepted"
	case $err in
	*"Invalid argument"*) ;;
	*) fail "selecting fwdsched on zoned $z: expected EINVAL, got: $err" ;;
	esac
	[ "$(cur_sched "$z")" = "$old" ] ||
		fail "the scheduler of $z changed from $old to $(cur_sched "$z")"
	diag "zoned $z: fwdsched not offered, selecting it refused (EINVAL), $old kept"
	exit 0
fi

set_sched "$z" fwdsched
json=$FWD_OUT/zoned.json
timeout -k 10 600 fio --output-format=json --output="$json" \
	--name=zw --filename="/dev/$z" --zonemode=zbd --direct=1 \
	--ioengine=libaio --iodepth=8 --rw=write --bsrange=4k-64k \
	--numjobs=2 --size=32m --offset_increment=32m \
	--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
	> "$FWD_OUT/zoned.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "fio failed on zoned $z under fwdsched (exit $rc): $(tail -n 5 "$FWD_OUT/zoned.log")"
sed -i -n '/^{/,$p' "$json"
host_py - "$json" <<'PY' || fail "the zone writes did not all complete and verify (see $json)"
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
for j in jobs:
    print("# job %s: error %d, wrote %d KiB, verified %d KiB" % (
        j["jobname"], j["error"], j["write"]["io_kbytes"], j["read"]["io_kbytes"]))
sys.exit(0 if len(jobs) == 2 and all(
    j["error"] == 0 and j["write"]["io_kbytes"] == 32768 and
    j["read"]["io_kbytes"] == 32768 for j in jobs) else 1)
PY
[ "$(stat_get "$z" dispatched)" -gt 0 ] || fail "fwdsched dispatched nothing on $z"
blkzone report "/dev/$z" > "$FWD_OUT/zones.txt" || fail "blkzone report failed"
full=$(grep -c 'zcond:14(fu)' "$FWD_OUT/zones.txt")
empty=$(grep -c 'zcond: *1(em)' "$FWD_OUT/zones.txt")
[ "$full" -eq 8 ] && [ "$empty" -eq 8 ] ||
	fail "after writing zones 0-7: $full zones full, $empty empty (expected 8 and 8; see zones.txt)"
diag "zoned $z under fwdsched: 64 MiB written in zone order with 16 writes in flight, verified; 8 zones full"
exit 0
