"""Parsed fio results as the plain, JSON-ready dictionaries iobench stores and prints.

Units are in the keys: ``bw_bytes`` (bytes/s), ``io_bytes``, ``*_ns``, ``runtime_ms``.
Percentiles are named ``p1`` ... ``p99.99``; a value fio did not produce is null, never 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from iobench.analysis.histogram import percentiles_from_bins
from iobench.iocount import METRICS_VERSION, counted
from iobench.model import (
    DIRECTIONS,
    PERCENTILES,
    DirectionResult,
    DiskUtil,
    FioOutput,
    JobResult,
    LatencyStats,
    percentile_key,
)


def latency_dict(stats: LatencyStats | None, *, with_bins: bool = True) -> dict[str, Any] | None:
    if stats is None or stats.n == 0:
        return None
    if stats.bins:
        computed = dict(percentiles_from_bins(stats.bins, PERCENTILES, n=stats.n))
    else:
        computed = dict(stats.percentiles)
    out: dict[str, Any] = {
        "n": stats.n,
        "mean": stats.mean_ns,
        "min": round(stats.min_ns),
        "max": round(stats.max_ns),
        "stddev": stats.stddev_ns,
    }
    for p in PERCENTILES:
        value = computed.get(p, stats.percentile(p))
        # fio's percentiles are bucket values: whole nanoseconds (fio 2.x µs * 1000 too).
        out[percentile_key(p)] = None if value is None else round(value)
    if with_bins and stats.bins:
        out["bins"] = {str(k): v for k, v in sorted(stats.bins.items())}
    return out


def direction_dict(
    d: DirectionResult | None, params: Mapping[str, Any] | None, direction: str
) -> dict[str, Any] | None:
    """One direction as stored: fio's figures, and the IOPS iobench shows with the count
    they come from (iobench.iocount: IOs completed in the window, like the bandwidth)."""
    if d is None:
        return None
    fio = {
        "iops": d.iops,
        "bw_bytes": d.bw_bytes,
        "io_bytes": d.io_bytes,
        "total_ios": d.total_ios,
        "completions": d.completions,
        "runtime_ms": d.runtime_ms,
    }
    return {
        **counted(fio, params, direction, d.io_bytes_step),
        # Total latency (submission to completion) is what an application waits for.
        "lat_ns": latency_dict(d.lat),
        "clat_ns": latency_dict(d.clat),
        "slat_ns": latency_dict(d.slat, with_bins=False),
    }


def workload_metrics(output: FioOutput, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The metrics of one workload's fio output (one group-reported job)."""
    jobs = [j for j in output.jobs if j.jobname != "All clients"]
    if not jobs:
        raise ValueError("fio output holds no job")
    return job_metrics(jobs[0], output.disk_util, params)


def job_metrics(
    job: JobResult, disk_util: Sequence[DiskUtil], params: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The metrics of one entry of fio's ``jobs`` (or ``client_stats``) array.

    ``disk_util`` is fio's device view for the whole report (pass ``()`` when it does not
    belong to this job alone); ``params`` the workload's parameters as stored (its block
    size, iodepth and numjobs say how to count its IOs; None: not known).
    """
    out: dict[str, Any] = {"metrics_version": METRICS_VERSION}
    for d in DIRECTIONS:
        out[d] = direction_dict(job.direction(d), params, d)
    out["cpu"] = {"usr_pct": job.usr_cpu_pct, "sys_pct": job.sys_cpu_pct}
    out["error"] = job.error
    if job.steadystate is not None:
        ss = job.steadystate
        out["steadystate"] = {
            "criterion": ss.criterion,
            "attained": ss.attained,
            "duration_s": ss.duration_s,
            "iops": list(ss.iops),
            "bw_bytes": list(ss.bw_bytes),
        }
    out["disk_util"] = [
        {
            "name": u.name,
            "read_ios": u.read_ios,
            "write_ios": u.write_ios,
            "read_merges": u.read_merges,
            "write_merges": u.write_merges,
            "in_queue_ms": u.in_queue_ms,
            "util_pct": u.util_pct,
        }
        for u in disk_util
    ]
    return out


def without_bins(metrics: dict[str, Any]) -> dict[str, Any]:
    """A copy of stored metrics for display: histogram bins are left out."""
    out = dict(metrics)
    for d in DIRECTIONS:
        section = out.get(d)
        if section:
            section = dict(section)
            for key in ("lat_ns", "clat_ns", "slat_ns"):
                if section.get(key):
                    section[key] = {k: v for k, v in section[key].items() if k != "bins"}
            out[d] = section
    return out
