#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""benchrun: the runs of one boot of a benchmark plan, for bench.sh.

usage: benchrun.py shell PLAN.JSON BOOT_ID [UFS_DISK]

Prints bash assignments (eval them) describing the boot and its runs in
the plan's order, so that the guest executor needs no JSON parser:

  B_DISKS        the boot's disks: "key:name:kind[:attr=value,...]" words;
                 a UFS disk (kind ufs) is named UFS_DISK, the guest's
                 name for it (FWD_UFS_DISK of tools/runner/vm-init)
  B_TRANSPORT    the card's transport (sd, ufs), empty without a card
  B_APPSTART B_APPSIZE B_APPMODS
                 the real program's file system (bytes) and modules
                 (comma-separated), empty when no run starts it
  B_N            number of runs
  and per run i (1..B_N), arrays indexed by i:
  R_ID R_LABEL R_KIND (fio|startup) R_DISK (device name) R_SCHED
  R_TUN (name=value words) R_REC (what to record, words)
  R_JOB R_ARGS R_RUNTIME R_REPLAY (0|1)   the fio job (the foreground of a
                                          start-up run)
  R_BGJOB R_BGARGS R_BGRUNTIME R_WARMUP R_WINDOW R_DIRTYBG R_DIRTY
                                          a start-up run's background
                                          (R_BGJOB empty: idle)
  R_APPLIMIT                              the real program's start-up
                                          limit in a start-up run (s;
                                          empty: no real program)
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


def shell(plan, boot_id, ufs_disk=None):
    boots = [b for b in plan.get("boots", []) if b.get("id") == boot_id]
    if not boots:
        raise PlanError("no boot %r in the plan (%s)" %
                        (boot_id, ", ".join(b.get("id", "?")
                                           for b in plan.get("boots", []))))
    b = boots[0]
    out = []

    def put(name, value):
        out.append("%s=%s" % (name, shlex.quote(str(value))))

    names = {}
    for key, d in b["disks"].items():
        names[key] = d["name"]
        if d["kind"] == "ufs":
            if not ufs_disk:
                raise PlanError("boot %s has a UFS disk: its name in the guest "
                                "is needed (FWD_UFS_DISK)" % boot_id)
            names[key] = ufs_disk
    disks = []
    for key, d in b["disks"].items():
        attrs = ",".join("%s=%s" % kv for kv in d.get("attrs", {}).items())
        disks.append("%s:%s:%s%s" % (key, names[key], d["kind"],
                                     ":" + attrs if attrs else ""))
    put("B_DISKS", words(disks))
    put("B_KERNEL", b["kernel"])
    put("B_TRANSPORT", b["device"].get("transport", ""))
    app = b.get("app_fs")
    put("B_APPSTART", app["start"] if app else "")
    put("B_APPSIZE", app["size"] if app else "")
    put("B_APPMODS", words([",".join(app["modules"])]) if app else "")
    runs = b["runs"]
    put("B_N", len(runs))
    est = [int(r.get("estimate_s", 0)) for r in runs]
    for i, r in enumerate(runs, 1):
        def arr(name, value):
            out.append("%s[%d]=%s" % (name, i, shlex.quote(str(value))))
        arr("R_ID", words([r["id"]]))
        arr("R_LABEL", r["label"])
        arr("R_KIND", r["kind"])
        arr("R_DISK", words([names[r["disk"]]]))
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
        app = r.get("app") if r["kind"] == "startup" else None
        arr("R_APPLIMIT", app["limit_s"] if app else "")
        arr("R_EST", est[i - 1])
        arr("R_BEFORE", sum(est[:i - 1]))
        arr("R_AFTER", sum(est[i:]))
    return "\n".join(out) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (3, 4) or argv[0] != "shell":
        print("usage: benchrun.py shell PLAN.JSON BOOT_ID [UFS_DISK]",
              file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            plan = json.load(f)
        if plan.get("kind") != "fwdsched-bench-plan":
            raise PlanError("%s: not a benchmark plan" % argv[1])
        sys.stdout.write(shell(plan, argv[2], argv[3] if len(argv) > 3 else None))
    except (OSError, ValueError, KeyError, PlanError) as e:
        print("benchrun: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
