#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc
#
# The MMC command history, in whichever form is present: the patched
# mmc_core (mmc_core.history_size exists, files in /sys/kernel/debug/<host>/)
# or else the mmc_history module on the stock mmc_core (loaded here, files
# in /sys/kernel/debug/mmc_history/).  Checks:
#  - bad writes to the control file are refused with EINVAL and clear nothing;
#  - after N direct 4 KiB reads the history holds N read records of 8
#    sectors, in the order and at the sectors blktrace saw issued (D);
#  - completion never precedes issue;
#  - with a ring smaller than the run it keeps exactly the newest records;
#  - reading and clearing while recording is safe and gives well-formed files;
#  - module form: unloading it during I/O, unloading and reloading the MMC
#    stack under it, and loading it before mmc_core.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
rel=$(uname -r)
ko=$FWD_ROOT/build/$rel/mmc_history.ko
swap=$FWD_ROOT/tools/guest/mmc-core-swap.sh
dbg=/sys/kernel/debug
N=${FWD_MMC_READS:-64}
SMALL=16

host=$(basename "$(dirname "$(readlink -f "/sys/block/$d/device")")")
[[ $host == mmc[0-9]* ]] || fail "cannot find the host of $d (got '$host')"

if [ -e /sys/module/mmc_core/parameters/history_size ]; then
	form=core
	hist=$dbg/$host/history
	ctl=$dbg/$host/history_control
	core_size=$(cat /sys/module/mmc_core/parameters/history_size)
	[ "$core_size" -gt 0 ] || skip "patched mmc_core loaded with history_size=0"
else
	form=module
	hist=$dbg/mmc_history/$host
	ctl=$dbg/mmc_history/control
	[ -e "$ko" ] || fail "no $ko"
	was_loaded=
	[ -d /sys/module/mmc_history ] && was_loaded=y
fi
diag "form: $form, host $host, history $hist"

# One direct 4 KiB read at 4 KiB block $2 of disk $1.
read4k() {
	dd if="/dev/$1" of=/dev/null bs=4096 count=1 skip="$2" iflag=direct \
		2>/dev/null || fail "direct read of block $2 of $1 failed"
}

# Direct 4 KiB reads of the blocks listed on stdin, in order, from one
# process (a dd each costs more under TCG than the read); with --loop
# again and again until SIGTERM.
direct_reads=("$FWD_PY" -S "$FWD_ROOT/tools/guest/direct-reads.py")
reads() {
	"${direct_reads[@]}" "/dev/$1" || fail "direct reads of $1 failed"
}

