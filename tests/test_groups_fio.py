"""Workloads of several jobs fio runs together (issue 24, point 1), with real fio: the jobs
iobench groups are those fio starts together; a reader and a writer on a capped volume
give, part by part and as a group, what plain fio gives for the same file; TOML parts on
several targets with --repeat; on --clients; compared; exported and run by plain fio.
Serial by nature: one fio load at a time, 1-2 s each."""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from hosts import FioHosts, fio_hosts_fixture
from iobench.suites.loader import parse_job_file
from scratch import Cgroup, MiB, Scratch, capped_volume, iobench_in
from test_clients import fio_percentiles, window_mean
from test_groups import GROUP_TOML, JOBS

pytestmark = pytest.mark.fio


def fio_json(argv: list[str], cwd: Path) -> dict[str, Any]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    text = done.stdout
    doc: dict[str, Any] = json.loads(text[text.index("{") :])
    return doc


# --- the jobs fio starts together --------------------------------------------------------------


def fio_rounds(fio: str, body: str, tmp_path: Path) -> list[list[str]]:
    """The jobs of a job file as plain fio starts them: each job's start from its first
    per-100-ms log sample (Unix times), jobs started within half a second one round."""
    logged = (
        "[global]\nioengine=null\nsize=1g\nrw=read\nbs=4k\ntime_based=1\nruntime=1\n"
        "write_iops_log=t\nlog_unix_epoch=1\nlog_avg_msec=100\n"
    )
    (tmp_path / "order.fio").write_text(logged + body)
    fio_json([fio, "--output-format=json", "order.fio"], tmp_path)
    names = re.findall(r"^\[(.+)\]$", body, re.M)
    starts = {
        names[int(m.group(1)) - 1]: int(log.read_text().split(",", 1)[0])
        for log in tmp_path.glob("t_iops.*.log")
        if (m := re.match(r"t_iops\.(\d+)\.log$", log.name))
    }
    rounds: list[list[str]] = []
    last = None
    for name, at in sorted(starts.items(), key=lambda kv: kv[1]):
        if last is None or at - last > 500:
            rounds.append([])
        rounds[-1].append(name)
        last = at
    return [sorted(r) for r in rounds]


@pytest.mark.parametrize(
    "body",
    [
        "[a]\n[b]\n[c]\nstonewall\n[d]\n",
        "[a]\n[b]\nnew_group\n[c]\nwait_for_previous\n",
        "[a]\n[b]\n[c]\nwait_for=a\n[d]\n[e]\nstonewall\n[f]\nnew_group\n[g]\nwait_for=f\n",
        "[a]\n[b]\nwait_for=a\n[c]\nwait_for=b\n",
        "[a]\n[b]\nstonewall\n[c]\nwait_for=a\n[d]\nwait_for=c\n",
    ],
)
def test_iobench_groups_the_jobs_plain_fio_starts_together(
    real_fio: str, tmp_path: Path, body: str
) -> None:
    suite = parse_job_file(JOBS + body, "order.fio", "order.fio")
    ours = [sorted(p.name for p in w.jobs) for w in suite.workloads]
    assert ours == fio_rounds(real_fio, body, tmp_path)


# --- a reader and a writer on a capped volume, against plain fio ------------------------------

READ_IOPS, WRITE_IOPS = 2000, 800
TOGETHER = """\
[global]
filename={dev}
ioengine=libaio
direct=1
size=32m
runtime=2
time_based
{extra}
[reader]
rw=randread
bs=4k
iodepth=8
[scanner]
rw=read
bs=16k
iodepth=2
[writer]
rw=randwrite
bs=4k
iodepth=4
"""


def plain_fio(fio: str, group: Cgroup, job: Path) -> dict[str, Any]:
    return fio_json(group.command([fio, "--output-format=json+", str(job)]), job.parent)


def bins(section: dict[str, Any]) -> Counter[int]:
    return Counter({int(k): v for k, v in section["lat_ns"]["bins"].items()})


