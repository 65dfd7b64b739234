#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Direct 4 KiB reads of a block device, one at a time, in one process.

    direct-reads.py DEV < BLOCKS          each block of BLOCKS once, in order
    direct-reads.py --loop DEV < BLOCKS   again and again until SIGTERM
    direct-reads.py --procs N COUNT STRIDE DEV
                                          N processes at once, forked (no
                                          exec), the i-th reading COUNT
                                          blocks from block i * STRIDE on;
                                          their pids go to stdout, a line
                                          each, and each is named
                                          "fwd-reader" (its comm)

BLOCKS holds one block number (of 4 KiB) a line.  Every read is
O_DIRECT and waits for the one before, so the device sees them in the
order given.  Under TCG a dd per read costs some 50-100 ms of exec; the
tests that only need the reads (not a process each) use this instead.
Exit 0 when every read was whole (with --loop: when SIGTERM came and no
read had failed), 1 with a message naming the block that failed, 2 on
bad arguments."""
import mmap
import os
import signal
import sys

BS = 4096


def die(code, msg):
    print("direct-reads: " + msg, file=sys.stderr)
    sys.exit(code)


def read_blocks(fd, dev, blocks, stop=()):
    """Reads @blocks of @fd in order, until @stop holds something."""
    buf = mmap.mmap(-1, BS)
    for b in blocks:
        if stop:
            break
        try:
            got = os.preadv(fd, [buf], b * BS)
        except OSError as e:
            die(1, "read of block %d of %s failed: %s" % (b, dev, e.strerror))
        if got != BS:
            die(1, "read of block %d of %s returned %d bytes" % (b, dev, got))


def open_dev(dev):
    try:
        return os.open(dev, os.O_RDONLY | os.O_DIRECT)
    except OSError as e:
        die(1, "cannot open %s: %s" % (dev, e.strerror))


def procs(argv):
    if len(argv) != 4 or not all(a.isdigit() for a in argv[:3]) or \
            int(argv[0]) < 1 or int(argv[1]) < 1:
        die(2, "usage: direct-reads.py --procs N COUNT STRIDE DEV "
            "(N, COUNT >= 1)")
    n, count, stride = (int(a) for a in argv[:3])
    dev = argv[3]
    os.close(open_dev(dev))
    pids = []
    for i in range(n):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                with open("/proc/self/comm", "w") as f:
                    f.write("fwd-reader")
                fd = open_dev(dev)
                read_blocks(fd, dev, range(i * stride, i * stride + count))
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
            finally:
                os._exit(code)
        pids.append(pid)
    print("\n".join(str(p) for p in pids), flush=True)
    bad = 0
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            bad += 1
    if bad:
        die(1, "%d of the %d reader processes failed" % (bad, n))
    return 0


def main(argv):
    if argv and argv[0] == "--procs":
        return procs(argv[1:])
    loop = bool(argv) and argv[0] == "--loop"
    if loop:
        argv = argv[1:]
    if len(argv) != 1:
        die(2, "usage: direct-reads.py [--loop] DEV < BLOCKS, "
            "or --procs N COUNT STRIDE DEV")
    blocks = []
    for n, line in enumerate(sys.stdin, 1):
        line = line.strip()
        if not line:
            continue
        if not line.isdigit():
            die(2, "line %d of the block list is not a block number: %r"
                % (n, line))
        blocks.append(int(line))
    if not blocks:
        die(2, "no blocks to read")
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    fd = open_dev(argv[0])
    while not stop:
        read_blocks(fd, argv[0], blocks, stop)
        if not loop:
            break
    os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
