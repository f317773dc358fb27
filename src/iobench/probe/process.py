"""Whether a process is still the one that was: a pid is reused once its process ends, so a
stored pid alone proves nothing. A process is named by its pid *and* its start (the boot it
belongs to and its start time in clock ticks since that boot, from /proc), which no later
process shares."""

from __future__ import annotations

import os
from datetime import datetime

from iobench.probe.host import read_text

BOOT_ID = "/proc/sys/kernel/random/boot_id"
# A process that started this long after the run it should be running is another one.
SLACK_S = 5.0


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command name (which may hold blanks and parentheses)."""
    text = read_text(f"/proc/{pid}/stat")
    if not text or ")" not in text:
        return None
    return text.rsplit(")", 1)[1].split()


def start_of(pid: int) -> str | None:
    """``<boot id>:<start in clock ticks>`` of a live process; None when it is gone (or a
    zombie: it has ended, only its exit status waits to be collected)."""
    fields = _stat_fields(pid)
    boot = read_text(BOOT_ID)
    if fields is None or len(fields) < 20 or fields[0] in ("Z", "X") or not boot:
        return None
    return f"{boot.strip()}:{fields[19]}"


def own_start() -> str | None:
    return start_of(os.getpid())


def _started_epoch(pid: int) -> float | None:
    """When the process started (seconds since the epoch), from the boot time and its
    start in clock ticks."""
    fields = _stat_fields(pid)
    stat = read_text("/proc/stat") or ""
    btime = next((line.split()[1] for line in stat.splitlines() if line.startswith("btime ")), None)
    if fields is None or len(fields) < 20 or btime is None:
        return None
    return int(btime) + int(fields[19]) / os.sysconf("SC_CLK_TCK")


def still_running(pid: int, start: str | None, since: str | None = None) -> bool:
    """Whether ``pid`` is still the process that was started as ``start`` (see
    :func:`start_of`). Without ``start`` (runs stored before iobench recorded it), whether
    it is a live process that started no later than ``since`` (an ISO 8601 time)."""
    if _stat_fields(os.getpid()) is None:  # no /proc to ask: whether the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    now = start_of(pid)
    if now is None:  # gone, or a zombie
        return False
    if start is not None:
        return now == start
    if since is None:
        return True
    began = _started_epoch(pid)
    try:
        run_started = datetime.fromisoformat(since.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return True
    return began is None or began <= run_started + SLACK_S
