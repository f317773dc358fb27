"""Targets whose path the kernel cannot take (issue 22): a relative target in a working
directory deeper than PATH_MAX, a working directory removed since, an absolute path too
long, a name longer than NAME_MAX. Each says what is wrong, not "no permission" or an
internal error; `run` stops before fio and the database."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import Cli
from iobench.errors import UserError
from iobench.targets import resolve_target

NAME = "d" * 200
HINT = (
    "choose a directory with a shorter path, or bind-mount this one at a shorter path "
    "(mount --bind DIR /mnt/short) and name that"
)


def _deep(start: Path, monkeypatch: pytest.MonkeyPatch, levels: int = 25) -> str:
    """cd ``levels`` directories of 200 bytes down from ``start`` (one by one: mkdir and cd
    of the whole path would be refused) and return that path, as $PWD too."""
    monkeypatch.chdir(start)
    for _ in range(levels):
        os.mkdir(NAME)  # noqa: PTH102 - relative to a cwd too deep for an absolute path
        os.chdir(NAME)
    path = os.getcwd()  # noqa: PTH109 - the C library's getcwd copes, the kernel's would not
    monkeypatch.setenv("PWD", path)
    return path


@pytest.mark.parametrize("spec", [".", "sub", "./sub/", "sub/.."])
def test_a_relative_target_in_a_too_deep_directory_says_so(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_db: Path, spec: str
) -> None:
    deep = _deep(tmp_path, monkeypatch)
    os.mkdir("sub")  # noqa: PTH102
    real = os.path.normpath(os.path.join(deep, spec))  # noqa: PTH118
    size = len(os.fsencode(real))
    assert size > 4095
    message = (
        f"cannot use {spec} as a target: its path, {real[:40]}...{real[-37:]}, is {size} bytes "
        "long; the kernel accepts 4095 (PATH_MAX)"
    )
    with pytest.raises(UserError) as e:
        resolve_target(spec)
    assert (e.value.message, e.value.hint) == (message, HINT)
    code, out, err = cli("doctor", spec, "--json")
    assert code == 2, err
    assert json.loads(out)["refused"] == {"message": message, "hint": HINT, "exit_code": 2}
    code, out, err = cli("run", spec, "--suite", "quick")
    assert (code, out) == (2, "")
    assert err == f"iobench: error: {message}\n  what to do: {HINT}\n"
    assert sorted(os.listdir()) == ["sub"], "nothing written"  # noqa: PTH208
    assert not isolated_db.exists()


def test_a_directory_just_short_enough_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit is the kernel's: 4095 bytes is a path, and fio gets it."""
    monkeypatch.chdir(tmp_path)
    here = len(os.fsencode(str(tmp_path)))
    levels, rest = divmod(4095 - here, len(NAME) + 1)
    deep = _deep(tmp_path, monkeypatch, levels)
    last = "e" * (rest - 1)
    os.mkdir(last)  # noqa: PTH102
    target = resolve_target(last)
    assert len(os.fsencode(target.path)) == 4095
    assert (target.kind, target.spec) == ("directory", f"{deep}/{last}")


@pytest.mark.parametrize("spec", [".", "sub", "../x"])
def test_a_removed_working_directory_is_named(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    message = (
        "a relative target names a place in the working directory, and iobench cannot tell "
        "where that is: it has been removed (or its filesystem unmounted) since the shell "
        "entered it"
    )
    hint = "cd to an existing directory, or give the target's absolute path"
    with pytest.raises(UserError) as e:
        resolve_target(spec)
    assert (e.value.message, e.value.hint) == (message, hint)
    code, out, err = cli("doctor", spec, "--json")
    assert code == 2, err
    assert json.loads(out)["refused"] == {"message": message, "hint": hint, "exit_code": 2}


def test_an_absolute_target_needs_no_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    target = resolve_target(str(tmp_path))
    assert (target.spec, target.path, target.kind) == (str(tmp_path), str(tmp_path), "directory")


def test_an_absolute_path_too_long_is_named(tmp_path: Path) -> None:
    spec = str(tmp_path) + ("/" + NAME) * 21
    with pytest.raises(UserError) as e:
        resolve_target(spec)
    size = len(os.fsencode(spec))
    assert e.value.message == (
        f"cannot use {spec[:40]}...{spec[-37:]} as a target: its path is {size} bytes long; "
        "the kernel accepts 4095 (PATH_MAX)"
    )


@pytest.mark.parametrize("name", ["n" * 256, "\u00e9" * 128])  # 256 bytes either way
def test_a_name_longer_than_the_kernel_takes_is_named(tmp_path: Path, name: str) -> None:
    spec = f"{tmp_path}/{name}/x"
    with pytest.raises(UserError) as e:
        resolve_target(spec)
    assert e.value.message.endswith(
        " as a target: a name in its path is 256 bytes long; the kernel accepts 255"
    )
    assert e.value.hint == HINT


def test_a_link_to_a_name_too_long_is_said_to_be_one(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / ("n" * 300))
    with pytest.raises(UserError) as e:
        resolve_target(str(link))
    assert e.value.message == (
        f"cannot use {link} as a target: a symbolic link in its path leads to a name or path "
        "too long for the kernel"
    )


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("n" * 300 + "/..", "a name in its path is 300 bytes long; the kernel accepts 255"),
        ("/tmp/" + "\u00e9" * 150 + "/../tmp", "a name in its path is 300 bytes long"),
        ("../" * 2000, "the path as given is 6000 bytes long; the kernel accepts 4095 (PATH_MAX)"),
    ],
    ids=["name then ..", "absolute, name then ..", "../ x 2000"],
)
def test_what_dot_dot_normalizes_away_is_still_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str, said: str
) -> None:
    """The kernel refuses these as typed; their normalized form is short. They were said to
    hold "a symbolic link [that] leads to a name or path too long" (there is none)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as e:
        resolve_target(spec)
    assert said in e.value.message
    assert "symbolic link" not in e.value.message
