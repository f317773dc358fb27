"""IOPS and bandwidth count the same IOs (issue 23, point 4; iobench.iocount).

fio 3.33's iops counts the IOs submitted after its ramp, its bandwidth the IOs completed
after it. On recorded outputs (one run's JSON, normal and terse text after a ramp at
QD64 x 2) every format shows one IOPS figure, bandwidth / block size, with fio's own
beside it; on a real capped loop device at QD64 with a ramp the consistency holds in
`run`, `show`, `compare`, exports and the findings; block sizes that do not match the
bytes per IO are flagged, fixed, split and ranged alike.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.export import export_csv, read_csv
from iobench.importer import import_files, interpret_fio_output
from iobench.iocount import io_size, upgraded
from iobench.records import ImportedRun, ResultRecord, TargetRecord, now_iso
from iobench.store import Store
from iobench.units import format_iops
from scratch import MiB, Scratch, capped_volume, iobench_in
from test_import_terse import meta, recorded_json, terse_lines
from test_import_text import normal_part

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"
RAMP = "text-ramp-qd64x2-read-1m"  # 1 MiB reads, QD64 x 2 jobs, 1 s ramp + 1 s
KIB = 1024


def _formats() -> dict[str, str]:
    """The recorded run as fio wrote it in each format (json+ holds all three: the JSON
    is what an import reads from it)."""
    full = (RECORDED / f"{RAMP}.out").read_text()
    (job,) = meta(RAMP)["job_files"].values()
    terse = f"$ cat job.fio\n{job}$ fio --output-format=terse job.fio\n"
    return {
        "json": full,
        "normal": normal_part(RECORDED / f"{RAMP}.out"),
        "terse": terse + "\n".join(terse_lines(RAMP)) + "\n",
    }


def _imported(text: str, name: str = "out.txt") -> ImportedRun:
    return interpret_fio_output(text, f"/nowhere/{name}")


def _warnings(run: ImportedRun, wid: str) -> list[str]:
    return [w["message"] for w in run.warnings if w["id"] == wid]


def _the_read(run: ImportedRun) -> dict[str, Any]:
    (result,) = run.results
    assert result.metrics is not None
    section: dict[str, Any] = result.metrics["read"]
    return section


# -- one run, three formats ----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "normal", "terse"])
def test_every_format_of_one_run_shows_the_completed_ios(fmt: str) -> None:
    run = _imported(_formats()[fmt], f"ramp.{fmt}")
    read = _the_read(run)
    # fio's JSON: 833617920 bytes = 795 IOs of 1 MiB completed in 1193 ms; 669 submitted.
    assert read["ios_completed"] == 795 and read["ios_completed_from"] == "io_bytes/bs"
    assert read["iops"] == pytest.approx(795_000 / 1193, rel=1e-9)
    assert read["total_ios"] == 669
    # fio's own figure, as each format states it (terse: a whole number).
    assert read["iops_submitted"] == pytest.approx(560.771165, abs=1)
    # IOPS x bytes per IO = bandwidth, to the precision the format printed it with.
    assert read["iops"] * MiB == pytest.approx(read["bw_bytes"], rel=0.001)
    (said,) = _warnings(run, "fio-counts-differ")
    assert "666 IOPS are the 795 IOs completed" in said
    assert "the 669 submitted in it" in said and "at most iodepth 64 x 2 jobs = 128" in said


def test_the_json_says_the_ramp_that_the_text_header_does_not() -> None:
    fmts = _formats()
    (json_said,) = _warnings(_imported(fmts["json"]), "fio-counts-differ")
    (text_said,) = _warnings(_imported(fmts["normal"]), "fio-counts-differ")
    assert "when the 1 s ramp ended" in json_said
    assert "a ramp_time the output does not state" in text_said


def test_csv_and_json_exports_carry_both_counts(tmp_path: Path) -> None:
    with Store.open(tmp_path / "r.db") as store:
        path = tmp_path / "ramp.json"
        path.write_text(_formats()["json"])
        (run_id,) = import_files(store, [str(path)], label=None, argv=["iobench"])
        run = store.get_run(run_id)
    (row,) = read_csv(export_csv(run))
    assert row["ios_completed"] == 795 and row["total_ios"] == 669
    assert row["iops"] == pytest.approx(795_000 / 1193)
    assert row["iops_submitted"] == pytest.approx(560.771165)
    assert row["ios_completed_from"] == "io_bytes/bs"


# -- bytes per IO that are not the block size -----------------------------------------------------


def _json_with(options: dict[str, str]) -> str:
    """The recorded JSON as a user's edited copy would have it: other job options echoed."""
    doc = recorded_json(RAMP)
    echo = doc["jobs"][0]["job options"]
    for key, value in options.items():
        if value:
            echo[key] = value
        else:
            echo.pop(key, None)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("options", "flagged", "count_from"),
    [
        ({}, None, "io_bytes/bs"),
        ({"bs": "512k"}, "1 MiB per IO", "completions"),
        ({"bs": "4m"}, "1 MiB per IO", "completions"),
        ({"bssplit": "512k/50:1536k/50"}, None, "completions"),  # its mean is 1 MiB
        ({"bssplit": "4k/50:8k/50"}, "6 KiB on average", "completions"),
        ({"bssplit": "1m/100,4k/100"}, None, "io_bytes/bs"),  # reads 1 MiB, writes 4 KiB
        ({"bsrange": "512k-2m"}, None, "completions"),
        ({"bsrange": "4k-64k"}, "4 KiB to 64 KiB", "completions"),
    ],
    ids=["bs", "bs-smaller", "bs-larger", "bssplit", "bssplit-off", "bssplit-per-dir",
         "bsrange", "bsrange-off"],
)  # fmt: skip
def test_bytes_per_io_are_checked_against_what_the_job_says(
    options: dict[str, str], flagged: str | None, count_from: str
) -> None:
    run = _imported(_json_with(options))
    read = _the_read(run)
    said = _warnings(run, "bytes-per-io")
    if flagged is None:
        assert said == []
    else:
        (message,) = said
        assert flagged in message and "read moved 1 MiB per IO" in message, message
        assert "fio's count of completions (clat N)" in message
    assert read["ios_completed_from"] == count_from
    # Whatever the job says, the count is of the IOs fio completed: 795.
    assert read["ios_completed"] == 795
    assert read["iops"] * (833617920 / 795) == pytest.approx(read["bw_bytes"], rel=1e-6)


