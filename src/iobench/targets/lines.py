"""What the kinds of target share to describe a stored context as lines a person reads
(``Kind.describe``): pure, over stored dicts, where anything may be missing or odd (a
stored context is outside data)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iobench.units import format_bytes

# The line a comparison shows for every setup: when a write counts as done, which is why
# an RBD image's write waits longer than a local disk's.
WRITES = "a write is done"
Lines = list[tuple[str, str]]


def join(*parts: Any) -> str:
    return ", ".join(str(p) for p in parts if p not in (None, "", False))


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def size(value: Any) -> str | None:
    return format_bytes(value) if isinstance(value, int) and not isinstance(value, bool) else None


def served_here_line(ctx: Mapping[str, Any], identity: bool) -> Lines:
    """The ``served here`` line, when the server runs on this very host."""
    here = ctx.get("served_here")
    return [("served here", here)] if identity and isinstance(here, str) and here else []
