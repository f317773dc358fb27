"""Comparing runs: matching on the workloads' shape (durations shown, not a reason to leave a
workload out), ratios, verdicts, unmatched workloads, context differences, the JSON document
and the renderings. Runs are built directly (no database, no fio) with known numbers; the
verdict rules themselves are tested in test_verdicts.py."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from io import StringIO
from typing import Any

import pytest
from rich.console import Console

from iobench.analysis.compare import compare, summarize_results, unstable
from iobench.analysis.histogram import merge_bins, percentiles_from_bins
from iobench.errors import UserError
from iobench.records import ResultRecord, RunRecord, SuiteDefinition, TargetRecord
from iobench.report.compare import format_ratio, render_comparison

PARAMS: dict[str, Any] = {
    "rw": "randread",
    "bs": 4096,
    "iodepth": 1,
    "numjobs": 1,
    "ioengine": "libaio",
    "direct": True,
    "runtime_s": 60.0,
    "ramp_s": 5.0,
    "size": 1 << 30,
    "rwmixread": None,
    "options": {},
}


def params(**changes: Any) -> dict[str, Any]:
    return {**PARAMS, **changes}


def direction(
    iops: float,
    *,
    lat_mean: float = 200_000.0,
    p99: int = 300_000,
    bins: dict[str, int] | None = None,
    bs: int = 4096,
) -> dict[str, Any]:
    lat: dict[str, Any] = {"n": 1000, "mean": lat_mean, "min": 1000, "max": 900_000}
    lat["p99"] = p99
    if bins is not None:
        lat["bins"] = bins
    return {"iops": iops, "bw_bytes": iops * bs, "io_bytes": 1, "lat_ns": lat}


def result(
    workload: str,
    iops: float | None = None,
    *,
    target: str = "/mnt/a",
    rep: int = 1,
    position: int = 0,
    p: dict[str, Any] | None = None,
    read: dict[str, Any] | None = None,
    write: dict[str, Any] | None = None,
    status: str = "ok",
    error: str | None = None,
    samples: Sequence[float | None] | None = None,
) -> ResultRecord:
    """One result; ``samples``: its per-second IOPS (bandwidth and latency follow), in the
    direction it did."""
    if read is None and iops is not None:
        read = direction(iops)
    metrics = None if status != "ok" else {"read": read, "write": write, "trim": None}
    return ResultRecord(
        target=target,
        workload=workload,
        position=position,
        status=status,
        params=p or params(),
        metrics=metrics,
        job_file="",
        fio_argv=[],
        fio_rc=0,
        fio_version="3.33",
        raw_output=None,
        fio_stdout=None,
        fio_stderr=None,
        error=error,
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:01:00Z",
        repetition=rep,
        samples=None if samples is None else per_second(samples, "read" if read else "write"),
    )


def per_second(iops: Sequence[float | None], d: str) -> dict[str, Any]:
    """``ResultRecord.samples`` as fio/logs.py makes them, from per-second IOPS."""
    return {
        "interval_ms": 1000,
        d: {
            "t_s": [float(i + 1) for i in range(len(iops))],
            "iops": list(iops),
            "bw_bytes": [None if v is None else v * 4096 for v in iops],
            "lat_mean_ns": [None if not v else 1e9 / v for v in iops],
        },
    }


def context(fstype: str = "ext4", options: str = "rw,relatime", model: str = "SSD 1") -> Any:
    return {
        "filesystem": {"fstype": fstype, "options": options},
        "block": {"disks": [{"model": model, "vendor": "ACME", "transport": "nvme"}]},
    }


def run(
    run_id: int,
    results: list[ResultRecord],
    *,
    label: str | None = None,
    targets: list[str] | None = None,
    kernel: str = "6.1.0",
    fio: str = "3.33",
    contexts: dict[str, Any] | None = None,
) -> RunRecord:
    specs = targets or ["/mnt/a"]
    return RunRecord(
        id=run_id,
        uuid=f"uuid-{run_id}",
        status="complete",
        suite="test",
        suite_def=SuiteDefinition(),
        label=label,
        argv=[],
        host={"hostname": "box", "kernel": {"release": kernel}, "cpu": {"model": "CPU"}},
        fio_version=fio,
        iobench_version="0.1.0",
        warnings=[],
        error=None,
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:01:00Z",
        targets=[
            TargetRecord(i, spec, spec, "directory", None, (contexts or {}).get(spec, context()))
            for i, spec in enumerate(specs)
        ],
        results=results,
    )


def reps(workload: str, values: list[float], **kwargs: Any) -> list[ResultRecord]:
    return [result(workload, v, rep=i + 1, **kwargs) for i, v in enumerate(values)]


# -- ratios and verdicts ----------------------------------------------------------------------


def test_latency_and_bandwidth_get_their_own_verdicts() -> None:
    """A rate-limited workload: IOPS equal, latency clearly higher. The IOPS verdict says
    "within noise"; the latency verdict must not hide the difference."""
    base = run(1, [result("rr", read=direction(1000, lat_mean=m), rep=i + 1)
                   for i, m in enumerate([100_000, 101_000, 99_000])])  # fmt: skip
    slow = run(2, [result("rr", read=direction(1000 + i, lat_mean=m), rep=i + 1)
                   for i, m in enumerate([150_000, 151_000, 149_000])])  # fmt: skip
    (row,) = compare([base, slow]).rows
    cell = row.cells[1]
    assert (cell.verdict, cell.bw_verdict, cell.lat_verdict) == (
        "within noise",
        "within noise",
        "slower",
    )
    assert cell.lat_mean_ratio == pytest.approx(1.5)
    fast = run(3, [result("rr", read=direction(1000, lat_mean=m), rep=i + 1)
                   for i, m in enumerate([50_000, 51_000, 49_000])])  # fmt: skip
    assert compare([base, fast]).rows[0].cells[1].lat_verdict == "faster"


def test_repetitions_that_failed_are_counted_not_dropped() -> None:
    base = run(1, reps("rr", [5000, 5100, 4900]))
    partly = run(
        2,
        [result("rr", 3000, rep=1), result("rr", 3100, rep=2),
         result("rr", rep=3, status="failed", error="fio: io_u error")],
    )  # fmt: skip
    c = compare([base, partly])
    (row,) = c.rows
    assert [(cell.iops.n, cell.failed) for cell in row.cells] == [(3, 0), (2, 1)]
    assert c.unmatched == (), "compared on the repetitions that finished"
    assert compare([base, partly]).to_dict()["rows"][0]["cells"][1]["failed"] == 1


def test_a_matched_workload_that_did_no_io_is_listed() -> None:
    a = run(1, [result("rr", read=None), result("x", 100, position=1, p=params(bs=8192))])
    b = run(2, [result("rr", read=None), result("x", 90, position=1, p=params(bs=8192))])
    c = compare([a, b])
    assert [r.workload for r in c.rows] == ["x"]
    assert [(u.setup, u.workload, u.reason) for u in c.unmatched] == [
        ("run 1", "rr", "no IO measured"),
        ("run 2", "rr", "no IO measured"),
    ]


def test_ratio_to_the_baseline_and_a_clear_difference() -> None:
    base = run(1, reps("rr", [4900, 5000, 5100]), label="local-ssd")
    other = run(2, reps("rr", [2900, 3000, 3100]), label="ceph-rbd")
    c = compare([base, other])
    assert c.baseline == "run 1"
    assert [s.name for s in c.setups] == ["local-ssd", "ceph-rbd"]
    (row,) = c.rows
    assert (row.workload, row.direction) == ("rr", "read")
    assert row.params == PARAMS
    first, second = row.cells
    assert (first.setup, first.verdict, first.iops_ratio) == ("run 1", "baseline", None)
    assert second.iops.mean == 3000
    assert second.iops_ratio == 0.6
    assert second.bw_ratio == 0.6
    assert second.lat_mean_ratio == 1.0
    assert second.verdict == "slower"
    assert format_ratio(second.iops_ratio) == "60 %"
    assert c.unmatched == ()


def test_faster_needs_separate_intervals() -> None:
    c = compare([run(1, reps("rr", [1000, 1010, 990])), run(2, reps("rr", [2000, 2010, 1990]))])
    assert c.rows[0].cells[1].verdict == "faster"
    assert c.rows[0].cells[1].iops_ratio == 2.0


def test_overlapping_intervals_are_within_noise_not_a_win() -> None:
    c = compare([run(1, reps("rr", [1000, 1100, 900])), run(2, reps("rr", [1050, 1150, 950]))])
    cell = c.rows[0].cells[1]
    assert cell.iops_ratio == 1.05
    assert cell.verdict == "within noise"


def test_a_single_repetition_without_samples_asks_for_repeats() -> None:
    c = compare([run(1, reps("rr", [5000])), run(2, reps("rr", [3000, 3010]))])
    cell = c.rows[0].cells[1]
    assert cell.iops_ratio == pytest.approx(3005 / 5000)
    assert (cell.verdict, cell.iops_test.reason) == (
        "too few repeats",
        "run --repeat 3; noise not measured",
    )


def test_a_single_repetition_is_judged_on_its_per_second_samples() -> None:
    """No repetitions: each run's per-second IOPS give a within-run noise, and say so."""
    steady = [1000.0, 1002.0, 998.0, 1001.0, 999.0]
    base = run(1, [result("rr", 1000, samples=steady)])
    same = run(2, [result("rr", 1001, samples=[v + 1 for v in steady])])
    double = run(3, [result("rr", 2500, samples=[v * 2.5 for v in steady])])
    c = compare([base, same, double])
    _, close, far = c.rows[0].cells
    assert (far.verdict, far.iops_test.reason, far.iops_test.basis) == (
        "faster",
        "2x or more beyond within-run noise",
        "within-run",
    )
    assert far.iops_test.value_noise is not None
    assert far.iops_test.value_noise.samples == 5
    # 0.1 % apart: within even the within-run noise.
    assert (close.verdict, close.iops_test.reason) == ("within noise", "within-run noise")
    # The same rules for bandwidth and latency, on their own figures and samples: the
    # latency means are the same (200 µs), whatever the per-second samples.
    assert (far.bw_verdict, far.lat_verdict) == ("faster", "within noise")
    doc = c.to_dict()["rows"][0]["cells"][2]
    assert doc["iops_test"]["noise"] == {
        "basis": "within-run",
        "se": pytest.approx(2500 * statistics.stdev(steady) / 1000 / 5**0.5),
        "df": 4,
        "n": 5,
        "samples": 5,
    }


