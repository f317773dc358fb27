"""What clients did together: the aggregate of a step over the time in which every client
ran, and the device's own count of the same time (docs/clients.md). Pure.

The clients' whole-run figures, summed, overstate what they did together whenever they
did not run at the same moments: a client that started late, or finished early, ran part
of its time alone, with the storage to itself, and its figure counts those seconds too
(fio's own issue tracker shows an "aggregate" of 1.49 M IOPS against 162 k seen by iostat).
So the aggregate of a step is taken from the clients' per-second samples (their interval
logs, on each server's clock: fio/logs.py). Each sample covers the second before its
time. A client's first and last seconds are left out: the clients' starts and ends are
spread over tens to hundreds of milliseconds, so those seconds are partly spent before the
others started or after they ended, with the storage to fewer clients (three clients on a
device throttled to 2000 IOPS, which its counters showed steady at 1993 every second,
logged 2220 and 2185 in their summed first and last seconds, 1964 to 2032 in the others).
The **window** runs from the latest start of a client's second sample to the earliest end
of a client's second-to-last one. Each client's IOPS and bandwidth over the window are the
mean of its samples there, each weighted by how much of its second lies in the window (a
second it did not log is left out of its mean); the aggregate is their sum, which is the
clients' per-second sums averaged over the window. Those are the aggregate's ``iops`` and
``bw_bytes``; the whole-run sums stay beside them (``iops_whole_run``,
``bw_bytes_whole_run``). Latency is merged from the histogram bins as before: it is per IO,
not per second.

Runs too short to leave a whole second once those edges are out (a client with fewer
than three seconds, or a brief overlap) keep them: the window then runs from the latest
start of a client's first sample to the earliest end of a client's last one, and says so
(``edges``). When there is no window of a second or more even so (a client logged no
sample, or the clients never all ran at once for a second), the whole-run sums stay the
aggregate, and the step's summary says why (``apart``), with how long they all ran at once
(0 or less: how far apart they were; None when not known).

Where the clients' test files are on this host's block device, the device's counters,
read while the step runs (probe/diskwatch.py), are interpolated to the window's edges: the
IOs (merges counted back in) and bytes the device completed in that very time, beside what
the clients say they did (:func:`device_check`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iobench.analysis.clients import ClientShare
from iobench.analysis.findings import Finding
from iobench.model import DIRECTIONS
from iobench.records import ResultRecord
from iobench.units import format_iops, format_rate

INTERVAL_MS = 1000  # the samples' interval when they do not say
MIN_WINDOW_MS = 1000.0  # a shorter time together is no window: not a second to average over

# The device check: the aggregate may exceed what the device completed by this share
# before it is flagged. The device's counters are read five times a second and
# interpolated to the window's edges, and each client's edge seconds are taken as even
# (a client whose rate changed within its edge second, as another started, is a little
# off there); the rest of what separates the two only adds to the device's count
# (metadata and journal IO, large IOs split, other processes' IO), never to the clients'.
DEVICE_TOLERANCE = 0.10
# ... and when the window holds the clients' first and last seconds (runs too short to
# leave them out), which alone came out 10 % high on a throttled device's 1 s windows.
EDGES_TOLERANCE = 0.25
# How far outside the span this host watched the device the window may reach (clocks
# that disagree by more than that place it elsewhere).
WATCH_SLACK_MS = 1000.0

Counters = tuple[float, float, float, float, float]  # Unix ms; read IOs, bytes; write IOs, bytes
_COUNTED = ("read", "write")


def seconds_text(seconds: float) -> str:
    """``2`` for 2.0, ``1.7`` for 1.73: a window's length as every view says it."""
    return f"{round(seconds, 1):g}"


@dataclass(frozen=True)
class Window:
    """The time in which every client ran, and per direction the clients' IOPS and bytes/s
    over it, summed."""

    start_ms: float  # on the servers' clocks: the latest start of a second sample
    end_ms: float  # the earliest end of a second-to-last sample
    clients: int
    figures: Mapping[str, tuple[float, float]]  # direction -> (IOPS, bytes/s)
    edges: bool = False  # the clients' first and last seconds in it (runs too short)

    @property
    def seconds(self) -> float:
        return (self.end_ms - self.start_ms) / 1000

    def as_dict(self) -> dict[str, Any]:
        return {
            "start_ms": self.start_ms,
            "end_ms": self.end_ms,
            "seconds": self.seconds,
            "clients": self.clients,
            "edges": self.edges,
        }


