#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""mmchist: the papers' MMC-level analyses from the command history.

Usage:
  mmchist.py summary [--op R|W|RW] [--json] SRC...
  mmchist.py plot --out DIR [--op R|W|RW] [--range-mb MB] [--max-ms MS] SRC...

SRC is [LABEL=]PATH.  PATH is a history dump (mmc_history module
/sys/kernel/debug/mmc_history/<host>, or patched mmc_core
/sys/kernel/debug/<host>/history), or, when there is none, blkparse text
(tools/analysis/fwdlib.py format or blkparse's default), which is used through the
D (issue) and C (completion) events.  LABEL defaults to the file name;
use the scheduler name to get the papers' per-scheduler panels.

Definitions (tools/analysis/fwdlib.py): only data commands (R, W) count; records
are taken in issue order; delta = sector - end of the previous data
command (sectors of 512 bytes; the first command is measured from 0);
service time = done - issue (for blktrace: from the later of D and the
previous completion to C).  Forward means delta >= 0.

summary prints one row per SRC: commands, forward fraction, and the
service time (mean and median, µs) of positive, zero and negative deltas
with the ratio mean(negative) / mean(positive).

plot writes
  fig4_issue_vs_address.png   issue time (s) vs address (MiB), one panel per SRC
  fig5_delta_vs_service.png   delta (MiB, clipped to +-range) vs service time
                              (ms, clipped to max), negative deltas in red
  fig6_service_by_sign.png    mean and median service time by delta sign

Exit status 2 with a message naming the file for missing or malformed input.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwdlib  # noqa: E402

SECTOR = 512
MIB = 1 << 20
OPS = {"R": ("R",), "W": ("W",), "RW": ("R", "W")}


def parse_header(src):
    """key=value pairs of the first '#' line of a history dump ({} if none)."""
    text, _ = fwdlib._read_text(src)
    for line in text.splitlines():
        if line.startswith("#"):
            return dict(t.split("=", 1) for t in line[1:].split() if "=" in t)
        if line.strip():
            break
    return {}


def load(src):
    """(kind, records) of one source: kind 'history' or 'blktrace'.

    Records are dicts as from fwdlib (sector, blocks, dir, delta, d_ns,
    c_ns, service_ns), in issue order."""
    try:
        return "history", fwdlib.parse_mmc_history(src)
    except fwdlib.InputError as hist_err:
        try:
            events = fwdlib.parse_blkparse(src)
        except fwdlib.InputError:
            raise hist_err from None
        if not events:
            raise hist_err from None
        recs = fwdlib.request_latencies(events)
        recs.sort(key=lambda r: r["d_ns"])
        return "blktrace", recs


def select(recs, op):
    """Records of the ops in OPS[op], deltas unchanged."""
    return [r for r in recs if r["dir"] in OPS[op]]


def summary(recs):
    """Numbers of one table row (times in µs)."""
    by = fwdlib.latency_by_sign(recs, "service_ns")
    n = len(recs)
    fwd = sum(1 for r in recs if r["delta"] >= 0)
    return dict(n=n, forward_fraction=fwd / n if n else None,
                pos=by["pos"], zero=by["zero"], neg=by["neg"],
                neg_over_pos=by["neg_over_pos"])


def parse_src(arg):
    label, sep, path = arg.partition("=")
    if not sep or not label or os.path.exists(arg):
        return os.path.basename(arg), arg
    return label, path


def _f(x, fmt="%.1f"):
    return "-" if x is None else fmt % x


def table(rows):
    """Text table of (label, kind, summary) rows."""
    head = ("source", "kind", "n", "fwd%", "n+", "mean+", "med+", "n0",
            "mean0", "n-", "mean-", "med-", "-/+")
    lines = [head]
    for label, kind, s in rows:
        lines.append((label, kind, str(s["n"]),
                      _f(None if s["forward_fraction"] is None
                         else 100 * s["forward_fraction"]),
                      str(s["pos"]["n"]), _f(s["pos"]["mean_us"]),
                      _f(s["pos"]["median_us"]), str(s["zero"]["n"]),
                      _f(s["zero"]["mean_us"]), str(s["neg"]["n"]),
                      _f(s["neg"]["mean_us"]), _f(s["neg"]["median_us"]),
                      _f(s["neg_over_pos"], "%.2f")))
    w = [max(len(r[i]) for r in lines) for i in range(len(head))]
    out = ["  ".join(c.rjust(w[i]) if i > 1 else c.ljust(w[i])
                     for i, c in enumerate(r)).rstrip() for r in lines]
    out.append("service time in µs (mean, median) for delta > 0 (+), = 0 (0), "
               "< 0 (-); fwd% = delta >= 0")
    return "\n".join(out)


def draw_fig4(ax, recs, window=None):
    """Fig 4 on one axes: each command's issue time against its address.
    With window, only the first window commands, joined by a line so that
    the sweeps show as saw teeth."""
    rr = sorted(recs, key=lambda r: r["d_ns"])[:window]
    t0 = rr[0]["d_ns"] if rr else 0
    ax.plot([(r["d_ns"] - t0) / 1e6 for r in rr],
            [r["sector"] * SECTOR / MIB for r in rr],
            ".-" if window else ".", ms=3, lw=0.3)
    ax.set_xlabel("issue time (ms)")
    ax.set_ylabel("address (MiB)")


def draw_fig5(ax, recs, range_mb=None, max_ms=None):
    """Fig 5 on one axes: each command's address delta against its service
    time, backward (delta < 0) in red; clipped to +-range_mb and max_ms
    when given."""
    clip = (lambda v, lo, hi: max(lo, min(hi, v)))
    for neg, color in ((False, "tab:blue"), (True, "tab:red")):
        pts = [r for r in recs if (r["delta"] < 0) == neg]
        xs = [r["delta"] * SECTOR / MIB for r in pts]
        ys = [r["service_ns"] / 1e6 for r in pts]
        if range_mb:
            xs = [clip(x, -range_mb, range_mb) for x in xs]
        if max_ms:
            ys = [min(max_ms, y) for y in ys]
        ax.scatter(xs, ys, s=3, color=color,
                   label="delta < 0" if neg else "delta >= 0")
    if range_mb:
        ax.set_xlim(-range_mb, range_mb)
    if max_ms:
        ax.set_ylim(0, max_ms)
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_xlabel("address delta (MiB)")
    ax.set_ylabel("service time (ms)")


def plot(sources, outdir, range_mb=128.0, max_ms=10.0):
    """Write the three figures for [(label, recs)]; returns their paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(outdir, exist_ok=True)
    k = len(sources)
    paths = []

    fig, axes = plt.subplots(1, k, figsize=(4.5 * k, 3.8), squeeze=False,
                             sharey=True)
    for ax, (label, recs) in zip(axes[0], sources):
        draw_fig4(ax, recs)
        ax.set_title(label)
    fig.suptitle("Fig 4: MMC command issue time vs address")
    fig.tight_layout()
    paths.append(os.path.join(outdir, "fig4_issue_vs_address.png"))
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, axes = plt.subplots(1, k, figsize=(4.5 * k, 3.8), squeeze=False,
                             sharey=True)
    for ax, (label, recs) in zip(axes[0], sources):
        draw_fig5(ax, recs, range_mb, max_ms)
        ax.set_title(label)
    axes[0][0].legend(loc="upper right", fontsize=7)
    fig.suptitle("Fig 5: address delta vs service time (clipped to the axes)")
    fig.tight_layout()
    paths.append(os.path.join(outdir, "fig5_delta_vs_service.png"))
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(max(4.5, 1.6 * k + 2), 3.8))
    width = 0.25
    for i, (sign, color) in enumerate((("neg", "tab:red"), ("zero", "tab:grey"),
                                       ("pos", "tab:blue"))):
        means, meds = [], []
        for _, recs in sources:
            s = summary(recs)[sign]
            means.append((s["mean_us"] or 0) / 1000)
            meds.append((s["median_us"] or 0) / 1000)
        xs = [j + (i - 1) * width for j in range(k)]
        ax.bar(xs, means, width, color=color, label="delta %s 0" %
               {"neg": "<", "zero": "=", "pos": ">"}[sign])
        ax.scatter(xs, meds, color="black", marker="_", s=80, zorder=3)
    ax.set_xticks(range(k))
    ax.set_xticklabels([label for label, _ in sources])
    ax.set_ylabel("service time (ms): bar mean, tick median")
    ax.legend(fontsize=7)
    fig.suptitle("Fig 6: service time by sign of the address delta")
    fig.tight_layout()
    paths.append(os.path.join(outdir, "fig6_service_by_sign.png"))
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="mmchist.py", description="MMC history analyses (papers' Fig 4-6)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("summary", "plot"):
        p = sub.add_parser(name)
        p.add_argument("--op", choices=sorted(OPS), default="R",
                       help="commands to use (default R, as in the papers)")
        p.add_argument("src", nargs="+", help="[LABEL=]PATH")
        if name == "summary":
            p.add_argument("--json", action="store_true")
        else:
            p.add_argument("--out", required=True, help="output directory")
            p.add_argument("--range-mb", type=float, default=128.0)
            p.add_argument("--max-ms", type=float, default=10.0)
    a = ap.parse_args(argv)

    rows = []
    try:
        for arg in a.src:
            label, path = parse_src(arg)
            kind, recs = load(path)
            rows.append((label, kind, select(recs, a.op)))
    except fwdlib.InputError as e:
        print("mmchist: %s" % e, file=sys.stderr)
        return 2
    for label, _, recs in rows:
        if not recs:
            print("mmchist: %s: no %s commands" % (label, a.op), file=sys.stderr)
            return 2

    if a.cmd == "summary":
        res = [(label, kind, summary(recs)) for label, kind, recs in rows]
        if a.json:
            print(json.dumps({label: dict(kind=kind, **s)
                              for label, kind, s in res}, indent=1))
        else:
            print(table(res))
    else:
        if a.range_mb <= 0 or a.max_ms <= 0:
            print("mmchist: --range-mb and --max-ms must be positive",
                  file=sys.stderr)
            return 2
        for p in plot([(label, recs) for label, _, recs in rows], a.out,
                      a.range_mb, a.max_ms):
            print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
