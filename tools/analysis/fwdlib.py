#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""fwdlib: the analysis shared by fwdsched's tests and benchmark (blktrace,
MMC history, fio).

Library:
  BLKPARSE_FMT              the blkparse -f format every tool uses
  parse_blkparse(src)       events from blkparse text (BLKPARSE_FMT or default)
  dispatch_order(events)    forward / backward / wrap counts over D events
  read_dispatches(events)   reads dispatched, backward moves, CPUs (selftests)
  sweep_check(events, ms)   every read dispatch judged against the sweep
  deadline_waits(events, ms)  per read: wait, dispatches after its deadline
  request_latencies(events) per-request D2C, Q2C and service time with delta
  parse_mmc_history(src)    per-command records from the MMC history hook
  latency_by_sign(recs)     latency summary split by the sign of the delta
  jain(xs)                  Jain's fairness index
  parse_fio(src)            per-clone, per-process and total fio figures
  waits_behind(events, f)   what was dispatched while each picked request
                            waited (the benchmark's responsiveness analysis)
  parse_diskstats(line)     the completed I/O counts of a /proc/diskstats line
  dispatch_owners(events)   every dispatch in order, with the process that
                            submitted it (the benchmark's device time per
                            process)

CLI, for the guest's selftests (exit 2 with a message naming the file on
missing or garbled input):
  fwdlib.py blkparse-fmt            print BLKPARSE_FMT (escapes kept literal)
  fwdlib.py blkparse BINDIR OUT.TXT [KEEP]
                                    blkparse_text: the text of the binary
                                    trace "t" in BINDIR, into OUT.TXT
  fwdlib.py events BLK.TXT          "action sector blocks time rwbs cpu" lines
  fwdlib.py reads BLK.TXT           "dispatches backward cpus" of the reads
  fwdlib.py sweep BLK.TXT MS        "dispatches choices violations swaps" of
                                    sweep_check (read_expire MS); the first
                                    violations described on stderr
  fwdlib.py deadline BLK.TXT MS     "sector waited_ms late" per read
  fwdlib.py fg-isolation BLK.TXT GAP_MS [EXPIRE_MS]
                                    "reads judged contested violations writes
                                    max_async_inflight max_reads_expired
                                    max_write_wait_ms" of fg_isolation

Definitions (sectors are 512 bytes, times nanoseconds):

* Sweep position.  After a dispatch (blktrace D) of [sector, sector+blocks)
  the position of its device is sector+blocks; it starts at 0, as
  fwdsched's sweep_pos does.  D events with 0 blocks (flushes) are ignored.
* delta = sector - position before the dispatch (signed).
* forward: delta >= 0 (this includes continuations, delta == 0, which are
  also counted on their own); backward: delta < 0.
* wrap: a backward dispatch at whose time no request of the same data
  direction (R, W or D) was pending with sector >= position.  This is the
  C-LOOK wrap to the bottom.  Any other backward dispatch is other_backward
  (deadline expiry, at-head requeues, or a scheduler that does not sweep).
  A request is pending from its I event until its D; for a device whose
  trace has no I events at all (no elevator) from its Q event.  Front
  merges move the pending sector; a D removes its sector, and a D or C
  removes all pending sectors of its direction inside it after its first
  sector (requests merged into it).  In I mode a requeue (R) is not
  pending until it is inserted again.
* forward_fraction = forward / dispatches; it is what fwdsched's debugfs
  "forward"/"dispatched" counters give.  in_order_fraction = (forward +
  wraps) / dispatches: 1.0 for a pure C-LOOK sweep.
* dispatch_order() classifies every move after the fact, for the report;
  sweep_check() judges every read dispatch against the requests that were
  certainly waiting when it was picked, for the selftests (see its
  docstring).  A dispatch whose insertion the trace does not hold (it was
  inserted before tracing started) was never seen waiting by either.
* D2C = C - D, Q2C = C - Q, paired by (device, sector); a requeue (R)
  cancels the pending D.  service = C - max(D, previous C of the device):
  the time the device spent on this request when it serves one at a time
  (MMC: the next request is issued while the current one is in flight).
