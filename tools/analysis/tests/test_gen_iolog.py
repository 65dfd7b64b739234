# SPDX-License-Identifier: GPL-2.0
"""Unit tests of tools/analysis/gen-iolog.py (the Fig 2 shuffle iolog generator)."""

import importlib.machinery
import importlib.util
import io
import os
import tempfile
import unittest
from contextlib import redirect_stderr

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = os.path.join(HERE, "..", "..", "fio-jobs", "fig2-shuffle.iolog")


def _load():
    path = os.path.join(HERE, "gen-iolog.py")
    loader = importlib.machinery.SourceFileLoader("gen_iolog", path)
    spec = importlib.util.spec_from_loader("gen_iolog", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


gen = _load()


class GenIologTest(unittest.TestCase):

    def run_main(self, *argv):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "x.iolog")
            gen.main(list(argv) + ["-o", out])
            with open(out, "rb") as f:
                return f.read()

    def test_defaults_reproduce_shipped_file(self):
        with open(SHIPPED, "rb") as f:
            self.assertEqual(self.run_main(), f.read())

    def test_shuffle_is_a_permutation(self):
        for seed in (0, 1, 20130117, 2 ** 64 - 1):
            idx = gen.order(1024, seed)
            self.assertEqual(sorted(idx), list(range(1024)))
            self.assertNotEqual(idx, list(range(1024)))

    def test_seed_decides_order(self):
        self.assertEqual(gen.order(100, 7), gen.order(100, 7))
        self.assertNotEqual(gen.order(100, 7), gen.order(100, 8))

    def test_sort_is_ascending(self):
        self.assertEqual(gen.order(50, 3, shuffle=False), list(range(50)))

    def test_format(self):
        text = gen.iolog("/dev/x", [2, 0], 1 << 20, 1)
        self.assertEqual(text, "fio version 2 iolog\n/dev/x add\n"
                         "/dev/x open\n/dev/x read 2097152 1\n"
                         "/dev/x read 0 1\n/dev/x close\n")

    def test_bad_arguments_leave_output_alone(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "keep")
            with open(out, "w") as f:
                f.write("old")
            for argv in (["--count", "0"], ["--length", "9", "--stride", "8"],
                         ["--seed", "-1"], ["--device", ""],
                         ["--order", "up"]):
                with redirect_stderr(io.StringIO()) as err, \
                        self.assertRaises(SystemExit) as cm:
                    gen.main(argv + ["-o", out])
                self.assertNotEqual(cm.exception.code, 0, argv)
                self.assertIn("gen-iolog", err.getvalue(), argv)
            with open(out) as f:
                self.assertEqual(f.read(), "old")


if __name__ == "__main__":
    unittest.main()
