"""fio's client, confined: it may write in a private directory of its own, nowhere else,
and no more than a bound.

In client mode fio's client writes the log files a server sends it under names the server
chooses (client.c, ``fio_client_handle_iolog``: ``open("<name from the server>.<host>",
O_CREAT|O_TRUNC)``, bytes included), as many as the server sends, reads and sends back any
file a server names (``fio_send_file``), and saves verify state under server-given names. A
fio server has no authentication, so whoever answers on a client's address could make a root
controller write a file of its choosing, or fill its disk. iobench therefore starts every
``fio --client`` through its launcher (:mod:`iobench.fio.launch`) with what this module
decides:

1. a tmpfs of a bounded size as the client's working directory, in a mount namespace of its
   own (root, or an unprivileged user namespace): everything the client writes fits in it,
   and is copied into the private directory afterwards. Where no mount namespace can be
   made, the launcher watches the directory and stops the client beyond the bound;
2. a limit on the size of each file it writes (RLIMIT_FSIZE);
3. Landlock (Linux >= 5.13, an unprivileged LSM): every way of creating, writing,
   truncating, renaming or removing files is denied except beneath its working directory
   (and writing to /dev/null). Reading and executing stay allowed (fio needs its libraries);
4. when iobench runs as root, the unprivileged user ``nobody``: what a server asks the
   client to read is then limited to what anyone may read, and nothing root owns can be
   written even where Landlock is missing.

Without Landlock, a root controller still confines the client to ``nobody`` (which can
write only world-writable places such as /tmp); an unprivileged controller has nothing
left to confine with and refuses to start the client (docs/clients.md).
"""

from __future__ import annotations

import os
import pwd
import tempfile
from dataclasses import dataclass
from pathlib import Path

from iobench.errors import IobenchError
from iobench.fio.launch import landlock_abi
from iobench.units import listed

FILE_SIZE_LIMIT = 256 << 20  # the most iobench reads of any one file (runner.MAX_OUTPUT_BYTES)
SPOOL_BYTES = 64 << 20  # what a client may write in all for a short job (a check, a cleanup)
SPOOL_MAX = 1 << 30  # ... and for the longest workload (its interval logs grow with runtime)
# The memory fio's client may take (RLIMIT_DATA) beyond what it may write: about 150 MiB is
# its own (threads, buffers); a log it receives is held whole before it is written.
CLIENT_MEMORY_BYTES = 512 << 20
# ... and for each server it talks to (its connection, the reports it holds until the end)
SERVER_MEMORY_BYTES = 2 << 20
SANDBOX_USER = "nobody"
FALLBACK_ID = 65534

__all__ = ["Confinement", "ConfinementUnavailable", "confinement", "landlock_abi"]


class ConfinementUnavailable(IobenchError):
    """fio's client cannot be confined here, so it is not started."""


@dataclass(frozen=True)
class Confinement:
    """How fio's client is confined on this machine."""

    landlock_abi: int  # 0: no Landlock
    uid: int | None  # the user it runs as; None: iobench's own
    gid: int | None
    bound: str | None = None  # how its writes were bounded when it ran: "tmpfs", "watch"

    def as_dict(self) -> dict[str, object]:
        """For the JSON documents and the stored host context."""
        return {
            "landlock_abi": self.landlock_abi or None,
            "user": None if self.uid is None else SANDBOX_USER,
            "uid": self.uid,
            "bound": self.bound,
            "description": self.describe(),
        }

    def describe(self) -> str:
        parts = []
        if self.landlock_abi:
            parts.append(f"writes only in its own directory (Landlock ABI {self.landlock_abi})")
        if self.uid is not None:
            parts.append(f"runs as {SANDBOX_USER} (uid {self.uid})")
        if self.bound == "tmpfs":
            parts.append("writes at most a set total, in a tmpfs of its own")
        elif self.bound == "watch":
            parts.append(
                "is stopped once its files exceed a set total (no mount namespace here, so "
                "the bound is checked ten times a second rather than enforced)"
            )
        return "fio's client " + (listed(parts) if parts else "runs as it is")


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


# What each server's share of a report takes (a json+ entry is about 40 KB), with room
SERVER_SPOOL_BYTES = 1 << 20


def spool_bytes(runtime_s: float, jobs: int, servers: int = 1) -> int:
    """What a client may write in all for a step on ``servers``: their reports and their
    per-second interval logs (three per job, a line of well under 100 bytes a second
    each), with room to spare; at least SPOOL_BYTES, at most SPOOL_MAX per server."""
    logs = int(runtime_s + 60) * max(jobs, 1) * 3 * 100
    each = min(SPOOL_MAX, SPOOL_BYTES + 4 * logs)
    return each + (servers - 1) * min(SPOOL_MAX, SERVER_SPOOL_BYTES + 4 * logs)
