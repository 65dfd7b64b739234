# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the fwdsched selftests; sourced by each t_*.sh, which runs
# as root in the guest with one argument, the disk (e.g. mmcblk0).
# A test exits 0 (pass), 1 (fail) or 4 (skip) and prints diagnostics as
# "# ..." lines.  Environment from run_tests.sh: FWD_OUT.

# FWD_ROOT, set_sched, fresh_sched, run_fio, blktrace_start, ...: the
# guest library.
# shellcheck source=tools/lib/guest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/lib/guest.sh"
FWD_OUT=${FWD_OUT:-$(mktemp -d)}
mkdir -p "$FWD_OUT"
export FWD_OUT

KSFT_FAIL=1
KSFT_SKIP=4

diag() { local l; while IFS= read -r l; do echo "# $l"; done <<< "$*"; }
fail() { diag "FAIL: $*"; exit $KSFT_FAIL; }
skip() { diag "SKIP: $*"; exit $KSFT_SKIP; }
# The guest library's errors are test failures.
die() { fail "$@"; }

# The disk kind: mmc, nullb, ufs (the UFS disk tools/runner/vm-init found)
# or scsi.
disk_kind() {
	case $1 in
	mmcblk*) echo mmc ;;
	nullb*) echo nullb ;;
	*)	if [ "$1" = "$(cat /run/fwdsched-ufs-disk 2>/dev/null)" ]; then
			echo ufs
		else
			echo scsi
		fi ;;
	esac
}

# stat_get <disk> <name>: a counter of fwdsched's debugfs "stats" file
# (read by the shell itself: under TCG every program started costs a
# good part of a second beside a busy disk)
stat_get() {
	local f=/sys/kernel/debug/block/$1/sched/stats
	stat_scan "$2" < "$f" || fail "no counter '$2' in $f"
	echo "$STAT_V"
}

# stat_scan <name>: set STAT_V to the counter <name> of the "stats"
# lines on standard input; fails (STAT_V empty) without it
stat_scan() {
	local n v
	STAT_V=
	while read -r n v; do
		[ "$n" != "$1" ] || { STAT_V=$v; return 0; }
	done
	return 1
}

# stat_of <copy> <name>: a counter of a saved copy of the "stats" file
stat_of() {
	stat_scan "$2" <<< "$1"
	echo "$STAT_V"
}

# stat_delta <before> <after> <name>: a counter's growth between two
# saved copies of the "stats" file
stat_delta() { echo $(( $(stat_of "$2" "$3") - $(stat_of "$1" "$3") )); }

# tunable_set <disk> <name> <value>: write and verify, fail otherwise
tunable_set() {
	local f=/sys/block/$1/queue/iosched/$2 v
	echo "$3" > "$f" || fail "writing '$3' to $f failed"
	read -r v < "$f"
	[ "$v" = "$3" ] || fail "$f reads $v after writing $3"
}

# reset_tunables <disk>: fwdsched with its defaults again (re-select it)
reset_tunables() { fresh_sched "$1" fwdsched; }

# blk_start <disk> <name>, blk_stop: blktrace_start and blktrace_stop
# into the test's trace <name>, blk_file <name>.
blk_file() { echo "$FWD_OUT/blk/$1.txt"; }
blk_start() { blktrace_start "$1" "$(blk_file "$2")"; }
# A trace that lost events cannot be judged in either direction (a missing
# insert hides a process, a missing dispatch hides a pass), so blk_stop
# fails the test when the kernel dropped any.
blk_stop() {
	blktrace_stop
	[ "$BLK_DROPPED" -eq 0 ] ||
		fail "blktrace dropped $BLK_DROPPED events: the trace cannot be judged"
}

# fwdlib <subcommand> [args...]: tools/analysis/fwdlib.py (the analysis
# of traces: "reads", "sweep", "deadline", ...; on the host through
# host_py when tools/check serves it), its output left in
# FWDLIB_OUT; a failure fails the test.
fwdlib() {
	FWDLIB_OUT=$(host_py "$FWD_ROOT/tools/analysis/fwdlib.py" "$@") ||
		fail "tools/analysis/fwdlib.py $1 failed"
}

