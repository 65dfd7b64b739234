#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests for tools/analysis/mmchist.py on a small history with known answers."""
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mmchist  # noqa: E402

# Lines out of issue order on purpose (completion order of a CQE device).
# Data commands in issue order, with the end of the previous one:
#   R 100+8  issue 1000    done 101000   delta 100-0     = +100   100 us
#   R 108+8  issue 200000  done 250000   delta 108-108   = 0       50 us
#   O        (ignored)
#   R 50+8   issue 400000  done 700000   delta 50-116    = -66    300 us
#   R 2048+16 issue 800000 done 820000   delta 2048-58   = +1990   20 us
#   W 10+8   issue 900000  done 1300000  delta 10-2064   = -2054  400 us
HISTORY = """\
# host=mmc0 clock=monotonic ring_size=16 records=6 overwritten=3 unmatched=1 evicted=0 fields=issue_ns,done_ns,op,sector,nr_sectors,err,tag
1000 101000 R 100 8 0 0
200000 250000 R 108 8 0 1
300000 300500 O 0 0 0 0
800000 820000 R 2048 16 0 3
400000 700000 R 50 8 0 2
900000 1300000 W 10 8 -110 4
"""

# The same reads seen by blktrace (fwdlib format): D then C per request.
BLKTRACE = """\
179,0 D R 100 8 0.000001000 1 dd
179,0 C R 100 8 0.000101000 1 dd
179,0 D R 108 8 0.000200000 1 dd
179,0 C R 108 8 0.000250000 1 dd
179,0 D R 50 8 0.000400000 1 dd
179,0 C R 50 8 0.000700000 1 dd
"""


class MmchistTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.hist = os.path.join(self.tmp.name, "hist.txt")
        with open(self.hist, "w") as f:
            f.write(HISTORY)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        p = os.path.join(self.tmp.name, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def test_header(self):
        h = mmchist.parse_header(self.hist)
        self.assertEqual(h["host"], "mmc0")
        self.assertEqual(h["overwritten"], "3")
        self.assertEqual(h["ring_size"], "16")

    def test_load_orders_by_issue_and_skips_other(self):
        kind, recs = mmchist.load(self.hist)
        self.assertEqual(kind, "history")
        self.assertEqual([r["sector"] for r in recs], [100, 108, 50, 2048, 10])
        self.assertEqual([r["delta"] for r in recs], [100, 0, -66, 1990, -2054])
        self.assertEqual([r["service_ns"] for r in recs],
                         [100000, 50000, 300000, 20000, 400000])
        self.assertEqual(recs[-1]["err"], -110)

    def test_summary_reads(self):
        _, recs = mmchist.load(self.hist)
        s = mmchist.summary(mmchist.select(recs, "R"))
        self.assertEqual(s["n"], 4)
        self.assertAlmostEqual(s["forward_fraction"], 0.75)
        self.assertEqual(s["pos"]["n"], 2)
        self.assertAlmostEqual(s["pos"]["mean_us"], 60.0)
        self.assertAlmostEqual(s["pos"]["median_us"], 20.0)
        self.assertEqual(s["zero"]["n"], 1)
        self.assertAlmostEqual(s["zero"]["mean_us"], 50.0)
        self.assertEqual(s["neg"]["n"], 1)
        self.assertAlmostEqual(s["neg"]["mean_us"], 300.0)
        self.assertAlmostEqual(s["neg_over_pos"], 5.0)

    def test_summary_reads_and_writes(self):
        _, recs = mmchist.load(self.hist)
        s = mmchist.summary(mmchist.select(recs, "RW"))
        self.assertEqual(s["n"], 5)
        self.assertAlmostEqual(s["forward_fraction"], 0.6)
        self.assertAlmostEqual(s["neg"]["mean_us"], 350.0)
        self.assertAlmostEqual(s["neg_over_pos"], 350.0 / 60.0)

    def test_blktrace_fallback(self):
        p = self.write("blk.txt", BLKTRACE)
        kind, recs = mmchist.load(p)
        self.assertEqual(kind, "blktrace")
        self.assertEqual([r["delta"] for r in recs], [100, 0, -66])
        self.assertEqual([r["service_ns"] for r in recs],
                         [100000, 50000, 300000])
        s = mmchist.summary(recs)
        self.assertAlmostEqual(s["neg_over_pos"], 3.0)

    def test_cli_summary_table(self):
        out = io.StringIO()
        with redirect_stdout(out):
            rc = mmchist.main(["summary", "sched=" + self.hist])
        self.assertEqual(rc, 0)
        row = out.getvalue().splitlines()[1].split()
        self.assertEqual(row[:4], ["sched", "history", "4", "75.0"])
        self.assertEqual(row[-1], "5.00")

    def test_cli_bad_input(self):
        p = self.write("bad.txt", "1 2 X 3 4 5\n")
        err = io.StringIO()
        with redirect_stderr(err):
            rc = mmchist.main(["summary", p])
        self.assertEqual(rc, 2)
        self.assertIn("bad.txt", err.getvalue())
        with redirect_stderr(io.StringIO()):
            self.assertEqual(mmchist.main(["summary", p + ".missing"]), 2)

    def test_cli_no_reads(self):
        p = self.write("w.txt", "# h\n1 2 W 0 8 0 0\n")
        with redirect_stderr(io.StringIO()):
            self.assertEqual(mmchist.main(["summary", p]), 2)

    def test_plot_writes_pngs(self):
        out = os.path.join(self.tmp.name, "figs")
        with redirect_stdout(io.StringIO()):
            rc = mmchist.main(["plot", "--out", out, "a=" + self.hist,
                               "b=" + self.hist])
        self.assertEqual(rc, 0)
        for name in ("fig4_issue_vs_address.png", "fig5_delta_vs_service.png",
                     "fig6_service_by_sign.png"):
            with open(os.path.join(out, name), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()
