"""Shared fixtures: an isolated results database, real fio, and a fake fio on PATH."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from hypothesis import settings

import netstore
from iobench.cli import run_cli
from iobench.fio.runner import Held
from scratch import Scratch, scratch_fixture

FAKES = Path(__file__).parent / "fakes"

# Hypothesis fails an example that takes over 200 ms by default: a timing assertion racing
# the other tests and fio for the two CPUs (seen: 377 and 588 ms under load, in tests of
# pure functions). How fast the code is, bench/ measures; the tests check what it does.
settings.register_profile("iobench", deadline=None)
settings.load_profile("iobench")

# A small suite with one reading and one writing workload, for tests that run fio.
MINI_SUITE = """\
name = "mini"
description = "one read and one write workload"
[defaults]
runtime = "1s"
size = "4M"
iodepth = 4
numjobs = 1
bs = "4k"
[[workload]]
name = "rr"
rw = "randread"
[[workload]]
name = "rw"
rw = "randwrite"
"""

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    """Run the iobench CLI in-process: ``code, stdout, stderr = cli("run", ...)``."""

    def invoke(*args: str) -> tuple[int, str, str]:
        code = run_cli(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


@pytest.fixture
def mini_suite(tmp_path: Path) -> str:
    """The path of a file holding MINI_SUITE."""
    path = tmp_path / "mini.toml"
    path.write_text(MINI_SUITE)
    return str(path)


@pytest.fixture(autouse=True)
def isolated_db(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own database; nothing lands in the user's data directory."""
    path = tmp_path_factory.mktemp("db") / "iobench.db"
    monkeypatch.setenv("IOBENCH_DB", str(path))
    monkeypatch.setenv("XDG_DATA_HOME", str(path.parent / "xdg"))
    return path


HOG = "import sys\nopen('/proc/self/comm', 'w').write(sys.argv[1])\nwhile True:\n    pass\n"


@pytest.fixture
def hogs() -> Iterator[list[int]]:
    """Two busy loops (one per CPU of the 2-CPU test hosts), named iobench-hog-1 and -2: a
    host busy with other work than fio's. Killed after the test."""
    procs = [subprocess.Popen([sys.executable, "-c", HOG, f"iobench-hog-{n}"]) for n in (1, 2)]
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(
            Path(f"/proc/{p.pid}/comm").read_text().strip() != f"iobench-hog-{n}"
            for n, p in enumerate(procs, 1)
        ):
            time.sleep(0.05)
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait()


@pytest.fixture
def one_cpu() -> Iterator[int]:
    """This process (and the fio it starts) may use one CPU only, as on a 1-CPU machine;
    the affinity iobench had before comes back afterwards."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})
    try:
        yield 1
    finally:
        os.sched_setaffinity(0, before)


@pytest.fixture
def real_fio() -> str:
    path = shutil.which("fio")
    if path is None:
        pytest.skip("fio is not installed (scripts/setup.sh --dev installs it)")
    return path


@pytest.fixture
def chromium() -> str:
    """Headless Chromium's path; a test that needs it fails without it (never skips)."""
    path = shutil.which("chromium")
    assert path is not None, (
        "chromium is not installed: scripts/setup.sh --dev installs it (apt-get install chromium)"
    )
    return path


@pytest.fixture
def fio_calls(fake_fio: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file the fake fio on PATH appends to whenever it is started to run jobs."""
    path = tmp_path / "fio-calls"
    monkeypatch.setenv("FAKE_FIO_PIDFILE", str(path))
    return path


@pytest.fixture
def fake_fio(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Put tests/fakes/fio first on PATH; choose its behaviour with FAKE_FIO_MODE."""
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    yield


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Scratch]:
    """Loop devices, mounts and swap (needs root); all removed after the test."""
    yield from scratch_fixture(tmp_path)


