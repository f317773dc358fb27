"""Human output: tables of results, warnings, run lists, suites and context."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from iobench.analysis.findings import note_findings
from iobench.analysis.results import latency_value, with_parts
from iobench.analysis.throttles import throttle_summary
from iobench.model import DIRECTIONS, Suite
from iobench.probe.context import Storage
from iobench.records import RunRecord, TargetRecord
from iobench.report.clients import is_client_run, render_client_run
from iobench.report.curves import render_analysis
from iobench.report.literal import literal, literal_lines, markup_literal, print_hanging
from iobench.report.model import (
    CLAT_NOTE,
    ResultLine,
    mark_kind,
    result_lines,
    shape_cells,
    target_heading,
)
from iobench.report.precondition import precondition_lines
from iobench.units import (
    format_bytes,
    format_duration,
    format_iops,
    format_ns,
    format_rate,
    format_size_short,
)

MAX_WARNINGS_SHOWN = 3  # of one kind, in the terminal
_STATUS_STYLE = {
    "complete": "green",
    "partial": "yellow",
    "running": "yellow",
    "aborted": "yellow",
    "failed": "red",
}


def render_run_header(run: RunRecord, console: Console) -> None:
    """The run's first lines: id, suite, label, status, fio, time; the host."""
    style = _STATUS_STYLE.get(run.status, "bold")
    label = f"  label [bold]{markup_literal(run.label)}[/]" if run.label else ""
    console.print(
        f"run [bold]{run.id}[/]  suite [bold]{markup_literal(run.suite)}[/]{label}  "
        f"status [{style}]{markup_literal(run.status)}[/]  "
        f"fio {markup_literal(run.fio_version or '?')}  {markup_literal(run.started_at)}",
        highlight=False,
    )
    host = run.host
    if run.origin == "imported":
        note = host.get("note")
        console.print(
            literal(f"imported from {run.source}" + (f": {note}" if note else "")),
            highlight=False,
            markup=False,
            style="dim",
        )
    if "cpu" in host:  # measured by iobench (also a re-imported export)
        cpu = host.get("cpu") or {}
        virt = (host.get("virtualization") or {}).get("vm")
        virt = None if virt == "none" else virt
        console.print(
            literal(
                f"host {host.get('hostname', '?')}: {cpu.get('model') or '?'} "
                f"x{cpu.get('online') or '?'}, {format_bytes(host.get('memory_bytes'))} RAM, "
                f"kernel {(host.get('kernel') or {}).get('release', '?')}"
                + (f", {virt} guest" if virt else "")
            ),
            highlight=False,
            markup=False,
            style="dim",
        )
    for line in precondition_lines(run.suite_def.precondition):  # --precondition
        console.print(literal(line), highlight=False, markup=False, soft_wrap=True)


def render_run_footer(run: RunRecord, console: Console, *, error: bool = True) -> None:
    """What the run was held to (a provider's promise, expectations), its error, if any
    (not with ``error=False``: a command that just ran it says it on stderr), and its
    warnings."""
    from iobench.report.specs import render_held_to

    render_held_to(run, console)
    if run.error and error:
        console.print(f"[red]error:[/] {markup_literal(run.error)}", highlight=False)
    render_warnings(run.warnings, console)


def _no_results(run: RunRecord, t: TargetRecord, console: Console) -> None:
    """A target without results: no workload finished (``iobench precondition`` runs
    none: nothing to say)."""
    if run.suite_def.workloads == ():
        return
    console.print(
        markup_literal(target_heading(t, _target_detail(t.context))) + ": no workload finished",
        highlight=False,
    )


