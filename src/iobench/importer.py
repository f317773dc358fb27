"""``iobench import``: fio output produced elsewhere becomes runs in the database.

Two parts:

- :func:`interpret_fio_runs` is pure: the text of one file -> the runs it holds, each an
  :class:`~iobench.records.ImportedRun` holding everything that will be stored (run row,
  targets, one ResultRecord per fio job entry, warnings) with its place in the file
  (:class:`FileRun`). A file may hold several fio reports: --status-interval snapshots
  of one run (the last is kept) or the outputs of several runs (each a run of its own);
  iobench.fio.reports tells them apart, and refuses the file when it cannot. Parsing and
  interpretation live here and are unit-tested without a database. A run document that
  ``iobench export`` wrote is read by iobench.documents.run instead
  (:func:`interpret_file` tells them apart).
- :func:`import_files` reads and interprets **every** file first, so one file that is not
  fio output stops the import before anything is stored; then it writes its runs.

fio's text outputs (:data:`TEXT_FORMATS`: the normal human-readable output) are read into
the same model and a report in the JSON's shape, so one interpreter serves both.

What a fio JSON file can tell (and what it cannot) is described in docs/import-export.md.
In short: numbers, fio's version, the options fio echoed (``global options`` / ``job
options``, raw strings, options without a value omitted) and, in client mode, the servers'
host:port. Not the job file, not fio's command line, not the machine or the storage.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iobench import jsontext
from iobench.analysis.aggregate import merge_jobs
from iobench.analysis.iocounts import count_findings
from iobench.documents.run import is_run_document, read_run_document
from iobench.engine.lifecycle import Finish, NewRun, RunEnd, recorded_run
from iobench.errors import FioOutputError, NoFioReport, StoreError, UserError, error_text
from iobench.fio import impossible
from iobench.fio.jobfile import LAYOUT_SECTION
from iobench.fio.options import fio3_defaults, options_target, workload_params
from iobench.fio.parse import ALL_CLIENTS, EPOCH_MAX_S, NEVER_WRITTEN, fio_reports
from iobench.fio.reports import Report, Run, split_runs
from iobench.fio.terse import looks_like_terse, terse_reports
from iobench.fio.text import (
    OPTIONS_COMPLETE_KEY,
    OPTIONS_FROM_KEY,
    looks_like_normal,
    normal_reports,
)
from iobench.fio.textparams import options_shown
from iobench.invoker import invoker_rights
from iobench.metrics import job_metrics
from iobench.model import DIRECTIONS, FioOutput, JobResult
from iobench.records import (
    IMPORTED_SUITE,
    ImportedRun,
    ResultRecord,
    RunRecord,
    SuiteDefinition,
    TargetRecord,
    iso_from_epoch,
    now_iso,
)
from iobench.store.repository import Store
from iobench.units import listed

_UNKNOWABLE = (
    "the fio job file (only the options fio echoes in its JSON, as typed, and not those "
    "given without a value such as time_based)",
    "fio's command line",
    "the host (CPU, memory, kernel) and the storage under the target",
)
# fio's text outputs iobench reads when a file holds no fio JSON: (what it is, does the
# text hold it, its parser). A parser gives every report of the text (iobench.fio.reports):
# the model and a report in the JSON's shape (``global options``; per job ``jobname``,
# ``groupid``, ``job options``), in the order of the model's jobs; it raises UserError
# naming the file and line for broken text.
TextParser = Callable[[str, str], list[Report]]


def parse_terse(text: str, source: str) -> list[Report]:
    """fio's terse output (iobench.fio.terse), each job's options from the fio command line
    or job file the text shows with its run's lines (a terse line holds none)."""
    try:
        reports = terse_reports(text, source)
    except FioOutputError as e:
        raise UserError(e.message, e.hint or NEVER_WRITTEN) from None
    # Each fio run's lines with the text before them, up to the next run's.
    starts: dict[int, int] = {}
    for report in reports:
        starts.setdefault(report.session, report.start)
    ends = dict(zip(starts, [*list(starts.values())[1:], len(text)], strict=True))
    shown = {
        session: options_shown(text[start : ends[session]].splitlines())
        for session, start in starts.items()
    }
    for report in reports:
        _terse_options(report.raw, shown[report.session])
    return reports


def _terse_options(report: dict[str, Any], shown: Callable[[str], Any]) -> None:
    for entry in report.get("client_stats") or report.get("jobs") or []:
        found = shown(str(entry.get("jobname")))
        if found is None:
            entry[OPTIONS_FROM_KEY] = "nowhere: a terse line holds no options, and the text "
            entry[OPTIONS_FROM_KEY] += "shows no fio command line or job file for the job"
            continue
        entry["job options"] = found.effective
        entry[OPTIONS_FROM_KEY] = found.where
        entry[OPTIONS_COMPLETE_KEY] = found.complete


TEXT_FORMATS: tuple[tuple[str, Callable[[str], bool], TextParser], ...] = (
    ("fio's normal text output", looks_like_normal, normal_reports),
    ("its terse output (--output-format=terse, versions 3-5)", looks_like_terse, parse_terse),
)
_UNKNOWABLE_TEXT = (
    "fio's latency histograms (text holds the printed percentiles only) and every figure "
    "beyond the precision fio printed",
    "the job file and fio's command line, unless the text shows them",
    "the host (CPU, memory, kernel) and the storage under the target",
)
_HINT_NOT_FIO = (
    "give files written by fio --output-format=json or json+ (every figure, with "
    f"histograms), e.g. with --output=FILE, or {' or '.join(t[0] for t in TEXT_FORMATS)} "
    "as fio printed it"
)


# -- the impure part: read, validate all, store ------------------------------------------


