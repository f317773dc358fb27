"""The targets of a run on this host, held open for the whole run (docs/safety.md, "How
fio is pointed at the target").

A path is looked up anew at every use, and between two uses someone who may write a
directory on the way can point it elsewhere: rename a symbolic link over iobench's test
file, and the next writing workload would write wherever the link leads, as root. So each
target is opened once, right after it was checked, and checked to be what was checked
(device and inode); fio reaches it through that descriptor (``/proc/self/fd/N``), never
by its path. A test file is created by iobench itself (``O_EXCL``, through the directory
it checked) and removed only while its name still leads to it. Before each step, the name
is looked up again: a name that now leads elsewhere stops the run (TargetUnsafe), since
someone is tampering with the target.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from iobench.engine.preflight import PreparedTarget
from iobench.errors import TargetUnsafe, UserError
from iobench.fio.runner import Held
from iobench.targets import identity

OPEN_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK


@dataclass
class HeldTarget:
    """One target, open: ``fd`` is what fio reaches; for a test file of iobench's own, the
    directory it is in (``dir_fd``) and its ``name`` there."""

    prepared: PreparedTarget
    fd: int
    dir_fd: int | None = None
    name: str | None = None
    smallest: int | None = None  # the smallest size of the regular file seen while fio ran

    @property
    def held(self) -> Held:
        """For fio's runner: the descriptor, and the path of iobench's own test file."""
        return Held(self.fd, self.prepared.filename if self.name else None)

    def check(self) -> None:
        """TargetUnsafe when the target's name no longer leads to what iobench holds."""
        p = self.prepared
        try:
            if self.name is not None:
                named = os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
            else:  # the path as the user named it, links followed as then
                named = Path(p.target.spec).stat()
            same = identity(named) == identity(os.fstat(self.fd))
        except OSError:
            same = False
        if same:
            self._check_size()
            return
        what = "iobench's test file" if self.name else p.target.spec
        raise TargetUnsafe(
            f"{what} {p.filename} was replaced during the run: its name now leads to "
            "something else (someone who may write its directory renamed or removed it); "
            "iobench stopped. fio wrote only to what iobench had checked",
            "run in a directory that only you may write (or one with the sticky bit, "
            "chmod +t), and find out who changed it",
        )

    def glance(self) -> None:
        """Note the file's size while fio runs (each live report): a file truncated during
        a step and grown again by the step's own writes before the next check is still
        caught, by the next :meth:`check`."""
        st = os.fstat(self.fd)
        if stat.S_ISREG(st.st_mode):
            size = st.st_size
            self.smallest = size if self.smallest is None else min(self.smallest, size)

    def _check_size(self) -> None:
        """TargetUnsafe when a file (iobench's test file, or a user's) is smaller than when
        it was checked, or was seen smaller while fio ran: fio would find it smaller than the
        test area, remove the link it reaches it by and make a file of its own
        (jobfile.NO_CREATE forbids that too)."""
        p = self.prepared
        st = os.fstat(self.fd)
        needed = p.layout_bytes if self.name else p.size_limit
        if not stat.S_ISREG(st.st_mode) or needed is None:
            return
        size = st.st_size if self.smallest is None else min(self.smallest, st.st_size)
        if size >= needed:
            return
        what = "iobench's test file" if self.name else p.target.spec
        raise TargetUnsafe(
            f"{what} {p.filename} shrank during the run, from {needed} to {size} bytes "
            "(someone truncated it); iobench stopped. fio wrote only to what iobench had "
            "checked",
            "make sure nobody else changes the file while iobench runs",
        )

    @contextlib.contextmanager
    def writable(self) -> Iterator[int]:
        """The held file or device opened again for writing (a precondition's purge),
        through the descriptor iobench holds, never by its name; checked to be the same
        one, and closed afterwards."""
        self.check()
        try:
            fd = os.open(f"/proc/self/fd/{self.fd}", os.O_WRONLY | os.O_CLOEXEC | os.O_NOCTTY)
        except OSError as e:
            raise UserError(
                f"cannot open {self.prepared.target.spec} for writing: {e.strerror or e}"
            ) from e
        try:
            if identity(os.fstat(fd)) != identity(os.fstat(self.fd)):
                raise TargetUnsafe(
                    f"{self.prepared.target.spec} opened for writing is not what iobench holds",
                    "make sure nobody changes it while iobench runs",
                )
            yield fd
        finally:
            os.close(fd)

    def remove(self) -> str | None:
        """Remove iobench's own test file while its name still leads to it, and free its
        space either way; why it could not be removed, if so."""
        if self.name is None:
            return None
        problem = None
        try:
            named = os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
            if identity(named) == identity(os.fstat(self.fd)):
                os.unlink(self.name, dir_fd=self.dir_fd)
            else:
                problem = "its name now leads to something else, which was left alone"
        except FileNotFoundError:
            problem = None  # removed by someone else; its space is freed below
        except OSError as e:
            problem = e.strerror or str(e)
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)  # the data goes now, wherever the name went
        return problem

    def close(self) -> None:
        for fd in (self.fd, self.dir_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _open_checked(p: PreparedTarget, path: str, flags: int) -> int:
    """``path`` opened, and checked to be what the preflight checked."""
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise UserError(f"cannot open {p.target.spec}: {e.strerror or e}") from e
    if p.identity is not None and identity(os.fstat(fd)) != p.identity:
        os.close(fd)
        raise TargetUnsafe(
            f"{p.target.spec} changed after iobench checked it (its path now leads to another "
            f"{p.target.kind}); nothing was written",
            "make sure nobody else changes it, then run again",
        )
    return fd


def hold_target(
    p: PreparedTarget,
    holds: contextlib.ExitStack,
    *,
    before_create: Callable[[str], None],
    claimed: int | None = None,
) -> HeldTarget:
    """Open the target for the run (its test file created, when iobench makes one);
    released with ``holds``. ``before_create`` is told the test file's path before it is
    created; ``claimed``: the descriptor by which the target's kind holds it already (a
    device that will be written, claimed exclusively: ``Kind.claim``)."""
    if p.created:
        dir_fd = _open_checked(p, p.target.path, OPEN_FLAGS | os.O_DIRECTORY)
        holds.callback(os.close, dir_fd)
        name = Path(p.filename).name
        before_create(p.filename)
        fd = create_test_file(p.filename, name, dir_fd, p.layout_bytes)
        held = HeldTarget(p, fd, dir_fd, name)
        holds.callback(os.close, fd)
        return held
    if claimed is not None:
        fd = claimed
        if p.identity is not None and identity(os.fstat(fd)) != p.identity:
            raise TargetUnsafe(
                f"{p.target.spec} leads to another device than the one iobench checked",
                "make sure nobody changes the device links, then run again",
            )
        return HeldTarget(p, fd)
    fd = _open_checked(p, p.target.path, OPEN_FLAGS)
    holds.callback(os.close, fd)
    return HeldTarget(p, fd)


def create_test_file(path: str, name: str, dir_fd: int, size: int) -> int:
    """Create the test file ``name`` in the directory ``dir_fd`` at its full (sparse) size,
    refusing to touch anything there; its open descriptor.

    At full size, fio's layout job writes over it in place; a shorter file would make fio
    unlink and re-create it, replacing the link fio reaches it through.
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, 0o600, dir_fd=dir_fd)
    except FileExistsError as e:
        raise UserError(f"{path} already exists; iobench will not overwrite it") from e
    except OSError as e:
        raise UserError(
            f"cannot create the test file {path}: {e.strerror}",
            "choose a directory you may write to, or run as root",
        ) from e
    try:
        os.ftruncate(fd, size)
    except OSError as e:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
        raise UserError(f"cannot size the test file {path}: {e.strerror}") from e
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # O_EXCL made it: cannot happen
        raise UserError(f"{path} is not a regular file")
    return fd
