"""Which file iobench accepts as its results database, decided before SQLite writes a byte.

The path given with ``--db`` or ``IOBENCH_DB`` is hostile input, and iobench usually runs
as root. Left to itself SQLite opens ``/dev/null`` and creates ``/dev/null-wal`` beside it,
blocks on a FIFO, reads any file as an empty database, and lets iobench migrate its tables
into another application's database. So the file is looked at first: its type (``stat``,
which follows symbolic links; nothing but a regular file is ever opened), the files SQLite
would put beside it, and its first 100 bytes, SQLite's header. Then it is identified through
a connection that can create nothing (:func:`probe_uri`), by :func:`identify`: an iobench
database carries :data:`APPLICATION_ID`, or (made before iobench set it) exactly iobench's
tables. See docs/safety.md, "The database file".
"""

from __future__ import annotations

import os
import sqlite3
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from iobench.errors import StoreError

APPLICATION_ID = 0x696F626E  # "iobn": PRAGMA application_id of every iobench database
TABLES = frozenset({"runs", "targets", "results"})  # every schema version has these three
SIDECARS = ("-wal", "-shm", "-journal")  # what SQLite creates beside a database file

_MAGIC = b"SQLite format 3\x00"
_HEADER = 100
_REFUSED_HINT = (
    "point --db or IOBENCH_DB at your iobench database, or at a path where iobench may "
    "create a new one"
)


@dataclass(frozen=True)
class DbFile:
    """What was found at the database path; only :func:`examine` makes one."""

    path: Path  # as the user gave it
    real: Path  # symbolic links resolved: the file SQLite opens
    exists: bool
    size: int = 0  # a zero-length regular file is a new, empty database
    wal_mode: bool = False  # the header says WAL
    has_wal: bool = False  # a -wal file is beside it (a writer is busy, or died)
    has_shm: bool = False
    identity: tuple[int, int, int] = (0, 0, 0)  # inode, size, mtime (ns) when examined

    def changed(self) -> bool:
        """The file was written, replaced, or given a -wal since it was examined."""
        try:
            st = self.real.stat()
        except OSError:
            return True
        return (st.st_ino, st.st_size, st.st_mtime_ns) != self.identity or (
            not self.has_wal and os.path.lexists(f"{self.real}-wal")
        )


def refused(path: Path, reason: str) -> StoreError:
    return StoreError(f"{path} is not an iobench results database: {reason}", _REFUSED_HINT)


def examine(path: Path) -> DbFile:
    """The database file's type and SQLite header, read without letting SQLite near it.

    A missing path is fine (a new database). Anything but a regular file, or a symbolic
    link to one, is refused; so is a non-empty file that does not begin with a sound SQLite
    header, or is shorter than its header says (a truncated copy).
    """
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        return DbFile(path, path.absolute(), exists=False)
    except OSError as e:
        raise StoreError(f"cannot look at the results database {path}: {e.strerror}") from e
    via = f"a symbolic link to {path.readlink()}, " if stat.S_ISLNK(link.st_mode) else ""
    try:
        st = path.stat()
    except OSError as e:  # a link to nothing, a loop of links, a directory we may not enter
        if not via:
            raise StoreError(f"cannot look at the results database {path}: {e.strerror}") from e
        what = "which does not exist" if isinstance(e, FileNotFoundError) else e.strerror
        raise refused(path, f"it is {via}{what}") from e
    if not stat.S_ISREG(st.st_mode):
        raise refused(path, f"it is {via}{_kind(st.st_mode)}")
    real = Path(os.path.realpath(path))
    for suffix in SIDECARS:
        beside = Path(f"{real}{suffix}")
        try:
            mode = os.lstat(beside).st_mode
        except FileNotFoundError:
            continue
        except OSError as e:
            raise StoreError(f"cannot look at {beside}: {e.strerror}") from e
        if not stat.S_ISREG(mode):
            raise StoreError(
                f"{beside}, where SQLite keeps {path}'s {suffix[1:]} file, is "
                f"{_kind(mode)}: SQLite would write through it",
                f"remove {beside} if it is not needed, or point --db at another file",
            )
    head, st = _read_header(real)
    has_wal = os.path.lexists(f"{real}-wal")
    found = DbFile(
        path,
        real,
        exists=True,
        size=st.st_size,
        wal_mode=len(head) >= _HEADER and head[18] == 2,
        has_wal=has_wal,
        has_shm=os.path.lexists(f"{real}-shm"),
        identity=(st.st_ino, st.st_size, st.st_mtime_ns),
    )
    if st.st_size:
        _check_header(found, head)
    return found


