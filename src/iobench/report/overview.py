"""The report's first screen: what each setup delivered per workload, how the setups
compare, and what not to trust (docs/report.md, "Overview").

The overview has a row per workload and direction and a column group per setup (a run and
target): IOPS, bandwidth and p99, and against the baseline the IOPS ratio and its verdict.
Each warning a run stored is marked where it applies: on the cells of its workload, or on
its setup's column when it concerns the whole run or target. The warnings themselves are
listed once, grouped by severity and by kind, each with an anchor the marks link to.

Pure: formatted, unescaped strings like :mod:`iobench.report.model`; each renderer escapes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from iobench.analysis.compare import Comparison, shape_key
from iobench.analysis.results import Figures, figures, groups, params_key
from iobench.analysis.stats import Summary, interval_shown
from iobench.model import DIRECTIONS
from iobench.records import RunRecord
from iobench.report.model import (
    compare_line,
    differs_text,
    format_compared,
    mark_kind,
    run_title,
    workload_shape,
)
from iobench.units import format_iops, format_ns, format_rate

SEVERITIES = ("warning", "info")  # in the order the report lists them
SEVERITY_TITLES = {"warning": "Warnings", "info": "Information"}


@dataclasses.dataclass(frozen=True)
class Notice:
    """One finding a run stored, as the warnings list shows it."""

    anchor: str  # the element id the marks link to
    severity: str  # warning | info (anything else is shown as a warning)
    id: str
    message: str
    fix: str
    run: str  # the run's title: "run 3 (disk)"
    run_id: int
    workload: str | None  # the workload it concerns; None: the whole run or target
    target: str | None  # the target it concerns; None: every target of the run
    card: str | None = None  # the anchor of the workload's charts, when there are some


@dataclasses.dataclass(frozen=True)
class NoticeGroup:
    """The notices of one severity and kind (finding id)."""

    severity: str
    id: str
    notices: tuple[Notice, ...]
    fix: str  # the fix every notice shares; "" when they differ (each shows its own)


@dataclasses.dataclass(frozen=True)
class Marker:
    anchor: str
    severity: str
    id: str


@dataclasses.dataclass(frozen=True)
class OverviewSetup:
    key: str  # Setup.key
    name: str
    colour: str
    target: str
    baseline: bool
    markers: tuple[Marker, ...]  # findings about the whole run or target
    note: str = ""  # "aggregate of 3 clients": what its figures are


@dataclasses.dataclass(frozen=True)
class OverviewCell:
    iops: str
    bandwidth: str
    p99: str
    ratio: str  # the IOPS to the baseline's; "" for the baseline and without a comparison
    verdict: str  # "" without a comparison
    reason: str
    iops_summary: Summary
    bw_summary: Summary
    markers: tuple[Marker, ...] = ()


@dataclasses.dataclass(frozen=True)
class OverviewRow:
    workload: str
    shape: str
    direction: str
    cells: tuple[OverviewCell | None, ...]  # per setup, in the overview's setup order
    note: str = ""  # why the row is not compared, or the durations that differ
    card: str | None = None  # the anchor of the workload's charts


@dataclasses.dataclass(frozen=True)
class Overview:
    setups: tuple[OverviewSetup, ...]
    rows: tuple[OverviewRow, ...]
    compared: bool  # ratios and verdicts are shown

    @property
    def intervals(self) -> bool:
        """Whether a cell shows a 95 % interval (3 repetitions or more)."""
        return any(
            interval_shown(c.iops_summary) for r in self.rows for c in r.cells if c is not None
        )


# -- notices ------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def notices(runs: Sequence[RunRecord], card_of: Callable[[str], str | None]) -> list[Notice]:
    """Every finding of every run, each with an anchor of its own."""
    out = []
    for run in runs:
        for i, w in enumerate(run.warnings):
            workload = _text(w.get("workload")) or None
            severity = _text(w.get("severity"))
            out.append(
                Notice(
                    anchor=f"finding-{run.id}-{i}",
                    severity=severity if severity in SEVERITIES else "warning",
                    id=_text(w.get("id")) or "finding",
                    message=_text(w.get("message")),
                    fix=_text(w.get("fix")),
                    run=run_title(run),
                    run_id=run.id,
                    workload=workload,
                    target=_text(w.get("target")) or None,
                    card=card_of(workload) if workload else None,
                )
            )
    return out


def notice_groups(found: Iterable[Notice]) -> list[tuple[str, list[NoticeGroup]]]:
    """Per severity (warnings first), the notices grouped by kind, in the order first seen."""
    by: dict[tuple[str, str], list[Notice]] = {}
    for n in found:
        by.setdefault((n.severity, n.id), []).append(n)
    out = []
    for severity in SEVERITIES:
        found_here = [
            NoticeGroup(
                severity,
                fid,
                tuple(ns),
                ns[0].fix if len({n.fix for n in ns}) == 1 else "",
            )
            for (sev, fid), ns in by.items()
            if sev == severity
        ]
        if found_here:
            out.append((severity, found_here))
    return out


def _marker(n: Notice) -> Marker:
    return Marker(n.anchor, n.severity, n.id)


# -- the overview table --------------------------------------------------------------------------


def _cell(f: Figures) -> OverviewCell:
    return OverviewCell(
        iops=format_compared(f.iops, format_iops),
        bandwidth=format_compared(f.bw_bytes, format_rate),
        p99=mark_kind(format_ns(f.p99_ns), f.lat_p99_kind),
        ratio="",
        verdict="",
        reason="",
        iops_summary=f.iops,
        bw_summary=f.bw_bytes,
    )


def _figures_of(run: RunRecord, target: str) -> list[tuple[str, dict[str, Any], str, Figures]]:
    """(workload, params, direction, figures) of one setup, in suite order."""
    found = (
        (g.workload, g.params, d, figures(g.results, d))
        for g in groups(run, target, headline_only=True)
        for d in DIRECTIONS
    )
    return [x for x in found if x[3].iops.n]


def _compared_rows(comparison: Comparison, order: Sequence[str]) -> list[OverviewRow]:
    """One row per matched workload and direction; each cell from the comparison's line
    for it (:func:`iobench.report.model.compare_line`), so the figures read the same."""
    rows = []
    names = {s.key: s.name for s in comparison.setups}
    # The overview's setups may be fewer than the comparison's: a sweep or characterize
    # run has its own section (its curves), not a column here.
    column = {key: i for i, key in enumerate(order)}
    for row in comparison.rows:
        differs = differs_text(row, names)
        cells: list[OverviewCell | None] = [None] * len(order)
        for c in row.cells:
            if c.setup not in column:
                continue
            line = compare_line(comparison, row, c, differs=differs, first=False)
            cells[column[c.setup]] = OverviewCell(
                iops=line.iops,
                bandwidth=line.bandwidth,
                p99=line.lat_p99,
                ratio=line.iops_ratio,
                verdict=line.verdict,
                reason=line.reason,
                iops_summary=c.iops,
                bw_summary=c.bw_bytes,
            )
        if not any(cells):
            continue
        note = differs
        rows.append(
            OverviewRow(row.workload, workload_shape(row.params), row.direction, tuple(cells), note)
        )
    return rows


def _unmatched_rows(
    comparison: Comparison, setups: Sequence[tuple[str, RunRecord, str]]
) -> list[OverviewRow]:
    """The workloads a setup ran that no other setup's matched, with the reason."""
    order = [key for key, _, _ in setups]
    found: dict[int, list[tuple[str, dict[str, Any], str, Figures]]] = {}  # per setup, once
    rows = []
    for u in comparison.unmatched:
        index = order.index(u.setup) if u.setup in order else None
        if index is None:
            continue
        _, run, target = setups[index]
        if index not in found:
            found[index] = _figures_of(run, target)
        for workload, params, d, f in found[index]:
            if workload != u.workload or shape_key(params) != shape_key(u.params):
                continue
            cells: list[OverviewCell | None] = [None] * len(order)
            cells[index] = _cell(f)
            note = f"not compared: {u.reason}"
            rows.append(OverviewRow(workload, workload_shape(params), d, tuple(cells), note))
    return rows


