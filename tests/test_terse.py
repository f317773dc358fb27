"""fio's terse output (versions 3, 4, 5) read by iobench.fio.terse (no fio needed).

Recorded fixtures hold the terse lines and the JSON of the same fio 3.33 run
(scripts/record-fio-outputs, argv beside each in <name>.meta.json): every figure terse
carries must agree with the JSON to the precision terse prints. External fixtures are
other people's runs, provenance in tests/data/fio-outputs/external/SOURCES.md.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from iobench.errors import FioOutputError
from iobench.fio import terse
from iobench.fio.parse import ALL_CLIENTS, NUMBER_MAX, parse_fio_output
from iobench.fio.terse import looks_like_terse, parse_terse_output, terse_reports
from iobench.model import DirectionResult, FioOutput, JobResult, LatencyStats
from iobench.units import shown

DATA = Path(__file__).parent / "data" / "fio-outputs"
RECORDED = DATA / "recorded"
EXTERNAL = DATA / "external"


def text_of(name: str) -> str:
    return (RECORDED / f"{name}.out").read_text()


def terse_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line[:2] in ("3;", "4;", "5;")]


# -- terse against the JSON of the same run ------------------------------------------------


def _agree_latency(t: LatencyStats | None, j: LatencyStats | None, what: str) -> None:
    assert (t is None) == (j is None), what
    if t is None or j is None:
        return
    # fio prints min and max truncated to whole µs, mean and stdev with 6 decimals of µs.
    assert t.min_ns == j.min_ns // 1000 * 1000, what
    assert t.max_ns == j.max_ns // 1000 * 1000, what
    assert abs(t.mean_ns - j.mean_ns) <= 0.5, what
    assert abs(t.stddev_ns - j.stddev_ns) <= 0.5, what
    assert t.bins == {}, "terse has no histogram"


def _agree_percentiles(t: LatencyStats | None, j: LatencyStats | None, what: str) -> None:
    expected = [(p, v // 1000 * 1000) for p, v in j.percentiles] if j else []
    assert list(t.percentiles if t else []) == expected, what


def _agree_direction(t: DirectionResult | None, j: DirectionResult | None, what: str) -> None:
    assert (t is None) == (j is None), what
    if t is None or j is None:
        return
    assert t.io_bytes == j.io_bytes >> 10 << 10, what  # KiB
    assert t.bw_bytes == j.bw_bytes // 1024 * 1024, what  # KiB/s
    assert t.iops == math.floor(j.iops), what
    assert t.runtime_ms == j.runtime_ms, what
    # No IO count in terse: derived from IOPS x runtime, within runtime/2000 IOs.
    assert abs(t.total_ios - j.total_ios) <= t.runtime_ms / 2000 + 1, what
    for kind in ("slat", "clat", "lat"):
        _agree_latency(getattr(t, kind), getattr(j, kind), f"{what} {kind}")


def _agree_job(t: JobResult, j: JobResult, *, lat_percentiles: bool) -> None:
    what = f"{j.jobname} (group {j.groupid})"
    assert (t.jobname, t.groupid, t.error) == (j.jobname, j.groupid, j.error)
    assert t.usr_cpu_pct is not None and j.usr_cpu_pct is not None
    assert t.sys_cpu_pct is not None and j.sys_cpu_pct is not None
    assert abs(t.usr_cpu_pct - j.usr_cpu_pct) <= 5e-7, what
    assert abs(t.sys_cpu_pct - j.sys_cpu_pct) <= 5e-7, what
    for d in ("read", "write", "trim"):
        td, jd = t.direction(d), j.direction(d)
        _agree_direction(td, jd, f"{what} {d}")
        if td is not None and jd is not None:
            # fio's terse percentile fields hold lat's when lat_percentiles=1, else clat's.
            kind = "lat" if lat_percentiles else "clat"
            _agree_percentiles(getattr(td, kind), getattr(jd, kind), f"{what} {d} {kind}")
            other = "clat" if lat_percentiles else "lat"
            assert getattr(td, other) is None or getattr(td, other).percentiles == ()


def _key(job: JobResult) -> tuple[object, ...]:
    """Name, group and KiB moved per direction."""
    moved = [job.direction(d) for d in ("read", "write", "trim")]
    return (job.jobname, job.groupid, *[d.io_bytes >> 10 if d else None for d in moved])


def _agree(t: FioOutput, j: FioOutput, *, lat_percentiles: bool = False) -> None:
    assert t.output_format == "terse" and j.output_format == "json"
    assert t.fio_version == j.fio_version == "3.33"
    assert t.latency_unit == "us", "terse prints µs: microsecond resolution"
    assert t.client_mode == j.client_mode
    assert len(t.jobs) == len(j.jobs)
    unmatched = list(j.jobs)
    for job in t.jobs:  # client mode: terse names no host, so match on the figures
        same = [other for other in unmatched if _key(other) == _key(job)]
        assert same, f"no JSON job for {job.jobname}"
        unmatched.remove(same[0])
        _agree_job(job, same[0], lat_percentiles=lat_percentiles)
    assert len(t.disk_util) == len(j.disk_util)
    for td, jd in zip(t.disk_util, j.disk_util, strict=True):
        assert (td.name, td.read_ios, td.write_ios, td.read_merges, td.write_merges) == (
            jd.name,
            jd.read_ios,
            jd.write_ios,
            jd.read_merges,
            jd.write_merges,
        )
        assert td.in_queue_ms == jd.in_queue_ms
        assert abs(td.util_pct - jd.util_pct) <= 0.005  # %3.2f


@pytest.mark.parametrize(
    ("name", "version", "jobs"),
    [
        ("text-libaio-randread-qd8", 3, 1),
        ("text-psync-randrw-fsync-lat", 4, 1),
        ("text-numjobs2-two-groups", 5, 3),
        ("terse-v5-both-description-coe", 5, 1),
        ("terse-client-server-2", 3, 3),
    ],
)
def test_terse_agrees_with_the_json_of_the_same_run(name: str, version: int, jobs: int) -> None:
    text = text_of(name)
    assert {line.split(";")[0] for line in terse_lines(text)} == {str(version)}
    assert looks_like_terse(text)
    out, report = parse_terse_output(text, name)
    assert len(out.jobs) == jobs
    _agree(out, parse_fio_output(text, name), lat_percentiles=name == "text-psync-randrw-fsync-lat")
    key = "client_stats" if out.client_mode else "jobs"
    assert [(e["jobname"], e["groupid"]) for e in report[key]] == [
        (j.jobname, j.groupid) for j in out.jobs
    ]
    assert report["fio version"] == "fio-3.33"
    assert all(e["job options"] == {} for e in report[key]), "terse holds no options"


def test_lat_percentiles_go_to_lat_when_the_text_shows_the_option() -> None:
    """With lat_percentiles=1, fio 3.33 writes total-latency percentiles in the terse
    fields: the file's normal output ('lat percentiles') and JSON show the option."""
    text = text_of("text-psync-randrw-fsync-lat")
    out, _ = parse_terse_output(text, "psync")
    _agree(out, parse_fio_output(text, "psync"), lat_percentiles=True)
    read = out.jobs[0].read
    assert read is not None and read.lat is not None and read.clat is not None
    assert read.lat.percentile(10.0) == 10_000  # lat's p10 is 10.xx µs, clat's 9.xx µs
    assert read.clat.percentiles == ()
    assert read.slat is None, "psync has no submission latency"
    # The terse line alone does not say which latency it is: taken as clat's, as the
    # HOWTO documents.
    alone, _ = parse_terse_output(terse_lines(text)[0], "psync")
    assert alone.jobs[0].read is not None and alone.jobs[0].read.clat is not None
    assert alone.jobs[0].read.clat.percentiles == read.lat.percentiles


