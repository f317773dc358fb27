"""What the HTML report's charts draw shows strings as its tables do (issue 22): a label,
workload name or target path holding U+202E, ESC or BEL reaches Plotly's legend, hover
text, tick labels and trace names as the escapes report.literal writes (``\\u202e``,
``\\x1b``, ``\\x07``), not raw. Checked in the figure JSON inside the rendered page."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.analysis.compare import compare
from iobench.report.html import figure_payload, render_html
from iobench.report.literal import literal, literal_lines
from iobench.store import Store
from test_hostile_output import HOSTILE, raw_controls, store_hostile_runs
from test_report import Page, make_run

# A label, workload name or path as a hostile file or fio server could give it.
NASTY = [
    pytest.param("evil\u202etxt.exe", id="rlo"),
    pytest.param("bell\x07ring", id="bel"),
    pytest.param("esc\x1b[31mred", id="esc"),
    pytest.param("\u2066iso\u2069\u200bzw", id="isolate-zero-width"),
    pytest.param("line\u2028sep\nnewline\rcr", id="separators"),
    pytest.param("c1\x9b31m\x85", id="c1"),
]


def _strings(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every string of a figure's JSON, with where it is (data[0].name, layout.title ...)."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}")


def _figures(page: str) -> dict[str, Any]:
    figures = Page(page).json_blocks()
    assert figures, "the page has charts"
    return figures


def _check(page: str, nasty: str) -> set[str]:
    """No string of any figure holds a raw control or invisible character; returns where
    the nasty string is drawn, as the tables show it (escapes, HTML-escaped for Plotly)."""
    drawn = html.escape(literal(nasty), quote=False)
    found = set()
    for chart, fig in _figures(page).items():
        for where, text in _strings(fig):
            assert raw_controls(text) == set(), (chart, where, text)
            if drawn in text:
                found.add(re.sub(r"\[\d+\]", "", where))
    return found


@pytest.mark.parametrize("nasty", NASTY)
def test_labels_and_paths_are_drawn_as_the_tables_show_them(nasty: str) -> None:
    """Two setups (the label and the target path carry the string): the overview bars,
    the latency curves and the per-second timelines, each trace's name and hover text."""
    runs = [
        make_run(1, f"a {nasty}", 1.0, 3, target=f"/data/{nasty}"),
        make_run(2, nasty, 1.4, 3),
    ]
    page = render_html(runs, compare(runs))
    found = _check(page, nasty)
    assert {".data.name", ".data.hovertext"} <= found, found
    # The key above the charts and the tables, whose cells keep a newline as HTML does.
    assert html.escape(literal_lines(nasty), quote=False) in page


@pytest.mark.parametrize("nasty", [p.values[0] for p in HOSTILE])
def test_every_chart_of_a_hostile_database_is_drawn_literally(
    cli: Cli, nasty: str, isolated_db: Path, tmp_path: Path
) -> None:
    """Workload names (the overview's tick labels, the scaling chart's traces), labels,
    targets, clients: in every chart of a comparison, a sweep, a characterization and a
    run on clients."""
    with Store.open(isolated_db) as store:
        store_hostile_runs(store, nasty)
    found: set[str] = set()
    for runs in (["1", "2"], ["3", "4", "5"]):
        path = tmp_path / "report.html"
        code, _, err = cli("report", *runs, "-o", str(path))
        assert code == 0, err
        found |= _check(path.read_text(), nasty)
    assert {".data.y", ".data.name", ".data.hovertext"} <= found, found


def test_the_net_catches_a_string_that_missed_plot_text() -> None:
    """figure_payload escapes what a chart builder forgot to pass through plot_text."""
    import plotly.graph_objects as go  # type: ignore[import-untyped]

    fig = go.Figure(go.Scatter(x=[1], y=[1], name="raw\u202e\x1b\x07"))
    fig.update_layout(title={"text": "t\u202e"}, xaxis={"title": {"text": "x\x1b"}})
    fig.add_annotation(text="note\x07", x=0, y=0)
    doc = json.loads(str(figure_payload(fig)))
    assert doc["data"][0]["name"] == "raw\\u202e\\x1b\\x07"
    assert doc["layout"]["title"]["text"] == "t\\u202e"
    assert doc["layout"]["xaxis"]["title"]["text"] == "x\\x1b"
    assert doc["layout"]["annotations"][0]["text"] == "note\\x07"
    assert all(raw_controls(text) == set() for _, text in _strings(doc))


def test_plain_text_is_unchanged_and_escapes_are_not_doubled() -> None:
    import plotly.graph_objects as go

    fig = go.Figure(go.Scatter(x=[1], y=[1], name="µs ü 日本 a\\x1b"))
    doc = json.loads(str(figure_payload(fig)))
    assert doc["data"][0]["name"] == "µs ü 日本 a\\x1b"
