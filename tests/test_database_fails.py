"""The results database failing under a run (issue 22, point 3): made immutable (any of its
files), its filesystem full. (A read-only remount, the third way, cannot be made while
SQLite holds the files open for writing.) Each ends the run with a clear error
and exit code, never a signal (SQLite's mapped -shm ends a process with SIGBUS when a page
of it cannot be written); the test file is removed; where anything can still be written the
run is marked failed, and otherwise it says it could not be. Real iobench processes, real
fio, real filesystems."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Cli
from scratch import run_tool

pytestmark = [pytest.mark.fio, pytest.mark.root]

SUITE = """\
name = "three"
[defaults]
runtime = "1s"
size = "4M"
bs = "4k"
iodepth = 4
numjobs = 1
[[workload]]
name = "first"
rw = "randread"
[[workload]]
name = "second"
rw = "randwrite"
[[workload]]
name = "third"
rw = "randread"
"""


@pytest.fixture
def root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (chattr, mounts)")


def _results(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return int(conn.execute("SELECT count(*) FROM results").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def _run_and_break(
    tmp_path: Path, db: Path, target: Path, breaks: Callable[[], None]
) -> subprocess.CompletedProcess[str]:
    """``iobench run`` with the database at ``db``; ``breaks`` is done once the first
    result is stored."""
    suite = tmp_path / "three.toml"
    suite.write_text(SUITE)
    env = {**os.environ, "IOBENCH_DB": str(db)}
    err = tmp_path / "err"
    with err.open("w") as f:
        proc = subprocess.Popen(
            [sys.executable, "-m", "iobench", "run", str(target), "--suite", str(suite)],
            stdout=subprocess.DEVNULL, stderr=f, env=env,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _results(db) < 1:
            assert proc.poll() is None and time.monotonic() < deadline, err.read_text()
            time.sleep(0.05)
        breaks()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err.read_text())


def _chattr(flag: str, *paths: Path) -> None:
    run_tool("chattr", flag, *[str(p) for p in paths if p.exists()])


@pytest.mark.parametrize("which", [("-shm",), ("",), ("-wal",), ("", "-wal", "-shm")])
def test_an_immutable_database_ends_the_run_with_a_clear_error(
    root: None, cli: Cli, tmp_path: Path, which: tuple[str, ...]
) -> None:
    db = tmp_path / "db" / "runs.db"
    db.parent.mkdir()
    target = tmp_path / "vol"
    target.mkdir()
    files = [Path(f"{db}{suffix}") for suffix in which]
    try:
        done = _run_and_break(tmp_path, db, target, lambda: _chattr("+i", *files))
    finally:
        _chattr("-i", *files)
    said = done.stderr
    assert done.returncode == 1, said  # not 135 (SIGBUS), nor any other signal
    assert "Traceback" not in said and "internal error" not in said
    assert "iobench: error: the results database can no longer be written" in said
    assert "it is immutable, or its permissions changed" in said
    assert "could not be stored as failed" in said
    assert list(target.iterdir()) == [], "the test file is removed"
    # Writable again: the next command marks the run aborted and says so.
    code, _, err = cli("--db", str(db), "list")
    assert code == 0 and "run 1 did not finish and is aborted" in err


def test_a_full_database_says_the_run_could_not_be_stored(
    root: None, cli: Cli, tmp_path: Path
) -> None:
    """The database's filesystem fills up mid-run: SQLite says so, the run ends with that
    error, and, since marking it failed needs room too, it says it could not mark it."""
    small = tmp_path / "small"
    small.mkdir()
    run_tool("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(small))
    try:
        db = small / "runs.db"
        target = tmp_path / "vol"
        target.mkdir()

        def fill() -> None:
            # unbuffered: the write that finds the disk full fails here, not the close
            with (small / "filler").open("wb", buffering=0) as f:
                while True:
                    try:
                        f.write(b"\0" * 65536)
                    except OSError:
                        break

        done = _run_and_break(tmp_path, db, target, fill)
        said = done.stderr
        assert done.returncode == 1, said
        assert "Traceback" not in said and "internal error" not in said
        assert "iobench: error:" in said and "full" in said
        stored = "could not be stored as failed" in said or "is stored as failed" in said
        assert stored, said
        assert list(target.iterdir()) == []
        (small / "filler").unlink()
        code, out, err = cli("--db", str(db), "list", "--json")
        assert code == 0, err
        (row,) = __import__("json").loads(out)["runs"]
        # What the message said is what the database holds.
        want = "failed" if "is stored as failed" in said else "aborted"
        assert row["status"] == want
    finally:
        run_tool("umount", str(small))


def test_a_truncated_shm_ends_the_run_with_a_clear_error_not_sigbus(
    root: None, cli: Cli, tmp_path: Path
) -> None:
    """Another program truncates the -shm that SQLite keeps mapped: the next touch of a page
    past its new end was SIGBUS (exit -7, no message, the test file and the private directory
    left). A -shm only grows while iobench holds it, so a smaller one stops the run first."""
    db = tmp_path / "db" / "runs.db"
    db.parent.mkdir()
    target = tmp_path / "vol"
    target.mkdir()
    done = _run_and_break(tmp_path, db, target, lambda: os.truncate(f"{db}-shm", 0))
    said = done.stderr
    assert done.returncode == 1, said
    assert "Traceback" not in said and "internal error" not in said
    assert f"{db}-shm was truncated from 32768 to 0 bytes while iobench was using it" in said
    assert "could not be stored as failed" in said and "marks it aborted" in said
    assert list(target.iterdir()) == [], "the test file is removed"
    code, _, err = cli("--db", str(db), "list")
    assert code == 0 and "run 1 did not finish and is aborted" in err


@pytest.mark.parametrize("how", ["removed", "directory renamed", "replaced"])
def test_a_database_moved_away_mid_run_is_said_not_reported_stored(
    root: None, cli: Cli, tmp_path: Path, how: str
) -> None:
    """The database file is removed (a cleanup job), its directory renamed, or another
    database renamed over it while a run goes on: the run went on writing the file SQLite had
    open, ended `complete` with exit 0, and its results were found nowhere at the path."""
    db = tmp_path / "db" / "runs.db"
    db.parent.mkdir()
    target = tmp_path / "vol"
    target.mkdir()

    def move() -> None:
        if how == "removed":
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink()
        elif how == "directory renamed":
            db.parent.rename(tmp_path / "moved")
        else:
            other = tmp_path / "other.db"
            other.write_bytes(b"")  # a new, empty database
            other.rename(db)

    done = _run_and_break(tmp_path, db, target, move)
    said = done.stderr
    assert done.returncode == 1, said
    assert "Traceback" not in said and "internal error" not in said
    assert f"the results database {db} was removed, renamed or replaced while iobench" in said
    assert "which is no longer at the database's path" in said
    assert "shows as running" not in said
    assert list(target.iterdir()) == [], "the test file is removed"
