"""Strings from data, shown as they are: never as markup, never as terminal commands.

Labels, paths, workload and host names, fio versions, error messages and the context of a
run come from files, databases and fio servers that may be hostile, and iobench often runs
as root. So before a data string reaches the terminal:

- every character a terminal acts on instead of showing (C0 and C1 control characters,
  DEL: ESC sequences, the single-byte CSI ``\\x9b``, BEL, backspace, carriage return) and
  every invisible format character (bidi overrides and isolates, which reorder what is
  shown, zero-width characters, line and paragraph separators) is shown as a Python-style
  escape: ``\\x1b``, ``\\x9b``, ``\\r``, ``\\u202e``. A newline, too, in a one-line field,
  so data cannot forge lines of iobench's own; :func:`literal_lines` keeps newlines for
  multi-line evidence (job files, fio's stderr). A backslash is left as it is.
- wherever a string goes into rich markup, :func:`markup_literal` also escapes ``[``, so
  ``[/]`` or ``[link=...]`` in data shows as typed.

:class:`LiteralConsole` is the net under it all: the console every command prints with
escapes any such character that still reaches its output (a call site that forgot). Rich's
own styles and cursor movements are not text, so they are not affected.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

# Control (C0, DEL, C1), format (bidi controls, zero-width characters, soft hyphen, BOM,
# tags), lone surrogates (undecodable bytes of a file name), line and paragraph separators.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NOT_PRINTABLE_ASCII = re.compile(r"[^\x20-\x7e]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _show(match: re.Match[str]) -> str:
    char = match.group()
    return _escaped(char) if unicodedata.category(char) in _HIDDEN_CATEGORIES else char


def literal(value: object) -> str:
    """``value`` as text that shows every character and cannot act on the terminal: control
    and invisible format characters, newlines included, as escapes (``\\x1b``, ``\\n``)."""
    text = str(value)
    if text.isprintable():  # the common case: nothing to escape (space is printable)
        return text
    return _NOT_PRINTABLE_ASCII.sub(_show, text)


def literal_lines(value: object) -> str:
    """Like :func:`literal`, but newlines stay: multi-line evidence such as a job file."""
    return "\n".join(literal(line) for line in str(value).split("\n"))


# Backslashes right before a "[" that rich does not read as a tag (rich.markup.RE_TAGS).
_BEFORE_PLAIN_BRACKET = re.compile(r"(\\+)(?=\[(?![a-z#/@][^[]*?\]))")


def _markup(text: str) -> str:
    """``text`` as rich markup that shows it as it is, whatever follows it."""
    body = text.rstrip("\\")
    trailing = len(text) - len(body)
    # rich reads "\[" in plain text as "[" (one backslash less before any bracket), and
    # escape() guards only the brackets that look like tags: before any other bracket, a
    # run of backslashes gets one more (a user's "\[" was shown as "[").
    body = escape(_BEFORE_PLAIN_BRACKET.sub(r"\1\\", body))
    if not trailing:
        return body
    # Backslashes before a tag are escapes (two show as one), elsewhere they show as they
    # are: so the final ones are doubled and an empty span follows them, always.
    return body + "\\" * (2 * trailing) + "[dim][/dim]"


def markup_literal(value: object) -> str:
    """``value`` for a rich markup string (a ``print``, a table cell, title or caption):
    :func:`literal`, with markup escaped so ``[bold]`` in data shows as typed."""
    return _markup(literal(value))


def markup_literal_lines(value: object) -> str:
    """:func:`markup_literal` that keeps newlines: a message of several lines."""
    return _markup(literal_lines(value))


def _json_escaped(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\n" or unicodedata.category(char) not in _HIDDEN_CATEGORIES:
        return char  # a newline between values; json.dumps escapes those inside strings
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON writes characters beyond the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_literal(json_text: str) -> str:
    """A JSON text (``json.dumps(..., ensure_ascii=False)``) with the characters a terminal
    would act on or hide written as ``\\u`` escapes: the same data when read back. json
    escapes C0 controls itself, not DEL, C1 controls (``\\x9b`` is a CSI) or bidi overrides."""
    return _NOT_PRINTABLE_ASCII.sub(_json_escaped, json_text)


class LiteralConsole(Console):
    """A rich Console whose text output never holds a control or invisible format character
    other than a newline: any that reaches a rendered segment is shown escaped. Escapes are
    applied where strings are built (so tables are laid out with them); this catches what a
    call site missed. Segments that carry rich's own control codes are left alone."""

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            text, style, control = segment
            if control is None and not text.isprintable() and text != "\n":
                yield Segment(literal_lines(text), style)
            else:
                yield segment


def print_hanging(console: Console, lead: str, text: str, style: str = "") -> None:
    """``lead`` (iobench's own: a bullet, ``fix: ``), then ``text`` (a data string: shown
    literally) as a paragraph: on a terminal, wrapped at word boundaries with each further
    line indented under the first word (not folded by the terminal at the left edge, in the
    middle of a word); elsewhere (a pipe, a file) one line, so that each finding stays one
    line to grep."""
    if not console.is_terminal:
        console.print(lead + literal(text), highlight=False, markup=False, soft_wrap=True,
                      style=style)  # fmt: skip
        return
    indent = cell_len(lead)
    lines = Text(literal(text), style=style).wrap(console, max(console.width - indent, 20))
    for i, line in enumerate(lines or [Text("")]):
        line.rstrip()
        prefix = Text(lead if i == 0 else " " * indent, style=style)
        console.print(prefix + line, highlight=False, markup=False, soft_wrap=True)
