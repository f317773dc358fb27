"""The HTML report's charts: Plotly figures built in Python (docs/report.md).

IOPS and bandwidth bars with 95 % confidence intervals, latency percentile curves on a
nines scale from the merged histograms, and per-second timelines. Each chart function
takes the entries of one card: per setup (a :class:`Series`, one colour) the repetitions of
the workload it shows; it returns a figure, or None when there is nothing to draw.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go  # type: ignore[import-untyped]
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from iobench.analysis.histogram import percentiles_from_bins
from iobench.analysis.results import latency_field, merged_bins, sections
from iobench.analysis.stats import Summary, interval_shown
from iobench.model import DIRECTIONS, PERCENTILES, percentile_key
from iobench.records import ResultRecord, RunRecord
from iobench.report.literal import literal
from iobench.units import (
    format_bytes,
    format_iops,
    format_ns,
    format_rate,
    format_size_short,
    plain_figure,
)

MIB = float(1 << 20)
# Tableau 10: distinct, colour-blind friendly enough, readable on white.
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
_DASH = {"read": "solid", "write": "dash", "trim": "dot"}
# No mode bar: it covers the subplot titles; drag zooms and a double click resets anyway.
PLOTLY_CONFIG = {"displaylogo": False, "displayModeBar": False, "responsive": True}

# Latency percentile curves: x is the number of nines, -log10(1 - p/100), sampled every
# NINES_STEP up to the tail the samples can show (log10(n)) and at most MAX_NINES.
NINES_STEP = 0.02
MAX_NINES = 6.0
_NINES_TICKS = (
    (50.0, "p50"),
    (90.0, "p90"),
    (99.0, "p99"),
    (99.9, "p99.9"),
    (99.99, "p99.99"),
    (99.999, "p99.999"),
    (99.9999, "p99.9999"),
)


@dataclasses.dataclass(frozen=True)
class Series:
    """One (run, target) pair: a colour in every chart."""

    key: str
    name: str
    run: RunRecord
    target: str
    colour: str


# The setups of one card, each with the repetitions of the workload the card shows.
Entries = Sequence[tuple[Series, Sequence[ResultRecord]]]


def plot_text(text: str) -> str:
    """A user's string as Plotly text, shown as the report's tables show it: its control
    and invisible characters (ESC, BEL, U+202E) as escapes (report.literal), and the few
    HTML tags and entities Plotly reads in names, titles and hover text escaped."""
    return html.escape(literal(text), quote=False)


def base_layout(fig: Any, height: int) -> None:
    fig.update_layout(
        template=go.layout.Template(
            layout={
                "font": {"family": "system-ui, sans-serif", "size": 12, "color": "#1f2937"},
                "paper_bgcolor": "#ffffff",
                "plot_bgcolor": "#ffffff",
                "colorway": list(PALETTE),
                "xaxis": {"gridcolor": "#e5e7eb", "linecolor": "#9ca3af", "zeroline": False},
                "yaxis": {"gridcolor": "#e5e7eb", "linecolor": "#9ca3af", "zeroline": False},
                "hoverlabel": {"align": "left"},
            }
        ),
        height=height,
        margin={"l": 70, "r": 20, "t": 30, "b": 40},
        showlegend=False,  # one key for every chart is on the page, above the charts
        hovermode="closest",
    )


def _rate_unit(max_bytes: float) -> tuple[str, float]:
    for unit, factor in (("GiB/s", 1 << 30), ("MiB/s", 1 << 20), ("KiB/s", 1 << 10)):
        if max_bytes >= factor:
            return unit, float(factor)
    return "B/s", 1.0


def _lat_unit(max_ns: float) -> tuple[str, float]:
    for unit, factor in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if max_ns >= factor:
            return unit, factor
    return "ns", 1.0


def _ci_text(s: Summary, fmt: Callable[[float | None], str]) -> str:
    if s.ci95_low is None or s.ci95_high is None:
        return f"n={s.n}"
    return f"95 % CI {fmt(s.ci95_low)} to {fmt(s.ci95_high)}, n={s.n}"


def overview_figure(
    labels: Sequence[str], columns: Sequence[OverviewColumn], baseline: int | None = None
) -> Any | None:
    """IOPS and bandwidth of every row (``labels``, top to bottom) and setup as horizontal
    bars on linear axes from zero, so that a bar's length is its figure; values printed
    at the ends, error bars the 95 % CI from 3 repetitions on.

    With a ``baseline`` (the index of its column), each bar is the setup's figure as a
    share of the baseline's in that row, on one axis shared by every row: a bar at 40 % is
    40 % as long as the baseline's, whatever the workload; its end says both the figure and
    the share (docs/report.md, "Overview")."""
    if not any(s is not None and s.mean for c in columns for s in (*c.iops, *c.bw_bytes)):
        return None
    if baseline is not None:
        return _relative_overview(labels, columns, baseline)
    bw_top = max((s.mean or 0.0 for c in columns for s in c.bw_bytes if s is not None), default=0)
    unit, factor = _rate_unit(bw_top)
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("IOPS", f"bandwidth ({unit})"), shared_yaxes=True,
        horizontal_spacing=0.06,
    )  # fmt: skip
    for col, scale, fmt, what in (
        (1, 1.0, format_iops, "IOPS"),
        (2, factor, format_rate, "bandwidth"),
    ):
        for c in columns:
            fig.add_trace(_overview_bars(labels, c, col, scale, fmt, what), row=1, col=col)
        means = [s.mean / scale for c in columns for s in c.of(col) if s is not None and s.mean]
        fig.update_xaxes(row=1, col=col, range=[0, max(means, default=1.0) * 1.35])
        fig.update_xaxes(row=1, col=col, tickformat="~s")
    _overview_layout(fig, labels, columns)
    return fig


def _overview_layout(fig: Any, labels: Sequence[str], columns: Sequence[OverviewColumn]) -> None:
    base_layout(fig, 70 + len(labels) * (8 + 16 * len(columns)))
    fig.update_layout(barmode="group", bargap=0.2, margin={"l": 10, "r": 70})
    fig.update_yaxes(autorange="reversed", automargin=True, showgrid=False)


def _relative_overview(
    labels: Sequence[str], columns: Sequence[OverviewColumn], baseline: int
) -> Any:
    """The overview's bars as shares of the baseline's figure in each row."""
    base = columns[baseline]
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(
            f"IOPS, % of {plot_text(base.name)}'s",
            f"bandwidth, % of {plot_text(base.name)}'s",
        ),
        shared_yaxes=True,
        horizontal_spacing=0.06,
    )
    top = 1.0
    for col, fmt, what in ((1, format_iops, "IOPS"), (2, format_rate, "bandwidth")):
        bases = [None if s is None else s.mean for s in base.of(col)]
        for c in columns:
            bars = _relative_bars(labels, c, c is base, col, bases, fmt, what)
            fig.add_trace(bars, row=1, col=col)
            top = max([top, *(x for x in bars.x if x is not None)])
    for col in (1, 2):
        bases = [None if s is None else s.mean for s in base.of(col)]
        missing = [label for label, b in zip(labels, bases, strict=True) if not b]
        if missing:  # rows the baseline did not measure: said where their bars would be
            fig.add_trace(
                go.Scatter(
                    x=[0] * len(missing),
                    y=[plot_text(label) for label in missing],
                    mode="text",
                    text=["no baseline figure: not compared"] * len(missing),
                    textposition="middle right",
                    textfont={"size": 11, "color": "#6b7280"},
                    hoverinfo="skip",
                ),
                row=1,
                col=col,
            )
        fig.add_vline(x=100, line={"color": "#6b7280", "dash": "dash", "width": 1}, row=1, col=col)
        fig.update_xaxes(row=1, col=col, range=[0, top * 1.45], ticksuffix=" %", rangemode="tozero")
    _overview_layout(fig, labels, columns)
    return fig


def _relative_bars(
    labels: Sequence[str],
    c: OverviewColumn,
    is_base: bool,
    col: int,
    bases: Sequence[float | None],
    fmt: Callable[[float | None], str],
    what: str,
) -> Any:
    """One setup's bars as a share (%) of the baseline's figure in each row; none where
    the row has no baseline figure."""
    summaries = c.of(col)
    shares = [
        None if s is None or s.mean is None or not b else 100 * s.mean / b
        for s, b in zip(summaries, bases, strict=True)
    ]
    texts = [
        ""
        if share is None or s is None
        else fmt(s.mean) + ("" if is_base else f" \u00b7 {_percent(share)}")
        for share, s in zip(shares, summaries, strict=True)
    ]
    shown = [s is not None and interval_shown(s) for s in summaries]
    return go.Bar(
        orientation="h",
        y=[plot_text(label) for label in labels],
        x=shares,
        name=plot_text(c.name),
        marker_color=c.colour,
        text=texts,
        textposition="outside",
        cliponaxis=False,
        textfont={"size": 11},
        error_x={
            "type": "data",
            "symmetric": False,
            "array": [
                _err(s.ci95_high, s.mean, b / 100) if s is not None and ok and b else None
                for s, ok, b in zip(summaries, shown, bases, strict=True)
            ],
            "arrayminus": [
                _err(s.mean, s.ci95_low, b / 100) if s is not None and ok and b else None
                for s, ok, b in zip(summaries, shown, bases, strict=True)
            ],
            "visible": any(shown),
            "color": "#374151",
        },
        hovertext=[
            ""
            if s is None
            else f"{plot_text(c.name)}<br>{plot_text(label)}: {what} {fmt(s.mean)}"
            + ("" if share is None else f" ({_percent(share)} of the baseline's)")
            + f"<br>{_ci_text(s, fmt)}"
            for label, s, share in zip(labels, summaries, shares, strict=True)
        ],
        hoverinfo="text",
    )


def _percent(share: float) -> str:
    return f"{share:.0f} %" if share >= 10 else f"{share:.2g} %"


def _overview_bars(
    labels: Sequence[str],
    c: OverviewColumn,
    col: int,
    scale: float,
    fmt: Callable[[float | None], str],
    what: str,
) -> Any:
    """One setup's bars in one of the overview's two panels."""
    summaries = c.of(col)
    shown = [s is not None and interval_shown(s) for s in summaries]
    return go.Bar(
        orientation="h",
        y=[plot_text(label) for label in labels],  # Plotly reads tags in tick labels too
        x=[None if s is None or s.mean is None else s.mean / scale for s in summaries],
        name=plot_text(c.name),
        marker_color=c.colour,
        text=["" if s is None or s.mean is None else fmt(s.mean) for s in summaries],
        # Beyond the bar's end, unless error bars are there: then inside it, at its start.
        textposition="auto" if any(shown) else "outside",
        insidetextanchor="start",
        insidetextfont={"color": "#ffffff"},
        cliponaxis=False,
        textfont={"size": 11},
        error_x={
            "type": "data",
            "symmetric": False,
            "array": [
                _err(s.ci95_high, s.mean, scale) if s is not None and ok else None
                for s, ok in zip(summaries, shown, strict=True)
            ],
            "arrayminus": [
                _err(s.mean, s.ci95_low, scale) if s is not None and ok else None
                for s, ok in zip(summaries, shown, strict=True)
            ],
            "visible": any(shown),
            "color": "#374151",
        },
        hovertext=[
            ""
            if s is None
            else f"{plot_text(c.name)}<br>{plot_text(label)}: {what} {fmt(s.mean)}"
            f"<br>{_ci_text(s, fmt)}"
            for label, s in zip(labels, summaries, strict=True)
        ],
        hoverinfo="text",
    )


@dataclasses.dataclass(frozen=True)
class OverviewColumn:
    """One setup's bars in the overview chart: a summary per row, None where it has none."""

    name: str
    colour: str
    iops: Sequence[Summary | None]
    bw_bytes: Sequence[Summary | None]

    def of(self, col: int) -> Sequence[Summary | None]:
        return self.iops if col == 1 else self.bw_bytes


