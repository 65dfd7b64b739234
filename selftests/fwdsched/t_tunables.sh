#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc ufs
#
# Every tunable reads its default, accepts values at both ends of its
# range, and refuses each kind of bad input with EINVAL, keeping its
# value.  A tunable missing from the table below fails the test, so a
# new one cannot go untested.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
reset_tunables "$d"
dir=$(iosched "$d")
nr=$(cat "/sys/block/$d/queue/nr_requests")

# name default min max
table="read_expire 500 1 600000
write_expire 5000 1 600000
writes_starved 2 0 64
fifo_batch 16 1 1024
front_merges 1 0 1
async_depth - 1 $nr"
[ -e "$dir/fair_slack" ] && table="$table
fair_slack ${FWD_FAIR_DEFAULT:-8} 0 4096"
# dispatch_depth defaults to 2 on an MMC card without command queueing
# (QEMU's SD card), to 0 (no limit) everywhere else.
# sync_depth defaults to 1 where dispatch_depth is 0 and the device has
# at most 32 tags (UFS), to 0 everywhere else.
depth=0 sync_depth=1
[ "$(disk_kind "$d")" = mmc ] && depth=2 sync_depth=0
table="$table
dispatch_depth $depth 0 4096
sync_depth $sync_depth 0 4096
anticipate_us 4000 0 100000
foreground_us 50000 0 100000
foreground_idle 0 0 1"
[ -e "$dir/prio_aging_expire" ] && table="$table
prio_aging_expire - 1 600000"

for f in "$dir"/*; do
	n=$(basename "$f")
	grep -q "^$n " <<< "$table" || fail "tunable $n is not covered by this test"
done

bad_common=("abc" "-1" $'\n' "1.5" "12x" "0x10" "99999999999999999999" "4294967296")
while read -r name def min max; do
	f=$dir/$name
	[ -e "$f" ] || fail "missing tunable $name"
	cur=$(cat "$f")
	[ "$def" = - ] || [ "$cur" = "$def" ] ||
		fail "$name default is $cur, expected $def"
	tunable_set "$d" "$name" "$min"
	tunable_set "$d" "$name" "$max"
	keep=$(( (min + max) / 2 ))
	tunable_set "$d" "$name" "$keep"
	bad=("${bad_common[@]}" "$((max + 1))")
	[ "$min" -gt 0 ] && bad+=("$((min - 1))")
	for b in "${bad[@]}"; do
		write_expect_einval "$f" "$b"
		[ "$(cat "$f")" = "$keep" ] ||
			fail "$name changed to $(cat "$f") after bad write '$b'"
	done
	diag "$name: default $cur, range $min..$max, ${#bad[@]} bad inputs refused"
done <<< "$table"

# Since 7.0 async_depth is the queue's own: fwdsched uses the value the
# block layer holds when it is selected, and both files are one value.
qa=/sys/block/$d/queue/async_depth
if [ -e "$qa" ]; then
	fresh_sched "$d" mq-deadline
	echo 5 > "$qa" || fail "cannot write 5 to $qa under mq-deadline"
	set_sched "$d" fwdsched
	[ "$(cat "$qa")" = 5 ] ||
		fail "selecting fwdsched changed queue/async_depth from 5 to $(cat "$qa")"
	[ "$(cat "$dir/async_depth")" = 5 ] ||
		fail "iosched/async_depth reads $(cat "$dir/async_depth"), queue/async_depth 5"
	tunable_set "$d" async_depth 7
	[ "$(cat "$qa")" = 7 ] || fail "iosched/async_depth 7 left queue/async_depth at $(cat "$qa")"
	diag "async_depth: the queue's value is kept when fwdsched is selected"
fi

reset_tunables "$d"
exit 0
