"""One fio client for many fio servers (issue 27, point 2): real ``fio --server`` processes
on loopback (several on one host, told apart by their ports), driven the way a run on
clients drives them (iobench.fio.runner.run_fio_clients): each server's results are its
own, one that fails (refuses, dies, hangs before or during its job) fails alone with its
name and fio's words about it, and fio's client stays confined. Runs through the whole
engine are in tests/test_clients.py."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hosts import signal_server
from iobench.errors import FioFailed
from iobench.fio.clientgroup import ClientJob
from iobench.fio.confine import confinement, landlock_abi, private_directory, spool_bytes
from iobench.fio.logs import parse_interval_logs
from iobench.fio.runner import FioRun, find_fio, run_fio_clients

pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (fio's client runs as nobody)"),
]


class Server:
    """A real fio server on a free port of 127.0.0.1."""

    def __init__(self, workdir: Path) -> None:
        with socket.create_server(("127.0.0.1", 0)) as s:
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen(
            ["fio", f"--server=ip:127.0.0.1,{self.port}"], cwd=workdir,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert time.monotonic() < deadline and self.proc.poll() is None
                time.sleep(0.05)

    def signal(self, sig: int) -> None:
        """``sig`` to the server, its handlers and its jobs (groups of their own)."""
        signal_server(self.proc.pid, sig)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.signal(signal.SIGSTOP)
            self.signal(signal.SIGKILL)
            self.proc.wait(timeout=30)


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Callable[[int], list[Server]]]:
    made: list[Server] = []

    def make(n: int) -> list[Server]:
        made.extend(Server(tmp_path) for _ in range(n))
        return made[-n:]

    yield make
    for s in made:
        s.kill()


def null_job(section: str, tag: str, runtime: int = 1, rate: int = 0, extra: str = "") -> str:
    """A random read on fio's null engine (no file), its per-second logs under ``tag``."""
    return (
        f"[{section}]\nioengine=null\nrw=randread\nbs=4k\nsize=1M\ntime_based=1\n"
        f"runtime={runtime}\n" + (f"rate_iops={rate}\n" if rate else "")
        + f"write_iops_log=iobench-{tag}\nlog_avg_msec=1000\nlog_unix_epoch=1\n{extra}"
    )  # fmt: skip


def group(
    servers: list[Server], jobs: list[str], timeout_s: float = 30, **kw: object
) -> tuple[dict[str, FioRun | FioFailed], float]:
    """``jobs`` on ``servers`` (client i is ``s{i}``, tag ``c{i}``) from one fio client: the
    results by client, and how long it took."""
    confined = confinement()
    own = private_directory(confined)
    try:
        started = time.monotonic()
        done = run_fio_clients(
            find_fio(),
            [
                ClientJob(f"s{i}", "127.0.0.1", s.port, f"c{i}", job)
                for i, (s, job) in enumerate(zip(servers, jobs, strict=True))
            ],
            own, timeout_s=timeout_s, name="step", confined=confined,
            spool_bytes=spool_bytes(1, 1, len(jobs)), **kw,  # type: ignore[arg-type]
        )  # fmt: skip
        return done, time.monotonic() - started
    finally:
        shutil.rmtree(own, ignore_errors=True)


def ok(done: dict[str, FioRun | FioFailed], key: str) -> FioRun:
    got = done[key]
    assert isinstance(got, FioRun), f"{key}: {got}"
    return got


def test_servers_on_one_host_each_get_their_own_results_and_logs(
    servers: Callable[[int], list[Server]],
) -> None:
    """Two servers on one host (two ports) at 100 and 300 IOPS: each client's report entry,
    per-second samples and job file are its own, although fio's client names the logs
    of both after the same host."""
    two = servers(2)
    jobs = [
        null_job("rr.c0", "c0", runtime=2, rate=100),
        null_job("rr.c1", "c1", runtime=2, rate=300),
    ]
    done, _ = group(two, jobs)
    for key, rate in (("s0", 100), ("s1", 300)):
        run = ok(done, key)
        assert run.returncode == 0
        assert run.output is not None
        (entry,) = run.output.jobs
        assert entry.jobname == f"rr.{key.replace('s', 'c')}"
        assert entry.port == two[int(key[1])].port
        assert entry.read is not None and entry.read.iops == pytest.approx(rate, rel=0.2)
        assert run.job_file == jobs[int(key[1])]
        assert set(run.logs) == {f"iobench-c{key[1]}_iops.1.log.127.0.0.1"}
        samples = parse_interval_logs(run.logs, epoch=True)
        assert samples is not None
        assert samples["read"]["iops"][0] == pytest.approx(rate, rel=0.2)


