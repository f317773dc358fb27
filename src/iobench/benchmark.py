"""Run a suite against targets: plan, guard, lay out, run fio, store, clean up.

This is the one place where the pieces meet. Everything it may not do is enforced here:
it checks every target before anything runs, writes only the test file it created (or the
file/device the user named, when the rules allow), removes what it created on every path
out, and stores each finished workload in its own transaction.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from iobench import __version__
from iobench.analysis.compare import unstable
from iobench.analysis.findings import Finding, TargetFacts, method_findings
from iobench.analysis.measured import measured_findings, spinning_disk
from iobench.analysis.stats import UNSTABLE_CV_PCT
from iobench.analysis.throttles import context_throttles, throttled_directions
from iobench.errors import FioFailed, Interrupted, IobenchError, TargetUnsafe, UserError
from iobench.expect import directions_of
from iobench.fio.jobfile import build_jobfile, build_layout_jobfile
from iobench.fio.logs import parse_interval_logs
from iobench.fio.runner import FioInfo, FioRun, LiveStats, link_target, run_fio
from iobench.metrics import workload_metrics
from iobench.model import Suite, Target, Workload
from iobench.probe import probe_host, probe_target
from iobench.probe.cpu import busy, cpu_times
from iobench.probe.diskstats import disk_util
from iobench.probe.diskstats import snapshot as disk_snapshot
from iobench.probe.host import read_text
from iobench.probe.throttle import effective, throttle_text, throttles_of
from iobench.probe.written import unwritten as unwritten_area
from iobench.specs import (
    SPEC_MIN_OUTSTANDING,
    SPEC_TOLERANCE,
    Promise,
    Volume,
    spec_expectations,
)
from iobench.specs import resolve as resolve_spec
from iobench.store.repository import (
    ResultRecord,
    RunRecord,
    Store,
    TargetRecord,
    iso_from_epoch,
    now_iso,
)
from iobench.targets import (
    check_access,
    check_block_device_writable,
    check_file_writable,
    check_free_space,
    check_real_storage,
    hold_device,
    resolve_target,
)
from iobench.units import format_bytes

# Seconds of margin on top of ramp + runtime before a workload is declared hung.
TIMEOUT_MARGIN_S = 60.0
# Assumed speed when estimating how long writing a test file (or a size-bound job) takes.
LAYOUT_BYTES_PER_S = 100 * 2**20
# Writing the test file has no time limit, but fails when fio's byte count stops growing
# for this long (a hung mount, a dead disk).
STALL_S = 300.0


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
    repetition: int = 1


class Observer(Protocol):
    """What the progress display is told. All methods must return quickly.

    ``planned`` gets the steps known up front; an adaptive run (``budget_s`` set) adds
    steps as it goes, within that many seconds.
    """

    def planned(self, steps: Sequence[Step], budget_s: float | None = None) -> None: ...
    def started(self, step: Step) -> None: ...
    def progress(self, step: Step, stats: LiveStats) -> None: ...
    def finished(self, step: Step, outcome: str) -> None: ...
    def close(self) -> None: ...


class NullObserver:
    def planned(self, steps: Sequence[Step], budget_s: float | None = None) -> None:
        pass

    def started(self, step: Step) -> None:
        pass

    def progress(self, step: Step, stats: LiveStats) -> None:
        pass

    def finished(self, step: Step, outcome: str) -> None:
        pass

    def close(self) -> None:
        pass


class Planner(Protocol):
    """Chooses each next workload from the results so far (``iobench characterize``).

    The request's suite then holds the workloads the planner may choose from in shape (for
    the safety checks and the test file's size); every workload it returns must read or
    write like them and be no larger.
    """

    budget_s: float  # the most the planned workloads may take, for the progress display

    def next_workload(self, done: Sequence[ResultRecord]) -> Workload | None: ...

    def definition(self) -> dict[str, Any]:
        """What the planner was asked, stored with the run (``suite_def["plan"]``)."""
        ...


@dataclass(frozen=True)
class RunRequest:
    targets: tuple[str, ...]
    suite: Suite
    label: str | None = None
    destructive: bool = False
    overwrite_signatures: bool = False
    argv: tuple[str, ...] = ()
    repeat: int = 1  # run every workload this many times
    planner: Planner | None = None  # adaptive: the planner chooses the workloads
    extra_definition: dict[str, Any] = field(default_factory=dict)  # e.g. a sweep's axes
    prefill: bool = False  # write the test area of a device or file before the workloads
    spec: str | None = None  # a provider spec to hold the volume to (iobench.specs)
    spec_params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PreparedTarget:
    target: Target
    filename: str  # the file or device fio reads and writes
    created: bool  # iobench creates (and removes) this file
    layout_bytes: int  # how much to write before the workloads (0: none)
    size_limit: int | None  # the file's or device's size (None: a test file of our own)
    readonly: bool

    def size_of(self, w: Workload) -> int:
        """The test area of a workload on this target."""
        return w.size if self.size_limit is None else min(w.size, self.size_limit)


def _time_based(w: Workload) -> bool:
    return dict(w.options).get("time_based", "1") != "0"


def expected_seconds(w: Workload) -> float:
    """How long a workload should take: ramp + runtime, or size-bound for non-time-based."""
    run = w.runtime_s
    if not _time_based(w):
        run = min(run, 1.0 + w.numjobs * w.size / LAYOUT_BYTES_PER_S)
    return w.ramp_s + run + 0.5


def prepare_target(
    target: Target, suite: Suite, request: RunRequest, protected: Sequence[str] = ()
) -> PreparedTarget:
    """Decide file name and sizes for a target and apply every safety rule. Writes nothing.

    ``protected`` are files that must never be written (the results database).
    """
    writes = any(w.writes for w in suite.workloads) or request.prefill
    check_real_storage(target)
    check_access(target, writes=writes)
    if target.kind == "directory":
        name = f"iobench-{os.getpid()}-{uuid.uuid4().hex[:8]}.dat"
        layout = max(w.size for w in suite.workloads)
        return PreparedTarget(target, str(Path(target.path) / name), True, layout, None, False)
    if target.kind == "block":
        if writes:
            check_block_device_writable(
                target,
                destructive=request.destructive,
                overwrite_signatures=request.overwrite_signatures,
            )
    elif writes:
        if not request.destructive:
            writers = ", ".join(w.name for w in suite.workloads if w.writes) or "--prefill"
            raise TargetUnsafe(
                f"{target.spec} is an existing file and the {suite.name} suite writes to it "
                f"({writers}): its contents would be overwritten",
                "pass --destructive if it is a scratch file, or give a directory and iobench "
                "creates (and removes) its own test file there",
            )
        check_file_writable(target, protected)
    if target.size_bytes is None:
        raise UserError(
            f"cannot tell the size of {target.spec}",
            "check that it is readable (run as root for devices)",
        )
    limit = target.size_bytes
    if limit == 0:
        raise UserError(
            f"{target.spec} is empty (0 bytes): there is nothing to read or write",
            "give a directory, a file with data in it, or a device",
        )
    # --prefill writes the whole test area once, like a test file's layout.
    layout = min(max(w.size for w in suite.workloads), limit) if request.prefill else 0
    return PreparedTarget(target, target.path, False, layout, limit, not writes)


def size_notes(target: Target, suite: Suite, limit: int | None) -> list[Finding]:
    """``size-capped``: the workloads whose test area the file's or device's size caps."""
    capped = [w.name for w in suite.workloads if limit is not None and w.size > limit]
    if not capped or limit is None:
        return []
    return [
        Finding(
            "size-capped",
            "info",
            f"the test area is capped at the size of {target.spec} "
            f"({format_bytes(limit)}) for {_names(capped)}",
            "use --size to choose a smaller area explicitly",
            target=target.spec,
        )
    ]


def _names(names: Sequence[str], most: int = 4) -> str:
    """``a, b, c and 17 more``."""
    if len(names) <= most + 1:
        return ", ".join(names)
    return f"{', '.join(names[:most])} and {len(names) - most} more"


def check_space(prepared: Sequence[PreparedTarget]) -> None:
    """Free space for every test file, summed per filesystem (two targets may share one)."""
    by_fs: dict[int, list[PreparedTarget]] = {}
    for p in prepared:
        if p.created:
            by_fs.setdefault(Path(p.target.path).stat().st_dev, []).append(p)
    for group in by_fs.values():
        check_free_space(group[0].target, sum(p.layout_bytes for p in group))


def plan_steps(prepared: Sequence[PreparedTarget], suite: Suite, repeat: int = 1) -> list[Step]:
    """Layouts first, then every repetition: each workload on every target in turn, so
    drift over time hits all targets alike."""
    steps: list[Step] = []
    for p in prepared:
        if p.layout_bytes:
            expected = 1.0 + p.layout_bytes / LAYOUT_BYTES_PER_S
            name = "lay out test file" if p.created else "prefill the test area"
            steps.append(Step(len(steps), p.target.spec, name, expected, None))
    for rep in range(1, repeat + 1):
        for w in suite.workloads:
            for p in prepared:
                name = w.name if repeat == 1 else f"{w.name} ({rep}/{repeat})"
                steps.append(Step(len(steps), p.target.spec, name, expected_seconds(w), w, rep))
    return steps


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _signals_deferred(*, redeliver: bool = True) -> Iterator[None]:
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


@dataclass
class Outcome:
    run_id: int
    status: str
    error: IobenchError | None = None


@dataclass
class _RunState:
    """What a run has created so far, so that every way out can undo it."""

    workdir: Path | None = None
    created: list[str] = field(default_factory=list)
    holds: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    fio_version: str | None = None
    findings: list[Finding] = field(default_factory=list)
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)  # target spec -> context
    cgroup: str | None = None  # iobench's /proc/self/cgroup: the cgroups fio should inherit

    def remove_test_files(self) -> None:
        for path in list(self.created):
            try:
                Path(path).unlink(missing_ok=True)
            except OSError as e:
                self.findings.append(
                    Finding(
                        "test-file-left",
                        "warning",
                        f"could not remove the test file {path}: {e.strerror}",
                        "remove it by hand",
                    )
                )
            self.created.remove(path)

    def cleanup(self) -> None:
        """Undo everything; each step on its own so one failure does not skip the rest."""
        for step in (self.holds.close, self.remove_test_files):
            try:
                step()
            except Exception as e:  # cleanup must go on
                self.findings.append(
                    Finding("cleanup-failed", "warning", f"cleanup failed: {e}", "see --traceback")
                )
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)


def execute(
    request: RunRequest,
    store: Store,
    fio: FioInfo,
    observer: Observer | None = None,
    *,
    timeout_margin_s: float = TIMEOUT_MARGIN_S,
    stall_s: float = STALL_S,
    planned: Plan | None = None,
) -> Outcome:
    """Run the whole request; returns the stored run's id and status.

    Errors found before anything runs (bad target, unsafe device) are raised and nothing is
    stored. Once the run exists in the store, failures end it as ``failed`` and Ctrl-C as
    ``aborted`` (the outcome carries the error); finished workloads are kept either way.
    """
    obs = observer or NullObserver()
    if planned is None:  # the CLI plans before it opens the store: a refusal creates nothing
        planned = plan(request, protected_paths(store.path))
    suite, targets, prepared = planned.suite, planned.targets, planned.prepared
    contexts, host, promise = planned.contexts, planned.host, planned.promise
    state = _RunState()  # findings of the run itself; the plan's are added at the end
    state.contexts = {t.spec: ctx for t, ctx in zip(targets, contexts, strict=True)}
    state.cgroup = read_text("/proc/self/cgroup")

    definition = {**suite_definition(suite), **request.extra_definition}
    if promise is not None:
        definition["spec"] = {
            **promise.as_dict(),
            "tolerance": SPEC_TOLERANCE,
            "min_outstanding": SPEC_MIN_OUTSTANDING,
        }
    if request.planner is not None:
        if len(targets) != 1:
            raise UserError("an adaptive run takes exactly one target")
        definition["plan"] = request.planner.definition()
    run_id = store.create_run(
        suite=suite.name,
        suite_def=definition,
        label=request.label,
        argv=request.argv,
        host=host,
        iobench_version=__version__,
        targets=[
            TargetRecord(i, t.spec, t.path, t.kind, t.size_bytes, ctx)
            for i, (t, ctx) in enumerate(zip(targets, contexts, strict=True))
        ],
    )
    status = "failed"
    error: IobenchError | None = None
    internal: str | None = None
    try:
        state.workdir = Path(tempfile.mkdtemp(prefix="iobench-"))
        planner = request.planner
        schedule = plan_steps(prepared, suite, 0 if planner else request.repeat)
        obs.planned(schedule, planner.budget_s if planner else None)
        steps = iter(schedule)
        for p in prepared:
            _prepare_on_disk(request, fio, obs, p, steps, state, stall_s)
        if planner is not None:
            _run_planned(store, fio, obs, run_id, prepared[0], planner, state, timeout_margin_s)
        for step in steps:
            assert step.workload is not None
            index = next(i for i, p in enumerate(prepared) if p.target.spec == step.target)
            w = step.workload
            position = index * len(suite.workloads) + suite.workloads.index(w)
            _run_workload(
                store, fio, obs, run_id, prepared[index], w, position, step, state, timeout_margin_s
            )
        status = "complete"
    except (KeyboardInterrupt, Interrupted):
        status, error = "aborted", Interrupted("interrupted; the workloads that finished are kept")
    except IobenchError as e:
        status, error = "failed", e
    except BaseException as e:
        internal = f"internal error: {type(e).__name__}: {e}"
        raise
    finally:
        with _signals_deferred(redeliver=False):
            with contextlib.suppress(Exception):
                obs.close()
            state.cleanup()
            findings = list(planned.findings)
            with contextlib.suppress(Exception):  # also for the repetitions of a cut-short run
                stored = store.get_run(run_id)
                if status != "complete":  # speak only of the workloads that ran
                    ran = {r.workload for r in stored.results}
                    findings = (
                        (findings if ran else [])
                        if request.planner is not None
                        else planned.findings_for(ran)
                    )
                findings.extend(run_findings(stored))
            state.findings[:0] = findings
            store.finish_run(
                run_id,
                status=status,
                fio_version=state.fio_version or fio.version,
                warnings=[f.as_dict() for f in state.findings],
                error=internal if error is None else error.message,
            )
    return Outcome(run_id, status, error)


@dataclass(frozen=True)
class Plan:
    """Everything decided before a run starts: what ``iobench doctor`` shows."""

    suite: Suite  # with the spec's expectations added
    targets: list[Target]
    prepared: list[PreparedTarget]
    contexts: list[dict[str, Any]]
    host: dict[str, Any]
    promise: Promise | None
    findings: list[Finding]
    facts: list[TargetFacts]  # what the findings were made from, one per target

    def findings_for(self, ran: set[str]) -> list[Finding]:
        """The plan's findings as if the suite had held only the workloads in ``ran``
        (an interrupted run speaks only of what ran; nothing when nothing ran)."""
        suite = self.suite.only(ran)
        if not suite.workloads:
            return []
        return findings_from_facts(self.prepared, self.facts, suite, self.host)


def protected_paths(db: Path) -> list[str]:
    """The results database's files: never a target."""
    return [str(db), f"{db}-wal", f"{db}-shm"]


