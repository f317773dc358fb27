"""What a run shows while it runs (issue 14, "Long runs"): the whole run's progress and
time left, corrected as steps finish; each finished step's figures as they come, a
repetition far from the earlier ones marked; plain lines off a terminal, a live display on
one that ends cleanly; and with --json nothing of it on stdout.

The estimate and the lines are pure and tested on made-up steps with a fake clock; the
CLI tests run real fio."""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import select
import struct
import subprocess
import sys
import termios
import threading
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text

from conftest import Cli
from iobench.engine.steps import (
    Measured,
    NullObserver,
    Step,
    StepEnd,
    Told,
    measured,
    observed,
)
from iobench.errors import FioFailed, Interrupted
from iobench.fio.runner import LiveStats
from iobench.model import Workload
from iobench.report.eta import Eta, clock_time, rough_duration, run_status
from iobench.report.progress import (
    Earlier,
    ProgressDisplay,
    figures_text,
    finished_line,
    layout_text,
    repetition_marks,
    step_label,
)
from iobench.units import format_iops

MiB = 2**20
NOON = datetime(2026, 11, 23, 12, 0, 0)


def _w(name: str, runtime_s: float = 60.0, ramp_s: float = 0.0) -> Workload:
    return Workload(name, "randread", 4096, 32, 1, runtime_s=runtime_s, ramp_s=ramp_s)


def _schedule(
    targets: list[str], names: list[str], repeat: int, layout_s: float = 11.0
) -> list[Step]:
    """Layouts, then repetitions x workloads x targets, each workload expected 60 s."""
    steps = [
        Step(
            i,
            t,
            "lay out test file",
            layout_s,
            None,
            layout_bytes=round((layout_s - 1) * 100 * MiB),
        )
        for i, t in enumerate(targets)
    ]
    for rep in range(1, repeat + 1):
        for name in names:
            for t in targets:
                steps.append(Step(len(steps), t, name, 60.0, _w(name), rep))
    return steps


# -- the estimate -----------------------------------------------------------------------------


def test_before_anything_ran_the_estimate_is_the_plan() -> None:
    steps = _schedule(["/a", "/b"], ["rr", "rw"], 3)
    eta = Eta(steps)
    assert (eta.done, eta.total) == (0, 14)
    assert eta.left_s(0.0) == pytest.approx(2 * 11 + 12 * 60)


def test_a_step_that_ends_early_shortens_its_repetitions_and_the_steps_not_yet_seen() -> None:
    """fio stopped rr at steady state after 20 s of 60: its next repetitions are predicted
    at 20 s; rw, not yet run, at 60 s times the median ratio of the workloads so far."""
    steps = _schedule(["/a"], ["rr", "rw"], 2)  # layout, rr, rw, rr, rw
    eta = Eta(steps)
    eta.finish(steps[0], 11.0)
    eta.finish(steps[1], 20.0)
    assert eta.predicted_s(steps[3]) == pytest.approx(20.0)  # rr's own repetition
    assert eta.predicted_s(steps[2]) == pytest.approx(20.0)  # 60 x (20 / 60)
    assert eta.left_s(31.0) == pytest.approx(60.0)
    eta.finish(steps[2], 66.0)  # rw ran its whole minute, and a little more
    assert eta.predicted_s(steps[4]) == pytest.approx(66.0)  # from rw itself now
    assert eta.predicted_s(steps[3]) == pytest.approx(20.0)
    # The running step: its prediction less what it has run, never below zero.
    assert eta.left_s(97.0, steps[3], 5.0) == pytest.approx(15.0 + 66.0)
    assert eta.left_s(120.0, steps[3], 30.0) == pytest.approx(66.0)


