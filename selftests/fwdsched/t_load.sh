#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc nullb ufs
#
# Load, select, unload: fwdsched is offered on the disk once loaded, I/O
# works under it, rmmod is refused while a queue uses it and works once
# every queue has switched away, and the module carries the alias that
# lets "echo fwdsched > queue/scheduler" load it.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
ko=$FWD_ROOT/build/$(uname -r)/fwdsched.ko

modinfo -F alias "$ko" | grep -qx 'fwdsched-iosched' ||
	fail "fwdsched.ko has no fwdsched-iosched alias"
modinfo -F license "$ko" | grep -qx GPL || fail "license is not GPL"

grep -qw fwdsched "/sys/block/$d/queue/scheduler" ||
	fail "fwdsched not offered: $(cat "/sys/block/$d/queue/scheduler")"
set_sched "$d" fwdsched
dd if="/dev/$d" of=/dev/null bs=64k count=64 iflag=direct 2>/dev/null ||
	fail "reading $d under fwdsched failed"

if rmmod fwdsched 2>"$FWD_OUT/rmmod.err"; then
	insmod "$ko"
	fail "rmmod succeeded while $d used fwdsched"
fi
grep -q 'in use' "$FWD_OUT/rmmod.err" || diag "rmmod said: $(cat "$FWD_OUT/rmmod.err")"

# Switch every disk away (other tests may have left fwdsched selected).
for s in /sys/block/*/queue/scheduler; do
	grep -q '\[fwdsched\]' "$s" || continue
	set_sched "$(basename "$(dirname "$(dirname "$s")")")" mq-deadline
done
rmmod fwdsched || fail "rmmod failed after every disk switched away"
lsmod | grep -q '^fwdsched ' && fail "fwdsched still loaded after rmmod"
grep -qw fwdsched "/sys/block/$d/queue/scheduler" &&
	fail "fwdsched still offered after rmmod"

insmod "$ko" || fail "insmod after rmmod failed"
set_sched "$d" fwdsched
dd if="/dev/$d" of=/dev/null bs=64k count=64 iflag=direct 2>/dev/null ||
	fail "reading $d after reload failed"
diag "loaded, refused rmmod while in use, unloaded, reloaded"
exit 0
