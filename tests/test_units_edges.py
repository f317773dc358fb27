"""The messages of sizes, counts, rates and latencies that are refused (units.py): each
names the text, says what is wrong and gives examples of what is accepted; and the
thresholds rounded down to what their text shows, below 1 too."""

from __future__ import annotations

from collections.abc import Callable

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
