"""Throughput curves and storage limits from measured points. Pure (docs/characterize.md).

A **point** is one workload's result: a block size, a queue depth and a number of jobs
(``outstanding`` IOs = iodepth x numjobs), and what it delivered. A **curve** is the points
of one (target, rw, block size, numjobs) against outstanding IO: it rises while the
storage has spare parallelism and flattens where something saturates. Across block sizes,
a volume with an IOPS limit and a bandwidth limit delivers ``min(iops_limit, bw_limit /
bs)``: the IOPS limit binds for small blocks, the bandwidth limit for large ones, and the
**crossover** block size is ``bw_limit / iops_limit`` (the block-volume guide's table).

Only a limit that was reached is reported. A plateau is not the storage's when the host was
the bottleneck (fio's CPU, the host's CPUs busy with fio's work, or one CPU pegged by a
kernel thread doing its IO), unless it is at a cgroup throttle (then it is the
throttle's: analysis.throttles.curves_at_throttles); a curve
still rising at its last point has not shown its limit; and a block-size range where one
limit binds everywhere cannot show the other. Each such case gives a reason instead of a
number.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from iobench.analysis.cpuload import busiest_io_thread, fio_leads, load_of
from iobench.analysis.histogram import merge_bins, percentiles_from_bins
from iobench.analysis.results import is_ok, latency_value, section
from iobench.analysis.stats import summarize
from iobench.records import ResultRecord
from iobench.units import format_bytes, format_iops, format_rate, format_size_short

# A point within this fraction of a curve's best throughput is on its plateau.
PLATEAU_FRACTION = 0.95
# A best point at most this far above the typical saturated point does not set the plateau
# (Curve.top): a throttle's slice (0.1 s) ahead in a point of 1 s is +10 %, with a burst
# after the ramp up to about +15 %. A point further ahead is a real peak and sets it.
PEAK_LEAD = 1.15
# Across block sizes, a block size within this fraction of a limit is bound by it.
BINDING_FRACTION = 0.9
# Little's law: IOPS x mean latency should be the outstanding IOs within this factor.
LITTLE_TOLERANCE = 0.25
# The host, not the storage, may be the bottleneck at a point when fio's job used this
# much of a CPU, fio and the kernel threads doing its IO kept the host's CPUs this busy
# (half of all CPUs: on a 2-CPU host, one whole CPU), or one such thread kept one CPU this
# busy. Results stored before iobench said whose work it was: the host's CPUs this busy,
# or its busiest CPU, whoever used them.
FIO_CPU_BOUND_PCT = 85.0
HOST_BUSY_PCT = 50.0
ONE_CPU_BUSY_PCT = 80.0
# A job and the kernel threads doing its IO take turns when those threads serve one request
# at a time (a loop device's worker, which the kernel runs on whichever kworker is free):
# together they are bound by one CPU, as one thread is, once the threads are a stage of
# their own (IO_STAGE_PCT of one CPU) and the two use TURNS_PCT of one CPU between them:
# each hand-over leaves a CPU idle for a moment, more of them the smaller the IOs. An
# uncapped loop device over RAM at 1 MiB: fio 30-34 % and its loop work 53-67 % of one CPU
# (over two kworkers, neither above 55 %), 86-103 % together, from QD2 to QD32 at the same
# 3-4.5 GB/s; at 4 KiB: fio 51-54 % and the loop work 23-26 %, 74-77 % together (the host
# 40-42 % busy, neither CPU at 47 %), the IOPS flat or falling with more queue (96, 78 and
# 67 thousand at QD1, 2 and 4).
IO_STAGE_PCT = 20.0
TURNS_PCT = 70.0

_DIRECTION_OF = {"read": "read", "randread": "read", "write": "write", "randwrite": "write"}


@dataclass(frozen=True)
class Point:
    """One measured workload (repetitions of it averaged)."""

    target: str
    workload: str
    rw: str
    bs: int  # bytes
    iodepth: int
    numjobs: int
    iops: float
    iops_low: float  # 95 % confidence interval of the mean, from the per-second samples
    iops_high: float
    bw_bytes: float
    lat_mean_ns: float | None  # total latency (submission to completion)
    lat_p99_ns: float | None
    steady: bool | None = None  # fio's steady state attained (None: not asked for)
    fio_cpu_pct: float | None = None  # usr + sys of fio's job, % of one CPU
    host_busy_pct: float | None = None  # all the host's CPUs
    host_max_cpu_pct: float | None = None  # the busiest CPU
    # fio's processes and the kernel threads doing its IO, % of all CPUs (None: not
    # recorded); the other processes named, likewise; the busiest kernel thread doing its
    # IO, % of one CPU (None: not sampled). analysis.cpuload.
    fio_host_pct: float | None = None
    others_host_pct: float | None = None
    unseen_host_pct: float | None = None  # busy, but no process was seen to use it
    io_thread_max_pct: float | None = None
    # The kernel threads doing its IO together, % of all CPUs (within fio_host_pct), and
    # how many CPUs the host had (None: not recorded).
    io_threads_host_pct: float | None = None
    cpus: int | None = None
    seconds: float | None = None  # how long it ran
    # The per-second IOPS its interval comes from (fio's steady window, else its log), and
    # the seconds each covers (characterize's short points log every 0.1 s).
    samples: tuple[float, ...] = field(default=(), repr=False, compare=False)
    interval_s: float = field(default=1.0, repr=False, compare=False)
    bins: dict[int, int] = field(default_factory=dict, repr=False, compare=False)

    @property
    def outstanding(self) -> int:
        return self.iodepth * self.numjobs

    @property
    def bw_low(self) -> float:
        return self.bw_bytes * self.iops_low / self.iops if self.iops else 0.0

    @property
    def bw_high(self) -> float:
        return self.bw_bytes * self.iops_high / self.iops if self.iops else 0.0

    def host_load(self) -> str | None:
        """How busy the host was, when that may have held this point down: ``the host's
        CPUs were 60 % busy`` (half of them: one whole CPU on a 2-CPU host), ``one CPU was
        85 % busy``; None when it had room to spare."""
        if self.host_busy_pct is not None and self.host_busy_pct >= HOST_BUSY_PCT:
            return f"the host's CPUs were {self.host_busy_pct:.0f} % busy"
        if self.host_max_cpu_pct is not None and self.host_max_cpu_pct >= ONE_CPU_BUSY_PCT:
            return f"one CPU was {self.host_max_cpu_pct:.0f} % busy"
        return None

    def _fios(self) -> bool:
        """The host's load was fio's work more than any other (analysis.cpuload)."""
        return fio_leads(
            self.fio_host_pct or 0.0, self.others_host_pct or 0.0, self.unseen_host_pct or 0.0
        )

    def pipeline(self) -> tuple[float, float] | None:
        """One job's share of fio's CPU and the kernel threads doing its IO, each in % of
        one CPU; None when not recorded, or when no such thread did a share of its own
        (IO_STAGE_PCT)."""
        if self.cpus is None or self.fio_host_pct is None or self.io_threads_host_pct is None:
            return None
        io = self.io_threads_host_pct * self.cpus
        if io < IO_STAGE_PCT:
            return None
        job = max(0.0, self.fio_host_pct - self.io_threads_host_pct) * self.cpus
        return job / max(1, self.numjobs), io

    def host_bound(self) -> str | None:
        """Why fio (its jobs, or the kernel threads doing its IO), on this host, may have
        set this point's figures; None if not. A host busy with other work does not make
        it (:meth:`busy_elsewhere`)."""
        if self.fio_cpu_pct is not None and self.fio_cpu_pct >= FIO_CPU_BOUND_PCT:
            return f"fio used {self.fio_cpu_pct:.0f} % of a CPU per job"
        io_thread = self.io_thread_max_pct
        if io_thread is not None and io_thread >= ONE_CPU_BUSY_PCT:
            return (
                f"a kernel thread doing its IO kept one CPU {io_thread:.0f} % busy (a loop or "
                "network block device worker)"
            )
        turns = self.pipeline()
        if turns is not None and sum(turns) >= TURNS_PCT:
            job, io = turns
            return (
                f"fio's job and the kernel threads doing its IO used {job + io:.0f} % of one "
                f"CPU between them ({job:.0f} % and {io:.0f} %): where those threads serve "
                "one request at a time (a loop device's worker), the two take turns, and one "
                "CPU bounds them"
            )
        load = self.host_load()
        if load is None or self.fio_host_pct is None:  # whose work: not recorded
            return load and (
                f"{load} (a kernel thread such as a loop or network block device worker)"
                if load.startswith("one CPU")
                else load
            )
        if self._fios():
            others = (self.others_host_pct or 0.0) + (self.unseen_host_pct or 0.0)
            return (
                f"{load}, more for fio than for other work (fio and the kernel threads doing "
                f"its IO {self.fio_host_pct:.0f} %, other work {others:.0f} %)"
            )
        return None

    def busy_elsewhere(self) -> str | None:
        """Why this point's figures may be lower than the storage allows: the host was busy
        (:meth:`host_load`) with work that was not fio's; None if not (or not recorded)."""
        load = self.host_load()
        if load is None or self.fio_host_pct is None or self.host_bound():
            return None
        return (
            f"{load} with other work (fio and the kernel threads doing its IO "
            f"{self.fio_host_pct:.0f} %)"
        )


