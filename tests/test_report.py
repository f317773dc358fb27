"""The HTML and Markdown reports: escaping, self-containedness, and the page in Chromium.

The runs are built directly, with metrics parsed from recorded fio outputs (real json+
histograms) and scaled per run and repetition, and synthetic per-second samples.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import dataclasses
import json
import math
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import plotly.offline  # type: ignore[import-untyped]
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobench.analysis.compare import compare
from iobench.analysis.histogram import idx_to_val
from iobench.fio.parse import parse_fio_output
from iobench.metrics import workload_metrics
from iobench.records import ResultRecord, RunRecord, SuiteDefinition, TargetRecord
from iobench.report.charts import latency_curve, nines, percentile_grid, tick_step_s
from iobench.report.html import plotly_js, render_html
from iobench.report.markdown import md_text, render_markdown
from iobench.report.model import CLAT_NOTE, result_lines, shape_cells, workload_shape
from iobench.units import format_iops, format_ns

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"
XSS = "<script>alert(1)</script>"
PIPE_LABEL = "fast|disk `x` **b**"
EVIL_PATH = "/mnt/<img src=x onerror=alert(2)>"

# workload -> (recorded output, params)
WORKLOADS: dict[str, tuple[str, dict[str, Any]]] = {
    "randread-4k-qd8": (
        "libaio-randread-4k-qd8-jsonplus.json",
        {"rw": "randread", "bs": 4096, "iodepth": 8, "numjobs": 1},
    ),
    "randrw-4k-sync": (
        "psync-randrw-fsync-jsonplus.json",
        {"rw": "randrw", "bs": 4096, "iodepth": 1, "numjobs": 1, "rwmixread": 50},
    ),
    "randwrite-4k-2jobs": (  # completion-latency bins only
        "numjobs2-group-reporting-randwrite-jsonplus.json",
        {"rw": "randwrite", "bs": 4096, "iodepth": 1, "numjobs": 2},
    ),
    "seqread-1m": (  # plain json: no bins at all
        "seqread-1m-json.json",
        {"rw": "read", "bs": 1 << 20, "iodepth": 1, "numjobs": 1},
    ),
}
COMMON = {"ioengine": "libaio", "direct": True, "runtime_s": 5.0, "ramp_s": 1.0, "size": 1 << 28}


def _metrics(name: str, params: dict[str, Any]) -> dict[str, Any]:
    return workload_metrics(parse_fio_output((RECORDED / name).read_text()), params)


BASE = {w: _metrics(f, {**p, **COMMON}) for w, (f, p) in WORKLOADS.items()}


def _scaled(metrics: dict[str, Any], speed: float) -> dict[str, Any]:
    """IOPS and bandwidth times ``speed``, latencies divided by it (bins included)."""
    out = copy.deepcopy(metrics)
    for d in ("read", "write", "trim"):
        section = out.get(d)
        if not section:
            continue
        section["iops"] *= speed
        section["bw_bytes"] *= speed
        for key in ("lat_ns", "clat_ns", "slat_ns"):
            lat = section.get(key)
            if not lat:
                continue
            for k, v in list(lat.items()):
                if k in ("mean", "min", "max", "stddev") or (k.startswith("p") and v):
                    lat[k] = v / speed
            if lat.get("bins"):
                bins: dict[str, int] = {}
                for k, v in lat["bins"].items():
                    key_ns = str(max(1, round(int(k) / speed)))
                    bins[key_ns] = bins.get(key_ns, 0) + v
                lat["bins"] = bins
    return out


def _samples(metrics: dict[str, Any], seconds: int, phase: float) -> dict[str, Any]:
    out: dict[str, Any] = {"interval_ms": 1000}
    for d in ("read", "write"):
        section = metrics.get(d)
        if not section:
            continue
        t = list(range(1, seconds + 1))
        wobble = [1 + 0.08 * math.sin(phase + i / 2) for i in t]
        out[d] = {
            "t_s": t,
            "iops": [section["iops"] * w for w in wobble],
            "bw_bytes": [section["bw_bytes"] * w for w in wobble],
            "lat_mean_ns": [(section["lat_ns"] or section["clat_ns"])["mean"] / w for w in wobble],
        }
    return out


def _host(name: str) -> dict[str, Any]:
    return {
        "hostname": name,
        "kernel": {"release": "6.1.0-18-amd64", "version": "#1 SMP Debian"},
        "os": "Debian GNU/Linux 12 (bookworm)",
        "arch": "x86_64",
        "cpu": {"model": "Intel(R) Xeon(R) CPU @ 2.20GHz", "online": 4, "usable": 4},
        "memory_bytes": 16 << 30,
        "virtualization": {"vm": "kvm", "container": "none", "source": "systemd-detect-virt"},
    }


def _context(path: str, fstype: str) -> dict[str, Any]:
    return {
        "path": path,
        "kind": "directory",
        "error": None,
        "size_bytes": None,
        "filesystem": {
            "fstype": fstype,
            "source": "/dev/vda",
            "target": "/",
            "options": "rw,relatime,discard",
        },
        "mounts": [],
        "block": {
            "device": "vda",
            "chain": [{"name": "vda", "path": "/dev/vda", "type": "disk", "parents": []}],
            "disks": [
                {
                    "kname": "vda",
                    "path": "/dev/vda",
                    "vendor": "0x1af4",
                    "size_bytes": 256 << 30,
                    "rotational": False,
                    "scheduler": "mq-deadline",
                    "transport": "virtio",
                }
            ],
            "source": "lsblk",
            "note": None,
        },
    }


def make_run(
    run_id: int,
    label: str | None,
    speed: float,
    repetitions: int,
    *,
    target: str = "/data",
    host: str = "box",
    fstype: str = "ext4",
    spread: float = 0.02,
) -> RunRecord:
    results = []
    for rep in range(1, repetitions + 1):
        for position, (workload, (_, params)) in enumerate(WORKLOADS.items()):
            metrics = _scaled(BASE[workload], speed * (1 + spread * (rep - 1)))
            results.append(
                ResultRecord(
                    target=target,
                    workload=workload,
                    position=position,
                    status="ok",
                    params={**params, **COMMON},
                    metrics=metrics,
                    job_file="[job]\n",
                    fio_argv=["fio", "--output-format=json+"],
                    fio_rc=0,
                    fio_version="3.33",
                    raw_output=None,
                    fio_stdout="",
                    fio_stderr="",
                    error=None,
                    started_at="2026-11-22T02:40:12.481Z",
                    finished_at="2026-11-22T02:40:18.481Z",
                    repetition=rep,
                    samples=_samples(metrics, 5, phase=rep + run_id),
                )
            )
    return RunRecord(
        id=run_id,
        uuid=f"uuid-{run_id}",
        status="complete",
        suite="quick",
        suite_def=SuiteDefinition(name="quick", description="six short workloads"),
        label=label,
        argv=["iobench", "run", target, "--label", label or ""],
        host=_host(host),
        fio_version="3.33",
        iobench_version="0.1.0",
        warnings=[
            {
                "id": "short-runtime",
                "severity": "warning",
                "message": f"the quick suite is indicative <b>{label}</b>",
                "fix": "use --suite standard",
                "workload": None,
                "target": target,
            }
        ],
        error=None,
        started_at=f"2026-11-22T0{run_id}:40:12.481Z",
        finished_at=f"2026-11-22T0{run_id}:41:12.481Z",
        targets=[TargetRecord(0, target, target, "directory", None, _context(target, fstype))],
        results=results,
        result_count=len(results),
    )


def three_runs() -> list[RunRecord]:
    return [
        make_run(1, XSS, 1.0, 3, host="<b>box</b>"),
        make_run(2, PIPE_LABEL, 1.4, 3, target=EVIL_PATH, fstype="xfs"),
        make_run(3, None, 0.95, 1),
    ]


@pytest.fixture(scope="module")
def runs() -> list[RunRecord]:
    return three_runs()


@pytest.fixture(scope="module")
def page(runs: list[RunRecord]) -> str:
    return render_html(runs, compare(runs))


@pytest.fixture(scope="module")
def report_file(page: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


# -- reading the page -----------------------------------------------------------------------


class Page(HTMLParser):
    """The parts of a report the tests look at: tags, attributes, scripts, text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.text: list[str] = []
        self.title = ""
        self._in: str | None = None
        self._attrs: dict[str, str | None] = {}
        self._buffer: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "title", "style"):
            self._in, self._attrs, self._buffer = tag, dict(attrs), []

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            body = "".join(self._buffer)
            if tag == "script":
                self.scripts.append((self._attrs, body))
            elif tag == "title":
                self.title = body
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self._buffer.append(data)
        else:
            self.text.append(data)

    def json_blocks(self) -> dict[str, Any]:
        return {
            str(attrs.get("id")): json.loads(body)
            for attrs, body in self.scripts
            if attrs.get("type") == "application/json"
        }

    def charts(self) -> list[str]:
        """The ids of the JSON blocks the chart divs are drawn from."""
        return [
            str(a["data-figure"])
            for tag, a in self.tags
            if tag == "div" and a.get("data-figure") is not None
        ]


