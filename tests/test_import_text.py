"""iobench import of fio's normal (human-readable) text output, fio 2.x and 3.x.

Real texts only: fio 3.33 runs recorded with --output-format=normal,terse,json+ (the
normal part is cut out here and checked figure by figure against the JSON of the same
run, to the precision the text shows), the six fio 2.1.10 runs of the UCloud RSSD article
(tests/data/fio-outputs/text/SOURCES.md) and other people's outputs from public
repositories. No fio runs here.
"""

from __future__ import annotations

import json
import math
import re
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Cli
from iobench.errors import UserError
from iobench.fio import textparams
from iobench.fio.parse import parse_fio_output
from iobench.fio.text import looks_like_normal, parse_normal_output
from iobench.importer import import_files, interpret_fio_output, interpret_fio_runs
from iobench.jsontext import scan_objects
from iobench.model import DIRECTIONS, FioOutput, LatencyStats
from iobench.records import ImportedRun, ResultRecord
from iobench.store import Store

DATA = Path(__file__).parent / "data" / "fio-outputs"
RECORDED = DATA / "recorded"
TEXT = DATA / "text"
EXTERNAL = DATA / "external"
UCLOUD = TEXT / "ucloud-rssd-fio-2.1.10.txt"
ARGV = ["iobench", "import"]
WITH_JSON = [
    "text-client-server-2.out",
    "text-error-einval-beside-ok.out",
    "text-group-reporting-numjobs2.out",
    "text-kb-base-1000.out",
    "text-libaio-randread-qd8.out",
    "text-numjobs2-two-groups.out",
    "text-psync-randrw-fsync-lat.out",
    "text-status-interval.out",  # the last of fio's cumulative reports
    "text-unified-both.out",  # read and write kept, their 'mixed' sum not
    "text-cmdline-randread-numjobs4-gr.out",
    "text-cmdline-write-numjobs2-defaults.out",
    "text-disable-clat-lat-only.out",
]


def normal_part(path: Path) -> str:
    """A recorded file without its JSON and terse lines: fio's normal output alone."""
    text = path.read_text()
    for start, end, _ in reversed(scan_objects(text)):
        text = text[:start] + text[end:]
    return "\n".join(
        line for line in text.splitlines() if not (line[:1] in "345" and line[1:6] == ";fio-")
    )


def _unit(ns: float) -> float:
    """The unit fio 3.x prints a latency line in: usec or msec once its minimum reaches it."""
    return 1e6 if ns >= 1e6 else 1e3 if ns >= 1e3 else 1.0


def _close_latency(text: LatencyStats, json_: LatencyStats, where: str) -> None:
    unit = _unit(json_.min_ns)
    for name in ("mean_ns", "stddev_ns"):
        t, j = getattr(text, name), getattr(json_, name)
        assert abs(t - j) <= 0.005 * unit + 1e-6, (where, name, t, j)
    for name in ("min_ns", "max_ns"):  # whole units, or 4-5 digits and k (x1000)
        t, j = getattr(text, name), getattr(json_, name)
        assert abs(t - j) <= max(unit, j * 1e-3), (where, name, t, j)
    assert text.n == json_.n
    assert text.bins == {}  # text holds no histogram
    if text.percentiles:
        assert [p for p, _ in text.percentiles] == [p for p, _ in json_.percentiles]
        values = [v for _, v in text.percentiles]
        step = next(u for u in (1e6, 1e3, 1.0) if all(v % u == 0 for v in values))
        for (p, t), (_, j) in zip(text.percentiles, json_.percentiles, strict=True):
            assert 0 <= t - j < step, (where, p, t, j)  # fio rounds up to the table's unit


