"""The edges of the burst detector's rules (docs/findings.md, "How a burst is found"), as
the finding says them: a drop of exactly DROP_SHARE, a return to exactly DROP_SHARE of the
burst level, the unsteady seconds after the sustained level ("for the last 6 s" or "for
6 s"), missing seconds around the step, samples that are not a second apart."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobench.analysis.drops import (
    DROP_SHARE,
    MAX_TRANSITION,
    MIN_SAMPLES,
    SAME_LEVEL,
    STEADY_CV,
    Drop,
    _alike,
    _interval,
    _is_step,
    _Level,
    _levels,
    _line,
    _noise,
    _segments,
    detect_drop,
)
from iobench.analysis.measured import drop_data, drop_text

ENDED = "a burst that ended (burst credits, a throttle, a write cache filling up)"
CAME_BACK = (
    "a burst that ended and came back (burst credits that ran out and refilled, a "
    "throttle lifted, a write cache that filled up and flushed)"
)


def drop_in(values: Sequence[float | None], every: float = 1.0) -> Drop | None:
    return detect_drop([every * (i + 1) for i in range(len(values))], values)


def said(values: Sequence[float | None], every: float = 1.0) -> str | None:
    """The finding's text of the drop in ``values`` (None: no drop)."""
    drop = drop_in(values, every)
    return None if drop is None else drop_text(drop)


# -- how deep a drop is ---------------------------------------------------------------------------


@pytest.mark.parametrize("burst", [1000.0, 6000.0, 250_000.0])
def test_a_drop_of_exactly_drop_share_is_a_burst_that_ended(burst: float) -> None:
    assert DROP_SHARE == 0.30
    low = burst * (1 - DROP_SHARE)
    assert said([burst] * 6 + [low] * 6) == (
        f"{_iops(burst)} IOPS for the first 6 s, then {_iops(low)} IOPS for the last 6 s "
        f"(30% lower): {ENDED}"
    )


@pytest.mark.parametrize("burst", [1000.0, 6000.0, 250_000.0])
def test_a_drop_just_under_drop_share_is_no_finding(burst: float) -> None:
    assert said([burst] * 6 + [burst * 0.701] * 6) is None


def test_steps_that_add_up_to_drop_share_are_one_drop() -> None:
    """Two steps of 16 % and 16.7 % (each a step, neither a drop) reach exactly 30 %."""
    assert said([1000.0] * 5 + [840.0] * 5 + [700.0] * 5) == (
        f"1.00k IOPS for the first 5 s, then 840 IOPS, then 700 IOPS from 10 s for "
        f"the last 5 s (30% lower): {ENDED}"
    )
    assert said([1000.0] * 5 + [840.0] * 5 + [701.0] * 5) is None


# -- coming back ----------------------------------------------------------------------------------


def test_back_to_exactly_drop_share_of_the_burst_is_the_burst_coming_back() -> None:
    drop = drop_in([1000.0] * 6 + [300.0] * 5 + [700.0] * 5)
    assert drop is not None
    assert (drop.after, drop.seconds_after, drop.recovered_at_s) == (300.0, 5, 11.0)
    assert drop_text(drop) == (
        f"1.00k IOPS for the first 6 s, then 300 IOPS for 5 s (70% lower), back to 700 IOPS "
        f"from 11 s: {CAME_BACK}"
    )
    assert drop_data(drop)["recovered_at_s"] == 11.0


def test_a_step_up_that_stays_further_below_is_not_coming_back() -> None:
    assert said([1000.0] * 6 + [300.0] * 5 + [699.0] * 5) == (
        f"1.00k IOPS for the first 6 s, then 300 IOPS for 5 s (70% lower), then 699 IOPS "
        f"from 11 s: {ENDED}"
    )


def test_coming_back_is_counted_only_after_the_lowest_level() -> None:
    """A first step down that is not yet a drop, then the drop, then back: the return is
    the step up after the lowest level, the sustained level the lowest."""
    drop = drop_in([1000.0] * 5 + [800.0] * 5 + [400.0] * 5 + [1000.0] * 5)
    assert drop is not None
    assert (drop.before, drop.after, drop.seconds_after) == (1000.0, 400.0, 5)
    assert drop.recovered_at_s == 15.0
    assert [(s.at_s, s.after) for s in drop.steps] == [(5.0, 800.0), (10.0, 400.0), (15.0, 1000.0)]


