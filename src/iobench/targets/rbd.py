"""A Ceph RBD image, named ``rbd:POOL/IMAGE``: fio's ``rbd`` engine (librbd, as QEMU uses
it) reaches it through the network, no kernel module needed; ``--ceph-conf`` and
``--ceph-user`` say how (else the environment's defaults). Writing needs --destructive, as
for a block device; an image that another client has open, that clones depend on, or whose
first blocks hold a filesystem or partition table is refused (docs/targets.md)."""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from iobench.errors import TargetUnsafe
from iobench.model import Target
from iobench.probe.addresses import served_here
from iobench.probe.ceph import (
    CephAccess,
    RbdImage,
    monitors,
    parse_rbd_spec,
    probe_rbd,
    rbd_signatures,
)
from iobench.probe.host import run_json
from iobench.probe.written import Unwritten, unwritten_of_extents
from iobench.targets.checks import check_destructive, in_place
from iobench.targets.kind import (
    AccessOption,
    Named,
    OverTheNetwork,
    Plan,
    Preparation,
    Reach,
)
from iobench.targets.lines import WRITES, Lines, join, mapping, served_here_line, size

PREFIX = "rbd:"


def access_of(target: Target) -> CephAccess:
    """How iobench reaches the cluster of ``target`` (--ceph-conf, --ceph-user)."""
    given = dict(target.access)
    return CephAccess(conf=given.get("ceph_conf"), user=given.get("ceph_user"))


