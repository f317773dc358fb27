"""A block device: fio reads (and with --destructive, after the guard, writes) the device
itself (docs/safety.md)."""

from __future__ import annotations

import contextlib
import stat

from iobench.model import Target
from iobench.probe.context import Storage
from iobench.probe.devices import block_device_size, discard_max_bytes
from iobench.targets.checks import check_access, in_place
from iobench.targets.guard import check_block_device_writable, hold_device
from iobench.targets.kind import Named, OnThisHost, Plan, Preparation
from iobench.targets.purge import SECURE_ERASE, Purge


class Block(OnThisHost):
    name = "block"
    noun = "block device"
    accepts = "a block device such as /dev/sdb or /dev/nvme0n1"
    own_file = False
    holes = False
    claimed = (
        "holds the device open with O_EXCL while the run lasts, so nothing can mount it meanwhile"
    )
    loss = "DESTROYS ALL DATA ON IT"

    def claims(self, named: Named) -> bool:
        return stat.S_ISBLK(named.located.st.st_mode)

    def resolve(self, named: Named) -> Target:
        found = named.located
        size = block_device_size(found.real, found.st)
        return Target(spec=found.named, path=found.real, kind=self.name, size_bytes=size)

    def check(self, target: Target, plan: Plan) -> None:
        """Writing goes through the guard (docs/safety.md); the filesystem of the device's
        node says nothing of the device."""
        check_access(target, writes=plan.writes)
        if plan.writes:
            check_block_device_writable(
                target, destructive=plan.destructive, overwrite_signatures=plan.overwrite_signatures
            )

    def prepare(self, target: Target, plan: Plan) -> Preparation:
        return in_place(target, plan)

    def claim(
        self, target: Target, plan: Plan, *, readonly: bool, holds: contextlib.ExitStack
    ) -> int | None:
        """A device that will be written: the guard asked again (the first check may be a
        while ago), then the device held exclusively (O_EXCL), so nobody may mount,
        swapon or assemble it while fio writes to it."""
        if readonly:
            return None
        check_block_device_writable(
            target, destructive=plan.destructive, overwrite_signatures=plan.overwrite_signatures
        )
        return holds.enter_context(hold_device(target))

    def purge(self, target: Target) -> Purge:
        """A discard of the test area, where the device's queue takes discards."""
        limit = discard_max_bytes(target.path)
        if limit:
            said = "the device is told that the area holds nothing (BLKDISCARD)"
            return Purge("discard", f"{said}; {SECURE_ERASE}")
        why = "does not support discard" if limit == 0 else "does not say it supports discard"
        return Purge("none", f"no purge: {target.spec} {why}; {SECURE_ERASE}")

    def device_under(self, target: Target, storage: Storage) -> tuple[int | None, str | None]:
        return target.size_bytes, target.path

    def under(self, path: str) -> str:
        return ""


BLOCK = Block()
