# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The guest side's shell library, sourced by the selftests
# (selftests/fwdsched/lib.sh, run_tests.sh) and by the guest scripts of
# tools/guest/.  Runs as root in a guest of tools/runner/vm-run, which
# mounts the repository at the host's path.  The host side has
# tools/lib/host.sh.
#
#   FWD_ROOT                the repository's top directory
#   FWD_PY                  the analysis' Python (the host's, through 9p)
#   die <message>           "<program>: <message>" on stderr, exit 1; the
#                           selftests turn it into a KTAP failure
#   iosched <disk>          the disk's scheduler tunables directory
#   schedfs <disk>          the disk's scheduler debugfs directory
#   set_sched <disk> <scheduler>
#   cur_sched <disk>
#   fresh_sched <disk> <scheduler>
#   nullb_create <name> [attribute=value...], nullb_remove <name>
#   scsi_debug_create [parameter=value...]
#   blktrace_start <disk> <file>, blktrace_stop
#   run_fio <disk> <job> <out> [fio options...]
#   json_text <text>
#   card_read <disk> <file>
#
# Errors in these functions end the script through die(); nullb_create
# and scsi_debug_create return non-zero instead, for the caller to decide
# (a missing disk kind is a skip in the selftests).

# shellcheck source=tools/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# Run with -S in the guest (standard library only): a start with a third
# fewer file lookups, each a round trip to the host under virtme-ng.
FWD_PY=/usr/bin/python3

# host_py <python3 arguments...>: "$FWD_PY" -S with these arguments (and
# this standard input when the program is "-"), run on the host when
# tools/check serves FWD_HOSTRPC (tools/runner/hostrpc), else here; its
# output and exit status are the program's.  Only for programs that read
# files of the repository (traces, fio's JSON) and scripts of tools/:
# under TCG a Python start costs 1-2 s and a trace 3 s a MB, on the host
# a twentieth.  A host that has not answered after 300 s (gone) leaves
# the program to run here.
HOSTRPC_N=0
host_py() {
	local dir=${FWD_HOSTRPC:-} id i rc
	if [ -z "$dir" ] || [ ! -d "$dir" ]; then
		"$FWD_PY" -S "$@"
		return
	fi
	HOSTRPC_N=$((HOSTRPC_N + 1))
	id=$dir/$BASHPID.$HOSTRPC_N
	[ "$1" != - ] || cat > "$id.in" || die "cannot write $id.in"
	if ! printf '%s\0' "$PWD" "$@" > "$id.req.tmp" ||
	   ! mv "$id.req.tmp" "$id.req"; then
		die "cannot write $id.req"
	fi
	for ((i = 0; i < 15000; i++)); do
		[ ! -e "$id.rc" ] || break
		sleep 0.02
	done
	if [ ! -e "$id.rc" ]; then
		echo "host_py: no answer from the host in $dir after 300 s: running here" >&2
		if [ "$1" = - ]; then
			"$FWD_PY" -S "$@" < "$id.in"
		else
			"$FWD_PY" -S "$@"
		fi
		rc=$?
		rm -f "$id".*
		return "$rc"
	fi
	read -r rc < "$id.rc"
	cat "$id.out"
	[ ! -s "$id.err" ] || cat "$id.err" >&2
	rm -f "$id".*
	return "${rc:-1}"
}

iosched() { echo "/sys/block/$1/queue/iosched"; }
schedfs() { echo "/sys/kernel/debug/block/$1/sched"; }

# set_sched <disk> <scheduler>: select it, retrying while the kernel says
# -EBUSY (7.x elv_iosched_store uses a trylock), and check that it took.
set_sched() {
	local f=/sys/block/$1/queue/scheduler i cur
	for ((i = 0; i < 50; i++)); do
		echo "$2" > "$f" 2>/dev/null && break
		sleep 0.1
	done
	read -r cur < "$f"
	[[ " $cur " == *" [$2] "* ]] || die "cannot select $2 on $1 ($cur)"
}

# json_text <text>: the text as the inside of a JSON string, on one line
json_text() { printf '%s' "$1" | tr '\n\t\r' '   ' | sed 's/\\/\\\\/g; s/"/\\"/g'; }

# card_read <disk> <file>: the flash card's totals, from its control window
# (the top 64 KiB), read with O_DIRECT; the padding is dropped.
card_read() {
	local s
	s=$(cat "/sys/block/$1/size")
	dd if="/dev/$1" iflag=direct bs=64K count=1 skip=$((s / 128 - 1)) status=none |
		tr -d '\000' | sed 's/ *$//' > "$2"
}