def test_text_whose_command_line_names_another_block_size_is_flagged() -> None:
    """The normal output pasted under a command line of another run (the class of paste
    that importer parameter recovery reads): the bytes say 1 MiB, the line 256 KiB."""
    text = "$ fio --name=seqread --rw=read --bs=256k --iodepth=64 --numjobs=2\n"
    text += _formats()["normal"]
    run = _imported(text)
    (result,) = run.results
    assert result.params.get("bs") == 256 * KIB, result.params  # the command line was read
    (message,) = _warnings(run, "bytes-per-io")
    assert "not the 256 KiB its block size says" in message
    assert "fio's count of submissions (total_ios)" in message


# -- the pure rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "direction", "low", "high", "mean"),
    [
        ({"bs": 4096}, "write", 4096, 4096, 4096),
        ({"bs": 4096, "options": {"bssplit": "4096/50:65536/"}}, "read", 4096, 65536, 34816),
        ({"bs": 4096, "options": {"bssplit": "4096/100,8192/100"}}, "trim", 8192, 8192, 8192),
        ({"bs": 4096, "options": {"bssplit": "4096/100,8192/100,"}}, "trim", 4096, 4096, 4096),
        ({"options": {"bsrange": "4k-16k,64k-128k"}}, "write", 65536, 131072, None),
        ({"options": {"bsrange": "4k-4k"}, "bs": 8192}, "read", 8192, 8192, 8192),
    ],
)
def test_expected_bytes_per_io_follow_fio_rules(
    params: dict[str, Any], direction: str, low: int, high: int, mean: float | None
) -> None:
    """A list not ended by a comma applies to the directions after it (fio's HOWTO, bs)."""
    size = io_size(params, direction)
    assert size is not None
    assert (size.low, size.high, size.mean) == (low, high, mean)


def test_unknown_block_size_counts_fios_completions() -> None:
    assert io_size({"bs": None}, "read") is None
    assert io_size({}, "read") is None


def _v1(iops: float, total: int, io_bytes: int, n: int, runtime_ms: int) -> dict[str, Any]:
    return {
        "read": {"iops": iops, "bw_bytes": 1000 * io_bytes // runtime_ms, "io_bytes": io_bytes,
                 "total_ios": total, "runtime_ms": runtime_ms,
                 "clat_ns": {"n": n, "mean": 1.0}, "lat_ns": None, "slat_ns": None},
        "write": None, "trim": None, "cpu": {}, "error": 0, "disk_util": [],
    }  # fmt: skip


