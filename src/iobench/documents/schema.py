"""The JSON Schema of the documents iobench reads back, and its check.

``run-document.schema.json`` (beside this module) describes a run document (``export
--format json``, ``show --json``): every field iobench reads, with its type and range, so
that a document that passes cannot make a reader fail. What JSON Schema cannot say is
checked in :func:`check_run_document` too: dates that exist (between 1970 and 2100).
"""

from __future__ import annotations

import json
import re
from collections import deque
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

import fastjsonschema
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError, best_match

_TIME = re.compile(
    r"^(19[7-9][0-9]|20[0-9]{2}|2100)-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
    r"(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$"
)
_FORMATS = FormatChecker(formats=())


@_FORMATS.checks("date-time")
def _is_time(value: object) -> bool:
    """ISO 8601 with a time zone, as iobench writes it, of a date that exists."""
    if not isinstance(value, str) or not _TIME.match(value):
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


@cache
def _validator(name: str, formats: bool = True) -> Draft202012Validator:
    text = resources.files("iobench.documents").joinpath(f"{name}.schema.json").read_text("utf-8")
    return Draft202012Validator(json.loads(text), format_checker=_FORMATS if formats else None)


def where(path: deque[str | int] | list[str | int]) -> str:
    """``results[0].read.iops`` for a path of keys and indexes."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the top level"


_KINDS = {
    "integer": "a whole number",
    "number": "a number",
    "string": "text",
    "object": "an object",
    "array": "a list",
    "boolean": "true or false",
    "null": "null",
}


def _names(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _describe(error: ValidationError) -> str:
    value = error.instance
    if isinstance(value, dict | list):
        shown = "an object" if isinstance(value, dict) else "a list"
    else:
        try:
            shown = json.dumps(value)[:60]
        except (TypeError, ValueError):  # bytes, from a database cell
            shown = repr(value)[:60]
    kinds: list[str] = []
    if error.validator == "type":
        kinds = _names(error.validator_value)
    elif error.validator in ("oneOf", "anyOf"):  # e.g. null or an object
        for sub in error.context or ():
            if sub.validator == "type" and not sub.relative_path:
                kinds += _names(sub.validator_value)
    if kinds:
        return f"must be {' or '.join(_KINDS.get(k, k) for k in dict.fromkeys(kinds))}, not {shown}"
    if error.validator == "required":
        return str(error.message).replace("is a required property", "is missing")
    if error.validator in ("minimum", "exclusiveMinimum", "maximum"):
        return f"{shown} is out of range ({error.validator} {error.validator_value})"
    if error.validator == "format":
        return f"{shown} is not a date and time between 1970 and 2100 (ISO 8601 with a zone)"
    if error.validator in ("enum", "const"):
        allowed = error.validator_value
        allowed = allowed if isinstance(allowed, list) else [allowed]
        return f"{shown} is not one of {', '.join(json.dumps(a) for a in allowed)}"
    if error.validator == "pattern":
        return f"{shown} is not a name allowed here"
    if error.validator == "minLength":
        return "must not be empty"
    return str(error.message)[:120]


# A document is first checked by fastjsonschema's compiled checker when it has this many
# results or more, or when this process has already checked this many results in all
# (compiling the checker takes ~0.25 s once; it then checks ~20 times as fast as jsonschema,
# which takes ~10 ms for a run of two results and took 20 s of `show` for one of 336).
# `iobench run` checks its run twice (its findings, then what it shows): with jsonschema
# alone, 20 ms instead of the 0.25 s of compiling. jsonschema still finds and words any
# problem. tests/test_documents.py holds both to the same verdicts.
FAST_FROM_RESULTS = 8
_CHECKED = [0]  # results of the documents checked in this process so far


@cache
def _fast(dates: bool) -> Any:
    text = resources.files("iobench.documents").joinpath("run-document.schema.json")
    return fastjsonschema.compile(
        json.loads(text.read_text("utf-8")),
        formats={"date-time": _is_time if dates else (lambda _: True)},
        use_default=False,
    )


def fast_valid(doc: Any, *, dates: bool = True) -> bool:
    """Whether fastjsonschema's checker finds the document valid."""
    try:
        _fast(dates)(doc)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


def check_run_document(doc: Any, *, dates: bool = True) -> tuple[str, str] | None:
    """(where, what is wrong) for the most telling problem of a run document; None if
    it has none. ``where`` reads ``results[0].read.lat_ns.n``. ``dates=False`` leaves
    the form of dates unchecked (a stored run's dates are shown as they are)."""
    results = doc.get("results") if isinstance(doc, dict) else None
    count = len(results) if isinstance(results, list) else 0
    fast = _CHECKED[0] >= FAST_FROM_RESULTS or count >= FAST_FROM_RESULTS
    _CHECKED[0] += max(count, 1)
    if fast and fast_valid(doc, dates=dates):
        return None
    return worded_problem(doc, dates=dates)


def worded_problem(doc: Any, *, dates: bool = True) -> tuple[str, str] | None:
    """jsonschema's verdict on a run document, and its most telling problem in words."""
    error = best_match(_validator("run-document", dates).iter_errors(doc))
    if error is None:
        return None
    return where(error.absolute_path), _describe(error)
