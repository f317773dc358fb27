"""A name that can only name a directory (`x.md/`, `x.md/.`, `..`) is refused by every
command that writes a file the user names (issue 22): nothing is written, not `x.md`, and
an existing `x.md` is left as it was. No fio runs here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import Cli

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"

COMMANDS = {
    "report": ("report", "1", "-o"),
    "report --format md": ("report", "1", "--format", "md", "-o"),
    "export": ("export", "1", "-o"),
    "doctor --fio-jobfile": ("doctor", "{tmp}", "--fio-jobfile"),
    "suites export": ("suites", "export", "quick", "-o"),
    "suites export --force": ("suites", "export", "quick", "--force", "-o"),
}

# name -> what the message says it ends in
DIRECTORY_NAMES = {
    "x.md/": "/",
    "x.md//": "/",
    "x.md/.": "/.",
    "x.md/..": "/..",
    "sub/x.md/": "/",
    "sub/": "/",
    ".": ".",
    "..": "..",
    "/": "/",
}


@pytest.fixture
def imported(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    code, _, err = cli("import", str(RECORDED / "libaio-randread-4k-qd8-jsonplus.json"))
    assert code == 0, err
    work = tmp_path / "work"
    work.mkdir()
    (work / "sub").mkdir()
    monkeypatch.chdir(work)
    return work


def _listing(directory: Path) -> dict[str, str | None]:
    return {
        str(p.relative_to(directory)): p.read_text() if p.is_file() else None
        for p in sorted(directory.rglob("*"))
    }


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", DIRECTORY_NAMES)
@pytest.mark.parametrize("existing", [False, True], ids=["nothing-there", "x.md-a-file"])
def test_a_name_that_names_a_directory_is_refused(
    cli: Cli, imported: Path, command: str, name: str, existing: bool
) -> None:
    if existing:
        (imported / "x.md").write_text("precious\n")
        (imported / "sub" / "x.md").write_text("precious too\n")
    before = _listing(imported)
    args = [a.format(tmp=imported) for a in COMMANDS[command]]
    code, out, err = cli(*args, name)
    assert (code, out) == (2, "")
    ending = DIRECTORY_NAMES[name]
    hint = "name the file itself" + (", without the trailing /" if ending == "/" else "")
    assert err == (
        f"iobench: error: cannot write {name}: a name ending in {ending!r} names a directory, "
        f"not a file\n  what to do: {hint}\n"
    )
    assert _listing(imported) == before


@pytest.mark.parametrize("command", COMMANDS)
def test_a_link_followed_by_a_slash_is_refused(cli: Cli, imported: Path, command: str) -> None:
    """`link/` names what the link leads to as a directory: a link to a file is not one."""
    (imported / "file.md").write_text("precious\n")
    (imported / "link").symlink_to("file.md")
    args = [a.format(tmp=imported) for a in COMMANDS[command]]
    code, _, err = cli(*args, "link/")
    assert code == 2
    assert "cannot write link/: a name ending in '/' names a directory, not a file" in err
    assert (imported / "file.md").read_text() == "precious\n"
    assert (imported / "link").is_symlink()


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", ["x.md", "sub/x.md", "./x.md", "sub/../x.md", ".x.md"])
def test_a_file_name_is_still_written(cli: Cli, imported: Path, command: str, name: str) -> None:
    args = [a.format(tmp=imported) for a in COMMANDS[command]]
    code, _, err = cli(*args, name)
    assert code == 0, err
    assert (imported / name).is_file()
    assert (imported / name).stat().st_size > 0


@pytest.mark.parametrize("command", ["report", "export", "doctor --fio-jobfile"])
def test_a_relative_name_in_a_removed_working_directory_is_refused(
    cli: Cli, imported: Path, command: str
) -> None:
    gone = imported / "gone"
    gone.mkdir()
    os.chdir(gone)  # the fixture's monkeypatch.chdir restores the directory it started in
    gone.rmdir()
    args = [a.format(tmp=imported) for a in COMMANDS[command]]
    code, _, err = cli(*args, "r.md")
    assert code == 2
    assert err == (
        "iobench: error: cannot write r.md: the working directory it is relative to has been "
        "removed\n  what to do: cd to an existing directory, or give the file's absolute path\n"
    )
