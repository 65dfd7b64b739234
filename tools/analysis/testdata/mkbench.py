#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""mkbench.py DIR: writes a small recorded tools/bench run with known
answers into DIR, for tests/test_report.py: its plan (benchplan.make_plan
of the settings below, with a fixed time, host and commit) and, per run
id, the records the guest (tools/guest/bench.sh) writes, in its formats,
with the numbers chosen below (the expected results are derived in
tests/test_report.py).  Deterministic.  The test writes it afresh into a
temporary directory, so that it always matches the plan's format; it is
about 140 runs and 900 small files, too many to keep in the tree."""

import datetime
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYSIS = os.path.dirname(HERE)
sys.path.insert(0, ANALYSIS)
sys.path.insert(0, os.path.join(os.path.dirname(ANALYSIS), "flashcard"))
import benchplan  # noqa: E402
import costmodel  # noqa: E402

ENV = {"BENCH_FULL": "1", "BENCH_KVERS": "6.12", "BENCH_CARDS": "paper symmetric",
       "BENCH_EXPERIMENTS": "headline twoproc responsiveness deep-nullb "
                            "nullb-cpu",
       "BENCH_SCHEDS": "none mq-deadline fwdsched", "BENCH_ROUNDS": "3",
       "BENCH_RUNTIME": "5"}
FAILED = ("nullb-cpu", "none", 3)          # (experiment, arm, round)
MIB_SECTORS = 2048
TRACING = [False]         # the run being written records blktrace

# ---- the numbers, per (arm, round) ----------------------------------------
HEAD_IOPS = {"paper": {"mq-deadline": [100, 100, 100],
                       "fwdsched": [110, 120, 100], "none": [80, 80, 80]},
             "symmetric": {"mq-deadline": [100, 100, 100],
                           "fwdsched": [96, 95, 99], "none": [90, 90, 90]}}
# device time: (forward commands, forward mean us, backward commands,
# backward mean us) per round
HEAD_DEV = {"mq-deadline": [(800, 1500, 200, 4000)] * 3,
            "fwdsched": [(950, 1400, 50, 5400), (950, 1300, 50, 5300),
                         (950, 1500, 50, 5500)],
            "none": [(500, 2000, 500, 4000)] * 3}
HEAD_ORDER = {"mq-deadline": [20, 10, 30, 40], "fwdsched": [10, 20, 30, 40],
              "none": [40, 30, 20, 10]}
# two processes: (sync, async) IOPS together; sync and async alone
TWO = {"same": {"mq-deadline": [(20, 380)] * 3,
                "fwdsched": [(95, 290), (92, 290), (91, 299)],
                "none": [(10, 400)] * 3},
       "apart": {"mq-deadline": [(20, 380)] * 3,
                 "fwdsched": [(60, 300), (65, 300), (150, 150)],
                 "none": [(10, 400)] * 3}}
TWO_SYNC_ALONE = 100
TWO_DEEP_ALONE = 400
# the synchronous reader's mean latency beside the deep reader, us (1000
# alone), per (card, arm); 2000 for the others
TWO_SYNC_LAT = {("paper", "fwdsched"): [1300, 1400, 1600],
                ("symmetric", "fwdsched"): [1200, 1300, 1400]}
# its modelled service time alone, us a command (card counters)
TWO_ALONE_SVC_US = 600
TWO_PIDS = {"async": 700, "sync": 701}
TWO_SYNC_SECTOR = 4194304      # 2 GiB
# responsiveness: the synthetic start-up's slow-down (its idle reads/s
# over its reads/s in the window); the real program's start-up seconds
# (None: stopped at its limit); background MiB/s written, read IOPS
IDLE_IOPS = 80.0
START = {"writer": {"mq-deadline": [5] * 3, "fwdsched": [1.3, 1.4, 1.6],
                    "none": [6] * 3},
         "reader": {"mq-deadline": [3] * 3, "fwdsched": [1.2, 1.25, 1.3],
                    "none": [4] * 3},
         "both": {"mq-deadline": [7] * 3, "fwdsched": [2.0, 2.1, 7.5],
                  "none": [40] * 3}}
APP_IDLE_S = 2.0
APP_IDLE = {"fwdsched": [2.0, 2.0, 2.5]}
APP = {"writer": {"mq-deadline": [None] * 3, "fwdsched": [3.0, 3.2, 2.8],
                  "none": [None] * 3},
       "reader": {"mq-deadline": [20, 22, 24], "fwdsched": [2.6, 3.0, 2.4],
                  "none": [30] * 3},
       "both": {"mq-deadline": [None] * 3, "fwdsched": [4.0, 4.4, None],
                "none": [None] * 3}}
APP_READS = 300
BG_WRITE = {"writer": {"mq-deadline": [2.0] * 3, "fwdsched": [1.9, 1.85, 2.0],
                       "none": [2.0] * 3},
            "both": {"mq-deadline": [1.5] * 3, "fwdsched": [1.5] * 3,
                     "none": [1.5] * 3}}
BG_READ = {"reader": {"mq-deadline": [300] * 3, "fwdsched": [240, 250, 260],
                      "none": [320] * 3},
           "both": {"mq-deadline": [200] * 3, "fwdsched": [200] * 3,
                    "none": [210] * 3}}
FG_P99_US = {"mq-deadline": 200000, "fwdsched": 30000, "none": 250000}
# deep null_blk: deep alone; (sync, deep) together; sync alone
DEEP_ALONE = {"mq-deadline": [27000] * 3, "fwdsched": [27000, 27500, 26500],
              "none": [28000] * 3}
DEEP_TOGETHER = {"mq-deadline": [(900, 24300)] * 3,
                 "fwdsched": [(950, 23490), (940, 24475), (960, 23850)],
                 "none": [(800, 26000)] * 3}
DEEP_SYNC_ALONE = 1000
# null_blk without latency, per variant: (fio's job name, IOPS per arm)
CPU_IOPS = {"r16": ("r16-4k-direct",
                    {"mq-deadline": [50000, 52000, 51000],
                     "fwdsched": [49000, 52520, 50490],
                     "none": [60000, 62400, 61200]}),
            "1proc": ("cpu-1proc-qd32",
                      {"mq-deadline": [100000, 100000, 100000],
                       "fwdsched": [105000, 110000, 102000],
                       "none": [120000, 120000, 120000]}),
            "8proc": ("cpu-8proc-qd8",
                      {"mq-deadline": [200000, 200000, 200000],
                       "fwdsched": [180000, 190000, 170000],
                       "none": [240000, 240000, 240000]})}


def fio_doc(jobs, runtime_ms=5000):
    """jobs: [(name, iops, mean_us, p99_us)] -> minimal fio JSON."""
    out = []
    for name, iops, mean, p99 in jobs:
        ios = int(round(iops * runtime_ms / 1000))
        rd = {"io_bytes": ios * 4096, "bw": int(iops * 4), "iops": iops,
              "runtime": runtime_ms, "total_ios": ios,
              "clat_ns": {"mean": mean * 1000.0, "N": ios,
                          "percentile": {"99.000000": p99 * 1000,
                                         "99.900000": p99 * 1000}}}
        zero = {"io_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0,
                "total_ios": 0, "clat_ns": {"mean": 0.0, "N": 0}}
        out.append({"jobname": name, "groupid": 0, "error": 0,
                    "job_runtime": runtime_ms, "read": rd, "write": zero,
                    "trim": zero})
    return {"fio version": "fio-3.39", "jobs": out}


def card_docs(fwd, fwd_us, back, back_us):
    """Control-window documents before and after a run with the given
    read commands (the 'before' totals are not zero: the report must
    take the difference)."""
    card = costmodel.Card(costmodel.make_params("paper"))
    card.charge(0, 4096)
    card.charge(64 << 20, 4096)
    before = costmodel.parse_control(costmodel.control_text(card, 4 << 30, "paper", 1))
    after = json.loads(json.dumps(before))
    t = after["totals"]
    for sign, n, us in (("forward", fwd, fwd_us), ("backward", back, back_us)):
        t["read"][sign]["commands"] += n
        t["read"][sign]["busy_us"] = round(t["read"][sign]["busy_us"] + n * us, 3)
        t["read"][sign]["bytes"] += n * 4096
    t["commands"] += fwd + back
    t["busy_us"] = round(t["busy_us"] + fwd * fwd_us + back * back_us, 3)
    t["bytes"] += (fwd + back) * 4096
    after["control_reads"] += 1
    return before, after


def ts(ns):
    return "%d.%09d" % (ns // 10**9, ns % 10**9)


def blk_twoproc(n_deep, n_sync):
    """The trace of a two-process run: deep read i (pid 700) at sector 8i,
    each of the first n_sync followed by synchronous read i (pid 701) at
    TWO_SYNC_SECTOR + 8i; without deep reads, the synchronous ones alone.
    Each is inserted, dispatched (by a kworker) and completed in turn."""
    order = []
    for i in range(max(n_deep, n_sync)):
        if i < n_deep:
            order.append((TWO_PIDS["async"], 8 * i))
        if i < n_sync:
            order.append((TWO_PIDS["sync"], TWO_SYNC_SECTOR + 8 * i))
    lines, t = [], 1000
    for pid, sector in order:
        for a, who in (("I", "%d fio" % pid), ("D", "40 kworker/0:1H"),
                       ("C", "0 swapper/0")):
            t += 1000
            lines.append("179,0 %s RS %d 8 %s %s" % (a, sector, ts(t), who))
    return "\n".join(lines) + "\n"


def blk_order(dispatches):
    """I events for all, then each D and its C (forward 100 us, backward
    300 us); the dispatch order gives the forward fraction."""
    lines, t, pos = [], 1000, 0
    for s in dispatches:
        lines.append("179,0 I RS %d 8 %s 100 fio" % (s, ts(t)))
    for s in dispatches:
        t += 2000
        lines.append("179,0 D RS %d 8 %s 100 fio" % (s, ts(t)))
        t += 100000 if s >= pos else 300000
        lines.append("179,0 C RS %d 8 %s 0 swapper/0" % (s, ts(t)))
        pos = s + 8
    return "\n".join(lines) + "\n"


# The waits trace of every start-up run with a background (times in us):
#   a write W1 (sector 5000, 1024 sectors) is dispatched at 0 and
#   completes at 900; foreground read F1 (sector 100, 32 sectors) is
#   inserted at 100, with W1 in flight; another write W2 (sector 6024) is
#   dispatched at 200 (before F1), F1 at 1000, done at 1500.  Then F2
#   (sector 3000, 32 sectors) is inserted at 2000, nothing in flight; two
#   4 KiB reads (sectors 10, 20) are dispatched at 2100 and 2200, F2 at
#   2400, done at 2600.
# So per run: 2 foreground reads, mean wait (900 + 400) / 2 = 650 us,
# mean service (500 + 200) / 2 = 350 us, mean writes before 0.5, reads
# before 1.0, 50 % inserted with a write in flight.
WAITS = [(0, "D", "W", 5000, 1024), (100, "I", "R", 100, 32),
         (200, "D", "W", 6024, 1024), (900, "C", "W", 5000, 1024),
         (1000, "D", "R", 100, 32), (1100, "C", "W", 6024, 1024),
         (1500, "C", "R", 100, 32), (1900, "I", "R", 10, 8),
         (1950, "I", "R", 20, 8), (2000, "I", "R", 3000, 32),
         (2100, "D", "R", 10, 8), (2200, "D", "R", 20, 8),
         (2300, "C", "R", 10, 8), (2350, "C", "R", 20, 8),
         (2400, "D", "R", 3000, 32), (2600, "C", "R", 3000, 32)]


def blk_waits():
    return "".join("179,0 %s %sS %d %d %s 200 fio\n" %
                   (a, d, s, n, ts(1000000 + us * 1000))
                   for us, a, d, s, n in WAITS)


def diskstats(name, reads, rsect, writes, wsect):
    return ("179 0 %s %d 0 %d 100 %d 0 %d 200 0 300 300" %
            (name, reads, rsect, writes, wsect))


def write(path, text):
    if os.path.basename(path) == "blk.txt" and not TRACING[0]:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def records(run, d):
    """The records of one run into directory d."""
    arm, rnd, exp, var = run["arm"], run["round"], run["experiment"], run["variant"]
    k = rnd - 1
    status = "failed" if (exp, arm, rnd) == FAILED else "ok"
    TRACING[0] = "blktrace" in run["record"]
    write(os.path.join(d, "run.json"), json.dumps(
        {"id": run["id"], "status": status,
         "error": "fio failed: synthetic" if status != "ok" else "",
         "start": 1000.0 + run["seq"], "end": 1001.0 + run["seq"],
         "scheduler_read": run["scheduler"], "tunables_read": {}}) + "\n")
    if status != "ok":
        return
    card = None
    if exp == "headline":
        iops = HEAD_IOPS[run["_card"]][arm][k]
        doc = fio_doc([("r16-4k-direct", iops, 1000, 3000)])
        card = card_docs(*HEAD_DEV[arm][k])
        write(os.path.join(d, "blk.txt"), blk_order(HEAD_ORDER[arm]))
    elif exp == "twoproc":
        card = card_docs(100, 1000, 0, 0)
        if run["role"] == "alone":
            doc = fio_doc([(run["process"], TWO_SYNC_ALONE if run["process"] == "sync"
                            else TWO_DEEP_ALONE, 1000, 3000)])
            if run["process"] == "sync":
                card = card_docs(100, TWO_ALONE_SVC_US, 0, 0)
        else:
            s, a = TWO[var][arm][k]
            lat = TWO_SYNC_LAT.get((run["_card"], arm), [2000] * 3)[k]
            doc = fio_doc([("async", a, 30000, 60000), ("sync", s, lat, 20000)])
        ios = {j["jobname"]: j["read"]["total_ios"] for j in doc["jobs"]}
        write(os.path.join(d, "blk.txt"), blk_twoproc(ios.get("async", 0),
                                                      ios.get("sync", 0)))
    elif exp == "responsiveness":
        slow = 1.0 if var == "idle" else START[var][arm][k]
        win_fg = run["foreground"]["window_s"]
        fg_iops = IDLE_IOPS / slow
        fg_reads = int(round(fg_iops * win_fg))
        doc = fio_doc([("foreground", fg_iops, 5000, FG_P99_US[arm])],
                      runtime_ms=win_fg * 1000)
        card = card_docs(200, 1000, 0, 0)
        limit = run["app"]["limit_s"]
        app_s = (APP_IDLE.get(arm, [APP_IDLE_S] * 3)[k] if var == "idle"
                 else APP[var][arm][k])
        write(os.path.join(d, "app.json"), json.dumps(
            {"partition": "mmcblk0p1", "limit_s": limit, "modules": 39,
             "status": "limit" if app_s is None else "done",
             "elapsed_s": limit + 0.01 if app_s is None else app_s,
             "rc": None if app_s is None else 0, "stderr": "", "mount_s": 0.2,
             "diskstats_start": diskstats("mmcblk0p1", 10, 80, 0, 0),
             "diskstats_end": diskstats("mmcblk0p1", 10 + APP_READS,
                                        80 + APP_READS * 64, 0, 0)}) + "\n")
        if var == "idle":
            write(os.path.join(d, "blk.txt"), blk_order([10, 20]))
        else:
            write(os.path.join(d, "blk.txt"), blk_waits())
            win = win_fg + (limit if app_s is None else app_s)
            wbps = BG_WRITE.get(var, {}).get(arm, [0] * 3)[k]
            riops = BG_READ.get(var, {}).get(arm, [0] * 3)[k]
            wsect = int(round(wbps * win * MIB_SECTORS))
            # the background's, the foreground's and the program's reads
            nreads = int(round(riops * win)) + fg_reads + APP_READS
            write(os.path.join(d, "window.json"), json.dumps(
                {"warmup_s": 3, "window_s": 5, "t_start": 1000.0,
                 "fg_end": 1000.0 + win_fg, "t_end": 1000.0 + win,
                 "diskstats_start": diskstats("mmcblk0", 5000, 40000, 700, 90000),
                 "diskstats_end": diskstats("mmcblk0", 5000 + nreads,
                                            40000 + (nreads - fg_reads - APP_READS) * 8
                                            + fg_reads * 32 + APP_READS * 64, 700 + 10,
                                            90000 + wsect)}) + "\n")
            write(os.path.join(d, "bg.json"), json.dumps(fio_doc([("writer", 1, 1, 1)])))
    elif exp == "deep-nullb":
        if run["role"] == "alone" and run["process"] == "sync":
            doc = fio_doc([("sync", DEEP_SYNC_ALONE, 1000, 2000)])
        elif run["role"] == "alone":
            doc = fio_doc([("async", DEEP_ALONE[arm][k], 1100, 2000)])
        else:
            s, a = DEEP_TOGETHER[arm][k]
            doc = fio_doc([("async", a, 1200, 3000), ("sync", s, 1050, 2000)])
    elif exp == "nullb-cpu":
        job, iops = CPU_IOPS[var]
        doc = fio_doc([(job, iops[arm][k], 300, 900)])
    write(os.path.join(d, "fio.json"), json.dumps(doc) + "\n")
    if card and "card" in run["record"]:
        for name, c in zip(("card-before.json", "card-after.json"), card):
            write(os.path.join(d, name), json.dumps(c, sort_keys=True) + "\n")
    if "diskstats" in run["record"]:
        write(os.path.join(d, "diskstats-before.txt"), diskstats("mmcblk0", 1, 8, 0, 0) + "\n")
        write(os.path.join(d, "diskstats-after.txt"), diskstats("mmcblk0", 2, 16, 0, 0) + "\n")
    if arm == "fwdsched" and "debugfs" in run["record"]:
        write(os.path.join(d, "debugfs-stats.txt"),
              "inserted 100\ndispatched 100\nforward 96\nbackward 4\nwraps 4\n")
        if exp == "twoproc" and run["role"] != "alone":
            write(os.path.join(d, "debugfs-procs.txt"), debugfs_procs(doc, k))


SYNC_THINK_US = [1500, 900, 1200]


def debugfs_procs(doc, k):
    """fwdsched's procs file for a two-process run: the deep reader
    (listed first, with no think time) and the synchronous one (think
    time SYNC_THINK_US[k]), with request counts a few per cent off fio's
    (debugfs counts from the switch, fio from its start)."""
    rows = ["# tgid class rd_reqs rd_sectors rd_wait_us rd_wait_max_us wr_reqs "
            "wr_sectors wr_wait_us wr_wait_max_us queued inflight max_passed "
            "vtime ttime_us idle_ms comm"]
    ios = {j["jobname"]: j["read"]["total_ios"] for j in doc["jobs"]}
    for tgid, name, think in ((700, "async", 0), (701, "sync", SYNC_THINK_US[k])):
        n = int(ios[name] * 1.03)
        rows.append("%d be %d %d 0 0 0 0 0 0 0 0 3 %d %d 10 fio" %
                    (tgid, n, 8 * n, 16 * n, think))
    return "\n".join(rows) + "\n"


def main(root):
    if os.path.exists(root):
        shutil.rmtree(root)
    plan = benchplan.make_plan(
        ENV, now=datetime.datetime(2026, 11, 24, 12, 0, 0,
                                   tzinfo=datetime.timezone.utc),
        host={"nproc": 2, "loadavg": [0.1, 0.2, 0.3], "uname": "6.1.0-test",
              "qemu_running": 0},
        git={"commit": "0123456789ab", "dirty": False})
    write(os.path.join(root, "plan.json"), json.dumps(plan, indent=1) + "\n")
    for b in plan["boots"]:
        # the guest's console: the clock lines report.guest_clock() reads
        write(os.path.join(root, "boots", b["id"], "console.log"),
              "[    0.000000] Kernel command line: console=ttyS0 panic=-1 "
              "tsc=reliable panic_on_warn=1 init=/bin/init\n"
              "[    1.700000] clocksource: Switched to clocksource tsc-early\n"
              "[    2.900000] clocksource: Switched to clocksource tsc\n")
        write(os.path.join(root, "boots", b["id"], "guest.json"),
              json.dumps({"boot": b["id"], "uname": "6.12.0-test", "fio": "fio-3.39",
                          "cpus": 2, "mmc_history": False, "start": 1000.0,
                          "end": 2000.0}) + "\n")
        for r in b["runs"]:
            r = dict(r, _card=b["device"].get("spec"))
            records(r, os.path.join(root, "runs", r["id"]))
    write(os.path.join(root, "done.json"),
          json.dumps({"duration_s": 1234, "loadavg": [0.5, 0.4, 0.3]}) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: mkbench.py DIR")
    main(sys.argv[1])
