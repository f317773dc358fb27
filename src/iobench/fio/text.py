"""Read fio's normal (human-readable) output, fio 2.x and 3.x, into the model.

What a user pasted into an article or a ticket: fio's job header lines, its result block
per job (``name: (groupid=0, jobs=1): err= 0: ...``), the group summaries and ``Disk
stats`` -- often with a shell prompt, the fio command line and ``cat job.fio`` around them,
and sometimes several fio runs one after another (each one a *session* here), or one run's
report printed again and again by ``--status-interval``.

:func:`normal_reports` gives every report of the text, each as the same
:class:`~iobench.model.FioOutput` the JSON parser gives (``output_format="normal"``) and a
report dict in the JSON's shape (``global options``, and per job ``jobname``, ``groupid``,
``job options``), so the importer reads both alike, with what tells which fio run printed
it: its session and its jobs' pids (iobench.fio.reports). Units are read as fio prints
them:

- fio 2.x: ``io=23160MB``, ``bw=23715KB/s`` are powers of 1024; ``iops=5928`` is fio's
  whole number; latencies in µs (``latency_unit="us"``).
- fio 3.x: ``BW=1187MiB/s (1245MB/s)``: the IEC figure is taken; ``IOPS=304k`` is rounded,
  so IOPS are fio's own ``1000 * total_ios / runtime`` from the exact ``issued rwts`` count
  when it agrees with the printed figure; latencies in the unit of each line's header
  (``clat (nsec)``), ``min``/``max`` with fio's ``k``/``M`` (powers of 1000).
- percentiles are the values fio printed (rounded up to the unit of their table).

What text does not hold -- histogram bins, exact byte counts, each job's own runtime -- is
missing, never invented. Work is bounded: lines longer than :data:`MAX_LINE_CHARS` are not
fio's and are skipped; every pattern is anchored and free of nested repetition.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from iobench.errors import UserError
from iobench.fio import textparams
from iobench.fio.parse import ALL_CLIENTS, EPOCH_MAX_S, NUMBER_MAX
from iobench.fio.reports import Report, only_run
from iobench.model import (
    DIRECTIONS,
    DirectionResult,
    DiskUtil,
    FioOutput,
    JobResult,
    LatencyStats,
)
from iobench.units import shown

MAX_LINE_CHARS = 4096
MAX_JOBS = 100_000
MAX_COMMANDS = 1000
OPTIONS_FROM_KEY = "(iobench) options from"  # where the job's options were read
# True when the job's options are all it was given (textparams.Options.complete)
OPTIONS_COMPLETE_KEY = "(iobench) options complete"

_HINT_BROKEN = (
    "the text looks like fio's normal output but this line is not as fio writes it; "
    "import the output as fio wrote it (or, better, fio's --output-format=json)"
)

_HOST_PREFIX = re.compile(r"^<([^<>\s]{1,255})> ?")
_VERSION = re.compile(r"^\s*fio-(\d+\.\d+[\w.\-+]{0,40})\s*$")
_HELLO = re.compile(r"^hostname=([^,\s]{1,255}), be=\d+, .{0,80}fio=fio-([\w.\-+]{1,40})")
_RESULT_HEAD = re.compile(
    r"^\(groupid=(\d{1,9}), jobs=(\d{1,9})\): err=\s*(\d{1,9})(.{0,400}?): pid=(\d{1,10})(.*)$"
)
_DIR_3 = re.compile(
    r"^\s*(read|write|trim|mixed)\s?: IOPS=([0-9.]{1,24}[kMGTPE]?), "
    r"BW=([0-9.]{1,24})([KMGTPE]i|[kKMGTPE])?(B|bit)?(?:/s)? \(([^()]{0,40})\)"
    r"\(([0-9.]{1,24})([KMGTPE]i?|k)?B/(\d{1,15})msec\)"
)
_DIR_2 = re.compile(
    r"^\s*(read|write|trim|mixed)\s?: io=([0-9.]{1,24})([KMGTP])?B, "
    r"bw=([0-9.]{1,24})([KMGTP])?B/s, iops=([0-9.]{1,24}[KMGTP]?), runt=\s*(\d{1,15})msec"
)
_DIR_START = re.compile(r"^\s*(read|write|trim|mixed)\s?: (IOPS=|io=)")
_LAT = re.compile(
    r"^\s*(slat|clat|lat) \((\w{1,8})\): min=\s*([0-9.]{1,24}[kKMGTP]?), "
    r"max=\s*([0-9.]{1,24}[kKMGTP]?), avg=\s*([0-9.]{1,24}), stdev=\s*([0-9.]{1,24})\s*$"
)
_ALT_RATE = re.compile(r"^([0-9.]{1,24})([KMGTPE]i)(B|bit)?/s$")
_LAT_START = re.compile(r"^\s*(slat|clat|lat) \(\w{1,8}\): min=")
_PCT_HEAD = re.compile(r"^\s*(slat|clat|lat|sync) percentiles \((\w{1,8})\):\s*$")
_PCT_ENTRY = re.compile(r"([0-9]{1,3}\.[0-9]{1,6})th=\[\s*([0-9]{1,20})\]")
_CPU = re.compile(r"^\s*cpu\s*: usr=([0-9.]{1,24})%, sys=([0-9.]{1,24})%")
_ISSUED_3 = re.compile(r"^\s*issued rwts?: total=(\d{1,20}),(\d{1,20}),(\d{1,20})")
_ISSUED_2 = re.compile(r"^\s*issued\s*: total=r=(\d{1,20})/w=(\d{1,20})/d=(\d{1,20})")
_DESCRIPTION = re.compile(r"^\s*Description\s*: \[(.{0,4000})\]\s*$")
# fio 2.2+ prints it under every job: depth= is the job's iodepth (its latency_depth).
_LATENCY_DEPTH = re.compile(r"^\s*latency\s*: target=\d{1,20}, .{0,80}depth=(\d{1,9})\s*$")
# What may stand between a fio command line and the output it made in a paste: a code
# fence (```, ~~~, with a language), a shell prompt alone, an HTML <pre>, a label of at
# most three words such as "Output:" (not prose, which may quote a command for another
# output).
_BETWEEN = re.compile(
    r"^\s*(?:`{3,}[\w+-]{0,20}|~{3,}[\w+-]{0,20}|\S{0,64}[$#%>]|\[[^\[\]]{1,64}\][$#]|</?pre>|</?code>"
    r"|(?:[*_]{0,2}[^\W\d][\w-]{0,20}(?: [\w-]{1,20}){0,2}:[*_]{0,2}))\s*$"
)
_RUN_STATUS = re.compile(r"^\s*Run status group (\d{1,9}) \(all jobs\):")
_DISK = re.compile(
    r"^\s*([^\s:]{1,255}): ios=(\d{1,20})/(\d{1,20}), (?:sectors=\d{1,20}/\d{1,20}, )?"
    r"merge=(\d{1,20})/(\d{1,20}), "
    r"ticks=\d{1,20}/\d{1,20}, in_queue=(\d{1,20}), util=([0-9.]{1,24})%"
)
# Text copied from a web page or a word processor has other spaces than fio's.
_PASTED_SPACES = str.maketrans(
    {"\u00a0": " ", "\u2007": " ", "\u2009": " ", "\u202f": " ", "\t": " ", "\u200b": None}
)
_SPACE_COMMA = re.compile(r" +,")
_LAT_UNITS_NS = {"nsec": 1, "usec": 1000, "msec": 1_000_000}
_DECIMAL = {"": 1, "k": 1000, "K": 1000, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
_DECIMAL["E"] = 10**18
_BINARY = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
_BINARY["E"] = 1024**6


def looks_like_normal(text: str) -> bool:
    """True when the text holds a result line of fio's normal output
    (``NAME: (groupid=0, jobs=1): err= 0: ...``)."""
    at = text.find("(groupid=")
    while at >= 0:
        line_end = text.find("\n", at, at + 600)
        line = text[at : at + 600 if line_end < 0 else line_end]
        if "jobs=" in line and "err=" in line:
            return True
        at = text.find("(groupid=", at + 1)
    return False


# -- what is read -------------------------------------------------------------------------


@dataclass
class _Latency:
    unit_ns: int
    low: float
    high: float
    mean: float
    stdev: float
    percentiles: list[tuple[float, float]] = field(default_factory=list)


@dataclass
class _Direction:
    io_bytes: int
    bw_bytes: float
    iops: float
    runtime_ms: int
    fio2: bool  # fio 2.x's layout: "read : io=..., bw=..., iops=..., runt=..."
    io_bytes_step: int = 1  # the bytes of io's last printed digit ("479MiB": 1 MiB)
    latency: dict[str, _Latency] = field(default_factory=dict)


@dataclass
class _Block:
    """One job's result block."""

    line: int
    name: str
    groupid: int
    members: int  # jobs=N
    error: int
    pid: int
    host: str | None
    time: float | None
    client: int = 0  # client mode: which server's report it is in (see _servers)
    directions: dict[str, _Direction] = field(default_factory=dict)
    issued: tuple[int, int, int] | None = None
    usr: float | None = None
    sys: float | None = None
    description: str | None = None  # its Description line
    depth: int | None = None  # the depth= of its latency line: its iodepth


