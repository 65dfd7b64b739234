#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""crosslayer: one timeline per layer from tools/guest/crosslayer.sh output.

Usage: crosslayer.py DIR [--png FILE] [--ops K] [--json] [--title NAME]

DIR holds app.txt, trace.txt (tracefs, trace_clock=mono) and history.txt
(MMC command history), all on CLOCK_MONOTONIC.  Prints the events of
each layer counted over the run (first operation begin to last end plus
the trailing writeback up to the end of the trace) and per application
operation, as papers 003/004 did (14 file-system writes per insert on
Android, 3 on Linux), and draws the first K operations (default 5) as
one lane per layer: app, fs (write/read/fsync calls, ext4, jbd2), block
(queue, insert, issue, complete) and mmc (commands from issue to done).

Layers and what is counted:
  app      operations (app.txt)
  fs       write = write + pwrite64 calls of the workload, read = read +
           pread64, fsync = fsync + fdatasync; ext4_write_begin (buffered
           page writes) and jbd2 commits of the device
  block    Q = bios queued, I = requests inserted, D = issued, C = completed
           (per direction R/W; flushes without data are counted apart)
  mmc      R, W and O commands of the history

Exit status 2 with a message naming the file for missing or malformed input.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwdlib  # noqa: E402
from fwdlib import InputError  # noqa: E402

# "comm-pid [cpu] flags ts: event: args" or "... ts: sys_write(fd: ...)"
LINE_RE = re.compile(r"^\s*(.*)-(\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(\d+)\]\s+"
                     r"(?:\S+\s+)?(\d+)\.(\d+):\s+(\w+)(?::\s|\()(.*)$")
BLOCK_RE = re.compile(r"^\s*(\d+),(\d+)\s+(\S+)\s.*?(\d+) \+ (\d+)")
SYS_ALIAS = {"sys_write": "write", "sys_pwrite64": "write",
             "sys_read": "read", "sys_pread64": "read",
             "sys_fsync": "fsync", "sys_fdatasync": "fsync",
             "sys_enter_write": "write", "sys_enter_pwrite64": "write",
             "sys_enter_read": "read", "sys_enter_pread64": "read",
             "sys_enter_fsync": "fsync", "sys_enter_fdatasync": "fsync"}
BLOCK_EV = {"block_bio_queue": "Q", "block_rq_insert": "I",
            "block_rq_issue": "D", "block_rq_complete": "C"}
LANES = ["app", "fs", "block", "mmc"]


def parse_app(path):
    """(pid, [(i, begin_ns, end_ns)])"""
    text, _ = fwdlib._read_text(path)
    lines = text.splitlines()
    if not lines or not lines[0].startswith("pid "):
        raise InputError("%s: first line must be 'pid PID'" % path)
    pid = int(lines[0].split()[1])
    ops = []
    for n, line in enumerate(lines[1:], 2):
        f = line.split()
        if len(f) != 3 or not all(x.isdigit() for x in f):
            raise InputError("%s:%d: expected 'i begin_ns end_ns': %r"
                             % (path, n, line[:60]))
        ops.append(tuple(int(x) for x in f))
    if not ops:
        raise InputError("%s: no operations" % path)
    return pid, ops


def parse_trace(path):
    """[(ts_ns, event, pid, args)] of a tracefs text dump."""
    out = []
    text, _ = fwdlib._read_text(path)
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = LINE_RE.match(line)
        if not m:
            continue
        frac = m.group(5)
        ts = int(m.group(4)) * 10**9 + int(frac.ljust(9, "0")[:9])
        out.append((ts, m.group(6), int(m.group(2)), m.group(7)))
    return out


def parse_history(path):
    """[(issue_ns, done_ns, op, sector, nr)] of every command of an MMC
    history (fwdlib.parse_mmc_history)."""
    return [(r["d_ns"], r["c_ns"], r["dir"], r["sector"], r["blocks"])
            for r in fwdlib.parse_mmc_history(path, other=True)]


