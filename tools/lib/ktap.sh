# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# KTAP for the scripts that print their own results: the host tests
# (selftests/fwdsched/host/), tools/check-pkg and its guest half, and the
# totals of tools/check.  (The selftests in the guest print theirs
# through selftests/fwdsched/run_tests.sh.)  The caller prints the
# "TAP version 13" and plan lines itself.
#
#   ok <name>, not_ok <name>, skip <name> <why>
#                       one result; KTAP_N counts them, KTAP_FAILED the
#                       failed ones
#   diag <text...>      the text, each line as a KTAP comment
#   note                standard input, each line as a KTAP comment
#   check <name> <command...>
#                       ok when the command succeeds, its output shown as
#                       it comes
#   result <name> <command...>
#                       the same, its output kept, and shown as comments
#                       only when it fails
#   ktap_count <prefix> <file>
#                       add a KTAP file's top-level results to KTAP_PASS,
#                       KTAP_FAIL and KTAP_SKIP and print them on one
#                       line; a file without a plan and without a failure
#                       counts one failure (the stage died early)

KTAP_N=0 KTAP_FAILED=0
KTAP_PASS=0 KTAP_FAIL=0 KTAP_SKIP=0

ok() { KTAP_N=$((KTAP_N + 1)); echo "ok $KTAP_N $1"; }
not_ok() {
	KTAP_N=$((KTAP_N + 1)) KTAP_FAILED=$((KTAP_FAILED + 1))
	echo "not ok $KTAP_N $1"
}
skip() { KTAP_N=$((KTAP_N + 1)); echo "ok $KTAP_N $1 # SKIP $2"; }
diag() { local l; while IFS= read -r l; do echo "# $l"; done <<< "$*"; }
note() { sed 's/^/# /'; }

check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

result() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$name"
	else
		[ -z "$out" ] || diag "$out"
		not_ok "$name"
	fi
}

ktap_count() {
	local p f s
	p=$(grep -cE '^ok [0-9]+ ' "$2")
	s=$(grep -cE '^ok [0-9]+ .*# SKIP' "$2")
	f=$(grep -cE '^not ok [0-9]+ ' "$2")
	grep -qE '^1\.\.[0-9]+' "$2" || [ "$f" -gt 0 ] || f=1
	KTAP_PASS=$((KTAP_PASS + p - s)) KTAP_FAIL=$((KTAP_FAIL + f))
	KTAP_SKIP=$((KTAP_SKIP + s))
	echo "$1: $(basename "$2" .ktap): $((p - s)) passed, $f failed, $s skipped"
}
