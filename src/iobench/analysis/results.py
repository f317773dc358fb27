"""Reading stored results: the one place that says which results count, how repetitions are
grouped, which latency a figure comes from, and what a setup is called.

Used by :mod:`iobench.analysis.compare` and every report (terminal, HTML, Markdown), so they
all show the same figures. Pure functions over stored runs.

Latency: fio always gives the mean total latency (``lat_ns``), but total-latency
*percentiles* and histogram bins only with ``lat_percentiles=1`` (iobench sets it; imported
outputs often lack it). So the latency is chosen **per field** (:func:`latency_field`):
total latency when fio gave that field, else completion latency (``clat_ns``), and the
choice is returned with the values so a report can mark the fallback.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from iobench.analysis.histogram import merge_bins, percentiles_from_bins
from iobench.analysis.stats import Summary, summarize
from iobench.model import DIRECTIONS
from iobench.records import ResultRecord, RunRecord

LatencyKind = Literal["lat", "clat"]  # total (submission to completion) | completion
_KINDS: tuple[LatencyKind, ...] = ("lat", "clat")


# -- which results count ----------------------------------------------------------------------


def metric_value(metrics: dict[str, Any] | None, direction: str, metric: str) -> float | None:
    """One expectation metric from one result's stored metrics."""
    if not metrics:
        return None
    if direction == "total":
        values = [(metrics.get(d) or {}).get("iops" if metric == "iops" else "bw_bytes")
                  for d in DIRECTIONS if metrics.get(d)]  # fmt: skip
        return float(sum(v for v in values if v is not None)) if values else None
    section = metrics.get(direction)
    if not section:
        return None
    if metric == "iops":
        return _num(section.get("iops"))
    if metric == "bw":
        return _num(section.get("bw_bytes"))
    return _num((section.get("lat_ns") or {}).get(metric))


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def is_ok(r: ResultRecord) -> bool:
    """A result that finished and has metrics."""
    return r.status == "ok" and r.metrics is not None


def ok_results(run: RunRecord, target: str | None = None) -> list[ResultRecord]:
    return [r for r in run.results if is_ok(r) and (target is None or r.target == target)]


def part_results(r: ResultRecord) -> list[ResultRecord]:
    """A group's parts (ResultRecord.parts) as results of their own: each with its name in
    ``part``, its parameters, metrics and samples, and the group's evidence; none for a
    workload of one job."""
    return [
        dataclasses.replace(
            r,
            params=p.params,
            metrics=p.metrics,
            samples=p.samples,
            status=r.status if p.metrics else "failed",
            parts=(),
            part=p.name,
        )
        for p in r.parts
    ]


def with_parts(results: Sequence[ResultRecord]) -> list[ResultRecord]:
    """Each result followed by its parts (:func:`part_results`)."""
    return [x for r in results for x in (r, *part_results(r))]


def section(r: ResultRecord, direction: str) -> dict[str, Any] | None:
    """One direction's metrics of a result; None when it did not do that direction."""
    found = (r.metrics or {}).get(direction)
    return found if isinstance(found, dict) and found else None


def sections(results: Sequence[ResultRecord], direction: str) -> list[dict[str, Any]]:
    """The direction's metrics of every result that has them."""
    return [s for s in (section(r, direction) for r in results) if s]


# -- latency ------------------------------------------------------------------------------------


def _present(value: Any) -> bool:
    return value is not None and value != {}


def latency_field(
    secs: Sequence[dict[str, Any]], field: str
) -> tuple[list[Any], LatencyKind | None]:
    """``field`` ("mean", "p99", "bins" …) of each section, and which latency it is from.

    Total latency when every section has the field there, else completion latency when every
    one has it there; failing both, the first kind that any section has (the others' values
    are None). ``([None, ...], None)`` when no section has the field at all.
    """
    per_kind = {kind: [(s.get(f"{kind}_ns") or {}).get(field) for s in secs] for kind in _KINDS}
    for kind in _KINDS:
        if secs and all(_present(v) for v in per_kind[kind]):
            return per_kind[kind], kind
    for kind in _KINDS:
        if any(_present(v) for v in per_kind[kind]):
            return [v if _present(v) else None for v in per_kind[kind]], kind
    return [None] * len(secs), None


