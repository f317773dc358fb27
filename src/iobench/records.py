"""The run model: a stored run, its targets and results, as frozen dataclasses that every
layer reads (analysis, reports, documents, the store).

model.py holds what goes into fio (workloads, suites, targets) and what fio's output
parses to; this module holds what iobench keeps of a run and reads back. The store
(iobench.store) maps database rows to these records and back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from iobench.model import DIRECTIONS


@dataclass(frozen=True)
class TargetRecord:
    position: int
    spec: str
    path: str
    kind: str
    size_bytes: int | None
    context: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """The target as run documents hold it (without its position: the list's order)."""
        return {
            "spec": self.spec,
            "path": self.path,
            "kind": self.kind,
            "size_bytes": self.size_bytes,
            "context": self.context,
        }


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

    def document(self, *, full: bool = True) -> dict[str, Any]:
        """The result as a run document holds it (docs/json-schema.md), from what is stored
        and nothing computed; ``full`` (an export) adds its place, fio's errno and the
        evidence that fits in a document (job file, argv, return code; not the raw output).
        """
        metrics = self.metrics or {}
        doc: dict[str, Any] = {
            "workload": self.workload,
            "target": self.target,
            "repetition": self.repetition,
            # --clients: the client as the user named it, "all" for the aggregate of the
            # clients; null on a run on one host. ``clients``: how many clients ran this step.
            "client": self.client,
            "clients": self.clients,
            "status": self.status,
            "params": self.params,
        }
        for d in DIRECTIONS:
            doc[d] = metrics.get(d)
        doc["cpu"] = metrics.get("cpu")
        doc["host_cpu"] = metrics.get("host_cpu")  # the whole host's CPU load while it ran
        doc["steadystate"] = metrics.get("steadystate")  # fio's ss= window, when used
        doc["disk_util"] = metrics.get("disk_util", [])
        doc["fio_version"] = self.fio_version
        doc["error"] = self.error
        doc["started_at"] = self.started_at
        doc["finished_at"] = self.finished_at
        doc["samples"] = self.samples
        if full:
            doc["position"] = self.position
            doc["metrics_version"] = metrics.get("metrics_version")
            doc["fio_errno"] = metrics.get("error")
            doc["job_file"] = self.job_file
            doc["fio_argv"] = self.fio_argv
            doc["fio_rc"] = self.fio_rc
        return doc


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

    def document(self) -> dict[str, Any]:
        """The run's own fields as a run document holds them, in its order, from what is
        stored and nothing computed (no envelope, results, summary or analysis)."""
        return {
            "run_id": self.id,
            "uuid": self.uuid,
            "status": self.status,
            "suite": self.suite,
            "suite_source": self.suite_def.get("source"),
            "label": self.label,
            "origin": self.origin,
            "source": self.source,
            "fio_version": self.fio_version,
            "iobench_version": self.iobench_version,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "error": self.error,
            "host": self.host,
            "targets": [t.as_dict() for t in self.targets],
            "warnings": self.warnings,
        }


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
