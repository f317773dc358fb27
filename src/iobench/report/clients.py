"""Human output for many clients: the client check, a run's per-client and aggregate
results with skew and stragglers, and the scaling table."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from iobench.analysis.clients import ScalePoint, scaling
from iobench.analysis.results import Figures, Group, figures, groups
from iobench.clients import ClientCheck
from iobench.model import DIRECTIONS
from iobench.records import RunRecord
from iobench.report.literal import markup_literal
from iobench.report.model import format_summary, p99_text, workload_shape
from iobench.units import format_iops, format_ns, format_rate


def render_checks(
    checks: Sequence[ClientCheck], fio_version: str, console: Console, confined: str = ""
) -> None:
    """The check of each client; ``confined`` says how fio's client ran here."""
    table = Table(
        title=f"fio servers (this fio: {markup_literal(fio_version)})",
        title_justify="left",
        title_style="bold",
    )
    for col in ("client", "status", "server's name", "fio", "connect", "clock offset"):
        table.add_column(col)
    for c in checks:
        table.add_row(
            markup_literal(c.client.name),
            "[green]ok[/]" if c.ok else "[red]unusable[/]",
            markup_literal(c.hostname or "-"),
            markup_literal(c.fio_version or "-"),
            "-" if c.connect_ms is None else f"{c.connect_ms:.1f} ms",
            clock_text(c.clock_offset_ms, c.clock_off),
        )
    console.print(table)
    for c in checks:
        if not c.ok:
            console.print(
                f"  {markup_literal(c.client.name)}: {markup_literal(c.problem or '')}",
                highlight=False,
            )
    console.print(
        "clock offset: the server's clock minus this one's, bounded by when the test job ran "
        "(fio 3.33 tells no more); the start skew of a run compares the clients' clocks, so "
        "they should agree (NTP)",
        style="dim",
        highlight=False,
    )
    if confined:
        console.print(
            f"{confined} (a server chooses the names of the files it writes: docs/clients.md)",
            style="dim",
            highlight=False,
            markup=False,
        )


def clock_text(offset: tuple[float, float] | None, off: bool) -> str:
    """``-0.0 s to +1.3 s``; in red when the clock is proven more than a second off."""
    if offset is None:
        return "unknown"
    text = f"{offset[0] / 1000:+.1f} s to {offset[1] / 1000:+.1f} s"
    return f"[red]{text} (off)[/]" if off else text


def is_client_run(run: RunRecord) -> bool:
    return any(r.client is not None for r in run.results)


def client_steps(run: RunRecord) -> list[tuple[tuple[int, str, int], list[Group]]]:
    """Groups by (client count, workload, position), in that order of count and position,
    the aggregate first in each."""
    out: dict[tuple[int, str, int], list[Group]] = {}
    for g in groups(run):
        out.setdefault((g.clients or 0, g.workload, g.position), []).append(g)
    return sorted(out.items(), key=lambda kv: (kv[0][0], kv[0][2]))


def client_figures(g: Group) -> Iterator[tuple[str, str, Figures]]:
    """(who, direction, figures) of one client's group or the aggregate's, per direction
    it did IO in."""
    who = "all (aggregate)" if g.client == "all" else str(g.client)
    for d in DIRECTIONS:
        f = figures(g.results, d)
        if f.n:
            yield who, d, f


def stored_timing(members: Sequence[Group]) -> dict[str, Any]:
    """The aggregate's summary of a step: start skew, finish spread, stragglers, failed."""
    for g in members:
        if g.client == "all":
            return (g.results[-1].metrics or {}).get("clients") or {}
    return {}


def render_client_run(run: RunRecord, console: Console) -> None:
    """Per workload and client count: each client's figures and their aggregate."""
    for (k, workload, _), members in client_steps(run):
        params = members[0].params
        table = Table(
            title=markup_literal(
                f"{workload} on {k} client(s)  ({workload_shape(params, detail=True)})"
            ),
            title_justify="left",
            title_style="bold",
        )
        for col, justify in (
            ("client", "left"),
            ("dir", "left"),
            ("n", "right"),
            ("IOPS", "right"),
            ("bandwidth", "right"),
            ("lat mean", "right"),
            ("p99", "right"),
        ):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        for g in members:
            for name, d, f in client_figures(g):
                table.add_row(
                    f"[bold]{markup_literal(name)}[/]"
                    if g.client == "all"
                    else markup_literal(name),
                    d,
                    str(f.n),
                    format_summary(f.iops, format_iops),
                    format_rate(f.bw_bytes.mean),
                    format_ns(f.lat_mean_ns.mean),
                    markup_literal(p99_text(f)),
                )
        failed = [
            r for r in run.results if r.status != "ok" and r.workload == workload and r.clients == k
        ]
        for r in failed:
            table.add_row(markup_literal(r.client), "", "", "[red]failed[/]", "", "", "")
        console.print(table)
        _render_summary(stored_timing(members), console)
    render_scaling(run, console)


