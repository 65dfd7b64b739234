#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of the CPU profile summary (cpuprofile.py) on a small run written
here, with known answers."""

import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)

import cpuprofile as prof  # noqa: E402

REPORT = """\
# Samples: 1K of event 'cpu-clock'
#
    20.00%  [k] pv_native_safe_halt
     {lock:.2f}%  [k] native_queued_spin_lock_slowpath
     {a:.2f}%  [k] {p}insert_requests
     {b:.2f}%  [k] {p}dispatch_request
     1.50%  [.] get_io_u
     0.25%  [k] __{p}dispatch_one
     0.50%  [k] blk_mq_submit_bio

"""


class Profile(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, name, text):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(text)

    def run_two_rounds(self):
        # round 1: fwdsched 90 of 100, round 2: 80 of 100; 8proc only r1
        self.write("iops.tsv", "cpu-1proc-qd32 mq-deadline 1 100000\n"
                   "cpu-1proc-qd32 fwdsched 1 90000\n"
                   "cpu-1proc-qd32 mq-deadline 2 100000\n"
                   "cpu-1proc-qd32 fwdsched 2 80000\n")
        for r, (lk, a, b) in ((1, (3.0, 1.0, 2.0)), (2, (5.0, 3.0, 2.0))):
            self.write("cpu-1proc-qd32.fwdsched.r%d.txt" % r,
                       REPORT.format(lock=lk, a=a, b=b, p="fwd_"))
            self.write("cpu-1proc-qd32.mq-deadline.r%d.txt" % r,
                       REPORT.format(lock=1.0, a=1.0, b=0.5, p="dd_"))

    def test_parse(self):
        p = prof.parse_report(REPORT.format(lock=2.5, a=1.0, b=0.25,
                                            p="fwd_"))
        self.assertEqual(p["native_queued_spin_lock_slowpath"], 2.5)
        self.assertEqual(p["fwd_dispatch_request"], 0.25)
        self.assertEqual(len(p), 7)
        # __fwd_dispatch_one is fwdsched's too
        self.assertEqual(prof.shares(p, "fwdsched"), (1.5, 2.5, 20.0))
        # another scheduler's functions are not fwdsched's own
        self.assertEqual(prof.shares(p, "mq-deadline")[0], 0)

    def test_summary(self):
        self.run_two_rounds()
        s = prof.summarize(self.dir)
        rows = {ln.split("|")[1].strip(): [c.strip() for c in
                                            ln.split("|")[2:-1]]
                for ln in s.splitlines() if ln.startswith("| ")
                and not ln.startswith("| scheduler")}
        # median IOPS 85000, ratio median of 0.9 and 0.8
        self.assertEqual(rows["fwdsched"], ["85000", "0.850", "4.25",
                                            "4.00", "20.00"])
        self.assertEqual(rows["mq-deadline"], ["100000", "1", "1.75",
                                               "1.00", "20.00"])
        self.assertIn("fwd_dispatch_request 2.00, fwd_insert_requests "
                      "2.00", s)
        self.assertIn("mean over 2 rounds", s)
        self.assertIn("__dd_dispatch_one 0.25", s)

    def test_instructions_per_read(self):
        # one vCPU counting instructions at 2 ns each: fwdsched's own
        # 3.25 % of round 1 at 90,000 reads/s is 0.0325 x 5e8 / 90000 =
        # 180.6 instructions a read, 5.25 % of round 2 at 80,000 is 328.1
        self.run_two_rounds()
        self.write("icount", "1\n")
        s = prof.summarize(self.dir)
        self.assertIn("2^1 ns each", s)
        self.assertIn("| own instructions per read |", s)
        rows = {ln.split("|")[1].strip(): [c.strip() for c in
                                            ln.split("|")[2:-1]]
                for ln in s.splitlines() if ln.startswith("| ")
                and not ln.startswith("| scheduler")}
        self.assertEqual(rows["fwdsched"][-1], "254")
        # mq-deadline: 1.75 % at 100,000 reads/s, both rounds: 87.5
        self.assertEqual(rows["mq-deadline"][-1], "88")
        self.assertAlmostEqual(prof.per_read(3.0, 90000, 1), 166.667, 3)
        # without the file: no such column
        os.remove(os.path.join(self.dir, "icount"))
        self.assertNotIn("instructions per read", prof.summarize(self.dir))
        # a bad shift is refused
        self.write("icount", "ten\n")
        with self.assertRaises(prof.ProfileError):
            prof.summarize(self.dir)

    def test_bad_input(self):
        self.write("iops.tsv", "cpu-1proc-qd32 fwdsched one 9\n")
        with self.assertRaises(prof.ProfileError):
            prof.summarize(self.dir)
        self.write("iops.tsv", "cpu-1proc-qd32 fwdsched 1\n")
        with self.assertRaises(prof.ProfileError):
            prof.summarize(self.dir)
        self.write("iops.tsv", "\n")
        with self.assertRaises(prof.ProfileError):
            prof.summarize(self.dir)
        # a run directory without the file: a message and exit 1
        os.remove(os.path.join(self.dir, "iops.tsv"))
        self.assertEqual(prof.main([self.dir]), 1)


if __name__ == "__main__":
    unittest.main()
