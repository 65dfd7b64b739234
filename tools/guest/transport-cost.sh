#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/guest/transport-cost.sh <out.json>: in a guest of tools/runner/vm-run
# whose disk is a flash card that charges nothing (so only the emulation
# is measured), time the commands the benchmark's figures are made of,
# with scheduler none: 4 KiB reads at QD1, 512 KiB writes at QD1 and
# 4 KiB reads at QD32.  The disk is the UFS disk when there is one, else
# the SD card.  Writes the per-job means as one JSON object; run by
# tools/flashcard/transport-cost on the host.
set -euo pipefail
# shellcheck source=tools/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
out=${1:?usage: transport-cost.sh <out.json>}
disk=${FWD_UFS_DISK:-mmcblk0}
[ -b "/dev/$disk" ] || die "no disk /dev/$disk"
set_sched "$disk" none
tmp=$(mktemp -d)
job() {	# job <name> <fio options...>
	local name=$1
	shift
	fio --name="$name" --filename="/dev/$disk" --direct=1 \
		--ioengine=libaio --time_based --runtime=8 --ramp_time=1 \
		--output-format=json --output="$tmp/$name.json" "$@" >/dev/null
}
job read4k-qd1 --rw=randread --bs=4k --iodepth=1 --size=512m
job write512k-qd1 --rw=write --bs=512k --iodepth=1 --size=512m
job read4k-qd32 --rw=randread --bs=4k --iodepth=32 --size=512m
"$FWD_PY" - "$tmp" "$disk" "$(uname -r)" > "$out" <<'PY'
import json, os, sys
tmp, disk, rel = sys.argv[1:4]
res = {"disk": disk, "kernel": rel,
       "nr_requests": int(open("/sys/block/%s/queue/nr_requests" % disk).read())}
for name in ("read4k-qd1", "write512k-qd1", "read4k-qd32"):
    j = json.load(open(os.path.join(tmp, name + ".json")))["jobs"][0]
    side = j["write"] if name.startswith("write") else j["read"]
    res[name] = {"ios": side["total_ios"], "iops": side["iops"],
                 "mean_ms": side["clat_ns"]["mean"] / 1e6}
json.dump(res, sys.stdout, indent=1)
PY
rm -rf "$tmp"
