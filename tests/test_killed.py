"""A killed iobench (issue 22, point 6): fio dies with it, whatever the moment; what it left
is said by the next command and removed by `iobench rm`; a stored pid is not taken for
proof of life. Real iobench processes killed with SIGKILL, real fio, real namespace hosts."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Cli, processes_with
from hosts import FioHosts, _descendants, fio_hosts_fixture
from iobench.store import Store

SUITE = """\
name = "long"
[defaults]
runtime = "{runtime}"
size = "8M"
bs = "4k"
iodepth = 4
numjobs = 2
{extra}
[[workload]]
name = "first"
rw = "randwrite"
[[workload]]
name = "second"
rw = "randread"
"""


def _wait(what: str, ok: object, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not ok():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


class Run:
    """``iobench run`` in a process of its own, its processes marked by an environment
    variable."""

    def __init__(
        self, tmp_path: Path, db: Path, *args: str, runtime: str = "20s", extra: str = ""
    ) -> None:
        self.mark = f"IOBENCH_TEST_MARK={uuid.uuid4().hex}"
        self.target = tmp_path / "vol"
        self.target.mkdir(exist_ok=True)
        suite = tmp_path / "long.toml"
        suite.write_text(SUITE.format(runtime=runtime, extra=extra))
        self.err = tmp_path / "err"
        self.tmp = tmp_path / "tmp"  # iobench's and its launchers' private directories
        self.tmp.mkdir(exist_ok=True)
        env = {**os.environ, "IOBENCH_DB": str(db), self.mark.split("=")[0]: self.mark}
        env["TMPDIR"] = str(self.tmp)
        with self.err.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "iobench", "run", str(self.target), "--suite",
                 str(suite), *args],
                stdout=subprocess.DEVNULL, stderr=err, env=env,
            )  # fmt: skip

    def others(self) -> list[int]:
        """The processes iobench started (its launchers and their fio)."""
        return [p for p in processes_with(self.mark) if p != self.proc.pid]

    def said(self) -> str:
        return self.err.read_text()

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid in processes_with(self.mark):  # nothing outlives a test, even a failing one
            os.kill(pid, signal.SIGKILL)


def _leftovers(db: Path) -> list[dict[str, str]]:
    conn = sqlite3.connect(db)
    try:
        (text,) = conn.execute("SELECT leftovers_json FROM runs").fetchone()
    finally:
        conn.close()
    found: list[dict[str, str]] = json.loads(text)
    return found


@pytest.mark.fio
@pytest.mark.parametrize("moment", ["layout", "first", "second"])
def test_fio_and_its_jobs_die_with_a_killed_iobench_and_leave_nothing(
    cli: Cli, tmp_path: Path, isolated_db: Path, moment: str
) -> None:
    # A large test area, so that writing it takes a while.
    size = ("--size", "2G") if moment == "layout" else ()
    run = Run(tmp_path, isolated_db, *size, runtime="20s")
    try:
        if moment == "layout":  # fio writing the test file: its launcher and itself
            _wait("the layout", lambda: len(run.others()) >= 2 and "[1/3]" not in run.said())
            time.sleep(0.3)
            assert "[1/3]" not in run.said(), "still laying out"
        else:  # fio's job processes at work
            want = {"first": "[1/3] lay out", "second": "[2/3] first"}[moment]
            _wait(f"the step before {moment}", lambda: want in run.said())
            _wait("fio's jobs", lambda: len(run.others()) >= 3)
            time.sleep(0.5)
        run.kill()
        started = time.monotonic()
        _wait("fio to end", lambda: not run.others(), timeout_s=15)
        assert time.monotonic() - started < 10, "well before the runtime of 20 s ended"
    finally:
        run.close()
    _wait("the launcher's cleanup", lambda: list(run.target.iterdir()) == [], timeout_s=5)
    left = _leftovers(isolated_db)
    assert left, "the run listed what it made"
    for item in left:
        assert not os.path.lexists(item["path"]), item
    code, _, err = cli("list")
    assert code == 0
    assert "did not finish and is aborted: the iobench process" in err
    assert "it left" not in err  # the launcher removed it all
    code, out, err = cli("rm", "1", "--yes")
    assert (code, out) == (
        0,
        f"removed run 1 (long, 1 target(s), {0 if moment != 'second' else 1} result(s))\n",
    ), err


@pytest.mark.fio
def test_a_run_killed_between_steps_says_what_it_left_and_rm_removes_it(
    cli: Cli, tmp_path: Path, isolated_db: Path
) -> None:
    """Killed while no fio runs (storing a result): nothing can clean up, so the next
    command says what is left and `rm` removes it. The moment is made certain by holding
    the database's write lock until the first workload's fio has ended."""
    run = Run(tmp_path, isolated_db, runtime="2s")
    lock = None
    try:
        _wait("the first workload", lambda: "[1/3] lay out" in run.said())
        _wait("fio's jobs", lambda: len(run.others()) >= 3)
        lock = sqlite3.connect(isolated_db, timeout=30, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")  # iobench waits to store the first result
        _wait("the first workload's end", lambda: not run.others(), timeout_s=30)
        run.kill()
    finally:
        if lock is not None:
            lock.execute("ROLLBACK")
            lock.close()
        run.close()
    (test_file,) = run.target.iterdir()
    left = {item["what"]: item["path"] for item in _leftovers(isolated_db)}
    assert left["test file"] == str(test_file)
    assert Path(left["private directory"]).is_dir()
    code, _, err = cli("list")
    assert code == 0
    assert f"its test file {test_file}" in err and "its private directory" in err
    assert "`iobench rm 1` removes them" in err
    code, out, err = cli("rm", "1", "--yes", "--json")
    assert code == 0, err
    doc = json.loads(out)["runs"][0]
    assert sorted(doc["removed_files"]) == sorted(
        [f"test file {test_file}", f"private directory {left['private directory']}"]
    )
    assert not test_file.exists() and not Path(left["private directory"]).exists()


def _running_row(db: Path, pid: int, start: str | None, started_at: str, left: str) -> None:
    Store.open(db).close()
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO runs (uuid, status, suite, suite_json, argv_json, host_json,"
        " iobench_version, started_at, pid, hostname, proc_start, leftovers_json)"
        " VALUES (?, 'running', 'quick', '{}', '[]', '{}', '0.1.0', ?, ?, ?, ?, ?)",
        (str(uuid.uuid4()), started_at, pid, socket.gethostname(), start, left),
    )
    conn.commit()
    conn.close()


@pytest.fixture
def sleeper() -> Iterator[int]:
    """A live process that started just now (a pid that looks alive to a naive check)."""
    proc = subprocess.Popen(["sleep", "60"])
    yield proc.pid
    proc.kill()
    proc.wait()


@pytest.mark.parametrize("form", ["start of another process", "no start, started later"])
def test_a_reused_pid_does_not_keep_a_dead_run_running(
    cli: Cli, isolated_db: Path, sleeper: int, form: str
) -> None:
    if form == "start of another process":
        _running_row(isolated_db, sleeper, "another-boot:12345", "2026-01-01T00:00:00Z", "[]")
    else:  # stored before iobench recorded the start: the process started after the run
        _running_row(isolated_db, sleeper, None, "2026-01-01T00:00:00Z", "[]")
    code, _, err = cli("list")
    assert code == 0 and f"run 1 did not finish and is aborted: the iobench process (pid " \
        f"{sleeper}) ended without finishing this run" in err  # fmt: skip
    code, _, err = cli("rm", "1", "--yes")
    assert code == 0, err


def test_a_live_run_is_still_running_and_rm_refuses_it(cli: Cli, isolated_db: Path) -> None:
    from iobench.probe.process import own_start

    _running_row(isolated_db, os.getpid(), own_start(), "2026-01-01T00:00:00Z", "[]")
    code, _, err = cli("list")
    assert code == 0 and "did not finish" not in err
    code, _, err = cli("rm", "1", "--yes")
    assert code == 2 and "is still running" in err


def test_rm_removes_only_names_iobench_gives_its_files(
    cli: Cli, isolated_db: Path, tmp_path: Path
) -> None:
    """The list of leftovers comes from the database, which may be forged: a path that is
    not one of iobench's names is left alone, whatever it is."""
    ours = tmp_path / "iobench-4242-0123abcd.dat"
    ours.write_bytes(b"x")
    private = tmp_path / "iobench-ab_12cd9"
    private.mkdir()
    (private / "target").symlink_to(tmp_path / "precious")
    precious = tmp_path / "precious"
    precious.write_bytes(b"keep")
    forged = [
        {"path": str(ours), "what": "test file"},
        {"path": str(private), "what": "private directory"},
        {"path": str(precious), "what": "test file"},
        {"path": str(tmp_path), "what": "private directory"},
        {"path": "relative/iobench-1-0123abcd.dat", "what": "test file"},
    ]
    _running_row(isolated_db, 2**22 + 4321, None, "2026-01-01T00:00:00Z", json.dumps(forged))
    code, out, err = cli("rm", "1", "--yes", "--json")
    assert code == 0, err
    doc = json.loads(out)["runs"][0]
    assert doc["removed_files"] == [f"test file {ours}", f"private directory {private}"]
    assert doc["left_alone"] == [f"test file {precious}", f"private directory {tmp_path}"]
    assert not ours.exists() and not private.exists()
    assert precious.read_bytes() == b"keep" and tmp_path.is_dir()


