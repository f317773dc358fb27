"""analysis/clients.py without fio: a step's start skew, finishing spread and stragglers,
its per-second aggregate, the scaling table and the findings users read. The real-fio
runs of tests/test_clients.py reach these too, but only through figures a run happens to
give; here each rule is checked at its bounds."""

from __future__ import annotations

from typing import Any

import pytest

from iobench.analysis.clients import (
    ClientShare,
    ScalePoint,
    aggregate_samples,
    late_after_ms,
    scaling,
    step_findings,
    step_timing,
)
from iobench.records import ResultRecord


def share(
    name: str,
    *,
    iops: float = 1000.0,
    runtime_ms: float = 10_000.0,
    start_ms: float | None = 0.0,
    write_iops: float | None = None,
    samples: dict[str, Any] | None = None,
) -> ClientShare:
    metrics: dict[str, Any] = {"read": {"iops": iops, "runtime_ms": runtime_ms}}
    if write_iops is not None:
        metrics["write"] = {"iops": write_iops, "runtime_ms": runtime_ms / 2}
    if samples is None and start_ms is not None:
        samples = {"start_ms": start_ms}
    return ClientShare(name, metrics, samples)


def test_a_shares_figures_sum_its_directions_and_take_the_longest_runtime() -> None:
    s = share("a", iops=300.0, runtime_ms=8000.0, write_iops=100.0)
    assert s.iops == 400.0
    assert s.runtime_ms == 8000.0
    assert s.start_ms == 0.0
    assert ClientShare("b", {}, None).iops == 0.0
    assert ClientShare("b", {}, None).runtime_ms == 0.0
    assert ClientShare("b", {}, None).start_ms is None
    assert ClientShare("b", {}, {"start_ms": "12"}).start_ms is None  # not a number
    assert ClientShare("b", {}, {"start_ms": 12}).start_ms == 12.0


@pytest.mark.parametrize(
    ("runtime_ms", "late"),
    [(0.0, 1000.0), (10_000.0, 1000.0), (10_001.0, 1000.1), (60_000.0, 6000.0)],
)
def test_clients_may_be_a_second_or_a_tenth_of_the_runtime_apart(
    runtime_ms: float, late: float
) -> None:
    assert late_after_ms(runtime_ms) == pytest.approx(late)


def test_start_skew_and_finishing_spread_come_from_the_clients_own_starts() -> None:
    shares = [
        share("a", start_ms=1_000.0, runtime_ms=10_000.0),
        share("b", start_ms=1_250.0, runtime_ms=10_100.0),
        share("c", start_ms=None),  # no samples: neither skew nor spread counts it
    ]
    out = step_timing(shares, ["d"])
    assert out == {
        "count": 4,
        "finished": ["a", "b", "c"],
        "failed": ["d"],
        "start_skew_ms": 250.0,
        "finish_spread_ms": 350.0,
        "stragglers": [],
    }


def test_one_client_has_no_skew_spread_or_stragglers() -> None:
    out = step_timing([share("a", iops=1.0)], [])
    assert out == {
        "count": 1, "finished": ["a"], "failed": [], "start_skew_ms": None,
        "finish_spread_ms": None, "stragglers": [],
    }  # fmt: skip
    assert step_timing([], ["a", "b"])["count"] == 2


@pytest.mark.parametrize(("slow", "straggles"), [(749.0, True), (750.0, False), (1000.0, False)])
def test_a_client_under_three_quarters_of_the_median_throughput_straggles(
    slow: float, straggles: bool
) -> None:
    shares = [share("a"), share("b"), share("c", iops=slow)]
    stragglers = step_timing(shares, [])["stragglers"]
    if straggles:
        assert stragglers == [{"client": "c", "why": "75% of the median throughput"}]
    else:
        assert stragglers == []


def test_the_median_is_the_clients_not_their_mean() -> None:
    # mean 1,366: 600 would be under 75 % of it (44 %) but is 60 % of the median 1,000
    shares = [share("a", iops=1000.0), share("b", iops=2500.0), share("c", iops=600.0)]
    assert step_timing(shares, [])["stragglers"] == [
        {"client": "c", "why": "60% of the median throughput"}
    ]


