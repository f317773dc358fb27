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

from iobench.errors import UserError
from iobench.jsontext import first_bad
from iobench.model import DIRECTIONS
from iobench.schemas import DOCUMENT_VERSION, check_run_document
from iobench.store.repository import ResultRecord, TargetRecord

_HINT = "give the file `iobench export RUN --format json` (or `show RUN --json`) wrote, unchanged"


def is_run_document(value: Any) -> bool:
    """Whether parsed JSON claims to be an iobench run document."""
    return isinstance(value, Mapping) and value.get("kind") == "run" and "schema_version" in value


class _Doc:
    """Typed access to the document, with errors that name the file and the key."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, what: str) -> UserError:
        return UserError(f"{self.path}: {where}: {what}", _HINT)

    def get(self, obj: Mapping[str, Any], key: str, kinds: Any, where: str) -> Any:
        value = obj.get(key)
        wanted = _tuple(kinds)
        if not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted):
            names = " or ".join(_name(k) for k in wanted)
            raise self.fail(where, f"{key!r} must be {names}, not {_show(value)}")
        return value


def _tuple(kinds: Any) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def _name(kind: type) -> str:
    return {
        str: "text",
        int: "a whole number",
        float: "a number",
        dict: "an object",
        list: "a list",
        bool: "true or false",
        type(None): "null",
    }.get(kind, kind.__name__)


def _show(value: Any) -> str:
    return "missing" if value is None else f"{type(value).__name__} {str(value)[:40]!r}"


_OPT_STR = (str, type(None))
_OPT_INT = (int, type(None))


def plan_run_document(doc: Mapping[str, Any], path: str) -> Any:
    """The plan for one exported run document; UserError naming the file and the key when
    it is not one this iobench can read."""
    from iobench.importer import ImportPlan  # the importer imports this module

    d = _Doc(path)
    bad = first_bad(doc)
    if bad is not None:
        raise UserError(
            f"{path}: {bad[0]}: {bad[1]}",
            "iobench never writes that, so the file was changed after the export; export "
            "the run again",
        )
    version = doc.get("schema_version")
    if version != DOCUMENT_VERSION:
        newer = isinstance(version, int) and version > DOCUMENT_VERSION
        raise UserError(
            f"{path} is an iobench run document of schema "
            f"{version if isinstance(version, int) else repr(str(version)[:20])}; this "
            f"iobench reads schema {DOCUMENT_VERSION}",
            "upgrade iobench to import it" if newer else _HINT,
        )
    problem = check_run_document(doc)  # every field read below, typed and in range
    if problem is not None:
        raise d.fail(*problem)
    status = d.get(doc, "status", str, "the run")
    error = d.get(doc, "error", _OPT_STR, "the run")
    if status == "running":  # exported while it ran, or its process died: it did not finish
        status = "aborted"
        error = error or "the run had not finished when it was exported"
    raw_targets = d.get(doc, "targets", list, "the run")
    targets = []
    for i, t in enumerate(raw_targets):
        where = f"targets[{i}]"
        if not isinstance(t, Mapping):
            raise d.fail(where, "must be an object")
        targets.append(
            TargetRecord(
                position=i,
                spec=d.get(t, "spec", str, where),
                path=d.get(t, "path", str, where),
                kind=d.get(t, "kind", str, where),
                size_bytes=d.get(t, "size_bytes", _OPT_INT, where),
                context=d.get(t, "context", dict, where),
            )
        )
    raw_results = d.get(doc, "results", list, "the run")
    # `show --json` has no positions: the suite order is the order workloads first appear.
    names = [r.get("workload") for r in raw_results if isinstance(r, Mapping)]
    first = {name: i for i, name in enumerate(dict.fromkeys(names))}
    results = tuple(_result(d, r, i, first) for i, r in enumerate(raw_results))
    seen: dict[tuple[str, str, int, str | None, int | None], int] = {}
    for i, r in enumerate(results):
        key = (r.target, r.workload, r.repetition, r.client, r.clients)
        if key in seen:
            raise d.fail(
                f"results[{i}]",
                f"repeats results[{seen[key]}] (target {r.target!r}, workload "
                f"{r.workload!r}, repetition {r.repetition})",
            )
        seen[key] = i
    suite_def = dict(d.get(doc, "suite_def", (dict, type(None)), "the run") or {})
    suite_def.setdefault("source", doc.get("suite_source"))
    # The run as first measured: an export of an imported run names the original, so the
    # same measurement is recognised however many databases it passed through.
    uuid = d.get(doc, "uuid", str, "the run")
    suite_def.setdefault(
        "imported_from",
        {
            "run_id": doc.get("run_id"),
            "uuid": uuid,
            "origin": doc.get("origin"),
            "source": doc.get("source"),
            "iobench_version": doc.get("iobench_version"),
        },
    )
    original = suite_def["imported_from"]
    if not isinstance(original, Mapping) or not isinstance(original.get("uuid"), str):
        raise d.fail("suite_def", "'imported_from' must be an object with a 'uuid'")
    argv = d.get(doc, "argv", (list, type(None)), "the run") or []
    warnings = d.get(doc, "warnings", list, "the run")
    if not all(isinstance(w, Mapping) for w in warnings):
        raise d.fail("warnings", "every warning must be an object")
    return ImportPlan(
        path=path,
        source=str(Path(path).resolve()),
        started_at=d.get(doc, "started_at", str, "the run"),
        time_source="document",
        fio_version=d.get(doc, "fio_version", _OPT_STR, "the run"),
        client_mode=False,
        host=d.get(doc, "host", dict, "the run"),
        suite_def=suite_def,
        targets=tuple(targets),
        results=results,
        warnings=tuple(dict(w) for w in warnings),
        status=status,
        error=error,
        suite=d.get(doc, "suite", str, "the run"),
        label=d.get(doc, "label", _OPT_STR, "the run"),
        finished_at=d.get(doc, "finished_at", _OPT_STR, "the run"),
        argv=tuple(str(a) for a in argv),
        original_uuid=str(original["uuid"]),
    )


def _result(d: _Doc, r: Any, i: int, first: Mapping[Any, int]) -> ResultRecord:
    where = f"results[{i}]"
    if not isinstance(r, Mapping):
        raise d.fail(where, "must be an object")
    position = d.get(r, "position", _OPT_INT, where)
    status = d.get(r, "status", str, where)
    if status not in ("ok", "failed"):
        raise d.fail(where, f"status {status!r} is not ok or failed")
    sections: dict[str, Any] = {k: d.get(r, k, (dict, type(None)), where) for k in DIRECTIONS}
    for k, section in sections.items():
        if section is not None:
            for key in ("iops", "bw_bytes"):
                d.get(section, key, (int, float, type(None)), f"{where}.{k}")
    cpu = d.get(r, "cpu", (dict, type(None)), where)
    metrics: dict[str, Any] | None = None
    if status == "ok" or cpu is not None or any(sections.values()):
        metrics = {
            "metrics_version": r.get("metrics_version") or 1,
            **sections,
            "cpu": cpu,
            "error": r.get("fio_errno") or 0,
            "disk_util": d.get(r, "disk_util", (list, type(None)), where) or [],
        }
        for key in ("host_cpu", "steadystate"):  # present since iobench 0.1 (issue 4)
            value = d.get(r, key, (dict, type(None)), where)
            if value is not None:
                metrics[key] = value
    samples = d.get(r, "samples", (dict, type(None)), where)
    if samples is not None:
        _check_samples(d, samples, f"{where}.samples")
    repetition = d.get(r, "repetition", int, where)
    if repetition < 1:
        raise d.fail(where, f"'repetition' must be 1 or more, not {repetition}")
    return ResultRecord(
        target=d.get(r, "target", str, where),
        workload=d.get(r, "workload", str, where),
        position=first.get(r.get("workload"), 0) if position is None else position,
        status=status,
        params=d.get(r, "params", dict, where),
        metrics=metrics,
        job_file=d.get(r, "job_file", _OPT_STR, where) or "",
        fio_argv=[str(a) for a in d.get(r, "fio_argv", (list, type(None)), where) or []],
        fio_rc=d.get(r, "fio_rc", _OPT_INT, where),
        fio_version=d.get(r, "fio_version", _OPT_STR, where),
        raw_output=None,
        fio_stdout=None,
        fio_stderr=None,
        error=d.get(r, "error", _OPT_STR, where),
        started_at=d.get(r, "started_at", str, where),
        finished_at=d.get(r, "finished_at", str, where),
        repetition=repetition,
        samples=samples,
        client=d.get(r, "client", _OPT_STR, where),
        clients=d.get(r, "clients", _OPT_INT, where),
    )


_SERIES = ("iops", "bw_bytes", "lat_mean_ns")


def _check_samples(d: _Doc, samples: Mapping[str, Any], where: str) -> None:
    """Per-second samples as fio/logs.py writes them: equal-length lists of numbers."""
    d.get(samples, "interval_ms", int, where)
    for direction in DIRECTIONS:
        series = d.get(samples, direction, (dict, type(None)), where)
        if series is None:
            continue
        at = f"{where}.{direction}"
        times = d.get(series, "t_s", list, at)
        for key in _SERIES:
            values = d.get(series, key, list, at)
            if len(values) != len(times):
                raise d.fail(at, f"{key!r} has {len(values)} values for {len(times)} seconds")
            if not all(v is None or _number(v) for v in values):
                raise d.fail(at, f"{key!r} must hold numbers or null")
        if not all(_number(t) for t in times):
            raise d.fail(at, "'t_s' must hold numbers")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
