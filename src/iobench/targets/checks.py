"""What the kinds named by a path check before a run: real storage (not a kernel
pseudo-filesystem), the user's access, who else may write a directory, a directory's free
space; and what the kinds fio uses in place (a file, a device) share: their size, and the
area written first with --prefill."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from iobench.errors import TargetUnsafe, UserError
from iobench.model import Target
from iobench.probe.fstype import pseudo_filesystem
from iobench.targets.kind import Plan, Preparation
from iobench.units import format_bytes


def check_real_storage(target: Target) -> None:
    """TargetUnsafe for a directory or file on a kernel pseudo-filesystem (proc, sysfs,
    efivarfs, cgroup ...): its files are kernel interfaces, not storage, whether the suite
    reads or writes. Decided by statfs's f_type, so symlinks and bind mounts change nothing.
    A block device is judged by the guard for devices, not by the filesystem of its node
    (its kind does not call this).
    """
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
    """UserError when iobench's user cannot read (and for a writing suite write) a file
    or device."""
    if writes:
        check_access_for(target, os.R_OK | os.W_OK, "read and write")
    else:
        check_access_for(target, os.R_OK, "read")


def check_access_for(target: Target, mode: int, need: str) -> None:
    """UserError when iobench's user cannot do what the run needs (``mode``, for
    :func:`os.access`; ``need``, said in the message). Found before anything runs, so a
    plan (and ``iobench doctor``) says it instead of a failed run."""
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
    None for a target used in place (with a size of its own: a file, a device), and when
    nobody else may (as far as the mode bits say;
    ACLs are not read)."""
    if target.size_bytes is not None:
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

    Free space is read again now (the Target's value may be stale). A target used in place
    (with a size of its own: a file, a device), and a directory whose free space cannot be
    read, are not checked.
    """
    if target.size_bytes is not None:
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


def in_place(target: Target, plan: Plan) -> Preparation:
    """A target fio uses itself (a file, a device): its size caps every test area; with
    --prefill or --precondition the largest area is written first; only read when nothing
    writes."""
    if target.size_bytes is None:
        raise UserError(
            f"cannot tell the size of {target.spec}",
            "check that it is readable (run as root for devices)",
        )
    limit = target.size_bytes
    if limit == 0:
        raise UserError(
            f"{target.spec} is empty (0 bytes): there is nothing to read or write",
            "give a directory, a file with data in it, or a device",
        )
    # --prefill (and a precondition) writes the whole test area first, like a test
    # file's layout.
    layout = (plan.area(limit) or 0) if plan.prefill or plan.precondition else 0
    return Preparation(target.path, False, layout, limit, not plan.writes)


def check_destructive(target: Target, plan: Plan, what: str) -> None:
    """TargetUnsafe when ``plan`` writes to ``target`` (``what`` it is: "an NBD export")
    without --destructive: all of it may be somebody's data."""
    if plan.writes and not plan.destructive:
        raise TargetUnsafe(
            f"{target.spec} is {what} and the {plan.suite.name} suite writes to it "
            f"({plan.writers}): the data on it would be overwritten",
            "pass --destructive if all of it may be destroyed, or run a suite that only reads",
        )
