"""fio job files (fio's own ini format) read as suites. Pure: text in, the suite's parts out.

A job file is read the way fio 3.33 reads it (init.c ``__parse_jobs_ini``, parse.c): a line
whose first non-blank character is ``;`` or ``#`` is a comment, and any other line is cut
at its first ``;`` or ``#``; ``[NAME]`` starts a section, and a section whose name starts
with ``global`` holds options for the jobs after it (several add up, as in fio); every
other section is a job. Values are read with fio's units (``4k`` is 4096 bytes, ``4KiB``
4000 unless ``kb_base=1000``; a bare ``runtime`` is seconds) and its option names
(``blocksize``, ``readwrite``, ``timeout`` ...), then handed to the loader as
iobench's own keys, so a job file is checked exactly like a TOML suite.

What a job file may say that a TOML suite may not: where fio does its I/O (``filename``,
``directory``, ``filename_format``, ``opendir``: replaced by the target, said as a note),
the order of its jobs (``stonewall``, ``wait_for``, ``new_group``: the jobs fio starts
together become one workload of several parts), ``name``, ``description``,
``group_reporting`` and ``kb_base``. ``include``, ``${VAR}``, fio's ``$ncpus``-style
keywords and ``(...)`` arithmetic are expanded before (fio/language.py). docs/suites.md,
"fio job files", says it for users.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from iobench.errors import SuiteProblem
from iobench.fio.jobfile import LAYOUT_SECTION, LINE_BYTES, report_options
from iobench.fio.language import Section as JobSection
from iobench.fio.language import fio_bytes, fio_microseconds, read_sections
from iobench.model import SuiteNote
from iobench.suites.options import (
    ALIASES,
    BUILTIN_DEFAULTS,
    CORE_KEYS,
    MAX_SIZE,
    OPTION_KEYS,
    as_written,
    show_key,
    show_value,
)
from iobench.targets.kinds import ENDPOINT_OPTIONS
from iobench.units import format_size_short, listed, parse_size

Section = tuple[str, int]  # ("defaults", k): the k-th [global] section; ("workload", i): a job

SUFFIXES = (".fio", ".job", ".ini")
# bytes (UTF-8): fio reads a line in pieces of 8191 bytes and takes the rest of a longer
# one for a line of its own, so a long line could hold an option iobench never saw. The
# limit of the lines iobench writes (fio/jobfile.py), so that an export reads back.
MAX_LINE = LINE_BYTES

# Where fio does its I/O: iobench replaces them with the target named on its command line
# (for the engines of network targets, their options that name the server, pool, image).
TARGET_OPTIONS = (
    "filename",
    "directory",
    "filename_format",
    "opendir",
    *sorted(ENDPOINT_OPTIONS),
)
# fio's other names for the typed keys (fio --cmdhelp shows each as "alias"): the
# plain renames of options.ALIASES; rwmixwrite and buffered are inverted in _table.
FIO_ALIASES = {fio: ours for fio, ours in ALIASES.items() if " " not in ours}
# Options about the job file itself, read here and not handed to fio as they are.
STRUCTURE = (
    "name",
    "description",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "wait_for",
    "group_reporting",
    "kb_base",
)
# The things a note or refusal names: past five, "and N more".
_listed = functools.partial(listed, most=5)
# What iobench has fio report for every job (fio/jobfile.py): in a job file, with the very
# value iobench sets, they are left to iobench (an exported suite has them); else refused.
IOBENCH_SETS: dict[str, str] = dict(
    line.split("=", 1) for line in report_options(logs=False) if not line.startswith("group_")
)
# fio's own per-second logs: iobench keeps its own (the report's timelines), so a job file's
# are left out, said in a note, instead of refused (they would write where the file says).
LOG_OPTIONS = frozenset(
    {"write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "per_job_logs"}
    | {"log_avg_msec", "log_hist_msec", "log_hist_coarseness", "log_max_value", "log_offset"}
    | {"log_unix_epoch", "log_compression", "log_store_compressed", "log_entries", "log_prio"}
    | {"write_iolog", "log_compression_cpus", "log_alternate_epoch"}
    | {"log_alternate_epoch_clock_id"}
)
# What fio reports and how: iobench has fio report percentiles and bins for every job itself,
# per direction; a job file's own values are left to it (said in a note), whatever they are.
REPORTING = frozenset(
    {"clat_percentiles", "lat_percentiles", "slat_percentiles", "percentile_list"}
    | {"unified_rw_reporting", "significant_figures", "block_error_percentiles"}
)
# Deleting the file fio did its I/O in: iobench removes its own test file itself, and never
# deletes a file or device named on its command line.
DELETING = frozenset({"unlink", "unlink_each_loop"})
# fio's defaults where iobench's differ (fio --cmdhelp=OPTION), so a job runs as fio runs it.
FIO_DEFAULTS: dict[str, object] = {
    "rw": "read",
    "bs": 4096,
    "iodepth": 1,
    "numjobs": 1,
    "ioengine": "psync",
    "direct": False,
    "time_based": False,
}
# Every option a job file may use, as fio spells it (unknown ones are compared with these).
FIO_SPELLINGS: tuple[str, ...] = (
    *("ramp_time" if key == "ramp" else key for key in (*CORE_KEYS, *OPTION_KEYS)),
    *STRUCTURE,
    *TARGET_OPTIONS,
)

# How fio reads each typed key's value.
_SIZES = frozenset({"bs", "size", "blockalign", "buffer_compress_chunk", "rate"})
_SECONDS = frozenset({"runtime", "ramp"})
_INTS = frozenset(
    {"iodepth", "numjobs", "rwmixread", "fsync", "fdatasync", "randseed", "rate_iops"}
    | {"buffer_compress_percentage", "dedupe_percentage", "percentage_random"}
    | {"iodepth_batch_submit", "iodepth_batch_complete_min"}
)
# fio's "boolean value": 1 or 0, never alone; its "empty or boolean value" may stand alone.
_BOOLS = frozenset(
    {"direct", "buffered", "randrepeat", "invalidate", "scramble_buffers", "end_fsync"}
    | {"fsync_on_close"}
)
_FLAGS = frozenset(
    {"time_based", "norandommap", "zero_buffers", "refill_buffers", "stonewall", "new_group"}
    | {"thread"}
    | {"group_reporting", "wait_for_previous"}
)

_NUMBER = r"([0-9]{1,30})"
_INT_RE = re.compile(r"[0-9]{1,30}|0[xX][0-9a-fA-F]{1,30}")
_KEYWORD_RE = re.compile(r"\$[A-Za-z_]*")


# --- the text: lines, sections and options ---------------------------------------------------


# --- values, as fio reads them ---------------------------------------------------------------


class _Refused(Exception):
    """A value fio would read differently from what iobench can run; the message is whole."""


class Reported:
    """A table's value that is wrong and reported already (the loader checks it no more)."""

    def __repr__(self) -> str:
        return "REPORTED"


