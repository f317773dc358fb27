"""Files named by the user iobench runs as root for (issue 22): `sudo iobench run --suite
link.fio` with link.fio -> a root-only file must not quote that file's lines, nor read it.
Suite files and imported files are looked at and opened with the rights of the user that
SUDO_UID (PKEXEC_UID, DOAS_USER) names. The tests run as root and set SUDO_UID themselves."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Cli
from iobench.errors import UserError
from iobench.invoker import invoker, invoker_rights

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (file owners, seteuid)")

SECRET = "root:$6$s3cr3tHa5h$Zz9:19000:0:99999:7:::"
NOBODY = 65534  # nobody, and nogroup, in /etc/passwd and /etc/group
BY_SUDO = "nobody (uid 65534), who ran iobench through sudo"
STRANGER = 54321  # a uid no /etc/passwd line names
VALID_SUITE = "[a]\nrw=randread\nbs=4k\nsize=1m\nruntime=1s\n"


@pytest.fixture
def base() -> Iterator[Path]:
    """A directory anyone may enter (pytest's own are root's alone)."""
    path = Path(tempfile.mkdtemp())
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path)


@pytest.fixture(autouse=True)
def no_invoker(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No invoker unless a test names one; the process's own ids unchanged afterwards."""
    for variable in ("SUDO_UID", "SUDO_GID", "SUDO_USER", "PKEXEC_UID", "DOAS_USER"):
        monkeypatch.delenv(variable, raising=False)
    before = (os.geteuid(), os.getegid(), sorted(os.getgroups()))
    yield
    assert (os.geteuid(), os.getegid(), sorted(os.getgroups())) == before


def _secret(base: Path, name: str = "secret", mode: int = 0o600, gid: int = 0) -> Path:
    path = base / name
    path.write_text(SECRET + "\n")
    os.chown(path, 0, gid)
    path.chmod(mode)
    return path


def _suite_error(cli: Cli, base: Path, suite: Path) -> str:
    code, out, err = cli("doctor", str(base), "--suite", str(suite))
    assert (code, out) == (2, ""), err
    return err


def _refused(err: str, suite: Path, who: str) -> None:
    assert SECRET not in err and "s3cr3t" not in err, "no line of the file is quoted"
    assert err == (
        f"iobench: error: {suite}: cannot be read: Permission denied to {who}: iobench reads "
        "the files it is given with that user's rights\n"
    )


