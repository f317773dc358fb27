"""How long the rest of a run should take, learnt from the steps that finished (pure).

A step not yet run is predicted, in this order, from

1. its own earlier repetitions (the same workload on the same target): their mean time;
2. the same workload on other targets (or other client counts): their mean time;
3. its expected time (:func:`iobench.engine.steps.expected_seconds`, ``layout_seconds``)
   times the median ratio of taken to expected time of the finished steps of its kind
   (layouts, workloads): fio's start and the storing of a result add a little to every
   workload; a slow disk makes every layout slower than the 100 MiB/s assumed.

The running step is predicted the same way, less the time it has run (never below zero),
except a layout that reports the bytes it wrote: the bytes left at the rate so far. An
adaptive run (``budget_s``: characterize) chooses its steps as it goes and stops within
its budget, counted from the start: its time left is an upper bound.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from iobench.engine.steps import Step
from iobench.fio.runner import LiveStats
from iobench.units import format_duration

# A layout's rate is trusted once it has run this long (fio's first snapshots include
# opening the file).
LIVE_RATE_AFTER_S = 2.0


def _kind(step: Step) -> str:
    return "layout" if step.workload is None else "workload"


def _workload_name(step: Step) -> str | None:
    return None if step.workload is None else step.workload.name


@dataclass
class Eta:
    """The steps planned (``budget_s``: an adaptive run's budget) and the time each
    finished one took."""

    steps: Sequence[Step]
    budget_s: float | None = None
    taken: dict[int, float] = field(default_factory=dict)  # position in steps -> seconds
    extra: int = 0  # steps done that were not planned (an adaptive run's choices)
    # What the finished planned steps taught: times by (workload, target) and by workload,
    # and the median ratio of taken to expected time by kind.
    _by_place: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    _by_name: dict[str, list[float]] = field(default_factory=dict)
    _ratios: dict[str, list[float]] = field(default_factory=dict)
    _factor: dict[str, float] = field(default_factory=dict)

    @property
    def done(self) -> int:
        return len(self.taken) + self.extra

    @property
    def total(self) -> int:
        return len(self.steps)

    @property
    def open_ended(self) -> bool:
        return self.budget_s is not None

    def _position(self, step: Step) -> int | None:
        i = step.index
        return i if 0 <= i < len(self.steps) and self.steps[i] == step else None

    def finish(self, step: Step, taken_s: float, *, learn: bool = True) -> None:
        """``step`` is over after ``taken_s`` seconds. With ``learn`` (it ran to the end)
        its time also predicts the steps like it; a failed step's does not, but it is no
        longer left either."""
        i = self._position(step)
        if i is None or i in self.taken:
            self.extra += i is None
            return
        taken = self.taken[i] = max(taken_s, 0.0)
        if not learn:
            return
        name = _workload_name(step)
        if name is not None:
            self._by_place.setdefault((name, step.target), []).append(taken)
            self._by_name.setdefault(name, []).append(taken)
        if step.expected_s > 0:
            self._ratios.setdefault(_kind(step), []).append(taken / step.expected_s)
            self._factor.pop(_kind(step), None)

    def _kind_factor(self, kind: str) -> float:
        if kind not in self._factor:
            ratios = self._ratios.get(kind)
            self._factor[kind] = statistics.median(ratios) if ratios else 1.0
        return self._factor[kind]

    def predicted_s(self, step: Step) -> float:
        """How long ``step`` should take, all told (see the module's text)."""
        name = _workload_name(step)
        if name is not None:
            same = self._by_place.get((name, step.target))
            if same:
                return statistics.fmean(same)
            similar = self._by_name.get(name)
            if similar:
                return statistics.fmean(similar)
        return step.expected_s * self._kind_factor(_kind(step))

    def step_left_s(self, step: Step, elapsed_s: float, live: LiveStats | None = None) -> float:
        """What is left of the running ``step``, ``elapsed_s`` into it."""
        if (
            step.layout_bytes
            and live is not None
            and live.io_bytes
            and live.elapsed_s >= LIVE_RATE_AFTER_S
        ):
            rate = live.io_bytes / live.elapsed_s
            return max(step.layout_bytes - live.io_bytes, 0) / rate
        return max(self.predicted_s(step) - elapsed_s, 0.0)

    def left_s(
        self,
        run_elapsed_s: float,
        current: Step | None = None,
        elapsed_s: float = 0.0,
        live: LiveStats | None = None,
    ) -> float:
        """The run's time left, ``run_elapsed_s`` into it, with ``current`` running for
        ``elapsed_s``; for an adaptive run the most it can be."""
        at = None if current is None else self._position(current)
        left = sum(
            self.predicted_s(s) for i, s in enumerate(self.steps) if i not in self.taken and i != at
        )
        if current is not None and at is not None:
            left += self.step_left_s(current, elapsed_s, live)
        if self.budget_s is not None:
            left = max(left, self.budget_s - run_elapsed_s)
        return left


def rough_duration(seconds: float) -> str:
    """A time to wait, as precise as it is worth: ``45s``, ``4m10s`` (to 5 s), ``31m``,
    ``2h05m`` (to the minute from 10 minutes on); written by :func:`format_duration`."""
    s = max(round(seconds), 0)
    if s >= 600:
        s = 60 * round(s / 60)
    elif s >= 60:
        s = 5 * round(s / 5)
    return format_duration(s)


def clock_time(now: datetime, after_s: float) -> str:
    """The wall-clock time ``after_s`` seconds after ``now``: ``14:32``, or with the day
    when it is not today (``Tue 01:10``), or the date beyond a week."""
    at = now + timedelta(seconds=after_s)
    if at.date() == now.date():
        return at.strftime("%H:%M")
    if at.date() - now.date() < timedelta(days=7):
        return at.strftime("%a %H:%M")
    return at.strftime("%Y-%m-%d %H:%M")


def run_status(eta: Eta, run_elapsed_s: float, left_s: float, now: datetime) -> str:
    """The whole run in one line: ``9/36 done, 10m elapsed, ~31m left, ends ~14:32``; an
    adaptive run's ``at most``; a finished run's total time."""
    elapsed = rough_duration(run_elapsed_s)
    if eta.open_ended:
        return (
            f"{eta.done} done, {elapsed} elapsed, at most {rough_duration(left_s)} left, "
            f"ends by {clock_time(now, left_s)}"
        )
    if eta.done >= eta.total:
        return f"{eta.done}/{eta.total} done in {elapsed}"
    return (
        f"{eta.done}/{eta.total} done, {elapsed} elapsed, ~{rough_duration(left_s)} left, "
        f"ends ~{clock_time(now, left_s)}"
    )
