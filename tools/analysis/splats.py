#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Judge a debug kernel's console (and kmemleak's report) for splats, as KTAP.

    splats.py --name 6.12-debug CONSOLE [--kmemleak FILE [--kmemleak-loaded FILE]]
              [--debug-locks FILE]

One result per checker, so that a run says which one fired: lockdep,
KASAN, UBSAN, sleeping in atomic context, list corruption, KFENCE, debug
objects, hung tasks and RCU stalls, and any other WARN, BUG, oops or
panic.  With --kmemleak, one more: FILE holds /sys/kernel/debug/kmemleak
after a scan taken once fwdsched was unloaded, and every object in it is
a leak; --kmemleak-loaded is the same report taken before the unload,
whose backtraces still name fwdsched's functions, and is only used to
show them.  With --debug-locks, one more: FILE holds /proc/lockdep_stats
at the end, and lockdep must still be on (it turns itself off after its
first report, or when the kernel is tainted).  A failing result carries
the start of each report as KTAP comments.  Exit status 1 when a result
failed.
"""

import argparse
import re
import sys

# Each checker's report headers, as the kernel prints them (the message
# after the "[   12.345678] " time stamp).
CHECKERS = [
    ("lockdep", re.compile(
        r"WARNING: (possible (circular|recursive) locking"
        r"|inconsistent lock state|possible irq lock inversion"
        r"|suspicious RCU usage|bad unlock balance|held lock freed"
        r"|lock held when returning to user space|\S+-safe -> \S+-unsafe"
        r"|Nested lock was not taken|bad contention detected"
        r"|chain_key collision|\S+/\d+ still has locks held)"
        r"|BUG: (MAX_\w+ too low|key \S+ has not been registered"
        r"|looking up invalid subclass)|\[ BUG: Invalid wait context \]"
        r"|INFO: trying to register non-static key|DEBUG_LOCKS_WARN_ON")),
    ("kasan", re.compile(r"BUG: KASAN: ")),
    ("ubsan", re.compile(r"UBSAN: ")),
    ("atomic-sleep", re.compile(
        r"BUG: (sleeping function called from invalid context"
        r"|scheduling while atomic|scheduling in a non-blocking section"
        r"|assuming atomic context|assuming non migratable context"
        r"|using (smp_processor_id|__this_cpu_\w+)\(\) in preemptible"
        r"|workqueue leaked atomic)")),
    ("list-corruption", re.compile(r"\b(h?list_\w+|list) corruption")),
    ("kfence", re.compile(r"BUG: KFENCE: ")),
    ("debug-objects", re.compile(r"ODEBUG: ")),
    ("hung-task", re.compile(
        r"INFO: task \S+ blocked for more than"
        r"|INFO: \S+ (self-)?detected stall|detected stalls on CPUs"
        r"|BUG: (soft lockup|workqueue lockup)")),
    # "[ cut here ]" is not a report of its own: the WARN or BUG line
    # that follows it is.
    ("warn-oops-panic", re.compile(
        r"WARNING: |BUG: |kernel BUG at|Oops: "
        r"|general protection fault|Kernel panic - not syncing")),
]
CATCH_ALL = CHECKERS[-1][0]

# Lines that say a checker has stopped watching: the rest of the run
# would be unchecked, so they fail that checker.
CHECKER_OFF = [
    ("lockdep", re.compile(r"turning off the locking correctness validator"
                           r"|INFO: lockdep is turned off")),
    ("kmemleak", re.compile(r"kmemleak: .*(disabled|[Cc]annot allocate)")),
]

# The panic that panic_on_warn makes of a report the checkers above have
# already claimed, or of a WARN (whose "WARNING: CPU: ..." line is caught).
PANIC_ON_WARN = re.compile(r"Kernel panic - not syncing: .*panic_on_warn set")

# Kernel lines carry a time stamp; the command's own output, which shares
# the console, does not, and is never taken for a report.  A kernel line
# may follow the command's output on the same line of the serial console.
STAMP = re.compile(r"\[\s*\d+\.\d{6}\](\[\s*[TC]\d+\])?\s?")
# How far a claimed header reaches: the catch-all does not take the WARN
# line of the same report (ODEBUG's or DEBUG_LIST's "WARNING: CPU: ...").
NEAR = 3
CONTEXT = 30


def message(line):
    """The kernel message of a console line without its time stamp, or
    None when the line is not the kernel's."""
    m = STAMP.search(line)
    return line[m.end():].rstrip("\r\n") if m else None


