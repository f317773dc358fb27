"""Several fio reports in one file: which are snapshots of one run, which are runs of their own.

fio writes more than one report into one output in two ways, and a file can hold both:

- ``--status-interval=N`` makes one fio run write its whole **cumulative** report every N
  seconds, then the final one (JSON: concatenated top-level objects; normal text and terse:
  the report printed again). The earlier ones are snapshots of the last.
- Outputs of **several runs** end up in one file: ``cat a.json b.json``, ``fio ... >> log``
  in a loop, two results pasted into one ticket.

What tells them apart is what says *which fio process* wrote a report; counters do not: a
snapshot written during ``ramp_time`` counts IOs that fio then resets (its counters go
down within one run), and a second run of the same job file may well count more than the
first. So each format is read for its own evidence (:func:`relation`):

- fio's JSON (standalone): ``timestamp_ms - elapsed`` is the moment the fio process
  started its clock (``elapsed`` is whole seconds since then, rounded up), the same in
  every report of one run; fio 2.2.9 added ``elapsed``, fio 2.12 ``timestamp_ms``.
  A report printed while fio laid out its files, before it started that clock, holds no
  IO at all and is taken as a snapshot of the next report of the same jobs.
- fio's JSON (client mode): fio's client writes one top-level report per run (the
  servers' snapshots become ``client_stats`` entries), so each is a run of its own.
- Normal text: every job's result line holds its process id (``pid=20764``), the same in
  every report of one run; a fio version line, a command line, job header lines or a job
  file shown between reports start another run.
- Terse: a line holds neither a time nor a process id. Reports with other jobs or another
  fio version are other runs; reports of the same jobs cannot be told apart and the file
  is refused (:class:`Unsure`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iobench.errors import FioOutputError
from iobench.model import DIRECTIONS, FioOutput, LatencyStats

# How far two estimates of one fio start may differ: ``elapsed`` is rounded up to whole
# seconds; fio before 2.12 gives ``timestamp`` in whole seconds too. Plus 100 ms for the
# time between fio reading the clock for ``timestamp`` and for the first job's ``elapsed``.
START_SLACK_MS = 1000 + 100
START_SLACK_S_MS = 2000 + 100

Pid = tuple[str, int, int]  # (job name, group id, pid) of a normal text result block


@dataclass(frozen=True)
class Report:
    """One report in a file, read, and what tells which run wrote it."""

    start: int  # offset in the text where it starts (its run's part of the file, for the first)
    line: int  # the line it starts on, 1-based (for messages)
    output: FioOutput
    raw: dict[str, Any]  # the report in the shape of fio's JSON
    session: int = 0  # normal text and terse: which fio run the text shows (see module doc)
    pids: tuple[Pid, ...] | None = None  # normal text: every result block's process


@dataclass(frozen=True)
class Run:
    """A run a file holds: its final report, and the earlier reports that are snapshots."""

    report: Report
    snapshots: tuple[Report, ...] = ()
    why_snapshots: str = ""  # why the snapshots are taken for this run's
    why_new: str = ""  # why it is not a snapshot of the run before it (not for the first)

    @property
    def first(self) -> Report:
        """Its first report: where its part of the file starts."""
        return (self.snapshots or (self.report,))[0]


@dataclass(frozen=True)
class Relation:
    """What a report is to the one before it: ``same`` run, another run, or unknown."""

    kind: str  # "same" | "other" | "unsure"
    why: str


class Unsure(FioOutputError):
    """Two reports whose run cannot be told: a snapshot of one run, or two runs."""


def split_runs(reports: Sequence[Report], source: str) -> list[Run]:
    """The runs ``reports`` (in file order) come from: consecutive reports of one run are
    one run, its last report kept. Raises :class:`Unsure` naming ``source`` and the line
    where a report starts whose run cannot be told from the one before."""
    runs: list[Run] = []
    for report in reports:
        if not runs:
            runs.append(Run(report))
            continue
        last = runs[-1]
        rel = relation(last.report, report)
        if rel.kind == "same":
            runs[-1] = Run(report, (*last.snapshots, last.report), rel.why, last.why_new)
        elif rel.kind == "other":
            runs.append(Run(report, why_new=rel.why))
        else:
            raise Unsure(
                f"{source}:{report.line}: a second fio report starts here, of the same jobs "
                f"as the report at line {last.report.line}, and {rel.why}: it may be a "
                "--status-interval snapshot of one run or another run of the same jobs",
                hint=_HINT_UNSURE,
            )
    return runs


_HINT_UNSURE = (
    "if the file is one run's --status-interval output, keep only its last report; if it "
    "holds several runs, give each run's output in a file of its own; fio's JSON output "
    "(--output-format=json) tells the two apart"
)


def relation(before: Report, after: Report) -> Relation:
    """What ``after`` is to ``before``, the report just before it in the file."""
    b, a = before.output, after.output
    if b == a and before.raw == after.raw:
        return Relation("same", "it is the same report again")
    if after.session != before.session:
        return Relation("other", "the text shows another fio run starting before it")
    if a.fio_version != b.fio_version:
        return Relation("other", f"another fio version ({b.fio_version} then {a.fio_version})")
    if a.client_mode or b.client_mode:
        return Relation("other", "fio's client writes one report per run")
    rel = _judged(before, after)
    if rel.kind != "same":
        return rel
    # Taken for one run: what fio only adds to within a run may still tell them apart.
    shrank = _shrank(b, a, counters=a.output_format == "json" and not _ramps(before.raw))
    return rel if shrank is None else Relation("other", shrank)


def _judged(before: Report, after: Report) -> Relation:
    """:func:`relation` by each format's evidence of the fio process that wrote them."""
    b, a = before.output, after.output
    if a.output_format == "normal":
        return _by_pids(before, after)
    if _jobs(b) != _jobs(a):
        return Relation("other", "other jobs (names or groups) than the report before it")
    if _options(before.raw) != _options(after.raw):
        return Relation("other", "other job options than the report before it")
    if _time_ms(before.raw) > _time_ms(after.raw):
        return Relation("other", "fio printed it before the report before it")
    if not _measured(b):
        return Relation(
            "same", "the earlier report shows no IO yet: fio printed it before the jobs started"
        )
    started_before, started_after = _started(before.raw), _started(after.raw)
    if started_before is None or started_after is None:
        what = "terse lines say nothing of when" if a.output_format == "terse" else "fio's JSON"
        if a.output_format == "json":
            what += " has no 'elapsed' (fio before 2.2.9) to tell when"
        return Relation("unsure", f"{what} or by which fio process it was written")
    (at_before, slack), (at_after, _) = started_before, started_after
    if abs(at_after - at_before) > slack:
        gap = (at_after - at_before) / 1000
        return Relation(
            "other",
            f"another fio process wrote it, started {abs(gap):.1f} s "
            f"{'after' if gap > 0 else 'before'} the one that wrote the report before it",
        )
    return Relation(
        "same", "one fio process wrote them ('timestamp_ms' less 'elapsed' is its start time)"
    )


