"""iobench import: fio JSON files from elsewhere become runs (real SQLite files; no fio).

Every JSON fixture (external: other people's fio 2.1.4 .. 3.43 runs; recorded: fio 3.33) is
imported into a real database and read back; the stored numbers are checked against the
file's own fields, read here independently of the importer.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from iobench.analysis.histogram import percentiles_from_bins
from iobench.errors import ExitCode, UserError
from iobench.fio.options import (
    UNKNOWN_TARGET,
    fio_block_size,
    fio_seconds,
    fio_size,
    measurement_options,
    workload_params,
)
from iobench.fio.parse import ALL_CLIENTS, iter_json_objects
from iobench.importer import MAX_FILE_BYTES, import_files, interpret_file, interpret_fio_output
from iobench.iocount import in_flight
from iobench.model import Workload
from iobench.records import ResultRecord, RunRecord
from iobench.store import Store
from iobench.suites.loader import parse_suite
from test_parse import EXTERNAL_STATED

DATA = Path(__file__).parent / "data" / "fio-outputs"
EXTERNAL = DATA / "external"
RECORDED = DATA / "recorded"

JSON_FIXTURES = sorted(
    [EXTERNAL / name for name, *_ in EXTERNAL_STATED]
    + [
        p
        for p in RECORDED.glob("*.json")
        if not p.name.endswith(".meta.json") and not p.name.startswith("concat-")
    ]
)  # concat-*: several runs in one file (tests/test_import_reports.py)
ARGV = ["iobench", "import"]


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with Store.open(tmp_path / "results.db") as s:
        yield s


def import_one(store: Store, path: Path, label: str | None = None) -> RunRecord:
    (run_id,) = import_files(store, [str(path)], label=label, argv=ARGV)
    return store.get_run(run_id, with_raw=True)


def raw_report(path: Path) -> dict[str, Any]:
    reports = [o for o in iter_json_objects(path.read_text()) if "jobs" in o or "client_stats" in o]
    return reports[-1]


def final_entries(path: Path) -> list[dict[str, Any]]:
    """The job entries a file's final report states, in order, without 'All clients'.

    With --status-interval sent to a server, fio 3.33 appends interim snapshots to
    client_stats; in that recorded file (numjobs=2, one server) the last two are final.
    """
    report = raw_report(path)
    if "jobs" in report:
        return list(report["jobs"])
    entries = [e for e in report["client_stats"] if e["jobname"] != ALL_CLIENTS]
    if path.name == "client-status-interval-numjobs2-json.json":
        return entries[-2:]
    return entries


def expected_results(path: Path) -> list[dict[str, Any]]:
    """What each stored result should state: the file's entries, except that the numjobs
    clones of one job section reported one by one (no group_reporting: same host, name and
    group, echoed numjobs equal to their number) are combined by fio's group_reporting
    rules, computed here from the raw entries: IOs and bytes summed over the longest
    runtime, latency N-weighted, percentiles from the summed bins (none without bins)."""
    report = raw_report(path)
    shared = report.get("global options")
    shared = shared if isinstance(shared, dict) else {}
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for e in final_entries(path):
        key = (e.get("hostname"), e.get("port"), e["jobname"], e["groupid"])
        groups.setdefault(key, []).append(e)
    out: list[dict[str, Any]] = []
    for members in groups.values():
        options = {**shared, **(members[0].get("job options") or {})}
        if len(members) > 1 and str(options.get("numjobs")) == str(len(members)):
            out.append(_combined(members))
        else:
            out.extend(members)
    return out


def _combined(members: list[dict[str, Any]]) -> dict[str, Any]:
    entry: dict[str, Any] = {"jobname": members[0]["jobname"], "clones": len(members)}
    for d in ("read", "write", "trim"):
        parts = [m[d] for m in members if d in m]
        ios = sum(p["total_ios"] for p in parts)
        runtime = max(p["runtime"] for p in parts)
        section: dict[str, Any] = {"iops": 1000 * ios / runtime if runtime else 0.0}
        if not ios:
            entry[d] = {"iops": 0}
            continue
        for kind in ("lat", "clat"):
            objs = [latency(p, kind)[0] for p in parts]
            if any(o is None or not o.get("N") for o in objs):
                continue
            n = sum(o["N"] for o in objs)  # type: ignore[index]
            merged: dict[str, Any] = {
                "N": n,
                "mean": sum(o["mean"] * o["N"] for o in objs) / n,  # type: ignore[index]
                "min": min(o["min"] for o in objs),  # type: ignore[index]
                "max": max(o["max"] for o in objs),  # type: ignore[index]
            }
            if all(o.get("bins") for o in objs):  # type: ignore[union-attr]
                bins: dict[int, int] = {}
                for o in objs:
                    for k, v in o["bins"].items():  # type: ignore[index]
                        bins[int(k)] = bins.get(int(k), 0) + v
                merged["percentile"] = {f"{p:f}": v for p, v in percentiles_from_bins(bins, [99.0])}
            section[f"{kind}_ns"] = merged
        entry[d] = section
    return entry


def latency(direction: dict[str, Any], kind: str) -> tuple[dict[str, Any] | None, int]:
    """A direction's latency object and the factor to ns (fio < 2.99 wrote microseconds)."""
    if f"{kind}_ns" in direction:
        return direction[f"{kind}_ns"], 1
    return direction.get(kind), 1000


