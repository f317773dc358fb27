"""The Markdown report: GitHub-flavoured tables to paste into a ticket (docs/report.md).

The figures are those of the HTML report (the table model in :mod:`iobench.report.model`).
Every string is written through :func:`md_text`, so a label, path or host name shows as it
is and cannot end a table cell, start a code span or a link, smuggle in HTML, or act on a
terminal that shows the file (control characters are written as escapes, as
:func:`iobench.report.literal.literal` writes them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from iobench.analysis.compare import Comparison
from iobench.analysis.orion import orion_summary
from iobench.analysis.results import groups
from iobench.analysis.runcurves import analysis_kind, run_characterizations, run_curves
from iobench.analysis.stats import UNSTABLE_CV_PCT
from iobench.records import RunRecord
from iobench.report.clients import (
    client_figures,
    client_steps,
    clients_document,
    is_client_run,
    step_notes,
)
from iobench.report.curves import (
    curve_groups,
    jobs_text,
    knee_text,
    limit_rows,
)
from iobench.report.literal import literal
from iobench.report.model import (
    CLAT_NOTE,
    compare_lines,
    failed_lines,
    format_summary,
    headline_texts,
    host_summary,
    limits_view,
    p99_text,
    result_lines,
    run_lines,
    run_title,
    target_summaries,
    verdict_rules,
    workload_shape,
)
from iobench.report.overview import notice_groups, notices
from iobench.report.specs import EXPECT_HEADER, PROMISED_HEADER, held_to
from iobench.units import format_bytes, format_duration, format_iops, format_ns, format_rate

# Characters that mean something to Markdown inside a table cell: "|" ends a cell (even in
# a code span, in GFM), the others start code, emphasis, strikethrough or a link. With a
# backslash each shows as itself; "&", "<" and ">" become entities so no tag can form.
_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def md_text(value: object) -> str:
    """Any value as literal text for a table cell: one line, nothing interpreted."""
    # Newlines (they would end the table row) and other control characters as escapes.
    text = " ".join(literal(value).split())
    text = _SPECIAL.sub(r"\\\1", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> list[str]:
    """A GFM table; ``header`` and every row already escaped; columns in ``right`` align
    right."""
    align = ["---:" if i in right else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    for row in rows:
        assert len(row) == len(header), (row, header)
        lines.append("| " + " | ".join(cell or " " for cell in row) + " |")
    return lines


def render_markdown(runs: Sequence[RunRecord], comparison: Comparison | None) -> str:
    """The report's tables as one Markdown document."""
    out = ["# iobench report: " + ", ".join(md_text(run_title(r)) for r in runs), ""]
    if comparison is not None:  # the size of each difference is what a reader reads first
        base = comparison.setup(comparison.baseline).name
        for name, text, _ in headline_texts(comparison):
            out.append(f"- **{md_text(name)}** against **{md_text(base)}**: {md_text(text)}")
        out.append("")

    out += ["## Runs", ""]
    out += _runs_table(runs)
    out.append("")

    if comparison is not None:
        out += _comparison(comparison)

    repeated = any(line.n > 1 for run in runs for line in result_lines(run))
    out += [
        "## Results",
        "",
        (
            "Means over the repetitions (n); ± is the half-width of the 95 % confidence "
            "interval relative to the mean; p99 comes from the repetitions' merged latency "
            "histogram. "
            if repeated
            else "p99 comes from the merged latency histogram. "
        )
        + f"⚠: the repetitions vary by more than {UNSTABLE_CV_PCT:g} % (coefficient of "
        "variation).",
        "",
    ]
    for run in runs:
        out += _run_results(run)
    return "\n".join(out).rstrip("\n") + "\n"


def _runs_table(runs: Sequence[RunRecord]) -> list[str]:
    """One line per run: its label, suite, status, fio, host, targets and start."""
    return _table(
        ["run", "label", "suite", "status", "fio", "host", "targets", "started (UTC)", "results"],
        [
            [
                str(r.run_id),
                md_text(r.label or ""),
                md_text(r.suite),
                md_text(r.status),
                md_text(r.fio_version),
                md_text(r.host),
                md_text(r.targets),
                md_text(r.started),
                str(r.results),
            ]
            for r in run_lines(runs)
        ],
        {0, 8},
    )


