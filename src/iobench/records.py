"""The run model: a stored run, its targets and results, as frozen dataclasses that every
layer reads (analysis, reports, documents, the store).

model.py holds what goes into fio (workloads, suites, targets) and what fio's output
parses to; this module holds what iobench keeps of a run and reads back. The store
(iobench.store) maps database rows to these records and back; the documents
(iobench.documents) write them as JSON and read them back from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The suite of a run imported from fio output files.
IMPORTED_SUITE = "imported"


@dataclass(frozen=True)
class TargetRecord:
    position: int
    spec: str
    path: str
    kind: str
    size_bytes: int | None
    context: dict[str, Any]


@dataclass(frozen=True)
class ResultRecord:
    """One workload on one target, with the evidence it came from."""

    target: str
    workload: str
    position: int
    status: str  # "ok" | "failed"
    params: dict[str, Any]
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


@dataclass(frozen=True)
class RunRecord:
    id: int
    uuid: str
    status: str
    suite: str
    suite_def: dict[str, Any]
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


@dataclass(frozen=True)
class ImportedRun:
    """A run read from a file, not stored yet: everything one imported file becomes (its
    run row, targets and results). Made from fio output by iobench.importer and from a run
    document by iobench.documents.run; stored by importer.store_plan."""

    path: str  # as the user gave it (for messages)
    source: str  # absolute path, stored as the run's source
    started_at: str  # ISO 8601 UTC
    time_source: str  # "job_start" | "timestamp" | "mtime" | "import time" | "document"
    fio_version: str | None
    client_mode: bool
    host: dict[str, Any]
    suite_def: dict[str, Any]
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