@pytest.mark.parametrize(
    ("runtime_ms", "late_ms", "straggles"),
    [
        (10_000.0, 1000.0, False),  # exactly the second allowed
        (10_000.0, 1001.0, True),
        (30_000.0, 2999.0, False),  # a tenth of a longer runtime
        (30_000.0, 3001.0, True),
    ],
)
def test_a_client_finishing_long_after_the_median_straggles(
    runtime_ms: float, late_ms: float, straggles: bool
) -> None:
    shares = [
        share("a", runtime_ms=runtime_ms),
        share("b", runtime_ms=runtime_ms),
        share("c", runtime_ms=runtime_ms, start_ms=late_ms),
    ]
    out = step_timing(shares, [])
    assert out["start_skew_ms"] == late_ms
    if straggles:
        assert out["stragglers"] == [
            {"client": "c", "why": f"finished {late_ms / 1000:.1f} s after the median"}
        ]
    else:
        assert out["stragglers"] == []


def test_a_slow_and_late_client_is_told_both() -> None:
    shares = [share("a"), share("b"), share("c", iops=100.0, start_ms=5000.0)]
    assert step_timing(shares, [])["stragglers"] == [
        {"client": "c", "why": "10% of the median throughput; finished 5.0 s after the median"}
    ]


def test_clients_that_did_nothing_are_no_stragglers_of_each_other() -> None:
    shares = [share("a", iops=0.0), share("b", iops=0.0)]
    assert step_timing(shares, [])["stragglers"] == []


def series(t_s: list[float], iops: list[float], lat: list[float | None]) -> dict[str, Any]:
    return {"t_s": t_s, "iops": iops, "bw_bytes": [i * 4096 for i in iops], "lat_mean_ns": lat}


def test_the_per_second_aggregate_sums_the_clients_on_the_servers_clocks() -> None:
    a = share("a", samples={
        "interval_ms": 1000, "start_ms": 10_000,
        "read": series([1.0, 2.0, 3.0], [100.0, 200.0, 300.0], [1000.0, 2000.0, 3000.0]),
    })  # fmt: skip
    b = share("b", samples={
        "interval_ms": 1000, "start_ms": 11_000,  # a second later: its 1 s is a's 2 s
        "read": series([1.0, 2.0], [300.0, 100.0], [3000.0, 1000.0]),
    })  # fmt: skip
    out = aggregate_samples([a, b])
    assert out is not None
    assert out["interval_ms"] == 1000 and out["start_ms"] == 10_000
    read = out["read"]
    assert read["t_s"] == [1.0, 2.0, 3.0]
    assert read["iops"] == [None, 500.0, 400.0]  # b logged nothing in a's first second
    assert read["bw_bytes"] == [None, 500.0 * 4096, 400.0 * 4096]
    # IOPS-weighted: (200 x 2000 + 300 x 3000) / 500, (300 x 3000 + 100 x 1000) / 400
    assert read["lat_mean_ns"] == [None, pytest.approx(2600.0), pytest.approx(2500.0)]
    assert "write" not in out


def test_the_aggregate_rounds_a_servers_offset_to_the_nearest_interval() -> None:
    def one(start: float) -> ClientShare:
        read = series([0.5, 1.0], [10.0, 20.0], [5.0, 5.0])
        return share("x", samples={"interval_ms": 500, "start_ms": start, "read": read})

    out = aggregate_samples([one(0.0), one(240.0)])  # 240 ms: the same half-second slot
    assert out is not None and out["read"]["t_s"] == [0.5, 1.0]
    assert out["read"]["iops"] == [20.0, 40.0]
    out = aggregate_samples([one(0.0), one(260.0)])  # 260 ms: the next one
    assert out is not None and out["read"]["t_s"] == [0.5, 1.0, 1.5]
    assert out["read"]["iops"] == [None, 30.0, None]


