"""compare through the CLI on real fio runs: two runs of one suite that differ only in their
runtime match on every workload, with the runtime shown and the verdicts judged on what the
runs measured (here, one run a side: their per-second samples)."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from conftest import Cli


@pytest.mark.fio
def test_runs_that_differ_only_in_runtime_are_compared(
    cli: Cli, real_fio: str, tmp_path: Path, mini_suite: str
) -> None:
    target = tmp_path / "t"
    target.mkdir()
    for runtime in ("3s", "4s"):  # fio logs a sample a second, often not the last
        code, _, err = cli("run", str(target), "--suite", mini_suite, "--runtime", runtime)
        assert code == 0, err
    code, out, err = cli("compare", "1", "2", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["schema_version"], doc["unmatched"]) == (3, [])
    assert [(r["workload"], r["direction"]) for r in doc["rows"]] == [
        ("rr", "read"),
        ("rw", "write"),
    ]
    runs = [json.loads(cli("show", str(i), "--json")[1]) for i in (1, 2)]
    for row in doc["rows"]:
        assert row["differs"] == [{"param": "runtime_s", "values": {"run 1": 3.0, "run 2": 4.0}}]
        assert row["params"]["runtime_s"] == 3.0, "the baseline's parameters"
        _, other = row["cells"]
        d = row["direction"]
        first, second = (
            next(r for r in run["results"] if r["workload"] == row["workload"]) for run in runs
        )
        assert other["iops_ratio"] == pytest.approx(second[d]["iops"] / first[d]["iops"])
        test = other["iops_test"]
        assert test["verdict"] == other["verdict"]
        # One run a side: the noise is each run's own, from its per-second samples.
        assert test["basis"] == "within-run"
        samples = [len(r["samples"][d]["iops"]) for r in (second, first)]
        assert [test["noise"]["samples"], test["baseline_noise"]["samples"]] == samples
        assert samples[0] >= 2 and samples[1] >= 2
        series = [v for v in first["samples"][d]["iops"] if v is not None]
        assert test["baseline_noise"]["se"] == pytest.approx(
            statistics.stdev(series) / math.sqrt(len(series))
        )
        assert other["verdict"] in ("faster", "slower", "within noise", "too few repeats")
        if other["verdict"] == "too few repeats":
            assert test["reason"].startswith(f"run --repeat {test['repeats_needed']}; ")
        assert test["reason"].endswith(("within-run noise", "within-run noise only"))
    code, table, _ = cli("compare", "1", "2")
    assert code == 0
    flat = " ".join(table.split())
    assert flat.count("not the same duration: runtime 3s (run 1) vs 4s (run 2)") == 2
    assert "not matched" not in table and "no workload could be matched" not in table
    for row in doc["rows"]:
        test = row["cells"][1]["iops_test"]
        assert f"{test['verdict']} ({test['reason']})" in flat