def test_terse_alone() -> None:
    """fio --output-format=terse, the default version 3; figures as the line prints them."""
    text = text_of("terse-only-v3-randwrite")
    assert text.startswith("3;fio-3.33;rw;0;0;0;0;0;0;")
    out, report = parse_terse_output(text, "t.out")
    (job,) = out.jobs
    assert job.read is None and job.trim is None
    w = job.write
    assert w is not None and w.clat is not None and w.lat is not None and w.slat is None
    assert (w.io_bytes, w.bw_bytes, w.iops, w.runtime_ms) == (
        544256 * 1024,
        543712 * 1024,
        135928,
        1001,
    )
    assert (w.clat.min_ns, w.clat.max_ns, w.clat.mean_ns) == (6000, 533000, 7147.286)
    assert w.clat.percentiles[0] == (1.0, 6000) and w.clat.percentiles[-1] == (99.99, 50000)
    assert len(w.clat.percentiles) == 17, "fio's 17 default percentiles, 0%=0 padding skipped"
    assert (w.lat.min_ns, w.lat.mean_ns) == (6000, 7178.416)
    assert (job.usr_cpu_pct, job.sys_cpu_pct) == (9.8, 39.2)
    assert [(d.name, d.write_ios, d.in_queue_ms, d.util_pct) for d in out.disk_util] == [
        ("vda", 121921, 720, 71.41)
    ]
    assert report == {
        "fio version": "fio-3.33",
        "jobs": [{"jobname": "rw", "groupid": 0, "error": 0, "job options": {}}],
    }
    assert out.timestamp is None and job.job_runtime_ms is None, "terse has neither"


def test_description_and_continue_on_error() -> None:
    text = text_of("terse-v5-both-description-coe")
    out, report = parse_terse_output(text, "both")
    (entry,) = report["jobs"]
    json_job = next(iter(parse_fio_output(text, "both").jobs))
    assert entry["desc"] == "read and write, also reported together"
    assert (entry["total_err"], entry["first_error"]) == (0, 0)
    # unified_rw_reporting=both: the 'mixed' direction after read, write and trim is
    # read and not kept, as the JSON parser does.
    assert out.jobs[0].trim is None and out.jobs[0].read is not None
    assert json_job.read is not None


def test_client_mode() -> None:
    """--client: the disk utilisation of each server on a line of its own, an 'All
    clients' line, no host names."""
    out, report = parse_terse_output(text_of("terse-client-server-2"), "cs")
    assert out.client_mode
    assert [j.jobname for j in out.jobs] == ["csjob", "csjob", ALL_CLIENTS]
    assert all(j.hostname is None and j.port is None for j in out.jobs)
    assert [d.name for d in out.disk_util] == ["vda", "vda"]
    assert "client_stats" in report and "jobs" not in report
    everyone = out.jobs[2].read
    assert everyone is not None and everyone.clat is not None
    assert everyone.clat.percentiles == (), "fio 3.33 has no percentiles for All clients"


def _client_lines() -> str:
    """The terse lines of a 2-client run: job, disk, job, disk, 'All clients'."""
    text = text_of("terse-client-server-2")
    return "\n".join(line for line in text.split("\n") if line[:2] == "3;" or line[:5] == ";vda;")


@pytest.mark.parametrize("server", [0, 1])
def test_a_servers_disk_line_over_100_percent_is_refused_with_its_own_line(server: int) -> None:
    lines = _client_lines().split("\n")
    disk = [i for i, line in enumerate(lines) if line.startswith(";vda;")][server]
    lines[disk] = lines[disk].replace(";84.", ";184.")
    with pytest.raises(FioOutputError) as e:
        parse_terse_output("\n".join(lines), "cs.out")
    assert e.value.message.startswith(f"cs.out:{disk + 1}: disk 'vda': util 184."), e.value.message
    assert e.value.message.endswith("%: fio caps it at 100%")


@pytest.mark.parametrize("clients", [2, 1])
def test_a_second_client_run_starts_where_its_command_line_does(clients: int) -> None:
    """The disk lines belong to the run before (with one client, fio ends its lines with
    the disk line: no 'All clients'); a line starting with ';' that is not a disk line
    (nine fields a disk) is not fio's and starts the next run's text with it."""
    first = "\n".join(_client_lines().split("\n")[: 5 if clients == 2 else 2])
    command = "fio --client=10.0.0.1 job.fio --minimal"
    disks = [261078, 262220][:clients]
    for foreign in ("", ";not;a;disk;line\n", ";" + ";".join(["9"] * 9) + "\n"):
        text = f"{first}\n{foreign}{command}\n{first}\n"
        one, two = terse_reports(text, "two.out")
        assert one.start == 0 and two.start == len(first) + 1, foreign
        job_line = first.count("\n") + foreign.count("\n") + 3  # after the command line
        assert two.line == job_line and two.session == 1
        for report in (one, two):  # each server's disk, from its own line
            assert [d.read_ios for d in report.output.disk_util] == disks


def _first_job_line(name: str) -> tuple[list[str], str]:
    """The fields of the first terse line of a recorded output, and its job's name."""
    (line, *_) = terse_lines(text_of(name))
    fields = line.split(";")
    return fields, fields[2]


