"""Before a run on this host: every target resolved, checked and prepared, host and
targets probed, a provider spec resolved, and the method's findings, without writing
anything. ``iobench doctor`` shows this; ``run`` does it before it opens the database."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iobench.analysis.coverage import unwritten_reads
from iobench.analysis.findings import Finding, TargetFacts, method_findings
from iobench.analysis.measured import spinning_disk
from iobench.analysis.throttles import cgroup_throttle_text, qos_text, throttled_directions
from iobench.cpus import online_cpus
from iobench.engine.modes import Repeat, upfront_steps
from iobench.engine.request import RunRequest
from iobench.engine.steps import Step, layout_steps, precondition_steps
from iobench.errors import TargetUnsafe, UserError
from iobench.model import CLIENT_FIELD, Precondition, Suite, Target, Workload
from iobench.probe import probe_host
from iobench.probe.context import Storage
from iobench.specs import Promise, Volume, spec_expectations
from iobench.specs import resolve as resolve_spec
from iobench.suites.fit import fit_to_cpus
from iobench.suites.pin import (
    Pinning,
    check_jobs,
    pin_findings,
    pinning,
    placed,
    rq_affinity_findings,
)
from iobench.targets import (
    Plan,
    Reach,
    check_engines,
    check_free_space,
    check_precondition,
    kind_of,
    resolve_target,
    shared_with,
)
from iobench.targets.purge import NO_PURGE, Purge
from iobench.units import format_bytes


@dataclass(frozen=True)
class PreparedTarget:
    target: Target
    filename: str  # the file or device fio reads and writes
    created: bool  # iobench creates (and removes) this file
    layout_bytes: int  # how much to write before the workloads (0: none)
    size_limit: int | None  # the file's or device's size (None: a test file of our own)
    readonly: bool
    pin: Pinning | None = None  # --pin-to-device: the CPUs of the target's queues
    # What the checks were made on (targets.identity): the run uses that very directory,
    # file or device, or stops.
    identity: tuple[int, int] | None = None
    plan: Plan | None = None  # what the target was checked for (its kind's check)
    purge: Purge | None = None  # a precondition's purge of the test area (its kind's)

    @property
    def reach(self) -> Reach:
        """How fio on this host reaches the target."""
        return kind_of(self.target).reach(self.target, self.filename)

    def size_of(self, w: Workload) -> int:
        """The test area of a workload on this target."""
        return w.area(self.size_limit)

    def placed(self, w: Workload) -> Workload:
        """The workload as it runs on this target: pinned with --pin-to-device, its test
        area (each part's of a group) capped at the file's or device's size."""
        return placed(w, self.pin).each_job(
            lambda job: dataclasses.replace(job, size=self.size_of(job))
        )


def prepare_target(
    target: Target, suite: Suite, request: RunRequest, protected: Sequence[str] = ()
) -> PreparedTarget:
    """Decide file name and sizes for a target and apply every safety rule. Writes nothing.

    ``protected`` are files that must never be written (the results database).
    """
    kind = kind_of(target)
    checked = kind.identity(target)
    prepared = _checked(target, suite, request, protected)
    if kind.identity(target) != checked:
        raise TargetUnsafe(
            f"{target.spec} changed while iobench checked it (its path now leads to another "
            f"{target.kind})",
            "make sure nobody else changes it, then run again",
        )
    return dataclasses.replace(prepared, identity=checked)


def _checked(
    target: Target, suite: Suite, request: RunRequest, protected: Sequence[str]
) -> PreparedTarget:
    """:func:`prepare_target` without the identity: the target's kind checks and
    prepares it."""
    plan = Plan(
        suite,
        prefill=request.prefill,
        destructive=request.destructive,
        overwrite_signatures=request.overwrite_signatures,
        protected=tuple(protected),
        precondition=request.precondition,
    )
    kind = kind_of(target)
    check_engines(target, suite)
    kind.check(target, plan)
    p = kind.prepare(target, plan)
    purge = None
    if request.precondition is not None:
        _check_fill(target, p.layout_bytes, request.precondition)
        purge = kind.purge(target) if request.precondition.purge else NO_PURGE
    return PreparedTarget(
        target, p.filename, p.created, p.layout_bytes, p.size_limit, p.readonly, plan=plan,
        purge=purge,
    )  # fmt: skip


def _check_fill(target: Target, area: int, pre: Precondition) -> None:
    """UserError when the fill cannot write one block of the test area (fio would refuse
    it after the purge)."""
    if area < pre.bs:
        raise UserError(
            f"{target.spec}: its test area ({format_bytes(area)}) is smaller than the "
            f"precondition's block size ({format_bytes(pre.bs)})",
            "give a larger target (or --size), or a smaller --bs",
        )


def size_notes(target: Target, suite: Suite, limit: int | None) -> list[Finding]:
    """``size-capped``: the workloads whose test area the file's or device's size caps."""
    capped = [
        w.name
        for w in suite.workloads
        if limit is not None and any(j.size_share is None and j.size > limit for j in w.jobs)
    ]
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


def engine_notes(target: Target, suite: Suite) -> list[Finding]:
    """``engine-replaced``: the target's own engine (fio's nbd, rbd) runs every workload
    instead of the suite's."""
    engine = kind_of(target).engine
    replaced = sorted({j.ioengine for w in suite.workloads for j in w.jobs} - {engine})
    if engine is None or not replaced:
        return []
    return [
        Finding(
            "engine-replaced",
            "info",
            f"fio's {engine} engine reaches {target.spec}: it runs every workload instead of "
            f"the suite's {', '.join(replaced)} (the shapes, depths and jobs stay the suite's)",
            "nothing to do: a network target is reached only by its own engine",
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


@dataclass(frozen=True)
class Preflight:
    """Everything decided before a run on this host starts: what ``iobench doctor`` shows."""

    suite: Suite  # with the spec's expectations added
    targets: list[Target]
    prepared: list[PreparedTarget]
    contexts: list[dict[str, Any]]
    host: dict[str, Any]
    promise: Promise | None
    findings: list[Finding]
    facts: list[TargetFacts]  # what the findings were made from, one per target
    placement: list[Finding] = dataclasses.field(default_factory=list)  # --pin-to-device's
    precondition: Precondition | None = None  # --precondition: what is done first

    def layout_steps(self) -> list[Step]:
        """The steps before the workloads: test files laid out (or areas prefilled), or
        each target's precondition (its purge and fill)."""
        if self.precondition is not None:
            return precondition_steps(
                [
                    (p.target.spec, p.purge or NO_PURGE, p.layout_bytes)
                    for p in self.prepared
                    if p.layout_bytes
                ],
                self.precondition,
            )
        return layout_steps(
            [
                (p.target.spec, "lay out test file" if p.created else "prefill the test area",
                 p.layout_bytes)
                for p in self.prepared
                if p.layout_bytes
            ]
        )  # fmt: skip

    def schedule(self, repeat: int = 1) -> list[Step]:
        """The steps: test files laid out (or areas prefilled), then ``repeat`` rounds of
        every workload on every target."""
        layouts = self.layout_steps()
        specs = [p.target.spec for p in self.prepared]
        return layouts + upfront_steps(Repeat(self.suite, repeat), specs, len(layouts))

    def context_of(self, spec: str) -> dict[str, Any]:
        """The probed context of the target named ``spec`` (empty when unknown)."""
        for t, ctx in zip(self.targets, self.contexts, strict=True):
            if t.spec == spec:
                return ctx
        return {}

    def findings_for(self, ran: set[str]) -> list[Finding]:
        """The plan's findings as if the suite had held only the workloads in ``ran``
        (an interrupted run speaks only of what ran; nothing when nothing ran)."""
        suite = self.suite.only(ran)
        if not suite.workloads:
            return []
        return findings_from_facts(self.prepared, self.facts, suite, self.host) + [
            f for f in self.placement if f.workload is None or f.workload in ran
        ]


def protected_paths(db: Path) -> list[str]:
    """The results database's files: never a target."""
    return [str(db), f"{db}-wal", f"{db}-shm"]


def preflight(request: RunRequest, protected: Sequence[str] = ()) -> Preflight:
    """Resolve and check every target, probe host and targets, resolve the spec, and find
    what is wrong with the method. Writes nothing; raises before anything could run."""
    suite = request.suite
    for spec in request.targets:
        if request.precondition is not None:
            check_precondition(spec)  # network storage: said before a server is asked
        if CLIENT_FIELD in spec:
            raise UserError(
                f"{spec}: {CLIENT_FIELD} names each client's own storage, and there are no "
                "clients here",
                "run it with --clients HOST,HOST..., or name the storage itself",
            )
    targets = [resolve_target(spec, request.access) for spec in request.targets]
    seen: dict[str, str] = {}
    for typed, t in zip(request.targets, targets, strict=True):
        if t.path in seen:
            raise UserError(f"{typed} and {seen[t.path]} are the same target ({t.path})")
        seen[t.path] = typed
    prepared = [prepare_target(t, suite, request, protected) for t in targets]
    check_space(prepared)
    host = probe_host()
    contexts = [kind_of(t).capture(t) for t in targets]
    pins = _pins(request, contexts)
    # A built-in suite runs no more jobs than this host has CPUs (the user did not write it),
    # nor, pinned, than the CPUs of a target's queues.
    cpus = min([len(pin.cpus) for pin in pins if pin], default=host_cpu_count(host))
    suite = fit_to_cpus(suite, cpus)
    placement: list[Finding] = []
    for i, pin in enumerate(pins):
        if pin is not None:
            check_jobs(suite, pin)
            prepared[i] = dataclasses.replace(prepared[i], pin=pin)
            placement += pin_findings(suite, pin) + rq_affinity_findings(pin.target, contexts[i])
    promise = None
    if request.spec:
        promise = resolve_spec(
            request.spec, request.spec_params, _volume(prepared, contexts, host, request)
        )
        suite = dataclasses.replace(
            suite, expectations=(*suite.expectations, *spec_expectations(promise, suite))
        )
    written = request.prefill or request.precondition is not None  # before the workloads
    facts = [
        target_facts(p, ctx, suite, host, prefill=written)
        for p, ctx in zip(prepared, contexts, strict=True)
    ]
    findings = findings_from_facts(prepared, facts, suite, host) + placement
    return Preflight(
        suite, targets, prepared, contexts, host, promise, findings, facts, placement,
        request.precondition,
    )  # fmt: skip


def _pins(request: RunRequest, contexts: Sequence[dict[str, Any]]) -> list[Pinning | None]:
    """--pin-to-device: each target's pinning (raises when a target has nothing to pin to)."""
    if not request.pin_to_device:
        return [None] * len(contexts)
    return [pin_for(spec, ctx) for spec, ctx in zip(request.targets, contexts, strict=True)]


def pin_for(spec: str, context: dict[str, Any]) -> Pinning:
    """The pinning of the target ``spec`` from its probed context, over the CPUs fio may
    run on here (online and in iobench's affinity); UserError when it has no queues."""
    usable = frozenset(os.sched_getaffinity(0)) & (online_cpus() or frozenset(range(1 << 13)))
    return pinning(spec, context, usable)


def _volume(
    prepared: Sequence[PreparedTarget],
    contexts: Sequence[dict[str, Any]],
    host: dict[str, Any],
    request: RunRequest,
) -> Volume:
    """The volume a spec is resolved for: the device under the target(s)."""
    sizes = {
        kind_of(p.target).device_under(p.target, Storage.of(ctx))[0]
        for p, ctx in zip(prepared, contexts, strict=True)
    }
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
    """The plan's findings about the method (pure: from facts gathered once); none for a
    suite without workloads (``iobench precondition``), which measures nothing."""
    findings: list[Finding] = []
    if not suite.workloads:
        return findings
    for p, target in zip(prepared, facts, strict=True):
        findings.extend(engine_notes(p.target, suite))
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
    kind = kind_of(p.target)
    dev_bytes, dev_name = kind.device_under(p.target, Storage.of(ctx))
    area = max((p.size_of(w) for w in suite.workloads), default=p.layout_bytes)
    unwritten = None
    if not p.created and not prefill and unwritten_reads(suite.workloads, area, written=False):
        unwritten = kind.unwritten(p.target, p.filename, area)  # some read may hit it
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
        throttles=cgroup_throttle_text(ctx),
        qos=qos_text(ctx),
        throttled=frozenset(throttled_directions(ctx)),
        served_here=ctx.get("served_here") if isinstance(ctx.get("served_here"), str) else None,
        shared=shared_with(p.target) if p.created else None,
    )


def compressing_why(ctx: dict[str, Any]) -> str | None:
    """How the target's filesystem compresses or deduplicates what is written."""
    fs = Storage.of(ctx).filesystem
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


def host_cpu_count(host: dict[str, Any]) -> int | None:
    """CPUs this process may use (affinity), else the online count, from the host probe."""
    cpu = host.get("cpu") or {}
    count = cpu.get("usable") or cpu.get("online")
    return int(count) if count else None