@pytest.mark.serial  # measures: run alone (scripts/test.sh)
@pytest.mark.root
def test_a_reader_and_a_writer_together_give_what_plain_fio_gives(
    scratch: Scratch, real_fio: str, tmp_path: Path
) -> None:
    dev, group = capped_volume(scratch, 64 * MiB, READ_IOPS, 0, write_iops=WRITE_IOPS)
    job = tmp_path / "together.fio"
    job.write_text(TOGETHER.format(dev=dev, extra=""))
    code, out, err = iobench_in(
        group, tmp_path / "db", "run", dev, "--suite", str(job), "--destructive", "--json"
    )
    assert code == 0, err
    (result,) = json.loads(out)["results"]
    assert result["workload"] == "reader" and result["status"] == "ok"
    parts = {p["name"]: p for p in result["parts"]}
    assert list(parts) == ["reader", "scanner", "writer"]
    # fio's own figures for the same file, job by job, then as one reporting group
    alone = {j["jobname"]: j for j in plain_fio(real_fio, group, job)["jobs"]}
    job.with_name("grouped.fio").write_text(TOGETHER.format(dev=dev, extra="group_reporting"))
    (grouped,) = plain_fio(real_fio, group, job.with_name("grouped.fio"))["jobs"]

    # the writer has its cap to itself: part for job
    ours, fio = parts["writer"]["write"], alone["writer"]["write"]
    assert ours["iops"] == pytest.approx(fio["iops"], rel=0.2)
    assert ours["lat_ns"]["mean"] == pytest.approx(fio["lat_ns"]["mean"], rel=0.3)
    # the 4k reader and the 16k scanner share the read cap, and how fio's scheduling shares
    # it varies from one run to the next (498 and 386 IOPS for the same job were seen): their
    # sum is what both runs must agree on, and each part's IOs are its own histogram's
    assert sum(parts[n]["read"]["iops"] for n in ("reader", "scanner")) == pytest.approx(
        sum(alone[n]["read"]["iops"] for n in ("reader", "scanner")), rel=0.15
    )
    for name in ("reader", "scanner"):
        ours = parts[name]["read"]
        assert ours["iops"] > 0 and sum(bins(ours).values()) == ours["lat_ns"]["n"], name
    # the caps hold for the parts together, as for fio's jobs
    read_iops = parts["reader"]["read"]["iops"] + parts["scanner"]["read"]["iops"]
    assert read_iops == pytest.approx(READ_IOPS, rel=0.15)
    assert parts["writer"]["write"]["iops"] == pytest.approx(WRITE_IOPS, rel=0.15)

    # the group: IOs summed over the longest runtime, as fio's group_reporting
    for d in ("read", "write"):
        ours, fio = result[d], grouped[d]
        having = [p[d] for p in parts.values() if p[d]]
        assert ours["io_bytes"] == sum(s["io_bytes"] for s in having)
        assert ours["runtime_ms"] == max(s["runtime_ms"] for s in having)
        assert ours["iops"] == pytest.approx(sum(s["iops"] for s in having), rel=0.02)
        assert ours["iops"] == pytest.approx(fio["iops"], rel=0.15), d
        # the read cap is shared by a 4k and a 16k reader, and how it is shared varies from
        # one run to the next: bandwidth (not IOPS) follows that share
        assert ours["bw_bytes"] == pytest.approx(fio["bw_bytes"], rel=0.3), d
        assert ours["bw_bytes"] == pytest.approx(sum(s["bw_bytes"] for s in having), rel=0.02)
        assert ours["lat_ns"]["mean"] == pytest.approx(fio["lat_ns"]["mean"], rel=0.3), d
    # the group's read latency: the parts' histogram bins merged, never averaged
    merged = bins(parts["reader"]["read"]) + bins(parts["scanner"]["read"])
    assert sum(merged.values()) == result["read"]["lat_ns"]["n"]
    for p in ("p50", "p99", "p99.9"):
        assert result["read"]["lat_ns"][p] in fio_percentiles(merged, float(p[1:])), p
    # fio's own group p99 in its run (completion latency: plain fio has no others by
    # default). Not the p50: behind a throttle an IO either passes at once (~70 µs here) or
    # waits for the throttle's next slice (~170 µs and more), and the median falls on
    # either side from one run to the next as the reader and the scanner share the cap
    # (76 and 175 µs were seen); the p50 is held exactly to the merged bins above.
    fio_p99 = grouped["read"]["clat_ns"]["percentile"]["99.000000"]
    assert result["read"]["clat_ns"]["p99"] == pytest.approx(fio_p99, rel=0.5)
    # shown: the group, then each part
    code, text, _ = iobench_in(group, tmp_path / "db", "show", "1")
    assert code == 0
    assert re.search(r"│ reader +│ randread\+read\+randwrite │ 4k\+16k │", text), text
    for name in ("reader/reader", "reader/scanner", "reader/writer"):
        assert f"│ {name} " in text


# --- TOML parts: several targets, repetitions, compare, reports -----------------------------


