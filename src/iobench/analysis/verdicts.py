"""How one setup's figure stands against the baseline's: a verdict a reader can act on.

Pure functions over plain numbers; the rules are in docs/compare.md ("Verdicts"):

- each side's noise is estimated from its **repetitions** (two or more: the spread of the
  runs' results, run-to-run noise) or, for a side with a single run, from that run's
  **per-second samples** (batch means: within-run noise, second to second, which is smaller
  than run-to-run noise and so only a lower bound of it);
- the two means are compared with **Welch's t-test** (two-sided, 95 %, with the
  Welch-Satterthwaite degrees of freedom, fractional);
- a difference of **several times** (every repetition of one side 2x or more every
  repetition of the other) is a difference whatever the number of repetitions, unless the
  only noise known (within-run) is large enough to explain it;
- a difference the test cannot settle gets ``too few repeats`` with the number of
  repetitions a side that would resolve it (80 % power), or ``within noise`` when even
  MAX_ADVISED_REPEATS would not, or when it is under MIN_ADVISED_DIFF of the baseline.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from iobench.analysis.stats import t_critical_95

Basis = Literal["repeats", "within-run"]

SEVERAL_TIMES = 2.0  # every repetition of one side at least this many times the other's
MAX_BATCHES = 10  # within-run noise: at most this many batches (Schmeiser: 10 to 30)
MIN_ADVISED_REPEATS = 3  # the fewest repetitions a side that give a usable t-test (df >= 4)
MAX_ADVISED_REPEATS = 10  # beyond this, a difference is called small against the noise
MIN_ADVISED_DIFF = 0.01  # no repetitions are advised for a difference under 1 % of the baseline
POWER = 0.8  # repetitions advised: the chance to see a real difference of the size observed
_Z_POWER = statistics.NormalDist().inv_cdf(POWER)

# The verdicts, the same words in every output.
BASELINE = "baseline"
FASTER = "faster"
SLOWER = "slower"
WITHIN_NOISE = "within noise"
TOO_FEW_REPEATS = "too few repeats"
NOT_MEASURED = "not measured"
NO_BASELINE = "no baseline"


@dataclass(frozen=True)
class Noise:
    """What one side knows of the noise of its mean."""

    basis: Basis
    se: float  # the standard error of the side's mean
    df: int  # the degrees of freedom of that estimate
    run_sd: float  # the standard deviation of one run's result (for advising repetitions)
    n: int  # repetitions (repeats) or batches (within-run)
    samples: int = 0  # within-run: the per-second samples the batches were made of

    def as_dict(self) -> dict[str, Any]:
        return {
            "basis": self.basis,
            "se": self.se,
            "df": self.df,
            "n": self.n,
            "samples": self.samples,
        }


def repeats_noise(values: Sequence[float]) -> Noise | None:
    """Run-to-run noise from two or more repetitions' results; None with fewer."""
    n = len(values)
    if n < 2:
        return None
    sd = statistics.stdev(values)
    return Noise("repeats", sd / math.sqrt(n), n - 1, sd, n)


def within_run_noise(series: Sequence[float | None]) -> Noise | None:
    """The noise of one run's mean from its per-second samples, by batch means.

    The samples (missing seconds skipped) are cut into at most MAX_BATCHES contiguous
    batches of equal size (the first samples that do not fill a batch are left out); the
    standard error is the batch means' standard deviation over the square root of their
    number, with one degree of freedom less than batches. Batches longer than a second damp
    the autocorrelation of neighbouring seconds; with ten samples or fewer each second is its
    own batch and the autocorrelation is not removed (the estimate is then too small when
    neighbouring seconds move together). None with fewer than two samples.
    """
    vs = [float(v) for v in series if v is not None and math.isfinite(v)]
    m = len(vs)
    if m < 2:
        return None
    size = math.ceil(m / MAX_BATCHES)
    k = m // size
    used = vs[m - k * size :]
    means = [statistics.fmean(used[i * size : (i + 1) * size]) for i in range(k)]
    sd = statistics.stdev(means)
    se = sd / math.sqrt(k)
    return Noise("within-run", se, k - 1, se, k, samples=m)


@dataclass(frozen=True)
class Welch:
    t: float  # (value - baseline) / se; +-inf when se is 0 and the means differ
    df: float  # Welch-Satterthwaite (fractional)
    critical: float  # t(0.975, df)
    diff: float  # value mean - baseline mean
    half_width: float  # of the 95 % interval of the difference

    @property
    def significant(self) -> bool:
        return abs(self.t) > self.critical


def welch(value_mean: float, value: Noise, base_mean: float, base: Noise) -> Welch:
    """Welch's t-test of two means with their standard errors (two-sided, 95 %)."""
    var = value.se**2 + base.se**2
    diff = value_mean - base_mean
    df: float
    if var == 0:
        df = value.df + base.df
        t = 0.0 if diff == 0 else math.copysign(math.inf, diff)
    else:
        # Between the smaller side's df and their sum.
        df = max(1.0, var**2 / (value.se**4 / value.df + base.se**4 / base.df))
        t = diff / math.sqrt(var)
    critical = t_critical_95(df)
    return Welch(t, df, critical, diff, critical * math.sqrt(var))


def repeats_needed(diff: float, value_sd: float, base_sd: float) -> int | None:
    """The fewest repetitions a side (at least MIN_ADVISED_REPEATS) for which Welch's test
    at 95 % would see a real difference of ``diff`` with POWER chance, given the runs'
    standard deviations; None when more than MAX_ADVISED_REPEATS would be needed.

    ``n >= (t(0.975, 2n - 2) + z(POWER))^2 * (sd_a^2 + sd_b^2) / diff^2``: the usual
    sample-size rule for two means, with Student's t for the small n.
    """
    spread = value_sd**2 + base_sd**2
    for n in range(MIN_ADVISED_REPEATS, MAX_ADVISED_REPEATS + 1):
        if diff != 0 and (t_critical_95(2 * n - 2) + _Z_POWER) ** 2 * spread <= n * diff**2:
            return n
    return None