def plan(request: RunRequest, protected: Sequence[str] = ()) -> Plan:
    """Resolve and check every target, probe host and targets, resolve the spec, and find
    what is wrong with the method. Writes nothing; raises before anything could run."""
    suite = request.suite
    targets = [resolve_target(spec) for spec in request.targets]
    seen: dict[str, str] = {}
    for t in targets:
        if t.path in seen:
            raise UserError(f"{t.spec} and {seen[t.path]} are the same target ({t.path})")
        seen[t.path] = t.spec
    prepared = [prepare_target(t, suite, request, protected) for t in targets]
    check_space(prepared)
    host = probe_host()
    contexts = [probe_target(t.path) for t in targets]
    promise = None
    if request.spec:
        promise = resolve_spec(
            request.spec, request.spec_params, _volume(prepared, contexts, host, request)
        )
        suite = dataclasses.replace(
            suite, expectations=(*suite.expectations, *spec_expectations(promise, suite))
        )
    facts = [
        target_facts(p, ctx, suite, host, prefill=request.prefill)
        for p, ctx in zip(prepared, contexts, strict=True)
    ]
    findings = findings_from_facts(prepared, facts, suite, host)
    return Plan(suite, targets, prepared, contexts, host, promise, findings, facts)


def _volume(
    prepared: Sequence[PreparedTarget],
    contexts: Sequence[dict[str, Any]],
    host: dict[str, Any],
    request: RunRequest,
) -> Volume:
    """The volume a spec is resolved for: the device under the target(s)."""
    sizes = {device_under(p.target, ctx)[0] for p, ctx in zip(prepared, contexts, strict=True)}
    if len(sizes) > 1 and "size" not in request.spec_params:
        raise UserError(
            f"--spec {request.spec}: the targets are on devices of different sizes, and a "
            "spec describes one volume",
            "run one target at a time, or give the size: --spec-param size=500G",
        )
    # The VM's vCPUs, not this process's affinity: providers cap by the instance's size.
    online = (host.get("cpu") or {}).get("online")
    return Volume(sizes.pop() if sizes else None, int(online) if online else None)


