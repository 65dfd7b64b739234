#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of the flash card: the cost model, and the nbdkit plugin for real.

Run: /usr/bin/python3 -m unittest discover -s tools -p 'test_*.py'
  or /usr/bin/python3 tools/flashcard/test_flashcard.py
The plugin tests are skipped when nbdkit, its python plugin or qemu-io is
missing. They assert data and behaviour only; the timing they print is
information, not a pass/fail criterion.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import costmodel  # noqa: E402

PLUGIN = os.path.join(HERE, "flashcard.py")
MIB = 1 << 20


class CostModelTest(unittest.TestCase):

    def test_paper_forward_cheaper_than_backward(self):
        p = costmodel.make_params("paper")
        for dist in (4096, MIB, 8 * MIB, 64 * MIB, 1 << 30):
            fwd = costmodel.cost_us(0, dist, 4096, p)
            back = costmodel.cost_us(dist, 0, 4096, p)
            self.assertLess(fwd, back, "distance %d" % dist)
        # "clearly" dearer: at least twice the cost for long jumps
        self.assertGreater(costmodel.cost_us(64 * MIB, 0, 4096, p),
                           2 * costmodel.cost_us(0, 64 * MIB, 4096, p))

    def test_symmetric_forward_equals_backward(self):
        p = costmodel.make_params("symmetric")
        for dist in (512, MIB, 64 * MIB):
            self.assertEqual(costmodel.cost_us(0, dist, 4096, p),
                             costmodel.cost_us(dist, 0, 4096, p))

    def test_symmetric_shares_paper_base_and_transfer(self):
        a = costmodel.make_params("paper")
        b = costmodel.make_params("symmetric")
        for k in ("base_us", "scale_sectors", "xfer_us_per_kb"):
            self.assertEqual(a[k], b[k], k)

    def test_continuation_costs_transfer_only(self):
        for preset in costmodel.PRESETS:
            p = costmodel.make_params(preset)
            for length in (512, 4096, 65536):
                self.assertEqual(
                    costmodel.cost_us(10 * MIB, 10 * MIB, length, p),
                    costmodel.transfer_cost_us(length, p))
        p = costmodel.make_params("paper")
        self.assertEqual(costmodel.cost_us(None, 5 * MIB, 512, p),
                         costmodel.transfer_cost_us(512, p))
        self.assertGreater(costmodel.transfer_cost_us(4096, p), 0)

    def test_cost_grows_with_distance(self):
        p = costmodel.make_params("paper")
        last_f = last_b = 0
        for dist in (512, 4096, MIB, 16 * MIB, 256 * MIB):
            f = costmodel.cost_us(0, dist, 512, p)
            b = costmodel.cost_us(dist, 0, 512, p)
            self.assertGreater(f, last_f)
            self.assertGreater(b, last_b)
            last_f, last_b = f, b
        # any jump pays at least the base cost
        self.assertGreaterEqual(costmodel.access_cost_us(512, p),
                                p["base_us"])

    def test_half_reach_at_scale(self):
        p = costmodel.make_params("paper", base_us=0, xfer_us_per_kb=0)
        d = p["scale_sectors"] * costmodel.SECTOR
        self.assertAlmostEqual(costmodel.cost_us(0, d, 0, p),
                               p["fwd_us"] / 2)
        self.assertAlmostEqual(costmodel.cost_us(d, 0, 0, p),
                               p["back_us"] / 2)

    def test_seek_charged_per_command_not_per_piece(self):
        # a 4 KiB command arriving as eight 512-byte pieces costs the same
        # as one 4 KiB piece: one access cost plus the transfer
        p = costmodel.make_params("paper")
        card = costmodel.Card(p)
        card.charge(100 * MIB, 512)
        pieces = sum(card.charge(20 * MIB + i * 512, 512) for i in range(8))
        whole = costmodel.cost_us(100 * MIB + 512, 20 * MIB, 4096, p)
        self.assertAlmostEqual(pieces, whole)
        self.assertEqual((card.backward, card.forward, card.continued),
                         (1, 0, 8))

    def test_overrides_apply(self):
        p = costmodel.make_params("symmetric", back_us="900", fwd_us=10,
                                  scale_sectors="16")
        self.assertEqual((p["fwd_us"], p["back_us"], p["scale_sectors"]),
                         (10.0, 900.0, 16))
        self.assertEqual(p["base_us"],
                         costmodel.PRESETS["symmetric"]["base_us"])

    def test_presets_not_modified_by_overrides(self):
        before = dict(costmodel.PRESETS["paper"])
        costmodel.make_params("paper", fwd_us=1)
        self.assertEqual(costmodel.PRESETS["paper"], before)

    def test_bad_parameters_rejected(self):
        bad = [
            ({"preset": "nope"}, "unknown preset"),
            ({"fwd_us": "-1"}, "must not be negative"),
            ({"back_us": "abc"}, "not a number"),
            ({"base_us": "nan"}, "not a finite number"),
            ({"xfer_us_per_kb": "inf"}, "not a finite number"),
            ({"scale_sectors": "0"}, "scale_sectors"),
            ({"scale_sectors": "1.5"}, "whole number"),
            ({"base_us": "5e9"}, "too large"),
            ({"seek_us": "3"}, "unknown parameter"),
        ]
        for kw, text in bad:
            with self.assertRaises(costmodel.ParamError, msg=str(kw)) as cm:
                costmodel.make_params(**kw)
            self.assertIn(text, str(cm.exception))

    def test_sizes(self):
        self.assertEqual(costmodel.parse_size("4G"), 4 << 30)
        self.assertEqual(costmodel.parse_size("512M"), 512 << 20)
        self.assertEqual(costmodel.parse_size(str(1 << 30)), 1 << 30)
        for bad in ("3G", "", "G", "4X", "-4G", "1000000", "512K"):
            with self.assertRaises(costmodel.ParamError, msg=bad):
                costmodel.parse_size(bad)