@dataclass
class _Part:
    """One report fio printed: result blocks, then the group summaries and disk lines.
    With --status-interval fio prints a run's report again and again; in client mode each
    server's report is a part of its own (merged into one by :func:`_servers`)."""

    line: int  # its first result line
    blocks: list[_Block] = field(default_factory=list)
    disks: list[DiskUtil] = field(default_factory=list)
    # Counted once when the text is read (:func:`_settle`), not again for every block.
    fio2: bool = False
    clients: int = 0  # servers that reported, beside "All clients"
    blocks_of: Counter[tuple[str, int, int]] = field(default_factory=Counter)

    @property
    def pids(self) -> tuple[tuple[str, int, int], ...]:
        return tuple((b.name, b.groupid, b.pid) for b in self.blocks)


@dataclass
class _Session:
    """One fio run in the text: its version, command line, job file and header lines, and
    the reports it printed."""

    index: int
    line: int  # where the text shows it starting (its command line, header lines ...)
    version: str | None = None
    command: textparams.CommandLine | None = None
    job_file: dict[str, textparams.Options] | None = None
    headers: dict[tuple[str, int], tuple[dict[str, str], bool]] = field(default_factory=dict)
    parts: list[_Part] = field(default_factory=list)
    client_mode: bool = False
    hosts: list[str] = field(default_factory=list)
    sections_of: Counter[int] = field(default_factory=Counter)  # job headers by group


