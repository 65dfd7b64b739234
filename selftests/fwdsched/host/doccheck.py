#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""doccheck: the project's Markdown documents point at things that exist.

usage: doccheck.py ROOT links|targets|paths

links    every relative link [text](path#anchor) of every *.md below ROOT
         (build/ and results/ excepted) names a file or directory that
         exists, and its anchor a heading of that file (.md: GitHub's
         heading ids; .rst: section titles) or of the linking file
targets  every "make TARGET" in a code span or block of a *.md names a
         target of ROOT/Makefile
paths    every path of the repository named in a code span or block of
         ROOT/README.md (a word starting with one of its top-level
         directories or files) exists

Prints one line per problem, "FILE:LINE: ...", and exits 1 when there
is one, 0 when there is none, 2 on bad usage.
"""

import os
import re
import sys

SKIP_DIRS = {".git", "build", "results", "__pycache__"}
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`[^`]*`")


def md_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(d, f)


def blocks(text):
    """(first line number, text, is_code) of the paragraphs outside fenced
    code blocks and of the lines inside them."""
    fence, para, start = False, [], 0
    for i, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```") or (not fence and not line.strip()):
            if para:
                yield start, "\n".join(para), False
                para = []
            if line.strip():
                fence = not fence
            continue
        if fence:
            yield i, line, True
        else:
            if not para:
                start = i
            para.append(line)
    if para:
        yield start, "\n".join(para), False


def spans(regex, start, para):
    """(line number, match) of regex in a paragraph starting at line start."""
    for m in regex.finditer(para):
        yield start + para.count("\n", 0, m.start()), m


def prose_lines(text):
    """(number, line) of the lines outside fenced code blocks."""
    for start, para, code in blocks(text):
        if not code:
            for k, line in enumerate(para.split("\n")):
                yield start + k, line


def code_parts(text):
    """(number, text) of code spans and of lines in fenced code blocks."""
    for start, para, code in blocks(text):
        if code:
            yield start, para
        else:
            for i, m in spans(CODE_SPAN, start, para):
                yield i, m.group(0).strip("`")


def md_anchors(text):
    """GitHub's ids of a Markdown file's headings."""
    seen, ids = {}, set()
    for _, line in prose_lines(text):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        ids.add(slug if n == 0 else "%s-%d" % (slug, n))
    return ids


def rst_anchors(text):
    """docutils' ids of a reStructuredText file's section titles."""
    lines = text.split("\n")
    ids = set()
    for a, b in zip(lines, lines[1:]):
        if a.strip() and re.fullmatch(r"([=\-~^\"'`#*+])\1+", b.strip()) and \
                len(b.strip()) >= len(a.strip()):
            ids.add(re.sub(r"[^a-z0-9]+", "-", a.strip().lower()).strip("-"))
    return ids


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return rst_anchors(text) if path.endswith(".rst") else md_anchors(text)


def check_links(root):
    problems = []
    for md in md_files(root):
        with open(md, encoding="utf-8") as f:
            text = f.read()
        rel = os.path.relpath(md, root)
        for start, para, code in blocks(text):
            if code:
                continue
            blank = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", "x", m.group(0)), para)
            for i, m in spans(LINK, start, blank):
                target = m.group(1)
                if re.match(r"[a-z][a-z0-9+.-]*:", target):
                    continue        # http:, https:, mailto:
                path, _, frag = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
                if not os.path.exists(dest):
                    problems.append("%s:%d: %s: no such file" % (rel, i, target))
                elif frag and (os.path.isdir(dest) or frag not in anchors(dest)):
                    problems.append("%s:%d: %s: no heading #%s there" % (rel, i, target, frag))
    return problems


def make_targets(root):
    targets = set()
    with open(os.path.join(root, "Makefile"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"([A-Za-z][\w.-]*(?:\s+[A-Za-z][\w.-]*)*)\s*:(?!=)", line)
            if m and not line.startswith("\t"):
                targets.update(m.group(1).split())
    return targets


def check_targets(root):
    known = make_targets(root)
    problems = []
    for md in md_files(root):
        with open(md, encoding="utf-8") as f:
            text = f.read()
        for i, code in code_parts(text):
            for m in re.finditer(r"(?:^|[\s;&|(])make((?:\s+[^\s;&|)#]+)*)", code):
                for word in m.group(1).split():
                    if word.startswith("-") or any(c in word for c in "=<$/"):
                        continue
                    if word not in known:
                        problems.append("%s:%d: make %s: no such target in the Makefile"
                                        % (os.path.relpath(md, root), i, word))
    return problems


def check_paths(root):
    readme = os.path.join(root, "README.md")
    tops = sorted(e for e in os.listdir(root) if e not in SKIP_DIRS)
    word = re.compile(r"(?:^|[\s(=])((?:%s)(?:/[^\s`'\"()<>*$,;]*)?)(?=[\s`'\"),;.:]|$)"
                      % "|".join(re.escape(t) for t in tops))
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    problems = []
    for i, code in code_parts(text):
        for m in word.finditer(code):
            p = m.group(1).rstrip(".:")
            if not os.path.exists(os.path.join(root, p)):
                problems.append("README.md:%d: %s: no such path" % (i, p))
    return problems


def main(argv):
    checks = {"links": check_links, "targets": check_targets, "paths": check_paths}
    if len(argv) != 2 or argv[1] not in checks or not os.path.isdir(argv[0]):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    problems = checks[argv[1]](argv[0])
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
