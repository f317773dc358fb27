"""Several fio reports in one file that no process id or start time tells apart (issue 22,
point 8): pasted result blocks of two fio runs in containers, where every fio has the same
pids, and two runs of one job file started together (on two hosts, or two disks at once),
`cat`-ed into one file. The earlier report was taken for a --status-interval snapshot of the
later one and dropped; what fio only adds to within a run tells them apart. Real fio."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from iobench.importer import interpret_fio_runs
from test_import_reports import pasted_results, place

pytestmark = pytest.mark.fio

JOB = """\
[global]
filename={data}
size=8M
time_based=1
runtime=1
ioengine=psync
[test]
rw={rw}
bs={bs}
"""


def _job(tmp_path: Path, rw: str, bs: str) -> Path:
    job = tmp_path / f"{rw}-{bs}.fio"
    job.write_text(JOB.format(data=tmp_path / "data.bin", rw=rw, bs=bs))
    return job


def test_pasted_results_of_fio_in_containers_are_two_runs(real_fio: str, tmp_path: Path) -> None:
    """randrw 4k, then randread 64k, each run by fio in a PID namespace of its own (as in a
    container: the same pid in both reports), their result blocks pasted one after the other."""
    if os.geteuid() != 0:
        pytest.skip("needs root for a PID namespace")
    texts = []
    for rw, bs in (("randrw", "4k"), ("randread", "64k")):
        done = subprocess.run(
            ["unshare", "--fork", "--pid", "--mount-proc", real_fio, "--output-format=normal",
             str(_job(tmp_path, rw, bs))],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        texts.append(pasted_results(done.stdout))
    pids = [line.split("pid=")[1].split(":")[0] for t in texts for line in t.splitlines()
            if "pid=" in line]  # fmt: skip
    assert len(pids) == 2 and pids[0] == pids[1], "the same pid in both: what a container does"
    found = interpret_fio_runs("".join(texts), "pasted.txt")
    assert len(found) == 2
    (randrw,), (randread,) = (f.run.results for f in found)
    assert randrw.metrics and randrw.metrics["write"] and randread.metrics
    assert not randread.metrics["write"]
    assert "did write IO in the report before it and none in this one" in place(found[1])


def test_two_runs_of_one_job_file_started_together_are_two_runs(
    real_fio: str, tmp_path: Path
) -> None:
    """The same job file run twice at the same moment (its JSON reports' start times agree
    within fio's rounding), `cat`-ed in the order they ended: the later report holds fewer
    IOs in some latency bin (json+) than the earlier, which one run's never does."""
    job = _job(tmp_path, "randread", "4k")
    outputs = [tmp_path / f"{i}.json" for i in range(2)]
    procs = [
        subprocess.Popen(
            [real_fio, "--output-format=json+", f"--output={out}", str(job)],
            stdout=subprocess.DEVNULL,
        )
        for out in outputs
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    texts = sorted((o.read_text() for o in outputs), key=lambda t: json.loads(t)["timestamp_ms"])
    found = interpret_fio_runs("".join(texts), "cat.json")
    assert len(found) == 2
    assert "counted more read IO in the report before it" in place(found[1])
    ios = [f.run.results[0].metrics["read"]["total_ios"] for f in found]  # type: ignore[index]
    assert ios == [json.loads(t)["jobs"][0]["read"]["total_ios"] for t in texts]
