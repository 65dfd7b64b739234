#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/guest/crosslayer.sh <outdir> sqlite|read1 <n> [<outdir> <kind> <n>]...
#
# In the guest, as root (tools/runner/vm-run <kver> -- tools/guest/crosslayer.sh ...):
# make an ext4 file system on the SD card (its contents are lost), run
# the workload of tools/guest/crosslayer-app.py, and record every layer on one
# clock (CLOCK_MONOTONIC): the application's own time stamps, tracefs
# events for the file system (the workload's write/read/fsync system
# calls, ext4 write_begin and sync_file, jbd2 commits) and the block
# layer (bio queue, request insert, issue, complete; the tracepoints
# blktrace uses), and the MMC command history (patched mmc_core if
# loaded, else the mmc_history module).  Writes <outdir>/app.txt,
# trace.txt and history.txt for tools/analysis/crosslayer.py.  More
# triples run one after the other in the same boot (tools/crosslayer).
set -eu

# shellcheck source=tools/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
say() { echo "crosslayer: $(date +%T) $*" >&2; }
if [ $# -gt 3 ] && [ $(($# % 3)) -eq 0 ]; then
	while [ $# -gt 0 ]; do
		"$0" "$1" "$2" "$3"
		shift 3
	done
	exit 0
fi
[ $# -eq 3 ] || die "usage: crosslayer.sh <outdir> sqlite|read1 <n>"
out=$(mkdir -p "$1" && cd "$1" && pwd)
kind=$2
n=$3
case $kind in sqlite|read1) ;; *) die "unknown workload '$kind'" ;; esac
[[ $n =~ ^[1-9][0-9]*$ ]] || die "n must be a positive integer, not '$n'"
dev=/dev/mmcblk0
[ -b $dev ] || die "no $dev"
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs none $T
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

if [ "$(cat /sys/module/mmc_core/parameters/history_size 2>/dev/null || echo 0)" -gt 0 ]; then
	hist=/sys/kernel/debug/mmc0/history
	ctl=/sys/kernel/debug/mmc0/history_control
else
	[ -d /sys/module/mmc_history ] ||
		insmod "$FWD_ROOT/build/$(uname -r)/mmc_history.ko" ring_size=1048576
	hist=/sys/kernel/debug/mmc_history/mmc0
	ctl=/sys/kernel/debug/mmc_history/control
	for _ in $(seq 50); do
		[ -e "$hist" ] && break
		dd if=$dev of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null
		sleep 0.1
	done
fi
[ -e "$hist" ] || die "no MMC history at $hist"

mnt=/tmp/crosslayer-mnt
mkdir -p $mnt
# No discard: QEMU's SD card (7.2) carries out an erase by writing the
# range 512 bytes at a time, which took over 10 minutes for the 4 GiB
# card under TCG.  A 1 GiB file system with lazily initialised inode
# tables and journal, and noinit_itable so that no background zeroing
# thread writes during the recording.
say "mkfs.ext4 on $dev"
mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 $dev 1G
mount -o noinit_itable $dev $mnt
if [ "$kind" = read1 ]; then
	say "writing the 128 MiB file to read"
	dd if=/dev/urandom of=$mnt/data bs=1M count=128 conv=fsync 2>/dev/null
	target=$mnt/data
else
	target=$mnt/test.db
fi
sync
echo 3 > /proc/sys/vm/drop_caches

SYS="sys_enter_write sys_enter_pwrite64 sys_enter_read sys_enter_pread64
sys_enter_fsync sys_enter_fdatasync"
EV="ext4/ext4_da_write_begin ext4/ext4_write_begin ext4/ext4_sync_file_enter
jbd2/jbd2_start_commit jbd2/jbd2_end_commit block/block_bio_queue
block/block_rq_insert block/block_rq_issue block/block_rq_complete"

echo 0 > $T/tracing_on
echo mono > $T/trace_clock
echo 65536 > $T/buffer_size_kb
echo > $T/trace
for e in $EV; do echo 1 > "$T/events/$e/enable"; done
for e in $SYS; do echo 1 > "$T/events/syscalls/$e/enable"; done
echo clear > "$ctl"
echo 1 > $T/tracing_on
say "recording: $kind, $n operations"
# The system calls of the workload only: filter on its pid, which exec keeps.
T=$T SYS=$SYS sh -c 'for e in $SYS; do echo "common_pid == $$" > $T/events/syscalls/$e/filter; done
	exec /usr/bin/python3 "$0" "$@"' "$FWD_ROOT/tools/guest/crosslayer-app.py" \
	"$kind" "$target" "$n" "$out/app.txt"
say "workload done; syncing"
sync
sleep 1
echo 0 > $T/tracing_on
say "saving the trace and the history"
cat $T/trace > "$out/trace.txt"
cat "$hist" > "$out/history.txt"
cat $T/per_cpu/cpu*/stats > "$out/trace-stats.txt"

echo 0 > $T/events/enable
for e in $SYS; do echo 0 > "$T/events/syscalls/$e/filter"; done
echo > $T/trace
echo local > $T/trace_clock
umount $mnt
echo "crosslayer: $kind n=$n: $(wc -l < "$out/trace.txt") trace lines, $(grep -vc '^#' "$out/history.txt") MMC commands -> $out"
