"""fio's option echo (the ``global options`` / ``job options`` of its JSON output, raw
strings as typed) read as iobench reads a workload.

:func:`workload_params` turns an echo into the params an iobench run stores for the same
workload, so that imported runs and iobench's own runs can be matched by ``compare``:

- options that are params of their own (``rw``, ``bs``, ``iodepth``, ... ``rwmixread``)
  and options that only say where or how fio ran or reported (``filename``,
  ``lat_percentiles``, ``write_*_log``, ``group_reporting``, ...) are left out of
  ``params["options"]``; so is ``randrepeat`` (iobench always sets it) and ``time_based``
  unless it is off (iobench's convention: ``("time_based", "0")`` only when not
  time based);
- what is kept is normalised the way iobench's suite loader writes it (booleans as
  ``"1"``/``"0"``, sizes and rates in bytes, ``thinktime`` in microseconds).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from iobench.fio.language import fio_bytes, fio_microseconds
from iobench.fio.parse import NUMBER_MAX

UNKNOWN_TARGET = "(unknown)"
# The options that say on which CPUs a job runs, not what it does.
PLACEMENT_KEYS = ("cpus_allowed", "cpus_allowed_policy", "cpumask")


def options_target(options: Mapping[str, str]) -> str:
    """What a standalone job ran against: its filename (inside directory when relative),
    else its directory, else "(unknown)"."""
    filename = options.get("filename") or None
    directory = options.get("directory") or None
    if filename:
        if directory and not filename.startswith("/") and ":" not in filename:
            return f"{directory.rstrip('/')}/{filename}"
        return filename
    if directory:
        return directory
    return UNKNOWN_TARGET


_LENIENT = re.compile(r"^\s*(0[xX][0-9a-fA-F]{1,30}|[0-9]{1,30})([A-Za-z]{0,8})\s*$")
_IEC_INVERTED = ("pib", "tib", "gib", "mib", "kib")
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def fio_size(value: str | None, kb_base: int = 1024) -> int | None:
    """A size as fio read it, in bytes, for what fio's output echoes (imports): the strict
    reading of job files (iobench.fio.language.fio_bytes) where it applies, else fio's own
    rule for the suffixes fio takes but a job file should not write (parse.c
    ``__get_mult_bytes``: past an IEC unit, only the first letter counts: ``50000Mi`` is
    50000 MiB); None for anything else (a blank between number and unit, which fio reads
    as bytes, percentages, ranges, lists, arithmetic): missing, never a guess."""
    if value is None:
        return None
    try:
        return fio_bytes(value.strip(), kb_base)
    except ValueError:
        pass
    m = _LENIENT.match(value)
    if not m or not m.group(2):
        return None
    digits, suffix = m.group(1), m.group(2).lower()
    number = int(digits, 16) if digits.lower().startswith("0x") else int(digits)
    other = 1000 if kb_base == 1024 else 1024
    for i, unit in enumerate(_IEC_INVERTED):
        if suffix.startswith(unit):
            return number * int(other ** (5 - i))
    power = _POWERS.get(suffix[0])
    return None if power is None else number * int(kb_base**power)


def fio_block_size(value: str | None, kb_base: int = 1024) -> int | None:
    """``bs``: one size, or ``read,write[,trim]`` sizes; None unless they all agree."""
    if value is None:
        return None
    sizes = {fio_size(part, kb_base) for part in value.split(",") if part.strip()}
    if len(sizes) != 1:
        return None
    return sizes.pop()


def fio_seconds(value: str | None) -> float | None:
    """A fio time option that defaults to seconds (``runtime``, ``ramp_time``), as the
    strict reading of job files takes it; None otherwise."""
    if value is None:
        return None
    try:
        return fio_microseconds(value.strip(), 10**6) / 1e6
    except ValueError:
        return None


def _fio_bool(value: str | None) -> bool | None:
    if value is None or not value.strip().isdigit():
        return None
    return int(value) != 0


# -- which options are kept in params["options"], and how they are written ---------------

# fio options (and aliases) that are params of their own.
_PARAM_OPTIONS = frozenset(
    {"rw", "readwrite", "bs", "blocksize", "iodepth", "numjobs", "ioengine", "direct"}
    | {"buffered", "runtime", "timeout", "ramp_time", "size", "rwmixread", "rwmixwrite"}
)
# Options that only say where fio ran, how it reported, in which order its jobs ran (a job
# file's stonewall, which fio's JSON does not echo when it has no value), or that iobench
# sets itself.
_NOT_MEASUREMENT = frozenset(
    {"stonewall", "wait_for_previous", "new_group", "wait_for"}
    | {"filename", "directory", "filename_format", "name", "description", "unique_filename"}
    | {"lat_percentiles", "clat_percentiles", "slat_percentiles", "percentile_list"}
    | {"per_job_logs", "group_reporting", "status-interval", "status_interval"}
    | {"randrepeat", "kb_base", "unit_base", "thread", "time_based"}
)
_NOT_MEASUREMENT_PREFIXES = ("log_", "output")  # log_avg_msec, output-format, ...
_WRITE_LOG = re.compile(r"^write_\w+_log$")  # write_bw_log, write_lat_log, ...

# fio's boolean options that a job may plausibly echo; written "1"/"0" as iobench does.
_BOOL_OPTIONS = frozenset(
    {"end_fsync", "fsync_on_close", "refill_buffers", "zero_buffers", "scramble_buffers"}
    | {"norandommap", "softrandommap", "invalidate", "allrandrepeat", "overwrite"}
    | {"create_on_open", "create_serialize"}
    | {"create_only", "allow_file_create", "pre_read", "fill_device", "fill_fs"}
    | {"disable_lat", "disable_clat", "disable_slat", "disable_bw_measurement"}
    | {"gtod_reduce", "exitall", "exitall_on_error", "do_verify", "verify_fatal"}
    | {"hipri", "fixedbufs", "registerfiles", "sqthread_poll", "nowait", "atomic"}
)
_INT_OPTIONS = frozenset(
    {"fsync", "fdatasync", "randseed", "buffer_compress_percentage", "dedupe_percentage"}
    | {"percentage_random", "rate_iops", "iodepth_batch_submit", "iodepth_batch"}
    | {"iodepth_batch_complete_min", "iodepth_batch_complete"}
)
_SIZE_OPTIONS = frozenset({"blockalign", "ba", "buffer_compress_chunk", "rate"})
_TRUE = frozenset({"true", "yes", "on"})
_FALSE = frozenset({"false", "no", "off"})
_SYNC = {"0": "none", "none": "none", "1": "sync", "sync": "sync", "dsync": "dsync"}


def _kept(name: str) -> bool:
    if name in _PARAM_OPTIONS or name in _NOT_MEASUREMENT:
        return False
    return not (_WRITE_LOG.match(name) or name.startswith(_NOT_MEASUREMENT_PREFIXES))


def _bool_string(value: str) -> str | None:
    v = value.strip().lower()
    if v.isdigit():
        return "1" if int(v) else "0"
    if v in _TRUE:
        return "1"
    if v in _FALSE:
        return "0"
    return None


def _thinktime_us(value: str) -> int | None:
    """fio reads a bare thinktime as microseconds; iobench writes it as ``<N>us``."""
    try:
        return fio_microseconds(value.strip(), 1)
    except ValueError:
        return None


def _bssplit(value: str, kb_base: int) -> str | None:
    directions = []
    for direction in value.split(","):
        parts = []
        for entry in direction.split(":"):
            size_text, slash, pct = entry.partition("/")
            size = fio_size(size_text, kb_base)
            if size is None:
                return None
            parts.append(f"{size}{slash}{pct.strip()}")
        directions.append(":".join(parts))
    return ",".join(directions)


def normalise_option(name: str, value: str, kb_base: int = 1024) -> str:
    """An echoed option's value as iobench's suite loader would write it (unchanged when
    it is not one iobench knows how to write, or not in a form it recognises)."""
    normal: str | int | None = None
    if name in _BOOL_OPTIONS:
        normal = _bool_string(value)
    elif name in _INT_OPTIONS:
        normal = int(value) if value.strip().isdigit() else None
    elif name in _SIZE_OPTIONS:
        normal = fio_size(value.removesuffix("/s"), kb_base)
    elif name == "sync":
        normal = _SYNC.get(value.strip().lower())
    elif name == "thinktime":
        us = _thinktime_us(value)
        normal = None if us is None else f"{us}us"
    elif name == "bssplit":
        normal = _bssplit(value, kb_base)
    return value if normal is None else str(normal)


def measurement_options(options: Mapping[str, str], kb_base: int = 1024) -> dict[str, str]:
    """The echoed options that change the measurement and are not params of their own,
    normalised; ``time_based`` only as ``"0"`` (iobench's convention)."""
    kept = {
        name: normalise_option(name, value, kb_base)
        for name, value in options.items()
        if _kept(name)
    }
    time_based = options.get("time_based")
    if time_based is not None and _bool_string(time_based) == "0":
        kept["time_based"] = "0"
    return kept


def _first(options: Mapping[str, str], *names: str) -> str | None:
    """The value of the first of an option's names (fio echoes aliases as typed)."""
    for name in names:
        if name in options:
            return options[name]
    return None


def workload_params(options: Mapping[str, str]) -> dict[str, Any]:
    """iobench's workload parameters from fio's option echo; what fio did not echo is None
    (fio's defaults are not assumed: the file does not say which version's applied).
    ``options`` holds only what changes the measurement (:func:`measurement_options`)."""
    kb_base = 1000 if options.get("kb_base", "").strip() == "1000" else 1024
    rw = (_first(options, "rw", "readwrite") or "").split(":")[0].strip() or None
    direct = _fio_bool(options.get("direct"))
    if direct is None:
        buffered = _fio_bool(options.get("buffered"))
        direct = None if buffered is None else not buffered
    rwmixread = fio_size(options.get("rwmixread"))
    if rwmixread is None:
        rwmixwrite = fio_size(options.get("rwmixwrite"))
        rwmixread = None if rwmixwrite is None or rwmixwrite > 100 else 100 - rwmixwrite
    return {
        "rw": rw,
        "bs": _within(fio_block_size(_first(options, "bs", "blocksize"), kb_base), 1),
        "iodepth": _within(fio_size(options.get("iodepth"), kb_base), 1),
        "numjobs": _within(fio_size(options.get("numjobs"), kb_base), 1),
        "ioengine": options.get("ioengine") or None,
        "direct": direct,
        "runtime_s": _within(fio_seconds(_first(options, "runtime", "timeout")), 0),
        "ramp_s": _within(fio_seconds(options.get("ramp_time")), 0),
        "size": _within(fio_size(options.get("size"), kb_base), 0),
        "rwmixread": _within(rwmixread, 0, 100),
        "options": measurement_options(options, kb_base),
    }


_N = TypeVar("_N", int, float)


def _within(value: _N | None, low: int, high: int = NUMBER_MAX) -> _N | None:
    """``value`` when a job fio ran can have it, else None: a value fio refuses is not
    what the job ran with (the file was altered), so it is not known. fio 3.33 refuses
    bs=0, iodepth=0 and rwmixread=150 ("min value out of range", "max value out of
    range"); with numjobs=0 it runs nothing ("maximum number of jobs reached"); its
    numbers are 64-bit."""
    return value if value is not None and low <= value <= high else None


# fio 3.x's defaults (fio --cmdhelp) of the options that are iobench's params: the
# option's names (the first is the one set), its default. Each of these options takes a
# value (fio 3.33 refuses `direct` or `numjobs` alone: "requires an argument"), so fio's
# JSON echo, a command line or a job file that names none of them left the job at it.
# ioengine's default is psync except on Windows (windowsaio): not assumed for a job whose
# path is a Windows one.
FIO3_DEFAULTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("rw", "readwrite"), "read"),
    (("bs", "blocksize", "bsrange", "blocksize_range", "bssplit"), "4096"),
    (("iodepth",), "1"),
    (("numjobs",), "1"),
    (("ioengine",), "psync"),
    (("direct", "buffered"), "0"),
    (("ramp_time",), "0"),
)
_MIXED = frozenset({"rw", "readwrite", "randrw"})
_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:|\\\\)")


def fio3_defaults(
    options: Mapping[str, str], unknown: frozenset[str] = frozenset()
) -> dict[str, str]:
    """The options ``options`` leaves at fio 3.x's defaults, as ``{option: default}``
    (``rwmixread`` 50 for a mixed ``rw``); ``unknown``: option names whose value is not
    known (left out of an echo), never defaulted."""
    absent = [
        (names[0], value)
        for names, value in FIO3_DEFAULTS
        if not any(n in options or n in unknown for n in names)
    ]
    path = options.get("filename") or options.get("directory") or ""
    found = {
        name: value
        for name, value in absent
        if not (name == "ioengine" and ("\\" in path or _WINDOWS_PATH.match(path)))
    }
    rw = (_first({**found, **options}, "rw", "readwrite") or "").split(":")[0].strip()
    mix = ("rwmixread", "rwmixwrite")
    if rw in _MIXED and not any(n in options or n in unknown for n in mix):
        found["rwmixread"] = "50"
    return found