def test_results_stored_with_fios_iops_are_read_with_completions() -> None:
    """Metrics version 1 (before this count): upgraded when a store or an export is read."""
    # The figures: 360 IOPS of 256 KiB beside 95.9 MiB/s over 5 s.
    old = _v1(360.0, 1800, 1918 * 256 * KIB, 1918, 5000)
    params = {"bs": 256 * KIB, "iodepth": 64, "numjobs": 2}
    new = upgraded(old, params)
    assert new is not None and new["metrics_version"] == 2
    read = new["read"]
    assert read["iops"] == pytest.approx(383.6) and read["iops_submitted"] == 360.0
    assert read["completions"] == 1918 and read["ios_completed_from"] == "io_bytes/bs"
    assert upgraded(new, params) == new  # version 2 is left alone
    # An N equal to total_ios may have been made from it (text, terse): no completions.
    same = upgraded(_v1(100.0, 500, 500 * 4096, 500, 5000), {"bs": 4096})
    assert same is not None and same["read"]["completions"] is None


def test_a_store_and_an_export_of_fios_iops_are_read_with_completions(
    tmp_path: Path, cli: Cli
) -> None:
    """A database written before this count, and its export, read by this iobench: the
    ramp's 360 IOPS are shown as 384, the bandwidth / block size."""
    params = {"rw": "read", "bs": 256 * KIB, "iodepth": 64, "numjobs": 2, "ramp_s": 1.0}
    with Store.open(tmp_path / "old.db") as store:
        run_id = store.create_run(
            suite="quick", suite_def={"name": "quick"}, label="old", argv=["iobench", "run"],
            host={}, iobench_version="0.1.0",
            targets=[TargetRecord(0, "/mnt/a", "/mnt/a", "directory", None, {})],
        )  # fmt: skip
        metrics = {**_v1(360.0, 1800, 1922 * 256 * KIB, 1922, 5000), "metrics_version": 1}
        store.add_result(run_id, ResultRecord(
            target="/mnt/a", workload="read-256k", position=0, status="ok", params=params,
            metrics=metrics, job_file="", fio_argv=[], fio_rc=0, fio_version="3.33",
            raw_output=None, fio_stdout=None, fio_stderr=None, error=None,
            started_at=now_iso(), finished_at=now_iso(),
        ))  # fmt: skip
        store.finish_run(run_id, status="complete", fio_version="3.33", warnings=[])
    code, out, err = cli("--db", str(tmp_path / "old.db"), "show", str(run_id))
    assert code == 0, err
    line = next(ln for ln in (out + err).splitlines() if "read-256k" in ln and "│" in ln)
    assert "384" in [c.strip() for c in line.split("│")], line
    exported = tmp_path / "old.json"
    code, _, err = cli("--db", str(tmp_path / "old.db"), "export", str(run_id), "--format",
                       "json", "-o", str(exported))  # fmt: skip
    assert code == 0, err
    doc = json.loads(exported.read_text())
    for r in doc["results"]:  # as an older iobench exported it
        r["metrics_version"] = 1
        for key in ("iops_submitted", "ios_completed", "ios_completed_from", "completions"):
            r["read"].pop(key)
        r["read"]["iops"] = 360.0
    exported.write_text(json.dumps(doc))
    code, out, err = cli("--db", str(tmp_path / "new.db"), "import", str(exported), "--json")
    assert code == 0, err
    (run,) = json.loads(out)["runs"]
    code, out, err = cli("--db", str(tmp_path / "new.db"), "show", str(run["run_id"]), "--json")
    read = json.loads(out)["results"][0]["read"]
    assert read["iops"] == pytest.approx(1922 / 5) and read["iops_submitted"] == 360.0


# -- real fio on a capped volume, QD64 with a ramp ----------------------------------------------

SUITE = """\
name = "iocounts"
description = "reads after a ramp on a capped volume"
[defaults]
runtime = "2s"
ramp = "{ramp}"
size = "48M"
[[workload]]
name = "read-256k-qd64x2"
rw = "read"
bs = "256k"
iodepth = 64
numjobs = 2
[[workload]]
name = "randread-16k-qd16"
rw = "randread"
bs = "16k"
iodepth = 16
numjobs = 1
[[workload]]
name = "randread-4k-qd1"
rw = "randread"
bs = "4k"
iodepth = 1
numjobs = 1
"""
CAP_IOPS, CAP_BPS = 3000, 100_000_000


