#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of the benchmark's plan (benchplan.py), of the guest's reading of
it (tools/guest/benchrun.py), and of the job files the plan runs: they
parse with the plan's arguments and keep out of the flash card's control
window."""

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "tools", "flashcard"))
sys.path.insert(0, os.path.join(TOP, "tools", "guest"))

import appstart  # noqa: E402
import benchplan  # noqa: E402
import benchrun  # noqa: E402
import costmodel  # noqa: E402

JOBS = os.path.join(TOP, "fio-jobs")
CARD_BYTES = 4 << 30            # the card tools/runner/vm-run makes
FIXED = dict(host={}, git={"commit": "x", "dirty": False})


def plan(**env):
    return benchplan.make_plan(env, **FIXED)


def all_runs(p):
    return [r for b in p["boots"] for r in b["runs"]]


class Settings(unittest.TestCase):

    def test_defaults(self):
        # the default plan: one card on one transport, the three
        # experiments that answer "is fwdsched better here?"
        s = benchplan.settings_from_env({})
        self.assertEqual(s["plan"], "default")
        self.assertEqual(s["kernels"], ["6.12"])
        self.assertEqual(s["cards"], ["paper"])
        self.assertEqual(s["schedulers"],
                         ["none", "mq-deadline", "kyber", "bfq", "fwdsched"])
        self.assertGreaterEqual(s["rounds"], 6)
        self.assertEqual(s["experiments"], ["headline", "twoproc", "responsiveness"])
        self.assertEqual(benchplan.settings_from_env({"BENCH_FULL": "0"}), s)

    def test_full(self):
        # make bench FULL=1: the three cards on both transports, and the
        # papers' and null_blk experiments too
        s = benchplan.settings_from_env({"BENCH_FULL": "1"})
        self.assertEqual(s["plan"], "full")
        self.assertEqual(s["kernels"], ["6.12"])
        self.assertEqual(s["cards"], ["paper", "fig56", "symmetric",
                                      "paper,transport=ufs", "fig56,transport=ufs",
                                      "symmetric,transport=ufs"])
        self.assertEqual(s["experiments"], ["headline", "twoproc", "responsiveness",
                                            "fig2", "deep-nullb", "nullb-cpu"])
        self.assertGreaterEqual(s["rounds"], 6)
        # a setting given overrides the full plan's
        s = benchplan.settings_from_env({"BENCH_FULL": "1", "BENCH_CARDS": "fig56"})
        self.assertEqual((s["plan"], s["cards"]), ("full", ["fig56"]))
        p = plan(BENCH_FULL="1")
        self.assertEqual(p["plan"], "full")
        self.assertEqual(p["command"], "make bench FULL=1")
        self.assertEqual(plan(BENCH_FULL="1", BENCH_ROUNDS="7")["command"],
                         "BENCH_ROUNDS=7 make bench FULL=1")
        self.assertEqual([b["id"] for b in p["boots"]],
                         ["6.12-paper", "6.12-fig56", "6.12-symmetric",
                          "6.12-paper-ufs", "6.12-fig56-ufs", "6.12-symmetric-ufs",
                          "6.12-nullb", "6.12-nullb-cpu"])
        by = {b["id"]: b for b in p["boots"]}
        # the first card of each transport has the first-card experiments
        for bid in ("6.12-paper", "6.12-paper-ufs"):
            self.assertEqual({r["experiment"] for r in by[bid]["runs"]},
                             {"headline", "twoproc", "responsiveness", "fig2"})
        self.assertEqual({r["experiment"] for r in by["6.12-fig56-ufs"]["runs"]},
                         {"headline", "twoproc"})
        ufs = by["6.12-paper-ufs"]
        self.assertEqual(ufs["device"]["transport"], "ufs")
        self.assertEqual(ufs["device"]["overrides"], {})
        self.assertEqual(ufs["device"]["params"], costmodel.make_params("paper"))
        self.assertEqual(ufs["disks"], {"card": {"kind": "ufs", "name": None,
                                                 "attrs": {}}})
        self.assertEqual(by["6.12-paper"]["disks"]["card"]["name"], "mmcblk0")
        # no MMC history on UFS; the card's counters on both
        for r in ufs["runs"]:
            self.assertNotIn("mmc_history", r["record"], r["id"])
            self.assertIn("card", r["record"], r["id"])
        self.assertTrue(any("mmc_history" in r["record"]
                            for r in by["6.12-paper"]["runs"]))

    def test_plan_kind_is_shown(self):
        self.assertTrue(benchplan.summary(plan()).startswith("default plan: 1 boots, "))
        self.assertIn("the full matrix: make bench FULL=1", benchplan.summary(plan()))
        self.assertTrue(benchplan.summary(plan(BENCH_FULL="1")).startswith(
            "full plan: 8 boots, "))
        self.assertEqual(plan()["command"], "make bench")

    def test_extra_arm_in_the_fixed_order(self):
        s = benchplan.settings_from_env(
            {"BENCH_SCHEDS": "fwdsched deadline-wrap mq-deadline",
             "BENCH_KVERS": "6.12 7.2"})
        self.assertEqual(s["schedulers"],
                         ["mq-deadline", "deadline-wrap", "fwdsched"])

    def test_twoproc_runs_deadline_wrap_when_asked(self):
        b = plan(BENCH_SCHEDS="mq-deadline deadline-wrap kyber",
                 BENCH_EXPERIMENTS="twoproc")["boots"][0]
        arms = {r["arm"] for r in b["runs"] if r["role"] == "arm"}
        self.assertEqual(arms, {"mq-deadline", "deadline-wrap"})

    def test_bad_values_are_refused_by_name(self):
        bad = [({"BENCH_FULL": "yes"}, "BENCH_FULL='yes': not 0 or 1 (1, or make "
                                       "bench FULL=1: the full matrix)"),
               ({"BENCH_FULL": "2"}, "BENCH_FULL='2': not 0 or 1"),
               ({"BENCH_CARDS": "paper,transport=nvme"},
                "BENCH_CARDS: 'paper,transport=nvme': unknown transport 'nvme' "
                "(sd, ufs)"),
               ({"BENCH_CARDS": "paper paper,transport=sd"},
                "'paper' and 'paper,transport=sd' are the same card"),
               ({"BENCH_CARDS": "paper,transport=ufs,transport=sd"},
                "transport given twice"),
               ({"BENCH_KVERS": "6.13"}, "BENCH_KVERS: unknown kernel '6.13'"),
               ({"BENCH_KVERS": "6.12 6.12"}, "given twice"),
               ({"BENCH_CARDS": "papr"}, "BENCH_CARDS: 'papr'"),
               ({"BENCH_CARDS": "paper,back_us=-1"}, "must not be negative"),
               ({"BENCH_CARDS": "paper,back_us"}, "not key=value"),
               ({"BENCH_EXPERIMENTS": "headline nope"},
                "unknown experiment 'nope'"),
               ({"BENCH_SCHEDS": "fwdsched"}, "must include mq-deadline"),
               ({"BENCH_SCHEDS": "mq-deadline cfq"}, "unknown scheduler 'cfq'"),
               ({"BENCH_KVERS": "6.1 6.12", "BENCH_SCHEDS":
                 "mq-deadline deadline-wrap"},
                "deadline-wrap cannot be built for 6.1"),
               ({"BENCH_VARIANTS": "fwdsched"}, "not SCHED:name=value"),
               ({"BENCH_VARIANTS": "fwdsched:fair_slack=x"}, "not name=number"),
               ({"BENCH_VARIANTS": "fwdsched:Bad=1"}, "not name=number"),
               ({"BENCH_VARIANTS": "cfq:a=1"}, "unknown scheduler 'cfq'"),
               ({"BENCH_SCHEDS": "mq-deadline", "BENCH_VARIANTS":
                 "fwdsched:fair_slack=0"}, "fwdsched is not in BENCH_SCHEDS"),
               ({"BENCH_ROUNDS": "0"}, "BENCH_ROUNDS=0: out of range"),
               ({"BENCH_ROUNDS": "three"}, "not a whole number"),
               ({"BENCH_RUNTIME": "-3"}, "BENCH_RUNTIME='-3': not a whole"),
               ({"BENCH_RUNTIME": "0"}, "out of range"),
               ({"BENCH_MODELS": "paper"}, "BENCH_MODELS is no longer read; "
                                           "use BENCH_CARDS"),
               ({"BENCH_SLACKS": "0 8"}, "BENCH_VARIANTS")]
        for env, text in bad:
            with self.assertRaises(benchplan.SettingError, msg=env) as cm:
                benchplan.make_plan(env, **FIXED)
            self.assertIn(text, str(cm.exception), env)

    def test_cli_refuses_before_planning(self):
        tmp = tempfile.mkdtemp()
        try:
            env = dict(os.environ, BENCH_ROUNDS="x")
            r = subprocess.run([sys.executable, os.path.join(HERE, "benchplan.py"),
                                "plan", os.path.join(tmp, "out")], env=env,
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("BENCH_ROUNDS='x': not a whole number", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "out")))
            env = dict(os.environ, BENCH_ROUNDS="1", BENCH_RUNTIME="3",
                       BENCH_SCHEDS="mq-deadline fwdsched",
                       BENCH_EXPERIMENTS="headline", BENCH_CARDS="paper")
            r = subprocess.run([sys.executable, os.path.join(HERE, "benchplan.py"),
                                "plan", os.path.join(tmp, "out")], env=env,
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split()[:3], ["6.12-paper", "6.12", "paper"])
            with open(os.path.join(tmp, "out", "plan.json")) as f:
                p = json.load(f)
            self.assertEqual(p["command"], "BENCH_CARDS=paper BENCH_EXPERIMENTS="
                             "headline BENCH_SCHEDS='mq-deadline fwdsched' "
                             "BENCH_ROUNDS=1 BENCH_RUNTIME=3 make bench")
            self.assertEqual(len(p["boots"][0]["runs"]), 2)
        finally:
            shutil.rmtree(tmp)

    def test_bench_refuses_bad_settings_before_booting(self):
        bench = os.path.join(TOP, "tools", "bench")
        env = dict(os.environ, BENCH_CARDS="paper nope")
        r = subprocess.run([bench, "--dry-run"], env=env, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("BENCH_CARDS: 'nope'", r.stderr)
        env = dict(os.environ, BENCH_KVERS="6.1 7.2", BENCH_ROUNDS="2")
        r = subprocess.run([bench, "--dry-run"], env=env, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("default plan: 2 boots, "), r.stdout)
        env = dict(os.environ, BENCH_FULL="yes")
        r = subprocess.run([bench, "--dry-run"], env=env, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("BENCH_FULL='yes': not 0 or 1", r.stderr)
        r = subprocess.run([bench, "--frobnicate"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage: bench", r.stderr)

    def test_variants_are_arms(self):
        p = plan(BENCH_SCHEDS="mq-deadline fwdsched", BENCH_CARDS="paper",
                 BENCH_EXPERIMENTS="headline", BENCH_ROUNDS="3",
                 BENCH_VARIANTS="fwdsched:fair_slack=0,dispatch_depth=4")
        ids = [a["id"] for a in p["arms"]]
        self.assertEqual(ids, ["mq-deadline", "fwdsched",
                               "fwdsched dispatch_depth=4 fair_slack=0"])
        v = [r for r in all_runs(p) if r["arm"] == ids[2]]
        self.assertEqual(len(v), 3)
        self.assertEqual(v[0]["scheduler"], "fwdsched")
        self.assertEqual(v[0]["tunables"], {"dispatch_depth": 4, "fair_slack": 0})


class Plan(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.p = plan(BENCH_FULL="1", BENCH_KVERS="6.1 6.12", BENCH_ROUNDS="4",
                     BENCH_CARDS="paper fig56 symmetric")

    def test_every_run_has_a_unique_id(self):
        ids = [r["id"] for r in all_runs(self.p)]
        self.assertEqual(len(ids), len(set(ids)))
        for b in self.p["boots"]:
            self.assertEqual([r["seq"] for r in b["runs"]],
                             list(range(1, len(b["runs"]) + 1)))
        self.assertEqual(len({b["id"] for b in self.p["boots"]}),
                         len(self.p["boots"]))

    def test_boots(self):
        self.assertEqual([(b["kernel"], b["device"]["kind"], b["device"].get("spec"))
                          for b in self.p["boots"]],
                         [("6.1", "flashcard", "paper"), ("6.1", "flashcard", "fig56"),
                          ("6.1", "flashcard", "symmetric"), ("6.1", "null_blk", None),
                          ("6.1", "null_blk", None),
                          ("6.12", "flashcard", "paper"), ("6.12", "flashcard", "fig56"),
                          ("6.12", "flashcard", "symmetric"), ("6.12", "null_blk", None),
                          ("6.12", "null_blk", None)])
        paper = self.p["boots"][0]
        self.assertEqual(paper["device"]["params"], costmodel.make_params("paper"))
        exps = {r["experiment"] for r in paper["runs"]}
        self.assertEqual(exps, {"headline", "twoproc", "responsiveness", "fig2"})
        exps = {r["experiment"] for r in self.p["boots"][1]["runs"]}
        self.assertEqual(exps, {"headline", "twoproc"})
        nb = self.p["boots"][3]
        self.assertEqual(set(nb["disks"]), {"deep"})
        self.assertEqual(set(self.p["boots"][4]["disks"]), {"cpu"})
        self.assertEqual(nb["disks"]["deep"]["attrs"]["completion_nsec"], 1000000)
        self.assertEqual(nb["disks"]["deep"]["attrs"]["submit_queues"], 2)
        for r in nb["runs"]:
            self.assertNotIn("card", r["record"])
            self.assertNotIn("blktrace", r["record"])
        for r in paper["runs"]:
            self.assertIn("card", r["record"])

    def test_unfinished_keeps_the_boots_with_runs_left(self):
        out = tempfile.mkdtemp()
        try:
            first, second = self.p["boots"][0], self.p["boots"][1]
            for b in self.p["boots"]:
                if b is second:
                    continue
                for r in b["runs"]:
                    os.makedirs(os.path.join(out, "runs", r["id"]))
                    with open(os.path.join(out, "runs", r["id"],
                                           "run.json"), "w") as f:
                        json.dump({"id": r["id"], "status": "ok"}, f)
            # the first boot's last run failed, its second-last never ran
            last = first["runs"][-1]["id"]
            with open(os.path.join(out, "runs", last, "run.json"), "w") as f:
                json.dump({"id": last, "status": "failed"}, f)
            shutil.rmtree(os.path.join(out, "runs", first["runs"][-2]["id"]))
            left = benchplan.unfinished(self.p, out)
            self.assertEqual([b["id"] for b in left], [first["id"], second["id"]])
            self.assertEqual(left[0]["estimate_s"], benchplan.BOOT_S +
                             benchplan.APP_PREPARE_S["sd"] + sum(
                                 r["estimate_s"] for r in first["runs"][-2:]))
            self.assertEqual(left[1]["estimate_s"], second["estimate_s"])
            self.assertEqual(benchplan.unfinished(self.p, out)[0]["runs"],
                             first["runs"])
        finally:
            shutil.rmtree(out)

    def test_rounds_interleave_and_rotate(self):
        b = self.p["boots"][0]
        head = [r for r in b["runs"] if r["experiment"] == "headline"]
        arms = [a["id"] for a in self.p["arms"]]
        by_round = {}
        for r in head:
            by_round.setdefault(r["round"], []).append(r["arm"])
        self.assertEqual(sorted(by_round), [1, 2, 3, 4])
        for k, order in by_round.items():
            self.assertEqual(sorted(order), sorted(arms))
            self.assertEqual(order, arms[k - 1:] + arms[:k - 1])
        # over 4 rounds, 4 different arms run first
        firsts = [order[0] for order in by_round.values()]
        self.assertEqual(len(set(firsts)), 4)
        # rounds are the outer loop: all of round 1 before round 2
        rounds = [r["round"] for r in b["runs"] if r["experiment"] != "fig2"]
        self.assertEqual(rounds, sorted(rounds))
        # the illustrations run once
        self.assertEqual({r["round"] for r in b["runs"] if r["experiment"] == "fig2"},
                         {1})

    def test_rotate(self):
        self.assertEqual(benchplan.rotate([1, 2, 3], 1), [1, 2, 3])
        self.assertEqual(benchplan.rotate([1, 2, 3], 2), [2, 3, 1])
        self.assertEqual(benchplan.rotate([1, 2, 3], 4), [1, 2, 3])
        self.assertEqual(benchplan.rotate([], 2), [])

    def test_twoproc_rounds_have_their_alone_runs(self):
        b = self.p["boots"][0]
        for rnd in range(1, 5):
            rs = [r for r in b["runs"] if r["experiment"] == "twoproc"
                  and r["round"] == rnd]
            alone = sorted((str(r["variant"]), r["process"], r["fio"]["args"][0])
                           for r in rs if r["role"] == "alone")
            self.assertEqual(alone, sorted([("same", "sync", "--section=sync"),
                                            ("apart", "sync", "--section=sync"),
                                            ("None", "async", "--section=async")]))
            arms = [r for r in rs if r["role"] == "arm"]
            # the experiment keeps mq-deadline, bfq and fwdsched
            self.assertEqual(sorted({r["arm"] for r in arms}),
                             ["bfq", "fwdsched", "mq-deadline"])
            self.assertEqual(len(arms), 2 * 3)
            jobs = {r["variant"]: r["fio"]["job"] for r in arms}
            self.assertEqual(jobs, {"same": "async-vs-sync-2proc",
                                    "apart": "async-vs-sync-2proc-apart"})

    def test_traced_in_round_one_only(self):
        for b in self.p["boots"][:3]:
            for r in b["runs"]:
                traced = "blktrace" in r["record"]
                if r["experiment"] in ("headline", "twoproc"):
                    # twoproc: the alone runs too, so that the records of
                    # a round stay alike
                    self.assertEqual(traced, r["round"] == 1, r["id"])
                    self.assertEqual("mmc_history" in r["record"], traced)
                elif r["experiment"] == "responsiveness":
                    self.assertEqual(traced, r["round"] == 1 and
                                     r["variant"] != "idle", r["id"])
                else:
                    self.assertFalse(traced, r["id"])
                self.assertIn("card", r["record"])

    def test_responsiveness_runs(self):
        rs = [r for r in self.p["boots"][0]["runs"]
              if r["experiment"] == "responsiveness" and r["round"] == 2]
        arms = benchplan.EXPERIMENTS["responsiveness"].get("schedulers")
        self.assertEqual(len(rs), 4 * len([a for a in self.p["arms"] if not arms
                                           or a["scheduler"] in arms]))
        # per arm: idle, then the three backgrounds, together
        self.assertEqual([r["variant"] for r in rs[:4]],
                         ["idle", "writer", "reader", "both"])
        self.assertEqual(len({r["arm"] for r in rs[:4]}), 1)
        idle, writer, reader, both = rs[:4]
        self.assertIsNone(idle["background"])
        self.assertEqual(writer["background"]["args"], ["--section=writer"])
        self.assertEqual(writer["background"]["dirty_bytes"], 16 << 20)
        self.assertIsNone(reader["background"]["dirty_bytes"])
        self.assertEqual(both["background"]["args"], [])
        self.assertEqual(both["background"]["streams"], ["writer", "reader"])
        self.assertEqual(writer["foreground"]["bs"], 16384)
        # the synthetic start-up: a fixed window, never a limit
        self.assertEqual(writer["foreground"]["args"],
                         ["--time_based", "--runtime=5", "--number_ios=0"])
        self.assertEqual(writer["foreground"]["window_s"], 5)
        self.assertEqual(writer["background"]["window_s"],
                         self.p["settings"]["runtime_s"])
        # the real program after it, in every run, idle too
        for r in rs:
            self.assertEqual(r["app"], {"limit_s": benchplan.APP_LIMIT_S["sd"]})

    def test_real_program_entries(self):
        b = self.p["boots"][0]
        fs = b["app_fs"]
        self.assertEqual(fs["program"], "python3")
        self.assertEqual(fs["modules"], list(benchplan.APP_MODULES))
        self.assertGreaterEqual(len(fs["modules"]), 30)
        # the file system lies above every job's region (the jobs use the
        # raw card) and below the card's control window
        jobs = set()
        for r in all_runs(plan(BENCH_EXPERIMENTS=" ".join(benchplan.EXPERIMENTS))):
            jobs |= {r["fio"]["job"]} if r["kind"] == "fio" else \
                {r["foreground"]["job"]} | ({r["background"]["job"]}
                                            if r["background"] else set())
        for j in jobs:
            self.assertLessEqual(job_end(os.path.join(JOBS, j + ".fio")), fs["start"], j)
        self.assertLessEqual(fs["start"] + fs["size"],
                             costmodel.control_start(CARD_BYTES))
        self.assertEqual(fs["start"] % 512, 0)
        # only the responsiveness boots make it
        self.assertNotIn("app_fs", self.p["boots"][1])
        self.assertFalse(any(r.get("app") for r in self.p["boots"][1]["runs"]))
        # its limit: at least 30 times the idle start-up planned on either
        # transport
        for tr, est in benchplan.APP_EST_S.items():
            self.assertGreaterEqual(benchplan.APP_LIMIT_S[tr], 30 * est["idle"], tr)

    def test_deep_nullb_alone_beside_each_arm(self):
        rs = [r for r in self.p["boots"][3]["runs"]
              if r["experiment"] == "deep-nullb" and r["round"] == 1]
        for a in self.p["arms"]:
            mine = [r for r in rs if r["arm"] == a["id"]]
            self.assertEqual([(r["role"], r["process"]) for r in mine],
                             [("alone", "async"), ("arm", None)])
            self.assertEqual(rs.index(mine[1]), rs.index(mine[0]) + 1)
        sync = [r for r in rs if r["process"] == "sync"]
        self.assertEqual(len(sync), 1)
        self.assertIsNone(sync[0]["arm"])
        self.assertEqual({r["disk"] for r in rs}, {"deep"})

    def test_nullb_cpu_variants_every_arm_every_round(self):
        # three loads, each under every arm in every round, the arms
        # rotated within each
        nb = [b for b in self.p["boots"] if b["id"] == "6.1-nullb-cpu"][0]
        arms = [a["id"] for a in self.p["arms"]]
        rs = [r for r in nb["runs"] if r["experiment"] == "nullb-cpu"]
        # a guest of its own: one vCPU counting instructions; the other
        # null_blk boot (deep-nullb) is a plain guest
        self.assertEqual(nb["device"]["vm"], {"cpus": 1, "icount": 1})
        self.assertEqual(benchplan.vm_args(nb["device"]), "cpus=1,icount=1")
        plain = [b for b in self.p["boots"] if b["id"] == "6.1-nullb"][0]
        self.assertNotIn("nullb-cpu", {r["experiment"] for r in plain["runs"]})
        self.assertEqual(benchplan.vm_args(plain["device"]), "-")
        jobs = {"r16": "fig3-r16-4k-direct-128m", "1proc": "cpu-1proc-qd32",
                "8proc": "cpu-8proc-qd8"}
        self.assertEqual(benchplan.EXPERIMENTS["nullb-cpu"]["variants"], jobs)
        self.assertEqual(len(rs), 4 * len(jobs) * len(arms))
        for rnd in range(1, 5):
            for var, job in jobs.items():
                mine = [r for r in rs if r["round"] == rnd and r["variant"] == var]
                self.assertEqual([r["arm"] for r in mine],
                                 arms[rnd - 1:] + arms[:rnd - 1], (rnd, var))
                for r in mine:
                    self.assertEqual((r["role"], r["kind"], r["disk"], r["fio"]["job"],
                                      r["fio"]["args"]), ("arm", "fio", "cpu", job, []))
                    self.assertEqual(r["label"], "nullb-cpu %s round %d %s" %
                                     (var, rnd, r["arm"]))
        # a round's runs of every variant before the next round's
        seq = [r["round"] for r in rs]
        self.assertEqual(seq, sorted(seq))
        self.assertTrue(self.p["experiments"]["nullb-cpu"]["ratios"])

    def test_nullb_cpu_rounds(self):
        # at least 6 rounds by default, in the full matrix and alone;
        # BENCH_ROUNDS overrides
        def rounds(**env):
            p = plan(**env)
            return (p["experiments"]["nullb-cpu"]["rounds"],
                    {r["round"] for r in all_runs(p) if r["experiment"] == "nullb-cpu"})
        for env in ({"BENCH_FULL": "1"}, {"BENCH_EXPERIMENTS": "nullb-cpu"},
                    {"BENCH_FULL": "1", "BENCH_EXPERIMENTS": "nullb-cpu"}):
            n, seen = rounds(**env)
            self.assertGreaterEqual(n, 6, env)
            self.assertEqual(seen, set(range(1, n + 1)), env)
        self.assertEqual(rounds(BENCH_EXPERIMENTS="nullb-cpu", BENCH_ROUNDS="3"),
                         (3, {1, 2, 3}))
        # alone: one null_blk boot, no card; 3 jobs x 4 arms x 6 rounds
        p = plan(BENCH_EXPERIMENTS="nullb-cpu",
                 BENCH_SCHEDS="none mq-deadline kyber fwdsched")
        self.assertEqual([b["id"] for b in p["boots"]], ["6.12-nullb-cpu"])
        self.assertEqual(set(p["boots"][0]["disks"]), {"cpu"})
        self.assertEqual(len(p["boots"][0]["runs"]), 72)
        # its guest counts instructions: ICOUNT_WALL times the run's time
        self.assertEqual(p["estimate_s"], benchplan.BOOT_S + 72 * round(
            (5 + benchplan.OVERHEAD_S) * benchplan.ICOUNT_WALL))

    def test_nullb_cpu_jobs_fit_the_disk(self):
        mib = benchplan.NULLB_DISKS["cpu"]["attrs"]["size"]
        for job in benchplan.EXPERIMENTS["nullb-cpu"]["variants"].values():
            self.assertLessEqual(job_end(os.path.join(JOBS, job + ".fio")),
                                 mib << 20, job)
        # what each job is: processes, threads and reads in flight
        for job, procs, threads, depth in (("cpu-1proc-qd32", 1, 2, 16),
                                           ("cpu-8proc-qd8", 8, 1, 8)):
            (o,) = fio_sections(os.path.join(JOBS, job + ".fio")).values()
            n = int(o["numjobs"])
            self.assertEqual((1 if "thread" in o else n,
                              n if "thread" in o else 1), (procs, threads), job)
            self.assertEqual((o["ioengine"], int(o["iodepth"]), o["direct"],
                              o["bs"], o["rw"]), ("libaio", depth, "1", "4k",
                                                  "randread"), job)
            self.assertIn("group_reporting", o)
            self.assertEqual(size_of(o["size"]), 512 << 20)

    def test_default_plan_is_half_an_hour(self):
        # the README's promise for plain make bench: about 30 minutes
        p = plan()
        self.assertGreaterEqual(p["estimate_s"], 25 * 60)
        self.assertLessEqual(p["estimate_s"], 35 * 60)
        self.assertEqual(p["settings"]["kernels"], ["6.12"])
        self.assertEqual([b["id"] for b in p["boots"]], ["6.12-paper"])
        self.assertEqual({r["experiment"] for r in p["boots"][0]["runs"]},
                         {"headline", "twoproc", "responsiveness"})
        self.assertEqual({r["round"] for r in p["boots"][0]["runs"]}, set(range(1, 7)))
        # the headline compares the five schedulers
        self.assertEqual({r["arm"] for r in p["boots"][0]["runs"]
                          if r["experiment"] == "headline"},
                         set(benchplan.SCHEDULERS))
        # two processes in the same region only; both regions in the full
        # matrix
        self.assertEqual({r["variant"] for r in p["boots"][0]["runs"]
                          if r["experiment"] == "twoproc"}, {"same", None})
        self.assertEqual({r["variant"] for r in plan(BENCH_FULL="1")["boots"][0]["runs"]
                          if r["experiment"] == "twoproc"}, {"same", "apart", None})

    def test_startup_backgrounds_by_plan(self):
        # the default plan: idle and the deep reader, on one transport;
        # the full matrix: all four backgrounds on both, each with the
        # real program
        def variants(p, bid):
            b = [b for b in p["boots"] if b["id"] == bid][0]
            return {(r["variant"], r["arm"]) for r in b["runs"]
                    if r["experiment"] == "responsiveness"}
        arms = {"mq-deadline", "bfq", "fwdsched"}
        self.assertEqual(variants(plan(), "6.12-paper"),
                         {(v, a) for v in ("idle", "reader") for a in arms})
        full = plan(BENCH_FULL="1")
        for bid in ("6.12-paper", "6.12-paper-ufs"):
            self.assertEqual(variants(full, bid),
                             {(v, a) for v in ("idle", "writer", "reader", "both")
                              for a in arms}, bid)
        ufs = [b for b in full["boots"] if b["id"] == "6.12-paper-ufs"][0]
        self.assertEqual({r["app"]["limit_s"] for r in ufs["runs"] if r.get("app")},
                         {benchplan.APP_LIMIT_S["ufs"]})
        self.assertIn("app_fs", ufs)
        # BENCH_BACKGROUNDS chooses them; idle is required, unknown refused
        self.assertEqual(variants(plan(BENCH_BACKGROUNDS="idle writer"),
                                  "6.12-paper"),
                         {(v, a) for v in ("idle", "writer") for a in arms})
        for bad in ("writer", "idle idle", "idle bogus"):
            with self.assertRaises(benchplan.SettingError, msg=bad):
                plan(BENCH_BACKGROUNDS=bad)

    def test_estimate_follows_the_runs(self):
        # a longer window or a writer costs more; the real program's limit
        # bounds its start-up's estimate
        def est(**kw):
            return plan(BENCH_EXPERIMENTS="responsiveness", BENCH_ROUNDS="1",
                        BENCH_SCHEDS="mq-deadline", **kw)["estimate_s"]
        self.assertGreater(est(BENCH_RUNTIME="20"), est(BENCH_RUNTIME="5"))
        self.assertGreater(est(BENCH_FULL="1"), est())
        runs = plan(BENCH_EXPERIMENTS="responsiveness", BENCH_ROUNDS="2",
                    BENCH_SCHEDS="mq-deadline", BENCH_FULL="1")["boots"][0]["runs"]
        by = {(r["variant"], r["round"]): r["estimate_s"] for r in runs}
        self.assertGreater(by[("writer", 2)], by[("reader", 2)])
        self.assertGreater(by[("reader", 2)], by[("idle", 2)])
        # round 1 is traced
        self.assertGreater(by[("writer", 1)], by[("writer", 2)])
        r = dict(runs[1], app={"limit_s": 1})
        self.assertLess(benchplan._estimate(r, 5, "sd"),
                        benchplan._estimate(runs[1], 5, "sd"))

    def test_summary(self):
        text = benchplan.summary(plan(BENCH_EXPERIMENTS="headline",
                                      BENCH_CARDS="paper", BENCH_ROUNDS="1"))
        self.assertTrue(text.startswith("default plan: 1 boots, 5 runs, about "), text)


def fio_sections(path):
    """{section: {key: value}} of a fio job file, global merged in."""
    cp = configparser.ConfigParser(allow_no_value=True, interpolation=None,
                                   strict=False)
    cp.optionxform = str
    with open(path) as f:
        cp.read_string(f.read())
    glob = dict(cp["global"]) if cp.has_section("global") else {}
    return {s: dict(glob, **dict(cp[s])) for s in cp.sections() if s != "global"}


def size_of(text):
    m = re.fullmatch(r"([0-9]+)([kmgt]?)", text.strip().lower())
    if not m:
        raise ValueError("size %r" % text)
    return int(m.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[m.group(2)]


def job_end(path):
    """The highest byte a job file (on the raw device) can touch."""
    end = 0
    for name, o in fio_sections(path).items():
        if "read_iolog" in o:
            with open(os.path.join(TOP, o["read_iolog"])) as f:
                for line in f:
                    w = line.split()
                    if len(w) == 4 and w[1] in ("read", "write"):
                        end = max(end, int(w[2]) + int(w[3]))
            continue
        off = size_of(o.get("offset", "0"))
        size = size_of(o["size"])
        n = int(o.get("numjobs", "1"))
        inc = size_of(o.get("offset_increment", "0"))
        end = max(end, off + (n - 1) * inc + size)
    return end


class JobFiles(unittest.TestCase):

    def benchmark_jobs(self):
        jobs = set()
        p = plan(BENCH_EXPERIMENTS=" ".join(benchplan.EXPERIMENTS))
        for r in all_runs(p):
            if r["kind"] == "fio":
                jobs.add(r["fio"]["job"])
            else:
                jobs.add(r["foreground"]["job"])
                if r["background"]:
                    jobs.add(r["background"]["job"])
        return jobs

    def test_jobs_keep_out_of_the_control_window(self):
        limit = costmodel.control_start(CARD_BYTES)
        names = [f[:-4] for f in os.listdir(JOBS)
                 if f.endswith(".fio") and not f.endswith("-ext4.fio")]
        self.assertTrue(self.benchmark_jobs() <= set(names))
        for name in names:
            end = job_end(os.path.join(JOBS, name + ".fio"))
            self.assertGreater(end, 0, name)
            self.assertLessEqual(end, limit, "%s reaches %d" % (name, end))

    def test_the_check_can_fail(self):
        tmp = tempfile.mkdtemp()
        try:
            p = os.path.join(tmp, "x.fio")
            with open(p, "w") as f:
                f.write("[global]\nsize=64m\n[a]\noffset=4032m\n[b]\n"
                        "offset=4095m\nsize=1m\n")
            self.assertEqual(job_end(p), 4096 << 20)
            self.assertGreater(job_end(p), costmodel.control_start(CARD_BYTES))
        finally:
            shutil.rmtree(tmp)

    @unittest.skipUnless(shutil.which("fio"), "fio not installed")
    def test_plan_command_lines_parse(self):
        seen = set()
        p = plan(BENCH_EXPERIMENTS=" ".join(benchplan.EXPERIMENTS))
        for r in all_runs(p):
            specs = [r["fio"]] if r["kind"] == "fio" else \
                [r["foreground"]] + ([r["background"]] if r["background"] else [])
            for s in specs:
                key = (s["job"], tuple(s["args"]))
                if key in seen:
                    continue
                seen.add(key)
                env = dict(os.environ, **s["env"])
                c = subprocess.run(["fio", "--parse-only",
                                    os.path.join(JOBS, s["job"] + ".fio")] +
                                   s["args"], env=env, capture_output=True,
                                   text=True, cwd=TOP)
                self.assertEqual(c.returncode, 0, (key, c.stderr))
        self.assertGreater(len(seen), 10)

    def test_plan_sections_exist(self):
        # fio --parse-only accepts any --section; a missing one would run
        # nothing, so check them against the job files
        p = plan(BENCH_EXPERIMENTS=" ".join(benchplan.EXPERIMENTS))
        n = 0
        for r in all_runs(p):
            specs = [r["fio"]] if r["kind"] == "fio" else \
                [r["foreground"]] + ([r["background"]] if r["background"] else [])
            for s in specs:
                secs = fio_sections(os.path.join(JOBS, s["job"] + ".fio"))
                for a in s["args"]:
                    if a.startswith("--section="):
                        self.assertIn(a.split("=", 1)[1], secs, s)
                        n += 1
        self.assertGreater(n, 0)


class AppStart(unittest.TestCase):
    """tools/guest/appstart.py: the real program's partition and command."""

    def test_partition_table(self):
        import struct
        for block in (512, 4096):
            m = appstart.mbr(3 << 30, 256 << 20, block)
            self.assertEqual(len(m), 512)
            self.assertEqual(m[510:], b"\x55\xaa")
            self.assertEqual(m[450], 0x83)
            # in the disk's logical blocks (QEMU's UFS disk has 4 KiB ones)
            self.assertEqual(struct.unpack("<II", m[454:462]),
                             ((3 << 30) // block, (256 << 20) // block))
        for bad in ((3 << 30, 1000, 4096), (0, 4096, 512), ((1 << 42), 512, 512)):
            with self.assertRaises(appstart.AppError, msg=bad):
                appstart.mbr(*bad)
        self.assertEqual(appstart.partition_name("mmcblk0"), "mmcblk0p1")
        self.assertEqual(appstart.partition_name("sda"), "sda1")

    def test_command(self):
        cmd, env = appstart.command("/tmp/m", ["json", "email.parser"])
        self.assertEqual(cmd[:4], ["/tmp/m/lib/ld.so", "--library-path", "/tmp/m/lib",
                                   "/tmp/m/bin/python3"])
        self.assertEqual(cmd[-1], "import json, email.parser")
        self.assertEqual(env["PYTHONHOME"], "/tmp/m")
        # nothing read from outside the copy
        self.assertTrue(env["OPENSSL_CONF"].startswith("/tmp/m/"))
        self.assertEqual((env["LC_ALL"], env["PYTHONCOERCECLOCALE"]), ("C", "0"))
        for bad in (["json;import os"], ["os.system('x')"], []):
            with self.assertRaises(appstart.AppError, msg=bad):
                appstart.command("/tmp/m", bad)
        text = appstart.shell_command("/tmp/m m", list(benchplan.APP_MODULES))
        out = subprocess.run(["bash", "-c", text + 'printf "%s|" "${APP_CMD[@]}"; '
                              'echo; printf "%s|" "${APP_ENV[@]}"'],
                             capture_output=True, text=True, check=True).stdout
        argv, envs = out.splitlines()
        self.assertEqual(argv.split("|")[3], "/tmp/m m/bin/python3")
        self.assertIn("PYTHONHOME=/tmp/m m|", envs)
        r = subprocess.run([sys.executable, os.path.join(TOP, "tools", "guest",
                                                         "appstart.py"),
                            "command", "/m", "json,1bad"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("module '1bad': not a module name", r.stderr)


class GuestReading(unittest.TestCase):
    """benchrun.py gives bash the runs of one boot, in the plan's order."""

    def test_shell_round_trip(self):
        p = plan(BENCH_CARDS="paper", BENCH_EXPERIMENTS="headline responsiveness",
                 BENCH_SCHEDS="mq-deadline fwdsched", BENCH_ROUNDS="2",
                 BENCH_VARIANTS="fwdsched:fair_slack=0", BENCH_FULL="1")
        b = p["boots"][0]
        text = benchrun.shell(p, b["id"])
        script = text + ('for i in $(seq 1 "$B_N"); do printf "%s|%s|%s|%s|%s|%s|%s\\n" '
                         '"${R_ID[$i]}" "${R_SCHED[$i]}" "${R_TUN[$i]}" '
                         '"${R_KIND[$i]}" "${R_BGARGS[$i]}" "${R_DIRTY[$i]}" '
                         '"${R_AFTER[$i]}"; done; echo "$B_DISKS"')
        out = subprocess.run(["bash", "-c", script], capture_output=True,
                             text=True, check=True).stdout.splitlines()
        self.assertEqual(out[-1], "card:mmcblk0:mmc")
        rows = [line.split("|") for line in out[:-1]]
        self.assertEqual([r[0] for r in rows], [r["id"] for r in b["runs"]])
        self.assertEqual([r[1] for r in rows], [r["scheduler"] for r in b["runs"]])
        tun = [r[2] for r in rows if r[2]]
        self.assertTrue(tun and set(tun) == {"fair_slack=0"})
        bg = {r[4] for r in rows if r[3] == "startup"}
        self.assertEqual(bg, {"", "--section=writer", "--section=reader"})
        self.assertEqual({r[5] for r in rows if r[4] == "--section=writer"},
                         {str(16 << 20)})
        self.assertEqual(rows[-1][6], "0")
        # the real program: its file system once a boot, a limit per run
        script = text + ('echo "$B_TRANSPORT|$B_APPSTART|$B_APPSIZE|$B_APPMODS"; '
                         'for i in $(seq 1 "$B_N"); do echo "${R_KIND[$i]}|'
                         '${R_APPLIMIT[$i]}"; done')
        out = subprocess.run(["bash", "-c", script], capture_output=True,
                             text=True, check=True).stdout.splitlines()
        self.assertEqual(out[0], "sd|%d|%d|%s" % (benchplan.APP_FS_START,
                                                  benchplan.APP_FS_SIZE,
                                                  ",".join(benchplan.APP_MODULES)))
        self.assertEqual(set(out[1:]), {"fio|",
                                        "startup|%d" % benchplan.APP_LIMIT_S["sd"]})

    def test_ufs_disk_is_the_guests(self):
        p = plan(BENCH_CARDS="paper,transport=ufs", BENCH_EXPERIMENTS="headline",
                 BENCH_ROUNDS="1", BENCH_SCHEDS="mq-deadline")
        b = p["boots"][0]
        self.assertEqual(b["id"], "6.12-paper-ufs")
        with self.assertRaises(benchrun.PlanError) as cm:
            benchrun.shell(p, b["id"])
        self.assertIn("FWD_UFS_DISK", str(cm.exception))
        text = benchrun.shell(p, b["id"], "sdb")
        out = subprocess.run(["bash", "-c", text + 'echo "$B_DISKS|$B_TRANSPORT|'
                              '${R_DISK[1]}|$B_APPSTART"'], capture_output=True,
                             text=True, check=True).stdout
        self.assertEqual(out, "card:sdb:ufs|ufs|sdb|\n")

    def test_unknown_boot_and_bad_words_refused(self):
        p = plan(BENCH_CARDS="paper", BENCH_EXPERIMENTS="headline",
                 BENCH_ROUNDS="1")
        with self.assertRaises(benchrun.PlanError):
            benchrun.shell(p, "7.2-paper")
        p["boots"][0]["runs"][0]["fio"]["args"] = ["--name=a b"]
        with self.assertRaises(benchrun.PlanError):
            benchrun.shell(p, p["boots"][0]["id"])

    def test_cli(self):
        tmp = tempfile.mkdtemp()
        try:
            f = os.path.join(tmp, "plan.json")
            with open(f, "w") as fh:
                json.dump({"kind": "other"}, fh)
            r = subprocess.run([sys.executable, os.path.join(TOP, "tools", "guest",
                                                             "benchrun.py"),
                                "shell", f, "x"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("not a benchmark plan", r.stderr)
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main()