# Values spanning this factor or more get a logarithmic axis.
LOG_SPAN = 10.0


def spans_orders(values: Sequence[float]) -> bool:
    """Whether positive ``values`` span LOG_SPAN or more: an axis for them is logarithmic,
    or the smaller ones are invisible beside the larger."""
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) >= LOG_SPAN


def _err(high: float | None, low: float | None, scale: float) -> float | None:
    return None if high is None or low is None else (high - low) / scale


def nines(p: float) -> float:
    """A percentile as its number of nines: p90 -> 1, p99 -> 2, p99.9 -> 3."""
    return -math.log10(1 - p / 100)


def percentile_grid(n: int) -> list[float]:
    """Percentiles evenly spaced in nines, up to what ``n`` samples can show, with fio's
    usual ones among them (so hovering at p99 shows fio's p99)."""
    top = min(math.log10(n), MAX_NINES) if n > 1 else NINES_STEP
    ps = {round(100 * (1 - 10 ** -(i * NINES_STEP)), 7) for i in range(1, int(top / NINES_STEP))}
    ps.update(p for p in PERCENTILES if nines(p) <= top)
    return sorted(p for p in ps if 0 < p < 100)


def latency_curve(bins: dict[int, int]) -> list[tuple[float, float]]:
    """(percentile, ns) pairs from histogram bins, with the inside of each plateau dropped
    (a straight line between its ends draws the same curve) except fio's usual percentiles."""
    n = sum(bins.values())
    points = percentiles_from_bins(bins, percentile_grid(n)) if n else []
    return [
        pt
        for i, pt in enumerate(points)
        if i in (0, len(points) - 1)
        or pt[0] in PERCENTILES
        or not (points[i - 1][1] == pt[1] == points[i + 1][1])
    ]