def percentile(obj: dict[str, Any], p: float) -> float | None:
    for key, value in (obj.get("percentile") or {}).items():
        if float(key) == p:
            return float(value)
    return None


# -- the numbers a file states are the numbers stored -------------------------------------


@pytest.mark.parametrize("path", JSON_FIXTURES, ids=lambda p: p.name[:60])
def test_import_stores_the_numbers_the_file_states(store: Store, path: Path) -> None:
    run = import_one(store, path)
    entries = expected_results(path)
    assert len(run.results) == len(entries)
    checked_latency = 0
    for result, entry in zip(run.results, entries, strict=True):
        assert result.workload.split("#")[0] == entry["jobname"]
        assert result.metrics is not None
        for d in ("read", "write", "trim"):
            raw = entry.get(d)
            stored = result.metrics[d]
            if stored is None:
                assert raw is None or raw["iops"] == 0, f"{d} IO dropped"
                continue
            assert raw is not None
            assert stored["iops_submitted"] == pytest.approx(raw["iops"], rel=1e-12)
            _shows_completions(result, raw, stored)
            for kind in ("lat", "clat"):
                obj, scale = latency(raw, kind)
                stored_lat = stored[f"{kind}_ns"]
                if stored_lat is None:
                    assert obj is None or obj.get("N") == 0 or obj["mean"] == 0
                    continue
                assert obj is not None
                assert stored_lat["mean"] == pytest.approx(obj["mean"] * scale, rel=1e-12)
                assert stored_lat["min"] == round(obj["min"] * scale)
                assert stored_lat["max"] == round(obj["max"] * scale)
                p99 = percentile(obj, 99.0)
                if p99 is not None:
                    assert stored_lat["p99"] == round(p99 * scale)
                elif "clones" in entry:  # combined without bins: no percentile is invented
                    assert stored_lat["p99"] is None
                checked_latency += 1
    assert checked_latency > 0 or run.status == "failed"


def _shows_completions(result: ResultRecord, raw: dict[str, Any], stored: dict[str, Any]) -> None:
    """The IOPS shown are the IOs completed in fio's window over its runtime, fio's own
    formula: its submissions (``total_ios``), or more by at most the IOs that can be in
    flight when a ramp ends (iobench.iocount)."""
    completed = stored["ios_completed"]
    if stored["ios_completed_from"] == "total_ios":  # no other count: fio's own figure
        assert stored["iops"] == stored["iops_submitted"]
        return
    runtime_ms = stored["runtime_ms"]
    assert stored["iops"] == (pytest.approx(1000 * completed / runtime_ms) if runtime_ms else 0)
    if "total_ios" not in raw:
        return  # fio 2.1: no count of its own
    bound = in_flight(result.params) or 0.01 * raw["total_ios"]
    # An IO that failed was submitted and never completed.
    low = -bound - 1 if result.status == "failed" else 0
    assert low <= completed - raw["total_ios"] <= bound + 1, (stored, result.params)


@pytest.mark.parametrize(("name", "version", "read_iops", "write_iops"), EXTERNAL_STATED)
def test_import_yields_the_iops_sources_md_states(
    store: Store, name: str, version: str, read_iops: float, write_iops: float
) -> None:
    """SOURCES.md quotes jobs[0], or for client mode the "All clients" entry (which is not
    stored: the clients are, and their sum is what it states)."""
    run = import_one(store, EXTERNAL / name)
    assert run.fio_version == version
    assert run.origin == "imported"
    client_mode = "client_stats" in raw_report(EXTERNAL / name)
    for d, stated in (("read", read_iops), ("write", write_iops)):
        if client_mode:
            values = [
                r.metrics[d]["iops_submitted"] for r in run.results if r.metrics and r.metrics[d]
            ]
            assert sum(values) == pytest.approx(stated, rel=1e-9, abs=0)
            continue
        first = run.results[0].metrics
        assert first is not None
        if stated == 0:
            assert first[d] is None, "a direction without IO is null, not zeros"
        elif "clones" in expected_results(EXTERNAL / name)[0]:
            # jobs[0] is one of several clones (numjobs, no group_reporting): the stored
            # result is their group, and jobs[0]'s figure is part of it.
            assert first[d]["iops_submitted"] > stated
        else:
            assert first[d]["iops_submitted"] == stated


