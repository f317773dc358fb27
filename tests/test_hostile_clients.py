"""fio servers are untrusted (issue 11, point 3): fio's client writes the log files a
server sends under names the server chooses (client.c, fio_client_handle_iolog), so iobench
runs it confined to a private directory. These tests run the real launcher, the real fio
client and real fio servers on namespace test hosts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Cli
from hosts import FioHosts, fio_hosts_fixture
from iobench.fio.confine import confinement, landlock_abi, private_directory
from iobench.fio.runner import Launcher, find_fio, run_fio

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (changes user, netns)")
needs_landlock = pytest.mark.skipif(
    landlock_abi() == 0, reason="this kernel has no Landlock (Linux >= 5.13, lsm=landlock)"
)


@pytest.fixture
def private() -> Iterator[Path]:
    directory = private_directory(confinement())
    yield directory
    shutil.rmtree(directory)


def _confined(
    directory: Path, *argv: str, spool: int = 16 << 20, watch: bool = False
) -> subprocess.CompletedProcess[str]:
    """``argv`` started as iobench starts fio's client (iobench.fio.launch), confined."""
    command, _ = Launcher(directory, list(argv), confinement(), spool).command(None)
    if watch:
        command.insert(command.index("--"), "--watch")
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)


@needs_root
def test_the_client_runs_as_nobody_in_its_own_directory(private: Path) -> None:
    done = _confined(private, "/bin/sh", "-c", "id -u; id -g; id -G; pwd")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["65534", "65534", "65534", str(private)]
    assert (private.stat().st_uid, private.stat().st_mode & 0o777) == (65534, 0o700)


@needs_root
@needs_landlock
def test_the_client_cannot_create_a_file_outside_its_directory(
    private: Path, tmp_path: Path
) -> None:
    """Not in a world-writable directory (where nobody could write), not in one of its
    own making, not through a link planted inside its directory, not by renaming."""
    world = tmp_path / "world"
    world.mkdir(mode=0o1777)
    world.chmod(0o1777)
    mine = tmp_path / "nobodys"
    mine.mkdir()
    os.chown(mine, 65534, 65534)
    (private / "escape").symlink_to(world)
    script = (
        f"touch {world}/a; touch {mine}/b; touch escape/c; touch ../d; mkdir {world}/e; "
        f"echo x > {world}/f; touch inside && mv inside {world}/g; echo x > /dev/null && "
        "echo wrote-devnull; touch here && echo wrote-inside"
    )
    done = _confined(private, "/bin/sh", "-c", script)
    assert "wrote-devnull" in done.stdout and "wrote-inside" in done.stdout
    assert done.stderr.count("Permission denied") >= 6, done.stderr
    assert list(world.iterdir()) == [] and list(mine.iterdir()) == []
    assert not (private.parent / "d").exists()
    assert (private / "here").stat().st_uid == 65534


@needs_root
def test_the_launcher_refuses_nonsense() -> None:
    done = _confined(Path("/nonexistent-dir"), "/bin/true")
    assert done.returncode == 125
    assert "iobench: cannot start /bin/true: " in done.stderr
    assert "No such file or directory" in done.stderr


@pytest.fixture(scope="module")
def one_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FioHosts]:
    yield from fio_hosts_fixture(tmp_path_factory.mktemp("hosts"), 1)


@pytest.mark.fio
@needs_root
@needs_landlock
def test_log_names_a_server_sends_cannot_leave_the_directory(
    one_host: FioHosts, private: Path, tmp_path: Path
) -> None:
    """A real fio server sends the client logs named by the job: absolute, with '..', or
    plain. Only the plain one may land, inside the client's directory, owned by nobody."""
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o1777)
    outside.chmod(0o1777)
    data = tmp_path / "data"
    data.mkdir()
    host = one_host.hosts[0]
    job = (
        "[hostile]\nioengine=psync\nrw=read\nbs=4k\nsize=64k\ntime_based=1\nruntime=1\n"
        f"filename={data}/f\n"
        f"write_bw_log={outside}/absolute\nwrite_lat_log=../../{outside.name}/dotdot\n"
        "write_iops_log=plain\nlog_avg_msec=100\n"
    )
    run = run_fio(
        find_fio(), job, private, timeout_s=60, name="hostile", client=f"{host.address},8765",
        confined=confinement(),
    )  # fmt: skip
    said = run.stdout + run.stderr
    assert list(outside.iterdir()) == [], said
    landed = sorted(p.name for p in private.iterdir())
    assert landed == [f"plain_iops.1.log.{host.address}"], said
    assert (private / landed[0]).stat().st_uid == 65534
    assert "Permission denied" in said


@pytest.mark.fio
@needs_root
def test_clients_check_says_how_the_client_is_confined(cli: Cli, one_host: FioHosts) -> None:
    code, out, err = cli("clients", "check", one_host.hosts[0].name, "--json")
    assert code == 0, err
    confined = json.loads(out)["fio_client"]
    assert confined["user"] == "nobody" and confined["uid"] == 65534
    assert confined["landlock_abi"] == (landlock_abi() or None)
    assert confined["description"].startswith("fio's client ")