def test_the_baseline_can_be_chosen() -> None:
    c = compare(
        [run(1, reps("rr", [3000])), run(2, reps("rr", [5000]), label="fast")],
        baseline_run_id=2,
    )
    assert c.baseline == "run 2"
    first, second = c.rows[0].cells
    assert first.iops_ratio == 0.6
    assert second.verdict == "baseline"


def test_a_row_without_the_baseline_has_no_ratios() -> None:
    a = run(1, [result("other", 10, p=params(bs=65536))])
    b = run(2, reps("rr", [3000]))
    c_ = run(3, reps("rr", [6000]))
    c = compare([a, b, c_])
    (row,) = c.rows
    assert [cell.setup for cell in row.cells] == ["run 2", "run 3"]
    assert [cell.verdict for cell in row.cells] == ["no baseline", "no baseline"]
    assert [cell.iops_ratio for cell in row.cells] == [None, None]
    assert [u.setup for u in c.unmatched] == ["run 1"]


def test_failed_repetitions_are_skipped_not_counted_as_zero() -> None:
    results = [
        result("rr", 5000, rep=1),
        result("rr", rep=2, status="failed", error="fio: io_u error"),
        result("rr", 5000, rep=3),
    ]
    c = compare([run(1, results), run(2, reps("rr", [5000, 5000]))])
    assert c.rows[0].cells[0].iops.n == 2
    assert c.rows[0].cells[0].iops.mean == 5000
    assert c.unmatched == ()


