"""What every view says of a run in steady-state rounds (``--steady-state pts``): per
workload, "steady state reached at round N" or "not reached in N rounds" with its window;
the PTS-style matrix (read/write mix x block size, the window's average); the convergence
chart (the tracking figure per round, the window, the +-10 % band around its average that
the 20 % range rule allows, and the least-squares line). Pure but for the chart's figure
(docs/steady-state.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from iobench.analysis.steady import Rule, Tracked, run_convergence, stored_rule
from iobench.model import DIRECTIONS
from iobench.records import RunRecord
from iobench.units import format_iops, format_rate, format_size_short

MAX_CHARTS = 8  # convergence charts per run; a matrix shows its write-only row's cells
_METRIC_WORDS = {"iops": "IOPS", "bw_bytes": "bandwidth"}


def run_rule(run: RunRecord) -> Rule | None:
    """The rule a run's rounds were judged by; None for a run not in rounds, or whose
    stored rule cannot be read (a hostile database: nothing is judged, as its findings
    say nothing)."""
    try:
        return stored_rule(run)
    except ValueError:
        return None


def figure_text(metric: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{format_iops(value)} IOPS" if metric == "iops" else format_rate(value)


def rule_text(rule: Rule) -> str:
    return (
        f"the SNIA PTS rule over the last {rule.window} rounds: range within "
        f"{rule.range_pct:g} % and least-squares excursion within {rule.slope_pct:g} % of "
        f"the window's average; at most {rule.max_rounds} rounds"
    )


def place_of(t: Tracked) -> str:
    if t.client is None:
        return t.target
    if t.client == "all":
        return f"{t.target}, {t.clients} clients together"
    return f"{t.target}, client {t.client} of {t.clients}"


def verdict(t: Tracked) -> str:
    """``steady state reached at round 9`` or ``not reached in 25 rounds``."""
    c = t.convergence
    if c.reached_at is not None:
        return f"steady state reached at round {c.reached_at}"
    return f"steady state not reached in {c.rounds} rounds"


def tracked_line(t: Tracked) -> str:
    """One workload's verdict with its window's figures."""
    c, w = t.convergence, t.convergence.window
    said = f"{t.workload} on {place_of(t)}: {verdict(t)}"
    if w is None:
        return said + " (fewer rounds than the window)"
    avg = w.average
    said += (
        f"; rounds {w.rounds[0]}-{w.rounds[-1]}: {figure_text(c.metric, avg)} on average, "
        f"range {_pct(w.range, avg)}, excursion {_pct(w.excursion, avg)}"
    )
    if c.heading is not None and c.reached_at is None:
        way = "rising" if w.slope > 0 else "falling"
        heading = figure_text(c.metric, c.heading)
        said += {
            "levelling": f"; still {way}, heading towards {heading}",
            "average": f"; swinging around {heading}",
        }.get(c.heading_how or "", f"; still {way}, its trend now at {heading}")
    return said


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def headline(tracked: Sequence[Tracked]) -> list[Tracked]:
    """The convergences the rule judges: one host's, or the clients' aggregate."""
    return [t for t in tracked if t.client in (None, "all")]


def fio_lines(run: RunRecord) -> list[str]:
    """A run with ``--steady-state fio``: what fio's own check said of each result."""
    stored = run.suite_def.steady_state
    if not isinstance(stored, Mapping) or stored.get("rule") != "fio":
        return []
    lines = ["Steady state by fio's own check in each job (not the PTS rule on rounds):"]
    for r in run.results:
        ss = (r.metrics or {}).get("steadystate")
        if r.client not in (None, "all") or not isinstance(ss, Mapping):
            continue
        runtime = max(
            (float(((r.metrics or {}).get(d) or {}).get("runtime_ms") or 0) for d in DIRECTIONS),
            default=0.0,
        )
        took = f"{runtime / 1000:.1f} s"
        said = (
            f"fio found it steady after {took} ({ss.get('criterion')} over "
            f"{ss.get('duration_s')} s)"
            if ss.get("attained")
            else f"fio did not find it steady in its {took} ({ss.get('criterion')})"
        )
        lines.append(f"  {r.workload} on {r.target}: {said}")
    return lines if len(lines) > 1 else []


