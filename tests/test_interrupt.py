"""Ctrl-C and SIGTERM during a real run: exit 130, fio gone, test file gone, run kept."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import processes_with


def _fio_processes(marker: str) -> list[int]:
    """The fio processes of this test's iobench (they inherit its environment's ``marker``;
    other tests' fio running beside this one do not count)."""
    return [
        pid for pid in processes_with(marker)
        if Path(f"/proc/{pid}/comm").read_text(errors="replace").strip() == "fio"
    ]  # fmt: skip


def _results(db: Path) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(db, timeout=5)
    try:
        return int(conn.execute("SELECT count(*) FROM results").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


@pytest.mark.fio
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_mid_run(
    real_fio: str, tmp_path: Path, isolated_db: Path, sig: signal.Signals
) -> None:
    target = tmp_path / "vol"
    target.mkdir()
    marker = f"IOBENCH_TEST_RUN={uuid.uuid4().hex}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "iobench", "run", str(target), "--runtime", "2s", "--ramp", "0",
         "--size", "8M"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # like a terminal: the signal goes to iobench's process group
        env={**os.environ, marker.split("=")[0]: marker.split("=")[1]},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _results(isolated_db) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _results(isolated_db) >= 2, "two workloads should have finished by now"
        time.sleep(0.7)  # well inside the third workload
        assert _fio_processes(marker), "fio is running"
        sent = time.monotonic()
        os.killpg(proc.pid, sig)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert took < 8
    assert "interrupted" in err
    assert "Traceback" not in err
    assert processes_with(marker) == []  # fio and everything else iobench started
    assert list(target.iterdir()) == []
    conn = sqlite3.connect(isolated_db)
    status, error = conn.execute("SELECT status, error FROM runs").fetchone()
    workloads = [r[0] for r in conn.execute("SELECT workload FROM results ORDER BY position")]
    conn.close()
    assert status == "aborted"
    assert "interrupted" in error
    assert workloads[:2] == ["randread-4k-qd1", "randwrite-4k-qd1"]
    assert "randread-4k-qd32x4" not in workloads, "the interrupted workload is not kept"
    assert "randwrite-4k-qd1" in out, "the table of finished workloads is printed"
