#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of the benchmark's statistics (benchstats.py) on known data."""

import os
import random
import sys
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)

import benchstats as bs  # noqa: E402


class Interval(unittest.TestCase):

    def test_median(self):
        self.assertEqual(bs.median([3, 1, 2]), 2)
        self.assertEqual(bs.median([4, 1, 3, 2]), 2.5)
        self.assertEqual(bs.median([None, 5]), 5)
        self.assertIsNone(bs.median([]))

    def test_coverage_of_min_max(self):
        # [min, max] covers the median unless all n values fall on one
        # side: 1 - 2 / 2^n
        for n, c in ((2, 0.5), (3, 0.75), (4, 0.875), (5, 0.9375),
                     (6, 0.96875)):
            self.assertAlmostEqual(bs.coverage(n, 1), c)
            self.assertEqual(bs.order_k(n), 1)
        # from 9 values the second smallest and second largest suffice
        self.assertEqual(bs.order_k(9), 2)
        self.assertAlmostEqual(bs.coverage(9, 2), 1 - 2 * 10 / 512)
        self.assertLess(bs.coverage(9, 3), 0.95)
        for n in range(6, 40):
            k = bs.order_k(n)
            self.assertGreaterEqual(bs.coverage(n, k), 0.95, n)
            if k + 1 <= (n + 1) // 2:
                self.assertLess(bs.coverage(n, k + 1), 0.95, n)

    def test_interval_on_known_data(self):
        iv = bs.interval([1.2, 1.0, 1.1])
        self.assertEqual((iv["n"], iv["median"], iv["lo"], iv["hi"]),
                         (3, 1.1, 1.0, 1.2))
        self.assertAlmostEqual(iv["coverage"], 0.75)
        iv = bs.interval([9, 1, 2, 3, 4, 5, 6, 7, 8])
        self.assertEqual((iv["median"], iv["lo"], iv["hi"]), (5, 2, 8))
        iv = bs.interval([7])
        self.assertEqual((iv["n"], iv["lo"], iv["hi"], iv["coverage"]),
                         (1, 7, 7, None))
        self.assertEqual(bs.interval([])["n"], 0)

    def test_interval_coverage_by_simulation(self):
        # the stated coverage is what one gets: 7 rounds, 98.4 %
        rnd = random.Random(12)
        hit = 0
        for _ in range(4000):
            iv = bs.interval([rnd.gauss(0, 1) for _ in range(7)])
            hit += iv["lo"] <= 0 <= iv["hi"]
        self.assertAlmostEqual(hit / 4000, bs.coverage(7, 1), delta=0.01)

    def test_paired_ratios(self):
        num = {1: 110, 2: 120, 3: 100, 4: 50}
        den = {1: 100, 2: 100, 3: 100, 5: 100}
        self.assertEqual(bs.paired_ratios(num, den), {1: 1.1, 2: 1.2, 3: 1.0})
        self.assertEqual(bs.paired_ratios({1: 5}, {1: 0}), {})
        iv = bs.ratio_interval(num, den)
        self.assertEqual((iv["median"], iv["lo"], iv["hi"]), (1.1, 1.0, 1.2))
        self.assertEqual(iv["rounds"], {1: 1.1, 2: 1.2, 3: 1.0})


class Verdicts(unittest.TestCase):

    def iv(self, lo, hi, n=3):
        return dict(n=n, median=(lo + hi) / 2, lo=lo, hi=hi, coverage=0.75)

    def test_no_difference(self):
        self.assertEqual(bs.difference(self.iv(0.95, 1.08)), "no difference")
        self.assertEqual(bs.difference(self.iv(1.0, 1.2)), "no difference")
        self.assertEqual(bs.difference(self.iv(1.01, 1.2)), "higher")
        self.assertEqual(bs.difference(self.iv(0.8, 0.99)), "lower")
        self.assertIsNone(bs.difference(self.iv(1.1, 1.1, n=1)))
        self.assertEqual(bs.fmt_ratio(self.iv(0.95, 1.05)),
                         "no difference [0.95, 1.05]")
        self.assertEqual(bs.fmt_ratio(bs.interval([1.1, 1.2, 1.3])),
                         "1.20 [1.10, 1.30]")
        self.assertEqual(bs.fmt_ratio(bs.interval([1.1])), "1.10")
        self.assertEqual(bs.fmt_ratio(None), "n/a")

    def test_judge(self):
        j = bs.judge
        self.assertEqual(j(self.iv(1.12, 1.3), ">=", 1.1), "met")
        self.assertEqual(j(self.iv(1.1, 1.3), ">=", 1.1), "met")
        self.assertEqual(j(self.iv(1.0, 1.3), ">=", 1.1), "unresolved")
        self.assertEqual(j(self.iv(0.8, 1.05), ">=", 1.1), "missed")
        self.assertEqual(j(self.iv(1.0, 1.3), ">", 1.0), "unresolved")
        self.assertEqual(j(self.iv(0.9, 1.0), ">", 1.0), "missed")
        self.assertEqual(j(self.iv(1.2, 1.4), "<=", 1.5), "met")
        self.assertEqual(j(self.iv(1.3, 1.6), "<=", 1.5), "unresolved")
        self.assertEqual(j(self.iv(1.6, 2.0), "<=", 1.5), "missed")
        self.assertEqual(j(self.iv(1.6, 2.0), "<", 1.6), "missed")
        # "includes or exceeds": met as soon as the interval reaches it
        self.assertEqual(j(self.iv(0.95, 0.99), ">=", 0.97, "reaches"), "met")
        self.assertEqual(j(self.iv(0.99, 1.2), ">=", 0.97, "reaches"), "met")
        self.assertEqual(j(self.iv(0.90, 0.96), ">=", 0.97, "reaches"), "missed")
        self.assertIsNone(j(dict(n=0, lo=None, hi=None), ">=", 1))
        for bad in (("=", "interval"), (">=", "sometimes")):
            with self.assertRaises(ValueError):
                j(self.iv(1, 2), bad[0], 1, bad[1])


if __name__ == "__main__":
    unittest.main()
