"""The run model (iobench.records): a suite definition read from JSON is typed, keeps what
it does not know, and is written back byte for byte, whichever iobench wrote it."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from iobench.errors import StoreError
from iobench.model import Expectation
from iobench.records import ClientsDefinition, RecordError, SuiteDefinition
from iobench.store import Store
from iobench.suites import builtin_names, load_builtin

WORKLOAD = {
    "rw": "randread", "bs": 4096, "iodepth": 1, "numjobs": 1, "ioengine": "libaio",
    "direct": True, "runtime_s": 1.0, "ramp_s": 0.0, "size": 16777216, "rwmixread": None,
    "options": {}, "name": "rr",
}  # fmt: skip
BASE = {
    "name": "quick", "description": "d", "source": "builtin", "indicative": True,
    "workloads": [WORKLOAD], "expectations": [],
}  # fmt: skip

# Every shape a writer of iobench stores, as it stores it (key order included).
SHAPES: dict[str, dict[str, Any]] = {
    "run": BASE,
    "sweep": {
        **BASE,
        "sweep": {"axes": {"rw": ["randread"], "bs": [4096], "iodepth": [1, 4], "numjobs": [1]}},
        "p99_under_ns": 2000000.0,
    },
    "characterize": {
        **BASE,
        "p99_under_ns": None,
        "plan": {"kind": "characterize", "settings": {"budget_s": 40.0}},
    },
    "spec": {
        **BASE,
        "spec": {
            "spec": "aws-gp3",
            "iops": 3000.0,
            "bw_bytes": 131072000.0,
            "tolerance": 0.9,
            "min_outstanding": 16,
        },
    },
    "clients": {
        **BASE,
        "clients": {
            "names": ["10.0.0.2:8765", "10.0.0.3:8765"],
            "scale": [1, 2],
            "files": {"10.0.0.2:8765": "/mnt/x/iobench-1-c1.dat"},
        },
    },
    "imported fio output": {
        "name": "imported",
        "description": "imported from /x.json",
        "source": "/x.json",
        "origin": "imported",
        "client_mode": False,
        "time_source": "timestamp",
        "time_note": "n",
        "global_options": {"filename": "data.bin"},
        "workloads": [
            {
                **WORKLOAD,
                "jobname": "rr",
                "groupid": 0,
                "target": "data.bin",
                "job_options": {},
                "description": None,
            }
        ],
        "messages": [],
        "unknown": ["the job file"],
        "disk_util": [{"name": "vda"}],
    },
    # A document of another iobench, edited: keys in another order, nulls, unknown keys.
    "restored": {
        "workloads": [],
        "name": None,
        "from_the_future": {"x": [1]},
        "spec": None,
        "source": "s",
        "p99_under_ns": 1000000,
        "clients": {"names": [], "files": {}, "new": True},
        "imported_from": {"uuid": "u", "run_id": 3, "other": "o"},
    },
}


def _text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize("shape", SHAPES)
def test_a_stored_suite_definition_is_written_back_byte_for_byte(shape: str) -> None:
    stored = _text(SHAPES[shape])
    assert _text(SuiteDefinition.from_dict(json.loads(stored)).as_dict()) == stored


@pytest.mark.parametrize("shape", ["run", "sweep", "spec", "clients", "imported fio output"])
def test_a_record_built_from_its_fields_is_written_in_the_order_its_writer_uses(
    shape: str,
) -> None:
    """The declared order of the keys is every writer's order (a null is not written)."""
    built = dataclasses.replace(SuiteDefinition.from_dict(SHAPES[shape]), key_order=())
    assert _text(built.as_dict()) == _text(SHAPES[shape])


def test_what_readers_need_is_typed_and_what_is_unknown_is_kept() -> None:
    d = SuiteDefinition.from_dict(SHAPES["restored"])
    assert d.name is None and d.source == "s" and d.workloads == ()
    assert d.p99_under_ns == 1000000 and isinstance(d.p99_under_ns, int)  # written as read
    assert d.clients == ClientsDefinition(names=(), files={}, extra={"new": True})
    assert d.imported_from is not None and d.imported_from.uuid == "u"
    assert d.imported_from.extra == {"other": "o"}
    assert d.extra == {"from_the_future": {"x": [1]}}
    plan = SuiteDefinition.from_dict(SHAPES["characterize"]).plan
    assert plan is not None and plan.kind == "characterize"


