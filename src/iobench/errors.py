"""One root error with an exit code and a hint; only the CLI prints errors and exits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    OK = 0
    RUN_FAILED = 1
    BAD_INPUT = 2
    UNSAFE_TARGET = 3
    EXPECTATION_FAILED = 4
    INTERRUPTED = 130


class IobenchError(Exception):
    """An error the user should see as a message, not a traceback."""

    exit_code: ExitCode = ExitCode.RUN_FAILED

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def error_text(e: BaseException) -> str:
    """One line for an error in a message: its own message, else its type."""
    if isinstance(e, KeyboardInterrupt):
        return "interrupted"
    return str(getattr(e, "message", None) or e) or type(e).__name__


class UserError(IobenchError):
    """Bad input or usage: something the user can fix in what they typed."""

    exit_code = ExitCode.BAD_INPUT


@dataclass(frozen=True)
class SuiteProblem:
    """One mistake in a suite file: what is wrong, its line if known, and what to do."""

    message: str
    line: int | None = None
    hint: str | None = None


class SuiteError(UserError):
    """A suite file is wrong; names the file and, where known, the line.

    It can carry several problems (``also``): the message then lists every one, each with
    its ``file:line``; ``line`` is the first one's. ``problems`` holds them all.
    """

    SHOWN = 20  # problems listed in the message; a hostile file can hold thousands

    def __init__(
        self,
        path: str | Path,
        message: str,
        line: int | None = None,
        hint: str | None = None,
        *,
        also: Sequence[SuiteProblem] = (),
    ) -> None:
        problems = (SuiteProblem(message, line, hint), *also)
        if len(problems) > 1:
            items = [f"  - {_where(path, p.line)}: {p.message}" for p in problems[: self.SHOWN]]
            if len(problems) > self.SHOWN:
                items.append(f"  - and {len(problems) - self.SHOWN} more")
            message = f"{path} has {len(problems)} problems:\n" + "\n".join(items)
            hint = "\n".join(dict.fromkeys(p.hint for p in problems if p.hint)) or None
        else:
            message = f"{_where(path, line)}: {message}"
        super().__init__(message, hint)
        self.path = str(path)
        self.line = line
        self.problems = problems

    @classmethod
    def of(cls, path: str | Path, problems: Sequence[SuiteProblem]) -> SuiteError:
        """One error for one or more problems (at least one)."""
        first, *rest = problems
        return cls(path, first.message, first.line, first.hint, also=rest)


def _where(path: str | Path, line: int | None) -> str:
    return f"{path}:{line}" if line else str(path)


class TargetUnsafe(IobenchError):
    """The target is refused because writing to it could destroy data."""

    exit_code = ExitCode.UNSAFE_TARGET


class FioMissing(IobenchError):
    """fio is not installed, or too old."""


class FioFailed(IobenchError):
    """fio ran and failed; carries the evidence."""

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        *,
        argv: list[str] | None = None,
        returncode: int | None = None,
        stderr: str = "",
    ) -> None:
        super().__init__(message, hint)
        self.argv = argv or []
        self.returncode = returncode
        self.stderr = stderr


class FioOutputError(IobenchError):
    """fio's output could not be read as fio JSON."""


class NoFioReport(FioOutputError):
    """The text holds no fio JSON report at all (it may be fio's text output)."""


class StoreError(IobenchError):
    """The results database cannot be used (too new, corrupt, unwritable)."""


class StoreGone(StoreError):
    """The results database's path no longer leads to the file iobench has open (removed,
    renamed or replaced): a run stored there now would not be found at that path."""


class Interrupted(IobenchError):
    """Ctrl-C or SIGTERM."""

    exit_code = ExitCode.INTERRUPTED
