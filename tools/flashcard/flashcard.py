# SPDX-License-Identifier: GPL-2.0
"""nbdkit python plugin: an emulated flash card with direction asymmetry.

Serves a sparse backing file as the drive of QEMU's SD card. Requests are
served one at a time; each piece is held for the service time that
costmodel.py gives for its signed address delta from the end of the
previous piece (see costmodel.py for the model and the presets).

    nbdkit --exit-with-parent -f -U SOCK python flashcard.py \
        file=IMG [size=4G] [preset=paper|symmetric|fast] \
        [base_us=N] [fwd_us=N] [back_us=N] [scale_sectors=N] \
        [xfer_us_per_kb=N]

file=   backing image; created sparse with size= (default 4G) if missing.
        An existing file keeps its size, which must be a power of two.
size=   size of a new image; must be a power of two >= 1M (QEMU's SD card
        refuses other sizes). Given with an existing file of another size,
        it is an error.
preset= paper (default), fig56, symmetric or fast; the other keys
        override the preset's values.

The top 64 KiB of the card (costmodel.CONTROL_BYTES) is a read-only
control window: reading it returns the card's device-time totals as JSON
text (costmodel.Card.totals(): model commands, modelled busy time, by
read/write and by sign of the delta), padded with spaces. Those reads are
not charged, not counted and do not move the card's position; writes to
the window fail with EPERM. A guest reads it with O_DIRECT, e.g.
    dd if=/dev/mmcblk0 iflag=direct bs=64K skip=$((4096 * 16 - 1)) count=1
on a 4 GiB card.

Add -v to nbdkit to see the card's counters of forward, backward and
continued pieces (cumulative since start) whenever a client disconnects.
"""

import ctypes
import errno
import os
import sys
import threading
import time

import nbdkit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import costmodel  # noqa: E402

API_VERSION = 2

DEFAULT_SIZE = "4G"
PR_SET_TIMERSLACK = 29
# Remainders below this are not slept but carried into the next piece:
# a sleep cannot be shorter than a few microseconds anyway.
MIN_SLEEP_NS = 20000

_cfg = {"file": None, "size": None, "preset": "paper"}
_overrides = {}
_params = None
_card = None
_fd = -1
_size = 0
_lock = threading.Lock()
_busy_until_ns = 0
_tls = threading.local()
_control = {"snapshot": None, "reads": 0}


def _fail(msg):
    # Only called while parsing the command line, before any client
    # connects: print one clear line instead of a Python traceback.
    sys.stderr.write("nbdkit: flashcard: error: %s\n" % msg)
    sys.stderr.flush()
    os._exit(1)


def config(key, value):
    if key in ("file", "size", "preset"):
        _cfg[key] = value
    elif key in costmodel.PARAMS:
        _overrides[key] = value
    else:
        _fail("unknown parameter %r (known: file, size, preset, %s)" %
              (key, ", ".join(costmodel.PARAMS)))


def config_help():
    return __doc__


def config_complete():
    global _params, _card, _fd, _size
    try:
        _params = costmodel.make_params(_cfg["preset"], **_overrides)
        want = None
        if _cfg["size"] is not None:
            want = costmodel.parse_size(_cfg["size"])
    except costmodel.ParamError as e:
        _fail(str(e))
    path = _cfg["file"]
    if not path:
        _fail("file=IMAGE is required")
    if os.path.exists(path):
        if not os.path.isfile(path):
            _fail("file=%s: not a regular file" % path)
        size = os.path.getsize(path)
        if want is not None and want != size:
            _fail("file=%s exists with %d bytes but size=%s asks for %d; "
                  "remove the file or drop size=" %
                  (path, size, _cfg["size"], want))
        try:
            costmodel.check_size(size, "file=%s" % path)
        except costmodel.ParamError as e:
            _fail(str(e))
        _fd = os.open(path, os.O_RDWR)
    else:
        size = want if want is not None else \
            costmodel.parse_size(DEFAULT_SIZE)
        _fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        os.ftruncate(_fd, size)
    _size = size
    _card = costmodel.Card(_params)
    nbdkit.debug("flashcard: %s, %d bytes, %s" %
                 (path, _size, " ".join("%s=%s" % kv for kv in
                                        sorted(_params.items()))))


