#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/guest/soak.sh <results dir> <seconds> <switch period s>
#
# The guest half of tools/soak: fio-jobs/selftest/soak-mixed.fio (writers verified
# with crc32c and flushed, discards, synchronous and asynchronous
# readers: eleven processes) runs for <seconds> at once on the SD card
# and on a null_blk disk (memory backed, discard, a volatile write cache
# so that flushes reach the driver, a hardware queue per CPU), both under
# fwdsched.  Every <switch period> seconds each disk moves to the next
# scheduler of a cycle that comes back to fwdsched every other step, with
# fwdsched's tunables changed on the way (fair_slack 0 and off,
# dispatch_depth 1, anticipation off).  Afterwards both disks leave
# fwdsched and the module must unload.
#
# Writes into <results dir>: fio-<disk>.json and .log,
# switches.txt (one line per switch: time, disk, scheduler, ms or
# "FAILED"), dmesg.txt, and soak.json, the summary that tools/soak judges
# (I/Os by kind, fio's errors, switches and failed switches, whether the
# module unloaded).  Exit 0 when the run completed, whatever it found.
set -u

# shellcheck source=tools/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
[ $# -eq 3 ] || die "usage: soak.sh <results dir> <seconds> <switch period s>"
secs=$2 period=$3
out=$(cd "$1" && pwd) || die "no results directory $1"
rel=$(uname -r)
lsmod | grep -q '^fwdsched ' || insmod "$FWD_ROOT/build/$rel/fwdsched.ko" ||
	die "cannot load build/$rel/fwdsched.ko"

disks=()
[ -b /dev/mmcblk0 ] && disks+=(mmcblk0)
nullb_create nullb0 memory_backed=1 discard=1 cache_size=64 \
	hw_queue_depth=64 submit_queues="$(nproc)" && disks+=(nullb0)
[ ${#disks[@]} -gt 0 ] || die "no disk to soak"

# The cycle: fwdsched with its defaults first, back to fwdsched every
# other step; "sched:tunable=value" changes a tunable after selecting.
cycle=(mq-deadline fwdsched:fair_slack=0 none fwdsched:fair_slack=4096
       kyber fwdsched:dispatch_depth=1 bfq fwdsched:anticipate_us=0
       mq-deadline fwdsched)
for m in kyber-iosched bfq; do modprobe -q "$m"; done

declare -A pid
for d in "${disks[@]}"; do
	fresh_sched "$d" fwdsched
	sections=(--section=writer --section=sreader --section=areader)
	[ "$(cat "/sys/block/$d/queue/discard_max_bytes")" -gt 0 ] &&
		sections+=(--section=discard)
	(cd "$FWD_ROOT" && FWD_RUNTIME=$secs \
		exec fio --output-format=json --output="$out/fio-$d.json" \
		"${sections[@]}" fio-jobs/selftest/soak-mixed.fio --filename="/dev/$d" \
		> "$out/fio-$d.log" 2>&1) &
	pid[$d]=$!
	echo "# soak: $d: fio ${sections[*]} for $secs s"
done

t0=$(date +%s) step=0
: > "$out/switches.txt"
while :; do
	sleep "$period"
	running=0
	for d in "${disks[@]}"; do
		kill -0 "${pid[$d]}" 2>/dev/null && running=1
	done
	[ "$running" = 1 ] || break
	[ $(($(date +%s) - t0 + 5)) -lt "$secs" ] || continue
	next=${cycle[$((step % ${#cycle[@]}))]}
	step=$((step + 1))
	s=${next%%:*} tun=
	[ "$s" = "$next" ] || tun=${next#*:}
	for d in "${disks[@]}"; do
		t=$(date +%s%N)
		if timeout 120 bash -c "echo $s > /sys/block/$d/queue/scheduler" &&
		   [ "$(cur_sched "$d")" = "$s" ] &&
		   { [ -z "$tun" ] ||
		     echo "${tun#*=}" > "$(iosched "$d")/${tun%%=*}"; }; then
			r=$(( ($(date +%s%N) - t) / 1000000 ))
		else
			r=FAILED
		fi
		echo "$(($(date +%s) - t0)) $d $next $r" | tee -a "$out/switches.txt" |
			sed 's/^/# soak: switch at /'
	done
done
rc=()
for d in "${disks[@]}"; do
	fio_stop "${pid[$d]}" "$out/fio-$d.json"
	rc+=("$d=$?")
done

unloaded=0
for d in "${disks[@]}"; do
	set_sched "$d" none
done
rmmod fwdsched && unloaded=1
dmesg > "$out/dmesg.txt"

"$FWD_PY" - "$out" "$secs" "$unloaded" "${rc[@]}" <<'PY'
import json, os, sys
out, secs, unloaded = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
res = {"release": os.uname().release, "seconds": secs,
       "module_unloaded": unloaded, "disks": {}}
sw = [l.split() for l in open(os.path.join(out, "switches.txt"))]
for arg in sys.argv[4:]:
    d, rc = arg.split("=")
    r = {"fio_exit": int(rc), "jobs": 0, "job_errors": 0, "reads": 0,
         "writes": 0, "discards": 0, "flushes": 0, "verified_kib": 0,
         "switches": sum(1 for s in sw if s[1] == d),
         "failed_switches": sum(1 for s in sw if s[1] == d and s[3] == "FAILED")}
    try:
        jobs = json.load(open(os.path.join(out, "fio-%s.json" % d)))["jobs"]
    except (OSError, ValueError) as e:
        r["fio_json_error"] = str(e)
        jobs = []
    for j in jobs:
        r["jobs"] += 1
        r["job_errors"] += j["error"] != 0
        r["reads"] += j["read"]["total_ios"]
        r["writes"] += j["write"]["total_ios"]
        r["discards"] += j["trim"]["total_ios"]
        r["flushes"] += j["sync"]["total_ios"]
        if j["jobname"] == "writer":
            # a writer's reads are its verification reads
            r["verified_kib"] += j["read"]["io_kbytes"]
    res["disks"][d] = r
json.dump(res, open(os.path.join(out, "soak.json"), "w"), indent=1)
PY
echo "# soak: done: fio ${rc[*]}, module unloaded: $unloaded"
