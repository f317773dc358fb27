"""iobench export: CSV (a row per workload, direction and repetition) and JSON, read back.

Runs come from importing recorded fio outputs into a real SQLite file (no fio needed), and
from results written through the store's own API where a shape is needed that no fixture
has (repetitions, awkward text).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from iobench.export import HEADER, export_csv, export_json, read_csv
from iobench.importer import import_files
from iobench.model import DIRECTIONS
from iobench.records import ResultRecord, RunRecord, SuiteDefinition, TargetRecord
from iobench.report.printed import run_document
from iobench.store import Store

DATA = Path(__file__).parent / "data" / "fio-outputs"
EXTERNAL = DATA / "external"
RECORDED = DATA / "recorded"
PBENCH_8_JOBS = EXTERNAL / (
    "distributed-system-analysis__pbench__agent_tool-scripts_postprocess_samples_perf-fio-0_"
    "result_reference-result_fio-result.txt"
)
PKB_FIO2 = EXTERNAL / (
    "GoogleCloudPlatform__PerfKitBenchmarker__tests_data_fio_fio-parser-sample-result.json"
)

# CSV column -> where the number lives in a stored result (params, or a direction's metrics).
PARAM_OF = {
    "bs_bytes": "bs",
    "iodepth": "iodepth",
    "numjobs": "numjobs",
    "runtime_s": "runtime_s",
    "ramp_s": "ramp_s",
    "size_bytes": "size",
    "rwmixread_pct": "rwmixread",
    "direct": "direct",
}
METRIC_OF = {
    "iops": ("iops", None),
    "bw_bytes_per_s": ("bw_bytes", None),
    "io_bytes": ("io_bytes", None),
    "total_ios": ("total_ios", None),
    "runtime_ms": ("runtime_ms", None),
    "iops_submitted": ("iops_submitted", None),
    "ios_completed": ("ios_completed", None),
    "ios_completed_from": ("ios_completed_from", None),
    "lat_mean_ns": ("lat_ns", "mean"),
    "lat_min_ns": ("lat_ns", "min"),
    "lat_max_ns": ("lat_ns", "max"),
    "lat_stddev_ns": ("lat_ns", "stddev"),
    "lat_p50_ns": ("lat_ns", "p50"),
    "lat_p90_ns": ("lat_ns", "p90"),
    "lat_p95_ns": ("lat_ns", "p95"),
    "lat_p99_ns": ("lat_ns", "p99"),
    "lat_p99_9_ns": ("lat_ns", "p99.9"),
    "lat_p99_99_ns": ("lat_ns", "p99.99"),
    "clat_mean_ns": ("clat_ns", "mean"),
    "clat_p50_ns": ("clat_ns", "p50"),
    "clat_p99_ns": ("clat_ns", "p99"),
    "clat_p99_9_ns": ("clat_ns", "p99.9"),
    "slat_mean_ns": ("slat_ns", "mean"),
}


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with Store.open(tmp_path / "results.db") as s:
        yield s


def imported(store: Store, *paths: Path, label: str | None = None) -> RunRecord:
    (run_id,) = import_files(store, [str(p) for p in paths], label=label, argv=["iobench"])
    return store.get_run(run_id)


def stored_value(result: ResultRecord, direction: str, column: str) -> Any:
    if column in PARAM_OF:
        return result.params[PARAM_OF[column]]
    key, sub = METRIC_OF[column]
    assert result.metrics is not None
    section = result.metrics[direction]
    if sub is None:
        return section[key]
    return None if section[key] is None else section[key][sub]


def test_header_names_every_unit() -> None:
    text = export_csv(
        RunRecord(
            id=1, uuid="u", status="complete", suite="s", suite_def=SuiteDefinition(),
            label=None, argv=[],
            host={}, fio_version=None, iobench_version="0", warnings=[], error=None,
            started_at="t", finished_at=None,
        )
    )  # fmt: skip
    assert text == ",".join(HEADER) + "\n"
    quantities = [c for c in HEADER if c.startswith(("lat_", "clat_", "slat_"))]
    assert quantities and all(c.endswith("_ns") for c in quantities)
    for column in (
        "bs_bytes",
        "size_bytes",
        "bw_bytes_per_s",
        "io_bytes",
        "runtime_s",
        "ramp_s",
        "runtime_ms",
        "usr_cpu_pct",
        "sys_cpu_pct",
        "rwmixread_pct",
    ):
        assert column in HEADER  # fmt: skip
    assert "bw" not in HEADER and "bs" not in HEADER and "size" not in HEADER


def test_one_row_per_workload_and_direction(store: Store) -> None:
    run = imported(store, PKB_FIO2)  # five jobs, each reading or writing
    rows = read_csv(export_csv(run))
    expected = [
        (r.workload, d) for r in run.results for d in DIRECTIONS if r.metrics and r.metrics[d]
    ]
    assert len(expected) == 5 and {d for _, d in expected} == {"read", "write"}
    assert [(r["workload"], r["direction"]) for r in rows] == expected
    assert {(r["run_id"], r["repetition"], r["status"]) for r in rows} == {(run.id, 1, "ok")}


def test_csv_numbers_read_back_equal_the_stored_metrics(store: Store) -> None:
    run = imported(store, RECORDED / "psync-randrw-fsync-jsonplus.json", label='a,b "c"')
    rows = read_csv(export_csv(run))
    (result,) = run.results
    assert [r["direction"] for r in rows] == ["read", "write"]
    compared = 0
    for row in rows:
        assert row["label"] == 'a,b "c"'
        for column in (*PARAM_OF, *METRIC_OF):
            expected = stored_value(result, row["direction"], column)
            assert row[column] == expected, column
            assert type(row[column]) is type(expected), column
            compared += expected is not None
        assert row["usr_cpu_pct"] == result.metrics["cpu"]["usr_pct"]  # type: ignore[index]
        assert (row["rw"], row["ioengine"], row["error"]) == ("randrw", "psync", None)
    assert compared > 40


@pytest.mark.parametrize(
    "path",
    [
        PBENCH_8_JOBS,
        PKB_FIO2,
        RECORDED / "client-server-2-jsonplus.json",
        RECORDED / "numjobs2-group-reporting-randwrite-jsonplus.json",
        EXTERNAL / "louwrentius__fio-plot__example_data01_randread-01.json",
    ],
    ids=lambda p: p.name[:40],
)
def test_csv_round_trip_for_imported_files(store: Store, path: Path) -> None:
    run = imported(store, path)
    rows = read_csv(export_csv(run))
    expected_rows = [(r, d) for r in run.results for d in DIRECTIONS if r.metrics and r.metrics[d]]
    assert len(rows) == len(expected_rows)
    for row, (result, d) in zip(rows, expected_rows, strict=True):
        assert (row["target"], row["workload"], row["direction"]) == (
            result.target,
            result.workload,
            d,
        )
        for column in METRIC_OF:
            assert row[column] == stored_value(result, d, column), column


def test_missing_values_are_empty_cells_not_zero(store: Store) -> None:
    """fio 2.1.4 echoes no options and has no lat percentiles: those cells are empty."""
    run = imported(store, PKB_FIO2)
    lines = list(csv.DictReader(io.StringIO(export_csv(run))))
    first = lines[0]
    assert first["direction"] == "write"
    for column in (
        "rw",
        "bs_bytes",
        "iodepth",
        "numjobs",
        "ioengine",
        "direct",
        "runtime_s",
        "size_bytes",
        "lat_p99_ns",
        "label",
        "error",
    ):
        assert first[column] == "", column  # fmt: skip
    assert first["iops"] == "133.0" and first["clat_p99_ns"] == "823296000"
    assert not any(cell == "0" for line in lines for cell in line.values())


def test_a_failed_workload_has_one_row_with_its_error(store: Store) -> None:
    run = imported(store, RECORDED / "error-einval-direct-bs1000.json")
    (row,) = read_csv(export_csv(run))
    assert row["status"] == "failed"
    assert row["error"] == run.results[0].error
    assert row["workload"] == "badalign"


def store_run_with_repetitions(store: Store) -> RunRecord:
    run_id = store.create_run(
        suite="s",
        suite_def=SuiteDefinition(),
        label="rep",
        argv=[],
        host={},
        iobench_version="0",
        targets=[TargetRecord(0, "/mnt/x", "/mnt/x", "directory", None, {})],
    )
    for repetition, error in ((1, 'say "hi"\nbye'), (2, None)):
        read = {
            "iops": 100.5 * repetition,
            "bw_bytes": 411648.0,
            "io_bytes": 4116480,
            "total_ios": 1005,
            "runtime_ms": 10000,
            "lat_ns": None,
            "clat_ns": None,
            "slat_ns": None,
        }
        store.add_result(
            run_id,
            ResultRecord(
                target="/mnt/x",
                workload="w,1",
                position=0,
                status="ok",
                params={"rw": "read", "bs": 4096, "direct": False},
                metrics={
                    "metrics_version": 2,  # its iops as stored, not counted again
                    "read": read,
                    "write": None,
                    "trim": None,
                    "cpu": {"usr_pct": None, "sys_pct": 0.0},
                },
                job_file="",
                fio_argv=[],
                fio_rc=0,
                fio_version="3.33",
                raw_output=None,
                fio_stdout=None,
                fio_stderr=None,
                error=error,
                started_at="t",
                finished_at="t",
                repetition=repetition,
            ),
        )
    store.finish_run(run_id, status="complete", fio_version="3.33", warnings=[])
    return store.get_run(run_id)


def test_repetitions_are_rows_and_awkward_text_survives(store: Store) -> None:
    run = store_run_with_repetitions(store)
    rows = read_csv(export_csv(run))
    assert [(r["workload"], r["repetition"], r["iops"]) for r in rows] == [
        ("w,1", 1, 100.5),
        ("w,1", 2, 201.0),
    ]
    # A newline is written as an escape, like other control characters: a row is a line.
    assert rows[0]["error"] == 'say "hi"\\nbye' and rows[1]["error"] is None
    assert rows[0]["direct"] is False  # a real False, not a missing value
    assert rows[0]["usr_cpu_pct"] is None and rows[0]["sys_cpu_pct"] == 0.0


def test_json_export_is_the_show_document_with_bins_and_evidence(store: Store) -> None:
    for run in (
        imported(store, RECORDED / "client-server-2-jsonplus.json"),
        store_run_with_repetitions(store),
    ):
        text = export_json(run)
        assert text.endswith("}\n")
        doc = json.loads(text)
        assert doc == run_document(run, full=True)
        shown = run_document(run)
        assert doc["kind"] == shown["kind"] == "run"
        # Everything `show --json` has, plus what a re-import needs.
        assert doc.keys() - shown.keys() == {"argv", "suite_def"}
        assert {k: v for k, v in doc.items() if k in shown and k != "results"} == {
            k: v for k, v in shown.items() if k != "results"
        }
        for full, short in zip(doc["results"], shown["results"], strict=True):
            assert full.keys() - short.keys() == {
                "position", "metrics_version", "fio_errno", "job_file", "fio_argv", "fio_rc"
            }  # fmt: skip
    run = imported(store, RECORDED / "client-server-2-jsonplus.json")
    stored = (run.results[0].metrics or {})["read"]["clat_ns"]["bins"]
    assert stored, "a json+ output has histogram bins"
    assert json.loads(export_json(run))["results"][0]["read"]["clat_ns"]["bins"] == stored
    assert "bins" not in run_document(run)["results"][0]["read"]["clat_ns"]


def test_read_csv_rejects_a_broken_file() -> None:
    cells = ["maybe" if c == "direct" else "" for c in HEADER]
    with pytest.raises(ValueError, match="line 2, column direct: expected true or false"):
        read_csv(",".join(HEADER) + "\n" + ",".join(cells) + "\n")
    with pytest.raises(ValueError, match="line 2: more cells than columns"):
        read_csv("a,b\n1,2,3\n")


def test_cli_export_prints_the_csv_and_writes_json_to_a_file(
    cli: Any, isolated_db: Path, tmp_path: Path
) -> None:
    with Store.open(isolated_db) as store:
        run = imported(store, RECORDED / "psync-randrw-fsync-jsonplus.json")
    code, out, err = cli("export", str(run.id), "--format", "csv")
    assert (code, err) == (0, "")
    assert out == export_csv(run)
    target = tmp_path / "run.json"
    code, out, err = cli("export", "latest", "--format", "json", "-o", str(target))
    assert (code, out) == (0, "")
    assert json.loads(target.read_text()) == run_document(run, full=True)
