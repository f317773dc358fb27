"""The run modes' plans without fio (engine/modes.py): which workload runs when on which
place, when rounds stop, and what a chooser is given; each place's steps numbered as the
progress display planned them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from iobench.analysis.steady import Rule
from iobench.engine.modes import Chosen, Driver, Planned, Repeat, SteadyRounds, upfront_steps
from iobench.engine.steps import Step
from iobench.model import Suite, Workload
from iobench.records import ResultRecord


def _w(name: str, rw: str = "randread") -> Workload:
    return Workload(name=name, rw=rw, bs=4096, iodepth=1, numjobs=1, runtime_s=1.0, ramp_s=0.0,
                    size=1 << 20)  # fmt: skip


SUITE = Suite("s", "two", (_w("a"), _w("b")), "builtin")


def _record(place: str, p: Planned, iops: float) -> ResultRecord:
    return ResultRecord(
        target=place, workload=p.workload.name, position=p.position, status="ok",
        params=p.workload.params, metrics={"read": {"iops": iops, "bw_bytes": iops * 4096}},
        job_file="", fio_argv=[], fio_rc=0, fio_version="fio-3.33", raw_output=None,
        fio_stdout=None, fio_stderr=None, error=None, started_at="", finished_at="",
        repetition=p.repetition,
    )  # fmt: skip


def drive(mode: Any, places: Sequence[str], iops: Mapping[str, Sequence[float]]) -> list[Step]:
    """The steps the driver runs; place ``x``'s round r measures ``iops[x][r - 1]``."""
    ran: list[Step] = []

    def run_one(place: str, p: Planned, step: Step) -> ResultRecord:
        ran.append(step)
        return _record(place, p, iops[place][p.repetition - 1])

    Driver(mode, run_one, label=lambda place: place, index=1).drive(places)
    return ran


def test_repeat_interleaves_places_and_matches_the_planned_steps() -> None:
    mode = Repeat(SUITE, 2)
    ran = drive(mode, ["/x", "/y"], {"/x": [1, 1], "/y": [1, 1]})
    assert [(s.name, s.target) for s in ran] == [
        ("a (1/2)", "/x"), ("a (1/2)", "/y"), ("b (1/2)", "/x"), ("b (1/2)", "/y"),
        ("a (2/2)", "/x"), ("a (2/2)", "/y"), ("b (2/2)", "/x"), ("b (2/2)", "/y"),
    ]  # fmt: skip
    # What the progress display was told up front is exactly what ran.
    assert upfront_steps(mode, ["/x", "/y"], 1) == ran


def test_rounds_stop_on_each_place_when_its_rule_holds() -> None:
    """/x is flat (steady at round 5); /y falls until round 4, then holds: its window is
    flat from round 4 to 8, steady at round 8. /x runs no round after its 5th."""
    mode = SteadyRounds(SUITE, Rule(max_rounds=12))
    flat = [100.0] * 12
    falling = [400.0, 300.0, 200.0, 100.0] + [100.0] * 8
    ran = drive(mode, ["/x", "/y"], {"/x": flat, "/y": falling})
    rounds = {place: max(s.repetition for s in ran if s.target == place) for place in ("/x", "/y")}
    assert rounds == {"/x": 5, "/y": 8}
    assert upfront_steps(mode, ["/x", "/y"], 1) == ran[: 5 * 2 * 2]
    assert ran[-1].name == "b (round 8)"


def test_rounds_end_at_the_cap_when_never_steady() -> None:
    mode = SteadyRounds(SUITE, Rule(max_rounds=7))
    swinging = [200.0, 100.0] * 10
    ran = drive(mode, ["/x"], {"/x": swinging})
    assert max(s.repetition for s in ran) == 7 and len(ran) == 14


class _Chooser:
    """Chooses c1, c2, c3 on every place, then stops; records what it was given."""

    budget_s = 60.0

    def __init__(self) -> None:
        self.given: list[tuple[int, dict[str, Any], float]] = []

    def next_workload(
        self, done: Sequence[ResultRecord], context: dict[str, Any], elapsed_s: float
    ) -> Workload | None:
        self.given.append((len(done), context, elapsed_s))
        chosen = len({r.workload for r in done})
        return _w(f"c{chosen + 1}") if chosen < 3 else None

    def definition(self) -> dict[str, Any]:
        return {"kind": "test"}


def test_a_chooser_serves_every_place_and_each_point_is_repeated() -> None:
    chooser = _Chooser()
    ran = drive(Chosen(chooser, 2), ["/x", "/y"], {"/x": [1, 1], "/y": [1, 1]})
    names = [(s.name, s.target) for s in ran]
    # Each point twice, the places' repetitions interleaved like any workload's.
    assert names[:4] == [("c1 (1/2)", "/x"), ("c1 (1/2)", "/y"), ("c1 (2/2)", "/x"),
                         ("c1 (2/2)", "/y")]  # fmt: skip
    assert len(ran) == 3 * 2 * 2
    # Each place's own results: 0, 2, 4, 6 of them as it asks (and once more to hear "none").
    assert [n for n, _, _ in chooser.given] == [0, 0, 2, 2, 4, 4, 6, 6]
