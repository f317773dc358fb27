"""`iobench import` of an iobench run document (`export --format json`, `show --json`):
what comes back, and the clear errors for documents it cannot read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.documents.run import read_run_document
from iobench.errors import UserError
from iobench.export import export_json
from iobench.importer import import_files
from iobench.report.printed import run_document
from iobench.store import Store

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"


@pytest.fixture
def exported(tmp_path: Path) -> dict[str, Any]:
    """A run (fio output with histograms, imported) exported as JSON, in its own database."""
    with Store.open(tmp_path / "source.db") as store:
        (run_id,) = import_files(
            store,
            [str(RECORDED / "psync-randrw-fsync-jsonplus.json")],
            label="src",
            argv=["iobench"],
        )
        doc: dict[str, Any] = json.loads(export_json(store.get_run(run_id)))
    return doc


def test_the_document_gives_back_the_run_as_it_was(exported: dict[str, Any]) -> None:
    run = read_run_document(exported, "run.json")
    assert (run.suite, run.label, run.status) == ("imported", "src", exported["status"])
    assert run.started_at == exported["started_at"]
    assert run.finished_at == exported["finished_at"]
    assert run.original_uuid == exported["uuid"]
    assert run.suite_def.imported_from is not None
    assert run.suite_def.imported_from.uuid == exported["uuid"]
    # The suite definition is stored as the document held it, imported_from added at its end.
    assert list(run.suite_def.as_dict().items()) == list(
        {
            **exported["suite_def"],
            "imported_from": {
                "run_id": exported["run_id"],
                "uuid": exported["uuid"],
                "origin": "imported",
                "source": exported["source"],
                "iobench_version": exported["iobench_version"],
            },
        }.items()
    )
    (result,) = run.results
    assert result.metrics is not None
    assert result.metrics["read"] == exported["results"][0]["read"]
    assert result.metrics["read"]["clat_ns"]["bins"], "histograms come back"
    assert result.raw_output is None  # fio's raw output is not exported


def test_a_show_document_imports_without_histograms(tmp_path: Path, cli: Cli) -> None:
    with Store.open(tmp_path / "source.db") as store:
        (run_id,) = import_files(
            store, [str(RECORDED / "libaio-randread-4k-qd8-jsonplus.json")], label=None, argv=[]
        )
        shown = run_document(store.get_run(run_id))
    path = tmp_path / "shown.json"
    path.write_text(json.dumps(shown))
    code, out, err = cli("import", str(path), "--label", "again", "--json")
    assert code == 0, err
    (run,) = json.loads(out)["runs"]
    assert run["label"] == "again" and run["origin"] == "imported"
    code, out, _ = cli("show", str(run["run_id"]), "--json")
    back = json.loads(out)
    assert back["results"][0]["read"] == shown["results"][0]["read"]
    assert back["summary"] == shown["summary"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"schema_version": 9}, "is an iobench run document of schema 9; this iobench reads"),
        ({"status": "done"}, 'status: "done" is not one of "running", "complete", "partial"'),
        ({"targets": "x"}, 'targets: must be a list, not "x"'),
        ({"results": [{"workload": "w"}]}, "results[0]: 'target' is missing"),
        ({"results": [7]}, "results[0]: must be an object, not 7"),
        ({"warnings": ["w"]}, 'warnings[0]: must be an object, not "w"'),
        ({"argv": 5}, "argv: must be a list or null, not 5"),
        ({"suite_def": "abc"}, 'suite_def: must be null or an object, not "abc"'),
    ],
)
def test_a_broken_document_is_named_and_nothing_is_stored(
    exported: dict[str, Any], tmp_path: Path, cli: Cli, change: dict[str, Any], message: str
) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(exported))
    bad.write_text(json.dumps({**exported, **change}))
    code, out, err = cli("import", str(good), str(bad))
    assert code == 2
    assert f"iobench: error: {bad}" in err and message in err
    assert "Traceback" not in err
    code, out, err = cli("list", "--json")
    assert (code, json.loads(out)["runs"]) == (0, []), "nothing was imported"


def test_a_result_with_a_wrong_number_is_refused(exported: dict[str, Any]) -> None:
    exported["results"][0]["read"]["iops"] = "many"
    with pytest.raises(UserError, match=r'results\[0\]\.read\.iops: must be a number, not "many"'):
        read_run_document(exported, "x.json")


def test_the_same_run_in_two_files_is_refused(
    exported: dict[str, Any], tmp_path: Path, cli: Cli
) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(exported))
    b.write_text(json.dumps(exported))
    code, _, err = cli("import", str(a), str(b))
    assert code == 2
    assert f"{b} and {a} hold the same run (uuid {exported['uuid']})" in err


def _first(doc: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = doc["results"][0]
    return result


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r.update(fio_argv=5), r"results\[0\]\.fio_argv: must be a list or null, not 5"),
        (lambda r: r.update(repetition=0), r"results\[0\]\.repetition: 0 is out of range"),
        (
            lambda r: r.update(samples={"interval_ms": 1000, "read": {"t_s": [1, 2]}}),
            r"results\[0\]\.samples\.read: 'iops' is missing",
        ),
        (
            lambda r: r.update(
                samples={
                    "interval_ms": 1000,
                    "read": {"t_s": [1], "iops": [1, 2], "bw_bytes": [1], "lat_mean_ns": [1]},
                }
            ),
            r"'iops' has 2 values for 1 seconds",
        ),
    ],
)
def test_a_broken_result_is_named(exported: dict[str, Any], edit: Any, message: str) -> None:
    edit(_first(exported))
    with pytest.raises(UserError, match=message):
        read_run_document(exported, "x.json")


def test_a_result_given_twice_is_refused(exported: dict[str, Any]) -> None:
    exported["results"].append(dict(_first(exported)))
    with pytest.raises(UserError, match=r"results\[1\]: repeats results\[0\]"):
        read_run_document(exported, "x.json")


def test_nan_is_refused_and_key_order_does_not_matter(
    exported: dict[str, Any], tmp_path: Path, cli: Cli
) -> None:
    # Re-serialised with sorted keys ("kind" far from the start): still a run document.
    sorted_keys = tmp_path / "sorted.json"
    sorted_keys.write_text(json.dumps(exported, sort_keys=True, indent=1))
    code, out, err = cli("import", str(sorted_keys), "--json")
    assert code == 0, err
    assert json.loads(out)["runs"][0]["label"] == "src"
    _first(exported)["read"]["iops"] = float("nan")
    nan = tmp_path / "nan.json"
    nan.write_text(json.dumps(exported))
    code, _, err = cli("import", str(nan))
    assert code == 2
    assert f"{nan}: results[0].read.iops: NaN is not a number JSON allows" in err


def test_a_run_exported_while_running_comes_back_aborted(exported: dict[str, Any]) -> None:
    exported["status"] = "running"
    run = read_run_document(exported, "x.json")
    assert run.status == "aborted"
    assert run.error == "the run had not finished when it was exported"


def test_a_run_is_recognised_after_passing_through_another_database(
    exported: dict[str, Any], tmp_path: Path, cli: Cli
) -> None:
    """source -> A (imported) -> exported again -> back into A: the same measurement."""
    first = tmp_path / "first.json"
    first.write_text(json.dumps(exported))
    db_a = str(tmp_path / "a.db")
    assert cli("--db", db_a, "import", str(first))[0] == 0
    second = tmp_path / "second.json"
    assert cli("--db", db_a, "export", "1", "--format", "json", "-o", str(second))[0] == 0
    assert (
        json.loads(second.read_text())["suite_def"]["imported_from"]["uuid"] == (exported["uuid"])
    )
    code, _, err = cli("--db", db_a, "import", str(second))
    assert code == 2
    assert "already in this database as run 1" in err