@dataclass(frozen=True)
class Apart:
    """Why the clients have no common window; ``overlap_s``: how long they all ran at once
    (0 or less: how far apart the latest start and the earliest end were), None when that
    is not known (a client without samples)."""

    why: str
    overlap_s: float | None

    def as_dict(self) -> dict[str, Any]:
        return {"why": self.why, "overlap_s": self.overlap_s}


_Second = tuple[float, float, float, float]  # begin ms, end ms (a server's clock), IOPS, bytes/s


def _seconds(share: ClientShare, d: str) -> list[_Second]:
    """A client's logged seconds in direction ``d``, placed by its server's clock."""
    samples = share.samples or {}
    series = samples.get(d)
    if not series:
        return []
    start, interval = float(samples["start_ms"]), int(samples.get("interval_ms") or INTERVAL_MS)
    return [
        (start + t * 1000 - interval, start + t * 1000, float(iops), float(bw))
        for t, iops, bw in zip(series["t_s"], series["iops"], series["bw_bytes"], strict=True)
        if iops is not None and bw is not None
    ]


def _over(seconds: Sequence[_Second], lo: float, hi: float) -> tuple[float, float] | None:
    """IOPS and bytes/s of a client over [lo, hi]: its seconds' mean, each weighted by how
    much of it lies there; None when none does."""
    weighted = [(min(e, hi) - max(b, lo), iops, bw) for b, e, iops, bw in seconds]
    weighted = [x for x in weighted if x[0] > 0]
    total = sum(w for w, _, _ in weighted)
    if not total:
        return None
    return (
        sum(w * iops for w, iops, _ in weighted) / total,
        sum(w * bw for w, _, bw in weighted) / total,
    )


def _did(share: ClientShare, d: str) -> bool:
    """Whether a client's own figures say it did IO in direction ``d``."""
    section = share.metrics.get(d)
    return isinstance(section, Mapping) and float(section.get("iops") or 0) > 0


def common_window(shares: Sequence[ClientShare], directions: Sequence[str]) -> Window | Apart:
    """The window in which every client of ``shares`` ran, with the directions' figures
    over it, summed (see the module); Apart when there is none."""
    if not shares:
        return Apart("no client finished the step", None)
    missing = [s.client for s in shares if not s.samples or "start_ms" not in s.samples]
    logged: dict[str, dict[str, list[_Second]]] = {
        s.client: {d: _seconds(s, d) for d in DIRECTIONS} for s in shares if s.samples
    }
    missing += [c for c, per in logged.items() if not any(per.values()) and c not in missing]
    if missing:
        return Apart(f"client {missing[0]} logged no per-second sample", None)
    first = {c: min(x[0] for xs in per.values() for x in xs) for c, per in logged.items()}
    last = {c: max(x[1] for xs in per.values() for x in xs) for c, per in logged.items()}
    if min(last.values()) - max(first.values()) < MIN_WINDOW_MS:
        return _apart(first, last, max(first.values()), min(last.values()))
    # A client's first and last seconds are partly before the others started or after they
    # ended, when it had the storage to fewer clients: left out (see the module), unless
    # the runs are too short to leave a whole second without them.
    inner = {
        c: {d: [x for x in xs if x[0] > first[c] and x[1] < last[c]] for d, xs in per.items()}
        for c, per in logged.items()
    }
    spans = {c: _of(per) for c, per in inner.items()}
    edges = not all(spans.values())
    if not edges:
        lo = max(min(b for b, _ in sp) for sp in spans.values())
        hi = min(max(e for _, e in sp) for sp in spans.values())
        edges = hi - lo < MIN_WINDOW_MS
    if edges:
        inner, lo, hi = logged, max(first.values()), min(last.values())
    figures = {}
    for d in directions:
        over = {s.client: _over(inner[s.client][d], lo, hi) for s in shares if _did(s, d)}
        quiet = [c for c, x in over.items() if x is None]
        if quiet:
            n = (hi - lo) / 1000
            why = f"client {quiet[0]} logged no {d} sample in the {seconds_text(n)} s they all ran"
            return Apart(why, n)
        rates = [x for x in over.values() if x is not None]
        if rates:  # else no client did IO in that direction
            figures[d] = (sum(iops for iops, _ in rates), sum(bw for _, bw in rates))
    return Window(lo, hi, len(shares), figures, edges)


def _of(per: Mapping[str, list[_Second]]) -> list[tuple[float, float]]:
    """When each of a client's seconds began and ended, whatever the direction."""
    return [(x[0], x[1]) for xs in per.values() for x in xs]