# -- matching ---------------------------------------------------------------------------------


def test_workloads_with_different_parameters_are_listed_with_the_reason() -> None:
    seq = params(rw="read")
    a = run(1, [result("rr", 5000), result("seq", 100, position=1, p=seq)])
    b = run(2, [result("rr", 3000), result("seq", 90, position=1, p={**seq, "bs": 8192})])
    c = compare([a, b])
    assert [r.workload for r in c.rows] == ["rr"]
    # Nearest is the workload with fewest differences; on a tie, the one of the same name.
    assert [(u.setup, u.workload, u.reason) for u in c.unmatched] == [
        (
            "run 1",
            "seq",
            "no other run has a workload with these parameters "
            "(nearest: bs 4k vs 8k in run 2, seq)",
        ),
        (
            "run 2",
            "seq",
            "no other run has a workload with these parameters "
            "(nearest: bs 8k vs 4k in run 1, seq)",
        ),
    ]
    assert c.unmatched[0].params == seq


def test_twins_within_a_run_are_matched_by_name() -> None:
    a = run(1, [result("rr", 5000), result("copy", 4000, position=1)])
    b = run(2, [result("rr", 3000)])
    c = compare([a, b])
    assert [(r.workload, len(r.cells)) for r in c.rows] == [("rr", 2)]
    assert [(u.workload, u.reason) for u in c.unmatched] == [
        (
            "copy",
            "its run has other workloads of the same shape (rr), and no other run has one of "
            "this name or with identical parameters",
        )
    ]


def test_nearest_difference_names_the_parameters_in_order() -> None:
    a = run(1, [result("x", 100, p=params(bs=4096, iodepth=1))], label="local-ssd")
    b = run(2, [result("x", 100, p=params(bs=8192, iodepth=32))])
    c = compare([a, b])
    assert c.rows == ()
    assert [u.reason for u in c.unmatched] == [
        "no other run has a workload with these parameters "
        "(nearest: bs 4k vs 8k, iodepth 1 vs 32 in run 2, x)",
        "no other run has a workload with these parameters "
        "(nearest: bs 8k vs 4k, iodepth 32 vs 1 in local-ssd (run 1), x)",
    ]


def test_matching_ignores_names_and_number_spelling() -> None:
    a = run(1, [result("randread-4k", 5000, p=params(runtime_s=60.0))])
    b = run(2, [result("rand-r", 3000, p=params(runtime_s=60))])
    (row,) = compare([a, b]).rows
    assert row.workload == "randread-4k / rand-r"


@pytest.mark.parametrize(
    ("change", "param", "values"),
    [
        ({"runtime_s": 120.0}, "runtime_s", {"run 1": 60, "run 2": 120}),
        ({"ramp_s": 0.0}, "ramp_s", {"run 1": 5, "run 2": 0}),
        ({"size": 1 << 32}, "size", {"run 1": 1 << 30, "run 2": 1 << 32}),
        ({"options": {"time_based": "0"}}, "options.time_based", {"run 1": None, "run 2": "0"}),
    ],
)
def test_durations_that_differ_are_shown_on_the_row_not_a_reason_to_leave_it_out(
    change: dict[str, Any], param: str, values: dict[str, Any]
) -> None:
    a = run(1, reps("rr", [5000, 5010, 4990]))
    b = run(2, reps("rr", [2500, 2510, 2490], p=params(**change)))
    c = compare([a, b])
    assert c.unmatched == ()
    (row,) = c.rows
    assert [(d.param, d.values) for d in row.differs] == [(param, values)]
    assert row.params == PARAMS, "the baseline's parameters"
    assert row.cells[1].iops_ratio == 0.5 and row.cells[1].verdict == "slower"
    assert c.to_dict()["rows"][0]["differs"] == [{"param": param, "values": values}]


def test_every_duration_that_differs_is_listed_in_order() -> None:
    a = run(1, reps("rr", [5000]), label="long")
    b = run(2, reps("rr", [5000], p=params(runtime_s=2.0, ramp_s=1.0, size=8 << 20)))
    c = compare([a, b], baseline_run_id=2)
    (row,) = c.rows
    assert [d.param for d in row.differs] == ["runtime_s", "ramp_s", "size"]
    assert row.params["runtime_s"] == 2.0, "the baseline's parameters, run 2 here"
    from iobench.report.model import differs_text

    names = {s.key: s.name for s in c.setups}
    assert differs_text(row, names) == (
        "not the same duration: runtime 1m (long) vs 2s (run 2); ramp 5s (long) vs 1s "
        "(run 2); size 1G (long) vs 8M (run 2)"
    )


