"""The reports' table model: formatted, unescaped strings, one line per table row.

Shared by the HTML report (:mod:`iobench.report.html`), the Markdown report
(:mod:`iobench.report.markdown`) and, for the workload shape and ratios, the terminal. No
HTML, Markdown, plotly or jinja2 here: each renderer escapes for its own format.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from iobench.analysis.compare import Cell, Comparison, Headline, Row, Spread
from iobench.analysis.curves import describe
from iobench.analysis.results import Figures, LatencyKind, run_figures
from iobench.analysis.runcurves import LimitCell, LimitRow
from iobench.analysis.stats import Summary, interval_shown, is_unstable
from iobench.analysis.throttles import throttle_summary
from iobench.fio.options import PLACEMENT_KEYS, UNKNOWN_TARGET
from iobench.probe.context import Storage
from iobench.records import RunRecord, TargetRecord
from iobench.report.context import host_lines
from iobench.units import format_duration, format_iops, format_ns, format_rate, format_size_short

# How a report says that a p99 is completion latency (fio gave no total-latency percentiles).
CLAT_MARK = "*"
CLAT_NOTE = (
    "* completion latency: fio gave no total-latency percentiles or histogram for it "
    "(lat_percentiles unset, e.g. an imported output)"
)


def run_title(run: RunRecord) -> str:
    return f"run {run.id}" + (f" ({run.label})" if run.label else "")


# -- workload shape ---------------------------------------------------------------------------


def known(value: Any) -> str:
    """A parameter as text; ``-`` when it is not known (imported runs)."""
    return "-" if value is None else str(value)


def _parts(params: dict[str, Any]) -> list[dict[str, Any]]:
    """A group's parts' parameters (``params["parts"]``), none for a workload of one job."""
    parts = params.get("parts")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def shape_cells(params: dict[str, Any]) -> list[str]:
    """rw, bs and "QD x jobs" as three strings; ``-`` for what is not known. A group's
    are its parts', joined with ``+``."""
    parts = _parts(params)
    if parts:
        cells = [shape_cells(p) for p in parts]
        return [
            "+".join(dict.fromkeys(c[0] for c in cells)),
            "+".join(dict.fromkeys(c[1] for c in cells)),
            "+".join(c[2].replace(" ", "") for c in cells),
        ]
    bs = params.get("bs")
    if isinstance(bs, int) and not isinstance(bs, bool):
        bs_text = format_size_short(bs) if bs > 0 else "-"
    else:
        bs_text = known(bs)
    return [
        known(params.get("rw")),
        bs_text,
        f"{known(params.get('iodepth'))} x {known(params.get('numjobs'))}",
    ]


def workload_shape(params: dict[str, Any], *, detail: bool = False) -> str:
    """``randread 4k QD32x4``; ``randrw 70/30 8k QD16x2``; ``-`` for unknown values. With
    ``detail``, also ``buffered`` (direct=0) and the runtime. A group: its parts' shapes,
    joined with `` + ``."""
    members = _parts(params)
    if members:
        shown = " + ".join(workload_shape(p) for p in members)
        runtime = params.get("runtime_s")
        if detail and isinstance(runtime, int | float) and not isinstance(runtime, bool):
            shown += f" {format_duration(float(runtime))}"
        return shown
    rw, bs, _ = shape_cells(params)
    mix = params.get("rwmixread")
    if isinstance(mix, int | float) and rw in ("rw", "readwrite", "randrw"):
        rw += f" {mix:g}/{100 - mix:g}"
    parts = [rw, bs, f"QD{known(params.get('iodepth'))}x{known(params.get('numjobs'))}"]
    if detail:
        if params.get("direct") is False:
            parts.append("buffered")
        runtime = params.get("runtime_s")
        if isinstance(runtime, int | float) and not isinstance(runtime, bool):
            parts.append(format_duration(float(runtime)))
    return " ".join(parts)


# -- numbers ----------------------------------------------------------------------------------


def format_ratio(ratio: float | None) -> str:
    """``0.6`` -> ``60 %``; two significant digits below 10 %; None -> ``-``."""
    if ratio is None:
        return "-"
    pct = ratio * 100
    if pct >= 10:
        return f"{pct:.0f} %"
    return f"{pct:.2g} %"


