"""What every command shares: consoles, JSON output, the store, option parsing, signals
and error printing. Only the CLI modules import this."""

from __future__ import annotations

import io
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console

from iobench.errors import ExitCode, Interrupted, IobenchError, UserError
from iobench.report.literal import (
    LiteralConsole,
    literal,
    literal_lines,
    markup_literal_lines,
)

EXIT_CODES_HELP = """\b
Exit codes:
  0    success
  1    the run failed (fio failed, fio missing, results unreadable)
  2    bad input or usage (options, suite file, target path)
  3    target refused as unsafe (device in use, holds data, or writes not allowed)
  4    the run finished but an expectation (--expect, --spec, the suite's) failed
  130  interrupted (Ctrl-C or SIGTERM); finished workloads are kept
"""

F = TypeVar("F", bound=Callable[..., Any])


def with_options(options: Sequence[Callable[[F], F]]) -> Callable[[F], F]:
    """One decorator applying click ``options`` in the order given (as if stacked)."""

    def apply(f: F) -> F:
        for option in reversed(options):
            f = option(f)
        return f

    return apply


# emoji=False: ":x:" in a label, path or error message is text, not an emoji. A
# LiteralConsole shows any control character that reaches it escaped (docs/safety.md).
def stdout() -> Console:
    return LiteralConsole(width=None if sys.stdout.isatty() else 160, highlight=False, emoji=False)


def stderr() -> Console:
    return LiteralConsole(
        stderr=True,
        width=None if sys.stderr.isatty() else 160,
        highlight=False,
        soft_wrap=True,
        emoji=False,
    )


def emit_json(doc: Any) -> None:
    from iobench.output import write_stream

    write_stream(sys.stdout, json.dumps(doc, indent=2, sort_keys=False) + "\n")


def parse_opt(value: str | None, parse: Any, option: str) -> Any:
    if value is None:
        return None
    try:
        return parse(value)
    except ValueError as e:
        raise UserError(f"{option}: {e}") from e


def db_path(ctx: click.Context) -> Path:
    from iobench.store import default_db_path

    return Path(ctx.obj["db"] or default_db_path())


def open_store(ctx: click.Context, *, readonly: bool = False) -> Any:
    """The results database; ``readonly`` for the commands that only read it (they then
    write and create nothing, and work on a database the user may only read)."""
    from iobench.store import Store

    return Store.open(db_path(ctx), readonly=readonly)


def db_exists(ctx: click.Context) -> bool:
    """Something is at the database path (a dangling symbolic link too: Store refuses it)."""
    return os.path.lexists(db_path(ctx))


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


def require_db(ctx: click.Context) -> None:
    if not db_exists(ctx):  # reading creates nothing
        raise UserError(
            f"no runs are stored yet: there is no database at {db_path(ctx)}",
            "run a benchmark first with `iobench run`, or point --db at your database",
        )


def print_error(e: IobenchError, console: Console) -> None:
    """The message and the hint, which quote what the user typed and what files hold, shown
    literally. Their line breaks (one refusal a line) stay, each later line indented, so no
    line of theirs can pass for a line of iobench's own."""
    first, *more = markup_literal_lines(e.message).split("\n")
    # A later line (a list of reasons) starts 4 columns in, 2 more than it had: never at
    # the first two columns, where iobench's own "iobench: error:" and "what to do:" are.
    message = "".join([first, *("\n" + (" " * (2 if m[:1].isspace() else 4)) + m for m in more)])
    console.print(f"[red]iobench: error:[/] {message}", highlight=False)
    if e.hint:
        hint = markup_literal_lines(e.hint).replace("\n", "\n" + " " * 14)
        console.print(f"  [dim]what to do:[/] {hint}", highlight=False)


def print_click_error(e: click.ClickException, console: Console) -> None:
    """click's own error (usage, "Try ... --help", "Error: MESSAGE"), laid out as click lays
    it out. MESSAGE quotes what the user typed (an option, a value, extra arguments): it is
    shown on one line, literally."""
    text = io.StringIO()
    e.show(file=text)
    shown = text.getvalue()
    message = e.format_message()
    said = click.unstyle(message) + "\n"  # click strips colours when not on a terminal
    if shown.endswith(said):
        shown = shown[: -len(said)] + literal(message) + "\n"
    console.print(literal_lines(shown), end="", markup=False, highlight=False)


def execute_request(ctx: click.Context, request: Any) -> Any:
    """Run a benchmark request with the progress display on stderr; (outcome, stored run).
    Everything is checked before the store opens: a refusal creates nothing."""
    from iobench.engine import check, execute, protected_paths
    from iobench.fio.runner import find_fio
    from iobench.report.progress import ProgressDisplay

    fio = find_fio()
    checked = check(request, fio, protected_paths(db_path(ctx)))
    with open_store(ctx) as store, stop_signals_as_interrupt():
        outcome = execute(request, store, fio, ProgressDisplay(stderr()), checked=checked)
        record = store.get_run(outcome.run_id)
    return outcome, record


def outcome_code(outcome: Any) -> int:
    """0, or the error's exit code after saying what happened (the run is stored)."""
    if outcome.error is None:
        return 0
    err = stderr()
    print_error(outcome.error, err)
    err.print(f"run {outcome.run_id} is stored as {outcome.status}", highlight=False)
    return int(outcome.error.exit_code)


def run_code(outcome: Any, record: Any) -> int:
    """The exit code of a finished run: its error's, else 4 when an expectation failed."""
    code = outcome_code(outcome)
    if code:
        return code
    from iobench.expect import check_run, failed_checks

    failed = failed_checks(check_run(record))
    if not failed:
        return 0
    err = stderr()
    err.print(
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


def parse_list(value: str, parse: Any, option: str) -> list[Any]:
    """``4k,16k,64k`` -> parsed items; a UserError naming the option and the bad item."""
    items = [v.strip() for v in value.split(",")]
    if not items or any(not v for v in items):
        raise UserError(
            f"{option}: give a comma-separated list, e.g. {option} 1,2,4, not {value!r}"
        )
    out = []
    for item in items:
        try:
            out.append(parse(item))
        except ValueError as e:
            raise UserError(f"{option}: {item!r}: {e}") from e
    if len(set(out)) != len(out):
        raise UserError(f"{option}: {value!r} names a value twice")
    return out
