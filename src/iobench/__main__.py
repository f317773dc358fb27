"""Entry point: ``python -m iobench`` and the ``iobench`` console script."""

from __future__ import annotations

import contextlib
import os
import sys


def main() -> None:
    from iobench.cli import run_cli
    from iobench.store.repository import abandoned

    code = run_cli(sys.argv[1:])
    if abandoned():
        # A database that can no longer be written is not closed: closing it would write
        # to it, and SQLite's mapped -shm then ends the process with SIGBUS.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    main()