def latency_value(sec: dict[str, Any], field: str) -> tuple[Any, LatencyKind | None]:
    """One section's latency ``field``: total latency, else completion latency."""
    values, kind = latency_field([sec], field)
    return values[0], kind


def merged_bins(secs: Sequence[dict[str, Any]]) -> tuple[dict[int, int], LatencyKind | None]:
    """The sections' latency histograms summed, and which latency they are; ``({}, None)``
    unless every section has bins of one kind (percentiles are never averaged)."""
    bins, kind = latency_field(secs, "bins")
    if kind is None or not all(bins):
        return {}, None
    return merge_bins(*({int(k): int(v) for k, v in b.items()} for b in bins)), kind


# -- the figures of one workload's repetitions -------------------------------------------------


@dataclass(frozen=True)
class Figures:
    """One direction of one workload's repetitions, summarised."""

    iops: Summary
    bw_bytes: Summary
    lat_mean_ns: Summary
    lat_p99_ns: Summary  # the p99 of each repetition, summarised
    lat_p99_merged_ns: float | None  # p99 of the repetitions' merged histogram bins
    lat_p99_kind: LatencyKind | None  # which latency both p99 figures are; None: no p99

    @property
    def n(self) -> int:
        return self.iops.n

    @property
    def p99_ns(self) -> float | None:
        """The p99 to show: the merged one when there are bins, else the mean of the
        repetitions' p99s."""
        merged = self.lat_p99_merged_ns
        return merged if merged is not None else self.lat_p99_ns.mean


def figures(results: Sequence[ResultRecord], direction: str) -> Figures:
    secs = sections(results, direction)
    means, _ = latency_field(secs, "mean")
    p99s, kind = latency_field(secs, "p99")
    bins, bins_kind = merged_bins(secs)
    merged = None
    # Both p99 figures are of one latency: bins of the other kind are not used.
    if bins and (kind is None or bins_kind == kind):
        found = percentiles_from_bins(bins, [99.0])
        merged = found[0][1] if found else None
        kind = bins_kind
    return Figures(
        iops=summarize([s.get("iops") for s in secs]),
        bw_bytes=summarize([s.get("bw_bytes") for s in secs]),
        lat_mean_ns=summarize(means),
        lat_p99_ns=summarize(p99s),
        lat_p99_merged_ns=merged,
        lat_p99_kind=kind,
    )


# -- grouping repetitions -------------------------------------------------------------------------


