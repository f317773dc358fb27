"""Live progress on stderr: the whole run (steps done, time elapsed and left, the expected
end), the running step, and each finished step's figures as they come.

On a terminal a rich display keeps a line for the run and one for the running step (with
the IOPS and bandwidth of fio's last one-second snapshot) below the finished steps' lines.
Elsewhere (CI logs, pipes) only plain lines: one per finished step, each with the whole
run's status, and a note every few minutes while a long step runs. Every string from data
(workload names, targets, fio's messages) is printed through :mod:`iobench.report.literal`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, Task, TaskID
from rich.table import Column
from rich.text import Text

from iobench.engine.steps import Measured, Step, StepEnd
from iobench.fio.runner import LiveStats
from iobench.report.eta import Eta, clock_time, rough_duration, run_status
from iobench.report.literal import literal, markup_literal
from iobench.units import format_duration, format_iops, format_ns, format_rate

# Off a terminal, a step still running says so this often (seconds).
NOTE_EVERY_S = 300.0
# A repetition this many times above or below every earlier one of the same workload on
# the same target is marked as it comes.
REPEAT_RATIO = 2.0
# An error's message in a step's line is cut here (the whole of it follows the run).
ERROR_CHARS = 300


def _now() -> datetime:
    return datetime.now().astimezone()


# -- the lines (pure) -------------------------------------------------------------------------


def step_label(step: Step, ordinal: int, total: int | None, repeat: int) -> str:
    """``[4/36] randread-4k on /data (rep 2/3)`` as markup, data escaped; ``total`` None
    for a run that chooses its steps as it goes, whose steps' names say their round
    (``randread-4k (round 7)``)."""
    count = f"{ordinal}" if total is None else f"{ordinal}/{total}"
    name = step.name if step.workload is None or total is None else step.workload.name
    shown = total is not None and repeat > 1 and step.workload
    rep = f" (rep {step.repetition}/{repeat})" if shown else ""
    return markup_literal(f"[{count}] {name} on {step.target}") + rep


def figures_text(measured: Sequence[Measured]) -> str:
    """``read 12.3k IOPS, 48.1 MiB/s, p99 1.21 ms; write ...``: each direction that did IO."""
    return "; ".join(
        f"{m.direction} {format_iops(m.iops)} IOPS, {format_rate(m.bw_bytes)}, "
        f"p99 {format_ns(m.p99_ns)}"
        for m in measured
    )


def layout_text(measured: Sequence[Measured], taken_s: float) -> str:
    """``written in 42s, 97.5 MiB/s``: how long a layout took and how fast it wrote."""
    rate = next((m.bw_bytes for m in measured if m.direction == "write"), None)
    said = f"written in {format_duration(round(taken_s, 1 if taken_s < 60 else None))}"
    return said if rate is None else f"{said}, {format_rate(rate)}"


@dataclass(frozen=True)
class Earlier:
    """A finished repetition's IOPS by direction."""

    repetition: int
    iops: dict[str, float]


def repetition_marks(earlier: Sequence[Earlier], measured: Sequence[Measured]) -> list[str]:
    """What stands out in a repetition against the earlier ones of the same workload on
    the same target: a direction whose IOPS are more than :data:`REPEAT_RATIO` times above
    or below every earlier repetition's (``read IOPS 3.1x lower than rep 1``). Repetitions
    run minutes apart on the same storage; so far apart, one of them is not to be trusted
    (a cache, a burst budget spent, a neighbour, a throttle)."""
    marks = []
    for m in measured:
        before = [(e.repetition, e.iops[m.direction]) for e in earlier if e.iops.get(m.direction)]
        if not before or not m.iops:
            continue
        rep, nearest = min(before, key=lambda b: abs(_log_ratio(m.iops or 0.0, b[1])))
        ratio = max(m.iops / nearest, nearest / m.iops)
        if ratio <= REPEAT_RATIO:
            continue
        which = f"rep {rep}" if len(before) == 1 else "every earlier rep"
        how = "higher" if m.iops > nearest else "lower"
        marks.append(f"{m.direction} IOPS {ratio:.1f}x {how} than {which}")
    return marks


def _log_ratio(a: float, b: float) -> float:
    return max(a, b) / min(a, b) if a > 0 and b > 0 else float("inf")


