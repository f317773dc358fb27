"""Warnings about the method: when the way a number was measured makes it misleading.

Pure functions over the plan (suite, target facts); each finding has a stable ``id``, a
severity, a message saying what and why, and a fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from iobench.analysis.coverage import unwritten_reads
from iobench.model import Expectation, Suite, Workload, directions_of
from iobench.targets import kind_named
from iobench.units import (
    format_bytes,
    format_duration,
    format_iops,
    format_ns,
    listed,
    size_to_type,
)

Severity = Literal["info", "warning"]

# A test area smaller than this share of the device touches too little of it.
SMALL_FILE_RATIO = 0.10
# Below this, a workload's runtime is too short for steady state (unless the suite says
# its numbers are indicative anyway).
MIN_STEADY_RUNTIME_S = 30.0
# Reads of an area at least this share never written (holes, zeros) measure nothing.
UNWRITTEN_SHARE = 0.5
# What a spinning disk can do under random IO at best (a 15k rpm disk: ~2 ms a seek plus
# half a turn; a few hundred IOPS even with deep queues).
ROTATIONAL_MAX_IOPS = 500.0
ROTATIONAL_MIN_LATENCY_NS = 2e6


@dataclass(frozen=True)
class Finding:
    id: str
    severity: Severity
    message: str
    fix: str
    workload: str | None = None
    target: str | None = None
    data: dict[str, Any] | None = None  # the figures behind the message, for --json

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["data"] is None:
            del d["data"]  # most findings have none: keep their JSON as it was
        return d


@dataclass(frozen=True)
class TargetFacts:
    """What the findings need to know about one target."""

    spec: str  # as the user gave it
    path: str  # resolved, for messages
    kind: str  # directory | file | block
    test_bytes: int  # size of the test area iobench will use
    device_bytes: int | None  # size of the device under it, when known
    device_name: str | None
    ram_backed: str | None = None  # why it lives in RAM (tmpfs, zram, a loop over tmpfs)
    compressing: str | None = None  # the filesystem compresses or deduplicates: how
    rotational: str | None = None  # the disk that reports itself rotational (not virtual)
    unwritten_share: float | None = None  # of the test area, for existing files and devices
    unwritten_how: str | None = None  # holes | zeros
    prefill: bool = False  # --prefill: the area is written before the workloads
    expectations: tuple[Expectation, ...] = field(default=())
    throttles: str | None = None  # the cgroup IO throttles on its devices, as text
    throttled: frozenset[str] = frozenset()  # the directions they cap: read, write
    # Who else may write the directory iobench makes its test file in, when someone may:
    # "others (mode 0777, no sticky bit)", "user alice (its owner)" ...
    shared: str | None = None
    qos: str | None = None  # the storage's own QoS limits (an RBD image's), as text
    # Why the server of network storage runs on this very host (its address is this
    # host's): fio and the server share its CPUs and memory.
    served_here: str | None = None


def note_findings(suite: Suite) -> list[Finding]:
    """``job-file``: how a fio job file was read (its filename replaced by the target, ...)."""
    return [Finding("job-file", "info", n.message, n.fix) for n in suite.notes]


def method_findings(suite: Suite, target: TargetFacts, cpu_count: int | None) -> list[Finding]:
    """Findings about the plan; those about the suite alone have no target (the same for
    every target), those about this target name it.

    A warning is about something the user can act on. What a built-in suite is by its
    own definition (dd's buffered IO, orion-simple's 20 s points, quick's first look, the
    jobs fitted to the CPUs) is said once, as information; what the user chose (their
    suite file, --runtime, --size) is warned about."""
    found = _job_findings(suite, cpu_count)
    found.extend(note_findings(suite))
    found.extend(_buffered_findings(suite))
    small = _small_file(suite, target)
    if small is not None:
        found.append(small)
    found.extend(_runtime_findings(suite))
    found.extend(_target_findings(suite, target))
    if target.shared:
        found.append(_shared(target))
    return found


def _shared(t: TargetFacts) -> Finding:
    return Finding(
        "shared-directory",
        "warning",
        f"{t.spec} can be written by {t.shared}: they can rename, remove or replace "
        "iobench's test file while it runs. iobench writes only to the file it created (it "
        "holds it open) and stops if its name is replaced, but someone else's files there "
        "may also disturb the figures",
        "benchmark in a directory that only you may write, or one with the sticky bit "
        "(chmod +t, as /tmp has), where others cannot rename or remove your files",
        target=t.spec,
    )


def _job_findings(suite: Suite, cpu_count: int | None) -> list[Finding]:
    """``fitted-to-cpus`` (a built-in suite's jobs fitted to the CPUs, said once) and
    ``numjobs-over-cpus`` (more jobs than CPUs, in a suite the user wrote)."""
    found = _fitted(suite)
    if cpu_count:
        for w in suite.workloads:
            if w.numjobs > cpu_count:
                found.append(
                    Finding(
                        "numjobs-over-cpus",
                        "warning",
                        f"{w.name} runs {w.numjobs} jobs"
                        f"{f' (its {len(w.parts)} parts together)' if w.parts else ''} on "
                        f"{cpu_count} CPUs: the jobs compete "
                        "for CPU time, so the result may measure the CPU rather than the storage",
                        "use more iodepth and fewer jobs (numjobs <= CPU count), or a larger "
                        "machine",
                        workload=w.name,
                    )
                )
    return found


def _fitted(suite: Suite) -> list[Finding]:
    """``fitted-to-cpus``: which workloads run fewer jobs at a deeper queue, and how."""
    workloads = {w.name: w for w in suite.workloads}
    workloads |= {f"{w.name}/{p.name}": p for w in suite.workloads for p in w.parts}
    fitted = [f for f in suite.fitted if f.workload in workloads]
    if not fitted:
        return []
    groups: dict[tuple[int, int, int, int], list[str]] = {}
    for f in fitted:
        w = workloads[f.workload]
        groups.setdefault((f.numjobs, f.iodepth, w.numjobs, w.iodepth), []).append(f.workload)
    parts = []
    for (was_jobs, was_depth, jobs, depth), names in groups.items():
        was, now = was_jobs * was_depth, jobs * depth
        flight = (
            f"the same {now} IOs in flight"
            if now == was
            else f"{now} IOs in flight for the suite's {was}, as near as {jobs} jobs share them"
        )
        parts.append(
            f"{listed(names)} {'runs' if len(names) == 1 else 'run'} {jobs} "
            f"job{'s' if jobs > 1 else ''} at iodepth {depth} instead of {was_jobs} at "
            f"{was_depth} ({flight})"
        )
    cpus = fitted[0].cpus
    counts = {f.numjobs for f in fitted}
    defined = f"{counts.pop()} jobs" if len(counts) == 1 else "the suite's job counts"
    return [
        Finding(
            "fitted-to-cpus",
            "info",
            f"the {suite.name} suite is fitted to the {cpus} CPU{'s' if cpus > 1 else ''} "
            "its jobs run on here, so that they do not compete for CPU "
            f"time: {'; '.join(parts)}. The results hold what ran",
            f"nothing to do; to run {defined} anyway (to compare with a larger host), put "
            "the workloads in a suite file of your own, which iobench runs as written",
            data={"cpus": cpus},
        )
    ]


def _buffered_findings(suite: Suite) -> list[Finding]:
    """``buffered-io``: a warning per workload of a suite the user wrote; once, as
    information, for a built-in suite that is buffered by its definition (dd)."""
    buffered = [w.name for w in suite.workloads if not w.direct]
    if not buffered:
        return []
    if suite.builtin:
        return [
            Finding(
                "buffered-io",
                "info",
                f"the {suite.name} suite uses buffered IO (direct=0) in {listed(buffered)}, "
                "as its method does: reads may come from the page cache and writes land in "
                "memory first, so its numbers can exceed what the storage does",
                "for the storage's own figures, run a suite with direct IO, such as "
                "--suite standard",
            )
        ]
    return [
        Finding(
            "buffered-io",
            "warning",
            f"{name} uses buffered IO (direct=0): reads may come from the page cache "
            "and writes land in memory first, so the numbers can exceed what the "
            "storage does",
            "set `direct = true` in the suite, or make the test file much larger than RAM",
            workload=name,
        )
        for name in buffered
    ]


def _small_file(suite: Suite, target: TargetFacts) -> Finding | None:
    """``small-file``: a warning when the user chose the size (--size, their suite file);
    information when it is a built-in suite's own; nothing for an indicative built-in
    suite at its own size (its ``indicative`` finding says the area is small)."""
    if not target.device_bytes or target.test_bytes >= SMALL_FILE_RATIO * target.device_bytes:
        return None
    own = suite.iobench_made and "size" not in suite.overridden
    if own and suite.indicative:
        return None
    share = 100.0 * target.test_bytes / target.device_bytes
    device = target.device_name or "the device"
    under = kind_named(target.kind).under(target.path)
    return Finding(
        "small-file",
        "info" if own else "warning",
        f"the test area ({format_bytes(target.test_bytes)}"
        + (
            (
                f", the size the {suite.name} suite defines"
                if suite.builtin
                else f", {suite.name}'s default --size"
            )
            if own
            else ""
        )
        + f") is {share:.2g} % of {device} ({format_bytes(target.device_bytes)}){under}: "
        "random IO then touches a small part of it, where caches and locality flatter the "
        "numbers",
        f"use --size {size_to_type(SMALL_FILE_RATIO * target.device_bytes)} or more, or test "
        "the whole device",
        target=target.spec,
    )


def _short(suite: Suite) -> list[Workload]:
    """Workloads too short for a steady state. A workload with fio's steady-state detection
    (ss=) runs until its IOPS are steady, and characterize runs each point as long as its
    figure needs: their runtime is a ceiling, not a choice."""
    if suite.source == "characterize":
        return []
    return [
        w
        for w in suite.workloads
        if w.runtime_s < MIN_STEADY_RUNTIME_S and "ss" not in dict(w.options)
    ]


def _runtime_findings(suite: Suite) -> list[Finding]:
    """``indicative`` (a first look, said once), and ``short-runtime``: a warning when the
    user chose the runtime (once for --runtime, per workload of their suite file),
    information, once, when it is a built-in suite's own."""
    found: list[Finding] = []
    if suite.indicative:
        found.append(_indicative(suite))
    short = [] if suite.in_rounds else _short(suite)
    typed = "runtime" in suite.overridden
    if not short or (suite.indicative and not typed):
        return found
    steady = format_duration(MIN_STEADY_RUNTIME_S)
    why = (
        "too short for the storage to reach a steady state (caches, burst credits, SSD "
        "write cliffs)"
    )
    if typed:
        found.append(
            Finding(
                "short-runtime",
                "warning",
                f"--runtime {format_duration(short[0].runtime_s)} is {why}",
                f"use --runtime {steady} or more",
            )
        )
    elif suite.iobench_made:
        runtimes = sorted({w.runtime_s for w in short})
        found.append(
            Finding(
                "short-runtime",
                "info",
                (f"the {suite.name} suite runs " if suite.builtin else f"{suite.name} runs ")
                + (
                    ("each workload" if suite.builtin else "each point")
                    if len(short) == len(suite.workloads)
                    else listed([w.name for w in short])
                )
                + f" for {'/'.join(format_duration(r) for r in runtimes)}, "
                + ("as its method does" if suite.builtin else "its default --runtime")
                + f": {why}, so compare its numbers with runs of the same method",
                f"to measure the steady state, add --runtime {steady} or more",
            )
        )
    else:
        found.extend(
            Finding(
                "short-runtime",
                "warning",
                f"{w.name} runs for {format_duration(w.runtime_s)}: {why}",
                f"use --runtime {steady} or more",
                workload=w.name,
            )
            for w in short
        )
    return found


def _indicative(suite: Suite) -> Finding:
    """The suite's numbers are a first look: how long and on how much, once."""
    runtimes = {w.runtime_s for w in suite.workloads}
    ramps = {w.ramp_s for w in suite.workloads}
    longest, largest = max(runtimes), max(w.size for w in suite.workloads)
    runs = f"runs {'' if len(runtimes) == 1 else 'at most '}{format_duration(longest)}"
    if len(ramps) == 1 and max(ramps) > 0:
        runs += f" after a {format_duration(max(ramps))} ramp"
    area = "a test area of" if len({w.size for w in suite.workloads}) == 1 else "test areas up to"
    return Finding(
        "indicative",
        "info",
        f"the {suite.name} suite is a first look: each workload {runs} on {area} "
        f"{format_bytes(largest)}, too short for a steady state and too small to get past "
        "caches, so its numbers are indicative",
        "for numbers to quote, run --suite standard, or this suite with --runtime 60s and a "
        "larger --size",
    )


def _random(w: Workload) -> bool:
    """Random IO (a group: in any of its parts)."""
    return any(job.rw.startswith("rand") for job in w.jobs)


def _compressible(w: Workload) -> str | None:
    """How a writing workload's data (a group's: a writing part's) compresses or
    deduplicates, if it does."""
    if w.parts:
        return next((how for job in w.parts if (how := _compressible(job))), None)
    opts: Mapping[str, str] = dict(w.options)
    if not w.writes:
        return None
    if opts.get("zero_buffers") == "1":
        return "zero_buffers = 1 writes zeros"
    if int(opts.get("buffer_compress_percentage", "0") or 0) > 0:
        return f"buffer_compress_percentage = {opts['buffer_compress_percentage']}"
    if int(opts.get("dedupe_percentage", "0") or 0) > 0:
        return f"dedupe_percentage = {opts['dedupe_percentage']}"
    if opts.get("scramble_buffers") == "0" and opts.get("refill_buffers") != "1":
        return "scramble_buffers = 0 writes the same buffer again and again"
    return None


def _demanding(e: Expectation) -> bool:
    """More than a spinning disk can do under random IO."""
    if e.metric == "iops":
        return e.op in (">=", ">") and e.value > ROTATIONAL_MAX_IOPS
    if e.metric != "bw":  # a latency
        return e.op in ("<=", "<") and e.value < ROTATIONAL_MIN_LATENCY_NS
    return False


def _target_findings(suite: Suite, t: TargetFacts) -> list[Finding]:
    """Findings about what the target is: RAM, a compressor, a spinning disk, unwritten."""
    found: list[Finding] = []
    directions = {d for w in suite.workloads for d in directions_of(w) if d != "trim"}
    capped = bool(directions) and directions <= t.throttled  # every figure meets a throttle
    if t.throttles:
        found.append(
            Finding(
                "throttled",
                "info",
                f"iobench and its fio run under cgroup IO throttles on {t.spec}'s devices: "
                f"{t.throttles}. No figure can exceed them, and a figure at one of them is "
                "the throttle's, not the storage's"
                + (
                    f". Under the throttles, {t.spec} is in RAM ({t.ram_backed}): an "
                    "emulated capped volume, whose figures below the caps measure memory "
                    "and the CPU"
                    if t.ram_backed and capped
                    else ""
                ),
                "to measure the storage itself, run outside that cgroup; to measure what "
                "the container or service gets, keep it",
                target=t.spec,
            )
        )
    if t.ram_backed and not capped:
        found.append(
            Finding(
                "ram-backed",
                "warning",
                f"{t.spec} is in RAM ({t.ram_backed}): the numbers measure memory and the "
                "CPU, not storage"
                + (
                    f" (the throttles cap only its {' and '.join(sorted(t.throttled))}s)"
                    if t.throttled
                    else ""
                ),
                "test the disk or volume you mean to use, not a RAM-backed path",
                target=t.spec,
            )
        )
    if t.compressing:
        for w in suite.workloads:
            how = _compressible(w)
            if how:
                found.append(
                    Finding(
                        "compressible-data",
                        "warning",
                        f"{w.name} writes data the filesystem shrinks ({how}) to {t.spec}, "
                        f"which {t.compressing}: it measures the compressor, not the disk",
                        "drop zero_buffers, buffer_compress_percentage, dedupe_percentage "
                        "and scramble_buffers = 0 (fio then writes random, incompressible "
                        "data), or test elsewhere",
                        workload=w.name,
                        target=t.spec,
                    )
                )
    if t.rotational:
        for e in filter(_demanding, t.expectations):
            hits = [w for w in suite.workloads if _random(w) and e.workload in ("*", w.name)]
            for w in hits:
                what = (
                    f"{format_iops(e.value)} IOPS"
                    if e.metric == "iops"
                    else f"{e.metric} latency under {format_ns(e.value)}"
                )
                found.append(
                    Finding(
                        "rotational-random",
                        "warning",
                        f"{w.name} does random IO on {t.rotational}, a spinning disk, and "
                        f"{e.text} expects {what}: a disk that seeks does at most about "
                        f"{ROTATIONAL_MAX_IOPS:.0f} random IOPS and takes milliseconds each, "
                        "so the expectation fails, or a cache is answering",
                        "expect what a disk can do, or test an SSD; a RAID or a controller "
                        "cache changes the picture, say so in the label",
                        workload=w.name,
                        target=t.spec,
                    )
                )
    found.extend(_network_findings(t))
    found.extend(_unwritten_read(suite, t))
    return found


def _network_findings(t: TargetFacts) -> list[Finding]:
    """``qos-limited``: the storage caps what it serves; ``served-here``: its server runs
    on this host."""
    found = []
    if t.qos:
        found.append(
            Finding(
                "qos-limited",
                "info",
                f"{t.spec} has QoS limits of its own: {t.qos}. No figure can exceed them, and "
                "a figure at one of them is the limit's, not the cluster's",
                "to measure what the storage can do, benchmark an image without QoS limits; "
                "to measure what a VM with these limits gets, keep them",
                target=t.spec,
            )
        )
    if t.served_here:
        found.append(
            Finding(
                "served-here",
                "warning",
                f"{t.spec} is served from this very host ({t.served_here}): fio and the "
                "server share its CPUs, memory and loopback network, so the figures are "
                "neither those of a client nor of the server alone",
                "run iobench on a client machine, as the storage's users would reach it",
                target=t.spec,
            )
        )
    return found


def _unwritten_read(suite: Suite, t: TargetFacts) -> list[Finding]:
    """``unwritten-read``: every reading workload that reads blocks no workload before it
    wrote (analysis.coverage): on an area the probe found unwritten, or after a trim."""
    share = t.unwritten_share
    unwritten = share is not None and share >= UNWRITTEN_SHARE and not t.prefill
    found = unwritten_reads(suite.workloads, t.test_bytes, written=not unwritten)
    if not found:
        return []
    listed_ = ", ".join(f"{u.workload} ({u.why})" for u in found)
    if unwritten:
        how = {
            "holes": "holes of a sparse file",
            "zeros": "sampled blocks that read as zeros: never written, thin-provisioned or zeroed",
        }.get(t.unwritten_how or "zeros", t.unwritten_how)
        what = f"{share:.0%} of the test area of {t.spec} was never written ({how})"
        fix = (
            "pass --prefill to write the test area first (with --destructive: it "
            "overwrites the area), or put a sequential write of the whole area before the "
            "reads"
        )
    else:
        what = f"a trim discards blocks of the test area of {t.spec} before reads of them"
        fix = "put the trims after the reads, or a sequential write between them"
    return [
        Finding(
            "unwritten-read",
            "warning",
            f"{what}. {_read_unwritten(len(found))}: {listed_}. Reads of unwritten blocks "
            "can be answered without touching the disk, so they look far faster than real "
            "data",
            fix,
            target=t.spec,
            data={"share": share, "workloads": [u.workload for u in found]},
        )
    ]


def _read_unwritten(n: int) -> str:
    if n == 1:
        return "1 reading workload reads blocks no workload before it wrote"
    return f"{n} reading workloads read blocks no workload before them wrote"
