"""The HTML report: one self-contained file that works offline (docs/report.md).

Tables are rendered by Jinja2 with autoescaping on and need no JavaScript. Charts are
Plotly figures built here, serialised to JSON and embedded in ``<script
type="application/json">`` blocks in which every ``<``, ``>`` and ``&`` is written as a
``\\u003c``-style escape, so no string can end the block; a small inline script hands each
block to ``Plotly.newPlot``. plotly.js is inlined once. The page loads nothing from anywhere.

The table model (:func:`run_lines`, :func:`result_lines`, :func:`compare_lines`) holds
formatted, unescaped strings; the Markdown report uses it too.
"""

from __future__ import annotations

import dataclasses
import html
import json
import math
import re
import shlex
from collections.abc import Callable, Sequence
from typing import Any

import jinja2
import plotly.graph_objects as go  # type: ignore[import-untyped]
import plotly.offline  # type: ignore[import-untyped]
from markupsafe import Markup
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from iobench.analysis.compare import Comparison, Setup
from iobench.analysis.histogram import merge_bins, percentiles_from_bins
from iobench.analysis.stats import UNSTABLE_CV_PCT, Summary, summarize
from iobench.model import DIRECTIONS, PERCENTILES
from iobench.report.compare import format_ratio
from iobench.report.context import host_lines, target_lines
from iobench.store.repository import ResultRecord, RunRecord
from iobench.units import format_iops, format_ns, format_rate, format_size_short

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
TIMES = "\u00d7"  # the multiplication sign, as in QD32x4
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

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("iobench.report", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


# -- table model ------------------------------------------------------------------------------


def run_title(run: RunRecord) -> str:
    return f"run {run.id}" + (f" ({run.label})" if run.label else "")


def workload_shape(params: dict[str, Any]) -> str:
    """``randread 4k QD32x4`` (with a multiplication sign); ``randrw 70/30 8k QD16x2``."""
    rw = str(params.get("rw", "?"))
    mix = params.get("rwmixread")
    if mix is not None and rw in ("rw", "readwrite", "randrw"):
        rw += f" {mix}/{100 - int(mix)}"
    bs = params.get("bs")
    size = format_size_short(bs) if isinstance(bs, int) else str(bs)
    return f"{rw} {size} QD{params.get('iodepth', '?')}{TIMES}{params.get('numjobs', '?')}"


def format_summary(s: Summary, fmt: Callable[[float | None], str]) -> str:
    """``5.84k ±1.2 %``: the mean and the 95 % CI half-width relative to it (n > 1)."""
    if s.mean is None:
        return "-"
    half = s.ci95_half_width
    if half is None or s.mean == 0:
        return fmt(s.mean)
    return f"{fmt(s.mean)} ±{100 * half / abs(s.mean):.1f} %"


def _unstable(iops: Summary) -> bool:
    """The repetitions' IOPS vary by more than UNSTABLE_CV_PCT (as `iobench compare` says)."""
    return iops.cv_pct is not None and iops.cv_pct > UNSTABLE_CV_PCT


@dataclasses.dataclass(frozen=True)
class RunLine:
    run_id: int
    label: str | None
    suite: str
    status: str
    fio_version: str
    host: str
    targets: str
    started: str
    results: int  # results that finished, repetitions included
    warnings: int


def run_lines(runs: Sequence[RunRecord]) -> list[RunLine]:
    return [
        RunLine(
            run_id=run.id,
            label=run.label,
            suite=run.suite,
            status=run.status,
            fio_version=run.fio_version or "-",
            host=str(run.host.get("hostname") or "-"),
            targets=", ".join(t.spec for t in run.targets) or "-",
            started=run.started_at.replace("T", " ")[:19],
            results=sum(1 for r in run.results if r.status == "ok"),
            warnings=len(run.warnings),
        )
        for run in runs
    ]


@dataclasses.dataclass(frozen=True)
class ResultLine:
    target: str
    workload: str
    shape: str
    direction: str
    n: int  # repetitions
    iops: str
    bandwidth: str
    lat_mean: str
    lat_p99: str
    unstable: bool  # the IOPS vary by more than UNSTABLE_CV_PCT


def result_lines(run: RunRecord) -> list[ResultLine]:
    """Per target, workload and direction of one run: the repetitions summarised."""
    out = []
    for target, workload, reps in _groups(run):
        for d in DIRECTIONS:
            sections = [s for s in (_section(r, d) for r in reps) if s]
            if not sections:
                continue
            iops = summarize([s.get("iops") for s in sections])
            bw = summarize([s.get("bw_bytes") for s in sections])
            lats = [_latency(s) for s in sections]
            out.append(
                ResultLine(
                    target=target,
                    workload=workload,
                    shape=workload_shape(reps[0].params),
                    direction=d,
                    n=len(sections),
                    iops=format_summary(iops, format_iops),
                    bandwidth=format_summary(bw, format_rate),
                    lat_mean=format_summary(summarize([x.get("mean") for x in lats]), format_ns),
                    lat_p99=_p99_text(reps, d),
                    unstable=_unstable(iops),
                )
            )
    return out


@dataclasses.dataclass(frozen=True)
class FailedLine:
    target: str
    workload: str
    repetition: int
    error: str  # the first line of the error


def failed_lines(run: RunRecord) -> list[FailedLine]:
    """Every result that failed, with the first line of its error."""
    return [
        FailedLine(
            target=r.target,
            workload=r.workload,
            repetition=r.repetition,
            error=((r.error or "").strip().splitlines() or ["no result"])[0],
        )
        for r in run.results
        if r.status != "ok" or r.metrics is None
    ]


def _p99_text(reps: Sequence[ResultRecord], direction: str) -> str:
    """p99 of the repetitions' merged histogram; the mean of their p99s without bins."""
    bins, kind = merged_bins(reps, direction)
    if kind == "lat":
        found = percentiles_from_bins(bins, [99.0])
        if found:
            return format_ns(found[0][1])
    values = [_latency(s).get("p99") for s in (_section(r, direction) for r in reps) if s]
    return format_summary(summarize(values), format_ns)


@dataclasses.dataclass(frozen=True)
class CompareLine:
    workload: str
    direction: str
    shape: str
    setup: str  # Setup.name
    iops: str
    iops_ratio: str
    bandwidth: str
    bw_ratio: str
    lat_mean: str
    lat_ratio: str
    lat_p99: str
    verdict: str
    unstable: bool
    span: int  # how many lines this workload has, on its first line; 0 on the others
    baseline: bool


def compare_lines(comparison: Comparison) -> list[CompareLine]:
    names = {s.key: s.name for s in comparison.setups}
    out = []
    for row in comparison.rows:
        for i, c in enumerate(row.cells):
            p99 = c.lat_p99_merged_ns
            out.append(
                CompareLine(
                    workload=row.workload,
                    direction=row.direction,
                    shape=workload_shape(row.params),
                    setup=names.get(c.setup, c.setup),
                    iops=format_summary(c.iops, format_iops),
                    iops_ratio="" if c.verdict == "baseline" else format_ratio(c.iops_ratio),
                    bandwidth=format_summary(c.bw_bytes, format_rate),
                    bw_ratio="" if c.verdict == "baseline" else format_ratio(c.bw_ratio),
                    lat_mean=format_summary(c.lat_mean_ns, format_ns),
                    lat_ratio="" if c.verdict == "baseline" else format_ratio(c.lat_mean_ratio),
                    lat_p99=format_ns(p99) if p99 is not None else format_ns(c.lat_p99_ns.mean),
                    verdict=c.verdict,
                    unstable=_unstable(c.iops),
                    span=len(row.cells) if i == 0 else 0,
                    baseline=c.setup == comparison.baseline,
                )
            )
    return out


def verdict_counts(comparison: Comparison) -> list[tuple[str, dict[str, int]]]:
    """Per setup other than the baseline: how many rows got each verdict."""
    out = []
    for s in comparison.setups:
        if s.key == comparison.baseline:
            continue
        counts: dict[str, int] = {}
        for row in comparison.rows:
            for c in row.cells:
                if c.setup == s.key:
                    counts[c.verdict] = counts.get(c.verdict, 0) + 1
        out.append((s.name, counts))
    return out


# -- grouping results -------------------------------------------------------------------------


def _section(r: ResultRecord, direction: str) -> dict[str, Any] | None:
    section = (r.metrics or {}).get(direction)
    return section if isinstance(section, dict) and section else None


def _latency(section: dict[str, Any]) -> dict[str, Any]:
    """Total latency; completion latency when fio gave no total (as everywhere else)."""
    lat = section.get("lat_ns") or section.get("clat_ns")
    return lat if isinstance(lat, dict) else {}


def _ok(run: RunRecord, target: str | None = None) -> list[ResultRecord]:
    return [
        r
        for r in run.results
        if r.status == "ok" and r.metrics is not None and (target is None or r.target == target)
    ]


def _groups(run: RunRecord, target: str | None = None) -> list[tuple[str, str, list[ResultRecord]]]:
    """(target, workload, repetitions) in target order, then suite order."""
    order = {t.spec: t.position for t in run.targets}
    found: dict[tuple[str, str], list[ResultRecord]] = {}
    for r in _ok(run, target):
        found.setdefault((r.target, r.workload), []).append(r)
    keys = sorted(
        found,
        key=lambda k: (order.get(k[0], len(order)), min(r.position for r in found[k])),
    )
    return [(t, w, sorted(found[(t, w)], key=lambda r: r.repetition)) for t, w in keys]


def merged_bins(reps: Sequence[ResultRecord], direction: str) -> tuple[dict[int, int], str]:
    """The repetitions' latency histograms summed, and which latency they are: ``"lat"``
    (total) when every repetition has total-latency bins, else ``"clat"`` (completion) when
    every one has those, else ``({}, "")``. Percentiles are never averaged."""
    sections = [s for s in (_section(r, direction) for r in reps) if s]
    for kind in ("lat", "clat"):
        bins = [(s.get(f"{kind}_ns") or {}).get("bins") for s in sections]
        if bins and all(bins):
            return merge_bins(*({int(k): int(v) for k, v in b.items()} for b in bins if b)), kind
    return {}, ""


# -- charts -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Series:
    """One (run, target) pair: a colour in every chart."""

    key: str
    name: str
    run: RunRecord
    target: str
    colour: str

    def reps(self, workload: str) -> list[ResultRecord]:
        found = [r for r in _ok(self.run, self.target) if r.workload == workload]
        return sorted(found, key=lambda r: r.repetition)


def _series(runs: Sequence[RunRecord], comparison: Comparison | None) -> list[_Series]:
    setups: dict[tuple[int, str], Setup] = {}
    if comparison is not None:
        setups = {(s.run_id, s.target): s for s in comparison.setups}
    pairs = []
    for run in runs:
        specs = [t.spec for t in sorted(run.targets, key=lambda t: t.position)]
        specs += [t for t in dict.fromkeys(r.target for r in run.results) if t not in specs]
        pairs += [(run, spec, len(specs) > 1) for spec in specs]
    labels = [run.label for run, _, _ in pairs]
    out: list[_Series] = []
    for run, spec, several in pairs:
        setup = setups.get((run.id, spec))
        if setup is not None:
            key, name = setup.key, setup.name
        else:  # named as compare() names setups
            key = f"run {run.id}" + (f" {spec}" if several else "")
            name = key
            if run.label:
                name = run.label if labels.count(run.label) == 1 else f"{run.label} ({key})"
        out.append(_Series(key, name, run, spec, PALETTE[len(out) % len(PALETTE)]))
    return out


def _plot_text(text: str) -> str:
    """A user's string as Plotly text: Plotly reads a few HTML tags and entities in names,
    titles and hover text, so escape them to show the string as it is."""
    return html.escape(text, quote=False)


def _base_layout(fig: Any, height: int) -> None:
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


def bars_figure(workload: str, series: Sequence[_Series]) -> Any | None:
    """IOPS and bandwidth per direction, a bar per setup; error bars are the 95 % CI."""
    per: list[tuple[_Series, list[str], list[Summary], list[Summary]]] = []
    for s in series:
        reps = s.reps(workload)
        dirs: list[str] = []
        iops: list[Summary] = []
        bw: list[Summary] = []
        for d in DIRECTIONS:
            sections = [x for x in (_section(r, d) for r in reps) if x]
            if sections:
                dirs.append(d)
                iops.append(summarize([x.get("iops") for x in sections]))
                bw.append(summarize([x.get("bw_bytes") for x in sections]))
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
                    name=_plot_text(s.name),
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
                        f"{_plot_text(s.name)}<br>{d}: {what} {fmt(x.mean)}<br>{_ci_text(x, fmt)}"
                        for d, x in zip(dirs, summaries, strict=True)
                    ],
                    hoverinfo="text",
                ),
                row=1,
                col=col,
            )
    _base_layout(fig, 340)
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


