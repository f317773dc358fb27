"""The steady-state rule of the SNIA Solid State Storage Performance Test Specification
(PTS), judged on the rounds of a run (docs/steady-state.md). Pure.

A run with ``--steady-state pts`` runs its suite in rounds: round r runs every workload once
and stores each result with ``repetition = r``. Each workload has one **tracking figure** per
round (:func:`tracking_metric`: IOPS, or bandwidth for a bandwidth test). The rule judges the
**window**, the last ``Rule.window`` rounds (5 by default): the workload is steady when

- the range of its figures in the window, max - min, is at most ``range_pct`` (20 %) of the
  window's average, and
- the excursion of their least-squares line over the window, |slope| x (last round - first
  round), is at most ``slope_pct`` (10 %) of the window's average.

Both bounds are inclusive, as the PTS words them ("no more than 20 %", "within 10 %"). A
round without a figure (its step failed, it moved nothing, its stored figure is unreadable)
breaks every window that spans it: nothing was measured there, so nothing says the device
held still.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iobench.analysis.results import groups
from iobench.model import DIRECTIONS
from iobench.records import RunRecord

PTS = "pts"
RULE_KEY = "steady_state"  # the key of a run's suite definition that holds its rule
IOPS = "iops"
BANDWIDTH = "bw_bytes"
# A workload is a bandwidth test when it is sequential or moves blocks at least this large.
BANDWIDTH_BS = 128 * 1024
SEQUENTIAL = frozenset({"read", "write", "rw", "readwrite", "trim", "trimwrite"})
# Bounds on a rule, so that a stored one cannot ask for endless arithmetic.
MAX_WINDOW = 10_000
MAX_ROUNDS = 1_000_000

Point = tuple[int, float]  # (round, tracking figure)
Entry = tuple[int, float | None]  # (round, figure or None: the round has none)


# -- the rule ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """The PTS rule as a run applies it: the window judged, its two bounds (% of the
    window's average), and the most rounds a run makes before it gives up. Fewer rounds
    than the window are allowed, and never judged (a command line may refuse them)."""

    window: int = 5
    range_pct: float = 20.0
    slope_pct: float = 10.0
    max_rounds: int = 25

    def __post_init__(self) -> None:
        problem = _problem(self)
        if problem:
            raise ValueError(problem)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": PTS,
            "window": self.window,
            "range_pct": self.range_pct,
            "slope_pct": self.slope_pct,
            "max_rounds": self.max_rounds,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Rule:
        """The rule a stored suite definition holds (``steady_state``). A key absent or
        null takes its default (an older writer); any other key is ignored (``round_time_s``,
        a newer writer's). A value of the wrong type or out of bounds is a ValueError that
        names the key: the document was edited, and no rule is guessed for it."""
        if not isinstance(d, Mapping):
            raise ValueError(f"{RULE_KEY} must be an object, not {_shown(d)}")
        if d.get("rule", PTS) != PTS:
            raise ValueError(f"{RULE_KEY}.rule must be {PTS!r}, not {_shown(d.get('rule'))}")
        given: dict[str, Any] = {}
        for name in ("window", "range_pct", "slope_pct", "max_rounds"):
            value = d.get(name)
            if value is None:
                continue
            if name in ("window", "max_rounds"):
                if not (_whole(value) or (_number(value) and float(value).is_integer())):
                    raise ValueError(
                        f"{RULE_KEY}.{name} must be a whole number, not {_shown(value)}"
                    )
                given[name] = int(value)
            elif (given_pct := _figure(value)) is not None:
                given[name] = given_pct
            else:
                raise ValueError(f"{RULE_KEY}.{name} must be a number, not {_shown(value)}")
        try:
            return cls(**given)
        except ValueError as e:
            raise ValueError(f"{RULE_KEY}.{e}") from None


def _problem(rule: Rule) -> str | None:
    """What is wrong with a rule's values, naming the field; None when nothing is."""
    if not _whole(rule.window) or not 2 <= rule.window <= MAX_WINDOW:
        return f"window must be a whole number from 2 to {MAX_WINDOW:,}, not {_shown(rule.window)}"
    for name in ("range_pct", "slope_pct"):
        value = getattr(rule, name)
        if not _number(value) or not 0 < value <= 1000:
            return f"{name} must be a percentage above 0 and at most 1000, not {_shown(value)}"
    if not _whole(rule.max_rounds) or not 1 <= rule.max_rounds <= MAX_ROUNDS:
        return (
            f"max_rounds must be a whole number from 1 to {MAX_ROUNDS:,}, not "
            f"{_shown(rule.max_rounds)}"
        )
    return None


def _number(value: Any) -> bool:
    """A JSON number that is finite (an int always is, however large)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _figure(value: Any) -> float | None:
    """A figure as a float; None for anything else (an int too large for a float too)."""
    if not _number(value):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- one window ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """The rounds judged and their figures: average, range, the least-squares line
    ``y = intercept + slope * round`` and its excursion over the window, and both tests."""

    rounds: tuple[int, ...]
    values: tuple[float, ...]
    average: float
    range: float  # max - min
    slope: float  # per round
    intercept: float
    excursion: float  # |slope| * (last round - first round)
    range_ok: bool  # range <= range_pct % of the average (inclusive)
    slope_ok: bool  # excursion <= slope_pct % of the average (inclusive)
    # Rounds of the window's span (the rule.window rounds ending at its last round) that
    # have no figure: the window is then not steady, whatever its figures say.
    missing: tuple[int, ...] = ()

    @property
    def steady(self) -> bool:
        return self.range_ok and self.slope_ok and not self.missing

    @property
    def range_pct(self) -> float:
        return 100.0 * self.range / self.average

    @property
    def excursion_pct(self) -> float:
        return 100.0 * self.excursion / self.average

    @property
    def slope_pct(self) -> float:
        """The slope per round as a percentage of the average (signed)."""
        return 100.0 * self.slope / self.average

    def trend_at(self, round_: int) -> float:
        """The least-squares line's value at ``round_``."""
        return self.intercept + self.slope * round_


def usable(series: Sequence[Entry]) -> list[Point]:
    """The rounds that have a figure, by round: a finite number above 0 (a later entry of
    the same round replaces an earlier one). None, 0, negative, NaN: no figure."""
    found: dict[int, float] = {}
    for round_, value in series:
        figure = _figure(value)
        if figure is not None and figure > 0:
            found[round_] = figure
        else:
            found.pop(round_, None)
    return sorted(found.items())


def judge(series: Sequence[Entry], rule: Rule, *, last: int | None = None) -> Window | None:
    """The window of the last ``rule.window`` rounds with a figure, judged; None when fewer
    rounds have one. ``last``: the round the window must end at (default: the last round
    of ``series``, with or without a figure); a round of the span up to it without a
    figure is ``missing``."""
    if last is None:
        last = max((r for r, _ in series), default=None)
    points = [p for p in usable(series) if last is None or p[0] <= last]
    if last is None or len(points) < rule.window:
        return None
    taken = points[-rule.window :]
    rounds = tuple(r for r, _ in taken)
    values = tuple(v for _, v in taken)
    average = statistics.fmean(values)
    spread = max(values) - min(values)
    slope, intercept = statistics.linear_regression(rounds, values)
    excursion = abs(slope) * (rounds[-1] - rounds[0])
    present = set(rounds)
    return Window(
        rounds=rounds,
        values=values,
        average=average,
        range=spread,
        slope=slope,
        intercept=intercept,
        excursion=excursion,
        # Multiplied out, not divided: exactly 20 % of an average of 100 is exactly 20.
        range_ok=spread * 100.0 <= rule.range_pct * average,
        slope_ok=excursion * 100.0 <= rule.slope_pct * average,
        missing=tuple(r for r in range(last - rule.window + 1, last + 1) if r not in present),
    )


# -- a workload's rounds -------------------------------------------------------------------------


@dataclass(frozen=True)
class Convergence:
    """One workload's tracking figure round by round, and what the rule says of it."""

    metric: str  # IOPS or BANDWIDTH
    series: tuple[Point, ...]  # the rounds with a figure, by round
    window: Window | None  # judged at the last round; None: fewer rounds than the window
    # The round steady state was declared at: the earliest round R such that the windows
    # ending at R, R + 1, ... and the last round all pass (None: the last one does not).
    reached_at: int | None
    rounds: int  # the last round measured
    # Not steady: the figure it was still moving towards (see _heading); None when steady.
    heading: float | None
    # How ``heading`` was found: "levelling" (where its shrinking steps lead), "average"
    # (the window's, which a figure that swings without drifting swings around), "trend"
    # (the window's line at the last round: no sign of where it settles); None without one.
    heading_how: str | None = None
    missing: tuple[int, ...] = ()  # rounds measured without a figure

    @property
    def steady(self) -> bool:
        return self.window is not None and self.window.steady

    @property
    def value(self) -> float | None:
        """The result: the window's average (steady or not, as the PTS reports it)."""
        return self.window.average if self.window else None


def convergence(
    series: Sequence[Entry], metric: str, rule: Rule, *, rounds: int | None = None
) -> Convergence:
    """The rule applied to one workload's ``(round, figure)`` entries. ``rounds``: the last
    round the run measured (default: the last entry's); rounds up to it without an entry
    count as rounds without a figure."""
    last = rounds if rounds is not None else max((r for r, _ in series), default=0)
    entries = [(r, v) for r, v in series if r <= last]
    points = usable(entries)
    window = judge(entries, rule, last=last) if entries else None
    heading, how = (None, None) if window and window.steady else _heading(points, window)
    have = {r for r, _ in points}
    return Convergence(
        metric=metric,
        series=tuple(points),
        window=window,
        reached_at=_reached_at(entries, rule, last) if window and window.steady else None,
        rounds=last,
        heading=heading,
        heading_how=how,
        missing=tuple(sorted({r for r, _ in entries if r not in have})),
    )


def _reached_at(entries: Sequence[Entry], rule: Rule, last: int) -> int | None:
    """The earliest round from which every window up to the last one passes: walked back
    from the last round until a window fails (a window that fails ends the walk, so this
    judges at most as many windows as there are rounds with figures)."""
    reached = None
    end = last
    while True:
        window = judge([e for e in entries if e[0] <= end], rule, last=end)
        if window is None or not window.steady:
            return reached
        reached, end = end, end - 1


def _heading(points: Sequence[Point], window: Window | None) -> tuple[float | None, str | None]:
    """Where a workload not yet steady was going. When its last three steps (four
    consecutive rounds) go one way and each is smaller than the one before, it is taken
    as approaching a level exponentially, the steps shrinking by a factor q (the
    geometric mean of the last two ratios): it heads for ``last + step * q / (1 - q)``.
    Otherwise, when the window's line passes the slope test (the figure swings without
    drifting), the window's average, which it swings around; else the line's value at the
    last round: where it stands now, without a sign of where it settles. None when none of
    them gives a figure above 0."""
    if len(points) >= 4 and points[-1][0] - points[-4][0] == 3:
        ys = [v for _, v in points[-4:]]
        steps = [b - a for a, b in itertools.pairwise(ys)]
        ratios = [b / a for a, b in itertools.pairwise(steps) if a]
        if len(ratios) == 2 and all(0 < q < 1 for q in ratios):
            q = math.sqrt(ratios[0] * ratios[1])
            level = ys[-1] + steps[-1] * q / (1 - q)
            if level > 0:
                return level, "levelling"
    if window is not None and window.slope_ok:
        return window.average, "average"
    if window is not None and window.trend_at(window.rounds[-1]) > 0:
        return window.trend_at(window.rounds[-1]), "trend"
    return None, None


# -- the tracking figure ----------------------------------------------------------------------


def tracking_metric(params: Mapping[str, Any]) -> str:
    """BANDWIDTH for a bandwidth test: sequential IO (read, write, rw, readwrite, trim,
    trimwrite) or blocks of 128 KiB and more; IOPS otherwise. A group of jobs run together
    is a bandwidth test when each of its parts is. (For one block size IOPS and bandwidth
    are proportional, so the choice changes the unit shown, not the verdict.)"""
    parts = params.get("parts")
    if isinstance(parts, list | tuple) and parts:
        shapes = [_bandwidth_test(p) if isinstance(p, Mapping) else False for p in parts]
        return BANDWIDTH if all(shapes) else IOPS
    return BANDWIDTH if _bandwidth_test(params) else IOPS


def _bandwidth_test(params: Mapping[str, Any]) -> bool:
    bs = params.get("bs")
    return params.get("rw") in SEQUENTIAL or (isinstance(bs, int) and bs >= BANDWIDTH_BS)


def tracking_value(metrics: Mapping[str, Any] | None, metric: str) -> float | None:
    """One result's tracking figure: ``metric`` summed over the directions that did IO (a
    65/35 mix: its read and write IOPS together). None when no direction did IO or moved
    anything, or a figure is not a number of 0 or more (the round has no figure)."""
    if not isinstance(metrics, Mapping):
        return None
    values = []
    for d in DIRECTIONS:
        section = metrics.get(d)
        if not isinstance(section, Mapping) or not section:
            continue
        value = _figure(section.get(metric))
        if value is None or value < 0:
            return None
        values.append(value)
    total = math.fsum(values)
    return total if total > 0 else None


def done(series_by_workload: Mapping[Any, Sequence[Entry]], rule: Rule, rounds: int) -> bool:
    """What a run asks after round ``rounds``: stop, because every workload's window ending
    at that round passes (a workload without a figure in it does not), or the run has made
    ``rule.max_rounds`` rounds. No workloads: nothing to wait for."""
    if rounds >= rule.max_rounds:
        return True
    for series in series_by_workload.values():
        window = judge(series, rule, last=rounds)
        if window is None or not window.steady:
            return False
    return True


def fio_window(steadystate: Mapping[str, Any] | None, metric: str, rule: Rule) -> Window | None:
    """fio's own ``ss=`` window (a result's ``metrics["steadystate"]``: one sample per
    second) judged by the PTS bounds, its seconds as rounds: what fio's one criterion did
    not look at. None without a window of at least two samples."""
    if not isinstance(steadystate, Mapping):
        return None
    samples = steadystate.get(BANDWIDTH if metric == BANDWIDTH else IOPS)
    if not isinstance(samples, list | tuple) or not 2 <= len(samples) <= MAX_WINDOW:
        return None
    seconds = Rule(len(samples), rule.range_pct, rule.slope_pct, len(samples))
    return judge([(i + 1, v) for i, v in enumerate(samples)], seconds)


# -- a stored run --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tracked:
    """One workload's convergence in a stored run, on one target; with many clients, of
    their aggregate (``client`` "all": what the rule judges) or of one client (its name:
    shown, not judged)."""

    target: str
    workload: str
    client: str | None  # None on one host
    clients: int | None  # how many clients ran the step (run --scale)
    convergence: Convergence

    @property
    def judged(self) -> bool:
        """The figure speaks for the whole step: one host, or the clients' aggregate."""
        return self.client is None or self.client == "all"


def stored_rule(run: RunRecord) -> Rule | None:
    """The PTS rule a run was made with (its suite definition's ``steady_state``); None for
    a run without one or with fio's in-job rule. ValueError for a stored rule that cannot
    be read (see :meth:`Rule.from_dict`)."""
    stored = run.suite_def.as_dict().get(RULE_KEY)
    if not isinstance(stored, Mapping) or stored.get("rule") != PTS:
        return None
    return Rule.from_dict(stored)


def run_convergence(run: RunRecord) -> list[Tracked]:
    """Each workload's convergence in a run made with ``--steady-state pts`` (none for any
    other run), in the order results show them: by target, client count, suite order, the
    clients' aggregate before each client. Its rounds are its results' repetitions; a
    round whose result failed is a round without a figure."""
    rule = stored_rule(run)
    if rule is None:
        return []
    measured: dict[tuple[str, str, str | None, int | None], set[int]] = {}
    for r in run.results:
        measured.setdefault((r.target, r.workload, r.client, r.clients), set()).add(r.repetition)
    out = []
    for g in groups(run, every_round=True):
        metric = tracking_metric(g.params)
        entries: list[Entry] = [
            (r.repetition, tracking_value(r.metrics, metric)) for r in g.results
        ]
        rounds = measured[(g.target, g.workload, g.client, g.clients)]
        # A round whose step failed has a result but no figure.
        entries += [(n, None) for n in sorted(rounds - {r.repetition for r in g.results})]
        found = convergence(entries, metric, rule, rounds=max(rounds))
        out.append(Tracked(g.target, g.workload, g.client, g.clients, found))
    return out
