#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of the two-process frontier simulator (frontier.py): the
model's behaviour on the cards it is given, the time mix it solves, its
agreement with the job files, determinism, and its refusal of bad input."""

import configparser
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import frontier as fr  # noqa: E402

# fewer commands than the default: these tests compare policies that
# differ by far more than the noise of 3,000 commands
KW = {"commands": 3000, "warmup": 300}
CARDS = ("paper", "symmetric", "fig56")
SHAPES = ("same", "apart")


def points(card, shape):
    return fr.frontier(card, shape, **KW)["points"]


def point(card, shape, name):
    return fr.policy_point(card, shape, name, **KW)


class Frontier(unittest.TestCase):

    def test_covers_every_point_and_falls_with_share(self):
        for card in CARDS:
            for shape in SHAPES:
                pts = points(card, shape)
                for metric in fr.METRICS:
                    attr = metric + "_iops"
                    for p in pts:
                        # any policy with at least share s bounds it below
                        for s in (0.0, p.share / 2, p.share):
                            self.assertGreaterEqual(
                                fr.frontier_iops(card, shape, s, metric, **KW),
                                getattr(p, attr) * (1 - 1e-9),
                                (card, shape, metric, p.policy, s))
                    grid = [k / 10 for k in range(13)]
                    vals = [fr.frontier_iops(card, shape, s, metric, **KW)
                            for s in grid]
                    for a, b in zip(vals, vals[1:]):
                        self.assertLessEqual(b, a * (1 + 1e-9), (card, shape, vals))
                    # and it is not simply the best point everywhere
                    self.assertLess(vals[-1], vals[0], (card, shape, metric))

    def test_policies_span_the_shares(self):
        for card in CARDS:
            for shape in SHAPES:
                shares = [p.share for p in points(card, shape)]
                self.assertLess(min(shares), 0.05, (card, shape))
                self.assertGreater(max(shares), 0.95, (card, shape))

    def test_sweep_gains_where_forward_is_cheap(self):
        # C-LOOK against arrival order: a gain on every card (shorter
        # jumps), and a larger one on paper, whose forward jumps cost an
        # eighth of its backward ones, than on symmetric
        gain = {}
        for card in ("paper", "symmetric"):
            cl = point(card, "same", "c-look").device_iops
            fifo = point(card, "same", "fifo").device_iops
            self.assertGreater(cl, fifo, card)
            gain[card] = cl / fifo
        self.assertGreater(gain["paper"], gain["symmetric"] * 1.2, gain)
        # and the same sweep costs less per command on paper
        self.assertGreater(point("paper", "same", "c-look").device_iops,
                           point("symmetric", "same", "c-look").device_iops)

    def test_serving_the_sync_reader_costs_the_sweep(self):
        for card in CARDS:
            for shape in SHAPES:
                cl = point(card, shape, "c-look")
                now = point(card, shape, "sync at once, continue")
                back = point(card, shape, "sync at once, return")
                never = point(card, shape, "sync never, continue")
                self.assertGreater(now.share, cl.share + 0.3, (card, shape))
                self.assertLess(now.device_iops, cl.device_iops, (card, shape))
                self.assertEqual(never.sync_iops, 0)
                self.assertEqual(never.share, 0)
                # apart, a return to the sweep is a second long jump a read
                if shape == "apart":
                    self.assertLess(back.device_iops, cl.device_iops)

    def test_waits(self):
        for card in CARDS:
            for shape in SHAPES:
                pts = {p.policy: p for p in points(card, shape)}
                deep = 1e6 / pts["c-look"].deep_iops
                par = fr.card_params(card)
                longest = par["base_us"] + max(par["fwd_us"], par["back_us"]) + \
                    par["xfer_us_per_kb"] * fr.BS / 1024
                # the oracle idles for the synchronous read: it never waits
                for name, p in pts.items():
                    if name.startswith("oracle fill, slack 0"):
                        self.assertEqual(p.queue_us, 0, (card, shape, name))
                # served at once it waits for the rest of the deep read in
                # service, never longer than a command can take
                now = pts["sync at once, continue"]
                self.assertGreater(now.queue_us, 0)
                self.assertLess(now.queue_us, longest, (card, shape))
                # mq-deadline makes it wait for several
                self.assertGreater(pts["mq-deadline"].queue_us, 3 * deep,
                                   (card, shape))
                self.assertGreater(pts["mq-deadline"].wait_x_alone,
                                   2 * now.wait_x_alone, (card, shape))

    def test_device_iops_counts_idling(self):
        idlers = 0
        for p in points("paper", "same"):
            if p.policy.startswith(("oracle fill, slack 0", "slices")):
                self.assertGreater(p.idle_fraction, 0.01, p.policy)
                idlers += 1
            elif not p.policy.startswith("oracle"):
                self.assertEqual(p.idle_fraction, 0, p.policy)
            # with no host cost, device time is the elapsed time: the
            # time a policy idles counts against it
            self.assertAlmostEqual(p.device_fraction, 1.0, places=9)
            self.assertAlmostEqual(p.device_iops, p.total_iops,
                                   delta=1e-6 * p.total_iops)
        self.assertGreater(idlers, 4)
        shape = fr.make_shape("same", 1000, 500)
        for p in fr.frontier("paper", shape, **KW)["points"]:
            # a host cost: the elapsed time is longer than the device time
            self.assertLess(p.device_fraction, 0.9, p.policy)
            self.assertGreater(p.device_iops, p.total_iops, p.policy)

    def test_host_cost_raises_the_ratio_of_totals(self):
        # a cost every command pays dilutes the order's effect on the
        # elapsed time, so the frontier's total comes closer to
        # mq-deadline's (the 0.65 -> 0.88 on paper)
        r = {}
        for emu in (0, 1600):
            shape = fr.make_shape("same", 1000, emu)
            dd = fr.policy_point("paper", shape, "mq-deadline", **KW)
            best = fr.frontier_iops("paper", shape, 0.9, "total", **KW)
            r[emu] = best / dd.total_iops
        self.assertGreater(r[1600], r[0] + 0.1, r)

    def test_judged_share(self):
        for card in CARDS:
            for shape in SHAPES:
                f = fr.frontier(card, shape, **KW)
                fair = f["fair_share"]
                # the policies that serve the deep reader its share reach
                # about the synchronous reader's own (0.85 to 1.05 here)
                self.assertGreater(fair, 0.8, (card, shape))
                self.assertLess(fair, f["max_share"], (card, shape))
                for p in f["points"]:
                    if p.deep_share is not None and \
                            p.deep_share >= 1 - fr.FAIR_TOLERANCE:
                        self.assertLessEqual(p.share, fair)
                self.assertEqual(fr.judged_share(card, shape, 0.5, **KW), 0.5)
                self.assertEqual(fr.judged_share(card, shape, 1.9, **KW), fair)
                # starving the deep reader does not lower the bar
                top = f["max_share"]
                self.assertGreater(fr.frontier_iops(card, shape, fair, **KW),
                                   fr.frontier_iops(card, shape, top, **KW))

    def test_deterministic(self):
        a = fr.frontier("paper", "apart", **KW)["points"]
        fr._frontier.cache_clear()
        b = fr.frontier("paper", "apart", **KW)["points"]
        self.assertEqual(a, b)
        c = fr.frontier("paper", "apart", seed=7, **KW)["points"]
        self.assertNotEqual(a, c)
        # a spec and the parameter dict it names are the same card
        d = fr.frontier(fr.card_params("paper"), "apart", **KW)["points"]
        self.assertEqual(a, d)
        e = fr.frontier("paper,back_us=2400", "apart", **KW)["points"]
        self.assertNotEqual(a, e)


class Mix(unittest.TestCase):
    """best_of() on points whose mixes are worked out by hand.  The
    synchronous reader alone: 100 IOPS."""

    @staticmethod
    def pt(name, sync, deep, device_fraction=1.0):
        total = sync + deep
        share = sync / min(100, total / 2)
        return fr.Point(name, share, total / device_fraction, total, sync,
                        deep, device_fraction, 0.0, None, None, None)

    def test_mix_of_two(self):
        a = self.pt("sweep", 0, 1000)           # share 0
        b = self.pt("serve", 100, 300)          # share 1
        pts = [a, b]
        # share 0.5: sync 100 lam' >= 50 with lam' the time under b;
        # total 1000 - 600 lam' at lam' = 0.5: 700
        v, i, j, lam = fr.best_of(pts, 100, 0.5)
        self.assertAlmostEqual(v, 700, places=3)
        self.assertEqual({pts[i].policy, pts[j].policy}, {"sweep", "serve"})
        self.assertAlmostEqual(lam if pts[i] is a else 1 - lam, 0.5)
        # not the straight segment: its 0.5 is 0.5 * 1000 + 0.5 * 400
        self.assertAlmostEqual(fr.best_of(pts, 100, 0)[0], 1000)
        self.assertAlmostEqual(fr.best_of(pts, 100, 1)[0], 400, places=3)
        self.assertIsNone(fr.best_of(pts, 100, 1.5))

    def test_share_capped_at_half_the_total(self):
        # c serves only the synchronous reader: share 2 (half of a total
        # of 100 is 50), with idling: device time half the elapsed time
        a = self.pt("sweep", 0, 1000)
        c = self.pt("alone", 100, 0, device_fraction=0.5)
        # share 0.9 of a mix: sync 100 m >= 0.9 min(100, (1000 - 900 m) / 2)
        # -> 100 m >= 450 - 405 m -> m = 450 / 505; device IOPS =
        # (1000 - 900 m) / (1 - 0.5 m)
        m = 450 / 505
        v = fr.best_of([a, c], 100, 0.9)[0]
        self.assertAlmostEqual(v, (1000 - 900 * m) / (1 - 0.5 * m), places=3)
        # the total: no division by device time
        self.assertAlmostEqual(fr.best_of([a, c], 100, 0.9, "total")[0],
                               1000 - 900 * m, places=3)


class JobFiles(unittest.TestCase):
    """The simulated regions and depth are the job files'."""

    def job(self, name):
        cp = configparser.ConfigParser(strict=False, interpolation=None,
                                       allow_no_value=True)
        with open(os.path.join(TOP, "fio-jobs", name + ".fio")) as f:
            cp.read_string("".join(line for line in f if not line.startswith("#")))
        return cp

    def size(self, text):
        units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
        t = text.strip().lower()
        return int(t[:-1]) * units[t[-1]] if t[-1] in units else int(t)

    def test_regions(self):
        for shape, name in (("same", "async-vs-sync-2proc"),
                            ("apart", "async-vs-sync-2proc-apart")):
            cp = self.job(name)
            for proc, sect in (("deep", "async"), ("sync", "sync")):
                s = dict(cp["global"])
                s.update(cp[sect])
                region = (self.size(s.get("offset", "0")), self.size(s["size"]))
                self.assertEqual(region, fr.REGIONS[shape][proc], (name, sect))
                self.assertEqual(self.size(s["bs"]), fr.BS)
                self.assertEqual(s["rw"], "randread")
            self.assertEqual(int(cp["async"]["iodepth"]), fr.DEEP_DEPTH)
            self.assertEqual(cp["async"]["ioengine"], "libaio")
            self.assertEqual(int(cp["sync"]["iodepth"]), 1)
            self.assertEqual(cp["sync"]["ioengine"], "psync")