def _settle(session: _Session, part: _Part) -> None:
    """What every block of a report needs to know of the others, counted once."""
    if session.version is not None:
        part.fio2 = session.version.startswith(("1.", "2."))
    else:  # fio 2.x's layout (``read : io=..., bw=..., iops=...``)
        part.fio2 = any(d.fio2 for b in part.blocks for d in b.directions.values())
    part.clients = len({b.client for b in part.blocks if b.name != ALL_CLIENTS})
    part.blocks_of = Counter((b.name, b.groupid, b.client) for b in part.blocks)
    session.sections_of = Counter(group for _, group in session.headers)


def _fail(source: str, lineno: int, what: str) -> UserError:
    return UserError(f"{source}:{lineno}: {what}", _HINT_BROKEN)


class _TextReader:
    """Reads the text line by line; knows the file for messages."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sessions: list[_Session] = [_Session(0, 1)]
        self.block: _Block | None = None
        self.direction: _Direction | None = None
        self.percentiles: _Latency | None = None  # the table being read, if any
        self.in_percentiles = False
        self.in_disks = False
        self.after_summary = False  # a group summary ended the report being read
        self.last_header: tuple[str, int] | None = None
        self.ini_lines: list[str] | None = None
        self.ini_start = 0  # the line the job file shown starts on
        self.jobs = 0
        # A fio command line counts only when fio's output follows it at once: a command
        # quoted elsewhere in an article did not make the output below it.
        self.command_line: int | None = None
        self.current = ""  # the line being read, for messages
        self.line_command: textparams.CommandLine | None = None  # the fio command on it
        self.commands = 0
        self.continued: str | None = None  # a fio command line continued with " \\"

    @property
    def session(self) -> _Session:
        return self.sessions[-1]

    def fail(self, lineno: int, what: str) -> UserError:
        return _fail(self.source, lineno, f"{what}: {shown(self.current.strip(), 100)}")

    def new_session(self, lineno: int) -> None:
        if self.session.parts:
            self.sessions.append(_Session(len(self.sessions), lineno))
            self.after_summary = False
        self.block = self.direction = None

    def command(self, raw: str) -> textparams.CommandLine | None:
        """The fio command line on this line; none after MAX_COMMANDS of them (no paste
        holds that many: reading each costs a shell-quoting parse)."""
        if self.commands >= MAX_COMMANDS:
            return None
        command = textparams.fio_command(raw)
        if command is not None:
            self.commands += 1
        return command

    # -- numbers -----------------------------------------------------------------------

    def number(self, lineno: int, text: str, what: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise self.fail(lineno, f"{what} {text[:30]!r} is not a number") from None
        if not math.isfinite(value) or value > NUMBER_MAX:
            raise self.fail(lineno, f"{what} {text[:30]} is more than fio counts or measures")
        return value

    def scaled(self, lineno: int, text: str, what: str, table: dict[str, int]) -> float:
        """A number fio printed with num2str: digits and a unit letter (``63.2k``)."""
        digits = text.rstrip("kKMGTPE")
        unit = text[len(digits) :]
        value = self.number(lineno, digits, what) * table.get(unit, 0)
        if value > NUMBER_MAX or (unit and unit not in table):
            raise self.fail(lineno, f"{what} {text[:30]} is more than fio counts or measures")
        return value

    # -- lines -------------------------------------------------------------------------

    def read(self, lines: list[str]) -> None:
        for lineno, raw in enumerate(lines, start=1):
            if len(raw) > MAX_LINE_CHARS:
                self.end_tables()
                continue  # no line of fio's normal output is that long
            self.line(lineno, raw.rstrip("\r\n"))

    def end_tables(self) -> None:
        self.in_percentiles = False
        self.percentiles = None

    def line(self, lineno: int, raw: str) -> None:
        raw = raw.translate(_PASTED_SPACES)  # a web page's no-break spaces, tabs
        self.current = raw
        if " ," in raw:  # fio 2.0 wrote "iops=170 , runt=..."
            raw = _SPACE_COMMA.sub(",", raw)
        host = None
        m = _HOST_PREFIX.match(raw)
        # fio's client prefixes a server's lines with <host>; a pasted <pre> is not one.
        if m and (self.session.client_mode or _starts_output(raw[m.end() :])):
            host, raw = m.group(1), raw[m.end() :]
            self.session.client_mode = True
        if self.continues(raw):
            return
        if self.continued is not None:
            raw, self.continued = f"{self.continued} {raw.strip()}", None
        self.line_command = self.command(raw)
        if self.command_line is not None and raw.strip() and not _BETWEEN.match(raw):
            if not (_starts_output(raw) or self.line_command is not None):
                self.session.command = None
            self.command_line = None
        if self.ini_lines is not None:
            if textparams.ini_line(raw) and self.line_command is None:
                self.ini_lines.append(raw)
                return
            self.end_job_file()
        if self.in_percentiles:
            if raw.lstrip().startswith("|"):
                self.percentile_line(lineno, raw)
                return
            self.end_tables()
        if self.in_disks:
            d = _DISK.match(raw)
            if d:
                self.disk(lineno, d)
                return
            self.in_disks = False
        self.statement(lineno, raw, host)

    def continues(self, raw: str) -> bool:
        """A fio command line that goes on with `` \\`` at its end (as READMEs show long
        ones): kept, to be read with the lines that continue it."""
        if not raw.endswith("\\"):
            return False
        if self.continued is not None:
            self.continued = f"{self.continued} {raw[:-1].strip()}"
        elif textparams.fio_command(raw[:-1]) is not None:
            self.continued = raw[:-1].rstrip()
        else:
            return False
        if len(self.continued) > textparams.MAX_COMMAND_CHARS:
            self.continued = None  # not a command line anyone typed
        return True

    def statement(self, lineno: int, raw: str, host: str | None) -> None:
        """A line outside a table: what starts a session, a block or a part of one."""
        if self.session_line(lineno, raw):
            return
        head_at = raw.find(": (groupid=")
        if head_at > 0:
            self.result_head(lineno, raw[:head_at], raw[head_at + 2 :], host)
            return
        if raw.find(": (g=") > 0:
            self.job_header(lineno, raw)
            return
        if raw.strip() == "..." and self.last_header is not None:
            opts, _ = self.session.headers[self.last_header]
            self.session.headers[self.last_header] = (opts, True)
            return
        if self.block is not None:
            self.block_line(lineno, raw)
        if _RUN_STATUS.match(raw):
            self.after_summary = True
            self.block = self.direction = None
        elif raw.startswith("Disk stats (read/write):"):
            self.in_disks = True
            self.after_summary = True
            self.block = self.direction = None

    def session_line(self, lineno: int, raw: str) -> bool:
        """A line that says which fio run follows: its command line, version, a server's
        hello, a job file shown."""
        command = self.line_command
        if command is not None:
            self.new_session(lineno)
            self.session.command = command
            self.command_line = lineno
            return True
        version = _VERSION.match(raw)
        if version:
            self.new_session(lineno)
            self.session.version = version.group(1)
            return True
        hello = _HELLO.match(raw)
        if hello:
            self.new_session(lineno)
            self.session.client_mode = True
            self.session.hosts.append(hello.group(1))
            self.session.version = hello.group(2)  # what follows fio=fio-
            return True
        if textparams.is_section_line(raw) and self.block is None:
            self.ini_lines = [raw]
            self.ini_start = lineno
            return True
        return False

    def end_job_file(self) -> None:
        lines, self.ini_lines = self.ini_lines or [], None
        jobs = textparams.job_file(lines)
        if jobs:
            self.new_session(self.ini_start)
            self.session.job_file = jobs

    def job_header(self, lineno: int, raw: str) -> None:
        at = raw.find(": (g=")
        name, rest = raw[:at], raw[at + 5 :]
        close = rest.find("): ")
        if close < 0 or not rest[:close].isdigit() or len(rest[:close]) > 9:
            return  # not fio's header line
        self.new_session(lineno)
        key = (name.strip(), int(rest[:close]))
        self.session.headers.setdefault(key, (textparams.header_options(rest[close + 3 :]), False))
        self.last_header = key

    def result_head(self, lineno: int, name: str, rest: str, host: str | None) -> None:
        m = _RESULT_HEAD.match(rest)
        if not m:
            raise self.fail(lineno, "a job's result line is not as fio writes it")
        self.jobs += 1
        if self.jobs > MAX_JOBS:
            raise self.fail(lineno, f"more than {MAX_JOBS} job results: not a fio output")
        if self.after_summary or not self.session.parts:
            # A report after another's summary: with --status-interval the run's report
            # again, in client mode the next server's, or another run's pasted alone.
            self.session.parts.append(_Part(lineno))
        self.after_summary = False
        name = name.strip()
        self.block = _Block(
            line=lineno,
            name=name,
            groupid=int(m.group(1)),
            members=int(m.group(2)),
            error=int(m.group(3)),
            pid=int(m.group(5)),
            host=host,
            time=_report_time(m.group(6)),
        )
        if name == ALL_CLIENTS:
            self.session.client_mode = True
        self.session.parts[-1].blocks.append(self.block)
        self.direction = None
        self.last_header = None

    def block_line(self, lineno: int, raw: str) -> None:
        assert self.block is not None
        if _DIR_START.match(raw):
            self.direction_line(lineno, raw)
            return
        if _LAT_START.match(raw):
            self.latency_line(lineno, raw)
            return
        pct = _PCT_HEAD.match(raw)
        if pct:
            self.percentile_head(lineno, pct.group(1), pct.group(2))
            return
        if raw.strip().startswith("fsync/fdatasync/sync_file_range:"):
            self.direction = None
            return
        cpu = _CPU.match(raw)
        if cpu:
            self.block.usr = self.number(lineno, cpu.group(1), "usr")
            self.block.sys = self.number(lineno, cpu.group(2), "sys")
            return
        described = _DESCRIPTION.match(raw)
        if described and not self.block.directions:
            self.block.description = described.group(1)
            return
        depth = _LATENCY_DEPTH.match(raw)
        if depth:
            self.block.depth = int(depth.group(1))
            return
        issued = _ISSUED_3.match(raw) or _ISSUED_2.match(raw)
        if issued:
            a, b, c = (int(issued.group(i)) for i in (1, 2, 3))
            if max(a, b, c) > NUMBER_MAX:
                raise self.fail(lineno, "an issued count is more than fio counts")
            self.block.issued = (a, b, c)

    def direction_line(self, lineno: int, raw: str) -> None:
        assert self.block is not None
        start = _DIR_START.match(raw)
        if start is not None and start.group(1) == "mixed" and self.block.directions:
            # unified_rw_reporting=both: read and write are there; their sum is not kept
            # (nor its latency lines and percentiles, read past with no direction).
            self.direction = None
            return
        m3, m2 = _DIR_3.match(raw), _DIR_2.match(raw)
        if m3:
            ddir, d = m3.group(1), self.direction_3(lineno, m3)
        elif m2:
            ddir, d = m2.group(1), self.direction_2(lineno, m2)
        else:
            raise self.fail(lineno, "a job's IO line (read/write/trim) is not as fio writes it")
        if ddir == "mixed":
            raise self.fail(
                lineno,
                "'mixed' figures (unified_rw_reporting) cannot be imported: they are not "
                "one direction's",
            )
        if ddir in self.block.directions:
            raise self.fail(lineno, f"a second {ddir} line in one job's result")
        self.block.directions[ddir] = d
        self.direction = d

    def direction_3(self, lineno: int, m: re.Match[str]) -> _Direction:
        iops_text = m.group(2)
        bw = self.rate(lineno, m.group(3), m.group(4), m.group(5), m.group(6))
        io_unit = m.group(8) or ""
        table = _BINARY if io_unit.endswith("i") else _DECIMAL
        io = self.number(lineno, m.group(7), "io") * table.get(io_unit[:1], 0)
        if io > NUMBER_MAX or (io_unit and io_unit[:1] not in table):
            raise self.fail(lineno, f"io {m.group(7)}{io_unit}B is not an amount fio reports")
        return _Direction(
            io_bytes=round(io),
            bw_bytes=bw,
            iops=self.scaled(lineno, iops_text, "IOPS", _DECIMAL),
            runtime_ms=int(m.group(9)),
            fio2=False,
            io_bytes_step=_last_digit(m.group(7), table.get(io_unit[:1], 1)),
        )

    def rate(self, lineno: int, number: str, unit: str | None, kind: str | None, alt: str) -> float:
        """fio 3.x's BW: the IEC figure (``MiB/s``), or the one in parentheses when fio
        printed SI first (kb_base=1000); bits when unit_base=1 (fio 3.33 writes
        ``BW=5677Mibit/s (5953Mbit/s)``; unit_base=8 is bytes)."""
        unit = unit or ""
        if unit and not unit.endswith("i"):
            alt_m = _ALT_RATE.match(alt)
            if alt_m:
                number, unit, kind = alt_m.group(1), alt_m.group(2), alt_m.group(3)
        table = _BINARY if unit.endswith("i") else _DECIMAL
        value = self.number(lineno, number, "BW") * table[unit[:1]]
        if kind == "bit":
            value /= 8
        if value > NUMBER_MAX:
            raise self.fail(lineno, f"BW {number}{unit} is more than fio measures")
        return value

    def units_2(self) -> dict[str, int]:
        """What fio 2.x's KB, MB ... are: powers of kb_base (1024 unless the job's command
        line or job file sets 1000); its num2str has no T, so its P is the fourth power."""
        found = _shown(self.session, self.block.name) if self.block is not None else None
        base = 1000 if found is not None and found.effective.get("kb_base") == "1000" else 1024
        return {"": 1, "K": base, "M": base**2, "G": base**3, "P": base**4, "T": base**4}

    def direction_2(self, lineno: int, m: re.Match[str]) -> _Direction:
        units = self.units_2()
        io = self.number(lineno, m.group(2), "io") * units[m.group(3) or ""]
        bw = self.number(lineno, m.group(4), "bw") * units[m.group(5) or ""]
        if io > NUMBER_MAX or bw > NUMBER_MAX:
            raise self.fail(lineno, "io or bw is more than fio counts or measures")
        iops_text = m.group(6)
        return _Direction(
            io_bytes=round(io),
            bw_bytes=bw,
            iops=self.scaled(lineno, iops_text, "iops", _DECIMAL),
            runtime_ms=int(m.group(7)),
            fio2=True,
            io_bytes_step=_last_digit(m.group(2), units[m.group(3) or ""]),
        )

    def latency_line(self, lineno: int, raw: str) -> None:
        m = _LAT.match(raw)
        if not m:
            raise self.fail(lineno, "a latency line (slat/clat/lat) is not as fio writes it")
        if self.direction is None:
            return  # the fsync section's, or before any direction line
        unit_ns = _LAT_UNITS_NS.get(m.group(2))
        if unit_ns is None:
            raise self.fail(lineno, f"latency unit {m.group(2)!r} is not nsec, usec or msec")
        low = self.scaled(lineno, m.group(3), "min", _DECIMAL)
        high = self.scaled(lineno, m.group(4), "max", _DECIMAL)
        mean = self.number(lineno, m.group(5), "avg")
        stdev = self.number(lineno, m.group(6), "stdev")
        if max(low, high, mean, stdev) * unit_ns > NUMBER_MAX:
            raise self.fail(lineno, "a latency is more than fio measures")
        self.direction.latency[m.group(1)] = _Latency(unit_ns, low, high, mean, stdev)

    def percentile_head(self, lineno: int, kind: str, unit: str) -> None:
        self.in_percentiles = True
        self.percentiles = None
        if kind == "sync" or self.direction is None:
            return  # read past the table
        unit_ns = _LAT_UNITS_NS.get(unit)
        if unit_ns is None:
            raise self.fail(lineno, f"percentile unit {unit!r} is not nsec, usec or msec")
        stats = self.direction.latency.get(kind)
        if stats is None:
            raise self.fail(lineno, f"{kind} percentiles without the {kind} line before them")
        self.percentiles = _Latency(unit_ns, 0, 0, 0, 0)
        stats.percentiles = self.percentiles.percentiles

    def percentile_line(self, lineno: int, raw: str) -> None:
        if self.percentiles is None:
            return
        entries = _PCT_ENTRY.findall(raw)
        if not entries or raw.count("th=[") != len(entries):
            raise self.fail(lineno, "a percentile line is not as fio writes it")
        for p, value in entries:
            q = float(p)
            v = int(value) * self.percentiles.unit_ns
            if not 0 < q <= 100 or v > NUMBER_MAX:
                raise self.fail(lineno, f"percentile {p}th=[{value}] is not one fio reports")
            self.percentiles.percentiles.append((q, float(v)))

    def disk(self, lineno: int, m: re.Match[str]) -> None:
        values = [int(m.group(i)) for i in range(2, 7)]
        util = self.number(lineno, m.group(7), "util")
        if max(values) > NUMBER_MAX:
            raise self.fail(lineno, "a disk count is more than fio counts")
        r, w, rm, wm, q = values
        if self.session.parts:  # disk lines follow a report's summary
            self.session.parts[-1].disks.append(
                DiskUtil(m.group(1), r, w, rm, wm, in_queue_ms=q, util_pct=util)
            )


def _starts_output(line: str) -> bool:
    """True for a line fio prints first: a job header, its version, a server's hello,
    a result line, or its progress."""
    return (
        ": (g=" in line
        or "(groupid=" in line
        or _VERSION.match(line) is not None
        or _HELLO.match(line) is not None
        or line.lstrip().startswith(("Starting ", "Jobs: ", "fio: "))
    )


def _report_time(rest: str) -> float | None:
    """The time at the end of a result line (``: Mon Nov 23 17:36:05 2026``): when fio
    printed the report, in the machine's local time, whose zone the text does not give;
    read as UTC. None when it is not a date."""
    text = " ".join(rest.removeprefix(":").split())
    try:
        when = datetime.strptime(text, "%a %b %d %H:%M:%S %Y").replace(tzinfo=UTC)
    except ValueError:
        return None
    seconds = when.timestamp()
    return seconds if 0 < seconds <= EPOCH_MAX_S else None


# -- what the text becomes ------------------------------------------------------------------


def parse_normal_output(text: str, source: str) -> tuple[FioOutput, dict[str, Any]]:
    """The one fio run of a text (its last report, when --status-interval printed it
    again and again): the model and a report dict in the JSON's shape. UserError as
    :func:`normal_reports`; FioOutputError when the text holds several runs."""
    report = only_run(normal_reports(text, source), source)
    return report.output, report.raw


def normal_reports(text: str, source: str) -> list[Report]:
    """fio's normal output (with anything around it) -> every report it holds, in order,
    each as the model and a report dict in the JSON's shape, with what tells its run
    (iobench.fio.reports). UserError naming the file and line when text that looks like
    fio's is not as fio writes it, or holds no job result."""
    reader = _TextReader(source)
    reader.read(text.splitlines())
    if reader.ini_lines is not None:
        reader.end_job_file()
    sessions = [s for s in reader.sessions if s.parts]
    if not sessions:
        raise UserError(
            f"{source} looks like fio's normal output but holds no job result "
            "('NAME: (groupid=N, jobs=N): err=...' and the lines under it)",
            "import the whole output fio printed",
        )
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    reports = []
    for session in sessions:
        parts = [_servers(source, session)] if session.client_mode else session.parts
        for i, part in enumerate(parts):
            first = session.line if i == 0 else part.line
            output, raw = _read_part(source, session, part)
            reports.append(
                Report(
                    start=starts[min(first, len(starts)) - 1],
                    line=part.line,
                    output=output,
                    raw=raw,
                    session=session.index,
                    pids=part.pids,
                )
            )
    return reports