def without_plotly_js(page: str) -> str:
    js = str(plotly_js())
    assert page.count(js) == 1
    return page.replace(js, "")


# -- the HTML report -------------------------------------------------------------------------

VENDOR = Path(__file__).parent.parent / "src" / "iobench" / "report" / "vendor"


def test_plotly_js_is_inlined_exactly_once(page: str) -> None:
    js = str(plotly_js())
    assert page.count(js) == 1
    # No other copy or loader: one "Plotly" bundle banner, no script with a src.
    assert page.count(js[:200]) == 1
    assert all("src" not in attrs for attrs, _ in Page(page).scripts)
    # The basic bundle, not the whole of plotly.js: a quarter of its size.
    assert "plotly.js (basic - minified)" in js[:200]
    assert len(js) < len(plotly.offline.get_plotlyjs()) / 3


def test_the_vendored_plotly_is_the_one_documented_and_speaks_the_figures_schema() -> None:
    """The bundle is the file its README names (version and sha256), and of the same major
    version as the plotly.js whose schema the plotly Python package writes figures in."""
    import hashlib

    bundle = (VENDOR / "plotly-basic.min.js").read_bytes()
    readme = (VENDOR / "README.md").read_text()
    assert hashlib.sha256(bundle).hexdigest() in readme
    version = re.search(rb"plotly\.js \(basic - minified\) v(\d+)\.(\d+)\.(\d+)", bundle[:300])
    assert version is not None
    assert f"`plotly.js-basic-dist-min` {'.'.join(v.decode() for v in version.groups())}" in readme
    python_side = plotly.offline.get_plotlyjs_version().split(".")
    assert version.group(1).decode() == python_side[0], (
        f"plotly.js {python_side} (the Python package's) vs the vendored bundle: "
        "refresh it with scripts/vendor-plotly"
    )
    assert "MIT" in (VENDOR / "plotly-LICENSE").read_text()


def test_the_page_refers_to_nothing_outside_itself(page: str) -> None:
    rest = without_plotly_js(page)
    assert "http://" not in rest and "https://" not in rest and "//cdn" not in rest
    parsed = Page(page)
    for tag, attrs in parsed.tags:
        assert tag not in ("link", "img", "iframe", "object", "embed", "base"), tag
        for name in ("src", "srcset", "action", "poster", "data", "background"):
            assert name not in attrs, (tag, attrs)
        if "href" in attrs:
            assert str(attrs["href"]).startswith("#"), attrs
    assert re.search(r"url\s*\(", rest) is None
    assert "@import" not in rest


