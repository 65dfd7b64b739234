#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""clusterreport: the report of a make cluster run (tools/cluster).

usage: clusterreport.py DIR [--no-plots]

Reads DIR/plan.json (tools/analysis/clusterplan.py) and what
tools/guest/cluster.sh recorded, and writes DIR/report.md (its target
table between the markers that tools/analysis/publish.py copies into
BENCHMARKS.md), DIR/summary.json and DIR/plots/cluster-scaling.png.
Exit 1 when the mapping check, the failure case or the teardown failed,
2 when the run cannot be read.

Per run, from its records:
  reads/s        fio's reads over its runtime (wall clock, under TCG)
  device-bound   reads / the busiest node's modelled busy time: what the
                 cluster gives when only the cards cost time, the nodes
                 working in parallel
  link-bound     reads / the link's airtime (frames x the per-frame cost
                 + bytes at the link rate; shaped links only): what the shared
                 link alone allows
  frames/read    frames on the node links (both directions) per read
  CPU            the guest's CPUs busy over the run (from /proc/stat)
  device IOPS    per node: modelled commands / busy time
Figures over rounds are medians with a distribution-free interval
(benchstats.py); a ratio is paired by round.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "flashcard"))
import benchplan  # noqa: E402  (the git state, shared with bench)
import benchstats as bs  # noqa: E402
import costmodel  # noqa: E402
import fwdlib  # noqa: E402

from publish import BEGIN, END, RUNS_BEGIN, RUNS_END  # noqa: E402
SCALE_TARGET = 6.0


class ReadError(Exception):
    pass


def _load(path):
    with open(path) as f:
        return json.load(f)


def _read(path):
    with open(path) as f:
        return f.read()


def _cpu_busy(before, after):
    """Busy fraction of all CPUs between two /proc/stat 'cpu' lines."""
    a = [int(x) for x in before.split()[1:]]
    b = [int(x) for x in after.split()[1:]]
    d = [y - x for x, y in zip(a, b)]
    total = sum(d[:8])
    idle = d[3] + (d[4] if len(d) > 4 else 0)
    return (total - idle) / total if total > 0 else None


def _links(doc, n):
    """{frames, bytes} summed over the node links m0..m<n-1>, both
    directions, from 'ip -s -j link show'."""
    want = {"m%d" % k for k in range(n)}
    frames = nbytes = 0
    seen = set()
    for link in doc:
        name = link.get("ifname", "")
        if name in want:
            st = link.get("stats64") or link.get("stats") or {}
            for d in ("rx", "tx"):
                frames += st.get(d, {}).get("packets", 0)
                nbytes += st.get(d, {}).get("bytes", 0)
            seen.add(name)
    if seen != want:
        raise ReadError("link counters lack %s" % ", ".join(sorted(want - seen)))
    return frames, nbytes