def steady_lines(run: RunRecord) -> list[str]:
    """The steady-state section of a run as lines of text; [] for a run not in rounds
    (fio's own check's lines for a run with ``--steady-state fio``)."""
    rule = run_rule(run)
    if rule is None:
        return fio_lines(run)
    tracked = headline(run_convergence(run))
    lines = [f"Steady state by {rule_text(rule)}. Each result is its window's average:"]
    lines += [f"  {tracked_line(t)}" for t in tracked]
    return lines


def steady_document(run: RunRecord) -> dict[str, Any] | None:
    """``steady_state`` of the run document (docs/json-schema.md); None when not in
    rounds."""
    rule = run_rule(run)
    if rule is None:
        return None
    return {
        "rule": dict(run.suite_def.steady_state or {}),
        "workloads": [_tracked_document(t) for t in run_convergence(run)],
        "matrix": matrix_document(run),
    }


def _tracked_document(t: Tracked) -> dict[str, Any]:
    c, w = t.convergence, t.convergence.window
    return {
        "target": t.target,
        "workload": t.workload,
        "client": t.client,
        "clients": t.clients,
        "metric": c.metric,
        "series": [[r, v] for r, v in c.series],
        "rounds": c.rounds,
        "steady": c.steady,
        "reached_at": c.reached_at,
        "heading": c.heading,
        "window": None
        if w is None
        else {
            "rounds": list(w.rounds),
            "values": list(w.values),
            "average": w.average,
            "range": w.range,
            "slope": w.slope,
            "intercept": w.intercept,
            "excursion": w.excursion,
            "range_ok": w.range_ok,
            "slope_ok": w.slope_ok,
        },
    }


# -- the PTS matrix ----------------------------------------------------------------------------


def _mix(params: Mapping[str, Any]) -> int | None:
    """The read share in % of a random workload (100/0 ... 0/100); None otherwise."""
    rw = params.get("rw")
    if rw == "randread":
        return 100
    if rw == "randwrite":
        return 0
    if rw in ("randrw", "randreadwrite"):
        mix = params.get("rwmixread")
        return mix if isinstance(mix, int) and not isinstance(mix, bool) else 50
    return None


def matrix(run: RunRecord) -> tuple[list[int], list[int], dict[tuple[int, int], float]] | None:
    """(mixes by falling read share, block sizes by falling size, the window's average
    IOPS per (mix, block size)) of the first target's (or the clients' aggregate's)
    random workloads, when they cover at least 2 mixes and 2 block sizes; else None."""
    tracked = headline(run_convergence(run))
    if not tracked:
        return None
    first = (tracked[0].target, tracked[0].clients)
    params = {w.get("name"): w for w in run.suite_def.workloads or () if isinstance(w, Mapping)}
    cells: dict[tuple[int, int], float] = {}
    for t in tracked:
        p = params.get(t.workload) or {}
        mix, bs = _mix(p), p.get("bs")
        w = t.convergence.window
        if (t.target, t.clients) != first or mix is None or not isinstance(bs, int) or w is None:
            continue
        avg = w.average if t.convergence.metric == "iops" else w.average / bs
        cells[(mix, bs)] = avg
    mixes = sorted({m for m, _ in cells}, reverse=True)
    sizes = sorted({b for _, b in cells}, reverse=True)
    if len(mixes) < 2 or len(sizes) < 2:
        return None
    return mixes, sizes, cells


def mix_text(mix: int) -> str:
    return f"{mix}/{100 - mix}"


def matrix_rows(run: RunRecord) -> tuple[list[str], list[list[str]]] | None:
    """The matrix as text: a header (``R/W mix``, block sizes) and a row per mix."""
    found = matrix(run)
    if found is None:
        return None
    mixes, sizes, cells = found
    header = ["R/W mix", *(format_size_short(b) for b in sizes)]
    rows = [
        [mix_text(m), *(format_iops(cells[(m, b)]) if (m, b) in cells else "-" for b in sizes)]
        for m in mixes
    ]
    return header, rows


def matrix_document(run: RunRecord) -> dict[str, Any] | None:
    found = matrix(run)
    if found is None:
        return None
    mixes, sizes, cells = found
    return {
        "metric": "iops",
        "mixes": [mix_text(m) for m in mixes],
        "block_sizes": sizes,
        "iops": [[cells.get((m, b)) for b in sizes] for m in mixes],
    }


# -- the convergence chart ---------------------------------------------------------------------


