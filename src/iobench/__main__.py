"""Entry point: ``python -m iobench`` and the ``iobench`` console script."""

from __future__ import annotations

import sys


def main() -> None:
    from iobench.cli import run_cli

    sys.exit(run_cli(sys.argv[1:]))


if __name__ == "__main__":
    main()
