#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""benchplan: the benchmark's plan -- what tools/bench runs, decided once.

usage: benchplan.py check            validate the BENCH_* settings, print
                                     the plan's size and duration
       benchplan.py plan OUTDIR      the same, and write OUTDIR/plan.json;
                                     print one line per boot for tools/bench:
                                     "<boot id> <kernel> <card spec or ->
                                     <estimated seconds>"
       benchplan.py unfinished OUTDIR
                                     the same lines for the boots of
                                     OUTDIR/plan.json that have runs not
                                     recorded ok (tools/bench --resume)

The host plans every run; the guest (tools/guest/bench.sh) executes the
runs of its boot in order and records raw data per run id; the report
(report.py) reads the plan, the records and fio-jobs/targets.json.  No
part learns what a run was from a name: everything is a field here.

Settings (environment; bad values exit 2 with a message naming them,
before anything boots).  Two plans: the default one answers "is fwdsched
better here?" in about half an hour on 2 cores (one card on one
transport); BENCH_FULL=1 (make bench FULL=1) is the full matrix.  A
BENCH_* variable that is set overrides the plan's value:

  BENCH_FULL         0: the default plan; 1: the full matrix        (0)
  BENCH_KVERS        kernels, of tools/kernels                   (6.12)
  BENCH_CARDS        flash cards, each PRESET[,key=value...] as
                     tools/flashcard takes it, and transport=sd|ufs:
                     behind QEMU's SD card (the default) or its UFS
                     controller (tools/runner/vm-run)
                     (paper; full: paper fig56 symmetric, each on both
                     transports)
  BENCH_EXPERIMENTS  experiments, see EXPERIMENTS below
                     (headline twoproc responsiveness; full: also
                     fig2 deep-nullb nullb-cpu)
  BENCH_SCHEDS       schedulers; must include mq-deadline, the baseline
                     of every ratio        (none mq-deadline kyber bfq
                                                              fwdsched);
                     also deadline-wrap, mq-deadline wrapping to the
                     lowest sector (tools/setup/mq-deadline-wrap; not
                     on 6.1)
  BENCH_VARIANTS     extra arms: a scheduler with tunables,
                     SCHED:name=value[,name=value...], e.g.
                     "fwdsched:fair_slack=0 fwdsched:dispatch_depth=0"
  BENCH_ROUNDS       interleaved rounds of every comparison         (6)
  BENCH_RUNTIME      seconds per timed job                          (5)

