"""The run model: a stored run, its targets and results, and the suite definition kept with
it, as frozen dataclasses that every layer reads (analysis, reports, documents, the store).

model.py holds what goes into fio (workloads, suites, targets) and what fio's output
parses to; this module holds what iobench keeps of a run and reads back. The store
(iobench.store) maps database rows to these records and back; the documents
(iobench.documents) write them as JSON and read them back from it.

A :class:`SuiteDefinition` is a JSON object stored with the run (``suite_json``) and
exported with it (``suite_def``), written by several iobench versions and sometimes
edited by hand before an import: :meth:`JsonObject.from_dict` types every key this
iobench knows, keeps the others in ``extra`` and remembers the order of the keys, so that
:meth:`JsonObject.as_dict` gives back the very object it was read from.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Self

from iobench.model import Suite

# The suite of a run imported from fio output files.
IMPORTED_SUITE = "imported"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_from_epoch(seconds: float) -> str:
    """Seconds since the epoch as ISO 8601 UTC with milliseconds (``...T01:51:22.831Z``)."""
    return (
        datetime.fromtimestamp(seconds, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


class RecordError(ValueError):
    """A JSON value of the wrong type where a record expects a typed one. ``where`` reads
    ``clients.names[0]``; ``what`` reads ``must be text or null, not 5``."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what


# -- JSON objects as typed records -------------------------------------------------------------

# How one key's JSON value is checked and becomes an attribute: (value, where) -> attribute.
# None (JSON null, or the key absent) is an attribute of None and never reaches a reader.
Reader = Callable[[Any, str], Any]


def _shown(value: Any) -> str:
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    try:
        return json.dumps(value)[:60]
    except (TypeError, ValueError):
        return repr(value)[:60]


def _wrong(where: str, kind: str, value: Any) -> RecordError:
    return RecordError(where, f"must be {kind} or null, not {_shown(value)}")


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _wrong(where, "text", value)
    return value


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _wrong(where, "true or false", value)
    return value


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong(where, "a whole number", value)
    return value


