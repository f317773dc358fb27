"""One engine for every run: a request, a preflight that checks it before anything runs,
a schedule of steps, one lifecycle (:func:`~iobench.engine.lifecycle.recorded_run`) and
executors that differ only in how a step reaches fio: on this host
(:mod:`~iobench.engine.local`) or through fio servers (:mod:`~iobench.engine.remote`).

    request -> preflight -> execute -> recorded_run(executor) -> steps -> fio -> store
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from iobench.engine.local import STALL_S, execute_local
from iobench.engine.preflight import Preflight, preflight
from iobench.engine.remote import ClientsPreflight, clients_preflight, execute_clients
from iobench.engine.request import Chooser, Outcome, RunRequest
from iobench.engine.steps import NullObserver, Observer, Step
from iobench.errors import UserError
from iobench.fio.runner import TIMEOUT_MARGIN_S, FioInfo
from iobench.store.repository import Store

__all__ = [
    "Chooser",
    "ClientsPreflight",
    "NullObserver",
    "Observer",
    "Outcome",
    "Preflight",
    "RunRequest",
    "Step",
    "check",
    "execute",
    "protected_paths",
]


def protected_paths(db: Path) -> list[str]:
    """The results database's files: never a target."""
    return [str(db), f"{db}-wal", f"{db}-shm"]


def check(
    request: RunRequest, fio: FioInfo, protected: Sequence[str] = ()
) -> Preflight | ClientsPreflight:
    """Everything checked before a run starts, for the way it runs: raises (and writes
    nothing) when it cannot run. ``protected``: files never to write (the database)."""
    if request.clients:
        if request.precondition is not None:
            raise UserError(
                "--precondition does not go with --clients: iobench purges and fills files "
                "and block devices of this host only, and the clients' storage is theirs",
                "precondition each client's storage on that client (iobench precondition "
                "there), then run without --precondition",
            )
        return clients_preflight(request, fio)
    return preflight(request, protected)


def execute(
    request: RunRequest,
    store: Store,
    fio: FioInfo,
    observer: Observer | None = None,
    *,
    checked: Preflight | ClientsPreflight | None = None,
    timeout_margin_s: float = TIMEOUT_MARGIN_S,
    stall_s: float = STALL_S,
) -> Outcome:
    """Run the whole request; returns the stored run's id and status.

    Errors found before anything runs (bad target, unsafe device, a client that fails its
    check) are raised and nothing is stored. Once the run exists in the store, failures end
    it as ``failed`` and Ctrl-C as ``aborted`` (the outcome carries the error); finished
    workloads are kept either way. ``checked``: the request's :func:`check`, when the
    caller made it before opening the store.
    """
    obs = observer or NullObserver()
    if checked is None:
        checked = check(request, fio, protected_paths(store.path))
    if isinstance(checked, ClientsPreflight):
        return execute_clients(request, checked, store, fio, obs, timeout_margin_s=timeout_margin_s)
    return execute_local(
        request, checked, store, fio, obs, timeout_margin_s=timeout_margin_s, stall_s=stall_s
    )
