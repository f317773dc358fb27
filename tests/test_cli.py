"""The CLI end to end: exact messages and exit codes, real fio, real SQLite."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.cli import main


def _commands() -> list[str]:
    return sorted(main.commands)


@pytest.mark.parametrize("command", _commands())
def test_every_command_has_help_with_an_example(cli: Cli, command: str) -> None:
    code, out, _ = cli(command, "--help")
    assert code == 0
    assert main.commands[command].help, f"{command} has no help text"
    assert "Example" in out, f"{command} --help shows no example"


def test_top_level_help_documents_exit_codes(cli: Cli) -> None:
    code, out, _ = cli("--help")
    assert code == 0
    for line in ("0    success", "2    bad input", "3    target refused", "130  interrupted"):
        assert line in out


def test_unknown_suite_lists_the_builtins(cli: Cli, tmp_path: Path) -> None:
    code, out, err = cli("run", str(tmp_path), "--suite", "nosuch")
    assert code == 2
    assert out == ""
    assert "nosuch" in err and "quick" in err and "standard" in err
    assert "Traceback" not in err


def test_bad_runtime_is_bad_input(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("run", str(tmp_path), "--runtime", "soon")
    assert code == 2
    assert "--runtime: 'soon' is not a duration" in err


def test_missing_target_is_bad_input(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("run", str(tmp_path / "nope"))
    assert code == 2
    assert str(tmp_path / "nope") in err


def test_overwrite_signatures_needs_destructive(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("run", str(tmp_path), "--overwrite-signatures")
    assert code == 2
    assert "--overwrite-signatures only makes sense with --destructive" in err


def test_fio_missing_names_the_install_command(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, _, err = cli("run", str(tmp_path))
    assert code == 1
    assert "fio is not installed" in err and "apt-get install fio" in err
    assert list(tmp_path.iterdir()) == []


def test_existing_file_is_not_written_without_destructive(cli: Cli, tmp_path: Path) -> None:
    f = tmp_path / "data.bin"
    f.write_bytes(b"precious" * 1000)
    code, _, err = cli("run", str(f))
    assert code == 3
    assert "would be overwritten" in err and "--destructive" in err
    assert f.read_bytes() == b"precious" * 1000


def test_suites_json_lists_every_builtin(cli: Cli) -> None:
    code, out, _ = cli("suites", "--json")
    assert code == 0
    doc = json.loads(out)
    names = [s["name"] for s in doc["suites"]]
    assert names == sorted(names)
    assert {"quick", "standard", "volume", "cloud-disk", "randwrite-4x32", "dd"} <= set(names)
    quick = next(s for s in doc["suites"] if s["name"] == "quick")
    assert len(quick["workloads"]) == 6


def test_info_json_describes_host_and_filesystem(cli: Cli, tmp_path: Path) -> None:
    code, out, _ = cli("info", str(tmp_path), "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["kind"] == "info" and doc["schema_version"] == 1
    assert doc["host"]["hostname"]
    assert doc["host"]["cpu"]["online"] >= 1
    assert doc["target"]["kind"] == "directory"
    assert doc["target"]["context"]["filesystem"]["fstype"]


def test_info_lines_end_with_their_text(cli: Cli, tmp_path: Path) -> None:
    """No line is padded with blanks to the widest value (a table did that)."""
    code, out, _ = cli("info", str(tmp_path))
    assert code == 0 and out.count("\n") >= 6
    assert [line for line in out.splitlines() if line != line.rstrip()] == []
    assert re.search(r"^filesystem +\S", out, re.M)


@pytest.mark.parametrize("width", [40, 60, 100])
def test_long_findings_and_lines_wrap_at_words_under_their_first_word(width: int) -> None:
    """On a narrow terminal a finding's message, its fix and a long context value wrap at
    word boundaries, each further line indented under the first word (the terminal folded
    them at the left edge, mid-word); no line is longer than the terminal or ends in a blank."""
    import io

    from rich.console import Console

    from iobench.report.context import render_lines
    from iobench.report.terminal import render_warnings

    words = " ".join(f"word{i}" for i in range(60))

    def shown(draw: Any) -> list[str]:
        buffer = io.StringIO()
        draw(Console(file=buffer, width=width, force_terminal=True, color_system=None))
        lines = buffer.getvalue().splitlines()
        assert all(len(line) <= width and line == line.rstrip() for line in lines)
        return lines

    finding = {"id": "x", "severity": "warning", "message": words, "fix": "fix " + words}
    lines = shown(lambda c: render_warnings([finding], c))
    fix = next(i for i, line in enumerate(lines) if line.startswith("    fix: "))
    message, fixed = lines[2:fix], lines[fix:]
    assert message[0].startswith("    word0 ") and all(m.startswith("    word") for m in message)
    assert all(f.startswith(" " * 9 + "word") for f in fixed[1:])
    context = shown(lambda c: render_lines([("device chain", words), ("k", "v")], c))
    assert context[0].startswith("device chain  word0 ") and context[-1] == "k             v"
    assert all(line.startswith(" " * 14 + "word") for line in context[1:-1])
    # Every word whole, in order, once in each text.
    for text in (message, fixed, context[:-1]):
        said = " ".join(line.strip() for line in text)
        assert said.endswith("word58 word59") and "word5 word6 " in said


def test_list_on_an_empty_database(cli: Cli) -> None:
    code, out, _ = cli("list")
    assert code == 0
    assert "no runs stored yet" in out
    code, out, _ = cli("list", "--json")
    assert json.loads(out) == {"schema_version": 1, "kind": "runs", "runs": []}


def test_reading_commands_create_no_database(cli: Cli, isolated_db: Path) -> None:
    code, out, _ = cli("list")
    assert (code, out) == (0, "no runs stored yet; start one with `iobench run`\n")
    code, _, err = cli("show", "42")
    assert code == 2
    assert err == (
        f"iobench: error: no runs are stored yet: there is no database at {isolated_db}\n"
        "  what to do: run a benchmark first with `iobench run`, or point --db at your "
        "database\n"
    )
    assert not isolated_db.exists()


def test_show_unknown_run(cli: Cli, isolated_db: Path) -> None:
    from iobench.store import Store

    Store.open(isolated_db).close()
    code, _, err = cli("show", "42")
    assert code == 2
    assert err == (
        f"iobench: error: there is no run 42 in {isolated_db}\n"
        "  what to do: see the runs with `iobench list`\n"
    )


def test_failing_fio_stores_a_failed_run_and_leaves_no_file(
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
    fake_fio: None,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("FAKE_FIO_MODE", "fail")
    target = tmp_path / "t"
    target.mkdir()
    code, out, err = cli("run", str(target), "--size", "4M", "--json")
    assert code == 1
    assert "fio: failed parsing rw=bogus" in err
    assert "is stored as failed" in err
    doc = json.loads(out)
    assert doc["status"] == "failed"
    assert "fio: failed parsing rw=bogus" in doc["error"]
    assert doc["results"] == [], "the failure came while laying out the test file"
    assert list(target.iterdir()) == []


def _check_direction(d: dict[str, Any]) -> None:
    assert d["iops"] > 0 and d["bw_bytes"] > 0 and d["io_bytes"] > 0
    lat = d["lat_ns"]
    for key in ("mean", "min", "max", "stddev", "p50", "p90", "p99", "p99.9", "p99.99"):
        assert lat[key] is not None, key
    assert 0 < lat["min"] <= lat["p50"] <= lat["p99"] <= lat["p99.99"]
    assert lat["min"] <= lat["mean"] <= lat["max"]


@pytest.mark.fio
def test_quick_suite_json_end_to_end(cli: Cli, real_fio: str, tmp_path: Path, one_cpu: int) -> None:
    """The quick suite end to end, on one CPU (as on a 1-CPU machine): its 4 jobs at QD32
    run as 1 job at QD128, fio gets that, the run stores that and says so once."""
    target = tmp_path / "vol"
    target.mkdir()
    code, out, err = cli(
        "run", str(target), "--suite", "quick", "--runtime", "1s", "--ramp", "0",
        "--size", "16M", "--label", "[bold]x[/] <script>alert(1)</script>", "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema_version"] == 1 and doc["kind"] == "run"
    assert doc["status"] == "complete"
    assert doc["suite"] == "quick"
    assert doc["label"] == "[bold]x[/] <script>alert(1)</script>"
    assert doc["fio_version"] and doc["fio_version"][0] == "3"
    assert doc["host"]["hostname"]
    assert len(doc["results"]) == 6
    for r in doc["results"]:
        assert r["status"] == "ok"
        assert r["params"]["size"] == 16 << 20 and r["params"]["runtime_s"] == 1.0
        assert set(r["params"]) >= {
            "rw",
            "bs",
            "iodepth",
            "numjobs",
            "ioengine",
            "direct",
            "runtime_s",
            "size",
        }
        reads = r["params"]["rw"] in ("read", "randread")
        _check_direction(r["read"] if reads else r["write"])
        assert (r["write"] if reads else r["read"]) is None
        assert "bins" not in json.dumps(r)
    ids = {w["id"] for w in doc["warnings"]}
    assert "short-runtime" in ids
    assert list(target.iterdir()) == [], "the test file is removed"

    # show gives back the same document; list has the run; the table escapes the label
    code, shown, _ = cli("show", "latest", "--json")
    assert json.loads(shown) == doc
    code, listed, _ = cli("list", "--json")
    assert [r["run_id"] for r in json.loads(listed)["runs"]] == [doc["run_id"]]
    code, table, _ = cli("show", str(doc["run_id"]))
    assert "label [bold]x[/] <script>alert(1)</script>" in table
    assert "randwrite-4k-qd32x4" in table
    code, raw, _ = cli("show", "latest", "--raw")
    assert "--output-format=json+" in raw and "[randread-4k-qd1]" in raw
    _fitted_to_one_cpu(cli, table)


def _fitted_to_one_cpu(cli: Cli, shown: str) -> None:
    """The run of the quick suite on one CPU says it was fitted, once, as information, and
    stores what ran: the suite definition, each result's params and the job files."""
    assert "numjobs-over-cpus" not in shown
    assert "  info [fitted-to-cpus]\n" in shown and shown.count("is fitted to the") == 1
    assert (
        "the quick suite is fitted to the 1 CPU its jobs run on here, so that they do not "
        "compete for CPU time: randread-4k-qd32x4, randwrite-4k-qd32x4, read-256k-qd32x4 and "
        "write-256k-qd32x4 run 1 job at iodepth 128 instead of 4 at 32 (the same 128 IOs in "
        "flight)"
    ) in " ".join(shown.split())
    assert "  info [indicative]\n" in shown
    # What the user typed is theirs to change: --runtime 1s warns, once.
    assert "  warning [short-runtime]\n    --runtime 1s is too short" in shown
    assert shown.count("--runtime 1s is too short") == 1
    code, exported, err = cli("export", "latest", "--format", "json")
    assert code == 0, err
    doc = json.loads(exported)
    shapes = {w["name"]: (w["numjobs"], w["iodepth"]) for w in doc["suite_def"]["workloads"]}
    assert shapes == {
        "randread-4k-qd1": (1, 1),
        "randwrite-4k-qd1": (1, 1),
        **dict.fromkeys(WIDE, (1, 128)),
    }
    for r in doc["results"]:
        assert (r["params"]["numjobs"], r["params"]["iodepth"]) == shapes[r["workload"]]
        assert f"numjobs={shapes[r['workload']][0]}\n" in r["job_file"]
        assert f"iodepth={shapes[r['workload']][1]}\n" in r["job_file"]
    fitted = [w for w in doc["warnings"] if w["id"] == "fitted-to-cpus"]
    assert [(w["severity"], w["data"]) for w in fitted] == [("info", {"cpus": 1})]


