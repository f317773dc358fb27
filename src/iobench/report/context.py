"""Human rendering of `iobench info`: the host and the target's storage stack."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from iobench.analysis.context import host_lines, queue_lines, target_lines
from iobench.report.literal import literal

__all__ = ["host_lines", "queue_lines", "render_info", "render_lines", "target_lines"]


def render_lines(lines: list[tuple[str, str]], console: Console) -> None:
    """Key and value lines (:func:`host_lines`, :func:`target_lines`) in two columns, a
    long value wrapped at word boundaries under itself; both shown literally, and no line
    padded with trailing blanks (a table pads every cell to its column's width)."""
    keys = [literal(k) for k, _ in lines]
    width = max((cell_len(k) for k in keys), default=0) + 2
    room = max(console.width - width, 20)
    for key, (_, value) in zip(keys, lines, strict=True):
        wrapped = Text(literal(value)).wrap(console, room, no_wrap=False) or [Text("")]
        for i, part in enumerate(wrapped):
            part.rstrip()
            head = Text(key, style="bold") if i == 0 else Text("")
            head.append(" " * (width - cell_len(head.plain)))
            console.print(
                head + part if part.plain else Text(head.plain.rstrip(), style="bold"),
                markup=False,
                highlight=False,
                soft_wrap=True,
            )


def render_info(doc: dict[str, Any], console: Console) -> None:
    render_lines(host_lines(doc["host"]) + target_lines(doc["target"]), console)
    console.print("all keys: iobench info --json", style="dim")
