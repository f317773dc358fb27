"""An iobench run document (``iobench export RUN --format json``) read back as a run.

Pure: the parsed document -> an :class:`iobench.importer.ImportPlan`, so ``iobench import``
stores it like any other imported file (all files checked first, one run per file). What
comes back is the run as it was exported: suite, label, status, host and target context,
warnings, every result with its parameters, metrics (histogram bins included when the
document has them), per-second samples and the evidence a document carries (job file, fio's
argv and return code; fio's raw output is not exported). The run is marked ``imported``;
``suite_def.imported_from`` keeps the original run's id, uuid, origin and source, which is
how importing the same run twice is recognised.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iobench.documents import VERSIONS
from iobench.documents.schema import check_run_document
from iobench.errors import UserError
from iobench.jsontext import first_bad
from iobench.model import DIRECTIONS
from iobench.records import ResultRecord, TargetRecord

_HINT = "give the file `iobench export RUN --format json` (or `show RUN --json`) wrote, unchanged"


def is_run_document(value: Any) -> bool:
    """Whether parsed JSON claims to be an iobench run document."""
    return isinstance(value, Mapping) and value.get("kind") == "run" and "schema_version" in value


def _fail(path: str, where: str, what: str) -> UserError:
    return UserError(f"{path}: {where}: {what}", _HINT)


def plan_run_document(doc: Mapping[str, Any], path: str) -> Any:
    """The plan for one exported run document; UserError naming the file and the key when
    it is not one this iobench can read. Every field read here is typed and bounded by the
    run document's schema (iobench.documents.schema), checked first; what a schema cannot say
    (results given twice, series of unequal length) is checked here."""
    from iobench.importer import ImportPlan  # the importer imports this module

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
    status, error = doc["status"], doc.get("error")
    if status == "running":  # exported while it ran, or its process died: it did not finish
        status = "aborted"
        error = error or "the run had not finished when it was exported"
    targets = tuple(
        TargetRecord(i, t["spec"], t["path"], t["kind"], t.get("size_bytes"), t["context"])
        for i, t in enumerate(doc["targets"])
    )
    raw_results = doc["results"]
    # `show --json` has no positions: the suite order is the order workloads first appear.
    first = {name: i for i, name in enumerate(dict.fromkeys(r["workload"] for r in raw_results))}
    results = tuple(_result(path, r, i, first) for i, r in enumerate(raw_results))
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
    suite_def = dict(doc.get("suite_def") or {})
    suite_def.setdefault("source", doc.get("suite_source"))
    # The run as first measured: an export of an imported run names the original, so the
    # same measurement is recognised however many databases it passed through.
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
    return ImportPlan(
        path=path,
        source=str(Path(path).resolve()),
        started_at=doc["started_at"],
        time_source="document",
        fio_version=doc.get("fio_version"),
        client_mode=False,
        host=doc["host"],
        suite_def=suite_def,
        targets=targets,
        results=results,
        warnings=tuple(dict(w) for w in doc["warnings"]),
        status=status,
        error=error,
        suite=doc["suite"],
        label=doc.get("label"),
        finished_at=doc.get("finished_at"),
        argv=tuple(doc.get("argv") or ()),
        original_uuid=suite_def["imported_from"]["uuid"],
    )


def _result(path: str, r: Mapping[str, Any], i: int, first: Mapping[str, int]) -> ResultRecord:
    sections: dict[str, Any] = {k: r.get(k) for k in DIRECTIONS}
    metrics: dict[str, Any] | None = None
    if r["status"] == "ok" or r.get("cpu") is not None or any(sections.values()):
        metrics = {
            "metrics_version": r.get("metrics_version") or 1,
            **sections,
            "cpu": r.get("cpu"),
            "error": r.get("fio_errno") or 0,
            "disk_util": r.get("disk_util") or [],
        }
        for key in ("host_cpu", "steadystate"):  # present since iobench 0.1 (issue 4)
            if r.get(key) is not None:
                metrics[key] = r[key]
    samples: dict[str, Any] = r.get("samples") or {}
    for direction in DIRECTIONS:
        series: dict[str, list[Any]] = samples.get(direction) or {}
        for key in ("iops", "bw_bytes", "lat_mean_ns") if series else ():
            if len(series[key]) != len(series["t_s"]):
                raise _fail(
                    path,
                    f"results[{i}].samples.{direction}",
                    f"{key!r} has {len(series[key])} values for {len(series['t_s'])} seconds",
                )
    position = r.get("position")
    return ResultRecord(
        target=r["target"],
        workload=r["workload"],
        position=first.get(r["workload"], 0) if position is None else position,
        status=r["status"],
        params=r["params"],
        metrics=metrics,
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
    )