REPORTED = Reported()


def _why_not(key: str, value: str, what: str, cut: str) -> _Refused:
    if re.search(r"[,:]", value) or re.search(r"[0-9a-zA-Z]-", value):
        return _Refused(
            f"{key}={show_value(value)}: values per direction or ranges (read,write or "
            f"low-high) are not supported; iobench runs one {key} for every direction"
        )
    if "." in value:
        return _Refused(
            f"{key} takes whole numbers only: fio reads {show_value(value)} up to the "
            f"'.' ({cut} to it); write the value in a smaller unit"
        )
    if "%" in value:
        return _Refused(
            f"{key}={show_value(value)}: a share of the file or device is not supported; "
            f"give {what}"
        )
    return _Refused(f"{key} must be {what} as fio reads it, not {show_value(value)}")


_SIZE_WHAT = "a size such as 4k, 1m or 10g (KiB, MiB ... are powers of 1000 to fio)"
_TIME_WHAT = "a whole number with an optional unit: us, ms, s, m, h or d"


def _typed(key: str, spelled: str, value: str | None, kb_base: int) -> object:
    """``value`` as the typed parser for ``key`` takes it (ints, bools, floats in
    seconds, sizes in bytes); _Refused when fio would read it otherwise."""
    if value is None:
        if key in _FLAGS:
            return True
        if key in _BOOLS or key in CORE_KEYS or key in OPTION_KEYS:
            raise _Refused(f"{spelled} needs a value: {spelled}=...")
        return True  # an option without a typed parser: the loader checks it by name
    if key in _FLAGS and _INT_RE.fullmatch(value):
        return int(value, 0) != 0  # fio's "set" options: any whole number, not 0 is set
    if key in _BOOLS or key in _FLAGS:
        if value not in ("0", "1"):
            alone = f" (or {spelled} alone for 1)" if key in _FLAGS else ""
            raise _Refused(f"{spelled} must be 1 or 0{alone}, not {show_value(value)}")
        return value == "1"
    # A converted value carries the text: a limit's message shows what the file wrote.
    if key == "size" and value.endswith("%"):
        return value  # a share of the file or device: the loader reads it
    if key == "bs" and "," in value:  # one a direction: each as fio reads it
        try:
            return ",".join(str(fio_bytes(v, kb_base)) for v in value.split(","))
        except ValueError:
            raise _why_not(spelled, value, _SIZE_WHAT, "1.5k is 1k") from None
    if key in ("rate", "rate_iops") and "," in value:  # one a direction, empty: no cap
        try:
            parts = [
                str(fio_bytes(v, kb_base) if key == "rate" else fio_bytes(v, 1000)) if v else ""
                for v in value.split(",")
            ]
        except ValueError:
            what = _SIZE_WHAT if key == "rate" else "a whole number"
            raise _Refused(
                f"{spelled}={show_value(value)}: each direction's value (READ,WRITE[,TRIM]; "
                f"empty: no cap) must be {what} as fio reads it"
            ) from None
        return as_written(",".join(parts), value)
    if key in _SIZES:
        try:
            return as_written(fio_bytes(value, kb_base), value)
        except ValueError:
            raise _why_not(spelled, value, _SIZE_WHAT, "1.5g is 1 byte") from None
    if key in _SECONDS or key == "thinktime":
        try:
            micros = fio_microseconds(value, 10**6 if key in _SECONDS else 1)
        except ValueError:
            raise _why_not(spelled, value, _TIME_WHAT, "1.5s is 1s") from None
        return as_written(micros / 1e6 if key in _SECONDS else f"{micros}us", value)
    if key in _INTS and _INT_RE.fullmatch(value):
        return as_written(int(value, 0) if value[:2].lower() == "0x" else int(value), value)
    if key == "bssplit":
        return as_written(_bssplit(spelled, value, kb_base), value)
    if key == "random_distribution" and value.startswith("zoned_abs:"):
        return as_written(_zoned_abs(value, kb_base), value)
    return value  # text (rw, ioengine, ...), or wrong: the loader says why


