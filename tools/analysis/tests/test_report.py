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
        # same region: sync 95, 92, 91 of a share of min(100, total / 2)
        self.target("twoproc-share", "paper / same", "met", 0.92, 0.91, 0.95)
        self.target("twoproc-share", "symmetric / apart", "missed", 0.65, 0.6, 0.7)
        # totals 385, 382, 390 against 400
        self.target("twoproc-total", "paper / same", "met", 385 / 400, 382 / 400,
                    390 / 400)
        self.target("twoproc-total", "paper / apart", "missed", 365 / 400, 0.9,
                    370 / 400)
        # mq-deadline: sync 20, deep 380; shares 100 and 300
        j = self.vals("6.12-paper", "twoproc", "same", "mq-deadline", "jain_raw")
        self.assertAlmostEqual(j[1], 400 ** 2 / (2 * (20 ** 2 + 380 ** 2)))
        j = self.vals("6.12-paper", "twoproc", "same", "mq-deadline", "jain_share")
        self.assertAlmostEqual(j[1], (0.2 + 380 / 300) ** 2 /
                               (2 * (0.2 ** 2 + (380 / 300) ** 2)))
        self.assertEqual(self.vals("6.12-paper", "twoproc", "apart", "fwdsched",
                                   "sync_alone"), {1: 100, 2: 100, 3: 100})
        self.assertNotIn(("twoproc-share", "paper"), self.t)
        # the sync reader's think time, matched to fio's job by its count
        self.assertEqual(self.vals("6.12-paper", "twoproc", "same", "fwdsched",
                                   "sync_think_us"), {1: 1500, 2: 900, 3: 1200})
        self.assertNotIn("sync_think_us",
                         self.s["boots"]["6.12-paper"]["twoproc"]["same|mq-deadline"])
        # its latency: 2000 us beside the deep reader, 1000 us alone
        for arm in ("fwdsched", "mq-deadline"):
            self.assertEqual(self.vals("6.12-paper", "twoproc", "same", arm,
                                       "sync_wait_x_alone"), {1: 2.0, 2: 2.0, 3: 2.0})

    def test_responsiveness(self):
        # start-up 2.6, 2.8, 3.2 s against 2 s idle: 1.3, 1.4, 1.6
        self.target("startup-idle", "paper / writer", "unresolved", 1.4, 1.3, 1.6)
        self.target("startup-idle", "paper / reader", "met", 1.25, 1.2, 1.3)
        # both: 2.0, 2.1 and a start-up stopped at its 15 s limit (7.5x
        # idle at least)
        self.target("startup-idle", "paper / both", "missed", 2.1, 2.0, 7.5)
        self.assertEqual(self.t[("startup-idle", "paper / both")]["censored"], 1)
        self.assertIn("| both | none | ≥ 15.00 (3 at the limit) | 7.50 [7.50, 7.50] |",
                      self.md)
        # no bfq in this run
        self.assertIsNone(self.t[("startup-bfq", "paper / writer")]["verdict"])
        # the writer: 1.9, 1.85, 2.0 MiB/s in a 5 s window against 2.0
        # MiB/s in mq-deadline's 10 s window (its foreground took 10 s)
        w = self.vals("6.12-paper", "responsiveness", "writer", "fwdsched",
                      "bg_write_bps")
        self.assertAlmostEqual(w[2], 1.85 * 2 ** 20)
        self.target("startup-bg-write", "paper / writer", "met", 0.95, 0.925, 1.0)
        # reads: 240, 250, 260 against 300 (the 200 foreground reads out)
        self.target("startup-bg-read", "paper / reader", "missed", 250 / 300,
                    0.8, 260 / 300)
        # why (round 1 is traced): 2 foreground reads, waits 900 and 400 us
        self.assertIn("| writer | fwdsched | 2 | 0.7 | 0.3 | 1.0 | 0.5 | 50 |",
                      self.md)

    def test_deep_device_and_cpu(self):
        # kept 0.87, 0.89, 0.9 against mq-deadline's 0.9
        self.target("deep-kept", "null_blk", "met", 0.89 / 0.9, 0.87 / 0.9, 1.0)
        k = self.vals("6.12-nullb", "deep-nullb", None, "fwdsched", "deep_kept")
        self.assertAlmostEqual(k[1], 0.87)
        # 0.98, 1.01, 0.99: no difference, unresolved
        self.target("nullb-cpu", "null_blk", "unresolved", 0.99, 0.98, 1.01)
        # none's round 3 failed: its ratio pairs two rounds
        none = self.vals("6.12-nullb", "nullb-cpu", None, "none", "iops")
        self.assertEqual(sorted(none), [1, 2])
        self.assertIn("nullb-cpu round 3 none): failed: fio failed: synthetic",
                      self.md)

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
                     "6.12-paper_headline_fig5.png"):
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
            f.write("Kernel command line: a=b tsc=unstable clocksource_x=1\n"
                    "clocksource: Switched to clocksource hpet\n")
        g = report.guest_clock(con)
        self.assertEqual(g, {"clocksource": "hpet", "options": ["tsc=unstable"]})
        self.assertEqual(report.guest_clock_text(g), "clocksource hpet (tsc=unstable)")

    def test_publish(self):
        bm = os.path.join(self.tmp, "BENCHMARKS.md")
        self.assertEqual(publish.publish(self.root, bm), "run1")
        with open(bm) as f:
            text = f.read()
        self.assertTrue(text.startswith("# Benchmark results\n"))
        self.assertIn("## 2026-11-24 — 6.12 (run `run1`)", text)
        self.assertIn("- commit: `0123456789ab`\n", text)
        self.assertIn("- command: `BENCH_KVERS=6.12 BENCH_CARDS='paper symmetric' ", text)
        self.assertIn("duration: 21 min", text)
        self.assertIn("- guest clocks: 6.12-nullb clocksource tsc (tsc=reliable); "
                      "6.12-paper clocksource tsc (tsc=reliable)", text)
        self.assertIn("load 0.10 / 0.20 / 0.30 at the start and 0.50 / 0.40 / 0.30 "
                      "at the end", text)
        # the target table, verbatim from the report
        block = self.md[self.md.index("<!-- targets:begin -->") + 23:
                        self.md.index("<!-- targets:end -->")].strip("\n")
        self.assertIn(block, text)
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
                                200, 16384)
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
