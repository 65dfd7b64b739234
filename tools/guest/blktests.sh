#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/guest/blktests.sh <blktests dir> <out.ktap>: in a guest of
# tools/runner/vm-run with an SD card, run blktests' scheduler tests with
# fwdsched and deadline-wrap (mq-deadline with the wrap patch) loaded;
# run by tools/blktests on the host, which built both.  One KTAP line
# per blktests verdict, in <out.ktap>.
set -euo pipefail
# shellcheck source=tools/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
dir=${1:?usage: blktests.sh <blktests dir> <out.ktap>}
out=${2:?usage: blktests.sh <blktests dir> <out.ktap>}
rel=$(uname -r)
OURS="fwdsched deadline-wrap"

for m in fwdsched mq-deadline-wrap; do
	[ -d "/sys/module/${m//-/_}" ] || insmod "$FWD_ROOT/build/$rel/$m.ko" ||
		die "cannot load build/$rel/$m.ko"
done
modprobe -q kyber-iosched || true
modprobe -q bfq || true
# null_blk's devices are made through configfs, which the guest has not
# mounted (nor loaded, on kernels where it is a module)
modprobe -q configfs || true
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config ||
	die "cannot mount configfs"
# the udev rule below needs a udev daemon
udevadm control --ping 2>/dev/null || /lib/systemd/systemd-udevd --daemon ||
	die "no udev daemon, and cannot start one"

disk=mmcblk0
[ -b "/dev/$disk" ] || die "no /dev/$disk"
# config [line...]: blktests' config, the SD card as its test device
config() { printf '%s\n' "TEST_DEVS=(/dev/$disk)" TIMEOUT=10 "$@" > "$dir/config"; }
config

exec 3> "$out"
echo "TAP version 13" >&3
echo "# kernel $rel; $disk schedulers: $(cat "/sys/block/$disk/queue/scheduler")" >&3
n=0
# run <label suffix> <test>...: blktests' check on the tests, one KTAP
# line per verdict; its output as diagnostics
run() {
	local sfx=$1 log line t
	shift
	log=$(mktemp)
	(cd "$dir" && ./check "$@") > "$log" 2>&1 || true
	sed 's/^/# /' "$log" >&3
	for t in "$@"; do
		line=$(grep -E "^$t( |$)" "$log" | grep -E '\[(passed|failed|not run)\]' | tail -n 1) || true
		n=$((n + 1))
		case $line in
		*"[passed]"*)	echo "ok $n $t$sfx" >&3 ;;
		*"[not run]"*)	echo "ok $n $t$sfx # SKIP not run" >&3 ;;
		*)		echo "not ok $n $t$sfx" >&3 ;;
		esac
	done
	rm -f "$log"
}

# The tests that switch through every scheduler the disk lists.
run "" block/005 block/020 block/021 block/027

# The tests that keep a new null_blk disk's scheduler run once with each
# of ours as that scheduler.  A udev rule would set it too late: its
# switch, racing the test, freezes the queue behind the test's first I/O
# (016 then gets EBUSY from nr_requests on 7.x, 017 counts no write in
# flight).  So the copy's _configure_null_blk and _init_null_blk (the
# copy is fresh from tools/blktests each run) set it as soon as the disk
# exists, before the test goes on, and log it (once: appended twice,
# the copy of the original would be the wrapper).  block/022 makes its own
# disks and hot-plugs them in a loop: there a udev rule sets it, which
# races the loop, as a phone's init would.
grep -q '^# Added by fwdsched' "$dir/common/null_blk" || cat >> "$dir/common/null_blk" <<'EOH'

# Added by fwdsched's tools/guest/blktests.sh: each null_blk disk gets the
# scheduler FWD_BLKT_SCHED (set in config) as soon as it exists.
if [[ -n ${FWD_BLKT_SCHED:-} ]]; then
	eval "_fwd_orig$(declare -f _configure_null_blk)"
	eval "_fwd_orig$(declare -f _init_null_blk)"
	_fwd_sched_nullb() {
		local q
		for q in /sys/block/nullb*/queue/scheduler; do
			[[ -e $q ]] || continue
			# Once per disk: a disk set by an earlier call is
			# not logged again.
			[[ $(cat "$q") == *"[$FWD_BLKT_SCHED]"* ]] && continue
			echo "$FWD_BLKT_SCHED" > "$q" || return 1
			echo "${q#/sys/block/} $(cat "$q")" >> "$FWD_BLKT_LOG"
		done
	}
	_configure_null_blk() {
		_fwd_orig_configure_null_blk "$@" || return $?
		_fwd_sched_nullb
	}
	_init_null_blk() {
		_fwd_orig_init_null_blk "$@" || return $?
		_fwd_sched_nullb
	}
fi
EOH
rules=/run/udev/rules.d/99-blktests-sched.rules
mkdir -p /run/udev/rules.d
# took <scheduler> <log> <what> all|some: ok when every disk the log
# names (all), or at least one (some), got the scheduler
took() {
	local total got
	total=$(wc -l < "$2")
	got=$(grep -c "\[$1\]" "$2" || true)
	n=$((n + 1))
	if [ "$got" -gt 0 ] && { [ "$4" = some ] || [ "$got" = "$total" ]; }; then
		echo "ok $n $3 got $1 ($got of $total)" >&3
	else
		echo "not ok $n $3 got $1 ($got of $total)" >&3
		sed 's/^/# /' "$2" >&3
	fi
}
for s in $OURS; do
	log=/tmp/blktests-sched.$s
	: > "$log"
	config "export FWD_BLKT_SCHED=$s FWD_BLKT_LOG=$log"
	run " ($s)" block/006 block/016 block/017 block/029 block/031
	took "$s" "$log" "null_blk disks" all

	log=/tmp/blktests-udev.$s
	: > "$log"
	config
	cat > "$rules" <<EOR
ACTION=="add", SUBSYSTEM=="block", KERNEL=="nullb*", ATTR{queue/scheduler}="$s", RUN+="/bin/sh -c 'echo %k \$\$(cat /sys/block/%k/queue/scheduler) >> $log'"
EOR
	udevadm control --reload
	run " ($s)" block/022
	udevadm settle
	rm -f "$rules"
	udevadm control --reload
	# the rule races the hot-plug loop: some of the disks are enough
	took "$s" "$log" "block/022's disks" some
done
echo "1..$n" >&3
