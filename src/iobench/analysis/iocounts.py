"""Findings about fio's counts of IOs (docs/findings.md; iobench.iocount says which count
iobench shows). Pure.

- ``fio-counts-differ`` (info): fio's own ``iops`` (IOs *submitted* in its window) is more
  than 1 % away from the IOPS iobench shows (IOs *completed* in it), saying by how much and
  why: after a ramp, the IOs in flight when it ended count in fio's bandwidth and not in
  its ``iops``.
- ``bytes-per-io`` (warning): a direction moved more or fewer bytes per IO than its block
  size says (``bs``; the mean of a ``bssplit``, the bounds of a ``bsrange``), by fio's own
  count of IOs, beyond what the IOs in flight at the end of a ramp explain.
"""

from __future__ import annotations

import math
from typing import Any

from iobench.analysis.findings import Finding
from iobench.iocount import (
    BY_BYTES,
    BY_COMPLETIONS,
    BY_SUBMISSIONS,
    IoSize,
    allowed,
    in_flight,
    io_size,
    own_count,
    size_agrees,
)
from iobench.model import DIRECTIONS
from iobench.records import ResultRecord
from iobench.units import format_bytes, format_count, format_iops, format_rate, listed

COUNTS_DIFFER_SHARE = 0.01  # fio's iops this far from iobench's is said
SPLIT_SHARE = 0.02  # a bssplit's mean bytes per IO may stray this far, besides chance
SPLIT_SIGMAS = 4.0
_OWN = {
    BY_COMPLETIONS: "fio's count of completions (clat N)",
    BY_SUBMISSIONS: "fio's count of submissions (total_ios)",
}


def _sections(r: ResultRecord) -> list[tuple[str, dict[str, Any]]]:
    m = r.metrics or {}
    return [(d, m[d]) for d in DIRECTIONS if isinstance(m.get(d), dict) and m[d]]


# -- fio's two counts ---------------------------------------------------------------------------


def _in_flight(r: ResultRecord) -> tuple[int | None, str]:
    """The most IOs ``r`` can have in flight (its clients' together for their aggregate),
    and how that is reckoned."""
    bound = in_flight(r.params)
    if bound is None:
        return None, "iodepth x numjobs"
    how = f"iodepth {r.params['iodepth']} x {r.params['numjobs']} jobs"
    if r.client == "all" and r.clients:
        bound, how = bound * r.clients, f"{how} x {r.clients} clients"
    return bound, f"at most {how} = {bound:,}"


def _why_differ(r: ResultRecord, diff: float) -> str:
    """Why IOs completed in fio's window and IOs submitted in it differ by ``diff``."""
    bound, most = _in_flight(r)
    ramp = r.params.get("ramp_s")
    if diff < 0:
        return (
            f"{-diff:,.0f} IOs were submitted and not completed in the window: fio "
            "was stopped before they completed, or they failed (continue_on_error)"
        )
    if bound is not None and diff > bound:
        return (
            f"more than the IOs that can be in flight ({most}): fio reset its counters while "
            "more were outstanding than the workload says, so its parameters may not be "
            "the ones fio ran"
        )
    if isinstance(ramp, int | float) and ramp > 0:
        return (
            f"the IOs in flight when the {ramp:g} s ramp ended ({most}) were submitted "
            "before fio reset its counters and completed after, so its bandwidth counts "
            "them and its iops does not"
        )
    said = "with no ramp_time" if ramp is not None else "with a ramp_time the output does not state"
    return (
        f"fio reset its counters with IOs in flight ({most}), {said}: submitted before the "
        "reset and completed after, they are in its bandwidth and not in its iops"
        + (" (latency_target resets them too)" if ramp is not None else "")
    )


def _differ_text(r: ResultRecord, d: str, s: dict[str, Any]) -> str | None:
    # The clients' aggregate shows IOPS over the window in which they all ran; fio's counts
    # are of their whole runs, like the whole-run sum (analysis/together.py).
    shown = float(s.get("iops_whole_run", s.get("iops")) or 0)
    fio = float(s.get("iops_submitted") or 0)
    completed, submitted = float(s.get("ios_completed") or 0), int(s.get("total_ios") or 0)
    if s.get("ios_completed_from") not in (BY_BYTES, BY_COMPLETIONS) or not shown:
        return None  # no count but fio's submissions (or stored without one)
    if abs(shown - fio) <= COUNTS_DIFFER_SHARE * shown:
        return None
    return (
        f"{d}: {format_iops(shown)} IOPS are the {completed:,.0f} IOs completed in fio's "
        f"{int(s.get('runtime_ms') or 0) / 1000:.2f} s window (x {_per_io(s)} = "
        f"{format_rate(s.get('bw_bytes'))}, its bandwidth); fio's iops, {format_iops(fio)}, "
        f"counts the {submitted:,} submitted in it ({abs(1 - fio / shown):.1%} "
        f"{'fewer' if fio < shown else 'more'}): " + _why_differ(r, completed - submitted)
    )