@pytest.mark.parametrize(
    ("name", "directions"),
    [
        ("terse-only-v3-randwrite", ("read", "write")),
        ("terse-v5-both-description-coe", ("read", "write", "trim")),
    ],
)
@pytest.mark.parametrize(
    ("offset", "value", "said"),
    [
        (2, "12x", "IOPS (field {field}) should be a whole number, not '12x'"),
        (38, "100.01%", "a share of the group's bandwidth of 100.01%: fio caps it at 100%"),
        (
            38,
            "50",
            "share of the group's bandwidth (field {field}) should be a number "
            "with a % sign, not '50'",
        ),
        (39, "1e5", "bandwidth mean (KiB/s) (field {field}) should be a number, not '1e5'"),
        (40, "9" * 20, "bandwidth stdev (KiB/s) (field {field}) is '" + "9" * 20 + "': more than"),
    ],
)
def test_a_bad_field_is_named_with_its_direction_and_place(
    name: str, directions: tuple[str, ...], offset: int, value: str, said: str
) -> None:
    """Every direction's fields are checked, and a refusal says which direction, which
    field (1-based, as `cut -d';' -f` counts) and what is wrong with it."""
    width = 47 if name.startswith("terse-v5") else 41
    for d, direction in enumerate(directions):
        fields, job = _first_job_line(name)
        at = 5 + d * width + offset
        fields[at] = value
        with pytest.raises(FioOutputError) as e:
            parse_terse_output(";".join(fields) + "\n", "t.out")
        where = f"t.out:1: the job '{job}': {direction}: "
        assert e.value.message.startswith(where + said.format(field=at + 1)), e.value.message


@pytest.mark.parametrize("less_kib", [0, 1, 2, 3, 100])
def test_all_clients_is_checked_against_the_servers_sum_within_their_rounding(
    less_kib: int,
) -> None:
    """Each server's line truncates its IO to whole KiB, so the servers may add up to a
    KiB a server more than 'All clients' (two servers: 2 KiB); more than that means a
    server's report is there twice (--status-interval), and the run is refused."""
    lines = _client_lines().split("\n")
    fields = lines[-1].split(";")
    assert fields[2] == ALL_CLIENTS and fields[5] == "1200984"  # read KiB: 602048 + 598936
    fields[5] = str(1200984 - less_kib)
    lines[-1] = ";".join(fields)
    text = "\n".join(lines) + "\n"
    if less_kib <= 2:
        out, _ = parse_terse_output(text, "cs.out")
        assert out.jobs[-1].read is not None
        assert out.jobs[-1].read.io_bytes == (1200984 - less_kib) * 1024
        return
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(text, "cs.out")
    assert e.value.message == (
        "cs.out:1: the servers' terse lines of this client run add up to more read than "
        "its 'All clients' line (line 5): they hold a server's report more than once (fio "
        "--status-interval), and terse lines do not say which server's report is which"
    )
    assert e.value.hint == (
        "import fio's JSON or normal output of the run, or the terse output of a run "
        "without --status-interval"
    )


def test_where_a_report_ends_in_lines_that_repeat() -> None:
    """A standalone job that did IO both ways, its line twice: two snapshots (fio's
    --status-interval), not two jobs. Two client runs back to back: each ends with its
    'All clients' line. In a client run two servers may print the same line: two servers,
    one report."""
    (both,) = terse_lines(text_of("terse-v5-both-description-coe"))
    reports = terse_reports(f"{both}\n{both}\n", "twice.out")
    assert [len(r.output.jobs) for r in reports] == [1, 1]
    assert all(j.read is not None and j.write is not None for r in reports for j in r.output.jobs)

    run = _client_lines()
    reports = terse_reports(f"{run}\n{run}\n", "two-runs.out")
    assert [[j.jobname for j in r.output.jobs] for r in reports] == [
        ["csjob", "csjob", ALL_CLIENTS]
    ] * 2

    lines = run.split("\n")
    fields = lines[-1].split(";")
    fields[5] = str(2 * 602048)  # the 'All clients' sum of two servers with one report
    lines[2], lines[-1] = lines[0], ";".join(fields)
    (report,) = terse_reports("\n".join(lines) + "\n", "same.out")
    assert [j.jobname for j in report.output.jobs] == ["csjob", "csjob", ALL_CLIENTS]
    assert report.output.client_mode


# One direction's fields in fio's documented order (HOWTO, "Terse output"): (what iobench
# calls it, whole number or not); the 20 completion latency percentiles after clat.
_WHOLE, _NUMBER = "a whole number", "a number"
_DIRECTION_FIELDS = [
    ("io (KiB)", _WHOLE), ("bandwidth (KiB/s)", _WHOLE), ("IOPS", _WHOLE),
    ("runtime (ms)", _WHOLE),
    *[(f"{lat} {what} (µs)", _WHOLE if what in ("min", "max") else _NUMBER)
      for lat in ("slat", "clat") for what in ("min", "max", "mean", "stdev")],
    *[("", "a percentile such as '99.000000%=123'")] * 20,
    *[(f"lat {what} (µs)", _WHOLE if what in ("min", "max") else _NUMBER)
      for what in ("min", "max", "mean", "stdev")],
    ("bandwidth min (KiB/s)", _WHOLE), ("bandwidth max (KiB/s)", _WHOLE),
    ("share of the group's bandwidth", "a number with a % sign"),
    ("bandwidth mean (KiB/s)", _NUMBER), ("bandwidth stdev (KiB/s)", _NUMBER),
]  # fmt: skip
_V5_MORE = [
    ("bandwidth samples", _WHOLE), ("IOPS min", _WHOLE), ("IOPS max", _WHOLE),
    ("IOPS mean", _NUMBER), ("IOPS stdev", _NUMBER), ("IOPS samples", _WHOLE),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "directions", "fields"),
    [
        ("terse-only-v3-randwrite", ("read", "write"), _DIRECTION_FIELDS),
        ("terse-v5-both-description-coe", ("read", "write", "trim"), _DIRECTION_FIELDS + _V5_MORE),
    ],
)
def test_every_field_of_every_direction_is_read_where_fio_writes_it(
    name: str, directions: tuple[str, ...], fields: list[tuple[str, str]]
) -> None:
    """Each field, made unreadable in turn, is refused by its own name and place: the
    parser reads every field from where fio's documentation puts it."""
    original, job = _first_job_line(name)
    for d, direction in enumerate(directions):
        for offset, (what, form) in enumerate(fields):
            at = 5 + d * len(fields) + offset
            changed = [*original[:at], "x", *original[at + 1 :]]
            with pytest.raises(FioOutputError) as e:
                parse_terse_output(";".join(changed) + "\n", "t.out")
            said = f"{what} (field {at + 1})" if what else f"field {at + 1}"
            assert e.value.message == (
                f"t.out:1: the job '{job}': {direction}: {said} should be {form}, not 'x'"
            )


_DISK_WORDS = ("read ios", "write ios", "read merges", "write merges", "read ticks",
               "write ticks", "in_queue")  # fmt: skip