def format_summary(s: Summary, fmt: Callable[[float | None], str]) -> str:
    """``5.84k ±1.2 %``: the mean and the 95 % CI half-width relative to it (n > 1)."""
    if s.mean is None:
        return "-"
    half = s.ci95_half_width
    if half is None or s.mean == 0:
        return fmt(s.mean)
    return f"{fmt(s.mean)} ±{100 * half / abs(s.mean):.1f} %"


def p99_text(f: Figures) -> str:
    """The p99 of the merged histogram; without bins the repetitions' p99s summarised;
    marked with CLAT_MARK when it is completion latency."""
    if f.lat_p99_merged_ns is not None:
        text = format_ns(f.lat_p99_merged_ns)
    else:
        text = format_summary(f.lat_p99_ns, format_ns)
    return mark_kind(text, f.lat_p99_kind)


def mark_kind(text: str, kind: LatencyKind | None) -> str:
    return text + CLAT_MARK if kind == "clat" and text != "-" else text


# -- runs -------------------------------------------------------------------------------------


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
            targets=", ".join(
                target_title(t) for t in sorted(run.targets, key=lambda t: t.position)
            )
            or "-",
            started=run.started_at.replace("T", " ")[:19],
            results=sum(1 for r in run.results if r.status == "ok"),
            warnings=len(run.warnings),
        )
        for run in runs
    ]


def host_summary(run: RunRecord) -> str:
    """One line about the host: name, OS, kernel, virtualisation, CPU, memory (what is known)."""
    parts = [
        v if k == "host" else f"{k} {v}"  # the host's name, not "host vm"
        for k, v in host_lines(run.host)
        if v and v != "-" and not v.startswith("none detected")
    ]
    if run.origin == "imported":
        parts.insert(0, f"imported from {run.source or 'fio output'}")
    return "; ".join(parts) or "-"


def target_title(t: TargetRecord) -> str:
    """A target as a heading names it: the path the user named, and the file or device it
    leads to when that is another path (a symbolic link, ``/dev/disk/by-id/...``). A run
    stored before targets were stored by their absolute path keeps its ``.``, and this
    shows where it was."""
    if not t.path or t.path == t.spec:
        return t.spec
    return f"{t.spec} \u2192 {t.path}"


def target_heading(t: TargetRecord, detail: str = "") -> str:
    """A target as the heading of its results: its name and what it is (``detail``: more
    of its context). An imported target says only what fio's output said of it."""
    if t.kind != "unknown":
        return f"{target_title(t)} ({t.kind}{detail})"
    if t.spec == UNKNOWN_TARGET:
        return f"a target fio's output does not name (imported{detail})"
    return f"{target_title(t)} (imported: what it is, fio's output does not say{detail})"


def target_summaries(run: RunRecord) -> list[tuple[str, str]]:
    """(target, one line about it: kind, filesystem, mount options, first disk)."""
    out = []
    for t in sorted(run.targets, key=lambda t: t.position):
        ctx = t.context or {}
        storage = Storage.of(ctx)
        fs, disk = storage.filesystem, storage.first_disk or {}
        parts = [
            t.kind,
            str(fs["fstype"]) if fs.get("fstype") else None,
            f"mounted {fs['options']}" if fs.get("options") else None,
            " ".join(str(disk[k]).strip() for k in ("path", "transport", "model") if disk.get(k))
            or None,
            throttle_summary(ctx),
        ]
        out.append((target_title(t), ", ".join(p for p in parts if p) or "-"))
    return out


# -- results ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ResultLine:
    target: str
    workload: str
    shape: str
    direction: str
    n: int  # repetitions
    iops: str
    cv: str  # the coefficient of variation of the IOPS, "3.9 %"; "-" with one repetition
    bandwidth: str
    lat_mean: str
    lat_p99: str  # ends with CLAT_MARK when it is completion latency
    lat_p99_kind: LatencyKind | None
    unstable: bool  # the IOPS vary by more than UNSTABLE_CV_PCT


