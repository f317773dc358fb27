"""What a run's precondition did (``suite_def.precondition``, engine/precondition.py), in
one line per target, as the run's header shows it (pure). The stored object may come from
an imported document: every value is read as what it must be, or left out."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iobench.units import format_bytes, format_duration, format_rate


def precondition_lines(stored: Mapping[str, Any] | None) -> list[str]:
    """``preconditioned: discard of 64 MiB (0.1s), then 2 x 64 MiB sequential 128 KiB
    writes in 3.2s (40.0 MiB/s)``; with several targets, each named. [] without one."""
    if not isinstance(stored, Mapping):
        return []
    entries = [t for t in stored.get("targets") or [] if isinstance(t, Mapping)]
    if not entries:
        return ["preconditioned: nothing was done"]
    named = len(entries) > 1
    return [
        f"preconditioned{' ' + str(t.get('target')) if named else ''}: {_target_text(t)}"
        for t in entries
    ]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _took(value: Any) -> str:
    """``3.2s``; under a tenth of a second, to the millisecond (a discard is quick)."""
    seconds = _number(value)
    if seconds is None:
        return "?"
    return format_duration(round(seconds, 1 if seconds >= 0.1 else 3))


def _target_text(t: Mapping[str, Any]) -> str:
    purge, fill = t.get("purge"), t.get("fill")
    said = _purge_text(purge if isinstance(purge, Mapping) else {})
    if not isinstance(fill, Mapping):
        return f"{said}, then the fill did not finish"
    return f"{said}, then {_fill_text(fill, _number(t.get('area_bytes')))}"


def _purge_text(purge: Mapping[str, Any]) -> str:
    method = purge.get("method")
    size = format_bytes(_number(purge.get("bytes")))
    if method == "discard":
        return f"discard of {size} ({_took(purge.get('seconds'))})"
    if method == "punch-hole":
        return f"holes punched over {size} ({_took(purge.get('seconds'))})"
    note = purge.get("note")
    return note.split(";")[0] if isinstance(note, str) and note else "no purge"


def _fill_text(fill: Mapping[str, Any], area: float | None) -> str:
    passes = _number(fill.get("passes"))
    bs = format_bytes(_number(fill.get("bs")))
    shown = format_bytes(area)
    times = f"{passes:g} x {shown}" if passes is not None else shown
    rate = format_rate(_number(fill.get("bw_bytes")))
    return f"{times} sequential {bs} writes in {_took(fill.get('seconds'))} ({rate})"
