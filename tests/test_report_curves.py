"""Curves and limits in the reports: a sweep of a volume with known caps, rendered as HTML
(hockey stick, heatmap, limits charts; drawn in headless Chromium), Markdown and terminal."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from iobench.records import ResultRecord, RunRecord, SuiteDefinition, TargetRecord
from iobench.report.html import render_html
from iobench.report.markdown import render_markdown
from iobench.report.printed import run_document
from iobench.report.terminal import render_run
from test_report import Browser, Page, needs_chromium

IOPS_CAP, BW_CAP = 5000.0, 200.0 * 2**20
SIZES = (4096, 16384, 65536, 262144, 1 << 20)
DEPTHS = (1, 2, 4, 8)
XSS = "<img src=x onerror=alert(1)>"


def result(
    bs: int, qd: int, position: int, caps: tuple[float, float] = (IOPS_CAP, BW_CAP)
) -> ResultRecord:
    iops = min(qd / 250e-6, caps[0], caps[1] / bs)
    lat = qd / iops * 1e9
    read = {
        "iops": iops,
        "bw_bytes": iops * bs,
        "io_bytes": int(iops * bs * 2),
        "total_ios": int(iops * 2),
        "runtime_ms": 2000,
        "lat_ns": {"n": int(iops * 2), "mean": lat, "min": lat / 2, "max": lat * 4,
                   "stddev": lat / 10, "p99": lat * 2},
        "clat_ns": None,
        "slat_ns": None,
    }  # fmt: skip
    return ResultRecord(
        target=XSS,
        workload=f"randread-{bs}-qd{qd}",
        position=position,
        status="ok",
        params={
            "rw": "randread",
            "bs": bs,
            "iodepth": qd,
            "numjobs": 1,
            "ioengine": "libaio",
            "direct": True,
            "runtime_s": 2.0,
            "ramp_s": 0.0,
            "size": 1 << 26,
            "rwmixread": None,
            "options": {},
        },
        metrics={
            "read": read,
            "write": None,
            "trim": None,
            "cpu": {"usr_pct": 1.0, "sys_pct": 4.0},
            "host_cpu": {"busy_pct": 10.0, "max_cpu_busy_pct": 14.0, "cpus": 2},
        },
        job_file="",
        fio_argv=[],
        fio_rc=0,
        fio_version="3.33",
        raw_output=None,
        fio_stdout=None,
        fio_stderr=None,
        error=None,
        started_at="2026-11-22T10:00:00.000Z",
        finished_at="2026-11-22T10:00:02.000Z",
        samples={
            "interval_ms": 1000,
            "read": {
                "t_s": [1, 2, 3],
                "iops": [iops] * 3,
                "bw_bytes": [iops * bs] * 3,
                "lat_mean_ns": [lat] * 3,
            },
        },
    )


@pytest.fixture
def sweep_run() -> RunRecord:
    return make_sweep(7, XSS, (IOPS_CAP, BW_CAP))


def make_sweep(run_id: int, label: str, caps: tuple[float, float]) -> RunRecord:
    results = [
        result(bs, qd, i, caps) for i, (bs, qd) in enumerate((b, d) for b in SIZES for d in DEPTHS)
    ]
    return RunRecord(
        id=run_id,
        uuid="u",
        status="complete",
        suite="sweep",
        suite_def=SuiteDefinition(name="sweep", sweep={"axes": {}}, p99_under_ns=2e6),
        label=label,
        argv=["iobench", "sweep"],
        host={"hostname": "box"},
        fio_version="3.33",
        iobench_version="0.1.0",
        warnings=[],
        error=None,
        started_at="2026-11-22T10:00:00.000Z",
        finished_at="2026-11-22T10:01:00.000Z",
        targets=[TargetRecord(0, XSS, "/dev/x", "block", 1 << 26, {})],
        results=results,
    )


def _curve_figures(page: str) -> dict[str, dict[str, Any]]:
    blocks = Page(page).json_blocks()
    return {k: v for k, v in blocks.items() if k.startswith("curve-")}


def test_html_has_the_three_curve_charts_and_the_limits(sweep_run: RunRecord) -> None:
    page = render_html([sweep_run], None)
    assert '<section id="curves">' in page and 'href="#curves"' in page
    figures = _curve_figures(page)
    assert sorted(figures) == ["curve-0-0-data", "curve-0-1-data"]
    hockey, limits = (figures[f"curve-0-{i}-data"] for i in range(2))
    # Hockey stick: IOPS and mean/p99 latency per block size against outstanding IO.
    assert len(hockey["data"]) == 3 * len(SIZES)
    assert hockey["data"][0]["x"] == list(DEPTHS)
    assert hockey["layout"]["yaxis2"]["type"] == "log"
    # The heat table, in the overview: block sizes by queue depth, the IOPS in each cell,
    # shaded by IOPS (a table: it prints, and reads without JavaScript).
    heat = page[
        page.index('<table class="heat">') : page.index("</table>", page.index('class="heat"'))
    ]
    assert '<th class="num">QD1</th><th class="num">QD2</th>' in heat
    rows = re.findall(r"<tr><th>([^<]+)</th>(.*?)</tr>", heat.split("<tbody>")[1])
    assert [bs for bs, _ in rows] == ["4k", "16k", "64k", "256k", "1M"]
    cells = [re.findall(r'style="background: (#[0-9a-f]{6})">([^<]+)<', r) for _, r in rows]
    assert cells[0][3][1] == "5.00k" and cells[0][0][1] == "4.00k"
    assert cells[0][3][0] != cells[-1][0][0]  # 5000 and 200 IOPS: not the same shade
    assert (
        page.index('<section id="overview"')
        < page.index('class="heat"')
        < page.index('<section id="results"')
    )
    # Limits: measured, the model, the two limit lines and the crossover.
    assert [t["name"] for t in limits["data"]][:2] == ["measured", "measured"]
    titles = [a["text"] for a in limits["layout"]["annotations"]]
    assert titles == ["IOPS (limit 5.00k, dashed)", "bandwidth (limit 200 MiB/s, dashed)"]
    assert "crossover 41.0 KiB" in limits["layout"]["xaxis"]["title"]["text"]
    assert len(limits["layout"]["shapes"]) == 4  # two limit lines, the crossover in each
    # The per-workload cards are left out for a sweep: its points are the curves.
    assert 'id="chart-' not in page
    # Every user string is escaped, in the page and in the charts' JSON.
    assert XSS not in page


def test_markdown_and_terminal_have_the_tables(sweep_run: RunRecord) -> None:
    text = render_markdown([sweep_run], None)
    assert "#### Curves and limits" in text
    assert "| 4 KiB | 4.00k | 5.00k | 5.00k | 5.00k | QD2 | 250 µs |" in text
    assert "| IOPS | 5.00k (5.00k to 5.00k) | IOPS plateau at 4k, 16k |" in text
    buffer = io.StringIO()
    render_run(sweep_run, Console(file=buffer, width=200, emoji=False))
    out = buffer.getvalue()
    assert "IOPS by block size and queue depth" in out and "best with p99 < 2 ms" in out
    assert "41.0 KiB (41.0 KiB to 41.0 KiB)" in out
    # The best point names its figures: at 1 MiB, 200 IOPS are 200 MiB/s, once each.
    assert "200 IOPS = 200 MiB/s" in out and "200 200 MiB/s" not in out
    # So does the best under the p99 bound (4 KiB: QD2, the shallowest with 5000 IOPS),
    # and the title its number of jobs.
    assert "5.00k IOPS at QD2" in out and "queue depth (1 job)" in out and "x1 jobs" not in out
    assert "(1 job) by block size" in text and "job(s)" not in text


def test_show_json_carries_the_analysis(sweep_run: RunRecord) -> None:
    doc = run_document(sweep_run)
    analysis = doc["analysis"]
    assert analysis["kind"] == "sweep"
    (lim,) = analysis["limits"]
    assert lim["limits"]["iops"]["value"] == pytest.approx(IOPS_CAP)
    assert lim["limits"]["bw_bytes"]["value"] == pytest.approx(BW_CAP)
    assert [row["binds"] for row in lim["table"]] == ["iops", "iops", "bandwidth", "bandwidth",
                                                      "bandwidth"]  # fmt: skip
    (curve_4k, *_) = analysis["curves"]
    assert curve_4k["knee"]["iodepth"] == 2 and curve_4k["saturated"] is True
    # p99 = 2 x mean: 0.8 ms at QD2, 1.6 ms at QD4, 3.2 ms at QD8; QD2 and QD4 both give
    # 5000 IOPS, and the shallower queue (lower latency) is the one named.
    assert curve_4k["best_under_p99"]["iodepth"] == 2


@needs_chromium
def test_chromium_draws_the_curves_with_no_error_and_no_request(
    sweep_run: RunRecord, tmp_path: Path
) -> None:
    path = tmp_path / "sweep.html"
    path.write_text(render_html([sweep_run], None), encoding="utf-8")
    b = Browser(tmp_path / "profile")
    try:
        b.open(path.as_uri())
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if b.evaluate("document.querySelectorAll('div.chart.js-plotly-plot').length") == 2:
                break
            time.sleep(0.1)
        assert b.evaluate("document.querySelectorAll('div.chart.js-plotly-plot').length") == 2
        assert b.evaluate("document.getElementById('js-errors').textContent") == ""
        assert b.page_events("Runtime.exceptionThrown") == []
        urls = {e["params"]["request"]["url"] for e in b.page_events("Network.requestWillBeSent")}
        assert urls == {path.as_uri()}
        assert b.page_events("Network.loadingFailed") == []
        assert b.page_events("Page.javascriptDialogOpening") == []
    finally:
        b.close()


def test_two_curve_runs_get_their_limits_side_by_side() -> None:
    """Two capped volumes swept: the comparison opens with their limits in one table,
    each with its ratio to the baseline's, in the terminal, the HTML and the Markdown."""
    from iobench.analysis.compare import compare
    from iobench.report.compare import render_comparison

    a = make_sweep(1, "volA", (3000.0, 100e6))
    b = make_sweep(2, "volB", (1200.0, 40e6))
    c = compare([a, b])
    rows = {(r.rw, r.key): r.cells for r in c.limits}
    assert sorted(rows) == [("randread", k) for k in ("bw_bytes", "crossover_bs", "iops")]
    for key, value in (("iops", 1200.0), ("bw_bytes", 40e6)):
        base, other = rows[("randread", key)]
        assert other.estimate is not None and other.estimate.value == pytest.approx(value)
        assert base.ratio is None and other.ratio == pytest.approx(0.4)
    # Both limits scale alike: the crossover (bandwidth / IOPS) is the same block size.
    assert rows[("randread", "crossover_bs")][1].ratio == pytest.approx(1.0)
    buffer = io.StringIO()
    render_comparison(c, Console(file=buffer, width=200, emoji=False))
    out = buffer.getvalue()
    table = out[out.index("limits found") :]
    assert re.search(r"IOPS limit \(randread\) +│ +3\.00k \(.*\) │ +1\.20k \(.*\) │ +40 % │", table)
    assert re.search(r"bandwidth limit \(randread\) .* │ +40 % │", table)
    assert out.index("limits found") < out.index("randread-4096-qd1")
    page = render_html([a, b], c)
    side = page[page.index('<table class="limits-side">') :]
    side = side[: side.index("</table>")]
    assert "<td>IOPS limit (randread)</td>" in side and '<td class="num ratio">40 %</td>' in side
    assert page.index("limits-side") < page.index('<section id="comparison"')
    text = render_markdown([a, b], c)
    assert "| IOPS limit (randread) | 3.00k (3.00k to 3.00k) | 1.20k (1.20k to 1.20k) | 40 % |" in (
        text
    )


