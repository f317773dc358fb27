"""Read fio's JSON output (json and json+, fio 2.x and 3.x, standalone and client mode).

fio writes its report to the same stream as its messages, so the text can hold lines
before, between and after the JSON (``fio: terminating on signal 2``, ``note: ...``, a
stray ``>``), and ``--status-interval`` writes one complete cumulative report after
another with no delimiter. :func:`iter_json_objects` finds every top-level object;
:func:`parse_fio_output` takes the last report and turns it into :class:`FioOutput`,
:func:`fio_reports` every report (a file may hold several runs: iobench.fio.reports).

Units are normalised to bytes, bytes/s and nanoseconds:

- fio >= 2.99 (``clat_ns``/``lat_ns``/``slat_ns``) reports latencies in ns;
  before that (``clat``/``lat``/``slat``) in microseconds, converted here, and the
  output is marked ``latency_unit="us"``. Pre-2.99 json+ bins use a different
  bucketing (µs, 19 groups) and cannot be compared or merged with 3.x bins: dropped.
- ``io_bytes`` is bytes since fio 2.21, when ``io_kbytes`` appeared; before, it held
  KiB. ``bw`` is KiB/s in every version; ``bw_bytes`` (B/s) exists from fio 3.2.

A value fio did not report is None, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iobench.errors import FioOutputError, NoFioReport
from iobench.fio.reports import Report
from iobench.jsontext import Bad, first_bad, scan_objects
from iobench.model import (
    DirectionResult,
    DiskUtil,
    FioOutput,
    JobResult,
    LatencyStats,
    SteadyState,
)
from iobench.units import shown

_REPORT_KEYS = ("jobs", "client_stats")
_VERSION_MARK = '"fio version"'
ALL_CLIENTS = "All clients"  # jobname of fio's client-mode aggregate entry
NEVER_WRITTEN = "fio never writes that: the file was changed or damaged after fio wrote it"
# The largest number iobench takes from fio (a signed 64-bit integer, as SQLite stores):
# no count of IOs or bytes, and no latency in ns (292 years), comes near it.
NUMBER_MAX = 2**63 - 1
# Unix times a fio report may carry: from 1970 to 2100 (a clock without RTC starts at 0).
EPOCH_MAX_S = 4_102_444_800


def iter_json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text``, in order, skipping any other text
    (iobench.jsontext.scan_objects: linear time, bounded nesting)."""
    return [obj for _, _, obj in scan_objects(text)]


def _first_bytes(text: str, limit: int = 120) -> str:
    head = text.lstrip()[:limit]
    return repr(head) if head else "(empty)"


def parse_fio_output(
    text: str,
    source: str = "<fio output>",
    *,
    objects: list[tuple[int, int, dict[str, Any]]] | None = None,
) -> FioOutput:
    """Parse fio's output (any text around the JSON is ignored) into a FioOutput.

    The last object holding ``jobs`` or ``client_stats`` is the final report (with
    ``--status-interval`` the earlier ones are interim cumulative snapshots; for a file
    that may hold several runs, see :func:`fio_reports`). Raises FioOutputError naming
    ``source`` if there is no such object, if a report was cut off (after the last one:
    fio died while writing it, and the last complete one is only a snapshot), or if a
    required field is missing or of the wrong type.
    """
    found = _report_objects(text, source, objects)
    return _read(found[-1][2], source)


def fio_reports(
    text: str,
    source: str = "<fio output>",
    *,
    objects: list[tuple[int, int, dict[str, Any]]] | None = None,
) -> list[Report]:
    """Every fio report in ``text``, in order, each read as :func:`parse_fio_output` reads
    the last (messages name the report's line when there are several); which are snapshots
    of one run is for iobench.fio.reports to tell."""
    found = _report_objects(text, source, objects)
    reports: list[Report] = []
    line, pos = 1, 0
    for start, _, obj in found:
        line += text.count("\n", pos, start)
        pos = start
        where = f"{source}:{line}" if len(found) > 1 else source
        reports.append(Report(start=start, line=line, output=_read(obj, where), raw=obj))
    return reports


