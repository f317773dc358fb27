"""Typed data shared by every layer: workloads, suites, targets and parsed fio results.

All values carry their unit in the name: bytes, bytes/s (``bw_bytes``), nanoseconds
(``_ns``), seconds (``_s``), milliseconds (``_ms``). A missing value is None, never 0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

# Percentiles iobench reports everywhere (fio's default list contains all of them).
PERCENTILES: tuple[float, ...] = (1.0, 5.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99)

READ_MODES = frozenset({"read", "randread"})
WRITE_MODES = frozenset(
    {"write", "randwrite", "trim", "randtrim", "trimwrite", "rw", "readwrite", "randrw"}
)
RW_MODES = READ_MODES | WRITE_MODES

Direction = Literal["read", "write", "trim"]
DIRECTIONS: tuple[Direction, ...] = ("read", "write", "trim")


def percentile_key(p: float) -> str:
    """``99.9`` -> ``"p99.9"``, ``50.0`` -> ``"p50"``."""
    return "p" + (f"{p:.4f}".rstrip("0").rstrip("."))


@dataclass(frozen=True)
class Workload:
    """One fio job as a suite defines it (before it meets a target), or a group of several
    jobs that fio runs together (``parts``, see :func:`group`)."""

    name: str
    rw: str
    bs: int  # bytes
    iodepth: int
    numjobs: int
    ioengine: str = "libaio"
    direct: bool = True
    runtime_s: float = 60.0
    ramp_s: float = 0.0
    size: int = 1 << 30  # bytes of the test area
    rwmixread: int | None = None
    # Further fio options, already validated (suites.loader), as (name, value) in file order.
    options: tuple[tuple[str, str], ...] = ()
    # fio's size=N%: the test area is this share of the file or device (of iobench's own
    # test file, of ``size`` bytes, in a directory); None: ``size`` bytes.
    size_share: float | None = None

    def area(self, limit: int | None) -> int:
        """The bytes this workload's I/O covers on a target of ``limit`` bytes (a file or
        device; None: a test file iobench makes, of ``size`` bytes); a group's, its largest
        part's."""
        if self.parts:
            return max(p.area(limit) for p in self.parts)
        if self.size_share is not None:
            base = self.size if limit is None else limit
            return max(1, int(base * self.size_share))
        return self.size if limit is None else min(self.size, limit)

    # A group: the jobs fio runs at the same time (a job file's jobs that fio starts
    # together, a TOML workload's [[workload.job]] tables), each a workload of its own named
    # for its job; the fields above then sum them up (:func:`group`). Empty: one job.
    parts: tuple[Workload, ...] = ()

    @property
    def jobs(self) -> tuple[Workload, ...]:
        """The fio jobs it runs: a group's parts, else the workload itself."""
        return self.parts or (self,)

    @property
    def writes(self) -> bool:
        """True when the workload (any part of a group) writes or trims (needs
        --destructive on a device)."""
        return any(j.rw in WRITE_MODES for j in self.jobs)

    @property
    def params(self) -> dict[str, object]:
        """The parameters that identify the workload, as shown in --json output; a group's
        are its parts' (each with its name), and the longest runtime and ramp and the
        largest size among them."""
        if self.parts:
            return {
                "parts": [dict(p.params, name=p.name) for p in self.parts],
                "runtime_s": self.runtime_s,
                "ramp_s": self.ramp_s,
                "size": self.size,
            }
        return {
            "rw": self.rw,
            "bs": self.bs,
            "iodepth": self.iodepth,
            "numjobs": self.numjobs,
            "ioengine": self.ioengine,
            "direct": self.direct,
            "runtime_s": self.runtime_s,
            "ramp_s": self.ramp_s,
            "size": self.size,
            "rwmixread": self.rwmixread,
            "options": dict(self.options),
            **({"size_share": self.size_share} if self.size_share is not None else {}),
        }

    def each_job(self, change: Callable[[Workload], Workload]) -> Workload:
        """The workload with ``change`` made to each of its jobs (a group summed up anew)."""
        if not self.parts:
            return change(self)
        return group(self.name, [change(p) for p in self.parts])


def group(name: str, parts: Sequence[Workload]) -> Workload:
    """A workload of ``parts`` that fio runs together. Its own fields sum them up for what
    reads a workload whole: rw the parts' modes joined with '+', bs and iodepth the largest,
    numjobs the sum (the jobs fio starts), runtime, ramp and size the largest, direct when
    every part is; its options are none (each part has its own)."""
    if len(parts) < 2:
        raise ValueError("a group has at least two parts")
    return Workload(
        name=name,
        rw="+".join(dict.fromkeys(p.rw for p in parts)),
        bs=max(p.bs for p in parts),
        iodepth=max(p.iodepth for p in parts),
        numjobs=sum(p.numjobs for p in parts),
        ioengine="+".join(dict.fromkeys(p.ioengine for p in parts)),
        direct=all(p.direct for p in parts),
        runtime_s=max(p.runtime_s for p in parts),
        ramp_s=max(p.ramp_s for p in parts),
        size=max(p.size for p in parts),
        parts=tuple(parts),
    )


