"""``iobench characterize``: find a target's IOPS limit, bandwidth limit and crossover block
size adaptively, in a fraction of a full sweep's time. Pure (docs/characterize.md).

The plan is a function of the points measured so far (:func:`next_probe`), so the run can
be replayed and explained from what is stored:

1. **climb** outstanding IO at a small block size (4 KiB): QD 1, 2, 4, ... until two
   doublings add less than CLIMB_GAIN together, or the deepest queue is reached;
2. the same at a large block size (1 MiB);
3. **extend** the block-size range when one limit binds at both ends (smaller blocks when
   the bandwidth limit already binds at 4 KiB, larger ones when the IOPS limit still binds
   at 1 MiB);
4. **check** the two-limit model on each side of the crossover it predicts.

Every point runs until fio's steady-state detection says its IOPS are stable (``ss=``), at
most ``point_s``; the whole stays within ``budget_s``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from iobench.analysis.curves import (
    Curve,
    Limits,
    Point,
    curve_document,
    curves,
    infer_limits,
    points_from_results,
)
from iobench.analysis.throttles import curves_at_throttles
from iobench.model import Workload
from iobench.records import ResultRecord
from iobench.units import fio_duration, format_size_short

CLIMB_GAIN = 0.05  # two doublings of outstanding IO that add less than this: saturated
MAX_EXTENSIONS = 2  # block-size steps tried beyond each end of the range
STEP_OVERHEAD_S = 1.0  # fio's start and stop around each point


@dataclass(frozen=True)
class Settings:
    rw: str = "randread"
    small_bs: int = 4096
    large_bs: int = 1 << 20
    numjobs: int = 1
    max_qd: int = 256
    budget_s: float = 300.0
    point_s: float = 15.0  # the longest one point may run
    size: int = 1 << 30  # test area
    ioengine: str = "libaio"
    min_bs: int = 512
    max_bs: int = 64 << 20
    steady_pct: float = 5.0  # fio ss=iops:<pct>%: max deviation from the window's mean
    repeat: int = 1  # each point runs this many times (--repeat); its mean is the point

    @property
    def steady_window_s(self) -> int:
        """fio's ss_dur: whole seconds, about a quarter of a point, 2 to 5."""
        return int(min(5, max(2, self.point_s // 4)))

    @property
    def steady_ramp_s(self) -> int:
        return 1 if self.point_s >= 6 else 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Settings:
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass(frozen=True)
class Probe:
    bs: int
    iodepth: int
    why: str  # "climb", "smaller blocks", "larger blocks", "crossover check"


@dataclass(frozen=True)
class Decision:
    probe: Probe | None
    stop: str | None  # why there is no next probe


def _climb(curve: Curve | None, bs: int, s: Settings) -> Probe | None:
    """The next queue depth of a climb at ``bs``; None when the climb is over."""
    if curve is None:
        return Probe(bs, 1, "climb")
    pts = curve.points
    last = pts[-1]
    # A busy host does not end the climb: shallow queues can cost more CPU per IO than deep
    # ones (a throttle wakes fio for every IO), so only the plateau is judged by it.
    if last.iodepth >= s.max_qd:
        return None
    if len(pts) >= 3 and max(pts[-1].iops, pts[-2].iops) < (1 + CLIMB_GAIN) * pts[-3].iops:
        return None
    return Probe(bs, min(last.iodepth * 2, s.max_qd), "climb")


def _pow2_at_most(value: float) -> int:
    return 1 << max(0, math.floor(math.log2(max(value, 1))))


def _plateau_qd(cs: Sequence[Curve], s: Settings) -> int:
    """A queue depth that saturated every climb so far: twice the deepest knee."""
    knees = [c.knee.iodepth for c in cs if len(c.points) > 1]
    return min(s.max_qd, 2 * max(knees, default=1))


def next_probe(
    points: Sequence[Point],
    s: Settings,
    elapsed_s: float,
    contexts: Mapping[str, dict[str, Any] | None] | None = None,
) -> Decision:
    """What to measure next, given every point so far and the seconds spent (and the
    targets' contexts: a plateau at a throttle is the throttle's, whatever the host did)."""
    mine = [p for p in points if p.rw == s.rw and p.numjobs == s.numjobs]
    by_bs = {c.bs: c for c in curves_at_throttles(curves(mine), contexts or {})}
    probe = _climb(by_bs.get(s.small_bs), s.small_bs, s) or _climb(
        by_bs.get(s.large_bs), s.large_bs, s
    )
    if probe is None:
        probe = _beyond(by_bs, s)
    if probe is None:
        return Decision(None, "done: every limit in reach was measured and checked")
    if elapsed_s + s.repeat * (s.point_s + STEP_OVERHEAD_S) > s.budget_s:
        return Decision(
            None,
            f"time budget reached before {format_size_short(probe.bs)} QD{probe.iodepth} "
            f"({probe.why})",
        )
    return Decision(probe, None)


def _beyond(by_bs: dict[int, Curve], s: Settings) -> Probe | None:
    """After both climbs: extend the block-size range, or check the crossover."""
    (limits,) = infer_limits(list(by_bs.values())) or (None,)
    if limits is None:
        return None
    qd = _plateau_qd(list(by_bs.values()), s)
    measured = sorted(by_bs)
    if limits.codes.get("iops") == "other-limit-binds":
        smaller = max(s.min_bs, measured[0] // 4)
        if smaller < measured[0] and _steps_below(measured, s) < MAX_EXTENSIONS:
            return Probe(smaller, qd, "smaller blocks")
        return None
    if limits.codes.get("bw_bytes") == "other-limit-binds":
        larger = min(s.max_bs, s.size, measured[-1] * 4)
        if larger > measured[-1] and _steps_above(measured, s) < MAX_EXTENSIONS:
            return Probe(larger, qd, "larger blocks")
        return None
    if limits.crossover_bs is None:
        return None  # a limit is out of reach (host-bound, still rising): nothing to check
    cross = limits.crossover_bs.value
    for bs in (_pow2_at_most(cross / 2), 2 * _pow2_at_most(cross * 2)):
        bs = max(s.min_bs, min(bs, s.max_bs))
        if bs not in by_bs:
            return Probe(bs, qd, "crossover check")
    return None


def _steps_below(measured: Sequence[int], s: Settings) -> int:
    return sum(1 for bs in measured if bs < s.small_bs)


def _steps_above(measured: Sequence[int], s: Settings) -> int:
    return sum(1 for bs in measured if bs > s.large_bs)


def probe_workload(probe: Probe, s: Settings) -> Workload:
    """A probe as a workload: time-based, ended by fio's steady-state detection."""
    jobs = f"x{s.numjobs}" if s.numjobs > 1 else ""
    return Workload(
        name=f"{s.rw}-{format_size_short(probe.bs)}-qd{probe.iodepth}{jobs}",
        rw=s.rw,
        bs=probe.bs,
        iodepth=probe.iodepth,
        numjobs=s.numjobs,
        ioengine=s.ioengine,
        direct=True,
        runtime_s=s.point_s,
        ramp_s=0.0,
        size=s.size,
        options=(
            ("ss", f"iops:{s.steady_pct:g}%"),
            ("ss_dur", fio_duration(float(s.steady_window_s))),
            ("ss_ramp", fio_duration(float(s.steady_ramp_s))),
        ),
    )


# -- the answer ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """A block size near the crossover: what it delivered against the model's prediction."""

    bs: int
    iops: float
    model_iops: float

    @property
    def deviation(self) -> float:
        return self.iops / self.model_iops - 1


@dataclass(frozen=True)
class Characterization:
    settings: Settings
    limits: Limits | None
    curves: tuple[Curve, ...]
    checks: tuple[Check, ...]
    stop: str
    elapsed_s: float
    points: int
    place: str = ""  # the target, or "<k> clients" (analysis.runcurves.place_results)


def characterization_document(c: Characterization, p99_under_ns: float | None) -> dict[str, Any]:
    """The answer of ``characterize --json`` without the run's identity (docs/characterize.md):
    ``limits`` (``iops``, ``bw_bytes``, ``crossover_bs``: each ``{value, low, high, basis}``
    or null), ``reasons`` for the nulls, the block-size table, checks and curves."""
    limits = c.limits.document() if c.limits else None
    return {
        "place": c.place,
        "rw": c.settings.rw,
        "settings": c.settings.as_dict(),
        "elapsed_s": c.elapsed_s,
        "points": c.points,
        "stop": c.stop,
        "limits": limits["limits"]
        if limits
        else {"iops": None, "bw_bytes": None, "crossover_bs": None},
        "reasons": limits["reasons"]
        if limits
        else dict.fromkeys(("iops", "bw_bytes", "crossover_bs"), "nothing was measured"),
        "reason_codes": limits["reason_codes"] if limits else {},
        # The cgroup throttle a limit equals, if any: the throttle's figure, not the storage's.
        "throttles": limits["throttles"] if limits else {"iops": None, "bw_bytes": None},
        "table": limits["table"] if limits else [],
        "checks": [
            {"bs": x.bs, "iops": x.iops, "model_iops": x.model_iops, "deviation": x.deviation}
            for x in c.checks
        ],
        "curves": [curve_document(cv, p99_under_ns) for cv in c.curves],
    }


def characterize(
    points: Sequence[Point],
    s: Settings,
    elapsed_s: float,
    contexts: Mapping[str, dict[str, Any] | None] | None = None,
) -> Characterization:
    """The answer from the points measured; ``contexts`` (target -> stored context) tell
    which plateaus are at a cgroup throttle, and so not the host's."""
    mine = [p for p in points if p.rw == s.rw and p.numjobs == s.numjobs]
    cs = curves_at_throttles(curves(mine), contexts or {})
    (limits,) = infer_limits(cs) or (None,)
    checks: list[Check] = []
    if limits and limits.iops and limits.bw_bytes:
        for c in cs:
            if c.bs in (s.small_bs, s.large_bs):
                continue
            model = min(limits.iops.value, limits.bw_bytes.value / c.bs)
            checks.append(Check(c.bs, c.best.iops, model))
    decision = next_probe(points, s, elapsed_s, contexts)
    return Characterization(
        settings=s,
        limits=limits,
        curves=tuple(cs),
        checks=tuple(checks),
        stop=decision.stop or "stopped before its plan was done (interrupted or failed)",
        elapsed_s=elapsed_s,
        points=len(mine),
    )


class CharacterizeChooser:
    """The :class:`iobench.engine.Chooser` of ``iobench characterize``: each next
    workload from :func:`next_probe` over one place's results so far, within the budget
    of that place's seconds."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.budget_s = settings.budget_s

    def definition(self) -> dict[str, Any]:
        return {"kind": "characterize", "settings": self.settings.as_dict()}

    def next_workload(
        self, done: Sequence[ResultRecord], context: dict[str, Any], elapsed_s: float
    ) -> Workload | None:
        contexts = {r.target: context for r in done}
        decision = next_probe(points_from_results(done), self.settings, elapsed_s, contexts)
        return None if decision.probe is None else probe_workload(decision.probe, self.settings)