def test_a_pinned_run_is_compared_with_an_unpinned_one_and_the_row_says_so() -> None:
    """--pin-to-device adds cpus_allowed and cpus_allowed_policy to the stored options;
    where fio's jobs ran is not what they did, so the rows still match."""
    pinned = {"cpus_allowed": "1", "cpus_allowed_policy": "split"}
    a = run(1, reps("rr", [5000, 5010, 4990]), label="plain")
    b = run(
        2,
        reps("rr", [6000, 6010, 5990], p=params(runtime_s=2.0, options=pinned)),
        label="pinned",
    )
    c = compare([a, b])
    assert c.unmatched == ()
    (row,) = c.rows
    assert [d.param for d in row.differs] == [
        "runtime_s",
        "options.cpus_allowed",
        "options.cpus_allowed_policy",
    ]
    from iobench.report.model import differs_text

    assert differs_text(row, {s.key: s.name for s in c.setups}) == (
        "not the same duration: runtime 1m (plain) vs 2s (pinned); not the same CPU "
        "placement: cpus_allowed unset (plain) vs 1 (pinned); cpus_allowed_policy unset "
        "(plain) vs split (pinned)"
    )
    # Any other option still defines the shape: not matched.
    other = run(3, reps("rr", [6000], p=params(options={"direct": "0"})), label="other")
    assert compare([a, other]).rows == ()


@pytest.mark.parametrize(
    "change",
    [
        {"bs": 8192},
        {"rw": "randwrite"},
        {"iodepth": 32},
        {"numjobs": 4},
        {"ioengine": "io_uring"},
        {"direct": False},
        {"options": {"rate_iops": "500"}},
    ],
)
def test_workloads_of_another_shape_do_not_match(change: dict[str, Any]) -> None:
    a = run(1, [result("rr", 5000)])
    b = run(2, [result("rr", 5000, p=params(**change, runtime_s=1.0))])
    c = compare([a, b])
    assert c.rows == ()
    (name,) = change
    assert [u.setup for u in c.unmatched] == ["run 1", "run 2"]
    # The nearest workload is named by its shape alone; the runtime is no reason.
    assert f"(nearest: {name} " in c.unmatched[0].reason
    assert "runtime" not in c.unmatched[0].reason


def test_a_mix_of_another_read_share_does_not_match() -> None:
    a = run(1, [result("mix", read=direction(700), write=direction(300),
                       p=params(rw="randrw", rwmixread=70))])  # fmt: skip
    b = run(2, [result("mix", read=direction(500), write=direction(500),
                       p=params(rw="randrw", rwmixread=50))])  # fmt: skip
    c = compare([a, b])
    assert c.rows == ()
    assert "rwmixread 70 vs 50" in c.unmatched[0].reason


def test_workloads_of_one_shape_within_a_run_pair_by_name_then_parameters() -> None:
    """A run that measured one shape twice, for 5 s and for 60 s: each is matched with the
    one of the same name elsewhere, else the one with identical parameters."""
    short = params(runtime_s=5.0)
    a = run(1, [result("short", 5000, p=short), result("long", 4000, position=1)])
    b = run(2, [result("short", 2500, p=short), result("long", 2000, position=1)])
    c = compare([a, b])
    assert [(r.workload, r.differs) for r in c.rows] == [("short", ()), ("long", ())]
    renamed = run(3, [result("s", 2500, p=short), result("l", 2000, position=1)])
    c = compare([a, renamed])
    assert [(r.workload, r.cells[1].iops_ratio, r.differs) for r in c.rows] == [
        ("short / s", 0.5, ()),
        ("long / l", 0.5, ()),
    ]
    assert c.unmatched == ()
    # Nothing says which of the two a third workload of that shape goes with: not matched.
    other = run(4, [result("x", 2500, p=params(runtime_s=30.0))])
    c = compare([a, other])
    assert c.rows == ()
    assert [(u.workload, u.reason) for u in c.unmatched] == [
        (
            "short",
            "its run has other workloads of the same shape (long), and no other run has one "
            "of this name or with identical parameters",
        ),
        (
            "long",
            "its run has other workloads of the same shape (short), and no other run has one "
            "of this name or with identical parameters",
        ),
        (
            "x",
            "run 1 has several workloads of this shape (short, long), none of this name or "
            "with identical parameters",
        ),
    ]


def test_a_workload_that_failed_everywhere_in_a_run_is_listed() -> None:
    a = run(1, [result("rr", 5000), result("rw", 1000, position=1, p=params(rw="randwrite"))])
    b = run(
        2,
        [
            result("rr", 3000),
            result("rw", position=1, p=params(rw="randwrite"), status="failed", error="ENOSPC\nx"),
        ],
    )
    c = compare([a, b])
    assert [(u.setup, u.workload, u.reason) for u in c.unmatched] == [
        ("run 1", "rw", "the workload with these parameters failed in run 2"),
        ("run 2", "rw", "failed: ENOSPC"),
    ]


def test_mixed_workloads_give_a_row_per_direction() -> None:
    mixed = params(rw="randrw", rwmixread=70)
    a = run(1, [result("mix", read=direction(700), write=direction(300), p=mixed)])
    b = run(2, [result("mix", read=direction(350), write=direction(150), p=mixed)])
    c = compare([a, b])
    assert [(r.direction, r.cells[1].iops_ratio) for r in c.rows] == [
        ("read", 0.5),
        ("write", 0.5),
    ]


def test_a_direction_only_one_setup_measured_is_listed() -> None:
    a = run(1, [result("mix", read=direction(700), write=direction(300))])
    b = run(2, [result("mix", read=direction(350))])
    c = compare([a, b])
    assert [r.direction for r in c.rows] == ["read"]
    assert [(u.setup, u.reason) for u in c.unmatched] == [
        ("run 1", "no other run measured its write direction")
    ]