def _number(value: Any, where: str) -> float:
    """An int stays an int: it is written back as it was read (``1000000``, not ``1e6``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong(where, "a number", value)
    return value


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _wrong(where, "an object", value)
    return value


def _texts_by_name(value: Any, where: str) -> Mapping[str, str]:
    checked = _object(value, where)
    for key, item in checked.items():
        if not isinstance(item, str):
            raise RecordError(f"{where}.{key}", f"must be text, not {_shown(item)}")
    return checked


def _list_of(accepts: Callable[[Any], bool], kind: str) -> Reader:
    def read(value: Any, where: str) -> tuple[Any, ...]:
        if not isinstance(value, list | tuple):
            raise _wrong(where, "a list", value)
        for i, item in enumerate(value):
            if not accepts(item):
                raise RecordError(f"{where}[{i}]", f"must be {kind}, not {_shown(item)}")
        return tuple(value)

    return read


_texts = _list_of(lambda v: isinstance(v, str), "text")
_counts = _list_of(lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number")
_objects = _list_of(lambda v: isinstance(v, Mapping), "an object")


def _key(read: Reader) -> Any:
    """A known key: typed by ``read``, None when absent or null."""
    return field(default=None, metadata={"read": read})


def _reads(record: type[JsonObject]) -> dict[str, Reader]:
    """The field metadata of a known key whose value is a nested record."""
    return {"read": record.from_dict}


def _to_json(value: Any) -> Any:
    if isinstance(value, JsonObject):
        return value.as_dict()
    if isinstance(value, tuple):
        return [_to_json(v) for v in value]
    return value


@dataclass(frozen=True, kw_only=True)
class JsonObject:
    """A JSON object as a typed record. Subclasses declare each key they know as a field
    made with ``_key``, in the order they are written; keys they do not know (from a newer
    or an older iobench, or added by hand) are kept in ``extra``. ``key_order`` is the
    order of the keys the object was read with, known and unknown: :meth:`as_dict` writes
    them in it, so a stored or exported object is written back byte for byte. A key set
    since (``dataclasses.replace``) follows them, in the declared order."""

    extra: Mapping[str, Any] = field(default_factory=dict)
    key_order: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def known(cls) -> dict[str, Reader]:
        """The keys this record types, in the order it writes them."""
        return {f.name: f.metadata["read"] for f in dataclasses.fields(cls) if "read" in f.metadata}

    @classmethod
    def from_dict(cls, value: Any, where: str = "") -> Self:
        """The record of a parsed JSON object; RecordError for a value of the wrong type."""
        if not isinstance(value, Mapping):
            raise RecordError(where or "the top level", f"must be an object, not {_shown(value)}")
        known = cls.known()
        typed: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, v in value.items():
            read = known.get(key)
            if read is None:
                extra[key] = v
            elif v is not None:
                typed[key] = read(v, f"{where}.{key}" if where else key)
        return cls(**typed, extra=extra, key_order=tuple(value))

    def as_dict(self) -> dict[str, Any]:
        """The JSON object: the keys it was read with, in their order (null where it held
        null), then the known keys set since, then the unknown ones added since."""
        known = self.known()
        keys = [k for k in self.key_order if k in known or k in self.extra]
        keys += [k for k in known if k not in self.key_order and getattr(self, k) is not None]
        keys += [k for k in self.extra if k not in self.key_order]
        return {k: _to_json(getattr(self, k)) if k in known else self.extra[k] for k in keys}


@dataclass(frozen=True, kw_only=True)
class ClientsDefinition(JsonObject):
    """A run on many clients (``--clients``): who, how many at each step, and each
    client's test file (left behind by a run whose process died)."""

    names: tuple[str, ...] | None = _key(_texts)  # as the user named them
    scale: tuple[int, ...] | None = _key(_counts)  # the numbers of clients, one per step
    files: Mapping[str, str] | None = _key(_texts_by_name)  # client -> its test file


@dataclass(frozen=True, kw_only=True)
class PlanDefinition(JsonObject):
    """What an adaptive run's planner was asked (``iobench characterize``)."""

    kind: str | None = _key(_text)  # "characterize"
    settings: Mapping[str, Any] | None = _key(_object)  # analysis.characterize.Settings


@dataclass(frozen=True, kw_only=True)
class ImportedFrom(JsonObject):
    """An imported run document's original run: how the same measurement is recognised
    however many databases it passed through."""

    run_id: int | None = _key(_count)
    uuid: str | None = _key(_text)
    origin: str | None = _key(_text)
    source: str | None = _key(_text)
    iobench_version: str | None = _key(_text)