def _run_results(run: RunRecord) -> list[str]:
    """One run's section: host and targets, errors and failures, the results table, then its
    curves, clients, promises and expectations, and warnings."""
    out = [f"### {md_text(run_title(run))}", ""]
    out.append(f"- host: {md_text(host_summary(run))}")
    out += [f"- target {md_text(t)}: {md_text(text)}" for t, text in target_summaries(run)]
    out.append("")
    if run.error:
        out += [f"The run ended with an error: {md_text(run.error)}", ""]
    failed = [
        f"- failed: {md_text(f.workload)} on {md_text(f.target)}"
        + (f", repetition {f.repetition}" if f.repetition > 1 else "")
        + f": {md_text(f.error)}"
        for f in failed_lines(run)
    ]
    if failed:
        out += [*failed, ""]
    lines = result_lines(run)
    if not lines:
        out += ["No workload finished.", ""]
        out += _warnings(run)
        return out
    out += _table(
        ["target", "workload", "shape", "dir", "n", "IOPS", "bandwidth", "lat mean", "p99"],
        [
            [
                md_text(x.target),
                md_text(x.workload),
                md_text(x.shape),
                x.direction,
                str(x.n),
                md_text(x.iops) + (" ⚠" if x.unstable else ""),
                md_text(x.bandwidth),
                md_text(x.lat_mean),
                md_text(x.lat_p99),
            ]
            for x in lines
        ],
        {4, 5, 6, 7, 8},
    )
    out.append("")
    if any(x.lat_p99_kind == "clat" for x in lines):
        out += [md_text(CLAT_NOTE), ""]
    out += _steady(run)
    out += _curves(run)
    out += _clients(run)
    out += _held_to(run)
    out += _warnings(run)
    return out


def _steady(run: RunRecord) -> list[str]:
    """A run in steady-state rounds: each workload's verdict and window, and the PTS
    matrix of window averages."""
    from iobench.report.steady import matrix_rows, steady_lines

    lines = steady_lines(run)
    if not lines:
        return []
    out = ["#### Steady state", "", md_text(lines[0]), ""]
    out += [f"- {md_text(line.strip())}" for line in lines[1:]] + [""]
    rows = matrix_rows(run)
    if rows is not None:
        header, body = rows
        out += ["IOPS by read/write mix and block size (window averages):", ""]
        out += [*_table(header, body, set(range(1, len(header)))), ""]
    return out


def _curves(run: RunRecord) -> list[str]:
    """For a sweep, characterize or orion-simple run: its summary, IOPS by block size and
    queue depth, and the limits (the guide's table)."""
    kind = analysis_kind(run)
    if kind is None:
        return []
    out = ["#### Curves and limits", ""]
    if kind == "characterize":
        for ch in run_characterizations(run):
            took = format_duration(round(ch.elapsed_s))
            out += [md_text(f"{ch.place}: {ch.points} points in {took}; {ch.stop}"), ""]
    if kind == "orion":
        out += [*(f"- {md_text(line)}" for line in orion_summary(run).lines()), ""]
    cs, limits = run_curves(run, kind)
    for (target, rw, jobs), group in curve_groups(cs).items():
        depths = sorted({p.iodepth for c in group for p in c.points})
        title = f"IOPS of {rw} on {target} ({jobs_text(jobs)}) by block size and queue depth:"
        out += [md_text(title), ""]
        rows = []
        for c in sorted(group, key=lambda c: c.bs):
            by = {p.iodepth: p for p in c.points}
            rows.append(
                [format_bytes(c.bs)]
                + [format_iops(by[d].iops) if d in by else "" for d in depths]
                + [knee_text(c), format_ns(c.latency_floor_ns)]
            )
        header = ["bs", *(f"QD{d}" for d in depths), "knee", "latency floor"]
        out += [*_table(header, rows, set(range(len(header))) - {0}), ""]
    for lim in limits:
        rows = [
            [name, md_text(value or "none found"), md_text(how)]
            for name, value, how in limit_rows(lim)
        ]
        header = ["limit", "value (95 % interval)", "found from, or why none"]
        out += [*_table(header, rows, set()), ""]
    return out


