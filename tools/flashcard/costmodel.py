# SPDX-License-Identifier: GPL-2.0
"""Service-time model of the emulated flash card (pure Python, no nbdkit).

The card serves one command at a time. A command is a run of contiguous
pieces: QEMU's SD card moves data in 512-byte pieces, each of which reaches
the backing store as its own request, so a piece that starts exactly where
the previous piece ended continues the same command and costs only its
transfer. Any other piece starts a new command and pays an access cost that
depends on the signed address delta from the end of the previous command:

    delta = start - previous_end                      (bytes)
    d     = |delta| / 512                             (sectors)
    reach = d / (d + scale_sectors)                   (0 .. 1)
    cost  = base_us + (fwd_us if delta > 0 else back_us) * reach
            + xfer_us_per_kb * length / 1024

A continuation (delta == 0) costs only the transfer term. The first command
after start-up is treated as a continuation. "reach" saturates: a jump of
scale_sectors costs half of the directional term, a jump of 9 * scale_sectors
nine tenths, so beyond a few scales the direction matters and the distance
hardly does (flash has no head to move, but the papers' Fig 5/6 show
service time split by the sign of the delta).

Presets (all times in microseconds):

  paper      base_us=100 fwd_us=150 back_us=1200 scale_sectors=8192
             xfer_us_per_kb=25
             Backward is clearly dearer than forward. The papers (000/002,
             Fig 5/6: address delta -128..+128 MB against service time
             0..10 ms on a Nexus S and a Nexus 7) state only that positive
             deltas complete faster than negative ones; the scatter plots
             carry no tabulated values. The magnitudes are our choice,
             about ten times below the figures' 0..10 ms scale so that a
             full benchmark fits in about 30 minutes: a 4 KiB read after a
             64 MiB jump costs 341 us forward and 1329 us backward (3.9x);
             the ratio tends to 4.0x for long jumps.
  fig56      base_us=500 fwd_us=1000 back_us=7000 scale_sectors=8192
             xfer_us_per_kb=25
             The papers' scale. Fig 5/6 spread service times over 0..10 ms,
             forward jumps low on that axis and backward ones several times
             higher. Here a 4 KiB read after a 64 MiB jump costs 1541 us
             forward and 7188 us backward (4.7x; 4.75x for far jumps), and
             at the headline job's typical forward step (8 MiB, 16 readers
             in 128 MiB) 1267 us. Under TCG every 4 KiB command also costs
             about 1.6 ms of emulation, the same in both directions; with
             paper's sub-millisecond costs that overhead hides most of the
             asymmetry (tools/fwdprobe sees 1.37 where the model has 3.9),
             here the model's direction term (1 to 7 ms) dominates it, so
             wall-clock IOPS show the ordering effect that device time
             shows (effective ratio about (7.2 + 1.6) / (1.5 + 1.6) = 2.8).
             Same transfer and distance scale as paper.
  symmetric  base_us=100 fwd_us=675 back_us=675 scale_sectors=8192
             xfer_us_per_kb=25
             Same base, distance scale and transfer as "paper"; forward and
             backward both cost the mean of paper's two directional terms,
             so a random workload costs about the same on average, but the
             direction of a jump does not matter.
  fast       base_us=1 fwd_us=1 back_us=2 scale_sectors=8192
             xfer_us_per_kb=0
             Tiny costs for functional tests; still (barely) asymmetric.

Device time. Card accounts every piece it is charged for, so that a
benchmark can read what the card's dispatch order cost in modelled time
alone, without the emulation's own overhead (see Card.totals()). Model
commands: a piece belongs to the current command when it starts exactly
where the previous piece ended (the model then charges its transfer only)
and moves data in the same direction (read or write); any other piece
starts a new command. So requests that follow
each other exactly (a sequential stream) count as one model command, and a
random workload's requests count one command each. A command's sign is
that of its delta: forward (> 0), backward (< 0) or continuation (== 0: the
card's first command, or a change of direction at the same address), and
its time is its access cost plus the transfer of all its pieces.
"""

import json

SECTOR = 512

