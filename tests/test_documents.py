"""The documents' envelope and the run document's two halves (iobench.documents)."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from iobench.documents import VERSIONS, Kind, envelope
from iobench.documents.run import read_run_document, stored_document
from iobench.importer import import_files
from iobench.report.printed import run_document
from iobench.store import Store

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"
DOCS = Path(__file__).parent.parent / "docs" / "json-schema.md"


def test_every_kind_has_its_version_once_as_the_docs_say() -> None:
    assert set(VERSIONS) == set(get_args(Kind))
    assert {k: v for k, v in VERSIONS.items() if v != 1} == {"comparison": 3}
    assert "all are at 1 except `comparison`, at 3" in " ".join(DOCS.read_text().split())
    assert envelope("comparison") == {"schema_version": 3, "kind": "comparison"}
    assert list(envelope("run")) == ["schema_version", "kind"]


def test_the_stored_part_of_an_export_is_what_the_store_checks_and_import_reads(
    tmp_path: Path,
) -> None:
    with Store.open(tmp_path / "x.db") as store:
        (run_id,) = import_files(
            store, [str(RECORDED / "psync-randrw-fsync-jsonplus.json")], label="l", argv=["x"]
        )
        run = store.get_run(run_id)
    exported = run_document(run, full=True)
    stored = stored_document(run)
    assert {k: exported[k] for k in stored} == stored
    assert set(exported) - set(stored) == {"summary"}  # computed, not stored
    back = read_run_document(exported, "run.json")
    assert back.results == tuple(run.results)  # raw output aside, which is not exported
    assert back.suite_def.as_dict() == {**run.suite_def.as_dict(), "imported_from": {
        "run_id": run.id, "uuid": run.uuid, "origin": "imported", "source": run.source,
        "iobench_version": run.iobench_version}}  # fmt: skip
