"""Load suites from TOML: the built-in ones shipped with iobench and users' own files.

A suite file is data that ends up in a fio job file, and fio job files are code (they can
run commands, delete files and write to any device). So every key goes through a typed
allow-list: iobench's own workload fields, then a short list of safe fio options. Anything
else is refused with the reason, and every error names the file and the line of the key.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import re
import tomllib
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path

from iobench.errors import SuiteError, UserError
from iobench.model import RW_MODES, Suite, Workload
from iobench.units import parse_duration, parse_size

DEFAULT_SUITE = "quick"
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

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_PACKAGE = "iobench.suites"
_NAME_RULE = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"


class _Invalid(Exception):
    """A value is wrong. The message is complete, e.g. 'iodepth must be ..., not "x"'."""


def _show(value: object) -> str:
    """A value the way it looks in TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return str(value)


# --- value parsers: (key, value) -> typed value, or raise _Invalid ---------------------------

_Parser = Callable[[str, object], object]


def _whole(lo: int, hi: int, why: str = "") -> _Parser:
    def parse(key: str, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            reason = f" ({why})" if why else ""
            raise _Invalid(
                f"{key} must be a whole number from {lo} to {hi}{reason}, not {_show(value)}"
            )
        return value

    return parse


def _bool(key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f"{key} must be true or false, not {_show(value)}")
    return value


def _size_value(key: str, value: object, lo: int, hi: int | None = None) -> int:
    accepted = f"{key} must be a size such as 4k, 1M, 20G or a number of bytes"
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _Invalid(f"{accepted}, not {_show(value)}")
    try:
        size = parse_size(value)
    except ValueError:
        raise _Invalid(f"{accepted}, not {_show(value)}") from None
    if size < lo:
        raise _Invalid(f"{key} must be at least {lo} bytes, not {_show(value)}")
    if hi is not None and size > hi:
        raise _Invalid(f"{key} must be at most {hi >> 30}G, not {_show(value)}")
    return size


def _size(lo: int, hi: int | None = None) -> _Parser:
    def parse(key: str, value: object) -> int:
        return _size_value(key, value, lo, hi)

    return parse


def _duration_value(key: str, value: object, *, positive: bool) -> float:
    accepted = f"{key} must be a duration such as 30s, 2m or a number of seconds"
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _Invalid(f"{accepted}, not {_show(value)}")
    try:
        seconds = parse_duration(value)
    except ValueError:
        raise _Invalid(f"{accepted}, not {_show(value)}") from None
    if not math.isfinite(seconds):
        raise _Invalid(f"{accepted}, not {_show(value)}")
    if positive and seconds <= 0:
        raise _Invalid(f"{key} must be longer than 0 seconds, not {_show(value)}")
    return seconds


def _duration(*, positive: bool) -> _Parser:
    def parse(key: str, value: object) -> float:
        return _duration_value(key, value, positive=positive)

    return parse


def _rw(key: str, value: object) -> str:
    if not isinstance(value, str) or value not in RW_MODES:
        modes = ", ".join(sorted(RW_MODES))
        raise _Invalid(f"{key} must be one of {modes}; not {_show(value)}")
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
            raise _Invalid(f"ioengine {_show(value)} is refused: it loads native code from a file")
        if value in _ENGINE_REFUSED:
            raise _Invalid(f"ioengine {_show(value)} is refused: {_ENGINE_REFUSED[value]}")
        if value in _NETWORK_ENGINES:
            raise _Invalid(
                f"ioengine {_show(value)} is refused: it connects to a network endpoint named "
                "in the job file; iobench reaches only the targets named on its command line"
            )
    raise _Invalid(f"{key} must be one of {', '.join(IOENGINES)}; not {_show(value)}")


# --- fio options from the allow-list: (key, value) -> the value string fio reads ----------------


def _fio_int(lo: int, hi: int, why: str = "") -> _Parser:
    whole = _whole(lo, hi, why)

    def parse(key: str, value: object) -> str:
        return str(whole(key, value))

    return parse


def _fio_bool(key: str, value: object) -> str:
    return "1" if _bool(key, value) else "0"


def _fio_size(lo: int) -> _Parser:
    def parse(key: str, value: object) -> str:
        return str(_size_value(key, value, lo))

    return parse


_SYNC_VALUES = {"none": "none", "0": "none", "sync": "sync", "1": "sync", "dsync": "dsync"}


def _fio_sync(key: str, value: object) -> str:
    # fio 3.33 HOWTO: sync=str takes none (=0), sync (=1, O_SYNC) or dsync (O_DSYNC).
    if isinstance(value, bool):
        return "sync" if value else "none"
    if isinstance(value, str) and value in _SYNC_VALUES:
        return _SYNC_VALUES[value]
    raise _Invalid(
        f'{key} must be true, false, "none", "sync" (O_SYNC) or "dsync" (O_DSYNC), '
        f"not {_show(value)}"
    )


_FLOAT = r"\d+(?:\.\d+)?"
_DISTRIBUTION_RE = re.compile(  # always used with fullmatch: no trailing newline can pass
    rf"random|(?:zipf|pareto|normal):{_FLOAT}(?::{_FLOAT})?"
    r"|zoned(?::\d+/\d+){1,256}|zoned_abs(?::\d+/\d+[kKmMgGtTpP]?){1,256}"
)


def _fio_distribution(key: str, value: object) -> str:
    if not isinstance(value, str) or not _DISTRIBUTION_RE.fullmatch(value):
        raise _Invalid(
            f"{key} must be random, zipf:THETA, pareto:POWER, normal:DEV (each with an "
            "optional :CENTER), zoned:PCT/PCT:... or zoned_abs:PCT/SIZE:..., "
            f"e.g. zipf:1.2; not {_show(value)}"
        )
    return value


def _fio_bssplit(key: str, value: object) -> str:
    """``4k/10:64k/50:32k/40``, optionally one such list per direction (read,write,trim)."""
    example = "e.g. 4k/10:64k/50:32k/40 or 4k/50:1k/:32k/"
    if not isinstance(value, str) or not value:
        raise _Invalid(
            f"{key} must be a string of SIZE/PERCENT pairs, {example}; not {_show(value)}"
        )
    directions = value.split(",")
    if len(directions) > 3:
        raise _Invalid(f"{key} takes at most three lists (read,write,trim), not {_show(value)}")
    out = []
    for direction in directions:
        entries = direction.split(":")
        if len(entries) > 64:
            raise _Invalid(f"{key} takes at most 64 block sizes per direction")
        total = 0
        parts = []
        for entry in entries:
            size_text, slash, pct_text = entry.partition("/")
            try:
                size = parse_size(size_text)
            except ValueError:
                size = 0
            if size <= 0 or (pct_text and not pct_text.isdigit()):
                raise _Invalid(
                    f"{key} must be SIZE/PERCENT pairs joined by ':', {example}; "
                    f"{_show(entry)} in {_show(value)} is not one"
                )
            total += int(pct_text or 0)
            parts.append(f"{size}{slash}{pct_text}")
        if total > 100:
            raise _Invalid(f"{key} percentages add up to {total}, more than 100: {_show(value)}")
        out.append(":".join(parts))
    return ",".join(out)


def _fio_rate(key: str, value: object) -> str:
    accepted = f"{key} must be bytes per second such as 50M, 500k/s or a number of bytes"
    rate = 0
    if isinstance(value, str):
        try:
            rate = parse_size(value.removesuffix("/s"))
        except ValueError:
            rate = 0
    elif isinstance(value, int) and not isinstance(value, bool):
        rate = value
    if rate <= 0:
        raise _Invalid(f"{accepted}, not {_show(value)}")
    return str(rate)


_UNIT_RE = re.compile(r"[a-zA-Z]\s*$")


def _fio_thinktime(key: str, value: object) -> str:
    # fio reads a bare thinktime number as microseconds, unlike every other duration, so a
    # unit is required and the value handed to fio always carries one.
    if not isinstance(value, str) or not _UNIT_RE.search(value):
        raise _Invalid(
            f"{key} must be a duration with a unit such as 500us, 2ms or 1s (fio reads a bare "
            f"number as microseconds), not {_show(value)}"
        )
    seconds = _duration_value(key, value, positive=False)
    return f"{round(seconds * 1e6)}us"


_MEM_TYPES = ("malloc", "shm", "shmhuge", "mmap", "mmapshared")


def _fio_mem(key: str, value: object) -> str:
    if isinstance(value, str) and ":" in value:
        raise _Invalid(
            f"{key} with a path is refused: it maps a file of its own choosing, outside the target"
        )
    if not isinstance(value, str) or value not in _MEM_TYPES:
        raise _Invalid(f"{key} must be one of {', '.join(_MEM_TYPES)}; not {_show(value)}")
    return value


# iobench's own workload fields (they become Workload attributes, not options).
CORE_KEYS: Mapping[str, _Parser] = {
    "rw": _rw,
    "bs": _size(1, MAX_BS),
    "iodepth": _whole(1, MAX_IODEPTH, "deeper queues only exhaust kernel and fio memory"),
    "numjobs": _whole(1, MAX_NUMJOBS, "each job is a process; more would exhaust the host"),
    "ioengine": _ioengine,
    "direct": _bool,
    "runtime": _duration(positive=True),
    "ramp": _duration(positive=False),
    "size": _size(1),
    "rwmixread": _whole(0, 100),
    "time_based": _bool,
}

# Safe fio options, stored in Workload.options as (name, value string).
OPTION_KEYS: Mapping[str, _Parser] = {
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
    "buffer_compress_chunk": _fio_size(1),
    "dedupe_percentage": _fio_int(0, 100),
    "blockalign": _fio_size(1),
    "offset": _fio_size(0),
    "random_distribution": _fio_distribution,
    "percentage_random": _fio_int(0, 100),
    "bssplit": _fio_bssplit,
    "rate": _fio_rate,
    "rate_iops": _fio_int(1, 2**31 - 1),
    "thinktime": _fio_thinktime,
    "iodepth_batch_submit": _fio_int(0, MAX_IODEPTH),
    "iodepth_batch_complete_min": _fio_int(0, MAX_IODEPTH),
    "mem": _fio_mem,
}

WORKLOAD_KEYS = ("name", *CORE_KEYS, *OPTION_KEYS)
TOP_KEYS = ("name", "description", "indicative", "defaults", "workload")

# --- refused fio options and why -----------------------------------------------------------

_RUNS = "it runs shell commands"
_WRITES = "it writes files at a path of its own choosing, outside the target you named"
_LOGS = "it configures fio's log files, which are written outside the target you named"
_READS = "it reads a file of its own choosing and replays the I/O recorded in it"
_TARGET = "it chooses its own target; iobench tests only the target named on its command line"
_DELETES = "it deletes files; iobench removes the test files it creates itself"
_HOST = "it changes how the host schedules or places processes; iobench leaves the host alone"
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
    "cpus_allowed": _HOST,
    "cpus_allowed_policy": _HOST,
    "cpumask": _HOST,
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
}
_REFUSED_PREFIXES = (
    ("exec_", _RUNS),
    ("trigger", _RUNS),
    ("cgroup", "it creates and configures control groups on the host"),
    ("log_", _LOGS),
    ("replay_", _READS),
    ("cpus_allowed", _HOST),
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


# --- where keys are: tomllib gives no positions, so find them in the text -------------------

Section = tuple[str, int]  # ("top", 0), ("defaults", 0), ("workload", n), ("sub", 0)
_HEADER_RE = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+)\]\]?\s*(?:#.*)?$")
_KEY_RE = re.compile(r"""^\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*[.=]""")


class _Lines:
    """Line numbers of keys and table headers in a suite file's text."""

    def __init__(self, text: str) -> None:
        self._keys: dict[tuple[Section, str], int] = {}
        self._headers: dict[Section, int] = {}
        section: Section = ("top", 0)
        workloads = -1
        in_string: str | None = None
        for lineno, line in enumerate(text.splitlines(), start=1):
            if in_string is not None:
                if line.count(in_string) % 2 == 1:
                    in_string = None
                continue
            header = _HEADER_RE.match(line)
            if header:
                parts = [p.strip().strip("\"'") for p in header.group(2).split(".")]
                double = header.group(1) == "[["
                if parts == ["workload"] and double:
                    workloads += 1
                    section = ("workload", workloads)
                    self._headers[section] = lineno
                elif parts == ["defaults"] and not double:
                    section = ("defaults", 0)
                    self._headers[section] = lineno
                else:
                    parent: Section = ("top", 0)
                    if len(parts) > 1 and parts[0] == "workload" and workloads >= 0:
                        parent, parts = ("workload", workloads), parts[1:]
                    elif len(parts) > 1 and parts[0] == "defaults":
                        parent, parts = ("defaults", 0), parts[1:]
                    self._keys.setdefault((parent, parts[0]), lineno)
                    section = ("sub", 0)
                continue
            key = _KEY_RE.match(line)
            if key:
                name = next(g for g in key.groups() if g is not None)
                self._keys.setdefault((section, name), lineno)
            for delimiter in ('"""', "'''"):
                if line.count(delimiter) % 2 == 1:
                    in_string = delimiter
                    break

    def key(self, section: Section, key: str) -> int | None:
        """The line of ``key`` in ``section``, else the section's header line (or, for an
        inline table such as ``defaults = {...}``, the line of the key that holds it)."""
        return (
            self._keys.get((section, key))
            or self._headers.get(section)
            or self._keys.get((("top", 0), section[0]))
        )

    def header(self, section: Section) -> int | None:
        return self._headers.get(section)


# --- building a suite ------------------------------------------------------------------------

_ParsedValue = tuple[object, int | None]  # (typed value, line)


class _Builder:
    def __init__(self, data: Mapping[str, object], path: str, text: str, source: str) -> None:
        self.data = data
        self.path = path
        self.lines = _Lines(text)
        self.source = source

    def fail(self, message: str, line: int | None, hint: str | None = None) -> SuiteError:
        return SuiteError(self.path, message, line=line, hint=hint)

    def build(self) -> Suite:
        top: Section = ("top", 0)
        for key, value in self.data.items():
            line = self.lines.key(top, key)
            if key not in ("defaults", "workload"):  # tables are checked key by key below
                self.check_no_env(key, value, "", line)
            if key not in TOP_KEYS:
                raise self.unknown(key, TOP_KEYS, "", line, top_level=True)
        name = self.data.get("name")
        if name is None:
            raise self.fail('missing the suite\'s name: add name = "my-suite" at the top', None)
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            raise self.fail(
                f"name must be {_NAME_RULE}; not {_show(name)}", self.lines.key(top, "name")
            )
        description = self.data.get("description")
        if description is None:
            raise self.fail(
                "missing description: add one or two sentences saying what the suite measures",
                None,
            )
        if not isinstance(description, str) or not description.strip():
            raise self.fail(
                f"description must be a non-empty string, not {_show(description)}",
                self.lines.key(top, "description"),
            )
        indicative = self.data.get("indicative", False)
        if not isinstance(indicative, bool):
            raise self.fail(
                f"indicative must be true or false, not {_show(indicative)}",
                self.lines.key(top, "indicative"),
            )
        defaults_table = self.data.get("defaults", {})
        if not isinstance(defaults_table, dict):
            raise self.fail(
                f"defaults must be a table ([defaults] followed by key = value lines), "
                f"not {_show(defaults_table)}",
                self.lines.key(top, "defaults"),
            )
        defaults = self.section(defaults_table, ("defaults", 0), "[defaults]: ")
        tables = self.data.get("workload")
        if tables is None:
            raise self.fail(
                "no workloads: add at least one [[workload]] table with name, rw, bs, iodepth "
                "and numjobs",
                None,
            )
        if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
            raise self.fail(
                "workload must be a list of tables: start each workload with [[workload]] "
                "(double brackets)",
                self.lines.key(top, "workload"),
            )
        if not tables:
            raise self.fail("no workloads: add at least one [[workload]] table", None)
        workloads: list[Workload] = []
        seen: dict[str, int | None] = {}
        for index, table in enumerate(tables):
            workload = self.workload(index, table, defaults)
            name_line = self.lines.key(("workload", index), "name")
            if workload.name in seen:
                first = seen[workload.name]
                where = f" at line {first}" if first else ""
                raise self.fail(
                    f'workload "{workload.name}": the name is already used by the workload{where}; '
                    "names must be unique within a suite",
                    name_line,
                )
            seen[workload.name] = name_line
            workloads.append(workload)
        return Suite(
            name=name,
            description=" ".join(description.split()),
            workloads=tuple(workloads),
            source=self.source,
            indicative=indicative,
        )

    def check_no_env(self, key: str, value: object, where: str, line: int | None) -> None:
        if isinstance(value, str) and "${" in value:
            raise self.fail(
                f'{where}{key}: "${{" is refused: fio would replace ${{VAR}} with an environment '
                f"variable, which can leak secrets into stored results ({_show(value)})",
                line,
            )
        if isinstance(value, list):
            for item in value:
                self.check_no_env(key, item, where, line)
        if isinstance(value, dict):
            for sub_key, item in value.items():
                self.check_no_env(f"{key}.{sub_key}", item, where, line)

    def unknown(
        self,
        key: str,
        allowed: tuple[str, ...],
        where: str,
        line: int | None,
        *,
        top_level: bool = False,
    ) -> SuiteError:
        reason = refusal(key)
        if reason is not None:
            return self.fail(f"{where}{key} is refused: {reason}", line, hint=f"See {DOCS}.")
        if top_level and key in WORKLOAD_KEYS:
            return self.fail(
                f"{key} is a workload key: put it in [defaults] (for every workload) or in a "
                "[[workload]] table",
                line,
            )
        if key in ALIASES:
            return self.fail(f'{where}unknown key "{key}": iobench calls it {ALIASES[key]}', line)
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        suggestion = f'; did you mean "{close[0]}"?' if close else ""
        return self.fail(
            f'{where}unknown key "{key}"{suggestion} ({DOCS} lists every accepted key)', line
        )

    def section(
        self, table: Mapping[str, object], section: Section, where: str
    ) -> dict[str, _ParsedValue]:
        """Check every key of a [defaults] or [[workload]] table, in file order."""
        parsed: dict[str, _ParsedValue] = {}
        for key, value in table.items():
            line = self.lines.key(section, key)
            self.check_no_env(key, value, where, line)
            if key == "name":
                if section[0] == "defaults":
                    raise self.fail(
                        f"{where}name belongs in each [[workload]], not in [defaults]", line
                    )
                continue
            parser = CORE_KEYS.get(key) or OPTION_KEYS.get(key)
            if parser is None:
                raise self.unknown(
                    key,
                    WORKLOAD_KEYS[1:] if section[0] == "defaults" else WORKLOAD_KEYS,
                    where,
                    line,
                )
            try:
                parsed[key] = (parser(key, value), line)
            except _Invalid as e:
                raise self.fail(f"{where}{e}", line) from None
        return parsed

    def workload(
        self, index: int, table: Mapping[str, object], defaults: Mapping[str, _ParsedValue]
    ) -> Workload:
        section: Section = ("workload", index)
        header = self.lines.header(section)
        name = table.get("name")
        if name is None:
            raise self.fail(
                f'workload #{index + 1}: missing name, e.g. name = "randread-4k"', header
            )
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            self.check_no_env(
                "name", name, f"workload #{index + 1}: ", self.lines.key(section, "name")
            )
            raise self.fail(
                f"workload #{index + 1}: name must be {_NAME_RULE}; not {_show(name)}",
                self.lines.key(section, "name"),
            )
        where = f'workload "{name}": '
        merged = {**defaults, **self.section(table, section, where)}
        for key in REQUIRED:
            if key not in merged:
                raise self.fail(
                    f"{where}missing {key} (set it in the workload or in [defaults])", header
                )

        def get(key: str) -> object:
            return merged[key][0] if key in merged else BUILTIN_DEFAULTS[key]

        def get_int(key: str) -> int:
            value = get(key)
            assert isinstance(value, int)
            return value

        def get_float(key: str) -> float:
            value = get(key)
            assert isinstance(value, int | float)
            return float(value)

        rw = str(get("rw"))
        if "rwmixread" in merged and rw not in MIXED_MODES:
            raise self.fail(
                f"{where}rwmixread only applies to mixed reads and writes "
                f'(rw = "randrw", "rw" or "readwrite"), not rw = {_show(rw)}',
                merged["rwmixread"][1],
            )
        bs, size = get_int("bs"), get_int("size")
        if size < bs:
            line = merged["size"][1] if "size" in merged else merged["bs"][1]
            raise self.fail(
                f"{where}size ({size} bytes) must be at least bs ({bs} bytes)", line or header
            )
        options: list[tuple[str, str]] = []
        for key, (value, _line) in merged.items():
            if key in OPTION_KEYS:
                options.append((key, str(value)))
            elif key == "time_based" and value is False:
                # Not a Workload field: iobench's job builder reads it from the options.
                options.append(("time_based", "0"))
        rwmixread = get_int("rwmixread") if "rwmixread" in merged else None
        return Workload(
            name=name,
            rw=rw,
            bs=bs,
            iodepth=get_int("iodepth"),
            numjobs=get_int("numjobs"),
            ioengine=str(get("ioengine")),
            direct=get("direct") is True,
            runtime_s=get_float("runtime"),
            ramp_s=get_float("ramp"),
            size=size,
            rwmixread=rwmixread,
            options=tuple(options),
        )


# --- public API --------------------------------------------------------------------------


def parse_suite(text: str, path: str, source: str) -> Suite:
    """Validate suite TOML ``text``; errors name ``path`` and the line of the offending key."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        message = str(e)
        m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
        line = int(m.group(1)) if m else None
        if m:
            message = f"{message[: m.start()]} (column {m.group(2)})"
        raise SuiteError(path, f"not valid TOML: {message}", line=line) from None
    return _Builder(data, path, text, source).build()


def builtin_names() -> list[str]:
    """The names of the suites shipped with iobench, sorted."""
    files = resources.files(_PACKAGE)
    return sorted(f.name.removesuffix(".toml") for f in files.iterdir() if f.name.endswith(".toml"))


def load_builtin(name: str) -> Suite:
    """A built-in suite by name (see :func:`builtin_names`)."""
    if name not in builtin_names():
        raise UserError(
            f'unknown built-in suite "{name}"; built-in suites: {", ".join(builtin_names())}'
        )
    resource = resources.files(_PACKAGE) / f"{name}.toml"
    return parse_suite(resource.read_text(encoding="utf-8"), f"builtin:{name}.toml", "builtin")


def load_suite_file(path: str | Path) -> Suite:
    """A user's suite file; ``Suite.source`` is the path as given."""
    shown = str(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise SuiteError(shown, "no such file") from None
    except IsADirectoryError:
        raise SuiteError(shown, "is a directory, not a suite file") from None
    except OSError as e:
        raise SuiteError(shown, f"cannot be read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SuiteError(shown, "is not UTF-8 text; suite files are TOML") from None
    return parse_suite(text, shown, shown)


def load_suite(name_or_path: str) -> Suite:
    """A built-in suite by name, or a suite file by path (anything with a '/' or '.toml')."""
    if name_or_path in builtin_names():
        return load_builtin(name_or_path)
    path = Path(name_or_path)
    if path.is_file() or "/" in name_or_path or name_or_path.endswith(".toml"):
        return load_suite_file(name_or_path)
    raise UserError(
        f'unknown suite "{name_or_path}": not a built-in suite and not a file; '
        f"built-in suites: {', '.join(builtin_names())}",
        hint=f"Or give the path of a .toml suite file ({DOCS} describes the format).",
    )


def apply_overrides(
    suite: Suite,
    *,
    runtime_s: float | None = None,
    size: int | None = None,
    ramp_s: float | None = None,
) -> Suite:
    """A copy of ``suite`` with runtime, size and/or ramp replaced in every workload."""
    if runtime_s is not None and (not math.isfinite(runtime_s) or runtime_s <= 0):
        raise UserError(f"runtime must be longer than 0 seconds, not {runtime_s:g}")
    if ramp_s is not None and (not math.isfinite(ramp_s) or ramp_s < 0):
        raise UserError(f"ramp must be 0 seconds or longer, not {ramp_s:g}")
    if size is not None:
        if isinstance(size, bool) or size <= 0:
            raise UserError(f"size must be at least 1 byte, not {size}")
        small = [w.name for w in suite.workloads if w.bs > size]
        if small:
            raise UserError(
                f"size {size} bytes is smaller than the block size of {', '.join(small)}"
            )

    def override(w: Workload) -> Workload:
        return dataclasses.replace(
            w,
            runtime_s=w.runtime_s if runtime_s is None else float(runtime_s),
            ramp_s=w.ramp_s if ramp_s is None else float(ramp_s),
            size=w.size if size is None else int(size),
        )

    return dataclasses.replace(suite, workloads=tuple(override(w) for w in suite.workloads))
