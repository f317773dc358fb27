"""fio's log-linear latency histogram, reproduced exactly (fio >= 2.99, values in ns).

fio keeps every latency sample in one of 1856 bins (``stat.h``: 29 groups of 64 bins).
Values below 128 ns get one bin each; above that, each power of two is split into 64
equal bins, so a bin's width is at most 1/128 of its value. json+ output prints the
non-empty bins keyed by each bin's *representative value* (low edge + half the width),
and every percentile fio prints is such a representative value too.

With the bins, percentiles can be recomputed exactly the way fio does, and histograms
from several jobs, clients or hosts can be merged exactly (fio sums them the same way
for ``group_reporting``). Percentiles themselves must never be averaged.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

from iobench.model import PERCENTILES, LatencyStats

PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS  # 64
GROUP_NR = 29
NR = GROUP_NR * PLAT_VAL  # 1856

# fio compares in C ``long double``; on x86-64 that is the x87 80-bit format, whose
# significand has 64 bits. Every long double operation is rounded to that precision.
LONG_DOUBLE_BITS = 64


def val_to_idx(ns: int) -> int:
    """The bin index fio files a latency of ``ns`` nanoseconds under (``plat_val_to_idx``)."""
    if ns < 0:
        raise ValueError(f"a latency cannot be negative: {ns}")
    msb = ns.bit_length() - 1 if ns else 0
    if msb <= PLAT_BITS:  # below 128 ns every value has its own bin
        return ns
    error_bits = msb - PLAT_BITS
    base = (error_bits + 1) << PLAT_BITS
    offset = (PLAT_VAL - 1) & (ns >> error_bits)
    return min(base + offset, NR - 1)


def idx_to_val(idx: int) -> int:
    """The representative value (ns) fio prints for bin ``idx`` (``plat_idx_to_val``).

    It is the bin's low edge plus half its width; for every bin from 128 on, that is an
    integer, exactly what fio prints.
    """
    if not 0 <= idx < NR:
        raise ValueError(f"histogram index must be in 0..{NR - 1}, not {idx}")
    if idx < (PLAT_VAL << 1):
        return idx
    error_bits = (idx >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    k = idx % PLAT_VAL
    # base + (k + 0.5) * 2**error_bits, with error_bits >= 1
    return base + (k << error_bits) + (1 << (error_bits - 1))


def _round_to_bits(x: Fraction, bits: int = LONG_DOUBLE_BITS) -> Fraction:
    """Round a non-negative ``x`` to ``bits`` significant bits, half to even (IEEE)."""
    if x <= 0:
        return x
    # exponent e such that 2**e <= x < 2**(e+1)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    scale = Fraction(2) ** (bits - 1 - e)
    scaled = x * scale  # in [2**(bits-1), 2**bits)
    q, r = divmod(scaled.numerator, scaled.denominator)
    twice_r = 2 * r
    if twice_r > scaled.denominator or (twice_r == scaled.denominator and q % 2 == 1):
        q += 1
    return Fraction(q) / scale


@functools.lru_cache(maxsize=1024)
def _share(p: float) -> tuple[int, int]:
    """``(m, k)``: fio's ``(long double) p / 100.0`` is ``m / 2**k`` (a 64-bit ``m``)."""
    r = _round_to_bits(Fraction(p) / 100)
    return r.numerator, r.denominator.bit_length() - 1  # a power of two: rounded to bits


def _count_reaching(p: float, n: int) -> int:
    """The fewest samples that reach fio's threshold ``(long double) p / 100.0 * n`` (x87
    rounding: :func:`_share`, then the product rounded to 64 bits), its ceiling, in integer
    arithmetic: a report's latency curves ask for a hundred percentiles of each histogram,
    and Fractions took 7 ms for them."""
    m, k = _share(p)
    product = m * n  # exact; the threshold is product / 2**k rounded to 64 bits
    excess = product.bit_length() - LONG_DOUBLE_BITS
    if excess > 0:  # round to 64 significant bits, half to even
        q, r = product >> excess, product & ((1 << excess) - 1)
        half = 1 << (excess - 1)
        if r > half or (r == half and q & 1):
            q += 1
        product = q << excess
    return -(-product >> k)  # the ceiling of product / 2**k


