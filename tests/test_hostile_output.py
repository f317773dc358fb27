"""Strings from data are shown literally (issue 11, point 4).

Labels, paths, workload and host names, fio versions, dates, warnings, errors and context
come from imported files, exported documents, the database and fio servers. Here every one
of them holds a hostile string, and every command that prints them must exit normally,
print no raw control or bidi character (ESC, CSI, BEL, CR, U+202E, ...), and show the
string as typed: ``[/]`` and ``[link=...]`` are text, not rich markup, and a control
character is a visible escape such as ``\\x1b``. The runs are stored through the Store, the
way `run` and `import` store them; nothing runs fio.
"""

from __future__ import annotations

import functools
import io
import itertools
import json
import pickle
import re
import shutil
import socket
import tempfile
import unicodedata
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import Cli
from iobench.cli.env import stderr_console
from iobench.engine import Step
from iobench.engine.steps import StepEnd
from iobench.export import read_csv
from iobench.fio.parse import parse_fio_output
from iobench.metrics import workload_metrics
from iobench.model import Workload
from iobench.records import ResultRecord, TargetRecord, now_iso
from iobench.report.literal import (
    LiteralConsole,
    json_literal,
    literal,
    literal_lines,
    markup_literal,
)
from iobench.report.markdown import md_text
from iobench.report.progress import ProgressDisplay
from iobench.store import Store

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"
FORGED = "iobench: error: forged"

# One of each kind: markup that crashes rich, markup that styles or links, and control
# sequences that retitle the window, link, clear the screen, overwrite, reorder or forge.
HOSTILE = [
    pytest.param("[/]", id="markup-close"),
    pytest.param("[bold red]loud[/bold red]", id="markup-style"),
    pytest.param("[link=https://evil.example]docs[/link]", id="markup-link"),
    pytest.param("\x1b]0;pwned\x07title", id="osc-title"),
    pytest.param("\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", id="osc8-link"),
    pytest.param("\x1b[2J\x1b[Hclear", id="csi-clear"),
    pytest.param("\x9b31mcsi8bit", id="c1-csi"),
    pytest.param("ab\b\b\x7fcd", id="backspace-del"),
    pytest.param("shown\rhidden", id="carriage-return"),
    pytest.param(f"one\n{FORGED}", id="newline"),
    pytest.param("\u202etxt.exe\u202c\u2066iso\u2069", id="bidi"),
]

# Characters no output may hold raw: C0/C1 controls and DEL (a newline is iobench's own),
# invisible format characters (bidi overrides and isolates), separators, surrogates.
_HIDDEN = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def raw_controls(text: str) -> set[str]:
    return {c for c in text if c != "\n" and unicodedata.category(c) in _HIDDEN}


def assert_safe(
    code: int, out: str, err: str, expected_code: int = 0, *, evidence: bool = False
) -> None:
    """The command ended as it should, without a crash, and printed nothing a terminal
    would act on, nor a line of its own that data forged (a later line of an error message
    is indented; multi-line evidence such as fio's stderr keeps its lines)."""
    assert code == expected_code, (out, err)
    assert "internal error" not in err, err
    assert raw_controls(out + err) == set(), (out, err)
    if not evidence:
        lines = (out + err).splitlines()
        assert not any(line.startswith(FORGED) for line in lines), (out, err)


def shown(h: str, text: str, *, lines: bool = False) -> bool:
    """Whether ``h`` appears as typed, its control characters as escapes (its newlines too,
    unless ``lines``: an error message's lines stay lines). Rich may have wrapped it inside
    a table cell (the blanks that wrapping adds do not count) or, in a column too narrow for
    it, cut it short with "…" (as much of it as fits counts)."""
    want = re.sub(r"\s+", "", literal_lines(h) if lines else literal(h))
    if want in re.sub(r"[\s│┃]+", "", text):
        return True
    return any(want.startswith(cut) for cut in re.findall(r"([^\s│┃]{12,})…", text))


# -- a database whose every printed field is hostile -----------------------------------------


@functools.cache
def _recorded_metrics() -> bytes:
    """A real fio run's metrics, parsed once, pickled: each use unpickles a copy of its own
    (7,524 uses: copy.deepcopy of its latency bins took 30 s of CPU)."""
    output = parse_fio_output((RECORDED / "libaio-randread-4k-qd8-jsonplus.json").read_text())
    return pickle.dumps(workload_metrics(output, {"bs": 4096, "iodepth": 8, "numjobs": 1}))


