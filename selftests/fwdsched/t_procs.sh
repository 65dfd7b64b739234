#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc nullb
#
# Per-process accounting at scale.  256 processes (96 on the SD card,
# still beyond the old table, where each costs a second; forked by
# tools/guest/direct-reads.py, named fwd-reader, each reading 16 blocks of
# 4 KiB one at a time from a region of its own) run at once beside a deep
# reader (fio, 16 reads in flight).  Before, a fixed
# table of 64 entries lumped every process beyond 63 into one entry,
# which then competed as a single process.  Now:
#  - every reader process got an entry of its own: debugfs "procs" has
#    its row, charged exactly its 16 reads (128 sectors), unless the
#    entry was retired (idle for 10 s) before the last reader ended; and none was
#    charged to the fallback entry for want of memory;
#  - on the SD card, where requests wait, blktrace shows every request
#    served within the bound of being passed over (fwdlib fair-bound:
#    no other process dispatched more than 2 * fair_slack + c + 1 times
#    while it waited);
#  - entries of processes idle for 10 s are retired: after that, two new
#    processes retire at least two old entries (on null_blk: the rule
#    does not depend on the disk, and the wait is 11 s).
# On null_blk everything runs on CPU 0, so that blktrace's D order is
# the scheduler's pick order.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
kind=$(disk_kind "$d")
n=256
[ "$kind" != mmc ] || n=96
n=${FWD_PROCS:-$n}
sfs=$(schedfs "$d")
reset_tunables "$d"
echo reset > "$sfs/procs" || fail "cannot reset procs"
pin=()
[ "$kind" = mmc ] || pin=(taskset -c 0)

s0=$(cat "$sfs/stats")
# traced where it is judged: on null_blk blktrace cannot keep up under
# TCG (one 7.2 run dropped 243,762 events)
[ "$kind" != mmc ] || blk_start "$d" procs
"${pin[@]}" fio --output-format=json --output="$FWD_OUT/deep.json" \
	--name=deep --filename="/dev/$d" --rw=randread --bs=4k --direct=1 \
	--ioengine=libaio --iodepth=16 --offset=768m --size=128m \
	--norandommap --randrepeat=1 --time_based --runtime=600 &
fio_pid=$!
# The readers start once the deep reader's I/O flows (under TCG fio can
# take seconds to start beside them, and ignores SIGINT until then).  They
# are forked, not a dd each: under TCG an exec costs more than the reads,
# and the deep reader's trace grows while they start.
wait_completed "$d" 64
"${pin[@]}" "$FWD_PY" -S "$FWD_ROOT/tools/guest/direct-reads.py" --procs "$n" 16 512 \
	"/dev/$d" > "$FWD_OUT/pids" 2> "$FWD_OUT/readers.err"
rc=$?
mapfile -t pids < "$FWD_OUT/pids"
kill -INT "$fio_pid"
wait "$fio_pid"
[ "$kind" != mmc ] || blk_stop
s1=$(cat "$sfs/stats")
[ "$rc" -eq 0 ] || fail "the reader processes failed: $(cat "$FWD_OUT/readers.err")"
[ "${#pids[@]}" -eq "$n" ] || fail "$n reader processes asked for, ${#pids[@]} started"
procs=$(cat "$sfs/procs")
printf '%s\n' "$procs" > "$FWD_OUT/procs.txt"

rows=$(procs_get "$procs" tgid rd_reqs rd_sectors comm | awk '$4 == "fwd-reader"')
nrows=$(grep -c . <<< "$rows")
created=$(stat_delta "$s0" "$s1" procs_created)
retired=$(stat_delta "$s0" "$s1" procs_retired)
diag "procs: $nrows rows of readers; created $created, retired $retired, nomem $(stat_delta "$s0" "$s1" procs_nomem)"
# The processes may run for longer than 10 s on a slow disk, so the first
# ones' entries may be retired before the last ones end: every reader
# has its row, or its entry was retired.
[ "$created" -ge $((n + 1)) ] ||
	fail "only $created entries created for $n reader processes and fio"
wrong=$(awk '$2 != 16 || $3 != 128' <<< "$rows")
[ -z "$wrong" ] || fail "reader processes charged other than 16 reads of 8 sectors: $(head -n 3 <<< "$wrong")"
missing=$(comm -23 <(printf '%s\n' "${pids[@]}" | sort) <(awk '{print $1}' <<< "$rows" | sort) | grep -c .)
[ "$missing" -le "$retired" ] ||
	fail "$missing reader processes have no row, but only $retired entries were retired"
[ "$(stat_delta "$s0" "$s1" procs_nomem)" -eq 0 ] || fail "requests were charged to the fallback entry"

if [ "$kind" = mmc ]; then
	slack=$(cat "$(iosched "$d")/fair_slack")
	fwdlib fair-bound "$(blk_file procs)" "$slack" 2> "$FWD_OUT/fair-bound.diag"
	read -r reqs owners viol <<< "$FWDLIB_OUT"
	[ "$viol" -eq 0 ] || diag "$(grep worst "$FWD_OUT/fair-bound.diag")"
	diag "fair-bound: $reqs requests of $owners processes, $viol beyond the bound"
	[ "$owners" -gt "$n" ] || fail "the trace shows $owners processes, $n + 1 ran"
	[ "$viol" -eq 0 ] || fail "$viol requests were passed over beyond the bound"
fi

# Retirement: entries idle for 10 s go when new processes come.
[ "$kind" = nullb ] || { reset_tunables "$d"; exit 0; }
sleep 11
s2=$(cat "$sfs/stats")
for i in 1 2; do
	dd if="/dev/$d" of=/dev/null bs=4k count=1 skip=$((i * 8)) iflag=direct status=none ||
		fail "dd failed"
done
s3=$(cat "$sfs/stats")
diag "after 10 s idle, two new processes retired $(stat_delta "$s2" "$s3" procs_retired) entries"
[ "$(stat_delta "$s2" "$s3" procs_retired)" -ge 2 ] ||
	fail "two new processes retired only $(stat_delta "$s2" "$s3" procs_retired) idle entries"
reset_tunables "$d"
exit 0
