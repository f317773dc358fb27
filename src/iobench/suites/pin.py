"""``--pin-to-device``: fio's jobs pinned to the CPUs that serve the target's blk-mq queues,
as the cloud-disk guide's script does it (the UCloud RSSD field report).

That script reads /sys/block/DEV/mq/*/cpu_list, takes the first CPU of every queue, then
the second of every queue, and so on, leaves out the first (CPU 0), checks that numjobs
is no more than the CPUs, and runs fio with ``cpus_allowed=LIST`` and
``cpus_allowed_policy=split``: one job per CPU, spread over the queues. iobench does the
same from the probed context (``queues``, iobench.probe.queues), keeping CPU 0 only
when there are not enough CPUs without it, and never touching a workload whose suite
placed it already. Pure: data in, workloads and findings out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iobench.analysis.findings import Finding
from iobench.cpus import format_cpu_list, parse_cpu_list
from iobench.errors import UserError
from iobench.model import Suite, Workload, group

HINT = "leave out --pin-to-device"
# What the note of a pinned run offers: pinning is what was asked for, not a fault.
PINNED_FIX = (
    "nothing to do: compare with runs pinned alike; to let the kernel place fio's jobs "
    "instead, leave out --pin-to-device"
)
EXPLICIT = ("cpus_allowed", "cpumask")  # a workload with one of these is placed already


def placed_already(w: Workload) -> bool:
    """The workload's suite places its jobs itself (cpus_allowed or cpumask)."""
    return any(key in dict(w.options) for key in EXPLICIT)


@dataclass(frozen=True)
class Pinning:
    """The CPUs of a target's blk-mq queues, in the order the guide's script takes them."""

    target: str  # as the user named it
    devices: tuple[str, ...]  # the kernel names whose queues these are
    queues: int  # how many hardware queues they have
    cpus: tuple[int, ...]  # first CPU of each queue, then the second of each, ...
    queue_cpus: str  # every CPU of the queues, online or not ("0-3")

    def for_jobs(self, numjobs: int) -> tuple[int, ...]:
        """The CPUs of ``numjobs`` jobs: the first ``numjobs`` without CPU 0 when there
        are enough, else with it; fewer than ``numjobs`` only when there are not enough."""
        without_0 = tuple(c for c in self.cpus if c != 0)
        pool = without_0 if len(without_0) >= numjobs else self.cpus
        return pool[:numjobs]


def pinning(spec: str, context: dict[str, Any], usable: frozenset[int] | None) -> Pinning:
    """The pinning for a target from its probed context; ``usable``: the CPUs fio's jobs
    may run on here (online, in iobench's affinity). Raises UserError naming the target
    when there are no queues or no usable CPU among theirs."""
    queues = context.get("queues")
    if not isinstance(queues, dict):
        why = context.get("error") or "its blk-mq queues could not be read"
        raise UserError(f"--pin-to-device: {spec}: {why}", HINT)
    devices = [d for d in queues.get("devices") or [] if isinstance(d, dict)]
    if not devices:
        note = queues.get("note") or "no blk-mq queues"
        raise UserError(f"--pin-to-device: {spec} has nothing to pin to: {note}", HINT)
    lists: list[list[int]] = []
    for d in devices:
        for q in d.get("hw_queues") or []:
            lists.append(sorted(parse_cpu_list(q["cpus"])) if q.get("cpus") else [])
    order: list[int] = []
    for i in range(max((len(cpus) for cpus in lists), default=0)):
        order.extend(cpus[i] for cpus in lists if i < len(cpus) and cpus[i] not in order)
    names = tuple(str(d.get("kname")) for d in devices)
    every = format_cpu_list(order)
    kept = tuple(c for c in order if usable is None or c in usable)
    if not kept:
        raise UserError(
            f"--pin-to-device: none of the CPUs of {_queues_of(names)} ({every or 'none'}) "
            f"is one fio may run on here ({format_cpu_list(usable or ())})",
            HINT,
        )
    return Pinning(spec, names, len(lists), kept, every)


def _queues_of(devices: Sequence[str]) -> str:
    return f"{' and '.join(devices)}'s blk-mq queues"


