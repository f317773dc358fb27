"""`run -> suites export -> plain fio -> import -> compare`: one test, workload for
workload (issue 23, point 3).

A suite is run by iobench; the same suite, exported with the same overrides, is run by
plain fio in a directory of its own, once with JSON output and once with fio's normal
text output; both outputs are imported and compared with the run. Every workload must be
matched in all three, with no difference in parameters or durations: `compare --json`
lists no unmatched workload and no row with `differs`. Real fio, 1 s workloads on a
4 MiB file. A fio command line without a job file, and its output with and without the
command line above it, is compared with an iobench run of the same job.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.suites import fit_to_cpus, load_suite

SHORT = ("--runtime", "500ms", "--ramp", "0", "--size", "4M")

OWN_TOML = """\
name = "own"
description = "a suite of my own: a buffered psync mix, a split of block sizes, a ramp"
[defaults]
runtime = "1s"
size = "4M"
[[workload]]
name = "oltp-mix"
rw = "randrw"
rwmixread = 70
bs = "8k"
iodepth = 1
numjobs = 2
ioengine = "psync"
direct = false
[[workload]]
name = "split"
rw = "randwrite"
bs = "4k"
iodepth = 8
numjobs = 1
bssplit = "4k/50:64k/50"
ramp = "500ms"
[[workload]]
name = "capped"
rw = "read"
bs = "128k"
iodepth = 4
numjobs = 1
rate_iops = 200
"""

OWN_JOBFILE = """\
[global]
ioengine=libaio
direct=1
size=4m
runtime=1
time_based
group_reporting

[seq-read]
rw=read
bs=256k
iodepth=16

[rand-write]
stonewall
rw=randwrite
bs=4k
iodepth=4
numjobs=2
"""


def _compare(cli: Cli, *runs: str) -> dict[str, Any]:
    code, out, err = cli("compare", *runs, "--json")
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def _matched(doc: dict[str, Any], workloads: list[str], setups: int = 3) -> None:
    """Every workload matched in every setup, none left over, nothing said to differ."""
    assert doc["unmatched"] == [], doc["unmatched"]
    assert sorted({r["workload"] for r in doc["rows"]}) == sorted(workloads)  # a row per direction
    for row in doc["rows"]:
        assert len(row["cells"]) == setups, row["workload"]
        assert row["differs"] == [], (row["workload"], row["differs"])


def _plain_fio(fio: str, job: Path, work: Path) -> tuple[Path, Path]:
    """Plain fio on the exported file, in ``work``: its JSON output, then its normal one."""
    work.mkdir(exist_ok=True)
    outputs = (work / "result.json", work / "result.txt")
    for out, fmt in zip(outputs, ("json+", "normal"), strict=True):
        proc = subprocess.run(
            [fio, f"--output-format={fmt}", f"--output={out}", str(job)],
            cwd=work, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return outputs


def _loop(cli: Cli, fio: str, tmp_path: Path, suite: str, *extra: str) -> list[str]:
    """Run ``suite``, export it, run the export with plain fio, import both outputs:
    the ids of the run and of the two imports, and the suite's workloads."""
    target = tmp_path / "vol"
    target.mkdir()
    code, out, err = cli("run", str(target), "--suite", suite, *SHORT, *extra, "--json")
    assert code == 0, err
    run_id = str(json.loads(out)["run_id"])
    job = tmp_path / "exported.fio"
    code, _, err = cli("suites", "export", suite, *SHORT, *extra, "-o", str(job))
    assert code == 0, err
    as_json, as_text = _plain_fio(fio, job, tmp_path / "plain")
    code, out, err = cli("import", str(as_json), str(as_text), "--json")
    assert code == 0, err
    imported = [str(r["run_id"]) for r in json.loads(out)["runs"]]
    return [run_id, *imported]


@pytest.mark.parametrize("name", ["quick", "volume", "cloud-disk", "randwrite-4x32", "dd"])
def test_a_builtin_suite_run_exported_run_by_fio_and_imported_matches_workload_for_workload(
    cli: Cli, real_fio: str, tmp_path: Path, name: str
) -> None:
    """On this host `run` fits the suite to its CPUs; the export holds what `run` ran."""
    runs = _loop(cli, real_fio, tmp_path, name)
    suite = fit_to_cpus(load_suite(name), len(os.sched_getaffinity(0)))
    doc = _compare(cli, *runs)
    _matched(doc, [w.name for w in suite.workloads])
    code, out, _ = cli("show", runs[2])
    assert code == 0
    assert "a target fio's output does not name (imported)" in out
    assert "(unknown) (unknown)" not in out


def test_on_one_cpu_the_loop_matches_too_and_unfitted_is_another_workload(
    cli: Cli, real_fio: str, tmp_path: Path, one_cpu: int
) -> None:
    """Fitted to one CPU (4 x 32 runs as 1 x 128): the export holds that. Exported
    --unfitted, plain fio runs 4 x 32, and compare says that is what differs."""
    runs = _loop(cli, real_fio, tmp_path, "randwrite-4x32")
    _matched(_compare(cli, *runs), ["randwrite-4k-qd32x4"])
    job = tmp_path / "unfitted.fio"
    code, _, err = cli("suites", "export", "randwrite-4x32", *SHORT, "--unfitted", "-o", str(job))
    assert code == 0, err
    assert "numjobs=4\n" in job.read_text() and "iodepth=32\n" in job.read_text()
    as_json, _ = _plain_fio(real_fio, job, tmp_path / "unfitted")
    code, out, err = cli("import", str(as_json), "--json")
    assert code == 0, err
    doc = _compare(cli, runs[0], str(json.loads(out)["runs"][0]["run_id"]))
    (left, _) = doc["unmatched"]
    assert "iodepth 128 vs 32, numjobs 1 vs 4" in left["reason"]