def _clients(run: RunRecord) -> list[str]:
    """For a run on many clients: every step's clients beside their aggregate, the skew and
    stragglers, and the scaling."""
    if not is_client_run(run):
        return []
    out = ["#### Clients", ""]
    doc = clients_document(run)
    rows = []
    for g in groups(run):
        for who, d, f in client_figures(g):
            rows.append(
                [md_text(g.workload), str(g.clients), md_text(who), d,
                 md_text(format_summary(f.iops, format_iops)),
                 md_text(format_rate(f.bw_bytes.mean)), md_text(p99_text(f))]
            )  # fmt: skip
    header = ["workload", "clients", "client", "dir", "IOPS", "bandwidth", "p99"]
    out += [*_table(header, rows, {1, 4, 5, 6}), ""]
    for (k, workload, _), members in client_steps(run):
        notes = [text for _, text in step_notes(members)]
        if notes:
            out.append(md_text(f"- {workload} on {k} clients: " + "; ".join(notes)))
    if doc["scaling"]:
        out += [
            "",
            "Scaling (efficiency = aggregate / (clients x the fewest clients' per-client IOPS)):",
            "",
        ]
        rows = [
            [md_text(s["workload"]), s["direction"], str(p["clients"]), format_iops(p["iops"]),
             format_iops(p["per_client_iops"]), format_rate(p["bw_bytes"]),
             format_rate(p["per_client_bw_bytes"]),
             "-" if p["efficiency"] is None else f"{p['efficiency']:.0%}"]
            for s in doc["scaling"]
            for p in s["points"]
        ]  # fmt: skip
        header = ["workload", "dir", "clients", "aggregate IOPS", "per client",
                  "aggregate bandwidth", "per client", "efficiency"]  # fmt: skip
        out += _table(header, rows, {2, 3, 4, 5, 6, 7})
    return [*out, ""]


def _held_to(run: RunRecord) -> list[str]:
    """A provider's promise against what was measured, and the expectations' results."""
    out: list[str] = []
    h = held_to(run)
    if h.promised and h.promised_title:
        out += [md_text(h.promised_title[0].upper() + h.promised_title[1:] + ":"), ""]
        cells = [[md_text(c) for c in row] for row in h.promised]
        out += [*_table(list(PROMISED_HEADER), cells, {2, 3, 4, 5, 6}), ""]
        out += [*(f"- {md_text(note)}" for note in h.notes), ""]
    if h.checks:
        out += [f"Expectations: {h.met}.", ""]
        cells = [[md_text(c) for c in row] for row in h.expectations]
        out += [*_table(list(EXPECT_HEADER), cells, {2}), ""]
    return out


def _warnings(run: RunRecord) -> list[str]:
    """The run's findings, a bullet per kind (its fix once, when every one shares it, and
    the clause every one ends with) and a line under it per finding."""
    if not run.warnings:
        return []
    out = ["Warnings:", ""]
    for _, found in notice_groups(notices([run], lambda _: None)):
        for g in found:
            head = f"- {md_text(g.severity)} {md_text(g.id)}"
            if len(g.notices) > 1:
                head += f" \u00d7 {len(g.notices)}"
            if g.fix:
                head += f" (fix: {md_text(g.fix)})"
            if len(g.notices) == 1:
                out.append(f"{head}: {md_text(g.notices[0].message)}")
                continue
            tail = common_tail([n.message for n in g.notices])
            out.append(head + (f"; in each: {md_text(tail.strip())}" if tail else ""))
            for n in g.notices:
                fix = f" (fix: {md_text(n.fix)})" if n.fix and not g.fix else ""
                text = n.message.removesuffix(tail).rstrip(":;, ") if tail else n.message
                out.append(f"  - {md_text(text)}{fix}")
    return [*out, ""]


