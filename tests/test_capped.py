"""characterize, sweep and orion-simple on real fio, on capped volumes: loop devices over
RAM throttled by a cgroup, as DESIGN.md describes, so the caps are known.

These tests measure throughput: they run one after another (never two fio loads at once)
and assert with tolerances that hold on a busy 2-CPU machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from scratch import Cgroup, MiB, Scratch, capped_volume

pytestmark = [pytest.mark.fio, pytest.mark.root]


def iobench_in(group: Cgroup, db: Path, *args: str, timeout: float = 300) -> tuple[int, str, str]:
    """The iobench CLI in a process of its own inside the cgroup (fio inherits it)."""
    done = subprocess.run(
        group.command([sys.executable, "-m", "iobench", "--db", str(db), *args]),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def characterize(group: Cgroup, db: Path, dev: str, *extra: str) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    code, out, err = iobench_in(
        group, db, "characterize", dev, "--point-time", "4s", "--max-time", "90s", "--json", *extra
    )
    took = time.monotonic() - started
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    assert doc["kind"] == "characterization"
    return doc, took


@pytest.mark.parametrize(
    ("iops", "mib_s"),
    [(5000, 200), (2000, 32)],  # crossovers near 41 KiB and 16 KiB
    ids=["5000iops-200MiBps", "2000iops-32MiBps"],
)
def test_characterize_finds_both_caps_within_its_budget(
    scratch: Scratch, tmp_path: Path, real_fio: str, iops: int, mib_s: int
) -> None:
    dev, group = capped_volume(scratch, 64 * MiB, iops, mib_s * MiB)
    doc, took = characterize(group, tmp_path / "r.db", dev)
    limits = doc["limits"]
    assert limits["iops"]["value"] == pytest.approx(iops, rel=0.10), doc["reasons"]
    assert limits["bw_bytes"]["value"] == pytest.approx(mib_s * MiB, rel=0.10), doc["reasons"]
    assert limits["crossover_bs"]["value"] == pytest.approx(mib_s * MiB / iops, rel=0.15)
    for key in ("iops", "bw_bytes", "crossover_bs"):
        assert limits[key]["low"] <= limits[key]["value"] <= limits[key]["high"]
    assert doc["reasons"] == {"iops": None, "bw_bytes": None, "crossover_bs": None}
    assert took < 90, f"the 90 s budget: it took {took:.0f} s"
    assert doc["stop"].startswith("done")
    # Every point ended at fio's steady state, well before its 4 s ceiling.
    steady = [p["steady"] for c in doc["curves"] for p in c["points"]]
    assert steady.count(True) >= len(steady) - 1
    # The block-size table agrees with the two-limit model it infers.
    assert all(abs(row["iops"] / row["model_iops"] - 1) < 0.1 for row in doc["table"])


def test_characterize_says_when_no_cap_is_in_reach(
    scratch: Scratch, tmp_path: Path, real_fio: str
) -> None:
    """The same loop device over RAM without a cap: what stops it is this 2-CPU host (fio's
    CPU, the loop device's kernel thread), not a storage limit; it must say so."""
    dev, group = capped_volume(scratch, 64 * MiB, 0, 0)
    doc, _ = characterize(group, tmp_path / "r.db", dev, "--max-qd", "32")
    assert doc["limits"] == {"iops": None, "bw_bytes": None, "crossover_bs": None}
    codes = doc["reason_codes"]
    assert codes["iops"] in ("host-bound", "still-rising"), doc["reasons"]
    assert codes["bw_bytes"] in ("host-bound", "still-rising"), doc["reasons"]
    assert doc["reasons"]["crossover_bs"] == "it needs both limits"


def test_sweep_measures_the_matrix_and_finds_the_same_caps(
    scratch: Scratch, tmp_path: Path, real_fio: str
) -> None:
    dev, group = capped_volume(scratch, 64 * MiB, 5000, 200 * MiB)
    db = tmp_path / "r.db"
    code, out, err = iobench_in(
        # 2 s after a 1 s ramp: a fresh throttle lets bursts through in its first moments,
        # and over one second its rate wanders by several percent.
        group, db, "sweep", dev, "--bs", "4k,1m", "--qd", "1,4,16", "--runtime", "2s",
        "--ramp", "1s", "--p99-under", "10ms", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert "6 steps on 1 target(s), about 21s" in err, "the plan and its time are shown up front"
    doc = json.loads(out)
    assert doc["suite"] == "sweep" and len(doc["results"]) == 6
    analysis = doc["analysis"]
    assert analysis["kind"] == "sweep"
    assert [(c["bs"], [p["iodepth"] for p in c["points"]]) for c in analysis["curves"]] == [
        (4096, [1, 4, 16]), (1 << 20, [1, 4, 16])
    ]  # fmt: skip
    (lim,) = analysis["limits"]
    assert lim["limits"]["iops"]["value"] == pytest.approx(5000, rel=0.10)
    assert lim["limits"]["bw_bytes"]["value"] == pytest.approx(200 * MiB, rel=0.10)
    # The most IOPS with p99 under 10 ms: the throttle holds IOs for up to ~100 ms, so at
    # 1 MiB no point qualifies, while 4 KiB at QD1 does.
    for c in analysis["curves"]:
        fitting = [p for p in c["points"] if p["lat_p99_ns"] <= 10e6]
        best = max(fitting, key=lambda p: p["iops"]) if fitting else None
        assert c["best_under_p99"] == best
    assert analysis["curves"][0]["best_under_p99"] is not None
    # The axes are stored with the run, and `show` gives the same analysis again.
    code, out, _ = iobench_in(group, db, "show", str(doc["run_id"]), "--json")
    shown = json.loads(out)
    assert shown["analysis"] == analysis
    code, text, _ = iobench_in(group, db, "show", str(doc["run_id"]))
    assert "IOPS by block size and queue depth" in text and "crossover" in text


def test_sweep_refuses_to_write_a_device_without_destructive(
    cli: Cli, scratch: Scratch, real_fio: str
) -> None:
    dev = scratch.loop()
    code, _, err = cli("sweep", dev, "--rw", "randwrite", "--bs", "4k", "--qd", "1")
    assert code == 3
    assert "--destructive" in err and "Traceback" not in err


def test_orion_simple_summary(cli: Cli, tmp_path: Path, real_fio: str) -> None:
    code, out, err = cli(
        "run", str(tmp_path), "--suite", "orion-simple", "--runtime", "1s", "--ramp", "0",
        "--size", "16M", "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    orion = doc["analysis"]["orion"]
    loads = [1, 2, 4, 8, 16, 32]
    assert orion["max_large_bw_bytes"]["outstanding"] in loads
    assert orion["max_small_iops"]["outstanding"] in loads
    large = [r for r in doc["results"] if r["params"]["bs"] == MiB]
    assert orion["max_large_bw_bytes"]["value"] == pytest.approx(
        max(r["read"]["bw_bytes"] for r in large)
    )
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