@pytest.mark.parametrize(
    ("env", "who"),
    [
        ({"SUDO_UID": str(NOBODY), "SUDO_GID": str(NOBODY)}, BY_SUDO),
        ({"SUDO_UID": str(NOBODY)}, BY_SUDO),
        ({"SUDO_UID": str(STRANGER)}, "uid 54321, who ran iobench through sudo"),
        ({"PKEXEC_UID": str(NOBODY)}, "nobody (uid 65534), who ran iobench through pkexec"),
        ({"DOAS_USER": "nobody"}, "nobody (uid 65534), who ran iobench through doas"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("how", ["link", "file", "locked-directory", "link-to-link"])
def test_a_suite_file_the_invoking_user_cannot_read_is_not_read(
    cli: Cli, base: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], who: str, how: str
) -> None:
    secret = _secret(base)
    if how == "link":
        suite = base / "link.fio"
        suite.symlink_to(secret)
    elif how == "link-to-link":
        (base / "hop").symlink_to(secret)
        suite = base / "link.fio"
        suite.symlink_to(base / "hop")
    elif how == "locked-directory":  # the file itself is anyone's, its directory is not
        locked = base / "locked"
        locked.mkdir(mode=0o700)
        suite = _secret(locked, "suite.fio", mode=0o644)
    else:
        suite = _secret(base, "suite.fio")
    for variable, value in env.items():
        monkeypatch.setenv(variable, value)
    _refused(_suite_error(cli, base, suite), suite, who)


def test_without_sudo_root_reads_what_root_names(cli: Cli, base: Path) -> None:
    """Root's own input: a mistake in it is quoted, as ever."""
    link = base / "link.fio"
    link.symlink_to(_secret(base))
    assert "root:$6$s3cr3t" in _suite_error(cli, base, link)


def test_root_through_sudo_is_root(cli: Cli, base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUDO_UID", "0")
    link = base / "link.fio"
    link.symlink_to(_secret(base))
    assert "root:$6$s3cr3t" in _suite_error(cli, base, link)


@pytest.mark.parametrize(
    ("mode", "gid", "env"),
    [
        (0o644, 0, {"SUDO_UID": str(NOBODY)}),  # anyone's
        (0o640, NOBODY, {"SUDO_UID": str(NOBODY), "SUDO_GID": str(NOBODY)}),  # the group's
        (0o640, NOBODY, {"SUDO_UID": str(NOBODY)}),  # the group of nobody's passwd line
        (0o640, NOBODY, {"SUDO_UID": str(STRANGER), "SUDO_GID": str(NOBODY)}),
    ],
)
def test_what_the_invoking_user_may_read_is_read(
    cli: Cli, base: Path, monkeypatch: pytest.MonkeyPatch, mode: int, gid: int, env: dict[str, str]
) -> None:
    suite = base / "mine.fio"
    suite.write_text(VALID_SUITE)
    os.chown(suite, 0, gid)
    suite.chmod(mode)
    for variable, value in env.items():
        monkeypatch.setenv(variable, value)
    code, out, err = cli("doctor", str(base), "--suite", str(suite), "--json")
    assert code == 0, err
    assert '"rw": "randread"' in out


def test_a_suite_named_without_a_path_is_looked_for_as_the_user(
    cli: Cli, base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _secret(base, "mysuite")
    monkeypatch.chdir(base)
    monkeypatch.setenv("SUDO_UID", str(NOBODY))
    _refused(
        _suite_error(cli, base, Path("mysuite")),
        Path("mysuite"),
        f"nobody (uid {NOBODY}), who ran iobench through sudo",
    )


@pytest.mark.parametrize("how", ["link", "file"])
def test_an_import_the_invoking_user_cannot_read_is_not_read(
    cli: Cli, base: Path, monkeypatch: pytest.MonkeyPatch, how: str, isolated_db: Path
) -> None:
    secret = _secret(base)
    path = base / "out.json"
    if how == "link":
        path.symlink_to(secret)
    else:
        path = secret
    monkeypatch.setenv("SUDO_UID", str(NOBODY))
    code, out, err = cli("import", str(path))
    assert (code, out) == (2, "")
    assert SECRET not in err and "s3cr3t" not in err and "root:" not in err
    assert err.startswith(
        f"iobench: error: cannot read {path}: Permission denied to nobody (uid 65534), who ran "
        "iobench through sudo: iobench reads the files it is given with that user's rights\n"
    )
    assert not isolated_db.exists(), "nothing stored"


@pytest.mark.parametrize(
    ("variable", "value"),
    [("SUDO_UID", "abc"), ("SUDO_UID", ""), ("SUDO_UID", "\u0661"), ("SUDO_UID", "-1"),
     ("SUDO_UID", "9" * 30), ("PKEXEC_UID", "1e3"), ("DOAS_USER", "no-such-user-here")],
)  # fmt: skip
def test_a_variable_that_names_no_user_is_refused(
    cli: Cli, base: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(UserError) as e:
        invoker()
    assert e.value.message == (
        f"iobench runs as root, and the environment's {variable} ({value!r}) names no user it "
        "could read files for"
    )
    suite = base / "mine.fio"
    suite.write_text(VALID_SUITE)
    code, _, err = cli("doctor", str(base), "--suite", str(suite))
    assert code == 2
    assert f"the environment's {variable} (" in err


def test_the_rights_are_switched_for_the_block_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUDO_UID", str(NOBODY))
    with invoker_rights():
        assert (os.geteuid(), os.getegid(), os.getgroups()) == (NOBODY, NOBODY, [NOBODY])
    assert (os.geteuid(), os.getegid()) == (0, 0)
    with pytest.raises(ZeroDivisionError), invoker_rights():
        1 / 0  # noqa: B018 - an error in the block: the rights come back all the same
    assert os.geteuid() == 0


def test_a_hosts_file_the_invoking_user_cannot_read_is_not_read(
    cli: Cli, base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sudo iobench clients check @hosts.txt` with hosts.txt -> a root-only file quoted its
    first line ("'root:$6$...' looks like an IPv6 address"). Read as the user now."""
    secret = _secret(base)
    link = base / "hosts.txt"
    link.symlink_to(secret)
    monkeypatch.setenv("SUDO_UID", str(NOBODY))
    monkeypatch.setenv("SUDO_GID", str(NOBODY))
    for args in (("clients", "check", f"@{link}"), ("run", str(base), "--clients", f"@{link}")):
        code, out, err = cli(*args)
        assert (code, out) == (2, ""), err
        assert "s3cr3t" not in err and "root:" not in err
        assert f"cannot read {link}: Permission denied to {BY_SUDO}" in err.replace("\n", " ")


@pytest.mark.parametrize("kind", ["fifo", "device", "binary", "directory"])
def test_a_hosts_file_that_is_no_list_of_hosts_is_said_to_be_so(
    cli: Cli, base: Path, kind: str
) -> None:
    """A FIFO blocked `clients check` for ever, /dev/zero would have been read without end,
    and bytes that are not UTF-8 were an internal error (UnicodeDecodeError)."""
    path = base / "hosts"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/zero")
    elif kind == "binary":
        path.write_bytes(b"node1\n\xff\xfe\x00bin\n")
    else:
        path.mkdir()
    code, out, err = cli("clients", "check", f"@{path}")
    assert (code, out) == (2, ""), err
    assert "internal error" not in err
    if kind == "binary":
        assert f"{path}:2: " in err and "is not a host name or address" in err
    else:
        assert f"--clients @{path}: {path} is not a regular file" in err
