"""Several clients at once, judged honestly (docs/clients.md). Pure.

- The **aggregate** of a step: IOPS and bandwidth summed over the clients that finished
  (over the seconds in which all of them ran: analysis/together.py), latency merged
  exactly from their histogram bins (never averaged percentiles).
- **Start skew**: how far apart the clients started, from the first sample of each one's
  per-second log (Unix times on each server's clock: meaningful to the extent the clocks
  agree, as with NTP).
- **Stragglers**: a client whose throughput is far below the others' median, or that
  finished far later than the others.
- **Scaling**: aggregate and per-client throughput by number of clients, and the
  efficiency: aggregate / (k x what one client did alone).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iobench.analysis.findings import Finding
from iobench.model import DIRECTIONS
from iobench.records import ResultRecord

SLOW_FRACTION = 0.75  # a client below this share of the median throughput is a straggler
LATE_MS = 1000.0  # ... or one finishing this much after the median (or 10 % of the runtime)
LATE_SHARE = 0.10


@dataclass(frozen=True)
class ClientShare:
    """What one client did in one step."""

    client: str
    metrics: dict[str, Any]
    samples: dict[str, Any] | None

    @property
    def iops(self) -> float:
        return sum(float((self.metrics.get(d) or {}).get("iops") or 0) for d in DIRECTIONS)

    @property
    def runtime_ms(self) -> float:
        return max(
            (float((self.metrics.get(d) or {}).get("runtime_ms") or 0) for d in DIRECTIONS),
            default=0.0,
        )

    @property
    def start_ms(self) -> float | None:
        value = (self.samples or {}).get("start_ms")
        return float(value) if isinstance(value, int | float) else None


def late_after_ms(runtime_ms: float) -> float:
    """How far apart clients may start or finish before it matters for a step this long."""
    return max(LATE_MS, LATE_SHARE * runtime_ms)


def step_timing(shares: Sequence[ClientShare], failed: Sequence[str]) -> dict[str, Any]:
    """Start skew, finishing spread and stragglers of one step (stored with its aggregate)."""
    starts = {s.client: s.start_ms for s in shares if s.start_ms is not None}
    finish = {s.client: starts[s.client] + s.runtime_ms for s in shares if s.client in starts}
    out: dict[str, Any] = {
        "count": len(shares) + len(failed),
        "finished": [s.client for s in shares],
        "failed": list(failed),
        "start_skew_ms": (max(starts.values()) - min(starts.values())) if len(starts) > 1 else None,
        "finish_spread_ms": (max(finish.values()) - min(finish.values()))
        if len(finish) > 1
        else None,
        "stragglers": [],
    }
    if len(shares) < 2:
        return out
    median_iops = statistics.median(s.iops for s in shares)
    runtime = statistics.median(s.runtime_ms for s in shares)
    late_after = late_after_ms(runtime)
    median_finish = statistics.median(finish.values()) if finish else None
    for s in shares:
        why = []
        if median_iops and s.iops < SLOW_FRACTION * median_iops:
            why.append(f"{s.iops / median_iops:.0%} of the median throughput")
        if median_finish is not None and s.client in finish:
            late = finish[s.client] - median_finish
            if late > late_after:
                why.append(f"finished {late / 1000:.1f} s after the median")
        if why:
            out["stragglers"].append({"client": s.client, "why": "; ".join(why)})
    return out


def aggregate_samples(shares: Sequence[ClientShare]) -> dict[str, Any] | None:
    """Per-second IOPS and bandwidth summed over the clients at the same moment (their
    samples aligned on the servers' clocks); a second some client did not log has no sum.
    Latency is each second's IOPS-weighted mean."""
    timed = [(s, s.start_ms) for s in shares if s.samples and s.start_ms is not None]
    if not timed or len(timed) < len(shares):
        return None
    interval = int((timed[0][0].samples or {}).get("interval_ms") or 1000)
    start = min(t for _, t in timed if t is not None)
    out: dict[str, Any] = {"interval_ms": interval, "start_ms": start}
    for d in DIRECTIONS:
        per = [_slots((s.samples or {}).get(d), (t or 0.0) - start, interval) for s, t in timed]
        if not all(per):
            continue  # some client did not do this direction
        slots = sorted(set().union(*per))
        rows: list[list[_Second | None]] = [[p.get(slot) for p in per] for slot in slots]
        out[d] = {
            "t_s": [slot * interval / 1000 for slot in slots],
            "iops": [_total(row, 0) for row in rows],
            "bw_bytes": [_total(row, 1) for row in rows],
            "lat_mean_ns": [_latency(row) for row in rows],
        }
    return out if any(d in out for d in DIRECTIONS) else None


_Second = tuple[float | None, float | None, float | None]  # IOPS, bytes/s, mean latency ns


def _slots(series: Any, offset_ms: float, interval: int) -> dict[int, _Second]:
    if not series:
        return {}
    return {
        round((offset_ms + t * 1000) / interval): (i, b, lat)
        for t, i, b, lat in zip(
            series["t_s"], series["iops"], series["bw_bytes"], series["lat_mean_ns"], strict=True
        )
    }


def _total(row: Sequence[_Second | None], field: int) -> float | None:
    values = [None if v is None else v[field] for v in row]
    return None if any(v is None for v in values) else sum(v or 0.0 for v in values)


def _latency(row: Sequence[_Second | None]) -> float | None:
    pairs = [(v[2], v[0]) for v in row if v is not None]
    if len(pairs) < len(row) or any(x is None or w is None for x, w in pairs):
        return None
    total = sum(w or 0.0 for _, w in pairs)
    return sum((x or 0.0) * (w or 0.0) for x, w in pairs) / total if total else None


@dataclass(frozen=True)
class ScalePoint:
    clients: int
    iops: float  # aggregate
    per_client: float
    efficiency: float | None  # aggregate / (clients x the fewest clients' per-client IOPS)
    bw_bytes: float | None = None  # aggregate bandwidth
    per_client_bw: float | None = None


def scaling(by_clients: dict[int, tuple[float, float | None]]) -> list[ScalePoint]:
    """Aggregate (IOPS, bandwidth) by client count -> the scaling table (efficiency against
    the smallest count measured, usually 1)."""
    if not by_clients:
        return []
    base_k = min(by_clients)
    base = by_clients[base_k][0] / base_k if base_k else 0.0
    return [
        ScalePoint(k, v, v / k, (v / (k * base)) if base else None, bw,
                   None if bw is None else bw / k)
        for k, (v, bw) in sorted(by_clients.items())
    ]  # fmt: skip


def step_findings(results: Sequence[ResultRecord]) -> list[Finding]:
    """Warnings from the steps' summaries: stragglers, and clients that started far apart."""
    found: list[Finding] = []
    for r in results:
        summary = (r.metrics or {}).get("clients") if r.client == "all" else None
        if not summary:
            continue
        where = f"{r.workload} on {r.clients} clients"
        for s in summary.get("stragglers") or []:
            found.append(
                Finding(
                    "client-straggler",
                    "warning",
                    f"{where}: client {s['client']} lagged: {s['why']}",
                    "look at that client (its load, its network path, its mount options): the "
                    "aggregate includes it",
                    workload=r.workload,
                )
            )
        skew = summary.get("start_skew_ms")
        runtime = float(r.params.get("runtime_s") or 0) * 1000
        if isinstance(skew, int | float) and skew > late_after_ms(runtime):
            found.append(
                Finding(
                    "start-skew",
                    "warning",
                    f"{where}: the clients started {skew / 1000:.1f} s apart (by their own "
                    "clocks), so they all ran together for less than the whole runtime (the "
                    "aggregate is taken over the seconds they did)",
                    "check that the clients' clocks are synchronised (NTP); use a longer "
                    "--runtime so the skew matters less",
                    workload=r.workload,
                )
            )
    return found