PRESETS = {
    "paper": {"base_us": 100.0, "fwd_us": 150.0, "back_us": 1200.0,
              "scale_sectors": 8192, "xfer_us_per_kb": 25.0},
    "fig56": {"base_us": 500.0, "fwd_us": 1000.0, "back_us": 7000.0,
              "scale_sectors": 8192, "xfer_us_per_kb": 25.0},
    "symmetric": {"base_us": 100.0, "fwd_us": 675.0, "back_us": 675.0,
                  "scale_sectors": 8192, "xfer_us_per_kb": 25.0},
    "fast": {"base_us": 1.0, "fwd_us": 1.0, "back_us": 2.0,
             "scale_sectors": 8192, "xfer_us_per_kb": 0.0},
}

PARAMS = ("base_us", "fwd_us", "back_us", "scale_sectors", "xfer_us_per_kb")

# Upper bound for every time parameter: one second per command is already
# far slower than any card; larger values are almost certainly a typo
# (e.g. nanoseconds given as microseconds).
MAX_US = 1000000.0


class ParamError(ValueError):
    """A preset or parameter is unknown or out of range."""


def _parse_number(key, text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ParamError("%s=%r: not a number" % (key, text)) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ParamError("%s=%r: not a finite number" % (key, text))
    return value


def make_params(preset="paper", **overrides):
    """Return a validated parameter dict: the preset plus overrides.

    Override values may be numbers or strings (as given on the nbdkit
    command line). Raises ParamError naming the problem.
    """
    if preset not in PRESETS:
        raise ParamError("preset=%r: unknown preset (choose one of %s)" %
                         (preset, ", ".join(sorted(PRESETS))))
    params = dict(PRESETS[preset])
    for key, text in overrides.items():
        if key not in PARAMS:
            raise ParamError("%s: unknown parameter (known: %s)" %
                             (key, ", ".join(PARAMS)))
        value = _parse_number(key, text)
        if key == "scale_sectors":
            if value != int(value) or value < 1:
                raise ParamError("scale_sectors=%r: must be a whole number "
                                 ">= 1" % (text,))
            if value > 1 << 40:
                raise ParamError("scale_sectors=%r: too large (max 2^40)" %
                                 (text,))
            value = int(value)
        else:
            if value < 0:
                raise ParamError("%s=%r: must not be negative" % (key, text))
            if value > MAX_US:
                raise ParamError("%s=%r: too large (max %d us)" %
                                 (key, text, MAX_US))
        params[key] = value
    return params


def access_cost_us(delta_bytes, params):
    """Cost of starting a command at signed distance delta_bytes from the
    end of the previous one, without the transfer (0 for a continuation)."""
    if delta_bytes == 0:
        return 0.0
    d = abs(delta_bytes) / SECTOR
    reach = d / (d + params["scale_sectors"])
    direction = params["fwd_us"] if delta_bytes > 0 else params["back_us"]
    return params["base_us"] + direction * reach


def transfer_cost_us(length, params):
    """Cost of moving length bytes."""
    return params["xfer_us_per_kb"] * length / 1024.0


def cost_us(prev_end, offset, length, params):
    """Service time in microseconds of a piece of length bytes at offset,
    the previous piece having ended at prev_end (None: nothing yet)."""
    if offset < 0 or length < 0:
        raise ValueError("negative offset or length")
    delta = 0 if prev_end is None else offset - prev_end
    return access_cost_us(delta, params) + transfer_cost_us(length, params)


SIGNS = ("forward", "backward", "continuation")
KINDS = ("read", "write")


def sign_of(delta):
    """'forward', 'backward' or 'continuation' for a signed delta."""
    return "forward" if delta > 0 else "backward" if delta < 0 else \
        "continuation"


class Card:
    """Sequencing state of the card: where the last piece ended, counters
    of what kind of pieces were seen, and the device-time totals of the
    model commands served (see "Device time" above)."""

    def __init__(self, params):
        self.params = params
        self.prev_end = None
        self.prev_write = None
        self.pieces = 0
        self.forward = 0
        self.backward = 0
        self.continued = 0
        self.cur = None           # (kind, sign) of the current command
        self.acc = {(k, g): [0, 0.0, 0] for k in KINDS for g in SIGNS}

    def charge(self, offset, length, write=False):
        """Account one piece and return its service time in microseconds."""
        cost = cost_us(self.prev_end, offset, length, self.params)
        if self.prev_end is None or offset == self.prev_end:
            self.continued += 1
        elif offset > self.prev_end:
            self.forward += 1
        else:
            self.backward += 1
        write = bool(write)
        delta = 0 if self.prev_end is None else offset - self.prev_end
        if delta != 0 or self.cur is None or write != self.prev_write:
            self.cur = ("write" if write else "read", sign_of(delta))
            self.acc[self.cur][0] += 1
        a = self.acc[self.cur]
        a[1] += cost
        a[2] += length
        self.pieces += 1
        self.prev_end = offset + length
        self.prev_write = write
        return cost

    def totals(self):
        """Device-time totals since start, a JSON-ready dict:
        commands, busy_us (sum of the modelled costs), bytes and pieces,
        and per kind (read, write) and sign (forward, backward,
        continuation) the commands, busy_us and bytes."""
        out = {"pieces": self.pieces, "commands": 0, "busy_us": 0.0,
               "bytes": 0}
        for k in KINDS:
            out[k] = {}
            for g in SIGNS:
                n, us, b = self.acc[(k, g)]
                out[k][g] = {"commands": n, "busy_us": round(us, 3),
                             "bytes": b}
                out["commands"] += n
                out["busy_us"] += us
                out["bytes"] += b
        out["busy_us"] = round(out["busy_us"], 3)
        return out


# The control window: the top CONTROL_BYTES of the card. Reading it returns
# the card's totals as JSON text (padded with spaces to the length read); it
# is not charged and does not move the card's position, so a guest can read
# the totals before and after a job without disturbing them. No job may
# touch it (the benchmark's host tests check the job files); writes to it
# fail.
CONTROL_BYTES = 64 << 10
CONTROL_MAGIC = "fwdsched-flashcard"


def control_start(size):
    """First byte of the control window of a card of size bytes."""
    return size - CONTROL_BYTES


def control_text(card, size, preset=None, reads=0):
    """The bytes of the control window: the totals as one JSON object,
    padded with spaces to CONTROL_BYTES and ending in a newline."""
    doc = {"magic": CONTROL_MAGIC, "format": 1, "size": size,
           "preset": preset, "params": card.params, "control_reads": reads,
           "totals": card.totals()}
    text = json.dumps(doc, sort_keys=True).encode()
    if len(text) >= CONTROL_BYTES:
        raise ValueError("control text too long (%d bytes)" % len(text))
    return text + b" " * (CONTROL_BYTES - 1 - len(text)) + b"\n"


def parse_control(data):
    """The totals document of control-window bytes (as control_text()
    wrote them); ValueError when they are not a flash card's."""
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    doc = json.loads(data.strip("\x00 \n"))
    if not isinstance(doc, dict) or doc.get("magic") != CONTROL_MAGIC:
        raise ValueError("not a flash card control window")
    return doc


def diff_totals(before, after):
    """after - before of two totals() dicts (the device time of a job)."""
    out = {}
    for k, v in after.items():
        if isinstance(v, dict):
            out[k] = diff_totals(before.get(k, {}), v)
        elif isinstance(v, (int, float)):
            d = v - before.get(k, 0)
            out[k] = round(d, 3) if isinstance(d, float) else d
    return out


def parse_size(text):
    """Parse a size like 4G, 512M, 1073741824. Must be a power of two of at
    least 1 MiB (QEMU's SD card requires a power-of-two size)."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = str(text).strip().upper()
    if t.endswith("B"):
        t = t[:-1]
    suffix = t[-1:] if t[-1:] in units and t[-1:] != "" else ""
    number = t[:-1] if suffix else t
    if not number.isdigit():
        raise ParamError("size=%r: not a size (use e.g. 4G, 512M)" % (text,))
    size = int(number) * units[suffix]
    check_size(size, "size=%r" % (text,))
    return size


def check_size(size, what):
    """Raise ParamError unless size suits QEMU's SD card."""
    if size < (1 << 20) or size & (size - 1):
        raise ParamError("%s: %d bytes is not a power of two >= 1 MiB "
                         "(QEMU's SD card needs a power-of-two size)" %
                         (what, size))
