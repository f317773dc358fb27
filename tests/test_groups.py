"""Workloads of several jobs that fio runs together (issue 24, point 1): read from TOML
``[[workload.job]]`` tables and from fio job files as fio starts their jobs, written back as
sections fio starts together, stored, shown, exported and imported with each part's figures
and the group's. No fio here (test_groups_fio.py runs them)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.analysis.compare import compare
from iobench.analysis.coverage import unwritten_reads
from iobench.analysis.histogram import percentiles_from_bins
from iobench.engine.parts import group_metrics, group_result, part_entries
from iobench.errors import SuiteError
from iobench.fio.jobfile import build_jobfile, plain_job
from iobench.model import DirectionResult, JobResult, LatencyStats, Workload, group
from iobench.records import PartResult, ResultRecord, RunRecord, SuiteDefinition, TargetRecord
from iobench.suites import apply_overrides, fit_to_cpus, load_suite
from iobench.suites.loader import parse_job_file, parse_suite
from iobench.suites.pin import Pinning, check_jobs, placed
from iobench.suites.suitefile import Export, suite_jobfile
from iobench.targets import Reach

GROUP_TOML = """\
name = "together"
description = "a reader and a writer at once"
[defaults]
runtime = "2s"
size = "8M"

[[workload]]
name = "alone"
rw = "randread"
bs = "4k"
iodepth = 1
numjobs = 1

[[workload]]
name = "mixed"
ramp = "1s"

[[workload.job]]
name = "reader"
rw = "randread"
bs = "4k"
iodepth = 4
numjobs = 1