def classify(trace, pid):
    """Events by layer: {'fs': [(ts, kind)], 'block': [(ts, kind, dir)]}"""
    fs, block = [], []
    for ts, ev, epid, args in trace:
        if ev in SYS_ALIAS:
            if epid == pid:
                fs.append((ts, SYS_ALIAS[ev]))
        elif ev in ("ext4_da_write_begin", "ext4_write_begin"):
            fs.append((ts, "ext4_write_begin"))
        elif ev == "ext4_sync_file_enter":
            fs.append((ts, "ext4_sync_file"))
        elif ev == "jbd2_start_commit":
            fs.append((ts, "jbd2_commit"))
        elif ev in BLOCK_EV:
            m = BLOCK_RE.match(args)
            rwbs = m.group(3) if m else ""
            nr = int(m.group(5)) if m else 0
            d = rwbs.lstrip("F")[:1]
            d = d if d in ("R", "W") and nr else "flush"
            block.append((ts, BLOCK_EV[ev], d))
    return fs, block


def counts(app_ops, fs, block, mmc, t0, t1):
    """Counts of each layer's events in [t0, t1], and per operation."""
    n = len(app_ops)
    c = {"app": {"ops": n}}
    c["fs"] = {}
    for ts, kind in fs:
        if t0 <= ts <= t1:
            c["fs"][kind] = c["fs"].get(kind, 0) + 1
    c["block"] = {}
    for ts, kind, d in block:
        if t0 <= ts <= t1:
            k = "%s_%s" % (kind, d)
            c["block"][k] = c["block"].get(k, 0) + 1
    c["mmc"] = {}
    for issue, done, op, _, _ in mmc:
        if t0 <= issue <= t1:
            c["mmc"][op] = c["mmc"].get(op, 0) + 1
    per = {lay: {k: v / n for k, v in c[lay].items()} for lay in LANES}
    return c, per


FS_ROWS = [("write", "write()"), ("read", "read()"), ("fsync", "fsync()"),
           ("ext4_write_begin", "ext4 write_begin"),
           ("ext4_sync_file", "ext4 sync_file"), ("jbd2_commit", "jbd2 commit")]
BLOCK_ROWS = [("Q", "Q bio queued"), ("I", "I inserted"), ("D", "D issued"),
              ("C", "C completed")]
MMC_ROWS = [("R", "R read"), ("W", "W write"), ("O", "O other")]
DIR_COLOR = {"R": "tab:cyan", "W": "tab:blue", "flush": "tab:red"}


