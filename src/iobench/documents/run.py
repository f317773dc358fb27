"""The run document (``kind: "run"``, docs/json-schema.md), both ways: a stored run's
records written as the document holds them, and an exported document read back into
records. Writer and reader sit together so that what one writes the other reads.

Writing (:func:`run_fields`, :func:`result_fields`, :func:`target_fields`): what is stored
and nothing computed; iobench.report.printed adds what is computed (summary,
analyses) for the commands that print a run. :func:`stored_document` is the whole stored
part, which the store checks every run it reads against (iobench.documents.schema).

Reading (:func:`read_run_document`, for ``iobench import``): an exported document becomes
an :class:`~iobench.records.ImportedRun`, stored like any other imported file. What comes
back is the run as it was exported: suite, label, status, host and target context,
warnings, every result with its parameters, metrics (histogram bins included when the
document has them), per-second samples and the evidence a document carries (job file,
fio's argv and return code; fio's raw output is not exported). The run is marked
``imported``; ``suite_def.imported_from`` keeps the original run's id, uuid, origin and
source, which is how importing the same run twice is recognised.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iobench.documents import VERSIONS, envelope
from iobench.documents.schema import check_run_document
from iobench.errors import UserError
from iobench.iocount import METRICS_VERSION, upgraded
from iobench.jsontext import first_bad
from iobench.model import DIRECTIONS
from iobench.records import (
    ImportedRun,
    PartResult,
    RecordError,
    ResultRecord,
    RunRecord,
    SuiteDefinition,
    TargetRecord,
)

# -- writing -----------------------------------------------------------------------------------


def target_fields(t: TargetRecord) -> dict[str, Any]:
    """The target as run documents hold it (without its position: the list's order)."""
    return {
        "spec": t.spec,
        "path": t.path,
        "kind": t.kind,
        "size_bytes": t.size_bytes,
        "context": t.context,
    }


def result_fields(r: ResultRecord, *, full: bool = True) -> dict[str, Any]:
    """The result as a run document holds it, from what is stored and nothing computed;
    ``full`` (an export) adds its place, fio's errno and the evidence that fits in a
    document (job file, argv, return code; not the raw output)."""
    metrics = r.metrics or {}
    doc: dict[str, Any] = {
        "workload": r.workload,
        "target": r.target,
        "repetition": r.repetition,
        # --clients: the client as the user named it, "all" for the aggregate of the
        # clients; null on a run on one host. ``clients``: how many clients ran this step.
        "client": r.client,
        "clients": r.clients,
        "status": r.status,
        "params": r.params,
    }
    for d in DIRECTIONS:
        doc[d] = metrics.get(d)
    doc["cpu"] = metrics.get("cpu")
    doc["host_cpu"] = metrics.get("host_cpu")  # the whole host's CPU load while it ran
    doc["steadystate"] = metrics.get("steadystate")  # fio's ss= window, when used
    doc["disk_util"] = metrics.get("disk_util", [])
    doc["fio_version"] = r.fio_version
    doc["error"] = r.error
    doc["started_at"] = r.started_at
    doc["finished_at"] = r.finished_at
    doc["samples"] = r.samples
    if r.parts:  # a group of jobs run together: each part's figures (the above: the group's)
        doc["parts"] = [part_fields(part, full=full) for part in r.parts]
    if full:
        doc["position"] = r.position
        doc["metrics_version"] = metrics.get("metrics_version")
        doc["fio_errno"] = metrics.get("error")
        doc["job_file"] = r.job_file
        doc["fio_argv"] = r.fio_argv
        doc["fio_rc"] = r.fio_rc
        if r.client == "all" and metrics.get("clients") is not None:
            # The clients' summary of the step (skew, stragglers, the window the aggregate
            # is over, the device check); `show --json` has it under clients.steps.
            doc["clients_step"] = metrics["clients"]
    return doc


def part_fields(part: PartResult, *, full: bool = True) -> dict[str, Any]:
    """One part of a group's result as a run document holds it: its name, parameters,
    figures (the result's keys) and samples."""
    metrics = part.metrics or {}
    doc: dict[str, Any] = {"name": part.name, "params": part.params}
    for d in DIRECTIONS:
        doc[d] = metrics.get(d)
    doc["cpu"] = metrics.get("cpu")
    doc["samples"] = part.samples
    if full:
        doc["metrics_version"] = metrics.get("metrics_version")
        doc["fio_errno"] = metrics.get("error")
    return doc


def run_fields(run: RunRecord) -> dict[str, Any]:
    """The run's own fields as a run document holds them, in its order, from what is
    stored and nothing computed (no envelope, results, summary or analysis); a run that
    was preconditioned has what that did (``precondition``, also in ``suite_def``)."""
    fields = {
        "run_id": run.id,
        "uuid": run.uuid,
        "status": run.status,
        "suite": run.suite,
        "suite_source": run.suite_def.source,
        "label": run.label,
        "origin": run.origin,
        "source": run.source,
        "fio_version": run.fio_version,
        "iobench_version": run.iobench_version,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "error": run.error,
        "host": run.host,
        "targets": [target_fields(t) for t in run.targets],
        "warnings": run.warnings,
    }
    if run.suite_def.precondition is not None:
        fields["precondition"] = run.suite_def.precondition
    return fields


def stored_document(run: RunRecord) -> dict[str, Any]:
    """A stored run as the full run document it would export, without what is computed
    from it (summary, analysis): what the store checks every run it reads against."""
    return {
        **envelope("run"),
        **run_fields(run),
        "results": [result_fields(r, full=True) for r in run.results],
        "argv": run.argv,
        "suite_def": run.suite_def.as_dict(),
    }


# -- reading -----------------------------------------------------------------------------------

_HINT = "give the file `iobench export RUN --format json` (or `show RUN --json`) wrote, unchanged"


def is_run_document(value: Any) -> bool:
    """Whether parsed JSON claims to be an iobench run document."""
    return isinstance(value, Mapping) and value.get("kind") == "run" and "schema_version" in value


def _fail(path: str, where: str, what: str) -> UserError:
    return UserError(f"{path}: {where}: {what}", _HINT)


def read_run_document(doc: Mapping[str, Any], path: str) -> ImportedRun:
    """The run an exported run document holds, ready to be stored; UserError naming the
    file and the key when it is not one this iobench can read. Every field read here is
    typed and bounded by the run document's schema (iobench.documents.schema), checked
    first; what a schema cannot say (results given twice, series of unequal length) is
    checked here."""
    _check(doc, path)
    status, error = doc["status"], doc.get("error")
    if status == "running":  # exported while it ran, or its process died: it did not finish
        status = "aborted"
        error = error or "the run had not finished when it was exported"
    suite_def = _suite_def(doc, path)
    return ImportedRun(
        path=path,
        source=str(Path(path).resolve()),
        started_at=doc["started_at"],
        time_source="document",
        fio_version=doc.get("fio_version"),
        client_mode=False,
        host=doc["host"],
        suite_def=suite_def,
        targets=tuple(
            TargetRecord(i, t["spec"], t["path"], t["kind"], t.get("size_bytes"), t["context"])
            for i, t in enumerate(doc["targets"])
        ),
        results=_results(doc["results"], path),
        warnings=tuple(dict(w) for w in doc["warnings"]),
        status=status,
        error=error,
        suite=doc["suite"],
        label=doc.get("label"),
        finished_at=doc.get("finished_at"),
        argv=tuple(doc.get("argv") or ()),
        original_uuid=suite_def.imported_from.uuid if suite_def.imported_from else None,
    )


def _check(doc: Mapping[str, Any], path: str) -> None:
    """UserError unless ``doc`` is a run document of the version this iobench reads, every
    field of the type its schema gives."""
    bad = first_bad(doc)
    if bad is not None:
        raise UserError(
            f"{path}: {bad[0]}: {bad[1]}",
            "iobench never writes that, so the file was changed after the export; export "
            "the run again",
        )
    version, readable = doc.get("schema_version"), VERSIONS["run"]
    if version != readable:
        newer = isinstance(version, int) and version > readable
        raise UserError(
            f"{path} is an iobench run document of schema "
            f"{version if isinstance(version, int) else repr(str(version)[:20])}; this "
            f"iobench reads schema {readable}",
            "upgrade iobench to import it" if newer else _HINT,
        )
    problem = check_run_document(doc)
    if problem is not None:
        raise _fail(path, *problem)


def _suite_def(doc: Mapping[str, Any], path: str) -> SuiteDefinition:
    """The document's suite definition with the run it came from (``imported_from``): an
    export of an imported run names the original, so the same measurement is recognised
    however many databases it passed through."""
    suite_def = dict(doc.get("suite_def") or {})
    suite_def.setdefault("source", doc.get("suite_source"))
    if doc.get("precondition") is not None:  # `show --json` has no suite_def
        suite_def.setdefault("precondition", doc["precondition"])
    suite_def.setdefault(
        "imported_from",
        {
            "run_id": doc.get("run_id"),
            "uuid": doc["uuid"],
            "origin": doc.get("origin"),
            "source": doc.get("source"),
            "iobench_version": doc.get("iobench_version"),
        },
    )
    try:
        return SuiteDefinition.from_dict(suite_def)
    except RecordError as e:  # the schema types every key: a bug if this is reached
        raise _fail(path, f"suite_def.{e.where}", e.what) from None


def _results(raw: list[Mapping[str, Any]], path: str) -> tuple[ResultRecord, ...]:
    """Every result of the document, refused when one is given twice."""
    # `show --json` has no positions: the suite order is the order workloads first appear.
    first = {name: i for i, name in enumerate(dict.fromkeys(r["workload"] for r in raw))}
    results = tuple(_result(path, r, i, first) for i, r in enumerate(raw))
    seen: dict[tuple[str, str, int, str | None, int | None], int] = {}
    for i, r in enumerate(results):
        key = (r.target, r.workload, r.repetition, r.client, r.clients)
        if key in seen:
            raise _fail(
                path,
                f"results[{i}]",
                f"repeats results[{seen[key]}] (target {r.target!r}, workload "
                f"{r.workload!r}, repetition {r.repetition})",
            )
        seen[key] = i
    return results


def _metrics(r: Mapping[str, Any]) -> dict[str, Any] | None:
    """The stored metrics of a result, as metrics.job_metrics made them (None for a failed
    result without any)."""
    sections: dict[str, Any] = {k: r.get(k) for k in DIRECTIONS}
    if not (r["status"] == "ok" or r.get("cpu") is not None or any(sections.values())):
        return None
    # `show --json` omits the version: sections with fio's iops beside iobench's are 2's.
    counted = any(isinstance(v, Mapping) and "iops_submitted" in v for v in sections.values())
    metrics = {
        "metrics_version": r.get("metrics_version") or (METRICS_VERSION if counted else 1),
        **sections,
        "cpu": r.get("cpu"),
        "error": r.get("fio_errno") or 0,
        "disk_util": r.get("disk_util") or [],
    }
    for key in ("host_cpu", "steadystate"):  # present since iobench 0.1 (issue 4)
        if r.get(key) is not None:
            metrics[key] = r[key]
    if r.get("clients_step") is not None:  # since issue 26
        metrics["clients"] = r["clients_step"]
    # An export whose iops are fio's (metrics version 1) is read with iobench's (iocount).
    return upgraded(metrics, r["params"])


def _part(path: str, p: Mapping[str, Any], i: int, k: int) -> PartResult:
    _check_samples(path, p, i, f".parts[{k}]")
    metrics = _metrics({**p, "status": "ok"}) or {}
    metrics.pop("disk_util", None)  # the group's (one fio run), not a part's
    return PartResult(name=p["name"], params=p["params"], metrics=metrics, samples=p.get("samples"))


def _check_samples(path: str, r: Mapping[str, Any], i: int, where: str = "") -> None:
    samples: dict[str, Any] = r.get("samples") or {}
    for direction in DIRECTIONS:
        series: dict[str, list[Any]] = samples.get(direction) or {}
        for key in ("iops", "bw_bytes", "lat_mean_ns") if series else ():
            if len(series[key]) != len(series["t_s"]):
                raise _fail(
                    path,
                    f"results[{i}]{where}.samples.{direction}",
                    f"{key!r} has {len(series[key])} values for {len(series['t_s'])} seconds",
                )


def _result(path: str, r: Mapping[str, Any], i: int, first: Mapping[str, int]) -> ResultRecord:
    _check_samples(path, r, i)
    position = r.get("position")
    return ResultRecord(
        target=r["target"],
        workload=r["workload"],
        position=first.get(r["workload"], 0) if position is None else position,
        status=r["status"],
        params=r["params"],
        metrics=_metrics(r),
        job_file=r.get("job_file") or "",
        fio_argv=list(r.get("fio_argv") or ()),
        fio_rc=r.get("fio_rc"),
        fio_version=r.get("fio_version"),
        raw_output=None,
        fio_stdout=None,
        fio_stderr=None,
        error=r.get("error"),
        started_at=r["started_at"],
        finished_at=r["finished_at"],
        repetition=r["repetition"],
        samples=r.get("samples"),
        client=r.get("client"),
        clients=r.get("clients"),
        parts=tuple(_part(path, p, i, k) for k, p in enumerate(r.get("parts") or ())),
    )
