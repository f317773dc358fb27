"""What the kinds named by a path share: the path located (``stat``, links followed) or
said why not, the path as the user named it, and what names it whatever path leads to it
(its identity)."""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from iobench.errors import UserError
from iobench.model import Target


def _char_device_hint(real: str, accepted: str) -> str:
    name = Path(real).name
    if m := re.fullmatch(r"nvme(\d+)", name):
        return f"{real} is an NVMe controller; its namespaces are block devices: /dev/nvme{m[1]}n1"
    if m := re.fullmatch(r"ng(\d+)n(\d+)", name):
        return f"use the namespace's block device instead: /dev/nvme{m[1]}n{m[2]}"
    if name.startswith("sg"):
        return "SCSI generic devices are not accepted; use the disk's block device (/dev/sdX)"
    return accepted


def _missing(spec: str, absolute: str, accepted: str) -> UserError:
    if Path(absolute).is_symlink():
        return UserError(
            f"{spec} is a symbolic link to {Path(absolute).readlink()}, which does not exist",
            hint=accepted,
        )
    parent = Path(absolute).parent
    if parent.is_dir():
        return UserError(
            f"{spec} does not exist",
            hint=f"to benchmark a directory, create it first: mkdir {absolute}  ({accepted})",
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


@dataclass(frozen=True)
class Located:
    """A path the user named, found: ``absolute`` as typed (links and ``..`` kept, for
    messages), ``real`` with its links resolved, ``named`` as a run stores and shows it
    (:func:`named_path`), ``st`` what it leads to."""

    spec: str
    absolute: str
    real: str
    named: str
    st: os.stat_result


def locate(spec: str, accepted: str) -> Located:
    """Find what the path ``spec`` leads to (symlinks followed). Raises UserError for a
    missing path or one that cannot be accessed, saying what it is (as the user typed
    it); ``accepted``: the targets iobench accepts, for the hint."""
    # As os.path.abspath, keeping '..' and symbolic links for the messages; the working
    # directory asked only for a relative target, and said when it has no path.
    start = "/" if spec.startswith("/") else _physical_directory()
    absolute = os.path.normpath(os.path.join(start, spec))  # noqa: PTH118
    try:
        st = Path(spec).stat()  # as the kernel resolves it: a ".." after a link, as fio would
    except FileNotFoundError:
        raise _missing(spec, absolute, accepted) from None
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
    return Located(spec, absolute, real, named_path(spec, real), st)


def unclaimed(found: Located, accepted: str) -> UserError:
    """What a path no kind claims is (a character device, a socket, a FIFO ...), and what
    is accepted instead."""
    mode, real = found.st.st_mode, found.real
    if stat.S_ISCHR(mode):
        what, hint = "a character device", _char_device_hint(real, accepted)
    elif stat.S_ISSOCK(mode):
        what, hint = "a socket", accepted
    elif stat.S_ISFIFO(mode):
        what, hint = "a named pipe (FIFO)", accepted
    else:
        what, hint = "neither a file, a directory nor a block device", accepted
    shown = found.spec if real == found.absolute else f"{found.spec} (-> {real})"
    return UserError(f"{shown} is {what}; iobench cannot benchmark it", hint=hint)


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
