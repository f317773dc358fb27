"""The messages of sizes, counts, rates and latencies that are refused (units.py): each
names the text, says what is wrong and gives examples of what is accepted; and the
thresholds rounded down to what their text shows, below 1 too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from iobench.units import OutOfRange, parse_count, parse_latency_ns, parse_rate, rounded_down

HUGE = "1" * 31


FIVE = "\u0665"  # ARABIC-INDIC DIGIT FIVE
NOT_ASCII = f'"{FIVE}" (ARABIC-INDIC DIGIT FIVE) is not an ASCII digit; write numbers with 0-9'


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (parse_count, f"{FIVE}k", f"'{FIVE}k': {NOT_ASCII}, e.g. 5000, 5k or 1.2M"),
        (parse_count, "lots", "'lots' is not a count such as 5000, 5k or 1.2M"),
        (parse_rate, f"{FIVE}MB/s", f"'{FIVE}MB/s': {NOT_ASCII}, e.g. 200MB/s or 125MiB/s"),
        (parse_rate, "fast", "'fast' is not a rate such as 200MB/s, 125MiB/s or 1.5GB/s"),
        (parse_latency_ns, f"{FIVE}ms", f"'{FIVE}ms': {NOT_ASCII}, e.g. 500us, 5ms or 1s"),
        (parse_latency_ns, "5", "'5' is not a duration with its unit, such as 500us, 5ms or 1s"),
    ],
)
def test_a_refused_figure_is_named_with_what_is_accepted(
    parse: Callable[[str], float], text: str, message: str
) -> None:
    with pytest.raises(ValueError) as e:
        parse(text)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("parse", "unit"), [(parse_count, "k"), (parse_rate, "MB/s"), (parse_latency_ns, "ms")]
)
def test_a_number_of_more_than_30_digits_is_out_of_range_named(
    parse: Callable[[str], float], unit: str
) -> None:
    with pytest.raises(OutOfRange) as e:
        parse(HUGE + unit)
    assert str(e.value) == f"{HUGE + unit!r} is too large (31 digits)"


@pytest.mark.parametrize(
    ("value", "base", "expected"),
    [(0.1234, 1000, 0.123), (0.98765, 1024, 0.987), (1.0, 1000, 1.0), (1.2345, 1000, 1.23)],
)
def test_a_threshold_under_1_is_rounded_down_to_three_digits(
    value: float, base: float, expected: float
) -> None:
    assert rounded_down(value, base) == pytest.approx(expected, rel=1e-12)


# -- messages, quoting and cutting (every refusal in its words) ---------------------------------


def _error(parse: Any, value: object) -> str:
    with pytest.raises(ValueError) as e:
        parse(value)
    return str(e.value)


def test_sizes_and_durations_are_refused_in_their_words() -> None:
    from iobench.units import parse_duration, parse_size

    assert _error(parse_size, -1) == "a size cannot be negative"
    assert parse_size(0) == 0
    assert _error(parse_size, "4.5") == "'4.5' is not a whole number of bytes"
    assert (
        _error(parse_size, "4x")
        == "'4x' is not a size; use bytes or a unit: 512, 4k, 1M, 16MiB, 4G"
    )
    assert _error(parse_size, "٤k") == (
        "'٤k': \"٤\" (ARABIC-INDIC DIGIT FOUR) is not an ASCII digit; write numbers with "
        "0-9, e.g. 4k, 1M or 4096"
    )
    assert _error(parse_duration, "٣s") == (
        "'٣s': \"٣\" (ARABIC-INDIC DIGIT THREE) is not an ASCII digit; write numbers with "
        "0-9, e.g. 30, 30s, 500ms or 2m"
    )
    assert _error(parse_duration, "3x") == (
        "'3x' is not a duration; use seconds or a unit: 30, 30s, 500ms, 2m, 1h"
    )
    assert _error(parse_duration, 10**400) == "the duration is too large to mean anything"
    assert _error(parse_duration, "9" * 31 + "s") == f"{'9' * 31 + 's'!r} is too large (31 digits)"
    assert parse_duration("1.5m") == 90.0 and parse_size("1.5k") == 1536


def test_numbers_are_read_exactly_up_to_their_digit_limits() -> None:
    from iobench.units import parse_size

    thirty = "9" * 30
    assert parse_size(thirty) == int(thirty)
    assert parse_size("0" * 40 + "1") == 1  # leading zeros are no digits of the number
    assert parse_size("100" + "0" * 27) == 10**29  # trailing zeros are
    assert _error(parse_size, "9" * 31) == f"'{'9' * 31}' is too large (31 digits)"
    assert parse_size("1." + "0" * 298) == 1  # 300 characters with the decimals
    long = "1." + "0" * 299
    assert (
        _error(parse_size, long) == f"{long[:32]!r}... (301 characters) has too many digits (301)"
    )


def test_a_character_python_reads_as_a_number_is_named() -> None:
    from iobench.units import non_ascii_digit

    assert non_ascii_digit("12 ٤") == '"٤" (ARABIC-INDIC DIGIT FOUR)'
    assert non_ascii_digit("½") == '"½" (VULGAR FRACTION ONE HALF)'
    assert non_ascii_digit("0123456789 k") is None
    assert non_ascii_digit("X") is None
    unnamed = "\U000e01ef"  # a variation selector: not numeric
    assert non_ascii_digit(unnamed) is None


def test_shown_cuts_at_its_limit() -> None:
    from iobench.units import shown

    assert shown("a" * 40) == repr("a" * 40)
    assert shown("a" * 41) == f"{'a' * 32!r}... (41 characters)"
    assert shown(list(range(20))) == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1... (70 characters)"
    assert shown([1, 2, 3], 9) == "[1, 2, 3]"
    assert shown([1, 2, 3], 8) == "... (9 characters)"
    huge = 10**5000
    assert shown(huge) == "a number of thousands of digits"


def test_quoted_writes_json_and_cuts_at_40_characters() -> None:
    from iobench.units import quoted

    assert quoted("4 k") == '"4 k"'
    assert quoted("é") == '"é"'  # as it is, not \\u00e9
    assert quoted("a" * 40) == '"' + "a" * 40 + '"'
    assert quoted("a" * 41) == '"' + "a" * 32 + '..." (41 characters)'
    assert quoted("é" * 41) == '"' + "é" * 32 + '..." (41 characters)'
    assert quoted("a\tb") == '"a\\tb"'
    assert quoted("\u2028") == '"\\u2028"'  # a separator JSON leaves: made printable


def test_printable_escapes_what_does_not_print() -> None:
    from iobench.units import printable

    assert printable("a\u0007b") == "a\\u0007b"
    assert printable("tab\there") == "tab\\u0009here"
    assert printable("plain é") == "plain é"


def test_significant_digits_of_negative_and_rounding_figures() -> None:
    from iobench.units import significant

    assert significant(-93.94) == "-93.9"
    assert significant(-0.012345) == "-0.0123"
    assert significant(-5, 2) == "-5.0"
    assert significant(12345) == "12300"
    assert significant(99.96) == "100"
    assert significant(1.005, 4) == "1.005"
    assert significant(0.5) == "0.500"
    assert significant(123.456, 5) == "123.46"


def test_durations_in_hours_and_minutes() -> None:
    from iobench.units import format_duration

    assert format_duration(59.5) == "59.5s"
    assert format_duration(60) == "1m"
    assert format_duration(75) == "1m15s"
    assert format_duration(3599) == "59m59s"
    assert format_duration(3600) == "1h00m"
    assert format_duration(3660) == "1h01m"
    assert format_duration(3720) == "1h02m"
    assert format_duration(7 * 3600 + 61 * 60) == "8h01m"


def test_bytes_under_a_kib_and_over() -> None:
    from iobench.units import format_bytes

    assert format_bytes(1023.5) == "1020 B"  # an average of bytes, 3 digits
    assert format_bytes(1024) == "1 KiB"
    assert format_bytes(1024.5) == "1.00 KiB"
    assert format_bytes(1536) == "1.50 KiB"


def test_block_sizes_as_users_write_them() -> None:
    from iobench.units import format_size_short

    assert format_size_short(1 << 40) == "1T"
    assert format_size_short(3 << 40) == "3T"
    assert format_size_short(1 << 50) == "1P"
    assert format_size_short(4096) == "4k"


def test_a_size_to_type_adds_at_most_10_percent() -> None:
    from iobench.units import size_to_type

    assert size_to_type(0) == "1"  # at least a byte
    assert size_to_type(0.5) == "1"
    assert size_to_type(1000) == "1k"  # 1024 adds 2.4 %
    assert size_to_type(900) == "900"  # 1k would add 14 %
    assert size_to_type(10 << 30) == "10G"
    assert size_to_type(int(9.5 * (1 << 30))) == "10G"  # 10G adds 5.3 %
    assert size_to_type(int(9.0 * (1 << 30)) + 1) == "9217M"  # 10G would add 11 %
    assert size_to_type(10 * (1 << 20) / 1.1) == "10M"  # a hair under 10 % more


def test_rounded_down_at_a_power_of_the_base() -> None:
    from iobench.units import rounded_down

    assert rounded_down(1000, 1000) == 1000
    assert rounded_down(1024, 1024) == 1024
    assert rounded_down(999.9, 1000) == 999
    assert rounded_down(4500, 1000) == 4500


def test_plain_figures_lose_their_trailing_zeros_only() -> None:
    from iobench.units import plain_figure

    assert plain_figure("2.00 ms") == "2 ms"
    assert plain_figure("1.50k") == "1.5k"
    assert plain_figure("10.0k") == "10k"
    assert plain_figure("100") == "100"  # no point: whole as it is
    assert plain_figure("-2.50 µs") == "-2.5 µs"
    assert plain_figure("1.20\nx") == "1.2\nx"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (9.6, "9.60"),  # near the next power of ten, not rounding up to it: its zero kept
        (9.96, "9.96"),
        (9.996, "10.0"),  # rounding up to the next power: one digit fewer after the point
        (99.96, "100"),
        (0.9996, "1.00"),
        (999.5, "1000"),
        (99960, "100000"),  # a whole part longer than the digits, rounded up to the power
        (99940, "99900"),
        (0.0012345, "0.00123"),
    ],
)
def test_significant_digits_next_to_a_power_of_ten(value: float, shown: str) -> None:
    from iobench.units import significant

    assert significant(value) == shown
    assert significant(-value) == "-" + shown
