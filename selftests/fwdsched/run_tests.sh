#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the fwdsched selftests in the guest (see tools/runner/vm-run), as root:
#
#   run_tests.sh [-t <test>]... [-d <kind>]...
#
# Sets up the disks of the kinds asked for (the SD card mmcblk0 when
# present, a null_blk disk, a scsi_debug disk, the UFS disk that
# tools/runner/vm-init found on the UFS transport), loads build/$(uname -r)/fwdsched.ko, runs every
# t_*.sh once for each disk kind it names on its "# devices:" line, and
# prints KTAP.  Artifacts (fio JSON, blktrace, dmesg) go to FWD_RESULTS
# (default build/<release>/selftest).  A test still running after
# FWD_TEST_TIMEOUT seconds (default 900) is stopped and fails.  Exit 0
# when nothing failed.
set -u

# shellcheck source=tools/lib/guest.sh
. "$(dirname "$0")/../../tools/lib/guest.sh"
rel=$(uname -r)
results=${FWD_RESULTS:-$FWD_ROOT/build/$rel/selftest}
limit=${FWD_TEST_TIMEOUT:-900}
tests=() kinds=()
while getopts t:d: o; do
	case $o in
	t) tests+=("$FWD_ROOT/selftests/fwdsched/t_$OPTARG.sh") ;;
	d) kinds+=("$OPTARG") ;;
	*) echo "usage: $0 [-t test]... [-d mmc|nullb|scsi|ufs]..." >&2; exit 2 ;;
	esac
done
[ ${#tests[@]} -gt 0 ] || tests=("$FWD_ROOT"/selftests/fwdsched/t_*.sh)
# A kind asked for (-d) whose disk is missing fails its tests; one of the
# default kinds is skipped.
asked=${kinds[*]}
[ ${#kinds[@]} -gt 0 ] || kinds=(mmc nullb scsi)
# wanted <kind>: a kind this run tests
wanted() { [[ " ${kinds[*]} " == *" $1 "* ]]; }
rm -rf "$results"
mkdir -p "$results"

declare -A disk
# One hardware queue per CPU on null_blk and scsi_debug, as on NVMe and
# UFS; it also lets the ordering tests dispatch on one CPU
# (run_fio_ordered).
# The UFS disk has what the transport gives it: one hardware queue and 31
# tags (QEMU 10's controller).
setup_disks() {
	local d
	wanted mmc && [ -b /dev/mmcblk0 ] && disk[mmc]=mmcblk0
	wanted nullb && nullb_create nullb0 memory_backed=1 hw_queue_depth=64 \
		submit_queues="$(nproc)" && disk[nullb]=nullb0
	wanted scsi && d=$(scsi_debug_create dev_size_mb=256 max_queue=64 \
		submit_queues="$(nproc)") && disk[scsi]=$d
	wanted ufs && [ -n "${FWD_UFS_DISK:-}" ] && [ -b "/dev/$FWD_UFS_DISK" ] &&
		disk[ufs]=$FWD_UFS_DISK
}

setup_disks
# blkparse's format for every test's traces (tools/lib/guest.sh), asked
# of Python once: a start of it costs a second or two under TCG.  Not
# needed when the host parses the traces (FWD_HOSTRPC, tools/check).
if [ -z "${FWD_HOSTRPC:-}" ]; then
	BLK_FMT=$("$FWD_PY" -S "$FWD_ROOT/tools/analysis/fwdlib.py" blkparse-fmt) || BLK_FMT=
	export BLK_FMT
fi
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

swap=$FWD_ROOT/tools/guest/mmc-core-swap.sh
core_test=$FWD_ROOT/selftests/fwdsched/t_mmc_history.sh
core_pass=
if [ -e "$FWD_ROOT/build/$rel/mmc_core-history/mmc_core.ko" ] &&
   [ -n "${disk[mmc]:-}" ] && [[ " ${kinds[*]} " == *" mmc "* ]] &&
   [[ " ${tests[*]} " == *" $core_test "* ]]; then
	core_pass=y
	plan=$((plan + 1))
fi

echo "TAP version 13"
echo "1..$plan"
echo "# kernel $rel; disks: mmc=${disk[mmc]:-none} nullb=${disk[nullb]:-none} scsi=${disk[scsi]:-none} ufs=${disk[ufs]:-none}"

# run_test <test file> <disk kind> <id>: run the test on the disk of that
# kind and print its result as <id>.
run_test() {
	local t=$1 k=$2 id=$3 out start rc dur
	n=$((n + 1))
	if [ -n "$load_err" ]; then
		echo "not ok $n $id # fwdsched.ko did not load: $load_err"
		failn=$((failn + 1))
		return
	fi
	if [ -z "${disk[$k]:-}" ] && [ -n "$asked" ]; then
		echo "not ok $n $id # no $k disk, though asked for (-d $k)"
		failn=$((failn + 1))
		return
	elif [ -z "${disk[$k]:-}" ]; then
		echo "ok $n $id # SKIP no $k disk"
		skipn=$((skipn + 1))
		return
	fi
	out=$results/$id
	mkdir -p "$out"
	start=$EPOCHSECONDS
	FWD_OUT=$out timeout -k 10 "$limit" bash "$t" "${disk[$k]}" > "$out/log" 2>&1
	rc=$?
	sed -e 's/^/  /' "$out/log" | grep -v '^  $' | tail -n 40 | grep '^  #'
	dur="($((EPOCHSECONDS - start)) s)"
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
}

n=0 pass=0 failn=0 skipn=0
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	name=${name#t_}
	tk=$(sed -n 's/^# devices: *//p' "$t")
	for k in "${kinds[@]}"; do
		[[ " ${tk:-mmc nullb scsi} " == *" $k "* ]] || continue
		run_test "$t" "$k" "$name.$k"
	done
done

# The patched mmc_core (patches/mmc, built by tools/setup/build-mmc-core),
# where it is built: t_mmc_history once more on the SD card with the MMC
# stack reloaded on it (tools/guest/mmc-core-swap.sh), then back on the
# stock mmc_core.
if [ -n "$core_pass" ]; then
	# the module form hooks the stock mmc_core, which is about to go
	rmmod mmc_history 2>/dev/null
	if "$swap" history history_size=4096 > "$results/core-swap.log" 2>&1; then
		run_test "$core_test" mmc mmc_history.mmc-core
	else
		n=$((n + 1)) failn=$((failn + 1))
		sed 's/^/  # /' "$results/core-swap.log" | tail -n 10
		echo "not ok $n mmc_history.mmc-core # mmc-core-swap history failed"
	fi
	"$swap" stock >> "$results/core-swap.log" 2>&1 ||
		echo "# mmc-core-swap stock failed (see $results/core-swap.log)"
fi
echo "# Totals: pass:$pass fail:$failn xfail:0 xpass:0 skip:$skipn error:0"
dmesg > "$results/dmesg"
[ "$failn" -eq 0 ]