def draw(path, app_ops, fs, block, mmc, k, title=""):
    """One timeline per layer (stacked, shared time axis) for the first
    k operations, up to the start of operation k + 1."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ops = app_ops[:k]
    t0 = ops[0][1]
    # Up to the next operation's start, so that its writeback shows.
    t1 = app_ops[k][1] if len(app_ops) > k else max(
        [ops[-1][2]] + [t for t, _ in fs] + [t for t, _, _ in block] +
        [d for _, d, _, _, _ in mmc])
    ms = lambda t: (t - t0) / 1e6  # noqa: E731
    inwin = lambda t: t0 <= t <= t1  # noqa: E731
    fs_rows = [r for r in FS_ROWS if any(kk == r[0] for _, kk in fs)]
    mmc_rows = [r for r in MMC_ROWS if any(o == r[0] for _, _, o, _, _ in mmc)]
    heights = [1.2, max(len(fs_rows), 1), len(BLOCK_ROWS), max(len(mmc_rows), 1)]
    fig, axs = plt.subplots(4, 1, sharex=True, figsize=(11, 7.5),
                            gridspec_kw={"height_ratios": heights})
    ax_app, ax_fs, ax_blk, ax_mmc = axs

    for i, b, e in ops:
        ax_app.broken_barh([(ms(b), max(ms(e) - ms(b), 0.01))], (0.2, 0.6),
                           color="tab:green" if i % 2 == 0 else "tab:olive")
        ax_app.text((ms(b) + ms(e)) / 2, 0.5, "#%d" % i, ha="center",
                    va="center", fontsize=7, color="white")
    ax_app.set_yticks([0.5])
    ax_app.set_yticklabels(["operation"])
    ax_app.set_ylim(0, 1)

    def rows(ax, spec):
        ax.set_yticks(range(len(spec)))
        ax.set_yticklabels([lab for _, lab in spec], fontsize=8)
        ax.set_ylim(len(spec) - 0.5, -0.5)

    for r, (kind, _) in enumerate(fs_rows):
        xs = [ms(t) for t, kk in fs if kk == kind and inwin(t)]
        ax_fs.scatter(xs, [r] * len(xs), marker="|", s=120,
                      color="tab:red" if "sync" in kind or "jbd2" in kind
                      else "tab:blue")
    rows(ax_fs, fs_rows or [("", "")])

    for r, (kind, _) in enumerate(BLOCK_ROWS):
        for d, col in DIR_COLOR.items():
            xs = [ms(t) for t, kk, dd in block if kk == kind and dd == d and inwin(t)]
            if xs:
                ax_blk.scatter(xs, [r] * len(xs), marker="|", s=120, color=col,
                               label=None if r else {"R": "read", "W": "write",
                                                     "flush": "flush"}[d])
    rows(ax_blk, BLOCK_ROWS)
    handles = [plt.Line2D([], [], color=c, marker="|", ls="", markersize=10)
               for c in DIR_COLOR.values()]
    ax_blk.legend(handles, ["read", "write", "flush"], fontsize=7,
                  loc="upper left", bbox_to_anchor=(1.0, 1.0))

    for r, (op, _) in enumerate(mmc_rows):
        for issue, done, o, _, _ in mmc:
            if o == op and issue <= t1 and done >= t0:
                ax_mmc.broken_barh([(ms(issue), max(ms(done) - ms(issue), 0.02))],
                                   (r - 0.3, 0.6),
                                   color={"R": "tab:cyan", "W": "tab:blue"}.get(op, "tab:gray"))
    rows(ax_mmc, mmc_rows or [("", "")])

    for ax, name in zip(axs, ["application", "file system", "block layer",
                              "MMC commands"]):
        ax.set_ylabel(name, fontsize=9)
        ax.grid(axis="x", alpha=0.3)
        for _, b, _ in ops[1:]:
            ax.axvline(ms(b), color="k", lw=0.5, alpha=0.3)
    ax_mmc.set_xlim(0, ms(t1))
    ax_mmc.set_xlabel("time (ms) from the start of operation #0 "
                      "(thin lines: starts of the next operations)")
    fig.suptitle("Cross-layer timeline%s: operations #0-#%d, one lane per layer"
                 % (" of " + title if title else "", len(ops) - 1))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="crosslayer.py")
    ap.add_argument("dir")
    ap.add_argument("--png", help="timeline PNG (default DIR/timeline.png)")
    ap.add_argument("--ops", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--title", help="workload name for the plot "
                    "(default: the name of DIR)")
    a = ap.parse_args(argv)
    if a.ops < 1:
        print("crosslayer: --ops must be positive", file=sys.stderr)
        return 2
    try:
        pid, ops = parse_app(os.path.join(a.dir, "app.txt"))
        trace = parse_trace(os.path.join(a.dir, "trace.txt"))
        mmc = parse_history(os.path.join(a.dir, "history.txt"))
    except InputError as e:
        print("crosslayer: %s" % e, file=sys.stderr)
        return 2
    if not trace:
        print("crosslayer: %s: no trace events" % os.path.join(a.dir, "trace.txt"),
              file=sys.stderr)
        return 2
    fs, block = classify(trace, pid)
    t0 = ops[0][1]
    t1 = max([ops[-1][2]] + [t for t, _, _, _ in trace])
    c, per = counts(ops, fs, block, mmc, t0, t1)
    res = {"counts": c, "per_op": per}
    if a.json:
        print(json.dumps(res, indent=1))
    else:
        print("%d operations, %.3f s" % (len(ops), (ops[-1][2] - t0) / 1e9))
        for lay in LANES:
            items = sorted(c[lay].items())
            print("%-6s %s" % (lay, "  ".join("%s=%d (%.2f/op)" % (k, v, per[lay][k])
                                             for k, v in items) or "-"))
    title = a.title if a.title is not None else \
        os.path.basename(os.path.normpath(os.path.abspath(a.dir)))
    try:
        draw(a.png or os.path.join(a.dir, "timeline.png"), ops, fs, block, mmc,
             min(a.ops, len(ops)), title)
    except ImportError as e:  # matplotlib missing: the counts still stand
        print("crosslayer: no timeline plot (%s)" % e, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
