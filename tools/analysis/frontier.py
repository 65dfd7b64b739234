#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""frontier: the most throughput any dispatch policy reaches in the
two-process experiment, at a given share for the synchronous reader.

usage: frontier.py --card SPEC --shape same|apart --share X
                   [--think-us US] [--emu-us US] [--metric device|total]
                   [--points]

Prints the frontier at share X (modelled device IOPS unless --metric
total), mq-deadline's point for scale, and the frontier over shares 0,
0.05, ... with the policies that reach it; --points lists every policy's
point.  SPEC is a flash-card preset with overrides as BENCH_CARDS takes
it (paper, fig56,back_us=9000).  Bad input: exit 2 with a message naming
the problem.

Library:
  frontier_iops(card, shape, share)   the frontier at share (a float)
  best_mix(card, shape, share)        the same, and how it is reached
  judged_share(card, shape, share)    the share an arm is judged at
  frontier(card, shape)               every policy's point (cached)
  best_of(points, alone, share)       the frontier of given points
  make_shape(name, think_us, emu_us)  the experiment's shape
  card_params(card)                   the card's cost parameters

What it answers.  The two-process experiment (benchplan.py "twoproc";
fio-jobs/async-vs-sync-2proc.fio and -apart.fio) runs a deep reader (32
random 4 KiB reads in flight) beside a synchronous reader (one random 4 KiB
read at a time).  On a card that serves one command at a time no
scheduler can give the synchronous reader what it gets alone and keep the
deep reader's sweep: each synchronous read is a jump away from the sweep
and back, and it comes while a deep read is being served.  The report
judges a scheduler's modelled device IOPS against the most that any
policy of a wide family reaches at the share the scheduler gave the
synchronous reader -- a bound a scheduler can approach -- rather than
against mq-deadline's total, which it reaches by giving that reader
almost nothing.

The model (a discrete-event simulation; times in microseconds):

* The card (tools/flashcard/costmodel.py: its presets, overrides and
  cost_us()) serves one command at a time.  A command occupies it for its
  modelled service time, the cost of the jump from the end of the previous
  command, plus emu_us of host and emulation cost, the same for every
  command (default 0: a host that costs nothing).
* The deep reader keeps DEEP_DEPTH reads outstanding: each completion
  submits its next read at once, uniformly random and 4 KiB aligned in its
  region.  The synchronous reader submits a read, waits for it, thinks for
  think_us (from the completion to its next request reaching the
  scheduler), and so on.  Regions, as in the job files: "same", both in
  [0, 128 MiB); "apart", the deep reader there and the synchronous one in
  [2 GiB, 2 GiB + 128 MiB).
* Whenever the card is free a policy picks the next command from the
  reads waiting (nothing is preempted), or leaves the card idle, waiting
  for the synchronous reader (anticipation).
* The policies (policies()) range from starving the synchronous reader to
  serving it at once with idling: FIFO; C-LOOK; mq-deadline (upward from
  the last command, at a batch end or with nothing above the oldest read
  if it expired or nothing is above; fifo_batch 16, read_expire 500 ms);
  the synchronous read served at once, the sweep then continuing from it
  or returning to where it was (a detour); served after at most k deep
  reads, or with probability p at each pick; served only after it waited
  a time; CFQ-like slices (the synchronous reader's slice with idling for
  its think time, then a batch of deep reads); and an oracle that knows
  when the next synchronous read comes and fills the gap with the deep
  reads that end before it.  Each runs WARMUP then COMMANDS commands; all
  policies see the same seeded random offsets (deterministic).
* Per policy, over the COMMANDS: share = the synchronous reader's IOPS ÷
  min(its IOPS alone, total IOPS / 2), as report.py computes
  sync_share_fraction (alone: the same reads without the deep reader);
  modelled device IOPS = commands ÷ (modelled service time + time the
  policy left the card idle), the throughput of the order on a card whose
  host costs nothing; total IOPS = commands ÷ elapsed time (with emu_us).
  For a policy that never idles, device IOPS is what the flash card's
  counters give (commands ÷ modelled busy time); the counters cannot see
  idling, so for an arm that idles the report's figure is too high by the
  time it idled.  Counting idle time as free would make the best policy
  at a high share one that idles for the synchronous reader most of the
  time and serves the deep reader in short bursts.