* Jain's index J = (sum x)^2 / (n * sum x^2); None when n == 0 or all x == 0.
"""

import bisect
import json
import math
import re
import subprocess
import sys

BLKPARSE_FMT = "%M,%m %c %a %d %S %n %T.%9t %p %C\\n"

# The CPU field is optional: traces written before it was added still parse.
_FMT_RE = re.compile(
    r"^(\d+),(\d+) (?:(\d+) )?([A-Za-z]{1,2}) ([A-Z]+) (\d+) (\d+) (\d+)\.(\d{9}) (\d+)(?: (.*))?$")
# Default blkparse output: "%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s " + payload.
_DEF_RE = re.compile(
    r"^\s*(\d+),(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\.(\d{9})\s+(\d+)\s+([A-Za-z]{1,2})\s+([A-Z]+)\s+"
    r"(\d+) \+ (\d+)(?: \(\s*\d+\))? \[(.*)\]\s*$")


class InputError(Exception):
    """Missing or malformed input file; str() names the file."""


class Event:
    __slots__ = ("dev", "action", "rwbs", "sector", "blocks", "time_ns",
                 "pid", "comm", "cpu")

    def __init__(self, dev, action, rwbs, sector, blocks, time_ns, pid=0,
                 comm="", cpu=None):
        self.dev = dev
        self.action = action
        self.rwbs = rwbs
        self.sector = sector
        self.blocks = blocks
        self.time_ns = time_ns
        self.pid = pid
        self.comm = comm
        self.cpu = cpu

    def __repr__(self):
        return "Event(%r, %r, %r, %d, %d, %d)" % (
            self.dev, self.action, self.rwbs, self.sector, self.blocks,
            self.time_ns)

    @property
    def direction(self):
        return rwbs_dir(self.rwbs)


def rwbs_dir(rwbs):
    """'R', 'W', 'D' (discard) or 'N' (no data) from an RWBS string."""
    s = rwbs[1:] if rwbs.startswith("F") and len(rwbs) > 1 else rwbs
    c = s[:1]
    return c if c in ("R", "W", "D") else "N"


def _read_text(src):
    """(text, name) of a path or file object; InputError naming a path
    that cannot be read.  (Also used by mmchist.py and crosslayer.py.)"""
    if hasattr(src, "read"):
        return src.read(), getattr(src, "name", "<stream>")
    try:
        with open(src, "r", errors="replace") as f:
            return f.read(), src
    except OSError as e:
        raise InputError("%s: %s" % (src, e.strerror or e)) from None


def parse_blkparse_line(line):
    """An Event for one blkparse line, or None if the line is not an event."""
    m = _FMT_RE.match(line.rstrip("\n"))
    if m:
        g = m.groups()
        return Event((int(g[0]), int(g[1])), g[3], g[4], int(g[5]), int(g[6]),
                     int(g[7]) * 1000000000 + int(g[8]), int(g[9]), g[10] or "",
                     None if g[2] is None else int(g[2]))
    m = _DEF_RE.match(line)
    if m:
        g = m.groups()
        return Event((int(g[0]), int(g[1])), g[7], g[8], int(g[9]), int(g[10]),
                     int(g[4]) * 1000000000 + int(g[5]), int(g[6]), g[11],
                     int(g[2]))
    return None


def parse_blkparse(src):
    """Events of blkparse text (path, file object or list of lines).

    Lines that are not events (messages, summaries) are skipped.  Raises
    InputError if the input has text but not a single event line.
    """
    if isinstance(src, (list, tuple)):
        lines, name = src, "<lines>"
    else:
        text, name = _read_text(src)
        lines = text.splitlines()
    events = []
    other = 0
    for line in lines:
        if not line.strip():
            continue
        ev = parse_blkparse_line(line)
        if ev is None:
            other += 1
        else:
            events.append(ev)
    if other and not events:
        raise InputError("%s: no blkparse event lines (expected blkparse -f '%s' "
                         "or default output)" % (name, BLKPARSE_FMT))
    return events


def _has_inserts(events):
    return {e.dev for e in events if e.action == "I"}


def dispatch_order(events):
    """Counts of the dispatch order; see the module docstring.

    Returns a dict: dispatches, forward, continuations, backward, wraps,
    other_backward, forward_fraction, in_order_fraction (None if no
    dispatches).
    """
    with_i = _has_inserts(events)
    pos = {}
    pending = {}          # (dev, dir) -> set of pending start sectors
    c = dict(dispatches=0, forward=0, continuations=0, backward=0, wraps=0,
             other_backward=0)

    for e in events:
        d = pending.setdefault((e.dev, e.direction), set())
        a = e.action
        start = "I" if e.dev in with_i else "Q"
        if not e.blocks:
            continue
        if a == start or (a == "R" and start == "Q"):
            d.add(e.sector)
        elif a == "F":
            d.discard(e.sector + e.blocks)
            d.add(e.sector)
        elif a == "M" and start == "Q":
            d.discard(e.sector)
        elif a in ("C", "D"):
            d.difference_update([s for s in d if e.sector < s < e.sector + e.blocks])
            if a == "C":
                continue
            d.discard(e.sector)
            p = pos.get(e.dev, 0)
            c["dispatches"] += 1
            if e.sector >= p:
                c["forward"] += 1
                if e.sector == p:
                    c["continuations"] += 1
            else:
                c["backward"] += 1
                if any(s >= p for s in d):
                    c["other_backward"] += 1
                else:
                    c["wraps"] += 1
            pos[e.dev] = e.sector + e.blocks
    n = c["dispatches"]
    c["forward_fraction"] = c["forward"] / n if n else None
    c["in_order_fraction"] = (c["forward"] + c["wraps"]) / n if n else None
    return c


def read_dispatches(events):
    """The D events of reads, their backward moves and CPUs, as
    selftests/fwdsched judge them: dict with dispatches, backward (as
    dispatch_order() counts them over the reads alone, the position moved
    only by reads) and cpus, the number of CPUs that started them
    (blktrace merges its per-CPU buffers by time stamp, so D order is pick
    order only when one CPU dispatched)."""
    reads = [e for e in events if e.action == "D" and e.direction == "R"]
    c = dispatch_order(reads)
    return dict(dispatches=c["dispatches"], backward=c["backward"],
                cpus=len({e.cpu for e in reads}))


def sweep_check(events, read_expire_ms):
    """Check every read dispatch of a trace against the sweep, with the
    waiting requests rebuilt from the trace's I, F, R and D events of
    reads.  Returns a dict: dispatches, choices (dispatches while other
    requests waited), violations, swaps, and messages (the first three
    violations, described).

    A dispatch violates the sweep when a request that was waiting when it
    was picked lies between the sweep position (the end of the previous
    dispatch) and the dispatched sector, or, at a wrap (nothing waiting
    at or above the position), below the dispatched sector.  blk-mq can
    pick requests some time before it starts them (D) and keep them on
    its own dispatch list while the driver is busy, so the pick time is
    unknown; but picks happen in D order and after the request's own
    insertion, so a request inserted before the latest insertion of the
    requests dispatched so far was certainly waiting at the pick.  Only
    those are held against the sweep.  Expired reads (waited read_expire_ms
    or more) and requeued (at-head) requests are exempt, and so is
    passing over a request that is requeued later (it had been picked
    before).  Two CPUs can start two picked requests in the opposite
    order: a passed-over request dispatched right next is counted as a
    swap, not a violation.  Only valid where D order is otherwise pick
    order: one command at a time (the SD card), or one CPU dispatching.
    """
    reads = [e for e in events
             if e.direction == "R" and e.action in ("I", "F", "R", "D")]
    requeues = {}               # sector -> times of its requeues, all trace
    for e in reads:
        if e.action == "R":
            requeues.setdefault(e.sector, []).append(e.time_ns)
    expire_ns = read_expire_ms * 1000000
    pend = {}                   # sector -> requests waiting there
    ins = {}                    # sector -> time of its latest insertion
    requeued = set()            # requeued, not dispatched again yet
    pos = seen = 0
    held = None                 # the request passed over by the last dispatch
    held_msg = ""
    c = dict(dispatches=0, choices=0, violations=0, swaps=0, messages=[])

    def violation(msg):
        c["violations"] += 1
        if len(c["messages"]) < 3:
            c["messages"].append(msg)

    for e in reads:
        s = e.sector
        if e.action == "I":
            pend[s] = pend.get(s, 0) + 1
            ins[s] = e.time_ns
            continue
        if e.action == "R":
            requeued.add(s)
            continue
        if e.action == "F":
            # a front merge moves a waiting request down to the bio
            o = s + e.blocks
            if pend.get(o, 0) > 0:
                pend[o] -= 1
                if not pend[o]:
                    del pend[o]
                pend[s] = pend.get(s, 0) + 1
                ins[s] = ins[o]
            continue
        c["dispatches"] += 1
        if s in ins and ins[s] > seen:
            seen = ins[s]
        swapped = held is not None and s == held
        if held is not None and not swapped:
            violation(held_msg)
        held = None
        # what was certainly waiting when s was picked
        waiting = [k for k in pend if k != s and ins[k] < seen]
        up = min((k for k in waiting if k >= pos), default=None)
        low = min(waiting, default=None)
        if low is not None:
            c["choices"] += 1
        if swapped:
            c["swaps"] += 1
        elif c["dispatches"] > 1:
            want = None
            if up is not None and (s < pos or s > up):
                want = up
            elif up is None and s < pos and low is not None and low < s:
                want = low
            if (want is not None and s not in requeued and
                    not any(t > ins[want] for t in requeues.get(want, ())) and
                    e.time_ns - ins.get(s, 0) < expire_ns):
                held = want
                held_msg = ("sweep at %d took %d; waiting: %d ahead, %d lowest"
                            % (pos, s, -1 if up is None else up,
                               -1 if low is None else low))
        if pend.get(s, 0) > 0:
            pend[s] -= 1
            if not pend[s]:
                del pend[s]
        requeued.discard(s)
        # after a swap the sweep is past both requests
        if not swapped or s + e.blocks > pos:
            pos = s + e.blocks
    if held is not None:
        violation(held_msg)
    return c


def deadline_waits(events, expire_ms, grace_ms=8):
    """Per read dispatched after its insertion was traced, in dispatch
    order: (sector, waited_ms, late), late being the number of requests
    (of any direction) dispatched after its deadline, insertion +
    expire_ms + grace_ms, and before it.  grace_ms covers the expiry
    check's granularity (two jiffies at HZ=250)."""
    d_times = [e.time_ns for e in events if e.action == "D"]
    limit_ns = (expire_ms + grace_ms) * 1000000
    ins = {}
    out = []
    for e in events:
        if e.direction != "R" or e.action not in ("I", "D"):
            continue
        if e.action == "I":
            ins[e.sector] = e.time_ns
            continue
        t0 = ins.pop(e.sector, None)
        if t0 is None:
            continue
        dl = t0 + limit_ns
        late = 0
        if e.time_ns > dl:
            late = (bisect.bisect_right(d_times, e.time_ns) - 1 -
                    bisect.bisect_right(d_times, dl))
        out.append((e.sector, (e.time_ns - t0) // 1000000, late))
    return out


def request_latencies(events):
    """Per completed request: dict with dev, sector, blocks, dir, delta,
    q_ns (or None), d_ns, c_ns, d2c_ns, q2c_ns (or None), service_ns.
    Completions without a traced D are skipped."""
    pos = {}
    last_c = {}
    queued = {}           # (dev, sector) -> Q time
    issued = {}           # (dev, sector) -> [(d_ns, delta, dir, blocks)]
    out = []
    for e in events:
        k = (e.dev, e.sector)
        a = e.action
        if a == "Q":
            queued.setdefault(k, e.time_ns)
        elif a == "F" and e.blocks:
            old = queued.pop((e.dev, e.sector + e.blocks), None)
            if old is not None:
                queued[k] = min(old, queued.get(k, old))
        elif a == "M":
            if (e.dev, e.sector) in queued and e.blocks:
                del queued[k]
        elif a == "D" and e.blocks:
            p = pos.get(e.dev, 0)
            issued.setdefault(k, []).append(
                (e.time_ns, e.sector - p, e.direction, e.blocks))
            pos[e.dev] = e.sector + e.blocks
        elif a == "R":
            lst = issued.get(k)
            if lst:
                lst.pop()
        elif a == "C":
            lst = issued.get(k)
            if not lst:
                continue
            d_ns, delta, direction, blocks = lst.pop(0)
            if not lst:
                del issued[k]
            q_ns = queued.pop(k, None)
            prev = last_c.get(e.dev)
            begin = d_ns if prev is None else max(d_ns, prev)
            last_c[e.dev] = e.time_ns if prev is None else max(prev, e.time_ns)
            out.append(dict(dev=e.dev, sector=e.sector, blocks=blocks,
                            dir=direction, delta=delta, q_ns=q_ns, d_ns=d_ns,
                            c_ns=e.time_ns, d2c_ns=e.time_ns - d_ns,
                            q2c_ns=None if q_ns is None else e.time_ns - q_ns,
                            service_ns=e.time_ns - begin))
    return out


def parse_mmc_history(src, other=False):
    """Records of an MMC history dump.

    Format: '#' comment/header lines, then one command per line:
    'issue_ns done_ns R|W|O sector nr_sectors err [tag ...]' (the fields
    of mmc_history/mmc_history.c; extra fields are ignored).  The data
    commands (R, W) are returned, and with other=True the other commands
    (O) too, sorted by issue time; delta is relative to the end of the
    previous data command (None for other commands, which move nothing);
    service_ns = done - issue (the card serves one command at a time).
    Same keys as request_latencies() (d_ns = issue, c_ns = done).
    """
    text, name = _read_text(src)
    recs = []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        f = s.split()
        try:
            if len(f) < 6 or f[2] not in ("R", "W", "O"):
                raise ValueError
            issue, done, sector, nr, err = (int(f[0]), int(f[1]), int(f[3]),
                                            int(f[4]), int(f[5]))
        except ValueError:
            raise InputError("%s:%d: not an MMC history line "
                             "'issue_ns done_ns R|W|O sector nr_sectors err [tag]': %r"
                             % (name, n, s[:80])) from None
        recs.append((issue, done, f[2], sector, nr, err))
    recs.sort(key=lambda r: r[0])
    out = []
    pos = 0
    for issue, done, op, sector, nr, err in recs:
        if op == "O" and not other:
            continue
        out.append(dict(dev=None, sector=sector, blocks=nr, dir=op,
                        delta=None if op == "O" else sector - pos, q_ns=None,
                        d_ns=issue, c_ns=done, d2c_ns=done - issue,
                        q2c_ns=None, service_ns=done - issue, err=err))
        if op != "O":
            pos = sector + nr
    return out


def percentile(xs, p):
    """Nearest-rank percentile (p in 0..100) of xs; None if empty."""
    if not xs:
        return None
    s = sorted(xs)
    k = max(1, math.ceil(p / 100.0 * len(s)))
    return s[k - 1]


def summarize(xs_ns):
    """n, mean, median, p99 of nanosecond values, in microseconds."""
    xs = [x for x in xs_ns if x is not None]
    if not xs:
        return dict(n=0, mean_us=None, median_us=None, p99_us=None)
    return dict(n=len(xs), mean_us=sum(xs) / len(xs) / 1000.0,
                median_us=percentile(xs, 50) / 1000.0,
                p99_us=percentile(xs, 99) / 1000.0)


def latency_by_sign(recs, field="d2c_ns"):
    """Summaries of recs[field] for delta > 0 ('pos'), < 0 ('neg'), == 0
    ('zero'), plus neg_over_pos = mean(neg) / mean(pos) (None if n/a)."""
    groups = {"pos": [], "neg": [], "zero": []}
    for r in recs:
        g = "pos" if r["delta"] > 0 else "neg" if r["delta"] < 0 else "zero"
        groups[g].append(r[field])
    out = {g: summarize(v) for g, v in groups.items()}
    p, n = out["pos"]["mean_us"], out["neg"]["mean_us"]
    out["neg_over_pos"] = n / p if p and n is not None else None
    return out


def jain(xs, scale=None):
    """Jain's fairness index of xs; None for no values or all zero.

    With an integer scale, floor(scale * J) computed in integers from
    integer xs, as tools/fwdtop gives it.
    """
    xs = list(xs) if scale else [float(x) for x in xs]
    for x in xs:
        if x < 0 or x != x:
            raise ValueError("Jain's index needs non-negative numbers, got %r" % x)
        if scale and x != int(x):
            raise ValueError("Jain's index in integers needs integers, got %r" % x)
    if scale:
        xs = [int(x) for x in xs]
    sq = sum(x * x for x in xs)
    if not xs or sq == 0:
        return None
    if scale:
        return sum(xs) ** 2 * scale // (len(xs) * sq)
    return sum(xs) ** 2 / (len(xs) * sq)


# ---------------------------------------------------------------- fairness

def service_units(blocks, rwbs="R"):
    """fwdsched's charge for a read or write of @blocks sectors, in units:
    one for the command and one per 32 KiB (64 sectors), three times that
    for a write no one waits for (no S in its RWBS), at the default
    priority level (fwd_rq_cost() in fwdsched-iosched.c)."""
    units = 1 + blocks // 64
    if rwbs_dir(rwbs) == "W" and "S" not in rwbs:
        units *= 3
    return units


def fair_bound(c_p, slack, c_q=1):
    """Most dispatches of another process Q (requests of c_q units) while a
    request of P (c_p units) waits, with fair_slack @slack: the bound of
    Documentation/block/fwdsched-iosched.rst, (2 slack + c_P + 1) / c_Q + 1."""
    return (2 * slack + c_p + 1) // c_q + 1


def _push(table, key, rec):
    """Adds @rec under @key of @table, a dict of lists: two requests at
    one sector (random reads of two processes, or of one process with
    many in flight, meet now and then) are two records, not one that
    overwrites the other and leaves its owner's count behind for good."""
    table.setdefault(key, []).append(rec)


def _find(recs, *prefs):
    """The first of @recs for which every one of @prefs is true; failing
    that, the last preference is dropped, and so on: with none left, the
    first record.  None when @recs is empty."""
    for k in range(len(prefs), -1, -1):
        for r in recs:
            if all(p(r) for p in prefs[:k]):
                return r
    return None


def _front_merge(table, e):
    """A front merge (F event e): the waiting request that starts where
    the bio ends now starts at the bio, and is found under its new
    sector."""
    old = _pop(table, (e.dev, e.direction, e.sector + e.blocks))
    if old is not None:
        old["sector"] = e.sector
        old["blocks"] += e.blocks
        _push(table, (e.dev, e.direction, e.sector), old)


def _pop(table, key, *prefs):
    """Takes the record under @key that _find() picks, or None."""
    recs = table.get(key)
    rec = _find(recs or (), *prefs)
    if rec is not None:
        # by identity: two records may hold equal values
        del recs[next(i for i, r in enumerate(recs) if r is rec)]
        if not recs:
            del table[key]
    return rec


def _each(table):
    """Every record of @table, in key order of arrival."""
    for recs in table.values():
        yield from recs


def waits(events):
    """For every request dispatched (D) that the trace saw inserted (I):
    its owner (the pid of its I event, the submitting process), its size,
    and for each other owner the longest run of that owner's dispatches
    while the request waited (from its I to its D) with no dispatch of
    its own owner in between: the bound of the .rst is on how long a
    backlogged process waits for service, so a dispatch of any of its
    requests ends the run.  Front merges (F) move a waiting request; a
    requeue (R) does not end its wait.  Dispatches of requests inserted
    before the trace began count for their D event's pid.  Returns a list
    of dicts (owner, sector, blocks, dir, passes: {owner: n}), in
    dispatch order."""
    waiting = {}
    out = []
    for e in events:
        if not e.blocks:
            continue
        key = (e.dev, e.direction, e.sector)
        if e.action == "I":
            _push(waiting, key, dict(owner=e.pid, sector=e.sector,
                                     blocks=e.blocks, dir=e.direction,
                                     rwbs=e.rwbs, passes={}, run={}))
        elif e.action == "F":
            _front_merge(waiting, e)
        elif e.action == "M":
            # a back merge: the bio joins the request that ends where it starts
            for w in _each(waiting):
                if w["sector"] + w["blocks"] == e.sector and \
                        w["dir"] == e.direction:
                    w["blocks"] += e.blocks
                    break
        elif e.action == "D":
            rec = _pop(waiting, key, lambda r: r["rwbs"] == e.rwbs)
            who = rec["owner"] if rec else e.pid
            for w in _each(waiting):
                if w["owner"] == who:
                    w["run"].clear()
                    continue
                n = w["run"][who] = w["run"].get(who, 0) + 1
                w["passes"][who] = max(w["passes"].get(who, 0), n)
            if rec:
                del rec["run"]
                out.append(rec)
    return out


def dispatch_owners(events):
    """Every dispatch (D event with blocks), in dispatch order: a dict with
    dev, owner, sector, blocks and dir.  The owner is the pid of the request's
    I event, the process that submitted it (of its Q event on a device
    whose trace has no I events: no elevator); the D event's pid when the
    trace did not see it submitted.  A front merge (F) moves a waiting
    request, a back merge (M) grows it (without I events, a merged bio
    is part of its request, not a request of its own); a requeue (R)
    takes back the request's last dispatch, and it waits again with its
    owner."""
    with_i = _has_inserts(events)
    waiting = {}
    out = []
    # where each key's dispatches are in out, oldest first: a requeue
    # takes back the newest without a scan of out (an SD card's 3,000
    # requeues on 6.12 made that scan most of a test's time under TCG)
    sent = {}
    for e in events:
        if not e.blocks:
            continue
        key = (e.dev, e.direction, e.sector)
        start = "I" if e.dev in with_i else "Q"
        if e.action == start:
            _push(waiting, key, dict(owner=e.pid, sector=e.sector,
                                     blocks=e.blocks, dir=e.direction))
        elif e.action == "F":
            _front_merge(waiting, e)
        elif e.action == "M":
            if start == "Q":
                _pop(waiting, key)
            for (dev, d, _), recs in waiting.items():
                hit = next((w for w in recs if dev == e.dev and d == e.direction
                            and w["sector"] + w["blocks"] == e.sector), None)
                if hit:
                    hit["blocks"] += e.blocks
                    break
        elif e.action == "R":
            # the dispatch did not happen: the request waits again
            if sent.get(key):
                k = sent[key].pop()
                o, out[k] = out[k], None
                _push(waiting, key, dict(owner=o["owner"], sector=o["sector"],
                                         blocks=o["blocks"], dir=o["dir"]))
        elif e.action == "D":
            rec = _pop(waiting, key)
            sent.setdefault(key, []).append(len(out))
            out.append(dict(dev=e.dev, owner=rec["owner"] if rec else e.pid,
                            sector=e.sector, blocks=e.blocks, dir=e.direction))
    return [o for o in out if o is not None]


def fair_bound_check(events, slack):
    """Checks every request against the bound of being passed over: no
    other process dispatched more than fair_bound(c_P, slack) requests
    while it waited (c_P its own cost; requests of others cost at least a
    unit).  Returns a dict: requests, owners, violations, worst (the
    request with the largest passes-to-bound ratio), per_owner
    {pid: {requests, max_passes, bound}}."""
    reqs = waits(events)
    res = dict(requests=len(reqs), violations=0, worst=None, per_owner={})
    worst_ratio = -1.0
    for r in reqs:
        bound = fair_bound(service_units(r["blocks"], r["rwbs"]), slack)
        most = max(r["passes"].values(), default=0)
        o = res["per_owner"].setdefault(str(r["owner"]), dict(
            requests=0, max_passes=0, bound=0))
        o["requests"] += 1
        if most >= o["max_passes"]:
            o["max_passes"] = most
            o["bound"] = bound
        if most > bound:
            res["violations"] += 1
        if most / bound > worst_ratio:
            worst_ratio = most / bound
            res["worst"] = dict(owner=r["owner"], sector=r["sector"],
                                blocks=r["blocks"], dir=r["dir"],
                                passes=r["passes"], bound=bound)
    res["owners"] = len(res["per_owner"])
    return res


def inflight_at(events, split, own=False):
    """At each dispatch (D) of a request starting at or above sector
    @split (with @own, below it instead), the number of requests below
    @split that were dispatched and not yet completed.  Returns the list
    of counts, in trace order."""
    inflight = {}
    counts = []
    for e in events:
        if not e.blocks:
            continue
        key = (e.dev, e.direction, e.sector)
        if e.action == "D":
            if (e.sector >= split) != own:
                counts.append(sum(n for k, n in inflight.items()))
            if e.sector < split:
                inflight[key] = inflight.get(key, 0) + 1
        elif e.action == "C" and e.sector < split and inflight.get(key):
            inflight[key] -= 1
            if not inflight[key]:
                del inflight[key]
        elif e.action == "R" and e.sector < split and inflight.get(key):
            inflight[key] -= 1
            if not inflight[key]:
                del inflight[key]
    return counts


def _async_write(e):
    return e.direction == "W" and "S" not in e.rwbs


def fg_isolation(events, max_gap_ns, skip=3, expired_ns=None):
    """A synchronous reader (every synchronous read of the trace, RS, is
    its own, one at a time: O_DIRECT; other reads, such as udev's
    readahead, are left out) beside asynchronous writes (W without S), on
    one device.

    For each read after the first @skip: the gap from the completion (C)
    of the reader's previous read to its insertion (I).  A gap of at most
    @max_gap_ns is judged, unless a synchronous write (WS: an fsync, the
    writer's close) waited or was dispatched in it, which lets every write
    go: a violation when an asynchronous write was
    dispatched (D) inside it; it is "contested" when an asynchronous write
    was waiting (inserted, not yet dispatched) throughout it.  With
    @expired_ns, also the most reads dispatched in a row while an
    asynchronous write had waited longer than @expired_ns.  Returns a dict:
    reads, judged, contested, violations, writes (asynchronous writes
    dispatched from the first judged read on), max_async_inflight (the
    most asynchronous writes in flight at a dispatch of one inside a judged
    gap, when the reader is certainly active), max_reads_expired,
    max_write_wait_ns.
    """
    ev = sorted((e for e in events if e.blocks), key=lambda e: e.time_ns)
    waiting = {}        # sector -> insertion time of a waiting async write
    inflight = set()
    reads = 0
    last_c = None
    start = None
    r = dict(reads=0, judged=0, contested=0, violations=0, writes=0,
             max_async_inflight=0, max_reads_expired=0, max_write_wait_ns=0)
    row = 0
    dispatched_in_gap = False
    gap_inflight = 0    # most async writes in flight at a D in this gap
    sync_waiting = set()
    sync_in_gap = False
    for e in ev:
        if e.direction == "W" and "S" in e.rwbs:
            if e.action == "I":
                sync_waiting.add(e.sector)
                sync_in_gap = True
            elif e.action == "D":
                sync_waiting.discard(e.sector)
                sync_in_gap = True
            continue
        if _async_write(e):
            if e.action == "I":
                waiting[e.sector] = e.time_ns
            elif e.action == "D":
                t0 = waiting.pop(e.sector, None)
                if t0 is not None:
                    r["max_write_wait_ns"] = max(r["max_write_wait_ns"],
                                                 e.time_ns - t0)
                dispatched_in_gap = True
                row = 0
                inflight.add(e.sector)
                if last_c is not None:
                    gap_inflight = max(gap_inflight, len(inflight))
                if start is not None:
                    r["writes"] += 1
            elif e.action in ("C", "R"):
                inflight.discard(e.sector)
            continue
        if e.direction != "R" or "S" not in e.rwbs:
            continue
        if e.action == "C":
            last_c = e.time_ns
            dispatched_in_gap = False
            gap_inflight = 0
            sync_in_gap = bool(sync_waiting)
            oldest_at_c = min(waiting.values(), default=None)
        elif e.action == "I":
            reads += 1
            if reads > skip and last_c is not None and not sync_in_gap and \
                    e.time_ns - last_c <= max_gap_ns:
                if start is None:
                    start = e.time_ns
                r["judged"] += 1
                r["max_async_inflight"] = max(r["max_async_inflight"],
                                              gap_inflight)
                if dispatched_in_gap:
                    r["violations"] += 1
                elif oldest_at_c is not None:
                    r["contested"] += 1
            last_c = None
        elif e.action == "D" and expired_ns is not None:
            oldest = min(waiting.values(), default=None)
            if oldest is not None and e.time_ns - oldest > expired_ns:
                row += 1
                r["max_reads_expired"] = max(r["max_reads_expired"], row)
            else:
                row = 0
    r["reads"] = reads
    return r


def served_ahead(events):
    """On a device that serves one request at a time (the SD card), how
    many requests of other processes were served before each request
    while it waited: those completed (C) between its insert (I) and its
    own completion.  The owner of a request is the pid of its I event;
    requests inserted before the trace began have none (and count as
    others).  A front merge (F) moves a waiting request, a requeue (R)
    does not end its wait.  Two requests at one sector are told apart by
    their dispatch (D), matched by its flags (a synchronous read's RS
    against an asynchronous R): a completion is the dispatched one's.
    Returns {owner: dict(requests, ahead: [count
    per request, in completion order], most_in_flight: the most of its
    requests waiting or in flight at once)}."""
    waiting = {}
    per = {}
    own = {}
    for e in events:
        if not e.blocks:
            continue
        key = (e.dev, e.direction, e.sector)
        if e.action == "I":
            _push(waiting, key, dict(owner=e.pid, ahead=0, issued=False,
                                     rwbs=e.rwbs))
            own[e.pid] = own.get(e.pid, 0) + 1
            o = per.setdefault(e.pid, dict(requests=0, ahead=[],
                                           most_in_flight=0))
            o["most_in_flight"] = max(o["most_in_flight"], own[e.pid])
        elif e.action == "F":
            old = _pop(waiting, (e.dev, e.direction, e.sector + e.blocks),
                       lambda r: not r["issued"])
            if old is not None:
                _push(waiting, key, old)
        elif e.action == "D":
            rec = _find(waiting.get(key, ()), lambda r: not r["issued"],
                        lambda r: r["rwbs"] == e.rwbs)
            if rec:
                rec["issued"] = True
        elif e.action == "C":
            rec = _pop(waiting, key, lambda r: r["issued"])
            who = rec["owner"] if rec else None
            for w in _each(waiting):
                if who is None or w["owner"] != who:
                    w["ahead"] += 1
            if rec:
                own[who] -= 1
                per[who]["requests"] += 1
                per[who]["ahead"].append(rec["ahead"])
    return per


# ---------------------------------------------------------------- fio

_DIRS = ("read", "write", "trim")


def _pct(lat, p):
    """Percentile p (e.g. '99.000000') of a fio clat_ns/lat_ns block, ns."""
    if not lat:
        return None
    v = (lat.get("percentile") or {}).get(p)
    return float(v) if v is not None else None


def _bins_pct(bins, p):
    total = sum(bins.values())
    if not total:
        return None
    need = p / 100.0 * total
    acc = 0
    for v in sorted(bins):
        acc += bins[v]
        if acc >= need:
            return float(v)
    return float(max(bins))


def _lat_block(d):
    lat = d.get("clat_ns")
    if not lat or not lat.get("N", lat.get("mean")):
        lat = d.get("lat_ns") or lat
    return lat or {}


def _dir_summary(d):
    lat = _lat_block(d)
    ios = int(d.get("total_ios", 0) or 0) or int(lat.get("N", 0) or 0)
    bins = lat.get("bins")
    return dict(iops=float(d.get("iops", 0.0) or 0.0),
                bw_kib=float(d.get("bw", 0) or 0),
                io_bytes=int(d.get("io_bytes", 0) or 0),
                ios=ios,
                mean_us=(float(lat["mean"]) / 1000.0) if lat.get("mean") is not None and ios else None,
                p99_us=_us(_pct(lat, "99.000000")) if ios else None,
                p999_us=_us(_pct(lat, "99.900000")) if ios else None,
                bins={int(k): int(v) for k, v in bins.items()} if bins else None)


def _us(ns):
    return None if ns is None else ns / 1000.0


def _combine(parts):
    """Combine per-direction or per-clone summaries: sums for rates, ios-
    weighted mean, percentiles from merged histograms (fio json+) when
    every part has them, else the maximum over parts (an upper bound of the
    combined percentile)."""
    parts = [p for p in parts if p["ios"]]
    out = dict(iops=0.0, bw_kib=0.0, io_bytes=0, ios=0, mean_us=None,
               p99_us=None, p999_us=None, bins=None, pct_exact=True)
    if not parts:
        return out
    for k in ("iops", "bw_kib", "io_bytes", "ios"):
        out[k] = sum(p[k] for p in parts)
    means = [(p["mean_us"], p["ios"]) for p in parts if p["mean_us"] is not None]
    if means:
        out["mean_us"] = sum(m * n for m, n in means) / sum(n for _, n in means)
    if all(p.get("bins") for p in parts):
        bins = {}
        for p in parts:
            for v, n in p["bins"].items():
                bins[v] = bins.get(v, 0) + n
        out["bins"] = bins
        out["p99_us"] = _us(_bins_pct(bins, 99.0))
        out["p999_us"] = _us(_bins_pct(bins, 99.9))
    elif len(parts) == 1:
        out["p99_us"], out["p999_us"] = parts[0]["p99_us"], parts[0]["p999_us"]
        out["pct_exact"] = parts[0].get("pct_exact", True)
    else:
        for k in ("p99_us", "p999_us"):
            vals = [p[k] for p in parts if p[k] is not None]
            out[k] = max(vals) if vals else None
        out["pct_exact"] = False
    return out


def load_fio_json(src):
    """The fio JSON document; tolerates text printed before the JSON."""
    text, name = _read_text(src)
    i = text.find("{")
    if i < 0:
        raise InputError("%s: not fio JSON output (no '{')" % name)
    try:
        doc = json.JSONDecoder().raw_decode(text[i:])[0]
    except ValueError as e:
        raise InputError("%s: not fio JSON output: %s" % (name, e)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise InputError("%s: fio JSON has no jobs[] list" % name)
    return doc


def parse_fio(src):
    """Summary of a fio JSON result (path, file, or loaded dict).

    threads:   one entry per jobs[] element (a clone of numjobs), with
               name, groupid, iops, bw_kib, ios, mean/p99/p99.9 latency
               (completion latency, µs) over all directions, and per
               direction figures.
    processes: jobs[] grouped by jobname (each job section models one
               process; its clones are its threads), summed.
    groups:    jobs[] grouped by groupid, summed.
    total:     all jobs combined.
    jain_threads / jain_processes: J over per-thread / per-process IOPS.
    """
    doc = src if isinstance(src, dict) else load_fio_json(src)
    threads = []
    for j in doc["jobs"]:
        if not isinstance(j, dict):
            continue
        dirs = {d: _dir_summary(j[d]) for d in _DIRS if isinstance(j.get(d), dict)}
        t = _combine(list(dirs.values()))
        t.update(name=j.get("jobname", "?"), groupid=j.get("groupid", 0),
                 error=j.get("error", 0), dirs=dirs)
        threads.append(t)

    def group(keyf):
        order, groups = [], {}
        for t in threads:
            k = keyf(t)
            if k not in groups:
                order.append(k)
                groups[k] = []
            groups[k].append(t)
        res = []
        for k in order:
            g = _combine(groups[k])
            g.update(name=k, threads=len(groups[k]))
            res.append(g)
        return res

    processes = group(lambda t: t["name"])
    groups = group(lambda t: t["groupid"])
    total = _combine(threads)
    out = dict(threads=threads, processes=processes, groups=groups,
               total=total,
               jain_threads=jain([t["iops"] for t in threads]),
               jain_processes=jain([p["iops"] for p in processes]),
               fio_version=doc.get("fio version"))
    return out


# ---------------------------------------------------------------- benchmark

def waits_behind(events, subject):
    """What was dispatched while each subject request waited.

    subject(event) picks requests by their insert event (I; Q on a device
    traced without I events).  For each picked request, in insert order:
    dict(sector, i_ns, d_ns, c_ns, reads, writes, write_in_flight,
    requeues): reads / writes are the other read / write requests
    dispatched (D) between its insert and its (last) dispatch,
    write_in_flight whether a write had been dispatched and not completed
    when it was inserted.  A requeued request (R, then inserted again) is
    the same request waiting again, not a new one.  A request whose D or
    C is missing keeps None there."""
    with_i = {e.dev for e in events if e.action == "I"}
    pending, issued, requeued, waiting, out = {}, {}, {}, [], []
    inflight_w = {}
    for e in events:
        key = (e.dev, e.sector)
        start = "I" if e.dev in with_i else "Q"
        if e.action == start and e.blocks and requeued.get(key):
            # inserted again: it has been waiting since its requeue
            pending.setdefault(key, []).append(requeued[key].pop(0))
        elif e.action == start and e.blocks and subject(e):
            rec = dict(sector=e.sector, i_ns=e.time_ns, d_ns=None, c_ns=None,
                       reads=0, writes=0, requeues=0,
                       write_in_flight=sum(inflight_w.values()) > 0)
            pending.setdefault(key, []).append(rec)
            waiting.append(rec)
            out.append(rec)
        elif e.action == "D" and e.blocks:
            mine = pending.get(key) or requeued.get(key)
            if mine and e.direction == "R":
                rec = mine.pop(0)
                rec["d_ns"] = e.time_ns
                waiting.remove(rec)
                issued.setdefault(key, []).append(rec)
            else:
                for rec in waiting:
                    if e.direction == "W":
                        rec["writes"] += 1
                    elif e.direction == "R":
                        rec["reads"] += 1
            if e.direction == "W":
                inflight_w[key] = inflight_w.get(key, 0) + 1
        elif e.action in ("C", "R"):
            if e.direction == "W" and inflight_w.get(key):
                inflight_w[key] -= 1
                if not inflight_w[key]:
                    del inflight_w[key]
            mine = issued.get(key)
            if mine and e.direction == "R":
                rec = mine.pop(0)
                if e.action == "C":
                    rec["c_ns"] = e.time_ns
                else:
                    rec["d_ns"] = None
                    rec["requeues"] += 1
                    requeued.setdefault(key, []).append(rec)
                    waiting.append(rec)
    return out


def parse_diskstats(text):
    """Fields of one /proc/diskstats line: reads, read_sectors, writes,
    write_sectors (completed), name."""
    f = text.split()
    if len(f) < 10:
        raise ValueError("not a /proc/diskstats line: %r" % text[:60])
    return {"name": f[2], "reads": int(f[3]), "read_sectors": int(f[5]),
            "writes": int(f[7]), "write_sectors": int(f[9])}


# ---------------------------------------------------------------- CLI

USAGE = """usage: fwdlib.py blkparse-fmt
       fwdlib.py events BLKPARSE.TXT
       fwdlib.py reads BLKPARSE.TXT
       fwdlib.py sweep BLKPARSE.TXT READ_EXPIRE_MS
       fwdlib.py deadline BLKPARSE.TXT EXPIRE_MS
       fwdlib.py fair-bound BLKPARSE.TXT FAIR_SLACK
       fwdlib.py inflight-at BLKPARSE.TXT SPLIT_SECTOR
       fwdlib.py fg-isolation BLKPARSE.TXT MAX_GAP_MS [EXPIRE_MS]
       fwdlib.py served-ahead BLKPARSE.TXT MIN_AHEAD"""


def _whole(text):
    if not text.isdigit():
        raise InputError("%r is not a whole number" % text)
    return int(text)


def _ms(text):
    if not text.isdigit():
        raise InputError("%r is not a whole number of milliseconds" % text)
    return int(text)


# Actions no analysis reads, dropped unless asked for: get-request and
# plug events (G, P, U, UT).
BLKPARSE_DROPPED = ("G", "P", "U", "UT")


def blkparse_text(bindir, out, keep=""):
    """Writes to @out the text, in BLKPARSE_FMT, of the binary trace "t"
    that blktrace wrote in @bindir (blktrace -o t): the events of the
    actions in @keep (letters, e.g. "IDCR"), or all but
    BLKPARSE_DROPPED.  The guests' blktrace_stop (tools/lib/guest.sh) does
    the same with blkparse and grep."""
    try:
        p = subprocess.run(["blkparse", "-q", "-i", "t", "-f", BLKPARSE_FMT],
                           cwd=bindir, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, check=False)
    except OSError as e:
        raise InputError("blkparse in %s: %s" % (bindir, e)) from e
    if p.returncode:
        raise InputError("blkparse in %s failed: %s" %
                         (bindir, p.stderr.decode(errors="replace").strip()))
    kept = []
    for line in p.stdout.splitlines(keepends=True):
        f = line.split(b" ", 3)
        if len(f) < 4:
            continue
        a = f[2].decode(errors="replace")
        if (len(a) == 1 and a in keep) if keep else a not in BLKPARSE_DROPPED:
            kept.append(line)
    with open(out, "wb") as f:
        f.writelines(kept)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 0 if argv else 2
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "blkparse-fmt" and not args:
            print(BLKPARSE_FMT)
        elif cmd == "blkparse" and len(args) in (2, 3):
            blkparse_text(args[0], args[1], args[2] if len(args) == 3 else "")
        elif cmd == "events" and len(args) == 1:
            for e in parse_blkparse(args[0]):
                print(e.action, e.sector, e.blocks,
                      "%d.%09d" % divmod(e.time_ns, 1000000000), e.rwbs,
                      "-" if e.cpu is None else e.cpu)
        elif cmd == "reads" and len(args) == 1:
            c = read_dispatches(parse_blkparse(args[0]))
            print(c["dispatches"], c["backward"], c["cpus"])
        elif cmd == "sweep" and len(args) == 2:
            c = sweep_check(parse_blkparse(args[0]), _ms(args[1]))
            for m in c["messages"]:
                print("# " + m, file=sys.stderr)
            print(c["dispatches"], c["choices"], c["violations"], c["swaps"])
        elif cmd == "deadline" and len(args) == 2:
            for w in deadline_waits(parse_blkparse(args[0]), _ms(args[1])):
                print(*w)
        elif cmd == "fair-bound" and len(args) == 2:
            r = fair_bound_check(parse_blkparse(args[0]), _whole(args[1]))
            for o, v in sorted(r["per_owner"].items()):
                print("# process %s: %d requests, passed over at most %d "
                      "times (bound %d)" % (o, v["requests"], v["max_passes"],
                                            v["bound"]), file=sys.stderr)
            if r["violations"]:
                print("# worst: %s" % r["worst"], file=sys.stderr)
            print(r["requests"], r["owners"], r["violations"])
        elif cmd == "served-ahead" and len(args) == 2:
            k = _whole(args[1])
            for o, v in sorted(served_ahead(parse_blkparse(args[0])).items(),
                               key=lambda kv: str(kv[0])):
                print(o, v["requests"], v["most_in_flight"],
                      sum(1 for a in v["ahead"] if a >= k),
                      percentile(v["ahead"], 50) if v["ahead"] else 0)
        elif cmd == "fg-isolation" and len(args) in (2, 3):
            r = fg_isolation(parse_blkparse(args[0]), _ms(args[1]) * 1000000,
                             expired_ns=(_ms(args[2]) * 1000000
                                         if len(args) == 3 else None))
            print(r["reads"], r["judged"], r["contested"], r["violations"],
                  r["writes"], r["max_async_inflight"], r["max_reads_expired"],
                  r["max_write_wait_ns"] // 1000000)
        elif cmd == "inflight-at" and len(args) == 2:
            ev = parse_blkparse(args[0])
            out = []
            for own in (False, True):
                counts = inflight_at(ev, _whole(args[1]), own=own)
                out += [len(counts), percentile(counts, 50) if counts else 0,
                        min(counts, default=0),
                        percentile(counts, 90) if counts else 0]
            print(*out)
        else:
            print(USAGE, file=sys.stderr)
            return 2
    except InputError as e:
        print("fwdlib: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