def _metrics(iops: float) -> dict[str, Any]:
    m: dict[str, Any] = pickle.loads(_recorded_metrics())
    scale = iops / m["read"]["iops"]
    m["read"]["iops"] = iops
    m["read"]["bw_bytes"] *= scale
    return m


def _context(h: str) -> dict[str, Any]:
    return {
        "filesystem": {"fstype": h, "source": h, "target": h, "options": h},
        "block": {"disks": [{"path": h, "transport": h, "model": h, "vendor": h}]},
    }


def _host(h: str) -> dict[str, Any]:
    return {
        "hostname": h,
        "os": h,
        "kernel": {"release": h, "version": h},
        "cpu": {"model": h, "online": 2},
        "virtualization": {"vm": h},
        "memory_bytes": 1 << 30,
    }


def _result(h: str, workload: str, params: dict[str, Any], **kw: Any) -> ResultRecord:
    fields: dict[str, Any] = {
        "target": h,
        "workload": workload,
        "position": 0,
        "status": "ok",
        "params": {"ioengine": h, "direct": True, "runtime_s": 5.0, "ramp_s": 1.0,
                   "size": 1 << 26, "rwmixread": None, "options": {h: h}, **params},
        "metrics": _metrics(1000.0),
        "job_file": f"[{h}]\nfilename={h}\nrw=randread\n",
        "fio_argv": ["fio", h],
        "fio_rc": 0,
        "fio_version": h,
        "raw_output": h,
        "fio_stdout": h,
        "fio_stderr": f"fio: {h}\nfio: second line",
        "error": None,
        "started_at": now_iso(),
        "finished_at": now_iso(),
    }  # fmt: skip
    fields.update(kw)
    return ResultRecord(**fields)


def _warnings(h: str) -> list[dict[str, Any]]:
    return [{"id": h, "severity": h, "message": h, "fix": h, "workload": h, "target": h}]


def _spec(h: str) -> dict[str, Any]:
    return {
        "spec": h, "title": h, "sources": [h], "note": h, "params": {h: h}, "iops": 3000.0,
        "bw_bytes": 125e6, "io_unit": None, "latency_mean_ns": None, "burst": None,
        "basis": [h], "tolerance": 0.9, "min_outstanding": 16,
    }  # fmt: skip


def _new_run(
    store: Store, h: str, suite_def: dict[str, Any], label: str | None = None, **host: Any
) -> int:
    return store.create_run(
        suite=h,
        suite_def=suite_def,
        label=h if label is None else label,
        argv=["iobench", h],
        host={**_host(h), **host},
        iobench_version=h,
        targets=[TargetRecord(0, h, h, h, None, _context(h))],
        origin="imported",
        source=h,
        started_at=h,
    )


SHAPE = {"rw": "randread", "bs": 4096, "iodepth": 8, "numjobs": 1}


def store_hostile_runs(store: Store, h: str) -> None:
    """Run 1: every field of a plain run, a failed workload, expectations and a provider
    spec. Run 2: the same setup to compare with (another fio version, a workload run 1 does
    not have). Run 3: a sweep. Run 4: a characterization. Run 5: a run on clients."""
    expectation = {"text": h, "workload": h, "direction": "read", "metric": "iops",
                   "op": ">=", "value": 1.0, "source": h}  # fmt: skip
    suite_def: dict[str, Any] = {
        "name": h, "description": h, "expectations": [expectation], "spec": _spec(h)
    }  # fmt: skip
    for n in (1, 2):
        run_id = _new_run(store, h, suite_def)
        store.add_result(run_id, _result(h, h, {**SHAPE, "rw": h}, metrics=_metrics(n * 1e3)))
        failed = _result(h, f"{h}-failed", SHAPE, status="failed", metrics=None, error=h)
        store.add_result(run_id, failed)
        if n == 2:  # matches nothing in run 1
            store.add_result(run_id, _result(h, f"{h}-{n}", {**SHAPE, "iodepth": 2}))
        store.finish_run(run_id, status="aborted", fio_version=f"{h}{n}",
                         warnings=_warnings(h), error=h)  # fmt: skip
    curves: list[dict[str, Any]] = [
        {"sweep": {"axes": {}}, "p99_under_ns": 2e6},
        {"plan": {"kind": "characterize", "settings": {}}},
    ]
    for suite_def in curves:
        run_id = _new_run(store, h, suite_def, label=f"curves {h}")
        for i, (bs, qd) in enumerate((b, q) for b in (4096, 1 << 20) for q in (1, 4, 16)):
            r = _result(h, f"{h}-{i}", {**SHAPE, "bs": bs, "iodepth": qd}, position=i,
                        metrics=_metrics(min(qd, 4) * 1000.0 * (4096 / bs) ** 0.5))  # fmt: skip
            store.add_result(run_id, r)
        store.finish_run(run_id, status="complete", fio_version=h, warnings=_warnings(h))
    run_id = _new_run(store, h, {"clients": {"names": [h]}}, label=f"clients {h}")
    summary = {"start_skew_ms": 3.0, "stragglers": [{"client": h, "why": h}], "failed": [h],
               "aggregate_over": "whole_run", "window": None,
               "apart": {"why": h, "overlap_s": -1.0},
               "device_check": {"devices": [h], "why_not": h}}  # fmt: skip
    for client in (h, "all"):
        metrics = _metrics(1000.0)
        if client == "all":
            metrics["clients"] = summary
        store.add_result(run_id, _result(h, h, SHAPE, client=client, clients=1, metrics=metrics))
    store.add_result(run_id, _result(h, h, SHAPE, client=h, clients=1, status="failed",
                                     metrics=None, error=h, repetition=2))  # fmt: skip
    store.finish_run(run_id, status="partial", fio_version=h, warnings=_warnings(h))