def test_a_slow_layout_moves_the_estimate_of_the_next_layout() -> None:
    """The first target's file was written at a third of the assumed 100 MiB/s: the second
    target's layout is predicted three times its expected time; while it runs, from the
    bytes it has written at the rate so far."""
    steps = _schedule(["/a", "/b"], ["rr"], 1, layout_s=11.0)
    eta = Eta(steps)
    eta.finish(steps[0], 33.0)
    assert eta.predicted_s(steps[1]) == pytest.approx(33.0)
    assert eta.left_s(33.0) == pytest.approx(33.0 + 2 * 60)
    half = steps[1].layout_bytes // 2
    live = LiveStats(20.0, None, None, half)  # half the file in 20 s: 20 s more
    assert eta.step_left_s(steps[1], 20.0, live) == pytest.approx(20.0)
    assert eta.left_s(53.0, steps[1], 20.0, live) == pytest.approx(20.0 + 2 * 60)
    # Too early to trust the rate (the file is being opened): the prediction stands.
    early = LiveStats(1.0, None, None, 1)
    assert eta.step_left_s(steps[1], 1.0, early) == pytest.approx(32.0)


def test_a_workload_on_another_target_is_predicted_from_the_same_workload_elsewhere() -> None:
    steps = _schedule(["/a", "/b"], ["rr", "rw"], 2)
    eta = Eta(steps)
    eta.finish(steps[0], 11.0)
    eta.finish(steps[1], 11.0)
    eta.finish(steps[2], 30.0)  # rr on /a
    b_rr = steps[3]
    assert (b_rr.target, b_rr.workload and b_rr.workload.name) == ("/b", "rr")
    assert eta.predicted_s(b_rr) == pytest.approx(30.0)
    eta.finish(b_rr, 50.0)
    assert eta.predicted_s(steps[7]) == pytest.approx(50.0)  # rr on /b, rep 2: its own


def test_failed_and_unplanned_steps() -> None:
    """A step that is not in the plan (an adaptive run's choice) counts as done, not
    against the plan; the same step told twice counts once."""
    steps = _schedule(["/a"], ["rr"], 1)
    eta = Eta(steps, budget_s=300.0)
    eta.finish(steps[0], 11.0)
    eta.finish(steps[0], 11.0)
    chosen = Step(0, "/a", "rr-qd1", 5.5, _w("rr-qd1", 5.0))
    eta.finish(chosen, 6.0)
    assert (eta.done, eta.total, eta.open_ended) == (2, 2, True)
    # At most the budget left, counted from the start; or what the plan still holds.
    assert eta.left_s(100.0) == pytest.approx(200.0)
    assert eta.left_s(290.0) == pytest.approx(60.0)


def test_rough_durations_and_clock_times() -> None:
    assert [rough_duration(s) for s in (0.4, 44.6, 61, 253, 599, 1850, 7500)] == [
        "0s", "45s", "1m", "4m15s", "10m", "31m", "2h05m",
    ]  # fmt: skip
    assert clock_time(NOON, 3 * 3600 + 120) == "15:02"
    assert clock_time(NOON, 13 * 3600) == "Tue 01:00"
    assert clock_time(NOON, 9 * 86400) == "2026-12-02 12:00"


def test_run_status_lines() -> None:
    steps = _schedule(["/a"], ["rr"], 2)
    eta = Eta(steps)
    eta.finish(steps[0], 11.0)
    assert run_status(eta, 11.0, 120.0, NOON) == "1/3 done, 11s elapsed, ~2m left, ends ~12:02"
    for step in steps[1:]:
        eta.finish(step, 60.0)
    assert run_status(eta, 131.0, 0.0, NOON) == "3/3 done in 2m10s"
    adaptive = Eta(steps[:1], budget_s=300.0)
    assert run_status(adaptive, 60.0, 240.0, NOON) == (
        "0 done, 1m elapsed, at most 4m left, ends by 12:04"
    )


# -- the lines --------------------------------------------------------------------------------


