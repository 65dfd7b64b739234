#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/setup/private-headers, the one place the DKMS build, make install
# and the test bed find and check the kernel's private block headers, on
# small made-up kernels (headers laid out as Debian's, sources as a tree
# and as a tar.xz), printed as KTAP:
#  - a matching source is copied to DIR/block, from a tree or a tarball,
#    with the extra members asked for and nothing else of the tarball;
#  - the copy is reused while the source is the same file, made again
#    when it changes;
#  - no source at all, a source of another version, with another
#    include/linux/blkdev.h or without block/elevator.h, and a kernel
#    without headers, are refused
#    with exit status 1 and exactly one line naming the kernel, and leave
#    no DIR/block (a previous good copy goes too);
#  - -m runs make against the kernel with FWD_PRIV set, and never after a
#    refusal.
#
# Usage: selftests/fwdsched/host/test_private_headers.sh   (no root needed)
set -u

# shellcheck source=tools/lib/host.sh
. "$(dirname "$0")/../../../tools/lib/host.sh"
PH=$FWD_ROOT/tools/setup/private-headers
TMP=$(mktemp -d "${TMPDIR:-/tmp}/test_private_headers.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
REL=6.12.117+test-amd64

# shellcheck source=tools/lib/ktap.sh
. "$FWD_ROOT/tools/lib/ktap.sh"

# mkmakefile <file> <sublevel>
mkmakefile() {
	printf 'VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = %s\nEXTRAVERSION =\n' "$2" > "$1"
}
# The kernel's headers, as Debian lays them out: the flavour's directory
# includes the common one, which has the version and include/linux.
K=$TMP/headers
mkdir -p "$K/common/include/linux" "$K/amd64/include/generated"
mkmakefile "$K/common/Makefile" 117
echo "include $K/common/Makefile" > "$K/amd64/Makefile"
echo "struct request_queue { int a; };" > "$K/common/include/linux/blkdev.h"
echo "struct blk_mq_tag_set { int b; };" > "$K/common/include/linux/blk-mq.h"

# mksource <dir> <sublevel>: a source tree matching the headers
mksource() {
	mkdir -p "$1/block" "$1/include/linux" "$1/drivers/mmc/core" "$1/drivers/other"
	mkmakefile "$1/Makefile" "$2"
	cp "$K/common/include/linux/"*.h "$1/include/linux/"
	echo "/* elevator */" > "$1/block/elevator.h"
	echo "/* blk-mq */" > "$1/block/blk-mq.h"
	echo "int x;" > "$1/block/elevator.c"
	echo "/* core */" > "$1/drivers/mmc/core/core.h"
	echo "/* other */" > "$1/drivers/other/o.h"
}
mksource "$TMP/tree" 117
mkdir -p "$TMP/tb"
mksource "$TMP/tb/linux-source-6.12" 117
tar -cJf "$TMP/src.tar.xz" -C "$TMP/tb" linux-source-6.12

# ph <out> <args...>: run private-headers; stdout, stderr and status
ph() {
	local o=$1
	shift
	"$PH" "$@" > "$o.out" 2> "$o.err"
	echo $? > "$o.rc"
}
# refused <out> <dir> <part of the line>: exit 1, one stderr line naming
# the kernel and containing <part>, no <dir>/block
refused() {
	local l
	l=$(cat "$1.err")
	[ "$(cat "$1.rc")" = 1 ] && [ "$(wc -l < "$1.err")" = 1 ] &&
		[[ $l == "fwdsched: kernel $REL: "*"$3"* ]] && [ ! -e "$2/block" ] && return 0
	diag "status $(cat "$1.rc"), stderr: $l"
	return 1
}

D=$TMP/out-tree
ph "$TMP/r1" -s "$TMP/tree" -k "$K/amd64" "$REL" "$D"
check "tree.copied" eval '[ "$(cat "$TMP/r1.rc")" = 0 ] &&
	[ "$(cat "$TMP/r1.out")" = "$D/block" ] &&
	cmp -s "$D/block/elevator.h" "$TMP/tree/block/elevator.h" &&
	[ ! -s "$TMP/r1.err" ]'

D=$TMP/out-tar
ph "$TMP/r2" -s "$TMP/src.tar.xz" -k "$K/amd64" -x drivers/mmc/core "$REL" "$D"
check "tarball.members" eval '[ "$(cat "$TMP/r2.rc")" = 0 ] &&
	[ -e "$D/block/elevator.h" ] && [ -e "$D/block/blk-mq.h" ] &&
	[ -e "$D/drivers/mmc/core/core.h" ] && [ ! -e "$D/block/elevator.c" ] &&
	[ ! -e "$D/drivers/other" ]'

echo "/* marker */" >> "$D/block/elevator.h"
ph "$TMP/r3" -s "$TMP/src.tar.xz" -k "$K/amd64" -x drivers/mmc/core "$REL" "$D"
check "tarball.reused" eval '[ "$(cat "$TMP/r3.rc")" = 0 ] && grep -q marker "$D/block/elevator.h"'
touch -d '2001-01-01' "$TMP/src.tar.xz"
ph "$TMP/r4" -s "$TMP/src.tar.xz" -k "$K/amd64" -x drivers/mmc/core "$REL" "$D"
check "tarball.changed-is-copied-again" eval '[ "$(cat "$TMP/r4.rc")" = 0 ] &&
	! grep -q marker "$D/block/elevator.h"'

# Refusals.  The good copy of out-tar is there: a refusal removes it.
mksource "$TMP/newer" 120
ph "$TMP/r5" -s "$TMP/newer" -k "$K/amd64" -x drivers/mmc/core "$REL" "$D"
check "refuse.other-version" refused "$TMP/r5" "$D" "is Linux 6.12.120, the kernel is 6.12.117"

mksource "$TMP/patched" 117
echo "struct request_queue { long a; };" > "$TMP/patched/include/linux/blkdev.h"
ph "$TMP/r6" -s "$TMP/patched" -k "$K/amd64" "$REL" "$TMP/out6"
check "refuse.other-blkdev.h" refused "$TMP/r6" "$TMP/out6" "include/linux/blkdev.h"

mksource "$TMP/noelv" 117
rm "$TMP/noelv/block/elevator.h"
ph "$TMP/r7" -s "$TMP/noelv" -k "$K/amd64" "$REL" "$TMP/out7"
check "refuse.no-elevator.h" refused "$TMP/r7" "$TMP/out7" "block/elevator.h"

# A kernel series with no source anywhere: not given, no full tree, no
# /usr/src/linux-source-6.99.tar.xz.
mkdir -p "$TMP/k699/include/linux"
printf 'VERSION = 6\nPATCHLEVEL = 99\nSUBLEVEL = 1\n' > "$TMP/k699/Makefile"
(unset FWD_KSRC; ph "$TMP/r11" -k "$TMP/k699" "$REL" "$TMP/out11")
check "refuse.no-source" refused "$TMP/r11" "$TMP/out11" "no /usr/src/linux-source-6.99.tar.xz"

ph "$TMP/r8" -s "$TMP/tree" -k "$TMP/nothing" "$REL" "$TMP/out8"
check "refuse.no-headers" refused "$TMP/r8" "$TMP/out8" "apt install linux-headers-$REL"

# -m: make against the kernel, with FWD_PRIV; a stand-in make records its
# arguments.
mkdir -p "$TMP/bin" "$TMP/m"
cat > "$TMP/bin/make" <<EOF
#!/bin/sh
echo "\$*" > "$TMP/make.args"
EOF
chmod +x "$TMP/bin/make"
(cd "$TMP/m" && PATH=$TMP/bin:$PATH ph "$TMP/r9" -m -s "$TMP/tree" -k "$K/amd64" "$REL" priv V=1)
make_args() {
	[ "$(cat "$TMP/r9.rc")" = 0 ] &&
		grep -qx -- "-C $K/amd64 M=$TMP/m FWD_PRIV=$TMP/m/priv/block -j[0-9]* V=1 modules" \
			"$TMP/make.args" && return 0
	diag "status $(cat "$TMP/r9.rc"), make got: $(cat "$TMP/make.args" 2>/dev/null)"
	return 1
}
check "make.args" make_args
rm -f "$TMP/make.args"
(cd "$TMP/m" && PATH=$TMP/bin:$PATH ph "$TMP/r10" -m -s "$TMP/newer" -k "$K/amd64" "$REL" priv)
check "make.not-after-refusal" eval 'refused "$TMP/r10" "$TMP/m/priv" "6.12.120" && [ ! -e "$TMP/make.args" ]'

echo "1..$KTAP_N"
[ "$KTAP_FAILED" -eq 0 ]
