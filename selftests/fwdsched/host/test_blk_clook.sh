#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# blk_clook (selftests/fwdsched/lib.sh) on small traces with known
# answers: the sweep's own order passes, a skipped or reordered request
# is caught, and the exemptions (late insertion, expiry, front merge,
# requeue) hold.  Prints KTAP.
top=$(cd "$(dirname "$0")/../../.." && pwd)
FWD_OUT=$(mktemp -d)
trap 'rm -rf "$FWD_OUT"' EXIT
# shellcheck source=../lib.sh
. "$top/selftests/fwdsched/lib.sh"
mkdir -p "$FWD_OUT/blk"
n=0 failed=0

# case <name> <expected "dispatches choices violations swaps"> <events...>
# with events "action sector nsectors time rwbs", written as blkparse
# text in fwdlib's format.
case_() {
	local name=$1 want=$2 got
	shift 2
	printf '%s\n' "$@" |
		awk '{ print "8,0 0", $1, $5, $2, $3, $4, 100, "fio" }' > "$FWD_OUT/blk/t.txt"
	got=$(blk_clook t 500 2>/dev/null)
	n=$((n + 1))
	if [ "$got" = "$want" ]; then
		echo "ok $n clook.$name"
	else
		echo "# $name: expected '$want', got '$got'"
		echo "not ok $n clook.$name"
		failed=$((failed + 1))
	fi
}

echo "TAP version 13"
echo "1..11"
# Waiting 300, 200, 100 with the sweep at 0: 100, 200, 300 is the sweep.
# (100 is inserted last, so the others certainly waited when it was
# picked.)
case_ sweep "3 2 0 0" \
	"I 300 8 0.001 R" "I 200 8 0.002 R" "I 100 8 0.003 R" \
	"D 100 8 0.010 R" "D 200 8 0.020 R" "D 300 8 0.030 R"
# 200 passed over, and served only after two others.
case_ skipped "4 3 1 0" \
	"I 400 8 0.001 R" "I 300 8 0.002 R" "I 200 8 0.003 R" "I 100 8 0.004 R" \
	"D 100 8 0.010 R" "D 300 8 0.020 R" "D 400 8 0.030 R" "D 200 8 0.040 R"
# 200 passed over and dispatched right next: two starts swapped.
case_ swap "3 2 0 1" \
	"I 300 8 0.001 R" "I 200 8 0.002 R" "I 100 8 0.003 R" \
	"D 100 8 0.010 R" "D 300 8 0.020 R" "D 200 8 0.030 R"
# At 308 nothing waits above: the wrap must take the lowest, 10.
case_ wrap "4 3 0 0" \
	"I 50 8 0.001 R" "I 150 8 0.002 R" "I 10 8 0.003 R" "I 300 8 0.004 R" \
	"D 300 8 0.010 R" "D 10 8 0.020 R" "D 50 8 0.030 R" "D 150 8 0.040 R"
case_ bad_wrap "4 3 1 0" \
	"I 50 8 0.001 R" "I 150 8 0.002 R" "I 10 8 0.003 R" "I 300 8 0.004 R" \
	"D 300 8 0.010 R" "D 50 8 0.020 R" "D 150 8 0.030 R" "D 10 8 0.040 R"
# 150 arrives after the latest insertion of what was dispatched so far,
# so it may have come after 200 was picked: no choice is judged.
case_ late_insert "3 0 0 0" \
	"I 100 8 0.001 R" "I 200 8 0.002 R" "D 100 8 0.010 R" \
	"I 150 8 0.011 R" "D 200 8 0.012 R" "D 150 8 0.020 R"
# 100 waited 597 ms (read_expire 500): going back to it is an expiry.
case_ expired "4 3 0 0" \
	"I 400 8 0.001 R" "I 300 8 0.002 R" "I 200 8 0.003 R" "I 100 8 0.004 R" \
	"D 200 8 0.010 R" "D 100 8 0.601 R" "D 300 8 0.610 R" "D 400 8 0.620 R"
# Only 296 ms: a violation (and 400 before 300 a swap).
case_ not_expired "4 3 1 1" \
	"I 400 8 0.001 R" "I 300 8 0.002 R" "I 200 8 0.003 R" "I 100 8 0.004 R" \
	"D 200 8 0.010 R" "D 100 8 0.300 R" "D 400 8 0.310 R" "D 300 8 0.320 R"
# A front merge moves the request at 208 down to 200.
case_ front_merge "2 1 0 0" \
	"I 400 8 0.001 R" "I 208 8 0.002 R" "F 200 8 0.003 R" \
	"D 200 16 0.010 R" "D 400 8 0.020 R"
# The merged request, now at 200, passed over by the sweep.
case_ front_merge_skipped "4 3 1 0" \
	"I 400 8 0.001 R" "I 208 8 0.002 R" "F 200 8 0.003 R" \
	"I 500 8 0.0035 R" "I 100 8 0.004 R" \
	"D 100 8 0.010 R" "D 400 8 0.020 R" "D 500 8 0.030 R" "D 200 16 0.040 R"
# 100 was requeued: it goes back at the head, behind the sweep.
case_ requeue "4 3 0 0" \
	"I 50 8 0.001 R" "I 200 8 0.002 R" "I 100 8 0.003 R" \
	"D 100 8 0.010 R" "R 100 8 0.011 R" "I 100 8 0.012 R" \
	"D 100 8 0.020 R" "D 200 8 0.030 R" "D 50 8 0.040 R"
[ "$failed" -eq 0 ]
