"""The curves and limits a run's results make (sweep, characterize, orion-simple), and the
limits of several runs side by side. Pure: stored runs in, analysis out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from iobench.analysis.characterize import Characterization, Settings, characterize
from iobench.analysis.curves import (
    Curve,
    Estimate,
    Limits,
    curves,
    infer_limits,
    points_from_results,
)
from iobench.analysis.throttles import curves_at_throttles, with_throttles
from iobench.records import ResultRecord, RunRecord

ORION_SUITE = "orion-simple"
LIMIT_KEYS = ("iops", "bw_bytes", "crossover_bs")


def analysis_kind(run: RunRecord) -> str | None:
    plan = run.suite_def.plan
    if plan is not None and plan.kind == "characterize":
        return "characterize"
    if run.suite_def.sweep:
        return "sweep"
    if run.suite == ORION_SUITE:
        return "orion"
    return None


def place_results(run: RunRecord) -> list[ResultRecord]:
    """The results a run's curves are made of, each under its place: its target on one
    host; on clients, their aggregate at each client count under ``<k> clients`` (each
    client's own share left out: the limits are those of the clients together)."""
    out = []
    for r in run.results:
        if r.client is None:
            out.append(r)
        elif r.client == "all":
            out.append(dataclasses.replace(r, target=f"{r.clients} clients"))
    return out


def place_contexts(run: RunRecord) -> dict[str, dict[str, Any] | None]:
    """Each place's stored context (see :func:`place_results`): clients at every count
    share the run's one target's."""
    contexts: dict[str, dict[str, Any] | None] = {t.spec: t.context for t in run.targets}
    shared = run.targets[0].context if run.targets else None
    for r in run.results:
        if r.client == "all":
            contexts[f"{r.clients} clients"] = shared
    return contexts


def run_characterizations(run: RunRecord) -> list[Characterization]:
    """A characterize run's answer for each place (target, or client count), in order."""
    plan = run.suite_def.plan
    settings = Settings.from_dict(dict(plan.settings or {}) if plan is not None else {})
    points = points_from_results(place_results(run))
    contexts = place_contexts(run)
    places = list(dict.fromkeys(p.target for p in points)) or [t.spec for t in run.targets[:1]]
    out = []
    for place in places:
        mine = [p for p in points if p.target == place]
        elapsed = sum(p.seconds or 0.0 for p in mine)
        c = characterize(mine, settings, elapsed, contexts)
        c = dataclasses.replace(c, place=place)
        if c.limits is not None:
            c = dataclasses.replace(c, limits=with_throttles(c.limits, contexts.get(place)))
        out.append(c)
    return out


def run_curves(run: RunRecord, kind: str) -> tuple[list[Curve], list[Limits]]:
    """A sweep's or orion-simple's curves, and the limits inferred across block sizes (none
    for orion-simple: one block size per access pattern)."""
    contexts = place_contexts(run)
    cs = curves_at_throttles(curves(points_from_results(place_results(run))), contexts)
    if kind == "orion":
        return cs, []
    return cs, [with_throttles(lim, contexts.get(lim.target)) for lim in infer_limits(cs)]


def run_limits(run: RunRecord) -> list[Limits]:
    """The limits a sweep or characterize run found (one per target and access pattern);
    none for other runs and orion-simple."""
    kind = analysis_kind(run)
    return run_curves(run, kind)[1] if kind in ("sweep", "characterize") else []


@dataclasses.dataclass(frozen=True)
class LimitCell:
    setup: str  # the comparison's setup key
    estimate: Estimate | None
    why_none: str  # why no limit was found ("" with an estimate)
    throttle: str | None  # the cgroup throttle the limit equals, if any
    ratio: float | None  # to the baseline's value; None for the baseline or without one


@dataclasses.dataclass(frozen=True)
class LimitRow:
    rw: str
    key: str  # iops | bw_bytes | crossover_bs
    cells: tuple[LimitCell, ...]  # one per setup that found curves for this rw


def compare_limits(
    found: Sequence[tuple[str, Sequence[Limits]]], baseline: str
) -> tuple[LimitRow, ...]:
    """The limits of several setups (``(setup key, its limits)``) side by side: a row per
    access pattern and limit that two or more setups measured, with each one's ratio to the
    baseline setup's value."""
    rows = []
    patterns = list(dict.fromkeys(lim.rw for _, lims in found for lim in lims))
    for rw in patterns:
        having = [(key, lim) for key, lims in found for lim in lims if lim.rw == rw]
        if len({key for key, _ in having}) < 2:
            continue
        base = next((lim for key, lim in having if key == baseline), None)
        for name in LIMIT_KEYS:
            base_est: Estimate | None = getattr(base, name) if base is not None else None
            cells = []
            for key, lim in having:
                est: Estimate | None = getattr(lim, name)
                ratio = None
                if key != baseline and est is not None and base_est is not None and base_est.value:
                    ratio = est.value / base_est.value
                cells.append(
                    LimitCell(
                        setup=key,
                        estimate=est,
                        why_none="" if est is not None else lim.reasons.get(name, ""),
                        throttle=lim.throttles.get(name),
                        ratio=ratio,
                    )
                )
            rows.append(LimitRow(rw=rw, key=name, cells=tuple(cells)))
    return tuple(rows)
