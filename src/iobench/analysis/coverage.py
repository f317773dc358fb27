"""Which reading workloads of a suite read blocks that were never written. Pure.

On an existing file or a device whose test area was never written (iobench.probe.written),
a read of an unwritten block is answered without touching the disk. The workloads run in
the suite's order, each over its own area from the start of the target (``[0, size)``:
iobench allows no ``offset``), so what the earlier ones wrote is a prefix of the area:

- a sequential write (``write``, ``trimwrite``) writes all of its area: time-based, it
  goes round it until its runtime ends (one that ends first leaves the rest unwritten: the
  plan cannot know how fast the storage is, and assumes it got round);
- a random write writes as many blocks as it does IOs (fio's random map sends each IO to
  a block not yet written, until all are): all of its area when it is not time-based
  (``time_based = false``: it ends when the area is done) with the random map on
  (``norandommap`` off) and a uniform ``random_distribution``; a time-based one (the usual
  case: 4 KiB at 5,000 IOPS for 60 s writes 1.1 GiB, a quarter of a 4 GiB area) is
  counted as writing only part of it. Mixed workloads (``rw``, ``randrw``), and sequential
  ones with ``percentage_random``, write only part of it;
- a trim (``trim``, ``randtrim``) makes its area unwritten again (fio trims block devices
  only).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from iobench.model import Workload
from iobench.units import format_bytes

_FULL_SEQUENTIAL = ("write", "trimwrite")
_TRIMS = ("trim", "randtrim")
_READS = ("read", "randread", "rw", "readwrite", "randrw")
_WRITES = ("write", "randwrite", "rw", "readwrite", "randrw", "trimwrite")


@dataclass(frozen=True)
class UnwrittenRead:
    workload: str
    why: str  # "before any write", "after randwrite-4k (random writes ...)"


def _option(w: Workload, name: str) -> str | None:
    return next((v for k, v in w.options if k == name), None)


def reads(w: Workload) -> bool:
    return w.rw in _READS and w.rwmixread != 0


def writes(w: Workload) -> bool:
    return w.rw in _WRITES and not (w.rw in _READS and w.rwmixread == 100)


def writes_all(w: Workload) -> bool:
    """``w`` writes every block of its area (see the module's rules)."""
    if not writes(w) or w.rw in _READS:
        return False
    if w.rw in _FULL_SEQUENTIAL:
        return _option(w, "percentage_random") in (None, "0")
    time_based = _option(w, "time_based") != "0"
    uniform = _option(w, "random_distribution") in (None, "random")
    return not time_based and _option(w, "norandommap") in (None, "0") and uniform


def _partly(w: Workload) -> str:
    if w.rw in _TRIMS:
        return f"{w.name}, which discards blocks of the area"
    if w.rw in _READS:
        return f"{w.name}, which writes only part of the area ({w.rw})"
    if w.rw in _FULL_SEQUENTIAL:
        return f"{w.name}, which writes only part of the area (percentage_random)"
    return f"{w.name}, whose random writes leave part of the area unwritten"


def unwritten_reads(
    workloads: Sequence[Workload], area: int, *, written: bool
) -> list[UnwrittenRead]:
    """The reading workloads (a group: when a part of it reads), in order, that read blocks
    of their area that no earlier workload wrote (``written``: the area was written before
    the first one, as a laid-out or prefilled test file is; then only trims unwrite it).
    ``area``: the test area on the target, at most each workload's size."""
    covered = area if written else 0  # bytes from the start known to be written
    last: Workload | None = None  # the latest workload (or part) that wrote or trimmed
    found = []
    for w in workloads:
        # A group's parts run together: each reads what was written before the group (its
        # own writers write while it reads), and the group is named once.
        jobs = [dataclasses.replace(j, name=f"{w.name}/{j.name}") for j in w.parts] or [w]
        reading = next((j for j in jobs if reads(j) and covered < min(j.size, area)), None)
        if reading is not None:
            if last is None:
                why = "before any write"
            elif last.rw in _TRIMS or not writes_all(last):
                why = f"after {_partly(last)}"
            else:
                why = f"after {last.name}, which writes only the first {format_bytes(covered)}"
            if reading is not w:
                why += f" ({reading.name} reads while the others of {w.name} write)"
            found.append(UnwrittenRead(w.name, why))
        for job in jobs:
            size = min(job.size, area)
            if job.rw in _TRIMS:
                covered, last = 0, job
            elif writes_all(job):
                covered, last = max(covered, size), job
            elif writes(job):
                last = job
    return found