# preempt_full: true on a kernel that preempts a task anywhere outside a
# critical section (CONFIG_PREEMPT, or preempt=full on a PREEMPT_DYNAMIC
# kernel), as Android's generic kernels and the debug kernels of make
# check-debug do.  There a dispatcher can be preempted between the
# scheduler's pick and the driver's start of the request, where no lock
# is held, for as long as the other tasks of its CPU run: blktrace's D
# order is then not pick order, on one CPU or several, and a check of
# the scheduler's order against it would judge the CPU scheduler.
# Debian's kernels preempt voluntarily.
preempt_full() {
	local f=/sys/kernel/debug/sched/preempt
	if [ -r "$f" ]; then
		grep -q '(full)' "$f"
	elif uname -v | grep -qw PREEMPT_DYNAMIC; then
		grep -qw 'preempt=full' /proc/cmdline
	else
		uname -v | grep -qwE 'PREEMPT|PREEMPT_RT'
	fi
}

# order_judged <what>: whether D order may be judged as the scheduler's
# pick order (see preempt_full); when not, says so for <what>.
order_judged() {
	preempt_full || return 0
	diag "$1: not judged under full preemption (D order is not pick order)"
	return 1
}

# sweep_check <disk> <trace> <tolerance> [label]: rebuild the sweep from
# the trace <trace> (fwdlib sweep, with the disk's read_expire) and fail
# when more than <tolerance> dispatches were not its choice.  Leaves the
# number of dispatches that had others waiting in SWEEP_CHOICES.  Under
# full preemption the figures are shown, not judged (order_judged).
sweep_check() {
	local n bad swaps
	fwdlib sweep "$(blk_file "$2")" "$(cat "$(iosched "$1")/read_expire")"
	read -r n SWEEP_CHOICES bad swaps <<< "$FWDLIB_OUT"
	diag "${4:+$4: }sweep rebuilt from the trace: $n dispatches," \
		"$SWEEP_CHOICES with others waiting, $bad out of order, $swaps started swapped"
	order_judged "${4:+$4: }the sweep's choices" || return 0
	[ "$bad" -le "$3" ] ||
		fail "${4:+$4: }$bad dispatches were not the sweep's choice (tolerance $3)"
}

# blk_events <name>: the trace <name> as "action sector nsectors time rwbs
# cpu" lines, one per event, for awk in the tests.
blk_events() {
	fwdlib events "$(blk_file "$1")"
	printf '%s\n' "$FWDLIB_OUT"
}

# run_fio_ordered <disk> <job> <out> [fio args...]: run_fio such that
# blktrace's D order is the scheduler's pick order.  The SD card does one
# command at a time.  On the other disks, which have one hardware queue
# per CPU here (see run_tests.sh), fio runs on CPU 0, so every request is
# dispatched on CPU 0 -- blk-mq runs a hardware queue only on the CPUs
# mapped to it.  On a hardware queue shared by two CPUs they can pick
# requests in one order and start them in the other.
run_fio_ordered() {
	if [ "$(disk_kind "$1")" = mmc ]; then
		run_fio "$@"
	else
		FWD_FIO_PIN=0 run_fio "$@"
	fi
}

# check_pick_order <disk> <cpus>: after run_fio_ordered, with <cpus> from
# "fwdlib reads", fail unless the reads on a disk other than the SD card
# were all started on one CPU.
check_pick_order() {
	[ "$(disk_kind "$1")" = mmc ] || [ "$2" -eq 1 ] ||
		fail "reads were started on $2 CPUs: D order is not pick order"
}

# procs_get <procs text> <column>...: the named columns of every row of
# fwdsched's debugfs "procs" (named by its first header line), one row a
# line.
procs_get() {
	local text=$1
	shift
	awk -v want="$*" '
		NR == 1 && /^# / {
			for (i = 2; i <= NF; i++)
				col[$i] = i - 1
			n = split(want, w, " ")
			for (i = 1; i <= n; i++)
				if (!(w[i] in col)) {
					print "procs has no column " w[i] > "/dev/stderr"
					exit 1
				}
			next
		}
		/^#/ { next }
		{
			out = $(col[w[1]])
			for (i = 2; i <= n; i++)
				out = out " " $(col[w[i]])
			print out
		}' <<< "$text" || fail "cannot read columns $* of procs"
}