def _read_part(source: str, session: _Session, part: _Part) -> tuple[FioOutput, dict[str, Any]]:
    """One report: the model and the report dict in the JSON's shape."""
    _settle(session, part)
    jobs: list[JobResult] = []
    entries: list[dict[str, Any]] = []
    for block in part.blocks:
        _check_complete(source, block)
        jobs.append(_job(session, part, block))
        entries.append(_entry(session, part, block))
    times = [b.time for b in part.blocks if b.time is not None]
    output = FioOutput(
        fio_version=session.version,
        timestamp=int(min(times)) if times else None,
        jobs=tuple(jobs),
        disk_util=tuple(part.disks),
        client_mode=session.client_mode,
        latency_unit="us" if part.fio2 else "ns",
        output_format="normal",
    )
    return output, _report(entries, session.client_mode)


def _processes(part: _Part) -> list[tuple[str | None, str, int, int]]:
    """What tells a server's report: each block's host (when fio prefixed it), job, group
    and pid."""
    return [(b.host, b.name, b.groupid, b.pid) for b in part.blocks]


def _servers(source: str, session: _Session) -> _Part:
    """A client-mode run's reports as one: each server's report is a part, in the order
    fio printed them; with --status-interval sent to the servers, a server's report comes
    again (the same jobs and pids) and its last one is kept. Which server a report is from
    the text does not say: the parts are numbered (``client``) in their order."""
    reports = [p for p in session.parts if p.blocks[0].name != ALL_CLIENTS]
    # A report repeated with the same pids is the server's again, unless the text shows
    # (by their hello lines) as many servers as there are reports.
    repeats = not session.hosts or len(session.hosts) < len(reports)
    servers: list[_Part] = []
    for part in reports:
        if repeats and servers and _processes(part) == _processes(servers[-1]):
            servers[-1] = part
        else:
            servers.append(part)
    if repeats and session.hosts and len(servers) < len(set(session.hosts)):
        raise _fail(
            source,
            reports[0].line,
            f"the text shows {len(set(session.hosts))} fio servers, but the reports that "
            f"follow come from {len(servers)} sets of processes: which server sent which "
            "report cannot be told",
        )
    merged = _Part(servers[0].line if servers else session.parts[0].line)
    for client, part in enumerate(servers):
        for block in part.blocks:
            block.client = client
        merged.blocks += part.blocks
        merged.disks += part.disks
    # fio's 'All clients' sum: the last one printed (it is not stored as a result).
    totals = [p for p in session.parts if p.blocks[0].name == ALL_CLIENTS]
    if totals:
        for block in totals[-1].blocks:
            block.client = len(servers)
        merged.blocks += totals[-1].blocks
    return merged


