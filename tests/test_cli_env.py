"""Commands run in the Environment they are given: its consoles, its database."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from iobench.cli import run_cli
from iobench.cli.env import Environment
from iobench.report.literal import LiteralConsole


def _env(db: Path | None = None) -> tuple[Environment, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    console = LiteralConsole(file=out, width=160, highlight=False, emoji=False)
    errors = LiteralConsole(file=err, width=160, highlight=False, emoji=False)
    return Environment(console, errors, db=db), out, err


def test_output_and_errors_go_to_the_environments_streams(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("IOBENCH_DB")
    env, out, err = _env(db=tmp_path / "mine.db")
    assert run_cli(["list", "--json"], env) == 0
    assert json.loads(out.getvalue())["kind"] == "runs"

    assert run_cli(["show", "latest"], env) == 2
    assert err.getvalue() == (
        f"iobench: error: no runs are stored yet: there is no database at {tmp_path / 'mine.db'}\n"
        "  what to do: run a benchmark first with `iobench run`, or point --db at your database\n"
    )
    assert capsys.readouterr() == ("", "")  # nothing on the process's own streams


def test_db_option_overrides_the_environments_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("IOBENCH_DB")
    env, _, err = _env(db=tmp_path / "mine.db")
    assert run_cli(["--db", str(tmp_path / "other.db"), "show", "latest"], env) == 2
    assert f"there is no database at {tmp_path / 'other.db'}\n" in err.getvalue()
