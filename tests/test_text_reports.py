"""fio/text.py beyond single lines: what makes a text fio's normal output, the reports it
holds and where each starts, the report dict it becomes (the JSON's shape: groups,
descriptions, where each job's options came from), client mode's servers and their
names, the cut result, and the small rules (a figure's resolution, a printed amount's
last digit, a report's time read as UTC). Recorded fio 3.33 outputs, each changed in one
place (tests/data/fio-outputs/recorded). Issue 27, point 4: the mutation score of the
text reader (bench/README.md, "Mutation testing")."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from iobench.errors import UserError
from iobench.fio.text import (
    OPTIONS_COMPLETE_KEY,
    OPTIONS_FROM_KEY,
    _last_digit,
    _report_time,
    _step,
    looks_like_normal,
    normal_reports,
    parse_normal_output,
)
from test_import_text import RECORDED, normal_part

QD8 = normal_part(RECORDED / "text-libaio-randread-qd8.out")
CLIENTS = normal_part(RECORDED / "text-client-server-2.out")
TWO_GROUPS = normal_part(RECORDED / "text-numjobs2-two-groups.out")
RESULT = "randread: (groupid=0, jobs=1): err= 0: pid=1982: Mon Nov 23 17:36:05 2026"
HINT = (
    "the text looks like fio's normal output but this line is not as fio writes it; "
    "import the output as fio wrote it (or, better, fio's --output-format=json)"
)


def reports(text: str) -> list[Any]:
    return normal_reports(text, "x.txt")


def _refused(text: str) -> UserError:
    with pytest.raises(UserError) as e:
        reports(text)
    assert e.value.hint == HINT
    return e.value


# -- is it fio's normal output? ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        (QD8, True),
        (RESULT, True),  # the result line at the very start of the text
        ("(groupid=0, jobs=1): err= 0", True),
        ("see (groupid=0) in the log", False),
        ("(groupid=0, jobs=1): no error figure", False),
        ("(groupid=0): err= 0", False),
        ("(groupid=0, err= 0\njobs=1)", False),  # jobs= on the next line is another line's
        ("(groupid=0" + " " * 600 + "jobs=1 err=0", False),  # too far for one result line
        ("(groupid=0" + " " * 570 + "jobs=1 err=0", True),
        ("(groupid=x)\n" + RESULT, True),  # the second mention is the result line
        (RESULT + "\n(groupid=x)", True),  # and the first one is
        ("(groupid=x)\n(groupid=y)", False),
        ("", False),
    ],
)
def test_what_looks_like_fio_s_normal_output(text: str, normal: bool) -> None:
    assert looks_like_normal(text) is normal


# -- small rules ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("printed", "step"),
    [(0, 1.0), (-5, 1.0), (0.5, 1.0), (1, 1.0), (99, 1.0), (304000, 1000.0), (1234, 10.0)],
)
def test_a_printed_figure_s_resolution_is_its_fourth_significant_digit(
    printed: float, step: float
) -> None:
    """fio prints IOPS with at most 4 significant digits (304k): its own figure from the
    exact counts is taken when it is within one unit of the last printed digit."""
    assert _step(printed) == step


@pytest.mark.parametrize(
    ("number", "unit", "step"),
    [
        ("479", 1 << 20, 1 << 20),  # 479MiB: a MiB
        ("4.5", 1 << 30, 107374182),  # 4.5GiB: a tenth of a GiB, rounded
        ("4.56", 1000, 10),
        ("2.5", 15, 2),  # 1.5 rounds up
        ("7", 1, 1),
        ("0.123", 1, 1),  # never under a byte
    ],
)
def test_a_printed_amount_s_last_digit(number: str, unit: int, step: int) -> None:
    assert _last_digit(number, unit) == step


@pytest.fixture
def far_from_utc() -> Iterator[None]:
    """This process in a time zone 5 hours off UTC: a report's time is read as UTC all the
    same (the text does not say its zone)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "America/Bogota"
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ")
        else:
            os.environ["TZ"] = before
        time.tzset()


