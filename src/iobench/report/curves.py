"""Human output of curves and limits: sweeps, ``characterize`` and the Orion-style summary.

Which view a run gets depends on what made it: ``suite_def.plan`` (characterize),
``suite_def.sweep`` (sweep), or the ``orion-simple`` suite. :func:`analysis_document`
gives the same as JSON (the ``analysis`` key of a run document).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from iobench.analysis.characterize import (
    Characterization,
    characterization_document,
)
from iobench.analysis.curves import (
    Curve,
    Limits,
    curve_document,
    describe,
)
from iobench.analysis.orion import orion_document, orion_summary
from iobench.analysis.runcurves import (
    analysis_kind,
    run_characterizations,
    run_curves,
)
from iobench.records import RunRecord
from iobench.report.literal import literal, markup_literal
from iobench.units import (
    format_bytes,
    format_duration,
    format_iops,
    format_ns,
    format_rate,
    plain_figure,
)

LIMITS = (("iops", "IOPS"), ("bw_bytes", "bandwidth"), ("crossover_bs", "crossover"))


def jobs_text(jobs: int) -> str:
    """``1 job``, ``4 jobs``."""
    return f"{jobs} job" if jobs == 1 else f"{jobs} jobs"


def knee_text(c: Curve) -> str:
    """``QD4``; ``not reached`` (still rising); ``one QD`` (a single queue depth)."""
    if c.saturated is None:
        return "one QD"
    return f"QD{c.knee.iodepth}" if c.saturated else "not reached"


def _p99_under(run: RunRecord, override: float | None) -> float | None:
    if override is not None:
        return override
    value = run.suite_def.p99_under_ns
    return None if value is None else float(value)


def analysis_document(run: RunRecord, p99_under_ns: float | None = None) -> dict[str, Any] | None:
    """The analysis of a sweep, characterize or orion-simple run; None for other runs."""
    kind = analysis_kind(run)
    if kind is None:
        return None
    p99 = _p99_under(run, p99_under_ns)
    if kind == "characterize":
        places = [characterization_document(c, p99) for c in run_characterizations(run)]
        return {"kind": kind, **places[0], "places": places}
    cs, limits = run_curves(run, kind)
    doc: dict[str, Any] = {
        "kind": kind,
        "curves": [curve_document(c, p99) for c in cs],
        "limits": [lim.document() for lim in limits],
    }
    if kind == "orion":
        doc["orion"] = orion_document(orion_summary(run))
    return doc


# -- terminal -----------------------------------------------------------------------------------


def render_analysis(run: RunRecord, console: Console, p99_under_ns: float | None = None) -> None:
    kind = analysis_kind(run)
    if kind is None:
        return
    p99 = _p99_under(run, p99_under_ns)
    if kind == "characterize":
        for c in run_characterizations(run):
            render_characterization(c, console, p99)
        return
    cs, limits = run_curves(run, kind)
    if kind == "orion":
        render_orion(run, console)
    render_curves(cs, console, p99)
    for lim in limits:
        render_limits(lim, console)


def curve_groups(cs: Sequence[Curve]) -> dict[tuple[str, str, int], list[Curve]]:
    """Curves by (target, rw, numjobs): one table or chart each."""
    out: dict[tuple[str, str, int], list[Curve]] = {}
    for c in cs:
        out.setdefault((c.target, c.rw, c.numjobs), []).append(c)
    return out


def limit_rows(lim: Limits) -> list[tuple[str, str | None, str]]:
    """(limit, its value with the interval or None, how it was found or why none was)."""
    rows: list[tuple[str, str | None, str]] = []
    for key, name in LIMITS:
        est = getattr(lim, key)
        if est is None:
            rows.append((name, None, lim.reasons.get(key, "")))
        else:
            throttle = lim.throttles.get(key)
            how = f"{est.basis}; equal to {throttle}" if throttle else est.basis
            rows.append((name, describe(est, key), how))
    return rows


def _plain(console: Console, text: str, style: str = "") -> None:
    console.print(literal(text), highlight=False, markup=False, style=style)


def render_curves(cs: Sequence[Curve], console: Console, p99_under_ns: float | None) -> None:
    """Per (target, rw, numjobs): IOPS by block size (rows) and queue depth (columns)."""
    for (target, rw, jobs), group in curve_groups(cs).items():
        depths = sorted({p.iodepth for c in group for p in c.points})
        table = Table(
            title=markup_literal(
                f"{target}: {rw} IOPS by block size and queue depth ({jobs_text(jobs)})"
            ),
            title_justify="left",
            title_style="bold",
            caption="knee: where more outstanding IO stops adding throughput (within 5 % of "
            "the best); floor: mean latency at the shallowest queue",
            caption_justify="left",
        )
        table.add_column("bs", justify="right")
        for qd in depths:
            table.add_column(f"QD{qd}", justify="right")
        for col in ("best", "knee", "floor"):
            table.add_column(col, justify="right")
        if p99_under_ns is not None:
            given = plain_figure(format_ns(p99_under_ns))  # as the user gave it: 2 ms
            table.add_column(f"best with p99 < {given}", justify="right")
        for c in sorted(group, key=lambda c: c.bs):
            by_qd = {p.iodepth: p for p in c.points}
            best = c.best
            cells = [format_bytes(c.bs)]
            for qd in depths:
                p = by_qd.get(qd)
                text = format_iops(p.iops) if p else ""
                cells.append(f"[bold]{text}[/]" if p is best else markup_literal(text))
            cells += [
                f"{format_iops(best.iops)} IOPS = {format_rate(best.bw_bytes)}",
                knee_text(c),
                format_ns(c.latency_floor_ns),
            ]
            if p99_under_ns is not None:
                under = c.best_under_p99(p99_under_ns)
                cells.append(
                    f"{format_iops(under.iops)} IOPS at QD{under.iodepth}" if under else "none"
                )
            table.add_row(*cells)
        console.print(table)
        mismatches = [x for c in group for x in c.little() if not x.ok]
        if mismatches:
            console.print("[bold]Little's law[/] (IOPS x latency = IOs in flight)")
            for x in mismatches:
                _plain(console, f"  {x.message()}", "yellow")
        _plateau_notes(group, console)


def _plateau_notes(group: Sequence[Curve], console: Console) -> None:
    """Per curve, what held its plateau down when it was not the storage: the host (fio
    and the IO it caused), or other work on the host. Never at a throttle (its plateau is
    the throttle's: the limits say so)."""
    for c in group:
        size = format_bytes(c.bs)
        if why := c.host_bound():
            _plain(console, f"  {size}: host-bound at its plateau: {why}", "yellow")
        elif why := c.busy_elsewhere():
            text = f"  {size}: at its plateau {why}: it may be lower than the storage allows"
            _plain(console, text, "yellow")


def render_limits(lim: Limits, console: Console) -> None:
    table = Table(
        title=markup_literal(f"{lim.target}: limits ({lim.rw})"),
        title_justify="left",
        title_style="bold",
    )
    for col in ("limit", "value (95 % interval)", "found from"):
        table.add_column(col)
    for name, value, how in limit_rows(lim):
        shown = "[yellow]none found[/]" if value is None else markup_literal(value)
        table.add_row(name, shown, markup_literal(how))
    console.print(table)
    if not lim.table:
        return
    rows = Table(title="by block size", title_justify="left")
    for col, justify in (
        ("bs", "right"),
        ("IOPS", "right"),
        ("bandwidth", "right"),
        ("binds", "left"),
        ("model IOPS", "right"),
        ("vs model", "right"),
    ):
        rows.add_column(col, justify=justify)  # type: ignore[arg-type]
    for b in lim.table:
        dev = b.deviation
        rows.add_row(
            format_bytes(b.bs),
            format_iops(b.iops),
            format_rate(b.bw_bytes),
            markup_literal(b.binds),
            format_iops(b.model_iops) if b.model_iops else "-",
            "-" if dev is None else f"{dev:+.1%}",
        )
    console.print(rows)


def render_characterization(
    c: Characterization, console: Console, p99_under_ns: float | None
) -> None:
    _plain(
        console,
        f"characterize {c.settings.rw}"
        + (f" on {c.place}" if c.place else "")
        + f": {c.points} points in "
        f"{format_duration(round(c.elapsed_s))} (budget {format_duration(c.settings.budget_s)})"
        f"; {c.stop}",
        "bold",
    )
    if c.curves:
        render_curves(c.curves, console, p99_under_ns)
    if c.limits:
        render_limits(c.limits, console)
    for x in c.checks:
        _plain(
            console,
            f"  check at {format_bytes(x.bs)}: {format_iops(x.iops)} IOPS, the two limits "
            f"predict {format_iops(x.model_iops)} IOPS ({x.deviation:+.1%})",
            "yellow" if abs(x.deviation) > 0.1 else "dim",
        )


def render_orion(run: RunRecord, console: Console) -> None:
    s = orion_summary(run)
    for line in s.lines():
        _plain(console, line, "bold")
    if s.histogram:
        assert s.fastest is not None
        table = Table(
            title=f"small-read latency histogram @ {s.fastest.outstanding} outstanding",
            title_justify="left",
        )
        for col, justify in (("latency", "left"), ("IOs", "right"), ("share", "right")):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        total = sum(n for _, _, n in s.histogram) or 1
        for low, high, n in s.histogram:
            table.add_row(
                f"{format_ns(low)} - {format_ns(high)}", str(n), f"{100 * n / total:.1f} %"
            )
        console.print(table)
