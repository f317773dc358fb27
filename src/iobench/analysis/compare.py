"""Comparing runs: match workloads on what defines them, summarise their repetitions,
and say how each setup stands against a baseline — as a difference, as noise, or as a
question that more repetitions would answer.

Pure functions over stored runs (no SQL, no printing). The rules are in docs/compare.md:

- a *setup* is one (run, target) pair, one column of the comparison;
- results of one workload (its repetitions) are summarised together, per direction;
- workloads are matched across setups on their shape (every stored parameter but the
  durations: runtime, ramp, size and ``time_based``); durations that differ are listed on
  the row (``Row.differs``), not a reason to leave it out; whatever cannot be matched is
  listed in ``unmatched`` with the reason, never dropped;
- ratios are to the baseline's mean; verdicts come from :mod:`iobench.analysis.verdicts`
  (Welch's t-test on the repetitions, within-run noise from the per-second samples where a
  side has a single run, and the several-times rule).
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from iobench.analysis.context import context_differences, setup_context
from iobench.analysis.results import (
    LatencyKind,
    canonical,
    figures,
    groups,
    is_ok,
    latency_field,
    params_key,
    part_results,
    run_figures,
    section,
    sections,
    setup_names,
)
from iobench.analysis.runcurves import LimitRow, compare_limits, run_limits
from iobench.analysis.stats import Summary, is_unstable
from iobench.analysis.verdicts import (
    BASELINE_JUDGEMENT,
    NO_BASELINE_JUDGEMENT,
    Judgement,
    Side,
    judge,
)
from iobench.documents import envelope
from iobench.errors import UserError
from iobench.fio.options import PLACEMENT_KEYS
from iobench.model import DIRECTIONS
from iobench.records import ResultRecord, RunRecord
from iobench.units import format_duration, format_size_short

# The parameters that say how long or over how much a workload measured, not what it is:
# workloads that differ only in these are compared, and the differences shown on the row.
DURATION_PARAMS = ("runtime_s", "ramp_s", "size")
DURATION_OPTIONS = ("time_based",)
# Where fio's jobs ran (which CPUs), not what they did: a pinned run (--pin-to-device, a
# suite's cpus_allowed) is compared with an unpinned one, the placement shown on the row.
UNSHAPED_OPTIONS = DURATION_OPTIONS + PLACEMENT_KEYS

# The order in which parameters are named when saying why workloads did not match.
_PARAM_ORDER = (
    "rw",
    "bs",
    "iodepth",
    "numjobs",
    "rwmixread",
    "ioengine",
    "direct",
    "size",
    "runtime_s",
    "ramp_s",
    "options",
)

# "baseline" | "faster" | "slower" | "within noise" | "too few repeats" | "not measured" |
# "no baseline" (iobench.analysis.verdicts)
Verdict = str


@dataclass(frozen=True)
class Setup:
    """One column: a (run, target) pair."""

    key: str  # "run 7", or "run 7 /mnt/x" when the run has several targets
    run_id: int
    target: str  # TargetRecord.spec: the absolute path named (older runs: as typed)
    label: str | None  # the run's label
    name: str  # what a person reads: the label (with the key if the label is shared), else key


@dataclass(frozen=True)
class Cell:
    """One setup's figures for one matched workload and direction."""

    setup: str  # Setup.key
    iops: Summary
    bw_bytes: Summary
    lat_mean_ns: Summary
    lat_p99_ns: Summary  # the p99 of each repetition, summarised
    lat_p99_merged_ns: float | None  # p99 of the repetitions' merged histogram bins
    # which latency both p99 figures are: "lat" (total), "clat" (completion: fio gave no
    # total-latency percentiles or bins), None (no p99 at all)
    lat_p99_kind: LatencyKind | None
    iops_ratio: float | None  # mean IOPS / the baseline's mean IOPS; None for the baseline
    bw_ratio: float | None
    lat_mean_ratio: float | None  # mean latency / the baseline's (above 1: slower)
    # The verdict from the IOPS and why (docs/compare.md, "Verdicts"). The same rules for
    # bandwidth and mean latency (a lower latency is "faster"): with a rate limit or a CPU
    # bound, they need not agree with the IOPS.
    iops_test: Judgement = BASELINE_JUDGEMENT
    bw_test: Judgement = BASELINE_JUDGEMENT
    lat_test: Judgement = BASELINE_JUDGEMENT
    failed: int = 0  # repetitions of this workload in this setup that failed (not in n)

    @property
    def verdict(self) -> Verdict:
        return self.iops_test.verdict

    @property
    def bw_verdict(self) -> Verdict:
        return self.bw_test.verdict

    @property
    def lat_verdict(self) -> Verdict:
        return self.lat_test.verdict

    @property
    def p99_ns(self) -> float | None:
        """The p99 to show: the merged one when there are bins, else the mean of the
        repetitions' p99s."""
        merged = self.lat_p99_merged_ns
        return merged if merged is not None else self.lat_p99_ns.mean