def run_metrics(root, run, plan):
    """The figures of one run, or (None, note) when it cannot be read."""
    d = os.path.join(root, "runs", run["id"])
    try:
        st = _load(os.path.join(d, "run.json"))
    except (OSError, ValueError) as e:
        return None, "%s: no usable run.json (%s)" % (run["id"], e.__class__.__name__)
    if st.get("status") != "ok":
        return None, "%s: %s: %s" % (run["id"], st.get("status"), st.get("error"))
    try:
        fio = fwdlib.load_fio_json(os.path.join(d, "fio.json"))
        jobs = fio["jobs"]
        reads = sum(j["read"]["total_ios"] for j in jobs)
        errors = sum(1 for j in jobs if j.get("error"))
        runtime_s = max(j["read"]["runtime"] for j in jobs) / 1000.0
        n = run["nodes"]
        busy, cmds, fwd, back = [], [], 0, 0
        for k in range(n):
            b, a = (costmodel.parse_control(_read(os.path.join(
                d, "card-%d-%s.json" % (k, tag)))) for tag in ("before", "after"))
            t = costmodel.diff_totals(b["totals"], a["totals"])
            busy.append(t["busy_us"])
            cmds.append(t["commands"])
            rd = t.get("read", {})
            fwd += rd.get("forward", {}).get("commands", 0)
            back += rd.get("backward", {}).get("commands", 0)
        f0, b0 = _links(_load(os.path.join(d, "link-before.json")), n)
        f1, b1 = _links(_load(os.path.join(d, "link-after.json")), n)
        c0 = _read(os.path.join(d, "cpu-before.txt"))
        c1 = _read(os.path.join(d, "cpu-after.txt"))
    except (OSError, ValueError, KeyError, TypeError, ReadError, fwdlib.InputError) as e:
        return None, "%s: records unusable (%s)" % (run["id"], e)
    if errors:
        return None, "%s: %d fio jobs failed" % (run["id"], errors)
    if not reads or runtime_s <= 0 or max(busy) <= 0:
        return None, "%s: no reads recorded" % run["id"]
    frames, nbytes = f1 - f0, b1 - b0
    # fio's mean completion latency, over all nodes' reads
    lat = [(j["read"]["total_ios"], j["read"].get("clat_ns", {}).get("mean"))
           for j in jobs]
    lat_ms = (sum(k * v for k, v in lat) / reads / 1e6
              if all(v is not None for _, v in lat) else None)
    m = dict(reads=reads, iops=reads / runtime_s, lat_ms=lat_ms,
             fwd_fraction=fwd / (fwd + back) if fwd + back else None,
             device_bound=reads / (max(busy) / 1e6),
             device_util=sum(busy) / 1e6 / (n * runtime_s),
             frames_per_read=frames / reads, bytes_per_read=nbytes / reads,
             cpu=_cpu_busy(c0, c1),
             node_device_iops=[c / (u / 1e6) if u > 0 else None
                               for c, u in zip(cmds, busy)])
    lp = plan.get("link_params")
    if lp:
        air_us = frames * lp["frame_us"] + nbytes * 8000.0 / lp["rate_kbit"]
        m["link_bound"] = reads / (air_us / 1e6) if air_us > 0 else None
    return m, None


def cells(root, plan):
    """{(nodes, batch, sched): {round: metrics}} and the notes."""
    out, notes = {}, []
    for run in plan["runs"]:
        m, note = run_metrics(root, run, plan)
        if note:
            notes.append(note)
            continue
        out.setdefault((run["nodes"], run["batch"], run["sched"]), {})[run["round"]] = m
    return out, notes


def metric(c, key):
    return {r: m.get(key) for r, m in c.items() if m.get(key) is not None}


