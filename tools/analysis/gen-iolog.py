#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Generate the fio iolog of the papers' Fig 2 "shuffle" experiment.

One read of LENGTH bytes at the start of each STRIDE-sized block of a
region of COUNT blocks, in an order fixed by SEED (or ascending with
--order sort), as a `fio version 2 iolog`. The shuffle is a Fisher-Yates
driven by splitmix64, implemented here, so the output depends on the seed
only, never on the Python version.

    tools/analysis/gen-iolog.py -o fio-jobs/fig2-shuffle.iolog     # the shipped file

Defaults reproduce fio-jobs/fig2-shuffle.iolog: seed 20130117, 1024
blocks of 1 MiB, 1-byte reads, device /dev/mmcblk0 (replay elsewhere with
fio's --replay_redirect=PATH).
"""

import argparse
import os
import sys
import tempfile

MASK64 = (1 << 64) - 1
DEFAULT_SEED = 20130117


def splitmix64(state):
    """Yield 64-bit pseudo-random numbers from a 64-bit state."""
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        yield z ^ (z >> 31)


def below(rng, n):
    """Uniform integer in [0, n) by rejection (no modulo bias)."""
    limit = (1 << 64) - (1 << 64) % n
    while True:
        r = next(rng)
        if r < limit:
            return r % n


def order(count, seed, shuffle=True):
    """Block indices 0..count-1, shuffled with seed or ascending."""
    idx = list(range(count))
    if shuffle:
        rng = splitmix64(seed & MASK64)
        for i in range(count - 1, 0, -1):
            j = below(rng, i + 1)
            idx[i], idx[j] = idx[j], idx[i]
    return idx


def iolog(device, blocks, stride, length):
    """Text of a fio version 2 iolog reading length bytes at each block."""
    lines = ["fio version 2 iolog",
             "%s add" % device,
             "%s open" % device]
    lines += ["%s read %d %d" % (device, b * stride, length) for b in blocks]
    lines.append("%s close" % device)
    return "\n".join(lines) + "\n"


def positive_int(text):
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not an integer" % text)
    if value < 1:
        raise argparse.ArgumentTypeError("%r must be >= 1" % text)
    return value


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="gen-iolog",
        description="Write the Fig 2 sort/shuffle fio iolog (version 2).")
    ap.add_argument("--seed", type=lambda t: int(t, 0), default=DEFAULT_SEED,
                    help="shuffle seed (default %(default)s)")
    ap.add_argument("--count", type=positive_int, default=1024,
                    help="number of blocks (default %(default)s)")
    ap.add_argument("--stride", type=positive_int, default=1 << 20,
                    help="block size in bytes (default %(default)s)")
    ap.add_argument("--length", type=positive_int, default=1,
                    help="bytes read per block (default %(default)s)")
    ap.add_argument("--device", default="/dev/mmcblk0",
                    help="file name recorded in the log "
                         "(default %(default)s)")
    ap.add_argument("--order", choices=("shuffle", "sort"),
                    default="shuffle", help="default %(default)s")
    ap.add_argument("-o", "--output", help="output file (default stdout)")
    args = ap.parse_args(argv)

    if args.length > args.stride:
        ap.error("--length %d is larger than --stride %d" %
                 (args.length, args.stride))
    if not args.device or any(c.isspace() for c in args.device):
        ap.error("--device %r: must be non-empty without spaces" %
                 args.device)
    if args.seed < 0 or args.seed > MASK64:
        ap.error("--seed must be in 0..2^64-1")

    text = iolog(args.device,
                 order(args.count, args.seed, args.order == "shuffle"),
                 args.stride, args.length)
    if not args.output:
        sys.stdout.write(text)
        return 0
    # write to a temporary file first: on any error the old file stays
    out_dir = os.path.dirname(os.path.abspath(args.output))
    try:
        fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".gen-iolog.")
    except OSError as e:
        sys.exit("gen-iolog: cannot write into %s: %s" %
                 (out_dir, e.strerror))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, args.output)
    except OSError as e:
        os.unlink(tmp)
        sys.exit("gen-iolog: cannot write %s: %s" % (args.output, e.strerror))
    return 0


if __name__ == "__main__":
    sys.exit(main())