@dataclass(frozen=True)
class Differs:
    """A duration parameter whose values differ between the setups of a row."""

    param: str  # "runtime_s", "ramp_s", "size" or "options.time_based"
    values: dict[str, Any]  # Setup.key -> the value (None: not known)


@dataclass(frozen=True)
class Row:
    """One matched workload x direction."""

    workload: str  # the workload's name; names that differ between setups joined with " / "
    direction: str  # read | write | trim
    params: dict[str, Any]  # the baseline's params (else the first setup's)
    cells: tuple[Cell, ...]  # in setup order; a setup without this workload has no cell
    differs: tuple[Differs, ...] = ()  # durations that differ between the cells' setups


@dataclass(frozen=True)
class Unmatched:
    setup: str  # Setup.key
    workload: str
    params: dict[str, Any]
    reason: str


@dataclass(frozen=True)
class ContextDiff:
    field: str  # "fio version", "kernel", "host", "cpu", "device", "filesystem", "mount options"
    values: dict[str, str | None]  # Setup.key -> value (None: unknown)


@dataclass(frozen=True)
class Spread:
    """Ratios to the baseline over a setup's matched rows: their geometric mean (ratios
    multiply: 50 % and 200 % average to 100 %), the lowest and the highest."""

    mean: float
    low: float
    high: float
    n: int  # rows with a ratio

    @classmethod
    def of(cls, ratios: Sequence[float | None]) -> Spread | None:
        known = [r for r in ratios if r is not None and r > 0 and math.isfinite(r)]
        if not known:
            return None
        mean = math.exp(sum(math.log(r) for r in known) / len(known))
        return cls(mean=mean, low=min(known), high=max(known), n=len(known))


# The order in which a headline counts verdicts: what a reader needs first.
VERDICT_ORDER = (
    "slower",
    "faster",
    "within noise",
    "too few repeats",
    "not measured",
    "no baseline",
)


@dataclass(frozen=True)
class Headline:
    """How one setup stands against the baseline, in a sentence's worth of figures: how
    many rows got each verdict, and the size of the difference (the ratios' spread)."""

    setup: str  # Setup.key
    rows: int  # matched rows (workload x direction) this setup has
    workloads: int  # distinct workloads among them
    verdicts: tuple[tuple[str, int], ...]  # (verdict, rows), in VERDICT_ORDER
    iops: Spread | None
    bw: Spread | None
    lat_mean: Spread | None  # mean latency to the baseline's (above 1: slower)

    def to_dict(self) -> dict[str, Any]:
        return {
            "setup": self.setup,
            "rows": self.rows,
            "workloads": self.workloads,
            "verdicts": dict(self.verdicts),
            "iops_ratio": asdict(self.iops) if self.iops else None,
            "bw_ratio": asdict(self.bw) if self.bw else None,
            "lat_mean_ratio": asdict(self.lat_mean) if self.lat_mean else None,
        }


