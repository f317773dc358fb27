"""How a failure is told on stderr: iobench's own errors with their hints, and click's
usage errors, each shown literally (what the user typed and what files hold)."""

from __future__ import annotations

import io

import click
from rich.console import Console

from iobench.errors import IobenchError
from iobench.report.literal import literal, literal_lines, markup_literal_lines


def print_error(e: IobenchError, console: Console) -> None:
    """The message and the hint, which quote what the user typed and what files hold, shown
    literally. Their line breaks (one refusal a line) stay, each later line indented, so no
    line of theirs can pass for a line of iobench's own."""
    first, *more = markup_literal_lines(e.message).split("\n")
    # A later line (a list of reasons) starts 4 columns in, 2 more than it had: never at
    # the first two columns, where iobench's own "iobench: error:" and "what to do:" are.
    message = "".join([first, *("\n" + (" " * (2 if m[:1].isspace() else 4)) + m for m in more)])
    console.print(f"[red]iobench: error:[/] {message}", highlight=False)
    if e.hint:
        hint = markup_literal_lines(e.hint).replace("\n", "\n" + " " * 14)
        console.print(f"  [dim]what to do:[/] {hint}", highlight=False)


def print_click_error(e: click.ClickException, console: Console) -> None:
    """click's own error (usage, "Try ... --help", "Error: MESSAGE"), laid out as click lays
    it out. MESSAGE quotes what the user typed (an option, a value, extra arguments): it is
    shown on one line, literally."""
    text = io.StringIO()
    e.show(file=text)
    shown = text.getvalue()
    message = e.format_message()
    said = click.unstyle(message) + "\n"  # click strips colours when not on a terminal
    if shown.endswith(said):
        shown = shown[: -len(said)] + literal(message) + "\n"
    console.print(literal_lines(shown), end="", markup=False, highlight=False)
