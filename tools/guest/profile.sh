#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/guest/profile.sh <outdir> <runtime> <rounds> <jobs> <schedulers>
#
# In the guest, as root (tools/profile boots it): on a null_blk disk
# without latency, the nullb-cpu experiment's disk (1 GiB, 64 tags, no
# completion delay), run each fio job of <jobs> (names of fio-jobs/*.fio,
# space separated) under each scheduler of <schedulers>, interleaved,
# <rounds> times, for <runtime> seconds each, with perf sampling every
# CPU (cpu-clock, 999 Hz; a software event, so TCG can serve it).  Writes
# <outdir>/iops.tsv (job, scheduler, round, fio's read IOPS) and
# <outdir>/<job>.<scheduler>.r<round>.txt, perf's flat profile by symbol,
# for tools/analysis/cpuprofile.py; under fwdsched also
# <job>.fwdsched.r<round>.sched.txt, its debugfs stats and procs.
set -eu

# shellcheck source=tools/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
[ $# -eq 5 ] || die "usage: profile.sh <outdir> <runtime> <rounds> <jobs> <schedulers>"
out=$(mkdir -p "$1" && cd "$1" && pwd)
runtime=$2 rounds=$3 jobs=$4 scheds=$5
command -v perf > /dev/null || die "no perf in the guest (the host's linux-perf)"
rel=$(uname -r)
lsmod | grep -q '^fwdsched ' || insmod "$FWD_ROOT/build/$rel/fwdsched.ko" ||
	die "cannot load build/$rel/fwdsched.ko"
for m in kyber-iosched bfq; do modprobe -q "$m" || true; done
d=nullb0
nullb_create "$d" size=1024 irqmode=0 hw_queue_depth=64 ||
	die "cannot make null_blk $d"
[ -b "/dev/$d" ] || die "no /dev/$d"
for s in $scheds; do
	grep -qw -- "$s" "/sys/block/$d/queue/scheduler" ||
		die "scheduler '$s' is not offered: $(cat "/sys/block/$d/queue/scheduler")"
done
# symbols of the kernel and of modules for perf report
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid
: > "$out/iops.tsv"
for r in $(seq 1 "$rounds"); do
	for j in $jobs; do
		for s in $scheds; do
			set_sched "$d" "$s"
			echo "profile: round $r/$rounds, $j, $s" >&2
			FWD_RUNTIME=$runtime perf record -q -a -e cpu-clock -F 999 \
				-o /tmp/perf.data -- \
				fio --output-format=terse --terse-version=3 \
				--filename="/dev/$d" "$FWD_ROOT/fio-jobs/$j.fio" \
				> /tmp/fio.out 2> /tmp/fio.err ||
				die "fio $j under $s failed: $(tail -n 3 /tmp/fio.err)"
			# terse v3: field 8 is the read IOPS (group_reporting: one line)
			iops=$(awk -F';' 'NR == 1 { print $8 }' /tmp/fio.out)
			[[ $iops =~ ^[0-9]+$ ]] ||
				die "no IOPS in fio's output of $j under $s: $(head -c 200 /tmp/fio.out)"
			echo "$j $s $r $iops" >> "$out/iops.tsv"
			# fwdsched's own view of the run: its counters and
			# the processes it kept (how many were backlogged)
			if [ "$s" = fwdsched ]; then
				sfs=$(schedfs "$d")
				{ cat "$sfs/stats"; cat "$sfs/procs"; } \
					> "$out/$j.$s.r$r.sched.txt" 2>&1 || true
			fi
			perf report -i /tmp/perf.data --no-children --sort sym \
				--stdio 2> /dev/null | grep -v '^#' | grep -v '^$' \
				> "$out/$j.$s.r$r.txt" ||
				die "perf report of $j under $s gave nothing"
		done
	done
done
set_sched "$d" none
nullb_remove "$d"