def findings_from_facts(
    prepared: Sequence[PreparedTarget],
    facts: Sequence[TargetFacts],
    suite: Suite,
    host: dict[str, Any],
) -> list[Finding]:
    """The plan's findings about the method (pure: from facts gathered once)."""
    findings: list[Finding] = []
    for p, target in zip(prepared, facts, strict=True):
        findings.extend(size_notes(p.target, suite, p.size_limit))
        findings.extend(
            f for f in method_findings(suite, target, host_cpu_count(host)) if f not in findings
        )
    return findings


def target_facts(
    p: PreparedTarget,
    ctx: dict[str, Any],
    suite: Suite,
    host: dict[str, Any],
    *,
    prefill: bool = False,
) -> TargetFacts:
    """What the findings need to know about one prepared target (reads a few blocks of
    an existing file or device to see whether its test area was ever written)."""
    dev_bytes, dev_name = device_under(p.target, ctx)
    area = max(p.size_of(w) for w in suite.workloads)
    unwritten = None
    if not p.created and not prefill and "read" in directions_of(suite.workloads[0]):
        unwritten = unwritten_area(p.filename, p.target.kind, area)
    return TargetFacts(
        spec=p.target.spec,
        path=p.target.path,
        kind=p.target.kind,
        test_bytes=area,
        device_bytes=dev_bytes,
        device_name=dev_name,
        ram_backed=ctx.get("ram_backed"),
        compressing=compressing_why(ctx),
        rotational=spinning_disk(ctx, host),
        unwritten_share=unwritten.share if unwritten else None,
        unwritten_how=unwritten.how if unwritten else None,
        prefill=prefill,
        expectations=suite.expectations,
        throttles=throttle_text(context_throttles(ctx)) or None,
        throttled=frozenset(throttled_directions(ctx)),
    )


