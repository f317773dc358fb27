from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobench.units import (
    fio_duration,
    format_bytes,
    format_iops,
    format_ns,
    format_size_short,
    parse_count,
    parse_duration,
    parse_latency_ns,
    parse_size,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4k", 4096), ("4K", 4096), ("4KiB", 4096), ("4kb", 4096), ("1M", 1 << 20),
     ("16MiB", 16 << 20), ("1.5G", 3 << 29), ("4096", 4096), (" 2g ", 2 << 30), (512, 512)],
)  # fmt: skip
def test_parse_size(text: str | int, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["lots", "4x", "-1", "1.3", "", "4 kk", True])
def test_parse_size_rejects_with_a_useful_message(bad: object) -> None:
    with pytest.raises(ValueError, match=r"size|whole number"):
        parse_size(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30", 30.0), ("30s", 30.0), ("2m", 120.0), ("500ms", 0.5), ("1h", 3600.0), (5, 5.0)],
)
def test_parse_duration(text: str | int, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["soon", "5 fortnights", "-3", True])
def test_parse_duration_rejects(bad: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(bad)  # type: ignore[arg-type]


@given(st.integers(min_value=0, max_value=10**6))
def test_fio_duration_round_trips_through_parse(ms: int) -> None:
    assert parse_duration(fio_duration(ms / 1000)) == pytest.approx(ms / 1000)


@given(st.integers(min_value=1, max_value=1 << 50))
def test_short_block_size_round_trips(n: int) -> None:
    assert parse_size(format_size_short(n)) == n


def test_human_formats() -> None:
    assert format_bytes(16 << 20) == "16 MiB"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(None) == "-"
    assert format_iops(64912.3) == "64.9k"
    assert format_iops(1234.0) == "1.23k"
    assert format_iops(2.657) == "2.66"
    assert format_ns(850) == "850 ns"
    assert format_ns(12_345) == "12.3 µs"
    assert format_ns(4_560_000) == "4.56 ms"
    assert format_ns(None) == "-"


def test_counts_take_k_and_m_as_powers_of_ten() -> None:
    assert [parse_count(v) for v in ("6000", "6k", "1.2M", " 5 K ")] == [6000, 6000, 1.2e6, 5000]
    for bad in ("6G", "6ki", "-1", "k", ""):
        with pytest.raises(ValueError, match=r"not a count such as 5000, 5k or 1\.2M"):
            parse_count(bad)


def test_latencies_need_their_unit() -> None:
    got = [parse_latency_ns(v) for v in ("500us", "200µs", "5ms", "0.2ms", "1s", "80ns")]
    assert got == [5e5, 2e5, 5e6, 2e5, 1e9, 80]
    for bad in ("5", "5m", "5 h", "ms"):
        with pytest.raises(ValueError, match="not a duration with its unit"):
            parse_latency_ns(bad)
