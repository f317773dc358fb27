"""The database file is hostile input (issue 11, points 7 and 9).

iobench usually runs as root, and --db / IOBENCH_DB may name anything: a device, a FIFO,
another application's database, a damaged or truncated copy. Each is refused with a clear
message, and nothing is written or created beside it. Commands that only read open the
database read-only, so a user who may only read it can still read it. `iobench rm` removes
runs in one transaction, including runs that no other command can read.
"""

from __future__ import annotations

import hashlib
import json
import os
import pty
import shutil
import socket
import sqlite3
import stat
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import iobench
from conftest import Cli
from iobench.errors import StoreError
from iobench.records import ResultRecord, TargetRecord, now_iso
from iobench.store import Store
from iobench.store.dbfile import APPLICATION_ID
from iobench.store.schema import MIGRATIONS, SCHEMA_VERSION

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"
FIO_OUTPUT = str(RECORDED / "seqread-1m-json.json")
REFUSED_HINT = (
    "  what to do: point --db or IOBENCH_DB at your iobench database, or at a path where "
    "iobench may create a new one\n"
)
DAMAGED = "is damaged: database disk image is malformed"
NEEDS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="mknod and setpriv need root")


# -- helpers ---------------------------------------------------------------------------------


# A stored result's metrics as a run stores them (what every reader may rely on).
METRICS = {
    "read": {"iops": 1000.0, "bw_bytes": 4096000.0, "io_bytes": 4096000, "total_ios": 1000,
             "runtime_ms": 1000},
}  # fmt: skip


def _populate(path: Path, runs: int = 2, results: int = 2) -> list[int]:
    """A real iobench database: runs with a target and results, through the Store API."""
    ids = []
    with Store.open(path) as store:
        for n in range(runs):
            run_id = store.create_run(
                suite="quick",
                suite_def={"name": "quick", "workloads": []},
                label=f"setup{n}",
                argv=["iobench", "run"],
                host={"hostname": "h"},
                iobench_version="0.1.0",
                targets=[TargetRecord(0, "/mnt/vol", "/mnt/vol", "directory", None, {})],
            )
            for i in range(results):
                store.add_result(run_id, _result(f"w{i}", i))
            store.finish_run(run_id, status="complete", fio_version="3.33", warnings=[])
            ids.append(run_id)
    return ids


def _result(workload: str, position: int) -> ResultRecord:
    return ResultRecord(
        target="/mnt/vol",
        workload=workload,
        position=position,
        status="ok",
        params={"rw": "randread", "bs": 4096},
        metrics=METRICS,
        job_file="[x]\n",
        fio_argv=["fio", "x.fio"],
        fio_rc=0,
        fio_version="3.33",
        raw_output='{"fio version": "fio-3.33"}',
        fio_stdout="",
        fio_stderr="",
        error=None,
        started_at=now_iso(),
        finished_at=now_iso(),
    )