def latency_figure(workload: str, series: Sequence[_Series]) -> Any | None:
    """Latency percentile curves from the merged histograms: x in nines, y log latency."""
    fig = go.Figure()
    top_nines = 0.0
    low, high = math.inf, 0.0
    completion = False
    for s in series:
        reps = s.reps(workload)
        for d in DIRECTIONS:
            bins, kind = merged_bins(reps, d)
            curve = latency_curve(bins) if bins else []
            if not curve:
                continue
            xs = [nines(p) for p, _ in curve]
            ys = [v for _, v in curve]
            top_nines = max(top_nines, xs[-1])
            low, high = min(low, min(ys)), max(high, max(ys))
            completion = completion or kind == "clat"
            name = _plot_text(s.name)
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    name=f"{name} {d}",
                    line={"color": s.colour, "dash": _DASH[d], "width": 2},
                    hovertext=[f"{name} {d}<br>p{p:g}: {format_ns(v)}" for p, v in curve],
                    hoverinfo="text",
                )
            )
    if not fig.data:
        return None
    if completion:
        fig.add_annotation(
            text="completion latency: no total-latency histogram was stored",
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
    _base_layout(fig, 340)
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


def timeline_figure(workload: str, series: Sequence[_Series]) -> Any | None:
    """Per-second IOPS, bandwidth and mean latency from fio's interval logs."""
    lines = []
    for s in series:
        for r in s.reps(workload):
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
        name = _plot_text(s.name)
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
    _base_layout(fig, 560)
    fig.update_xaxes(title_text="seconds since the end of the ramp", row=3, col=1)
    fig.update_yaxes(rangemode="tozero")
    return fig


def figure_payload(fig: Any) -> Markup:
    """A figure's JSON, safe inside ``<script type="application/json">``: ``<``, ``>`` and
    ``&`` occur in JSON only inside strings, where ``\\u003c`` means the same to JSON.parse,
    so nothing in a label can close the element."""
    text: str = fig.to_json()
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)  # escaped above for this context


