#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: scsi
#
# Removal: a disk of the test's own is deleted while requests wait in
# fwdsched, every process doing I/O on it ends within a bound, and
# fwdsched unloads afterwards (nothing left holding it).
#  - null_blk (not run for now): 20 ms completions, 2 tags, one hardware
#    queue; removed by "power" 0 (del_gendisk) and rmdir.  Its one run,
#    on 6.12, stood still for 600 s after about 122 reads with nothing
#    in the console, cause not found yet; it is left out of make check
#    until that is understood (add nullb to the devices line to run it);
#  - scsi_debug: a host added for the test (add_host), queue depth 1 and
#    200 ms a command (the driver's "delay", restored after); removed by
#    device/delete, then the host by add_host -1.
# Four fio processes read at random, 8 requests each in flight; the
# removal starts once fwdsched's debugfs "queued" shows at least 8
# requests waiting in it.  Judged: the removal returns and every fio
# process exits (with its error or its completion) within 120 s each
# (hang guards, not timing: the queued requests drain in seconds); the
# disk is gone; with every other disk switched away from fwdsched, rmmod
# succeeds.  A request fwdsched kept when the queue was drained hangs the
# removal; one whose elevator reference leaked keeps the module in use.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
kind=$(disk_kind "$d")
drv=/sys/bus/pseudo/drivers/scsi_debug
ko=$FWD_ROOT/build/$(uname -r)/fwdsched.ko
pids=() mydisk='' hosts0='' delay0=''
cleanup() {
	local p
	fwd_test_exit
	for p in "${pids[@]}"; do
		kill -9 "$p"
	done
	case $kind in
	nullb) [ -z "$mydisk" ] || nullb_remove "$mydisk" ;;
	scsi)
		if [ -n "$hosts0" ] && [ "$(cat "$drv/add_host")" -gt "$hosts0" ]; then
			[ ! -e "/sys/block/$mydisk" ] ||
				echo 1 > "/sys/block/$mydisk/device/delete"
			echo -1 > "$drv/add_host"
		fi
		[ -z "$delay0" ] || echo "$delay0" > "$drv/delay"
		;;
	esac
	lsmod | grep -q '^fwdsched ' || insmod "$ko"
} 2>/dev/null
trap cleanup EXIT