# The history as data lines sorted by issue time.
hist_lines() { grep -v '^#' "$hist" | sort -n -k1,1; }
hist_header() { head -n 1 "$hist"; }
# hdr_field <name> <file>: a key=value of the header line
hdr_field() { head -n 1 "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# Wait for the history file (the module creates it from a work item once
# it has seen the host), issuing a read so that it does.
wait_hist() {
	for _ in $(seq 50); do
		[ -e "$hist" ] && return 0
		read4k "$d" 0
		sleep 0.1
	done
	fail "no $hist"
}

load_module() {
	rmmod mmc_history 2>/dev/null
	insmod "$ko" "$@" || fail "insmod mmc_history $* failed"
}

# Reload with a ring of $1 records and come back to a clean history.
set_ring() {
	if [ "$form" = module ]; then
		load_module ring_size="$1"
	else
		"$swap" history history_size="$1" > "$FWD_OUT/swap.log" 2>&1 ||
			fail "mmc-core-swap failed: $(cat "$FWD_OUT/swap.log")"
		set_sched "$d" fwdsched
	fi
	wait_hist
	echo clear > "$ctl" || fail "writing clear to $ctl failed"
}

restore() {
	if [ "$form" = module ]; then
		rmmod mmc_history 2>/dev/null
		[ -n "$was_loaded" ] && insmod "$ko"
	else
		"$swap" history history_size="$core_size" > "$FWD_OUT/swap.log" 2>&1
	fi
	set_sched "$d" fwdsched
}

# Reads at scattered 4 KiB blocks, never twice the same: block i*7919 mod 2^18.
blocks() { seq 0 $(($1 - 1)) | awk '{ print ($1 * 7919 + 13) % 262144 }'; }

set_sched "$d" fwdsched
set_ring 4096

# 1. Bad control writes: refused, and nothing cleared.
read4k "$d" 1
before=$(hist_lines | wc -l)
[ "$before" -ge 1 ] || fail "no record after a read"
for bad in clea clearx "clear clear" " clear" 1 reset; do
	write_expect_einval "$ctl" "$bad"
done
[ "$(hist_lines | wc -l)" -eq "$before" ] ||
	fail "a refused write changed the history ($before -> $(hist_lines | wc -l) records)"
echo clear > "$ctl"
[ "$(hist_lines | wc -l)" -eq 0 ] || fail "history not empty after clear"
hist_header | grep -q '^# ' || fail "no '#' header line: $(hist_header)"

# 2. N direct reads against blktrace.
blocks "$N" > "$FWD_OUT/blocks"
blk_start "$d" reads
echo clear > "$ctl"
reads "$d" < "$FWD_OUT/blocks"
cp "$hist" "$FWD_OUT/history.reads"
blk_stop
blk_events reads | awk '$1 == "D" && $5 ~ /R/ { print $2, $3 }' > "$FWD_OUT/blk.D"
grep -v '^#' "$FWD_OUT/history.reads" | sort -n -k1,1 > "$FWD_OUT/hist.sorted"
awk '$3 == "R" { print $4, $5 }' "$FWD_OUT/hist.sorted" > "$FWD_OUT/hist.R"
nr=$(wc -l < "$FWD_OUT/hist.R")
diag "$N reads: $nr R records, $(wc -l < "$FWD_OUT/blk.D") blktrace D reads, $(grep -vc ' R ' "$FWD_OUT/hist.sorted") other records"
[ "$nr" -eq "$N" ] || fail "expected $N read records, got $nr"
awk '$2 != 8 { exit 1 }' "$FWD_OUT/hist.R" || fail "a read record is not 8 sectors"
cmp -s "$FWD_OUT/hist.R" "$FWD_OUT/blk.D" ||
	fail "read records differ from blktrace D: $(diff "$FWD_OUT/hist.R" "$FWD_OUT/blk.D" | head -n 5)"
awk '{ print $1 * 8, 8 }' "$FWD_OUT/blocks" | cmp -s - "$FWD_OUT/hist.R" ||
	fail "read records are not the sectors read"
awk 'NF != 7 || $2 < $1 || $1 <= 0 || ($3 == "R" && $6 != 0) { print; exit 1 }' \
	"$FWD_OUT/hist.sorted" > "$FWD_OUT/bad" ||
	fail "malformed, failed or done-before-issue record: $(cat "$FWD_OUT/bad")"

# 3. A ring smaller than the run keeps exactly the newest records.
M=$((SMALL * 5 / 2))
set_ring "$SMALL"
seq 0 $((M - 1)) | awk '{ print 300000 + $1 * 11 }' > "$FWD_OUT/blocks.small"
reads "$d" < "$FWD_OUT/blocks.small"
cp "$hist" "$FWD_OUT/history.small"
kept=$(grep -vc '^#' "$FWD_OUT/history.small")
recs=$(hdr_field records "$FWD_OUT/history.small")
over=$(hdr_field overwritten "$FWD_OUT/history.small")
diag "ring $SMALL after $M reads: $kept lines, header records=$recs overwritten=$over"
{ [ "$kept" -eq "$SMALL" ] && [ "$recs" = "$SMALL" ]; } ||
	fail "ring of $SMALL holds $kept lines (header records=$recs)"
[ "$((recs + over))" -ge "$M" ] || fail "records+overwritten $((recs + over)) < $M"
grep -v '^#' "$FWD_OUT/history.small" | sort -n -k1,1 |
	awk '$3 == "R" { print $4 }' > "$FWD_OUT/small.R"
k=$(wc -l < "$FWD_OUT/small.R")
[ "$k" -ge 1 ] || fail "no read record left in the small ring"
tail -n "$k" "$FWD_OUT/blocks.small" | awk '{ print $1 * 8 }' |
	cmp -s - "$FWD_OUT/small.R" ||
	fail "the small ring does not hold the newest $k reads in order"

# 4. Reading and clearing while recording, with the small ring wrapping:
# 150 reads of the history during direct reads, a clear every tenth.
seq 400 | awk '{ print $1 * 3 }' > "$FWD_OUT/blocks.busy"
"${direct_reads[@]}" --loop "/dev/$d" < "$FWD_OUT/blocks.busy" &
io=$!
wait_completed "$d" 20
"$FWD_PY" -S - "$hist" "$ctl" > "$FWD_OUT/concurrent" 2>&1 <<'PY' ||
import re, sys
hist, ctl = sys.argv[1:]
line = re.compile(r"^\d+ \d+ [RWO] \S+ \S+ \S+ \S+$")
seen = 0
for i in range(1, 151):
    with open(hist) as f:
        text = f.read()
    rows = text.splitlines()
    if not rows or not rows[0].startswith("# "):
        sys.exit("read %d: header %r" % (i, rows[:1]))
    for r in rows[1:]:
        f = r.split()
        if not line.match(r) or int(f[1]) < int(f[0]):
            sys.exit("read %d: malformed record %r" % (i, r))
    seen += len(rows) - 1
    if i % 10 == 0:
        with open(ctl, "w") as f:
            f.write("clear")
if not seen:
    sys.exit("150 reads of the history saw no record: no read overlapped")
print("150 reads of the history during I/O, %d records seen" % seen)
PY
	fail "a history read during I/O was malformed: $(tail -n 1 "$FWD_OUT/concurrent")"
kill -TERM "$io"
wait "$io" || fail "reads failed while the history was read"
diag "$(cat "$FWD_OUT/concurrent")"

if [ "$form" = module ]; then
	# 5. Unload during I/O, then the MMC stack going and coming under it.
	# The module's probes come and go while the tracepoints fire, but
	# the tracepoints stay enabled: ftrace's own mmc events hold them
	# from before the I/O to after it.  Otherwise the first probe and
	# the last switch each tracepoint's static key, which patches
	# mmc_request_done() with int3 while the other vCPU runs it from the
	# completion interrupt, and under TCG a vCPU can still execute that
	# int3 after the patch completed (an "Oops: int3" in
	# mmc_request_done, seen once on 6.12; the kernel's race with QEMU,
	# not the module's).
	ev=$FWD_TRACEFS/events/mmc
	keys=()
	tracefs_ready
	for e in mmc_request_start mmc_request_done; do
		[ -e "$ev/$e/enable" ] || continue
		echo 1 > "$ev/$e/enable" || fail "cannot enable the event mmc:$e"
		keys+=("$ev/$e/enable")
	done
	diag "tracepoints held on by ${#keys[@]} ftrace events across the unloads"
	seq 300 | awk '{ print $1 * 5 }' > "$FWD_OUT/blocks.unload"
	"${direct_reads[@]}" --loop "/dev/$d" < "$FWD_OUT/blocks.unload" &
	io=$!
	wait_completed "$d" 20
	rmmod mmc_history || fail "rmmod mmc_history during I/O failed"
	insmod "$ko" || fail "insmod after rmmod failed"
	rmmod mmc_history || fail "second rmmod during I/O failed"
	wait_completed "$d" 20
	kill -TERM "$io"
	wait "$io" || fail "reads failed across rmmod mmc_history"
	for e in "${keys[@]}"; do echo 0 > "$e"; done
	echo > "$FWD_TRACEFS/trace"

	load_module ring_size=256
	wait_hist
	"$swap" stock > "$FWD_OUT/swap.log" 2>&1 ||
		fail "MMC stack reload under mmc_history failed: $(cat "$FWD_OUT/swap.log")"
	read4k "$d" 77
	grep -q "^[0-9]* [0-9]* R 616 8 " "$hist" ||
		fail "no record of a read after mmc_core came back"

	# Loaded before mmc_core.
	rmmod mmc_history
	for m in mmc_block sdhci_pci sdhci_acpi sdhci_uhs2 sdhci cqhci mmc_core; do
		[ -d "/sys/module/$m" ] && { rmmod "$m" || fail "rmmod $m failed"; }
	done
	load_module ring_size=256
	modprobe sdhci_pci || fail "modprobe sdhci_pci failed"
	modprobe mmc_block || fail "modprobe mmc_block failed"
	for _ in $(seq 200); do [ -b "/dev/$d" ] && break; sleep 0.1; done
	[ -b "/dev/$d" ] || fail "$d did not come back"
	udevadm settle 2>/dev/null
	wait_hist
	read4k "$d" 99
	grep -q "^[0-9]* [0-9]* R 792 8 " "$hist" ||
		fail "no record of a read with mmc_history loaded before mmc_core"
fi

restore
diag "history checks passed ($form form)"
exit 0
