"""CPU sets as fio and the kernel write them: ``0-3,5`` lists and ``cpumask`` bit masks.

Pure parsing and formatting, and one read of the online CPUs
(/sys/devices/system/cpu/online), which suites are checked against (docs/suites.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

ONLINE = Path("/sys/devices/system/cpu/online")
MAX_CPU = 8191  # the kernel's largest NR_CPUS (CONFIG_NR_CPUS_RANGE_END)
MASK_BITS = 64  # fio reads cpumask into an unsigned 64-bit integer

# ASCII digits only (never \d, which matches "٤"); used with fullmatch.
_ENTRY_RE = re.compile(r"([0-9]{1,5})(?:-([0-9]{1,5}))?")
_MASK_RE = re.compile(r"0[xX][0-9a-fA-F]{1,16}|[0-9]{1,20}")


def parse_cpu_list(text: str) -> frozenset[int]:
    """``"0-3,5"`` -> {0, 1, 2, 3, 5}: fio's cpus_allowed and the kernel's CPU lists.
    Blanks after a comma are allowed (blk-mq's cpu_list writes ``0, 1``); raises
    ValueError saying what is wrong."""
    if not text.strip():
        raise ValueError("an empty CPU list")
    cpus: set[int] = set()
    for entry in text.split(","):
        match = _ENTRY_RE.fullmatch(entry.strip())
        if match is None:
            raise ValueError(f"{entry.strip()!r} is not a CPU number or a range such as 2-5")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        if last < first:
            raise ValueError(f"the range {first}-{last} runs backwards")
        if last > MAX_CPU:
            raise ValueError(f"CPU {last} is beyond any kernel's CPUs (at most {MAX_CPU})")
        cpus.update(range(first, last + 1))
    return frozenset(cpus)


def parse_cpumask(value: int | str) -> frozenset[int]:
    """fio's cpumask: a bit mask of CPUs, an integer or a string in decimal or ``0x`` hex
    (``0x6`` -> {1, 2}); raises ValueError saying what is wrong."""
    if isinstance(value, str):
        if not _MASK_RE.fullmatch(value):
            raise ValueError("not a number in decimal or 0x hexadecimal")
        number = int(value, 16) if value[:2] in ("0x", "0X") else int(value)
    else:
        number = value
    if number <= 0:
        raise ValueError("a mask of no CPU")
    if number.bit_length() > MASK_BITS:
        raise ValueError(f"wider than the {MASK_BITS} bits fio reads")
    return frozenset(i for i in range(number.bit_length()) if number >> i & 1)


def format_cpu_list(cpus: Iterable[int]) -> str:
    """{0, 1, 2, 3, 5} -> ``"0-3,5"`` (the form fio and the kernel read)."""
    ordered = sorted(set(cpus))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def online_cpus(path: Path = ONLINE) -> frozenset[int] | None:
    """The CPUs online on this host, or None when that cannot be read."""
    try:
        return parse_cpu_list(path.read_text(encoding="ascii", errors="replace")[:4096])
    except (OSError, ValueError):
        return None
