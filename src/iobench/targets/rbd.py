"""A Ceph RBD image, named ``rbd:POOL/IMAGE``: fio's ``rbd`` engine (librbd, as QEMU uses
it) reaches it through the network, no kernel module needed; ``--ceph-conf`` and
``--ceph-user`` say how (else the environment's defaults). Writing needs --destructive, as
for a block device; an image that another client has open, that clones depend on, or whose
first blocks hold a filesystem or partition table is refused (docs/targets.md)."""

from __future__ import annotations

import contextlib
import dataclasses
import re
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
from iobench.targets.kind import Named, OverTheNetwork, Plan, Preparation, Reach

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


RBD = Rbd()