WIDE = ("randread-4k-qd32x4", "randwrite-4k-qd32x4", "read-256k-qd32x4", "write-256k-qd32x4")


@pytest.mark.fio
def test_existing_file_read_only_suite_leaves_it_unchanged(
    cli: Cli, real_fio: str, tmp_path: Path
) -> None:
    f = tmp_path / "data.bin"
    f.write_bytes(hashlib.sha256(b"x").digest() * (2 << 15))  # 2 MiB of data
    before = hashlib.sha256(f.read_bytes()).hexdigest()
    suite = tmp_path / "reads.toml"
    suite.write_text(
        'name = "reads"\ndescription = "reads only"\n'
        '[[workload]]\nname = "rr"\nrw = "randread"\nbs = "4k"\niodepth = 4\nnumjobs = 1\n'
        'runtime = "1s"\n'
    )
    code, out, err = cli("run", str(f), "--suite", str(suite), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["results"][0]["params"]["size"] == 2 << 20
    assert "size-capped" in {w["id"] for w in doc["warnings"]}
    assert hashlib.sha256(f.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.bin", "reads.toml"]


def test_not_enough_free_space_is_refused_before_anything_runs(cli: Cli, tmp_path: Path) -> None:
    code, out, err = cli("run", str(tmp_path), "--size", "100T")
    assert code == 2
    assert out == ""
    assert "free" in err and "--size" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.fio
def test_fio_failing_mid_suite_keeps_the_finished_workload(
    cli: Cli, real_fio: str, tmp_path: Path
) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text(
        'name = "s"\ndescription = "second workload is misaligned for O_DIRECT"\n'
        '[defaults]\nruntime = "1s"\nsize = "4M"\niodepth = 1\nnumjobs = 1\nrw = "randread"\n'
        '[[workload]]\nname = "good"\nbs = "4k"\n'
        '[[workload]]\nname = "bad"\nbs = 1000\n'
    )
    target = tmp_path / "vol"
    target.mkdir()
    code, out, err = cli("run", str(target), "--suite", str(suite), "--json")
    assert code == 1
    assert "EINVAL" in err and "fio said: fio: io_u error" in err
    doc = json.loads(out)
    assert doc["status"] == "failed"
    assert [(r["workload"], r["status"]) for r in doc["results"]] == [
        ("good", "ok"),
        ("bad", "failed"),
    ]
    assert doc["results"][0]["read"]["iops"] > 0
    assert "direct = false" in err
    assert list(target.iterdir()) == []
