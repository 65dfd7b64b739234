#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the fwdsched selftests in the guest (see tools/vm-run), as root:
#
#   run_tests.sh [-t <test>]... [-d <kind>]...
#
# Sets up the disks (the SD card mmcblk0 when present, a null_blk disk,
# a scsi_debug disk), loads build/$(uname -r)/fwdsched.ko, runs every
# t_*.sh once for each disk kind it names on its "# devices:" line, and
# prints KTAP.  Artifacts (fio JSON, blktrace, dmesg) go to FWD_RESULTS
# (default build/<release>/selftest).  Exit 0 when nothing failed.
set -u

FWD_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export FWD_ROOT
rel=$(uname -r)
results=${FWD_RESULTS:-$FWD_ROOT/build/$rel/selftest}
tests=() kinds=()
while getopts t:d: o; do
	case $o in
	t) tests+=("$FWD_ROOT/selftests/fwdsched/t_$OPTARG.sh") ;;
	d) kinds+=("$OPTARG") ;;
	*) echo "usage: $0 [-t test]... [-d mmc|nullb|scsi]..." >&2; exit 2 ;;
	esac
done
[ ${#tests[@]} -gt 0 ] || tests=("$FWD_ROOT"/selftests/fwdsched/t_*.sh)
[ ${#kinds[@]} -gt 0 ] || kinds=(mmc nullb scsi)
rm -rf "$results"
mkdir -p "$results"

declare -A disk
setup_disks() {
	local d
	[ -b /dev/mmcblk0 ] && disk[mmc]=mmcblk0
	modprobe -q configfs
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	if modprobe -q null_blk nr_devices=0 && [ -d /sys/kernel/config/nullb ]; then
		# Item named nullb0: 6.x names configfs disks after their item.
		d=/sys/kernel/config/nullb/nullb0
		mkdir -p "$d"
		echo 1024 > "$d/size"
		echo 1 > "$d/memory_backed"
		echo 64 > "$d/hw_queue_depth"
		# One hardware queue per CPU, as on NVMe and UFS; it also lets
		# the ordering tests dispatch on one CPU (run_fio_ordered).
		nproc > "$d/submit_queues"
		echo 1 > "$d/power"
		disk[nullb]=nullb0
	fi
	if modprobe -q scsi_debug dev_size_mb=256 max_queue=64 \
		submit_queues="$(nproc)"; then
		udevadm settle 2>/dev/null
		for d in /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/*; do
			[ -e "$d" ] && disk[scsi]=$(basename "$d")
		done
	fi
}

setup_disks
ko=$FWD_ROOT/build/$rel/fwdsched.ko
load_err=
if ! lsmod | grep -q '^fwdsched '; then
	load_err=$(insmod "$ko" 2>&1) || load_err="insmod $ko: $load_err"
fi

plan=0
for t in "${tests[@]}"; do
	tk=$(sed -n 's/^# devices: *//p' "$t")
	for k in "${kinds[@]}"; do
		[[ " ${tk:-mmc nullb scsi} " == *" $k "* ]] && plan=$((plan + 1))
	done
done

echo "TAP version 13"
echo "1..$plan"
echo "# kernel $rel; disks: mmc=${disk[mmc]:-none} nullb=${disk[nullb]:-none} scsi=${disk[scsi]:-none}"
n=0 pass=0 failn=0 skipn=0
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	name=${name#t_}
	tk=$(sed -n 's/^# devices: *//p' "$t")
	for k in "${kinds[@]}"; do
		[[ " ${tk:-mmc nullb scsi} " == *" $k "* ]] || continue
		n=$((n + 1))
		id="$name.$k"
		if [ -n "$load_err" ]; then
			echo "not ok $n $id # fwdsched.ko did not load: $load_err"
			failn=$((failn + 1))
			continue
		fi
		if [ -z "${disk[$k]:-}" ]; then
			echo "ok $n $id # SKIP no $k disk"
			skipn=$((skipn + 1))
			continue
		fi
		out=$results/$id
		mkdir -p "$out"
		start=$(date +%s)
		FWD_OUT=$out timeout -k 10 900 bash "$t" "${disk[$k]}" > "$out/log" 2>&1
		rc=$?
		sed -e 's/^/  /' "$out/log" | grep -v '^  $' | tail -n 40 | grep '^  #'
		dur="($(($(date +%s) - start)) s)"
		case $rc in
		0) echo "ok $n $id $dur"; pass=$((pass + 1)) ;;
		4) echo "ok $n $id # SKIP $(grep '^# SKIP' "$out/log" | tail -n 1 | cut -c9-)"; skipn=$((skipn + 1)) ;;
		124|137) echo "not ok $n $id # TIMEOUT"; failn=$((failn + 1)) ;;
		*) tail -n 20 "$out/log" | grep -v '^#' | sed 's/^/  # /'
		   echo "not ok $n $id $dur"; failn=$((failn + 1)) ;;
		esac
		dmesg > "$out/dmesg"
		# Whatever a test did, the next one starts from fwdsched defaults.
		lsmod | grep -q '^fwdsched ' || insmod "$ko" 2>/dev/null
	done
done
echo "# Totals: pass:$pass fail:$failn xfail:0 xpass:0 skip:$skipn error:0"
dmesg > "$results/dmesg"
[ "$failn" -eq 0 ]