def test_a_report_s_time_is_read_as_utc(far_from_utc: None) -> None:
    assert _report_time(": Mon Nov 23 17:36:05 2026") == 1795455365
    assert _report_time(":  Mon  Nov 23 17:36:05 2026 ") == 1795455365
    assert parse_normal_output(QD8, "x.txt")[0].timestamp == 1795455365


@pytest.mark.parametrize(
    ("rest", "seconds"),
    [
        (": Thu Jan  1 00:00:01 1970", 1.0),
        (": Thu Jan  1 00:00:00 1970", None),  # a clock that never was set
        (": Fri Jan  1 00:00:00 2100", 4_102_444_800.0),
        (": Fri Jan  1 00:00:01 2100", None),
        (": yesterday", None),
        ("", None),
    ],
)
def test_a_report_s_time_between_1970_and_2100(rest: str, seconds: float | None) -> None:
    assert _report_time(rest) == seconds


# -- the reports of a text -------------------------------------------------------------------


def test_a_text_with_fio_s_lines_but_no_result_is_refused() -> None:
    text = QD8.split("randread: (groupid=0")[0]
    with pytest.raises(UserError) as e:
        reports(text + "randread: (groupid=0, jobs=1 as prose")
    assert e.value.message == (
        "x.txt:7: a job's result line is not as fio writes it: "
        "'randread: (groupid=0, jobs=1 as prose'"
    )
    with pytest.raises(UserError) as e:
        reports(text)
    assert e.value.message == (
        "x.txt looks like fio's normal output but holds no job result "
        "('NAME: (groupid=N, jobs=N): err=...' and the lines under it)"
    )
    assert e.value.hint == "import the whole output fio printed"


def test_each_report_starts_where_its_run_shows_it_starting() -> None:
    preface = "$ cat notes\nsome words\n\n"
    (one,) = reports(preface + QD8)
    assert one.start == 0  # the text's first run starts with the text
    assert one.line == 7 + 3  # its result line
    assert (one.session, one.pids) == (0, (("randread", 0, 1982),))
    # a second run after the first: its own start and session
    first, second = reports(QD8 + "\n" + TWO_GROUPS)
    assert first.start == 0 and second.session == 1
    assert second.start == len(QD8) + 1
    assert second.line == len(QD8.splitlines()) + 9  # its result line, 9th of its own


def test_a_job_file_shown_last_is_read() -> None:
    """A job file pasted after the output (nothing follows it) still starts a session of
    its own: the output above keeps the options of its header line."""
    (one,) = reports(QD8 + "\n[extra]\nrw=write\n")
    assert one.raw["jobs"][0][OPTIONS_FROM_KEY] == "fio's job header line"


def test_the_report_dict_is_in_the_json_s_shape() -> None:
    (r,) = reports(TWO_GROUPS)
    assert set(r.raw) == {"global options", "jobs"}
    assert [(j["jobname"], j["groupid"]) for j in r.raw["jobs"]] == [
        ("randwrite", 0), ("randwrite", 0), ("seqread", 1)
    ]  # fmt: skip
    assert all("desc" not in j for j in r.raw["jobs"])
    (c,) = reports(CLIENTS)
    assert set(c.raw) == {"global options", "client_stats"} and c.output.client_mode
    assert not r.output.client_mode


def test_a_description_is_kept_as_fio_s_desc() -> None:
    text = QD8.replace(RESULT, RESULT + "\n  Description  : [a job of mine]")
    (r,) = reports(text)
    assert r.raw["jobs"][0]["desc"] == "a job of mine"


