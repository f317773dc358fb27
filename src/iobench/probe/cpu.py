"""How busy the host's CPUs were while a workload ran, from two readings of /proc/stat.

A storage limit and a host limit look alike in fio's numbers (a plateau that more
outstanding IO does not lift); the CPU load tells them apart. fio's own usr/sys figures
count only its job processes, not the kernel threads that do the work for some devices
(loop, nbd, network filesystems), so the whole host is read, and each CPU on its own: one
kernel thread pegging one CPU is a bottleneck that an average over all CPUs hides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