def compressing_why(ctx: dict[str, Any]) -> str | None:
    """How the target's filesystem compresses or deduplicates what is written."""
    fs = ctx.get("filesystem") or {}
    fstype = fs.get("fstype")
    opts = fs.get("options_parsed") or {}
    if fstype == "btrfs":
        for key in ("compress-force", "compress"):
            value = opts.get(key)
            if value and value not in ("no", "none"):
                shown = key if value is True else f"{key}={value}"
                return f"is btrfs mounted with {shown}"
    if fstype == "zfs":
        return "is ZFS (compression, lz4 by default, and dedup are dataset properties)"
    if fstype == "bcachefs" and any(k.endswith("compression") for k in opts):
        return "is bcachefs with compression on"
    return None


def _prepare_on_disk(
    request: RunRequest,
    fio: FioInfo,
    obs: Observer,
    p: PreparedTarget,
    steps: Iterator[Step],
    state: _RunState,
    stall_s: float,
) -> None:
    """Before the first workload: hold a device that will be written, lay out a test file."""
    assert state.workdir is not None
    if p.target.kind == "block" and not p.readonly:
        # Checked again now (the first check may be a while ago), then held: nobody may
        # mount, swapon or assemble the device while fio writes to it.
        check_block_device_writable(
            p.target,
            destructive=request.destructive,
            overwrite_signatures=request.overwrite_signatures,
        )
        state.holds.enter_context(hold_device(p.target))
    if p.layout_bytes:
        step = next(steps)
        if p.created:
            with _signals_deferred():
                _create_test_file(p.filename, p.layout_bytes)
                state.created.append(p.filename)
        direct = all(w.direct for w in request.suite.workloads)
        job = build_layout_jobfile(p.filename, p.layout_bytes, direct=direct)
        link_target(state.workdir, p.filename)
        _run_step(fio, step, job, state.workdir, obs, timeout_s=None, stall_s=stall_s)


