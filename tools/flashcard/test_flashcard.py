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

    def test_fig56_is_on_the_papers_scale(self):
        # milliseconds, backward several times forward, and the direction
        # term well above the ~1.6 ms a 4 KiB command costs in emulation
        p = costmodel.make_params("fig56")
        fwd = costmodel.cost_us(0, 64 * MIB, 4096, p)
        back = costmodel.cost_us(64 * MIB, 0, 4096, p)
        self.assertAlmostEqual(fwd, 500 + 1000 * 16 / 17 + 100)
        self.assertAlmostEqual(back, 500 + 7000 * 16 / 17 + 100)
        self.assertGreater(back / fwd, 4)
        self.assertLess(back, 10000)        # inside Fig 5/6's 0..10 ms
        self.assertGreater(back - fwd, 3 * 1600)
        for k in ("scale_sectors", "xfer_us_per_kb"):
            self.assertEqual(p[k], costmodel.PRESETS["paper"][k], k)

    def test_device_time_of_a_known_sequence(self):
        # paper: base 100, fwd 150, back 1200, half reach at 4 MiB,
        # 25 us per KiB.  Four model commands:
        #  1. read 4 KiB at 0, the first piece: continuation, 100 us
        #  2. read 4 KiB 4 MiB further, as eight 512-byte pieces: forward,
        #     100 + 150/2 + 100 = 275 us
        #  3. write 4 KiB right after it: a new command (direction
        #     changed), continuation, 100 us
        #  4. read 4 KiB 4 MiB below the end: backward, 100 + 600 + 100
        card = costmodel.Card(costmodel.make_params("paper"))
        costs = [card.charge(0, 4096)]
        start = 4096 + 4 * MIB
        costs += [card.charge(start + i * 512, 512) for i in range(8)]
        costs.append(card.charge(start + 4096, 4096, write=True))
        end = start + 8192
        costs.append(card.charge(end - 4 * MIB, 4096))
        t = card.totals()
        self.assertEqual((t["pieces"], t["commands"], t["bytes"]),
                         (11, 4, 4 * 4096))
        self.assertAlmostEqual(t["busy_us"], 1275)
        self.assertAlmostEqual(t["busy_us"], sum(costs))
        want = {("read", "continuation"): (1, 100), ("read", "forward"):
                (1, 275), ("read", "backward"): (1, 800),
                ("write", "continuation"): (1, 100)}
        for k in costmodel.KINDS:
            for g in costmodel.SIGNS:
                n, us = want.get((k, g), (0, 0))
                self.assertEqual(t[k][g]["commands"], n, (k, g))
                self.assertAlmostEqual(t[k][g]["busy_us"], us, msg=(k, g))
                self.assertEqual(t[k][g]["bytes"], 4096 if n else 0)

    def test_continuing_requests_are_one_model_command(self):
        # a sequential stream of 4 KiB requests is one command: the model
        # charges its access once
        card = costmodel.Card(costmodel.make_params("paper"))
        card.charge(8 * MIB, 4096)
        for i in range(16):
            card.charge(16 * MIB + i * 4096, 4096)
        t = card.totals()
        self.assertEqual(t["commands"], 2)
        self.assertEqual(t["read"]["forward"]["commands"], 1)
        self.assertEqual(t["read"]["forward"]["bytes"], 16 * 4096)

    def test_totals_difference(self):
        card = costmodel.Card(costmodel.make_params("symmetric"))
        card.charge(0, 4096)
        before = card.totals()
        card.charge(64 * MIB, 4096)
        card.charge(MIB, 4096, write=True)
        d = costmodel.diff_totals(before, card.totals())
        self.assertEqual(d["commands"], 2)
        self.assertEqual(d["pieces"], 2)
        self.assertEqual(d["read"]["forward"]["commands"], 1)
        self.assertEqual(d["write"]["backward"]["commands"], 1)
        self.assertEqual(d["read"]["continuation"]["commands"], 0)
        p = card.params
        self.assertAlmostEqual(d["busy_us"], costmodel.cost_us(
            4096, 64 * MIB, 4096, p) + costmodel.cost_us(
            64 * MIB + 4096, MIB, 4096, p), places=2)

    def test_control_window_text(self):
        card = costmodel.Card(costmodel.make_params("paper"))
        card.charge(0, 4096)
        size = 64 * MIB
        self.assertEqual(costmodel.control_start(size), size - 65536)
        data = costmodel.control_text(card, size, "paper", 3)
        self.assertEqual(len(data), costmodel.CONTROL_BYTES)
        self.assertTrue(data.endswith(b" \n"))
        doc = costmodel.parse_control(data)
        self.assertEqual(doc["totals"], card.totals())
        self.assertEqual((doc["preset"], doc["size"], doc["control_reads"]),
                         ("paper", size, 3))
        # trailing NULs (a short read) are tolerated; foreign data is not
        costmodel.parse_control(data[:2000].rstrip() + b"\0" * 10)
        for bad in (b"\0" * 512, b'{"magic": "x"}', b"garbage"):
            with self.assertRaises(ValueError, msg=bad[:10]):
                costmodel.parse_control(bad)

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

    def control(self, size):
        # qemu-io's hex dump of the first 4 KiB of the window (the JSON is
        # shorter): "<offset>:  7b 22 ...  <ascii>"
        rc, out = self.qemu_io("read -v %d 4096" % (size - 65536))
        self.assertEqual(rc, 0, out)
        data = bytearray()
        for line in out.splitlines():
            if ":  " in line and line.split(":")[0].strip().isalnum():
                data += bytes(int(x, 16)
                              for x in line.split(":  ", 1)[1][:48].split())
        self.assertEqual(len(data), 4096, out[:200])
        return costmodel.parse_control(bytes(data))

    def test_control_window_reports_device_time(self):
        self.start("preset=paper", "size=64M")
        t = self.control(64 * MIB)["totals"]
        self.assertEqual((t["commands"], t["pieces"]), (0, 0))
        rc, out = self.qemu_io("read 1M 4k", "read 10M 4k")
        self.assertEqual(rc, 0, out)
        doc = self.control(64 * MIB)
        self.assertEqual(doc["preset"], "paper")
        self.assertEqual(doc["control_reads"], 2)
        t = doc["totals"]
        self.assertEqual((t["commands"], t["pieces"]), (2, 2))
        self.assertEqual(t["read"]["forward"]["commands"], 1)
        p = costmodel.make_params("paper")
        self.assertAlmostEqual(
            t["busy_us"], costmodel.transfer_cost_us(4096, p) +
            costmodel.cost_us(MIB + 4096, 10 * MIB, 4096, p), places=2)
        # reading the window did not move the card: 10M+4k continues the
        # last command and is charged its transfer only
        rc, out = self.qemu_io("read 10244k 4k")
        self.assertEqual(rc, 0, out)
        t = self.control(64 * MIB)["totals"]
        self.assertEqual((t["commands"], t["pieces"]), (2, 3))
        self.assertEqual(t["read"]["forward"]["bytes"], 8192)
        rc, out = self.qemu_io("read 10M 4k", "read 10244k 4k")
        self.assertEqual(rc, 0, out)
        t = self.control(64 * MIB)["totals"]
        self.assertEqual((t["commands"], t["pieces"]), (3, 5))
        self.assertEqual(t["read"]["backward"]["commands"], 1)
        self.assertEqual(t["read"]["backward"]["bytes"], 8192)

    def test_control_window_refuses_writes(self):
        self.start("preset=fast", "size=4M")
        rc, out = self.qemu_io("write -P 0x11 %d 4k" % (4 * MIB - 4096))
        self.assertIn("rite failed", out)
        rc, out = self.qemu_io("write -P 0x11 %d 4k" % (4 * MIB - 69632))
        self.assertEqual(rc, 0, out)
        self.assertNotIn("failed", out)
        self.assertEqual(self.control(4 * MIB)["totals"]["commands"], 1)

    def test_read_into_window_serves_both(self):
        # a read of the data's last 512 bytes and the window's first 512
        # (a probe of the disk's end) succeeds: the data, charged as one
        # command, then the window's text (its JSON object's start)
        self.start("preset=fast", "size=4M")
        end = 4 * MIB - 65536
        rc, out = self.qemu_io("write -P 0x33 %d 512" % (end - 512))
        self.assertEqual(rc, 0, out)
        rc, out = self.qemu_io("read -P 0x33 %d 512" % (end - 512),
                               "read -v %d 1024" % (end - 512))
        self.assertEqual(rc, 0, out)
        self.assertNotIn("failed", out)
        data = bytearray()
        for line in out.splitlines():
            if ":  " in line and line.split(":")[0].strip().isalnum():
                data += bytes(int(x, 16)
                              for x in line.split(":  ", 1)[1][:48].split())
        self.assertEqual(bytes(data[:512]), b"\x33" * 512)
        self.assertEqual(bytes(data[512:514]), b'{"')
        self.assertEqual(self.control(4 * MIB)["totals"]["commands"], 3)

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