FWD_TRACEFS=/sys/kernel/tracing
FWD_KPROBES=()
# tracefs_ready: mount tracefs (or skip the test), and stop ftrace from
# hooking sched_switch to record command names whenever an event is
# enabled ("record-cmd"): turning that hook on and off patches the text
# of __schedule() with int3 while every CPU runs through it, and under
# TCG a vCPU can still execute the int3 after the patch has completed
# (a 6.12 guest died so, "Oops: int3" in __schedule, right after
# trace.mmc disabled its events).  The tests read events by name, never
# the command names.
tracefs_ready() {
	mountpoint -q "$FWD_TRACEFS" ||
		mount -t tracefs nodev "$FWD_TRACEFS" 2>/dev/null || skip "no tracefs"
	echo 0 > "$FWD_TRACEFS/options/record-cmd" ||
		fail "cannot turn off ftrace's record-cmd"
}
# delayed_runs_start: count blk-mq's delayed queue runs from now on, with
# two kprobes: "repoll", blk_mq_delay_run_hw_queues(), which blk-mq calls
# (3 ms ahead) after a scheduler's dispatch returned nothing although it
# reported work; and "delay_run", every blk_mq_delay_run_hw_queue() with
# a delay (an asynchronous run has none), which also counts the re-runs
# after the driver turned a request away.  Skips the test when the
# kernel cannot probe them.
delayed_runs_start() {
	local t=$FWD_TRACEFS
	tracefs_ready
	[ -w "$t/kprobe_events" ] || skip "no kprobe events in this kernel"
	echo 'p:fwdtest/repoll blk_mq_delay_run_hw_queues' \
		>> "$t/kprobe_events" 2>/dev/null ||
		skip "cannot probe blk_mq_delay_run_hw_queues"
	FWD_KPROBES+=(fwdtest/repoll)
	echo 'p:fwdtest/delay_run blk_mq_delay_run_hw_queue msecs=%si:u64' \
		>> "$t/kprobe_events" 2>/dev/null ||
		skip "cannot probe blk_mq_delay_run_hw_queue"
	FWD_KPROBES+=(fwdtest/delay_run)
	echo 'msecs != 0' > "$t/events/fwdtest/delay_run/filter" ||
		fail "cannot filter the kprobe"
	echo 4096 > "$t/buffer_size_kb"
	: > "$t/trace"
	echo 1 > "$t/events/fwdtest/enable" || fail "cannot enable the kprobes"
}

REPOLLS=
DELAYED_RUNS=
# delayed_runs_stop: stop counting; REPOLLS and DELAYED_RUNS are the counts.
delayed_runs_stop() {
	local t=$FWD_TRACEFS k
	echo 0 > "$t/events/fwdtest/enable"
	# shellcheck disable=SC2034 # results for the caller
	REPOLLS=$(grep -c ' repoll: ' "$t/trace")
	# shellcheck disable=SC2034
	DELAYED_RUNS=$(grep -c ' delay_run: ' "$t/trace")
	grep -q 'LOST' "$t/trace" && fail "the trace lost events"
	for k in "${FWD_KPROBES[@]}"; do
		echo "-:$k" >> "$t/kprobe_events"
	done
	FWD_KPROBES=()
}

# completed <disk>: requests completed on the disk so far (reads and
# writes, from /sys/block/<disk>/stat).
completed() {
	disk_done "$1"
	echo "$DONE_N"
}

# disk_done <disk>: set DONE_N to what completed() prints, without a
# subshell
disk_done() {
	local r _x w
	read -r r _x _x _x w _x < "/sys/block/$1/stat"
	DONE_N=$((r + w))
}