def test_toml_parts_on_two_targets_repeated_compared_and_reported(
    cli: Cli, tmp_path: Path, real_fio: str
) -> None:
    suite = tmp_path / "g.toml"
    # 2 s: a 1 s job may end before its first per-second sample
    suite.write_text(GROUP_TOML.replace('ramp = "1s"', 'ramp = "0s"'))
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    code, out, err = cli(
        "run", str(a), str(b), "--suite", str(suite), "--repeat", "2", "--label", "x", "--json"
    )
    assert code == 0, err
    doc = json.loads(out)
    mixed = [r for r in doc["results"] if r["workload"] == "mixed"]
    assert sorted((r["target"], r["repetition"]) for r in mixed) == [
        (str(a), 1), (str(a), 2), (str(b), 1), (str(b), 2)]  # fmt: skip
    for r in mixed:
        assert [p["name"] for p in r["parts"]] == ["reader", "writer"]
        assert r["parts"][0]["read"]["iops"] > 0 and r["parts"][1]["write"]["iops"] > 0
        assert r["read"]["io_bytes"] == r["parts"][0]["read"]["io_bytes"]
        assert r["parts"][0]["samples"]["read"]["iops"]  # each part's own seconds
        assert r["parts"][1]["samples"]["write"]["iops"]
        assert r["samples"]["read"]["iops"] and r["samples"]["write"]["iops"]  # and together
    summary = {(s["target"], s["workload"], s["part"], s["direction"]): s for s in doc["summary"]}
    for part, d in ((None, "read"), (None, "write"), ("reader", "read"), ("writer", "write")):
        assert summary[(str(a), "mixed", part, d)]["n"] == 2
    assert list(a.iterdir()) == list(b.iterdir()) == []  # test files removed

    run_id = str(doc["run_id"])
    code, out, _ = cli("compare", run_id, "--json")
    assert code == 0
    rows = [(r["workload"], r["direction"]) for r in json.loads(out)["rows"]]
    assert rows == [("alone", "read"), ("mixed", "read"), ("mixed", "write"),
                    ("mixed/reader", "read"), ("mixed/writer", "write")]  # fmt: skip
    code, out, _ = cli("compare", run_id)
    assert code == 0 and "mixed/reader" in out and "mixed/writer" in out
    for fmt in ("md", "html"):
        report = tmp_path / f"r.{fmt}"
        code, _, err = cli("report", run_id, "--format", fmt, "-o", str(report))
        assert code == 0, err
        text = report.read_text()
        assert "mixed/reader" in text and "mixed/writer" in text


# --- on --clients ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def netns_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FioHosts]:
    yield from fio_hosts_fixture(tmp_path_factory.mktemp("hosts"), 2)


@pytest.mark.root
def test_a_group_on_two_clients_keeps_each_clients_parts_and_their_aggregate(
    cli: Cli, netns_hosts: FioHosts, tmp_path: Path
) -> None:
    netns_hosts.ensure_running()
    shared = tmp_path / "shared"
    shared.mkdir()
    suite = tmp_path / "g.toml"
    only_mixed = GROUP_TOML.split('[[workload]]\nname = "alone"')[0] + (
        "[[workload]]" + GROUP_TOML.split("[[workload]]")[2]
    )
    # 5 s: each client's part logs seconds enough for a window in which both ran it
    suite.write_text(
        only_mixed.replace('ramp = "1s"', 'ramp = "0s"').replace('runtime = "2s"', 'runtime = "5s"')
    )
    names = [h.name for h in netns_hosts.hosts]
    code, out, err = cli(
        "run", str(shared), "--suite", str(suite), "--clients", ",".join(names), "--json"
    )
    assert code == 0, err
    doc = json.loads(out)
    results = doc["results"]
    assert {r["client"] for r in results} == {*names, "all"}
    per = [r for r in results if r["client"] != "all"]
    (agg,) = [r for r in results if r["client"] == "all"]
    (step,) = doc["clients"]["steps"]
    assert step["aggregate_over"] == "window" and step["window"]["clients"] == 2
    for k, (name, d) in enumerate((("reader", "read"), ("writer", "write"))):
        mine = [r["parts"][k] for r in per]
        assert all(p["name"] == name and p[d]["iops"] > 0 for p in mine)
        together = agg["parts"][k][d]
        # each part by the group's rule: over the seconds both clients ran it
        part = step["parts"][k]
        assert part["part"] == name and part["aggregate_over"] == "window", part
        as_results = [
            {"workload": "mixed", "client": r["client"], "samples": r["parts"][k]["samples"]}
            for r in per
        ]
        assert together["iops"] == pytest.approx(window_mean(as_results, "mixed", d, part))
        assert together["iops_whole_run"] == pytest.approx(sum(p[d]["iops"] for p in mine))
        assert together["io_bytes"] == sum(p[d]["io_bytes"] for p in mine)
        assert together["lat_ns"]["n"] == sum(p[d]["lat_ns"]["n"] for p in mine)
        # the group: the clients' groups, over the seconds both ran it
        assert agg[d]["iops"] == pytest.approx(window_mean(results, "mixed", d, step))
        assert agg[d]["iops_whole_run"] == pytest.approx(sum(r[d]["iops"] for r in per))
    assert list(shared.iterdir()) == []


# --- suites export: plain fio runs the group as iobench does -----------------------------------


def test_plain_fio_runs_an_exported_group_together(cli: Cli, tmp_path: Path, real_fio: str) -> None:
    suite = tmp_path / "g.toml"
    suite.write_text(GROUP_TOML.replace('runtime = "2s"', 'runtime = "1s"'))
    job = tmp_path / "g.fio"
    code, _, err = cli("suites", "export", str(suite), "-o", str(job), "--runtime", "1s")
    assert code == 0, err
    doc = fio_json([real_fio, "--output-format=json", str(job)], tmp_path)
    jobs = [(j["jobname"], j["groupid"]) for j in doc["jobs"]]
    # layout, alone, then the group's parts each reported apart, started together
    assert jobs == [("iobench:layout", 0), ("alone", 1), ("reader", 2), ("writer", 3)]
    assert doc["jobs"][3]["write"]["io_bytes"] > 0 and doc["jobs"][2]["read"]["io_bytes"] > 0