def result_lines(run: RunRecord) -> list[ResultLine]:
    """Per target, workload and direction of one run: the repetitions summarised. A run on
    many clients gives the aggregate of each step ("/mnt/shared, 3 clients"); each client's
    share is in the clients' own section."""
    return [
        ResultLine(
            target=g.target if g.client is None else f"{g.target}, {g.clients} clients",
            workload=g.name,
            shape=workload_shape(g.params),
            direction=d,
            n=f.n,
            iops=format_summary(f.iops, format_iops),
            cv="-" if f.iops.cv_pct is None else f"{f.iops.cv_pct:.1f} %",
            bandwidth=format_summary(f.bw_bytes, format_rate),
            lat_mean=format_summary(f.lat_mean_ns, format_ns),
            lat_p99=p99_text(f),
            lat_p99_kind=f.lat_p99_kind,
            unstable=is_unstable(f.iops),
        )
        for g, d, f in run_figures(run)
        if g.client in (None, "all")
    ]


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


# -- comparison ----------------------------------------------------------------------------

# What the verdicts mean, the same words in the terminal, Markdown and HTML
# (docs/compare.md, "Verdicts").
VERDICT_RULES = (
    "faster/slower: Welch's t-test on the repetitions (95 %), or 2x or more in every "
    "repetition; within noise: the difference is inside the noise measured; too few repeats: "
    "the difference may be real, run with the --repeat shown."
)
SINGLE_RUN_RULE = (
    "Where a setup has a single run, its noise is within-run noise (its per-second samples, "
    "in batches): second-to-second, not run-to-run, so it can show that a difference is noise "
    "or back a 2x one, never prove a small one."
)
INTERVAL_RULE = "± is the 95 % interval of the mean, shown from 3 repetitions."


def verdict_rules(comparison: Comparison) -> str:
    """The rules the verdicts of ``comparison`` follow, and only what its tables show: the
    within-run rule where a cell has a single run, the ± where a cell shows one."""
    cells = [cell for row in comparison.rows for cell in row.cells]
    text = VERDICT_RULES
    if any(cell.iops.n == 1 for cell in cells):
        text += " " + SINGLE_RUN_RULE
    if any(interval_shown(cell.iops) for cell in cells):
        text += " " + INTERVAL_RULE
    return text


# How each duration parameter is named when it differs between the setups of a row.
_DIFFERS_NAMES = {
    "runtime_s": "runtime",
    "ramp_s": "ramp",
    "size": "size",
}  # and an option, options.NAME, by its NAME
_PLACEMENT = tuple(f"options.{key}" for key in PLACEMENT_KEYS)


def _duration_text(param: str, value: Any) -> str:
    if value is None:
        return "unset" if param.startswith("options.") else "-"
    if param in ("runtime_s", "ramp_s") and isinstance(value, int | float):
        return format_duration(float(value))
    if param == "size" and isinstance(value, int) and not isinstance(value, bool):
        return format_size_short(value)
    return str(value)


def differs_text(row: Row, names: dict[str, str]) -> str:
    """``not the same duration: runtime 2s (a) vs 1s (b)``: the durations, then the CPU
    placements (``not the same CPU placement: cpus_allowed 1 (a) vs unset (b)``), that
    differ between a row's setups, ``; ``-separated; empty when none does."""
    captions = []
    for label, placement in (("duration", False), ("CPU placement", True)):
        parts = []
        for d in row.differs:
            if (d.param in _PLACEMENT) != placement:
                continue
            by_value: dict[str, list[str]] = {}
            for key, value in d.values.items():
                text = _duration_text(d.param, value)
                by_value.setdefault(text, []).append(names.get(key, key))
            shown = " vs ".join(f"{v} ({', '.join(who)})" for v, who in by_value.items())
            name = _DIFFERS_NAMES.get(d.param, d.param.removeprefix("options."))
            parts.append(f"{name} {shown}")
        if parts:
            captions.append(f"not the same {label}: " + "; ".join(parts))
    return "; ".join(captions)


def row_shape(row: Row, *, detail: bool = False) -> str:
    """The row's workload shape; with ``detail``, its runtime only when every setup ran
    the same (a runtime that differs is in :func:`differs_text`)."""
    params = row.params
    if any(d.param == "runtime_s" for d in row.differs):
        params = {k: v for k, v in params.items() if k != "runtime_s"}
    return workload_shape(params, detail=detail)


def format_compared(s: Summary, fmt: Callable[[float | None], str]) -> str:
    """A figure in a comparison: the mean, ``±`` its 95 % interval relative to it from 3
    repetitions on (with 2, t(0.975, 1) = 12.7 makes the interval too wide to read)."""
    if not interval_shown(s):
        return fmt(s.mean) if s.mean is not None else "-"
    return format_summary(s, fmt)


