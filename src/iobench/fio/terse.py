"""Read fio's terse output (``--output-format=terse``, ``--minimal``), versions 3, 4 and 5.

A terse line is one job's report as semicolon-separated fields (fio's HOWTO, "Terse
output"; stat.c ``show_thread_status_terse_all``)::

    version;fio-X.Y;jobname;groupid;error;            header (v2 has no fio version)
    READ;WRITE[;TRIM]                                 41 fields each (47 in v5); TRIM in v4, v5
    usr%;sys%;ctx;majf;minf                           CPU
    7 IO depths, 10 microsecond and 12 millisecond latency buckets (percentages)
    [disk;r_ios;w_ios;r_merges;w_merges;r_ticks;w_ticks;in_queue;util%]...  per disk, or none
    [;slaves;...]                                     after a disk with slaves (md, dm)
    [total_err;first_error]                           with continue_on_error
    [description]                                     when the job has one

A direction: io (KiB), bw (KiB/s), IOPS, runtime (ms); slat, clat min/max/mean/stdev
(µs); 20 percentile fields ``P%=µs`` padded with ``0%=0``; lat min/max/mean/stdev (µs);
bw min/max (KiB/s), share of the group %, mean, stdev; v5 adds the number of bw samples
and IOPS min/max/mean/stdev/samples. With ``unified_rw_reporting=mixed`` one "mixed"
direction replaces them; with ``=both`` it follows them.

What terse gives less precisely than JSON, and how it is stored:

- fio truncates io to KiB, bw to KiB/s, IOPS to an integer, latency min/max and
  percentiles to whole µs; means and stdevs have six decimals of µs. All are stored in
  bytes, bytes/s and ns (``latency_unit="us"``: microsecond resolution).
- There is no count of IOs: ``total_ios`` (and each latency's N) is derived from IOPS x
  runtime, to within runtime/2000 IOs.
- The percentile fields are clat's, unless the job set ``lat_percentiles=1``: then fio
  (3.33 checked) writes total-latency percentiles there. A terse line does not say which;
  they are taken as lat's when the text shows ``lat_percentiles`` set (a command line, a
  job file, fio's normal output's "lat percentiles" heading or its JSON in the same file).
- No histogram bins, no job options, no timestamp, no per-job runtime.

In client/server mode (``--client``) fio writes each server's disk utilisation on a line
of its own (``;vda;...``) and adds an "All clients" line; the lines name no host, so
every job line of a client run is read as a server's job.

With ``--status-interval`` fio writes every job's cumulative line again at each interval,
and a file may hold the lines of several runs: :func:`terse_reports` splits the lines into
reports, and iobench.fio.reports tells which are one run's (terse lines name no process
and no time: reports of the same jobs cannot be told apart, and are refused).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from iobench.errors import FioOutputError
from iobench.fio import textparams
from iobench.fio.parse import ALL_CLIENTS, NUMBER_MAX
from iobench.fio.reports import Report, only_run
from iobench.model import (
    DIRECTIONS,
    Direction,
    DirectionResult,
    DiskUtil,
    FioOutput,
    JobResult,
    LatencyStats,
)
from iobench.units import shown

VERSIONS = (3, 4, 5)
_HEADER = 5  # version, fio version, jobname, groupid, error
_TAIL = 5 + 7 + 10 + 12  # CPU, IO depths, µs and ms latency buckets
_DISK = 9
_PERCENTILES = 20  # FIO_IO_U_LIST_MAX_LEN
MAX_LINES = 10_000  # job lines in one file; fio runs with more jobs are not terse-imported
MAX_FIELDS = 2_000  # far beyond a line with 64 disks and their slaves
MAX_DESCRIPTION = 4_096
_NO_SHARE = ("-nan%", "nan%")  # fio's share of no IOs (glibc's printf of 0.0 / 0)
MAX_COMMANDS = 1000  # fio command lines read (each costs a shell-quoting parse)

# "3;fio-3.33;" / "3;fio-2.1.10;" / "3;2.0.8;" (some fio 2.0 builds printed no "fio-").
# Numbers are ASCII digits only: Python's \d and int() also take other scripts' digits.
_START = re.compile(r"([0-9]{1,3});(fio-[0-9][^;\s]*|[0-9]+\.[0-9]+[^;\s]*);")
# terse v2: "2;jobname;groupid;error;..." (no fio version)
_START_V2 = re.compile(r"2;[^;]*;[0-9]+;[0-9]+;")
_INT = re.compile(r"[0-9]{1,20}")
_FLOAT = re.compile(r"[0-9]{1,20}(?:\.[0-9]{1,20})?")
_PCT = re.compile(r"([0-9]{1,20}(?:\.[0-9]{1,20})?)%")
_PERCENTILE = re.compile(r"([0-9]{1,3}(?:\.[0-9]{1,20})?)%=([0-9]{1,20})")
_LAT_PERCENTILES = re.compile(
    r"(?im)^[ \t|]*lat percentiles \("
    r"|(?<![a-z_])lat_percentiles\"?\s*[=:]\s*\"?\s*(?:1|true|on|yes)\b"
)

_HINT_CUT = (
    "fio writes every field of a terse line on one line; this one was cut short, joined "
    "with another or edited: import the file fio wrote, or its JSON output "
    "(--output-format=json)"
)


def _candidate(line: str) -> str | None:
    """The line without surrounding blanks if it starts like a terse line, else None.

    ``N;fio-X.Y;`` is enough; a version without ``fio-`` (fio 2.0) and version 2 (no
    version field) need the shape of a whole line too: 40 fields and percentiles.
    """
    line = line.strip()
    m = _START.match(line)
    if m is not None and m.group(2).startswith("fio-"):
        return line
    if (m is not None or _START_V2.match(line)) and line.count(";") >= 40 and "%=" in line:
        return line
    return None


def looks_like_terse(text: str) -> bool:
    """True when ``text`` holds at least one line that starts as fio's terse lines do
    (``3;fio-3.33;job;...``), among any other lines (prompts, messages, JSON)."""
    return any(_candidate(line) is not None for line in text.split("\n"))


def parse_terse_output(text: str, source: str) -> tuple[FioOutput, dict[str, Any]]:
    """The terse lines of ``text`` as one fio run's report (see :func:`terse_reports`): a
    FioOutput (``output_format="terse"``) and a report in the shape of fio's JSON. Raises
    FioOutputError as :func:`terse_reports`, and when the text holds several runs."""
    report = only_run(terse_reports(text, source), source)
    return report.output, report.raw


def terse_reports(text: str, source: str) -> list[Report]:
    """Every report the terse lines of ``text`` hold, in order: a FioOutput
    (``output_format="terse"``) and a report in the shape of fio's JSON (``jobs`` or
    ``client_stats`` with ``jobname``, ``groupid``, ``error``, ``job options`` and
    ``desc``) each.

    A fio command line after terse lines starts another run's lines (a ``session``).
    Within one, a line starts another report when the terse or fio version changes,
    after a client run's 'All clients' line (fio's client writes it last), or, in a
    standalone run's lines, when its group is lower than the line before it (fio
    writes groups in order), when its job (name and group) came before in the report but
    not on the line just before (numjobs clones are adjacent), when the disk fields every
    line of a standalone run carries differ from the line before it, or when it repeats
    the line before it. Which reports are snapshots of one run is for
    iobench.fio.reports to tell. Raises FioOutputError naming ``source`` and the line for
    a line fio cannot have written, a terse version other than 3 to 5, or text without a
    terse line.
    """
    lat_percentiles = _LAT_PERCENTILES.search(text) is not None
    rows: list[_Row] = []
    session = session_start = offset = cut = commands = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        line = _candidate(raw)
        if line is not None:
            if len(rows) >= MAX_LINES:
                raise FioOutputError(
                    f"{source}:{number}: more than {MAX_LINES} terse lines; iobench reads "
                    "at most that many jobs from one file",
                    hint="split the file, or import fio's JSON output",
                )
            first = not rows or rows[-1].session != session
            row = _row(_Line(source, number, []), line, lat_percentiles)
            row.session, row.start = session, session_start if first else offset
            rows.append(row)
            cut = offset + len(raw) + 1
        elif raw.startswith(";") and rows and _disk_line(source, raw.strip(), number, rows[-1]):
            cut = offset + len(raw) + 1
        elif (
            rows
            and rows[-1].session == session
            and commands < MAX_COMMANDS
            and textparams.fio_command(raw) is not None
        ):
            commands += 1
            session, session_start = session + 1, cut  # another fio run's lines follow
        offset += len(raw) + 1
    if not rows:
        raise FioOutputError(
            f"{source} holds no fio terse line (a line such as '3;fio-3.33;jobname;0;0;...')",
            hint="run fio with --output-format=terse (or --minimal), or import its JSON",
        )
    parts = _parts(rows)
    for part in parts:
        _check_client_sum(source, part)
    return [_report(part) for part in parts]


@dataclass
class _Row:
    """One terse line read: its job, its report entry and what places it in a report."""

    number: int
    text: str
    version: tuple[int, str]  # terse version, fio version
    job: JobResult
    entry: dict[str, Any]
    disks: tuple[DiskUtil, ...]  # on the line: a standalone run's
    separate_disks: list[DiskUtil] = field(default_factory=list)  # client mode: after it
    session: int = 0
    start: int = 0  # where its report's part of the text starts, if it starts a report

    @property
    def key(self) -> tuple[str, int]:
        return self.job.jobname, self.job.groupid

    @property
    def client(self) -> bool:
        return bool(self.separate_disks) or self.job.jobname == ALL_CLIENTS


def _row(at: _Line, line: str, lat_percentiles: bool) -> _Row:
    """One terse line (``at``: its place, for messages)."""
    fields_count = line.count(";") + 1
    if fields_count > MAX_FIELDS:
        raise at.fail(
            f"a terse line of {fields_count} fields: far more than fio writes (at most "
            f"{MAX_FIELDS}, even with many disks)"
        )
    at.fields = line.split(";")
    version = int(at.fields[0])
    if version not in VERSIONS:
        raise at.fail(
            f"terse version {version} (the line's first field): iobench reads fio's "
            "terse versions 3, 4 and 5",
            hint="run fio again with --terse-version=3 (or 4, 5), or with "
            "--output-format=json; version 2 has no fio version and lacks fields",
        )
    job, entry, disks = _job(at, version, lat_percentiles=lat_percentiles)
    return _Row(at.number, line, (version, at.fields[1]), job, entry, disks)


def _disk_line(source: str, line: str, number: int, row: _Row) -> bool:
    """A client/server disk utilisation line (``;vda;...;84.30%``), kept with the job
    line before it; other lines starting with ``;`` are not fio's and are left alone."""
    fields = line.split(";")[1:]
    if len(fields) > MAX_FIELDS or len(fields) % _DISK or not fields:
        return False
    at = _Line(source, number, fields, "disk utilisation: ")
    if not all(_looks_like_disk(fields, i) for i in range(0, len(fields), _DISK)):
        return False
    row.separate_disks.extend(_disks(at, 0)[0])
    return True


