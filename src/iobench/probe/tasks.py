"""Which processes used the CPU while a step ran, from /proc/PID/stat at its start and end.

A host that was busy while fio ran tells nothing by itself: fio may have been the one
using the CPU (then the CPU, not the storage, set the figures), or something else was (then
the figures may be lower than the storage allows). The kernel threads that do the IO for
some devices (a loop device's workers, ``kworker/u8:1-loop3``; nbd's; the block layer's
throttle dispatcher, ``kthrotld``) do fio's work though fio's own figures do not count them.

Reads only; at most MAX_TASKS files per reading, outside fio's run (before it starts and
after it ended), so it costs the measurement nothing. A process's name (``comm``) is text
its owner chose: kept as text, never trusted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_TASKS = 4096  # /proc/PID/stat files read per reading, at most
PF_KTHREAD = 0x00200000  # a kernel thread (include/linux/sched.h)
TOP = 6  # the processes named
TOP_MIN_PCT = 0.5  # of all CPUs: below this a process is not named
# The block layer's workqueues that dispatch or complete IO for whoever issued it.
BLOCK_WORKQUEUES = frozenset({"kthrotld", "kblockd"})


@dataclass(frozen=True)
class Task:
    pid: int
    comm: str  # as the process named itself (bytes that are not UTF-8 as \x escapes)
    start: int  # clock ticks after boot
    ticks: int  # user + system time, clock ticks
    kernel: bool  # a kernel thread


TaskKey = tuple[int, int]  # (pid, start): a pid is reused, this pair is not


def parse_task(pid: int, raw: bytes) -> Task | None:
    """One /proc/PID/stat; None when it is not one (the name may hold blanks and
    parentheses: it ends at the last ``)``)."""
    open_, close = raw.find(b"("), raw.rfind(b")")
    if open_ < 0 or close < open_:
        return None
    fields = raw[close + 1 :].split()
    try:
        flags, utime, stime, start = (int(fields[i]) for i in (6, 11, 12, 19))
    except (IndexError, ValueError):
        return None
    comm = raw[open_ + 1 : close].decode("utf-8", "backslashreplace")
    return Task(pid, comm, start, utime + stime, bool(flags & PF_KTHREAD))


def read_tasks(proc: str = "/proc", limit: int = MAX_TASKS) -> dict[TaskKey, Task]:
    """Every process's (up to ``limit``) CPU time so far; threads are counted in their
    process."""
    out: dict[TaskKey, Task] = {}
    try:
        entries = os.scandir(proc)
    except OSError:
        return out
    with entries:
        for entry in entries:
            if len(out) >= limit:
                break
            if not entry.name.isdigit():
                continue
            try:
                with open(f"{proc}/{entry.name}/stat", "rb") as f:
                    task = parse_task(int(entry.name), f.read(1024))
            except OSError:  # ended meanwhile
                continue
            if task is not None:
                out[(task.pid, task.start)] = task
    return out


def _tokens(comm: str) -> set[str]:
    return set(re.split(r"[-+/:. ]", comm))


def io_thread(task: Task, devices: Iterable[str]) -> bool:
    """A kernel thread that does the IO of ``devices`` (their kernel names: ``loop3``) or
    the block layer's for everyone: ``kworker/u8:1-loop3``, ``knbd0-recv``, ``jbd2/vda1-8``,
    ``kworker/1:2-kthrotld``."""
    if not task.kernel:
        return False
    tokens = _tokens(task.comm)
    return bool(tokens & BLOCK_WORKQUEUES) or any(
        d in tokens or f"k{d}" in tokens for d in devices if d
    )


Spent = tuple[Task, int, Task | None]  # (task as it ended, ticks used, as it started)


def io_workers(
    tasks: Mapping[TaskKey, Task], devices: Iterable[str], proc: str = "/proc"
) -> set[TaskKey]:
    """The kernel workers of ``tasks`` (``kworker/...``) whose name says, now, that they
    do the IO of ``devices``."""
    devices = list(devices)
    found = set()
    for key, task in tasks.items():
        if not (task.kernel and task.comm.startswith("kworker/")):
            continue
        try:
            with open(f"{proc}/{task.pid}/comm", "rb") as f:
                comm = f.read(64).rstrip(b"\n").decode("utf-8", "backslashreplace")
        except OSError:
            continue
        if io_thread(Task(task.pid, comm, task.start, 0, True), devices):
            found.add(key)
    return found


def used(before: Mapping[TaskKey, Task], after: Mapping[TaskKey, Task], since: int) -> list[Spent]:
    """(task, ticks used, task at the first reading) between two readings: a task in
    both, or one that started after ``since`` (clock ticks after boot: the first reading)
    and so used all of its time in between. One that ended in between is not seen."""
    out: list[Spent] = []
    for key, task in after.items():
        was = before.get(key)
        if was is not None:
            out.append((task, task.ticks - was.ticks, was))
        elif task.start >= since:
            out.append((task, task.ticks, None))
    return [s for s in out if s[1] > 0]


def attribute(
    spent: list[Spent],
    total_ticks: int,
    devices: Iterable[str],
    skip: int,
    io_seen: Collection[TaskKey] = (),
) -> dict[str, Any]:
    """``io_threads_pct`` (the kernel threads doing the IO of ``devices``: named so at
    either reading, or seen so meanwhile, ``io_seen``) and the ``processes`` that used the
    most CPU (``pid``, ``comm``, ``pct``, ``kernel``, ``io``), each in % of all CPUs' time
    (``total_ticks``), leaving out the process ``skip`` (iobench's own)."""
    devices = list(devices)
    rows = []
    io_ticks = 0
    for task, ticks, was in spent:
        if task.pid == skip:
            continue
        # A kworker is named after the work it does last: at either reading.
        io = (
            (task.pid, task.start) in io_seen
            or io_thread(task, devices)
            or (was is not None and io_thread(was, devices))
        )
        io_ticks += ticks if io else 0
        rows.append((ticks, task, io))
    rows.sort(key=lambda r: (-r[0], r[1].pid))
    top = [
        {
            "pid": t.pid,
            "comm": t.comm,
            "pct": _pct(n, total_ticks),
            "kernel": t.kernel,
            "io": io,
        }
        for n, t, io in rows[:TOP]
        if _pct(n, total_ticks) >= TOP_MIN_PCT
    ]
    return {"io_threads_pct": _pct(io_ticks, total_ticks), "processes": top}


def _pct(ticks: float, total: int) -> float:
    return round(100.0 * ticks / total, 1) if total > 0 else 0.0
