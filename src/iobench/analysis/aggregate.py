"""Several fio job entries combined into one, as fio's ``group_reporting`` does. Pure.

fio's rules (FIO.md §1.7, stat.c ``sum_thread_stats``): IO bytes and IO counts (submitted
and completed) are summed; the runtime is the longest; bandwidth and IOPS are then the
summed bytes and IOs over that runtime; latency statistics merge exactly
(:func:`iobench.analysis.histogram.merge_latency`: histogram bins are summed and percentiles
recomputed, never averaged; without bins in every job there are no percentiles); CPU is
the average per job; the error is the first one.
"""

from __future__ import annotations

from collections.abc import Sequence

from iobench.analysis.histogram import merge_latency
from iobench.model import DIRECTIONS, DirectionResult, JobResult, LatencyStats


def _latency(stats: Sequence[LatencyStats | None]) -> LatencyStats | None:
    live = [s for s in stats if s is not None and s.n > 0]
    if not live:
        return None
    if len(live) < len(stats):
        # A job without this latency: the merge would describe only some of the IO.
        return None
    return merge_latency(live)


def merge_directions(
    parts: Sequence[DirectionResult | None], *, sum_rates: bool = False
) -> DirectionResult | None:
    """``sum_rates``: IOPS and bandwidth are the sums of the parts' (clients running at
    once, each over its own runtime); else fio's: summed IOs over the longest runtime."""
    live = [p for p in parts if p is not None]
    if not live:
        return None
    io_bytes = sum(p.io_bytes for p in live)
    total_ios = sum(p.total_ios for p in live)
    runtime_ms = max(p.runtime_ms for p in live)
    if sum_rates:
        iops, bw = sum(p.iops for p in live), sum(p.bw_bytes for p in live)
    else:
        iops = 1000 * total_ios / runtime_ms if runtime_ms else 0.0
        bw = 1000 * io_bytes / runtime_ms if runtime_ms else 0.0
    return DirectionResult(
        io_bytes=io_bytes,
        bw_bytes=bw,
        iops=iops,
        total_ios=total_ios,
        runtime_ms=runtime_ms,
        clat=_latency([p.clat for p in live]),
        lat=_latency([p.lat for p in live]),
        slat=_latency([p.slat for p in live]),
        completions=_sum([p.completions for p in live]),
        io_bytes_step=sum(p.io_bytes_step for p in live),
    )


def _sum(values: Sequence[int | None]) -> int | None:
    """The sum, or None when a part has no value (the sum would describe only some)."""
    return None if None in values else sum(v or 0 for v in values)


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known and len(known) == len(values) else None


def merge_jobs(jobs: Sequence[JobResult], *, sum_rates: bool = False) -> JobResult:
    """One entry for ``jobs`` (the first one's name, group and host); ``sum_rates`` as in
    :func:`merge_directions` (the aggregate of several clients)."""
    if not jobs:
        raise ValueError("merge_jobs needs at least one job")
    if len(jobs) == 1:
        return jobs[0]
    first = jobs[0]
    merged = {
        d: merge_directions([j.direction(d) for j in jobs], sum_rates=sum_rates) for d in DIRECTIONS
    }
    runtimes = [j.job_runtime_ms for j in jobs]
    return JobResult(
        jobname=first.jobname,
        groupid=first.groupid,
        error=next((j.error for j in jobs if j.error), 0),
        read=merged["read"],
        write=merged["write"],
        trim=merged["trim"],
        usr_cpu_pct=_mean([j.usr_cpu_pct for j in jobs]),
        sys_cpu_pct=_mean([j.sys_cpu_pct for j in jobs]),
        job_runtime_ms=None if None in runtimes else sum(r or 0 for r in runtimes),
        hostname=first.hostname,
        port=first.port,
    )