def test_two_targets_of_one_run_are_compared() -> None:
    r = run(
        7,
        [result("rr", 5000, target="/mnt/a"), result("rr", 2500, target="/mnt/b")],
        targets=["/mnt/a", "/mnt/b"],
        contexts={"/mnt/a": context("ext4"), "/mnt/b": context("xfs")},
    )
    c = compare([r])
    assert [s.key for s in c.setups] == ["run 7 /mnt/a", "run 7 /mnt/b"]
    assert c.rows[0].cells[1].iops_ratio == 0.5
    assert [(d.field, d.values) for d in c.context] == [
        ("filesystem", {"run 7 /mnt/a": "ext4", "run 7 /mnt/b": "xfs"})
    ]


def test_a_shared_label_is_told_apart_by_the_key() -> None:
    c = compare(
        [run(3, reps("rr", [1])), run(4, reps("rr", [1]), label="x"), run(5, [], label="x")]
    )
    assert [s.name for s in c.setups] == ["run 3", "x (run 4)", "x (run 5)"]


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        ([run(1, reps("rr", [1]))], "at least two runs"),
        ([run(1, reps("rr", [1])), run(1, reps("rr", [1]))], "run 1 is given twice"),
    ],
)
def test_nothing_to_compare_is_a_user_error(runs: list[RunRecord], message: str) -> None:
    with pytest.raises(UserError, match=message):
        compare(runs)


def test_the_baseline_must_be_one_of_the_runs() -> None:
    with pytest.raises(UserError, match=r"baseline run 9 is not one of the runs compared \(1, 2\)"):
        compare([run(1, reps("rr", [1])), run(2, reps("rr", [1]))], baseline_run_id=9)


# -- percentiles --------------------------------------------------------------------------------


def test_merged_p99_comes_from_the_summed_bins() -> None:
    # Bin keys are fio's representative values: 99840, 501760 and 897024 ns are three.
    bins1 = {"99840": 980, "501760": 20}  # p99 501760
    bins2 = {"99840": 995, "897024": 5}  # p99 99840
    a = run(
        1,
        [
            result("rr", read=direction(100, p99=501760, bins=bins1), rep=1),
            result("rr", read=direction(100, p99=99840, bins=bins2), rep=2),
        ],
    )
    b = run(2, [result("rr", read=direction(100, p99=199680, bins={"199680": 10}))])
    cell = compare([a, b]).rows[0].cells[0]
    merged = merge_bins({99840: 980, 501760: 20}, {99840: 995, 897024: 5})
    assert cell.lat_p99_merged_ns == percentiles_from_bins(merged, [99.0])[0][1]
    # 1975 of 2000 samples are in the first bin, short of 99 %: the merged p99 is the
    # second bin, not the mean of the repetitions' p99s.
    assert cell.lat_p99_merged_ns == 501760.0
    assert cell.lat_p99_ns.mean == (501760 + 99840) / 2


def test_no_merged_p99_when_a_repetition_has_no_bins() -> None:
    a = run(
        1,
        [
            result("rr", read=direction(100, bins={"100000": 10}), rep=1),
            result("rr", read=direction(100), rep=2),
        ],
    )
    cell = compare([a, run(2, reps("rr", [100]))]).rows[0].cells[0]
    assert cell.lat_p99_merged_ns is None
    assert cell.lat_p99_ns.mean == 300000


def clat_only(iops: float, *, p99: int, bins: dict[str, int] | None) -> dict[str, Any]:
    """A direction as fio writes it without lat_percentiles: the total latency has its mean
    only; percentiles and bins are completion latency."""
    d = direction(iops, lat_mean=250_000.0)
    d["lat_ns"] = {"n": 1000, "mean": 250_000.0, "min": 1000, "max": 900_000}
    d["clat_ns"] = {"n": 1000, "mean": 240_000.0, "p99": p99}
    if bins is not None:
        d["clat_ns"]["bins"] = bins
    return d


def test_p99_falls_back_to_completion_latency_per_field() -> None:
    a = run(
        1,
        [
            result("rr", read=clat_only(100, p99=501760, bins={"99840": 980, "501760": 20})),
            result("rr", read=clat_only(100, p99=99840, bins={"99840": 995, "897024": 5}), rep=2),
        ],
    )
    b = run(2, [result("rr", read=clat_only(100, p99=199680, bins=None))])
    base, other = compare([a, b]).rows[0].cells
    # The mean is still total latency; p99 and the merged bins come from clat_ns.
    assert base.lat_mean_ns.mean == 250_000.0
    assert (base.lat_p99_kind, base.lat_p99_merged_ns) == ("clat", 501760.0)
    assert base.lat_p99_ns.mean == (501760 + 99840) / 2
    assert (other.lat_p99_kind, other.lat_p99_merged_ns, other.lat_p99_ns.mean) == (
        "clat",
        None,
        199680,
    )
    out = render([a, b])
    assert "502 µs*" in out and "200 µs*" in out
    assert "* completion latency" in out


def test_no_p99_has_no_kind() -> None:
    d = direction(100)
    del d["lat_ns"]["p99"]
    cell = compare([run(1, [result("rr", read=d)]), run(2, reps("rr", [1]))]).rows[0].cells[0]
    assert (cell.lat_p99_kind, cell.lat_p99_merged_ns, cell.lat_p99_ns.n) == (None, None, 0)
    assert "completion latency" not in render(
        [run(1, [result("rr", read=d)]), run(2, reps("rr", [1]))]
    )


def test_unknown_parameters_show_as_a_dash() -> None:
    p = params(iodepth=None, numjobs=None, bs=None)
    out = render([run(1, [result("rr", 1, p=p)]), run(2, [result("rr", 2, p=p)])])
    assert "(randread - QD-x- 1m)" in out
    assert "None" not in out


# -- context ---------------------------------------------------------------------------------


