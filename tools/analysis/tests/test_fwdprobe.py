#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests for tools/fwdprobe: the analysis with a fake device whose
timing is given, the probe loop on a regular file, and every refusal path
(with fake device nodes, a fake sysfs and fake mount tables)."""

import contextlib
import errno
import importlib.machinery
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "..", "..", "fwdprobe")

_loader = importlib.machinery.SourceFileLoader("fwdprobe", PROBE)
_spec = importlib.util.spec_from_loader("fwdprobe", _loader)
fwdprobe = importlib.util.module_from_spec(_spec)
_loader.exec_module(fwdprobe)


def run_cli(*args):
    p = subprocess.run([sys.executable, PROBE] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


class FakeDevice:
    """read(off) -> ns: @fwd ns when off is at/above the end of the previous
    read, @bwd ns below it."""

    def __init__(self, size, fwd, bwd):
        self.size, self.fwd, self.bwd, self.end = size, fwd, bwd, 0

    def __call__(self, off):
        ns = self.fwd if off >= self.end else self.bwd
        self.end = off + self.size
        return ns


def passes(dev, count=200, stride=1 << 20, size=4096, seed=1):
    srt, shf = fwdprobe.make_offsets(count, stride, seed)
    a = fwdprobe.run_pass(dev, srt, size)
    b = fwdprobe.run_pass(dev, shf, size, prev_end=srt[-1] + size)
    return [a], [b]


class TestAnalysis(unittest.TestCase):
    def test_offsets(self):
        srt, shf = fwdprobe.make_offsets(100, 1 << 20, 7)
        self.assertEqual(srt, [k << 20 for k in range(100)])
        self.assertEqual(sorted(shf), srt)
        self.assertNotEqual(shf, srt)
        self.assertEqual(fwdprobe.make_offsets(100, 1 << 20, 7)[1], shf)
        self.assertNotEqual(fwdprobe.make_offsets(100, 1 << 20, 8)[1], shf)

    def test_deltas(self):
        run = fwdprobe.run_pass(lambda off: 5, [0, 8192, 4096], 4096)
        self.assertEqual(run, [(0, None, 5), (8192, 4096, 5), (4096, -8192, 5)])
        run = fwdprobe.run_pass(lambda off: 5, [4096], 4096, prev_end=4096)
        self.assertEqual(run[0][1], 0)

    def test_asymmetric_device(self):
        s, h = passes(FakeDevice(4096, 1000, 4000))
        r = fwdprobe.analyse(s, h)
        self.assertEqual(r["verdict"], "asymmetric")
        self.assertAlmostEqual(r["forward_over_backward"], 0.25)
        self.assertAlmostEqual(r["backward_over_forward"], 4.0)
        self.assertEqual(r["sorted"]["n"], 200)
        self.assertEqual(r["forward"]["n"] + r["backward"]["n"], 200)
        self.assertAlmostEqual(r["sorted"]["mean_us"], 1.0)   # all forward
        self.assertGreater(r["shuffled_over_sorted"], 1.0)

    def test_symmetric_device(self):
        r = fwdprobe.analyse(*passes(FakeDevice(4096, 1000, 1000)))
        self.assertEqual(r["verdict"], "symmetric")
        self.assertAlmostEqual(r["forward_over_backward"], 1.0)

    def test_reverse_device(self):
        r = fwdprobe.analyse(*passes(FakeDevice(4096, 3000, 1000)))
        self.assertEqual(r["verdict"], "reverse")

    def test_mean_alone_is_not_enough(self):
        # A few slow backward outliers raise the mean but not the median.
        def dev(off, state={"n": 0}):
            state["n"] += 1
            return 100000 if state["n"] % 50 == 0 else 1000
        r = fwdprobe.analyse(*passes(dev))
        self.assertEqual(r["verdict"], "symmetric")

    def test_too_few_samples(self):
        r = fwdprobe.analyse(*passes(FakeDevice(4096, 1000, 4000), count=8))
        self.assertEqual(r["verdict"], "inconclusive")

    def test_threshold(self):
        s, h = passes(FakeDevice(4096, 1000, 1500))
        self.assertEqual(fwdprobe.analyse(s, h, threshold=1.2)["verdict"], "asymmetric")
        self.assertEqual(fwdprobe.analyse(s, h, threshold=2.0)["verdict"], "symmetric")

    def test_report_text(self):
        r = fwdprobe.analyse(*passes(FakeDevice(4096, 1000, 4000)))
        r.update(count=200, stride=1 << 20, bytes=4096, direct=True, rounds=1, seed=1)
        text = fwdprobe.report("/dev/x", r)
        self.assertIn("forward/backward mean ratio: 0.250", text)
        self.assertIn("verdict: asymmetric", text)

    def test_parse_size(self):
        self.assertEqual([fwdprobe.parse_size(s) for s in ("4096", "64K", "1M", "1G", "2MiB")],
                         [4096, 65536, 1 << 20, 1 << 30, 2 << 20])
        with self.assertRaises(ValueError):
            fwdprobe.parse_size("1T")


class TestProbeOnFile(unittest.TestCase):
    """The probe loop on a regular file (the CLI refuses one; the library
    does not care)."""

    def setUp(self):
        fd, self.path = tempfile.mkstemp(prefix="fwdprobe-test-")
        os.write(fd, bytes(range(256)) * (64 * 4096 // 256))
        os.close(fd)

    def tearDown(self):
        os.unlink(self.path)

    def check(self, res, size):
        self.assertEqual((res["count"], res["bytes"], res["rounds"]), (64, size, 2))
        self.assertEqual(res["sorted"]["n"], 128)
        self.assertEqual(res["forward"]["n"] + res["backward"]["n"], 128)
        self.assertGreater(res["forward"]["n"], 0)
        self.assertGreater(res["backward"]["n"], 0)
        self.assertIn(res["verdict"], ("asymmetric", "symmetric", "reverse"))

    def test_buffered(self):
        fd = fwdprobe.open_device(self.path, direct=False)
        try:
            res = fwdprobe.probe_fd(fd, 64, 4096, 1, direct=False, rounds=2)
        finally:
            os.close(fd)
        self.check(res, 1)

    def test_direct(self):
        try:
            fd = fwdprobe.open_device(self.path, direct=True)
        except OSError as e:
            if e.errno == errno.EINVAL:
                self.skipTest("O_DIRECT not supported here")
            raise
        try:
            res = fwdprobe.probe_fd(fd, 64, 4096, 4096, direct=True, rounds=2)
        except OSError as e:
            if e.errno == errno.EINVAL:
                self.skipTest("O_DIRECT reads not supported here")
            raise
        finally:
            os.close(fd)
        self.check(res, 4096)

    def test_short_read_is_an_error(self):
        fd = fwdprobe.open_device(self.path, direct=False)
        try:
            with self.assertRaises(OSError):
                fwdprobe.Reader(fd, 1, False)(64 * 4096)
        finally:
            os.close(fd)

    def test_opens_read_only(self):
        fd = fwdprobe.open_device(self.path, direct=False)
        try:
            with self.assertRaises(OSError) as cm:
                os.write(fd, b"x")
            self.assertEqual(cm.exception.errno, errno.EBADF)
        finally:
            os.close(fd)


class TestRefusal(unittest.TestCase):
    """Fake block-device nodes 250:0 (disk) and 250:1 (its partition), with
    a fake sysfs, checked against fake mount tables."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.disk, cls.part = os.path.join(d, "fakedisk"), os.path.join(d, "fakedisk1")
        try:
            os.mknod(cls.disk, 0o600 | 0o060000, os.makedev(250, 0))
            os.mknod(cls.part, 0o600 | 0o060000, os.makedev(250, 1))
            cls.part2 = os.path.join(d, "fakedisk2")
            os.mknod(cls.part2, 0o600 | 0o060000, os.makedev(250, 2))
        except (PermissionError, OSError) as e:
            cls.tmp.cleanup()
            raise unittest.SkipTest("cannot create device nodes: %s" % e)
        cls.sysfs = os.path.join(d, "sys")
        disk = os.path.join(cls.sysfs, "devices", "fakedisk")
        os.makedirs(os.path.join(disk, "fakedisk1"))
        os.makedirs(os.path.join(disk, "holders"))
        os.makedirs(os.path.join(disk, "fakedisk1", "holders"))
        with open(os.path.join(disk, "dev"), "w") as f:
            f.write("250:0\n")
        with open(os.path.join(disk, "fakedisk1", "dev"), "w") as f:
            f.write("250:1\n")
        with open(os.path.join(disk, "fakedisk1", "partition"), "w") as f:
            f.write("1\n")
        os.makedirs(os.path.join(disk, "fakedisk2"))
        with open(os.path.join(disk, "fakedisk2", "dev"), "w") as f:
            f.write("250:2\n")
        with open(os.path.join(disk, "fakedisk2", "partition"), "w") as f:
            f.write("2\n")
        os.makedirs(os.path.join(cls.sysfs, "dev", "block"))
        os.symlink(disk, os.path.join(cls.sysfs, "dev", "block", "250:0"))
        os.symlink(os.path.join(disk, "fakedisk1"),
                   os.path.join(cls.sysfs, "dev", "block", "250:1"))
        os.symlink(os.path.join(disk, "fakedisk2"),
                   os.path.join(cls.sysfs, "dev", "block", "250:2"))
        cls.holders = os.path.join(disk, "fakedisk1", "holders")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def reason(self, path, mounts="", swaps="Filename Type\n", root_dev=0):
        return fwdprobe.in_use_reason(path, mounts=mounts, swaps=swaps, root_dev=root_dev,
                                      sysfs=self.sysfs)

    def test_whole_disk(self):
        self.assertEqual(fwdprobe.whole_disk(os.makedev(250, 1), self.sysfs),
                         os.makedev(250, 0))
        self.assertEqual(fwdprobe.whole_disk(os.makedev(250, 0), self.sysfs),
                         os.makedev(250, 0))

    def test_unmounted_is_allowed(self):
        self.assertIsNone(self.reason(self.disk, "/dev/vda / ext4 rw 0 0\nproc /proc proc rw 0 0\n"))
        self.assertIsNone(self.reason(self.part))

    def test_mounted_device(self):
        r = self.reason(self.disk, "%s /mnt/card vfat rw 0 0\n" % self.disk)
        self.assertIn("is mounted", r)
        self.assertIn("/mnt/card", r)

    def test_mounted_partition_refuses_disk(self):
        r = self.reason(self.disk, "%s /mnt/x ext4 rw 0 0\n" % self.part)
        self.assertIn("is mounted (%s on /mnt/x)" % self.part, r)

    def test_mounted_disk_refuses_partition(self):
        self.assertIn("is mounted", self.reason(self.part, "%s /m ext4 rw 0 0\n" % self.disk))

    def test_mounted_sibling_partition(self):
        self.assertIn("is mounted", self.reason(self.part2, "%s /m ext4 rw 0 0\n" % self.part))

    def test_other_disk_mounted_is_allowed(self):
        self.assertIsNone(self.reason(self.part, "/dev/null /m ext4 rw 0 0\n"))

    def test_escaped_mount_point(self):
        r = self.reason(self.disk, "%s /mnt/my\\040card vfat rw 0 0\n" % self.part)
        self.assertIn("/mnt/my card", r)

    def test_root_device(self):
        self.assertIn("root file system", self.reason(self.disk, root_dev=os.makedev(250, 1)))

    def test_swap(self):
        r = self.reason(self.disk, swaps="Filename Type Size Used Priority\n"
                        "%s partition 1024 0 -2\n" % self.part)
        self.assertIn("swap", r)

    def test_holders(self):
        p = os.path.join(self.holders, "dm-0")
        os.mkdir(p)
        try:
            self.assertIn("held by dm-0", self.reason(self.disk))
            self.assertIn("held by dm-0", self.reason(self.part))
        finally:
            os.rmdir(p)

    def test_cli_refuses_mounted(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = fwdprobe.main([self.disk], mounts="%s / ext4 rw 0 0\n" % self.part,
                               swaps="", root_dev=0, sysfs=self.sysfs)
        self.assertEqual(rc, 2)
        self.assertIn("refusing: %s is mounted" % self.disk, err.getvalue())


class TestCliRefusal(unittest.TestCase):
    def test_regular_file(self):
        with tempfile.NamedTemporaryFile() as f:
            rc, out, err = run_cli(f.name)
        self.assertEqual(rc, 2)
        self.assertIn("not a block device", err)
        self.assertEqual(out, "")

    def test_missing(self):
        rc, _, err = run_cli("/dev/does-not-exist-fwdprobe")
        self.assertEqual(rc, 2)
        self.assertIn("/dev/does-not-exist-fwdprobe", err)

    def test_write_options(self):
        for opt in ("--write", "-w", "--rw=randrw", "--randwrite", "--trim"):
            rc, _, err = run_cli(opt, "/dev/null")
            self.assertEqual(rc, 2, opt)
            self.assertIn("refusing %s" % opt.split("=")[0] if "=" not in opt else "refusing",
                          err)
            self.assertIn("only reads", err)

    def test_bad_options(self):
        for args in (["--bogus", "/dev/null"], ["-n", "1", "/dev/null"], [],
                     ["--stride", "1T", "/dev/null"], ["a", "b"], ["--count"]):
            rc, _, err = run_cli(*args)
            self.assertEqual(rc, 2, args)
            self.assertIn("fwdprobe:", err)


if __name__ == "__main__":
    unittest.main()
