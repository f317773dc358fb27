"""Imports that notice the impossible (issue 23, point 9): a figure no run could produce is
left out, or kept and flagged where which figure is wrong cannot be told, and said.

fio 2.1.11 with ``disable_clat`` printed ``lat (msec): avg=756537530.85`` for 30 s jobs,
and iobench stored a mean latency of 757,000 s without a word. Those outputs are not here;
the cases are made from real fio 3.33 outputs (recorded by scripts/record-fio-outputs:
``text-disable-clat-lat-only`` measures only total latency, as disable_clat does), each
changed here, in the test, in one figure, as a broken fio or an edited file would have it.
Every real output of the corpus imports without a word of this kind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.importer import interpret_fio_runs
from test_import_text import DATA, RECORDED, normal_part

LAT_ONLY = RECORDED / "text-disable-clat-lat-only.out"  # randread QD4 x 1, 1 s, lat only
HISTOGRAMS = RECORDED / "libaio-randread-4k-qd8-jsonplus.json"  # QD8, 1 s, clat and lat


def _json_of(path: Path) -> dict[str, Any]:
    text = path.read_text()
    doc: dict[str, Any] = json.loads(text[text.index("{") : text.rindex("}") + 1])
    return doc


def _read(doc: dict[str, Any]) -> dict[str, Any]:
    read: dict[str, Any] = doc["jobs"][0]["read"]
    return read


def _changed_json(path: Path, change: Callable[[dict[str, Any]], None]) -> str:
    doc = _json_of(path)
    change(doc)
    return json.dumps(doc, indent=2)


def _changed_text(path: Path, line_start: str, replace: Callable[[str], str]) -> str:
    lines = normal_part(path).splitlines()
    at = next(i for i, x in enumerate(lines) if x.lstrip().startswith(line_start))
    lines[at] = replace(lines[at])
    return "\n".join(lines) + "\n"


def _import(cli: Cli, tmp_path: Path, text: str) -> tuple[dict[str, Any], str]:
    """Import ``text``; the run as `show --json` gives it and `show` prints it."""
    path = tmp_path / "out.txt"
    path.write_text(text)
    code, out, err = cli("import", str(path), "--json")
    assert code == 0, err
    run_id = str(json.loads(out)["runs"][0]["run_id"])
    code, shown, err = cli("show", run_id, "--json")
    assert code == 0, err
    code, printed, err = cli("show", run_id)
    assert code == 0, err
    return json.loads(shown), printed


def _flags(doc: dict[str, Any]) -> list[str]:
    return [w["message"] for w in doc["warnings"] if w["id"] == "impossible-figure"]


def _huge_mean(line: str) -> str:
    return re.sub(r"avg=\s*[0-9.]+", "avg=756537530850.85", line)


CASES: list[tuple[str, Callable[[], str], str, str]] = [
    (
        # the fio 2.1.11 case: a mean of 757,000 s in a 1 s job's text output
        "text-mean-beyond-runtime",
        lambda: _changed_text(LAT_ONLY, "lat (usec)", _huge_mean),
        "lat",
        "its mean of 757000 s is longer than the job ran (1.",
    ),
    (
        "json-mean-beyond-runtime",
        lambda: _changed_json(LAT_ONLY, lambda d: _read(d)["lat_ns"].update(mean=7.5654e14)),
        "lat",
        "its mean of 757000 s is longer than the job ran",
    ),
    (
        "json-percentile-beyond-runtime",
        lambda: _changed_json(
            HISTOGRAMS,
            lambda d: _read(d)["clat_ns"]["percentile"].update({"99.990000": 3_600 * 10**9}),
        ),
        "clat",
        "its p99.99 of 3600 s is longer than the job ran",
    ),
    (
        "json-max-beyond-runtime",
        lambda: _changed_json(HISTOGRAMS, lambda d: _read(d)["lat_ns"].update(max=86_400 * 10**9)),
        "lat",
        "its max of 86400 s is longer than the job ran",
    ),
    (
        "text-mean-above-max",
        lambda: _changed_text(LAT_ONLY, "lat (usec)", lambda x: re.sub(r"max=\s*\d+", "max=60", x)),
        "lat",
        "its mean (79.0 µs) is outside its minimum and maximum (39.0 µs to 60.0 µs)",
    ),
    (
        "json-min-above-max",
        lambda: _changed_json(HISTOGRAMS, lambda d: _read(d)["clat_ns"].update(min=10**9)),
        "clat",
        "its minimum is above its maximum",
    ),
    (
        "json-percentiles-falling",
        lambda: _changed_json(
            HISTOGRAMS,
            lambda d: _read(d)["clat_ns"]["percentile"].update({"99.000000": 1000}),
        ),
        "clat",
        "its percentiles fall as the percentile rises",
    ),
]


@pytest.mark.parametrize(
    ("make", "kind", "said"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_latency_no_run_could_produce_is_left_out_and_said(
    cli: Cli, tmp_path: Path, make: Callable[[], str], kind: str, said: str
) -> None:
    doc, printed = _import(cli, tmp_path, make())
    (flag,) = _flags(doc)
    assert said in flag and f"fio's read {kind} figures cannot be right" in flag
    assert flag.endswith("left out")
    assert doc["results"][0]["read"][f"{kind}_ns"] is None
    assert doc["results"][0]["read"]["iops"] > 1000  # the rest of the result stays
    assert "impossible-figure" in printed and "757000 s" not in printed.split("warnings")[0]


def test_iops_and_latency_that_need_more_ios_in_flight_than_the_job_had_are_flagged(
    cli: Cli, tmp_path: Path
) -> None:
    """50 ms per IO at ~50k IOPS means ~2,500 IOs in flight; the job kept 4 (QD4 x 1 job,
    its job_runtime that of one job). Each figure alone is possible (50 ms is shorter
    than the job, and within its minimum and maximum), so both are kept."""

    def slow(d: dict[str, Any]) -> None:
        _read(d)["lat_ns"].update(mean=50e6, max=60e6)

    doc, _ = _import(cli, tmp_path, _changed_json(LAT_ONLY, slow))
    (flag,) = _flags(doc)
    assert "IOs in flight on average (IOPS x latency), but the job kept at most 4" in flag
    assert flag.endswith("kept, but do not trust them")
    assert doc["results"][0]["read"]["lat_ns"]["mean"] == pytest.approx(50e6)


def test_a_group_reported_as_one_entry_is_not_held_to_its_first_sections_depth(
    tmp_path: Path,
) -> None:
    """A real output (bensonjohnson/FIO-tests): 96 IOs in flight on average under
    `iodepth=16, numjobs=1`, because fio reported a group of 6 sections as one entry
    (job_runtime 289 s, 6 x the 48 s runtime). Not flagged."""
    path = DATA / "external" / "bensonjohnson__FIO-tests__fio.json"
    (run,) = interpret_fio_runs(path.read_text(), str(path))
    assert _flags({"warnings": run.run.warnings}) == []


def test_the_fio_2_1_11_shape_a_mean_of_757000_s_in_fio_2_text(tmp_path: Path) -> None:
    """The issue's figure in fio 2.x's layout: ``lat (msec): ... avg=756537530.85`` under
    a job of 1000 s (``runt=1000001msec``). Built from the fio 2.1.10 text of the UCloud
    article (tests/data/fio-outputs/text), its first run's lat line changed."""
    # the page's no-break spaces made plain, as a paste from a terminal has them
    text = (DATA / "text" / "ucloud-rssd-fio-2.1.10.txt").read_text().replace("\u00a0", " ")
    first = re.search(r"\n( +lat \(usec\): min=[^\n]*)", text)
    assert first is not None
    changed = "     lat (msec): min=0, max=1000, avg=756537530.85, stdev=0.00"
    text = text[: first.start(1)] + changed + text[first.end(1) :]
    runs = interpret_fio_runs(text, str(tmp_path / "ucloud.txt"))
    flagged = [w for r in runs for w in r.run.warnings if w["id"] == "impossible-figure"]
    (flag,) = flagged
    assert "its mean of 757000 s is longer than the job ran" in flag["message"]
    first_result = runs[0].run.results[0]
    assert first_result.metrics is not None and first_result.metrics["read"]["lat_ns"] is None


def _corpus() -> list[Path]:
    files = [
        p
        for folder in ("external", "recorded", "text")
        for p in sorted((DATA / folder).iterdir())
        if p.suffix != ".md" or "excerpt" in p.name or "rawstor" in p.name
    ]
    return [
        p
        for p in files
        if not p.name.endswith((".meta.json", "SOURCES.md"))
        and "damaged" not in p.name
        and p.name not in REFUSED
    ]


# Real outputs the import refuses, each tested for its refusal where named.
REFUSED = {
    "terse-v4-mixed.out",  # unified_rw_reporting=mixed: test_terse.test_unified_mixed_is_refused
}


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name[:60])
def test_no_real_output_is_flagged(path: Path) -> None:
    """Every fio output of the corpus (other projects' and fio 3.33's own), including
    fio 3.26's p99.9 5 % above its maximum (VirtualClient): nothing impossible."""
    runs = interpret_fio_runs(path.read_text(errors="replace"), str(path))
    for r in runs:
        assert _flags({"warnings": r.run.warnings}) == [], path.name
