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

# The disk kind: mmc, nullb or scsi.
disk_kind() {
	case $1 in
	mmcblk*) echo mmc ;;
	nullb*) echo nullb ;;
	*) echo scsi ;;
	esac
}

# stat_get <disk> <name>: a counter of fwdsched's debugfs "stats" file
stat_get() {
	local v
	v=$(awk -v n="$2" '$1 == n { print $2 }' "$(schedfs "$1")/stats")
	[ -n "$v" ] || fail "no counter '$2' in $(schedfs "$1")/stats"
	echo "$v"
}

# tunable_set <disk> <name> <value>: write and verify, fail otherwise
tunable_set() {
	local f
	f=$(iosched "$1")/$2
	echo "$3" > "$f" || fail "writing '$3' to $f failed"
	[ "$(cat "$f")" = "$3" ] || fail "$f reads $(cat "$f") after writing $3"
}

# reset_tunables <disk>: fwdsched with its defaults again (re-select it)
reset_tunables() { fresh_sched "$1" fwdsched; }

# blk_start <disk> <name>, blk_stop: blktrace_start and blktrace_stop
# into the test's trace <name>, blk_file <name>.
blk_file() { echo "$FWD_OUT/blk/$1.txt"; }
blk_start() { blktrace_start "$1" "$(blk_file "$2")"; }
blk_stop() { blktrace_stop; }

# fwdlib <subcommand> [args...]: tools/analysis/fwdlib.py (the analysis
# of traces: "reads", "sweep", "deadline", ...), its output left in
# FWDLIB_OUT; a failure fails the test.
fwdlib() {
	FWDLIB_OUT=$("$FWD_PY" "$FWD_ROOT/tools/analysis/fwdlib.py" "$@") ||
		fail "tools/analysis/fwdlib.py $1 failed"
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