@pytest.mark.parametrize("kind", ["toml", "jobfile"])
def test_a_suite_file_of_my_own_run_exported_run_by_fio_and_imported_matches(
    cli: Cli, real_fio: str, tmp_path: Path, kind: str
) -> None:
    """A TOML suite (a buffered psync mix, bssplit, a ramp of its own, a rate cap) and a
    fio job file (its [global] options, a stonewall, numjobs 2): run as written."""
    path = tmp_path / ("own.toml" if kind == "toml" else "own.fio")
    path.write_text(OWN_TOML if kind == "toml" else OWN_JOBFILE)
    target = tmp_path / "vol"
    target.mkdir()
    code, out, err = cli("run", str(target), "--suite", str(path), "--json")
    assert code == 0, err
    run_id = str(json.loads(out)["run_id"])
    job = tmp_path / "exported.fio"
    assert cli("suites", "export", str(path), "-o", str(job))[0] == 0
    as_json, as_text = _plain_fio(real_fio, job, tmp_path / "plain")
    code, out, err = cli("import", str(as_json), str(as_text), "--json")
    assert code == 0, err
    imported = [str(r["run_id"]) for r in json.loads(out)["runs"]]
    _matched(_compare(cli, run_id, *imported), [w.name for w in load_suite(str(path)).workloads])


COMMAND = (
    "--name=cl", "--filename=data.bin", "--size=4M", "--rw=randrw", "--rwmixread=60",
    "--bs=16k", "--ioengine=libaio", "--iodepth=4", "--direct=1", "--runtime=1",
    "--time_based",
)  # fmt: skip
SAME_JOB = """\
[cl]
rw=randrw
rwmixread=60
bs=16k
ioengine=libaio
iodepth=4
direct=1
size=4M
runtime=1
time_based
"""


def test_a_fio_command_line_without_a_job_file_imported_matches_a_run_of_the_same_job(
    cli: Cli, real_fio: str, tmp_path: Path
) -> None:
    """numjobs is not on the command line: fio's default, 1, as the run's. The JSON output,
    and the normal output pasted under its command line (a prompt, a code fence and a
    blank line between), match the run; the normal output alone states no direct, so
    that is the one difference compare names."""
    target = tmp_path / "vol"
    target.mkdir()
    suite = tmp_path / "cl.fio"
    suite.write_text(SAME_JOB)
    code, out, err = cli("run", str(target), "--suite", str(suite), "--json")
    assert code == 0, err
    run_id = str(json.loads(out)["run_id"])
    work = tmp_path / "plain"
    work.mkdir()
    texts = {}
    for fmt in ("json", "normal"):
        proc = subprocess.run(
            [real_fio, f"--output-format={fmt}", *COMMAND], cwd=work, capture_output=True,
            text=True, timeout=120, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        texts[fmt] = proc.stdout
    typed = "fio " + shlex.join(COMMAND)
    files = {
        "cl.json": texts["json"],
        "pasted.md": f"```\n$ {typed}\n```\n\n```\n{texts['normal']}```\n",
        "alone.txt": texts["normal"],
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, out, err = cli("import", *(str(tmp_path / n) for n in files), "--json")
    assert code == 0, err
    json_run, pasted, alone = (str(r["run_id"]) for r in json.loads(out)["runs"])
    _matched(_compare(cli, run_id, json_run, pasted), ["cl"])
    code, out, _ = cli("show", json_run, "--json")
    assert json.loads(out)["results"][0]["params"]["numjobs"] == 1
    doc = _compare(cli, run_id, alone)
    assert [u["workload"] for u in doc["unmatched"]] == ["cl", "cl"]
    assert "direct yes vs unset" in doc["unmatched"][0]["reason"]


def test_an_export_edited_after_the_fact_is_read_by_what_fio_printed(
    cli: Cli, real_fio: str, tmp_path: Path
) -> None:
    """Someone changes iodepth in the exported file and not its description: fio's header
    line then contradicts the description, which is not used; the parameters are what
    fio printed (iodepth 16), and direct, which fio's text does not print, is null."""
    job = tmp_path / "edited.fio"
    code, _, err = cli("suites", "export", "randwrite-4x32", *SHORT, "-o", str(job))
    assert code == 0, err
    text = job.read_text()
    section = text.split("\n[randwrite-4k-qd32x4]\n")[1]
    depth = next(x for x in section.splitlines() if x.startswith("iodepth="))
    assert f"description=iobench workload: rw=randwrite bs=4096 {depth} " in section
    job.write_text(text.replace(f"\n{depth}\n", "\niodepth=16\n"))
    _, as_text = _plain_fio(real_fio, job, tmp_path / "plain")
    code, out, err = cli("import", str(as_text), "--json")
    assert code == 0, err
    code, out, err = cli("show", str(json.loads(out)["runs"][0]["run_id"]), "--json")
    doc = json.loads(out)
    (result,) = doc["results"]
    assert (result["params"]["iodepth"], result["params"]["direct"]) == (16, None)
    (note,) = [w for w in doc["warnings"] if w["id"] == "text-parameters"]
    assert "fio's job header line" in note["message"] and "description" not in note["message"]
