"""Live progress on stderr: a bar for the suite and one for the running workload.

On a terminal this is a rich progress display with ETA and the IOPS/bandwidth fio reported
in its last one-second snapshot; elsewhere (CI logs, pipes) one plain line per step.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)

from iobench.engine.steps import Step
from iobench.fio.runner import LiveStats
from iobench.report.literal import markup_literal
from iobench.units import format_duration, format_iops, format_rate


class ProgressDisplay:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.live = console.is_terminal
        self._steps: list[Step] = []
        self._open_ended = False
        self._started = 0.0
        self._done_s = 0.0
        self._progress: Progress | None = None
        self._suite: TaskID | None = None
        self._current: TaskID | None = None

    def planned(self, steps: Sequence[Step], budget_s: float | None = None) -> None:
        self._steps = list(steps)
        self._open_ended = budget_s is not None
        total = sum(s.expected_s for s in steps) + (budget_s or 0.0)
        if budget_s is not None:
            self.console.print(
                f"[bold]iobench[/]: adaptive, each step chosen from the ones before, at most "
                f"{format_duration(round(total))}",
                highlight=False,
            )
        else:
            targets = len({s.target for s in steps})
            self.console.print(
                f"[bold]iobench[/]: {len(steps)} steps on {targets} target(s), "
                f"about {format_duration(round(total))}",
                highlight=False,
            )
        if not self.live:
            return
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[live]}"),
            console=self.console,
            transient=True,
        )
        self._suite = self._progress.add_task("suite", total=total, live="")
        self._progress.start()

    def _label(self, step: Step) -> str:
        count = "" if self._open_ended else f"/{len(self._steps)}"
        return markup_literal(f"[{step.index + 1}{count}] {step.name} on {step.target}")

    def started(self, step: Step) -> None:
        self._started = time.monotonic()
        if self._progress is None:
            self.console.print(self._label(step) + " ...", highlight=False)
            return
        self._current = self._progress.add_task(self._label(step), total=step.expected_s, live="")

    def progress(self, step: Step, stats: LiveStats) -> None:
        if self._progress is None or self._current is None or self._suite is None:
            return
        live = ""
        if stats.iops is not None and stats.bw_bytes is not None:
            live = f"{format_iops(stats.iops)} IOPS  {format_rate(stats.bw_bytes)}"
        elapsed = min(stats.elapsed_s, step.expected_s)
        self._progress.update(self._current, completed=elapsed, live=live)
        self._progress.update(self._suite, completed=self._done_s + elapsed)

    def finished(self, step: Step, outcome: str) -> None:
        # What the step took (fio may stop early, at steady state), up to what it should.
        taken = time.monotonic() - self._started if self._started else step.expected_s
        self._done_s += min(taken, step.expected_s)
        if self._progress is None:
            if outcome != "done":
                self.console.print(f"{self._label(step)} {outcome}", highlight=False)
            return
        if self._current is not None:
            self._progress.remove_task(self._current)
            self._current = None
        if self._suite is not None:
            self._progress.update(self._suite, completed=self._done_s)
        mark = {"done": "[green]done[/]", "interrupted": "[yellow]interrupted[/]"}.get(
            outcome, "[red]failed[/]"
        )
        self._progress.console.print(f"{self._label(step)} {mark}", highlight=False)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
