"""One root error with an exit code and a hint; only the CLI prints errors and exits."""

from __future__ import annotations

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


class SuiteError(UserError):
    """A suite file is wrong; names the file and, where known, the line."""

    def __init__(
        self, path: str | Path, message: str, line: int | None = None, hint: str | None = None
    ) -> None:
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {message}", hint)
        self.path = str(path)
        self.line = line


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


class StoreError(IobenchError):
    """The results database cannot be used (too new, corrupt, unwritable)."""


class Interrupted(IobenchError):
    """Ctrl-C or SIGTERM."""

    exit_code = ExitCode.INTERRUPTED
