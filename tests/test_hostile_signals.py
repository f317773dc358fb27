"""Signals (issue 11, point 8): `kill -INT` stops a run like Ctrl-C, also when a shell that
is not interactive started iobench in the background (with SIGINT ignored); the interrupt
is said once; the warnings then speak only of the workloads that ran. Real fio, real
processes, real signals."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.fio

# Three workloads, each with warnings of its own (buffered IO, a short runtime).
SUITE = """\
name = "three"
description = "three buffered workloads, each warned about"
[defaults]
runtime = "2s"
size = "4M"
bs = "4k"
iodepth = 1
numjobs = 1
direct = false
[[workload]]
name = "first"
rw = "randread"
[[workload]]
name = "second"
rw = "randread"
[[workload]]
name = "third"
rw = "randread"
"""
MESSAGE = "interrupted; the workloads that finished are kept"


def _ignores_sigint(pid: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    raise AssertionError("no SigIgn line")


def _results(db: Path) -> list[str]:
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return [r[0] for r in conn.execute("SELECT workload FROM results ORDER BY id")]
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def test_a_background_job_of_a_script_starts_with_sigint_ignored(tmp_path: Path) -> None:
    """The situation itself: what a non-interactive shell does to `cmd &`."""
    pidfile = tmp_path / "pid"
    shell = subprocess.Popen(["bash", "-c", f"sleep 30 & echo $! > {pidfile}; wait"])
    try:
        deadline = time.monotonic() + 10
        while not pidfile.exists() or not pidfile.read_text().strip():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        pid = int(pidfile.read_text())
        # bash says $! as soon as it forked; the child ignores SIGINT before it execs sleep
        while Path(f"/proc/{pid}/comm").read_text().strip() != "sleep":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert _ignores_sigint(pid)
    finally:
        if pidfile.exists() and pidfile.read_text().strip():
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
        shell.wait(timeout=10)


def test_kill_int_stops_a_run_started_in_the_background_of_a_script(
    real_fio: str, tmp_path: Path, isolated_db: Path
) -> None:
    target = tmp_path / "vol"
    target.mkdir()
    suite = tmp_path / "three.toml"
    suite.write_text(SUITE)
    out, err, pidfile = tmp_path / "out", tmp_path / "err", tmp_path / "pid"
    command = (
        f"{sys.executable} -m iobench run {target} --suite {suite} >{out} 2>{err} & "
        f"echo $! > {pidfile}; wait $!"
    )
    shell = subprocess.Popen(["bash", "-c", command], env={**os.environ})
    try:
        deadline = time.monotonic() + 60
        while _results(isolated_db) != ["first"]:
            assert shell.poll() is None and time.monotonic() < deadline, err.read_text()
            time.sleep(0.1)
        time.sleep(0.8)  # inside the second workload
        os.kill(int(pidfile.read_text()), signal.SIGINT)
        code = shell.wait(timeout=30)  # bash's `wait $!` returns iobench's exit code
    finally:
        if shell.poll() is None:
            shell.kill()
    said, printed = err.read_text(), out.read_text()
    assert code == 130, said
    # Said once: on stderr, not again in the table on stdout.
    assert (said + printed).count(MESSAGE) == 1, said + printed
    assert f"iobench: error: {MESSAGE}" in said
    assert "is stored as aborted" in said and "Traceback" not in said
    assert "first" in printed and "third" not in printed
    assert list(target.iterdir()) == [], "the test file is removed"

    conn = sqlite3.connect(isolated_db)
    status, warnings = conn.execute("SELECT status, warnings_json FROM runs").fetchone()
    conn.close()
    assert status == "aborted"
    found = json.loads(warnings)
    assert {w["id"] for w in found} >= {"buffered-io", "short-runtime"}
    # Only the workload that ran is spoken of: not the interrupted one, not the one after.
    text = json.dumps(found)
    assert "first" in text
    assert "second" not in text and "third" not in text
    assert {w.get("workload") for w in found} <= {"first", None}


def test_interrupted_before_any_workload_finished_warns_about_nothing_planned(
    real_fio: str, tmp_path: Path, isolated_db: Path
) -> None:
    target = tmp_path / "vol"
    target.mkdir()
    suite = tmp_path / "three.toml"
    suite.write_text(SUITE)
    proc = subprocess.Popen(
        [sys.executable, "-m", "iobench", "run", str(target), "--suite", str(suite)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        # The layout's line: the first workload starts as it is printed.
        while "[1/4] lay out test file" not in (proc.stderr.readline() if proc.stderr else ""):
            assert time.monotonic() < deadline
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        printed, said = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, said
    assert ": no workload finished" in printed
    assert (said + printed).count(MESSAGE) == 1
    conn = sqlite3.connect(isolated_db)
    (warnings,) = conn.execute("SELECT warnings_json FROM runs").fetchone()
    conn.close()
    assert json.loads(warnings) == []
