"""The Environment a command runs in: the consoles it prints with, the stream its JSON
goes to, the command line it was started with, and the results database. ``run_cli``
makes one from the process's streams; a test or a caller can pass another. Commands get
it from the click context with ``@pass_env``."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from iobench.errors import UserError
from iobench.report.literal import LiteralConsole

if TYPE_CHECKING:
    from iobench.store import Store


# emoji=False: ":x:" in a label, path or error message is text, not an emoji. A
# LiteralConsole shows any control character that reaches it escaped (docs/safety.md).
def stdout_console() -> Console:
    """The console on standard output (whatever sys.stdout is when it prints)."""
    return LiteralConsole(width=None if sys.stdout.isatty() else 160, highlight=False, emoji=False)


def stderr_console() -> Console:
    """The console on standard error: errors, notes and progress."""
    return LiteralConsole(
        stderr=True,
        width=None if sys.stderr.isatty() else 160,
        highlight=False,
        soft_wrap=True,
        emoji=False,
    )


@dataclass(frozen=True)
class Environment:
    stdout: Console  # results; JSON documents go to the stream it writes to
    stderr: Console  # errors, notes and progress
    db: Path | None = None  # --db (or IOBENCH_DB); None: the default path
    argv: tuple[str, ...] = ("iobench",)  # the command line, as stored with a run
    said: set[int] = field(default_factory=set)  # unfinished runs already told of

    @classmethod
    def standard(cls) -> Environment:
        """The process's own: sys.stdout and sys.stderr, sys.argv."""
        return cls(stdout_console(), stderr_console(), argv=("iobench", *sys.argv[1:]))

    def emit_json(self, doc: Any) -> None:
        from iobench.output import write_stream

        write_stream(self.stdout.file, json.dumps(doc, indent=2, sort_keys=False) + "\n")

    def db_path(self) -> Path:
        from iobench.store import default_db_path

        return Path(self.db or default_db_path())

    def db_exists(self) -> bool:
        """Something is at the database path (a dangling symbolic link too: Store refuses
        it)."""
        return os.path.lexists(self.db_path())

    def require_db(self) -> None:
        if not self.db_exists():  # reading creates nothing
            raise UserError(
                f"no runs are stored yet: there is no database at {self.db_path()}",
                "run a benchmark first with `iobench run`, or point --db at your database",
            )

    def open_store(self, *, readonly: bool = False) -> Store:
        """The results database; ``readonly`` for the commands that only read it (they then
        write and create nothing, and work on a database the user may only read)."""
        from iobench.store import Store

        store = Store.open(self.db_path(), readonly=readonly)
        for run_id, what in store.aborted:
            if run_id not in self.said:
                self.said.add(run_id)
                self.stderr.print(
                    f"iobench: run {run_id} did not finish and is aborted: {what}",
                    highlight=False,
                    markup=False,
                )
        return store


pass_env = click.make_pass_decorator(Environment)