# wait_completed <disk> <n>: wait until <n> more requests have completed
# on the disk, e.g. to know that a process started in the background is
# doing I/O (and so has set up its signal handlers).  A hang check only:
# fails after 120 s.
wait_completed() {
	local want i
	disk_done "$1"
	want=$((DONE_N + $2))
	for ((i = 0; i < 1200; i++)); do
		disk_done "$1"
		[ "$DONE_N" -ge "$want" ] && return 0
		sleep 0.1
	done
	fail "fewer than $2 requests completed on $1 in 120 s"
}

# write_expect_einval <file> <value>: the write must fail with EINVAL
write_expect_einval() {
	local err
	err=$( { printf '%s' "$2" > "$1"; } 2>&1 ) &&
		fail "writing '$2' to $1 was accepted"
	case $err in
	*"Invalid argument"*) return 0 ;;
	*) fail "writing '$2' to $1: expected EINVAL, got: $err" ;;
	esac
}

# pure_sweep <disk>: turn off fairness enforcement if this build has it,
# so that dispatch order is the sweep alone.
pure_sweep() {
	local f
	f=$(iosched "$1")/fair_slack
	[ -e "$f" ] && echo "${FWD_FAIR_OFF:-4096}" > "$f"
	return 0
}

# A test that ends early must not leave blktrace, its kprobes or its
# background I/O (a looping reader, a fio) behind.
fwd_test_exit() {
	local k p
	blktrace_cleanup
	for p in $(jobs -p); do
		kill "$p"
	done
	[ ${#FWD_KPROBES[@]} -eq 0 ] && return
	echo 0 > "$FWD_TRACEFS/events/fwdtest/enable"
	for k in "${FWD_KPROBES[@]}"; do
		echo "-:$k" >> "$FWD_TRACEFS/kprobe_events"
	done
} 2>/dev/null
trap fwd_test_exit EXIT

# sched_idle <disk>: wait until nothing is queued in fwdsched or in flight
# on the disk (udev's probes after a writer closed it included), twice in
# a row with the same counters; fail unless fwdsched's books then show
# nothing waiting or in flight.  A hang check only: fails after 120 s.
sched_idle() {
	local sfs=/sys/kernel/debug/block/$1/sched prev='' cur r w head i
	local -a stats
	udevadm settle 2>/dev/null
	for ((i = 0; i < 600; i++)); do
		read -r r w < "/sys/block/$1/inflight"
		read -r head < "$sfs/queued"
		mapfile -t stats < "$sfs/stats"
		cur="$r $w $head ${stats[*]}"
		if [ $((r + w)) -eq 0 ] &&
		   [[ $head == "reads 0 writes 0 head 0 inflight 0 "* ]]; then
			[ "$cur" = "$prev" ] && return 0
			prev=$cur
		else
			prev=
		fi
		sleep 0.2
	done
	fail "$1 not idle after 120 s: fwdsched queued: $head; in flight: $r $w"
}

# sched_books <disk>: once the disk is idle (sched_idle), fwdsched's
# counters and the requests completed on the disk, "name value" a line.
sched_books() {
	sched_idle "$1"
	cat "$(schedfs "$1")/stats"
	echo "completed $(completed "$1")"
}

# books_check <before> <after>: between two sched_books, every request
# fwdsched took in was dispatched once and completed once: requests
# inserted, less those merged away, equal its dispatches less those from
# its head list (requeued requests inserted again, and requests without
# scheduler data), which equal the requests the disk completed (reads and
# writes).  Prints the balance as diagnostics; fails when it does not
# hold.
books_check() {
	awk '
		FNR == NR { a[$1] = $2; next }
		{ b[$1] = $2 }
		END {
			for (k in b)
				d[k] = b[k] - a[k]
			kept = d["inserted"] - d["insert_merges"] - d["rq_merges"]
			disp = d["dispatched"] - d["head"]
			printf "# books: inserted %d - insert_merges %d - rq_merges %d = %d; dispatched %d - head %d = %d; completed %d\n",
				d["inserted"], d["insert_merges"], d["rq_merges"], kept,
				d["dispatched"], d["head"], disp, d["completed"]
			exit !(kept == disp && disp == d["completed"] && disp > 0)
		}' "$1" "$2" || fail "fwdsched's books do not balance (see above)"
}

# guarded_write <file> <value> [<seconds>]: write the value to a sysfs
# file from a background shell and wait for it, returning the write's
# status.  A write that has not returned after <seconds> (default 60: a
# freeze or a switch that nothing ends) fails the test: a watchdog shell
# says so and ends the test.  No program is started (timeout, sh): under
# TCG beside a busy disk each costs a good part of a second.
guarded_write() {
	local pid dog rc
	(echo "$2" > "$1") 2>/dev/null &
	pid=$!
	(read -rt "${3:-60}" <> <(:)
	 diag "FAIL: writing '$2' to $1 has not returned after ${3:-60} s"
	 kill -TERM $$) &
	dog=$!
	wait "$pid"
	rc=$?
	# SIGKILL, not SIGTERM: a subshell that bash has only just forked
	# still has the test's traps, and a SIGTERM there runs the test's
	# EXIT trap in it (which kills fio and resets the tunables).
	kill -KILL "$dog" 2>/dev/null
	wait "$dog" 2>/dev/null
	return "$rc"
}

# switch_to <disk> <scheduler>: select the scheduler under load, retrying
# while the kernel says -EBUSY (7.x: its lock taken elsewhere) for up to
# 120 s; each write guarded (guarded_write).  Fails the test otherwise.
switch_to() {
	local i
	for ((i = 0; i < 600; i++)); do
		guarded_write "/sys/block/$1/queue/scheduler" "$2" && return 0
		sleep 0.2
	done
	fail "the switch to $2 was refused for 120 s"
}

# nr_requests_set <disk> <n>: write queue/nr_requests, retrying while the
# kernel says -EBUSY (7.x takes a trylock there, as for the scheduler),
# and check that it took.  Each write freezes the queue: a write still
# blocked after 60 s fails the test.
nr_requests_set() {
	local f=/sys/block/$1/queue/nr_requests i v
	for ((i = 0; i < 50; i++)); do
		guarded_write "$f" "$2" && break
		sleep 0.1
	done
	read -r v < "$f"
	[ "$v" = "$2" ] || fail "$f reads $v after writing $2"
}

# verify_backlog_start <disk> <json> <runtime>: fio writes and verifies
# on <disk> (fio-jobs/selftest/verify-backlog.fio, two jobs) in the
# background for at most <runtime> s, its JSON into <json>; its pid in
# fio_pid.  Stop it with fio_stop, judge it with verified_jobs.
verify_backlog_start() {
	FWD_DEV=/dev/$1 FWD_RUNTIME=$3 FWD_SIZE=16m \
		fio --output-format=json --output="$2" \
		"$FWD_ROOT/fio-jobs/selftest/verify-backlog.fio" &
	# shellcheck disable=SC2034  # read by the caller
	fio_pid=$!
}

# verified_jobs <json> <n>: fio's JSON holds <n> jobs, and each wrote
# and read back (verified) something without an error; prints them.
verified_jobs() {
	host_py - "$1" "$2" <<'PY'
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
for j in jobs:
    print("# job %s: error %d, %d bytes written, %d read back and verified"
          % (j["jobname"], j["error"], j["write"]["io_bytes"],
             j["read"]["io_bytes"]))
if len(jobs) != int(sys.argv[2]):
    sys.exit("# fio ran %d jobs, expected %s" % (len(jobs), sys.argv[2]))
for j in jobs:
    if j["error"] or not j["write"]["io_bytes"] or not j["read"]["io_bytes"]:
        sys.exit("# a job failed, or wrote or verified nothing")
PY
}

# own_nullb <name> [attribute=value...]: a null_blk disk of the test's
# own (nullb_create), removed when the test exits, with fwdsched
# selected; skips the test when null_blk cannot make it.
own_nullb() {
	own_nullb_name=$1
	trap 'fwd_test_exit; set_sched "$own_nullb_name" none 2>/dev/null; nullb_remove "$own_nullb_name"' EXIT
	nullb_create "$@" || skip "cannot make a null_blk disk"
	[ -b "/dev/$1" ] || skip "no /dev/$1"
	fresh_sched "$1" fwdsched
}
