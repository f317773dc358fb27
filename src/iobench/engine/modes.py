"""How a run chooses its workloads (a run mode), the same for every executor.

A run is a series of batches on each of its *places* (a target on this host, or the clients
at one client count). A place's :class:`Course` gives its next batch from the results that
place has so far, until it has none:

- :class:`Repeat`: every workload once per round, rounds 1..N (``--repeat N``); known up
  front;
- :class:`SteadyRounds`: every workload once per round until the steady-state rule holds
  for every workload, or the rounds run out (``--steady-state pts``,
  :mod:`iobench.analysis.steady`);
- :class:`Chosen`: a chooser's next workload (``characterize``), each run ``repeat`` times.

:func:`drive` asks every place for its batch and runs the batches interleaved (the first
workload on every place, then the second ...), so drift over time hits every place alike.
A result's ``repetition`` is its round.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from iobench.engine.request import Chooser, RunRequest
from iobench.engine.steps import Step, expected_seconds, repetition_name
from iobench.model import Suite, Workload
from iobench.records import ResultRecord

P = TypeVar("P")


@dataclass(frozen=True)
class Planned:
    """One workload of a place's batch: which round (repetition) it belongs to, and its
    position (the order results are stored and shown in)."""

    workload: Workload
    repetition: int
    position: int
    name: str  # as the progress shows it: ``name (2/3)``, ``name (round 4)``


class Course(Protocol):
    """One place's way through a run."""

    def next(
        self, done: Sequence[ResultRecord], elapsed_s: float, context: Mapping[str, Any]
    ) -> list[Planned]:
        """The next batch after the results ``done`` on this place (its headline results:
        on clients, their aggregate), ``elapsed_s`` seconds of its steps in; [] when the
        place is finished."""
        ...


class Mode(Protocol):
    @property
    def budget_s(self) -> float | None:
        """The most seconds a place's steps can take when they are not known up front (the
        progress display); None when they are."""
        ...

    def upfront(self) -> list[Planned]:
        """The batches every place starts with, known before anything ran, in order."""
        ...

    def course(self) -> Course: ...

    def definition(self) -> dict[str, Any]:
        """What the run stores of its mode (``suite_def`` keys)."""
        ...


@dataclass
class _Rounds:
    """Every workload once per round while ``more(done, round)`` says so."""

    suite: Suite
    more: Callable[[Sequence[ResultRecord], int], bool]
    name: Callable[[Workload, int], str]
    round: int = 0

    def next(
        self, done: Sequence[ResultRecord], elapsed_s: float, context: Mapping[str, Any]
    ) -> list[Planned]:
        if not self.more(done, self.round + 1):
            return []
        self.round += 1
        return _round(self.suite, self.round, self.name)


def _round(suite: Suite, n: int, name: Callable[[Workload, int], str]) -> list[Planned]:
    return [Planned(w, n, i, name(w, n)) for i, w in enumerate(suite.workloads)]


@dataclass(frozen=True)
class Repeat:
    """Every workload ``times`` times, round by round."""

    suite: Suite
    times: int = 1
    stored: Mapping[str, Any] = field(default_factory=dict)  # what the run stores of it

    @property
    def budget_s(self) -> float | None:
        return None

    def _name(self, w: Workload, n: int) -> str:
        return repetition_name(w, n, self.times)

    def upfront(self) -> list[Planned]:
        return [p for n in range(1, self.times + 1) for p in _round(self.suite, n, self._name)]

    def course(self) -> Course:
        return _Rounds(self.suite, lambda done, n: n <= self.times, self._name)

    def definition(self) -> dict[str, Any]:
        return dict(self.stored)


def round_name(w: Workload, n: int) -> str:
    return f"{w.name} (round {n})"


@dataclass(frozen=True)
class SteadyRounds:
    """Rounds until every workload's tracking figure is steady by ``rule`` (the SNIA PTS
    rule, :mod:`iobench.analysis.steady`), at most ``rule.max_rounds``."""

    suite: Suite
    rule: Any  # iobench.analysis.steady.Rule
    round_time_s: float | None = None

    @property
    def budget_s(self) -> float:
        """The most the rounds can take (every round to the last)."""
        return float(self.rule.max_rounds * sum(expected_seconds(w) for w in self.suite.workloads))

    def upfront(self) -> list[Planned]:
        """The rounds the rule needs before it can judge: its window."""
        first = min(self.rule.window, self.rule.max_rounds)
        return [p for n in range(1, first + 1) for p in _round(self.suite, n, round_name)]

    def course(self) -> Course:
        return _Rounds(self.suite, self._more, round_name)

    def _more(self, done: Sequence[ResultRecord], n: int) -> bool:
        from iobench.analysis.steady import done as rule_done
        from iobench.analysis.steady import tracking_metric, tracking_value

        if n > self.rule.max_rounds:
            return False
        if n <= self.rule.window:
            return True
        series: dict[str, list[tuple[int, float]]] = {w.name: [] for w in self.suite.workloads}
        for r in done:
            if r.workload in series and r.status == "ok":
                value = tracking_value(r.metrics, tracking_metric(r.params))
                if value is not None:
                    series[r.workload].append((r.repetition, value))
        return not rule_done(series, self.rule, n - 1)

    def definition(self) -> dict[str, Any]:
        return {"steady_state": {**self.rule.as_dict(), "round_time_s": self.round_time_s}}