def test_where_each_job_s_options_came_from() -> None:
    (r,) = reports(QD8)
    (job,) = r.raw["jobs"]
    assert job[OPTIONS_FROM_KEY] == "fio's job header line"
    assert job[OPTIONS_COMPLETE_KEY] is False
    assert job["job options"] == {
        "rw": "randread", "bs": "4096", "ioengine": "libaio", "iodepth": "8", "numjobs": "1"
    }  # fmt: skip
    # without the header line: what the result lines say (numjobs from the blocks)
    (r,) = reports(QD8.replace(QD8.splitlines()[0], ""))
    (job,) = r.raw["jobs"]
    assert job[OPTIONS_FROM_KEY] == "fio's result lines (iodepth, numjobs)"
    assert job["job options"] == {"iodepth": "8", "numjobs": "1"}
    # the fio command line above it: complete, filled in from the header line
    cmd = "$ fio --name=randread --filename=/d/f --rw=randread --direct=1\n"
    (r,) = reports(cmd + QD8)
    (job,) = r.raw["jobs"]
    assert job[OPTIONS_COMPLETE_KEY] is True
    assert job[OPTIONS_FROM_KEY] == (
        "the fio command line (bs, ioengine, iodepth, numjobs from fio's job header line)"
    )
    assert job["job options"]["rw"] == "randread" and job["job options"]["bs"] == "4096"
    (r,) = reports(cmd + QD8.replace(QD8.splitlines()[0], ""))
    assert r.raw["jobs"][0][OPTIONS_FROM_KEY] == (
        "the fio command line (iodepth, numjobs from fio's result lines)"
    )


def test_options_every_job_shares_are_the_global_ones() -> None:
    job_file = "[global]\ndirect=1\nsize=8M\n[randread]\nrw=randread\n"
    (r,) = reports(job_file + "\n" + QD8)
    assert r.raw["global options"] == {"direct": "1", "size": "8M"}
    assert r.raw["jobs"][0]["job options"]["rw"] == "randread"
    assert "direct" not in r.raw["jobs"][0]["job options"]


def test_a_description_that_says_other_than_fio_printed_is_not_taken() -> None:
    """iobench's own description of a job (its export) gives the options, unless the
    header line fio printed says otherwise (the file was changed after the export)."""
    said = "iobench workload: rw=randread bs=4096 iodepth=8 numjobs=1"
    text = QD8.replace(RESULT, RESULT + f"\n  Description  : [{said}]")
    (r,) = reports(text)
    taken = r.raw["jobs"][0]
    assert taken[OPTIONS_FROM_KEY] != "fio's job header line", taken
    other = text.replace("iodepth=8\n", "iodepth=16\n", 1)
    assert "iodepth=16" in other.splitlines()[0]
    (r,) = reports(other)
    assert r.raw["jobs"][0][OPTIONS_FROM_KEY] == "fio's job header line"


# -- a job's result ------------------------------------------------------------------------


def test_an_error_beyond_fio_s_numbers_is_kept_at_65535() -> None:
    for err, kept in (("65535", 65535), ("65536", 65535), ("70000", 65535), ("3", 3)):
        text = QD8.replace("err= 0:", f"err= {err}:")
        (job,) = parse_normal_output(text, "x.txt")[0].jobs
        assert job.error == kept


def test_iops_are_fio_s_exact_figure_when_the_printed_one_agrees() -> None:
    (job,) = parse_normal_output(QD8, "x.txt")[0].jobs
    assert job.read is not None and job.read.iops == 304217 * 1000 / 1001
    far = QD8.replace("total=304217,", "total=404217,")  # 404k: not what fio printed (304k)
    (job,) = parse_normal_output(far, "x.txt")[0].jobs
    assert job.read is not None and job.read.iops == 304_000 and job.read.total_ios == 404217
    edge = QD8.replace("total=304217,", "total=305305,")  # 305000 within the last digit
    (job,) = parse_normal_output(edge, "x.txt")[0].jobs
    assert job.read is not None and job.read.iops == 305305 * 1000 / 1001
    none = QD8.replace("     issued rwts: total=304217,0,0,0 short=0,0,0,0 dropped=0,0,0,0\n", "")
    (job,) = parse_normal_output(none, "x.txt")[0].jobs
    assert job.read is not None and job.read.iops == 304_000
    assert job.read.total_ios == round(304_000 * 1001 / 1000)


