"""JSON from outside (fio output, exported run documents), read defensively.

- **Finding** the JSON objects in text with anything around them (fio's messages, a shell
  prompt) takes time linear in the text's size, whatever the text: every ``{`` is matched
  with its ``}`` by one lexical pass that remembers what it learnt, and an object is decoded
  only when its braces balance (:func:`scan_objects`).
- **Nesting** deeper than :data:`MAX_DEPTH` (no fio report or iobench document comes near
  it) is not decoded: Python's decoder would recurse until it fails.
- **Numbers** that JSON forbids or iobench cannot store (``NaN``, ``Infinity``, ``1e400``,
  integers beyond a signed 64-bit one) and text that is not valid Unicode (a lone surrogate
  such as ``"\\ud800"``, which no database or terminal takes) decode to :class:`Bad` markers,
  which :func:`first_bad` finds with their place (``jobs[0].read.iops``), so that an error can
  name the field instead of a traceback.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 64
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1  # what SQLite (and every fio count) holds
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]"]')
_SURROGATE = re.compile("[\ud800-\udfff]")
_CLOSER = {"}": "{", "]": "["}


class Bad:
    """A value JSON text held that iobench does not take, kept as the text it was."""

    __slots__ = ("text", "why")

    def __init__(self, text: str, why: str) -> None:
        self.text = text[:40] + ("..." if len(text) > 40 else "")
        self.why = why

    def __repr__(self) -> str:
        return self.text


def _integer(text: str) -> int | Bad:
    # Digits are counted first: int() of thousands of them is slow, or refused.
    if len(text.lstrip("-")) > 20 or not _INT_MIN <= int(text) <= _INT_MAX:
        return Bad(text, "is an integer beyond 64 bits (signed)")
    return int(text)


def _real(text: str) -> float | Bad:
    value = float(text)
    return value if math.isfinite(value) else Bad(text, "is not a finite number")


def _constant(text: str) -> Bad:
    return Bad(text, "is not a number JSON allows")


def decoder(object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """A json.JSONDecoder that turns forbidden numbers into :class:`Bad` markers."""
    return json.JSONDecoder(
        parse_int=_integer,
        parse_float=_real,
        parse_constant=_constant,
        object_pairs_hook=object_pairs_hook or _keep_last,
    )


def _keep_last(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # fio's client mode repeats keys inside one "global options" object (one set per
    # server, fio < 3.39); JSON allows it, and the last value wins.
    return dict(pairs)


_DECODER = decoder()


class TooDeep(ValueError):
    """JSON nested deeper than MAX_DEPTH."""


def load(text: str) -> Any:
    """One JSON document (the whole text); ValueError when it is not JSON, TooDeep when it
    nests deeper than MAX_DEPTH. Forbidden values become :class:`Bad` markers."""
    start = len(text) - len(text.lstrip())
    if text[start : start + 1] in ("{", "["):
        end, depth = _Lexer(text).span(start)
        if depth > MAX_DEPTH:
            raise TooDeep(f"it nests deeper than {MAX_DEPTH} levels")
        if end < 0:
            raise ValueError("the JSON does not end")
    return _DECODER.decode(text)


def scan_objects(
    text: str, *, cost: dict[str, int] | None = None
) -> list[tuple[int, int, dict[str, Any]]]:
    """(start, end, object) for every top-level JSON object in ``text``, in order.

    Each ``{`` is a candidate start; text that is not JSON is skipped, and after a
    complete object the scan goes on behind it (objects nested in it are not returned).
    Objects nested in an object that does not decode may be returned; select by keys.
    Linear in ``len(text)``: the lexer's work is bounded by a budget of a few passes, and
    an object is decoded only when it balances, at most MAX_DEPTH times per character.
    ``cost``, when given, receives the work done: characters ``walked`` by the lexer and
    characters handed to the ``decoded`` decoder (for tests and benchmarks).
    """
    lexer = _Lexer(text)
    found: list[tuple[int, int, dict[str, Any]]] = []
    decoded = 0
    pos = text.find("{")
    while pos != -1:
        end, depth = lexer.span(pos)
        if end > 0 and depth <= MAX_DEPTH:
            decoded += end - pos
            try:
                obj, stop = _DECODER.raw_decode(text, pos)
            except (ValueError, RecursionError):
                obj, stop = None, -1
            if isinstance(obj, dict) and stop == end:
                found.append((pos, end, obj))
                pos = text.find("{", end)
                continue
        if lexer.exhausted:
            break
        pos = text.find("{", pos + 1)
    if cost is not None:
        cost.update(walked=lexer.walked, decoded=decoded)
    return found


class _Lexer:
    """Matches brackets outside JSON strings, remembering every bracket it has seen.

    From a ``{`` it walks forward over strings (which JSON keeps on one line) and brackets
    until the ``{`` closes, a bracket does not match, or the text ends. Every ``{`` met on
    the way outside a string gets its answer too, because from there the walk would see
    the very same tokens: ``span`` is then a lookup, and the text is walked about once.
    ``budget`` bounds the work against texts crafted to defeat that.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.known: dict[int, tuple[int, int]] = {}  # "{" -> (end or -1, depth within)
        self.budget = 8 * len(text) + (1 << 16)
        self.walked = 0  # characters walked over, in all
        self.exhausted = False

    def span(self, start: int) -> tuple[int, int]:
        """(end of the object starting at ``start``, or -1; how deep it nests)."""
        if start in self.known:
            return self.known[start]
        if self.exhausted:
            return -1, 0
        stack: list[list[Any]] = []  # [position, bracket, deepest nesting below]
        pos = start
        result: tuple[int, int] | None = None
        for m in _TOKEN.finditer(self.text, start):
            token = m.group()
            self.walked += m.end() - pos
            pos = m.end()
            if self.walked > self.budget:
                self.exhausted = True
                break
            if token[0] == '"':
                if len(token) == 1:  # a string that does not end on its line
                    break
                if not stack:
                    break  # outside any object: not where a candidate starts
                continue
            if token in "{[":
                stack.append([m.start(), token, 0])
                continue
            if not stack or stack[-1][1] != _CLOSER[token]:
                break
            opened, bracket, below = stack.pop()
            depth = below + 1
            if bracket == "{":
                self.known[opened] = (m.end(), depth)
            if stack:
                stack[-1][2] = max(stack[-1][2], depth)
            else:
                result = (m.end(), depth)
                break
        for opened, bracket, _ in stack:  # never closed, from here or from anywhere in it
            if bracket == "{":
                self.known.setdefault(opened, (-1, 0))
        if result is None:
            self.known.setdefault(start, (-1, 0))
            return self.known[start]
        return result


def nesting_depth(text: str) -> int:
    """How deep brackets nest in ``text`` outside JSON strings (one pass)."""
    depth = deepest = 0
    for m in _TOKEN.finditer(text):
        token = m.group()
        if token in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "}]":
            depth = max(depth - 1, 0)
    return deepest


def first_bad(value: Any, path: str = "") -> tuple[str, str] | None:
    """(where, what) of the first value :func:`decoder` marked, or of text that is not
    valid Unicode; None when there is none. ``where`` reads ``jobs[0].read.iops``."""
    todo: list[tuple[str, Any]] = [(path, value)]
    while todo:
        where, item = todo.pop()
        if isinstance(item, Bad):
            return where or "the top level", f"{item.text} {item.why}"
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return where or "the top level", "holds text that is not valid Unicode"
        elif isinstance(item, dict):
            for key, sub in reversed(list(item.items())):
                if _SURROGATE.search(key):
                    return where or "the top level", "has a key that is not valid Unicode"
                todo.append((f"{where}.{key}" if where else key, sub))
        elif isinstance(item, list):
            todo.extend((f"{where}[{i}]", sub) for i, sub in reversed(list(enumerate(item))))
    return None