@dataclass(frozen=True)
class Comparison:
    setups: tuple[Setup, ...]
    baseline: str  # Setup.key
    rows: tuple[Row, ...]
    unmatched: tuple[Unmatched, ...]
    context: tuple[ContextDiff, ...]  # only the fields whose values differ
    # The limits of sweep and characterize runs side by side (analysis.runcurves)
    limits: tuple[LimitRow, ...] = ()

    def setup(self, key: str) -> Setup:
        for s in self.setups:
            if s.key == key:
                return s
        raise KeyError(key)

    def headlines(self) -> tuple[Headline, ...]:
        """Per setup other than the baseline, its :class:`Headline`."""
        return tuple(headline(self, s.key) for s in self.setups if s.key != self.baseline)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document (``kind: "comparison"``, docs/compare.md)."""
        return {
            **envelope("comparison"),
            "baseline": self.baseline,
            "setups": [asdict(s) for s in self.setups],
            "rows": [
                {
                    "workload": r.workload,
                    "direction": r.direction,
                    "params": copy.deepcopy(r.params),
                    "differs": [
                        {"param": d.param, "values": copy.deepcopy(d.values)} for d in r.differs
                    ],
                    "cells": [_cell_dict(c) for c in r.cells],
                }
                for r in self.rows
            ],
            "unmatched": [
                {
                    "setup": u.setup,
                    "workload": u.workload,
                    "params": copy.deepcopy(u.params),
                    "reason": u.reason,
                }
                for u in self.unmatched
            ],
            "context": [{"field": d.field, "values": dict(d.values)} for d in self.context],
            "headlines": [h.to_dict() for h in self.headlines()],
            "limits": [
                {
                    "rw": r.rw,
                    "limit": r.key,
                    "cells": [
                        {
                            "setup": c.setup,
                            "estimate": c.estimate.as_dict() if c.estimate else None,
                            "why_none": c.why_none or None,
                            "throttle": c.throttle,
                            "ratio": c.ratio,
                        }
                        for c in r.cells
                    ],
                }
                for r in self.limits
            ],
        }


def headline(c: Comparison, key: str) -> Headline:
    """Setup ``key``'s verdicts counted and its ratios' spread over the rows it shares with
    the baseline."""
    cells = [(row, cell) for row in c.rows for cell in row.cells if cell.setup == key]
    counts: dict[str, int] = {}
    for _, cell in cells:
        counts[cell.verdict] = counts.get(cell.verdict, 0) + 1
    order = [v for v in VERDICT_ORDER if v in counts] + sorted(set(counts) - set(VERDICT_ORDER))
    return Headline(
        setup=key,
        rows=len(cells),
        workloads=len({row.workload for row, _ in cells}),
        verdicts=tuple((v, counts[v]) for v in order),
        iops=Spread.of([cell.iops_ratio for _, cell in cells]),
        bw=Spread.of([cell.bw_ratio for _, cell in cells]),
        lat_mean=Spread.of([cell.lat_mean_ratio for _, cell in cells]),
    )


def _cell_dict(c: Cell) -> dict[str, Any]:
    return {
        "setup": c.setup,
        "iops": c.iops.as_dict(),
        "bw_bytes": c.bw_bytes.as_dict(),
        "lat_mean_ns": c.lat_mean_ns.as_dict(),
        "lat_p99_ns": c.lat_p99_ns.as_dict(),
        "lat_p99_merged_ns": c.lat_p99_merged_ns,
        "lat_p99_kind": c.lat_p99_kind,
        "iops_ratio": c.iops_ratio,
        "bw_ratio": c.bw_ratio,
        "lat_mean_ratio": c.lat_mean_ratio,
        "bw_verdict": c.bw_verdict,
        "lat_verdict": c.lat_verdict,
        "failed": c.failed,
        "verdict": c.verdict,
        "iops_test": c.iops_test.as_dict(),
        "bw_test": c.bw_test.as_dict(),
        "lat_test": c.lat_test.as_dict(),
    }


# -- per-run summaries (for `run` / `show` with repetitions) ------------------------------------


def summarize_results(run: RunRecord) -> list[dict[str, Any]]:
    """Per target, workload and direction: the repetitions' summaries (JSON-ready).

    Keys: ``target``, ``workload``, ``direction``, ``n`` (repetitions with that direction),
    and ``iops``, ``bw_bytes``, ``lat_mean_ns``, ``lat_p99_ns`` as ``Summary.as_dict()``.
    In target order, then suite order. Failed results are left out.
    """
    return [
        {
            "target": g.target,
            "workload": g.workload,
            "part": g.part,  # a part of a group of jobs run together; null: the workload
            "client": g.client,
            "clients": g.clients,
            "direction": d,
            "n": f.n,
            "iops": f.iops.as_dict(),
            "bw_bytes": f.bw_bytes.as_dict(),
            "lat_mean_ns": f.lat_mean_ns.as_dict(),
            "lat_p99_ns": f.lat_p99_ns.as_dict(),
        }
        for g, d, f in run_figures(run)
    ]


def unstable(run: RunRecord) -> list[tuple[str, str, str, float]]:
    """(target, workload, direction, CV %) of every workload whose repetitions' IOPS vary by
    more than UNSTABLE_CV_PCT (:func:`iobench.analysis.stats.is_unstable`)."""
    return [
        (g.target, g.name, d, float(f.iops.cv_pct or 0.0))
        for g, d, f in run_figures(run)
        if is_unstable(f.iops)
    ]


# -- matching ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Group:
    """The ok repetitions of one workload in one setup."""

    setup: int  # index into the setups
    workload: str
    params: dict[str, Any]
    pkey: str  # params_key(params): identical parameters
    skey: str  # shape_key(params): the same workload, whatever its durations
    position: int
    results: tuple[ResultRecord, ...]


def _format_param(key: str, value: Any) -> str:
    if value is None:
        return "unset"
    if key == "parts" and isinstance(value, list):
        return f"{len(value)} jobs run together"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key in ("bs", "size") and isinstance(value, int):
        return format_size_short(value)
    if key in ("runtime_s", "ramp_s") and isinstance(value, int | float):
        return format_duration(float(value))
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in sorted(value.items())) or "none"
    return str(value)


def shape(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters that define what a workload measures: all but the durations
    (DURATION_PARAMS, and DURATION_OPTIONS among the fio options) and the CPU placement
    (PLACEMENT_KEYS)."""
    out = {k: v for k, v in params.items() if k not in DURATION_PARAMS}
    options = out.get("options")
    if isinstance(options, dict):
        out["options"] = {k: v for k, v in options.items() if k not in UNSHAPED_OPTIONS}
    parts = out.get("parts")
    if isinstance(parts, list):  # a group: the shape of each part, whatever its name
        out["parts"] = [
            shape({k: v for k, v in p.items() if k != "name"}) if isinstance(p, dict) else p
            for p in parts
        ]
    return out


