"""What Ceph's tools print, read (pure): the facts about an image's clients, clones, QoS,
pool and cluster from the JSON of ``rbd status``, ``rbd children``, ``rbd du``, ``rbd config
image list``, ``ceph osd dump`` and ``ceph versions`` (Ceph 16 "pacific"; recorded outputs in
tests/data/network). Everything read is kept printable and bounded: the cluster is outside.
A document that is not what the tool prints raises :class:`Unreadable`.

Also :func:`redacted`, which every message quoting a tool goes through: what looks like a
cephx key (``AQ`` and 38 base64 characters, or ``key = ...``) is hidden.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from iobench import jsontext
from iobench.units import printable


@dataclass(frozen=True)
class Watcher:
    """A client that has the image open (krbd, rbd-nbd, librbd in a VM or a fio)."""

    address: str
    client: str  # "client.4183": the cluster's global id of that connection


@dataclass(frozen=True)
class QosLimit:
    """One ``rbd_qos_*`` limit or burst in force, and where it is set: ``image``, ``pool``
    or ``config`` (the cluster's config database for this user, or a config file)."""

    name: str
    value: int
    source: str


@dataclass(frozen=True)
class Parent:
    pool: str
    image: str
    snapshot: str
    overlap_bytes: int | None


@dataclass(frozen=True)
class PoolFacts:
    """A pool as ``ceph osd dump`` shows it; ``kind`` is replicated or erasure."""

    name: str
    kind: str
    size: int | None  # replicas, or k+m
    min_size: int | None
    pg_num: int | None
    applications: tuple[str, ...] = ()
    erasure_profile: str | None = None
    erasure: tuple[tuple[str, str], ...] = ()  # the profile: k, m, plugin, failure domain...

    def context(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "size": self.size,
            "min_size": self.min_size,
            "pg_num": self.pg_num,
            "applications": list(self.applications),
            "erasure_profile": self.erasure_profile,
            "erasure": dict(self.erasure) or None,
        }


@dataclass(frozen=True)
class ClusterFacts:
    """The cluster: fsid, every daemon's version (``ceph versions``: type -> version ->
    count), the OSD release it requires, its OSDs, and this host's client version."""

    fsid: str | None = None
    versions: tuple[tuple[str, str, int], ...] = ()
    require_osd_release: str | None = None
    osds: int | None = None
    osds_up: int | None = None
    client_version: str | None = None

    def context(self) -> dict[str, Any]:
        return {
            "fsid": self.fsid,
            "versions": [{"daemon": d, "version": v, "count": n} for d, v, n in self.versions],
            "require_osd_release": self.require_osd_release,
            "osds": self.osds,
            "osds_up": self.osds_up,
            "client_version": self.client_version,
        }


class Unreadable(ValueError):
    """A tool's output is not what that tool prints."""


def _doc(text: str) -> Any:
    try:
        return jsontext.load(text)
    except ValueError as e:
        raise Unreadable(f"not JSON ({e})") from None


def _doc_or_none(text: str | None) -> Any:
    try:
        return _doc(text) if text is not None else None
    except Unreadable:
        return None


def _int(value: object) -> int | None:
    return value if type(value) is int and 0 <= value < 2**63 else None


def _str(value: object, limit: int = 1024) -> str | None:
    return printable(value[:limit]) if isinstance(value, str) else None


def parent_of(doc: dict[str, Any]) -> Parent:
    return Parent(
        pool=_str(doc.get("pool")) or "?",
        image=_str(doc.get("image")) or "?",
        snapshot=_str(doc.get("snapshot")) or "?",
        overlap_bytes=_int(doc.get("overlap")),
    )


def info_fields(text: str) -> dict[str, Any]:
    """``rbd info --format json``: the image's size, layout, features and parent, as
    RbdImage's fields."""
    doc = _doc(text)
    if not isinstance(doc, dict) or _int(doc.get("size")) is None:
        raise Unreadable("it gives no image size")
    parent = doc.get("parent")
    return {
        "size_bytes": doc["size"],
        "object_size": _int(doc.get("object_size")),
        "features": tuple(t for f in doc.get("features") or [] if (t := _str(f, 64))),
        "flags": tuple(t for f in doc.get("flags") or [] if (t := _str(f, 64))),
        "image_id": _str(doc.get("id"), 64),
        "block_name_prefix": _str(doc.get("block_name_prefix"), 128),
        "data_pool": _str(doc.get("data_pool")),
        "stripe_unit": _int(doc.get("stripe_unit")),
        "stripe_count": _int(doc.get("stripe_count")),
        "snapshots": _int(doc.get("snapshot_count")),
        "parent": parent_of(parent) if isinstance(parent, dict) else None,
    }


def _objects(found: object, what: str) -> list[dict[str, Any]]:
    """A list of JSON objects; Unreadable otherwise (a safety fact is not guessed at)."""
    if not isinstance(found, list) or not all(isinstance(item, dict) for item in found):
        raise Unreadable(f"it is not a list of {what}")
    return found


def watchers_of(text: str) -> tuple[Watcher, ...]:
    """``rbd status --format json``."""
    doc = _doc(text)
    found = _objects(doc.get("watchers") if isinstance(doc, dict) else None, "watchers")
    ids = [_int(w.get("client")) for w in found]
    return tuple(
        Watcher(_str(w.get("address")) or "?", f"client.{'?' if i is None else i}")
        for w, i in zip(found, ids, strict=True)
    )


def children_of(text: str) -> tuple[str, ...]:
    """``rbd children --all --format json``: POOL/IMAGE of each clone (a namespace shown
    as POOL/NAMESPACE/IMAGE)."""
    return tuple(
        "/".join(p for p in (_str(c.get(k)) for k in ("pool", "pool_namespace", "image")) if p)
        for c in _objects(_doc(text), "images")
    )


def usage_of(text: str, image: str) -> tuple[int | None, int | None]:
    """``rbd du --format json POOL/IMAGE``: (used, provisioned) bytes of the image itself
    (its snapshots' rows are not its own)."""
    doc = _doc(text)
    rows = doc.get("images") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        raise Unreadable("it lists no images")
    for row in rows:
        if isinstance(row, dict) and row.get("name") == image and "snapshot" not in row:
            return _int(row.get("used_size")), _int(row.get("provisioned_size"))
    raise Unreadable("it does not list the image")


def qos_of(text: str) -> tuple[QosLimit, ...]:
    """``rbd config image list --format json``: every ``rbd_qos_*_limit`` and
    ``rbd_qos_*_burst`` that is not 0, with its source. (The other rbd_qos_* settings,
    ``*_burst_seconds`` and ``schedule_tick_min``, are never 0 and limit nothing.)"""
    found = []
    for item in _objects(_doc(text), "settings"):
        name = item.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"rbd_qos_[a-z_]+_(limit|burst)", name):
            continue
        value = str(item.get("value"))
        if value.isdigit() and int(value) > 0:
            found.append(QosLimit(name, int(value), _str(item.get("source"), 32) or "?"))
    return tuple(found)


