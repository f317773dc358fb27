"""A target's probed context (:func:`iobench.probe.storage.probe_target`'s dict, as a run
stores it) read back typed: the filesystem, the block device under the target, its chain
and its disks, each absence read as empty.

Every layer that reads the storage part of a context reads it through :class:`Storage`,
not by digging in the dict (``(ctx.get("block") or {}).get("disks") or []``); the stored
JSON is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Node = Mapping[str, Any]


@dataclass(frozen=True)
class Storage:
    """The storage of one probed target: what it is on."""

    filesystem: Node  # the filesystem it is on ({} for a block device, or none found)
    block: Node  # the block device under it ({} when none was probed)
    chain: tuple[Node, ...]  # the device, then what it stacks on (partition -> disk ...)
    disks: tuple[Node, ...]  # the disks at the bottom of the chain
    io_devices: tuple[Node, ...]  # every block device that serves its IO, top first
    mounts: tuple[Node, ...]  # a block device's own mounts (a mounted device's filesystems)

    @classmethod
    def of(cls, ctx: Mapping[str, Any] | None) -> Storage:
        ctx = ctx or {}
        block = ctx.get("block") or {}
        return cls(
            filesystem=ctx.get("filesystem") or {},
            block=block,
            chain=tuple(block.get("chain") or ()),
            disks=tuple(block.get("disks") or ()),
            io_devices=tuple(ctx.get("io_devices") or ()),
            mounts=tuple(ctx.get("mounts") or ()),
        )

    @property
    def first_disk(self) -> Node | None:
        return self.disks[0] if self.disks else None