def shape_key(params: dict[str, Any]) -> str:
    """A string equal for workloads of the same shape (see :func:`shape`)."""
    return params_key(shape(params))


def _durations(params: dict[str, Any]) -> dict[str, Any]:
    """The duration parameters and the placement options, options as ``options.NAME``;
    an unset option is None."""
    options = params.get("options")
    options = options if isinstance(options, dict) else {}
    return {
        **{k: params.get(k) for k in DURATION_PARAMS},
        **{f"options.{k}": options.get(k) for k in UNSHAPED_OPTIONS},
    }


def _differs(members: Sequence[_Group], setups: Sequence[Setup]) -> tuple[Differs, ...]:
    """The durations whose values are not all the same (60 and 60.0 are the same)."""
    per = [(setups[g.setup].key, _durations(g.params)) for g in members]
    return tuple(
        Differs(param=k, values={key: copy.deepcopy(d[k]) for key, d in per})
        for k in per[0][1]
        if len({params_key({"v": d[k]}) for _, d in per}) > 1
    )


def _differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """``["bs 4k vs 8k", ...]``: the shape parameters in which ``a`` differs from ``b``."""
    ca, cb = canonical(shape(a)), canonical(shape(b))
    keys = [k for k in _PARAM_ORDER if k in ca or k in cb]
    keys += sorted((set(ca) | set(cb)) - set(keys))
    return [
        f"{k} {_format_param(k, a.get(k))} vs {_format_param(k, b.get(k))}"
        for k in keys
        if ca.get(k) != cb.get(k)
    ]