@pytest.mark.paced  # measures through a throttle: scripts/test.sh runs it beside other paced tests
@pytest.mark.fio
@pytest.mark.root
def test_a_ramp_at_qd64_on_a_capped_volume(scratch: Scratch, tmp_path: Path, real_fio: str) -> None:
    dev, group = capped_volume(scratch, 64 * MiB, CAP_IOPS, CAP_BPS)
    db = tmp_path / "r.db"
    runs = []
    for ramp in ("1s", "0s"):
        suite = tmp_path / f"ramp{ramp}.toml"
        suite.write_text(SUITE.format(ramp=ramp))
        code, out, err = iobench_in(group, db, "run", dev, "--suite", str(suite), "--json")
        assert code == 0, err
        runs.append(json.loads(out))
    ramped, plain = runs
    said = {
        w["workload"]: w["message"] for w in ramped["warnings"] if w["id"] == "fio-counts-differ"
    }
    for doc in runs:
        for r in doc["results"]:
            read, p = r["read"], r["params"]
            # IOPS x block size = bandwidth, and the count is fio's own within the IOs in flight.
            assert read["ios_completed_from"] == "io_bytes/bs", read
            assert read["iops"] * p["bs"] == pytest.approx(read["bw_bytes"], rel=1e-6)
            extra = read["ios_completed"] - read["total_ios"]
            assert 0 <= extra <= p["iodepth"] * p["numjobs"], read
            if doc is plain or p["iodepth"] == 1:
                assert extra == 0 and read["iops"] == pytest.approx(read["iops_submitted"])
    big = next(r["read"] for r in ramped["results"] if r["workload"] == "read-256k-qd64x2")
    # The throttle's 100 MB/s is in the bandwidth and in the IOPS shown, not in fio's iops.
    assert big["bw_bytes"] == pytest.approx(CAP_BPS, rel=0.15)
    assert big["iops"] * 256 * KIB == pytest.approx(CAP_BPS, rel=0.15)
    assert big["ios_completed"] - big["total_ios"] >= 64, big  # a full queue at the ramp's end
    assert big["iops_submitted"] < 0.97 * big["iops"]
    message = said["read-256k-qd64x2"]
    assert f"read: {format_iops(big['iops'])} IOPS are the" in message
    assert "when the 1 s ramp ended (at most iodepth 64 x 2 jobs = 128)" in message
    assert "randread-4k-qd1" not in said  # QD1: one count
    _compare_agrees(group, db, ramped["run_id"], plain["run_id"])
    _show_agrees(group, db, ramped["run_id"], big)


def _compare_agrees(group: Any, db: Path, a: int, b: int) -> None:
    """With and without a ramp, IOPS ratios are the bandwidth ratios."""
    code, out, err = iobench_in(group, db, "compare", str(a), str(b), "--json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert len(rows) == 3
    for row in rows:
        other = row["cells"][1]
        assert other["iops_ratio"] == pytest.approx(other["bw_ratio"], rel=1e-6), row


def _show_agrees(group: Any, db: Path, run: int, big: dict[str, Any]) -> None:
    """`show` prints iobench's IOPS, not fio's."""
    code, out, err = iobench_in(group, db, "show", str(run))
    assert code == 0, err
    line = next(ln for ln in (out + err).splitlines() if "read-256k-qd64x2" in ln and "│" in ln)
    cells = [c.strip() for c in line.split("│")]
    assert format_iops(big["iops"]) in cells, line
    assert format_iops(big["iops_submitted"]) not in cells, line


@pytest.mark.fio
def test_plain_fio_tells_the_same_with_group_reporting_off(tmp_path: Path, real_fio: str) -> None:
    """Without group_reporting each job's entry diverges by its own iodepth; merged as
    group_reporting does (an import of clones), the counts add up."""
    data = tmp_path / "d.bin"
    out = tmp_path / "o.json"
    subprocess.run(
        [real_fio, "--name=seqread", f"--filename={data}", "--size=32M", "--direct=1",
         "--ioengine=libaio", "--rw=read", "--bs=1m", "--iodepth=32", "--numjobs=2",
         "--time_based", "--runtime=1", "--ramp_time=1", "--output-format=json+",
         f"--output={out}"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    run = _imported(out.read_text(), "clones.json")
    read = _the_read(run)
    assert read["ios_completed_from"] == "io_bytes/bs"
    assert 0 <= read["ios_completed"] - read["total_ios"] <= 64
    assert read["iops"] * MiB == pytest.approx(read["bw_bytes"], rel=1e-6)
