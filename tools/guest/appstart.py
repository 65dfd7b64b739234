#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""appstart: a real program's start-up on the card, for tools/guest/bench.sh.

usage: appstart.py prepare DISK START SIZE MNT MODULES OUT.json
       appstart.py command MNT MODULES
       appstart.py partition-name DISK

The program is the guest's own Python 3 (the host's, through 9p): its
interpreter binary, the dynamic loader, the shared libraries it and its
extension modules need, and its standard library (without the test
suites, IDLE, Tk and the static library) are copied into an ext4 file
system on the card, in partition 1 of DISK, which "prepare" makes at
START bytes with SIZE bytes (an MBR partition table; every job of the
benchmark keeps below START).  The copy keeps the files' times, so that
Python's cached byte code (__pycache__/*.pyc) stays valid and nothing is
compiled or written.  MODULES is a comma-separated list of modules.

"command" prints, as bash assignments (APP_CMD and APP_ENV, arrays), how
to start it from the copy mounted at MNT:

  MNT/lib/ld.so --library-path MNT/lib MNT/bin/python3 -S -s -B -P -c "import MODULES"

in MNT, with PYTHONHOME=MNT and no locale, time zone or outside OpenSSL
configuration, so that everything it reads comes from the card (the
loader, the libraries, the binary, about 200 files of the standard
library).  bench.sh starts it cold, as a phone starts an application
from its read-only system partition: the file system unmounted, the
caches dropped, mounted read-only afresh; it times the process from its
start to its exit itself, so that no Python of the harness starts in
between.

OUT.json of "prepare": the partition, its file system, what was copied
(files, bytes), warm_s: a start from the page cache (the start-up's CPU
time without I/O), which also checks that the program runs.  Exit status
0; 1 when the preparation failed (the reason on stderr); 2 for bad
arguments.
"""

import json
import os
import re
import subprocess
import sys
import time
# (fcntl, glob, shutil, struct and sysconfig only where "prepare" needs
# them)

BLKRRPART = 0x125f
OPENSSL_CONF = "/usr/lib/ssl/openssl.cnf"
SECTOR = 512
# Not part of the program: test suites, IDLE, Tk, 2to3, bundled wheels,
# the documentation's data, the static library and its build files,
# third-party packages.
SKIP = re.compile(r"^(test|idlelib|tkinter|turtledemo|lib2to3|ensurepip|"
                  r"pydoc_data|config-.*|site-packages|dist-packages)$")


class AppError(Exception):
    pass


def partition_name(disk):
    """The name of partition 1 of disk: mmcblk0p1, sda1."""
    return disk + ("p1" if disk[-1:].isdigit() else "1")


def mbr(start, size, block=SECTOR):
    """A master boot record with one Linux partition of size bytes at
    start bytes, in the disk's logical blocks of block bytes (512 on the
    SD card, 4096 on QEMU's UFS disk); both whole blocks, the MBR's 2^32
    blocks at most.  It fills the first 512 bytes of block 0."""
    import struct
    if start % block or size % block or start <= 0 or size <= 0:
        raise AppError("partition %d+%d: not whole %d-byte blocks" %
                       (start, size, block))
    if (start + size) // block >= 1 << 32:
        raise AppError("partition %d+%d: beyond an MBR's 2^32 blocks" %
                       (start, size))
    entry = struct.pack("<B3sB3sII", 0, b"\xfe\xff\xff", 0x83, b"\xfe\xff\xff",
                        start // block, size // block)
    return bytes(446) + entry + bytes(48) + b"\x55\xaa"


def sh(*cmd, **kw):
    r = subprocess.run(list(cmd), capture_output=True, text=True, **kw)
    if r.returncode:
        raise AppError("%s failed (exit %d): %s" % (
            " ".join(cmd), r.returncode, (r.stderr or r.stdout).strip()[-300:]))
    return r.stdout


def write_partition(disk, start, size):
    """Writes the MBR of one partition and has the kernel read it; the
    partition's name."""
    import fcntl
    dev = "/dev/" + disk
    total = int(open("/sys/block/%s/size" % disk).read()) * SECTOR
    if start + size > total:
        raise AppError("partition %d+%d does not fit the %d bytes of %s" %
                       (start, size, total, disk))
    block = int(open("/sys/block/%s/queue/logical_block_size" % disk).read())
    fd = os.open(dev, os.O_WRONLY | os.O_SYNC)
    try:
        os.pwrite(fd, mbr(start, size, block), 0)
        os.fsync(fd)
    finally:
        os.close(fd)
    part = partition_name(disk)
    fd = os.open(dev, os.O_RDONLY)
    why = ""
    try:
        for _ in range(50):
            try:
                fcntl.ioctl(fd, BLKRRPART)
                why = ""
                break
            except OSError as e:
                why = " (BLKRRPART: %s)" % e.strerror
                time.sleep(0.1)
    finally:
        os.close(fd)
    for _ in range(100):
        if os.path.exists("/dev/" + part):
            return part
        time.sleep(0.1)
    raise AppError("no /dev/%s after writing the partition table of %s%s" %
                   (part, disk, why))


