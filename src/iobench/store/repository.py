"""SQLite repository for runs and their results.

Every write is one short transaction, so a crash or Ctrl-C leaves either the whole row or
nothing. WAL mode and a busy timeout let several iobench processes share one database.
The file is checked and identified before SQLite may write to it (store/dbfile.py); every
SQLite error a call meets becomes a StoreError, and a row whose JSON is unreadable names
its run, so that `iobench rm` can remove it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import socket
import sqlite3
import time
import uuid
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from iobench import jsontext
from iobench.documents.run import stored_document
from iobench.documents.schema import check_run_document
from iobench.errors import StoreError, StoreGone, UserError
from iobench.iocount import upgraded
from iobench.probe.process import own_start, still_running
from iobench.records import (
    PartResult,
    RecordError,
    ResultRecord,
    RunBrief,
    RunRecord,
    SuiteDefinition,
    TargetRecord,
    now_iso,
)
from iobench.store.dbfile import (
    APPLICATION_ID,
    DbFile,
    Unfinished,
    check_may_write,
    describe,
    examine,
    identify,
    probe_uri,
    uri,
)
from iobench.store.schema import MIGRATIONS, SCHEMA_VERSION

BUSY_TIMEOUT_S = 30.0
# Connections to a database whose files could no longer be written: never closed (closing
# writes to the mapped -shm, which ends the process with SIGBUS), kept here so that nothing
# collects them; the process then exits without finalizing them (iobench.__main__).
_ABANDONED: list[sqlite3.Connection] = []


def abandoned() -> bool:
    """Whether a database connection had to be abandoned (see _ABANDONED)."""
    return bool(_ABANDONED)


# How long a database that may be half created by another iobench is looked at again.
UNFINISHED_WAIT_S = 3.0


def default_db_path() -> Path:
    """``$IOBENCH_DB``, else ``$XDG_DATA_HOME/iobench/iobench.db`` (``~/.local/share`` default)."""
    env = os.environ.get("IOBENCH_DB")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "iobench" / "iobench.db"


P = ParamSpec("P")
R = TypeVar("R")


def _guarded(method: Callable[Concatenate[Store, P], R]) -> Callable[Concatenate[Store, P], R]:
    """SQLite's errors as StoreErrors that say what they mean: a damaged page surfaces only
    when a query reaches it, so every call that touches the database needs this."""

    @functools.wraps(method)
    def call(self: Store, /, *args: P.args, **kwargs: P.kwargs) -> R:
        self._check_files()
        try:
            return method(self, *args, **kwargs)
        except sqlite3.ProgrammingError:  # a bug in iobench's SQL, not the file's fault
            raise
        except sqlite3.DatabaseError as e:
            raise self._error(e) from e

    return call


# SQLite's INTEGER (a run's id, an OFFSET) is 64-bit signed: a larger number names no run.
_MAX_ROWID = 2**63 - 1


def _run_reference(ref: str) -> tuple[bool, int]:
    """``(counted from the newest, number)`` of a run reference: ``latest`` is ``(True, 1)``,
    ``-N`` ``(True, N)``, an id ``(False, id)``; a number too long for SQLite comes back as
    one beyond its range. Only ASCII digits: Python's ``isdigit`` and ``int`` also take
    other scripts' digits (U+0661, Arabic-Indic one, for 1) and ``+``, ``_`` and spaces."""
    newest = ref == "latest" or ref.startswith("-")
    digits = "1" if ref == "latest" else ref[1:] if newest else ref
    if not (digits.isascii() and digits.isdigit()) or (newest and not digits.strip("0")):
        raise UserError(
            f"{ref!r} is not a run id",
            "give an id from `iobench list` (digits), `latest`, or -N for the N-th newest "
            "(-1 is the newest)",
        )
    # Past 19 digits (leading zeros aside) a number is beyond SQLite's range anyway, and
    # int() refuses strings of more than 4300 digits.
    significant = digits.lstrip("0") or "0"
    return newest, int(significant) if len(significant) <= 19 else _MAX_ROWID + 1