def _agree(text: FioOutput, json_: FioOutput) -> int:
    """Every figure of the text within the precision it shows of the JSON's; the number of
    figures compared."""
    assert (text.fio_version, text.client_mode) == (json_.fio_version, json_.client_mode)
    assert text.output_format == "normal" and text.latency_unit == "ns"
    assert [(j.jobname, j.groupid) for j in text.jobs] == [
        (j.jobname, j.groupid) for j in json_.jobs
    ]
    compared = 0
    for tj, jj in zip(text.jobs, json_.jobs, strict=True):
        assert tj.error == jj.error
        for cpu in ("usr_cpu_pct", "sys_cpu_pct"):
            assert abs(getattr(tj, cpu) - getattr(jj, cpu)) <= 0.005 + 1e-9
        for d in DIRECTIONS:
            td, jd = tj.direction(d), jj.direction(d)
            if td is None and jd is not None:  # fio prints no line for a failed job's
                assert jj.error != 0 and (jd.io_bytes, jd.runtime_ms) == (0, 0)
                continue
            assert (td is None) == (jd is None), (tj.jobname, d)
            if td is None or jd is None:
                continue
            where = f"{tj.jobname} {d}"
            assert (td.total_ios, td.runtime_ms) == (jd.total_ios, jd.runtime_ms), where
            assert abs(td.iops - jd.iops) < 1e-3, (where, td.iops, jd.iops)
            # 3 significant digits at least ("200MiB/s" for 199.7 MiB/s)
            assert abs(td.bw_bytes - jd.bw_bytes) <= jd.bw_bytes * 5e-3, where
            assert abs(td.io_bytes - jd.io_bytes) <= jd.io_bytes * 5e-3, where
            for kind in ("clat", "lat", "slat"):
                tl, jl = getattr(td, kind), getattr(jd, kind)
                assert (tl is None) == (jl is None), (where, kind)
                if tl is not None and jl is not None:
                    _close_latency(tl, jl, f"{where} {kind}")
                    compared += 1
            compared += 1
    assert len(text.disk_util) == len(json_.disk_util)
    for td_, jd_ in zip(text.disk_util, json_.disk_util, strict=True):
        assert (td_.name, td_.read_ios, td_.write_ios, td_.in_queue_ms) == (
            jd_.name,
            jd_.read_ios,
            jd_.write_ios,
            jd_.in_queue_ms,
        )
        assert (td_.read_merges, td_.write_merges) == (jd_.read_merges, jd_.write_merges)
        assert abs(td_.util_pct - jd_.util_pct) <= 0.005 + 1e-9
    return compared


@pytest.mark.parametrize("name", WITH_JSON)
def test_the_text_and_the_json_of_one_run_agree(name: str) -> None:
    path = RECORDED / name
    json_output = parse_fio_output(path.read_text(), str(path))
    text_output, report = parse_normal_output(normal_part(path), str(path))
    assert _agree(text_output, json_output) >= 2
    entries = report.get("client_stats") or report["jobs"]
    assert [e["jobname"] for e in entries] == [j.jobname for j in text_output.jobs]


def test_with_kb_base_1000_the_iec_figure_in_parentheses_is_taken() -> None:
    path = RECORDED / "text-kb-base-1000.out"
    (job,) = parse_normal_output(normal_part(path), str(path))[0].jobs
    assert "BW=568MB/s (542MiB/s)(569MB/1001msec)" in path.read_text()
    assert job.read is not None
    assert job.read.bw_bytes == 542 * 1024**2  # not 568e6: the IEC one, as with kb_base=1024
    assert job.read.io_bytes == 569 * 1000**2  # fio printed io only in SI


def test_percentile_tables_of_every_latency_are_read() -> None:
    # psync randrw with lat_percentiles=1: clat and lat tables in nsec; the fsync
    # section's own ("sync percentiles") is not a direction's and is left out.
    path = RECORDED / "text-psync-randrw-fsync-lat.out"
    (job,) = parse_normal_output(normal_part(path), str(path))[0].jobs
    assert job.read is not None and job.write is not None
    assert job.read.lat is not None and job.read.clat is not None
    assert job.read.clat.percentile(99.0) == 15168.0
    assert job.read.lat.percentile(99.5) == 17536.0
    assert job.write.lat.percentile(99.99) == 84480.0  # type: ignore[union-attr]
    assert job.read.slat is None  # psync: fio printed no slat line


def test_a_failed_job_beside_one_that_ran() -> None:
    path = RECORDED / "text-error-einval-beside-ok.out"
    run = _imported(normal_part(path), str(path))
    assert run.status == "failed"
    assert run.error == "badalign on (unknown): fio reported error 22 (Invalid argument)"
    bad, good = run.results
    assert (bad.status, bad.params["bs"], _m(bad)["read"]) == ("failed", 1000, None)
    assert (good.status, _m(good)["read"]["total_ios"]) == ("ok", 143321)


def test_a_file_with_both_the_text_and_the_json_imports_the_json() -> None:
    path = RECORDED / "text-libaio-randread-qd8.out"
    run = interpret_fio_output(path.read_text(), str(path))
    assert not [w for w in run.warnings if w["id"].startswith("text-")]
    (result,) = run.results
    assert _m(result)["read"]["total_ios"] == 304217
    assert _m(result)["read"]["iops_submitted"] == 303913.086913  # JSON's, not the text's


