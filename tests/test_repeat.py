"""--repeat on two targets, and compare on the result: the issue's first "done" point."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from conftest import Cli


@pytest.mark.fio
def test_two_targets_repeated_then_compared(
    cli: Cli, real_fio: str, tmp_path: Path, mini_suite: str
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    code, out, err = cli(
        "run", str(a), str(b), "--suite", mini_suite, "--repeat", "3", "--runtime", "2s", "--json"
    )
    assert code == 0, err
    doc = json.loads(out)
    results = doc["results"]
    assert len(results) == 2 * 2 * 3, "every repetition is kept"
    # interleaved: each workload on every target, then the next workload, then repeat
    started = sorted(results, key=lambda r: r["started_at"])
    order = [(r["repetition"], r["workload"], r["target"]) for r in started]
    assert order == [
        (rep, w, t) for rep in (1, 2, 3) for w in ("rr", "rw") for t in (str(a), str(b))
    ]
    for r in results:
        d = r["read"] or r["write"]
        assert r["samples"]["interval_ms"] == 1000
        series = r["samples"]["read" if r["read"] else "write"]
        assert len(series["iops"]) >= 1 and all(v > 0 for v in series["iops"])
        assert d["iops"] > 0

    summary = {(s["target"], s["workload"]): s for s in doc["summary"]}
    for (target, workload), s in summary.items():
        iops = [
            (r["read"] or r["write"])["iops"]
            for r in results
            if r["target"] == target and r["workload"] == workload
        ]
        assert s["n"] == 3
        assert s["iops"]["mean"] == pytest.approx(statistics.mean(iops))
        assert s["iops"]["cv_pct"] == pytest.approx(
            100 * statistics.stdev(iops) / statistics.mean(iops)
        )
        assert s["iops"]["ci95_low"] < s["iops"]["mean"] < s["iops"]["ci95_high"]

    code, out, err = cli("compare", str(doc["run_id"]), "--json")
    assert code == 0, err
    comparison = json.loads(out)
    assert comparison["kind"] == "comparison"
    rows = {(row["workload"], row["direction"]): row for row in comparison["rows"]}
    assert set(rows) == {("rr", "read"), ("rw", "write")}
    for (workload, _direction), row in rows.items():
        base, other = row["cells"]
        expected = (
            summary[(str(b), workload)]["iops"]["mean"]
            / summary[(str(a), workload)]["iops"]["mean"]
        )
        assert base["verdict"] == "baseline"
        assert other["iops_ratio"] == pytest.approx(expected)
        # Three repetitions a side: Welch's t-test on them, whatever the verdict.
        test = other["iops_test"]
        assert (test["verdict"], test["basis"], test["df"] >= 1) == (
            other["verdict"],
            "repeats",
            True,
        )
        assert other["verdict"] in ("faster", "slower", "within noise", "too few repeats")

    code, table, _ = cli("compare", str(doc["run_id"]))
    assert code == 0
    assert "verdict" in table and "%" in table

    # Export round trip: the JSON export, imported into another database, is the same run
    # (same results, histograms, samples and comparison); only its identity says "imported".
    run_id = str(doc["run_id"])
    exported = tmp_path / "run.json"
    code, _, err = cli("export", run_id, "--format", "json", "-o", str(exported))
    assert code == 0, err
    first = json.loads(exported.read_text())
    assert first["results"][0]["read"]["clat_ns"]["bins"], "the export keeps the histograms"
    code, csv_before, _ = cli("export", run_id, "--format", "csv")
    other = str(tmp_path / "other.db")
    code, out, err = cli("--db", other, "import", str(exported))
    assert code == 0, err
    assert out.startswith("imported run 1 from ")
    code, out, err = cli("--db", other, "export", "1", "--format", "json")
    assert code == 0, err
    again = json.loads(out)
    identity = {"run_id", "uuid", "origin", "source", "suite_def"}
    assert {k for k in first.keys() | again.keys() if first.get(k) != again.get(k)} <= identity
    assert (again["origin"], again["source"]) == ("imported", str(exported))
    assert again["suite_def"]["imported_from"]["uuid"] == first["uuid"]
    assert again["results"] == first["results"] and again["summary"] == first["summary"]
    assert cli("--db", other, "export", "1", "--format", "csv")[1] == csv_before
    code, out, _ = cli("--db", other, "compare", "1", "--json")
    assert [c["iops_ratio"] for r in json.loads(out)["rows"] for c in r["cells"]] == [
        c["iops_ratio"] for r in comparison["rows"] for c in r["cells"]
    ]
    # The same run twice is refused, and nothing is written.
    code, out, err = cli("--db", other, "import", str(exported))
    assert code == 2
    assert f"{exported} holds a run that is already in this database as run 1" in err
    assert "Traceback" not in err
    code, out, _ = cli("--db", other, "list", "--json")
    assert [r["run_id"] for r in json.loads(out)["runs"]] == [1]