def test_a_direction_that_did_nothing_is_none_and_one_that_did_is_kept() -> None:
    line = "  read: IOPS=304k, BW=1187MiB/s (1245MB/s)(1188MiB/1001msec)"
    idle = QD8.replace(line, "  read: IOPS=0, BW=0B/s (0B/s)(0B/1001msec)").replace(
        "total=304217,", "total=0,"
    )
    (job,) = parse_normal_output(idle, "x.txt")[0].jobs
    assert job.read is None
    bytes_only = QD8.replace("total=304217,", "total=0,")
    (job,) = parse_normal_output(bytes_only, "x.txt")[0].jobs
    assert job.read is not None and job.read.total_ios == 0
    assert job.read.clat is None  # no IO counted: no latency to give
    ios_only = idle.replace("total=0,", "total=5,")
    (job,) = parse_normal_output(ios_only, "x.txt")[0].jobs
    assert job.read is not None and job.read.io_bytes == 0 and job.read.total_ios == 5


def test_a_trim_is_read_as_reads_are() -> None:
    line = "  read: IOPS=304k, BW=1187MiB/s (1245MB/s)(1188MiB/1001msec)"
    text = QD8.replace(line, line.replace("read:", "trim:")).replace(
        "total=304217,0,0,0", "total=0,0,304217,0"
    )
    (job,) = parse_normal_output(text, "x.txt")[0].jobs
    assert job.read is None and job.trim is not None and job.trim.total_ios == 304217


def test_a_result_cut_before_its_cpu_line_is_refused() -> None:
    cut = QD8.split("  cpu          :")[0]
    assert _refused(cut).message == (
        "x.txt:7: the result of job 'randread' is cut short: the cpu line fio prints "
        "under every job are missing"
    )
    only_head = QD8.split("  read: IOPS")[0]
    long = "j" * 80
    with pytest.raises(UserError) as e:
        reports(only_head.replace("randread: (groupid", f"{long}: (groupid"))
    assert e.value.message == (
        f"x.txt:7: the result of job {'j' * 60!r} is cut short: its IO figures and the cpu "
        "line fio prints under every job are missing"
    )


# -- client mode -------------------------------------------------------------------------


def test_servers_are_named_by_their_order_or_their_host() -> None:
    (r,) = reports(CLIENTS)
    assert [j.hostname for j in r.output.jobs] == ["client 1", "client 2", None]
    # fio's <host> prefix on the result lines names them
    named = CLIENTS.replace(
        "csjob: (groupid=0, jobs=1): err= 0: pid=2024",
        "<a> csjob: (groupid=0, jobs=1): err= 0: pid=2024",
    )
    named = named.replace(
        "csjob: (groupid=0, jobs=1): err= 0: pid=2025",
        "<b> csjob: (groupid=0, jobs=1): err= 0: pid=2025",
    )
    (r,) = reports(named)
    assert [j.hostname for j in r.output.jobs] == ["a", "b", None]


def test_one_server_shown_by_its_hello_names_its_report() -> None:
    lines = CLIENTS.splitlines()
    one = "\n".join(lines[:1] + lines[2:3] + lines[4:6] + lines[8:9] + lines[10:38])
    (r,) = reports(one)
    assert [j.hostname for j in r.output.jobs] == ["vm"]
    assert r.output.client_mode


def test_more_servers_than_reports_cannot_be_told_apart() -> None:
    """Two servers said hello, and the reports come from one set of processes printed
    again and again (--status-interval): which is whose cannot be known."""
    lines = CLIENTS.splitlines()
    other = lines[1].replace("hostname=vm", "hostname=other")
    report = lines[10:38]
    text = "\n".join([lines[0], other, *lines[2:10], *report, *report, *report, *lines[66:]])
    assert _refused(text).message == (
        "x.txt:11: the text shows 2 fio servers, but the reports that follow come from 1 "
        "sets of processes: which server sent which report cannot be told"
    )