@dataclass(frozen=True)
class FileRun:
    """One run a file holds, and where in the file it was read."""

    run: ImportedRun
    number: int  # its place among the file's runs, from 1
    of: int  # how many runs the file holds
    line: int  # the line its report (the last, when there are snapshots) starts on
    snapshots: tuple[int, ...] = ()  # the lines of the earlier reports of it, not imported

    def position(self) -> dict[str, Any]:
        """Where in the file, as ``import --json`` says it."""
        where: dict[str, Any] = {"run": self.number, "of": self.of, "line": self.line}
        return {**where, "snapshots": list(self.snapshots)}


def import_files(
    store: Store, paths: Sequence[str], *, label: str | None, argv: Sequence[str]
) -> list[int]:
    """Import fio output files as runs (origin "imported"); return the new run ids.

    Every file is read and interpreted first; any file that cannot be read, is not fio
    output, or holds reports whose runs cannot be told apart raises :class:`UserError`
    naming it, and nothing is stored. Then each run of each file is written in short
    transactions (run, each result, finish). If storing fails part-way, that run is
    finished as failed (aborted on Ctrl-C), never left running; the runs before it stay
    stored.
    """
    runs = store_imports(store, [f.run for f in read_files(paths)], label=label, argv=argv)
    return [run.id for run in runs]


def read_files(paths: Sequence[str]) -> list[FileRun]:
    """Read and interpret every file (no database needed): the runs they hold, in order.
    UserError naming the first file that is not fio output or an iobench run document."""
    if not paths:
        raise UserError(
            "no files to import", "give one or more fio output files (JSON, text or terse)"
        )
    seen: dict[str, str] = {}
    runs: list[FileRun] = []
    for path in paths:
        real = os.path.realpath(path)
        if real in seen:
            raise UserError(f"{path} is given twice (also as {seen[real]})", "give every file once")
        seen[real] = path
        text, mtime = _read(path)
        runs += interpret_file(text, path, mtime=mtime)
    return runs


def store_imports(
    store: Store, imports: list[ImportedRun], *, label: str | None, argv: Sequence[str]
) -> list[RunRecord]:
    """Store imported runs, once each is known not to be in the database already; each
    as the store reads it back."""
    imports = list(imports)
    uuids: dict[str, str] = {}
    for i, run in enumerate(imports):
        if run.original_uuid is None:
            continue
        if run.original_uuid in uuids:
            raise UserError(
                f"{run.path} and {uuids[run.original_uuid]} hold the same run "
                f"(uuid {run.original_uuid})",
                "give it once",
            )
        uuids[run.original_uuid] = run.path
        claims = store.runs_with_uuid(run.original_uuid)
        if not claims:
            continue
        same = [
            stored.id
            for stored in map(store.get_run, claims)
            if stored.uuid == run.original_uuid
            or measurement(stored.results) == measurement(run.results)
        ]
        if same:
            there = same[0]
            raise UserError(
                f"{run.path} holds a run that is already in this database as run {there} "
                f"(uuid {run.original_uuid}); nothing was imported",
                f"see it with `iobench show {there}`; leave this file out",
            )
        # Runs here say they came from this run, but measured something else: one of the
        # documents was altered, and a claim in a file must not keep the other out.
        there = claims[0]
        imports[i] = dataclasses.replace(
            run,
            warnings=(
                *run.warnings,
                {
                    "id": "same-uuid-other-numbers",
                    "severity": "warning",
                    "message": f"run {there} of this database claims to come from the same "
                    f"run (uuid {run.original_uuid}) but holds other measurements: one of "
                    "the two was changed after it was exported",
                    "fix": f"compare them (`iobench compare {there} NEW`) and remove the one "
                    "that is not genuine with `iobench rm`",
                    "workload": None,
                    "target": None,
                },
            ),
        )
    return [store_imported(store, run, label=label, argv=argv) for run in imports]


def measurement(results: Sequence[ResultRecord]) -> list[tuple[Any, ...]]:
    """What a run measured, in a form that survives export and import: per result its
    place and status, and per direction the IOs, bytes and time fio counted."""
    rows = []
    for r in results:
        figures = []
        for d in DIRECTIONS:
            section = (r.metrics or {}).get(d) or {}
            figures.append(tuple(section.get(k) for k in ("io_bytes", "total_ios", "runtime_ms")))
        rows.append((r.target, r.workload, r.repetition, r.client or "", r.status, *figures))
    return sorted(rows, key=repr)


def interpret_file(text: str, path: str, *, mtime: float | None = None) -> list[FileRun]:
    """The runs one file holds: fio output, or a run document that ``iobench export
    --format json`` wrote."""
    if text.lstrip().startswith("{"):
        try:
            doc = jsontext.load(text)
        except jsontext.TooDeep as e:
            raise UserError(
                f"{path} holds no fio output nor an iobench run document: {e}, deeper "
                "than any fio report or iobench document",
                _HINT_NOT_FIO,
            ) from None
        except ValueError:
            doc = None
        if is_run_document(doc):
            return [FileRun(read_run_document(doc, path), 1, 1, _first_line(text))]
    return interpret_fio_runs(text, path, mtime=mtime)


def _first_line(text: str) -> int:
    return text.count("\n", 0, len(text) - len(text.lstrip())) + 1


