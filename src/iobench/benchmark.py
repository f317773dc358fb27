"""Run a suite against targets: plan, guard, lay out, run fio, store, clean up.

This is the one place where the pieces meet. Everything it may not do is enforced here:
it checks every target before anything runs, writes only the test file it created (or the
file/device the user named, when the rules allow), removes what it created on every path
out, and stores each finished workload in its own transaction.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from iobench import __version__
from iobench.analysis.findings import Finding, TargetFacts, method_findings
from iobench.errors import FioFailed, Interrupted, IobenchError, TargetUnsafe, UserError
from iobench.fio.jobfile import build_jobfile, build_layout_jobfile
from iobench.fio.runner import FioInfo, FioRun, LiveStats, run_fio
from iobench.metrics import workload_metrics
from iobench.model import Suite, Target, Workload
from iobench.probe import probe_host, probe_target
from iobench.store.repository import ResultRecord, Store, TargetRecord, now_iso
from iobench.targets import (
    check_block_device_writable,
    check_free_space,
    hold_device,
    resolve_target,
)
from iobench.units import format_bytes

# Seconds of margin on top of ramp + runtime before a workload is declared hung.
TIMEOUT_MARGIN_S = 60.0
# Assumed layout speed when estimating how long writing a test file takes.
LAYOUT_BYTES_PER_S = 100 * 2**20


@dataclass(frozen=True)
class Step:
    """One fio invocation of the plan: a layout or a workload on a target.

    Observers are told ``finished`` with the outcome ``done``, ``failed`` or ``interrupted``.
    """

    index: int
    target: str
    name: str
    expected_s: float
    workload: Workload | None  # None for the layout step


class Observer(Protocol):
    """What the progress display is told. All methods must return quickly."""

    def planned(self, steps: Sequence[Step]) -> None: ...
    def started(self, step: Step) -> None: ...
    def progress(self, step: Step, stats: LiveStats) -> None: ...
    def finished(self, step: Step, outcome: str) -> None: ...
    def close(self) -> None: ...


class NullObserver:
    def planned(self, steps: Sequence[Step]) -> None:
        pass

    def started(self, step: Step) -> None:
        pass

    def progress(self, step: Step, stats: LiveStats) -> None:
        pass

    def finished(self, step: Step, outcome: str) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class RunRequest:
    targets: tuple[str, ...]
    suite: Suite
    label: str | None = None
    destructive: bool = False
    overwrite_signatures: bool = False
    argv: tuple[str, ...] = ()


@dataclass(frozen=True)
class PreparedTarget:
    target: Target
    filename: str  # the file or device fio reads and writes
    created: bool  # iobench creates (and removes) this file
    layout_bytes: int  # how much to write before the workloads (0: none)
    sizes: dict[str, int]  # test area per workload
    findings: tuple[Finding, ...]
    readonly: bool


def expected_seconds(w: Workload) -> float:
    return w.ramp_s + w.runtime_s + 0.5


def prepare_target(target: Target, suite: Suite, request: RunRequest) -> PreparedTarget:
    """Decide file name and sizes for a target and apply every safety rule. Writes nothing."""
    writes = any(w.writes for w in suite.workloads)
    notes: list[Finding] = []
    if target.kind == "directory":
        sizes = {w.name: w.size for w in suite.workloads}
        layout = max(sizes.values())
        check_free_space(target, layout)
        name = f"iobench-{os.getpid()}-{uuid.uuid4().hex[:8]}.dat"
        return PreparedTarget(
            target, str(Path(target.path) / name), True, layout, sizes, tuple(notes), False
        )
    if target.kind == "block":
        if writes:
            check_block_device_writable(
                target,
                destructive=request.destructive,
                overwrite_signatures=request.overwrite_signatures,
            )
    elif writes and not request.destructive:
        writers = ", ".join(w.name for w in suite.workloads if w.writes)
        raise TargetUnsafe(
            f"{target.spec} is an existing file and the {suite.name} suite writes to it "
            f"({writers}): its contents would be overwritten",
            "pass --destructive if it is a scratch file, or give a directory and iobench "
            "creates (and removes) its own test file there",
        )
    limit = target.size_bytes or 0
    if limit == 0:
        raise UserError(
            f"{target.spec} is empty (0 bytes): there is nothing to read or write",
            "give a directory, a file with data in it, or a device",
        )
    sizes = {w.name: min(w.size, limit) for w in suite.workloads}
    capped = [w.name for w in suite.workloads if w.size > limit]
    if capped:
        notes.append(
            Finding(
                "size-capped",
                "info",
                f"the test area is capped at the size of {target.spec} "
                f"({format_bytes(limit)}) for {', '.join(capped)}",
                "use --size to choose a smaller area explicitly",
                target=target.spec,
            )
        )
    return PreparedTarget(target, target.path, False, 0, sizes, tuple(notes), not writes)


def plan_steps(prepared: Sequence[PreparedTarget], suite: Suite) -> list[Step]:
    steps: list[Step] = []
    for p in prepared:
        if p.layout_bytes:
            steps.append(
                Step(
                    len(steps),
                    p.target.spec,
                    "lay out test file",
                    1.0 + p.layout_bytes / LAYOUT_BYTES_PER_S,
                    None,
                )
            )
        for w in suite.workloads:
            steps.append(Step(len(steps), p.target.spec, w.name, expected_seconds(w), w))
    return steps


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Ignore Ctrl-C/SIGTERM while cleaning up, so a second Ctrl-C cannot leave debris."""
    old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
    old_term = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)


