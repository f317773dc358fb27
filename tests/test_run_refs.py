"""What every command that takes a RUN accepts: an id of ASCII digits, `latest`, or -N for
the N-th newest (README); anything else is refused, and a number beyond SQLite's 64-bit
range names no run instead of crashing (no fio needed)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Cli
from iobench.store import Store
from test_cli_reports import _store_run

# Each command with the arguments around the RUN it is given; `run` is where the RUN goes.
COMMANDS: dict[str, Callable[[str, Path], list[str]]] = {
    "show": lambda run, _: ["show", run],
    "export": lambda run, _: ["export", run],
    "rm": lambda run, _: ["rm", run, "--yes"],
    "compare": lambda run, _: ["compare", "1", run],
    "compare --baseline": lambda run, _: ["compare", "1", "2", "--baseline", run],
    "report": lambda run, tmp: ["report", run, "-o", str(tmp / "r.md")],
    "report --baseline": lambda run, tmp: ["report", "1", "2", "--baseline", run, "-o",
                                          str(tmp / "r.md")],
}  # fmt: skip

TOO_BIG = [
    "9223372036854775808",  # 2**63: one past SQLite's largest INTEGER
    "99999999999999999999999",
    "0" * 30 + "9223372036854775808",
    "9" * 5000,  # past int()'s 4300 digits
]
NOT_RUNS = [
    "\u0661",  # ARABIC-INDIC DIGIT ONE: int() reads it as 1
    "\uff11",  # FULLWIDTH DIGIT ONE
    "-\u0661",
    "\u00b9",  # SUPERSCRIPT ONE: str.isdigit() says yes, int() says no
    "-0",
    "-00",
    "-",
    "",
    " 1",
    "1 ",
    "+1",
    "1_0",
    "0x1",
    "1.0",
    "last",  # never documented
    "Latest",
    "--1",
    "one",
    "1\u202e",
]


@pytest.fixture
def runs(isolated_db: Path) -> Path:
    with Store.open(isolated_db) as store:
        _store_run(store, "local")
        _store_run(store, "ceph", speed=0.5)
    return isolated_db


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("run", TOO_BIG, ids=lambda r: r[:25])
def test_an_id_beyond_sqlite_is_no_such_run(
    cli: Cli, runs: Path, tmp_path: Path, command: str, run: str
) -> None:
    code, out, err = cli(*COMMANDS[command](run, tmp_path))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"iobench: error: there is no run {run} in {runs}",
        "  what to do: see the runs with `iobench list`",
    ]
    assert not (tmp_path / "r.md").exists()


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("run", ["-3", "-9223372036854775808", "-" + "9" * 40])
def test_counting_back_past_the_oldest_run_is_no_such_run(
    cli: Cli, runs: Path, tmp_path: Path, command: str, run: str
) -> None:
    code, out, err = cli(*COMMANDS[command](run, tmp_path))
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == (
        f"iobench: error: no run matches {run!r}: the database {runs} has 2 run(s)"
    )


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("run", NOT_RUNS, ids=ascii)
def test_anything_but_digits_latest_or_minus_n_is_refused(
    cli: Cli, runs: Path, tmp_path: Path, command: str, run: str
) -> None:
    code, out, err = cli(*COMMANDS[command](run, tmp_path))
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0].startswith("iobench: error: '") and lines[0].endswith("' is not a run id")
    assert lines[1:] == [
        "  what to do: give an id from `iobench list` (digits), `latest`, or -N for the N-th "
        "newest (-1 is the newest)"
    ]
    assert "\u202e" not in err, "what the user typed is shown literally"
    assert not (tmp_path / "r.md").exists()
    code, out, _ = cli("list", "--json")
    assert len(json.loads(out)["runs"]) == 2, "nothing removed"


@pytest.mark.parametrize(
    ("run", "expected"), [("1", 1), ("2", 2), ("0002", 2), ("latest", 2), ("-1", 2), ("-2", 1),
                          ("-02", 1)]
)  # fmt: skip
def test_what_the_readme_promises_names_a_run(
    cli: Cli, runs: Path, run: str, expected: int
) -> None:
    code, out, err = cli("show", run, "--json")
    assert code == 0, err
    assert json.loads(out)["run_id"] == expected
    code, out, err = cli("export", run, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["run_id"] == expected


def test_zero_is_an_id_that_names_no_run(cli: Cli, runs: Path) -> None:
    code, _, err = cli("show", "0")
    assert (code, err.splitlines()[0]) == (2, f"iobench: error: there is no run 0 in {runs}")


def test_a_database_whose_run_ids_are_used_up_says_so_not_that_its_disk_is_full(
    cli: Cli, runs: Path
) -> None:
    """A run with SQLite's largest id (an edited database): SQLite has no id for a new run
    and says SQLITE_FULL, which iobench read as "the filesystem ... is full"."""
    conn = sqlite3.connect(runs)
    with conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        for table, column in (("targets", "run_id"), ("results", "run_id"), ("runs", "id")):
            conn.execute(f"UPDATE {table} SET {column} = {2**63 - 1} WHERE {column} = 2")
    conn.close()
    code, _, err = cli("show", str(2**63 - 1))
    assert code == 0, err
    recorded = Path(__file__).parent / "data/fio-outputs/recorded/seqread-1m-json.json"
    code, _, err = cli("import", str(recorded))
    assert code == 1
    assert "filesystem" not in err and "free some space" not in err
    assert f"{runs} has no id left for a new run" in err.replace("\n  ", " ")
    assert "--db" in err