def test_a_step_label_names_the_workload_target_and_repetition() -> None:
    """The label is markup that shows the names as typed (rich's own text of it)."""

    def shown(markup: str) -> str:
        return Text.from_markup(markup).plain

    step = Step(4, "/srv/data", "randread-4k-qd32 (2/3)", 60.0, _w("randread-4k-qd32"), 2)
    assert shown(step_label(step, 5, 36, 3)) == "[5/36] randread-4k-qd32 on /srv/data (rep 2/3)"
    # A run that chooses its steps as it goes: the step's name says its round or repetition.
    assert shown(step_label(step, 5, None, 1)) == "[5] randread-4k-qd32 (2/3) on /srv/data"
    rounds = Step(9, "/srv/data", "rw65-35-4k (round 7)", 2.0, _w("rw65-35-4k"), 7)
    assert shown(step_label(rounds, 61, None, 5)) == "[61] rw65-35-4k (round 7) on /srv/data"
    once = Step(4, "/srv/data", "randread-4k-qd32", 60.0, _w("randread-4k-qd32"), 1)
    assert shown(step_label(once, 5, None, 1)) == "[5] randread-4k-qd32 on /srv/data"
    hostile = Step(0, "/t/[red]x\x1b[2J\\", "[bold]w\n", 60.0, _w("[/]w\n"))
    assert shown(step_label(hostile, 1, 2, 1)) == "[1/2] [/]w\\n on /t/[red]x\\x1b[2J\\"


def test_figures_of_each_direction_and_of_a_layout() -> None:
    mixed = (
        Measured("read", 8610.0, 33.6 * MiB, 1.21e6),
        Measured("write", 3690.0, 14.4 * MiB, 2.3e6),
    )
    assert figures_text(mixed) == (
        "read 8.61k IOPS, 33.6 MiB/s, p99 1.21 ms; write 3.69k IOPS, 14.4 MiB/s, p99 2.30 ms"
    )
    assert figures_text((Measured("read", None, None, None),)) == "read - IOPS, -, p99 -"
    assert layout_text((Measured("write", 25.0, 97.5 * MiB, 1e6),), 42.26) == (
        "written in 42.3s, 97.5 MiB/s"
    )
    assert layout_text((), 125.0) == "written in 2m05s"


def test_measured_reads_the_stored_metrics() -> None:
    metrics = {
        "read": {"iops": 100.0, "bw_bytes": 409600.0, "lat_ns": {"p99": 1500}},
        "write": None,
        "trim": None,
    }
    assert measured(metrics) == (Measured("read", 100.0, 409600.0, 1500),)
    assert measured(None) == ()
    assert measured({"read": {"iops": 1.0, "bw_bytes": 2.0, "lat_ns": None}}) == (
        Measured("read", 1.0, 2.0, None),
    )


def test_a_repetition_more_than_twice_away_from_every_earlier_one_is_marked() -> None:
    def m(read: float, write: float | None = None) -> tuple[Measured, ...]:
        out = (Measured("read", read, read * 4096, 1e5),)
        return out if write is None else (*out, Measured("write", write, write * 4096, 1e5))

    first = [Earlier(1, {"read": 12300.0})]
    assert repetition_marks(first, m(3967.0)) == ["read IOPS 3.1x lower than rep 1"]
    assert repetition_marks(first, m(30000.0)) == ["read IOPS 2.4x higher than rep 1"]
    assert repetition_marks(first, m(6150.0)) == []  # exactly half: not more than 2x
    assert repetition_marks([], m(1.0)) == []  # the first repetition has nothing to differ from
    # Against several: only when far from every one, by the nearest.
    two = [Earlier(1, {"read": 1000.0}), Earlier(2, {"read": 3000.0})]
    assert repetition_marks(two, m(2500.0)) == []
    assert repetition_marks(two, m(9000.0)) == ["read IOPS 3.0x higher than every earlier rep"]
    # Each direction on its own; a direction the earlier ones did not have is not judged.
    mixed = [Earlier(1, {"read": 1000.0})]
    assert repetition_marks(mixed, m(1100.0, 50.0)) == []
    assert repetition_marks([Earlier(1, {"read": 1000.0, "write": 500.0})], m(1100.0, 50.0)) == [
        "write IOPS 10.0x lower than rep 1"
    ]