def _apart(first: Mapping[str, float], last: Mapping[str, float], lo: float, hi: float) -> Apart:
    """The clients never all ran at once for a second: who started last, who ended first."""
    late = next(c for c, t in first.items() if t == lo)
    early = next(c for c, t in last.items() if t == hi)
    overlap = (hi - lo) / 1000
    if overlap > 0:
        when = f"{seconds_text(overlap)} s before"
    else:
        when = f"{seconds_text(-overlap)} s after" if overlap else "as"
    return Apart(
        f"client {late}'s first logged second began {when} client {early}'s last one ended "
        "(by their clocks)",
        overlap,
    )


def over_window(
    metrics: Mapping[str, Any], shares: Sequence[ClientShare]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The aggregate's metrics with each direction's IOPS and bandwidth over the common
    window (the whole-run sums kept as ``iops_whole_run``, ``bw_bytes_whole_run``), and
    what the step's summary says of it: ``aggregate_over`` ("window" or "whole_run"),
    ``window`` (start_ms, end_ms, seconds, clients) and, without one, ``apart``."""
    out = dict(metrics)
    directions = [d for d in DIRECTIONS if isinstance(metrics.get(d), Mapping)]
    found = common_window(shares, directions)
    for d in directions:
        section = dict(metrics[d])
        section["iops_whole_run"] = section.get("iops")
        section["bw_bytes_whole_run"] = section.get("bw_bytes")
        if isinstance(found, Window) and d in found.figures:  # else no client did it: 0
            section["iops"], section["bw_bytes"] = found.figures[d]
        out[d] = section
    if isinstance(found, Window):
        return out, {"aggregate_over": "window", "window": found.as_dict()}
    return out, {"aggregate_over": "whole_run", "window": None, "apart": found.as_dict()}


# -- the device's own count ----------------------------------------------------------------------


def _at(watched: Sequence[Counters], t_ms: float) -> list[float]:
    """The device's counters at ``t_ms``, interpolated between the readings around it
    (the first or last reading outside their span)."""
    if t_ms <= watched[0][0]:
        return list(watched[0][1:])
    for a, b in itertools.pairwise(watched):
        if a[0] <= t_ms <= b[0]:
            share = (t_ms - a[0]) / (b[0] - a[0]) if b[0] > a[0] else 1.0
            return [x + (y - x) * share for x, y in zip(a[1:], b[1:], strict=True)]
    return list(watched[-1][1:])


def device_check(
    devices: Sequence[str],
    summary: Mapping[str, Any],
    watched: Sequence[Counters],
    directions: Sequence[str],
) -> dict[str, Any]:
    """What ``devices`` (this host's, under the clients' test files) completed in the
    step's window, per direction: IOPS (merges counted back in) and bytes/s, from their
    counters read around the step (``watched``, this host's clock); ``why_not`` instead
    when there is no window, or it falls outside what was watched (clocks that disagree)."""
    out: dict[str, Any] = {"devices": list(devices)}
    window = summary.get("window")
    if not window:
        return {**out, "why_not": "the clients never all ran at once, so no window to compare"}
    start, end = float(window["start_ms"]), float(window["end_ms"])
    if len(watched) < 2:
        return {**out, "why_not": "the device's counters could not be read through the step"}
    if not watched[0][0] - WATCH_SLACK_MS <= start < end <= watched[-1][0] + WATCH_SLACK_MS:
        return {
            **out,
            "why_not": "the clients' window, on their clocks, falls outside the step as this "
            "host's clock saw it: their clocks disagree with this host's",
        }
    seconds = (end - start) / 1000
    a, b = _at(watched, start), _at(watched, end)
    out["seconds"] = seconds
    out["tolerance"] = EDGES_TOLERANCE if window.get("edges") else DEVICE_TOLERANCE
    for d in directions:
        if d not in _COUNTED:
            continue  # the counters read are of reads and writes
        i = 2 * _COUNTED.index(d)
        out[d] = {"iops": (b[i] - a[i]) / seconds, "bw_bytes": (b[i + 1] - a[i + 1]) / seconds}
    return out


def device_margin(metrics: Mapping[str, Any], check: Mapping[str, Any]) -> float | None:
    """How far the aggregate is above the device's count (below it: negative), at most over
    the directions and over IOPS and bandwidth: 0.04 for 4 % above; None when the check
    has no figure to compare."""
    ratios = [
        float(ours.get(key) or 0) / float(device[key])
        for d in DIRECTIONS
        if isinstance(device := check.get(d), Mapping)
        and isinstance(ours := metrics.get(d), Mapping)
        for key in ("iops", "bw_bytes")
        if device.get(key)
    ]
    return max(ratios) - 1 if ratios else None


def tolerance_of(check: Mapping[str, Any]) -> float:
    """How far above the device's count the aggregate may be in ``check``."""
    value = check.get("tolerance")
    return float(value) if isinstance(value, int | float) else DEVICE_TOLERANCE


def device_excess(metrics: Mapping[str, Any], check: Mapping[str, Any]) -> list[str]:
    """Per direction in which the aggregate's IOPS or bandwidth are above the device's
    count by more than the check's tolerance: ``read: 60.2k IOPS, 235 MiB/s against 31.0k
    IOPS, 121 MiB/s (+94%)`` (empty: none)."""
    allowed = 1 + tolerance_of(check)
    texts = []
    for d in DIRECTIONS:
        device, ours = check.get(d), metrics.get(d)
        if not isinstance(device, Mapping) or not isinstance(ours, Mapping):
            continue
        pairs = [(float(ours.get(k) or 0), float(device.get(k) or 0)) for k in ("iops", "bw_bytes")]
        if not any(claimed > seen * allowed for claimed, seen in pairs):
            continue
        above = max((c / s - 1 for c, s in pairs if s), default=None)
        texts.append(
            f"{d}: {format_iops(pairs[0][0])} IOPS, {format_rate(pairs[1][0])} against "
            f"{format_iops(pairs[0][1])} IOPS, {format_rate(pairs[1][1])} "
            + ("(the device: none)" if above is None else f"(+{above:.0%})")
        )
    return texts


# -- findings ----------------------------------------------------------------------------------


def together_findings(results: Sequence[ResultRecord]) -> list[Finding]:
    """From each step's summary: clients that never all ran at once
    (``clients-not-together``), an aggregate not taken over a window
    (``clients-window-unknown``), and one above the device's own count
    (``aggregate-exceeds-device``)."""
    found: list[Finding] = []
    for r in results:
        summary = (r.metrics or {}).get("clients") if r.client == "all" else None
        if not summary or "aggregate_over" not in summary:  # stored before the window
            continue
        where = f"{r.workload} on {r.clients} clients"
        found += _apart_findings(r, where, summary)
        for part in summary.get("parts") or []:
            found += _apart_findings(r, f"{where}, part {part.get('part')}", part)
        check = summary.get("device_check") or {}
        excess = device_excess(r.metrics or {}, check)
        if excess and summary.get("aggregate_over") == "window":
            found.append(_exceeds(r, where, check, excess))
    return found


def _apart_findings(r: ResultRecord, where: str, summary: Mapping[str, Any]) -> list[Finding]:
    apart = summary.get("apart")
    if summary.get("aggregate_over") != "whole_run" or not isinstance(apart, Mapping):
        return []
    overlap = apart.get("overlap_s")
    if overlap is None or overlap * 1000 >= MIN_WINDOW_MS:  # together, but no window
        return [
            Finding(
                "clients-window-unknown",
                "info",
                f"{where}: the aggregate is the sum of each client's whole-run figures, not "
                f"taken over the seconds in which they all ran: {apart.get('why')}",
                "run each workload for 2 s or more, so that every client logs per-second "
                "samples (5 s or more for a window without the clients' first and last "
                "seconds)",
                workload=r.workload,
                data={"overlap_s": overlap},
            )
        ]
    return [
        Finding(
            "clients-not-together",
            "warning",
            f"{where}: the clients never all ran at once for a second ({apart.get('why')}), "
            "so the aggregate is the sum of each client's whole-run figures, which counts the "
            "seconds each ran alone and overstates what they did together",
            "find why they ran apart (a slow or busy client or fio server, its clock); a "
            "longer --runtime lets them overlap",
            workload=r.workload,
            data={"overlap_s": overlap},
        )
    ]


def _exceeds(r: ResultRecord, where: str, check: Mapping[str, Any], excess: list[str]) -> Finding:
    devices = ", ".join(check.get("devices") or ()) or "device"
    return Finding(
        "aggregate-exceeds-device",
        "warning",
        f"{where}: the aggregate over the {seconds_text(float(check.get('seconds') or 0))} "
        "s the clients "
        f"ran together is more than {tolerance_of(check):.0%} above what this host's {devices} "
        f"completed in that time ({'; '.join(excess)}): part of what the clients count "
        "did not reach the device (reads served from the page cache, writes not yet written "
        "back), or the clients' clocks place the window elsewhere",
        "run with direct=1 (the built-in suites' default) and a test area larger than the "
        "clients' memory; check the clients' clocks (NTP)",
        workload=r.workload,
        data={"devices": devices, "seconds": check.get("seconds")},
    )
