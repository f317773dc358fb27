"""The characterize planner (analysis/characterize.py) against simulated storage: which
points it measures, when it stops, and what it concludes. Pure: no fio."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from rich.console import Console

from iobench.analysis.characterize import (
    CLIMB_GAIN,
    FLAT_GAIN,
    Probe,
    Settings,
    _plateau_qd,
    _pow2_at_most,
    characterization_document,
    characterize,
    next_probe,
    on_clients,
    probe_workload,
)
from iobench.analysis.characterize import _surely_flat as surely_flat
from iobench.analysis.curves import Point, curve_document, curves
from iobench.report.curves import render_characterization
from test_curves import point

Device = Callable[[int, int], Point]
MiB = 1 << 20


def capped_device(iops_cap: float, bw_cap: float, floor_us: float = 200.0) -> Device:
    def measure(bs: int, qd: int) -> Point:
        iops = min(qd / (floor_us / 1e6), iops_cap, bw_cap / bs)
        return point(bs, qd, iops, lat_ns=qd / iops * 1e9)

    return measure


def run_planner(
    device: Device, s: Settings, seconds: float = 5.0, contexts: Any = None
) -> tuple[list[Probe], str]:
    points: list[Point] = []
    probes: list[Probe] = []
    while True:
        decision = next_probe(points, s, elapsed_s=seconds * len(points), contexts=contexts)
        if decision.probe is None:
            assert decision.stop is not None
            return probes, decision.stop
        probes.append(decision.probe)
        points.append(device(decision.probe.bs, decision.probe.iodepth))
        assert len(probes) < 60, "the planner must end"


def test_a_capped_volume_is_found_in_a_few_points() -> None:
    s = Settings(point_s=4)
    probes, stop = run_planner(capped_device(5000, 200 * 2**20), s)
    assert [(p.bs, p.iodepth) for p in probes] == [
        (4096, 1), (4096, 2),               # at the IOPS cap from QD1: a flat doubling
        (1 << 20, 1), (1 << 20, 2),         # at the bandwidth cap from QD1
        (16384, 2), (131072, 2),            # either side of the 41 KiB crossover
    ]  # fmt: skip
    assert stop.startswith("done")
    # Tight samples and thousands of IOPS: every point runs the shortest time.
    assert {p.seconds for p in probes} == {1.0}
    points = [capped_device(5000, 200 * 2**20)(p.bs, p.iodepth) for p in probes]
    c = characterize(points, s, elapsed_s=40.0)
    assert c.limits is not None and c.limits.iops and c.limits.bw_bytes and c.limits.crossover_bs
    assert c.limits.iops.value == pytest.approx(5000, rel=0.01)
    assert c.limits.bw_bytes.value == pytest.approx(200 * 2**20, rel=0.01)
    assert c.limits.crossover_bs.value == pytest.approx(200 * 2**20 / 5000, rel=0.02)
    assert [round(x.deviation, 3) for x in c.checks] == [0.0, 0.0]
    doc = characterization_document(c, None)
    assert set(doc["limits"]) == {"iops", "bw_bytes", "crossover_bs"}
    assert set(doc["limits"]["iops"]) == {"value", "low", "high", "basis"}
    assert doc["reasons"] == {"iops": None, "bw_bytes": None, "crossover_bs": None}
    # On the terminal every figure says what it counts: "5.00k IOPS", not "5.00k".
    buffer = io.StringIO()
    render_characterization(c, Console(file=buffer, width=200, emoji=False), 1e9)
    out = buffer.getvalue()
    assert "check at 16 KiB: 5.00k IOPS, the two limits predict 5.00k IOPS (+0.0%)" in out
    assert "queue depth (1 job)" in out


def test_the_characterization_document_holds_every_field_by_its_name() -> None:
    """``characterize --json``'s answer (docs/characterize.md) names each field as the docs
    do and carries the characterization's own figures; without limits (nothing measured)
    it still has every key, with the reasons said."""
    s = Settings(point_s=4)
    probes, stop = run_planner(capped_device(5000, 200 * 2**20), s)
    points = [capped_device(5000, 200 * 2**20)(p.bs, p.iodepth) for p in probes]
    c = replace(characterize(points, s, elapsed_s=40.0), place="/dev/vol", stop=stop)
    assert c.limits is not None
    limits = c.limits.document()
    doc = characterization_document(c, 2e6)
    assert list(doc) == [
        "place",
        "rw",
        "settings",
        "elapsed_s",
        "points",
        "stop",
        "limits",
        "reasons",
        "reason_codes",
        "throttles",
        "table",
        "checks",
        "curves",
    ]
    assert doc["place"] == "/dev/vol" and doc["rw"] == "randread" and doc["stop"] == stop
    assert doc["settings"] == s.as_dict() and doc["elapsed_s"] == 40.0
    assert doc["points"] == c.points == len(points)
    for key in ("limits", "reasons", "reason_codes", "throttles", "table"):
        assert doc[key] == limits[key], key
    assert (
        doc["checks"]
        == [
            {"bs": x.bs, "iops": x.iops, "model_iops": x.model_iops, "deviation": x.deviation}
            for x in c.checks
        ]
        and len(doc["checks"]) == 2
    )
    assert doc["curves"] == [curve_document(cv, 2e6) for cv in c.curves]
    assert doc["curves"] != [curve_document(cv, None) for cv in c.curves]
    nothing = replace(c, limits=None)
    empty = characterization_document(nothing, None)
    assert list(empty) == list(doc)
    assert empty["limits"] == {"iops": None, "bw_bytes": None, "crossover_bs": None}
    assert empty["reasons"] == dict.fromkeys(("iops", "bw_bytes", "crossover_bs"),
                                             "nothing was measured")  # fmt: skip
    assert empty["reason_codes"] == {} and empty["table"] == []
    assert empty["throttles"] == {"iops": None, "bw_bytes": None}


def test_bandwidth_binding_at_4k_sends_it_to_smaller_blocks() -> None:
    """200k IOPS and 400 MiB/s: the crossover is 2 KiB, so 4 KiB is bandwidth-bound."""
    device = capped_device(200_000, 400 * 2**20, floor_us=20)
    s = Settings(point_s=4)
    probes, _ = run_planner(device, s)
    assert [p.bs for p in probes if p.why == "smaller blocks"] == [1024]
    c = characterize([device(p.bs, p.iodepth) for p in probes], s, 0.0)
    assert c.limits and c.limits.iops and c.limits.crossover_bs
    assert c.limits.iops.value == pytest.approx(200_000, rel=0.02)
    assert c.limits.crossover_bs.value == pytest.approx(2048, rel=0.03)


@pytest.mark.parametrize(
    ("bw_cap", "settings", "larger"),
    [
        # 100 IOPS at 1 MiB is 100 MiB/s: the IOPS limit still binds, 4 MiB is tried, then
        # 16 MiB, where 1 GiB/s binds (64 IOPS).
        (1024 * MiB, {}, [4 * MiB, 16 * MiB]),
        # No bandwidth limit in reach: two steps beyond 1 MiB (MAX_EXTENSIONS), no more.
        (10**6 * MiB, {}, [4 * MiB, 16 * MiB]),
        # Never beyond the largest block size allowed, nor beyond the test area.
        (10**6 * MiB, {"max_bs": 8 * MiB}, [4 * MiB, 8 * MiB]),
        (10**6 * MiB, {"size": 8 * MiB}, [4 * MiB, 8 * MiB]),
        (10**6 * MiB, {"max_bs": MiB}, []),
        # The largest allowed reached: once, then done.
        (10**6 * MiB, {"max_bs": 4 * MiB}, [4 * MiB]),
    ],
)
def test_an_iops_limit_binding_at_1m_sends_it_to_larger_blocks(
    bw_cap: float, settings: dict[str, Any], larger: list[int]
) -> None:
    device = capped_device(100, bw_cap, floor_us=20)
    probes, stop = run_planner(device, replace(Settings(point_s=4), **settings))
    assert [p.bs for p in probes if p.why == "larger blocks"] == larger, probes
    assert all(type(p.bs) is int for p in probes) and stop.startswith("done")
    assert not any(p.why == "smaller blocks" for p in probes)


@pytest.mark.parametrize(
    ("settings", "smaller"),
    [
        ({"min_bs": 512}, [1024, 512]),
        ({"min_bs": 64}, [1024, 256]),
        ({"min_bs": 2048}, [2048]),
        ({"min_bs": 4096}, []),
        # From 64 KiB: 16 KiB and 4 KiB, then no third step (1 KiB).
        ({"min_bs": 512, "small_bs": 65536}, [16384, 4096]),
    ],
)
def test_smaller_blocks_stop_at_the_smallest_allowed_and_two_steps(
    settings: dict[str, Any], smaller: list[int]
) -> None:
    """200k IOPS and 40 MiB/s: the crossover is 210 bytes, every block size tried is
    bandwidth-bound; a quarter at a time, two steps below the small block size
    (MAX_EXTENSIONS) at most, never below ``min_bs``."""
    device = capped_device(200_000, 40 * MiB, floor_us=20)
    probes, stop = run_planner(device, replace(Settings(point_s=4), **settings))
    assert [p.bs for p in probes if p.why == "smaller blocks"] == smaller, probes
    assert all(type(p.bs) is int for p in probes) and stop.startswith("done")


def test_a_host_bound_plateau_is_not_a_limit() -> None:
    """Small blocks: fio saturates its CPU at 25k IOPS; large blocks: a 200 MiB/s cap."""

    def device(bs: int, qd: int) -> Point:
        if bs == 4096:
            return point(bs, qd, 6_250.0 * min(qd, 4), fio_cpu=95.0 if qd >= 4 else 40.0)
        return capped_device(10**9, 200 * 2**20)(bs, qd)

    s = Settings(point_s=4)
    probes, stop = run_planner(device, s)
    assert [p.iodepth for p in probes if p.bs == 4096] == [1, 2, 4, 8]  # a flat doubling
    assert stop.startswith("done")
    c = characterize([device(p.bs, p.iodepth) for p in probes], s, 0.0)
    assert c.limits is not None and c.limits.iops is None
    assert c.limits.codes["iops"] == "host-bound"
    assert c.limits.bw_bytes is not None


def test_the_budget_is_kept() -> None:
    """Steady points: each may run its whole --point-time; fast ones: their own length,
    ramp and fio's start and stop (1 s) counted before each starts."""
    s = Settings(point_s=10, budget_s=45, method="steady")
    probes, stop = run_planner(capped_device(5000, 200 * 2**20), s, seconds=10.0)
    assert len(probes) == 4  # 4 x 10 s + the 11 s a fifth would need > 45 s
    assert stop == "time budget reached before 1M QD2 (climb)"
    s = Settings(budget_s=10.2)  # 1 s points after a 0.55 s ramp, 2.55 s with fio's start
    probes, stop = run_planner(capped_device(5000, 200 * 2**20), s, seconds=2.55)
    assert len(probes) == 4 and stop == "time budget reached before 16k QD2 (crossover check)"
    # After three (7.65 s), a fourth would need its ramp, its second and fio's start: 10.2 s.
    probes, stop = run_planner(capped_device(5000, 200 * 2**20), replace(s, budget_s=10.15), 2.55)
    assert len(probes) == 3 and stop == "time budget reached before 1M QD2 (climb)", stop
    s = Settings(budget_s=10.2, repeat=2)  # each point twice: 5.1 s
    probes, stop = run_planner(capped_device(5000, 200 * 2**20), s, seconds=5.1)
    assert len(probes) == 2 and stop == "time budget reached before 1M QD1 (climb)"