def _parts(rows: list[_Row]) -> list[list[_Row]]:
    """The rows grouped into reports (see :func:`terse_reports`)."""
    clients = {row.session for row in rows if row.client}
    parts: list[list[_Row]] = []
    for row in rows:
        if not parts or _starts_report(parts[-1], row, client=row.session in clients):
            parts.append([row])
        else:
            parts[-1].append(row)
    return parts


def _starts_report(part: list[_Row], row: _Row, *, client: bool) -> bool:
    before = part[-1]
    if row.session != before.session or row.version != before.version:
        return True
    if before.job.jobname == ALL_CLIENTS:
        return True  # fio's client writes its 'All clients' line last (3.33 checked)
    if client:  # client mode: the lines name no server; every line is a server's job
        return False
    return (
        row.job.groupid < before.job.groupid
        or (row.key != before.key and any(r.key == row.key for r in part))
        or bool(row.disks and before.disks and row.disks != before.disks)
        or (row.text == before.text and _did_io(row.job))
    )


def _check_client_sum(source: str, part: list[_Row]) -> None:
    """A client run's 'All clients' line sums one report per server: when the servers'
    lines hold more (--status-interval sent to the servers repeats each server's report),
    which line is whose cannot be told, and the run is refused."""
    total = next((row for row in part if row.job.jobname == ALL_CLIENTS), None)
    if total is None:
        return
    servers = [row for row in part if row.job.jobname != ALL_CLIENTS]
    for d in DIRECTIONS:
        sums = [_io(total.job, d), sum(_io(r.job, d) for r in servers)]
        if sums[1] > sums[0] + 1024 * len(servers):  # each line's KiB truncated
            raise FioOutputError(
                f"{source}:{part[0].number}: the servers' terse lines of this client run add "
                f"up to more {d} than its 'All clients' line (line {total.number}): they hold "
                "a server's report more than once (fio --status-interval), and terse lines "
                "do not say which server's report is which",
                hint="import fio's JSON or normal output of the run, or the terse output of a "
                "run without --status-interval",
            )


