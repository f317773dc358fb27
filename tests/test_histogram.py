"""fio's latency histogram: index mapping, percentiles and merging, checked against fio.

The recorded outputs (scripts/record-fio-outputs, fio 3.33) carry fio's own percentiles
next to the json+ bins they were computed from, so every bin-carrying latency object is a
test case for percentiles_from_bins.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobench.analysis.histogram import (
    NR,
    _count_reaching,
    _round_to_bits,
    idx_to_val,
    merge_bins,
    merge_latency,
    percentiles_from_bins,
    val_to_idx,
)
from iobench.fio.parse import ALL_CLIENTS, iter_json_objects, parse_fio_output
from iobench.model import PERCENTILES, LatencyStats

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"
JSONPLUS = sorted(RECORDED.glob("*jsonplus.json"))

# -- the index mapping -------------------------------------------------------------------


def test_constants_match_fio() -> None:
    assert NR == 1856
    assert idx_to_val(NR - 1) == 17_112_760_320  # what fio prints for anything >= ~17.2 s


def test_known_representative_values() -> None:
    # Values checked against fio's output (FIO.md section 1.9).
    assert [idx_to_val(i) for i in (0, 127, 128, 191, 192)] == [0, 127, 129, 255, 258]


def test_every_index_round_trips_and_values_increase() -> None:
    values = [idx_to_val(i) for i in range(NR)]
    assert [val_to_idx(v) for v in values] == list(range(NR))
    assert all(a < b for a, b in itertools.pairwise(values))


def test_out_of_range_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match=rf"^histogram index must be in 0\.\.{NR - 1}, not {NR}$"):
        idx_to_val(NR)
    with pytest.raises(ValueError, match=r"^histogram index must be in 0\.\.1855, not -1$"):
        idx_to_val(-1)
    with pytest.raises(ValueError, match=r"^a latency cannot be negative: -1$"):
        val_to_idx(-1)
    assert val_to_idx(2**40) == NR - 1  # fio clamps, it does not fail
    with pytest.raises(ValueError, match=r"^percentiles must be in \(0, 100\], not 100\.5$"):
        percentiles_from_bins({100: 1}, [100.5])
    with pytest.raises(ValueError, match=r"^bin 100 has a negative count -1$"):
        percentiles_from_bins({100: -1, 200: 2}, [50.0])
    with pytest.raises(ValueError, match=r"^the sample count must be positive, not 0$"):
        percentiles_from_bins({100: 1}, [50.0], n=0)


def test_values_of_one_bin_are_counted_together() -> None:
    """json+ may print two values that fio files under one bin (1000 and 1001 ns are in
    the same 8 ns bin): their counts add up."""
    assert val_to_idx(1000) == val_to_idx(1001) != val_to_idx(5000)
    bins = {1000: 5, 1001: 5, 5000: 10}
    assert percentiles_from_bins(bins, [50.0]) == [(50.0, float(idx_to_val(val_to_idx(1000))))]
    assert percentiles_from_bins({100: 1}, [50.0], n=1) == [(50.0, 100.0)]  # one sample


@given(st.integers(min_value=0, max_value=NR - 1))
def test_val_to_idx_inverts_idx_to_val(i: int) -> None:
    assert val_to_idx(idx_to_val(i)) == i


@given(st.integers(min_value=0, max_value=NR - 2))
def test_idx_to_val_is_increasing(i: int) -> None:
    assert idx_to_val(i) < idx_to_val(i + 1)


@given(st.integers(min_value=0, max_value=2**34 - 1))
def test_representative_value_is_close(v: int) -> None:
    rep = idx_to_val(val_to_idx(v))
    if v < 128:
        assert rep == v
    else:
        assert abs(rep - v) <= 0.008 * v


# -- percentiles against fio -------------------------------------------------------------


def latency_objects(node: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every latency object with json+ bins, wherever it sits (clat, lat, slat, sync)."""
    if isinstance(node, dict):
        if "bins" in node:
            yield where, node
        for key, value in node.items():
            yield from latency_objects(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from latency_objects(value, f"{where}[{i}]")


def all_binned_objects() -> list[tuple[str, dict[str, Any], bool]]:
    """(where, latency object, is it in the file's final report?) for every recording."""
    found = []
    for path in JSONPLUS:
        reports = iter_json_objects(path.read_text())
        for n, report in enumerate(reports):
            for where, obj in latency_objects(report):
                found.append((f"{path.stem}#{n}{where}", obj, n == len(reports) - 1))
    return found


BINNED = all_binned_objects()


def test_recorded_jsonplus_cover_clat_lat_and_sync() -> None:
    kinds = {where.rsplit(".", 1)[1] for where, _, _ in BINNED}
    assert {"clat_ns", "lat_ns"} <= kinds
    assert any(".sync." in where for where, _, _ in BINNED)  # fsync latencies (psync + fsync=4)
    assert any(".client_stats[" in where for where, _, _ in BINNED)
    assert any(not final for _, _, final in BINNED)  # --status-interval snapshots
    assert len(BINNED) >= 12


@pytest.mark.parametrize(("where", "obj", "final"), BINNED, ids=[w for w, _, _ in BINNED])
def test_percentiles_from_bins_equal_fios_own(where: str, obj: dict[str, Any], final: bool) -> None:
    bins = {int(k): v for k, v in obj["bins"].items()}
    if final:
        assert sum(bins.values()) == obj["N"]
    else:
        # An interim snapshot is read while IOs complete: bins and N may disagree by the
        # IOs in flight (seen: 240230 vs 240229). fio's thresholds use N.
        assert abs(sum(bins.values()) - obj["N"]) <= 8
    assert all(idx_to_val(val_to_idx(k)) == k for k in bins)  # keys are representatives
    fio = {float(k): float(v) for k, v in obj["percentile"].items()}
    ours = dict(percentiles_from_bins(bins, list(fio), n=obj["N"]))
    assert ours == fio
    if final:
        assert dict(percentiles_from_bins(bins, list(fio))) == fio


def test_parsed_bins_reproduce_parsed_percentiles() -> None:
    out = parse_fio_output((RECORDED / "libaio-randread-4k-qd8-jsonplus.json").read_text())
    read = out.jobs[0].read
    assert read is not None
    for stats in (read.clat, read.lat, read.slat):
        assert stats is not None
        if stats.bins:
            ps = [p for p, _ in stats.percentiles]
            assert tuple(percentiles_from_bins(stats.bins, ps)) == stats.percentiles
    assert read.clat is not None and read.lat is not None
    assert read.clat.bins and read.lat.bins  # lat_percentiles=1 gives lat bins too


def _threshold(p: float, n: int) -> Fraction:
    """fio's ``(long double) p / 100.0 * n``, each step rounded as the x87 FPU rounds it,
    in Fractions: the reference the parser's integer form (_count_reaching) is held to."""
    return _round_to_bits(_round_to_bits(Fraction(p) / 100) * n)


def test_threshold_follows_fios_long_double_not_exact_arithmetic() -> None:
    # fio: sum >= (long double) p / 100.0 * N. On x86-64 0.6L is slightly above 0.6, so at
    # N = 96800 the threshold is just above 58080 and the 58080th sample is not enough.
    # (Checked against gcc's long double on this machine: ceill() gives 58081.)
    assert Fraction(60) / 100 * 96800 == 58080
    assert _threshold(60.0, 96800) > 58080
    low, high = idx_to_val(500), idx_to_val(600)
    bins = {low: 58080, high: 96800 - 58080}
    assert percentiles_from_bins(bins, [60.0]) == [(60.0, float(high))]
    assert percentiles_from_bins(bins, [59.0]) == [(59.0, float(low))]


@given(
    st.floats(min_value=0, max_value=100, exclude_min=True),
    st.integers(min_value=1, max_value=2**80) | st.sampled_from([1, 2, 3, 96800, 10**6]),
)
def test_the_integer_threshold_is_the_ceiling_of_fios_long_double_one(p: float, n: int) -> None:
    """percentiles_from_bins compares whole running counts with the integer form: the
    same verdict as fio's long double threshold, for any percentile and sample count."""
    assert _count_reaching(p, n) == math.ceil(_threshold(p, n))
    assert _count_reaching(60.0, 96800) == 58081  # the case above, whole


def test_the_integer_threshold_at_counts_beyond_64_bits() -> None:
    """Sample counts of 64 to 80 bits (merged histograms of long runs), where the product
    is rounded before its ceiling is taken: 400 seeded pairs, and ties half way."""
    rng = random.Random(27)
    cases = [(rng.uniform(0.001, 100.0), rng.randrange(2**63, 2**80)) for _ in range(400)]
    cases += [(50.0, 2**64 + 1), (50.0, 2**65 + 2), (50.0, 2**65 + 6), (25.0, 3 * 2**64 + 2)]
    # Just over half way: the bits cut off are 100...001 (found by solving for them).
    cases += [(60.0, 2813128471240706621445), (60.0, 5764607523034234880005)]
    for p, n in cases:
        assert _count_reaching(p, n) == math.ceil(_threshold(p, n)), (p, n)


@pytest.mark.parametrize(
    "value",
    [2**53 + 1, 2**53 + 3, 2**54 + 2, 2**54 + 6, 3 * 2**60 + 2**7, Fraction(2**54 + 1, 2**70)],
)
def test_a_tie_rounds_to_even_as_ieee_double_does(value: int | Fraction) -> None:
    """Exactly half way between two 53-bit numbers (rare among random products): to the
    even one, as Python's float() rounds; never always up."""
    assert _round_to_bits(Fraction(value), 53) == Fraction(float(value))


normal_floats = st.floats(min_value=1e-150, max_value=1e150)


@given(normal_floats, normal_floats)
def test_rounding_matches_ieee_double_at_53_bits(a: float, b: float) -> None:
    # The same routine at 53 bits must reproduce Python's (IEEE double) arithmetic.
    assert _round_to_bits(Fraction(a) * Fraction(b), 53) == Fraction(a * b)
    assert _round_to_bits(Fraction(a) / Fraction(b), 53) == Fraction(a / b)


def test_percentile_edge_cases() -> None:
    assert percentiles_from_bins({}, [50.0]) == []
    assert percentiles_from_bins({502: 3}, [100.0, 0.001]) == [(0.001, 502.0), (100.0, 502.0)]
    # A key that is not a representative value is filed under its bin, like a raw sample.
    assert percentiles_from_bins({500: 3}, [50.0]) == [(50.0, 502.0)]
    # n larger than the bins' sum: unreachable percentiles are left out.
    assert percentiles_from_bins({502: 3}, [50.0, 100.0], n=4) == [(50.0, 502.0)]
    for bad in ([0.0], [100.5]):
        with pytest.raises(ValueError):
            percentiles_from_bins({502: 3}, bad)
    with pytest.raises(ValueError):
        percentiles_from_bins({502: 3}, [50.0], n=0)


bins_strategy = st.dictionaries(
    st.integers(min_value=0, max_value=NR - 1).map(idx_to_val),
    st.integers(min_value=0, max_value=1_000),
    max_size=40,
)
ps_strategy = st.lists(st.floats(min_value=0.001, max_value=100.0), min_size=1, max_size=20)


@given(bins_strategy, ps_strategy)
def test_percentiles_are_monotonic_in_p(bins: dict[int, int], ps: list[float]) -> None:
    result = percentiles_from_bins(bins, ps)
    if sum(bins.values()) == 0:
        assert result == []
        return
    assert [p for p, _ in result] == sorted(ps)
    values = [v for _, v in result]
    assert values == sorted(values)
    assert all(v in {float(k) for k, c in bins.items() if c} for v in values)


@given(bins_strategy, ps_strategy)
def test_percentiles_match_sorted_samples(bins: dict[int, int], ps: list[float]) -> None:
    # Independent walk: expand the samples, sort them, take sample number ceil(threshold).
    samples = sorted(v for v, c in bins.items() for _ in range(c))
    result = dict(percentiles_from_bins(bins, ps))
    for p in ps:
        if not samples:
            break
        rank = max(1, math.ceil(_threshold(p, len(samples))))
        assert result[p] == samples[rank - 1]


@given(bins_strategy, bins_strategy, bins_strategy)
def test_merge_bins_is_associative_and_commutative(
    a: dict[int, int], b: dict[int, int], c: dict[int, int]
) -> None:
    def nonzero(d: dict[int, int]) -> dict[int, int]:
        return {k: v for k, v in d.items() if v}

    assert nonzero(merge_bins(a, b)) == nonzero(merge_bins(b, a))
    assert nonzero(merge_bins(merge_bins(a, b), c)) == nonzero(merge_bins(a, merge_bins(b, c)))
    assert nonzero(merge_bins(a, b, c)) == nonzero(merge_bins(merge_bins(a, b), c))
    total = sum(merge_bins(a, b, c).values())
    assert total == sum(a.values()) + sum(b.values()) + sum(c.values())


# -- merging latency statistics ----------------------------------------------------------

stats_strategy = st.builds(
    LatencyStats,
    n=st.integers(min_value=1, max_value=10**7),
    min_ns=st.floats(min_value=0, max_value=1e6),
    max_ns=st.floats(min_value=1e6, max_value=1e10),
    mean_ns=st.floats(min_value=1, max_value=1e9),
    stddev_ns=st.floats(min_value=0, max_value=1e9),
)


@given(stats_strategy)
def test_merge_latency_of_one_is_identity(s: LatencyStats) -> None:
    merged = merge_latency([s])
    assert (merged.n, merged.mean_ns, merged.min_ns, merged.max_ns) == (
        s.n,
        s.mean_ns,
        s.min_ns,
        s.max_ns,
    )


@given(st.lists(st.floats(min_value=0, max_value=1e9), min_size=2, max_size=60), st.data())
def test_merge_latency_equals_statistics_of_all_samples(xs: list[float], data: Any) -> None:
    cut = data.draw(st.integers(min_value=1, max_value=len(xs) - 1))

    def stats(values: list[float]) -> LatencyStats:
        mean = math.fsum(values) / len(values)
        var = (
            math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1) if len(values) > 1 else 0
        )
        return LatencyStats(len(values), min(values), max(values), mean, math.sqrt(var))

    merged = merge_latency([stats(xs[:cut]), stats(xs[cut:])])
    whole = stats(xs)
    assert merged.n == whole.n and merged.min_ns == whole.min_ns and merged.max_ns == whole.max_ns
    assert merged.mean_ns == pytest.approx(whole.mean_ns, rel=1e-9, abs=1e-6)
    assert merged.stddev_ns == pytest.approx(whole.stddev_ns, rel=1e-6, abs=1e-3)


