"""The edges of the verdicts' rules (docs/compare.md, "Verdicts"): exactly 2x, the batch
cut of within-run noise on a series whose batches differ, the smallest difference worth
repetitions. Pure: numbers in, the judgement a user reads out."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobench.analysis.verdicts import (
    MAX_BATCHES,
    MIN_ADVISED_DIFF,
    SEVERAL_TIMES,
    Side,
    judge,
    repeats_needed,
    within_run_noise,
)


def single(value: float) -> Side:
    return Side((value,), (None,))


def runs(*values: float) -> Side:
    return Side(tuple(values), (None,) * len(values))


# -- "2x or more": at least twice, every repetition -----------------------------------------------


@pytest.mark.parametrize("base", [1.0, 1000.0, 123_456.0])
def test_exactly_twice_is_several_times_either_way(base: float) -> None:
    """2x is "2x or more", whichever side is the larger and whichever is the better."""
    up = judge(single(SEVERAL_TIMES * base), single(base))
    assert (up.verdict, up.reason, up.several_times) == (
        "faster",
        "2x or more; noise not measured",
        True,
    )
    down = judge(single(base), single(SEVERAL_TIMES * base))
    assert (down.verdict, down.reason, down.several_times) == (
        "slower",
        "2x or more; noise not measured",
        True,
    )
    latency = judge(single(base), single(SEVERAL_TIMES * base), higher_is_faster=False)
    assert (latency.verdict, latency.several_times) == ("faster", True)


@pytest.mark.parametrize("base", [1.0, 1000.0, 123_456.0])
def test_just_under_twice_asks_for_repeats(base: float) -> None:
    for value, baseline in ((1.999 * base, base), (base, 1.999 * base)):
        j = judge(single(value), single(baseline))
        assert (j.verdict, j.reason, j.several_times) == (
            "too few repeats",
            "run --repeat 3; noise not measured",
            False,
        )


def test_with_repeats_the_least_of_one_side_against_the_most_of_the_other() -> None:
    """Every repetition 2x or more: the smallest of one side against the largest of the
    other, at exactly 2x and just under it."""
    j = judge(runs(2000.0, 2600.0, 3000.0), runs(900.0, 1000.0, 950.0))
    assert (j.verdict, j.reason) == ("faster", "2x or more in every repeat")
    j = judge(runs(900.0, 1000.0, 950.0), runs(2000.0, 2600.0, 3000.0))
    assert (j.verdict, j.reason) == ("slower", "2x or more in every repeat")
    # 1999 is not 2x 1000: the t-test decides, and says so.
    j = judge(runs(1999.0, 2600.0, 3000.0), runs(900.0, 1000.0, 950.0))
    assert (j.several_times, j.reason) == (False, "t-test, 3 vs 3 repeats")
    j = judge(runs(900.0, 1000.0, 950.0), runs(1999.0, 2600.0, 3000.0))
    assert (j.several_times, j.reason) == (False, "t-test, 3 vs 3 repeats")


@given(
    st.lists(st.floats(min_value=1, max_value=1e9), min_size=1, max_size=6),
    st.lists(st.floats(min_value=1, max_value=1e9), min_size=1, max_size=6),
)
def test_several_times_is_every_repetition_at_least_twice(a: list[float], b: list[float]) -> None:
    expected = min(a) >= 2 * max(b) or min(b) >= 2 * max(a)
    assert judge(runs(*a), runs(*b)).several_times is expected


# -- within-run noise: the batches ----------------------------------------------------------------


def _batches(series: list[float], size: int) -> list[float]:
    """The means of the batches of ``size`` that end with the last sample."""
    k = len(series) // size
    used = series[len(series) - k * size :]
    return [statistics.fmean(used[i * size : (i + 1) * size]) for i in range(k)]


@pytest.mark.parametrize(("m", "size", "k"), [(11, 2, 5), (20, 2, 10), (21, 3, 7), (65, 7, 9)])
def test_batches_end_with_the_last_second_and_the_first_ones_are_left_out(
    m: int, size: int, k: int
) -> None:
    """A series whose every second differs (no period that would make any cut look the
    same): the batches are of ceil(m / 10) seconds, as many as fill, the first seconds that
    do not fill one left out."""
    rng = random.Random(m)
    series = [1000.0 + rng.uniform(-100, 100) for _ in range(m)]
    noise = within_run_noise(series)
    assert noise is not None
    assert size == math.ceil(m / MAX_BATCHES)
    means = _batches(series, size)
    assert (noise.n, noise.df, noise.samples) == (k, k - 1, m)
    assert noise.se == pytest.approx(statistics.stdev(means) / math.sqrt(k), rel=1e-12)


def test_the_seconds_left_out_are_the_first_ones() -> None:
    """A first second far off the rest (the end of a ramp) is the one left out: the noise
    of the 20 that follow it is small."""
    series = [5000.0] + [1000.0 + (7 * i % 11) for i in range(21)]
    noise = within_run_noise(series)
    assert noise is not None
    assert (noise.n, noise.samples) == (7, 22)
    assert noise.se < 5
    # The verdict it gives: 1 % against that noise is beyond it.
    j = judge(Side((1010.0,), ([v * 1.01 for v in series],)), Side((1000.0,), (series,)))
    assert (j.verdict, j.basis, j.significant) == ("too few repeats", "within-run", True)


@given(st.lists(st.floats(min_value=0, max_value=1e6), min_size=2, max_size=200))
def test_within_run_noise_is_batch_means(series: list[float]) -> None:
    noise = within_run_noise(series)
    assert noise is not None
    size = math.ceil(len(series) / MAX_BATCHES)
    means = _batches(series, size)
    assert noise.n == len(means) <= MAX_BATCHES
    assert noise.se == pytest.approx(statistics.stdev(means) / math.sqrt(len(means)), abs=1e-6)


# -- the smallest difference worth repetitions ---------------------------------------------------


def test_a_difference_under_one_percent_is_never_worth_repetitions() -> None:
    """Two repeats a side, a difference the test cannot settle: 0.9 % of the baseline gets
    no repetitions advised (within noise), 1.1 % gets them."""
    assert MIN_ADVISED_DIFF == 0.01
    base = runs(996.0, 1004.0)
    j = judge(runs(1005.0, 1013.0), base)
    assert (j.verdict, j.reason, j.repeats_needed) == (
        "within noise",
        "t-test, 2 vs 2 repeats",
        None,
    )
    j = judge(runs(1007.0, 1015.0), base)
    assert (j.verdict, j.reason) == ("too few repeats", "run --repeat 6; t-test, 2 vs 2 repeats")


@pytest.mark.parametrize(
    ("diff", "needed"), [(2.6, None), (2.7, 10), (2.8, 9), (3.0, 8), (6.0, 3), (-2.7, 10)]
)
def test_repetitions_are_advised_up_to_max_advised_repeats(diff: float, needed: int | None) -> None:
    """sd 2 a side: a difference of 2.7 needs 10 repetitions (advised), 2.6 more (none)."""
    assert repeats_needed(diff, 2.0, 2.0) == needed


def test_a_difference_of_exactly_one_is_a_difference() -> None:
    assert repeats_needed(1.0, 0.1, 0.1) == 3
    assert repeats_needed(0.0, 0.1, 0.1) is None


def test_equal_runs_without_spread_have_t_zero_in_the_json() -> None:
    j = judge(runs(7.0, 7.0), runs(7.0, 7.0))
    assert (j.verdict, j.t, j.significant) == ("within noise", 0.0, False)
    assert j.as_dict()["t"] == 0.0


def test_the_json_holds_t_and_both_sides_noise() -> None:
    j = judge(runs(1200.0, 1210.0, 1190.0), runs(1000.0, 1010.0, 990.0))
    doc = j.as_dict()
    assert j.t is not None and doc["t"] == j.t and math.isfinite(doc["t"])
    assert j.value_noise is not None and j.base_noise is not None
    assert doc["noise"] == j.value_noise.as_dict()
    assert doc["baseline_noise"] == j.base_noise.as_dict()
    assert doc["baseline_noise"]["n"] == 3 and doc["baseline_noise"]["basis"] == "repeats"


def test_two_seconds_are_two_batches() -> None:
    noise = within_run_noise([1000.0, 1010.0])
    assert noise is not None
    assert (noise.n, noise.df, noise.samples) == (2, 1, 2)
    assert noise.se == pytest.approx(5.0)


def test_a_side_without_a_value_is_not_measured_and_says_why() -> None:
    for value, base in ((Side(()), runs(1.0, 2.0)), (runs(1.0, 2.0), Side(()))):
        j = judge(value, base)
        assert (j.verdict, j.reason) == ("not measured", "no value on one side")