def _check_complete(source: str, block: _Block) -> None:
    """fio prints a cpu line under every job's figures: a block without one was cut."""
    if block.error == 0 and block.usr is None:
        what = "its IO figures and " if not block.directions else ""
        raise _fail(
            source,
            block.line,
            f"the result of job {block.name[:60]!r} is cut short: {what}the cpu line fio "
            "prints under every job are missing",
        )


def _host(session: _Session, part: _Part, block: _Block) -> str | None:
    if not session.client_mode or block.name == ALL_CLIENTS:
        return None
    if block.host is not None:
        return block.host
    if part.clients == 1 and len(set(session.hosts)) == 1:
        return session.hosts[0]
    return f"client {block.client + 1}"


def _job(session: _Session, part: _Part, block: _Block) -> JobResult:
    directions = {ddir: _direction(part, block, ddir, i) for i, ddir in enumerate(DIRECTIONS)}
    return JobResult(
        jobname=block.name,
        groupid=block.groupid,
        error=block.error if block.error <= 0xFFFF else 0xFFFF,
        read=directions["read"],
        write=directions["write"],
        trim=directions["trim"],
        usr_cpu_pct=block.usr,
        sys_cpu_pct=block.sys,
        job_runtime_ms=None,
        hostname=_host(session, part, block),
        port=None,
    )


