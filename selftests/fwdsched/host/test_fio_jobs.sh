#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side checks of the benchmark inputs, printed as KTAP:
#  - every fio-jobs/*.fio parses (fio --parse-only, with the variables of
#    fio-jobs/defaults.env), and a deliberately broken job file does not;
#  - the job files keep their conventions (header, no filename= so that
#    --filename works, timed jobs use ${FWD_RUNTIME}, every ${VAR} has a
#    default in defaults.env);
#  - every job runs to completion on a sparse scratch file (FWD_RUNTIME=1),
#    with the paper's I/O counts for the count-based experiments;
#  - tools/analysis/gen-iolog.py regenerates fio-jobs/fig2-shuffle.iolog byte for
#    byte, the log is a permutation of the 1,024 block starts, and bad
#    arguments are refused without touching the output;
#  - the flash card's unit tests (tools/flashcard/test_flashcard.py) pass.
#
# Usage: selftests/fwdsched/host/test_fio_jobs.sh   (no root needed)
# Exit 0 when every test passed or was skipped, 1 otherwise.
# Check functions are called through result(), and ${...} in single quotes
# is meant for fio, awk or an inner bash:
# shellcheck disable=SC2317,SC2016
set -u

# shellcheck source=tools/lib/host.sh
. "$(dirname "$0")/../../../tools/lib/host.sh"
ROOT=$FWD_ROOT
JOBS=$ROOT/fio-jobs
PY=/usr/bin/python3
cd "$ROOT" || exit 1

TMP=$(mktemp -d "${TMPDIR:-/tmp}/test_fio_jobs.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

mapfile -t files < <(cd "$JOBS" && ls -- *.fio)

# shellcheck source=tools/lib/ktap.sh
. "$FWD_ROOT/tools/lib/ktap.sh"

# the variables job files may use, with their defaults
load_defaults() {
	local line
	while IFS= read -r line; do
		case $line in '#'* | '') continue ;; esac
		# shellcheck disable=SC2163
		export "$line"
	done < "$JOBS/defaults.env"
}

have_fio=y
command -v fio > /dev/null || have_fio=

