"""Findings from the measurements themselves, after a run (docs/findings.md). Pure.

- ``cache-suspected``: latency below what the storage can physically do: under 5 µs
  (memory answered), or random reads faster than a spinning disk can seek.
- ``over-ceiling``: throughput above what the device's link carries (SATA, a PCIe link, a
  spinning disk's media rate, a network filesystem's fastest network link); not in a VM,
  whose disks' links are emulated.
- ``throughput-drop``: per-second IOPS that step down by 30 % or more mid-run, for 3 s or
  more: burst credits running out, a throttle, an SSD's write cache filling. Reports the
  burst and the sustained level, when it dropped (within the second) and, where seen, the
  other steps and when it came back (iobench.analysis.drops finds it).
- ``unstable-samples``: per-second IOPS that vary a lot (coefficient of variation), when
  no drop explains it.
- ``fio-cpu-bound``: fio's jobs busy near a full CPU, or a host busy near all its CPUs
  mostly with fio's work (and the kernel threads doing its IO): the CPU, not the storage,
  set the number.
- ``host-busy``: a host busy near all its CPUs with other work, named: the figures may be
  lower than the storage allows.
- ``io-merging``: the block layer merged many IOs of a sequential workload: the device
  saw fewer, larger IOs than the block size says.
- ``fio-counts-differ``, ``bytes-per-io``: fio's counts of IOs (iobench.analysis.iocounts).

Each finding is made once per workload and target (the first repetition that shows it
speaks for the others).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from iobench.analysis.cpuload import (
    HOST_BOUND_PCT,
    Load,
    busy_data,
    fio_share_text,
    load_of,
    other_work_text,
)
from iobench.analysis.drops import Drop, detect_drop
from iobench.analysis.findings import Finding
from iobench.analysis.iocounts import bytes_per_io, counts_differ
from iobench.analysis.results import headline, metric_value
from iobench.analysis.throttles import at_throttle
from iobench.model import DIRECTIONS
from iobench.probe.context import Storage
from iobench.records import ResultRecord, RunRecord, TargetRecord
from iobench.units import format_bytes, format_iops, format_ns, format_rate

MEMORY_LATENCY_NS = 5_000.0  # no storage device answers an IO in under 5 µs
SEEK_LATENCY_NS = 1_000_000.0  # a spinning disk's random read takes more than 1 ms
CEILING_MARGIN = 1.05  # throughput this far above a ceiling is beyond doubt
SATA_BYTES_PER_S = 600e6  # SATA 6 Gb/s after 8b/10b encoding
HDD_BYTES_PER_S = 350e6  # the fastest spinning disks' media rate is below this
UNSTABLE_CV = 0.20  # per-second IOPS varying more than this are unstable
MIN_SAMPLES = 6
CPU_BOUND_PCT = 90.0  # fio's usr+sys per job, % of one CPU
MERGE_SHARE = 0.30  # merged IOs as a share of all the IOs the workload issued
VIRTUAL_TRANSPORTS = frozenset({"virtio", "xen", "vmbus", "hyperv"})


def _cv(vs: Sequence[float]) -> float:
    m = statistics.fmean(vs)
    return statistics.pstdev(vs) / m if m else 0.0


# -- facts about a target, from its stored context -----------------------------------------------


@dataclass(frozen=True)
class Ceiling:
    bytes_per_s: float
    what: str
    # Carries its rate in each direction at once (PCIe, Ethernet): the busier direction is
    # compared with it; a half-duplex link (SATA) carries reads and writes together.
    duplex: bool


def in_vm(host: dict[str, Any]) -> bool:
    """The host is a virtual machine: its disks' links and rotational flags are what the
    hypervisor emulates, not the hardware's."""
    vm = (host.get("virtualization") or {}).get("vm")
    return vm not in (None, "none")


def ram_backed(t: TargetRecord) -> bool:
    """As probed (``ram_backed``: tmpfs, a RAM disk, a loop device over RAM); runs stored
    before that field existed: from the filesystem and the disks' names."""
    ctx = t.context or {}
    storage = Storage.of(ctx)
    return bool(ctx.get("ram_backed") or storage.filesystem.get("ram_backed")) or any(
        str(d.get("kname") or "").startswith(("zram", "ram")) for d in storage.disks
    )


