"""A run on this host: hold devices, lay out test files, run each step's fio with the
target behind a private link, store each result as it comes, and undo everything on every
way out (docs/development.md, "How a run works")."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iobench.analysis.findings import Finding
from iobench.analysis.throttles import context_throttles
from iobench.engine.held import HeldTarget, hold_target
from iobench.engine.lifecycle import (
    Finish,
    NewRun,
    RunEnd,
    fio_evidence,
    ran_workloads,
    recorded_run,
    run_findings,
    signals_deferred,
)
from iobench.engine.modes import Driver, Mode, Planned, mode_of, upfront_steps
from iobench.engine.parts import group_result, missing_part, part_entries
from iobench.engine.precondition import Preconditioning, precondition_target
from iobench.engine.preflight import Preflight, PreparedTarget
from iobench.engine.request import Outcome, RunRequest
from iobench.engine.steps import Observer, Step, observed
from iobench.errors import FioFailed
from iobench.fio.jobfile import build_jobfile, build_layout_jobfile
from iobench.fio.logs import interval_of, parse_interval_logs
from iobench.fio.runner import TIMEOUT_MARGIN_S, FioInfo, FioRun, LiveStats, run_fio
from iobench.metrics import workload_metrics
from iobench.model import Workload
from iobench.probe.context import Storage
from iobench.probe.cpu import StepLoad
from iobench.probe.diskstats import disk_util
from iobench.probe.diskstats import snapshot as disk_snapshot
from iobench.probe.host import read_text
from iobench.probe.throttle import effective, throttle_text, throttles_of
from iobench.records import PartResult, ResultRecord, SuiteDefinition, TargetRecord
from iobench.specs import SPEC_MIN_OUTSTANDING, SPEC_TOLERANCE
from iobench.store.repository import Store
from iobench.targets import kind_of

# Writing the test file has no time limit, but fails when fio's byte count stops growing
# for this long (a hung mount, a dead disk).
STALL_S = 300.0


def execute_local(
    request: RunRequest,
    preflight: Preflight,
    store: Store,
    fio: FioInfo,
    obs: Observer,
    *,
    timeout_margin_s: float = TIMEOUT_MARGIN_S,
    stall_s: float = STALL_S,
) -> Outcome:
    """Run the request on this host as its preflight prepared it."""
    local = LocalRun(request, preflight, store, fio, obs, timeout_margin_s, stall_s)
    with recorded_run(store, local.new_run(), local.finish) as end:
        local.run_id = end.run_id
        local.run(end.run_id)
        end.status = "complete"
    return Outcome(end.run_id, end.status, end.error, end.unstored, end.lost)


@dataclass
class LocalRun:
    """A run on this host, with what it has created so far so that every way out can
    undo it."""

    request: RunRequest
    preflight: Preflight
    store: Store
    fio: FioInfo
    obs: Observer
    timeout_margin_s: float
    stall_s: float
    workdir: Path | None = None
    run_id: int = 0
    held: dict[str, HeldTarget] = field(default_factory=dict)  # target spec -> held open
    holds: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    fio_version: str | None = None
    findings: list[Finding] = field(default_factory=list)  # found while running
    cgroup: str | None = None  # iobench's /proc/self/cgroup: the cgroups fio should inherit
    preconditioning: Preconditioning | None = None  # --precondition: what it did so far

    def new_run(self) -> NewRun:
        """The run row: the suite as it runs, with a spec's promise and the mode's brief (a
        chooser's plan, the steady-state rule)."""
        pre, request = self.preflight, self.request
        definition = {**SuiteDefinition.of_suite(pre.suite).as_dict(), **request.extra_definition}
        if pre.promise is not None:
            definition["spec"] = {
                **pre.promise.as_dict(),
                "tolerance": SPEC_TOLERANCE,
                "min_outstanding": SPEC_MIN_OUTSTANDING,
            }
        definition.update(self.mode.definition())
        targets = [
            TargetRecord(i, t.spec, t.path, t.kind, t.size_bytes, ctx)
            for i, (t, ctx) in enumerate(zip(pre.targets, pre.contexts, strict=True))
        ]
        self.cgroup = read_text("/proc/self/cgroup")
        suite_def = SuiteDefinition.from_dict(definition)  # the keys in the order written
        return NewRun(pre.suite.name, suite_def, request.label, request.argv, pre.host, targets)

    @property
    def mode(self) -> Mode:
        return mode_of(self.request, self.preflight.suite)

    def run(self, run_id: int) -> None:
        """Every step: devices held and test files laid out first, then the workloads, as
        the run's mode chooses them on each target."""
        pre, mode = self.preflight, self.mode
        self.workdir = Path(tempfile.mkdtemp(prefix="iobench-"))
        self.store.note_leftover(run_id, str(self.workdir), "private directory")
        if pre.precondition is not None:
            self.preconditioning = Preconditioning(self.store, run_id, pre.precondition)
        schedule = pre.layout_steps()
        layouts = iter(schedule)
        specs = [p.target.spec for p in pre.prepared]
        schedule += upfront_steps(mode, specs, len(schedule))
        self.obs.planned(schedule, mode.budget_s and mode.budget_s * len(specs))
        for p in pre.prepared:
            self._prepare_on_disk(p, layouts)

        def run_one(p: PreparedTarget, planned: Planned, step: Step) -> ResultRecord:
            position = specs.index(p.target.spec) * len(pre.suite.workloads) + planned.position
            return self._run_workload(run_id, p, planned.workload, position, step)

        driver = Driver(
            mode,
            run_one,
            label=lambda p: p.target.spec,
            context=lambda p: pre.context_of(p.target.spec),
            index=len(pre.layout_steps()),
        )
        driver.drive(pre.prepared)
        for held in self.held.values():  # a swap during the last step counts as well
            held.check()

    def finish(self, end: RunEnd) -> Finish:
        """Undo everything, then the findings: the preflight's (for what ran, when the run
        did not get through), the measurements', and those found while running."""
        with contextlib.suppress(Exception):
            self.obs.close()
        self._clean_up()
        findings = list(self.preflight.findings)
        with contextlib.suppress(Exception):  # also for the repetitions of a cut-short run
            stored = self.store.get_run(end.run_id)
            ran = ran_workloads(stored, end)
            if ran is not None:  # speak only of the workloads that ran
                if self.request.chooser is not None:  # its suite is a template
                    findings = findings if ran else []
                else:
                    findings = self.preflight.findings_for(ran)
            findings.extend(run_findings(stored))
        self.findings[:0] = findings
        return Finish([f.as_dict() for f in self.findings], self.fio_version or self.fio.version)

    def _clean_up(self) -> None:
        """Undo everything; each step on its own so one failure does not skip the rest.
        What is gone is no longer a leftover of the run."""
        gone: list[str] = []

        def remove_test_files() -> None:
            self._remove_test_files(gone)

        for step in (remove_test_files, self.holds.close):
            try:
                step()
            except Exception as e:  # cleanup must go on
                self.findings.append(
                    Finding("cleanup-failed", "warning", f"cleanup failed: {e}", "see --traceback")
                )
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            if not self.workdir.exists():
                gone.append(str(self.workdir))
        if gone and self.run_id:
            with contextlib.suppress(Exception):  # a database that fails says so elsewhere
                self.store.forget_leftovers(self.run_id, gone)

    def _remove_test_files(self, gone: list[str]) -> None:
        for held in self.held.values():
            if held.name is None:
                continue
            path = held.prepared.filename
            problem = held.remove()
            if problem is None:
                gone.append(path)
                continue
            self.findings.append(
                Finding(
                    "test-file-left",
                    "warning",
                    f"could not remove the test file {path}: {problem}",
                    "remove it by hand",
                )
            )
        self.held.clear()

    def _prepare_on_disk(self, p: PreparedTarget, steps: Iterator[Step]) -> None:
        """Before the first workload: hold the target open (a device that will be written
        claimed exclusively), create and lay out a test file."""
        assert self.workdir is not None
        request = self.request
        assert p.plan is not None
        kind = kind_of(p.target)
        with signals_deferred():  # the test file made and registered, or neither
            claimed = kind.claim(p.target, p.plan, readonly=p.readonly, holds=self.holds)
            if kind.opened:
                self.held[p.target.spec] = hold_target(
                    p,
                    self.holds,
                    before_create=lambda path: self.store.note_leftover(
                        self.run_id, path, "test file"
                    ),
                    claimed=claimed,
                )
        direct = all(w.direct for w in request.suite.workloads)
        if p.layout_bytes and self.preconditioning is not None:
            self._precondition(p, steps, direct)
        elif p.layout_bytes:
            step = next(steps)
            job = build_layout_jobfile(p.reach, p.layout_bytes, direct=direct)
            with observed(self.obs, step) as told:
                run = self._fio(step, job, p, timeout_s=None, stall_s=self.stall_s)
                if run.output is not None and run.output.jobs:  # how fast it was written
                    told.metrics = workload_metrics(run.output, None)

    def _precondition(self, p: PreparedTarget, steps: Iterator[Step], direct: bool) -> None:
        """A precondition's purge and fill of the target's test area, in place of its
        layout (engine/precondition.py)."""
        assert self.preconditioning is not None

        def fio(step: Step, job: str, watch: Callable[[LiveStats], None]) -> FioRun:
            return self._fio(step, job, p, timeout_s=None, stall_s=self.stall_s, watch=watch)

        held = self.held.get(p.target.spec)
        precondition_target(p, held, steps, self.obs, fio, self.preconditioning, direct=direct)

    def _run_workload(
        self, run_id: int, p: PreparedTarget, w: Workload, position: int, step: Step
    ) -> ResultRecord:
        """Run one workload once on one target and store the result (or the failure)."""
        assert self.workdir is not None
        # The safety checks and the test file were made for the suite's workloads.
        if (p.created and w.size > p.layout_bytes) or (w.writes and p.readonly):
            raise ValueError(f"{w.name} was chosen, which the checks did not allow")
        w = p.placed(w)  # as it runs there: pinned with --pin-to-device, its area capped
        job = build_jobfile(w, p.reach, w.size)
        ctx = self.preflight.context_of(p.target.spec)
        devices = list(Storage.of(ctx).io_devices)  # the block devices that serve its IO
        disks_before = disk_snapshot(devices)
        load = StepLoad.start([str(d.get("kname") or "") for d in devices])  # who used the CPU
        timeout_s = step.expected_s * 1.5 + self.timeout_margin_s
        # Stored inside the step, so the observer is told the stored figures.
        with observed(self.obs, step) as told:
            try:
                run = self._fio(
                    step, job, p, readonly=p.readonly, timeout_s=timeout_s, glance=load.glance
                )
            except FioFailed as e:
                self.store.add_result(run_id, result_record(p, w, position, job, step, failure=e))
                raise
            assert run.output is not None
            self.fio_version = self.fio_version or run.output.fio_version
            record = result_record(p, w, position, job, step, run=run)
            host_cpu = load.end()
            if record.metrics is not None:
                if host_cpu is not None:
                    record.metrics["host_cpu"] = host_cpu
                # fio's own disk_util describes the disk of the link it reaches the target by.
                record.metrics["disk_util"] = disk_util(disks_before, disk_snapshot(devices))
            note_fio_cgroup(self.findings, run.cgroup, self.cgroup, p.target.spec, ctx)
            self.store.add_result(run_id, record)
            told.metrics = record.metrics
        return record

    def _fio(
        self,
        step: Step,
        job: str,
        p: PreparedTarget,
        *,
        timeout_s: float | None,
        stall_s: float | None = None,
        readonly: bool = False,
        glance: Callable[[], None] = lambda: None,
        watch: Callable[[LiveStats], None] = lambda stats: None,
    ) -> FioRun:
        """fio for ``step`` on the target ``p`` (still the one held, or TargetUnsafe), its
        live figures told to the observer and to ``watch``; ``glance`` called as they
        come."""
        assert self.workdir is not None
        held = self.held.get(p.target.spec)  # none for storage fio reaches by its engine
        if held is not None:
            held.check()

        def progress(stats: LiveStats) -> None:
            glance()
            watch(stats)
            self.obs.progress(step, stats)
            if held is not None:
                held.glance()

        return run_fio(
            self.fio,
            job,
            self.workdir,
            timeout_s=timeout_s,
            stall_s=stall_s,
            on_progress=progress,
            name=f"step{step.index}",
            readonly=readonly,
            held=held.held if held is not None else None,
            env=p.reach.env,
        )


def note_fio_cgroup(
    findings: list[Finding],
    fio_cgroup: str | None,
    own_cgroup: str | None,
    spec: str,
    ctx: dict[str, Any],
) -> None:
    """fio inherits iobench's cgroups, and so the throttles stored with the target (``ctx``);
    ``fio-cgroup`` (once per target) when something placed it elsewhere, with other
    throttles."""
    if fio_cgroup is None or own_cgroup is None or fio_cgroup == own_cgroup:
        return
    if any(f.id == "fio-cgroup" and f.target == spec for f in findings):
        return
    devices = Storage.of(ctx).io_devices
    fio = effective(throttles_of(fio_cgroup, read_text("/proc/self/mountinfo"), devices))
    stored = context_throttles(ctx)
    if fio == stored:
        return
    findings.append(
        Finding(
            "fio-cgroup",
            "warning",
            f"fio ran in other cgroups than iobench on {spec}, with other IO throttles: "
            f"{throttle_text(fio) or 'none'} (iobench's: {throttle_text(stored) or 'none'}); "
            "the target's stored throttles are iobench's",
            "run iobench and fio in the same cgroup (do not move fio), or read the "
            "numbers against fio's throttles",
            target=spec,
        )
    )


def result_record(
    p: PreparedTarget,
    w: Workload,
    position: int,
    job: str,
    step: Step,
    *,
    run: FioRun | None = None,
    failure: FioFailed | None = None,
) -> ResultRecord:
    """The stored row of one workload (as placed on the target) on one target: its result
    or its failure."""
    output = run.output if run else None
    params = w.params
    metrics = workload_metrics(output, params) if output else None
    samples = parse_interval_logs(run.logs, interval_of(w)) if run else None
    error = failure.message if failure else None
    parts: tuple[PartResult, ...] = ()
    if w.parts and output is not None and run is not None:
        entries = part_entries(output.jobs, w)
        if entries is None:
            metrics, error = None, missing_part(output.jobs)
        else:
            metrics, parts, samples = group_result(entries, w, run.logs, output.disk_util)
    return ResultRecord(
        target=p.target.spec,
        workload=w.name,
        position=position,
        status="ok" if error is None else "failed",
        params=params,
        metrics=metrics,
        job_file=job,
        fio_version=output.fio_version if output else None,
        error=error,
        repetition=step.repetition,
        samples=samples,
        parts=parts,
        **fio_evidence(run, failure),
    )