def test_user_strings_are_escaped_everywhere(page: str) -> None:
    # Never as markup: not in the HTML, not inside any script element.
    for raw in ("<script>alert(1)", "<img src=x", "<b>box</b>", "<b>None</b>"):
        assert raw not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    parsed = Page(page)
    # As text, the strings read exactly as they were given.
    assert XSS in parsed.title and PIPE_LABEL in parsed.title
    text = "".join(parsed.text)
    assert XSS in text and EVIL_PATH in text and "<b>box</b>" in text
    # Only our own elements: three scripts of code, the config and one block per chart.
    kinds = [attrs.get("type") for attrs, _ in parsed.scripts]
    assert kinds.count(None) == 3
    assert page.count("</script>") == len(parsed.scripts) == page.count("<script")
    assert {tag for tag, _ in parsed.tags} <= {
        "html", "head", "meta", "title", "style", "script", "body", "header", "h1", "nav", "a",
        "ul", "li", "main", "section", "h2", "h3", "h4", "div", "table", "thead", "tbody",
        "tr", "th", "td", "span", "p", "strong", "br", "details", "summary", "noscript",
        "article", "figure", "figcaption", "dl", "dt", "dd", "code", "footer",
    }  # fmt: skip


def test_every_chart_has_a_json_block_that_parses(page: str) -> None:
    parsed = Page(page)
    blocks = parsed.json_blocks()
    assert blocks.pop("plotly-config") == {
        "displaylogo": False,
        "displayModeBar": False,
        "responsive": True,
    }
    charts = parsed.charts()
    assert sorted(charts) == sorted(blocks)
    # The overview's bars, and for 4 workloads timelines and latency curves (seqread-1m:
    # fio's listed ones).
    assert len(charts) == 1 + 4 * 2
    names = {t["name"] for fig in blocks.values() for t in fig["data"] if "name" in t}
    # Plotly reads tags in names: it gets the label escaped, and shows it as text.
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in names
    assert not any("<script" in n for n in names)
    for fig in blocks.values():
        assert fig["layout"]["template"]["layout"]["paper_bgcolor"] == "#ffffff"
        assert "mapbox" not in json.dumps(fig) and "geo" not in fig["layout"]


def _figures(page: str, title: str) -> list[dict[str, Any]]:
    """The figures of one kind, in page order, found by their figcaption."""
    order = re.findall(
        r"<figcaption>([^<]+)</figcaption>\s*<div class=\"chart\" id=\"([^\"]+)", page
    )
    blocks = Page(page).json_blocks()
    return [blocks[f"{cid}-data"] for caption, cid in order if caption == title]


def test_bars_show_the_mean_with_the_95_ci_of_the_repetitions(
    page: str, runs: list[RunRecord]
) -> None:
    (bars,) = _figures(page, "IOPS and bandwidth")  # the overview: every workload
    iops = [t for t in bars["data"] if t["xaxis"] == "x"]
    assert [t["orientation"] for t in iops] == ["h"] * 3  # a bar per setup and workload
    row = iops[0]["y"].index("randread-4k-qd8")
    reps = [
        (r.metrics or {})["read"]["iops"]
        for r in runs[0].results
        if r.workload == "randread-4k-qd8"
    ]
    # Run 1 is the baseline: its bar is 100 %, the others a share of it; the figure is
    # printed at the bar's end, and the error bar is its interval as a share too.
    mean = sum(reps) / 3
    assert iops[0]["x"][row] == pytest.approx(100.0)
    assert iops[0]["text"][row] == format_iops(mean)
    others = [
        [(r.metrics or {})["read"]["iops"] for r in run.results if r.workload == "randread-4k-qd8"]
        for run in runs[1:]
    ]
    for trace, reps_of in zip(iops[1:], others, strict=True):
        share = 100 * (sum(reps_of) / len(reps_of)) / mean
        assert trace["x"][row] == pytest.approx(share)
        assert trace["text"][row].startswith(format_iops(sum(reps_of) / len(reps_of)) + " \u00b7 ")
    assert iops[0]["error_x"]["visible"] is True and iops[0]["error_x"]["array"][row] > 0
    assert iops[2]["error_x"]["visible"] is False  # run 3: one repetition, no interval
    assert "95 % CI" in iops[0]["hovertext"][row]


def test_a_hostile_workload_name_is_text_in_the_overview_chart() -> None:
    """Plotly reads tags (links among them) in axis labels: a workload's name is escaped
    there, as in hover text and trace names."""
    from iobench.analysis.stats import summarize
    from iobench.report.charts import OverviewColumn, overview_figure

    name = '<a href="javascript:alert(1)">x</a>'
    fig = overview_figure([name], [OverviewColumn("s", "#000000", [summarize([5.0])], [None])])
    assert fig is not None
    text = fig.to_json()
    assert "<a " not in text and "&lt;a href=" in text


def test_bars_of_two_repetitions_have_no_error_bars() -> None:
    """With 2 repetitions the 95 % interval is +-12.7 standard errors, below zero for any
    real spread: not drawn, only given in the hover text."""
    from iobench.analysis.stats import summarize
    from iobench.report.charts import OverviewColumn, overview_figure

    two = summarize([1000.0, 1300.0])
    fig = overview_figure(["w"], [OverviewColumn("two", "#000000", [two], [two])])
    assert fig is not None
    iops = fig.to_plotly_json()["data"][0]
    assert iops["error_x"]["visible"] is False
    assert (iops["error_x"]["array"], iops["error_x"]["arrayminus"]) == ([None], [None])
    assert "95 % CI" in iops["hovertext"][0] and "n=2" in iops["hovertext"][0]
    assert iops["textposition"] == "outside"  # no error bar to collide with


@pytest.mark.parametrize("values", [(100.0, 900.0), (100.0, 1000.0), (1e3, 2.5e6), (5.0,)])
def test_bars_of_one_setup_are_linear_from_zero_whatever_their_span(
    values: tuple[float, ...],
) -> None:
    """A bar's length is its figure: a linear axis from zero, every bar inside it with room
    for its value, even when the figures are 2,500 times apart (a log axis drew a bar at
    40 % of another as 75 % of its length)."""
    from iobench.analysis.stats import summarize
    from iobench.report.charts import OverviewColumn, overview_figure

    column = OverviewColumn(
        "s", "#000000", [summarize([v]) for v in values], [summarize([v * 4096]) for v in values]
    )
    drawn = overview_figure([f"w{i}" for i in range(len(values))], [column])
    assert drawn is not None
    fig = drawn.to_plotly_json()
    for axis, ref in (("xaxis", "x"), ("xaxis2", "x2")):
        assert fig["layout"][axis].get("type") in (None, "linear")
        lo, hi = fig["layout"][axis]["range"]
        xs = [x for t in fig["data"] if t["xaxis"] == ref for x in t["x"]]
        assert lo == 0 and hi > 1.3 * max(xs)
    assert fig["data"][0]["text"] == [format_iops(v) for v in values]


