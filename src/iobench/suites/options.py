"""What a suite file may say: iobench's workload fields, typed, and fio's options.

Every iobench key has a typed parser; the fio options iobench bounds (sizes, rates,
distributions ...) have theirs; any other fio option is passed as written once the loader
has found it in fio's own option table and outside every hazard class (suites/hazards.py;
docs/suites.md lists them).
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable, Mapping
from typing import TypeGuard

from iobench.cpus import format_cpu_list, online_cpus, parse_cpu_list, parse_cpumask
from iobench.model import RW_MODES
from iobench.suites.hazards import engine_hazard
from iobench.units import (
    OutOfRange,
    format_size_short,
    non_ascii_digit,
    parse_duration,
    parse_size,
    printable,
    quoted,
)

DOCS = "docs/suites.md"

# Used when neither the workload nor [defaults] gives a value.
BUILTIN_DEFAULTS: Mapping[str, object] = {
    "runtime": 60.0,
    "ramp": 0.0,
    "size": 1 << 30,
    "ioengine": "libaio",
    "direct": True,
    "time_based": True,
}

IOENGINES = ("libaio", "io_uring", "psync", "pvsync", "pvsync2", "sync", "posixaio", "mmap")
MIXED_MODES = frozenset({"rw", "readwrite", "randrw"})
REQUIRED = ("rw", "bs", "iodepth", "numjobs")
MAX_IODEPTH = 4096
MAX_NUMJOBS = 256
MAX_BS = 1 << 30
# Upper bounds no real user reaches but that stop a hostile suite file from asking fio for
# the absurd (docs/suites.md says why each is where it is). apply_overrides uses them too.
WEEK_S = 7 * 86400
MAX_RUNTIME_S = WEEK_S
MAX_RAMP_S = WEEK_S
MAX_SIZE = 1 << 50  # 1P
MAX_THINKTIME_S = 3600  # fio keeps thinktime in an unsigned 32-bit count of microseconds
MAX_RATE = 1 << 40  # 1T a second
MAX_BUFFER_BYTES = 16 << 30  # bs x iodepth x numjobs: the I/O buffers fio allocates
MAX_STRING = 4096  # characters in any string value

WHY_RUNTIME = "a week; no measurement needs longer"
WHY_RAMP = "a week; no warm-up needs longer"
WHY_SIZE = "larger than any single device"

# A name as fio allows a section's (``[job-/dev/nvme8n1]``, ``[rand_16k_read_100%-io]``)
# that a job file can carry as ``name=`` (fio cuts a value at ';' and '#', expands '$'
# and reads '\\' as an escape) and a line holds: stored and shown as written, escaped where
# shown (iobench.report.literal).
_NAME_CHAR = r"[^\x00-\x20\x7f;#$\\\[\]]"
NAME_RE = re.compile(rf"{_NAME_CHAR}(?:[^\x00-\x1f\x7f;#$\\\[\]]{{0,126}}{_NAME_CHAR})?")
NAME_RULE = (
    "1-128 characters without a blank at either end, none of ; # $ \\ [ ] and no control "
    "or invisible character"
)


def valid_name(name: object) -> TypeGuard[str]:
    """Whether ``name`` is a workload's or suite's name (NAME_RULE)."""
    return isinstance(name, str) and bool(NAME_RE.fullmatch(name)) and name.isprintable()


class InvalidValue(Exception):
    """A value is wrong. The message is complete, e.g. 'iodepth must be ..., not "x"'."""


class _Written:
    """A value a fio job file wrote in fio's units, converted to the typed keys' (runtime
    ``10081m`` -> 604860.0 seconds, size ``2P`` -> bytes), still carrying the text the file
    wrote: a message shows that text, not the conversion (:func:`show_value`)."""

    written: str


class _WrittenInt(int, _Written):
    pass


class _WrittenFloat(float, _Written):
    pass


class _WrittenStr(str, _Written):
    __slots__ = ()


def as_written(value: int | float | str, text: str) -> object:
    """``value`` (converted from ``text``, as a job file wrote it) marked with its text."""
    kind: type[_WrittenInt | _WrittenFloat | _WrittenStr]
    if isinstance(value, bool):
        return value
    kind = _WrittenInt if isinstance(value, int) else _WrittenFloat
    kind = _WrittenStr if isinstance(value, str) else kind
    marked = kind(value)
    marked.written = text
    return marked


def unwritten(value: object) -> object:
    """A parsed value without the mark of :func:`as_written` (a plain int, float, str)."""
    if isinstance(value, _WrittenInt):
        return int(value)
    if isinstance(value, _WrittenFloat):
        return float(value)
    if isinstance(value, _WrittenStr):
        return str(value)
    return value


def show_value(value: object) -> str:
    """A value the way it looks in TOML, cut short when long (a hostile file's value can be
    a string of megabytes or an integer of thousands of digits); a job file's converted
    value as the file wrote it."""
    if isinstance(value, _Written):
        return show_value(value.written)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quoted(value)
    if isinstance(value, int):
        try:
            digits = str(value)
        except ValueError:  # more digits than Python converts (a hex or binary literal)
            return f"a number of about {int(value.bit_length() * math.log10(2))} digits"
        count = len(digits.lstrip("-"))
        return digits if len(digits) <= 40 else f"{digits[:24]}... ({count} digits)"
    if isinstance(value, datetime.datetime):
        return f"the date and time {value.isoformat()}"
    if isinstance(value, datetime.date):
        return f"the date {value.isoformat()}"
    if isinstance(value, datetime.time):
        return f"the time {value.isoformat()}"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return str(value)


def show_key(key: str) -> str:
    """A key for a message: cut short and with control characters escaped (a quoted TOML
    key can hold anything, including a terminal's escape sequences)."""
    cut = key if len(key) <= 64 else f"{key[:48]}... ({len(key)} characters)"
    return printable(cut)


def _refused(accepted: str, value: object) -> InvalidValue:
    """``{accepted}, not {value}``; naming the character when a digit is not ASCII 0-9
    (Python's int() and float() read "٤" or a full-width 4 (U+FF14) as digits, fio does not)."""
    bad = non_ascii_digit(value) if isinstance(value, str) else None
    if bad is not None:
        return InvalidValue(
            f"{accepted}, written with the ASCII digits 0-9; {bad} in {show_value(value)} "
            "is not one"
        )
    return InvalidValue(f"{accepted}, not {show_value(value)}")


def say_seconds(seconds: float) -> str:
    """A bound as a duration iobench reads: 604800 -> ``7d``, 3600 -> ``1h``."""
    if not math.isfinite(seconds):
        return f"{seconds:g}"
    for unit, length in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= length and seconds % length == 0:
            return f"{int(seconds // length)}{unit}"
    return f"{seconds:g}s"


# --- value parsers: (key, value) -> typed value, or raise InvalidValue ---------------------------

Parser = Callable[[str, object], object]


def _whole(lo: int, hi: int, why: str = "") -> Parser:
    def parse(key: str, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            reason = f" ({why})" if why else ""
            raise InvalidValue(
                f"{key} must be a whole number from {lo} to {hi}{reason}, not {show_value(value)}"
            )
        return value

    return parse


def _bool(key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidValue(f"{key} must be true or false, not {show_value(value)}")
    return value


def _size_value(key: str, value: object, lo: int, hi: int, why: str = "") -> int:
    accepted = f"{key} must be a size such as 4k, 1M, 20G or a number of bytes"
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InvalidValue(f"{accepted}, not {show_value(value)}")
    try:
        size = parse_size(value)
    except OutOfRange:
        size = hi + 1
    except ValueError:
        raise _refused(accepted, value) from None
    if size < lo:
        least = f"{lo} byte" if lo == 1 else f"{lo} bytes"
        raise InvalidValue(f"{key} must be at least {least}, not {show_value(value)}")
    if size > hi:
        reason = f" ({why})" if why else ""
        raise InvalidValue(
            f"{key} must be at most {format_size_short(hi)}{reason}, not {show_value(value)}"
        )
    return size


def _size(lo: int, hi: int, why: str = "") -> Parser:
    def parse(key: str, value: object) -> int:
        return _size_value(key, value, lo, hi, why)

    return parse


class PerDirection(str):
    """``bs = "4k,64k"``: one block size a direction (read, write[, trim]), in bytes
    (``4096,65536``), as fio reads it."""

    __slots__ = ()

    @property
    def first(self) -> int:
        return int(self.split(",")[0])


def _block_size(key: str, value: object) -> int | PerDirection:
    """``bs``: one size, or one a direction (read, write[, trim]) as fio's ``4k,64k``."""
    if isinstance(value, str) and "," in value:
        parts = value.split(",")
        if 2 <= len(parts) <= 3:
            return PerDirection(",".join(str(_size_value(key, p, 1, MAX_BS)) for p in parts))
        raise InvalidValue(
            f"{key} per direction is READ,WRITE or READ,WRITE,TRIM, not {show_value(value)}"
        )
    return _size_value(key, value, 1, MAX_BS)


class SizeShare(float):
    """``size = "50%"``: the share of the file or device a workload covers (fio's size=N%)."""


_SHARE_RE = re.compile(r"([0-9]{1,3}(?:\.[0-9]{1,6})?)%")


def _area(key: str, value: object) -> int | SizeShare:
    """``size``: bytes, or a share of the file or device as fio's ``N%`` (more than 0, at
    most 100)."""
    if isinstance(value, str) and value.endswith("%"):
        m = _SHARE_RE.fullmatch(value.strip())
        share = float(m.group(1)) if m else -1.0
        if not 0 < share <= 100:
            raise InvalidValue(
                f"{key} as a share of the file or device must be more than 0% and at most "
                f"100%, not {show_value(value)}"
            )
        return SizeShare(share / 100)
    return _size_value(key, value, 1, MAX_SIZE, WHY_SIZE)


def _duration_value(key: str, value: object, *, positive: bool, hi: float, why: str = "") -> float:
    accepted = f"{key} must be a duration such as 30s, 2m or a number of seconds"
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InvalidValue(f"{accepted}, not {show_value(value)}")
    try:
        seconds = parse_duration(value)
    except OutOfRange:
        seconds = math.inf
    except ValueError:
        raise _refused(accepted, value) from None
    if positive and seconds <= 0:
        raise InvalidValue(f"{key} must be longer than 0 seconds, not {show_value(value)}")
    if seconds > hi:
        reason = f" ({why})" if why else ""
        raise InvalidValue(
            f"{key} must be at most {say_seconds(hi)}{reason}, not {show_value(value)}"
        )
    return seconds


def _duration(*, positive: bool, hi: float, why: str) -> Parser:
    def parse(key: str, value: object) -> float:
        return _duration_value(key, value, positive=positive, hi=hi, why=why)

    return parse


def _rw(key: str, value: object) -> str:
    """A mode, with fio's modifier (``read:-8k``: seek back 8k after each IO; ``randread:8``:
    8 IOs at each offset) kept as written."""
    if isinstance(value, str) and ":" in value:
        mode, _, modifier = value.partition(":")
        if mode in RW_MODES and re.fullmatch(r"-?[0-9]{1,12}[kKmMgG]?[iI]?[bB]?", modifier):
            return value
    if not isinstance(value, str) or value not in RW_MODES:
        modes = ", ".join(sorted(RW_MODES))
        raise InvalidValue(f"{key} must be one of {modes}; not {show_value(value)}")
    return value


_ENGINE_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _ioengine(key: str, value: object) -> str:
    """An engine name; one in a hazard class (suites.hazards) is refused here, one this fio
    does not have where the suite is built (it knows the engines)."""
    if isinstance(value, str):
        hazard = engine_hazard(value, None)
        if hazard is not None:
            raise InvalidValue(hazard.say(f"{key}={show_value(value)}"))
        if _ENGINE_RE.fullmatch(value):
            return value
    raise InvalidValue(
        f"{key} must be the name of an fio engine such as {', '.join(IOENGINES)}; not "
        f"{show_value(value)}"
    )


# --- fio options iobench bounds: (key, value) -> the value string fio reads ----------------


def _fio_int(lo: int, hi: int, why: str = "") -> Parser:
    whole = _whole(lo, hi, why)

    def parse(key: str, value: object) -> str:
        return str(whole(key, value))

    return parse


def _fio_bool(key: str, value: object) -> str:
    return "1" if _bool(key, value) else "0"


def _fio_size(lo: int, hi: int) -> Parser:
    def parse(key: str, value: object) -> str:
        return str(_size_value(key, value, lo, hi))

    return parse


_SYNC_VALUES = {"none": "none", "0": "none", "sync": "sync", "1": "sync", "dsync": "dsync"}


def _fio_sync(key: str, value: object) -> str:
    # fio 3.33 HOWTO: sync=str takes none (=0), sync (=1, O_SYNC) or dsync (O_DSYNC).
    if isinstance(value, bool):
        return "sync" if value else "none"
    if isinstance(value, str) and value in _SYNC_VALUES:
        return _SYNC_VALUES[value]
    raise InvalidValue(
        f'{key} must be true, false, "none", "sync" (O_SYNC) or "dsync" (O_DSYNC), '
        f"not {show_value(value)}"
    )


# Passed to fio as written, so only ASCII digits (never \d, which matches "٤"), and few of
# them: fio reads these into doubles and 32-bit percentages.
_FLOAT = r"[0-9]{1,9}(?:\.[0-9]{1,9})?"
_PCT = r"[0-9]{1,3}"
_ZONE_SIZE = r"[0-9]{1,16}[kKmMgGtTpP]?"
# zoned: PCT/PCT zones (the last one's size may be left out: the rest), one list per
# direction separated by commas, as fio 3.33 reads them.
_ZONES = rf"{_PCT}/(?:{_PCT})?(?::{_PCT}/(?:{_PCT})?){{0,255}}"
_DISTRIBUTION_RE = re.compile(  # always used with fullmatch: no trailing newline can pass
    rf"random|(?:zipf|pareto|normal):{_FLOAT}(?::{_FLOAT})?"
    rf"|zoned:{_ZONES}(?:,{_ZONES}){{0,2}}|zoned_abs(?::{_PCT}/{_ZONE_SIZE}){{1,256}}"
)


def _fio_distribution(key: str, value: object) -> str:
    if not isinstance(value, str) or not _DISTRIBUTION_RE.fullmatch(value):
        raise _refused(
            f"{key} must be random, zipf:THETA, pareto:POWER, normal:DEV (each with an "
            "optional :CENTER), zoned:PCT/PCT:... or zoned_abs:PCT/SIZE:..., e.g. zipf:1.2",
            value,
        )
    if not value.startswith("zoned_abs:"):
        return value
    # Each zone's size in bytes, as fio is to read it whatever its kb_base (a job file's
    # come converted with the file's kb_base, each zone where the file wrote it).
    written = value.written if isinstance(value, _Written) else value
    zones = []
    for zone, zone_written in zip(value.split(":")[1:], written.split(":")[1:], strict=True):
        pct, _, size_text = zone.partition("/")
        size = parse_size(size_text)
        if size > MAX_SIZE:
            raise InvalidValue(
                f"{key}: a zone of {zone_written.partition('/')[2]} is larger than "
                f"{format_size_short(MAX_SIZE)} ({WHY_SIZE}), in {show_value(value)}"
            )
        zones.append(f"{pct}/{size}")
    return ":".join(["zoned_abs", *zones])


def zoned_abs_bytes(normalised: str) -> int | None:
    """The bytes a ``zoned_abs`` random_distribution's zones cover, as
    :func:`_fio_distribution` returns it (zone sizes in bytes); None for another one."""
    if not normalised.startswith("zoned_abs:"):
        return None
    return sum(int(zone.partition("/")[2]) for zone in normalised.split(":")[1:])


def _fio_bssplit(key: str, value: object) -> str:
    """``4k/10:64k/50:32k/40``, optionally one such list per direction (read,write,trim)."""
    example = "e.g. 4k/10:64k/50:32k/40 or 4k/50:1k/:32k/"
    if not isinstance(value, str) or not value or non_ascii_digit(value):
        raise _refused(f"{key} must be a string of SIZE/PERCENT pairs, {example}", value)
    directions = value.split(",")
    if len(directions) > 3:
        raise InvalidValue(
            f"{key} takes at most three lists (read,write,trim), not {show_value(value)}"
        )
    # A job file's sizes come converted to bytes, each entry where the file wrote it.
    written = value.written.split(",") if isinstance(value, _Written) else directions
    out = []
    for direction, direction_written in zip(directions, written, strict=True):
        entries = direction.split(":")
        if len(entries) > 64:
            raise InvalidValue(f"{key} takes at most 64 block sizes per direction")
        total = 0
        parts = []
        for entry, entry_written in zip(entries, direction_written.split(":"), strict=True):
            size_text, slash, pct_text = entry.partition("/")
            try:
                size = parse_size(size_text)
            except OutOfRange:
                size = MAX_BS + 1
            except ValueError:
                size = 0
            if size <= 0 or (pct_text and not re.fullmatch(r"[0-9]{1,3}", pct_text)):
                raise InvalidValue(
                    f"{key} must be SIZE/PERCENT pairs joined by ':', {example}; "
                    f"{show_value(entry_written)} in {show_value(value)} is not one"
                )
            if size > MAX_BS:
                raise InvalidValue(
                    f"{key} block sizes must be at most {format_size_short(MAX_BS)}, like bs; "
                    f"{show_value(entry_written)} in {show_value(value)} is larger"
                )
            total += int(pct_text or 0)
            parts.append(f"{size}{slash}{pct_text}")
        if total > 100:
            raise InvalidValue(
                f"{key} percentages add up to {total}, more than 100: {show_value(value)}"
            )
        out.append(":".join(parts))
    return ",".join(out)


def bssplit_largest(normalised: str) -> int:
    """The largest block size in a bssplit value as :func:`_fio_bssplit` returns it."""
    entries = normalised.replace(",", ":").split(":")
    return max(int(entry.partition("/")[0]) for entry in entries)


def _per_direction(parse: Parser) -> Parser:
    """``parse`` for one value, or one a direction as fio's ``read,write[,trim]`` (an empty
    one or 0: no cap in that direction)."""

    def per_direction(key: str, value: object) -> str:
        if not (isinstance(value, str) and "," in value):
            return str(parse(key, value))
        parts = value.split(",")
        if not 2 <= len(parts) <= 3:
            raise InvalidValue(
                f"{key} per direction is READ,WRITE or READ,WRITE,TRIM, not {show_value(value)}"
            )
        try:
            return ",".join(
                "" if p.strip() in ("", "0") else str(parse(key, int(p) if p.isdigit() else p))
                for p in parts
            )
        except InvalidValue as e:
            raise InvalidValue(f"{e} (one direction of {show_value(value)})") from None

    return per_direction


def _fio_rate(key: str, value: object) -> str:
    accepted = f"{key} must be bytes per second such as 50M, 500k/s or a number of bytes"
    rate = 0
    if isinstance(value, str):
        try:
            rate = parse_size(value.removesuffix("/s"))
        except OutOfRange:
            rate = MAX_RATE + 1
        except ValueError:
            rate = 0
    elif isinstance(value, int) and not isinstance(value, bool):
        rate = value
    if rate <= 0:
        raise _refused(accepted, value)
    if rate > MAX_RATE:
        raise InvalidValue(
            f"{key} must be at most {format_size_short(MAX_RATE)}/s (faster than any storage; "
            f"a higher cap is no cap), not {show_value(value)}"
        )
    return str(rate)


_UNIT_RE = re.compile(r"[a-zA-Z]\s*$")


def _fio_thinktime(key: str, value: object) -> str:
    # fio reads a bare thinktime number as microseconds, unlike every other duration, so a
    # unit is required and the value handed to fio always carries one.
    if not isinstance(value, str) or not _UNIT_RE.search(value):
        raise InvalidValue(
            f"{key} must be a duration with a unit such as 500us, 2ms or 1s (fio reads a bare "
            f"number as microseconds), not {show_value(value)}"
        )
    seconds = _duration_value(
        key,
        value,
        positive=False,
        hi=MAX_THINKTIME_S,
        why="fio counts it in microseconds in 32 bits, about 71 minutes",
    )
    return f"{round(seconds * 1e6)}us"


_MEM_TYPES = ("malloc", "shm", "shmhuge", "mmap", "mmapshared")


def _fio_mem(key: str, value: object) -> str:
    if isinstance(value, str) and ":" in value:
        raise InvalidValue(
            f"{key} with a path is refused: it maps a file of its own choosing, outside the target"
        )
    if not isinstance(value, str) or value not in _MEM_TYPES:
        raise InvalidValue(f"{key} must be one of {', '.join(_MEM_TYPES)}; not {show_value(value)}")
    return value


_CPU_LIST_CHARS = re.compile(r"[0-9,-]{1,4096}")


def _online_only(key: str, value: object, cpus: frozenset[int]) -> None:
    """Refuse CPUs that are not online here: fio would refuse one beyond the last CPU, and
    a job allowed only offline CPUs cannot run."""
    online = online_cpus()
    if online is None:
        return  # cannot be read: fio checks the CPUs when the job starts
    missing = cpus - online
    if missing:
        them = "CPU" if len(missing) == 1 else "CPUs"
        raise InvalidValue(
            f"{key} {show_value(value)} names {them} {format_cpu_list(missing)}, not online "
            f"on this host (online: {format_cpu_list(online)})"
        )


def _fio_cpus_allowed(key: str, value: object) -> str:
    # fio 3.33 HOWTO: cpus_allowed=0,5,8-15, CPUs counted from 0. It only places fio's own
    # jobs; the host is left as it was.
    accepted = f"{key} must be a list of CPUs such as 0-3,5 (fio's syntax)"
    if not isinstance(value, str) or not _CPU_LIST_CHARS.fullmatch(value):
        raise _refused(accepted, value)
    try:
        cpus = parse_cpu_list(value)
    except ValueError as e:
        raise InvalidValue(f"{accepted}; {show_value(value)}: {e}") from None
    _online_only(key, value, cpus)
    return format_cpu_list(cpus)


def _fio_cpumask(key: str, value: object) -> str:
    # fio 3.33: cpumask=int, a bit mask of the CPUs a job may run on (bit 0 is CPU 0).
    accepted = f"{key} must be a bit mask of CPUs such as 0x6 (CPUs 1 and 2) or 6"
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _refused(accepted, value)
    try:
        cpus = parse_cpumask(value)
    except ValueError as e:
        raise InvalidValue(f"{accepted}; {show_value(value)} is {e}") from None
    _online_only(key, value, cpus)
    return hex(sum(1 << cpu for cpu in cpus))


_GENERATORS = ("tausworthe", "lfsr", "tausworthe64")


def _fio_random_generator(key: str, value: object) -> str:
    # fio 3.33 HOWTO: random_generator=str, tausworthe (default), lfsr or tausworthe64.
    if value not in _GENERATORS:
        choices = ", ".join(_GENERATORS)
        raise InvalidValue(f"{key} must be one of {choices}, not {show_value(value)}")
    assert isinstance(value, str)
    return value


def _fio_cpus_allowed_policy(key: str, value: object) -> str:
    if value not in ("shared", "split"):
        raise InvalidValue(
            f'{key} must be "shared" (every job may use every allowed CPU) or "split" (each '
            f"job gets a CPU of its own), not {show_value(value)}"
        )
    assert isinstance(value, str)
    return value


# iobench's own workload fields (they become Workload attributes, not options).
CORE_KEYS: Mapping[str, Parser] = {
    "rw": _rw,
    "bs": _block_size,
    "iodepth": _whole(1, MAX_IODEPTH, "deeper queues only exhaust kernel and fio memory"),
    "numjobs": _whole(1, MAX_NUMJOBS, "each job is a process; more would exhaust the host"),
    "ioengine": _ioengine,
    "direct": _bool,
    "runtime": _duration(positive=True, hi=MAX_RUNTIME_S, why=WHY_RUNTIME),
    "ramp": _duration(positive=False, hi=MAX_RAMP_S, why=WHY_RAMP),
    "size": _area,
    "rwmixread": _whole(0, 100),
    "time_based": _bool,
}

# Safe fio options, stored in Workload.options as (name, value string).
OPTION_KEYS: Mapping[str, Parser] = {
    "fsync": _fio_int(0, 2**31 - 1),
    "fdatasync": _fio_int(0, 2**31 - 1),
    "end_fsync": _fio_bool,
    "fsync_on_close": _fio_bool,
    "sync": _fio_sync,
    "refill_buffers": _fio_bool,
    "zero_buffers": _fio_bool,
    "scramble_buffers": _fio_bool,
    "norandommap": _fio_bool,
    "randrepeat": _fio_bool,
    "invalidate": _fio_bool,
    "randseed": _fio_int(0, 2**64 - 1),
    "buffer_compress_percentage": _fio_int(0, 100),
    "buffer_compress_chunk": _fio_size(1, MAX_BS),
    "dedupe_percentage": _fio_int(0, 100),
    "blockalign": _fio_size(1, MAX_BS),
    "random_distribution": _fio_distribution,
    "percentage_random": _fio_int(0, 100),
    "bssplit": _fio_bssplit,
    "rate": _per_direction(_fio_rate),
    "rate_iops": _per_direction(_fio_int(0, 2**31 - 1)),  # 0: no cap (fio's default)
    "thinktime": _fio_thinktime,
    "iodepth_batch_submit": _fio_int(0, MAX_IODEPTH),
    "iodepth_batch_complete_min": _fio_int(0, MAX_IODEPTH),
    "mem": _fio_mem,
    "cpus_allowed": _fio_cpus_allowed,
    "cpus_allowed_policy": _fio_cpus_allowed_policy,
    "cpumask": _fio_cpumask,
    "thread": _fio_bool,
    "random_generator": _fio_random_generator,
}
# The options that place fio's jobs on CPUs (--pin-to-device sets the first two).
WORKLOAD_KEYS = ("name", *CORE_KEYS, *OPTION_KEYS)
TOP_KEYS = ("name", "description", "indicative", "expect", "defaults", "workload")

# --- refused fio options and why -----------------------------------------------------------

_WRITES = "it writes files at a path of its own choosing, outside the target you named"
_LOGS = "it configures fio's log files, which are written outside the target you named"
_TARGET = "it chooses its own target; iobench tests only the target named on its command line"
_DELETES = "it deletes files; iobench removes the test files it creates itself"
_OURS = "iobench sets this itself"

REFUSED: Mapping[str, str] = {
    "write_bw_log": _WRITES,
    "write_lat_log": _WRITES,
    "write_iops_log": _WRITES,
    "write_hist_log": _WRITES,
    "write_iolog": _WRITES,
    "filename": _TARGET,
    "directory": _TARGET,
    "opendir": _TARGET + " (it opens every file under a directory tree)",
    "filename_format": _TARGET,
    "unlink": _DELETES,
    "unlink_each_loop": _DELETES,
    "group_reporting": _OURS,
    "new_group": _OURS,
    "stonewall": _OURS,
    "wait_for_previous": _OURS,
    "wait_for": _OURS,
    "output": _OURS,
    "output-format": _OURS,
    "output_format": _OURS,
    "per_job_logs": _OURS,
    "clat_percentiles": _OURS,
    "lat_percentiles": _OURS,
    "slat_percentiles": _OURS,
    "percentile_list": _OURS,
    "unified_rw_reporting": _OURS + " (each direction, reported apart)",
}
# fio's other names for keys iobench spells differently.
ALIASES: Mapping[str, str] = {
    "ramp_time": "ramp",
    "timeout": "runtime",
    "blocksize": "bs",
    "readwrite": "rw",
    "rwmixwrite": "rwmixread (= 100 - rwmixwrite)",
    "iomem": "mem",
    "ba": "blockalign",
    "iodepth_batch": "iodepth_batch_submit",
    "iodepth_batch_complete": "iodepth_batch_complete_min",
    "buffered": "direct (= not buffered)",
}
_REFUSED_PREFIXES = (("log_", _LOGS),)
# Values of REFUSED options that change nothing (fio's defaults, or what iobench sets
# anyway): accepted, and left out of the workload.
# Options fio 3.33 still parses but ignores (options.c FIO_OPT_DEPRECATED; `fio --parse-only`
# says "Option verifysort is deprecated"); its help does not list them. Accepted, left out.
DEPRECATED = frozenset({"verifysort", "verifysort_nr"})

NO_OPS: Mapping[str, tuple[str, ...]] = {
    "unified_rw_reporting": ("0", "none"),
    "group_reporting": ("0",),
    "stonewall": ("0",),
    "new_group": ("0",),
    "unlink": ("0",),
    "unlink_each_loop": ("0",),
    "clat_percentiles": ("1",),
    "lat_percentiles": ("1",),
    "slat_percentiles": ("0",),
}


def fio_text(value: object) -> str | None:
    """A suite's value as fio reads it in a job file: text as it is, a number in digits, a
    boolean as 1 or 0; None for a job file's option written alone (``overwrite``)."""
    if value is True or value is False:
        return "1" if value else "0"
    if value is None:
        return None
    return str(value)


def refusal(key: str) -> str | None:
    """Why a TOML suite may not set fio option ``key``, which iobench sets itself (where fio
    does its I/O, its logs, the order of the jobs, what it reports), or None. The hazards,
    refused in every suite, are suites.hazards'."""
    if key in REFUSED:
        return REFUSED[key]
    for prefix, reason in _REFUSED_PREFIXES:
        if key.startswith(prefix):
            return reason
    if key.endswith("_log"):
        return _WRITES
    return None
