"""Hostile output paths (issue 11, point 1): `report -o` and `export -o` write only what
was named, in the way what was named needs, and fail clearly. No fio runs here: the runs
are imported from recorded fio outputs."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (mknod, chown, mount)")


@pytest.fixture
def run_id(cli: Cli) -> str:
    code, _, err = cli("import", str(RECORDED / "libaio-randread-4k-qd8-jsonplus.json"))
    assert code == 0, err
    return "1"


def _listing(directory: Path) -> dict[str, tuple[int, int, int]]:
    """Every entry of a directory with its type, mode and device number (not followed)."""
    return {
        p.name: (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_rdev)
        for p in directory.iterdir()
        for st in [p.lstat()]
    }


def _iobench(*args: str, stdout: Any = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "iobench", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        check=False,
    )


@needs_root
@pytest.mark.parametrize("command", ["export", "report"])
def test_a_character_device_is_written_through_not_replaced(
    cli: Cli, run_id: str, tmp_path: Path, command: str
) -> None:
    null = tmp_path / "null.md"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    before = _listing(tmp_path)
    code, _, err = cli(command, run_id, "-o", str(null))
    assert code == 0, err
    assert _listing(tmp_path) == before, "still the same device node, nothing beside it"


def test_a_fifo_is_written_through(cli: Cli, run_id: str, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    code, _, err = cli("export", run_id, "-o", str(fifo))
    reader.join(10)
    assert code == 0, err
    assert got and got[0].startswith(b"run_id,label,target,workload")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.csv"]


@needs_root
def test_a_symlink_stays_and_its_target_keeps_mode_and_owner(
    cli: Cli, run_id: str, tmp_path: Path
) -> None:
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    real.chmod(0o640)
    os.chown(real, 65534, 65534)
    link = tmp_path / "link.csv"
    link.symlink_to("real.csv")
    code, _, err = cli("export", run_id, "-o", str(link))
    assert code == 0, err
    assert link.is_symlink() and str(link.readlink()) == "real.csv"
    st = real.stat()
    assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o640, 65534, 65534)
    assert real.read_text().startswith("run_id,")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "real.csv"]


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444, 0o755])
def test_an_existing_file_keeps_its_permission_bits(
    cli: Cli, run_id: str, tmp_path: Path, mode: int
) -> None:
    out = tmp_path / "r.md"
    out.write_text("old")
    out.chmod(mode)
    code, _, err = cli("report", run_id, "-o", str(out))
    if os.geteuid() != 0 and not mode & 0o200:
        assert code == 2 and "permission denied" in err
        return
    assert code == 0, err
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert out.read_text().startswith("# iobench report")


def test_a_new_file_follows_the_umask(cli: Cli, run_id: str, tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        code, _, err = cli("export", run_id, "-o", str(tmp_path / "new.csv"))
    finally:
        os.umask(old)
    assert code == 0, err
    assert stat.S_IMODE((tmp_path / "new.csv").stat().st_mode) == 0o640


def test_a_dangling_symlink_is_refused(cli: Cli, run_id: str, tmp_path: Path) -> None:
    link = tmp_path / "r.md"
    link.symlink_to(tmp_path / "elsewhere" / "r.md")
    (tmp_path / "elsewhere").mkdir()
    code, _, err = cli("report", run_id, "-o", str(link))
    assert code == 2
    assert f"cannot write {link}: it is a symbolic link to {tmp_path}/elsewhere/r.md" in err
    assert "does not create files through symbolic links" in err
    assert list((tmp_path / "elsewhere").iterdir()) == []


@needs_root
@pytest.mark.parametrize("where", ["link", "directory"])
def test_another_users_symlink_is_not_followed(
    cli: Cli, run_id: str, tmp_path: Path, where: str
) -> None:
    """The /tmp attack: someone plants a link where root will write. The kernel's
    protected_symlinks guard is not on everywhere (nor on this machine's kernel)."""
    shared = tmp_path / "tmp"
    shared.mkdir(mode=0o1777)
    shared.chmod(0o1777)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "passwd").write_text("root:x:0:0\n")
    if where == "link":
        planted = shared / "report.md"
        planted.symlink_to(victim / "passwd")
        name = planted
    else:  # a directory on the way
        planted = shared / "reports"
        planted.symlink_to(victim)
        name = planted / "passwd"
    os.lchown(planted, 65534, 65534)
    before = _listing(victim)
    code, _, err = cli("export", run_id, "-o", str(name))
    assert code == 2
    assert f"{planted} is a symbolic link owned by uid 65534, another user" in err
    assert (victim / "passwd").read_text() == "root:x:0:0\n"
    assert _listing(victim) == before


