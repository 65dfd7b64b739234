#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests for tools/analysis/crosslayer.py on a small synthetic run."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import crosslayer  # noqa: E402

APP = "pid 1234\n0 100000000000 100002000000\n1 100003000000 100005000000\n"
# Two inserts: 3 writes + 2 fsyncs by the app, one write by another pid,
# block W requests and a flush, MMC commands.
TRACE = """\
# tracer: nop
#
         python3-1234    [001] .....   100.000100: sys_write(fd: 3, buf: 55d0, count: 512)
         python3-1234    [001] .....   100.000200: ext4_da_write_begin: dev 179,0 ino 12 pos 0 len 512
         python3-1234    [001] .....   100.000300: sys_fsync(fd: 3)
         python3-1234    [001] .....   100.000310: ext4_sync_file_enter: dev 179,0 ino 12 parent 2 datasync 0
            bash-99      [000] .....   100.000400: sys_write(fd: 1, buf: 1, count: 1)
         python3-1234    [001] .....   100.000500: block_bio_queue: 179,0 WS 2048 + 8 [python3]
         python3-1234    [001] .....   100.000510: block_rq_insert: 179,0 WS 4096 () 2048 + 8 none,0,0 [python3]
    kworker/1:1H-50      [001] .....   100.000520: block_rq_issue: 179,0 WS 4096 () 2048 + 8 none,0,0 [kworker/1:1H]
          <idle>-0       [000] d.h1.   100.001000: block_rq_complete: 179,0 WS () 2048 + 8 none,0,0 [0]
 jbd2/mmcblk0-8-77      [000] .....   100.001100: jbd2_start_commit: dev 179,0 transaction 3 sync 0
    kworker/1:1H-50      [001] .....   100.001200: block_rq_issue: 179,0 FF 0 () 0 + 0 none,0,0 [kworker/1:1H]
         python3-1234    [001] .....   100.003100: sys_pwrite64(fd: 3, buf: 55d0, count: 512, pos: 0)
         python3-1234    [001] .....   100.003200: sys_write(fd: 4, buf: 55d0, count: 100)
         python3-1234    [001] .....   100.003300: sys_fdatasync(fd: 3)
    kworker/1:1H-50      [001] .....   100.003520: block_rq_issue: 179,0 W 4096 () 4096 + 8 none,0,0 [kworker/1:1H]
          <idle>-0       [000] d.h1.   100.004000: block_rq_complete: 179,0 W () 4096 + 8 none,0,0 [0]
"""
HISTORY = """\
# host=mmc0 clock=monotonic ring_size=64 records=3 overwritten=0 unmatched=0 evicted=0 fields=x
100000520000 100000990000 W 2048 8 0 1
100000995000 100000998000 O 0 0 0 0
100003520000 100003990000 W 4096 8 0 2
"""


class CrosslayerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        for name, text in (("app.txt", APP), ("trace.txt", TRACE),
                           ("history.txt", HISTORY)):
            with open(os.path.join(self.d, name), "w") as f:
                f.write(text)

    def tearDown(self):
        self.tmp.cleanup()

    def test_parse_trace(self):
        tr = crosslayer.parse_trace(os.path.join(self.d, "trace.txt"))
        self.assertEqual(len(tr), 16)
        self.assertEqual(tr[0][:3], (100000100000, "sys_write", 1234))
        self.assertEqual(tr[7][1], "block_rq_issue")

    def test_counts(self):
        pid, ops = crosslayer.parse_app(os.path.join(self.d, "app.txt"))
        tr = crosslayer.parse_trace(os.path.join(self.d, "trace.txt"))
        mmc = crosslayer.parse_history(os.path.join(self.d, "history.txt"))
        fs, block = crosslayer.classify(tr, pid)
        c, per = crosslayer.counts(ops, fs, block, mmc, ops[0][1],
                                   tr[-1][0])
        self.assertEqual(c["app"], {"ops": 2})
        self.assertEqual(c["fs"]["write"], 3)       # bash's write excluded
        self.assertEqual(c["fs"]["fsync"], 2)
        self.assertEqual(c["fs"]["ext4_write_begin"], 1)
        self.assertEqual(c["fs"]["jbd2_commit"], 1)
        self.assertEqual(c["block"], {"Q_W": 1, "I_W": 1, "D_W": 2,
                                      "D_flush": 1, "C_W": 2})
        self.assertEqual(c["mmc"], {"W": 2, "O": 1})
        self.assertAlmostEqual(per["fs"]["write"], 1.5)
        self.assertAlmostEqual(per["block"]["D_W"], 1.0)

    def test_cli_and_png(self):
        out, err = io.StringIO(), io.StringIO()
        png = os.path.join(self.d, "t.png")
        with redirect_stdout(out), redirect_stderr(err):
            rc = crosslayer.main([self.d, "--png", png, "--ops", "1",
                                  "--title", "sqlite"])
        self.assertEqual(rc, 0)
        self.assertIn("write=3 (1.50/op)", out.getvalue())
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            # Without matplotlib the counts are printed and the plot is
            # skipped with a message, not a traceback.
            self.assertIn("no timeline plot", err.getvalue())
            self.assertFalse(os.path.exists(png))
            return
        self.assertEqual(err.getvalue(), "")
        with open(png, "rb") as f:
            self.assertEqual(f.read(4), b"\x89PNG")

    def test_json(self):
        out = io.StringIO()
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            rc = crosslayer.main([self.d, "--json", "--png",
                                  os.path.join(self.d, "j.png")])
        self.assertEqual(rc, 0)
        res = json.loads(out.getvalue())
        self.assertEqual(res["counts"]["mmc"], {"W": 2, "O": 1})
        self.assertAlmostEqual(res["per_op"]["block"]["I_W"], 0.5)

    def test_bad_input(self):
        with open(os.path.join(self.d, "app.txt"), "w") as f:
            f.write("0 1 2\n")
        with redirect_stderr(io.StringIO()) as err:
            self.assertEqual(crosslayer.main([self.d]), 2)
        self.assertIn("app.txt", err.getvalue())


if __name__ == "__main__":
    unittest.main()
