from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from iobench.errors import StoreError, UserError
from iobench.records import ResultRecord, TargetRecord, now_iso
from iobench.store import Store
from iobench.store.schema import SCHEMA_VERSION

WARNINGS = [{"id": "w", "severity": "info", "message": "m"}]
# A stored result's metrics as a run stores them (what every reader may rely on).
METRICS = {
    "metrics_version": 2,
    "read": {"iops": 1000.0, "bw_bytes": 4096000.0, "io_bytes": 4096000, "total_ios": 1000,
             "runtime_ms": 1000, "iops_submitted": 1000.0, "ios_completed": 1000.0,
             "ios_completed_from": "io_bytes/bs", "completions": 1000, "io_bytes_step": 1},
}  # fmt: skip


def _new_run(store: Store, label: str | None = "x") -> int:
    return store.create_run(
        suite="quick",
        suite_def={"name": "quick", "workloads": []},
        label=label,
        argv=["iobench", "run"],
        host={"hostname": "h"},
        iobench_version="0.1.0",
        targets=[TargetRecord(0, "/tmp", "/tmp", "directory", None, {"filesystem": {}})],
    )


def _result(workload: str, position: int) -> ResultRecord:
    return ResultRecord(
        target="/tmp",
        workload=workload,
        position=position,
        status="ok",
        params={"rw": "randread"},
        metrics=METRICS,
        job_file="[x]\n",
        fio_argv=["fio", "x.fio"],
        fio_rc=0,
        fio_version="3.33",
        raw_output="{}",
        fio_stdout="",
        fio_stderr="",
        error=None,
        started_at=now_iso(),
        finished_at=now_iso(),
    )


def test_new_database_gets_current_schema_and_round_trips_a_run(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "r.db"
    with Store.open(path) as store:
        assert store.schema_version() == SCHEMA_VERSION
        run_id = _new_run(store)
        store.add_result(run_id, _result("a", 0))
        store.finish_run(
            run_id,
            status="complete",
            fio_version="3.33",
            warnings=[{"id": "w", "severity": "info", "message": "m"}],
        )
        run = store.get_run(run_id)
        raw = store.get_run(run_id, with_raw=True).results[0].raw_output
    assert run.status == "complete"
    assert run.fio_version == "3.33"
    assert run.warnings == WARNINGS
    assert [r.workload for r in run.results] == ["a"]
    assert run.results[0].metrics == METRICS
    assert run.results[0].raw_output is None, "raw output is only loaded on request"
    assert raw == "{}", "raw fio output is kept (compressed) and restored"
    assert run.targets[0].kind == "directory"


def test_database_from_a_newer_iobench_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    Store.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="written by a newer iobench"):
        Store.open(path)


def test_foreign_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 100)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not an iobench results database"):
        Store.open(path)
    assert path.read_bytes() == before


def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE mine (x)")
    conn.close()
    with pytest.raises(StoreError, match="not one of iobench's"):
        Store.open(path)


def test_run_references(tmp_path: Path) -> None:
    with Store.open(tmp_path / "r.db") as store:
        with pytest.raises(UserError, match="has 0 run"):
            store.resolve("latest")
        first, second = _new_run(store), _new_run(store)
        assert store.resolve("latest") == second
        assert store.resolve("-2") == first
        assert store.resolve(str(first)) == first
        with pytest.raises(UserError, match="there is no run 99"):
            store.resolve("99")
        with pytest.raises(UserError, match="not a run id"):
            store.resolve("abc")