def _m(result: ResultRecord) -> dict[str, Any]:
    assert result.metrics is not None
    return result.metrics


def _imported(text: str, name: str = "x.txt") -> ImportedRun:
    return interpret_fio_output(text, name)


def test_the_text_alone_imports_like_its_json() -> None:
    path = RECORDED / "text-numjobs2-two-groups.out"
    from_json = _imported(path.read_text(), str(path))
    from_text = _imported(normal_part(path), str(path))
    ids = [w["id"] for w in from_text.warnings]
    assert "jobs-merged" in ids  # numjobs=2 clones, no group_reporting: one result
    assert {"text-precision", "text-no-histogram", "text-parameters"} <= set(ids)
    assert [r.workload for r in from_text.results] == [r.workload for r in from_json.results]
    for t, j in zip(from_text.results, from_json.results, strict=True):
        for key in ("rw", "bs", "iodepth", "ioengine"):
            assert t.params[key] == j.params[key], key
        assert t.params["numjobs"] == (2 if t.workload == "randwrite" else 1)
        assert t.target == "(unknown)"  # the header line names no file
        for d in ("read", "write"):
            if _m(j)[d] is None:
                assert _m(t)[d] is None
                continue
            assert _m(t)[d]["total_ios"] == _m(j)[d]["total_ios"]
            assert _m(t)[d]["runtime_ms"] == _m(j)[d]["runtime_ms"]
            assert _m(t)[d]["clat_ns"]["p99"] is None or t.workload == "seqread"
    warning = next(w for w in from_text.warnings if w["id"] == "text-parameters")
    assert "fio's job header line" in warning["message"]


def test_client_server_text_keeps_each_client_and_not_the_sum() -> None:
    path = RECORDED / "text-client-server-2.out"
    run = _imported(normal_part(path), str(path))
    assert run.client_mode
    assert [(r.target, r.workload) for r in run.results] == [
        ("client 1", "csjob"),
        ("client 2", "csjob"),
    ]
    assert [_m(r)["read"]["total_ios"] for r in run.results] == [149312, 148987]
    assert "all-clients-not-stored" in [w["id"] for w in run.warnings]


# -- the UCloud RSSD article: six fio 2.1.10 runs pasted with their command lines -------------


def test_the_six_ucloud_runs_have_the_articles_numbers(cli: Cli, isolated_db: Path) -> None:
    """Six fio runs, each after its command line: six runs, each with its own parameters."""
    code, out, err = cli("import", str(UCLOUD))
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split(" (")[1].split(")")[0] for line in lines] == [
        f"run {n} of 6 in the file, line {line}"
        for n, line in enumerate((16, 50, 86, 121, 158, 192), start=1)
    ]
    assert all(line.endswith(": 1 result(s), fio 2.1.10") for line in lines)
    docs = []
    for run_id in range(1, 7):
        code, out, err = cli("show", str(run_id), "--json")
        assert code == 0, err
        docs.append(json.loads(out))
    rows = [(r, r["read"] or r["write"]) for doc in docs for r in doc["results"]]
    assert [d["iops"] for _, d in rows] == [5928, 9161, 1082, 1082, 16831, 16831]
    first = rows[0][1]
    assert first["clat_ns"]["mean"] == 163_790.0  # "clat (usec): ... avg=163.79"
    assert first["clat_ns"]["p99"] == 223_000  # "99.00th=[  223]"
    assert first["total_ios"] == 5928846  # "issued : total=r=5928846/w=0/d=0"
    assert first["runtime_ms"] == 1000001
    assert first["bw_bytes"] == 23715 * 1024  # "bw=23715KB/s": fio 2.x's KB is 1024
    assert first["io_bytes"] == 23160 * 1024**2  # "io=23160MB"
    assert rows[2][1]["clat_ns"]["p99"] == 121_000_000  # "clat percentiles (msec)"
    params = [r["params"] for r, _ in rows]
    assert [p["rw"] for p in params] == ["read", "write", "read", "write", "randread", "randwrite"]
    assert [p["numjobs"] for p in params] == [1, 1, 4, 4, 4, 4]
    assert [p["bs"] for p in params] == [4096, 4096, 262144, 262144, 4096, 4096]
    assert {p["size"] for p in params} == {200 * 1024**3}
    assert {r["target"] for r, _ in rows} == {"/data/test"}
    assert {r["workload"] for r, _ in rows} == {"test"}
    assert {doc["fio_version"] for doc in docs} == {"2.1.10"}
    assert docs[0]["started_at"] == "2022-03-30T16:33:14.000Z"
    assert len({doc["started_at"] for doc in docs}) == 6  # each run's own time
    for n, doc in enumerate(docs, start=1):
        ids = {w["id"] for w in doc["warnings"]}
        assert {"microsecond-latencies", "text-precision", "text-no-histogram"} <= ids
        message = next(w["message"] for w in doc["warnings"] if w["id"] == "text-parameters")
        assert message == "the jobs' parameters were read from the fio command line"
        place = next(w["message"] for w in doc["warnings"] if w["id"] == "one-of-several-runs")
        assert place.startswith(
            f"the file holds 6 fio runs, each imported as a run of its own; "
            f"this is run {n}, whose report starts at line "
        )
        if n > 1:
            assert "another fio run starting before it" in place
    # Each run keeps its own part of the file as raw output; together they are the file.
    parts = []
    for run_id in range(1, 7):
        code, out, err = cli("show", str(run_id), "--raw")
        assert code == 0, err
    with Store.open(isolated_db) as store:
        for run_id in range(1, 7):
            run = store.get_run(run_id, with_raw=True)
            parts.append(run.results[0].raw_output)
    assert "".join(p or "" for p in parts) == UCLOUD.read_text()
    assert [p.count("~]#\u00a0fio") for p in parts if p] == [1] * 6  # its command line