def test_context_lists_only_the_fields_that_differ() -> None:
    a = run(1, reps("rr", [1]), kernel="6.1.0", fio="3.33")
    b = run(
        2,
        reps("rr", [1]),
        kernel="6.8.0",
        fio="3.33",
        contexts={"/mnt/a": context(options="rw,noatime", model="SSD 2")},
    )
    c = compare([a, b])
    assert [(d.field, d.values) for d in c.context] == [
        ("kernel", {"run 1": "6.1.0", "run 2": "6.8.0"}),
        ("mount options", {"run 1": "rw,relatime", "run 2": "rw,noatime"}),
        (
            "disk 1",
            {"run 1": "nvme, vendor ACME, model SSD 1", "run 2": "nvme, vendor ACME, model SSD 2"},
        ),
    ]


def test_every_stored_context_field_that_differs_is_said() -> None:
    """The throttles (the only real difference between two capped volumes), and any stored
    field beyond what ``info``'s lines say; never a device's name, path or free space,
    which every target has its own of."""

    def ctx(dev: str, iops: int, bps: int, read_ahead: int, free: int) -> Any:
        disk = {
            "kname": dev,
            "path": f"/dev/{dev}",
            "transport": "loop",
            "read_ahead_kb": read_ahead,
        }
        return {
            **context(),
            "filesystem": {"fstype": "ext4", "options": "rw", "free_bytes": free,
                           "source": f"/dev/{dev}"},
            "block": {"disks": [disk],
                      "chain": [{"name": dev, "path": f"/dev/{dev}", "type": "loop"}]},
            "io_devices": [{"kname": dev, "maj_min": "7:0", "role": "target"}],
            "throttles": {"limits": [{"device": dev, "version": 1, "cgroup": "/x",
                                      "read_iops": iops, "read_bps": bps}]},
        }  # fmt: skip

    a = run(1, reps("rr", [1]), contexts={"/mnt/a": ctx("loop0", 3000, 100_000_000, 128, 5)})
    b = run(2, reps("rr", [1]), contexts={"/mnt/a": ctx("loop1", 1200, 40_000_000, 128, 9)})
    fields = {d.field: d.values for d in compare([a, b]).context}
    assert fields == {
        "io throttles": {
            "run 1": "read 3.00k IOPS, read 95.4 MiB/s (cgroup v1)",
            "run 2": "read 1.20k IOPS, read 38.1 MiB/s (cgroup v1)",
        }
    }
    c = run(3, reps("rr", [1]), contexts={"/mnt/a": ctx("loop2", 3000, 100_000_000, 4096, 1)})
    fields = {d.field: d.values for d in compare([a, c]).context}
    assert fields == {"block.disks[0].read_ahead_kb": {"run 1": "128", "run 3": "4096"}}


def test_unknown_context_counts_as_a_difference() -> None:
    b = run(2, reps("rr", [1]), fio="3.36", contexts={"/mnt/a": {}})
    c = compare([run(1, reps("rr", [1])), b])
    assert {d.field: d.values["run 2"] for d in c.context} == {
        "fio version": "3.36",
        "disk 1": None,
        "filesystem": None,
        "mount options": None,
    }


# -- the JSON document ----------------------------------------------------------------------


def sample() -> list[RunRecord]:
    a = run(
        1,
        [
            *reps("rr", [4900, 5000, 5100]),
            result("only-here", 10, position=1, p=params(bs=1 << 20)),
        ],
        label="local-ssd",
    )
    b = run(2, reps("rr", [2900, 3000, 3100]), label="ceph-rbd", kernel="6.8.0")
    return [a, b]


def test_the_json_document_is_serialisable_and_stable() -> None:
    doc = compare(sample()).to_dict()
    text = json.dumps(doc, sort_keys=True, allow_nan=False)
    assert json.loads(text) == doc
    assert json.dumps(compare(sample()).to_dict(), sort_keys=True) == text
    assert (doc["schema_version"], doc["kind"], doc["baseline"]) == (3, "comparison", "run 1")
    assert doc["setups"][1] == {
        "key": "run 2",
        "run_id": 2,
        "target": "/mnt/a",
        "label": "ceph-rbd",
        "name": "ceph-rbd",
    }
    cell = doc["rows"][0]["cells"][1]
    assert sorted(cell) == [
        "bw_bytes",
        "bw_ratio",
        "bw_test",
        "bw_verdict",
        "failed",
        "iops",
        "iops_ratio",
        "iops_test",
        "lat_mean_ns",
        "lat_mean_ratio",
        "lat_p99_kind",
        "lat_p99_merged_ns",
        "lat_p99_ns",
        "lat_test",
        "lat_verdict",
        "setup",
        "verdict",
    ]
    assert (cell["iops_test"]["verdict"], cell["iops_test"]["reason"]) == (
        "slower",
        "t-test, 3 vs 3 repeats",
    )
    assert cell["iops_test"]["basis"] == "repeats" and cell["iops_test"]["df"] == 4
    assert doc["rows"][0]["differs"] == []
    assert cell["lat_p99_kind"] == "lat"
    assert cell["iops"]["mean"] == 3000
    assert sorted(cell["iops"]) == ["ci95_high", "ci95_low", "cv_pct", "mean", "n", "stddev"]
    assert (cell["iops_ratio"], cell["verdict"]) == (0.6, "slower")
    assert doc["unmatched"][0]["workload"] == "only-here"
    assert doc["context"] == [{"field": "kernel", "values": {"run 1": "6.1.0", "run 2": "6.8.0"}}]
    # Each setup but the baseline: its verdicts counted and its ratios' spread (the
    # geometric mean of the rows', and the extremes), what the headline says.
    (head,) = doc["headlines"]
    assert head == {
        "setup": "run 2",
        "rows": 1,
        "workloads": 1,
        "verdicts": {"slower": 1},
        "iops_ratio": {"mean": 0.6, "low": 0.6, "high": 0.6, "n": 1},
        "bw_ratio": head["bw_ratio"],
        "lat_mean_ratio": head["lat_mean_ratio"],
    }