# -- what follows the sustained level -------------------------------------------------------------


UNSTEADY = [4000.0, 500.0, 3500.0, 800.0, 3000.0]


@pytest.mark.parametrize("tail", range(MAX_TRANSITION + 1))
def test_up_to_max_transition_unsteady_seconds_at_the_end_still_say_the_last(tail: int) -> None:
    assert said([6000.0] * 6 + [1500.0] * 6 + UNSTEADY[:tail]) == (
        f"6.00k IOPS for the first 6 s, then 1.50k IOPS for the last 6 s (75% lower): {ENDED}"
    )


@pytest.mark.parametrize("tail", range(MAX_TRANSITION + 1, len(UNSTEADY) + 1))
def test_an_unsteady_stretch_after_the_sustained_level_is_not_the_last_seconds(tail: int) -> None:
    drop = drop_in([6000.0] * 6 + [1500.0] * 6 + UNSTEADY[:tail])
    assert drop is not None and not drop.lasts_to_end
    assert drop_text(drop) == (
        f"6.00k IOPS for the first 6 s, then 1.50k IOPS for 6 s (75% lower): {ENDED}"
    )


def test_a_level_after_an_unsteady_stretch_is_not_the_same_stretch() -> None:
    """The sustained level, seconds of no level, then the same rate again: the first
    stretch is not "the last" seconds."""
    drop = drop_in([6000.0] * 6 + [1500.0] * 6 + UNSTEADY[:4] + [1500.0] * 5)
    assert drop is not None and not drop.lasts_to_end
    assert drop.seconds_after == 6


# -- missing seconds and sampling intervals -------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "at_s", "after_s"),
    [
        ([4000] * 5 + [2500] + [1000] * 6, 5.5, 6),  # the transitional second, half way
        ([4000] * 5 + [2500, None] + [1000] * 5, 5, 5),  # it, then a second missing
        ([4000] * 5 + [None, 2500] + [1000] * 5, 5, 5),  # a second missing, then it
        ([4000] * 5 + [None] + [1000] * 6, 5, 6),  # the step's second missing
        ([4000] * 5 + [None, None] + [1000] * 5, 5, 5),
    ],
)
def test_where_seconds_are_missing_the_drop_is_at_the_last_one_seen(
    values: list[float | None], at_s: float, after_s: int
) -> None:
    drop = drop_in(values)
    assert drop is not None
    assert (drop.at_s, drop.seconds_before, drop.seconds_after) == (at_s, 5, after_s)


@pytest.mark.parametrize("every", [0.5, 2.0, 5.0])
def test_samples_further_apart_or_closer_scale_the_times(every: float) -> None:
    drop = drop_in([4000] * 5 + [2500] + [1000] * 6, every)
    assert drop is not None
    assert drop.at_s == pytest.approx(every * 5.5)
    assert drop.from_s == 0.0
    late = drop_in([1000] * 4 + [4000] * 5 + [2500] + [1000] * 6, every)
    assert late is not None
    assert late.from_s == pytest.approx(every * 4)
    assert late.at_s == pytest.approx(every * 9.5)


# -- properties -----------------------------------------------------------------------------------


@settings(max_examples=60)
@given(
    st.integers(min_value=0, max_value=10_000),
    st.floats(min_value=0.001, max_value=1000.0),
    st.integers(min_value=3, max_value=10),
    st.integers(min_value=3, max_value=10),
    st.floats(min_value=0.05, max_value=0.6),
)
def test_a_drop_is_the_same_at_any_scale(
    seed: int, scale: float, high_s: int, low_s: int, low_share: float
) -> None:
    """IOPS are read in proportion: the same series at a hundredth or a thousand times
    the rate has the same drop, its levels scaled."""
    rng = random.Random(seed)
    series = [6000 * rng.uniform(0.97, 1.03) for _ in range(high_s)]
    series += [6000 * low_share * rng.uniform(0.97, 1.03) for _ in range(low_s)]
    drop = drop_in(series)
    scaled = drop_in([v * scale for v in series])
    assert (drop is None) == (scaled is None)
    if drop is not None and scaled is not None:
        assert scaled.at_s == pytest.approx(drop.at_s, abs=0.011)
        assert scaled.before == pytest.approx(drop.before * scale)
        assert scaled.after == pytest.approx(drop.after * scale)
        assert (scaled.seconds_before, scaled.seconds_after) == (
            drop.seconds_before,
            drop.seconds_after,
        )