def _by_pids(before: Report, after: Report) -> Relation:
    """Normal text: the same run when every result block of ``before`` is in ``after`` with
    the same process id (fio omits jobs that have not started yet)."""
    if not set(before.pids or ()) <= set(after.pids or ()):
        same_jobs = {p[:2] for p in before.pids or ()} <= {p[:2] for p in after.pids or ()}
        why = "the same jobs in other processes (pids)" if same_jobs else "other jobs"
        return Relation("other", f"{why} than the report before it")
    if (before.output.timestamp or 0) > (after.output.timestamp or 0):
        return Relation("other", "fio printed it before the report before it")
    return Relation("same", "the same processes (pids) wrote them")


def _shrank(before: FioOutput, after: FioOutput, *, counters: bool) -> str | None:
    """Why ``after`` cannot be a later report of the run that wrote ``before``, from what
    fio only ever adds to within a run: a direction a job did IO in stays in every later
    report (a pasted randrw result, then a randread one, from fio in containers, where
    every fio has the same pids); with ``counters`` (JSON of a run without ``ramp_time``,
    whose end resets them), a job's bytes, IOs and runtime never go down either (two
    runs of one job file started together). None when nothing tells."""
    later = {(j.hostname, j.port, j.jobname, j.groupid): j for j in after.jobs}
    for job in before.jobs:
        same = later.get((job.hostname, job.port, job.jobname, job.groupid))
        if same is None:
            continue
        for d in DIRECTIONS:
            was, now = job.direction(d), same.direction(d)
            if was is None or not was.io_bytes:
                continue
            if now is None or not now.io_bytes:
                return f"{job.jobname!r} did {d} IO in the report before it and none in this one"
            if counters and (
                now.io_bytes < was.io_bytes
                or now.total_ios < was.total_ios
                or now.runtime_ms < was.runtime_ms
                or _narrowed(was.clat, now.clat)
                or _narrowed(was.lat, now.lat)
            ):
                return (
                    f"{job.jobname!r} counted more {d} IO in the report before it than in this "
                    "one (fio's counters only grow within a run without ramp_time)"
                )
    return None


