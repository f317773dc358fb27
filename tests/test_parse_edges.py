"""fio/parse.py at its edges: every field it reads, what it makes of each, and every refusal
in its exact words (which report, which job, which field). Small reports written here as
fio lays them out (FIO.md §1), each changed in one place; the recorded steady-state run is
real fio's (tests/data/fio-outputs/recorded). Issue 27, point 4: the mutation score of the
parser (bench/README.md, "Mutation testing")."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from iobench.errors import FioOutputError
from iobench.fio.parse import NUMBER_MAX, _io_bytes_is_kib, parse_fio_output
from iobench.model import FioOutput, JobResult, SteadyState

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"
SOURCE = "run.json"


def latency(n: int = 100, **extra: Any) -> dict[str, Any]:
    return {"min": 10, "max": 90, "mean": 50.0, "stddev": 5.0, "N": n, **extra}


def direction(**extra: Any) -> dict[str, Any]:
    """A read of 100 IOs of 4 KiB in 1 s, as fio 3.33 writes it."""
    d: dict[str, Any] = {
        "io_bytes": 409600,
        "io_kbytes": 400,
        "bw_bytes": 409600,
        "bw": 400,
        "iops": 100.0,
        "runtime": 1000,
        "total_ios": 100,
        "slat_ns": latency(),
        "clat_ns": latency(),
        "lat_ns": latency(),
    }
    d.update(extra)
    return d


def job(**extra: Any) -> dict[str, Any]:
    j: dict[str, Any] = {"jobname": "j", "groupid": 0, "error": 0, "read": direction()}
    j.update(extra)
    return j


def report(*jobs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    r: dict[str, Any] = {"fio version": "fio-3.33", "timestamp": 1764600000}
    r["jobs"] = list(jobs) or [job()]
    r.update(extra)
    return r


def parse(doc: dict[str, Any], source: str = SOURCE) -> FioOutput:
    return parse_fio_output(json.dumps(doc), source)


def only_job(doc: dict[str, Any]) -> JobResult:
    (j,) = parse(doc).jobs
    return j


def refused(doc: dict[str, Any]) -> str:
    with pytest.raises(FioOutputError) as e:
        parse(doc)
    return e.value.message


# -- the report and its source ---------------------------------------------------------


def test_messages_name_the_source_given_or_fio_output_by_default() -> None:
    bad = json.dumps(report(job(error="x")))
    with pytest.raises(FioOutputError) as e:
        parse_fio_output(bad)
    assert e.value.message.startswith("<fio output>: jobs[0] ('j'): 'error' should be a number")
    assert refused(report(job(error="x"))).startswith("run.json: jobs[0] ('j'): 'error'")


def test_the_objects_already_found_are_the_ones_read() -> None:
    """``objects``: what scan_objects found in the text, when the caller has it."""
    from iobench.jsontext import scan_objects

    one, other = json.dumps(report()), json.dumps(report(job(jobname="other")))
    objects = scan_objects(other)
    assert [j.jobname for j in parse_fio_output(one, SOURCE, objects=objects).jobs] == ["other"]


def test_the_version_and_time_are_fios() -> None:
    out = parse(report())
    assert (out.fio_version, out.timestamp, out.client_mode) == ("3.33", 1764600000, False)
    assert parse(report(**{"fio version": 3})).fio_version is None  # not text: unknown
    assert refused(report(timestamp=4_102_444_801)) == (
        "run.json: top level: 'timestamp' 4102444801 is not a time before 2100"
    )
    assert parse(report(timestamp=4_102_444_800)).timestamp == 4_102_444_800


# -- a job --------------------------------------------------------------------------------


def test_a_job_is_read_field_by_field() -> None:
    j = only_job(report(job(usr_cpu=12.5, sys_cpu=30.0, job_runtime=1001, hostname="h", port=80)))
    assert (j.jobname, j.groupid, j.error) == ("j", 0, 0)
    assert (j.usr_cpu_pct, j.sys_cpu_pct, j.job_runtime_ms) == (12.5, 30.0, 1001)
    assert (j.hostname, j.port) == ("h", 80)
    assert j.write is None and j.trim is None and j.read is not None
    assert only_job(report(job(hostname=7))).hostname is None  # not text: no host
    assert j.steadystate is None


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"jobname": 3}, "jobs[0]: has no 'jobname'"),
        ({"error": None}, "jobs[0] ('j'): 'error' is missing"),
        ({"groupid": None}, "jobs[0] ('j'): 'groupid' is missing"),
        ({"error": 65536}, "jobs[0] ('j'): 'error' 65536 is not an error number fio reports"),
        ({"port": 65536}, "jobs[0] ('j'): 'port' 65536 is not a port number"),
        ({"usr_cpu": -1}, "jobs[0] ('j'): 'usr_cpu' is -1, below 0: fio never reports that"),
        ({"job_runtime": 1.5}, "jobs[0] ('j'): 'job_runtime' should be an integer, not 1.5"),
    ],
)
def test_a_job_s_fields_are_refused_by_name_and_place(change: dict[str, Any], said: str) -> None:
    assert refused(report(job(**change))) == f"run.json: {said}"


def test_a_job_that_is_no_object_is_refused() -> None:
    assert refused(report(*[["j"]])) == "run.json: jobs[0]: should be an object"  # type: ignore[arg-type]


def test_the_limits_of_a_job_s_numbers() -> None:
    assert only_job(report(job(error=65535, port=65535))).port == 65535
    assert only_job(report(job(error=65535))).error == 65535


def test_one_mixed_direction_is_refused_saying_what_to_do() -> None:
    mixed = job(mixed=direction())
    del mixed["read"]
    with pytest.raises(FioOutputError) as e:
        parse(report(mixed))
    assert e.value.message == (
        "run.json: jobs[0] ('j') holds one 'mixed' direction (unified_rw_reporting=mixed) "
        "instead of read, write and trim"
    )
    assert e.value.hint == (
        "iobench keeps reads and writes apart: import the output of a run without "
        "unified_rw_reporting (or with unified_rw_reporting=both)"
    )
    # beside read, write and trim (unified_rw_reporting=both) it is left aside
    assert only_job(report(job(mixed=direction()))).read is not None


# -- a direction ------------------------------------------------------------------------


def test_a_direction_is_read_field_by_field() -> None:
    d = only_job(report(job(read=direction(slat_ns=latency(7))))).read
    assert d is not None
    assert (d.io_bytes, d.bw_bytes, d.iops, d.total_ios, d.runtime_ms) == (
        409600, 409600, 100.0, 100, 1000
    )  # fmt: skip
    assert d.slat is not None and d.slat.n == 7
    assert d.clat is not None and d.lat is not None and d.completions == 100


@pytest.mark.parametrize("missing", ["io_bytes", "runtime", "iops"])
def test_a_direction_needs_its_counts(missing: str) -> None:
    d = direction()
    del d[missing]
    assert refused(report(job(read=d))) == (
        "run.json: jobs[0] ('j').read: needs 'io_bytes', 'runtime' and 'iops'"
    )


def test_bandwidth_is_fios_or_made_as_fio_makes_it() -> None:
    """Before fio 3.2 there is no bw_bytes: io_bytes over the runtime, else bw (KiB/s)."""
    d = direction(io_bytes=409600, bw=300)
    del d["bw_bytes"]
    got = only_job(report(job(read=d))).read
    assert got is not None and got.bw_bytes == 409600  # 1000 * io_bytes / runtime
    d = direction(runtime=0, bw=300)
    del d["bw_bytes"]
    got = only_job(report(job(read=d))).read
    assert got is not None and got.bw_bytes == 300 * 1024
    del d["bw"]
    assert refused(report(job(read=d))) == (
        "run.json: jobs[0] ('j').read: has neither 'bw_bytes' nor 'bw'"
    )
    assert refused(report(job(read=direction(bw_bytes="x")))) == (
        "run.json: jobs[0] ('j').read: 'bw_bytes' should be a number, not 'x'"
    )
    assert refused(report(job(read=direction(bw="x")))) == (
        "run.json: jobs[0] ('j').read: 'bw' should be a number, not 'x'"
    )


def test_a_direction_that_moved_nothing_is_none_and_total_ios_is_made_when_missing() -> None:
    idle = direction(io_bytes=0, io_kbytes=0, total_ios=0, bw_bytes=0, bw=0, iops=0.0)
    assert only_job(report(job(read=idle))).read is None
    d = direction(iops=250.0, runtime=2000)
    del d["total_ios"]  # fio 2.1: iops = 1000 * total_ios / runtime
    got = only_job(report(job(read=d))).read
    assert got is not None and got.total_ios == 500


def test_each_latency_is_read_with_the_place_it_is_said_at() -> None:
    for kind in ("slat_ns", "clat_ns", "lat_ns"):
        d = direction(**{kind: latency(mean="x")})
        assert refused(report(job(read=d))) == (
            f"run.json: jobs[0] ('j').read.{kind}: 'mean' should be a number, not 'x'"
        )


# -- io_bytes in KiB (fio before 2.21) ------------------------------------------------------


def test_io_bytes_are_kib_only_without_io_kbytes_and_bw_bytes() -> None:
    assert not _io_bytes_is_kib({"io_kbytes": 1}, 400, 400, 1000)
    assert not _io_bytes_is_kib({"bw_bytes": 1}, 400, 400, 1000)
    # no bandwidth or no runtime to compare with: the old layout
    assert _io_bytes_is_kib({}, 409600, None, 1000)
    assert _io_bytes_is_kib({}, 409600, 0, 1000)
    assert _io_bytes_is_kib({}, 409600, 400, 0)
    # bw 400 KiB/s over 1 s is 400 KiB: io_bytes 400 is KiB, 409600 is bytes
    assert _io_bytes_is_kib({}, 400, 400, 1000)
    assert not _io_bytes_is_kib({}, 409600, 400, 1000)
    # split at 32 times the KiB figure: 12800 for 400 KiB
    assert _io_bytes_is_kib({}, 12799, 400, 1000)
    assert not _io_bytes_is_kib({}, 12800, 400, 1000)
    # tiny bandwidths and runtimes still compare (not "no bandwidth")
    assert _io_bytes_is_kib({}, 1, 0.5, 1000) and not _io_bytes_is_kib({}, 1024, 1, 1)
    assert not _io_bytes_is_kib({}, 32, 1, 1000)
    assert _io_bytes_is_kib({}, 31, 1, 1000)


def test_kib_io_bytes_are_multiplied_when_read() -> None:
    d = direction(io_bytes=400, bw=400)
    del d["io_kbytes"], d["bw_bytes"]
    got = only_job(report(job(read=d))).read
    assert got is not None and got.io_bytes == 400 * 1024 and got.bw_bytes == 409600


# -- latencies, percentiles and bins ----------------------------------------------------------


def test_microseconds_of_old_fio_are_nanoseconds_here() -> None:
    d = direction()
    for k in ("slat_ns", "clat_ns", "lat_ns"):
        del d[k]
    d["clat"] = {"min": 1, "max": 9, "mean": 5.0, "stddev": 1.0, "percentile": {"50.00": 4}}
    out = parse(report(job(read=d)))
    read = out.jobs[0].read
    assert read is not None and read.clat is not None
    assert (read.clat.min_ns, read.clat.max_ns, read.clat.mean_ns) == (1000, 9000, 5000)
    assert read.clat.stddev_ns == 1000 and read.clat.percentiles == ((50.0, 4000.0),)
    assert read.clat.n == 100  # no N: total_ios
    assert out.latency_unit == "us" and read.lat is None and read.completions is None
    assert parse(report()).latency_unit == "ns"
    d["clat"]["mean"] = "x"
    assert refused(report(job(read=d))) == (
        "run.json: jobs[0] ('j').read.clat: 'mean' should be a number, not 'x'"
    )


def test_a_latency_fio_never_sampled_is_none() -> None:
    zeros = {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0}  # fio 3.16: no N
    read = only_job(report(job(read=direction(slat_ns=zeros)))).read
    assert read is not None and read.slat is None
    read = only_job(report(job(read=direction(slat_ns=latency(0))))).read
    assert read is not None and read.slat is None
    half = {"min": 0, "max": 0, "mean": 0.0}  # not a latency object iobench reads
    read = only_job(report(job(read=direction(slat_ns=half)))).read
    assert read is not None and read.slat is None
    no_n = {"min": 0, "max": 2, "mean": 1.0, "stddev": 0.5}
    read = only_job(report(job(read=direction(slat_ns=no_n)))).read
    assert read is not None and read.slat is not None and read.slat.n == 100  # total_ios


def test_percentiles_are_sorted_and_fio_2_s_terminator_dropped() -> None:
    pct = {"99.000000": 80, "50.000000": 40, "100.000000": 90, "0.00": 0}
    read = only_job(report(job(read=direction(clat_ns=latency(percentile=pct))))).read
    assert read is not None and read.clat is not None
    assert read.clat.percentiles == ((50.0, 40.0), (99.0, 80.0), (100.0, 90.0))
    assert read.clat.percentile(99.0) == 80.0


@pytest.mark.parametrize(
    ("pct", "said"),
    [
        ({"median": 4}, "percentile key 'median' is not a number"),
        ({"50.00": "4"}, "percentile 50.00 should be a latency, not '4'"),
        ({"50.00": True}, "percentile 50.00 should be a latency, not True"),
        ({"50.00": -1}, "percentile 50.00 should be a latency, not -1"),
    ],
)
def test_percentiles_are_refused_by_key(pct: dict[str, Any], said: str) -> None:
    d = direction(clat_ns=latency(percentile=pct))
    assert refused(report(job(read=d))) == f"run.json: jobs[0] ('j').read.clat_ns: {said}"


def test_a_percentile_of_zero_latency_is_kept() -> None:
    read = only_job(report(job(read=direction(clat_ns=latency(percentile={"1.0": 0}))))).read
    assert read is not None and read.clat is not None and read.clat.percentiles == ((1.0, 0.0),)


def test_bins_are_counts_by_latency_and_fio_s_other_keys_are_skipped() -> None:
    bins = {"1000": 3, "2000": 0, "FIO_IO_U_PLAT_BITS": 6, "3000": 2, "²": 1}
    read = only_job(report(job(read=direction(clat_ns=latency(5, bins=bins))))).read
    assert read is not None and read.clat is not None
    assert dict(read.clat.bins) == {1000: 3, 2000: 0, 3000: 2}
    no_n = {"min": 1, "max": 9, "mean": 5.0, "stddev": 1.0, "bins": {"1000": 3, "2000": 4}}
    read = only_job(report(job(read=direction(clat_ns=no_n)))).read
    assert read is not None and read.clat is not None and read.clat.n == 7  # the bins' sum
    assert read.completions == 7


@pytest.mark.parametrize(
    ("bins", "said"),
    [
        ({"1000": -1}, "bin 1000 should hold a count, not -1"),
        ({"1000": True}, "bin 1000 should hold a count, not True"),
        ({"1000": 1.5}, "bin 1000 should hold a count, not 1.5"),
        ({"1000": "x" * 100}, "bin 1000 should hold a count, not 'xxxxxxxxxxxxxxxxxxxxxxxx"),
        ({str(2**63): 1}, "bin 9223372036854775808 is not a latency fio's histogram has"),
        ({"0" * 21: 1}, "bin 000000000000000000000 is not a latency fio's histogram has"),
        ({"1" * 30: 1}, "bin 111111111111111111111111 is not a latency fio's histogram has"),
    ],
)
def test_bins_are_refused_by_key(bins: dict[str, Any], said: str) -> None:
    d = direction(clat_ns=latency(bins=bins))
    assert refused(report(job(read=d))).startswith(f"run.json: jobs[0] ('j').read.clat_ns: {said}")


def test_the_largest_bins_fio_could_write_are_read() -> None:
    bins = {str(2**63 - 1): 1, "0" * 19 + "1": 2}  # 20 digits
    read = only_job(report(job(read=direction(clat_ns=latency(3, bins=bins))))).read
    assert read is not None and read.clat is not None
    assert dict(read.clat.bins) == {2**63 - 1: 1, 1: 2}
    text = {"1000": "x" * 100}
    with pytest.raises(FioOutputError) as e:
        parse(report(job(read=direction(clat_ns=latency(bins=text)))))
    # shown, cut at 60 characters: 52 of the text, quoted, and its length
    assert e.value.message.endswith(f"not '{'x' * 52}'... (100 characters)")


def test_old_json_plus_bins_are_dropped() -> None:
    d = direction()
    for k in ("slat_ns", "clat_ns", "lat_ns"):
        del d[k]
    d["clat"] = {"min": 1, "max": 9, "mean": 5.0, "stddev": 1.0, "bins": {"10": 4}}
    read = only_job(report(job(read=d))).read
    assert read is not None and read.clat is not None and dict(read.clat.bins) == {}


def test_completions_are_fio_s_own_count_clat_first() -> None:
    """The N (or the bins) of the completion latency, else of the total latency; none
    when fio gave neither (its N was made from total_ios)."""
    read = only_job(report(job(read=direction(clat_ns=latency(90), lat_ns=latency(80))))).read
    assert read is not None and read.completions == 90
    d = direction(lat_ns=latency(80))
    del d["clat_ns"]
    read = only_job(report(job(read=d))).read
    assert read is not None and read.completions == 80
    no_n = {"min": 1, "max": 9, "mean": 5.0, "stddev": 1.0}
    read = only_job(report(job(read=direction(clat_ns=no_n, lat_ns=no_n)))).read
    assert read is not None and read.completions is None and read.clat is not None
    with_bins = {**no_n, "bins": {"1000": 3}}
    read = only_job(report(job(read=direction(clat_ns=no_n, lat_ns=with_bins)))).read
    assert read is not None and read.completions == 3
    read = only_job(report(job(read=direction(clat_ns=with_bins, lat_ns=latency(8))))).read
    assert read is not None and read.completions == 3


# -- disks ----------------------------------------------------------------------------------


def disk(**extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": "sda", "read_ios": 1, "write_ios": 2, "read_merges": 3, "write_merges": 4,
        "read_ticks": 5, "write_ticks": 6, "in_queue": 7, "util": 8.5,
    }  # fmt: skip
    d.update(extra)
    return d


def test_a_disk_is_read_field_by_field() -> None:
    (d,) = parse(report(disk_util=[disk()])).disk_util
    assert (d.name, d.read_ios, d.write_ios, d.read_merges, d.write_merges) == ("sda", 1, 2, 3, 4)
    assert (d.in_queue_ms, d.util_pct) == (7, 8.5)
    assert parse(report()).disk_util == ()


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        (["sda"], "disk_util[0]: should be an object with a 'name'"),
        ({"util": 1}, "disk_util[0]: should be an object with a 'name'"),
        (disk(name=3), "disk_util[0]: should be an object with a 'name'"),
        (disk(util=None), "disk_util[0] ('sda'): 'util' is missing"),
        (disk(read_ios=None), "disk_util[0] ('sda'): 'read_ios' is missing"),
        (disk(write_ios=None), "disk_util[0] ('sda'): 'write_ios' is missing"),
        (disk(read_merges=None), "disk_util[0] ('sda'): 'read_merges' is missing"),
        (disk(write_merges=None), "disk_util[0] ('sda'): 'write_merges' is missing"),
        (disk(in_queue=None), "disk_util[0] ('sda'): 'in_queue' is missing"),
        (disk(util="x"), "disk_util[0] ('sda'): 'util' should be a number, not 'x'"),
    ],
)
def test_a_disk_s_fields_are_refused_by_name_and_place(entry: object, said: str) -> None:
    assert refused(report(disk_util=[disk(), entry])) == f"run.json: {said}".replace("[0]", "[1]")


def test_disk_util_must_be_a_list() -> None:
    assert refused(report(disk_util={"sda": 1})) == "run.json: disk_util: should be an array"


# -- fio's steady state ---------------------------------------------------------------------


def test_a_real_steady_state_run_is_read_as_fio_wrote_it() -> None:
    text = (RECORDED / "steadystate-iops-jsonplus.json").read_text()
    raw = json.loads(text)["jobs"][0]["steadystate"]
    ss = parse_fio_output(text, "ss.json").jobs[0].steadystate
    assert ss == SteadyState(
        criterion=raw["ss"],
        attained=raw["attained"] == 1,
        duration_s=raw["duration"],
        iops=tuple(float(v) for v in raw["data"]["iops"]),
        bw_bytes=tuple(float(v) for v in raw["data"]["bw"]),
    )
    assert ss.attained and ss.duration_s == 2 and len(ss.iops) == 2
    assert all(abs(v - 500) <= 5 for v in ss.iops)  # rate_iops=500


STEADY = {
    "ss": "iops:5.000000%",
    "duration": 3,
    "attained": 1,
    "data": {"iops": [100, 101.5, 99], "bw": [409600, 415744, 405504]},
}


def steady(**change: Any) -> SteadyState | None:
    ss = copy.deepcopy(STEADY)
    ss.update(change)
    return only_job(report(job(steadystate=ss))).steadystate


def test_fio_s_steady_state_is_read_field_by_field() -> None:
    assert steady() == SteadyState(
        criterion="iops:5.000000%",
        attained=True,
        duration_s=3,
        iops=(100.0, 101.5, 99.0),
        bw_bytes=(409600.0, 415744.0, 405504.0),
    )
    assert steady(attained=0) == SteadyState("iops:5.000000%", False, 3, (100.0, 101.5, 99.0),
                                             (409600.0, 415744.0, 405504.0))  # fmt: skip


def test_what_steady_state_misses_is_empty_or_false() -> None:
    empty = only_job(report(job(steadystate={}))).steadystate
    assert empty == SteadyState(criterion="", attained=False, duration_s=0, iops=(), bw_bytes=())
    got = steady(data=None)
    assert got is not None and got.iops == () and got.bw_bytes == ()
    got = steady(data={"iops": [1, 2]})
    assert got is not None and got.iops == (1.0, 2.0) and got.bw_bytes == ()
    got = steady(data={"bw": [3]})
    assert got is not None and got.iops == () and got.bw_bytes == (3.0,)


@pytest.mark.parametrize(
    "values",
    [
        [1, True],  # a boolean is no figure
        [1, -1],
        [1, 1e19],  # over the largest number iobench takes
        [1, "2"],
        {"1": 2},
        7,
    ],
)
def test_steady_state_figures_that_are_no_figures_are_dropped_whole(values: object) -> None:
    got = steady(data={"iops": values, "bw": values})
    assert got is not None and got.iops == () and got.bw_bytes == ()


def test_steady_state_figures_at_their_bounds_are_kept() -> None:
    got = steady(data={"iops": [0, NUMBER_MAX], "bw": [0.0, 1e18]})
    assert got is not None and got.iops == (0.0, float(NUMBER_MAX))
    assert got.bw_bytes == (0.0, 1e18)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"attained": "yes"}, "'attained' should be a number, not 'yes'"),
        ({"duration": -2}, "'duration' is -2, below 0: fio never reports that"),
        ({"data": [1]}, "'data' should be an object, not list"),
    ],
)
def test_steady_state_fields_are_refused_by_name_and_place(
    change: dict[str, Any], said: str
) -> None:
    ss = {**STEADY, **change}
    assert refused(report(job(steadystate=ss))) == (f"run.json: jobs[0] ('j').steadystate: {said}")


def test_a_steady_state_that_is_no_object_is_refused() -> None:
    assert refused(report(job(steadystate=[1]))) == (
        "run.json: jobs[0] ('j'): 'steadystate' should be an object, not list"
    )


# -- numbers at their bounds, and long values cut short in messages ---------------------------

LONG = "x" * 100
CUT = f"'{'x' * 52}'... (100 characters)"  # what a message shows of LONG (60 characters)


def test_the_largest_number_iobench_takes_is_read() -> None:
    j = only_job(report(job(usr_cpu=NUMBER_MAX, job_runtime=NUMBER_MAX)))
    assert j.usr_cpu_pct == float(NUMBER_MAX) and j.job_runtime_ms == NUMBER_MAX
    assert refused(report(job(usr_cpu=1e19))) == (
        "run.json: jobs[0] ('j'): 'usr_cpu' is 1e+19: more than fio counts or measures"
    )


def test_integers_beyond_53_bits_are_exact_and_whole_floats_are_integers() -> None:
    big = 2**53 + 1  # a float would make it 2**53
    d = direction(io_bytes=big, io_kbytes=big >> 10, runtime=1000.0)
    read = only_job(report(job(read=d))).read
    assert read is not None and read.io_bytes == big and read.runtime_ms == 1000
    assert isinstance(read.runtime_ms, int)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"error": LONG}, f"jobs[0] ('j'): 'error' should be a number, not {CUT}"),
        ({"job_runtime": 1.5, "jobname": LONG}, None),  # the job's name, cut the same way
        ({"sys_cpu": "x"}, "jobs[0] ('j'): 'sys_cpu' should be a number, not 'x'"),
    ],
)
def test_long_values_are_cut_in_messages(change: dict[str, Any], said: str | None) -> None:
    got = refused(report(job(**change)))
    if said is None:
        assert got == f"run.json: jobs[0] ({CUT}): 'job_runtime' should be an integer, not 1.5"
    else:
        assert got == f"run.json: {said}"


def test_an_integer_that_is_not_whole_is_shown_cut() -> None:
    assert refused(report(job(groupid=0.5))) == (
        "run.json: jobs[0] ('j'): 'groupid' should be an integer, not 0.5"
    )
    long_float = 0.1 + 0.2  # repr of 19 characters, under the cut
    assert refused(report(job(groupid=long_float))).endswith(f"not {long_float!r}")


# -- the report's shape -------------------------------------------------------------------------


def test_jobs_must_be_a_list_and_the_time_a_number() -> None:
    assert refused({"jobs": {"j": 1}}) == "run.json: jobs: should be an array, not dict"
    assert refused({"client_stats": "x"}) == "run.json: client_stats: should be an array, not str"
    assert refused(report(timestamp="now")) == (
        "run.json: top level: 'timestamp' should be a number, not 'now'"
    )


def test_a_direction_that_is_no_object_is_refused_by_its_place() -> None:
    for ddir in ("read", "write", "trim"):
        assert refused(report(job(**{ddir: [1]}))) == (
            f"run.json: jobs[0] ('j'): '{ddir}' should be an object, not list"
        )
        assert refused(report(job(**{ddir: direction(iops="x")}))) == (
            f"run.json: jobs[0] ('j').{ddir}: 'iops' should be a number, not 'x'"
        )


def test_writes_and_trims_are_read_as_reads_are() -> None:
    j = only_job(report(job(write=direction(iops=7.0), trim=direction(iops=9.0))))
    assert j.write is not None and j.write.iops == 7.0
    assert j.trim is not None and j.trim.iops == 9.0


def test_a_mixed_direction_beside_a_write_or_a_trim_is_left_aside() -> None:
    for other in ("write", "trim"):
        j = job(mixed=direction(), **{other: direction()})
        del j["read"]
        got = only_job(report(j))
        assert getattr(got, other) is not None and got.read is None


def test_bandwidth_made_from_a_runtime_of_one_millisecond() -> None:
    d = direction(io_bytes=4096, io_kbytes=4, bw=9999, runtime=1)
    del d["bw_bytes"]
    read = only_job(report(job(read=d))).read
    assert read is not None and read.bw_bytes == 4096 * 1000  # from io_bytes, not bw


def test_io_bytes_in_bytes_without_io_kbytes_are_told_by_bw() -> None:
    d = direction(io_bytes=409600, bw=400)  # fio 2.21..3.1: bytes, no bw_bytes yet
    del d["io_kbytes"], d["bw_bytes"]
    read = only_job(report(job(read=d))).read
    assert read is not None and read.io_bytes == 409600


# -- latency objects that are not quite -----------------------------------------------------


@pytest.mark.parametrize("key", ["min", "max", "mean", "stddev"])
def test_a_latency_without_one_of_its_four_figures_is_not_read(key: str) -> None:
    lat = latency()
    del lat[key]
    read = only_job(report(job(read=direction(clat_ns=lat)))).read
    assert read is not None and read.clat is None and read.lat is not None


@pytest.mark.parametrize(
    ("clat", "said"),
    [
        ({"clat_ns": [1]}, "jobs[0] ('j').read: 'clat_ns' should be an object, not list"),
        ({"clat": [1]}, "jobs[0] ('j').read: 'clat' should be an object, not list"),
        ({"clat_ns": latency(bins=[1])}, "jobs[0] ('j').read.clat_ns: 'bins' should be an object"),
        (
            {"clat_ns": latency(percentile=[1])},
            "jobs[0] ('j').read.clat_ns: 'percentile' should be an object",
        ),
    ],
)
def test_latency_parts_that_are_no_objects_are_refused_by_place(
    clat: dict[str, Any], said: str
) -> None:
    d = direction()
    del d["clat_ns"]
    d.update(clat)
    assert refused(report(job(read=d))).startswith(f"run.json: {said}")


def test_percentiles_beyond_100_and_after_fio_2_s_terminator() -> None:
    pct = {"0.00": 0, "100.5": 7, "50.0": 4, "99.9": 8}
    read = only_job(report(job(read=direction(clat_ns=latency(percentile=pct))))).read
    assert read is not None and read.clat is not None
    assert read.clat.percentiles == ((50.0, 4.0), (99.9, 8.0))


def test_long_percentile_keys_and_values_are_cut_in_messages() -> None:
    key = "50." + "0" * 27  # 30 characters, the 50th percentile
    d = direction(clat_ns=latency(percentile={key: LONG}))
    assert refused(report(job(read=d))) == (
        f"run.json: jobs[0] ('j').read.clat_ns: percentile {key[:24]} should be a latency, "
        f"not {CUT}"
    )
    d = direction(clat_ns=latency(percentile={LONG: 1}))
    assert refused(report(job(read=d))) == (
        f"run.json: jobs[0] ('j').read.clat_ns: percentile key {CUT} is not a number"
    )


# -- finding the reports in the text ---------------------------------------------------------


def test_a_text_without_a_report_says_its_first_bytes() -> None:
    from iobench.errors import NoFioReport

    for text, first in [
        ("", "(empty)"),
        ("  \n\t", "(empty)"),
        ("\n  fio: no such file  \n", "'fio: no such file  \\n'"),
        ("y" * 200 + "  ", repr("y" * 120)),
    ]:
        with pytest.raises(NoFioReport) as e:
            parse_fio_output(text, "t.txt")
        assert e.value.message == (
            "t.txt holds no fio JSON output (expected an object with 'jobs' or "
            f"'client_stats'); first bytes: {first}"
        )
        assert e.value.hint == "run fio with --output-format=json or json+"


def test_a_value_fio_never_writes_is_refused_with_its_place_and_why() -> None:
    text = json.dumps(report()).replace('"iops": 100.0', '"iops": 1e999')
    with pytest.raises(FioOutputError) as e:
        parse_fio_output(text, SOURCE)
    assert e.value.message.startswith("run.json: jobs[0].read.iops: 1e999 ")
    assert (
        e.value.hint == "fio never writes that: the file was changed or damaged after fio wrote it"
    )


def test_several_reports_are_each_named_by_their_line() -> None:
    from iobench.fio.parse import fio_reports

    one = json.dumps(report(job(error="x")))
    with pytest.raises(FioOutputError) as e:
        fio_reports(one)
    assert e.value.message.startswith("<fio output>: jobs[0] ('j'): 'error'")  # one: no line
    two = "\n" + json.dumps(report()) + "\nnote\n" + json.dumps(report(job(error="x")))
    with pytest.raises(FioOutputError) as e:
        fio_reports(two, "f.json")
    assert e.value.message.startswith("f.json:4: jobs[0] ('j'): 'error'")
    reports = fio_reports("\n\n" + json.dumps(report()) + "\n" + json.dumps(report()), "f")
    assert [r.line for r in reports] == [3, 4]
    from iobench.jsontext import scan_objects

    other = json.dumps(report(job(jobname="other")))
    (given,) = fio_reports(one, "f", objects=scan_objects(other))
    assert given.output.jobs[0].jobname == "other"


def test_a_report_cut_at_its_end_is_refused() -> None:
    whole = json.dumps(report())
    for text in (whole + '{"fio version": "fio-3.33", "jobs": [', whole + '"fio version"'):
        with pytest.raises(FioOutputError) as e:
            parse_fio_output(text, SOURCE)
        assert e.value.message == (
            f"run.json: the fio report after offset {len(whole)} is incomplete (fio stopped "
            "while writing it); the last complete report is only an interim snapshot"
        )
        assert e.value.hint == "run the benchmark again; keep fio running until it exits"


def test_a_report_that_does_not_end_before_another_is_refused_at_its_line() -> None:
    whole = json.dumps(report())
    cut = '{"fio version": "fio-3.33", "jobs": ['
    # noise with a brace on line 1, the cut report on line 2, complete reports around it
    for text, line in [
        ("{noise}\n" + cut + "\n" + whole, 2),
        (whole + "\n{noise}\n" + cut + "\n" + whole, 3),
        ('"fio version": "fio-3.33"\n' + whole + "\n", 1),  # no brace before it at all
        ("\n\n" + '"fio version"' + whole, 3),
    ]:
        with pytest.raises(FioOutputError) as e:
            parse_fio_output(text, SOURCE)
        assert e.value.message == (
            f"run.json:{line}: a fio report here does not end, or is not JSON as fio writes "
            "it; the reports after it are complete"
        ), text
        assert e.value.hint == (
            "import the file as fio wrote it; a cut or damaged report cannot be told from a "
            "run of its own"
        )