# -- other people's text outputs ----------------------------------------------------------


def test_fio_2_2_normal_output_from_a_repository() -> None:
    path = EXTERNAL / "chris-sanders__ceph-fio-results__bluestore_erasure2.1_randread-1M.out"
    output, _ = parse_normal_output(path.read_text(), str(path))
    (job,) = output.jobs
    assert output.fio_version == "2.2.10" and output.latency_unit == "us"
    assert job.read is not None and job.read.clat is not None
    assert (job.read.iops, job.read.total_ios, job.read.runtime_ms) == (133, 8014, 60253)
    assert job.read.bw_bytes == 136198 * 1024
    assert job.read.clat.mean_ns == 240.35e6  # "clat (msec): ... avg=240.35"
    assert job.read.clat.percentile(99.0) == 1369e6


def test_fio_3_7_four_groups_from_a_repository() -> None:
    path = EXTERNAL / "kangeek__fio-bench-disks-ceph__ceph_2hdd_cephfs.2.log"
    run = _imported(path.read_text(), str(path))
    assert [r.workload for r in run.results] == [
        "4k_randwrite",
        "4k_randread",
        "64k_write",
        "64k_read",
    ]
    read = _m(run.results[1])["read"]
    assert read["total_ios"] == 10292 and read["runtime_ms"] == 30057
    assert round(read["iops"]) == 342  # "IOPS=342"
    assert read["clat_ns"]["max"] == 3038.4e6  # "max=3038.4k" usec
    assert read["bw_bytes"] == 1370 * 1024  # "BW=1370KiB/s (1403kB/s)": the IEC one
    assert run.results[3].params["bs"] == 65536  # "bs=(R) 64.0KiB-64.0KiB"


def test_runs_pasted_with_shell_prompts_take_their_command_lines() -> None:
    path = TEXT / "d-uzlov__k8s-homelab__test-fsync.excerpt.md"
    found = interpret_fio_runs(path.read_text(), str(path))
    assert [(f.number, f.of, f.line) for f in found] == [(1, 3, 22), (2, 3, 63), (3, 3, 105)]
    runs = [f.run for f in found]
    # The first output follows a quoted command, not its own: header line only.
    assert [(r.target, r.workload) for run in runs for r in run.results] == [
        ("(unknown)", "mytest"),
        ("test-data", "mytest"),
        ("test-data", "mytest"),
    ]
    first, second, third = (run.results[0] for run in runs)
    assert first.params["size"] is None
    assert second.params["size"] == 22 * 1024**2  # --size=22m
    assert second.params["options"] == {"fdatasync": "1"}
    assert [_m(r)["write"]["total_ios"] for r in (first, second, third)] == [5632] * 3
    assert _m(first)["write"]["clat_ns"]["p99"] == 23168  # nsec table
    assert {run.fio_version for run in runs} == {"3.25"}