# cur_sched <disk>: the scheduler selected on the disk
cur_sched() {
	local l
	read -r l < "/sys/block/$1/queue/scheduler"
	[[ $l == *\[*\]* ]] || return 0
	l=${l#*\[}
	echo "${l%%\]*}"
}

# fresh_sched <disk> <scheduler>: select it anew, so that its tunables are
# the defaults.
fresh_sched() {
	set_sched "$1" none
	set_sched "$1" "$2"
}

# nullb_create <name> [attribute=value...]: a null_blk disk /dev/<name>
# made through configfs (6.x names the disk after the item), 1 GiB unless
# an attribute says otherwise, with the attributes given, powered on.
# Returns non-zero when null_blk or configfs is missing.
nullb_create() {
	local d=/sys/kernel/config/nullb/$1 a
	shift
	modprobe -q configfs
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	modprobe -q null_blk nr_devices=0 || return 1
	[ -d /sys/kernel/config/nullb ] || return 1
	mkdir -p "$d" || return 1
	echo 1024 > "$d/size"
	for a in "$@"; do
		echo "${a#*=}" > "$d/${a%%=*}" || return 1
	done
	echo 1 > "$d/power"
}

# nullb_remove <name>: power off and delete a disk of nullb_create, if
# it exists.
nullb_remove() {
	local d=/sys/kernel/config/nullb/$1
	[ -d "$d" ] || return 0
	echo 0 > "$d/power"
	rmdir "$d"
}

# scsi_debug_create [parameter=value...]: load scsi_debug with the module
# parameters given and print the name of its disk.  Returns non-zero when
# scsi_debug is missing or made no disk.
scsi_debug_create() {
	local d disk=
	modprobe -q scsi_debug "$@" || return 1
	udevadm settle 2>/dev/null
	for d in /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/*; do
		[ -e "$d" ] && disk=$(basename "$d")
	done
	[ -n "$disk" ] || return 1
	echo "$disk"
}

BLK_PID=
BLK_TMP=
BLK_OUT=
# blkparse's format, from tools/analysis/fwdlib.py; run_tests.sh asks for it
# once and exports it.
BLK_FMT=${BLK_FMT:-}
BLK_DROPPED=0
# blktrace_start <disk> <file>: trace the disk with blktrace until
# blktrace_stop, which writes the trace to <file> as blkparse text in the
# one format of tools/analysis/fwdlib.py (BLKPARSE_FMT).  The binary
# trace stays on the guest's tmpfs: blktrace splices into its output
# files, which the 9p mount refuses, and blkparse's small writes into the
# 9p mount took 45-75 s a run under TCG, against about 1 s on tmpfs plus
# 1.5 s for one copy.  The relay buffers are 8 x 1 MiB a CPU (blktrace's
# default is 4 x 512 KiB): under TCG its reader can fall behind a fast
# disk for a second or more, and the kernel then drops whole buffers.
blktrace_start() {
	local masks=()
	BLK_TMP=$(mktemp -d /tmp/blk.XXXXXX)
	BLK_OUT=$2
	BLK_DROPPED=0
	# BLK_KEEP of dispatches, completions and requeues alone: the kernel
	# traces only those (the other actions, Q, G, P, U, I, M, share one
	# category, "queue").
	[[ ${BLK_KEEP:-} != *[!DCR]* && -n ${BLK_KEEP:-} ]] &&
		masks=(-a issue -a complete -a requeue)
	blktrace -b 1024 -n 8 "${masks[@]}" -d "/dev/$1" -D "$BLK_TMP" -o t > "$BLK_TMP/log" 2>&1 &
	BLK_PID=$!
	sleep 1.5
	kill -0 "$BLK_PID" 2>/dev/null ||
		die "blktrace did not start on $1: $(cat "$BLK_TMP/log")"
}

# blktrace_stop: stop the trace of blktrace_start and write its text.
# BLK_DROPPED is then the number of events the kernel dropped (blktrace's
# "Total: ... (dropped N)", kept in <file> with .txt replaced by
# .blktrace.log); a trace with drops lacks whole stretches of events, and
# is said so on stderr.  No analysis reads the get-request and plug
# events (G, P, U, UT), which are dropped: on 6.12, which traces a plug
# and an unplug per direct read, they were 3 in 7 lines, and parsing took
# most of a test's time under TCG.  With BLK_KEEP set to action letters
# (e.g. IDCR), only the events of those actions are kept: a buffered
# writer's queue and merge events (Q, M: one a page) made 99% of a UFS
# trace.  Under tools/check (FWD_HOSTRPC) the host parses and filters
# (fwdlib.py blkparse through host_py): blkparse and grep took the guest
# about 3 s a MB of text.
blktrace_stop() {
	local fmt rc bin
	[ -n "$BLK_PID" ] || return 0
	kill -TERM "$BLK_PID" 2>/dev/null
	wait "$BLK_PID" 2>/dev/null
	BLK_PID=
	BLK_DROPPED=$(sed -n 's/.*Total:.*(dropped \([0-9]*\)).*/\1/p' "$BLK_TMP/log" | tail -n 1)
	BLK_DROPPED=${BLK_DROPPED:-0}
	[ "$BLK_DROPPED" -eq 0 ] ||
		echo "blktrace dropped $BLK_DROPPED events: the trace in $BLK_OUT is incomplete" >&2
	mkdir -p "$(dirname "$BLK_OUT")"
	if [ -n "${FWD_HOSTRPC:-}" ] && [ -d "$FWD_HOSTRPC" ]; then
		# The host's blkparse and filter (fwdlib.py blkparse, through
		# host_py): the binary trace is copied once, and the text
		# written there.
		bin=${BLK_OUT%.txt}.bin
		if ! mkdir -p "$bin" || ! cp "$BLK_TMP"/t.blktrace.* "$bin/"; then
			die "cannot copy the trace for $BLK_OUT to $bin"
		fi
		host_py "$FWD_ROOT/tools/analysis/fwdlib.py" blkparse "$bin" \
			"$BLK_OUT" "${BLK_KEEP:-}" ||
			die "blkparse of the trace for $BLK_OUT failed on the host"
		rm -rf "$bin"
	else
		# asked once per script unless exported: a Python start costs
		# a second or two under TCG
		[ -n "$BLK_FMT" ] || BLK_FMT=$("$FWD_PY" -S "$FWD_ROOT/tools/analysis/fwdlib.py" blkparse-fmt) ||
			die "tools/analysis/fwdlib.py blkparse-fmt failed"
		fmt=$BLK_FMT
		(cd "$BLK_TMP" && blkparse -q -i t -f "$fmt" > t.txt) ||
			die "blkparse of the trace for $BLK_OUT failed"
		rc=0
		if [ -n "${BLK_KEEP:-}" ]; then
			grep -E "^[^ ]+ [^ ]+ [$BLK_KEEP] " "$BLK_TMP/t.txt" > "$BLK_TMP/k.txt" || rc=$?
		else
			grep -vE "^[^ ]+ [^ ]+ (G|P|UT?) " "$BLK_TMP/t.txt" > "$BLK_TMP/k.txt" || rc=$?
		fi
		[ "$rc" -le 1 ] || die "filtering the trace for $BLK_OUT failed"
		cp "$BLK_TMP/k.txt" "$BLK_OUT" || die "cannot write $BLK_OUT"
	fi
	# blktrace's own summary (events and drops a CPU) beside the trace
	cp "$BLK_TMP/log" "${BLK_OUT%.txt}.blktrace.log" || die "cannot write beside $BLK_OUT"
	rm -rf "$BLK_TMP"
	BLK_TMP=
}

# run_fio <disk> <job> <out> [fio options...]: run fio-jobs/<job>.fio
# (".fio" may be given) on /dev/<disk> from the repository's top, with
# fio's JSON (json+, warnings ahead of it removed) in <out>.json and the
# rest of its output in <out>.log.  The job files' variables: FWD_DEV is
# /dev/<disk>; FWD_RUNTIME, FWD_SIZE, FWD_IOSIZE and FWD_OFFSET keep the
# caller's values, else 5 (s), 64m, 64m and 0.  FWD_FIO_PIN, if set, is
# the CPU list fio runs on.  Dies when fio fails.
run_fio() {
	local disk=$1 job=${2%.fio} out=$3 pin=()
	shift 3
	[ -z "${FWD_FIO_PIN:-}" ] || pin=(taskset -c "$FWD_FIO_PIN")
	mkdir -p "$(dirname "$out")"
	if ! (cd "$FWD_ROOT" &&
	      FWD_DEV=/dev/$disk FWD_RUNTIME=${FWD_RUNTIME:-5} \
	      FWD_SIZE=${FWD_SIZE:-64m} FWD_IOSIZE=${FWD_IOSIZE:-64m} \
	      FWD_OFFSET=${FWD_OFFSET:-0} "${pin[@]}" \
	      fio --output-format=json+ --output="$out.json" \
	      "fio-jobs/$job.fio" "$@" > "$out.log" 2>&1); then
		die "fio $job failed on $disk:" \
			"$(cat "$out.log" "$out.json" 2>/dev/null | tail -n 5)"
	fi
	# fio puts its warnings ahead of the JSON in the same file.
	sed -i -n '/^{/,$p' "$out.json"
}

# fio_stop <pid> <json>: ends the fio running in the background as <pid>
# (on SIGINT fio stops its jobs, reports them and exits with 128), or
# reaps it if it has ended, and removes the warnings fio wrote ahead of
# the JSON in <json>.  Returns fio's exit status, 0 after a stop by
# SIGINT.
fio_stop() {
	local rc
	kill -INT "$1" 2>/dev/null
	wait "$1"
	rc=$?
	sed -i -n '/^{/,$p' "$2"
	[ "$rc" -ne 128 ] || rc=0
	return "$rc"
}

# A script that ends while tracing must not leave blktrace holding the
# disk.  (A script that sets its own EXIT trap calls blktrace_cleanup
# there.)
blktrace_cleanup() {
	[ -z "$BLK_PID" ] || kill -TERM "$BLK_PID" 2>/dev/null
	[ -z "$BLK_TMP" ] || rm -rf "$BLK_TMP"
}
trap blktrace_cleanup EXIT