@pytest.fixture(params=HOSTILE)
def hostile(request: pytest.FixtureRequest, isolated_db: Path) -> str:
    """A hostile string, and a database whose runs carry it in every field."""
    h: str = request.param
    with Store.open(isolated_db) as store:
        store_hostile_runs(store, h)
    return h


# -- the stored runs --------------------------------------------------------------------------


def test_list(cli: Cli, hostile: str) -> None:
    code, out, err = cli("list")
    assert_safe(code, out, err)
    assert shown(hostile, out)


@pytest.mark.parametrize("run_id", ["1", "3", "4", "5"])
def test_show(cli: Cli, hostile: str, run_id: str) -> None:
    code, out, err = cli("show", run_id)
    assert_safe(code, out, err)
    assert shown(hostile, out)
    code, raw, err = cli("show", run_id, "--raw")
    assert_safe(code, raw, err, evidence=True)
    assert raw.startswith(out), "the evidence comes after the same run"
    evidence = raw[len(out) :]
    assert f"fio stderr:\n{literal_lines(f'fio: {hostile}')}\nfio: second line\n" in evidence


def test_show_json_keeps_the_exact_data(cli: Cli, hostile: str) -> None:
    code, out, err = cli("show", "1", "--json")
    assert_safe(code, out, err)
    doc = json.loads(out)
    assert doc["label"] == doc["host"]["hostname"] == doc["results"][0]["workload"] == hostile


def test_compare(cli: Cli, hostile: str) -> None:
    code, out, err = cli("compare", "1", "2")
    assert_safe(code, out, err)
    assert shown(hostile, out)
    # By label: the latest run with it is not complete, which a note on stderr says.
    code, out, err = cli("compare", "1", "--label", hostile)
    assert_safe(code, out, err)
    assert f"note: the latest run labelled {hostile!r} is run 2" in err


