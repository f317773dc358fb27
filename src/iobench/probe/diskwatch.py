"""A block device's counters read several times a second while a step runs, with this
host's Unix time: what the device itself completed in any part of the step (iostat's
view), for the clients' aggregate to be checked against (analysis/together.py).

Only the devices fio's IO arrives at (``role`` ``target`` of a context's ``io_devices``)
are added up: the layers beneath count the same IOs again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from iobench.probe.diskstats import SECTOR, Snapshot, snapshot

PERIOD_S = 0.2


def counted(snap: Snapshot) -> tuple[float, float, float, float]:
    """Read IOs (merges counted back in: the IOs asked for), read bytes, write IOs and
    write bytes of the devices in ``snap``."""
    stats = snap.stats.values()
    return (
        float(sum(s.read_ios + s.read_merges for s in stats)),
        float(sum(s.read_sectors for s in stats) * SECTOR),
        float(sum(s.write_ios + s.write_merges for s in stats)),
        float(sum(s.write_sectors for s in stats) * SECTOR),
    )


class DiskWatch:
    """Within ``with``: ``devices`` (``io_devices`` entries) read every PERIOD_S seconds
    in a thread of its own; ``readings`` holds (Unix ms, snapshot) pairs, the first taken
    on entry and the last on exit."""

    def __init__(self, devices: Sequence[Mapping[str, Any]], period_s: float = PERIOD_S) -> None:
        self.devices = [d for d in devices if (d.get("role") or "target") == "target"]
        self.period_s = period_s
        self.readings: list[tuple[float, Snapshot]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="iobench-diskwatch", daemon=True)

    @property
    def names(self) -> list[str]:
        return [str(d.get("kname")) for d in self.devices]

    def _read(self) -> None:
        self.readings.append((time.time() * 1000, snapshot(self.devices)))

    def _watch(self) -> None:
        while not self._stop.wait(self.period_s):
            self._read()

    def __enter__(self) -> DiskWatch:
        self._read()
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._read()

    def counters(self) -> list[tuple[float, float, float, float, float]]:
        """(Unix ms, read IOs, read bytes, write IOs, write bytes) of every reading that
        has the devices the first one had (one that went away would count as going back)."""
        first = set(self.readings[0][1].stats) if self.readings else set()
        return [(at, *counted(snap)) for at, snap in self.readings if set(snap.stats) == first]