def test_keys_set_later_follow_the_keys_read() -> None:
    d = dataclasses.replace(SuiteDefinition.from_dict(SHAPES["restored"]), indicative=True)
    assert list(d.as_dict())[-1] == "indicative"
    assert dataclasses.replace(d, extra={}).as_dict().get("from_the_future") is None


@pytest.mark.parametrize(
    ("stored", "where", "what"),
    [
        ({"name": 5}, "name", "must be text or null, not 5"),
        ({"indicative": "yes"}, "indicative", 'must be true or false or null, not "yes"'),
        ({"workloads": {"a": 1}}, "workloads", "must be a list or null, not an object"),
        ({"workloads": [None]}, "workloads[0]", "must be an object, not null"),
        ({"p99_under_ns": True}, "p99_under_ns", "must be a number or null, not true"),
        ({"clients": {"names": ["a", 2]}}, "clients.names[1]", "must be text, not 2"),
        ({"clients": {"files": {"a": 1}}}, "clients.files.a", "must be text, not 1"),
        ({"plan": []}, "plan", "must be an object, not a list"),
    ],
)
def test_a_value_of_the_wrong_type_is_named(stored: dict[str, Any], where: str, what: str) -> None:
    with pytest.raises(RecordError) as e:
        SuiteDefinition.from_dict(stored)
    assert (e.value.where, e.value.what) == (where, what)


@pytest.mark.parametrize("name", builtin_names())
def test_of_suite_is_what_a_run_stores(name: str) -> None:
    """What every run of iobench's stores as its suite_def (as benchmark.suite_definition
    wrote it before the redesign), byte for byte."""
    suite = dataclasses.replace(
        load_builtin(name),
        expectations=(Expectation("x.read.iops>=1", "x", "read", "iops", ">=", 1.0),),
    )
    expected = _text(
        {
            "name": suite.name,
            "description": suite.description,
            "source": suite.source,
            "indicative": suite.indicative,
            "workloads": [dict(w.params, name=w.name) for w in suite.workloads],
            "expectations": [dataclasses.asdict(e) for e in suite.expectations],
        }
    )
    assert _text(SuiteDefinition.of_suite(suite).as_dict()) == expected
    assert _text(SuiteDefinition.from_dict(json.loads(expected)).as_dict()) == expected


def _create(store: Store, suite_def: Any) -> int:
    return store.create_run(
        suite="quick", suite_def=suite_def, label=None, argv=[], host={},
        iobench_version="0", targets=[],
    )  # fmt: skip


def _suite_json(db: Path, run_id: int) -> str:
    conn = sqlite3.connect(db)
    (text,) = conn.execute("SELECT suite_json FROM runs WHERE id = ?", (run_id,)).fetchone()
    conn.close()
    return str(text)


def test_the_store_takes_a_dict_or_a_record_and_stores_the_same(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    with Store.open(db) as store:
        from_dict = _create(store, SHAPES["sweep"])
        from_record = _create(store, SuiteDefinition.from_dict(SHAPES["sweep"]))
        typed = store.get_run(from_dict).suite_def
    assert _suite_json(db, from_dict) == _suite_json(db, from_record) == _text(SHAPES["sweep"])
    assert typed.sweep is not None and typed.p99_under_ns == 2000000.0


def test_a_stored_suite_definition_of_the_wrong_type_names_the_run(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    with Store.open(db) as store:
        _create(store, BASE)
    conn = sqlite3.connect(db)
    conn.execute("""UPDATE runs SET suite_json = '{"clients": {"names": 7}}'""")
    conn.commit()
    conn.close()
    with Store.open(db) as store:
        for read in (lambda: store.get_run(1), lambda: store.list_runs()):
            with pytest.raises(StoreError) as e:
                read()
            assert e.value.message == (
                f"run 1 in {db} cannot be read: suite_def.clients.names: must be a list or "
                "null, not 7"
            )