@pytest.mark.parametrize(
    "first",
    ["Starting 1 process", "Jobs: 1 (f=1): [R(1)]", "fio: some message", "fio-3.33"],
)
def test_a_host_prefix_on_what_fio_prints_first_is_client_mode(first: str) -> None:
    """``<host> `` before a line fio prints first (progress, a message, its version) is
    fio's client naming a server; before other text it is not (a pasted HTML tag)."""
    text = f"<srv> {first}\n<srv> " + QD8.replace("\n", "\n<srv> ", 8)
    (r,) = reports(text)
    assert r.output.client_mode and r.output.jobs[0].hostname == "srv"
    plain = f"<srv> starting 1 process\n{QD8}"
    (r,) = reports(plain)
    assert not r.output.client_mode


# -- each figure's name and line in what is refused ---------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("usr=12.00%", "usr=1.2.00%", "22: usr '1.2.00' is not a number"),
        ("sys=59.20%", "sys=5.9.20%", "22: sys '5.9.20' is not a number"),
        ("(1188MiB/", "(1.1.88MiB/", "8: io '1.1.88' is not a number"),
        ("BW=1187MiB/s", "BW=1.1.87MiB/s", "8: BW '1.1.87' is not a number"),
        ("IOPS=304k", "IOPS=3.0.4k", "8: IOPS '3.0.4' is not a number"),
        ("min=771,", "min=7.7.1,", "9: min '7.7.1' is not a number"),
        ("stdev=1377.43", "stdev=1.377.43", "9: stdev '1.377.43' is not a number"),
        ("util=85.37%", "util=8.5.37%", "33: util '8.5.37' is not a number"),
    ],
)
def test_a_figure_that_is_no_number_is_named_with_its_line(old: str, new: str, said: str) -> None:
    assert old in QD8
    text = QD8.replace(old, new, 1)
    line = text.splitlines()[int(said.split(":")[0]) - 1].strip()
    assert _refused(text).message == f"x.txt:{said}: {line!r}"


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("bw=23715KB/s", "bw=2.37.15KB/s", "8: bw '2.37.15' is not a number"),
        ("iops=5928,", "iops=59.2.8,", "8: iops '59.2.8' is not a number"),
    ],
)
def test_a_fio_2_figure_that_is_no_number_is_named(old: str, new: str, said: str) -> None:
    from test_import_text import _ucloud_first_run

    text = _ucloud_first_run().replace("\xa0", " ")
    assert old in text
    text = text.replace(old, new, 1)
    line = text.splitlines()[int(said.split(":")[0]) - 1].strip()
    with pytest.raises(UserError) as e:
        reports(text)
    assert e.value.message == f"x.txt:{said}: {line!r}"


def test_a_long_line_is_cut_in_what_is_said() -> None:
    long = "  read: IOPS=3x4k, " + "z" * 150
    text = QD8.replace("  read: IOPS=304k, BW=1187MiB/s (1245MB/s)(1188MiB/1001msec)", long)
    stripped = long.strip()
    assert _refused(text).message == (
        "x.txt:8: a job's IO line (read/write/trim) is not as fio writes it: "
        f"{stripped[:92]!r}... ({len(stripped)} characters)"
    )


@pytest.mark.parametrize("field", ["min=771", "max=123335", "avg=1683.80", "stdev=1377.43"])
def test_any_one_latency_figure_too_long_for_fio_is_refused(field: str) -> None:
    key = field.split("=")[0]
    line = "    slat (nsec): min=771, max=123335, avg=1683.80, stdev=1377.43"
    huge = line.replace("(nsec)", "(msec)").replace(field, f"{key}=99999999999999")
    assert _refused(QD8.replace(line, huge)).message == (
        f"x.txt:9: a latency is more than fio measures: {huge.strip()!r}"
    )


