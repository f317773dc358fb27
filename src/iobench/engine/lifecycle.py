"""The life of a stored run, the same for every way of making one: create the run, map
every way out to a status (Ctrl-C: ``aborted``; an error: ``failed``), let the executor
clean up and say its findings with stop signals held off, and finish the run."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iobench import __version__
from iobench.analysis.compare import unstable
from iobench.analysis.findings import Finding
from iobench.analysis.measured import measured_findings
from iobench.analysis.results import steady_window
from iobench.analysis.stats import UNSTABLE_CV_PCT
from iobench.analysis.unsteady import steady_findings
from iobench.errors import Interrupted, IobenchError, StoreGone
from iobench.records import RunRecord, SuiteDefinition, TargetRecord, iso_from_epoch, now_iso
from iobench.store.repository import Store

if TYPE_CHECKING:
    from iobench.fio.runner import FioRun

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
INTERRUPTED = "interrupted; the workloads that finished are kept"


@contextlib.contextmanager
def signals_deferred(*, redeliver: bool = True) -> Iterator[None]:
    """Hold off Ctrl-C/SIGTERM/SIGHUP around steps that must not be cut in half (creating
    and registering the test file, cleaning up). A signal that arrives meanwhile is
    delivered afterwards, or dropped with ``redeliver=False`` (the run is ending anyway)."""
    pending: list[int] = []

    def hold(signum: int, frame: object) -> None:
        pending.append(signum)

    old = {sig: signal.signal(sig, hold) for sig in _STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if redeliver and pending:
            signal.raise_signal(pending[0])


@dataclass(frozen=True)
class NewRun:
    """The run row as it is created, before anything runs."""

    suite: str
    suite_def: SuiteDefinition
    label: str | None
    argv: Sequence[str]
    host: dict[str, Any]
    targets: Sequence[TargetRecord]
    origin: str = "run"
    source: str | None = None
    started_at: str | None = None


@dataclass
class RunEnd:
    """How a recorded run is ending: the body sets ``status`` (and ``error`` for a partial
    run) when it got through; the lifecycle sets them when it did not."""

    run_id: int
    status: str = "failed"
    error: IobenchError | None = None
    message: str | None = None  # the stored error text (default: the error's message)
    failure: BaseException | None = None  # what ended the run, when something did
    unstored: str | None = None  # why its end could not be stored (then it shows running)
    lost: bool = False  # the database is no longer at its path: the run is not found there


@dataclass
class Finish:
    """What the executor says once it has cleaned up: the run row's last fields."""

    warnings: Sequence[dict[str, Any]]
    fio_version: str | None
    finished_at: str | None = None


def internal_error(e: BaseException) -> str:
    return f"internal error: {type(e).__name__}: {e}"


@contextlib.contextmanager
def recorded_run(
    store: Store,
    new: NewRun,
    finish: Callable[[RunEnd], Finish],
    *,
    reraise: bool = False,
    describe: Callable[[BaseException], str] | None = None,
    hold_signals: bool = True,
) -> Iterator[RunEnd]:
    """Create the run and yield how it ends; on every way out, ``finish`` (the executor's
    cleanup and findings, under held-off stop signals) and the stored status.

    Ctrl-C ends the run ``aborted`` and an iobench error ``failed``; both are kept in the
    RunEnd for the caller (``reraise``: raised again, as an import does). Anything else is
    an internal error: stored as ``failed`` and raised. ``describe`` words the stored error
    of a run that did not get through. ``hold_signals``: ``finish`` runs with stop signals
    held off (False: it handles Ctrl-C itself, e.g. a cleanup on remote clients that may take
    a while); storing the end always does.
    """
    end = RunEnd(
        store.create_run(
            suite=new.suite,
            suite_def=new.suite_def,
            label=new.label,
            argv=new.argv,
            host=new.host,
            iobench_version=__version__,
            targets=new.targets,
            origin=new.origin,
            source=new.source,
            started_at=new.started_at,
        )
    )
    try:
        yield end
    except (KeyboardInterrupt, Interrupted) as e:
        end.status, end.error, end.failure = "aborted", Interrupted(INTERRUPTED), e
        if reraise:
            raise
    except IobenchError as e:
        end.status, end.error, end.failure = "failed", e, e
        if reraise:
            raise
    except BaseException as e:
        end.status, end.failure = "failed", e
        end.message = internal_error(e)
        raise
    finally:
        with contextlib.ExitStack() as held:
            if hold_signals:  # the cleanup must not be cut in half
                held.enter_context(signals_deferred(redeliver=False))
            if end.failure is not None and describe is not None:
                end.message = describe(end.failure)
            done = finish(end)
            if not hold_signals:  # the cleanup handled Ctrl-C itself; storing must not
                held.enter_context(signals_deferred(redeliver=False))
            message = end.message
            if message is None and end.error is not None:
                message = end.error.message
            try:
                store.finish_run(
                    end.run_id,
                    status=end.status,
                    fio_version=done.fio_version,
                    warnings=list(done.warnings),
                    error=message,
                    finished_at=done.finished_at,
                )
            except Exception as e:
                # With a failure on its way out, that failure is the one to report.
                if end.failure is None:
                    raise
                end.unstored = str(e)
                end.lost = isinstance(e, StoreGone)


def ran_workloads(stored: RunRecord, end: RunEnd) -> set[str] | None:
    """The workloads a run that did not get through measured (its findings speak only of
    them); None for a run that did."""
    if end.status in ("aborted", "failed"):
        return {r.workload for r in stored.results}
    return None


def run_findings(run: RunRecord) -> list[Finding]:
    """Findings from the measurements themselves: unstable repetitions, what each
    workload's figures and per-second samples show (iobench.analysis.measured), and
    whether they are steady (iobench.analysis.unsteady)."""
    found = measured_findings(run)
    found.extend(steady_findings(run))
    # In steady-state rounds the rule judges how the rounds vary (not-steady).
    repeats = [] if steady_window(run) is not None else unstable(run)
    for target, workload, direction, cv in repeats:
        found.append(
            Finding(
                "unstable-repeats",
                "warning",
                f"{workload} on {target}: {direction} IOPS vary by {cv:.1f} % (coefficient of "
                f"variation) across its repetitions, more than {UNSTABLE_CV_PCT:g} %",
                "run longer (--runtime), repeat more often, and look for other load on the "
                "storage or the host",
                workload=workload,
                target=target,
            )
        )
    return found


def fio_evidence(run: FioRun | None, failure: BaseException | None) -> dict[str, Any]:
    """What fio left of a step, for its stored row: argv, exit code, output and times; from
    ``failure`` (a FioFailed carries argv, returncode and stderr) when there is no run."""
    return {
        "fio_argv": run.argv if run else getattr(failure, "argv", []),
        "fio_rc": run.returncode if run else getattr(failure, "returncode", None),
        "raw_output": run.raw_output if run else None,
        "fio_stdout": run.stdout if run else None,
        "fio_stderr": run.stderr if run else getattr(failure, "stderr", None),
        "started_at": iso_from_epoch(run.started_at) if run and run.started_at else now_iso(),
        "finished_at": iso_from_epoch(run.finished_at) if run and run.finished_at else now_iso(),
    }
