#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""soakreport: the record and the verdict of a soak run (tools/soak).

usage: soakreport.py meta DIR KERNELS MINUTES SWITCH_S
       soakreport.py report DIR SECONDS

meta writes DIR/meta.json (date, commit, exact command, host state,
settings) before the guests boot.  report reads it, and for each kernel
DIR/boots/<kernel>/soak.json (tools/guest/soak.sh) and splats.ktap
(tools/analysis/splats.py over the console), judges every disk, and writes
DIR/report.md, whose result table sits between the markers that
tools/analysis/publish.py copies into BENCHMARKS.md, and DIR/soak.json.
Exit 1 when a check failed, 2 when the run cannot be read.

A disk passes when fio ran every job and exited 0 with no job error (the
writers verify every block with crc32c, verify_fatal=1), wrote, read,
verified and flushed something, every scheduler switch completed, and
its kernel's console shows no splat and fwdsched unloaded at the end.
"""

import datetime
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchplan  # noqa: E402  (host and git state, shared with bench)

from publish import BEGIN, END  # noqa: E402
# fio-jobs/selftest/soak-mixed.fio: 4 writers, 4 sync readers, 2 async readers,
# and the discarder where the disk has discard
MIN_JOBS = 10


def meta(root, kernels, minutes, switch_s):
    g = benchplan.git_state()
    cmd = "SOAK_KVERS=%s SOAK_MINUTES=%s SOAK_SWITCH_S=%s make soak" % (
        benchplan.shquote(kernels), minutes, switch_s)
    now = datetime.datetime.now(datetime.timezone.utc)
    m = {"kind": "fwdsched-soak", "created": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
         "commit": g.get("commit"), "dirty": g.get("dirty"), "command": cmd,
         "settings": {"kernels": kernels.split(), "minutes": int(minutes),
                      "switch_s": int(switch_s)},
         "host": benchplan.host_state()}
    with open(os.path.join(root, "meta.json"), "w") as f:
        json.dump(m, f, indent=1)


def splat_failures(path):
    """The names of the failed results of a splats.py KTAP file, or a
    one-item list saying it is missing."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return ["no splat check (%s missing)" % os.path.basename(path)]
    if not re.search(r"^1\.\.\d+", text, re.M):
        return ["the splat check printed no plan"]
    return re.findall(r"^not ok \d+ (\S+)", text, re.M)


def judge_disk(d):
    """The list of what is wrong with one disk's record (empty: passed)."""
    bad = []
    if d.get("fio_json_error"):
        bad.append("no fio JSON (%s)" % d["fio_json_error"])
    if d.get("fio_exit") != 0:
        bad.append("fio exited %s" % d.get("fio_exit"))
    if d.get("job_errors"):
        bad.append("%d fio jobs failed" % d["job_errors"])
    if d.get("jobs", 0) < MIN_JOBS:
        bad.append("fio ran %d jobs, expected at least %d" % (d.get("jobs", 0), MIN_JOBS))
    for k in ("writes", "reads", "verified_kib", "flushes"):
        if not d.get(k):
            bad.append("no %s" % k.replace("_kib", ""))
    if d.get("failed_switches"):
        bad.append("%d scheduler switches failed" % d["failed_switches"])
    if not d.get("switches"):
        bad.append("no scheduler switch happened")
    return bad


def report(root, seconds):
    with open(os.path.join(root, "meta.json")) as f:
        m = json.load(f)
    rows, failures, total = [], [], {}
    for k in m["settings"]["kernels"]:
        bdir = os.path.join(root, "boots", k)
        try:
            with open(os.path.join(bdir, "soak.json")) as f:
                rec = json.load(f)
        except (OSError, ValueError) as e:
            failures.append("%s: the guest recorded nothing (%s)" % (k, e))
            continue
        kbad = ["%s: splat: %s" % (k, s) for s in splat_failures(
            os.path.join(bdir, "splats.ktap"))]
        if not rec.get("module_unloaded"):
            kbad.append("%s: fwdsched did not unload" % k)
        if not rec["disks"]:
            kbad.append("%s: no disk was soaked" % k)
        failures += kbad
        for disk, d in sorted(rec["disks"].items()):
            bad = judge_disk(d)
            failures += ["%s %s: %s" % (k, disk, b) for b in bad]
            ios = d["reads"] + d["writes"] + d["discards"]
            for key in ("reads", "writes", "discards", "flushes"):
                total[key] = total.get(key, 0) + d[key]
            rows.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %d/%d | %s |" % (
                k, disk, rec["seconds"] // 60, f"{ios:,}", f"{d['reads']:,}",
                f"{d['writes']:,}", f"{d['discards']:,}" if d["discards"] else "0 (no discard)",
                f"{d['flushes']:,}", "%.0f" % (d["verified_kib"] / 1024),
                d["switches"] - d["failed_switches"], d["switches"],
                "%d: %s" % (len(bad) + len(kbad), "; ".join(bad + kbad)[:120])
                if bad or kbad else "0"))
    lines = ["# Soak run %s" % os.path.basename(os.path.realpath(root)), "",
             "- commit `%s`%s; command `%s`" % (
                 m["commit"], " with uncommitted changes" if m.get("dirty") else "",
                 m["command"]),
             "- %d min of I/O per kernel, a scheduler switch every %d s; the "
             "whole run took %d min" % (m["settings"]["minutes"],
                                        m["settings"]["switch_s"], seconds // 60),
             "- load: fio-jobs/selftest/soak-mixed.fio (4 crc32c-verified writers with a "
             "flush every 16 writes, 64 KiB discards, 4 synchronous and 2 "
             "asynchronous readers); errors counts fio's job errors, failed "
             "switches, splats on the console and a module that did not unload",
             "", BEGIN,
             "| kernel | disk | minutes | I/Os | reads | writes | discards | flushes "
             "| verified MiB | switches done | errors |",
             "|---|---|---|---|---|---|---|---|---|---|---|"] + rows + [
             "", "Verdict: **%s**" % ("passed" if not failures else
                                      "FAILED: " + "; ".join(failures)),
             END, ""]
    with open(os.path.join(root, "report.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(root, "soak.json"), "w") as f:
        json.dump({"passed": not failures, "failures": failures,
                   "seconds": seconds, "totals": total}, f, indent=1)
    print("\n".join(rows and lines[lines.index(BEGIN) + 1:-2] or lines))
    return 1 if failures else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        if len(argv) == 5 and argv[0] == "meta":
            meta(*argv[1:])
            return 0
        if len(argv) == 3 and argv[0] == "report" and argv[2].isdigit():
            return report(argv[1], int(argv[2]))
    except (OSError, ValueError, KeyError) as e:
        print("soakreport: %s" % e, file=sys.stderr)
        return 2
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
