#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The documents point at things that exist (doccheck.py), printed as KTAP:
#  - every relative link of every *.md names an existing file, and its
#    anchor a heading there;
#  - every "make TARGET" in a *.md's code names a target of the Makefile;
#  - every path of the repository in the top README's code exists;
# and each check fails on a small made-up repository with one broken
# link, anchor, target or path, naming it.
#
# Usage: selftests/fwdsched/host/test_docs.sh   (no root needed)
# Exit 0 when every test passed, 1 otherwise.
set -u

# shellcheck source=tools/lib/host.sh
. "$(dirname "$0")/../../../tools/lib/host.sh"
CHECK=$FWD_ROOT/selftests/fwdsched/host/doccheck.py
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/test_docs.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

# shellcheck source=tools/lib/ktap.sh
. "$FWD_ROOT/tools/lib/ktap.sh"

# clean <check>: the repository passes it
clean() {
	local out
	if out=$("$PY" "$CHECK" "$FWD_ROOT" "$1" 2>&1); then
		ok "docs.$1"
	else
		diag "$out"
		not_ok "docs.$1"
	fi
}

# refused <check> <name> <expected text>: the made-up repository fails
# the check, naming the problem
refused() {
	local out rc
	out=$("$PY" "$CHECK" "$TMP/repo" "$1" 2>&1)
	rc=$?
	if [ "$rc" = 1 ] && grep -qF -- "$3" <<< "$out"; then
		ok "docs.$1.refuses-$2"
	else
		diag "exit $rc, expected 1 and \"$3\": $out"
		not_ok "docs.$1.refuses-$2"
	fi
}

mkdir -p "$TMP/repo/tools" "$TMP/repo/doc"
cat > "$TMP/repo/Makefile" <<'EOF'
all: build
check check-debug: deps
	true
EOF
cat > "$TMP/repo/doc/guide.rst" <<'EOF'
Tunables
========
EOF
touch "$TMP/repo/tools/run"
cat > "$TMP/repo/README.md" <<'EOF'
# Top

## Use it (`make check`)

[good](doc/guide.rst#tunables) [good too](#use-it-make-check)
[gone](doc/missing.md) [bad anchor](doc/guide.rst#nowhere)
`make check`, `make check-debug KVER=1`, `make nothing`, `[x](nope.md)`

```sh
tools/run --fast
tools/walk
```
EOF

echo "TAP version 13"
echo "1..8"
clean links
clean targets
clean paths
refused links missing-file "doc/missing.md: no such file"
refused links missing-heading "doc/guide.rst#nowhere: no heading #nowhere there"
out=$("$PY" "$CHECK" "$TMP/repo" links 2>&1)
if [ "$(wc -l <<< "$out")" = 2 ]; then
	ok "docs.links.accepts-good # the good links, and a link in code, pass"
else
	diag "$out"
	not_ok "docs.links.accepts-good"
fi
refused targets unknown "make nothing: no such target"
refused paths missing "tools/walk: no such path"
[ "$KTAP_FAILED" -eq 0 ]