def test_fio2_latencies_are_converted_from_microseconds(store: Store) -> None:
    path = EXTERNAL / (
        "distributed-system-analysis__pbench__agent_tool-scripts_postprocess_samples_fio-0_"
        "result_reference-result_fio-result.txt"
    )
    run = import_one(store, path)
    read = run.results[0].metrics["read"]  # type: ignore[index]
    # The file: clat mean 2889.34 us, p99 5088 us; io_bytes in KiB before fio 2.21.
    assert read["clat_ns"]["mean"] == pytest.approx(2_889_340.0)
    assert read["clat_ns"]["p99"] == 5_088_000
    entry = raw_report(path)["jobs"][0]["read"]
    assert read["io_bytes"] == entry["io_bytes"] * 1024
    assert "bins" not in read["clat_ns"]
    assert "microsecond-latencies" in {w["id"] for w in run.warnings}


def test_jsonplus_bins_are_kept_for_fio3(store: Store) -> None:
    run = import_one(store, RECORDED / "libaio-randread-4k-qd8-jsonplus.json")
    clat = run.results[0].metrics["read"]["clat_ns"]  # type: ignore[index]
    raw = raw_report(RECORDED / "libaio-randread-4k-qd8-jsonplus.json")["jobs"][0]["read"]
    assert clat["bins"] == raw["clat_ns"]["bins"]
    assert sum(clat["bins"].values()) == raw["clat_ns"]["N"]


# -- what the run records about where the numbers came from --------------------------------


def test_imported_run_is_marked_and_keeps_the_evidence(store: Store) -> None:
    path = RECORDED / "libaio-randread-4k-qd8-jsonplus.json"
    run = import_one(store, path, label="legacy")
    assert (run.origin, run.source, run.label) == ("imported", str(path.resolve()), "legacy")
    assert (run.status, run.suite, run.fio_version, run.argv) == (
        "complete",
        "imported",
        "3.33",
        ARGV,
    )
    (result,) = run.results
    assert result.raw_output == path.read_text()
    assert (result.job_file, result.fio_argv) == ("", [])
    assert result.target == "data.bin"
    assert result.params == {
        "rw": "randread",
        "bs": 4096,
        "iodepth": 8,
        "numjobs": 1,  # not echoed: fio's default, said so (below)
        "ioengine": "libaio",
        "direct": True,
        "runtime_s": 1.0,
        "ramp_s": 0.0,  # not echoed: fio's default
        "size": 16 << 20,
        "rwmixread": None,
        # Every echoed option is a param, says where fio ran (filename) or how it reported
        # (lat_percentiles), or is time_based=1 (iobench's default, so not stored).
        "options": {},
    }
    assert run.suite_def.workloads is not None
    assert run.suite_def.workloads[0]["fio_defaults"] == {"numjobs": "1", "ramp_time": "0"}
    (note,) = [w for w in run.warnings if w["id"] == "fio-defaults"]
    assert "numjobs=1 (randread); ramp_time=0 (randread)" in note["message"]
    assert run.host["fio_version"] == "3.33" and "note" in run.host
    assert run.suite_def.source == str(path.resolve())
    assert run.suite_def.workloads is not None and run.suite_def.global_options is not None
    assert run.suite_def.workloads[0]["job_options"]["iodepth"] == "8"
    assert run.suite_def.global_options["filename"] == "data.bin"  # the full echo stays
    (target,) = run.targets
    assert (target.spec, target.kind) == ("data.bin", "unknown")


def test_started_at_is_fios_timestamp_else_job_start_else_the_file_mtime(
    store: Store, tmp_path: Path
) -> None:
    # fio 3.33 standalone: timestamp_ms is when the report was printed (the run's end).
    run = import_one(store, RECORDED / "seqread-1m-json.json")
    ms = raw_report(RECORDED / "seqread-1m-json.json")["timestamp_ms"]
    assert run.started_at == "2026-11-22T01:51:22.831Z" and ms == 1795312282831
    assert run.suite_def.time_source == "timestamp"
    # fio 3.36 records job_start: the real start.
    brahiam = EXTERNAL / "BrahiamAcosta__SO-Kernel-trace-extraction__fio_output.json"
    assert import_one(store, brahiam).suite_def.time_source == "job_start"
    # fio 2.1.4 has no timestamp at all: the file's modification time.
    copy = tmp_path / "pkb.json"
    copy.write_text(
        (EXTERNAL / "GoogleCloudPlatform__PerfKitBenchmarker__tests_data_fio_fio-parser-"
         "sample-result.json").read_text()
    )  # fmt: skip
    os.utime(copy, (1_500_000_000, 1_500_000_000))
    run = import_one(store, copy)
    assert run.started_at == "2017-07-14T02:40:00.000Z"
    assert run.suite_def.time_source == "mtime"