def _setups(runs: Sequence[RunRecord]) -> list[Setup]:
    named = setup_names(runs)
    for run in runs:
        if not any(n.run is run for n in named):
            raise UserError(
                f"run {run.id} has no target and no result to compare",
                "choose runs from `iobench list` that have results",
            )
    return [
        Setup(key=n.key, run_id=n.run.id, target=n.target, label=n.run.label, name=n.name)
        for n in named
    ]


def _groups(run: RunRecord, setup_index: dict[tuple[int, str], int]) -> list[_Group]:
    return [
        _Group(
            setup=setup_index[(run.id, g.target)],
            workload=g.workload,
            params=g.params,
            pkey=g.pkey,
            skey=shape_key(g.params),
            position=g.position,
            results=g.results,
        )
        for g in groups(run, headline_only=True)
    ]


def compare(runs: Sequence[RunRecord], baseline_run_id: int | None = None) -> Comparison:
    """Compare the setups (run x target) of ``runs``; see the module docstring.

    The baseline is the first target of run ``baseline_run_id``, else the first setup.
    Raises UserError when there is nothing to compare with (fewer than two setups), a run is
    given twice, or the baseline run is not among ``runs``.
    """
    ids = [run.id for run in runs]
    for run_id in ids:
        if ids.count(run_id) > 1:
            raise UserError(f"run {run_id} is given twice", "name each run to compare once")
    setups = _setups(runs)
    if len(setups) < 2:
        raise UserError(
            "a comparison needs at least two runs, or one run with several targets",
            "name two or more runs, e.g. `iobench compare 3 7`, or use --label twice",
        )
    baseline = _baseline_index(setups, ids, baseline_run_id)
    setup_index = {(s.run_id, s.target): i for i, s in enumerate(setups)}
    groups = [g for run in runs for g in _groups(run, setup_index)]
    failed = [(setup_index[(run.id, r.target)], r) for run in runs for r in run.results]
    failed = [(s, r) for s, r in failed if not is_ok(r)]
    failed_count: dict[tuple[int, str, str], int] = {}
    for s, r in failed:
        key = (s, r.workload, params_key(r.params))
        failed_count[key] = failed_count.get(key, 0) + 1

    matched_sets, leftovers = _match(groups)
    rows, unmatched = _matched_rows(matched_sets, setups, baseline, failed_count)
    for g in leftovers:
        unmatched.append(
            ((g.setup, g.position), _unmatched(g, setups, _why(g, groups, failed, setups)))
        )
    unmatched += _failed_everywhere(failed, groups, setups)
    rows.sort(key=lambda item: item[0])
    unmatched.sort(key=lambda item: item[0])
    return Comparison(
        setups=tuple(setups),
        baseline=setups[baseline].key,
        rows=tuple(r for _, r in rows),
        unmatched=tuple(u for _, u in unmatched),
        context=_context(runs, setups),
        limits=_limits(runs, setups, setups[baseline].key),
    )


def _limits(
    runs: Sequence[RunRecord], setups: Sequence[Setup], baseline: str
) -> tuple[LimitRow, ...]:
    by_id = {run.id: run for run in runs}
    found = {run.id: run_limits(run) for run in runs}
    if sum(1 for lims in found.values() if lims) < 2 and len(setups) == len(runs):
        return ()
    per_setup = [
        (s.key, [lim for lim in found[s.run_id] if lim.target == s.target])
        for s in setups
        if by_id[s.run_id]
    ]
    return compare_limits(per_setup, baseline)


def _baseline_index(
    setups: Sequence[Setup], ids: Sequence[int], baseline_run_id: int | None
) -> int:
    """The index in ``setups`` of the baseline: the first target of run ``baseline_run_id``,
    else the first setup. Raises UserError when that run is not among those compared."""
    if baseline_run_id is None:
        return 0
    if baseline_run_id not in ids:
        raise UserError(
            f"the baseline run {baseline_run_id} is not one of the runs compared "
            f"({', '.join(str(i) for i in ids)})",
            "give one of the compared runs as --baseline",
        )
    return next(i for i, s in enumerate(setups) if s.run_id == baseline_run_id)