def test_a_direction_some_client_did_not_do_has_no_aggregate() -> None:
    both = {"interval_ms": 1000, "start_ms": 0, "read": series([1.0], [5.0], [1.0]),
            "write": series([1.0], [7.0], [2.0])}  # fmt: skip
    reads = {"interval_ms": 1000, "start_ms": 0, "read": series([1.0], [3.0], [3.0])}
    out = aggregate_samples([share("a", samples=both), share("b", samples=reads)])
    assert out is not None and "write" not in out
    assert out["read"]["iops"] == [8.0]
    assert out["read"]["lat_mean_ns"] == [pytest.approx((5 * 1 + 3 * 3) / 8)]
    writes = {"interval_ms": 1000, "start_ms": 0, "write": series([1.0], [3.0], [3.0])}
    assert aggregate_samples([share("a", samples=reads), share("b", samples=writes)]) is None
    # a direction only some clients did does not hide the next one
    out = aggregate_samples([share("a", samples=both), share("b", samples=writes)])
    assert out is not None and "read" not in out
    assert out["write"]["iops"] == [10.0]


def test_no_aggregate_without_every_clients_timed_samples() -> None:
    timed = {"interval_ms": 1000, "start_ms": 0, "read": series([1.0], [5.0], [1.0])}
    assert aggregate_samples([]) is None
    assert aggregate_samples([share("a", samples=timed), share("b", start_ms=None)]) is None
    untimed = {"interval_ms": 1000, "read": series([1.0], [5.0], [1.0])}
    assert aggregate_samples([share("a", samples=timed), share("b", samples=untimed)]) is None
    # the interval defaults to a second when a log does not say
    out = aggregate_samples([share("a", samples={"start_ms": 0, "read": timed["read"]})])
    assert out is not None and out["interval_ms"] == 1000


def test_a_seconds_latency_is_unknown_when_a_client_has_none_or_no_io() -> None:
    a = {"interval_ms": 1000, "start_ms": 0, "read": series([1.0, 2.0], [5.0, 0.0], [None, 1.0])}
    b = {"interval_ms": 1000, "start_ms": 0, "read": series([1.0, 2.0], [5.0, 0.0], [2.0, 1.0])}
    out = aggregate_samples([share("a", samples=a), share("b", samples=b)])
    assert out is not None
    assert out["read"]["iops"] == [10.0, 0.0]
    assert out["read"]["lat_mean_ns"] == [None, None]


def test_scaling_is_measured_against_the_fewest_clients() -> None:
    points = scaling({4: (3200.0, 40.0), 1: (1000.0, 10.0), 2: (1800.0, None)})
    assert points == [
        ScalePoint(1, 1000.0, 1000.0, 1.0, 10.0, 10.0),
        ScalePoint(2, 1800.0, 900.0, 0.9, None, None),
        ScalePoint(4, 3200.0, 800.0, 0.8, 40.0, 10.0),
    ]
    two = scaling({2: (1000.0, None), 4: (1500.0, None)})  # the base is 2 clients' 500 each
    assert [p.efficiency for p in two] == [1.0, 0.75]
    assert scaling({}) == []
    assert [p.efficiency for p in scaling({1: (0.0, None), 2: (10.0, None)})] == [None, None]


def result(
    client: str | None, summary: dict[str, Any] | None, runtime_s: float = 10
) -> ResultRecord:
    return ResultRecord(
        target="/t", workload="rr", position=1, status="ok", params={"runtime_s": runtime_s},
        metrics=None if summary is None else {"clients": summary}, job_file="", fio_argv=[],
        fio_rc=0, fio_version="fio-3.33", raw_output=None, fio_stdout=None, fio_stderr=None,
        error=None, started_at="", finished_at="", client=client, clients=3,
    )  # fmt: skip


def test_stragglers_and_a_wide_start_are_warnings_on_the_aggregate() -> None:
    summary = {
        "stragglers": [{"client": "c", "why": "40% of the median throughput"}],
        "start_skew_ms": 1500,
    }
    found = step_findings([result("all", summary), result("c", summary)])  # a client's: none
    assert [(f.id, f.severity, f.workload) for f in found] == [
        ("client-straggler", "warning", "rr"),
        ("start-skew", "warning", "rr"),
    ]
    assert found[0].message == "rr on 3 clients: client c lagged: 40% of the median throughput"
    assert "its load, its network path, its mount options" in found[0].fix
    assert found[1].message.startswith("rr on 3 clients: the clients started 1.5 s apart")
    assert "NTP" in found[1].fix and "--runtime" in found[1].fix


