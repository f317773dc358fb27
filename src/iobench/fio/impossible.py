"""Figures of an imported fio result that no run could have produced. Pure.

fio's own accounting has had bugs (fio 2.1.11 with ``disable_clat`` printed ``lat (msec):
avg=756537530.85`` for a 30 s job), and a file from elsewhere may have been edited. An
import must not store such a figure as a measurement without a word. What "impossible"
means, figure by figure:

- **A latency** (min, mean, max or a percentile of slat, clat or lat) longer than the job
  ran: an IO counted in a job's statistics was issued and completed while the job ran, so
  none takes longer than the job's runtime and ramp (twice that and 5 s more is allowed,
  for IOs still in flight when the ramp ended). The whole latency object is left out:
  its figures come from one accounting.
- **A latency object out of order**: a mean below its minimum or above its maximum, a
  minimum above the maximum, percentiles that fall as the percentile rises, or one more
  than twice the maximum (fio's percentile is a histogram bucket's value: fio 3.26 was
  seen printing a p99.9 5 % above the maximum; printed text rounds up to its unit). Left
  out as well.
- **Latency and IOPS that need more IOs in flight than the job could keep** (Little's
  law: IOs in flight on average = IOPS x mean latency; a job keeps at most iodepth x
  numjobs): which of the two figures is wrong cannot be told, so both are kept, flagged.
  Only where the entry is shown to be that one job section: with group_reporting fio
  reports a group of several sections under the first one's name and options (a real
  output: 6 sections of iodepth 16 as one entry of ``numjobs=1``), which its
  ``job_runtime``, the sum of its jobs' runtimes, gives away. Text and fio 2.x outputs
  have no ``job_runtime``: not checked there.

IOPS against bandwidth and block size is checked where fio's two counts are read
(issue 23, point 4), not here.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

from iobench.model import DIRECTIONS, DirectionResult, JobResult, LatencyStats
from iobench.units import format_duration, format_ns

SLACK_MS = 5000.0  # on top of twice the job's time, for IOs in flight across the ramp's end
ROUNDING_NS = 1e6  # text prints latencies rounded to their unit (at worst 1 ms)
PERCENTILE_OVER_MAX = 2.0  # a percentile this many times the maximum is not a bucket's error
IN_FLIGHT_FACTOR = 2.0  # Little's law within this factor (ramps, short runs, rounding)


@dataclass(frozen=True)
class Impossible:
    """One figure (or object of figures) no run could produce: which, and why."""

    direction: str
    figure: str  # "lat", "clat", "slat" or "lat and IOPS"
    why: str
    left_out: bool  # the latency object is left out of what is stored


def checked(
    job: JobResult,
    *,
    ramp_s: float | None = None,
    iodepth: int | None = None,
    numjobs: int | None = None,
) -> tuple[JobResult, list[Impossible]]:
    """``job`` without the latency objects no run could produce, and what was found.
    ``ramp_s``, ``iodepth``, ``numjobs``: the job's, when known."""
    runs = [d.runtime_ms for d in (job.direction(x) for x in DIRECTIONS) if d is not None]
    runtime_ms = max(runs, default=0) or job.job_runtime_ms or 0
    in_flight = _most_in_flight(job, runs, iodepth, numjobs)
    bound_ns = None
    if runtime_ms > 0:
        bound_ns = (2 * (runtime_ms + 1000 * (ramp_s or 0.0)) + SLACK_MS) * 1e6
    found: list[Impossible] = []
    replaced: dict[str, DirectionResult] = {}
    for name in DIRECTIONS:
        d = job.direction(name)
        if d is None:
            continue
        sound = {}
        for kind in ("slat", "clat", "lat"):
            stats = getattr(d, kind)
            why = None if stats is None else _latency_problem(stats, bound_ns, runtime_ms)
            if why is not None:
                found.append(Impossible(name, kind, why, left_out=True))
            sound[kind] = None if why is not None else stats
        d = dataclasses.replace(d, slat=sound["slat"], clat=sound["clat"], lat=sound["lat"])
        replaced[name] = d
        why = _in_flight_problem(d, in_flight)
        if why is not None:
            found.append(Impossible(name, "lat and IOPS", why, left_out=False))
    if not any(f.left_out for f in found):
        return job, found
    return (
        dataclasses.replace(
            job,
            read=replaced.get("read"),
            write=replaced.get("write"),
            trim=replaced.get("trim"),
        ),
        found,
    )


def _most_in_flight(
    job: JobResult, runs: list[int], iodepth: int | None, numjobs: int | None
) -> int | None:
    """iodepth x numjobs, when the entry is that one job section: its job_runtime, the sum
    of the runtimes of the jobs reported as the entry, is not that of more jobs."""
    if not (iodepth and numjobs and job.job_runtime_ms and runs and max(runs) > 0):
        return None
    return iodepth * numjobs if job.job_runtime_ms / max(runs) <= numjobs + 0.5 else None


def _latency_problem(stats: LatencyStats, bound_ns: float | None, runtime_ms: int) -> str | None:
    figures = [
        ("min", stats.min_ns),
        ("mean", stats.mean_ns),
        ("max", stats.max_ns),
        *((f"p{p:g}", v) for p, v in stats.percentiles),
    ]
    if bound_ns is not None:
        for what, value in figures:
            if value > bound_ns:
                return (
                    f"its {what} of {format_ns(value)} is longer than the job "
                    f"ran ({format_duration(runtime_ms / 1000)}): no IO the job counted can "
                    "take longer than the job"
                )
    return _order_problem(stats)


def _order_problem(stats: LatencyStats) -> str | None:
    # text prints min and max as whole units of the line (msec when they reach 1 ms)
    tolerance = 0.01 * stats.max_ns + (ROUNDING_NS if stats.max_ns >= ROUNDING_NS else 1000.0)
    if stats.min_ns > stats.max_ns + tolerance:
        return "its minimum is above its maximum"
    if not stats.min_ns - tolerance <= stats.mean_ns <= stats.max_ns + tolerance:
        return (
            f"its mean ({format_ns(stats.mean_ns)}) is outside its minimum and "
            f"maximum ({format_ns(stats.min_ns)} to "
            f"{format_ns(stats.max_ns)})"
        )
    values = [v for _, v in stats.percentiles]
    if any(b < a for a, b in itertools.pairwise(values)):
        return "its percentiles fall as the percentile rises"
    if (
        stats.max_ns > 0
        and values
        and max(values) > stats.max_ns * PERCENTILE_OVER_MAX + ROUNDING_NS
    ):
        return (
            f"a percentile ({format_ns(max(values))}) is more than twice its maximum "
            f"({format_ns(stats.max_ns)})"
        )
    return None


def _in_flight_problem(d: DirectionResult, in_flight: int | None) -> str | None:
    stats = d.lat or d.clat
    if in_flight is None or in_flight < 1 or stats is None or d.iops <= 0:
        return None
    average = d.iops * stats.mean_ns / 1e9
    if average <= IN_FLIGHT_FACTOR * in_flight + 1:
        return None
    return (
        f"{d.iops:.6g} IOPS at a mean latency of {format_ns(stats.mean_ns)} "
        f"mean {average:.3g} IOs in flight on average (IOPS x latency), but the job kept at "
        f"most {in_flight} (iodepth x numjobs): one of the two figures is wrong"
    )
