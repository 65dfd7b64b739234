# SPDX-License-Identifier: GPL-2.0
"""Unit tests of tools/patches/mkpatches: the removal of the statistics
and tracepoints from the steps before the debugfs one, the markers of
the source, and the identity both series are signed with (patchid)."""
import importlib.machinery
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
_loader = importlib.machinery.SourceFileLoader(
    "mkpatches", os.path.join(HERE, "mkpatches"))
_spec = importlib.util.spec_from_loader("mkpatches", _loader)
mk = importlib.util.module_from_spec(_spec)
_loader.exec_module(mk)


def c(text):
    """Kernel-style code from a test: leading "|" marks the margin."""
    return "\n".join(ln.split("|", 1)[1] if "|" in ln else ln
                     for ln in text.strip("\n").split("\n"))


class Strip(unittest.TestCase):
    def strip(self, text):
        return mk.strip_instrumentation(c(text))

    def test_statement_and_multiline_call(self):
        out = self.strip("""
            |{
            |	a();
            |	fwd->stats[FWD_STAT_X]++;
            |	trace_fwdsched_decide(rq, why,
            |			      pos, 0);
            |	b();
            |}""")
        self.assertEqual(out, c("""
            |{
            |	a();
            |	b();
            |}"""))

    def test_unbraced_if_goes_with_its_statement(self):
        out = self.strip("""
            |{
            |	if (merged &&
            |	    x)
            |		fwd->stats[FWD_STAT_BIO_MERGES]++;
            |	b();
            |}""")
        self.assertEqual(out, c("""
            |{
            |	b();
            |}"""))

    def test_else_goes_with_its_statement(self):
        out = self.strip("""
            |{
            |	if (p)
            |		flags |= 1;
            |	else
            |		fwd->stats[FWD_STAT_INSERTED]++;
            |}""")
        self.assertEqual(out, c("""
            |{
            |	if (p)
            |		flags |= 1;
            |}"""))

    def test_braces_dropped_around_one_statement(self):
        out = self.strip("""
            |{
            |	if (start) {
            |		fwd->stats[FWD_STAT_DETOURS]++;
            |		*why = FWD_DECIDE_DETOUR;
            |	} else if (x) {
            |		*why = 2;
            |	} else {
            |		*why = FWD_DECIDE_WRAP;
            |	}
            |}""")
        self.assertEqual(out, c("""
            |{
            |	if (start)
            |		*why = FWD_DECIDE_DETOUR;
            |	else if (x)
            |		*why = 2;
            |	else
            |		*why = FWD_DECIDE_WRAP;
            |}"""))

    def test_braces_kept_around_two_statements(self):
        src = """
            |{
            |	if (a) {
            |		x();
            |		y();
            |	}
            |}"""
        out = self.strip(src.replace("x();", "x();\n|\t\tfwd->stats[1]++;"))
        self.assertEqual(out, c(src))

    def test_blocks_left_empty_go_too(self):
        out = self.strip("""
            |{
            |	if (READ_ONCE(fwd->hold) == 1) {
            |		if (over && fwd->antic_proc) {
            |			fwd->stats[FWD_STAT_ANTIC_HITS]++;
            |			trace_fwdsched_anticipated(fwd->q, 1,
            |						   true);
            |		}
            |	}
            |	b();
            |}""")
        self.assertEqual(out, c("""
            |{
            |	b();
            |}"""))

    def test_labels_are_not_blocks(self):
        out = self.strip("""
            |{
            |above:
            |	if (rq != start) {
            |		fwd->stats[FWD_STAT_FAIR_SKIPS]++;
            |		*why = FWD_DECIDE_FAIR_SKIP;
            |	}
            |	return rq;
            |}""")
        self.assertEqual(out, c("""
            |{
            |above:
            |	if (rq != start)
            |		*why = FWD_DECIDE_FAIR_SKIP;
            |	return rq;
            |}"""))

    def test_refuses_a_condition_with_a_side_effect(self):
        with self.assertRaises(SystemExit):
            self.strip("""
                |{
                |	if (n++ > 2)
                |		fwd->stats[1]++;
                |}""")

    def test_refuses_a_loop_without_body(self):
        with self.assertRaises(SystemExit):
            self.strip("""
                |{
                |	for (i = 0; i < n; i++)
                |		fwd->stats[i]++;
                |}""")

    def test_refuses_an_empty_branch(self):
        with self.assertRaises(SystemExit):
            self.strip("""
                |{
                |	if (a) {
                |		fwd->stats[1]++;
                |	} else {
                |		b();
                |	}
                |}""")