def spinning_disk(ctx: dict[str, Any], host: dict[str, Any]) -> str | None:
    """The disk under the target when it reports itself rotational, on real hardware (a
    virtual disk's rotational flag says nothing)."""
    if in_vm(host):
        return None
    for d in Storage.of(ctx).disks:
        if d.get("rotational") and d.get("transport") not in VIRTUAL_TRANSPORTS:
            return str(d.get("path") or d.get("kname"))
    return None


def ceiling(ctx: dict[str, Any], host: dict[str, Any]) -> Ceiling | None:
    """The most the target's path can carry, where iobench can tell for sure."""
    storage = Storage.of(ctx)
    fs = storage.filesystem
    if fs.get("network") and fs.get("link_bytes_per_s"):
        return Ceiling(float(fs["link_bytes_per_s"]), "the host's fastest network link", True)
    disks = storage.disks
    if len(disks) != 1 or in_vm(host):
        # Several disks (RAID, LVM over many) add up; in a VM the guest sees emulated links.
        return None
    d = disks[0]
    name = d.get("path") or d.get("kname")
    transport = d.get("transport")
    found: list[Ceiling] = []
    if d.get("link_bytes_per_s"):
        found.append(Ceiling(float(d["link_bytes_per_s"]), f"the PCIe link of {name}", True))
    elif transport in ("sata", "ata"):
        found.append(Ceiling(SATA_BYTES_PER_S, f"the SATA link of {name} (6 Gb/s)", False))
    # Only a disk attached as SATA or USB is surely one spinning disk: a hardware RAID
    # volume shows as one SCSI or SAS disk that reports itself rotational.
    if d.get("rotational") and transport in ("sata", "ata", "usb"):
        found.append(Ceiling(HDD_BYTES_PER_S, f"what the spinning disk {name} can read", False))
    return min(found, key=lambda c: c.bytes_per_s) if found else None


# -- the findings -------------------------------------------------------------------------------


def _groups(run: RunRecord) -> Iterator[tuple[TargetRecord | None, str, list[ResultRecord]]]:
    """(target, workload, its ok results) for one host or the clients' aggregate."""
    by: dict[tuple[str, str], list[ResultRecord]] = {}
    for r in run.results:
        if r.status == "ok" and r.metrics and headline(r):
            by.setdefault((r.target, r.workload), []).append(r)
    targets = {t.spec: t for t in run.targets}
    for (target, workload), rs in by.items():
        yield targets.get(target), workload, rs


def measured_findings(run: RunRecord) -> list[Finding]:
    found: list[Finding] = []
    for t, workload, rs in _groups(run):
        where = {"workload": workload, "target": rs[0].target}
        for check in (_cache, _ceiling, _samples, _cpu, _merging, _throttle, *_COUNTS):
            hits = [f for r in rs if (f := check(t, r, run)) is not None]
            if hits:
                f = hits[0]
                suffix = f" (in {len(hits)} of {len(rs)} repetitions)" if len(rs) > 1 else ""
                found.append(
                    Finding(f.id, f.severity, f.message + suffix, f.fix, **where, data=f.data)
                )
    return found


def _counts_differ(t: TargetRecord | None, r: ResultRecord, run: RunRecord) -> Finding | None:
    return counts_differ(r)


def _bytes_per_io(t: TargetRecord | None, r: ResultRecord, run: RunRecord) -> Finding | None:
    return bytes_per_io(r)


_COUNTS = (_counts_differ, _bytes_per_io)


def _cache(t: TargetRecord | None, r: ResultRecord, run: RunRecord) -> Finding | None:
    if t is None or ram_backed(t):
        return None  # a RAM-backed target has its own warning before the run
    for d in DIRECTIONS:
        p50 = metric_value(r.metrics, d, "p50")
        if p50 is not None and p50 < MEMORY_LATENCY_NS:
            return Finding(
                "cache-suspected",
                "warning",
                f"{r.workload} on {r.target}: half its {d}s took under {format_ns(p50)}, "
                "faster than any storage device answers: a cache in memory (the page cache, "
                "a controller's or the hypervisor's) did",
                "use direct IO (direct = true), a test area larger than the caches, or "
                "drop caches before the run",
                workload=r.workload,
            )
    disk = spinning_disk(t.context or {}, run.host)
    if disk and str(r.params.get("rw", "")).startswith("rand"):
        p50 = metric_value(r.metrics, "read", "p50")
        if p50 is not None and p50 < SEEK_LATENCY_NS:
            return Finding(
                "cache-suspected",
                "warning",
                f"{r.workload} on {r.target}: half its random reads took under "
                f"{format_ns(p50)}, but {disk} is a spinning disk that needs milliseconds to "
                "seek: a cache answered (the page cache, a RAID controller's), or the test "
                "area is small enough to stay under the heads",
                "use a test area much larger than the caches (--size), direct IO, and label "
                "the cache if it is part of what you test",
            )
    return None


