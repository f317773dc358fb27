"""The SNIA PTS steady-state rule (iobench.analysis.steady) on recorded-looking series, each
checked against a hand computation written out beside it, and its findings
(iobench.analysis.unsteady) on runs stored in a real database.

The hand computations use, for a window of 5 consecutive rounds, x - x̄ = -2, -1, 0, 1, 2
and Σ(x - x̄)² = 10, so the least-squares slope is Σ(x - x̄)·y / 10 and the line's
excursion over the window is |slope| x 4. The rule: range <= 20 % and excursion <= 10 % of
the window's average (both bounds inclusive)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import MINI_SUITE, Cli
from iobench.analysis.findings import Finding
from iobench.analysis.steady import (
    BANDWIDTH,
    IOPS,
    Rule,
    convergence,
    done,
    fio_window,
    judge,
    run_convergence,
    tracking_metric,
    tracking_value,
)
from iobench.analysis.unsteady import changing_storage, steady_findings
from iobench.records import ResultRecord, RunRecord, TargetRecord, now_iso
from iobench.store import Store


def rounds(*values: float | None, first: int = 1) -> list[tuple[int, float | None]]:
    return [(first + i, v) for i, v in enumerate(values)]


RULE = Rule()

# -- the rule's arithmetic ------------------------------------------------------------------------


def test_a_decaying_series_settles_at_the_round_the_hand_computation_says() -> None:
    # A fresh device's random writes falling to their steady level, 10 rounds:
    series = rounds(200, 150, 120, 110, 104, 102, 101, 100, 100, 100)
    # window 1-5 [200 150 120 110 104]: avg 136.8, range 96 = 70 %            -> fails
    # window 2-6 [150 120 110 104 102]: avg 117.2, range 48 = 41 %            -> fails
    # window 3-7 [120 110 104 102 101]: avg 107.4, range 19 = 17.7 % (passes);
    #   Σ(x-x̄)y = -240 - 110 + 0 + 102 + 202 = -46, slope -4.6, excursion 18.4 = 17.1 % -> fails
    # window 4-8 [110 104 102 101 100]: avg 103.4, range 10 = 9.7 % (passes);
    #   Σ(x-x̄)y = -220 - 104 + 0 + 101 + 200 = -23, slope -2.3, excursion 9.2 = 8.9 % -> passes
    # windows 5-9 and 6-10 pass as well (slopes -1 and -0.5): steady at round 8.
    w = judge(series[:7], RULE)
    assert w is not None and w.rounds == (3, 4, 5, 6, 7)
    assert (w.average, w.range, w.slope, w.excursion) == pytest.approx((107.4, 19, -4.6, 18.4))
    assert (w.range_ok, w.slope_ok, w.steady) == (True, False, False)
    w = judge(series[:8], RULE)
    assert w is not None
    assert (w.average, w.range, w.slope, w.excursion) == pytest.approx((103.4, 10, -2.3, 9.2))
    assert w.intercept == pytest.approx(103.4 + 2.3 * 6)  # the line passes through (x̄, ȳ)
    assert w.steady
    # What the run asks after each round: go on until round 8.
    assert [done({"w": series[:n]}, RULE, n) for n in range(1, 11)] == [False] * 7 + [True] * 3
    c = convergence(series, IOPS, RULE)
    assert (c.steady, c.reached_at, c.rounds, c.heading) == (True, 8, 10, None)
    assert c.window is not None and c.window.rounds == (6, 7, 8, 9, 10)
    assert c.value == pytest.approx(100.6)  # the result: the window's average (102+101+300)/5


def test_an_alternating_series_never_settles_and_the_cap_ends_the_run() -> None:
    # A figure that swings 100, 140, 100 ... round by round (a cap that alternates).
    series = rounds(*[100.0 if r % 2 else 140.0 for r in range(1, 26)])
    # Any window: range 40 on an average of 116 or 124 (34 % / 32 %) -> fails.
    # Window 21-25 [100 140 100 140 100]: Σ(x-x̄)y = -200 - 140 + 0 + 140 + 200 = 0: flat.
    assert not any(done({"w": series[:n]}, RULE, n) for n in range(1, 25))
    assert done({"w": series}, RULE, 25)  # the cap (max_rounds 25), not steady state
    c = convergence(series, IOPS, RULE)
    assert (c.steady, c.reached_at, c.rounds) == (False, None, 25)
    w = c.window
    assert w is not None and (w.average, w.range, w.slope) == pytest.approx((116, 40, 0))
    assert (w.range_ok, w.slope_ok) == (False, True)
    # Its steps alternate and its line is flat: it swings around its window's average.
    assert (c.heading, c.heading_how) == (116.0, "average")


def test_a_flat_series_is_steady_at_the_first_window() -> None:
    series = rounds(100, 100, 100, 100, 100)
    assert judge(series[:4], RULE) is None  # four rounds: nothing judged yet
    assert not done({"w": series[:4]}, RULE, 4)
    c = convergence(series, IOPS, RULE)
    assert (c.steady, c.reached_at, c.value) == (True, 5, 100.0)
    assert c.window is not None and (c.window.range, c.window.slope) == (0.0, 0.0)


def test_a_slow_drift_passes_the_range_and_fails_the_slope_and_the_reverse() -> None:
    # [100 104 108 112 116]: avg 108, range 16 = 14.8 % -> passes;
    #   Σ(x-x̄)y = -200 - 104 + 0 + 112 + 232 = 40, slope 4, excursion 16 = 14.8 % -> fails.
    w = judge(rounds(100, 104, 108, 112, 116), RULE)
    assert w is not None and (w.range_ok, w.slope_ok) == (True, False)
    assert (w.slope, w.excursion, w.slope_pct) == pytest.approx((4, 16, 100 * 4 / 108))
    # [100 130 100 130 100]: avg 112, range 30 = 26.8 % -> fails;
    #   Σ(x-x̄)y = -200 - 130 + 0 + 130 + 200 = 0: no slope -> passes.
    w = judge(rounds(100, 130, 100, 130, 100), RULE)
    assert w is not None and (w.range_ok, w.slope_ok) == (False, True)
    assert w.range_pct == pytest.approx(100 * 30 / 112)


def test_the_boundaries_are_inclusive_and_a_hair_beyond_fails() -> None:
    # Range exactly 20 %: [1e8, 0.9e8, 1.1e8, 1e8, 1e8], sum 5e8, avg 1e8, range 2e7.
    #   Σ(x-x̄)y = -2e8 - 0.9e8 + 0 + 1e8 + 2e8 = 1e7, slope 1e6, excursion 4e6 = 4 %.
    at = judge(rounds(100_000_000, 90_000_000, 110_000_000, 100_000_000, 100_000_000), RULE)
    assert at is not None and (at.average, at.range) == (1e8, 2e7)
    assert (at.range_ok, at.slope_ok, at.steady) == (True, True, True)
    # 20.000001 %: [1e8, 89999999, 110000000, 100000001, 1e8], avg 1e8, range 20000001.
    beyond = judge(rounds(100_000_000, 89_999_999, 110_000_000, 100_000_001, 100_000_000), RULE)
    assert beyond is not None and (beyond.average, beyond.range) == (1e8, 20_000_001)
    assert (beyond.range_ok, beyond.slope_ok) == (False, True)
    # Excursion exactly 10 %: [95 97.5 100 102.5 105], avg 100, range 10 %;
    #   Σ(x-x̄)y = -190 - 97.5 + 0 + 102.5 + 210 = 25, slope 2.5, excursion 10.
    at = judge(rounds(95, 97.5, 100, 102.5, 105), RULE)
    assert at is not None and (at.slope, at.excursion) == (2.5, 10.0)
    assert (at.range_ok, at.slope_ok, at.steady) == (True, True, True)
    # 10.0000004 %: [95e6 97.5e6 1e8 102499999 105000001], avg 1e8;
    #   Σ(x-x̄)y = 25000001, slope 2500000.1, excursion 10000000.4.
    beyond = judge(rounds(95e6, 97.5e6, 1e8, 102_499_999, 105_000_001), RULE)
    assert beyond is not None and beyond.average == 1e8
    assert beyond.excursion == pytest.approx(10_000_000.4)
    assert (beyond.range_ok, beyond.slope_ok) == (True, False)
    # The bounds are the rule's: 19.999999 % refuses what 20 % allows.
    strict = Rule(range_pct=19.999999)
    assert not judge(rounds(100, 90, 110, 100, 100), strict).range_ok  # type: ignore[union-attr]


def test_fewer_rounds_than_the_window_are_not_judged() -> None:
    for n in range(5):
        series = rounds(*[100.0] * n)
        assert judge(series, RULE) is None
        c = convergence(series, IOPS, RULE)
        assert (c.steady, c.window, c.reached_at, c.value) == (False, None, None, None)
        assert not done({"w": series}, RULE, n)
    # ... unless the cap is reached: a run of 3 rounds at most stops after 3, not steady; a
    # cap below the window is allowed and never judged (the run says "not judged").
    assert done({"w": rounds(100, 100, 100)}, Rule(window=3, max_rounds=3), 3)
    capped = Rule(max_rounds=3)
    assert [done({"w": rounds(100, 100, 100)[:n]}, capped, n) for n in (1, 2, 3)] == [
        False, False, True]  # fmt: skip
    assert convergence(rounds(100, 100, 100), IOPS, capped).window is None


def test_steady_then_not_then_steady_again_resets_the_round_it_was_reached_at() -> None:
    # Rounds 1-6 at 100, a dip to 60 at round 7, then 100 again from round 8.
    series = rounds(100, 100, 100, 100, 100, 100, 60, 100, 100, 100, 100, 100)
    assert convergence(series[:6], IOPS, RULE).reached_at == 5
    # Window 3-7 [100 100 100 100 60]: avg 92, range 40 = 43 % -> fails.
    dipped = convergence(series[:7], IOPS, RULE)
    assert (dipped.steady, dipped.reached_at) == (False, None)
    # Windows ending 8 to 11 hold round 7 and fail; 8-12 is flat again.
    for n in range(8, 12):
        assert not convergence(series[:n], IOPS, RULE).steady, n
    assert convergence(series, IOPS, RULE).reached_at == 12


def test_a_round_without_a_figure_breaks_every_window_that_spans_it() -> None:
    # Round 7 moved nothing (None), or its stored figure is 0, negative, NaN or infinite:
    # the flat series is not steady again until a window of five rounds with figures
    # (8-12) no longer spans it.
    for bad in (None, 0.0, -5.0, math.nan, math.inf):
        series = rounds(100, 100, 100, 100, 100, 100, bad, 100, 100, 100, 100, 100)
        c = convergence(series[:10], IOPS, RULE)
        assert c.window is not None and c.window.rounds == (5, 6, 8, 9, 10)
        assert (c.steady, c.missing, c.window.missing) == (False, (7,), (7,)), bad
        assert not done({"w": series[:11]}, RULE, 11)
        assert done({"w": series}, RULE, 12)
        assert convergence(series, IOPS, RULE).reached_at == 12
    # A round the run measured whose result is not there at all (a failed step that was not
    # stored) counts alike: the run says which round it is at.
    flat = rounds(100, 100, 100, 100, 100, 100)
    assert done({"w": flat}, RULE, 6)
    assert not done({"w": flat}, RULE, 7)
    c = convergence(flat, IOPS, RULE, rounds=7)
    assert (c.steady, c.rounds) == (False, 7) and c.window and c.window.missing == (7,)
    # Nothing but zeros is no steady state at 0: nothing was measured.
    zeros = convergence(rounds(*[0.0] * 8), IOPS, RULE)
    assert (zeros.steady, zeros.window, zeros.series, zeros.missing) == (
        False, None, (), tuple(range(1, 9)))  # fmt: skip


def test_windows_of_3_and_of_10_with_their_own_cap() -> None:
    three = Rule(window=3, max_rounds=6)
    series = rounds(130, 110, 100, 98, 99)
    # Window 2-4 [110 100 98]: avg 102.67, range 12 = 11.7 % (passes);
    #   x - x̄ = -1, 0, 1, Σ(x-x̄)² = 2: slope (98 - 110) / 2 = -6, excursion 12 = 11.7 % -> fails.
    # Window 3-5 [100 98 99]: avg 99, range 2; slope (99 - 100) / 2 = -0.5, excursion 1 -> passes.
    w = judge(series[:4], three)
    assert w is not None and (w.slope, w.excursion, w.slope_ok) == (-6.0, 12.0, False)
    assert [done({"w": series[:n]}, three, n) for n in range(1, 6)] == [False] * 4 + [True]
    assert convergence(series, IOPS, three).reached_at == 5
    ten = Rule(window=10, max_rounds=12)
    drift = rounds(*[100 + 1.5 * i for i in range(12)])  # 100, 101.5 ... 116.5
    # Window 3-12 [103 ... 116.5]: avg 109.75, range 13.5 = 12.3 % (passes); slope 1.5 per
    # round, excursion 1.5 x 9 = 13.5 = 12.3 % -> fails. Not steady; the cap ends it at 12.
    w = judge(drift, ten)
    assert w is not None and w.rounds == tuple(range(3, 13))
    assert (w.average, w.slope, w.excursion) == pytest.approx((109.75, 1.5, 13.5))
    assert (w.range_ok, w.slope_ok) == (True, False)
    assert [done({"w": drift[:n]}, ten, n) for n in (10, 11, 12)] == [False, False, True]


def test_done_waits_for_every_workload() -> None:
    settled, settling = rounds(*[100.0] * 6), rounds(200, 150, 120, 110, 104, 102)
    assert done({"a": settled}, RULE, 6)
    assert not done({"a": settled, "b": settling}, RULE, 6)
    assert done({}, RULE, 1)  # nothing to wait for


def test_heading_is_the_level_shrinking_steps_lead_to_else_the_trend() -> None:
    # 100 + 1600 * 0.5^(r-1): 1700, 900, 500, 300, 200, 150: steps -800 ... -50, each half the
    # one before (q = 0.5): it heads for 150 + (-50) * 0.5 / (1 - 0.5) = 100.
    c = convergence(rounds(1700, 900, 500, 300, 200, 150), IOPS, RULE)
    assert not c.steady
    assert (c.heading, c.heading_how) == (100.0, "levelling")
    # A drift that does not slow down: no level in sight; its trend line at the last round
    # ([100 104 108 112 116]: 108 + 4 x 2 = 116).
    c = convergence(rounds(100, 104, 108, 112, 116), IOPS, RULE)
    assert c.heading == pytest.approx(116) and c.heading_how == "trend"
    # Steps that shrink but point towards a level below 0 are no level: the trend instead.
    c = convergence(rounds(1000, 500, 100, 20, 1), IOPS, RULE)
    assert c.heading_how != "levelling"


# -- the rule's settings, as stored ---------------------------------------------------------------


def test_a_rule_round_trips_and_a_stored_one_is_read_strictly() -> None:
    stored = {"rule": "pts", "window": 5, "range_pct": 20.0, "slope_pct": 10.0, "max_rounds": 25}
    assert RULE.as_dict() == stored
    assert Rule.from_dict(stored) == RULE
    # Keys absent or null take the defaults; others (a newer writer's) are ignored.
    assert Rule.from_dict({"rule": "pts", "window": None, "round_time_s": 30.0}) == RULE
    assert Rule.from_dict({"window": 3.0, "max_rounds": 6, "range_pct": 15}) == Rule(
        window=3, range_pct=15.0, max_rounds=6
    )
    cases: list[tuple[Any, str]] = [
        ({"window": "five"}, "steady_state.window must be a whole number, not 'five'"),
        ({"window": True}, "steady_state.window must be a whole number, not True"),
        ({"window": 4.5}, "steady_state.window must be a whole number, not 4.5"),
        ({"window": 1}, "steady_state.window must be a whole number from 2 to 10,000, not 1"),
        ({"window": 10**400}, "steady_state.window must be a whole number from 2 to 10,000"),
        ({"range_pct": "20%"}, "steady_state.range_pct must be a number, not '20%'"),
        ({"slope_pct": -1}, "steady_state.slope_pct must be a percentage above 0"),
        ({"slope_pct": math.nan}, "steady_state.slope_pct must be a number, not nan"),
        ({"max_rounds": 0}, "steady_state.max_rounds must be a whole number from 1 to "
                            "1,000,000, not 0"),
        ({"rule": "fio"}, "steady_state.rule must be 'pts', not 'fio'"),
    ]  # fmt: skip
    for bad, said in cases:
        with pytest.raises(ValueError) as e:
            Rule.from_dict(bad)
        assert str(e.value).startswith(said), (bad, str(e.value))
    with pytest.raises(ValueError, match="steady_state must be an object, not"):
        Rule.from_dict([5])  # type: ignore[arg-type]


# -- the tracking figure --------------------------------------------------------------------------


def test_the_tracking_figure_is_bandwidth_for_bandwidth_tests_else_iops() -> None:
    assert tracking_metric({"rw": "randread", "bs": 4096}) == IOPS
    assert tracking_metric({"rw": "randrw", "bs": 65536}) == IOPS  # PTS 65/35 at 64 KiB
    assert tracking_metric({"rw": "randrw", "bs": 1 << 20}) == BANDWIDTH
    assert tracking_metric({"rw": "randwrite", "bs": 128 * 1024}) == BANDWIDTH
    for rw in ("read", "write", "rw", "readwrite", "trim", "trimwrite"):
        assert tracking_metric({"rw": rw, "bs": 4096}) == BANDWIDTH, rw
    # A group of jobs: bandwidth only when each part is a bandwidth test.
    assert tracking_metric({"parts": [{"rw": "read"}, {"rw": "write"}]}) == BANDWIDTH
    assert tracking_metric({"parts": [{"rw": "read"}, {"rw": "randread", "bs": 4096}]}) == IOPS
    # What is not a size iobench stored is not guessed at.
    assert tracking_metric({"rw": "randread", "bs": "1M"}) == IOPS
    assert tracking_metric({}) == IOPS


def test_the_tracking_value_sums_the_directions_that_did_io() -> None:
    mix = {"read": {"iops": 650.0, "bw_bytes": 2.6e6}, "write": {"iops": 350.0, "bw_bytes": 1.4e6},
           "trim": None, "cpu": {}}  # fmt: skip
    assert tracking_value(mix, IOPS) == 1000.0
    assert tracking_value(mix, BANDWIDTH) == 4.0e6
    assert tracking_value({"read": {"iops": 10}, "write": None}, IOPS) == 10.0
    # No figure: no direction did IO, nothing moved, or a stored figure is not a number.
    nothing: list[Any] = [None, {}, {"read": None, "write": {}}, {"read": {"iops": 0}},
                    {"read": {"iops": "fast"}}, {"read": {"iops": True}},
                    {"read": {"iops": -1.0}}, {"read": {"iops": 10}, "write": {"iops": "x"}},
                    {"read": {"iops": 10**400}}]  # fmt: skip
    for metrics in nothing:
        assert tracking_value(metrics, IOPS) is None, metrics


def test_fios_own_window_judged_by_the_pts_bounds() -> None:
    # fio's ss=iops:30% window of FIO.md §4: [29419 27371 25673] attained (max deviation
    # 7 % of the mean). By the PTS bounds over its 3 seconds: avg 27487.67, range 3746 =
    # 13.6 % (passes); slope (25673 - 29419) / 2 = -1873, excursion 3746 = 13.6 % -> fails.
    ss = {"criterion": "iops:30.000000%", "attained": True, "duration_s": 3,
          "iops": [29419, 27371, 25673], "bw_bytes": [120501941, 112111616, 105156608]}  # fmt: skip
    w = fio_window(ss, IOPS, RULE)
    assert w is not None and w.rounds == (1, 2, 3)
    assert (w.slope, w.excursion) == (-1873.0, 3746.0)
    assert (w.range_ok, w.slope_ok) == (True, False)
    assert fio_window(ss, BANDWIDTH, RULE).values[0] == 120501941  # type: ignore[union-attr]
    for broken in (None, {}, {"iops": [5]}, {"iops": "x"}):
        assert fio_window(broken, IOPS, RULE) is None


# -- stored runs ----------------------------------------------------------------------------------

PARAMS = {"rw": "randwrite", "bs": 4096, "iodepth": 4, "numjobs": 1, "ioengine": "libaio",
          "direct": True, "runtime_s": 30.0, "ramp_s": 0.0, "size": 1 << 30, "rwmixread": None,
          "options": {}}  # fmt: skip
PTS_RULE = {"rule": "pts", "window": 5, "range_pct": 20.0, "slope_pct": 10.0, "max_rounds": 25,
            "round_time_s": 30.0}  # fmt: skip
FLAT, DECAY = [100.0] * 6, [1700.0, 900.0, 500.0, 300.0, 200.0, 150.0]


def _direction(iops: float) -> dict[str, Any]:
    """A direction as a run stores it (tests/test_store.py: METRICS), at ``iops`` for 1 s."""
    ios = round(iops)
    return {"iops": iops, "bw_bytes": iops * 4096, "io_bytes": ios * 4096, "total_ios": ios,
            "runtime_ms": 1000, "iops_submitted": iops, "ios_completed": float(ios),
            "ios_completed_from": "io_bytes/bs", "completions": ios,
            "io_bytes_step": 1}  # fmt: skip


def _result(target: str, workload: str, rep: int, iops: float | None, **kw: Any) -> ResultRecord:
    params = kw.pop("params", PARAMS)
    section = None if iops is None else _direction(iops)
    return ResultRecord(
        target=target, workload=workload, position=kw.pop("position", 0),
        status=kw.pop("status", "ok"), params=params,
        metrics={"metrics_version": 2, "read": None, "write": section, "trim": None},
        job_file="", fio_argv=[],
        fio_rc=0, fio_version="3.33", raw_output=None, fio_stdout=None, fio_stderr=None,
        error=None, started_at=now_iso(), finished_at=now_iso(), repetition=rep, **kw,
    )  # fmt: skip


def _stored(
    db: Path,
    results: list[ResultRecord],
    *,
    suite_def: dict[str, Any] | None = None,
    targets: list[TargetRecord] | None = None,
    host: dict[str, Any] | None = None,
) -> RunRecord:
    specs = list(dict.fromkeys(r.target for r in results))
    with Store.open(db) as store:
        run_id = store.create_run(
            suite="s", suite_def=suite_def or {"name": "s", "steady_state": PTS_RULE},
            label=None, argv=["iobench", "run"], host=host or {"hostname": "h"},
            iobench_version="0", origin="run",
            targets=targets or [TargetRecord(i, s, s, "directory", None, {})
                                for i, s in enumerate(specs)],
        )  # fmt: skip
        for r in results:
            store.add_result(run_id, r)
        store.finish_run(run_id, status="complete", fio_version="3.33", warnings=[])
        return store.get_run(run_id)


def _rounds_of(target: str, workload: str, values: Sequence[float | None], **kw: Any) -> list[Any]:
    return [_result(target, workload, i + 1, v, **kw) for i, v in enumerate(values)]


def test_run_convergence_on_several_targets(tmp_path: Path) -> None:
    results = [
        *_rounds_of("/mnt/a", "steady", FLAT),
        *_rounds_of("/mnt/a", "settling", DECAY, position=1),
        *_rounds_of("/mnt/b", "steady", [100.0, 100.0, 100.0, 100.0, 100.0, 100.0]),
        *_rounds_of("/mnt/b", "settling", [100.0, 100.0, 100.0, 100.0, 100.0, None],
                    position=1),
    ]  # fmt: skip
    run = _stored(tmp_path / "x.db", results)
    tracked = run_convergence(run)
    assert [(t.target, t.workload, t.client, t.convergence.steady) for t in tracked] == [
        ("/mnt/a", "steady", None, True), ("/mnt/a", "settling", None, False),
        ("/mnt/b", "steady", None, True), ("/mnt/b", "settling", None, False),
    ]  # fmt: skip
    a_settling = tracked[1].convergence
    assert (a_settling.metric, a_settling.rounds, a_settling.heading) == (IOPS, 6, 100.0)
    # Round 6 of /mnt/b's "settling" moved nothing: its window misses it.
    b_settling = tracked[3].convergence
    assert b_settling.window and b_settling.window.missing == (6,)
    # A failed round (stored, no metrics) is a round without a figure as well.
    failed = _result("/mnt/a", "w", 6, None, status="failed")
    run = _stored(tmp_path / "y.db", [*_rounds_of("/mnt/a", "w", FLAT[:5]), failed])
    (only,) = run_convergence(run)
    assert (only.convergence.rounds, only.convergence.steady) == (6, False)
    assert only.convergence.missing == (6,)


def test_run_convergence_judges_the_clients_aggregate_and_shows_each_client(
    tmp_path: Path,
) -> None:
    results = [
        *_rounds_of("/mnt/s", "rw", FLAT, client="all", clients=2),
        *_rounds_of("/mnt/s", "rw", [60.0, 40.0, 60.0, 40.0, 60.0, 40.0], client="h1", clients=2),
        *_rounds_of("/mnt/s", "rw", [40.0, 60.0, 40.0, 60.0, 40.0, 60.0], client="h2", clients=2),
    ]  # fmt: skip
    tracked = run_convergence(_stored(tmp_path / "x.db", results))
    shown = [(t.client, t.clients, t.judged, t.convergence.steady) for t in tracked]
    assert shown == [("all", 2, True, True), ("h1", 2, False, False), ("h2", 2, False, False)]
    # The aggregate is steady while each client swung: no not-steady finding.
    run = _stored(tmp_path / "y.db", results)
    assert [f.id for f in steady_findings(run)] == ["steady-state"]


def test_run_convergence_is_empty_without_the_pts_rule_and_refuses_an_unreadable_one(
    tmp_path: Path,
) -> None:
    results = _rounds_of("/mnt/a", "w", FLAT)
    assert run_convergence(_stored(tmp_path / "a.db", results, suite_def={"name": "s"})) == []
    fio = {"name": "s", "steady_state": {"rule": "fio", "criterion": "iops_slope:0.5%"}}
    assert run_convergence(_stored(tmp_path / "b.db", results, suite_def=fio)) == []
    hostile = {"name": "s", "steady_state": {"rule": "pts", "window": "all of them"}}
    run = _stored(tmp_path / "c.db", results, suite_def=hostile)
    with pytest.raises(ValueError, match=r"steady_state\.window must be a whole number"):
        run_convergence(run)
    assert steady_findings(run) == []  # not a rule iobench wrote: no finding made up
    # ... and no view falls over on it: show prints no steady-state section, --json none.
    from iobench.report.steady import steady_document, steady_lines

    assert steady_lines(run) == [] and steady_document(run) is None


# -- findings -------------------------------------------------------------------------------------


def _kept(db: Path, run: RunRecord) -> list[Finding]:
    """The run's steady-state findings, stored with it as a run stores its warnings and read
    back (the run document's schema checks each one's data)."""
    found = steady_findings(run)
    with Store.open(db) as store:
        store.finish_run(run.id, status="complete", fio_version="3.33",
                         warnings=[f.as_dict() for f in found])  # fmt: skip
        assert store.get_run(run.id).warnings == [f.as_dict() for f in found]
    return found


def test_not_steady_says_how_it_moved_and_where_it_was_heading(tmp_path: Path) -> None:
    results = [*_rounds_of("/mnt/a", "settling", DECAY),
               *_rounds_of("/mnt/a", "swinging", [100.0, 140.0] * 3, position=1),
               *_rounds_of("/mnt/a", "short", FLAT[:3], position=2)]  # fmt: skip
    found = _kept(tmp_path / "x.db", _stored(tmp_path / "x.db", results))
    assert [(f.id, f.severity, f.workload, f.target) for f in found] == [
        ("not-steady", "warning", "settling", "/mnt/a"),
        ("not-steady", "warning", "swinging", "/mnt/a"),
        ("not-steady", "warning", "short", "/mnt/a"),
    ]
    settling, swinging, short = found
    # Window 2-6 [900 500 300 200 150]: avg 410, range 750 = 183 %; Σ(x-x̄)y = -1800 - 500
    # + 0 + 200 + 300 = -1800, slope -180 = 43.9 % of the average per round, excursion 720.
    assert settling.message == (
        "steady state not reached in 6 rounds: settling on /mnt/a is still falling by 43.9 % "
        "of its average per round (window rounds 2 to 6: range 183 %, excursion 176 %; the "
        "rule allows 20 % and 10 % of the window's average); last round 150 IOPS, heading "
        "towards 100 IOPS"
    )
    assert "--max-rounds" in settling.fix and "--round-time" in settling.fix
    assert settling.data == {
        "metric": "iops", "rounds": 6, "window_first": 2, "window_last": 6, "average": 410.0,
        "range_pct": pytest.approx(100 * 750 / 410),
        "excursion_pct": pytest.approx(100 * 720 / 410),
        "slope_pct": pytest.approx(-100 * 180 / 410), "last": 150.0, "heading": 100.0,
        "heading_how": "levelling", "rounds_without_figure": 0,
    }  # fmt: skip
    # Window 2-6 [140 100 140 100 140]: avg 124, range 40 = 32.3 %; Σ(x-x̄)y = -280 - 100 + 0
    # + 100 + 280 = 0.
    assert swinging.message.startswith(
        "steady state not reached in 6 rounds: swinging on /mnt/a still varies by 32.3 % of "
        "its average within the window (window rounds 2 to 6: range 32.3 %, excursion 0 %;"
    )
    assert swinging.message.endswith("last round 140 IOPS, swinging around 124 IOPS")
    assert short.message == (
        "steady state not judged in 3 rounds: short on /mnt/a has figures for 3 rounds, and "
        "the rule judges a window of 5; last round 100 IOPS"
    )


def test_a_run_steady_everywhere_says_so_once(tmp_path: Path) -> None:
    decay = [200.0, 150.0, 120.0, 110.0, 104.0, 102.0, 101.0, 100.0]
    results = [*_rounds_of("/mnt/a", "a", decay), *_rounds_of("/mnt/b", "b", decay[-5:] * 2)]
    (f,) = _kept(tmp_path / "x.db", _stored(tmp_path / "x.db", results))
    assert (f.id, f.severity) == ("steady-state", "info")
    assert f.message.startswith("steady state reached at round 8 for every workload (2), by")
    assert f.data == {"reached_at": 8, "first_reached_at": 5, "workloads_steady": 2}


# The targets of the tests' own runs, as probed on a VM and on real hardware.
VDA = {"kname": "vda", "path": "/dev/vda", "type": "disk", "rotational": True,
       "transport": "virtio"}  # fmt: skip
NVME = {"kname": "nvme0n1", "path": "/dev/nvme0n1", "type": "disk", "rotational": False,
        "transport": "nvme"}  # fmt: skip
SDA = {"kname": "sda", "path": "/dev/sda", "type": "disk", "rotational": True, "transport": "sata"}
LOOP = {"kname": "loop0", "path": "/dev/loop0", "type": "loop", "rotational": True,
        "transport": "loop"}  # fmt: skip
KVM = {"hostname": "vm", "virtualization": {"vm": "kvm", "container": None}}
METAL = {"hostname": "metal", "virtualization": {"vm": "none", "container": None}}


def _ctx(*disks: dict[str, Any], backing: str | None = None, **more: Any) -> dict[str, Any]:
    io = [{"kname": d["kname"], "role": "target"} for d in disks]
    if backing:
        io.append({"kname": backing, "role": "backing", "via": "loop0's backing file /f"})
    return {"filesystem": more.pop("fs", {"fstype": "ext4"}), "block": {"disks": list(disks)},
            "io_devices": io, "ram_backed": more.pop("ram", None), **more}  # fmt: skip


def _target(ctx: dict[str, Any], kind: str = "directory") -> TargetRecord:
    return TargetRecord(0, "/t", "/t", kind, None, ctx)


def test_which_storage_changes_as_it_is_written() -> None:
    cases: list[tuple[TargetRecord, dict[str, Any], str | None]] = [
        (_target(_ctx(NVME)), METAL, "/dev/nvme0n1, flash storage: an SSD is fastest fresh"),
        (_target(_ctx({**SDA, "rotational": False})), METAL, "/dev/sda, flash storage"),
        (_target(_ctx(SDA)), METAL, None),  # a spinning disk
        (_target(_ctx(VDA)), KVM, "/dev/vda, a virtual machine's disk (kvm): a cloud volume"),
        # A loop device over a file: what is under the file decides.
        (_target(_ctx(LOOP, backing="vda"), "block"), KVM,
         "/dev/loop0 (a loop device over a file on vda), a virtual machine's disk (kvm)"),
        (_target(_ctx(LOOP, backing="nvme0n1"), "block"), METAL,
         "/dev/loop0 (a loop device over a file on nvme0n1), flash storage"),
        (_target(_ctx(LOOP, backing="sda"), "block"), METAL, None),
        # In RAM: tmpfs, a loop device over a file on tmpfs.
        (_target(_ctx(fs={"fstype": "tmpfs", "ram_backed": True}, ram="tmpfs")), KVM, None),
        (_target(_ctx(LOOP, ram="loop0 is a loop device over /dev/shm/f, on tmpfs"), "block"),
         KVM, None),
        # Network storage, and storage with no block device under it.
        (_target(_ctx(VDA, fs={"fstype": "nfs4", "network": True})), KVM, None),
        (_target(_ctx()), KVM, None),
        (_target({}, "rbd"), KVM, None),
        (_target({}, "unknown"), KVM, None),
    ]  # fmt: skip
    for target, host, said in cases:
        why = changing_storage(target, host)
        assert (why or "").startswith(said or "") and (why is None) == (said is None), (
            target.context, host, why)  # fmt: skip


def _unruled(tmp_path: Path, name: str, ctx: dict[str, Any], **suite: Any) -> list[Any]:
    suite_def = {"name": "s", **suite}
    target = TargetRecord(0, "/t", "/t", "directory", None, ctx)
    run = _stored(tmp_path / f"{name}.db", _rounds_of("/t", "w", FLAT[:1]),
                  suite_def=suite_def, targets=[target], host=KVM)  # fmt: skip
    return [f for f in steady_findings(run) if f.id == "no-steady-state"]


def test_no_steady_state_on_changing_storage_unless_the_run_has_a_rule_or_says_less(
    tmp_path: Path,
) -> None:
    (f,) = _unruled(tmp_path, "plain", _ctx(VDA))
    assert (f.severity, f.target) == ("warning", "/t")
    assert f.message.startswith(
        "/t was measured without a steady-state rule, on /dev/vda, a virtual machine's disk "
        "(kvm): a cloud volume or its host's storage"
    )
    assert "iobench precondition" in f.fix and "--steady-state pts" in f.fix
    runs: list[tuple[str, dict[str, Any]]] = [
        ("pts", {"steady_state": PTS_RULE}),
        ("fio", {"steady_state": {"rule": "fio", "criterion": "iops_slope:0.5%"}}),
        ("indicative", {"indicative": True}),
        ("sweep", {"sweep": {"axes": {"bs": [4096]}}}),
        ("characterize", {"plan": {"kind": "characterize", "settings": {}}}),
    ]
    for name, suite in runs:
        assert _unruled(tmp_path, name, _ctx(VDA), **suite) == [], name
    assert _unruled(tmp_path, "ram", _ctx(fs={"fstype": "tmpfs"}, ram="tmpfs")) == []


def test_no_steady_state_leaves_out_workloads_fio_judged_itself(tmp_path: Path) -> None:
    own = {**PARAMS, "options": {"ss": "iops:5%", "ss_dur": "10s"}}
    target = TargetRecord(0, "/t", "/t", "directory", None, _ctx(VDA))
    run = _stored(tmp_path / "x.db", _rounds_of("/t", "w", FLAT[:1], params=own),
                  suite_def={"name": "s"}, targets=[target], host=KVM)  # fmt: skip
    assert steady_findings(run) == []


# -- on real runs ---------------------------------------------------------------------------------


def test_a_real_run_says_no_steady_state_where_the_probe_says_the_storage_changes(
    cli: Cli, mini_suite: str, tmp_path: Path, real_fio: str
) -> None:
    from iobench.probe import probe_target
    from iobench.probe.host import probe_host

    data = tmp_path / "data"
    data.mkdir()
    code, out, err = cli("run", str(data), "--suite", mini_suite, "--json")
    assert code == 0, err
    doc = json.loads(out)
    found = [w for w in doc["warnings"] if w["id"] == "no-steady-state"]
    # What the test machine is decides: a VM's disk or flash warns, a spinning disk does not.
    target = TargetRecord(0, str(data), str(data), "directory", None, probe_target(str(data)))
    expected = changing_storage(target, probe_host())
    assert [w["message"] for w in found] == (
        [] if expected is None else [f"{data} was measured without a steady-state rule, on "
                                     f"{expected}. Its figures are of the device's state at "
                                     "that moment; a later run can differ"]
    )  # fmt: skip
    # A suite that marks itself a first look: no such warning, whatever the storage.
    first_look = tmp_path / "first-look.toml"
    first_look.write_text(MINI_SUITE.replace("[defaults]", "indicative = true\n[defaults]"))
    code, out, err = cli("run", str(data), "--suite", str(first_look), "--json")
    assert code == 0, err
    assert not [w for w in json.loads(out)["warnings"] if w["id"] == "no-steady-state"]