def test_every_disk_field_is_read_where_fio_writes_it() -> None:
    """A disk group (name, seven counts, util) at the end of a standalone line: each
    count too large for fio, in turn, is refused by its name and place; util over 100 %
    too."""
    fields, _ = _first_job_line("terse-only-v3-randwrite")
    at = fields.index("vda")
    assert fields[at + 8] == "71.41%"
    for k, what in enumerate(_DISK_WORDS, start=1):
        changed = [*fields[: at + k], "9" * 20, *fields[at + k + 1 :]]
        with pytest.raises(FioOutputError) as e:
            parse_terse_output(";".join(changed) + "\n", "t.out")
        assert e.value.message == (
            f"t.out:1: disk 'vda': {what} (field {at + k + 1}) is '{'9' * 20}': more than "
            "fio counts or measures"
        )
    for util, said in (
        ("100.01%", "util 100.01%: fio caps it at 100%"),
        ("1" + "0" * 19 + "%", f"util (field {at + 9}) is '1{'0' * 19}%': more than fio counts"),
    ):
        changed = [*fields[: at + 8], util]
        with pytest.raises(FioOutputError) as e:
            parse_terse_output(";".join(changed) + "\n", "t.out")
        assert e.value.message.startswith(f"t.out:1: disk 'vda': {said}"), e.value.message


def test_continue_on_errors_counts_end_a_line_with_or_without_a_description() -> None:
    """fio's terse v5 line ends with continue_on_error's two counts, then the job's
    description when it has one; the counts are read either way, and named when wrong."""
    fields, job = _first_job_line("terse-v5-both-description-coe")
    assert fields[-3:] == ["0", "0", "read and write, also reported together"]
    for tail in (fields[-1:], []):
        text = ";".join([*fields[:-3], "7", "5", *tail]) + "\n"
        _, report = parse_terse_output(text, "t.out")
        (entry,) = report["jobs"]
        assert (entry["total_err"], entry["first_error"]) == (7, 5)
        assert entry.get("desc") == (tail[0] if tail else None)
    for k, what in ((3, "total errors"), (2, "first error")):
        changed = list(fields)
        changed[-k] = "9" * 20
        with pytest.raises(FioOutputError) as e:
            parse_terse_output(";".join(changed) + "\n", "t.out")
        assert e.value.message == (
            f"t.out:1: the job '{job}': {what} (field {len(fields) - k + 1}) is "
            f"'{'9' * 20}': more than fio counts or measures"
        )


def test_unified_mixed_is_refused_with_the_line() -> None:
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(text_of("terse-v4-mixed"), "mixed.out")
    assert e.value.message.startswith("mixed.out:1: the job 'mixed': one direction only")
    assert "unified_rw_reporting=mixed" in e.value.message
    assert e.value.hint


# -- external -----------------------------------------------------------------------------


def test_external_fio_2_1_2_terse_v3() -> None:
    """jtulak/fio-parser's fio-test.out: 12 jobs in 3 groups (SOURCES.md states line 1's
    read IOPS 651 and write IOPS 162, fields 8 and 49)."""
    path = EXTERNAL / "jtulak__fio-parser__fio-test.out"
    text = path.read_text()
    assert looks_like_terse(text)
    out, report = parse_terse_output(text, str(path))
    assert out.fio_version == "2.1.2" and not out.client_mode
    assert len(out.jobs) == 12 and len(report["jobs"]) == 12
    assert [j.groupid for j in out.jobs] == [0] * 4 + [1] * 4 + [2] * 4
    first = out.jobs[0]
    assert first.jobname == "test-multi-file-io-4"
    assert first.read is not None and first.write is not None
    assert (first.read.iops, first.write.iops) == (651, 162)
    assert first.read.io_bytes == 52392 * 1024 and first.read.runtime_ms == 10058
    assert first.read.clat is not None and first.read.clat.mean_ns == 4_610_434.417
    assert first.read.clat.percentile(99.0) == 74_240_000
    assert first.read.slat is not None and first.read.slat.max_ns == 2_593_000
    assert [d.name for d in out.disk_util] == ["vda"]


# -- recognising terse text ---------------------------------------------------------------


def test_looks_like_terse_among_other_lines() -> None:
    line = terse_lines(text_of("terse-only-v3-randwrite"))[0]
    pasted = f"[root@host ~]# fio --minimal job.fio\n{line}\n[root@host ~]# \n"
    assert looks_like_terse(pasted)
    out, _ = parse_terse_output(pasted, "pasted")
    assert len(out.jobs) == 1
    assert looks_like_terse("  " + line + "\r\n"), "indented, CRLF"
    # A line that only has terse text after other words does not start as fio's do.
    assert not looks_like_terse(f"[root@host ~]# {line}\n")
    assert not looks_like_terse(f"see 3;fio-3.33;x;0;0 and {line[:40]}\n")


@pytest.mark.parametrize(
    "path",
    [
        RECORDED / "text-normal-only-seqwrite.out",
        RECORDED / "text-group-reporting-numjobs2.out",
        RECORDED / "libaio-randread-4k-qd8-jsonplus.json",
        EXTERNAL / "kangeek__fio-bench-disks-ceph__ceph_2hdd_cephfs.2.log",
        EXTERNAL / "chris-sanders__ceph-fio-results__bluestore_erasure2.1_randread-1M.out",
    ],
)
def test_other_outputs_are_not_terse(path: Path) -> None:
    text = path.read_text()
    assert not looks_like_terse(text)
    with pytest.raises(FioOutputError, match="holds no fio terse line"):
        parse_terse_output(text, str(path))


def test_terse_version_2_is_refused_clearly() -> None:
    """fio --terse-version=2: no fio version field, read, write and trim; written here
    from a v4 line as fio's stat.c writes v2 (the same fields without the version)."""
    v4 = terse_lines(text_of("text-psync-randrw-fsync-lat"))[0].split(";")
    v2 = ";".join(["2", *v4[2:]])
    assert looks_like_terse(v2)
    with pytest.raises(FioOutputError) as e:
        parse_terse_output("fio output:\n" + v2, "v2.out")
    assert e.value.message.startswith("v2.out:2: terse version 2")
    assert "3, 4 and 5" in e.value.message
    assert e.value.hint is not None and "--terse-version=3" in e.value.hint


def test_lines_of_different_fio_versions_are_reports_of_different_runs() -> None:
    old = (EXTERNAL / "jtulak__fio-parser__fio-test.out").read_text().splitlines()[0]
    new = terse_lines(text_of("terse-only-v3-randwrite"))[0]
    text = f"{old}\n{new}\n"
    reports = terse_reports(text, "two.out")
    assert [(r.line, r.output.fio_version) for r in reports] == [(1, "2.1.2"), (2, "3.33")]
    assert [r.start for r in reports] == [0, len(old) + 1]
    with pytest.raises(FioOutputError, match=r"^two\.out:2: another fio run starts here \(an"):
        parse_terse_output(text, "two.out")


# -- hostile input ------------------------------------------------------------------------

V3 = terse_lines(text_of("terse-only-v3-randwrite"))[0]
V5 = terse_lines(text_of("text-numjobs2-two-groups"))[2]


def _replace(line: str, index: int, value: str) -> str:
    fields = line.split(";")
    fields[index] = value
    return ";".join(fields)


