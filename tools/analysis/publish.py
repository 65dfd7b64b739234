#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""publish: append one benchmark, soak or cluster run to BENCHMARKS.md
(tools/bench --publish, tools/soak --publish, tools/cluster --publish).

usage: publish.py [--file BENCHMARKS.md] RESULTS_DIR

Writes a dated entry from RESULTS_DIR (results/<timestamp>/, or
results/latest): the date and commit of the plan, the exact command, the
host's state at the start and the end, the duration, and the report's
target table copied verbatim from report.md (between its
"targets:begin" and "targets:end" markers).  Nothing in the entry is
typed by hand.  Exit 2 with a message when the run has no plan or no
report with a target table, or when it is already in the file.  A soak
run (results/soak-<timestamp>/, tools/soak) has a meta.json instead of a
plan, and its entry carries the report's result table.  A cluster run
(results/cluster-<timestamp>/, tools/cluster) has a plan of its own kind,
and its entry carries the report's targets and checks and its table of
runs (between "runs:begin" and "runs:end").
"""

import json
import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHMARKS = os.path.join(TOP, "BENCHMARKS.md")
# The markers around the tables an entry copies; the reports that write
# them (report.py, soakreport.py, clusterreport.py) take them from here.
BEGIN, END = "<!-- targets:begin -->", "<!-- targets:end -->"
RUNS_BEGIN, RUNS_END = "<!-- runs:begin -->", "<!-- runs:end -->"
# Every arm against the baseline (report.py's arms_section): copied too,
# so that a figure quoted from an arm that no target judges (a commit
# message's) can be checked here; reports written before it lack it.
ARMS_BEGIN, ARMS_END = "<!-- arms:begin -->", "<!-- arms:end -->"


class PublishError(Exception):
    pass


def read_run(root, meta, what):
    """The run's @meta file (JSON) and the table between the markers of
    its report.md, or PublishError naming what is missing."""
    try:
        with open(os.path.join(root, meta)) as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        raise PublishError("%s: no %s or report (%s)" % (
            root, meta.split(".")[0], e)) from None
    return m, between(root, BEGIN, END, what)


def between(root, begin, end, what):
    """The text of the run's report.md between @begin and @end, or
    PublishError naming @what is missing."""
    try:
        with open(os.path.join(root, "report.md")) as f:
            md = f.read()
    except OSError as e:
        raise PublishError("%s: no report (%s)" % (root, e)) from None
    if begin not in md or end not in md:
        raise PublishError("%s/report.md has no %s" % (root, what))
    return md[md.index(begin) + len(begin):md.index(end)].strip("\n")


def soak_entry(root, run):
    """The entry of a soak run (tools/soak): its meta.json and the result
    table of its report.md."""
    m, block = read_run(root, "meta.json", "result table")
    s, h = m["settings"], m.get("host") or {}
    lines = ["## %s — soak, %s (run `%s`)" % (m["created"][:10], ", ".join(s["kernels"]), run),
             "",
             "- commit: `%s`%s" % (m.get("commit"),
                                   " with uncommitted changes" if m.get("dirty") else ""),
             "- command: `%s`" % m["command"],
             "- started: %s; %d min of I/O per kernel, a scheduler switch every %d s" % (
                 m["created"], s["minutes"], s["switch_s"]),
             "- host: %s CPUs, host kernel %s" % (h.get("nproc"), h.get("uname")),
             "- full report: `results/%s/report.md` (not in git)" % run,
             "", block, ""]
    return run, "\n".join(lines)


def cluster_entry(root, run, plan, block):
    """The entry of a cluster run (tools/cluster): its plan, the targets
    and checks, and the table of runs of its report.md."""
    runs = between(root, RUNS_BEGIN, RUNS_END, "table of runs")
    done = _record(root, "done.json")
    rc = _record(root, "summary.json").get("report_commit")
    h = plan.get("host") or {}
    lines = ["## %s — cluster, %s (run `%s`)" % (plan["created"][:10], plan["kver"], run),
             "",
             "- commit: `%s`%s" % (plan.get("commit"),
                                   " with uncommitted changes" if plan.get("dirty") else ""),
             "- command: `%s`" % plan["command"],
             "- started: %s; duration: %s" % (plan["created"], _duration(done)),
             "- host: %s CPUs, load %s at the start, host kernel %s" % (
                 h.get("nproc"), _load_text(h.get("loadavg")), h.get("uname")),
             "- report written at commit `%s`%s" % (
                 rc or plan.get("commit"), "" if rc in (None, plan.get("commit"))
                 else " (after the run, from its records)"),
             "- full report and plot: `results/%s/report.md` (not in git)" % run,
             "", block, "", runs, ""]
    return run, "\n".join(lines)


def _record(root, name):
    """The run's JSON record @name (done.json, summary.json), {} when it
    is missing or unreadable."""
    try:
        with open(os.path.join(root, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _duration(done):
    return ("%d min" % round(done["duration_s"] / 60) if "duration_s" in done
            else "unknown (the run did not finish)")


def _load_text(xs):
    return " / ".join("%.2f" % x for x in xs) if xs else "n/a"


def entry(root):
    run = os.path.basename(os.path.realpath(root))
    if os.path.exists(os.path.join(root, "meta.json")):
        return soak_entry(root, run)
    plan, block = read_run(root, "plan.json", "target table")
    if plan.get("kind") == "fwdsched-cluster":
        return cluster_entry(root, run, plan, block)
    done = _record(root, "done.json")
    s, h = plan["settings"], plan.get("host") or {}
    lines = ["## %s — %s%s (run `%s`)" % (plan["created"][:10], ", ".join(s["kernels"]),
                                          _plan_kind(s), run),
             "",
             "- commit: `%s`%s" % (plan.get("commit"),
                                   " with uncommitted changes" if plan.get("dirty") else ""),
             "- command: `%s`" % plan["command"],
             "- started: %s; duration: %s" % (plan["created"], _duration(done)),
             "- host: %s CPUs, load %s at the start and %s at the end, %s other "
             "QEMU guests at the start, host kernel %s" % (
                 h.get("nproc"), _load_text(h.get("loadavg")), _load_text(done.get("loadavg")),
                 h.get("qemu_running"), h.get("uname")),
             "- cards %s; experiments %s; arms %s; %d rounds of %d s" % (
                 ", ".join(s["cards"]), ", ".join(s["experiments"]),
                 ", ".join(a["id"] for a in plan["arms"]), s["rounds"],
                 s["runtime_s"])] + _guests(root) + [
             "- full report: `results/%s/report.md` (not in git)" % run,
             "", block, ""]
    try:
        lines += ["Every arm against the baseline:", "",
                  between(root, ARMS_BEGIN, ARMS_END, "arm table"), ""]
    except PublishError:
        pass
    return run, "\n".join(lines)


def _plan_kind(settings):
    """Which plan a benchmark run is, for its heading: the default plan
    (make bench) or the full matrix (make bench FULL=1); nothing for runs
    planned before there were two."""
    return {"default": ", default plan", "full": ", full matrix"}.get(
        settings.get("plan"), "")


def _guests(root):
    """The guests' clocks, from the report's summary.json, as an entry line
    (none when the report did not record them)."""
    gs = _record(root, "summary.json").get("guests") or {}
    if not gs:
        return []
    return ["- guest clocks: %s" % "; ".join(
        "%s %s" % (bid, g.get("text")) for bid, g in sorted(gs.items()))]


HEADER = """# Benchmark results