def test_missing_options_are_unknown_not_zero(store: Store) -> None:
    """fio 2.1.4 echoes no options: every parameter is None, the target unknown."""
    run = import_one(
        store,
        EXTERNAL / "GoogleCloudPlatform__PerfKitBenchmarker__tests_data_fio_fio-parser-sample-"
        "result.json",
    )
    assert len(run.results) == 5
    for r in run.results:
        assert r.target == UNKNOWN_TARGET
        assert {k: v for k, v in r.params.items() if k != "options"} == dict.fromkeys(
            ("rw", "bs", "iodepth", "numjobs", "ioengine", "direct", "runtime_s", "ramp_s",
             "size", "rwmixread")
        )  # fmt: skip


def test_the_clones_of_one_job_reported_one_by_one_become_one_result(store: Store) -> None:
    """numjobs=8 without group_reporting: eight entries, one job section. iobench's own
    results are per section, so compare must see the group, as fio would report it."""
    path = EXTERNAL / (
        "distributed-system-analysis__pbench__agent_tool-scripts_postprocess_samples_perf-fio-0_"
        "result_reference-result_fio-result.txt"
    )
    run = import_one(store, path)
    (result,) = run.results
    assert (result.workload, result.target) == ("job-/dev/nvme8n1", "/dev/nvme8n1")
    assert result.params["numjobs"] == 8
    jobs = raw_report(path)["jobs"]
    assert result.metrics is not None
    read = result.metrics["read"]
    assert read["total_ios"] == sum(j["read"]["total_ios"] for j in jobs)
    assert read["iops_submitted"] == pytest.approx(sum(j["read"]["iops"] for j in jobs), rel=1e-5)
    assert read["clat_ns"]["n"] == sum(j["read"]["clat_ns"]["N"] for j in jobs)
    assert read["clat_ns"]["p99"] is None, "plain json: no bins, so no combined percentile"
    (merged,) = [w for w in run.warnings if w["id"] == "jobs-merged"]
    assert "8 jobs of job-/dev/nvme8n1 on /dev/nvme8n1" in merged["message"]
    assert result.metrics["disk_util"] != [], "one result: the file's disk_util is its own"


def test_jobs_that_only_share_a_name_are_numbered(store: Store, tmp_path: Path) -> None:
    report = raw_report(RECORDED / "libaio-randread-4k-qd8-jsonplus.json")
    report["jobs"].append(report["jobs"][0])  # a second section with the same name
    path = tmp_path / "twins.json"
    path.write_text(json.dumps(report))
    run = import_one(store, path)
    name = report["jobs"][0]["jobname"]
    assert [r.workload for r in run.results] == [name, f"{name}#2"]
    assert "jobs-merged" not in {w["id"] for w in run.warnings}
    # disk_util covers both jobs together: kept with the run, not with each result.
    assert all(r.metrics and r.metrics["disk_util"] == [] for r in run.results)


def test_a_file_with_several_jobs_is_stored_once_on_the_first_result(store: Store) -> None:
    path = EXTERNAL / (
        "GoogleCloudPlatform__PerfKitBenchmarker__tests_data_fio_fio-parser-sample-result.json"
    )
    run = import_one(store, path)
    assert len(run.results) == 5
    assert run.results[0].raw_output == path.read_text()
    assert [r.raw_output for r in run.results[1:]] == [None] * 4


def test_a_job_that_failed_in_the_file_is_stored_as_failed(store: Store) -> None:
    run = import_one(store, RECORDED / "error-einval-direct-bs1000.json")
    (result,) = run.results
    assert result.status == "failed"
    assert result.error == f"fio reported error 22 ({os.strerror(22)})"
    assert run.status == "failed"
    assert run.error == f"badalign on data.bin: fio reported error 22 ({os.strerror(22)})"