HOSTILE = {
    "truncated": V3[: len(V3) // 2],
    "truncated in the CPU fields": ";".join(V3.split(";")[:90]),
    # Two numbers after the last field are continue_on_error's counts and one more is a
    # description (--description=7): fio can write those; four numbers it cannot.
    "extra fields": V3 + ";1;2;3;4",
    "extra field": V3 + ";7;8.5",
    "NaN": _replace(V3, 47, "nan"),
    "inf": _replace(V3, 48, "inf"),
    "1e400": _replace(V3, 50, "1e400"),
    "negative": _replace(V3, 46, "-5"),
    "huge": _replace(V3, 46, "9" * 30),
    "empty field": _replace(V3, 60, ""),
    "mean below min": _replace(V3, 56, "1.0"),
    "percentile 150": _replace(V3, 58, "150.000000%=3"),
    "percentile without %": _replace(V3, 61, "1.000000=6"),
    "descending percentiles": _replace(V3, 62, "5.000000%=1"),
    "share over 100%": _replace(V3, 84, "250.0%"),
    "util over 100%": _replace(V3, 129, "101.00%"),
    "IOPS in no time": _replace(V3, 49, "0"),
    "error beyond errno": _replace(V3, 4, "99999999"),
    "100k fields": V3 + ";0" * 100_000,
    "binary": "3;fio-3.33;" + "\x00\xff\x1b[2J;" * 50 + "%=;" * 80,
    "version 6": "6" + V3[1:],
    "version 1": "1" + V3[1:],
    "four directions v3": ";".join(
        V3.split(";")[:5] + V3.split(";")[5:87] * 2 + V3.split(";")[87:]
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_lines_give_fio_output_error_with_the_line(case: str) -> None:
    text = "some prompt $ fio --minimal x.fio\n" + HOSTILE[case] + "\n"
    started = time.process_time()  # this process's CPU: the work, whatever else runs
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(text, "bad.out")
    assert time.process_time() - started < 2, "bounded work"
    assert e.value.message.startswith("bad.out:2: "), e.value.message
    assert e.value.hint, "says what to do"
    assert len(e.value.message) < 400, "a hostile value is not echoed whole"


def test_every_field_mangled_gives_fio_output_error_or_a_result() -> None:
    """Each field of a v5 line replaced by hostile tokens: never another exception."""
    tokens = ("", "x", "-1", "nan", "1e400", "9" * 25, "%", "=", "0%=0", "1.5%", "\x00")
    for i in range(len(V5.split(";"))):
        for token in tokens:
            try:
                parse_terse_output(_replace(V5, i, token), "f.out")
            except FioOutputError as e:
                assert e.message.startswith(("f.out:1: ", "f.out holds no fio terse line"))


def test_many_lines_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(terse, "MAX_LINES", 3)
    with pytest.raises(FioOutputError, match=r"^many:4: more than 3 terse lines"):
        parse_terse_output("\n".join([V3] * 5), "many")


def test_disk_lines_that_are_not_fios_are_left_alone() -> None:
    out, _ = parse_terse_output(V3 + "\n;not;a;disk\n;a;b;c;d;e;f;g;h;i\n", "x")
    assert not out.client_mode and [d.name for d in out.disk_util] == ["vda"]


# -- the report feeds the importer's interpreter ------------------------------------------


def test_report_feeds_the_importers_interpreter() -> None:
    """The report has the shape of fio's JSON, so the JSON import's interpreter reads it:
    one result per job (numjobs clones numbered, as fio's JSON without group_reporting
    gives no numjobs to merge them by), the description kept."""
    from iobench.importer import _FioInterpreter

    path = RECORDED / "text-numjobs2-two-groups.out"
    text = path.read_text()
    out, report = parse_terse_output(text, str(path))
    run = _FioInterpreter(text, str(path), out, report, 1.7e9).interpret(messages=[])
    assert run.status == "complete" and run.fio_version == "3.33"
    assert [r.workload for r in run.results] == ["randwrite", "randwrite#2", "seqread"]
    assert run.time_source == "mtime", "terse has no timestamp"
    assert "microsecond-latencies" in [w["id"] for w in run.warnings]

    both = RECORDED / "terse-v5-both-description-coe.out"
    text = both.read_text()
    out, report = parse_terse_output(text, str(both))
    run = _FioInterpreter(text, str(both), out, report, None).interpret(messages=[])
    assert run.suite_def.workloads is not None
    (workload,) = run.suite_def.workloads
    assert workload["description"] == "read and write, also reported together"


def test_look_alikes_are_not_terse() -> None:
    """Semicolon-separated lines that are not fio's: a CSV row, a short example."""
    assert not looks_like_terse("10;1.5;a;b\n2020;3.5;x;y;z\n")
    assert not looks_like_terse("2;job;0;0;1;2;3\n")
    assert looks_like_terse("3;fio-3.41;smoke;0;0;17175736;...\n"), "a fio line, even cut"
    with pytest.raises(FioOutputError, match=r"^doc:1: "):
        parse_terse_output("3;fio-3.41;smoke;0;0;17175736;...\n", "doc")


def test_digits_of_other_scripts_are_refused() -> None:
    """Python's int() reads '٣' as 3; fio writes ASCII digits only."""
    with pytest.raises(FioOutputError, match=r"IOPS \(field 49\) should be a whole number"):
        parse_terse_output(_replace(V3, 48, "١٣٥٩٢٨"), "u.out")


# -- the job's own fields, around its directions ------------------------------------------

# The fields of a job's line outside its directions, as a refusal names them: the header's
# by their index, the CPU and bucket fields by their offset past the directions.
JOB_FIELDS = [
    (3, "groupid", "a whole number"),
    (4, "error", "a whole number"),
]
TAIL_FIELDS = [
    (0, "usr CPU", "a number with a % sign"),
    (1, "sys CPU", "a number with a % sign"),
    *[(i, "a context switch or page fault count", "a whole number") for i in range(2, 5)],
    *[(i, "an IO depth or latency bucket share", "a number with a % sign") for i in range(5, 34)],
]


@pytest.mark.parametrize("line", [V3, V5], ids=["v3", "v5"])
@pytest.mark.parametrize(("index", "what", "form"), JOB_FIELDS)
def test_each_header_field_is_refused_by_name_and_place(
    line: str, index: int, what: str, form: str
) -> None:
    name = line.split(";")[2]
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_replace(line, index, "x"), "b.out")
    assert e.value.message == (
        f"b.out:1: the job {name!r}: {what} (field {index + 1}) should be {form}, not 'x'"
    )


@pytest.mark.parametrize(("line", "pos"), [(V3, 87), (V5, 146)], ids=["v3", "v5"])
@pytest.mark.parametrize(("offset", "what", "form"), TAIL_FIELDS)
def test_each_cpu_and_bucket_field_is_refused_by_name_and_place(
    line: str, pos: int, offset: int, what: str, form: str
) -> None:
    name = line.split(";")[2]
    bad = "x%" if "%" in form else "x"  # the first field after the directions ends in %
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_replace(line, pos + offset, bad), "b.out")
    assert e.value.message == (
        f"b.out:1: the job {name!r}: {what} (field {pos + offset + 1}) should be {form}, "
        f"not {bad!r}"
    )


def test_a_long_job_name_is_cut_in_what_is_said() -> None:
    line = _replace(_replace(V3, 2, "n" * 100), 3, "x")
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(line, "b.out")
    assert e.value.message.startswith(
        f"b.out:1: the job {'n' * 52!r}... (100 characters): groupid (field 4) "
    )
    line = _replace(_replace(V3, 2, "n" * 60), 3, "x")
    with pytest.raises(FioOutputError, match=f"the job '{'n' * 60}': groupid"):
        parse_terse_output(line, "b.out")


def test_the_largest_error_number_fio_reports() -> None:
    out, _ = parse_terse_output(_replace(V3, 4, "65535"), "e.out")
    assert out.jobs[0].error == 65535
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_replace(V3, 4, "65536"), "e.out")
    assert e.value.message == (
        "e.out:1: the job 'rw': error 65536 is not an error number fio reports"
    )