def check_may_write(found: DbFile) -> None:
    """A StoreError unless this user may write the database file and its directory (where
    SQLite keeps the -wal and -shm files while it writes)."""
    for where in (found.real, found.real.parent):
        if not os.access(where, os.W_OK):
            raise StoreError(
                f"this command writes to the results database {found.path}, and you may not "
                f"write {where}",
                "run it as a user who may write the database file and its directory (e.g. "
                "with sudo), or point --db at another file",
            )


def _read_header(real: Path) -> tuple[bytes, os.stat_result]:
    # O_NONBLOCK: had the file become a FIFO since stat, opening it would otherwise wait.
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(real, flags)
    except OSError as e:
        raise StoreError(
            f"cannot read the results database {real}: {e.strerror}",
            "check its permissions, or point --db or IOBENCH_DB at another file",
        ) from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced between the two looks
            raise refused(real, f"it is {_kind(st.st_mode)}")
        return os.pread(fd, _HEADER, 0), st
    finally:
        os.close(fd)


def _check_header(found: DbFile, head: bytes) -> None:
    """A sound SQLite header, and the whole file it describes (sqlite.org/fileformat.html)."""
    path = found.path
    if not head.startswith(_MAGIC):
        raise refused(path, "it is not an SQLite file (it does not begin with SQLite's header)")
    if len(head) < _HEADER:
        raise refused(
            path, f"it is a truncated SQLite file ({len(head)} bytes, less than its header)"
        )
    (page_size,) = struct.unpack_from(">H", head, 16)
    page_size = 65536 if page_size == 1 else page_size
    sound = (
        page_size >= 512
        and page_size & (page_size - 1) == 0
        and head[18] in (1, 2)
        and head[19] in (1, 2)
        and head[21:24] == b"\x40\x20\x20"
    )
    if not sound:
        raise refused(path, "its SQLite header is damaged")
    change, pages = struct.unpack_from(">II", head, 24)
    (valid_for,) = struct.unpack_from(">I", head, 92)
    # The page count is trusted only when valid_for matches, as SQLite does. With a -wal
    # beside it, a checkpoint cut short may have left the file shorter: the log completes it.
    expected = pages * page_size
    if valid_for == change and pages and found.size < expected and not found.has_wal:
        raise refused(
            path,
            f"it is a truncated SQLite database (its header says {pages} pages of "
            f"{page_size} bytes, {expected} bytes; the file holds {found.size})",
        )


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def uri(real: Path, **params: str) -> str:
    """An SQLite URI for the file: ``mode=ro``, ``immutable=1``, ... as keywords."""
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return f"file:{quote(str(real))}?{query}"


def probe_uri(found: DbFile) -> str:
    """A connection that reads the file and creates nothing beside it: read-only over the
    -wal and -shm a writer left, else immutable (the file alone holds everything)."""
    if found.wal_mode and found.has_wal and found.has_shm:
        return uri(found.real, mode="ro")
    return uri(found.real, mode="ro", immutable="1")