def placed(w: Workload, pin: Pinning | None) -> Workload:
    """``w`` with ``cpus_allowed`` and ``cpus_allowed_policy=split`` from ``pin``; as it is
    without a pin or when its suite places it (cpus_allowed or cpumask). A policy the
    suite set is kept. The parts of a group that the suite does not place share the CPUs
    of their jobs together, each part the next of them."""
    if pin is None:
        return w
    cpus = pin.for_jobs(_pinned_jobs(w))
    parts = []
    for job in w.jobs:
        if placed_already(job):
            parts.append(job)
            continue
        mine, cpus = cpus[: job.numjobs] or pin.for_jobs(job.numjobs), cpus[job.numjobs :]
        added = [("cpus_allowed", format_cpu_list(mine))]
        if "cpus_allowed_policy" not in dict(job.options):
            added.append(("cpus_allowed_policy", "split"))
        parts.append(dataclasses.replace(job, options=(*job.options, *added)))
    return group(w.name, parts) if w.parts else parts[0]


def _pinned_jobs(w: Workload) -> int:
    """The jobs of ``w`` that a pin places (those of the parts its suite does not)."""
    return sum(job.numjobs for job in w.jobs if not placed_already(job))


def check_jobs(suite: Suite, pin: Pinning) -> None:
    """As the guide's script: no workload it pins (a group: its jobs together) runs more
    jobs than the CPUs it has."""
    over = [w for w in suite.workloads if _pinned_jobs(w) > len(pin.cpus)]
    if over:
        runs = ", ".join(f"{w.name} runs {_pinned_jobs(w)}" for w in over[:4])
        more = f" (and {len(over) - 4} more)" if len(over) > 4 else ""
        n = len(pin.cpus)
        raise UserError(
            f"--pin-to-device: {pin.target}: {runs} jobs{more}, but {n} CPU"
            f"{'' if n == 1 else 's'} ({format_cpu_list(pin.cpus)}) serve "
            f"{_queues_of(pin.devices)}: pinned one job per CPU, jobs would share CPUs",
            f"lower numjobs to {n} or fewer (and raise iodepth to keep the IOs in flight), "
            f"or {HINT}",
        )


def pin_findings(suite: Suite, pin: Pinning) -> list[Finding]:
    """``pinned-to-device``: where each workload's jobs run (and whose placement won)."""
    groups: dict[str, list[str]] = {}
    kept: list[str] = []
    for w in suite.workloads:
        for job, pinned in zip(w.jobs, placed(w, pin).jobs, strict=True):
            name = f"{w.name}/{job.name}" if w.parts else w.name
            opts = dict(pinned.options)
            if placed_already(job):
                keys = (*EXPLICIT, "cpus_allowed_policy")
                own = "; ".join(f"{k}={opts[k]}" for k in keys if k in opts)
                kept.append(f"{name} ({own})")
                continue
            shown = f"cpus_allowed={opts['cpus_allowed']}"
            if opts["cpus_allowed_policy"] != "split":  # the suite's own policy
                shown += f" (cpus_allowed_policy={opts['cpus_allowed_policy']})"
            groups.setdefault(shown, []).append(name)
    n = pin.queues
    parts = [f"{shown} for {', '.join(names)}" for shown, names in groups.items()]
    if kept:
        parts.append(f"the suite's own placement kept for {', '.join(kept)}")
    message = (
        f"fio's jobs pinned to the CPUs of {_queues_of(pin.devices)} ({n} queue"
        f"{'' if n == 1 else 's'}, CPUs {pin.queue_cpus}) with cpus_allowed_policy=split, one job "
        "per CPU and CPU 0 left out where there are enough, as the cloud-disk guide does it: "
        f"{'; '.join(parts)}"
    )
    data = {"devices": ",".join(pin.devices), "cpus": format_cpu_list(pin.cpus)}
    return [Finding("pinned-to-device", "info", message, PINNED_FIX, target=pin.target, data=data)]


def rq_affinity_findings(spec: str, context: dict[str, Any]) -> list[Finding]:
    """``rq-affinity``: the guide sets rq_affinity=2 with its pinning; iobench never
    writes sysfs, so it says so with the command, for each queue device set otherwise."""
    found = []
    for d in (context.get("queues") or {}).get("devices") or []:
        value, kname = d.get("rq_affinity"), d.get("kname")
        if value is None or value == 2 or not kname:
            continue
        found.append(
            Finding(
                "rq-affinity",
                "info",
                f"{kname}'s rq_affinity is {value}: the kernel completes an IO "
                + (
                    "on whichever CPU takes the interrupt"
                    if value == 0
                    else "on a CPU that shares a cache with the one that submitted it"
                )
                + "; the cloud-disk guide sets 2, completing it on that very CPU, so each "
                "pinned job also reaps its own IOs. iobench never writes sysfs",
                f"as root: echo 2 > /sys/block/{kname}/queue/rq_affinity (until the next "
                f"reboot; echo {value} to put it back)",
                target=spec,
            )
        )
    return found