# -- the fewest seconds, the lowest rates ---------------------------------------------------------


def test_a_drop_in_exactly_min_samples_seconds_is_found() -> None:
    assert MIN_SAMPLES == 6
    drop = drop_in([1000.0] * 3 + [100.0] * 3)
    assert drop is not None and (drop.before, drop.after, drop.at_s) == (1000.0, 100.0, 3.0)
    assert drop_in([1000.0] * 3 + [100.0] * 2) is None


@pytest.mark.parametrize("scale", [0.001, 0.5, 0.9])
def test_a_drop_below_one_iops_is_found(scale: float) -> None:
    """A volume doing less than one IO a second (huge blocks on a throttled disk): the
    rates are fractions, the drop is the same."""
    drop = drop_in([900 * scale] * 6 + [200 * scale] * 6)
    assert drop is not None
    assert [drop.before, drop.after] == pytest.approx([900 * scale, 200 * scale])


# -- the pieces, each held to what its text says --------------------------------------------------


def test_levels_exactly_same_level_apart_are_one_level() -> None:
    """Neighbours within SAME_LEVEL of the higher one are one level, at the edge too: a
    15 % step then a 17.6 % one is a level of 925 then 700, 24 % lower, no drop."""
    assert SAME_LEVEL == 0.15
    assert _alike(850.0, 1000.0) and _alike(1000.0, 850.0) and _alike(900.0, 1000.0)
    assert not _alike(849.0, 1000.0)
    assert said([1000.0] * 5 + [850.0] * 5 + [700.0] * 5) is None
    assert said([1000.0] * 5 + [849.0] * 5 + [700.0] * 5) is not None


@settings(max_examples=80)
@given(
    st.lists(
        st.tuples(st.integers(0, 120), st.floats(0, 1e5, allow_nan=False)),
        min_size=2,
        max_size=40,
    )
)
def test_the_line_is_the_least_squares_line(points: list[tuple[int, float]]) -> None:
    """Its slope and squared error are those of statistics.linear_regression's line;
    at one time only, no slope and the spread around the mean."""
    ts = [float(t) for t, _ in points]
    vs = [v for _, v in points]
    slope, error = _line(ts, vs)
    if len(set(ts)) == 1:
        want, intercept = 0.0, statistics.fmean(vs)
    else:
        want, intercept = statistics.linear_regression(ts, vs)
    expected = sum((v - intercept - want * t) ** 2 for t, v in points)
    assert slope == pytest.approx(want, rel=1e-6, abs=1e-6)
    assert error == pytest.approx(expected, rel=1e-6, abs=1e-3)


def test_a_line_at_one_time_has_no_slope() -> None:
    assert _line([4.0, 4.0, 4.0], [1.0, 2.0, 6.0]) == (0.0, 14.0)