@dataclass
class _ChosenCourse:
    chooser: Chooser
    times: int
    chosen: int = 0

    def next(
        self, done: Sequence[ResultRecord], elapsed_s: float, context: Mapping[str, Any]
    ) -> list[Planned]:
        w = self.chooser.next_workload(tuple(done), dict(context), elapsed_s)
        if w is None:
            return []
        self.chosen += 1
        return [
            Planned(w, n, self.chosen - 1, repetition_name(w, n, self.times))
            for n in range(1, self.times + 1)
        ]


@dataclass(frozen=True)
class Chosen:
    """A chooser's workloads, each ``times`` times in a row (``characterize --repeat``)."""

    chooser: Chooser
    times: int = 1

    @property
    def budget_s(self) -> float:
        return self.chooser.budget_s

    def upfront(self) -> list[Planned]:
        return []

    def course(self) -> Course:
        return _ChosenCourse(self.chooser, self.times)

    def definition(self) -> dict[str, Any]:
        return {"plan": self.chooser.definition()}


def mode_of(request: RunRequest, suite: Suite) -> Mode:
    """The request's run mode, over ``suite`` (the suite as it runs)."""
    if request.chooser is not None:
        return Chosen(request.chooser, request.repeat)
    if request.steady_state is not None and request.steady_state.get("rule") == "pts":
        from iobench.analysis.steady import Rule

        rule = Rule.from_dict(request.steady_state)
        return SteadyRounds(suite, rule, request.steady_state.get("round_time_s"))
    # fio's own check (--steady-state fio) is in every job: the run stores that it is.
    fio = {"steady_state": request.steady_state} if request.steady_state else {}
    return Repeat(suite, request.repeat, fio)


def upfront_steps(
    mode: Mode, places: Sequence[str], first: int = 0, clients: int | None = None
) -> list[Step]:
    """The steps known before anything ran (``places``: each place's target as a step
    names it), numbered from ``first``, in the order :func:`drive` runs them."""
    steps: list[Step] = []
    for p in mode.upfront():
        for place in places:
            steps.append(_step(first + len(steps), place, p, clients))
    return steps


def _step(index: int, target: str, p: Planned, clients: int | None) -> Step:
    w = p.workload
    return Step(index, target, p.name, expected_seconds(w), w, p.repetition, clients)


@dataclass
class Driver(Generic[P]):
    """Runs a mode's batches on its places; ``run_one(place, planned, step)`` runs one and
    returns its headline result (None: no result to learn from)."""

    mode: Mode
    run_one: Callable[[P, Planned, Step], ResultRecord | None]
    label: Callable[[P], str]  # the place as a step names its target
    context: Callable[[P], Mapping[str, Any]] = lambda place: {}
    clients: Callable[[P], int | None] = lambda place: None
    index: int = 0  # the next step's number
    clock: Callable[[], float] = time.monotonic

    def drive(self, places: Sequence[P]) -> None:
        """Every place's batches, interleaved, until no place has another."""
        courses = [self.mode.course() for _ in places]
        done: list[list[ResultRecord]] = [[] for _ in places]
        elapsed = [0.0 for _ in places]
        live = list(range(len(places)))
        while live:
            batches: dict[int, list[Planned]] = {}
            for i in live:
                batch = courses[i].next(tuple(done[i]), elapsed[i], self.context(places[i]))
                if batch:
                    batches[i] = batch
            live = list(batches)
            for k in range(max((len(b) for b in batches.values()), default=0)):
                for i, batch in batches.items():
                    if k < len(batch):
                        elapsed[i] += self._one(places[i], batch[k], done[i])

    def _one(self, place: P, p: Planned, done: list[ResultRecord]) -> float:
        step = _step(self.index, self.label(place), p, self.clients(place))
        self.index += 1
        began = self.clock()
        record = self.run_one(place, p, step)
        if record is not None:
            done.append(record)
        return self.clock() - began