def _report_objects(
    text: str, source: str, objects: list[tuple[int, int, dict[str, Any]]] | None
) -> list[tuple[int, int, dict[str, Any]]]:
    """The objects of ``text`` that are fio reports (``objects``: scan_objects(text), when
    the caller has it already); FioOutputError when there is none or one is cut short."""
    if objects is None:
        objects = scan_objects(text)
    found = [(s, e, obj) for s, e, obj in objects if any(k in obj for k in _REPORT_KEYS)]
    if not found:
        raise NoFioReport(
            f"{source} holds no fio JSON output (expected an object with 'jobs' or "
            f"'client_stats'); first bytes: {_first_bytes(text)}",
            hint="run fio with --output-format=json or json+",
        )
    _check_complete(text, source, found)
    return found


def _check_complete(text: str, source: str, found: list[tuple[int, int, dict[str, Any]]]) -> None:
    """Every ``"fio version"`` of the text lies in a report that was read: one that does
    not began a report that does not end (or is not JSON), which must not be skipped."""
    spans = iter(found)
    start, end, _ = next(spans)
    at = text.find(_VERSION_MARK)
    while at >= 0:
        while at >= end:
            following = next(spans, None)
            if following is None:
                raise FioOutputError(
                    f"{source}: the fio report after offset {end} is incomplete (fio stopped "
                    "while writing it); the last complete report is only an interim snapshot",
                    hint="run the benchmark again; keep fio running until it exits",
                )
            start, end, _ = following
        if at < start:
            opening = text.rfind("{", 0, at)  # where the report begins
            line = text.count("\n", 0, opening if opening >= 0 else at) + 1
            raise FioOutputError(
                f"{source}:{line}: a fio report here does not end, or is not JSON as fio "
                "writes it; the reports after it are complete",
                hint="import the file as fio wrote it; a cut or damaged report cannot be "
                "told from a run of its own",
            )
        at = text.find(_VERSION_MARK, end)


def _read(report: dict[str, Any], source: str) -> FioOutput:
    bad = first_bad(report)
    if bad is not None:
        raise FioOutputError(
            f"{source}: {bad[0]}: {bad[1]}",
            hint=NEVER_WRITTEN,
        )
    return _Reader(source).output(report)


