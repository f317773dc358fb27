"""The blk-mq queues that serve a target: each hardware queue's CPUs, and the queue settings
that decide where IO completes (docs/context.md, ``queues``).

Read from /sys/class/block/X/mq/N/{cpu_list,nr_tags} and X/queue/{rq_affinity,nomerges}.
The device is the one under the target, or, when that one has no blk-mq queues of its own
(a partition, most device-mapper and md devices), the devices beneath it. Nothing here
raises and nothing is written; what cannot be read is None. Bounded: a device lists at
most MAX_HW_QUEUES queues, a chain gives at most MAX_DEVICES devices.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iobench.cpus import format_cpu_list, parse_cpu_list
from iobench.probe.host import read_int, read_text

SYS_BLOCK = Path("/sys/class/block")
MAX_HW_QUEUES = 1024  # an NVMe controller has one per CPU at most
MAX_DEVICES = 64


def _device(kname: str, base: Path) -> dict[str, Any] | None:
    """A device's hardware queues, by number (``{"queue", "cpus", "nr_tags"}``, ``cpus`` in
    the kernel's list form, ``"0-3"``), their CPUs together and its queue settings; None
    when it has no mq/ or no queue in it."""
    try:
        entries = sorted(
            (e for e in (base / kname / "mq").iterdir() if e.name.isdigit()),
            key=lambda e: int(e.name),
        )
    except OSError:
        return None
    if not entries:
        return None
    queues = []
    union: set[int] = set()
    for entry in entries[:MAX_HW_QUEUES]:
        text = read_text(entry / "cpu_list")
        try:
            cpus = parse_cpu_list(text) if text else None
        except ValueError:
            cpus = None
        union |= cpus or set()
        queues.append(
            {
                "queue": int(entry.name),
                "cpus": format_cpu_list(cpus) if cpus else None,
                "nr_tags": read_int(entry / "nr_tags"),
            }
        )
    queue = base / kname / "queue"
    return {
        "kname": kname,
        "rq_affinity": read_int(queue / "rq_affinity"),
        "nomerges": read_int(queue / "nomerges"),
        "hw_queue_count": len(entries),
        "hw_queues": queues,
        "cpus": format_cpu_list(union) if union else None,
    }


def queue_context(block: dict[str, Any], base: Path = SYS_BLOCK) -> dict[str, Any]:
    """``{"devices": [...], "note"}`` for a probed block context (``block`` of
    :func:`iobench.probe.storage.probe_target`): the topmost devices of its chain that
    have blk-mq queues, each with its queues and settings, and a note when that is not
    the device under the target or there is none."""
    chain = block.get("chain") or []
    nodes = {str(n.get("kname")): n for n in chain if n.get("kname")}
    if not chain:
        why = block.get("note") or "no block device"
        return {"devices": [], "note": f"no blk-mq queues: {why}"}
    top = str(chain[0].get("kname"))
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    todo = [top]
    while todo and len(found) < MAX_DEVICES:
        kname = todo.pop(0)
        if kname in seen:
            continue
        seen.add(kname)
        device = _device(kname, base)
        if device is not None:
            found.append(device)
        else:
            todo.extend(str(p) for p in (nodes.get(kname) or {}).get("parents") or [])
    note = None
    if not found:
        note = f"no blk-mq queues: {top} and the devices beneath it have none (no mq/ in sysfs)"
    elif found[0]["kname"] != top:
        names = ", ".join(d["kname"] for d in found)
        note = f"{top} has no blk-mq queues of its own; those of the devices beneath it: {names}"
    return {"devices": found, "note": note}
