#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of the benchmark report (report.py) on a small recorded run with
known answers, written afresh by testdata/mkbench.py; the numbers below
are derived from the values chosen there."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "testdata"))

import frontier  # noqa: E402
import benchplan  # noqa: E402
import fwdlib  # noqa: E402
import mkbench  # noqa: E402
import publish  # noqa: E402
import report  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


class Report(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test-report.")
        cls.root = os.path.join(cls.tmp, "run1")
        mkbench.main(cls.root)
        cls.md_path, cls.s = report.build(cls.root, plots=have_matplotlib())
        with open(cls.md_path) as f:
            cls.md = f.read()
        cls.t = {}
        for row in cls.s["targets"]:
            cls.t[(row["target"], row["where"])] = row

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def vals(self, boot, exp, var, arm, metric):
        key = "%s|%s" % (var or "", arm)
        return {int(k): v for k, v in
                self.s["boots"][boot][exp][key][metric].items()}

    def target(self, tid, where, verdict, median, lo, hi):
        row = self.t[(tid, where)]
        self.assertEqual(row["verdict"], verdict, (tid, where, row))
        for k, v in (("median", median), ("lo", lo), ("hi", hi)):
            self.assertAlmostEqual(row[k], v, places=4, msg=(tid, where, k))

    def test_device_time(self):
        # mq-deadline: 800 forward x 1500 us + 200 backward x 4000 us =
        # 2 s for 1000 commands: 500 device IOPS; fwdsched 1000 commands
        # in 1.6, 1.5, 1.7 s; none 1000 in 3 s
        dl = self.vals("6.12-paper", "headline", None, "mq-deadline", "device_iops")
        fw = self.vals("6.12-paper", "headline", None, "fwdsched", "device_iops")
        self.assertEqual({k: round(v, 3) for k, v in dl.items()}, {1: 500, 2: 500, 3: 500})
        self.assertEqual({k: round(v, 3) for k, v in fw.items()},
                         {1: 625, 2: 666.667, 3: 588.235})
        svc = self.vals("6.12-paper", "headline", None, "fwdsched", "svc_backward_us")
        self.assertEqual({k: round(v, 3) for k, v in svc.items()},
                         {1: 5400, 2: 5300, 3: 5500})
        self.assertEqual(self.vals("6.12-paper", "headline", None, "none",
                                   "svc_forward_us")[2], 2000)
        # ratios 1.25, 1.333, 1.176 -> median 1.25 in [1.176, 1.333]: met
        self.target("paper-device", "paper", "met", 1.25, 1 / 0.85, 4 / 3)
        # against none (333.3 device IOPS): 1.875, 2, 1.765 -> unresolved
        self.target("paper-device-none", "paper", "unresolved", 1.875, 30 / 17, 2.0)
        self.assertIn("what the same dispatch order would give on a card whose host "
                      "costs nothing, and the figure a ratio to mq-deadline is judged "
                      "on first", self.md)

    def test_wall_clock_and_no_difference(self):
        # fwdsched 110, 120, 100 against 100: 1.1 [1.0, 1.2] contains 1.0
        self.assertIn("| fwdsched | 110 | no difference [1.00, 1.20] | 625 | "
                      "1.25 [1.18, 1.33] | 1400 | 5400 | 1.000 | 3000 |", self.md)
        self.assertIn("| none | 80 | 0.80 [0.80, 0.80] |", self.md)
        # symmetric: 0.96 [0.95, 0.99] reaches 0.97: met under "reaches"
        self.target("symmetric", "symmetric", "met", 0.96, 0.95, 0.99)
        # the dispatch order from blktrace: 1.0, 0.75, 0.25
        for arm, ff in (("fwdsched", 1.0), ("mq-deadline", 0.75), ("none", 0.25)):
            self.assertEqual(self.vals("6.12-paper", "headline", None, arm,
                                       "forward_fraction")[1], ff)
        self.assertIn("3 rounds: interval [x(1), x(3)] of the sorted per-round "
                      "values, coverage 75.0 %", self.md)

    def test_two_processes(self):
        # mq-deadline: sync 20, deep 380; shares 100 and 300
        j = self.vals("6.12-paper", "twoproc", "same", "mq-deadline", "jain_raw")
        self.assertAlmostEqual(j[1], 400 ** 2 / (2 * (20 ** 2 + 380 ** 2)))
        j = self.vals("6.12-paper", "twoproc", "same", "mq-deadline", "jain_share")
        self.assertAlmostEqual(j[1], (0.2 + 380 / 300) ** 2 /
                               (2 * (0.2 ** 2 + (380 / 300) ** 2)))
        self.assertEqual(self.vals("6.12-paper", "twoproc", "apart", "fwdsched",
                                   "sync_alone"), {1: 100, 2: 100, 3: 100})
        # same region: sync 95, 92, 91 of a share of min(100, total / 2)
        self.assertEqual(self.vals("6.12-paper", "twoproc", "same", "fwdsched",
                                   "sync_share_fraction"), {1: 0.95, 2: 0.92, 3: 0.91})
        # the sync reader's think time, matched to fio's job by its count
        self.assertEqual(self.vals("6.12-paper", "twoproc", "same", "fwdsched",
                                   "sync_think_us"), {1: 1500, 2: 900, 3: 1200})
        self.assertNotIn("sync_think_us",
                         self.s["boots"]["6.12-paper"]["twoproc"]["same|mq-deadline"])

    def test_wait_ratio(self):
        # its latency beside the deep reader over 1000 us alone: fwdsched
        # 1300, 1400, 1600 us on paper, 1200, 1300, 1400 on symmetric;
        # mq-deadline 2000
        self.assertEqual(self.vals("6.12-paper", "twoproc", "same", "mq-deadline",
                                   "sync_wait_x_alone"), {1: 2.0, 2: 2.0, 3: 2.0})
        self.assertEqual(self.vals("6.12-paper", "twoproc", "same", "fwdsched",
                                   "sync_wait_x_alone"), {1: 1.3, 2: 1.4, 3: 1.6})
        self.target("twoproc-wait", "paper / same", "unresolved", 1.4, 1.3, 1.6)
        self.target("twoproc-wait", "symmetric / same", "met", 1.3, 1.2, 1.4)
        # the same region only
        self.assertNotIn(("twoproc-wait", "paper / apart"), self.t)
        self.assertIn("| fwdsched | 92 | 100 | 1200 | 1.40 [1.30, 1.60] |", self.md)

    def test_frontier(self):
        # the frontier's shape, from the sync reader alone: a cycle of
        # 10000 us (100 IOPS) minus its latency of 1000 us; the latency
        # minus its 600 us of modelled service time
        for var in ("same", "apart"):
            for metric, v in (("frontier_think_us", 9000), ("frontier_emu_us", 400)):
                self.assertEqual(self.vals("6.12-paper", "twoproc", var, "fwdsched",
                                           metric), {1: v, 2: v, 3: v})
        params = frontier.card_params("paper")
        # device IOPS: 100 commands in 0.1 s of modelled time
        for var, shares in (("same", (0.95, 0.92, 0.91)),
                            ("apart", (60 / 100, 65 / 100, 1.5))):
            shape = frontier.make_shape(var, 9000, 400)
            fair = frontier.frontier(params, shape)["fair_share"]
            want = {k + 1: frontier.frontier_iops(params, shape, min(x, fair))
                    for k, x in enumerate(shares)}
            self.assertEqual(self.vals("6.12-paper", "twoproc", var, "fwdsched",
                                       "frontier_share"),
                             {k + 1: min(x, fair) for k, x in enumerate(shares)})
            got = self.vals("6.12-paper", "twoproc", var, "fwdsched", "frontier_iops")
            self.assertEqual(got.keys(), want.keys())
            for k in want:
                self.assertAlmostEqual(got[k], want[k], places=6)
            frac = self.vals("6.12-paper", "twoproc", var, "fwdsched",
                             "frontier_fraction")
            for k in want:
                self.assertAlmostEqual(frac[k], 1000 / want[k], places=9)
        # a share above 1 (round 3 apart: 150 against half of 300) is
        # judged at the largest share that leaves the deep reader its
        # own, where the frontier is higher
        shape = frontier.make_shape("apart", 9000, 400)
        fair = frontier.frontier(params, shape)["fair_share"]
        self.assertLess(fair, 1.5)
        self.assertGreater(frontier.frontier_iops(params, shape, fair),
                           frontier.frontier_iops(params, shape, 1.5))
        # the target: every round's fraction below 0.9 here
        fr = sorted(self.vals("6.12-paper", "twoproc", "same", "fwdsched",
                              "frontier_fraction").values())
        self.assertLess(fr[-1], 0.9)
        self.target("twoproc-frontier", "paper / same", "missed", fr[1], fr[0], fr[2])
        self.assertIn("the reader thinking 9000 µs between reads and the host "
                      "costing 400 µs a command", self.md)

    def test_device_time_by_process(self):
        # round 1 is traced: fwdsched, same region, paper: 1450 deep reads
        # at sectors 0, 8, 16, ..., the first 475 each followed by a sync
        # read 2 GiB up.  Sync reads: forward jumps of 4194296 sectors,
        # 100 + 150 * reach + 100 us each; deep reads after a sync read:
        # backward by 4194304 sectors, 100 + 1200 * reach + 100; the
        # other deep reads continue the one before (100 us), the first is
        # charged its transfer only (100 us)
        reach = lambda d: d / (d + 8192)
        sync = 200 + 150 * reach(4194296)
        deep = (100 + 475 * (200 + 1200 * reach(4194304)) + (1450 - 1 - 475) * 100) / 1450
        v = lambda m: self.vals("6.12-paper", "twoproc", "same", "fwdsched", m)
        self.assertEqual(list(v("sync_device_us")), [1])
        self.assertAlmostEqual(v("sync_device_us")[1], sync, places=6)
        self.assertAlmostEqual(v("deep_device_us")[1], deep, places=6)
        self.assertAlmostEqual(v("sync_device_share")[1],
                               475 * sync / (475 * sync + 1450 * deep), places=9)
        # against the card's counters: 100 commands of 1000 us
        self.assertAlmostEqual(v("traced_x_card")[1],
                               (475 * sync + 1450 * deep) / 100000, places=9)
        self.assertIn("Device time by process, on the traced rounds only", self.md)
        self.assertIn("| fwdsched | 1 | 95 | %.0f | 290 | %.0f | %.3f |" % (
            sync, deep, 475 * sync / (475 * sync + 1450 * deep)), self.md)

    def test_responsiveness(self):
        # the synthetic start-up's slow-down: idle reads/s over reads/s in
        # the window; never censored
        self.target("startup-idle", "paper / writer", "unresolved", 1.4, 1.3, 1.6)
        self.target("startup-idle", "paper / reader", "met", 1.25, 1.2, 1.3)
        self.target("startup-idle", "paper / both", "missed", 2.1, 2.0, 7.5)
        self.assertEqual(self.t[("startup-idle", "paper / both")]["censored"], 0)
        self.assertEqual(self.vals("6.12-paper", "responsiveness", "writer",
                                   "fwdsched", "fg_iops")[1], 80 / 1.3)
        self.assertIn("| both | mq-deadline | 11.4 | 7.00 [7.00, 7.00] | 200000 | ",
                      self.md)
        # the experiment keeps mq-deadline, bfq and fwdsched: no none
        self.assertNotIn("| both | none |", self.md)
        # every arm's start-ups against idle reach the arm table too
        arms = self.md[self.md.index("## Every arm against"):]
        self.assertIn("| paper / writer | responsiveness | fwdsched | "
                      "start-up × idle | 1.40 [1.30, 1.60] |", arms)
        self.assertNotIn("| paper / idle | responsiveness |", arms)
        # no bfq in this run
        self.assertIsNone(self.t[("startup-bfq", "paper / writer")]["verdict"])
        self.assertIsNone(self.t[("app-startup-bfq", "paper / writer")]["verdict"])
        # the writer: 1.9, 1.85, 2.0 MiB/s against 2.0 MiB/s in
        # mq-deadline's window (5 s and its program's limit)
        w = self.vals("6.12-paper", "responsiveness", "writer", "fwdsched",
                      "bg_write_bps")
        self.assertAlmostEqual(w[2] / 2 ** 20, 1.85, places=3)
        self.target("startup-bg-write", "paper / writer", "met", 0.95, 0.925, 1.0)
        # reads: 240, 250, 260 against 300 (the foreground's and the
        # program's reads out)
        self.target("startup-bg-read", "paper / reader", "missed", 250 / 300,
                    0.8, 260 / 300)
        # why (round 1 is traced): 2 foreground reads, waits 900 and 400 us
        self.assertIn("| writer | fwdsched | 2 | 0.7 | 0.3 | 1.0 | 0.5 | 50 |",
                      self.md)

    def test_real_program(self):
        # fwdsched idle 2.0, 2.0, 2.5 s; beside the writer 3.0, 3.2, 2.8:
        # 1.5, 1.6, 1.12
        x = self.vals("6.12-paper", "responsiveness", "writer", "fwdsched",
                      "app_x_idle")
        self.assertEqual({k: round(v, 3) for k, v in x.items()},
                         {1: 1.5, 2: 1.6, 3: 1.12})
        self.target("app-startup-idle", "paper / writer", "unresolved", 1.5, 1.12, 1.6)
        # the reader: 1.3, 1.5, 0.96: met (the interval's top is the bound)
        self.target("app-startup-idle", "paper / reader", "met", 1.3, 0.96, 1.5)
        # both: 2.0, 2.2 and a start stopped at its limit (limit / 2.5 s,
        # its idle start-up, at least)
        lim = benchplan.APP_LIMIT_S["sd"]
        self.target("app-startup-idle", "paper / both", "missed", 2.2, 2.0, lim / 2.5)
        self.assertEqual(self.t[("app-startup-idle", "paper / both")]["censored"], 1)
        self.assertIn("| both | mq-deadline | 11.4 | 7.00 [7.00, 7.00] | 200000 | "
                      "≥ %.2f (3 at the limit) | %.2f [%.2f, %.2f] | 300 |" %
                      (lim, lim / 2, lim / 2, lim / 2), self.md)
        self.assertIn("importing %d modules (argparse, json, " %
                      len(benchplan.APP_MODULES), self.md)
        self.assertIn("stopped at %d s" % lim, self.md)
        # the limit against the idle start-ups: limit / 2.5 at the least
        self.assertIn("The limit was at least %.0f× the idle start-up in every "
                      "round." % (lim / 2.5), self.md)
        # a failed start is noted, not counted
        with self.assertRaises(ValueError):
            report.app_record({"status": "failed", "error": "boom"})
        a = report.app_record({"status": "limit", "limit_s": 90, "elapsed_s": 90.02,
                               "diskstats_start": mkbench.diskstats("p1", 1, 8, 0, 0),
                               "diskstats_end": mkbench.diskstats("p1", 41, 648, 0, 0)})
        self.assertEqual((a["app_s"], a["app_capped"], a["app_reads"],
                          a["app_read_bytes"]), (90, True, 40, 640 * 512))

    def test_plan_kind_and_transport(self):
        self.assertIn("- the full matrix (make bench FULL=1); kernels 6.12; ", self.md)
        self.assertIn("## kernel 6.12, flash card `paper` (SD card)", self.md)
        rep = object.__new__(report.Report)
        self.assertEqual(report.card_name({"spec": "paper,back_us=9,transport=ufs"}),
                         "paper,back_us=9")
        self.assertEqual(report.plan_text({"plan": "default"}),
                         "the default plan (make bench); ")
        self.assertEqual(report.plan_text({}), "")   # planned before FULL
        self.assertEqual(rep.boot_title({"kernel": "6.12", "device": {
            "kind": "flashcard", "spec": "paper,transport=ufs", "transport": "ufs"}}),
            "kernel 6.12, flash card `paper` (UFS)")
        # what the guest found, on UFS: 31 tags, one hardware queue
        self.assertEqual(report.disk_text("sda", {
            "kind": "ufs", "hw_queues": 1, "tags": 31, "nr_requests": 62,
            "max_sectors_kb": 1024, "scheduler": "mq-deadline"}),
            "sda (ufs): 1 hardware queue, 31 tags, nr_requests 62, requests up "
            "to 1024 KiB, default scheduler mq-deadline")

    def test_deep_device_and_cpu(self):
        # kept 0.87, 0.89, 0.9 against mq-deadline's 0.9
        self.target("deep-kept", "null_blk", "met", 0.89 / 0.9, 0.87 / 0.9, 1.0)
        k = self.vals("6.12-nullb", "deep-nullb", None, "fwdsched", "deep_kept")
        self.assertAlmostEqual(k[1], 0.87)
        # 0.98, 1.01, 0.99: no difference, unresolved
        self.target("nullb-cpu", "null_blk / r16", "unresolved", 0.99, 0.98, 1.01)
        # its guest of one vCPU counting instructions, said under its boot
        sec = self.md[self.md.index("## kernel 6.12, null_blk, instructions "
                                    "counted\n"):]
        self.assertIn("Guest CPU: 1 vCPU, its clock counting instructions "
                      "(QEMU -icount shift=1", sec)
        # none's round 3 failed, in every variant: its ratio pairs two rounds
        for var in ("r16", "1proc", "8proc"):
            none = self.vals("6.12-nullb-cpu", "nullb-cpu", var, "none", "iops")
            self.assertEqual(sorted(none), [1, 2], var)
            self.assertIn("nullb-cpu %s round 3 none): failed: fio failed: "
                          "synthetic" % var, self.md)

    def test_cpu_variants(self):
        # one process at 32 in flight: 105000, 110000, 102000 against
        # 100000: 1.05 [1.02, 1.10], met; eight processes: 180000, 190000,
        # 170000 against 200000: 0.90 [0.85, 0.95], missed
        self.target("nullb-cpu-1proc", "null_blk / 1proc", "met", 1.05, 1.02, 1.10)
        self.target("nullb-cpu-8proc", "null_blk / 8proc", "missed", 0.9, 0.85, 0.95)
        # each target on its own variant only
        for tid, var in (("nullb-cpu", "r16"), ("nullb-cpu-1proc", "1proc"),
                         ("nullb-cpu-8proc", "8proc")):
            self.assertEqual([w for t, w in self.t if t == tid],
                             ["null_blk / %s" % var], tid)
        # every arm of every variant, with its ratio and interval, as the
        # headline's table (not the family's medians side by side)
        sec = self.md[self.md.index("### 4 KiB random reads on null_blk"):]
        sec = sec[:sec.index("\n## ")]
        heads = [l for l in sec.splitlines() if l.startswith("#### ")]
        self.assertEqual(heads, [
            "#### r16: one process of 16 threads, one read each in flight "
            "(psync; the headline job)",
            "#### 1proc: one process of 2 threads, 16 reads each in flight "
            "(libaio; 32 in all)",
            "#### 8proc: 8 processes, 8 reads each in flight (libaio; 64 in all)"])
        self.assertIn("| arm | IOPS | × mq-deadline | p99 µs |", sec)
        for row in ("| mq-deadline | 100000 | 1 | 900 |",
                    "| fwdsched | 105000 | 1.05 [1.02, 1.10] | 900 |",
                    "| none | 120000 | 1.20 [1.20, 1.20] | 900 |",
                    "| fwdsched | 180000 | 0.90 [0.85, 0.95] | 900 |",
                    "| fwdsched | 50490 | no difference [0.98, 1.01] | 900 |"):
            self.assertIn(row, sec)
        self.assertEqual(sec.count("| mq-deadline |"), 3)
        # summary.json keeps each variant's per-round values
        self.assertEqual(self.vals("6.12-nullb-cpu", "nullb-cpu", "8proc", "fwdsched",
                                   "iops"), {1: 180000, 2: 190000, 3: 170000})

    def test_cpu_before_variants(self):
        # a run planned when nullb-cpu ran the headline job alone (variant
        # None) is still judged by the target of that job
        tmp = tempfile.mkdtemp()
        try:
            root = os.path.join(tmp, "r")
            shutil.copytree(self.root, root)
            path = os.path.join(root, "plan.json")
            with open(path) as f:
                plan = json.load(f)
            e = plan["experiments"]["nullb-cpu"]
            for k in ("variants", "variant_titles", "ratios"):
                del e[k]
            e["job"] = "fig3-r16-4k-direct-128m"
            for b in plan["boots"]:
                b["runs"] = [r for r in b["runs"] if r["experiment"] != "nullb-cpu"
                             or r["variant"] == "r16"]
                for r in b["runs"]:
                    if r["experiment"] == "nullb-cpu":
                        r["variant"] = None
            with open(path, "w") as f:
                json.dump(plan, f)
            _, s = report.build(root, plots=False)
            rows = [r for r in s["targets"] if r["target"].startswith("nullb-cpu")]
            self.assertEqual([(r["target"], r["where"], r["verdict"]) for r in rows],
                             [("nullb-cpu", "null_blk", "unresolved")])
            self.assertAlmostEqual(rows[0]["median"], 0.99, places=4)
            with open(os.path.join(root, "report.md")) as f:
                self.assertIn("nullb-cpu-1proc, nullb-cpu-8proc.", f.read())
        finally:
            shutil.rmtree(tmp)

    def test_targets_name_what_the_plan_runs(self):
        # every target's experiment, metric, arm's baseline and variants
        # exist (a variant of null: runs planned before the experiment had
        # variants)
        with open(report.TARGETS) as f:
            tg = json.load(f)
        ids = [t["id"] for t in tg["targets"]]
        self.assertEqual(len(ids), len(set(ids)))
        for t in tg["targets"]:
            e = benchplan.EXPERIMENTS[t["experiment"]]
            self.assertIn(t["metric"], report.METRICS, t["id"])
            known = set(e.get("variants") or e.get("backgrounds") or [])
            for v in t.get("variants") or []:
                self.assertTrue(v in known or v is None, (t["id"], v))

    def test_target_table(self):
        begin = self.md.index("<!-- targets:begin -->")
        end = self.md.index("<!-- targets:end -->")
        block = self.md[begin:end]
        self.assertIn("| paper-device | paper card: modelled device IOPS ≥ 1.10× "
                      "mq-deadline | 6.12 | paper | fwdsched | 1.25 [1.18, 1.33] | "
                      ">= 1.10× mq-deadline | 0.750 | **met** |", block)
        self.assertIn("not in this run: paper-device-6.1, fig56-wall.", block)
        n = {}
        for row in self.s["targets"]:
            n[row["verdict"]] = n.get(row["verdict"], 0) + 1
        self.assertIn("%d met, %d missed, %d unresolved, %d not measured" %
                      (n["met"], n["missed"], n["unresolved"], n[None]), block)

    @unittest.skipUnless(have_matplotlib(), "matplotlib missing")
    def test_plots(self):
        for name in ("6.12-paper_headline_iops.png", "6.12-paper_headline_fig4.png",
                     "6.12-paper_headline_fig5.png",
                     "6.12-nullb-cpu_nullb-cpu_r16_iops.png",
                     "6.12-nullb-cpu_nullb-cpu_1proc_iops.png",
                     "6.12-nullb-cpu_nullb-cpu_8proc_iops.png"):
            with open(os.path.join(self.root, "plots", name), "rb") as f:
                self.assertEqual(f.read(8), PNG, name)
            self.assertIn("(plots/%s)" % name, self.md)

    def test_missing_records_are_noted(self):
        tmp = tempfile.mkdtemp()
        try:
            root = os.path.join(tmp, "r")
            shutil.copytree(self.root, root)
            shutil.rmtree(os.path.join(root, "runs", "6.12-paper.002"))
            os.unlink(os.path.join(root, "boots", "6.12-nullb", "guest.json"))
            _, s = report.build(root, plots=False)
            text = "\n".join(s["notes"])
            self.assertIn("6.12-paper.002 (headline round 1 mq-deadline): no usable "
                          "run.json", text)
            self.assertIn("6.12-nullb: no guest.json", text)
            # round 1 lost its baseline: fwdsched's device ratio pairs two rounds
            row = [r for r in s["targets"] if r["target"] == "paper-device"][0]
            self.assertEqual(row["n"], 2)
        finally:
            shutil.rmtree(tmp)

    def test_dropped_trace_is_noted(self):
        tmp = tempfile.mkdtemp()
        try:
            root = os.path.join(tmp, "r")
            shutil.copytree(self.root, root)
            path = os.path.join(root, "runs", "6.12-paper.002", "run.json")
            with open(path) as f:
                st = json.load(f)
            st["blktrace_dropped"] = 4096
            with open(path, "w") as f:
                json.dump(st, f)
            _, s = report.build(root, plots=False)
            notes = [n for n in s["notes"] if "dropped" in n]
            self.assertEqual(len(notes), 1, s["notes"])
            self.assertIn("6.12-paper.002 (headline round 1 mq-deadline): "
                          "blktrace dropped 4096 events", notes[0])
        finally:
            shutil.rmtree(tmp)

    def test_cli(self):
        p = subprocess.run([sys.executable, os.path.join(HERE, "report.py"),
                            "--no-plots", "-o", os.path.join(self.tmp, "x.md"),
                            self.root], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = subprocess.run([sys.executable, os.path.join(HERE, "report.py"),
                            self.tmp], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no usable plan.json", p.stderr)
        p = subprocess.run([sys.executable, os.path.join(HERE, "report.py"),
                            os.path.join(self.tmp, "nope")], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 2)


    def test_guest_clock(self):
        self.assertIn("\nGuest clock: clocksource tsc (tsc=reliable).\n", self.md)
        self.assertIsNone(report.guest_clock(os.path.join(self.tmp, "no-console")))
        con = os.path.join(self.tmp, "hpet.console")
        with open(con, "w") as f:
            f.write("Kernel command line: a=b tsc=unstable clocksource_x=1 noapictimer\n"
                    "clocksource: Switched to clocksource hpet\n")
        g = report.guest_clock(con)
        self.assertEqual(g, {"clocksource": "hpet",
                             "options": ["tsc=unstable", "noapictimer"]})
        self.assertEqual(report.guest_clock_text(g),
                         "clocksource hpet (tsc=unstable noapictimer)")

    def test_publish(self):
        bm = os.path.join(self.tmp, "BENCHMARKS.md")
        self.assertEqual(publish.publish(self.root, bm), "run1")
        with open(bm) as f:
            text = f.read()
        self.assertTrue(text.startswith("# Benchmark results\n"))
        self.assertIn("## 2026-11-24 — 6.12, full matrix (run `run1`)", text)
        self.assertEqual(publish._plan_kind({"plan": "full"}), ", full matrix")
        self.assertEqual(publish._plan_kind({}), "")   # planned before FULL
        self.assertIn("- commit: `0123456789ab`\n", text)
        self.assertIn("- command: `BENCH_KVERS=6.12 BENCH_CARDS='paper symmetric' ", text)
        self.assertIn("duration: 21 min", text)
        self.assertIn("- guest clocks: 6.12-nullb clocksource tsc (tsc=reliable); "
                      "6.12-nullb-cpu clocksource tsc (tsc=reliable); "
                      "6.12-paper clocksource tsc (tsc=reliable)", text)
        self.assertIn("load 0.10 / 0.20 / 0.30 at the start and 0.50 / 0.40 / 0.30 "
                      "at the end", text)
        # the target table, verbatim from the report
        block = self.md[self.md.index("<!-- targets:begin -->") + 23:
                        self.md.index("<!-- targets:end -->")].strip("\n")
        self.assertIn(block, text)
        # and every arm against the baseline, also verbatim
        arms = self.md[self.md.index(publish.ARMS_BEGIN) + len(publish.ARMS_BEGIN):
                       self.md.index(publish.ARMS_END)].strip("\n")
        self.assertIn("| fwdsched | device IOPS × mq-deadline | ", arms)
        self.assertNotIn("| mq-deadline | device IOPS", arms)
        self.assertIn(arms, text)
        # not twice
        with self.assertRaises(publish.PublishError):
            publish.publish(self.root, bm)
        p = subprocess.run([sys.executable, os.path.join(HERE, "publish.py"), "--file",
                            bm, self.root], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("already in", p.stderr)
        p = subprocess.run([sys.executable, os.path.join(HERE, "publish.py"), "--file",
                            bm, self.tmp], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no plan or report", p.stderr)


class Parsers(unittest.TestCase):

    def test_waits_behind(self):
        ev = fwdlib.parse_blkparse(mkbench.blk_waits().splitlines())
        w = fwdlib.waits_behind(ev, lambda e: e.direction == "R" and e.blocks == 32)
        self.assertEqual([(r["sector"], r["reads"], r["writes"], r["write_in_flight"])
                          for r in w], [(100, 0, 1, True), (3000, 2, 0, False)])
        self.assertEqual([(r["d_ns"] - r["i_ns"], r["c_ns"] - r["d_ns"]) for r in w],
                         [(900000, 500000), (400000, 200000)])
        s = report.summarize_waits(w)
        self.assertEqual((s["n"], s["wait_us"], s["service_us"], s["reads"],
                          s["writes"], s["write_in_flight"]),
                         (2, 650, 350, 1.0, 0.5, 0.5))
        # a requeued foreground read is the same read waiting again: F2 is
        # dispatched at 2400, requeued at 2450, inserted again at 2460
        # after a write was dispatched at 2455, dispatched at 2500
        lines = mkbench.blk_waits().splitlines()
        extra = [(2450, "R", "R", 3000, 32), (2455, "D", "W", 9000, 8),
                 (2460, "I", "R", 3000, 32), (2500, "D", "R", 3000, 32)]
        lines = [l for l in lines if not l.split()[5].endswith("002400000")]
        lines += ["179,0 %s %sS %d %d %s 200 fio" % (a, d, sec, n, mkbench.ts(
            1000000 + us * 1000)) for us, a, d, sec, n in extra]
        lines.sort(key=lambda l: l.split()[5])
        w = fwdlib.waits_behind(fwdlib.parse_blkparse(lines),
                                lambda e: e.direction == "R" and e.blocks == 32)
        self.assertEqual(len(w), 2)
        self.assertEqual((w[1]["requeues"], w[1]["writes"], w[1]["reads"]), (1, 1, 2))
        self.assertEqual(w[1]["d_ns"] - w[1]["i_ns"], 500000)
        # without I events (no elevator traced them), from Q
        q = [line.replace(" I ", " Q ") for line in mkbench.blk_waits().splitlines()]
        w = fwdlib.waits_behind(fwdlib.parse_blkparse(q),
                                lambda e: e.direction == "R" and e.blocks == 32)
        self.assertEqual(len(w), 2)
        self.assertEqual(w[1]["reads"], 2)

    def test_diskstats_and_window(self):
        d = fwdlib.parse_diskstats(mkbench.diskstats("mmcblk0", 5, 40, 7, 90))
        self.assertEqual(d, {"name": "mmcblk0", "reads": 5, "read_sectors": 40,
                             "writes": 7, "write_sectors": 90})
        with self.assertRaises(ValueError):
            fwdlib.parse_diskstats("179 0 mmcblk0 1 2")
        r = report.window_rates({"t_start": 10.0, "t_end": 14.0, "fg_end": 12.0,
                                 "window_s": 4,
                                 "diskstats_start": mkbench.diskstats("x", 0, 0, 0, 0),
                                 "diskstats_end": mkbench.diskstats("x", 600, 4800,
                                                                    9, 8192)},
                                200, 200 * 16384)
        self.assertEqual((r["bg_write_bps"], r["bg_read_iops"], r["window_s"]),
                         (8192 * 512 / 4, 100, 4))
        self.assertFalse(r["fg_outlasted_window"])

    def test_think_time_matching(self):
        procs = {"async": {"ios": 1000}, "sync": {"ios": 300}}
        rows = [{"tgid": 1, "reqs": 310, "think_us": 800},
                {"tgid": 2, "reqs": 1020, "think_us": None}]
        report.match_think_times(procs, rows)
        self.assertEqual(procs["sync"].get("think_us"), 800)
        self.assertNotIn("think_us", procs["async"])
        # no row within 10 %: no think time rather than a wrong one
        procs = {"sync": {"ios": 300}}
        report.match_think_times(procs, [{"tgid": 1, "reqs": 340, "think_us": 800}])
        self.assertNotIn("think_us", procs["sync"])
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write(mkbench.debugfs_procs(mkbench.fio_doc(
                [("async", 200, 1, 1), ("sync", 60, 1, 1)]), 1))
            f.flush()
            rows = report.parse_debugfs_procs(f.name)
        self.assertEqual([(r["tgid"], r["reqs"], r["think_us"]) for r in rows],
                         [(700, 1030, None), (701, 309, 900)])

    def test_card_device_time(self):
        before, after = mkbench.card_docs(3, 1000, 1, 4000)
        d = report.card_device_time(before, after)
        self.assertEqual((d["commands"], d["busy_us"], d["device_iops"]),
                         (4, 7000, 4 / 7000 * 1e6))
        self.assertEqual(d["by_sign"]["backward"]["mean_us"], 4000)
        self.assertIsNone(d["by_sign"]["continuation"]["mean_us"])
        with self.assertRaises(ValueError):
            report.card_device_time(before, json.loads('{"totals": 1}'))


class CensoredRatio(unittest.TestCase):
    """A ratio whose two arms both have rounds stopped at the time limit
    (start-up against BFQ's): such rounds are left out of the ratio and
    counted, whichever side they are on."""

    def test_both_sides_censored(self):
        rep = object.__new__(report.Report)
        c = report.CENSORED + "startup_s"
        rep.values = {("b", "e"): {
            (None, "a"): {"startup_s": {1: 2.0, 2: 3.0, 3: 4.0}, c: {3: True}},
            (None, "v"): {"startup_s": {1: 1.0, 2: 1.5, 3: 2.0}, c: {2: True}}}}
        iv = rep.iv("b", "e", None, "a", "startup_s", versus="v")
        self.assertEqual(iv["censored"], 2)
        self.assertEqual(iv["median"], 2.0)


if __name__ == "__main__":
    unittest.main()