def targets(plan, cs):
    """The target rows: dicts target, where, value (interval), verdict."""
    rows = []
    n_lo, n_hi = plan["nodes"][0], plan["nodes"][-1]
    scheds = plan["scheds"]
    for b in plan["batch"]:
        if b < 10 or n_lo == n_hi:
            continue
        for x in scheds:
            lo, hi = cs.get((n_lo, b, x)), cs.get((n_hi, b, x))
            iv = bs.ratio_interval(metric(hi or {}, "device_bound"),
                                   metric(lo or {}, "device_bound")) if lo and hi else None
            rows.append(dict(target="device-bound scaling, %d to %d nodes >= %g x" % (
                n_lo, n_hi, SCALE_TARGET), where="batch %d, %s" % (b, x),
                iv=iv, verdict=bs.judge(iv, ">=", SCALE_TARGET) or "unresolved"))
    b1, bmax = plan["batch"][0], plan["batch"][-1]
    if plan.get("link_params") and b1 < bmax:
        for x in scheds:
            one, many = cs.get((n_hi, b1, x)), cs.get((n_hi, bmax, x))
            iv = bs.ratio_interval(metric(one or {}, "frames_per_read"),
                                   metric(many or {}, "frames_per_read")) \
                if one and many else None
            rows.append(dict(target="frames per read, batch %d / batch %d >= 2" % (b1, bmax),
                             where="%d nodes, %s" % (n_hi, x), iv=iv,
                             verdict=bs.judge(iv, ">=", 2.0) or "unresolved"))
            if one:
                lb, db = metric(one, "link_bound"), metric(one, "device_bound")
                iv = bs.ratio_interval(lb, db)
                rows.append(dict(target="unbatched: link-bound / device-bound < 1 "
                                 "(the packet bottleneck)",
                                 where="batch %d, %d nodes, %s" % (b1, n_hi, x), iv=iv,
                                 verdict=bs.judge(iv, "<", 1.0) or "unresolved"))
    if "fwdsched" in scheds and "mq-deadline" in scheds:
        for b in plan["batch"]:
            ratios = []
            for n in plan["nodes"]:
                f, q = cs.get((n, b, "fwdsched"), {}), cs.get((n, b, "mq-deadline"), {})
                for r in f:
                    if r not in q:
                        continue
                    for a, c in zip(f[r]["node_device_iops"], q[r]["node_device_iops"]):
                        if a and c:
                            ratios.append(a / c)
            iv = bs.interval(ratios) if ratios else None
            rows.append(dict(target="per node device IOPS, fwdsched / mq-deadline > 1",
                             where="batch %d (every node, node count, round)" % b,
                             iv=iv, verdict=bs.judge(iv, ">", 1.0) or "unresolved"))
    return rows


def checks(root):
    """The mapping, failure and teardown checks: list of (name, ok, text)."""
    out = []
    try:
        mp = _load(os.path.join(root, "mapping.json"))
        out.append(("mapping", mp["checked"] > 0 and not mp["errors"],
                    "%d blocks written through the master at both ends of every "
                    "node's range; misplaced: %s" % (
                        mp["checked"], "; ".join(mp["errors"]) or "none")))
    except (OSError, ValueError, KeyError) as e:
        out.append(("mapping", False, "no mapping record (%s)" % e))
    try:
        fl = _load(os.path.join(root, "failure", "failure.json"))
        # fio writes its I/O errors into the output file before the JSON
        fio = fwdlib.load_fio_json(os.path.join(root, "failure", "fio.json"))
        jobs = {j["jobname"]: j for j in fio["jobs"]}
        bad = jobs.get("node%d" % fl["node"])
        bound = fl["timeout"] + 10
        # fio's JSON has the time it ended; its jobs started together, and
        # the longest ran to that end
        lat = None
        if bad and fio.get("timestamp_ms"):
            start = (fio["timestamp_ms"] - max(j["read"]["runtime"]
                                               for j in jobs.values())) / 1000.0
            lat = start + bad["read"]["runtime"] / 1000.0 - fl["down"]
        others = [j for name, j in jobs.items() if name != "node%d" % fl["node"]]
        others_ok = all(not j.get("error") and j["read"]["runtime"] >=
                        (fl["runtime"] - 1) * 1000 for j in others)
        sched_ok = fl.get("sched_set", "ok") == "ok"
        ok = (fl["fio_exit"] not in (124, 137) and bad is not None and
              bad.get("error") and lat is not None and lat <= bound and others_ok and
              fl["read_after_exit"] != 0 and fl["read_after_s"] <= bound and sched_ok)
        out.append(("failure", bool(ok),
                    ("" if sched_ok else
                     "%s not set on every node; " % fl.get("sched", "the scheduler")) +
                    "node %d's link down %d s into a %d s run of %d nodes: its reads "
                    "ended with error %s %.1f s later (bound %d s: the NBD timeout "
                    "%d s + 10 s); the other %d nodes %s; fio exited %d; a read of "
                    "the failed node afterwards failed (exit %d) in %.1f s" % (
                        fl["node"], round(fl["down"] - fl["start"]), fl["runtime"],
                        fl["nodes"], bad.get("error") if bad else "n/a",
                        lat if lat is not None else float("nan"), bound, fl["timeout"],
                        len(others), "read to the end without error" if others_ok
                        else "did NOT all read to the end without error",
                        fl["fio_exit"], fl["read_after_exit"], fl["read_after_s"])))
    except (OSError, ValueError, KeyError, TypeError, fwdlib.InputError) as e:
        out.append(("failure", False, "no usable failure record (%s)" % e))
    try:
        td = _load(os.path.join(root, "teardown.json"))
        failed = [s["step"] for s in td["steps"] if s["exit"] != 0]
        slow = max(s["s"] for s in td["steps"])
        ok = not failed and not td["namespaces_left"] and not \
            td["nbd_still_connected"] and not td["dm_left"]
        out.append(("teardown", ok, "%d steps, failed: %s; slowest %.1f s; %d namespaces, "
                    "%d NBD connections, %d dm devices left" % (
                        len(td["steps"]), ", ".join(failed) or "none", slow,
                        td["namespaces_left"], td["nbd_still_connected"], td["dm_left"])))
    except (OSError, ValueError, KeyError) as e:
        out.append(("teardown", False, "no usable teardown record (%s)" % e))
    return out