def _bssplit(spelled: str, value: str, kb_base: int) -> str:
    """bssplit with its sizes in bytes as fio reads them (``4k/10:64k/90``)."""
    directions = []
    for direction in value.split(","):
        entries = []
        for entry in direction.split(":"):
            size, slash, pct = entry.partition("/")
            try:
                entries.append(f"{fio_bytes(size, kb_base)}{slash}{pct}")
            except ValueError:
                raise _Refused(
                    f"{spelled}: {show_value(size)} in {show_value(value)} is not a size as "
                    "fio reads it (4k, 1m: a whole number with an optional unit)"
                ) from None
        directions.append(":".join(entries))
    return ",".join(directions)


def _zoned_abs(value: str, kb_base: int) -> str:
    """zoned_abs with its zone sizes in bytes as fio reads them (with the job's kb_base, as
    fio's split parser does), so fio, which is not given kb_base, reads the same zones; a
    zone that is not a size as fio reads it, or is beyond the typed bound, is left
    as written for the loader to refuse."""
    zones = []
    for zone in value.split(":")[1:]:
        pct, slash, size = zone.partition("/")
        try:
            size_bytes = fio_bytes(size, kb_base)
        except ValueError:
            size_bytes = MAX_SIZE + 1
        zones.append(zone if size_bytes > MAX_SIZE else f"{pct}{slash}{size_bytes}")
    return ":".join(["zoned_abs", *zones])


def _surprise(key: str, value: str, kb_base: int) -> int | None:
    """The bytes fio reads ``value`` as, when iobench's own units would read it otherwise
    (4KiB is 4000 bytes to fio), else None."""
    if key not in _SIZES:
        return None
    try:
        fio, ours = fio_bytes(value, kb_base), parse_size(value)
    except ValueError:
        return None
    return fio if fio != ours else None