def store_imported(
    store: Store, imported: ImportedRun, *, label: str | None, argv: Sequence[str]
) -> RunRecord:
    """Write one imported run; returns it as the store reads it back. If storing fails
    part-way, the run is finished as failed (aborted on Ctrl-C) and the error raised."""
    new = NewRun(
        suite=imported.suite,
        suite_def=imported.suite_def,
        label=label if label is not None else imported.label,
        argv=imported.argv or argv,
        host=imported.host,
        targets=imported.targets,
        origin="imported",
        source=imported.source,
        started_at=imported.started_at,
    )

    def finish(end: RunEnd) -> Finish:
        finished_at = imported.finished_at if end.failure is None else None
        return Finish(imported.warnings, imported.fio_version, finished_at)

    def stopped(e: BaseException) -> str:
        return f"the import of {imported.source} stopped part-way: {error_text(e)}"

    with recorded_run(
        store, new, finish, reraise=True, describe=stopped, hold_signals=False
    ) as end:
        for result in imported.results:
            store.add_result(end.run_id, result)
        end.status, end.message = imported.status, imported.error
    # What the store would refuse to read back (a figure out of the run document's range
    # that no check before caught) is taken out again, not left for `show` to meet.
    try:
        return store.get_run(end.run_id)
    except StoreError as e:
        store.remove_runs([end.run_id])
        raise UserError(
            f"{imported.path} gives a run iobench cannot store as it reads runs "
            f"({e.message.partition(' cannot be read: ')[2] or e.message}); nothing of it was "
            "kept",
            "import fio's JSON output of that run as fio wrote it; if it is, report the "
            "file to iobench's developers (an import must never store what it cannot read)",
        ) from None


MAX_FILE_BYTES = 256 << 20  # far more than any fio JSON output; refuses /dev/zero & co.
_SNIFF_BYTES = 4096


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _read(path: str) -> tuple[str, float | None]:
    """The file's text and modification time; UserError naming the file if it is not a
    regular file of at most MAX_FILE_BYTES, cannot be read, or holds binary data.

    The checks come before the file is opened: opening a FIFO would block, and reading a
    device such as /dev/zero would never end.
    """
    try:
        with invoker_rights():  # under sudo, as the user who named it could (invoker.py)
            st = Path(path).stat()
    except FileNotFoundError:
        raise UserError(f"{path} does not exist", "check the path") from None
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}", "check its permissions") from e
    if not stat.S_ISREG(st.st_mode):
        kind = _kind(st.st_mode)
        what = kind if kind.startswith("not ") else f"{kind}, not a regular file"
        raise UserError(f"{path} is {what}: it cannot be fio output", _HINT_NOT_FIO)
    if st.st_size > MAX_FILE_BYTES:
        raise UserError(
            f"{path} is {st.st_size} bytes, more than the {MAX_FILE_BYTES >> 20} MiB iobench "
            "imports: too large to be fio output",
            _HINT_NOT_FIO,
        )
    try:
        with invoker_rights():
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            head = f.read(_SNIFF_BYTES)
            if b"\x00" in head:
                raise UserError(
                    f"{path} holds no fio output: it holds binary data "
                    f"(first bytes: {head[:40]!r})",
                    _HINT_NOT_FIO,
                )
            # Bounded even if the file grew since stat.
            data = head + f.read(MAX_FILE_BYTES + 1 - len(head))
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}", "check its permissions") from e
    if len(data) > MAX_FILE_BYTES:
        raise UserError(
            f"{path} grew past {MAX_FILE_BYTES >> 20} MiB while it was read",
            "import it when whatever writes it has finished",
        )
    return data.decode("utf-8", errors="replace"), st.st_mtime


# -- the pure part: one file's text -> ImportedRun ---------------------------------------


def interpret_fio_output(text: str, path: str, *, mtime: float | None = None) -> ImportedRun:
    """The one run a file's fio output holds (:func:`interpret_fio_runs`); UserError
    naming the file and line when it holds several."""
    runs = interpret_fio_runs(text, path, mtime=mtime)
    if len(runs) > 1:
        raise UserError(
            f"{path}:{runs[1].line}: the file holds {len(runs)} fio runs",
            "import it with `iobench import`: each run becomes a run of its own",
        )
    return runs[0].run


def interpret_fio_runs(text: str, path: str, *, mtime: float | None = None) -> list[FileRun]:
    """Interpret one file's text as fio output: the runs it becomes, in file order.

    ``path`` names the file in messages; its absolute form is the runs' source. ``mtime``
    (the file's modification time, seconds) dates a run when fio's output has no
    ``timestamp`` (fio 2.1 and older). fio's JSON is read when the file holds it (a file
    with fio's text and JSON of one run: the JSON holds more); else a text output of
    :data:`TEXT_FORMATS`. Of several reports, the snapshots of one run are left out and
    every other report is a run of its own (iobench.fio.reports). Raises UserError naming
    the file when it is neither output, and naming the line when a report cannot be told
    to be a snapshot or a run of its own.
    """
    objects = jsontext.scan_objects(text)  # once: the scan is the cost of a large file
    try:
        reports = fio_reports(text, path, objects=objects)
    except FioOutputError as e:
        if isinstance(e, NoFioReport) and not _cut_short(text):
            for _, holds, parse in TEXT_FORMATS:
                if holds(text):
                    return _interpret_runs(text, path, parse(text, path), mtime, [])
        raise _not_fio_output(text, path, e) from None
    return _interpret_runs(text, path, reports, mtime, objects)


def _interpret_runs(
    text: str, path: str, reports: list[Report], mtime: float | None, objects: Objects
) -> list[FileRun]:
    """Each run of the reports, read from its part of the file: from its first report
    (the text before the first run's is the first run's) up to the next run's."""
    try:
        runs = split_runs(reports, path)
    except FioOutputError as e:
        raise UserError(e.message, e.hint or NEVER_WRITTEN) from None
    cuts = [0, *(run.first.start for run in runs[1:]), len(text)]
    found = []
    for i, run in enumerate(runs):
        start, end = cuts[i], cuts[i + 1]
        part = text[start:end]
        report = run.report
        if report.output.output_format == "json":
            raw = _raw_report(text, report.start)
            inside = [(s - start, e - start, o) for s, e, o in objects if start <= s < end]
            messages = _lines_outside_json(part, inside)
        else:
            raw, messages = report.raw, _fio_messages(part)
        interpreter = _FioInterpreter(part, path, report.output, raw, mtime)
        interpreter.place(run, i + 1, len(runs))
        found.append(
            FileRun(
                interpreter.interpret(messages=messages),
                number=i + 1,
                of=len(runs),
                line=report.line,
                snapshots=tuple(r.line for r in run.snapshots),
            )
        )
    return found


