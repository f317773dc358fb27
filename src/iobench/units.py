"""Sizes, durations and rates: parse what users type, format what users read.

Every size prefix is a power of 1024, as in fio's ``4k``: ``4k`` = ``4KiB`` = ``4KB`` = 4096
bytes. (fio itself reads ``MB`` and ``MiB`` with different bases depending on its
``kb_base``; iobench converts sizes to bytes before fio sees them, so that never matters.)
Rates are the exception: ``200MB/s`` is 200 x 10^6 bytes a second and ``200MiB/s`` 200 x 2^20,
as fio prints them (and as providers publish them); a lowercase ``b`` (bits) is refused.
That holds for rates written with ``B/s`` (expectations, specs); a suite's ``rate`` option is
a size a second (``50M`` = 50 MiB/s), as in a fio job file.
Durations are seconds unless a unit is given (``us``, ``ms``, ``s``, ``m``, ``h``, ``d``),
as in fio. Values are stored in base units (bytes, seconds, nanoseconds) and converted only
when rendered.

Numbers are written with the ASCII digits 0-9 only. Python's ``int()``, ``float()`` and
``str.isdigit()`` also read Arabic-Indic ``"٤"``, full-width (U+FF14 for 4) or superscript
digits; fio reads none of them, so they are refused with a message naming the character.
A number too large to mean anything (more than 30 digits before the point, or an infinite
float) raises :class:`OutOfRange`, so callers can say their own bound.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Sequence
from fractions import Fraction

# ASCII digits only: a pattern's \d would also match "٤" (U+0664). Every pattern is used with
# fullmatch on the stripped text, so no run of spaces makes a regex backtrack for long.
_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
_MAX_WHOLE_DIGITS = 30  # 10^30 bytes, seconds or IOPS mean nothing; bounds are far below
_MAX_DIGITS = 300  # with decimals; Python converts at most 4300 digits to an int at all


class OutOfRange(ValueError):
    """A well-formed number too large to mean anything: the caller names its bound."""


def non_ascii_digit(text: str) -> str | None:
    """The first character of ``text`` that Python reads as a number but fio does not
    (anything numeric but ASCII 0-9), described: ``"٤" (ARABIC-INDIC DIGIT FOUR)``."""
    for char in text:
        if char.isnumeric() and not "0" <= char <= "9":
            return f'"{char}" ({unicodedata.name(char, f"U+{ord(char):04X}")})'
    return None


def listed(items: Sequence[str], most: int | None = None) -> str:
    """``a``, ``a and b``, ``a, b and c``; past ``most`` items, ``a, b and N more``."""
    if most is not None and len(items) > most:
        return f"{', '.join(items[:most])} and {len(items) - most} more"
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def shown(value: object, limit: int = 40) -> str:
    """``value`` for a message, as Python writes it (text quoted), cut short when long: a
    hostile value can be huge."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[: limit - 8]!r}... ({len(value)} characters)"
    try:
        text = repr(value)
    except ValueError:  # an int of more digits than Python writes
        return "a number of thousands of digits"
    return text if len(text) <= limit else f"{text[: limit - 8]}... ({len(text)} characters)"


def quoted(value: str) -> str:
    """Text for a message as JSON writes it, cut short when long, its control characters
    escaped: ``"4 k"``, ``"rrrrrr..." (5000 characters)``."""
    if len(value) <= 40:
        return printable(json.dumps(value, ensure_ascii=False))
    cut = printable(json.dumps(value[:32], ensure_ascii=False))
    return f'{cut[:-1]}..." ({len(value)} characters)'


def printable(text: str) -> str:
    """``text`` with what does not print written as ``\\uXXXX``."""
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


def _ascii_digits(text: str, examples: str) -> None:
    bad = non_ascii_digit(text)
    if bad is not None:
        raise ValueError(
            f"{shown(text)}: {bad} is not an ASCII digit; write numbers with 0-9, e.g. {examples}"
        )


def _decimal(number: str, text: str) -> Fraction:
    """``number`` (matched by _NUMBER) exactly; OutOfRange when absurdly large."""
    whole = number.partition(".")[0].lstrip("0")
    if len(whole) > _MAX_WHOLE_DIGITS:
        raise OutOfRange(f"{shown(text)} is too large ({len(whole)} digits)")
    if len(number) > _MAX_DIGITS:
        raise ValueError(f"{shown(text)} has too many digits ({len(number)})")
    return Fraction(number)


_SIZE_RE = re.compile(_NUMBER + r"\s*([a-zA-Z]*)")
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tib": 1 << 40,
    "p": 1 << 50,
    "pb": 1 << 50,
    "pib": 1 << 50,
}