def _listed_curves(secs: Sequence[dict[str, Any]]) -> tuple[list[list[tuple[float, float]]], Any]:
    """Without histogram bins (fio's plain ``json``): each repetition's own percentile list,
    as fio stated it, and which latency it is; percentiles are never averaged."""
    curves = []
    kind = None
    for sec in secs:
        points = []
        for p in PERCENTILES:
            (value,), found = latency_field([sec], percentile_key(p))
            if value is not None and p >= 50:
                points.append((p, float(value)))
                kind = kind or found
        if len(points) >= 2:
            curves.append(points)
    return curves, kind


def latency_figure(entries: Entries) -> Any | None:
    """Latency percentile curves from the merged histograms: x in nines, y log latency.
    Where no histogram was stored, each repetition's listed percentiles (markers), marked."""
    fig = go.Figure()
    top_nines = 0.0
    low, high = math.inf, 0.0
    completion = listed = False
    for s, reps in entries:
        several = len(reps) > 1
        for d in DIRECTIONS:
            secs = sections(reps, d)
            bins, kind = merged_bins(secs)
            curves = [latency_curve(bins)] if bins else []
            from_list = not curves
            if from_list:
                curves, kind = _listed_curves(secs)
            for i, curve in enumerate(c for c in curves if c):
                xs = [nines(p) for p, _ in curve]
                ys = [v for _, v in curve]
                top_nines = max(top_nines, xs[-1])
                low, high = min(low, min(ys)), max(high, max(ys))
                completion = completion or kind == "clat"
                listed = listed or from_list
                name = plot_text(s.name)
                label = f"{name} {d}" + (f" #{i + 1}" if from_list and several else "")
                if kind == "clat":  # say which curve it is when curves of both kinds mix
                    label += " (completion latency)"
                how = " (fio's percentile list)" if from_list else ""
                fig.add_trace(
                    go.Scatter(
                        x=xs,
                        y=ys,
                        mode="lines+markers" if from_list else "lines",
                        marker={"size": 6},
                        name=label,
                        line={"color": s.colour, "dash": _DASH[d], "width": 2},
                        hovertext=[f"{label}<br>p{p:g}: {format_ns(v)}{how}" for p, v in curve],
                        hoverinfo="text",
                    )
                )
    if not fig.data:
        return None
    notes = []
    if listed:
        notes.append("dots: fio's own percentiles (no histogram)")
    if completion:
        notes.append("completion latency (no total-latency percentiles)")
    if notes:
        fig.add_annotation(
            text=" · ".join(notes),
            xref="paper",
            yref="paper",
            x=0,
            y=1,
            xanchor="left",
            yanchor="bottom",
            showarrow=False,
            font={"size": 11, "color": "#6b7280"},
        )
    ticks = [(nines(p), t) for p, t in _NINES_TICKS]
    ticks = [(x, t) for x, t in ticks if x <= top_nines + 0.01]
    base_layout(fig, 340)
    fig.update_layout(
        xaxis={
            "title": {"text": "percentile (nines scale)"},
            "tickvals": [x for x, _ in ticks],
            "ticktext": [t for _, t in ticks],
            "range": [0, top_nines * 1.02],
        },
        yaxis={"title": {"text": "latency"}, "type": "log", **_log_ticks(low, high)},
    )
    return fig


