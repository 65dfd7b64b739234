#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests for tools/analysis/report.py on testdata/results/run1 (written by
testdata/mkresults.py; the expected numbers are derived below)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(HERE, "testdata", "results", "run1")
sys.path.insert(0, HERE)

import report as fwdreport  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def run_cli(*args):
    p = subprocess.run([sys.executable, os.path.join(HERE, "report.py")] + list(args),
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


class TestReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.root = os.path.join(cls.tmp, "run1")
        shutil.copytree(RUN, cls.root)
        rc, out, err = run_cli(cls.root)
        assert rc == 0, err
        cls.out = out
        with open(os.path.join(cls.root, "summary.json")) as f:
            cls.sum = json.load(f)
        with open(os.path.join(cls.root, "report.md")) as f:
            cls.md = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def job(self, model, job):
        for j in self.sum["jobs"]:
            if (j["kver"], j["model"], j["job"]) == ("6.12", model, job):
                return j
        self.fail("job %s/%s missing" % (model, job))

    def test_prints_report_path(self):
        self.assertEqual(self.out.strip(), os.path.join(self.root, "report.md"))

    def test_scheduler_order(self):
        self.assertEqual(list(self.job("paper", "rand16")["scheds"]),
                         ["none", "mq-deadline", "kyber", "bfq", "fwdsched",
                          "fwdsched-slack0", "fwdsched-slack8"])
        sec = self.md[self.md.index("## 6.12 / paper / rand16"):]
        lines = [ln.split("|")[1].strip() for ln in sec.splitlines()
                 if ln.startswith("| ") and "scheduler" not in ln]
        self.assertEqual(lines[:7], ["none", "mq-deadline", "kyber", "bfq", "fwdsched",
                                     "fwdsched-slack0", "fwdsched-slack8"])

    def test_throughput_ratios(self):
        s = self.job("paper", "rand16")["scheds"]
        # mq-deadline 4 x 100 IOPS; fwdsched 150+150+100+100; none 4 x 80
        self.assertEqual(s["mq-deadline"]["iops"], 400)
        self.assertEqual(s["fwdsched"]["iops"], 500)
        self.assertAlmostEqual(s["fwdsched"]["iops_x_dl"], 1.25)
        self.assertAlmostEqual(s["none"]["iops_x_dl"], 0.8)
        self.assertAlmostEqual(s["mq-deadline"]["iops_x_dl"], 1.0)
        # mean 800 vs 1000 µs; p99 2400 vs 3000; p99.9 5000 vs 5000
        self.assertAlmostEqual(s["fwdsched"]["mean_us_x_dl"], 0.8)
        self.assertAlmostEqual(s["fwdsched"]["p99_us_x_dl"], 0.8)
        self.assertAlmostEqual(s["fwdsched"]["p999_us_x_dl"], 1.0)
        self.assertIn("| fwdsched | 500 | 1.25 | 800.0 | 0.80 | 2400.0* | 0.80 |", self.md)

    def test_rounds(self):
        s = self.job("nullb", "rand16")["scheds"]
        # dl 100 200 100; none 125 250 -; fwdsched 90 220 80
        self.assertEqual(s["fwdsched"]["rounds_iops"], {"1": 90, "2": 220, "3": 80})
        self.assertEqual(s["fwdsched"]["rounds_iops_median"], 90)
        # x dl per round 0.9 1.1 0.8; x none 0.72 0.88 (none has no round 3)
        self.assertAlmostEqual(s["fwdsched"]["rounds_x_dl_median"], 0.9)
        self.assertAlmostEqual(s["fwdsched"]["rounds_x_none_median"], 0.8)
        self.assertAlmostEqual(s["none"]["rounds_x_dl_median"], 1.25)
        self.assertAlmostEqual(s["mq-deadline"]["rounds_x_dl_median"], 1.0)
        self.assertEqual(self.md.count("### Repeated rounds"), 1)
        self.assertIn("| none | 125 | 250 | n/a | 188 | 1.25 | 1.00 |", self.md)
        self.assertIn("| fwdsched | 90 | 220 | 80 | 90 | 0.90 | 0.80 |", self.md)
        self.assertNotIn("rounds_iops", self.job("paper", "rand16")["scheds"]["fwdsched"])

    def test_jain(self):
        s = self.job("paper", "rand16")["scheds"]
        self.assertAlmostEqual(s["mq-deadline"]["jain_threads"], 1.0)
        # 500^2 / (4 * (150^2*2 + 100^2*2)) = 250000 / 260000
        self.assertAlmostEqual(s["fwdsched"]["jain_threads"], 250000 / 260000)
        self.assertAlmostEqual(s["fwdsched"]["jain_processes"], 1.0)

    def test_missing_pieces_are_na(self):
        s = self.job("paper", "rand16")["scheds"]
        self.assertIsNone(s["kyber"]["iops"])          # garbled fio.json
        self.assertIsNone(s["bfq"]["iops"])            # no fio.json
        self.assertIsNone(s["none"]["order"])          # no blk.txt
        self.assertIn("| kyber | n/a | n/a |", self.md)
        notes = "\n".join(self.sum["notes"])
        self.assertIn("6.12/paper/rand16/kyber: fio.json: not fio JSON", notes)
        self.assertIn("6.12/paper/rand16/bfq: no fio.json", notes)
        sym = self.job("symmetric", "rand16")["scheds"]["fwdsched"]
        self.assertEqual(sym["iops"], 400)
        self.assertIsNone(sym["iops_x_dl"])
        self.assertIn("6.12/symmetric/rand16: no mq-deadline", notes)

    def test_dispatch_order(self):
        s = self.job("paper", "rand16")["scheds"]
        # mq-deadline: 20 f, 10 back with 30,40 pending above -> other; 30 f, 40 f
        o = s["mq-deadline"]["order"]
        self.assertEqual((o["dispatches"], o["forward"], o["wraps"], o["other_backward"]),
                         (4, 3, 0, 1))
        # fwdsched: 10 20 30 40 f; 5 wrap (15, 25 pending below 48); 15 25 f
        o = s["fwdsched"]["order"]
        self.assertEqual((o["dispatches"], o["forward"], o["wraps"], o["other_backward"]),
                         (7, 6, 1, 0))
        self.assertAlmostEqual(o["forward_fraction"], 6 / 7)
        self.assertAlmostEqual(o["in_order_fraction"], 1.0)
        self.assertAlmostEqual(s["fwdsched"]["forward_fraction_x_dl"], (6 / 7) / 0.75)
        # bfq: 20 f, 10 with nothing pending above 28 -> wrap
        o = s["bfq"]["order"]
        self.assertEqual((o["forward"], o["wraps"]), (1, 1))
        # debugfs: forward 96 / dispatched 100
        self.assertAlmostEqual(s["fwdsched"]["kernel_order"]["forward_fraction"], 0.96)

    def test_latency_by_sign(self):
        s = self.job("paper", "rand16")["scheds"]
        # C follows D after 100 µs (delta >= 0) or 300 µs (delta < 0)
        d = s["mq-deadline"]["d2c"]
        self.assertEqual((d["pos"]["n"], d["neg"]["n"]), (3, 1))
        self.assertAlmostEqual(d["pos"]["mean_us"], 100.0)
        self.assertAlmostEqual(d["neg_over_pos"], 3.0)
        self.assertEqual(s["mq-deadline"]["service_src"], "blktrace")
        # fwdsched has mmc-history: +100 (2 µs), +92 (1 µs), -158 (6 µs)
        self.assertEqual(s["fwdsched"]["service_src"], "mmc")
        self.assertAlmostEqual(s["fwdsched"]["service"]["pos"]["mean_us"], 1.5)
        self.assertAlmostEqual(s["fwdsched"]["service"]["neg_over_pos"], 4.0)

    def test_per_process(self):
        s = self.job("paper", "twoproc")["scheds"]
        # J procs: mq-deadline 1000^2/(2*(950^2+50^2)); fwdsched 950^2/(2*(500^2+450^2))
        self.assertAlmostEqual(s["mq-deadline"]["jain_processes"], 1e6 / 1810000)
        self.assertAlmostEqual(s["fwdsched"]["jain_processes"], 902500 / 905000)
        self.assertAlmostEqual(s["fwdsched"]["processes"]["sync"]["p99_x_dl"], 20000 / 165000)
        self.assertAlmostEqual(s["fwdsched"]["iops_x_dl"], 0.95)
        self.assertIn("| fwdsched | 500 | 90000.0 | 1.50 | 450 | 20000.0 | 0.12 |", self.md)

    def test_tunable_sweep(self):
        sw = self.job("paper", "rand16")["sweeps"]
        self.assertEqual(list(sw), ["slack"])
        self.assertEqual([p["value"] for p in sw["slack"]], [0, 8])
        # slack0: 200,100,100,100 -> 250000/280000; slack8: 130,130,120,120
        self.assertAlmostEqual(sw["slack"][0]["jain_threads"], 250000 / 280000)
        self.assertAlmostEqual(sw["slack"][1]["jain_threads"], 250000 / 250400)

    def test_plots(self):
        j = self.job("paper", "rand16")
        self.assertEqual(sorted(j["plots"]),
                         ["6.12_paper_rand16_fig4.png", "6.12_paper_rand16_fig5.png",
                          "6.12_paper_rand16_iops.png", "6.12_paper_rand16_jain_slack.png"])
        # no trace data, no fig4/fig5
        self.assertEqual(self.job("paper", "twoproc")["plots"], ["6.12_paper_twoproc_iops.png"])
        for name in j["plots"]:
            with open(os.path.join(self.root, "plots", name), "rb") as f:
                self.assertEqual(f.read(8), PNG)
            self.assertIn("](plots/%s)" % name, self.md)


    def test_job_family(self):
        fam = self.sum["families"]
        self.assertEqual([(f["kver"], f["model"], f["family"], f["jobs"]) for f in fam],
                         [("6.12", "paper", "fig2", ["shuffle", "sort"])])
        self.assertIn("| fig2-sort | 800 | 900 |", self.md)
        self.assertIn("| fig2-shuffle | 400 | 600 |", self.md)
        with open(os.path.join(self.root, "plots", fam[0]["plot"]), "rb") as f:
            self.assertEqual(f.read(8), PNG)


class TestCli(unittest.TestCase):
    def test_missing_dir(self):
        rc, out, err = run_cli("/nonexistent/results")
        self.assertEqual(rc, 2)
        self.assertIn("/nonexistent/results", err)

    def test_empty_dir(self):
        with tempfile.TemporaryDirectory() as d:
            rc, _, err = run_cli(d)
            self.assertEqual(rc, 2)
            self.assertIn("no <kver>/<model>/<job>/<sched>/", err)
            self.assertEqual(os.listdir(d), [])

    def test_usage(self):
        self.assertEqual(run_cli()[0], 2)
        self.assertEqual(run_cli("a", "b")[0], 2)

    def test_no_plots_and_bad_meta_and_garbled_trace(self):
        with tempfile.TemporaryDirectory() as d:
            sd = os.path.join(d, "7.2", "paper", "j", "mq-deadline")
            os.makedirs(sd)
            shutil.copy(os.path.join(RUN, "6.12", "paper", "rand16", "mq-deadline", "fio.json"),
                        sd)
            with open(os.path.join(sd, "blk.txt"), "w") as f:
                f.write("garbage\n")
            with open(os.path.join(d, "meta.json"), "w") as f:
                f.write("{not json")
            rc, _, err = run_cli("--no-plots", d)
            self.assertEqual(rc, 0, err)
            self.assertFalse(os.path.exists(os.path.join(d, "plots")))
            with open(os.path.join(d, "summary.json")) as f:
                s = json.load(f)
            notes = "\n".join(s["notes"])
            self.assertIn("meta.json: unreadable", notes)
            self.assertIn("blk.txt: no blkparse event lines", notes)
            self.assertEqual(s["jobs"][0]["scheds"]["mq-deadline"]["iops"], 400)


class TestHelpers(unittest.TestCase):
    def test_variant_names(self):
        self.assertEqual(fwdreport.variant_of("fwdsched-slack8", {}), ("slack", 8.0))
        self.assertEqual(fwdreport.variant_of("fwdsched-fair_slack-16", {}),
                         ("fair_slack", 16.0))
        self.assertIsNone(fwdreport.variant_of("fwdsched", {}))
        self.assertIsNone(fwdreport.variant_of("mq-deadline", {}))
        meta = {"variants": {"fwdsched-off": {"slack": 0}}}
        self.assertEqual(fwdreport.variant_of("fwdsched-off", meta), ("slack", 0.0))

    def test_sched_order(self):
        names = ["fwdsched-slack16", "bfq", "fwdsched", "none", "fwdsched-slack2",
                 "kyber", "mq-deadline", "other"]
        self.assertEqual(sorted(names, key=fwdreport.sched_key),
                         ["none", "mq-deadline", "kyber", "bfq", "fwdsched",
                          "fwdsched-slack2", "fwdsched-slack16", "other"])


if __name__ == "__main__":
    unittest.main()