@dataclass(frozen=True, kw_only=True)
class SuiteDefinition(JsonObject):
    """What a run was asked to do, stored with it (``suite_json``) and exported with it
    (``suite_def``). Every key any iobench writer puts there, in the order writers put
    them; None: absent (or null). Which keys a run has depends on what made it:

    - every run of iobench's: name, description, source, indicative, workloads,
      expectations (see :meth:`of_suite`); a sweep adds sweep and p99_under_ns,
      characterize p99_under_ns and plan, --spec spec, --clients clients, --steady-state
      steady_state, --precondition precondition;
    - a run imported from fio output: name, description, source, origin, client_mode,
      time_source, time_note, global_options, workloads, messages, unknown and, when fio's
      disk_util covers several jobs, disk_util;
    - a run imported from a run document: that document's suite_def (source added when it
      had none) and imported_from.
    """

    name: str | None = _key(_text)
    description: str | None = _key(_text)
    source: str | None = _key(_text)  # "builtin", a suite file's path, or an imported file
    origin: str | None = _key(_text)  # imported fio output: "imported"
    client_mode: bool | None = _key(_flag)  # imported fio output of fio --client
    time_source: str | None = _key(_text)  # imported: where started_at came from
    time_note: str | None = _key(_text)  # ... said in words
    # Imported: the options fio echoed, {option: value}, or per client {host:port: {...}}.
    global_options: Mapping[str, Any] | None = _key(_object)
    indicative: bool | None = _key(_flag)  # a first look only (short runs, small file)
    # Each workload's params (Workload.params) with its name; imported runs add jobname,
    # groupid, target, job_options and description.
    workloads: tuple[Mapping[str, Any], ...] | None = _key(_objects)
    messages: tuple[str, ...] | None = _key(_texts)  # imported: fio's text around its JSON
    unknown: tuple[str, ...] | None = _key(_texts)  # imported: what fio's output cannot tell
    disk_util: tuple[Mapping[str, Any], ...] | None = _key(_objects)  # imported: whole file
    expectations: tuple[Mapping[str, Any], ...] | None = _key(_objects)  # model.Expectation
    # (A nested record is declared with field() itself: ruff sees only that as a field.)
    clients: ClientsDefinition | None = field(default=None, metadata=_reads(ClientsDefinition))
    sweep: Mapping[str, Any] | None = _key(_object)  # {"axes": {"rw": [...], "bs": [...], ...}}
    p99_under_ns: float | None = _key(_number)  # sweep, characterize: --p99-under
    spec: Mapping[str, Any] | None = _key(_object)  # --spec: the promise (iobench.specs)
    plan: PlanDefinition | None = field(default=None, metadata=_reads(PlanDefinition))
    imported_from: ImportedFrom | None = field(default=None, metadata=_reads(ImportedFrom))
    # A fio job file's variables as they were replaced for the run ({written, value,
    # source}: iobench.fio.language), and the files it included: what ran, said.
    variables: tuple[Mapping[str, Any], ...] | None = _key(_objects)
    includes: tuple[str, ...] | None = _key(_texts)
    # --steady-state: the rule the rounds were judged by ({"rule": "pts", "window": 5, ...}
    # or {"rule": "fio", "criterion": ...}; iobench.analysis.steady), and the round time.
    steady_state: Mapping[str, Any] | None = _key(_object)
    # --precondition / iobench precondition: what was done to the target before the
    # workloads (purge method, fill passes, bytes, seconds; iobench.engine.precondition).
    precondition: Mapping[str, Any] | None = _key(_object)

    @classmethod
    def of_suite(cls, suite: Suite) -> SuiteDefinition:
        """The suite as it ran (after overrides): what every run of iobench's stores."""
        return cls(
            name=suite.name,
            description=suite.description,
            source=suite.source,
            indicative=suite.indicative,
            workloads=tuple(dict(w.params, name=w.name) for w in suite.workloads),
            expectations=tuple(dataclasses.asdict(e) for e in suite.expectations),
            variables=tuple(
                {"written": w, "value": v, "source": src} for w, v, src in suite.variables
            )
            or None,
            includes=suite.includes or None,
        )


# -- a run and its parts -----------------------------------------------------------------------


@dataclass(frozen=True)
class TargetRecord:
    position: int
    # The name every result and warning of the run gives the target: the absolute path
    # the user named, symbolic links kept (targets.named_path); what was typed in runs
    # stored by an earlier iobench ("."). Imported fio files: fio's filename; --clients:
    # the directory on the clients.
    spec: str
    path: str  # where it leads, links resolved (imported, --clients: the spec)
    kind: str
    size_bytes: int | None
    context: dict[str, Any]


@dataclass(frozen=True)
class PartResult:
    """One part of a group's result (model.Workload.parts): what its fio job did while the
    other parts ran, as fio reported it (one reporting group per part)."""

    name: str  # the part's (its job's) name
    params: dict[str, Any]  # Workload.params of the part
    metrics: dict[str, Any] | None  # as ResultRecord.metrics, of this part alone
    samples: dict[str, Any] | None = None  # as ResultRecord.samples, of this part alone