def test_a_line_that_ends_in_its_header_or_its_tail_says_where() -> None:
    for version, fields in (("3", 121), ("5", 133)):  # two directions at least
        with pytest.raises(FioOutputError) as e:
            parse_terse_output(f"{version};fio-3.33;job;0;0", "s.out")
        assert e.value.message == (
            f"s.out:1: a terse line of 5 fields; version {version} has at least {fields}"
        )
    with pytest.raises(FioOutputError) as e:
        parse_terse_output("3;fio-3.33;job;0;0;0", "s.out")
    assert e.value.message.startswith("s.out:1: the job 'job': the line ends after 6 fields, ")
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(";".join(V3.split(";")[:90]), "s.out")
    assert e.value.message == (
        "s.out:1: the job 'rw': the line ends after 90 fields, inside the CPU and "
        "latency-bucket fields (terse version 3 needs 121)"
    )


def _idle(line: str = V3) -> str:
    """``line``'s job as one that did no IO yet: its write direction zeroed as its read."""
    f = line.split(";")
    f[46:87] = f[5:46]
    return ";".join(f)


def test_a_job_that_did_no_io_may_have_shares_of_nothing() -> None:
    """fio divides 0 IOs by 0 in the IO depth and latency shares of a job that did no IO
    (glibc writes -nan%): accepted there, and only there; anything else is refused."""
    shares = range(87 + 5, 87 + 34)
    line = _idle()
    for i in shares:
        line = _replace(line, i, "-nan%" if i % 2 else "nan%")
    out, _ = parse_terse_output(line, "i.out")
    assert (out.jobs[0].read, out.jobs[0].write) == (None, None)
    with pytest.raises(FioOutputError, match=r"bucket share \(field 93\) should be a number"):
        parse_terse_output(_replace(_idle(), 92, "x"), "i.out")
    with pytest.raises(FioOutputError, match=r"bucket share \(field 100\) should be a number"):
        parse_terse_output(_replace(_replace(_idle(), 92, "-nan%"), 99, "x"), "i.out")
    with pytest.raises(FioOutputError, match=r"bucket share \(field 93\) should be a number"):
        parse_terse_output(_replace(V3, 92, "-nan%"), "i.out")  # this job did IO


def test_a_v5_jobs_trim_is_read_where_fio_writes_it() -> None:
    """v5's third direction is trim: the read direction's fields copied there read the
    same."""
    f = V5.split(";")
    f[99:146] = f[5:52]
    out, _ = parse_terse_output(";".join(f), "t.out")
    job = out.jobs[0]
    assert job.trim is not None and job.trim == job.read


# -- percentiles and directions at their edges --------------------------------------------

_MAX_US = NUMBER_MAX // 1000  # the largest latency in µs whose ns fit
CHANGED_AFTER = "fio never writes that: the file was changed after fio wrote it"


def _write_percentile(value: str, line: str = V3) -> str:
    """``line`` with the write direction's 18th percentile field (fio's first padding
    ``0%=0``, after its 99.99th) set to ``value``."""
    return _replace(line, 75, value)


def test_the_100th_percentile_and_the_largest_latency_are_read() -> None:
    out, _ = parse_terse_output(_write_percentile(f"100.000000%={_MAX_US}"), "p.out")
    write = out.jobs[0].write
    assert write is not None and write.clat is not None
    assert write.clat.percentiles[-1] == (100.0, float(_MAX_US * 1000))


@pytest.mark.parametrize(
    "value",
    ["100.000001%=60", "150.000000%=60", f"99.999000%={_MAX_US + 1}"],
)
def test_a_percentile_fio_cannot_write_is_refused_by_place(value: str) -> None:
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_write_percentile(value), "p.out")
    assert e.value.message == (
        f"p.out:1: the job 'rw': write: percentile {shown(value, 40)} (field 76) is not one fio "
        "writes"
    )


def test_a_field_that_is_no_percentile_is_refused_with_it_cut() -> None:
    value = "99.000000%=" + "1" * 29 + "x"  # 41 characters: cut at 40
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_write_percentile(value), "p.out")
    assert e.value.message == (
        f"p.out:1: the job 'rw': write: field 76 should be a percentile such as '99.000000%=123', "
        f"not {value[:32]!r}... (41 characters)"
    )


def test_a_percentile_asked_for_twice_is_read() -> None:
    """percentile_list=99:99 gives the same percentile twice: fio writes both."""
    out, _ = parse_terse_output(_write_percentile("99.990000%=50"), "p.out")
    write = out.jobs[0].write
    assert write is not None and write.clat is not None
    assert write.clat.percentiles[-2:] == ((99.99, 50_000.0), (99.99, 50_000.0))


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("99.000000%=60", "the percentiles are not in ascending order"),
        ("99.995000%=49", "a higher percentile has a lower latency"),
    ],
)
def test_percentiles_out_of_order_are_refused_with_why(value: str, said: str) -> None:
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_write_percentile(value), "p.out")
    assert e.value.message == f"p.out:1: the job 'rw': write: {said}"
    assert e.value.hint == CHANGED_AFTER


def _fields(line: str, *spans: tuple[int, int | None]) -> str:
    f = line.split(";")
    return ";".join(v for a, b in spans for v in f[a:b])


def test_a_mixed_direction_is_refused_with_what_to_do() -> None:
    """unified_rw_reporting=mixed: one direction's fields, then the CPU fields."""
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_fields(V3, (0, 46), (87, None)), "m.out")
    assert e.value.message == (
        "m.out:1: the job 'rw': one direction only: the job ran with "
        "unified_rw_reporting=mixed, so fio reports reads and writes together, which iobench "
        "does not store (it keeps read, write and trim apart)"
    )
    assert e.value.hint == "import the output of a run without unified_rw_reporting=mixed"


