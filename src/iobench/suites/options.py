"""What a suite file may say: iobench's workload fields and an allow-list of fio options.

Every key has a typed parser; fio options that run commands, write or read files of their
own choosing, pick their own target, or switch latency measurement off are refused, each
with its reason (docs/suites.md lists them).
"""

from __future__ import annotations

import datetime
import json
import math
import re
from collections.abc import Callable, Mapping

from iobench.cpus import format_cpu_list, online_cpus, parse_cpu_list, parse_cpumask
from iobench.model import RW_MODES
from iobench.units import (
    OutOfRange,
    format_size_short,
    non_ascii_digit,
    parse_duration,
    parse_size,
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

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NAME_RULE = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"


class InvalidValue(Exception):
    """A value is wrong. The message is complete, e.g. 'iodepth must be ..., not "x"'."""


class _Written:
    """A value a fio job file wrote in fio's units, converted to the allow-list's (runtime
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
        if len(value) <= 40:
            return _printable(json.dumps(value, ensure_ascii=False))
        cut = _printable(json.dumps(value[:32], ensure_ascii=False))
        return f'{cut[:-1]}..." ({len(value)} characters)'
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
    return _printable(cut)


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


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
    if not isinstance(value, str) or value not in RW_MODES:
        modes = ", ".join(sorted(RW_MODES))
        raise InvalidValue(f"{key} must be one of {modes}; not {show_value(value)}")
    return value


_ENGINE_REFUSED = {
    "exec": "it runs an arbitrary program",
    "filedelete": "it deletes, truncates, creates or defragments files instead of measuring I/O",
    "ftruncate": "it deletes, truncates, creates or defragments files instead of measuring I/O",
    "filecreate": "it deletes, truncates, creates or defragments files instead of measuring I/O",
    "falloc": "it deletes, truncates, creates or defragments files instead of measuring I/O",
    "e4defrag": "it deletes, truncates, creates or defragments files instead of measuring I/O",
    "sg": "it bypasses the kernel's block layer (raw SCSI/NVMe passthrough or flash erase)",
    "io_uring_cmd": "it bypasses the kernel's block layer (raw SCSI/NVMe passthrough)",
    "mtd": "it bypasses the kernel's block layer (raw flash erase)",
    "dev-dax": "it writes persistent memory directly",
    "libpmem": "it writes persistent memory directly",
    "pmemblk": "it writes persistent memory directly",
}
_NETWORK_ENGINES = frozenset(
    {"net", "netsplice", "rdma", "rbd", "rados", "gfapi", "gfapi_async", "nbd", "http"}
    | {"libhdfs", "nfs", "libiscsi", "dfs", "xnvme", "libcufile", "ime_psync", "ime_psyncv"}
)


def _ioengine(key: str, value: object) -> str:
    if isinstance(value, str):
        if value in IOENGINES:
            return value
        if value.startswith("external") or "/" in value:
            raise InvalidValue(
                f"ioengine {show_value(value)} is refused: it loads native code from a file"
            )
        if value in _ENGINE_REFUSED:
            raise InvalidValue(f"ioengine {show_value(value)} is refused: {_ENGINE_REFUSED[value]}")
        if value in _NETWORK_ENGINES:
            raise InvalidValue(
                f"ioengine {show_value(value)} is refused: it connects to a network endpoint named "
                "in the job file; iobench reaches only the targets named on its command line"
            )
    raise InvalidValue(f"{key} must be one of {', '.join(IOENGINES)}; not {show_value(value)}")


# --- fio options from the allow-list: (key, value) -> the value string fio reads ----------------


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
_DISTRIBUTION_RE = re.compile(  # always used with fullmatch: no trailing newline can pass
    rf"random|(?:zipf|pareto|normal):{_FLOAT}(?::{_FLOAT})?"
    rf"|zoned(?::{_PCT}/{_PCT}){{1,256}}|zoned_abs(?::{_PCT}/{_ZONE_SIZE}){{1,256}}"
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
    "bs": _size(1, MAX_BS),
    "iodepth": _whole(1, MAX_IODEPTH, "deeper queues only exhaust kernel and fio memory"),
    "numjobs": _whole(1, MAX_NUMJOBS, "each job is a process; more would exhaust the host"),
    "ioengine": _ioengine,
    "direct": _bool,
    "runtime": _duration(positive=True, hi=MAX_RUNTIME_S, why=WHY_RUNTIME),
    "ramp": _duration(positive=False, hi=MAX_RAMP_S, why=WHY_RAMP),
    "size": _size(1, MAX_SIZE, WHY_SIZE),
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
    "rate": _fio_rate,
    "rate_iops": _fio_int(1, 2**31 - 1),
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
PLACEMENT_KEYS = ("cpus_allowed", "cpus_allowed_policy", "cpumask")

WORKLOAD_KEYS = ("name", *CORE_KEYS, *OPTION_KEYS)
TOP_KEYS = ("name", "description", "indicative", "expect", "defaults", "workload")

# --- refused fio options and why -----------------------------------------------------------

_RUNS = "it runs shell commands"
_WRITES = "it writes files at a path of its own choosing, outside the target you named"
_LOGS = "it configures fio's log files, which are written outside the target you named"
_READS = "it reads a file of its own choosing and replays the I/O recorded in it"
_TARGET = "it chooses its own target; iobench tests only the target named on its command line"
_DELETES = "it deletes files; iobench removes the test files it creates itself"
_HOST = "it changes the priority the host gives processes; iobench leaves the host alone"
_LATENCY = "latency must always be measured, and it switches measurement off or makes it coarse"
_OURS = "iobench sets this itself"

REFUSED: Mapping[str, str] = {
    "exec_prerun": _RUNS,
    "exec_postrun": _RUNS,
    "write_bw_log": _WRITES,
    "write_lat_log": _WRITES,
    "write_iops_log": _WRITES,
    "write_hist_log": _WRITES,
    "write_iolog": _WRITES,
    "read_iolog": _READS,
    "read_iolog_chunked": _READS,
    "replay_redirect": "it sends replayed I/O to a device of its own choosing",
    "filename": _TARGET,
    "directory": _TARGET,
    "opendir": _TARGET + " (it opens every file under a directory tree)",
    "filename_format": _TARGET,
    "unlink": _DELETES,
    "unlink_each_loop": _DELETES,
    "allow_mounted_write": "it switches off fio's guard against writing to a mounted device",
    "fill_device": "it writes until the device is full",
    "fill_fs": "it writes until the file system is full",
    "verify_state_save": "it saves verification state to a file of its own choosing",
    "verify_state_load": "it loads verification state from a file of its own choosing",
    "lockfile": "it serialises I/O through file locks, so the numbers would measure the locks",
    "prioclass": _HOST + " (a real-time I/O class can starve everything else)",
    "prio": _HOST,
    "nice": _HOST,
    "include": "it reads another job file that iobench cannot check",
    "description": "fio expands ${VAR} in it and copies it into its output, which can leak "
    "environment variables; the workload's name identifies it",
    "gtod_reduce": _LATENCY,
    "disable_lat": _LATENCY,
    "disable_clat": _LATENCY,
    "disable_slat": _LATENCY,
    "disable_bw_measurement": "bandwidth must always be measured",
    "disable_bw": "bandwidth must always be measured",
    "group_reporting": _OURS,
    "new_group": _OURS,
    "stonewall": _OURS,
    "wait_for_previous": _OURS,
    "wait_for": _OURS,
    "exitall": _OURS,
    "exitall_on_error": _OURS,
    "output": _OURS,
    "output-format": _OURS,
    "output_format": _OURS,
    "stats": _OURS,
    "per_job_logs": _OURS,
    "clat_percentiles": _OURS,
    "lat_percentiles": _OURS,
    "slat_percentiles": _OURS,
    "percentile_list": _OURS,
    "kb_base": _OURS,
    "unit_base": _OURS,
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
_REFUSED_PREFIXES = (
    ("exec_", _RUNS),
    ("trigger", _RUNS),
    ("cgroup", "it creates and configures control groups on the host"),
    ("log_", _LOGS),
    ("replay_", _READS),
)


def refusal(key: str) -> str | None:
    """Why a fio option is refused in a suite file, or None if it is not refused."""
    if key in REFUSED:
        return REFUSED[key]
    for prefix, reason in _REFUSED_PREFIXES:
        if key.startswith(prefix):
            return reason
    if key.endswith("_log"):
        return _WRITES
    return None