def test_the_json_document_does_not_share_the_runs_dicts() -> None:
    runs = sample()
    doc = compare(runs).to_dict()
    doc["rows"][0]["params"]["bs"] = 1
    assert runs[0].results[0].params["bs"] == 4096


# -- per-run summaries ------------------------------------------------------------------------


def test_summarize_results_and_unstable_repetitions() -> None:
    r = run(
        1,
        [
            *reps("steady", [1000, 1010, 990]),
            *reps("shaky", [1000, 1200, 800], position=1),
            result("once", 5, position=2),
            result("broken", position=3, status="failed"),
        ],
    )
    summary = summarize_results(r)
    assert [(s["workload"], s["direction"], s["n"]) for s in summary] == [
        ("steady", "read", 3),
        ("shaky", "read", 3),
        ("once", "read", 1),
    ]
    assert summary[0]["iops"]["mean"] == 1000
    assert summary[0]["iops"]["cv_pct"] == pytest.approx(1.0)
    assert summary[0]["client"] is None and summary[0]["clients"] is None  # one host
    assert set(summary[0]) == {
        "target",
        "workload",
        "part",
        "client",
        "clients",
        "direction",
        "n",
        "iops",
        "bw_bytes",
        "lat_mean_ns",
        "lat_p99_ns",
    }
    ((target, workload, d, cv),) = unstable(r)
    assert (target, workload, d) == ("/mnt/a", "shaky", "read")
    assert cv == pytest.approx(20.0)


# -- rendering ---------------------------------------------------------------------------------


def render(runs: list[RunRecord], baseline: int | None = None) -> str:
    console = Console(file=StringIO(), width=160)
    render_comparison(compare(runs, baseline), console)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def test_rendering_shows_ratios_verdicts_unmatched_and_context() -> None:
    out = render(sample())
    assert "comparing 2 setups, baseline local-ssd" in out
    assert "rr  read  (randread 4k QD1x1 1m)" in out
    assert "vs local-ssd" in out
    assert "60 %" in out
    assert "slower" in out
    assert "3.00k ± 248" in out
    assert "only-here: no other run has a workload with these parameters" in out
    assert "context that differs" in out
    assert "6.8.0" in out


def test_rendering_marks_noise_and_unstable_repetitions() -> None:
    out = render([run(1, reps("rr", [1000, 1200, 800])), run(2, reps("rr", [1000, 1010, 990]))])
    assert "within noise" in out
    assert "20.0 % !" in out
    assert "run 1: the IOPS of its 3 repetitions vary by 20.0 %" in out


def test_rendering_prints_user_strings_literally() -> None:
    evil = "<script>[bold]x[/]"
    a = run(1, [result(evil, 1000, target="[red]t")], label=evil, targets=["[red]t"])
    out = render([a, run(2, reps(evil, [500]))])
    assert "baseline <script>[bold]x[/]" in out
    assert f"{evil}  read" in out
    assert "vs <script>[bold]x[/]" in out


def test_reports_show_the_noise_marks_and_the_notes() -> None:
    from iobench.report.html import render_html
    from iobench.report.markdown import render_markdown
    from iobench.report.model import compare_lines

    base = run(1, [result("rr", read=direction(1000, lat_mean=m), rep=i + 1)
                   for i, m in enumerate([100_000, 101_000, 99_000])])  # fmt: skip
    other = run(
        2,
        [result("rr", read=direction(1000 + i, lat_mean=m), rep=i + 1)
         for i, m in enumerate([150_000, 151_000])]
        + [result("rr", rep=3, status="failed", error="boom")],
    )  # fmt: skip
    c = compare([base, other])
    line = compare_lines(c)[1]
    assert line.iops_ratio.startswith("≈ ") and line.lat_ratio == "150 %"
    assert line.notes == ("latency slower", "1 of 3 repetitions failed")
    md = render_markdown([base, other], c)
    assert (
        "| within noise (t-test, 2 vs 3 repeats); latency slower; 1 of 3 repetitions failed |"
    ) in md
    page = render_html([base, other], c)
    assert '<br><span class="muted">1 of 3 repetitions failed</span>' in page


def test_runtime_only_differences_render_in_every_format() -> None:
    from iobench.report.html import render_html
    from iobench.report.markdown import render_markdown

    a = run(1, reps("rr", [5000, 5010, 4990], p=params(runtime_s=2.0)), label="two")
    b = run(2, reps("rr", [2500, 2510, 2490], p=params(runtime_s=1.0)), label="one")
    c = compare([a, b])
    note = "not the same duration: runtime 2s (two) vs 1s (one)"
    out = render([a, b])
    assert note in out
    assert "rr  read  (randread 4k QD1x1)" in out, "no single runtime in the heading"
    assert "not matched" not in out
    assert note in render_markdown([a, b], c)
    page = render_html([a, b], c)
    # In the comparison, and in the overview (no chart card: these results have no
    # histograms or per-second samples to draw).
    assert page.count(f'<span class="differs">{note}</span>') == 2
    overview = page[page.index('<section id="overview">') : page.index("</section>")]
    assert note in overview