def render_run(run: RunRecord, console: Console, *, error: bool = True) -> None:
    render_run_header(run, console)
    if is_client_run(run):
        render_client_run(run, console)
        _render_analyses(run, console)
        render_run_footer(run, console, error=error)
        return
    repeated = any(r.repetition > 1 for r in run.results)
    lines = result_lines(run) if repeated else []
    for t in run.targets:
        rows = with_parts([r for r in run.results if r.target == t.spec])
        used_clat = False
        if not rows:
            _no_results(run, t, console)
            continue
        if repeated:
            _render_repeated(t, rows, [x for x in lines if x.target == t.spec], console)
            continue
        table = Table(
            title=markup_literal(target_heading(t, _target_detail(t.context))),
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
            shape = [markup_literal(r.shown_name), *_shape(p)]
            if r.status != "ok" or not r.metrics:
                why = markup_literal(literal(r.error or "")[:80])
                table.add_row(*shape, "", "[red]failed[/]: " + why)
                continue
            first = True
            for d in DIRECTIONS:
                m = r.metrics.get(d)
                if not m:
                    continue

                def pct(key: str, m: dict[str, Any] = m) -> str:
                    # fio records total-latency percentiles only with lat_percentiles=1
                    # (iobench sets it; imported files often lack it): fall back to
                    # completion latency, marked with *.
                    nonlocal used_clat
                    value, kind = latency_value(m, key)
                    used_clat = used_clat or kind == "clat"
                    return mark_kind(format_ns(value), kind)

                table.add_row(
                    *(shape if first else [""] * 4),
                    d,
                    format_iops(m.get("iops")),
                    format_rate(m.get("bw_bytes")),
                    format_ns(latency_value(m, "mean")[0]),
                    pct("p50"),
                    pct("p99"),
                    pct("p99.9"),
                )
                first = False
        if used_clat:
            table.caption = "* completion latency: the output has no total-latency percentiles"
            table.caption_justify = "left"
        console.print(table)
    _render_analyses(run, console)
    render_run_footer(run, console, error=error)


def _render_analyses(run: RunRecord, console: Console) -> None:
    """What a run's mode found: its steady state (rounds), its curves and limits."""
    from iobench.report.steady import render_steady

    render_steady(run, console)
    render_analysis(run, console)


def _shape(p: dict[str, Any]) -> list[str]:
    """rw, bs and "QD x jobs" cells; "-" for what is not known (imported runs)."""
    return [markup_literal(cell) for cell in shape_cells(p)]


def _render_repeated(t: Any, rows: list[Any], lines: list[ResultLine], console: Console) -> None:
    """One row per workload and direction: the mean over the repetitions with the 95 % CI
    relative to it, and the CV (the figures of the HTML and Markdown reports)."""
    table = Table(
        title=markup_literal(target_heading(t, _target_detail(t.context))),
        title_justify="left",
        title_style="bold",
        caption="mean ±half-width of its 95 % confidence interval over n repetitions "
        "(bandwidth: as IOPS); CV = coefficient of variation of IOPS; p99 of all repetitions' "
        "IOs",
        caption_justify="left",
    )
    cells = [
        [
            line.workload,
            line.shape,
            line.direction,
            str(line.n),
            line.iops,
            line.cv,
            line.bandwidth.split(" ±")[0],  # its interval is the IOPS' (same block size)
            line.lat_mean,
            line.lat_p99,
        ]
        for line in lines
    ]
    names = ("workload", "shape", "dir", "n", "IOPS", "CV", "bandwidth", "lat mean", "p99")
    for col in names:
        left = col in ("workload", "shape", "dir")
        # On a narrow terminal cells wrap, and what still does not fit folds: never "…".
        table.add_column(col, justify="left" if left else "right", overflow="fold")
    for line, row in zip(lines, cells, strict=True):
        table.add_row(
            *(markup_literal(c) for c in row[:5]),
            f"[yellow]{row[5]}[/]" if line.unstable else row[5],
            *(markup_literal(c) for c in row[6:]),
        )
    if any(line.lat_p99_kind == "clat" for line in lines):
        table.caption = f"{table.caption}\n{CLAT_NOTE}"
    for r in (r for r in rows if r.status != "ok"):
        error = markup_literal(literal(r.error.splitlines()[0])[:80] if r.error else "")
        table.add_row(
            markup_literal(r.shown_name),
            "",
            "",
            markup_literal(f"#{r.repetition}"),
            "[red]failed[/]",
            error,
        )
    console.print(table)


def _target_detail(ctx: dict[str, Any]) -> str:
    storage = Storage.of(ctx)
    fs = storage.filesystem
    parts = []
    if fs.get("fstype"):
        parts.append(str(fs["fstype"]))
    d = storage.first_disk
    if d:
        name = d.get("path") or d.get("name")
        tran = d.get("transport")
        parts.append(f"{name}" + (f" {tran}" if tran else ""))
    throttled = throttle_summary(ctx)
    if throttled:
        parts.append(throttled)
    return (", " + ", ".join(parts)) if parts else ""


def render_warnings(warnings: list[dict[str, Any]], console: Console) -> None:
    """Warnings grouped by id and fix, so one fix is not repeated per workload; headed
    ``notes`` when every finding is information (nothing there asks the user to act)."""
    if not warnings:
        return
    acting = any(w.get("severity") == "warning" for w in warnings)
    console.print("[bold]warnings[/]" if acting else "[bold]notes[/]")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for w in warnings:
        groups.setdefault((str(w.get("id")), str(w.get("fix"))), []).append(w)
    for (wid, fix), members in groups.items():
        severity = members[0].get("severity")
        colour = "yellow" if severity == "warning" else "cyan"
        console.print(
            f"  [{colour}]{markup_literal(severity)}[/] {markup_literal('[' + wid + ']')}",
            highlight=False,
        )
        # A sweep can have dozens of one kind: the first few, and how many more.
        shown = members if len(members) <= MAX_WARNINGS_SHOWN + 1 else members[:MAX_WARNINGS_SHOWN]
        for w in shown:
            print_hanging(console, "    ", str(w.get("message")))
        if len(shown) < len(members):
            console.print(
                f"    ... and {len(members) - len(shown)} more like these (all in --json)",
                highlight=False,
                markup=False,
            )
        print_hanging(console, "    fix: ", fix, style="dim")


def render_run_list(runs: list[RunRecord], console: Console) -> None:
    if not runs:
        console.print("no runs stored yet; start one with `iobench run`")
        return
    table = Table()
    for col in ("id", "started (UTC)", "status", "suite", "label", "targets", "results", "fio"):
        table.add_column(col)
    for r in runs:
        style = _STATUS_STYLE.get(r.status, "bold")
        table.add_row(
            str(r.id),
            markup_literal(r.started_at.replace("T", " ")[:19]),
            f"[{style}]{markup_literal(r.status)}[/]",
            markup_literal(r.suite),
            markup_literal(r.label or ""),
            markup_literal(", ".join(t.spec for t in r.targets)),
            str(r.result_count),
            markup_literal(r.fio_version or ""),
        )
    console.print(table)


def render_suites(suites: list[Suite], console: Console) -> None:
    """Each suite as a table of its workloads (their fio options too, where any has some),
    with the notes on how a job file was read."""
    for s in suites:
        table = Table(
            title=markup_literal(f"{s.name}: {s.description}" if s.description else s.name),
            title_justify="left",
            title_style="bold",
        )
        columns = ["workload", "rw", "bs", "iodepth", "numjobs", "engine", "direct"]
        columns += ["runtime", "ramp", "size"]
        with_options = any(job.options for w in s.workloads for job in w.jobs)
        for col in [*columns, *(["options"] if with_options else [])]:
            table.add_column(col)
        rows = [
            (name, job)
            for w in s.workloads
            for name, job in (
                # run together: the group's name, then each of its jobs as GROUP/JOB
                [(w.name, None), *((f"{w.name}/{j.name}", j) for j in w.parts)]
                if w.parts
                else [(w.name, w)]
            )
        ]
        for name, job in rows:
            if job is None:
                table.add_row(markup_literal(name), "jobs run together:")
                continue
            w = job
            options = " ".join(f"{k}={v}" for k, v in w.options)
            table.add_row(
                markup_literal(name),
                markup_literal(
                    w.rw + (f" ({w.rwmixread}% read)" if w.rwmixread is not None else "")
                ),
                format_size_short(w.bs),
                str(w.iodepth),
                str(w.numjobs),
                markup_literal(w.ioengine),
                "yes" if w.direct else "no",
                format_duration(w.runtime_s),
                format_duration(w.ramp_s),
                format_size_short(w.size)
                if w.size_share is None
                else f"{w.size_share * 100:g}% of the target",
                *([markup_literal(options)] if with_options else []),
            )
        console.print(table)
        render_warnings([f.as_dict() for f in note_findings(s)], console)


def render_evidence(run: RunRecord, console: Console) -> None:
    """The stored evidence of every result: argv, job file, fio's stderr."""
    for r in run.results:
        console.rule(
            markup_literal(f"{r.workload} on {r.target} ({r.status}, fio exit code {r.fio_rc})")
        )
        console.print(literal("argv: " + " ".join(r.fio_argv)), highlight=False, markup=False)
        console.print(literal_lines(r.job_file.rstrip()), highlight=False, markup=False)
        if r.error:
            console.print(literal_lines(f"error: {r.error}"), highlight=False, markup=False)
        if r.fio_stderr and r.fio_stderr.strip():
            console.print(
                "fio stderr:\n" + literal_lines(r.fio_stderr.rstrip()),
                highlight=False,
                markup=False,
            )
        size = len(r.raw_output) if r.raw_output else 0
        console.print(f"raw fio output: {size} characters stored", style="dim")
