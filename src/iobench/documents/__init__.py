"""Every JSON document iobench prints, exports or reads back (docs/json-schema.md).

Each document starts with the same envelope, ``{"schema_version": N, "kind": KIND}``, made
by :func:`envelope` from the one table of versions below. The modules of this package (and
the one above it that prints):

- :mod:`iobench.documents.run`: the run document, both ways: a stored run's records written
  as the document holds them, and an exported document read back into records (``import``);
- :mod:`iobench.report.printed`: the run and runs documents as commands print them
  (``show --json``, ``run --json``, ``export --format json``, ``list --json``): the stored
  run with what is computed from it (summary, analyses, expectations, spec);
- :mod:`iobench.documents.schema`: the run document's JSON Schema and its check, shared by
  ``import`` and the store (every stored run is checked when it is read).

This package imports no command, no store and no analysis (docs/development.md, "Layers");
the store's own version (the SQLite schema, iobench.store.schema) is another thing.
"""

from __future__ import annotations

from typing import Any, Literal

Kind = Literal[
    "run",
    "runs",
    "comparison",
    "characterization",
    "clients",
    "doctor",
    "specs",
    "suites",
    "info",
    "removed",
]

# Each kind's schema_version, bumped on an incompatible change of that kind, with what
# changed beside it.
VERSIONS: dict[Kind, int] = {
    "run": 1,  # read back by `iobench import` (documents.run): a newer one is refused
    "runs": 1,
    # 2: workloads match on their shape, not their durations (rows[].differs); verdicts
    # "too few repeats" and "not measured" instead of "noise unknown"; cells[].*_test.
    # 3: context[] names the lines `info` shows and every other stored field that differs
    # (io throttles among them), not seven fixed fields; headlines[] (issue 23).
    "comparison": 3,
    "characterization": 1,
    "clients": 1,
    "doctor": 1,
    "specs": 1,
    "suites": 1,
    "info": 1,
    "removed": 1,
}


def envelope(kind: Kind) -> dict[str, Any]:
    """The first two keys of a document of this kind: ``{**envelope("runs"), ...}``."""
    return {"schema_version": VERSIONS[kind], "kind": kind}