def _io(job: JobResult, ddir: Direction) -> int:
    found = job.direction(ddir)
    return found.io_bytes if found is not None else 0


def _did_io(job: JobResult) -> bool:
    return any(job.direction(d) is not None for d in DIRECTIONS)


def _report(part: list[_Row]) -> Report:
    """The rows of one report as the model and a report in the shape of fio's JSON."""
    client_mode = any(row.client for row in part)
    fio_version = part[0].version[1]
    line_disks = next((row.disks for row in reversed(part) if row.disks), ())
    output = FioOutput(
        fio_version=fio_version.removeprefix("fio-"),
        timestamp=None,
        jobs=tuple(row.job for row in part),
        disk_util=tuple(d for row in part for d in row.separate_disks)
        if client_mode
        else line_disks,
        client_mode=client_mode,
        latency_unit="us",
        output_format="terse",
    )
    key = "client_stats" if client_mode else "jobs"
    raw: dict[str, Any] = {"fio version": fio_version, key: [row.entry for row in part]}
    return Report(
        start=part[0].start,
        line=part[0].number,
        output=output,
        raw=raw,
        session=part[0].session,
    )


@dataclass
class _Line:
    """One terse line being read: its fields and where it is, for messages."""

    source: str
    number: int
    fields: list[str]
    where: str = ""

    def fail(self, message: str, hint: str = _HINT_CUT) -> FioOutputError:
        return FioOutputError(f"{self.source}:{self.number}: {message}", hint=hint)

    def integer(self, i: int, what: str) -> int:
        text = self.fields[i]
        if not _INT.fullmatch(text):
            raise self.fail(
                f"{self.where}{what} (field {i + 1}) should be a whole number, "
                f"not {shown(text, 40)}"
            )
        value = int(text)
        if value > NUMBER_MAX:
            raise self.fail(
                f"{self.where}{what} (field {i + 1}) is {shown(text, 40)}: more "
                "than fio counts or measures"
            )
        return value

    def decimal(self, i: int, what: str, *, percent: bool = False) -> Decimal:
        text = self.fields[i]
        m = (_PCT if percent else _FLOAT).fullmatch(text)
        if m is None:
            form = "a number with a % sign" if percent else "a number"
            raise self.fail(
                f"{self.where}{what} (field {i + 1}) should be {form}, not {shown(text, 40)}"
            )
        try:
            value = Decimal(m.group(1) if percent else text)
        except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
            raise self.fail(f"{self.where}{what} (field {i + 1}) is not a number") from None
        if value > NUMBER_MAX:
            raise self.fail(
                f"{self.where}{what} (field {i + 1}) is {shown(text, 40)}: more "
                "than fio counts or measures"
            )
        return value


