#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""clusterplan: the settings and the plan of make cluster (tools/cluster).

usage: clusterplan.py check          validate the CLUSTER_* settings, print
                                     the plan's size and duration
       clusterplan.py plan DIR       write DIR/plan.json
       clusterplan.py runs PLAN      the plan's runs, one a line, for the
                                     guest: "id nodes batch sched"
       clusterplan.py env PLAN       the rest of the plan as shell
                                     assignments, for the guest

The cluster of paper 001 (../shared/docs/paper-notes.md): a master and
flash nodes over a shared Wi-Fi link, one address space routed by address
range.  Every node is the project's flash card (tools/flashcard) served
by nbdkit in a network namespace of its own; the master's namespace holds
the kernel's NBD client, one /dev/nbd<k> per node, and dm-linear joins
them into one address space.  The scheduler under test orders each
node's /dev/nbd<k>.  Settings (the environment), refused with a message
naming the problem before anything boots:

  CLUSTER_KVER=6.12              the kernel (one of tools/kernels)
  CLUSTER_NODES="1 2 4 8"        node counts, each 1..8, increasing
  CLUSTER_BATCH="1 10 100"       reads in flight per node, each 1..128
                                 (the NBD device's tags per connection)
  CLUSTER_CONNS=1                NBD connections per node, 1..4
  CLUSTER_SCHEDS="none mq-deadline fwdsched"
  CLUSTER_LINK=wifi10            wifi10, wifi (shaped, see LINKS) or none
  CLUSTER_PACKING=nagle          nagle: the requests and replies in flight
                                 share frames (TCP's Nagle algorithm, kept
                                 on in nbdkit and nbd-client by
                                 tools/lib/nagle.c); nodelay: every request
                                 and reply a frame, as the engines ship
  CLUSTER_FWD_DEPTH=16           fwdsched's dispatch_depth on every node's
                                 NBD device, 0..128 (0: no limit, its
                                 default there), see MAX_FWD_DEPTH
  CLUSTER_CARD=paper             flash-card preset of every node
  CLUSTER_ROUNDS=2               interleaved rounds, 1..10
  CLUSTER_RUNTIME=6              seconds per run, 2..600
"""

import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchplan  # noqa: E402  (host and git state, shared with bench)

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEDS = ("none", "mq-deadline", "kyber", "bfq", "fwdsched")
CARDS = ("paper", "fig56", "symmetric", "fast")
MAX_NODES = 8
MAX_BATCH = 128
# The shared medium.  "wifi" is one 802.11g/n channel at 54 Mbit/s: every
# frame, in either direction and to or from any node, goes through one
# netem queue on the master (an ifb device that all node links redirect
# to), so the nodes share its airtime as tablets share a channel.  Each
# frame pays a fixed cost besides its bytes: DIFS (34 us), the mean
# backoff of an idle channel (7.5 slots of 9 us), the PHY preamble and
# header (20 us), SIFS (16 us) and the link-layer ACK with its preamble
# (about 48 us) come to about 185 us; we take 200 us, which netem's
# packet overhead expresses as 1350 bytes at 54 Mbit/s.  One-way delay
# 1 ms.  The kernel hands the link GSO frames of up to 64 KiB, as
# 802.11n aggregates MPDUs: that is where batching pays.
# "wifi10" is the same channel with every time ten times longer (5.4
# Mbit/s, 2 ms a frame, 10 ms one way): under TCG the guest serves a
# node's reads about ten times slower than a tablet's CPU did (100-220
# reads/s a node), so only a link slowed as much keeps the paper's
# proportion of link to node, where the link, not the nodes, limits
# unbatched reads.  It is the default; "wifi" is the real channel's
# timing, which the emulated nodes never load.
LINKS = {
    "wifi10": {"rate_kbit": 5400, "overhead_bytes": 1350, "delay_ms": 10,
               "frame_us": 2000},
    "wifi": {"rate_kbit": 54000, "overhead_bytes": 1350, "delay_ms": 1,
             "frame_us": 200},
    "none": None,
}
# How requests and replies share the link's frames.  The paper's master
# packed 10 or 100 reads into one packet; NBD has no such message, but
# TCP does the same for a stream of small writes unless the application
# turns Nagle's algorithm off, which nbd-client and nbdkit both do
# (TCP_NODELAY).  "nagle" keeps it on (tools/lib/nagle.c, preloaded), so
# what is written while a small segment is unacknowledged leaves in one
# frame with what follows it; "nodelay" is the engines as shipped.
PACKINGS = ("nagle", "nodelay")
# fwdsched's dispatch_depth on the nodes' NBD devices.  NBD takes 128
# requests a connection, so with 100 in flight nothing waits in any
# scheduler and every scheduler's order is the order fio submitted: the
# card serves them at random.  A node's card serves one request at a
# time; a dispatch_depth that covers the link's round trip (about 5 reads
# at wifi10's 25 ms and a node's 200 reads/s) keeps the card busy while
# the rest wait in fwdsched, sorted.  mq-deadline and none have no such
# limit: they are measured as a user would run them.
MAX_FWD_DEPTH = 128
# the reads: 512 bytes, the smallest a block device takes (the paper's
# cluster read one byte; requests under 4 KiB cost it as much as 4 KiB)
BS = 512
# per run, besides its runtime: counters of every node read before and
# after, fio's start under TCG (the default plan's 72 runs took 1368 s
# from boot to teardown on the 2-core host, 27 November)
RUN_OVERHEAD_S = 10
# per node count: the dm table; once: namespaces, nbdkit's start, the
# connections, the mapping check and the failure case
NODES_OVERHEAD_S = 3
SETUP_S = 90
FAILURE_S = 60
BOOT_S = 30


class SettingsError(Exception):
    pass


def _ints(name, text, lo, hi):
    vals = []
    for w in text.split():
        if not w.isdigit():
            raise SettingsError("%s: '%s' is not a whole number" % (name, w))
        v = int(w)
        if not lo <= v <= hi:
            raise SettingsError("%s: %d is out of range %d..%d" % (name, v, lo, hi))
        vals.append(v)
    if not vals:
        raise SettingsError("%s: no value given" % name)
    if sorted(set(vals)) != vals:
        raise SettingsError("%s: '%s' must be increasing, without repeats" %
                            (name, text.strip()))
    return vals


def _int(name, text, lo, hi):
    if len(text.split()) != 1:
        raise SettingsError("%s: '%s' must be one whole number" % (name, text.strip()))
    return _ints(name, text, lo, hi)[0]


def kernels():
    with open(os.path.join(TOP, "tools", "kernels")) as f:
        return f.read().split()


def settings(env=None):
    """The validated settings from the environment (CLUSTER_*), or
    SettingsError naming the first bad one."""
    env = os.environ if env is None else env
    s = {}
    kver = env.get("CLUSTER_KVER", "6.12").strip()
    if kver not in kernels():
        raise SettingsError("CLUSTER_KVER: '%s' is not one of tools/kernels (%s)" %
                            (kver, " ".join(kernels())))
    s["kver"] = kver
    s["nodes"] = _ints("CLUSTER_NODES", env.get("CLUSTER_NODES", "1 2 4 8"),
                       1, MAX_NODES)
    s["batch"] = _ints("CLUSTER_BATCH", env.get("CLUSTER_BATCH", "1 10 100"),
                       1, MAX_BATCH)
    s["conns"] = _int("CLUSTER_CONNS", env.get("CLUSTER_CONNS", "1"), 1, 4)
    scheds = env.get("CLUSTER_SCHEDS", "none mq-deadline fwdsched").split()
    if not scheds:
        raise SettingsError("CLUSTER_SCHEDS: no scheduler given")
    for x in scheds:
        if x not in SCHEDS:
            raise SettingsError("CLUSTER_SCHEDS: unknown scheduler '%s' (known: %s)" %
                                (x, " ".join(SCHEDS)))
    if len(set(scheds)) != len(scheds):
        raise SettingsError("CLUSTER_SCHEDS: '%s' names a scheduler twice" %
                            " ".join(scheds))
    s["scheds"] = scheds
    link = env.get("CLUSTER_LINK", "wifi10").strip()
    if link not in LINKS:
        raise SettingsError("CLUSTER_LINK: '%s' is not one of %s" %
                            (link, ", ".join(LINKS)))
    s["link"] = link
    s["link_params"] = LINKS[link]
    packing = env.get("CLUSTER_PACKING", "nagle").strip()
    if packing not in PACKINGS:
        raise SettingsError("CLUSTER_PACKING: '%s' is not one of %s" %
                            (packing, ", ".join(PACKINGS)))
    s["packing"] = packing
    s["fwd_depth"] = _int("CLUSTER_FWD_DEPTH", env.get("CLUSTER_FWD_DEPTH", "16"),
                          0, MAX_FWD_DEPTH)
    card = env.get("CLUSTER_CARD", "paper").strip()
    if card not in CARDS:
        raise SettingsError("CLUSTER_CARD: '%s' is not one of %s" %
                            (card, ", ".join(CARDS)))
    s["card"] = card
    s["rounds"] = _int("CLUSTER_ROUNDS", env.get("CLUSTER_ROUNDS", "2"), 1, 10)
    s["runtime"] = _int("CLUSTER_RUNTIME", env.get("CLUSTER_RUNTIME", "6"), 2, 600)
    return s


def runs(s):
    """Every run, rounds interleaved: in each round every node count,
    batching level and scheduler once, the schedulers of one cell side
    by side."""
    out = []
    for r in range(1, s["rounds"] + 1):
        for n in s["nodes"]:
            for b in s["batch"]:
                for x in s["scheds"]:
                    out.append({"id": "n%d-b%d-%s-r%d" % (n, b, x, r),
                                "nodes": n, "batch": b, "sched": x,
                                "round": r})
    return out


def duration_s(s):
    n = len(runs(s))
    return (BOOT_S + SETUP_S + FAILURE_S + n * (s["runtime"] + RUN_OVERHEAD_S) +
            s["rounds"] * len(s["nodes"]) * NODES_OVERHEAD_S)


def command(s):
    return ("CLUSTER_KVER=%s CLUSTER_NODES=%s CLUSTER_BATCH=%s CLUSTER_CONNS=%d "
            "CLUSTER_SCHEDS=%s CLUSTER_LINK=%s CLUSTER_PACKING=%s "
            "CLUSTER_FWD_DEPTH=%d CLUSTER_CARD=%s CLUSTER_ROUNDS=%d "
            "CLUSTER_RUNTIME=%d make cluster" % (
                s["kver"], benchplan.shquote(" ".join(map(str, s["nodes"]))),
                benchplan.shquote(" ".join(map(str, s["batch"]))), s["conns"],
                benchplan.shquote(" ".join(s["scheds"])), s["link"], s["packing"],
                s["fwd_depth"], s["card"], s["rounds"], s["runtime"]))


def plan(s):
    g = benchplan.git_state()
    p = dict(kind="fwdsched-cluster", commit=g.get("commit"), dirty=g.get("dirty"),
             command=command(s), host=benchplan.host_state(), bs=BS, **s)
    p["created"] = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    p["runs"] = runs(s)
    # the failure case: the largest cluster at the middle batching level,
    # the last node's link taken down a third of the way in
    p["failure"] = {"nodes": s["nodes"][-1], "batch": s["batch"][len(s["batch"]) // 2],
                    "sched": "fwdsched" if "fwdsched" in s["scheds"] else s["scheds"][-1],
                    "runtime": 40, "down_at": 10, "timeout": 20,
                    "node": s["nodes"][-1] - 1}
    return p


def guest_env(p):
    """The plan's settings for tools/guest/cluster.sh, as shell
    assignments of whole numbers and plain words."""
    lp = p["link_params"] or {}
    f = p["failure"]
    kv = [("C_NODES", max(p["nodes"])), ("C_CONNS", p["conns"]),
          ("C_LINK", p["link"]), ("C_RATE_KBIT", lp.get("rate_kbit", 0)),
          ("C_OVERHEAD", lp.get("overhead_bytes", 0)),
          ("C_DELAY_MS", lp.get("delay_ms", 0)), ("C_CARD", p["card"]),
          ("C_PACKING", p.get("packing", "nodelay")),
          ("C_FWD_DEPTH", p.get("fwd_depth", 0)),
          ("C_RUNTIME", p["runtime"]), ("C_BS", p["bs"]),
          ("F_NODES", f["nodes"]), ("F_BATCH", f["batch"]),
          ("F_SCHED", f["sched"]), ("F_RUNTIME", f["runtime"]),
          ("F_DOWN_AT", f["down_at"]), ("F_TIMEOUT", f["timeout"]),
          ("F_NODE", f["node"])]
    return "\n".join("%s=%s" % (k, v) for k, v in kv)


def main(argv):
    if len(argv) < 2 or argv[1] not in ("check", "plan", "runs", "env"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        if argv[1] in ("runs", "env"):
            if len(argv) != 3:
                raise SettingsError("usage: clusterplan.py %s PLAN" % argv[1])
            with open(argv[2]) as f:
                p = json.load(f)
            if argv[1] == "runs":
                for r in p["runs"]:
                    print(r["id"], r["nodes"], r["batch"], r["sched"])
            else:
                print(guest_env(p))
            return 0
        s = settings()
        if argv[1] == "check":
            print("cluster: %d runs on %s (%s nodes, batching %s, %s), about %d min" % (
                len(runs(s)), s["kver"], "/".join(map(str, s["nodes"])),
                "/".join(map(str, s["batch"])), ", ".join(s["scheds"]),
                (duration_s(s) + 59) // 60))
            return 0
        if len(argv) != 3:
            raise SettingsError("usage: clusterplan.py plan DIR")
        with open(os.path.join(argv[2], "plan.json"), "w") as f:
            json.dump(plan(s), f, indent=1)
        return 0
    except SettingsError as e:
        print("cluster: %s" % e, file=sys.stderr)
        return 2
    except (OSError, ValueError, KeyError) as e:
        print("cluster: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
