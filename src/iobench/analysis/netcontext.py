"""Network storage's context as lines a person reads: what the NBD server said of its
export (``nbd``), what the Ceph cluster said of an RBD image, its pool and itself (``rbd``),
the QoS limits in force (``qos``) and whether the server runs on the very host (docs/
targets.md, "Context"). Pure: the stored dicts in (anything may be missing or odd: a
stored context is outside data), strings out."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from iobench.units import format_bytes


def _join(*parts: Any) -> str:
    return ", ".join(str(p) for p in parts if p not in (None, "", False))


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _size(value: Any) -> str | None:
    return format_bytes(value) if isinstance(value, int) and not isinstance(value, bool) else None


def network_lines(ctx: Mapping[str, Any], *, identity: bool = True) -> list[tuple[str, str]]:
    """The lines of an NBD export's or an RBD image's context (none for other targets).
    Without ``identity``, only what describes the storage (no names, addresses, fsid)."""
    lines = _nbd_lines(_dict(ctx.get("nbd")), identity) + _rbd_lines(
        _dict(ctx.get("rbd")), identity
    )
    here = ctx.get("served_here")
    if identity and isinstance(here, str) and here:
        lines.append(("served here", here))
    if not identity:  # a comparison with a local disk says why writes take longer
        lines.append((WRITES, _acknowledged(ctx)))
    return lines


WRITES = "a write is done"


def _acknowledged(ctx: Mapping[str, Any]) -> str:
    """When a write is done, for the comparison of latencies: on this host's storage, by
    an NBD server, or once a Ceph pool's copies (or erasure chunks) are all written."""
    if ctx.get("nbd"):
        return "when the NBD server answers (over the network; its storage is its own)"
    pool = _dict(_dict(ctx.get("rbd")).get("pool"))
    if not ctx.get("rbd"):
        return "when this host's own storage stack has it (no network)"
    if pool.get("kind") == "erasure":
        erasure = _dict(pool.get("erasure"))
        k, m = erasure.get("k", "k"), erasure.get("m", "m")
        return (
            f"when the primary OSD has written all {k}+{m} erasure-coded chunks on "
            "as many OSDs (over the network; a small write reads and rewrites a stripe)"
        )
    size = pool.get("size")
    copies = f"all {size} copies" if isinstance(size, int) and size > 1 else "its one copy"
    return f"when the OSDs have written {copies} (over the network; replicated size {size})"


def _nbd_lines(nbd: Mapping[str, Any], identity: bool) -> list[tuple[str, str]]:
    if not nbd:
        return []
    flags = _dict(nbd.get("flags"))
    can = [
        name.removeprefix("can_").replace("_", "-")
        for name, on in flags.items()
        if on is True and name.startswith("can_")
    ]
    rotational = flags.get("is_rotational")
    sizes = _dict(nbd.get("block_size"))
    readonly = nbd.get("readonly")
    export = nbd.get("export")
    lines = [
        (
            "nbd export",
            _join(
                identity and export is not None and f"name {export!r}",
                _size(nbd.get("size_bytes")),
                isinstance(readonly, bool) and ("read-only" if readonly else "writable"),
                nbd.get("transport"),
                nbd.get("tls") is True and "TLS",
                nbd.get("protocol"),
            ),
        ),
        (
            "nbd can",
            _join(
                *can,
                None if rotational is None else ("rotational" if rotational else "non-rotational"),
            ),
        ),
    ]
    if any(isinstance(v, int) for v in sizes.values()):
        lines.append(
            (
                "nbd block sizes",
                _join(*(f"{k} {_size(v)}" for k, v in sizes.items() if _size(v))),
            )
        )
    if identity and isinstance(nbd.get("description"), str):
        lines.append(("nbd description", nbd["description"]))
    return lines


def _rbd_lines(rbd: Mapping[str, Any], identity: bool) -> list[tuple[str, str]]:
    if not rbd:
        return []
    cluster, pool = _dict(rbd.get("cluster")), _dict(rbd.get("pool"))
    versions = [_dict(v) for v in cluster.get("versions") or [] if isinstance(v, Mapping)]
    daemons = _join(
        *(f"{v.get('daemon')} {_version(v.get('version'))} x{v.get('count')}" for v in versions)
    )
    lines = [
        (
            "ceph cluster",
            _join(
                identity and cluster.get("fsid") and f"fsid {cluster['fsid']}",
                daemons
                or (cluster.get("client_version") and f"client {cluster['client_version']}"),
                cluster.get("osds") is not None
                and f"{cluster.get('osds_up')}/{cluster.get('osds')} OSDs up",
            ),
        ),
        ("ceph pool", pool_text(pool, identity)),
    ]
    used, provisioned = rbd.get("used_bytes"), rbd.get("provisioned_bytes")
    lines.append(
        (
            "rbd image",
            _join(
                _size(rbd.get("size_bytes")),
                _size(rbd.get("object_size")) and f"objects of {_size(rbd.get('object_size'))}",
                rbd.get("features") and "features " + " ".join(map(str, rbd["features"])),
                _size(used) and f"{_size(used)} used of {_size(provisioned) or '?'} provisioned",
                identity and rbd.get("data_pool") and f"data pool {rbd['data_pool']}",
            ),
        )
    )
    qos = [_dict(q) for q in rbd.get("qos") or [] if isinstance(q, Mapping)]
    if qos:
        lines.append(
            (
                "rbd qos",
                _join(*(f"{q.get('name')} {q.get('value')} ({q.get('source')})" for q in qos)),
            )
        )
    if identity:
        watchers = rbd.get("watchers")
        if isinstance(watchers, list):
            shown = [f"{_dict(w).get('client')} at {_dict(w).get('address')}" for w in watchers]
            lines.append(("rbd open by", _join(*shown) or "nobody"))
        access = _dict(rbd.get("access"))
        if access:
            lines.append(
                (
                    "ceph access",
                    _join(access.get("conf"), access.get("user") and f"user {access['user']}"),
                )
            )
    return lines


def pool_text(pool: Mapping[str, Any], identity: bool = True) -> str:
    """``rbd: replicated size 3 (min 2), 64 PGs`` or ``erasure k=4 m=2 (profile ec42)``."""
    if not pool:
        return "unknown"
    erasure = _dict(pool.get("erasure"))
    if pool.get("kind") == "erasure":
        shape = _join(
            "erasure " + " ".join(f"{k}={erasure[k]}" for k in ("k", "m") if k in erasure),
            pool.get("erasure_profile") and f"profile {pool['erasure_profile']}",
        )
    else:
        shape = f"replicated size {pool.get('size')} (min {pool.get('min_size')})"
    return _join(
        identity and pool.get("name"),
        shape,
        pool.get("pg_num") and f"{pool['pg_num']} PGs",
    )


def _version(text: Any) -> str:
    """``ceph version 16.2.15 (618f44…) pacific (stable)`` as ``16.2.15 pacific``."""
    found = re.match(r"ceph version (\S+) \(\w+\) (\w+)", str(text))
    return f"{found[1]} {found[2]}" if found else str(text)
