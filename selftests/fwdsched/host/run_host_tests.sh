#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The host stage of the tests: everything that needs no guest kernel.
# Runs each host/test_*.sh (KTAP producers; their results are numbered
# into this plan), every Python unit-test file (tools/**/test_*.py, one
# result each) and shellcheck over the shell scripts.  Prints KTAP.
set -u
# shellcheck source=tools/lib/host.sh
. "$(dirname "$0")/../../../tools/lib/host.sh"
cd "$FWD_ROOT" || exit 2
PY=/usr/bin/python3
lines=()
add() { lines+=("$1 $((${#lines[@]} + 1)) $2"); }

for t in selftests/fwdsched/host/test_*.sh; do
	[ -e "$t" ] || continue
	out=$(bash "$t" 2>&1)
	rc=$?
	found=
	while IFS= read -r l; do
		if [[ $l =~ ^(not\ ok|ok)\ [0-9]+\ (.*)$ ]]; then
			add "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
			found=y
		elif [[ $l == "#"* ]]; then
			lines+=("$l")
		fi
	done <<< "$out"
	[ -n "$found" ] || add "not ok" "$(basename "$t" .sh) # printed no results (exit $rc)"
done

while IFS= read -r t; do
	name=unit.$(basename "$t" .py)
	dir=$(dirname "$t")
	if out=$(cd "$dir" && $PY -m unittest -q "$(basename "$t" .py)" 2>&1); then
		add ok "$name # $(tail -n 3 <<< "$out" | grep -m1 -o 'Ran [0-9]* tests*')"
	else
		while IFS= read -r l; do lines+=("# $l"); done < <(tail -n 25 <<< "$out")
		add "not ok" "$name"
	fi
done < <(find tools -name 'test_*.py' | sort)

mapfile -t scripts < <(grep -rlE '^#!/bin/(ba)?sh' tools selftests .ci | sort)
if command -v shellcheck >/dev/null; then
	if out=$(shellcheck -S warning -x -e SC1091 "${scripts[@]}" 2>&1); then
		add ok "shellcheck # ${#scripts[@]} scripts"
	else
		while IFS= read -r l; do lines+=("# $l"); done < <(head -n 30 <<< "$out")
		add "not ok" shellcheck
	fi
fi

n=0 fail=0
for l in "${lines[@]}"; do
	case $l in
	"ok "*) n=$((n + 1)) ;;
	"not ok "*) n=$((n + 1)) fail=$((fail + 1)) ;;
	esac
done
echo "TAP version 13"
echo "1..$n"
i=0
for l in "${lines[@]}"; do
	if [[ $l =~ ^(not\ ok|ok)\ [0-9]+\ (.*)$ ]]; then
		i=$((i + 1))
		echo "${BASH_REMATCH[1]} $i ${BASH_REMATCH[2]}"
	else
		echo "$l"
	fi
done
echo "# Totals: pass:$((n - fail)) fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