@needs_root
@pytest.mark.parametrize("kind", ["block", "directory", "socket"])
def test_a_block_device_directory_or_socket_is_refused(
    cli: Cli, run_id: str, tmp_path: Path, kind: str
) -> None:
    out = tmp_path / "out.csv"
    if kind == "block":  # major 240 is for local use: no driver, whatever happens
        os.mknod(out, 0o660 | stat.S_IFBLK, os.makedev(240, 0))
    elif kind == "directory":
        out.mkdir()
    else:
        import socket

        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(out))
    before = _listing(tmp_path)
    code, _, err = cli("export", run_id, "-o", str(out))
    assert code == 2
    what = {"block": "a block device", "directory": "a directory", "socket": "a socket"}[kind]
    assert f"cannot write {out}: it is {what}" in err
    assert _listing(tmp_path) == before


def test_dash_means_standard_output(cli: Cli, run_id: str, tmp_path: Path) -> None:
    code, out, err = cli("report", run_id, "-o", "-")
    assert code == 0, err
    assert out.startswith("# iobench report: run 1")
    assert err == "wrote standard output (1 run(s))\n"
    code, out, _ = cli("export", run_id, "--format", "json", "-o", "-")
    assert code == 0 and out.startswith("{")
    assert not (Path.cwd() / "-").exists()


def test_dev_stdout_is_the_stream_itself(run_id: str, tmp_path: Path) -> None:
    """A file opened with >> keeps what it held: the stream is written, not replaced."""
    out = tmp_path / "log.txt"
    out.write_text("kept\n")
    with out.open("a") as f:
        done = _iobench("export", run_id, "-o", "/dev/stdout", stdout=f)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert text.startswith("kept\nrun_id,") and text.count("run_id,") == 1
    piped = _iobench("export", run_id, "-o", "/dev/fd/1")
    assert piped.returncode == 0 and piped.stdout.startswith(b"run_id,")


@pytest.mark.parametrize(
    "args",
    [
        ("export", "1"),
        ("export", "1", "-o", "/dev/stdout"),
        ("show", "1", "--json"),
        ("list",),
        ("report", "1", "-o", "-"),
    ],
)
def test_a_full_stdout_is_a_clear_error(run_id: str, args: tuple[str, ...]) -> None:
    with open("/dev/full", "w") as full:
        done = _iobench(*args, stdout=full)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert err.startswith("iobench: error: cannot write to standard output: No space left")
    assert "Traceback" not in err and "internal error" not in err and "Exception" not in err


def test_a_closed_pipe_ends_quietly(run_id: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "iobench", "report", "1", "--format", "html", "-o", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(100).startswith(b"<!DOCTYPE html>")
    proc.stdout.close()  # the report is megabytes: iobench meets the closed pipe
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(30) == 1
    assert err == ""


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tiny"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


@needs_root
def test_a_full_disk_leaves_the_old_file_and_no_temporary_one(
    cli: Cli, run_id: str, tiny_fs: Path
) -> None:
    out = tiny_fs / "report.html"
    out.write_text("the old report\n")
    code, _, err = cli("report", run_id, "-o", str(out))
    assert code == 1
    assert f"cannot write {out}: No space left on device; it was left as it was" in err
    assert "what to do: free some space" in err
    assert out.read_text() == "the old report\n"
    assert [p.name for p in tiny_fs.iterdir()] == ["report.html"]