@dataclass(frozen=True)
class Judgement:
    """A verdict and why: what the tables show after the verdict and ``--json`` holds."""

    verdict: str
    reason: str  # short, shown beside the verdict: "t-test, 3 vs 3 repeats", "run --repeat 4; …"
    basis: Basis | None = None  # the weaker of the two sides' noise; None: no test
    t: float | None = None
    df: float | None = None  # Welch-Satterthwaite
    significant: bool | None = None
    # The 95 % interval of (value - baseline) / baseline mean, from the t-test.
    diff_ci95_low: float | None = None
    diff_ci95_high: float | None = None
    several_times: bool = False
    repeats_needed: int | None = None  # too few repeats: a side, to resolve the difference
    value_noise: Noise | None = None
    base_noise: Noise | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "basis": self.basis,
            "t": None if self.t is None or not math.isfinite(self.t) else self.t,
            "df": self.df,
            "significant": self.significant,
            "diff_ci95_low": self.diff_ci95_low,
            "diff_ci95_high": self.diff_ci95_high,
            "several_times": self.several_times,
            "repeats_needed": self.repeats_needed,
            "noise": None if self.value_noise is None else self.value_noise.as_dict(),
            "baseline_noise": None if self.base_noise is None else self.base_noise.as_dict(),
        }


BASELINE_JUDGEMENT = Judgement(BASELINE, "")
NO_BASELINE_JUDGEMENT = Judgement(NO_BASELINE, "")


@dataclass(frozen=True)
class Side:
    """One setup's figure: each repetition's value and, per repetition, its per-second
    samples (None when not recorded)."""

    values: tuple[float, ...]
    series: tuple[Sequence[float | None] | None, ...] = ()

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.values) if self.values else None

    def noise(self) -> Noise | None:
        """Run-to-run noise from two or more repetitions, else the single run's within-run
        noise, else None."""
        found = repeats_noise(self.values)
        if found is None and len(self.values) == 1 and self.series and self.series[0]:
            found = within_run_noise(self.series[0])
        return found


def _several_times(value: Sequence[float], base: Sequence[float]) -> bool:
    """Every value at least SEVERAL_TIMES every baseline value, or the other way round."""
    lo_v, hi_v, lo_b, hi_b = min(value), max(value), min(base), max(base)
    return lo_v >= SEVERAL_TIMES * hi_b or lo_b >= SEVERAL_TIMES * hi_v


def _repeat_advice(needed: int, why: str) -> str:
    return f"run --repeat {needed}; {why}"


def judge(value: Side, base: Side, *, higher_is_faster: bool = True) -> Judgement:
    """The verdict of ``value`` against ``base`` (see the module docstring)."""
    v_mean, b_mean = value.mean, base.mean
    if v_mean is None or b_mean is None:
        return Judgement(NOT_MEASURED, "no value on one side")
    direction = FASTER if (v_mean > b_mean) == higher_is_faster else SLOWER
    several = _several_times(value.values, base.values)
    v_noise, b_noise = value.noise(), base.noise()
    runs = f"t-test, {len(value.values)} vs {len(base.values)} repeats"
    if v_noise is None or b_noise is None:
        if several:
            return Judgement(direction, "2x or more; noise not measured", several_times=True)
        return Judgement(
            TOO_FEW_REPEATS,
            _repeat_advice(MIN_ADVISED_REPEATS, "noise not measured"),
            several_times=False,
            repeats_needed=MIN_ADVISED_REPEATS,
        )
    test = welch(v_mean, v_noise, b_mean, b_noise)
    basis: Basis = "repeats" if v_noise.basis == b_noise.basis == "repeats" else "within-run"
    needed = repeats_needed(test.diff, v_noise.run_sd, b_noise.run_sd)
    if abs(test.diff) < MIN_ADVISED_DIFF * abs(b_mean):
        needed = None  # too small a difference to spend repetitions on
    common: dict[str, Any] = {
        "basis": basis,
        "t": test.t,
        "df": test.df,
        "significant": test.significant,
        "diff_ci95_low": (test.diff - test.half_width) / b_mean if b_mean else None,
        "diff_ci95_high": (test.diff + test.half_width) / b_mean if b_mean else None,
        "several_times": several,
        "value_noise": v_noise,
        "base_noise": b_noise,
    }
    if several and (basis == "repeats" or test.significant):
        where = "in every repeat" if basis == "repeats" else "beyond within-run noise"
        return Judgement(direction, f"2x or more {where}", **common)
    if test.significant and basis == "repeats":
        return Judgement(direction, runs, **common)
    if test.significant:  # beyond the within-run noise, but run-to-run noise is unknown
        advised = needed or MIN_ADVISED_REPEATS  # none: under 1 %; 3 measure the noise
        return Judgement(
            TOO_FEW_REPEATS,
            _repeat_advice(advised, "within-run noise only"),
            repeats_needed=advised,
            **common,
        )
    smallest = min(len(value.values), len(base.values))
    if needed is not None and needed > smallest:
        why = runs if basis == "repeats" else "within-run noise only"
        return Judgement(
            TOO_FEW_REPEATS, _repeat_advice(needed, why), repeats_needed=needed, **common
        )
    why = runs if basis == "repeats" else "within-run noise"
    return Judgement(WITHIN_NOISE, why, **common)