def _fmt(iv, spec="%.0f"):
    return bs.fmt_interval(iv, spec) if iv else "n/a"


def plot(root, plan, cs):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    keys = [("iops", "reads/s (wall clock, TCG)"),
            ("device_bound", "device-bound reads/s")]
    if plan.get("link_params"):
        keys.append(("link_bound", "link-bound reads/s"))
    fig, axes = plt.subplots(len(keys), len(plan["batch"]), squeeze=False,
                             figsize=(4 * len(plan["batch"]), 3 * len(keys)))
    for i, (k, label) in enumerate(keys):
        for j, b in enumerate(plan["batch"]):
            ax = axes[i][j]
            for x in plan["scheds"]:
                xs, ys = [], []
                for n in plan["nodes"]:
                    iv = bs.interval(list(metric(cs.get((n, b, x), {}), k).values()))
                    if iv["median"] is not None:
                        xs.append(n)
                        ys.append(iv["median"])
                ax.plot(xs, ys, marker="o", label=x)
            ax.set_xlabel("nodes")
            ax.set_xticks(plan["nodes"])
            ax.set_ylim(bottom=0)
            ax.set_title("%s, batch %d" % (label, b), fontsize=9)
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.join(root, "plots"), exist_ok=True)
    path = os.path.join(root, "plots", "cluster-scaling.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return "plots/cluster-scaling.png"


def build(root, plots=True):
    try:
        plan = _load(os.path.join(root, "plan.json"))
    except (OSError, ValueError) as e:
        raise ReadError("%s: no usable plan.json (%s)" % (root, e)) from None
    cs, notes = cells(root, plan)
    rows = targets(plan, cs)
    chk = checks(root)
    g = benchplan.git_state()
    md = ["# make cluster — %s" % plan["created"], "",
          "- commit `%s`%s; command `%s`" % (plan["commit"], " (uncommitted changes)"
                                             if plan.get("dirty") else "", plan["command"]),
          "- this report written at commit `%s`%s" % (
              g.get("commit"), " (uncommitted changes)" if g.get("dirty") else ""),
          "- kernel %s; nodes %s; reads in flight per node %s; %d NBD connection(s) "
          "per node; link `%s`%s; card `%s`; %d round(s) of %d s; reads of %d bytes" % (
              plan["kver"], "/".join(map(str, plan["nodes"])),
              "/".join(map(str, plan["batch"])), plan["conns"], plan["link"],
              " (%(rate_kbit)d kbit/s, %(frame_us)d us a frame, %(delay_ms)d ms one way)" %
              plan["link_params"] if plan.get("link_params") else "", plan["card"],
              plan["rounds"], plan["runtime"], plan["bs"]),
          "- packing `%s` (%s); fwdsched's dispatch_depth on every node's NBD "
          "device %s" % (
              plan.get("packing", "nodelay"),
              "Nagle's algorithm kept on in nbdkit and nbd-client: the requests and "
              "replies in flight share frames" if plan.get("packing") == "nagle" else
              "TCP_NODELAY as the engines ship: a frame per request and per reply",
              "%d" % plan["fwd_depth"] if plan.get("fwd_depth") else
              "0 (no limit: every request goes to the NBD device at once)"),
          "- medians over rounds with their interval [lo, hi]; a ratio whose "
          "interval spans its bound is unresolved", "",
          "## Targets", "", BEGIN, "",
          "| target | where | value | verdict |", "|---|---|---|---|"]
    for r in rows:
        md.append("| %s | %s | %s | %s |" % (r["target"], r["where"],
                                             _fmt(r["iv"], "%.2f"), r["verdict"]))
    for name, ok, text in chk:
        md.append("| %s check | | %s | %s |" % (name, text, "passed" if ok else "FAILED"))
    md += ["", END, ""]
    md += ["## Runs", "",
           "Latency: fio's mean completion latency of a read, in ms. Forward: the "
           "share of the cards' read commands that moved forward from the one "
           "before (the paper card serves those faster; at random, about half). "
           "Once reads wait in fwdsched longer than its read_expire (500 ms by "
           "default), it serves the oldest first, in arrival order, as its deadline "
           "promises; so where the latency exceeds that, fwdsched's forward share "
           "and device-bound rate fall back towards the others'.", "",
           RUNS_BEGIN, "",
           "| nodes | batch | scheduler | reads/s (wall) | device-bound | link-bound | "
           "frames/read | latency ms | forward | device busy | CPU busy |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    summary = {"targets": [], "checks": [], "cells": [],
               "report_commit": g.get("commit"), "report_dirty": g.get("dirty")}
    for (n, b, x), c in sorted(cs.items(), key=lambda kv: (kv[0][1], kv[0][0],
                                                            plan["scheds"].index(kv[0][2]))):
        ivs = {k: bs.interval(list(metric(c, k).values())) for k in
               ("iops", "device_bound", "link_bound", "frames_per_read",
                "lat_ms", "fwd_fraction", "device_util", "cpu")}
        md.append("| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            n, b, x, _fmt(ivs["iops"]), _fmt(ivs["device_bound"]),
            _fmt(ivs["link_bound"]), _fmt(ivs["frames_per_read"], "%.2f"),
            _fmt(ivs["lat_ms"]), _fmt(ivs["fwd_fraction"], "%.2f"),
            _fmt(ivs["device_util"], "%.2f"), _fmt(ivs["cpu"], "%.2f")))
        summary["cells"].append(dict(nodes=n, batch=b, sched=x, **ivs))
    md += ["", RUNS_END]
    p = plot(root, plan, cs) if plots else None
    if p:
        md += ["", "![reads/s against nodes](%s)" % p]
    if notes:
        md += ["", "## Notes", ""] + ["- %s" % x for x in notes]
    md.append("")
    summary["targets"] = [dict(target=r["target"], where=r["where"], verdict=r["verdict"],
                               **({k: r["iv"][k] for k in ("n", "median", "lo", "hi")}
                                  if r["iv"] else {})) for r in rows]
    summary["checks"] = [dict(name=a, ok=b, text=t) for a, b, t in chk]
    summary["notes"] = notes
    with open(os.path.join(root, "report.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(root, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return summary


def main(argv):
    args = [a for a in argv[1:] if a != "--no-plots"]
    if len(args) != 1:
        print("usage: clusterreport.py DIR [--no-plots]", file=sys.stderr)
        return 2
    try:
        s = build(args[0], plots="--no-plots" not in argv)
    except ReadError as e:
        print("clusterreport: %s" % e, file=sys.stderr)
        return 2
    print("clusterreport: %s/report.md" % args[0])
    return 0 if all(c["ok"] for c in s["checks"]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