def one_line(text: str, limit: int = ERROR_CHARS) -> str:
    """A message for a step's line: escaped (its newlines too, so it stays on one line),
    cut at ``limit``."""
    flat = literal(text)
    return markup_literal(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def finished_line(
    label: str, step: Step, end: StepEnd, taken_s: float, marks: Sequence[str], status: str
) -> str:
    """One finished step as markup: ``LABEL: figures`` (a layout: its time and rate; a
    step without fio: what it did), ``failed: why`` or ``interrupted``, the marks and
    notes, then the run's status."""
    if end.outcome == "done":
        said = figures_text(end.measured) if step.workload else layout_text(end.measured, taken_s)
        said = one_line(end.said) if end.said else said or "done"
    elif end.outcome == "interrupted":
        said = "[yellow]interrupted[/]"
    else:
        said = "[red]failed[/]" + (f": {one_line(end.error)}" if end.error else "")
    extra = [f"[yellow]! {mark}[/]" for mark in marks]
    extra += [f"[yellow]! {one_line(note)}[/]" for note in end.notes]
    line = f"{label}: {said}" + "".join(f" {e}" for e in extra)
    return line + (f" [dim]| {status}[/]" if end.outcome == "done" and status else "")


# -- the display ------------------------------------------------------------------------------


class _Markup(ProgressColumn):
    """A column whose markup is computed when the display refreshes."""

    def __init__(self, text: Callable[[Task], str], column: Column | None = None) -> None:
        super().__init__(table_column=column)
        self._text = text

    def render(self, task: Task) -> Text:
        return Text.from_markup(self._text(task))


class ProgressDisplay:
    """The :class:`iobench.engine.Observer` that shows a run on ``console`` (stderr).
    ``clock`` (monotonic seconds) and ``now`` (the wall clock) can be given by tests."""

    def __init__(
        self,
        console: Console,
        *,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = _now,
    ) -> None:
        self.console = console
        self.live = console.is_terminal
        self._clock = clock
        self._now = now
        self._eta = Eta(())
        # rich's refresh thread reads the estimate while the engine's thread adds to it.
        self._lock = threading.Lock()
        self._repeat = 1
        self._begun = clock()  # when the run began (planned sets it again)
        self._ordinal = 0  # steps started
        self._step: Step | None = None  # running
        self._step_begun = 0.0
        self._stats: LiveStats | None = None  # the running step's latest
        self._note_at = NOTE_EVERY_S
        self._earlier: dict[tuple[str, str], list[Earlier]] = {}
        self._progress: Progress | None = None
        self._run_task: TaskID | None = None
        self._step_task: TaskID | None = None

    # -- what the engine tells ------------------------------------------------------------

    def planned(self, steps: Sequence[Step], budget_s: float | None = None) -> None:
        with self._lock:
            self._eta = Eta(list(steps), budget_s)
        self._repeat = max((s.repetition for s in steps), default=1)
        self._begun = self._clock()
        self.console.print(self._plan_line(steps, budget_s), highlight=False)
        if not self.live:
            return
        # The bars first, at a fixed width, then the text, which wraps on a narrow terminal.
        self._progress = Progress(
            SpinnerColumn(),
            BarColumn(bar_width=20),
            _Markup(lambda task: f"{task.percentage:>3.0f}%"),
            _Markup(self._info, Column(overflow="fold")),
            console=self.console,
            transient=True,
        )
        self._run_task = self._progress.add_task("run", total=1.0)
        self._progress.start()
        self._update_bars()

    def started(self, step: Step) -> None:
        self._ordinal += 1
        self._step, self._step_begun, self._stats = step, self._clock(), None
        self._note_at = NOTE_EVERY_S
        if self._progress is not None:
            with self._lock:
                total = max(self._eta.predicted_s(step), 1.0)
            self._step_task = self._progress.add_task(self._label(step), total=total)
            self._update_bars()

    def progress(self, step: Step, stats: LiveStats) -> None:
        self._stats = stats
        if self._progress is not None:
            self._update_bars()
            return
        if stats.elapsed_s >= self._note_at:  # off a terminal: now and then a note
            self._note_at += NOTE_EVERY_S
            self.console.print(
                f"{self._label(step)}: still running after "
                f"{rough_duration(stats.elapsed_s)} | {self._status()}",
                highlight=False,
            )

    def finished(self, step: Step, end: StepEnd) -> None:
        taken = self._clock() - self._step_begun if self._step is not None else 0.0
        self._step, self._stats = None, None
        with self._lock:
            self._eta.finish(step, taken, learn=end.outcome == "done")
        marks = self._remember(step, end)
        line = finished_line(self._label(step), step, end, taken, marks, self._status())
        if self._progress is not None and self._step_task is not None:
            self._progress.remove_task(self._step_task)
            self._step_task = None
            self._update_bars()
        self.console.print(line, highlight=False)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    # -- helpers ----------------------------------------------------------------------------

    def _label(self, step: Step) -> str:
        total = None if self._eta.open_ended else self._eta.total
        return step_label(step, self._ordinal, total, self._repeat)

    def _plan_line(self, steps: Sequence[Step], budget_s: float | None) -> str:
        with self._lock:
            left = self._eta.left_s(0.0)
        about, ends = format_duration(round(left)), clock_time(self._now(), left)
        if budget_s is not None and any(s.workload for s in steps):  # steady-state rounds
            rounds = max(s.repetition for s in steps)
            return (
                f"[bold]iobench[/]: in rounds until steady state: {rounds} rounds at least, "
                f"at most {about}, ends by {ends} at the latest"
            )
        if budget_s is not None:
            return (
                "[bold]iobench[/]: adaptive, each step chosen from the ones before, at most "
                f"{about}, ends by {ends}"
            )
        targets = len({s.target for s in steps})
        reps = f", {self._repeat} repetitions" if self._repeat > 1 else ""
        return (
            f"[bold]iobench[/]: {len(steps)} steps on {targets} target(s){reps}, "
            f"about {about}, ends ~{ends}"
        )

    def _left(self) -> tuple[float, float]:
        """(the run's elapsed time, its time left) now."""
        elapsed = self._clock() - self._begun
        step, stats = self._step, self._stats
        step_elapsed = self._clock() - self._step_begun
        with self._lock:
            return elapsed, self._eta.left_s(elapsed, step, step_elapsed, stats)

    def _step_left(self, step: Step) -> tuple[float, float]:
        """(the running step's elapsed time, its time left) now."""
        step_elapsed = self._clock() - self._step_begun
        with self._lock:
            return step_elapsed, self._eta.step_left_s(step, step_elapsed, self._stats)

    def _status(self) -> str:
        elapsed, left = self._left()
        return run_status(self._eta, elapsed, left, self._now())

    def _remember(self, step: Step, end: StepEnd) -> list[str]:
        """The repetition's marks (against the earlier ones), and it remembered."""
        if step.workload is None or end.outcome != "done":
            return []
        earlier = self._earlier.setdefault((step.workload.name, step.target), [])
        marks = repetition_marks(earlier, end.measured)
        iops = {m.direction: m.iops for m in end.measured if m.iops}
        earlier.append(Earlier(step.repetition, iops))
        return marks

    def _info(self, task: Task) -> str:
        """The markup after a bar: the run's status, or the running step's live figures
        and time left. Called by rich's refresh thread: it reads, never changes."""
        if task.id == self._run_task:
            return f"run: {self._status()}"
        step, stats = self._step, self._stats
        if step is None:
            return task.description
        said = []
        if stats is not None and stats.iops is not None and stats.bw_bytes is not None:
            said.append(f"{format_iops(stats.iops)} IOPS {format_rate(stats.bw_bytes)}")
        said.append(f"{rough_duration(self._step_left(step)[1])} left")
        return f"{task.description}: {', '.join(said)}"

    def _update_bars(self) -> None:
        if self._progress is None or self._run_task is None:
            return
        elapsed, left = self._left()
        self._progress.update(self._run_task, completed=elapsed, total=max(elapsed + left, 1e-9))
        if self._step_task is not None and self._step is not None:
            step_elapsed, step_left = self._step_left(self._step)
            self._progress.update(
                self._step_task, completed=step_elapsed, total=max(step_elapsed + step_left, 1e-9)
            )
