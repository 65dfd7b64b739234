#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""benchrun: the runs of one boot of a benchmark plan, for bench.sh.

usage: benchrun.py shell PLAN.JSON BOOT_ID

Prints bash assignments (eval them) describing the boot and its runs in
the plan's order, so that the guest executor needs no JSON parser:

  B_DISKS        the boot's disks: "key:name:kind[:attr=value,...]" words
  B_N            number of runs
  and per run i (1..B_N), arrays indexed by i:
  R_ID R_LABEL R_KIND (fio|startup) R_DISK (device name) R_SCHED
  R_TUN (name=value words) R_REC (what to record, words)
  R_JOB R_ARGS R_RUNTIME R_REPLAY (0|1)   the fio job (the foreground of a
                                          start-up run)
  R_BGJOB R_BGARGS R_BGRUNTIME R_WARMUP R_WINDOW R_DIRTYBG R_DIRTY
                                          a start-up run's background
                                          (R_BGJOB empty: idle)
  R_EST R_BEFORE R_AFTER                  estimated seconds of the run,
                                          of the runs before and after it

Words never contain blanks (the planner makes them); this refuses a plan
whose words do.  Exit 2 with a message for a missing or foreign plan or
an unknown boot.
"""

import json
import re
import shlex
import sys

WORD = re.compile(r"^[^\s'\"\\$`]*$")


class PlanError(Exception):
    pass


def words(xs):
    xs = list(xs)
    for x in xs:
        if not WORD.match(str(x)):
            raise PlanError("a plan word with blanks or quotes: %r" % (x,))
    return " ".join(str(x) for x in xs)


def shell(plan, boot_id):
    boots = [b for b in plan.get("boots", []) if b.get("id") == boot_id]
    if not boots:
        raise PlanError("no boot %r in the plan (%s)" %
                        (boot_id, ", ".join(b.get("id", "?")
                                           for b in plan.get("boots", []))))
    b = boots[0]
    out = []

    def put(name, value):
        out.append("%s=%s" % (name, shlex.quote(str(value))))

    disks = []
    for key, d in b["disks"].items():
        attrs = ",".join("%s=%s" % kv for kv in d.get("attrs", {}).items())
        disks.append("%s:%s:%s%s" % (key, d["name"], d["kind"],
                                     ":" + attrs if attrs else ""))
    put("B_DISKS", words(disks))
    put("B_KERNEL", b["kernel"])
    runs = b["runs"]
    put("B_N", len(runs))
    est = [int(r.get("estimate_s", 0)) for r in runs]
    for i, r in enumerate(runs, 1):
        def arr(name, value):
            out.append("%s[%d]=%s" % (name, i, shlex.quote(str(value))))
        arr("R_ID", words([r["id"]]))
        arr("R_LABEL", r["label"])
        arr("R_KIND", r["kind"])
        arr("R_DISK", words([b["disks"][r["disk"]]["name"]]))
        arr("R_SCHED", words([r["scheduler"]]))
        arr("R_TUN", words("%s=%s" % kv for kv in r["tunables"].items()))
        arr("R_REC", words(r["record"]))
        fio = r["fio"] if r["kind"] == "fio" else r["foreground"]
        arr("R_JOB", words([fio["job"]]))
        arr("R_ARGS", words(fio["args"]))
        arr("R_RUNTIME", fio["env"]["FWD_RUNTIME"])
        arr("R_REPLAY", 1 if fio.get("replay") else 0)
        bg = r.get("background") if r["kind"] == "startup" else None
        arr("R_BGJOB", words([bg["job"]]) if bg else "")
        arr("R_BGARGS", words(bg["args"]) if bg else "")
        arr("R_BGRUNTIME", bg["env"]["FWD_RUNTIME"] if bg else "")
        arr("R_WARMUP", bg["warmup_s"] if bg else "")
        arr("R_WINDOW", bg["window_s"] if bg else "")
        arr("R_DIRTYBG", (bg.get("dirty_background_bytes") or "") if bg else "")
        arr("R_DIRTY", (bg.get("dirty_bytes") or "") if bg else "")
        arr("R_EST", est[i - 1])
        arr("R_BEFORE", sum(est[:i - 1]))
        arr("R_AFTER", sum(est[i:]))
    return "\n".join(out) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3 or argv[0] != "shell":
        print("usage: benchrun.py shell PLAN.JSON BOOT_ID", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            plan = json.load(f)
        if plan.get("kind") != "fwdsched-bench-plan":
            raise PlanError("%s: not a benchmark plan" % argv[1])
        sys.stdout.write(shell(plan, argv[2]))
    except (OSError, ValueError, KeyError, PlanError) as e:
        print("benchrun: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