# --- sections into the loader's tables ---------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One of the options about the file itself (STRUCTURE): its value and line."""

    value: str | bool
    line: int


class JobLines:
    """Where a job file says things, for the loader's messages (loader.LineIndex)."""

    def __init__(self) -> None:
        self.headers: dict[Section, int] = {}
        self.keys: dict[tuple[Section, str], int] = {}
        self.spelled: dict[tuple[Section, str], str] = {}

    def key(self, section: Section, key: str) -> int | None:
        return self.keys.get((section, key)) or self.headers.get(section)

    def header(self, section: Section) -> int | None:
        return self.headers.get(section)

    def spelling(self, section: Section, key: str) -> str:
        return self.spelled.get((section, key), key)


@dataclass
class _Read:
    """Everything read from the file so far."""

    lines: JobLines = field(default_factory=JobLines)
    problems: list[SuiteProblem] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)  # "filename=... (line 3)"
    units: list[str] = field(default_factory=list)  # sizes fio reads unlike iobench
    same: list[str] = field(default_factory=list)  # IOBENCH_SETS options, as iobench sets them
    logs: list[str] = field(default_factory=list)  # LOG_OPTIONS, left out
    renamed: list[str] = field(default_factory=list)  # jobs named after their sections
    renamed_from: str = ""  # the name [global] gave them all
    layout: list[int] = field(default_factory=list)  # lines of [iobench-layout] sections
    deleting: list[str] = field(default_factory=list)  # DELETING options, left out


def _table(
    section: JobSection, where: Section, kb_base: int, read: _Read
) -> tuple[dict[str, object], dict[str, Setting]]:
    """A section's options as the loader's table (typed keys and values) and its
    settings about the file (STRUCTURE); what is refused goes to ``read.problems``."""
    table: dict[str, object] = {}
    settings: dict[str, Setting] = {}
    label = f"[{show_key(section.name)}]: "
    for option in section.options:
        key, value, line = option.key, option.value, option.line

        def refuse(message: str, line: int = line) -> None:
            read.problems.append(SuiteProblem(label + message, line))

        if key in TARGET_OPTIONS:
            read.targets.append(f"{show_key(key)}={show_value(value or '')} (line {line})")
            continue
        if key in LOG_OPTIONS:
            read.logs.append(f"{show_key(key)} (line {line})")
            continue
        if (key in IOBENCH_SETS and value == IOBENCH_SETS[key]) or key in REPORTING:
            read.same.append(f"{key}={value}" if value is not None and len(value) < 8 else key)
            continue
        if key in DELETING:
            if value not in ("0", "false"):
                read.deleting.append(f"{show_key(key)} (line {line})")
            continue
        if value is not None and not _plain(show_key(key), value, refuse):
            continue
        if key in STRUCTURE:
            setting = _setting(key, value, refuse)
            if setting is not None:
                settings["stonewall" if key == "wait_for_previous" else key] = Setting(
                    setting, line
                )
            continue
        if key == "ramp":  # iobench's spelling, not fio's
            refuse('unknown option "ramp"; fio calls it ramp_time')
            continue
        name = FIO_ALIASES.get(key, key)
        if key in ("rwmixwrite", "buffered"):
            name = "rwmixread" if key == "rwmixwrite" else "direct"
        typed: object
        try:
            typed = _typed(name if key != "buffered" else key, key, value, kb_base)
        except _Refused as e:
            refuse(str(e))
            typed = REPORTED  # there, but wrong: no default hides it
        if key == "rwmixwrite" and isinstance(typed, int) and not isinstance(typed, bool):
            typed = 100 - typed if typed <= 100 else value
        elif key == "buffered" and isinstance(typed, bool):
            typed = not typed
        if value is not None and typed is not REPORTED:
            fio = _surprise(name, value, kb_base)
            if fio is not None:
                read.units.append(f"{key}={value} (line {line}) is {fio} bytes")
        table[name] = typed
        read.lines.keys[(where, name)] = line
        read.lines.spelled[(where, name)] = key
    return table, settings