_DURATION_UNITS = {
    "us": 1e-6,
    "usec": 1e-6,
    "ms": 1e-3,
    "msec": 1e-3,
    "": 1.0,
    "s": 1.0,
    "sec": 1.0,
    "m": 60.0,
    "min": 60.0,
    "h": 3600.0,
    "d": 86400.0,
}


def parse_size(value: str | int) -> int:
    """Parse ``4k``, ``1M``, ``16MiB``, ``1.5G`` or a plain byte count into bytes.

    Raises ValueError with a message that says what is accepted; OutOfRange (a ValueError)
    for a number of more than 30 digits. An int is returned as it is: callers bound it.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a size such as 4k, 1M or 4096, not {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size cannot be negative")
        return value
    _ascii_digits(value, "4k, 1M or 4096")
    m = _SIZE_RE.fullmatch(value.strip())
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise ValueError(
            f"{shown(value)} is not a size; use bytes or a unit: 512, 4k, 1M, 16MiB, 4G"
        )
    result = _decimal(m.group(1), value) * _SIZE_UNITS[m.group(2).lower()]
    if result.denominator != 1:
        raise ValueError(f"{shown(value)} is not a whole number of bytes")
    return int(result)


_RATE_RE = re.compile(_NUMBER + r"\s*([kKmMgGtT]?)(i?)([bB])/s")
_RATE_PREFIX = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}


def parse_rate(value: str) -> float:
    """``200MB/s`` -> 2e8, ``125MiB/s`` -> 131072000.0 (bytes a second).

    Raises ValueError saying what is accepted; ``Mb/s`` (bits) is refused, not guessed.
    """
    _ascii_digits(value, "200MB/s or 125MiB/s")
    m = _RATE_RE.fullmatch(value.strip())
    if not m:
        raise ValueError(f"{shown(value)} is not a rate such as 200MB/s, 125MiB/s or 1.5GB/s")
    number = float(_decimal(m.group(1), value))
    if m.group(4) == "b":
        in_bytes = f"{number / 8:g}{m.group(2)}{m.group(3)}B/s"
        raise ValueError(
            f"{value!r} is in bits a second (b); give bytes a second (B): it is {in_bytes}"
        )
    base = 1024.0 if m.group(3) else 1000.0
    return number * base ** _RATE_PREFIX[m.group(2).lower()]


def rate_is_decimal(value: str) -> bool | None:
    """True for a rate in decimal units (``150MB/s``, ``75 kB/s``), False for binary
    (``200MiB/s``), None for text that is not a rate. ``B/s`` alone counts as decimal."""
    m = _RATE_RE.fullmatch(value.strip())
    return None if m is None else m.group(3) == ""


_COUNT_RE = re.compile(_NUMBER + r"\s*([kKmM]?)")
_COUNT_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6}
_LATENCY_RE = re.compile(_NUMBER + r"\s*(ns|us|µs|ms|s)")
_LATENCY_NS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}


def parse_count(value: str) -> float:
    """``6000``, ``6k``, ``1.2M`` -> a count (k = 10^3, M = 10^6, as IOPS are quoted).

    Raises ValueError saying what is accepted.
    """
    _ascii_digits(value, "5000, 5k or 1.2M")
    m = _COUNT_RE.fullmatch(value.strip())
    if not m:
        raise ValueError(f"{shown(value)} is not a count such as 5000, 5k or 1.2M")
    return float(_decimal(m.group(1), value)) * _COUNT_PREFIX[m.group(2).lower()]


def parse_latency_ns(value: str) -> float:
    """``500us``, ``5ms``, ``1s`` -> nanoseconds; the unit is required (a latency is never
    a bare number). Raises ValueError saying what is accepted."""
    _ascii_digits(value, "500us, 5ms or 1s")
    m = _LATENCY_RE.fullmatch(value.strip())
    if not m:
        raise ValueError(
            f"{shown(value)} is not a duration with its unit, such as 500us, 5ms or 1s"
        )
    return float(_decimal(m.group(1), value)) * _LATENCY_NS[m.group(2)]


_DURATION_RE = re.compile(_NUMBER + r"\s*([a-zA-Z]*)")
_HUGE = 10**_MAX_WHOLE_DIGITS


def parse_duration(value: str | int | float) -> float:
    """Parse ``30``, ``30s``, ``2m``, ``500ms``, ``1h`` into seconds (float).

    Raises ValueError saying what is accepted; OutOfRange (a ValueError) for an infinite
    float or a number of more than 30 digits, so the result is always finite.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a duration such as 30s or 2m, not {value!r}")
    if isinstance(value, int | float):
        if (isinstance(value, float) and math.isnan(value)) or value < 0:
            raise ValueError(f"a duration must be a finite number >= 0, not {value}")
        if value > _HUGE:  # an int is compared exactly: float() of a huge one would overflow
            raise OutOfRange("the duration is too large to mean anything")
        return float(value)
    _ascii_digits(value, "30, 30s, 500ms or 2m")
    m = _DURATION_RE.fullmatch(value.strip())
    if not m or m.group(2).lower() not in _DURATION_UNITS:
        raise ValueError(
            f"{shown(value)} is not a duration; use seconds or a unit: 30, 30s, 500ms, 2m, 1h"
        )
    return float(_decimal(m.group(1), value)) * _DURATION_UNITS[m.group(2).lower()]


