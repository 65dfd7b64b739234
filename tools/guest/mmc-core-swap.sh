#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/guest/mmc-core-swap.sh stock|history [mmc_core parameters...]
#
# In the guest, as root: unload the MMC stack (mmc_block, sdhci_pci,
# sdhci_uhs2 (7.x), sdhci, cqhci, mmc_core) and load it again, either with the stock
# mmc_core or with the one patched with patches/mmc (built by
# tools/setup/build-mmc-core into build/<release>/mmc_core-history/).  The
# parameters go to mmc_core, e.g. "history_size=4096".  Waits for
# /dev/mmcblk0 and leaves it on its default scheduler.  Any filesystem
# on the card must be unmounted first.
set -euo pipefail

# shellcheck source=tools/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
[ $# -ge 1 ] || die "usage: mmc-core-swap stock|history [mmc_core params...]"
[ "$(id -u)" = 0 ] || die "must run as root"
kind=$1
shift
ko=$FWD_ROOT/build/$(uname -r)/mmc_core-history/mmc_core.ko
case $kind in
stock) ;;
history) [ -e "$ko" ] || die "no $ko (run tools/setup/build-mmc-core on the host)" ;;
*) die "unknown kind '$kind' (stock or history)" ;;
esac

loaded() { [ -d "/sys/module/$1" ]; }

for m in mmc_block sdhci_pci sdhci_acpi sdhci_uhs2 sdhci cqhci mmc_core; do
	if loaded "$m"; then
		rmmod "$m" || die "cannot unload $m: $(lsmod | grep "^$m " || true)"
	fi
done

if [ "$kind" = stock ]; then
	modprobe mmc_core "$@"
else
	insmod "$ko" "$@"
fi
modprobe sdhci_pci
modprobe mmc_block
for _ in $(seq 200); do
	[ -b /dev/mmcblk0 ] && break
	sleep 0.1
done
[ -b /dev/mmcblk0 ] || die "no /dev/mmcblk0 after 20 s"
udevadm settle 2>/dev/null || true