def _job(
    row: _Line, version: int, *, lat_percentiles: bool
) -> tuple[JobResult, dict[str, Any], tuple[DiskUtil, ...]]:
    """One terse line: the job, its report entry and the disks on the line."""
    f = row.fields
    if len(f) < _HEADER + 1:
        raise row.fail(
            f"a terse line of {len(f)} fields; version {version} has at least "
            f"{_HEADER + 2 * _width(version) + _TAIL}"
        )
    name = f[2]
    row.where = f"the job {shown(name, 60)}: "
    groupid = row.integer(3, "groupid")
    error = row.integer(4, "error")
    if error > 0xFFFF:
        raise row.fail(f"{row.where}error {error} is not an error number fio reports")
    directions, pos = _directions(row, version, lat_percentiles=lat_percentiles)
    if len(f) < pos + _TAIL:
        raise row.fail(
            f"{row.where}the line ends after {len(f)} fields, inside the CPU and "
            f"latency-bucket fields (terse version {version} needs {pos + _TAIL})"
        )
    usr = row.decimal(pos, "usr CPU", percent=True)
    sys = row.decimal(pos + 1, "sys CPU", percent=True)
    for i in range(pos + 2, pos + 5):
        row.integer(i, "a context switch or page fault count")
    idle = all(d is None for d in directions)
    for i in range(pos + 5, pos + _TAIL):
        if idle and row.fields[i] in _NO_SHARE:
            continue  # a job that has not started yet: fio divides 0 IOs by 0
        row.decimal(i, "an IO depth or latency bucket share", percent=True)
    disks, extra = _trailer(row, pos + _TAIL)
    job = JobResult(
        jobname=name,
        groupid=groupid,
        error=error,
        read=directions[0],
        write=directions[1],
        trim=directions[2],
        usr_cpu_pct=float(usr),
        sys_cpu_pct=float(sys),
        job_runtime_ms=None,
    )
    entry: dict[str, Any] = {"jobname": name, "groupid": groupid, "error": error, "job options": {}}
    entry.update(extra)
    return job, entry, disks