# -- points from stored results ---------------------------------------------------------------


def _ci(values: Sequence[float]) -> tuple[float, float] | None:
    s = summarize(values)
    if s.ci95_low is None or s.ci95_high is None:
        return None
    return s.ci95_low, s.ci95_high


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _seconds(r: ResultRecord) -> float | None:
    from datetime import datetime

    try:
        start = datetime.fromisoformat(r.started_at.replace("Z", "+00:00"))
        end = datetime.fromisoformat(r.finished_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (end - start).total_seconds()


def _one_point(r: ResultRecord) -> Point | None:
    p = r.params
    direction = _DIRECTION_OF.get(str(p.get("rw")))
    bs, iodepth, numjobs = p.get("bs"), p.get("iodepth"), p.get("numjobs")
    if direction is None or not all(isinstance(v, int) for v in (bs, iodepth, numjobs)):
        return None  # mixed read/write, or a parameter the file did not say (imports)
    sec = section(r, direction)
    if sec is None or not sec.get("iops"):
        return None
    metrics = r.metrics or {}
    iops, bw = float(sec["iops"]), float(sec.get("bw_bytes") or 0.0)
    ss = metrics.get("steadystate") or None
    steady: bool | None = None
    per_second: list[float] = []
    if ss:
        steady = bool(ss.get("attained"))
        window = [float(v) for v in ss.get("iops") or [] if _number(v) is not None]
        window_bw = [float(v) for v in ss.get("bw_bytes") or [] if _number(v) is not None]
        if steady and window and window_bw:
            # The steady window is the result (FIO.md §4); the whole run includes the rise.
            iops, bw, per_second = statistics.fmean(window), statistics.fmean(window_bw), window
    interval_s = 1.0  # fio's steady-state window: one sample a second
    lat_mean, _ = latency_value(sec, "mean")
    if not per_second:
        outstanding = int(iodepth) * int(numjobs)  # type: ignore[arg-type]
        in_window = _in_window(r, sec, iops, _number(lat_mean), outstanding)
        if in_window is not None:
            iops, bw = in_window, bw * in_window / iops
        series = ((r.samples or {}).get(direction) or {}).get("iops") or []
        per_second = [float(v) for v in series if _number(v) is not None]
        interval_s = _interval_s(r.samples)
    # Two samples give a Student-t interval 12.7 standard errors wide: no use for one point.
    ci = _ci(per_second) if len(per_second) >= 3 else None
    low, high = ci if ci else (iops, iops)
    bins_raw, _ = latency_value(sec, "bins")
    cpu = metrics.get("cpu") or {}
    usr, sys_ = _number(cpu.get("usr_pct")), _number(cpu.get("sys_pct"))
    host = metrics.get("host_cpu") or {}
    return Point(
        target=r.target,
        workload=r.workload,
        rw=str(p["rw"]),
        bs=int(bs),  # type: ignore[arg-type]
        iodepth=int(iodepth),  # type: ignore[arg-type]
        numjobs=int(numjobs),  # type: ignore[arg-type]
        iops=iops,
        iops_low=min(low, iops),
        iops_high=max(high, iops),
        bw_bytes=bw,
        lat_mean_ns=_number(lat_mean),
        lat_p99_ns=_number(latency_value(sec, "p99")[0]),
        steady=steady,
        fio_cpu_pct=None if usr is None or sys_ is None else usr + sys_,
        host_busy_pct=_number(host.get("busy_pct")),
        host_max_cpu_pct=_number(host.get("max_cpu_busy_pct")),
        **_fio_side(metrics),
        seconds=_seconds(r),
        samples=tuple(per_second),
        interval_s=interval_s,
        bins={int(k): int(v) for k, v in (bins_raw or {}).items()},
    )


def _in_window(
    r: ResultRecord, sec: dict[str, Any], iops: float, lat_ns: float | None, outstanding: int
) -> float | None:
    """The IOPS ``r`` completed while fio ran its workload: its completions less the IOs
    in flight when it stopped, over the time until then; None when it did not run its
    whole runtime (a size-based run, a failure) or is the clients' aggregate (a window of
    its own, analysis/together.py).

    fio counts the IOs it waits for after its runtime, and times the wait. On storage
    that serves IOs as they come the wait is about their latency, and the count and the
    time balance. A throttle serves them in bursts (the cgroup throttle: a slice's worth
    every 100 ms, the first when fio starts, so fio's runtimes of whole tenths end on a
    burst): the last burst frees all those in flight at once, counted and hardly timed.
    4 KiB reads at QD64 for 1 s at 1,200 IOPS: 1,264 completed in 1,001 ms, fio's figure
    5 % over the cap, 1,200 before fio stopped. The time fio ran past its runtime is the
    wait for the last IOs, up to their mean latency (an HDD at QD32, a throttle that frees
    them over several bursts); the rest, a fio sent late past a burst by a busy CPU, it
    ran (docs/characterize.md, "A point's count")."""
    runtime_s = _number(r.params.get("runtime_s"))
    ran_ms = _number(sec.get("runtime_ms"))
    count = _number(sec.get("ios_completed"))
    if r.client == "all" or not runtime_s or ran_ms is None or count is None:
        return None
    if ran_ms + 1 < runtime_s * 1000:  # fio's milliseconds, rounded up
        return None
    lat_s = lat_ns / 1e9 if lat_ns else 0.0
    # Little's law: fewer than asked for when fio did not keep them all in flight
    in_flight = min(outstanding, iops * lat_s) if lat_ns else outstanding
    if count <= in_flight:
        return None  # a stall: no more than were in flight (fio's figure says so)
    return (count - in_flight) / max(runtime_s, ran_ms / 1000 - lat_s)


def _interval_s(samples: dict[str, Any] | None) -> float:
    """The seconds each of a result's samples covers (fio/logs.py: ``interval_ms``)."""
    ms = _number((samples or {}).get("interval_ms"))
    return ms / 1000 if ms and ms > 0 else 1.0


def _fio_side(metrics: dict[str, Any]) -> dict[str, Any]:
    """A point's fields of whose work its host load was: ``fio_host_pct``,
    ``others_host_pct``, ``unseen_host_pct``, ``io_thread_max_pct``,
    ``io_threads_host_pct`` and ``cpus`` (analysis.cpuload)."""
    load = load_of(metrics)
    if load is None or not load.attributed:
        return dict.fromkeys(
            ("fio_host_pct", "others_host_pct", "unseen_host_pct", "io_thread_max_pct",
             "io_threads_host_pct", "cpus")
        )  # fmt: skip
    busiest = busiest_io_thread(load)
    return {
        "fio_host_pct": load.fio_side_pct,
        "others_host_pct": load.others_pct,
        "unseen_host_pct": load.unseen_pct,
        "io_thread_max_pct": None if busiest is None else load.one_cpu_pct(busiest),
        "io_threads_host_pct": load.io_threads_pct,
        "cpus": load.cpus,
    }


def _mean_point(points: Sequence[Point]) -> Point:
    """Repetitions of one point: means, and the interval of the repetitions' mean."""
    if len(points) == 1:
        return points[0]
    first = points[0]
    iops = [p.iops for p in points]
    ci = _ci(iops)
    mean = statistics.fmean(iops)

    def avg(values: Iterable[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return statistics.fmean(known) if known else None

    bins = merge_bins(*(p.bins for p in points)) if all(p.bins for p in points) else {}
    p99 = percentiles_from_bins(bins, [99.0])[0][1] if bins else avg(p.lat_p99_ns for p in points)
    return Point(
        target=first.target,
        workload=first.workload,
        rw=first.rw,
        bs=first.bs,
        iodepth=first.iodepth,
        numjobs=first.numjobs,
        iops=mean,
        iops_low=min(ci[0], mean) if ci else mean,
        iops_high=max(ci[1], mean) if ci else mean,
        bw_bytes=statistics.fmean(p.bw_bytes for p in points),
        lat_mean_ns=avg(p.lat_mean_ns for p in points),
        lat_p99_ns=p99,
        steady=all(p.steady for p in points) if all(p.steady is not None for p in points) else None,
        fio_cpu_pct=avg(p.fio_cpu_pct for p in points),
        host_busy_pct=avg(p.host_busy_pct for p in points),
        host_max_cpu_pct=avg(p.host_max_cpu_pct for p in points),
        fio_host_pct=avg(p.fio_host_pct for p in points),
        others_host_pct=avg(p.others_host_pct for p in points),
        unseen_host_pct=avg(p.unseen_host_pct for p in points),
        io_thread_max_pct=avg(p.io_thread_max_pct for p in points),
        io_threads_host_pct=avg(p.io_threads_host_pct for p in points),
        cpus=first.cpus,
        seconds=sum(p.seconds or 0.0 for p in points),
        samples=tuple(v for p in points for v in p.samples),
        interval_s=first.interval_s,
        bins=bins,
    )


def points_from_results(results: Iterable[ResultRecord]) -> list[Point]:
    """A point per (target, rw, bs, iodepth, numjobs) of the results that finished, with
    repetitions averaged; mixed read/write workloads and unknown parameters are skipped."""
    groups: dict[tuple[str, str, int, int, int], list[Point]] = {}
    for r in results:
        if not is_ok(r):
            continue
        point = _one_point(r)
        if point is not None:
            key = (point.target, point.rw, point.bs, point.iodepth, point.numjobs)
            groups.setdefault(key, []).append(point)
    return [_mean_point(g) for g in groups.values()]


# -- one curve ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LittleCheck:
    """Little's law at one point: IOPS x mean latency = IOs in flight."""

    point: Point
    in_flight: float  # IOPS x latency
    ratio: float  # in_flight / outstanding asked for

    @property
    def ok(self) -> bool:
        return abs(self.ratio - 1) <= LITTLE_TOLERANCE

    def message(self) -> str:
        p = self.point
        return (
            f"{format_size_short(p.bs)} QD{p.iodepth}x{p.numjobs}: IOPS x latency = "
            f"{self.in_flight:.1f} IOs in flight, but {p.outstanding} were asked for "
            f"({self.ratio:.0%}): "
            + (
                "fio did not keep them all in flight (a synchronous ioengine caps iodepth "
                "at 1; or the CPU, or a queue limit such as nr_requests)"
                if self.ratio < 1
                else "the latency includes waits that are not the device's (CPU, scheduler)"
            )
        )


@dataclass(frozen=True)
class Curve:
    """The points of one (target, rw, bs, numjobs) against outstanding IO."""

    target: str
    rw: str
    bs: int
    numjobs: int
    points: tuple[Point, ...]  # by outstanding IO
    # The cgroup throttle its plateau is at (analysis.throttles.curves_at_throttles): the
    # plateau is the throttle's, whatever the host did.
    throttle: str | None = None

    @property
    def best(self) -> Point:
        return max(self.points, key=lambda p: p.iops)

    @property
    def top(self) -> float:
        """The throughput the plateau is judged from: the typical saturated point's (the
        lower median of the points from the first within PLATEAU_FRACTION of the best
        on), unless the best point is more than PEAK_LEAD above it (a real peak: then the
        best's, as everywhere before). A point of a second or two can run ahead of a
        throttle by a slice of its window: a 3,000 IOPS cap measured 2998, 2998, 3204,
        3004, 3013 IOPS at QD1 to 16, a 1,200 one 1193, 1202, 1269, 1205, 1211; the
        points within 5 % of the best were the high ones."""
        best = self.best.iops
        tail = self.points[
            next(i for i, p in enumerate(self.points) if p.iops >= PLATEAU_FRACTION * best) :
        ]
        typical = statistics.median_low(p.iops for p in tail)
        return typical if best <= PEAK_LEAD * typical else best

    @property
    def knee(self) -> Point:
        """The saturation point: the first point within PLATEAU_FRACTION of the plateau's
        throughput (:attr:`top`), the first of :attr:`plateau`. More outstanding IO beyond
        it adds little but latency."""
        return self.plateau[0]

    @property
    def plateau(self) -> tuple[Point, ...]:
        """The points within PLATEAU_FRACTION of :attr:`top`, above or below it."""
        top = self.top
        return tuple(
            p for p in self.points if PLATEAU_FRACTION * top <= p.iops <= top / PLATEAU_FRACTION
        )

    @property
    def saturated(self) -> bool | None:
        """A point with at least twice the knee's outstanding IO (and, by the knee's
        definition, no more than 5 % more throughput) confirms the plateau; None when the
        curve has one point (one queue depth: not known)."""
        if len(self.points) < 2:
            return None
        knee = self.knee
        return any(p.outstanding >= 2 * knee.outstanding for p in self.points)

    @property
    def last_gain(self) -> float | None:
        """Throughput gained from the second-last point to the last (0.07 = +7 %)."""
        if len(self.points) < 2 or not self.points[-2].iops:
            return None
        return self.points[-1].iops / self.points[-2].iops - 1

    @property
    def latency_floor_ns(self) -> float | None:
        """The mean latency at the fewest outstanding IOs (QD1 x 1 job when measured)."""
        return self.points[0].lat_mean_ns

    def host_bound(self) -> str | None:
        """Why the host may have set the plateau; None if it did not. Only when every
        plateau point was host-bound: one where the host had room to spare and throughput
        still did not rise shows the storage's limit. Never at a throttle: the throttle set
        the plateau."""
        if self.throttle:
            return None
        whys = [p.host_bound() for p in self.plateau]
        return whys[0] if all(whys) else None

    def busy_elsewhere(self) -> str | None:
        """Why the plateau may be lower than the storage allows: at every plateau point the
        host was busy, and at some with other work than fio's (:meth:`Point.busy_elsewhere`);
        None otherwise, and at a throttle (which set the plateau)."""
        if self.throttle:
            return None
        whys = [p.busy_elsewhere() for p in self.plateau]
        if not all(w or p.host_bound() for w, p in zip(whys, self.plateau, strict=True)):
            return None  # a point with room to spare: the storage's plateau
        return next((w for w in whys if w), None)

    def little(self) -> list[LittleCheck]:
        out = []
        for p in self.points:
            if p.lat_mean_ns and p.outstanding:
                in_flight = p.iops * p.lat_mean_ns / 1e9
                out.append(LittleCheck(p, in_flight, in_flight / p.outstanding))
        return out

    def best_under_p99(self, p99_ns: float) -> Point | None:
        fitting = [p for p in self.points if p.lat_p99_ns is not None and p.lat_p99_ns <= p99_ns]
        return max(fitting, key=lambda p: p.iops) if fitting else None


def point_document(p: Point) -> dict[str, Any]:
    return {
        "workload": p.workload,
        "bs": p.bs,
        "iodepth": p.iodepth,
        "numjobs": p.numjobs,
        "outstanding": p.outstanding,
        "iops": p.iops,
        "iops_low": p.iops_low,
        "iops_high": p.iops_high,
        "bw_bytes": p.bw_bytes,
        "lat_mean_ns": p.lat_mean_ns,
        "lat_p99_ns": p.lat_p99_ns,
        "steady": p.steady,
        "fio_cpu_pct": p.fio_cpu_pct,
        "host_busy_pct": p.host_busy_pct,
        "host_max_cpu_pct": p.host_max_cpu_pct,
        "fio_host_pct": p.fio_host_pct,
        "others_host_pct": p.others_host_pct,
        "unseen_host_pct": p.unseen_host_pct,
        "io_thread_max_pct": p.io_thread_max_pct,
        "io_threads_host_pct": p.io_threads_host_pct,
        "cpus": p.cpus,
        "seconds": p.seconds,
    }


def curve_document(c: Curve, p99_under_ns: float | None = None) -> dict[str, Any]:
    """A curve for ``--json`` (docs/characterize.md)."""
    knee = c.knee
    best = c.best
    under = c.best_under_p99(p99_under_ns) if p99_under_ns is not None else None
    return {
        "target": c.target,
        "rw": c.rw,
        "bs": c.bs,
        "numjobs": c.numjobs,
        "saturated": c.saturated,
        "knee": {"iodepth": knee.iodepth, "outstanding": knee.outstanding, "iops": knee.iops},
        "max_iops": {"value": best.iops, "outstanding": best.outstanding},
        "max_bw_bytes": {
            "value": max(p.bw_bytes for p in c.points),
            "outstanding": max(c.points, key=lambda p: p.bw_bytes).outstanding,
        },
        "latency_floor_ns": c.latency_floor_ns,
        "host_bound": c.host_bound(),
        "throttle": c.throttle,
        "p99_under_ns": p99_under_ns,
        "best_under_p99": None if under is None else point_document(under),
        "little": [
            {
                "iodepth": x.point.iodepth,
                "numjobs": x.point.numjobs,
                "in_flight": x.in_flight,
                "ratio": x.ratio,
                "ok": x.ok,
            }
            for x in c.little()
        ],
        "points": [point_document(p) for p in c.points],
    }


def curves(points: Iterable[Point]) -> list[Curve]:
    """Points grouped into curves, ordered by target, rw, numjobs and block size."""
    groups: dict[tuple[str, str, int, int], list[Point]] = {}
    for p in points:
        groups.setdefault((p.target, p.rw, p.bs, p.numjobs), []).append(p)
    out = [
        Curve(t, rw, bs, jobs, tuple(sorted(ps, key=lambda p: (p.outstanding, p.iodepth))))
        for (t, rw, bs, jobs), ps in groups.items()
    ]
    out.sort(key=lambda c: (c.target, c.rw, c.numjobs, c.bs))
    return out


# -- limits across block sizes --------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float
    basis: str  # how it was found, for a person

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "low": self.low, "high": self.high, "basis": self.basis}


@dataclass(frozen=True)
class BlockSize:
    """What one block size delivered at its best curve's plateau."""

    bs: int
    curve: Curve
    iops: float
    iops_low: float
    iops_high: float
    bw_bytes: float
    points: tuple[Point, ...] = ()  # the points its figures come from

    @property
    def bw_low(self) -> float:
        return self.bw_bytes * self.iops_low / self.iops if self.iops else 0.0

    @property
    def bw_high(self) -> float:
        return self.bw_bytes * self.iops_high / self.iops if self.iops else 0.0


def _pooled(points: Sequence[Point], scale: Any) -> tuple[float, float, float]:
    """(mean, low, high): the points' figures (each times ``scale(point)``), weighted by the
    time their samples cover, with the 95 % interval of the mean of their samples around
    it; without two samples, the points' own range. A point's figure is fio's count over
    its measured time (:func:`_in_window`; or its steady window): a short point's samples
    leave out the last part of a window, which fio does not log, and a throttle that lets
    IOs through in bursts puts a whole burst into that part or none. A throttle's burst is
    a slice of its time (100 ms of the cgroup throttle), whatever the block size, so one
    burst more or less at an edge of a point moves its figure by the same share at 256 KiB
    as at 1 MiB, and a second of either tells as much: weighted by the IOs they counted, a
    256 KiB point one burst high (+4.3 %) outweighed three 1 MiB points at the cap and made
    the bandwidth limit 2.6 % high."""
    samples = [v * scale(p) for p in points for v in p.samples]
    if len(samples) >= 2:
        s = summarize(samples)
        assert s.mean is not None and s.ci95_low is not None and s.ci95_high is not None
        weights = [len(p.samples) * p.interval_s for p in points]
        mean = sum(p.iops * scale(p) * w for p, w in zip(points, weights, strict=True))
        mean /= sum(weights) or 1.0
        return mean, mean - (s.mean - s.ci95_low), mean + (s.ci95_high - s.mean)
    mean = statistics.fmean(p.iops * scale(p) for p in points)
    low = min(p.iops_low * scale(p) for p in points)
    high = max(p.iops_high * scale(p) for p in points)
    return mean, min(low, mean), max(high, mean)


def _per_io(p: Point) -> float:
    return 1.0


def _bytes_per_io(p: Point) -> float:
    return p.bw_bytes / p.iops if p.iops else 0.0


def _block_size(curve: Curve) -> BlockSize:
    """The plateau's figures when the curve saturated, else its best point's."""
    chosen = curve.plateau if curve.saturated else (curve.best,)
    iops, low, high = _pooled(chosen, _per_io)
    return BlockSize(
        bs=curve.bs,
        curve=curve,
        iops=iops,
        iops_low=low,
        iops_high=high,
        bw_bytes=iops * statistics.fmean(_bytes_per_io(p) for p in chosen),
        points=tuple(chosen),
    )


@dataclass(frozen=True)
class Binding:
    """One row of the guide's table: a block size, what it delivered, which limit binds."""

    bs: int
    iops: float
    bw_bytes: float
    binds: str  # "iops", "bandwidth", "both", "neither"
    model_iops: float | None  # min(iops_limit, bw_limit / bs) when both limits are known

    @property
    def deviation(self) -> float | None:
        if not self.model_iops:
            return None
        return self.iops / self.model_iops - 1


@dataclass(frozen=True)
class Limits:
    target: str
    rw: str
    iops: Estimate | None
    bw_bytes: Estimate | None
    crossover_bs: Estimate | None
    reasons: dict[str, str]  # "iops" / "bw_bytes" / "crossover_bs" -> why it is null
    table: tuple[Binding, ...]
    # The same as codes: "one-block-size", "other-limit-binds" (test smaller / larger
    # blocks), "host-bound", "host-busy", "still-rising", "needs-both".
    codes: dict[str, str] = field(default_factory=dict)
    # "iops" / "bw_bytes" -> the cgroup throttle the limit equals (analysis.throttles)
    throttles: dict[str, str] = field(default_factory=dict)

    def document(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "rw": self.rw,
            "limits": {
                "iops": self.iops.as_dict() if self.iops else None,
                "bw_bytes": self.bw_bytes.as_dict() if self.bw_bytes else None,
                "crossover_bs": self.crossover_bs.as_dict() if self.crossover_bs else None,
            },
            "reasons": {k: self.reasons.get(k) for k in ("iops", "bw_bytes", "crossover_bs")},
            "reason_codes": {k: self.codes.get(k) for k in ("iops", "bw_bytes", "crossover_bs")},
            "throttles": {k: self.throttles.get(k) for k in ("iops", "bw_bytes")},
            "table": [
                {
                    "bs": b.bs,
                    "iops": b.iops,
                    "bw_bytes": b.bw_bytes,
                    "binds": b.binds,
                    "model_iops": b.model_iops,
                }
                for b in self.table
            ],
        }


def _not_reached(b: BlockSize, what: str) -> tuple[str, str] | None:
    """(code, why) ``b``'s plateau does not show the storage's ``what`` limit; None if it
    does."""
    why = b.curve.host_bound()
    if why:
        return "host-bound", (
            f"the host, not the storage, set the {what} at {format_size_short(b.bs)}: {why}; "
            "the storage's limit, if it has one, is beyond what this host can drive"
        )
    why = b.curve.busy_elsewhere()
    if why:
        return "host-busy", (
            f"the {what} at {format_size_short(b.bs)} may be lower than the storage allows: "
            f"{why}; run it when the host is idle (the host-busy warnings name the processes)"
        )
    if b.curve.saturated is False:
        gain = b.curve.last_gain
        last = b.curve.points[-1]
        grew = f" (+{gain:.0%} at the last step)" if gain is not None else ""
        return "still-rising", (
            f"the {what} at {format_size_short(b.bs)} was still rising at the most outstanding "
            f"IO tried, {last.outstanding}{grew}: no limit was reached; try deeper queues"
        )
    return None


def infer_limits(all_curves: Sequence[Curve]) -> list[Limits]:
    """The IOPS limit, bandwidth limit and crossover block size per (target, rw), from the
    best curve of every block size."""
    out = []
    groups: dict[tuple[str, str], list[Curve]] = {}
    for c in all_curves:
        groups.setdefault((c.target, c.rw), []).append(c)
    for (target, rw), cs in groups.items():
        per_bs: dict[int, BlockSize] = {}
        for c in cs:
            b = _block_size(c)
            if b.bs not in per_bs or b.iops > per_bs[b.bs].iops:
                per_bs[b.bs] = b
        out.append(_limits(target, rw, [per_bs[k] for k in sorted(per_bs)]))
    return out


def _estimate(items: Sequence[BlockSize], *, bw: bool, what: str) -> Estimate:
    """A limit from the block sizes on its plateau: the mean of all their per-second
    samples (as bandwidth for ``bw``) with its 95 % interval."""
    points = [p for b in items for p in b.points]
    mean, low, high = _pooled(points, _bytes_per_io if bw else _per_io)
    single = [b for b in items if b.curve.saturated is None]
    basis = f"{what} plateau at " + ", ".join(
        format_size_short(b.bs) + ("*" if b in single else "") for b in items
    )
    if single:
        basis += " (*one queue depth: saturation assumed, not measured)"
    return Estimate(mean, low, high, basis)


def _sizes(items: Sequence[BlockSize]) -> str:
    return ", ".join(format_size_short(b.bs) for b in items)


def _limits(target: str, rw: str, sizes: Sequence[BlockSize]) -> Limits:
    reasons: dict[str, str] = {}
    codes: dict[str, str] = {}

    def no(key: str, code: str, why: str) -> None:
        codes[key], reasons[key] = code, why

    iops: Estimate | None = None
    bw: Estimate | None = None
    if len(sizes) < 2:
        why = (
            f"only one block size ({_sizes(sizes)}) was measured: it cannot tell an IOPS limit "
            "from a bandwidth limit"
        )
        no("iops", "one-block-size", why)
        no("bw_bytes", "one-block-size", why)
    else:
        iops, missing = _iops_limit(sizes)
        if missing:
            no("iops", *missing)
        bw, missing = _bw_limit(sizes)
        if missing:
            no("bw_bytes", *missing)
    crossover = _crossover(iops, bw)
    if crossover is None:
        no("crossover_bs", "needs-both", "it needs both limits")
    table = _binding_table(sizes, iops, bw)
    return Limits(target, rw, iops, bw, crossover, reasons, table, codes)


def _iops_limit(sizes: Sequence[BlockSize]) -> tuple[Estimate | None, tuple[str, str] | None]:
    """The IOPS limit from two or more block sizes, or (code, why) none was found."""
    most_iops = max(b.iops for b in sizes)
    most_bw = max(b.bw_bytes for b in sizes)
    # The smallest block size on the IOPS plateau (the largest on the bandwidth one, in
    # _bw_limit): a block size at the crossover is on both, and noise must not decide which
    # it stands for.
    top_iops = min((b for b in sizes if b.iops >= BINDING_FRACTION * most_iops), key=lambda b: b.bs)
    if top_iops.bw_bytes >= BINDING_FRACTION * most_bw:
        return None, (
            "other-limit-binds",
            f"the bandwidth limit already binds at {format_size_short(top_iops.bs)}, the "
            f"block size with the most IOPS ({format_iops(top_iops.iops)}): the IOPS "
            "limit is higher; test smaller blocks",
        )
    if found := _not_reached(top_iops, "IOPS"):
        return None, found
    plateau = [b for b in sizes if b.iops >= BINDING_FRACTION * most_iops]
    other = [b for b in sizes if b.bw_bytes >= BINDING_FRACTION * most_bw]
    return _estimate(_only_on(plateau, other), bw=False, what="IOPS"), None


def _bw_limit(sizes: Sequence[BlockSize]) -> tuple[Estimate | None, tuple[str, str] | None]:
    """The bandwidth limit from two or more block sizes, or (code, why) none was found."""
    most_iops = max(b.iops for b in sizes)
    most_bw = max(b.bw_bytes for b in sizes)
    # The largest block size on the bandwidth plateau (see _iops_limit).
    top_bw = max((b for b in sizes if b.bw_bytes >= BINDING_FRACTION * most_bw), key=lambda b: b.bs)
    if top_bw.iops >= BINDING_FRACTION * most_iops:
        return None, (
            "other-limit-binds",
            f"the IOPS limit still binds at {format_size_short(top_bw.bs)}, the block "
            f"size with the most bandwidth ({format_rate(top_bw.bw_bytes)}): the "
            "bandwidth limit is higher; test larger blocks",
        )
    if found := _not_reached(top_bw, "bandwidth"):
        return None, found
    plateau = [b for b in sizes if b.bw_bytes >= BINDING_FRACTION * most_bw]
    other = [b for b in sizes if b.iops >= BINDING_FRACTION * most_iops]
    return _estimate(_only_on(plateau, other), bw=True, what="bandwidth"), None


def _only_on(plateau: list[BlockSize], other: list[BlockSize]) -> list[BlockSize]:
    """The block sizes of a limit's plateau that are not on the other limit's too: one on
    both sits at the crossover, where the two limits bind together (16 KiB at 2000 IOPS and
    32 MiB/s delivers 31.25 MiB/s), and stands for neither; all of them when none is left."""
    only = [b for b in plateau if b not in other]
    return only or plateau


def _crossover(iops: Estimate | None, bw: Estimate | None) -> Estimate | None:
    """The block size where the two limits meet; None unless both are known."""
    if iops and bw:
        return Estimate(
            bw.value / iops.value,
            bw.low / iops.high,
            bw.high / iops.low,
            "bandwidth limit / IOPS limit",
        )
    return None


def _binding_table(
    sizes: Sequence[BlockSize], iops: Estimate | None, bw: Estimate | None
) -> tuple[Binding, ...]:
    """Per block size: what it delivered, which limit binds, and the two-limit model's IOPS."""
    table = []
    for b in sizes:
        on_iops = iops is not None and b.iops >= BINDING_FRACTION * iops.value
        on_bw = bw is not None and b.bw_bytes >= BINDING_FRACTION * bw.value
        binds = (
            "both"
            if on_iops and on_bw
            else "iops"
            if on_iops
            else "bandwidth"
            if on_bw
            else "neither"
        )
        model = min(iops.value, bw.value / b.bs) if iops and bw else None
        table.append(Binding(b.bs, b.iops, b.bw_bytes, binds, model))
    return tuple(table)


def describe(e: Estimate | None, kind: str) -> str:
    """``5.00k IOPS (4.98k to 5.02k)``; ``-`` when None."""
    if e is None:
        return "-"
    fmt = {"iops": format_iops, "bw_bytes": format_rate, "crossover_bs": _bytes}[kind]
    return f"{fmt(e.value)} ({fmt(e.low)} to {fmt(e.high)})"


def _bytes(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return format_bytes(round(value))