def test_a_server_that_refuses_fails_alone_and_is_named(
    servers: Callable[[int], list[Server]],
) -> None:
    """The middle server died before the step: fio's client goes on with the others
    (exit 0, FIO.md §2.4); its client fails with fio's words about it."""
    three = servers(3)
    three[1].kill()
    done, took = group(three, [null_job(f"rr.c{i}", f"c{i}") for i in range(3)])
    assert ok(done, "s0").output and ok(done, "s2").output
    failed = done["s1"]
    assert isinstance(failed, FioFailed)
    assert f"failed to connect to 127.0.0.1:{three[1].port}" in failed.message
    assert "0 bytes" in failed.message
    assert str(three[0].port) not in failed.message  # nothing of the others
    assert took < 15


@pytest.mark.parametrize("when", ["before its job", "during its job"])
def test_a_server_that_stops_answering_fails_alone(
    servers: Callable[[int], list[Server]], when: str
) -> None:
    """SIGSTOP: before its job starts fio's client gives up on it by itself after 5 s;
    during its job it would wait 43 s, and the time limit (4 s here) stops the group: the
    servers fio's client still waits for are noted, asked to stop, then cut off, and the
    others' complete results are kept."""
    three = servers(3)
    victim = three[2]
    if when == "before its job":
        victim.signal(signal.SIGSTOP)
    else:
        threading.Timer(0.4, victim.signal, (signal.SIGSTOP,)).start()
    try:
        done, took = group(three, [null_job(f"rr.c{i}", f"c{i}") for i in range(3)], timeout_s=4)
    finally:
        victim.signal(signal.SIGCONT)
    for key in ("s0", "s1"):
        run = ok(done, key)
        assert run.output is not None
        (entry,) = run.output.jobs
        assert entry.read is not None
        assert entry.read.runtime_ms >= 900  # the whole second, not cut short by the stop
    failed = done["s2"]
    assert isinstance(failed, FioFailed), failed
    if when == "during its job":
        assert "did not finish within 4 s" in failed.message
    assert took < 4 + 3 + 3 + 5 + 3  # time limit, Ctrl-C's grace, the cut's, a margin


def test_a_run_that_ends_stops_every_server(servers: Callable[[int], list[Server]]) -> None:
    two = servers(2)
    stop = threading.Event()
    threading.Timer(1.0, stop.set).start()
    done, took = group(
        two, [null_job(f"rr.c{i}", f"c{i}", runtime=20) for i in range(2)], stop=stop
    )
    assert all(isinstance(got, FioFailed) for got in done.values())
    assert "the run is ending" in str(done["s0"])
    assert took < 10  # the servers stopped their jobs: not 20 s


@pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")
def test_every_server_of_a_group_meets_the_confined_client(
    servers: Callable[[int], list[Server]], tmp_path: Path
) -> None:
    """Each server of the group sends logs named by its job: absolute, with '..', or
    plain. Only the plain ones land, inside the client's directory, written by nobody."""
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o1777)
    outside.chmod(0o1777)
    three = servers(3)
    jobs = [
        f"[h.c{i}]\nioengine=null\nrw=read\nbs=4k\nsize=1M\ntime_based=1\nruntime=1\n"
        f"write_bw_log={outside}/abs{i}\nwrite_lat_log=../../{outside.name}/dotdot{i}\n"
        f"write_iops_log=plain{i}\nlog_avg_msec=100\n"
        for i in range(3)
    ]
    confined = confinement()
    own = private_directory(confined)
    try:
        done = run_fio_clients(
            find_fio(),
            [ClientJob(f"s{i}", "127.0.0.1", s.port, f"c{i}", j) for i, (s, j) in
             enumerate(zip(three, jobs, strict=True))],
            own, timeout_s=30, name="step", confined=confined, spool_bytes=spool_bytes(1, 1, 3),
            check=False,
        )  # fmt: skip
        landed = {p.name: p.stat().st_uid for p in own.iterdir()}
    finally:
        shutil.rmtree(own, ignore_errors=True)
    assert list(outside.iterdir()) == []
    assert landed == {f"plain{i}_iops.1.log.127.0.0.1": 65534 for i in range(3)}
    for i in range(3):
        run = done[f"s{i}"]
        assert isinstance(run, FioRun)
        assert run.output is not None and [j.jobname for j in run.output.jobs] == [f"h.c{i}"]
        assert "Permission denied" in run.stdout + run.stderr + run.raw_output
        assert run.launched.get("bound") == "tmpfs"