def test_counts_up_to_the_largest_number_iobench_takes() -> None:
    top = str(2**63 - 1)
    issued = "     issued rwts: total=304217,0,0,0 short=0,0,0,0 dropped=0,0,0,0"
    for n in range(3):
        totals = ["304217", "0", "0"]
        totals[n] = str(2**63)
        text = QD8.replace(issued, issued.replace("total=304217,0,0", "total=" + ",".join(totals)))
        assert _refused(text).message.startswith(
            "x.txt:26: an issued count is more than fio counts"
        )
    ok = QD8.replace(issued, issued.replace("total=304217,0,0", f"total=304217,0,{top}"))
    assert len(reports(ok)) == 1
    disk = "  vda: ios=266378/0, merge=0/0, ticks=3982/0, in_queue=3983, util=85.37%"
    (r,) = reports(QD8.replace(disk, disk.replace("in_queue=3983", f"in_queue={top}")))
    assert r.output.disk_util[0].in_queue_ms == 2**63 - 1
    big = QD8.replace(disk, disk.replace("in_queue=3983", f"in_queue={2**63}"))
    assert _refused(big).message.startswith("x.txt:33: a disk count is more than fio counts")
    pct = "     | 99.99th=[ 5342]"
    nsec = QD8.replace("clat percentiles (usec)", "clat percentiles (nsec)")
    (r,) = reports(nsec.replace(pct, f"     | 99.99th=[{top}]"))
    assert r.output.jobs[0].read.clat.percentile(99.99) == float(2**63 - 1)


def test_the_0th_percentile_is_none_of_fio_s_and_the_100th_is() -> None:
    pct = "     | 99.99th=[ 5342]"
    (r,) = reports(QD8.replace(pct, "     | 100.00th=[ 5342]"))
    assert r.output.jobs[0].read.clat.percentile(100.0) == 5342000.0
    zero = QD8.replace(pct, "     | 0.00th=[ 5342]")
    assert _refused(zero).message == (
        "x.txt:17: percentile 0.00th=[5342] is not one fio reports: '| 0.00th=[ 5342]'"
    )


def test_percentiles_without_their_latency_line_are_refused() -> None:
    text = QD8.replace("    clat (usec): min=9, max=27705, avg=24.46, stdev=193.32\n", "")
    assert _refused(text).message == (
        "x.txt:11: clat percentiles without the clat line before them: 'clat percentiles (usec):'"
    )


# -- amounts as fio prints them ------------------------------------------------------------


def test_an_amount_in_bytes_and_its_last_digit() -> None:
    line = "  read: IOPS=304k, BW=1187MiB/s (1245MB/s)(1188MiB/1001msec)"
    (job,) = parse_normal_output(QD8, "x.txt")[0].jobs
    assert job.read is not None and job.read.io_bytes_step == 1 << 20
    plain = QD8.replace(line, line.replace("(1188MiB/", "(4096B/"))
    (job,) = parse_normal_output(plain, "x.txt")[0].jobs
    assert job.read is not None and (job.read.io_bytes, job.read.io_bytes_step) == (4096, 1)
    tenths = QD8.replace(line, line.replace("(1188MiB/", "(1.16GiB/"))
    (job,) = parse_normal_output(tenths, "x.txt")[0].jobs
    assert job.read is not None
    assert job.read.io_bytes == round(1.16 * 2**30)
    assert job.read.io_bytes_step == round(2**30 / 100)


def test_an_si_rate_without_its_iec_twin_is_read_in_powers_of_1000() -> None:
    line = "  read: IOPS=304k, BW=1187MiB/s (1245MB/s)(1188MiB/1001msec)"
    text = QD8.replace(line, line.replace("BW=1187MiB/s (1245MB/s)", "BW=1245MB/s (1245MB/s)"))
    (job,) = parse_normal_output(text, "x.txt")[0].jobs
    assert job.read is not None and job.read.bw_bytes == 1245 * 10**6


def test_fio_2_s_t_is_its_p() -> None:
    """fio 2.x's num2str has no T: had it one, it would be the fourth power of kb_base."""
    from test_import_text import _ucloud_first_run

    text = _ucloud_first_run().replace("io=23160MB,", "io=2TB,")
    (job,) = parse_normal_output(text, "x.txt")[0].jobs
    assert job.read is not None and job.read.io_bytes == 2 * 1024**4


