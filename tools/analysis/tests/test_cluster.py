#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of make cluster's host side: the settings it refuses
(clusterplan.py, tools/cluster --dry-run), the plan, and the report
(clusterreport.py) on records written here with known answers."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "flashcard"))

import clusterplan  # noqa: E402
import clusterreport  # noqa: E402
import costmodel  # noqa: E402
import publish  # noqa: E402


class Settings(unittest.TestCase):

    def bad(self, env, *words):
        with self.assertRaises(clusterplan.SettingsError) as cm:
            clusterplan.settings(env)
        for w in words:
            self.assertIn(w, str(cm.exception))

    def test_defaults(self):
        s = clusterplan.settings({})
        self.assertEqual(s["nodes"], [1, 2, 4, 8])
        self.assertEqual(s["batch"], [1, 10, 100])
        self.assertEqual(s["scheds"], ["none", "mq-deadline", "fwdsched"])
        self.assertEqual(s["link"], "wifi10")
        self.assertEqual(s["packing"], "nagle")
        self.assertEqual(s["fwd_depth"], 16)
        self.assertEqual(len(clusterplan.runs(s)), 4 * 3 * 3 * 2)

    def test_refused(self):
        self.bad({"CLUSTER_NODES": "1 2 x"}, "CLUSTER_NODES", "'x'")
        self.bad({"CLUSTER_NODES": "0 2"}, "CLUSTER_NODES", "0 is out of range 1..8")
        self.bad({"CLUSTER_NODES": "1 16"}, "CLUSTER_NODES", "16 is out of range")
        self.bad({"CLUSTER_NODES": "4 2"}, "CLUSTER_NODES", "increasing")
        self.bad({"CLUSTER_NODES": "2 2"}, "CLUSTER_NODES", "increasing")
        self.bad({"CLUSTER_NODES": " "}, "CLUSTER_NODES", "no value")
        self.bad({"CLUSTER_NODES": "-1"}, "CLUSTER_NODES", "'-1'")
        self.bad({"CLUSTER_BATCH": "1 1000"}, "CLUSTER_BATCH", "1000 is out of range 1..128")
        self.bad({"CLUSTER_BATCH": "1.5"}, "CLUSTER_BATCH", "'1.5'")
        self.bad({"CLUSTER_CONNS": "1 2"}, "CLUSTER_CONNS", "one whole number")
        self.bad({"CLUSTER_CONNS": "5"}, "CLUSTER_CONNS", "out of range 1..4")
        self.bad({"CLUSTER_SCHEDS": "fwdsched cfq"}, "CLUSTER_SCHEDS", "'cfq'")
        self.bad({"CLUSTER_SCHEDS": "fwdsched fwdsched"}, "CLUSTER_SCHEDS", "twice")
        self.bad({"CLUSTER_SCHEDS": ""}, "CLUSTER_SCHEDS", "no scheduler")
        self.bad({"CLUSTER_LINK": "5g"}, "CLUSTER_LINK", "'5g'")
        self.bad({"CLUSTER_CARD": "nand"}, "CLUSTER_CARD", "'nand'")
        self.bad({"CLUSTER_PACKING": "jumbo"}, "CLUSTER_PACKING", "'jumbo'")
        self.bad({"CLUSTER_FWD_DEPTH": "129"}, "CLUSTER_FWD_DEPTH", "out of range 0..128")
        self.bad({"CLUSTER_FWD_DEPTH": "2 4"}, "CLUSTER_FWD_DEPTH", "one whole number")
        self.bad({"CLUSTER_FWD_DEPTH": "x"}, "CLUSTER_FWD_DEPTH", "'x'")
        self.bad({"CLUSTER_KVER": "5.10"}, "CLUSTER_KVER", "'5.10'")
        self.bad({"CLUSTER_ROUNDS": "0"}, "CLUSTER_ROUNDS", "out of range 1..10")
        self.bad({"CLUSTER_RUNTIME": "1"}, "CLUSTER_RUNTIME", "out of range 2..600")

    def test_cli_refuses_before_booting(self):
        for tool in ([sys.executable, os.path.join(HERE, "clusterplan.py"), "check"],
                     [os.path.join(TOP, "tools", "cluster"), "--dry-run"]):
            env = dict(os.environ, CLUSTER_BATCH="10 0")
            r = subprocess.run(tool, env=env, capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, r)
            self.assertIn("CLUSTER_BATCH: 0 is out of range 1..128", r.stderr)
            self.assertEqual(r.stdout, "")
        r = subprocess.run([os.path.join(TOP, "tools", "cluster"), "--bogus"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage", r.stderr)

    def test_plan_and_guest_env(self):
        s = clusterplan.settings({"CLUSTER_NODES": "1 4", "CLUSTER_BATCH": "1 10 100",
                                  "CLUSTER_SCHEDS": "mq-deadline fwdsched",
                                  "CLUSTER_ROUNDS": "2"})
        rs = clusterplan.runs(s)
        self.assertEqual(len(rs), 2 * 3 * 2 * 2)
        # rounds interleave: every cell of round 1 before any of round 2
        self.assertEqual([r["round"] for r in rs], [1] * 12 + [2] * 12)
        self.assertEqual(rs[0]["id"], "n1-b1-mq-deadline-r1")
        self.assertEqual(len({r["id"] for r in rs}), len(rs))
        p = clusterplan.plan(s)
        env = dict(line.split("=", 1) for line in clusterplan.guest_env(p).split("\n"))
        self.assertEqual(env["C_NODES"], "4")
        self.assertEqual(env["F_NODES"], "4")
        self.assertEqual(env["F_NODE"], "3")
        self.assertEqual(env["F_BATCH"], "10")
        self.assertEqual(env["C_OVERHEAD"], "1350")
        self.assertEqual(env["C_PACKING"], "nagle")
        self.assertEqual(env["C_FWD_DEPTH"], "16")
        self.assertIn("CLUSTER_PACKING=nagle CLUSTER_FWD_DEPTH=16", p["command"])
        # a plan written before packing and the depth existed: as shipped
        del p["packing"], p["fwd_depth"]
        env = dict(line.split("=", 1) for line in clusterplan.guest_env(p).split("\n"))
        self.assertEqual((env["C_PACKING"], env["C_FWD_DEPTH"]), ("nodelay", "0"))
        for v in env.values():
            self.assertRegex(v, r"^[A-Za-z0-9.-]+$")


class Nagle(unittest.TestCase):
    """tools/lib/nagle.c, preloaded: TCP_NODELAY requests are ignored,
    every other option still takes effect."""

    def test_nodelay_ignored(self):
        if not shutil.which("gcc"):
            self.skipTest("no gcc")
        with tempfile.TemporaryDirectory() as d:
            so = os.path.join(d, "nagle.so")
            subprocess.run(["gcc", "-Wall", "-Werror", "-shared", "-fPIC", "-o", so,
                            os.path.join(TOP, "tools", "lib", "nagle.c"), "-ldl"],
                           check=True)
            code = ("import socket\n"
                    "s = socket.socket()\n"
                    "s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n"
                    "s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)\n"
                    "print(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0,"
                    " s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) != 0)\n")
            outs = []
            for pre in ("", so):
                r = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                   text=True, env=dict(os.environ, LD_PRELOAD=pre))
                self.assertEqual(r.returncode, 0, r.stderr)
                outs.append(r.stdout.split())
            self.assertEqual(outs[0], ["True", "True"])
            self.assertEqual(outs[1], ["False", "True"])


def card_doc(busy_us, commands, forward=0):
    c = costmodel.Card(costmodel.make_params("paper"))
    doc = json.loads(costmodel.control_text(c, 1 << 30, "paper"))
    doc["totals"]["busy_us"] = busy_us
    doc["totals"]["commands"] = commands
    doc["totals"]["read"]["forward"]["commands"] = forward
    doc["totals"]["read"]["backward"]["commands"] = commands - forward
    return json.dumps(doc)


def write_run(root, rid, n, reads_per_node, busy, cmds, frames, nbytes,
              status="ok", forward=0.5):
    """A run of n nodes; node k reads reads_per_node + (2k - n + 1) x 100
    times (the same total) with a mean latency of k + 1 ms, and a share
    @forward of its cards' commands move forward."""
    d = os.path.join(root, "runs", rid)
    os.makedirs(d)
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump({"id": rid, "status": status, "error": ""}, f)
    jobs = [{"jobname": "node%d" % k, "error": 0,
             "read": {"total_ios": reads_per_node + (2 * k - n + 1) * 100,
                      "runtime": 4000, "clat_ns": {"mean": 1e6 * (k + 1)}}}
            for k in range(n)]
    with open(os.path.join(d, "fio.json"), "w") as f:
        json.dump({"jobs": jobs}, f)
    for k in range(n):
        with open(os.path.join(d, "card-%d-before.json" % k), "w") as f:
            f.write(card_doc(1000.0, 10))
        with open(os.path.join(d, "card-%d-after.json" % k), "w") as f:
            f.write(card_doc(1000.0 + busy[k], 10 + cmds[k], int(cmds[k] * forward)))
    for tag, mul in (("before", 0), ("after", 1)):
        links = [{"ifname": "m%d" % k,
                  "stats64": {"rx": {"packets": 100 + mul * frames // (2 * n),
                                     "bytes": 1000 + mul * nbytes // (2 * n)},
                              "tx": {"packets": 100 + mul * frames // (2 * n),
                                     "bytes": 1000 + mul * nbytes // (2 * n)}}}
                 for k in range(n)] + [{"ifname": "lo", "stats64": {}}]
        with open(os.path.join(d, "link-%s.json" % tag), "w") as f:
            json.dump(links, f)
    with open(os.path.join(d, "cpu-before.txt"), "w") as f:
        f.write("cpu  100 0 100 800 0 0 0 0 0 0\n")
    with open(os.path.join(d, "cpu-after.txt"), "w") as f:
        f.write("cpu  400 0 200 1100 0 0 0 0 0 0\n")


class Report(unittest.TestCase):
    """Two node counts (1, 4), batching 1 and 10, mq-deadline and
    fwdsched, two rounds.  Every node reads 1000 times in 4 s.  Busy time:
    1 s a node at batch 10 (0.5 s for fwdsched: twice the device IOPS),
    so the device-bound rate is 1000 reads/s with one node and 4000 with
    four (scaling 4, below the target 6).  Frames: 4 a read at batch 1,
    1 at batch 10."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test-cluster.")
        s = clusterplan.settings({"CLUSTER_NODES": "1 4", "CLUSTER_BATCH": "1 10",
                                  "CLUSTER_SCHEDS": "mq-deadline fwdsched",
                                  "CLUSTER_ROUNDS": "2", "CLUSTER_RUNTIME": "4"})
        cls.plan = p = clusterplan.plan(s)
        cls.root = os.path.join(cls.tmp, "run")
        os.makedirs(cls.root)
        with open(os.path.join(cls.root, "plan.json"), "w") as f:
            json.dump(p, f)
        for r in p["runs"]:
            n = r["nodes"]
            b = 1.0e6 if r["sched"] == "mq-deadline" else 0.5e6
            frames = 4 * 1000 * n if r["batch"] == 1 else 1000 * n
            write_run(cls.root, r["id"], n, 1000, [b] * n, [1000] * n,
                      frames, 600 * 1000 * n,
                      forward=0.5 if r["sched"] == "mq-deadline" else 0.75)
        with open(os.path.join(cls.root, "mapping.json"), "w") as f:
            json.dump({"nodes": 4, "checked": 8, "errors": []}, f)
        os.makedirs(os.path.join(cls.root, "failure"))
        with open(os.path.join(cls.root, "failure", "failure.json"), "w") as f:
            json.dump({"start": 100.0, "down": 110.0, "end": 131.0, "fio_exit": 1,
                       "node": 3, "nodes": 4, "timeout": 5, "runtime": 30,
                       "read_after_exit": 1, "read_after_s": 0.2,
                       "read_after_error": "Input/output error"}, f)
        # fio ended at 131 s, so its jobs started at 101 s; node 3 failed
        # at 116 s, 6 s after its link went down
        jobs = [{"jobname": "node%d" % k, "error": 0,
                 "read": {"total_ios": 500, "runtime": 30000}} for k in range(3)]
        jobs.append({"jobname": "node3", "error": 5,
                     "read": {"total_ios": 100, "runtime": 15000}})
        with open(os.path.join(cls.root, "failure", "fio.json"), "w") as f:
            # as fio writes it: the failed node's I/O errors first
            f.write("fio: io_u error on file /dev/mapper/fwdc: Input/output error: "
                    "read offset=1619483136, buflen=512\n")
            json.dump({"jobs": jobs, "timestamp_ms": 131000}, f)
        with open(os.path.join(cls.root, "teardown.json"), "w") as f:
            json.dump({"steps": [{"step": "dmsetup-remove", "exit": 0, "s": 0.1}],
                       "namespaces_left": 0, "nbd_still_connected": 0, "dm_left": 0}, f)
        cls.s = clusterreport.build(cls.root, plots=False)
        with open(os.path.join(cls.root, "report.md")) as f:
            cls.md = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def cell(self, n, b, x):
        return [c for c in self.s["cells"] if (c["nodes"], c["batch"], c["sched"]) ==
                (n, b, x)][0]

    def test_figures(self):
        c = self.cell(4, 10, "mq-deadline")
        self.assertAlmostEqual(c["iops"]["median"], 1000.0)
        self.assertAlmostEqual(c["device_bound"]["median"], 4000.0)
        self.assertAlmostEqual(c["frames_per_read"]["median"], 1.0)
        self.assertAlmostEqual(c["device_util"]["median"], 0.25)
        self.assertAlmostEqual(c["cpu"]["median"], 4 / 7)  # 400 of 700 ticks
        # nodes' mean latencies 1, 2, 3, 4 ms over 700, 900, 1100, 1300
        # reads: 11000 / 4000, where an unweighted mean would give 2.5
        self.assertAlmostEqual(c["lat_ms"]["median"], 2.75)
        self.assertAlmostEqual(c["fwd_fraction"]["median"], 0.5)
        self.assertAlmostEqual(self.cell(4, 10, "fwdsched")["fwd_fraction"]["median"], 0.75)
        self.assertIn("| 4 | 10 | fwdsched | 1000 [1000, 1000] | 8000 [8000, 8000] |",
                      self.md)

    def test_latency_missing(self):
        """A fio record without completion latencies gives none, not 0."""
        root = os.path.join(self.tmp, "nolat")
        shutil.copytree(self.root, root)
        run = self.plan["runs"][0]
        fj = os.path.join(root, "runs", run["id"], "fio.json")
        with open(fj) as f:
            doc = json.load(f)
        del doc["jobs"][0]["read"]["clat_ns"]
        with open(fj, "w") as f:
            json.dump(doc, f)
        m, note = clusterreport.run_metrics(root, run, self.plan)
        self.assertIsNone(note)
        # a fio record that is no JSON at all is a note, not a crash
        other = self.plan["runs"][1]
        with open(os.path.join(root, "runs", other["id"], "fio.json"), "w") as f:
            f.write("fio: something went wrong\n")
        m2, note2 = clusterreport.run_metrics(root, other, self.plan)
        self.assertIsNone(m2)
        self.assertIn("records unusable", note2)
        self.assertIsNone(m["lat_ms"])
        self.assertEqual(m["reads"], 1000)
        c = self.cell(4, 1, "fwdsched")
        self.assertAlmostEqual(c["device_bound"]["median"], 8000.0)
        self.assertAlmostEqual(c["frames_per_read"]["median"], 4.0)
        # airtime a read: 4 frames x 2000 us + 600 bytes at 5.4 Mbit/s
        self.assertAlmostEqual(c["link_bound"]["median"], 1e6 / (8000 + 600 * 8 / 5.4), 3)

    def test_targets(self):
        t = {(r["target"].split(",")[0], r["where"]): r for r in self.s["targets"]}
        sc = t[("device-bound scaling", "batch 10, fwdsched")]
        # 4 nodes give the same per-node rate in parallel: 4x, not 6x
        self.assertAlmostEqual(sc["median"], 4.0)
        self.assertEqual(sc["verdict"], "missed")
        fr = t[("frames per read", "4 nodes, fwdsched")]
        self.assertAlmostEqual(fr["median"], 4.0)
        self.assertEqual(fr["verdict"], "met")
        dev = t[("per node device IOPS", "batch 10 (every node, node count, round)")]
        self.assertAlmostEqual(dev["median"], 2.0)
        self.assertEqual(dev["verdict"], "met")
        self.assertIn("<!-- targets:begin -->", self.md)
        self.assertTrue(all(c["ok"] for c in self.s["checks"]), self.s["checks"])
        fail = [c for c in self.s["checks"] if c["name"] == "failure"][0]
        self.assertIn("ended with error 5 6.0 s later", fail["text"])

    def test_publish(self):
        bm = os.path.join(self.tmp, "BENCHMARKS.md")
        with open(os.path.join(self.root, "done.json"), "w") as f:
            json.dump({"duration_s": 1368}, f)
        self.assertEqual(publish.publish(self.root, bm), "run")
        with open(bm) as f:
            text = f.read()
        self.assertIn("— cluster, 6.12 (run `run`)", text)
        self.assertIn("- report written at commit `", text)
        self.assertIn("duration: 23 min", text)
        self.assertIn(self.plan["command"], text)
        # the targets and checks, and the table of runs, verbatim
        for marker in ("| target | where | value | verdict |", "| mapping check |",
                       "| nodes | batch | scheduler |", "| 4 | 10 | fwdsched |"):
            self.assertIn(marker, text)
        with self.assertRaises(publish.PublishError):
            publish.publish(self.root, bm)
        # a report without its table of runs is refused, nothing written
        root = os.path.join(self.tmp, "noruns")
        shutil.copytree(self.root, root)
        with open(os.path.join(root, "report.md")) as f:
            md = f.read()
        with open(os.path.join(root, "report.md"), "w") as f:
            f.write(md.replace(clusterreport.RUNS_BEGIN, ""))
        with self.assertRaises(publish.PublishError) as cm:
            publish.publish(root, bm)
        self.assertIn("no table of runs", str(cm.exception))

    def test_checks_fail_on_bad_records(self):
        root = os.path.join(self.tmp, "bad")
        shutil.copytree(self.root, root)
        with open(os.path.join(root, "mapping.json"), "w") as f:
            json.dump({"nodes": 4, "checked": 8,
                       "errors": ["node 2's image lacks its last block at sector 8"]}, f)
        fl = os.path.join(root, "failure", "failure.json")
        with open(fl) as f:
            doc = json.load(f)
        doc["fio_exit"] = 124
        with open(fl, "w") as f:
            json.dump(doc, f)
        # the failure run alone, with every figure good but its scheduler
        # not set, fails too
        root2 = os.path.join(self.tmp, "badsched")
        shutil.copytree(self.root, root2)
        fl2 = os.path.join(root2, "failure", "failure.json")
        with open(fl2) as f:
            doc2 = json.load(f)
        doc2.update(sched="fwdsched", sched_set="failed")
        with open(fl2, "w") as f:
            json.dump(doc2, f)
        c = {x["name"]: x for x in clusterreport.build(root2, plots=False)["checks"]}
        self.assertFalse(c["failure"]["ok"])
        self.assertIn("fwdsched not set on every node", c["failure"]["text"])
        with open(os.path.join(root, "teardown.json"), "w") as f:
            json.dump({"steps": [{"step": "netns-del-2", "exit": 1, "s": 0.1}],
                       "namespaces_left": 1, "nbd_still_connected": 0, "dm_left": 0}, f)
        shutil.rmtree(os.path.join(root, "runs", "n4-b10-fwdsched-r2"))
        s = clusterreport.build(root, plots=False)
        ok = {c["name"]: c["ok"] for c in s["checks"]}
        self.assertEqual(ok, {"mapping": False, "failure": False, "teardown": False})
        self.assertIn("n4-b10-fwdsched-r2: no usable run.json (FileNotFoundError)",
                      s["notes"])
        r = subprocess.run([sys.executable, os.path.join(HERE, "clusterreport.py"),
                            root, "--no-plots"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r)


if __name__ == "__main__":
    unittest.main()