def test_run_left_running_by_a_dead_process_becomes_aborted(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with Store.open(path) as store:
        run_id = _new_run(store)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE runs SET pid = ? WHERE id = ?", (2**22 + 12345, run_id))
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        run = store.get_run(run_id)
    assert run.status == "aborted"
    assert run.error is not None and "ended without finishing" in run.error


def test_a_dead_run_on_clients_names_the_test_files_it_left(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    files = {"10.0.0.2:8765": "/mnt/s/iobench-1-c1.dat", "10.0.0.3:8765": "/mnt/s/iobench-1-c2.dat"}
    with Store.open(path) as store:
        run_id = store.create_run(
            suite="quick", suite_def={"name": "quick", "clients": {"names": list(files),
            "scale": [2], "files": files}}, label=None, argv=[], host={},
            iobench_version="0", targets=[],
        )  # fmt: skip
    conn = sqlite3.connect(path)
    conn.execute("UPDATE runs SET pid = ? WHERE id = ?", (2**22 + 12345, run_id))
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        run = store.get_run(run_id)
    assert run.error is not None and run.error.endswith(
        "; its test files may be left on the clients (remove them by hand): "
        "10.0.0.2:8765: /mnt/s/iobench-1-c1.dat, 10.0.0.3:8765: /mnt/s/iobench-1-c2.dat"
    )


def test_live_running_run_is_left_running(tmp_path: Path) -> None:
    with Store.open(tmp_path / "r.db") as store:
        run_id = _new_run(store)
    with Store.open(tmp_path / "r.db") as store:
        assert store.get_run(run_id).status == "running"


def _writer(path: str, n: int) -> None:
    with Store.open(path) as store:
        for i in range(n):
            run_id = _new_run(store, label=f"p{os.getpid()}")
            store.add_result(run_id, _result(f"w{i}", i))
            store.finish_run(run_id, status="complete", fio_version="3.33", warnings=[])


def test_concurrent_writers_do_not_corrupt_the_database(tmp_path: Path) -> None:
    path = str(tmp_path / "r.db")
    Store.open(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, 15)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with Store.open(path) as store:
        runs = store.list_runs()
        assert len(runs) == 60
        assert all(r.status == "complete" and r.result_count == 1 for r in runs)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def _endless_writer(path: str, ready: Any) -> None:
    with Store.open(path) as store:
        run_id = _new_run(store)
        ready.set()
        i = 0
        while True:
            big = _result(f"w{i}", i)
            store.add_result(run_id, dataclasses.replace(big, raw_output="x" * 200_000))
            i += 1


def test_a_killed_writer_leaves_only_whole_rows(tmp_path: Path) -> None:
    path = str(tmp_path / "r.db")
    Store.open(path).close()
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(target=_endless_writer, args=(path, ready))
    proc.start()
    assert ready.wait(30)
    time.sleep(1.0)
    assert proc.pid is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(10)
    with Store.open(path) as store:
        run = store.get_run(store.resolve("latest"), with_raw=True)
    assert run.status == "aborted", "the dead writer's run is marked, not left running"
    assert len(run.results) > 0
    for r in run.results:
        assert r.raw_output == "x" * 200_000
        assert r.finished_at and r.metrics == METRICS
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def _open_and_write(path: str, barrier: Any) -> None:
    barrier.wait(30)
    _writer(path, 2)


def test_many_processes_creating_a_new_database_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "fresh.db")
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(6)
    procs = [ctx.Process(target=_open_and_write, args=(path, barrier)) for _ in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * 6
    with Store.open(path) as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert len(store.list_runs()) == 12


def test_a_schema_1_database_is_upgraded_and_keeps_its_runs(tmp_path: Path) -> None:
    from iobench.store.schema import MIGRATIONS

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[0] + ";PRAGMA user_version = 1;")
    conn.execute(
        "INSERT INTO runs (uuid, status, suite, suite_json, label, argv_json, host_json,"
        " iobench_version, started_at) VALUES ('u', 'complete', 'quick', '{}', 'old', '[]',"
        " '{}', '0.1.0', '2026-01-01T00:00:00Z')"
    )
    conn.execute(
        "INSERT INTO results (run_id, target, workload, position, status, params_json,"
        " job_file, fio_argv_json, started_at, finished_at) VALUES (1, '/t', 'w', 0, 'ok',"
        " '{}', '[x]', '[]', 'a', 'b')"
    )
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version() == SCHEMA_VERSION
        run = store.get_run(1)
    assert path.read_bytes()[68:72] == b"iobn", "upgraded and marked as iobench's"
    assert (run.label, run.origin, run.source) == ("old", "run", None)
    assert [(r.workload, r.repetition, r.samples) for r in run.results] == [("w", 1, None)]
    assert [(r.client, r.clients) for r in run.results] == [(None, None)]


def test_the_runs_table_rebuilt_by_schema_3_keeps_every_row(tmp_path: Path) -> None:
    """Schema 3 rebuilds `runs` (a new status, 'partial'); its targets and results, which
    refer to it with ON DELETE CASCADE, must survive that."""
    from iobench.store.schema import MIGRATIONS

    path = tmp_path / "v2.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.executescript(MIGRATIONS[0] + ";" + MIGRATIONS[1] + ";PRAGMA user_version = 2;")
    for i in (1, 2):
        conn.execute(
            "INSERT INTO runs (uuid, status, suite, suite_json, label, argv_json, host_json,"
            " iobench_version, started_at) VALUES (?, 'complete', 'quick', '{}', ?, '[]',"
            " '{}', '0.1.0', '2026-01-01T00:00:00Z')",
            (f"u{i}", f"run{i}"),
        )
        conn.execute(
            "INSERT INTO targets (run_id, position, spec, path, kind, size_bytes,"
            " context_json) VALUES (?, 0, '/t', '/t', 'directory', NULL, '{}')",
            (i,),
        )
        conn.execute(
            "INSERT INTO results (run_id, target, workload, position, status, params_json,"
            " job_file, fio_argv_json, started_at, finished_at, repetition) VALUES"
            " (?, '/t', 'w', 0, 'ok', '{}', '', '[]', 'a', 'b', 2)",
            (i,),
        )
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version() == SCHEMA_VERSION == 5
        runs = [store.get_run(i) for i in (1, 2)]
        run_id = store.create_run(
            suite="s", suite_def={}, label=None, argv=[], host={}, iobench_version="0",
            targets=[],
        )  # fmt: skip
        store.finish_run(run_id, status="partial", fio_version=None, warnings=[])
        assert store.get_run(run_id).status == "partial"
        with pytest.raises(StoreError, match="CHECK constraint failed"):  # it still holds
            store.finish_run(run_id, status="bogus", fio_version=None, warnings=[])
    assert [(r.label, len(r.targets), [x.repetition for x in r.results]) for r in runs] == [
        ("run1", 1, [2]),
        ("run2", 1, [2]),
    ]