def _listing(directory: Path) -> dict[str, tuple[int, int, int, str]]:
    """Every entry of ``directory`` as (mode, size, mtime, sha256 of a regular file), and
    the directory's own mtime under "." (creating or removing a file changes it). Nothing
    but regular files is opened."""
    out = {".": (0, 0, directory.stat().st_mtime_ns, "")}
    for entry in sorted(directory.iterdir()):
        st = entry.lstat()
        digest = hashlib.sha256(entry.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else ""
        out[entry.name] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return out


def _sql(path: Path, query: str, *args: Any) -> list[Any]:
    """Read the database as it is on disk, creating nothing beside it."""
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return conn.execute(query, args).fetchall()
    finally:
        conn.close()


def _foreign(path: Path, *statements: str, wal: bool = False) -> None:
    """Another application's SQLite database."""
    conn = sqlite3.connect(path, isolation_level=None)
    if wal:
        conn.execute("PRAGMA journal_mode = WAL")
    for s in statements:
        conn.execute(s)
    conn.close()


def _header_pages(path: Path) -> int:
    return int(struct.unpack_from(">I", path.read_bytes(), 28)[0])


# -- point 7: what is not iobench's is refused, and left alone ---------------------------------

IOBENCH_TABLES = (
    "CREATE TABLE runs (x)",
    "CREATE TABLE targets (x)",
    "CREATE TABLE results (x)",
)


def _make_case(name: str, d: Path) -> tuple[Path, str]:
    """The path of one hostile database file in ``d``, and why it is refused."""
    db = d / "db"
    if name in ("char-null", "char-zero", "link-to-char"):
        minor = 5 if name == "char-zero" else 3
        dev = d / ("dev" if name == "link-to-char" else "db")
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, minor))
        if name == "link-to-char":
            db.symlink_to("dev")
            return db, "it is a symbolic link to dev, a character device"
        return db, "it is a character device"
    if name in ("fifo", "link-to-fifo"):
        os.mkfifo(d / "pipe")
        if name == "fifo":
            return d / "pipe", "it is a FIFO (named pipe)"
        db.symlink_to("pipe")
        return db, "it is a symbolic link to pipe, a FIFO (named pipe)"
    if name in ("directory", "link-to-directory"):
        (d / "sub").mkdir()
        if name == "directory":
            return d / "sub", "it is a directory"
        db.symlink_to("sub")
        return db, "it is a symbolic link to sub, a directory"
    if name == "dangling-link":
        db.symlink_to("nowhere")
        return db, "it is a symbolic link to nowhere, which does not exist"
    if name in ("text", "link-to-text"):
        (d / "notes.txt").write_text("my notes, not a database\n" * 40)
        reason = "it is not an SQLite file (it does not begin with SQLite's header)"
        if name == "text":
            return d / "notes.txt", reason
        db.symlink_to("notes.txt")
        return db, reason
    if name in ("other-app", "link-to-other-app"):
        _foreign(
            d / "other.sqlite",
            "CREATE TABLE users (id, name)",
            "INSERT INTO users VALUES (1, 'a')",
            "PRAGMA user_version = 7",
        )
        reason = (
            "it is an SQLite database but not one of iobench's (tables, views and triggers: "
            "users; user_version 7)"
        )
        if name == "other-app":
            return d / "other.sqlite", reason
        db.symlink_to("other.sqlite")
        return db, reason
    if name == "other-app-wal":  # iobench's table names and more, in WAL mode
        _foreign(db, *IOBENCH_TABLES, "CREATE TABLE extra (y)", "PRAGMA user_version = 2", wal=True)
        return db, (
            "it is an SQLite database but not one of iobench's (tables, views and triggers: "
            "extra, results, runs, targets; user_version 2)"
        )
    if name == "other-app-id":
        _foreign(
            db, "PRAGMA application_id = 305419896", *IOBENCH_TABLES, "PRAGMA user_version = 1"
        )
        return db, "it is another application's SQLite database (application_id 0x12345678)"
    if name == "unmarked-with-a-future-version":  # iobench marks every database it makes
        _foreign(db, *IOBENCH_TABLES, "PRAGMA user_version = 9")
        return db, (
            "it is an SQLite database but not one of iobench's (tables, views and triggers: "
            "results, runs, targets; user_version 9)"
        )
    if name == "marked-with-a-trigger":
        _foreign(
            db,
            f"PRAGMA application_id = {APPLICATION_ID}",
            *IOBENCH_TABLES,
            "CREATE TRIGGER t AFTER DELETE ON runs BEGIN SELECT 1; END",
            "PRAGMA user_version = 3",
        )
        return db, (
            "it is an SQLite database but not one of iobench's (tables, views and triggers: "
            "results, runs, t, targets; user_version 3)"
        )
    if name.startswith("truncated"):
        real = d / "real.db"
        _populate(real)
        data = real.read_bytes()
        real.unlink()
        if name == "truncated-header":
            db.write_bytes(data[:50])
            return db, "it is a truncated SQLite file (50 bytes, less than its header)"
        cut = 4096 if name == "truncated-one-page" else len(data) // 2
        db.write_bytes(data[:cut])
        pages = _header_pages(db)
        return db, (
            f"it is a truncated SQLite database (its header says {pages} pages of 4096 bytes, "
            f"{pages * 4096} bytes; the file holds {cut})"
        )
    raise AssertionError(name)


HOSTILE = [
    "char-null",
    "char-zero",
    "link-to-char",
    "fifo",
    "link-to-fifo",
    "directory",
    "link-to-directory",
    "dangling-link",
    "text",
    "link-to-text",
    "other-app",
    "link-to-other-app",
    "other-app-wal",
    "other-app-id",
    "unmarked-with-a-future-version",
    "marked-with-a-trigger",
    "truncated-header",
    "truncated-one-page",
    "truncated-half",
]
EVERY_COMMAND = [
    ("list",),
    ("show", "1"),
    ("export", "1"),
    ("compare", "1", "2"),
    ("import", FIO_OUTPUT),
    ("rm", "1", "--yes"),
]


@NEEDS_ROOT
@pytest.mark.parametrize("case", HOSTILE)
def test_a_file_that_is_not_iobenchs_is_refused_and_nothing_is_written(
    cli: Cli, tmp_path: Path, case: str
) -> None:
    db, reason = _make_case(case, tmp_path)
    before = _listing(tmp_path)
    for command in EVERY_COMMAND:
        code, out, err = cli("--db", str(db), *command)
        assert (code, out) == (1, ""), command
        assert err == (
            f"iobench: error: {db} is not an iobench results database: {reason}\n" + REFUSED_HINT
        ), command
        assert _listing(tmp_path) == before, f"{command} wrote or created something"


