# SPDX-License-Identifier: GPL-2.0
"""Unit tests of tools/patches/mkpatches-mq-deadline: the patch is the
one change of the benchmark arm (tools/setup/mq-deadline-wrap's CHANGE,
without its renaming) and nothing else, made the same way twice, and a
base without block/mq-deadline.c, or whose mq-deadline.c cannot take
the change (6.1), is refused with a message and no patch written."""
import email
import glob
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(HERE, "mkpatches-mq-deadline")


def load(name, path):
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


mk = load("mkpatches_mq_deadline", TOOL)
wrap = load("mq_deadline_wrap", os.path.join(ROOT, "tools", "setup",
                                              "mq-deadline-wrap"))

# The made-up source with the anchors of the change and of the renaming
# (as in 6.12 and 7.2) that the arm's own tests use.
SOURCE = load("test_mq_deadline_wrap", os.path.join(
    ROOT, "tools", "setup", "test_mq_deadline_wrap.py")).SOURCE

# Whoever generates the patch, without touching anyone's git config.
IDENT = ("Ada Lovelace", "ada@example.org")
ENV = dict(os.environ, GIT_CONFIG_COUNT="2",
           GIT_CONFIG_KEY_0="user.name", GIT_CONFIG_VALUE_0=IDENT[0],
           GIT_CONFIG_KEY_1="user.email", GIT_CONFIG_VALUE_1=IDENT[1])


def tree_7_2():
    """The 7.2 tree extracted in build/src/, or None."""
    trees = sorted(glob.glob(os.path.join(ROOT, "build", "src", "7.2.*")))
    if trees and os.path.isfile(os.path.join(trees[-1], mk.FILE)):
        return trees[-1]
    return None


class Generator(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.out = os.path.join(self.tmp, "out")

    def base(self, text):
        base = os.path.join(self.tmp, "linux")
        os.makedirs(os.path.join(base, "block"), exist_ok=True)
        with open(os.path.join(base, mk.FILE), "w") as f:
            f.write(text)
        return base

    def run_tool(self, base, *extra):
        r = subprocess.run([sys.executable, TOOL, "--base", base,
                            "--out", self.out] + list(extra),
                           capture_output=True, text=True, env=ENV)
        patches = sorted(glob.glob(os.path.join(self.out, "*.patch")))
        return r, patches

    def applied(self, src, patch):
        """@src with @patch applied by git apply, outside any repository."""
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        os.makedirs(os.path.join(d, "block"))
        with open(os.path.join(d, mk.FILE), "w") as f:
            f.write(src)
        subprocess.run(["git", "apply", patch], cwd=d, check=True,
                       env=dict(os.environ, GIT_CEILING_DIRECTORIES=d))
        with open(os.path.join(d, mk.FILE)) as f:
            return f.read()

    def check_the_one_change(self, src):
        r, patches = self.run_tool(self.base(src))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(patches), 1, patches)
        with open(patches[0]) as f:
            text = f.read()
        # One file, the arm's change and nothing of its renaming.
        self.assertEqual(text.count("\ndiff --git "), 1)
        self.assertIn("\ndiff --git a/block/mq-deadline.c b/block/mq-deadline.c\n",
                      text)
        patched = self.applied(src, patches[0])
        self.assertEqual(patched, wrap.convert(src, "t", wrap.CHANGE))
        self.assertEqual(wrap.convert(patched, "t", wrap.RENAME),
                         wrap.convert(src, "t"))
        diff = text[text.index("\ndiff --git "):]
        self.assertNotIn("deadline-wrap", diff)
        # The message of patch-msgs, signed off by whoever generates it.
        subject = email.message_from_string(text)["Subject"]
        self.assertEqual(" ".join(subject.split()),
                         "[PATCH] " + mk.message().splitlines()[0])
        self.assertIn("\nSigned-off-by: %s <%s>\n" % IDENT, text)
        self.assertIn("\nDate: Mon, 23 Nov 2026 12:00:00 +0000\n", text)
        # Made the same way twice.
        r2, again = self.run_tool(self.base(src))
        self.assertEqual(r2.returncode, 0, r2.stderr)
        with open(again[0]) as f:
            self.assertEqual(f.read(), text)

    def test_the_patch_is_the_arms_one_change(self):
        self.check_the_one_change(SOURCE)

    @unittest.skipUnless(tree_7_2(), "no 7.2 tree in build/src")
    def test_the_patch_is_the_arms_one_change_on_7_2(self):
        with open(os.path.join(tree_7_2(), mk.FILE)) as f:
            self.check_the_one_change(f.read())

    def assert_refused(self, base, message):
        r, patches = self.run_tool(base)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(message, r.stderr)
        self.assertEqual(patches, [])

    def test_refused_without_mq_deadline(self):
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty)
        self.assert_refused(empty, "has no block/mq-deadline.c")

    def test_refused_without_a_position(self):
        self.assert_refused(self.base(
            SOURCE.replace("deadline_from_pos(", "other(")),
            "no deadline_from_pos()")

    def test_refused_when_the_anchor_moved(self):
        self.assert_refused(self.base(
            SOURCE.replace("|| !next_rq) {", "|| !next) {")),
            "anchor found 0 times")

    def test_check_refuses_a_tree_without_a_position(self):
        other = os.path.join(self.tmp, "6.1")
        os.makedirs(os.path.join(other, "block"))
        with open(os.path.join(other, mk.FILE), "w") as f:
            f.write(SOURCE.replace("deadline_from_pos(", "other("))
        r, patches = self.run_tool(self.base(SOURCE), "--check", other)
        self.assertEqual(r.returncode, 1)
        self.assertIn("DOES NOT APPLY to " + other, r.stdout)
        self.assertEqual(len(patches), 1)


class Message(unittest.TestCase):
    def test_kernel_style(self):
        msg = mk.message()
        lines = msg.splitlines()
        self.assertTrue(lines[0].startswith("block/mq-deadline: "), lines[0])
        self.assertEqual(lines[1], "")
        for n, line in enumerate(lines, 1):
            self.assertLessEqual(len(line), 75, "line %d" % n)


if __name__ == "__main__":
    unittest.main()
