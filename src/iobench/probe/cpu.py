"""How busy the host's CPUs were while a workload ran, from two readings of /proc/stat.

A storage limit and a host limit look alike in fio's numbers (a plateau that more
outstanding IO does not lift); the CPU load tells them apart. fio's own usr/sys figures
count only its job processes, not the kernel threads that do the work for some devices
(loop, nbd, network filesystems), so the whole host is read, and each CPU on its own: one
kernel thread pegging one CPU is a bottleneck that an average over all CPUs hides.

Who used it (:class:`StepLoad`): fio's processes, measured exactly as the CPU time of the
processes iobench waited for (fio, its jobs, its launcher; io_uring's workers are threads
of fio's jobs); iobench's own; and, when the host was busy, the processes and kernel
threads that used the most (iobench.probe.tasks).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from iobench.probe.tasks import Task, TaskKey, attribute, io_workers, read_tasks, used

# Which processes used the CPU is read when the host was this busy (all CPUs), or the busy
# time of all CPUs added up to ATTRIBUTE_CHAIN_PCT of one CPU (so also whenever one CPU was
# that busy): fio's job and the kernel's workers doing its IO can take turns, a chain that
# less than one CPU's worth of work bounds when its stages cross CPUs, none of them busy
# (analysis.curves, TURNS_PCT, which may not be below it). Below both, neither fio nor
# anything else can have held the figures back.
ATTRIBUTE_BUSY_PCT = 50.0
ATTRIBUTE_CHAIN_PCT = 70.0
GLANCE_FIRST_S = 0.5  # the first look at the kernel workers, into a step

CpuTimes = dict[str, tuple[int, int]]  # "cpu" (all), "cpu0", ... -> (idle ticks, all ticks)


def parse_proc_stat(text: str) -> CpuTimes:
    """The ``cpu`` lines of /proc/stat as (idle + iowait, total) ticks."""
    out: CpuTimes = {}
    for line in text.splitlines():
        fields = line.split()
        if not fields or not fields[0].startswith("cpu"):
            continue
        try:
            values = [int(v) for v in fields[1:9]]
        except ValueError:
            continue
        if len(values) < 5:
            continue
        out[fields[0]] = (values[3] + values[4], sum(values))
    return out


def cpu_times(path: str = "/proc/stat") -> CpuTimes | None:
    try:
        return parse_proc_stat(Path(path).read_text())
    except OSError:
        return None


def busy(before: CpuTimes | None, after: CpuTimes | None) -> dict[str, Any] | None:
    """``{"busy_pct": all CPUs, "max_cpu_busy_pct": the busiest CPU, "cpus": n}`` between
    two readings; None when either is missing or no time passed."""
    if not before or not after:
        return None

    def pct(name: str) -> float | None:
        if name not in before or name not in after:
            return None
        idle = after[name][0] - before[name][0]
        total = after[name][1] - before[name][1]
        return None if total <= 0 else round(100.0 * (1 - idle / total), 1)

    overall = pct("cpu")
    if overall is None:
        return None
    per_cpu = [v for v in (pct(n) for n in after if n != "cpu") if v is not None]
    return {
        "busy_pct": overall,
        "max_cpu_busy_pct": max(per_cpu) if per_cpu else overall,
        "cpus": len(per_cpu) or None,
    }


def _clock_ticks() -> int:
    return os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class StepLoad:
    """The host's CPU as a step starts (:meth:`start`); :meth:`glance` while it runs, at
    a few moments, notes which kernel workers do the IO of the target's devices (a
    kworker is named after the work it does at the moment: ``kworker/u8:1-loop3``);
    :meth:`end` says how busy the host was while the step ran, and who used it."""

    def __init__(self, devices: list[str], times: CpuTimes | None, tasks: dict[TaskKey, Task]):
        self.devices = devices
        self.times = times
        self.tasks = tasks
        self.own = os.times()
        # Clock ticks after boot, as the task starts in /proc count them.
        self.since = int(time.clock_gettime(time.CLOCK_BOOTTIME) * _clock_ticks())
        self.started = time.monotonic()
        self.next_glance_s = GLANCE_FIRST_S
        self.io_seen: set[TaskKey] = set()

    @classmethod
    def start(cls, devices: list[str]) -> StepLoad:
        """``devices``: the kernel names of the devices that serve the target's IO."""
        return cls(devices, cpu_times(), read_tasks())

    def glance(self) -> None:
        """Which kernel workers do the devices' IO now; at 0.5, 1, 2, 4 ... s into the
        step (any more often returns at once): a few dozen names read each time."""
        now = time.monotonic() - self.started
        if now < self.next_glance_s:
            return
        self.next_glance_s = 2 * max(now, GLANCE_FIRST_S)
        self.io_seen |= io_workers(self.tasks, self.devices)

    def end(self) -> dict[str, Any] | None:
        """:func:`busy` with ``fio_pct`` (the processes iobench waited for meanwhile: fio
        and its jobs) and ``iobench_pct``, in % of all CPUs' time; when the host was busy,
        also ``io_threads_pct`` (kernel threads doing the IO of the devices) and the
        ``processes`` that used the most (iobench.probe.tasks.attribute)."""
        after = cpu_times()
        load = busy(self.times, after)
        if load is None or self.times is None or after is None:
            return None
        total = after["cpu"][1] - self.times["cpu"][1]
        now, tick = os.times(), _clock_ticks()

        def pct(seconds: float) -> float:
            return round(100.0 * seconds * tick / total, 1)

        load["fio_pct"] = pct(
            now.children_user + now.children_system
            - self.own.children_user - self.own.children_system
        )  # fmt: skip
        load["iobench_pct"] = pct(now.user + now.system - self.own.user - self.own.system)
        if (
            load["busy_pct"] >= ATTRIBUTE_BUSY_PCT
            or load["busy_pct"] * (load["cpus"] or 1) >= ATTRIBUTE_CHAIN_PCT
        ):
            spent = used(self.tasks, read_tasks(), self.since)
            load.update(attribute(spent, total, self.devices, os.getpid(), self.io_seen))
        return load
