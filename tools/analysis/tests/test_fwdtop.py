#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests for tools/fwdtop: Jain's index over the processes of a
saved debugfs "procs" (exact values, the active window, no values) and
over threads from blktrace, its --once lines, its screen, and its
refusal of bad input."""

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.join(HERE, "..", "..")
FWDTOP = os.path.join(TOP, "fwdtop")
ORDER = os.path.join(HERE, "..", "testdata", "order.blk.txt")

_loader = importlib.machinery.SourceFileLoader("fwdtop", FWDTOP)
_spec = importlib.util.spec_from_loader("fwdtop", _loader)
fwdtop = importlib.util.module_from_spec(_spec)
_loader.exec_module(fwdtop)

HEADER = ("# tgid class rd_reqs rd_sectors rd_wait_us rd_wait_max_us wr_reqs "
          "wr_sectors wr_wait_us wr_wait_max_us queued inflight max_passed "
          "vtime ttime_us idle_ms comm")
NOTE = "# sectors of 512 bytes; waits from insertion to dispatch ..."


def row(tgid, rd, wr, idle_ms, comm="fio", cls="be"):
    return "%d %s %d %d 0 0 %d %d 0 0 0 0 0 0 0 %d %s" % (
        tgid, cls, rd, rd * 8, wr, wr * 8, idle_ms, comm)


def procs_text(*rows, header=HEADER):
    return "\n".join((header, NOTE) + rows) + "\n"


class Tmp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def file(self, name, text):
        p = os.path.join(self.dir.name, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def run_cli(self, *args):
        p = subprocess.run([sys.executable, FWDTOP] + list(args),
                           capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def once(self, *args):
        rc, out, err = self.run_cli("--once", *args)
        self.assertEqual(rc, 0, err)
        return [tuple(l.split()) for l in out.splitlines()]


class TestJain(unittest.TestCase):
    def test_exact(self):
        # floor((sum x)^2 * 1e6 / (n * sum x^2))
        self.assertEqual(fwdtop.jain([5, 5]), (2, 1000000))
        self.assertEqual(fwdtop.jain([1, 2]), (2, 900000))           # 9e6/10
        self.assertEqual(fwdtop.jain([1, 2, 3]), (3, 857142))        # 36e6/42
        self.assertEqual(fwdtop.jain([40, 20]), (2, 900000))
        self.assertEqual(fwdtop.jain([1, 0, 0, 1000]), (2, 500999))  # 1002001e6/2000002
        self.assertEqual(fwdtop.jain([7]), (1, 1000000))

    def test_no_values(self):
        self.assertEqual(fwdtop.jain([]), (0, 0))
        self.assertEqual(fwdtop.jain([0, 0]), (0, 0))

    def test_window(self):
        rows = fwdtop.parse_procs(procs_text(
            row(1, 30, 10, 0), row(2, 20, 0, 9999), row(3, 100, 0, 10000),
            row(4, 0, 0, 5), row(0, 0, 0, 0, "(kernel)")))
        # 3 is idle for the window, 4 and the kernel's row have no requests
        self.assertEqual(fwdtop.procs_jain(rows, 10000), (2, 900000))
        # 40, 20, 100: 160^2 * 1e6 / (3 * 12000)
        self.assertEqual(fwdtop.procs_jain(rows, 10001), (3, 711111))
        self.assertEqual(fwdtop.procs_jain(rows, 0), (0, 0))


class TestProcs(Tmp):
    def test_parse(self):
        rows = fwdtop.parse_procs(procs_text(row(7, 3, 1, 12, "my reader"),
                                             row(8, 1, 0, 3, "") + " "))
        self.assertEqual([(r["tgid"], r["rd_reqs"], r["wr_sectors"], r["class"],
                           r["comm"]) for r in rows],
                         [(7, 3, 8, "be", "my reader"), (8, 1, 0, "be", "")])

    def test_once(self):
        p = self.file("procs", procs_text(row(1, 30, 10, 0), row(2, 20, 0, 20),
                                          row(3, 5, 0, 20000)))
        self.assertEqual(self.once("--procs", p),
                         [("window_ms", "10000"), ("procs", "2"),
                          ("procs_jain", "900000")])
        self.assertEqual(self.once("--procs", p, "--window-ms", "30000"),
                         [("window_ms", "30000"), ("procs", "3"),
                          ("procs_jain", "695473")])    # 65^2e6/(3*2025)

    def test_empty(self):
        p = self.file("procs", procs_text())
        t = self.file("blk.txt", "")
        self.assertEqual(self.once("--procs", p, "--blktrace", t),
                         [("window_ms", "10000"), ("procs", "0"),
                          ("procs_jain", "0"), ("threads", "0"),
                          ("threads_jain", "0")])

    def test_threads(self):
        # order.blk.txt: dispatches by submitter 1001: 3, 1002: 2 (one of
        # them started by a kworker), 1003: 2, 1004: 1 (the flush is none)
        ev = fwdtop.fwdlib.parse_blkparse(ORDER)
        self.assertEqual(fwdtop.thread_counts(ev),
                         {1001: 3, 1002: 2, 1003: 2, 1004: 1})
        p = self.file("procs", procs_text(row(1, 4, 0, 0)))
        self.assertEqual(self.once("--procs", p, "--blktrace", ORDER)[3:],
                         [("threads", "4"), ("threads_jain", "888888")])

    def test_screen(self):
        p = self.file("procs", procs_text(row(1, 30, 10, 0), row(2, 20, 0, 20),
                                          row(3, 5, 0, 20000, "old")))
        args = fwdtop.argparse.Namespace(disk=None, procs=p, window_ms=10000,
                                         blktrace=ORDER)
        figs, rows = fwdtop.measure(args)
        s = fwdtop.screen(args, figs, rows).splitlines()
        self.assertIn("processes 2  0.900000", s[1])
        self.assertIn("threads 4  0.888888", s[1])
        self.assertEqual(s[3].split(), ["1", "fio", "be", "40", "320", "61.5"])
        self.assertEqual(s[5].split(), ["3", "old", "be", "5", "40", "7.7", "idle"])


class TestBadInput(Tmp):
    def refused(self, text, *args):
        rc, out, err = self.run_cli("--once", *args)
        self.assertEqual(rc, 2, out + err)
        self.assertEqual(out, "")
        self.assertIn(text, err)

    def test_missing_files(self):
        gone = os.path.join(self.dir.name, "gone")
        self.refused(gone + ": No such file or directory", "--procs", gone)
        p = self.file("procs", procs_text(row(1, 1, 0, 0)))
        self.refused(gone + ": No such file or directory", "--procs", p,
                     "--blktrace", gone)
        self.refused("/sys/kernel/debug/block/nosuchdisk0/sched/procs: ",
                     "--disk", "nosuchdisk0")

    def test_columns(self):
        p = self.file("unknown", procs_text(
            row(1, 1, 0, 0), header=HEADER.replace(" vtime ", " vtime extra ")))
        self.refused("unknown: unknown column 'extra'", "--procs", p)
        p = self.file("missing", procs_text(
            row(1, 1, 0, 0), header=HEADER.replace(" idle_ms", "")))
        self.refused("missing: no column 'idle_ms'", "--procs", p)
        p = self.file("noheader", row(1, 1, 0, 0) + "\n")
        self.refused("noheader: no '# tgid class ...' header line", "--procs", p)
        p = self.file("empty", "")
        self.refused("empty: no '# tgid class ...' header line", "--procs", p)

    def test_rows(self):
        p = self.file("number", procs_text(row(1, 1, 0, 0),
                                           row(2, 1, 0, 0).replace(" 0 fio", " 1x fio")))
        self.refused("number:4: bad number '1x' in column idle_ms", "--procs", p)
        p = self.file("short", procs_text("1 be 2 3"))
        self.refused("short:3: 4 fields, the header names 17", "--procs", p)

    def test_garbled_trace(self):
        p = self.file("procs", procs_text(row(1, 1, 0, 0)))
        t = self.file("blk.txt", "not a trace\n")
        self.refused("blk.txt: no blkparse event lines", "--procs", p,
                     "--blktrace", t)

    def test_usage(self):
        rc, _, err = self.run_cli("--once")
        self.assertEqual(rc, 2)
        self.assertIn("one of the arguments --disk --procs is required", err)
        rc, _, err = self.run_cli("--procs", "x", "--interval", "0")
        self.assertEqual(rc, 2)
        self.assertIn("--interval must be > 0", err)


if __name__ == "__main__":
    unittest.main()
