"""What the cgroup IO throttles stored with a target mean for its figures. Pure.

A target's context holds the throttles iobench (and so fio) ran under on each device of
its IO path (``throttles``, iobench.probe.throttle). A figure that reaches one of them is
the throttle's, not the storage's: findings and limits say so.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from iobench.analysis.curves import Curve, Limits
from iobench.probe.throttle import effective, limit_text, limits_text, throttle_text

# A figure within this band of a throttle's value was set by it: throttles let a few per
# cent through around their window edges, and a run rarely reaches the full cap.
AT_LOW, AT_HIGH = 0.90, 1.05

_MODE_DIRECTIONS = {
    "read": ("read",),
    "randread": ("read",),
    "write": ("write",),
    "randwrite": ("write",),
}


def context_throttles(ctx: dict[str, Any] | None) -> dict[str, dict[str, tuple[int, str]]]:
    """{device: {key: (value, where)}} of a stored target context (empty when none): the
    cgroup IO throttles on its devices, and the storage's own QoS limits (``qos``: an RBD
    image's), which cap a figure alike."""
    found: dict[str, dict[str, tuple[int, str]]] = {}
    for key in ("throttles", "qos"):
        t = (ctx or {}).get(key)
        for device, limits in (effective(t) if isinstance(t, dict) else {}).items():
            found.setdefault(device, {}).update(limits)
    return found


def qos_text(ctx: dict[str, Any] | None) -> str | None:
    """The storage's own QoS limits, as text without the storage's name (None: none)."""
    t = (ctx or {}).get("qos")
    limits = effective(t) if isinstance(t, dict) else {}
    return "; ".join(limits_text(each) for _, each in sorted(limits.items())) or None


def cgroup_throttle_text(ctx: dict[str, Any] | None) -> str | None:
    """The cgroup IO throttles on the target's devices, as text (None: none)."""
    t = (ctx or {}).get("throttles")
    return (throttle_text(effective(t)) or None) if isinstance(t, dict) else None


def throttled_directions(ctx: dict[str, Any] | None) -> set[str]:
    """``read``/``write`` where some throttle caps IOPS or bandwidth."""
    return {key.split("_")[0] for limits in context_throttles(ctx).values() for key in limits}


def at_throttle(
    ctx: dict[str, Any] | None, direction: str, metric: str, value: float | None
) -> str | None:
    """How a figure (``metric`` ``iops`` or ``bw_bytes`` of ``direction``) equals a
    throttle on the target's devices: ``the read 5,000 IOPS throttle on loop0 (cgroup v1
    /capped)``; None when it does not."""
    if not value:
        return None
    key = f"{direction}_{'iops' if metric == 'iops' else 'bps'}"
    for device, limits in sorted(context_throttles(ctx).items()):
        if key in limits:
            limit, where = limits[key]
            if AT_LOW * limit <= value <= AT_HIGH * limit:
                return f"the {limit_text(key, limit)} throttle on {device} ({where})"
    return None


def mode_directions(rw: str) -> tuple[str, ...]:
    """The single direction of a pure read or write mode; () for mixed modes and trim."""
    return _MODE_DIRECTIONS.get(rw, ())


def with_throttles(lim: Limits, ctx: dict[str, Any] | None) -> Limits:
    """``lim`` with the throttles its IOPS and bandwidth limits equal, if any."""
    found = {}
    for d in mode_directions(lim.rw):
        for key in ("iops", "bw_bytes"):
            est = getattr(lim, key)
            which = at_throttle(ctx, d, key, est.value if est else None)
            if which:
                found[key] = which
    return dataclasses.replace(lim, throttles=found) if found else lim


def curve_throttle(c: Curve, ctx: dict[str, Any] | None) -> str | None:
    """The throttle ``c``'s plateau (the mean IOPS or bandwidth of its points) is at, if
    any."""
    iops = statistics.fmean(p.iops for p in c.plateau)
    bw = statistics.fmean(p.bw_bytes for p in c.plateau)
    for d in mode_directions(c.rw):
        which = at_throttle(ctx, d, "iops", iops) or at_throttle(ctx, d, "bw_bytes", bw)
        if which:
            return which
    return None


def curves_at_throttles(
    cs: Sequence[Curve], contexts: Mapping[str, dict[str, Any] | None]
) -> list[Curve]:
    """``cs`` with the throttle each plateau is at (``Curve.throttle``), from each target's
    context: such a plateau is the throttle's, never the host's."""
    return [dataclasses.replace(c, throttle=curve_throttle(c, contexts.get(c.target))) for c in cs]


def throttle_summary(ctx: dict[str, Any] | None) -> str | None:
    """``throttled: loop0: read 5,000 IOPS (cgroup v1 /capped)``; None without throttles."""
    parts = [t for t in (cgroup_throttle_text(ctx), qos_text(ctx)) if t]  # QoS: the target's
    return f"throttled: {'; '.join(parts)}" if parts else None


def throttle_line(ctx: dict[str, Any] | None) -> str | None:
    """What ``info`` says about throttles: those found, or none and which cgroups were
    looked at; None for contexts captured before iobench looked, or without a block
    device (tmpfs, NFS: cgroup throttles hold block devices only)."""
    t = (ctx or {}).get("throttles")
    if not isinstance(t, dict) or not (ctx or {}).get("io_devices"):
        return None  # not looked, or no block device a throttle could hold
    text = throttle_text(context_throttles(ctx))
    if text:
        return text
    cgroups = ", ".join(
        f"v{c.get('version')} {c.get('path')}"
        for c in t.get("cgroups") or []
        if isinstance(c, dict)
    )
    if t.get("note") and not cgroups:
        return f"unknown: {t['note']}"
    return "none on its devices" + (f" (iobench's cgroups: {cgroups})" if cgroups else "")


def devices_line(ctx: dict[str, Any] | None) -> str | None:
    """``loop0 (target), vda (backing: loop0's backing file /srv/img)``; None when no
    block device serves the target (or the context predates the field)."""
    devices = [d for d in (ctx or {}).get("io_devices") or [] if isinstance(d, dict)]
    if not devices:
        return None
    return ", ".join(
        f"{d.get('kname')} ({d.get('role')}" + (f": {d['via']}" if d.get("via") else "") + ")"
        for d in devices
    )