@pytest.fixture(scope="module")
def one_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FioHosts]:
    yield from fio_hosts_fixture(tmp_path_factory.mktemp("hosts"), 1)


@pytest.mark.fio
@pytest.mark.root
def test_a_killed_iobench_stops_the_jobs_on_its_fio_servers(
    tmp_path: Path, isolated_db: Path, one_host: FioHosts
) -> None:
    host = one_host.hosts[0]
    run = Run(tmp_path, isolated_db, "--clients", host.name, runtime="30s")
    try:
        host.wait_for_io(tmp_path / "vol", timeout_s=60)
        assert host.server is not None
        time.sleep(0.5)
        run.kill()
        started = time.monotonic()
        server = host.server.pid
        _wait("the server's jobs to end", lambda: not _descendants(server), timeout_s=20)
        assert time.monotonic() - started < 15, "well before the runtime of 30 s ended"
        _wait("iobench's processes to end", lambda: not run.others(), timeout_s=10)
        # each client's launcher removed its private directory, whichever way it learnt
        # that iobench was gone (its watch, the parent-death signal, or both at once)
        assert list(run.tmp.glob("iobench-client-*")) == []
    finally:
        run.close()


@pytest.mark.fio
def test_the_mem_shm_segments_of_a_killed_fio_do_not_outlive_it(
    tmp_path: Path, isolated_db: Path
) -> None:
    """mem=shm: fio's buffers are System V shared memory, which outlives a killed fio; fio
    runs in an IPC namespace of its own, freed with it."""
    if os.geteuid() != 0:
        pytest.skip("needs root: an IPC namespace of fio's own")
    run = Run(tmp_path, isolated_db, runtime="20s", extra='mem = "shm"')
    try:
        _wait("fio's jobs", lambda: len(run.others()) >= 4, timeout_s=60)
        time.sleep(1.0)
        ran = set(run.others())  # the launcher, fio and its jobs, which made the segments
        run.kill()
        _wait("fio to end", lambda: not run.others(), timeout_s=15)
    finally:
        run.close()
    # Other tests' processes may hold segments of their own meanwhile: only those whose
    # creator (cpid, the 5th column) was one of this run's count.
    rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    assert [r for r in rows if int(r.split()[4]) in ran] == []