def test_a_text_without_version_or_header_is_read_for_what_it_holds() -> None:
    path = TEXT / "rawstor__rawstor_bench__perftest-4k-1-1_c8d8a55.md"
    run = _imported(path.read_text(), str(path))
    (result,) = run.results
    assert run.fio_version is None
    assert result.params["rw"] is None  # nothing in the text says: null, never guessed
    assert _m(result)["read"]["total_ios"] == 56046
    assert _m(result)["write"]["total_ios"] == 55785
    assert _m(result)["disk_util"][0]["name"] == "sdb"  # "sectors=" (fio >= 3.32)
    assert _m(result)["read"]["slat_ns"]["mean"] == 183.82


def test_a_job_file_shown_with_cat_gives_the_parameters(tmp_path: Path) -> None:
    meta = json.loads((RECORDED / "text-normal-only-seqwrite.meta.json").read_text())
    output = (RECORDED / "text-normal-only-seqwrite.out").read_text()
    text = f"$ cat job.fio\n{meta['job_files']['job.fio']}$ fio job.fio\n{output}"
    (result,) = _imported(text).results
    assert result.target == "data.bin"
    params = result.params
    assert (params["rw"], params["bs"], params["iodepth"]) == ("write", 1 << 20, 2)
    assert (params["size"], params["direct"], params["runtime_s"]) == (8 << 20, True, 1.0)
    run = _imported(text)
    message = next(w["message"] for w in run.warnings if w["id"] == "text-parameters")
    assert "the job file shown with it" in message


# -- hostile text -------------------------------------------------------------------------

GOOD = (RECORDED / "text-normal-only-seqwrite.out").read_text()


@pytest.mark.parametrize(
    ("change", "found"),
    [
        (("IOPS=3379", "IOPS=99999999999999999999999"), ":7: IOPS 99999999999999999999999 is"),
        (("clat (usec)", "clat (xsec)"), ":9: latency unit 'xsec' is not nsec, usec or msec"),
        (("BW=3380MiB/s", "BW=3380XiB/s"), ":7: a job's IO line"),
        (("1.00th=[  486]", "1.00th=[  4x6]"), ":12: a percentile line is not as fio"),
        (("(groupid=0, jobs=1)", "(groupid=0, jobs=one)"), ":6: a job's result line"),
        (("avg=531.89", "avg=1e999"), ":9: a latency line"),
    ],
)
def test_broken_fio_text_is_refused_naming_file_and_line(
    cli: Cli, isolated_db: Path, tmp_path: Path, change: tuple[str, str], found: str
) -> None:
    path = tmp_path / "old-run.txt"
    assert change[0] in GOOD
    path.write_text(GOOD.replace(change[0], change[1], 1))
    code, out, err = cli("import", str(path))
    assert code == 2, err
    assert out == "" and "Traceback" not in err
    assert f"{path}{found}" in " ".join(err.split())
    assert not isolated_db.exists() or _runs(isolated_db) == 0


def _runs(db: Path) -> int:
    with Store.open(db) as store:
        return len(store.list_runs())


@pytest.mark.parametrize(
    ("cut_after", "found"),
    [
        ("err= 0: pid=2006", "6: the result of job 'seqwrite' is cut short: its IO figures"),
        ("avg=531.89, stdev=46.49\n", "6: the result of job 'seqwrite' is cut short: the cpu"),
        ("lat (usec): min=401", "10: a latency line (slat/clat/lat) is not as fio writes it"),
    ],
)
def test_a_result_cut_short_is_refused(cut_after: str, found: str) -> None:
    text = GOOD[: GOOD.index(cut_after) + len(cut_after)]
    with pytest.raises(UserError) as e:
        _imported(text, "cut.txt")
    assert e.value.message.startswith(f"cut.txt:{found}")


def test_an_article_that_lost_fios_figures_is_refused_naming_the_line(cli: Cli) -> None:
    path = TEXT / "digitalocean-volumes-de.damaged.txt"
    code, out, err = cli("import", str(path))
    assert (code, out) == (2, ""), err
    assert (
        f"{path}:5: a job's IO line (read/write/trim) is not as fio writes it: "
        "'write: io=22937MB, , , runt=120160msec'"
    ) in " ".join(err.split())


def test_only_the_group_summary_is_refused(tmp_path: Path) -> None:
    summary = GOOD[GOOD.index("Run status group") :]
    with pytest.raises(UserError) as e:
        _imported(summary, "summary.txt")
    assert "part of fio's normal text output, but holds no job's result" in e.value.message


