"""Guard a target before anything writes to it.

Raw-device writes need ``--destructive`` and are refused, even then, on devices that are in
use or carry data (docs/safety.md gives the reason for every rule). The decision is a pure
function over :class:`~iobench.probe.devices.DeviceFacts`, so each rule is tested without
root; :func:`iobench.probe.devices.collect_device_facts` gathers the facts from /proc, /sys,
wipefs and the kernel. This module reads none of them itself.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from iobench.errors import TargetUnsafe, UserError
from iobench.model import Target
from iobench.probe.devices import DeviceFacts, collect_device_facts, loop_backing_files, swap_paths


@dataclass(frozen=True)
class Refusal:
    rule: str  # destructive, mounted, swap, holders, stacked, member, busy, unchecked, signatures
    message: str
    hint: str


def refusals(
    facts: DeviceFacts, *, destructive: bool, overwrite_signatures: bool
) -> tuple[Refusal, ...]:
    """Every reason not to write to the device; empty when writing is allowed (pure)."""
    path, found = facts.path, []
    if not destructive:
        found.append(
            Refusal(
                "destructive",
                f"{path} is a block device and the suite writes to it, destroying its contents",
                f"pass --destructive if nothing on {path} is needed "
                "(read-only suites need no flag)",
            )
        )
    if facts.mounts:
        where = ", ".join(f"{dev} on {mnt}" for dev, mnt in facts.mounts)
        found.append(
            Refusal(
                "mounted",
                f"{path} is mounted: {where}",
                "unmount it first, or benchmark a directory on that filesystem instead",
            )
        )
    if facts.swaps:
        found.append(
            Refusal(
                "swap",
                f"{path} is in use as swap: {', '.join(facts.swaps)}",
                "swapoff it first if it may be destroyed",
            )
        )
    if facts.holders:
        held = ", ".join(f"{dev} by {holder}" for dev, holder in facts.holders)
        found.append(
            Refusal(
                "holders",
                f"{path} is part of a stacked device: {held}",
                "remove the device-mapper/LVM/md/loop device on top of it first "
                "(lvchange -an, cryptsetup close, mdadm --stop, losetup -d)",
            )
        )
    if facts.stacked:
        found.append(
            Refusal(
                "stacked",
                f"{path} is a {facts.stacked}; iobench does not write to device-mapper or md "
                "devices (their data may span several disks)",
                "benchmark a directory on its filesystem, or write to a scratch disk instead",
            )
        )
    members = [s for s in facts.signatures if s.is_member]
    if members:
        found.append(
            Refusal(
                "member",
                f"{path} belongs to a multi-device volume: "
                + "; ".join(s.describe(facts.kname) for s in members),
                f"if it truly holds nothing you need, erase that yourself (wipefs -a {path}) and "
                "run again; --overwrite-signatures does not cover volume members",
            )
        )
    if facts.busy and not (facts.mounts or facts.swaps or facts.holders):
        found.append(
            Refusal(
                "busy",
                f"{path} is in use by the kernel (mounted, swap, or held by device-mapper/md): "
                "an exclusive open failed with EBUSY, possibly a mount in another namespace",
                f"find the user with lsblk {path} and findmnt -S {path} (in every container too)",
            )
        )
    if facts.unchecked:
        found.append(
            Refusal(
                "unchecked",
                f"could not prove that {path} is unused: " + "; ".join(facts.unchecked),
                "run iobench as root, with util-linux installed (wipefs, blkid)",
            )
        )
    others = [s for s in facts.signatures if not s.is_member]
    if (others or facts.partitions) and not overwrite_signatures:
        parts = [s.describe(facts.kname) for s in others]
        if facts.partitions:
            parts.append("partitions " + ", ".join(facts.partitions))
        found.append(
            Refusal(
                "signatures",
                f"{path} holds data: " + "; ".join(parts),
                "pass --overwrite-signatures as well if all of it may be destroyed",
            )
        )
    return tuple(found)


def format_refusals(found: tuple[Refusal, ...]) -> tuple[str, str]:
    """(message, hint) for TargetUnsafe: one reason per line when there are several."""
    if len(found) == 1:
        return found[0].message, found[0].hint
    message = "refusing to write to the device:\n" + "\n".join(f"  - {r.message}" for r in found)
    hints = list(dict.fromkeys(r.hint for r in found))
    return message, "\n".join(hints)


def check_block_device_writable(
    target: Target, *, destructive: bool, overwrite_signatures: bool
) -> None:
    """Raise TargetUnsafe unless the suite may write to this block device.

    Call it when the suite has any writing workload. Without ``destructive`` it is always
    refused; with it, still refused when the device is in use or is a volume member, and when
    it holds a filesystem or partition table unless ``overwrite_signatures``.
    """
    if target.kind != "block":
        raise ValueError(f"check_block_device_writable needs a block device, not a {target.kind}")
    facts = collect_device_facts(target.path)
    found = refusals(facts, destructive=destructive, overwrite_signatures=overwrite_signatures)
    if found:
        message, hint = format_refusals(found)
        raise TargetUnsafe(message, hint=hint)


@contextlib.contextmanager
def hold_device(target: Target) -> Iterator[int]:
    """Keep an exclusive (O_EXCL) claim on a block device while the benchmark runs; yields
    the open descriptor.

    Nobody can mount it, swapon it or build device-mapper/md on it meanwhile, which closes
    the gap between :func:`check_block_device_writable` and fio's run. fio's own
    (non-exclusive) opens still work. Raises TargetUnsafe when the device is busy already.
    """
    try:
        fd = os.open(target.path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            raise TargetUnsafe(
                f"{target.path} is in use by the kernel (mounted, swap, or held by "
                "device-mapper/md)",
                hint=f"find the user with lsblk {target.path}",
            ) from None
        raise TargetUnsafe(
            f"cannot claim {target.path} exclusively: {exc.strerror or exc}",
            hint="run iobench as root",
        ) from None
    try:
        yield fd
    finally:
        os.close(fd)


def _same_file(a: os.stat_result, path: str) -> bool:
    try:
        b = Path(path).stat()
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def check_file_writable(target: Target, protected: Sequence[str] = ()) -> None:
    """Refuse to write to an existing file that something else is using.

    An active swap file, the backing file of a loop device (a mounted image, a VM disk) and
    the ``protected`` files (iobench's own results database) are compared by device and
    inode, so hard links and other paths to the same file are caught too.
    """
    try:
        st = Path(target.path).stat()
    except OSError as e:
        raise UserError(f"cannot read {target.spec}: {e.strerror}") from e
    for path in swap_paths():
        if _same_file(st, path):
            raise TargetUnsafe(
                f"{target.spec} is an active swap file",
                f"swapoff {target.path} first if it may really be overwritten",
            )
    for loop, path in loop_backing_files():
        if _same_file(st, path):
            raise TargetUnsafe(
                f"{target.spec} backs the loop device /dev/{loop} (a mounted image or a disk "
                "in use)",
                f"detach it first (losetup -d /dev/{loop}) if it may really be overwritten",
            )
    for path in protected:
        if _same_file(st, path):
            raise TargetUnsafe(
                f"{target.spec} is iobench's own results database",
                "choose another file, or another database with --db",
            )
