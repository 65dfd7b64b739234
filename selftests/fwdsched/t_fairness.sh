#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc nullb
#
# Per-process accounting and fairness enforcement, with two processes
# reading at random: "deep" (32 asynchronous reads in flight) and "sync"
# (one read at a time), fio-jobs/selftest/fair-deep-sync.fio.
#
#  1. debugfs "procs" charges each fio process what fio says it read
#     (bytes, within 1 %), and tools/fwdtop --once gives Jain's index
#     over the processes active in the last 10 s (from the saved "procs")
#     and, on the SD card, over threads (dispatches per submitting pid,
#     from the run's blktrace) as computed here from the same data.
#  2. Enforcement on (default fair_slack): no process waited while other
#     processes were dispatched more often than the documented bound,
#     2 * fair_slack + 3 per other backlogged process; each dispatch that
#     bypasses fairness (expired, aged, head) adds one per process.
#  3. Enforcement off (fair_slack 4096): fairness never changed a choice,
#     and blktrace shows the pure sweep: backward moves only at wraps,
#     expiries and at-head dispatches (on null_blk with fio on one CPU,
#     so that D order is pick order), and on the SD card every dispatch
#     is the sweep's choice (fwdlib.py sweep); both shown, not judged,
#     under full preemption (order_judged in lib.sh).
#  4. "procs" accepts only "reset", which zeroes the counters.
#  5. On the SD card (dispatch_depth 2, one request served at a time), in
#     the run of 2: the synchronous reader's next read is owed service
#     when it arrives, so the deep reader is not given the device's
#     second slot meanwhile, and the read waits behind at most one of the
#     deep reader's.  blktrace counts the deep reader's reads completed
#     between each synchronous read's insertion and its completion; at
#     most a quarter of the synchronous reads may see two or more (when
#     its think time outlasted its grace, or it was ahead in service).
#     This load does not tell the hold for an owed reader from the older
#     one for a reader more than fair_slack behind: on the test bed's
#     card both pass (6.12: 89 of 3605 reads behind two or more, and 121
#     of 3124 before); the benchmark's slower flash card is where they
#     differ.  Nor does it tell much without fairness: the guest's CPUs,
#     not the card, limit this load (the deep reader rarely has its 32
#     reads queued), and with enforcement off (3, shown, not judged) 159
#     of 668 synchronous reads waited behind two or more on 6.1.  It
#     guards against a regression that queues the deep reader ahead of
#     the synchronous one, not against the older rule.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
reset_tunables "$d"
sfs=$(schedfs "$d")
[ -e "$sfs/procs" ] || fail "no debugfs procs in $sfs"

# 4. Bad writes to procs are refused; reset zeroes the counters.
for b in bogus "reset now" 1 resets; do
	err=$( { printf '%s' "$b" > "$sfs/procs"; } 2>&1 ) &&
		fail "writing '$b' to procs was accepted"
	case $err in
	*"Invalid argument"*) ;;
	*) fail "writing '$b' to procs: expected EINVAL, got: $err" ;;
	esac
done
dd if="/dev/$d" of=/dev/null bs=4k count=16 iflag=direct 2>/dev/null
echo reset > "$sfs/procs" || fail "writing reset to procs failed"
rows=$(grep -vc '^#' "$sfs/procs")
[ "$rows" -eq 0 ] || fail "procs has $rows rows right after reset: $(cat "$sfs/procs")"

slack=$(cat "$(iosched "$d")/fair_slack")
s0=$(cat "$sfs/stats")
# Traced on the SD card, where the threads' Jain's index comes from the
# trace (on null_blk blktrace cannot keep up under TCG, and parsing its
# trace in the guest takes minutes).
# Only the events the checks read: inserts, dispatches, completions,
# requeues and merges (not the queue events, as fwdsched inserts each).
BLK_KEEP=IDCRFM
trace=
if [ "$(disk_kind "$d")" = mmc ]; then
	blk_start "$d" on
	trace=$(blk_file on)
fi
FWD_RUNTIME=${FWD_RUNTIME:-6} FWD_SIZE=256m run_fio "$d" selftest/fair-deep-sync "$FWD_OUT/fair-deep-sync"
s1=$(cat "$sfs/stats")
procs=$(cat "$sfs/procs")
# Stopped after the counters are read: stopping takes seconds under TCG,
# and the window counts only processes active in its last 10 s.
[ -z "$trace" ] || blk_stop
printf '%s\n' "$procs" > "$FWD_OUT/procs.txt"
procs_get "$procs" tgid rd_reqs rd_sectors wr_reqs idle_ms comm > "$FWD_OUT/procs.cols"
fair=$(host_py "$FWD_ROOT/tools/fwdtop" --once --procs "$FWD_OUT/procs.txt" \
	${trace:+--blktrace "$trace"}) || fail "tools/fwdtop failed on procs.txt ${trace:+and the trace}"
printf '%s\n' "$fair" > "$FWD_OUT/fwdtop.txt"
diag "$procs"
diag "$fair"

# 1. Bytes per fio process, fio's and fwdsched's, sorted, within 1 %; and
# Jain's index, floor(1e6 * (sum x)^2 / (n * sum x^2)), here and by
# fwdtop: over the rows of procs active in the window (requests
# dispatched, idle_ms below it), and over the trace's dispatches per
# submitting pid (fwdlib.dispatch_owners).
host_py - "$FWD_OUT" "$FWD_ROOT/tools/analysis" "$trace" <<'PY' || fail "per-process counters or fwdtop's Jain's index disagree"
import json, os, sys
out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import fwdlib
def rows(name):
    with open(os.path.join(out, name)) as f:
        return [l.split() for l in f.read().splitlines()
                if l and not l.startswith("#")]