def test_times_and_values_that_do_not_pair_up_are_refused() -> None:
    """A series whose times and values differ in length is a caller's mistake, never cut
    to the shorter one in silence."""
    with pytest.raises(ValueError, match="zip"):
        detect_drop([1.0, 2.0, 3.0], [100.0] * 8)
    with pytest.raises(ValueError, match="zip"):
        detect_drop([float(t) for t in range(1, 9)], [100.0] * 3)
    with pytest.raises(ValueError, match="zip"):
        _line([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="zip"):
        _line([4.0, 4.0, 4.0], [1.0, 2.0])  # no slope to compute


def test_a_short_blip_within_a_level_is_part_of_the_level() -> None:
    """Two seconds 10 % above a level, within SAME_LEVEL of it, in its middle or at its
    end: seconds of the level, not a transition."""
    drop = drop_in([1000.0] * 5 + [1100.0] * 2 + [1000.0] * 5 + [200.0] * 6)
    assert drop is not None
    assert drop.seconds_before == 12 and drop.before == pytest.approx(12200 / 12)
    assert drop.at_s == 12.0
    drop = drop_in([1000.0] * 6 + [1100.0] * 2 + [200.0] * 6)
    assert drop is not None
    assert (drop.seconds_before, drop.before, drop.at_s) == (8, 1025.0, 8.0)


CHAINS = [
    [1000.0] * 5 + [880.0] * 5 + [750.0] * 5 + [300.0] * 5,
    [1000.0] * 5 + [1100.0] * 2 + [1000.0] * 5 + [200.0] * 6,
    [1000.0] * 4 + [870.0] * 4 + [760.0] * 4 + [200.0] * 6 + [900.0] * 4,
    [1000.0] * 4 + [860.0] * 4 + [740.0] * 4 + [200.0] * 6,
]


@pytest.mark.parametrize("series", CHAINS)
@pytest.mark.parametrize("scale", [0.001, 0.01, 1000.0])
def test_alike_levels_merge_the_same_at_any_scale(series: list[float], scale: float) -> None:
    """Neighbouring levels alike in pairs, merged closest first: the same levels and
    steps at a thousandth of the rate (under 1 IOPS) or a thousand times it."""
    drop = drop_in(series)
    scaled = drop_in([v * scale for v in series])
    assert drop is not None and scaled is not None
    assert [s.at_s for s in scaled.steps] == [s.at_s for s in drop.steps]
    assert [(s.before, s.after) for s in scaled.steps] == [
        pytest.approx((s.before * scale, s.after * scale)) for s in drop.steps
    ]
    assert (scaled.seconds_before, scaled.seconds_after) == (
        drop.seconds_before,
        drop.seconds_after,
    )


def test_the_noise_of_a_zigzag_is_its_neighbours_difference() -> None:
    """Levels at about e^5 (150 IOPS) that alternate by 0.1: every first difference is
    0.1, every second one 0.2; the first gives the smaller estimate."""
    ys = [5.0, 5.1] * 10
    assert _noise(ys) == pytest.approx(1.4826 * 0.1 / math.sqrt(2))


@pytest.mark.parametrize("seed", range(4))
def test_the_noise_of_a_slide_is_its_second_differences(seed: int) -> None:
    """A slide of 1.0 a second with noise of 10 %: the first differences are the slide,
    the median absolute second difference (scaled to a normal noise's standard
    deviation) is the noise."""
    rng = random.Random(seed)
    ys = [5.0 + 1.0 * i + rng.uniform(-0.1, 0.1) for i in range(15)]
    d2 = [abs(ys[i + 1] - 2 * ys[i] + ys[i - 1]) for i in range(1, len(ys) - 1)]
    want = 1.4826 * statistics.median(d2) / math.sqrt(6)
    assert 0.02 < want < 0.3  # above the least noise, far below the slide's 1.0
    assert _noise(ys) == pytest.approx(want, rel=1e-12)


def test_a_flat_series_has_the_least_noise() -> None:
    assert _noise([7.0] * 12) == 0.02


def test_segments_are_cut_where_the_level_changes() -> None:
    assert _segments([0.0] * 4 + [1.0] * 4 + [3.0] * 4 + [2.0] * 3, 0.1) == [
        (0, 4), (4, 8), (8, 12), (12, 15),
    ]  # fmt: skip
    assert _segments([5.0] * 2 + [1.0] * 6, 0.1) == [(0, 2), (2, 8)]
    assert _segments([2.0] * 7 + [9.0], 0.1) == [(0, 7), (7, 8)]


def test_a_cut_must_gain_more_than_the_penalty() -> None:
    """[0, 0, 1, 1]: the squared error 1 of the whole falls to 0 when cut in two."""
    assert _segments([0.0, 0.0, 1.0, 1.0], 1.0) == [(0, 4)]
    assert _segments([0.0, 0.0, 1.0, 1.0], 0.999) == [(0, 2), (2, 4)]


def test_the_sampling_interval_is_the_shortest_step_between_times() -> None:
    assert _interval([1.0, 2.0, 3.0]) == 1.0
    assert _interval([1.0, 1.0, 1.5, 2.5]) == 0.5  # a repeated time is no interval
    assert _interval([2.0, 2.0]) == 1.0  # no interval seen: a second
    assert _interval([7.0]) == 1.0


def _iops(v: float) -> str:
    from iobench.units import format_iops

    return format_iops(v)


# -- _levels: which segments are steady levels, and which alike ones are one --------------


def _lv(levels: list[_Level]) -> list[tuple[int, int, float]]:
    return [(lv.first, lv.last, round(lv.mean, 6)) for lv in levels]


def test_a_segment_that_swings_or_holds_nothing_is_no_level() -> None:
    swing = [100.0, 10.0] * 3  # CV far over STEADY_CV
    steady = [50.0] * 6
    assert _lv(_levels([(0, 6), (6, 12)], swing + steady, 0.02)) == [(6, 11, 50.0)]
    zeros = [0.0] * 6
    assert _lv(_levels([(0, 6), (6, 12)], zeros + steady, 0.02)) == [(6, 11, 50.0)]


def test_a_level_may_vary_by_exactly_steady_cv() -> None:
    edge = [75.0, 125.0] * 3  # mean 100, population sd 25: CV exactly STEADY_CV
    assert STEADY_CV == 0.25
    assert _lv(_levels([(0, 6)], edge, 0.02)) == [(0, 5, 100.0)]


@pytest.mark.parametrize(
    ("gap", "merged"),
    [(0, True), (1, True), (MAX_TRANSITION, True), (MAX_TRANSITION + 1, False)],
)
def test_alike_levels_a_short_transition_apart_are_one(gap: int, merged: bool) -> None:
    """Up to MAX_TRANSITION seconds between two alike levels are outliers inside one."""
    vs = [100.0] * 5 + [300.0] * gap + [95.0] * 5
    segs = [(0, 5), (5 + gap, 10 + gap)]
    got = _lv(_levels(segs, vs, 0.02))
    if merged:
        assert got == [(0, 9 + gap, 97.5)]
    else:
        assert got == [(0, 4, 100.0), (5 + gap, 9 + gap, 95.0)]


def _two_levels(gap: int, drift: float) -> tuple[_Level, _Level, list[float], list[float]]:
    """A level of 10 s at 1,000 IOPS rising by ``drift`` a second, ``gap`` seconds at 750,
    then 10 s flat at 500."""
    ts = [float(i) for i in range(40)]
    vs = [750.0] * 40
    a, b = range(10), range(10 + gap, 20 + gap)
    for i in a:
        vs[i] = 1000 + drift * i
    for i in b:
        vs[i] = 500.0

    def level(own: range) -> _Level:
        values = [vs[i] for i in own]
        return _Level(tuple(own), statistics.fmean(values), statistics.pstdev(values))

    return level(a), level(b), ts, vs


@pytest.mark.parametrize(
    ("gap", "step"), [(0, True), (MAX_TRANSITION, True), (MAX_TRANSITION + 1, False)]
)
def test_a_step_takes_at_most_max_transition_seconds(gap: int, step: bool) -> None:
    a, b, ts, vs = _two_levels(gap, 0.0)
    assert _is_step(a, b, ts, vs, 1.0, 0.02) is step


@pytest.mark.parametrize(
    ("drift", "sigma", "step"),
    [
        (30.0, 0.02, True),  # a drift of 300 over the level: under half its step of 635
        (50.0, 0.02, False),  # 500 over a step of 725: a slope, not a level
        (50.0, 0.1, False),  # its slope, 50/s, above twice its standard error (27/s)
        (50.0, 0.2, True),  # and within it (54/s): the noise could make that slope
        (80.0, 0.2, False),
        (80.0, 0.5, True),
    ],
)
def test_a_level_that_drifts_more_than_its_noise_and_half_its_step_is_no_level(
    drift: float, sigma: float, step: bool
) -> None:
    a, b, ts, vs = _two_levels(MAX_TRANSITION, drift)
    assert _is_step(a, b, ts, vs, 1.0, sigma) is step
    # The same levels the other way round (a rise): the same answer.
    rev = vs[::-1]
    n = len(vs) - 1
    ra = _Level(tuple(n - i for i in reversed(b.own)), b.mean, b.sd)
    rb = _Level(tuple(n - i for i in reversed(a.own)), a.mean, a.sd)
    assert _is_step(ra, rb, ts, rev, 1.0, sigma) is step
