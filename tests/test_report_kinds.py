"""The HTML report of runs made with the real CLI and real fio, opened in headless Chromium
(docs/report.md): a plain run on a disk directory; repetitions on tmpfs, held to a
provider's spec; and the two compared (RAM beside a disk: figures orders of magnitude
apart, and a workload only one of them ran). Each report must be small, draw every chart
with no error and no request, lead with its overview, hold no empty section or dangling
link, and print (:func:`test_report.check_report`).

The other kinds are checked the same way where their real runs are made already: a sweep
and characterize on capped volumes (tests/test_capped.py), a run on three fio servers
(tests/test_clients.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from test_report import check_report, needs_chromium

pytestmark = [pytest.mark.fio, needs_chromium]

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
        # One workload, for the run that repeats it.
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
    ram = Path(tempfile.mkdtemp(prefix="iobench-kinds-", dir="/dev/shm"))
    try:
        made.run("run", "run", str(disk), "--suite", str(made.suite))
        # Repetitions held to a provider's spec: the repeats and the specs kinds at once.
        made.run(
            "repeats", "run", str(ram), "--suite", str(made.one), "--repeat", "3",
            "--spec", "aws-gp3", "--spec-param", "size=100G",
        )  # fmt: skip
        made.ids["compare"] = made.ids["run"] + made.ids["repeats"]
        yield made
    finally:
        shutil.rmtree(ram, ignore_errors=True)


KINDS = ("run", "repeats", "compare")

# What each report must have: the reason the kind exists.
EXPECTED = {
    "run": ("#overview table.overview", "#overview .chart", "#charts article"),
    "repeats": ("#overview table.overview", "#expectations table", "#charts article"),
    "compare": (
        "#overview ul.headlines",
        "#overview span.differs",  # write-128k: only the disk run has it
        "#comparison table.compare",
        "#overview .chart",
    ),
}

# What the overview must say of a kind.
OVERVIEW_TEXT = {
    "run": "write-128k",
    "repeats": "±",  # the interval of 3 repetitions
    "compare": "not compared:",
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_report_kind_renders_in_chromium(runs: Runs, kind: str, tmp_path: Path) -> None:
    html = tmp_path / f"{kind}.html"
    runs.iobench("report", *runs.ids[kind], "-o", str(html))
    check_report(html, tmp_path / "profile", EXPECTED[kind], OVERVIEW_TEXT[kind])