def fio_duration(seconds: float) -> str:
    """A duration as fio reads it: whole seconds when exact, else milliseconds."""
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    # Never round a positive duration down to 0: fio reads runtime=0 as "no limit".
    return f"{max(round(seconds * 1000), 1)}ms"


# -- formatting ------------------------------------------------------------------------------
#
# One rule for every figure a user reads (docs/report.md, "Numbers and units"): three
# significant digits, trailing zeros kept so that a column's figures carry the same precision
# (``5.00k``, ``93.9k``, ``140k``; ``7.20 µs``, ``7.45 µs``), the prefix chosen after rounding
# (999,960 IOPS is ``1.00M``, not ``1000k``). Counts (IOPS) take k, M, G (powers of 1000, as
# IOPS are quoted); sizes and rates take KiB, MiB, GiB (powers of 1024, as fio prints them),
# and a size that is a whole number of its unit is written whole (``4 KiB``, ``64 MiB``);
# latencies take ns, µs, ms, s. Decimal rates (``150 MB/s``) are written only beside a binary
# one, where a provider's promise is quoted in its own units. None (and NaN) is ``-``.

SIGNIFICANT = 3
_IEC = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
_SI_RATE = ["B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s"]
_COUNT_PREFIXES = ["", "k", "M", "G", "T"]
_TIME = ["ns", "µs", "ms", "s"]


def significant(value: float, digits: int = SIGNIFICANT) -> str:
    """``value`` rounded to ``digits`` significant digits, trailing zeros kept, never in
    exponent form: 93.94 -> ``93.9``, 5 -> ``5.00``, 0.012345 -> ``0.0123``, 99.96 -> ``100``;
    a whole part longer than ``digits`` is rounded, not cut: 12345 -> ``12300``; 0 -> ``0``.
    Below 0.001, where zeros would hide the digits, in exponent form: ``1.00e-09``."""
    if value == 0:
        return "0"
    if value < 0:
        return "-" + significant(-value, digits)
    if value < 1e-3:
        return f"{value:.{digits - 1}e}"
    exponent = math.floor(math.log10(value))
    rounded = round(value, digits - 1 - exponent)
    if rounded >= 10 ** (exponent + 1):  # 99.96 rounds to 100: one digit fewer after the point
        exponent += 1
        rounded = round(value, digits - 1 - exponent)
    return f"{rounded:.{max(digits - 1 - exponent, 0)}f}"


def _scaled(value: float, base: float, units: list[str]) -> tuple[str, str]:
    """(number, unit): ``value`` in the largest of ``units`` (each ``base`` times the last)
    in which it is at least 1, rounded first, so that 999.96k is ``1.00`` M, not ``1000`` k.
    (With base 1024, 1000 to 1023 stay in the smaller unit: ``1020 KiB``, as fio writes.)"""
    magnitude = abs(value)
    for i, unit in enumerate(units):
        scaled = magnitude / base**i
        last = i == len(units) - 1
        if last or (scaled < base and float(significant(scaled)) < base):
            text = significant(scaled)
            return ("-" if value < 0 else "") + text, unit
    raise AssertionError("unreachable")


def _missing(value: float | None) -> bool:
    """None, NaN or infinite: no figure to show."""
    return value is None or not math.isfinite(value)


def rounded_down(value: float, base: float) -> float:
    """The largest figure of three significant digits, in the unit :func:`_scaled` picks with
    ``base`` (1000 for counts, 1024 for rates), that is not above ``value``: a threshold that
    is exactly what its text shows. 4500 -> 4500; 0.9 x 150 MB/s = 128.75 MiB/s -> 128 MiB/s."""
    if not math.isfinite(value) or value <= 0:
        return value
    i = 0
    while value / base ** (i + 1) >= 1:
        i += 1
    scaled = value / base**i
    step = 10.0 ** (math.floor(math.log10(scaled)) - (SIGNIFICANT - 1))
    # A hair over the floor: 180.0 computed as 179.99999999999997 is still 180.
    return math.floor(scaled / step * (1 + 1e-12)) * step * base**i