def test_fio_2_s_layout_without_a_version_line_is_fio_2_s() -> None:
    from test_import_text import _ucloud_first_run

    text = _ucloud_first_run().replace("fio-2.1.10", "")
    out = parse_normal_output(text, "x.txt")[0]
    assert out.fio_version is None and out.latency_unit == "us"
    assert parse_normal_output(QD8.replace("fio-3.33", ""), "x.txt")[0].latency_unit == "ns"


def test_fio_2_0_s_space_before_a_comma() -> None:
    from test_import_text import _ucloud_first_run

    text = _ucloud_first_run()
    spaced = text.replace("iops=5928,", "iops=5928 ,")
    assert spaced != text
    assert parse_normal_output(spaced, "x.txt")[0] == parse_normal_output(text, "x.txt")[0]


# -- lines that are no figures ----------------------------------------------------------------


def test_an_ellipsis_in_a_paste_is_not_fio_s_clones_mark() -> None:
    """fio prints ``...`` under a job's header line for its clones; an article elides with
    it anywhere."""
    text = "...\n" + QD8.replace(RESULT, RESULT + "\n...")
    (r,) = reports(text)
    assert r.raw["jobs"][0]["job options"]["numjobs"] == "1"


def test_latency_lines_before_any_direction_are_read_past() -> None:
    text = QD8.replace("  read: IOPS=304k, BW=1187MiB/s (1245MB/s)(1188MiB/1001msec)\n", "")
    (job,) = parse_normal_output(text, "x.txt")[0].jobs
    assert job.read is None and job.write is None


def test_a_line_ending_in_a_backslash_that_is_no_command_is_read() -> None:
    cpu = "  cpu          : usr=12.00%, sys=59.20%, ctx=32357, majf=0, minf=18"
    (job,) = parse_normal_output(QD8.replace(cpu, cpu + " \\"), "x.txt")[0].jobs
    assert job.usr_cpu_pct == 12.0


def test_a_command_line_continued_over_lines_is_read_whole() -> None:
    cmd = "$ fio --name=randread \\\n  --rw=randread --bs=8k\\\n  --filename=/d/f --direct=1\n"
    (r,) = reports(cmd + QD8)
    (job,) = r.raw["jobs"]
    assert job[OPTIONS_COMPLETE_KEY] is True
    assert job["job options"]["bs"] == "8k" and job["job options"]["direct"] == "1"


def test_a_line_of_exactly_the_longest_length_is_read_and_a_longer_one_skipped() -> None:
    from iobench.fio.text import MAX_LINE_CHARS

    padded = RESULT + " " * (MAX_LINE_CHARS - len(RESULT))
    assert len(padded) == MAX_LINE_CHARS
    (r,) = reports(QD8.replace(RESULT, padded))
    assert r.output.jobs[0].jobname == "randread"
    noise = "y" * (MAX_LINE_CHARS + 1)
    (r,) = reports(noise + "\n" + QD8.replace("\n\n", "\n" + noise + "\n", 1))
    assert r.output.jobs[0].read is not None


def test_one_letter_job_names_and_lines_that_only_start_with_the_mark() -> None:
    text = QD8.replace("randread: (g=0)", "r: (g=0)").replace(
        RESULT, RESULT.replace("randread", "r")
    )
    (r,) = reports(text)
    assert r.output.jobs[0].jobname == "r"
    assert r.raw["jobs"][0][OPTIONS_FROM_KEY] == "fio's job header line"
    stray = QD8.replace("Starting 1 process", ": (groupid=0, jobs=1): err= 0: pid=1\n: (g=0): x")
    (r,) = reports(stray)
    assert [j.jobname for j in r.output.jobs] == ["randread"]


def test_a_header_line_s_group_has_at_most_9_digits() -> None:
    big = "123456789"
    text = QD8.replace("(g=0)", f"(g={big})").replace("groupid=0,", f"groupid={big},")
    (r,) = reports(text)
    assert r.raw["jobs"][0][OPTIONS_FROM_KEY] == "fio's job header line"
    longer = QD8.replace("(g=0)", "(g=1234567890)")
    (r,) = reports(longer)
    assert r.raw["jobs"][0][OPTIONS_FROM_KEY] != "fio's job header line"


