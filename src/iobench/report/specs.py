"""`iobench specs`, and a run's "% of promised" and expectations tables."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

from iobench.analysis.results import headline, metric_value
from iobench.documents import envelope
from iobench.expect import Check, check_run, failed_checks, written_in_decimal
from iobench.records import RunRecord
from iobench.report.literal import literal, markup_literal
from iobench.report.model import run_title
from iobench.specs import (
    SPEC_MIN_OUTSTANDING,
    burst_expected,
    expected,
    promise_text,
    rate_text,
    spec_data,
    spec_names,
)
from iobench.units import format_bytes, format_iops, format_ns, format_rate, format_rate_decimal


def specs_document() -> dict[str, Any]:
    out = []
    for name in spec_names():
        d = spec_data(name)
        out.append(
            {
                "name": name,
                "title": d["title"],
                "note": d.get("note"),
                "params": {
                    k: {"default": v.get("default"), "help": v.get("help"),
                        **({"choices": v["choices"]} if "choices" in v else {})}
                    for k, v in (d.get("params") or {}).items()
                },
                "sources": list(d.get("sources") or []),
            }
        )  # fmt: skip
    return {**envelope("specs"), "specs": out}


def render_specs(doc: dict[str, Any], console: Console) -> None:
    for s in doc["specs"]:
        console.print(
            f"[bold]{markup_literal(s['name'])}[/]  {markup_literal(s['title'])}", highlight=False
        )
        if s.get("note"):
            console.print(literal(f"  {s['note']}"), highlight=False, markup=False)
        for k, p in s["params"].items():
            default = p.get("default")
            shown = {"device": "the target's device", "host": "this host's"}.get(
                str(default), str(default)
            )
            console.print(
                literal(
                    f"  --spec-param {k}=...  {p.get('help') or ''}"
                    + (f" ({' or '.join(p['choices'])})" if p.get("choices") else "")
                    + (f"; default {shown}" if default is not None else "; required")
                ),
                highlight=False,
                markup=False,
            )
        for src in s["sources"]:
            console.print(literal(f"  source: {src}"), style="dim", highlight=False, markup=False)
        console.print()
    console.print(
        "Figures as published; providers change them. `iobench doctor TARGET --spec NAME` "
        "shows what a spec promises for each workload.",
        style="dim",
    )


# -- a run against its spec ------------------------------------------------------------------------


def promised_rows(run: RunRecord) -> list[dict[str, Any]]:
    """Per target and workload: the promised throughput at its block size, what it measured
    (all directions together, mean over the repetitions) and the share."""
    spec = run.suite_def.spec
    if not spec:
        return []
    by: dict[tuple[str, str], list[Any]] = {}
    for r in run.results:
        if headline(r):
            by.setdefault((r.target, r.workload), []).append(r)
    rows = []
    for (target, workload), rs in by.items():
        params = rs[0].params
        bs = int(params.get("bs") or 0)
        if not bs:
            continue
        e = expected(spec, bs)
        outstanding = int(params.get("iodepth") or 1) * int(params.get("numjobs") or 1)
        ok = [r for r in rs if r.status == "ok"]
        iops = [v for r in ok if (v := metric_value(r.metrics, "total", "iops")) is not None]
        bws = [v for r in ok if (v := metric_value(r.metrics, "total", "bw")) is not None]
        measured = statistics.fmean(iops) if iops else None
        measured_bw = statistics.fmean(bws) if bws else None
        # The share of the limit that binds at this block size.
        share = (
            measured_bw / e.bw_bytes
            if e.bound == "bandwidth" and measured_bw is not None
            else (None if measured is None else measured / e.iops)
        )
        b = burst_expected(spec, bs)
        # Above the baseline but within what the volume may do for a while: a burst.
        in_burst = (
            b is not None
            and share is not None
            and share > BURST_MARGIN
            and (measured_bw or 0) <= BURST_MARGIN * b.bw_bytes
        )
        rows.append(
            {
                "target": target,
                "workload": workload,
                "bs": bs,
                "outstanding": outstanding,
                "promised_iops": e.iops,
                "promised_bw_bytes": e.bw_bytes,
                "bound": e.bound,
                "measured_iops": measured,
                "measured_bw_bytes": measured_bw,
                "pct": None if share is None else 100.0 * share,
                "in_burst": in_burst,
                "held_to": outstanding >= int(spec.get("min_outstanding", SPEC_MIN_OUTSTANDING)),
            }
        )
    return rows


def spec_document(run: RunRecord) -> dict[str, Any] | None:
    spec = run.suite_def.spec
    if not spec:
        return None
    return {**spec, "workloads": promised_rows(run)}


# A measured figure this far above the baseline is beyond noise.
BURST_MARGIN = 1.1

PROMISED_HEADER = ("target", "workload", "bs", "QD x jobs", "promised", "measured", "% of promised")
EXPECT_HEADER = ("expectation", "target", "measured", "result", "from")


def promised_title(run: RunRecord) -> str | None:
    spec = run.suite_def.spec
    if not spec:
        return None
    return f"promised by {promise_text(spec)}"


def promised_notes(run: RunRecord, rows: list[dict[str, Any]]) -> list[str]:
    """The notes under the "% of promised" table; ``rows``: the run's :func:`promised_rows`."""
    spec = run.suite_def.spec or {}
    notes = list(spec.get("basis") or [])
    notes.append(
        "promised: the limit each block size reaches first; in brackets, workloads below "
        f"{spec.get('min_outstanding', SPEC_MIN_OUTSTANDING)} outstanding IOs, which are "
        "latency-bound and not held to it"
    )
    if spec.get("burst") and any(r["in_burst"] for r in rows):
        notes.append(
            "(burst): above the baseline, within the burst the volume is allowed for a while; "
            "a run longer than the burst shows what it sustains"
        )
    if spec.get("sources"):
        notes.append("sources: " + "; ".join(spec["sources"]))
    return notes


