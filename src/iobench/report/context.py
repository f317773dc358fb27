"""Human rendering of `iobench info`: the host and the target's storage stack."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from iobench.analysis.throttles import devices_line, throttle_line
from iobench.report.literal import literal
from iobench.units import format_bytes


def _join(*parts: Any) -> str:
    return ", ".join(str(p) for p in parts if p not in (None, "", False))


def host_lines(host: dict[str, Any]) -> list[tuple[str, str]]:
    kernel = host.get("kernel") or {}
    cpu = host.get("cpu") or {}
    virt = host.get("virtualization") or {}
    vm, ct = virt.get("vm"), virt.get("container")
    guest = f"{vm} guest" if vm and vm != "none" else None
    container = f"in a {ct} container" if ct and ct != "none" else None
    cpus = None
    if cpu.get("online"):
        cpus = f"{cpu['online']} online"
        if cpu.get("usable") and cpu.get("usable") != cpu.get("online"):
            cpus += f", {cpu['usable']} usable by iobench"
    return [
        ("host", _join(host.get("hostname"), host.get("os"), host.get("arch"))),
        ("kernel", _join(kernel.get("release"), kernel.get("version"))),
        ("virtualisation", _join(guest, container) or "none detected (bare metal?)"),
        ("cpu", _join(cpu.get("model"), cpus)),
        ("memory", format_bytes(host.get("memory_bytes"))),
    ]


def _disk_line(d: dict[str, Any]) -> str:
    rot = d.get("rotational")
    blocks = None
    if d.get("logical_block_size"):
        blocks = f"blocks {d['logical_block_size']}/{d.get('physical_block_size')} B"
    return _join(
        d.get("transport"),
        d.get("vendor") and f"vendor {d['vendor']}",
        d.get("model") and f"model {d['model']}",
        format_bytes(d["size_bytes"]) if d.get("size_bytes") else None,
        None if rot is None else ("rotational" if rot else "non-rotational"),
        d.get("scheduler") and f"scheduler {d['scheduler']}",
        d.get("nr_requests") and f"nr_requests {d['nr_requests']}",
        blocks,
        d.get("write_cache") and f"cache {d['write_cache']}",
    )


def target_lines(target: dict[str, Any]) -> list[tuple[str, str]]:
    ctx = target.get("context") or {}
    size = target.get("size_bytes")
    free = target.get("free_bytes")
    lines = [
        (
            "target",
            _join(
                target.get("path"),
                target.get("kind"),
                size is not None and format_bytes(size),
                free is not None and f"{format_bytes(free)} free",
            ),
        )
    ]
    fs = ctx.get("filesystem") or {}
    if fs:
        kind = _join(
            "RAM-backed" if fs.get("ram_backed") else None,
            "network" if fs.get("network") else None,
        )
        lines.append(
            (
                "filesystem",
                f"{fs.get('fstype')} from {fs.get('source')} on {fs.get('target')}"
                + (f" ({kind})" if kind else ""),
            )
        )
        lines.append(("mount options", str(fs.get("options") or "")))
        nfs = fs.get("nfs")
        if nfs:
            lines.append(("nfs", _join(*(f"{k} {v}" for k, v in nfs.items() if v is not None))))
    for m in ctx.get("mounts") or []:
        lines.append(("mounted", _join(m.get("target"), m.get("fstype"), m.get("options"))))
    block = ctx.get("block") or {}
    chain = block.get("chain") or []
    if chain:
        lines.append(
            (
                "device chain",
                " -> ".join(f"{c.get('path') or c.get('name')} ({c.get('type')})" for c in chain)
                + "".join(
                    f", backing file {c['backing_file']}" for c in chain if c.get("backing_file")
                ),
            )
        )
    for d in block.get("disks") or []:
        lines.append((f"disk {d.get('path') or d.get('kname')}", _disk_line(d)))
    if block.get("note"):
        lines.append(("note", str(block["note"])))
    lines.extend(queue_lines(ctx.get("queues")))
    devices = devices_line(ctx)
    if devices:
        lines.append(("io devices", devices))
    throttles = throttle_line(ctx)
    if throttles:
        lines.append(("io throttles", throttles))
    return lines


QUEUES_SHOWN = 8


def queue_lines(queues: Any) -> list[tuple[str, str]]:
    """The blk-mq queues of the device under a target: each queue's CPUs and tags (the
    first few of many), and the settings that decide where IO completes."""
    if not isinstance(queues, dict):
        return []
    lines = []
    for d in queues.get("devices") or []:
        hw = d.get("hw_queues") or []
        count = d.get("hw_queue_count") or len(hw)
        shown = [
            f"#{q.get('queue')} CPUs {q.get('cpus') or '?'}"
            + (f" ({q['nr_tags']} tags)" if q.get("nr_tags") is not None else "")
            for q in hw[:QUEUES_SHOWN]
        ]
        more = f" and {count - len(shown)} more" if count > len(shown) else ""
        lines.append(
            (
                f"queues {d.get('kname')}",
                _join(
                    f"{count} blk-mq queue{'' if count == 1 else 's'}: {', '.join(shown)}{more}",
                    d.get("rq_affinity") is not None and f"rq_affinity {d['rq_affinity']}",
                    d.get("nomerges") is not None and f"nomerges {d['nomerges']}",
                ),
            )
        )
    if queues.get("note"):
        lines.append(("queues", str(queues["note"])))
    return lines


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