def _plain(key: str, value: str, refuse: Callable[[str], None]) -> bool:
    """False (and the reason given to ``refuse``) for what fio would replace or compute in a
    value that is still there after fio.language replaced what it could (an unset ${VAR}
    and arithmetic it could not compute are reported there); and for a blank after '=',
    which fio misreads."""
    if "${" in value or (value.startswith("(") and value.rstrip().endswith(")")):
        return False  # reported by iobench.fio.language
    if "$" in value:
        found = _KEYWORD_RE.search(value)
        word = found.group() if found else "$"
        refuse(
            f"{key}: {show_value(word)} is refused: fio expands only ${{VAR}} and its "
            "keywords $ncpus, $mb_memory and $pagesize, so a $VAR a shell would expand reaches "
            "fio as it is written; write the value"
        )
    elif value.startswith("("):
        refuse(f"{key}={show_value(value)}: fio computes (...) as arithmetic; write the value")
    elif value[:1] in (" ", "\t") and value.strip():
        plain = value.strip(" \t")
        refuse(
            f"{key}= is followed by a blank, which fio misreads (size= 1g is 1 byte to it, "
            "rw= read is refused); "
            + (f"write {key}={plain}" if len(plain) <= 40 else "remove the blank")
        )
    else:
        return True
    return False


def _setting(key: str, value: str | None, refuse: Callable[[str], None]) -> str | bool | None:
    """A STRUCTURE option's value (a flag's True/False, a name's text), or None (refused)."""
    if key in _FLAGS:
        if value is None or value in ("0", "1"):
            return value != "0"
        refuse(f"{key} must be 1 or 0 (or {key} alone for 1), not {show_value(value)}")
        return None
    if not value:
        refuse(f"{key} needs a value: {key}=...")
        return None
    if key == "kb_base" and value not in ("1000", "1024"):
        refuse(f"kb_base must be 1000 or 1024, not {show_value(value)}")
        return None
    return value


# --- the jobs and their order ------------------------------------------------------------------


@dataclass(frozen=True)
class _Job:
    name: str  # fio's name for it: its name= option, else its section's name
    line: int  # its section's
    settings: dict[str, Setting]  # its own and its [global] sections'
    section: str = ""  # its section's name


@dataclass(frozen=True)
class JobFile:
    """A job file as the loader builds its suite from: TOML-shaped data (``defaults`` is a
    list: one table per [global] section), where each thing is, and what was refused or
    decided on the way."""

    data: dict[str, object]
    lines: JobLines
    labels: tuple[str, ...]  # each [global] section's name
    # per workload ("workload", i) or part of a group ("job", k): how many [global]
    # sections come before it
    applies: dict[Section, int]
    problems: tuple[SuiteProblem, ...]
    notes: tuple[SuiteNote, ...]


def read_job_file(text: str) -> JobFile:
    """The suite parts of a fio job file's ``text`` (see the module's docstring)."""
    sections, problems = read_sections(text)
    read = _Read(problems=problems)
    defaults: list[dict[str, object]] = []
    workloads: list[dict[str, object]] = []
    labels: list[str] = []
    applies: list[int] = []
    jobs: list[_Job] = []
    inherited: dict[str, Setting] = {}  # the [global] sections' settings so far
    global_keys: set[str] = set()  # the keys they set
    unbounded: dict[str, list[str]] = {"runtime": [], "size": []}
    from_global: list[tuple[int, JobSection]] = []  # jobs named by a [global] name=
    for section in sections:
        own_kb = next((o.value for o in section.options if o.key == "kb_base"), None)
        kb_base = own_kb or inherited.get("kb_base", Setting("1024", 0)).value
        kb = int(kb_base) if kb_base in ("1000", "1024") else 1024
        if section.is_global:
            where: Section = ("defaults", len(defaults))
            table, settings = _table(section, where, kb, read)
            read.lines.headers[where] = section.line
            defaults.append(table)
            labels.append(show_key(section.name))
            inherited = {**inherited, **settings}
            global_keys |= table.keys()
            continue
        if section.name == LAYOUT_SECTION:  # iobench's own layout step, in an export
            read.layout.append(section.line)
            continue
        where = ("workload", len(workloads))
        table, settings = _table(section, where, kb, read)
        read.lines.headers[where] = section.line
        if "name" not in settings and "name" in inherited:
            from_global.append((len(workloads), section))
        settings = {**inherited, **settings}
        name = settings.get("name", Setting(section.name, section.line))
        read.lines.keys[(where, "name")] = name.line
        for key, value in FIO_DEFAULTS.items():
            if key not in table and key not in global_keys:
                table[key] = value
        for key, names in unbounded.items():
            if key not in table and key not in global_keys:
                names.append(show_key(str(name.value)))
        workloads.append({"name": name.value, **table})
        applies.append(len(defaults))
        jobs.append(_Job(str(name.value), section.line, settings, section.name))
    runs, order_problems = _runs(jobs)
    read.problems.extend(order_problems)
    _name_after_sections(workloads, from_global, read)
    grouped, scopes = _grouped(runs, workloads, jobs, applies, read.lines)
    data: dict[str, object] = {"defaults": defaults, "workload": grouped}
    description = next((d for d in _descriptions(sections)), None)
    if description is not None:
        data["description"] = description
    return JobFile(
        data,
        read.lines,
        tuple(labels),
        scopes,
        tuple(read.problems),
        _notes(read, unbounded),
    )


