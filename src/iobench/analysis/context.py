"""A run's context as lines a person reads, and what differs between runs' contexts.

The lines (``host_lines``, ``target_lines``) are what ``iobench info`` shows of the host
and of a target's storage stack (docs/context.md). :func:`context_differences` compares
setups on the same lines, and on every other stored context field the lines leave out
(``filesystem.size_bytes``, ``block.disks[0].read_ahead_kb`` ...), so that whatever differs
between two setups' stored context is said (docs/compare.md, "Context").

Pure: dicts as stored in, strings out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iobench.analysis.throttles import context_throttles, devices_line, throttle_line
from iobench.probe.context import Storage
from iobench.probe.throttle import KEYS, limit_text
from iobench.targets import kind_named
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


def _disk_line(d: Mapping[str, Any]) -> str:
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


def target_lines(target: dict[str, Any], *, identity: bool = True) -> list[tuple[str, str]]:
    """A target's storage stack as (key, value) lines. Without ``identity``, only what
    describes it: no path, device name or free space, which every target has its own of
    (what a comparison sets side by side)."""
    ctx = target.get("context") or {}
    size = target.get("size_bytes")
    free = target.get("free_bytes")
    lines = [
        (
            "target",
            _join(
                target.get("path") if identity else None,
                target.get("kind"),
                size is not None and format_bytes(size),
                identity and free is not None and f"{format_bytes(free)} free",
            ),
        )
    ]
    fs = Storage.of(ctx).filesystem
    if fs:
        kind = _join(
            "RAM-backed" if fs.get("ram_backed") else None,
            "network" if fs.get("network") else None,
        )
        where = f" from {fs.get('source')} on {fs.get('target')}" if identity else ""
        lines.append(("filesystem", f"{fs.get('fstype')}{where}" + (f" ({kind})" if kind else "")))
        lines.append(("mount options", str(fs.get("options") or "")))
        nfs = fs.get("nfs")
        if nfs:
            lines.append(("nfs", _join(*(f"{k} {v}" for k, v in nfs.items() if v is not None))))
    for m in Storage.of(ctx).mounts:
        lines.append(("mounted", _join(m.get("target"), m.get("fstype"), m.get("options"))))
    lines += _device_lines(ctx, identity)
    lines.extend(queue_lines(ctx.get("queues")))
    devices = devices_line(ctx) if identity else None
    if devices:
        lines.append(("io devices", devices))
    throttles = throttle_line(ctx) if identity else _throttle_limits(ctx)
    if throttles:
        lines.append(("io throttles", throttles))
    return lines + _kind_lines(target.get("kind"), ctx, identity)


def _kind_lines(kind: Any, ctx: dict[str, Any], identity: bool) -> list[tuple[str, str]]:
    """The lines only a target's kind knows of its context (none for a kind iobench does
    not have: an imported run's, a run on clients)."""
    try:
        return kind_named(str(kind)).describe(ctx, identity=identity)
    except KeyError:
        return []


def _device_lines(ctx: dict[str, Any], identity: bool) -> list[tuple[str, str]]:
    """The device chain (each device's type, and with ``identity`` its path and backing
    file), each disk, and the block note."""
    lines = []
    storage = Storage.of(ctx)
    block, chain = storage.block, storage.chain
    if chain:
        if identity:
            text = " -> ".join(
                f"{c.get('path') or c.get('name')} ({c.get('type')})" for c in chain
            ) + "".join(
                f", backing file {c['backing_file']}" for c in chain if c.get("backing_file")
            )
        else:
            text = " -> ".join(str(c.get("type")) for c in chain)
        lines.append(("device chain", text))
    for d in storage.disks:
        lines.append((f"disk {d.get('path') or d.get('kname')}", _disk_line(d)))
    if block.get("note"):
        lines.append(("note", str(block["note"])))
    if ctx.get("ram_backed") and not identity:
        lines.append(("in RAM", "yes"))
    return lines


def _throttle_limits(ctx: dict[str, Any]) -> str | None:
    """The throttles' limits without the devices' names: ``read 3.00k IOPS, write 95.4
    MiB/s (cgroup v1)``, per device in order; "none" when looked for and none found."""
    if not isinstance(ctx.get("throttles"), dict):
        return None  # not looked for (a run stored before iobench did)
    storage = Storage.of(ctx)
    if not storage.io_devices:
        return "none: no block device" if storage.block else None
    found = context_throttles(ctx)
    if not found:
        return "none"
    return "; ".join(
        ", ".join(limit_text(key, limits[key][0]) for key in KEYS if key in limits)
        + " ("
        + ", ".join(dict.fromkeys(where.rsplit(" ", 1)[0] for _, where in limits.values()))
        + ")"
        for _, limits in sorted(found.items())
    )


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


