"""What a run is asked to do: one request for every way of running it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from iobench.errors import IobenchError
from iobench.model import Precondition, Suite, Workload

if TYPE_CHECKING:
    from iobench.clients import Client
    from iobench.records import ResultRecord


class Chooser(Protocol):
    """Chooses each next workload from the results so far (``iobench characterize``).

    The request's suite then holds the workloads the chooser may choose from in shape (for
    the safety checks and the test file's size); every workload it returns must read or
    write like them and be no larger.
    """

    budget_s: float  # the most the chosen workloads may take on one place

    def next_workload(
        self, done: Sequence[ResultRecord], context: dict[str, Any], elapsed_s: float
    ) -> Workload | None:
        """The next workload after ``done`` (one place's results: a target's, or the
        clients' aggregate at one count), on the target whose stored ``context`` is given
        (its cgroup throttles, ...), ``elapsed_s`` seconds of that place's steps in; None
        when there is none. One chooser serves every place: it keeps no state of its own."""
        ...

    def definition(self) -> dict[str, Any]:
        """What the chooser was asked, stored with the run (``suite_def["plan"]``)."""
        ...


@dataclass(frozen=True)
class RunRequest:
    """A suite on targets, on this host or (``clients`` given) on fio servers."""

    targets: tuple[str, ...]
    suite: Suite
    label: str | None = None
    destructive: bool = False
    overwrite_signatures: bool = False
    argv: tuple[str, ...] = ()
    repeat: int = 1  # run every workload (every chosen one) this many times
    chooser: Chooser | None = None  # adaptive: the chooser picks the workloads
    # --steady-state: rounds until the rule holds ({"rule": "pts", "window": 5, ...,
    # "round_time_s": ...}; iobench.analysis.steady.Rule), or fio's own ss= in each job
    # ({"rule": "fio", "criterion": ...}); None: the workloads as the suite says.
    steady_state: dict[str, Any] | None = None
    extra_definition: dict[str, Any] = field(default_factory=dict)  # e.g. a sweep's axes
    prefill: bool = False  # write the test area of a device or file before the workloads
    # --precondition, `iobench precondition`: each target's test area purged and filled
    # before the workloads (in place of the layout or prefill; engine/precondition.py).
    precondition: Precondition | None = None
    spec: str | None = None  # a provider spec to hold the volume to (iobench.specs)
    spec_params: dict[str, str] = field(default_factory=dict)
    # --pin-to-device: fio's jobs on the CPUs of each target's blk-mq queues (suites/pin.py)
    pin_to_device: bool = False
    # --clients: the fio servers that each run every workload on the one target directory,
    # with these client counts (``()``: all of them).
    clients: tuple[Client, ...] = ()
    scale: tuple[int, ...] = ()
    # How to reach network storage named as a target (--ceph-conf FILE ...).
    access: tuple[tuple[str, str], ...] = ()


@dataclass
class Outcome:
    """A stored run's id, how it ended, and the error that ended it (if any)."""

    run_id: int
    status: str
    error: IobenchError | None = None
    unstored: str | None = None  # why its end could not be stored (then it shows running)
    lost: bool = False  # the database is no longer at its path (lifecycle.RunEnd.lost)
