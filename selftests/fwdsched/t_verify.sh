#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devices: mmc nullb ufs
#
# Data integrity: random writes of 4-64 KiB with crc32c checksums, read
# back and verified under fwdsched, with merging and both directions in
# play.  fio fails on the first block that does not match.  2 x 32 MiB,
# on the SD card 2 x 8 MiB (about 330 writes a job, each read back): its write
# emulation makes 64 MiB cost 30 s a kernel and prove no more.
. "$FWD_ROOT/selftests/fwdsched/lib.sh"
d=$1
reset_tunables "$d"
mb=32
[ "$(disk_kind "$d")" != mmc ] || mb=8
FWD_SIZE=${mb}m run_fio "$d" selftest/verify-crc32c "$FWD_OUT/verify-crc32c"
host_py - "$FWD_OUT/verify-crc32c.json" <<'PY' || fail "fio did not write and verify everything"
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
ok = len(jobs) == 2
for j in jobs:
    print("# job %s: error %d, wrote %d KiB, verified (read) %d KiB" % (
        j["jobname"], j["error"], j["write"]["io_kbytes"], j["read"]["io_kbytes"]))
    ok &= j["error"] == 0 and j["write"]["io_kbytes"] > 0
    ok &= j["read"]["io_kbytes"] >= j["write"]["io_kbytes"]
sys.exit(0 if ok else 1)
PY
diag "wrote and verified 2 x $mb MiB with crc32c"
exit 0