def plotly_js() -> Markup:
    """plotly.js as shipped with the plotly package (no network: it is inlined)."""
    js: str = plotly.offline.get_plotlyjs()
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
    workload: str
    shape: str
    charts: list[Chart]
    notes: list[str]


def workload_charts(runs: Sequence[RunRecord], series: Sequence[_Series]) -> list[WorkloadCharts]:
    workloads: dict[str, str] = {}
    for run in runs:
        for _, w, reps in _groups(run):
            workloads.setdefault(w, workload_shape(reps[0].params))
    out: list[WorkloadCharts] = []
    for w, shape in workloads.items():
        charts: list[Chart] = []
        notes: list[str] = []
        for title, build, missing in (
            ("IOPS and bandwidth", bars_figure, ""),
            ("latency percentiles", latency_figure, "no latency histogram was stored"),
            ("per second", timeline_figure, "no per-second samples were recorded"),
        ):
            fig = build(w, series)
            if fig is None:
                if missing:
                    notes.append(f"{title}: {missing}")
                continue
            chart_id = f"chart-{len(out)}-{len(charts)}"
            charts.append(Chart(chart_id, title, figure_payload(fig), int(fig.layout.height)))
        # The timeline, and a chart left alone on its row, take the whole width.
        alone = sum(1 for c in charts if c.title != "per second") == 1
        charts = [dataclasses.replace(c, wide=alone or c.title == "per second") for c in charts]
        out.append(WorkloadCharts(w, shape, charts, notes))
    return out