def percentiles_from_bins(
    bins: Mapping[int, int], ps: Sequence[float], *, n: int | None = None
) -> list[tuple[float, float]]:
    """Recompute percentiles from json+ ``bins`` exactly as fio does.

    ``bins`` maps a bin's representative value (ns, as json+ prints it) to its count.
    Returns ``(p, ns)`` pairs in ascending ``p``: for each ``p`` the representative value
    of the first bin (in index order) where the running count reaches ``p/100 * N``,
    with no interpolation (``calc_clat_percentiles``). Returns ``[]`` when the bins hold
    no samples.

    ``n`` is the sample count the thresholds are taken from; it defaults to the sum of
    the bins. fio uses its latency ``N``, which equals that sum in a final report but
    can be off by the IOs in flight in a ``--status-interval`` interim snapshot; pass
    ``N`` to reproduce fio's figures for such a snapshot. A percentile the bins cannot
    reach (``n`` larger than their sum) is left out, where fio logs an error.
    """
    for p in ps:
        if not 0 < p <= 100:
            raise ValueError(f"percentiles must be in (0, 100], not {p}")
    counts: dict[int, int] = {}
    for value, count in bins.items():
        if count < 0:
            raise ValueError(f"bin {value} has a negative count {count}")
        idx = val_to_idx(value)
        counts[idx] = counts.get(idx, 0) + count
    total = sum(counts.values())
    if total == 0:
        return []
    if n is None:
        n = total
    elif n < 1:
        raise ValueError(f"the sample count must be positive, not {n}")
    wanted = sorted(ps)
    thresholds = [_count_reaching(p, n) for p in wanted]  # running counts are whole
    out: list[tuple[float, float]] = []
    running = 0
    j = 0
    for idx in sorted(counts):
        running += counts[idx]
        while j < len(wanted) and running >= thresholds[j]:
            out.append((float(wanted[j]), float(idx_to_val(idx))))
            j += 1
        if j == len(wanted):
            break
    return out


def merge_bins(*bins: Mapping[int, int]) -> dict[int, int]:
    """Sum histograms bin by bin (keys are representative values, as json+ prints them)."""
    merged: dict[int, int] = {}
    for histogram in bins:
        for value, count in histogram.items():
            merged[value] = merged.get(value, 0) + count
    return merged


def merge_latency(stats: Sequence[LatencyStats]) -> LatencyStats:
    """Combine latency statistics of several jobs/clients as fio's group_reporting does.

    - n is summed; min is the smallest min, max the largest max;
    - mean and stddev use the parallel (Chan/Welford) update fio uses in ``sum_stat``,
      with ``S = stddev**2 * (n - 1)`` recovered from each input;
    - bins are summed and percentiles recomputed from them, for ``model.PERCENTILES`` and
      every percentile an input carried. If any input lacks bins, the result has neither
      bins nor percentiles: percentiles are never averaged.

    Inputs with no samples are ignored. A single input is returned unchanged.
    """
    live = [s for s in stats if s.n > 0]
    if not live:
        raise ValueError("merge_latency needs at least one LatencyStats with samples")
    if len(live) == 1:
        return live[0]

    first, *rest = live
    n, mean, s_sum = first.n, first.mean_ns, first.stddev_ns**2 * (first.n - 1)
    for s in rest:
        delta = s.mean_ns - mean
        total = n + s.n
        mean, s_sum = (
            (s.mean_ns * s.n + mean * n) / total,
            s_sum + s.stddev_ns**2 * (s.n - 1) + delta**2 * n * s.n / total,
        )
        n = total
    stddev = math.sqrt(s_sum / (n - 1))  # n >= 2: two inputs with samples

    bins: dict[int, int] = {}
    percentiles: tuple[tuple[float, float], ...] = ()
    if all(s.bins for s in live):
        bins = merge_bins(*(s.bins for s in live))
        ps = _wanted_percentiles(s.percentiles for s in live)
        percentiles = tuple(percentiles_from_bins(bins, ps))
    return LatencyStats(
        n=n,
        min_ns=min(s.min_ns for s in live),
        max_ns=max(s.max_ns for s in live),
        mean_ns=mean,
        stddev_ns=stddev,
        percentiles=percentiles,
        bins=bins,
    )


def _wanted_percentiles(lists: Iterable[tuple[tuple[float, float], ...]]) -> list[float]:
    wanted = set(PERCENTILES)
    for pairs in lists:
        wanted.update(p for p, _ in pairs if 0 < p <= 100)
    return sorted(wanted)