def _fio_messages(text: str) -> list[str]:
    """fio's own messages among its text output (``fio: terminating on signal 2``)."""
    return [
        line.strip()[:MAX_MESSAGE_CHARS]
        for line in text.splitlines()
        if line.lstrip().startswith("fio: ") and len(line) <= 4 * MAX_MESSAGE_CHARS
    ][:MAX_MESSAGES]


Objects = list[tuple[int, int, dict[str, Any]]]  # what jsontext.scan_objects found


def _lines_outside_json(text: str, objects: Objects) -> list[str]:
    """The non-blank lines of text before, between and after the JSON objects: fio's own
    messages (``fio: terminating on signal 2``, ``<server> ...`` lines in client mode)."""
    lines: list[str] = []
    pos = 0
    for start, end, _ in [*objects, (len(text), len(text), {})]:
        lines.extend(line.strip() for line in text[pos:start].splitlines() if line.strip())
        pos = end
    kept = [
        line if len(line) <= MAX_MESSAGE_CHARS else line[:MAX_MESSAGE_CHARS] + " [cut]"
        for line in lines[:MAX_MESSAGES]
    ]
    if len(lines) > MAX_MESSAGES:  # the run's whole part of the file is its raw output
        kept.append(f"[{len(lines) - MAX_MESSAGES} more lines are in the raw output]")
    return kept


def _not_fio_output(text: str, path: str, e: FioOutputError) -> UserError:
    if not isinstance(e, NoFioReport):  # a report was found: what is wrong with it
        return UserError(
            e.message,
            e.hint or NEVER_WRITTEN,
        )
    if _cut_short(text):
        return UserError(
            f"{path} looks like fio output cut short (the JSON object does not end)",
            "fio was stopped before it finished writing, or the file is an incomplete copy; "
            "import the complete file",
        )
    head = text.lstrip()[:60]
    if not head:
        found = "the file is empty" if not text else "the file holds only white space"
        return UserError(f"{path} holds no fio output: {found}", _HINT_NOT_FIO)
    return UserError(
        f"{path} holds no fio output: {_what_it_holds(text)} (first bytes: {head!r})",
        _HINT_NOT_FIO,
    )


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|"|[{}]')


def _cut_short(text: str) -> bool:
    """True when the object holding ``"fio version"`` opens and never closes (braces
    counted outside strings; a string that never ends counts as not closing)."""
    key = text.find('"fio version"')
    start = text.rfind("{", 0, key) if key >= 0 else -1
    if start < 0:
        return False
    depth = 0
    for m in _JSON_TOKEN.finditer(text, start):
        token = m.group()
        if token == '"':
            return True  # a string that runs to the end of the file
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
            if depth == 0:
                return False
    return True


_NORMAL_TEXT = re.compile(r"\(groupid=\d+, jobs=\d+\)|Run status group|\biops=|\bIOPS=")


def _what_it_holds(text: str) -> str:
    if jsontext.nesting_depth(text) > jsontext.MAX_DEPTH:
        return (
            f"its JSON nests deeper than {jsontext.MAX_DEPTH} levels, deeper than any fio "
            "report, so it is not read"
        )
    if _NORMAL_TEXT.search(text):
        return (
            "it looks like part of fio's normal text output, but holds no job's result "
            "('NAME: (groupid=N, jobs=N): err=...' and the lines under it)"
        )
    if jsontext.scan_objects(text):
        return "it holds JSON, but no object with fio's 'jobs' or 'client_stats'"
    return (
        "neither a JSON object with fio's 'jobs' or 'client_stats' nor fio's text output was found"
    )


class _DupDict(dict[str, Any]):
    """A JSON object that remembers every value of a key that occurs more than once."""

    duplicates: dict[str, list[Any]]


def _pairs_keeping_duplicates(pairs: list[tuple[str, Any]]) -> _DupDict:
    obj = _DupDict(pairs)
    seen: dict[str, list[Any]] = {}
    for key, value in pairs:
        seen.setdefault(key, []).append(value)
    obj.duplicates = {k: v for k, v in seen.items() if len(v) > 1}
    return obj


_DUP_DECODER = jsontext.decoder(object_pairs_hook=_pairs_keeping_duplicates)