def _bw(r: ResultRecord) -> dict[str, float]:
    return {
        d: float(((r.metrics or {}).get(d) or {}).get("bw_bytes") or 0)
        for d in DIRECTIONS
        if (r.metrics or {}).get(d)
    }


def _ceiling(t: TargetRecord | None, r: ResultRecord, run: RunRecord) -> Finding | None:
    if t is None:
        return None
    c = ceiling(t.context or {}, run.host)
    by = _bw(r)
    if c is None or not by:
        return None
    if c.duplex:
        direction, bw = max(by.items(), key=lambda kv: kv[1])
        moved = f"{direction} {format_rate(bw)}" if len(by) > 1 else format_rate(bw)
    else:
        bw = sum(by.values())
        moved = format_rate(bw) + (" in all directions together" if len(by) > 1 else "")
    if bw <= CEILING_MARGIN * c.bytes_per_s:
        return None
    return Finding(
        "over-ceiling",
        "warning",
        f"{r.workload} on {r.target} moved {moved}, more than {c.what} carries "
        f"({format_rate(c.bytes_per_s)}): part of it came from a cache, not the storage",
        "use direct IO and a test area larger than the caches; on NFS, mount with "
        "noac/lookupcache=none or use a file larger than the client's memory",
    )


def _series(r: ResultRecord) -> tuple[list[float], list[float | None]] | None:
    """Per-second IOPS of all directions together."""
    s = r.samples or {}
    per = [s[d] for d in DIRECTIONS if isinstance(s.get(d), dict)]
    if not per:
        return None
    t_s = per[0]["t_s"]
    values: list[float | None] = []
    for i in range(len(t_s)):
        parts: list[float | None] = [p["iops"][i] if i < len(p["iops"]) else None for p in per]
        values.append(None if any(v is None for v in parts) else sum(v or 0.0 for v in parts))
    return list(t_s), values


def _samples(t: TargetRecord | None, r: ResultRecord, run: RunRecord) -> Finding | None:
    series = _series(r)
    if series is None:
        return None
    t_s, values = series
    drop = detect_drop(t_s, values)
    if drop is not None:
        # Its levels are steady: the step between them is what varied, not the storage
        # from second to second, so no unstable-samples beside it.
        return Finding(
            "throughput-drop",
            "warning",
            f"{r.workload} on {r.target}: {drop_text(drop)}. The burst figure is "
            f"{format_iops(drop.before)}, the sustained one {format_iops(drop.after)}"
            + burst_model_text(run, drop, _bs(r)),
            "quote the sustained figure; run long enough to see the drop (and the burst "
            "budget's refill) in every test",
            data=drop_data(drop),
        )
    vs = [v for v in values if v is not None]
    if len(vs) >= MIN_SAMPLES and _cv(vs) > UNSTABLE_CV:
        return Finding(
            "unstable-samples",
            "warning",
            f"{r.workload} on {r.target}: IOPS varied from second to second by "
            f"{_cv(vs):.0%} (coefficient of variation; {format_iops(min(vs))} to "
            f"{format_iops(max(vs))}): the mean hides what the storage did",
            "look at the timeline in the report; look for other load, a throttle or garbage "
            "collection, and run longer",
        )
    return None