@pytest.fixture(scope="session")
def ceph_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[netstore.CephCluster]:
    """One Ceph cluster on 127.0.0.1 for the whole test run (tests/netstore.py): give your
    images names of their own and remove them."""
    if missing := netstore.missing_tools(netstore.CEPH_TOOLS):
        pytest.skip(f"needs {', '.join(missing)} (scripts/setup.sh --dev installs them)")
    with netstore.start_ceph(tmp_path_factory.mktemp("ceph")) as cluster:
        yield cluster


@pytest.fixture
def nbd_server_factory(tmp_path: Path) -> Iterator[Callable[..., netstore.NbdServer]]:
    """``nbd_server_factory(**options)``: netstore.start_nbdkit in tmp_path; every server
    started is stopped after the test."""
    if missing := netstore.missing_tools(netstore.NBD_TOOLS):
        pytest.skip(f"needs {', '.join(missing)} (scripts/setup.sh --dev installs them)")
    with ExitStack() as stack:
        yield lambda **options: stack.enter_context(netstore.start_nbdkit(tmp_path, **options))


# Modules whose tests check measured figures (rates on capped volumes, the clients'
# aggregate, steady-state rounds, CPU use) or time what fio did: scripts/test.sh runs them
# one at a time with nothing beside them (the `serial` marker); so does any test that uses
# the busy loops of `hogs`. Single tests elsewhere carry @pytest.mark.serial themselves.
#
# A measuring test whose figures a throttle sets (a cgroup cap on a loop device over RAM,
# far below what this host can do, so fio waits on the throttle and needs a fifth of a CPU
# or less) is `paced` instead (@pytest.mark.paced): scripts/test.sh runs the paced tests
# two at a time (IOBENCH_PACED_LANES), with nothing else beside them. What one leaves of
# the CPUs is far more than the others use, and a throttle's pace does not depend on them
# (docs/development.md, "Test groups", has the measurements). A test that needs the host's
# CPUs (a loop device without a cap, tmpfs, the busy loops, CPU shares, fio's clients on
# tmpfs) is never paced.
SERIAL_MODULES = {
    "test_burst",
    "test_capped",
    "test_clients_device",
    "test_cpuload",
    "test_modes",
    "test_steady_rounds",
}


@pytest.hookimpl(tryfirst=True)  # before -m selects by these markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that runs real fio carries the `fio` marker (select with -m fio / not fio),
    every test that uses a real network storage server the `netstore` marker, every
    timing-sensitive one the `serial` marker unless it is `paced` (never both)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "real_fio" in fixtures:
            item.add_marker(pytest.mark.fio)
        if {"ceph_cluster", "nbd_server_factory"} & fixtures:
            item.add_marker(pytest.mark.netstore)
        paced = item.get_closest_marker("paced") is not None
        if paced and ("hogs" in fixtures or item.get_closest_marker("serial") is not None):
            raise pytest.UsageError(f"{item.nodeid}: a test is either paced or serial")
        if not paced and (item.path.stem in SERIAL_MODULES or "hogs" in fixtures):
            item.add_marker(pytest.mark.serial)


_HELD: list[int] = []


def held_open(path: Path) -> Held:
    """``path`` held open as a run holds its target: fio reaches it through the descriptor
    (run_fio's ``held``). Closed when the tests end."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    _HELD.append(fd)
    return Held(fd)


@pytest.fixture(scope="session", autouse=True)
def _close_held() -> Iterator[None]:
    yield
    while _HELD:
        os.close(_HELD.pop())


def processes_with(marker: str) -> list[int]:
    """The live processes (not zombies; this namespace's pids) whose environment holds
    ``marker`` (``NAME=value``): a process and everything it started, fio included, which
    may run in a PID namespace of its own whose pids mean nothing here."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            marked = marker.encode() in (proc / "environ").read_bytes()
            if marked and (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory of the test's own, ``tmp_path/work`` (relative names resolve
    there: suite paths, fio's includes)."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work