@pytest.mark.parametrize(
    ("base", "other"), [(3000.0, 1200.0), (3000.0, 30.0), (100.0, 2500.0), (500.0, 500.0)]
)
def test_compared_bars_are_shares_of_the_baseline_on_one_linear_axis(
    base: float, other: float
) -> None:
    """With a baseline every bar is its setup's figure as a share of the baseline's in the
    same row, on one linear axis for every row: a setup at 40 % draws a bar 40 % as long
    as the baseline's, whichever the workload, and prints the figure and the share."""
    from iobench.analysis.stats import summarize
    from iobench.report.charts import OverviewColumn, overview_figure

    rows = [1.0, 0.01]  # two workloads 100 times apart: the shares do not care
    columns = [
        OverviewColumn(
            name,
            "#000000",
            [summarize([v * k]) for k in rows],
            [summarize([v * k * 4096]) for k in rows],
        )
        for name, v in (("a", base), ("b", other))
    ]
    drawn = overview_figure(["big", "small"], columns, baseline=0)
    assert drawn is not None
    fig = drawn.to_plotly_json()
    share = 100 * other / base
    for axis, ref in (("xaxis", "x"), ("xaxis2", "x2")):
        assert fig["layout"][axis].get("type") in (None, "linear")
        lo, hi = fig["layout"][axis]["range"]
        traces = [t for t in fig["data"] if t["xaxis"] == ref]
        assert traces[0]["x"] == pytest.approx([100.0, 100.0])
        assert traces[1]["x"] == pytest.approx([share, share])
        assert lo == 0 and hi > 1.3 * max(100.0, share)
        assert "%" in fig["layout"][axis]["ticksuffix"]
    iops_b = fig["data"][1]
    shown = f"{share:.0f} %" if share >= 10 else f"{share:.2g} %"
    assert iops_b["text"][0] == f"{format_iops(other)} \u00b7 {shown}"
    assert fig["data"][0]["text"][0] == format_iops(base)  # the baseline: its figure
    # A dashed line at 100 %, the baseline's length, in both panels.
    lines = [sh for sh in fig["layout"]["shapes"] if sh["type"] == "line"]
    assert len(lines) == 2 and all(sh["x0"] == sh["x1"] == 100 for sh in lines)


def test_latency_curves_come_from_the_histograms(page: str) -> None:
    found = _figures(page, "latency percentiles")
    # seqread-1m (plain json) has no histogram: fio's listed percentiles, drawn as markers.
    curves = [c for c in found if all(t["mode"] == "lines" for t in c["data"])]
    assert len(found) == 4 and len(curves) == 3
    first = curves[0]
    assert first["layout"]["yaxis"]["type"] == "log"
    assert "p99.9" in first["layout"]["xaxis"]["ticktext"]
    assert [len(c["data"]) for c in curves] == [3, 6, 3]  # randrw: read and write
    assert "annotations" not in first["layout"]
    # randwrite-4k-2jobs has completion-latency bins only, and the chart says so.
    assert curves[2]["layout"]["annotations"][0]["text"].startswith("completion latency")


def test_latency_curve_passes_through_fios_percentiles() -> None:
    run = make_run(9, None, 1.0, 1)  # one repetition at speed 1: fio's own histogram
    curve = _figures(render_html([run], None), "latency percentiles")[0]["data"][0]
    lat = BASE["randread-4k-qd8"]["read"]["lat_ns"]  # fio's figures, recomputed from the bins
    points = dict(zip(curve["x"], curve["y"], strict=True))
    for p in ("p1", "p50", "p90", "p99", "p99.9"):
        x = nines(float(p[1:]))
        at = [k for k in points if abs(k - x) < 1e-9]
        assert at, f"{p} is not on the curve"
        assert points[at[0]] == lat[p]
    assert curve["y"] == sorted(curve["y"])
    assert max(curve["x"]) <= math.log10(lat["n"])


def test_percentile_grid_is_even_in_nines_and_bounded_by_the_samples() -> None:
    grid = percentile_grid(100_000)
    assert grid == sorted(grid) and grid[0] == 1.0 and grid[-1] < 99.999
    assert {50.0, 90.0, 99.0, 99.9, 99.99} <= set(grid)
    assert nines(grid[-1]) <= 5
    assert max(percentile_grid(10**12)) < 99.99991  # at most six nines
    assert percentile_grid(1) == [1.0] or percentile_grid(1) == []


def test_latency_curve_keeps_the_ends_of_each_plateau() -> None:
    low, high = idx_to_val(600), idx_to_val(700)  # two bins' representative values (ns)
    curve = latency_curve({low: 5000, high: 5000})
    values = [v for _, v in curve]
    assert values[0] == low and values[-1] == high
    # Each plateau keeps its ends and fio's usual percentiles, nothing else.
    kept = {p for p, _ in curve}
    assert {1.0, 5.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9} <= kept
    assert len(curve) < 20 < len(percentile_grid(10_000))
    assert latency_curve({}) == []


def test_timelines_draw_every_repetition_per_second(page: str) -> None:
    timeline = _figures(page, "per second")[0]
    # 3 + 3 + 1 repetitions, each with IOPS and latency (bandwidth in the IOPS hover).
    assert len(timeline["data"]) == 7 * 2
    assert "MiB/s" in timeline["data"][0]["hovertext"][0]
    assert timeline["data"][0]["x"] == [1, 2, 3, 4, 5]
    assert "#2" in timeline["data"][2]["hovertext"][0]
    assert timeline["layout"]["xaxis"]["dtick"] == 1  # whole seconds, not 1.2 s ticks


@pytest.mark.parametrize(
    ("span", "step"), [(2, 1), (12, 1), (13, 2), (60, 5), (120, 10), (300, 50), (3600, 500)]
)
def test_timeline_ticks_are_whole_seconds_and_few(span: float, step: float) -> None:
    assert tick_step_s(span) == step
    assert span / step <= 12