def _log_ticks(
    low: float, high: float, fmt: Callable[[float | None], str] = format_ns
) -> dict[str, Any]:
    """Tick values and labels (``100 µs``, ``1 ms``; or ``fmt``'s) for a log axis."""
    lo = math.floor(math.log10(max(low, 1e-9)))
    hi = math.ceil(math.log10(max(high, 1e-9)))
    steps = (1, 2, 5) if hi - lo <= 3 else (1,)
    vals = [m * 10.0**e for e in range(lo, hi + 1) for m in steps]
    vals = [v for v in vals if low / 2 <= v <= high * 2]
    # Ticks are round by construction: 2 ms, 10k, not 2.00 ms, 10.0k.
    return {"tickvals": vals, "ticktext": [plain_figure(fmt(v)) for v in vals]}


def _padded_log_axis(
    values: Sequence[float],
    fmt: Callable[[float | None], str] = format_ns,
    marks: Sequence[float] = (),
    scale: float = 1.0,
) -> dict[str, Any]:
    """A log axis over ``values`` (in units of ``scale``) with room above and below, so
    that no point sits on an edge, and a labelled tick at each of ``marks`` (a limit, a
    plateau) besides the round ones."""
    positive = [v for v in (*values, *marks) if v and v > 0]
    if not positive:
        return {"type": "log"}
    low, high = math.log10(min(positive)), math.log10(max(positive))
    pad = max(0.15, 0.1 * (high - low))
    ticks = _log_ticks(
        min(positive), max(positive), lambda v: fmt(None if v is None else v * scale)
    )
    vals = list(ticks["tickvals"])
    text = list(ticks["ticktext"])
    for m in marks:  # a round tick within 25 % gives way to the mark's own
        keep = [i for i, v in enumerate(vals) if abs(math.log10(v / m)) > 0.1]
        vals, text = [vals[i] for i in keep], [text[i] for i in keep]
        vals.append(m)
        text.append(plain_figure(fmt(m * scale)))
    order = sorted(range(len(vals)), key=vals.__getitem__)
    return {
        "type": "log",
        "range": [low - pad, high + pad],
        "tickvals": [vals[i] for i in order],
        "ticktext": [text[i] for i in order],
    }