def test_long_lines_and_junk_around_the_output_are_skipped_in_bounded_time() -> None:
    # Bounds on the work are in this process's CPU time (time.process_time): other
    # processes' load on the machine does not stretch it, as it stretches the wall clock.
    junk = "x" * 100_000 + "\n" + ("(groupid=" * 20_000) + "\n" + "\x1b[31m" * 1000 + "\n"
    started = time.process_time()
    run = _imported(junk + GOOD + junk)
    assert time.process_time() - started < 5
    (result,) = run.results
    assert _m(result)["write"]["total_ios"] == 3383
    # Thousands of fio command lines with shell quoting: each costs a quoting parse, so
    # only the first thousand are read as commands.
    commands = ("$ fio --rw=read '--name=x' --bs=4k " * 40 + "\n") * 20_000
    lying = "$ fio --name=seqwrite --rw=read --bs=4k\n"  # right above the output, too late
    started = time.process_time()
    (result,) = _imported(commands + lying + GOOD).results
    assert time.process_time() - started < 10
    # The header line's rw: the command right above the output lies past the first
    # thousand, so it was not read (read, it would say rw=read).
    assert result.params["rw"] == "write"
    (read_it,) = _imported(lying + GOOD).results
    assert read_it.params["rw"] == "read", "the same command, within the first thousand"
    # A job file whose values end in long runs of blanks (a lazy pattern before \s*$ was
    # quadratic in them).
    job_file = "[global]\n" + ("size=8M" + " " * 1000 + "x\n") * 2000
    started = time.process_time()
    (result,) = _imported(job_file + GOOD).results
    assert time.process_time() - started < 2
    # A long line of result-like junk is no fio line: it is not read as one.
    crafted = ("a: (groupid=0, jobs=1): err= 0: pid=1 " * 3000) + "\n"
    started = time.process_time()
    assert looks_like_normal(crafted)
    with pytest.raises(UserError, match="holds no job result"):
        _imported(crafted, "crafted.txt")
    assert time.process_time() - started < 5


def test_binary_junk_and_a_lookalike_are_refused_and_nothing_is_stored(
    cli: Cli, isolated_db: Path, tmp_path: Path
) -> None:
    blob = tmp_path / "run.bin"
    blob.write_bytes(b"\x00\x01\x02" + GOOD.encode())
    nearly = tmp_path / "notes.txt"
    nearly.write_text("my notes: iops=5000 looked fine\n")
    for path, found in (
        (blob, "holds no fio output: it holds binary data"),
        (nearly, "part of fio's normal text output, but holds no job's result"),
    ):
        code, out, err = cli("import", str(path))
        assert (code, out) == (2, ""), err
        assert found in " ".join(err.split())
    assert not isolated_db.exists() or _runs(isolated_db) == 0


def test_import_files_reads_text_among_json(tmp_path: Path) -> None:
    with Store.open(tmp_path / "db.sqlite") as store:
        ids = import_files(
            store,
            [str(RECORDED / "seqread-1m-json.json"), str(UCLOUD)],
            label="old",
            argv=ARGV,
        )
        runs = [store.get_run(i) for i in ids]
    assert [len(r.results) for r in runs] == [1] * 7  # the article's six runs, each its own
    assert all(r.label == "old" for r in runs)
    assert math.isclose(_m(runs[1].results[0])["read"]["iops"], 5928)


# -- whatever text is imported, every reader copes ------------------------------------------

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_UNITS = ["nsec", "usec", "msec", "KiB", "MiB", "GiB", "KB", "MB", "k", "M", ""]
_VALUES = st.one_of(
    st.integers(min_value=0, max_value=2**70).map(str),
    st.sampled_from(["0", "0.00", "1e5", "-1", "1.5", "abc", "", "4294967296", "9" * 40]),
)


def _mutated_text(text: str, data: st.DataObject) -> str:
    for _ in range(data.draw(st.integers(1, 3))):
        kind = data.draw(st.sampled_from(["number", "unit", "drop", "repeat"]))
        if kind == "number":
            spans = [m.span() for m in _NUMBER.finditer(text)]
            start, end = data.draw(st.sampled_from(spans))
            text = text[:start] + data.draw(_VALUES) + text[end:]
        elif kind == "unit":
            present = [u for u in _UNITS if u and u in text]
            old = data.draw(st.sampled_from(present))
            text = text.replace(old, data.draw(st.sampled_from(_UNITS)), 1)
        else:
            lines = text.splitlines()
            i = data.draw(st.integers(0, len(lines) - 1))
            lines[i : i + 1] = [] if kind == "drop" else [lines[i], lines[i]]
            text = "\n".join(lines)
    return text


