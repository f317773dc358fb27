"""Curves, knees, Little's law and the two-limit model (analysis/curves.py): synthetic
points with known answers, and a recorded block-size sweep from another project."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from iobench.analysis.curves import (
    Curve,
    Point,
    curve_document,
    curves,
    infer_limits,
    points_from_results,
)
from iobench.analysis.stats import summarize
from iobench.importer import import_files
from iobench.store.repository import Store

EXTERNAL = Path(__file__).parent / "data" / "fio-outputs" / "external"
WHITEPAU = EXTERNAL / "whitepau__fio-benchmark-public__qd_time_sweep_workstation.json"

# The block-volume guide (SEEDS.md, article 001): 5,000 IOPS or 200 MB/s, whichever first.
IOPS_CAP = 5000.0
BW_CAP = 200e6


def capped(bs: int, qd: int, *, floor_us: float = 500.0) -> Point:
    """A point of a volume with IOPS_CAP and BW_CAP whose single IO takes ``floor_us``."""
    iops = min(qd / (floor_us / 1e6), IOPS_CAP, BW_CAP / bs)
    lat_ns = qd / iops * 1e9  # Little's law holds
    return point(bs, qd, iops, lat_ns=lat_ns)


def point(
    bs: int,
    qd: int,
    iops: float,
    *,
    lat_ns: float | None = None,
    jobs: int = 1,
    noise: float = 0.005,
    p99_ns: float | None = None,
    fio_cpu: float | None = 5.0,
    host_busy: float | None = 10.0,
    host_max: float | None = 12.0,
    rw: str = "randread",
) -> Point:
    samples = (iops * (1 - noise), iops, iops * (1 + noise))
    return Point(
        target="/dev/vol",
        workload=f"{rw}-{bs}-qd{qd}",
        rw=rw,
        bs=bs,
        iodepth=qd,
        numjobs=jobs,
        iops=iops,
        iops_low=iops * (1 - noise),
        iops_high=iops * (1 + noise),
        bw_bytes=iops * bs,
        lat_mean_ns=lat_ns,
        lat_p99_ns=p99_ns,
        fio_cpu_pct=fio_cpu,
        host_busy_pct=host_busy,
        host_max_cpu_pct=host_max,
        samples=samples,
    )


def guide_sweep() -> list[Point]:
    return [
        capped(bs * 1024, qd) for bs in (4, 16, 32, 64, 256, 1024) for qd in (1, 2, 4, 8, 16, 32)
    ]


def test_the_guides_table_is_found_from_a_sweep() -> None:
    (lim,) = infer_limits(curves(guide_sweep()))
    assert lim.iops is not None and lim.bw_bytes is not None and lim.crossover_bs is not None
    assert lim.iops.value == pytest.approx(IOPS_CAP, rel=0.001)
    assert lim.bw_bytes.value == pytest.approx(BW_CAP, rel=0.001)
    assert lim.crossover_bs.value == pytest.approx(BW_CAP / IOPS_CAP, rel=0.01)  # 40 kB
    assert lim.iops.low < IOPS_CAP < lim.iops.high
    # The guide's table: 4K..32K bound by IOPS, 64K and larger by bandwidth.
    binds = {b.bs // 1024: b.binds for b in lim.table}
    assert binds == {4: "iops", 16: "iops", 32: "iops", 64: "bandwidth", 256: "bandwidth",
                     1024: "bandwidth"}  # fmt: skip
    iops = {b.bs // 1024: round(b.iops) for b in lim.table}
    assert iops == {4: 5000, 16: 5000, 32: 5000, 64: 3052, 256: 763, 1024: 191}
    assert all(abs(b.deviation or 0) < 0.01 for b in lim.table)
    assert lim.reasons == {}


def test_knee_floor_and_little_on_a_latency_bound_curve() -> None:
    pts = [capped(4096, qd, floor_us=1000.0) for qd in (1, 2, 4, 8, 16, 32)]
    (c,) = curves(pts)
    assert [round(p.iops) for p in c.points] == [1000, 2000, 4000, 5000, 5000, 5000]
    assert c.knee.iodepth == 8 and c.saturated is True
    assert c.latency_floor_ns == pytest.approx(1e6)
    assert all(x.ok for x in c.little())


def test_a_curve_still_rising_is_not_a_limit() -> None:
    pts = [point(4096, qd, 1000.0 * qd, lat_ns=1e6) for qd in (1, 2, 4, 8)]
    pts += [point(1 << 20, qd, 50.0 * qd, lat_ns=2e7) for qd in (1, 2, 4, 8)]
    cs = curves(pts)
    assert [c.saturated for c in cs] == [False, False]
    (lim,) = infer_limits(cs)
    assert lim.iops is None and lim.bw_bytes is None and lim.crossover_bs is None
    assert lim.codes == {"iops": "still-rising", "bw_bytes": "still-rising",
                         "crossover_bs": "needs-both"}  # fmt: skip
    assert (
        "still rising at the most outstanding IO tried, 8 (+100% at the last step)"
        in (lim.reasons["iops"])
    )


def test_a_plateau_the_host_set_is_not_the_storages() -> None:
    pts = [point(4096, qd, v, fio_cpu=97.0) for qd, v in ((8, 30e3), (16, 30.2e3), (32, 30.1e3))]
    pts += [capped(1 << 20, qd) for qd in (1, 2, 4)]
    (lim,) = infer_limits(curves(pts))
    assert lim.iops is None and lim.codes["iops"] == "host-bound"
    assert "fio used 97 % of a CPU per job" in lim.reasons["iops"]
    assert lim.bw_bytes is not None  # the large blocks had CPU to spare


def test_one_plateau_point_with_cpu_to_spare_makes_it_the_storages() -> None:
    """The host was busy at QD2 only; at QD4 and QD8 it idled and IOPS did not rise."""
    pts = [
        point(4096, 2, 5000.0, host_busy=70.0),
        point(4096, 4, 5000.0, host_busy=15.0),
        point(4096, 8, 5000.0, host_busy=14.0),
    ]
    (c,) = curves(pts)
    assert c.host_bound() is None


def test_one_block_size_cannot_tell_the_limits_apart() -> None:
    (lim,) = infer_limits(curves([capped(4096, qd) for qd in (1, 2, 4)]))
    assert lim.codes["iops"] == lim.codes["bw_bytes"] == "one-block-size"


def test_when_one_limit_binds_everywhere_the_other_is_out_of_reach() -> None:
    # Bandwidth binds from 4k up: the IOPS limit is above 50k.
    pts = [point(bs, 4, BW_CAP / bs) for bs in (4096, 65536, 1 << 20)]
    (lim,) = infer_limits(curves(pts))
    assert lim.iops is None and lim.codes["iops"] == "other-limit-binds"
    assert "test smaller blocks" in lim.reasons["iops"]
    assert lim.bw_bytes is not None and lim.bw_bytes.value == pytest.approx(BW_CAP)


def test_best_under_a_p99_target_and_the_document() -> None:
    pts = [point(4096, qd, 1000.0 * min(qd, 4), lat_ns=1e6, p99_ns=1e6 * qd) for qd in (1, 2, 4, 8)]
    (c,) = curves(pts)
    best = c.best_under_p99(2.5e6)
    assert best is not None and best.iodepth == 2
    assert c.best_under_p99(0.5e6) is None
    doc = curve_document(c, 2.5e6)
    assert doc["best_under_p99"]["iodepth"] == 2
    assert doc["knee"] == {"iodepth": 4, "outstanding": 4, "iops": 4000.0}
    assert doc["little"][0] == {"iodepth": 1, "numjobs": 1, "in_flight": 1.0, "ratio": 1.0,
                                "ok": True}  # fmt: skip
    # QD8: 4000 IOPS x 1 ms = 4 in flight of 8 asked for: a mismatch, explained.
    (bad,) = [x for x in c.little() if not x.ok]
    assert bad.point.iodepth == 8 and bad.ratio == pytest.approx(0.5)
    assert "synchronous ioengine" in bad.message()


def test_outstanding_io_counts_jobs() -> None:
    c = Curve("/t", "randread", 4096, 4, (point(4096, 8, 1.0, jobs=4),))
    assert c.points[0].outstanding == 32


def test_a_recorded_block_size_sweep(tmp_path: Path) -> None:
    """whitepau/fio-benchmark-public: sequential reads from a USB stick at QD128, 4 KiB to
    16 MiB (each several times). 76k IOPS at 4 KiB; about 450 MB/s from 64 KiB up."""
    with Store.open(tmp_path / "r.db") as store:
        (run_id,) = import_files(store, [str(WHITEPAU)], label=None, argv=[])
        run = store.get_run(run_id)
    pts = points_from_results(run.results)
    assert {p.bs for p in pts} == {4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 2 << 20,
                                   4 << 20, 8 << 20, 16 << 20}  # fmt: skip
    (lim,) = infer_limits(curves(pts))
    assert lim.iops is not None and lim.bw_bytes is not None and lim.crossover_bs is not None
    assert lim.iops.value == pytest.approx(76_050, rel=0.01)
    assert 440e6 < lim.bw_bytes.value < 500e6
    assert 5_500 < lim.crossover_bs.value < 6_700
    assert "one queue depth" in lim.iops.basis  # a single QD: saturation assumed, and said
    assert {b.bs: b.binds for b in lim.table}[16 << 10] == "neither"  # the smooth bend


def test_a_block_size_at_the_crossover_does_not_hide_a_limit() -> None:
    """2000 IOPS and 32 MiB/s: 16 KiB sits on both plateaus, and noise gave it a few more
    IOPS than 4 KiB. The IOPS limit is still found (bench/characterize_vs_sweep.py)."""
    cap_iops, cap_bw = 2000.0, 32 * 2**20
    pts = [
        point(bs, qd, min(cap_iops, cap_bw / bs) * (1.004 if bs == 16384 else 1.0))
        for bs in (4096, 16384, 65536, 1 << 20)
        for qd in (1, 2, 4)
    ]
    (lim,) = infer_limits(curves(pts))
    assert lim.iops is not None and lim.bw_bytes is not None, lim.reasons
    assert lim.iops.value == pytest.approx(cap_iops, rel=0.01)
    assert lim.bw_bytes.value == pytest.approx(cap_bw, rel=0.01)
    assert {b.bs: b.binds for b in lim.table}[16384] == "both"


def _busy(p: Point, busy: float, fio: float, others: float, unseen: float = 0.0) -> Point:
    """``p`` on a host ``busy`` % busy: fio's work ``fio`` %, other processes named
    ``others`` %, the rest unseen (issue 23's attribution)."""
    return replace(p, host_busy_pct=busy, host_max_cpu_pct=busy, fio_host_pct=fio,
                   others_host_pct=others, unseen_host_pct=unseen)  # fmt: skip


def test_a_host_busy_with_other_work_does_not_make_a_plateau_host_bound() -> None:
    """Issue 23: the host's CPUs were 97 % busy, but not with fio's work: the plateau is
    not fio's limit (host-bound) but may be lower than the storage allows (host-busy)."""
    small = [_busy(capped(4096, qd), 97.0, 2.0, 90.0, 5.0) for qd in (4, 8, 16)]
    large = [capped(1 << 20, qd) for qd in (1, 2, 4)]
    (c, _) = curves(small + large)
    assert c.host_bound() is None
    assert c.busy_elsewhere() == (
        "the host's CPUs were 97 % busy with other work (fio and the kernel threads doing "
        "its IO 2 %)"
    )
    (lim,) = infer_limits(curves(small + large))
    assert lim.iops is None and lim.codes["iops"] == "host-busy"
    assert "may be lower than the storage allows" in lim.reasons["iops"]
    # The same load from fio and the kernel threads doing its IO: host-bound.
    fio = [_busy(capped(4096, qd), 97.0, 80.0, 10.0, 7.0) for qd in (4, 8, 16)]
    (lim,) = infer_limits(curves(fio + large))
    assert lim.codes["iops"] == "host-bound"
    assert (
        "more for fio than for other work (fio and the kernel threads doing its IO 80 %"
        in (lim.reasons["iops"])
    )
    # Half the host busy (one whole CPU of two): with fio's work host-bound, with others'
    # busy elsewhere; at 30 % it had room to spare: neither.
    assert _busy(capped(4096, 8), 60.0, 45.0, 10.0).host_bound() is not None
    assert _busy(capped(4096, 8), 60.0, 5.0, 50.0).host_bound() is None
    assert _busy(capped(4096, 8), 60.0, 5.0, 50.0).busy_elsewhere() is not None
    assert _busy(capped(4096, 8), 30.0, 5.0, 25.0).busy_elsewhere() is None
    # One plateau point with room to spare makes it the storage's plateau.
    room = [_busy(capped(4096, qd), 97.0, 2.0, 90.0) for qd in (4, 8)]
    room.append(_busy(capped(4096, 16), 30.0, 2.0, 25.0))
    (c,) = curves(room)
    assert c.busy_elsewhere() is None and c.host_bound() is None
    # One kernel thread doing its IO at 90 % of one CPU: host-bound.
    one = replace(_busy(capped(4096, 8), 55.0, 20.0, 30.0), io_thread_max_pct=90.0)
    assert one.host_bound() == (
        "a kernel thread doing its IO kept one CPU 90 % busy (a loop or network block device "
        "worker)"
    )


def _turns(p: Point, fio: float, io: float, *, busy: float = 45.0, cpus: int = 2) -> Point:
    """``p`` where fio's processes used ``fio`` % and the kernel threads doing its IO ``io``
    % of all ``cpus`` CPUs (issue 23's attribution), the host ``busy`` % busy, no CPU above
    80 % and no one thread of them at 80 % of a CPU."""
    return replace(p, host_busy_pct=busy, host_max_cpu_pct=min(busy + 20.0, 79.0),
                   fio_host_pct=fio + io, others_host_pct=3.0, unseen_host_pct=2.0,
                   io_threads_host_pct=io, io_thread_max_pct=min(io * cpus, 79.0),
                   cpus=cpus, fio_cpu_pct=min(fio * cpus, 84.0))  # fmt: skip


# An uncapped loop device over RAM at 1 MiB, QD2 to QD32 (three characterize runs on this
# 2-CPU host, `iobench characterize` by hand): host busy, fio's processes, the loop work (over two
# kworkers), % of all CPUs; IOPS. The host under 60 % busy at some, one CPU under 80 %.
LOOP_1M = [
    [(53.6, 16.8, 32.4, 3779.0), (54.1, 17.4, 34.2, 3643.0), (55.7, 17.0, 35.2, 4126.0),
     (53.7, 16.2, 33.5, 4323.0), (54.0, 16.6, 33.7, 4313.0)],
    [(54.7, 16.4, 31.1, 4566.0), (53.6, 16.2, 34.7, 4385.0), (52.8, 15.6, 35.8, 3985.0)],
    [(59.4, 16.3, 30.0, 3091.0), (58.6, 15.5, 32.5, 3360.0), (59.5, 17.4, 33.5, 3197.0),
     (64.9, 16.2, 30.4, 3257.0)],
]  # fmt: skip


@pytest.mark.parametrize("run", LOOP_1M)
def test_fio_taking_turns_with_a_loop_devices_worker_is_host_bound(
    run: list[tuple[float, float, float, float]],
) -> None:
    """A loop device's worker serves one request at a time and fio's job waits on it: the
    two take turns, and one CPU bounds them, though the host had a CPU to spare and no one
    thread used 80 % of one. The flat plateau of such a climb (3-4.5 GB/s from QD2 to 32)
    is the host's, not a storage limit (a clean-clone run called it one: the no-cap
    characterize test, tests/test_capped.py)."""
    mib = 1 << 20
    pts = [
        _turns(point(mib, 2 << i, iops), fio, io, busy=busy)
        for i, (busy, fio, io, iops) in enumerate(run)
    ]
    for p in pts:
        low = replace(p, host_busy_pct=min(p.host_busy_pct or 0.0, 49.0))  # < HOST_BUSY_PCT
        assert low.host_load() is None  # nor one CPU at 80 %
        why = low.host_bound()
        assert why is not None and why.startswith(
            "fio's job and the kernel threads doing its IO"
        ), why
    (c,) = curves(pts)
    assert "take turns" in (c.host_bound() or "")
    small = [point(4096, qd, 200_000.0, fio_cpu=90.0) for qd in (8, 16)]  # fio's CPU
    (lim,) = infer_limits(curves(pts + small))
    assert lim.codes == {"iops": "host-bound", "bw_bytes": "host-bound",
                         "crossover_bs": "needs-both"}, lim.reasons  # fmt: skip


# The same device at 4 KiB (characterize by hand, four runs): host busy, fio's processes,
# the loop work (one kworker), % of all 2 CPUs; IOPS at QD1, 2, 4. Neither CPU at 52 %, the
# host under 43 %: fio 51-54 % and the loop work 22-26 % of one CPU, 74-77 % together, the
# IOPS flat or falling with more queue (the plateau is QD1 alone, or QD1 and QD2).
LOOP_4K = [
    [(40.7, 25.9, 12.0, 94331.0), (39.7, 26.3, 11.4, 75211.0), (37.3, 26.0, 11.0, 77715.0)],
    [(40.5, 25.6, 11.7, 90141.0), (36.5, 25.9, 11.2, 64642.0), (36.1, 26.1, 11.1, 87571.0)],
    [(41.3, 26.9, 11.0, 94803.0), (42.5, 26.6, 11.3, 95385.0), (36.2, 27.3, 10.4, 71178.0)],
    [(40.0, 25.4, 11.7, 90094.0), (35.4, 25.7, 11.1, 48471.0), (35.1, 25.5, 10.9, 66496.0)],
]  # fmt: skip


@pytest.mark.parametrize("run", LOOP_4K)
def test_small_ios_taking_turns_with_a_loop_worker_are_host_bound(
    run: list[tuple[float, float, float, float]],
) -> None:
    """At 4 KiB the job hands each IO over to the loop worker and back many times a
    millisecond, each hand-over leaving a CPU idle for a moment: the two take turns at 74-77 %
    of one CPU, the host 35-43 % busy. Such a plateau (IOPS that more queue does not lift, or
    lowers) is the host's: a clean-clone run and two of three runs by hand called it an IOPS
    limit at 4k (the no-cap characterize test, tests/test_capped.py)."""
    pts = [
        _turns(point(4096, 1 << i, iops), fio, io, busy=busy)
        for i, (busy, fio, io, iops) in enumerate(run)
    ]
    for p in pts:
        assert p.host_load() is None
        why = p.host_bound()
        assert why is not None and why.startswith(
            "fio's job and the kernel threads doing its IO used 7"
        ), why
    (c,) = curves(pts)
    assert c.plateau and c.plateau[0].iodepth == 1 and "take turns" in (c.host_bound() or "")
    large = [point(1 << 20, qd, 4000.0, fio_cpu=90.0) for qd in (8, 16)]  # fio's CPU
    (lim,) = infer_limits(curves(pts + large))
    assert lim.codes == {"iops": "host-bound", "bw_bytes": "host-bound",
                         "crossover_bs": "needs-both"}, lim.reasons  # fmt: skip


def test_taking_turns_needs_one_cpu_between_them_and_a_share_for_the_kernel_threads() -> None:
    """The bounds: the job and the kernel threads doing its IO at 70 % of one CPU together
    (on 2 CPUs 35 % of all) or more; the threads 20 % of one CPU at least (fio's work alone is
    judged by its own CPU, 85 %); a job's share is fio's over its jobs; nothing recorded,
    nothing said."""
    base = point(1 << 20, 8, 4000.0)
    at = _turns(base, 15.0, 25.0, busy=45.0)  # 30 + 50 = 80 % of one CPU
    assert at.pipeline() == (30.0, 50.0)
    assert at.host_bound() == (
        "fio's job and the kernel threads doing its IO used 80 % of one CPU between them "
        "(30 % and 50 %): where those threads serve one request at a time (a loop device's "
        "worker), the two take turns, and one CPU bounds them"
    )
    assert _turns(base, 10.0, 25.0).pipeline() == (20.0, 50.0)
    assert "used 70 % of one CPU" in (_turns(base, 10.0, 25.0).host_bound() or "")
    assert _turns(base, 9.5, 25.0).host_bound() is None  # 69 %
    assert _turns(base, 30.0, 10.0).pipeline() == (60.0, 20.0)  # the threads at 20 %: a stage
    assert "(60 % and 20 %)" in (_turns(base, 30.0, 10.0).host_bound() or "")
    assert _turns(base, 31.0, 9.5).pipeline() is None  # 19 %: fio's work, judged by its own CPU
    assert _turns(base, 31.0, 9.5).host_bound() is None
    # Four CPUs: the same shares of all are twice the shares of one.
    assert _turns(base, 10.0, 10.0, cpus=4).pipeline() == (40.0, 40.0)
    assert _turns(base, 10.0, 10.0, cpus=4).host_bound() is not None
    # Two jobs: each job takes turns with the threads; fio's processes are both.
    two = replace(_turns(base, 20.0, 20.0), numjobs=2)
    assert two.pipeline() == (20.0, 40.0) and two.host_bound() is None  # 60 %
    # Not recorded (results stored before the threads were counted, or a host that was not
    # busy enough for them to be sampled).
    for p in (replace(at, cpus=None), replace(at, fio_host_pct=None),
              replace(at, io_threads_host_pct=None)):  # fmt: skip
        assert p.pipeline() is None and p.host_bound() is None, p


def test_a_points_cpus_and_kernel_threads_come_from_its_result() -> None:
    """``host_cpu``'s ``cpus`` and ``io_threads_pct`` reach the point and its document, and
    repetitions average them."""
    from test_report_curves import result

    r = result(1 << 20, 8, 1)
    host = {"busy_pct": 55.0, "max_cpu_busy_pct": 70.0, "cpus": 2, "fio_pct": 16.0,
            "iobench_pct": 0.5, "io_threads_pct": 32.0,
            "processes": [{"pid": 9, "comm": "kworker/u8:0-loop0", "pct": 25.0, "kernel": True,
                           "io": True}]}  # fmt: skip
    one = replace(r, metrics={**(r.metrics or {}), "host_cpu": host})
    other = replace(
        one,
        metrics={**(r.metrics or {}), "host_cpu": {**host, "io_threads_pct": 30.0}},
        repetition=2,
    )
    (p,) = points_from_results([one])
    assert (p.cpus, p.io_threads_host_pct, p.fio_host_pct, p.io_thread_max_pct) == (
        2,
        32.0,
        48.0,
        50.0,
    )
    assert p.pipeline() == (32.0, 64.0) and p.host_bound() is not None
    doc = curve_document(curves([p])[0])["points"][0]
    assert (doc["cpus"], doc["io_threads_host_pct"]) == (2, 32.0)
    (mean,) = points_from_results([one, other])
    assert (mean.cpus, mean.io_threads_host_pct) == (2, 31.0)


def test_a_plateau_at_a_throttle_is_the_throttles_not_the_hosts() -> None:
    """Issue 23: characterize printed "host-bound at its plateau" beside "equal to the
    throttle". A plateau at a throttle is the throttle's, whatever the host did."""
    from iobench.analysis.throttles import curves_at_throttles, with_throttles

    limits = [{"device": "loop3", "version": 1, "cgroup": "/vol", "read_iops": 5000,
               "read_bps": 200_000_000}]  # fmt: skip
    ctx = {"throttles": {"limits": limits}}
    pts = [point(4096, qd, v, fio_cpu=97.0) for qd, v in ((8, 5000.0), (16, 5010.0), (32, 4990.0))]
    pts += [capped(1 << 20, qd) for qd in (1, 2, 4)]
    cs = curves_at_throttles(curves(pts), {"/dev/vol": ctx})
    assert cs[0].throttle == "the read 5.00k IOPS throttle on loop3 (cgroup v1 /vol)"
    assert cs[0].host_bound() is None and cs[0].busy_elsewhere() is None
    assert curve_document(cs[0])["throttle"] == cs[0].throttle
    (lim,) = infer_limits(cs)
    lim = with_throttles(lim, ctx)
    assert lim.iops is not None and lim.throttles["iops"] == cs[0].throttle
    # Without the throttle, the same figures are fio's CPU's.
    (lim,) = infer_limits(curves(pts))
    assert lim.codes["iops"] == "host-bound"


def _climb(bs: int, levels: list[float]) -> list[Point]:
    """One climb at ``bs``: QD1, 2, 4, ... at the IOPS given, in order."""
    return [point(bs, 2**i, v) for i, v in enumerate(levels)]


@pytest.mark.parametrize(
    "levels",
    [
        [2998.0, 2998.0, 3204.0, 3004.0, 3013.0],  # seen: a 3,000 IOPS cap, QD4 a slice ahead
        [3230.0, 2990.0, 3001.0],  # the point ahead first
        [2995.0, 3003.0, 3260.0, 2999.0],  # 8.7 % ahead, two deeper points after it
    ],
)
def test_one_point_ahead_of_a_throttle_is_not_its_plateau(levels: list[float]) -> None:
    """A point of a second or two can run a slice of its window ahead of a throttle. Such a
    point, more than 5 % above the typical saturated point, is left out of the plateau; it
    sets neither the limit nor the throttle the plateau is at."""
    from iobench.analysis.throttles import curves_at_throttles

    pts = _climb(4096, levels) + _climb(1 << 20, [48.0, 48.1, 47.9])  # 48 MiB/s
    (c, _) = curves(pts)
    ahead = max(levels)
    assert c.best.iops == ahead  # still the best point, shown as such
    assert ahead not in [p.iops for p in c.plateau] and len(c.plateau) == len(levels) - 1
    assert c.saturated is True and c.knee.iops < ahead
    (lim,) = infer_limits(curves(pts))
    assert lim.iops is not None, lim.reasons
    assert lim.iops.value == pytest.approx(3000, rel=0.005)
    limits = [{"device": "loop3", "version": 1, "cgroup": "/vol", "read_iops": 3000}]
    (at, _) = curves_at_throttles(curves(pts), {"/dev/vol": {"throttles": {"limits": limits}}})
    assert at.throttle == "the read 3.00k IOPS throttle on loop3 (cgroup v1 /vol)"


def test_a_point_ahead_among_others_near_it_does_not_lift_the_plateau() -> None:
    """Seen in the host-busy test: a 1,200 IOPS cap measured 1193, 1202, 1269, 1205, 1211
    IOPS at QD1 to 16. 1211 is within 5 % of 1269, so the points within 5 % of the best
    were the two high ones (limit +3.4 %); judged from the typical saturated point, the
    plateau is all five."""
    from iobench.analysis.throttles import curves_at_throttles

    levels = [1192.8, 1202.0, 1268.5, 1204.6, 1211.4]
    pts = _climb(4096, levels) + _climb(1 << 20, [40.0, 40.6, 40.0])  # 40 MiB/s
    (c, _) = curves(pts)
    assert [p.iops for p in c.plateau] == levels and c.knee.iodepth == 1
    (lim,) = infer_limits(curves(pts))
    assert lim.iops is not None and lim.iops.value == pytest.approx(1200, rel=0.015)
    limits = [{"device": "loop3", "version": 1, "cgroup": "/vol", "read_iops": 1200}]
    (at, _) = curves_at_throttles(curves(pts), {"/dev/vol": {"throttles": {"limits": limits}}})
    assert at.throttle == "the read 1.20k IOPS throttle on loop3 (cgroup v1 /vol)"


@pytest.mark.parametrize(
    ("levels", "plateau", "saturated"),
    [
        # The best at the deepest queue: the typical saturated point is the best itself, and
        # the climb may still be rising.
        ([2998.0, 3004.0, 3013.0, 3204.0], [3204.0], False),
        # Points around the typical one, the best among them: the plateau as before.
        ([2000.0, 3000.0, 3100.0, 2980.0], [3000.0, 3100.0, 2980.0], True),
        # The best more than PEAK_LEAD (15 %) above the typical saturated point: a real peak
        # (a credit spent, a cache filled), not a throttle's slice ahead; the plateau stays
        # the best, with the deeper queues confirming it saturated.
        ([1000.0, 2000.0, 4000.0, 3000.0], [4000.0], True),
        ([1000.0, 4000.0, 3000.0, 2000.0], [4000.0], True),
        ([1000.0, 4000.0, 3000.0, 3000.0], [4000.0], True),
        ([3000.0, 3600.0, 3100.0, 3050.0], [3600.0], True),  # 16 % ahead
    ],
)
def test_a_real_peak_or_a_best_among_its_neighbours_keeps_the_plateau_of_the_best(
    levels: list[float], plateau: list[float], saturated: bool
) -> None:
    (c,) = curves(_climb(4096, levels))
    assert [p.iops for p in c.plateau] == plateau
    assert c.saturated is saturated


def test_the_json_documents_name_every_field_as_the_docs_do() -> None:
    """`characterize --json` and `show --json` (docs/characterize.md): a point's, a curve's
    and the limits' documents, every field by its documented name with its own figure."""
    p = replace(point(4096, 4, 4000.0, lat_ns=1e6, p99_ns=2.5e6, fio_cpu=31.0, host_busy=41.0,
                      host_max=51.0),
                steady=True, fio_host_pct=21.0, others_host_pct=3.5, unseen_host_pct=1.5,
                io_thread_max_pct=12.5, io_threads_host_pct=6.25, cpus=2, seconds=2.5)  # fmt: skip
    from iobench.analysis.curves import point_document

    assert point_document(p) == {
        "workload": "randread-4096-qd4", "bs": 4096, "iodepth": 4, "numjobs": 1,
        "outstanding": 4, "iops": 4000.0, "iops_low": 4000.0 * 0.995,
        "iops_high": 4000.0 * 1.005, "bw_bytes": 4000.0 * 4096, "lat_mean_ns": 1e6,
        "lat_p99_ns": 2.5e6, "steady": True, "fio_cpu_pct": 31.0, "host_busy_pct": 41.0,
        "host_max_cpu_pct": 51.0, "fio_host_pct": 21.0, "others_host_pct": 3.5,
        "unseen_host_pct": 1.5, "io_thread_max_pct": 12.5, "io_threads_host_pct": 6.25,
        "cpus": 2, "seconds": 2.5,
    }  # fmt: skip
    # A curve: 1,000 IOPS a queue up to QD4, the plateau from there; QD8 with twice the
    # latency Little's law allows.
    pts = [point(4096, qd, 1000.0 * min(qd, 4), lat_ns=qd / (1000.0 * min(qd, 4)) * 1e9,
                 p99_ns=1e6 * qd) for qd in (1, 2, 4)]  # fmt: skip
    pts.append(point(4096, 8, 4010.0, lat_ns=4e6, p99_ns=8e6))
    (c,) = curves(pts)
    doc = curve_document(c, 3e6)
    assert list(doc) == ["target", "rw", "bs", "numjobs", "saturated", "knee", "max_iops",
                         "max_bw_bytes", "latency_floor_ns", "host_bound", "throttle",
                         "p99_under_ns", "best_under_p99", "little", "points"]  # fmt: skip
    assert (doc["target"], doc["rw"], doc["bs"], doc["numjobs"]) == ("/dev/vol", "randread",
                                                                     4096, 1)  # fmt: skip
    assert doc["saturated"] is True
    assert doc["knee"] == {"iodepth": 4, "outstanding": 4, "iops": 4000.0}
    assert doc["max_iops"] == {"value": 4010.0, "outstanding": 8}
    assert doc["max_bw_bytes"] == {"value": 4010.0 * 4096, "outstanding": 8}
    assert doc["latency_floor_ns"] == 1e6
    assert doc["host_bound"] is None and doc["throttle"] is None
    assert doc["p99_under_ns"] == 3e6 and doc["best_under_p99"] == point_document(pts[1])
    assert doc["little"][3] == {"iodepth": 8, "numjobs": 1, "in_flight": 4010.0 * 4e6 / 1e9,
                                "ratio": 4010.0 * 4e6 / 1e9 / 8, "ok": False}  # fmt: skip
    assert [x["ok"] for x in doc["little"]] == [True, True, True, False]
    assert doc["points"] == [point_document(x) for x in pts]
    assert curve_document(c)["best_under_p99"] is None
    assert curve_document(c)["p99_under_ns"] is None
    # The limits of the guide's sweep.
    (lim,) = infer_limits(curves(guide_sweep()))
    assert lim.iops is not None and lim.bw_bytes is not None and lim.crossover_bs is not None
    d = lim.document()
    assert list(d) == ["target", "rw", "limits", "reasons", "reason_codes", "throttles", "table"]
    assert (d["target"], d["rw"]) == ("/dev/vol", "randread")
    assert d["limits"] == {"iops": lim.iops.as_dict(), "bw_bytes": lim.bw_bytes.as_dict(),
                           "crossover_bs": lim.crossover_bs.as_dict()}  # fmt: skip
    assert d["limits"]["iops"] == {"value": lim.iops.value, "low": lim.iops.low,
                                   "high": lim.iops.high, "basis": lim.iops.basis}  # fmt: skip
    assert d["reasons"] == {"iops": None, "bw_bytes": None, "crossover_bs": None}
    assert d["reason_codes"] == {"iops": None, "bw_bytes": None, "crossover_bs": None}
    assert d["throttles"] == {"iops": None, "bw_bytes": None}
    assert [row["bs"] for row in d["table"]] == [4096, 16384, 32768, 65536, 262144, 1 << 20]
    assert d["table"][0] == {"bs": 4096, "iops": lim.table[0].iops,
                             "bw_bytes": lim.table[0].bw_bytes, "binds": "iops",
                             "model_iops": lim.table[0].model_iops}  # fmt: skip
    assert d["table"][0]["iops"] == pytest.approx(IOPS_CAP)
    assert d["table"][-1]["binds"] == "bandwidth"
    # Without a limit: each missing figure None, its reason and code said.
    (half,) = infer_limits(curves([capped(4096, qd) for qd in (1, 2, 4)]))
    h = half.document()
    assert h["limits"]["bw_bytes"] is None and h["limits"]["crossover_bs"] is None
    assert h["reason_codes"]["crossover_bs"] == "needs-both"
    assert h["reasons"]["crossover_bs"] == "it needs both limits"


def test_a_stored_result_becomes_a_point_field_by_field() -> None:
    """points_from_results: each figure of a point from its stored result (its direction's
    section, fio's CPU, the host's load, its samples or fio's steady window, its times), a
    result that is no point skipped, and repetitions averaged with their merged histogram."""
    import math
    import statistics

    from test_report_curves import result

    base = result(4096, 4, 1)
    read = dict((base.metrics or {})["read"])
    read["lat_ns"] = {**read["lat_ns"], "mean": 800_000.0, "p99": 2_000_000.0,
                      "bins": {"700000": 90, "2000000": 10}}  # fmt: skip
    samples = {"interval_ms": 100, "read": {"t_s": [0.1, 0.2, 0.3, 0.4],
                                            "iops": [3900.0, 4100.0, 4000.0, 4000.0]}}  # fmt: skip
    host = {"busy_pct": 41.0, "max_cpu_busy_pct": 55.0, "cpus": 2, "fio_pct": 16.0,
            "io_threads_pct": 30.0, "iobench_pct": 0.5}  # fmt: skip
    metrics = {"read": {**read, "iops": 4000.0, "bw_bytes": 4000.0 * 4096},
               "cpu": {"usr_pct": 10.0, "sys_pct": 22.5}, "host_cpu": host}  # fmt: skip
    r = replace(base, metrics=metrics, samples=samples, started_at="2026-11-22T10:00:00.000Z",
                finished_at="2026-11-22T10:00:02.500Z")  # fmt: skip
    (p,) = points_from_results([r])
    assert (p.target, p.workload, p.rw, p.bs, p.iodepth, p.numjobs) == (
        r.target, "randread-4096-qd4", "randread", 4096, 4, 1
    )  # fmt: skip
    assert (p.iops, p.bw_bytes) == (4000.0, 4000.0 * 4096)
    half = statistics.stdev([3900.0, 4100.0, 4000.0, 4000.0]) / 2 * 3.182446305284263
    assert p.iops_low == pytest.approx(4000.0 - half) and p.iops_high == pytest.approx(
        4000.0 + half
    )
    assert (p.lat_mean_ns, p.lat_p99_ns, p.steady) == (800_000.0, 2_000_000.0, None)
    assert (p.fio_cpu_pct, p.host_busy_pct, p.host_max_cpu_pct) == (32.5, 41.0, 55.0)
    assert (p.fio_host_pct, p.io_threads_host_pct, p.cpus) == (46.0, 30.0, 2)
    assert p.seconds == 2.5 and p.interval_s == 0.1
    assert p.samples == (3900.0, 4100.0, 4000.0, 4000.0)
    assert p.bins == {700000: 90, 2000000: 10}
    # fio's steady window, when attained, is the point (one sample a second).
    ss = {"attained": True, "iops": [4010.0, 4020.0, "x", 4030.0],
          "bw_bytes": [4020.0 * 4096] * 3}  # fmt: skip
    (st,) = points_from_results([replace(r, metrics={**metrics, "steadystate": ss})])
    assert (st.iops, st.bw_bytes, st.steady, st.interval_s) == (4020.0, 4020.0 * 4096, True, 1.0)
    assert st.samples == (4010.0, 4020.0, 4030.0)
    # Not attained: the whole run's figures and samples, and steady False.
    (un,) = points_from_results([replace(r, metrics={**metrics, "steadystate":
                                                     {**ss, "attained": False}})])  # fmt: skip
    assert (un.iops, un.steady, un.interval_s, un.samples) == (4000.0, False, 0.1, p.samples)
    # Two samples: no interval; a damaged time: no duration; no CPU figures: none.
    two = {"interval_ms": 1000, "read": {"iops": [3900.0, 4100.0]}}
    (short,) = points_from_results([replace(r, samples=two, started_at="yesterday",
                                            metrics={"read": metrics["read"]})])  # fmt: skip
    assert (short.iops_low, short.iops_high, short.seconds, short.interval_s) == (
        4000.0, 4000.0, None, 1.0
    )  # fmt: skip
    assert (short.fio_cpu_pct, short.host_busy_pct, short.cpus, short.fio_host_pct) == (
        None, None, None, None
    )  # fmt: skip
    # No point: mixed or unknown rw, a parameter not said, a direction with no IO, failed.
    for params in ({"rw": "randrw"}, {"rw": "bogus"}, {"bs": None}, {"iodepth": "4"},
                   {"numjobs": 1.0}):  # fmt: skip
        assert points_from_results([replace(r, params={**r.params, **params})]) == [], params
    assert points_from_results([replace(r, metrics={**metrics, "read": {"iops": 0}})]) == []
    assert points_from_results([replace(r, metrics={**metrics, "read": None})]) == []
    assert points_from_results([replace(r, status="failed")]) == []
    # Writes are points of their own direction.
    w = replace(r, params={**r.params, "rw": "randwrite"},
                metrics={**metrics, "read": None, "write": metrics["read"]},
                samples={"interval_ms": 100, "write": samples["read"]})  # fmt: skip
    (pw,) = points_from_results([w])
    assert (pw.rw, pw.iops, pw.samples) == ("randwrite", 4000.0, p.samples)
    # Two repetitions: means, the interval of their mean, the histograms merged, the
    # samples and seconds together.
    other = dict(metrics["read"])
    other.update(iops=4400.0, bw_bytes=4400.0 * 4096,
                 lat_ns={**read["lat_ns"], "mean": 600_000.0, "p99": 900_000.0,
                         "bins": {"700000": 100}})  # fmt: skip
    r2 = replace(r, repetition=2, metrics={**metrics, "read": other, "cpu": {"usr_pct": 20.0,
                 "sys_pct": 22.5}, "steadystate": None}, samples={"interval_ms": 100,
                 "read": {"iops": [4400.0] * 3}})  # fmt: skip
    (m,) = points_from_results([r, r2])
    assert m.iops == 4200.0 and m.bw_bytes == 4200.0 * 4096
    t = 12.706204736174707  # Student's t, 1 degree of freedom
    assert m.iops_low == pytest.approx(4200.0 - t * 200.0)
    assert m.iops_high == pytest.approx(4200.0 + t * 200.0)
    assert m.lat_mean_ns == 700_000.0 and m.fio_cpu_pct == 37.5 and m.steady is None
    assert m.bins == {700000: 190, 2000000: 10}
    assert m.lat_p99_ns is not None and math.isclose(m.lat_p99_ns, 2_000_000.0, rel_tol=0.05)
    assert m.samples == p.samples + (4400.0,) * 3 and m.seconds == 5.0
    assert (m.cpus, m.io_threads_host_pct, m.host_busy_pct) == (2, 30.0, 41.0)
    assert (m.target, m.workload, m.rw, m.interval_s) == (r.target, p.workload, p.rw, 0.1)
    assert (m.host_max_cpu_pct, m.fio_host_pct, m.others_host_pct) == (
        p.host_max_cpu_pct, p.fio_host_pct, p.others_host_pct
    )  # fmt: skip
    assert (m.unseen_host_pct, m.io_thread_max_pct) == (p.unseen_host_pct, p.io_thread_max_pct)
    assert p.host_max_cpu_pct is not None and p.others_host_pct is not None
    # Both steady: steady; a repetition whose time was damaged adds no seconds.
    both = [replace(x, metrics={**(x.metrics or {}), "steadystate": ss}) for x in (r, r2)]
    (sm,) = points_from_results([both[0], replace(both[1], started_at="yesterday")])
    assert sm.steady is True and sm.seconds == 2.5
    (sm,) = points_from_results([both[0], r2])  # one not asked: not said
    assert sm.steady is None
    # Without a histogram in each, the p99s are averaged.
    nobins = {**other, "lat_ns": {**other["lat_ns"], "bins": None}}
    r3 = replace(r2, metrics={**(r2.metrics or {}), "read": nobins})
    (m3,) = points_from_results([r, r3])
    assert m3.bins == {} and m3.lat_p99_ns == (2_000_000.0 + 900_000.0) / 2


def _counted(
    qd: int, completed: float, ran_ms: int, lat_ms: float | None, jobs: int = 1, **more: object
) -> float:
    """The IOPS of a 1 s point that completed ``completed`` IOs in fio's ``ran_ms``, its
    mean latency ``lat_ms``."""
    from test_report_curves import result

    base = result(4096, qd, 1)
    read = {**(base.metrics or {})["read"], "iops": completed / ran_ms * 1000,
            "bw_bytes": completed / ran_ms * 1000 * 4096, "runtime_ms": ran_ms,
            "ios_completed": completed, **more,
            "lat_ns": {"mean": lat_ms * 1e6 if lat_ms is not None else None}}  # fmt: skip
    params = {**base.params, "runtime_s": 1.0, "ramp_s": 0.5, "numjobs": jobs}
    (p,) = points_from_results([replace(base, params=params, metrics={"read": read})])
    assert p.bw_bytes == pytest.approx(p.iops * 4096)
    return p.iops


def test_a_points_count_leaves_out_the_ios_fio_waited_for_after_its_runtime() -> None:
    """Measured on a loop device throttled to 1,200 IOPS (or 200 MiB/s), 1 s points after
    a 0.5 s ramp: a point's IOPS are the IOs completed before fio stopped over the time it
    ran its workload, whatever the storage did with the IOs in flight then."""
    # The throttle's last burst freed all 64 at once: counted, 1 ms timed. fio: +5 %.
    assert _counted(64, 1264, 1001, 64 / 1264 * 1001) == pytest.approx(1200, abs=0.5)
    # A busy CPU sent fio past a burst: it ran 1.1 s, then waited 2 IOs' latency.
    assert _counted(2, 1322, 1100, 1.67) == pytest.approx(1320 / 1.09833)
    # 1 MiB at QD32 against 200 MiB/s (20 IOs a burst): freed over 2 bursts, 103 ms.
    assert _counted(32, 232, 1103, 160.0) == pytest.approx(200)
    # Storage that serves IOs as they come (an HDD at QD32, 160 ms): fio's figure stands.
    assert _counted(32, 232, 1160, 160.0) == pytest.approx(232 / 1.16)
    # A synchronous engine keeps one in flight whatever the iodepth (Little's law says 1).
    assert _counted(32, 1201, 1001, 1 / 1.2) == pytest.approx(1200, abs=0.5)
    # No latency: all asked for were in flight, over all the time fio ran; each job's.
    assert _counted(64, 1264, 1001, None) == pytest.approx(1200 / 1.001)
    assert _counted(32, 1264, 1001, None, jobs=2) == pytest.approx(1200 / 1.001)
    # No more than were in flight (a stall): fio's figure.
    assert _counted(64, 64, 1001, None) == pytest.approx(64 / 1.001)
    assert _counted(64, 65, 1001, None) == pytest.approx(1 / 1.001)


def test_a_point_that_did_not_run_its_runtime_keeps_fios_figure() -> None:
    """A run that ended early (a size-based run, an error), or the clients' aggregate
    (their common window, analysis/together.py), or a count not stored: fio's figure; a
    steady point: fio's steady window."""
    from test_report_curves import result

    assert _counted(64, 1264, 998, 50.0) == pytest.approx(1264 / 0.998)
    assert _counted(64, 1264, 999, 51.0) == pytest.approx(1200)  # fio's ms, rounded
    base = result(4096, 64, 1)
    read = {**(base.metrics or {})["read"], "iops": 1262.7, "runtime_ms": 1001,
            "ios_completed": 1264, "lat_ns": {"mean": 50.7e6}}  # fmt: skip
    params = {**base.params, "runtime_s": 1.0}
    r = replace(base, params=params, metrics={"read": read})
    for changed in (replace(r, client="all", clients=3),
                    replace(r, params={**params, "runtime_s": None}),
                    replace(r, params={**params, "runtime_s": "1"}),
                    replace(r, metrics={"read": {**read, "ios_completed": None}}),
                    replace(r, metrics={"read": {**read, "runtime_ms": None}})):  # fmt: skip
        (p,) = points_from_results([changed])
        assert p.iops == 1262.7, changed
    (p,) = points_from_results([r])
    assert p.iops == pytest.approx(1200, abs=0.5)
    # fio's steady window, when attained, is the point as it was.
    ss = {"attained": True, "iops": [1210.0, 1230.0], "bw_bytes": [1220.0 * 4096] * 2}
    (st,) = points_from_results([replace(r, metrics={"read": read, "steadystate": ss})])
    assert (st.iops, st.bw_bytes) == (1220.0, 1220.0 * 4096)


def test_a_limit_weighs_its_points_by_the_time_they_counted() -> None:
    """A throttle's burst is a slice of its time at any block size: a 256 KiB point one
    burst high (+4.3 %, seen in CI) weighs as much as a 1 MiB point of the same second,
    not four times as much for its four times the IOs; and a point of 2 s twice one of 1 s."""
    cap_iops, cap_bw = 3000.0, 270 * 2**20

    def timed(bs: int, qd: int, share: float, seconds: float) -> Point:
        iops = min(cap_iops, cap_bw / bs) * share
        n = round(seconds / 0.1)
        return replace(point(bs, qd, iops), samples=(iops,) * n, interval_s=0.1)

    climbs = [timed(4096, qd, 1.0, 1.0) for qd in (1, 2, 4)] + [timed(32768, 2, 1.0, 1.0)]
    pts = climbs + [timed(262144, 2, 1.043, 1.0)] + [timed(1 << 20, q, 1.0, 1.0) for q in (1, 2, 4)]
    (lim,) = infer_limits(curves(pts))
    assert lim.bw_bytes is not None, lim.reasons
    assert lim.bw_bytes.value == pytest.approx(cap_bw * (1 + 0.043 / 4))  # by IOs: +2.5 %
    assert lim.bw_bytes.basis.startswith("bandwidth plateau at 256k*, 1M")
    pts = [*climbs, timed(1 << 20, 1, 1.0, 2.0), timed(1 << 20, 2, 1.03, 1.0)]
    (lim,) = infer_limits(curves(pts))
    assert lim.bw_bytes is not None, lim.reasons
    assert lim.bw_bytes.value == pytest.approx(cap_bw * 1.01)
    # Samples of 1 s weigh ten times those of 0.1 s: 2 s of 1 s samples against 1 s of tenths.
    slow = replace(timed(1 << 20, 1, 1.0, 2.0), samples=(cap_bw / 2**20,) * 2, interval_s=1.0)
    (lim,) = infer_limits(curves([*climbs, slow, timed(1 << 20, 2, 1.03, 1.0)]))
    assert lim.bw_bytes is not None and lim.bw_bytes.value == pytest.approx(cap_bw * 1.01)
    # Two samples in all are enough for the time's weights: one of 2 s, one of 1 s.
    one = [replace(timed(1 << 20, 1, 1.0, 1.0), samples=(270.0,), interval_s=2.0),
           replace(timed(1 << 20, 2, 1.03, 1.0), samples=(278.1,), interval_s=1.0)]  # fmt: skip
    (lim,) = infer_limits(curves([*climbs, *one]))
    assert lim.bw_bytes is not None and lim.bw_bytes.value == pytest.approx(cap_bw * 1.01)


def test_a_limits_interval_is_of_its_own_unit() -> None:
    """The bandwidth limit's 95 % interval is that of its points' samples in bytes per
    second; without samples, the points' own intervals, in bytes per second too."""
    cap_iops, cap_bw = 3000.0, 270 * 2**20
    climbs = [point(4096, qd, cap_iops) for qd in (1, 2, 4)]
    noisy = [point(1 << 20, qd, 270.0, noise=0.02) for qd in (1, 2, 4)]
    (lim,) = infer_limits(curves([*climbs, *noisy]))
    assert lim.bw_bytes is not None
    s = summarize([v * 2**20 for p in noisy for v in p.samples])
    assert s.mean is not None and s.ci95_low is not None and s.ci95_high is not None
    assert lim.bw_bytes.low == pytest.approx(cap_bw - (s.mean - s.ci95_low))
    assert lim.bw_bytes.high == pytest.approx(cap_bw + (s.ci95_high - s.mean))
    bare = [replace(p, samples=()) for p in noisy]
    (lim,) = infer_limits(curves([*climbs, *bare]))
    assert lim.bw_bytes is not None
    e = lim.bw_bytes
    assert e.value == pytest.approx(cap_bw) and e.low == pytest.approx(cap_bw * 0.98)
    assert e.high == pytest.approx(cap_bw * 1.02)


def test_a_points_figures_that_its_result_does_not_say() -> None:
    """No bandwidth stored: 0, not a guess; three samples are enough for an interval;
    fio's CPU needs both its user and its system time."""
    from test_report_curves import result

    base = result(4096, 4, 1)
    read = {k: v for k, v in (base.metrics or {})["read"].items() if k != "bw_bytes"}
    samples = {"interval_ms": 100, "read": {"iops": [4900.0, 5100.0, 5000.0]}}
    r = replace(base, metrics={"read": read, "cpu": {"usr_pct": 10.0}}, samples=samples)
    (p,) = points_from_results([r])
    assert p.bw_bytes == 0.0 and p.fio_cpu_pct is None
    assert p.iops_low < p.iops < p.iops_high


def test_why_a_limit_was_not_found_is_said_in_full() -> None:
    """The reasons a limit is null, word for word: the other limit binds at every block
    size tried (and which way to look), or the curve was still rising, each naming its
    limit and block size."""
    sizes = (4096, 65536, 1 << 20)
    (lim,) = infer_limits(
        curves([point(bs, qd, 100 * 2**20 / bs) for bs in sizes for qd in (1, 2, 4)])
    )
    assert lim.reasons["iops"] == (
        "the bandwidth limit already binds at 4k, the block size with the most IOPS (25.6k): "
        "the IOPS limit is higher; test smaller blocks"
    )
    (lim,) = infer_limits(curves([point(bs, qd, 1000.0) for bs in sizes for qd in (1, 2, 4)]))
    assert lim.reasons["bw_bytes"] == (
        "the IOPS limit still binds at 1M, the block size with the most bandwidth (1000 MiB/s): "
        "the bandwidth limit is higher; test larger blocks"
    )
    rising = [point(4096, qd, 500.0 * qd) for qd in (1, 2, 4)]
    rising += [point(1 << 20, qd, 20.0 * qd) for qd in (1, 2, 4)]
    (lim,) = infer_limits(curves(rising))
    tail = "at the most outstanding IO tried, 4 (+100% at the last step): no limit was reached; "
    assert lim.reasons["iops"] == f"the IOPS at 4k was still rising {tail}try deeper queues"
    assert (
        lim.reasons["bw_bytes"] == f"the bandwidth at 1M was still rising {tail}try deeper queues"
    )
    assert lim.codes == {"iops": "still-rising", "bw_bytes": "still-rising",
                         "crossover_bs": "needs-both"}  # fmt: skip
