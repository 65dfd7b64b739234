#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest started by tools/vm-run: brings up the MMC stack
# and debugfs, waits for the SD card, then runs the command given.
set -u
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
# class 0x0805xx: SD host controller (QEMU's sdhci-pci)
if cat /sys/bus/pci/devices/*/class 2>/dev/null | grep -q '^0x0805'; then
	modprobe -q sdhci-pci
	modprobe -q mmc_block
	for _ in $(seq 200); do
		[ -b /dev/mmcblk0 ] && break
		sleep 0.1
	done
	[ -b /dev/mmcblk0 ] || echo "vm-guest: no /dev/mmcblk0 after 20 s" >&2
fi
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
"$@"