@dataclass
class Outcome:
    run_id: int
    status: str
    error: IobenchError | None = None


def execute(
    request: RunRequest, store: Store, fio: FioInfo, observer: Observer | None = None
) -> Outcome:
    """Run the whole request; returns the stored run's id and status.

    Errors found before anything runs (bad target, unsafe device) are raised and nothing is
    stored. Once the run exists in the store, failures end it as ``failed`` and Ctrl-C as
    ``aborted`` (the outcome carries the error); finished workloads are kept either way.
    """
    obs = observer or NullObserver()
    suite = request.suite
    targets = [resolve_target(spec) for spec in request.targets]
    seen: dict[str, str] = {}
    for t in targets:
        if t.path in seen:
            raise UserError(f"{t.spec} and {seen[t.path]} are the same target ({t.path})")
        seen[t.path] = t.spec
    prepared = [prepare_target(t, suite, request) for t in targets]
    host = probe_host()
    contexts = [probe_target(t.path) for t in targets]
    cpu_count = host_cpu_count(host)
    findings: list[Finding] = []
    for p, ctx in zip(prepared, contexts, strict=True):
        findings.extend(p.findings)
        dev_bytes, dev_name = device_under(p.target, ctx)
        facts = TargetFacts(
            spec=p.target.spec,
            path=p.target.path,
            kind=p.target.kind,
            test_bytes=max(p.sizes.values()),
            device_bytes=dev_bytes,
            device_name=dev_name,
        )
        findings.extend(method_findings(suite, facts, cpu_count))

    run_id = store.create_run(
        suite=suite.name,
        suite_def=suite_definition(suite),
        label=request.label,
        argv=request.argv,
        host=host,
        iobench_version=__version__,
        targets=[
            TargetRecord(i, t.spec, t.path, t.kind, t.size_bytes, ctx)
            for i, (t, ctx) in enumerate(zip(targets, contexts, strict=True))
        ],
    )
    steps = plan_steps(prepared, suite)
    obs.planned(steps)
    workdir = Path(tempfile.mkdtemp(prefix="iobench-"))
    created: list[str] = []
    fio_version: str | None = None
    stack = contextlib.ExitStack()
    status: str = "failed"
    error: IobenchError | None = None
    try:
        step_iter = iter(steps)
        for position_base, p in enumerate(prepared):
            stack.close()
            if p.target.kind == "block" and not p.readonly:
                # Nobody may mount, swapon or assemble the device while fio writes to it.
                stack.enter_context(hold_device(p.target))
            if p.created:
                step = next(step_iter)
                _create_exclusive(p.filename)
                created.append(p.filename)
                _run_step(fio, step, build_layout_jobfile(p.filename, p.layout_bytes), workdir, obs)
            for i, w in enumerate(suite.workloads):
                step = next(step_iter)
                job = build_jobfile(w, p.filename, p.sizes[w.name])
                started = now_iso()
                try:
                    run = _run_step(fio, step, job, workdir, obs, readonly=p.readonly)
                except FioFailed as e:
                    store.add_result(
                        run_id,
                        _failed_record(
                            p, w, position_base * len(suite.workloads) + i, job, e, started
                        ),
                    )
                    raise
                assert run.output is not None
                fio_version = fio_version or run.output.fio_version
                store.add_result(
                    run_id,
                    ResultRecord(
                        target=p.target.spec,
                        workload=w.name,
                        position=position_base * len(suite.workloads) + i,
                        status="ok",
                        params=dict(w.params, size=p.sizes[w.name]),
                        metrics=workload_metrics(run.output),
                        job_file=job,
                        fio_argv=run.argv,
                        fio_rc=run.returncode,
                        fio_version=run.output.fio_version,
                        raw_output=run.raw_output,
                        fio_stdout=run.stdout,
                        fio_stderr=run.stderr,
                        error=None,
                        started_at=started,
                        finished_at=now_iso(),
                    ),
                )
        stack.close()
        status = "complete"
    except (KeyboardInterrupt, Interrupted):
        status, error = "aborted", Interrupted("interrupted; the workloads that finished are kept")
    except IobenchError as e:
        status, error = "failed", e
    finally:
        with _signals_deferred():
            stack.close()
            obs.close()
            for path in created:
                with contextlib.suppress(FileNotFoundError):
                    Path(path).unlink()
            shutil.rmtree(workdir, ignore_errors=True)
            store.finish_run(
                run_id,
                status=status,
                fio_version=fio_version or fio.version,
                warnings=[f.as_dict() for f in findings],
                error=None if error is None else error.message,
            )
    return Outcome(run_id, status, error)


