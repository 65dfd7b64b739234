#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of tools/gki-check on a made-up module (an object file made with
cc -c that calls extern functions and has a .modinfo section) and made-up
symbol lists: each import is classed core, vendor, known, MISSING or
unchecked, renamed calls match under their other name, --strict fails on
MISSING and unchecked only, --import reads a kernel/common tree, and bad
input (no file, not ELF, no .modinfo, a broken data file) exits 2 with
one line.  Also that the data files kept in tools/gki parse."""

import glob
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(os.path.dirname(HERE), "gki-check")
loader = importlib.machinery.SourceFileLoader("gki_check", TOOL)
spec = importlib.util.spec_from_loader("gki_check", loader)
gki = importlib.util.module_from_spec(spec)
loader.exec_module(gki)

CALLS = ["elv_rb_add", "module_layout", "gone_sym", "known_sym",
         "new_sym", "sized_strscpy"]
DATA = textwrap.dedent("""\
    # SPDX-License-Identifier: GPL-2.0
    #@ branch test-6.6
    #@ fetched 2026-11-28
    #@ universe rows
    #@ list core r c android/abi_gki_aarch64 10 full
    #@ list xiaomi r c android/abi_gki_aarch64_xiaomi 10 full
    #@ list vivo r c android/abi_gki_aarch64_vivo 10 partial:5
    elv_rb_add\tvivo,xiaomi
    gone_sym\t-
    known_sym\t-
    module_layout\tcore
    strscpy\tvivo
    """)


def cc(src, out):
    subprocess.run(["cc", "-c", "-O2", "-fno-stack-protector", "-o", out,
                    "-x", "c", "-"], input=src, text=True, check=True)


@unittest.skipUnless(shutil.which("cc"), "needs a C compiler")
class GkiCheck(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.data = os.path.join(self.tmp, "gki")
        os.mkdir(self.data)
        self.write("gki/test-6.6.tsv", DATA)
        self.write("gki/known-missing",
                   "# comment\ntest-6.6\tknown_sym\tdebugfs only\n")
        decls = "".join(f"extern void {c}(void);\n" for c in CALLS)
        body = "".join(f"\t{c}();\n" for c in CALLS)
        src = decls + "void f(void)\n{\n" + body + "}\n"
        self.ko = os.path.join(self.tmp, "m.ko")
        cc(src + 'static const char mi[] __attribute__((section(".modinfo"),'
           ' used)) = "license=GPL";\n', self.ko)
        self.plain = os.path.join(self.tmp, "plain.o")
        cc(src, self.plain)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, name, text):
        with open(os.path.join(self.tmp, name), "w") as f:
            f.write(text)

    def run_tool(self, *args):
        p = subprocess.run([TOOL, "--data", self.data] + list(args),
                           capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def classes(self, data_file="test-6.6.tsv"):
        machine, imports = gki.read_module(self.ko)
        branch = gki.Branch(os.path.join(self.data, data_file))
        known = gki.load_known(os.path.join(self.data, "known-missing"))
        return {s: (c, d) for s, c, d in
                gki.classify(branch, machine, imports, known)}

    def test_imports(self):
        machine, imports = gki.read_module(self.ko)
        self.assertEqual(imports, sorted(CALLS))
        nm = subprocess.run(["nm", "-u", self.ko], capture_output=True,
                            text=True)
        if nm.returncode == 0:
            self.assertEqual(imports, sorted(l.split()[-1] for l in
                                             nm.stdout.splitlines()))

    def test_classes(self):
        c = self.classes()
        self.assertEqual(c["module_layout"], ("core", "core"))
        self.assertEqual(c["elv_rb_add"], ("vendor", "vivo,xiaomi"))
        self.assertEqual(c["sized_strscpy"], ("vendor", "vivo (as strscpy)"))
        self.assertEqual(c["gone_sym"][0], "MISSING")
        self.assertEqual(c["known_sym"], ("known", "debugfs only"))
        self.assertEqual(c["new_sym"][0], "unchecked")

    def test_x86_only(self):
        machine, _ = gki.read_module(self.ko)
        b = gki.Branch(os.path.join(self.data, "test-6.6.tsv"))
        rows = gki.classify(b, "x86_64", ["__x86_return_thunk", "pcpu_hot"],
                            {})
        self.assertEqual({c for _, c, _ in rows}, {"x86 only"})
        rows = gki.classify(b, "aarch64", ["pcpu_hot"], {})
        self.assertEqual(rows[0][1], "unchecked")

    def test_exit_status(self):
        rc, out, err = self.run_tool(self.ko)
        self.assertEqual(rc, 0, err)
        self.assertIn("MISSING   gone_sym", out)
        self.assertIn("vendor    elv_rb_add", out)
        self.assertIn("vivo (partial:5)", out)
        rc, out, _ = self.run_tool("--strict", "--summary", self.ko)
        self.assertEqual(rc, 1)
        self.assertNotIn("elv_rb_add", out)
        self.assertRegex(out, r"unchecked +new_sym")
        # with every import looked up and carried (or known), --strict passes
        self.write("gki/test-6.6.tsv", DATA.replace("gone_sym\t-",
                                                    "gone_sym\txiaomi")
                   + "new_sym\tvivo\n")
        rc, _, err = self.run_tool("--strict", self.ko)
        self.assertEqual(rc, 0, err)

    def test_bad_input(self):
        text = os.path.join(self.tmp, "text.ko")
        self.write("text.ko", "not a module\n")
        for path, what in [(os.path.join(self.tmp, "none.ko"), "No such"),
                           (text, "not an ELF file"),
                           (self.plain, "not a kernel module")]:
            rc, out, err = self.run_tool(path)
            self.assertEqual(rc, 2, path)
            self.assertEqual(out, "")
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn(what, err)
        self.write("gki/test-6.6.tsv", DATA + "bad line\n")
        rc, _, err = self.run_tool(self.ko)
        self.assertEqual(rc, 2)
        self.assertIn("expected symbol<TAB>lists", err)
        self.write("gki/test-6.6.tsv", DATA + "x\tpixel\n")
        rc, _, err = self.run_tool(self.ko)
        self.assertEqual(rc, 2)
        self.assertIn("not declared", err)
        rc, _, err = self.run_tool("--branch", "nosuch", self.ko)
        self.assertEqual(rc, 2)

    def test_import(self):
        tree = os.path.join(self.tmp, "common")
        os.makedirs(os.path.join(tree, "android"))
        lists = {"abi_gki_aarch64": "[abi_symbol_list]\n  module_layout\n",
                 "abi_gki_aarch64_xiaomi": "[abi_symbol_list]\n# cpq.ko\n"
                 "  elv_rb_add\n  strscpy  # ok\n",
                 "abi_gki_aarch64.stg": "elf_symbol { name: \"gone_sym\" }\n"}
        for name, text in lists.items():
            self.write(os.path.join("common", "android", name), text)
        rc, out, err = self.run_tool("--import", tree, "test-6.6")
        self.assertEqual(rc, 0, err)
        os.remove(os.path.join(self.data, "known-missing"))
        self.write("gki/test-6.6.tsv", out)
        c = self.classes()
        self.assertEqual(c["module_layout"][0], "core")
        self.assertEqual(c["elv_rb_add"], ("vendor", "xiaomi"))
        self.assertEqual(c["sized_strscpy"], ("vendor", "xiaomi (as strscpy)"))
        self.assertEqual(c["gone_sym"][0], "MISSING")
        self.assertEqual(c["new_sym"][0], "MISSING")
        rc, _, err = self.run_tool("--import", self.tmp, "x")
        self.assertEqual(rc, 2)
        self.assertIn("no android/abi_gki_aarch64", err)


class KeptData(unittest.TestCase):
    def test_parse(self):
        paths = glob.glob(os.path.join(HERE, "*.tsv"))
        self.assertGreaterEqual(len(paths), 2)
        for p in paths:
            b = gki.Branch(p)
            self.assertEqual(os.path.basename(p), b.name + ".tsv")
            self.assertTrue(b.carriers)
        known = gki.load_known(os.path.join(HERE, "known-missing"))
        names = {gki.Branch(p).name for p in paths}
        self.assertTrue(all(b in names for b, _ in known))


if __name__ == "__main__":
    unittest.main()
