"""Running a benchmark from a command (run, sweep, characterize): the progress display on
stderr, stop signals as interrupts, the store, and the exit code of what happened."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, NoReturn

from iobench.cli.env import Environment
from iobench.cli.failures import print_error
from iobench.errors import ExitCode, Interrupted, StoreError
from iobench.report.literal import literal

if TYPE_CHECKING:
    from iobench.engine import Outcome, RunRequest
    from iobench.records import RunRecord


@contextmanager
def stop_signals_as_interrupt() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP (a closed ssh session) stop a run like Ctrl-C does.

    SIGINT too, explicitly: a shell that is not interactive starts a command put in the
    background (``iobench run &`` in a script) with SIGINT ignored, and Python then leaves
    it ignored, so ``kill -INT`` would do nothing."""

    def handler(signum: int, frame: FrameType | None) -> NoReturn:
        raise Interrupted(f"stopped by {signal.Signals(signum).name}")

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    old[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


def execute_request(env: Environment, request: RunRequest) -> tuple[Outcome, RunRecord]:
    """Run a benchmark request (on this host, or on --clients) with the progress display on
    stderr; (outcome, stored run). Everything is checked before the store opens: a refusal
    creates nothing."""
    from iobench.engine import check, execute, protected_paths
    from iobench.fio.runner import find_fio
    from iobench.report.progress import ProgressDisplay

    fio = find_fio()
    checked = check(request, fio, protected_paths(env.db_path()))
    with env.open_store() as store, stop_signals_as_interrupt():
        outcome = execute(request, store, fio, ProgressDisplay(env.stderr), checked=checked)
        try:
            record = store.get_run(outcome.run_id)
        except StoreError as e:
            if outcome.error is not None:  # what ended the run (unless this), then this
                if outcome.error.message != e.message:
                    print_error(outcome.error, env.stderr)
                _say_stored(env, outcome)
            raise
    return outcome, record


def outcome_code(env: Environment, outcome: Outcome) -> int:
    """0, or the error's exit code after saying what happened (the run is stored)."""
    if outcome.error is None:
        return 0
    print_error(outcome.error, env.stderr)
    _say_stored(env, outcome)
    return int(outcome.error.exit_code)


def _say_stored(env: Environment, outcome: Outcome) -> None:
    """How the run that did not get through is stored, or why it could not be."""
    if outcome.unstored is None:
        env.stderr.print(f"run {outcome.run_id} is stored as {outcome.status}", highlight=False)
        return
    then = (
        "it is only in the file iobench had open, which is no longer at the database's path"
        if outcome.lost
        else "it shows as running until iobench can write the database again, which then "
        "marks it aborted"
    )
    env.stderr.print(
        f"run {outcome.run_id} could not be stored as {outcome.status}: {outcome.unstored}; {then}",
        highlight=False,
        markup=False,
    )


def run_code(env: Environment, outcome: Outcome, record: RunRecord) -> int:
    """The exit code of a finished run: its error's, else 4 when an expectation failed."""
    code = outcome_code(env, outcome)
    if code:
        return code
    from iobench.expect import check_run, failed_checks

    failed = failed_checks(check_run(record))
    if not failed:
        return 0
    env.stderr.print(
        f"iobench: {len(failed)} expectation(s) not met: "
        + "; ".join(
            literal(c.expectation.text)
            + (f" ({literal(c.workload)})" if c.expectation.workload == "*" else "")
            + f" on {literal(c.target)}"
            + (" (not measured)" if c.measured is None else "")
            for c in failed
        ),
        highlight=False,
        markup=False,
    )
    return int(ExitCode.EXPECTATION_FAILED)


def shown_run(env: Environment, outcome: Outcome, record: RunRecord, as_json: bool) -> int:
    """A finished run printed (its document with --json) and its exit code."""
    from iobench.report.printed import run_document
    from iobench.report.terminal import render_run

    if as_json:
        env.emit_json(run_document(record))
    else:
        render_run(record, env.stdout, error=False)  # run_code says it, once, on stderr
    return run_code(env, outcome, record)
