"""fio's client, confined: it may write in a private directory of its own, nowhere else.

In client mode fio's client writes the log files a server sends it under names the server
chooses (client.c, ``fio_client_handle_iolog``: ``open("<name from the server>.<host>",
O_CREAT|O_TRUNC)``, bytes included), reads and sends back any file a server names
(``fio_send_file``), and saves verify state under server-given names. A fio server has no
authentication, so whoever answers on a client's address could make a root controller
write a file of its choosing. iobench therefore starts every ``fio --client`` through this
module's launcher (``python -m iobench.fio.confine``), which, before it executes fio:

1. limits the size of any file the client writes (RLIMIT_FSIZE), so a server cannot fill
   the disk even in the private directory;
2. restricts the process with Landlock (Linux >= 5.13, an unprivileged LSM): every way of
   creating, writing, truncating, renaming or removing files is denied except beneath the
   private directory (and writing to /dev/null). Reading and executing stay allowed (fio
   needs its libraries);
3. when iobench runs as root, becomes the unprivileged user ``nobody``: what a server asks
   the client to read is then limited to what anyone may read, and nothing root owns can
   be written even where Landlock is missing.

Without Landlock, a root controller still confines the client to ``nobody`` (which can
write only world-writable places such as /tmp); an unprivileged controller has nothing
left to confine with and refuses to start the client (docs/clients.md).
"""

from __future__ import annotations

import ctypes
import os
import pwd
import resource
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iobench.errors import IobenchError

# Syscall numbers are the same on every architecture (added after the tables were unified).
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# LANDLOCK_ACCESS_FS_*: (bit, first ABI that knows it)
_WRITE_FILE = 1 << 1
_READ_FILE = 1 << 2
_WRITE_RIGHTS = {
    _WRITE_FILE: 1,
    1 << 4: 1,  # REMOVE_DIR
    1 << 5: 1,  # REMOVE_FILE
    1 << 6: 1,  # MAKE_CHAR
    1 << 7: 1,  # MAKE_DIR
    1 << 8: 1,  # MAKE_REG
    1 << 9: 1,  # MAKE_SOCK
    1 << 10: 1,  # MAKE_FIFO
    1 << 11: 1,  # MAKE_BLOCK
    1 << 12: 1,  # MAKE_SYM
    1 << 13: 2,  # REFER (links and renames between directories)
    1 << 14: 3,  # TRUNCATE
}
_TRUNCATE = 1 << 14

FILE_SIZE_LIMIT = 1 << 30  # a client's JSON report and logs are a few MB at most
SANDBOX_USER = "nobody"
FALLBACK_ID = 65534


class ConfinementUnavailable(IobenchError):
    """fio's client cannot be confined here, so it is not started."""


@dataclass(frozen=True)
class Confinement:
    """How fio's client is confined on this machine."""

    landlock_abi: int  # 0: no Landlock
    uid: int | None  # the user it runs as; None: iobench's own
    gid: int | None

    def as_dict(self) -> dict[str, object]:
        """For the JSON documents and the stored host context."""
        return {
            "landlock_abi": self.landlock_abi or None,
            "user": None if self.uid is None else SANDBOX_USER,
            "uid": self.uid,
            "description": self.describe(),
        }

    def describe(self) -> str:
        parts = []
        if self.landlock_abi:
            parts.append(f"writes only in its own directory (Landlock ABI {self.landlock_abi})")
        if self.uid is not None:
            parts.append(f"runs as {SANDBOX_USER} (uid {self.uid})")
        return "fio's client " + " and ".join(parts)


def _syscall() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    fn = libc.syscall
    fn.restype = ctypes.c_long
    return fn


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when it has none or it is disabled."""
    value = _syscall()(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(int(value), 0)


def sandbox_ids() -> tuple[int, int]:
    try:
        entry = pwd.getpwnam(SANDBOX_USER)
    except KeyError:
        return FALLBACK_ID, FALLBACK_ID
    return entry.pw_uid, entry.pw_gid


def confinement() -> Confinement:
    """How this machine confines fio's client; ConfinementUnavailable when it cannot."""
    abi = landlock_abi()
    if os.geteuid() == 0:
        uid, gid = sandbox_ids()
        return Confinement(abi, uid, gid)
    if abi:
        return Confinement(abi, None, None)
    raise ConfinementUnavailable(
        "fio's client cannot be confined here: this kernel has no Landlock and iobench does "
        "not run as root, so a fio server could make the client write files where you can",
        "run iobench as root (the client then runs as nobody), or on a kernel with Landlock "
        "(Linux 5.13 or newer with landlock in its lsm= list)",
    )


def private_directory(c: Confinement) -> Path:
    """A new directory only the confined client (and root) may use."""
    path = Path(tempfile.mkdtemp(prefix="iobench-client-"))
    if c.uid is not None:
        os.chown(path, c.uid, c.gid if c.gid is not None else -1)
    return path


def confined_argv(c: Confinement, directory: Path, argv: list[str]) -> list[str]:
    """``argv`` started through the launcher, confined to ``directory`` as ``c`` says: the
    launcher applies what was decided here (and said in `clients check`), not its own."""
    options = ["--landlock", str(c.landlock_abi)]
    if c.uid is not None:
        options += ["--uid", str(c.uid), "--gid", str(c.gid)]
    return [sys.executable, "-m", "iobench.fio.confine", str(directory), *options, "--", *argv]


# -- the launcher (runs in the child, before fio) -------------------------------------------------


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _landlock(directory: int, abi: int) -> None:
    """Deny every write to the filesystem except beneath ``directory`` (an open
    descriptor) and to /dev/null."""
    syscall = _syscall()
    handled = sum(bit for bit, since in _WRITE_RIGHTS.items() if abi >= since)
    attr = _RulesetAttr(handled)
    ruleset = syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        null = os.open("/dev/null", os.O_PATH | os.O_CLOEXEC)
        try:
            for fd, allowed in ((directory, handled), (null, handled & (_WRITE_FILE | _TRUNCATE))):
                rule = _PathBeneathAttr(allowed, fd)
                if syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0):
                    raise OSError(ctypes.get_errno(), "landlock_add_rule failed")
        finally:
            os.close(null)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if syscall(_SYS_RESTRICT_SELF, ruleset, 0):
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)


def main(args: list[str]) -> int:
    """``DIR [--landlock ABI] [--uid N --gid N] -- PROGRAM ARGS...``: confine, then execute
    PROGRAM."""
    try:
        split = args.index("--")
        directory, options, argv = args[0], args[1:split], args[split + 1 :]
        ids = dict(zip(options[::2], options[1::2], strict=True))
        if not argv:
            raise ValueError("no program")
    except (ValueError, IndexError):
        print("usage: python -m iobench.fio.confine DIR [--landlock ABI] [--uid N --gid N] "
              "-- PROGRAM ...", file=sys.stderr)  # fmt: skip
        return 2
    try:
        # Opened before the user changes: its parents need not be open to nobody.
        here = os.open(directory, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))
        abi = int(ids.get("--landlock", "0"))
        if abi:
            _landlock(here, abi)
        if "--uid" in ids:
            os.setgroups([])
            os.setgid(int(ids["--gid"]))
            os.setuid(int(ids["--uid"]))
        os.fchdir(here)
        os.environ["HOME"] = directory
        os.environ["TMPDIR"] = directory
        os.execv(argv[0], argv)
    except OSError as e:
        print(f"iobench: cannot start {argv[0]} confined: {e}", file=sys.stderr)
        return 126


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
