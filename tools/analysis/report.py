#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""fwdreport: report.md, summary.json and PNG plots for a tools/bench run.

usage: fwdreport.py [--no-plots] [-o REPORT.md] RESULTS_DIR

RESULTS_DIR is one run, results/<timestamp>/ (or results/latest):

  meta.json                                 optional: kernels, schedulers,
                                            runtime, ...; "variants":
                                            {"fwdsched-slack8": {"slack": 8}}
  <kver>/<model>/<job>/<sched>/fio.json     fio --output-format=json(+)
                              /blk.txt      blkparse -f "$(fwdlib.py blkparse-fmt)"
                              /mmc-history.txt  MMC history dump
                              /debugfs.txt  fwdsched debugfs "stats" lines
                                            ("<name> <value>", last wins)

<sched> is none, mq-deadline, kyber, bfq, fwdsched or a fwdsched variant
"fwdsched-<tunable><value>" (e.g. fwdsched-slack8; meta.json "variants"
overrides the parse).  Every file is optional: what is missing or
unreadable shows as "n/a" and is listed under "Notes".

Writes RESULTS_DIR/report.md, RESULTS_DIR/summary.json (all numbers) and
RESULTS_DIR/plots/*.png.  Ratios ("x dl") are the scheduler's figure
divided by mq-deadline's for the same kernel, model and job of this run.
Exit status: 0, or 2 when RESULTS_DIR is missing or holds no results.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwdlib  # noqa: E402

SCHED_ORDER = ["none", "mq-deadline", "kyber", "bfq", "fwdsched"]
BASELINE = "mq-deadline"
VARIANT_RE = re.compile(r"^fwdsched-([A-Za-z_]+?)[-_=]?(-?\d+(?:\.\d+)?)$")
FIG4_POINTS = 300        # a short window, so that sweeps show as saw teeth


def sched_key(name):
    if name in SCHED_ORDER:
        return (SCHED_ORDER.index(name), "", 0.0)
    m = VARIANT_RE.match(name)
    if m:
        return (len(SCHED_ORDER), m.group(1), float(m.group(2)))
    return (len(SCHED_ORDER) + 1, name, 0.0)


def version_key(s):
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", s)]


def variant_of(name, meta):
    """(tunable, value) of a fwdsched variant name, or None."""
    v = (meta.get("variants") or {}).get(name)
    if isinstance(v, dict) and len(v) == 1:
        (k, val), = v.items()
        try:
            return k, float(val)
        except (TypeError, ValueError):
            return None
    m = VARIANT_RE.match(name)
    return (m.group(1), float(m.group(2))) if m else None


def parse_debugfs(path):
    stats = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^\s*(?:\S+:\s*)?([A-Za-z_]+)\s+(\d+)\s*$", line)
            if m:
                stats[m.group(1)] = int(m.group(2))
    return stats


def _short(err, d):
    """The error message with the directory prefix removed."""
    return str(err).replace(d.rstrip("/") + "/", "")


def analyse_sched(d, notes, label):
    """Numbers of one <sched> directory; missing pieces are None."""
    r = dict(fio=None, order=None, d2c=None, service=None, service_src=None,
             kernel_order=None)
    p = os.path.join(d, "fio.json")
    if os.path.exists(p):
        try:
            r["fio"] = fwdlib.parse_fio(p)
        except fwdlib.InputError as e:
            notes.append("%s: %s" % (label, _short(e, d)))
    else:
        notes.append("%s: no fio.json" % label)
    recs = None
    p = os.path.join(d, "blk.txt")
    if os.path.exists(p):
        try:
            ev = fwdlib.parse_blkparse(p)
            r["order"] = fwdlib.dispatch_order(ev)
            recs = fwdlib.request_latencies(ev)
            r["d2c"] = fwdlib.latency_by_sign(recs, "d2c_ns")
            r["_blk_recs"] = recs
        except fwdlib.InputError as e:
            notes.append("%s: %s" % (label, _short(e, d)))
    p = os.path.join(d, "mmc-history.txt")
    mrecs = None
    if os.path.exists(p):
        try:
            mrecs = fwdlib.parse_mmc_history(p)
        except fwdlib.InputError as e:
            notes.append("%s: %s" % (label, _short(e, d)))
    if mrecs:
        r["service"] = fwdlib.latency_by_sign(mrecs, "service_ns")
        r["service_src"] = "mmc"
        r["_svc_recs"] = mrecs
    elif recs:
        r["service"] = fwdlib.latency_by_sign(recs, "service_ns")
        r["service_src"] = "blktrace"
        r["_svc_recs"] = recs
    p = os.path.join(d, "debugfs.txt")
    if os.path.exists(p):
        try:
            st = parse_debugfs(p)
        except OSError as e:
            notes.append("%s: debugfs.txt: %s" % (label, e))
            st = {}
        if st.get("dispatched"):
            r["kernel_order"] = dict(
                dispatched=st["dispatched"], forward=st.get("forward"),
                wraps=st.get("wraps"), expired=st.get("expired"),
                forward_fraction=(st["forward"] / st["dispatched"]
                                  if "forward" in st else None))
    return r


ROUND_RE = re.compile(r"round([0-9]+)\.json$")


def round_iops(d, first, notes, label):
    """{round: IOPS} of a <sched> directory with repeated rounds, or None
    without rounds.  Round 1 is fio.json, already parsed by
    analyse_sched(): its IOPS are @first (None if it was unusable, which
    analyse_sched() has noted); round<k>.json are the others."""
    files = {int(m.group(1)): f for f in os.listdir(d)
             for m in [ROUND_RE.match(f)] if m and int(m.group(1)) > 1}
    if not files:
        return None
    out = {} if first is None else {1: first}
    for k in sorted(files):
        try:
            out[k] = fwdlib.parse_fio(os.path.join(d, files[k]))["total"]["iops"]
        except (OSError, ValueError, fwdlib.InputError) as e:
            notes.append("%s: %s: %s" % (label, files[k], e))
    return out


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def rounds_section(rounds, scheds, jsum):
    """Markdown for repeated interleaved rounds: IOPS per round and the
    median over rounds of each round's ratio to mq-deadline and to none
    (a ratio pairs runs of the same round, which ran back to back)."""
    ks = sorted({k for s in scheds for k in (rounds.get(s) or {})})
    if not ks:
        return []
    rows = []
    for s in scheds:
        mine = rounds.get(s) or {}
        row = [s] + [fmt(mine.get(k), "%.0f") for k in ks]
        js = dict(rounds_iops={str(k): v for k, v in mine.items()},
                  rounds_iops_median=median(list(mine.values())))
        row.append(fmt(js["rounds_iops_median"], "%.0f"))
        for ref, key in ((BASELINE, "rounds_x_dl_median"), ("none", "rounds_x_none_median")):
            other = rounds.get(ref) or {}
            js[key] = median([mine[k] / other[k] for k in mine
                              if other.get(k)])
            row.append(fmt(js[key], "%.2f"))
        jsum["scheds"].setdefault(s, {}).update(js)
        rows.append(row)
    md = ["### Repeated rounds (interleaved)", "",
          "Each round ran every scheduler once, back to back, in a rotated order. "
          "x dl and x none are medians over rounds of the ratio within a round.", ""]
    md += table(["scheduler"] + ["round %d" % k for k in ks] +
                ["median IOPS", "x dl", "x none"], rows)
    md.append("")
    return md


def scan(root):
    """{(kver, model, job): {sched: dir}} of the run directory."""
    found = {}
    for kver in sorted(os.listdir(root), key=version_key):
        kd = os.path.join(root, kver)
        if not os.path.isdir(kd) or kver == "plots":
            continue
        for model in sorted(os.listdir(kd)):
            md = os.path.join(kd, model)
            if not os.path.isdir(md):
                continue
            for job in sorted(os.listdir(md)):
                jd = os.path.join(md, job)
                if not os.path.isdir(jd):
                    continue
                for sched in os.listdir(jd):
                    sd = os.path.join(jd, sched)
                    if os.path.isdir(sd):
                        found.setdefault((kver, model, job), {})[sched] = sd
    return found


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt(x, spec="%.1f"):
    return "n/a" if x is None else spec % x


def fio_fig(r, key):
    f = r["fio"]
    if not f:
        return None
    if key in ("jain_threads", "jain_processes"):
        return f[key]
    return f["total"][key]


def get(d, *path):
    for k in path:
        if d is None:
            return None
        d = d.get(k)
    return d


# ---------------------------------------------------------------- plots

def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_bars(path, title, res, scheds):
    """Fig 2/3: IOPS per fio job section (process), one bar per scheduler."""
    plt = _plt()
    names = []
    for s in scheds:
        for p in get(res[s], "fio", "processes") or []:
            if p["name"] not in names:
                names.append(p["name"])
    if not names:
        return False
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(names) * len(scheds) / 3), 4))
    w = 0.8 / len(scheds)
    for i, s in enumerate(scheds):
        vals = []
        for n in names:
            ps = [p for p in get(res[s], "fio", "processes") or [] if p["name"] == n]
            vals.append(ps[0]["iops"] if ps else 0)
        ax.bar([k + i * w - 0.4 + w / 2 for k in range(len(names))], vals, w, label=s)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_ylabel("IOPS")
    ax.set_title(title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def _grid(plt, n):
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 3.4 * rows), squeeze=False)
    for k in range(n, rows * cols):
        axes[k // cols][k % cols].axis("off")
    return fig, [axes[k // cols][k % cols] for k in range(n)]


def plot_issue_vs_addr(path, title, res, scheds):
    """Fig 4: issue time vs address of the first FIG4_POINTS commands."""
    have = [s for s in scheds if res[s].get("_svc_recs")]
    if not have:
        return False
    plt = _plt()
    fig, axes = _grid(plt, len(have))
    for ax, s in zip(axes, have):
        recs = sorted(res[s]["_svc_recs"], key=lambda r: r["d_ns"])[:FIG4_POINTS]
        t0 = recs[0]["d_ns"]
        ax.plot([(r["d_ns"] - t0) / 1e6 for r in recs],
                [r["sector"] * 512 / 2**20 for r in recs], ".-", ms=3, lw=0.3)
        ax.set_title("%s (%s)" % (s, res[s]["service_src"]), fontsize="small")
        ax.set_xlabel("issue time (ms)")
        ax.set_ylabel("address (MiB)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def plot_delta_vs_service(path, title, res, scheds):
    """Fig 5/6: signed address delta vs service time."""
    have = [s for s in scheds if res[s].get("_svc_recs")]
    if not have:
        return False
    plt = _plt()
    fig, axes = _grid(plt, len(have))
    for ax, s in zip(axes, have):
        recs = res[s]["_svc_recs"]
        ax.plot([r["delta"] * 512 / 2**20 for r in recs],
                [r["service_ns"] / 1e6 for r in recs], ".", ms=2, alpha=0.5)
        ax.axvline(0, color="grey", lw=0.5)
        ax.set_title("%s (%s)" % (s, res[s]["service_src"]), fontsize="small")
        ax.set_xlabel("address delta (MiB)")
        ax.set_ylabel("service time (ms)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def plot_family(path, title, jobs):
    """Fig 2/3 side by side: total IOPS of related jobs (fig2-sort,
    fig2-shuffle, ...), one bar per scheduler.  jobs: [(label, {sched: iops})]."""
    scheds = []
    for _, v in jobs:
        for s in v:
            if s not in scheds:
                scheds.append(s)
    scheds.sort(key=sched_key)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(jobs) * len(scheds)), 4))
    w = 0.8 / len(scheds)
    for i, s in enumerate(scheds):
        ax.bar([k + i * w - 0.4 + w / 2 for k in range(len(jobs))],
               [v.get(s) or 0 for _, v in jobs], w, label=s)
    ax.set_xticks(range(len(jobs)))
    ax.set_xticklabels([lab for lab, _ in jobs], fontsize="small")
    ax.set_ylabel("IOPS")
    ax.set_title(title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def plot_jain_sweep(path, title, tunable, pts):
    """J over threads and processes against a fwdsched tunable."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [p[0] for p in pts]
    for k, lab in ((1, "J over threads"), (2, "J over processes")):
        ys = [p[k] for p in pts]
        if any(y is not None for y in ys):
            ax.plot([x for x, y in zip(xs, ys) if y is not None],
                    [y for y in ys if y is not None], "o-", label=lab)
    ax.set_xlabel(tunable)
    ax.set_ylabel("Jain's index")
    ax.set_ylim(0, 1.05)
    ax2 = ax.twinx()
    iy = [(x, p[3]) for x, p in zip(xs, pts) if p[3] is not None]
    if iy:
        ax2.plot([a for a, _ in iy], [b for _, b in iy], "s--", color="grey",
                 label="IOPS x mq-deadline")
        ax2.set_ylabel("IOPS x mq-deadline")
    ax.legend(loc="lower left", fontsize="small")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


# ---------------------------------------------------------------- report

def table(head, rows):
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" if i == 0 else "--:" for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def build(root, plots=True, out_md=None):
    root = root.rstrip("/") or "/"
    meta, notes = {}, []
    mp = os.path.join(root, "meta.json")
    if os.path.exists(mp):
        try:
            with open(mp) as f:
                meta = json.load(f)
            if not isinstance(meta, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as e:
            notes.append("meta.json: unreadable (%s)" % e)
            meta = {}
    else:
        notes.append("meta.json: missing")
    found = scan(root)
    if not found:
        raise fwdlib.InputError("%s: no <kver>/<model>/<job>/<sched>/ result "
                                "directories" % root)
    plot_dir = os.path.join(root, "plots")
    if plots:
        try:
            _plt()
            os.makedirs(plot_dir, exist_ok=True)
        except Exception as e:  # matplotlib missing or unusable
            notes.append("plots: n/a (%s)" % e)
            plots = False

    md = ["# fwdsched benchmark report", ""]
    md.append("Run `%s`." % os.path.basename(os.path.realpath(root)))
    for k in sorted(meta):
        if k != "variants":
            md.append("- %s: %s" % (k, json.dumps(meta[k]) if not isinstance(meta[k], str)
                                    else meta[k]))
    md += ["", "Ratios (x dl) are divided by mq-deadline of the same kernel, model and job "
           "in this run. Latency is fio completion latency over all clones (p99/p99.9 exact "
           "from merged json+ histograms, else the largest clone's, marked *). "
           "fwd = forward dispatches / dispatches from blktrace D events; in-order = "
           "(forward + C-LOOK wraps) / dispatches; D2C split by the sign of the address delta "
           "from the end of the previous dispatch (definitions: tools/analysis/fwdlib.py).", ""]
    summary = dict(meta=meta, jobs=[])

    for (kver, model, job), dirs in sorted(found.items(),
                                           key=lambda kv: (version_key(kv[0][0]),) + kv[0][1:]):
        scheds = sorted(dirs, key=sched_key)
        res = {s: analyse_sched(dirs[s], notes, "%s/%s/%s/%s" % (kver, model, job, s))
               for s in scheds}
        base = res.get(BASELINE)
        if base is None:
            notes.append("%s/%s/%s: no mq-deadline, ratios n/a" % (kver, model, job))
        md += ["## %s / %s / %s" % (kver, model, job), ""]
        jsum = dict(kver=kver, model=model, job=job, scheds={})

        rows = []
        for s in scheds:
            r = res[s]
            row = [s]
            js = dict()
            for key, spec in (("iops", "%.0f"), ("mean_us", "%.1f"), ("p99_us", "%.1f"),
                              ("p999_us", "%.1f")):
                v = fio_fig(r, key)
                b = fio_fig(base, key) if base else None
                js[key] = v
                js[key + "_x_dl"] = ratio(v, b)
                cell = fmt(v, spec)
                if key in ("p99_us", "p999_us") and v is not None and \
                        not r["fio"]["total"].get("pct_exact", True):
                    cell += "*"
                row += [cell, fmt(ratio(v, b), "%.2f")]
            for key in ("jain_threads", "jain_processes"):
                js[key] = fio_fig(r, key)
                row.append(fmt(js[key], "%.3f"))
            rows.append(row)
            jsum["scheds"][s] = js
        md += ["### Throughput, latency and fairness", ""]
        md += table(["scheduler", "IOPS", "x dl", "mean µs", "x dl", "p99 µs", "x dl",
                     "p99.9 µs", "x dl", "J threads", "J procs"], rows)
        md.append("")

        rows = []
        for s in scheds:
            r, js = res[s], jsum["scheds"][s]
            o = r["order"]
            ff = get(o, "forward_fraction")
            js.update(order=o, d2c=r["d2c"], service=r["service"],
                      service_src=r["service_src"], kernel_order=r["kernel_order"],
                      forward_fraction_x_dl=ratio(ff, get(base, "order", "forward_fraction")))
            rows.append([s, fmt(get(o, "dispatches"), "%d"), fmt(ff, "%.3f"),
                         fmt(js["forward_fraction_x_dl"], "%.2f"),
                         fmt(get(o, "in_order_fraction"), "%.3f"),
                         fmt(get(o, "wraps"), "%d"), fmt(get(o, "other_backward"), "%d"),
                         fmt(get(r, "kernel_order", "forward_fraction"), "%.3f"),
                         fmt(get(r, "d2c", "pos", "mean_us")),
                         fmt(get(r, "d2c", "neg", "mean_us")),
                         fmt(get(r, "d2c", "neg_over_pos"), "%.2f"),
                         fmt(get(r, "service", "pos", "mean_us")),
                         fmt(get(r, "service", "neg", "mean_us")),
                         fmt(get(r, "service", "neg_over_pos"), "%.2f"),
                         r["service_src"] or "n/a"])
        rounds = {s: round_iops(dirs[s], fio_fig(res[s], "iops"), notes,
                                "%s/%s/%s/%s" % (kver, model, job, s))
                  for s in scheds}
        md += rounds_section({s: v for s, v in rounds.items() if v}, scheds, jsum)

        md += ["### Dispatch order and service time by delta sign", ""]
        if not any(r["order"] or r["service"] or r["kernel_order"] for r in res.values()):
            md += ["n/a (no blk.txt, mmc-history.txt or debugfs.txt)", ""]
            rows = None
        if rows:
            md += table(["scheduler", "dispatches", "fwd", "x dl", "in-order", "wraps",
                     "other back", "fwd (debugfs)", "D2C Δ>0 µs", "D2C Δ<0 µs", "Δ<0/Δ>0",
                     "svc Δ>0 µs", "svc Δ<0 µs", "Δ<0/Δ>0", "svc source"], rows)
            md.append("")

        procs = []
        for s in scheds:
            for p in get(res[s], "fio", "processes") or []:
                if p["name"] not in procs:
                    procs.append(p["name"])
        if len(procs) > 1:
            head, rows = ["scheduler"], []
            for n in procs:
                head += ["%s IOPS" % n, "%s p99 µs" % n, "x dl"]
            for s in scheds:
                row = [s]
                per = {}
                for n in procs:
                    p = [x for x in get(res[s], "fio", "processes") or [] if x["name"] == n]
                    b = [x for x in get(base, "fio", "processes") or [] if x["name"] == n]
                    v = p[0] if p else {}
                    bp = b[0]["p99_us"] if b else None
                    row += [fmt(v.get("iops"), "%.0f"), fmt(v.get("p99_us")),
                            fmt(ratio(v.get("p99_us"), bp), "%.2f")]
                    per[n] = dict(iops=v.get("iops"), p99_us=v.get("p99_us"),
                                  p99_x_dl=ratio(v.get("p99_us"), bp))
                jsum["scheds"][s]["processes"] = per
                rows.append(row)
            md += ["### Per process", ""] + table(head, rows) + [""]

        # J against a fwdsched tunable
        sweeps = {}
        for s in scheds:
            v = variant_of(s, meta)
            if v:
                sweeps.setdefault(v[0], []).append(
                    (v[1], jsum["scheds"][s]["jain_threads"],
                     jsum["scheds"][s]["jain_processes"], jsum["scheds"][s]["iops_x_dl"], s))
        jsum["sweeps"] = {}
        for tun, pts in sorted(sweeps.items()):
            pts.sort()
            jsum["sweeps"][tun] = [dict(value=p[0], jain_threads=p[1], jain_processes=p[2],
                                        iops_x_dl=p[3], sched=p[4]) for p in pts]
            md += ["### Fairness against `%s`" % tun, ""]
            md += table([tun, "scheduler", "J threads", "J procs", "IOPS x dl"],
                        [[("%g" % p[0]), p[4], fmt(p[1], "%.3f"), fmt(p[2], "%.3f"),
                          fmt(p[3], "%.2f")] for p in pts])
            md.append("")

        if plots:
            stem = re.sub(r"[^A-Za-z0-9._-]+", "_", "%s_%s_%s" % (kver, model, job))
            title = "%s / %s / %s" % (kver, model, job)
            figs = [("IOPS per scheduler (Fig 2/3)", stem + "_iops.png", plot_bars),
                    ("Issue time vs address (Fig 4)", stem + "_fig4.png", plot_issue_vs_addr),
                    ("Address delta vs service time (Fig 5/6)", stem + "_fig5.png",
                     plot_delta_vs_service)]
            made = []
            for cap, name, fn in figs:
                try:
                    if fn(os.path.join(plot_dir, name), title, res, scheds):
                        made.append((cap, name))
                except Exception as e:  # a bad plot must not lose the report
                    notes.append("%s: plot %s: %s" % (title, name, e))
            for tun, pts in sorted(sweeps.items()):
                name = "%s_jain_%s.png" % (stem, tun)
                try:
                    if plot_jain_sweep(os.path.join(plot_dir, name),
                                       "%s: J vs %s" % (title, tun), tun, sorted(pts)):
                        made.append(("J against %s" % tun, name))
                except Exception as e:
                    notes.append("%s: plot %s: %s" % (title, name, e))
            jsum["plots"] = [n for _, n in made]
            for cap, name in made:
                md += ["![%s](plots/%s)" % (cap, name), ""]
        summary["jobs"].append(jsum)

    # Related jobs side by side: fig2-sort, fig2-shuffle, fig2-rand, ...
    fams = {}
    for j in summary["jobs"]:
        if "-" in j["job"]:
            fam, rest = j["job"].split("-", 1)
            fams.setdefault((j["kver"], j["model"], fam), []).append(
                (rest, {s: v["iops"] for s, v in j["scheds"].items()
                        if v.get("iops") is not None}))
    summary["families"] = []
    for (kver, model, fam), jobs in sorted(fams.items(),
                                           key=lambda kv: (version_key(kv[0][0]),) + kv[0][1:]):
        if len(jobs) < 2 or not any(v for _, v in jobs):
            continue
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", "%s_%s_%s-family" % (kver, model, fam))
        entry = dict(kver=kver, model=model, family=fam, jobs=[lab for lab, _ in jobs])
        md += ["## %s / %s / %s-*: IOPS side by side" % (kver, model, fam), ""]
        scheds = sorted({s for _, v in jobs for s in v}, key=sched_key)
        md += table(["job"] + scheds,
                    [[fam + "-" + lab] + [fmt(v.get(s), "%.0f") for s in scheds]
                     for lab, v in jobs])
        md.append("")
        if plots:
            name = stem + ".png"
            try:
                plot_family(os.path.join(plot_dir, name), "%s / %s / %s-*" % (kver, model, fam),
                            jobs)
                entry["plot"] = name
                md += ["![%s jobs](plots/%s)" % (fam, name), ""]
            except Exception as e:
                notes.append("plot %s: %s" % (name, e))
        summary["families"].append(entry)

    md += ["## Notes", ""]
    md += ["- %s" % n for n in notes] if notes else ["- none"]
    md.append("")
    summary["notes"] = notes
    out_md = out_md or os.path.join(root, "report.md")
    with open(out_md, "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(os.path.dirname(out_md) or ".", "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return out_md, summary


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    plots, out, args = True, None, []
    it = iter(argv)
    for a in it:
        if a == "--no-plots":
            plots = False
        elif a == "-o":
            out = next(it, None)
            if out is None:
                print("fwdreport: -o needs a file name", file=sys.stderr)
                return 2
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            args.append(a)
    if len(args) != 1:
        print("usage: fwdreport.py [--no-plots] [-o REPORT.md] RESULTS_DIR", file=sys.stderr)
        return 2
    root = args[0]
    if not os.path.isdir(root):
        print("fwdreport: %s: no such results directory" % root, file=sys.stderr)
        return 2
    try:
        path, summary = build(root, plots=plots, out_md=out)
    except fwdlib.InputError as e:
        print("fwdreport: %s" % e, file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
