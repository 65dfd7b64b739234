# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the fwdsched selftests; sourced by each t_*.sh, which runs
# as root in the guest with one argument, the disk (e.g. mmcblk0).
# A test exits 0 (pass), 1 (fail) or 4 (skip) and prints diagnostics as
# "# ..." lines.  Environment from run_tests.sh: FWD_ROOT, FWD_OUT.

FWD_ROOT=${FWD_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
FWD_OUT=${FWD_OUT:-$(mktemp -d)}
mkdir -p "$FWD_OUT"
export FWD_ROOT FWD_OUT
# set_sched, fresh_sched, run_fio, blktrace_start, ...: the guest library.
# shellcheck source=tools/lib/guest.sh
. "$FWD_ROOT/tools/lib/guest.sh"

KSFT_FAIL=1
KSFT_SKIP=4

diag() { local l; while IFS= read -r l; do echo "# $l"; done <<< "$*"; }
fail() { diag "FAIL: $*"; exit $KSFT_FAIL; }
skip() { diag "SKIP: $*"; exit $KSFT_SKIP; }
# The guest library's errors are test failures.
die() { fail "$@"; }

# check <message> <command...>: fail with <message> unless the command succeeds
check() {
	local msg=$1
	shift
	"$@" || fail "$msg"
}

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
# into the test's trace <name>, $FWD_OUT/blk/<name>.txt.
blk_start() { blktrace_start "$1" "$FWD_OUT/blk/$2.txt"; }
blk_stop() { blktrace_stop; }

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
# blk_backward, fail unless the reads on a disk other than the SD card
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

# blk_events <name>: the trace as "action sector nsectors time rwbs cpu"
# lines, one per event, for awk in the tests.
blk_events() {
	local f=$FWD_OUT/blk/$1.txt
	[ -e "$f" ] || fail "no trace $1 (blk_stop not run?)"
	awk '$1 ~ /^[0-9]+,[0-9]+$/ && $2 ~ /^[0-9]+$/ && $7 ~ /^[0-9]+\.[0-9]+$/ {
		print $3, $5, $6, $7, $4, $2 }' "$f"
}

# blk_clook <prefix> <read_expire_ms>: check every read dispatch of the
# trace against the sweep, with the waiting requests rebuilt from the
# trace's I, F, R and D events.  Prints "<dispatches> <choices>
# <violations> <swaps>", a choice being a dispatch while other requests
# waited.
#
# A dispatch violates the sweep when a request that was waiting when it
# was picked lies between the sweep position (the end of the previous
# dispatch) and the dispatched sector, or, at a wrap (nothing waiting at
# or above the position), below the dispatched sector.  blk-mq can pick
# requests some time before it starts them (D) and keep them on its own
# dispatch list while the driver is busy, so the pick time is unknown;
# but picks happen in D order and after the request's own insertion, so
# a request inserted before the latest insertion of the requests
# dispatched so far was certainly waiting at the pick.  Only those are
# held against the sweep.  Expired reads and requeued (at-head) requests
# are exempt, and so is passing over a request that is requeued later
# (it had been picked before).  Two CPUs can start two picked requests
# in the opposite order: a passed-over request dispatched right next is
# counted as a swap, not a violation.  Only valid where D order is
# otherwise pick order: one command at a time (the SD card), or one CPU
# dispatching (run_fio_ordered on scsi_debug).
blk_clook() {
	blk_events "$1" | awk -v expms="$2" '
		function violation(msg) {
			if (++v <= 3)
				print "# " msg > "/dev/stderr"
		}
		# was request <k> requeued after its insertion (so picked then)?
		function requeued_since(k,   t, i, m) {
			m = split(rq[k], t, " ")
			for (i = 1; i <= m; i++)
				if (t[i] + 0 > ins[k])
					return 1
			return 0
		}
		$5 ~ /R/ && $1 ~ /^[IFRD]$/ { ev[++ne] = $1 " " $2 " " $3 " " $4 }
		$5 ~ /R/ && $1 == "R" { rq[$2] = rq[$2] " " $4 }
		END {
			for (e = 1; e <= ne; e++)
				step(ev[e])
			if (held != "")
				violation(heldmsg)
			print n + 0, choices + 0, v + 0, swaps + 0
		}
		function step(line,   f, a, s, o, k, up, low, swapped, want) {
			split(line, f, " ")
			a = f[1]
			s = f[2]
			if (a == "I") {
				pend[s]++
				ins[s] = f[4]
				return
			}
			if (a == "R") {
				requeued[s] = 1
				return
			}
			# a front merge moves a waiting request down to the bio
			if (a == "F") {
				o = s + f[3]
				if (pend[o] > 0) {
					if (!--pend[o])
						delete pend[o]
					pend[s]++
					ins[s] = ins[o]
				}
				return
			}
			n++
			if ((s in ins) && ins[s] > seen)
				seen = ins[s]
			swapped = held != "" && s == held
			if (held != "" && !swapped)
				violation(heldmsg)
			held = ""
			up = -1
			low = -1
			for (k in pend) {
				if (k == s || ins[k] >= seen)
					continue
				k += 0
				if (k >= pos && (up < 0 || k < up))
					up = k
				if (low < 0 || k < low)
					low = k
			}
			if (low >= 0)
				choices++
			if (swapped) {
				swaps++
			} else if (n > 1) {
				want = -1
				if (up >= 0 && (s < pos || s > up))
					want = up
				else if (up < 0 && s < pos && low >= 0 && low < s)
					want = low
				if (want >= 0 && !requeued[s] && !requeued_since(want) &&
				    f[4] - ins[s] < expms / 1000) {
					held = want
					heldmsg = sprintf("sweep at %d took %d; waiting: %d ahead, %d lowest",
							  pos, s, up, low)
				}
			}
			if (pend[s] > 0 && !--pend[s])
				delete pend[s]
			delete requeued[s]
			# after a swap the sweep is past both requests
			if (!swapped || s + f[3] > pos)
				pos = s + f[3]
		}'
}

# blk_backward <prefix>: "<reads dispatched> <backward moves> <cpus>"
# from the trace's D events of reads, a move being backward when it
# starts below the end of the previous dispatch, and <cpus> the number
# of CPUs that started them.  blktrace merges its per-CPU buffers by
# time stamp, so D order is pick order only when one CPU dispatched
# (see run_fio_ordered).
blk_backward() {
	blk_events "$1" | awk '
		$1 == "D" && $5 ~ /R/ {
			n++
			if (n > 1 && $2 < pos) b++
			pos = $2 + $3
			if (!($6 in cpu)) { cpu[$6] = 1; nc++ }
		}
		END { print n + 0, b + 0, nc + 0 }'
}

# pure_sweep <disk>: turn off fairness enforcement if this build has it,
# so that dispatch order is the sweep alone.
pure_sweep() {
	local f
	f=$(iosched "$1")/fair_slack
	[ -e "$f" ] && echo "${FWD_FAIR_OFF:-4096}" > "$f"
	return 0
}
