"""Steps in a per-second series: when a burst ended, the level the storage kept up after it,
and when it came back (docs/findings.md, "How a burst is found"). Pure.

A burst rarely ends on a second boundary: the second in which it ends did some IOs at the
burst rate and the rest at the sustained one, so its rate lies between the two levels. The
series is read as steady *levels* joined by short *transitions*:

1. **Noise.** The IOPS are taken in logarithms (a drop by 30 % is the same distance at any
   level, and IOPS jitter in proportion to their level; a zero counts as 1 % of the
   median). The noise, sigma, is the median absolute difference between neighbouring
   seconds, or the median absolute second difference if smaller, each scaled to a normal
   noise's standard deviation, and at least 2 %. A step or an outlier moves only a few
   differences, a slide hardly any second difference: the median keeps to the noise.
2. **Segments.** Binary segmentation: the series is cut where one cut lowers its squared
   error the most, then each part again, for as long as a cut lowers the error by more
   than ``PENALTY`` x sigma^2 x ln(n) (a penalty that grows with n, as BIC's does, so that
   noise seldom pays for a cut). A step, a transitional second and an outlier each end up
   in segments of their own.
3. **Levels.** Neighbouring segments within ``SAME_LEVEL`` of each other are one level. A
   level lasts at least ``MIN_LEVEL`` seconds and varies by at most ``STEADY_CV``; other
   seconds are transitions, outliers or unsteady stretches. Up to ``MAX_TRANSITION``
   seconds between two alike levels are outliers inside one level (a spike, a dip). A
   second at the end of a level that lies off it towards the next level (by more than
   ``EDGE_SHARE`` of the step, and more than the noise) is part of the transition.
4. **Steps.** Two neighbouring levels that differ make a step when at most
   ``MAX_TRANSITION`` seconds lie between them, neither drifts along its length by more
   than ``MAX_DRIFT`` of the step (beyond the noise), and the step explains their seconds
   at least twice as well as a straight line (``STEP_OVER_SLOPE``): a slide cut in pieces
   is still a slide. A longer transition is a ramp, not a step. The step's time keeps
   the count of IOs: a transitional second whose rate lies a share f of the way from the
   level after to the level before spent a share f of its time at the level before (in
   ``6000 x 6, 3453, 1500 x 8`` the 7th second is 43 % of the way from 1500 to 6000: the
   burst ended at 6.43 s). For the levels' figures and the time, a level's end second
   that lies off the rest of the level towards the other one, beyond the level's own
   noise, counts as transitional too.
5. **A drop.** From a level, a run of steps down that ends at least ``DROP_SHARE`` lower:
   the first level is the burst, the lowest one reached the sustained level. A later step
   up to within ``DROP_SHARE`` of the burst level is the burst coming back.

Times are seconds since the start of the samples (the end of the ramp); a sample stamped
``t`` covers the second before ``t``.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

DROP_SHARE = 0.30  # a drop by this share or more of the level before it
MIN_SAMPLES = 6
MIN_LEVEL = 3  # seconds a level lasts at least
MAX_TRANSITION = 2  # seconds a step may take between two levels
SAME_LEVEL = 0.15  # neighbours within this share of the higher one are one level
STEADY_CV = 0.25  # a level varies less than this (coefficient of variation)
MAX_DRIFT = 0.5  # a level drifts along its length by less than this share of its step
STEP_OVER_SLOPE = 0.5  # a step explains its two levels at least twice as well as a line
EDGE_SHARE = 0.2  # a level's end second this share of its step off it is transitional
OFF_NOISE = 2.0  # ... and off by more than this many sigmas
TRIM_FLOOR = 0.01  # a level's end second off its level by less than this is at it
MIN_NOISE = 0.02  # the least noise assumed, on the log scale (about 2 %)
PENALTY = 3.0  # a cut must lower the squared error by PENALTY x sigma^2 x ln(n)
ZERO_SHARE = 0.01  # a zero counts as this share of the median (it has no logarithm)


@dataclass(frozen=True)
class Step:
    """One change of level: when, and the mean per-second IOPS before and after."""

    at_s: float
    before: float
    after: float


@dataclass(frozen=True)
class Drop:
    at_s: float  # when the burst level ended (interpolated within a transitional second)
    before: float  # the burst level: its mean per-second IOPS
    after: float  # the sustained level: the lowest level after the drop
    seconds_before: int  # seconds measured at the burst level
    seconds_after: int  # seconds measured at the sustained level
    from_s: float = 0.0  # when the burst level began (0: at the start)
    recovered_at_s: float | None = None  # when the rate came back near the burst level
    steps: tuple[Step, ...] = ()  # every change of level from the burst level on
    lasts_to_end: bool = True  # the sustained level lasts to the last sample


@dataclass(frozen=True)
class _Level:
    own: tuple[int, ...]  # the indices of its seconds (outliers inside it left out)
    mean: float
    sd: float

    @property
    def first(self) -> int:
        return self.own[0]

    @property
    def last(self) -> int:
        return self.own[-1]


def detect_drop(t_s: Sequence[float], values: Sequence[float | None]) -> Drop | None:
    """The first burst that ends in a per-second series, or None (see the module's text).

    ``t_s``: each sample's time in seconds (the end of its interval); ``values``: the
    per-second IOPS, None where a second has no value (skipped, never read as zero); the
    two pair up one to one (ValueError otherwise)."""
    pts = [(float(t), float(v)) for t, v in zip(t_s, values, strict=True) if v is not None]
    if len(pts) < MIN_SAMPLES:
        return None
    ts = [t for t, _ in pts]
    vs = [v for _, v in pts]
    median = statistics.median(vs)
    if median <= 0:
        return None
    ys = [math.log(max(v, ZERO_SHARE * median)) for v in vs]
    sigma = _noise(ys)
    cuts = _segments(ys, PENALTY * sigma**2 * math.log(len(ys)))
    levels = _levels(_merge_alike(cuts, vs), vs, sigma)
    return _drop(levels, ts, vs, _interval(ts), sigma)


# -- 1. noise ----------------------------------------------------------------------------------


def _noise(ys: Sequence[float]) -> float:
    """The noise of a series: the median absolute difference between neighbours, and the
    median absolute second difference, each scaled to a normal noise's standard deviation;
    the smaller of the two. Steps and outliers move few differences; a slide moves every
    first difference but hardly any second one."""
    d1 = [abs(b - a) for a, b in itertools.pairwise(ys)]
    d2 = [abs(ys[i + 1] - 2 * ys[i] + ys[i - 1]) for i in range(1, len(ys) - 1)]
    sigma = 1.4826 * min(statistics.median(d1) / math.sqrt(2), statistics.median(d2) / math.sqrt(6))
    return max(sigma, MIN_NOISE)


# -- 2. segments --------------------------------------------------------------------------------


def _segments(ys: Sequence[float], penalty: float) -> list[tuple[int, int]]:
    """Binary segmentation: index ranges [i, j) in order."""
    s1 = [0.0]
    s2 = [0.0]
    for y in ys:
        s1.append(s1[-1] + y)
        s2.append(s2[-1] + y * y)

    def sse(i: int, j: int) -> float:
        total = s1[j] - s1[i]
        return max(s2[j] - s2[i] - total * total / (j - i), 0.0)

    found: list[tuple[int, int]] = []
    todo = [(0, len(ys))]
    while todo:
        i, j = todo.pop()
        whole = sse(i, j)
        gain, k = max(((whole - sse(i, k) - sse(k, j), k) for k in range(i + 1, j)), default=(0, i))
        if gain > penalty:
            todo += [(i, k), (k, j)]
        else:
            found.append((i, j))
    return sorted(found)


# -- 3. levels ----------------------------------------------------------------------------------


def _alike(a: float, b: float) -> bool:
    return min(a, b) >= (1 - SAME_LEVEL) * max(a, b)


def _mean(vs: Sequence[float], idx: Sequence[int]) -> float:
    return statistics.fmean(vs[i] for i in idx)


def _merge_alike(cuts: list[tuple[int, int]], vs: Sequence[float]) -> list[tuple[int, int]]:
    """Neighbouring segments at the same level joined, the closest pair first."""
    segs = list(cuts)
    while True:
        means = [_mean(vs, range(i, j)) for i, j in segs]
        pairs = [
            (abs(math.log(max(a, 1e-9) / max(b, 1e-9))), n)
            for n, (a, b) in enumerate(itertools.pairwise(means))
            if _alike(a, b)
        ]
        if not pairs:
            return segs
        _, n = min(pairs)
        segs[n : n + 2] = [(segs[n][0], segs[n + 1][1])]


def _level(vs: Sequence[float], own: Sequence[int]) -> _Level:
    xs = [vs[i] for i in own]
    return _Level(tuple(own), statistics.fmean(xs), statistics.pstdev(xs))


def _levels(segs: list[tuple[int, int]], vs: Sequence[float], sigma: float) -> list[_Level]:
    """The steady levels, in order; a few seconds between two alike ones are outliers
    inside one level."""
    levels: list[_Level] = []
    for i, j in segs:
        if j - i < MIN_LEVEL:
            continue
        lv = _level(vs, range(i, j))
        if lv.mean <= 0 or lv.sd / lv.mean > STEADY_CV:
            continue
        prev = levels[-1] if levels else None
        if prev and i - prev.last - 1 <= MAX_TRANSITION and _alike(prev.mean, lv.mean):
            levels[-1] = _level(vs, prev.own + lv.own)
        else:
            levels.append(lv)
    for n in range(len(levels) - 1):
        levels[n], levels[n + 1] = _peel(levels[n], levels[n + 1], vs, sigma)
    return levels


def _peel(a: _Level, b: _Level, vs: Sequence[float], sigma: float) -> tuple[_Level, _Level]:
    """Seconds at the end of ``a`` or the start of ``b`` that lie clearly off their level
    towards the other one belong to the transition between them."""
    if _alike(a.mean, b.mean):
        return a, b
    while len(a.own) > 1 and _off(vs[a.last], vs, a.own[:-1], b, sigma):
        a = _level(vs, a.own[:-1])
    while len(b.own) > 1 and _off(vs[b.first], vs, b.own[1:], a, sigma):
        b = _level(vs, b.own[1:])
    return a, b


def _off(v: float, vs: Sequence[float], rest: Sequence[int], other: _Level, sigma: float) -> bool:
    """Off its level (the median of ``rest``) towards ``other``: by more than EDGE_SHARE of
    the step between them, and by more than the noise."""
    at = statistics.median(vs[i] for i in rest)
    if at == other.mean:
        return False
    share = (v - other.mean) / (at - other.mean)
    return share < 1 - EDGE_SHARE and abs(math.log(max(v, 1e-9) / at)) > OFF_NOISE * sigma


# -- 4. steps -----------------------------------------------------------------------------------


def _interval(ts: Sequence[float]) -> float:
    gaps = [b - a for a, b in itertools.pairwise(ts) if b > a]
    return min(gaps) if gaps else 1.0


def _is_step(
    a: _Level, b: _Level, ts: Sequence[float], vs: Sequence[float], dt: float, sigma: float
) -> bool:
    """Two different levels close enough (a transition of at most MAX_TRANSITION seconds),
    each flat, and a step explains them better than a slide."""
    if b.first - a.last - 1 > MAX_TRANSITION or _alike(a.mean, b.mean):
        return False
    if min(len(a.own), len(b.own)) < MIN_LEVEL:
        return False
    for lv in (a, b):
        lts = [ts[i] for i in lv.own]
        slope, _ = _line(lts, [vs[i] for i in lv.own])
        # The slope's standard error, from the series' noise.
        se = sigma * lv.mean / math.sqrt(sum((t - statistics.fmean(lts)) ** 2 for t in lts))
        if abs(slope) > 2 * se and abs(slope) * len(lv.own) * dt > MAX_DRIFT * abs(a.mean - b.mean):
            return False  # a slope, not a level
    step = sum((vs[i] - a.mean) ** 2 for i in a.own) + sum((vs[i] - b.mean) ** 2 for i in b.own)
    both = a.own + b.own
    _, line = _line([ts[i] for i in both], [vs[i] for i in both])
    return step <= STEP_OVER_SLOPE * line


def _line(ts: Sequence[float], vs: Sequence[float]) -> tuple[float, float]:
    """The least-squares line through the points: its slope and squared error."""
    mt, mv = statistics.fmean(ts), statistics.fmean(vs)
    stt = sum((t - mt) ** 2 for t in ts)
    slope = sum((t - mt) * (v - mv) for t, v in zip(ts, vs, strict=True)) / stt if stt else 0.0
    return slope, sum((v - mv - slope * (t - mt)) ** 2 for t, v in zip(ts, vs, strict=True))


def _step_time(a: _Level, b: _Level, ts: Sequence[float], vs: Sequence[float], dt: float) -> float:
    """When the level changed from ``a`` to ``b``: the seconds between them were at ``a``
    for the share of their time that their rates say (the count of IOs is kept)."""
    between = range(a.last + 1, b.first)
    if ts[b.first] - ts[a.last] > (len(between) + 1.5) * dt:
        return ts[a.last]  # seconds are missing there: the last one seen at the level
    shares = [min(max((vs[i] - b.mean) / (a.mean - b.mean), 0.0), 1.0) for i in between]
    return round(ts[a.last] + sum(shares) * dt, 2)


def _refine(chain: Sequence[_Level], vs: Sequence[float]) -> list[_Level]:
    """The levels of a chain of steps, each without the second at its end that lies off
    it towards its neighbour beyond its own noise (a transition within EDGE_SHARE of the
    step, which the segments left in the level): the levels' means and the steps' times
    then come from the seconds at each level alone."""
    out = list(chain)
    for n in range(len(out) - 1):
        out[n] = _trim(out[n], vs, out[n + 1].mean, last=True)
        out[n + 1] = _trim(out[n + 1], vs, out[n].mean, last=False)
    return out


def _trim(lv: _Level, vs: Sequence[float], towards: float, *, last: bool) -> _Level:
    edge, rest = (lv.own[-1], lv.own[:-1]) if last else (lv.own[0], lv.own[1:])
    if len(rest) < MIN_LEVEL:
        return lv
    at = _level(vs, rest)
    off = vs[edge] - at.mean
    if off * (towards - at.mean) > 0 and abs(off) > max(OFF_NOISE * at.sd, TRIM_FLOOR * at.mean):
        return at
    return lv


# -- 5. a drop ----------------------------------------------------------------------------------


def _drop(
    levels: list[_Level], ts: Sequence[float], vs: Sequence[float], dt: float, sigma: float
) -> Drop | None:
    links = [_is_step(a, b, ts, vs, dt, sigma) for a, b in itertools.pairwise(levels)]
    for start, first in enumerate(levels):
        low = start
        while low < len(links) and links[low] and levels[low + 1].mean < levels[low].mean:
            low += 1
        if low == start or levels[low].mean > (1 - DROP_SHARE) * first.mean:
            continue
        # The chain of steps from the burst on, until an unsteady stretch or the end.
        end = start
        while end < len(links) and links[end]:
            end += 1
        chain = _refine(levels[start : end + 1], vs)
        burst = chain[0]
        steps = tuple(
            Step(_step_time(a, b, ts, vs, dt), a.mean, b.mean) for a, b in itertools.pairwise(chain)
        )
        # Back within DROP_SHARE of the burst level, after the lowest one was reached.
        back = next(
            (
                n
                for n, s in enumerate(steps)
                if n >= low - start and s.after >= (1 - DROP_SHARE) * burst.mean
            ),
            None,
        )
        # The sustained level: the lowest one reached before the burst came back.
        until = len(chain) - 1 if back is None else back
        sustained = min(chain[low - start : until + 1], key=lambda lv: lv.mean)
        return Drop(
            at_s=steps[0].at_s,
            before=burst.mean,
            after=sustained.mean,
            seconds_before=len(burst.own),
            seconds_after=len(sustained.own),
            from_s=round(ts[burst.first] - dt, 2),
            recovered_at_s=None if back is None else steps[back].at_s,
            steps=steps,
            lasts_to_end=sustained is chain[-1]
            and end == len(levels) - 1
            and len(vs) - 1 - sustained.last <= MAX_TRANSITION,
        )
    return None