def _direction(part: _Part, block: _Block, ddir: str, i: int) -> DirectionResult | None:
    d = block.directions.get(ddir)
    if d is None:
        return None
    total = block.issued[i] if block.issued is not None else round(d.iops * d.runtime_ms / 1000)
    if total == 0 and d.io_bytes == 0:
        return None
    iops = d.iops
    if not part.fio2 and block.issued is not None and d.runtime_ms > 0:
        exact = total * 1000 / d.runtime_ms  # fio's own formula, from exact counts
        if abs(exact - d.iops) <= _step(d.iops):
            iops = exact
    n = total
    return DirectionResult(
        io_bytes=d.io_bytes,
        bw_bytes=d.bw_bytes,
        iops=iops,
        total_ios=total,
        runtime_ms=d.runtime_ms,
        clat=_stats(d.latency.get("clat"), n),
        lat=_stats(d.latency.get("lat"), n),
        slat=_stats(d.latency.get("slat"), n),
        io_bytes_step=d.io_bytes_step,
    )


def _last_digit(number: str, unit: int) -> int:
    """The bytes one unit of a printed amount's last digit stands for: ``479`` MiB is
    1 MiB, ``4.5`` GiB a tenth of a GiB."""
    decimals = len(number.partition(".")[2])
    return max(1, int(unit / 10.0**decimals + 0.5))


