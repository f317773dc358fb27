"""A suite file the user names (``--suite PATH``), read: looked at before it is opened, so
what it is gets said as it is (a directory, a symbolic link loop, a link to nothing, a
device), and read with the rights of the user iobench runs for (iobench.invoker).

A regular file or a pipe (``--suite <(...)``) is read, at most MAX_FILE_BYTES and a byte;
nothing else is opened: opening a device can do something (a watchdog starts counting, a
tape rewinds), and reading one may never end.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from iobench.errors import SuiteError
from iobench.invoker import invoker_rights

MAX_FILE_BYTES = 1 << 20  # a suite file is a few kilobytes; this is hundreds of workloads
TOO_BIG = "is larger than 1 MiB; a suite file is a few kilobytes of TOML"
_NOT_SUITE = "not a suite file"


def exists(name: str) -> bool:
    """Whether ``name`` is there as something (even a link to nothing, or a thing the user
    may not look at), so a message about it is one about a path, not an unknown name."""
    try:
        with invoker_rights():
            Path(name).lstat()
    except FileNotFoundError:
        return False
    except OSError:  # a permission, a name too long ...: said when it is read
        return True
    return True


def read_suite_file(path: str) -> str:
    """The text of the suite file ``path``; a SuiteError naming it and saying what it is
    when that is not a readable suite file of UTF-8 text."""
    try:
        with invoker_rights():  # under sudo, looked at and opened as its user could
            st = Path(path).stat()
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
                raise SuiteError(path, f"is {_kind(st.st_mode)}, {_NOT_SUITE}")
            # O_NONBLOCK: a FIFO nobody writes to opens at once (and reads as empty) instead
            # of waiting for ever; `--suite <(...)` still reads what the shell writes.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise SuiteError(path, _why_not(path, e)) from None
    with os.fdopen(fd, "rb") as f:
        opened = os.fstat(f.fileno())
        if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
            raise SuiteError(path, "was replaced while iobench opened it; give it again")
        os.set_blocking(f.fileno(), True)
        try:
            raw = f.read(MAX_FILE_BYTES + 1)  # not all of a pipe that never ends
        except OSError as e:
            raise SuiteError(path, f"cannot be read: {e.strerror or e}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise SuiteError(path, TOO_BIG)
    if not raw.strip():
        what = (
            "is a named pipe (FIFO) that gave no text (nothing wrote to it)"
            if stat.S_ISFIFO(st.st_mode)
            else "is empty"
        )
        raise SuiteError(
            path, f"{what}: a suite file is TOML with workloads, or a fio job file with jobs"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SuiteError(path, "is not UTF-8 text; suite files are TOML or fio job files") from None


def _why_not(path: str, e: OSError) -> str:
    """What the kernel's refusal to look at or open ``path`` means, said plainly."""
    if e.errno == errno.ENOENT:
        try:
            with invoker_rights():
                target = str(Path(path).readlink())
        except OSError:
            return "no such file"
        return f"is a symbolic link to {target}, which does not exist"
    if e.errno == errno.ELOOP:
        return "is a symbolic link loop (or a chain of more than 40 links): it leads to no file"
    if e.errno == errno.ENOTDIR:
        return "a part of its path is a file, not a directory"
    if e.errno == errno.ENAMETOOLONG:
        return "the name is too long for the kernel (at most 255 bytes a name, 4095 a path)"
    return f"cannot be read: {e.strerror or e}"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a socket" if stat.S_ISSOCK(mode) else "neither a file nor a pipe"