def test_merge_latency_needs_samples() -> None:
    with pytest.raises(ValueError):
        merge_latency([])
    empty = LatencyStats(0, 0, 0, 0, 0)
    with pytest.raises(ValueError):
        merge_latency([empty])
    one = LatencyStats(5, 1, 9, 4, 2)
    assert merge_latency([empty, one]) is one


def test_merge_latency_without_bins_has_no_percentiles() -> None:
    a = LatencyStats(10, 1, 9, 5, 1, percentiles=((99.0, 9.0),))
    b = LatencyStats(10, 2, 8, 5, 1, percentiles=((99.0, 8.0),), bins={8: 10})
    merged = merge_latency([a, b])
    assert merged.percentiles == () and merged.bins == {}  # never average percentiles
    assert merged.n == 20 and (merged.min_ns, merged.max_ns) == (1, 9)


# -- group merge against fio's own "All clients" ------------------------------------------


def same(a: float, b: float) -> bool:
    """Equal to fio's printed precision (6 decimals), far beyond 5 significant digits."""
    return a == pytest.approx(b, rel=1e-8)


@pytest.fixture(scope="module")
def client_server() -> tuple[list[Any], Any]:
    out = parse_fio_output((RECORDED / "client-server-2-jsonplus.json").read_text())
    clients = [j for j in out.jobs if j.jobname != ALL_CLIENTS]
    (total,) = [j for j in out.jobs if j.jobname == ALL_CLIENTS]
    assert len(clients) == 2
    return clients, total


