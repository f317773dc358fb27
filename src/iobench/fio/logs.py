"""fio's interval logs (``write_iops_log``/``write_bw_log``/``write_lat_log`` with
``log_avg_msec``) turned into per-second samples. Pure.

Each log line is ``time_ms, value, direction, bs, offset[, prio]``; every job writes its own
file (``PREFIX_iops.1.log``, ``PREFIX_iops.2.log``, ...), also under ``group_reporting``. Per
interval, iobench sums IOPS and bandwidth over the jobs and averages the jobs' mean latency
weighted by their IOPS; a second in which some job has no sample has no value (None), for
all three.
When a job ends just after a full window fio may add a short last sample that falls into
the same second; the one closing a full window is kept. Units: ``bw`` logs are KiB/s
(converted to bytes/s), ``lat`` logs are nanoseconds, times are milliseconds since the end
of the ramp.

The result (``ResultRecord.samples``)::

    {"interval_ms": 1000,
     "start_ms": 1795360044718,  # client mode only: the job's start on the server's clock
     "read":  {"t_s": [1, 2, ...], "iops": [...], "bw_bytes": [...], "lat_mean_ns": [...]},
     "write": {...}}            # a direction without IO is absent
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from iobench.model import Workload

INTERVAL_MS = 1000
LOG_PREFIX = "iobench"  # the job files' write_*_log prefix (relative to fio's working dir)
# In client mode fio's client writes the logs its servers send as ``NAME.<host>``; a client
# of several servers gets each server's logs, so each job file has its own prefix
# (``iobench-c2``: :func:`log_prefix`).
_NAME = re.compile(rf"^{LOG_PREFIX}(?:-[A-Za-z0-9]+)?_(iops|bw|lat)\.(\d+)\.log(?:\..+)?$")


def log_prefix(client: str | None = None) -> str:
    """The write_*_log prefix of a job file; with ``client`` (a tag such as ``c2``), that
    client's own among the job files of a group (iobench.fio.clientgroup)."""
    return f"{LOG_PREFIX}-{client}" if client else LOG_PREFIX


_DIRECTIONS = {0: "read", 1: "write", 2: "trim"}

Series = dict[tuple[int, int], float]  # (direction, interval index) -> value


def sample_options(interval_ms: int) -> tuple[tuple[str, str], ...]:
    """A workload's own options for samples every ``interval_ms`` (characterize's short
    points): fio's ``log_avg_msec`` in its job section, which overrides the [global] one;
    none for the usual :data:`INTERVAL_MS`."""
    return () if interval_ms == INTERVAL_MS else (("log_avg_msec", str(interval_ms)),)


def interval_of(workload: Workload) -> int:
    """The interval of a workload's samples: its own ``log_avg_msec`` (:func:`sample_options`;
    suites may not set it), else :data:`INTERVAL_MS`."""
    value = dict(workload.options).get("log_avg_msec", "")
    return int(value) if value.isdigit() and int(value) > 0 else INTERVAL_MS


def job_number(name: str) -> int | None:
    """The job a log file is of (fio numbers a job file's jobs from 1, in order), by its
    name; None for a file that is not one of iobench's interval logs."""
    m = _NAME.match(name)
    return int(m.group(2)) if m else None


def _rows(text: str) -> list[tuple[int, float, int]]:
    rows = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 3:
            continue
        try:
            rows.append((int(fields[0]), float(fields[1]), int(fields[2])))
        except ValueError:
            continue
    return rows