def test_text_before_the_json_is_skipped_and_an_interruption_reported(store: Store) -> None:
    run = import_one(store, EXTERNAL / "bensonjohnson__FIO-tests__fio.json")
    assert run.status == "complete"
    assert run.suite_def.messages == ("fio: terminating on signal 2",)
    assert "interrupted" in {w["id"] for w in run.warnings}
    stray = import_one(
        store, EXTERNAL / "Arau__fio-results-tmp__longterm-tests_bench-results_t1-reads_reads-100-2"
    )
    assert stray.suite_def.messages == (">",)
    assert stray.results[0].target == "/usr/share/nginx/html/p1"
    # --status-interval: the earlier reports are JSON, not messages; the last one counts.
    interval = import_one(store, RECORDED / "status-interval-jsonplus.json")
    assert interval.suite_def.messages == ()


# -- client/server mode ------------------------------------------------------------------


def test_client_mode_gives_one_result_per_client_keyed_by_host_and_port(store: Store) -> None:
    path = EXTERNAL / "styliteag__fio-analyzer__scripts_tests_fixtures_fio_client_2clients.json"
    run = import_one(store, path)
    assert [(r.target, r.workload) for r in run.results] == [
        ("127.0.0.1:18802", "test"),
        ("127.0.0.1:18801", "test"),
    ]
    assert [t.spec for t in run.targets] == ["127.0.0.1:18802", "127.0.0.1:18801"]
    assert run.host["clients"] == ["127.0.0.1:18801", "127.0.0.1:18802"]
    assert "all-clients-not-stored" in {w["id"] for w in run.warnings}
    # fio 3.43 writes 'global options' as a list, one per server.
    clients = run.suite_def.global_options
    assert clients is not None
    assert [o["directory"] for o in clients.values()] == ["/mnt/fio-test"] * 2
    assert all("directory" not in r.params["options"] for r in run.results)
    assert all(r.metrics and r.metrics["read"]["clat_ns"]["p99"] for r in run.results)


def test_client_mode_single_server_names_the_host(store: Store) -> None:
    run = import_one(
        store, EXTERNAL / "styliteag__fio-analyzer__scripts_tests_fixtures_fio_client_1client.json"
    )
    assert [r.target for r in run.results] == ["127.0.0.1:18801"]
    assert run.host["hostname"] == "127.0.0.1"
    assert run.suite_def.time_source == "job_start"


def test_client_mode_options_repeated_per_server_are_not_attributed(store: Store) -> None:
    """fio 3.33 repeats every server's global options in one object: filename=cs1.bin and
    filename=cs2.bin. Which belongs to which server is unknowable; it is left out."""
    run = import_one(store, RECORDED / "client-server-2-jsonplus.json")
    assert [r.target for r in run.results] == ["127.0.0.1:42717", "127.0.0.1:46639"]
    for r in run.results:
        assert "filename" not in r.params["options"]
        assert r.params["size"] == 8 << 20  # repeated with one value: kept
    (warning,) = [w for w in run.warnings if w["id"] == "ambiguous-global-options"]
    assert "filename" in warning["message"]


def test_client_mode_numjobs_without_group_reporting_is_one_result_per_client(
    store: Store,
) -> None:
    path = RECORDED / "client-numjobs2-no-group-reporting-json.json"
    run = import_one(store, path)
    (result,) = run.results
    assert (result.target, result.workload) == ("127.0.0.1:59233", "nj")
    entries = final_entries(path)
    assert result.metrics["read"]["io_bytes"] == sum(e["read"]["io_bytes"] for e in entries)  # type: ignore[index]


def test_client_mode_status_interval_keeps_the_final_snapshot(store: Store) -> None:
    path = RECORDED / "client-status-interval-numjobs2-json.json"
    run = import_one(store, path)
    final = [e["read"]["io_bytes"] for e in raw_report(path)["client_stats"][-2:]]
    assert [r.metrics["read"]["io_bytes"] for r in run.results] == [sum(final)]  # type: ignore[index]