def test_merged_client_percentiles_lie_between_the_clients(client_server: Any) -> None:
    clients, total = client_server
    a, b = (c.read.clat for c in clients)
    assert a.bins and b.bins
    assert total.read.clat.bins == {} and total.read.clat.percentiles == ()  # fio 3.33
    merged = merge_latency([a, b])
    assert sum(merged.bins.values()) == a.n + b.n == total.read.clat.n
    assert merged.bins == merge_bins(a.bins, b.bins)
    ps = [p for p, _ in merged.percentiles]
    assert set(PERCENTILES) <= set(ps)
    for p, value in merged.percentiles:
        pa, pb = a.percentile(p), b.percentile(p)
        if pa is not None and pb is not None:
            assert min(pa, pb) <= value <= max(pa, pb)
    assert merged.percentiles == tuple(percentiles_from_bins(merged.bins, ps))


@pytest.mark.parametrize("kind", ["clat", "lat", "slat"])
def test_merge_latency_matches_all_clients(client_server: Any, kind: str) -> None:
    clients, total = client_server
    parts = [getattr(c.read, kind) for c in clients]
    expected = getattr(total.read, kind)
    merged = merge_latency(parts)
    assert merged.n == expected.n
    assert (merged.min_ns, merged.max_ns) == (expected.min_ns, expected.max_ns)
    assert same(merged.mean_ns, expected.mean_ns)
    assert same(merged.stddev_ns, expected.stddev_ns)


