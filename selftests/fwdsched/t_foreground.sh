#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc ufs
#
# A foreground reader never waits behind writeback.  One process reads
# 4 KiB at random, one read at a time, thinking 10 ms after each, while
# another writes through the page cache with a phone's small dirty
# limits, so that the flushers' asynchronous writes always wait
# (fio-jobs/selftest/fg-writer.fio).  The reader's think time is at least
# 10 ms, so its window (twice that plus 250 us) is above 20 ms, and every
# gap of at most 15 ms between the completion of one of its reads and the
# insertion of its next lies inside the window, whatever the guest's
# speed.  From blktrace (tools/analysis/fwdlib.py fg_isolation):
#  1. with write_expire out of the way, on the SD card (dispatch_depth 2):
#     in no such gap is an asynchronous write dispatched, asynchronous
#     writes waited throughout many of them (or nothing was judged), and
#     the device waited for the reader's next read (anticipations).  On
#     UFS (dispatch_depth 0) nothing idles the device: no anticipation, and
#     from the reader's fourth read on at most one asynchronous write is on
#     the device at a time, writes do go (at least 10 while the reader
#     runs), and holds for the foreground happened.  With
#     foreground_idle 1 the UFS disk is kept idle for the reader as the
#     SD card is: no asynchronous write in any such gap, and
#     anticipations;
#  2. on the SD card, with write_expire 1000 ms, writes are not starved:
#     expired writes are dispatched while the reader runs (on UFS none
#     waits that long).  The longest wait and the most reads in a row
#     past a write's deadline are shown, not judged: the guests' jiffies
#     run up to a third slow under load, see vm-run;
#  3. switching to mq-deadline while writes are held back (debugfs
#     "queued" shows writes waiting and a hold) completes; on UFS with
#     foreground_idle 1, so that anticipations are among the holds the
#     switch meets.
# mq-deadline dispatches a write in nearly every such gap on the SD card,
# and keeps up to 31 on the UFS disk.  The guests run without the local
# APIC timer (tools/runner/vm-run): with it, QEMU 7.2 lost every timer
# interrupt for 15-30 s while the card idled here, under BFQ too.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
kind=$(disk_kind "$d")
gap_ms=15
# fg_isolation reads insertions, dispatches, completions and requeues
# alone (tools/lib/guest.sh blktrace_stop).
BLK_KEEP=IDCR

declare -A vm
for k in dirty_background_bytes dirty_bytes dirty_background_ratio dirty_ratio; do
	vm[$k]=$(cat "/proc/sys/vm/$k")
done
restore_vm() {
	local k
	for k in dirty_background_ratio dirty_ratio dirty_background_bytes dirty_bytes; do
		[ "${vm[$k]}" = 0 ] || echo "${vm[$k]}" > "/proc/sys/vm/$k"
	done
	fwd_test_exit
}
trap restore_vm EXIT
echo $((4 << 20)) > /proc/sys/vm/dirty_background_bytes
echo $((16 << 20)) > /proc/sys/vm/dirty_bytes

# run <name> <seconds>: the reader beside the writer, traced; the
# analysis in FG (reads judged contested violations writes
# max_async_inflight max_reads_expired max_write_wait_ms).
run() {
	blk_start "$d" "$1"
	FWD_RUNTIME=$2 FWD_SIZE=64m FWD_SYNC_OFFSET=1g \
		run_fio "$d" selftest/fg-writer.fio "$FWD_OUT/$1"
	blk_stop
	sync
	fwdlib fg-isolation "$(blk_file "$1")" "$gap_ms" \
		"$(( $(cat "$(iosched "$d")/write_expire") + 300 ))"
	read -r -a FG <<< "$FWDLIB_OUT"
	diag "$1: ${FG[0]} reads, ${FG[1]} gaps judged, ${FG[2]} with a write waiting," \
		"${FG[3]} with a write dispatched; ${FG[4]} writes dispatched," \
		"at most ${FG[5]} in flight, at most ${FG[6]} reads in a row past" \
		"a write's deadline, longest write wait ${FG[7]} ms"
}

