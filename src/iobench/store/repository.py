"""SQLite repository for runs and their results.

Every write is one short transaction, so a crash or Ctrl-C leaves either the whole row or
nothing. WAL mode and a busy timeout let several iobench processes share one database.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
import uuid
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from iobench.errors import StoreError, UserError
from iobench.store.schema import MIGRATIONS, SCHEMA_VERSION

BUSY_TIMEOUT_S = 30.0


def default_db_path() -> Path:
    """``$IOBENCH_DB``, else ``$XDG_DATA_HOME/iobench/iobench.db`` (``~/.local/share`` default)."""
    env = os.environ.get("IOBENCH_DB")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "iobench" / "iobench.db"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_from_epoch(seconds: float) -> str:
    """Seconds since the epoch as ISO 8601 UTC with milliseconds (``...T01:51:22.831Z``)."""
    return (
        datetime.fromtimestamp(seconds, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


@dataclass(frozen=True)
class TargetRecord:
    position: int
    spec: str
    path: str
    kind: str
    size_bytes: int | None
    context: dict[str, Any]


@dataclass(frozen=True)
class ResultRecord:
    """One workload on one target, with the evidence it came from."""

    target: str
    workload: str
    position: int
    status: str  # "ok" | "failed"
    params: dict[str, Any]
    metrics: dict[str, Any] | None
    job_file: str
    fio_argv: list[str]
    fio_rc: int | None
    fio_version: str | None
    raw_output: str | None
    fio_stdout: str | None
    fio_stderr: str | None
    error: str | None
    started_at: str
    finished_at: str
    repetition: int = 1  # 1..N with --repeat N
    # Per-second samples from fio's interval logs (see fio/logs.py), None when not recorded.
    samples: dict[str, Any] | None = None
    # Many clients (--clients): the client as the user named it, "all" for the aggregate of
    # a step; None on one host. ``clients``: how many clients ran the step.
    client: str | None = None
    clients: int | None = None


@dataclass(frozen=True)
class RunRecord:
    id: int
    uuid: str
    status: str
    suite: str
    suite_def: dict[str, Any]
    label: str | None
    argv: list[str]
    host: dict[str, Any]
    fio_version: str | None
    iobench_version: str
    warnings: list[dict[str, Any]]
    error: str | None
    started_at: str
    finished_at: str | None
    targets: list[TargetRecord] = field(default_factory=list)
    results: list[ResultRecord] = field(default_factory=list)
    result_count: int = 0
    origin: str = "run"  # "run": measured by iobench; "imported": from fio output files
    source: str | None = None  # imported runs: the file(s) they came from


class Store:
    """The results database. Open with :meth:`open`; close with :meth:`close` or ``with``."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path

    # -- lifecycle -----------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | str) -> Store:
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(
                f"cannot create the directory for the results database {path}: {e.strerror}",
                "choose another location with --db PATH or IOBENCH_DB",
            ) from e
        if path.exists() and path.is_dir():
            raise UserError(f"--db {path} is a directory", "give the path of a database file")
        try:
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            _enable_wal(conn)
        except sqlite3.OperationalError as e:
            raise StoreError(
                f"cannot open the results database {path}: {e}",
                "check its permissions, or point --db or IOBENCH_DB at another file",
            ) from e
        except sqlite3.DatabaseError as e:
            raise StoreError(
                f"{path} is not an iobench results database ({e})",
                "point --db or IOBENCH_DB at another file",
            ) from e
        store = cls(conn, path)
        store._migrate()
        store._mark_dead_runs()
        return store

    def close(self) -> None:
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
            self._conn.execute("ROLLBACK")
            raise
        else:
            self._conn.execute("COMMIT")

    def _migrate(self) -> None:
        try:
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise StoreError(
                f"{self.path} is not an iobench results database ({e})",
                "point --db or IOBENCH_DB at another file",
            ) from e
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer iobench (schema {version}; "
                f"this iobench knows schema {SCHEMA_VERSION})",
                "upgrade iobench, or use another database with --db",
            )
        if version >= SCHEMA_VERSION:
            return
        # A migration may rebuild a table that others refer to: with foreign keys on,
        # dropping it would delete their rows. SQLite ignores this pragma in a transaction.
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

    def schema_version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def _mark_dead_runs(self) -> None:
        """A run left 'running' by a process of this host that no longer exists was aborted."""
        host = socket.gethostname()
        rows = self._conn.execute(
            "SELECT id, pid, suite_json FROM runs WHERE status = 'running' AND hostname = ?",
            (host,),
        ).fetchall()
        for row in rows:
            if row["pid"] is not None and not _pid_alive(row["pid"]):
                error = f"the iobench process (pid {row['pid']}) ended without finishing this run"
                files = json.loads(row["suite_json"]).get("clients", {}).get("files")
                if files:  # a run on clients: its test files there were not removed
                    error += "; its test files may be left on the clients (remove them by hand): "
                    error += ", ".join(f"{client}: {path}" for client, path in files.items())
                with self._tx() as conn:
                    conn.execute(
                        "UPDATE runs SET status = 'aborted', finished_at = ?, error = ? "
                        "WHERE id = ? AND status = 'running'",
                        (now_iso(), error, row["id"]),
                    )

    # -- writing ---------------------------------------------------------------------------

    def create_run(
        self,
        *,
        suite: str,
        suite_def: dict[str, Any],
        label: str | None,
        argv: Sequence[str],
        host: dict[str, Any],
        iobench_version: str,
        targets: Sequence[TargetRecord],
        origin: str = "run",
        source: str | None = None,
        started_at: str | None = None,
    ) -> int:
        with self._tx() as conn:
            cur = conn.execute(
                "INSERT INTO runs (uuid, status, suite, suite_json, label, argv_json, host_json,"
                " iobench_version, started_at, pid, hostname, origin, source)"
                " VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    str(uuid.uuid4()),
                    suite,
                    _dumps(suite_def),
                    label,
                    _dumps(list(argv)),
                    _dumps(host),
                    iobench_version,
                    started_at or now_iso(),
                    os.getpid(),
                    socket.gethostname(),
                    origin,
                    source,
                ),
            )
            run_id = cur.lastrowid
            assert run_id is not None
            for t in targets:
                conn.execute(
                    "INSERT INTO targets (run_id, position, spec, path, kind, size_bytes,"
                    " context_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (run_id, t.position, t.spec, t.path, t.kind, t.size_bytes, _dumps(t.context)),
                )
        return run_id

    def add_result(self, run_id: int, r: ResultRecord) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO results (run_id, target, workload, position, status, params_json,"
                " metrics_json, job_file, fio_argv_json, fio_rc, fio_version, raw_output_z,"
                " fio_stdout, fio_stderr, error, started_at, finished_at, repetition,"
                " samples_json, client, clients)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                ),
            )

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
                (
                    status,
                    fio_version,
                    _dumps(list(warnings)),
                    error,
                    finished_at or now_iso(),
                    run_id,
                ),
            )

    def find_run_uuid(self, run_uuid: str) -> int | None:
        """The id of the run that is, or was imported from, the run with this uuid."""
        row = self._conn.execute(
            "SELECT id FROM runs WHERE uuid = ?"
            " OR json_extract(suite_json, '$.imported_from.uuid') = ? ORDER BY id LIMIT 1",
            (run_uuid, run_uuid),
        ).fetchone()
        return None if row is None else int(row["id"])

    # -- reading ---------------------------------------------------------------------------

    def list_runs(self, *, limit: int | None = None, label: str | None = None) -> list[RunRecord]:
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

    def resolve(self, ref: str) -> int:
        """A run reference as users type it: an id, ``latest``/``last``, or ``-N`` (N-th newest)."""
        ref = ref.strip()
        if ref in ("latest", "last") or (ref.startswith("-") and ref[1:].isdigit()):
            offset = 0 if ref in ("latest", "last") else int(ref[1:]) - 1
            row = self._conn.execute(
                "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (max(offset, 0),)
            ).fetchone()
            if row is None:
                raise UserError(
                    f"no run matches {ref!r}: the database {self.path} has "
                    f"{self._count_runs()} run(s)",
                    "run a benchmark first with `iobench run`",
                )
            return int(row["id"])
        if not ref.isdigit():
            raise UserError(
                f"{ref!r} is not a run id", "give a number from `iobench list`, or `latest`"
            )
        row = self._conn.execute("SELECT id FROM runs WHERE id = ?", (int(ref),)).fetchone()
        if row is None:
            raise UserError(
                f"there is no run {ref} in {self.path}", "see the runs with `iobench list`"
            )
        return int(row["id"])

    def get_run(self, run_id: int, *, with_raw: bool = False) -> RunRecord:
        """A run with its targets and results; fio's raw output only when ``with_raw``."""
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
            f" started_at, finished_at, repetition, samples_json, client, clients, {raw_column}"
            " FROM results WHERE run_id = ? ORDER BY repetition, position, id",
            (run_id,),
        ):
            run.results.append(
                ResultRecord(
                    target=r["target"],
                    workload=r["workload"],
                    position=r["position"],
                    status=r["status"],
                    params=json.loads(r["params_json"]),
                    metrics=None if r["metrics_json"] is None else json.loads(r["metrics_json"]),
                    job_file=r["job_file"],
                    fio_argv=json.loads(r["fio_argv_json"]),
                    fio_rc=r["fio_rc"],
                    fio_version=r["fio_version"],
                    raw_output=(
                        None
                        if r["raw_output_z"] is None
                        else zlib.decompress(r["raw_output_z"]).decode()
                    ),
                    fio_stdout=r["fio_stdout"],
                    fio_stderr=r["fio_stderr"],
                    error=r["error"],
                    started_at=r["started_at"],
                    finished_at=r["finished_at"],
                    repetition=r["repetition"],
                    samples=None if r["samples_json"] is None else json.loads(r["samples_json"]),
                    client=r["client"],
                    clients=r["clients"],
                )
            )
        return run

    def _count_runs(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM runs").fetchone()[0])

    def _targets(self, run_id: int) -> list[TargetRecord]:
        return [
            TargetRecord(
                position=t["position"],
                spec=t["spec"],
                path=t["path"],
                kind=t["kind"],
                size_bytes=t["size_bytes"],
                context=json.loads(t["context_json"]),
            )
            for t in self._conn.execute(
                "SELECT * FROM targets WHERE run_id = ? ORDER BY position", (run_id,)
            )
        ]

    @staticmethod
    def _run_from_row(row: sqlite3.Row) -> RunRecord:
        return RunRecord(
            id=row["id"],
            uuid=row["uuid"],
            status=row["status"],
            suite=row["suite"],
            suite_def=json.loads(row["suite_json"]),
            label=row["label"],
            argv=json.loads(row["argv_json"]),
            host=json.loads(row["host_json"]),
            fio_version=row["fio_version"],
            iobench_version=row["iobench_version"],
            warnings=json.loads(row["warnings_json"]),
            error=row["error"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            result_count=row["result_count"],
            origin=row["origin"],
            source=row["source"],
        )


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


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=False)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
