"""Expectations: parsing, checking against a suite and a run, suite files, exit code 4."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import MINI_SUITE, Cli
from iobench.errors import UserError
from iobench.expect import (
    check_against_suite,
    check_run,
    parse_expectation,
    with_expectations,
)
from iobench.model import Expectation, Suite, Workload
from iobench.records import ResultRecord, RunRecord, SuiteDefinition
from iobench.suites import parse_suite


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("rand-r.read.iops>=5000", ("rand-r", "read", "iops", ">=", 5000.0)),
        ("rand-r.read.iops >= 5k", ("rand-r", "read", "iops", ">=", 5000.0)),
        ("a.write.iops>1.2M", ("a", "write", "iops", ">", 1.2e6)),
        ("lat-read.read.p99<5ms", ("lat-read", "read", "p99", "<", 5e6)),
        ("lat-read.read.p99.9<=500us", ("lat-read", "read", "p99.9", "<=", 5e5)),
        ("x.read.mean<120µs", ("x", "read", "mean", "<", 1.2e5)),
        ("db.v2.read.max<1s", ("db.v2", "read", "max", "<", 1e9)),
        ("*.write.bw>=200MB/s", ("*", "write", "bw", ">=", 2e8)),
        ("seq.read.bw>=190MiB/s", ("seq", "read", "bw", ">=", 190 * 2**20)),
        ("mix.total.iops>=3000", ("mix", "total", "iops", ">=", 3000.0)),
        ("w.read.write.p50<1ms", ("w.read", "write", "p50", "<", 1e6)),
    ],
)
def test_expectations_parse_with_their_units(text: str, fields: tuple[Any, ...]) -> None:
    e = parse_expectation(text)
    assert (e.workload, e.direction, e.metric, e.op, e.value) == fields
    assert e.source == "--expect" and " " not in e.text


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("rand-r.read.iops", "not WORKLOAD.DIRECTION.METRIC OP VALUE"),
        ("rand-r.read.iops=5", "not WORKLOAD.DIRECTION.METRIC OP VALUE"),
        ("rand-r.iops>=5", "cannot find WORKLOAD.DIRECTION.METRIC"),
        ("rand-r.sideways.iops>=5", "cannot find"),
        ("rand-r.read.speed>=5", "cannot find"),
        ("rand-r.read.p99<5", "takes a duration with its unit"),
        ("rand-r.read.iops>=5ms", "iops takes a count"),
        ("rand-r.read.bw>=200", "bw takes a rate"),
        ("rand-r.read.bw>=1000Mb/s", r"in bits a second \(b\).*: it is 125MB/s"),
        ("rand-r.total.p99<5ms", "total has only iops and bw"),
    ],
)
def test_malformed_expectations_say_what_is_wrong(text: str, said: str) -> None:
    with pytest.raises(UserError, match=said) as e:
        parse_expectation(text)
    assert repr(text) in e.value.message


def _suite(*ws: tuple[str, str]) -> Suite:
    return Suite("s", "d", tuple(Workload(n, rw, 4096, 1, 1) for n, rw in ws), "builtin")


def test_expectations_must_name_a_workload_and_a_direction_it_does() -> None:
    suite = _suite(("rr", "randread"), ("mix", "randrw"), ("tw", "trimwrite"))
    check_against_suite([parse_expectation("mix.write.iops>=1")], suite, "--expect")
    check_against_suite([parse_expectation("tw.trim.iops>=1")], suite, "--expect")
    check_against_suite([parse_expectation("*.write.iops>=1")], suite, "--expect")
    with pytest.raises(UserError, match="no workload 'nope'") as e:
        check_against_suite([parse_expectation("nope.read.iops>=1")], suite, "--expect")
    assert "rr, mix, tw" in (e.value.hint or "")
    with pytest.raises(UserError, match="no write IO in rr"):
        check_against_suite([parse_expectation("rr.write.iops>=1")], suite, "--expect")
    with pytest.raises(UserError, match="no trim IO"):
        with_expectations(_suite(("rr", "randread")), ["*.trim.iops>=1"])
    added = with_expectations(suite, ["rr.read.iops>=1"])
    assert [e.text for e in added.expectations] == ["rr.read.iops>=1"]


def test_a_suite_file_carries_expectations_and_names_the_line_of_a_bad_one() -> None:
    text = MINI_SUITE.replace(
        'description = "one read and one write workload"\n',
        'description = "one read and one write workload"\nexpect = ["rr.read.iops>=5k", '
        '"rw.write.p99<10ms"]\n',
    )
    suite = parse_suite(text, "s.toml", "s.toml")
    assert [(e.text, e.source) for e in suite.expectations] == [
        ("rr.read.iops>=5k", "suite"),
        ("rw.write.p99<10ms", "suite"),
    ]
    bad = text.replace('"rw.write.p99<10ms"', '"rw.read.p99<10ms"')
    with pytest.raises(UserError, match=r"^s\.toml:3: expect 'rw\.read\.p99<10ms': no read IO"):
        parse_suite(bad, "s.toml", "s.toml")
    with pytest.raises(UserError, match="expect must be a list of strings"):
        parse_suite(text.replace('expect = ["rr.read.iops>=5k", ', "expect = [5, "), "s", "s")


def _result(workload: str, metrics: dict[str, Any] | None, **kw: Any) -> ResultRecord:
    base: dict[str, Any] = {
        "target": "/mnt/a", "workload": workload, "position": 0, "status": "ok",
        "params": {"rw": "randread", "bs": 4096}, "metrics": metrics, "job_file": "",
        "fio_argv": [], "fio_rc": 0, "fio_version": "3.33", "raw_output": None,
        "fio_stdout": None, "fio_stderr": None, "error": None, "started_at": "",
        "finished_at": "",
    }  # fmt: skip
    base.update(kw)
    return ResultRecord(**base)


def _run(expectations: list[Expectation], results: list[ResultRecord]) -> RunRecord:
    return RunRecord(
        id=1, uuid="u", status="complete", suite="s",
        suite_def=SuiteDefinition(expectations=tuple(e.__dict__ for e in expectations)),
        label=None, argv=[],
        host={}, fio_version="3.33", iobench_version="0", warnings=[], error=None,
        started_at="", finished_at="", targets=[], results=results,
    )  # fmt: skip


def _m(iops: float, p99: float, write_iops: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"read": {"iops": iops, "bw_bytes": iops * 4096,
                                    "lat_ns": {"p99": p99, "mean": p99 / 2}}}  # fmt: skip
    if write_iops is not None:
        out["write"] = {"iops": write_iops, "bw_bytes": write_iops * 4096, "lat_ns": {}}
    return out


def test_a_run_is_checked_on_the_mean_of_its_repetitions() -> None:
    results = [
        _result("rr", _m(4000, 2e6), repetition=1),
        _result("rr", _m(6200, 4e6), repetition=2),
        _result("mix", _m(1000, 1e6, write_iops=500)),
    ]
    es = [
        parse_expectation("rr.read.iops>=5000"),
        parse_expectation("rr.read.p99<3ms"),
        parse_expectation("mix.total.iops>=1500"),
        parse_expectation("*.write.iops>=600"),
    ]
    checks = {(c.expectation.text, c.workload): c for c in check_run(_run(es, results))}
    assert checks[("rr.read.iops>=5000", "rr")].measured == pytest.approx(5100)
    assert checks[("rr.read.iops>=5000", "rr")].passed
    assert checks[("rr.read.p99<3ms", "rr")].measured == pytest.approx(3e6)
    assert not checks[("rr.read.p99<3ms", "rr")].passed  # 3 ms is not below 3 ms
    assert checks[("mix.total.iops>=1500", "mix")].passed
    # The wildcard applies where the direction exists: mix writes, rr does not.
    assert not checks[("*.write.iops>=600", "mix")].passed
    assert ("*.write.iops>=600", "rr") not in checks


def test_a_failed_workload_fails_its_expectations_and_clients_use_the_aggregate() -> None:
    failed = _result("rr", None, status="failed", error="fio failed")
    (check,) = check_run(_run([parse_expectation("rr.read.iops>=1")], [failed]))
    assert check.measured is None and not check.passed
    results = [
        _result("rr", _m(900, 1e6), client="10.0.0.2", clients=2),
        _result("rr", _m(1000, 1e6), client="10.0.0.3", clients=2),
        _result("rr", _m(1900, 1e6), client="all", clients=2),
    ]
    (check,) = check_run(_run([parse_expectation("rr.read.iops>=1500")], results))
    assert check.measured == 1900 and check.passed and check.target == "/mnt/a, 2 clients"


@pytest.mark.fio
def test_run_exits_4_when_an_expectation_fails_and_0_when_all_hold(
    cli: Cli, mini_suite: str, tmp_path: Path, real_fio: str
) -> None:
    code, out, err = cli(
        "run", str(tmp_path), "--suite", mini_suite, "--expect", "rr.read.iops>=1",
        "--expect", "rw.write.p99<100s", "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert [c["passed"] for c in doc["expectations"]] == [True, True]
    assert doc["expectations"][0]["measured"] == doc["results"][0]["read"]["iops"]
    code, out, err = cli(
        "run", str(tmp_path), "--suite", mini_suite, "--expect", "rr.read.iops>=1",
        "--expect", "*.write.bw>=100GB/s",
    )  # fmt: skip
    assert code == 4
    assert "1 expectation(s) not met: *.write.bw>=100GB/s (rw) on " in err
    assert "FAIL" in out and "1 of 2 met" in out
    # Shown again, and in the reports.
    code, out, _ = cli("show", "latest", "--json")
    assert [c["passed"] for c in json.loads(out)["expectations"]] == [True, False]
    md = tmp_path / "r.md"
    assert cli("report", "latest", "-o", str(md))[0] == 0
    assert "Expectations: 1 of 2 met." in md.read_text()
    assert not list(tmp_path.glob("iobench-*.dat"))


def test_a_malformed_expectation_is_refused_before_anything_runs(
    cli: Cli, mini_suite: str, tmp_path: Path, isolated_db: Path
) -> None:
    code, _, err = cli("run", str(tmp_path), "--suite", mini_suite, "--expect", "rr.read.p99<5")
    assert code == 2 and "p99 takes a duration" in err and "Traceback" not in err
    assert not isolated_db.exists() and list(tmp_path.iterdir()) == [Path(mini_suite)]