def _render_summary(summary: dict[str, Any], console: Console) -> None:
    parts = []
    skew = summary.get("start_skew_ms")
    if isinstance(skew, int | float):
        parts.append(f"start skew {skew:.0f} ms")
    spread = summary.get("finish_spread_ms")
    if isinstance(spread, int | float):
        parts.append(f"finish spread {spread:.0f} ms")
    if parts:
        console.print(
            "  " + ", ".join(parts) + " (by the clients' clocks)", style="dim", highlight=False
        )
    for s in summary.get("stragglers") or []:
        console.print(
            f"  [yellow]straggler[/] {markup_literal(s.get('client'))}: "
            f"{markup_literal(s.get('why'))}",
            highlight=False,
        )
    for name in summary.get("failed") or []:
        console.print(f"  [red]failed[/] {markup_literal(name)}", highlight=False)


def scaling_table(run: RunRecord) -> dict[tuple[str, str], list[ScalePoint]]:
    """(workload, direction) -> the scaling points, when the run has several client counts."""
    counts = {r.clients for r in run.results if r.client == "all"}
    if len(counts) < 2:
        return {}
    by: dict[tuple[str, str], dict[int, tuple[float, float | None]]] = {}
    for g in groups(run):
        if g.client != "all" or not g.clients:
            continue
        for d in DIRECTIONS:
            f = figures(g.results, d)
            if f.iops.mean is not None:
                by.setdefault((g.workload, d), {})[g.clients] = (f.iops.mean, f.bw_bytes.mean)
    return {key: scaling(values) for key, values in by.items()}


def render_scaling(run: RunRecord, console: Console) -> None:
    table_data = scaling_table(run)
    if not table_data:
        return
    table = Table(
        title="scaling: aggregate throughput by number of clients",
        title_justify="left",
        title_style="bold",
        caption="efficiency = aggregate / (clients x what the fewest clients did each)",
        caption_justify="left",
    )
    for col, justify in (
        ("workload", "left"),
        ("dir", "left"),
        ("clients", "right"),
        ("aggregate IOPS", "right"),
        ("per client", "right"),
        ("aggregate bandwidth", "right"),
        ("per client ", "right"),
        ("efficiency", "right"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for (workload, d), points in table_data.items():
        for i, p in enumerate(points):
            table.add_row(
                markup_literal(workload) if i == 0 else "",
                d if i == 0 else "",
                str(p.clients),
                format_iops(p.iops),
                format_iops(p.per_client),
                format_rate(p.bw_bytes),
                format_rate(p.per_client_bw),
                "-" if p.efficiency is None else f"{p.efficiency:.0%}",
            )
    console.print(table)


def clients_document(run: RunRecord) -> dict[str, Any]:
    """``clients`` of a run document: the clients, each step's summary (start skew, finish
    spread, stragglers, failed clients) and, with several client counts, the scaling."""
    defined = run.suite_def.clients
    names = None if defined is None or defined.names is None else list(defined.names)
    steps = []
    for r in run.results:
        if r.client == "all" and r.metrics:
            steps.append(
                {
                    "workload": r.workload,
                    "clients": r.clients,
                    "repetition": r.repetition,
                    **(r.metrics.get("clients") or {}),
                }
            )
    return {
        "names": names,
        "steps": steps,
        "scaling": [
            {
                "workload": workload,
                "direction": d,
                "points": [
                    {
                        "clients": p.clients,
                        "iops": p.iops,
                        "per_client_iops": p.per_client,
                        "bw_bytes": p.bw_bytes,
                        "per_client_bw_bytes": p.per_client_bw,
                        "efficiency": p.efficiency,
                    }
                    for p in points
                ],
            }
            for (workload, d), points in scaling_table(run).items()
        ],
    }