class _Reader:
    """Turns one decoded report into model objects; knows the source for messages."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.used_us = False

    def fail(self, where: str, message: str) -> FioOutputError:
        return FioOutputError(f"{self.source}: {where}: {message}")

    # -- typed access --------------------------------------------------------------

    def number(
        self, d: Mapping[str, Any], key: str, where: str, *, low: float = 0.0
    ) -> float | None:
        """A number fio reports, at least ``low`` (every count, time and rate fio writes
        is 0 or more); None when absent."""
        value = d.get(key)
        if value is None:
            return None
        if isinstance(value, Bad):
            raise self.fail(where, f"'{key}' {value.text} {value.why}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(where, f"'{key}' should be a number, not {shown(value, 60)}")
        if not math.isfinite(value) or value < low:
            raise self.fail(where, f"'{key}' is {value!r}, below {low:g}: fio never reports that")
        if value > NUMBER_MAX:
            raise self.fail(where, f"'{key}' is {value!r}: more than fio counts or measures")
        return float(value)

    def integer(self, d: Mapping[str, Any], key: str, where: str, *, low: int = 0) -> int | None:
        raw = d.get(key)
        if isinstance(raw, int) and not isinstance(raw, bool):
            if raw < low:
                raise self.fail(where, f"'{key}' is {raw}, below {low}: fio never reports that")
            if raw > NUMBER_MAX:
                raise self.fail(where, f"'{key}' is {raw}: more than fio counts or measures")
            return raw  # exact, even beyond 2**53
        value = self.number(d, key, where, low=low)
        if value is None:
            return None
        if value != int(value):
            raise self.fail(where, f"'{key}' should be an integer, not {shown(raw, 60)}")
        return int(value)

    def required_int(self, d: Mapping[str, Any], key: str, where: str) -> int:
        value = self.integer(d, key, where)
        if value is None:
            raise self.fail(where, f"'{key}' is missing")
        return value

    def mapping(self, d: Mapping[str, Any], key: str, where: str) -> dict[str, Any] | None:
        value = d.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail(where, f"'{key}' should be an object, not {type(value).__name__}")
        return value

    # -- report --------------------------------------------------------------------

    def output(self, report: dict[str, Any]) -> FioOutput:
        client_mode = "client_stats" in report
        key = "client_stats" if client_mode else "jobs"
        entries = report.get(key)
        if not isinstance(entries, list):
            raise self.fail(key, f"should be an array, not {type(entries).__name__}")
        jobs = [self.job(entry, f"{key}[{i}]") for i, entry in enumerate(entries)]
        if client_mode:
            jobs = _final_client_entries(jobs)

        raw_version = report.get("fio version")
        version: str | None = None
        if isinstance(raw_version, str):
            version = raw_version.removeprefix("fio-")

        raw_disks = report.get("disk_util", [])
        if not isinstance(raw_disks, list):
            raise self.fail("disk_util", "should be an array")
        disks = tuple(self.disk(d, f"disk_util[{i}]") for i, d in enumerate(raw_disks))

        timestamp = self.integer(report, "timestamp", "top level")
        if timestamp is not None and timestamp > EPOCH_MAX_S:
            raise self.fail("top level", f"'timestamp' {timestamp} is not a time before 2100")
        return FioOutput(
            fio_version=version,
            timestamp=timestamp,
            jobs=tuple(jobs),
            disk_util=disks,
            client_mode=client_mode,
            latency_unit="us" if self.used_us else "ns",
        )

    def job(self, entry: object, where: str) -> JobResult:
        if not isinstance(entry, dict):
            raise self.fail(where, "should be an object")
        name = entry.get("jobname")
        if not isinstance(name, str):
            raise self.fail(where, "has no 'jobname'")
        where = f"{where} ({shown(name, 60)})"
        hostname = entry.get("hostname")
        port = self.integer(entry, "port", where)
        if port is not None and port > 65535:
            raise self.fail(where, f"'port' {port} is not a port number")
        error = self.required_int(entry, "error", where)
        if error > 0xFFFF:
            raise self.fail(where, f"'error' {error} is not an error number fio reports")
        if "mixed" in entry and not any(d in entry for d in ("read", "write", "trim")):
            raise FioOutputError(
                f"{self.source}: {where} holds one 'mixed' direction "
                "(unified_rw_reporting=mixed) instead of read, write and trim",
                hint="iobench keeps reads and writes apart: import the output of a run "
                "without unified_rw_reporting (or with unified_rw_reporting=both)",
            )
        return JobResult(
            jobname=name,
            groupid=self.required_int(entry, "groupid", where),
            error=error,
            read=self.direction(entry, "read", where),
            write=self.direction(entry, "write", where),
            trim=self.direction(entry, "trim", where),
            usr_cpu_pct=self.number(entry, "usr_cpu", where),
            sys_cpu_pct=self.number(entry, "sys_cpu", where),
            job_runtime_ms=self.integer(entry, "job_runtime", where),
            hostname=hostname if isinstance(hostname, str) else None,
            port=port,
            steadystate=self.steadystate(entry, where),
        )

    def steadystate(self, job: dict[str, Any], where: str) -> SteadyState | None:
        ss = self.mapping(job, "steadystate", where)
        if ss is None:
            return None
        where = f"{where}.steadystate"
        data = self.mapping(ss, "data", where) or {}
        iops, bw = data.get("iops"), data.get("bw")

        def figures(values: object) -> list[float]:
            ok = isinstance(values, list) and all(
                isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= NUMBER_MAX
                for v in values
            )
            return list(values) if ok and isinstance(values, list) else []

        iops, bw = figures(iops), figures(bw)
        return SteadyState(
            criterion=str(ss.get("ss", "")),
            attained=bool(self.integer(ss, "attained", where)),
            duration_s=self.integer(ss, "duration", where) or 0,
            iops=tuple(float(v) for v in iops),
            bw_bytes=tuple(float(v) for v in bw),
        )

    def direction(self, job: dict[str, Any], ddir: str, where: str) -> DirectionResult | None:
        d = self.mapping(job, ddir, where)
        if d is None:
            return None
        where = f"{where}.{ddir}"
        raw_io = self.integer(d, "io_bytes", where)
        runtime_ms = self.integer(d, "runtime", where)
        iops = self.number(d, "iops", where)
        bw_kib = self.number(d, "bw", where)
        if raw_io is None or runtime_ms is None or iops is None:
            raise self.fail(where, "needs 'io_bytes', 'runtime' and 'iops'")

        io_bytes = raw_io * 1024 if _io_bytes_is_kib(d, raw_io, bw_kib, runtime_ms) else raw_io
        total_ios = self.integer(d, "total_ios", where)
        if total_ios is None:
            # fio 2.1.x has no total_ios; fio defines iops = 1000 * total_ios / runtime.
            total_ios = round(iops * runtime_ms / 1000)
        if total_ios == 0 and io_bytes == 0:
            return None

        bw_bytes = self.number(d, "bw_bytes", where)
        if bw_bytes is None:  # fio < 3.2: derive it as fio 3.x does
            if runtime_ms > 0:
                bw_bytes = io_bytes * 1000 / runtime_ms
            elif bw_kib is not None:
                bw_bytes = bw_kib * 1024
            else:
                raise self.fail(where, "has neither 'bw_bytes' nor 'bw'")

        clat = self.latency(d, "clat", where, total_ios)
        lat = self.latency(d, "lat", where, total_ios)
        return DirectionResult(
            io_bytes=io_bytes,
            bw_bytes=bw_bytes,
            iops=iops,
            total_ios=total_ios,
            runtime_ms=runtime_ms,
            clat=clat,
            lat=lat,
            slat=self.latency(d, "slat", where, total_ios),
            completions=_completions(d, clat, lat),
        )

    def latency(
        self, d: dict[str, Any], kind: str, where: str, total_ios: int
    ) -> LatencyStats | None:
        obj = self.mapping(d, f"{kind}_ns", where)
        scale = 1
        if obj is None:
            obj = self.mapping(d, kind, where)
            if obj is None:
                return None
            scale = 1000  # fio < 2.99: microseconds
            self.used_us = True
            where = f"{where}.{kind}"
        else:
            where = f"{where}.{kind}_ns"

        values = [self.number(obj, k, where) for k in ("min", "max", "mean", "stddev")]
        low, high, mean, stddev = values
        if low is None or high is None or mean is None or stddev is None:
            return None  # not a latency object we understand

        bins: dict[int, int] = {}
        raw_bins = self.mapping(obj, "bins", where)
        if raw_bins is not None and scale == 1:
            bins = self.bins(raw_bins, where)

        n = self.integer(obj, "N", where)
        if n is None:  # fio 3.16 and older did not print N (3.19 does)
            if bins:
                n = sum(bins.values())
            elif low == high == mean == stddev == 0:
                n = 0  # fio prints zeros for a latency it never sampled
            else:
                n = total_ios
        if n == 0:
            return None

        percentiles: list[tuple[float, float]] = []
        raw_pct = self.mapping(obj, "percentile", where)
        for key, value in (raw_pct or {}).items():
            try:
                p = float(key)
            except ValueError:
                raise self.fail(where, f"percentile key {shown(key, 60)} is not a number") from None
            if not 0 < p <= 100:  # fio 2.x adds a "0.00": 0 terminator entry
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise self.fail(
                    where, f"percentile {key[:24]} should be a latency, not {shown(value, 60)}"
                )
            percentiles.append((p, float(value) * scale))
        percentiles.sort()

        return LatencyStats(
            n=n,
            min_ns=low * scale,
            max_ns=high * scale,
            mean_ns=mean * scale,
            stddev_ns=stddev * scale,
            percentiles=tuple(percentiles),
            bins=bins,
        )

    def bins(self, raw: dict[str, Any], where: str) -> dict[int, int]:
        bins: dict[int, int] = {}
        for key, count in raw.items():
            if not (key.isascii() and key.isdigit()):  # early json+ also had FIO_IO_U_PLAT_*
                continue
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise self.fail(where, f"bin {key} should hold a count, not {shown(count, 60)}")
            if len(key) > 20 or int(key) >= 2**63:
                raise self.fail(where, f"bin {key[:24]} is not a latency fio's histogram has")
            bins[int(key)] = count
        return bins

    def disk(self, entry: object, where: str) -> DiskUtil:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise self.fail(where, "should be an object with a 'name'")
        where = f"{where} ({shown(entry['name'], 60)})"
        util = self.number(entry, "util", where)
        if util is None:
            raise self.fail(where, "'util' is missing")
        return DiskUtil(
            name=entry["name"],
            read_ios=self.required_int(entry, "read_ios", where),
            write_ios=self.required_int(entry, "write_ios", where),
            read_merges=self.required_int(entry, "read_merges", where),
            write_merges=self.required_int(entry, "write_merges", where),
            in_queue_ms=self.required_int(entry, "in_queue", where),
            util_pct=util,
        )


def _completions(
    d: Mapping[str, Any], clat: LatencyStats | None, lat: LatencyStats | None
) -> int | None:
    """fio's own count of the completions it sampled: the N (or the json+ bins) of its
    completion latency, else of its total latency; None when fio gave neither (fio 3.16
    and older print no N, and their N is then made from total_ios, which is no count of
    completions)."""
    for kind, stats in (("clat", clat), ("lat", lat)):
        raw = d.get(f"{kind}_ns")
        if stats is not None and isinstance(raw, Mapping) and ("N" in raw or stats.bins):
            return stats.n
    return None


def _io_bytes_is_kib(d: Mapping[str, Any], io_bytes: int, bw_kib: float | None, rt: int) -> bool:
    """True when ``io_bytes`` holds KiB, as it did before fio 2.21.

    fio 2.21 switched ``io_bytes`` to bytes and added ``io_kbytes`` alongside; without
    ``io_kbytes``, compare with ``bw`` (always KiB/s): ``bw * runtime / 1000`` is the
    transferred amount in KiB.
    """
    if "io_kbytes" in d or "bw_bytes" in d:
        return False
    if bw_kib is None or bw_kib <= 0 or rt <= 0:
        return True  # no io_kbytes: a pre-2.21 layout
    kib = bw_kib * rt / 1000
    # bytes would be ~1024x the KiB figure; KiB ~1x. Split at the geometric middle (32x).
    return io_bytes < 32 * kib


def _final_client_entries(jobs: list[JobResult]) -> list[JobResult]:
    """Drop the interim snapshots --status-interval adds to client_stats (fio 3.33).

    Sent to a server, --status-interval makes every interim cumulative report another
    client_stats element, in rounds: each round repeats the server's jobs in the same
    order. fio emits "All clients" once, when the number of reports received reaches
    the number expected per round, so it follows the *first* round and sums interim
    values. Hence:

    - exactly one "All clients", and it is last: a plain run; everything is kept (jobs
      with numjobs > 1 and no group_reporting legitimately share one name);
    - no "All clients": one report per round, so the last entry per (hostname, port,
      jobname, groupid) is the final one;
    - otherwise: per client, the number of entries before the first "All clients" is
      one round; the last round is kept. An "All clients" entry is kept only if it is
      the very last entry (a stale interim sum is dropped rather than passed on as the
      total).
    """
    all_idx = [i for i, job in enumerate(jobs) if job.jobname == ALL_CLIENTS]
    if len(all_idx) == 1 and all_idx[0] == len(jobs) - 1:
        return jobs
    if not all_idx:
        return _last_per_key(jobs)

    first_all = all_idx[0]
    per_client: dict[tuple[str | None, int | None], list[JobResult]] = {}
    round_size: dict[tuple[str | None, int | None], int] = {}
    for i, job in enumerate(jobs):
        if job.jobname == ALL_CLIENTS:
            continue
        client = (job.hostname, job.port)
        per_client.setdefault(client, []).append(job)
        if i < first_all:
            round_size[client] = round_size.get(client, 0) + 1
    if any(round_size.get(client, 0) == 0 for client in per_client):
        return _last_per_key(jobs)  # reports interleaved in a way not seen: fall back

    final: list[JobResult] = []
    for client, entries in per_client.items():
        final.extend(entries[-round_size[client] :])
    if jobs[-1].jobname == ALL_CLIENTS:
        final.append(jobs[-1])
    return final


def _last_per_key(jobs: list[JobResult]) -> list[JobResult]:
    """Keep the last entry per (hostname, port, jobname, groupid), in first-seen order."""
    latest: dict[tuple[str | None, int | None, str, int], JobResult] = {}
    for job in jobs:
        latest[(job.hostname, job.port, job.jobname, job.groupid)] = job
    return list(latest.values())
