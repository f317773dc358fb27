"""Human rendering of `iobench info`: the host and the target's storage stack."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from iobench.analysis.context import host_lines, queue_lines, target_lines
from iobench.report.literal import literal

__all__ = ["host_lines", "queue_lines", "render_info", "render_lines", "target_lines"]


def render_lines(lines: list[tuple[str, str]], console: Console) -> None:
    """Key and value lines (:func:`host_lines`, :func:`target_lines`) as a two-column grid;
    both are shown literally (markup is off for the whole grid)."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for key, value in lines:
        grid.add_row(literal(key), literal(value))
    console.print(grid, markup=False, highlight=False)


def render_info(doc: dict[str, Any], console: Console) -> None:
    render_lines(host_lines(doc["host"]) + target_lines(doc["target"]), console)
    console.print("all keys: iobench info --json", style="dim")