def _matched_rows(
    matched_sets: Sequence[Sequence[_Group]],
    setups: Sequence[Setup],
    baseline: int,
    failed_count: dict[tuple[int, str, str], int],
) -> tuple[list[tuple[tuple[int, int, int], Row]], list[tuple[tuple[int, int], Unmatched]]]:
    """One row per matched workload and direction that two or more setups measured, keyed
    for sorting; a direction only one setup measured, or a match with no IO measured at all,
    is listed as unmatched with the reason."""
    rows: list[tuple[tuple[int, int, int], Row]] = []
    unmatched: list[tuple[tuple[int, int], Unmatched]] = []
    for members in matched_sets:
        order = min((g.setup, g.position) for g in members)
        if not any(sections(g.results, d) for g in members for d in DIRECTIONS):
            for g in members:  # matched, but nothing to compare: said, not dropped
                unmatched.append(((g.setup, g.position), _unmatched(g, setups, "no IO measured")))
            continue
        for k, group in enumerate([members, *_parts_of(members)]):
            for di, d in enumerate(DIRECTIONS):
                having = [g for g in group if sections(g.results, d)]
                if len(having) >= 2:
                    row = _row(having, d, setups, baseline, failed_count)
                    rows.append(((*order, k * len(DIRECTIONS) + di), row))
                elif len(having) == 1 and k == 0:
                    g = having[0]
                    others = _others(setups)
                    unmatched.append(
                        (
                            (g.setup, g.position),
                            _unmatched(g, setups, f"{others} measured its {d} direction"),
                        )
                    )
    return rows, unmatched


def _parts_of(members: Sequence[_Group]) -> list[list[_Group]]:
    """Matched groups of jobs run together (of one shape, so with as many parts, of the same
    shapes): each part's results in every setup, part by part, named ``group/part``."""
    count = len(members[0].params.get("parts") or [])
    out: list[list[_Group]] = []
    for k in range(count):
        matched = []
        for g in members:
            results = tuple(part_results(r)[k] for r in g.results if len(r.parts) > k)
            if not results:
                continue
            params = results[0].params
            matched.append(
                dataclasses.replace(
                    g,
                    workload=results[0].shown_name,
                    params=params,
                    pkey=params_key(params),
                    skey=shape_key(params),
                    results=tuple(r for r in results if is_ok(r)),
                )
            )
        out.append(matched)
    return out


def _failed_everywhere(
    failed: Sequence[tuple[int, ResultRecord]],
    groups: Sequence[_Group],
    setups: Sequence[Setup],
) -> list[tuple[tuple[int, int], Unmatched]]:
    """The workloads that failed in every repetition, so have no group, as unmatched with the
    first line of their error. (One that failed in some repetitions is compared on the
    others; its cell counts the failures.)"""
    out: list[tuple[tuple[int, int], Unmatched]] = []
    have_group = {(g.setup, g.workload, g.pkey) for g in groups}
    seen: set[tuple[int, str, str]] = set()
    for s, r in failed:
        key = (s, r.workload, params_key(r.params))
        if key in have_group or key in seen:
            continue
        seen.add(key)
        if r.status == "ok":
            reason = "no metrics were stored for it"
        else:
            lines = (r.error or "").strip().splitlines()
            reason = "failed: " + (lines[0] if lines else "no error message stored")
        out.append(
            (
                (s, r.position),
                Unmatched(
                    setup=setups[s].key,
                    workload=r.workload,
                    params=r.params,
                    reason=reason,
                ),
            )
        )
    return out


def _one_per_setup(members: Sequence[_Group]) -> bool:
    per_setup = [g.setup for g in members]
    return len(set(per_setup)) == len(per_setup)