def drop_text(drop: Drop) -> str:
    """The levels and steps of a drop, in order: "6.00k IOPS for the first 6.43 s, then
    1.50k IOPS for the last 8 s (75% lower): a burst that ended (...)"."""
    burst = format_iops(drop.before)
    if drop.from_s > 0:
        parts = [f"{burst} IOPS from {drop.from_s:g} s to {drop.at_s:g} s"]
    else:
        parts = [f"{burst} IOPS for the first {drop.at_s:g} s"]
    lower = f" ({1 - drop.after / drop.before:.0%} lower)"
    said = False  # the sustained level's length and share said
    for n, step in enumerate(drop.steps):
        when = f" from {step.at_s:g} s" if n else ""
        if step.at_s == drop.recovered_at_s:
            parts.append(f"back to {format_iops(step.after)} IOPS{when}")
            break
        text = f"then {format_iops(step.after)} IOPS{when}"
        if not said and step.after == drop.after:
            last = "the last " if drop.lasts_to_end else ""
            text += f" for {last}{drop.seconds_after} s{lower}"
            said = True
        parts.append(text)
    why = (
        "a burst that ended and came back (burst credits that ran out and refilled, a "
        "throttle lifted, a write cache that filled up and flushed)"
        if drop.recovered_at_s is not None
        else "a burst that ended (burst credits, a throttle, a write cache filling up)"
    )
    return ", ".join(parts) + ": " + why


def drop_data(drop: Drop) -> dict[str, Any]:
    """The figures of a drop for ``--json`` (docs/findings.md)."""
    return {
        "at_s": drop.at_s,
        "burst_iops": drop.before,
        "sustained_iops": drop.after,
        "seconds_before": drop.seconds_before,
        "seconds_after": drop.seconds_after,
        "recovered_at_s": drop.recovered_at_s,
        "steps": [{"at_s": s.at_s, "from_iops": s.before, "to_iops": s.after} for s in drop.steps],
    }


def _bs(r: ResultRecord) -> int:
    return int(r.params.get("bs") or 0)


def burst_model_text(run: RunRecord, drop: Drop, bs: int) -> str:
    """What the run's provider spec says about bursts, beside a measured drop."""
    spec = run.suite_def.spec or {}
    burst = spec.get("burst")
    if not burst:
        return ""
    parts = [f". {spec.get('title', spec.get('spec'))} promises {format_iops(spec['iops'])} IOPS"]
    if burst.get("iops"):
        parts.append(f" and bursts to {format_iops(burst['iops'])} IOPS")
    if burst.get("credits"):
        # The provider counts an IO larger than its IO unit as several.
        unit = spec.get("io_unit")
        per_io = math.ceil(bs / unit) if unit and bs else 1
        burst_s = round(drop.at_s - drop.from_s, 2)
        spent = burst_s * max(drop.before * per_io - float(spec["iops"]), 0)
        parts.append(
            f" from a bucket of {burst['credits']:,.0f} I/O credits; a full bucket lasts "
            f"{burst['seconds']:,.0f} s at the burst rate (credits / (burst - baseline)). "
            f"A drop after {burst_s:g} s at the burst rate means the bucket held about "
            f"{spent:,.0f} credits when "
            + ("the run started" if drop.from_s == 0 else f"that rate began ({drop.from_s:g} s)")
            + (f" (each {format_bytes(bs)} IO counts as {per_io})" if per_io > 1 else "")
        )
    elif burst.get("seconds"):
        parts.append(f" for {burst['seconds']:g} s")
    if burst.get("note"):
        parts.append(f" ({burst['note']})")
    return "".join(parts)


def _cpu(t: TargetRecord | None, r: ResultRecord, run: RunRecord) -> Finding | None:
    """``fio-cpu-bound`` when fio used the CPU (each job near a full CPU, or most of a
    host that was busy); ``host-busy`` when other work did (iobench.analysis.cpuload)."""
    m = r.metrics or {}
    cpu = m.get("cpu") or {}
    per_job = float(cpu.get("usr_pct") or 0) + float(cpu.get("sys_pct") or 0)
    load = load_of(m)
    if per_job >= CPU_BOUND_PCT:
        what = f"fio's jobs each kept {per_job:.0f} % of a CPU busy"
    elif load is None or load.busy_pct < HOST_BOUND_PCT:
        return None
    elif load.fios:
        what = fio_share_text(load)
    else:
        return _host_busy(t, r, run, load, per_job)
    at = throttled_figure(t, r)
    return Finding(
        "fio-cpu-bound",
        "info" if at else "warning",
        f"{r.workload} on {r.target}: {what}"
        + (f"; {_despite(at)}" if at else ", so the CPU, not the storage, may have set the number"),
        "use libaio or io_uring with a deeper queue and fewer jobs, larger blocks, or a "
        "host with more CPUs",
        data=busy_data(load, per_job) if load else None,
    )