def _raw_report(text: str, start: int) -> dict[str, Any]:
    """The fio report starting at ``start`` as plain JSON, decoded again so that duplicate
    keys (fio < 3.39 client mode ``global options``) are remembered."""
    report, _ = _DUP_DECODER.raw_decode(text, start)
    assert isinstance(report, dict)
    return report


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _str_options(value: object) -> dict[str, str]:
    """An option echo as name -> raw string (anything else fio might put there dropped)."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items() if isinstance(v, str | int | float)}


def _epoch_ms(value: object, path: str, where: str) -> float | None:
    """A time fio writes in ms since the epoch (``job_start``, fio >= 3.36;
    ``timestamp_ms``), in seconds; None when absent or 0 (unknown). UserError naming the
    file and the field when it is not a time between 1970 and 2100."""
    if value is None or value == 0:
        return None
    ms = _number(value)
    if ms is None or not 0 < ms <= EPOCH_MAX_S * 1000:
        raise UserError(
            f"{path}: {where}: {str(value)[:30]} is not a time between 1970 and 2100 (in ms "
            "since the epoch, as fio writes it)",
            NEVER_WRITTEN,
        )
    return ms / 1000


MAX_MESSAGES = 200  # lines of text kept from around the JSON
PERCENT_MAX = 1_000_000  # the largest percentage a run document holds (its JSON Schema)
MAX_MESSAGE_CHARS = 500


def _client_target(hostname: str | None, port: int | None) -> str:
    host = hostname or "?"
    if ":" in host:  # IPv6
        host = f"[{host}]"
    return f"{host}:{port}" if port is not None else host


# A job entry placed for its result: the job, its raw JSON, its start (s), its own options,
# the options in force (global and its own) and, in client mode, its host:port.
_Placed = tuple[JobResult, dict[str, Any], float | None, dict[str, str], dict[str, str], str | None]


def _has_bins(job: JobResult) -> bool:
    for d in DIRECTIONS:
        section = job.direction(d)
        if section is not None and any(
            x is not None and x.bins for x in (section.lat, section.clat)
        ):
            return True
    return False


@dataclass
class _Found:
    """What the job entries of one fio output become, in their order."""

    results: list[ResultRecord] = field(default_factory=list)
    workloads: list[dict[str, Any]] = field(default_factory=list)  # the suite definition's
    targets: list[str] = field(default_factory=list)  # in the order they first appear
    errors: list[str] = field(default_factory=list)  # "WORKLOAD on TARGET: fio's error"


def _imported_targets(names: list[str]) -> tuple[TargetRecord, ...]:
    return tuple(
        TargetRecord(
            position=i,
            spec=t,
            path=t,
            kind="unknown",
            size_bytes=None,
            context={
                "note": "imported: fio's output says nothing about the filesystem or device "
                "behind this target"
            },
        )
        for i, t in enumerate(names)
    )


class _FioInterpreter:
    """One fio output read as a run: the warnings about it gathered while it is read."""

    def __init__(
        self,
        text: str,
        path: str,
        output: FioOutput,
        report: dict[str, Any],
        mtime: float | None,
    ) -> None:
        self.text = text
        self.path = path
        self.source = str(Path(path).resolve())
        self.output = output
        self.report = report
        self.mtime = mtime
        self.warnings: list[dict[str, Any]] = []
        self.ambiguous: frozenset[str] = frozenset()  # options left out of the echo
        self.defaulted: dict[str, dict[str, str]] = {}  # workload -> {option: default}

    def warn(
        self,
        wid: str,
        severity: str,
        message: str,
        fix: str,
        *,
        workload: str | None = None,
        target: str | None = None,
    ) -> None:
        self.warnings.append(
            {
                "id": wid,
                "severity": severity,
                "message": message,
                "fix": fix,
                "workload": workload,
                "target": target,
            }
        )

    def place(self, run: Run, number: int, of: int) -> None:
        """What the run's place in its file says: the other runs the file holds, the
        snapshots of it that are not imported."""
        if of > 1:
            why = f", not a snapshot of the run before it: {run.why_new}" if run.why_new else ""
            self.warn(
                "one-of-several-runs",
                "info",
                f"the file holds {of} fio runs, each imported as a run of its own; this is "
                f"run {number}, whose report starts at line {run.report.line}{why}",
                "none needed; its raw output is its part of the file",
            )
        if run.snapshots:
            lines = [str(r.line) for r in run.snapshots]
            at = lines[0] if len(lines) == 1 else f"{', '.join(lines[:-1])} and {lines[-1]}"
            if len(lines) > 6:  # fio --status-interval=1 for an hour writes 3600
                at = f"{', '.join(lines[:3])} ... {lines[-1]}"
            self.warn(
                "snapshots-not-imported",
                "info",
                f"the file holds {len(lines)} earlier report(s) of this run, left out as "
                f"--status-interval snapshots (line {at}): {run.why_snapshots}; the run is "
                f"its last report (line {run.report.line})",
                "none needed; the raw output keeps every report",
            )

    # -- options ---------------------------------------------------------------------

    def global_options(self) -> tuple[dict[str, str], dict[str, dict[str, str]], list[str]]:
        """(shared options, per-client options by "host:port", ambiguous option names).

        fio < 3.39 in client mode writes one ``global options`` object with the keys of
        every server repeated; a key repeated with different values cannot be attributed
        to a server and is left out. fio >= 3.39 writes a list with hostname/port each.
        """
        raw = self.report.get("global options")
        per_client: dict[str, dict[str, str]] = {}
        if isinstance(raw, list):
            for entry in raw:
                if isinstance(entry, Mapping):
                    opts = _str_options(entry)
                    host = opts.pop("hostname", None)
                    port = opts.pop("port", None)
                    port_n = int(port) if port is not None and port.isdigit() else None
                    per_client[_client_target(host, port_n)] = opts
            return {}, per_client, []
        shared = _str_options(raw)
        ambiguous: list[str] = []
        duplicates = getattr(raw, "duplicates", {})
        for key, values in duplicates.items():
            if len({str(v) for v in values}) > 1:
                ambiguous.append(key)
                shared.pop(key, None)
        return shared, per_client, sorted(ambiguous)

    def raw_entries(self) -> dict[tuple[str | None, int | None, str, int], dict[str, Any]]:
        """Raw job entries by (hostname, port, jobname, groupid); the last one wins, as
        in the parser (interim client-mode snapshots repeat the same options)."""
        key = "client_stats" if self.output.client_mode else "jobs"
        found: dict[tuple[str | None, int | None, str, int], dict[str, Any]] = {}
        entries = self.report.get(key)
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            host = entry.get("hostname")
            port = entry.get("port")
            groupid = entry.get("groupid")
            found[
                (
                    host if isinstance(host, str) else None,
                    port if isinstance(port, int) else None,
                    str(entry.get("jobname")),
                    groupid if isinstance(groupid, int) else -1,
                )
            ] = entry
        return found

    # -- the run -----------------------------------------------------------------------

    def interpret(self, *, messages: list[str]) -> ImportedRun:
        """``messages``: the lines of text outside fio's JSON (fio's own messages)."""
        out = self.output
        jobs = self._jobs()
        self._check_percentages(jobs)
        shared, per_client = self._options()
        report_time = self._report_time()
        entries = self._entries(jobs)
        job_starts = [
            _epoch_ms(raw.get("job_start"), self.path, f"the job {job.jobname[:40]!r}: 'job_start'")
            for job, raw in entries
        ]
        started_at, time_source = self._started_at(
            [t for t in job_starts if t is not None], report_time
        )
        # Standalone: fio's timestamp is when it printed the report, i.e. the end. Client
        # mode: it is when the client started; the end is not in the file.
        finished_at = (
            iso_from_epoch(report_time)
            if report_time is not None and not out.client_mode
            else started_at
        )
        placed = self._merge_clones(self._place(entries, job_starts, shared, per_client))
        single = len(placed) == 1
        if out.disk_util and not single:
            self.warn(
                "disk-util-whole-file",
                "info",
                "fio's disk_util covers the whole file (every job together), so it is kept "
                "with the imported run's definition, not with each result",
                "none needed",
            )
        found = self._results(placed, started_at, finished_at, single)
        self._warn_about_output(messages)
        if out.output_format != "json":
            self._warn_about_text([raw for _, raw in entries])
        return ImportedRun(
            path=self.path,
            source=self.source,
            started_at=started_at,
            time_source=time_source,
            fio_version=out.fio_version,
            client_mode=out.client_mode,
            host=self._host(jobs),
            suite_def=SuiteDefinition(
                name=IMPORTED_SUITE,
                description=f"imported from {self.source}",
                source=self.source,
                origin="imported",
                client_mode=out.client_mode,
                time_source=time_source,
                time_note=_TIME_NOTES[time_source],
                global_options=per_client or shared,
                workloads=tuple(found.workloads),
                messages=tuple(messages),
                unknown=_UNKNOWABLE if out.output_format == "json" else _UNKNOWABLE_TEXT,
                disk_util=tuple(job_metrics(jobs[0], out.disk_util, None)["disk_util"])
                if out.disk_util and not single
                else None,
            ),
            targets=_imported_targets(found.targets),
            results=tuple(found.results),
            # fio's counts of IOs, checked as a run's are (iobench.analysis.iocounts).
            warnings=(
                *self.warnings,
                *(f.as_dict() for r in found.results for f in count_findings(r)),
            ),
            status="failed" if found.errors else "complete",
            error="; ".join(found.errors) if found.errors else None,
        )

    def _entries(self, jobs: list[JobResult]) -> list[tuple[JobResult, dict[str, Any]]]:
        """Each job with its raw entry in the report: found by (host, port, name, group)
        in fio's JSON; by position in a text output's report, which lists the jobs in the
        model's order (one text may hold several fio runs with the same job names)."""
        if self.output.output_format == "json":
            by_key = self.raw_entries()
            return [
                (job, by_key.get((job.hostname, job.port, job.jobname, job.groupid), {}))
                for job in jobs
            ]
        raws = self.report.get("client_stats" if self.output.client_mode else "jobs")
        listed = raws if isinstance(raws, list) else []
        by_job = {id(job): raw for job, raw in zip(self.output.jobs, listed, strict=False)}
        return [(job, by_job.get(id(job), {})) for job in jobs]

    def _jobs(self) -> list[JobResult]:
        """The job entries that become results: every one but fio's 'All clients' sum."""
        out = self.output
        client = out.client_mode
        jobs = [j for j in out.jobs if j.jobname != ALL_CLIENTS]
        if client and len(jobs) < len(out.jobs):
            self.warn(
                "all-clients-not-stored",
                "info",
                "fio's 'All clients' entry (the sum over every client) is not stored as a "
                "result: it has no latency percentiles before fio 3.39 and its host:port is "
                "that of whichever client reported last; each client is stored on its own",
                "compare the clients' results; the raw output keeps the 'All clients' entry",
            )
        if not jobs:
            jobs = list(out.jobs)  # only an aggregate: keep it rather than nothing
        workloads = [j for j in jobs if j.jobname != LAYOUT_SECTION]
        if workloads and len(workloads) < len(jobs):
            jobs = workloads
            self.warn(
                "layout-not-imported",
                "info",
                f"the job {LAYOUT_SECTION} is the layout of the test file that `iobench suites "
                "export` writes before the workloads (iobench lays out its test files too, "
                "and stores no result for it): left out",
                "none needed; the raw output keeps it",
            )
        if not jobs:
            where = "client_stats" if client else "jobs"
            raise UserError(
                f"{self.path}: fio's report holds no job results ('{where}' is empty"
                + ("; in client mode that means the servers sent nothing back)" if client else ")"),
                "import the output of a run that finished",
            )
        return jobs

    def _check_percentages(self, jobs: list[JobResult]) -> None:
        """CPU and disk busy percentages a run document can hold (what is stored must read
        back): UserError naming the job or disk for one fio never reports."""
        figures = [
            (f"the job {job.jobname[:40]!r}: {name}", value)
            for job in jobs
            for name, value in (("usr_cpu", job.usr_cpu_pct), ("sys_cpu", job.sys_cpu_pct))
        ]
        figures += [(f"disk {d.name[:40]!r}: util", d.util_pct) for d in self.output.disk_util]
        for where, value in figures:
            if value is not None and not 0 <= value <= PERCENT_MAX:
                raise UserError(
                    f"{self.path}: {where} is {value}%, more than fio reports",
                    NEVER_WRITTEN,
                )

    def _options(self) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
        """(shared options, per-client options by "host:port"), with a warning for the
        options that cannot be attributed to a server."""
        shared, per_client, ambiguous = self.global_options()
        self.ambiguous = frozenset(ambiguous)
        if ambiguous:
            self.warn(
                "ambiguous-global-options",
                "info",
                "fio repeated these global options once per server with different values, "
                f"so they cannot be attributed to a server: {', '.join(ambiguous)}",
                "fio 3.39 and later write them per server",
            )
        return shared, per_client

    def _place(
        self,
        entries: list[tuple[JobResult, dict[str, Any]]],
        job_starts: list[float | None],
        shared: dict[str, str],
        per_client: dict[str, dict[str, str]],
    ) -> list[_Placed]:
        """Each entry with its start, its own options, the options in force and its client."""
        placed = []
        for (job, raw), job_start in zip(entries, job_starts, strict=True):
            client_key = _client_target(job.hostname, job.port) if self.output.client_mode else None
            base = per_client.get(client_key, shared) if client_key else shared
            job_options = _str_options(raw.get("job options"))
            options = {**base, **job_options}
            placed.append((job, raw, job_start, job_options, options, client_key))
        return placed

    def _results(
        self, placed: list[_Placed], started_at: str, finished_at: str, single: bool
    ) -> _Found:
        """One result and one workload definition per placed entry, named after its job
        (``name#2`` for a second entry of that name on a target)."""
        found = _Found()
        counts: dict[tuple[str, str], int] = {}
        for position, (job, raw, job_start, job_options, options, client_key) in enumerate(placed):
            target = client_key or options_target(options)
            if target not in found.targets:
                found.targets.append(target)
            n = counts[(target, job.jobname)] = counts.get((target, job.jobname), 0) + 1
            workload = job.jobname if n == 1 else f"{job.jobname}#{n}"
            defaults = self._defaults(raw, options)
            if defaults:
                self.defaulted[workload] = defaults
            params = workload_params({**defaults, **options})
            job = self._possible(job, params, workload, target)
            error = self._job_error(job, workload, target)
            if error is not None:
                found.errors.append(f"{workload} on {target}: {error}")
            found.results.append(
                ResultRecord(
                    target=target,
                    workload=workload,
                    position=position,
                    status="ok" if error is None else "failed",
                    params=params,
                    metrics=job_metrics(job, self.output.disk_util if single else (), params),
                    job_file="",
                    fio_argv=[],
                    fio_rc=None,
                    fio_version=self.output.fio_version,
                    # The file is the run's evidence: stored once, on its first result.
                    raw_output=self.text if position == 0 else None,
                    fio_stdout=None,
                    fio_stderr=None,
                    error=error,
                    started_at=started_at if job_start is None else iso_from_epoch(job_start),
                    finished_at=finished_at,
                    repetition=1,
                )
            )
            desc = raw.get("desc")
            found.workloads.append(
                dict(
                    params,
                    name=workload,
                    jobname=job.jobname,
                    groupid=job.groupid,
                    target=target,
                    job_options=job_options,
                    description=desc if isinstance(desc, str) else None,
                    fio_defaults=defaults,
                )
            )
        self._warn_about_defaults()
        return found

    def _defaults(self, raw: dict[str, Any], options: dict[str, str]) -> dict[str, str]:
        """The options the job was left at fio's defaults: when the output is fio 3.x's and
        holds every option the job was given (fio's JSON echo; a text's command line, job
        file or iobench's description of the job), not what fio printed of it alone."""
        major = re.match(r"(\d{1,4})\.", self.output.fio_version or "")
        # A text without fio's version line: fio 3.x's layout (IOPS=, nsec) says 3.x.
        fio3 = self.output.output_format != "json" and self.output.latency_unit == "ns"
        if not (int(major.group(1)) >= 3 if major else fio3):
            return {}
        if self.output.output_format != "json" and not raw.get(OPTIONS_COMPLETE_KEY):
            return {}
        return fio3_defaults(options, self.ambiguous)

    def _warn_about_defaults(self) -> None:
        by_option: dict[tuple[str, str], list[str]] = {}
        for workload, defaults in self.defaulted.items():
            for option, value in defaults.items():
                by_option.setdefault((option, value), []).append(workload)
        if not by_option:
            return
        said = "; ".join(
            f"{option}={value} ({listed(workloads, 3)})"
            for (option, value), workloads in by_option.items()
        )
        self.warn(
            "fio-defaults",
            "info",
            f"fio's output does not state these options, so the jobs ran with fio 3.x's "
            f"defaults, which are stored as their parameters: {said}",
            "none needed; suite_def's workloads say which parameters are defaults (fio_defaults)",
        )

    def _possible(
        self, job: JobResult, params: dict[str, Any], workload: str, target: str
    ) -> JobResult:
        """``job`` without the figures no run could produce, each said in a warning."""
        depth, numjobs, ramp = params.get("iodepth"), params.get("numjobs"), params.get("ramp_s")
        job, found = impossible.checked(
            job,
            ramp_s=ramp if isinstance(ramp, int | float) else None,
            iodepth=depth if isinstance(depth, int) else None,
            # 'All clients' sums every client's jobs
            numjobs=numjobs if isinstance(numjobs, int) and job.jobname != ALL_CLIENTS else None,
        )
        for f in found:
            done = "left out" if f.left_out else "kept, but do not trust them"
            self.warn(
                "impossible-figure",
                "warning",
                f"{workload} on {target}: fio's {f.direction} {f.figure} figures cannot be "
                f"right: {f.why}; {done}",
                "compare with the raw output (iobench show RUN --raw); measure again with "
                "a current fio and --output-format=json+",
                workload=workload,
                target=target,
            )
        return job

    def _job_error(self, job: JobResult, workload: str, target: str) -> str | None:
        """The error fio reported for the job; a warning when it reports no IO either."""
        if job.error != 0:
            return f"fio reported error {job.error} ({os.strerror(job.error)})"  # 0..0xFFFF
        if all(job.direction(d) is None for d in DIRECTIONS):
            self.warn(
                "no-io",
                "warning",
                f"fio reports no IO for {workload} and no error; a fio server that "
                "hung before its job started reports this",
                "do not trust this result; run the workload again",
                workload=workload,
                target=target,
            )
        return None

    def _warn_about_output(self, messages: list[str]) -> None:
        """What fio's messages and units say about the whole output."""
        if any("terminating on signal" in m for m in messages):
            self.warn(
                "interrupted",
                "warning",
                "fio printed 'terminating on signal' with this output: the run was stopped "
                "early, so its numbers cover less time than it was set to run",
                "prefer the output of a run that was not interrupted",
            )
        if self.output.latency_unit == "us":
            self.warn(
                "microsecond-latencies",
                "info",
                f"fio {self.output.fio_version or '2.x'} reported latencies in microseconds; "
                "they are stored in nanoseconds (x1000), so they carry microsecond "
                "resolution only",
                "none needed",
            )

    def _warn_about_text(self, raws: list[dict[str, Any]]) -> None:
        """What a text output cannot hold, and where the parameters were read."""
        kind = self.output.output_format
        printed = (
            " (bandwidth and bytes to 3-4 significant digits, latencies to 0.01 of their "
            "unit, percentiles rounded up to theirs); counts of IOs and runtimes are exact"
            if kind == "normal"
            else " (bytes in KiB, bandwidth in KiB/s, IOPS whole, latency minimum, maximum "
            "and percentiles in whole µs, means to 0.001 µs); terse has no count of IOs, so "
            "it is IOPS x runtime"
        )
        self.warn(
            "text-precision",
            "info",
            f"imported from fio's {kind} output: the figures carry the precision fio "
            f"printed{printed}",
            "for every figure to fio's full precision, run fio with --output-format=json+",
        )
        self.warn(
            "text-no-histogram",
            "info",
            f"fio's {kind} output has no latency histogram: percentiles are the ones fio "
            "printed, and cannot be merged across repetitions or jobs",
            "compare percentiles of single results; json+ output keeps the histograms",
        )
        sources = sorted({str(raw[OPTIONS_FROM_KEY]) for raw in raws if OPTIONS_FROM_KEY in raw})
        if sources:
            self.warn(
                "text-parameters",
                "info",
                f"the jobs' parameters were read from {'; '.join(sources)}",
                "check them with `iobench show RUN`; what the text did not state is null, "
                "or fio's default where the text shows every option the job was given "
                "(note fio-defaults)",
            )

    def _host(self, jobs: list[JobResult]) -> dict[str, Any]:
        """What the output says of the machines: in client mode the servers' host:port."""
        if self.output.client_mode:
            clients = sorted({_client_target(j.hostname, j.port) for j in jobs})
            host: dict[str, Any] = {
                "clients": clients,
                "note": "imported: fio's client-mode output names each server as "
                "host:port and says nothing else about the machines",
            }
            if len(clients) == 1 and jobs[0].hostname:
                host["hostname"] = jobs[0].hostname
        else:
            host = {
                "note": "imported: fio's output says nothing about the machine it ran on",
            }
        host["fio_version"] = self.output.fio_version
        return host

    def _report_time(self) -> float | None:
        ms = _epoch_ms(self.report.get("timestamp_ms"), self.path, "'timestamp_ms'")
        if ms is not None:
            return ms
        if self.output.timestamp:
            return float(self.output.timestamp)
        return None

    def _merge_clones(self, placed: list[_Placed]) -> list[_Placed]:
        """Entries that are the ``numjobs`` clones of one job section, reported one by one
        (no ``group_reporting``), combined as group_reporting does: iobench's own results
        are per job section, and compare must not match one clone with a whole group.

        Clones share target, job name and group, and their echoed ``numjobs`` equals their
        number; entries that merely share a name stay apart (numbered ``name#2`` ...).
        """
        groups: dict[tuple[str, str, int], list[int]] = {}
        for i, (job, _, _, _, options, client_key) in enumerate(placed):
            target = client_key or options_target(options)
            groups.setdefault((target, job.jobname, job.groupid), []).append(i)
        merged: dict[int, _Placed] = {}
        dropped: set[int] = set()
        for (target, name, _), members in groups.items():
            numjobs = workload_params(placed[members[0]][4]).get("numjobs")
            if len(members) < 2 or numjobs != len(members):
                continue
            first = placed[members[0]]
            job = merge_jobs([placed[i][0] for i in members])
            starts = [t for t in (placed[i][2] for i in members) if t is not None]
            merged[members[0]] = (job, first[1], min(starts) if starts else None, *first[3:])
            dropped.update(members[1:])
            latency = "merged histograms" if _has_bins(job) else "no percentiles"
            if self.output.output_format != "json":
                latency = "mean and extremes (percentiles cannot be merged without histograms)"
            self.warn(
                "jobs-merged",
                "info",
                f"fio reported the {len(members)} jobs of {name} on {target} one by one (no "
                "group_reporting); they are stored as one result, combined as group_reporting "
                f"does: IOs and bytes summed over the longest runtime, latency from the {latency}",
                "none needed; the raw output keeps every job",
                workload=name,
                target=target,
            )
        return [merged.get(i, p) for i, p in enumerate(placed) if i not in dropped]

    def _started_at(self, job_starts: list[float], report_time: float | None) -> tuple[str, str]:
        if job_starts:
            return iso_from_epoch(min(job_starts)), "job_start"
        if report_time is not None:
            text = self.output.output_format != "json"
            return iso_from_epoch(report_time), "text time" if text else "timestamp"
        if self.mtime is not None:
            return iso_from_epoch(self.mtime), "mtime"
        return now_iso(), "import time"


_TIME_NOTES = {
    "job_start": "started_at is the earliest job_start fio recorded (fio 3.36 and later)",
    "timestamp": "started_at is fio's 'timestamp': in standalone mode the time fio printed "
    "the report (the end of the run), in client mode the time the client started",
    "mtime": "the file has no 'timestamp' (fio 2.1 and older): started_at is the file's "
    "modification time",
    "import time": "neither the file nor its metadata gives a time: started_at is the time "
    "of the import",
    "text time": "started_at is the time fio printed with the first job's result (when "
    "it reported, i.e. the end of that run), in the machine's local time zone, which the "
    "text does not give: read as UTC",
}