Plan (plan.json), format 1:

  settings, host (state at planning), commit, command, created;
  arms: [{id, scheduler, tunables}] -- the things compared side by side
        (each scheduler with its defaults, then each variant);
  baseline: the arm every ratio divides by (mq-deadline);
  experiments: {id: {title, device, rounds, ...}} -- for the report;
  plan: "default" or "full" (BENCH_FULL);
  boots: [{id, kernel, device: {kind: flashcard|null_blk, transport
           (sd|ufs, a flash card's), vm (the guest's own options, e.g.
           {cpus: 1, icount: 1}, when an experiment asks), ...},
           disks: {key: {kind, name,
           attrs}} (a UFS disk's name is the guest's, null here), app_fs
           (the real program's file system, when a run starts it),
           estimate_s, runs: [...]}]

  A run: id (unique in the plan), seq (its place in the boot), experiment,
  variant (None or the experiment's variant: "same"/"apart", "idle"/
  "writer"/..., "r16"/"1proc"/"8proc", a job of a family), round (1..), role ("arm": an arm under
  comparison; "alone": one process of a multi-process job alone, for its
  demand), arm (the arm's id, or None for an alone run that belongs to no
  arm), process (the fio section an alone run keeps), scheduler, tunables,
  disk (a key of the boot's disks), kind ("fio" or "startup"), fio
  ({job, args, env}) or foreground/background/app, record (what to record:
  fio, card, diskstats, blktrace, mmc_history, debugfs), estimate_s, label
  (for people: progress lines and notes; nothing parses it).

Order: rounds are the outer loop of a boot, experiments the next, and
within one round of one experiment the entries (arms, and alone runs)
are rotated by one place per round, so that every entry runs in every
position over as many rounds as there are entries.
"""

import copy
import datetime
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "tools", "flashcard"))
import costmodel  # noqa: E402

SCHEDULERS = ("none", "mq-deadline", "kyber", "bfq", "fwdsched")
# Arms that BENCH_SCHEDS may add, with the kernels that lack them:
# deadline-wrap is mq-deadline with the one change of wrapping to the
# lowest sector (tools/setup/mq-deadline-wrap), for the question what a
# patch to mq-deadline would give; 6.1's mq-deadline has no position to
# continue from.
EXTRA_SCHEDULERS = {"deadline-wrap": ("6.1",)}
KNOWN_SCHEDULERS = SCHEDULERS[:2] + tuple(EXTRA_SCHEDULERS) + SCHEDULERS[2:]
BASELINE = "mq-deadline"
DEFAULT_CARDS = ("paper",)
TRANSPORTS = ("sd", "ufs")
FULL_CARDS = ("paper", "fig56", "symmetric", "paper,transport=ufs",
              "fig56,transport=ufs", "symmetric,transport=ufs")
ROUNDS = 6
TUNABLE_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")

# Seconds a run costs beyond its fio runtime under TCG (fio's own start,
# scheduler switch, caches, the card's counters, records over 9p; with
# blktrace its start, stop and blkparse), and a boot beyond its runs.
# Measured on an idle 2-core host (runs 20261125-120149 on 6.12 and
# 20261125-160916 on 6.1, medians; 20261127-120150 took 18 min against
# 17 estimated); used for the time estimates only.
OVERHEAD_S = 8
TRACED_S = 12
FIG_S = 8
BOOT_S = 60
# A run in a guest whose clock counts instructions (an experiment's "vm"
# with icount) takes this many times its estimate: one vCPU on one host
# thread, its 5 s of guest time longer on the host (6.12: 72 nullb-cpu
# runs of 5 s in 1,193 s with the boot).  Its own progress lines count
# guest time.
ICOUNT_WALL = 1.2
# A start-up run, by transport: its own cost beyond its window and its
# real program (STARTUP_S; the idle run's whole cost beyond them), the
# trace's (TRACED_STARTUP_S), and beside the buffered writer WRITER_S
# more: on the SD card the writeback, emulated 512 bytes at a time, takes
# the host's CPU from the guest, and fio's start, the mount and the run's
# end (the rest of the writeback, the trace) each take tens of seconds;
# on UFS seconds.  From runs 20261128-085132 (SD) and 20261128-093342
# (UFS), 6.12, mq-deadline and fwdsched, round 1 (traced).
STARTUP_S = {"sd": 10, "ufs": 3}
TRACED_STARTUP_S = {"sd": 12, "ufs": 5}
WRITER_S = {"sd": 110, "ufs": 15}
# The real program: making its file system once a boot, a start's own
# cost beyond its start-up (unmount, drop the caches, mount), and the
# start-up itself by transport and background (the same runs: means over
# mq-deadline and fwdsched, a start stopped at the limit counted at it).
APP_PREPARE_S = {"sd": 65, "ufs": 35}
APP_OVERHEAD_S = 2
APP_EST_S = {"sd": {"idle": 6.5, "reader": 16, "writer": 180, "both": 130},
             "ufs": {"idle": 4.5, "reader": 13.5, "writer": 27, "both": 57}}

# The responsiveness experiment's background (see fio-jobs/startup-*.fio):
# the writer's dirty limits are a phone's, small, so that writeback runs
# all the time.
WARMUP_S = 3
DIRTY_BACKGROUND_BYTES = 4 << 20
DIRTY_BYTES = 16 << 20
# The synthetic start-up (fio-jobs/startup-foreground.fio): 16 KiB reads
# at random in [0, 2 GiB), one at a time, for a fixed window of
# BENCH_RUNTIME seconds; it is measured by its reads per second, and its
# slow-down is idle reads/s ÷ reads/s: how much longer the same reads
# take.  A window is never censored (under a buffered writer some
# schedulers make each read wait for a whole batch of 512 KiB writes,
# about a second a read on the SD card under mq-deadline: the 200 reads of
# the old count-based start-up took minutes, and every one stopped at its
# 10 s limit), and every run has a known length.
FG_BS = 16384
FG_REGION = (0, 2 << 30)
# The real program's start-up (tools/guest/appstart.py): the guest's
# python3, its loader, libraries and standard library copied into an
# ext4 file system on partition 1 of the card, at APP_FS_START (above
# every job's region: the jobs use the raw card below 2.25 GiB), mounted
# read-only afresh with the caches dropped before each start, importing
# APP_MODULES: what a tool like pip, unittest or an e-mail or HTTP client
# imports, about 240 modules from about 200 files (Python 3.11).  A start
# that reaches APP_LIMIT_S is stopped and counted as at least that long.
# APP_LIMIT_S is more than 30 times the idle start-up measured on each
# transport (5.9 and 7.0 s on the SD card, 4.1 and 4.9 s on UFS, under
# fwdsched and mq-deadline); the report says for each round whether it
# was.
APP_FS_START = 3 << 30
APP_FS_SIZE = 256 << 20
APP_MODULES = (
    "argparse", "json", "logging", "subprocess", "tempfile", "shutil",
    "pathlib", "datetime", "typing", "dataclasses", "email.parser",
    "email.message", "email.policy", "http.client", "urllib.request",
    "urllib.parse", "unittest", "unittest.mock", "zipfile", "tarfile", "csv",
    "sqlite3", "decimal", "hashlib", "base64", "ssl", "xml.etree.ElementTree",
    "asyncio", "concurrent.futures", "platform", "locale", "gettext",
    "configparser", "optparse", "difflib", "pprint", "inspect", "sysconfig",
    "importlib.metadata")
APP_LIMIT_S = {"sd": 240, "ufs": 160}

# null_blk disks of the null_blk boot (configfs attributes).
NULLB_DISKS = {
    # no device latency: what is left is the schedulers' own CPU cost
    "cpu": {"kind": "null_blk", "name": "nullb0",
            "attrs": {"size": 1024, "irqmode": 0, "hw_queue_depth": 64}},
    # a deep device: 1 ms completions, 64 tags, two hardware queues
    "deep": {"kind": "null_blk", "name": "nullb1",
             "attrs": {"size": 1024, "irqmode": 2,
                       "completion_nsec": 1000000, "hw_queue_depth": 64,
                       "submit_queues": 2}},
}
# The card's disk by transport: the SD card's is mmcblk0; the UFS disk's
# name (sda, ...) is the guest's (FWD_UFS_DISK, tools/runner/vm-init),
# given to tools/guest/benchrun.py there.
CARD_DISKS = {"sd": {"card": {"kind": "mmc", "name": "mmcblk0", "attrs": {}}},
              "ufs": {"card": {"kind": "ufs", "name": None, "attrs": {}}}}
CARD_DISK = CARD_DISKS["sd"]

TRACED = ["fio", "card", "diskstats", "blktrace", "mmc_history", "debugfs"]
PLAIN = ["fio", "card", "diskstats", "debugfs"]
# Experiments recorded TRACED are traced in round 1 only: the trace gives
# the dispatch order, Fig 4 and 5/6, the responsiveness analysis and
# each of the two readers' device time (twoproc), and costs guest time
# (blkparse of a writer's run under TCG takes half a minute); the other
# rounds record PLAIN.  Within a round every arm is recorded alike.
TRACED_ROUNDS = (1,)

# The experiments.  device: "card" runs on every card of BENCH_CARDS
# ("first-card": on the first card of each transport only), "null_blk" on
# the null_blk boot.  plans: the plans whose BENCH_EXPERIMENTS include it
# ("default" and "full").
# rounds: None follows BENCH_ROUNDS, a number fixes it (illustrations of
# the papers' figures, not comparisons judged by a target).  schedulers,
# if given, keeps the arms of those schedulers only (of BENCH_SCHEDS).
# variants: {variant: job}, each run under every arm in every round (the
# arms rotated within each variant); the report shows them side by side
# (medians), or with ratios=True each as the headline (ratios to the
# baseline with intervals, titled by variant_titles).
EXPERIMENTS = {
    "headline": dict(
        title="16 × 4 KiB random reads in 128 MiB (paper Fig 3, block layer)",
        device="card", rounds=None, plans=("default", "full"),
        job="fig3-r16-4k-direct-128m", record=TRACED),
    "twoproc": dict(
        title="a deep async reader (iodepth 32) against a synchronous reader",
        device="card", rounds=None, plans=("default", "full"),
        variants={"same": "async-vs-sync-2proc",
                  "apart": "async-vs-sync-2proc-apart"},
        processes={"deep": "async", "sync": "sync"},
        # the default plan's half hour holds the same region only (5 runs
        # a round); the full matrix has both
        plan_variants={"default": ("same",)},
        # the baseline, the fairness scheduler and ours (and their
        # variants): 9 runs a round on each card instead of 13; and
        # deadline-wrap when BENCH_SCHEDS asks for it: what the wrap
        # costs a synchronous reader below the sweep (the mq-deadline
        # patch's message)
        schedulers=("mq-deadline", "deadline-wrap", "bfq", "fwdsched"),
        record=TRACED),
    "responsiveness": dict(
        title="application start-up under background I/O: synthetic (16 KiB "
              "reads, one at a time, over a fixed window) and a real "
              "program's (python3 importing its standard library from ext4 "
              "on the card, cold)",
        device="first-card", rounds=None, plans=("default", "full"),
        foreground="startup-foreground", background="startup-background",
        backgrounds={"idle": [], "writer": ["writer"], "reader": ["reader"],
                     "both": ["writer", "reader"]},
        # the default plan's half hour holds the deep reader only: beside
        # the writer a run costs minutes on the SD card, where the writes
        # are the emulation's (tools/flashcard/README.md); the full matrix
        # has all four on both transports
        plan_backgrounds={"default": ("idle", "reader")},
        # the baseline, the responsiveness scheduler and ours (and their
        # variants): the targets compare these
        schedulers=("mq-deadline", "bfq", "fwdsched"),
        app=True, record=TRACED),
    "fig2": dict(
        title="1,024 one-byte reads at the 1 MiB block starts of 1 GiB "
              "(paper Fig 2)",
        device="first-card", rounds=1, plans=("full",),
        variants={"sort": "fig2-sort", "shuffle": "fig2-shuffle",
                  "rand": "fig2-rand"},
        record=PLAIN),
    "fig3-1byte": dict(
        title="16 threads of one-byte random reads in 128 MiB (paper Fig 3)",
        device="first-card", rounds=1, plans=(),
        job="fig3-r16-1byte-128m", record=PLAIN),
    "fig1": dict(
        title="1,000 sequential then 1,000 random 4 KiB reads (paper Fig 1)",
        device="first-card", rounds=1, plans=(),
        job="fig1-seq-vs-rand-4k", record=PLAIN),
    "fig7": dict(
        title="16 threads × 10,000 one-byte random reads over 1 GiB "
              "(paper Fig 7)",
        device="first-card", rounds=1, plans=(),
        job="fig7-r16x10000-1byte-1g", record=PLAIN),
    "mixed": dict(
        title="beyond the papers: two-process and mixed jobs",
        device="first-card", rounds=1, plans=(),
        variants={"seq-vs-rand": "seq-vs-rand-2proc",
                  "writer-vs-reader": "writer-vs-reader-2proc",
                  "randrw": "mixed-randrw"},
        record=PLAIN),
    "deep-nullb": dict(
        title="a deep reader (32 in flight) with and without a synchronous "
              "reader, null_blk with 1 ms completions, depth 64, 2 queues",
        device="null_blk", disk="deep", rounds=None, plans=("full",),
        job="async-vs-sync-2proc", processes={"deep": "async", "sync": "sync"},
        record=["fio", "diskstats", "debugfs"]),
    "nullb-cpu": dict(
        title="4 KiB random reads on null_blk without latency (the "
              "schedulers' CPU cost)",
        device="null_blk", disk="cpu", rounds=None, plans=("full",),
        # a guest of its own, one vCPU whose clock counts instructions
        # (QEMU -icount): IOPS in guest time are the CPU work per read,
        # the same in every round (wall-clock IOPS of two vCPUs swung
        # 0.72-1.16x between rounds with the host's load)
        vm={"cpus": 1, "icount": 1},
        # three loads, each under every arm in every round: the headline
        # job (16 threads, one read each in flight), then many reads in
        # flight from one process and from eight (issue: fwdsched's IOPS
        # >= mq-deadline's for both)
        variants={"r16": "fig3-r16-4k-direct-128m",
                  "1proc": "cpu-1proc-qd32",
                  "8proc": "cpu-8proc-qd8"},
        variant_titles={
            "r16": "one process of 16 threads, one read each in flight "
                   "(psync; the headline job)",
            "1proc": "one process of 2 threads, 16 reads each in flight "
                     "(libaio; 32 in all)",
            "8proc": "8 processes, 8 reads each in flight (libaio; 64 in "
                     "all)"},
        # the report compares the variants' arms as the headline's (IOPS
        # and the ratio to the baseline, per variant), not side by side
        ratios=True,
        record=["fio", "diskstats", "debugfs"]),
}

OBSOLETE = {
    "BENCH_MODELS": "BENCH_CARDS",
    "BENCH_JOBS": "BENCH_EXPERIMENTS",
    "BENCH_SYM_JOBS": "BENCH_EXPERIMENTS",
    "BENCH_SLACKS": "BENCH_VARIANTS (e.g. fwdsched:fair_slack=0)",
    "BENCH_NULLB": "BENCH_EXPERIMENTS (nullb-cpu, deep-nullb)",
    "BENCH_NULLB_ROUNDS": "BENCH_ROUNDS",
}
SETTINGS = ("BENCH_FULL", "BENCH_KVERS", "BENCH_CARDS", "BENCH_EXPERIMENTS",
            "BENCH_SCHEDS", "BENCH_VARIANTS", "BENCH_ROUNDS",
            "BENCH_RUNTIME", "BENCH_BACKGROUNDS")


class SettingError(ValueError):
    """A setting is bad; str() names it and the problem."""


def kernels_known(top=TOP):
    with open(os.path.join(top, "tools", "kernels")) as f:
        return f.read().split()


def _words(env, key, default):
    v = env.get(key)
    if v is None or not v.strip():
        return list(default)
    return v.split()


def _int(env, key, default, lo, hi):
    v = env.get(key)
    if v is None or v.strip() == "":
        return default
    if not re.fullmatch(r"[0-9]+", v.strip()):
        raise SettingError("%s=%r: not a whole number" % (key, v))
    n = int(v)
    if not lo <= n <= hi:
        raise SettingError("%s=%s: out of range (%d to %d)" % (key, v, lo, hi))
    return n


def _no_dups(key, xs):
    seen = set()
    for x in xs:
        if x in seen:
            raise SettingError("%s: %r given twice" % (key, x))
        seen.add(x)


def card_transport(spec):
    """The transport of a card spec (its transport=, "sd" without)."""
    t = "sd"
    for p in spec.split(",")[1:]:
        if p.startswith("transport="):
            t = p.split("=", 1)[1]
            if t not in TRANSPORTS:
                raise SettingError("BENCH_CARDS: %r: unknown transport %r (%s)"
                                   % (spec, t, ", ".join(TRANSPORTS)))
    return t


def parse_card(spec):
    """(preset, overrides, params) of a card spec PRESET[,key=value...];
    transport= is not the card's (card_transport())."""
    parts = spec.split(",")
    over = {}
    seen = set()
    for p in parts[1:]:
        if "=" not in p:
            raise SettingError("BENCH_CARDS: %r: %r is not key=value" %
                               (spec, p))
        k, v = p.split("=", 1)
        if k in seen:
            raise SettingError("BENCH_CARDS: %r: %s given twice" % (spec, k))
        seen.add(k)
        if k != "transport":
            over[k] = v
    card_transport(spec)
    try:
        params = costmodel.make_params(parts[0], **over)
    except costmodel.ParamError as e:
        raise SettingError("BENCH_CARDS: %r: %s" % (spec, e)) from None
    return parts[0], over, params


def parse_variant(spec, scheds):
    """An arm {id, scheduler, tunables} of SCHED:name=value[,...]."""
    if ":" not in spec:
        raise SettingError("BENCH_VARIANTS: %r: not SCHED:name=value[,...]" %
                           spec)
    sched, rest = spec.split(":", 1)
    if sched not in SCHEDULERS:
        raise SettingError("BENCH_VARIANTS: %r: unknown scheduler %r (%s)" %
                           (spec, sched, ", ".join(SCHEDULERS)))
    if sched not in scheds:
        raise SettingError("BENCH_VARIANTS: %r: %s is not in BENCH_SCHEDS" %
                           (spec, sched))
    tun = {}
    for p in rest.split(","):
        m = re.fullmatch(r"([^=]+)=([0-9]+)", p)
        if not m or not TUNABLE_RE.match(m.group(1)):
            raise SettingError("BENCH_VARIANTS: %r: %r is not name=number "
                               "(a tunable of /sys/block/<disk>/queue/"
                               "iosched/)" % (spec, p))
        if m.group(1) in tun:
            raise SettingError("BENCH_VARIANTS: %r: %s given twice" %
                               (spec, m.group(1)))
        tun[m.group(1)] = int(m.group(2))
    label = sched + " " + " ".join("%s=%d" % kv for kv in sorted(tun.items()))
    return {"id": label, "scheduler": sched, "tunables": dict(sorted(tun.items()))}


def card_key(spec):
    """What makes a card spec's boot: preset, overrides and transport."""
    preset, over, _ = parse_card(spec)
    return (preset, tuple(sorted(over.items())), card_transport(spec))


def plan_kind(env):
    """"default" or "full", of BENCH_FULL."""
    v = env.get("BENCH_FULL", "").strip()
    if v in ("", "0"):
        return "default"
    if v == "1":
        return "full"
    raise SettingError("BENCH_FULL=%r: not 0 or 1 (1, or make bench FULL=1: "
                       "the full matrix)" % env.get("BENCH_FULL"))


def settings_from_env(env, top=TOP):
    """Validated settings of the BENCH_* variables of env (a dict)."""
    for old, new in OBSOLETE.items():
        if env.get(old, "").strip():
            raise SettingError("%s is no longer read; use %s" % (old, new))
    kind = plan_kind(env)
    known = kernels_known(top)
    kernels = _words(env, "BENCH_KVERS", ["6.12"])
    for k in kernels:
        if k not in known:
            raise SettingError("BENCH_KVERS: unknown kernel %r (%s)" %
                               (k, ", ".join(known)))
    _no_dups("BENCH_KVERS", kernels)
    cards = _words(env, "BENCH_CARDS",
                   FULL_CARDS if kind == "full" else DEFAULT_CARDS)
    seen = {}
    for c in cards:
        k = card_key(c)
        if k in seen:
            raise SettingError("BENCH_CARDS: %r and %r are the same card" %
                               (seen[k], c) if seen[k] != c else
                               "BENCH_CARDS: %r given twice" % c)
        seen[k] = c
    exps = _words(env, "BENCH_EXPERIMENTS",
                  [e for e, d in EXPERIMENTS.items() if kind in d["plans"]])
    for e in exps:
        if e not in EXPERIMENTS:
            raise SettingError("BENCH_EXPERIMENTS: unknown experiment %r (%s)"
                               % (e, ", ".join(EXPERIMENTS)))
    _no_dups("BENCH_EXPERIMENTS", exps)
    scheds = _words(env, "BENCH_SCHEDS", SCHEDULERS)
    for s in scheds:
        if s not in KNOWN_SCHEDULERS:
            raise SettingError("BENCH_SCHEDS: unknown scheduler %r (%s)" %
                               (s, ", ".join(KNOWN_SCHEDULERS)))
        lacking = [k for k in kernels if k in EXTRA_SCHEDULERS.get(s, ())]
        if lacking:
            raise SettingError("BENCH_SCHEDS: %s cannot be built for %s "
                               "(tools/setup/%s)" % (s, ", ".join(lacking), s))
    _no_dups("BENCH_SCHEDS", scheds)
    if BASELINE not in scheds:
        raise SettingError("BENCH_SCHEDS: must include %s, the baseline of "
                           "every ratio" % BASELINE)
    variants = [parse_variant(v, scheds)
                for v in _words(env, "BENCH_VARIANTS", [])]
    _no_dups("BENCH_VARIANTS", [v["id"] for v in variants])
    rounds = _int(env, "BENCH_ROUNDS", ROUNDS, 1, 99)
    runtime = _int(env, "BENCH_RUNTIME", 5, 1, 3600)
    known_bg = EXPERIMENTS["responsiveness"]["backgrounds"]
    backgrounds = _words(env, "BENCH_BACKGROUNDS", [])
    for b in backgrounds:
        if b not in known_bg:
            raise SettingError("BENCH_BACKGROUNDS: unknown background %r (%s)"
                               % (b, ", ".join(known_bg)))
    _no_dups("BENCH_BACKGROUNDS", backgrounds)
    if backgrounds and "idle" not in backgrounds:
        raise SettingError("BENCH_BACKGROUNDS: must include idle, the "
                           "start-up every slow-down is measured against")
    if any(EXPERIMENTS[e]["device"] != "null_blk" for e in exps) and not cards:
        raise SettingError("BENCH_CARDS: empty, but %s run on the card" %
                           ", ".join(e for e in exps
                                     if EXPERIMENTS[e]["device"] != "null_blk"))
    # schedulers in the fixed order, whatever the order given
    scheds = [s for s in KNOWN_SCHEDULERS if s in scheds]
    return {"plan": kind, "kernels": kernels, "cards": cards, "experiments": exps,
            "schedulers": scheds, "variants": variants, "rounds": rounds,
            "runtime_s": runtime, "backgrounds": backgrounds or None}


def rotate(entries, rnd):
    """entries rotated left by rnd - 1 places (round 1: as given)."""
    if not entries:
        return []
    k = (rnd - 1) % len(entries)
    return entries[k:] + entries[:k]


def _fio(job, args, runtime):
    """How to run fio: fio-jobs/<job>.fio with args, env; replay: the job
    replays an iolog, whose device fio must redirect to the run's disk."""
    return {"job": job, "args": list(args), "env": {"FWD_RUNTIME": str(runtime)},
            "replay": job == "fig2-shuffle"}


def _arm_run(arm, **kw):
    r = {"role": "arm", "arm": arm["id"], "scheduler": arm["scheduler"],
         "tunables": dict(arm["tunables"]), "process": None}
    r.update(kw)
    return r


def _alone_run(arm, process, **kw):
    r = {"role": "alone", "arm": arm["id"] if arm else None,
         "scheduler": arm["scheduler"] if arm else BASELINE,
         "tunables": dict(arm["tunables"]) if arm else {},
         "process": process}
    r.update(kw)
    return r


def _estimate(run, runtime, transport=None):
    if run["kind"] == "startup":
        tr = transport or "sd"
        bg = run["background"]
        fg = run["foreground"]["window_s"]
        app = 0
        if run.get("app"):
            app = APP_OVERHEAD_S + min(run["app"]["limit_s"],
                                       APP_EST_S[tr][run["variant"]])
        if not bg:
            return STARTUP_S[tr] + fg + app
        writer = "writer" in bg["streams"]
        return (WARMUP_S + max(fg + app, bg["window_s"]) + STARTUP_S[tr] +
                (WRITER_S[tr] if writer else 0) +
                (TRACED_STARTUP_S[tr] if "blktrace" in run["record"] else 0))
    if run["experiment"] in ("fig2", "fig1"):
        return FIG_S
    if run["experiment"] == "fig7":
        return 300          # 160,000 reads of 1-2 ms, 16 at a time
    return runtime + (TRACED_S if "blktrace" in run["record"] else OVERHEAD_S)


def round_runs(exp, rnd, arms, runtime, card_boot, transport=None,
               plan="full", backgrounds=None):
    """The runs of one round of one experiment, in their order; transport:
    the card's (sd, ufs), None on null_blk; plan: default or full;
    backgrounds: the responsiveness experiment's (None: the plan's)."""
    d = EXPERIMENTS[exp]
    if d.get("schedulers"):
        arms = [a for a in arms if a["scheduler"] in d["schedulers"]]
    rec = d["record"]
    if rec is TRACED and rnd not in TRACED_ROUNDS:
        rec = PLAIN
    rec = [x for x in rec if card_boot or x not in ("card", "mmc_history")]
    # no MMC host on UFS, hence no MMC history
    rec = [x for x in rec if transport != "ufs" or x != "mmc_history"]
    base = dict(experiment=exp, round=rnd, record=rec)
    out = []
    if exp == "twoproc":
        deep, sync = d["processes"]["deep"], d["processes"]["sync"]
        deep_alone = _alone_run(None, deep, variant=None, kind="fio",
                                fio=_fio(d["variants"]["same"],
                                         ["--section=" + deep], runtime), **base)
        keep = d.get("plan_variants", {}).get(plan)
        for var, job in d["variants"].items():
            if keep and var not in keep:
                continue
            entries = [[_arm_run(a, variant=var, kind="fio",
                                 fio=_fio(job, [], runtime), **base)]
                       for a in arms]
            entries.append([_alone_run(None, sync, variant=var, kind="fio",
                                       fio=_fio(job, ["--section=" + sync],
                                                runtime), **base)])
            if var == "same":
                entries.append([deep_alone])
            for e in rotate(entries, rnd):
                out += e
    elif exp == "responsiveness":
        entries = []
        for a in arms:
            e = []
            keep = backgrounds or d.get("plan_backgrounds", {}).get(plan)
            for var, streams in d["backgrounds"].items():
                if keep and var not in keep:
                    continue
                bg = None
                if streams:
                    args = [] if len(streams) > 1 else ["--section=" + streams[0]]
                    bg = dict(_fio(d["background"], args, 3600),
                              streams=list(streams), warmup_s=WARMUP_S,
                              window_s=runtime,
                              dirty_background_bytes=DIRTY_BACKGROUND_BYTES
                              if "writer" in streams else None,
                              dirty_bytes=DIRTY_BYTES
                              if "writer" in streams else None)
                # the job's 200 reads, over a fixed window instead
                fg = dict(_fio(d["foreground"],
                               ["--time_based", "--runtime=%d" % runtime,
                                "--number_ios=0"], runtime),
                          bs=FG_BS, window_s=runtime, region=list(FG_REGION))
                app = ({"limit_s": APP_LIMIT_S[transport or "sd"]}
                       if d.get("app") else None)
                r = _arm_run(a, variant=var, kind="startup", foreground=fg,
                             background=bg, app=app, **base)
                if not bg:
                    # idle: nothing else is dispatched, nothing to trace
                    r["record"] = [x for x in rec
                                   if x not in ("blktrace", "mmc_history")]
                e.append(r)
            entries.append(e)
        for e in rotate(entries, rnd):
            out += e
    elif exp == "deep-nullb":
        deep, sync = d["processes"]["deep"], d["processes"]["sync"]
        entries = [[_alone_run(a, deep, variant=None, kind="fio",
                               fio=_fio(d["job"], ["--section=" + deep], runtime),
                               **base),
                    _arm_run(a, variant=None, kind="fio",
                             fio=_fio(d["job"], [], runtime), **base)]
                   for a in arms]
        entries.append([_alone_run(None, sync, variant=None, kind="fio",
                                   fio=_fio(d["job"], ["--section=" + sync],
                                            runtime), **base)])
        for e in rotate(entries, rnd):
            out += e
    elif "variants" in d:
        for var, job in d["variants"].items():
            for a in rotate(list(arms), rnd):
                out.append(_arm_run(a, variant=var, kind="fio",
                                    fio=_fio(job, [], runtime), **base))
    else:
        for a in rotate(list(arms), rnd):
            out.append(_arm_run(a, variant=None, kind="fio",
                                fio=_fio(d["job"], [], runtime), **base))
    for r in out:
        r["disk"] = d.get("disk", "card")
        r["estimate_s"] = _estimate(r, runtime, transport)
    return out


def run_label(run):
    """What a person reads for a run in progress lines and notes."""
    bits = [run["experiment"]]
    if run.get("variant"):
        bits.append(run["variant"])
    bits.append("round %d" % run["round"])
    if run["role"] == "alone":
        bits.append("%s alone under" % run["process"])
    bits.append(run["arm"] or run["scheduler"])
    return " ".join(bits)


def make_arms(settings):
    arms = [{"id": s, "scheduler": s, "tunables": {}}
            for s in settings["schedulers"]]
    return arms + [dict(v) for v in settings["variants"]]


def make_boots(settings, arms):
    """The boots of the plan, with their runs and ids."""
    boots = []
    runtime = settings["runtime_s"]
    for k in settings["kernels"]:
        devs = []
        firsts = set()
        for c in settings["cards"]:
            preset, over, params = parse_card(c)
            tr = card_transport(c)
            first = tr not in firsts
            firsts.add(tr)
            exps = [e for e in settings["experiments"]
                    if EXPERIMENTS[e]["device"] == "card" or
                    (EXPERIMENTS[e]["device"] == "first-card" and first)]
            if exps:
                # the boot's name: the spec without its transport, and
                # "-ufs" on UFS ("6.12-paper", "6.12-paper-ufs")
                name = ",".join([preset] + ["%s=%s" % kv for kv in over.items()])
                name = re.sub(r"[^A-Za-z0-9_.=+-]", "_", name)
                devs.append(({"kind": "flashcard", "spec": c, "preset": preset,
                              "overrides": over, "params": params,
                              "transport": tr},
                             copy.deepcopy(CARD_DISKS[tr]), exps,
                             name + ("-ufs" if tr == "ufs" else "")))
        # null_blk: a boot for the experiments of plain guests, and one
        # for each that needs a guest of its own (its "vm" options)
        exps = [e for e in settings["experiments"]
                if EXPERIMENTS[e]["device"] == "null_blk"]
        for group in [[e for e in exps if not EXPERIMENTS[e].get("vm")]] + \
                [[e] for e in exps if EXPERIMENTS[e].get("vm")]:
            if not group:
                continue
            disks = {EXPERIMENTS[e]["disk"]: NULLB_DISKS[EXPERIMENTS[e]["disk"]]
                     for e in group}
            vm = EXPERIMENTS[group[0]].get("vm")
            dev = {"kind": "null_blk"}
            if vm:
                dev["vm"] = dict(vm)
            devs.append((dev, disks, group, group[0] if vm else "nullb"))
        for dev, disks, exps, name in devs:
            bid = "%s-%s" % (k, name)
            runs = []
            nrounds = max((EXPERIMENTS[e]["rounds"] or settings["rounds"])
                          for e in exps)
            for rnd in range(1, nrounds + 1):
                for e in exps:
                    if rnd <= (EXPERIMENTS[e]["rounds"] or settings["rounds"]):
                        runs += round_runs(e, rnd, arms, runtime,
                                           dev["kind"] == "flashcard",
                                           dev.get("transport"),
                                           settings.get("plan", "default"),
                                           settings.get("backgrounds"))
            if dev.get("vm", {}).get("icount") is not None:
                for r in runs:
                    r["estimate_s"] = round(r["estimate_s"] * ICOUNT_WALL)
            for n, r in enumerate(runs, 1):
                r["seq"] = n
                r["id"] = "%s.%03d" % (bid, n)
                r["label"] = run_label(r)
            b = {"id": bid, "kernel": k, "device": dev, "disks": disks,
                 "runs": runs}
            if any(r.get("app") for r in runs):
                b["app_fs"] = {"start": APP_FS_START, "size": APP_FS_SIZE,
                               "program": "python3",
                               "modules": list(APP_MODULES)}
            b["estimate_s"] = boot_estimate(runs, dev.get("transport"))
            boots.append(b)
    return boots


def boot_estimate(runs, transport=None):
    """Seconds of a boot that runs @runs: the boot, the real program's
    file system if a run starts it, the runs."""
    prep = APP_PREPARE_S[transport or "sd"]
    return (BOOT_S + (prep if any(r.get("app") for r in runs) else 0)
            + sum(r["estimate_s"] for r in runs))


def host_state():
    st = {"nproc": os.cpu_count()}
    try:
        with open("/proc/loadavg") as f:
            st["loadavg"] = [float(x) for x in f.read().split()[:3]]
    except OSError:
        pass
    st["uname"] = " ".join(os.uname()[2:3])
    try:
        out = subprocess.run(["pgrep", "-c", "qemu-system"], capture_output=True,
                             text=True).stdout.strip()
        st["qemu_running"] = int(out or 0)
    except (OSError, ValueError):
        st["qemu_running"] = None
    return st


def git_state(top=TOP):
    def git(*a):
        r = subprocess.run(["git", "-C", top] + list(a), capture_output=True,
                           text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    return {"commit": git("rev-parse", "--short=12", "HEAD"),
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def command_line(env):
    """The command that plans the same again: the BENCH_* settings given,
    and make bench FULL=1 for the full matrix."""
    sets = ["%s=%s" % (k, shquote(env[k])) for k in SETTINGS
            if env.get(k, "").strip() and k != "BENCH_FULL"]
    full = ["FULL=1"] if plan_kind(env) == "full" else []
    return " ".join(sets + ["make bench"] + full)


def shquote(s):
    return s if re.fullmatch(r"[A-Za-z0-9_.,:=+/-]+", s) else \
        "'" + s.replace("'", "'\\''") + "'"


def make_plan(env, top=TOP, now=None, host=None, git=None):
    """The whole plan (a dict) of the settings in env."""
    settings = settings_from_env(env, top)
    arms = make_arms(settings)
    boots = make_boots(settings, arms)
    now = now or datetime.datetime.now(datetime.timezone.utc)
    exps = {}
    for e in settings["experiments"]:
        d = EXPERIMENTS[e]
        exps[e] = {k: v for k, v in d.items() if k not in ("plans",)}
        exps[e]["rounds"] = d["rounds"] or settings["rounds"]
    g = git if git is not None else git_state(top)
    return {"format": 1, "kind": "fwdsched-bench-plan",
            "plan": settings["plan"],
            "created": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": g.get("commit"), "dirty": g.get("dirty"),
            "command": command_line(env), "settings": settings,
            "host": host if host is not None else host_state(),
            "baseline": BASELINE, "arms": arms, "experiments": exps,
            "boots": boots,
            "estimate_s": sum(b["estimate_s"] for b in boots)}


def summary(plan):
    n = sum(len(b["runs"]) for b in plan["boots"])
    s = plan["settings"]
    lines = ["%s plan: %d boots, %d runs, about %d min (%d rounds, %d s per "
             "timed job)%s"
             % (s.get("plan", "default"), len(plan["boots"]), n,
                round(plan["estimate_s"] / 60), s["rounds"], s["runtime_s"],
                "; the full matrix: make bench FULL=1"
                if s.get("plan") != "full" else "")]
    for b in plan["boots"]:
        exps = []
        for r in b["runs"]:
            if r["experiment"] not in exps:
                exps.append(r["experiment"])
        lines.append("  %s: %d runs, about %d min: %s" %
                     (b["id"], len(b["runs"]), round(b["estimate_s"] / 60),
                      " ".join(exps)))
    return "\n".join(lines)


def vm_args(dev):
    """The guest's options of a boot's device as k=v,... (vm-run's --k v),
    or -."""
    vm = dev.get("vm") or {}
    return ",".join("%s=%s" % kv for kv in sorted(vm.items())) or "-"


def print_boots(boots):
    """One line per boot for tools/bench: id, kernel, card spec or -,
    estimated seconds, the guest's options (vm_args())."""
    for b in boots:
        print("%s %s %s %d %s" % (b["id"], b["kernel"],
                                  b["device"].get("spec", "-"),
                                  b["estimate_s"], vm_args(b["device"])))


def run_done(outdir, run_id):
    """Whether the run was recorded and ended ok (runs/<id>/run.json)."""
    try:
        with open(os.path.join(outdir, "runs", run_id, "run.json")) as f:
            return json.load(f).get("status") == "ok"
    except (OSError, ValueError):
        return False


def unfinished(plan, outdir):
    """The boots of @plan with runs not recorded ok in @outdir, each with
    its estimate cut down to those runs (for tools/bench --resume, and
    its second boot after a guest died)."""
    out = []
    for b in plan["boots"]:
        left = [r for r in b["runs"] if not run_done(outdir, r["id"])]
        if left:
            out.append(dict(b, estimate_s=boot_estimate(
                left, b["device"].get("transport"))))
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    try:
        if argv[0] == "check" and len(argv) == 1:
            plan = make_plan(os.environ, host={}, git={})
            print(summary(plan))
            return 0
        if argv[0] == "plan" and len(argv) == 2:
            plan = make_plan(os.environ)
            os.makedirs(argv[1], exist_ok=True)
            with open(os.path.join(argv[1], "plan.json"), "w") as f:
                json.dump(plan, f, indent=1)
                f.write("\n")
            print(summary(plan), file=sys.stderr)
            print_boots(plan["boots"])
            return 0
        if argv[0] == "unfinished" and len(argv) == 2:
            with open(os.path.join(argv[1], "plan.json")) as f:
                plan = json.load(f)
            print_boots(unfinished(plan, argv[1]))
            return 0
    except SettingError as e:
        print("bench: %s" % e, file=sys.stderr)
        return 2
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