# sd_disks: the scsi_debug disks, one a line
sd_disks() {
	local b
	for b in "$drv"/adapter*/host*/target*/*/block/*; do
		[ -e "$b" ] && basename "$b"
	done
}

case $kind in
nullb)
	mydisk=nullb_rm
	nullb_create "$mydisk" irqmode=2 completion_nsec=20000000 \
		hw_queue_depth=2 submit_queues=1 || fail "cannot create $mydisk"
	;;
scsi)
	hosts0=$(cat "$drv/add_host")
	before=$(sd_disks)
	echo 1 > "$drv/add_host" || fail "cannot add a scsi_debug host"
	udevadm settle 2>/dev/null
	mydisk=$(sd_disks | grep -vxF "$before" | head -n 1)
	[ -n "$mydisk" ] || fail "the new scsi_debug host made no disk"
	echo 1 > "/sys/block/$mydisk/device/queue_depth" ||
		fail "cannot set the queue depth of $mydisk"
	delay0=$(cat "$drv/delay")
	# The delay can change only while no command is queued.
	for _ in $(seq 50); do
		echo 50 > "$drv/delay" 2>/dev/null && break
		sleep 0.2
	done
	[ "$(cat "$drv/delay")" = 50 ] || fail "cannot set scsi_debug's delay"
	;;
esac
udevadm settle 2>/dev/null
set_sched "$mydisk" fwdsched
# null_blk's 2 tags would give 4 scheduler tags: room for the waiting.
[ "$kind" != nullb ] || nr_requests_set "$mydisk" 64
q=$(schedfs "$mydisk")/queued

for i in 1 2 3 4; do
	fio --output-format=json --output="$FWD_OUT/fio$i.json" \
		--name=r$i --filename="/dev/$mydisk" --direct=1 --ioengine=libaio \
		--iodepth=8 --rw=randread --bs=4k --size=64m --offset=$(((i - 1) * 64))m \
		--time_based --runtime=600 > "$FWD_OUT/fio$i.log" 2>&1 &
	pids+=($!)
done
waiting=0
for _ in $(seq 600); do
	waiting=$(awk 'NR == 1 { print $2 + $4 + $6 }' "$q" 2>/dev/null)
	[ "${waiting:-0}" -ge 8 ] && break
	sleep 0.2
done
[ "${waiting:-0}" -ge 8 ] || fail "fewer than 8 requests waited in fwdsched: $(head -n 1 "$q")"
diag "at removal, fwdsched queued: $(head -n 1 "$q"); completed so far: $(completed "$mydisk")"
dbg=/sys/kernel/debug/block/$mydisk

# The removal runs apart: a task blocked in the kernel ignores timeout(1).
case $kind in
nullb) sh -c "echo 0 > /sys/kernel/config/nullb/$mydisk/power" & ;;
scsi) sh -c "echo 1 > /sys/block/$mydisk/device/delete" & ;;
esac
rm_pid=$!
for _ in $(seq 1200); do
	kill -0 "$rm_pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$rm_pid" 2>/dev/null; then
	diag "the removal's stack: $(cat "/proc/$rm_pid/stack" 2>/dev/null; cat /proc/"$(pgrep -P "$rm_pid" | head -n 1)"/stack 2>/dev/null)"
	diag "fwdsched queued: $(head -n 1 "$q" 2>/dev/null); in flight: $(cat "/sys/block/$mydisk/inflight" 2>/dev/null); completed: $(completed "$mydisk" 2>/dev/null)"
	diag "$(grep -H . "$dbg"/state "$dbg"/hctx*/state "$dbg"/hctx*/dispatch "$dbg"/hctx*/busy "$dbg"/sched/stats 2>/dev/null | head -n 60)"
	echo w > /proc/sysrq-trigger 2>/dev/null
	mydisk='' hosts0=''
	fail "removing the disk hung (120 s); blocked tasks are in the kernel log"
fi
wait "$rm_pid" || fail "removing $mydisk failed"

# Every process gets its error or completion.
for _ in $(seq 1200); do
	left=0
	for p in "${pids[@]}"; do
		kill -0 "$p" 2>/dev/null && left=$((left + 1))
	done
	[ "$left" -eq 0 ] && break
	sleep 0.1
done
[ "$left" -eq 0 ] || fail "$left of 4 fio processes still running 120 s after the removal"
codes=
for p in "${pids[@]}"; do
	wait "$p"
	codes="$codes $?"
done
pids=()
diag "fio exit codes after the removal:$codes"
for i in 1 2 3 4; do
	grep -m 1 -i 'error' "$FWD_OUT/fio$i.log" | sed 's/^/# fio: /'
done
[ ! -e "/sys/block/$mydisk" ] || fail "$mydisk still exists after its removal"

case $kind in
nullb) rmdir "/sys/kernel/config/nullb/$mydisk" || fail "cannot rmdir $mydisk's configfs item" ;;
scsi)
	echo -1 > "$drv/add_host"
	[ "$(cat "$drv/add_host")" -eq "$hosts0" ] || fail "scsi_debug has $(cat "$drv/add_host") hosts, expected $hosts0"
	echo "$delay0" > "$drv/delay"
	;;
esac
mydisk=

# Nothing holds fwdsched: with every disk switched away, it unloads.
for s in /sys/block/*/queue/scheduler; do
	grep -q '\[fwdsched\]' "$s" || continue
	set_sched "$(basename "$(dirname "$(dirname "$s")")")" mq-deadline
done
ok=
for _ in $(seq 100); do
	rmmod fwdsched 2>"$FWD_OUT/rmmod.err" && { ok=1; break; }
	sleep 0.3
done
[ -n "$ok" ] || fail "rmmod fwdsched failed after the removal: $(cat "$FWD_OUT/rmmod.err"), refcnt $(cat /sys/module/fwdsched/refcnt 2>/dev/null)"
insmod "$ko" || fail "insmod after rmmod failed"
diag "removed with requests waiting; every process ended; fwdsched unloaded"
exit 0