def test_more_job_results_than_iobench_reads_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from iobench.fio import text as text_module

    monkeypatch.setattr(text_module, "MAX_JOBS", 3)
    block = QD8[QD8.index(RESULT) : QD8.index("Run status")]
    three = QD8.replace(block, block * 3)
    assert len(reports(three)[0].output.jobs) == 3
    four = QD8.replace(block, block * 4)
    line = 7 + 3 * block.count("\n")
    assert _refused(four).message == (
        f"x.txt:{line}: more than 3 job results: not a fio output: {RESULT!r}"
    )


def test_fio_command_lines_count_up_to_max_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    """A paste holds a few fio command lines; after MAX_COMMANDS of them no more are read
    (each costs a shell-quoting parse)."""
    from iobench.fio import text as text_module

    monkeypatch.setattr(text_module, "MAX_COMMANDS", 3)
    other = "$ fio --name=other --rw=write\nsome words\n"
    cmd = "$ fio --name=randread --rw=randread --filename=/d/f --direct=1\n"
    (r,) = reports(other * 2 + cmd + QD8)  # the third: read
    assert r.raw["jobs"][0][OPTIONS_COMPLETE_KEY] is True
    (r,) = reports(other * 3 + cmd + QD8)  # the fourth: not read
    assert r.raw["jobs"][0][OPTIONS_COMPLETE_KEY] is False


def test_a_client_text_s_version_is_fio_s() -> None:
    (r,) = reports(CLIENTS)
    assert r.output.fio_version == "3.33"


def test_a_second_run_started_by_its_command_line_starts_there() -> None:
    cmd = "$ fio --name=seqread --rw=read\n"
    _, second = reports(QD8 + "\n" + cmd + TWO_GROUPS)
    assert second.session == 1 and second.start == len(QD8) + 1


@pytest.mark.parametrize(
    "between", ["Starting 1 process", "  Jobs: 1 (f=1): [R(1)]", "fio: a warning", "fio-3.33"]
)
def test_a_command_line_followed_by_what_fio_prints_first_ran_the_jobs(between: str) -> None:
    """The fio command line above the output is the job's when what follows it is what
    fio prints first (progress, a message, its version); other text ends it."""
    cmd = "$ fio --name=randread --filename=/d/f --rw=randread --direct=1\n"
    body = QD8.replace(QD8.splitlines()[0] + "\n", "")
    (r,) = reports(f"{cmd}{between}\n{body}")
    assert r.raw["jobs"][0][OPTIONS_COMPLETE_KEY] is True
    assert r.raw["jobs"][0]["job options"]["rw"] == "randread"
    (r,) = reports(f"{cmd}something else\n{body}")
    assert r.raw["jobs"][0][OPTIONS_COMPLETE_KEY] is False
    assert r.raw["jobs"][0][OPTIONS_FROM_KEY] == "fio's result lines (iodepth, numjobs)"


def test_two_servers_whose_jobs_have_the_same_pid_are_two_clients() -> None:
    """Servers in containers or namespaces each number their processes alike: two hello
    lines and two reports with the same pids are two servers, not one reporting twice."""
    same = CLIENTS.replace("pid=2025", "pid=2024")
    (r,) = reports(same)
    assert [j.hostname for j in r.output.jobs] == ["client 1", "client 2", None]
    assert r.line == 11


def test_one_server_s_report_printed_again_is_its_last_one() -> None:
    lines = CLIENTS.splitlines()
    head = lines[:1] + lines[2:3] + lines[4:6] + lines[8:9]
    first = [line.replace("IOPS=149k", "IOPS=148k") for line in lines[10:38]]
    (r,) = reports("\n".join(head + first + lines[10:38]))
    assert [j.hostname for j in r.output.jobs] == ["vm"]
    assert r.line == len(head) + len(first) + 1  # the report kept is the last printed
    (job,) = r.output.jobs
    assert job.read is not None and round(job.read.iops, -3) == 149000