def _have_plugin():
    if not shutil.which("nbdkit") or not shutil.which("qemu-io"):
        return False
    r = subprocess.run(["nbdkit", "python", "--version"],
                       capture_output=True)
    return r.returncode == 0


@unittest.skipUnless(_have_plugin(), "nbdkit python plugin or qemu-io missing")
class PluginTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="flashcard-test.")
        self.img = os.path.join(self.dir, "card.img")
        self.sock = os.path.join(self.dir, "sock")
        self.proc = None

    def tearDown(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        if self.proc:
            self.proc.stderr.close()
        shutil.rmtree(self.dir)

    def start(self, *args):
        self.proc = subprocess.Popen(
            ["nbdkit", "-f", "-U", self.sock, "python", PLUGIN,
             "file=" + self.img] + list(args),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(200):
            if os.path.exists(self.sock):
                return
            if self.proc.poll() is not None:
                self.fail("nbdkit exited: %s" %
                          self.proc.stderr.read().decode())
            time.sleep(0.05)
        self.fail("nbdkit did not create its socket")

    def qemu_io(self, *cmds):
        argv = ["qemu-io", "-f", "raw",
                "nbd+unix:///?socket=" + self.sock]
        for c in cmds:
            argv += ["-c", c]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        return r.returncode, r.stdout + r.stderr

    def test_write_reads_back(self):
        self.start("preset=fast", "size=64M")
        self.assertEqual(os.path.getsize(self.img), 64 * MIB)
        rc, out = self.qemu_io("write -P 0xa5 1M 4k",
                               "write -P 0x5a 63M 512",
                               "read -P 0xa5 1M 4k",
                               "read -P 0x5a 63M 512",
                               "read -P 0 0 4k")
        self.assertEqual(rc, 0, out)
        self.assertNotIn("Pattern verification failed", out)
        # the pattern check can fail: wrong pattern is reported
        rc, out = self.qemu_io("read -P 0x11 1M 4k")
        self.assertIn("Pattern verification failed", out)
        # the data is in the backing file, and the file stays sparse
        with open(self.img, "rb") as f:
            f.seek(MIB)
            self.assertEqual(f.read(4096), b"\xa5" * 4096)
        self.assertLess(os.stat(self.img).st_blocks * 512, 4 * MIB)

    def test_read_beyond_end_fails(self):
        self.start("preset=fast", "size=1M")
        rc, out = self.qemu_io("read 1M 512")
        self.assertIn("ead failed", out)  # "Read failed" / "read failed"

    def test_existing_image_keeps_data(self):
        with open(self.img, "wb") as f:
            f.truncate(2 * MIB)
            f.seek(4096)
            f.write(b"\x42" * 512)
        self.start("preset=fast")
        rc, out = self.qemu_io("read -P 0x42 4096 512")
        self.assertEqual(rc, 0, out)
        self.assertNotIn("Pattern verification failed", out)

    def test_bad_parameters_exit_nonzero(self):
        for args in (["preset=nope"], ["back_us=-5"], ["nokey=1"],
                     ["size=3G"]):
            r = subprocess.run(["nbdkit", "-f", "-U", self.sock, "python",
                                PLUGIN, "file=" + self.img] + args,
                               capture_output=True, text=True, timeout=30)
            self.assertNotEqual(r.returncode, 0, args)
            self.assertIn("flashcard: error:", r.stderr, args)
            self.assertFalse(os.path.exists(self.img), args)
        with open(self.img, "wb") as f:
            f.truncate(3 * MIB)
        r = subprocess.run(["nbdkit", "-f", "-U", self.sock, "python",
                            PLUGIN, "file=" + self.img],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("power of two", r.stderr)
        self.assertEqual(os.path.getsize(self.img), 3 * MIB)

    def test_timing_printed(self):
        # Information only: 4 KiB reads 1 MiB apart, ascending then
        # descending, on the paper preset; qemu-io reports each command's
        # rate, from which the mean latency follows. Not asserted (timing
        # is not a test); the expected model costs are printed beside it.
        self.start("preset=paper", "size=256M")
        n = 64
        up = ["read %d 4k" % (i * MIB) for i in range(n)]
        down = ["read %d 4k" % ((2 * n - 1 - i) * MIB) for i in range(n)]
        rc, out = self.qemu_io(*(up + down))
        self.assertEqual(rc, 0, out)
        rates = [float(line.split(" and ")[1].split()[0])
                 for line in out.splitlines() if "ops/sec" in line]
        self.assertEqual(len(rates), 2 * n)
        lat_up = sum(1e6 / r for r in rates[1:n]) / (n - 1)
        lat_down = sum(1e6 / r for r in rates[n + 1:]) / (n - 1)
        p = costmodel.make_params("paper")
        sys.stderr.write(
            "\nflashcard paper preset, 4 KiB reads 1 MiB apart: ascending "
            "%.0f us (model %.0f), descending %.0f us (model %.0f), "
            "ratio %.2f\n" %
            (lat_up, costmodel.cost_us(0, MIB - 4096, 4096, p),
             lat_down, costmodel.cost_us(MIB + 4096, 0, 4096, p),
             lat_down / lat_up))

if __name__ == "__main__":
    unittest.main()
