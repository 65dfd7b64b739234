#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The application layer of the cross-layer timeline (tools/crosslayer).

  app.py sqlite DB N OUT     N inserts of (integer, 100-byte string), each
                             its own transaction (autocommit), as papers
                             003/004 did on Android and Linux
  app.py read1 FILE N OUT    N one-byte buffered reads, one at the start of
                             each of N equal blocks of FILE, ascending

OUT gets "pid PID" then one line per operation: "i begin_ns end_ns"
(CLOCK_MONOTONIC, the clock of tracefs with trace_clock=mono and of the
MMC history).  Times are kept in memory and written at the end, so the
log adds no I/O to the run.
"""
import os
import sqlite3
import sys
import time


def sqlite_run(db, n):
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("CREATE TABLE IF NOT EXISTS t (i INTEGER, s TEXT)")
    s = "x" * 100
    times = []
    for i in range(n):
        t0 = time.monotonic_ns()
        con.execute("INSERT INTO t VALUES (?, ?)", (i, s))
        times.append((i, t0, time.monotonic_ns()))
    con.close()
    return times


def read1_run(path, n):
    size = os.path.getsize(path)
    step = size // n
    if step < 1:
        sys.exit("app.py: %s is smaller than %d bytes" % (path, n))
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    times = []
    for i in range(n):
        t0 = time.monotonic_ns()
        os.pread(fd, 1, i * step)
        times.append((i, t0, time.monotonic_ns()))
    os.close(fd)
    return times


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("sqlite", "read1"):
        sys.exit(__doc__)
    kind, path, n, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    try:
        n = int(n)
    except ValueError:
        n = 0
    if n <= 0:
        sys.exit("app.py: N must be a positive integer, not %r" % sys.argv[3])
    times = (sqlite_run if kind == "sqlite" else read1_run)(path, n)
    with open(out, "w") as f:
        f.write("pid %d\n" % os.getpid())
        for i, a, b in times:
            f.write("%d %d %d\n" % (i, a, b))


if __name__ == "__main__":
    main()
