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
    Probe,
    Settings,
    characterization_document,
    characterize,
    next_probe,
    probe_workload,
)
from iobench.analysis.curves import Point
from iobench.report.curves import render_characterization
from test_curves import point

Device = Callable[[int, int], Point]


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
        (4096, 1), (4096, 2), (4096, 4),              # at the IOPS cap from QD1
        (1 << 20, 1), (1 << 20, 2), (1 << 20, 4),     # at the bandwidth cap from QD1
        (16384, 2), (131072, 2),                      # either side of the 41 KiB crossover
    ]  # fmt: skip
    assert stop.startswith("done")
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


def test_a_host_bound_plateau_is_not_a_limit() -> None:
    """Small blocks: fio saturates its CPU at 25k IOPS; large blocks: a 200 MiB/s cap."""

    def device(bs: int, qd: int) -> Point:
        if bs == 4096:
            return point(bs, qd, 6_250.0 * min(qd, 4), fio_cpu=95.0 if qd >= 4 else 40.0)
        return capped_device(10**9, 200 * 2**20)(bs, qd)

    s = Settings(point_s=4)
    probes, stop = run_planner(device, s)
    assert [p.iodepth for p in probes if p.bs == 4096] == [1, 2, 4, 8, 16]  # two flat doublings
    assert stop.startswith("done")
    c = characterize([device(p.bs, p.iodepth) for p in probes], s, 0.0)
    assert c.limits is not None and c.limits.iops is None
    assert c.limits.codes["iops"] == "host-bound"
    assert c.limits.bw_bytes is not None


def test_the_budget_is_kept() -> None:
    s = Settings(point_s=10, budget_s=45)
    probes, stop = run_planner(capped_device(5000, 200 * 2**20), s, seconds=10.0)
    assert len(probes) == 4  # 4 x 10 s + the 11 s a fifth would need > 45 s
    assert stop == "time budget reached before 1M QD2 (climb)"


def test_a_probe_is_a_steady_state_workload() -> None:
    s = Settings(point_s=15, rw="randread")
    w = probe_workload(Probe(65536, 8, "climb"), s)
    assert (w.name, w.bs, w.iodepth, w.runtime_s, w.ramp_s) == ("randread-64k-qd8", 65536, 8, 15, 0)
    assert dict(w.options) == {"ss": "iops:5%", "ss_dur": "3s", "ss_ramp": "1s"}
    short = probe_workload(Probe(4096, 1, "climb"), Settings(point_s=4))
    assert dict(short.options) == {"ss": "iops:5%", "ss_dur": "2s", "ss_ramp": "0s"}


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