def _name_after_sections(
    workloads: list[dict[str, object]], from_global: Sequence[tuple[int, JobSection]], read: _Read
) -> None:
    """A ``name=`` in [global] names every job after it alike (fio allows that; iobench's
    workloads need names of their own): those jobs are named after their sections."""
    names = [w["name"] for w in workloads]
    shared = [(i, s) for i, s in from_global if names.count(names[i]) > 1]
    for i, section in shared:
        read.renamed.append(f"[{show_key(section.name)}] (line {section.line})")
        workloads[i]["name"] = section.name
        read.lines.keys[(("workload", i), "name")] = section.line
    if shared:
        read.renamed_from = str(names[shared[0][0]])


def _descriptions(sections: Iterable[JobSection]) -> Iterable[str]:
    """The [global] sections' descriptions (a job's own describes only it: not kept)."""
    for section in sections:
        if section.is_global:
            for option in section.options:
                if option.key == "description" and option.value and "$" not in option.value:
                    yield option.value


def _runs(jobs: Sequence[_Job]) -> tuple[list[list[int]], list[SuiteProblem]]:
    """The jobs fio runs at the same time, as indexes into ``jobs`` in the order fio starts
    them (fio 3.33 backend.c ``run_threads``): it starts the jobs in file order until one
    with stonewall (which waits for every job before it), passing over a job whose wait_for
    names a job that has not ended (it starts once that one has); each such round is run by
    iobench as one workload, the next round once it has ended. Also wait_for naming no
    earlier job (fio refuses it)."""
    problems: list[SuiteProblem] = []
    earlier: set[str] = set()
    for job in jobs:
        wait = job.settings.get("wait_for")
        if wait is not None and wait.value not in earlier:
            whose = "the job itself" if wait.value == job.name else "no job before it"
            problems.append(
                SuiteProblem(
                    f"[{show_key(job.name)}]: wait_for={show_value(wait.value)} names {whose}; "
                    "fio waits only for a job defined earlier in the file",
                    wait.line,
                )
            )
        earlier.add(job.name)
    runs: list[list[int]] = []
    ended: set[str] = set()
    pending = list(range(len(jobs)))
    while pending:
        started: list[int] = []
        for i in pending:
            stonewall = jobs[i].settings.get("stonewall")
            if stonewall is not None and stonewall.value and started:
                break
            wait = jobs[i].settings.get("wait_for")
            if wait is not None and wait.value in earlier and wait.value not in ended:
                continue
            started.append(i)
        started = started or pending[:1]  # waits for a job that never runs: refused above
        runs.append(started)
        ended |= {jobs[i].name for i in started}
        pending = [i for i in pending if i not in started]
    return runs, problems