def timeline_figure(entries: Entries) -> Any | None:
    """Per-second IOPS and mean latency from fio's interval logs (the bandwidth of each
    second is in the IOPS point's hover text). An axis whose values span 10x or more (a
    disk beside RAM) is logarithmic."""
    lines = []
    for s, reps in entries:
        for r in reps:
            for d in DIRECTIONS:
                samples = (r.samples or {}).get(d)
                if samples and samples.get("t_s"):
                    lines.append((s, r.repetition, d, samples))
    if not lines:
        return None
    axes = {
        key: _series_axis([v for *_, x in lines for v in x.get(key) or [] if v], fmt)
        for key, fmt in (("iops", format_iops), ("lat_mean_ns", format_ns))
    }
    lat_title = "mean latency" + (f" ({axes['lat_mean_ns'][2]})" if axes["lat_mean_ns"][2] else "")
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.12,
        subplot_titles=("IOPS", lat_title),
    )
    several = {(s.key, d) for s, rep, d, _ in lines if rep > 1}
    for s, rep, d, samples in lines:
        name = plot_text(s.name)
        label = f"{name} {d}" + (f" #{rep}" if (s.key, d) in several else "")
        t = samples["t_s"]
        bws = samples.get("bw_bytes") or [None] * len(t)
        for row, key, fmt in ((1, "iops", format_iops), (2, "lat_mean_ns", format_ns)):
            values = samples.get(key) or [None] * len(t)
            hover = [f"{label}<br>{ts:g} s: {fmt(v)}" for ts, v in zip(t, values, strict=False)]
            if key == "iops":
                hover = [f"{h}, {format_rate(b)}" for h, b in zip(hover, bws, strict=False)]
            scale = axes[key][0]
            fig.add_trace(
                go.Scatter(
                    x=t,
                    y=[None if v is None else v / scale for v in values],
                    # markers too: a short run may have a single one-second sample
                    mode="lines+markers",
                    marker={"size": 4},
                    name=f"{name} {d}",
                    line={"color": s.colour, "dash": _DASH[d], "width": 1.5},
                    hovertext=hover,
                    hoverinfo="text",
                ),
                row=row,
                col=1,
            )
    base_layout(fig, 340)
    span = max(t for *_, x in lines for t in x["t_s"])
    fig.update_xaxes(tick0=0, dtick=tick_step_s(span))  # whole seconds, about 10 ticks
    fig.update_xaxes(title_text="seconds since the end of the ramp", row=2, col=1)
    for row, key in ((1, "iops"), (2, "lat_mean_ns")):
        fig.update_yaxes(row=row, col=1, **axes[key][1])
    return fig