def _step(printed: float) -> float:
    """The resolution of a figure fio printed with 4 significant digits at most."""
    if printed <= 0:
        return 1.0
    return max(1.0, 10.0 ** (math.floor(math.log10(printed)) - 2))


def _stats(lat: _Latency | None, n: int) -> LatencyStats | None:
    if lat is None or n == 0:
        return None
    u = lat.unit_ns
    return LatencyStats(
        n=n,
        min_ns=lat.low * u,
        max_ns=lat.high * u,
        mean_ns=lat.mean * u,
        stddev_ns=lat.stdev * u,
        percentiles=tuple(sorted(lat.percentiles)),
    )


# -- the options: command line, job file, header line ---------------------------------------

_HEADER_KEYS: dict[str, tuple[str, ...]] = {
    "rw": ("rw", "readwrite"),
    "bs": ("bs", "blocksize"),
    "ioengine": ("ioengine",),
    "iodepth": ("iodepth",),
}


def _shown(session: _Session, name: str) -> textparams.Options | None:
    """The job's options from the fio command line above the output, else the job file
    shown with it."""
    found = session.command.job(name) if session.command is not None else None
    if found is None and session.job_file is not None:
        found = session.job_file.get(name)
    return found


def _options(session: _Session, part: _Part, block: _Block) -> textparams.Options:
    """The job's options: as shown with the output (command line, job file), else as its
    description states them (iobench's export), filled in with what fio printed of the job
    (its header line, its result lines)."""
    header = session.headers.get((block.name, block.groupid))
    printed = dict(header[0]) if header is not None else {}
    if block.depth is not None:
        printed.setdefault("iodepth", str(block.depth))
    found = _shown(session, block.name) or _described(block, printed)
    if found is None:
        what = "fio's job header line" if header is not None else "fio's result lines"
        found = textparams.Options({}, {}, what, complete=False)
    effective = found.effective
    filled = []
    for key, names in _HEADER_KEYS.items():
        if key in printed and not any(n in effective for n in names):
            found.own[key] = printed[key]
            filled.append(key)
    if "numjobs" not in effective:
        numjobs = _numjobs(session, part, block, header[1] if header is not None else None)
        if numjobs is not None:
            found.own["numjobs"] = numjobs
            filled.append("numjobs")
    if filled and found.complete:
        where = "fio's job header line" if header is not None else "fio's result lines"
        found.where += f" ({', '.join(filled)} from {where})"
    elif filled and header is None:
        found.where = f"fio's result lines ({', '.join(filled)})"
    return found