@dataclass(frozen=True)
class ResultRecord:
    """One workload on one target, with the evidence it came from."""

    target: str
    workload: str
    position: int
    status: str  # "ok" | "failed"
    params: dict[str, Any]
    # What metrics.job_metrics made of fio's entry (per direction, cpu, error, disk_util,
    # steadystate), with iobench's own: host_cpu (the whole host's CPU load while it ran)
    # and, for the aggregate of a run on many clients, clients (the step's skew).
    metrics: dict[str, Any] | None
    job_file: str
    fio_argv: list[str]
    fio_rc: int | None
    fio_version: str | None
    raw_output: str | None
    fio_stdout: str | None
    fio_stderr: str | None
    error: str | None
    started_at: str
    finished_at: str
    repetition: int = 1  # 1..N with --repeat N
    # Per-second samples from fio's interval logs (see fio/logs.py), None when not recorded.
    samples: dict[str, Any] | None = None
    # Many clients (--clients): the client as the user named it, "all" for the aggregate of
    # a step; None on one host. ``clients``: how many clients ran the step.
    client: str | None = None
    clients: int | None = None
    # A group of jobs run together (Workload.parts): each part's own figures; the metrics
    # above are then the group's (IOs summed, the longest runtime, histograms merged).
    parts: tuple[PartResult, ...] = ()
    # Set only on a part shown as a result of its own (analysis.results.part_results): the
    # part's name, the workload's being its group's. Never stored as a row.
    part: str | None = None

    @property
    def shown_name(self) -> str:
        """The workload as results show it: ``group/part`` for a part of a group."""
        return self.workload if self.part is None else f"{self.workload}/{self.part}"


@dataclass(frozen=True)
class RunRecord:
    id: int
    uuid: str
    status: str
    suite: str
    suite_def: SuiteDefinition
    label: str | None
    argv: list[str]
    host: dict[str, Any]
    fio_version: str | None
    iobench_version: str
    warnings: list[dict[str, Any]]
    error: str | None
    started_at: str
    finished_at: str | None
    targets: list[TargetRecord] = field(default_factory=list)
    results: list[ResultRecord] = field(default_factory=list)
    result_count: int = 0
    origin: str = "run"  # "run": measured by iobench; "imported": from fio output files
    source: str | None = None  # imported runs: the file(s) they came from


@dataclass(frozen=True)
class RunBrief:
    """What `iobench rm` shows and reports of a run: its plain columns and counts, never
    its JSON, so that a run no reader can parse can still be named and removed."""

    id: int
    uuid: str
    status: str
    suite: str
    label: str | None
    started_at: str
    targets: tuple[str, ...]
    results: int  # every result, failed ones too: all of them go with the run
    live_pid: int | None  # the iobench process of this host still running it
    # What it made on this host and has not removed: (path, what it is), e.g. the test file
    # of a run whose iobench was killed.
    leftovers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ImportedRun:
    """A run read from a file, not stored yet: everything one imported file becomes (its
    run row, targets and results). Made from fio output by iobench.importer and from a run
    document by iobench.documents.run; stored by importer.store_imported."""

    path: str  # as the user gave it (for messages)
    source: str  # absolute path, stored as the run's source
    started_at: str  # ISO 8601 UTC
    time_source: str  # "job_start" | "timestamp" | "mtime" | "import time" | "document"
    fio_version: str | None
    client_mode: bool
    host: dict[str, Any]
    suite_def: SuiteDefinition
    targets: tuple[TargetRecord, ...]
    results: tuple[ResultRecord, ...]
    warnings: tuple[dict[str, Any], ...]
    status: str  # "complete", or "failed" when a job in the file reported an error
    error: str | None
    # A run document brings these; fio output does not.
    suite: str = IMPORTED_SUITE
    label: str | None = None  # used unless --label is given
    finished_at: str | None = None  # None: the time of the import
    argv: tuple[str, ...] = ()  # the original command line (the import's own when empty)
    original_uuid: str | None = None  # the exported run's uuid: importing it twice is refused