def _run_planned(
    store: Store,
    fio: FioInfo,
    obs: Observer,
    run_id: int,
    p: PreparedTarget,
    planner: Planner,
    state: _RunState,
    timeout_margin_s: float,
) -> None:
    """Ask the planner for workloads until it has none; each one's result goes back to it."""
    done: list[ResultRecord] = []
    while (w := planner.next_workload(tuple(done))) is not None:
        # The safety checks and the test file were made for the suite's workloads.
        if (p.created and w.size > p.layout_bytes) or (w.writes and p.readonly):
            raise ValueError(f"the planner chose {w.name}, which the checks did not allow")
        step = Step(len(done), p.target.spec, w.name, expected_seconds(w), w)
        done.append(
            _run_workload(store, fio, obs, run_id, p, w, len(done), step, state, timeout_margin_s)
        )


def _run_workload(
    store: Store,
    fio: FioInfo,
    obs: Observer,
    run_id: int,
    p: PreparedTarget,
    w: Workload,
    position: int,
    step: Step,
    state: _RunState,
    timeout_margin_s: float,
) -> ResultRecord:
    """Run one workload once on one target and store the result (or the failure)."""
    assert state.workdir is not None
    job = build_jobfile(w, p.filename, p.size_of(w))
    link_target(state.workdir, p.filename)
    ctx = state.contexts.get(p.target.spec) or {}
    devices = list(ctx.get("io_devices") or [])  # the block devices that serve its IO
    disks_before = disk_snapshot(devices)
    before = cpu_times()
    try:
        run = _run_step(
            fio,
            step,
            job,
            state.workdir,
            obs,
            readonly=p.readonly,
            timeout_s=step.expected_s * 1.5 + timeout_margin_s,
        )
    except FioFailed as e:
        store.add_result(run_id, _record(p, w, position, job, step.repetition, failure=e))
        raise
    assert run.output is not None
    state.fio_version = state.fio_version or run.output.fio_version
    record = _record(p, w, position, job, step.repetition, run=run)
    host_cpu = busy(before, cpu_times())
    if record.metrics is not None:
        if host_cpu is not None:
            record.metrics["host_cpu"] = host_cpu
        # fio's own disk_util describes the disk of the link it reaches the target by.
        record.metrics["disk_util"] = disk_util(disks_before, disk_snapshot(devices))
    _check_fio_cgroup(run, p.target.spec, ctx, state)
    store.add_result(run_id, record)
    return record


