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
before anything boots):

  BENCH_KVERS        kernels, of tools/kernels              (6.12)
  BENCH_CARDS        flash-card presets, each PRESET[,key=value...] as
                     tools/flashcard takes it     (paper fig56 symmetric)
  BENCH_EXPERIMENTS  experiments, see EXPERIMENTS below       (DEFAULT)
  BENCH_SCHEDS       schedulers; must include mq-deadline, the baseline
                     of every ratio        (none mq-deadline kyber bfq
                                                              fwdsched);
                     also deadline-wrap, mq-deadline wrapping to the
                     lowest sector (tools/setup/mq-deadline-wrap; not
                     on 6.1)
  BENCH_VARIANTS     extra arms: a scheduler with tunables,
                     SCHED:name=value[,name=value...], e.g.
                     "fwdsched:fair_slack=0 fwdsched:dispatch_depth=0"
  BENCH_ROUNDS       interleaved rounds of every comparison         (3)
  BENCH_RUNTIME      seconds per timed job                          (5)

Plan (plan.json), format 1:

  settings, host (state at planning), commit, command, created;
  arms: [{id, scheduler, tunables}] -- the things compared side by side
        (each scheduler with its defaults, then each variant);
  baseline: the arm every ratio divides by (mq-deadline);
  experiments: {id: {title, device, rounds, ...}} -- for the report;
  boots: [{id, kernel, device: {kind: flashcard|null_blk, ...},
           disks: {key: {kind, name, attrs}}, estimate_s, runs: [...]}]

  A run: id (unique in the plan), seq (its place in the boot), experiment,
  variant (None or the experiment's variant: "same"/"apart", "idle"/
  "writer"/..., a job of a family), round (1..), role ("arm": an arm under
  comparison; "alone": one process of a multi-process job alone, for its
  demand), arm (the arm's id, or None for an alone run that belongs to no
  arm), process (the fio section an alone run keeps), scheduler, tunables,
  disk (a key of the boot's disks), kind ("fio" or "startup"), fio
  ({job, args, env}) or foreground/background, record (what to record:
  fio, card, diskstats, blktrace, mmc_history, debugfs), estimate_s, label
  (for people: progress lines and notes; nothing parses it).

Order: rounds are the outer loop of a boot, experiments the next, and
within one round of one experiment the entries (arms, and alone runs)
are rotated by one place per round, so that every entry runs in every
position over as many rounds as there are entries.
"""

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
DEFAULT_CARDS = ("paper", "fig56", "symmetric")
TUNABLE_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")

# Seconds a run costs beyond its fio runtime under TCG (fio's own start,
# scheduler switch, caches, the card's counters, records over 9p; with
# blktrace its start, stop and blkparse), and a boot beyond its runs.
# A start-up run beside the buffered writer costs WRITER_S more, traced
# or not: the writeback of up to vm.dirty_bytes after the writer stops,
# and the writer's dirty limit slowing every other write meanwhile.
# Measured on an idle 2-core host (runs 20261125-120149 on 6.12 and
# 20261125-160916 on 6.1, medians); used for the time estimates only.
OVERHEAD_S = 8
TRACED_S = 12
STARTUP_S = 10
TRACED_STARTUP_S = 12
WRITER_S = 30
FIG_S = 8
BOOT_S = 60

# The responsiveness experiment's background (see fio-jobs/startup-*.fio).
WARMUP_S = 3
DIRTY_BACKGROUND_BYTES = 4 << 20
DIRTY_BYTES = 16 << 20
FG_BS = 16384
FG_COUNT = 200
# The foreground stops after FG_LIMIT_S even if its 200 reads are not
# done: under a buffered writer some schedulers make each read wait for a
# whole batch of 512 KiB writes (about 0.5 s a read, 2 minutes a start-up
# on the paper card).  About 15 times a start-up on the idle card (0.6 to
# 0.7 s there); a start-up that reaches it is reported as at least that
# long.
FG_LIMIT_S = 10

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
CARD_DISK = {"card": {"kind": "mmc", "name": "mmcblk0", "attrs": {}}}

TRACED = ["fio", "card", "diskstats", "blktrace", "mmc_history", "debugfs"]
PLAIN = ["fio", "card", "diskstats", "debugfs"]
# Experiments recorded TRACED are traced in round 1 only: the trace gives
# the dispatch order, Fig 4 and 5/6 and the responsiveness analysis, and
# costs guest time (blkparse of a writer's run under TCG takes half a
# minute); the other rounds record PLAIN.  Within a round every arm is
# recorded alike.
TRACED_ROUNDS = (1,)

# The experiments.  device: "card" runs on every card of BENCH_CARDS
# ("first-card": on the first one only), "null_blk" on the null_blk boot.
# rounds: None follows BENCH_ROUNDS, a number fixes it (illustrations of
# the papers' figures, not comparisons judged by a target).  schedulers,
# if given, keeps the arms of those schedulers only (of BENCH_SCHEDS).
EXPERIMENTS = {
    "headline": dict(
        title="16 × 4 KiB random reads in 128 MiB (paper Fig 3, block layer)",
        device="card", rounds=None, default=True,
        job="fig3-r16-4k-direct-128m", record=TRACED),
    "twoproc": dict(
        title="a deep async reader (iodepth 32) against a synchronous reader",
        device="card", rounds=None, default=True,
        variants={"same": "async-vs-sync-2proc",
                  "apart": "async-vs-sync-2proc-apart"},
        processes={"deep": "async", "sync": "sync"},
        # the baseline, the fairness scheduler and ours (and their
        # variants): 9 runs a round on each card instead of 13
        schedulers=("mq-deadline", "bfq", "fwdsched"), record=PLAIN),
    "responsiveness": dict(
        title="application start-up (200 × 16 KiB reads, one at a time) "
              "under background I/O",
        device="first-card", rounds=None, default=True,
        foreground="startup-foreground", background="startup-background",
        backgrounds={"idle": [], "writer": ["writer"], "reader": ["reader"],
                     "both": ["writer", "reader"]},
        record=TRACED),
    "fig2": dict(
        title="1,024 one-byte reads at the 1 MiB block starts of 1 GiB "
              "(paper Fig 2)",
        device="first-card", rounds=1, default=True,
        variants={"sort": "fig2-sort", "shuffle": "fig2-shuffle",
                  "rand": "fig2-rand"},
        record=PLAIN),
    "fig3-1byte": dict(
        title="16 threads of one-byte random reads in 128 MiB (paper Fig 3)",
        device="first-card", rounds=1, default=False,
        job="fig3-r16-1byte-128m", record=PLAIN),
    "fig1": dict(
        title="1,000 sequential then 1,000 random 4 KiB reads (paper Fig 1)",
        device="first-card", rounds=1, default=False,
        job="fig1-seq-vs-rand-4k", record=PLAIN),
    "fig7": dict(
        title="16 threads × 10,000 one-byte random reads over 1 GiB "
              "(paper Fig 7)",
        device="first-card", rounds=1, default=False,
        job="fig7-r16x10000-1byte-1g", record=PLAIN),
    "mixed": dict(
        title="beyond the papers: two-process and mixed jobs",
        device="first-card", rounds=1, default=False,
        variants={"seq-vs-rand": "seq-vs-rand-2proc",
                  "writer-vs-reader": "writer-vs-reader-2proc",
                  "randrw": "mixed-randrw"},
        record=PLAIN),
    "deep-nullb": dict(
        title="a deep reader (32 in flight) with and without a synchronous "
              "reader, null_blk with 1 ms completions, depth 64, 2 queues",
        device="null_blk", disk="deep", rounds=None, default=True,
        job="async-vs-sync-2proc", processes={"deep": "async", "sync": "sync"},
        record=["fio", "diskstats", "debugfs"]),
    "nullb-cpu": dict(
        title="16 × 4 KiB random reads on null_blk without latency "
              "(the schedulers' CPU cost)",
        device="null_blk", disk="cpu", rounds=None, default=True,
        job="fig3-r16-4k-direct-128m", record=["fio", "diskstats", "debugfs"]),
}

OBSOLETE = {
    "BENCH_MODELS": "BENCH_CARDS",
    "BENCH_JOBS": "BENCH_EXPERIMENTS",
    "BENCH_SYM_JOBS": "BENCH_EXPERIMENTS",
    "BENCH_SLACKS": "BENCH_VARIANTS (e.g. fwdsched:fair_slack=0)",
    "BENCH_NULLB": "BENCH_EXPERIMENTS (nullb-cpu, deep-nullb)",
    "BENCH_NULLB_ROUNDS": "BENCH_ROUNDS",
}
SETTINGS = ("BENCH_KVERS", "BENCH_CARDS", "BENCH_EXPERIMENTS",
            "BENCH_SCHEDS", "BENCH_VARIANTS", "BENCH_ROUNDS",
            "BENCH_RUNTIME")


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


def parse_card(spec):
    """(preset, overrides, params) of a card spec PRESET[,key=value...]."""
    parts = spec.split(",")
    over = {}
    for p in parts[1:]:
        if "=" not in p:
            raise SettingError("BENCH_CARDS: %r: %r is not key=value" %
                               (spec, p))
        k, v = p.split("=", 1)
        over[k] = v
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


def settings_from_env(env, top=TOP):
    """Validated settings of the BENCH_* variables of env (a dict)."""
    for old, new in OBSOLETE.items():
        if env.get(old, "").strip():
            raise SettingError("%s is no longer read; use %s" % (old, new))
    known = kernels_known(top)
    kernels = _words(env, "BENCH_KVERS", ["6.12"])
    for k in kernels:
        if k not in known:
            raise SettingError("BENCH_KVERS: unknown kernel %r (%s)" %
                               (k, ", ".join(known)))
    _no_dups("BENCH_KVERS", kernels)
    cards = _words(env, "BENCH_CARDS", DEFAULT_CARDS)
    for c in cards:
        parse_card(c)
    _no_dups("BENCH_CARDS", cards)
    exps = _words(env, "BENCH_EXPERIMENTS",
                  [e for e, d in EXPERIMENTS.items() if d["default"]])
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
    rounds = _int(env, "BENCH_ROUNDS", 3, 1, 99)
    runtime = _int(env, "BENCH_RUNTIME", 5, 1, 3600)
    if any(EXPERIMENTS[e]["device"] != "null_blk" for e in exps) and not cards:
        raise SettingError("BENCH_CARDS: empty, but %s run on the card" %
                           ", ".join(e for e in exps
                                     if EXPERIMENTS[e]["device"] != "null_blk"))
    # schedulers in the fixed order, whatever the order given
    scheds = [s for s in KNOWN_SCHEDULERS if s in scheds]
    return {"kernels": kernels, "cards": cards, "experiments": exps,
            "schedulers": scheds, "variants": variants, "rounds": rounds,
            "runtime_s": runtime}


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


def _estimate(run, runtime):
    if run["kind"] == "startup":
        bg = run["background"]
        if not bg:
            return STARTUP_S
        # a writer often keeps the foreground to its limit
        writer = "writer" in bg["streams"]
        fg = FG_LIMIT_S if writer else bg["window_s"]
        return (WARMUP_S + max(fg, bg["window_s"]) + STARTUP_S +
                (WRITER_S if writer else 0) +
                (TRACED_STARTUP_S if "blktrace" in run["record"] else 0))
    if run["experiment"] in ("fig2", "fig1"):
        return FIG_S
    if run["experiment"] == "fig7":
        return 300          # 160,000 reads of 1-2 ms, 16 at a time
    return runtime + (TRACED_S if "blktrace" in run["record"] else OVERHEAD_S)


def round_runs(exp, rnd, arms, runtime, card_boot):
    """The runs of one round of one experiment, in their order."""
    d = EXPERIMENTS[exp]
    if d.get("schedulers"):
        arms = [a for a in arms if a["scheduler"] in d["schedulers"]]
    rec = d["record"]
    if rec is TRACED and rnd not in TRACED_ROUNDS:
        rec = PLAIN
    rec = [x for x in rec if card_boot or x not in ("card", "mmc_history")]
    base = dict(experiment=exp, round=rnd, record=rec)
    out = []
    if exp == "twoproc":
        deep, sync = d["processes"]["deep"], d["processes"]["sync"]
        deep_alone = _alone_run(None, deep, variant=None, kind="fio",
                                fio=_fio(d["variants"]["same"],
                                         ["--section=" + deep], runtime), **base)
        for var, job in d["variants"].items():
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
            for var, streams in d["backgrounds"].items():
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
                fg = dict(_fio(d["foreground"], ["--runtime=%d" % FG_LIMIT_S],
                               runtime), bs=FG_BS, count=FG_COUNT,
                          limit_s=FG_LIMIT_S)
                r = _arm_run(a, variant=var, kind="startup", foreground=fg,
                             background=bg, **base)
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
        r["estimate_s"] = _estimate(r, runtime)
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
        for i, c in enumerate(settings["cards"]):
            preset, over, params = parse_card(c)
            exps = [e for e in settings["experiments"]
                    if EXPERIMENTS[e]["device"] == "card" or
                    (EXPERIMENTS[e]["device"] == "first-card" and i == 0)]
            if exps:
                devs.append(({"kind": "flashcard", "spec": c, "preset": preset,
                              "overrides": over, "params": params},
                             dict(CARD_DISK), exps, re.sub(r"[^A-Za-z0-9_.=+-]",
                                                           "_", c)))
        exps = [e for e in settings["experiments"]
                if EXPERIMENTS[e]["device"] == "null_blk"]
        if exps:
            disks = {EXPERIMENTS[e]["disk"]: NULLB_DISKS[EXPERIMENTS[e]["disk"]]
                     for e in exps}
            devs.append(({"kind": "null_blk"}, disks, exps, "nullb"))
        for dev, disks, exps, name in devs:
            bid = "%s-%s" % (k, name)
            runs = []
            nrounds = max((EXPERIMENTS[e]["rounds"] or settings["rounds"])
                          for e in exps)
            for rnd in range(1, nrounds + 1):
                for e in exps:
                    if rnd <= (EXPERIMENTS[e]["rounds"] or settings["rounds"]):
                        runs += round_runs(e, rnd, arms, runtime,
                                           dev["kind"] == "flashcard")
            for n, r in enumerate(runs, 1):
                r["seq"] = n
                r["id"] = "%s.%03d" % (bid, n)
                r["label"] = run_label(r)
            boots.append({"id": bid, "kernel": k, "device": dev,
                          "disks": disks, "runs": runs,
                          "estimate_s": BOOT_S + sum(r["estimate_s"]
                                                     for r in runs)})
    return boots


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
    sets = ["%s=%s" % (k, shquote(env[k])) for k in SETTINGS
            if env.get(k, "").strip()]
    return " ".join(sets + ["make bench"])


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
        exps[e] = {k: v for k, v in d.items() if k not in ("default",)}
        exps[e]["rounds"] = d["rounds"] or settings["rounds"]
    g = git if git is not None else git_state(top)
    return {"format": 1, "kind": "fwdsched-bench-plan",
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
    lines = ["%d boots, %d runs, about %d min (%d rounds, %d s per timed job)"
             % (len(plan["boots"]), n, round(plan["estimate_s"] / 60),
                s["rounds"], s["runtime_s"])]
    for b in plan["boots"]:
        exps = []
        for r in b["runs"]:
            if r["experiment"] not in exps:
                exps.append(r["experiment"])
        lines.append("  %s: %d runs, about %d min: %s" %
                     (b["id"], len(b["runs"]), round(b["estimate_s"] / 60),
                      " ".join(exps)))
    return "\n".join(lines)


def print_boots(boots):
    """One line per boot for tools/bench: id, kernel, card spec or -,
    estimated seconds."""
    for b in boots:
        print("%s %s %s %d" % (b["id"], b["kernel"],
                               b["device"].get("spec", "-"), b["estimate_s"]))


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
            out.append(dict(b, estimate_s=BOOT_S + sum(r["estimate_s"]
                                                       for r in left)))
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