def test_a_probe_is_a_short_point_or_a_steady_state_workload() -> None:
    s = Settings(point_s=15, rw="randread")
    w = probe_workload(Probe(65536, 8, "climb", seconds=1.3), s)
    assert (w.name, w.bs, w.iodepth, w.runtime_s, w.ramp_s) == (
        "randread-64k-qd8", 65536, 8, 1.3, 0.55
    )  # fmt: skip
    assert dict(w.options) == {"log_avg_msec": "100"}  # ten samples a second
    steady = replace(s, method="steady")
    w = probe_workload(Probe(65536, 8, "climb"), steady)
    assert (w.name, w.bs, w.iodepth, w.runtime_s, w.ramp_s) == ("randread-64k-qd8", 65536, 8, 15, 0)
    assert dict(w.options) == {"ss": "iops:5%", "ss_dur": "3s", "ss_ramp": "1s"}
    short = probe_workload(Probe(4096, 1, "climb"), Settings(point_s=4, method="steady"))
    assert dict(short.options) == {"ss": "iops:5%", "ss_dur": "2s", "ss_ramp": "0s"}
    # On clients: a sample a second, points of 5 s at least (their edge seconds are left out).
    clients = on_clients(s)
    w = probe_workload(Probe(4096, 1, "climb", seconds=5.0), clients)
    assert (clients.min_point_s, w.options) == (5.0, ())
    assert on_clients(steady) == steady


