"""parse_fio_output / iter_json_objects against real fio outputs (no fio needed).

External fixtures: other people's fio runs (fio 2.1.4 .. 3.43), provenance and stated IOPS in
tests/data/fio-outputs/external/SOURCES.md. Recorded fixtures: fio 3.33 runs made by
scripts/record-fio-outputs, argv and job files beside each in <name>.meta.json.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from iobench.errors import FioOutputError
from iobench.fio.parse import (
    ALL_CLIENTS,
    _final_client_entries,
    iter_json_objects,
    parse_fio_output,
)
from iobench.model import DirectionResult, FioOutput, JobResult

DATA = Path(__file__).parent / "data" / "fio-outputs"
EXTERNAL = DATA / "external"
RECORDED = DATA / "recorded"


def load(path: Path) -> FioOutput:
    return parse_fio_output(path.read_text(), str(path))


def raw_report(path: Path) -> dict[str, Any]:
    """The last fio report in a file, as plain JSON (the independent view of the file)."""
    reports = [o for o in iter_json_objects(path.read_text()) if "jobs" in o or "client_stats" in o]
    return reports[-1]


def meta(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RECORDED / f"{name}.meta.json").read_text())
    return data


def recorded(name: str) -> FioOutput:
    return load(RECORDED / f"{name}.json")


# ---------------------------------------------------------------------------------------
# External fixtures: (file, fio version, read IOPS, write IOPS) exactly as SOURCES.md
# states them. 0 means the direction did no IO, which the parser reports as None.

EXTERNAL_STATED = [
    ("GoogleCloudPlatform__PerfKitBenchmarker__tests_data_fio_fio-parser-sample-result.json",
     "2.1.4", 0, 133),
    ("distributed-system-analysis__pbench__agent_tool-scripts_postprocess_samples_fio-0_result_"
     "reference-result_fio-result.txt", "2.2.5", 10984.92, 0),
    ("distributed-system-analysis__pbench__agent_tool-scripts_postprocess_samples_perf-fio-0_"
     "result_reference-result_fio-result.txt", "3.19", 96.779410, 96.729827),
    ("henrikingo__dsi__bin_tests_unittest-files_fio-unittest_fio-centos.json",
     "3.7", 501.449275, 539.130435),
    ("louwrentius__fio-plot__example_data01_randread-01.json", "2.18-59-g618e", 73.184143, 0),
    ("louwrentius__fio-plot__benchmark_data_FLOPPY_random_randread-1-1.json",
     "3.1", 2.657297, 0),
    ("louwrentius__fio-plot__benchmark_data_HPMICROSERVERG8_SATA300_INTELD3S4610_"
     "randwrite-1-1.json", "3.14-6-g97134", 0, 17234.779420),
    ("louwrentius__fio-plot__benchmark_data_SERVER_HIGHPOINT_RAID5_RW_randrw-1-1.json",
     "3.16", 25.246234, 26.442108),
    ("louwrentius__fio-plot__ceph-ssd-goed_randwrite-1-1.json", "3.6-31-g4386", 0, 90.278819),
    ("louwrentius__fio-plot__deleteme_fio_4k_randread-1-1.json", "3.34", 10102.601156, 0),
    ("longhorn__kbench__fio-results_samsung_850_PRO_raw-block.json", "3.16", 98243.437828, 0),
    ("bensonjohnson__FIO-tests__fio.json", "3.33", 7662.030309, 39338.066766),
    ("BrahiamAcosta__SO-Kernel-trace-extraction__fio_output.json", "3.36", 3266.695555, 0),
    ("Arau__fio-results-tmp__longterm-tests_bench-results_t1-reads_reads-100-2",
     "3.12", 462.849170, 0),
    ("Arau__fio-results-tmp__longterm-tests_bench-results_t1-rand_out-rand-50rw32k.fio-0",
     "3.12", 225.893944, 224.677039),
    ("microsoft__VirtualClient__src_VirtualClient_TestResources_Results_FIO_ReadWrite.json",
     "3.26-19-ge7e53", 569.699415, 256.606819),
    ("microsoft__VirtualClient__src_VirtualClient_VirtualClient.Actions.UnitTests_Examples_"
     "FIOExample.txt", "3.26", 0, 2167.231601),
    ("whitepau__fio-benchmark-public__qd_time_sweep_workstation.json", "3.28", 76054.844516, 0),
    ("signcl__fio-benchmark__randread_bj_2G_json_results_randread-4096k_1-proc-randread-4096k-1"
     ".json", "3.28", 24.450366, 0),
    ("styliteag__fio-analyzer__scripts_tests_fixtures_fio_client_2clients.json",
     "3.43", 2224520.0, 0),
    ("styliteag__fio-analyzer__scripts_tests_fixtures_fio_client_1client.json",
     "3.43", 2161519.0, 0),
]  # fmt: skip

TEXT_OUTPUTS = [
    "chris-sanders__ceph-fio-results__bluestore_erasure2.1_randread-1M.out",
    "jtulak__fio-parser__fio-test.out",
    "kangeek__fio-bench-disks-ceph__ceph_2hdd_cephfs.2.log",
]


def stated_entry(out: FioOutput) -> JobResult:
    """The entry SOURCES.md quotes: jobs[0], or "All clients" / client_stats[0]."""
    if out.client_mode:
        for job in out.jobs:
            if job.jobname == ALL_CLIENTS:
                return job
    return out.jobs[0]


def check_iops(direction: DirectionResult | None, stated: float) -> None:
    if stated == 0:
        assert direction is None, "a direction without IO must be None, not zeros"
    else:
        assert direction is not None
        assert direction.iops == stated


def test_every_external_file_is_accounted_for() -> None:
    listed = {name for name, *_ in EXTERNAL_STATED} | set(TEXT_OUTPUTS)
    present = {p.name for p in EXTERNAL.iterdir() if p.name != "SOURCES.md"}
    assert present == listed
    sources = (EXTERNAL / "SOURCES.md").read_text()
    assert all(f"`{name}`" in sources for name in present)


@pytest.mark.parametrize(("name", "version", "read_iops", "write_iops"), EXTERNAL_STATED)
def test_external_fixture_yields_stated_iops(
    name: str, version: str, read_iops: float, write_iops: float
) -> None:
    out = load(EXTERNAL / name)
    assert out.fio_version == version
    entry = stated_entry(out)
    check_iops(entry.read, read_iops)
    check_iops(entry.write, write_iops)
    expected_unit = "us" if version.startswith("2.") else "ns"
    assert out.latency_unit == expected_unit


@pytest.mark.parametrize("name", TEXT_OUTPUTS)
def test_text_and_terse_outputs_are_rejected_naming_the_file(name: str) -> None:
    path = EXTERNAL / name
    with pytest.raises(FioOutputError) as info:
        parse_fio_output(path.read_text(), str(path))
    assert str(path) in info.value.message
    assert "holds no fio JSON output" in info.value.message
    assert "first bytes:" in info.value.message


# -- fio 2.x units -----------------------------------------------------------------------

PKB = EXTERNAL / EXTERNAL_STATED[0][0]
PBENCH_2 = EXTERNAL / EXTERNAL_STATED[1][0]


def test_fio2_latencies_are_converted_from_microseconds() -> None:
    raw = raw_report(PKB)["jobs"][0]["write"]
    write = load(PKB).jobs[0].write
    assert write is not None and write.clat is not None and write.lat is not None
    assert write.clat.mean_ns == pytest.approx(raw["clat"]["mean"] * 1000)  # 477734.84 us
    assert write.clat.min_ns == 189263 * 1000
    assert write.lat.max_ns == raw["lat"]["max"] * 1000
    assert write.clat.percentile(99.0) == raw["clat"]["percentile"]["99.000000"] * 1000
    assert write.clat.bins == {}


def test_fio2_io_bytes_held_kib() -> None:
    # 2.x io_bytes is KiB: bw (KiB/s) * runtime (ms) / 1000 == io_bytes.
    raw = raw_report(PBENCH_2)["jobs"][0]["read"]
    assert raw["bw"] * raw["runtime"] / 1000 == pytest.approx(raw["io_bytes"], rel=1e-5)
    read = load(PBENCH_2).jobs[0].read
    assert read is not None
    assert read.io_bytes == raw["io_bytes"] * 1024
    assert read.total_ios == 329152
    assert read.clat is not None and read.clat.min_ns == 301_000


def test_fio_3_1_io_bytes_are_bytes_although_bw_bytes_is_missing() -> None:
    # bw_bytes arrived in 3.2, io_kbytes (and io_bytes in bytes) in 2.21: a missing bw_bytes
    # does not mean KiB.
    path = EXTERNAL / "louwrentius__fio-plot__benchmark_data_FLOPPY_random_randread-1-1.json"
    raw = raw_report(path)["jobs"][0]["read"]
    assert "bw_bytes" not in raw
    read = load(path).jobs[0].read
    assert read is not None
    assert read.io_bytes == raw["io_bytes"] == raw["io_kbytes"] * 1024
    assert read.bw_bytes == pytest.approx(raw["io_bytes"] * 1000 / raw["runtime"])


def test_fio2_percentile_terminator_is_dropped() -> None:
    raw = raw_report(PBENCH_2)["jobs"][0]["read"]["clat"]["percentile"]
    assert raw["0.00"] == 0  # fio 2.x printed its list terminator as a percentile
    read = load(PBENCH_2).jobs[0].read
    assert read is not None and read.clat is not None
    clat = read.clat
    ps = [p for p, _ in clat.percentiles]
    assert ps == sorted(ps) and ps[0] == 1.0 and len(ps) == len(raw) - 1
    assert clat.percentile(99.99) == 7328 * 1000


def test_fio2_jsonplus_bins_are_dropped() -> None:
    text = json.dumps(
        {
            "fio version": "fio-2.20",
            "jobs": [
                {
                    "jobname": "j",
                    "groupid": 0,
                    "error": 0,
                    "read": {
                        "io_bytes": 8,
                        "bw": 8,
                        "iops": 2.0,
                        "runtime": 1000,
                        "total_ios": 2,
                        "clat": {
                            "min": 10,
                            "max": 20,
                            "mean": 15.0,
                            "stddev": 7.07,
                            "percentile": {"50.000000": 10},
                            "bins": {"FIO_IO_U_PLAT_NR": 1216, "10": 1, "20": 1},
                        },
                    },
                }
            ],
        }
    )
    out = parse_fio_output(text)
    read = out.jobs[0].read
    assert out.latency_unit == "us"
    assert read is not None and read.clat is not None
    clat = read.clat
    assert clat.bins == {} and clat.n == 2
    assert clat.percentiles == ((50.0, 10_000.0),)


def test_fio2_missing_values_are_none_not_zero() -> None:
    out = load(PKB)
    assert out.timestamp is None  # fio 2.1.4 printed no timestamp
    job = out.jobs[0]
    assert job.job_runtime_ms is None
    assert job.read is None and job.trim is None  # did no IO
    # 2.1.4 prints no total_ios; fio defines iops = 1000 * total_ios / runtime.
    assert job.write is not None and job.write.total_ios == round(133 * 5314 / 1000)
    assert [j.jobname for j in out.jobs][:2] == ["sequential_write", "sequential_read"]


def test_missing_N_in_older_3x_comes_from_total_ios() -> None:
    path = EXTERNAL / "henrikingo__dsi__bin_tests_unittest-files_fio-unittest_fio-centos.json"
    raw = raw_report(path)["jobs"][0]["read"]
    assert "N" not in raw["clat_ns"]
    read = load(path).jobs[0].read
    assert read is not None and read.clat is not None
    assert read.clat.n == raw["total_ios"] == read.total_ios


# -- shapes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        (
            "louwrentius__fio-plot__deleteme_fio_4k_randread-1-1.json",
            "fio: terminating on signal 2",
        ),
        ("bensonjohnson__FIO-tests__fio.json", "fio: terminating on signal 2"),
        ("Arau__fio-results-tmp__longterm-tests_bench-results_t1-reads_reads-100-2", ">"),
    ],
)
def test_text_before_the_json_is_skipped(name: str, prefix: str) -> None:
    text = (EXTERNAL / name).read_text()
    assert text[: text.index("{")].strip() == prefix
    out = parse_fio_output(text, name)
    assert out.jobs and out.jobs[0].read is not None and out.jobs[0].read.iops > 0


def test_version_string_keeps_everything_after_fio_dash() -> None:
    path = EXTERNAL / EXTERNAL_STATED[6][0]
    assert raw_report(path)["fio version"] == "fio-3.14-6-g97134"
    assert load(path).fio_version == "3.14-6-g97134"


def test_disk_util_is_parsed_and_absent_key_gives_empty() -> None:
    pkb = load(PKB)
    assert len(pkb.disk_util) == 1
    sdb = pkb.disk_util[0]
    assert (sdb.name, sdb.read_ios, sdb.write_ios, sdb.in_queue_ms, sdb.util_pct) == (
        "sdb",
        19464,
        10508,
        2813788,
        97.54,
    )
    deleteme = EXTERNAL / EXTERNAL_STATED[9][0]
    assert "disk_util" not in raw_report(deleteme)
    assert load(deleteme).disk_util == ()


def test_multiple_groups_keep_file_order() -> None:
    path = EXTERNAL / "whitepau__fio-benchmark-public__qd_time_sweep_workstation.json"
    raw = raw_report(path)["jobs"]
    out = load(path)
    assert [j.jobname for j in out.jobs] == [j["jobname"] for j in raw]
    assert len(out.jobs) == 51
    assert [j.groupid for j in out.jobs] == list(range(51))


# -- recorded fio 3.33 outputs -----------------------------------------------------------


def test_recorded_fixtures_come_with_their_evidence() -> None:
    names = sorted(p.name.removesuffix(".meta.json") for p in RECORDED.glob("*.meta.json"))
    assert len(names) >= 7
    for name in names:
        m = meta(name)
        output = m["output"].split(" ", 1)[0].removesuffix(":")
        assert (RECORDED / output).is_file(), "the meta names its file"
        for run in m.get("runs", [m]):  # a concatenation: each run's evidence
            assert run["fio_version"] == "fio-3.33"
            assert run["argv"][0].endswith("fio")
            # the job: its job files, or fio's command line alone (text-cmdline-*)
            assert run["job_files"] or any(a.startswith("--name=") for a in run["argv"])
            assert isinstance(run["exit_code"], int) and run["date"]
        if "runs" in m:
            continue
        formats = next(a for a in m["argv"] if a.startswith("--output-format="))
        if formats in ("--output-format=json", "--output-format=json+"):
            assert (RECORDED / f"{name}.json").is_file()
            assert recorded(name).fio_version == "3.33"
        else:  # fio's text formats, with or without JSON of the same run
            assert (RECORDED / f"{name}.out").is_file()
            assert not (RECORDED / f"{name}.json").exists()


def test_status_interval_yields_the_final_cumulative_report() -> None:
    text = (RECORDED / "status-interval-jsonplus.json").read_text()
    snapshots = iter_json_objects(text)
    assert len(snapshots) >= 3  # --status-interval=1 over 3 s
    sizes = [s["jobs"][0]["read"]["io_bytes"] for s in snapshots]
    assert sizes == sorted(sizes)  # cumulative
    read = parse_fio_output(text).jobs[0].read
    assert read is not None
    assert read.io_bytes == max(sizes) == snapshots[-1]["jobs"][0]["read"]["io_bytes"]
    assert read.runtime_ms == snapshots[-1]["jobs"][0]["read"]["runtime"]


def test_truncated_final_report_is_an_error_not_a_silent_snapshot() -> None:
    text = (RECORDED / "status-interval-jsonplus.json").read_text()
    cut = text[: text.rindex('"fio version"') + 400]
    with pytest.raises(FioOutputError, match="incomplete") as info:
        parse_fio_output(cut, "si.json")
    assert info.value.message.startswith("si.json:")


def test_truncated_single_report_is_no_report() -> None:
    text = (RECORDED / "seqread-1m-json.json").read_text()
    with pytest.raises(FioOutputError, match="holds no fio JSON output"):
        parse_fio_output(text[: len(text) // 2], "half.json")


def test_error_fixture_carries_errno_22() -> None:
    assert meta("error-einval-direct-bs1000")["exit_code"] == 1
    out = recorded("error-einval-direct-bs1000")
    job = out.jobs[0]
    assert job.error == 22  # EINVAL: O_DIRECT read of 1000 bytes
    # The failed IO is counted (total_ios 1) but moved no bytes and has no latency.
    assert job.read is not None
    assert (job.read.io_bytes, job.read.total_ios, job.read.clat) == (0, 1, None)
    assert job.write is None and job.trim is None


def test_sync_engine_slat_is_none() -> None:
    read = recorded("psync-randrw-fsync-jsonplus").jobs[0].read
    assert read is not None
    assert read.slat is None  # psync reports slat N = 0
    assert read.clat is not None and read.lat is not None and read.lat.n == read.clat.n


def test_plain_json_has_percentiles_but_no_bins() -> None:
    read = recorded("seqread-1m-json").jobs[0].read
    assert read is not None and read.clat is not None
    assert read.clat.bins == {}
    assert len(read.clat.percentiles) == 17  # fio's default list
    assert read.io_bytes == read.total_ios * (1 << 20)


def test_group_reporting_gives_one_entry() -> None:
    out = recorded("numjobs2-group-reporting-randwrite-jsonplus")
    assert len(out.jobs) == 1
    write = out.jobs[0].write
    assert write is not None and write.clat is not None
    assert sum(write.clat.bins.values()) == write.clat.n


# -- client mode -------------------------------------------------------------------------


def client_ports(name: str) -> list[int]:
    return [int(a.rsplit(",", 1)[1]) for a in meta(name)["argv"] if a.startswith("--client=")]


def test_client_mode_yields_hostnames_and_ports() -> None:
    name = "client-server-2-jsonplus"
    text = (RECORDED / f"{name}.json").read_text()
    assert text.startswith("<vm> ")  # server text lands in the output file before the JSON
    out = parse_fio_output(text, name)
    assert out.client_mode
    clients = [j for j in out.jobs if j.jobname != ALL_CLIENTS]
    assert {j.hostname for j in clients} == {"127.0.0.1"}
    assert sorted(j.port for j in clients if j.port is not None) == sorted(client_ports(name))
    totals = [j for j in out.jobs if j.jobname == ALL_CLIENTS]
    assert len(totals) == 1
    assert totals[0].read is not None
    assert totals[0].read.io_bytes == sum(j.read.io_bytes for j in clients if j.read)


def test_client_mode_duplicate_keys_keep_the_last() -> None:
    text = (RECORDED / "client-server-2-jsonplus.json").read_text()
    # fio 3.33 writes both servers' global options into one object: keys repeat.
    values = re.findall(r'"filename" : "(cs\d\.bin)"', text)
    assert sorted(values) == ["cs1.bin", "cs2.bin"]
    (report,) = iter_json_objects(text)
    assert report["global options"]["filename"] == values[-1]


def test_client_mode_3_43_global_options_list_and_ports() -> None:
    out = load(
        EXTERNAL / "styliteag__fio-analyzer__scripts_tests_fixtures_fio_client_2clients.json"
    )
    assert out.client_mode and out.fio_version == "3.43"
    assert [(j.jobname, j.port) for j in out.jobs] == [
        ("test", 18802),
        ("test", 18801),
        (ALL_CLIENTS, 18801),
    ]
    assert out.disk_util == ()


def test_client_numjobs_without_group_reporting_keeps_both_jobs() -> None:
    # Two client_stats entries share hostname, port, jobname and groupid: not snapshots.
    out = recorded("client-numjobs2-no-group-reporting-json")
    names = [j.jobname for j in out.jobs]
    assert names == ["nj", "nj", ALL_CLIENTS]
    total = out.jobs[2].read
    assert total is not None
    assert total.io_bytes == sum(j.read.io_bytes for j in out.jobs[:2] if j.read)


def test_client_status_interval_keeps_the_final_round_only() -> None:
    name = "client-status-interval-numjobs2-json"
    raw = raw_report(RECORDED / f"{name}.json")["client_stats"]
    names = [e["jobname"] for e in raw]
    # fio 3.33 appends every interim snapshot; "All clients" follows the first round only.
    assert names[:3] == ["si", "si", ALL_CLIENTS] and len(names) > 5
    assert ALL_CLIENTS not in names[3:]
    out = recorded(name)
    assert [j.jobname for j in out.jobs] == ["si", "si"]  # the stale interim sum is dropped
    final = [e["read"]["io_bytes"] for e in raw[-2:]]
    assert [j.read.io_bytes for j in out.jobs if j.read] == final
    assert all(j.job_runtime_ms == raw[-1]["job_runtime"] for j in out.jobs)
    assert min(final) > max(e["read"]["io_bytes"] for e in raw[:2])


def _entry(name: str, client: str, snapshot: int) -> JobResult:
    """A client_stats entry: job ``name`` of ``client`` (``a``, ``b``; ``all`` for 'All
    clients'), its ``snapshot``-th report (its job_runtime_ms tells which)."""
    host = {"a": ("10.0.0.1", 8765), "b": ("10.0.0.2", 8765), "all": ("10.0.0.2", 8765)}
    job = recorded("client-numjobs2-no-group-reporting-json").jobs[0]
    hostname, port = host[client]
    return dataclasses.replace(
        job, jobname=ALL_CLIENTS if client == "all" else name, hostname=hostname, port=port,
        job_runtime_ms=snapshot,
    )  # fmt: skip


def _kept(*entries: tuple[str, str, int]) -> list[tuple[str, str | None, int | None]]:
    """What the parser keeps of client_stats entries (name, client, snapshot), each as
    (jobname, hostname, snapshot)."""
    jobs = [_entry(*e) for e in entries]
    return [(j.jobname, j.hostname, j.job_runtime_ms) for j in _final_client_entries(jobs)]


A, B = "10.0.0.1", "10.0.0.2"


def test_the_final_round_of_several_clients_is_kept_in_fios_order() -> None:
    """--status-interval to two servers (fio 3.33): 'All clients' after the first round
    (an interim sum, dropped), then one report a round from each; a final 'All clients'
    last is the run's total and kept. A plain run keeps its entries as fio wrote them,
    two jobs of each client interleaved."""
    rounds = [("x", "a", 1), ("y", "a", 1), ("x", "b", 1), ("all", "all", 1)]
    rounds += [("x", "a", 2), ("y", "a", 2), ("x", "b", 2)]
    rounds += [("x", "a", 3), ("y", "a", 3), ("x", "b", 3)]
    assert _kept(*rounds, ("all", "all", 3)) == [
        ("x", A, 3), ("y", A, 3), ("x", B, 3), (ALL_CLIENTS, B, 3)
    ]  # fmt: skip
    assert _kept(*rounds) == [("x", A, 3), ("y", A, 3), ("x", B, 3)]
    # A round not yet complete for b: each client's own last round.
    assert _kept(*rounds[:-1]) == [("x", A, 3), ("y", A, 3), ("x", B, 2)]
    # One job a client: the interim sum is dropped all the same.
    one = [("x", "a", 1), ("x", "b", 1), ("all", "all", 1), ("x", "a", 2), ("x", "b", 2)]
    assert _kept(*one) == [("x", A, 2), ("x", B, 2)]
    plain = [("x", "a", 1), ("x", "b", 1), ("y", "a", 1), ("y", "b", 1), ("all", "all", 1)]
    assert _kept(*plain) == [(n, {"a": A, "b": B}.get(c), 1) if c != "all" else
                             (ALL_CLIENTS, B, 1) for n, c, _ in plain]  # fmt: skip


def test_a_client_first_heard_after_the_interim_sum_falls_back_to_the_last_reports() -> None:
    """b's first report came after 'All clients' (not seen from fio 3.33): the last
    report of each job of each client, the interim sum among them, not a crash."""
    entries = [("x", "a", 1), ("all", "all", 1), ("x", "a", 2), ("x", "b", 2), ("x", "b", 3)]
    assert _kept(*entries) == [("x", A, 2), (ALL_CLIENTS, B, 1), ("x", B, 3)]


# -- the scanner -------------------------------------------------------------------------


def test_iter_json_objects_skips_garbage_between_objects() -> None:
    text = (
        "note: both iodepth >= 1 and synchronous I/O engine are selected\n"
        "fio: weird {brace in a message\n"
        '>{"a": {"nested": 1}}\n\n'
        "fio: terminating on signal 2\n"
        '{"b": 2}{"c": [1, {"d": 4}]}\n'
        "[1, 2] trailing text {"
    )
    assert iter_json_objects(text) == [{"a": {"nested": 1}}, {"b": 2}, {"c": [1, {"d": 4}]}]


def test_iter_json_objects_tolerates_duplicate_keys() -> None:
    assert iter_json_objects('{"k": 1, "k": 2}') == [{"k": 2}]


def test_parse_picks_the_last_report_not_the_last_object() -> None:
    first = (RECORDED / "seqread-1m-json.json").read_text()
    text = first + '\n{"unrelated": true}\n'
    assert parse_fio_output(text).jobs[0].jobname == "seqread"


def test_wrong_types_are_reported_with_where() -> None:
    bad = json.dumps({"jobs": [{"jobname": "x", "groupid": 0, "error": "boom"}]})
    with pytest.raises(FioOutputError, match=r"bad\.json: jobs\[0\] \('x'\): 'error'"):
        parse_fio_output(bad, "bad.json")


def test_empty_input_is_described() -> None:
    with pytest.raises(FioOutputError, match=r"empty\.json holds no fio JSON.*\(empty\)"):
        parse_fio_output("", "empty.json")
