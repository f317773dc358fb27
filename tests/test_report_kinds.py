"""Every kind of HTML report, from real runs, opened in headless Chromium (docs/report.md).

One stored run of each kind is made with the real CLI and real fio (1 s workloads, a few
MiB): a plain run, repetitions, a comparison of two setups (a disk directory and tmpfs), a
sweep, a characterize run, and a run on two fio servers in network namespaces; the
repetitions are held to a provider's spec. Each report must be small, draw every chart
without an error or a request, hold no empty section or dangling link, and print.

IOBENCH_REPORT_SCREENSHOTS=DIR keeps each report and its full-page screenshot there.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from hosts import FioHosts, why_no_netns
from test_report import Browser, assert_clean, needs_chromium, wait_for_charts

pytestmark = [pytest.mark.fio, needs_chromium]

# One run of the quick suite gives a report of about 1.3 MB; every kind stays under this.
MAX_REPORT_BYTES = 1_500_000

SUITE = """\
name = "kinds"
description = "A 4 KiB random read at QD4 and a 128 KiB sequential write at QD2."
[defaults]
runtime = "1s"
ramp = "0s"
size = "8M"
numjobs = 1
ioengine = "libaio"
direct = true
[[workload]]
name = "randread-4k"
rw = "randread"
bs = "4k"
iodepth = 4
[[workload]]
name = "write-128k"
rw = "write"
bs = "128k"
iodepth = 2
"""


class Runs:
    """A database of real runs, made with the real CLI, and the reports of them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.db = root / "runs.db"
        self.suite = root / "kinds.toml"
        self.suite.write_text(SUITE)
        # One workload, for the kinds that run it many times (repetitions, client counts).
        self.one = root / "one.toml"
        self.one.write_text(SUITE[: SUITE.index('[[workload]]\nname = "write-128k"')])
        self.ids: dict[str, list[str]] = {}

    def iobench(self, *args: str) -> str:
        """Its stdout; exit 4 (an expectation failed: the disk is not a gp3 volume) is a
        finished run."""
        done = subprocess.run(
            [sys.executable, "-m", "iobench", "--db", str(self.db), *args],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode in (0, 4), f"iobench {' '.join(args)}: {done.stderr}"
        return done.stdout

    def run(self, kind: str, *args: str) -> None:
        made = json.loads(self.iobench(*args, "--label", kind, "--json"))
        self.ids.setdefault(kind, []).append(str(made["run_id"]))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    root = tmp_path_factory.mktemp("kinds")
    made = Runs(root)
    disk = root / "disk"
    disk.mkdir()
    ram = Path(tempfile_in_shm())
    suite = str(made.suite)
    try:
        made.run("run", "run", str(disk), "--suite", suite)
        # Repetitions, held to a provider's spec: the repeats and the specs kinds at once.
        made.run(
            "repeats", "run", str(disk), "--suite", str(made.one), "--repeat", "3", "--spec",
            "aws-gp3",
            "--spec-param", "size=100G",
        )  # fmt: skip
        made.ids["specs"] = made.ids["repeats"]
        made.ids["compare"] = list(made.ids["run"])
        made.run("compare", "run", str(ram), "--suite", suite)
        made.run(
            "sweep", "sweep", str(disk), "--bs", "4k,64k", "--qd", "1,4", "--runtime", "1s",
            "--ramp", "0s", "--size", "8M",
        )  # fmt: skip
        made.run(
            "characterize", "characterize", str(disk), "--point-time", "3s", "--max-time",
            "12s", "--max-qd", "8", "--size", "8M",
        )  # fmt: skip
        why = why_no_netns()
        if why is None:
            with ExitStack() as stack:
                (root / "hosts").mkdir()
                hosts = FioHosts(root / "hosts", 2, stack)
                shared = root / "shared"
                shared.mkdir()
                clients = ",".join(h.name for h in hosts.hosts)
                made.run(
                    "clients", "run", str(shared), "--suite", str(made.one), "--clients", clients,
                    "--scale", "1,2",
                )  # fmt: skip
        yield made
    finally:
        shutil.rmtree(ram, ignore_errors=True)


def tempfile_in_shm() -> str:
    """A directory on tmpfs: RAM beside the disk, figures orders of magnitude apart."""
    import tempfile

    return tempfile.mkdtemp(prefix="iobench-kinds-", dir="/dev/shm")


KINDS = ("run", "repeats", "compare", "specs", "sweep", "characterize", "clients")

# Sections whose content a kind must have: the reason the kind exists.
EXPECTED = {
    "run": ("#overview table.overview", "#overview .chart", "#charts article"),
    "repeats": ("#overview table.overview", "#charts article", "#overview .chart"),
    "compare": ("#overview ul.verdicts", "#comparison table.compare", "#overview .chart"),
    "specs": ("#expectations table",),
    "sweep": ("#overview table.heat", "#curves .chart"),
    "characterize": ("#overview table", "#curves .chart"),
    "clients": ("#clients table", "#clients .chart"),
}

# What the overview must say of a kind.
OVERVIEW_TEXT = {
    "repeats": "±",  # the interval of 3 repetitions
    "clients": "(aggregate of 2 clients)",
    "characterize": "limit",
    "compare": "(baseline)",
}

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


@pytest.mark.parametrize("kind", KINDS)
def test_each_report_kind_renders_in_chromium(runs: Runs, kind: str, tmp_path: Path) -> None:
    if kind not in runs.ids:
        pytest.skip(f"no {kind} run: {why_no_netns()}")
    html = tmp_path / f"{kind}.html"
    runs.iobench("report", *runs.ids[kind], "-o", str(html))
    assert html.stat().st_size < MAX_REPORT_BYTES
    b = Browser(tmp_path / "profile")
    try:
        b.open(html.as_uri())
        want = b.evaluate("document.querySelectorAll('div.chart').length")
        assert want > 0 and wait_for_charts(b, want) == want
        assert b.evaluate(DEFECTS) == []
        for selector in EXPECTED[kind]:
            assert b.evaluate(f"document.querySelector({selector!r}) !== null"), selector
        # The overview (or a curve run's limits) comes first: the first screen answers.
        assert b.evaluate("document.querySelector('main section').id") == "overview"
        overview = b.evaluate("document.getElementById('overview').textContent")
        assert OVERVIEW_TEXT.get(kind, "") in overview
        # No error of any kind, and nothing asked of the network.
        assert_clean(b, html.as_uri())
        _prints(b, tmp_path / f"{kind}.pdf")
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
