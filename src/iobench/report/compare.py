"""Human rendering of `iobench compare`: one table per matched workload and direction, then
what could not be matched, then the differences in context."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from iobench.analysis.compare import Cell, Comparison, Row, Setup
from iobench.analysis.stats import UNSTABLE_CV_PCT, Summary, interval_shown, is_unstable
from iobench.fio.options import UNKNOWN_TARGET
from iobench.report.literal import markup_literal
from iobench.report.model import (
    CLAT_NOTE,
    NOISE_MARK,
    LimitsView,
    cell_notes,
    differs_text,
    format_ratio,
    headline_text,
    limits_view,
    mark_kind,
    row_shape,
    verdict_rules,
)
from iobench.units import format_iops, format_ns, format_rate

__all__ = ["format_cv", "format_ratio", "render_comparison"]

_VERDICT_STYLE = {
    "baseline": "bold",
    "faster": "green",
    "slower": "red",
    "within noise": "dim",
    "too few repeats": "yellow",
    "not measured": "dim",
    "no baseline": "dim",
}


def format_cv(cv_pct: float | None) -> str:
    return "-" if cv_pct is None else f"{cv_pct:.1f} %"


def _iops(s: Summary) -> str:
    """The mean, and ± the half-width of its 95 % interval from 3 repetitions on (with 2,
    t(0.975, 1) = 12.7 makes it too wide to read)."""
    text = format_iops(s.mean)
    half = s.ci95_half_width
    return f"{text} ± {format_iops(half)}" if half is not None and interval_shown(s) else text


def _ratio(cell: Cell) -> str:
    if cell.verdict == "baseline":
        return ""
    return (NOISE_MARK if cell.verdict == "within noise" else "") + format_ratio(cell.iops_ratio)


def render_comparison(c: Comparison, console: Console) -> None:
    base = c.setup(c.baseline)
    console.print(
        f"comparing {len(c.setups)} setups, baseline [bold]{markup_literal(base.name)}[/]"
        + markup_literal(f" ({_where(base)})"),
        highlight=False,
    )
    # The size of each difference first: what a reader takes away (docs/compare.md).
    for h in c.headlines():
        s = c.setup(h.setup)
        console.print(
            f"  [bold]{markup_literal(s.name)}[/]{markup_literal(f' ({_where(s)})')}: "
            f"[bold]{markup_literal(headline_text(h))}[/]",
            highlight=False,
        )
    view = limits_view(c)
    if view is not None:
        console.print(_limits_table(view, base.name))
        for note in view.notes:
            console.print(markup_literal(f"  {note}"), style="dim", highlight=False)
    for row in c.rows:
        console.print(_row_table(c, row))
    if not c.rows:
        console.print("[yellow]no workload could be matched[/]: see the list below")
    else:
        console.print(markup_literal(f"verdicts: {verdict_rules(c)}"), style="dim", highlight=False)
    unstable = [(row, cell) for row in c.rows for cell in row.cells if is_unstable(cell.iops)]
    if unstable:
        console.print("[bold]warnings[/]")
        for row, cell in unstable:
            console.print(
                f"  [yellow]warning[/] {markup_literal(row.workload)} {row.direction} in "
                f"{markup_literal(c.setup(cell.setup).name)}: the IOPS of its {cell.iops.n} "
                f"repetitions vary by {format_cv(cell.iops.cv_pct)} (coefficient of variation over "
                f"{UNSTABLE_CV_PCT:g} %)",
                highlight=False,
            )
    if c.unmatched:
        console.print("[bold]not matched[/]")
        for u in c.unmatched:
            console.print(
                f"  {markup_literal(c.setup(u.setup).name)}: {markup_literal(u.workload)}: "
                f"{markup_literal(u.reason)}",
                highlight=False,
            )
    if c.context:
        console.print(_context_table(c))


def _where(s: Setup) -> str:
    """Where a setup ran, without repeating its name when its name is its run."""
    on = "a target fio's output does not name" if s.target == UNKNOWN_TARGET else s.target
    return f"on {on}" if s.name == s.key else f"run {s.run_id} on {on}"


def _limits_table(view: LimitsView, baseline: str) -> Table:
    """The limits of curve runs side by side, each with its ratio to the baseline's."""
    table = Table(title="limits found", title_justify="left", title_style="bold")
    table.add_column("limit")
    for name, is_base in view.heads:
        table.add_column(markup_literal(name), justify="right")
        if not is_base:
            table.add_column(markup_literal(f"vs {baseline}"), justify="right")
    for label, cells in view.lines:
        line = [markup_literal(label)]
        for value, ratio, is_base in cells:
            line.append(markup_literal(value))
            if not is_base:
                line.append(ratio)
        table.add_row(*line)
    return table


def _row_table(c: Comparison, row: Row) -> Table:
    """One matched workload and direction: a line per setup, the verdict against the
    baseline, and a caption for durations that differ or p99s that are clat."""
    base = c.setup(c.baseline)
    table = Table(
        title=markup_literal(f"{row.workload}  {row.direction}  ({row_shape(row, detail=True)})"),
        title_justify="left",
        title_style="bold",
    )
    for col, justify in (
        ("setup", "left"),
        ("n", "right"),
        ("IOPS (95 % CI)", "right"),
        ("CV", "right"),
        ("bandwidth", "right"),
        ("lat mean", "right"),
        ("p99", "right"),
        (f"vs {base.name}", "right"),
        ("verdict", "left"),
    ):
        table.add_column(markup_literal(col), justify=justify)  # type: ignore[arg-type]
    for cell in row.cells:
        cv = format_cv(cell.iops.cv_pct)
        if is_unstable(cell.iops):
            cv = f"[yellow]{cv} ![/]"
        table.add_row(
            markup_literal(c.setup(cell.setup).name),
            str(cell.iops.n),
            _iops(cell.iops),
            cv,
            format_rate(cell.bw_bytes.mean),
            format_ns(cell.lat_mean_ns.mean),
            mark_kind(format_ns(cell.p99_ns), cell.lat_p99_kind),
            _ratio(cell),
            _verdict(cell),
        )
    captions = []
    differs = differs_text(row, {s.key: s.name for s in c.setups})
    if differs:
        captions.append(differs)
    if any(cell.lat_p99_kind == "clat" for cell in row.cells):
        captions.append(CLAT_NOTE)
    if captions:
        table.caption = markup_literal("\n".join(captions))
        table.caption_justify = "left"
    return table


def _verdict(cell: Cell) -> str:
    """The verdict in its colour, with the test's reason and the cell's notes."""
    style = _VERDICT_STYLE.get(cell.verdict, "")
    return (
        (f"[{style}]{markup_literal(cell.verdict)}[/]" if style else markup_literal(cell.verdict))
        + (f" ({markup_literal(cell.iops_test.reason)})" if cell.iops_test.reason else "")
        + "".join(f"; {markup_literal(note)}" for note in cell_notes(cell))
    )


def _context_table(c: Comparison) -> Table:
    """What differs between the setups' contexts (device, fio version, ...)."""
    table = Table(title="context that differs", title_justify="left", title_style="bold")
    table.add_column("")
    for s in c.setups:
        table.add_column(markup_literal(s.name))
    for d in c.context:
        table.add_row(
            markup_literal(d.field),
            *(markup_literal(d.values.get(s.key) or "unknown") for s in c.setups),
        )
    return table
