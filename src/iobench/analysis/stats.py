"""Statistics over the repetitions of one workload: mean, 95 % confidence interval, CV.

Pure functions over plain numbers. A missing value (None) is skipped, never counted as 0.
With one repetition there is no estimate of the noise: stddev, the interval and the
coefficient of variation are None. How two figures compare is
:mod:`iobench.analysis.verdicts`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

# Repetitions whose coefficient of variation exceeds this (in %) get a warning.
UNSTABLE_CV_PCT = 5.0
# Comparisons and their charts show a 95 % interval from this many repetitions on: with 2,
# t(0.975, 1) = 12.7 makes it +-200 % and more, which says nothing.
INTERVAL_SHOWN_FROM = 3

# Two-sided 95 % critical values of Student's t, df = 1..30 (t_{0.975, df}).
_T95 = (
    12.706205,
    4.302653,
    3.182446,
    2.776445,
    2.570582,
    2.446912,
    2.364624,
    2.306004,
    2.262157,
    2.228139,
    2.200985,
    2.178813,
    2.160369,
    2.144787,
    2.131450,
    2.119905,
    2.109816,
    2.100922,
    2.093024,
    2.085963,
    2.079614,
    2.073873,
    2.068658,
    2.063899,
    2.059539,
    2.055529,
    2.051831,
    2.048407,
    2.045230,
    2.042272,
)
_Z975 = 1.959963984540054  # the standard normal's 97.5 % quantile


@dataclass(frozen=True)
class Summary:
    """The repetitions of one figure (IOPS, bandwidth, a latency), summarised."""

    n: int
    mean: float | None
    stddev: float | None  # sample standard deviation (n - 1); None when n < 2
    ci95_low: float | None  # Student-t 95 % confidence interval of the mean; None when n < 2
    ci95_high: float | None
    cv_pct: float | None  # 100 * stddev / |mean|; None when n < 2 or mean == 0

    @property
    def ci95_half_width(self) -> float | None:
        if self.ci95_low is None or self.ci95_high is None:
            return None
        return (self.ci95_high - self.ci95_low) / 2

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def t_critical_95(df: float) -> float:
    """The two-sided 95 % critical value of Student's t with ``df`` degrees of freedom.

    Exact (to 6 decimals) for df 1..30 from a table, and for fractional df up to 30 (Welch's
    test has them) by inverting Student's distribution function; above that the
    Cornish-Fisher expansion (Abramowitz & Stegun 26.7.5), within 1e-5 of the true value
    for df > 30; ``math.inf`` gives the normal's 1.959964.
    """
    if math.isnan(df) or df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    if math.isinf(df):
        return _Z975
    if df <= len(_T95):
        return _T95[int(df) - 1] if df == int(df) else _t975(df)
    z = _Z975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (Numerical Recipes, betacf)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for aa in (
            m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m)),
        ):
            d = 1 + aa * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1 - front * _betacf(b, a, 1 - x) / b


def _t975(df: float) -> float:
    """t with P(|T| > t) = 0.05 for Student's t with ``df`` degrees of freedom, by bisection
    on ``P(|T| > t) = I_{df / (df + t^2)}(df / 2, 1 / 2)``."""
    lo, hi = 0.0, 20.0  # t(0.975, 1) = 12.7 is the largest for df >= 1
    for _ in range(100):
        mid = (lo + hi) / 2
        if _betai(df / 2, 0.5, df / (df + mid * mid)) > 0.05:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def summarize(values: Sequence[float | None]) -> Summary:
    """Mean, sample stddev, Student-t 95 % interval of the mean and CV of ``values``.

    None entries are missing measurements and are skipped; ``n`` counts the others.
    """
    present = [float(v) for v in values if v is not None]
    for v in present:
        if not math.isfinite(v):
            raise ValueError(f"cannot summarise a non-finite value: {v}")
    n = len(present)
    if n == 0:
        return Summary(0, None, None, None, None, None)
    mean = math.fsum(present) / n
    if n == 1:
        return Summary(1, mean, None, None, None, None)
    stddev = math.sqrt(math.fsum((v - mean) ** 2 for v in present) / (n - 1))
    half = t_critical_95(n - 1) * stddev / math.sqrt(n)
    cv = None if mean == 0 else 100 * stddev / abs(mean)
    return Summary(n, mean, stddev, mean - half, mean + half, cv)


def interval_shown(s: Summary) -> bool:
    """Whether a comparison shows the 95 % interval of this mean (INTERVAL_SHOWN_FROM)."""
    return s.n >= INTERVAL_SHOWN_FROM and s.ci95_low is not None


def is_unstable(s: Summary) -> bool:
    """The repetitions vary by more than UNSTABLE_CV_PCT (coefficient of variation; needs
    at least 2 repetitions). The one rule behind every "unstable" warning and mark."""
    return s.n >= 2 and s.cv_pct is not None and s.cv_pct > UNSTABLE_CV_PCT