@pytest.mark.parametrize("method", ["fast", "steady"])
def test_a_probe_s_workload_is_the_settings_own_job(method: str) -> None:
    """Every field of a probe's workload comes from the settings: its direction, jobs,
    ioengine, test area, direct IO; the jobs are named when there are two or more; a fast
    probe without its own seconds runs the longest point."""
    s = Settings(rw="randwrite", numjobs=2, ioengine="io_uring", size=64 * MiB, method=method,
                 point_s=6)  # fmt: skip
    w = probe_workload(Probe(8192, 4, "climb"), s)
    assert (w.name, w.rw, w.bs, w.iodepth, w.numjobs, w.ioengine, w.size) == (
        "randwrite-8k-qd4x2", "randwrite", 8192, 4, 2, "io_uring", 64 * MiB
    )  # fmt: skip
    assert w.direct is True and w.runtime_s == 6
    one = probe_workload(Probe(8192, 4, "climb"), replace(s, numjobs=1))
    assert (one.name, one.numjobs) == ("randwrite-8k-qd4", 1)
    three = probe_workload(Probe(8192, 4, "climb"), replace(s, numjobs=3))
    assert three.name == "randwrite-8k-qd4x3"


def test_the_answer_keeps_to_its_own_points_and_says_why_it_stopped() -> None:
    """characterize's answer counts only the points of its direction and jobs (others in
    the same results are not its), says the planner's reason to stop, or, when the points
    end before the plan, that it stopped early; the time budget it judges by is the one
    spent; checks against the model need both limits."""
    s = Settings(point_s=4)
    device = capped_device(5000, 200 * MiB)
    probes, stop = run_planner(device, s)
    points = [device(p.bs, p.iodepth) for p in probes]
    others = [replace(p, rw="randwrite", iops=p.iops / 3) for p in points] + [
        replace(p, numjobs=2, iops=p.iops * 3) for p in points
    ]
    c = characterize(points + others, s, elapsed_s=10.0)
    assert c.points == len(points) and c.stop == stop and len(c.checks) == 2
    assert c.limits and c.limits.iops and c.limits.iops.value == pytest.approx(5000, rel=0.01)
    early = characterize(points[:3], s, elapsed_s=10.0)
    assert early.stop == "stopped before its plan was done (interrupted or failed)"
    assert early.checks == ()
    spent = characterize(points[:3], s, elapsed_s=s.budget_s)
    assert spent.stop.startswith("time budget reached before"), spent.stop
    # Only the IOPS limit known (the bandwidth one out of reach): no checks.
    fast = capped_device(5000, 10**6 * MiB)
    iops_only = characterize([fast(4096, 1), fast(4096, 2), fast(16384, 2), fast(MiB, 1)], s, 10.0)
    assert iops_only.limits and iops_only.limits.iops and iops_only.limits.bw_bytes is None
    assert iops_only.checks == ()


