# SPDX-License-Identifier: GPL-2.0
"""Tests of tools/runner/hostrpc with the guest's side, host_py of
tools/lib/guest.sh, run here in bash as the guest runs it."""

import os
import shutil
import subprocess
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
SERVER = os.path.join(HERE, "hostrpc")


def host_py(rpc, script, cwd=TOP, stdin=None):
    """Runs @script in bash with tools/lib/guest.sh sourced and
    FWD_HOSTRPC=@rpc (None: unset); returns (rc, stdout, stderr)."""
    env = dict(os.environ, FWD_ROOT=TOP)
    env.pop("FWD_HOSTRPC", None)
    if rpc:
        env["FWD_HOSTRPC"] = rpc
    p = subprocess.run(
        ["bash", "-c", '. "$FWD_ROOT/tools/lib/guest.sh"\n' + script],
        cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
        timeout=60, check=False)
    return p.returncode, p.stdout, p.stderr


class HostRpcTest(unittest.TestCase):
    def setUp(self):
        os.makedirs(os.path.join(TOP, "build"), exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="hostrpc-test.",
                                    dir=os.path.join(TOP, "build"))
        self.server = subprocess.Popen([SERVER, self.dir])

    def tearDown(self):
        self.server.terminate()
        self.server.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_program_of_tools_runs_on_the_host(self):
        rc, out, err = host_py(
            self.dir, 'host_py "$FWD_ROOT/tools/analysis/fwdlib.py" blkparse-fmt')
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("%a", out)
        self.assertEqual(os.listdir(self.dir), [], "the guest left files")

    def test_script_on_stdin_status_and_both_outputs(self):
        script = ("host_py - a 'b c' <<'PY'\n"
                  "import os, sys\n"
                  "print(sys.argv[1:], os.getcwd())\n"
                  "sys.stderr.write('to stderr\\n')\n"
                  "sys.exit(3)\n"
                  "PY\n")
        rc, out, err = host_py(self.dir, script, cwd=os.path.join(TOP, "tools"))
        self.assertEqual(rc, 3)
        self.assertEqual(out, "['a', 'b c'] %s\n" % os.path.join(TOP, "tools"))
        self.assertEqual(err, "to stderr\n")

    def test_refused_program_and_directory(self):
        rc, out, err = host_py(self.dir, "host_py -c 'print(1)'")
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("refused: program '-c'", err)
        rc, out, err = host_py(self.dir, "host_py /etc/hostname")
        self.assertEqual(rc, 2)
        self.assertIn("neither - nor under", err)
        rc, out, err = host_py(self.dir, "cd / && host_py - <<< 'print(1)'")
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("working directory '/' is not in", err)

    def test_without_a_server_it_runs_here(self):
        rc, out, _ = host_py(None, "host_py - x <<< 'import sys; print(sys.argv[1:])'")
        self.assertEqual((rc, out), (0, "['x']\n"))

    def test_server_ends_when_its_directory_goes(self):
        rc, _, _ = host_py(self.dir, "host_py - <<< 'pass'")
        self.assertEqual(rc, 0)
        shutil.rmtree(self.dir)
        self.server.wait(timeout=10)
        self.assertEqual(self.server.returncode, 0)


class HostRpcUsageTest(unittest.TestCase):
    def test_bad_arguments(self):
        for args in ([], ["/nonexistent/dir"]):
            p = subprocess.run([SERVER] + args, capture_output=True, text=True,
                               check=False)
            self.assertNotEqual(p.returncode, 0)
            self.assertTrue(p.stderr.strip())


if __name__ == "__main__":
    unittest.main()
