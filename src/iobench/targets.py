"""Resolve what the user named into a Target, and guard it before anything writes to it.

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
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from iobench.errors import TargetUnsafe, UserError
from iobench.model import Target
from iobench.probe.devices import (
    DeviceFacts,
    block_device_size,
    collect_device_facts,
    loop_backing_files,
    swap_paths,
)
from iobench.probe.fstype import pseudo_filesystem
from iobench.units import format_bytes

ACCEPTED = (
    "accepted targets: a directory (iobench creates a test file in it and removes it "
    "afterwards), an existing regular file, or a block device such as /dev/sdb or /dev/nvme0n1"
)


# --- resolving -----------------------------------------------------------------------------


def _char_device_hint(real: str) -> str:
    name = Path(real).name
    if m := re.fullmatch(r"nvme(\d+)", name):
        return f"{real} is an NVMe controller; its namespaces are block devices: /dev/nvme{m[1]}n1"
    if m := re.fullmatch(r"ng(\d+)n(\d+)", name):
        return f"use the namespace's block device instead: /dev/nvme{m[1]}n{m[2]}"
    if name.startswith("sg"):
        return "SCSI generic devices are not accepted; use the disk's block device (/dev/sdX)"
    return ACCEPTED


def _missing(spec: str, absolute: str) -> UserError:
    if Path(absolute).is_symlink():
        return UserError(
            f"{spec} is a symbolic link to {Path(absolute).readlink()}, which does not exist",
            hint=ACCEPTED,
        )
    parent = Path(absolute).parent
    if parent.is_dir():
        return UserError(
            f"{spec} does not exist",
            hint=f"to benchmark a directory, create it first: mkdir {absolute}  ({ACCEPTED})",
        )
    return UserError(
        f"{spec} does not exist, and neither does its parent directory {parent}",
        hint=f"check the path; to benchmark a new directory: mkdir -p {absolute}",
    )


# The longest path the kernel takes (PATH_MAX, 4096 with the terminating NUL): a longer
# one, which a relative target in a deep directory can resolve to, fio cannot open.
_PATH_MAX = 4095


def _physical_directory() -> str:
    """The kernel's path of the working directory, which a relative target is relative to;
    a UserError when it has none (removed since, or beyond the C library's reach)."""
    try:
        return str(Path.cwd())
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            why = "it has been removed (or its filesystem unmounted) since the shell entered it"
            hint = "cd to an existing directory, or give the target's absolute path"
        elif exc.errno == errno.ENAMETOOLONG:
            why = f"its path is longer than the kernel accepts ({_PATH_MAX} bytes, PATH_MAX)"
            hint = "cd to a directory with a shorter path, or give the target's absolute path"
        else:
            why = exc.strerror or str(exc)
            hint = "give the target's absolute path"
        raise UserError(
            "a relative target names a place in the working directory, and iobench cannot "
            f"tell where that is: {why}",
            hint,
        ) from None


def _too_long(spec: str, path: str) -> UserError:
    """A target whose path the kernel refuses as too long (ENAMETOOLONG): every open and
    stat, fio's own too, would fail, so it is said here, not met as "no permission" later.
    ``path``: the absolute path ``spec`` leads to."""

    def abridged(text: str) -> str:
        return text if len(text) <= 80 else f"{text[:40]}...{text[-37:]}"

    # The path as typed counts too: "NAME/.." or "../../.." normalize away what the kernel
    # refuses in them.
    longest = max(len(os.fsencode(name)) for name in (*path.split("/"), *spec.split("/")))
    if longest > 255:  # NAME_MAX on Linux's filesystems
        what = f"a name in its path is {longest} bytes long; the kernel accepts 255"
    elif len(os.fsencode(path)) > _PATH_MAX:
        size = len(os.fsencode(path))
        named = "" if path == spec else f", {abridged(path)},"
        what = f"its path{named} is {size} bytes long; the kernel accepts {_PATH_MAX} (PATH_MAX)"
    elif len(os.fsencode(spec)) > _PATH_MAX:
        size = len(os.fsencode(spec))
        what = f"the path as given is {size} bytes long; the kernel accepts {_PATH_MAX} (PATH_MAX)"
    else:
        what = "a symbolic link in its path leads to a name or path too long for the kernel"
    return UserError(
        f"cannot use {abridged(spec)} as a target: {what}",
        "choose a directory with a shorter path, or bind-mount this one at a shorter path "
        "(mount --bind DIR /mnt/short) and name that",
    )


def _working_directory() -> str:
    """The working directory as the user's shell names it: ``$PWD`` when it is absolute,
    free of ``.`` and ``..`` and the very directory the process is in (as ``pwd -L``
    decides), else the kernel's path with symbolic links resolved."""
    physical = _physical_directory()
    logical = os.environ.get("PWD", "")
    parts = logical.split("/")
    if not logical.startswith("/") or "." in parts or ".." in parts:
        return physical
    try:
        if Path(logical).samefile(physical):
            return logical
    except OSError:
        pass
    return physical


def named_path(spec: str, real: str) -> str:
    """The absolute, normalised path that ``spec`` names, as a run stores and shows it
    (``real``: ``spec`` with its links resolved, as the caller has it already).

    Relative to the working directory (as the shell names it, see
    :func:`_working_directory`); ``.``, ``..``, repeated and trailing slashes resolved;
    symbolic links kept, so ``/dev/disk/by-id/...`` or a link to a mount stays what the
    user named (the storage it leads to is :attr:`Target.path`). Where a ``..`` follows a
    symbolic link, the kernel goes to the link target's parent, which the text alone
    cannot tell: then the path with its links resolved.
    """
    start = "/" if spec.startswith("/") else _working_directory()  # absolute: no cwd needed
    named = os.path.normpath(Path(start) / spec)
    if named.startswith("//"):  # POSIX keeps a leading "//"; nothing here means by it
        named = "/" + named.lstrip("/")
    return real if os.path.realpath(named) != real else named


def resolve_target(spec: str) -> Target:
    """What ``spec`` names: a directory, an existing file or a block device (symlinks followed).

    The Target's ``spec`` is the absolute path the user named (:func:`named_path`), its
    ``path`` the file or device that path leads to. Raises UserError for a missing path, a
    character device, a socket, a FIFO, or a path that cannot be accessed, saying what it
    is (as the user typed it) and what is accepted.
    """
    if not spec.strip():
        raise UserError("the target is empty", hint=ACCEPTED)
    # As os.path.abspath, keeping '..' and symbolic links for the messages; the working
    # directory asked only for a relative target, and said when it has no path.
    start = "/" if spec.startswith("/") else _physical_directory()
    absolute = os.path.normpath(os.path.join(start, spec))  # noqa: PTH118
    try:
        st = Path(spec).stat()  # as the kernel resolves it: a ".." after a link, as fio would
    except FileNotFoundError:
        raise _missing(spec, absolute) from None
    except NotADirectoryError:
        raise UserError(f"{spec}: a part of the path is a file, not a directory") from None
    except PermissionError:
        raise UserError(
            f"cannot access {spec}: permission denied",
            hint="run iobench as a user that can read the target (block devices usually need root)",
        ) from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise _too_long(spec, absolute) from None
        raise UserError(f"cannot access {spec}: {exc.strerror or exc}") from None
    real = os.path.realpath(spec)
    if len(os.fsencode(real)) > _PATH_MAX:  # a relative target in a too deep directory
        raise _too_long(spec, real)
    mode = st.st_mode
    named = named_path(spec, real)
    if stat.S_ISDIR(mode):
        try:
            vfs = os.statvfs(real)
            free: int | None = vfs.f_bavail * vfs.f_frsize
        except OSError:
            free = None
        return Target(spec=named, path=real, kind="directory", size_bytes=None, free_bytes=free)
    if stat.S_ISREG(mode):
        return Target(spec=named, path=real, kind="file", size_bytes=st.st_size)
    if stat.S_ISBLK(mode):
        return Target(spec=named, path=real, kind="block", size_bytes=block_device_size(real, st))
    if stat.S_ISCHR(mode):
        what, hint = "a character device", _char_device_hint(real)
    elif stat.S_ISSOCK(mode):
        what, hint = "a socket", ACCEPTED
    elif stat.S_ISFIFO(mode):
        what, hint = "a named pipe (FIFO)", ACCEPTED
    else:
        what, hint = "neither a file, a directory nor a block device", ACCEPTED
    shown = spec if real == absolute else f"{spec} (-> {real})"
    raise UserError(f"{shown} is {what}; iobench cannot benchmark it", hint=hint)


# --- what the target is on, and whether iobench may use it ---------------------------------


def check_real_storage(target: Target) -> None:
    """TargetUnsafe for a directory or file on a kernel pseudo-filesystem (proc, sysfs,
    efivarfs, cgroup ...): its files are kernel interfaces, not storage, whether the suite
    reads or writes. Decided by statfs's f_type, so symlinks and bind mounts change nothing.
    A block device is judged by the guard for devices, not by the filesystem of its node.
    """
    if target.kind == "block":
        return
    found = pseudo_filesystem(target.path)
    if found is None:
        return
    name, holds = found
    shown = target.spec if target.spec == target.path else f"{target.spec} (-> {target.path})"
    raise TargetUnsafe(
        f"{shown} is on {name} ({holds}), a kernel pseudo-filesystem: its files are the "
        "running kernel's interfaces, not storage; a benchmark there would change the "
        "system or measure nothing",
        "benchmark a directory on a real filesystem, or a block device",
    )


def check_access(target: Target, *, writes: bool) -> None:
    """UserError when iobench's user cannot do what the run needs: create its test file
    in a directory, read (and for a writing suite write) a file or device. Found before
    anything runs, so a plan (and ``iobench doctor``) says it instead of a failed run."""
    if target.kind == "directory":
        mode, need = os.W_OK | os.X_OK, "create its test file in"
    elif writes:
        mode, need = os.R_OK | os.W_OK, "read and write"
    else:
        mode, need = os.R_OK, "read"
    if os.access(target.path, mode, effective_ids=os.access in os.supports_effective_ids):
        return
    try:
        read_only = bool(os.statvfs(target.path).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    if read_only and mode & os.W_OK:
        why = "its filesystem is mounted read-only"
        hint = "remount it read-write, or choose another target"
    else:
        user = _user_name()
        why = f"{user} has no permission"
        hint = (
            "run iobench as a user that may (block devices usually need root), or choose "
            "another target"
        )
    raise UserError(f"iobench cannot {need} {target.spec}: {why}", hint)


def shared_with(target: Target) -> str | None:
    """Who else may write the directory a test file is made in, when anyone may: the
    group or everyone (without the sticky bit, which keeps others from renaming or
    removing files they do not own), or an owner that is neither iobench's user nor root.
    None for other kinds of target, and when nobody else may (as far as the mode bits say;
    ACLs are not read)."""
    if target.kind != "directory":
        return None
    try:
        st = Path(target.path).stat()
    except OSError:
        return None
    mode = stat.S_IMODE(st.st_mode)
    sticky = bool(mode & stat.S_ISVTX)
    who = []
    if st.st_uid not in (0, os.geteuid()):
        who.append(f"{_owner(st.st_uid)} (its owner)")
    if not sticky and mode & stat.S_IWOTH:
        who.append(f"everyone (mode {mode:04o}, no sticky bit)")
    elif not sticky and mode & stat.S_IWGRP:
        who.append(f"the group {_group(st.st_gid)} (mode {mode:04o}, no sticky bit)")
    return " and ".join(who) or None


def _owner(uid: int) -> str:
    import pwd

    try:
        return f"user {pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"uid {uid}"


def _group(gid: int) -> str:
    import grp

    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _user_name() -> str:
    import pwd

    uid = os.geteuid()
    try:
        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


# --- free space ----------------------------------------------------------------------------


def free_space_margin(needed_bytes: int) -> int:
    """Head-room kept free beyond the test file: 5 % of it, at least 64 MiB."""
    return max(needed_bytes * 5 // 100, 64 << 20)


def check_free_space(target: Target, needed_bytes: int) -> None:
    """For a directory target: UserError unless it has room for the test file plus a margin.

    Free space is read again now (the Target's value may be stale). Other kinds, and a
    directory whose free space cannot be read, are not checked.
    """
    if target.kind != "directory":
        return
    try:
        vfs = os.statvfs(target.path)
        free: int | None = vfs.f_bavail * vfs.f_frsize
    except OSError:
        free = target.free_bytes
    if free is None:
        return
    margin = free_space_margin(needed_bytes)
    if free >= needed_bytes + margin:
        return
    # The largest size whose own margin still fits.
    fits = max(min(free - free_space_margin(0), int(free / 1.05)), 0)
    raise UserError(
        f"not enough free space in {target.path}: the test file needs {format_bytes(needed_bytes)}"
        f" plus a {format_bytes(margin)} margin, but only {format_bytes(free)} is free",
        hint=(
            f"use a smaller --size (at most {format_bytes(fits)} fits here), free some space, "
            "or choose another directory"
            if fits
            else "free some space or choose another directory"
        ),
    )


# --- device facts (collected) and the decision (pure) --------------------------------------


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


def identity(st: os.stat_result) -> tuple[int, int]:
    """What names a file, directory or device whatever path leads to it: a device by its
    number, anything else by its filesystem and inode."""
    if stat.S_ISBLK(st.st_mode):
        return (-1, st.st_rdev)
    return (st.st_dev, st.st_ino)


def identity_of(target: Target) -> tuple[int, int]:
    """The :func:`identity` of what the target's path leads to now; UserError when it
    leads nowhere."""
    try:
        return identity(Path(target.path).stat())
    except OSError as e:
        raise UserError(f"cannot read {target.spec}: {e.strerror or e}") from e


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
