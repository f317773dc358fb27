"""``iobench export``: one stored run as CSV (a row per workload, direction and repetition,
and per part of a group of jobs run together) or as the JSON document ``iobench show RUN
--json`` prints.

CSV: units are in the column names (``_bytes``, ``_bytes_per_s``, ``_ns``, ``_s``,
``_ms``, ``_pct``) and values are never converted; a value that was not measured or is
not known is an empty cell, never 0. Numbers are written exactly (Python's shortest
round-tripping repr), so :func:`read_csv` gives back the stored numbers. Text is written as
it is stored, except that the CSV usually goes to a terminal: control and invisible format
characters, which a terminal would act on, are written as visible escapes (``\\x1b``,
``\\n``; docs/safety.md), so every row is one line.

JSON: the document's data exactly; such characters are written as JSON ``\\u`` escapes,
which read back as the same strings.
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any, Literal

from iobench.analysis.results import with_parts
from iobench.model import DIRECTIONS
from iobench.records import ResultRecord, RunRecord
from iobench.report.literal import json_literal, literal
from iobench.report.printed import run_document

Kind = Literal["str", "num", "bool"]

# (column, kind). Kept stable: add columns at the end of a group, never rename.
COLUMNS: tuple[tuple[str, Kind], ...] = (
    ("run_id", "num"),
    ("label", "str"),
    ("target", "str"),
    ("workload", "str"),
    ("repetition", "num"),
    ("direction", "str"),
    ("rw", "str"),
    ("bs_bytes", "num"),
    ("iodepth", "num"),
    ("numjobs", "num"),
    ("ioengine", "str"),
    ("direct", "bool"),
    ("runtime_s", "num"),
    ("ramp_s", "num"),
    ("size_bytes", "num"),
    ("rwmixread_pct", "num"),
    ("iops", "num"),
    ("bw_bytes_per_s", "num"),
    ("io_bytes", "num"),
    ("total_ios", "num"),
    ("runtime_ms", "num"),
    ("iops_submitted", "num"),  # fio's iops; iops above: IOs completed (iobench.iocount)
    ("ios_completed", "num"),
    ("ios_completed_from", "str"),
    ("lat_mean_ns", "num"),
    ("lat_min_ns", "num"),
    ("lat_max_ns", "num"),
    ("lat_stddev_ns", "num"),
    ("lat_p50_ns", "num"),
    ("lat_p90_ns", "num"),
    ("lat_p95_ns", "num"),
    ("lat_p99_ns", "num"),
    ("lat_p99_9_ns", "num"),
    ("lat_p99_99_ns", "num"),
    ("clat_mean_ns", "num"),
    ("clat_p50_ns", "num"),
    ("clat_p99_ns", "num"),
    ("clat_p99_9_ns", "num"),
    ("slat_mean_ns", "num"),
    ("usr_cpu_pct", "num"),
    ("sys_cpu_pct", "num"),
    ("status", "str"),
    ("error", "str"),
    ("client", "str"),  # --clients: the client as named, "all" for the aggregate
    ("clients", "num"),  # how many clients ran the step
    ("part", "str"),  # a part of a group of jobs run together; empty: the whole workload
)
HEADER: tuple[str, ...] = tuple(name for name, _ in COLUMNS)
_KINDS: dict[str, Kind] = dict(COLUMNS)

# CSV column -> key in params.
_PARAM_COLUMNS = {
    "rw": "rw",
    "bs_bytes": "bs",
    "iodepth": "iodepth",
    "numjobs": "numjobs",
    "ioengine": "ioengine",
    "direct": "direct",
    "runtime_s": "runtime_s",
    "ramp_s": "ramp_s",
    "size_bytes": "size",
    "rwmixread_pct": "rwmixread",
}
# CSV column -> key in a direction's metrics.
_DIRECTION_COLUMNS = {
    "iops": "iops",
    "bw_bytes_per_s": "bw_bytes",
    "io_bytes": "io_bytes",
    "total_ios": "total_ios",
    "runtime_ms": "runtime_ms",
    "iops_submitted": "iops_submitted",
    "ios_completed": "ios_completed",
    "ios_completed_from": "ios_completed_from",
}
# CSV column -> (latency kind, key in its stats).
_LATENCY_COLUMN = re.compile(r"^(lat|clat|slat)_(mean|min|max|stddev|p[0-9_]+)_ns$")


def _latency_key(column: str) -> tuple[str, str] | None:
    m = _LATENCY_COLUMN.match(column)
    if not m:
        return None
    return f"{m.group(1)}_ns", m.group(2).replace("_", ".")


def result_rows(run: RunRecord, r: ResultRecord) -> list[dict[str, Any]]:
    """The CSV rows of one result as typed values (None = empty cell): one per direction
    that did IO; one row with an empty direction when none did (or the workload failed)."""
    metrics = r.metrics or {}
    base: dict[str, Any] = {
        "run_id": run.id,
        "label": run.label,
        "target": r.target,
        "workload": r.workload,
        "repetition": r.repetition,
        "status": r.status,
        "error": r.error,
        "client": r.client,
        "clients": r.clients,
        "part": r.part,
    }
    for column, key in _PARAM_COLUMNS.items():
        base[column] = r.params.get(key)
    cpu = metrics.get("cpu") or {}
    base["usr_cpu_pct"] = cpu.get("usr_pct")
    base["sys_cpu_pct"] = cpu.get("sys_pct")

    rows: list[dict[str, Any]] = []
    for d in DIRECTIONS:
        section = metrics.get(d)
        if not section:
            continue
        row = dict(base, direction=d)
        for column, key in _DIRECTION_COLUMNS.items():
            row[column] = section.get(key)
        for column in HEADER:
            where = _latency_key(column)
            if where is not None:
                stats = section.get(where[0]) or {}
                row[column] = stats.get(where[1])
        rows.append(row)
    if not rows:
        rows.append(dict(base, direction=None))
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back as the same float
    return literal(value)


def export_csv(run: RunRecord) -> str:
    """One row per (target, workload, direction, repetition), in the run's stored order; a
    group of jobs run together followed by the rows of each part (``part``)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    for r in with_parts(run.results):
        for row in result_rows(run, r):
            writer.writerow([_cell(row.get(column)) for column in HEADER])
    return buffer.getvalue()


def export_json(run: RunRecord) -> str:
    """The document ``iobench show RUN --json`` prints, with everything ``iobench import``
    needs to restore the run elsewhere: histogram bins, argv, suite definition, evidence
    (schema: docs/json-schema.md)."""
    text = json.dumps(run_document(run, full=True), indent=2, ensure_ascii=False)
    return json_literal(text) + "\n"


_INT = re.compile(r"^-?\d+$")


def _value(kind: Kind, text: str) -> Any:
    if text == "":
        return None
    if kind == "num":
        return int(text) if _INT.match(text) else float(text)
    if kind == "bool":
        if text not in ("true", "false"):
            raise ValueError(f"expected true or false, not {text!r}")
        return text == "true"
    return text


def read_csv(text: str) -> list[dict[str, Any]]:
    """Read an exported CSV back into typed rows: numbers as int or float, ``direct`` as
    bool, empty cells as None. Columns this version does not know are kept as text."""
    rows: list[dict[str, Any]] = []
    for i, raw in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        row: dict[str, Any] = {}
        for column, cell in raw.items():
            if column is None:
                raise ValueError(f"line {i}: more cells than columns")
            try:
                row[column] = _value(_KINDS.get(column, "str"), cell or "")
            except ValueError as e:
                raise ValueError(f"line {i}, column {column}: {e}") from None
        rows.append(row)
    return rows