class Input(unittest.TestCase):

    def cli(self, *args):
        return subprocess.run([sys.executable, os.path.join(HERE, "frontier.py")] +
                              list(args), capture_output=True, text=True)

    def test_library_refuses(self):
        for args in ((("nope", "same", 0.5)), ("paper", "sideways", 0.5),
                     ("paper", "same", -0.1), ("paper", "same", float("nan")),
                     ("paper", "same", "x"), ("paper,back_us=-1", "same", 0.5),
                     ("paper,back_us", "same", 0.5), ({"base_us": 1}, "same", 0.5)):
            with self.assertRaises(fr.FrontierError, msg=args):
                fr.frontier_iops(*args, **KW)
        with self.assertRaises(fr.FrontierError):
            fr.make_shape("same", think_us=-1)
        with self.assertRaises(fr.FrontierError):
            fr.make_shape("same", emu_us="fast")
        with self.assertRaises(fr.FrontierError):
            fr.frontier_iops("paper", "same", 0.5, "wall", **KW)

    def test_cli(self):
        r = self.cli("--card", "paper", "--shape", "same", "--share", "0.7")
        self.assertEqual(r.returncode, 0, r.stderr)
        want = fr.frontier_iops("paper", "same", 0.7)
        self.assertIn("frontier at share 0.7: %.0f modelled device IOPS" % want,
                      r.stdout)
        self.assertIn("frontier (share,", r.stdout)
        for args, what in (
                (["--card", "paper", "--shape", "same", "--share", "lots"],
                 "--share: 'lots' is not a number"),
                (["--card", "paper", "--shape", "same"], "--share is required"),
                (["--card", "papier", "--shape", "same", "--share", "1"],
                 "card 'papier': preset='papier': unknown preset"),
                (["--card", "paper", "--shape", "near", "--share", "1"],
                 "shape 'near': unknown"),
                (["--card", "paper", "--shape", "same", "--share", "1", "-x"],
                 "-x: unknown option"),
                (["--card", "paper", "--shape", "same", "--share", "1",
                  "--think-us", "-5"], "think_us: -5 is outside"),
                (["--card", "paper", "--shape", "same", "--share"],
                 "--share needs a value")):
            r = self.cli(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("frontier: " + what, r.stderr, args)
            self.assertEqual(r.stdout, "", args)


if __name__ == "__main__":
    unittest.main()