class Store:
    """The results database. Open with :meth:`open`; close with :meth:`close` or ``with``."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        *,
        readonly: bool = False,
        immutable: DbFile | None = None,
    ) -> None:
        self._conn = conn
        self.path = path
        self.readonly = readonly
        self._immutable = immutable  # read without locks: the file as it was examined
        self._version = SCHEMA_VERSION
        self._files = [path]  # the database's files, as SQLite writes them (real paths)
        # Of a database open for writing: the file SQLite has open (device, inode), and the
        # largest size of its -shm seen so far (see _check_files).
        self._opened: tuple[int, int] | None = None
        self._shm_size = 0
        # Runs found 'running' whose iobench had died, marked aborted when this store
        # opened: (run id, what happened and what it left), for the command to say.
        self.aborted: list[tuple[int, str]] = []

    # -- lifecycle -----------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | str, *, readonly: bool = False) -> Store:
        """Open the database at ``path``, refusing anything that is not iobench's.

        Read-write (the default) creates a missing database, upgrades an older one and marks
        runs whose process died as aborted. ``readonly`` writes nothing and creates nothing,
        so a database the user may only read can be read; it upgrades an older database
        only when the user may write it, and refuses it otherwise.
        """
        path = Path(path)
        found = examine(path)
        if readonly:
            return cls._open_readonly(found, upgrade=True)
        deadline = time.monotonic() + UNFINISHED_WAIT_S
        while found.exists and found.size:
            probe = _connect(probe_uri(found), path)  # identified before it may be written
            try:
                identify(probe, path, SCHEMA_VERSION)
                break
            except Unfinished:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
                found = examine(path)
            finally:
                probe.close()
        if found.exists:
            check_may_write(found)
        else:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(
                    f"cannot create the directory for the results database {path}: {e.strerror}",
                    "choose another location with --db PATH or IOBENCH_DB",
                ) from e
        conn = _connect(uri(found.real, mode="rw" if found.exists else "rwc"), path)
        store = cls(conn, path)
        store._files = [found.real, Path(f"{found.real}-wal"), Path(f"{found.real}-shm")]
        try:
            store._prepare()
            st = found.real.stat()
            store._opened = (st.st_dev, st.st_ino)
        except BaseException:
            conn.close()
            raise
        return store

    @classmethod
    def _open_readonly(cls, found: DbFile, *, upgrade: bool) -> Store:
        path = found.path
        if not found.exists:
            raise UserError(
                f"no runs are stored yet: there is no database at {path}",
                "run a benchmark first with `iobench run`, or point --db at your database",
            )
        live_log = found.wal_mode and found.has_wal
        if live_log and not found.has_shm and not os.access(found.real.parent, os.W_OK):
            raise StoreError(
                f"cannot read {path}: {path}-wal holds changes that are not in the database "
                f"file yet, and reading them needs {path}-shm, which you may not create",
                f"open it once as a user who may write {found.real.parent}, e.g. "
                f"`sudo iobench --db {path} list`",
            )
        # Without a -wal nobody is writing, and immutable reads the file as it is, creating
        # nothing; a read-only connection would leave a -wal and a -shm behind.
        params = {"mode": "ro"} if live_log else {"mode": "ro", "immutable": "1"}
        conn = _connect(uri(found.real, **params), path)
        store = cls(conn, path, readonly=True, immutable=None if live_log else found)
        try:
            store._version = identify(conn, path, SCHEMA_VERSION)
        except BaseException:
            conn.close()
            raise
        if store._version == SCHEMA_VERSION:
            store.aborted = store._dead_runs()  # what opening it read-write would mark
            return store
        if store._version == 0:  # empty, a new database
            return store
        conn.close()
        may_write = os.access(found.real, os.W_OK) and os.access(found.real.parent, os.W_OK)
        if not (upgrade and may_write):
            raise StoreError(
                f"{path} has schema {store._version}, older than this iobench's "
                f"({SCHEMA_VERSION}); it must be upgraded before it can be read, and you "
                "may not write it",
                f"run `iobench --db {path} list` once as a user who may write the file and "
                "its directory (e.g. with sudo): that upgrades it",
            )
        cls.open(path).close()  # the one write a reading command makes: the upgrade
        return cls._open_readonly(examine(path), upgrade=False)

    def _check_files(self) -> None:
        """A StoreError when a file of a database open for writing can no longer be
        written (made immutable, its filesystem remounted read-only...): SQLite keeps its
        shared-memory index (``-shm``) mapped, and touching a page of it that cannot be
        written ends the process with SIGBUS, with no message and nothing cleaned up.
        Checked before every use, so that a run ends with this error instead. (With
        access(2), which sees both: opening and closing the file would drop the locks
        SQLite holds on it.)"""
        if self.readonly:
            return
        self._check_same_files()
        for path in self._files:
            effective = os.access in os.supports_effective_ids
            if not os.path.lexists(path) or os.access(path, os.W_OK, effective_ids=effective):
                continue
            self._abandon()
            try:
                read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
            except OSError:
                read_only = False
            why = (
                "its filesystem is read-only"
                if read_only
                else "it is immutable, or its permissions changed"
            )
            raise StoreError(
                f"the results database can no longer be written: {path}: {why}",
                "make it writable again (chattr -i, remount read-write), or use another "
                "database with --db",
            )

    def _abandon(self) -> None:
        if self._conn not in _ABANDONED:
            _ABANDONED.append(self._conn)

    def _check_same_files(self) -> None:
        """A StoreError when the database's files are no longer what SQLite has open: the
        file removed, renamed or replaced (what iobench stores would not be found at its
        path), or its -shm truncated by another program (SQLite keeps it mapped: the next
        touch of a page past its new end would end the process with SIGBUS). A -shm only
        grows while iobench holds it open."""
        if self._opened is None:
            return
        db, shm = self._files[0], self._files[-1]
        try:
            st = db.stat()
            same = (st.st_dev, st.st_ino) == self._opened
        except OSError:
            same = False
        if not same:
            self._abandon()
            raise StoreGone(
                f"the results database {self.path} was removed, renamed or replaced while "
                "iobench was using it: its path no longer leads to the file iobench writes, "
                "so nothing iobench stores now would be found there",
                "keep the database where nothing else removes or moves it, e.g. the default "
                "~/.local/share/iobench, then run again",
            )
        try:
            size = shm.stat().st_size
        except OSError:
            size = 0
        if size < self._shm_size:
            self._abandon()
            raise StoreError(
                f"the results database can no longer be used: {shm} was truncated from "
                f"{self._shm_size} to {size} bytes while iobench was using it (by another "
                "program)",
                "find out what touches the database's files; the next iobench that opens "
                "it rebuilds the -shm",
            )
        self._shm_size = size

    def require_writable(self) -> None:
        """A StoreError unless this user may write the database: checked before asking."""
        check_may_write(examine(self.path))

    def close(self) -> None:
        if self._conn in _ABANDONED:
            return  # never touched again
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """An IMMEDIATE transaction: all of it is written, or none of it."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            if self._conn.in_transaction:  # SQLite ends it itself after some errors
                self._conn.execute("ROLLBACK")
            raise
        else:
            self._conn.execute("COMMIT")

    def _error(self, e: sqlite3.DatabaseError) -> StoreError:
        if self._immutable is not None and self._immutable.changed():
            return StoreError(
                f"{self.path} changed while it was being read (another iobench wrote to it)",
                "run the command again",
            )
        return describe(e, self.path)

    @_guarded
    def _prepare(self) -> None:
        """Identify the database again, now with what its log holds; then WAL, upgrade,
        and the runs whose process died."""
        version = identify(self._conn, self.path, SCHEMA_VERSION)
        self._conn.execute("PRAGMA foreign_keys = ON")
        _enable_wal(self._conn)
        self._migrate(version)
        self._mark_dead_runs()

    def _migrate(self, version: int) -> None:
        if version < SCHEMA_VERSION:
            # A migration may rebuild a table that others refer to: with foreign keys on,
            # dropping it would delete their rows. SQLite ignores this pragma in a
            # transaction.
            self._conn.execute("PRAGMA foreign_keys = OFF")
            try:
                self._run_migrations(version)
            finally:
                self._conn.execute("PRAGMA foreign_keys = ON")
            broken = self._conn.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise StoreError(
                    f"{self.path}: the upgrade left {len(broken)} row(s) without their run",
                    "restore the database from a backup and report this",
                )
        if self._conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            with self._tx() as conn:  # new, or made before iobench marked its databases
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")

    def _run_migrations(self, version: int) -> None:
        for number in range(version, SCHEMA_VERSION):
            with self._tx() as conn:
                # Decided under the lock: another process may have migrated meanwhile.
                current = conn.execute("PRAGMA user_version").fetchone()[0]
                if current > number:
                    continue
                tables = conn.execute(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                ).fetchone()[0]
                if current == 0 and tables:
                    raise StoreError(
                        f"{self.path} is an SQLite database but not one of iobench's",
                        "point --db or IOBENCH_DB at another file",
                    )
                for statement in MIGRATIONS[number].split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number + 1}")

    @_guarded
    def schema_version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    @_guarded
    def _dead_runs(self) -> list[tuple[int, str]]:
        """The runs left 'running' by a process of this host that no longer runs them:
        (run id, what happened and what it left)."""
        rows = self._conn.execute(
            "SELECT id, status, pid, hostname, suite_json, proc_start, started_at, origin,"
            " leftovers_json FROM runs WHERE status = 'running'"
        ).fetchall()
        found = [(int(row["id"]), _dead_run_error(row)) for row in rows]
        return [(run_id, error) for run_id, error in found if error is not None]

    def _mark_dead_runs(self) -> None:
        """A run left 'running' by a process of this host that no longer runs it was
        aborted; each is noted in :attr:`aborted` for the command to say."""
        for run_id, error in self._dead_runs():
            with self._tx() as conn:
                done = conn.execute(
                    "UPDATE runs SET status = 'aborted', finished_at = ?, error = ? "
                    "WHERE id = ? AND status = 'running'",
                    (now_iso(), error, run_id),
                )
            if done.rowcount:
                self.aborted.append((run_id, error))

    @_guarded
    def note_leftover(self, run_id: int, path: str, what: str) -> None:
        """Before iobench makes ``path`` (a ``what``: test file, private directory) for a
        run: if iobench dies before it removes it, the run says so and `iobench rm`
        removes it."""
        with self._tx() as conn:
            left = _leftovers(conn, run_id)
            if all(item["path"] != path for item in left):
                left.append({"path": path, "what": what})
            conn.execute("UPDATE runs SET leftovers_json = ? WHERE id = ?", (_dumps(left), run_id))

    @_guarded
    def forget_leftovers(self, run_id: int, paths: Sequence[str]) -> None:
        """``paths`` are gone (removed by the run, or by `iobench rm`)."""
        with self._tx() as conn:
            left = [item for item in _leftovers(conn, run_id) if item["path"] not in paths]
            conn.execute("UPDATE runs SET leftovers_json = ? WHERE id = ?", (_dumps(left), run_id))

    # -- writing ---------------------------------------------------------------------------

    @_guarded
    def create_run(
        self,
        *,
        suite: str,
        suite_def: SuiteDefinition | Mapping[str, Any],
        label: str | None,
        argv: Sequence[str],
        host: dict[str, Any],
        iobench_version: str,
        targets: Sequence[TargetRecord],
        origin: str = "run",
        source: str | None = None,
        started_at: str | None = None,
    ) -> int:
        """Store a new run, 'running'. ``suite_def`` given as a mapping is typed here (and
        refused when a key has the wrong type); it is stored with its keys in their order."""
        if not isinstance(suite_def, SuiteDefinition):
            suite_def = SuiteDefinition.from_dict(suite_def)
        with self._tx() as conn:
            cur = conn.execute(
                "INSERT INTO runs (uuid, status, suite, suite_json, label, argv_json, host_json,"
                " iobench_version, started_at, pid, hostname, origin, source, proc_start)"
                " VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                _storable(
                    (
                        str(uuid.uuid4()),
                        suite,
                        _dumps(suite_def.as_dict()),
                        label,
                        _dumps(list(argv)),
                        _dumps(host),
                        iobench_version,
                        started_at or now_iso(),
                        os.getpid(),
                        socket.gethostname(),
                        origin,
                        source,
                        own_start(),
                    )
                ),
            )
            run_id = cur.lastrowid
            assert run_id is not None
            for t in targets:
                conn.execute(
                    "INSERT INTO targets (run_id, position, spec, path, kind, size_bytes,"
                    " context_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    _storable(
                        (
                            run_id,
                            t.position,
                            t.spec,
                            t.path,
                            t.kind,
                            t.size_bytes,
                            _dumps(t.context),
                        )
                    ),
                )
        return run_id

    @_guarded
    def add_result(self, run_id: int, r: ResultRecord) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO results (run_id, target, workload, position, status, params_json,"
                " metrics_json, job_file, fio_argv_json, fio_rc, fio_version, raw_output_z,"
                " fio_stdout, fio_stderr, error, started_at, finished_at, repetition,"
                " samples_json, client, clients, parts_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                _storable(
                    (
                        run_id,
                        r.target,
                        r.workload,
                        r.position,
                        r.status,
                        _dumps(r.params),
                        None if r.metrics is None else _dumps(r.metrics),
                        r.job_file,
                        _dumps(r.fio_argv),
                        r.fio_rc,
                        r.fio_version,
                        None if r.raw_output is None else zlib.compress(r.raw_output.encode(), 6),
                        r.fio_stdout,
                        r.fio_stderr,
                        r.error,
                        r.started_at,
                        r.finished_at,
                        r.repetition,
                        None if r.samples is None else _dumps(r.samples),
                        r.client,
                        r.clients,
                        _dumps([_part_json(part) for part in r.parts]) if r.parts else None,
                    )
                ),
            )

    @_guarded
    def set_precondition(self, run_id: int, precondition: Mapping[str, Any]) -> None:
        """What a precondition did to the run's targets (``suite_def.precondition``), as
        it goes: the run row is made before the precondition runs. The rest of the
        suite definition is written back as it was read."""
        with self._tx() as conn:
            row = conn.execute("SELECT suite_json FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise StoreError(f"run {run_id} is no longer in {self.path}")
            suite_def = self._suite_def(run_id, row)
            amended = dataclasses.replace(suite_def, precondition=dict(precondition))
            conn.execute(
                "UPDATE runs SET suite_json = ? WHERE id = ?",
                (_dumps(amended.as_dict()), run_id),
            )

    @_guarded
    def finish_run(
        self,
        run_id: int,
        *,
        status: str,
        fio_version: str | None,
        warnings: Sequence[dict[str, Any]],
        error: str | None = None,
        finished_at: str | None = None,
    ) -> None:
        """Set the run's outcome; ``finished_at`` defaults to now."""
        with self._tx() as conn:
            conn.execute(
                "UPDATE runs SET status = ?, fio_version = ?, warnings_json = ?, error = ?,"
                " finished_at = ? WHERE id = ?",
                _storable(
                    (
                        status,
                        fio_version,
                        _dumps(list(warnings)),
                        error,
                        finished_at or now_iso(),
                        run_id,
                    )
                ),
            )

    @_guarded
    def runs_with_uuid(self, run_uuid: str) -> list[int]:
        """The ids of the runs that are, or say they were imported from, the run with this
        uuid (a claim in an imported file, which may be forged), oldest first."""
        rows = self._conn.execute(
            "SELECT id FROM runs WHERE uuid = ?"
            " OR json_extract(suite_json, '$.imported_from.uuid') = ? ORDER BY id",
            (run_uuid, run_uuid),
        ).fetchall()
        return [int(row["id"]) for row in rows]

    # -- reading ---------------------------------------------------------------------------

    @_guarded
    def list_runs(self, *, limit: int | None = None, label: str | None = None) -> list[RunRecord]:
        if self._version == 0:  # an empty database, opened read-only: no tables yet
            return []
        sql = (
            "SELECT runs.*, (SELECT count(*) FROM results WHERE results.run_id = runs.id"
            " AND results.status = 'ok') AS result_count FROM runs"
        )
        args: list[Any] = []
        if label is not None:
            sql += " WHERE label = ?"
            args.append(label)
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        runs = [self._run_from_row(row) for row in self._conn.execute(sql, args)]
        for run in runs:
            run.targets.extend(self._targets(run.id))
        return runs

    @_guarded
    def resolve(self, ref: str) -> int:
        """A run reference as the README promises it: an id (ASCII digits), ``latest``, or
        ``-N`` for the N-th newest (``-1`` is the newest). Anything else is refused, and an
        id beyond SQLite's range names no run."""
        newest, number = _run_reference(ref)
        row = None
        if number > _MAX_ROWID or self._version == 0:  # version 0: no tables yet
            pass
        elif newest:
            row = self._conn.execute(
                "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (number - 1,)
            ).fetchone()
        else:
            row = self._conn.execute("SELECT id FROM runs WHERE id = ?", (number,)).fetchone()
        if row is not None:
            return int(row["id"])
        if newest:
            raise UserError(
                f"no run matches {ref!r}: the database {self.path} has {self._count_runs()} run(s)",
                "run a benchmark first with `iobench run`",
            )
        raise UserError(f"there is no run {ref} in {self.path}", "see the runs with `iobench list`")

    @_guarded
    def get_run(self, run_id: int, *, with_raw: bool = False, checked: bool = True) -> RunRecord:
        """A run with its targets and results; fio's raw output only when ``with_raw``.
        ``checked=False`` leaves out the check against the run document's schema (its cost
        grows with the results: a run on clients reads back what it has just stored)."""
        row = self._conn.execute("SELECT *, 0 AS result_count FROM runs WHERE id = ?", (run_id,))
        found = row.fetchone()
        if found is None:
            raise UserError(f"there is no run {run_id} in {self.path}")
        run = self._run_from_row(found)
        run.targets.extend(self._targets(run_id))
        raw_column = "raw_output_z" if with_raw else "NULL AS raw_output_z"
        for r in self._conn.execute(
            "SELECT id, target, workload, position, status, params_json, metrics_json,"
            " job_file, fio_argv_json, fio_rc, fio_version, fio_stdout, fio_stderr, error,"
            " started_at, finished_at, repetition, samples_json, client, clients, parts_json,"
            f" {raw_column}"
            " FROM results WHERE run_id = ? ORDER BY repetition, position, id",
            (run_id,),
        ):
            params = self._json(run_id, r, "params_json", dict)
            run.results.append(
                ResultRecord(
                    target=r["target"],
                    workload=r["workload"],
                    position=r["position"],
                    status=r["status"],
                    params=params,
                    # A result stored with fio's iops is read with iobench's (iocount).
                    metrics=upgraded(
                        self._json(run_id, r, "metrics_json", dict, nullable=True), params
                    ),
                    job_file=r["job_file"],
                    fio_argv=self._json(run_id, r, "fio_argv_json", list),
                    fio_rc=r["fio_rc"],
                    fio_version=r["fio_version"],
                    raw_output=self._inflate(run_id, r["raw_output_z"]),
                    fio_stdout=r["fio_stdout"],
                    fio_stderr=r["fio_stderr"],
                    error=r["error"],
                    started_at=r["started_at"],
                    finished_at=r["finished_at"],
                    repetition=r["repetition"],
                    samples=self._json(run_id, r, "samples_json", dict, nullable=True),
                    client=r["client"],
                    clients=r["clients"],
                    parts=self._parts(run_id, r),
                )
            )
        # Every field every reader uses, typed as in an exported document: a damaged or
        # forged row is named here, not met as a crash in whatever shows it.
        problem = check_run_document(stored_document(run), dates=False) if checked else None
        if problem is not None:
            raise self._unreadable(run_id, f"{problem[0]}: {problem[1]}")
        return run

    def _count_runs(self) -> int:
        if self._version == 0:
            return 0
        return int(self._conn.execute("SELECT count(*) FROM runs").fetchone()[0])

    def _targets(self, run_id: int) -> list[TargetRecord]:
        return [
            TargetRecord(
                position=t["position"],
                spec=t["spec"],
                path=t["path"],
                kind=t["kind"],
                size_bytes=t["size_bytes"],
                context=self._json(run_id, t, "context_json", dict),
            )
            for t in self._conn.execute(
                "SELECT * FROM targets WHERE run_id = ? ORDER BY position", (run_id,)
            )
        ]

    def _run_from_row(self, row: sqlite3.Row) -> RunRecord:
        run_id = int(row["id"])
        status, error, finished_at = row["status"], row["error"], row["finished_at"]
        dead = _dead_run_error(row) if self.readonly and status == "running" else None
        if dead is not None:  # what opening it read-write would record
            status, error = "aborted", dead
        return RunRecord(
            id=run_id,
            uuid=row["uuid"],
            status=status,
            suite=row["suite"],
            suite_def=self._suite_def(run_id, row),
            label=row["label"],
            argv=self._json(run_id, row, "argv_json", list),
            host=self._json(run_id, row, "host_json", dict),
            fio_version=row["fio_version"],
            iobench_version=row["iobench_version"],
            warnings=self._json(run_id, row, "warnings_json", list),
            error=error,
            started_at=row["started_at"],
            finished_at=finished_at,
            result_count=row["result_count"],
            origin=row["origin"],
            source=row["source"],
        )

    def _json(
        self, run_id: int, row: sqlite3.Row, column: str, shape: type, *, nullable: bool = False
    ) -> Any:
        """A JSON column of one of run ``run_id``'s rows, of the ``shape`` readers expect."""
        text = row[column]
        if text is None and nullable:
            return None
        try:
            value = jsontext.load(text)
        except (TypeError, ValueError) as e:
            raise self._unreadable(run_id, f"its {column} is not valid JSON ({e})") from e
        bad = jsontext.first_bad(value)
        if bad is not None:
            raise self._unreadable(run_id, f"its {column} holds at {bad[0]} what {bad[1]}")
        if not isinstance(value, shape):
            found = type(value).__name__
            raise self._unreadable(run_id, f"its {column} is a {found}, not a {shape.__name__}")
        return value

    def _parts(self, run_id: int, row: sqlite3.Row) -> tuple[PartResult, ...]:
        """A group's parts (its parts_json: name, params, metrics, samples each); the run
        document's check (in get_run) types every field."""
        found = self._json(run_id, row, "parts_json", list, nullable=True) or []
        if not all(isinstance(p, dict) and isinstance(p.get("params"), dict) for p in found):
            raise self._unreadable(run_id, "its parts_json holds a part without params")
        return tuple(
            PartResult(
                name=str(p.get("name")),
                params=p["params"],
                metrics=upgraded(p.get("metrics"), p["params"]),
                samples=p.get("samples"),
            )
            for p in found
        )

    def _suite_def(self, run_id: int, row: sqlite3.Row) -> SuiteDefinition:
        try:
            return SuiteDefinition.from_dict(self._json(run_id, row, "suite_json", dict))
        except RecordError as e:  # named as the run document's schema names it
            raise self._unreadable(run_id, f"suite_def.{e.where}: {e.what}") from e

    def _inflate(self, run_id: int, blob: Any) -> str | None:
        if blob is None:
            return None
        try:
            return zlib.decompress(blob).decode()
        except (TypeError, zlib.error, UnicodeDecodeError) as e:
            raise self._unreadable(run_id, f"its raw fio output cannot be unpacked ({e})") from e

    def _unreadable(self, run_id: int, what: str) -> StoreError:
        return StoreError(
            f"run {run_id} in {self.path} cannot be read: {what}",
            f"remove it with `iobench rm {run_id}`, or restore the database from a backup",
        )

    # -- removing --------------------------------------------------------------------------

    @_guarded
    def removal_briefs(self, run_ids: Sequence[int]) -> list[RunBrief]:
        """What `iobench rm` would remove, read without the runs' JSON columns; a UserError
        for a run still running on this host."""
        return [self._removable(run_id) for run_id in run_ids]

    @_guarded
    def remove_runs(self, run_ids: Sequence[int]) -> None:
        """Delete the runs with their targets and results (evidence included): all of them
        in one transaction, or none. A run still running on this host is refused."""
        with self._tx() as conn:
            for run_id in run_ids:  # again under the lock: things may have changed
                self._removable(run_id)
            marks = ", ".join("?" * len(run_ids))
            for table, column in (("results", "run_id"), ("targets", "run_id"), ("runs", "id")):
                conn.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", list(run_ids))

    def _removable(self, run_id: int) -> RunBrief:
        brief = self._brief(run_id)
        if brief.live_pid is not None:
            raise UserError(
                f"run {run_id} is still running (iobench process {brief.live_pid} on this "
                "host); nothing was removed",
                "wait until it finishes, or stop it with Ctrl-C, then remove it",
            )
        return brief

    def _brief(self, run_id: int) -> RunBrief:
        row = self._conn.execute(
            "SELECT id, uuid, status, suite, label, started_at, pid, hostname, proc_start,"
            " origin, leftovers_json,"
            " (SELECT count(*) FROM results WHERE results.run_id = runs.id) AS results"
            " FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            raise UserError(f"there is no run {run_id} in {self.path}")
        targets = self._conn.execute(
            "SELECT spec FROM targets WHERE run_id = ? ORDER BY position", (run_id,)
        )
        return RunBrief(
            id=run_id,
            uuid=_text(row["uuid"]),
            status=_text(row["status"]),
            suite=_text(row["suite"]),
            label=None if row["label"] is None else _text(row["label"]),
            started_at=_text(row["started_at"]),
            targets=tuple(_text(t["spec"]) for t in targets),
            results=int(row["results"]),
            live_pid=_live_pid(row),
            leftovers=tuple(
                (item["path"], item["what"])
                for item in _leftovers_of(row)
                if row["hostname"] == socket.gethostname()
            ),
        )


def _connect(address: str, path: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(address, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    except sqlite3.DatabaseError as e:
        raise describe(e, path) from e
    return conn


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL. SQLite does not wait for the lock this needs (no busy handler for it),
    so several processes creating one new database at once must retry."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _part_json(part: PartResult) -> dict[str, Any]:
    return {
        "name": part.name,
        "params": part.params,
        "metrics": part.metrics,
        "samples": part.samples,
    }


def _dumps(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"), sort_keys=False)
    if "\\udc" in text:  # perhaps bytes that are not UTF-8, as lone surrogates
        text = json.dumps(_unicode(value), separators=(",", ":"), sort_keys=False)
    return text


def _unicode(value: Any) -> Any:
    """``value`` with every string storable (see :func:`_storable`)."""
    if isinstance(value, str):
        return _valid(value)
    if isinstance(value, dict):
        return {_valid(str(k)): _unicode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_unicode(v) for v in value]
    return value


def _valid(text: str) -> str:
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _storable(values: Sequence[Any]) -> tuple[Any, ...]:
    """Values for a row: text SQLite can hold. A path or argument that is not UTF-8 reaches
    Python with its bytes as lone surrogates (os.fsdecode), which SQLite refuses and no
    reader could use; they are stored as visible escapes (``\\xff``), as every view shows
    them anyway."""
    return tuple(_valid(v) if isinstance(v, str) else v for v in values)


def _text(value: Any) -> str:
    """A column shown to the user, whatever SQLite holds in it."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def _own_pid(row: sqlite3.Row) -> int | None:
    """The pid of the iobench process of this host that runs (or ran) this 'running' run;
    None for another status, another host's run, or no usable pid."""
    pid = row["pid"]
    if row["status"] != "running" or row["hostname"] != socket.gethostname():
        return None
    return pid if isinstance(pid, int) and pid > 0 else None


def _alive(row: sqlite3.Row, pid: int) -> bool:
    """Whether ``pid`` is still the process that created the run (not one that got its
    pid after it ended)."""
    start, since = row["proc_start"], row["started_at"]
    return still_running(
        pid,
        start if isinstance(start, str) else None,
        since if row["origin"] == "run" and isinstance(since, str) else None,
    )


def _live_pid(row: sqlite3.Row) -> int | None:
    """The pid of the process of this host still running this 'running' run, if any."""
    pid = _own_pid(row)
    return pid if pid is not None and _alive(row, pid) else None


def _leftovers(conn: sqlite3.Connection, run_id: int) -> list[dict[str, str]]:
    row = conn.execute("SELECT leftovers_json FROM runs WHERE id = ?", (run_id,)).fetchone()
    return _leftovers_of(row) if row is not None else []


def _leftovers_of(row: sqlite3.Row) -> list[dict[str, str]]:
    """A run's leftovers_json, read defensively: entries of a path and what it is."""
    try:
        value = json.loads(row["leftovers_json"])
    except (TypeError, ValueError, IndexError):
        return []
    if not isinstance(value, list):
        return []
    return [
        {"path": item["path"], "what": item["what"]}
        for item in value
        if isinstance(item, dict)
        and isinstance(item.get("path"), str)
        and item["path"].startswith("/")
        and isinstance(item.get("what"), str)
    ]


def _dead_run_error(row: sqlite3.Row) -> str | None:
    """Why a 'running' run of this host whose process no longer runs it was aborted, and
    what it left; None when it was not (another host's, or still running). Reads the JSON
    columns defensively."""
    pid = _own_pid(row)
    if pid is None or _alive(row, pid):
        return None
    error = f"the iobench process (pid {pid}) ended without finishing this run"
    left = [item for item in _leftovers_of(row) if os.path.lexists(item["path"])]
    if left:
        error += "; it left " + ", ".join(f"its {i['what']} {i['path']}" for i in left)
        error += f" (`iobench rm {row['id']}` removes them)"
    try:
        clients = SuiteDefinition.from_dict(json.loads(row["suite_json"])).clients
    except (TypeError, ValueError):  # RecordError too
        clients = None  # unreadable: `iobench rm` removes such a run
    files = clients.files if clients is not None else None
    if files:  # a run on clients: its test files were left there
        error += "; its test files may be left on the clients (remove them by hand): "
        error += ", ".join(f"{client}: {path}" for client, path in files.items())
    return error
