"""Statistics over repetitions: the t table and the summary (verdicts: test_verdicts.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobench.analysis.stats import (
    UNSTABLE_CV_PCT,
    Summary,
    is_unstable,
    summarize,
    t_critical_95,
)


@pytest.mark.parametrize(
    ("df", "expected"),
    [
        # Every whole df of the table: NIST/SEMATECH e-Handbook of Statistical Methods,
        # table 1.3.6.7.2 (upper critical values of Student's t), column 0.025.
        (1, 12.706),
        (2, 4.303),
        (3, 3.182),
        (4, 2.776),
        (5, 2.571),
        (6, 2.447),
        (7, 2.365),
        (8, 2.306),
        (9, 2.262),
        (10, 2.228),
        (11, 2.201),
        (12, 2.179),
        (13, 2.160),
        (14, 2.145),
        (15, 2.131),
        (16, 2.120),
        (17, 2.110),
        (18, 2.101),
        (19, 2.093),
        (20, 2.086),
        (21, 2.080),
        (22, 2.074),
        (23, 2.069),
        (24, 2.064),
        (25, 2.060),
        (26, 2.056),
        (27, 2.052),
        (28, 2.048),
        (29, 2.045),
        (30, 2.042),
        # Beyond the table: the expansion, against published values.
        (31, 2.040),
        (40, 2.021),
        (60, 2.000),
        (120, 1.980),
        (math.inf, 1.960),
    ],
)
def test_t_critical_95_matches_published_values(df: float, expected: float) -> None:
    assert t_critical_95(df) == pytest.approx(expected, abs=5e-4)


def test_t_critical_95_is_continuous_past_the_table() -> None:
    # The expansion takes over at 31; it must fall smoothly from the table's last entry.
    assert t_critical_95(30) > t_critical_95(31) > t_critical_95(32) > t_critical_95(1000)
    assert t_critical_95(1000) > t_critical_95(math.inf)


def test_t_critical_95_for_fractional_degrees_of_freedom() -> None:
    """Welch's test gives fractional df: computed from Student's distribution, which gives
    the table's values at whole df."""
    from iobench.analysis.stats import _t975

    for df in (1, 2, 3, 5, 10, 30):
        assert _t975(df) == pytest.approx(t_critical_95(df), abs=1e-5)
    assert t_critical_95(1.5) == pytest.approx(_t975(1.5))
    assert t_critical_95(1) > t_critical_95(1.5) > t_critical_95(2) > t_critical_95(2.5)
    assert t_critical_95(29.5) > t_critical_95(30) > t_critical_95(30.5) > t_critical_95(31)


@pytest.mark.parametrize("df", [0, -1, 0.5, math.nan])
def test_t_critical_95_refuses_impossible_degrees_of_freedom(df: float) -> None:
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_critical_95(df)


def test_summary_of_three_repetitions() -> None:
    s = summarize([90.0, 100.0, 110.0])
    assert s.n == 3
    assert s.mean == 100.0
    assert s.stddev == pytest.approx(10.0)
    half = 4.302653 * 10 / math.sqrt(3)
    assert s.ci95_low == pytest.approx(100 - half)
    assert s.ci95_high == pytest.approx(100 + half)
    assert s.ci95_half_width == pytest.approx(half)
    assert s.cv_pct == pytest.approx(10.0)


def test_missing_values_are_skipped_not_zero() -> None:
    assert summarize([None, 100.0, None, 100.0]) == Summary(2, 100.0, 0.0, 100.0, 100.0, 0.0)


def test_one_repetition_has_no_noise_estimate() -> None:
    assert summarize([5.0]) == Summary(1, 5.0, None, None, None, None)


def test_no_values() -> None:
    assert summarize([]) == Summary(0, None, None, None, None, None)
    assert summarize([None]) == Summary(0, None, None, None, None, None)


def test_cv_is_unknown_for_a_zero_mean() -> None:
    s = summarize([-1.0, 1.0])
    assert s.mean == 0
    assert s.cv_pct is None


def test_non_finite_values_are_refused() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        summarize([1.0, math.inf])


