#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests for tools/analysis/splats.py on the samples in
testdata/splats/: a recorded console of a clean debug-kernel run passes
every checker; each report fails its own checker and no other, alone and
in the middle of that console; the command's own output, which shares the
console, is never taken for the kernel's; kmemleak and lockdep's state
are judged from their files."""
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import splats  # noqa: E402

DATA = os.path.join(os.path.dirname(HERE), "testdata", "splats")

# Each sample and the checkers it must fail.  The panic that
# panic_on_warn makes of a report is not a report of its own.
SAMPLES = {
    "lockdep-irq-unsafe.console": {"lockdep"},
    "lockdep-circular.console": {"lockdep"},
    "lockdep-off.console": {"lockdep"},
    "kasan-uaf.console": {"kasan"},
    "ubsan-shift.console": {"ubsan"},
    "atomic-sleep.console": {"atomic-sleep"},
    "list-corruption.console": {"list-corruption"},
    "kfence-uaf.console": {"kfence"},
    "odebug-timer.console": {"debug-objects"},
    "hung-task.console": {"hung-task"},
    "rcu-stall.console": {"hung-task"},
    "softlockup-recorded.console": {"hung-task"},
    "warn.console": {"warn-oops-panic"},
}
# A recorded run of tools/check-debug with no splat.
CLEAN = "clean-6.12-debug.console"


def data(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


def run(console, *extra):
    """splats.main on CONSOLE (text) and the extra (option, text) files
    (text None: the file is missing).  Returns (exit status, the names of
    the failed checkers, the KTAP)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "console")
        with open(path, "w") as f:
            f.write(console)
        args = ["--name", "k", path]
        for i, (opt, text) in enumerate(extra):
            p = os.path.join(tmp, f"{opt.strip('-')}.{i}")
            if text is not None:
                with open(p, "w") as f:
                    f.write(text)
            args += [opt, p]
        buf = io.StringIO()
        with redirect_stdout(buf):
            rc = splats.main(args)
    out = buf.getvalue()
    failed = {ln.split()[3].split(".", 2)[2] for ln in out.splitlines()
              if ln.startswith("not ok ")}
    return rc, failed, out


def header(sample):
    """The first kernel message of a sample that names its checker."""
    for line in sample.splitlines():
        msg = splats.message(line)
        if msg and any(p.search(msg) for _, p in splats.CHECKERS + splats.CHECKER_OFF):
            return msg
    raise AssertionError("no header in the sample")


class TestSplats(unittest.TestCase):
    def test_recorded_clean_console_passes(self):
        console = data(CLEAN)
        # It is a whole run: boot, the suite's KTAP, kmemleak's scans.
        self.assertIn("Lock dependency validator", console)
        self.assertIn("KernelAddressSanitizer initialized", console)
        self.assertRegex(console, r"\nok 1 load\.mmc ")
        rc, failed, out = run(console)
        self.assertEqual((rc, failed), (0, set()), out)
        self.assertIn(f"1..{len(splats.CHECKERS)}", out)

    def test_each_sample_fails_its_checker_only(self):
        clean = data(CLEAN).splitlines(keepends=True)
        middle = len(clean) // 2
        for name, want in SAMPLES.items():
            sample = data(name)
            for where, console in (
                    ("alone", sample),
                    ("in a run", "".join(clean[:middle]) + sample
                     + "".join(clean[middle:]))):
                with self.subTest(sample=name, where=where):
                    rc, failed, out = run(console)
                    self.assertEqual((rc, failed), (1, want), out)
                    # The report itself is shown, as a KTAP comment.
                    self.assertIn("# " + header(sample), out)

    def test_command_output_is_not_the_kernel(self):
        # The samples without their time stamps, as if a test had printed
        # them: not the kernel's.
        text = "".join(
            splats.message(ln) + "\n" if splats.message(ln) is not None else ln
            for name in SAMPLES for ln in data(name).splitlines(keepends=True))
        self.assertIn("BUG: KASAN: slab-use-after-free", text)
        rc, failed, out = run(data(CLEAN) + text)
        self.assertEqual((rc, failed), (0, set()), out)

    def test_kernel_line_after_command_output(self):
        # The serial console interleaves the two: a kernel line may start
        # in the middle of a line of the command's output.
        line = "ok 3 load.scsi (6 s)[  141.208329] WARNING: inconsistent lock state\r\n"
        rc, failed, _ = run(data(CLEAN) + line)
        self.assertEqual((rc, failed), (1, {"lockdep"}))

    def test_lockdep_still_on(self):
        stats = " lock-classes:                         1652 [max: 8192]\n"
        rc, failed, _ = run(data(CLEAN), ("--debug-locks", stats + " debug_locks:                             1\n"))
        self.assertEqual((rc, failed), (0, set()))
        rc, failed, out = run(data(CLEAN), ("--debug-locks", stats + " debug_locks:                             0\n"))
        self.assertEqual((rc, failed), (1, {"lockdep-on"}))
        self.assertIn("# lockdep turned itself off", out)
        rc, failed, _ = run(data(CLEAN), ("--debug-locks", None))
        self.assertEqual((rc, failed), (1, {"lockdep-on"}))

    def test_kmemleak_after_the_unload(self):
        rc, failed, out = run(data(CLEAN), ("--kmemleak", ""))
        self.assertEqual((rc, failed), (0, set()), out)
        self.assertIn(f"1..{len(splats.CHECKERS) + 1}", out)

        # Two leaked objects: two reports, with the raw addresses the
        # unloaded module's functions have become.
        unloaded = data("kmemleak-unloaded.txt")
        rc, failed, out = run(data(CLEAN), ("--kmemleak", unloaded))
        self.assertEqual((rc, failed), (1, {"kmemleak"}))
        self.assertRegex(out, r"not ok \d+ splats\.k\.kmemleak # 2 reports")
        self.assertIn("#     0xffffffffc0a10ad4", out)

        # The report taken before the unload names them.
        rc, failed, out = run(data(CLEAN), ("--kmemleak", unloaded),
                              ("--kmemleak-loaded", data("kmemleak-fwdsched.txt")))
        self.assertEqual((rc, failed), (1, {"kmemleak"}))
        self.assertRegex(out, r"# 2 reports")
        self.assertIn("#     fwd_owner_enqueue+0x1d4/0x4a0 [fwdsched]", out)
        self.assertNotIn("0xffffffffc0a10ad4", out)

        # What was unreferenced before the unload but freed by it is no leak.
        rc, failed, _ = run(data(CLEAN), ("--kmemleak", ""),
                            ("--kmemleak-loaded", data("kmemleak-fwdsched.txt")))
        self.assertEqual((rc, failed), (0, set()))

    def test_kmemleak_missing_or_off(self):
        rc, failed, out = run(data(CLEAN), ("--kmemleak", None))
        self.assertEqual((rc, failed), (1, {"kmemleak"}))
        self.assertIn("# no kmemleak report", out)
        off = "[  611.000123] kmemleak: Kernel memory leak detector disabled\n"
        rc, failed, _ = run(data(CLEAN) + off, ("--kmemleak", ""))
        self.assertEqual((rc, failed), (1, {"kmemleak"}))

    def test_empty_or_missing_console_fails(self):
        rc, failed, _ = run("")
        self.assertEqual((rc, failed), (1, {"console"}))
        rc, failed, _ = run("\n")
        self.assertEqual((rc, failed), (1, {"console"}))


if __name__ == "__main__":
    unittest.main()
