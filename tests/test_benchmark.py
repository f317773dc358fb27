"""A run as a whole: awkward paths, several targets, stalls, files in use, progress."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.engine import RunRequest, execute
from iobench.errors import TargetUnsafe
from iobench.fio.runner import find_fio
from iobench.model import Target
from iobench.report.markdown import md_text
from iobench.store import Store
from iobench.suites import load_suite_file
from iobench.targets import check_file_writable
from scratch import MiB, Scratch


@pytest.mark.fio
def test_a_path_fio_would_misread_is_tested_where_the_user_said(
    cli: Cli, real_fio: str, tmp_path: Path, mini_suite: str
) -> None:
    parent = tmp_path / "parent"
    target = parent / "bench#2;x\\y :z $ncpus "
    target.mkdir(parents=True)
    code, out, err = cli("run", str(target), "--suite", mini_suite, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [r["status"] for r in doc["results"]] == ["ok", "ok"]
    assert doc["results"][1]["write"]["io_bytes"] > 0
    assert [p.name for p in parent.iterdir()] == [target.name], "nothing written beside it"
    assert list(target.iterdir()) == [], "the test file is removed"


@pytest.mark.fio
def test_two_targets_one_run(cli: Cli, real_fio: str, tmp_path: Path, mini_suite: str) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    code, out, err = cli("run", str(a), str(b), "--suite", mini_suite)
    assert code == 0, err
    assert f"{a} (directory" in out and f"{b} (directory" in out, "one table per target"
    assert list(a.iterdir()) == [] and list(b.iterdir()) == []
    code, out, _ = cli("show", "latest", "--json")
    doc = json.loads(out)
    assert [(r["target"], r["workload"]) for r in doc["results"]] == [
        (str(a), "rr"), (str(a), "rw"), (str(b), "rr"), (str(b), "rw"),
    ]  # fmt: skip


@pytest.mark.fio
def test_a_relative_target_is_stored_and_shown_by_its_absolute_path(
    cli: Cli, real_fio: str, tmp_path: Path, mini_suite: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`iobench run .`: every command that names the target names /the/directory, not
    "." (which means another place in every other directory)."""
    work = tmp_path / "work"
    (work / "vol").mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.setenv("PWD", str(work))
    vol = str(work / "vol")
    code, out, err = cli("run", "./vol/", "--suite", mini_suite, "--label", "a")
    assert code == 0, err
    assert f"\n{vol} (directory" in out
    code, out, err = cli("run", "vol", "--suite", mini_suite, "--label", "b", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [(t["spec"], t["path"]) for t in doc["targets"]] == [(vol, vol)]
    assert {r["target"] for r in doc["results"]} == {vol}
    assert {w["target"] for w in doc["warnings"]} <= {vol, None}
    code, out, _ = cli("show", "1")
    assert f"\n{vol} (directory" in out
    code, out, _ = cli("list", "--json")
    assert [r["targets"] for r in json.loads(out)["runs"]] == [[vol], [vol]]
    code, out, _ = cli("list")
    assert out.count(vol) == 2 and " . " not in out
    code, out, _ = cli("compare", "1", "2", "--json")
    assert {s["target"] for s in json.loads(out)["setups"]} == {vol}
    code, out, _ = cli("compare", "1", "2")
    assert f"baseline a (run 1 on {vol})" in out and f"b (run 2 on {vol}):" in out
    code, out, _ = cli("export", "2", "--format", "csv")
    assert {line.split(",")[2] for line in out.splitlines()[1:]} == {vol}
    code, out, _ = cli("export", "2", "--format", "json")
    assert json.loads(out)["targets"][0]["spec"] == vol
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    assert cli("report", "1", "2", "-o", str(md))[0] == 0
    assert f"- target {md_text(vol)}: directory" in md.read_text()
    assert f"| {md_text(vol)} | rr |" in md.read_text()
    assert cli("report", "1", "2", "-o", str(html))[0] == 0
    assert html.read_text().count(vol) >= 2
    assert list((work / "vol").iterdir()) == []


def test_the_same_target_twice_is_refused(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("run", str(tmp_path), str(tmp_path / "."))
    assert code == 2
    assert "are the same target" in err


def test_stalled_layout_fails_the_run_and_cleans_up(
    fake_fio: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mini_suite: str
) -> None:
    monkeypatch.setenv("FAKE_FIO_MODE", "hang")
    target = tmp_path / "vol"
    target.mkdir()
    request = RunRequest(targets=(str(target),), suite=load_suite_file(mini_suite))
    started = time.monotonic()
    with Store.open(tmp_path / "db.sqlite") as store:
        outcome = execute(request, store, find_fio(), stall_s=1.0, timeout_margin_s=1.0)
        run = store.get_run(outcome.run_id)
    assert time.monotonic() - started < 30
    assert outcome.status == "failed" and run.status == "failed"
    assert outcome.error is not None and "moved no data for 1 s" in outcome.error.message
    assert list(target.iterdir()) == []


def _target(path: Path) -> Target:
    return Target(str(path), str(path), "file", path.stat().st_size)


def test_results_database_is_never_a_target(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    Store.open(db).close()
    with pytest.raises(TargetUnsafe, match="iobench's own results database"):
        check_file_writable(_target(db), [str(db)])
    os.link(db, tmp_path / "alias")
    with pytest.raises(TargetUnsafe, match="results database"):
        check_file_writable(_target(tmp_path / "alias"), [str(db)])


@pytest.mark.root
def test_loop_backing_file_and_swap_file_are_never_written(scratch: Scratch) -> None:
    image = scratch.image(16 << 20)
    dev = scratch.loop(image)
    with pytest.raises(TargetUnsafe, match=f"backs the loop device {dev}"):
        check_file_writable(_target(image))
    swapfile = scratch.tmp_path / "swapfile"
    swapfile.write_bytes(bytes(16 << 20))  # swapon refuses files with holes
    swapfile.chmod(0o600)
    subprocess.run(["mkswap", str(swapfile)], check=True, capture_output=True)
    scratch.swapon_file(swapfile)
    with pytest.raises(TargetUnsafe, match="is an active swap file"):
        check_file_writable(_target(swapfile))
    plain = scratch.image(1 << 20)
    check_file_writable(_target(plain))  # an unused file passes


def _counted_bw(r: dict[str, Any]) -> float:
    """A result's bandwidth as its curve's point counts it: its completions less the IOs in
    flight when fio stopped (Little's law: IOPS x mean latency, at most iodepth x numjobs),
    over its runtime or what fio ran beyond the last IOs' mean latency."""
    read, params = r["read"], r["params"]
    lat_s = read["lat_ns"]["mean"] / 1e9
    in_flight = min(params["iodepth"] * params["numjobs"], read["iops"] * lat_s)
    seconds = max(params["runtime_s"], read["runtime_ms"] / 1000 - lat_s)
    return float((read["ios_completed"] - in_flight) / seconds * read["bw_bytes"] / read["iops"])


@pytest.mark.fio
def test_orion_simple_summary(cli: Cli, tmp_path: Path, real_fio: str) -> None:
    """The orion-simple suite's summary (its largest bandwidth, most small IOPS, least
    small latency and that point's histogram) is read from the run's own results. It
    checks no measured figure against a known one: it runs beside other tests."""
    code, out, err = cli(
        "run", str(tmp_path), "--suite", "orion-simple", "--runtime", "500ms", "--ramp", "0",
        "--size", "16M", "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    orion = doc["analysis"]["orion"]
    loads = [1, 2, 4, 8, 16, 32]
    for key in ("max_large_bw_bytes", "max_small_iops", "min_small_lat_ns"):
        assert orion[key] is not None, (key, orion)
    assert orion["max_large_bw_bytes"]["outstanding"] in loads, orion
    assert orion["max_small_iops"]["outstanding"] in loads, orion
    # The summary's figures are its curves' points', which leave out the IOs fio waited for
    # after its runtime (docs/characterize.md, "A point's count").
    large = {r["workload"]: _counted_bw(r) for r in doc["results"] if r["params"]["bs"] == MiB}
    best = max(large, key=lambda w: large[w])
    assert orion["max_large_bw_bytes"]["workload"] == best, (orion, large)
    assert orion["max_large_bw_bytes"]["value"] == pytest.approx(large[best])
    assert orion["min_small_lat_ns"]["value"] > 0
    histogram = orion["small_latency_histogram"]
    assert histogram and all(b["high_ns"] == 2 * b["low_ns"] or b["low_ns"] == 0 for b in histogram)
    fastest = next(
        r for r in doc["results"] if r["workload"] == orion["min_small_lat_ns"]["workload"]
    )
    assert sum(b["ios"] for b in histogram) == fastest["read"]["lat_ns"]["n"]
    code, text, _ = cli("show", str(doc["run_id"]))
    assert "Maximum Large MBPS" in text and "Maximum Small IOPS" in text
    assert "Minimum Small Latency" in text and "small-read latency histogram @ " in text