def _match(groups: Sequence[_Group]) -> tuple[list[list[_Group]], list[_Group]]:
    """Sets of groups (at most one per setup, at least two setups) of the same shape, and
    the groups left over. Where one setup has several workloads of one shape, those are
    matched by name, and what is left of them by identical parameters."""
    by_shape: dict[str, list[_Group]] = {}
    for g in groups:
        by_shape.setdefault(g.skey, []).append(g)
    matched: list[list[_Group]] = []
    leftovers: list[_Group] = []
    for members in by_shape.values():
        if _one_per_setup(members):
            candidates = [members]
        else:
            candidates = []
            rest = list(members)
            for key in ("workload", "pkey"):
                pool, rest = rest, []
                by_key: dict[str, list[_Group]] = {}
                for g in pool:
                    by_key.setdefault(getattr(g, key), []).append(g)
                for c in by_key.values():
                    if len(c) >= 2 and _one_per_setup(c):
                        candidates.append(c)
                    else:
                        rest.extend(c)
            candidates.extend([g] for g in rest)
        for c in candidates:
            if len(c) >= 2:
                matched.append(c)
            else:
                leftovers.extend(c)
    return matched, leftovers


def _others(setups: Sequence[Setup]) -> str:
    """How to say "nobody else" for these setups: "no other run" or "no other target"."""
    runs = {s.run_id for s in setups}
    if len(runs) == len(setups):
        return "no other run"
    if len(runs) == 1:
        return "no other target"
    return "no other run or target"


def _where(s: Setup) -> str:
    """A setup named so it can be found: its name, and the run when the name has none."""
    if s.name == s.key or f"(run {s.run_id})" in s.name:
        return s.name
    return f"{s.name} (run {s.run_id})"


def _why(
    g: _Group,
    groups: Sequence[_Group],
    failed: Sequence[tuple[int, ResultRecord]],
    setups: Sequence[Setup],
) -> str:
    others = _others(setups)
    failed_same = [s for s, r in failed if s != g.setup and shape_key(r.params) == g.skey]
    if failed_same:
        where = ", ".join(dict.fromkeys(_where(setups[s]) for s in failed_same))
        return f"the workload with these parameters failed in {where}"
    twins = [o for o in groups if o.setup == g.setup and o.skey == g.skey and o is not g]
    if twins:
        return (
            f"its run has other workloads of the same shape "
            f"({', '.join(o.workload for o in twins)}), and {others} has one of this name "
            "or with identical parameters"
        )
    candidates = [o for o in groups if o.setup != g.setup]
    if not candidates:
        return f"{others} has any result"
    alike = [o for o in candidates if o.skey == g.skey]
    if alike:  # another setup has several of this shape: which one is not clear
        where = ", ".join(dict.fromkeys(_where(setups[o.setup]) for o in alike))
        return (
            f"{where} has several workloads of this shape "
            f"({', '.join(o.workload for o in alike)}), none of this name or with "
            "identical parameters"
        )
    nearest = min(
        candidates,
        key=lambda o: (len(_differences(g.params, o.params)), o.workload != g.workload, o.setup),
    )
    diffs = _differences(g.params, nearest.params)
    shown = ", ".join(diffs[:3]) + (f" and {len(diffs) - 3} more" if len(diffs) > 3 else "")
    return (
        f"{others} has a workload with these parameters "
        f"(nearest: {shown} in {_where(setups[nearest.setup])}, {nearest.workload})"
    )


def _unmatched(g: _Group, setups: Sequence[Setup], reason: str) -> Unmatched:
    return Unmatched(setup=setups[g.setup].key, workload=g.workload, params=g.params, reason=reason)


def _ratio(value: float | None, base: float | None) -> float | None:
    if value is None or base is None or base == 0:
        return None
    return value / base


def _series(r: ResultRecord, direction: str, key: str) -> list[float | None] | None:
    """One result's per-second samples of ``key`` (iops, bw_bytes, lat_mean_ns) in one
    direction (fio/logs.py); None when they were not recorded."""
    found = (r.samples or {}).get(direction)
    values = found.get(key) if isinstance(found, dict) else None
    return list(values) if isinstance(values, list) else None