def promised_table(
    promised: list[dict[str, Any]], rate_units: str | None = None
) -> list[list[str]]:
    """The "% of promised" rows (:func:`promised_rows`), as text. Bandwidth is in binary
    units; with ``rate_units`` "decimal" the promised one also in the provider's own units."""
    rows = []
    for r in promised:
        pct = "-" if r["pct"] is None else f"{r['pct']:.0f} %"
        if r["pct"] is not None and not r["held_to"]:
            pct = f"({pct})"
        if r["in_burst"]:
            pct += " (burst)"
        bw = r["bound"] == "bandwidth"
        rows.append(
            [
                r["target"],
                r["workload"],
                format_bytes(r["bs"]),
                str(r["outstanding"]),
                f"{format_iops(r['promised_iops'])} IOPS"
                + (f" = {rate_text(r['promised_bw_bytes'], rate_units)}" if bw else ""),
                "-"
                if r["measured_iops"] is None
                else f"{format_iops(r['measured_iops'])} IOPS"
                + (f" = {format_rate(r['measured_bw_bytes'])}" if bw else ""),
                pct,
            ]
        )
    return rows


def expectation_table(checks: list[Check]) -> list[list[str]]:
    """The expectation rows, as text; the result is pass, FAIL or FAIL (not measured)."""
    rows = []
    for c in checks:
        e = c.expectation
        result = "pass" if c.passed else "FAIL"
        if c.measured is None:
            result = "FAIL (not measured)"
        label = e.text if e.workload != "*" else f"{e.text} ({c.workload})"
        measured = expectation_value(e.metric, c.measured)
        if c.measured is not None and written_in_decimal(e):
            measured += f" ({format_rate_decimal(c.measured)})"  # in the units of the text
        rows.append([label, c.target, measured, result, e.source])
    return rows


@dataclass(frozen=True)
class HeldTo:
    """What one run was held to, as text: a provider's promise and its expectations."""

    title: str
    promised_title: str | None
    promised: list[list[str]]  # rows under PROMISED_HEADER; [] without a spec
    notes: list[str]
    checks: list[Check]

    @property
    def expectations(self) -> list[list[str]]:
        return expectation_table(self.checks)

    @property
    def met(self) -> str:
        """How many expectations were met, as "N of M met"; empty without any."""
        failed = len(failed_checks(self.checks))
        return f"{len(self.checks) - failed} of {len(self.checks)} met" if self.checks else ""


def held_to(run: RunRecord) -> HeldTo:
    rows = promised_rows(run)
    promised = promised_table(rows, (run.suite_def.spec or {}).get("rate_units"))
    title = promised_title(run)
    if title is None:
        promised = []
    notes = promised_notes(run, rows) if promised else []
    return HeldTo(run_title(run), title, promised, notes, check_run(run))


def render_held_to(run: RunRecord, console: Console) -> None:
    """The "% of promised" table and the expectations' pass/fail table, if the run has them."""
    h = held_to(run)
    if h.promised:
        table = Table(
            title=markup_literal(h.promised_title or ""),
            title_justify="left",
            title_style="bold",
            caption="\n".join(markup_literal(n) for n in h.notes if not n.startswith("sources: ")),
            caption_justify="left",
        )
        for col in PROMISED_HEADER:
            table.add_column(col, justify="left" if col in ("target", "workload") else "right")
        for row in h.promised:
            table.add_row(*(markup_literal(cell) for cell in row))
        console.print(table)
    if not h.checks:
        return
    table = Table(title="expectations", title_justify="left", title_style="bold")
    for col in EXPECT_HEADER:
        table.add_column(col)
    for row in h.expectations:
        colour = "green" if row[3] == "pass" else "red"
        row[3] = f"[{colour}]{row[3]}[/]"
        table.add_row(*(markup_literal(c) if i != 3 else c for i, c in enumerate(row)))
    console.print(table)
    failed = failed_checks(h.checks)
    console.print(f"  {h.met}", style="red" if failed else "green", highlight=False)


def expectation_value(metric: str, value: float | None) -> str:
    if value is None:
        return "-"
    if metric == "iops":
        return format_iops(value)
    if metric == "bw":
        return format_rate(value)
    return format_ns(value)
