"""Human output for many clients: the client check, a run's per-client and aggregate
results with skew and stragglers, and the scaling table."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from iobench.analysis.clients import ScalePoint, scaling
from iobench.analysis.results import Figures, Group, figures, groups
from iobench.analysis.together import (
    device_excess,
    device_margin,
    seconds_text,
    tolerance_of,
)
from iobench.clients import ClientCheck
from iobench.model import DIRECTIONS
from iobench.records import ResultRecord, RunRecord
from iobench.report.literal import literal, markup_literal
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


def aggregates(members: Sequence[Group]) -> tuple[ResultRecord, ...]:
    """The aggregate's results of a step, one per repetition."""
    return next((g.results for g in members if g.client == "all"), ())


Note = tuple[str, str]  # (style: "" | "dim" | "warn" | "fail", plain text)


def step_notes(members: Sequence[Group]) -> list[Note]:
    """What the aggregate of a step says beside its figures, for every view: over which
    seconds it is taken (with the whole-run sums), the device's own count, the start skew
    and finish spread, stragglers and failed clients; per repetition when there are
    several."""
    results = aggregates(members)
    out: list[Note] = []
    for r in results:
        notes = result_notes(r)
        if len(results) > 1:
            notes = [(style, f"repetition {r.repetition}: {text}") for style, text in notes]
        out += notes
    return out


def result_notes(r: ResultRecord) -> list[Note]:
    """:func:`step_notes` of one aggregate's result."""
    metrics = r.metrics or {}
    summary: dict[str, Any] = metrics.get("clients") or {}
    out = window_notes(metrics, summary)
    for part in summary.get("parts") or []:
        mine = next((p.metrics or {} for p in r.parts if p.name == part.get("part")), {})
        out += [(style, f"part {part.get('part')}: {text}") for style, text in
                window_notes(mine, part)]  # fmt: skip
    out += device_notes(metrics, summary.get("device_check"))
    skew, spread = summary.get("start_skew_ms"), summary.get("finish_spread_ms")
    if isinstance(skew, int | float):
        text = f"start skew {skew:.0f} ms"
        if isinstance(spread, int | float):
            text += f", finish spread {spread:.0f} ms"
        out.append(("dim", text + " (by the clients' clocks)"))
    out += [("warn", f"straggler {s.get('client')}: {s.get('why')}")
            for s in summary.get("stragglers") or []]  # fmt: skip
    out += [("fail", f"failed: {name}") for name in summary.get("failed") or []]
    return out


def _figures(metrics: Mapping[str, Any], suffix: str = "") -> str:
    """``read 38.9k IOPS, 152 MiB/s; write ...`` of the directions with IO."""
    return "; ".join(
        f"{d} {format_iops(s.get('iops' + suffix))} IOPS, {format_rate(s.get('bw_bytes' + suffix))}"
        for d in DIRECTIONS
        if isinstance(s := metrics.get(d), Mapping)
    )


def window_notes(metrics: Mapping[str, Any], summary: Mapping[str, Any]) -> list[Note]:
    """Over which seconds the aggregate's IOPS and bandwidth are (analysis/together.py)."""
    window, apart = summary.get("window"), summary.get("apart") or {}
    if summary.get("aggregate_over") == "window" and isinstance(window, Mapping):
        seconds, k = float(window.get("seconds") or 0), window.get("clients")
        when = "its one client logged" if k == 1 else f"all {k} clients ran together"
        if window.get("edges"):
            when += ", their first and last seconds in it (runs too short to leave them out)"
        return [
            (
                "",
                f"aggregate over the {seconds_text(seconds)} s {when}: {_figures(metrics)} "
                f"(whole-run sums: {_figures(metrics, '_whole_run')})",
            )
        ]
    if summary.get("aggregate_over") == "whole_run":
        style = "dim" if apart.get("overlap_s") is None else "warn"
        return [
            (
                style,
                f"aggregate = the sums of each client's whole run ({_figures(metrics)}), not "
                f"over seconds in which all ran together: {apart.get('why')}",
            )
        ]
    return []  # stored before iobench took the window: the sums


def device_notes(metrics: Mapping[str, Any], check: Any) -> list[Note]:
    """The device's own count of the window, beside the aggregate."""
    if not isinstance(check, Mapping):
        return []
    where = f"this host's {', '.join(check.get('devices') or ()) or 'device'}"
    if check.get("why_not"):
        return [("dim", f"device check ({where}): not made: {check['why_not']}")]
    text = (
        f"device check, {where} over the same {seconds_text(float(check.get('seconds') or 0))} s: "
        f"{_figures(check)}"
    )
    margin, excess = device_margin(metrics, check), device_excess(metrics, check)
    if margin is not None:
        text += f"; the aggregate is {abs(margin):.1%} {'above' if margin >= 0 else 'below'} it"
    elif excess:  # the device completed nothing
        text += "; the aggregate is all above it"
    if excess:
        return [("warn", f"{text}, more than the {tolerance_of(check):.0%} allowed")]
    return [("", text)]


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
        for style, text in step_notes(members):
            console.print(Padding(Text(literal(text), _STYLES[style]), (0, 0, 0, 2), expand=False))
    render_scaling(run, console)


_STYLES = {"": "", "dim": "dim", "warn": "yellow", "fail": "red"}


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