def test_merge_latency_matches_all_clients_for_numjobs_entries() -> None:
    out = parse_fio_output((RECORDED / "client-numjobs2-no-group-reporting-json.json").read_text())
    jobs, total = out.jobs[:2], out.jobs[2]
    assert total.jobname == ALL_CLIENTS
    parts = [j.read.clat for j in jobs if j.read and j.read.clat]
    merged = merge_latency(parts)
    assert total.read is not None and total.read.clat is not None
    assert merged.n == total.read.clat.n
    assert same(merged.mean_ns, total.read.clat.mean_ns)
    assert same(merged.stddev_ns, total.read.clat.stddev_ns)
    assert merged.percentiles == ()  # plain json: no bins, so no merged percentiles


def test_merge_latency_without_samples_says_so() -> None:
    with pytest.raises(ValueError, match=r"^merge_latency needs at least one LatencyStats with"):
        merge_latency([LatencyStats(0, 0, 0, 0, 0)])


def test_merged_percentiles_are_the_standard_ones_and_every_one_an_input_carried() -> None:
    """Every percentile an input showed (0 < p <= 100), beside model.PERCENTILES, is
    recomputed from the merged bins; one outside (0, 100] is not."""
    bins = {1004: 50, 2008: 50}  # representative values of fio's bins
    a = LatencyStats(
        100, 1000, 2000, 1500, 500, percentiles=((0.5, 1000.0), (100.0, 2000.0)), bins=bins
    )
    b = LatencyStats(
        100, 1000, 2000, 1500, 500, percentiles=((0.0, 1000.0), (101.0, 2000.0)), bins=bins
    )
    merged = merge_latency([a, b])
    assert [p for p, _ in merged.percentiles] == sorted({*PERCENTILES, 0.5, 100.0})
    assert dict(merged.percentiles)[0.5] == 1004.0 and dict(merged.percentiles)[100.0] == 2008.0
