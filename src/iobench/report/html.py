"""The HTML report: one self-contained file that works offline (docs/report.md).

Tables are rendered by Jinja2 with autoescaping on and need no JavaScript; their lines come
from the table model in :mod:`iobench.report.model` (shared with the Markdown report).
Charts are Plotly figures built in :mod:`iobench.report.charts`, serialised to JSON and
embedded in ``<script type="application/json">`` blocks in which every ``<``, ``>`` and
``&`` is written as a ``\\u003c``-style escape, so no string can end the block; a small
inline script hands each block to ``Plotly.newPlot``. plotly.js is inlined once. The page
loads nothing from anywhere.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import shlex
from collections.abc import Sequence
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from iobench.analysis.compare import Comparison, shape_key
from iobench.analysis.orion import orion_summary
from iobench.analysis.results import Group, groups, params_key, setup_names
from iobench.analysis.runcurves import analysis_kind, run_characterizations, run_curves
from iobench.analysis.stats import UNSTABLE_CV_PCT
from iobench.records import ResultRecord, RunRecord
from iobench.report.charts import (
    PALETTE,
    HeatTable,
    OverviewColumn,
    Series,
    heat_table,
    hockey_figure,
    latency_figure,
    limits_figure,
    overview_figure,
    scaling_figure,
    timeline_figure,
)
from iobench.report.clients import (
    client_figures,
    client_steps,
    is_client_run,
    scaling_table,
    step_notes,
)
from iobench.report.context import host_lines, target_lines
from iobench.report.curves import (
    curve_groups,
    limit_rows,
)
from iobench.report.literal import literal, literal_lines
from iobench.report.model import (
    CLAT_NOTE,
    compare_lines,
    differs_text,
    failed_lines,
    format_summary,
    headline_texts,
    limits_view,
    p99_text,
    result_lines,
    run_lines,
    run_title,
    target_title,
    verdict_rules,
    workload_shape,
)
from iobench.report.overview import (
    SEVERITY_TITLES,
    Notice,
    Overview,
    OverviewRow,
    notice_groups,
    notices,
    overview,
)
from iobench.report.specs import EXPECT_HEADER, PROMISED_HEADER, HeldTo, held_to
from iobench.units import format_duration, format_iops, format_ns, format_rate

CURVE_ONLY = ("sweep", "characterize")

# No mode bar: it covers the subplot titles; drag zooms and a double click resets anyway.
PLOTLY_CONFIG = {"displaylogo": False, "displayModeBar": False, "responsive": True}


def _visible(value: object) -> object:
    """Every string a template prints shows its control and invisible characters as escapes
    (an imported hostname's ESC, a bidi control): autoescape only handles <, > and &.
    Markup (the page's own HTML, the charts) is left as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return literal_lines(value)
    return value


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("iobench.report", "templates"),
    autoescape=True,
    finalize=_visible,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


# -- setups and chart cards ----------------------------------------------------------------------


def _series(runs: Sequence[RunRecord], comparison: Comparison | None) -> list[Series]:
    """One colour per setup, named as the comparison names it (compare() names setups with
    the same :func:`iobench.analysis.results.setup_names`)."""
    setups = {(s.run_id, s.target): s for s in comparison.setups} if comparison else {}
    out: list[Series] = []
    for n in setup_names(runs):
        setup = setups.get((n.run.id, n.target))
        key, name = (setup.key, setup.name) if setup else (n.key, n.name)
        out.append(Series(key, name, n.run, n.target, PALETTE[len(out) % len(PALETTE)]))
    return out


@dataclasses.dataclass
class _Card:
    """One workload (name and parameters) and, per setup, its repetitions."""

    workload: str
    params: dict[str, Any]
    entries: list[tuple[Series, Sequence[ResultRecord]]]
    notes: list[str]


def _cards(series: Sequence[Series], comparison: Comparison | None) -> list[_Card]:
    """Without a comparison, one card per workload name and parameters. With one, a card
    per matched set of workloads (its rows, whatever their direction; their durations may
    differ, as the card's note says) and one per workload that was not matched."""
    per_series = {s.key: (s, groups(s.run, s.target, headline_only=True)) for s in series}
    if comparison is None:
        by_key: dict[tuple[str, str], _Card] = {}
        for s, found in per_series.values():
            for g in found:
                card = by_key.setdefault((g.workload, g.pkey), _Card(g.workload, g.params, [], []))
                card.entries.append((s, g.results))
        return list(by_key.values())

    def pick(setup: str, workload: str, skey: str, pkey: str) -> Group | None:
        """The setup's group of this shape; by name, then by parameters, when it has
        several."""
        if setup not in per_series:
            return None
        found = [g for g in per_series[setup][1] if shape_key(g.params) == skey]
        if len(found) > 1:
            found = [g for g in found if g.workload in workload.split(" / ")] or found
        if len(found) > 1:
            found = [g for g in found if g.pkey == pkey] or found
        return found[0] if found else None

    names = {s.key: s.name for s in comparison.setups}
    cards: dict[tuple[str, str], _Card] = {}
    shown: set[tuple[str, str, str]] = set()  # (setup, workload, pkey) already in a card
    for row in comparison.rows:
        skey, pkey = shape_key(row.params), params_key(row.params)
        if (row.workload, skey) not in cards:
            differs = differs_text(row, names)
            notes = [differs] if differs else []
            cards[(row.workload, skey)] = _Card(row.workload, row.params, [], notes)
        card = cards[(row.workload, skey)]
        for c in row.cells:
            got = pick(c.setup, row.workload, skey, pkey)
            if got is None or (c.setup, got.workload, got.pkey) in shown:
                continue
            shown.add((c.setup, got.workload, got.pkey))
            card.entries.append((per_series[c.setup][0], got.results))
    out = list(cards.values())
    for u in comparison.unmatched:
        pkey = params_key(u.params)
        got = pick(u.setup, u.workload, shape_key(u.params), pkey)
        if got is None or got.workload != u.workload or (u.setup, u.workload, got.pkey) in shown:
            continue  # failed everywhere (nothing to draw), or already drawn
        shown.add((u.setup, u.workload, got.pkey))
        entry = (per_series[u.setup][0], got.results)
        out.append(_Card(u.workload, u.params, [entry], [f"not compared: {u.reason}"]))
    order = [s.key for s in series]
    for card in out:  # in setup order, as in the key
        card.entries.sort(key=lambda e: order.index(e[0].key))
    return out


def _shown_literally(value: Any) -> Any:
    """Every string of a figure's JSON data with its control and invisible characters as
    escapes (report.literal, as the tables show them): the net under charts.plot_text,
    for a string that reached a figure without it. literal() changes no string twice."""
    if isinstance(value, str):
        return literal(value)
    if isinstance(value, list):
        return [_shown_literally(v) for v in value]
    if isinstance(value, dict):
        return {k: _shown_literally(v) for k, v in value.items()}
    return value


def figure_payload(fig: Any) -> Markup:
    """A figure's JSON, safe inside ``<script type="application/json">``: ``<``, ``>`` and
    ``&`` occur in JSON only inside strings, where ``\\u003c`` means the same to JSON.parse,
    so nothing in a label can close the element; and no string holds a character Plotly
    would draw raw that the tables show escaped (a bidi override, ESC, BEL)."""
    text = json.dumps(_shown_literally(json.loads(fig.to_json())), separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)  # escaped above for this context


# plotly.js's basic bundle (scatter and bar, the traces the report draws), vendored: a
# quarter of the size of the full plotly.js (src/iobench/report/vendor/README.md).
PLOTLY_BUNDLE = "plotly-basic.min.js"


@functools.cache
def plotly_js() -> Markup:
    """plotly.js, inlined (no network)."""
    js = resources.files("iobench.report").joinpath("vendor", PLOTLY_BUNDLE).read_text("utf-8")
    # In a string, regex or comment ``<\/script`` means the same as ``</script``.
    return Markup(re.sub(r"</(script)", r"<\\/\1", js, flags=re.IGNORECASE))


@dataclasses.dataclass(frozen=True)
class Chart:
    id: str
    title: str
    payload: Markup
    height: int
    wide: bool = False  # spans the whole width of its card


@dataclasses.dataclass(frozen=True)
class WorkloadCharts:
    anchor: str  # the card's element id: the overview and the warnings link to it
    workload: str
    shape: str
    charts: list[Chart]
    notes: list[str]


def workload_charts(
    series: Sequence[Series], comparison: Comparison | None
) -> list[WorkloadCharts]:
    """A card per workload: its latency percentiles and its per-second figures, side by
    side (its IOPS and bandwidth are in the overview)."""
    out: list[WorkloadCharts] = []
    for card in _cards(series, comparison):
        charts: list[Chart] = []
        notes: list[str] = list(card.notes)
        for title, build, missing in (
            ("latency percentiles", latency_figure, "no latency percentiles were stored"),
            ("per second", timeline_figure, "no per-second samples were recorded"),
        ):
            fig = build(card.entries)
            if fig is None:
                notes.append(f"{title}: {missing}")
                continue
            chart_id = f"chart-{len(out)}-{len(charts)}"
            charts.append(Chart(chart_id, title, figure_payload(fig), int(fig.layout.height)))
        if not charts:
            continue
        if len(charts) == 1:  # a chart alone on its row takes the whole width
            charts = [dataclasses.replace(charts[0], wide=True)]
        shape = workload_shape(card.params)
        out.append(WorkloadCharts(f"card-{len(out)}", card.workload, shape, charts, notes))
    return out


# -- curves and limits ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CurveSection:
    """One run's curves and limits (sweep, characterize, orion-simple)."""

    anchor: str  # its charts' element id
    title: str
    summary: list[str]  # Orion's lines, characterize's stop reason
    charts: list[Chart]
    heat: list[tuple[str, HeatTable]]  # (what it shows, the table)
    limits: list[tuple[str, str, str]]  # (limit, value with interval, how found or why not)


def _chart(chart_id: str, title: str, fig: Any) -> Chart:
    """A chart that takes the whole width of its card."""
    return Chart(chart_id, title, figure_payload(fig), int(fig.layout.height), wide=True)


def curve_sections(runs: Sequence[RunRecord]) -> list[CurveSection]:
    out: list[CurveSection] = []
    for run in runs:
        kind = analysis_kind(run)
        if kind is None:
            continue
        cs, lims = run_curves(run, kind)
        summary: list[str] = []
        if kind == "characterize":
            summary += [
                f"{ch.place}: {ch.points} points in {format_duration(round(ch.elapsed_s))}; "
                f"{ch.stop}"
                for ch in run_characterizations(run)
            ]
        if kind == "orion":
            summary += orion_summary(run).lines()
        charts: list[Chart] = []
        heat: list[tuple[str, HeatTable]] = []
        for (target, rw, jobs), group in curve_groups(cs).items():
            where = f"{target}, {rw}" + (f" x{jobs} jobs" if jobs > 1 else "")
            fig = hockey_figure(group)
            if fig is not None:
                title = f"IOPS and latency against outstanding IO ({where})"
                charts.append(_chart(f"curve-{len(out)}-{len(charts)}", title, fig))
            table = heat_table(group)
            if table is not None:
                heat.append((f"IOPS by block size and queue depth ({where})", table))
        limits: list[tuple[str, str, str]] = []
        for lim in lims:
            fig = limits_figure(lim)
            if fig is not None:
                title = (
                    f"IOPS and bandwidth by block size, with the limits ({lim.target}, {lim.rw})"
                )
                charts.append(_chart(f"curve-{len(out)}-{len(charts)}", title, fig))
            # Several curves (targets, directions): each limit says whose it is.
            whose = f"{lim.rw} " if len(lims) > 1 else ""
            whose += f"on {lim.target}: " if len({x.target for x in lims}) > 1 else ""
            limits += [
                (whose + name, value or "none found", how) for name, value, how in limit_rows(lim)
            ]
        out.append(CurveSection(f"curve-{len(out)}", run_title(run), summary, charts, heat, limits))
    return out


def steady_sections(runs: Sequence[RunRecord]) -> list[CurveSection]:
    """Each run in steady-state rounds: its verdicts, the PTS matrix and the convergence
    charts (report.steady)."""
    from iobench.report.steady import (
        chart_title,
        charted,
        convergence_figure,
        matrix_table,
        run_rule,
        steady_lines,
    )

    out: list[CurveSection] = []
    for run in runs:
        rule = run_rule(run)
        if rule is None:
            continue
        anchor = f"steady-{len(out)}"
        charts = [
            Chart(
                f"{anchor}-{i}",
                literal(chart_title(t)),
                figure_payload(fig),
                int(fig.layout.height),
            )
            for i, t in enumerate(charted(run))
            for fig in [convergence_figure(t, rule)]
        ]
        table = matrix_table(run)
        heat = [("IOPS by read/write mix and block size (window averages)", table)] if table else []
        lines = [literal(line.strip()) for line in steady_lines(run)]
        out.append(CurveSection(anchor, f"Steady state: {run_title(run)}", lines, charts, heat, []))
    return out


# -- many clients ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ClientStep:
    title: str
    rows: list[tuple[str, str, str, str, str, str]]  # client, dir, IOPS, bandwidth, mean, p99
    notes: list[tuple[str, str]]  # (style, text): the window, the device, skew, stragglers ...


@dataclasses.dataclass(frozen=True)
class ClientSection:
    title: str
    steps: list[ClientStep]
    charts: list[Chart]
    # workload, dir, clients, aggregate IOPS, per client, aggregate bandwidth, per client,
    # efficiency
    scaling: Sequence[tuple[str, ...]]


def client_sections(runs: Sequence[RunRecord]) -> list[ClientSection]:
    """For runs on many clients: every step's clients and aggregate, and the scaling."""
    out: list[ClientSection] = []
    for run in runs:
        if not is_client_run(run):
            continue
        ordered = []
        for (k, workload, _), members in client_steps(run):
            step = ClientStep(f"{workload} on {k} client(s)", [], [])
            for g in members:
                step.rows.extend(
                    (who, d, format_summary(f.iops, format_iops), format_rate(f.bw_bytes.mean),
                     format_ns(f.lat_mean_ns.mean), p99_text(f))
                    for who, d, f in client_figures(g)
                )  # fmt: skip
            step.notes.extend(step_notes(members))
            ordered.append(step)
        charts = []
        table = scaling_table(run)
        fig = scaling_figure(table)
        if fig is not None:
            charts.append(_chart(f"clients-{len(out)}-0", "scaling", fig))
        scaling = [
            (workload, d, str(p.clients), format_iops(p.iops), format_iops(p.per_client),
             format_rate(p.bw_bytes), format_rate(p.per_client_bw),
             "-" if p.efficiency is None else f"{p.efficiency:.0%}")
            for (workload, d), points in table.items()
            for p in points
        ]  # fmt: skip
        out.append(ClientSection(run_title(run), ordered, charts, scaling))
    return out


# -- context ----------------------------------------------------------------------------------


def held_to_runs(runs: Sequence[RunRecord]) -> list[HeldTo]:
    return [h for h in map(held_to, runs) if h.checks or h.promised]


@dataclasses.dataclass(frozen=True)
class RunContext:
    title: str
    lines: list[tuple[str, str]]
    targets: list[tuple[str, list[tuple[str, str]]]]
    warnings: list[dict[str, Any]]
    error: str | None


def run_contexts(runs: Sequence[RunRecord]) -> list[RunContext]:
    out = []
    for run in runs:
        lines = [
            ("suite", f"{run.suite} ({run.suite_def.description or 'no description'})"),
            ("command", shlex.join(run.argv) if run.argv else "-"),
            ("iobench", f"{run.iobench_version}, {run.origin}"),
            *host_lines(run.host),
        ]
        targets = [
            (
                target_title(t),
                target_lines(
                    {
                        "path": t.path,
                        "kind": t.kind,
                        "size_bytes": t.size_bytes,
                        "context": t.context,
                    }
                ),
            )
            for t in sorted(run.targets, key=lambda t: t.position)
        ]
        out.append(RunContext(run_title(run), lines, targets, list(run.warnings), run.error))
    return out


# -- the page ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class OverviewView:
    table: Overview
    chart: Chart | None


def _row_labels(rows: Sequence[OverviewRow]) -> list[str]:
    """The chart's name for each overview row, unique: the workload, with its direction
    when it has several, and its shape when two rows would still read the same."""
    directions: dict[str, set[str]] = {}
    for r in rows:
        directions.setdefault(r.workload, set()).add(r.direction)
    labels = [
        r.workload + (f" ({r.direction})" if len(directions[r.workload]) > 1 else "") for r in rows
    ]
    seen: dict[str, int] = {}
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
    out: list[str] = []
    for label, r in zip(labels, rows, strict=True):
        base = f"{label}, {r.shape}" if seen[label] > 1 else label
        label, k = base, 1
        while label in out:  # still the same: number it
            k += 1
            label = f"{base} #{k}"
        out.append(label)
    return out


def overview_view(
    series: Sequence[Series],
    comparison: Comparison | None,
    found: Sequence[Notice],
    card_of: Any,
) -> OverviewView | None:
    setups = [(s.key, s.name, s.colour, s.run, s.target) for s in series]
    table = overview(setups, comparison, found, card_of)
    if table is None:
        return None
    columns = []
    for i, s in enumerate(table.setups):
        cells = [r.cells[i] for r in table.rows]
        columns.append(
            OverviewColumn(
                s.name,
                s.colour,
                [None if c is None else c.iops_summary for c in cells],
                [None if c is None else c.bw_summary for c in cells],
            )
        )
    baseline = next((i for i, s in enumerate(table.setups) if s.baseline), None)
    fig = overview_figure(_row_labels(table.rows), columns, baseline)
    chart = None if fig is None else _chart("overview-chart", "IOPS and bandwidth", fig)
    return OverviewView(table, chart)


def render_html(runs: Sequence[RunRecord], comparison: Comparison | None) -> str:
    """The whole report as one HTML document (UTF-8 text)."""
    names = {s.key: s.name for s in comparison.setups} if comparison else {}
    # A sweep's or characterize's points are drawn as curves, not one card each.
    series = [s for s in _series(runs, comparison) if analysis_kind(s.run) not in CURVE_ONLY]
    cards = workload_charts(series, comparison)

    def card_of(workload: str) -> str | None:
        return next((c.anchor for c in cards if workload in c.workload.split(" / ")), None)

    found = notices(runs, card_of)
    curves = curve_sections(runs)
    results = [(run_title(r), result_lines(r), failed_lines(r), r.error) for r in runs]
    template = _ENV.get_template("report.html.j2")
    return template.render(
        title="iobench report: " + ", ".join(run_title(r) for r in runs),
        runs=run_lines(runs),
        overview=overview_view(series, comparison, found, card_of),
        notice_groups=notice_groups(found),
        severity_titles=SEVERITY_TITLES,
        results=results,
        repeated=any(line.n > 1 for _, lines, _, _ in results for line in lines),
        comparison=comparison,
        setup_names=names,
        baseline=names.get(comparison.baseline) if comparison else None,
        compare_lines=compare_lines(comparison) if comparison else [],
        headlines=headline_texts(comparison) if comparison else [],
        limits_side=limits_view(comparison) if comparison else None,
        charts=cards,
        curve_sections=curves,
        curve_overview=[sec for sec in curves if sec.limits or sec.heat or sec.summary],
        steady_sections=steady_sections(runs),
        client_sections=client_sections(runs),
        held=held_to_runs(runs),
        promised_header=PROMISED_HEADER,
        expect_header=EXPECT_HEADER,
        key=[(s.name, s.colour) for s in series],
        contexts=run_contexts(runs),
        unstable_cv=UNSTABLE_CV_PCT,
        clat_note=CLAT_NOTE,
        verdict_rules=verdict_rules(comparison) if comparison else "",
        plotly_config=Markup(json.dumps(PLOTLY_CONFIG)),  # a constant without '<'
        plotly_js=plotly_js(),
    )