def identify(conn: sqlite3.Connection, path: Path, schema_version: int) -> int:
    """The database's schema version, if it is iobench's; else a StoreError.

    iobench's: it carries :data:`APPLICATION_ID`, or 0 and exactly iobench's tables (made
    before iobench set it), or it is empty (no tables, version 0: a new database).
    """
    own = not conn.in_transaction
    try:
        if own:  # one read transaction: the three answers come from the same moment
            conn.execute("BEGIN")
        try:
            app = int(conn.execute("PRAGMA application_id").fetchone()[0])
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            names = {
                str(row[0])
                for row in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type IN ('table', 'view', 'trigger')"
                )
            }
        finally:
            if own:
                conn.execute("ROLLBACK")
    except sqlite3.DatabaseError as e:
        raise describe(e, path) from e
    objects = sorted(n for n in names if not n.startswith("sqlite_"))
    if app not in (0, APPLICATION_ID):
        raise refused(
            path, f"it is another application's SQLite database (application_id {app:#x})"
        )
    if not objects and version == 0:
        return 0
    if app == APPLICATION_ID and version > schema_version:
        raise StoreError(
            f"{path} was written by a newer iobench (schema {version}; this iobench "
            f"knows schema {schema_version})",
            "upgrade iobench, or use another database with --db",
        )
    if set(objects) != TABLES or not 1 <= version <= schema_version:
        shown = ", ".join(objects[:6]) + (", ..." if len(objects) > 6 else "")
        error = refused(
            path,
            f"it is an SQLite database but not one of iobench's (tables, views and "
            f"triggers: {shown or 'none'}; user_version {version})",
        )
        if set(objects) <= TABLES and version == 0:
            # Some of iobench's tables and no version yet: another iobench may be creating
            # it right now, and a reader that takes no lock can see that half done.
            raise Unfinished(error.message, error.hint)
        raise error
    return version


class Unfinished(StoreError):
    """Perhaps an iobench database being created by another process: look again."""


def describe(e: sqlite3.Error, path: Path) -> StoreError:
    """SQLite's error as a StoreError that says what it means for the user."""
    name = getattr(e, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_CORRUPT"):
        return StoreError(
            f"{path} is damaged: {e}",
            f"restore it from a backup (`sqlite3 {path} .recover` may save what is left), "
            "or point --db or IOBENCH_DB at another file",
        )
    if name == "SQLITE_NOTADB":
        return refused(path, f"SQLite cannot read it ({e})")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return StoreError(
            f"{path} is locked by another process: {e}",
            "wait until the other iobench finishes, then try again",
        )
    if name.startswith("SQLITE_FULL"):
        return _full(e, path)
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        return StoreError(
            f"cannot use the results database {path}: {e}",
            "check the permissions of the file and of its directory, or point --db at another file",
        )
    return StoreError(
        f"cannot use the results database {path}: {e}",
        "point --db or IOBENCH_DB at another file; if the problem stays, report it",
    )


_MAX_ID = 2**63 - 1


def _ids_used_up(path: Path) -> bool:
    """Whether the runs' ids are used up: AUTOINCREMENT hands out no id past the largest
    ever used, and SQLite's largest is 2**63-1 (only an edited database gets there)."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1)
    except (sqlite3.Error, OSError, ValueError):
        return False
    try:
        row = conn.execute(
            "SELECT max(coalesce((SELECT max(seq) FROM sqlite_sequence WHERE name = 'runs'), 0),"
            " coalesce((SELECT max(id) FROM runs), 0))"
        ).fetchone()
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return row is not None and isinstance(row[0], int) and row[0] >= _MAX_ID


def _full(e: sqlite3.Error, path: Path) -> StoreError:
    """SQLITE_FULL: the filesystem is full, or the runs' ids are used up."""
    if _ids_used_up(path):
        return StoreError(
            f"{path} has no id left for a new run: SQLite says {e!s}, but its run ids are "
            f"used up (a run has the largest id SQLite has, {_MAX_ID})",
            "store new runs in another database with --db or IOBENCH_DB",
        )
    return StoreError(f"the filesystem holding {path} is full: {e}", "free some space")