def _grouped(
    runs: Sequence[Sequence[int]],
    workloads: Sequence[dict[str, object]],
    jobs: Sequence[_Job],
    applies: Sequence[int],
    lines: JobLines,
) -> tuple[list[dict[str, object]], dict[Section, int]]:
    """The workloads as iobench runs them, one per run of jobs fio starts together
    (:func:`_runs`): a job alone as it is, several as a group named after the first one's
    section, each job a part (``job``: its table, at ("job", k) in ``lines``, where its
    lines are moved); and how many [global] sections apply to each workload or part."""
    out: list[dict[str, object]] = []
    scopes: dict[Section, int] = {}
    moved: dict[Section, Section] = {}
    groups: dict[Section, int] = {}  # a group's workload -> its first job's line
    parts = 0
    for run in runs:
        where: Section = ("workload", len(out))
        if len(run) == 1:
            moved[("workload", run[0])] = where
            scopes[where] = applies[run[0]]
            out.append(workloads[run[0]])
            continue
        for i in run:
            moved[("workload", i)] = ("job", parts)
            scopes[("job", parts)] = applies[i]
            parts += 1
        groups[where] = jobs[run[0]].line
        out.append({"name": jobs[run[0]].section, "job": [workloads[i] for i in run]})
    lines.headers = {moved.get(k, k): v for k, v in lines.headers.items()} | groups
    lines.keys = {(moved.get(w, w), key): v for (w, key), v in lines.keys.items()}
    lines.keys |= {(where, "name"): line for where, line in groups.items()}
    lines.spelled = {(moved.get(w, w), key): v for (w, key), v in lines.spelled.items()}
    return out, scopes


def _left_out_notes(read: _Read) -> list[SuiteNote]:
    """What a job file asks of fio that iobench leaves out: deleting files, fio's logs."""
    notes = []
    if read.deleting:
        notes.append(
            SuiteNote(
                f"the job file has fio delete the file it used ({_listed(read.deleting)}); left "
                "out: iobench removes its own test file after the run, and never deletes a "
                "file or device named on its command line",
                "nothing to do",
            )
        )
    if read.logs:
        notes.append(
            SuiteNote(
                f"the job file has fio write logs of its own ({_listed(read.logs)}); they are "
                "left out: they would be written where the file says, and iobench keeps "
                "per-second logs of each workload itself (the report's timelines)",
                "nothing to do: `iobench show RUN` and the report hold the per-second figures",
            )
        )
    return notes


def _notes(read: _Read, unbounded: dict[str, list[str]]) -> tuple[SuiteNote, ...]:
    notes = []
    if read.targets:
        notes.append(
            SuiteNote(
                f"the job file names where fio would do its I/O ({_listed(read.targets)}); "
                "iobench runs every job on the target named on its command line instead",
                "nothing to do: the target is what `iobench run TARGET` names",
            )
        )
    if read.same or read.layout:
        layout = (
            f"[{LAYOUT_SECTION}] (line {_listed([str(n) for n in read.layout])}) is iobench's "
            "own layout of its test file (`suites export` writes it), which iobench runs "
            "itself before the workloads"
            if read.layout
            else ""
        )
        same = (
            f"{_listed(read.same)}: how fio reports, which iobench sets for every job itself "
            "(percentiles and histogram bins of each direction)"
            if read.same
            else ""
        )
        notes.append(
            SuiteNote(
                "; ".join(part for part in (layout, same) if part) + ": left to iobench",
                "nothing to do",
            )
        )
    if read.renamed:
        notes.append(
            SuiteNote(
                f"name={show_value(read.renamed_from)} in [global] names every job after it "
                f"alike; iobench's workloads need names of their own, so {_listed(read.renamed)} "
                "are named after their sections",
                "nothing to do; or give each job its own name=",
            )
        )
    notes += _left_out_notes(read)
    if read.units:
        notes.append(
            SuiteNote(
                f"{_listed(read.units)}: fio reads KiB, MiB, GiB ... as powers of 1000 and k, "
                "m, g as powers of 1024 (kb_base=1000 swaps them), and so does iobench here",
                "nothing to do if that is what you meant; else write 4k (4096 bytes) or "
                "4000 in the job file",
            )
        )
    default_runtime = BUILTIN_DEFAULTS["runtime"]
    default_size = BUILTIN_DEFAULTS["size"]
    assert isinstance(default_runtime, float) and isinstance(default_size, int)
    if unbounded["runtime"]:
        notes.append(
            SuiteNote(
                f"{_listed(unbounded['runtime'])} set no runtime, which fio reads as no time "
                f"limit; iobench stops each after {default_runtime:g}s at the latest",
                "set runtime= in the job file, or give --runtime",
                about="runtime",
            )
        )
    if unbounded["size"]:
        notes.append(
            SuiteNote(
                f"{_listed(unbounded['size'])} set no size: fio would use the whole file or "
                f"device; iobench uses a test area of {format_size_short(default_size)}",
                "set size= in the job file, or give --size",
                about="size",
            )
        )
    return tuple(notes)
