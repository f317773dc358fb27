"""The documents' envelope (iobench.documents)."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from iobench.documents import VERSIONS, Kind, envelope

DOCS = Path(__file__).parent.parent / "docs" / "json-schema.md"


def test_every_kind_has_its_version_once_as_the_docs_say() -> None:
    assert set(VERSIONS) == set(get_args(Kind))
    assert {k: v for k, v in VERSIONS.items() if v != 1} == {"comparison": 2}
    assert "all are at 1 except `comparison`, at 2" in " ".join(DOCS.read_text().split())
    assert envelope("comparison") == {"schema_version": 2, "kind": "comparison"}
    assert list(envelope("run")) == ["schema_version", "kind"]