def _plain_rows(setups: Sequence[tuple[RunRecord, str]]) -> list[OverviewRow]:
    """Without a comparison: a row per workload (name and parameters) and direction, with
    each setup's figures where it ran it."""
    by: dict[tuple[str, str, str], list[OverviewCell | None]] = {}
    shapes: dict[tuple[str, str, str], str] = {}
    for i, (run, target) in enumerate(setups):
        for workload, params, d, f in _figures_of(run, target):
            key = (workload, params_key(params), d)
            by.setdefault(key, [None] * len(setups))[i] = _cell(f)
            shapes[key] = workload_shape(params)
    return [
        OverviewRow(workload, shapes[(workload, pkey, d)], d, tuple(cells))
        for (workload, pkey, d), cells in by.items()
    ]


def overview(
    setups: Sequence[tuple[str, str, str, RunRecord, str]],
    comparison: Comparison | None,
    found: Sequence[Notice],
    card_of: Callable[[str], str | None],
) -> Overview | None:
    """The overview of the setups ``(key, name, colour, run, target)``, None when none of
    them has a result. Without a comparison (one setup), its figures; with one, its rows."""
    order = [key for key, *_ in setups]
    if comparison is not None:
        rows = _compared_rows(comparison, order)
        rows += _unmatched_rows(comparison, [(k, run, t) for k, _, _, run, t in setups])
    else:
        rows = _plain_rows([(run, target) for *_, run, target in setups])
    if not rows:
        return None
    rows = [_marked(r, setups, found, card_of) for r in rows]
    heads = tuple(
        OverviewSetup(
            key=key,
            name=name,
            colour=colour,
            target=target,
            baseline=comparison is not None and key == comparison.baseline,
            markers=tuple(_marker(n) for n in found if _about_setup(n, run, target)),
            note=_clients_note(run, target),
        )
        for key, name, colour, run, target in setups
    )
    return Overview(heads, tuple(rows), comparison is not None)


def _clients_note(run: RunRecord, target: str) -> str:
    """What a run on many clients shows in the overview: the aggregate of the most clients
    it ran (the comparison's figures, :func:`iobench.analysis.results.groups`)."""
    most = max((r.clients or 0 for r in run.results if r.target == target), default=0)
    return f"aggregate of {most} clients" if most else ""


def _concerns(n: Notice, run: RunRecord, target: str) -> bool:
    return n.run_id == run.id and n.target in (None, target)


def _about_setup(n: Notice, run: RunRecord, target: str) -> bool:
    """A finding about the whole run or target: marked on the setup's column."""
    return n.workload is None and _concerns(n, run, target)


def _marked(
    row: OverviewRow,
    setups: Sequence[tuple[str, str, str, RunRecord, str]],
    found: Sequence[Notice],
    card_of: Callable[[str], str | None],
) -> OverviewRow:
    """The row with each cell's findings about its workload, and the link to its charts."""
    names = row.workload.split(" / ")  # a compared row joins names that differ
    cells = tuple(
        None
        if cell is None
        else dataclasses.replace(
            cell,
            markers=tuple(
                _marker(n) for n in found if n.workload in names and _concerns(n, run, target)
            ),
        )
        for cell, (_, _, _, run, target) in zip(row.cells, setups, strict=True)
    )
    return dataclasses.replace(row, cells=cells, card=card_of(names[0]))