def parse_interval_logs(
    logs: Mapping[str, str], interval_ms: int = INTERVAL_MS, *, epoch: bool = False
) -> dict[str, Any] | None:
    """Per-second samples from the log files' texts, keyed by file name; None if none.

    ``epoch``: the logs were written with ``log_unix_epoch=1`` (client mode), so times are
    milliseconds since 1970; they are made relative to the job's start like the others,
    and the start itself is kept as ``start_ms`` (on the server's clock).
    """
    # file name -> (kind, job), its rows; each log parsed once
    named = {
        name: ((m.group(1), m.group(2)), _rows(text))
        for name, text in logs.items()
        if (m := _NAME.match(name))
    }
    start_ms = 0
    if epoch:
        firsts = [rows[0][0] for _, rows in named.values() if rows]
        if not firsts:
            return None
        # The first sample closes the first window after the start.
        start_ms = min(firsts) - interval_ms
    per_job: dict[str, dict[str, Series]] = defaultdict(dict)  # kind -> job -> series
    for (kind, job), rows in named.values():
        series: Series = {}
        offset: dict[tuple[int, int], int] = {}  # how far each kept sample is from its slot
        shift = _shift([t - start_ms for t, _, _ in rows], interval_ms)
        for t_abs, value, ddir in rows:
            t_ms = t_abs - start_ms - shift
            if ddir not in _DIRECTIONS:
                continue
            slot = round(t_ms / interval_ms)
            key, off = (ddir, slot), abs(t_ms - slot * interval_ms)
            # Two samples in one slot: fio adds a short one when a job ends just after a
            # full window; keep the sample that closes a full window.
            if key not in series or off < offset[key]:
                series[key], offset[key] = value, off
        per_job[kind][job] = series
    iops_jobs = per_job.get("iops", {})
    if not iops_jobs:
        return None
    out: dict[str, Any] = {"interval_ms": interval_ms}
    if epoch:
        out["start_ms"] = start_ms
    keys = sorted({k for s in iops_jobs.values() for k in s})
    for ddir, direction in _DIRECTIONS.items():
        slots = [i for d, i in keys if d == ddir]
        if not slots:
            continue
        iops, bw, lat = [], [], []
        for i in slots:
            key = (ddir, i)
            # A second in which some job has no sample has no total: missing, not 0.
            every = all(key in s for s in iops_jobs.values())
            iops.append(sum(s[key] for s in iops_jobs.values()) if every else None)
            bw_jobs = per_job.get("bw", {})
            every_bw = bool(bw_jobs) and all(key in s for s in bw_jobs.values())
            bw.append(sum(s[key] for s in bw_jobs.values()) * 1024 if every_bw else None)
            lat.append(_weighted_latency(key, per_job.get("lat", {}), iops_jobs) if every else None)
        if not any(iops):
            continue
        out[direction] = {
            "t_s": [round(i * interval_ms / 1000, 3) for i in slots],
            "iops": iops,
            "bw_bytes": bw,
            "lat_mean_ns": lat,
        }
    return out if any(d in out for d in _DIRECTIONS.values()) else None


def _shift(times_ms: list[int], interval_ms: int) -> int:
    """How far a log's samples sit from the multiples of its interval (their median): fio
    may close its first window after a ramp late, and every later one as late (times 250,
    350, 450 ... for 0.1 s), where rounding each time alone would put two samples in one
    slot. 0 for a log whose samples sit on the multiples, as fio's per-second ones do."""
    if not times_ms:
        return 0
    half = interval_ms // 2
    return int(statistics.median_low((t + half) % interval_ms - half for t in times_ms))


def _weighted_latency(
    key: tuple[int, int], lat_jobs: Mapping[str, Series], iops_jobs: Mapping[str, Series]
) -> float | None:
    """The jobs' mean latencies weighted by their IOPS in that second; None unless every
    job logged both (a job that did no IO in that second weighs nothing)."""
    if not lat_jobs or any(key not in s for s in lat_jobs.values()):
        return None
    if any(key not in iops_jobs.get(job, {}) for job in lat_jobs):
        return None
    weights = {job: iops_jobs[job][key] for job in lat_jobs}
    total = sum(weights.values())
    if not total:
        return None
    return sum(lat_jobs[job][key] * w for job, w in weights.items()) / total