class Rbd(OverTheNetwork):
    name = "rbd"
    noun = "RBD image"
    accepts = "a Ceph RBD image (rbd:POOL/IMAGE)"
    loss = "DESTROYS THE IMAGE'S DATA"
    engine: str | None = "rbd"
    endpoint_options = frozenset({"pool", "rbdname", "clientname", "clustername"})
    claimed = "checks again just before fio starts that no other client has the image open"
    access: tuple[AccessOption, ...] = (
        AccessOption(
            "--ceph-conf",
            "ceph_conf",
            "FILE",
            "For rbd:POOL/IMAGE targets: the Ceph configuration (monitors, keyring) "
            "[default: $CEPH_CONF, else /etc/ceph/ceph.conf].",
        ),
        AccessOption(
            "--ceph-user",
            "ceph_user",
            "NAME",
            "For rbd:POOL/IMAGE targets: the Ceph user, without 'client.' (its key comes "
            "from the keyring the configuration names) [default: admin].",
        ),
    )

    def claims(self, named: Named) -> bool:
        return named.spec.lower().startswith(PREFIX)

    def resolve(self, named: Named) -> Target:
        name = parse_rbd_spec(named.spec)
        target = Target(name.text, name.text, self.name, None, access=named.access)
        image = probe_rbd(access_of(target), name)  # unreachable, no such image: exit 2
        return dataclasses.replace(target, size_bytes=image.size_bytes, facts=image)

    def _image(self, target: Target, *, fresh: bool = False) -> RbdImage:
        """What the cluster said when the target was resolved (``fresh``: now)."""
        if isinstance(target.facts, RbdImage) and not fresh:
            return target.facts
        return probe_rbd(access_of(target), parse_rbd_spec(target.path))

    def check(self, target: Target, plan: Plan) -> None:
        check_destructive(target, plan, "an RBD image")
        if plan.writes:
            self._check_writable(target, self._image(target), plan)

    def _check_writable(self, target: Target, image: RbdImage, plan: Plan) -> None:
        if image.watchers is None or image.children is None:
            raise TargetUnsafe(
                f"{target.spec}: iobench could not find out who has it open or which clones "
                f"depend on it ({'; '.join(image.unchecked) or 'no answer'}), and will not "
                "write to an image it could not check",
                "check that this user may run `rbd status` and `rbd children` on it",
            )
        if image.watchers:
            clients = ", ".join(f"{w.client} at {w.address}" for w in image.watchers[:4])
            raise TargetUnsafe(
                f"{target.spec} is open by another client ({clients}): a VM, krbd, rbd-nbd "
                "or another benchmark may be using it, and writing would corrupt what it sees",
                "close it there (unmap it, stop the VM), or benchmark an image of its own",
            )
        if image.children:
            raise TargetUnsafe(
                f"{target.spec} is the parent of {len(image.children)} clone(s) "
                f"({', '.join(image.children[:3])}): they read what is not yet copied from it",
                "benchmark an image that no clone depends on",
            )
        found = rbd_signatures(image)
        if found and not plan.overwrite_signatures:
            raise TargetUnsafe(
                f"{target.spec} holds {', '.join(s.describe('') for s in found)} in its first "
                "blocks: it looks in use",
                "pass --overwrite-signatures as well if all of it may be destroyed",
            )

    def prepare(self, target: Target, plan: Plan) -> Preparation:
        return in_place(target, plan)

    def claim(
        self, target: Target, plan: Plan, *, readonly: bool, holds: contextlib.ExitStack
    ) -> int | None:
        """Just before fio starts: nobody opened the image since the checks."""
        if not readonly:
            self._check_writable(target, self._image(target, fresh=True), plan)
        return None

    def reach(self, target: Target, filename: str) -> Reach:
        reach = self.reach_from(target, filename)
        conf = access_of(target).conf
        env = (("CEPH_CONF", conf),) if conf else ()  # fio's rbd engine has no option for it
        return dataclasses.replace(reach, env=env)

    def reach_from(self, target: Target, filename: str) -> Reach:
        name = parse_rbd_spec(target.path)
        user = access_of(target).user
        options = [("pool", name.pool), ("rbdname", name.image)]
        if user:
            options.append(("clientname", user))
        return Reach(shown=target.spec, engine=self.engine, options=tuple(options))

    def capture(self, target: Target) -> dict[str, Any]:
        image = self._image(target)
        mons = monitors(image.access) or ""
        hosts = re.findall(r"(\d{1,3}(?:\.\d{1,3}){3})|\[([0-9A-Fa-f:]+)\]", mons)
        return {
            "rbd": image.context(),
            "qos": qos_throttles(target.spec, image),
            "served_here": served_here([a or b for a, b in hosts]),
        }

    def unwritten(self, target: Target, filename: str, area: int) -> Unwritten | None:
        """What ``rbd diff`` lists as written (exact: the image's allocated extents)."""
        image = self._image(target)
        diff = ["rbd", *image.access.tool_args(), "diff", "--format", "json", image.name.spec]
        extents = run_json(diff, timeout_s=10)
        if not isinstance(extents, list):
            return None
        written = [
            (e.get("offset"), e.get("length"))
            for e in extents
            if isinstance(e, dict) and e.get("exists") in ("true", True)
        ]
        return unwritten_of_extents(written, area)

    def describe(self, ctx: Mapping[str, Any], *, identity: bool) -> Lines:
        """What the cluster said of the image, its pool and itself (docs/context.md,
        ``rbd``)."""
        rbd = mapping(ctx.get("rbd"))
        lines = _rbd_lines(rbd, identity) + served_here_line(ctx, identity)
        if not identity:
            data = rbd.get("data_pool_facts") or rbd.get("pool")  # where the data is written
            lines.append((WRITES, _acknowledged(mapping(data))))
        return lines


# rbd_qos_* limits as the IO limits the findings and characterize's verdicts know
# (probe/throttle.py's keys); a total limit caps each direction.
_QOS_KEYS = {
    "rbd_qos_iops_limit": ("read_iops", "write_iops"),
    "rbd_qos_read_iops_limit": ("read_iops",),
    "rbd_qos_write_iops_limit": ("write_iops",),
    "rbd_qos_bps_limit": ("read_bps", "write_bps"),
    "rbd_qos_read_bps_limit": ("read_bps",),
    "rbd_qos_write_bps_limit": ("write_bps",),
}


def qos_throttles(spec: str, image: RbdImage) -> dict[str, Any]:
    """The image's QoS limits in force, as the ``qos`` of its context (the shape of
    ``throttles``: one entry per limit, with where it is set)."""
    limits = [
        {"device": spec, "where": f"RBD QoS {q.name}, set in the {q.source}"}
        | dict.fromkeys(_QOS_KEYS[q.name], q.value)
        for q in image.qos or ()
        if q.name in _QOS_KEYS and q.value > 0
    ]
    return {"limits": limits, "note": None if image.qos is not None else "not read"}