def pools_of(osd_dump: str) -> dict[str, PoolFacts]:
    """``ceph osd dump --format json``: every pool by name, with its erasure profile."""
    doc = _doc(osd_dump)
    if not isinstance(doc, dict) or not isinstance(doc.get("pools"), list):
        raise Unreadable("it lists no pools")
    profiles = doc.get("erasure_code_profiles")
    profiles = profiles if isinstance(profiles, dict) else {}
    pools = {}
    for p in doc["pools"]:
        if not isinstance(p, dict) or not isinstance(p.get("pool_name"), str):
            continue
        profile = _str(p.get("erasure_code_profile")) or None
        erasure = p.get("type") == 3
        shape = profiles.get(profile) if erasure and profile else None
        pools[p["pool_name"]] = PoolFacts(
            name=printable(p["pool_name"]),
            kind="erasure" if erasure else "replicated",
            size=_int(p.get("size")),
            min_size=_int(p.get("min_size")),
            pg_num=_int(p.get("pg_num")),
            applications=tuple(sorted(map(printable, p.get("application_metadata") or {}))),
            erasure_profile=profile if erasure else None,
            erasure=tuple(
                (printable(k), printable(str(v))) for k, v in sorted((shape or {}).items())
            ),
        )
    return pools


def cluster_of(osd_dump: str | None, versions: str | None, client: str | None) -> ClusterFacts:
    """``ceph osd dump`` (fsid, release, OSDs), ``ceph versions`` and ``rbd --version``;
    each may be missing (None) or unreadable: its facts are then None."""
    dump = _doc_or_none(osd_dump)
    dump = dump if isinstance(dump, dict) else {}
    osds = dump.get("osds") if isinstance(dump.get("osds"), list) else None
    found: list[tuple[str, str, int]] = []
    doc = _doc_or_none(versions)
    for daemon, counts in (doc if isinstance(doc, dict) else {}).items():
        if daemon != "overall" and isinstance(counts, dict):
            found += [
                (printable(daemon), _str(v, 200) or "?", n)
                for v, n in counts.items()
                if type(n) is int
            ]
    return ClusterFacts(
        fsid=_str(dump.get("fsid"), 64),
        versions=tuple(found),
        require_osd_release=_str(dump.get("require_osd_release"), 32),
        osds=len(osds) if osds is not None else None,
        osds_up=sum(1 for o in osds if isinstance(o, dict) and o.get("up") == 1)
        if osds is not None
        else None,
        client_version=_str(client.strip(), 200) if client else None,
    )


_KEY_RE = re.compile(r"AQ[A-Za-z0-9+/]{36,}={0,2}|(?i:\bkey\s*=\s*)\S+")


def redacted(text: str) -> str:
    """A tool's message with anything that looks like a cephx key hidden, printable, short."""
    text = printable(_KEY_RE.sub("<hidden>", text))
    return text if len(text) <= 300 else text[:300] + "..."


def tail_of(stderr: str) -> str:
    """The tool's last line that says something (not a date-stamped log line's prefix)."""
    lines = [re.sub(r"^\S+T\S+ \S+ +-?\d+ ", "", ln).strip() for ln in stderr.splitlines()]
    lines = [ln for ln in lines if ln]
    return redacted(lines[-1]) if lines else "no message"
