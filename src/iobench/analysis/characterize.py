"""``iobench characterize``: find a target's IOPS limit, bandwidth limit and crossover block
size adaptively, in a fraction of a full sweep's time. Pure (docs/characterize.md).

The plan is a function of the points measured so far (:func:`next_probe`), so the run can
be replayed and explained from what is stored:

1. **climb** outstanding IO at a small block size (4 KiB): QD 1, 2, 4, ... until a doubling
   surely added less than CLIMB_GAIN (the two points' 95 % intervals say so), or two
   doublings added less than that together, or the deepest queue is reached;
2. the same at a large block size (1 MiB);
3. **extend** the block-size range when one limit binds at both ends (smaller blocks when
   the bandwidth limit already binds at 4 KiB, larger ones when the IOPS limit still binds
   at 1 MiB);
4. **check** the two-limit model on each side of the crossover it predicts; those points
   also add their samples to the limits on whose plateau they fall.

How long a point runs is the method's (``Settings.method``):

- ``fast`` (the default since issue 27): a ramp of 0.55 s, then as long as the point's figure
  needs to be within ``precision`` (its 95 % interval), judged before it runs from what the
  earlier points showed: the noise of their samples (``sample_ms`` apart) and the rate at
  this block size (``MIN_IOS`` IOs at least); at least ``min_point_s``, at most ``point_s``,
  in whole samples. The ramp's extra 0.05 s moves the start and the end of a point's
  figures off the whole tenths of a second from fio's start, where a cgroup throttle's
  bursts fall (one every 100 ms), and a late fio on a busy CPU would count one or not
  (measured: 2 of 64 points more than 2 % off, against 5 of 64 after a 0.5 s ramp);
- ``steady`` (before issue 27, and runs stored then): until fio's steady-state detection
  says its IOPS are stable (``ss=``), at least about 5 s, at most ``point_s``.

The whole stays within ``budget_s``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
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
from iobench.fio.logs import INTERVAL_MS, sample_options
from iobench.model import Workload
from iobench.records import ResultRecord
from iobench.units import fio_duration, format_size_short

CLIMB_GAIN = 0.05  # two doublings of outstanding IO that add less than this: saturated
# ... or one that surely adds less than half of it (the two points' 95 % intervals counted)
FLAT_GAIN = CLIMB_GAIN / 2
# fast: batches of samples that hold fewer IOs than this show how IOs are counted, not how
# the storage varies: a throttle lets large IOs through in bursts (1 MiB at 32 MiB/s: 1, 3
# or 6 in a 100 ms sample), so a second's count is a few IOs off at either edge, over 1 %
# of a batch below this many
MIN_SAMPLE_IOS = 200
MAX_EXTENSIONS = 2  # block-size steps tried beyond each end of the range
STEP_OVERHEAD_S = 1.0  # fio's start and stop around each point
METHODS = ("fast", "steady")
# fast: a point counts at least this many IOs, so that one IO more or less at either end of
# its time (a slow rate: 32 IOPS of 1 MiB) moves its figure by 1.6 % at most.
MIN_IOS = 64
# fast: the noise a point's length is judged by is that of its figure over this long (a
# point of one batch tells none)
BATCH_S = 1.0
T95 = 2.0  # about Student's t for a 95 % interval of a mean of tens of samples


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
    steady_pct: float = 5.0  # steady: fio ss=iops:<pct>%: max deviation from the window's mean
    repeat: int = 1  # each point runs this many times (--repeat); its mean is the point
    method: str = "fast"  # how long a point runs: "fast" or "steady" (the module's doc)
    ramp_s: float = 0.55  # fast: each point's ramp, left out of its figures (module doc)
    min_point_s: float = 1.0  # fast: the shortest point, after its ramp
    precision: float = 0.01  # fast: the half-width of a point's 95 % interval it runs for
    sample_ms: int = 100  # fast: the interval of a point's samples (fio's log_avg_msec)

    @property
    def steady_window_s(self) -> int:
        """fio's ss_dur: whole seconds, about a quarter of a point, 2 to 5."""
        return int(min(5, max(2, self.point_s // 4)))

    @property
    def steady_ramp_s(self) -> int:
        return 1 if self.point_s >= 6 else 0

    @property
    def shortest_point_s(self) -> float:
        """The least time a point takes (ramp and runtime), without fio's start and stop."""
        if self.method == "steady":
            return self.point_s
        return self.ramp_s + min(self.min_point_s, self.point_s)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Settings:
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        # Runs stored before issue 27 ran every point to fio's steady state.
        known.setdefault("method", "steady")
        return cls(**known)


def on_clients(s: Settings) -> Settings:
    """The settings of a characterization on fio servers: per-second samples and points of
    5 s at least, since the clients' aggregate leaves out each client's first and last
    second (analysis/together.py)."""
    if s.method != "fast":
        return s
    return replace(s, sample_ms=INTERVAL_MS, min_point_s=min(s.point_s, 5.0))


@dataclass(frozen=True)
class Probe:
    bs: int
    iodepth: int
    why: str  # "climb", "smaller blocks", "larger blocks", "crossover check"
    seconds: float | None = None  # fast: how long it runs after its ramp (None: point_s)


@dataclass(frozen=True)
class Decision:
    probe: Probe | None
    stop: str | None  # why there is no next probe


def _has_interval(p: Point) -> bool:
    return len(p.samples) >= 3


def _surely_flat(before: Point, after: Point, *, throttled: bool) -> bool:
    """Twice the outstanding IO of ``before`` added less than FLAT_GAIN, the upper end of
    the gain's 95 % interval (from the two points' intervals) included, and, unless a
    throttle set the plateau, lost less than CLIMB_GAIN, its lower end included. A fall
    beyond the intervals is no plateau: the two points disagree (on an uncapped loop
    device over RAM, QD1 read 36.7k IOPS and QD2 30.7k, and QD8 went on to 175k). At a
    throttle it is the throttle's burst in the first point, and the plateau is the
    throttle's."""
    if not (_has_interval(before) and _has_interval(after)) or before.iops <= 0:
        return False
    spread = math.hypot(_half_width(before), _half_width(after))
    gain = after.iops / before.iops - 1
    return gain + spread < FLAT_GAIN and (throttled or gain - spread > -CLIMB_GAIN)


def _half_width(p: Point) -> float:
    """The half-width of a point's 95 % interval, relative to its figure."""
    return (p.iops_high - p.iops_low) / 2 / p.iops if p.iops else math.inf


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
    # One flat doubling ends a fast climb once the curve is saturated by its own measure (a
    # point at twice its knee's queue): a throttle's burst in QD1, 6 % ahead of QD2 at the
    # cap, is flat, but QD2 alone is the plateau, and the answer would call it still rising.
    throttled = curve.throttle is not None
    if (
        s.method == "fast"
        and len(pts) >= 2
        and curve.saturated
        and _surely_flat(pts[-2], pts[-1], throttled=throttled)
    ):
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
    """What to measure next, and for how long, given every point so far and the seconds
    spent (and the targets' contexts: a plateau at a throttle is the throttle's, whatever
    the host did)."""
    mine = [p for p in points if p.rw == s.rw and p.numjobs == s.numjobs]
    by_bs = {c.bs: c for c in curves_at_throttles(curves(mine), contexts or {})}
    probe = _climb(by_bs.get(s.small_bs), s.small_bs, s) or _climb(
        by_bs.get(s.large_bs), s.large_bs, s
    )
    if probe is None:
        probe = _beyond(by_bs, s)
    if probe is None:
        return Decision(None, "done: every limit in reach was measured and checked")
    if s.method == "fast":
        probe = replace(probe, seconds=point_seconds(probe, by_bs, s))
    if elapsed_s + s.repeat * (_probe_s(probe, s) + STEP_OVERHEAD_S) > s.budget_s:
        return Decision(
            None,
            f"time budget reached before {format_size_short(probe.bs)} QD{probe.iodepth} "
            f"({probe.why})",
        )
    return Decision(probe, None)


def _probe_s(probe: Probe, s: Settings) -> float:
    """The time a probe's fio run takes, ramp included (its ceiling for steady points)."""
    if probe.seconds is None:
        return s.point_s
    return s.ramp_s + probe.seconds


def point_seconds(probe: Probe, by_bs: Mapping[int, Curve], s: Settings) -> float:
    """How long a fast point runs after its ramp: long enough for its figure to be within
    ``precision`` (95 %) given the noise of the points so far (:func:`relative_noise`: the
    seconds needed are BATCH_S x (2 x noise / precision)^2), and for MIN_IOS IOs at the
    rate expected at its block size; whole samples, from ``min_point_s`` to ``point_s``."""
    need = s.min_point_s
    sample_s = max(s.sample_ms, 1) / 1000
    noise = relative_noise([p for c in by_bs.values() for p in c.points])
    if noise is not None and s.precision > 0:
        need = max(need, (T95 * noise / s.precision) ** 2 * BATCH_S)
    rate = _expected_iops(probe, by_bs)
    if rate:
        need = max(need, MIN_IOS / rate)
    return min(s.point_s, round(math.ceil(round(need / sample_s, 6)) * sample_s, 3))


def relative_noise(points: Sequence[Point]) -> float | None:
    """How much a point's figure varies over BATCH_S, relative to it: the spread of the
    means of its samples in batches of BATCH_S about the point's mean, pooled over the
    points with two batches or more, less what counting whole IOs in a batch explains. Its
    samples' own spread overstates it: a throttle lets IOs through in bursts, a burst that
    falls into two samples is half in each, and one fio sent late (a busy CPU) is caught
    up in the next: their errors cancel over the point.
    Batches of fewer than MIN_SAMPLE_IOS IOs are left out (1 MiB at 32 IOPS: they show how
    IOs are counted, not how the storage varies; such points run for MIN_IOS IOs). None
    without such a point."""
    total, weight = 0.0, 0
    for p in points:
        size = max(1, round(BATCH_S / p.interval_s))
        batches = [
            statistics.fmean(p.samples[i : i + size])
            for i in range(0, len(p.samples) - size + 1, size)
        ]
        if len(batches) < 2:
            continue
        mean = statistics.fmean(batches)
        batch_ios = mean * size * p.interval_s
        if batch_ios < MIN_SAMPLE_IOS:
            continue
        spread = statistics.variance(batches) / mean**2
        total += max(0.0, spread - 0.25 / batch_ios**2) * (len(batches) - 1)
        weight += len(batches) - 1
    return math.sqrt(total / weight) if weight else None


def _expected_iops(probe: Probe, by_bs: Mapping[int, Curve]) -> float | None:
    """The IOPS a probe should deliver: the most its block size delivered so far (a deeper
    queue does not deliver less), else the two-limit model's; None when unknown."""
    curve = by_bs.get(probe.bs)
    if curve is not None:
        return curve.best.iops
    (limits,) = infer_limits(list(by_bs.values())) or (None,)
    if limits is None or limits.iops is None or limits.bw_bytes is None:
        return None
    return min(limits.iops.value, limits.bw_bytes.value / probe.bs)


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
    """A probe as a workload, time-based: a fast point runs its seconds after a short ramp,
    with samples every ``sample_ms``; a steady point until fio's steady-state detection
    ends it, at most ``point_s``."""
    jobs = f"x{s.numjobs}" if s.numjobs > 1 else ""
    name = f"{s.rw}-{format_size_short(probe.bs)}-qd{probe.iodepth}{jobs}"
    shape = Workload(
        name=name,
        rw=s.rw,
        bs=probe.bs,
        iodepth=probe.iodepth,
        numjobs=s.numjobs,
        ioengine=s.ioengine,
        direct=True,
        runtime_s=s.point_s,
        ramp_s=0.0,
        size=s.size,
    )
    if s.method == "fast":
        return replace(
            shape,
            runtime_s=s.point_s if probe.seconds is None else probe.seconds,
            ramp_s=s.ramp_s,
            options=sample_options(s.sample_ms),
        )
    return replace(
        shape,
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
