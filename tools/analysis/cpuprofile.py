#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summary of a CPU profile run of tools/profile.

The guest (tools/guest/profile.sh) wrote, for each round, job and
scheduler, fio's IOPS (iops.tsv: job, scheduler, round, IOPS) and perf's
flat profile by symbol (<job>.<scheduler>.r<round>.txt: "perf report
--sort sym --stdio" lines "  12.34%  [k] symbol").  This prints, per job:
each scheduler's median IOPS and, for every scheduler but mq-deadline,
the median over rounds of its IOPS / mq-deadline's of the same round;
then the share of all samples (mean over rounds) in the scheduler's own
functions, in the spinlock slow path (waiting for a contended lock), and
idle; then the scheduler's own functions, heaviest first.  When the
guest's clock counted instructions (a file "icount" holds the shift N:
2^N ns an instruction), a share is also a count: the scheduler's own
instructions per read, own share x 10^9 / (2^N x IOPS), mean over rounds.

  tools/analysis/cpuprofile.py results/profile-<timestamp> [--top N]
"""

import argparse
import os
import re
import statistics
import sys

# A scheduler's own functions, by the prefix its source gives them
# (after any leading underscores: __dd_dispatch_request is mq-deadline's).
PREFIX = {"fwdsched": "fwd_", "mq-deadline": "dd_", "kyber": "kyber_",
          "bfq": "bfq_"}
LOCK_WAIT = ("native_queued_spin_lock_slowpath",
             "queued_spin_lock_slowpath")
IDLE = ("pv_native_safe_halt", "default_idle", "native_safe_halt",
        "acpi_idle_do_entry", "poll_idle")
BASE = "mq-deadline"
LINE = re.compile(r"^\s*([0-9.]+)%\s+\[[^]]*\]\s+(\S+)")


class ProfileError(Exception):
    pass


def parse_report(text):
    """{symbol: percent} of a perf report's flat lines."""
    out = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            out[m.group(2)] = out.get(m.group(2), 0.0) + float(m.group(1))
    return out


def read_iops(path):
    """[(job, sched, round, iops)] of iops.tsv."""
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 4:
                raise ProfileError("%s:%d: expected job, scheduler, round, "
                                   "IOPS: %r" % (path, n, line.strip()))
            job, sched, rnd, iops = parts
            try:
                rows.append((job, sched, int(rnd), float(iops)))
            except ValueError:
                raise ProfileError("%s:%d: round and IOPS must be numbers: "
                                   "%r" % (path, n, line.strip()))
    if not rows:
        raise ProfileError("%s: no measurements" % path)
    return rows


def own(sym, sched):
    """Is @sym one of @sched's own functions?"""
    prefix = PREFIX.get(sched)
    return bool(prefix) and sym.lstrip("_").startswith(prefix)


def shares(prof, sched):
    """The scheduler's own, lock-wait and idle shares of a profile."""
    own_ = sum(v for k, v in prof.items() if own(k, sched))
    lock = sum(prof.get(k, 0.0) for k in LOCK_WAIT)
    idle = sum(prof.get(k, 0.0) for k in IDLE)
    return own_, lock, idle


def read_icount(rundir):
    """The shift of an instruction-counted run (file "icount"), or None."""
    try:
        with open(os.path.join(rundir, "icount")) as f:
            text = f.read().strip()
    except FileNotFoundError:
        return None
    if not re.fullmatch(r"[0-9]", text):
        raise ProfileError("%s/icount: expected a shift from 0 to 9: %r"
                           % (rundir, text))
    return int(text)


def per_read(share, iops, shift):
    """Instructions per read in a share (%) of an instruction-counted
    run's samples, at @iops reads per second of guest time."""
    return share / 100.0 * 1e9 / (2 ** shift * iops)


def summarize(rundir, top=12):
    rows = read_iops(os.path.join(rundir, "iops.tsv"))
    shift = read_icount(rundir)
    jobs = list(dict.fromkeys(r[0] for r in rows))
    out = []
    if shift is not None:
        out.append("One vCPU, its clock counting instructions (2^%d ns "
                   "each): IOPS are the inverse of the work per read.\n"
                   % shift)
    for job in jobs:
        jrows = [r for r in rows if r[0] == job]
        scheds = list(dict.fromkeys(r[1] for r in jrows))
        by = {(r[1], r[2]): r[3] for r in jrows}
        rounds = sorted(set(r[2] for r in jrows))
        out.append("## %s\n" % job)
        out.append("| scheduler | IOPS (median) | × %s (median of rounds) "
                   "| own functions %% | lock wait %% | idle %% |%s" %
                   (BASE, "" if shift is None else
                    " own instructions per read |"))
        out.append("|---|--:|--:|--:|--:|--:|" +
                   ("" if shift is None else "--:|"))
        funcs, profiled = {}, {}
        for s in scheds:
            iops = [by[(s, r)] for r in rounds if (s, r) in by]
            ratios = [by[(s, r)] / by[(BASE, r)] for r in rounds
                      if (s, r) in by and by.get((BASE, r))]
            sh, ins = [], []
            for r in rounds:
                path = os.path.join(rundir, "%s.%s.r%d.txt" % (job, s, r))
                if not os.path.exists(path):
                    continue
                with open(path) as f:
                    prof = parse_report(f.read())
                sh.append(shares(prof, s))
                if shift is not None and by.get((s, r)):
                    ins.append(per_read(sh[-1][0], by[(s, r)], shift))
                for k, v in prof.items():
                    if own(k, s):
                        funcs.setdefault(s, {}).setdefault(k, []).append(v)
            profiled[s] = len(sh)
            ratio = ("%.3f" % statistics.median(ratios)
                     if ratios and s != BASE else "1" if s == BASE else "n/a")
            cols = ["%.2f" % statistics.mean(x[i] for x in sh) if sh
                    else "n/a" for i in range(3)]
            if shift is not None:
                cols.append("%.0f" % statistics.mean(ins) if ins else "n/a")
            out.append("| %s | %.0f | %s | %s |"
                       % (s, statistics.median(iops), ratio, " | ".join(cols)))
        for s in scheds:
            if s not in funcs:
                continue
            n = profiled[s]
            mean = sorted(((sum(v) / n, k) for k, v in funcs[s].items()),
                          key=lambda t: (-t[0], t[1]))
            out.append("\n%s's own functions (%% of all samples, mean over "
                       "%d rounds): %s" % (s, n, ", ".join(
                           "%s %.2f" % (k, v) for v, k in mean[:top])))
        out.append("")
    return "\n".join(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rundir")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args(argv)
    if a.top < 1:
        ap.error("--top must be at least 1")
    try:
        print(summarize(a.rundir, a.top))
    except (OSError, ProfileError) as e:
        print("cpuprofile.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
