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
from collections.abc import Callable, Sequence
from typing import Any

import plotly.graph_objects as go  # type: ignore[import-untyped]
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from iobench.analysis.histogram import percentiles_from_bins
from iobench.analysis.results import latency_field, merged_bins, sections
from iobench.analysis.stats import Summary, summarize
from iobench.model import DIRECTIONS, PERCENTILES, percentile_key
from iobench.store.repository import ResultRecord, RunRecord
from iobench.units import format_iops, format_ns, format_rate

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
    """A user's string as Plotly text: Plotly reads a few HTML tags and entities in names,
    titles and hover text, so escape them to show the string as it is."""
    return html.escape(text, quote=False)


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


def bars_figure(entries: Entries) -> Any | None:
    """IOPS and bandwidth per direction, a bar per setup; error bars are the 95 % CI."""
    per: list[tuple[Series, list[str], list[Summary], list[Summary]]] = []
    for s, reps in entries:
        dirs: list[str] = []
        iops: list[Summary] = []
        bw: list[Summary] = []
        for d in DIRECTIONS:
            secs = sections(reps, d)
            if secs:
                dirs.append(d)
                iops.append(summarize([x.get("iops") for x in secs]))
                bw.append(summarize([x.get("bw_bytes") for x in secs]))
        if dirs:
            per.append((s, dirs, iops, bw))
    if not per:
        return None
    top = max((b.ci95_high or b.mean or 0.0) for _, _, _, bws in per for b in bws)
    unit, factor = _rate_unit(top)
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("IOPS", f"bandwidth ({unit})"), horizontal_spacing=0.14
    )
    for s, dirs, iops, bw in per:
        for col, summaries, scale, fmt, what in (
            (1, iops, 1.0, format_iops, "IOPS"),
            (2, bw, factor, format_rate, "bandwidth"),
        ):
            means = [None if x.mean is None else x.mean / scale for x in summaries]
            fig.add_trace(
                go.Bar(
                    x=dirs,
                    y=means,
                    name=plot_text(s.name),
                    marker_color=s.colour,
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": [_err(x.ci95_high, x.mean, scale) for x in summaries],
                        "arrayminus": [_err(x.mean, x.ci95_low, scale) for x in summaries],
                        "visible": any(x.ci95_low is not None for x in summaries),
                        "color": "#374151",
                    },
                    hovertext=[
                        f"{plot_text(s.name)}<br>{d}: {what} {fmt(x.mean)}<br>{_ci_text(x, fmt)}"
                        for d, x in zip(dirs, summaries, strict=True)
                    ],
                    hoverinfo="text",
                ),
                row=1,
                col=col,
            )
    base_layout(fig, 340)
    fig.update_layout(barmode="group", bargap=0.25)
    return fig


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


def _log_ticks(low: float, high: float) -> dict[str, Any]:
    """Tick values (ns) and labels (``100 µs``, ``1 ms``) for a log latency axis."""
    lo = math.floor(math.log10(max(low, 1.0)))
    hi = math.ceil(math.log10(max(high, 1.0)))
    steps = (1, 2, 5) if hi - lo <= 3 else (1,)
    vals = [m * 10.0**e for e in range(lo, hi + 1) for m in steps]
    vals = [v for v in vals if low / 2 <= v <= high * 2]
    return {"tickvals": vals, "ticktext": [format_ns(v) for v in vals]}


def timeline_figure(entries: Entries) -> Any | None:
    """Per-second IOPS, bandwidth and mean latency from fio's interval logs."""
    lines = []
    for s, reps in entries:
        for r in reps:
            for d in DIRECTIONS:
                samples = (r.samples or {}).get(d)
                if samples and samples.get("t_s"):
                    lines.append((s, r.repetition, d, samples))
    if not lines:
        return None
    bw_top = max((v or 0.0) for *_, x in lines for v in x.get("bw_bytes") or [])
    lat_top = max((v or 0.0) for *_, x in lines for v in x.get("lat_mean_ns") or [])
    bw_unit, bw_factor = _rate_unit(bw_top)
    lat_unit, lat_factor = _lat_unit(lat_top)
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.07,
        subplot_titles=("IOPS", f"bandwidth ({bw_unit})", f"mean latency ({lat_unit})"),
    )
    several = {(s.key, d) for s, rep, d, _ in lines if rep > 1}
    for s, rep, d, samples in lines:
        name = plot_text(s.name)
        label = f"{name} {d}" + (f" #{rep}" if (s.key, d) in several else "")
        t = samples["t_s"]
        for row, key, scale, fmt in (
            (1, "iops", 1.0, format_iops),
            (2, "bw_bytes", bw_factor, format_rate),
            (3, "lat_mean_ns", lat_factor, format_ns),
        ):
            values = samples.get(key) or [None] * len(t)
            fig.add_trace(
                go.Scatter(
                    x=t,
                    y=[None if v is None else v / scale for v in values],
                    # markers too: a short run may have a single one-second sample
                    mode="lines+markers",
                    marker={"size": 4},
                    name=f"{name} {d}",
                    line={"color": s.colour, "dash": _DASH[d], "width": 1.5},
                    hovertext=[
                        f"{label}<br>{ts:g} s: {fmt(v)}" for ts, v in zip(t, values, strict=False)
                    ],
                    hoverinfo="text",
                ),
                row=row,
                col=1,
            )
    base_layout(fig, 560)
    span = max(t for *_, x in lines for t in x["t_s"])
    fig.update_xaxes(tick0=0, dtick=tick_step_s(span))  # whole seconds, about 10 ticks
    fig.update_xaxes(title_text="seconds since the end of the ramp", row=3, col=1)
    fig.update_yaxes(rangemode="tozero")
    return fig


def tick_step_s(span_s: float) -> float:
    """A tick step in whole seconds (1, 2, 5, 10, 20, 50 ...) giving at most 12 ticks."""
    step = 1.0
    while span_s / step > 12:
        for factor in (2, 2.5, 2):  # 1 -> 2 -> 5 -> 10 -> 20 -> 50 ...
            step *= factor
            if span_s / step <= 12:
                break
    return step
