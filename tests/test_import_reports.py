"""Several fio reports in one file: --status-interval snapshots of one run import as that
run (its last report), the outputs of several runs as a run each, and a file whose
reports cannot be told apart is refused (naming the line) with nothing stored.

Real outputs only: fio 3.33 runs recorded by scripts/record-fio-outputs, several runs'
outputs concatenated as `cat` does (tests/data/fio-outputs/recorded/SOURCES.md), and other
people's outputs. Variations are cut from them here (the normal text alone, the result
blocks alone as pasted into a ticket, the terse lines alone). No fio runs here.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.errors import UserError
from iobench.fio.parse import fio_reports
from iobench.fio.reports import Report, relation, split_runs
from iobench.importer import FileRun, interpret_fio_output, interpret_fio_runs
from iobench.records import ResultRecord
from iobench.store import Store
from test_import_text import normal_part

DATA = Path(__file__).parent / "data" / "fio-outputs"
RECORDED = DATA / "recorded"
EXTERNAL = DATA / "external"
_TERSE = re.compile(r"^[345];fio-|^;[^;]+;\d")


def json_reports(text: str) -> list[tuple[int, dict[str, Any]]]:
    """(line, object) of every report fio pretty-printed (its ``{`` alone on a line),
    decoded here with the standard library, independently of the importer."""
    found = []
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if line.rstrip("\n") == "{":
            obj, _ = json.JSONDecoder().raw_decode(text, offset)
            if "jobs" in obj or "client_stats" in obj:
                found.append((number, obj))
        offset += len(line)
    return found


def terse_part(path: Path) -> str:
    """The terse lines of a recorded file (and a client run's disk lines), alone."""
    return "".join(
        line for line in path.read_text().splitlines(keepends=True) if _TERSE.match(line)
    )


def pasted_results(text: str) -> str:
    """fio's normal output as results are pasted into a ticket: without the job header
    lines, the version line and 'Starting N process'."""
    return "".join(
        line
        for line in text.splitlines(keepends=True)
        if ": (g=" not in line and not line.startswith(("fio-", "Starting "))
    )


def runs(text: str, name: str = "x.out") -> list[FileRun]:
    return interpret_fio_runs(text, name)


def metrics(result: ResultRecord) -> dict[str, Any]:
    assert result.metrics is not None
    return result.metrics


def place(found: FileRun) -> str:
    (warning,) = [w for w in found.run.warnings if w["id"] == "one-of-several-runs"]
    return str(warning["message"])


# -- two runs of different jobs --------------------------------------------------------------


def test_two_json_runs_in_one_file_import_as_two_runs(cli: Cli, tmp_path: Path) -> None:
    path = RECORDED / "concat-two-jobs-json.json"
    reports = json_reports(path.read_text())
    assert [line for line, _ in reports] == [1, 293]
    code, out, err = cli("import", str(path))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"imported run {n} from {path.resolve()} (run {n} of 2 in the file, line {line}): "
        "1 result(s), fio 3.33"
        for n, line in ((1, 1), (2, 293))
    ]
    for run_id, (_, report) in enumerate(reports, start=1):
        code, out, err = cli("show", str(run_id), "--json")
        (result,) = json.loads(out)["results"]
        options = report["jobs"][0]["job options"]
        assert (result["params"]["rw"], result["params"]["bs"]) == (
            options["rw"],
            int(options["bs"].removesuffix("k")) * 1024,
        )
        assert result["read"]["total_ios"] == report["jobs"][0]["read"]["total_ios"]
    code, out, err = cli("--db", str(tmp_path / "other.db"), "import", str(path), "--json")
    assert code == 0, err
    assert [(r["source"], r["position"]) for r in json.loads(out)["runs"]] == [
        (str(path.resolve()), {"run": 1, "of": 2, "line": 1, "snapshots": []}),
        (str(path.resolve()), {"run": 2, "of": 2, "line": 293, "snapshots": []}),
    ]


def test_each_run_keeps_its_own_part_of_the_file() -> None:
    for name in ("concat-two-jobs-json.json", "concat-status-interval-then-other-run.out"):
        text = (RECORDED / name).read_text()
        found = runs(text, name)
        parts = [f.run.results[0].raw_output or "" for f in found]
        assert len(parts) == 2 and "".join(parts) == text
        assert all(part.count('"fio version"') >= 1 for part in parts)


def test_json_plus_and_terse_of_differently_named_jobs() -> None:
    path = RECORDED / "concat-two-jobs-jsonplus-terse.out"
    reports = json_reports(path.read_text())
    found = runs(path.read_text(), path.name)
    assert [(f.number, f.of, f.line) for f in found] == [(1, 2, 2), (2, 2, 639)]
    for f, (_, report) in zip(found, reports, strict=True):
        (result,) = f.run.results
        assert result.workload == report["jobs"][0]["jobname"]
        read = metrics(result)["read"]
        assert read["total_ios"] == report["jobs"][0]["read"]["total_ios"]
        assert read["clat_ns"]["bins"]  # json+: each run's histogram
    assert "other jobs (names or groups)" in place(found[1])
    # The terse lines alone: one line per run, other jobs, so two runs too.
    terse = runs(terse_part(path), "t.out")
    assert [(f.line, f.run.results[0].workload) for f in terse] == [
        (1, "randrw-4k"),
        (2, "randread-64k"),
    ]


def test_the_issues_example_two_pasted_text_results(cli: Cli, tmp_path: Path) -> None:
    """randrw 4k, then randread 64k, both jobs named 'test': the earlier was taken for a
    --status-interval snapshot of the later and dropped."""
    path = RECORDED / "concat-two-jobs-normal-terse.out"
    normal = normal_part(path)
    found = runs(normal)
    assert [f.line for f in found] == [6, 48]
    assert "the text shows another fio run starting before it" in place(found[1])
    assert [f.run.results[0].params["bs"] for f in found] == [4096, 65536]  # header lines
    # Pasted without their header and version lines: the pids tell the runs apart.
    pasted = runs(pasted_results(normal))
    assert len(pasted) == 2
    assert "the same jobs in other processes (pids)" in place(pasted[1])
    randrw, randread = (metrics(f.run.results[0]) for f in pasted)
    assert randrw["read"] and randrw["write"] and randread["read"] and not randread["write"]
    for ours, theirs in zip(pasted, found, strict=True):
        assert metrics(ours.run.results[0])["read"] == metrics(theirs.run.results[0])["read"]
    # Terse lines name neither a process nor a time: the same job name twice is refused.
    terse = tmp_path / "two.terse"
    terse.write_text(terse_part(path))
    code, out, err = cli("import", str(terse))
    assert (code, out) == (2, "")
    assert f"{terse}:2: a second fio report starts here, of the same jobs as the report at " in err
    assert "keep only its last report" in err and "Traceback" not in err
    assert cli("list", "--json")[1].count('"run_id"') == 0


def test_the_same_job_file_run_twice_is_two_runs() -> None:
    """Same jobs, same options, one after the other: each report comes from another fio
    process (its start time in JSON, its pid in text)."""
    path = RECORDED / "concat-same-job-twice.out"
    reports = json_reports(path.read_text())
    first, second = (r["jobs"][0]["job options"] for _, r in reports)
    assert first == second
    found = runs(path.read_text(), path.name)
    assert [f.line for f in found] == [line for line, _ in reports]
    assert re.search(r"another fio process wrote it, started 2\.\d s after", place(found[1]))
    for f, (_, report) in zip(found, reports, strict=True):
        assert (
            metrics(f.run.results[0])["read"]["total_ios"]
            == (report["jobs"][0]["read"]["total_ios"])
        )
    assert len(runs(normal_part(path))) == 2  # the second run's header lines
    assert "other processes (pids)" in place(runs(pasted_results(normal_part(path)))[1])
    with pytest.raises(UserError, match=r"^x\.out:2: a second fio report starts here"):
        runs(terse_part(path))


# -- snapshots of one run ------------------------------------------------------------------


def test_a_status_interval_run_then_another_run(cli: Cli) -> None:
    path = RECORDED / "concat-status-interval-then-other-run.out"
    reports = json_reports(path.read_text())
    assert [r["jobs"][0]["jobname"] for _, r in reports] == ["si"] * 4 + ["other"]
    found = runs(path.read_text(), path.name)
    assert [(f.line, f.snapshots) for f in found] == [(908, (5, 306, 607)), (1212, ())]
    final = reports[3][1]["jobs"][0]["read"]
    assert metrics(found[0].run.results[0])["read"]["total_ios"] == final["total_ios"]
    (note,) = [w for w in found[0].run.warnings if w["id"] == "snapshots-not-imported"]
    assert note["message"].startswith(
        "the file holds 3 earlier report(s) of this run, left out as --status-interval "
        "snapshots (line 5, 306 and 607): one fio process wrote them"
    )
    code, out, _ = cli("import", str(path))
    assert code == 0
    assert out.splitlines()[0].endswith(
        "(run 1 of 2 in the file, line 908; 3 earlier --status-interval snapshots of it "
        "left out): 1 result(s), fio 3.33"
    )
    text = runs(normal_part(path))
    assert [len(f.snapshots) for f in text] == [3, 0]
    assert [f.run.results[0].workload for f in text] == ["si", "other"]
    assert metrics(text[0].run.results[0])["read"]["total_ios"] == final["total_ios"]


def test_a_status_interval_file_alone_says_where_its_report_is(cli: Cli) -> None:
    path = RECORDED / "status-interval-jsonplus.json"
    code, out, _ = cli("import", str(path))
    assert code == 0
    assert out == (
        f"imported run 1 from {path.resolve()} (line 2001; 3 earlier --status-interval "
        "snapshots of it left out): 1 result(s), fio 3.33\n"
    )


def test_counters_that_go_down_at_the_end_of_ramp_time_are_still_one_run() -> None:
    """ramp_time=2 with --status-interval=1: fio resets its counters when the ramp ends, so
    a later report of the same run counts less; group 1 starts last (missing from the first
    normal reports; its terse lines hold '-nan%' until it starts)."""
    path = RECORDED / "status-interval-ramp-two-groups.out"
    reports = json_reports(path.read_text())
    ios = [r["jobs"][0]["read"]["io_bytes"] for _, r in reports]
    assert any(later < earlier for earlier, later in itertools.pairwise(ios))
    (found,) = runs(path.read_text(), path.name)
    assert found.snapshots == tuple(line for line, _ in reports[:-1])
    final = reports[-1][1]["jobs"]
    assert [r.workload for r in found.run.results] == ["ramped", "later"]  # clones merged
    assert metrics(found.run.results[1])["read"]["total_ios"] == final[2]["read"]["total_ios"]
    (text,) = runs(normal_part(path))
    assert len(text.snapshots) == len(reports) - 1
    assert [r.workload for r in text.run.results] == ["ramped", "later"]
    assert metrics(text.run.results[1])["read"]["total_ios"] == final[2]["read"]["total_ios"]
    assert "-nan%" in terse_part(path)
    with pytest.raises(UserError, match=r"^x\.out:4: a second fio report starts here"):
        runs(terse_part(path))


def test_a_report_repeated_is_one_run_and_different_reports_are_not() -> None:
    status = (RECORDED / "status-interval-jsonplus.json").read_text()
    other = (RECORDED / "libaio-randread-4k-qd8-jsonplus.json").read_text()
    assert len(runs(status + other)) == 2
    assert len(runs(other + status)) == 2
    (twice,) = runs(other + other)  # `cat a.json a.json`: the same report twice
    assert twice.snapshots == (1,)
    (note,) = [w for w in twice.run.warnings if w["id"] == "snapshots-not-imported"]
    assert "it is the same report again" in note["message"]
    terse = terse_part(RECORDED / "concat-two-jobs-normal-terse.out").splitlines()[0] + "\n"
    assert [f.snapshots for f in runs(terse + terse)] == [(1,)]
    floppy = EXTERNAL / "louwrentius__fio-plot__benchmark_data_FLOPPY_random_randread-1-1.json"
    old = EXTERNAL / "louwrentius__fio-plot__example_data01_randread-01.json"  # fio 2.18
    both = runs(old.read_text() + floppy.read_text())
    assert "another fio version (2.18-59-g618e then 3.1)" in place(both[1])


def test_many_snapshots_are_read_in_linear_time() -> None:
    """An hour of --status-interval=1 writes 3600 reports: each is compared with the one
    before it only, and the note names the first lines and the last."""
    report = (RECORDED / "seqread-1m-json.json").read_text()
    # Bounded in this process's CPU time: other tests' load does not stretch it.
    started = time.process_time()
    (found,) = runs(report * 3000)
    assert time.process_time() - started < 10
    lines = report.count("\n")
    assert found.snapshots == tuple(1 + i * lines for i in range(2999))
    (note,) = [w for w in found.run.warnings if w["id"] == "snapshots-not-imported"]
    assert f"(line 1, {1 + lines}, {1 + 2 * lines} ... {1 + 2998 * lines})" in note["message"]
    blocks = (RECORDED / "text-normal-only-seqwrite.out").read_text()
    blocks = blocks[blocks.index("seqwrite: (groupid") :]
    started = time.process_time()
    (found,) = runs(blocks * 3000)
    assert time.process_time() - started < 10 and len(found.snapshots) == 2999


@pytest.mark.parametrize(
    "name",
    [
        "GoogleCloudPlatform__PerfKitBenchmarker__tests_data_fio_fio-parser-sample-result.json",
        "distributed-system-analysis__pbench__agent_tool-scripts_postprocess_samples_fio-0_"
        "result_reference-result_fio-result.txt",
    ],
)
def test_old_fio_without_elapsed_cannot_tell_and_is_refused(name: str) -> None:
    """fio 2.1.4 (no timestamp) and 2.2.5 (no 'elapsed'): two reports of the same jobs
    may be one run's snapshots or two runs; the file is refused, naming the line. The
    second report here is the first with one count grown, as a later one would be."""
    text = (EXTERNAL / name).read_text().rstrip("\n") + "\n"
    later = re.sub(r'"io_bytes" : ([1-9])', r'"io_bytes" : 1\1', text, count=1)
    assert later != text
    second = text.count("\n") + 1
    with pytest.raises(UserError) as e:
        runs(text + later, "old.json")
    assert e.value.message.startswith(f"old.json:{second}: a second fio report starts here")
    assert "'elapsed'" in e.value.message
    assert e.value.hint is not None and "in a file of its own" in e.value.hint


def test_a_report_before_any_io_is_a_snapshot_of_the_next() -> None:
    """fio may print a --status-interval report while it lays out files, before it starts
    its clock: no IO yet, and another start time. A copy of a real snapshot with its
    counters zeroed stands for it here."""
    text = (RECORDED / "status-interval-jsonplus.json").read_text()
    first, second = fio_reports(text, "s.json")[:2]
    raw = copy.deepcopy(first.raw)
    for job in raw["jobs"]:
        job["elapsed"] = 0
        for d in ("read", "write", "trim"):
            job[d].update(io_bytes=0, total_ios=0, runtime=0, iops=0, bw=0, bw_bytes=0)
    (early,) = fio_reports(json.dumps(raw), "early.json")
    assert relation(early, second).kind == "same"
    assert "no IO yet" in relation(early, second).why
    assert relation(first, second).kind == "same"
    shifted = copy.deepcopy(second.raw)
    shifted["timestamp_ms"] += 60_000  # printed a minute later by a fio of the same age
    (later,) = fio_reports(json.dumps(shifted), "later.json")
    assert relation(second, later).kind == "other"


# -- client mode ----------------------------------------------------------------------------


def test_two_client_runs_import_as_two_runs_each_with_its_servers() -> None:
    path = RECORDED / "concat-client-runs.out"
    reports = json_reports(path.read_text())
    found = runs(path.read_text(), path.name)
    assert [f.line for f in found] == [line for line, _ in reports]
    assert "fio's client writes one report per run" in place(found[1])
    for f, (_, report) in zip(found, reports, strict=True):
        final: dict[str, int] = {}  # the last entry per server: --status-interval's final
        for entry in report["client_stats"]:
            if entry["jobname"] != "All clients":
                final[f"{entry['hostname']}:{entry['port']}"] = entry["read"]["total_ios"]
        got = {r.target: metrics(r)["read"]["total_ios"] for r in f.run.results}
        assert got == final and len(got) == 2
    # The normal text: a server's report repeated with its pids is its snapshot.
    text = runs(normal_part(path))
    assert [[r.target for r in f.run.results] for f in text] == [["client 1", "client 2"]] * 2
    for ours, theirs in zip(text, found, strict=True):
        assert sorted(metrics(r)["read"]["total_ios"] for r in ours.run.results) == sorted(
            metrics(r)["read"]["total_ios"] for r in theirs.run.results
        )


def test_client_terse_lines_with_snapshots_are_refused() -> None:
    """Terse lines of a client run name no server: a server's --status-interval report
    cannot be told from another server's. The 'All clients' line, which sums one report
    per server, shows that the lines hold more than that."""
    terse = terse_part(RECORDED / "concat-client-runs.out")
    with pytest.raises(UserError) as e:
        runs(terse, "c.out")
    assert e.value.message.startswith("c.out:1: the servers' terse lines of this client run")
    assert "'All clients' line (line 13)" in e.value.message
    second = terse[terse.index("3;fio-3.33;All clients") :].split("\n", 1)[1]
    (found,) = runs(second)
    assert len(found.run.results) == 2


# -- refusals store nothing -------------------------------------------------------------------


def test_a_cut_or_damaged_earlier_report_is_refused(tmp_path: Path) -> None:
    text = (RECORDED / "status-interval-jsonplus.json").read_text()
    lines = text.splitlines(keepends=True)
    with pytest.raises(UserError) as e:
        runs("".join(lines[:300]) + text, "cut.json")
    assert e.value.message.startswith("cut.json:1: a fio report here does not end")
    damaged = text.replace('"total_ios" : ', '"total_ios" : -', 1)
    with pytest.raises(UserError) as e:
        runs(damaged, "bad.json")
    assert e.value.message.startswith("bad.json:1: jobs[0] ('randread').read: 'total_ios'")


def test_a_refused_file_stores_nothing_and_neither_do_the_others(cli: Cli, tmp_path: Path) -> None:
    refused = tmp_path / "same-job-twice.terse"
    refused.write_text(terse_part(RECORDED / "concat-same-job-twice.out"))
    good = RECORDED / "concat-two-jobs-json.json"
    code, out, err = cli("import", str(good), str(refused))
    assert (code, out) == (2, "")
    assert err.startswith(f"iobench: error: {refused}:2: ")
    code, out, _ = cli("list", "--json")
    assert json.loads(out)["runs"] == []


def test_one_run_is_asked_for_and_the_file_holds_two() -> None:
    with pytest.raises(UserError, match=r"^two\.json:293: the file holds 2 fio runs"):
        interpret_fio_output((RECORDED / "concat-two-jobs-json.json").read_text(), "two.json")


def test_split_runs_keeps_file_order() -> None:
    text = (RECORDED / "concat-status-interval-then-other-run.out").read_text()
    reports: list[Report] = fio_reports(text, "s.out")
    found = split_runs(reports, "s.out")
    assert [len(r.snapshots) for r in found] == [3, 0]
    assert [r.first.line for r in found] == [5, 1212]


def test_store_holds_each_run_once(tmp_path: Path) -> None:
    from iobench.importer import import_files

    with Store.open(tmp_path / "db.sqlite") as store:
        ids = import_files(
            store, [str(RECORDED / "concat-client-runs.out")], label="two", argv=["iobench"]
        )
        stored = [store.get_run(i) for i in ids]
    assert len(ids) == 2 and {r.label for r in stored} == {"two"}
    assert all(r.status == "complete" for r in stored)
