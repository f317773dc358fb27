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
    format_rate,
    format_rate_decimal,
    format_size_short,
    non_ascii_digit,
    parse_count,
    parse_duration,
    parse_latency_ns,
    parse_rate,
    parse_size,
    plain_figure,
    rate_is_decimal,
    rounded_down,
    size_to_type,
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


@pytest.mark.parametrize(
    ("runtime", "written"),
    [("400us", "1ms"), ("1us", "1ms"), ("0.4ms", "1ms"), ("1499us", "1ms"), ("1500us", "2ms"),
     ("1.0004s", "1000ms"), ("2500ms", "2500ms"), ("3s", "3s"), ("2m", "120s")],
)  # fmt: skip
def test_the_job_file_never_gives_fio_a_runtime_of_zero(
    runtime: str, written: str, cli: Callable[..., tuple[int, str, str]]
) -> None:
    """fio reads runtime=0 as no limit at all: a runtime under half a millisecond is
    written as 1ms, the least fio can take, never rounded down to 0ms."""
    code, out, err = cli("suites", "export", "quick", "--runtime", runtime)
    assert code == 0, err
    runtimes = {line for line in out.splitlines() if line.startswith("runtime=")}
    assert runtimes == {f"runtime={written}"}


@given(st.floats(min_value=1e-9, max_value=1e6, allow_nan=False))
def test_a_positive_duration_is_never_written_as_zero(seconds: float) -> None:
    written = parse_duration(fio_duration(seconds))
    assert written > 0
    assert written == pytest.approx(seconds, abs=0.0005) or written == 0.001 > seconds


@given(st.integers(min_value=1, max_value=1 << 50))
def test_short_block_size_round_trips(n: int) -> None:
    assert parse_size(format_size_short(n)) == n


# One rule for every figure (docs/report.md, "Numbers and units"): three significant digits,
# trailing zeros kept, the prefix chosen after rounding.
@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "-"), (math.nan, "-"), (math.inf, "-"), (0, "0"), (0.0, "0"), (1e-9, "1.00e-09"),
     (0.0004, "4.00e-04"), (0.001234, "0.00123"), (0.5, "0.500"), (2.657, "2.66"),
     (9.996, "10.0"), (42, "42.0"), (99.94, "99.9"), (99.95, "100"), (99.96, "100"),
     (999.4, "999"), (999.5, "1.00k"), (999.95, "1.00k"), (1e3, "1.00k"), (1234, "1.23k"),
     (5000, "5.00k"), (9994.9, "9.99k"), (9999.6, "10.0k"), (12_345, "12.3k"),
     (64_912.3, "64.9k"), (93_940, "93.9k"), (99_999, "100k"), (140_000, "140k"),
     (999_499, "999k"), (999_500, "1.00M"), (999_950, "1.00M"), (1e6, "1.00M"),
     (1.2e6, "1.20M"), (12.35e6, "12.3M"), (1e9, "1.00G"), (-1234, "-1.23k"), (-0.5, "-0.500")],
)  # fmt: skip
def test_counts_show_three_significant_digits(value: float | None, shown: str) -> None:
    assert format_iops(value) == shown


def test_one_column_of_iops_carries_one_precision() -> None:
    # Issue 12: "140.0k" beside "93.9k" in one column.
    assert [format_iops(v) for v in (140_000.0, 93_900.0, 5_000.0, 342.0)] == [
        "140k", "93.9k", "5.00k", "342"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "-"), (0, "0 B"), (512, "512 B"), (1023, "1023 B"), (0.5, "0.500 B"),
     (4096, "4 KiB"), (1536, "1.50 KiB"), (41_943, "41.0 KiB"), (16 << 20, "16 MiB"),
     (1023.9 * 1024, "1020 KiB"), (int(23.5 * 2**30), "23.5 GiB"), (3 << 29, "1.50 GiB"),
     (256 << 30, "256 GiB"), (1 << 50, "1 PiB"), (5 << 60, "5120 PiB"), (-4096, "-4 KiB")],
)  # fmt: skip
def test_sizes_are_binary_and_whole_sizes_whole(value: float | None, shown: str) -> None:
    assert format_bytes(value) == shown


@pytest.mark.parametrize(
    ("value", "binary", "decimal"),
    [(None, "-", "-"), (0, "0 B/s", "0 B/s"), (42, "42.0 B/s", "42.0 B/s"),
     (999.5, "1000 B/s", "1.00 kB/s"), (28 * 1024, "28.0 KiB/s", "28.7 kB/s"),
     (200 * 2**20, "200 MiB/s", "210 MB/s"), (150e6, "143 MiB/s", "150 MB/s"),
     (0.9 * 200 * 2**20, "180 MiB/s", "189 MB/s"), (75e6, "71.5 MiB/s", "75.0 MB/s"),
     (5.14e9, "4.79 GiB/s", "5.14 GB/s"), (4.8e9, "4.47 GiB/s", "4.80 GB/s"),
     (999.96e6, "954 MiB/s", "1.00 GB/s"), (1023.9 * 2**30, "1020 GiB/s", "1.10 TB/s"),
     (2**40, "1.00 TiB/s", "1.10 TB/s")],
)  # fmt: skip
def test_rates_binary_with_decimal_only_on_request(
    value: float | None, binary: str, decimal: str
) -> None:
    assert (format_rate(value), format_rate_decimal(value)) == (binary, decimal)