def _check_fio_cgroup(run: FioRun, spec: str, ctx: dict[str, Any], state: _RunState) -> None:
    """fio inherits iobench's cgroups, and so the throttles stored with the target (``ctx``);
    say so when something placed it elsewhere, with other throttles (once per target)."""
    if run.cgroup is None or state.cgroup is None or run.cgroup == state.cgroup:
        return
    if any(f.id == "fio-cgroup" and f.target == spec for f in state.findings):
        return
    devices = ctx.get("io_devices") or []
    fio = effective(throttles_of(run.cgroup, read_text("/proc/self/mountinfo"), devices))
    stored = context_throttles(ctx)
    if fio == stored:
        return
    state.findings.append(
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


def run_findings(run: RunRecord) -> list[Finding]:
    """Findings from the measurements themselves: unstable repetitions, and what each
    workload's figures and per-second samples show (iobench.analysis.measured)."""
    found = measured_findings(run)
    for target, workload, direction, cv in unstable(run):
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


def _run_step(
    fio: FioInfo,
    step: Step,
    job: str,
    workdir: Path,
    obs: Observer,
    *,
    timeout_s: float | None,
    stall_s: float | None = None,
    readonly: bool = False,
) -> FioRun:
    obs.started(step)
    outcome = "failed"
    try:
        run = run_fio(
            fio,
            job,
            workdir,
            timeout_s=timeout_s,
            stall_s=stall_s,
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


def _record(
    p: PreparedTarget,
    w: Workload,
    position: int,
    job: str,
    repetition: int,
    *,
    run: FioRun | None = None,
    failure: FioFailed | None = None,
) -> ResultRecord:
    """The stored row of one workload on one target: its result or its failure."""
    output = run.output if run else None
    return ResultRecord(
        target=p.target.spec,
        workload=w.name,
        position=position,
        status="ok" if failure is None else "failed",
        params=dict(w.params, size=p.size_of(w)),
        metrics=workload_metrics(output) if output else None,
        job_file=job,
        fio_version=output.fio_version if output else None,
        error=failure.message if failure else None,
        repetition=repetition,
        samples=parse_interval_logs(run.logs) if run else None,
        **fio_evidence(run, failure),
    )


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


def _create_test_file(path: str, size: int) -> None:
    """Create the test file at its full (sparse) size, refusing to touch anything there.

    At full size, fio's layout job writes over it in place; a shorter file would make fio
    unlink and re-create it, replacing the link fio reaches it through.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as e:
        raise UserError(f"{path} already exists; iobench will not overwrite it") from e
    except OSError as e:
        raise UserError(
            f"cannot create the test file {path}: {e.strerror}",
            "choose a directory you may write to, or run as root",
        ) from e
    try:
        os.ftruncate(fd, size)
    except OSError as e:
        os.close(fd)
        Path(path).unlink(missing_ok=True)
        raise UserError(f"cannot size the test file {path}: {e.strerror}") from e
    os.close(fd)


def suite_definition(suite: Suite) -> dict[str, Any]:
    """The suite as it ran (after overrides), for the store."""
    return {
        "name": suite.name,
        "description": suite.description,
        "source": suite.source,
        "indicative": suite.indicative,
        "workloads": [dict(w.params, name=w.name) for w in suite.workloads],
        "expectations": [dataclasses.asdict(e) for e in suite.expectations],
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
