"""How many IOs a workload completed in fio's measured window, and which of fio's counts
says so: the IOPS iobench shows (docs/json-schema.md, "IOPS and bandwidth"). Pure.

fio 3.33 counts each direction's IOs more than once (its source: ``io_u.c``
``io_completed``, ``ioengines.c`` ``td_io_queue``, ``libfio.c`` ``reset_all_stats``):

- ``io_bytes`` (and ``bw_bytes`` = ``io_bytes`` / runtime): the bytes of the IOs that
  **completed** after fio reset its statistics at the end of ``ramp_time``;
- ``clat_ns.N`` (and ``lat_ns.N``): the completions it sampled after the reset, less the
  few it reaped in the same call as the reset;
- ``total_ios`` (and ``iops`` = ``total_ios`` / runtime): the IOs **submitted** after it.

Every IO submitted in the window completes in it (fio waits for the last ones before its
clock stops), but the IOs in flight when the ramp ended were submitted before the reset and
complete after it: the bytes count them and ``total_ios`` does not, so fio's ``iops`` is
low by up to ``iodepth`` IOs per job. On a volume throttled to 100 MB/s, 256 KiB reads at
QD64 x 2 jobs after a 1 s ramp: 1,149 IOs submitted, 1,275 completed (126 more), fio's
``iops`` 348 (87 MiB/s of 256 KiB IOs) beside its 96.5 MiB/s. Without a ramp the counts
are equal.

iobench's IOPS are completions in the window over fio's runtime, like the bandwidth, so
IOPS x bytes per IO = bandwidth. :func:`counted` picks the count:

1. ``io_bytes / bs`` when every IO of the direction has one size (``bs``, no ``bssplit``
   or ``bsrange``) and that count agrees with fio's own (its completions, else its
   submissions) within the IOs that can be in flight (``iodepth`` x ``numjobs``);
2. else fio's completions (``clat_ns.N``), which fio's JSON gives;
3. else ``total_ios`` (fio's normal and terse output print no count of completions).

fio's own figures stay beside them: ``total_ios``, ``iops_submitted`` (fio's ``iops``)
and ``completions``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from iobench.fio.options import fio_size

METRICS_VERSION = 2  # 2: iops are completions (this module); 1: fio's iops (submissions)

# How the shown count of IOs was made (``ios_completed_from``).
BY_BYTES = "io_bytes/bs"
BY_COMPLETIONS = "completions"
BY_SUBMISSIONS = "total_ios"

# Without iodepth or numjobs (an import that does not say them), counts this close agree.
UNKNOWN_DEPTH_SHARE = 0.01
_DIRECTION_INDEX = {"read": 0, "write": 1, "trim": 2}


@dataclass(frozen=True)
class IoSize:
    """What one direction's IOs should move, from the workload's parameters: one size
    (``fixed``), or sizes that vary from IO to IO (bssplit, bsrange) with their mean when it
    is known and their bounds."""

    what: str  # how the workload says it: "bs 4096", "bssplit 4096/50:65536/50", ...
    low: int
    high: int
    mean: float | None = None
    stddev: float = 0.0  # of one IO's size, for bssplit (how far a sample's mean strays)

    @property
    def fixed(self) -> int | None:
        return self.low if self.low == self.high else None


def _for_direction(value: str, direction: str) -> str | None:
    """One direction's part of fio's ``read,write,trim`` list: a part given for it, else
    the last one given (a list not ended by a comma applies to the directions after it)."""
    parts = value.split(",")
    i = _DIRECTION_INDEX[direction]
    if i < len(parts):
        return parts[i].strip() or None
    return None if value.rstrip().endswith(",") else parts[-1].strip() or None


def _bssplit(value: str, direction: str) -> IoSize | None:
    """``4096/10:65536/90`` (blank percentages share what is left evenly, as in fio)."""
    part = _for_direction(value, direction)
    if part is None:
        return None
    entries = []
    for entry in part.split(":"):
        size_text, _, pct = entry.partition("/")
        size = fio_size(size_text)
        if size is None or size < 1 or (pct.strip() and not pct.strip().isdigit()):
            return None  # no size fio reads (a size of 0 moves nothing: not fio's)
        entries.append((size, int(pct) if pct.strip() else None))
    given = sum(p for _, p in entries if p is not None)
    blanks = sum(1 for _, p in entries if p is None)
    if given > 100 or (blanks == 0 and given != 100):
        return IoSize(f"bssplit {part}", min(s for s, _ in entries), max(s for s, _ in entries))
    shares = [(s, (p if p is not None else (100 - given) / blanks) / 100) for s, p in entries]
    mean = sum(s * w for s, w in shares)
    var = sum(w * (s - mean) ** 2 for s, w in shares)
    low, high = min(s for s, _ in entries), max(s for s, _ in entries)
    return IoSize(f"bssplit {part}", low, high, mean, math.sqrt(var))


def _bsrange(value: str, direction: str) -> IoSize | None:
    """``4k-64k``: every IO a multiple of the smaller size (any size with bs_unaligned)."""
    part = _for_direction(value, direction)
    if part is None:
        return None
    low_text, _, high_text = part.partition("-")
    low, high = fio_size(low_text), fio_size(high_text or low_text)
    if low is None or high is None or low <= 0:
        return None
    low, high = min(low, high), max(low, high)
    return IoSize(f"bsrange {part}", low, high)


def io_size(params: Mapping[str, Any] | None, direction: str) -> IoSize | None:
    """The size of ``direction``'s IOs as the workload's parameters give it; None when
    they do not say (an import whose block sizes differ by direction, say)."""
    params = params or {}
    options = params.get("options") or {}
    options = options if isinstance(options, Mapping) else {}
    split = options.get("bssplit")
    if isinstance(split, str):
        found = _bssplit(split, direction)
        if found is not None:
            return found
    ranged = options.get("bsrange", options.get("blocksize_range"))
    if isinstance(ranged, str):
        found = _bsrange(ranged, direction)
        if found is not None and found.fixed is None:
            return found
    per = options.get("bs")  # one a direction, as fio's bs=READ,WRITE[,TRIM]
    if isinstance(per, str) and "," in per:
        sizes = per.split(",")
        index = {"read": 0, "write": 1, "trim": 2}.get(direction, 0)
        text = sizes[min(index, len(sizes) - 1)]
        if text.isdigit() and int(text) > 0:
            size = int(text)
            return IoSize(f"bs {size} ({direction})", size, size, float(size))
        return None
    bs = params.get("bs")
    if isinstance(bs, int) and not isinstance(bs, bool) and bs > 0:
        return IoSize(f"bs {bs}", bs, bs, float(bs))
    return None


def in_flight(params: Mapping[str, Any] | None) -> int | None:
    """The most IOs in flight at once: iodepth x numjobs; None when either is unknown."""
    params = params or {}
    depth, jobs = params.get("iodepth"), params.get("numjobs")
    if not isinstance(depth, int) or not isinstance(jobs, int) or depth < 1 or jobs < 1:
        return None
    return depth * jobs


def own_count(section: Mapping[str, Any]) -> tuple[float, str]:
    """fio's own count to check io_bytes / bs against: its completions, else submissions."""
    completions = section.get("completions")
    if isinstance(completions, int) and completions > 0:
        return float(completions), BY_COMPLETIONS
    return float(section.get("total_ios") or 0), BY_SUBMISSIONS