@pytest.mark.parametrize(
    ("ns", "shown"),
    [(None, "-"), (0, "0 ns"), (0.5, "0.500 ns"), (850, "850 ns"), (999.6, "1.00 µs"),
     (7_200, "7.20 µs"), (7_450, "7.45 µs"), (12_345, "12.3 µs"), (4_560_000, "4.56 ms"),
     (5e6, "5.00 ms"), (999_950_000, "1.00 s"), (1.2e9, "1.20 s"), (3.6e12, "3600 s")],
)  # fmt: skip
def test_latencies_three_significant_digits(ns: float | None, shown: str) -> None:
    assert format_ns(ns) == shown


@given(st.floats(min_value=1e-3, max_value=1e14))
def test_a_shown_count_reads_back_within_its_last_digit(value: float) -> None:
    text = format_iops(value)
    number = text.rstrip("kMGT")
    power = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}.get(text[-1], 1.0)
    assert len(number.replace(".", "").lstrip("0")) == 3  # three significant digits
    assert float(number) < 1000 or text.endswith("T")  # 1.00M, never 1000k
    assert float(number) * power == pytest.approx(value, rel=5e-3)
    if text[-1] in "kM" or text[-1].isdigit():
        assert parse_count(text) == float(number) * power  # what --expect reads back


@given(st.floats(min_value=1.0, max_value=1e14))
def test_a_shown_rate_reads_back_as_the_same_rate(value: float) -> None:
    for text in (format_rate(value), format_rate_decimal(value)):
        assert parse_rate(text.replace(" ", "")) == pytest.approx(value, rel=5e-3)


def test_plain_figure_drops_only_trailing_zeros() -> None:
    shown = [plain_figure(t) for t in ("2.00 ms", "1.50k", "10.0k", "100 ms", "1.05k", "-")]
    assert shown == ["2 ms", "1.5k", "10k", "100 ms", "1.05k", "-"]


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


def test_a_threshold_rounds_down_to_the_figure_it_shows() -> None:
    # 90 % of 5000 IOPS, of 200 MiB/s and of 150 MB/s (128.7 MiB/s).
    assert rounded_down(4500.0, 1000.0) == 4500.0 and format_iops(4500.0) == "4.50k"
    assert rounded_down(0.9 * 200 * 2**20, 1024.0) == 180 * 2**20
    assert rounded_down(0.9 * 150e6, 1024.0) == 128 * 2**20
    assert rounded_down(3331.8, 1000.0) == 3330.0  # never above: 3.33k, not 3.34k
    assert rounded_down(0.0, 1000.0) == 0.0


@given(st.floats(min_value=1.0, max_value=1e13))
def test_a_rounded_down_threshold_is_at_most_its_value_and_shown_exactly(value: float) -> None:
    for base, fmt, parse in ((1000.0, format_iops, parse_count), (1024.0, format_rate, None)):
        low = rounded_down(value, base)
        assert value * 0.99 <= low <= value * (1 + 1e-9)
        text = fmt(low).replace(" ", "")
        if parse is not None and text[-1] in "0123456789kM":
            assert parse(text) == pytest.approx(low, rel=1e-12)
        elif parse is None:
            assert parse_rate(text) == pytest.approx(low, rel=1e-12)


def test_a_rate_says_whether_it_is_decimal() -> None:
    assert [rate_is_decimal(t) for t in ("150MB/s", "75 kB/s", "200MiB/s", "1.5GiB/s", "4k")] == [
        True, True, False, False, None
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("n", "typed"),
    [
        (25.6 * (1 << 30), "26G"),  # a tenth of a 256 GiB disk
        (8 << 30, "8G"),  # whole: as it is
        (1.2 * (1 << 40), "1229G"),  # 2T would be 67 % more
        (12.8 * (1 << 40), "13T"),
        (409.6 * (1 << 20), "410M"),
        (5000, "5k"),
        (900, "900"),
    ],
)
def test_a_size_to_type_is_round_and_enough(n: float, typed: str) -> None:
    assert size_to_type(n) == typed


@given(st.floats(min_value=1, max_value=2.0**50))
def test_a_size_to_type_reads_back_as_at_least_the_size_and_under_a_tenth_more(n: float) -> None:
    back = parse_size(size_to_type(n))
    assert n <= back <= max(n * 1.1, n + 1)


def test_listed_joins_names_as_a_sentence_does() -> None:
    from iobench.units import listed

    assert [listed(["a"]), listed(["a", "b"]), listed(["a", "b", "c"])] == [
        "a", "a and b", "a, b and c",
    ]  # fmt: skip
    assert listed(list("abcdefg"), most=5) == "a, b, c, d, e and 2 more"
    assert listed(list("abcde"), most=5) == "a, b, c, d and e"
