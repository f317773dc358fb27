"""Schema migrations, applied in order; ``PRAGMA user_version`` holds how many ran."""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: runs, their targets, and one row per workload x target with its raw evidence.
    """
    CREATE TABLE runs (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        uuid            TEXT NOT NULL UNIQUE,
        status          TEXT NOT NULL
                        CHECK (status IN ('running', 'complete', 'aborted', 'failed')),
        suite           TEXT NOT NULL,
        suite_json      TEXT NOT NULL,
        label           TEXT,
        argv_json       TEXT NOT NULL,
        host_json       TEXT NOT NULL,
        fio_version     TEXT,
        iobench_version TEXT NOT NULL,
        warnings_json   TEXT NOT NULL DEFAULT '[]',
        error           TEXT,
        started_at      TEXT NOT NULL,
        finished_at     TEXT,
        pid             INTEGER,
        hostname        TEXT
    );
    CREATE TABLE targets (
        run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        position     INTEGER NOT NULL,
        spec         TEXT NOT NULL,
        path         TEXT NOT NULL,
        kind         TEXT NOT NULL,
        size_bytes   INTEGER,
        context_json TEXT NOT NULL,
        PRIMARY KEY (run_id, position)
    );
    CREATE TABLE results (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        target        TEXT NOT NULL,
        workload      TEXT NOT NULL,
        position      INTEGER NOT NULL,
        status        TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
        params_json   TEXT NOT NULL,
        metrics_json  TEXT,
        job_file      TEXT NOT NULL,
        fio_argv_json TEXT NOT NULL,
        fio_rc        INTEGER,
        fio_version   TEXT,
        raw_output_z  BLOB,      -- fio's output file, zlib-compressed (snapshots + final)
        fio_stdout    TEXT,
        fio_stderr    TEXT,
        error         TEXT,
        started_at    TEXT NOT NULL,
        finished_at   TEXT NOT NULL
    );
    CREATE INDEX results_run ON results(run_id, position);
    CREATE INDEX runs_label ON runs(label);
    """,
    # 2: repetitions of a workload, per-second samples, and runs imported from fio files.
    """
    ALTER TABLE results ADD COLUMN repetition INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE results ADD COLUMN samples_json TEXT;
    ALTER TABLE runs ADD COLUMN origin TEXT NOT NULL DEFAULT 'run';
    ALTER TABLE runs ADD COLUMN source TEXT;
    CREATE INDEX runs_origin ON runs(origin)
    """,
    # 3: many clients at once. A result names the client it ran on (the address the user
    # gave; "all" for the aggregate; NULL on one host) and how many clients ran the step;
    # a run some of whose clients failed is 'partial'. SQLite cannot change a CHECK, so the
    # runs table is rebuilt (Store._migrate turns foreign keys off around it).
    """
    ALTER TABLE results ADD COLUMN client TEXT;
    ALTER TABLE results ADD COLUMN clients INTEGER;
    CREATE TABLE runs_new (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        uuid            TEXT NOT NULL UNIQUE,
        status          TEXT NOT NULL
                        CHECK (status IN ('running', 'complete', 'partial', 'aborted', 'failed')),
        suite           TEXT NOT NULL,
        suite_json      TEXT NOT NULL,
        label           TEXT,
        argv_json       TEXT NOT NULL,
        host_json       TEXT NOT NULL,
        fio_version     TEXT,
        iobench_version TEXT NOT NULL,
        warnings_json   TEXT NOT NULL DEFAULT '[]',
        error           TEXT,
        started_at      TEXT NOT NULL,
        finished_at     TEXT,
        pid             INTEGER,
        hostname        TEXT,
        origin          TEXT NOT NULL DEFAULT 'run',
        source          TEXT
    );
    INSERT INTO runs_new (id, uuid, status, suite, suite_json, label, argv_json, host_json,
        fio_version, iobench_version, warnings_json, error, started_at, finished_at, pid,
        hostname, origin, source)
        SELECT id, uuid, status, suite, suite_json, label, argv_json, host_json, fio_version,
        iobench_version, warnings_json, error, started_at, finished_at, pid, hostname,
        origin, source FROM runs;
    DROP TABLE runs;
    ALTER TABLE runs_new RENAME TO runs;
    CREATE INDEX runs_label ON runs(label);
    CREATE INDEX runs_origin ON runs(origin)
    """,
    # 4: proof of life and what a run leaves behind. A pid is reused once its process ends,
    # so the process is also named by its start (boot id and start time, probe/process.py);
    # a run lists the files and directories it has made on this host until it has removed
    # them, so that a run whose iobench was killed can say what it left, and `iobench rm`
    # can remove it.
    """
    ALTER TABLE runs ADD COLUMN proc_start TEXT;
    ALTER TABLE runs ADD COLUMN leftovers_json TEXT NOT NULL DEFAULT '[]'
    """,
    # 5: workloads of several jobs run together (issue 24): each part's name, parameters,
    # metrics and samples beside the group's own (NULL: one job).
    """
    ALTER TABLE results ADD COLUMN parts_json TEXT
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)