def _described(block: _Block, printed: dict[str, str]) -> textparams.Options | None:
    """The options iobench's description of the job states, unless what fio printed of
    the job says otherwise (the file was changed after the export)."""
    found = textparams.described(block.description)
    if found is None:
        return None
    for key, value in printed.items():
        if found.own.get(key, value) != value:
            return None
    return found


def _numjobs(session: _Session, part: _Part, block: _Block, clones: bool | None) -> str | None:
    """numjobs as the text shows it: 1 for a header line without ``...`` under it; the
    number of result blocks of the job (or its ``jobs=N`` when it is the group's only
    job and fio reported the group as one) when fio printed ``...``. Without a header line
    (``clones`` None), the same from the result lines: a job section's numjobs clones
    are its blocks, or one block of ``jobs=N`` with group_reporting, which a group of one
    job section (all the text shows of it) prints."""
    same = part.blocks_of[(block.name, block.groupid, block.client)]
    if clones is None:
        if block.members == 1:
            return str(same)
        return str(block.members) if same == 1 else None
    if not clones:
        return "1"
    if same > 1:
        return str(same)
    if session.sections_of[block.groupid] == 1 and block.members > 1:
        return str(block.members)
    return None


def _entry(session: _Session, part: _Part, block: _Block) -> dict[str, Any]:
    options = _options(session, part, block)
    return {
        "jobname": block.name,
        "groupid": block.groupid,
        "options": options,
        OPTIONS_FROM_KEY: options.where,
        OPTIONS_COMPLETE_KEY: options.complete,
        **({"desc": block.description} if block.description is not None else {}),
    }


def _report(entries: list[dict[str, Any]], client_mode: bool) -> dict[str, Any]:
    """The JSON's shape: ``global options`` (what every job shares, when they all share
    it) and each job's own ``job options``."""
    options: list[textparams.Options] = [e.pop("options") for e in entries]
    shared = options[0].shared if options else {}
    common = all(o.shared == shared for o in options)
    for entry, opts in zip(entries, options, strict=True):
        entry["job options"] = dict(opts.own) if common else opts.effective
    key = "client_stats" if client_mode else "jobs"
    return {"global options": dict(shared) if common else {}, key: entries}
