#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/guest/dkms-load.sh <fwdsched.ko[.xz]>: the guest half of make check-pkg
# (tools/check-pkg).  Installs a module DKMS built the way DKMS installs
# it (/lib/modules/<release>/updates/dkms/, then depmod; the host's tree
# is only changed in a copy-on-write overlay in the guest), then checks
# what a user relies on:
#   - selecting fwdsched on a disk loads the module by its alias;
#   - data written through it reads back the same;
#   - it unloads once no disk uses it;
#   - udev/60-fwdsched.rules leaves the SD card alone (it selects eMMC),
#     and its SD opt-in line, once enabled, selects fwdsched for it.
# Prints KTAP.
set -u
# shellcheck source=tools/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
ko=${1:?usage: dkms-load.sh <fwdsched.ko[.xz]>}
rel=$(uname -r)
mods=/lib/modules/$rel
echo "TAP version 13"
echo "1..6"
# shellcheck source=tools/lib/ktap.sh
. "$FWD_ROOT/tools/lib/ktap.sh"
bail() { echo "Bail out! $*"; exit 1; }

[ ! -e /sys/module/fwdsched ] || bail "fwdsched is loaded before the test"
# virtme-ng gives /lib and /usr a copy-on-write overlay in guest memory;
# without one, make our own.
if ! touch "$mods/.fwdsched-w" 2>/dev/null; then
	o=/run/fwdsched-mods
	mkdir -p "$o" && mount -t tmpfs none "$o" && mkdir "$o/up" "$o/work" &&
		mount -t overlay overlay -o "lowerdir=$mods,upperdir=$o/up,workdir=$o/work" "$mods" ||
		bail "cannot make $mods writable"
fi
rm -f "$mods/.fwdsched-w"
install -D -m644 "$ko" "$mods/updates/dkms/$(basename "$ko")"
depmod -a "$rel" || bail "depmod failed"

nullb_create fwd0 memory_backed=1 || bail "no null_blk"
disk=fwd0
[ -e "/sys/block/$disk" ] || disk=nullb0
[ -e "/sys/block/$disk" ] || bail "no null_blk disk"

# Selecting it by name: the kernel asks modprobe for fwdsched-iosched.
echo fwdsched > "/sys/block/$disk/queue/scheduler" 2>/dev/null
check "alias-load # $(cat "/sys/block/$disk/queue/scheduler")" \
	eval '[ "$(cur_sched "$disk")" = fwdsched ] && [ -e /sys/module/fwdsched ]'
check "dkms-module # $(modinfo -n fwdsched)" \
	test "$(modinfo -n fwdsched)" = "$mods/updates/dkms/$(basename "$ko")"

# Data through it.
head -c 16M /dev/urandom > /tmp/pattern
dd if=/tmp/pattern of="/dev/$disk" bs=64k oflag=direct conv=fsync status=none
dd if="/dev/$disk" of=/tmp/back bs=64k count=256 iflag=direct status=none
check "read-back # 16 MiB through fwdsched" cmp -s /tmp/pattern /tmp/back

set_sched "$disk" none
check "unload" eval 'rmmod fwdsched && [ ! -e /sys/module/fwdsched ]'

# The udev rule, on the SD card of vm-run (card type SD).
card=mmcblk0
rules=/run/udev/rules.d
rule=$FWD_ROOT/udev/60-fwdsched.rules
trig() {
	udevadm control --reload
	udevadm trigger --action=change "/sys/block/$card"
	udevadm settle
}
if [ ! -e "/sys/block/$card" ] || [ "$(cat "/sys/block/$card/device/type")" != SD ]; then
	not_ok "udev.emmc-only # no SD card $card"
	not_ok "udev.sd-opt-in # no SD card $card"
else
	mkdir -p "$rules"
	set_sched "$card" none
	cp "$rule" "$rules/60-fwdsched.rules"
	trig
	check "udev.emmc-only # $card: $(cat "/sys/block/$card/queue/scheduler")" \
		test "$(cur_sched "$card")" = none
	sed 's/^#\(ACTION==.*ATTRS{type}=="SD"\)/\1/' "$rule" > "$rules/60-fwdsched.rules"
	trig
	check "udev.sd-opt-in # $card: $(cat "/sys/block/$card/queue/scheduler")" \
		test "$(cur_sched "$card")" = fwdsched
	rm -f "$rules/60-fwdsched.rules"
	udevadm control --reload
	set_sched "$card" none
fi