def allowed(own: float, bound: int | None) -> float:
    """How far io_bytes / bs may be from fio's own count and still be one count with it:
    the IOs that can be in flight at the end of a ramp (``bound``), else 1 %."""
    return bound if bound is not None else UNKNOWN_DEPTH_SHARE * own


def size_agrees(
    section: Mapping[str, Any], size: int, bound: int | None
) -> Literal["rounded", "agrees"] | None:
    """Whether ``section``'s bytes are IOs of ``size`` by fio's own counts: "rounded" when
    io_bytes / size is fio's total_ios within how finely fio printed io_bytes, "agrees"
    when it is fio's own count within :func:`allowed`; None when it is neither."""
    step = int(section.get("io_bytes_step") or 1)
    step_ios, by_bytes = step / size, int(section.get("io_bytes") or 0) / size
    if step > 1 and abs(by_bytes - int(section.get("total_ios") or 0)) <= step_ios:
        return "rounded"
    own, _ = own_count(section)
    return "agrees" if abs(by_bytes - own) <= allowed(own, bound) + step_ios + 1 else None


def _rate(count: float, runtime_ms: int) -> float:
    return 1000.0 * count / runtime_ms if runtime_ms > 0 else 0.0


def counted(
    section: Mapping[str, Any], params: Mapping[str, Any] | None, direction: str, step: int = 1
) -> dict[str, Any]:
    """``section`` (one direction's stored metrics, with fio's ``iops``) with the count of
    completed IOs iobench shows and its IOPS (module docstring); fio's ``iops`` is kept as
    ``iops_submitted``. ``step``: how finely fio gave io_bytes (1 in JSON)."""
    out = dict(section, io_bytes_step=step)
    fio_iops = float(section.get("iops_submitted", section.get("iops")) or 0.0)
    count, source, iops = float(section.get("total_ios") or 0), BY_SUBMISSIONS, fio_iops
    size = io_size(params, direction)
    fixed = size.fixed if size is not None else None
    agreement = size_agrees(out, fixed, in_flight(params)) if fixed is not None else None
    completions = section.get("completions")
    if fixed is not None and agreement == "agrees":
        count, source = int(section.get("io_bytes") or 0) / fixed, BY_BYTES
    elif agreement is None and isinstance(completions, int):
        count, source = float(completions), BY_COMPLETIONS
    if source != BY_SUBMISSIONS:  # fio's formula, 1000 * IOs / runtime, with that count
        iops = _rate(count, int(section.get("runtime_ms") or 0))
    out.update(
        iops=iops,
        iops_submitted=fio_iops,
        ios_completed=round(count, 3),
        ios_completed_from=source,
    )
    return out


def upgraded(metrics: dict[str, Any] | None, params: Mapping[str, Any]) -> dict[str, Any] | None:
    """Stored metrics as this iobench writes them: a result stored with fio's ``iops``
    (metrics version 1) gets the count of :func:`counted`, from the figures it kept (its
    latency's N taken as fio's completions where it differs from ``total_ios``; an N equal
    to it may have been made from it, and says nothing more)."""
    if not metrics or (metrics.get("metrics_version") or 1) >= METRICS_VERSION:
        return metrics
    out = dict(metrics, metrics_version=METRICS_VERSION)
    for direction in _DIRECTION_INDEX:
        section = metrics.get(direction)
        if not isinstance(section, dict):
            continue
        n = (section.get("clat_ns") or section.get("lat_ns") or {}).get("n")
        own = n if isinstance(n, int) and n != section.get("total_ios") else None
        out[direction] = counted({**section, "completions": own}, params, direction)
    return out