def needed_libs(paths):
    """{name asked for: real path} of the shared libraries that the ELF
    files paths load (ldd), and the dynamic loader's real path."""
    libs, loader = {}, None
    for p in paths:
        r = subprocess.run(["ldd", p], capture_output=True, text=True)
        for line in r.stdout.splitlines():
            m = re.match(r"\s*(\S+) => (/\S+) \(", line)
            if m:
                libs[m.group(1)] = os.path.realpath(m.group(2))
            m = re.match(r"\s*(/\S*ld-linux\S*) \(", line)
            if m:
                loader = os.path.realpath(m.group(1))
    if not loader:
        raise AppError("ldd names no dynamic loader for %s" % paths[0])
    return libs, loader


def program_files():
    """(binary, loader, {library name: path}, standard library directory)
    of the Python running this script; Tk's extension (not copied) left
    out."""
    import glob
    import sysconfig
    exe = os.path.realpath(sys.executable)
    stdlib = sysconfig.get_paths()["stdlib"]
    dyn = [p for p in glob.glob(os.path.join(stdlib, "lib-dynload", "*.so"))
           if "tkinter" not in p]
    libs, loader = needed_libs([exe] + dyn)
    return exe, loader, libs, stdlib


def command(mnt, modules):
    """The program's command line and environment."""
    for m in modules:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", m):
            raise AppError("module %r: not a module name" % m)
    if not modules:
        raise AppError("no modules to import")
    cmd = [os.path.join(mnt, "lib", "ld.so"), "--library-path",
           os.path.join(mnt, "lib"), os.path.join(mnt, "bin", "python3"),
           "-S", "-s", "-B", "-P", "-c", "import " + ", ".join(modules)]
    # nothing from outside the copy: no locale files, no time zone file,
    # OpenSSL's configuration from the copy
    env = {"PYTHONHOME": mnt, "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONCOERCECLOCALE": "0", "LC_ALL": "C", "TZ": "UTC0",
           "OPENSSL_CONF": os.path.join(mnt, "etc", "openssl.cnf"),
           "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    return cmd, env


def prepare(disk, start, size, mnt, modules, out):
    import shutil
    t0 = time.monotonic()
    part = write_partition(disk, start, size)
    sh("mkfs.ext4", "-q", "-F", "-L", "fwdapp",
       "-E", "lazy_itable_init=0,lazy_journal_init=0", "/dev/" + part)
    os.makedirs(mnt, exist_ok=True)
    sh("mount", "-t", "ext4", "/dev/" + part, mnt)
    try:
        exe, loader, libs, stdlib = program_files()
        ver = "python%d.%d" % sys.version_info[:2]
        os.makedirs(os.path.join(mnt, "bin"))
        os.makedirs(os.path.join(mnt, "lib"))
        shutil.copy2(exe, os.path.join(mnt, "bin", "python3"))
        shutil.copy2(loader, os.path.join(mnt, "lib", "ld.so"))
        os.makedirs(os.path.join(mnt, "etc"))
        if os.path.exists(OPENSSL_CONF):
            shutil.copy2(OPENSSL_CONF, os.path.join(mnt, "etc", "openssl.cnf"))
        # each library under the name the binaries ask for (libz.so.1,
        # not the real file's libz.so.1.2.13)
        for name, real in sorted(libs.items()):
            shutil.copy2(real, os.path.join(mnt, "lib", name))
        shutil.copytree(stdlib, os.path.join(mnt, "lib", ver), symlinks=True,
                        ignore=lambda d, ns: [n for n in ns if d == stdlib and
                                              SKIP.match(n)])
        nfiles = nbytes = 0
        for d, _, fs in os.walk(mnt):
            for f in fs:
                p = os.path.join(d, f)
                if not os.path.islink(p):
                    nfiles += 1
                    nbytes += os.path.getsize(p)
        sh("sync")
        # a check that the copy runs, then the start-up from the page
        # cache: its CPU time, without I/O
        cmd, env = command(mnt, modules)
        sh(*cmd, env=env, cwd=mnt)
        t = time.monotonic()
        sh(*cmd, env=env, cwd=mnt)
        warm_s = round(time.monotonic() - t, 4)
    finally:
        subprocess.run(["umount", mnt])
    doc = {"partition": part, "start": start, "size": size, "fs": "ext4",
           "files": nfiles, "bytes": nbytes, "python": sys.version.split()[0],
           "libraries": sorted(libs), "modules": len(modules),
           "warm_s": warm_s, "prepare_s": round(time.monotonic() - t0, 3)}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return doc


def shell_command(mnt, modules):
    """APP_CMD=(...) and APP_ENV=(...) for bash's eval."""
    import shlex
    cmd, env = command(mnt, modules)
    return "APP_CMD=(%s)\nAPP_ENV=(%s)\n" % (
        " ".join(shlex.quote(c) for c in cmd),
        " ".join(shlex.quote("%s=%s" % kv) for kv in sorted(env.items())))


def modules(text):
    return [m for m in text.split(",") if m]


def _num(text, what):
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):
        raise AppError("%s %r: not a number" % (what, text))
    return float(text) if "." in text else int(text)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        if len(argv) == 2 and argv[0] == "partition-name":
            print(partition_name(argv[1]))
            return 0
        if len(argv) == 7 and argv[0] == "prepare":
            prepare(argv[1], _num(argv[2], "START"), _num(argv[3], "SIZE"),
                    argv[4], modules(argv[5]), argv[6])
            return 0
        if len(argv) == 3 and argv[0] == "command":
            sys.stdout.write(shell_command(argv[1], modules(argv[2])))
            return 0
    except AppError as e:
        print("appstart: %s" % e, file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