def _narrowed(was: LatencyStats | None, now: LatencyStats | None) -> bool:
    """A latency a run measured later that it cannot have: fewer IOs, a higher least or a
    lower greatest latency, or fewer IOs in a json+ histogram bin (all only grow)."""
    if was is None or now is None or not was.n:
        return False
    if now.n < was.n or now.min_ns > was.min_ns or now.max_ns < was.max_ns:
        return True
    return any(now.bins.get(value, 0) < count for value, count in was.bins.items())


def _ramps(raw: dict[str, Any]) -> bool:
    """Whether the report's options (as fio echoes them) set ``ramp_time``, at whose end
    fio resets a job's counters; also when they cannot be read."""
    try:
        echoed = json.loads(_options(raw))
    except ValueError:
        return True
    return any(isinstance(o, dict) and "ramp_time" in o for o in echoed) or not echoed


def _jobs(output: FioOutput) -> list[tuple[object, ...]]:
    return [(j.hostname, j.port, j.jobname, j.groupid) for j in output.jobs]


def _options(raw: dict[str, Any]) -> str:
    """Every option the report echoes, as one comparable text."""
    jobs = raw.get("jobs") or raw.get("client_stats") or []
    echoed = [raw.get("global options")] + [
        j.get("job options") if isinstance(j, dict) else None for j in jobs
    ]
    return json.dumps(echoed, sort_keys=True, default=repr)


def _time_ms(raw: dict[str, Any]) -> float:
    for key, scale in (("timestamp_ms", 1), ("timestamp", 1000)):
        value = raw.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value) * scale
    return 0.0


def _started(raw: dict[str, Any]) -> tuple[float, int] | None:
    """(when the fio process started its clock, in ms since the epoch; how far off that
    may be) from fio's JSON, or None when the report does not tell."""
    jobs = raw.get("jobs")
    first = jobs[0] if isinstance(jobs, list) and jobs and isinstance(jobs[0], dict) else {}
    elapsed = first.get("elapsed")
    if not isinstance(elapsed, int) or isinstance(elapsed, bool):
        return None
    ms = raw.get("timestamp_ms")
    if isinstance(ms, int) and not isinstance(ms, bool) and ms > 0:
        return ms - elapsed * 1000.0, START_SLACK_MS
    seconds = raw.get("timestamp")
    if isinstance(seconds, int) and not isinstance(seconds, bool) and seconds > 0:
        return (seconds - elapsed) * 1000.0, START_SLACK_S_MS
    return None


def _measured(output: FioOutput) -> bool:
    """True when some job did IO or reported an error."""
    return any(
        job.error != 0 or any(job.direction(d) is not None for d in DIRECTIONS)
        for job in output.jobs
    )


def only_run(reports: Sequence[Report], source: str) -> Report:
    """The final report of the one run ``reports`` come from; FioOutputError naming the
    line where a second run starts when they come from several."""
    runs = split_runs(reports, source)
    if len(runs) > 1:
        raise FioOutputError(
            f"{source}:{runs[1].first.line}: another fio run starts here ({runs[1].why_new}); "
            f"the text holds {len(runs)} runs",
            hint="import the file: each run becomes a run of its own",
        )
    return runs[0].report
