"""A precondition on this host (``iobench precondition``, ``run --precondition``): each
target's test area purged where its kind can (iobench.targets.purge), then filled by
sequential writes (SNIA PTS "workload independent preconditioning"), and what was done
stored with the run as ``suite_def.precondition``, amended as each target's is done, so
that a run cut short says how far it got (docs/precondition.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from iobench.engine.held import HeldTarget
from iobench.engine.preflight import PreparedTarget
from iobench.engine.steps import Observer, Step, observed
from iobench.fio.jobfile import build_fill_jobfile
from iobench.fio.runner import FioRun, LiveStats
from iobench.metrics import workload_metrics
from iobench.model import Precondition
from iobench.records import iso_from_epoch, now_iso
from iobench.store.repository import Store
from iobench.targets.purge import NO_PURGE, Purged, purge
from iobench.units import format_bytes, format_duration


@dataclass
class Preconditioning:
    """What the run's precondition did so far, target by target, written to the store
    after every change (``Store.set_precondition``)."""

    store: Store
    run_id: int
    pre: Precondition
    targets: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        pre = self.pre
        asked = {"passes": pre.passes, "bs": pre.bs, "iodepth": pre.iodepth, "purge": pre.purge}
        return {**asked, "targets": self.targets}

    def save(self) -> None:
        self.store.set_precondition(self.run_id, self.as_dict())


def precondition_target(
    p: PreparedTarget,
    held: HeldTarget | None,
    steps: Iterator[Step],
    obs: Observer,
    fio: Callable[[Step, str, Callable[[LiveStats], None]], FioRun],
    done: Preconditioning,
    *,
    direct: bool,
) -> None:
    """Purge and fill the test area of ``p`` (held as ``held``), its steps taken from
    ``steps``; ``fio(step, job, watch)`` runs a job on it, its live figures told to
    ``watch``. ``done`` is told each part as it ends."""
    area = p.layout_bytes
    entry: dict[str, Any] = {"target": p.target.spec, "area_bytes": area, "started_at": now_iso()}
    done.targets.append(entry)
    plan = p.purge or NO_PURGE
    if plan.does:
        with observed(obs, next(steps)) as told:
            assert held is not None  # a file or device of this host, held open
            with held.writable() as fd:
                purged = purge(plan, fd, area)
            told.said = purged_text(purged)
    else:
        purged = Purged("none", 0, 0.0, plan.note)
    entry["purge"] = purged.as_dict()
    done.save()
    job = build_fill_jobfile(p.reach, area, done.pre, direct=direct)
    step = next(steps)
    seen = Snapshots()
    with observed(obs, step) as told:
        run = fio(step, job, seen.see)
        if run.output is not None and run.output.jobs:  # how fast it was written
            told.metrics = workload_metrics(run.output, None)
    entry["fill"] = fill_record(run, told.metrics, done.pre, seen, direct=direct)
    entry["finished_at"] = now_iso()
    done.save()


@dataclass
class Snapshots:
    """The fill's bandwidth second by second, from fio's status snapshots (--status-interval
    1): at each, fio's time of IO so far and the bandwidth since the one before. fio's
    interval logs would not do: with ``loops`` each pass starts a new averaging window,
    and a pass shorter than the window leaves no sample."""

    t_s: list[float] = field(default_factory=list)
    bw_bytes: list[float | None] = field(default_factory=list)

    def see(self, stats: LiveStats) -> None:
        if stats.io_s is None or (self.t_s and stats.io_s <= self.t_s[-1]):
            return  # no snapshot yet, or the one seen already
        self.t_s.append(round(stats.io_s, 3))
        self.bw_bytes.append(stats.bw_bytes)


def fill_record(
    run: FioRun,
    metrics: Mapping[str, Any] | None,
    pre: Precondition,
    seen: Snapshots,
    *,
    direct: bool,
) -> dict[str, Any]:
    """What the fill did, as stored: how it was asked, what fio wrote and how fast, its
    bandwidth second by second, and fio's evidence (job file, argv, exit code; its raw
    output is not kept)."""
    write = (metrics or {}).get("write") or {}
    runtime_ms = write.get("runtime_ms")
    return {
        "bs": pre.bs,
        "passes": pre.passes,
        "iodepth": pre.iodepth,
        "ioengine": "libaio",
        "direct": direct,
        "bytes": write.get("io_bytes"),
        # From fio's start to its end (its final sync too); fio's own time of IO, over
        # which bw_bytes is the mean.
        "seconds": round(max(run.finished_at - run.started_at, 0.0), 3),
        "runtime_s": None if runtime_ms is None else runtime_ms / 1000,
        "bw_bytes": write.get("bw_bytes"),
        "iops": write.get("iops"),
        "lat_p99_ns": (write.get("lat_ns") or {}).get("p99"),
        "samples": {"t_s": seen.t_s, "bw_bytes": seen.bw_bytes},
        "fio_version": run.output.fio_version if run.output else None,
        "job_file": run.job_file,
        "fio_argv": run.argv,
        "fio_rc": run.returncode,
        "started_at": iso_from_epoch(run.started_at),
        "finished_at": iso_from_epoch(run.finished_at),
    }


def purged_text(purged: Purged) -> str:
    """A purge done, as the progress says it: ``discarded 64 MiB in 0.1s``."""
    took = format_duration(round(purged.seconds, 1 if purged.seconds >= 0.1 else 3))
    if purged.method == "discard":
        return f"discarded {format_bytes(purged.bytes)} in {took}"
    if purged.method == "punch-hole":
        return f"punched holes over {format_bytes(purged.bytes)} in {took}"
    return purged.note
