"""What `--suite PATH` is, said as it is (issue 22): a symbolic link loop is a loop, not
"not a file"; a directory, a link to nothing, a FIFO, a socket, a device, a name too long
or a path through a file each get their own message, whether named bare (`loop`), with a
suffix (`loop.fio`) or with a slash (`./loop`). Nothing is run, nothing stored."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import Cli

LOOP = "is a symbolic link loop (or a chain of more than 40 links): it leads to no file"
UNKNOWN = 'unknown suite "{name}": not a built-in suite and not a file; built-in suites: '


def _loop(d: Path, name: str) -> None:
    (d / name).symlink_to(name)


def _two_link_loop(d: Path, name: str) -> None:
    (d / name).symlink_to("other")
    (d / "other").symlink_to(name)


def _long_chain(d: Path, name: str) -> None:
    """41 links in a row to a real suite: more than the kernel follows."""
    (d / "real.fio").write_text("[a]\nrw=read\n")
    previous = "real.fio"
    for i in range(41):
        (d / f"hop{i}").symlink_to(previous)
        previous = f"hop{i}"
    (d / name).symlink_to(previous)


def _directory(d: Path, name: str) -> None:
    (d / name).mkdir()


def _dangling(d: Path, name: str) -> None:
    (d / name).symlink_to("nowhere.toml")


def _fifo(d: Path, name: str) -> None:
    os.mkfifo(d / name)


def _socket(d: Path, name: str) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(d / name))


KINDS: dict[str, tuple[Callable[[Path, str], None], str]] = {
    "loop": (_loop, LOOP),
    "two-link-loop": (_two_link_loop, LOOP),
    "41-links": (_long_chain, LOOP),
    "directory": (_directory, "is a directory, not a suite file"),
    "dangling-link": (_dangling, "is a symbolic link to nowhere.toml, which does not exist"),
    "fifo": (
        _fifo,
        "is a named pipe (FIFO) that gave no text (nothing wrote to it): a suite file is "
        "TOML with workloads, or a fio job file with jobs",
    ),
    "socket": (_socket, "is a socket, not a suite file"),
}


def _refused(cli: Cli, cwd: Path, suite: str) -> str:
    target = cwd.parent
    code, out, err = cli("doctor", str(target), "--suite", suite)
    assert (code, out) == (2, ""), err
    return err


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("spelled", ["{}", "{}.fio", "{}.toml", "./{}", "{abs}"])
def test_each_kind_is_said_as_it_is(
    cli: Cli, cwd: Path, isolated_db: Path, kind: str, spelled: str
) -> None:
    make, said = KINDS[kind]
    name = spelled.format("s", abs=cwd / "s")
    make(cwd, Path(name).name)
    err = _refused(cli, cwd, name)
    assert err == f"iobench: error: {name}: {said}\n"
    assert not isolated_db.exists()


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("n" * 256, "the name is too long for the kernel (at most 255 bytes a name, 4095 a path)"),
        ("n" * 256 + ".fio", "the name is too long for the kernel (at most 255 bytes a name, "
         "4095 a path)"),
        ("./" + "d/" * 2100 + "s.fio", "the name is too long for the kernel (at most 255 bytes "
         "a name, 4095 a path)"),
        ("file.fio/s.fio", "a part of its path is a file, not a directory"),
        ("missing.fio", "no such file"),
        ("./missing", "no such file"),
        ("/dev/null", "is a character device, not a suite file"),
    ],
)  # fmt: skip
def test_what_cannot_be_looked_at_says_why(
    cli: Cli, cwd: Path, isolated_db: Path, name: str, said: str
) -> None:
    (cwd / "file.fio").write_text("[a]\nrw=read\n")
    err = _refused(cli, cwd, name)
    assert err == f"iobench: error: {name}: {said}\n"


def test_an_unknown_bare_name_is_an_unknown_suite(cli: Cli, cwd: Path) -> None:
    err = _refused(cli, cwd, "missing")
    assert err.startswith("iobench: error: " + UNKNOWN.format(name="missing"))


@contextlib.contextmanager
def _as_nobody() -> Iterator[None]:
    os.setegid(65534)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (seteuid)")
@pytest.mark.parametrize("spelled", ["secret", "secret.fio", "./secret", "locked/s.fio"])
def test_permission_denied_is_said(cli: Cli, monkeypatch: pytest.MonkeyPatch, spelled: str) -> None:
    """As a user without the right: the file or a directory on its way is closed to it."""
    base = Path(tempfile.mkdtemp())  # pytest's own directories are closed to nobody
    try:
        base.chmod(0o755)
        (base / Path(spelled).name).write_text("[a]\nrw=read\n")
        (base / Path(spelled).name).chmod(0o600)
        (base / "locked").mkdir(mode=0o700)
        (base / "locked" / "s.fio").write_text("[a]\nrw=read\n")
        monkeypatch.chdir(base)
        with _as_nobody():
            code, out, err = cli("doctor", str(base), "--suite", spelled)
        assert (code, out) == (2, "")
        assert err == f"iobench: error: {spelled}: cannot be read: Permission denied\n"
    finally:
        shutil.rmtree(base)