def test_directions_too_few_or_too_many_are_refused_by_count() -> None:
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_fields(V3, (0, 5), (87, None)), "d.out")
    assert e.value.message == (
        "d.out:1: the job 'rw': 0 directions' fields; terse version 3 writes 2 (one more "
        "with unified_rw_reporting=both)"
    )
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(HOSTILE["four directions v3"], "d.out")
    assert e.value.message == (
        "d.out:1: the job 'rw': more than 3 directions' fields before the CPU fields"
    )
    four = _fields(V5, (0, 146), (99, 146), (146, None))  # read, write, trim, mixed
    out, _ = parse_terse_output(four, "d.out")  # unified_rw_reporting=both
    assert out.jobs[0].read is not None and out.jobs[0].trim is None
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_fields(V5, (0, 146), (99, 146), (99, 146), (146, None)), "d.out")
    assert e.value.message == (
        "d.out:1: the job 'seqread': more than 4 directions' fields before the CPU fields"
    )


@pytest.mark.parametrize(("end", "inside"), [(30, 1), (60, 2), (86, 2)])
def test_a_line_that_ends_inside_a_direction_says_which(end: int, inside: int) -> None:
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_fields(V3, (0, end)), "e.out")
    assert e.value.message == (
        f"e.out:1: the job 'rw': the line ends after {end} fields, inside direction {inside} "
        f"(terse version 3 writes 41 fields per direction)"
    )


def test_a_line_that_ends_after_its_directions_says_so() -> None:
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_fields(V3, (0, 87)), "e.out")
    assert e.value.message == (
        "e.out:1: the job 'rw': the line ends after 87 fields, inside the CPU and "
        "latency-bucket fields (terse version 3 needs 121)"
    )


# -- a direction's own fields at their edges ----------------------------------------------


def _write(line: str = V3, **fields: str) -> str:
    """V3 with fields of its write direction (from index 46) set by offset name."""
    offsets = {"io": 0, "bw": 1, "iops": 2, "runtime": 3, "clat_min": 8, "clat_max": 9,
               "clat_mean": 10, "clat_dev": 11}  # fmt: skip
    for name, value in fields.items():
        line = _replace(line, 46 + offsets[name], value)
    return line


def _write_of(line: str) -> DirectionResult:
    out, _ = parse_terse_output(line, "w.out")
    write = out.jobs[0].write
    assert write is not None
    return write


def test_a_clat_mean_at_its_min_or_under_one_above_its_max_is_read() -> None:
    """fio writes min and max in whole µs and the mean with six decimals: a mean at the
    min, or up to a µs above the max, is what rounding gives."""
    for mean, ns in (("6.000000", 6000.0), ("533.999999", 533999.999)):
        clat = _write_of(_write(clat_mean=mean)).clat
        assert clat is not None and clat.mean_ns == ns
    sub_us = _write_of(_write(clat_min="0", clat_max="0", clat_mean="0.400000", clat_dev="0"))
    assert sub_us.clat is not None and sub_us.clat.mean_ns == 400.0


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"clat_mean": "534.000000"}, "clat mean 534.000000 µs is not between its min 6 and "
         "max 533"),
        ({"clat_mean": "5.999999"}, "clat mean 5.999999 µs is not between its min 6 and max "
         "533"),
        ({"clat_min": "5", "clat_max": "5", "clat_mean": "0.000000", "clat_dev": "0.000000"},
         "clat mean 0.000000 µs is not between its min 5 and max 5"),
    ],
)  # fmt: skip
def test_a_clat_mean_outside_its_min_and_max_is_refused(fields: dict[str, str], said: str) -> None:
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_write(**fields), "w.out")
    assert e.value.message == f"w.out:1: the job 'rw': write: {said}"
    assert (
        e.value.hint == "fio never writes that: the file was changed or damaged after fio wrote it"
    )


def test_the_largest_latency_fio_measures() -> None:
    top = NUMBER_MAX // 1000
    line = _write(clat_max=str(top), clat_mean="7.147286")
    line = _replace(line, 75, f"100.000000%={top}")  # the percentiles reach it too
    clat = _write_of(line).clat
    assert clat is not None and clat.max_ns == float(top * 1000)
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_write(clat_max=str(top + 1)), "w.out")
    assert e.value.message == (
        f"w.out:1: the job 'rw': write: clat max {top + 1} µs is more than fio measures"
    )


@pytest.mark.parametrize(
    "fields", [{"iops": "0", "bw": "543712"}, {"iops": "135928", "bw": "0"}, {}]
)
def test_rates_over_no_runtime_are_refused(fields: dict[str, str]) -> None:
    fields = {"iops": "135928", "bw": "543712", **fields}
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_write(runtime="0", **fields), "w.out")
    assert e.value.message == (
        f"w.out:1: the job 'rw': write: IOPS {fields['iops']} and bandwidth {fields['bw']} "
        f"KiB/s over a runtime of 0 ms: fio prints 0 for both then"
    )
    assert e.value.hint == CHANGED_AFTER


def test_a_direction_under_one_iops_counts_no_ios_and_keeps_its_bytes() -> None:
    """fio writes IOPS as a whole number: one 1 MiB IO in 3 s is 0 IOPS."""
    write = _write_of(_write(io="1024", bw="341", iops="0", runtime="3000"))
    assert (write.io_bytes, write.total_ios, write.io_bytes_step) == (1 << 20, 0, 1024)


def test_a_direction_with_latencies_but_no_bytes_is_kept() -> None:
    write = _write_of(_write(io="0", bw="0", iops="0"))
    assert write.io_bytes == 0 and write.clat is not None


def test_a_bad_field_of_the_mixed_direction_is_named_mixed() -> None:
    """unified_rw_reporting=both: the fourth direction is the mixed one."""
    f = V5.split(";")
    four = f[:146] + f[5:52] + f[146:]
    four[146 + 3] = "x"  # its runtime
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(";".join(four), "m.out")
    assert e.value.message.startswith("m.out:1: the job 'seqread': mixed: runtime"), e.value.message


def test_at_most_max_lines_terse_lines_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(terse, "MAX_LINES", 3)
    jobs = [_replace(V3, 2, f"job{n}") for n in range(4)]
    out, _ = parse_terse_output("\n".join(jobs[:3]), "many")
    assert [j.jobname for j in out.jobs] == ["job0", "job1", "job2"]
    with pytest.raises(FioOutputError) as e:
        parse_terse_output("\n".join(jobs), "many")
    assert e.value.message == (
        "many:4: more than 3 terse lines; iobench reads at most that many jobs from one file"
    )
    assert e.value.hint == "split the file, or import fio's JSON output"


