"""The summary Oracle Orion's ``-run simple`` prints, from an ``orion-simple`` run. Pure.

Orion measures small random reads (8 KiB) and large sequential reads (1 MiB) at increasing
numbers of outstanding IOs, and reports the best large-read bandwidth and the load where it
was reached, the best small-read IOPS and its load, the lowest small-read latency and its
load, and the small-read latency histogram at that load (SEEDS.md, article 003). Here the
load is the number of outstanding IOs (iodepth x numjobs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from iobench.analysis.curves import Point, points_from_results
from iobench.records import RunRecord
from iobench.units import format_iops, format_ns, format_rate

SMALL = ("randread", 8 << 10)
LARGE = ("read", 1 << 20)


@dataclass(frozen=True)
class OrionSummary:
    large: Point | None  # the large-read point with the most bandwidth
    small: Point | None  # the small-read point with the most IOPS
    fastest: Point | None  # the small-read point with the lowest mean latency
    # (low ns, high ns, IOs) in power-of-two microsecond buckets, at the fastest load
    histogram: tuple[tuple[float, float, int], ...]

    def lines(self) -> list[str]:
        out = []
        if self.large:
            out.append(
                f"Maximum Large MBPS = {format_rate(self.large.bw_bytes)} @ "
                f"{self.large.outstanding} outstanding 1 MiB sequential reads"
            )
        if self.small:
            out.append(
                f"Maximum Small IOPS = {format_iops(self.small.iops)} @ "
                f"{self.small.outstanding} outstanding 8 KiB random reads"
            )
        if self.fastest:
            out.append(
                f"Minimum Small Latency = {format_ns(self.fastest.lat_mean_ns)} @ "
                f"{self.fastest.outstanding} outstanding"
            )
        if not out:
            out.append("no 8 KiB random reads or 1 MiB sequential reads finished")
        return out


def _histogram(bins: dict[int, int]) -> tuple[tuple[float, float, int], ...]:
    buckets: dict[int, int] = {}
    for ns, count in bins.items():
        k = max(0, math.floor(math.log2(max(ns, 1) / 1000))) if ns >= 1000 else -1
        buckets[k] = buckets.get(k, 0) + count
    out = []
    for k in sorted(buckets):
        low = 0.0 if k < 0 else 1000.0 * 2**k
        high = 1000.0 if k < 0 else 1000.0 * 2 ** (k + 1)
        out.append((low, high, buckets[k]))
    return tuple(out)


def orion_summary(run: RunRecord) -> OrionSummary:
    points = points_from_results(run.results)
    small = [p for p in points if (p.rw, p.bs) == SMALL]
    large = [p for p in points if (p.rw, p.bs) == LARGE]
    timed = [p for p in small if p.lat_mean_ns is not None]
    fastest = min(timed, key=lambda p: p.lat_mean_ns or 0.0) if timed else None
    return OrionSummary(
        large=max(large, key=lambda p: p.bw_bytes) if large else None,
        small=max(small, key=lambda p: p.iops) if small else None,
        fastest=fastest,
        histogram=_histogram(fastest.bins) if fastest and fastest.bins else (),
    )


def orion_document(s: OrionSummary) -> dict[str, Any]:
    def at(p: Point | None, key: str) -> dict[str, Any] | None:
        if p is None:
            return None
        return {"value": getattr(p, key), "outstanding": p.outstanding, "workload": p.workload}

    return {
        "max_large_bw_bytes": at(s.large, "bw_bytes"),
        "max_small_iops": at(s.small, "iops"),
        "min_small_lat_ns": at(s.fastest, "lat_mean_ns"),
        "small_latency_histogram": [
            {"low_ns": low, "high_ns": high, "ios": n} for low, high, n in s.histogram
        ],
    }