One entry per published run of `make bench`, `make soak` or `make
cluster`, newest last, each appended by `tools/bench --publish
results/<timestamp>` (`tools/soak --publish`, `tools/cluster --publish`)
from the run's own files: the plan's date, commit and exact command, the
host's state, and the report's target table and table of every arm
against the baseline, copied verbatim (no figure here is typed by hand;
a cluster entry also carries its table of runs).
How the targets are judged: `fio-jobs/targets.json` and the head of any
`report.md`; what the experiments are: `tools/BENCH.md`, sections "The
benchmark", "The soak" and "The cluster".

"""


def publish(root, path=BENCHMARKS):
    run, text = entry(root)
    old = ""
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
        if "(run `%s`)" % run in old:
            raise PublishError("run %s is already in %s" % (run, path))
    with open(path, "w") as f:
        f.write((old or HEADER).rstrip("\n") + "\n\n" + text)
    return run


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    path = BENCHMARKS
    if len(argv) == 3 and argv[0] == "--file":
        path, argv = argv[1], argv[2:]
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: publish.py [--file BENCHMARKS.md] RESULTS_DIR", file=sys.stderr)
        return 2
    try:
        run = publish(argv[0], path)
    except PublishError as e:
        print("publish: %s" % e, file=sys.stderr)
        return 2
    print("publish: run %s appended to %s" % (run, path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