[[workload.job]]
name = "writer"
rw = "write"
bs = "64k"
iodepth = 2
numjobs = 2
size = "4M"
"""


def toml(text: str = GROUP_TOML, name: str = "g.toml") -> Any:
    return parse_suite(text, name, name)


def job_file(text: str, name: str = "job.fio") -> Any:
    return parse_job_file(text, name, name)


def refused(load: Any, text: str) -> list[tuple[int | None, str]]:
    with pytest.raises(SuiteError) as info:
        load(text)
    return [(p.line, p.message) for p in info.value.problems]


def shape(w: Workload) -> list[tuple[str, str, int, int, int]]:
    return [(p.name, p.rw, p.bs, p.iodepth, p.numjobs) for p in w.parts]


# --- TOML ------------------------------------------------------------------------------------


def test_a_toml_workload_of_jobs_is_a_group_each_part_with_what_it_inherits() -> None:
    alone, mixed = toml().workloads
    assert not alone.parts and alone.jobs == (alone,)
    assert shape(mixed) == [("reader", "randread", 4096, 4, 1), ("writer", "write", 65536, 2, 2)]
    reader, writer = mixed.parts
    # [defaults] and the workload's own keys beneath each job's own
    assert (reader.runtime_s, reader.ramp_s, reader.size) == (2.0, 1.0, 8 << 20)
    assert (writer.runtime_s, writer.ramp_s, writer.size) == (2.0, 1.0, 4 << 20)
    # what reads a workload whole: the parts summed up
    assert (mixed.rw, mixed.numjobs, mixed.size, mixed.writes) == (
        "randread+write",
        3,
        8 << 20,
        True,
    )
    assert mixed.params["parts"][1] == dict(writer.params, name="writer")
    assert "rw" not in mixed.params and mixed.params["runtime_s"] == 2.0


def test_one_job_table_is_a_workload_of_its_own() -> None:
    text = GROUP_TOML.split('[[workload.job]]\nname = "writer"')[0]
    (_, mixed) = toml(text).workloads
    assert not mixed.parts and (mixed.name, mixed.rw, mixed.iodepth) == ("mixed", "randread", 4)


@pytest.mark.parametrize(
    ("change", "line", "message"),
    [
        (('rw = "write"', 'rw = "wrte"'), 27, 'workload "mixed", job "writer": rw must be one of'),
        (
            ("numjobs = 2", 'numjobs = 2\nexec_prerun = "rm -rf /"'),
            31,
            'workload "mixed", job "writer": exec_prerun is refused (runs programs): it runs a '
            "shell command before the job",
        ),
        (
            ('name = "writer"', 'name = "reader"'),
            26,
            'workload "mixed", job "reader": the name is already used by the job at line 19; '
            "names must be unique within its workload",
        ),
        (('name = "writer"\n', ""), 25, 'workload "mixed", job #2: missing name'),
        (("iodepth = 2", 'iodepth = 2\nramp = "x"'), 30, 'job "writer": ramp must be'),
        (
            ("numjobs = 2", "numjobs = 256"),
            14,
            'workload "mixed": its 2 jobs run 257 fio jobs at once (numjobs added up); at most 256',
        ),
    ],
)
def test_a_part_is_checked_as_a_workload_is_and_named_with_its_line(
    change: tuple[str, str], line: int, message: str
) -> None:
    old, new = change
    text = (
        GROUP_TOML.replace(old, new)
        if old != 'name = "writer"\n'
        else GROUP_TOML.replace('name = "writer"\n', "", 1)
    )
    problems = refused(toml, text)
    assert any(at == line and message in said for at, said in problems), problems


def test_job_must_be_tables() -> None:
    problems = refused(toml, 'name = "x"\n[[workload]]\nname = "w"\njob = 3\n')
    assert problems == [
        (4, 'workload "w": job must be a list of tables: start each job of the workload with '
            "[[workload.job]] (double brackets)")
    ]  # fmt: skip


def test_overrides_reach_every_part() -> None:
    suite = apply_overrides(toml(), runtime_s=5, size=1 << 20, ramp_s=0)
    mixed = suite.workloads[1]
    assert {(p.runtime_s, p.ramp_s, p.size) for p in mixed.parts} == {(5.0, 0.0, 1 << 20)}
    assert (mixed.runtime_s, mixed.size) == (5.0, 1 << 20)


# --- fio job files: the jobs fio starts together ------------------------------------------


def starts(text: str) -> list[list[str]]:
    """The workloads of a job file, each as the names of the jobs in it."""
    return [[p.name for p in w.jobs] for w in job_file(text).workloads]


JOBS = "[global]\nrw=read\nsize=1m\nruntime=1\n"


@pytest.mark.parametrize(
    ("body", "runs"),
    [
        # no stonewall: all at once
        ("[a]\n[b]\n[c]\n", [["a", "b", "c"]]),
        # stonewall waits for every job before it
        ("[a]\n[b]\n[c]\nstonewall\n[d]\n", [["a", "b"], ["c", "d"]]),
        # wait_for_previous is stonewall
        ("[a]\n[b]\nwait_for_previous\n", [["a"], ["b"]]),
        # new_group starts a reporting group, not a wait: still together
        ("[a]\n[b]\nnew_group\n", [["a", "b"]]),
        # wait_for: passed over until its job has ended; the jobs after it start at once
        (
            "[a]\n[b]\n[c]\nwait_for=a\n[d]\n[e]\nstonewall\n[f]\nnew_group\n[g]\nwait_for=f\n",
            [["a", "b", "d"], ["c"], ["e", "f"], ["g"]],
        ),
        # a chain of waits, one after another
        ("[a]\n[b]\nwait_for=a\n[c]\nwait_for=b\n", [["a"], ["b"], ["c"]]),
        # waiting for a job of an earlier round: starts at once
        ("[a]\n[b]\nstonewall\n[c]\nwait_for=a\n", [["a"], ["b", "c"]]),
    ],
)
def test_jobs_are_grouped_as_fio_starts_them(body: str, runs: list[list[str]]) -> None:
    """The rounds in which fio 3.33 starts them (test_groups_fio checks each against fio)."""
    assert starts(JOBS + body) == runs


def test_a_group_from_a_job_file_is_named_after_its_first_section_and_keeps_each_jobs_options() -> (
    None
):
    suite = job_file(
        "[global]\nioengine=libaio\ndirect=1\nsize=8m\nruntime=2\n"
        "[reader]\nrw=randread\nbs=4k\niodepth=8\n"
        "[global]\nbs=64k\n"  # a [global] between them: only for the jobs after it
        "[writer]\nrw=write\nrate_iops=100\n"
    )
    (w,) = suite.workloads
    assert w.name == "reader"
    assert shape(w) == [("reader", "randread", 4096, 8, 1), ("writer", "write", 65536, 1, 1)]
    assert dict(w.parts[1].options) == {"rate_iops": "100", "time_based": "0"}


def test_a_job_file_group_is_refused_only_for_what_a_job_is_refused_for() -> None:
    problems = refused(job_file, "[a]\nrw=read\n[b]\nrw=write\nexec_prerun=id\n[c]\nwait_for=zz\n")
    assert problems == [
        (5, "[b]: exec_prerun is refused (runs programs): it runs a shell command before the job"),
        (7, '[c]: wait_for="zz" names no job before it; fio waits only for a job defined '
            "earlier in the file"),
    ]  # fmt: skip


def test_a_group_of_hundreds_of_jobs_is_refused_for_its_processes() -> None:
    problems = refused(job_file, "".join(f"[j{i}]\nrw=read\n" for i in range(300)))
    assert problems == [
        (1, "[j0]: its 300 jobs run 300 fio jobs at once (numjobs added up); at most 256: each "
            "job is a process, more would exhaust the host")
    ]  # fmt: skip


# --- what reads a workload whole ------------------------------------------------------------


def test_fitting_a_builtin_group_shares_the_cpus_among_its_parts() -> None:
    suite = dataclasses.replace(toml(), source="builtin")
    fitted = fit_to_cpus(suite, 2)
    mixed = fitted.workloads[1]
    # 3 jobs on 2 CPUs: each of the 2 parts at most 1 job, the IOs in flight kept
    assert [(p.numjobs, p.iodepth) for p in mixed.parts] == [(1, 4), (1, 4)]
    assert [f.workload for f in fitted.fitted] == ["mixed/writer"]


def test_pinning_gives_each_part_its_own_cpus() -> None:
    pin = Pinning("/dev/x", ("x",), 4, (1, 2, 3, 0), "0-3")
    mixed = placed(toml().workloads[1], pin)
    assert [dict(p.options)["cpus_allowed"] for p in mixed.parts] == ["1", "2-3"]
    with pytest.raises(Exception, match="mixed runs 3 jobs"):
        check_jobs(toml(), dataclasses.replace(pin, cpus=(1, 2)))


def test_a_reader_together_with_the_writer_reads_what_was_not_written_yet() -> None:
    (w,) = job_file("[r]\nrw=randread\nsize=1m\n[w]\nrw=write\nsize=1m\n").workloads
    (found,) = unwritten_reads([w], 1 << 20, written=False)
    assert found.workload == "r" and "before any write" in found.why
    assert "r/r reads while the others of r write" in found.why


# --- the job file iobench runs ----------------------------------------------------------------


def sections(text: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("["):
            out.append((line.strip("[]"), []))
        elif out and line and line[0] not in ";#":
            out[-1][1].append(line)
    return out


def test_a_group_runs_as_sections_fio_starts_together_each_reported_apart() -> None:
    mixed = toml().workloads[1]
    text = build_jobfile(mixed, Reach.file("/data/f"), 6 << 20)
    (glob, g), (r, reader), (w, writer) = sections(text)
    assert (glob, r, w) == ("global", "reader", "writer")
    assert "group_reporting=1" in g and not any(o.startswith("size=") for o in g)
    assert "stonewall" not in text
    assert reader[0] == writer[0] == "new_group"
    assert "size=6291456" in reader and "size=4194304" in writer  # each within the area
    assert {"rw=write", "bs=65536", "iodepth=2", "numjobs=2", "ramp_time=1s"} <= set(writer)
    plain = plain_job(mixed, Reach.file("/data/f"), 6 << 20, section="mixed", title="t")
    assert [s for s, _ in sections(plain)] == ["mixed", "writer"]
    assert sections(plain)[0][1][-1] == "stonewall" and sections(plain)[1][1][-1] == "new_group"
    assert sections(plain)[0][1][0] == "name=reader"


def test_suites_export_writes_a_group_as_concurrent_sections_that_read_back_the_same(
    tmp_path: Path,
) -> None:
    suite = toml()
    text = suite_jobfile(Export(suite, None, None, False, (), None, "now", None))
    names = [s for s, _ in sections(text)]
    assert names == ["global", "iobench:layout", "alone", "mixed", "writer"]
    body = dict(sections(text))
    assert "name=reader" in body["mixed"] and body["mixed"][-1] == "stonewall"
    assert body["writer"][-1] == "new_group" and "stonewall" not in body["writer"]
    assert "its steps, one after another (stonewall): iobench:layout, alone, mixed with writer" in (
        " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))
    )
    path = tmp_path / "back.fio"
    path.write_text(text)
    assert load_suite(str(path)).workloads == suite.workloads
    # and the export of the read-back suite is the same file
    again = suite_jobfile(Export(load_suite(str(path)), None, None, False, (), None, "now", None))
    assert sections(again)[1:] == sections(text)[1:]


# --- a group's figures ------------------------------------------------------------------------


def latency(bins: dict[int, int]) -> LatencyStats:
    n = sum(bins.values())
    mean = sum(k * v for k, v in bins.items()) / n
    return LatencyStats(n, min(bins), max(bins), mean, 1.0, (), bins)


def direction(ios: int, bs: int, runtime_ms: int, bins: dict[int, int]) -> DirectionResult:
    lat = latency(bins)
    return DirectionResult(
        io_bytes=ios * bs, bw_bytes=1000 * ios * bs / runtime_ms, iops=1000 * ios / runtime_ms,
        total_ios=ios, runtime_ms=runtime_ms, clat=lat, lat=lat, completions=lat.n,
    )  # fmt: skip


def entry(name: str, group_id: int, read: DirectionResult | None, write: DirectionResult | None
          ) -> JobResult:  # fmt: skip
    return JobResult(name, group_id, 0, read, write, None, 10.0, 20.0, 2000)


def test_the_group_sums_ios_over_the_longest_runtime_and_merges_the_histograms() -> None:
    mixed = toml().workloads[1]
    reads = direction(4000, 4096, 2000, {100_000: 3000, 200_000: 1000})
    writes = direction(500, 65536, 1990, {1_000_000: 499, 5_000_000: 1})
    more_reads = direction(0, 4096, 0, {}) if False else None
    jobs = [entry("reader", 0, reads, more_reads), entry("writer", 1, None, writes)]
    assert part_entries(jobs, mixed) == jobs
    assert part_entries(jobs[:1], mixed) is None
    assert part_entries([entry("writer", 0, reads, None), jobs[1]], mixed) is None
    metrics, parts, samples = group_result(jobs, mixed, None)
    assert [p.name for p in parts] == ["reader", "writer"] and samples is None
    reader, writer = (p.metrics or {} for p in parts)
    assert reader["read"]["iops"] == pytest.approx(2000.0)
    assert writer["write"]["iops"] == pytest.approx(1000 * 500 / 1990)
    assert "disk_util" not in reader and "disk_util" in metrics
    # one part per direction here: the group's direction is that part's
    assert metrics["read"]["iops"] == pytest.approx(2000.0)
    assert metrics["write"]["lat_ns"]["p99"] == writer["write"]["lat_ns"]["p99"]
    # two parts in one direction: IOs summed over the longest runtime, bins summed
    both = [entry("reader", 0, reads, None), entry("writer", 1, direction(
        1000, 4096, 2500, {300_000: 1000}), None)]  # fmt: skip
    two = group(
        mixed.name, [mixed.parts[0], dataclasses.replace(mixed.parts[1], rw="read", bs=4096)]
    )
    metrics, parts, _ = group_result(both, two, None)
    read = metrics["read"]
    assert read["io_bytes"] == 5000 * 4096 and read["runtime_ms"] == 2500
    assert read["iops"] == pytest.approx(1000 * 5000 / 2500)
    assert read["ios_completed"] == 5000 and read["ios_completed_from"] == "io_bytes/bs"
    assert read["lat_ns"]["n"] == 5000 and read["lat_ns"]["bins"] == {
        "100000": 3000, "200000": 1000, "300000": 1000}  # fmt: skip
    merged = {100_000: 3000, 200_000: 1000, 300_000: 1000}
    assert [read["lat_ns"]["p50"], read["lat_ns"]["p90"]] == [
        round(v) for _, v in percentiles_from_bins(merged, [50.0, 90.0])
    ]
    # the clients' aggregate of such groups: their rates summed
    summed = group_metrics([metrics, metrics], merge_two(both), sum_rates=True)
    assert summed["read"]["iops"] == pytest.approx(2 * read["iops"])


def merge_two(jobs: list[JobResult]) -> JobResult:
    from iobench.analysis.aggregate import merge_jobs

    return merge_jobs([merge_jobs(jobs), merge_jobs(jobs)], sum_rates=True)


# --- stored runs: shown, compared, exported and imported ------------------------------------


def part(name: str, rw: str, iops: float, p99: int) -> PartResult:
    d = "read" if "read" in rw else "write"
    section = {"iops": iops, "bw_bytes": iops * 4096, "io_bytes": int(iops * 4096),
               "total_ios": int(iops), "runtime_ms": 1000, "iops_submitted": iops,
               "ios_completed": iops, "ios_completed_from": "io_bytes/bs",
               "lat_ns": {"n": int(iops), "mean": p99 / 2, "min": 1, "max": p99, "stddev": 1.0,
                          "p50": p99 // 2, "p99": p99}}  # fmt: skip
    params = Workload(name, rw, 4096, 4, 1, size=1 << 20).params
    metrics = {"metrics_version": 2, "read": None, "write": None, "trim": None, d: section}
    return PartResult(name, params, {**metrics, "cpu": {}, "error": 0})


def stored_run(run_id: int, reader_iops: float, label: str) -> RunRecord:
    parts = (
        part("reader", "randread", reader_iops, 900_000),
        part("writer", "randwrite", 500, 2_000_000),
    )
    w = group(
        "mixed", [Workload(p.name, str(p.params["rw"]), 4096, 4, 1, size=1 << 20) for p in parts]
    )
    metrics = {
        "metrics_version": 2,
        "read": (parts[0].metrics or {})["read"],
        "write": (parts[1].metrics or {})["write"],
    }
    result = ResultRecord(
        target="/t", workload="mixed", position=0, status="ok", params=w.params, metrics=metrics,
        job_file="", fio_argv=[], fio_rc=0, fio_version="3.33", raw_output=None, fio_stdout=None,
        fio_stderr=None, error=None, started_at="2026-01-01T00:00:00.000Z",
        finished_at="2026-01-01T00:00:01.000Z", parts=parts,
    )  # fmt: skip
    return RunRecord(
        run_id, f"u{run_id}", "complete", "g", SuiteDefinition(), label, [], {}, "3.33", "0",
        [], None, "2026-01-01T00:00:00.000Z", None, [], [result],
    )  # fmt: skip


def test_compare_matches_groups_on_all_their_parts_and_shows_each_part() -> None:
    c = compare([stored_run(1, 1000, "a"), stored_run(2, 2000, "b")])
    rows = [(r.workload, r.direction) for r in c.rows]
    assert rows == [("mixed", "read"), ("mixed", "write"), ("mixed/reader", "read"),
                    ("mixed/writer", "write")]  # fmt: skip
    reader = c.rows[2]
    assert reader.cells[1].iops_ratio == pytest.approx(2.0)
    # a group whose parts differ in shape is not the same workload
    other = stored_run(3, 1000, "c")
    other.results[0].parts[1].params["bs"] = 8192
    other.results[0].params["parts"][1]["bs"] = 8192
    c = compare([stored_run(1, 1000, "a"), other])
    assert c.rows == () and "parts" in c.unmatched[0].reason


def test_show_export_and_import_keep_each_part(cli: Cli, tmp_path: Path, isolated_db: Path) -> None:
    from iobench.store import Store

    run = stored_run(1, 1000, "a")
    with Store.open(isolated_db) as store:
        run_id = store.create_run(
            suite="g", suite_def={"name": "g"}, label="a", argv=[], host={},
            iobench_version="0", targets=[TargetRecord(0, "/t", "/t", "directory", None, {})],
        )  # fmt: skip
        store.add_result(run_id, run.results[0])
        store.finish_run(run_id, status="complete", fio_version="3.33", warnings=[])
        back = store.get_run(run_id)
    assert back.results[0].parts == run.results[0].parts
    code, out, err = cli("show", str(run_id))
    assert code == 0, err
    for line in ("mixed", "mixed/reader", "mixed/writer"):
        assert f"│ {line} " in out
    code, out, _ = cli("export", str(run_id), "--format", "csv")
    rows = [line.split(",") for line in out.splitlines()]
    part_col = rows[0].index("part")
    assert [(r[3], r[part_col]) for r in rows[1:]] == [
        ("mixed", ""), ("mixed", ""), ("mixed", "reader"), ("mixed", "writer")]  # fmt: skip
    code, out, _ = cli("export", str(run_id), "--format", "json")
    doc = json.loads(out)
    (result,) = doc["results"]
    assert [p["name"] for p in result["parts"]] == ["reader", "writer"]
    assert result["parts"][0]["read"]["iops"] == 1000
    path = tmp_path / "run.json"
    path.write_text(out)
    code, _, err = cli("--db", str(tmp_path / "other.db"), "import", str(path))
    assert code == 0, err
    with Store.open(tmp_path / "other.db") as store:
        (imported,) = store.get_run(1).results
    assert imported.parts == run.results[0].parts
    # a part the schema does not allow is refused, named
    result["parts"][0]["read"]["iops"] = "fast"
    path.write_text(json.dumps(doc))
    code, _, err = cli("--db", str(tmp_path / "third.db"), "import", str(path))
    assert code == 2 and "results[0].parts[0].read.iops" in err


def test_a_groups_seconds_are_its_parts_summed_direction_by_direction() -> None:
    from iobench.engine.parts import together

    reader = {
        "interval_ms": 1000,
        "read": {"t_s": [1, 2], "iops": [100.0, 200.0], "bw_bytes": [1.0, 2.0],
                 "lat_mean_ns": [10.0, 20.0]},
    }  # fmt: skip
    scanner = {
        "interval_ms": 1000,
        "read": {"t_s": [1, 2, 3], "iops": [300.0, 200.0, 50.0], "bw_bytes": [3.0, 2.0, 1.0],
                 "lat_mean_ns": [30.0, 40.0, 5.0]},
    }  # fmt: skip
    writer = {
        "interval_ms": 1000,
        "write": {"t_s": [1], "iops": [7.0], "bw_bytes": [8.0], "lat_mean_ns": [9.0]},
    }
    out = together([reader, None, scanner, writer])
    assert out is not None
    assert out["read"] == {
        "t_s": [1, 2, 3],
        "iops": [400.0, 400.0, None],  # a second a reading part has no sample for: none
        "bw_bytes": [4.0, 4.0, None],
        "lat_mean_ns": [(100 * 10 + 300 * 30) / 400, (200 * 20 + 200 * 40) / 400, None],
    }
    assert out["write"] == writer["write"] and out["interval_ms"] == 1000
    assert together([None, None]) is None
