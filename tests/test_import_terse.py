"""iobench import of fio's terse output (versions 3-5), end to end through the importer.

The parser itself is tested figure by figure in tests/test_terse.py; here the terse lines
of real fio 3.33 runs (recorded with --output-format=normal,terse,json+, cut out) and of
another project's fio 2.1.2 run are imported as runs, with the parameters read from the
job file or fio command line the text shows, and compared with the JSON of the same run.
No fio runs here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.errors import ExitCode, UserError
from iobench.importer import import_files, interpret_fio_output
from iobench.jsontext import scan_objects
from iobench.records import ImportedRun, ResultRecord
from iobench.store import Store

DATA = Path(__file__).parent / "data" / "fio-outputs"
RECORDED = DATA / "recorded"
EXTERNAL = DATA / "external"
ARGV = ["iobench", "import"]
VERSIONED = [
    ("text-libaio-randread-qd8", 3),
    ("text-psync-randrw-fsync-lat", 4),
    ("text-numjobs2-two-groups", 5),
]


def terse_lines(name: str) -> list[str]:
    return [
        line
        for line in (RECORDED / f"{name}.out").read_text().splitlines()
        if line[:1] in "345" and line[1:6] == ";fio-"
    ]


def recorded_json(name: str) -> dict[str, Any]:
    text = (RECORDED / f"{name}.out").read_text()
    (obj,) = [o for _, _, o in scan_objects(text) if "jobs" in o]
    return obj


def meta(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((RECORDED / f"{name}.meta.json").read_text())
    return loaded


def pasted(name: str) -> str:
    """The terse lines as a user pastes them into a ticket: the job file shown with cat,
    then the command and fio's terse output."""
    (job,) = meta(name)["job_files"].values()
    return (
        f"$ cat job.fio\n{job}$ fio --output-format=terse job.fio\n"
        + "\n".join(terse_lines(name))
        + "\n"
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "results.db") as s:
        yield s


def metrics_of(result: ResultRecord) -> dict[str, Any]:
    assert result.metrics is not None
    return result.metrics


def warning(run: ImportedRun, wid: str) -> dict[str, Any]:
    (found,) = [w for w in run.warnings if w["id"] == wid]
    return found


@pytest.mark.parametrize(("name", "version"), VERSIONED)
def test_terse_lines_import_as_the_json_of_the_same_run(name: str, version: int) -> None:
    lines = terse_lines(name)
    assert lines and all(line.startswith(f"{version};fio-3.33;") for line in lines)
    run = interpret_fio_output(pasted(name), f"{name}.txt")
    raw = recorded_json(name)["jobs"]
    assert run.fio_version == "3.33" and run.status == "complete"
    # numjobs=2 without group_reporting: the two clones are merged as the JSON's are.
    by_name: dict[str, list[dict[str, Any]]] = {}
    for job in raw:
        by_name.setdefault(job["jobname"], []).append(job)
    assert [r.workload for r in run.results] == list(by_name)
    for result in run.results:
        jobs = by_name[result.workload]
        for d in ("read", "write"):
            want = sum(j[d]["iops"] for j in jobs)
            got = (metrics_of(result).get(d) or {}).get("iops") or 0.0
            assert abs(got - want) <= len(jobs), (result.workload, d, got, want)
        options = recorded_json(name)["global options"] | jobs[0]["job options"]
        assert result.params["rw"] == options["rw"]
        assert result.params["bs"] == int(options.get("bs", "4k").removesuffix("k")) * 1024
    assert "the job file shown with it" in warning(run, "text-parameters")["message"]
    assert "fio's terse output" in warning(run, "text-precision")["message"]


def test_terse_lines_alone_import_and_say_their_parameters_are_unknown() -> None:
    name = "terse-only-v3-randwrite"
    text = (RECORDED / f"{name}.out").read_text()
    run = interpret_fio_output(text, f"{name}.out")
    (result,) = run.results
    assert result.workload == "rw" and metrics_of(result)["write"]["iops"] > 0
    assert result.params.get("rw") is None, "a terse line says nothing of rw"
    assert "nowhere: a terse line holds no options" in warning(run, "text-parameters")["message"]


def test_a_fio_command_line_gives_terse_jobs_their_parameters() -> None:
    line = terse_lines("text-libaio-randread-qd8")[0]
    text = (
        "[root@h ~]# fio --minimal --name=randread --rw=randread --bs=4k --iodepth=8 "
        f"--ioengine=libaio --direct=1 --size=8M\n{line}\n"
    )
    (result,) = interpret_fio_output(text, "ticket.txt").results
    assert (result.params["rw"], result.params["bs"], result.params["iodepth"]) == (
        "randread",
        4096,
        8,
    )


def test_another_projects_fio_2_terse_output_imports(store: Store) -> None:
    path = EXTERNAL / "jtulak__fio-parser__fio-test.out"
    (run_id,) = import_files(store, [str(path)], label=None, argv=ARGV)
    run = store.get_run(run_id)
    assert run.fio_version == "2.1.2"
    first = run.results[0]
    assert first.workload == "test-multi-file-io-4"
    assert metrics_of(first)["read"]["iops"] == 651  # the line's read IOPS field


def test_a_broken_terse_line_is_refused_naming_file_and_line(tmp_path: Path, cli: Cli) -> None:
    line = terse_lines("text-libaio-randread-qd8")[0]
    path = tmp_path / "cut.txt"
    path.write_text("some prompt\n" + line[: len(line) // 2] + "\n")
    with pytest.raises(UserError) as e:
        interpret_fio_output(path.read_text(), str(path))
    assert e.value.exit_code == ExitCode.BAD_INPUT
    assert e.value.message.startswith(f"{path}:2: ")
    db = tmp_path / "runs.db"
    code, out, err = cli("--db", str(db), "import", str(path))
    assert code == ExitCode.BAD_INPUT and out == "" and "Traceback" not in err
    assert f"{path}:2: " in err


def test_json_with_only_a_mixed_direction_is_refused_not_imported_empty(tmp_path: Path) -> None:
    """unified_rw_reporting=mixed: fio's JSON has one 'mixed' direction. It was imported as
    a result with no IO and a misleading 'no-io' warning; the terse line was refused."""
    text = (RECORDED / "terse-v4-mixed.out").read_text()
    ((start, end, report),) = [o for o in scan_objects(text) if "jobs" in o[2]]
    assert "mixed" in report["jobs"][0] and "read" not in report["jobs"][0]
    for part in (text[start:end], "\n".join(terse_lines("terse-v4-mixed"))):
        with pytest.raises(UserError) as e:
            interpret_fio_output(part, str(tmp_path / "mixed.out"))
        assert "mixed" in e.value.message and e.value.exit_code == ExitCode.BAD_INPUT


def test_a_description_that_is_a_number_is_kept_as_the_description() -> None:
    """fio --description=2024 ends the terse line with the field 2024; one trailing field
    is the description even when it reads as a number, two are not what fio writes."""
    line = terse_lines("terse-only-v3-randwrite")[0]
    run = interpret_fio_output(line + ";2024\n", "desc.txt")
    assert (run.suite_def.workloads or [{}])[0]["description"] == "2024"
    with pytest.raises(UserError) as e:  # two numbers are not continue_on_error's counts
        interpret_fio_output(line + ";2024;7.5\n", "desc.txt")
    assert "desc.txt:1: " in e.value.message