@NEEDS_ROOT
def test_opening_a_fifo_does_not_wait_for_a_writer(tmp_path: Path) -> None:
    """Run in a child process with a deadline: a blocking open would hang the test."""
    os.mkfifo(tmp_path / "pipe")
    proc = subprocess.run(
        [sys.executable, "-m", "iobench", "--db", str(tmp_path / "pipe"), "list"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PYTHONPATH": str(Path(iobench.__file__).parents[1])},
    )
    assert proc.returncode == 1
    assert "it is a FIFO (named pipe)" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_foreign_database_in_use_is_refused_without_touching_its_log(
    cli: Cli, tmp_path: Path
) -> None:
    """Another application has the database open in WAL mode: its -wal and -shm exist and
    hold changes. iobench reads through them (read-only) and refuses."""
    db = tmp_path / "app.db"
    _foreign(db, "CREATE TABLE settings (k, v)", wal=True)
    other = sqlite3.connect(db, isolation_level=None)
    try:
        other.execute("INSERT INTO settings VALUES ('a', 1)")  # in the -wal only
        names = sorted(p.name for p in tmp_path.iterdir())
        assert names == ["app.db", "app.db-shm", "app.db-wal"]
        main = (db.read_bytes(), db.stat().st_mtime_ns)
        wal = Path(f"{db}-wal").read_bytes()
        for command in (("list",), ("import", FIO_OUTPUT)):
            code, _, err = cli("--db", str(db), *command)
            assert code == 1
            assert "not one of iobench's (tables, views and triggers: settings;" in err
        assert sorted(p.name for p in tmp_path.iterdir()) == names
        assert (db.read_bytes(), db.stat().st_mtime_ns) == main
        assert Path(f"{db}-wal").read_bytes() == wal
    finally:
        other.close()


def test_iobench_tables_with_other_columns_are_a_clear_error(cli: Cli, tmp_path: Path) -> None:
    """Marked as iobench's, with iobench's table names, but not its columns: accepted by
    the identification, then every query says what is wrong, never "internal error"."""
    db = tmp_path / "r.db"
    _foreign(db, f"PRAGMA application_id = {APPLICATION_ID}", *IOBENCH_TABLES,
             f"PRAGMA user_version = {SCHEMA_VERSION}", "INSERT INTO runs VALUES (1)")  # fmt: skip
    before = _listing(tmp_path)
    for command, column in ((("list",), "id"), (("show", "1"), "id")):
        code, out, err = cli("--db", str(db), *command)
        assert (code, out) == (1, "")
        assert err == (
            f"iobench: error: cannot use the results database {db}: no such column: {column}\n"
            "  what to do: point --db or IOBENCH_DB at another file; if the problem stays, "
            "report it\n"
        )
    assert _listing(tmp_path) == before


@pytest.mark.parametrize("sidecar", ["-wal", "-shm", "-journal"])
def test_a_symlink_where_sqlite_keeps_its_log_is_refused(
    cli: Cli, tmp_path: Path, sidecar: str
) -> None:
    db = tmp_path / "r.db"
    _populate(db)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    Path(f"{db}{sidecar}").symlink_to(victim)
    before = _listing(tmp_path)
    for command in (("list",), ("import", FIO_OUTPUT)):
        code, _, err = cli("--db", str(db), *command)
        assert code == 1
        assert err.startswith(
            f"iobench: error: {db}{sidecar}, where SQLite keeps {db}'s {sidecar[1:]} file, is "
            "a symbolic link: SQLite would write through it\n"
        )
    assert _listing(tmp_path) == before


# -- damaged pages ------------------------------------------------------------------------------


def _damage(db: Path, table: str) -> None:
    """Overwrite every page of ``table`` (sqlite_schema: the schema, on page 1) with 0xff."""
    pages = [p for (p,) in _sql(db, "SELECT pageno FROM dbstat WHERE name = ?", table)]
    assert pages
    with db.open("r+b") as f:
        for page in pages:
            start = 100 if page == 1 else 0  # keep the file header: the schema is damaged
            f.seek((page - 1) * 4096 + start)
            f.write(b"\xff" * (4096 - start))


@pytest.mark.parametrize("table", ["sqlite_schema", "runs", "results", "targets"])
def test_a_damaged_page_is_a_clear_error_and_nothing_is_written(
    cli: Cli, tmp_path: Path, table: str
) -> None:
    db = tmp_path / "r.db"
    _populate(db)
    _damage(db, table)
    before = _listing(tmp_path)
    for command in (("list",), ("show", "1"), ("export", "1"), ("rm", "1", "--yes")):
        code, out, err = cli("--db", str(db), *command)
        assert (code, out) == (1, ""), command
        assert err == (
            f"iobench: error: {db} {DAMAGED}\n"
            f"  what to do: restore it from a backup (`sqlite3 {db} .recover` may save what "
            "is left), or point --db or IOBENCH_DB at another file\n"
        ), command
        after = _listing(tmp_path)
        if command[0] == "rm" and table == "results":
            # rm reads what it would remove through the index; the damage surfaces in its
            # write transaction, whose -wal and -shm SQLite removes again
            del after["."], before["."]
        assert after == before, command


def test_a_damaged_page_may_surface_only_when_a_query_reaches_it(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    _populate(db)
    _damage(db, "results")
    with Store.open(db, readonly=True) as store:  # opens: the schema is intact
        assert store.resolve("latest") == 2
        with pytest.raises(StoreError, match=DAMAGED):
            store.get_run(2)
        with pytest.raises(StoreError, match=DAMAGED):
            store.list_runs()
    with Store.open(db) as store, pytest.raises(StoreError, match=DAMAGED):
        store.remove_runs([1])


# -- empty files, new and older databases ------------------------------------------------------


def test_an_empty_file_reads_as_no_runs_and_becomes_a_new_database(
    cli: Cli, tmp_path: Path
) -> None:
    db = tmp_path / "empty.db"
    db.touch()
    before = _listing(tmp_path)
    code, out, _ = cli("--db", str(db), "list")
    assert (code, out) == (0, "no runs stored yet; start one with `iobench run`\n")
    code, _, err = cli("--db", str(db), "show", "latest")
    assert code == 2
    assert err.startswith(f"iobench: error: no run matches 'latest': the database {db} has 0 run")
    code, _, err = cli("--db", str(db), "rm", "1", "--yes")
    assert (code, err.splitlines()[0]) == (2, f"iobench: error: there is no run 1 in {db}")
    assert _listing(tmp_path) == before, "reading an empty file wrote to it"
    code, _, _ = cli("--db", str(db), "import", FIO_OUTPUT)
    assert code == 0
    assert _sql(db, "PRAGMA application_id") == [(APPLICATION_ID,)]
    assert _sql(db, "SELECT count(*) FROM runs") == [(1,)]


def test_a_missing_database_is_not_created_by_reading_or_removing(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "none" / "r.db"
    assert cli("--db", str(db), "list")[0] == 0
    for command in (("show", "1"), ("rm", "1", "--yes"), ("export", "1")):
        code, _, err = cli("--db", str(db), *command)
        assert code == 2
        assert err.startswith(
            f"iobench: error: no runs are stored yet: there is no database at {db}"
        )
    assert not db.parent.exists()


def test_a_new_database_is_marked_as_iobenchs(tmp_path: Path) -> None:
    db = tmp_path / "new" / "r.db"
    Store.open(db).close()
    assert _sql(db, "PRAGMA application_id") == [(APPLICATION_ID,)]
    assert db.read_bytes()[68:72] == b"iobn"


def _unmarked(db: Path, version: int) -> None:
    """A database as an iobench from before application_id made it: schema ``version``."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(";".join(MIGRATIONS[:version]) + f";PRAGMA user_version = {version};")
    conn.execute(
        "INSERT INTO runs (uuid, status, suite, suite_json, label, argv_json, host_json,"
        " iobench_version, started_at) VALUES ('u1', 'complete', 'quick', '{}', 'old', '[]',"
        " '{}', '0.1.0', '2026-01-01T00:00:00Z')"
    )
    conn.close()


def test_an_unmarked_database_of_the_current_schema_is_read_unchanged_and_marked_on_write(
    cli: Cli, tmp_path: Path
) -> None:
    db = tmp_path / "r.db"
    _unmarked(db, SCHEMA_VERSION)
    before = _listing(tmp_path)
    code, out, _ = cli("--db", str(db), "list", "--json")
    assert code == 0
    assert [r["label"] for r in json.loads(out)["runs"]] == ["old"]
    assert _listing(tmp_path) == before, "reading marked or otherwise wrote the file"
    assert cli("--db", str(db), "import", FIO_OUTPUT)[0] == 0
    assert _sql(db, "PRAGMA application_id") == [(APPLICATION_ID,)]


def test_an_older_schema_is_upgraded_by_a_reader_who_may_write_it(cli: Cli, tmp_path: Path) -> None:
    """The one write a reading command makes (docs/safety.md): without it this iobench
    could not read the database at all."""
    db = tmp_path / "r.db"
    _unmarked(db, 2)
    code, out, _ = cli("--db", str(db), "list", "--json")
    assert code == 0
    assert [r["label"] for r in json.loads(out)["runs"]] == ["old"]
    assert _sql(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert _sql(db, "PRAGMA application_id") == [(APPLICATION_ID,)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.db"]


def test_a_reader_shows_a_dead_run_as_aborted_without_writing_it(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with Store.open(db) as store:
        run_id = store.create_run(
            suite="quick", suite_def={}, label=None, argv=[], host={}, iobench_version="0",
            targets=[],
        )  # fmt: skip
    conn = sqlite3.connect(db)
    conn.execute("UPDATE runs SET pid = ? WHERE id = ?", (2**22 + 12345, run_id))
    conn.commit()
    conn.close()
    before = _listing(tmp_path)
    code, out, _ = cli("--db", str(db), "show", str(run_id), "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["status"] == "aborted"
    assert "(pid 4206649) ended without finishing this run" in doc["error"]
    assert _listing(tmp_path) == before
    assert _sql(db, "SELECT status FROM runs") == [("running",)]
    Store.open(db).close()  # a writer records it
    assert _sql(db, "SELECT status FROM runs") == [("aborted",)]


def test_a_path_with_characters_special_to_uris_works(cli: Cli, tmp_path: Path) -> None:
    """SQLite is given a file: URI; ?, #, % and spaces in the path must stay the path."""
    db = tmp_path / "a b#c?d%20e" / "r.db"
    assert cli("--db", str(db), "import", FIO_OUTPUT)[0] == 0
    code, out, _ = cli("--db", str(db), "list", "--json")
    assert (code, len(json.loads(out)["runs"])) == (0, 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a b#c?d%20e"]
    assert sorted(p.name for p in db.parent.iterdir()) == ["r.db"]


def test_an_immutable_read_that_meets_a_writer_says_so(tmp_path: Path) -> None:
    """A reader without a -wal reads the file without locks; if a writer changes it
    meanwhile and the read fails, the message says so instead of calling it damaged."""
    db = tmp_path / "r.db"
    _populate(db)
    with Store.open(db, readonly=True) as reader:
        damaged = sqlite3.DatabaseError("database disk image is malformed")
        assert "changed" not in reader._error(damaged).message
        with Store.open(db) as writer:
            writer.finish_run(1, status="failed", fio_version=None, warnings=[])
            error = reader._error(damaged)
    assert (error.message, error.hint) == (
        f"{db} changed while it was being read (another iobench wrote to it)",
        "run the command again",
    )


# -- read-only use by a user who may not write the database ---------------------------------

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
Nobody = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def as_nobody() -> Nobody:
    """Run the CLI as uid/gid 65534 (nobody), a real process, with this checkout's code."""
    if os.geteuid() != 0:
        pytest.skip("switching to uid 65534 needs root")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(Path(iobench.__file__).resolve().parents[1]),
        "LANG": "C.UTF-8",
        "HOME": "/nonexistent",
    }
    check = subprocess.run(
        [*NOBODY, sys.executable, "-c", "import iobench.cli"],
        env=env,
        capture_output=True,
        text=True,
        cwd="/",
    )
    if check.returncode:
        pytest.skip(f"uid 65534 cannot run {sys.executable} with iobench: {check.stderr[-300:]}")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*NOBODY, sys.executable, "-m", "iobench", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
        )

    return run


@pytest.fixture
def root_dir() -> Iterator[Path]:
    """A directory owned by root, mode 0755, that uid 65534 can enter but not write (the
    test's tmp_path is under /tmp/pytest-of-root, which is 0700)."""
    d = Path(tempfile.mkdtemp(prefix="iobench-ro-", dir="/tmp"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d)


@pytest.fixture
def nobody_dir() -> Iterator[Path]:
    """A directory where uid 65534 may write its report."""
    d = Path(tempfile.mkdtemp(prefix="iobench-out-", dir="/tmp"))
    os.chown(d, 65534, 65534)
    d.chmod(0o755)
    yield d
    shutil.rmtree(d)


def _read_only_db(root_dir: Path) -> Path:
    db = root_dir / "r.db"
    _populate(db)
    db.chmod(0o644)
    return db


def test_a_database_the_user_may_only_read_can_be_read(
    as_nobody: Nobody, root_dir: Path, nobody_dir: Path
) -> None:
    db = _read_only_db(root_dir)
    before = _listing(root_dir)
    listed = as_nobody("--db", str(db), "list", "--json")
    assert (listed.returncode, listed.stderr) == (0, "")
    assert [r["run_id"] for r in json.loads(listed.stdout)["runs"]] == [2, 1]
    shown = as_nobody("--db", str(db), "show", "latest", "--json")
    assert (shown.returncode, json.loads(shown.stdout)["label"]) == (0, "setup1")
    exported = as_nobody("--db", str(db), "export", "1")
    assert exported.returncode == 0
    assert exported.stdout.startswith("run_id,label,target,workload")
    compared = as_nobody("--db", str(db), "compare", "1", "2", "--json")
    assert (compared.returncode, json.loads(compared.stdout)["kind"]) == (0, "comparison")
    report = nobody_dir / "r.md"
    reported = as_nobody("--db", str(db), "report", "1", "2", "-o", str(report))
    assert (reported.returncode, reported.stderr) == (0, f"wrote {report} (2 run(s))\n")
    assert _listing(root_dir) == before, "a read-only user's reading left a trace"


def _killed_writer(db: Path) -> None:
    """A process that changes a run and dies before it checkpoints: its -wal and -shm stay."""
    writer = (
        "import os, signal, sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "conn.execute(\"UPDATE runs SET label = 'only-in-the-log' WHERE id = 2\")\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    subprocess.run([sys.executable, "-c", writer, str(db)], check=False, timeout=30)


def test_a_read_only_user_reads_what_a_killed_writer_left_in_the_log(
    as_nobody: Nobody, root_dir: Path
) -> None:
    db = _read_only_db(root_dir)
    _killed_writer(db)
    names = sorted(p.name for p in root_dir.iterdir())
    assert names == ["r.db", "r.db-shm", "r.db-wal"]
    before = _listing(root_dir)
    listed = as_nobody("--db", str(db), "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["label"] for r in json.loads(listed.stdout)["runs"]] == ["only-in-the-log", "setup0"]
    assert _listing(root_dir) == before


def test_a_log_without_its_index_needs_a_user_who_may_write(
    as_nobody: Nobody, root_dir: Path
) -> None:
    db = _read_only_db(root_dir)
    _killed_writer(db)
    Path(f"{db}-shm").unlink()  # as a careless clean-up after the crash leaves it
    assert Path(f"{db}-wal").exists()
    before = _listing(root_dir)
    listed = as_nobody("--db", str(db), "list")
    assert listed.returncode == 1
    assert listed.stderr == (
        f"iobench: error: cannot read {db}: {db}-wal holds changes that are not in the "
        f"database file yet, and reading them needs {db}-shm, which you may not create\n"
        f"  what to do: open it once as a user who may write {root_dir}, e.g. `sudo iobench "
        f"--db {db} list`\n"
    )
    assert _listing(root_dir) == before


def test_a_read_only_user_is_told_an_older_database_needs_an_upgrade(
    as_nobody: Nobody, root_dir: Path
) -> None:
    db = root_dir / "r.db"
    _unmarked(db, 2)
    db.chmod(0o644)
    before = _listing(root_dir)
    listed = as_nobody("--db", str(db), "list")
    assert listed.returncode == 1
    assert listed.stderr == (
        f"iobench: error: {db} has schema 2, older than this iobench's ({SCHEMA_VERSION}); it "
        "must be upgraded before it can be read, and you may not write it\n"
        f"  what to do: run `iobench --db {db} list` once as a user who may write the file "
        "and its directory (e.g. with sudo): that upgrades it\n"
    )
    assert _listing(root_dir) == before


def test_a_read_only_user_cannot_write(as_nobody: Nobody, root_dir: Path) -> None:
    db = _read_only_db(root_dir)
    before = _listing(root_dir)
    for command in (("rm", "1", "--yes"), ("import", FIO_OUTPUT)):
        done = as_nobody("--db", str(db), *command)
        assert done.returncode == 1, command
        assert done.stderr == (
            f"iobench: error: this command writes to the results database {db}, and you may "
            f"not write {db}\n"
            "  what to do: run it as a user who may write the database file and its "
            "directory (e.g. with sudo), or point --db at another file\n"
        )
    assert _listing(root_dir) == before


# -- point 9: iobench rm -----------------------------------------------------------------------


def _counts(db: Path) -> tuple[int, int, int]:
    return (
        _sql(db, "SELECT count(*) FROM runs")[0][0],
        _sql(db, "SELECT count(*) FROM targets")[0][0],
        _sql(db, "SELECT count(*) FROM results")[0][0],
    )


def test_rm_yes_removes_runs_with_their_targets_and_results(cli: Cli, isolated_db: Path) -> None:
    _populate(isolated_db, runs=4, results=3)
    code, out, err = cli("rm", "2", "-1", "--yes")
    assert (code, err) == (0, "")
    assert out == (
        "removed run 2 (quick, 1 target(s), 3 result(s))\n"
        "removed run 4 (quick, 1 target(s), 3 result(s))\n"
    )
    assert [r for (r,) in _sql(isolated_db, "SELECT id FROM runs ORDER BY id")] == [1, 3]
    assert _counts(isolated_db) == (2, 2, 6)
    assert _sql(isolated_db, "SELECT DISTINCT run_id FROM results ORDER BY 1") == [(1,), (3,)]


def test_rm_json_prints_the_removed_runs(cli: Cli, isolated_db: Path) -> None:
    _populate(isolated_db, runs=2, results=2)
    started = _sql(isolated_db, "SELECT uuid, started_at FROM runs WHERE id = 2")[0]
    code, out, _ = cli("rm", "latest", "--yes", "--json")
    assert code == 0
    assert json.loads(out) == {
        "schema_version": 1,
        "kind": "removed",
        "runs": [
            {
                "run_id": 2,
                "uuid": started[0],
                "status": "complete",
                "suite": "quick",
                "label": "setup1",
                "started_at": started[1],
                "targets": ["/mnt/vol"],
                "results": 2,
                "removed_files": [],
                "left_alone": [],
            }
        ],
    }


@pytest.mark.parametrize(
    ("refs", "message"),
    [
        (("1", "99"), "there is no run 99 in {db}"),
        (("1", "-1", "2"), "run 2 is named twice"),
        (("1", "-5"), "no run matches '-5': the database {db} has 2 run(s)"),
        (("1", "one"), "'one' is not a run id"),
    ],
)
def test_rm_checks_every_run_before_removing_any(
    cli: Cli, isolated_db: Path, refs: tuple[str, ...], message: str
) -> None:
    _populate(isolated_db)
    before = _listing(isolated_db.parent)
    code, out, err = cli("rm", *refs, "--yes")
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == "iobench: error: " + message.format(db=isolated_db)
    assert _listing(isolated_db.parent) == before


def test_rm_is_one_transaction(isolated_db: Path) -> None:
    """A failure after some rows are deleted (here: SQLite refuses the last DELETE) leaves
    every row in place."""
    _populate(isolated_db, runs=2)

    def deny_deleting_runs(action: int, table: str | None, *_: Any) -> int:
        refused = action == sqlite3.SQLITE_DELETE and table == "runs"
        return sqlite3.SQLITE_DENY if refused else sqlite3.SQLITE_OK

    with Store.open(isolated_db) as store:
        store._conn.set_authorizer(deny_deleting_runs)
        with pytest.raises(StoreError, match="not authorized"):
            store.remove_runs([1, 2])
    assert _counts(isolated_db) == (2, 2, 4)


def test_rm_without_yes_and_without_a_terminal_lists_and_removes_nothing(
    cli: Cli, isolated_db: Path
) -> None:
    _populate(isolated_db, runs=2, results=3)
    started = _sql(isolated_db, "SELECT started_at FROM runs WHERE id = 1")[0][0]
    before = _listing(isolated_db.parent)
    code, out, err = cli("rm", "1")
    assert (code, out) == (2, "")
    assert err == (
        "iobench rm would remove 1 run(s), with their targets, results and evidence:\n"
        f"  run 1  {started.replace('T', ' ')[:19]}  complete  suite quick  label setup0  "
        "targets /mnt/vol  3 result(s)\n"
        "iobench: error: nothing was removed: rm asks before it removes runs, and stdin is "
        "not a terminal\n"
        "  what to do: add --yes to remove them without asking\n"
    )
    assert _listing(isolated_db.parent) == before


def test_rm_json_needs_yes(cli: Cli, isolated_db: Path) -> None:
    _populate(isolated_db)
    before = _listing(isolated_db.parent)
    code, out, err = cli("rm", "1", "--json")
    assert (code, out) == (2, "")
    assert err.startswith("iobench: error: --json needs --yes: rm asks before it removes")
    assert _listing(isolated_db.parent) == before


@pytest.mark.parametrize(("answer", "removed"), [("y", True), ("n", False), ("", False)])
def test_rm_asks_on_a_terminal(isolated_db: Path, answer: str, removed: bool) -> None:
    """A real terminal (a pty) on stdin: rm lists the run and asks; only "y" removes."""
    _populate(isolated_db, runs=2)
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "iobench", "--db", str(isolated_db), "rm", "1"],
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path(iobench.__file__).parents[1])},
        )
        os.write(controller, f"{answer}\n".encode())
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(terminal)
        os.close(controller)
    assert proc.returncode == 0, err
    assert "iobench rm would remove 1 run(s)" in err
    assert "  run 1  " in err and "Remove 1 run(s)? [y/N]" in err
    if removed:
        assert out == "removed run 1 (quick, 1 target(s), 2 result(s))\n"
        assert _counts(isolated_db) == (1, 1, 2)
    else:
        assert out == ""
        assert err.endswith("Remove 1 run(s)? [y/N]: nothing was removed\n")
        assert _counts(isolated_db) == (2, 2, 4)


def test_rm_refuses_a_run_still_running(cli: Cli, isolated_db: Path) -> None:
    with Store.open(isolated_db) as store:  # this process, alive, is running it
        store.create_run(
            suite="quick", suite_def={}, label=None, argv=[], host={}, iobench_version="0",
            targets=[],
        )  # fmt: skip
    code, _, err = cli("rm", "1", "--yes")
    assert code == 2
    assert err.splitlines()[0] == (
        f"iobench: error: run 1 is still running (iobench process {os.getpid()} on this "
        "host); nothing was removed"
    )
    assert _counts(isolated_db)[0] == 1


BROKEN = [
    ("suite_json", "runs", "{not json"),
    ("host_json", "runs", "[1, 2]"),
    ("argv_json", "runs", "null"),
    ("warnings_json", "runs", '{"a": 1}'),
    ("context_json", "targets", "\x00"),
    ("params_json", "results", "[]"),
    ("metrics_json", "results", "{"),
    ("fio_argv_json", "results", '"fio"'),
    ("samples_json", "results", "1"),
    ("raw_output_z", "results", b"not zlib"),
]


@pytest.mark.parametrize(("column", "table", "value"), BROKEN)
def test_a_run_no_reader_can_read_can_still_be_removed(
    cli: Cli, isolated_db: Path, column: str, table: str, value: Any
) -> None:
    _populate(isolated_db, runs=2)
    key = "id" if table == "runs" else "run_id"
    conn = sqlite3.connect(isolated_db)
    # A 'running' run of a process that died: opening read-write marks it aborted, which
    # reads its suite_json; that must not stop rm either.
    conn.execute("UPDATE runs SET status = 'running', pid = ?, hostname = ? WHERE id = 2",
                 (2**22 + 12345, socket.gethostname()))  # fmt: skip
    conn.execute(f"UPDATE {table} SET {column} = ? WHERE {key} = 2", (value,))
    conn.commit()
    conn.close()
    shown = "show --raw" if column == "raw_output_z" else "show"
    code, _, err = cli(*shown.split(), "2")
    assert code == 1
    notice, _, err = err.partition("\n")  # the dead run is said first, once
    assert notice == (
        f"iobench: run 2 did not finish and is aborted: the iobench process (pid {2**22 + 12345})"
        " ended without finishing this run"
    )
    assert err.startswith(f"iobench: error: run 2 in {isolated_db} cannot be read: its ")
    assert err.endswith(
        "  what to do: remove it with `iobench rm 2`, or restore the database from a backup\n"
    )
    if table != "results":  # list reads runs and targets, not the results' JSON
        assert cli("list")[0] == 1
    code, _, err = cli("rm", "2")  # listed for confirmation, then refused: no terminal
    assert code == 2
    assert "  run 2  " in err and "suite quick  label setup1  targets /mnt/vol  2 result(s)" in err
    code, out, _ = cli("rm", "2", "--yes")
    assert (code, out) == (0, "removed run 2 (quick, 1 target(s), 2 result(s))\n")
    assert _counts(isolated_db) == (1, 1, 2)
    assert cli("show", "1")[0] == 0


def test_rm_lists_control_characters_escaped(cli: Cli, isolated_db: Path) -> None:
    """A label is text from the database: it must not drive the terminal."""
    _populate(isolated_db, runs=1)
    conn = sqlite3.connect(isolated_db)
    conn.execute("UPDATE runs SET label = ?, suite = ? WHERE id = 1", ("a\x1b[2Jb", b"\xffx"))
    conn.commit()
    conn.close()
    code, _, err = cli("rm", "1")
    assert code == 2
    assert "\x1b" not in err
    assert "suite \ufffdx  label a\\x1b[2Jb  targets" in err


WRONG_SHAPES = [
    ("host_json", "runs", '{"hostname": "h", "cpu": "x86"}',
     'host.cpu: must be an object or null, not "x86"'),
    ("warnings_json", "runs", '[{"id": 5}]', "warnings[0]: 'severity' is missing"),
    ("context_json", "targets", '{"block": {"disks": [{"size_bytes": -1}]}}',
     "targets[0].context.block.disks[0].size_bytes: -1 is out of range"),
    ("metrics_json", "results", '{"read": {"iops": NaN}}',
     "its metrics_json holds at read.iops what NaN is not a number JSON allows"),
    ("metrics_json", "results", '{"read": {"iops": 1e999}}',
     "its metrics_json holds at read.iops what 1e999 is not a finite number"),
    ("params_json", "results", '{"bs": "4k"}',
     '].params.bs: must be a whole number or null, not "4k"'),
    ("samples_json", "results", '{"interval_ms": 1000, "read": 3}',
     "].samples.read: must be an object or null, not 3"),
    ("suite_json", "runs", '{"spec": {"spec": "x", "iops": "fast", "bw_bytes": 1}}',
     "suite_def.spec.iops: must be a number"),
    ("suite_json", "runs", '{"name": 5}', "suite_def.name: must be text or null, not 5"),
    ("suite_json", "runs", "[" * 100 + "]" * 100,
     "its suite_json is not valid JSON (it nests deeper than 64 levels)"),
]  # fmt: skip


@pytest.mark.parametrize(("column", "table", "value", "said"), WRONG_SHAPES)
def test_a_stored_run_of_the_wrong_shape_is_named_not_a_crash(
    cli: Cli, isolated_db: Path, column: str, table: str, value: str, said: str
) -> None:
    """Valid JSON of the wrong shape in the database (damaged, or forged): every reader
    names the run and the field, and the run can be removed."""
    _populate(isolated_db, runs=2)
    key = "id" if table == "runs" else "run_id"
    conn = sqlite3.connect(isolated_db)
    conn.execute(f"UPDATE {table} SET {column} = ? WHERE {key} = 2", (value,))
    conn.commit()
    conn.close()
    readers = (("show", "2"), ("export", "2"), ("report", "2", "-o", "-"), ("compare", "1", "2"))
    for args in readers:
        code, _, err = cli(*args)
        assert code == 1, (args, err)
        assert err.startswith(f"iobench: error: run 2 in {isolated_db} cannot be read: "), err
        assert said in err, err
        assert "internal error" not in err
    assert cli("rm", "2", "--yes")[0] == 0
    assert cli("show", "1")[0] == 0