def _series_axis(
    values: Sequence[float], fmt: Callable[[float | None], str]
) -> tuple[float, dict[str, Any], str]:
    """How a per-second panel shows ``values``: (the scale they are divided by, the axis,
    the unit its title names). Logarithmic when they span LOG_SPAN or more; else linear
    from zero, latency in the unit of its largest value."""
    positive = [v for v in values if v > 0]
    if spans_orders(positive):
        return 1.0, {"type": "log", **_log_ticks(min(positive), max(positive), fmt)}, ""
    if fmt is format_ns:
        unit, factor = _lat_unit(max(positive, default=0.0))
        return factor, {"rangemode": "tozero"}, unit
    return 1.0, {"rangemode": "tozero", "tickformat": "~s"}, ""


def tick_step_s(span_s: float) -> float:
    """A tick step in whole seconds (1, 2, 5, 10, 20, 50 ...) giving at most 12 ticks."""
    step = 1.0
    while span_s / step > 12:
        for factor in (2, 2.5, 2):  # 1 -> 2 -> 5 -> 10 -> 20 -> 50 ...
            step *= factor
            if span_s / step <= 12:
                break
    return step


# -- curves and limits (sweep, characterize, orion-simple) ------------------------------------


def _log2_axis(
    values: Sequence[float], title: str, fmt: Callable[[int], str] = str
) -> dict[str, Any]:
    """A log axis with a tick at each power of two in ``values``' range, labelled ``fmt``."""
    low, high = max(min(values), 1), max(values)
    ticks = [2**k for k in range(int(math.log2(low)), math.ceil(math.log2(high)) + 1)]
    return {
        "type": "log",
        "title": {"text": title},
        "tickvals": ticks,
        "ticktext": [fmt(t) for t in ticks],
    }


def hockey_figure(cs: Sequence[Any]) -> Any | None:
    """IOPS (left) and latency (right, mean solid and p99 dotted) against outstanding IO,
    one colour per block size: where the IOPS flatten, only latency grows."""
    cs = [c for c in cs if len(c.points) >= 2]
    if not cs:
        return None
    fig = make_subplots(rows=1, cols=2, subplot_titles=("IOPS", "latency"), horizontal_spacing=0.12)
    lat_values: list[float] = []
    for i, c in enumerate(cs):
        colour = PALETTE[i % len(PALETTE)]
        name = f"{format_size_short(c.bs)}" + (f" x{c.numjobs}" if c.numjobs > 1 else "")
        xs = [p.outstanding for p in c.points]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[p.iops for p in c.points],
                mode="lines+markers",
                name=name,
                line={"color": colour, "width": 2},
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [p.iops_high - p.iops for p in c.points],
                    "arrayminus": [p.iops - p.iops_low for p in c.points],
                    "color": colour,
                    "thickness": 1,
                },
                hovertext=[
                    f"{name} QD{p.iodepth}x{p.numjobs}<br>{format_iops(p.iops)} IOPS, "
                    f"{format_rate(p.bw_bytes)}" + (" (knee)" if p is c.knee else "")
                    for p in c.points
                ],
                hoverinfo="text",
            ),
            row=1,
            col=1,
        )
        for key, dash, what in (("lat_mean_ns", "solid", "mean"), ("lat_p99_ns", "dot", "p99")):
            ys = [getattr(p, key) for p in c.points]
            lat_values += [y for y in ys if y]
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines+markers",
                    name=f"{name} {what}",
                    line={"color": colour, "dash": dash, "width": 1.5},
                    marker={"size": 5},
                    hovertext=[
                        f"{name} QD{p.iodepth}x{p.numjobs}<br>{what} latency {format_ns(y)}"
                        for p, y in zip(c.points, ys, strict=True)
                    ],
                    hoverinfo="text",
                ),
                row=1,
                col=2,
            )
    base_layout(fig, 360)
    fig.update_layout(showlegend=True, legend={"orientation": "h", "y": -0.25})
    outstanding = [p.outstanding for c in cs for p in c.points]
    fig.update_xaxes(**_log2_axis(outstanding, "outstanding IOs (iodepth x jobs)"))
    top = max(p.iops_high for c in cs for p in c.points)
    fig.update_yaxes(range=[0, top * 1.12], row=1, col=1)  # nothing on the top edge
    if lat_values:
        fig.update_yaxes(row=1, col=2, **_padded_log_axis(lat_values))
    return fig