def directions_of(w: Workload) -> tuple[str, ...]:
    """The directions a workload (a group: any of its parts) does IO in."""
    modes = {job.rw for job in w.jobs}
    out = []
    if modes & {"read", "randread", "rw", "readwrite", "randrw"}:
        out.append("read")
    if modes & {"write", "randwrite", "rw", "readwrite", "randrw", "trimwrite"}:
        out.append("write")
    if modes & {"trim", "randtrim", "trimwrite"}:
        out.append("trim")
    return tuple(out)


@dataclass(frozen=True)
class Expectation:
    """``WORKLOAD.DIRECTION.METRIC OP VALUE`` (iobench.expect), the value in base units:
    IOPS, bytes/s or nanoseconds."""

    text: str  # as written, without blanks: rand-r.read.iops>=5000
    workload: str  # a workload's name, or "*"
    direction: str  # read | write | trim | total
    metric: str  # iops | bw | mean | min | max | p1 ... p99.99
    op: str  # >= | <= | > | <
    value: float
    source: str = "--expect"  # --expect, suite, or spec NAME


@dataclass(frozen=True)
class Fitted:
    """A built-in suite's workload fitted to the host (iobench.suites.fit): its numjobs and
    iodepth as the suite defines them; the workload itself holds what runs."""

    workload: str
    numjobs: int
    iodepth: int
    cpus: int  # the CPUs it was fitted to


@dataclass(frozen=True)
class SuiteNote:
    """What iobench decided when it read a suite file, said with the run's findings as
    information (``job-file``): a fio job file's filename replaced by the target, say."""

    message: str
    fix: str
    about: Override | None = None  # said no more once the user overrides it (--runtime)


# The suites iobench makes from a command's options (their ``source``).
GENERATED_SOURCES = ("sweep", "characterize")

# What the user may set for every workload on the command line (--runtime, --size, --ramp).
Override = Literal["runtime", "size", "ramp"]


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    workloads: tuple[Workload, ...]
    source: str  # "builtin" or the path of the user's file
    # True when the suite's numbers are a first look only (short runs, small file).
    indicative: bool = False
    expectations: tuple[Expectation, ...] = ()
    # What the user set on the command line: the findings ask them to change only that,
    # or what they wrote themselves (a suite file).
    overridden: frozenset[Override] = frozenset()
    fitted: tuple[Fitted, ...] = ()  # built-in workloads fitted to the host's CPUs
    notes: tuple[SuiteNote, ...] = ()  # how a fio job file was read (suites.jobfile)
    # What a fio job file's variables became (fio.language): (as written, value, where from:
    # "environment", "host", "arithmetic"); and the files it included.
    variables: tuple[tuple[str, str, str], ...] = ()
    includes: tuple[str, ...] = ()
    # Run in rounds until steady (--steady-state pts): a short workload is one round of
    # many, which the steady-state rule judges together.
    in_rounds: bool = False

    @property
    def builtin(self) -> bool:
        """Shipped with iobench: the user did not write it."""
        return self.source == "builtin"

    @property
    def iobench_made(self) -> bool:
        """Its durations and sizes are iobench's own unless ``overridden`` says the user
        typed them: a built-in suite, or the matrix of ``sweep`` and ``characterize``
        (whose other axes are the user's options)."""
        return self.source in ("builtin", *GENERATED_SOURCES)

    def only(self, names: Iterable[str]) -> Suite:
        """The suite with only the workloads named (an interrupted run's, say), in order."""
        keep = set(names)
        return dataclasses.replace(
            self, workloads=tuple(w for w in self.workloads if w.name in keep)
        )


@dataclass(frozen=True)
class Precondition:
    """What ``iobench precondition`` and ``run --precondition`` do to a target before its
    workloads (the SNIA PTS "purge" and "workload independent preconditioning"): the test
    area purged where the target's kind can (``purge``), then written sequentially
    ``passes`` times in blocks of ``bs`` bytes, ``iodepth`` IOs in flight. ``size``: the
    test area when no workload gives one (``iobench precondition --size``; None: the whole
    file or device)."""

    passes: int = 2
    bs: int = 128 << 10
    iodepth: int = 32
    purge: bool = True
    size: int | None = None

    def area(self, limit: int | None, workloads: Sequence[Workload]) -> int | None:
        """The test area on a target of ``limit`` bytes (None: a test file of iobench's
        own): the largest workload's, else ``size`` (capped at ``limit``), else ``limit``."""
        if workloads:
            return max(w.area(limit) for w in workloads)
        if self.size is None:
            return limit
        return self.size if limit is None else min(self.size, limit)