_SOURCES = {
    "seqwrite": GOOD,
    "psync": normal_part(RECORDED / "text-psync-randrw-fsync-lat.out"),
    "clients": normal_part(RECORDED / "text-client-server-2.out"),
    "ucloud": UCLOUD.read_text(),
}


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), source=st.sampled_from(sorted(_SOURCES)))
def test_any_change_to_fio_text_is_refused_or_read_by_everything(
    cli: Cli, tmp_path: Path, data: st.DataObject, source: str
) -> None:
    text = _mutated_text(_SOURCES[source], data)
    case = uuid.uuid4().hex  # tmp_path is shared by every example
    db = tmp_path / f"{case}.db"
    path = tmp_path / "case.txt"
    path.write_text(text)
    assert cli("--db", str(db), "import", str(RECORDED / "seqread-1m-json.json"))[0] == 0
    code, _, err = cli("--db", str(db), "import", str(path))
    assert code in (0, 2) and "internal error" not in err and "Traceback" not in err, err
    if code == 2:
        assert err.startswith(f"iobench: error: {path}"), err
        assert _runs(db) == 1
        return
    again = tmp_path / "again.json"
    for args in (
        ("show", "2"),
        ("show", "2", "--json"),
        ("compare", "1", "2"),
        ("report", "1", "2", "-o", str(tmp_path / "r.html")),
        ("export", "2"),
        ("export", "2", "--format", "json", "-o", str(again)),
    ):
        code, _, err = cli("--db", str(db), *args)
        assert code == 0, f"{args}: {err}"
    code, _, err = cli("--db", str(tmp_path / f"{case}-again.db"), "import", str(again))
    assert code == 0, f"an export of what was imported imports again: {err}"


@pytest.mark.parametrize("source", ["json", "text"])
def test_a_cpu_percentage_fio_never_reports_is_refused(source: str) -> None:
    # Found by the test above: a run whose usr_cpu a run document cannot hold was stored,
    # and could not be read back.
    if source == "json":
        text = (RECORDED / "seqread-1m-json.json").read_text()
        text = re.sub(r'"usr_cpu" : [0-9.]+', '"usr_cpu" : 1000001.0', text, count=1)
    else:
        text = GOOD.replace("usr=13.10%", "usr=1000001%")
    with pytest.raises(UserError) as e:
        _imported(text, "cpu.txt")
    assert e.value.message.startswith("cpu.txt: the job ")
    assert "usr_cpu is 1000001.0%, more than fio reports" in e.value.message


def test_a_text_of_blank_lines_is_refused_in_linear_time() -> None:
    # Telling what a refused file holds searched for terse lines with ^\s*, which crosses
    # lines: 80,000 blank lines took 54 s. Now [ \t]*: the same in milliseconds.
    started = time.process_time()
    with pytest.raises(UserError, match="holds no fio output"):
        _imported(" \n" * 400_000 + "Run status group", "blank.txt")
    assert time.process_time() - started < 2


# -- command lines, job files and header lines ----------------------------------------------


@pytest.mark.parametrize(
    ("line", "shared", "jobs", "files"),
    [
        (
            "[root@10-60-94-140 ~]# fio -direct=1 -rw=read -bs=4k -name=test -filename=/data/t",
            {"direct": "1", "rw": "read", "bs": "4k"},
            [("test", {"filename": "/data/t"})],
            [],
        ),
        (
            "$ sudo fio --name=a --rw=randread --time_based --name=b --rw=write > out.txt",
            {},
            [("a", {"rw": "randread", "time_based": "1"}), ("b", {"rw": "write"})],
            [],
        ),
        (
            "user@host:~$ fio --output-format=json --status-interval=1 job.fio",
            {},
            [],
            ["job.fio"],
        ),
        (
            "# fio '--name=my job' --filename=\"/mnt/a b\" --client=host1",
            {},
            [("my job", {"filename": "/mnt/a b"})],
            [],
        ),
    ],
)
def test_a_fio_command_line_is_read_as_fio_reads_it(
    line: str, shared: dict[str, str], jobs: list[tuple[str, dict[str, str]]], files: list[str]
) -> None:
    command = textparams.fio_command(line)
    assert command is not None
    assert (command.shared, command.jobs, command.job_files) == (shared, jobs, files)