def _host_busy(
    t: TargetRecord | None, r: ResultRecord, run: RunRecord, load: Load, per_job: float
) -> Finding:
    """The host's CPUs busy, mostly with work that was not fio's."""
    at = throttled_figure(t, r)
    return Finding(
        "host-busy",
        "info" if at else "warning",
        f"{r.workload} on {r.target}: {other_work_text(load)}"
        + (f"; {_despite(at)}" if at else ": its figures may be lower than the storage allows"),
        "run it when the host is idle, or stop the other work first (show --json names "
        "whose it was: host_cpu.processes)",
        data=busy_data(load, per_job),
    )


def _despite(at: tuple[str, str, float, str]) -> str:
    """A CPU finding's end when the figure reached a throttle all the same."""
    d, metric, value, _ = at
    return (
        f"its {d} {_figure(metric, value)} reached the throttle all the same (at-throttle), "
        "so the load did not lower it"
    )


def _merging(t: TargetRecord | None, r: ResultRecord, run: RunRecord) -> Finding | None:
    rw = str(r.params.get("rw", ""))
    if rw.startswith("rand"):
        return None
    top = first_device(r.metrics)
    if top is None:
        return None  # no block device under the target (tmpfs, NFS), or none recorded
    ios = int(top.get("read_ios") or 0) + int(top.get("write_ios") or 0)
    merges = int(top.get("read_merges") or 0) + int(top.get("write_merges") or 0)
    if not merges or merges / (ios + merges) < MERGE_SHARE:
        return None
    bs = _bs(r)
    seen = (ios + merges) / ios * bs if ios else None
    return Finding(
        "io-merging",
        "info",
        f"{r.workload} on {r.target}: the block layer merged {merges / (ios + merges):.0%} of "
        f"its {rw} IOs before {top.get('name')} saw them"
        + (f" (on average {format_bytes(seen)} instead of {format_bytes(bs)})" if seen else "")
        + ": the device did fewer, larger IOs than the block size says",
        "compare it only with runs that merged alike; for the device's small-IO rate use "
        "random IO, or the raw device with the none scheduler",
    )


def first_device(metrics: dict[str, Any] | None) -> dict[str, Any] | None:
    """The disk statistics of the device the workload's IO reached first: the one iobench
    measured as the target's (``role`` ``target``), or, in fio's own list (an import), the
    first entry."""
    disks = [u for u in (metrics or {}).get("disk_util") or [] if isinstance(u, dict)]
    return next((u for u in disks if u.get("role") == "target"), disks[0] if disks else None)


def _throttle(t: TargetRecord | None, r: ResultRecord, run: RunRecord) -> Finding | None:
    """A figure at a cgroup throttle iobench ran under: the throttle's, not the storage's."""
    found = throttled_figures(t, r)
    if not found:
        return None
    d, metric, value, _ = found[0]
    said = " and ".join(f"{d} {_figure(m, v)} is {which}" for d, m, v, which in found)
    return Finding(
        "at-throttle",
        "info",
        f"{r.workload} on {r.target}: {said}: the throttle, not the storage, set "
        + ("this figure" if len(found) == 1 else "these figures"),
        "to measure the storage itself, run outside that cgroup"
        if any("cgroup" in which for *_, which in found)
        else "to measure the storage itself, lift that limit (or test storage without one)",
        data={"direction": d, "metric": metric, "value": value},  # the first of them
    )


def _figure(metric: str, value: float) -> str:
    return f"{format_iops(value)} IOPS" if metric == "iops" else format_rate(value)


def throttled_figure(t: TargetRecord | None, r: ResultRecord) -> tuple[str, str, float, str] | None:
    """(direction, metric, value, which throttle) of the first figure of ``r`` at a
    cgroup throttle on its target's devices (analysis.throttles.at_throttle)."""
    found = throttled_figures(t, r)
    return found[0] if found else None


def throttled_figures(t: TargetRecord | None, r: ResultRecord) -> list[tuple[str, str, float, str]]:
    """Each direction's first figure of ``r`` at a throttle (a reader and a writer run
    together, a mixed workload, can each be at one)."""
    found: list[tuple[str, str, float, str]] = []
    if t is None:
        return found
    for d in DIRECTIONS:
        section = (r.metrics or {}).get(d) or {}
        for metric in ("iops", "bw_bytes"):
            value = section.get(metric)
            which = at_throttle(t.context, d, metric, value)
            if which and value is not None:
                found.append((d, metric, float(value), which))
                break
    return found