@dataclasses.dataclass(frozen=True)
class CompareLine:
    workload: str
    direction: str
    shape: str
    differs: str  # durations that differ between the setups (differs_text); "" when none
    setup: str  # Setup.name
    iops: str
    iops_ratio: str
    bandwidth: str
    bw_ratio: str
    lat_mean: str
    lat_ratio: str
    lat_p99: str  # ends with CLAT_MARK when it is completion latency
    lat_p99_kind: LatencyKind | None
    verdict: str  # from the IOPS
    reason: str  # why, or what to do: "t-test, 3 vs 3 repeats", "run --repeat 4; ..."
    notes: tuple[str, ...]  # "latency slower", "1 of 3 repetitions failed"
    unstable: bool
    span: int  # how many lines this workload has, on its first line; 0 on the others
    baseline: bool

    @property
    def verdict_text(self) -> str:
        """``slower (2x or more in every repeat)``: the verdict and its reason."""
        return verdict_text(self.verdict, self.reason)


# A ratio whose difference is inside the noise is written "≈ 94 %".
NOISE_MARK = "≈ "


def verdict_text(verdict: str, reason: str) -> str:
    return f"{verdict} ({reason})" if reason else verdict


def _ratio_text(ratio: float | None, verdict: str) -> str:
    if verdict == "baseline":
        return ""
    return (NOISE_MARK if verdict == "within noise" else "") + format_ratio(ratio)


def cell_notes(c: Cell) -> tuple[str, ...]:
    """What the IOPS verdict does not say: a latency that differs (faster or slower) when
    the IOPS do not (or the other way round), and repetitions that failed."""
    notes = []
    if c.lat_verdict in ("faster", "slower") and c.lat_verdict != c.verdict:
        notes.append(f"latency {c.lat_verdict}")
    if c.failed:
        total = c.iops.n + c.failed
        notes.append(f"{c.failed} of {total} repetitions failed")
    return tuple(notes)


def compare_line(
    comparison: Comparison, row: Row, c: Cell, *, differs: str, first: bool
) -> CompareLine:
    """One setup's line of a matched row; ``differs`` is :func:`differs_text` of the row,
    ``first`` whether it is the row's first line (which carries the row's span)."""
    names = {s.key: s.name for s in comparison.setups}
    return CompareLine(
        workload=row.workload,
        direction=row.direction,
        shape=row_shape(row),
        differs=differs,
        setup=names.get(c.setup, c.setup),
        iops=format_compared(c.iops, format_iops),
        iops_ratio=_ratio_text(c.iops_ratio, c.verdict),
        bandwidth=format_compared(c.bw_bytes, format_rate),
        bw_ratio=_ratio_text(c.bw_ratio, c.bw_verdict),
        lat_mean=format_compared(c.lat_mean_ns, format_ns),
        lat_ratio=_ratio_text(c.lat_mean_ratio, c.lat_verdict),
        lat_p99=mark_kind(format_ns(c.p99_ns), c.lat_p99_kind),
        lat_p99_kind=c.lat_p99_kind,
        verdict=c.verdict,
        reason=c.iops_test.reason,
        notes=cell_notes(c),
        unstable=is_unstable(c.iops),
        span=len(row.cells) if first else 0,
        baseline=c.setup == comparison.baseline,
    )


def compare_lines(comparison: Comparison) -> list[CompareLine]:
    """Every matched row's lines, a line per setup, in the comparison's order."""
    names = {s.key: s.name for s in comparison.setups}
    return [
        compare_line(comparison, row, c, differs=differs_text(row, names), first=i == 0)
        for row in comparison.rows
        for i, c in enumerate(row.cells)
    ]


_VERDICT_PHRASE = {
    "too few repeats": "too few repeats to tell",
    "no baseline": "no baseline figure",
}


def _times(ratio: float) -> str:
    """A ratio of 10 or more as a multiple: ``71 \u00d7``."""
    return f"{ratio:.0f} \u00d7" if ratio >= 10 else f"{ratio:.2g} \u00d7"