def _width(version: int) -> int:
    """Fields of one direction."""
    return 47 if version == 5 else 41


def _directions(
    row: _Line, version: int, *, lat_percentiles: bool
) -> tuple[list[DirectionResult | None], int]:
    """(read, write, trim) and the index of the first field after them.

    fio writes read, write and (v4, v5) trim; with unified_rw_reporting=mixed only a
    "mixed" one, with =both a "mixed" one after them. A direction starts with a whole
    number (KiB), the CPU fields after them with a percentage.
    """
    width = _width(version)
    normal = 2 if version == 3 else 3
    found: list[DirectionResult | None] = []
    pos = _HEADER
    while pos < len(row.fields) and not row.fields[pos].endswith("%"):
        if len(found) > normal:
            raise row.fail(
                f"{row.where}more than {normal + 1} directions' fields before the CPU fields"
            )
        if pos + width > len(row.fields):
            raise row.fail(
                f"{row.where}the line ends after {len(row.fields)} fields, "
                f"inside direction {len(found) + 1} (terse version {version} "
                f"writes {width} fields per direction)"
            )
        found.append(_direction(row, pos, version, lat_percentiles=lat_percentiles))
        pos += width
    if len(found) == 1 and normal > 1:
        raise row.fail(
            f"{row.where}one direction only: the job ran with unified_rw_reporting=mixed, "
            "so fio reports reads and writes together, which iobench does not store (it "
            "keeps read, write and trim apart)",
            hint="import the output of a run without unified_rw_reporting=mixed",
        )
    if len(found) not in (normal, normal + 1):
        raise row.fail(
            f"{row.where}{len(found)} directions' fields; terse version {version} "
            f"writes {normal} (one more with unified_rw_reporting=both)"
        )
    kept = found[:normal] + [None] * (3 - normal)
    return kept, pos