echo "TAP version 13"
# per job file: parse + run; then 10 single tests
echo "1..$((2 * ${#files[@]} + 10))"
[ ${#files[@]} -gt 0 ] || { not_ok "fio-jobs has job files"; exit 1; }

load_defaults

# 1. every job file parses
for f in "${files[@]}"; do
	if [ -z "$have_fio" ]; then
		skip "parse $f" "fio not installed"
		continue
	fi
	result "parse $f" fio --parse-only "$JOBS/$f"
done

# 2. the parse check can fail: a misspelled option and an unset variable
bad_parse() {
	printf '[bad]\nrw=randread\nbs=4k\nsize=1m\nruntim=5\n' > "$TMP/bad1.fio"
	printf '[bad]\nrw=randread\nsize=1m\nruntime=${FWD_UNSET_VAR}\n' \
		> "$TMP/bad2.fio"
	! fio --parse-only "$TMP/bad1.fio" > /dev/null 2>&1 || {
		echo "a misspelled option parsed"; return 1; }
	unset FWD_UNSET_VAR
	! fio --parse-only "$TMP/bad2.fio" > /dev/null 2>&1 || {
		echo "an unset variable parsed"; return 1; }
	# and a copy of a real timed job without FWD_RUNTIME
	! env -u FWD_RUNTIME fio --parse-only \
		"$JOBS/fig3-r16-4k-direct-128m.fio" > /dev/null 2>&1 || {
		echo "fig3 parsed without FWD_RUNTIME"; return 1; }
}
if [ -n "$have_fio" ]; then
	result "broken job files are rejected" bad_parse
else
	skip "broken job files are rejected" "fio not installed"
fi

# 3. conventions of every job file
conventions() {
	local f bad=0 v
	for f in "${files[@]}"; do
		grep -q '^# SPDX-License-Identifier: GPL-2.0' "$JOBS/$f" ||
			{ echo "$f: no SPDX line"; bad=1; }
		grep -Eq '^# (Paper Fig [0-9]|Beyond the papers)' "$JOBS/$f" ||
			{ echo "$f: header names no paper figure"; bad=1; }
		grep -q "fio fio-jobs/$f" "$JOBS/$f" ||
			{ echo "$f: header shows no usage line"; bad=1; }
		# filename= in a job file would override --filename
		! grep -Eq '^[[:space:]]*(filename|directory)[[:space:]]*=' \
			"$JOBS/$f" || { echo "$f: sets filename/directory"; bad=1; }
		if grep -q '^time_based' "$JOBS/$f"; then
			grep -q '^runtime=\${FWD_RUNTIME}$' "$JOBS/$f" ||
				{ echo "$f: timed without runtime=\${FWD_RUNTIME}"; bad=1; }
			grep -q 'FWD_RUNTIME' <(sed -n '1,/^\[/p' "$JOBS/$f") ||
				{ echo "$f: header does not mention FWD_RUNTIME"; bad=1; }
		fi
		for v in $(grep -o '\${[A-Za-z_]*}' "$JOBS/$f" | tr -d '${}' | sort -u); do
			grep -q "^$v=" "$JOBS/defaults.env" ||
				{ echo "$f: \${$v} has no default in defaults.env"; bad=1; }
		done
		if grep -Eq '^rw=rand' "$JOBS/$f"; then
			if ! grep -q '^randrepeat=1$' "$JOBS/$f" ||
				! grep -q '^randseed=[0-9]' "$JOBS/$f"; then
				echo "$f: random without randrepeat=1/randseed"
				bad=1
			fi
		fi
		if grep -Eq '^rw=(rand)?(write|rw)' "$JOBS/$f"; then
			grep -q 'DESTRUCTIVE' "$JOBS/$f" ||
				{ echo "$f: writes but has no DESTRUCTIVE warning"; bad=1; }
		fi
	done
	return "$bad"
}
result "job file conventions" conventions

# 4. every job runs on a sparse scratch file; count-based jobs issue the
#    number of reads the paper's experiment defines
run_job() {
	local f=$1 dev=$TMP/dev.img
	case $f in *-ext4.fio) dev=$TMP/ext4-file.dat ;; esac
	FWD_RUNTIME=1 fio "$JOBS/$f" --filename="$dev" --replay_redirect="$dev" \
		--output-format=json --output="$TMP/out.json" > "$TMP/run.log" 2>&1 ||
		{ cat "$TMP/run.log"; return 1; }
	"$PY" - "$f" "$TMP/out.json" <<'PYEOF'
import json, sys
name, path = sys.argv[1], sys.argv[2]
jobs = json.load(open(path))["jobs"]
expect = {  # reads per experiment job, from the paper's definitions
    "fig1-seq-vs-rand-4k": {"seq": 1000, "rand": 1000},
    "fig2-sort": {"sort": 1024},
    "fig2-shuffle": {"shuffle": 1024},
    "fig2-rand": {"rand": 1024},
    "fig7-r16x10000-1byte-1g": {"r16x10000-1byte": 16 * 10000},
    "startup-foreground": {"foreground": 200},
}.get(name[:-4].replace("-ext4", ""), {})
bad = [j["jobname"] for j in jobs if j["error"]]
if bad:
    sys.exit("jobs with errors: %s" % bad)
done = {}
for j in jobs:
    done[j["jobname"]] = done.get(j["jobname"], 0) + j["read"]["total_ios"]
    if j["jobname"] != "layout" and not (j["read"]["total_ios"] or
                                         j["write"]["total_ios"]):
        sys.exit("job %s did no I/O" % j["jobname"])
for job, n in expect.items():
    if done.get(job) != n:
        sys.exit("%s: %s reads, expected %d" % (job, done.get(job), n))
PYEOF
}
if [ -n "$have_fio" ]; then
	# sparse: the jobs need 2.25 GiB of device, the ext4 variants a 1 GiB
	# file (present at full size, so their layout job writes nothing)
	truncate -s 4G "$TMP/dev.img"
	truncate -s 1G "$TMP/ext4-file.dat"
fi
for f in "${files[@]}"; do
	if [ -z "$have_fio" ]; then
		skip "run $f" "fio not installed"
		continue
	fi
	result "run $f" run_job "$f"
done

# 5. gen-iolog reproduces the shipped iolog byte for byte
result "gen-iolog regenerates fig2-shuffle.iolog identically" \
	bash -c '"$0" tools/analysis/gen-iolog.py -o "$1/regen.iolog" &&
		cmp "$1/regen.iolog" fio-jobs/fig2-shuffle.iolog' "$PY" "$TMP"

# 6. ... and the check can fail: another seed gives another file
result "gen-iolog with another seed differs" \
	bash -c '"$0" tools/analysis/gen-iolog.py --seed 1 -o "$1/seed1.iolog" &&
		! cmp -s "$1/seed1.iolog" fio-jobs/fig2-shuffle.iolog' "$PY" "$TMP"

# 7. the shipped log: 1,024 one-byte reads, each 1 MiB block start once,
#    not in ascending order
iolog_shape() {
	"$PY" - fio-jobs/fig2-shuffle.iolog <<'PYEOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
assert lines[0] == "fio version 2 iolog", lines[0]
dev = lines[1].split()[0]
assert lines[1:3] == [dev + " add", dev + " open"], lines[1:3]
assert lines[-1] == dev + " close", lines[-1]
reads = [l.split() for l in lines[3:-1]]
assert all(r[0] == dev and r[1] == "read" and r[3] == "1" for r in reads)
offs = [int(r[2]) for r in reads]
assert sorted(offs) == [k << 20 for k in range(1024)], "not a permutation"
assert offs != sorted(offs), "not shuffled"
PYEOF
}
result "fig2-shuffle.iolog is a shuffle of the 1,024 block starts" iolog_shape

# 8. bad arguments are refused and leave the output alone
gen_bad() {
	local a
	cp fio-jobs/fig2-shuffle.iolog "$TMP/keep.iolog"
	for a in "--count 0" "--stride x" "--length 4096 --stride 512" \
		"--seed -1" "--order random"; do
		# shellcheck disable=SC2086
		if "$PY" tools/analysis/gen-iolog.py $a -o "$TMP/keep.iolog" 2> "$TMP/err"; then
			echo "gen-iolog accepted '$a'"
			return 1
		fi
		grep -q '^gen-iolog: error: ' "$TMP/err" ||
			{ echo "no clear message for '$a'"; return 1; }
	done
	cmp -s "$TMP/keep.iolog" fio-jobs/fig2-shuffle.iolog ||
		{ echo "output changed"; return 1; }
}
result "gen-iolog refuses bad arguments" gen_bad

# 9. sort order is ascending (the sort job's order as an iolog)
result "gen-iolog --order sort is ascending" \
	bash -c '"$0" tools/analysis/gen-iolog.py --order sort | awk '\''
		$2 == "read" { if ($3 != n * 1048576) exit 1; n++ }
		END { exit n != 1024 }'\''' "$PY"

# 10. the shuffled replay reads the log's offsets in the log's order
replay_order() {
	local dev=$TMP/dev.img
	fio "$JOBS/fig2-shuffle.fio" --replay_redirect="$dev" --debug=io \
		2>&1 | sed -n 's/.*prep: .*off=\(0x[0-9a-f]*\),len=0x1,ddir=0.*/\1/p' |
		while read -r o; do echo $((o)); done > "$TMP/replayed"
	awk '$2 == "read" { print $3 }' fio-jobs/fig2-shuffle.iolog > "$TMP/logged"
	cmp -s "$TMP/replayed" "$TMP/logged" ||
		{ echo "replayed $(wc -l < "$TMP/replayed") reads, not the log's order"; return 1; }
}
if [ -n "$have_fio" ]; then
	result "fig2-shuffle replays the iolog in order" replay_order
else
	skip "fig2-shuffle replays the iolog in order" "fio not installed"
fi

# 11. the fig2-sort job reads the block starts in ascending order
sort_order() {
	local n=0 o
	fio "$JOBS/fig2-sort.fio" --filename="$TMP/dev.img" --debug=io 2>&1 |
		sed -n 's/.*prep: .*off=\(0x[0-9a-f]*\),len=0x1,ddir=0.*/\1/p' \
		> "$TMP/sorted"
	while read -r o; do
		[ $((o)) -eq $((n << 20)) ] ||
			{ echo "read $n at offset $((o))"; return 1; }
		n=$((n + 1))
	done < "$TMP/sorted"
	[ "$n" -eq 1024 ] || { echo "$n reads, expected 1024"; return 1; }
}
if [ -n "$have_fio" ]; then
	result "fig2-sort reads the block starts in ascending order" sort_order
else
	skip "fig2-sort reads the block starts in ascending order" "fio not installed"
fi

# 12. the flash card's unit tests (cost model; plugin when nbdkit is there)
result "flashcard unit tests" "$PY" tools/flashcard/test_flashcard.py

[ "$KTAP_FAILED" -eq 0 ]