* Two policies run in turn reach every time mix of their rates: with
  policy a a fraction lam of the time, the synchronous reader's and the
  total rate, and the device time per second, are the lam-weighted means.
  The frontier at share x is the most IOPS of any policy or mix of two
  whose share is x or more (best_of()).  A share is not linear in lam (it
  divides by min(alone, total / 2)), nor is device IOPS (a ratio), so the
  straight segment between two points in (share, IOPS) is not what their
  mix reaches; best_of() solves the mix exactly: the IOPS of a mix are
  monotonic in lam, so the best is at an end of the range of lam that
  keeps the share, and a mix of more than two policies gains nothing
  (the optimum of a linear-fractional objective over a simplex cut by one
  of two half-spaces lies on an edge).  A share above every policy's is
  taken as the largest.
* An arm is judged at its share, but at most at the largest share of a
  policy that leaves the deep reader its own max-min share (judged_share):
  more than that is given at the deep reader's expense, and judged at its
  own share a scheduler that starves the deep reader would be compared
  only with policies that starve it as much.

What it leaves out: the block layer's own costs and merges, the MMC
core's preparing of the next request while one is served, CPU contention
on the host, the card's per-piece transfers (it charges a command as one
piece).  The frontier is the best of the policies it knows on the host it
is told about, not a proof that no policy does better; the report computes
it at the think time and host cost measured in the run.
"""

import bisect
import functools
import math
import os
import random
import sys
from collections import namedtuple

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "tools", "flashcard"))
import costmodel  # noqa: E402

BS = 4096
MIB = 1 << 20
DEEP_DEPTH = 32
# The regions of the job files: (offset, size) of each reader.
REGIONS = {"same": {"deep": (0, 128 * MIB), "sync": (0, 128 * MIB)},
           "apart": {"deep": (0, 128 * MIB), "sync": (2048 * MIB, 128 * MIB)}}
DEFAULT_THINK_US = 1000.0
DEFAULT_EMU_US = 0.0
# Up to a second of think time or emulation per command: more is a typo.
MAX_US = 1e6
COMMANDS = 8000
WARMUP = 500
ALONE_COMMANDS = 4000
SEED = 20130117
METRICS = ("device", "total")
# The deep reader counts as keeping its max-min share within this
# fraction of it (the simulation's noise is about 1 %).
FAIR_TOLERANCE = 0.03
# mq-deadline's defaults (block/mq-deadline.c)
DD_FIFO_BATCH = 16
DD_READ_EXPIRE_US = 500000.0

Shape = namedtuple("Shape", "name think_us emu_us")
Point = namedtuple("Point", "policy share device_iops total_iops sync_iops "
                            "deep_iops device_fraction idle_fraction "
                            "queue_us wait_x_alone deep_share")


class FrontierError(ValueError):
    """Bad input: str() names the problem."""


def _number(what, x, lo, hi):
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise FrontierError("%s: %r is not a number" % (what, x)) from None
    if not math.isfinite(v):
        raise FrontierError("%s: %r is not a finite number" % (what, x))
    if v < lo or v > hi:
        raise FrontierError("%s: %g is outside [%g, %g]" % (what, v, lo, hi))
    return v


def make_shape(name, think_us=DEFAULT_THINK_US, emu_us=DEFAULT_EMU_US):
    """The two-process experiment's shape: its variant ("same" or
    "apart"), the synchronous reader's think time and the host's cost per
    command, in microseconds."""
    if name not in REGIONS:
        raise FrontierError("shape %r: unknown (choose one of %s)" %
                            (name, ", ".join(sorted(REGIONS))))
    return Shape(name, _number("think_us", think_us, 0, MAX_US),
                 _number("emu_us", emu_us, 0, MAX_US))


def _shape(shape):
    if isinstance(shape, Shape):
        return make_shape(*shape)
    return make_shape(shape)


def card_params(card):
    """Validated cost parameters of a card: a preset name, a spec
    "PRESET[,key=value...]" as BENCH_CARDS takes it, or a parameter dict
    (a plan's boot["device"]["params"])."""
    if isinstance(card, dict):
        missing = [k for k in costmodel.PARAMS if k not in card]
        if missing:
            raise FrontierError("card parameters lack %s" % ", ".join(missing))
        over = {k: card[k] for k in costmodel.PARAMS}
        preset = "paper"
    elif isinstance(card, str) and card:
        parts = card.split(",")
        preset, over = parts[0], {}
        for p in parts[1:]:
            if "=" not in p:
                raise FrontierError("card %r: %r is not key=value" % (card, p))
            k, v = p.split("=", 1)
            over[k] = v
    else:
        raise FrontierError("card %r: not a preset, spec or parameter dict" %
                            (card,))
    try:
        return costmodel.make_params(preset, **over)
    except costmodel.ParamError as e:
        raise FrontierError("card %r: %s" % (card, e)) from None


def _key(params):
    return tuple(float(params[k]) for k in costmodel.PARAMS)


# ---------------------------------------------------------------- simulation

class Sim:
    """One run of one policy.  The policy reads: now, head (the end of the
    last command), sweep (the end of the last deep command), offs (the
    deep reader's waiting reads, sorted), arr (their submission times, in
    the order of offs), sync (the synchronous reader's waiting read,
    (offset, submitted) or None), sync_next (when its next read comes
    while it thinks, else None), sync_done (when its last read
    completed), deep_since_sync (deep commands since its read came),
    cost(offset) and rng (the policy's own random numbers)."""

    def __init__(self, params, shape, seed):
        self.params = params
        self.emu = shape.emu_us
        self.think = shape.think_us
        reg = REGIONS[shape.name]
        self._deep_rng = random.Random(seed * 3 + 1)
        self._sync_rng = random.Random(seed * 3 + 2)
        self.rng = random.Random(seed * 3 + 3)
        self._deep_reg = reg["deep"]
        self._sync_reg = reg["sync"]
        self.now = 0.0
        self.head = None
        self.sweep = 0
        self.offs, self.arr = [], []
        for _ in range(DEEP_DEPTH):
            self._add_deep(0.0)
        self.sync = (self._sync_offset(), 0.0)
        self.sync_next = None
        self.sync_done = 0.0
        self.deep_since_sync = 0

    def _deep_offset(self):
        lo, size = self._deep_reg
        return lo + self._deep_rng.randrange(size // BS) * BS

    def _sync_offset(self):
        lo, size = self._sync_reg
        return lo + self._sync_rng.randrange(size // BS) * BS

    def _add_deep(self, t):
        off = self._deep_offset()
        i = bisect.bisect_right(self.offs, off)
        self.offs.insert(i, off)
        self.arr.insert(i, t)

    def cost(self, offset):
        return costmodel.cost_us(self.head, offset, BS, self.params)

    def above(self, pos):
        """Index of the lowest waiting deep read at or above pos, or None."""
        i = bisect.bisect_left(self.offs, pos)
        return i if i < len(self.offs) else None

    def run(self, policy, commands, warmup):
        policy.reset(self)
        served = 0
        mark = None
        busy = idle = 0.0
        n_sync = n_deep = 0
        lat = queued = 0.0
        while served < commands + warmup:
            if self.sync is None and self.sync_next is not None and \
                    self.sync_next <= self.now:
                self.sync = (self._sync_offset(), self.sync_next)
                self.sync_next = None
                self.deep_since_sync = 0
            act = policy.pick(self)
            if act[0] == "idle":
                wake = act[1]
                if self.sync_next is not None:
                    wake = min(wake, self.sync_next)
                if not wake > self.now:
                    raise RuntimeError("%s idles without a wake-up" %
                                       policy.name)
                if mark is not None:
                    idle += wake - self.now
                self.now = wake
                continue
            if served == warmup:
                mark = self.now
            counted = served >= warmup
            if act[0] == "sync":
                off, sub = self.sync
            else:
                off = self.offs[act[1]]
            c = self.cost(off)
            start = self.now
            self.now += c + self.emu
            self.head = off + BS
            if act[0] == "sync":
                self.sync = None
                self.sync_done = self.now
                self.sync_next = self.now + self.think
                if counted:
                    n_sync += 1
                    lat += self.now - sub
                    queued += start - sub
            else:
                del self.offs[act[1]]
                del self.arr[act[1]]
                self.sweep = off + BS
                if self.sync is not None:
                    self.deep_since_sync += 1
                self._add_deep(self.now)
                if counted:
                    n_deep += 1
            if counted:
                busy += c
            served += 1
        span = self.now - mark
        return dict(sync=n_sync, deep=n_deep, busy_us=busy, idle_us=idle,
                    span_us=span,
                    sync_lat_us=lat / n_sync if n_sync else None,
                    sync_queue_us=queued / n_sync if n_sync else None)


def sync_alone(params, shape, seed=SEED, commands=ALONE_COMMANDS):
    """The synchronous reader alone: (IOPS, mean latency in us), with the
    same offsets as beside the deep reader."""
    sim = Sim(params, shape, seed)
    head = None
    total = lat = 0.0
    for _ in range(commands):
        off = sim._sync_offset()
        c = costmodel.cost_us(head, off, BS, params) + shape.emu_us
        head = off + BS
        lat += c
        total += c + shape.think_us
    return commands / total * 1e6, lat / commands


# ---------------------------------------------------------------- policies

def _clook(sim, pos, with_sync=True):
    """C-LOOK from pos over the deep reads (and the synchronous one):
    ("deep", index) or ("sync",)."""
    i = sim.above(pos)
    s = sim.sync[0] if (with_sync and sim.sync is not None) else None
    if s is not None and s >= pos and (i is None or s < sim.offs[i]):
        return ("sync",)
    if i is not None:
        return ("deep", i)
    if s is not None and s < sim.offs[0]:
        return ("sync",)
    return ("deep", 0)


class Policy:
    name = "?"

    def reset(self, sim):
        pass


def _oldest(sim):
    """The read waiting longest: (("deep", index) or ("sync",), since)."""
    j = min(range(len(sim.arr)), key=sim.arr.__getitem__)
    if sim.sync is not None and sim.sync[1] < sim.arr[j]:
        return ("sync",), sim.sync[1]
    return ("deep", j), sim.arr[j]


class Fifo(Policy):
    """In the order of arrival (the "none" scheduler's order, on a card
    that takes one command at a time)."""
    name = "fifo"

    def pick(self, sim):
        return _oldest(sim)[0]


class CLook(Policy):
    """One-way ascending sweep over every waiting read, wrapping to the
    lowest."""
    name = "c-look"

    def pick(self, sim):
        return _clook(sim, sim.head or 0)


class Deadline(Policy):
    """mq-deadline's read dispatch: the lowest read at or above the last
    command's end while a batch lasts (fifo_batch); at the end of a batch,
    or with nothing above, the oldest read if it expired or nothing is
    above, else the next above."""
    name = "mq-deadline"

    def reset(self, sim):
        self.batching = 0

    def pick(self, sim):
        pos = sim.head or 0
        i = sim.above(pos)
        nxt = None
        if sim.sync is not None and sim.sync[0] >= pos and \
                (i is None or sim.sync[0] < sim.offs[i]):
            nxt = ("sync",)
        elif i is not None:
            nxt = ("deep", i)
        if nxt is not None and self.batching < DD_FIFO_BATCH:
            self.batching += 1
            return nxt
        old, t = _oldest(sim)
        self.batching = 1
        if nxt is None or sim.now - t >= DD_READ_EXPIRE_US:
            return old
        return nxt


class SyncFirst(Policy):
    """The synchronous read is served once it waited for k deep
    commands (k=0: at once), or at a decision with probability p, or once
    it waited wait_us; until then, and when none waits, the deep reads (and
    it, unless starved) in a C-LOOK sweep.  resume: "continue" the sweep
    from the synchronous read's end, or "return" to the end of the last
    deep read (a detour)."""

    def __init__(self, k=None, p=None, wait_us=None, resume="continue"):
        self.k, self.p, self.wait_us, self.resume = k, p, wait_us, resume
        self.starve = wait_us is not None
        if k == 0:
            what = "at once"
        elif k is not None:
            what = "after %d deep" % k
        elif p is not None:
            what = "with p=%.2f" % p
        elif math.isinf(wait_us):
            what = "never"
        else:
            what = "after %g ms" % (wait_us / 1000)
        self.name = "sync %s, %s" % (what, resume)

    def pick(self, sim):
        if sim.sync is not None:
            if self.k is not None and sim.deep_since_sync >= self.k:
                return ("sync",)
            if self.p is not None and sim.rng.random() < self.p:
                return ("sync",)
            if self.starve and sim.now - sim.sync[1] >= self.wait_us:
                return ("sync",)
        pos = sim.head if self.resume == "continue" else sim.sweep
        return _clook(sim, pos or 0, with_sync=not self.starve)


class Slices(Policy):
    """CFQ-like: a slice of slice_us for the synchronous reader, in which
    it is served at once and the card idles up to idle_us after each of
    its reads for the next one; then a batch of deep reads in a C-LOOK
    sweep (from the end of the last deep read), after which the
    synchronous reader, if it waits, gets its next slice."""

    def __init__(self, slice_us, batch, idle_us):
        self.slice_us, self.batch, self.idle_us = slice_us, batch, idle_us
        self.name = "slices of %g ms, %d deep, idle %g us" % (
            slice_us / 1000, batch, idle_us)

    def reset(self, sim):
        self.mode = "sync"
        self.start = 0.0
        self.count = 0

    def pick(self, sim):
        if self.mode == "sync":
            left = self.start + self.slice_us - sim.now
            if left > 0:
                if sim.sync is not None:
                    return ("sync",)
                until = min(sim.sync_done + self.idle_us, self.start + self.slice_us)
                if until > sim.now and sim.sync_next is not None:
                    return ("idle", until)
            self.mode, self.count = "deep", 0
        if self.count >= self.batch and sim.sync is not None:
            self.mode, self.start = "sync", sim.now
            return ("sync",)
        self.count += 1
        return _clook(sim, sim.sweep, with_sync=False)


class Oracle(Policy):
    """Knows when the synchronous reader's next read comes and what each
    command costs: serves the next deep read of a C-LOOK sweep if it ends
    by then (plus slack_us), else the cheapest deep read that does, else
    idles until it comes; serves the synchronous read at once.  resume as
    SyncFirst."""

    def __init__(self, slack_us, resume):
        self.slack_us, self.resume = slack_us, resume
        self.name = "oracle fill, slack %g us, %s" % (slack_us, resume)

    def pick(self, sim):
        if sim.sync is not None:
            return ("sync",)
        pos = sim.head if self.resume == "continue" else sim.sweep
        act = _clook(sim, pos or 0, with_sync=False)
        if sim.sync_next is None:
            return act
        left = sim.sync_next + self.slack_us - sim.now - sim.emu
        if sim.cost(sim.offs[act[1]]) <= left:
            return act
        c, i = min((sim.cost(o), i) for i, o in enumerate(sim.offs))
        if c <= left:
            return ("deep", i)
        return ("idle", sim.sync_next)


def policies(shape):
    """The family of policies, their parameters scaled by the think
    time where they are times."""
    t = max(shape.think_us, 100.0)
    out = [Fifo(), CLook(), Deadline()]
    for resume in ("continue", "return"):
        out += [SyncFirst(k=k, resume=resume) for k in (0, 1, 2, 4, 8, 16)]
        out += [Oracle(0.0, resume), Oracle(0.5 * t, resume)]
    out += [SyncFirst(p=p) for p in (0.1, 0.3, 0.6)]
    out += [SyncFirst(wait_us=w, resume="continue")
            for w in (2e3, 5e3, 2e4, 1e5, math.inf)]
    out += [Slices(m * t, b, f * t) for m in (3, 10) for b in (4, 16, 64)
            for f in (0.5, 1.5)]
    return out


# ---------------------------------------------------------------- frontier

def _point(policy, params, shape, alone, seed, commands, warmup):
    r = Sim(params, shape, seed).run(policy, commands, warmup)
    n = r["sync"] + r["deep"]
    span = r["span_us"] / 1e6
    sync_iops, total = r["sync"] / span, n / span
    share = sync_iops / min(alone[0], total / 2)
    device_us = r["busy_us"] + r["idle_us"]
    rest = total - min(alone[0], total / 2)
    return Point(policy.name, share, n / device_us * 1e6, total,
                 sync_iops, r["deep"] / span, device_us / r["span_us"],
                 r["idle_us"] / r["span_us"], r["sync_queue_us"],
                 r["sync_lat_us"] / alone[1] if r["sync_lat_us"] else None,
                 r["deep"] / span / rest if rest > 0 else None)


def best_of(points, alone, share, metric="device"):
    """The frontier of points (Point) at share: the best policy, or time
    mix of two, whose share is at least share, given the synchronous
    reader's IOPS alone: (iops, i, j, lam), points[i] running lam of the
    time and points[j] the rest; None when none reaches share."""
    def parts(p):
        r = p.sync_iops + p.deep_iops
        return p.sync_iops, r, (p.device_fraction if metric == "device" else 1.0)

    def value(a, b, lam):
        return (lam * a[1] + (1 - lam) * b[1]) / (lam * a[2] + (1 - lam) * b[2])

    best = None
    pts = [parts(p) for p in points]
    # a point's own share, recomputed, may differ from it in the last bit
    share *= 1 - 1e-9
    for i, a in enumerate(pts):
        for j in range(i, len(pts)):
            b = pts[j]
            # share >= x  <=>  S >= x * alone  or  S >= x * R / 2, each
            # linear in lam: g(lam) = g0 + lam * (g1 - g0) >= 0
            cands = []
            for g0, g1 in ((b[0] - share * alone, a[0] - share * alone),
                           (b[0] - share * b[1] / 2, a[0] - share * a[1] / 2)):
                if g0 >= 0 and g1 >= 0:
                    cands += [0.0, 1.0]
                elif g0 >= 0 or g1 >= 0:
                    root = g0 / (g0 - g1)
                    cands += [0.0, root] if g0 >= 0 else [root, 1.0]
            for lam in cands:
                v = value(a, b, lam)
                if best is None or v > best[0]:
                    best = (v, i, j, lam)
    return best


@functools.lru_cache(maxsize=64)
def _frontier(pkey, shape, seed, commands, warmup):
    params = dict(zip(costmodel.PARAMS, pkey))
    params["scale_sectors"] = int(params["scale_sectors"])
    alone = sync_alone(params, shape, seed)
    pts = tuple(_point(p, params, shape, alone, seed, commands, warmup)
                for p in policies(shape))
    fair = [p.share for p in pts
            if p.deep_share is not None and p.deep_share >= 1 - FAIR_TOLERANCE]
    return {"alone_iops": alone[0], "alone_lat_us": alone[1], "points": pts,
            "max_share": max(p.share for p in pts),
            "fair_share": max(fair) if fair else None}


def frontier(card, shape, seed=SEED, commands=COMMANDS, warmup=WARMUP):
    """Every policy's point for a card and shape: a dict with alone_iops,
    alone_lat_us (the synchronous reader alone), points (a Point per
    policy), max_share (the largest share of a point) and fair_share (the
    largest share of a point whose deep reader keeps its own max-min
    share, within FAIR_TOLERANCE; None if none does).  Deterministic for a
    seed; cached in memory."""
    if int(commands) < 100 or int(warmup) < 0:
        raise FrontierError("commands must be >= 100 and warmup >= 0")
    return _frontier(_key(card_params(card)), _shape(shape), int(seed),
                     int(commands), int(warmup))


def _check_metric(metric):
    if metric not in METRICS:
        raise FrontierError("metric %r: unknown (choose one of %s)" %
                            (metric, ", ".join(METRICS)))


def best_mix(card, shape, share, metric="device", **kw):
    """How the frontier is reached at share: (iops, policy a, policy b,
    fraction of the time under a).  A share above every policy's is
    taken as the largest policy share."""
    s = _number("share", share, 0, 1e3)
    _check_metric(metric)
    f = frontier(card, shape, **kw)
    pts = f["points"]
    v, i, j, lam = best_of(pts, f["alone_iops"], min(s, f["max_share"]), metric)
    return v, pts[i].policy, pts[j].policy, lam


def judged_share(card, shape, share, **kw):
    """The share an arm's throughput is judged at: its own, but at most
    fair_share (see frontier()).  Beyond that the synchronous reader gets
    more at the deep reader's expense, which is no merit: judged at its
    own share, a scheduler that starves the deep reader would be compared
    only with the policies that starve it as much."""
    s = _number("share", share, 0, 1e3)
    fair = frontier(card, shape, **kw)["fair_share"]
    return s if fair is None else min(s, fair)


def frontier_iops(card, shape, share, metric="device", **kw):
    """The most IOPS (metric "device": modelled device IOPS; "total":
    commands per second of elapsed time) that a policy, or two policies
    in turn, reach with the synchronous reader at share fraction `share`
    or above.  card: see card_params; shape: "same", "apart" or a
    make_shape()."""
    return best_mix(card, shape, share, metric, **kw)[0]


def policy_point(card, shape, name, **kw):
    """The point of the policy called name (e.g. "mq-deadline")."""
    for p in frontier(card, shape, **kw)["points"]:
        if p.policy == name:
            return p
    raise FrontierError("no policy %r" % name)


# ---------------------------------------------------------------- CLI

def _usage():
    return __doc__.split("\n\n")[1]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    opts = {"--card": None, "--shape": None, "--share": None,
            "--think-us": DEFAULT_THINK_US, "--emu-us": DEFAULT_EMU_US,
            "--metric": "device"}
    points = False
    it = iter(argv)
    try:
        for a in it:
            if a in ("-h", "--help"):
                print(__doc__)
                return 0
            if a == "--points":
                points = True
                continue
            name, eq, val = a.partition("=")
            if name not in opts:
                raise FrontierError("%s: unknown option" % a)
            if not eq:
                val = next(it, None)
                if val is None:
                    raise FrontierError("%s needs a value" % name)
            opts[name] = val
        for k in ("--card", "--shape", "--share"):
            if opts[k] is None:
                raise FrontierError("%s is required" % k)
        shape = make_shape(opts["--shape"], opts["--think-us"], opts["--emu-us"])
        card = opts["--card"]
        card_params(card)
        share = _number("--share", opts["--share"], 0, 1e3)
        metric = opts["--metric"]
        value = frontier_iops(card, shape, share, metric)
    except FrontierError as e:
        print("frontier: %s" % e, file=sys.stderr)
        print(_usage(), file=sys.stderr)
        return 2
    f = frontier(card, shape)
    dd = policy_point(card, shape, "mq-deadline")
    dd_v = getattr(dd, metric + "_iops")
    unit = "modelled device IOPS" if metric == "device" else "total IOPS"
    print("card %s, shape %s, think %g us, emulation %g us a command" %
          (card, shape.name, shape.think_us, shape.emu_us))
    print("synchronous reader alone: %.0f IOPS, %.0f us a read; the largest "
          "share that leaves the deep reader its own: %s" %
          (f["alone_iops"], f["alone_lat_us"],
           "none" if f["fair_share"] is None else "%.2f" % f["fair_share"]))
    print("frontier at share %.3g: %.0f %s, %.2f x mq-deadline's %.0f (at "
          "share %.2f)%s" % (share, value, unit, value / dd_v, dd_v, dd.share,
                             "; above every policy's share: taken at %.2f" %
                             f["max_share"] if share > f["max_share"] else ""))
    print("frontier (share, %s, x mq-deadline, how):" % unit)
    grid = [k / 20 for k in range(int(min(f["max_share"], 1.5) * 20) + 1)]
    for x in grid + [f["max_share"]]:
        v, a, b, lam = best_mix(card, shape, x, metric)
        how = a if lam > 0.995 or a == b else b if lam < 0.005 else \
            "%.2f of the time %s, the rest %s" % (lam, a, b)
        print("  %.2f %8.0f %5.2f  %s" % (x, v, v / dd_v, how))
    if points:
        print("points (share, deep reader's share, device IOPS, total IOPS, "
              "idle / elapsed, sync wait x alone, policy):")
        for p in sorted(f["points"], key=lambda p: p.share):
            print("  %.3f %5s %8.0f %8.0f %5.2f %6s  %s" % (
                p.share, "n/a" if p.deep_share is None else "%.2f" % p.deep_share,
                p.device_iops, p.total_iops, p.idle_fraction,
                "n/a" if p.wait_x_alone is None else "%.2f" % p.wait_x_alone,
                p.policy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