def common_tail(messages: Sequence[str], least: int = 30) -> str:
    """The clause every message ends with (after a ``:``, ``;`` or ``,``), when it is at
    least ``least`` characters: said once for a group of findings, not once per workload;
    else ""."""
    if len(messages) < 2:
        return ""
    words = [m.split(" ") for m in messages]
    n = 0
    while all(len(w) > n + 1 for w in words) and len({w[-1 - n] for w in words}) == 1:
        n += 1
    first = words[0]
    while n and not first[len(first) - n - 1].endswith((":", ";", ",")):
        n -= 1  # the clause starts after punctuation, never inside a phrase
    if not n:
        return ""
    tail = " " + " ".join(first[len(first) - n :])
    return tail if len(tail) >= least else ""


def _comparison(comparison: Comparison) -> list[str]:
    names = {s.key: s.name for s in comparison.setups}
    out = [
        "## Comparison",
        "",
        *_limits_side(comparison),
        f"Baseline: **{md_text(names.get(comparison.baseline, comparison.baseline))}**. "
        "Ratios are to the baseline's mean (a latency above 100 % is slower); a ratio marked "
        f"≈ is within noise. Verdicts, from the IOPS: {md_text(verdict_rules(comparison))}",
        "",
    ]
    out += _matched(comparison)
    out.append("")
    if comparison.unmatched:
        out += ["### Not compared", ""]
        out += _table(
            ["setup", "workload", "shape", "reason"],
            [
                [
                    md_text(names.get(u.setup, u.setup)),
                    md_text(u.workload),
                    md_text(workload_shape(u.params)),
                    md_text(u.reason),
                ]
                for u in comparison.unmatched
            ],
            set(),
        )
        out.append("")
    if comparison.context:
        out += ["### Context that differs", ""]
        out += _table(
            ["", *(md_text(s.name) for s in comparison.setups)],
            [
                [
                    md_text(d.field),
                    *(md_text(d.values.get(s.key) or "unknown") for s in comparison.setups),
                ]
                for d in comparison.context
            ],
            set(),
        )
        out.append("")
    return out


def _matched(comparison: Comparison) -> list[str]:
    """The matched workloads: a line per setup, each figure beside its ratio to the
    baseline; the workload and direction only on the first line of each."""
    lines = compare_lines(comparison)
    if not lines:
        return ["No workload matched between the setups."]
    out = _table(
        [
            "workload",
            "dir",
            "setup",
            "IOPS",
            "ratio",
            "bandwidth",
            "ratio",
            "lat mean",
            "ratio",
            "p99",
            "verdict",
        ],
        [
            [
                md_text(f"{x.workload} ({x.shape})" + (f"; {x.differs}" if x.differs else ""))
                if x.span
                else "",
                x.direction if x.span else "",
                md_text(x.setup),
                md_text(x.iops) + (" ⚠" if x.unstable else ""),
                md_text(x.iops_ratio),
                md_text(x.bandwidth),
                md_text(x.bw_ratio),
                md_text(x.lat_mean),
                md_text(x.lat_ratio),
                md_text(x.lat_p99),
                md_text("; ".join((x.verdict_text, *x.notes))),
            ]
            for x in lines
        ],
        {3, 4, 5, 6, 7, 8, 9},
    )
    if any(x.lat_p99_kind == "clat" for x in lines):
        out += ["", md_text(CLAT_NOTE)]
    return out


def _limits_side(comparison: Comparison) -> list[str]:
    """The limits of curve runs side by side, with the notes under them."""
    view = limits_view(comparison)
    if view is None:
        return []
    header = ["limit"]
    for name, is_base in view.heads:
        header.append(md_text(name) + (" (baseline)" if is_base else ""))
        if not is_base:
            header.append("ratio")
    rows = []
    for label, cells in view.lines:
        row = [md_text(label)]
        for value, ratio, is_base in cells:
            row.append(md_text(value))
            if not is_base:
                row.append(md_text(ratio))
        rows.append(row)
    notes = [f"- {md_text(note)}" for note in view.notes]
    return [
        "### Limits side by side",
        "",
        *_table(header, rows, set(range(1, len(header)))),
        "",
        *notes,
        "",
    ]
