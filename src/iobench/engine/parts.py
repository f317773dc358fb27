"""A group's result (``model.Workload.parts``): each part's figures and the group's. Pure.

fio reports each part of a group as a reporting group of its own (iobench's job file gives
each part ``new_group``, fio/jobfile.py), in the parts' order, its numjobs summed by
``group_reporting``. The group's figures are those fio's ``group_reporting`` would give for
all of them (FIO.md §1.7, :func:`iobench.analysis.aggregate.merge_jobs`): IO bytes and
counts summed, the longest runtime, latency merged from the histogram bins (never averaged
percentiles). Its IOPS count the IOs the parts completed (iobench.iocount, part by part:
each part knows its block size) over that runtime; with ``sum_rates`` (the clients'
aggregate of a step, each client over its own runtime) they are the sum of the parts'.

A part's per-second samples are those of its jobs' interval logs (fio numbers the jobs of
a file in order, a section's numjobs one after another); the group's, the parts' summed
second by second in each direction (:func:`together`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from iobench.analysis.aggregate import merge_jobs
from iobench.fio.jobfile import section_name
from iobench.fio.logs import job_number, parse_interval_logs
from iobench.iocount import BY_BYTES, BY_COMPLETIONS, BY_SUBMISSIONS
from iobench.metrics import job_metrics
from iobench.model import DIRECTIONS, DiskUtil, JobResult, Workload
from iobench.records import PartResult

# The weakest of the counts the parts' IOPS were made from names the group's (iocount).
_STRENGTH = (BY_SUBMISSIONS, BY_COMPLETIONS, BY_BYTES)


def part_entries(
    jobs: Sequence[JobResult], w: Workload, client: str | None = None
) -> list[JobResult] | None:
    """Each part's entry in fio's report of a group (reporting group k is part k, under the
    section of its name); None when one is missing."""
    found = []
    for k, part in enumerate(w.parts):
        section = section_name(part.name, client)
        entry = next((j for j in jobs if j.groupid == k and j.jobname == section), None)
        if entry is None:
            return None
        found.append(entry)
    return found


def missing_part(jobs: Sequence[JobResult]) -> str:
    """Why a group's result is not kept: fio's report lacks one of its parts."""
    names = ", ".join(sorted({j.jobname for j in jobs})[:8]) or "no job"
    return f"fio's report lacks a part of the group (it reports {names})"


def group_metrics(
    parts: Sequence[Mapping[str, Any]],
    merged: JobResult,
    disk_util: Sequence[DiskUtil] = (),
    *,
    sum_rates: bool = False,
) -> dict[str, Any]:
    """The stored metrics of a group whose parts' metrics are ``parts`` and whose fio
    entries together are ``merged`` (:func:`merge_jobs`): fio's figures of ``merged``, with
    the IOs completed summed over the parts and the IOPS they make (see the module)."""
    out = job_metrics(merged, disk_util, None)
    for d in DIRECTIONS:
        section = out.get(d)
        having = [p[d] for p in parts if isinstance(p.get(d), Mapping)]
        if not section or not having:
            continue
        count = sum(float(s.get("ios_completed") or 0.0) for s in having)
        sources = [s.get("ios_completed_from") for s in having]
        runtime = int(section.get("runtime_ms") or 0)
        if sum_rates:
            iops = sum(float(s.get("iops") or 0.0) for s in having)
        else:
            iops = 1000.0 * count / runtime if runtime > 0 else 0.0
        section.update(
            iops=iops,
            ios_completed=round(count, 3),
            ios_completed_from=min(sources, key=_strength),
        )
    return out


def _strength(source: object) -> int:
    return _STRENGTH.index(source) if source in _STRENGTH else 0


def group_result(
    entries: Sequence[JobResult],
    w: Workload,
    logs: Mapping[str, str] | None,
    disk_util: Sequence[DiskUtil] = (),
    *,
    epoch: bool = False,
) -> tuple[dict[str, Any], tuple[PartResult, ...], dict[str, Any] | None]:
    """A group's metrics, its parts, and its samples, from each part's fio entry
    (:func:`part_entries`) and the interval logs of its fio run (``epoch``: of a fio
    client, with Unix times)."""
    parts = tuple(
        PartResult(
            name=part.name,
            params=part.params,
            metrics=_without_disks(job_metrics(entry, (), part.params)),
            samples=parse_interval_logs(_logs_of(logs, w, k), epoch=epoch) if logs else None,
        )
        for k, (part, entry) in enumerate(zip(w.parts, entries, strict=True))
    )
    metrics = group_metrics([p.metrics or {} for p in parts], merge_jobs(entries), disk_util)
    return metrics, parts, together([p.samples for p in parts])


def together(samples: Sequence[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """A group's per-second samples from its parts' (fio/logs.py's shape): per direction,
    the parts that did it summed second by second (a second one of them has no value for
    has none), latency weighted by their IOPS; None when no part has samples."""
    having = [s for s in samples if s]
    if not having:
        return None
    out: dict[str, Any] = {k: v for k, v in having[0].items() if k in ("interval_ms", "start_ms")}
    if "start_ms" in out:  # a fio client's: the group started when its first part did
        out["start_ms"] = min(s.get("start_ms", out["start_ms"]) for s in having)
    for d in DIRECTIONS:
        series = [s[d] for s in having if s.get(d)]
        if not series:
            continue
        seconds = sorted({t for x in series for t in x["t_s"]})
        rows = [[_at(x, t) for x in series] for t in seconds]
        out[d] = {
            "t_s": seconds,
            "iops": [_sum([r[0] for r in row]) for row in rows],
            "bw_bytes": [_sum([r[1] for r in row]) for row in rows],
            "lat_mean_ns": [_weighted(row) for row in rows],
        }
    return out if any(d in out for d in DIRECTIONS) else None


_Second = tuple[float | None, float | None, float | None]  # IOPS, bytes/s, mean latency ns


def _at(series: Mapping[str, Any], t: float) -> _Second:
    if t not in series["t_s"]:
        return None, None, None
    i = series["t_s"].index(t)
    return series["iops"][i], series["bw_bytes"][i], series["lat_mean_ns"][i]


def _sum(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(v or 0.0 for v in values)


def _weighted(row: Sequence[_Second]) -> float | None:
    if any(iops is None or lat is None for iops, _, lat in row):
        return None
    total = sum(iops or 0.0 for iops, _, _ in row)
    return sum((iops or 0.0) * (lat or 0.0) for iops, _, lat in row) / total if total else None


def _without_disks(metrics: dict[str, Any]) -> dict[str, Any]:
    """A part's metrics: the devices' figures are the group's (one fio run), not a part's."""
    metrics.pop("disk_util", None)
    return metrics


def _logs_of(logs: Mapping[str, str], w: Workload, k: int) -> dict[str, str]:
    """The interval logs of part ``k``'s jobs: fio numbers a file's jobs from 1 in order,
    each section's numjobs one after another."""
    first = 1 + sum(part.numjobs for part in w.parts[:k])
    mine = range(first, first + w.parts[k].numjobs)
    return {name: text for name, text in logs.items() if job_number(name) in mine}


def clients_parts(
    per_client: Sequence[tuple[PartResult, ...]],
    entries: Sequence[Sequence[JobResult]],
    w: Workload,
    names: Sequence[str],
) -> tuple[tuple[PartResult, ...], list[dict[str, Any]]]:
    """Each part's aggregate over the clients (``per_client``: each client's parts, with
    ``entries``, its fio entries, and ``names``, its name), by the group's rule: IOPS and
    bandwidth over the seconds in which every client ran that part (the whole-run sums
    beside them, analysis/together.py), latency merged from the bins, samples summed
    second by second on the servers' clocks; and each part's window, for the step's
    summary."""
    from iobench.analysis.clients import ClientShare, aggregate_samples
    from iobench.analysis.together import over_window

    out, windows = [], []
    for k, part in enumerate(w.parts):
        together = dict(part.params, numjobs=part.numjobs * len(entries))
        merged = merge_jobs([e[k] for e in entries], sum_rates=True)
        shares = [
            ClientShare(name, p[k].metrics or {}, p[k].samples)
            for name, p in zip(names, per_client, strict=True)
        ]
        metrics, window = over_window(_without_disks(job_metrics(merged, (), together)), shares)
        out.append(PartResult(part.name, part.params, metrics, aggregate_samples(shares)))
        windows.append({"part": part.name, **window})
    return tuple(out), windows