# The name of a kind of target (iobench.targets.kinds.KINDS: directory, file, block),
# as stored in targets.kind.
TargetKind = str

# In a network target given with --clients, each client's own storage: the client's host
# name takes its place (rbd:rbd/bench-{client}).
CLIENT_FIELD = "{client}"


@dataclass(frozen=True)
class Target:
    """A resolved target: the path (or network storage) the user named and what it is."""

    # The absolute, normalised path the user named ("." run in /mnt/vol: "/mnt/vol"),
    # symbolic links kept (targets.named_path); what runs store and show.
    spec: str
    path: str  # absolute, symlinks resolved: the file or device fio uses
    kind: TargetKind
    size_bytes: int | None  # file or device size; None for a directory
    free_bytes: int | None = None  # free space (directory targets)
    # How to reach network storage, from the command line (--ceph-conf FILE ...): never a
    # credential, only where one is kept.
    access: tuple[tuple[str, str], ...] = ()
    # What its kind found out when it resolved it (a network kind's probe of the server),
    # for its checks and context; not part of what the target is.
    facts: object = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class LatencyStats:
    """One of fio's latency objects (slat/clat/lat), in nanoseconds."""

    n: int
    min_ns: float
    max_ns: float
    mean_ns: float
    stddev_ns: float
    # (percentile, ns) pairs in ascending percentile order; empty when fio had none.
    percentiles: tuple[tuple[float, float], ...] = ()
    # json+ histogram: bucket representative value in ns -> count; empty when absent.
    bins: Mapping[int, int] = field(default_factory=dict)

    def percentile(self, p: float) -> float | None:
        for q, v in self.percentiles:
            if abs(q - p) < 1e-9:
                return v
        return None


@dataclass(frozen=True)
class DirectionResult:
    """One IO direction (read, write or trim) of one fio job, as fio counted it: after a
    ramp, ``io_bytes`` (and ``bw_bytes``) are of the IOs *completed* in the measured window,
    ``total_ios`` (and ``iops``) the IOs *submitted* in it (iobench.iocount)."""

    io_bytes: int
    bw_bytes: float  # bytes/s
    iops: float  # fio's: 1000 * total_ios / runtime_ms
    total_ios: int
    runtime_ms: int
    clat: LatencyStats | None
    lat: LatencyStats | None
    slat: LatencyStats | None = None
    # fio's own count of the IOs completed in the window (its clat histogram's N), None when
    # fio gave none (normal and terse output; JSON of fio < 3.19 without json+ bins).
    completions: int | None = None
    # How finely fio gave io_bytes: 1 in JSON, 1024 in terse (KiB), the last printed digit
    # in normal output ("479MiB": 1 MiB).
    io_bytes_step: int = 1


@dataclass(frozen=True)
class DiskUtil:
    name: str
    read_ios: int
    write_ios: int
    read_merges: int
    write_merges: int
    in_queue_ms: int
    util_pct: float


@dataclass(frozen=True)
class SteadyState:
    """fio's steady-state detection (``ss=``) for one job: whether the criterion was met,
    and the window it judged, one sample per second (FIO.md §4)."""

    criterion: str  # as fio wrote it: "iops:5.000000%"
    attained: bool
    duration_s: int  # the window
    iops: tuple[float, ...]  # per second, over the window
    bw_bytes: tuple[float, ...]  # bytes/s per second (fio's ss data is already in bytes/s)


@dataclass(frozen=True)
class JobResult:
    """One entry of fio's ``jobs`` (or ``client_stats``) array."""

    jobname: str
    groupid: int
    error: int  # errno of fio's first error; 0 = none
    read: DirectionResult | None
    write: DirectionResult | None
    trim: DirectionResult | None
    usr_cpu_pct: float | None
    sys_cpu_pct: float | None
    job_runtime_ms: int | None
    hostname: str | None = None  # client/server mode only
    port: int | None = None
    steadystate: SteadyState | None = None  # only with fio's ss= option

    def direction(self, d: Direction) -> DirectionResult | None:
        return {"read": self.read, "write": self.write, "trim": self.trim}[d]


@dataclass(frozen=True)
class FioOutput:
    """A whole fio report, parsed (from JSON, or from fio's normal or terse text)."""

    fio_version: str | None  # e.g. "3.33", from fio's own output
    timestamp: int | None
    jobs: tuple[JobResult, ...]
    disk_util: tuple[DiskUtil, ...]
    client_mode: bool = False
    latency_unit: Literal["ns", "us"] = "ns"  # "us" for fio 2.x inputs (converted to ns)
    # Which of fio's output formats it was read from: "normal" (the human-readable text)
    # and "terse" carry rounded figures and no histogram bins.
    output_format: Literal["json", "normal", "terse"] = "json"