def test_as_dict_has_the_documented_keys() -> None:
    assert summarize([1.0, 3.0]).as_dict() == {
        "n": 2,
        "mean": 2.0,
        "stddev": pytest.approx(math.sqrt(2)),
        "ci95_low": pytest.approx(2 - 12.706205 * 1),
        "ci95_high": pytest.approx(2 + 12.706205 * 1),
        "cv_pct": pytest.approx(100 * math.sqrt(2) / 2),
    }


def test_unstable_threshold_is_five_percent() -> None:
    assert UNSTABLE_CV_PCT == 5.0


values = st.lists(
    st.one_of(st.none(), st.floats(min_value=-1e12, max_value=1e12, allow_nan=False)),
    max_size=30,
)


@given(values)
def test_summary_properties(xs: list[float | None]) -> None:
    s = summarize(xs)
    present = [x for x in xs if x is not None]
    assert s.n == len(present)
    if s.n == 0:
        assert s.mean is None
        return
    assert s.mean is not None
    assert min(present) - 1e-6 * max(1.0, abs(min(present))) <= s.mean
    assert s.mean <= max(present) + 1e-6 * max(1.0, abs(max(present)))
    if s.n < 2:
        assert (s.stddev, s.ci95_low, s.ci95_high, s.cv_pct) == (None, None, None, None)
        return
    assert s.stddev is not None and s.stddev >= 0
    assert s.ci95_low is not None and s.ci95_high is not None
    assert s.ci95_low <= s.mean <= s.ci95_high
    assert s.cv_pct is None or s.cv_pct >= 0


def test_is_unstable_needs_two_repetitions_and_a_cv_over_the_threshold() -> None:
    assert is_unstable(summarize([1000, 1200, 800]))  # CV 20 %
    assert not is_unstable(summarize([1000, 1010, 990]))  # CV 1 %
    assert not is_unstable(summarize([1000]))  # one repetition: unknown, not unstable
    assert is_unstable(summarize([1000, 1200]))  # two repetitions are enough to tell
    assert not is_unstable(summarize([0, 0]))  # mean 0: no CV
    edge = Summary(3, 100.0, 5.0, 90.0, 110.0, UNSTABLE_CV_PCT)
    assert not is_unstable(edge)  # "more than" the threshold


@pytest.mark.parametrize("df", range(1, 31))
def test_the_interval_of_n_repetitions_uses_t_at_n_minus_1(df: int) -> None:
    """The interval a user reads: n repetitions 100 +- 1 (alternating), so the sample
    standard deviation is known exactly; its half width is t(0.975, n - 1) s / sqrt(n),
    with the table's value to its sixth decimal (inverting Student's distribution gives
    the same): a typo anywhere in the table moves the interval."""
    from iobench.analysis.stats import _t975

    n = df + 1
    values = [100.0 + (1 if i % 2 else -1) for i in range(n)]
    s = summarize(values)
    mean = math.fsum(values) / n
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    assert s.ci95_half_width == pytest.approx(_t975(df) * sd / math.sqrt(n), rel=1e-6)
    assert t_critical_95(df) == pytest.approx(_t975(df), abs=1e-6)


@pytest.mark.parametrize(
    ("df", "exact"),
    # Student's t(0.975, df) to 6 decimals beyond the table (R: qt(0.975, df)).
    [(31, 2.039513), (35, 2.030108), (40, 2.021075), (50, 2.008559), (100, 1.983972)],
)
def test_the_expansion_past_the_table_is_within_its_stated_error(df: int, exact: float) -> None:
    assert t_critical_95(df) == pytest.approx(exact, abs=1e-5)
    assert t_critical_95(df + 0.5) < t_critical_95(df)


def test_the_expansion_agrees_with_student_s_distribution_to_1e_7() -> None:
    """Past the table, the Cornish-Fisher expansion (four terms) is within 3e-8 of t
    computed from Student's distribution: a wrong coefficient moves it by more."""
    from iobench.analysis.stats import _t975

    for df in [31, 32, 33, 35, 40, 50, 60, 80, 120, 200, 30.5, 31.5, 45.25]:
        assert t_critical_95(df) == pytest.approx(_t975(df), abs=1e-7)
