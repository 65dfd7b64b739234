#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""report: report.md, summary.json and plots of a tools/bench run.

usage: report.py [--no-plots] [--targets FILE] [-o REPORT.md] RESULTS_DIR

RESULTS_DIR is one run of tools/bench, results/<timestamp>/:

  plan.json                      what was run (benchplan.py): boots, runs
  runs/<run id>/run.json         status of the run; then, as the plan's
                fio.json           "record" asked: fio JSON (json+)
                bg.json            the background's fio JSON (start-up runs)
                window.json        the background's throughput window
                app.json           the real program's start-up
                card-before.json   the flash card's totals (control window)
                card-after.json      before and after the run
                diskstats-before.txt, diskstats-after.txt
                blk.txt            blkparse text (fwdlib.BLKPARSE_FMT)
                mmc-history.txt    the MMC history
                debugfs-stats.txt, debugfs-procs.txt
                fairness.txt       Jain's index over debugfs-procs.txt
                                   (tools/fwdtop --once)

Every number comes from the plan's fields and the records of the run ids
it names; no directory or run name is parsed.  Targets come from
fio-jobs/targets.json (--targets to use another file).  Writes
RESULTS_DIR/report.md, summary.json (every number) and plots/*.png.
Exit status 0, or 2 when the plan is missing or unreadable.

Per-round values (METRICS), medians over rounds and intervals
(benchstats.py); a ratio pairs the runs of one round.
"""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "tools", "flashcard"))
import benchstats as bs  # noqa: E402
import costmodel  # noqa: E402
import frontier  # noqa: E402
import fwdlib  # noqa: E402
import mmchist  # noqa: E402
import publish  # noqa: E402

TARGETS = os.path.join(TOP, "fio-jobs", "targets.json")
SIGNS = costmodel.SIGNS
FIG4_POINTS = 300        # a short window, so that sweeps show as saw teeth

METRICS = {
    # headline, nullb-cpu (each variant) and the papers' figures
    "iops": "wall-clock IOPS (fio, all processes)",
    "device_iops": "modelled device IOPS: model commands ÷ modelled busy "
                   "time of the run (flash card)",
    "forward_fraction": "forward dispatches ÷ dispatches (blktrace D)",
    "p99_us": "p99 completion latency (fio), µs",
    # twoproc and deep-nullb
    "sync_iops": "the synchronous reader's IOPS",
    "deep_iops": "the deep reader's IOPS",
    "total_iops": "both readers' IOPS",
    "sync_alone": "the synchronous reader's IOPS alone (same round)",
    "sync_think_us": "the synchronous reader's mean think time (completion "
                     "to next request) as fwdsched measured it, µs "
                     "(debugfs procs at the end of the run)",
    "sync_wait_x_alone": "the wait ratio: the synchronous reader's mean "
                         "completion latency (fio) ÷ its latency alone (same "
                         "round, the same reads): what the scheduler added to "
                         "each of its requests",
    "sync_share_fraction": "the synchronous reader's IOPS ÷ its max-min "
                           "share (its rate alone, or half the total if less)",
    "frontier_iops": "the frontier: the most modelled device IOPS that any "
                     "dispatch policy, or two in turn, reaches with the "
                     "synchronous reader at frontier_share or more "
                     "(frontier.py: the card's cost model, the variant's "
                     "regions, frontier_think_us and frontier_emu_us)",
    "frontier_share": "the share the frontier is taken at: the arm's "
                      "sync_share_fraction, but at most the largest share "
                      "of a policy that leaves the deep reader its own "
                      "(frontier.judged_share)",
    "frontier_fraction": "modelled device IOPS ÷ frontier_iops (same round)",
    "frontier_think_us": "the think time the frontier is computed at: the "
                         "synchronous reader's cycle alone minus its fio "
                         "latency alone, µs (median over rounds)",
    "frontier_emu_us": "the host's cost a command the frontier is computed "
                       "at: the synchronous reader's fio latency alone minus "
                       "its modelled service time, µs (median over rounds)",
    "sync_device_us": "the synchronous reader's modelled device time a "
                      "command, µs: the card's cost model charged along the "
                      "traced dispatch order, its dispatches by the pid that "
                      "submitted them (blktrace: traced rounds only)",
    "deep_device_us": "the deep reader's modelled device time a command, µs "
                      "(as sync_device_us)",
    "sync_device_share": "the synchronous reader's part of the two readers' "
                         "modelled device time (traced rounds only)",
    "traced_x_card": "modelled device time of the traced dispatches ÷ the "
                     "card's counters: how much of the card's work the "
                     "attribution covers (traced rounds only)",
    "deep_share_fraction": "the deep reader's IOPS ÷ its share (the total "
                           "minus the synchronous reader's share)",
    "jain_raw": "Jain's index over the two processes' IOPS (the papers')",
    "jain_share": "Jain's index over IOPS ÷ share",
    "deep_alone": "the deep reader's IOPS alone (same round, same arm)",
    "deep_kept": "the deep reader's IOPS with the synchronous reader ÷ "
                 "alone",
    # responsiveness
    "fg_iops": "the synthetic start-up's reads per second over its fixed "
               "window (fio)",
    "startup_x_idle": "the synthetic start-up's slow-down: idle reads/s ÷ "
                      "reads/s (same arm, same round): how much longer the "
                      "same reads take",
    "fg_p99_us": "the synthetic start-up's p99 read latency, µs",
    "app_s": "the real program's start-up, s (at least its limit when it "
             "reached it)",
    "app_x_idle": "the real program's start-up ÷ its idle start-up (same "
                  "arm, same round)",
    "app_reads": "the real program's reads reaching the device (its "
                 "partition's /proc/diskstats)",
    "bg_write_bps": "background writes reaching the device in the "
                    "window, bytes/s (diskstats)",
    "bg_read_iops": "background reads completed in the window, per s "
                    "(diskstats, the start-ups' reads taken out)",
}


class ReportError(Exception):
    pass


# Per-round values that are only lower bounds (a start-up stopped at its
# time limit) are listed under CENSORED + metric.  They stay in medians
# and intervals of the metric itself (as lower bounds: a start-up "at
# least 15 s" is judged against "at most 1.5x idle" correctly), but a
# ratio between two arms leaves out the rounds where either is censored.
CENSORED = "censored:"


# ---------------------------------------------------------------- records

def _load_json(path):
    with open(path) as f:
        return json.load(f)


def card_device_time(before, after):
    """Device time of a run from two control-window documents; ValueError
    when they do not hold the card's totals."""
    try:
        d = costmodel.diff_totals(before["totals"], after["totals"])
        d["commands"], d["busy_us"], d["read"], d["write"]
    except (KeyError, TypeError, AttributeError) as e:
        raise ValueError("no card totals (%s)" % e) from None
    out = {"commands": d["commands"], "busy_us": d["busy_us"],
           "device_iops": (d["commands"] / d["busy_us"] * 1e6
                           if d["busy_us"] > 0 else None),
           "by_sign": {}}
    for g in SIGNS:
        n = sum(d[k][g]["commands"] for k in costmodel.KINDS)
        us = sum(d[k][g]["busy_us"] for k in costmodel.KINDS)
        out["by_sign"][g] = {"commands": n, "busy_us": us,
                             "mean_us": us / n if n else None}
    out["read"] = d["read"]
    out["write"] = d["write"]
    return out


def fio_runtime_s(doc, names=None):
    """Longest job runtime of a fio document (seconds)."""
    best = None
    for j in doc["jobs"]:
        if names and j.get("jobname") not in names:
            continue
        ms = j.get("job_runtime")
        if ms is None:
            ms = max(j.get(d, {}).get("runtime", 0) for d in ("read", "write"))
        best = ms if best is None else max(best, ms)
    return None if best is None else best / 1000.0


def summarize_waits(recs):
    done = [r for r in recs if r["d_ns"] is not None]
    n = len(done)
    if not n:
        return None
    mean = lambda xs: sum(xs) / len(xs) if xs else None
    return dict(n=len(recs), dispatched=n,
                wait_us=mean([(r["d_ns"] - r["i_ns"]) / 1e3 for r in done]),
                service_us=mean([(r["c_ns"] - r["d_ns"]) / 1e3 for r in done
                                 if r["c_ns"] is not None]),
                reads=mean([r["reads"] for r in done]),
                writes=mean([r["writes"] for r in done]),
                write_in_flight=mean([1.0 if r["write_in_flight"] else 0.0
                                      for r in recs]))


def run_record(root, run, notes, keep_traces=False):
    """Numbers of one run from its records; None when it has none."""
    d = os.path.join(root, "runs", run["id"])
    label = "%s (%s)" % (run["id"], run["label"])
    try:
        st = _load_json(os.path.join(d, "run.json"))
    except (OSError, ValueError) as e:
        notes.append("%s: no usable run.json (%s): not run or lost" %
                     (label, e.__class__.__name__))
        return None
    if st.get("status") != "ok":
        notes.append("%s: %s: %s" % (label, st.get("status"),
                                     st.get("error", "")))
        return None
    m = {"tunables_read": st.get("tunables_read")}
    rec = set(run["record"])
    if st.get("blktrace_dropped"):
        notes.append("%s: blktrace dropped %s events: its order figures "
                     "come from an incomplete trace" %
                     (label, st["blktrace_dropped"]))
    fpath = os.path.join(d, "fio.json")
    try:
        doc = fwdlib.load_fio_json(fpath)
        fio = fwdlib.parse_fio(doc)
        m["iops"] = fio["total"]["iops"]
        m["p99_us"] = fio["total"]["p99_us"]
        m["procs"] = {p["name"]: {"iops": p["iops"], "p99_us": p["p99_us"],
                                  "mean_us": p["mean_us"], "ios": p["ios"]}
                      for p in fio["processes"]}
        m["runtime_s"] = fio_runtime_s(doc)
        m["jain_threads"] = fio["jain_threads"]
    except fwdlib.InputError as e:
        notes.append("%s: %s" % (label, str(e).replace(root + "/", "")))
        return None
    if "card" in rec:
        try:
            docs = []
            for name in ("card-before.json", "card-after.json"):
                with open(os.path.join(d, name), "rb") as f:
                    docs.append(costmodel.parse_control(f.read()))
            m["device"] = card_device_time(*docs)
        except (OSError, ValueError) as e:
            notes.append("%s: card counters unusable (%s)" % (label, e))
    if "blktrace" in rec:
        p = os.path.join(d, "blk.txt")
        try:
            ev = fwdlib.parse_blkparse(p)
            m["order"] = fwdlib.dispatch_order(ev)
            if run["experiment"] == "twoproc":
                m["owners"] = fwdlib.dispatch_owners(ev)
            if run["kind"] == "startup" and run["background"]:
                sectors = run["foreground"]["bs"] // 512
                # the foreground's reads: its size, in its region (the
                # real program's reads lie above it)
                end = run["foreground"].get("region", [0, 1 << 62])[1] // 512
                w = fwdlib.waits_behind(ev, lambda e: e.direction == "R" and
                                        e.blocks == sectors and e.sector < end)
                m["waits"] = summarize_waits(w)
            if keep_traces:
                m["blk_recs"] = fwdlib.request_latencies(ev)
        except fwdlib.InputError as e:
            notes.append("%s: %s" % (label, str(e).replace(root + "/", "")))
    if "mmc_history" in rec and keep_traces:
        p = os.path.join(d, "mmc-history.txt")
        if os.path.exists(p):
            try:
                m["mmc_recs"] = fwdlib.parse_mmc_history(p)
            except fwdlib.InputError as e:
                notes.append("%s: %s" % (label, e))
    if "debugfs" in rec:
        p = os.path.join(d, "debugfs-stats.txt")
        if os.path.exists(p):
            m["debugfs"] = parse_debugfs(p)
        p = os.path.join(d, "debugfs-procs.txt")
        if os.path.exists(p) and m.get("procs"):
            match_think_times(m["procs"], parse_debugfs_procs(p))
    if run["kind"] == "startup":
        m["fg_iops"] = m["iops"]
        m["fg_p99_us"] = m["p99_us"]
        fg_reads = sum(t["ios"] for t in fio["threads"])
        app_reads = app_bytes = 0
        if run.get("app"):
            try:
                a = app_record(_load_json(os.path.join(d, "app.json")))
                m.update(a)
                app_reads, app_bytes = a["app_reads"], a["app_read_bytes"]
            except (OSError, ValueError, KeyError) as e:
                notes.append("%s: the real program's record unusable (%s)" %
                             (label, e))
        if run["background"]:
            try:
                m.update(window_rates(_load_json(os.path.join(d, "window.json")),
                                      fg_reads + app_reads,
                                      fg_reads * run["foreground"]["bs"] +
                                      app_bytes))
            except (OSError, ValueError, KeyError) as e:
                notes.append("%s: window unusable (%s)" % (label, e))
    return m


def app_record(a):
    """The real program's start-up from its app.json (appstart.py run):
    app_s, app_capped (it reached its limit: app_s is a lower bound),
    its reads; ValueError for a start that failed."""
    if a["status"] not in ("done", "limit"):
        raise ValueError("status %s: %s" % (a["status"],
                                            a.get("error") or a.get("stderr", "")))
    x, y = (fwdlib.parse_diskstats(a[k]) for k in ("diskstats_start",
                                                   "diskstats_end"))
    capped = a["status"] == "limit"
    return {"app_s": a["limit_s"] if capped else a["elapsed_s"],
            "app_capped": capped, "app_limit_s": a["limit_s"],
            "app_reads": y["reads"] - x["reads"],
            "app_read_bytes": (y["read_sectors"] - x["read_sectors"]) * 512}


def window_rates(w, fg_count, fg_bytes):
    """Background rates over the window of a start-up run: bytes written
    per second and reads per second reaching the device (the start-ups'
    fg_count reads of fg_bytes, all inside the window, taken out)."""
    a, b = fwdlib.parse_diskstats(w["diskstats_start"]), fwdlib.parse_diskstats(w["diskstats_end"])
    secs = w["t_end"] - w["t_start"]
    if secs <= 0:
        raise ValueError("empty window")
    return {"window_s": secs,
            "fg_outlasted_window": w.get("fg_end", 0) > w["t_start"] + w["window_s"] + 0.5,
            "bg_write_bps": (b["write_sectors"] - a["write_sectors"]) * 512 / secs,
            "bg_read_iops": max(0, b["reads"] - a["reads"] - fg_count) / secs,
            "bg_read_bps": max(0, (b["read_sectors"] - a["read_sectors"]) * 512
                               - fg_bytes) / secs}


def parse_debugfs(path):
    stats = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^\s*(?:\S+:\s*)?([A-Za-z_]+)\s+(\d+)\s*$", line)
            if m:
                stats[m.group(1)] = int(m.group(2))
    return stats


def parse_debugfs_procs(path):
    """Rows of fwdsched's debugfs "procs" file: [{tgid, reqs, think_us}]
    (reqs: reads and writes dispatched; think_us None when none was
    measured)."""
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            x = line.split()
            if not x or x[0].startswith("#") or len(x) < 17:
                continue
            try:
                rows.append({"tgid": int(x[0]), "reqs": int(x[2]) + int(x[6]),
                             "think_us": int(x[14]) or None})
            except ValueError:
                continue
    return rows


def match_think_times(procs, rows):
    """Gives each fio process the think time fwdsched measured for it:
    the debugfs row whose request count is nearest to the process's I/O
    count, within 10 % (fio does not say its processes' pids).  Processes
    without such a row get none."""
    free = list(rows)
    for name, p in sorted(procs.items(), key=lambda kv: -kv[1].get("ios", 0)):
        ios = p.get("ios") or 0
        if not ios or not free:
            continue
        best = min(free, key=lambda r: abs(r["reqs"] - ios))
        if abs(best["reqs"] - ios) <= 0.1 * ios:
            free.remove(best)
            if best["think_us"] is not None:
                p["think_us"] = best["think_us"]


def process_device_time(owners, params, procs):
    """Each fio process's modelled device time from a trace's dispatches
    (fwdlib.dispatch_owners): every dispatch is charged, in dispatch order,
    what the card's cost model charges it (costmodel.cost_us from the end
    of the dispatch before), and the charges are summed per submitting
    pid; a process (procs: fio's, with ios) is the pid whose dispatch
    count is nearest its I/O count, within 10 % (fio does not say its
    processes' pids).  Returns ({process: {commands, busy_us}}, the
    busy_us of all the dispatches)."""
    per, total, prev = {}, 0.0, None
    for o in owners:
        c = costmodel.cost_us(prev, o["sector"] * 512, o["blocks"] * 512, params)
        prev = (o["sector"] + o["blocks"]) * 512
        total += c
        x = per.setdefault(o["owner"], [0, 0.0])
        x[0] += 1
        x[1] += c
    out = {}
    for name, p in sorted(procs.items(), key=lambda kv: -(kv[1].get("ios") or 0)):
        ios = p.get("ios") or 0
        if not ios or not per:
            continue
        pid = min(per, key=lambda k: abs(per[k][0] - ios))
        if abs(per[pid][0] - ios) <= 0.1 * ios:
            n, us = per.pop(pid)
            out[name] = {"commands": n, "busy_us": us}
    return out, total


def frontier_shape(var, alones, name):
    """The shape of variant var the frontier is computed at
    (frontier.make_shape), from the records of the synchronous reader
    (fio process name) alone, one a round: its think time is its cycle
    alone (10^6 ÷ its IOPS) minus its mean fio latency, the host's cost a
    command is that latency minus its modelled service time (the card's
    busy time a command); medians over rounds, to 10 µs.  None when no
    round has fio's and the card's records."""
    thinks, emus = [], []
    for m in alones:
        p = (m.get("procs") or {}).get(name) or {}
        dev = m.get("device") or {}
        if not p.get("iops") or not p.get("mean_us") or not dev.get("commands"):
            continue
        svc = dev["busy_us"] / dev["commands"]
        thinks.append(max(0.0, 1e6 / p["iops"] - p["mean_us"]))
        emus.append(max(0.0, p["mean_us"] - svc))
    if not thinks:
        return None
    return frontier.make_shape(var, round(bs.median(thinks), -1),
                               round(bs.median(emus), -1))


# ---------------------------------------------------------------- derived

def derive(plan, boot, exp, recs):
    """Per-round values: {(variant, arm): {metric: {round: value}}} of
    one experiment of one boot.  recs: {run id: record}."""
    e = plan["experiments"][exp]
    runs = [r for r in boot["runs"] if r["experiment"] == exp]
    arms = {}
    alone = {}
    for r in runs:
        m = recs.get(r["id"])
        if m is None:
            continue
        if r["role"] == "alone":
            alone[(r["variant"], r["arm"], r["round"], r["process"])] = m
        else:
            arms[(r["variant"], r["arm"], r["round"])] = (r, m)
    out = {}

    def put(var, arm, metric, rnd, v, censored=False):
        if v is not None:
            out.setdefault((var, arm), {}).setdefault(metric, {})[rnd] = v
            if censored:
                out[(var, arm)].setdefault(CENSORED + metric, {})[rnd] = True

    def find_alone(var, arm, rnd, proc):
        for key in ((var, arm, rnd, proc), (var, None, rnd, proc),
                    (None, arm, rnd, proc), (None, None, rnd, proc)):
            if key in alone:
                return alone[key]
        return None

    roles = e.get("processes", {"deep": "async", "sync": "sync"})
    params = boot["device"].get("params") if exp == "twoproc" else None
    shapes = {}

    def shape_of(var):
        if var not in shapes:
            rounds = sorted({r["round"] for r in runs})
            shapes[var] = frontier_shape(
                var, [m for m in (find_alone(var, None, k, roles["sync"])
                                  for k in rounds) if m], roles["sync"])
        return shapes[var]

    for (var, arm, rnd), (r, m) in arms.items():
        if exp == "responsiveness":
            put(var, arm, "fg_iops", rnd, m.get("fg_iops"))
            put(var, arm, "fg_p99_us", rnd, m.get("fg_p99_us"))
            capped = m.get("app_capped", False)
            put(var, arm, "app_s", rnd, m.get("app_s"), capped)
            put(var, arm, "app_reads", rnd, m.get("app_reads"))
            idle = arms.get(("idle", arm, rnd))
            idle = idle[1] if idle else {}
            if var != "idle" and m.get("fg_iops") and idle.get("fg_iops"):
                # a window is never censored: the same reads take this
                # many times as long as idle
                put(var, arm, "startup_x_idle", rnd, idle["fg_iops"] / m["fg_iops"])
            if var != "idle" and m.get("app_s") and idle.get("app_s"):
                put(var, arm, "app_x_idle", rnd, m["app_s"] / idle["app_s"],
                    capped or idle.get("app_capped", False))
            if var == "idle" and m.get("app_s") and not capped:
                # the limit against this idle start-up (the plan promises
                # at least 30 times)
                put(var, arm, "app_limit_x_idle", rnd,
                    m["app_limit_s"] / m["app_s"])
            if r["background"]:
                if "writer" in r["background"]["streams"]:
                    put(var, arm, "bg_write_bps", rnd, m.get("bg_write_bps"))
                if "reader" in r["background"]["streams"]:
                    put(var, arm, "bg_read_iops", rnd, m.get("bg_read_iops"))
            continue
        put(var, arm, "iops", rnd, m.get("iops"))
        put(var, arm, "p99_us", rnd, m.get("p99_us"))
        dev = m.get("device")
        if dev:
            put(var, arm, "device_iops", rnd, dev["device_iops"])
            for g in SIGNS:
                put(var, arm, "svc_%s_us" % g, rnd, dev["by_sign"][g]["mean_us"])
        if m.get("order"):
            put(var, arm, "forward_fraction", rnd, m["order"]["forward_fraction"])
        if exp in ("twoproc", "deep-nullb"):
            procs = m.get("procs", {})
            s = procs.get(roles["sync"], {}).get("iops")
            dp = procs.get(roles["deep"], {}).get("iops")
            if s is None or dp is None:
                continue
            total = s + dp
            put(var, arm, "sync_iops", rnd, s)
            put(var, arm, "sync_think_us", rnd,
                procs.get(roles["sync"], {}).get("think_us"))
            put(var, arm, "deep_iops", rnd, dp)
            put(var, arm, "total_iops", rnd, total)
            put(var, arm, "jain_raw", rnd, fwdlib.jain([s, dp]))
            if params and m.get("owners"):
                pt, traced = process_device_time(m["owners"], params, procs)
                ps, pd = pt.get(roles["sync"]), pt.get(roles["deep"])
                if ps and pd:
                    put(var, arm, "sync_device_us", rnd, ps["busy_us"] / ps["commands"])
                    put(var, arm, "deep_device_us", rnd, pd["busy_us"] / pd["commands"])
                    put(var, arm, "sync_device_share", rnd,
                        ps["busy_us"] / (ps["busy_us"] + pd["busy_us"]))
                if dev and dev["busy_us"] > 0:
                    put(var, arm, "traced_x_card", rnd, traced / dev["busy_us"])
            sa = find_alone(var, None, rnd, roles["sync"])
            if sa is not None and sa.get("iops"):
                share = min(sa["iops"], total / 2)
                put(var, arm, "sync_alone", rnd, sa["iops"])
                put(var, arm, "sync_share_fraction", rnd, s / share)
                shape = shape_of(var) if params else None
                if shape and dev and dev["device_iops"]:
                    x = frontier.judged_share(params, shape, s / share)
                    f = frontier.frontier_iops(params, shape, x)
                    put(var, arm, "frontier_share", rnd, x)
                    put(var, arm, "frontier_iops", rnd, f)
                    put(var, arm, "frontier_fraction", rnd, dev["device_iops"] / f)
                    put(var, arm, "frontier_think_us", rnd, shape.think_us)
                    put(var, arm, "frontier_emu_us", rnd, shape.emu_us)
                lat = procs[roles["sync"]].get("mean_us")
                lat_alone = sa.get("procs", {}).get(roles["sync"], {}).get("mean_us")
                if lat and lat_alone:
                    put(var, arm, "sync_wait_x_alone", rnd, lat / lat_alone)
                if total - share > 0:
                    put(var, arm, "deep_share_fraction", rnd, dp / (total - share))
                    put(var, arm, "jain_share", rnd,
                        fwdlib.jain([s / share, dp / (total - share)]))
            da = find_alone(var, arm, rnd, roles["deep"])
            if da is not None and da.get("iops"):
                put(var, arm, "deep_alone", rnd, da["iops"])
                put(var, arm, "deep_kept", rnd, dp / da["iops"])
    return out


# ---------------------------------------------------------------- markdown

def _mib(n):
    return "?" if n is None else "%g MiB" % round(n / 2**20, 1)


def table(head, rows):
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" if i == 0 else "--:" for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def fmt(x, spec="%.1f"):
    return "n/a" if x is None else spec % x


def plan_text(settings):
    """Which plan a run is, "the default plan (make bench)" or "the full
    matrix (make bench FULL=1)", as the header's first words; nothing for
    a run planned before there were two."""
    return {"default": "the default plan (make bench); ",
            "full": "the full matrix (make bench FULL=1); "}.get(settings.get("plan"), "")


def card_name(dev):
    """A flash card's spec without its transport ("paper", "paper,back_us=9")."""
    return ",".join(p for p in dev["spec"].split(",")
                    if not p.startswith("transport="))


def cov_note(plan):
    n = plan["settings"]["rounds"]
    if n < 2:
        return ("one round: no intervals; a ratio is a single measurement, "
                "and no target can be met or missed")
    k = bs.order_k(n)
    return ("%d rounds: interval [x(%d), x(%d)] of the sorted per-round "
            "values, coverage %.1f %%%s" %
            (n, k, n + 1 - k, 100 * bs.coverage(n, k),
             "" if bs.coverage(n, k) >= bs.LEVEL else
             " (below 95 %: more rounds are needed for 95 %; 6 give 96.9 %)"))


class Report:
    def __init__(self, root, plan, targets, plots=True):
        self.root, self.plan, self.targets = root, plan, targets
        self.notes = []
        self.md = []
        self.summary = {"plan": {k: plan.get(k) for k in
                                 ("created", "commit", "dirty", "command",
                                  "settings", "host", "estimate_s")},
                        "boots": {}, "targets": []}
        self.plots = plots
        self.plot_dir = os.path.join(root, "plots")
        self.arm_ids = [a["id"] for a in plan["arms"]]
        self.base = plan["baseline"]
        self.values = {}      # (boot id, exp) -> derive()
        self.records = {}     # boot id -> {run id: record}

    # -- helpers
    def series(self, bid, exp, var, arm, metric):
        return (self.values.get((bid, exp)) or {}).get((var, arm), {}).get(metric, {})

    def iv(self, bid, exp, var, arm, metric, versus=None):
        s = self.series(bid, exp, var, arm, metric)
        cens = self.series(bid, exp, var, arm, CENSORED + metric)
        if versus is None:
            iv = bs.interval(list(s.values()))
            iv["rounds"] = s
            iv["censored"] = len(cens)
            return iv
        other = self.series(bid, exp, var, versus, metric)
        # rounds are int keys: merge as a mapping, not as keyword arguments
        cens = {**cens, **self.series(bid, exp, var, versus, CENSORED + metric)}
        iv = bs.ratio_interval({r: v for r, v in s.items() if r not in cens}, other)
        iv["censored"] = len([r for r in cens if r in s and r in other])
        return iv

    def med(self, bid, exp, var, arm, metric):
        return bs.median(self.series(bid, exp, var, arm, metric).values())

    def arms_in(self, bid, exp, var):
        v = self.values.get((bid, exp)) or {}
        return [a for a in self.arm_ids if (var, a) in v]

    def variants(self, bid, exp):
        seen = []
        for r in self.boot(bid)["runs"]:
            if r["experiment"] == exp and r["role"] == "arm" and \
                    r["variant"] not in seen:
                seen.append(r["variant"])
        return seen

    def boot(self, bid):
        return next(b for b in self.plan["boots"] if b["id"] == bid)

    def boot_title(self, b):
        dev = b["device"]
        if dev["kind"] == "flashcard":
            return "kernel %s, flash card `%s` (%s)" % (
                b["kernel"], card_name(dev), {"sd": "SD card", "ufs": "UFS"}.get(
                    dev.get("transport", "sd")))
        if dev.get("vm", {}).get("icount") is not None:
            return "kernel %s, null_blk, instructions counted" % b["kernel"]
        return "kernel %s, null_blk" % b["kernel"]

    # -- collection
    def collect(self):
        self.summary["guests"] = {}
        for b in self.plan["boots"]:
            g = guest_clock(os.path.join(self.root, "boots", b["id"], "console.log"))
            if g:
                self.summary["guests"][b["id"]] = dict(g, text=guest_clock_text(g))
            recs = {}
            first_round = {}
            for r in b["runs"]:
                keep = (r["experiment"] == "headline" and r["round"] == 1)
                m = run_record(self.root, r, self.notes, keep_traces=keep)
                if m is not None:
                    recs[r["id"]] = m
                first_round.setdefault(r["experiment"], r)
            self.records[b["id"]] = recs
            gj = os.path.join(self.root, "boots", b["id"], "guest.json")
            if not os.path.exists(gj):
                self.notes.append("%s: no guest.json: the boot did not run or "
                                  "failed early (see boots/%s/console.log)" %
                                  (b["id"], b["id"]))
            else:
                try:
                    self.summary.setdefault("disks", {})[b["id"]] = \
                        _load_json(gj).get("disks") or {}
                except (OSError, ValueError):
                    pass
            exps = []
            for r in b["runs"]:
                if r["experiment"] not in exps:
                    exps.append(r["experiment"])
            for e in exps:
                self.values[(b["id"], e)] = derive(self.plan, b, e, recs)

    # -- sections
    def header(self):
        p = self.plan
        s = p["settings"]
        md = ["# fwdsched benchmark report", ""]
        md.append("Run `%s`: %s, commit `%s`%s." % (
            os.path.basename(os.path.realpath(self.root)), p["created"],
            p.get("commit") or "?", " (with uncommitted changes)" if p.get("dirty") else ""))
        md.append("")
        md.append("- command: `%s`" % p["command"])
        h = p.get("host") or {}
        if h:
            md.append("- host: %s CPUs, load %s at the start, %s other QEMU "
                      "guests running, host kernel %s" %
                      (h.get("nproc"), " / ".join("%.2f" % x for x in h.get("loadavg", [])),
                       h.get("qemu_running"), h.get("uname")))
        done = os.path.join(self.root, "done.json")
        if os.path.exists(done):
            try:
                dj = _load_json(done)
                md.append("- duration: %d s (planned about %d s)%s" % (
                    dj["duration_s"], p["estimate_s"],
                    "; load at the end %s" % " / ".join("%.2f" % x for x in dj["loadavg"])
                    if dj.get("loadavg") else ""))
            except (OSError, ValueError, KeyError):
                pass
        md.append("- %skernels %s; cards %s; experiments %s; arms %s; %d rounds; "
                  "%d s per timed job" % (
                      plan_text(s), ", ".join(s["kernels"]), ", ".join(s["cards"]) or "none",
                      ", ".join(s["experiments"]), ", ".join(self.arm_ids),
                      s["rounds"], s["runtime_s"]))
        md += ["", "How to read it: every comparison ran as interleaved rounds, each arm "
               "once per round in an order rotated by one place per round. A ratio "
               "to %s pairs the runs of one round; the report gives the median of "
               "the per-round ratios and its interval: %s (distribution-free: "
               "the sign test's interval for a median, tools/analysis/benchstats.py). "
               "A ratio whose interval contains 1.0 is printed as \"no difference\"." %
               (self.base, cov_note(p)), ""]
        self.md += md

    def targets_section(self):
        rows, summ, unrun = [], [], []
        for t in self.targets.get("targets", []):
            found = False
            for b in self.plan["boots"]:
                if t.get("kernels") and b["kernel"] not in t["kernels"]:
                    continue
                if (b["id"], t["experiment"]) not in self.values:
                    continue
                dev = b["device"]
                # a target's card is the card on either transport
                if t.get("cards") and (dev["kind"] != "flashcard" or
                                       card_name(dev) not in t["cards"]):
                    continue
                for var in self.variants(b["id"], t["experiment"]):
                    if t.get("variants") and var not in t["variants"]:
                        continue
                    found = True
                    iv = self.iv(b["id"], t["experiment"], var, t["arm"],
                                 t["metric"], t.get("versus"))
                    verdict = bs.judge(iv, t["op"], t["bound"], t.get("rule", "interval"))
                    if iv["n"] == 1 and verdict in ("met", "missed"):
                        verdict = "unresolved"   # one round: no interval
                    where = dev.get("spec", "null_blk") + ("" if var is None else " / " + var)
                    bound = "%s %s%s" % (t["op"], fmt(t["bound"], "%.2f"),
                                         "× " + t["versus"] if t.get("versus") else "")
                    cell = bs.fmt_interval(iv)
                    if iv.get("censored"):
                        cell += (" (%d rounds left out: a start-up at its limit)"
                                 if t.get("versus") else
                                 " (%d rounds at least: a start-up at its limit)") % \
                            iv["censored"]
                    rows.append([t["id"], t["text"], b["kernel"], where, t["arm"],
                                 cell, bound, fmt(iv.get("coverage"), "%.3f"),
                                 "**%s**" % verdict if verdict else "not measured"])
                    summ.append(dict(target=t["id"], kernel=b["kernel"], where=where,
                                     arm=t["arm"], versus=t.get("versus"),
                                     metric=t["metric"], op=t["op"], bound=t["bound"],
                                     rule=t.get("rule", "interval"),
                                     median=iv["median"], lo=iv["lo"], hi=iv["hi"],
                                     n=iv["n"], coverage=iv.get("coverage"),
                                     censored=iv.get("censored", 0),
                                     verdict=verdict))
            if not found:
                unrun.append(t["id"])
        self.summary["targets"] = summ
        md = ["## Targets", "",
              "Each target from `fio-jobs/targets.json`, judged on the median over rounds "
              "and its interval: **met** when the interval lies entirely on the right "
              "side of the bound, **missed** when entirely on the wrong side, "
              "**unresolved** when it straddles the bound (rule \"reaches\": met when the "
              "interval includes or exceeds the bound). Coverage: of the interval.", "",
              publish.BEGIN]
        md += table(["target", "what", "kernel", "card / variant", "arm",
                     "median [interval]", "bound", "coverage", "verdict"], rows)
        counts = {}
        for s in summ:
            counts[s["verdict"]] = counts.get(s["verdict"], 0) + 1
        md += ["", "%d met, %d missed, %d unresolved, %d not measured%s." % (
            counts.get("met", 0), counts.get("missed", 0), counts.get("unresolved", 0),
            counts.get(None, 0),
            "; not in this run: " + ", ".join(unrun) if unrun else "")]
        md += [publish.END, ""]
        self.md += md

    def section_kind(self, bid, exp):
        """Which table experiment @exp of boot @bid gets: "twoproc" (two
        processes' shares), "responsiveness" (start-ups), "family" (a
        family of variants side by side, medians) or "headline" (ratios
        to the baseline per arm, for each variant with ratios=True)."""
        if exp in ("twoproc", "deep-nullb"):
            return "twoproc"
        if exp == "responsiveness":
            return exp
        if len(self.variants(bid, exp)) > 1 and \
                not self.plan["experiments"].get(exp, {}).get("ratios"):
            return "family"
        return "headline"

    def arms_section(self):
        """Every arm against the baseline, for the experiments whose
        ratios the report gives (the headline's kind, the two processes'
        and the start-ups'), one row a measure, between publish's arm
        markers:
        the figures of arms no target judges (the mq-deadline patch's
        deadline-wrap) reach BENCHMARKS.md this way."""
        rows = []
        for b in self.plan["boots"]:
            bid = b["id"]
            where = b["device"].get("spec", "null_blk")
            for exp in dict.fromkeys(r["experiment"] for r in b["runs"]):
                kind = self.section_kind(bid, exp)
                if kind == "twoproc":
                    measures = [("sync wait × alone", "sync_wait_x_alone", False),
                                ("sync ÷ share", "sync_share_fraction", False)]
                    total = ("total IOPS", "total_iops")
                elif kind == "headline":
                    measures, total = [], ("IOPS", "iops")
                elif kind == "responsiveness":
                    measures = [("start-up × idle", "startup_x_idle", False),
                                ("program start-up × idle", "app_x_idle", False),
                                ("bg write × %s" % self.base, "bg_write_bps", True),
                                ("bg read IOPS × %s" % self.base, "bg_read_iops", True)]
                    total = None
                else:
                    continue
                if total:
                    if self.on_card(bid):
                        measures.append(("device IOPS × %s" % self.base,
                                         "device_iops", True))
                    measures.append(("%s × %s" % (total[0], self.base), total[1], True))
                for var in self.variants(bid, exp):
                    for a in self.arms_in(bid, exp, var):
                        for label, metric, ratio in measures:
                            if ratio and a == self.base:
                                continue
                            if not self.series(bid, exp, var, a, metric):
                                continue
                            iv = self.iv(bid, exp, var, a, metric,
                                         self.base if ratio else None)
                            if not iv.get("n"):
                                continue    # no round of the baseline
                            rows.append([b["kernel"], where + ("" if var is None
                                                                else " / " + var),
                                         exp, a, label,
                                         bs.fmt_ratio(iv) if ratio else bs.fmt_interval(iv)])
        if not rows:
            return
        self.md += ["## Every arm against %s" % self.base, "",
                    "Median [interval] over rounds, as in the tables below; "
                    "\"no difference\" when a ratio's interval holds 1.0.", "",
                    publish.ARMS_BEGIN]
        self.md += table(["kernel", "card / variant", "experiment", "arm",
                          "measure", "median [interval]"], rows)
        self.md += [publish.ARMS_END, ""]

    def on_card(self, bid):
        """Whether boot @bid ran on the emulated flash card (which has
        device time)."""
        return self.boot(bid)["device"]["kind"] == "flashcard"

    def ratio_cells(self, bid, exp, var, arm, metric, spec="%.0f"):
        med = self.med(bid, exp, var, arm, metric)
        cell = fmt(med, spec)
        if arm == self.base:
            return [cell, "1"]
        return [cell, bs.fmt_ratio(self.iv(bid, exp, var, arm, metric, self.base))]

    def headline(self, bid, exp):
        """The headline's table, and that of each variant of an experiment
        with ratios=True (nullb-cpu): IOPS and the ratio to the baseline
        per arm, with its interval."""
        card = self.on_card(bid)
        e = self.plan["experiments"][exp]
        md = ["### %s" % e["title"], ""]
        for var in self.variants(bid, exp):
            if var is not None:
                title = (e.get("variant_titles") or {}).get(var)
                md += ["#### %s" % ("%s: %s" % (var, title) if title else var), ""]
            arms = self.arms_in(bid, exp, var)
            rows = []
            for a in arms:
                row = [a] + self.ratio_cells(bid, exp, var, a, "iops")
                if card:
                    row += self.ratio_cells(bid, exp, var, a, "device_iops")
                    row += [fmt(self.med(bid, exp, var, a, "svc_%s_us" % g), "%.0f")
                            for g in ("forward", "backward")]
                    ff = self.med(bid, exp, var, a, "forward_fraction")
                    row.append(fmt(ff, "%.3f"))
                row.append(fmt(self.med(bid, exp, var, a, "p99_us"), "%.0f"))
                rows.append(row)
            head = ["arm", "IOPS", "× %s" % self.base]
            if card:
                head += ["device IOPS", "× %s" % self.base, "svc fwd µs",
                         "svc back µs", "fwd fraction"]
            head.append("p99 µs")
            md += table(head, rows) + [""]
            if var is not None:
                md += self.plot_bars(bid, exp, var)
        if card:
            md += ["Device IOPS is the flash card's modelled device IOPS (model commands "
                   "÷ modelled busy time, service times by the sign of the delta: "
                   "tools/flashcard/README.md): what the same dispatch order would give "
                   "on a card whose host costs nothing, and the figure a ratio to "
                   "%s is judged on first." % self.base, ""]
        self.md += md
        self.md += self.plot_headline(bid, exp)

    def twoproc(self, bid, exp):
        card = self.on_card(bid)
        md = ["### %s" % self.plan["experiments"][exp]["title"], ""]
        if exp == "deep-nullb":
            md += ["The deep reader alone (same arm, same round), then with the "
                   "synchronous reader beside it: deep kept = with ÷ alone."]
        md += ["Max-min shares: the synchronous reader's share is its rate alone "
               "(measured in the same round, under %s) or half the total if that is "
               "less; the deep reader's share is the rest. J raw is Jain's index over "
               "the two processes' IOPS (the papers' measure), J share over IOPS ÷ "
               "share: raw J alone rewards throttling a process that could use spare "
               "capacity. Sync think µs: the synchronous reader's mean time from a "
               "completion to its next request, as fwdsched measured it (its arms "
               "only). Its cycle alone is 10⁶ ÷ sync alone µs; a reader that thinks "
               "about that long beside the deep one cannot reach its rate alone under "
               "any scheduler, and fwdsched waits for it only while the think time "
               "is within anticipate_us. Sync wait × alone: its mean completion "
               "latency (fio) ÷ alone, the part of its cycle the scheduler decides; "
               "fio's own cycle minus that latency is its think time in user space, "
               "and the rest of fwdsched's think time is the kernel's completion and "
               "submission path, which the emulation slows. Device IOPS: both "
               "readers' requests in the card's modelled device time, as in the "
               "headline: a total lost in wall-clock time but not in device time is "
               "lost to the emulation's CPU, not to the order." % self.base, ""]
        for var in self.variants(bid, exp):
            if var is not None:
                md += ["#### %s" % {"same": "same region",
                                    "apart": "different regions"}.get(var, var), ""]
            rows = []
            frontier_col = any(self.series(bid, exp, var, a, "frontier_iops")
                               for a in self.arms_in(bid, exp, var))
            for a in self.arms_in(bid, exp, var):
                row = [a, fmt(self.med(bid, exp, var, a, "sync_iops"), "%.0f"),
                       fmt(self.med(bid, exp, var, a, "sync_alone"), "%.0f"),
                       fmt(self.med(bid, exp, var, a, "sync_think_us"), "%.0f"),
                       bs.fmt_interval(self.iv(bid, exp, var, a, "sync_wait_x_alone")),
                       bs.fmt_interval(self.iv(bid, exp, var, a, "sync_share_fraction")),
                       fmt(self.med(bid, exp, var, a, "deep_iops"), "%.0f"),
                       fmt(self.med(bid, exp, var, a, "deep_share_fraction"), "%.2f")]
                row += self.ratio_cells(bid, exp, var, a, "total_iops")
                if card:
                    row += self.ratio_cells(bid, exp, var, a, "device_iops")
                if frontier_col:
                    row += [fmt(self.med(bid, exp, var, a, "frontier_iops"), "%.0f"),
                            bs.fmt_interval(self.iv(bid, exp, var, a, "frontier_fraction"))]
                if exp == "deep-nullb":
                    row += [fmt(self.med(bid, exp, var, a, "deep_alone"), "%.0f"),
                            bs.fmt_interval(self.iv(bid, exp, var, a, "deep_kept"))]
                row += [fmt(self.med(bid, exp, var, a, "jain_raw"), "%.3f"),
                        fmt(self.med(bid, exp, var, a, "jain_share"), "%.3f")]
                rows.append(row)
            head = ["arm", "sync IOPS", "sync alone", "sync think µs",
                    "sync wait × alone", "sync ÷ share", "deep IOPS",
                    "deep ÷ share", "total IOPS", "× %s" % self.base]
            if card:
                head += ["device IOPS", "× %s" % self.base]
            if frontier_col:
                head += ["frontier", "÷ frontier"]
            if exp == "deep-nullb":
                head += ["deep alone", "deep kept"]
            head += ["J raw", "J share"]
            md += table(head, rows) + [""]
            if frontier_col:
                md += self.frontier_text(bid, exp, var)
            md += self.device_time_table(bid, exp, var)
        self.md += md

    def frontier_text(self, bid, exp, var):
        arms = self.arms_in(bid, exp, var)
        think = bs.median([self.med(bid, exp, var, a, "frontier_think_us") for a in arms])
        emu = bs.median([self.med(bid, exp, var, a, "frontier_emu_us") for a in arms])
        return ["Frontier: the most modelled device IOPS that any of the dispatch "
                "policies of tools/analysis/frontier.py, or two of them in turn, "
                "reaches on this card's cost model with the synchronous reader at "
                "the share the arm gave it or more (at most the largest share a "
                "policy reaches while the deep reader keeps its own: more is given "
                "at the deep reader's expense, no merit), the reader thinking %s µs "
                "between reads and the host costing %s µs a command (from the "
                "synchronous reader alone: its cycle minus its latency, and its "
                "latency minus its modelled service time); ÷ frontier: the arm's "
                "device IOPS ÷ the frontier, per round. Device IOPS do not count "
                "the time a scheduler leaves the card idle, the frontier does: "
                "for an arm that idles, ÷ frontier is too high by that time." %
                (fmt(think, "%.0f"), fmt(emu, "%.0f")), ""]

    def device_time_table(self, bid, exp, var):
        """Each reader's modelled device time beside its IOPS (traced
        rounds)."""
        rows = []
        for a in self.arms_in(bid, exp, var):
            rnds = sorted(self.series(bid, exp, var, a, "sync_device_us"))
            if not rnds:
                continue
            get = lambda m, r: self.series(bid, exp, var, a, m).get(r)
            for r in rnds:
                rows.append([a, r, fmt(get("sync_iops", r), "%.0f"),
                             fmt(get("sync_device_us", r), "%.0f"),
                             fmt(get("deep_iops", r), "%.0f"),
                             fmt(get("deep_device_us", r), "%.0f"),
                             fmt(get("sync_device_share", r), "%.3f"),
                             fmt(get("traced_x_card", r), "%.3f")])
        if not rows:
            return []
        return ["Device time by process, on the traced rounds only (the others keep "
                "no trace): each dispatch in blktrace's order charged the card's "
                "modelled cost (tools/flashcard/costmodel.py), and summed by the "
                "process that submitted it. Its share is of the two readers' device "
                "time; traced ÷ card compares all the traced dispatches' cost with the "
                "card's own counters for the run.", ""] + \
            table(["arm", "round", "sync IOPS", "sync device µs a read",
                   "deep IOPS", "deep device µs a read", "sync share of device time",
                   "traced ÷ card"], rows) + [""]

    def responsiveness(self, bid, exp):
        b = self.boot(bid)
        app = b.get("app_fs")
        md = ["### %s" % self.plan["experiments"][exp]["title"], "",
              "Synthetic start-up: 16 KiB reads, one at a time (O_DIRECT, the same "
              "offsets every run), for a fixed window of %d s; fg reads/s is its rate, "
              "and × idle the same arm's idle rate of the same round ÷ this rate: how "
              "many times as long the same reads take. A window is never stopped "
              "early, so no value is censored. The background starts %d s before the "
              "foreground; its throughput is what reached the device (/proc/diskstats) "
              "in a window that opens when the foreground starts and closes when the "
              "start-ups end (the start-ups' own reads taken out); the writer's dirty "
              "limits are vm.dirty_background_bytes = %s, vm.dirty_bytes = %s for "
              "the run." % (self.first_fg(bid, exp, "window_s"),
                            self.first_bg(bid, exp, "warmup_s"),
                            _mib(self.first_bg(bid, exp, "dirty_background_bytes")),
                            _mib(self.first_bg(bid, exp, "dirty_bytes"))), ""]
        if app:
            md += [self.app_text(bid, exp, app), ""]
        rows = []
        for var in self.variants(bid, exp):
            for a in self.arms_in(bid, exp, var):
                row = [var, a, fmt(self.med(bid, exp, var, a, "fg_iops"), "%.1f")]
                if var == "idle":
                    row += ["1", fmt(self.med(bid, exp, var, a, "fg_p99_us"), "%.0f")]
                else:
                    row += [bs.fmt_interval(self.iv(bid, exp, var, a, "startup_x_idle")),
                            fmt(self.med(bid, exp, var, a, "fg_p99_us"), "%.0f")]
                if app:
                    cell = fmt(self.med(bid, exp, var, a, "app_s"), "%.2f")
                    nc = len(self.series(bid, exp, var, a, CENSORED + "app_s"))
                    if nc:
                        cell = "≥ %s (%d at the limit)" % (cell, nc)
                    row += [cell, "1" if var == "idle" else
                            bs.fmt_interval(self.iv(bid, exp, var, a, "app_x_idle")),
                            fmt(self.med(bid, exp, var, a, "app_reads"), "%.0f")]
                if var == "idle":
                    row += ["", "", "", ""]
                else:
                    for mtr, spec, scale in (("bg_write_bps", "%.2f", 1 / 2**20),
                                             ("bg_read_iops", "%.0f", 1)):
                        v = self.med(bid, exp, var, a, mtr)
                        if v is None:
                            row += ["", ""]
                            continue
                        row.append(spec % (v * scale))
                        row.append("1" if a == self.base else
                                   bs.fmt_ratio(self.iv(bid, exp, var, a, mtr, self.base)))
                rows.append(row)
        head = ["background", "arm", "fg reads/s", "× idle", "fg p99 µs"]
        if app:
            head += ["program s", "× idle", "program reads"]
        md += table(head + ["bg write MiB/s", "× %s" % self.base, "bg read IOPS",
                            "× %s" % self.base], rows) + [""]
        # why: what was dispatched while the foreground waited
        rows = []
        for var in self.variants(bid, exp):
            if var == "idle":
                continue
            for a in self.arms_in(bid, exp, var):
                ws = [self.records[bid][r["id"]].get("waits")
                      for r in self.boot(bid)["runs"]
                      if r["experiment"] == exp and r["variant"] == var and r["arm"] == a
                      and r["id"] in self.records[bid]]
                ws = [w for w in ws if w]
                if not ws:
                    continue
                avg = lambda k: (sum(w[k] for w in ws if w[k] is not None) /
                                 max(1, len([w for w in ws if w[k] is not None])))
                rows.append([var, a, "%d" % sum(w["n"] for w in ws),
                             fmt(avg("wait_us") / 1000, "%.1f"),
                             fmt(avg("service_us") / 1000, "%.1f"),
                             fmt(avg("reads"), "%.1f"), fmt(avg("writes"), "%.1f"),
                             fmt(100 * avg("write_in_flight"), "%.0f")])
        if rows:
            md += ["Why (blktrace of the traced rounds): for each foreground read, the other "
                   "requests dispatched between its insert and its dispatch, and whether "
                   "a write was in flight when it was inserted (means over the "
                   "foreground's reads).", ""]
            md += table(["background", "arm", "fg reads", "wait ms (I→D)",
                         "service ms (D→C)", "reads dispatched before it",
                         "writes dispatched before it",
                         "% inserted with a write in flight"], rows) + [""]
        self.md += md

    def app_text(self, bid, exp, app):
        """What the real program's start-up is, and whether its limit held
        30 times its idle start-up."""
        prep = {}
        try:
            prep = _load_json(os.path.join(self.root, "boots", bid, "app-prepare.json"))
        except (OSError, ValueError):
            self.notes.append("%s: no app-prepare.json: the real program's file "
                              "system was not made" % bid)
        limit = None
        for r in self.boot(bid)["runs"]:
            if r["experiment"] == exp and r.get("app"):
                limit = r["app"]["limit_s"]
                break
        text = ("Real program: %s (Python %s) started cold: its interpreter, loader, "
                "libraries and standard library (%s files, %s) copied into ext4 on "
                "partition 1 of the card at %s, mounted read-only afresh with the "
                "caches dropped before each start, importing %d modules (%s); its "
                "start-up is the process's time from start to exit, stopped at %s s "
                "(\"≥\": a start that reached it, a lower bound; a ratio between two "
                "arms leaves such rounds out); program reads are its reads that "
                "reached the device. From the page cache it takes %s s, its CPU "
                "time; the rest of the idle start-up is its I/O." % (
                    app["program"], prep.get("python", "?"), prep.get("files", "?"),
                    _mib(prep.get("bytes")), "%g GiB" % (app["start"] / 2**30),
                    len(app["modules"]), ", ".join(app["modules"]),
                    fmt(limit, "%g"), fmt(prep.get("warm_s"), "%.2f")))
        lows = []
        for a in self.arm_ids:
            for rnd, x in self.series(bid, exp, "idle", a, "app_limit_x_idle").items():
                lows.append((x, a, rnd))
        if lows:
            x, a, rnd = min(lows)
            if x >= 30:
                text += " The limit was at least %.0f× the idle start-up in every " \
                        "round." % x
            else:
                text += " The limit was only %.1f× the idle start-up (%s, round %d): " \
                        "less than the 30× the plan means to give." % (x, a, rnd)
                self.notes.append("%s: the real program's limit is only %.1f× its "
                                  "idle start-up (%s, round %d)" % (bid, x, a, rnd))
        return text

    def first_fg(self, bid, exp, key):
        for r in self.boot(bid)["runs"]:
            if r["experiment"] == exp:
                return r["foreground"].get(key, 0)
        return 0

    def first_bg(self, bid, exp, key):
        for r in self.boot(bid)["runs"]:
            if r["experiment"] == exp and r.get("background"):
                return r["background"][key]
        return 0

    # -- plots
    def _plt(self):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt

    def plot_bars(self, bid, exp, var):
        """The bars of one variant of an experiment with ratios=True."""
        if not self.plots:
            return []
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", "%s_%s_%s_iops.png" % (bid, exp, var))
        try:
            if self.bars(os.path.join(self.plot_dir, name), bid, exp, var):
                return ["![IOPS per arm, median and interval over rounds (%s)](plots/%s)"
                        % (var, name), ""]
        except Exception as e:  # a bad plot must not lose the report
            self.notes.append("%s/%s/%s: plots: %s" % (bid, exp, var, e))
        return []

    def plot_headline(self, bid, exp):
        if not self.plots:
            return []
        out = []
        b = self.boot(bid)
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", "%s_%s" % (bid, exp))
        try:
            name = stem + "_iops.png"
            if self.bars(os.path.join(self.plot_dir, name), bid, exp):
                out += ["![IOPS per arm, median and interval over rounds (Fig 3)](plots/%s)"
                        % name, ""]
            rs = [r for r in b["runs"] if r["experiment"] == exp and r["round"] == 1
                  and r["role"] == "arm" and r["id"] in self.records[bid]]
            traces = {}
            for r in rs:
                m = self.records[bid][r["id"]]
                if m.get("mmc_recs"):
                    traces[r["arm"]] = ("MMC history", m["mmc_recs"])
                elif m.get("blk_recs"):
                    traces[r["arm"]] = ("blktrace", m["blk_recs"])
            if traces:
                name = stem + "_fig4.png"
                self.scatter(os.path.join(self.plot_dir, name), traces, "fig4",
                             "%s: issue time vs address (Fig 4), round 1" % self.boot_title(b))
                out += ["![Issue time vs address (Fig 4)](plots/%s)" % name, ""]
                name = stem + "_fig5.png"
                self.scatter(os.path.join(self.plot_dir, name), traces, "fig5",
                             "%s: address delta vs service time (Fig 5/6), round 1" %
                             self.boot_title(b))
                out += ["![Address delta vs service time (Fig 5/6)](plots/%s)" % name, ""]
        except Exception as e:  # a bad plot must not lose the report
            self.notes.append("%s/%s: plots: %s" % (bid, exp, e))
        return out

    def bars(self, path, bid, exp, var=None):
        arms = self.arms_in(bid, exp, var)
        if not arms:
            return False
        plt = self._plt()
        metrics = [m for m in ("iops", "device_iops")
                   if any(self.series(bid, exp, var, a, m) for a in arms)]
        fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 3.6),
                                 squeeze=False)
        for ax, mtr in zip(axes[0], metrics):
            ivs = [self.iv(bid, exp, var, a, mtr) for a in arms]
            meds = [iv["median"] or 0 for iv in ivs]
            err = [[(iv["median"] or 0) - (iv["lo"] or 0) for iv in ivs],
                   [(iv["hi"] or 0) - (iv["median"] or 0) for iv in ivs]]
            ax.bar(range(len(arms)), meds, yerr=err, capsize=3)
            ax.set_xticks(range(len(arms)))
            ax.set_xticklabels(arms, rotation=20, fontsize="small")
            ax.set_ylabel({"iops": "wall-clock IOPS",
                           "device_iops": "modelled device IOPS"}[mtr])
        fig.suptitle("%s: %s%s" % (self.boot_title(self.boot(bid)), exp,
                                   "" if var is None else " / %s" % var),
                     fontsize="small")
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
        return True

    def scatter(self, path, traces, kind, title):
        plt = self._plt()
        n = len(traces)
        cols = min(n, 3)
        rows = (n + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 3.4 * rows),
                                 squeeze=False)
        flat = [axes[k // cols][k % cols] for k in range(rows * cols)]
        for ax in flat[n:]:
            ax.axis("off")
        for ax, (arm, (src, recs)) in zip(flat, traces.items()):
            if kind == "fig4":
                mmchist.draw_fig4(ax, recs, FIG4_POINTS)
            else:
                mmchist.draw_fig5(ax, recs)
            ax.set_title("%s (%s)" % (arm, src), fontsize="small")
        fig.suptitle(title, fontsize="small")
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)

    def family(self, bid, exp):
        """The papers' figures with variants (Fig 2): IOPS side by side."""
        vs = self.variants(bid, exp)
        arms = [a for a in self.arm_ids if any(self.series(bid, exp, v, a, "iops")
                                                for v in vs)]
        md = ["### %s" % self.plan["experiments"][exp]["title"], ""]
        rows = [[v] + [fmt(self.med(bid, exp, v, a, "iops"), "%.0f") for a in arms]
                for v in vs]
        md += table(["job"] + arms, rows) + [""]
        if self.plots and arms:
            try:
                plt = self._plt()
                name = re.sub(r"[^A-Za-z0-9._-]+", "_", "%s_%s.png" % (bid, exp))
                fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(vs) * len(arms)), 4))
                w = 0.8 / len(arms)
                for i, a in enumerate(arms):
                    ax.bar([k + i * w - 0.4 + w / 2 for k in range(len(vs))],
                           [self.med(bid, exp, v, a, "iops") or 0 for v in vs], w, label=a)
                ax.set_xticks(range(len(vs)))
                ax.set_xticklabels([str(v) for v in vs])
                ax.set_ylabel("IOPS")
                ax.set_title("%s: %s" % (self.boot_title(self.boot(bid)), exp),
                             fontsize="small")
                ax.legend(fontsize="small")
                fig.tight_layout()
                fig.savefig(os.path.join(self.plot_dir, name), dpi=90)
                plt.close(fig)
                md += ["![%s](plots/%s)" % (exp, name), ""]
            except Exception as e:
                self.notes.append("%s/%s: plot: %s" % (bid, exp, e))
        self.md += md

    # -- the whole report
    def build(self):
        if self.plots:
            try:
                self._plt()
                os.makedirs(self.plot_dir, exist_ok=True)
            except Exception as e:
                self.notes.append("plots: n/a (%s)" % e)
                self.plots = False
        self.collect()
        self.header()
        self.targets_section()
        self.arms_section()
        for b in self.plan["boots"]:
            self.md += ["## %s" % self.boot_title(b), ""]
            g = self.summary["guests"].get(b["id"])
            if g:
                self.md += ["Guest clock: %s." % g["text"], ""]
            vm = b["device"].get("vm")
            if vm and vm.get("icount") is not None:
                self.md += ["Guest CPU: %d vCPU, its clock counting "
                            "instructions (QEMU -icount shift=%d, 2^%d ns "
                            "each): IOPS here are CPU work per I/O, not "
                            "wall-clock speed." % (vm.get("cpus", 2),
                                                   vm["icount"],
                                                   vm["icount"]), ""]
            disks = (self.summary.get("disks") or {}).get(b["id"])
            if disks:
                self.md += ["Disks as the guest found them: %s." % "; ".join(
                    disk_text(n, d) for n, d in disks.items()), ""]
            exps = []
            for r in b["runs"]:
                if r["experiment"] not in exps:
                    exps.append(r["experiment"])
            for e in exps:
                {"twoproc": self.twoproc, "responsiveness": self.responsiveness,
                 "family": self.family, "headline": self.headline}[
                    self.section_kind(b["id"], e)](b["id"], e)
            self.summary["boots"][b["id"]] = {
                e: {"%s|%s" % (v if v is not None else "", a): ms
                    for (v, a), ms in (self.values.get((b["id"], e)) or {}).items()}
                for e in exps}
        self.md += ["## Notes", ""]
        self.md += ["- %s" % n for n in self.notes] if self.notes else ["- none"]
        self.md.append("")
        self.summary["notes"] = self.notes
        return "\n".join(self.md)


# Kernel options that decide the guest's clock (tools/runner/vm-run): the
# clocksource sets what every clock read costs under TCG (HPET: 2.2 us,
# TSC: 0.14 us), so timing figures are comparable only between guests
# with the same one; noapictimer puts the timers on the HPET.
CLOCK_OPTS = re.compile(r"^(tsc|clocksource|notsc|hpet|preempt|noapictimer)(=|$)")


def guest_clock(console):
    """{clocksource, options} of a guest from its console log: the last
    clocksource it switched to and the clock options of its command
    line; None without a console log."""
    try:
        with open(console, errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    cs = re.findall(r"clocksource: Switched to clocksource (\S+)", text)
    m = re.search(r"Kernel command line: (.*)", text)
    opts = [w for w in m.group(1).split() if CLOCK_OPTS.match(w)] if m else []
    return {"clocksource": cs[-1] if cs else None, "options": opts}


def disk_text(name, d):
    """A disk's queue from guest.json: "sda (ufs): 1 hardware queue, 31
    tags, nr_requests 62, requests up to 1024 KiB, default scheduler
    mq-deadline"."""
    return ("%s (%s): %s hardware queue%s, %s tags, nr_requests %s, requests up "
            "to %s KiB, default scheduler %s" % (
                name, d.get("kind"), d.get("hw_queues"),
                "" if d.get("hw_queues") == 1 else "s", d.get("tags"),
                d.get("nr_requests"), d.get("max_sectors_kb"), d.get("scheduler")))


def guest_clock_text(g):
    return "clocksource %s%s" % (g.get("clocksource") or "unknown",
                                 " (%s)" % " ".join(g["options"]) if g.get("options")
                                 else "")


def build(root, plots=True, out_md=None, targets=TARGETS):
    root = root.rstrip("/") or "/"
    try:
        plan = _load_json(os.path.join(root, "plan.json"))
    except (OSError, ValueError) as e:
        raise ReportError("%s: no usable plan.json (%s)" % (root, e)) from None
    if plan.get("kind") != "fwdsched-bench-plan":
        raise ReportError("%s/plan.json: not a benchmark plan" % root)
    try:
        tg = _load_json(targets)
    except (OSError, ValueError) as e:
        raise ReportError("%s: unusable targets file (%s)" % (targets, e)) from None
    rep = Report(root, plan, tg, plots)
    text = rep.build()
    out_md = out_md or os.path.join(root, "report.md")
    with open(out_md, "w") as f:
        f.write(text)
    with open(os.path.join(os.path.dirname(out_md) or ".", "summary.json"), "w") as f:
        json.dump(rep.summary, f, indent=1, default=str)
        f.write("\n")
    return out_md, rep.summary


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    plots, out, targets, args = True, None, TARGETS, []
    it = iter(argv)
    for a in it:
        if a == "--no-plots":
            plots = False
        elif a in ("-o", "--targets"):
            v = next(it, None)
            if v is None:
                print("report: %s needs a file name" % a, file=sys.stderr)
                return 2
            if a == "-o":
                out = v
            else:
                targets = v
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            args.append(a)
    if len(args) != 1:
        print("usage: report.py [--no-plots] [--targets FILE] [-o REPORT.md] "
              "RESULTS_DIR", file=sys.stderr)
        return 2
    if not os.path.isdir(args[0]):
        print("report: %s: no such results directory" % args[0], file=sys.stderr)
        return 2
    try:
        path, _ = build(args[0], plots=plots, out_md=out, targets=targets)
    except ReportError as e:
        print("report: %s" % e, file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