def test_one_run_without_comparison(runs: list[RunRecord]) -> None:
    page = render_html(runs[2:], None)
    assert 'id="comparison"' not in page
    assert "<details open>" in page
    iops = format_iops(BASE["randread-4k-qd8"]["read"]["iops"] * 0.95)  # run 3: 1 repetition
    assert f'<td class="num">{iops}</td>' in page


def test_missing_histograms_samples_and_failures_are_said(runs: list[RunRecord]) -> None:
    run = runs[2]
    bare = []
    for r in run.results:
        r = dataclasses.replace(r, samples=None)
        if r.workload == "randrw-4k-sync":
            r = dataclasses.replace(
                r, status="failed", metrics=None, error="fio: <io_u> error\nmore"
            )
        bare.append(r)
    run = dataclasses.replace(run, results=bare, status="failed", error="1 workload failed")
    page = render_html([run], None)
    assert "per second: no per-second samples were recorded" in page
    # The overview's bars and latency curves for the 3 that finished: seqread-1m (plain
    # json, no bins) has fio's own percentile list drawn as markers, and says so.
    assert len(Page(page).charts()) == 1 + 3
    (listed,) = [
        f for f in _figures(page, "latency percentiles") if f["data"][0]["mode"] != "lines"
    ]
    assert listed["data"][0]["mode"] == "lines+markers"
    assert "dots: fio's own percentiles" in listed["layout"]["annotations"][0]["text"]
    assert "p99: " in listed["data"][0]["hovertext"][3]  # p50, p90, p95, p99
    assert "randrw-4k-sync</td>" not in page
    assert (
        '<span class="status status-failed">failed</span> randrw-4k-sync on '
        '<span class="path">/data</span>: fio: &lt;io_u&gt; error</li>'
    ) in page
    assert "The run ended with an error: 1 workload failed" in page
    text = render_markdown([run], None)
    assert "- failed: randrw-4k-sync on /data: fio: &lt;io\\_u&gt; error\n" in text
    assert "The run ended with an error: 1 workload failed" in text


def test_unstable_repetitions_are_flagged(runs: list[RunRecord]) -> None:
    noisy = make_run(4, "noisy", 1.0, 3, spread=0.2)  # 1, 1.2, 1.4: CV about 17 %
    page = render_html([runs[0], noisy], compare([runs[0], noisy]))
    assert page.count('<span class="unstable"') == 2 * 5  # comparison and results tables
    text = render_markdown([runs[0], noisy], compare([runs[0], noisy]))
    assert text.count(" \u26a0 |") == 2 * 5
    assert render_markdown(runs[:1], None).count("\u26a0 |") == 0


# -- the Markdown report ---------------------------------------------------------------------


def _cells(line: str) -> list[str]:
    """A GFM table row's cells: split at each "|" that is not backslash-escaped (a
    backslash escapes the next character, another backslash included)."""
    assert line.startswith("|") and line.endswith("|"), line
    cells, current, chars = [], "", iter(line[1:-1])
    for c in chars:
        if c == "\\":
            current += c + next(chars, "")
        elif c == "|":
            cells.append(current)
            current = ""
        else:
            current += c
    return [*cells, current]


