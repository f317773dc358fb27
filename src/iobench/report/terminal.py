"""Human output: tables of results, warnings, run lists, suites and context."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from iobench.model import DIRECTIONS, Suite
from iobench.store.repository import RunRecord
from iobench.units import (
    format_bytes,
    format_duration,
    format_iops,
    format_ns,
    format_rate,
    format_size_short,
)

_STATUS_STYLE = {"complete": "green", "running": "yellow", "aborted": "yellow", "failed": "red"}


def render_run(run: RunRecord, console: Console) -> None:
    style = _STATUS_STYLE.get(run.status, "")
    label = f"  label [bold]{escape(run.label)}[/]" if run.label else ""
    console.print(
        f"run [bold]{run.id}[/]  suite [bold]{escape(run.suite)}[/]{label}  "
        f"status [{style}]{run.status}[/]  fio {run.fio_version or '?'}  {run.started_at}",
        highlight=False,
    )
    host = run.host
    cpu = host.get("cpu") or {}
    virt = (host.get("virtualization") or {}).get("vm")
    console.print(
        f"host {host.get('hostname', '?')}: {cpu.get('model') or '?'} x{cpu.get('online') or '?'}"
        f", {format_bytes(host.get('memory_bytes'))} RAM, kernel "
        f"{(host.get('kernel') or {}).get('release', '?')}" + (f", {virt} guest" if virt else ""),
        highlight=False,
        markup=False,
        style="dim",
    )
    for t in run.targets:
        rows = [r for r in run.results if r.target == t.spec]
        table = Table(
            title=escape(f"{t.spec} ({t.kind}{_target_detail(t.context)})"),
            title_justify="left",
            title_style="bold",
        )
        for col, justify in (
            ("workload", "left"),
            ("rw", "left"),
            ("bs", "right"),
            ("QD x jobs", "right"),
            ("dir", "left"),
            ("IOPS", "right"),
            ("bandwidth", "right"),
            ("lat mean", "right"),
            ("p50", "right"),
            ("p99", "right"),
            ("p99.9", "right"),
        ):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        for r in rows:
            p = r.params
            shape = [
                escape(r.workload),
                escape(str(p.get("rw"))),
                format_size_short(int(p.get("bs", 0))),
                f"{p.get('iodepth')} x {p.get('numjobs')}",
            ]
            if r.status != "ok" or not r.metrics:
                table.add_row(*shape, "", "[red]failed[/]: " + escape((r.error or "")[:80]))
                continue
            first = True
            for d in DIRECTIONS:
                m = r.metrics.get(d)
                if not m:
                    continue
                lat = m.get("lat_ns") or m.get("clat_ns") or {}
                table.add_row(
                    *(shape if first else [""] * 4),
                    d,
                    format_iops(m.get("iops")),
                    format_rate(m.get("bw_bytes")),
                    format_ns(lat.get("mean")),
                    format_ns(lat.get("p50")),
                    format_ns(lat.get("p99")),
                    format_ns(lat.get("p99.9")),
                )
                first = False
        console.print(table)
    if run.error:
        console.print(f"[red]error:[/] {escape(run.error)}", highlight=False)
    render_warnings(run.warnings, console)


def _target_detail(ctx: dict[str, Any]) -> str:
    fs = ctx.get("filesystem") or {}
    parts = []
    if fs.get("fstype"):
        parts.append(str(fs["fstype"]))
    disks = (ctx.get("block") or {}).get("disks") or []
    if disks:
        d = disks[0]
        name = d.get("path") or d.get("name")
        tran = d.get("transport")
        parts.append(f"{name}" + (f" {tran}" if tran else ""))
    return (", " + ", ".join(parts)) if parts else ""


def render_warnings(warnings: list[dict[str, Any]], console: Console) -> None:
    """Warnings grouped by id and fix, so one fix is not repeated per workload."""
    if not warnings:
        return
    console.print("[bold]warnings[/]")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for w in warnings:
        groups.setdefault((str(w.get("id")), str(w.get("fix"))), []).append(w)
    for (wid, fix), members in groups.items():
        severity = members[0].get("severity")
        colour = "yellow" if severity == "warning" else "cyan"
        console.print(f"  [{colour}]{severity}[/] {escape('[' + wid + ']')}", highlight=False)
        for w in members:
            console.print(f"    {w.get('message')}", highlight=False, markup=False, soft_wrap=True)
        console.print(f"    fix: {fix}", highlight=False, markup=False, style="dim")


def render_run_list(runs: list[RunRecord], console: Console) -> None:
    if not runs:
        console.print("no runs stored yet; start one with `iobench run`")
        return
    table = Table()
    for col in ("id", "started (UTC)", "status", "suite", "label", "targets", "results", "fio"):
        table.add_column(col)
    for r in runs:
        style = _STATUS_STYLE.get(r.status, "")
        table.add_row(
            str(r.id),
            r.started_at.replace("T", " ")[:19],
            f"[{style}]{r.status}[/]",
            escape(r.suite),
            escape(r.label or ""),
            escape(", ".join(t.spec for t in r.targets)),
            str(r.result_count),
            r.fio_version or "",
        )
    console.print(table)


def render_suites(suites: list[Suite], console: Console) -> None:
    for s in suites:
        table = Table(
            title=escape(f"{s.name}: {s.description}"), title_justify="left", title_style="bold"
        )
        for col in (
            "workload",
            "rw",
            "bs",
            "iodepth",
            "numjobs",
            "engine",
            "direct",
            "runtime",
            "ramp",
            "size",
        ):
            table.add_column(col)
        for w in s.workloads:
            table.add_row(
                escape(w.name),
                w.rw + (f" ({w.rwmixread}% read)" if w.rwmixread is not None else ""),
                format_size_short(w.bs),
                str(w.iodepth),
                str(w.numjobs),
                w.ioengine,
                "yes" if w.direct else "no",
                format_duration(w.runtime_s),
                format_duration(w.ramp_s),
                format_size_short(w.size),
            )
        console.print(table)


def render_evidence(run: RunRecord, console: Console) -> None:
    """The stored evidence of every result: argv, job file, fio's stderr."""
    for r in run.results:
        console.rule(escape(f"{r.workload} on {r.target} ({r.status}, fio exit code {r.fio_rc})"))
        console.print("argv: " + " ".join(r.fio_argv), highlight=False, markup=False)
        console.print(r.job_file.rstrip(), highlight=False, markup=False)
        if r.error:
            console.print(f"error: {r.error}", highlight=False, markup=False)
        if r.fio_stderr and r.fio_stderr.strip():
            console.print("fio stderr:\n" + r.fio_stderr.rstrip(), highlight=False, markup=False)
        size = len(r.raw_output) if r.raw_output else 0
        console.print(f"raw fio output: {size} characters stored", style="dim")