def _direction(
    row: _Line, pos: int, version: int, *, lat_percentiles: bool
) -> DirectionResult | None:
    """The direction whose fields start at ``pos``; None when it did no IO."""
    # Version 3 has no trim: its third direction is unified_rw_reporting=both's mixed one.
    names = ("read", "write", "mixed") if version == 3 else ("read", "write", "trim", "mixed")
    dname = names[(pos - _HEADER) // _width(version)]
    where = row.where
    row.where = f"{where}{dname}: "
    io_kib = row.integer(pos, "io (KiB)")
    bw_kib = row.integer(pos + 1, "bandwidth (KiB/s)")
    iops = row.integer(pos + 2, "IOPS")
    runtime_ms = row.integer(pos + 3, "runtime (ms)")
    if runtime_ms == 0 and (iops or bw_kib):
        raise row.fail(
            f"{row.where}IOPS {iops} and bandwidth {bw_kib} KiB/s over a runtime "
            "of 0 ms: fio prints 0 for both then",
            hint="fio never writes that: the file was changed after fio wrote it",
        )
    total_ios = round((iops + 0.5) * runtime_ms / 1000) if iops else 0
    slat = _latency(row, pos + 4, "slat", total_ios)
    clat = _latency(row, pos + 8, "clat", total_ios)
    percentiles = _percentiles(row, pos + 12)
    lat = _latency(row, pos + 32, "lat", total_ios)
    row.integer(pos + 36, "bandwidth min (KiB/s)")
    row.integer(pos + 37, "bandwidth max (KiB/s)")
    share = row.decimal(pos + 38, "share of the group's bandwidth", percent=True)
    if share > 100:
        raise row.fail(
            f"{row.where}a share of the group's bandwidth of {share}%: fio caps it at 100%"
        )
    row.decimal(pos + 39, "bandwidth mean (KiB/s)")
    row.decimal(pos + 40, "bandwidth stdev (KiB/s)")
    if version == 5:
        row.integer(pos + 41, "bandwidth samples")
        row.integer(pos + 42, "IOPS min")
        row.integer(pos + 43, "IOPS max")
        row.decimal(pos + 44, "IOPS mean")
        row.decimal(pos + 45, "IOPS stdev")
        row.integer(pos + 46, "IOPS samples")
    row.where = where
    if io_kib == 0 and iops == 0 and clat is None and lat is None:
        return None
    target = "lat" if lat_percentiles and lat is not None else "clat"
    if percentiles:
        if target == "lat" and lat is not None:
            lat = dataclasses.replace(lat, percentiles=percentiles)
        elif clat is not None:
            clat = dataclasses.replace(clat, percentiles=percentiles)
    return DirectionResult(
        io_bytes=io_kib * 1024,
        bw_bytes=float(bw_kib * 1024),
        iops=float(iops),
        total_ios=total_ios,
        runtime_ms=runtime_ms,
        clat=clat,
        lat=lat,
        slat=slat,
        io_bytes_step=1024,  # fio wrote io in whole KiB
    )


def _latency(row: _Line, pos: int, kind: str, total_ios: int) -> LatencyStats | None:
    """min, max (whole µs), mean, stdev (µs) at ``pos``; None when fio sampled none (it
    then prints zeros)."""
    low = row.integer(pos, f"{kind} min (µs)")
    high = row.integer(pos + 1, f"{kind} max (µs)")
    mean = row.decimal(pos + 2, f"{kind} mean (µs)")
    stddev = row.decimal(pos + 3, f"{kind} stdev (µs)")
    if low == high == 0 and mean == stddev == 0:
        return None
    # min and max are truncated to whole µs, the mean is not: min <= mean < max + 1.
    if not low <= mean < high + 1:
        raise row.fail(
            f"{row.where}{kind} mean {mean} µs is not between its min {low} and max {high}",
            hint="fio never writes that: the file was changed or damaged after fio wrote it",
        )
    if high > NUMBER_MAX // 1000:
        raise row.fail(f"{row.where}{kind} max {high} µs is more than fio measures")
    return LatencyStats(
        n=total_ios,
        min_ns=float(low * 1000),
        max_ns=float(high * 1000),
        mean_ns=float(mean * 1000),
        stddev_ns=float(stddev * 1000),
    )


def _percentiles(row: _Line, pos: int) -> tuple[tuple[float, float], ...]:
    """The ``P%=µs`` fields at ``pos``, in ns, skipping fio's ``0%=0`` padding."""
    found: list[tuple[float, float]] = []
    for i in range(pos, pos + _PERCENTILES):
        text = row.fields[i]
        m = _PERCENTILE.fullmatch(text)
        if m is None:
            raise row.fail(
                f"{row.where}field {i + 1} should be a percentile such as "
                f"'99.000000%=123', not {shown(text, 40)}"
            )
        p, value = Decimal(m.group(1)), int(m.group(2))
        if p == 0:
            continue  # fio pads the list to 20 with 0%=0
        if p > 100 or value > NUMBER_MAX // 1000:
            raise row.fail(
                f"{row.where}percentile {shown(text, 40)} (field {i + 1}) is not one fio writes"
            )
        found.append((float(p), float(value * 1000)))
    if any(a[0] > b[0] for a, b in itertools.pairwise(found)):
        raise row.fail(
            f"{row.where}the percentiles are not in ascending order",
            hint="fio never writes that: the file was changed after fio wrote it",
        )
    if any(a[1] > b[1] for a, b in itertools.pairwise(found)):
        raise row.fail(
            f"{row.where}a higher percentile has a lower latency",
            hint="fio never writes that: the file was changed after fio wrote it",
        )
    return tuple(found)


def _looks_like_disk(fields: list[str], i: int) -> bool:
    group = fields[i : i + _DISK]
    return (
        len(group) == _DISK
        and bool(group[0])
        and not _FLOAT.fullmatch(group[0])
        and all(_INT.fullmatch(v) for v in group[1:8])
        and _PCT.fullmatch(group[8]) is not None
    )


def _disks(row: _Line, start: int) -> tuple[list[DiskUtil], int]:
    """Disk groups from ``start`` on (as many as look like disks); a ``slaves`` group
    (the average over an md/dm device's members) is read and not kept."""
    disks: list[DiskUtil] = []
    i = start
    while _looks_like_disk(row.fields, i):
        name = row.fields[i]
        row_where, row.where = row.where, f"disk {shown(name, 40)}: "
        values = [row.integer(i + k, what) for k, what in enumerate(_DISK_FIELDS, start=1)]
        util = row.decimal(i + 8, "util", percent=True)
        if util > 100:
            raise row.fail(f"{row.where}util {util}%: fio caps it at 100%")
        row.where = row_where
        if name != "slaves" or not disks:
            disks.append(
                DiskUtil(
                    name=name,
                    read_ios=values[0],
                    write_ios=values[1],
                    read_merges=values[2],
                    write_merges=values[3],
                    in_queue_ms=values[6],
                    util_pct=float(util),
                )
            )
        i += _DISK
    return disks, i


_DISK_FIELDS = (
    "read ios",
    "write ios",
    "read merges",
    "write merges",
    "read ticks",
    "write ticks",
    "in_queue",
)


def _trailer(row: _Line, start: int) -> tuple[tuple[DiskUtil, ...], dict[str, Any]]:
    """Disks, then continue_on_error's two counts, then the description."""
    disks, pos = _disks(row, start)
    rest = row.fields[pos:]
    extra: dict[str, Any] = {}
    if len(rest) >= 2 and _INT.fullmatch(rest[0]) and _INT.fullmatch(rest[1]):
        extra["total_err"] = row.integer(pos, "total errors")
        extra["first_error"] = row.integer(pos + 1, "first error")
        rest = rest[2:]
    # One field is a description even when it is a number (--description=2024); more
    # numbers than that are not what fio writes.
    if len(rest) > 1 and all(_FLOAT.fullmatch(v) or _PCT.fullmatch(v) for v in rest):
        raise row.fail(
            f"{row.where}{len(rest)} number field(s) after the last field terse version "
            f"{row.fields[0]} writes (field {len(row.fields) - len(rest) + 1} on)"
        )
    if rest:
        desc = ";".join(rest)
        if len(desc) > MAX_DESCRIPTION:
            raise row.fail(
                f"{row.where}a description of {len(desc):,} characters: more than iobench "
                f"reads (at most {MAX_DESCRIPTION:,}; fio itself sets no limit)"
            )
        extra["desc"] = desc
    return tuple(disks), extra