def _tables(text: str) -> list[list[str]]:
    tables: list[list[str]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append(line)
        previous = line
    return tables


def test_markdown_tables_keep_their_columns(runs: list[RunRecord]) -> None:
    text = render_markdown(runs, compare(runs))
    tables = _tables(text)
    assert len(tables) == 1 + 1 + 1 + 3  # runs, comparison, context, a result table per run
    for table in tables:
        widths = {len(_cells(line)) for line in table}
        assert len(widths) == 1, table
        assert all(c.strip() in ("---", "---:") for c in _cells(table[1]))
    assert "<script" not in text and "<img" not in text and "<b>" not in text
    assert "fast\\|disk \\`x\\` \\*\\*b\\*\\*" in text
    assert "| 3 |   | quick | complete |" in text
    # The comparison has a line per setup and workload direction, with ratios and verdicts.
    comparison = tables[1]
    assert len(comparison) == 2 + 5 * 3
    assert "| 140 % |" in comparison[3]
    assert comparison[3].endswith("| faster (t-test, 3 vs 3 repeats) |")
    # Right under the title, each setup's headline: the verdicts counted, then the size
    # of the difference (it read "5 x faster", which counted workloads, not speed).
    head = text.split("## Runs")[0]
    base = md_text(runs[0].label)
    assert head.splitlines()[2:] == [
        f"- **{md_text(runs[1].label)}** against **{base}**: "
        "faster in 5 of 5 workload directions; IOPS 140 % of the baseline in each",
        f"- **run 3** against **{base}**: "
        "too few repeats to tell in 5 of 5 workload directions; IOPS 93 % of the baseline in each",
        "",
    ]


def test_markdown_single_run(runs: list[RunRecord]) -> None:
    text = render_markdown(runs[:1], None)
    assert "## Comparison" not in text
    assert len(_tables(text)) == 2
    mean = BASE["randread-4k-qd8"]["read"]["iops"] * 1.02  # repetitions at 1, 1.02, 1.04
    assert f"| {format_iops(mean)} ±" in text


@given(st.text())
def test_md_text_cannot_break_a_cell(value: str) -> None:
    cell = md_text(value)
    assert "\n" not in cell and "\r" not in cell
    assert "<" not in cell and ">" not in cell
    unescaped = re.sub(r"\\.", "", cell)  # what is left after every backslash escape
    assert "|" not in unescaped and "`" not in unescaped and "*" not in unescaped
    assert len(_cells(f"| a | {cell} | b |")) == 3


# -- headless Chromium ----------------------------------------------------------------------

CHROMIUM = shutil.which("chromium")
NO_CHROMIUM = (
    "chromium is not installed: scripts/setup.sh --dev installs it (apt-get install chromium)"
)
# Not a skip: the tests that need Chromium fail without it, saying so (CI installs it).
needs_chromium = pytest.mark.usefixtures("chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    # Any name lookup fails: a request to the network could not succeed even if made.
    "--host-resolver-rules=MAP * ~NOTFOUND",
]
# Puts the two pipe ends at fds 3 and 4, where --remote-debugging-pipe expects them.
_FD_SHIM = (
    "import fcntl, os, sys\n"
    "r = fcntl.fcntl(int(sys.argv[1]), fcntl.F_DUPFD, 10)\n"
    "w = fcntl.fcntl(int(sys.argv[2]), fcntl.F_DUPFD, 10)\n"
    "os.dup2(r, 3)\n"
    "os.dup2(w, 4)\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)


class Browser:
    """Headless Chromium driven over the DevTools protocol on a pipe (stdlib only)."""

    def __init__(self, profile: Path) -> None:
        assert CHROMIUM is not None, NO_CHROMIUM
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _FD_SHIM,
                str(to_child_r),
                str(from_child_w),
                CHROMIUM,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            pass_fds=(to_child_r, from_child_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError, TimeoutError):
            self.call("Browser.close", session=False, timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise OSError("chromium closed the DevTools pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: bool = True,
        timeout: float = 30,
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30) -> dict[str, Any]:
        for event in self.events:
            if event["method"] == method:
                return event
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if "method" in reply:
                self.events.append(reply)
                if reply["method"] == method:
                    return reply

    def open(self, url: str, width: int = 1400, height: int = 1000) -> None:
        """A new tab that records its requests, console and errors, showing ``url``."""
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)
        attached = self.call(
            "Target.attachToTarget",
            {"targetId": target["targetId"], "flatten": True},
            session=False,
        )
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.call("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        assert "exceptionDetails" not in reply, reply["exceptionDetails"]
        return reply["result"].get("value")

    def screenshot(self, path: Path, clip: dict[str, float] | None = None) -> None:
        params: dict[str, Any] = {"format": "png"}
        if clip:
            params["clip"] = {**clip, "scale": 1}
        data = self.call("Page.captureScreenshot", params, timeout=60)["data"]
        path.write_bytes(base64.b64decode(data))

    def page_events(self, method: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["method"] == method and e.get("sessionId")]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    b = Browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield b
    finally:
        b.close()


def assert_clean(browser: Browser, uri: str) -> None:
    """No error of any kind (the page's own error list, exceptions, console, browser log),
    and no request but the page itself; nothing failed to load."""
    assert browser.evaluate("document.getElementById('js-errors').textContent") == ""
    assert browser.evaluate("document.getElementById('js-errors').hidden") is True
    assert browser.page_events("Runtime.exceptionThrown") == []
    assert [
        e["params"]
        for e in browser.page_events("Runtime.consoleAPICalled")
        if e["params"]["type"] in ("error", "warning", "assert")
    ] == []
    assert [
        e["params"]["entry"]
        for e in browser.page_events("Log.entryAdded")
        if e["params"]["entry"]["level"] in ("error", "warning")
    ] == []
    requests = {
        e["params"]["request"]["url"] for e in browser.page_events("Network.requestWillBeSent")
    }
    assert requests == {uri}
    assert browser.page_events("Network.loadingFailed") == []


# What the page says is wrong with itself, in one expression: empty sections and chart
# grids, articles with only a heading, tables without rows, links that lead nowhere.
DEFECTS = """(() => {
  const out = [];
  for (const s of document.querySelectorAll('main section')) {
    if (!s.querySelector('table tbody tr, figure, article, li, dl, p:not(.muted)'))
      out.push('empty section #' + s.id);
  }
  for (const g of document.querySelectorAll('.chart-grid'))
    if (!g.querySelector('figure')) out.push('empty chart grid in ' + g.closest('[id]').id);
  for (const a of document.querySelectorAll('article'))
    if (a.children.length < 2) out.push('article with nothing but its heading');
  for (const t of document.querySelectorAll('table'))
    if (!t.querySelector('tbody tr')) out.push('table without rows');
  for (const a of document.querySelectorAll('a[href^="#"]'))
    if (!document.getElementById(a.getAttribute('href').slice(1)))
      out.push('dangling link ' + a.getAttribute('href'));
  for (const d of document.querySelectorAll('div.chart'))
    if (!d.querySelector('.main-svg .trace')) out.push('chart without a trace: ' + d.id);
  return out;
})()"""


# One report of one run of the quick suite is about 1.3 MB; every report stays under this.
MAX_REPORT_BYTES = 1_500_000


def check_report(html: Path, profile: Path, expected: Sequence[str], overview: str = "") -> None:
    """A report as a person gets it, in headless Chromium: small; every chart drawn, with
    a trace; the overview first, saying ``overview``; the ``expected`` selectors there; no
    empty section or dangling link (DEFECTS); no error and no request; and it prints.
    IOBENCH_REPORT_SCREENSHOTS=DIR keeps the report and a full-page screenshot there."""
    assert html.stat().st_size < MAX_REPORT_BYTES
    b = Browser(profile)
    try:
        b.open(html.as_uri())
        want = b.evaluate("document.querySelectorAll('div.chart').length")
        assert want > 0 and wait_for_charts(b, want) == want
        assert b.evaluate(DEFECTS) == []
        for selector in expected:
            assert b.evaluate(f"document.querySelector({selector!r}) !== null"), selector
        # The overview (or a curve run's limits) comes first: the first screen answers.
        assert b.evaluate("document.querySelector('main section').id") == "overview"
        assert overview in b.evaluate("document.getElementById('overview').textContent")
        assert_clean(b, html.as_uri())
        _prints(b, html.with_suffix(".pdf"))
        keep = os.environ.get("IOBENCH_REPORT_SCREENSHOTS")
        if keep:
            _keep(b, html, Path(keep))
    finally:
        b.close()


def _prints(b: Browser, pdf: Path) -> None:
    """As printed: the navigation is gone, every fold is open, and a PDF comes out."""
    b.call("Emulation.setEmulatedMedia", {"media": "print"})
    assert b.evaluate("getComputedStyle(document.querySelector('nav')).display") == "none"
    b.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert b.evaluate("Array.from(document.querySelectorAll('details')).every(d => d.open)")
    data = b.call("Page.printToPDF", {"printBackground": True}, timeout=60)["data"]
    pdf.write_bytes(base64.b64decode(data))
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 20_000
    b.call("Emulation.setEmulatedMedia", {"media": ""})


def _keep(b: Browser, html: Path, where: Path) -> None:
    where.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(html, where / html.name)
    height = b.evaluate("document.documentElement.scrollHeight")
    b.call(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1400, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )
    time.sleep(0.5)
    b.screenshot(where / html.with_suffix(".png").name)


def wait_for_charts(browser: Browser, expected: int) -> int:
    deadline = time.monotonic() + 30
    drawn = 0
    while time.monotonic() < deadline:
        drawn = browser.evaluate("document.querySelectorAll('div.chart.js-plotly-plot').length")
        if drawn == expected:
            break
        time.sleep(0.1)
    return int(drawn)


@needs_chromium
def test_chromium_draws_every_chart_with_no_error_and_no_request(
    browser: Browser, report_file: Path, page: str, tmp_path: Path
) -> None:
    parsed = Page(page)
    browser.open(report_file.as_uri())
    assert wait_for_charts(browser, len(parsed.charts())) == len(parsed.charts()) == 9
    assert browser.evaluate(
        "Array.from(document.querySelectorAll('div.chart'))"
        ".every(d => d.querySelectorAll('.main-svg .trace').length > 0)"
    )
    assert_clean(browser, report_file.as_uri())
    # The label never ran (no alert dialog) and reads as text: title, chart key, no extra script.
    assert browser.page_events("Page.javascriptDialogOpening") == []
    assert browser.evaluate("document.title") == parsed.title
    assert XSS in browser.evaluate("document.querySelector('.key').textContent")
    assert browser.evaluate("document.scripts.length") == len(parsed.scripts)
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    # Hovering a bar shows its value, with the label as text.
    hover = browser.evaluate(
        "(() => { const d = document.querySelector('div.chart');"
        " Plotly.Fx.hover(d, [{curveNumber: 0, pointNumber: 0}], 'xy');"
        " return d.querySelector('.hoverlayer').textContent; })()"
    )
    assert XSS in hover and "IOPS" in hover and "95 % CI" in hover
    # A full-page screenshot, for a person to look at (IOBENCH_REPORT_SCREENSHOT=path keeps it).
    height = browser.evaluate("document.documentElement.scrollHeight")
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1400, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )
    time.sleep(0.5)  # let the responsive charts settle at the new size
    png = tmp_path / "report.png"
    browser.screenshot(png)
    assert _png_size(png) == (1400, height)
    if os.environ.get("IOBENCH_REPORT_SCREENSHOT"):
        shutil.copyfile(png, os.environ["IOBENCH_REPORT_SCREENSHOT"])


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert len(data) > 100_000, "a nearly blank image"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@needs_chromium
def test_chromium_command_line_screenshot_and_dom(report_file: Path, tmp_path: Path) -> None:
    """The plain command line, as a person would check: a screenshot and the drawn DOM."""
    assert CHROMIUM is not None, NO_CHROMIUM
    base = [CHROMIUM, *CHROMIUM_FLAGS, "--virtual-time-budget=5000"]
    png = tmp_path / "report.png"
    subprocess.run(
        [
            *base,
            f"--user-data-dir={tmp_path / 'profile-1'}",
            f"--screenshot={png}",
            "--window-size=1400,3000",
            report_file.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert _png_size(png) == (1400, 3000)
    dom = subprocess.run(
        [*base, f"--user-data-dir={tmp_path / 'profile-2'}", "--dump-dom", report_file.as_uri()],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    parsed = Page(dom)
    drawn = [
        a for tag, a in parsed.tags if tag == "div" and "js-plotly-plot" in (a.get("class") or "")
    ]
    assert len(drawn) == 9
    assert '<ul id="js-errors" hidden=""></ul>' in dom


# -- review fixes: latency kind, chart cards, shapes, Markdown context ------------------------


def _headings(page: str) -> list[tuple[str, str]]:
    """(workload, shape) of each chart card, in page order."""
    found = re.findall(
        r'<article class="workload" id="card-\d+">\s*'
        r'<h3>([^<]*) <span class="muted">([^<]*)</span>',
        page,
    )
    return [(str(w), str(shape)) for w, shape in found]


def _with_bs(run: RunRecord, workload: str, bs: int) -> RunRecord:
    results = [
        dataclasses.replace(r, params={**r.params, "bs": bs}) if r.workload == workload else r
        for r in run.results
    ]
    return dataclasses.replace(run, results=results)


def test_chart_cards_keep_workloads_with_different_parameters_apart() -> None:
    a = make_run(1, "a", 1.0, 1)
    b = _with_bs(make_run(2, "b", 1.2, 1), "randread-4k-qd8", 8192)
    # Without a comparison: one card per workload name and parameters.
    headings = _headings(render_html([a, b], None))
    assert headings.count(("randread-4k-qd8", "randread 4k QD8x1")) == 1
    assert headings.count(("randread-4k-qd8", "randread 8k QD8x1")) == 1
    assert len(headings) == 5
    # With one: a card per matched set (3 here), and one per workload not matched (2).
    page = render_html([a, b], compare([a, b]))
    headings = _headings(page)
    assert headings[:3] == [
        ("randrw-4k-sync", "randrw 50/50 4k QD1x1"),
        ("randwrite-4k-2jobs", "randwrite 4k QD1x2"),
        ("seqread-1m", "read 1M QD1x1"),
    ]
    assert sorted(headings[3:]) == [
        ("randread-4k-qd8", "randread 4k QD8x1"),
        ("randread-4k-qd8", "randread 8k QD8x1"),
    ]
    (bars,) = _figures(page, "IOPS and bandwidth")
    # Bars are shares of the baseline's (a): matched rows have a bar per setup, a's
    # unmatched row its 100 %; b's unmatched row has no baseline figure, so no bar, and
    # the chart says why where the bar would be.
    a_bars, b_bars = (t["x"] for t in bars["data"] if t["xaxis"] == "x" and t["type"] == "bar")
    assert [x is not None for x in a_bars] == [True] * 5 + [False]
    assert [x is not None for x in b_bars] == [True] * 4 + [False, False]
    (said,) = (t for t in bars["data"] if t["xaxis"] == "x" and t["type"] == "scatter")
    assert said["y"] == ["randread-4k-qd8, randread 8k QD8x1"]
    assert said["text"] == ["no baseline figure: not compared"]
    assert bars["data"][0]["y"] == [
        "randrw-4k-sync (read)",
        "randrw-4k-sync (write)",
        "randwrite-4k-2jobs",
        "seqread-1m",
        "randread-4k-qd8, randread 4k QD8x1",
        "randread-4k-qd8, randread 8k QD8x1",
    ]
    # Cards and overview rows both say so.
    assert page.count("not compared: no other run has a workload with these parameters") == 4


def test_p99_without_total_latency_percentiles_is_completion_latency(
    page: str, runs: list[RunRecord]
) -> None:
    # randwrite-4k-2jobs and seqread-1m: fio gave total-latency means but no percentiles.
    clat = BASE["seqread-1m"]["read"]["clat_ns"]["p99"]
    run3 = runs[2]  # one repetition at speed 0.95
    lines = {(x.workload, x.direction): x for x in result_lines(run3)}
    seq = lines[("seqread-1m", "read")]
    assert (seq.lat_p99_kind, seq.lat_p99) == ("clat", format_ns(clat / 0.95) + "*")
    assert lines[("randwrite-4k-2jobs", "write")].lat_p99_kind == "clat"
    assert lines[("randread-4k-qd8", "read")].lat_p99_kind == "lat"
    assert not lines[("randread-4k-qd8", "read")].lat_p99.endswith("*")
    assert f'<td class="num">{format_ns(clat / 0.95)}*</td>' in page
    assert page.count(CLAT_NOTE) == 1 + 3  # the comparison and each run's results
    text = render_markdown(runs, compare(runs))
    assert f"| {format_ns(clat / 0.95)}\\* |" in text
    assert text.count(md_text(CLAT_NOTE)) == 1 + 3


def test_unknown_parameters_show_as_a_dash() -> None:
    assert workload_shape({"rw": "randread", "bs": 4096, "iodepth": 8}) == "randread 4k QD8x-"
    assert workload_shape({}) == "- - QD-x-"
    assert workload_shape({"rw": "randrw", "rwmixread": 70, "bs": 8192, "iodepth": 16,
                           "numjobs": 2}) == "randrw 70/30 8k QD16x2"  # fmt: skip
    assert shape_cells({"bs": None, "iodepth": 1}) == ["-", "-", "1 x -"]


def test_markdown_has_each_runs_host_targets_and_warnings(runs: list[RunRecord]) -> None:
    text = render_markdown(runs, compare(runs))
    assert text.count("- host: ") == 3 and "host: host" not in text  # it read "host: host vm"
    assert "- host: &lt;b&gt;box&lt;/b&gt;, Debian GNU/Linux 12 (bookworm), x86\\_64;" in text
    assert "kernel 6.1.0-18-amd64, #1 SMP Debian; virtualisation kvm guest;" in text
    assert "- target /data: directory, ext4, mounted rw,relatime,discard, /dev/vda virtio" in text
    assert "- target /mnt/&lt;img src=x onerror=alert(2)&gt;: directory, xfs," in text
    assert (
        text.count("- warning short-runtime (fix: use --suite standard): the quick suite is") == 3
    )
    assert "indicative &lt;b&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;/b&gt;" in text
    assert text.count("(fix: use --suite standard)") == 3
    assert "<b>" not in text and "<script" not in text


def test_markdown_says_a_kind_of_finding_once_with_what_each_shares() -> None:
    """Six workloads at one throttle: one bullet with the fix and the clause they share,
    then a short line each (it repeated both for every workload)."""
    run = make_run(8, "capped", 1.0, 1)
    same = ": the throttle, not the storage, set this figure"
    found = [
        {"id": "at-throttle", "severity": "info", "workload": w, "fix": "run outside that cgroup",
         "message": f"{w} on /mnt/x: read {v} IOPS is the read 3.00k IOPS throttle{same}"}
        for w, v in (("a", "3.00k"), ("b", "2.99k"), ("c", "3.01k"))
    ]  # fmt: skip
    found.append(
        {"id": "odd", "severity": "warning", "message": "one, and alone: here", "fix": "f"}
    )
    text = render_markdown([dataclasses.replace(run, warnings=found)], None)
    block = text[text.index("Warnings:") :]
    assert block.splitlines()[2:7] == [
        "- warning odd (fix: f): one, and alone: here",
        "- info at-throttle \u00d7 3 (fix: run outside that cgroup); "
        "in each: the throttle, not the storage, set this figure",
        "  - a on /mnt/x: read 3.00k IOPS is the read 3.00k IOPS throttle",
        "  - b on /mnt/x: read 2.99k IOPS is the read 3.00k IOPS throttle",
        "  - c on /mnt/x: read 3.01k IOPS is the read 3.00k IOPS throttle",
    ]
    assert block.count("set this figure") == 1 and block.count("run outside") == 1


def test_a_run_stored_with_a_relative_target_shows_where_it_was() -> None:
    """Runs stored before targets were stored by their absolute path keep their ``.``; the
    report's header, runs table and context also say where it led."""
    run = make_run(5, "old", 1.0, 1)
    (t,) = run.targets
    old = dataclasses.replace(run, targets=[dataclasses.replace(t, spec=".", path="/srv/vol")])
    page = render_html([old], None)
    assert page.count(". \u2192 /srv/vol") == 3  # header, runs table, context heading


def test_the_findings_link_says_notes_when_there_is_no_warning() -> None:
    """A report whose findings are all information does not announce warnings."""
    run = make_run(6, "calm", 1.0, 1)
    info = {"id": "indicative", "severity": "info", "message": "a first look", "fix": "x"}
    warn = {**info, "id": "small-file", "severity": "warning"}
    calm = render_html([dataclasses.replace(run, warnings=[info])], None)
    assert '<a href="#warnings">Notes</a>' in calm and ">Warnings</h3>" not in calm
    loud = render_html([dataclasses.replace(run, warnings=[info, warn])], None)
    assert '<a href="#warnings">Warnings</a>' in loud
    assert loud.index(">Warnings</h3>") < loud.index(">Information</h3>")
