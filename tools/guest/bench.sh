#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/guest/bench.sh <outdir> <jobs> <scheds> <slacks> [nullb]
#
# The guest half of tools/bench: for every job of fio-jobs/ named in
# <jobs> and every scheduler in <scheds>, run the job on the SD card with
# blktrace (and the MMC history when mmc_history.ko is built) recording,
# and keep everything under <outdir>/<job>/<sched>/.  The fairness job
# (async-vs-sync-2proc) is also run under fwdsched with each fair_slack
# in <slacks>, as scheduler "fwdsched-slack<N>".  With "nullb", the
# headline job runs on null_blk without tracing instead: the CPU cost of
# each scheduler with no device latency.  There, FWD_ROUNDS (default 1)
# repeats the job under every scheduler, interleaved and in a rotated
# order, into <sched>/round<k>.json, because one short run under TCG
# moves by 15-20 %: the report takes the median ratio over the rounds.
set -uo pipefail

# shellcheck source=tools/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
[ $# -ge 4 ] || die "usage: bench.sh <outdir> <jobs> <scheds> <slacks> [nullb]"
top=$FWD_ROOT
out=$1 jobs=$2 scheds=$3 slacks=$4 mode=${5:-mmc}
rel=$(uname -r)
fmt=$($FWD_PY "$top/tools/analysis/fwdlib.py" blkparse-fmt) ||
	die "tools/analysis/fwdlib.py failed"
export FWD_RUNTIME=${FWD_RUNTIME:-10}
mkdir -p "$out"
out=$(cd "$out" && pwd)

lsmod | grep -q '^fwdsched ' || insmod "$top/build/$rel/fwdsched.ko" ||
	die "cannot load fwdsched.ko"
for m in kyber-iosched bfq; do modprobe -q "$m"; done
hist=
if [ "$mode" = mmc ] && [ -e "$top/build/$rel/mmc_history.ko" ]; then
	lsmod | grep -q '^mmc_history ' ||
		insmod "$top/build/$rel/mmc_history.ko" ring_size=262144
	# The host's file appears with its first command; control at load.
	[ -e /sys/kernel/debug/mmc_history/control ] && hist=/sys/kernel/debug/mmc_history
fi

if [ "$mode" = nullb ]; then
	nullb_create nullb0 irqmode=0 hw_queue_depth=64 || die "no null_blk"
	disk=nullb0
else
	disk=mmcblk0
fi
[ -b "/dev/$disk" ] || die "no /dev/$disk"

# bench_fio <job> <dir> <name> [fio options...]: run_fio of fio-jobs/<job>.fio
# on the disk into <dir>/<name>.json (and .log); a failure is reported,
# and the run goes on.
bench_fio() {
	local job=$1 dir=$2 name=$3
	shift 3
	(run_fio "$disk" "$job" "$dir/$name" --filename="/dev/$disk" "$@") ||
		echo "[bench] fio failed: $dir/$name.log"
}

# The list of runs: job, scheduler, fair_slack (- for the default).
runs=()
for j in $jobs; do
	for s in $scheds; do runs+=("$j $s -"); done
	if [ "$j" = async-vs-sync-2proc ] && [[ " $scheds " == *" fwdsched "* ]]; then
		for v in $slacks; do runs+=("$j fwdsched-slack$v $v"); done
	fi
done

n=0 t0=$(date +%s)
for r in "${runs[@]}"; do
	read -r job sched slack <<< "$r"
	n=$((n + 1))
	el=$(( $(date +%s) - t0 ))
	left=$(( n > 1 ? el * (${#runs[@]} - n + 1) / (n - 1) : 0 ))
	printf '[bench] %s %s: run %d/%d %s under %s (elapsed %d s, about %d s left)\n' \
		"$rel" "$mode" "$n" "${#runs[@]}" "$job" "$sched" "$el" "$left"
	dir=$out/$job/$sched
	mkdir -p "$dir"
	fresh_sched "$disk" "${sched%%-slack*}"
	[ "$slack" = - ] || echo "$slack" > "/sys/block/$disk/queue/iosched/fair_slack"
	sync
	echo 3 > /proc/sys/vm/drop_caches
	[ -z "$hist" ] || echo clear > "$hist/control"
	tr=
	if [ "$mode" = mmc ]; then
		tr=$(mktemp -d /tmp/bench-tr.XXXXXX)
		blktrace -d "/dev/$disk" -D "$tr" -o t >/dev/null 2>&1 &
		bt=$!
		sleep 1
	fi
	extra=()
	[[ $job == fig2-shuffle* ]] && extra+=("--replay_redirect=/dev/$disk")
	bench_fio "$job" "$dir" fio "${extra[@]}"
	if [ -n "$tr" ]; then
		kill -TERM "$bt" 2>/dev/null
		wait "$bt" 2>/dev/null
		# Parse on tmpfs and copy once: blkparse's small writes straight
		# into the 9p mount took 45-75 s a run under TCG, against about
		# 1 s here plus 1.5 s for the copy.
		(cd "$tr" && blkparse -q -i t -f "$fmt" > blk.txt 2>/dev/null &&
		 cp blk.txt "$dir/blk.txt")
		rm -rf "$tr"
	fi
	[ -z "$hist" ] || [ ! -e "$hist/mmc0" ] || cat "$hist/mmc0" > "$dir/mmc-history.txt"
	sd=/sys/kernel/debug/block/$disk/sched
	if [ "${sched%%-slack*}" = fwdsched ]; then
		{ cat "$sd/stats"; [ -e "$sd/fairness" ] && cat "$sd/fairness"; } > "$dir/debugfs.txt" 2>/dev/null
		[ -e "$sd/procs" ] && cat "$sd/procs" > "$dir/procs.txt"
	fi
done
rounds=${FWD_ROUNDS:-1}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "FWD_ROUNDS='$rounds' is not a positive number"
[ "$mode" = nullb ] || rounds=1
read -ra order <<< "$scheds"
for k in $(seq 2 "$rounds"); do
	# Rotate, so that no scheduler always runs first or last.
	order=("${order[@]:1}" "${order[0]}")
	for j in $jobs; do
		for s in "${order[@]}"; do
			printf '[bench] %s %s: round %d/%d %s under %s (elapsed %d s)\n' \
				"$rel" "$mode" "$k" "$rounds" "$j" "$s" "$(( $(date +%s) - t0 ))"
			fresh_sched "$disk" "$s"
			bench_fio "$j" "$out/$j/$s" "round$k"
		done
	done
done
echo "[bench] $rel $mode: done in $(( $(date +%s) - t0 )) s"
