"""The purge before a precondition (SNIA PTS): how a kind of target has its test area
made "as new" (``Kind.purge`` says which way, before anything runs), and doing it on the
descriptor the run holds (docs/precondition.md).

- ``discard``: a block device whose queue takes discards is told that the area holds
  nothing (the BLKDISCARD ioctl): an SSD's controller frees those blocks, a thin volume
  gives them back, a loop device punches holes in its backing file.
- ``punch-hole``: an existing file has holes punched over the area (fallocate
  PUNCH_HOLE | KEEP_SIZE, its size kept); its filesystem may pass the freed blocks to its
  device as discards.
- ``none``: nothing to purge (iobench's own test file is new), the target cannot
  (a device without discard), or the user said so (--no-purge).

A secure erase (``nvme format --ses``, ``hdparm --security-erase``, ``blkdiscard
--secure``) is the user's call: iobench never does one.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import struct
import time
from dataclasses import dataclass
from typing import Any

from iobench.errors import IobenchError

# linux/fs.h: _IO(0x12, 119); its argument is {start, length} in bytes, each a multiple
# of the device's logical block size.
BLKDISCARD = 0x1277
# linux/falloc.h
FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02
# A discard is issued in pieces of this size, so that Ctrl-C stops it between two.
DISCARD_CHUNK = 1 << 30
# Every logical block size divides this: a discard's length is cut down to a multiple.
DISCARD_ALIGN = 4096

SECURE_ERASE = (
    "a secure erase (nvme format --ses, hdparm --security-erase, blkdiscard --secure) is "
    "yours to do: iobench never does one"
)


@dataclass(frozen=True)
class Purge:
    """How the precondition purges a target: ``method`` (discard, punch-hole or none) and
    ``note``, what to say of it (why none)."""

    method: str
    note: str

    @property
    def does(self) -> bool:
        return self.method != "none"


@dataclass(frozen=True)
class Purged:
    """A purge done: how, over how many bytes, in how long, and what to say of it."""

    method: str
    bytes: int
    seconds: float
    note: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "note": self.note,
        }


NO_PURGE = Purge("none", "not purged (--no-purge)")


def purge(plan: Purge, fd: int, area: int) -> Purged:
    """Do ``plan`` over the first ``area`` bytes of the file or device open (for writing)
    as ``fd``. A target that turns out not to support it (EOPNOTSUPP) is not purged, and
    says so; any other failure raises IobenchError."""
    began = time.monotonic()
    done, note = 0, plan.note
    try:
        if plan.method == "discard":
            done = _discard(fd, area)
        elif plan.method == "punch-hole":
            _punch_hole(fd, area)
            done = area
    except OSError as e:
        if e.errno not in (errno.EOPNOTSUPP, errno.ENOTTY, errno.EINVAL):
            raise IobenchError(
                f"the purge ({plan.method}) failed: {e.strerror or e}",
                "pass --no-purge to fill without purging, or look at the kernel's log",
            ) from e
        return Purged("none", 0, time.monotonic() - began, f"no purge: {plan.method} was "
                      f"refused ({e.strerror or e})")  # fmt: skip
    return Purged(plan.method, done, time.monotonic() - began, note)


def _discard(fd: int, area: int) -> int:
    """BLKDISCARD over the area, a piece at a time; the bytes discarded."""
    length = area - area % DISCARD_ALIGN
    start = 0
    while start < length:
        n = min(DISCARD_CHUNK, length - start)
        fcntl.ioctl(fd, BLKDISCARD, struct.pack("QQ", start, n))
        start += n
    return length


def _punch_hole(fd: int, area: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fallocate = libc.fallocate
    fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
    fallocate.restype = ctypes.c_int
    if fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, area) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