def test_a_busy_host_does_not_hide_a_throttled_volumes_limits() -> None:
    """Issue 23: other processes keep the host's CPUs 97 % busy while a volume throttled to
    5,000 IOPS and 200 MiB/s is characterized. Knowing the throttles (the target's stored
    context), the planner checks the crossover and finds both limits, the throttles'; not
    knowing them, the plateaus may be the busy host's, and it says so (host-busy)."""
    capped = capped_device(5000, 200 * 2**20)

    def busy(bs: int, qd: int) -> Point:
        return replace(capped(bs, qd), host_busy_pct=97.0, host_max_cpu_pct=98.0,
                       fio_host_pct=5.0, others_host_pct=88.0, unseen_host_pct=3.0)  # fmt: skip

    throttles = [{"device": "loop3", "version": 1, "cgroup": "/vol", "read_iops": 5000,
                  "read_bps": 200 * 2**20}]  # fmt: skip
    contexts = {"/dev/vol": {"throttles": {"limits": throttles}}}
    s = Settings(point_s=4)
    probes, stop = run_planner(busy, s, contexts=contexts)
    assert any(p.why == "crossover check" for p in probes) and stop.startswith("done")
    c = characterize([busy(p.bs, p.iodepth) for p in probes], s, 0.0, contexts)
    assert c.limits is not None and c.limits.codes == {}
    assert c.limits.iops is not None and c.limits.iops.value == pytest.approx(5000, rel=0.01)
    assert all(cv.throttle and cv.host_bound() is None for cv in c.curves if cv.bs in (4096, 2**20))
    out = io.StringIO()
    render_characterization(c, Console(file=out, width=200), None)
    assert "host-bound" not in out.getvalue() and "busy with other work" not in out.getvalue()
    probes, _ = run_planner(busy, s)
    assert not any(p.why == "crossover check" for p in probes)
    c = characterize([busy(p.bs, p.iodepth) for p in probes], s, 0.0)
    assert c.limits is not None and c.limits.codes["iops"] == "host-busy"


def test_runs_stored_before_the_fast_method_replay_their_steady_plan() -> None:
    """A stored run's settings without ``method`` ran fio's steady state and climbed until
    two doublings added less than 5 %: `show` replays that plan, not today's."""
    s = Settings.from_dict({"point_s": 4.0, "budget_s": 300.0, "steady_pct": 5.0})
    assert s.method == "steady"
    probes, stop = run_planner(capped_device(5000, 200 * 2**20), s)
    assert [(p.bs, p.iodepth) for p in probes] == [
        (4096, 1), (4096, 2), (4096, 4), (1 << 20, 1), (1 << 20, 2), (1 << 20, 4),
        (16384, 2), (131072, 2),
    ]  # fmt: skip
    assert stop.startswith("done") and {p.seconds for p in probes} == {None}
    assert Settings.from_dict(Settings().as_dict()) == Settings()