def test_the_same_verdicts_and_reasons_in_every_format() -> None:
    """Terminal, JSON, Markdown and HTML say the same thing in the same words."""
    from iobench.report.html import render_html
    from iobench.report.markdown import render_markdown
    from iobench.report.model import compare_lines

    base = run(1, [*reps("a", [1000, 1010, 990]),
                   *reps("b", [1000, 1100], position=1, p=params(bs=8192)),
                   result("c", 1000, position=2, p=params(bs=16384)),
                   *reps("d", [1000, 1010], position=3, p=params(bs=65536))],
               label="base")  # fmt: skip
    other = run(2, [*reps("a", [1200, 1210, 1190]),
                    *reps("b", [1300, 1400], position=1, p=params(bs=8192)),
                    result("c", 1300, position=2, p=params(bs=16384)),
                    *reps("d", [300, 310], position=3, p=params(bs=65536))],
                label="other")  # fmt: skip
    c = compare([base, other])
    expected = [
        ("faster", "t-test, 3 vs 3 repeats"),
        ("too few repeats", "run --repeat 3; t-test, 2 vs 2 repeats"),
        ("too few repeats", "run --repeat 3; noise not measured"),
        ("slower", "2x or more in every repeat"),
    ]
    assert [(r.cells[1].verdict, r.cells[1].iops_test.reason) for r in c.rows] == expected
    doc = c.to_dict()
    assert [
        (r["cells"][1]["verdict"], r["cells"][1]["iops_test"]["reason"]) for r in doc["rows"]
    ] == expected
    out = " ".join(render([base, other]).split())
    md = render_markdown([base, other], c)
    page = render_html([base, other], c)
    for verdict, reason in expected:
        assert f"{verdict} ({reason})" in out
        assert f"| {verdict} ({reason}) |" in md
        assert (
            f'verdict-{verdict.replace(" ", "-")}">{verdict}</span>\n'
            f'<br><span class="reason">({reason})</span>'
        ) in page
    # The rules are stated beside the tables, in the same words.
    assert "Welch's t-test on the repetitions (95 %)" in out
    assert "within-run noise" in md and "within-run noise" in page
    assert "noise unknown" not in out + md + page
    # Intervals from 3 repetitions on: with 2, t(0.975, 1) = 12.7 makes them unreadable.
    lines = compare_lines(c)
    assert [x.iops for x in lines] == [
        "1.00k ±2.5 %", "1.20k ±2.1 %", "1.05k", "1.35k", "1.00k", "1.30k", "1.00k", "305"
    ]  # fmt: skip
    assert "1.05k ±" not in out


# -- the headline ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "other", "said"),
    [
        # Two volumes capped at 3,000 and 1,200 IOPS: 40 % in each workload, not "6 x slower".
        (
            [3000, 3000, 360],
            [1200, 1200, 144],
            "slower in 3 of 3 workloads; IOPS 40 % of the baseline in each",
        ),
        (
            [3000, 3000, 360],
            [1200, 1080, 144],
            "slower in 3 of 3 workloads; IOPS 39 % of the baseline (range 36\u201340 %)",
        ),
        # Ratios multiply: half as fast in one and twice as fast in another is 100 %.
        (
            [1000, 1000],
            [500, 2000],
            "slower in 1, faster in 1 of 2 workloads; "
            "IOPS 100 % of the baseline (range 50\u2013200 %)",
        ),
        # Ten times and more: a multiple, not thousands of per cent.
        (
            [100, 100],
            [2400, 13800],
            "faster in 2 of 2 workloads; IOPS 58 \u00d7 the baseline (range 24\u2013138 \u00d7)",
        ),
        ([1000], [998], "too few repeats to tell in 1 of 1 workload; IOPS 100 % of the baseline"),
    ],
)
def test_the_headline_says_the_size_of_the_difference(
    base: list[float], other: list[float], said: str
) -> None:
    from iobench.report.model import headline_text

    a = run(1, [result(f"w{i}", v, position=i) for i, v in enumerate(base)])
    b = run(2, [result(f"w{i}", v, position=i) for i, v in enumerate(other)])
    (head,) = compare([a, b]).headlines()
    assert headline_text(head) == said
    assert render([a, b]).splitlines()[1] == f"  run 2 (on /mnt/a): {said}"


def test_a_headline_counts_directions_of_a_mixed_workload_apart() -> None:
    from iobench.report.model import headline_text

    mix = params(rw="randrw", rwmixread=50)
    a = run(1, [result("rw", p=mix, read=direction(1000), write=direction(1000))])
    b = run(2, [result("rw", p=mix, read=direction(500), write=direction(500))])
    (head,) = compare([a, b]).headlines()
    assert (head.rows, head.workloads) == (2, 1)
    assert headline_text(head).startswith("slower in 2 of 2 workload directions; IOPS 50 %")


def test_a_line_of_another_kind_of_target_does_not_apply_and_a_missing_one_is_unknown() -> None:
    from iobench.analysis.context import NOT_APPLICABLE, context_differences, setup_context

    fs = {"filesystem": {"fstype": "ext4", "options": "rw"}}
    nbd = {"nbd": {"size_bytes": 1 << 20, "readonly": False, "transport": "tcp"}}
    setups = [
        ("file", setup_context({}, "file", 1 << 20, fs)),
        ("file, probe failed", setup_context({}, "file", 1 << 20, {})),
        ("nbd", setup_context({}, "nbd", 1 << 20, nbd)),
    ]
    found = dict(context_differences(setups))
    assert found["filesystem"] == {
        "file": "ext4",
        "file, probe failed": None,  # its kind has one: unknown
        "nbd": NOT_APPLICABLE,  # no NBD export has a filesystem here
    }
    assert found["nbd export"]["file"] == NOT_APPLICABLE
    assert found["nbd export"]["nbd"] == "1 MiB, writable, tcp"
    assert str(found["a write is done"]["nbd"]).startswith("when the NBD server answers")
