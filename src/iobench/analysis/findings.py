"""Warnings about the method: when the way a number was measured makes it misleading.

Pure functions over the plan (suite, target facts); each finding has a stable ``id``, a
severity, a message saying what and why, and a fix.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from iobench.model import Suite
from iobench.units import format_bytes, format_duration

Severity = Literal["info", "warning"]

# A test area smaller than this share of the device touches too little of it.
SMALL_FILE_RATIO = 0.10
# Below this, a workload's runtime is too short for steady state (unless the suite says
# its numbers are indicative anyway).
MIN_STEADY_RUNTIME_S = 30.0


@dataclass(frozen=True)
class Finding:
    id: str
    severity: Severity
    message: str
    fix: str
    workload: str | None = None
    target: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TargetFacts:
    """What the findings need to know about one target."""

    spec: str  # as the user gave it
    path: str  # resolved, for messages
    kind: str  # directory | file | block
    test_bytes: int  # size of the test area iobench will use
    device_bytes: int | None  # size of the device under it, when known
    device_name: str | None


def method_findings(suite: Suite, target: TargetFacts, cpu_count: int | None) -> list[Finding]:
    """Findings about the plan; those about the suite alone have no target (the same for
    every target), those about this target name it."""
    found: list[Finding] = []
    if cpu_count:
        for w in suite.workloads:
            if w.numjobs > cpu_count:
                found.append(
                    Finding(
                        "numjobs-over-cpus",
                        "warning",
                        f"{w.name} runs {w.numjobs} jobs on {cpu_count} CPUs: the jobs compete "
                        "for CPU time, so the result may measure the CPU rather than the storage",
                        "use more iodepth and fewer jobs (numjobs <= CPU count), or a larger "
                        "machine",
                        workload=w.name,
                    )
                )
    for w in suite.workloads:
        if not w.direct:
            found.append(
                Finding(
                    "buffered-io",
                    "warning",
                    f"{w.name} uses buffered IO (direct=0): reads may come from the page cache "
                    "and writes land in memory first, so the numbers can exceed what the "
                    "storage does",
                    "set `direct = true` in the suite, or make the test file much larger than RAM",
                    workload=w.name,
                )
            )
    if target.device_bytes and target.test_bytes < SMALL_FILE_RATIO * target.device_bytes:
        share = 100.0 * target.test_bytes / target.device_bytes
        device = target.device_name or "the device"
        under = "" if target.kind == "block" else f" under {target.path}"
        found.append(
            Finding(
                "small-file",
                "warning",
                f"the test area ({format_bytes(target.test_bytes)}) is {share:.2g} % of "
                f"{device} ({format_bytes(target.device_bytes)}){under}: random IO then "
                "touches a small part of it, where caches and locality flatter the numbers",
                f"use --size of at least {format_bytes(SMALL_FILE_RATIO * target.device_bytes)},"
                " or test the whole device",
                target=target.spec,
            )
        )
    if suite.indicative:
        longest = max(w.runtime_s for w in suite.workloads)
        found.append(
            Finding(
                "short-runtime",
                "info",
                f"the {suite.name} suite runs each workload for at most "
                f"{format_duration(longest)}: its numbers are indicative, a first look",
                "use --suite standard (or --runtime 60s) for numbers to quote",
            )
        )
    else:
        # A workload with fio's steady-state detection (ss=, characterize) runs until its
        # IOPS are steady: its runtime is a ceiling, not a choice.
        short = [
            w
            for w in suite.workloads
            if w.runtime_s < MIN_STEADY_RUNTIME_S and "ss" not in dict(w.options)
        ]
        for w in short:
            found.append(
                Finding(
                    "short-runtime",
                    "warning",
                    f"{w.name} runs for {format_duration(w.runtime_s)}: too short for the "
                    "storage to reach a steady state (caches, burst credits, SSD write "
                    "cliffs)",
                    f"use --runtime {format_duration(MIN_STEADY_RUNTIME_S)} or more",
                    workload=w.name,
                )
            )
    return found
