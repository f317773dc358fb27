"""The block layer's own counters for the devices that serve a target, around one fio run.

fio reaches a local target through the link ``target`` in iobench's private directory, and
fio's ``disk_util`` describes the device of the file it ``lstat``s: the link's, the disk
under /tmp, not the target's. So iobench reads /sys/class/block/X/stat itself, for every
device in the target's IO path (``io_devices`` of its context: the device, the stack
beneath it, a loop device's backing file's devices), just before fio starts and just
after it ends, and stores the differences in the shape of fio's ``disk_util`` entries.
Like fio's, the counters are the device's: IO that other processes did meanwhile is in
them too.

Fields of /sys/class/block/X/stat (Documentation/block/stat.rst): read IOs, read merges,
read sectors, read ticks (ms), write IOs, write merges, write sectors, write ticks,
in flight, io_ticks (ms busy), time in queue (ms), then discard and flush counters.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iobench.probe.storage import SYS_BLOCK

SECTOR = 512


@dataclass(frozen=True)
class DiskStat:
    read_ios: int
    read_merges: int
    read_sectors: int
    write_ios: int
    write_merges: int
    write_sectors: int
    io_ticks_ms: int
    in_queue_ms: int


def parse_stat(text: str) -> DiskStat | None:
    """One /sys/class/block/X/stat line; None when it is not one."""
    fields = text.split()
    if len(fields) < 11 or not all(f.isdigit() for f in fields[:11]):
        return None
    v = [int(f) for f in fields[:11]]
    return DiskStat(v[0], v[1], v[2], v[4], v[5], v[6], v[9], v[10])


@dataclass(frozen=True)
class Snapshot:
    taken: float  # time.monotonic()
    stats: dict[str, DiskStat]  # kname -> counters
    roles: dict[str, str]


def read_stat(kname: str) -> DiskStat | None:
    try:
        return parse_stat((SYS_BLOCK / kname / "stat").read_text())
    except (OSError, ValueError):
        return None


def snapshot(devices: Sequence[Mapping[str, Any]]) -> Snapshot:
    """The counters of ``devices`` (``io_devices`` entries) now; unreadable ones are left out."""
    stats: dict[str, DiskStat] = {}
    roles: dict[str, str] = {}
    for d in devices:
        kname = str(d.get("kname") or "")
        if not kname or "/" in kname or kname.startswith("."):
            continue
        s = read_stat(kname)
        if s is not None:
            stats[kname] = s
            roles[kname] = str(d.get("role") or "target")
    return Snapshot(time.monotonic(), stats, roles)


def disk_util(before: Snapshot, after: Snapshot) -> list[dict[str, Any]]:
    """fio-shaped ``disk_util`` entries for what each device did between two snapshots:
    IOs, merges, bytes, time in queue and how busy it was (io_ticks over the wall time).
    A device whose counters went backwards (it was detached and another took its name) is
    left out."""
    elapsed_ms = (after.taken - before.taken) * 1000.0
    out: list[dict[str, Any]] = []
    for kname, a in after.stats.items():
        b = before.stats.get(kname)
        if b is None:
            continue
        delta = [
            a.read_ios - b.read_ios,
            a.write_ios - b.write_ios,
            a.read_merges - b.read_merges,
            a.write_merges - b.write_merges,
            a.read_sectors - b.read_sectors,
            a.write_sectors - b.write_sectors,
            a.io_ticks_ms - b.io_ticks_ms,
            a.in_queue_ms - b.in_queue_ms,
        ]
        if any(x < 0 for x in delta):
            continue
        rios, wios, rmerge, wmerge, rsec, wsec, ticks, queue = delta
        out.append(
            {
                "name": kname,
                "role": after.roles.get(kname, "target"),
                "read_ios": rios,
                "write_ios": wios,
                "read_merges": rmerge,
                "write_merges": wmerge,
                "read_bytes": rsec * SECTOR,
                "write_bytes": wsec * SECTOR,
                "in_queue_ms": queue,
                "util_pct": round(min(100.0, 100.0 * ticks / elapsed_ms), 2)
                if elapsed_ms > 0
                else None,
                "source": "iobench",
            }
        )
    return out