def test_curve_charts_keep_every_point_off_the_edges_with_a_tick_at_each_limit(
    sweep_run: RunRecord,
) -> None:
    """Points at the limit sat on the chart's top edge, the nearest tick an octave away:
    the axes leave room above and below, and each limit has a labelled tick."""
    import math

    figures = _curve_figures(render_html([sweep_run], None))
    hockey, limits = (figures[f"curve-0-{i}-data"] for i in range(2))
    iops_top = max(y for t in hockey["data"] if t["yaxis"] == "y" for y in t["y"])
    low, high = hockey["layout"]["yaxis"]["range"]
    assert low == 0 and high >= 1.1 * iops_top
    for axis, ref, limit, label in (
        ("yaxis", "y", IOPS_CAP, "5k"),
        ("yaxis2", "y2", BW_CAP, "200 MiB/s"),
    ):
        ys = [y for t in limits["data"] if t["yaxis"] == ref for y in t["y"]]
        low, high = limits["layout"][axis]["range"]
        assert high >= math.log10(max(ys)) + 0.09 and low <= math.log10(min(ys)) - 0.09
        vals, texts = limits["layout"][axis]["tickvals"], limits["layout"][axis]["ticktext"]
        at = [t for v, t in zip(vals, texts, strict=True) if v == pytest.approx(limit)]
        assert at == [label]
