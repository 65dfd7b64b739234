#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests for tools/analysis/fwdlib.py on small recorded inputs in
tools/analysis/testdata/."""

import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(HERE, "testdata")
sys.path.insert(0, HERE)

import fwdlib  # noqa: E402

ORDER = os.path.join(DATA, "order.blk.txt")
ORDER_DEFAULT = os.path.join(DATA, "order.default.txt")

# order.blk.txt, D events in order, sweep position before each:
#   D R 100+8  pos 0    -> forward (+100)                      pos 108
#   D R 500+8  pos 108  -> forward (+392)                      pos 508
#   D R 508+8  pos 508  -> forward, continuation (0)           pos 516
#   D R  50+8  pos 516  -> backward (-466); pending R {300},
#                          pending W {900} is the other
#                          direction -> wrap                   pos 58
#   D R  20+8  pos 58   -> backward (-38); pending R {200,300}
#                          >= 58 -> other_backward            pos 28
#   D R 200+8  pos 28   -> forward (+172)                      pos 208
#   D R 300+8  pos 208  -> forward (+92)                       pos 308
#   D W 900+8  pos 308  -> forward (+592)                      pos 908
#   D FWS 0+0           -> ignored (no data)
# dispatches 8, forward 6, continuations 1, backward 2, wraps 1, other 1,
# forward_fraction 6/8, in_order_fraction 7/8.
ORDER_EXPECTED = dict(dispatches=8, forward=6, continuations=1, backward=2,
                      wraps=1, other_backward=1, forward_fraction=0.75,
                      in_order_fraction=0.875)


def run_cli(*args):
    p = subprocess.run([sys.executable, os.path.join(HERE, "fwdlib.py")] + list(args),
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


class TestBlkparse(unittest.TestCase):
    def test_format_fields(self):
        ev = fwdlib.parse_blkparse_line("179,0 D RS 500 8 0.000011000 1002 kworker/1:1H")
        self.assertEqual(ev.dev, (179, 0))
        self.assertEqual((ev.action, ev.rwbs, ev.sector, ev.blocks), ("D", "RS", 500, 8))
        self.assertEqual(ev.time_ns, 11000)
        self.assertEqual((ev.pid, ev.comm), (1002, "kworker/1:1H"))
        self.assertIsNone(ev.cpu)       # written before the CPU field
        ev = fwdlib.parse_blkparse_line("179,0 1 D RS 500 8 0.000011000 1002 kworker/1:1H")
        self.assertEqual((ev.dev, ev.cpu, ev.action, ev.rwbs, ev.sector, ev.blocks),
                         ((179, 0), 1, "D", "RS", 500, 8))
        self.assertEqual((ev.time_ns, ev.pid, ev.comm), (11000, 1002, "kworker/1:1H"))

    def test_command_with_spaces_and_empty(self):
        ev = fwdlib.parse_blkparse_line("8,16 C WS 7 8 12.000000001 0 my prog")
        self.assertEqual((ev.dev, ev.time_ns, ev.comm), ((8, 16), 12000000001, "my prog"))
        ev = fwdlib.parse_blkparse_line("8,16 C WS 7 8 12.000000001 0")
        self.assertEqual(ev.comm, "")

    def test_default_output_line(self):
        ev = fwdlib.parse_blkparse_line(
            "  8,0    3        1     0.000000000   697  G   W 223490 + 8 [kjournald]")
        self.assertEqual((ev.dev, ev.action, ev.rwbs, ev.sector, ev.blocks, ev.comm),
                         ((8, 0), "G", "W", 223490, 8, "kjournald"))
        self.assertEqual(ev.cpu, 3)

    def test_non_event_lines_skipped(self):
        for line in ("CPU0 (tr):", "Input file tr.blktrace.0 added",
                     "179,0    1        0     0.000605500     0  m   N fwdsched wrap",
                     "179,0 D RS x 8 0.1 1 fio"):
            self.assertIsNone(fwdlib.parse_blkparse_line(line), line)

    def test_garbled_file_raises_naming_it(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("this is not\nblkparse output\n")
        try:
            with self.assertRaises(fwdlib.InputError) as cm:
                fwdlib.parse_blkparse(f.name)
            self.assertIn(f.name, str(cm.exception))
        finally:
            os.unlink(f.name)

    def test_empty_input_has_no_events(self):
        self.assertEqual(fwdlib.parse_blkparse([]), [])
        c = fwdlib.dispatch_order([])
        self.assertEqual(c["dispatches"], 0)
        self.assertIsNone(c["forward_fraction"])

    def test_rwbs_dir(self):
        self.assertEqual([fwdlib.rwbs_dir(s) for s in ("R", "RS", "WS", "FWS", "FWFS", "D", "N", "RA")],
                         ["R", "R", "W", "W", "W", "D", "N", "R"])


class TestDispatchOrder(unittest.TestCase):
    def test_recorded_trace(self):
        c = fwdlib.dispatch_order(fwdlib.parse_blkparse(ORDER))
        self.assertEqual(c, ORDER_EXPECTED)

    def test_default_blkparse_output_gives_same_answer(self):
        # order.default.txt is real blkparse(1) default output of a binary
        # trace built from order.blk.txt (see test_real_blkparse below).
        c = fwdlib.dispatch_order(fwdlib.parse_blkparse(ORDER_DEFAULT))
        self.assertEqual(c, ORDER_EXPECTED)

    def test_pure_clook_sweep(self):
        # Pending 10,30,50; sweep 10,30,50, then 5 and 40 arrive; wrap to 5.
        lines = ["8,0 I R %d 8 0.%09d 1 a" % (s, i) for i, s in enumerate((10, 30, 50))]
        lines += ["8,0 D R 10 8 0.000000010 1 a", "8,0 D R 30 8 0.000000011 1 a",
                  "8,0 I R 5 8 0.000000012 1 a", "8,0 I R 40 8 0.000000012 1 a",
                  "8,0 D R 50 8 0.000000013 1 a", "8,0 D R 5 8 0.000000014 1 a",
                  "8,0 D R 40 8 0.000000015 1 a"]
        c = fwdlib.dispatch_order(fwdlib.parse_blkparse(lines))
        # 10 f, 30 f, 50 f, 5: pos 58, pending {40} < 58 -> wrap, 40 f.
        self.assertEqual((c["dispatches"], c["forward"], c["wraps"], c["other_backward"]),
                         (5, 4, 1, 0))
        self.assertEqual(c["in_order_fraction"], 1.0)
        self.assertEqual(c["forward_fraction"], 0.8)

    def test_no_insert_events_uses_queue_events(self):
        # No elevator: no I events, pending from Q.  Back merge of 108 into
        # 100 must not leave 108 pending; front merge of 92 onto 100 moves it.
        lines = ["8,0 Q R 200 8 0.000000001 1 a", "8,0 D R 200 8 0.000000002 1 a",
                 "8,0 Q R 100 8 0.000000003 1 a", "8,0 Q R 108 8 0.000000003 1 a",
                 "8,0 M R 108 8 0.000000003 1 a", "8,0 Q R 92 8 0.000000003 1 a",
                 "8,0 F R 92 8 0.000000003 1 a", "8,0 Q R 300 8 0.000000004 1 a",
                 "8,0 D R 92 24 0.000000005 1 a", "8,0 D R 300 8 0.000000006 1 a"]
        c = fwdlib.dispatch_order(fwdlib.parse_blkparse(lines))
        # 200 f (pos 208); 92: pending {300} >= 208 -> other_backward; 300 f.
        self.assertEqual((c["dispatches"], c["forward"], c["wraps"], c["other_backward"]),
                         (3, 2, 0, 1))

    def test_merged_request_does_not_block_wrap(self):
        # I 100 and I 108 are merged in the scheduler into one D 100+16.
        lines = ["8,0 I R 100 8 0.000000001 1 a", "8,0 I R 108 8 0.000000001 1 a",
                 "8,0 I R 8 8 0.000000001 1 a", "8,0 D R 100 16 0.000000002 1 a",
                 "8,0 D R 8 8 0.000000003 1 a"]
        c = fwdlib.dispatch_order(fwdlib.parse_blkparse(lines))
        self.assertEqual((c["forward"], c["wraps"], c["other_backward"]), (1, 1, 0))

    def test_requeue_leaves_nothing_pending(self):
        # Requeued 300 is inserted again and dispatched; then 50 is a wrap.
        lines = ["8,0 I R 300 8 0.000000001 1 a", "8,0 I R 50 8 0.000000001 1 a",
                 "8,0 D R 300 8 0.000000002 1 a", "8,0 R R 300 8 0.000000003 1 a",
                 "8,0 I R 300 8 0.000000004 1 a", "8,0 D R 300 8 0.000000005 1 a",
                 "8,0 D R 50 8 0.000000006 1 a"]
        c = fwdlib.dispatch_order(fwdlib.parse_blkparse(lines))
        # 300 f, 300 again: pos 308 -> backward, 50 still pending below -> wrap;
        # 50: pos 308, nothing pending -> wrap.
        self.assertEqual((c["dispatches"], c["forward"], c["wraps"], c["other_backward"]),
                         (3, 1, 2, 0))

    def test_devices_are_separate(self):
        lines = ["8,0 D R 100 8 0.000000001 1 a", "8,16 D R 50 8 0.000000002 1 a",
                 "8,0 D R 108 8 0.000000003 1 a"]
        c = fwdlib.dispatch_order(fwdlib.parse_blkparse(lines))
        self.assertEqual((c["forward"], c["continuations"], c["backward"]), (3, 1, 0))


def trace(*lines):
    """Events of "action sector blocks seconds [rwbs [cpu]]" lines (rwbs R
    and CPU 0 unless given)."""
    out = []
    for line in lines:
        f = line.split()
        f += ["R", "0"][len(f) - 4:]
        out.append(fwdlib.Event((179, 0), f[0], f[4], int(f[1]), int(f[2]),
                                round(float(f[3]) * 1e9), 100, "fio",
                                int(f[5])))
    return out


def sweep(*lines, expire_ms=500):
    c = fwdlib.sweep_check(trace(*lines), expire_ms)
    return (c["dispatches"], c["choices"], c["violations"], c["swaps"])


class TestSweepCheck(unittest.TestCase):
    """sweep_check on small traces with known answers, as
    (dispatches, choices, violations, swaps): the sweep's own order
    passes, a skipped or reordered request is caught, and the exemptions
    (late insertion, expiry, front merge, requeue) hold."""

    def test_sweep(self):
        # Waiting 300, 200, 100 with the sweep at 0: 100, 200, 300 is the
        # sweep.  (100 is inserted last, so the others certainly waited
        # when it was picked.)
        self.assertEqual(sweep("I 300 8 0.001", "I 200 8 0.002", "I 100 8 0.003",
                               "D 100 8 0.010", "D 200 8 0.020", "D 300 8 0.030"),
                         (3, 2, 0, 0))

    def test_skipped(self):
        # 200 passed over, and served only after two others.
        c = fwdlib.sweep_check(trace(
            "I 400 8 0.001", "I 300 8 0.002", "I 200 8 0.003", "I 100 8 0.004",
            "D 100 8 0.010", "D 300 8 0.020", "D 400 8 0.030", "D 200 8 0.040"), 500)
        self.assertEqual((c["dispatches"], c["choices"], c["violations"], c["swaps"]),
                         (4, 3, 1, 0))
        self.assertEqual(c["messages"],
                         ["sweep at 108 took 300; waiting: 200 ahead, 200 lowest"])

    def test_swap(self):
        # 200 passed over and dispatched right next: two starts swapped.
        self.assertEqual(sweep("I 300 8 0.001", "I 200 8 0.002", "I 100 8 0.003",
                               "D 100 8 0.010", "D 300 8 0.020", "D 200 8 0.030"),
                         (3, 2, 0, 1))

    def test_wrap(self):
        # At 308 nothing waits above: the wrap must take the lowest, 10.
        self.assertEqual(sweep("I 50 8 0.001", "I 150 8 0.002", "I 10 8 0.003",
                               "I 300 8 0.004", "D 300 8 0.010", "D 10 8 0.020",
                               "D 50 8 0.030", "D 150 8 0.040"),
                         (4, 3, 0, 0))

    def test_bad_wrap(self):
        self.assertEqual(sweep("I 50 8 0.001", "I 150 8 0.002", "I 10 8 0.003",
                               "I 300 8 0.004", "D 300 8 0.010", "D 50 8 0.020",
                               "D 150 8 0.030", "D 10 8 0.040"),
                         (4, 3, 1, 0))

    def test_late_insert(self):
        # 150 arrives after the latest insertion of what was dispatched so
        # far, so it may have come after 200 was picked: no choice is judged.
        self.assertEqual(sweep("I 100 8 0.001", "I 200 8 0.002", "D 100 8 0.010",
                               "I 150 8 0.011", "D 200 8 0.012", "D 150 8 0.020"),
                         (3, 0, 0, 0))

    def test_expired(self):
        # 100 waited 597 ms (read_expire 500): going back to it is an expiry.
        lines = ("I 400 8 0.001", "I 300 8 0.002", "I 200 8 0.003", "I 100 8 0.004",
                 "D 200 8 0.010", "D 100 8 0.601", "D 300 8 0.610", "D 400 8 0.620")
        self.assertEqual(sweep(*lines), (4, 3, 0, 0))
        # With read_expire 600 it had not expired: 300, passed over, is
        # dispatched right next, a swap.
        self.assertEqual(sweep(*lines, expire_ms=600), (4, 3, 0, 1))

    def test_not_expired(self):
        # Only 296 ms: a violation (and 400 before 300 a swap).
        self.assertEqual(sweep("I 400 8 0.001", "I 300 8 0.002", "I 200 8 0.003",
                               "I 100 8 0.004", "D 200 8 0.010", "D 100 8 0.300",
                               "D 400 8 0.310", "D 300 8 0.320"),
                         (4, 3, 1, 1))

    def test_front_merge(self):
        # A front merge moves the request at 208 down to 200.
        self.assertEqual(sweep("I 400 8 0.001", "I 208 8 0.002", "F 200 8 0.003",
                               "D 200 16 0.010", "D 400 8 0.020"),
                         (2, 1, 0, 0))

    def test_front_merge_skipped(self):
        # The merged request, now at 200, passed over by the sweep.
        self.assertEqual(sweep("I 400 8 0.001", "I 208 8 0.002", "F 200 8 0.003",
                               "I 500 8 0.0035", "I 100 8 0.004",
                               "D 100 8 0.010", "D 400 8 0.020", "D 500 8 0.030",
                               "D 200 16 0.040"),
                         (4, 3, 1, 0))

    def test_requeue(self):
        # 100 was requeued: it goes back at the head, behind the sweep.
        self.assertEqual(sweep("I 50 8 0.001", "I 200 8 0.002", "I 100 8 0.003",
                               "D 100 8 0.010", "R 100 8 0.011", "I 100 8 0.012",
                               "D 100 8 0.020", "D 200 8 0.030", "D 50 8 0.040"),
                         (4, 3, 0, 0))

    def test_passed_over_then_requeued(self):
        # 200 is passed over by 300 and 400, but requeued before it is
        # started: it had been picked before them, so no violation.
        lines = ["I 400 8 0.0005", "I 300 8 0.001", "I 200 8 0.002",
                 "I 100 8 0.003", "D 100 8 0.010", "D 300 8 0.020",
                 "D 400 8 0.025", "R 200 8 0.026", "D 200 8 0.030"]
        self.assertEqual(sweep(*lines), (4, 3, 0, 0))
        del lines[7]
        self.assertEqual(sweep(*lines), (4, 3, 1, 0))

    def test_writes_are_not_judged(self):
        self.assertEqual(sweep("I 300 8 0.001 W", "I 200 8 0.002", "I 100 8 0.003",
                               "D 100 8 0.010", "D 300 8 0.020 W", "D 200 8 0.030"),
                         (2, 1, 0, 0))

    def test_recorded_trace(self):
        # order.blk.txt (see ORDER_EXPECTED), its reads: 100, 500, 50 are
        # inserted at 1 us, so the dispatches after the first saw them
        # waiting.  50+8 after 508+8 is the wrap (nothing waits at or
        # above 516; 300 and 200 are inserted later); 20+8 then passes
        # over 300 (waiting, ahead of the sweep at 58): one violation.
        c = fwdlib.sweep_check(fwdlib.parse_blkparse(ORDER), 500)
        self.assertEqual((c["dispatches"], c["choices"], c["violations"], c["swaps"]),
                         (7, 3, 1, 0))
        self.assertEqual(c["messages"],
                         ["sweep at 58 took 20; waiting: 300 ahead, 300 lowest"])


class TestReadsAndDeadline(unittest.TestCase):
    def test_read_dispatches(self):
        # Reads only: 100, 300, 200 (backward), 50 (backward); the write
        # at 0 moves nothing; two CPUs started them.
        c = fwdlib.read_dispatches(trace(
            "D 100 8 0.001", "D 0 8 0.002 W", "D 300 8 0.003 R 1",
            "D 200 8 0.004", "D 50 8 0.005", "I 10 8 0.006"))
        self.assertEqual(c, dict(dispatches=4, backward=2, cpus=2))

    def test_deadline_waits(self):
        # expire 10 ms + 8 ms grace: 100 inserted at 0, deadline 18 ms,
        # dispatched at 30 ms after the D events at 19, 20 and 25 ms (a
        # write): 3 late.  200 waited 5 ms: not late.  300 has no traced
        # insertion: not listed.
        w = fwdlib.deadline_waits(trace(
            "I 100 8 0.000", "I 200 8 0.001", "D 200 8 0.006",
            "D 400 8 0.018", "D 500 8 0.019", "D 600 8 0.020",
            "D 700 8 0.025 W", "D 100 8 0.030", "D 300 8 0.031"), 10)
        self.assertEqual(w, [(200, 5, 0), (100, 30, 3)])


class TestDispatchOwners(unittest.TestCase):
    def owners(self, src):
        return [(o["owner"], o["sector"], o["blocks"], o["dir"])
                for o in fwdlib.dispatch_owners(fwdlib.parse_blkparse(src))]

    def test_recorded_trace(self):
        # the submitting pids of the I events; 500 was dispatched by a
        # kworker and is 1002's; the flush (no blocks) is no dispatch
        self.assertEqual(self.owners(ORDER),
                         [(1001, 100, 8, "R"), (1002, 500, 8, "R"),
                          (1001, 508, 8, "R"), (1003, 50, 8, "R"),
                          (1003, 20, 8, "R"), (1001, 200, 8, "R"),
                          (1002, 300, 8, "R"), (1004, 900, 8, "W")])

    def test_unseen_insert_merges_and_requeue(self):
        lines = ["8,0 D R 40 8 0.000000001 9 kworker",      # inserted before
                 "8,0 I R 100 8 0.000000002 1 a",
                 "8,0 M R 108 8 0.000000003 2 b",           # grows 1's request
                 "8,0 I R 300 8 0.000000004 3 c",
                 "8,0 F R 292 8 0.000000005 4 d",           # moves 3's to 292
                 "8,0 D R 100 16 0.000000006 9 kworker",
                 "8,0 D R 292 16 0.000000007 9 kworker",
                 "8,0 R R 292 16 0.000000008 9 kworker",    # not served
                 "8,0 D R 292 16 0.000000009 9 kworker"]
        self.assertEqual(self.owners(lines),
                         [(9, 40, 8, "R"), (1, 100, 16, "R"), (3, 292, 16, "R")])

    def test_requeue_of_an_earlier_dispatch(self):
        # 100 is requeued after 200 was dispatched: its first dispatch
        # goes, 200's stays, and 100 counts where it was sent again
        lines = ["8,0 I R 100 8 0.000000001 1 a", "8,0 I R 200 8 0.000000002 2 b",
                 "8,0 D R 100 8 0.000000003 9 k", "8,0 D R 200 8 0.000000004 9 k",
                 "8,0 R R 100 8 0.000000005 9 k", "8,0 D R 100 8 0.000000006 9 k",
                 "8,0 R R 999 8 0.000000007 9 k"]           # never dispatched
        self.assertEqual(self.owners(lines), [(2, 200, 8, "R"), (1, 100, 8, "R")])

    def test_no_insert_events_uses_queue_events(self):
        lines = ["8,0 Q R 100 8 0.000000001 1 a", "8,0 Q R 108 8 0.000000002 2 b",
                 "8,0 M R 108 8 0.000000002 2 b", "8,0 D R 100 16 0.000000003 7 k",
                 "8,0 Q R 5 8 0.000000004 2 b", "8,0 D R 5 8 0.000000005 7 k"]
        self.assertEqual(self.owners(lines), [(1, 100, 16, "R"), (2, 5, 8, "R")])


class TestLatency(unittest.TestCase):
    def setUp(self):
        self.recs = fwdlib.request_latencies(fwdlib.parse_blkparse(ORDER))

    def test_pairs_and_deltas(self):
        by = {r["sector"]: r for r in self.recs}
        self.assertEqual(sorted(by), [20, 50, 100, 200, 300, 500, 508, 900])
        # D2C (µs): 100:100 500:200 508:110 50:180 20:100 200:50 300:50 900:100
        self.assertEqual({s: r["d2c_ns"] // 1000 for s, r in by.items()},
                         {100: 100, 500: 200, 508: 110, 50: 180, 20: 100, 200: 50,
                          300: 50, 900: 100})
        self.assertEqual({s: r["delta"] for s, r in by.items()},
                         {100: 100, 500: 392, 508: 0, 50: -466, 20: -38, 200: 172,
                          300: 92, 900: 592})
        # service = C - max(D, previous C): 500: 211-110, 508: 231-211, 50: 400-231
        self.assertEqual((by[500]["service_ns"], by[508]["service_ns"], by[50]["service_ns"]),
                         (101000, 20000, 169000))
        self.assertEqual(by[100]["q2c_ns"], 109500)
        self.assertIsNone(by[500]["q2c_ns"])

    def test_by_sign(self):
        s = fwdlib.latency_by_sign(self.recs, "d2c_ns")
        # pos: 100,200,50,50,100 -> mean 100; neg: 180,100 -> 140; zero: 110
        self.assertEqual((s["pos"]["n"], s["neg"]["n"], s["zero"]["n"]), (5, 2, 1))
        self.assertAlmostEqual(s["pos"]["mean_us"], 100.0)
        self.assertAlmostEqual(s["neg"]["mean_us"], 140.0)
        self.assertAlmostEqual(s["zero"]["mean_us"], 110.0)
        self.assertAlmostEqual(s["neg_over_pos"], 1.4)
        sv = fwdlib.latency_by_sign(self.recs, "service_ns")
        # pos: 100,101,50,50,100 -> 80.2; neg: 169,100 -> 134.5
        self.assertAlmostEqual(sv["pos"]["mean_us"], 80.2)
        self.assertAlmostEqual(sv["neg"]["mean_us"], 134.5)

    def test_requeue_cancels_dispatch(self):
        lines = ["8,0 D R 100 8 0.000001000 1 a", "8,0 R R 100 8 0.000002000 1 a",
                 "8,0 D R 100 8 0.000005000 1 a", "8,0 C R 100 8 0.000007000 0 b"]
        recs = fwdlib.request_latencies(fwdlib.parse_blkparse(lines))
        self.assertEqual([r["d2c_ns"] for r in recs], [2000])

    def test_percentile(self):
        self.assertEqual(fwdlib.percentile(list(range(1, 101)), 99), 99)
        self.assertEqual(fwdlib.percentile([5], 99.9), 5)
        self.assertIsNone(fwdlib.percentile([], 50))


class TestMmcHistory(unittest.TestCase):
    def test_recorded_history(self):
        recs = fwdlib.parse_mmc_history(os.path.join(DATA, "mmc-history.txt"))
        # Sorted by issue: 100(+100, 1000ns) 50(-58, 2000) 58(0, 500)
        # 1000(+934, 800) W10(-998, 3000)
        self.assertEqual([r["sector"] for r in recs], [100, 50, 58, 1000, 10])
        self.assertEqual([r["delta"] for r in recs], [100, -58, 0, 934, -998])
        s = fwdlib.latency_by_sign(recs, "service_ns")
        self.assertAlmostEqual(s["pos"]["mean_us"], 0.9)
        self.assertAlmostEqual(s["neg"]["mean_us"], 2.5)
        self.assertAlmostEqual(s["neg_over_pos"], 2.5 / 0.9)

    def test_other_commands(self):
        # With other=True the O command (issue 5600) comes in issue order,
        # without a delta, and moves nothing: 1000 is still +934.
        recs = fwdlib.parse_mmc_history(os.path.join(DATA, "mmc-history.txt"),
                                        other=True)
        self.assertEqual([(r["dir"], r["sector"], r["delta"]) for r in recs],
                         [("R", 100, 100), ("R", 50, -58), ("R", 58, 0),
                          ("O", 0, None), ("R", 1000, 934), ("W", 10, -998)])
        self.assertEqual((recs[3]["d_ns"], recs[3]["c_ns"]), (5600, 5700))

    def test_bad_line_names_file_and_line(self):
        with self.assertRaises(fwdlib.InputError) as cm:
            fwdlib.parse_mmc_history(io.StringIO("# h\n1 2 R 3 4 0\n1 2 X 3 4 0\n"))
        self.assertIn(":3:", str(cm.exception))


class TestJain(unittest.TestCase):
    def test_values(self):
        self.assertAlmostEqual(fwdlib.jain([1, 2, 3]), 36 / 42)
        self.assertAlmostEqual(fwdlib.jain([5, 5, 5, 5]), 1.0)
        self.assertAlmostEqual(fwdlib.jain([1, 0, 0, 0]), 0.25)
        self.assertAlmostEqual(fwdlib.jain([7]), 1.0)

    def test_undefined_and_invalid(self):
        self.assertIsNone(fwdlib.jain([]))
        self.assertIsNone(fwdlib.jain([0, 0]))
        with self.assertRaises(ValueError):
            fwdlib.jain([1, -1])
        with self.assertRaises(ValueError):
            fwdlib.jain([1, float("nan")])

    def test_integer_scale(self):
        # floor(1e6 * 36 / 42) = 857142; floating point gives 857142.857...
        self.assertEqual(fwdlib.jain([1, 2, 3], scale=1000000), 857142)
        self.assertEqual(fwdlib.jain([5, 5], scale=1000000), 1000000)
        # exact where floats are not: (2^53 + 1, 2^53 + 1) is exactly 1
        big = 2 ** 53 + 1
        self.assertEqual(fwdlib.jain([big, big], scale=1000000), 1000000)
        self.assertIsNone(fwdlib.jain([0, 0], scale=1000000))
        with self.assertRaises(ValueError):
            fwdlib.jain([1, 2.5], scale=1000000)


class TestFio(unittest.TestCase):
    def test_small(self):
        s = fwdlib.parse_fio(os.path.join(DATA, "fio-small.json"))
        self.assertEqual([t["iops"] for t in s["threads"]], [300.0, 100.0, 100.0])
        self.assertEqual([(p["name"], p["iops"], p["threads"]) for p in s["processes"]],
                         [("deep", 400.0, 2), ("sync", 100.0, 1)])
        self.assertEqual([(g["name"], g["iops"]) for g in s["groups"]], [(0, 400.0), (1, 100.0)])
        # J threads = 500^2 / (3 * (300^2+100^2+100^2)) = 250000/330000
        self.assertAlmostEqual(s["jain_threads"], 250000 / 330000)
        # J processes = 500^2 / (2 * (400^2+100^2)) = 250000/340000
        self.assertAlmostEqual(s["jain_processes"], 250000 / 340000)
        t = s["total"]
        self.assertEqual((t["iops"], t["ios"]), (500.0, 500))
        # mean clat weighted by ios: (300*100 + 100*300 + 100*50) / 500 = 130 µs
        self.assertAlmostEqual(t["mean_us"], 130.0)
        # no histograms: percentile = max over clones, flagged inexact
        self.assertEqual((t["p99_us"], t["p999_us"], t["pct_exact"]), (600.0, 800.0, False))
        deep = s["processes"][0]
        self.assertAlmostEqual(deep["mean_us"], 150.0)
        sync = s["processes"][1]
        self.assertEqual((sync["p99_us"], sync["p999_us"], sync["pct_exact"]), (90.0, 95.0, True))

    def test_real_json_plus(self):
        path = os.path.join(DATA, "fio-real.json")
        with open(path) as f:
            doc = json.load(f)
        s = fwdlib.parse_fio(path)
        self.assertEqual([t["iops"] for t in s["threads"]],
                         [j["read"]["iops"] for j in doc["jobs"]])
        self.assertEqual([p["name"] for p in s["processes"]], ["deep", "sync"])
        # One clone's histogram reproduces fio's own percentiles.
        for t, j in zip(s["threads"], doc["jobs"]):
            pct = j["read"]["clat_ns"]["percentile"]
            self.assertEqual(t["p99_us"] * 1000, pct["99.000000"])
            self.assertEqual(t["p999_us"] * 1000, pct["99.900000"])
        # Merged histograms: exact, and between the clones' percentiles.
        deep = s["processes"][0]
        self.assertTrue(deep["pct_exact"])
        p99s = [t["p99_us"] for t in s["threads"][:2]]
        self.assertTrue(min(p99s) <= deep["p99_us"] <= max(p99s))
        self.assertEqual(deep["ios"], sum(j["read"]["total_ios"] for j in doc["jobs"][:2]))

    def test_garbled(self):
        for text in ("", "hello", '{"jobs": 3}', '{"jobs": [ '):
            with self.assertRaises(fwdlib.InputError):
                fwdlib.load_fio_json(io.StringIO(text))


class TestCli(unittest.TestCase):
    def test_blkparse_fmt(self):
        rc, out, _ = run_cli("blkparse-fmt")
        self.assertEqual((rc, out), (0, fwdlib.BLKPARSE_FMT + "\n"))
        self.assertTrue(out.endswith("\\n\n"))

    def test_events(self):
        rc, out, _ = run_cli("events", ORDER)
        self.assertEqual(rc, 0)
        lines = out.splitlines()
        self.assertEqual(len(lines), len(fwdlib.parse_blkparse(ORDER)))
        # order.blk.txt has no CPU field: "-"
        self.assertEqual(lines[0], "Q 100 8 0.000000500 RS -")

    def test_reads_sweep_deadline(self):
        rc, out, _ = run_cli("reads", ORDER)
        self.assertEqual((rc, out), (0, "7 2 1\n"))
        rc, out, err = run_cli("sweep", ORDER, "500")
        self.assertEqual((rc, out), (0, "7 3 1 0\n"))
        self.assertEqual(err, "# sweep at 58 took 20; waiting: 300 ahead, 300 lowest\n")
        rc, out, _ = run_cli("deadline", ORDER, "10")
        self.assertEqual(rc, 0)
        self.assertEqual(out.splitlines()[0], "100 0 0")
        self.assertEqual(len(out.splitlines()), 7)

    def test_errors_name_the_file(self):
        missing = os.path.join(DATA, "no-such-file.txt")
        fio = os.path.join(DATA, "fio-small.json")
        for args in (("events", missing), ("reads", missing),
                     ("sweep", missing, "500"), ("deadline", missing, "10"),
                     ("reads", fio), ("sweep", fio, "500")):
            rc, out, err = run_cli(*args)
            self.assertEqual(rc, 2, args)
            self.assertIn(args[1], err)
            self.assertEqual(out, "")

    def test_usage(self):
        self.assertEqual(run_cli()[0], 2)
        self.assertEqual(run_cli("reads")[0], 2)
        self.assertEqual(run_cli("sweep", ORDER)[0], 2)
        self.assertEqual(run_cli("frobnicate", "x")[0], 2)
        rc, out, err = run_cli("sweep", ORDER, "5x")
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("5x", err)


# blk_io_trace (include/uapi/linux/blktrace_api.h), native endian, version 7.
_ACT = {"Q": (1, 1 << 4), "M": (2, 0), "F": (3, 0), "R": (6, 1 << 5),
        "D": (7, 1 << 6), "C": (8, 1 << 7), "I": (12, 1 << 4)}


def _trace_record(seq, t, sector, nbytes, action, pid, dev, pdu=b""):
    return struct.pack("=IIQQIIIIIHH", 0x65617407, seq, t, sector, nbytes,
                       action, pid, dev, 0, 0, len(pdu)) + pdu


def write_binary_trace(events, path):
    """A blktrace binary file (one CPU) holding @events."""
    recs, seq = [], 1
    for pid, comm in {e.pid: e.comm for e in reversed(events)}.items():
        recs.append(_trace_record(seq, 0, 0, 0, (1 << 10) << 16, pid, 0,
                                  comm.encode() + b"\0"))
        seq += 1
    for e in events:
        code, cat = _ACT[e.action]
        tc = cat | (1 << 8)                      # BLK_TC_FS
        if "W" in e.rwbs:
            tc |= 1 << 1
        if "S" in e.rwbs[1:]:
            tc |= 1 << 3
        if e.rwbs.startswith("F"):
            tc |= 1 << 2
        recs.append(_trace_record(seq, e.time_ns, e.sector, e.blocks * 512,
                                  code | (tc << 16), e.pid,
                                  (e.dev[0] << 20) | e.dev[1]))
        seq += 1
    with open(path, "wb") as f:
        f.write(b"".join(recs))


@unittest.skipUnless(shutil.which("blkparse"), "blkparse not installed")
class TestRealBlkparse(unittest.TestCase):
    """BLKPARSE_FMT through the shell into the real blkparse(1)."""

    def test_format_round_trip(self):
        events = fwdlib.parse_blkparse(ORDER)
        with tempfile.TemporaryDirectory() as d:
            write_binary_trace(events, os.path.join(d, "tr.blktrace.0"))
            cmd = 'blkparse -i tr -q -f "$(%s %s blkparse-fmt)"' % (
                sys.executable, os.path.join(HERE, "fwdlib.py"))
            p = subprocess.run(["sh", "-c", cmd], cwd=d, capture_output=True,
                               text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            got = fwdlib.parse_blkparse(p.stdout.splitlines())
            p = subprocess.run(["blkparse", "-i", "tr"], cwd=d,
                               capture_output=True, text=True)
            dflt = fwdlib.parse_blkparse(p.stdout.splitlines())
        t0 = events[0].time_ns          # blkparse counts from the first event

        def key(e):
            return (e.dev, e.action, e.rwbs, e.sector, e.blocks, e.time_ns, e.pid)
        self.assertEqual([key(e) for e in got],
                         [key(e)[:5] + (e.time_ns - t0, e.pid) for e in events])
        self.assertEqual([e.comm for e in got if e.pid == 1003][0], "fio")
        self.assertEqual({e.cpu for e in got}, {0})
        # default output: same events except the 0-block flush lines
        self.assertEqual([key(e) for e in dflt],
                         [key(e) for e in got if e.blocks])
        self.assertEqual(fwdlib.dispatch_order(got), ORDER_EXPECTED)

    def test_blkparse_text(self):
        """fwdlib.py blkparse: the text of a binary trace "t", with the
        actions kept or dropped as the guests' blktrace_stop keeps them."""
        events = fwdlib.parse_blkparse(ORDER)
        cli = [sys.executable, os.path.join(HERE, "fwdlib.py"), "blkparse"]
        with tempfile.TemporaryDirectory() as d:
            write_binary_trace(events, os.path.join(d, "t.blktrace.0"))
            out = os.path.join(d, "out.txt")
            p = subprocess.run(cli + [d, out, "DC"], capture_output=True)
            self.assertEqual((p.returncode, p.stderr), (0, b""))
            got = fwdlib.parse_blkparse(out)
            self.assertEqual([(e.action, e.sector) for e in got],
                             [(e.action, e.sector) for e in events
                              if e.action in "DC"])
            fwdlib.blkparse_text(d, out)
            self.assertEqual(len(fwdlib.parse_blkparse(out)), len(events))
            p = subprocess.run(cli + [os.path.join(d, "none"), out],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertIn("blkparse in", p.stderr)


if __name__ == "__main__":
    unittest.main()


def _ev(action, sector, blocks, pid, rwbs="R", t=0):
    return fwdlib.Event((8, 0), action, rwbs, sector, blocks, t, pid)


class FairnessTraceTest(unittest.TestCase):
    """waits(), fair_bound_check() and inflight_at() on small traces."""

    def test_units_and_bound(self):
        self.assertEqual(fwdlib.service_units(8), 1)        # 4 KiB
        self.assertEqual(fwdlib.service_units(64), 2)       # 32 KiB
        self.assertEqual(fwdlib.service_units(1024), 17)    # 512 KiB
        self.assertEqual(fwdlib.service_units(1024, "WS"), 17)
        self.assertEqual(fwdlib.service_units(1024, "W"), 51)  # writeback
        self.assertEqual(fwdlib.fair_bound(1, 8), 19)       # 2*8 + 3
        self.assertEqual(fwdlib.fair_bound(1, 0), 3)
        self.assertEqual(fwdlib.fair_bound(17, 8, c_q=2), 18)

    def test_waits_counts_other_owners_only(self):
        # P (pid 1) inserts at 500; Q (pid 2) gets three dispatches and P
        # one more of its own before P's request at 500 goes: P was
        # served after Q's second, so the longest run of Q's is 2.
        ev = [_ev("I", 500, 8, 1), _ev("I", 100, 8, 2), _ev("I", 200, 8, 2),
              _ev("I", 300, 8, 2), _ev("I", 600, 8, 1),
              _ev("D", 100, 8, 9), _ev("D", 200, 8, 9), _ev("D", 600, 8, 9),
              _ev("D", 300, 8, 9), _ev("D", 500, 8, 9)]
        w = {r["sector"]: r for r in fwdlib.waits(ev)}
        self.assertEqual(w[500]["owner"], 1)
        self.assertEqual(w[500]["passes"], {2: 2})
        self.assertEqual(w[300]["passes"], {1: 1})
        self.assertEqual(w[100]["passes"], {})

    def test_front_merge_moves_the_wait(self):
        ev = [_ev("I", 108, 8, 1), _ev("F", 100, 8, 1), _ev("I", 900, 8, 2),
              _ev("D", 900, 8, 9), _ev("D", 100, 16, 9)]
        w = fwdlib.waits(ev)
        self.assertEqual([(r["sector"], r["blocks"]) for r in w],
                         [(900, 8), (100, 16)])
        self.assertEqual(w[1]["passes"], {2: 1})

    def test_bound_check_finds_a_violation(self):
        # slack 0: bound 3 dispatches of another process per 4 KiB wait.
        ev = [_ev("I", 1000, 8, 1)]
        ev += [_ev("I", 8 * i, 8, 2) for i in range(4)]
        ev += [_ev("D", 8 * i, 8, 9) for i in range(4)]
        ev += [_ev("D", 1000, 8, 9)]
        res = fwdlib.fair_bound_check(ev, 0)
        self.assertEqual(res["requests"], 5)
        self.assertEqual(res["violations"], 1)
        self.assertEqual(res["worst"]["owner"], 1)
        self.assertEqual(res["worst"]["passes"], {2: 4})
        self.assertEqual(res["per_owner"]["1"], dict(requests=1, max_passes=4,
                                                     bound=3))
        self.assertEqual(fwdlib.fair_bound_check(ev, 1)["violations"], 0)

    def test_inflight_at(self):
        # below 1000: the deep reader; at or above: the sync reader.
        ev = [_ev("D", 10, 8, 9), _ev("D", 20, 8, 9), _ev("D", 2000, 8, 9),
              _ev("C", 10, 8, 9), _ev("D", 2100, 8, 9), _ev("C", 20, 8, 9),
              _ev("R", 30, 8, 9), _ev("D", 2200, 8, 9)]
        self.assertEqual(fwdlib.inflight_at(ev, 1000), [2, 1, 0])
        # at the deep reader's own dispatches: 0 then 1 before them
        self.assertEqual(fwdlib.inflight_at(ev, 1000, own=True), [0, 1])

    def test_fg_isolation(self):
        ms = 1000000

        def read(t, sector):
            # inserted, dispatched 1 ms later, completed 2 ms after that
            return [_ev("I", sector, 8, 5, "RS", t), _ev("D", sector, 8, 5, "RS", t + ms),
                    _ev("C", sector, 8, 0, "RS", t + 3 * ms)]
        ev = []
        for i in range(6):                      # reads every 10 ms
            ev += read(i * 10 * ms, 100 * i)
        # a writeback write waits from 1 ms on; dispatched in the gap
        # after the fifth read (43 ms .. 50 ms), then another write waits
        ev += [_ev("I", 5000, 1024, 0, "W", 1 * ms),
               _ev("D", 5000, 1024, 0, "W", 45 * ms),
               _ev("C", 5000, 1024, 0, "W", 46 * ms),
               _ev("I", 7000, 1024, 0, "W", 47 * ms),
               _ev("D", 9000, 8, 7, "WS", 200 * ms),   # after the reads
               _ev("I", 64, 8, 8, "RA", 44 * ms)]      # readahead: ignored
        r = fwdlib.fg_isolation(ev, 8 * ms, skip=3)
        # reads 4..6 judged (gaps of 7 ms); in the gap before read 6 a
        # write was dispatched; before reads 4 and 5 one waited throughout
        self.assertEqual((r["reads"], r["judged"], r["violations"],
                          r["contested"]), (6, 3, 1, 2))
        self.assertEqual(r["writes"], 1)
        self.assertEqual(r["max_async_inflight"], 1)
        self.assertEqual(r["max_write_wait_ns"], 44 * ms)
        # gaps longer than the window are not judged
        self.assertEqual(fwdlib.fg_isolation(ev, 5 * ms)["judged"], 0)
        # two writes in flight inside a judged gap count; outside, not
        two = ev + [_ev("D", 8000, 8, 0, "W", 25 * ms),
                    _ev("D", 8100, 8, 0, "W", 26 * ms),
                    _ev("C", 8000, 8, 0, "W", 28 * ms),
                    _ev("C", 8100, 8, 0, "W", 28 * ms)]
        self.assertEqual(fwdlib.fg_isolation(two, 8 * ms)["max_async_inflight"], 2)
        self.assertEqual(fwdlib.fg_isolation(two, 6 * ms)["max_async_inflight"], 0)
        # a synchronous write waiting in a gap leaves it unjudged
        fsync = ev + [_ev("I", 9100, 8, 7, "WS", 44 * ms)]
        self.assertEqual(fwdlib.fg_isolation(fsync, 8 * ms)["judged"], 2)
        # reads dispatched while a write had waited over 20 ms: reads 4, 5
        self.assertEqual(fwdlib.fg_isolation(ev, 8 * ms, expired_ns=20 * ms)
                         ["max_reads_expired"], 2)

    def test_served_ahead(self):
        # pid 9 keeps two requests in flight, pid 5 reads one at a time;
        # a request of no known owner (inserted before the trace) is
        # served first.
        ev = [_ev("D", 1, 8, 0), _ev("I", 10, 8, 9), _ev("I", 20, 8, 9),
              _ev("I", 500, 8, 5), _ev("C", 1, 8, 0), _ev("C", 10, 8, 0),
              _ev("F", 18, 2, 9), _ev("I", 30, 8, 9), _ev("C", 18, 10, 0),
              _ev("C", 500, 8, 0), _ev("I", 600, 8, 5), _ev("R", 600, 8, 0),
              _ev("C", 30, 8, 0), _ev("C", 600, 8, 0)]
        got = fwdlib.served_ahead(ev)
        # 10: the unknown one; 20 (front-merged to 18): the unknown one;
        # 500: the unknown one, 10 and 18; 30: 500; 600: 30
        self.assertEqual(got[9], dict(requests=3, ahead=[1, 1, 1],
                                      most_in_flight=2))
        self.assertEqual(got[5], dict(requests=2, ahead=[3, 1],
                                      most_in_flight=1))

    def test_served_ahead_two_requests_at_one_sector(self):
        # pid 9 and pid 5, one request at a time each, both read sector
        # 40 (random reads meet): two requests, two completions, and
        # neither owner is left with one that never completes.
        ev = [_ev("I", 40, 8, 9), _ev("I", 40, 8, 5), _ev("D", 40, 8, 0),
              _ev("C", 40, 8, 0), _ev("D", 40, 8, 0), _ev("C", 40, 8, 0),
              _ev("I", 70, 8, 9), _ev("I", 90, 8, 5), _ev("D", 70, 8, 0),
              _ev("C", 70, 8, 0), _ev("D", 90, 8, 0), _ev("C", 90, 8, 0)]
        got = fwdlib.served_ahead(ev)
        for pid in (9, 5):
            self.assertEqual(got[pid]["most_in_flight"], 1)
            self.assertEqual(got[pid]["requests"], 2)

    def test_served_ahead_one_owner_twice_at_one_sector(self):
        # the deep reader has two equal requests at 40 in flight: both
        # complete, and its next read finds none of them left
        ev = [_ev("I", 40, 8, 9), _ev("I", 40, 8, 9), _ev("D", 40, 8, 0),
              _ev("D", 40, 8, 0), _ev("C", 40, 8, 0), _ev("C", 40, 8, 0),
              _ev("I", 70, 8, 9), _ev("D", 70, 8, 0), _ev("C", 70, 8, 0)]
        self.assertEqual(fwdlib.served_ahead(ev)[9],
                         dict(requests=3, ahead=[0, 0, 0], most_in_flight=2))

    def test_served_ahead_tells_sync_from_async_at_one_sector(self):
        # as in a fairness.mmc trace on 7.2: the deep reader's R at 40
        # waits, the one-at-a-time reader's RS at 40 goes first, and its
        # next read comes before the deep reader's is served.
        ev = [_ev("I", 40, 8, 9), _ev("I", 40, 8, 5, "RS"),
              _ev("D", 40, 8, 0, "RS"), _ev("C", 40, 8, 0, "RS"),
              _ev("I", 90, 8, 5, "RS"), _ev("D", 40, 8, 0),
              _ev("C", 40, 8, 0), _ev("D", 90, 8, 0, "RS"),
              _ev("C", 90, 8, 0, "RS")]
        got = fwdlib.served_ahead(ev)
        self.assertEqual(got[5], dict(requests=2, ahead=[0, 1],
                                      most_in_flight=1))
        self.assertEqual(got[9], dict(requests=1, ahead=[1],
                                      most_in_flight=1))

    def test_waits_two_requests_at_one_sector(self):
        ev = [_ev("I", 40, 8, 1), _ev("I", 40, 8, 2), _ev("I", 80, 8, 2),
              _ev("D", 40, 8, 9), _ev("D", 80, 8, 9), _ev("D", 40, 8, 9)]
        w = fwdlib.waits(ev)
        self.assertEqual([(r["sector"], r["owner"]) for r in w],
                         [(40, 1), (80, 2), (40, 2)])
        # the flags of the dispatch tell which of the two went
        ev[1] = _ev("I", 40, 8, 2, "RS")
        ev[3] = _ev("D", 40, 8, 9, "RS")
        w = fwdlib.waits(ev)
        self.assertEqual([(r["sector"], r["owner"]) for r in w],
                         [(40, 2), (80, 2), (40, 1)])

    def test_cli(self):
        path = os.path.join(tempfile.mkdtemp(), "t.txt")
        with open(path, "w") as f:
            f.write("8,0 I R 100 8 1.000000000 1 fio\n"
                    "8,0 I R 200 8 1.000000001 2 fio\n"
                    "8,0 D R 200 8 1.000000002 0 kworker\n"
                    "8,0 D R 100 8 1.000000003 0 kworker\n")
        run = subprocess.run([sys.executable, os.path.join(HERE, "fwdlib.py"),
                              "fair-bound", path, "8"], capture_output=True,
                             text=True, check=True)
        self.assertEqual(run.stdout.split(), ["2", "2", "0"])
        self.assertIn("# process 1: 1 requests, passed over at most 1",
                      run.stderr)
        out = subprocess.run([sys.executable, os.path.join(HERE, "fwdlib.py"),
                              "inflight-at", path, "150"], capture_output=True,
                             text=True, check=True).stdout
        # at the dispatch at 200: none below 150 in flight; at the one
        # at 100, its own: none before it
        self.assertEqual(out.split(), ["1", "0", "0", "0", "1", "0", "0", "0"])
        bad = subprocess.run([sys.executable, os.path.join(HERE, "fwdlib.py"),
                              "fair-bound", path, "x"], capture_output=True)
        self.assertEqual(bad.returncode, 2)
        shutil.rmtree(os.path.dirname(path))