@dataclasses.dataclass(frozen=True)
class HeatCell:
    text: str  # the IOPS, formatted
    background: str  # "#rrggbb"; "" for a point not measured
    dark: bool  # light text on it


@dataclasses.dataclass(frozen=True)
class HeatTable:
    """IOPS by block size (rows) and queue depth (columns), shaded by IOPS on a log scale:
    a table, not a chart, so it prints and reads without JavaScript."""

    depths: list[str]  # the columns' headings
    rows: list[tuple[str, list[HeatCell]]]
    corner: str = "block size"  # what the rows are


_HEAT_LOW, _HEAT_HIGH = (0xEF, 0xF6, 0xFF), (0x1E, 0x40, 0xAF)


def _shade(share: float) -> tuple[str, bool]:
    rgb = [round(a + (b - a) * share) for a, b in zip(_HEAT_LOW, _HEAT_HIGH, strict=True)]
    return "#" + "".join(f"{c:02x}" for c in rgb), share > 0.55


def heat_table(cs: Sequence[Any]) -> HeatTable | None:
    """The whole 2-D sweep at a glance; None when it has a single block size or depth."""
    sizes = sorted({c.bs for c in cs})
    depths = sorted({p.iodepth for c in cs for p in c.points})
    if len(sizes) < 2 or len(depths) < 2:
        return None
    by = {(c.bs, p.iodepth): p.iops for c in cs for p in c.points}
    rows = [(format_size_short(b), [by.get((b, d)) for d in depths]) for b in sizes]
    return shaded_table([f"QD{d}" for d in depths], rows)


def shaded_table(
    columns: list[str],
    rows: Sequence[tuple[str, Sequence[float | None]]],
    corner: str = "block size",
) -> HeatTable:
    """IOPS in rows and columns, each cell shaded by its IOPS on a log scale ("-": not
    measured)."""
    found = [v for _, values in rows for v in values if v and v > 0]
    low, high = (math.log10(min(found)), math.log10(max(found))) if found else (0.0, 0.0)
    out = []
    for label, values in rows:
        cells = []
        for v in values:
            if v is None or v <= 0:
                cells.append(HeatCell("-" if v is None else format_iops(v), "", False))
                continue
            share = (math.log10(v) - low) / (high - low) if high > low else 1.0
            colour, dark = _shade(share)
            cells.append(HeatCell(format_iops(v), colour, dark))
        out.append((label, cells))
    return HeatTable(columns, out, corner)


def limits_figure(lim: Any) -> Any | None:
    """IOPS and bandwidth against block size, with the inferred limits and the model
    ``min(iops_limit, bw_limit / bs)`` drawn, and the crossover marked."""
    if len(lim.table) < 2:
        return None
    sizes = [b.bs for b in lim.table]
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("IOPS", "bandwidth"), horizontal_spacing=0.12
    )
    _add_measured(fig, lim, sizes)
    if lim.iops and lim.bw_bytes:
        _add_model(fig, lim, sizes)
    for col, est in ((1, lim.iops), (2, lim.bw_bytes)):
        if est is not None:
            fig.add_hline(
                y=est.value,
                line={"color": PALETTE[2], "dash": "dash", "width": 1.5},
                row=1,
                col=col,
            )
    x_title = "block size"
    if lim.crossover_bs is not None:
        x_title += f" (crossover {format_bytes(round(lim.crossover_bs.value))}, dotted)"
        for col in (1, 2):
            fig.add_vline(
                x=lim.crossover_bs.value,
                line={"color": PALETTE[1], "dash": "dot", "width": 1.5},
                row=1,
                col=col,
            )
    _limits_axes(fig, lim, sizes, x_title)
    return fig


def _add_measured(fig: Any, lim: Any, sizes: Sequence[int]) -> None:
    """What each block size delivered: IOPS on the left, bandwidth on the right."""
    colour = PALETTE[0]
    for col, values, fmt in (
        (1, [b.iops for b in lim.table], format_iops),
        (2, [b.bw_bytes for b in lim.table], format_rate),
    ):
        fig.add_trace(
            go.Scatter(
                x=sizes,
                y=values,
                mode="markers+lines",
                name="measured",
                line={"color": colour, "width": 2},
                marker={"size": 8},
                hovertext=[
                    f"{format_size_short(b.bs)}: {fmt(v)}, {b.binds} binds"
                    for b, v in zip(lim.table, values, strict=True)
                ],
                hoverinfo="text",
            ),
            row=1,
            col=col,
        )