def _spread_text(spread: Spread) -> str:
    """``40 % of the baseline (range 36\u201340 %)``, ``71 \u00d7 the baseline (range
    24\u2013138 \u00d7)``; ``in each`` when every row reads the same."""
    big = spread.mean >= 10
    fmt = _times if big else format_ratio
    text = f"{fmt(spread.mean)} {'the' if big else 'of the'} baseline"
    low, high = fmt(spread.low), fmt(spread.high)
    if spread.n == 1:
        return text
    if low == high:
        return text + " in each"
    unit = " \u00d7" if big else " %"
    return text + f" (range {low.removesuffix(unit)}\u2013{high})"


def headline_text(h: Headline) -> str:
    """What a setup is against the baseline, the size first: ``slower in 6 of 6
    workloads; IOPS 40 % of the baseline (range 36 to 40 %)``. The ratio is the geometric
    mean of the rows' IOPS ratios (docs/compare.md, "Headline")."""
    if not h.rows:
        return "no workload matched the baseline's"
    counted = ", ".join(f"{_VERDICT_PHRASE.get(v, v)} in {n}" for v, n in h.verdicts)
    what = "workload" if h.workloads == h.rows else "workload direction"
    what += "" if h.rows == 1 else "s"
    text = f"{counted} of {h.rows} {what}"
    if h.iops is not None:
        text += f"; IOPS {_spread_text(h.iops)}"
    return text


def headline_texts(comparison: Comparison) -> list[tuple[str, str, str]]:
    """(setup name, :func:`headline_text`, tone) of each setup other than the baseline; the
    tone is its verdict when every row has the same, else "mixed"."""
    names = {s.key: s.name for s in comparison.setups}
    return [
        (names[h.setup], headline_text(h), h.verdicts[0][0] if len(h.verdicts) == 1 else "mixed")
        for h in comparison.headlines()
    ]


# -- limits side by side ------------------------------------------------------------------------

_LIMIT_NAMES = {"iops": "IOPS", "bw_bytes": "bandwidth", "crossover_bs": "crossover"}


def limit_label(row: LimitRow) -> str:
    """``IOPS limit (randread)``, ``crossover block size (randread)``."""
    if row.key == "crossover_bs":
        return f"crossover block size ({row.rw})"
    return f"{_LIMIT_NAMES.get(row.key, row.key)} limit ({row.rw})"


@dataclasses.dataclass(frozen=True)
class LimitsView:
    """The limits side by side as a table: a column per setup (a ratio column beside each
    one but the baseline's), a line per limit, and the notes under it."""

    heads: tuple[tuple[str, bool], ...]  # (setup name, is the baseline)
    # label, and per head (value, ratio, is the baseline)
    lines: tuple[tuple[str, tuple[tuple[str, str, bool], ...]], ...]
    notes: tuple[str, ...]


def limits_view(c: Comparison) -> LimitsView | None:
    if not c.limits:
        return None
    keys = list(dict.fromkeys(cell.setup for row in c.limits for cell in row.cells))
    lines = []
    for row in c.limits:
        cells = {cell.setup: cell for cell in row.cells}
        lines.append(
            (
                limit_label(row),
                tuple(
                    (
                        limit_value(row.key, cells[k]) if k in cells else "",
                        format_ratio(cells[k].ratio) if k in cells and cells[k].ratio else "",
                        k == c.baseline,
                    )
                    for k in keys
                ),
            )
        )
    return LimitsView(
        heads=tuple((c.setup(k).name, k == c.baseline) for k in keys),
        lines=tuple(lines),
        notes=tuple(limit_notes(c)),
    )


def limit_value(key: str, cell: LimitCell) -> str:
    """``2.98k IOPS (2.95k to 3.01k)``, ``... = throttle``; ``none found``."""
    if cell.estimate is None:
        return "none found"
    return describe(cell.estimate, key) + (" = throttle" if cell.throttle else "")


def limit_notes(c: Comparison) -> list[str]:
    """Why a setup found no limit, and which throttle a limit equals, a line each."""
    names = {s.key: s.name for s in c.setups}
    out = []
    for row in c.limits:
        for cell in row.cells:
            if cell.estimate is None and cell.why_none:
                out.append(f"{names[cell.setup]}, {limit_label(row)}: none found: {cell.why_none}")
            elif cell.throttle:
                out.append(f"{names[cell.setup]}, {limit_label(row)}: equal to {cell.throttle}")
    return out
