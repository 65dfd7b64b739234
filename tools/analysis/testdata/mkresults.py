#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Writes the synthetic results tree testdata/results/run1/ used by
tests/test_report.py.  Deterministic; rerun after changing it and commit the
output.  The expected numbers are derived in tests/test_report.py."""

import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "results", "run1")


def fio_doc(jobs):
    """jobs: list of (jobname, groupid, iops, mean_us, p99_us, p999_us)."""
    out = []
    for name, gid, iops, mean, p99, p999 in jobs:
        ios = int(iops * 10)
        rd = {"io_bytes": ios * 4096, "bw": iops * 4, "iops": iops, "runtime": 10000,
              "total_ios": ios,
              "clat_ns": {"min": 1000, "max": p999 * 1000, "mean": mean * 1000.0, "N": ios,
                          "percentile": {"99.000000": p99 * 1000, "99.900000": p999 * 1000}}}
        zero = {"io_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0,
                "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "N": 0}}
        out.append({"jobname": name, "groupid": gid, "error": 0, "read": rd,
                    "write": zero, "trim": zero})
    return {"fio version": "fio-3.39", "jobs": out}


def blk_lines(inserts, dispatches, late_inserts=None):
    """I events for @inserts at t=0, then each D followed by its C after
    100 µs for a forward (delta >= 0) and 300 µs for a backward move.
    late_inserts: {index: [sectors]} inserted just before dispatch #index."""
    late_inserts = late_inserts or {}
    lines = []
    t = 1000
    for s in inserts:
        lines.append("179,0 I RS %d 8 %d.%09d 100 fio" % (s, t // 10**9, t % 10**9))
    pos = 0
    for i, s in enumerate(dispatches):
        t += 1000
        for ls in late_inserts.get(i, []):
            lines.append("179,0 I RS %d 8 %d.%09d 100 fio" % (ls, t // 10**9, t % 10**9))
        t += 1000
        lines.append("179,0 D RS %d 8 %d.%09d 100 fio" % (s, t // 10**9, t % 10**9))
        t += 100000 if s >= pos else 300000
        lines.append("179,0 C RS %d 8 %d.%09d 0 swapper/0" % (s, t // 10**9, t % 10**9))
        pos = s + 8
    return "\n".join(lines) + "\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    if os.path.exists(ROOT):
        shutil.rmtree(ROOT)
    write(os.path.join(ROOT, "meta.json"), json.dumps(
        {"kernels": ["6.12"], "models": ["paper"], "runtime": 10,
         "schedulers": ["none", "mq-deadline", "kyber", "bfq", "fwdsched",
                        "fwdsched-slack0", "fwdsched-slack8"]}, indent=1) + "\n")
    job = os.path.join(ROOT, "6.12", "paper", "rand16")
    four = lambda name, iops, mean, p99, p999: [(name, 0, x, mean, p99, p999) for x in iops]
    write(os.path.join(job, "mq-deadline", "fio.json"),
          json.dumps(fio_doc(four("rand", [100, 100, 100, 100], 1000, 3000, 5000))))
    write(os.path.join(job, "fwdsched", "fio.json"),
          json.dumps(fio_doc(four("rand", [150, 150, 100, 100], 800, 2400, 5000))))
    write(os.path.join(job, "none", "fio.json"),
          json.dumps(fio_doc(four("rand", [80, 80, 80, 80], 1250, 4000, 6000))))
    write(os.path.join(job, "fwdsched-slack0", "fio.json"),
          json.dumps(fio_doc(four("rand", [200, 100, 100, 100], 800, 2400, 5000))))
    write(os.path.join(job, "fwdsched-slack8", "fio.json"),
          json.dumps(fio_doc(four("rand", [130, 130, 120, 120], 800, 2400, 5000))))
    write(os.path.join(job, "kyber", "fio.json"), "fio: this run went wrong\n")
    # mq-deadline: 20 f, 10 other_backward (30, 40 pending above), 30 f, 40 f
    write(os.path.join(job, "mq-deadline", "blk.txt"),
          blk_lines([10, 20, 30, 40], [20, 10, 30, 40]))
    # fwdsched: 10 20 30 40 forward, 15 and 25 arrive below, wrap to 5, 15 25
    write(os.path.join(job, "fwdsched", "blk.txt"),
          blk_lines([10, 20, 30, 40, 5], [10, 20, 30, 40, 5, 15, 25], {2: [15, 25]}))
    write(os.path.join(job, "bfq", "blk.txt"), blk_lines([10, 20], [20, 10]))
    write(os.path.join(job, "fwdsched", "mmc-history.txt"),
          "# issue_ns done_ns op sector nr_sectors err\n"
          "1000 3000 R 100 8 0\n4000 5000 R 200 8 0\n6000 12000 R 50 8 0\n")
    write(os.path.join(job, "fwdsched", "debugfs.txt"),
          "stats:\ninserted 100\ndispatched 100\nforward 96\nbackward 4\nwraps 4\n")

    two = os.path.join(ROOT, "6.12", "paper", "twoproc")
    write(os.path.join(two, "mq-deadline", "fio.json"), json.dumps(fio_doc(
        [("async", 0, 950, 30000, 60000, 90000), ("sync", 0, 50, 20000, 165000, 200000)])))
    write(os.path.join(two, "fwdsched", "fio.json"), json.dumps(fio_doc(
        [("async", 0, 500, 60000, 90000, 99000), ("sync", 0, 450, 2000, 20000, 30000)])))
    # two jobs of one family (fig2-*): side-by-side table and plot
    for job, dl, fw in (("fig2-sort", 800, 900), ("fig2-shuffle", 400, 600)):
        for sched, iops in (("mq-deadline", dl), ("fwdsched", fw)):
            write(os.path.join(ROOT, "6.12", "paper", job, sched, "fio.json"),
                  json.dumps(fio_doc([(job[5:], 0, iops, 1000, 2000, 3000)])))
    # null_blk rounds: fio.json is round 1; none has no round 3
    nb = os.path.join(ROOT, "6.12", "nullb", "rand16")
    for sched, iops in (("mq-deadline", [100, 200, 100]), ("none", [125, 250]),
                        ("fwdsched", [90, 220, 80])):
        for k, x in enumerate(iops, 1):
            name = "fio.json" if k == 1 else "round%d.json" % k
            write(os.path.join(nb, sched, name),
                  json.dumps(fio_doc([("rand", 0, x, 1000, 2000, 3000)])))
    # a job without a baseline
    write(os.path.join(ROOT, "6.12", "symmetric", "rand16", "fwdsched", "fio.json"),
          json.dumps(fio_doc(four("rand", [100, 100, 100, 100], 1000, 3000, 5000))))


if __name__ == "__main__":
    main()