# -- what differs between setups ----------------------------------------------------------------

# Stored context fields that name a thing rather than describe it (every setup has its own
# path, device name or number), or change by the minute (free space): never a difference.
_IDENTITY = frozenset(
    {"path", "spec", "kname", "name", "maj_min", "serial", "free_bytes", "device", "parents",
     "source", "target", "backing_file", "cgroup", "error", "note", "io_devices",
     "options_parsed", "via", "role", "queue", "cpus"}
)  # fmt: skip
# Fields the lines already say (target_lines, host_lines): not repeated as raw fields.
_SHOWN = re.compile(
    r"^(host\.(hostname|os|arch|kernel\.(release|version)|virtualization\.(vm|container)"
    r"|cpu\.(model|online|usable)|memory_bytes)"
    r"|filesystem\.(fstype|ram_backed|network|options|nfs\..*)"
    r"|mounts\..*|throttles\..*|queues\..*|kind|size_bytes|ram_backed"
    r"|block\.chain\[\d+\]\.type"
    r"|block\.disks\[\d+\]\.(transport|vendor|model|size_bytes|rotational|scheduler"
    r"|nr_requests|logical_block_size|physical_block_size|write_cache))$"
)


def _leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of a stored dict as (``a.b[0].c``, value); lists by position."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            if str(k) not in _IDENTITY:
                yield from _leaves(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{prefix}[{i}]")
    elif prefix:
        yield prefix, value


def _leaf_text(path: str, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if path.endswith("_bytes") and isinstance(value, int):
        return format_bytes(value)
    return str(value)


@dataclass(frozen=True)
class SetupContext:
    """One setup's context as compared: the lines ``info`` shows, and every other stored
    field by its path."""

    lines: dict[str, str | None]
    fields: dict[str, str | None]
    kind: str = ""  # the target's kind: a line no setup of its kind has does not apply


def setup_context(
    host: Mapping[str, Any], kind: str, size_bytes: int | None, ctx: Mapping[str, Any]
) -> SetupContext:
    """One setup's :class:`SetupContext`; its devices numbered, not named, so that the
    first disk is compared with the first disk."""
    target = {"kind": kind, "size_bytes": size_bytes, "context": dict(ctx)}
    lines: dict[str, str | None] = {}
    numbered: dict[str, int] = {}
    for key, value in host_lines(dict(host)) + target_lines(target, identity=False):
        word = key.split(" ", 1)[0]
        if word in ("disk", "queues") and " " in key:  # "disk /dev/loop0": the first disk
            numbered[word] = numbered.get(word, 0) + 1
            key = f"{word} {numbered[word]}"
        lines[key] = value or None
    fields = {
        path: _leaf_text(path, value)
        for path, value in _leaves({"host": host, **ctx})
        if not _SHOWN.match(path)
    }
    return SetupContext(lines, fields, kind)


# What a comparison shows for a line that does not apply to a setup's kind of target (a
# local file's "nbd export", an NBD export's "filesystem"), unlike a missing value (None).
NOT_APPLICABLE = "—"


def context_differences(
    setups: Sequence[tuple[str, SetupContext]],
) -> list[tuple[str, dict[str, str | None]]]:
    """(field, {setup key: text}) for each line whose text is not the same in every setup
    (a line a setup does not have is None: unknown; :data:`NOT_APPLICABLE` when no setup
    of its kind of target has it), then each stored field that every setup has and whose
    values differ (where a setup has none, a line already differs: the device chain, a
    disk); in the order first seen."""
    out = []
    kinds = {key: c.kind for key, c in setups}
    for which in ("lines", "fields"):
        found = [(key, getattr(c, which)) for key, c in setups]
        for f in dict.fromkeys(f for _, d in found for f in d):
            values = {key: d.get(f) for key, d in found}
            if which == "lines":
                has = {kinds[key] for key, d in found if d.get(f) is not None}
                values = {
                    k: NOT_APPLICABLE if v is None and kinds[k] and kinds[k] not in has else v
                    for k, v in values.items()
                }
            if which == "fields" and None in values.values():
                continue
            if len(set(values.values())) > 1:
                out.append((f, values))
    return out