@pytest.mark.parametrize(
    ("skew", "runtime_s", "warned"),
    [(1000, 10, False), (1001, 10, True), (2999, 30, False), (3001, 30, True), (None, 10, False)],
)
def test_the_start_skew_warning_needs_more_than_a_second_or_a_tenth_of_the_runtime(
    skew: int | None, runtime_s: float, warned: bool
) -> None:
    found = step_findings([result("all", {"start_skew_ms": skew}, runtime_s)])
    assert [f.id for f in found] == (["start-skew"] if warned else [])


def test_results_without_a_clients_summary_say_nothing() -> None:
    assert step_findings([result(None, None), result("all", None), result("all", {})]) == []


def test_two_clients_are_judged_against_each_other() -> None:
    # the median of two is their mean: 400 is under 75 % of 700
    out = step_timing([share("a", iops=1000.0), share("b", iops=400.0)], [])
    assert out["stragglers"] == [{"client": "b", "why": "57% of the median throughput"}]


def test_clients_without_timed_samples_are_judged_by_throughput_only() -> None:
    out = step_timing([share("a", start_ms=None), share("b", start_ms=None, iops=10.0)], [])
    assert out["start_skew_ms"] is None and out["finish_spread_ms"] is None
    assert out["stragglers"] == [{"client": "b", "why": "2% of the median throughput"}]  # of 505


def test_how_late_is_said_in_seconds() -> None:
    shares = [share("a"), share("b"), share("c", start_ms=2950.0)]
    assert step_timing(shares, [])["stragglers"] == [
        {"client": "c", "why": "finished 3.0 s after the median"}
    ]


def test_a_long_run_keeps_its_late_seconds_where_they_were() -> None:
    late = {
        "interval_ms": 1000,
        "start_ms": 0,
        "read": series([600.0, 601.0], [1.0, 2.0], [1.0, 1.0]),
    }
    out = aggregate_samples([share("a", samples=late)])
    assert out is not None and out["read"]["t_s"] == [600.0, 601.0]


def test_a_ragged_series_is_refused_not_cut() -> None:
    read = {"t_s": [1.0, 2.0], "iops": [1.0], "bw_bytes": [1.0], "lat_mean_ns": [1.0]}
    ragged = {"interval_ms": 1000, "start_ms": 0, "read": read}
    with pytest.raises(ValueError):
        aggregate_samples([share("a", samples=ragged)])


def test_a_seconds_latency_is_weighted_by_iops_not_bandwidth_and_counts_zeros() -> None:
    def one(iops: float, bw: float, lat: float) -> ClientShare:
        read = {"t_s": [1.0], "iops": [iops], "bw_bytes": [bw], "lat_mean_ns": [lat]}
        return share("x", samples={"interval_ms": 1000, "start_ms": 0, "read": read})

    # by IOPS (1 and 3): (10 x 1 + 2 x 3) / 4 = 4; by bandwidth (300, 100) it would be 8
    out = aggregate_samples([one(1.0, 300.0, 10.0), one(3.0, 100.0, 2.0)])
    assert out is not None and out["read"]["lat_mean_ns"] == [pytest.approx(4.0)]
    # a client with no IO that second weighs nothing; a latency of 0 is a latency
    out = aggregate_samples([one(0.0, 0.0, 100.0), one(5.0, 20.0, 2.0)])
    assert out is not None and out["read"]["lat_mean_ns"] == [pytest.approx(2.0)]
    out = aggregate_samples([one(5.0, 20.0, 0.0), one(5.0, 20.0, 2.0)])
    assert out is not None and out["read"]["lat_mean_ns"] == [pytest.approx(1.0)]


def test_every_aggregate_is_looked_at_and_its_warnings_say_what_to_do() -> None:
    summary = {"stragglers": [{"client": "c", "why": "x"}], "start_skew_ms": 2950}
    found = step_findings([result(None, None), result("all", {}), result("all", summary)])
    assert [f.id for f in found] == ["client-straggler", "start-skew"]
    assert found[0].fix == (
        "look at that client (its load, its network path, its mount options): the "
        "aggregate includes it"
    )
    assert found[1].message == (
        "rr on 3 clients: the clients started 3.0 s apart (by their own clocks), so they all "
        "ran together for less than the whole runtime (the aggregate is taken over the "
        "seconds they did)"
    )
    assert found[1].fix == (
        "check that the clients' clocks are synchronised (NTP); use a longer --runtime so "
        "the skew matters less"
    )