with open(os.path.join(out, "fair-deep-sync.json")) as f:
    jobs = json.load(f)["jobs"]
procs = rows("procs.cols")
fair = {r[0]: int(r[1]) for r in rows("fwdtop.txt")}
threads = {}
if sys.argv[3]:
    for o in fwdlib.dispatch_owners(fwdlib.parse_blkparse(sys.argv[3])):
        threads[o["owner"]] = threads.get(o["owner"], 0) + 1
fio = sorted(j["read"]["io_bytes"] for j in jobs)
ours = sorted(int(r[2]) * 512 for r in procs if r[5] == "fio")
print("# bytes: fio %s, procs %s" % (fio, ours))
if len(fio) != len(ours):
    sys.exit("# fio ran %d processes, procs shows %d" % (len(fio), len(ours)))
for a, b in zip(fio, ours):
    if abs(a - b) > a / 100:
        sys.exit("# fio read %d bytes, procs charged %d" % (a, b))
def jain(xs):
    xs = [x for x in xs if x > 0]
    return len(xs), fwdlib.jain(xs, scale=1000000) or 0
w = fair.get("window_ms")
if w != 10000:
    sys.exit("# fwdtop's window is %s ms, not 10 s" % w)
np_, jp = jain([int(r[1]) + int(r[3]) for r in procs if int(r[4]) < w])
nt, jt = jain(threads.values())
print("# computed: procs %d jain %d, threads %d jain %d" % (np_, jp, nt, jt))
if np_ < 2:
    sys.exit("# fewer than two active processes")
checks = [("procs", np_), ("procs_jain", jp)]
if sys.argv[3]:
    checks += [("threads", nt), ("threads_jain", jt)]
for k, v in checks:
    if fair.get(k) != v:
        sys.exit("# fwdtop says %s %s, computed %d" % (k, fair.get(k), v))
PY
np=$(stat_of "$fair" procs)

# 2. The starvation bound, in dispatches of other processes.
bypass=$(( $(stat_delta "$s0" "$s1" expired) + $(stat_delta "$s0" "$s1" aged) + $(stat_delta "$s0" "$s1" head) ))
bound=$(( (np - 1) * (2 * slack + 3 + bypass) + bypass ))
worst=$(procs_get "$procs" max_passed comm | awk '$2 == "fio" { if ($1 > m) m = $1 } END { print m + 0 }')
diag "fair_slack $slack: most dispatches of others while a fio process waited $worst, bound $bound (bypassing $bypass)"
[ "$worst" -le "$bound" ] || fail "a process waited for $worst dispatches of others, bound $bound"

# 5. The synchronous reader waits behind at most one read of the deep one.
if [ "$(disk_kind "$d")" = mmc ]; then
	fwdlib served-ahead "$(blk_file on)" 2
	diag "pid requests most_in_flight behind_2_or_more median_behind:" $FWDLIB_OUT
	read -r n many <<< "$(awk '$3 == 1 && $2 > n { n = $2; m = $4 } END { print n + 0, m + 0 }' <<< "$FWDLIB_OUT")"
	[ "$n" -ge 100 ] || fail "the trace shows $n reads of a one-at-a-time reader: too few to judge"
	[ $(( many * 4 )) -le "$n" ] ||
		fail "$many of the synchronous reader's $n reads waited behind two or more of the deep reader's"
fi

# 3. Enforcement off: the pure sweep.
tunable_set "$d" fair_slack 4096
s0=$(cat "$sfs/stats")
blk_start "$d" pure
# null_blk dispatches 20,000 requests a second (80,000 on 6.12): keep
# its trace short.
rt=4
[ "$(disk_kind "$d")" = nullb ] && rt=1
FWD_RUNTIME=${FWD_RUNTIME:-$rt} FWD_SIZE=256m \
	run_fio_ordered "$d" selftest/fair-deep-sync "$FWD_OUT/fair-deep-sync"
blk_stop
s1=$(cat "$sfs/stats")
off=$(cat "$sfs/procs")
diag "$off"
for c in fair_skips detours fair_idle fair_holds antic_holds fair_switches; do
	[ "$(stat_delta "$s0" "$s1" $c)" -eq 0 ] ||
		fail "fair_slack 4096 (off) but $c went up by $(stat_delta "$s0" "$s1" $c)"
done
fwdlib reads "$(blk_file pure)"
read -r nd back cpus <<< "$FWDLIB_OUT"
excused=$(( $(stat_delta "$s0" "$s1" wraps) + $(stat_delta "$s0" "$s1" expired) + $(stat_delta "$s0" "$s1" head) ))
tol=$(( nd / 100 + 2 ))
diag "off: blktrace $nd dispatches, $back backward; wraps+expired+head $excused"
[ "$nd" -ge 100 ] || fail "only $nd dispatches seen: load too small to judge"
check_pick_order "$d" "$cpus"
# Under full preemption a dispatcher preempted between its pick and the
# D event lets another's D come first: a backward move blktrace shows
# that the sweep did not make (6.12's debug kernel: 659 against 636 + 21).
if order_judged "enforcement off: backward moves"; then
	[ "$back" -le $(( excused + tol )) ] ||
		fail "with enforcement off the sweep moved backward $back times, wraps+expired+head $excused"
fi
# On the SD card D order is pick order: check the sweep itself.
if [ "$(disk_kind "$d")" = mmc ]; then
	sweep_check "$d" pure "$tol" "enforcement off"
	# The count of 5 without fairness, shown, not judged (see 5).
	fwdlib served-ahead "$(blk_file pure)" 2
	diag "enforcement off: pid requests most_in_flight behind_2_or_more median_behind:" $FWDLIB_OUT
fi

reset_tunables "$d"
exit 0