# -- context ----------------------------------------------------------------------------------


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
            ("suite", f"{run.suite} ({run.suite_def.get('description') or 'no description'})"),
            ("command", shlex.join(run.argv) if run.argv else "-"),
            ("iobench", f"{run.iobench_version}, {run.origin}"),
            *host_lines(run.host),
        ]
        targets = [
            (
                t.spec,
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


def render_html(runs: Sequence[RunRecord], comparison: Comparison | None) -> str:
    """The whole report as one HTML document (UTF-8 text)."""
    names = {s.key: s.name for s in comparison.setups} if comparison else {}
    series = _series(runs, comparison)
    template = _ENV.get_template("report.html.j2")
    return template.render(
        title="iobench report: " + ", ".join(run_title(r) for r in runs),
        runs=run_lines(runs),
        results=[(run_title(r), result_lines(r), failed_lines(r), r.error) for r in runs],
        comparison=comparison,
        setup_names=names,
        baseline=names.get(comparison.baseline) if comparison else None,
        compare_lines=compare_lines(comparison) if comparison else [],
        verdict_counts=verdict_counts(comparison) if comparison else [],
        charts=workload_charts(runs, series),
        key=[(s.name, s.colour) for s in series],
        contexts=run_contexts(runs),
        unstable_cv=UNSTABLE_CV_PCT,
        plotly_config=Markup(json.dumps(PLOTLY_CONFIG)),  # a constant without '<'
        plotly_js=plotly_js(),
    )
