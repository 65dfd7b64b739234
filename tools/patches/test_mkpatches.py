# SPDX-License-Identifier: GPL-2.0
"""Unit tests of tools/patches/mkpatches: the in-tree conversion (the
compat layer resolved for the newest kernel, every replacement matching
once), where the sources land in the tree, the commit messages, and the
identity both series are signed with (patchid)."""
import contextlib
import importlib.machinery
import importlib.util
import io
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


@contextlib.contextmanager
def dies(test):
    """Expects mkpatches to stop (die() exits), its message unprinted."""
    with test.assertRaises(SystemExit), \
            contextlib.redirect_stderr(io.StringIO()):
        yield


def sample(text):
    """A source file for intree(), in a temporary directory."""
    d = tempfile.mkdtemp()
    path = os.path.join(d, "x.c")
    with open(path, "w") as f:
        f.write(text)
    return d, path


COMPAT = """#include "blk-mq-sched.h"
/*
 * Out of tree only (tools/patches/mkpatches drops this comment and the
 * include): compat.h supplies what older kernels lack.
 */
#include "compat.h"

#include "fwdsched.h"
"""


class Conversion(unittest.TestCase):
    """The pieces of the in-tree conversion, on made-up sources."""

    def test_replace_once_refuses_none_and_two(self):
        self.assertEqual(mk.replace_once("a b", "b", "c", "t"), "a c")
        for text in ("a a", "b b"):
            with dies(self):
                mk.replace_once(text, "b", "c", "t")

    def test_compat_include_goes_with_its_comment_only(self):
        text = "/* The top. */\n#include <linux/kernel.h>\n" + COMPAT
        out = mk.COMPAT_INCLUDE.sub("", text)
        self.assertEqual(out, "/* The top. */\n#include <linux/kernel.h>\n"
                         '#include "blk-mq-sched.h"\n\n#include "fwdsched.h"\n')
        one = '/* Out of tree only: what older kernels lack. */\n#include "compat.h"\n'
        self.assertEqual(mk.COMPAT_INCLUDE.sub("", one), "")

    def test_compat_include_needs_its_comment(self):
        if not shutil.which("unifdef"):
            self.skipTest("unifdef is not installed")
        d, path = sample('/* Something else. */\n#include "compat.h"\n')
        self.addCleanup(shutil.rmtree, d)
        with dies(self):
            mk.intree(path, "A B <a@b.example>")

    @unittest.skipUnless(shutil.which("unifdef"), "unifdef is not installed")
    def test_compat_resolved_for_the_newest_kernel(self):
        d, path = sample(COMPAT + "#ifdef FWD_HAVE_Q_ASYNC_DEPTH\nnew();\n#else\n"
                         "old();\n#endif\n#ifndef FWD_NO_AGING\naged();\n#endif\n")
        self.addCleanup(shutil.rmtree, d)
        out = mk.intree(path, "A B <a@b.example>", ["-UFWD_NO_AGING"])
        self.assertEqual(out, '#include "blk-mq-sched.h"\n\n#include "fwdsched.h"\n'
                         "new();\naged();\n")

    @unittest.skipUnless(shutil.which("unifdef"), "unifdef is not installed")
    def test_refuses_a_compat_helper_left(self):
        d, path = sample(COMPAT + "\td = fwd_shallow_depth(data, 4);\n")
        self.addCleanup(shutil.rmtree, d)
        with dies(self):
            mk.intree(path, "A B <a@b.example>")

    def test_maintainers_entry_sorts(self):
        base = ("\nFOO DRIVER\nM:\tA <a@x>\nS:\tMaintained\n"
                "\nGAMMA DRIVER\nM:\tB <b@x>\nS:\tMaintained\n")
        out = mk.add_maintainers_entry(base, "FWD\nM:\tC <c@x>\n")
        self.assertLess(out.index("FOO DRIVER"), out.index("FWD\n"))
        self.assertLess(out.index("FWD\n"), out.index("GAMMA DRIVER"))


@unittest.skipUnless(shutil.which("unifdef"), "unifdef is not installed")
class Source(unittest.TestCase):
    """The conversion of the real sources."""
    IDENT = "A B <a@b.example>"

    def setUp(self):
        self.files = mk.intree_files(self.IDENT)

    def test_files_land_in_the_tree(self):
        for f in ("block/fwdsched-iosched.c", "block/fwdsched-fair.c",
                  "block/fwdsched.h", "include/trace/events/fwdsched.h"):
            self.assertIn(f, self.files)
        for f in self.files:
            self.assertTrue(f.startswith(("block/fwdsched",
                                          "include/trace/events/")), f)

    def test_nothing_of_the_compat_layer_is_left(self):
        for f, text in self.files.items():
            for left in ('"compat.h"', "FWD_HAVE_", "FWD_NO_", "FWD_SBITMAP"):
                self.assertNotIn(left, text, f)
            for helper in mk.compat_helpers():
                self.assertIsNone(re.search(rf"\b{helper}\b", text), f)

    def test_every_object_is_in_the_tree_and_the_makefile(self):
        objs = mk.module_objects()
        lines = mk.makefile_lines(objs)
        for o in objs:
            self.assertIn("block/" + o[:-2] + ".c", self.files)
            self.assertIn(o, lines)
        self.assertIn(f"+= {mk.MODULE}.o", lines)
        self.assertNotIn(mk.MODULE + ".o", objs)

    def test_trace_points_created_once(self):
        n = {f: t.count("#define CREATE_TRACE_POINTS") for f, t in self.files.items()}
        self.assertEqual(sum(n.values()), 1)
        self.assertEqual(n["block/fwdsched-iosched.c"], 1)

    def test_signed_by_whoever_generates(self):
        text = self.files["block/fwdsched-iosched.c"]
        self.assertIn(f'MODULE_AUTHOR("{self.IDENT}");', text)
        self.assertNotIn("The fwdsched authors", text)


class Messages(unittest.TestCase):
    def test_exactly_the_messages_used(self):
        # mkpatches's, and the mq-deadline patch's (mkpatches-mq-deadline)
        used = {mk.COVER_MSG, mk.SCHED_MSG, mk.DOC_MSG, "mq-deadline-01-wrap"}
        self.assertEqual(set(os.listdir(mk.MSGS)), used)
        for m in used:
            self.assertTrue(mk.message(m).strip(), m)


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