def _sides(results: Sequence[ResultRecord], direction: str) -> tuple[Side, Side, Side]:
    """IOPS, bandwidth and mean latency of each repetition that did ``direction``, with
    its per-second samples: what the verdicts are judged on. The values are those the
    summaries are made of (the same latency choice)."""
    having = [r for r in results if section(r, direction)]
    secs = [s for s in (section(r, direction) for r in having) if s]
    lat_means, _ = latency_field(secs, "mean")
    out = []
    for values, key in (
        ([s.get("iops") for s in secs], "iops"),
        ([s.get("bw_bytes") for s in secs], "bw_bytes"),
        (lat_means, "lat_mean_ns"),
    ):
        kept = [(float(v), _series(r, direction, key)) for v, r in zip(values, having, strict=True)
                if v is not None]  # fmt: skip
        out.append(Side(tuple(v for v, _ in kept), tuple(s for _, s in kept)))
    return out[0], out[1], out[2]


def _row(
    members: Sequence[_Group],
    direction: str,
    setups: Sequence[Setup],
    baseline: int,
    failed_count: dict[tuple[int, str, str], int],
) -> Row:
    members = sorted(members, key=lambda g: g.setup)
    figs = {g.setup: figures(g.results, direction) for g in members}
    sides = {g.setup: _sides(g.results, direction) for g in members}
    base = figs.get(baseline)
    base_sides = sides.get(baseline)
    cells = []
    for g in members:
        f = figs[g.setup]
        ratios: tuple[float | None, float | None, float | None]
        tests: tuple[Judgement, Judgement, Judgement]
        if g.setup == baseline:
            tests, ratios = (BASELINE_JUDGEMENT,) * 3, (None, None, None)
        elif base is None or base_sides is None:
            tests, ratios = (NO_BASELINE_JUDGEMENT,) * 3, (None, None, None)
        else:
            ratios = (
                _ratio(f.iops.mean, base.iops.mean),
                _ratio(f.bw_bytes.mean, base.bw_bytes.mean),
                _ratio(f.lat_mean_ns.mean, base.lat_mean_ns.mean),
            )
            iops, bw, lat = sides[g.setup]
            tests = (
                judge(iops, base_sides[0]),
                judge(bw, base_sides[1]),
                judge(lat, base_sides[2], higher_is_faster=False),
            )
        cells.append(
            Cell(
                setup=setups[g.setup].key,
                iops=f.iops,
                bw_bytes=f.bw_bytes,
                lat_mean_ns=f.lat_mean_ns,
                lat_p99_ns=f.lat_p99_ns,
                lat_p99_merged_ns=f.lat_p99_merged_ns,
                lat_p99_kind=f.lat_p99_kind,
                iops_ratio=ratios[0],
                bw_ratio=ratios[1],
                lat_mean_ratio=ratios[2],
                iops_test=tests[0],
                bw_test=tests[1],
                lat_test=tests[2],
                failed=failed_count.get((g.setup, g.workload, g.pkey), 0),
            )
        )
    names = list(dict.fromkeys(g.workload for g in members))
    first = next((g for g in members if g.setup == baseline), members[0])
    return Row(
        workload=" / ".join(names),
        direction=direction,
        params=copy.deepcopy(first.params),
        cells=tuple(cells),
        differs=_differs(members, setups),
    )


# -- context ----------------------------------------------------------------------------------


def _fio_version(run: RunRecord) -> str | None:
    if run.fio_version:
        return run.fio_version
    versions = dict.fromkeys(r.fio_version for r in run.results if r.fio_version)
    return ", ".join(v for v in versions if v) or None


def _context(runs: Sequence[RunRecord], setups: Sequence[Setup]) -> tuple[ContextDiff, ...]:
    """Every context field whose value differs between the setups: fio's version, the
    lines ``info`` shows of the host and the target's stack (throttles among them), and
    every other stored field (:func:`iobench.analysis.context.setup_context`)."""
    by_id = {run.id: run for run in runs}
    lines = []
    for s in setups:
        run = by_id[s.run_id]
        target = next((t for t in run.targets if t.spec == s.target), None)
        kind, size = (target.kind, target.size_bytes) if target else ("", None)
        found = setup_context(run.host or {}, kind, size, target.context if target else {})
        found = dataclasses.replace(found, lines={"fio version": _fio_version(run), **found.lines})
        lines.append((s.key, found))
    return tuple(ContextDiff(field=f, values=v) for f, v in context_differences(lines))
