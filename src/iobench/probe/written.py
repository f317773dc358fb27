"""Is the test area written? Reading what was never written measures nothing.

A sparse file's holes, a thin-provisioned volume's unallocated blocks and a fresh cloud
volume return zeros without touching the disk, so reads of them are far faster than real
data would be. For a file the holes are found exactly (``SEEK_DATA``/``SEEK_HOLE``); for
a file or device, blocks spread evenly over the area are read and counted when they are
all zeros (a block never written, or zeroed). Reads only, a few hundred KiB at most.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

BLOCK = 4096
SAMPLES = 64


@dataclass(frozen=True)
class Unwritten:
    share: float  # of the area, 0..1
    how: str  # "holes" (a sparse file's) or "zeros" (sampled blocks that read as zeros)


def hole_bytes(fd: int, area: int) -> int | None:
    """Bytes of ``[0, area)`` in holes of the open file; None where the filesystem cannot say."""
    holes = 0
    pos = 0
    try:
        while pos < area:
            try:
                data = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError as e:
                if e.errno == errno.ENXIO:  # no data after pos
                    return holes + (area - pos)
                raise
            if data >= area:
                return holes + (area - pos)
            holes += data - pos
            pos = os.lseek(fd, data, os.SEEK_HOLE)
    except OSError:
        return None
    return holes


def zero_share(fd: int, area: int, samples: int = SAMPLES) -> float | None:
    """Share of ``samples`` blocks, evenly spread over ``[0, area)``, that read as zeros."""
    if area < BLOCK:
        return None
    step = max(BLOCK, (area // samples) // BLOCK * BLOCK)
    offsets = list(range(0, area - BLOCK + 1, step))[:samples]
    zero = bytes(BLOCK)
    try:
        hits = sum(1 for off in offsets if os.pread(fd, BLOCK, off) == zero)
    except OSError:
        return None
    return hits / len(offsets) if offsets else None


def unwritten(path: str, area: int, *, holes: bool) -> Unwritten | None:
    """How much of the first ``area`` bytes of a file or device was never written (or
    reads as zeros); None when it cannot be read. ``holes``: a file, whose holes are found
    exactly."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOATIME", 0))
    except OSError:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
    try:
        if holes:
            found = hole_bytes(fd, area)
            if found:
                return Unwritten(found / area, "holes")
        share = zero_share(fd, area)
        return None if share is None else Unwritten(share, "zeros")
    finally:
        os.close(fd)


# What a server says it holds of a thin volume: the extents it lists as written.
SERVER_HOLES = "extents the server reports never written: a thin volume"


def unwritten_of_extents(extents: object, area: int) -> Unwritten | None:
    """How much of ``[0, area)`` lies outside the written ``(offset, length)`` pairs in
    ``extents`` (a server's answer: ``rbd diff``, NBD block status); None when they are not
    such pairs."""
    if area <= 0 or not isinstance(extents, list):
        return None
    written = 0
    for extent in extents:
        if not (isinstance(extent, tuple) and len(extent) == 2):
            return None
        offset, length = extent
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in extent):
            return None
        written += max(0, min(offset + length, area) - max(offset, 0))
    return Unwritten(max(0.0, 1 - min(written, area) / area), SERVER_HOLES)