@pytest.mark.fio
def test_a_launcher_started_by_a_thread_that_ends_lives_on_with_iobench(
    tmp_path: Path, real_fio: str
) -> None:
    """The kernel's parent-death signal comes when the *thread* that started a process ends
    (and again as each thread it was handed to ends): a launcher started from a worker
    thread must not take that for iobench's death and stop its fio."""
    work = tmp_path / "private"
    work.mkdir()
    job = tmp_path / "j.fio"
    job.write_text("[j]\nioengine=null\nsize=1m\nrw=read\ntime_based\nruntime=2\n")
    started: list[subprocess.Popen[bytes]] = []

    argv = [sys.executable, "-m", "iobench.fio.launch", "--parent", str(os.getpid())]
    argv += ["--dir", str(work), "--", real_fio, "--output-format=json", str(job)]

    def start() -> None:
        started.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        time.sleep(1.0)  # the launcher has asked for its parent-death signal by then

    thread = threading.Thread(target=start)
    thread.start()
    thread.join()  # the starting thread is gone: the kernel sends the launcher its signal
    (launcher,) = started
    out, err = launcher.communicate(timeout=30)
    assert launcher.returncode == 0, err.decode()
    doc = json.loads(out)
    assert doc["jobs"][0]["read"]["runtime"] >= 1900  # fio ran its 2 s, not stopped
    assert work.exists()  # an orphaned launcher would have removed it