def test_a_file_without_terse_lines_says_how_to_get_them() -> None:
    with pytest.raises(FioOutputError) as e:
        parse_terse_output("just some text\n", "n.out")
    assert e.value.hint == "run fio with --output-format=terse (or --minimal), or import its JSON"


# -- a line's fields at their bounds --------------------------------------------------------


def test_a_long_field_is_shown_cut_at_40_characters() -> None:
    long = "1" * 41
    for index, what, form in (
        (3, "groupid", "a whole number"),
        (87, "usr CPU", "a number with a % sign"),
    ):
        bad = long[:40] + "%" if "%" in form else long[:40] + "x"
        with pytest.raises(FioOutputError) as e:
            parse_terse_output(_replace(V3, index, bad), "l.out")
        assert e.value.message == (
            f"l.out:1: the job 'rw': {what} (field {index + 1}) should be {form}, "
            f"not {bad[:32]!r}... (41 characters)"
        )
    disk = "d" * 41
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_replace(_replace(V3, 121, disk), 129, "100.01%"), "l.out")
    assert e.value.message == f"l.out:1: disk {disk[:32]!r}... (41 characters): util 100.01%: " + (
        "fio caps it at 100%"
    )


def test_numbers_up_to_the_largest_fio_counts_are_read() -> None:
    """A count (field 90) and a share (field 88) at 2^63 - 1 are read; one more is more
    than fio counts."""
    top = NUMBER_MAX
    parse_terse_output(_replace(_replace(V3, 89, str(top)), 87, f"{top}%"), "n.out")
    for index, what, value in (
        (89, "a context switch or page fault count", str(top + 1)),
        (87, "usr CPU", f"{top + 1}%"),
    ):
        with pytest.raises(FioOutputError) as e:
            parse_terse_output(_replace(V3, index, value), "n.out")
        assert e.value.message == (
            f"n.out:1: the job 'rw': {what} (field {index + 1}) is {value!r}: more than fio "
            f"counts or measures"
        )


def test_a_disk_at_exactly_full_utilisation_is_read() -> None:
    out, _ = parse_terse_output(_replace(V3, 129, "100.00%"), "u.out")
    assert [d.util_pct for d in out.disk_util] == [100.0]


def test_a_description_is_read_whole_semicolons_and_all() -> None:
    """fio writes the description as it is: semicolons in it are not fields; a first
    field that is no number makes it a description, not continue_on_error's counts."""
    _, report = parse_terse_output(V3 + ";0;0;read and write; also together", "d.out")
    (job,) = report["jobs"]
    assert (job["total_err"], job["desc"]) == (0, "read and write; also together")
    _, report = parse_terse_output(V3 + ";x;5", "d.out")
    (job,) = report["jobs"]
    assert job["desc"] == "x;5" and "total_err" not in job
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(V3 + ";1;2;3;4", "d.out")
    assert e.value.message == (
        "d.out:1: the job 'rw': 2 number field(s) after the last field terse version 3 "
        "writes (field 133 on)"
    )


def test_a_description_longer_than_iobench_reads_is_refused() -> None:
    top = terse.MAX_DESCRIPTION
    _, report = parse_terse_output(V3 + ";0;0;" + "d" * top, "d.out")
    assert len(report["jobs"][0]["desc"]) == top
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(V3 + ";0;0;" + "d" * (top + 1), "d.out")
    assert e.value.message == (
        "d.out:1: the job 'rw': a description of 4,097 characters: more than iobench reads "
        "(at most 4,096; fio itself sets no limit)"
    )


def test_a_line_of_more_fields_than_fio_writes_is_refused_by_count() -> None:
    top = terse.MAX_FIELDS
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(V3 + ";0" * (top + 1 - 130), "f.out")
    assert e.value.message == (
        f"f.out:1: a terse line of {top + 1} fields: far more than fio writes (at most "
        f"{top}, even with many disks)"
    )
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(V3 + ";0" * (top - 130), "f.out")
    assert "far more than fio writes" not in e.value.message


def test_a_version_2_line_says_which_versions_are_read() -> None:
    v2 = "2;rw;0;0;" + ";".join(V3.split(";")[5:])
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(v2, "v.out")
    assert e.value.message.endswith("terse versions 3, 4 and 5"), e.value.message
    assert e.value.hint == (
        "run fio again with --terse-version=3 (or 4, 5), or with --output-format=json; "
        "version 2 has no fio version and lacks fields"
    )


_VDA = V3.split(";")[121:130]  # the line's disk group: vda's name, 7 counts, util


def test_a_slaves_group_after_a_disk_is_read_and_not_kept() -> None:
    """fio follows an md/dm device with the average over its members, named 'slaves'."""
    counts = ";".join(_VDA[1:])
    before = ";".join(V3.split(";")[:121])
    for line, names in (
        (f"{V3};slaves;{counts}", ["vda"]),
        (f"{before};slaves;{counts}", ["slaves"]),  # no device before it: kept as named
        (f"{V3};sdb;{counts}", ["vda", "sdb"]),
        (f"{V3};slaves;{counts};sdb;{counts}", ["vda", "sdb"]),
    ):
        out, _ = parse_terse_output(line, "s.out")
        assert [d.name for d in out.disk_util] == names, line[-80:]


@pytest.mark.parametrize(("index", "value"), [(121, ""), (122, "x"), (129, "71.41")])
def test_a_group_that_is_no_disk_is_the_description(index: int, value: str) -> None:
    """A disk group has a name, seven whole numbers and a share: fields after the job's
    that are not one are its description, kept as they are."""
    line = _replace(V3, index, value)
    out, report = parse_terse_output(line, "g.out")
    assert out.disk_util == ()
    assert report["jobs"][0]["desc"] == ";".join(line.split(";")[121:])


def test_a_bad_field_of_a_v3_mixed_direction_is_named_mixed() -> None:
    """Version 3 writes no trim: with unified_rw_reporting=both its third direction is
    the mixed one (it was called trim)."""
    f = V3.split(";")
    both = f[:87] + f[46:87] + f[87:]
    out, _ = parse_terse_output(";".join(both), "m.out")
    assert out.jobs[0].trim is None
    both[87 + 3] = "x"
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(";".join(both), "m.out")
    assert e.value.message == (
        "m.out:1: the job 'rw': mixed: runtime (ms) (field 91) should be a whole number, not 'x'"
    )


def test_a_refused_percentile_is_shown_cut_at_40_characters() -> None:
    value = "100.0000000000000000%=9223372036854775807"  # 41 characters, 20 digits
    with pytest.raises(FioOutputError) as e:
        parse_terse_output(_write_percentile(value), "p.out")
    assert e.value.message == (
        f"p.out:1: the job 'rw': write: percentile {value[:32]!r}... (41 characters) "
        "(field 76) is not one fio writes"
    )