@pytest.mark.parametrize(
    "line",
    [
        "fio is a tool",  # prose
        "we ran fio --rw=read yesterday",  # not at a prompt
        "apt install fio",
        "fio",
        "x" * 5000 + " fio --rw=read",
    ],
)
def test_lines_that_only_mention_fio_are_no_command(line: str) -> None:
    assert textparams.fio_command(line) is None


@pytest.mark.parametrize(
    ("rest", "options"),
    [
        (
            "rw=randread, bs=4K-4K/4K-4K/4K-4K, ioengine=libaio, iodepth=32",
            {"rw": "randread", "bs": "4096", "ioengine": "libaio", "iodepth": "32"},
        ),
        (
            "rw=read, bs=(R) 64.0KiB-64.0KiB, (W) 64.0KiB-64.0KiB, (T) 64.0KiB-64.0KiB, "
            "ioengine=libaio, iodepth=2",
            {"rw": "read", "bs": "65536", "ioengine": "libaio", "iodepth": "2"},
        ),
        (  # reads and writes of other sizes: no single bs
            "rw=randrw, bs=(R) 4096B-4096B, (W) 8192B-8192B, (T) 4096B-4096B, "
            "ioengine=psync, iodepth=1",
            {"rw": "randrw", "ioengine": "psync", "iodepth": "1"},
        ),
        (  # a range: no single bs
            "rw=randrw, bs=512-64K/512-64K/512-64K, ioengine=libaio, iodepth=64",
            {"rw": "randrw", "ioengine": "libaio", "iodepth": "64"},
        ),
    ],
)
def test_the_job_header_line_gives_what_fio_printed(rest: str, options: dict[str, str]) -> None:
    assert textparams.header_options(rest) == options


def test_a_job_file_gives_each_job_the_global_options_before_it() -> None:
    jobs = textparams.job_file(
        [
            "[global]",
            "size=8M ; comment",
            "# a comment",
            "[one]",
            "rw=read",
            "time_based",
            "[global]",
            "direct=1",
            "[two]",
            "rw=write  # trailing",
        ]
    )
    # fio cuts a value at ';' or '#' (FIO.md: parse.c strip_blank_end)
    assert jobs["one"].effective == {"size": "8M", "rw": "read", "time_based": "1"}
    assert jobs["two"].effective == {"size": "8M", "direct": "1", "rw": "write"}


def _ucloud_first_run() -> str:
    """The article's first run: its command line and fio's output, up to the next run."""
    text = UCLOUD.read_text()
    start = text.index("[root@")
    return text[start : text.index("[root@", start + 1)]


def test_fio_2_latencies_of_a_second_and_more_carry_an_upper_case_k() -> None:
    """fio 2.x's num2str writes K upper case: max=20628K is 20,628,000 µs."""
    text = _ucloud_first_run().replace("max=7470,", "max=20628K,")
    (result,) = _imported(text).results
    assert _m(result)["read"]["clat_ns"]["max"] == 20_628_000 * 1000


def test_options_given_as_separate_words_are_read_as_fio_reads_them() -> None:
    """fio (getopt) takes ``--rw randwrite`` as rw=randwrite; flags such as
    ``--time_based`` take no value."""
    text = _ucloud_first_run()
    line = text.splitlines()[0]
    spaced = (
        "[root@h ~]# fio --direct=1 --iodepth 8 --rw randwrite --time_based "
        "--ioengine=libaio --bs 4k --name=test --filename=/data/test"
    )
    (result,) = _imported(text.replace(line, spaced)).results
    params = result.params
    assert (params["rw"], params["bs"], params["iodepth"]) == ("randwrite", 4096, 8)


def test_html_around_a_paste_is_not_fio_client_mode() -> None:
    run = _imported("<pre>\n" + _ucloud_first_run() + "</pre>\n")
    assert not run.client_mode
    assert [r.target for r in run.results] == ["/data/test"]


def test_fio_2_units_follow_the_kb_base_the_command_line_sets() -> None:
    """fio 2.x prints KB/s in powers of kb_base: 1024 by default, 1000 when set."""
    text = _ucloud_first_run()
    (plain,) = _imported(text).results
    assert _m(plain)["read"]["bw_bytes"] == 23715 * 1024
    line = text.splitlines()[0]
    (si,) = _imported(text.replace(line, line + " -kb_base=1000")).results
    assert _m(si)["read"]["bw_bytes"] == 23715 * 1000
    assert _m(si)["read"]["io_bytes"] == 23160 * 1000**2
