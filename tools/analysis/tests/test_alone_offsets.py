#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The synchronous reader the benchmark runs alone (fio --section=sync)
reads the same offsets as beside the deep reader: its wait ratio (latency
beside ÷ alone, report.py) compares the same reads.  Runs fio on a sparse
scratch file (skipped without fio)."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import benchplan  # noqa: E402

IOS = 64


def offsets(job, section, tmp, args):
    return offsets_of(os.path.join(TOP, "fio-jobs", job + ".fio"), section,
                      tmp, args)


def offsets_of(jobfile, section, tmp, args):
    """The offsets fio reads for job's section, run with args: the job
    file with a short count instead of its runtime (its jobs are timed),
    through the page cache (a scratch file on any file system), logging
    that section's I/O."""
    log = os.path.join(tmp, "%s-%d.log" % (section, len(os.listdir(tmp))))
    out = []
    with open(jobfile) as f:
        for line in f:
            if line.startswith("time_based"):
                continue
            if line.startswith("runtime="):
                line = "number_ios=%d\n" % IOS
            out.append(line.replace("direct=1", "direct=0"))
            if line.strip() == "[%s]" % section:
                out.append("write_iolog=%s\n" % log)
    path = os.path.join(tmp, "job.fio")
    with open(path, "w") as f:
        f.write("".join(out))
    r = subprocess.run(["fio", path, "--filename=" + os.path.join(tmp, "disk"),
                        "--output=/dev/null"] + args, capture_output=True, text=True)
    if r.returncode:
        raise AssertionError("fio %s %s: %s" % (jobfile, args, r.stderr[-500:]))
    with open(log) as f:
        return [int(x.split()[3]) for x in f if " read " in x]


@unittest.skipUnless(shutil.which("fio"), "fio not installed")
class AloneOffsets(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-alone.")
        with open(os.path.join(self.tmp, "disk"), "wb") as f:
            f.truncate(3 << 30)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def jobs(self):
        """(job, sync section) of every job file the plan runs its
        synchronous reader alone from."""
        out = set()
        for exp, d in benchplan.EXPERIMENTS.items():
            procs = d.get("processes")
            if not procs:
                continue
            for job in list((d.get("variants") or {}).values()) + \
                    ([d["job"]] if d.get("job") else []):
                out.add((job, procs["sync"]))
        return sorted(out)

    def test_alone_reads_what_beside_reads(self):
        jobs = self.jobs()
        self.assertIn(("async-vs-sync-2proc-apart", "sync"), jobs)
        for job, sync in jobs:
            beside = offsets(job, sync, self.tmp, [])
            alone = offsets(job, sync, self.tmp, ["--section=" + sync])
            self.assertEqual(len(beside), IOS, job)
            self.assertEqual(alone, beside, job)

    def test_the_check_can_fail(self):
        # the same job file with the synchronous job second: alone, fio
        # gives it the first job's seed, not its own
        job = "async-vs-sync-2proc"
        with open(os.path.join(TOP, "fio-jobs", job + ".fio")) as f:
            text = f.read()
        head, sync = text.split("[sync]")
        sync, deep = sync.split("[async]")
        swapped = os.path.join(self.tmp, "swapped.fio")
        with open(swapped, "w") as f:
            f.write(head + "[async]" + deep.rstrip("\n") + "\n\n[sync]" + sync)
        beside = offsets_of(swapped, "sync", self.tmp, [])
        alone = offsets_of(swapped, "sync", self.tmp, ["--section=sync"])
        self.assertEqual(len(alone), IOS)
        self.assertNotEqual(alone, beside)


if __name__ == "__main__":
    unittest.main()
