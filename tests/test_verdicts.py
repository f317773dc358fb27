"""Verdicts of one figure against the baseline's: the noise estimates (repetitions, batch
means of per-second samples), Welch's t-test, the repetitions advised, and the rules that
turn them into "faster", "slower", "within noise" or "too few repeats" (docs/compare.md).
Pure: numbers in, a judgement out."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence

import pytest

from iobench.analysis.verdicts import (
    MAX_ADVISED_REPEATS,
    Side,
    judge,
    repeats_needed,
    repeats_noise,
    welch,
    within_run_noise,
)

STEADY = [1000.0, 1001.0, 999.0, 1000.0, 1002.0, 998.0, 1000.0, 1001.0, 999.0, 1000.0]


def steady(level: float, seconds: int = 10) -> list[float | None]:
    """Per-second samples within 0.2 % of ``level``."""
    return [level * v / 1000 for v in STEADY[:seconds]]


def single(value: float, series: Sequence[float | None] | None = None) -> Side:
    """One run: its result and its per-second samples (None: not recorded)."""
    return Side((value,), (series,))


def runs(*values: float) -> Side:
    return Side(tuple(values), (None,) * len(values))


# -- noise estimates -----------------------------------------------------------------------


def test_repeats_noise_is_the_standard_error_of_the_runs() -> None:
    assert repeats_noise([1000.0]) is None
    noise = repeats_noise([1000.0, 1010.0, 990.0])
    assert noise is not None
    assert (noise.basis, noise.n, noise.df) == ("repeats", 3, 2)
    assert noise.run_sd == pytest.approx(10.0)
    assert noise.se == pytest.approx(10.0 / math.sqrt(3))


def test_within_run_noise_with_few_samples_takes_each_second_as_a_batch() -> None:
    assert within_run_noise([]) is None
    assert within_run_noise([1000.0]) is None
    assert within_run_noise([None, 1000.0, None]) is None, "missing seconds are skipped"
    series = [1000.0, None, 1010.0, 990.0, 1020.0, 980.0]
    noise = within_run_noise(series)
    assert noise is not None
    present = [1000.0, 1010.0, 990.0, 1020.0, 980.0]
    assert (noise.basis, noise.n, noise.df, noise.samples) == ("within-run", 5, 4, 5)
    assert noise.se == pytest.approx(statistics.stdev(present) / math.sqrt(5))
    assert noise.run_sd == noise.se, "one run's sd is the sd of its mean"


def test_within_run_noise_uses_at_most_ten_batches() -> None:
    series: list[float | None] = [float(1000 + (i % 7) * 10) for i in range(65)]
    noise = within_run_noise(series)
    assert noise is not None
    # 65 samples: batches of ceil(65 / 10) = 7, 9 of them; the first 2 samples left out.
    used = series[2:]
    means = [statistics.fmean(used[i * 7 : (i + 1) * 7]) for i in range(9)]  # type: ignore[arg-type]
    assert (noise.n, noise.df, noise.samples) == (9, 8, 65)
    assert noise.se == pytest.approx(statistics.stdev(means) / 3)


def test_batch_means_see_the_noise_of_autocorrelated_seconds() -> None:
    """A wandering level (each second close to the one before): taking each second as
    independent would understate the noise of the mean; batches do not."""
    rng = random.Random(7)
    level, series = 1000.0, []
    for _ in range(120):
        level += rng.gauss(0, 20)
        series.append(level)
    naive = statistics.stdev(series) / math.sqrt(len(series))
    noise = within_run_noise(series)
    assert noise is not None
    assert noise.n == 10
    assert noise.se > 2 * naive


# -- Welch's t-test and the repetitions advised -------------------------------------------------


def test_welch_matches_the_textbook_values() -> None:
    """R: t.test(c(1, 2, 3), c(4, 6, 8, 10)) gives t = -3.5355, df = 4.0755."""
    a, b = repeats_noise([1.0, 2.0, 3.0]), repeats_noise([4.0, 6.0, 8.0, 10.0])
    assert a is not None and b is not None
    test = welch(2.0, a, 7.0, b)
    assert test.t == pytest.approx(-3.5355, abs=1e-4)
    assert test.df == pytest.approx(4.0755, abs=1e-4)
    assert test.critical == pytest.approx(2.7563, abs=1e-4)  # t(0.975, 4.0755)
    assert test.significant
    assert test.half_width == pytest.approx(2.7563 * math.sqrt(2), abs=1e-3)


def test_welch_without_spread() -> None:
    same = repeats_noise([7.0, 7.0])
    assert same is not None
    assert not welch(7.0, same, 7.0, same).significant
    assert welch(8.0, same, 7.0, same).significant


def test_repeats_needed_for_a_difference_of_two_standard_deviations() -> None:
    # diff 10, sd 5 a side: n >= (t(0.975, 2n - 2) + 0.84)^2 * 50 / 100 first holds at 5.
    assert repeats_needed(10.0, 5.0, 5.0) == 5
    assert repeats_needed(-10.0, 5.0, 5.0) == 5
    assert repeats_needed(100.0, 5.0, 5.0) == 3, "never fewer than 3"
    assert repeats_needed(1.0, 5.0, 5.0) is None, f"more than {MAX_ADVISED_REPEATS}"
    assert repeats_needed(0.0, 5.0, 5.0) is None


# -- verdicts: one repetition a side -------------------------------------------------------------


def test_one_run_without_samples_several_times_is_a_difference() -> None:
    j = judge(single(1000.0), single(3000.0))
    assert (j.verdict, j.reason, j.several_times) == (
        "slower",
        "2x or more; noise not measured",
        True,
    )
    assert (j.basis, j.t) == (None, None)


def test_one_run_without_samples_a_moderate_difference_asks_for_repeats() -> None:
    j = judge(single(1300.0), single(1000.0))
    assert (j.verdict, j.reason, j.repeats_needed) == (
        "too few repeats",
        "run --repeat 3; noise not measured",
        3,
    )


def test_one_run_with_steady_samples() -> None:
    # Several times: beyond the within-run noise, so a difference.
    j = judge(single(3000.0, steady(3000.0)), single(1000.0, steady(1000.0)))
    assert (j.verdict, j.reason, j.basis) == (
        "faster",
        "2x or more beyond within-run noise",
        "within-run",
    )
    assert j.significant and j.several_times
    assert j.value_noise is not None and j.value_noise.samples == 10
    # A moderate difference beyond the within-run noise: run-to-run noise is unknown.
    j = judge(single(1200.0, steady(1200.0)), single(1000.0, steady(1000.0)))
    assert (j.verdict, j.reason, j.repeats_needed) == (
        "too few repeats",
        "run --repeat 3; within-run noise only",
        3,
    )
    assert j.significant and j.diff_ci95_low is not None and j.diff_ci95_low > 0.19
    # A tiny one (0.5 %) beyond the within-run noise: 3 repetitions measure the real noise.
    j = judge(single(1005.0, steady(1005.0)), single(1000.0, steady(1000.0)))
    assert (j.verdict, j.reason) == ("too few repeats", "run --repeat 3; within-run noise only")


NOISY = [100.0, 1900.0] * 5  # mean 1000, each second far from the last: CV 95 %


def test_one_run_with_noisy_samples() -> None:
    """Seconds that swing between 100 and 1900: even 2.5x is not beyond that noise."""
    value = single(400.0, [v * 0.4 for v in NOISY])
    j = judge(value, single(1000.0, NOISY))
    assert j.several_times and not j.significant
    assert (j.verdict, j.reason, j.repeats_needed) == (
        "too few repeats",
        "run --repeat 4; within-run noise only",
        4,
    )
    # A small difference against such noise is within it: no number of repetitions up to
    # MAX_ADVISED_REPEATS would resolve it.
    j = judge(single(1020.0, [v * 1.02 for v in NOISY]), single(1000.0, NOISY))
    assert (j.verdict, j.reason, j.repeats_needed) == ("within noise", "within-run noise", None)


def test_one_sample_is_no_noise_estimate() -> None:
    """A 1 s run has one per-second sample: no within-run noise."""
    j = judge(single(1100.0, [1100.0]), single(1000.0, [1000.0]))
    assert (j.verdict, j.basis) == ("too few repeats", None)


# -- verdicts: repetitions ----------------------------------------------------------------------


def test_two_repeats_the_issue_case() -> None:
    """tmpfs against a disk, 2 repetitions each: the 95 % intervals are +-200 % wide, but
    every repetition differs by far more than 2x."""
    j = judge(runs(80_000.0, 120_000.0), runs(1_580_000.0, 1_700_000.0))
    assert (j.verdict, j.reason, j.basis) == ("slower", "2x or more in every repeat", "repeats")


def test_two_repeats_2x_apart_in_every_repeat_even_when_too_noisy_for_a_t_test() -> None:
    """Every repetition 2x apart is a difference even when the t-test, with one degree of
    freedom on this noise, cannot tell (t = 1.75)."""
    j = judge(runs(100.0, 300.0), runs(700.0, 2000.0))
    assert not j.significant
    assert (j.verdict, j.reason, j.basis) == ("slower", "2x or more in every repeat", "repeats")


def test_two_repeats_a_moderate_difference_asks_for_more() -> None:
    # 1050 vs 1350 with sd 70.7 a side: t = 4.24 < t(0.975, 2) = 4.30.
    j = judge(runs(1300.0, 1400.0), runs(1000.0, 1100.0))
    assert j.t == pytest.approx(4.2426, abs=1e-4)
    assert j.df == pytest.approx(2.0)
    assert j.significant is False
    assert (j.verdict, j.reason, j.repeats_needed) == (
        "too few repeats",
        "run --repeat 3; t-test, 2 vs 2 repeats",
        3,
    )


def test_two_repeats_fractional_degrees_of_freedom() -> None:
    """Unequal spreads give Welch 1 < df < 2; its own t quantile (5.0 at df 1.74), not
    t(0.975, 1) = 12.7, decides: 18 % apart with spreads of 1-2 % is a difference."""
    j = judge(runs(1_345_000.0, 1_375_000.0), runs(1_140_000.0, 1_160_000.0))
    assert j.df == pytest.approx(1.742, abs=1e-3)
    assert j.t == pytest.approx(11.65, abs=1e-2)
    assert (j.verdict, j.reason) == ("faster", "t-test, 2 vs 2 repeats")


def test_two_repeats_a_tiny_difference_is_within_noise() -> None:
    j = judge(runs(1002.0, 1012.0), runs(1000.0, 1010.0))
    assert (j.verdict, j.reason, j.repeats_needed) == (
        "within noise",
        "t-test, 2 vs 2 repeats",
        None,
    )


def test_two_repeats_a_2x_ratio_whose_runs_overlap_is_not_several_times() -> None:
    """[100, 900] against [1000, 1010]: the means differ 2x, but not every repetition does,
    and the spread is too large for more repetitions to settle it soon."""
    j = judge(runs(100.0, 900.0), runs(1000.0, 1010.0))
    assert not j.several_times and not j.significant
    assert j.verdict == "within noise"


def test_three_repeats() -> None:
    j = judge(runs(1200.0, 1210.0, 1190.0), runs(1000.0, 1010.0, 990.0))
    assert (j.verdict, j.reason, j.several_times) == ("faster", "t-test, 3 vs 3 repeats", False)
    half = 2.776 * math.sqrt(200 / 3) / 1000  # t(0.975, 4) * se / baseline mean
    assert j.diff_ci95_low == pytest.approx(0.2 - half, abs=1e-4)
    assert j.diff_ci95_high == pytest.approx(0.2 + half, abs=1e-4)
    j = judge(runs(1003.0, 1013.0, 993.0), runs(1000.0, 1010.0, 990.0))
    assert (j.verdict, j.reason) == ("within noise", "t-test, 3 vs 3 repeats")


def test_five_repeats() -> None:
    # 3 % apart with a spread of 1 %: a real difference.
    steady5 = runs(1030.0, 1040.0, 1020.0, 1035.0, 1025.0)
    j = judge(steady5, runs(1000.0, 1010.0, 990.0, 1005.0, 995.0))
    assert (j.verdict, j.reason) == ("faster", "t-test, 5 vs 5 repeats")
    assert j.df == pytest.approx(8.0)
    # 3 % apart with a spread of 5 %: within noise, and more than 10 a side to resolve.
    noisy5 = runs(1030.0, 1100.0, 960.0, 1080.0, 980.0)
    j = judge(noisy5, runs(1000.0, 1070.0, 930.0, 1050.0, 950.0))
    assert (j.verdict, j.reason, j.repeats_needed) == (
        "within noise",
        "t-test, 5 vs 5 repeats",
        None,
    )
    # Several times, five each.
    j = judge(runs(300.0, 310.0, 290.0, 305.0, 295.0), runs(1000.0, 1010.0, 990.0, 1005.0, 995.0))
    assert (j.verdict, j.reason) == ("slower", "2x or more in every repeat")


def test_five_repeats_against_one_run_is_judged_on_the_weaker_noise() -> None:
    """The baseline has one run: its noise is within-run, so a moderate difference is not
    settled even though the other side has five repetitions."""
    j = judge(runs(1200.0, 1210.0, 1190.0, 1205.0, 1195.0), single(1000.0, steady(1000.0)))
    assert (j.verdict, j.basis) == ("too few repeats", "within-run")
    assert j.value_noise is not None and j.value_noise.basis == "repeats"
    assert j.base_noise is not None and j.base_noise.basis == "within-run"


def test_latency_lower_is_faster() -> None:
    j = judge(runs(250.0, 251.0, 249.0), runs(100.0, 101.0, 99.0), higher_is_faster=False)
    assert (j.verdict, j.reason) == ("slower", "2x or more in every repeat")
    # 2x the mean, but 199 is not 2x 101: the t-test decides.
    j = judge(runs(200.0, 201.0, 199.0), runs(100.0, 101.0, 99.0), higher_is_faster=False)
    assert (j.verdict, j.reason) == ("slower", "t-test, 3 vs 3 repeats")
    j = judge(runs(90.0, 91.0, 89.0), runs(100.0, 101.0, 99.0), higher_is_faster=False)
    assert j.verdict == "faster"


def test_a_missing_figure_is_not_measured() -> None:
    assert judge(Side(()), runs(1.0, 2.0)).verdict == "not measured"


def test_the_judgement_as_json_has_no_infinity() -> None:
    import json

    j = judge(runs(8.0, 8.0), runs(7.0, 7.0))
    assert j.significant and j.t == math.inf
    doc = j.as_dict()
    json.dumps(doc, allow_nan=False)
    assert doc["t"] is None and doc["verdict"] == "faster"
    assert sorted(doc) == [
        "baseline_noise",
        "basis",
        "df",
        "diff_ci95_high",
        "diff_ci95_low",
        "noise",
        "reason",
        "repeats_needed",
        "several_times",
        "significant",
        "t",
        "verdict",
    ]


def test_against_a_baseline_of_zero_the_difference_has_no_share() -> None:
    """A baseline that did nothing (0 IOPS in every repeat): the new side is faster by 2x
    or more, and its difference as a share of the baseline's is none, not a division by 0."""
    j = judge(runs(10.0, 20.0), runs(0.0, 0.0))
    assert (j.verdict, j.reason) == ("faster", "2x or more in every repeat")
    assert j.diff_ci95_low is None and j.diff_ci95_high is None