def _run_step(
    fio: FioInfo, step: Step, job: str, workdir: Path, obs: Observer, *, readonly: bool = False
) -> FioRun:
    obs.started(step)
    outcome = "failed"
    try:
        run = run_fio(
            fio,
            job,
            workdir,
            timeout_s=step.expected_s * 1.5 + TIMEOUT_MARGIN_S,
            on_progress=lambda stats: obs.progress(step, stats),
            name=f"step{step.index}",
            readonly=readonly,
        )
        outcome = "done"
        return run
    except (KeyboardInterrupt, Interrupted):
        outcome = "interrupted"
        raise
    finally:
        obs.finished(step, outcome)


def _failed_record(
    p: PreparedTarget,
    w: Workload,
    position: int,
    job: str,
    e: FioFailed,
    started: str,
) -> ResultRecord:
    return ResultRecord(
        target=p.target.spec,
        workload=w.name,
        position=position,
        status="failed",
        params=dict(w.params, size=p.sizes[w.name]),
        metrics=None,
        job_file=job,
        fio_argv=e.argv,
        fio_rc=e.returncode,
        fio_version=None,
        raw_output=None,
        fio_stdout=None,
        fio_stderr=e.stderr,
        error=e.message,
        started_at=started,
        finished_at=now_iso(),
    )


def _create_exclusive(path: str) -> None:
    """Create the test file, refusing to touch anything that already exists there."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as e:
        raise UserError(f"{path} already exists; iobench will not overwrite it") from e
    except OSError as e:
        raise UserError(
            f"cannot create the test file {path}: {e.strerror}",
            "choose a directory you may write to, or run as root",
        ) from e
    os.close(fd)


def suite_definition(suite: Suite) -> dict[str, Any]:
    """The suite as it ran (after overrides), for the store."""
    return {
        "name": suite.name,
        "description": suite.description,
        "source": suite.source,
        "indicative": suite.indicative,
        "workloads": [dict(w.params, name=w.name) for w in suite.workloads],
    }


def device_under(target: Target, context: dict[str, Any]) -> tuple[int | None, str | None]:
    """Size and name of the device that holds the target, from its probed context."""
    if target.kind == "block":
        return target.size_bytes, target.path
    disks = (context.get("block") or {}).get("disks") or []
    if disks:
        disk = disks[0]
        return disk.get("size_bytes"), disk.get("path") or disk.get("name")
    return None, None


def host_cpu_count(host: dict[str, Any]) -> int | None:
    """CPUs this process may use (affinity), else the online count, from the host probe."""
    cpu = host.get("cpu") or {}
    count = cpu.get("usable") or cpu.get("online")
    return int(count) if count else None