def test_finished_lines_for_each_outcome() -> None:
    step = Step(1, "/a", "rr", 60.0, _w("rr"))
    done = StepEnd("done", (Measured("read", 12345.0, 48.2 * MiB, 1.21e6),))
    assert finished_line("L", step, done, 60.0, [], "2/3 done") == (
        "L: read 12.3k IOPS, 48.2 MiB/s, p99 1.21 ms [dim]| 2/3 done[/]"
    )
    assert finished_line("L", step, done, 60.0, ["read IOPS 3.1x lower than rep 1"], "s") == (
        "L: read 12.3k IOPS, 48.2 MiB/s, p99 1.21 ms [yellow]! read IOPS 3.1x lower than rep 1[/]"
        " [dim]| s[/]"
    )
    failed = StepEnd("failed", error="fio exited with 1. fio said: [x]\nboom", notes=("c2 died",))
    assert finished_line("L", step, failed, 3.0, [], "s") == (
        r"L: [red]failed[/]: fio exited with 1. fio said: \[x]\nboom [yellow]! c2 died[/]"
    )
    assert finished_line("L", step, StepEnd("interrupted"), 3.0, [], "s") == (
        "L: [yellow]interrupted[/]"
    )
    long = StepEnd("failed", error="x" * 1000)
    assert len(finished_line("L", step, long, 3.0, [], "s")) < 330


# -- the observer as the engine tells it ------------------------------------------------------


class Ends(NullObserver):
    """An observer that keeps how each step ended."""

    def __init__(self) -> None:
        self.ends: list[StepEnd] = []

    def finished(self, step: Step, end: StepEnd) -> None:
        self.ends.append(end)


def test_observed_tells_the_figures_the_error_or_the_interrupt() -> None:
    obs = Ends()
    step = Step(0, "/a", "rr", 1.0, _w("rr"))
    with observed(obs, step) as told:
        assert isinstance(told, Told)
        told.metrics = {"read": {"iops": 5.0, "bw_bytes": 20480.0, "lat_ns": {"p99": 7}}}
        told.notes.append("client c1 failed: gone")
    with pytest.raises(FioFailed), observed(obs, step):
        raise FioFailed("fio did not finish within 61 s (runtime plus margin) and was stopped")
    with pytest.raises(Interrupted), observed(obs, step):
        raise Interrupted("stopped by SIGTERM")
    assert obs.ends == [
        StepEnd("done", (Measured("read", 5.0, 20480.0, 7),), notes=("client c1 failed: gone",)),
        StepEnd(
            "failed", error="fio did not finish within 61 s (runtime plus margin) and was stopped"
        ),
        StepEnd("interrupted"),
    ]


# -- the display ------------------------------------------------------------------------------