def _rbd_lines(rbd: Mapping[str, Any], identity: bool) -> list[tuple[str, str]]:
    if not rbd:
        return []
    cluster, pool = mapping(rbd.get("cluster")), mapping(rbd.get("pool"))
    versions = [mapping(v) for v in cluster.get("versions") or [] if isinstance(v, Mapping)]
    daemons = join(
        *(f"{v.get('daemon')} {_version(v.get('version'))} x{v.get('count')}" for v in versions)
    )
    lines = [
        (
            "ceph cluster",
            join(
                identity and cluster.get("fsid") and f"fsid {cluster['fsid']}",
                daemons
                or (cluster.get("client_version") and f"client {cluster['client_version']}"),
                cluster.get("osds") is not None
                and f"{cluster.get('osds_up')}/{cluster.get('osds')} OSDs up",
            ),
        ),
        ("ceph pool", pool_text(pool, identity)),
    ]
    data = mapping(rbd.get("data_pool_facts"))
    if data:  # the image's data in a pool of its own (erasure-coded, usually)
        lines.append(("ceph data pool", pool_text(data, identity)))
    used, provisioned = rbd.get("used_bytes"), rbd.get("provisioned_bytes")
    lines.append(
        (
            "rbd image",
            join(
                size(rbd.get("size_bytes")),
                size(rbd.get("object_size")) and f"objects of {size(rbd.get('object_size'))}",
                rbd.get("features") and "features " + " ".join(map(str, rbd["features"])),
                size(used) and f"{size(used)} used of {size(provisioned) or '?'} provisioned",
                identity and rbd.get("data_pool") and f"data pool {rbd['data_pool']}",
            ),
        )
    )
    qos = [mapping(q) for q in rbd.get("qos") or [] if isinstance(q, Mapping)]
    if qos:
        lines.append(
            (
                "rbd qos",
                join(*(f"{q.get('name')} {q.get('value')} ({q.get('source')})" for q in qos)),
            )
        )
    if identity:
        watchers = rbd.get("watchers")
        if isinstance(watchers, list):
            shown = [f"{mapping(w).get('client')} at {mapping(w).get('address')}" for w in watchers]
            lines.append(("rbd open by", join(*shown) or "nobody"))
        access = mapping(rbd.get("access"))
        if access:
            lines.append(
                (
                    "ceph access",
                    join(access.get("conf"), access.get("user") and f"user {access['user']}"),
                )
            )
    return lines


def pool_text(pool: Mapping[str, Any], identity: bool = True) -> str:
    """``rbd: replicated size 3 (min 2), 64 PGs`` or ``erasure k=4 m=2 (profile ec42)``."""
    if not pool:
        return "unknown"
    erasure = mapping(pool.get("erasure"))
    if pool.get("kind") == "erasure":
        shape = join(
            "erasure " + " ".join(f"{k}={erasure[k]}" for k in ("k", "m") if k in erasure),
            pool.get("erasure_profile") and f"profile {pool['erasure_profile']}",
        )
    else:
        shape = f"replicated size {pool.get('size')} (min {pool.get('min_size')})"
    return join(
        identity and pool.get("name"),
        shape,
        pool.get("pg_num") and f"{pool['pg_num']} PGs",
    )


def _acknowledged(pool: Mapping[str, Any]) -> str:
    """When a write to an image of ``pool`` is done: once every copy, or every erasure
    chunk, is written."""
    if pool.get("kind") == "erasure":
        erasure = mapping(pool.get("erasure"))
        k, m = erasure.get("k", "k"), erasure.get("m", "m")
        return (
            f"when the primary OSD has written all {k}+{m} erasure-coded chunks on "
            "as many OSDs (over the network; a small write reads and rewrites a stripe)"
        )
    copies = pool.get("size")
    every = f"all {copies} copies" if isinstance(copies, int) and copies > 1 else "its one copy"
    return f"when the OSDs have written {every} (over the network; replicated size {copies})"


def _version(text: Any) -> str:
    """``ceph version 16.2.15 (618f44…) pacific (stable)`` as ``16.2.15 pacific``."""
    found = re.match(r"ceph version (\S+) \(\w+\) (\w+)", str(text))
    return f"{found[1]} {found[2]}" if found else str(text)


RBD = Rbd()
