"""The steps of a run: what each fio invocation is, how long it should take, the order
they run in (one schedule per way of running), and the observer told about them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from iobench.errors import Interrupted, error_text
from iobench.model import DIRECTIONS, Precondition, Workload
from iobench.targets.purge import Purge
from iobench.units import format_bytes

if TYPE_CHECKING:
    from iobench.fio.runner import LiveStats

# Assumed speed when estimating how long writing a test file (or a size-bound job) takes.
LAYOUT_BYTES_PER_S = 100 * 2**20


@dataclass(frozen=True)
class Step:
    """One fio invocation of a run: a layout or a workload, on a target or on clients.

    Observers are told ``finished`` with a :class:`StepEnd`.
    """

    index: int
    target: str  # the target's spec, or "<k> clients"
    name: str
    expected_s: float
    workload: Workload | None  # None for the layout step
    repetition: int = 1
    clients: int | None = None  # --clients: how many clients run this step together
    layout_bytes: int = 0  # a layout on this host: the bytes it writes (its live progress)
    # What a step before the workloads (workload None) does: "layout" (a test file laid
    # out, an area prefilled), or a precondition's "purge" and "fill".
    stage: str = "layout"


@dataclass(frozen=True)
class Measured:
    """One direction's figures of a finished step, as an observer is told them."""

    direction: str  # read, write or trim
    iops: float | None
    bw_bytes: float | None  # bytes/s
    p99_ns: float | None  # of the total latency (submission to completion)


def measured(metrics: Mapping[str, Any] | None) -> tuple[Measured, ...]:
    """The directions that did IO in a step's stored metrics (:mod:`iobench.metrics`), in
    fio's order (read, write, trim)."""
    out: list[Measured] = []
    for d in DIRECTIONS:
        section = (metrics or {}).get(d)
        if not isinstance(section, Mapping):
            continue
        lat = section.get("lat_ns")
        p99 = lat.get("p99") if isinstance(lat, Mapping) else None
        out.append(Measured(d, section.get("iops"), section.get("bw_bytes"), p99))
    return tuple(out)


@dataclass(frozen=True)
class StepEnd:
    """How a step ended, as an observer is told: ``outcome`` is ``done``, ``failed`` or
    ``interrupted``; a step done carries what it measured (on clients: their aggregate),
    a failed one why, in one line; ``notes``: what else the watcher should know now (a
    client that failed in this step); ``said``: what a step without fio did."""

    outcome: str
    measured: tuple[Measured, ...] = ()
    error: str | None = None
    notes: tuple[str, ...] = ()
    said: str | None = None  # what a step that measures nothing did (a purge), in words


@dataclass
class Told:
    """What the code running a step tells its observer before the step ends (set inside
    :func:`observed`): the step's stored metrics once parsed, notes, and what a step
    without fio did."""

    metrics: Mapping[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    said: str | None = None  # what a step without fio did (StepEnd.said)


class Observer(Protocol):
    """What the progress display is told. All methods must return quickly.

    ``planned`` gets the steps known up front; an adaptive run (``budget_s`` set) adds
    steps as it goes, within that many seconds.
    """

    def planned(self, steps: Sequence[Step], budget_s: float | None = None) -> None: ...
    def started(self, step: Step) -> None: ...
    def progress(self, step: Step, stats: LiveStats) -> None: ...
    def finished(self, step: Step, end: StepEnd) -> None: ...
    def close(self) -> None: ...


class NullObserver:
    def planned(self, steps: Sequence[Step], budget_s: float | None = None) -> None:
        pass

    def started(self, step: Step) -> None:
        pass

    def progress(self, step: Step, stats: LiveStats) -> None:
        pass

    def finished(self, step: Step, end: StepEnd) -> None:
        pass

    def close(self) -> None:
        pass


@contextlib.contextmanager
def observed(obs: Observer, step: Step) -> Iterator[Told]:
    """The observer told that ``step`` started, and how it finished: ``done`` with the
    metrics the block set on the :class:`Told` it gets, ``interrupted`` (Ctrl-C, a stop
    signal) or ``failed`` (anything else, with the error's message)."""
    obs.started(step)
    told = Told()
    end = StepEnd("failed")
    try:
        yield told
        end = StepEnd("done", measured(told.metrics), notes=tuple(told.notes), said=told.said)
    except (KeyboardInterrupt, Interrupted):
        end = StepEnd("interrupted", notes=tuple(told.notes))
        raise
    except BaseException as e:
        end = StepEnd("failed", error=error_text(e), notes=tuple(told.notes))
        raise
    finally:
        obs.finished(step, end)


def time_based(w: Workload) -> bool:
    return dict(w.options).get("time_based", "1") != "0"


def expected_seconds(w: Workload) -> float:
    """How long a workload should take: ramp + runtime, or size-bound for non-time-based;
    a group as long as its longest part."""
    if w.parts:
        return max(expected_seconds(part) for part in w.parts)
    run = w.runtime_s
    if not time_based(w):
        run = min(run, 1.0 + w.numjobs * w.size / LAYOUT_BYTES_PER_S)
    return w.ramp_s + run + 0.5


def layout_seconds(size: int) -> float:
    """How long writing ``size`` bytes of test file should take."""
    return 1.0 + size / LAYOUT_BYTES_PER_S


def repetition_name(w: Workload, rep: int, repeat: int) -> str:
    """``name``, or ``name (2/3)`` when every workload runs ``repeat`` times."""
    return w.name if repeat == 1 else f"{w.name} ({rep}/{repeat})"


def layout_steps(layouts: Sequence[tuple[str, str, int]]) -> list[Step]:
    """The steps that write before the workloads (``(target, step name, bytes)``)."""
    return [
        Step(i, target, name, layout_seconds(size), None, layout_bytes=size)
        for i, (target, name, size) in enumerate(layouts)
    ]


def fill_name(pre: Precondition) -> str:
    """A precondition's fill as a step names it: ``fill (2 passes of sequential 128 KiB
    writes)``."""
    passes = "1 pass" if pre.passes == 1 else f"{pre.passes} passes"
    return f"fill ({passes} of sequential {format_bytes(pre.bs)} writes)"


def precondition_steps(places: Sequence[tuple[str, Purge, int]], pre: Precondition) -> list[Step]:
    """The steps of a precondition, target by target (``(target, its purge, its test
    area)``): the purge, where there is one, then the fill, whose live progress is the
    bytes it writes (``passes`` x the area). A purge's time is not guessed (0)."""
    steps: list[Step] = []
    for target, purge, area in places:
        if purge.does:
            steps.append(Step(len(steps), target, f"purge ({purge.method})", 0.0, None,
                              stage="purge"))  # fmt: skip
        written = pre.passes * area
        steps.append(
            Step(len(steps), target, fill_name(pre), layout_seconds(written), None,
                 layout_bytes=written, stage="fill")
        )  # fmt: skip
    return steps


def clients_layout(n: int, layout: tuple[str, int] | None) -> list[Step]:
    """The layout on all ``n`` clients (``layout``: its name and bytes; None: none). A
    step's target on clients is "<k> clients"."""
    if layout is None:
        return []
    name, size = layout
    return [Step(0, f"{n} clients", name, layout_seconds(size), None, clients=n)]