def thread_model():
    return nbdkit.THREAD_MODEL_SERIALIZE_ALL_REQUESTS


def open(readonly):
    return {}


def close(h):
    c = _card
    t = c.totals()
    nbdkit.debug("flashcard: %d pieces: %d forward, %d backward, "
                 "%d continued; %d model commands, %.0f us modelled busy "
                 "time" % (c.pieces, c.forward, c.backward, c.continued,
                           t["commands"], t["busy_us"]))


def get_size(h):
    return _size


def is_rotational(h):
    return False


def can_write(h):
    return True


def can_flush(h):
    return True


def can_multi_conn(h):
    return False


def _precise_sleep_setup():
    # The default 50 us timer slack would swamp short service times.
    if getattr(_tls, "slack", False):
        return
    _tls.slack = True
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _serve(offset, length, write=False):
    """Hold the request for its service time. The card is busy until
    _busy_until_ns; a piece starts when it arrives or when the card is
    free, whichever is later."""
    global _busy_until_ns
    now = time.monotonic_ns()
    cost_ns = int(_card.charge(offset, length, write) * 1000)
    _busy_until_ns = max(now, _busy_until_ns) + cost_ns
    left = _busy_until_ns - time.monotonic_ns()
    if left >= MIN_SLEEP_NS:
        _precise_sleep_setup()
        time.sleep(left / 1e9)


def _check_range(offset, length):
    if offset < 0 or offset + length > _size:
        nbdkit.set_error(errno.EINVAL)
        raise ValueError("flashcard: request %d+%d beyond %d bytes" %
                         (offset, length, _size))


def _in_control(offset, length):
    return offset + length > costmodel.control_start(_size)


def _read_control(buf, offset):
    """Serve a read of the control window from a snapshot of the totals.
    The snapshot is taken when a read starts at the window's first byte
    (or when there is none yet), so that the pieces of one read of the
    whole window show one consistent state."""
    start = costmodel.control_start(_size)
    if offset == start or _control["snapshot"] is None:
        _control["reads"] += 1
        _control["snapshot"] = costmodel.control_text(
            _card, _size, _cfg["preset"], _control["reads"])
    text = _control["snapshot"]
    buf[:] = text[offset - start:offset - start + len(buf)]


def pread(h, buf, offset, flags):
    length = len(buf)
    start = costmodel.control_start(_size)
    with _lock:
        _check_range(offset, length)
        if offset >= start:
            _read_control(buf, offset)
            return
        # A read of the data that runs into the window (the guest probing
        # the whole disk's end, as udev's blkid does after a writer closes
        # it) gets the data, served and charged, then the window's text.
        n = min(length, start - offset)
        _serve(offset, n)
        data = os.pread(_fd, n, offset)
        if len(data) != n:
            nbdkit.set_error(errno.EIO)
            raise IOError("flashcard: short read at %d" % offset)
        buf[:n] = data
        if n < length:
            _read_control(memoryview(buf)[n:], start)


def pwrite(h, buf, offset, flags):
    length = len(buf)
    with _lock:
        _check_range(offset, length)
        if _in_control(offset, length):
            nbdkit.set_error(errno.EPERM)
            raise PermissionError("flashcard: write %d+%d into the read-only "
                                  "control window" % (offset, length))
        _serve(offset, length, True)
        done = os.pwrite(_fd, buf, offset)
        if done != length:
            nbdkit.set_error(errno.EIO)
            raise IOError("flashcard: short write at %d" % offset)
        if flags & nbdkit.FLAG_FUA:
            os.fdatasync(_fd)


def flush(h, flags):
    with _lock:
        os.fdatasync(_fd)


def unload():
    if _fd >= 0:
        os.close(_fd)