def test_markdown_report(cli: Cli, hostile: str, tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    for runs in (["1", "2"], ["3", "4", "5"]):
        code, out, err = cli("report", *runs, "-o", str(path))
        assert_safe(code, out, err)
        text = path.read_text()
        assert raw_controls(text) == set()
        assert md_text(hostile) in text
        assert "<" not in text.replace("&lt;", "") and "](" not in text
        for table in re.findall(r"(?:^\|.*\|\n)+", text, flags=re.MULTILINE):
            widths = {len(re.split(r"(?<!\\)\|", line)) for line in table.splitlines()}
            assert len(widths) == 1, table


def test_html_report(cli: Cli, hostile: str, tmp_path: Path) -> None:
    """Autoescape handles <, > and &; every control or invisible character is shown as an
    escape too (an imported hostname's ESC made the page invalid HTML)."""
    path = tmp_path / "report.html"
    for runs in (["1", "2"], ["3", "4", "5"]):
        code, out, err = cli("report", *runs, "-o", str(path), "--format", "html")
        assert_safe(code, out, err)
        text = path.read_text()
        outside_scripts = re.sub(r"<script\b.*?</script>", "", text, flags=re.DOTALL)
        assert raw_controls(outside_scripts) == set()
        assert escape(literal_lines(hostile), quote=False) in outside_scripts


def test_csv_export(cli: Cli, hostile: str) -> None:
    code, out, err = cli("export", "1")
    assert_safe(code, out, err)
    assert len(out.splitlines()) == 1 + 2, "a header and a row per result: a row is a line"
    rows = read_csv(out)
    assert rows[0]["label"] == rows[0]["target"] == rows[-1]["error"] == literal(hostile)


def test_json_export_reads_back_as_the_same_data(cli: Cli, hostile: str, tmp_path: Path) -> None:
    code, out, err = cli("export", "1", "--format", "json")
    assert_safe(code, out, err)
    doc = json.loads(out)
    assert doc["label"] == doc["results"][0]["fio_argv"][1] == hostile
    # Its dates are not dates (the database is hostile too): an import refuses that, naming
    # the field, literally. With real dates it imports, and shows as literally there.
    path = tmp_path / "run1.json"
    path.write_text(out)
    other = str(tmp_path / "other.db")
    code, out, err = cli("--db", other, "import", str(path))
    assert code == 2 and f"{path}: started_at: " in err and "is not a date and time" in err
    assert_safe(0, out, err)
    doc["started_at"] = "2026-11-23T07:00:00.000Z"
    path.write_text(json.dumps(doc))
    code, out, err = cli("--db", other, "import", str(path))
    assert_safe(code, out, err)
    assert out.startswith("imported run 1 from ") and shown(hostile, out)
    code, out, err = cli("--db", other, "show", "1")
    assert_safe(code, out, err)
    assert shown(hostile, out)


def test_import_of_a_hostile_fio_output(cli: Cli, hostile: str, tmp_path: Path) -> None:
    data = json.loads((RECORDED / "libaio-randread-4k-qd8-jsonplus.json").read_text())
    data["fio version"] = hostile
    data["jobs"][0]["jobname"] = hostile
    path = tmp_path / f"{hostile.replace('/', '_')}.json"
    path.write_text(json.dumps(data))
    code, out, err = cli("import", str(path), "--label", hostile)
    assert_safe(code, out, err)
    assert shown(f"fio {hostile}", out) and shown(str(path), out)
    code, out, err = cli("list")
    assert_safe(code, out, err)
    code, out, err = cli("show", "latest")
    assert_safe(code, out, err)
    assert shown(f"fio {hostile}", out)


# -- commands that read the machine, the suite, the user's arguments --------------------------


@pytest.fixture
def hostile_dir(tmp_path: Path, hostile: str) -> Path:
    """A directory whose name is hostile ("[/]" makes two levels)."""
    path = tmp_path / f"d{hostile}"
    path.mkdir(parents=True)
    return path


def test_info(cli: Cli, hostile_dir: Path) -> None:
    code, out, err = cli("info", str(hostile_dir))
    assert_safe(code, out, err)
    assert shown(str(hostile_dir), out)


def test_doctor(cli: Cli, hostile: str, hostile_dir: Path) -> None:
    suite = hostile_dir / "suite.toml"
    suite.write_text(
        'name = "mine"\n'
        f"description = {json.dumps(hostile)}\n"
        "[[workload]]\n"
        'name = "rr"\nrw = "randread"\nbs = "4k"\niodepth = 1\nnumjobs = 1\n'
        'runtime = "1s"\nsize = "1M"\n'
    )
    code, out, err = cli("doctor", str(hostile_dir), "--suite", str(suite))
    assert_safe(code, out, err)
    assert shown(f"rr on {hostile_dir}", out)


def test_errors_quote_what_was_given(cli: Cli, hostile: str, hostile_dir: Path) -> None:
    code, out, err = cli("show", hostile)
    assert_safe(code, out, err, expected_code=2)
    assert err.startswith("iobench: error: ")
    missing = str(hostile_dir / "suite.toml")
    for command in ("run", "doctor"):
        code, out, err = cli(command, str(hostile_dir), "--suite", missing)
        assert_safe(code, out, err, expected_code=2)
        assert shown(missing, err, lines=True)
    bad = hostile_dir / "bad.toml"
    bad.write_text(f"name = {json.dumps(hostile)}\n")
    code, out, err = cli("doctor", "--suite", str(bad))
    assert_safe(code, out, err, expected_code=2)
    assert shown(str(bad), err, lines=True)
    not_fio = hostile_dir / "notes.json"
    not_fio.write_text(hostile)
    code, out, err = cli("import", str(not_fio))
    assert_safe(code, out, err, expected_code=2)
    assert shown(str(not_fio), err, lines=True)


def test_click_usage_errors_show_what_was_typed(cli: Cli, hostile: str) -> None:
    option = f"--x{hostile}".split("=")[0]  # click names an option up to its "="
    for args, said in (
        (["list", option], f"No such option {option!r}"),
        (["show", "1", hostile], f"Got unexpected extra argument ({hostile})"),
        (["list", "--limit", hostile], f"{hostile!r} is not a valid integer"),
        (["export", "1", "--format", hostile], f"{hostile!r} is not one of 'csv', 'json'"),
    ):
        code, out, err = cli(*args)
        assert_safe(code, out, err, expected_code=2)
        assert err.startswith(f"Usage: iobench {args[0]} ") and "\nError: " in err, err
        assert shown(said, err), err


# -- fio servers' replies ---------------------------------------------------------------------

FAKE_FIO = """\
import os, sys
if "--version" in sys.argv:
    print("fio-3.33")
    sys.exit(0)
h = os.environ["HOSTILE"]
if os.environ["GOOD_PORT"] in " ".join(sys.argv):
    print(f"hostname={h}, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33{h}, flags=1")
    print("iobench-probe: (groupid=0, jobs=1): err= 0")
    sys.exit(0)
print(f"fio: {h}")
sys.exit(1)
"""


@pytest.fixture
def listening() -> Iterator[list[int]]:
    """Two ports that accept connections (nothing answers)."""
    servers = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
    try:
        yield [int(s.getsockname()[1]) for s in servers]
    finally:
        for s in servers:
            s.close()


def test_clients_check(
    cli: Cli,
    hostile: str,
    listening: list[int],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    # fio's client runs confined, as nobody when root runs the tests (iobench.fio.confine):
    # the fake must be reachable and runnable by anyone, with the system's Python.
    bin_dir = Path(tempfile.mkdtemp(prefix="fake-fio-"))
    request.addfinalizer(lambda: shutil.rmtree(bin_dir))
    bin_dir.chmod(0o755)
    fio = bin_dir / "fio"
    fio.write_text(f"#!/usr/bin/python3\n{FAKE_FIO}")
    fio.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fio.parent}:/usr/bin:/bin")
    monkeypatch.setenv("HOSTILE", hostile)
    monkeypatch.setenv("GOOD_PORT", str(listening[0]))
    code, out, err = cli("clients", "check", ",".join(f"127.0.0.1:{p}" for p in listening))
    assert_safe(code, out, err, expected_code=1)
    # The server's name, as it said it (fio's output is read as bytes: a carriage return
    # stays one, shown escaped).
    said = hostile
    assert shown(said, out)
    # Why the other is unusable, with fio's last lines (ended by newlines) joined by "; ".
    lines = [line.strip() for line in f"fio: {said}".split("\n") if line.strip()]
    assert shown(f"fio said: {'; '.join(lines)}", out)
    # A client named with the string: refused as a name, or unreachable.
    code, out, err = cli("clients", "check", hostile)
    assert_safe(code, out, err, expected_code=code if code in (1, 2) else 2)


# -- the progress display ---------------------------------------------------------------------


def _steps(h: str) -> list[Step]:
    return [Step(i, h, f"{h}-{i}", 1.0, None) for i in range(2)]


def test_progress_lines(hostile: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Off a terminal: a line per finished step, the target, the names and fio's error in
    it as typed, on one line each."""
    display = ProgressDisplay(stderr_console())  # not a terminal: one line per step
    workload = Workload(hostile, "randread", 4096, 1, 1, runtime_s=1.0)
    steps = [*_steps(hostile), Step(2, hostile, hostile, 1.5, workload)]
    display.planned(steps)
    ends = [StepEnd("done"), StepEnd("done", notes=(hostile,)), StepEnd("failed", error=hostile)]
    for step, end in zip(steps, ends, strict=True):
        display.started(step)
        display.finished(step, end)
    display.close()
    out, err = capsys.readouterr()
    assert_safe(0, out, err)
    assert out == ""
    assert shown(f"[1/3] {hostile}-0 on {hostile}: written in 0s | 1/3 done", err)
    assert shown(f"[2/3] {hostile}-1 on {hostile}: written in 0s ! {hostile} | 2/3 done", err)
    assert shown(f"[3/3] {hostile} on {hostile}: failed: {hostile}", err)
    assert len(err.splitlines()) == 4  # the plan, then one line per step


def test_progress_on_a_terminal(hostile: str) -> None:
    console = LiteralConsole(file=io.StringIO(), force_terminal=True, width=200)
    display = ProgressDisplay(console)
    steps = _steps(hostile)
    display.planned(steps)
    display.started(steps[0])
    display._progress.refresh()  # type: ignore[union-attr]
    display.finished(steps[0], StepEnd("done"))
    display.close()
    text = console.file.getvalue()  # type: ignore[attr-defined]
    # rich's own colours and cursor movements are there; nothing of the data's is.
    assert "\x1b]" not in text and "\x07" not in text and "\x9b" not in text
    assert "\u202e" not in text and "\x7f" not in text and "\x1b[2J" not in text
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    assert shown(f"[1/2] {hostile}-0 on {hostile}: written in", plain)


# -- commands without stored data -------------------------------------------------------------


@pytest.mark.parametrize("command", ["suites", "specs"])
def test_package_data_prints_as_before(cli: Cli, command: str) -> None:
    code, out, err = cli(command)
    assert_safe(code, out, err)
    assert "\\x" not in out and "\\u" not in out, "nothing of ours looks odd"


# -- how a string is made literal -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "escaped"),
    [
        ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),
        ("\x9b2J", "\\x9b2J"),
        ("a\rb\nc\td\b\x7f", "a\\rb\\nc\\td\\x08\\x7f"),
        ("\u202eabc\u2066\u2069\u200b\u2028", "\\u202eabc\\u2066\\u2069\\u200b\\u2028"),
        ("\U000e0041", "\\U000e0041"),  # a tag character: invisible
        ("\udcff", "\\udcff"),  # an undecodable byte of a file name
        ("[/] 170 µs, 22.8 MiB/s, C:\\x", "[/] 170 µs, 22.8 MiB/s, C:\\x"),  # left as it is
    ],
)
def test_literal_escapes_what_a_terminal_would_act_on(value: str, escaped: str) -> None:
    assert literal(value) == escaped
    lines = f"{value}\n{value}"
    assert literal_lines(lines).split("\n") == [literal(part) for part in lines.split("\n")]


def test_markup_literal_is_shown_as_typed() -> None:
    console = LiteralConsole(file=io.StringIO(), width=200, color_system=None)
    data = "[link=https://e.x]y[/link] [/] \x1b[1m"
    console.print(f"[bold]x[/] {markup_literal(data)}")
    assert console.file.getvalue() == "x [link=https://e.x]y[/link] [/] \\x1b[1m\n"  # type: ignore[attr-defined]


@given(st.text())
def test_markup_literal_shows_any_text_as_it_is(value: str) -> None:
    got, want = _shown_by_markup(value)
    assert got == want


def _shown_by_markup(value: str) -> tuple[str, str]:
    """What a console prints of ``value`` put into markup beside tags, and what it should."""
    console = LiteralConsole(
        file=io.StringIO(), width=100_000, color_system=None, emoji=False, highlight=False
    )
    data = markup_literal(value)
    console.print(f"[bold]{data}[/]{data}[dim]x[/] {data}", soft_wrap=True)
    shown = literal(value)
    return console.file.getvalue(), f"{shown}{shown}x {shown}\n"  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", ["\\[", "\\\\[", "a\\[b", "\\[1]", "[\\[x]", "C:\\[dir]"])
def test_a_backslash_before_a_bracket_is_shown(value: str) -> None:
    """rich reads a backslash before any "[" as an escape (a user's "\\[" was printed "[")."""
    got, want = _shown_by_markup(value)
    assert got == want


def test_every_short_text_of_backslashes_and_brackets_is_shown_as_it_is() -> None:
    """All 9,330 texts of up to 5 of: a backslash, brackets, a letter, a slash, a space."""
    for n in range(1, 6):
        for chars in itertools.product("\\[]a/ ", repeat=n):
            got, want = _shown_by_markup("".join(chars))
            assert got == want, chars


def test_the_console_escapes_what_a_call_site_forgot() -> None:
    console = LiteralConsole(file=io.StringIO(), width=200, color_system=None)
    console.print("a\x1b]0;pwned\x1b\\b \x9b2J \u202ec\nd", markup=False)
    assert console.file.getvalue() == "a\\x1b]0;pwned\\x1b\\b \\x9b2J \\u202ec\nd\n"  # type: ignore[attr-defined]


@given(st.recursive(st.text(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)))
def test_json_literal_is_the_same_data(value: Any) -> None:
    text = json_literal(json.dumps(value, ensure_ascii=False, indent=2))
    assert raw_controls(text) == set()
    assert json.loads(text) == value