def charted(run: RunRecord) -> list[Tracked]:
    """The convergences to chart: every workload's when there are few; for a matrix,
    the write-only mix's block sizes (the PTS's tracking row), else the first ones."""
    tracked = [t for t in headline(run_convergence(run)) if t.convergence.series]
    if len(tracked) <= MAX_CHARTS:
        return tracked
    params = {w.get("name"): w for w in run.suite_def.workloads or () if isinstance(w, Mapping)}
    writes = [t for t in tracked if _mix(params.get(t.workload) or {}) == 0]
    return (writes or tracked)[:MAX_CHARTS]


def convergence_figure(t: Tracked, rule: Rule) -> Any:
    """The tracking figure per round; the window shaded, its average with the +-(range/2)
    band, and the least-squares line over the window."""
    import plotly.graph_objects as go  # type: ignore[import-untyped]

    from iobench.report.charts import PALETTE, base_layout, plot_text

    c, w = t.convergence, t.convergence.window
    scale = 1.0 if c.metric == "iops" else 2**20
    unit = "IOPS" if c.metric == "iops" else "MiB/s"
    xs = [r for r, _ in c.series]
    ys = [v / scale for _, v in c.series]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines+markers",
            name=plot_text(t.workload),
            line={"color": PALETTE[0], "width": 2},
            hovertext=[f"round {r}: {figure_text(c.metric, v)}" for r, v in c.series],
            hoverinfo="text",
        )
    )
    if w is not None:
        avg = w.average / scale
        half = rule.range_pct / 200 * avg
        x0, x1 = w.rounds[0], w.rounds[-1]
        fig.add_vrect(x0=x0 - 0.5, x1=x1 + 0.5, fillcolor="#e5e7eb", opacity=0.5, line_width=0)
        fig.add_shape(
            type="rect", x0=x0 - 0.5, x1=x1 + 0.5, y0=avg - half, y1=avg + half,
            fillcolor=PALETTE[2], opacity=0.12, line_width=0,
        )  # fmt: skip
        for y, dash in ((avg, "dash"), (avg - half, "dot"), (avg + half, "dot")):
            fig.add_shape(
                type="line", x0=x0 - 0.5, x1=x1 + 0.5, y0=y, y1=y,
                line={"color": PALETTE[2], "dash": dash, "width": 1.2},
            )  # fmt: skip
        fig.add_trace(
            go.Scatter(
                x=[x0, x1],
                y=[(w.intercept + w.slope * x) / scale for x in (x0, x1)],
                mode="lines",
                name="least-squares line",
                line={"color": PALETTE[1], "width": 2},
                hoverinfo="skip",
            )
        )
    base_layout(fig, 300)
    top = max(ys, default=1.0)
    fig.update_yaxes(title_text=unit, range=[0, top * 1.15 if math.isfinite(top) else 1])
    fig.update_xaxes(title_text="round", dtick=1 if len(xs) <= 30 else 5)
    return fig


def chart_title(t: Tracked) -> str:
    metric = _METRIC_WORDS.get(t.convergence.metric, t.convergence.metric)
    return f"{t.workload} on {place_of(t)}: {verdict(t)} ({metric})"


def matrix_table(run: RunRecord) -> Any | None:
    """The matrix as the HTML report's shaded table (report.charts.HeatTable)."""
    from iobench.report.charts import shaded_table

    found = matrix(run)
    if found is None:
        return None
    mixes, sizes, cells = found
    return shaded_table(
        [format_size_short(b) for b in sizes],
        [(mix_text(m), [cells.get((m, b)) for b in sizes]) for m in mixes],
        corner="R/W mix",
    )


def render_steady(run: RunRecord, console: Any) -> None:
    """The steady-state lines and the matrix on a terminal (rich ``Console``)."""
    from rich.table import Table

    from iobench.report.literal import literal

    lines = steady_lines(run)
    for i, line in enumerate(lines):
        console.print(literal(line), style="bold" if i == 0 else "", highlight=False, markup=False)
    rows = matrix_rows(run)
    if rows is None:
        return
    header, body = rows
    table = Table(title="IOPS by read/write mix and block size (window averages)",
                  title_justify="left")  # fmt: skip
    for i, h in enumerate(header):
        table.add_column(h, justify="left" if i == 0 else "right")
    for row in body:
        table.add_row(*row)
    console.print(table)