def noisy(device: Device, noise: float, *, wander: bool = False, n: int = 10) -> Device:
    """``device`` whose points have ``n`` samples 0.1 s apart, spread by about ``noise``
    (their relative standard deviation) about their mean: in each half-second one sample
    high and the next as low, as when a throttle's burst of IOs falls half into one sample
    (the errors cancel over the point), or, with ``wander``, seconds ``noise`` above, then
    below (that adds up: the seconds' means have a standard deviation of ``noise``)."""

    def measure(bs: int, qd: int) -> Point:
        p = device(bs, qd)
        if wander:
            offsets = [(1 if (i // 10) % 2 == 0 else -1) * noise / 2**0.5 for i in range(n)]
        else:
            split = {1: 1.5 * noise, 2: -1.5 * noise}
            offsets = [split.get(i % 5, 0.0) for i in range(n)]
        samples = tuple(p.iops * (1 + o) for o in offsets)
        half = 0.75 * noise  # the interval's half-width, as Student's t would give it
        return replace(p, samples=samples, interval_s=0.1,
                       iops_low=p.iops * (1 - half), iops_high=p.iops * (1 + half))  # fmt: skip

    return measure


def test_a_flat_doubling_ends_a_climb_only_when_the_intervals_say_so() -> None:
    """One doubling that added nothing ends the climb when both points' 95 % intervals are
    tight; with wide ones (8 % of noise) it takes two doublings, as before."""
    tight = noisy(capped_device(5000, 200 * 2**20), 0.005)
    probes, _ = run_planner(tight, Settings())
    assert [p.iodepth for p in probes if p.bs == 4096] == [1, 2]
    loose = noisy(capped_device(5000, 200 * 2**20), 0.08)
    probes, _ = run_planner(loose, Settings())
    assert [p.iodepth for p in probes if p.bs == 4096] == [1, 2, 4]
    # A curve still rising (+4 % at each doubling, up to QD8) is climbed past its rise: one
    # doubling must add less than 2.5 %, as two together had to add less than 5 %.
    rising = noisy(lambda bs, qd: point(bs, qd, 1000 * 1.04 ** min(qd.bit_length(), 4)), 0.005)
    probes, _ = run_planner(rising, Settings())
    assert [p.iodepth for p in probes if p.bs == 4096] == [1, 2, 4, 8, 16]


@pytest.mark.parametrize("fall", [0.06, 0.16, 0.4])
def test_a_doubling_that_surely_lost_throughput_is_no_plateau(fall: float) -> None:
    """A loop device over RAM without a cap (seen in a full run): QD1 read 36.7k IOPS with
    a 15 % wide interval, QD2 30.7k; the climb ended there and called 36.7k the storage's
    IOPS limit, where QD8 went on to 175k. A doubling whose throughput fell by more than
    the intervals and CLIMB_GAIN allow is no plateau: the climb goes on. At a throttle the
    plateau is the throttle's whatever its first point's burst, and one doubling still ends
    it."""
    base = {1: 36_700.0, 2: 36_700.0 * (1 - fall), 4: 66_000.0, 8: 175_000.0}

    def uncapped(bs: int, qd: int) -> Point:
        iops = base.get(qd, 190_000.0) if bs == 4096 else min(4000.0, 2000.0 * qd)
        return point(bs, qd, iops)

    probes, _ = run_planner(noisy(uncapped, 0.02), Settings())
    assert [p.iodepth for p in probes if p.bs == 4096][:4] == [1, 2, 4, 8]
    # At a 36.7k IOPS throttle, its QD1 point a burst ahead of the cap (up to PEAK_LEAD:
    # the plateau is still the throttle's): that fall is flat, but QD2 alone is the
    # plateau (QD1 is more than 5 % above it), which the answer would call still rising;
    # so the climb takes QD4 too, and the answer has the throttle's limit. Without the
    # context, QD1 to QD2 is no plateau, and QD2 to QD4 ends it the same.
    lead = min(1 / (1 - fall), 1.12)
    capped = noisy(lambda bs, qd: point(bs, qd, 36_700.0 * (lead if qd == 1 else 1) if bs == 4096
                                        else min(36_700.0, 2000.0 * qd)), 0.005)  # fmt: skip
    throttles = [{"device": "loop3", "version": 1, "cgroup": "/vol", "read_iops": 36_700}]
    contexts = {"/dev/vol": {"throttles": {"limits": throttles}}}
    probes, stop = run_planner(capped, Settings(), contexts=contexts)
    assert [p.iodepth for p in probes if p.bs == 4096] == [1, 2, 4] and stop.startswith("done")
    pts = [capped(p.bs, p.iodepth) for p in probes]
    c = characterize(pts, Settings(), 20.0, contexts)
    assert c.limits and c.limits.iops and c.limits.iops.value == pytest.approx(36_700, rel=0.001)
    early = [p for p in pts if (p.bs, p.iodepth) != (4096, 4)]
    too_early = characterize(early, Settings(), 20.0, contexts).limits
    assert too_early is not None and too_early.codes["iops"] == "still-rising"
    probes, _ = run_planner(capped, Settings())
    assert [p.iodepth for p in probes if p.bs == 4096] == [1, 2, 4]


def _at(iops: float, low: float, high: float, samples: int = 3) -> Point:
    """A 4 KiB point of ``iops`` whose 95 % interval is ``low`` to ``high``."""
    return replace(point(4096, 1, iops), iops_low=low, iops_high=high,
                   samples=(iops,) * samples)  # fmt: skip


@pytest.mark.parametrize("throttled", [False, True])
def test_surely_flat_bounds_the_gain_s_whole_interval(throttled: bool) -> None:
    """One doubling is surely flat when the upper end of its gain's 95 % interval (the gain
    plus the two points' half-widths, combined) is under FLAT_GAIN, and, but at a
    throttle, its lower end over -CLIMB_GAIN; at the bounds themselves it is not. Figures
    whose arithmetic is exact in binary, so that the bounds are met exactly."""
    assert (FLAT_GAIN, CLIMB_GAIN) == (0.025, 0.05)
    tight = _at(1000.0, 1000.0, 1000.0)
    assert surely_flat(tight, tight, throttled=throttled)
    # The upper end: +0 % with a half-width of exactly 2.5 % (in either point) is not.
    wide = _at(1000.0, 975.0, 1025.0)
    assert not surely_flat(wide, tight, throttled=throttled)
    assert not surely_flat(tight, wide, throttled=throttled)
    assert surely_flat(_at(1000.0, 976.0, 1024.0), tight, throttled=throttled)
    # +4 % with 2 % half-widths: its interval's lower end is flat, its upper end is not.
    assert not surely_flat(_at(1000.0, 980.0, 1020.0), _at(1040.0, 1019.2, 1060.8),
                           throttled=throttled)  # fmt: skip
    # The lower end: -3.125 % with a half-width of 1.875 % reaches exactly -5 %.
    fell = _at(968.75, 968.75, 968.75)
    assert surely_flat(_at(1000.0, 981.25, 1018.75), fell, throttled=throttled) is throttled
    assert surely_flat(_at(1000.0, 981.5, 1018.5), fell, throttled=throttled)
    # Points without an interval (fewer than 3 samples), or of no throughput, say nothing.
    few = _at(1000.0, 1000.0, 1000.0, samples=2)
    assert not surely_flat(few, tight, throttled=throttled)
    assert not surely_flat(tight, few, throttled=throttled)
    assert not surely_flat(few, few, throttled=throttled)
    assert not surely_flat(_at(0.0, 0.0, 0.0), tight, throttled=throttled)
    # A rate of 1 IOPS is a rate like any other.
    assert surely_flat(_at(1.0, 1.0, 1.0), _at(1.0, 1.0, 1.0), throttled=throttled)


def test_a_climb_ends_at_the_deepest_queue_allowed() -> None:
    """A curve still rising at every doubling is climbed to ``max_qd`` and no further."""
    rising = noisy(lambda bs, qd: point(bs, qd, 1000.0 * qd), 0.005)
    probes, _ = run_planner(rising, Settings(max_qd=8))
    assert [p.iodepth for p in probes if p.bs == 4096] == [1, 2, 4, 8]
    probes, _ = run_planner(rising, Settings(max_qd=6))
    assert [p.iodepth for p in probes if p.bs == 4096] == [1, 2, 4, 6]


def test_the_planner_s_small_helpers() -> None:
    """The power of two at most a value (1 for anything up to 1), and the queue depth that
    saturated every climb (twice the deepest knee; 2 when no climb has two points)."""
    assert [_pow2_at_most(v) for v in (0.0, 0.5, 1.0, 1.5, 2.0, 3.9, 4.0, 40960.0)] == [
        1, 1, 1, 1, 2, 2, 4, 32768
    ]  # fmt: skip
    s = Settings()
    one = curves([point(4096, 1, 5000.0), point(1 << 20, 4, 200.0)])
    assert _plateau_qd(one, s) == 2
    climbed = curves([point(4096, 1, 1000.0), point(4096, 2, 2000.0), point(4096, 4, 2010.0)])
    assert climbed[0].knee.iodepth == 2 and _plateau_qd(climbed, s) == 4
    assert _plateau_qd(climbed, replace(s, max_qd=3)) == 3


def test_a_point_runs_as_long_as_its_figure_needs() -> None:
    """The first point runs the shortest time (1 s after its ramp); the next ones as long as
    the noise that adds up needs for a 95 % interval within 1 %: seconds whose means vary
    by 1 % ask for 1 s x (2 x 1 % / 1 %)^2 = 4 s; at most --point-time; and long enough to
    count 64 IOs at the rate their block size showed (1 MiB at 32 IOPS: 2 s). Samples that
    swing 5 % from one 0.1 s to the next but cancel out (a throttle's bursts) do not make
    points longer."""
    s = Settings(point_s=15)
    cap = capped_device(5000, 200 * 2**20)
    assert {p.seconds for p in run_planner(noisy(cap, 0.003, n=20), s)[0]} == {1.0}
    assert {p.seconds for p in run_planner(noisy(cap, 0.05, n=20), s)[0]} == {1.0}
    probes, _ = run_planner(noisy(cap, 0.01, wander=True, n=20), s)
    assert probes[0].seconds == 1.0 and probes[1].seconds == pytest.approx(4.0)
    # (1 MiB at 200 IOPS: 200 IOs a second, whose counting explains part of its spread)
    assert all(3.0 <= (p.seconds or 0) <= 4.0 for p in probes[1:]), probes
    probes, _ = run_planner(noisy(cap, 0.05, wander=True, n=20), s)
    assert {p.seconds for p in probes[1:]} == {15.0}, "at most --point-time"
    # One second's samples make one batch: no noise to judge by, the shortest points.
    assert {p.seconds for p in run_planner(noisy(cap, 0.05, wander=True), s)[0]} == {1.0}
    slow = noisy(capped_device(2000, 32 * 2**20), 0.003)
    probes, _ = run_planner(slow, s)
    by = {(p.bs, p.iodepth): p.seconds for p in probes}
    assert by[(1 << 20, 1)] == 1.0 and by[(1 << 20, 2)] == pytest.approx(2.0)


def test_counting_whole_ios_is_not_noise_that_needs_longer_points() -> None:
    """At 32 IOPS a 0.1 s sample holds 3 or 4 IOs, a half-second 16: samples of 30 and 40
    IOPS, whose mean over the point is exact all the same (an IO not in one sample is in
    the next). The next point is not made longer for them; the rate asks for 64 IOs."""
    s = Settings(point_s=15)

    def counted(bs: int, qd: int) -> Point:
        p = capped_device(2000, 32 * 2**20)(bs, qd)
        if bs != 1 << 20:
            return noisy(capped_device(2000, 32 * 2**20), 0.003)(bs, qd)
        counts = [3, 4, 3, 3, 4, 3, 3, 4, 3, 2, 4, 3, 3]  # 32 IOs a second
        return replace(p, samples=tuple(10.0 * c for c in counts), interval_s=0.1)

    probes, _ = run_planner(counted, s)
    assert max(p.seconds or 0 for p in probes) == pytest.approx(2.0), probes


# What a cgroup throttle of 32 MiB/s let through per 0.1 s in 1 MiB reads (a real run's
# log): bursts of 1 to 7 IOs, so that one second held 34 IOs and the next 30.
THROTTLED_1M = (30, 30, 30, 60, 10, 30, 30, 30, 60, 30, 10, 30, 30, 50, 10, 40, 30, 30, 50, 20)


@pytest.mark.parametrize("shift", [0, 3, 7, 11])
def test_a_throttles_bursts_of_large_ios_do_not_make_points_longer(shift: int) -> None:
    """The seconds of a slow large-IO point differ by a few IOs in 32 (a throttle's bursts,
    not the storage varying): every point runs the shortest time or 64 IOs, never the 15 s
    those seconds' 6 % spread would ask for. (A full run took 55 s of IO so.)"""
    s = Settings(point_s=15)
    cap = capped_device(2000, 32 * 2**20)
    steady = noisy(cap, 0.003, n=20)

    def throttled(bs: int, qd: int) -> Point:
        p = cap(bs, qd)
        if bs < 1 << 20:
            return steady(bs, qd)
        counts = THROTTLED_1M[shift:] + THROTTLED_1M[:shift]
        return replace(p, samples=tuple(float(c) for c in counts), interval_s=0.1)

    probes, _ = run_planner(throttled, s)
    assert all((p.seconds or 0) <= 2.0 for p in probes), probes
    assert sum((p.seconds or 0) + s.ramp_s for p in probes) <= 20, probes


# -- the survivors of the mutation run (bench/README.md, "analysis/characterize.py") -------


def _sampled(iops: float, samples: list[float], interval_s: float) -> Point:
    return replace(point(4096, 1, iops), samples=tuple(samples), interval_s=interval_s)


def test_the_noise_a_point_is_judged_by_pools_its_batches() -> None:
    """relative_noise: the spread of BATCH_S batches about their mean, less 0.25 / IOs² (one
    IO more or less at a batch's ends), pooled over the points by their batches less one.
    A point with fewer than two batches, or batches of fewer than MIN_SAMPLE_IOS IOs, adds
    nothing, wherever it comes in the list."""
    import math

    from iobench.analysis.characterize import MIN_SAMPLE_IOS, relative_noise

    # Two batches of ten 0.1 s samples: 190 and 210 IOPS, 200 IOs a batch (the least that
    # counts): variance 200 / 200^2 = 0.005, less 0.25 / 200^2.
    tenths = _sampled(200.0, [190.0] * 10 + [210.0] * 10, 0.1)
    assert MIN_SAMPLE_IOS == 200
    assert relative_noise([tenths]) == pytest.approx(math.sqrt(0.005 - 0.25 / 200**2), rel=1e-12)
    # Seconds: each sample is a batch (four of them: three degrees of freedom).
    seconds = _sampled(1000.0, [1000.0, 1100.0, 900.0, 1000.0], 1.0)
    one = (20_000 / 3 - 0.25) / 1000**2
    assert relative_noise([seconds]) == pytest.approx(math.sqrt(one), rel=1e-12)
    pooled = ((0.005 - 0.25 / 200**2) * 1 + one * 3) / 4
    assert relative_noise([tenths, seconds]) == pytest.approx(math.sqrt(pooled), rel=1e-12)
    # Left out, before or after the others: one batch only; 199 IOs a batch.
    short = _sampled(200.0, [150.0] * 5 + [250.0] * 5, 0.1)
    few = _sampled(199.0, [150.0] * 10 + [248.0] * 10, 0.1)
    assert relative_noise([short]) is None and relative_noise([few]) is None
    assert relative_noise([short, seconds]) == relative_noise([seconds, short, few])
    assert relative_noise([few, seconds]) == pytest.approx(math.sqrt(one), rel=1e-12)


def _by_bs(pts: list[Point]) -> dict[int, Any]:
    return {c.bs: c for c in curves(pts)}


def test_a_points_seconds_are_whole_samples_of_what_it_needs() -> None:
    """point_seconds: whole samples (0.1 s by default; 1 ms when none is given), rounded as
    a person writes them (1.1 s, not 1.2000000000000002, nor 1 nor 1.2); a precision of
    0 asks nothing of the noise; 64 IOs at the rate the block size delivered, or, where it
    was not measured, at the rate the two limits predict (8 MiB at 32 MiB/s: 4 IOPS)."""
    from iobench.analysis.characterize import point_seconds

    probe = Probe(4096, 2, "climb")
    for shortest, expected in ((1.0, 1.0), (1.04, 1.1), (1.1, 1.1), (1.2, 1.2), (2.95, 3.0)):
        got = point_seconds(probe, {}, Settings(min_point_s=shortest))
        assert got == expected and str(got) == str(expected), (shortest, got)
    assert point_seconds(probe, {}, Settings(min_point_s=1.0005, sample_ms=0)) == 1.001
    assert point_seconds(probe, {}, Settings(min_point_s=1.0005, sample_ms=1)) == 1.001
    assert point_seconds(probe, {}, Settings(min_point_s=1.0005, sample_ms=2)) == 1.002
    # Noisy batches (7 % over a second): 1 s x (2 x 7 % / 1 %)^2 = 200 s, at most 15 s.
    noisy_pts = {4096: curves([_sampled(200.0, [190.0] * 10 + [210.0] * 10, 0.1)])[0]}
    assert point_seconds(probe, noisy_pts, Settings()) == 15.0
    assert point_seconds(probe, noisy_pts, Settings(precision=0.0)) == 1.0
    # 1 MiB delivered 20 IOPS (QD1 and QD2) where 4 MiB delivered 32 MiB/s: a 1 MiB point
    # counts its 64 IOs at 20 IOPS (3.2 s), not at the 32 the limits predict.
    pts = [point(4096, qd, 1000.0) for qd in (1, 2)]
    pts += [point(MiB, qd, 20.0) for qd in (1, 2)] + [point(4 * MiB, qd, 8.0) for qd in (1, 2)]
    by_bs = _by_bs(pts)
    assert point_seconds(Probe(MiB, 4, "climb"), by_bs, Settings()) == 3.2
    # 8 MiB, not measured: 32 MiB/s / 8 MiB = 4 IOPS, 16 s for 64 IOs (at most --point-time).
    assert point_seconds(Probe(8 * MiB, 2, "larger blocks"), by_bs, Settings(point_s=60)) == 16.0
    assert point_seconds(Probe(8 * MiB, 2, "larger blocks"), by_bs, Settings()) == 15.0


def test_a_climb_goes_on_while_either_of_its_last_two_points_gained() -> None:
    """A climb ends when neither of its last two doublings gained CLIMB_GAIN (5 %) over
    the point before them; a gain of exactly 5 % goes on; a fall after a gain goes on."""
    from iobench.analysis.characterize import _climb

    s = Settings()

    def climb(levels: list[float], noise: float = 0.005) -> Probe | None:
        pts = [point(4096, 2**i, v, noise=noise) for i, v in enumerate(levels)]
        return _climb(curves(pts)[0], 4096, s)

    # QD2 gained 10 %, QD4 fell back 9 % (surely: the intervals are 0.5 %): on to QD8.
    assert climb([1000.0, 1100.0, 1000.0]) == Probe(4096, 8, "climb")
    assert climb([1000.0, 1010.0, 1000.0]) is None  # neither gained 5 %
    # Exactly 5 %, the intervals too wide (3 %) for one flat doubling to end it: on.
    gain = (1 + CLIMB_GAIN) * 1000.0
    assert climb([1000.0, gain, gain], noise=0.03) == Probe(4096, 8, "climb")
    assert climb([1000.0, gain * 0.999, gain * 0.999], noise=0.03) is None
    # A point that read nothing is no plateau: its interval is infinitely wide.
    assert not surely_flat(point(4096, 1, 1000.0), point(4096, 2, 0.0), throttled=False)
    # A curve of two points has a knee: the queue beyond it is twice that.
    two = curves([point(4096, 1, 1000.0), point(4096, 2, 2000.0)])
    assert two[0].knee.iodepth == 2 and _plateau_qd(two, s) == 4


def test_the_crossover_is_checked_on_either_side_by_powers_of_two() -> None:
    """A 24 KiB crossover (1,000 IOPS, 24,000 KiB/s): checked at 8 KiB (the power of two
    at most half of it) and 64 KiB (twice the power of two at most twice it)."""
    device = capped_device(1000, 24_000 * 1024, floor_us=200)
    probes, stop = run_planner(device, Settings(point_s=4))
    assert [p.bs for p in probes if p.why == "crossover check"] == [8192, 65536], probes
    assert stop.startswith("done")


def test_the_answer_knows_a_plateau_at_a_throttle_from_its_contexts() -> None:
    """characterize() with the targets' contexts: a 4 KiB climb whose QD2 ran 7 % ahead of
    a 3,000 IOPS throttle (its burst) and whose QD1 and QD4 sat at it is over at QD4 (a
    fall at a throttle is its burst, and the plateau the throttle's), and the answer says
    the plan is done; without the contexts that fall is no plateau, QD8 is next, and the
    plan was not finished. The document carries the throttles."""
    from iobench.analysis.throttles import with_throttles

    limits = [{"device": "loop3", "version": 1, "cgroup": "/vol", "read_iops": 3000,
               "read_bps": 100 * MiB}]  # fmt: skip
    ctx = {"throttles": {"limits": limits}}
    contexts = {"/dev/vol": ctx}
    cap = capped_device(3000, 100 * MiB, floor_us=20)

    def device(bs: int, qd: int) -> Point:
        p = cap(bs, qd)
        return point(bs, qd, 3204.0) if (bs, qd) == (4096, 2) else p

    s = Settings(point_s=4)
    probes, stop = run_planner(device, s, contexts=contexts)
    assert [(p.bs, p.iodepth) for p in probes[:3]] == [(4096, 1), (4096, 2), (4096, 4)]
    assert (4096, 8) not in [(p.bs, p.iodepth) for p in probes] and stop.startswith("done")
    pts = [device(p.bs, p.iodepth) for p in probes]
    assert characterize(pts, s, 30.0, contexts).stop.startswith("done")
    assert characterize(pts, s, 30.0).stop.startswith("stopped before its plan was done")
    c = characterize(pts, s, 30.0, contexts)
    assert c.limits is not None and c.limits.iops is not None
    assert c.limits.iops.value == pytest.approx(3000, rel=0.001)
    at = with_throttles(c.limits, ctx)
    doc = characterization_document(replace(c, limits=at), None)
    assert doc["throttles"]["iops"] == "the read 3.00k IOPS throttle on loop3 (cgroup v1 /vol)"
    assert doc["throttles"] == at.document()["throttles"]


def test_the_chooser_plans_from_the_stored_results_and_their_context() -> None:
    """CharacterizeChooser, what `iobench characterize` asks for each next workload: its
    definition and budget are the settings'; from no results the first climb's QD1; from a
    4 KiB climb whose QD2 ran a burst ahead of a 3,000 IOPS throttle, with the target's
    context, the 1 MiB climb (the plateau is the throttle's), without it 4 KiB at QD8; and
    nothing once the budget is spent."""
    from iobench.analysis.characterize import CharacterizeChooser
    from test_report_curves import result

    s = Settings(point_s=4, budget_s=60.0)
    chooser = CharacterizeChooser(s)
    assert chooser.budget_s == 60.0
    assert chooser.definition() == {"kind": "characterize", "settings": s.as_dict()}
    first = chooser.next_workload([], {}, 0.0)
    assert first is not None and (first.name, first.bs, first.iodepth) == (
        "randread-4k-qd1",
        4096,
        1,
    )
    assert first.runtime_s == 1.0 and first.ramp_s == 0.55  # a fast point: the shortest
    done = [result(4096, qd, i, (3204.0 if qd == 2 else 3000.0, 1e12))
            for i, qd in enumerate((1, 2, 4), start=1)]  # fmt: skip
    limits = [{"device": "loop3", "version": 1, "cgroup": "/vol", "read_iops": 3000}]
    ctx = {"throttles": {"limits": limits}}
    after = chooser.next_workload(done, ctx, 12.0)
    assert after is not None and (after.bs, after.iodepth) == (MiB, 1), after
    alone = chooser.next_workload(done, {}, 12.0)
    assert alone is not None and (alone.bs, alone.iodepth) == (4096, 8), alone
    assert chooser.next_workload(done, ctx, 60.0) is None
