#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests for tools/analysis/soakreport.py and the soak entry of
publish.py: a clean two-disk record passes with the totals it holds; each
kind of fault (a fio job error, a failed switch, a splat, a module that
did not unload, a guest that recorded nothing, a disk that verified
nothing) fails the run and is named; the published entry carries the
report's table and refuses a run twice."""
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
import io

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import publish  # noqa: E402
import soakreport  # noqa: E402

CLEAN_SPLATS = "TAP version 13\n1..2\nok 1 splats.soak.6.12.kasan\nok 2 splats.soak.6.12.warn-oops-panic\n"


def disk(**kw):
    d = {"fio_exit": 0, "jobs": 11, "job_errors": 0, "reads": 1000,
         "writes": 400, "discards": 50, "flushes": 25, "verified_kib": 2048,
         "switches": 4, "failed_switches": 0}
    d.update(kw)
    return d


class SoakReport(unittest.TestCase):
    def make(self, disks, splats=CLEAN_SPLATS, unloaded=True, kernels=("6.12",)):
        root = tempfile.mkdtemp()
        meta = {"kind": "fwdsched-soak", "created": "2026-11-25T12:00:00Z",
                "commit": "abc123", "dirty": False,
                "command": "SOAK_KVERS=6.12 SOAK_MINUTES=20 SOAK_SWITCH_S=60 make soak",
                "settings": {"kernels": list(kernels), "minutes": 20, "switch_s": 60},
                "host": {"nproc": 2, "uname": "6.1.0"}}
        with open(os.path.join(root, "meta.json"), "w") as f:
            json.dump(meta, f)
        for k in kernels:
            b = os.path.join(root, "boots", k)
            os.makedirs(b)
            if disks is None:
                continue
            with open(os.path.join(b, "soak.json"), "w") as f:
                json.dump({"release": k, "seconds": 1200,
                           "module_unloaded": unloaded, "disks": disks}, f)
            if splats is not None:
                with open(os.path.join(b, "splats.ktap"), "w") as f:
                    f.write(splats)
        return root

    def run_report(self, root):
        with redirect_stdout(io.StringIO()):
            rc = soakreport.report(root, 1300)
        with open(os.path.join(root, "soak.json")) as f:
            return rc, json.load(f)

    def test_clean(self):
        root = self.make({"mmcblk0": disk(), "nullb0": disk(discards=0)})
        rc, s = self.run_report(root)
        self.assertEqual(rc, 0)
        self.assertTrue(s["passed"])
        self.assertEqual(s["totals"], {"reads": 2000, "writes": 800,
                                       "discards": 50, "flushes": 50})
        with open(os.path.join(root, "report.md")) as f:
            md = f.read()
        self.assertIn("| 6.12 | mmcblk0 | 20 | 1,450 | 1,000 | 400 | 50 | 25 | 2 | 4/4 | 0 |", md)
        self.assertIn("0 (no discard)", md)
        self.assertIn("Verdict: **passed**", md)

    def assertFails(self, root, *words):
        rc, s = self.run_report(root)
        self.assertEqual(rc, 1)
        self.assertFalse(s["passed"])
        text = " ".join(s["failures"])
        for w in words:
            self.assertIn(w, text)

    def test_job_error(self):
        self.assertFails(self.make({"nullb0": disk(job_errors=1, fio_exit=1)}),
                         "nullb0", "1 fio jobs failed", "fio exited 1")

    def test_failed_switch(self):
        self.assertFails(self.make({"mmcblk0": disk(failed_switches=2)}),
                         "2 scheduler switches failed")

    def test_no_switch_or_verify(self):
        self.assertFails(self.make({"mmcblk0": disk(switches=0, verified_kib=0)}),
                         "no scheduler switch", "no verified")

    def test_missing_jobs(self):
        self.assertFails(self.make({"mmcblk0": disk(jobs=3)}), "fio ran 3 jobs")

    def test_splat(self):
        bad = CLEAN_SPLATS.replace("ok 1 splats.soak.6.12.kasan",
                                   "not ok 1 splats.soak.6.12.kasan")
        self.assertFails(self.make({"mmcblk0": disk()}, splats=bad),
                         "splat: splats.soak.6.12.kasan")

    def test_no_splat_check(self):
        self.assertFails(self.make({"mmcblk0": disk()}, splats=None),
                         "no splat check")

    def test_not_unloaded(self):
        self.assertFails(self.make({"mmcblk0": disk()}, unloaded=False),
                         "did not unload")

    def test_guest_recorded_nothing(self):
        self.assertFails(self.make(None), "the guest recorded nothing")

    def test_publish(self):
        root = self.make({"mmcblk0": disk()})
        self.run_report(root)
        path = os.path.join(tempfile.mkdtemp(), "B.md")
        run = publish.publish(root, path)
        with open(path) as f:
            text = f.read()
        self.assertIn("soak, 6.12 (run `%s`)" % run, text)
        self.assertIn("make soak`", text)
        self.assertIn("| 6.12 | mmcblk0 |", text)
        with self.assertRaises(publish.PublishError):
            publish.publish(root, path)


if __name__ == "__main__":
    unittest.main()