def test_empty_client_stats_is_refused(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "dead.json"
    path.write_text('\n{"fio version": "fio-3.33", "timestamp": 1, "client_stats": []}\n')
    with pytest.raises(UserError) as e:
        import_files(store, [str(path)], label=None, argv=ARGV)
    assert str(path) in e.value.message and "no job results" in e.value.message
    assert store.list_runs() == []


# -- params: imported runs match iobench's own runs in compare ------------------------------

COMPARED = ("rw", "bs", "iodepth", "numjobs", "ioengine", "direct", "runtime_s", "size", "options")


def test_the_same_job_against_different_files_has_identical_params(tmp_path: Path) -> None:
    text = (RECORDED / "numjobs2-group-reporting-randwrite-jsonplus.json").read_text()
    assert '"filename" : "data.bin"' in text
    other = text.replace('"filename" : "data.bin"', '"filename" : "/mnt/other/test.bin"')
    (a,) = interpret_fio_output(text, "a.json").results
    (b,) = interpret_fio_output(other, "b.json").results
    assert (a.target, b.target) == ("data.bin", "/mnt/other/test.bin")
    assert a.params == b.params


def test_imported_params_equal_those_of_an_iobench_run_of_the_same_workload() -> None:
    """job file: size=8M direct=1 time_based=1 runtime=1 group_reporting=1 filename=data.bin
    ioengine=libaio rw=randwrite bs=4k iodepth=4 numjobs=2 (the .meta.json records it)."""
    text = (RECORDED / "numjobs2-group-reporting-randwrite-jsonplus.json").read_text()
    (result,) = interpret_fio_output(text, "x.json").results
    iobench = Workload(
        name="randwrite", rw="randwrite", bs=4096, iodepth=4, numjobs=2, ioengine="libaio",
        direct=True, runtime_s=1.0, size=8 << 20,
    ).params  # fmt: skip
    assert {k: result.params[k] for k in COMPARED} == {k: iobench[k] for k in COMPARED}


def test_kept_options_are_written_as_an_iobench_suite_writes_them() -> None:
    suite = parse_suite(
        """
        name = "s"
        description = "d"
        [[workload]]
        name = "w"
        rw = "randrw"
        bs = "4k"
        iodepth = 1
        numjobs = 1
        rwmixread = 50
        ioengine = "psync"
        runtime = "1s"
        time_based = false
        fsync = 4
        end_fsync = true
        norandommap = true
        thinktime = "500us"
        blockalign = "8k"
        sync = true
        bssplit = "4k/50:64k/50"
        """,
        "s.toml",
        "test",
    )
    (workload,) = suite.workloads
    echo = {
        "filename": "/mnt/x/data.bin",
        "rw": "randrw",
        "rwmixread": "50",
        "bs": "4k",
        "iodepth": "1",
        "numjobs": "1",
        "ioengine": "psync",
        "runtime": "1",
        "time_based": "0",
        "fsync": "4",
        "end_fsync": "true",
        "norandommap": "1",
        "thinktime": "500",  # fio: a bare thinktime is microseconds
        "blockalign": "8k",
        "sync": "1",
        "bssplit": "4k/50:64k/50",
        "randrepeat": "0",
        "lat_percentiles": "1",
        "write_bw_log": "x",
        "log_avg_msec": "1000",
        "group_reporting": "1",
        "output-format": "json",
    }
    params = workload_params(echo)
    keys = ("rw", "bs", "iodepth", "numjobs", "ioengine", "runtime_s", "rwmixread", "options")
    assert {k: params[k] for k in keys} == {k: workload.params[k] for k in keys}


@pytest.mark.parametrize(
    ("echo", "kept"),
    [
        ({"time_based": "1"}, {}),  # iobench's default: not stored
        ({"time_based": "0"}, {"time_based": "0"}),
        ({"readwrite": "read", "blocksize": "4k", "timeout": "5"}, {}),  # aliases are params
        ({"kb_base": "1000", "blockalign": "4k"}, {"blockalign": "4000"}),
        (
            {"invalidate": "0", "stonewall": "yes", "rate": "1M,2M", "wait_for": "a"},
            {"invalidate": "0", "rate": "1M,2M"},
        ),
        ({"write_iops_log": "a", "log_offset": "1", "per_job_logs": "0", "thread": "1"}, {}),
    ],
)
def test_measurement_options(echo: dict[str, str], kept: dict[str, str]) -> None:
    kb_base = 1000 if echo.get("kb_base") == "1000" else 1024
    assert measurement_options(echo, kb_base) == kept


# -- refusals: nothing stored ------------------------------------------------------------


def test_a_file_that_is_no_fio_output_is_refused_with_every_format_named(store: Store) -> None:
    path = "notes.txt"
    with pytest.raises(UserError) as e:
        interpret_file("shopping list\n- milk\n", path)
    assert e.value.exit_code == ExitCode.BAD_INPUT
    assert e.value.message.startswith(f"{path} holds no fio output")
    hint = e.value.hint or ""
    assert "--output-format=json" in hint and "fio's normal text output" in hint
    assert "terse output (--output-format=terse" in hint
    assert store.list_runs() == []


@pytest.mark.parametrize(
    ("content", "found"),
    [
        ("shopping list\n- milk\n", "neither a JSON object with fio's 'jobs' or 'client_stats'"),
        ("Run status group 0 (all jobs):\n", "part of fio's normal text output, but holds no"),
        ('{"jobs_done": 3, "ok": true}', "it holds JSON, but no object with fio's 'jobs'"),
        ("", "the file is empty"),
        ("\n  \n", "the file holds only white space"),
    ],
)
def test_a_file_that_is_not_fio_output_is_refused(
    store: Store, tmp_path: Path, content: str, found: str
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text(content)
    with pytest.raises(UserError) as e:
        import_files(store, [str(path)], label=None, argv=ARGV)
    assert e.value.message.startswith(f"{path} holds no fio output: ")
    assert found in e.value.message
    assert e.value.exit_code == 2


def test_binary_and_unreadable_paths_are_refused(store: Store, tmp_path: Path) -> None:
    blob = tmp_path / "image.png"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    cases = {
        str(blob): "holds no fio output: it holds binary data",
        str(tmp_path / "missing.json"): "does not exist",
    }
    for path, message in cases.items():
        with pytest.raises(UserError) as e:
            import_files(store, [path], label=None, argv=ARGV)
        assert e.value.message.startswith(f"{path} ") and message in e.value.message
    assert store.list_runs() == []


def test_paths_that_are_not_regular_files_are_refused_before_they_are_opened(
    store: Store, tmp_path: Path
) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # opening it would block until a writer came
    cases = {
        str(tmp_path): "is a directory, not a regular file",
        str(fifo): "is a FIFO (named pipe), not a regular file",
        "/dev/null": "is a character device, not a regular file",
    }
    for path, message in cases.items():
        with pytest.raises(UserError) as e:
            import_files(store, [path], label=None, argv=ARGV)
        assert e.value.message.startswith(f"{path} {message}")
        assert e.value.exit_code == 2
    assert store.list_runs() == []


def test_a_file_larger_than_any_fio_output_is_refused(store: Store, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(300 << 20)  # sparse: costs no disk
    assert MAX_FILE_BYTES == 256 << 20
    with pytest.raises(UserError) as e:
        import_files(store, [str(big)], label=None, argv=ARGV)
    assert e.value.message.startswith(f"{big} is {300 << 20} bytes, more than the 256 MiB")
    assert e.value.exit_code == 2


def test_fio_output_cut_short_is_named_as_such(store: Store, tmp_path: Path) -> None:
    cut = tmp_path / "x.json"
    cut.write_bytes((RECORDED / "seqread-1m-json.json").read_bytes()[:300])
    with pytest.raises(UserError) as e:
        import_files(store, [str(cut)], label=None, argv=ARGV)
    assert e.value.message == (
        f"{cut} looks like fio output cut short (the JSON object does not end)"
    )
    assert e.value.exit_code == 2
    # Cut inside a string, after fio's text messages: still cut short.
    cut.write_text('fio: some note\n{"fio version" : "fio-3.33", "jobs" : [{"jobname" : "se')
    with pytest.raises(UserError, match="cut short"):
        import_files(store, [str(cut)], label=None, argv=ARGV)


def test_every_file_is_checked_before_anything_is_stored(store: Store, tmp_path: Path) -> None:
    cut = tmp_path / "cut.txt"  # fio's normal output without a job's result
    cut.write_text("Run status group 0 (all jobs):\n")
    good = [str(RECORDED / "seqread-1m-json.json"), str(cut)]
    notes = tmp_path / "notes.txt"
    notes.write_text("not fio\n")
    with pytest.raises(UserError) as e:
        import_files(store, [*good[:1], str(notes)], label="x", argv=ARGV)
    assert str(notes) in e.value.message
    assert store.list_runs() == []
    with pytest.raises(UserError):
        import_files(store, good, label="x", argv=ARGV)
    assert store.list_runs() == []


def test_several_files_become_several_runs(store: Store) -> None:
    paths = [
        RECORDED / "seqread-1m-json.json",
        EXTERNAL / "louwrentius__fio-plot__example_data01_randread-01.json",
        RECORDED / "client-server-2-jsonplus.json",
    ]
    ids = import_files(store, [str(p) for p in paths], label="legacy", argv=ARGV)
    assert len(ids) == 3 and ids == sorted(ids)
    runs = [store.get_run(i) for i in ids]
    assert [r.source for r in runs] == [str(p.resolve()) for p in paths]
    assert [r.fio_version for r in runs] == ["3.33", "2.18-59-g618e", "3.33"]
    assert all(r.label == "legacy" and r.status == "complete" for r in runs)
    assert [r.id for r in store.list_runs(label="legacy")] == ids[::-1]


def test_the_same_file_twice_is_refused(store: Store) -> None:
    path = str(RECORDED / "seqread-1m-json.json")
    with pytest.raises(UserError, match="given twice"):
        import_files(store, [path, path], label=None, argv=ARGV)
    assert store.list_runs() == []


class FailingStore(Store):
    """A real store whose second add_result fails, as a full disk would."""

    calls = 0

    def add_result(self, run_id: int, r: ResultRecord) -> None:
        FailingStore.calls += 1
        if FailingStore.calls == 2:
            raise sqlite3.OperationalError("database or disk is full")
        super().add_result(run_id, r)


def test_a_failure_while_storing_finishes_the_run_as_failed(tmp_path: Path) -> None:
    FailingStore.calls = 0  # the test may run again in one process (mutation testing)
    path = EXTERNAL / "longhorn__kbench__fio-results_samsung_850_PRO_raw-block.json"
    with Store.open(tmp_path / "r.db") as plain:
        store = FailingStore(plain._conn, plain.path)
        with pytest.raises(sqlite3.OperationalError):
            import_files(store, [str(path)], label=None, argv=ARGV)
        (run,) = plain.list_runs()
        assert run.status == "failed"
        assert run.error is not None and "database or disk is full" in run.error
        assert run.result_count == 1


# -- fio option strings ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kb_base", "expected"),
    [
        ("4k", 1024, 4096),
        ("4K", 1024, 4096),
        ("4096", 1024, 4096),
        ("1m", 1024, 1 << 20),
        ("1gb", 1024, 1 << 30),
        ("10g", 1024, 10 << 30),
        ("50000Mi", 1024, 50000 << 20),  # only the first letter counts
        ("4KiB", 1024, 4000),  # fio's compatibility mode: *iB is the other base
        ("4KiB", 1000, 4096),
        ("4k", 1000, 4000),
        ("0x1000", 1024, 4096),
        ("512b", 1024, 512),
        ("50%", 1024, None),
        ("1.5g", 1024, None),
        ("4k-16k", 1024, None),
        ("", 1024, None),
        (None, 1024, None),
    ],
)
def test_fio_size(text: str | None, kb_base: int, expected: int | None) -> None:
    assert fio_size(text, kb_base) == expected


def test_fio_block_size_and_seconds() -> None:
    assert fio_block_size("4k,4k") == 4096
    assert fio_block_size("4k,8k") is None  # read and write differ: no single bs
    assert fio_seconds("20s") == 20.0
    assert fio_seconds("5m") == 300.0
    assert fio_seconds("86400") == 86400.0
    assert fio_seconds("500ms") == 0.5
    assert fio_seconds("1.5s") is None
    assert fio_seconds(None) is None


def test_workload_params_from_option_echo() -> None:
    params = workload_params(
        {
            "rw": "randread:8",
            "iodepth": "01",
            "buffered": "1",
            "rwmixwrite": "30",
            "kb_base": "1000",
            "size": "1MiB",
            "ramp_time": "5s",
        }
    )
    assert params["rw"] == "randread"
    assert params["iodepth"] == 1
    assert params["direct"] is False
    assert params["rwmixread"] == 70
    assert params["size"] == 1 << 20
    assert params["ramp_s"] == 5.0
    assert params["bs"] is None and params["numjobs"] is None


def test_interpreting_fio_output_is_pure_and_needs_no_database() -> None:
    text = (RECORDED / "psync-randrw-fsync-jsonplus.json").read_text()
    plan = interpret_fio_output(text, "some/where/psync.json")
    assert plan.source == str(Path("some/where/psync.json").resolve())
    assert plan.status == "complete" and plan.fio_version == "3.33"
    (result,) = plan.results
    assert result.metrics is not None
    assert (
        result.metrics["read"]["iops_submitted"]
        == json.loads(text[text.index("{") :])["jobs"][0]["read"]["iops"]
    )
    assert result.params["rwmixread"] == 50


# -- through the command line ------------------------------------------------------------


def test_cli_import_refuses_what_is_no_fio_output_with_exit_code_2(
    cli: Any, isolated_db: Path, tmp_path: Path
) -> None:
    good = str(RECORDED / "seqread-1m-json.json")
    bad = str(tmp_path / "notes.txt")
    Path(bad).write_text("3;not;fio\n")
    code, out, err = cli("import", good, bad, "--label", "legacy")
    assert code == 2
    assert out == ""
    assert f"{bad} holds no fio output" in " ".join(err.split())
    with Store.open(isolated_db) as store:
        assert store.list_runs() == []
    code, out, err = cli("import", good, "--label", "legacy")
    assert code == 0, err
    with Store.open(isolated_db) as store:
        (run,) = store.list_runs()
    assert (run.origin, run.label, run.source) == ("imported", "legacy", str(Path(good).resolve()))
