"""The files iobench writes because the user named them (``report -o``, ``export -o``).

What a name stands for decides how it is written (docs/safety.md, "Files iobench writes"):

- ``-``, or a name for one of iobench's own standard streams (``/dev/stdout``,
  ``/dev/fd/1``, ``/proc/self/fd/2``): that stream, as it is (a pipe, a terminal, a file
  opened with ``>>`` keeps its offset).
- a new name, or an existing regular file: written whole or not at all, a temporary file
  beside it and then a rename; an existing file keeps its permission bits, and its owner
  and group when iobench may set them.
- a symbolic link: the link stays, its target is written by these rules. A link whose
  target does not exist is refused, and so is a link (anywhere on the path) owned by
  another user than iobench's or root: that is how root is tricked into writing a file of
  someone else's choosing, and the kernel's own guard (``fs.protected_symlinks``) is not
  on everywhere.
- a character device (a terminal, ``/dev/null``) or a FIFO: written through, in place,
  nothing created or replaced. A FIFO waits for a reader, as the shell's ``>`` does.
- a block device, a directory or a socket: refused.

Failing to write (a full disk, ``>/dev/full``, an IO error) is an :class:`OutputError`
(exit 1); a name that cannot be written is a :class:`UserError` (exit 2). A broken pipe
(``iobench list | head``) is :class:`StreamClosed`, which the CLI ends quietly.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import sys
from pathlib import Path
from typing import Any

from iobench.errors import IobenchError, UserError

STDOUT = "-"
_MAX_LINKS = 40  # as the kernel's path walk


class OutputError(IobenchError):
    """Writing what the user asked for failed part-way: nothing was left half written.
    ``stream``: the stream that failed (``standard output``), None for a file."""

    def __init__(self, message: str, hint: str | None = None, stream: str | None = None) -> None:
        super().__init__(message, hint)
        self.stream = stream


class StreamClosed(OutputError):
    """The reader of a stream went away (a broken pipe): the CLI ends quietly."""


def write_output(dest: str | Path, text: str) -> str:
    """Write ``text`` (as UTF-8) to what ``dest`` names; returns how to name it in messages."""
    name = str(dest)
    if name == STDOUT:
        write_stream(sys.stdout, text)
        return "standard output"
    if not name:
        raise UserError("the output file name is empty", "name a file, or - for stdout")
    check_names_a_file(name)
    data = text.encode("utf-8")
    real, magic = _resolve(name)
    try:
        st = Path(real).stat()  # a /proc/PID/fd link is followed to the open file
    except FileNotFoundError:
        _replace(name, real, data, None)
        return name
    except OSError as e:
        raise UserError(f"cannot write {name}: {e.strerror}") from e
    stream = _own_stream(st)
    if stream is not None:
        write_stream(stream, text)
    elif stat.S_ISREG(st.st_mode) and not magic:
        if os.geteuid() != 0 and not os.access(real, os.W_OK):
            raise UserError(f"cannot write {name}: permission denied")
        _replace(name, real, data, st)
    elif stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode) or stat.S_ISREG(st.st_mode):
        _write_through(name, real, data, st, follow=magic)
    else:
        raise UserError(f"cannot write {name}: it is {_kind(st.st_mode)}", "name a file")
    return name


def write_new(name: str, text: str, *, force: bool) -> str:
    """Write ``text`` (as UTF-8) to the file ``name`` and nothing else (``suites export -o``):
    a regular file written whole or not at all (a temporary file beside it, renamed into
    place). A file that exists is replaced only with ``force``; a symbolic link there is
    never followed nor replaced, nor is anything but a regular file (the caller sends
    ``-`` to :func:`write_output`)."""
    if not name:
        raise UserError("the output file name is empty", "name a file, or - for stdout")
    check_names_a_file(name)
    try:
        st: os.stat_result | None = os.lstat(name)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UserError(f"cannot write {name}: {e.strerror}") from e
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise UserError(
                f"cannot write {name}: it is a symbolic link, and iobench neither follows "
                "nor replaces one here",
                "name the file itself, or remove the link",
            )
        if not stat.S_ISREG(st.st_mode):
            raise UserError(f"cannot write {name}: it is {_kind(st.st_mode)}", "name a file")
        if not force:
            raise UserError(f"{name} exists", "pass --force to replace it, or name another file")
    parent, base = os.path.split(name)
    real = f"{parent or '.'}/{base}"
    _replace(name, real, text.encode("utf-8"), st, exclusive=not force)
    return name


def check_names_a_file(name: str) -> None:
    """A UserError when ``name`` can only name a directory: it ends in ``/``, ``/.`` or
    ``/..`` (or is ``.`` or ``..``). ``report -o x.md/`` must not write ``x.md``, nor
    replace the file ``x.md``: the kernel would say "not a directory" to either."""
    last = name.rsplit("/", 1)[-1]
    if last not in ("", ".", ".."):
        return
    ending = "/" if not last else last if name == last else f"/{last}"
    raise UserError(
        f"cannot write {name}: a name ending in {ending!r} names a directory, not a file",
        "name the file itself" + (", without the trailing /" if ending == "/" else ""),
    )


def _kind(mode: int) -> str:
    if stat.S_ISBLK(mode):
        return "a block device: iobench never writes a report or an export onto a disk"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "a socket" if stat.S_ISSOCK(mode) else "not a file"


def _resolve(name: str) -> tuple[str, bool]:
    """(the path ``name`` leads to, whether it ends in a /proc/PID/fd link).

    Symbolic links are followed one by one, each only when it belongs to iobench's
    effective user or to root; a /proc/PID/fd link (``/dev/stdout``, ``/dev/fd/63``) is
    kept for the kernel to follow, since it names an open file, not a path.
    """
    euid = os.geteuid()
    try:
        current = Path("/") if name.startswith("/") else Path.cwd()
    except FileNotFoundError:
        raise UserError(
            f"cannot write {name}: the working directory it is relative to has been removed",
            "cd to an existing directory, or give the file's absolute path",
        ) from None
    pending = [p for p in name.split("/") if p not in ("", ".")]
    links = 0
    while pending:
        part = pending.pop(0)
        if part == "..":
            current = current.parent
            continue
        candidate = current / part
        try:
            st = candidate.lstat()
        except FileNotFoundError:
            if pending:
                raise UserError(
                    f"cannot write {name}: the directory {candidate} does not exist"
                ) from None
            return str(candidate), False
        except OSError as e:
            raise UserError(f"cannot write {name}: {candidate}: {e.strerror}") from e
        if not stat.S_ISLNK(st.st_mode):
            if pending and not stat.S_ISDIR(st.st_mode):
                raise UserError(f"cannot write {name}: {candidate} is not a directory")
            current = candidate
            continue
        links += 1
        if links > _MAX_LINKS:
            raise UserError(f"cannot write {name}: too many levels of symbolic links")
        if st.st_uid not in (euid, 0):
            raise UserError(
                f"cannot write {name}: {candidate} is a symbolic link owned by uid "
                f"{st.st_uid}, another user",
                "iobench follows only its own user's and root's links; name the file itself",
            )
        if candidate.parts[:2] == ("/", "proc") and current.name == "fd":
            # An open file (a pipe, a terminal, a deleted file): the kernel follows it.
            if pending:
                raise UserError(f"cannot write {name}: {candidate} is not a directory")
            return str(candidate), True
        target = str(candidate.readlink())
        if not pending and not candidate.exists():
            raise UserError(
                f"cannot write {name}: it is a symbolic link to {target}, which does not exist",
                "iobench does not create files through symbolic links; name the file itself",
            )
        pending = [p for p in target.split("/") if p not in ("", ".")] + pending
        if target.startswith("/"):
            current = Path("/")
    return str(current), False


def write_stream(stream: Any, text: str) -> None:
    """``text`` on an open text stream (stdout) as UTF-8, whatever the locale says."""
    try:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is None:
            stream.write(text)
            stream.flush()
        else:
            view = memoryview(text.encode("utf-8"))
            while view:  # a buffered writer returns short, not an error, when a pipe breaks
                view = view[buffer.write(view) :]
            buffer.flush()
    except OSError as e:
        raise stream_error(e, "standard output") from e


class GuardedStream:
    """A text stream (sys.stdout) whose failed writes raise :func:`stream_error`'s errors
    instead of OSError, wherever they happen (rich, click, print)."""

    def __init__(self, stream: Any, what: str) -> None:
        self._stream = stream
        self._what = what

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except OSError as e:
            raise stream_error(e, self._what) from e

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            raise stream_error(e, self._what) from e

    @property
    def buffer(self) -> Any:
        raw = getattr(self._stream, "buffer", None)
        return None if raw is None else GuardedStream(raw, self._what)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def stream_error(e: OSError, what: str) -> OutputError:
    """The error for a failed write to a stream: quiet for a broken pipe."""
    if isinstance(e, BrokenPipeError) or e.errno == errno.EPIPE:
        return StreamClosed(f"{what} was closed", stream=what)
    return OutputError(f"cannot write to {what}: {e.strerror or e}", _hint(e), stream=what)


def _hint(e: OSError) -> str | None:
    if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return "free some space (or raise the quota) and run the command again"
    if e.errno == errno.EIO:
        return "the device reported an IO error: check `dmesg`"
    return None


def _own_stream(st: os.stat_result) -> Any:
    """sys.stdout or sys.stderr when ``st`` is the file that stream writes to."""
    for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
        try:
            own = os.fstat(fd)
        except OSError:
            continue
        if (own.st_dev, own.st_ino, own.st_rdev) == (st.st_dev, st.st_ino, st.st_rdev):
            return stream
    return None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _replace(
    name: str, real: str, data: bytes, old: os.stat_result | None, *, exclusive: bool = False
) -> None:
    """A temporary file beside ``real``, written and synced, then renamed over it; both
    in the directory opened once, so a directory renamed meanwhile changes nothing.
    ``exclusive``: linked to ``real`` instead, which fails when anything is there by then."""
    parent, base = os.path.split(real)
    try:
        dir_fd = os.open(parent or "/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise UserError(f"cannot write {name}: {parent}: {e.strerror}") from e
    try:
        tmp = f".{base}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(
                tmp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
                dir_fd=dir_fd,
            )
        except OSError as e:
            raise UserError(f"cannot write {name}: {e.strerror}") from e
        try:
            try:
                _write_all(fd, data)
                if old is not None:
                    os.fchmod(fd, stat.S_IMODE(old.st_mode))
                    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                        with contextlib.suppress(PermissionError):  # only root gives files away
                            os.fchown(fd, old.st_uid, old.st_gid)
                else:
                    os.fchmod(fd, 0o666 & ~_umask())
                os.fsync(fd)
            finally:
                os.close(fd)
            if exclusive:
                _link_new(name, tmp, base, dir_fd)
            else:
                os.replace(tmp, base, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException as e:  # also Ctrl-C: no temporary file is left behind
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            if isinstance(e, OSError):
                raise OutputError(
                    f"cannot write {name}: {e.strerror or e}; it was left as it was", _hint(e)
                ) from e
            raise
    finally:
        os.close(dir_fd)


def _link_new(name: str, tmp: str, base: str, dir_fd: int) -> None:
    """``tmp`` (written) under the name ``base`` as well, unless something has that name:
    linkat(2) never replaces nor follows what is there. The temporary name is removed."""
    appeared = UserError(
        f"{name} exists (it appeared while iobench wrote)",
        "pass --force to replace it, or name another file",
    )
    try:
        os.link(tmp, base, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise appeared from None
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS):
            raise
        # A filesystem without hard links (FAT): looked for, then renamed; a rename
        # replaces a link that appeared meanwhile, never what it points to.
        try:
            os.stat(base, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            os.replace(tmp, base, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            return
        raise appeared from None
    os.unlink(tmp, dir_fd=dir_fd)


def _write_through(
    name: str, real: str, data: bytes, seen: os.stat_result, *, follow: bool
) -> None:
    """A terminal, /dev/null, a FIFO (or an open file named by /proc/PID/fd): opened for
    writing as it is, nothing created; what was opened must be what was looked at."""
    flags = os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(real, flags)
    except OSError as e:
        raise UserError(f"cannot write {name}: {e.strerror}") from e
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino, st.st_rdev) != (seen.st_dev, seen.st_ino, seen.st_rdev):
            raise UserError(
                f"cannot write {name}: it changed while iobench opened it",
                "run the command again; if it recurs, something else is replacing that file",
            )
        if stat.S_ISREG(st.st_mode):
            os.ftruncate(fd, 0)
        _write_all(fd, data)
    except OSError as e:
        raise stream_error(e, name) from e
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
