from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobench.units import (
    OutOfRange,
    fio_duration,
    format_bytes,
    format_iops,
    format_ns,
    format_size_short,
    non_ascii_digit,
    parse_count,
    parse_duration,
    parse_latency_ns,
    parse_rate,
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


@pytest.mark.parametrize(
    ("parse", "text", "name"),
    [
        (parse_size, "\u0664k", "ARABIC-INDIC DIGIT FOUR"),
        (parse_size, "\uff11M", "FULLWIDTH DIGIT ONE"),
        (parse_duration, "3\u00b2s", "SUPERSCRIPT TWO"),
        (parse_count, "\u0665k", "ARABIC-INDIC DIGIT FIVE"),
        (parse_rate, "\u0968\u0966\u0966MB/s", "DEVANAGARI DIGIT TWO"),
        (parse_latency_ns, "\u2464ms", "CIRCLED DIGIT FIVE"),
    ],
)
def test_digits_other_than_ascii_are_refused_by_name(
    parse: Callable[[str], float], text: str, name: str
) -> None:
    # int() and float() read them; fio does not.
    with pytest.raises(ValueError, match=rf"\({name}\) is not an ASCII digit; write numbers"):
        parse(text)
    assert name in (non_ascii_digit(text) or "")
    assert non_ascii_digit("4k 1.5G 500us µs") is None


@pytest.mark.parametrize(
    ("parse", "text"),
    [(parse_size, "1" * 31 + "k"), (parse_duration, "9" * 400), (parse_count, "1" * 31),
     (parse_rate, "1" * 40 + "MB/s"), (parse_latency_ns, "1" * 31 + "ms")],
)  # fmt: skip
def test_absurdly_large_numbers_are_out_of_range_never_infinite(
    parse: Callable[[str], float], text: str
) -> None:
    with pytest.raises(OutOfRange, match=r"is too large \(\d+ digits\)"):
        parse(text)


def test_durations_given_as_numbers_are_finite_or_refused() -> None:
    assert parse_duration(10**30) == 1e30
    for huge in (10**31, 10**5000, math.inf, 1e300):
        with pytest.raises(OutOfRange):
            parse_duration(huge)
    for bad in (math.nan, -math.inf, -1):
        with pytest.raises(ValueError, match="a duration must be a finite number >= 0") as info:
            parse_duration(bad)
        assert not isinstance(info.value, OutOfRange)


def test_sizes_are_exact_and_messages_cut_long_values_short() -> None:
    assert parse_size("9007199254740993") == 2**53 + 1  # a float would make it 2**53
    with pytest.raises(ValueError, match=r"is not a whole number of bytes"):
        parse_size("1.000000000000000000000001k")
    with pytest.raises(ValueError) as info:
        parse_size("x" * 100_000)
    assert "(100000 characters)" in str(info.value) and len(str(info.value)) < 200


def test_a_long_run_of_spaces_is_refused_at_once() -> None:
    # A pattern with neighbouring \s* backtracks quadratically: 10^10 steps here.
    for parse in (parse_size, parse_duration, parse_count, parse_latency_ns, parse_rate):
        with pytest.raises(ValueError):
            parse("1" + " " * 100_000 + "!")