# idled <what>: the device waited for the reader (FG and antic of a
# run): no asynchronous write in any gap judged (at least 50), writes
# waiting through at least 20, and anticipations; <what> prefixes the
# failures.
idled() {
	[ "${FG[1]}" -ge 50 ] || fail "$1only ${FG[1]} gaps of the reader judged: too few"
	[ "${FG[3]}" -eq 0 ] ||
		fail "${1}an asynchronous write was dispatched in ${FG[3]} of the reader's gaps"
	[ "${FG[2]}" -ge 20 ] ||
		fail "${1}writes waited in only ${FG[2]} gaps: the isolation was not exercised"
	[ "$antic" -gt 0 ] || fail "${1}the reader's next read was never anticipated"
}

# 1. Isolation.
reset_tunables "$d"
tunable_set "$d" write_expire 600000
s0=$(cat "$(schedfs "$d")/stats")
run isolation 4
s1=$(cat "$(schedfs "$d")/stats")
antic=$(stat_delta "$s0" "$s1" antic_holds)
fgh=$(stat_delta "$s0" "$s1" fg_holds)
diag "isolation: fg_holds $fgh, antic_holds $antic, antic_timeouts $(stat_delta "$s0" "$s1" antic_timeouts)"
if [ "$kind" = mmc ]; then
	idled ""
else
	[ "${FG[1]}" -ge 50 ] || fail "only ${FG[1]} gaps of the reader judged: too few"
	[ "$antic" -eq 0 ] || fail "$antic anticipations idled the UFS disk"
	[ "$fgh" -gt 0 ] || fail "no hold for the foreground: the isolation was not exercised"
	[ "${FG[5]}" -le 1 ] ||
		fail "${FG[5]} asynchronous writes were in flight at once beside the reader"
	[ "${FG[4]}" -ge 10 ] || fail "only ${FG[4]} writes dispatched while the reader ran"

	tunable_set "$d" foreground_idle 1
	s0=$(cat "$(schedfs "$d")/stats")
	run isolation-idle 4
	antic=$(stat_delta "$s0" "$(cat "$(schedfs "$d")/stats")" antic_holds)
	diag "isolation-idle: antic_holds $antic"
	idled "foreground_idle 1: "
	# Kept for 3.
fi

# 2. write_expire bounds the wait of every write (not run on UFS, where
# no write waits that long).
if [ "$kind" = mmc ]; then
	tunable_set "$d" write_expire 1000
	run expiry 6
	[ "${FG[4]}" -ge 10 ] || fail "only ${FG[4]} writes dispatched while the reader ran"
	[ "$(stat_delta "$s1" "$(cat "$(schedfs "$d")/stats")" expired)" -gt 0 ] ||
		fail "no write expired: write_expire was not exercised"
fi

# 3. A switch while writes are held back for the reader: as soon as
# "queued" shows writes waiting and a hold, once the reader's holds
# (fg_holds, antic_holds) began; checked every 50 ms while fio runs.
tunable_set "$d" write_expire 600000
fgholds() { echo $(( $(stat_get "$d" fg_holds) + $(stat_get "$d" antic_holds) )); }
sfs=$(schedfs "$d")
h0=$(fgholds)
FWD_RUNTIME=4 FWD_SIZE=64m FWD_SYNC_OFFSET=1g \
	run_fio "$d" selftest/fg-writer.fio "$FWD_OUT/switch" &
fio_pid=$!
held=
while kill -0 "$fio_pid" 2>/dev/null; do
	# reads R writes W head H inflight I hold S
	read -r _ _ _ w _ _ _ _ _ h < "$sfs/queued"
	if [ "${w:-0}" -gt 0 ] && [ "$h" != none ] && [ "$(fgholds)" -gt "$h0" ]; then
		held=1
		break
	fi
	sleep 0.05
done
[ -n "$held" ] || fail "no write was held back for the reader while fio ran: the switch was not exercised"
switch_to "$d" mq-deadline
wait "$fio_pid" || fail "fio failed beside the switch (see $FWD_OUT/switch.log)"
reset_tunables "$d"
exit 0
