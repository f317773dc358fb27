"""The user iobench runs for when it runs as root through sudo, pkexec or doas, and the
files that user names, read with that user's rights (docs/safety.md, "Files you name").

iobench needs root for block devices, so an administrator may grant it through sudo. A
file named on its command line (a suite file, a file to import) is that user's input: read
with root's rights, ``link.fio -> /etc/shadow`` would come back quoted in the errors, stored
with the run, or told apart by what parses. So when iobench runs as root for another user,
such a file is looked at and opened with that user's rights (effective uid, gid and groups,
switched for the call only and then back): what the user could not read, iobench does not
read either.

The user is the one ``SUDO_UID`` (and ``SUDO_GID``), ``PKEXEC_UID`` or ``DOAS_USER`` names,
as sudo, pkexec and doas set them; uid 0 (root running iobench through sudo) is root.
"""

from __future__ import annotations

import contextlib
import os
import pwd
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from iobench.errors import UserError

_BY_UID = (("SUDO_UID", "sudo"), ("PKEXEC_UID", "pkexec"))


@dataclass(frozen=True)
class Invoker:
    """The user iobench runs as root for."""

    uid: int
    gid: int
    groups: tuple[int, ...]
    name: str | None
    via: str  # sudo, pkexec or doas

    def __str__(self) -> str:
        who = f"{self.name} (uid {self.uid})" if self.name else f"uid {self.uid}"
        return f"{who}, who ran iobench through {self.via}"


def invoker(environ: Mapping[str, str] | None = None) -> Invoker | None:
    """The user iobench runs as root for, or None: not root, or root for root itself.
    A UserError when the variable that names the user names none."""
    env = os.environ if environ is None else environ
    if os.geteuid() != 0:
        return None
    for variable, via in _BY_UID:
        text = env.get(variable)
        if text is not None:
            uid = _number(variable, text)
            gid_text = env.get("SUDO_GID") if via == "sudo" else None
            gid = None if gid_text is None else _number("SUDO_GID", gid_text)
            return _user(uid, gid, via)
    name = env.get("DOAS_USER")
    if name is not None:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            raise _unknown("DOAS_USER", name) from None
        return _user(entry.pw_uid, None, "doas")
    return None


def _number(variable: str, text: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 10:
        raise _unknown(variable, text)
    return int(text)


def _unknown(variable: str, text: str) -> UserError:
    return UserError(
        f"iobench runs as root, and the environment's {variable} ({text!r}) names no user it "
        "could read files for",
        f"run iobench through sudo, pkexec or doas as they set {variable}, or unset it",
    )


def _user(uid: int, gid: int | None, via: str) -> Invoker | None:
    if uid == 0:
        return None
    try:
        entry: pwd.struct_passwd | None = pwd.getpwuid(uid)
    except KeyError:
        entry = None
    primary = gid if gid is not None else entry.pw_gid if entry else uid
    groups = os.getgrouplist(entry.pw_name, primary) if entry else [primary]
    return Invoker(uid, primary, tuple(groups), entry.pw_name if entry else None, via)


@contextlib.contextmanager
def invoker_rights() -> Iterator[None]:
    """Within the block, the effective uid, gid and groups of the user iobench runs as root
    for (nothing changes when there is none); a PermissionError raised in it says whose
    rights were used. Only for looking at and opening a file: the rest is root's."""
    who = invoker()
    if who is None:
        yield
        return
    saved_gid, saved_groups = os.getegid(), os.getgroups()
    try:
        os.setgroups(list(who.groups))
        os.setegid(who.gid)
        os.seteuid(who.uid)
    except OSError as e:
        _restore(saved_gid, saved_groups)
        raise UserError(
            f"iobench runs as root for {who}, and cannot take that user's rights to read "
            f"the files named: {e.strerror or e}",
            "run iobench as that user, or as root without sudo",
        ) from None
    try:
        yield
    except PermissionError as e:
        raise PermissionError(
            e.errno,
            f"{e.strerror or 'permission denied'} to {who}: iobench reads the files it is "
            "given with that user's rights",
            e.filename,
        ) from None
    finally:
        _restore(saved_gid, saved_groups)


def _restore(gid: int, groups: list[int]) -> None:
    os.seteuid(0)
    os.setegid(gid)
    os.setgroups(groups)