@unittest.skipUnless(shutil.which("unifdef"), "unifdef is not installed")
class Source(unittest.TestCase):
    def test_markers_name_features(self):
        for path in (mk.SOURCE, mk.TRACE):
            with open(path) as f:
                used = set(re.findall(r"\bFWD_NO_(\w+)", f.read()))
            self.assertLessEqual(used, set(mk.FEATURES), path)

    def test_every_step_converts(self):
        for _, n in mk.STEPS:
            text = mk.intree_source(n, "A B <a@b.example>")
            self.assertNotIn("FWD_NO_", text)
            if n < len(mk.FEATURES):
                self.assertNotIn("fwd->stats", text)
                self.assertNotIn("trace_fwdsched_", text)
                self.assertNotIn("CREATE_TRACE_POINTS", text)
                self.assertIn("enum fwd_decision {", text)
            else:
                self.assertIn("CREATE_TRACE_POINTS", text)

    def test_steps_grow(self):
        # Each step only adds to the one before, but for the lines that
        # the marked alternatives replace: a few, not a rewrite.
        prev = None
        for _, n in mk.STEPS:
            lines = mk.intree_source(n, "A B <a@b.example>").split("\n")
            if prev is not None:
                gone = set(prev) - set(lines)
                self.assertLess(len(gone), 40, "step %d" % n)
            prev = lines


sys.path.insert(0, HERE)
import patchid  # noqa: E402


class Identity(unittest.TestCase):
    def repo(self, **config):
        d = tempfile.mkdtemp()
        env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null",
                   GIT_CONFIG_NOSYSTEM="1")
        subprocess.run(["git", "init", "-q", d], check=True, env=env)
        for k, v in config.items():
            subprocess.run(["git", "-C", d, "config", k.replace("_", "."), v],
                           check=True, env=env)
        self.addCleanup(shutil.rmtree, d)
        return d

    def test_taken_from_git_config(self):
        d = self.repo(user_name="Ada Lovelace", user_email="ada@example.org")
        self.assertEqual(patchid.identity(d), ("Ada Lovelace", "ada@example.org"))

    def test_refused_without_one(self):
        old = os.environ.get("GIT_CONFIG_GLOBAL")
        os.environ["GIT_CONFIG_GLOBAL"] = "/dev/null"
        try:
            for cfg in ({}, {"user_name": "Ada"}, {"user_email": "ada@example.org"}):
                with self.assertRaises(patchid.NoIdentity):
                    patchid.identity(self.repo(**cfg))
        finally:
            if old is None:
                del os.environ["GIT_CONFIG_GLOBAL"]
            else:
                os.environ["GIT_CONFIG_GLOBAL"] = old

    def test_no_identity_written_into_the_sources(self):
        """The signature is added when a series is generated, never kept
        in the sources it is generated from."""
        root = os.path.dirname(os.path.dirname(HERE))
        for f in ["mmc_history/core/commit-msg"] + [
                os.path.join("tools/patches/patch-msgs", m)
                for m in os.listdir(os.path.join(HERE, "patch-msgs"))]:
            with open(os.path.join(root, f)) as fh:
                self.assertNotIn("Signed-off-by:", fh.read(), f)


if __name__ == "__main__":
    unittest.main()