def _add_model(fig: Any, lim: Any, sizes: Sequence[int]) -> None:
    """The two-limit model ``min(iops_limit, bw_limit / bs)`` over the measured block sizes
    and the powers of two between them, dotted."""
    grid = sorted({*sizes, *(2**k for k in range(9, 27) if min(sizes) <= 2**k <= max(sizes))})
    model = [min(lim.iops.value, lim.bw_bytes.value / bs) for bs in grid]
    for col, ys, fmt in (
        (1, model, format_iops),
        (2, [m * bs for m, bs in zip(model, grid, strict=True)], format_rate),
    ):
        fig.add_trace(
            go.Scatter(
                x=grid,
                y=ys,
                mode="lines",
                name="model min(IOPS limit, bandwidth limit / bs)",
                line={"color": "#6b7280", "dash": "dot", "width": 1.5},
                hovertext=[
                    f"model at {format_size_short(b)}: {fmt(y)}"
                    for b, y in zip(grid, ys, strict=True)
                ],
                hoverinfo="text",
            ),
            row=1,
            col=col,
        )


def _limits_axes(fig: Any, lim: Any, sizes: Sequence[int], x_title: str) -> None:
    """Subplot titles naming the limits, the layout, and log axes with readable ticks."""
    titles = (
        "IOPS" + (f" (limit {format_iops(lim.iops.value)}, dashed)" if lim.iops else ""),
        "bandwidth"
        + (f" (limit {format_rate(lim.bw_bytes.value)}, dashed)" if lim.bw_bytes else ""),
    )
    for annotation, text in zip(fig.layout.annotations, titles, strict=False):
        annotation.text = text
    base_layout(fig, 360)
    fig.update_xaxes(**_log2_axis(sizes, x_title, format_size_short))
    # The limits get ticks of their own: a plateau read against its limit, not between
    # two round ticks an octave apart; and no point on an edge.
    iops = [b.iops for b in lim.table]
    marks = [lim.iops.value] if lim.iops else []
    fig.update_yaxes(row=1, col=1, **_padded_log_axis(iops, format_iops, marks))
    bw = [b.bw_bytes / MIB for b in lim.table]
    marks = [lim.bw_bytes.value / MIB] if lim.bw_bytes else []
    axis = _padded_log_axis(bw, format_rate, marks, scale=MIB)
    axis["tickvals"] = [v * MIB for v in axis["tickvals"]]  # the traces are in bytes/s
    axis["range"] = [r + math.log10(MIB) for r in axis["range"]]
    fig.update_yaxes(row=1, col=2, **axis)


def scaling_figure(points_by: Mapping[tuple[str, str], Sequence[Any]]) -> Any | None:
    """Aggregate IOPS against the number of clients, one line per workload and direction,
    beside the ideal (the fewest clients' per-client IOPS times the count), with the
    per-client IOPS and the efficiency on hover."""
    if not points_by:
        return None
    fig = go.Figure()
    for i, ((workload, d), points) in enumerate(points_by.items()):
        colour = PALETTE[i % len(PALETTE)]
        name = plot_text(f"{workload} {d}")
        xs = [p.clients for p in points]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[p.iops for p in points],
                mode="lines+markers",
                name=name,
                line={"color": colour, "width": 2},
                hovertext=[
                    f"{name}, {p.clients} client(s)<br>aggregate {format_iops(p.iops)} IOPS, "
                    f"{format_iops(p.per_client)} per client"
                    + ("" if p.efficiency is None else f", efficiency {p.efficiency:.0%}")
                    for p in points
                ],
                hoverinfo="text",
            )
        )
        base = points[0].per_client
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[base * k for k in xs],
                mode="lines",
                name=f"{name} ideal",
                line={"color": colour, "dash": "dot", "width": 1},
                hovertext=[f"{name}: ideal {format_iops(base * k)} IOPS" for k in xs],
                hoverinfo="text",
            )
        )
    base_layout(fig, 360)
    fig.update_layout(
        showlegend=True,
        legend={"orientation": "h", "y": -0.25},
        xaxis={"title": {"text": "clients"}, "dtick": 1},
        yaxis={"title": {"text": "aggregate IOPS (dotted: linear scaling)"}, "rangemode": "tozero"},
    )
    return fig