def _canonical(value: Any) -> Any:
    """Params as compared: 5.0 and 5 are the same number; dict order does not matter."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return value


def canonical(params: dict[str, Any]) -> Any:
    return _canonical(params)


def params_key(params: dict[str, Any]) -> str:
    """A string equal for workloads whose parameters are the same."""
    return json.dumps(_canonical(params), sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Group:
    """The ok repetitions of one workload (name and parameters) on one target of a run; in
    a run on many clients, on one client (or their aggregate, "all") at one client count."""

    target: str
    workload: str
    params: dict[str, Any]
    pkey: str  # params_key(params)
    position: int  # the workload's place in the suite
    results: tuple[ResultRecord, ...]  # by repetition
    client: str | None = None
    clients: int | None = None
    part: str | None = None  # a part of a group (ResultRecord.part)

    @property
    def name(self) -> str:
        """The workload as results show it: ``group/part`` for a part of a group."""
        return self.workload if self.part is None else f"{self.workload}/{self.part}"


def headline(r: ResultRecord) -> bool:
    """A result that speaks for its whole step: on one host, or the aggregate of the
    clients (not one client's share)."""
    return r.client is None or r.client == "all"


def groups(
    run: RunRecord,
    target: str | None = None,
    *,
    headline_only: bool = False,
    parts: bool = False,
    every_round: bool = False,
) -> list[Group]:
    """The run's ok results grouped by target, workload name, parameters, client and
    client count, in target order, then client count, suite order and client.

    ``headline_only``: only results that speak for their whole step (see :func:`headline`),
    at the largest client count the run has: what a comparison compares. ``parts``: each
    group of jobs run together followed by its parts (:func:`part_results`). A run in
    steady-state rounds (``--steady-state pts``) counts the rounds of each group's last
    window only (its result is the window's average), unless ``every_round``.
    """
    order = {t.spec: i for i, t in enumerate(sorted(run.targets, key=lambda t: t.position))}
    chosen = ok_results(run, target)
    if headline_only:
        chosen = [r for r in chosen if headline(r)]
        most = max((r.clients or 0 for r in chosen), default=0)
        chosen = [r for r in chosen if (r.clients or 0) == most]
    if parts:
        chosen = [r for r in with_parts(chosen) if is_ok(r)]
    Key = tuple[str, str, str | None, str, str | None, int | None]
    found: dict[Key, list[ResultRecord]] = {}
    for r in chosen:
        key = (r.target, r.workload, r.part, params_key(r.params), r.client, r.clients)
        found.setdefault(key, []).append(r)
    window = None if every_round else steady_window(run)
    if window is not None:
        found = {key: last_rounds(rs, window) for key, rs in found.items()}
    out = [
        Group(
            target=t,
            workload=w,
            params=rs[0].params,
            pkey=pkey,
            position=min(r.position for r in rs),
            results=tuple(sorted(rs, key=lambda r: r.repetition)),
            client=client,
            clients=clients,
            part=part,
        )
        for (t, w, part, pkey, client, clients), rs in found.items()
    ]
    out.sort(
        key=lambda g: (
            order.get(g.target, len(order)),
            g.clients or 0,
            g.position,
            g.client != "all",
            g.client or "",
        )
    )
    return out


def steady_window(run: RunRecord) -> int | None:
    """The rounds a steady-state run's results are judged over (its rule's window); None
    for other runs."""
    rule = run.suite_def.steady_state
    if not isinstance(rule, Mapping) or rule.get("rule") != "pts":
        return None
    window = rule.get("window")
    return window if isinstance(window, int) and not isinstance(window, bool) and window > 0 else 5


def last_rounds(results: Sequence[ResultRecord], window: int) -> list[ResultRecord]:
    """The results of the last ``window`` rounds (repetitions) that ``results`` have."""
    rounds = sorted({r.repetition for r in results})[-window:]
    return [r for r in results if r.repetition in rounds]


def run_figures(run: RunRecord) -> list[tuple[Group, str, Figures]]:
    """Per group (see :func:`groups`; a workload of several jobs followed by its parts) and
    direction it did: the repetitions' figures."""
    return [
        (g, d, figures(g.results, d))
        for g in groups(run, parts=True)
        for d in DIRECTIONS
        if sections(g.results, d)
    ]


# -- naming setups ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SetupName:
    """One (run, target) pair and what it is called."""

    run: RunRecord
    target: str  # TargetRecord.spec
    key: str  # "run 7", or "run 7 /mnt/x" when the run has several targets
    name: str  # the label (with the key when the label is shared), else the key


def setup_names(runs: Sequence[RunRecord]) -> list[SetupName]:
    """Every (run, target) pair of ``runs`` in order, with its key and name: the targets a
    run was given, then any other target its results name.

    The name is the run's label, followed by the target when the run has several, and by
    ``(run N)`` when another of ``runs`` has the same label; without a label it is the key.
    """
    pairs: list[tuple[RunRecord, str]] = []
    for run in runs:
        specs = [t.spec for t in sorted(run.targets, key=lambda t: t.position)]
        specs += [t for t in dict.fromkeys(r.target for r in run.results) if t not in specs]
        pairs.extend((run, spec) for spec in specs)
    count = {run.id: sum(1 for r, _ in pairs if r.id == run.id) for run in runs}
    label_runs: dict[str, set[int]] = {}
    for run in runs:
        if run.label:
            label_runs.setdefault(run.label, set()).add(run.id)
    out = []
    for run, spec in pairs:
        several = count[run.id] > 1
        key = f"run {run.id} {spec}" if several else f"run {run.id}"
        name = key
        if run.label:
            name = run.label + (f" {spec}" if several else "")
            if len(label_runs[run.label]) > 1:
                name += f" (run {run.id})"
        out.append(SetupName(run=run, target=spec, key=key, name=name))
    return out