class Clock:
    """Monotonic seconds that move when a test says, and the wall clock with them (from
    noon)."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def now(self) -> datetime:
        return NOON + timedelta(seconds=self.t - 1000.0)


def _display(clock: Clock, terminal: bool = False) -> tuple[ProgressDisplay, io.StringIO]:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=terminal, width=160)
    return ProgressDisplay(console, clock=clock, now=clock.now), buf


def _done(iops: float, write: float | None = None) -> StepEnd:
    figures = [Measured("read", iops, iops * 4096, 250e3)]
    if write is not None:
        figures.append(Measured("write", write, write * 4096, 900e3))
    return StepEnd("done", tuple(figures))


def _play(
    display: ProgressDisplay, clock: Clock, steps: list[Step], timings: list[tuple[float, StepEnd]]
) -> None:
    for step, (seconds, end) in zip(steps, timings, strict=False):
        display.started(step)
        clock.t += seconds
        display.finished(step, end)


def test_off_a_terminal_one_plain_line_per_finished_step() -> None:
    """The plan with its end; each step with its figures and the whole run's status, the
    estimate corrected as steps finish; a far-off repetition marked; a failed step says why.
    No control character."""
    clock = Clock()
    display, buf = _display(clock)
    steps = _schedule(["/a"], ["rr", "mix"], 2)  # layout 11 s, then 4 x 60 s
    display.planned(steps)
    _play(display, clock, steps, [
        (33.0, StepEnd("done", (Measured("write", 300.0, 33 * MiB, 2e7),))),
        (20.0, _done(12300.0)),  # steady after 20 s
        (61.0, _done(8610.0, 3690.0)),
        (20.0, _done(3967.0)),  # a third of rep 1
        (3.0, StepEnd("failed", error="fio reported error 5 (Input/output error). fio said: x")),
    ])  # fmt: skip
    display.close()
    assert buf.getvalue().splitlines() == [
        "iobench: 5 steps on 1 target(s), 2 repetitions, about 4m11s, ends ~12:04",
        "[1/5] lay out test file on /a: written in 33s, 33.0 MiB/s | 1/5 done, 33s elapsed, "
        "~4m left, ends ~12:04",
        "[2/5] rr on /a (rep 1/2): read 12.3k IOPS, 48.0 MiB/s, p99 250 µs | 2/5 done, 53s "
        "elapsed, ~1m left, ends ~12:01",
        "[3/5] mix on /a (rep 1/2): read 8.61k IOPS, 33.6 MiB/s, p99 250 µs; write 3.69k IOPS, "
        "14.4 MiB/s, p99 900 µs | 3/5 done, 1m55s elapsed, ~1m20s left, ends ~12:03",
        "[4/5] rr on /a (rep 2/2): read 3.97k IOPS, 15.5 MiB/s, p99 250 µs ! read IOPS 3.1x "
        "lower than rep 1 | 4/5 done, 2m15s elapsed, ~1m left, ends ~12:03",
        "[5/5] mix on /a (rep 2/2): failed: fio reported error 5 (Input/output error). fio said: x",
    ]


def test_off_a_terminal_a_long_step_says_now_and_then_that_it_runs() -> None:
    clock = Clock()
    display, buf = _display(clock)
    steps = _schedule(["/a"], ["rr"], 1, layout_s=1801.0)  # 175 GiB at 100 MiB/s
    display.planned(steps)
    display.started(steps[0])
    for second in range(1, 700):
        clock.t += 1
        # Written at half the speed assumed.
        moved = round(second * 50 * MiB)
        display.progress(steps[0], LiveStats(float(second), 100.0, 50 * MiB, moved))
    display.close()
    lines = buf.getvalue().splitlines()
    assert lines[1:] == [
        "[1/2] lay out test file on /a: still running after 5m | 0/2 done, 5m elapsed, "
        "~56m left, ends ~13:01",
        "[1/2] lay out test file on /a: still running after 10m | 0/2 done, 10m elapsed, "
        "~51m left, ends ~13:01",
    ]


def test_an_adaptive_run_says_at_most() -> None:
    clock = Clock()
    display, buf = _display(clock)
    layout = Step(0, "/a", "lay out test file", 11.0, None, layout_bytes=1000 * MiB)
    display.planned([layout], budget_s=300.0)
    _play(display, clock, [layout, Step(0, "/a", "rr-qd1", 3.5, _w("rr-qd1", 3.0))], [
        (11.0, StepEnd("done")), (4.0, _done(5000.0)),
    ])  # fmt: skip
    assert buf.getvalue().splitlines() == [
        "iobench: adaptive, each step chosen from the ones before, at most 5m, ends by 12:05",
        "[1] lay out test file on /a: written in 11s | 1 done, 11s elapsed, at most 4m50s "
        "left, ends by 12:05",
        "[2] rr-qd1 on /a: read 5.00k IOPS, 19.5 MiB/s, p99 250 µs | 2 done, 15s elapsed, at "
        "most 4m45s left, ends by 12:05",
    ]


def test_rounds_until_steady_say_their_least_rounds_and_their_most_time() -> None:
    clock = Clock()
    display, buf = _display(clock)
    first = [Step(i, "/a", f"rr (round {i + 1})", 2.0, _w("rr", 1.0), i + 1) for i in range(5)]
    display.planned(first, budget_s=50.0)
    assert buf.getvalue().splitlines()[0] == (
        "iobench: in rounds until steady state: 5 rounds at least, at most 50s, ends by "
        "12:00 at the latest"
    )


def test_on_a_terminal_the_live_display_shows_the_run_and_the_step_and_ends_cleanly() -> None:
    clock = Clock()
    display, buf = _display(clock, terminal=True)
    steps = _schedule(["/a"], ["rr"], 1)
    display.planned(steps)
    display.started(steps[0])
    clock.t += 11
    display.finished(steps[0], StepEnd("done"))
    display.started(steps[1])
    clock.t += 20
    display.progress(steps[1], LiveStats(20.0, 12345.0, 50 * MiB, 1))
    display._progress.refresh()  # type: ignore[union-attr]
    live = buf.getvalue()
    clock.t += 40
    display.finished(steps[1], _done(12300.0))
    display.close()
    text = buf.getvalue()
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    assert "run: 1/2 done, 31s elapsed, ~40s left, ends ~12:01" in re.sub(
        r"\x1b\[[0-9;?]*[A-Za-z]", "", live
    )
    assert "[2/2] rr on /a: 12.3k IOPS 50.0 MiB/s, 40s left" in re.sub(
        r"\x1b\[[0-9;?]*[A-Za-z]", "", live
    )
    assert "[1/2] lay out test file on /a: written in 11s" in plain
    assert "[2/2] rr on /a: read 12.3k IOPS, 48.0 MiB/s, p99 250 µs | 2/2 done in 1m10s" in plain
    # The cursor shown again and the live lines erased: the display ended.
    assert text.endswith("\x1b[?25h\r\x1b[1A\x1b[2K"), text[-80:]
    assert display._progress is None


def test_the_live_display_survives_its_refresh_thread_while_steps_finish(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """rich redraws from a thread of its own while the engine's thread adds what each step
    took: many steps, quickly, with the display refreshing all along."""
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    display = ProgressDisplay(console)
    steps = _schedule(["/a", "/b"], [f"w{i}" for i in range(50)], 4, layout_s=1.5)
    errors: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    display.planned(steps)
    assert display._progress is not None
    try:
        for step in steps:
            display.started(step)
            display.progress(step, LiveStats(0.1, 1.0, 1.0, 1))
            display._progress.refresh()
            display.finished(step, _done(100.0))
    finally:
        display.close()
    assert errors == []
    assert f"[{len(steps)}/{len(steps)}]" in console.file.getvalue()  # type: ignore[attr-defined]


# -- a real run -------------------------------------------------------------------------------

_LINE = re.compile(
    r"^\[(?P<n>\d)/5\] (?P<w>rr|rw) on (?P<t>\S+) \(rep (?P<rep>\d)/2\): (?P<dir>read|write) "
    r"(?P<iops>\S+) IOPS, \S+ \S+, p99 \S+ \S+(?: ! .*)? \| (?P=n)/5 done"
)


def test_a_run_prints_each_step_with_its_numbers_and_json_stays_clean(
    cli: Cli, real_fio: str, tmp_path: Path, mini_suite: str
) -> None:
    """2 workloads x --repeat 2: each finished step's line carries the figures that were
    stored (the same IOPS as the JSON document), the n/N counter and the time left; stdout
    holds only the JSON document."""
    code, out, err = cli("run", str(tmp_path), "--suite", mini_suite, "--repeat", "2", "--json")
    assert code == 0, err
    doc = json.loads(out)  # stdout is the JSON document and nothing else
    assert out.lstrip().startswith("{") and out.rstrip().endswith("}")
    lines = err.splitlines()
    assert re.match(
        r"iobench: 5 steps on 1 target\(s\), 2 repetitions, about \S+, ends ~\d\d:\d\d$", lines[0]
    ), lines[0]
    assert re.match(
        r"\[1/5\] lay out test file on \S+: written in \S+, \S+ \S+ \| "
        r"1/5 done, \S+ elapsed, ~\S+ left, ends ~",
        lines[1],
    ), lines[1]
    seen = {}
    for line in lines[2:6]:
        m = _LINE.match(line)
        assert m, line
        seen[(m["w"], int(m["rep"]))] = (m["dir"], m["iops"], int(m["n"]))
    assert re.search(r"\| 5/5 done in \S+$", lines[5]), lines[5]
    assert all("\x1b" not in line and "\r" not in line for line in lines)
    for r in doc["results"]:
        d = "read" if r["workload"] == "rr" else "write"
        assert seen[(r["workload"], r["repetition"])][:2] == (d, format_iops(r[d]["iops"]))
    assert [n for _, _, n in sorted(seen.values(), key=lambda v: v[2])] == [2, 3, 4, 5]


def test_a_run_on_a_terminal_draws_the_live_display_and_leaves_it_cleanly(
    real_fio: str, tmp_path: Path, mini_suite: str, isolated_db: Path
) -> None:
    """The real CLI with stdout and stderr on a pseudo-terminal: the live display runs
    (rich draws and hides the cursor), every step's line is printed, the cursor comes back
    and the table follows."""
    primary, secondary = os.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "COLUMNS": "120",
        "LINES": "40",
        "IOBENCH_DB": str(isolated_db),
    }
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "iobench", "run", str(tmp_path), "--suite", mini_suite,
         "--runtime", "2s"],
        stdin=subprocess.DEVNULL, stdout=secondary, stderr=secondary, env=env,
    )  # fmt: skip
    os.close(secondary)
    said = b""
    try:
        while True:
            ready, _, _ = select.select([primary], [], [], 60)
            assert ready, "no output for 60 s"
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # EIO: the terminal closed
                break
            if not chunk:
                break
            said += chunk
        assert proc.wait(timeout=30) == 0, said.decode(errors="replace")
    finally:
        os.close(primary)
        if proc.poll() is None:
            proc.kill()
    text = said.decode()
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    assert "\x1b[?25l" in text and "\x1b[?25h" in text  # the live display ran and ended
    assert "run: 0/3 done" in plain  # the whole run's line, live
    for n, name in ((2, "rr"), (3, "rw")):
        assert re.search(rf"\[{n}/3\] {name} on \S+: (read|write) \S+ IOPS", plain), plain
    assert "3/3 done in" in plain
    # The live lines were erased before the run's table was printed.
    assert text.rindex("run: ") < text.rindex("\x1b[2K") < text.index("workload")


def test_a_failed_step_is_no_longer_left_nor_a_measure_of_the_others() -> None:
    """A step that failed is over: the run's time left drops it, and the last line says the
    run is done; its time (a failure is often quick) predicts nothing."""
    steps = _schedule(["/a"], ["rr"], 2)
    eta = Eta(steps)
    eta.finish(steps[0], 11.0)
    eta.finish(steps[1], 2.0, learn=False)  # rr, rep 1: failed after 2 s
    assert eta.done == 2
    assert eta.predicted_s(steps[2]) == pytest.approx(steps[2].expected_s)  # not 2 s
    assert eta.left_s(13.0) == pytest.approx(steps[2].expected_s)
    clock = Clock()
    display, buf = _display(clock)
    display.planned(steps)
    _play(display, clock, steps, [
        (11.0, StepEnd("done", (Measured("write", 300.0, 33 * MiB, 2e7),))),
        (2.0, StepEnd("failed", error="fio reported error 5 (Input/output error)")),
        (60.0, _done(12300.0)),
    ])  # fmt: skip
    display.close()
    assert re.search(r"\| 3/3 done in \S+$", buf.getvalue().splitlines()[-1])