def scan_console(lines):
    """{checker: [report, ...]}, each report the lines from its header.
    A header goes to the first checker it matches; the catch-all last
    one takes only what no other checker claims nearby."""
    found = {}
    msgs = [m for m in map(message, lines) if m is not None]

    def claimed(msg):
        return next((name for name, pat in CHECKERS[:-1] + CHECKER_OFF
                     if pat.search(msg)), None)

    names = [claimed(m) for m in msgs]
    for i, msg in enumerate(msgs):
        name = names[i]
        if name is None and CHECKERS[-1][1].search(msg):
            near = names[max(0, i - NEAR):i + NEAR + 1]
            if not any(near) and not PANIC_ON_WARN.search(msg):
                name = CATCH_ALL
        if name is not None:
            found.setdefault(name, []).append(msgs[i:i + CONTEXT])
    return found


def kmemleak_reports(text):
    """{object address: its report's lines} of a kmemleak report."""
    reports = {}
    lines = None
    for line in text.splitlines():
        m = re.match(r"unreferenced object (0x[0-9a-f]+)", line)
        if m:
            lines = reports.setdefault(m.group(1), [])
        if lines is not None:
            lines.append(line)
    return reports


def debug_locks_on(text):
    """True when /proc/lockdep_stats says lockdep is still on."""
    m = re.search(r"^\s*debug_locks:\s*(\d+)", text, re.M)
    return m is not None and m.group(1) != "0"


def count(reports):
    """The KTAP note for a result: how many reports, if any."""
    n = len(reports)
    return f"{n} report{'s' if n > 1 else ''}" if n else ""


def read(path):
    """A file's text, or None with the error as second value."""
    try:
        with open(path, errors="replace") as f:
            return f.read(), None
    except OSError as e:
        return None, str(e)


class Ktap:
    def __init__(self):
        self.lines = []
        self.failed = 0
        self.n = 0

    def result(self, ok, name, reports=(), note=""):
        self.n += 1
        if not ok:
            self.failed += 1
            for rep in reports[:3]:
                self.lines += ["# " + ln for ln in rep]
            if len(reports) > 3:
                self.lines.append(f"# ... and {len(reports) - 3} more")
        status = "ok" if ok else "not ok"
        self.lines.append(f"{status} {self.n} {name}" + (f" # {note}" if note else ""))

    def print(self):
        print("TAP version 13")
        print(f"1..{self.n}")
        print("\n".join(self.lines))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True, help="the kernel, for test names")
    ap.add_argument("console")
    ap.add_argument("--kmemleak", help="kmemleak's report after the unload")
    ap.add_argument("--kmemleak-loaded",
                    help="kmemleak's report before the unload (symbols)")
    ap.add_argument("--debug-locks", help="a copy of /proc/lockdep_stats")
    args = ap.parse_args(argv)
    if args.kmemleak_loaded and not args.kmemleak:
        ap.error("--kmemleak-loaded needs --kmemleak")

    out = Ktap()
    text, err = read(args.console)
    if text is None or not text.strip():
        out.result(False, f"splats.{args.name}.console",
                   [[err or "the console log is empty"]])
    found = scan_console((text or "").splitlines())
    for name, _ in CHECKERS:
        reps = found.get(name, [])
        out.result(not reps, f"splats.{args.name}.{name}", reps, count(reps))

    if args.debug_locks is not None:
        text, err = read(args.debug_locks)
        if text is None:
            on, why = False, f"no lockdep state: {err}"
        else:
            on = debug_locks_on(text)
            why = "lockdep turned itself off during the run"
        out.result(on, f"splats.{args.name}.lockdep-on", [[why]])

    if args.kmemleak:
        reps = list(found.get("kmemleak", []))
        text, err = read(args.kmemleak)
        if text is None:
            reps.append([f"no kmemleak report: {err}"])
        else:
            leaks = kmemleak_reports(text)
            loaded = {}
            if args.kmemleak_loaded:
                ltext, _ = read(args.kmemleak_loaded)
                loaded = kmemleak_reports(ltext or "")
            reps += [loaded.get(addr, rep) for addr, rep in leaks.items()]
        out.result(not reps, f"splats.{args.name}.kmemleak", reps, count(reps))
    out.print()
    return 1 if out.failed else 0


if __name__ == "__main__":
    sys.exit(main())
