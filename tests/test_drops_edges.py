"""The edges of the burst detector's rules (docs/findings.md, "How a burst is found"), as
the finding says them: a drop of exactly DROP_SHARE, a return to exactly DROP_SHARE of the
burst level, the unsteady seconds after the sustained level ("for the last 6 s" or "for
6 s"), missing seconds around the step, samples that are not a second apart."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobench.analysis.drops import DROP_SHARE, MAX_TRANSITION, Drop, detect_drop
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


def _iops(v: float) -> str:
    from iobench.units import format_iops

    return format_iops(v)