def format_count(n: float | None) -> str:
    """A count such as IOPS, three significant digits with k, M, G (powers of 1000):
    ``0``, ``0.500``, ``42.0``, ``999``, ``1.00k``, ``93.9k``, ``140k``, ``1.20M``; None ->
    ``-``."""
    if _missing(n):
        return "-"
    assert n is not None
    number, prefix = _scaled(float(n), 1000.0, _COUNT_PREFIXES)
    return number + prefix


def format_iops(iops: float | None) -> str:
    """IOPS as every table and message shows them: :func:`format_count`."""
    return format_count(iops)


def format_bytes(n: float | None) -> str:
    """``1536`` -> ``1.50 KiB``; a whole number of its unit is written whole: ``16 MiB``,
    ``4 KiB``, ``512 B``; None -> ``-``."""
    if _missing(n):
        return "-"
    assert n is not None
    value = float(n)
    for i, unit in enumerate(_IEC):
        whole = value / 1024**i
        if whole == int(whole) and (abs(whole) < 1024 or unit == _IEC[-1]):
            return f"{int(whole)} {unit}"
    if abs(value) < 1024:  # a fraction of a byte: an average
        return f"{significant(value)} B"
    number, unit = _scaled(value, 1024.0, _IEC)
    return f"{number} {unit}"


def format_size_short(n: int) -> str:
    """A block size the way fio users write it: 4096 -> ``4k``, 1048576 -> ``1M``."""
    for unit, factor in (
        ("P", 1 << 50),
        ("T", 1 << 40),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("k", 1 << 10),
    ):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{unit}"
    return str(n)


def size_to_type(n: float) -> str:
    """The size to type for at least ``n`` bytes, as iobench and fio read it: rounded up
    to a whole number of the largest unit (T, G, M, k) that adds under 10 % to it, e.g.
    25.6 GiB -> ``26G``, 1.2 TiB -> ``1229G``, 8 GiB -> ``8G``."""
    need = max(1, math.ceil(n))
    for unit, factor in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("k", 1 << 10)):
        count = -(-need // factor)
        if count * factor <= need * 1.1:
            return f"{count}{unit}"
    return str(need)


def format_rate(bytes_per_s: float | None) -> str:
    """Bandwidth in binary units a second, as fio prints it: ``202 MiB/s``, ``4.79 GiB/s``,
    ``28.0 KiB/s``; None -> ``-``."""
    if _missing(bytes_per_s):
        return "-"
    assert bytes_per_s is not None
    number, unit = _scaled(float(bytes_per_s), 1024.0, _IEC)
    return f"{number} {unit}/s"


def format_rate_decimal(bytes_per_s: float | None) -> str:
    """Bandwidth in decimal units a second, as fio prints it in brackets: ``150 MB/s``,
    ``75.0 MB/s``, ``4.80 GB/s``. Only ever shown beside :func:`format_rate`."""
    if _missing(bytes_per_s):
        return "-"
    assert bytes_per_s is not None
    number, unit = _scaled(float(bytes_per_s), 1000.0, _SI_RATE)
    return f"{number} {unit}"


def format_ns(ns: float | None) -> str:
    """A latency: ``850 ns``, ``12.3 µs``, ``7.20 µs``, ``4.56 ms``, ``1.20 s``; beyond
    1,000 s still in seconds (``3600 s``); None -> ``-``."""
    if _missing(ns):
        return "-"
    assert ns is not None
    number, unit = _scaled(float(ns), 1000.0, _TIME)
    return f"{number} {unit}"


def plain_figure(text: str) -> str:
    """A formatted figure without its trailing zeros, for axis ticks, which are round by
    construction: ``2.00 ms`` -> ``2 ms``, ``1.50k`` -> ``1.5k``, ``10.0k`` -> ``10k``."""
    m = re.fullmatch(r"(-?[0-9]+\.[0-9]+)(.*)", text, re.DOTALL)
    if m is None:
        return text
    return m.group(1).rstrip("0").rstrip(".") + m.group(2)


def format_duration(seconds: float) -> str:
    """``75`` -> ``1m15s``; ``1.5`` -> ``1.5s``."""
    if seconds < 60:
        return f"{seconds:g}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s" if secs else f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