def _per_io(s: dict[str, Any]) -> str:
    completed = float(s.get("ios_completed") or 0)
    return format_bytes(int(s.get("io_bytes") or 0) / completed) if completed else "-"


def counts_differ(r: ResultRecord) -> Finding | None:
    """``fio-counts-differ``: fio's iops beside iobench's, in each direction that differs."""
    parts = [t for d, s in _sections(r) if (t := _differ_text(r, d, s))]
    if not parts:
        return None
    return Finding(
        "fio-counts-differ",
        "info",
        f"{r.workload} on {r.target}: " + "; ".join(parts),
        "nothing to change in the run. To set it beside plain fio's output, compare fio's "
        "bandwidth (bw), which counts the same IOs as iobench's IOPS, not fio's iops (kept "
        "as iops_submitted in --json and exports)",
        workload=r.workload,
        target=r.target,
    )


# -- bytes per IO -------------------------------------------------------------------------------


def _off(s: dict[str, Any], size: IoSize, bound: int | None) -> bool:
    """Whether the bytes per IO by fio's own count are beyond what ``size`` allows."""
    own, _ = own_count(s)
    if own <= 0:
        return False
    if size.fixed is not None:
        return size_agrees(s, size.fixed, bound) is None
    per_io = int(s.get("io_bytes") or 0) / own
    slack = allowed(own, bound) / own  # the count may be off by the IOs in flight
    if size.mean is not None:
        chance = SPLIT_SIGMAS * size.stddev / math.sqrt(own)
        return abs(per_io - size.mean) > chance + size.mean * (SPLIT_SHARE + slack)
    return not size.low * (1 - slack) <= per_io <= size.high * (1 + slack)


def _expected(size: IoSize) -> str:
    if size.fixed is not None:
        return f"{format_bytes(size.fixed)} its block size says"
    if size.mean is not None:
        return f"{format_bytes(size.mean)} on average that its {size.what} says"
    return f"{format_bytes(size.low)} to {format_bytes(size.high)} that its {size.what} says"


def _size_text(r: ResultRecord, d: str, s: dict[str, Any]) -> str | None:
    size = io_size(r.params, d)
    bound, _ = _in_flight(r)
    if size is None or not _off(s, size, bound):
        return None
    own, which = own_count(s)
    io_bytes = int(s.get("io_bytes") or 0)
    return (
        f"{d} moved {format_bytes(io_bytes / own)} per IO ({format_bytes(io_bytes)} in "
        f"{format_count(own)} IOs by {_OWN[which]}), not the {_expected(size)}"
    )


def bytes_per_io(r: ResultRecord) -> Finding | None:
    """``bytes-per-io``: bytes per IO that are not the workload's block size."""
    parts = [t for d, s in _sections(r) if (t := _size_text(r, d, s))]
    if not parts:
        return None
    bound, _ = _in_flight(r)
    beyond = f"the {bound:,} IOs that can be in flight" if bound is not None else "1 % of the IOs"
    return Finding(
        "bytes-per-io",
        "warning",
        f"{r.workload} on {r.target}: {listed(parts)}; more than {beyond} explain. Its IOPS "
        "are fio's count of IOs, and IOPS x block size is not its bandwidth",
        "check the block sizes fio used (bs, bs per direction as in bs=4k,64k, bssplit, "
        "bsrange), short reads or writes (a file smaller than the test area), and that an "
        "imported output and the command line or job file beside it are of one run",
        workload=r.workload,
        target=r.target,
    )


def count_findings(r: ResultRecord) -> list[Finding]:
    """Both findings of one result (an import's; a run's come through
    iobench.analysis.measured)."""
    if r.status != "ok" or not r.metrics:
        return []
    return [f for f in (counts_differ(r), bytes_per_io(r)) if f is not None]
