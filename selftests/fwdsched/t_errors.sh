#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: nullb scsi
#
# I/O errors: reads of a bad range fail, the errors reach fio, nothing
# hangs, and I/O flows afterwards.  The bad range is sectors 4660-4669:
# scsi_debug's medium error (opts 0x2, reads only, "unrecovered read
# error"; the same range in 6.1, 6.12 and 7.2), set on the driver for the
# test, and on null_blk a disk of the test's own with those sectors in
# its badblocks list.  Four processes read the 64 KiB around them 4 KiB
# at a time, 8 passes, going on after each error (continue_on_error,
# for EIO and for ENODATA, which SCSI's BLK_STS_MEDIUM becomes),
# while two others write and verify elsewhere; merging is off on the
# disk meanwhile, so that no good block shares a request with a bad one.
# Judged: each reader met exactly 16 errors (2 blocks a pass) and the
# writers none; fwdsched's books balance over the errors (books_check:
# every request dispatched once and completed once, nothing left in
# flight); with the bad range cleared, it reads back and crc32c-verified
# writes pass.  A failed request that fwdsched lost or never finished
# hangs a reader or leaves it "in flight".
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
kind=$(disk_kind "$d")
drv=/sys/bus/pseudo/drivers/scsi_debug
bad_first=4660 bad_last=4669
mydisk=
cleanup() {
	fwd_test_exit
	[ "$kind" != scsi ] || [ -z "${opts0:-}" ] || echo "$opts0" > "$drv/opts"
	[ -z "${nomerges0:-}" ] || echo "$nomerges0" > "/sys/block/$d/queue/nomerges"
	[ -z "$mydisk" ] || nullb_remove "$mydisk"
} 2>/dev/null
trap cleanup EXIT

if [ "$kind" = nullb ]; then
	mydisk=nullb_err
	d=$mydisk
	nullb_create "$d" memory_backed=1 hw_queue_depth=64 \
		submit_queues="$(nproc)" || fail "cannot create $d"
	udevadm settle 2>/dev/null
fi
reset_tunables "$d"
nomerges0=$(cat "/sys/block/$d/queue/nomerges")
echo 2 > "/sys/block/$d/queue/nomerges"

sched_books "$d" > "$FWD_OUT/books.before"
case $kind in
nullb)
	echo "+$bad_first-$bad_last" > "/sys/kernel/config/nullb/$d/badblocks" ||
		fail "cannot set bad blocks on $d"
	;;
scsi)
	opts0=$(cat "$drv/opts")
	echo 0x2 > "$drv/opts" || fail "cannot set scsi_debug opts"
	;;
esac
json=$FWD_OUT/errors.json
# The readers' 64 KiB start at sector 4608: blocks 582 (sectors
# 4656-4663) and 583 (4664-4671) hold the bad range.
timeout -k 10 600 fio --output-format=json --output="$json" \
	--filename="/dev/$d" --direct=1 \
	--name=bad --numjobs=4 --ioengine=psync --rw=read --bs=4k \
	--offset=$((4608 * 512)) --size=64k --loops=8 --continue_on_error=read \
	--ignore_error=5:61 \
	--name=good --numjobs=2 --ioengine=libaio --iodepth=8 --rw=randwrite \
	--bsrange=4k-64k --offset=64m --size=8m --offset_increment=8m \
	--verify=crc32c --verify_fatal=1 --verify_state_save=0 --randrepeat=0 \
	> "$FWD_OUT/errors.log" 2>&1
rc=$?
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || fail "fio hung with errors pending"
case $kind in
nullb) echo "-$bad_first-$bad_last" > "/sys/kernel/config/nullb/$d/badblocks" ;;
scsi) echo "$opts0" > "$drv/opts" ;;
esac
sched_books "$d" > "$FWD_OUT/books.after"
sed -i -n '/^{/,$p' "$json"
host_py - "$json" <<'PY' || fail "the errors did not reach fio as expected (see $json)"
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
ok = len(jobs) == 6
for j in jobs:
    errs = j.get("total_err", 0)
    print("# job %s: error %d, first_error %d, total_err %d, read %d KiB, wrote %d KiB"
          % (j["jobname"], j["error"], j.get("first_error", 0), errs,
             j["read"]["io_kbytes"], j["write"]["io_kbytes"]))
    if j["jobname"] == "bad":
        # EIO from null_blk, ENODATA (BLK_STS_MEDIUM) from SCSI
        ok &= errs == 16 and j.get("first_error", 0) in (5, 61)
    else:
        ok &= j["error"] == 0 and errs == 0 and j["write"]["io_kbytes"] == 8192
        ok &= j["read"]["io_kbytes"] >= j["write"]["io_kbytes"]
sys.exit(0 if ok else 1)
PY
books_check "$FWD_OUT/books.before" "$FWD_OUT/books.after"

# Afterwards: the range reads, and verified writes pass.
echo "$nomerges0" > "/sys/block/$d/queue/nomerges"
dd if="/dev/$d" of=/dev/null bs=4k skip=576 count=16 iflag=direct 2>/dev/null ||
	fail "the cleared range does not read"
FWD_SIZE=8m run_fio "$d" selftest/verify-crc32c "$FWD_OUT/after"
host_py - "$FWD_OUT/after.json" <<'PY' || fail "I/O after the errors failed"
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
for j in jobs:
    print("# after: job %s: error %d, wrote %d KiB, verified %d KiB" % (
        j["jobname"], j["error"], j["write"]["io_kbytes"], j["read"]["io_kbytes"]))
sys.exit(0 if len(jobs) == 2 and all(j["error"] == 0 and
         j["read"]["io_kbytes"] >= j["write"]["io_kbytes"] > 0 for j in jobs) else 1)
PY
diag "4 x 16 read errors reached fio; I/O flows afterwards"
exit 0
