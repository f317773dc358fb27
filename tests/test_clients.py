"""Many clients at once (issue 5): real ``fio --server`` processes on network-namespace
hosts (tests/hosts.py), iobench as the controller. The tests that time what the clients did
(when each started, how long a step may take, a cleanup's time limit) carry the `serial`
marker; the others check what iobench made of what fio reported, and run beside other tests.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conftest import MINI_SUITE, Cli
from hosts import FioHost, FioHosts, fio_hosts_fixture
from iobench.analysis.together import seconds_text
from iobench.clients import Client, ClientCheck, parse_client, parse_clients
from iobench.engine import NullObserver, Outcome, RunRequest, check, execute, remote
from iobench.errors import UserError
from iobench.fio.runner import find_fio, run_fio_clients
from iobench.records import RunRecord
from iobench.report.clients import render_checks
from iobench.report.progress import ProgressDisplay
from iobench.store import Store
from iobench.suites import load_suite
from test_report import Page, check_report, needs_chromium

pytestmark = pytest.mark.fio


@pytest.fixture(scope="module")
def netns_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FioHosts]:
    yield from fio_hosts_fixture(tmp_path_factory.mktemp("hosts"), 3)


@pytest.fixture
def fio_hosts(netns_hosts: FioHosts) -> FioHosts:
    """Three namespace hosts, every server running at the start of the test."""
    netns_hosts.ensure_running()
    return netns_hosts


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[Path]:
    """The directory every client tests in; the test fails if iobench leaves a file there."""
    path = tmp_path / "shared"
    path.mkdir()
    yield path
    left = sorted(p.name for p in path.iterdir())
    assert left == [], f"test files left behind: {left}"


def suite_file(tmp_path: Path, runtime: str = "1s") -> str:
    """The mini suite (a random read and a random write of 4 KiB at QD4) at ``runtime``."""
    path = tmp_path / "pair.toml"
    text = MINI_SUITE.replace('runtime = "1s"', f'runtime = "{runtime}"')
    assert f'runtime = "{runtime}"' in text and "[[workload]]" in text
    path.write_text(text)
    return str(path)


def names(hosts: FioHosts) -> list[str]:
    return [h.name for h in hosts.hosts]


def run_json(cli: Cli, *args: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = cli(*args, "--json")
    return code, json.loads(out), err


# -- naming clients ------------------------------------------------------------------------------


def test_client_names_as_given() -> None:
    assert parse_client("node1", "x") == Client("node1", "node1", 8765)
    assert parse_client("10.0.0.5:8766", "x") == Client("10.0.0.5:8766", "10.0.0.5", 8766)
    assert parse_client("[fd00::5]:9000", "x") == Client("[fd00::5]:9000", "fd00::5", 9000)
    assert parse_client("[fd00::5]", "x").port == 8765
    assert [c.name for c in parse_clients("a,b:1,c")] == ["a", "b:1", "c"]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("a,,b", "empty name"),
        ("a,a:8765", "named twice"),
        ("fd00::5", "IPv6"),
        ("a:0", "port must be"),
        ("a:http", "port must be"),
        ("[fd00::5", "does not close"),
        ("no/such", "not a host name"),
    ],
)
def test_bad_client_names_are_refused_with_the_reason(value: str, said: str) -> None:
    with pytest.raises(UserError, match=said):
        parse_clients(value)


def test_a_host_file_takes_comments_and_names_the_bad_line(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("# load machines\nnode1\n\nnode2:8766  # the big one\n")
    assert [c.name for c in parse_clients(f"@{hosts}")] == ["node1", "node2:8766"]
    hosts.write_text("node1\nnode 2\n")
    with pytest.raises(UserError, match=re.escape(f"{hosts}:2")):
        parse_clients(f"@{hosts}")
    with pytest.raises(UserError, match="cannot read"):
        parse_clients(f"@{tmp_path / 'missing.txt'}")


def test_the_target_must_be_an_absolute_path_fio_can_take(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("run", "relative/dir", "--clients", "127.0.0.1")
    assert code == 2 and "absolute path" in err
    code, _, err = cli("run", "/mnt/a:b", "--clients", "127.0.0.1")
    assert code == 2 and "misread" in err
    code, _, err = cli("run", "/a", "/b", "--clients", "127.0.0.1")
    assert code == 2 and "exactly one TARGET" in err
    code, _, err = cli("run", str(tmp_path), "--scale", "1,2")
    assert code == 2 and "--scale goes with --clients" in err
    code, _, err = cli("run", str(tmp_path), "--clients", "a,b", "--scale", "1,3")
    assert code == 2 and "3 clients are asked for" in err


# -- checking clients --------------------------------------------------------------------------


class NotFio:
    """A TCP service on loopback that answers like a web server, not like fio."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello" * 20)

    def close(self) -> None:
        self.sock.close()


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return int(s.getsockname()[1])


@pytest.mark.root
def test_clients_check_names_every_client_and_what_is_wrong(cli: Cli, fio_hosts: FioHosts) -> None:
    not_fio = NotFio()
    closed = f"127.0.0.1:{free_port()}"
    try:
        given = [*names(fio_hosts)[:2], f"127.0.0.1:{not_fio.port}", closed]
        code, doc, _ = run_json(cli, "clients", "check", ",".join(given))
    finally:
        not_fio.close()
    assert code == 1
    assert doc["kind"] == "clients" and doc["fio_version"] == find_fio().version
    by_name = {c["client"]: c for c in doc["clients"]}
    assert list(by_name) == given
    for name in given[:2]:
        good = by_name[name]
        assert good["ok"] and good["problem"] is None
        assert good["fio_version"] == find_fio().version
        assert good["hostname"]  # the server's own idea of its name
        assert good["connect_ms"] is not None and good["connect_ms"] < 3000
        # One clock here (namespaces share it): the bound holds 0 and is as wide as the probe.
        offset = good["clock_offset_ms"]
        assert offset["low"] <= 0 <= offset["high"] and offset["high"] - offset["low"] < 20000
    assert not by_name[given[2]]["ok"]
    assert "does not answer as a fio server" in by_name[given[2]]["problem"]
    assert not by_name[closed]["ok"]
    assert "cannot connect" in by_name[closed]["problem"]
    assert "refused" in by_name[closed]["problem"]

    code, out, _ = cli("clients", "check", ",".join(names(fio_hosts)))
    assert code == 0
    for name in names(fio_hosts):
        assert re.search(rf"{re.escape(name)}\s.*ok", out), out


def test_a_clock_proven_off_is_flagged() -> None:
    c = Client("n1", "n1", 8765)
    near = ClientCheck(c, True, None, "n1", "3.33", 1.0, (-40.0, 1260.0))
    ahead = ClientCheck(c, True, None, "n1", "3.33", 1.0, (29_960.0, 31_260.0))
    behind = ClientCheck(c, True, None, "n1", "3.33", 1.0, (-5_000.0, -3_700.0))
    assert not near.clock_off and ahead.clock_off and behind.clock_off
    assert not ClientCheck(c, True, None, "n1", "3.33", 1.0).clock_off  # unknown: not off
    assert ahead.as_dict()["clock_offset_ms"] == {"low": 29960, "high": 31260}
    console = Console(file=io.StringIO(), width=200)
    render_checks([near, ahead], "3.33", console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "-0.0 s to +1.3 s" in text and "+30.0 s to +31.3 s (off)" in text


@pytest.mark.root
def test_an_unreachable_client_stops_everything_before_it_starts(
    cli: Cli, fio_hosts: FioHosts, shared: Path, tmp_path: Path, isolated_db: Path
) -> None:
    closed = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    code, out, err = cli(
        "run", str(shared), "--suite", suite_file(tmp_path), "--clients",
        f"{names(fio_hosts)[0]},{closed}",
    )  # fmt: skip
    assert code == 1, err
    assert closed in err and "nothing was started" in err and "Traceback" not in err
    assert time.monotonic() - started < 30  # a short connect timeout, no fio run
    code, out, _ = cli("list", "--json")
    assert json.loads(out)["runs"] == []


# -- running on three clients ------------------------------------------------------------------


def fio_percentiles(bins: Counter[int], p: float) -> set[int]:
    """fio's rule, written out independently: the first bin (by value) where the running
    count reaches p % of all samples. fio computes p/100*N in long double, which can land
    just above or below an exact whole number, so both readings of that edge are allowed."""
    total = sum(bins.values())
    exact = Fraction(p) / 100 * total
    out = set()
    for threshold in (exact - Fraction(1, 10**9), exact, exact + Fraction(1, 10**9)):
        running = 0
        for value in sorted(bins):
            running += bins[value]
            if running >= threshold:
                out.add(value)
                break
    assert out, "empty histogram"
    return out


def raw_bins(raw: str, section: str, direction: str, kind: str) -> Counter[int]:
    """The json+ bins of one job in a fio client's own output file."""
    doc = json.loads(raw[raw.index("{") :])
    (job,) = [j for j in doc["client_stats"] if j["jobname"] == section]
    return Counter({int(k): v for k, v in job[direction][kind]["bins"].items()})


def inner_spans(
    results: list[dict[str, Any]], workload: str, direction: str
) -> tuple[list[float], list[float]]:
    """When each client's second logged second of ``workload`` began, and when its
    second-to-last one ended (Unix ms on its server's clock): the window leaves each
    client's first and last seconds out."""
    firsts, lasts = [], []
    for r in results:
        if r["workload"] == workload and r["client"] != "all":
            s = r["samples"]
            firsts.append(s["start_ms"] + (s[direction]["t_s"][1] - 1) * 1000)
            lasts.append(s["start_ms"] + s[direction]["t_s"][-2] * 1000)
    return firsts, lasts


def window_mean(
    results: list[dict[str, Any]],
    workload: str,
    direction: str,
    step: dict[str, Any],
    key: str = "iops",
) -> float:
    """What the aggregate should be, computed here apart from iobench: each client's
    per-second ``key`` over the step's window (each logged second but the client's first
    and last, whichever direction logged them, unless the window says it had to keep them;
    weighted by how much of it lies in the window, by its server's Unix time), summed over
    the clients."""
    lo, hi = step["window"]["start_ms"], step["window"]["end_ms"]
    total = 0.0
    for r in results:
        if r["workload"] != workload or r["client"] == "all":
            continue
        s = r["samples"]
        ends = {
            d: [(s["start_ms"] + t * 1000, v) for t, v in zip(s[d]["t_s"], s[d][key], strict=True)
                if v is not None]
            for d in ("read", "write") if s.get(d)
        }  # fmt: skip
        first = min(e for sec in ends.values() for e, _ in sec) - 1000
        last = max(e for sec in ends.values() for e, _ in sec)
        seconds = [
            (e, v) for e, v in ends[direction]
            if step["window"].get("edges") or (e - 1000 > first and e < last)
        ]  # fmt: skip
        weighted = [(min(e, hi) - max(e - 1000, lo), v) for e, v in seconds]
        weighted = [(w, v) for w, v in weighted if w > 0]
        total += sum(w * v for w, v in weighted) / sum(w for w, _ in weighted)
    return total


@pytest.mark.serial
@pytest.mark.root
def test_three_clients_aggregate_honestly(
    cli: Cli, fio_hosts: FioHosts, shared: Path, tmp_path: Path, isolated_db: Path
) -> None:
    given = names(fio_hosts)
    given[1] += ":8765"  # keyed by the name as given, port or not
    # 5 s: a 1 s job may end before its first per-second sample, which dates its start, and
    # the window leaves out each client's first and last seconds.
    code, doc, err = run_json(
        cli, "run", str(shared), "--suite", suite_file(tmp_path, "5s"), "--clients", ",".join(given)
    )
    assert code == 0, err
    assert doc["status"] == "complete" and doc["clients"]["names"] == given
    results = doc["results"]
    assert {r["client"] for r in results} == {*given, "all"}
    assert all(r["clients"] == 3 for r in results)
    with Store.open(isolated_db) as store:
        stored = store.get_run(doc["run_id"], with_raw=True).results
    for workload, direction in (("rr", "read"), ("rw", "write")):
        mine = [r for r in results if r["workload"] == workload]
        per = {r["client"]: r[direction] for r in mine if r["client"] != "all"}
        (agg,) = [r[direction] for r in mine if r["client"] == "all"]
        assert len(per) == 3 and all(p["iops"] > 0 for p in per.values())
        # IOPS and bandwidth over the seconds in which all three ran, the sums beside them
        step = next(s for s in doc["clients"]["steps"] if s["workload"] == workload)
        assert step["aggregate_over"] == "window", step
        assert agg["iops"] == pytest.approx(window_mean(results, workload, direction, step))
        assert agg["bw_bytes"] == pytest.approx(
            window_mean(results, workload, direction, step, "bw_bytes")
        )
        assert agg["iops_whole_run"] == pytest.approx(sum(p["iops"] for p in per.values()))
        assert agg["bw_bytes_whole_run"] == pytest.approx(sum(p["bw_bytes"] for p in per.values()))
        assert agg["io_bytes"] == sum(p["io_bytes"] for p in per.values())
        for kind in ("lat_ns", "clat_ns"):
            p99s = [p[kind]["p99"] for p in per.values()]
            assert min(p99s) <= agg[kind]["p99"] <= max(p99s)
            # An independent merge of the clients' raw json+ bins, section by section.
            merged: Counter[int] = Counter()
            for r in stored:
                if r.workload == workload and r.client != "all":
                    assert r.raw_output is not None
                    (section,) = set(re.findall(r"^\[(\S+)\]$", r.job_file, re.M)) - {"global"}
                    merged += raw_bins(r.raw_output, section, direction, kind)
            assert sum(merged.values()) == agg[kind]["n"]
            for p in ("p50", "p99", "p99.9"):
                assert agg[kind][p] in fio_percentiles(merged, float(p[1:])), (workload, kind, p)
        # Every client wrote its own file: the job files name different files.
        files = {re.search(r"^filename=(.*)$", r.job_file, re.M).group(1)  # type: ignore[union-attr]
                 for r in stored if r.workload == workload and r.client != "all"}  # fmt: skip
        assert len(files) == 3 and all(f.startswith(f"{shared}/iobench-") for f in files)
    step = next(s for s in doc["clients"]["steps"] if s["workload"] == "rr")
    assert step["finished"] == given and step["failed"] == []
    assert step["start_skew_ms"] is not None and 0 <= step["start_skew_ms"] < 5000
    # The clients started together: the window is their runs but for the first and last
    # seconds.
    window = step["window"]
    assert window["clients"] == 3 and 1.5 <= window["seconds"] <= 3
    firsts, lasts = inner_spans(results, "rr", "read")
    assert window["start_ms"] == max(firsts) and window["end_ms"] == min(lasts)

    code, out, _ = cli("show", str(doc["run_id"]))
    assert code == 0
    assert "all (aggregate)" in out and "start skew" in out
    assert (
        f"aggregate over the {seconds_text(window['seconds'])} s all 3 clients ran together: read"
        in out
    )
    for name in given:
        assert name in out
    # An export keeps what the aggregate is over: imported, it says so again.
    exported, other = tmp_path / "run.json", tmp_path / "other.db"
    assert cli("export", str(doc["run_id"]), "--format", "json", "-o", str(exported))[0] == 0
    assert cli("--db", str(other), "import", str(exported))[0] == 0
    code, again, _ = cli("--db", str(other), "show", "latest")
    assert (
        code == 0
        and f"aggregate over the {seconds_text(window['seconds'])} s all 3 clients" in again
    )


@pytest.mark.root
@needs_chromium
def test_scale_reports_aggregate_per_client_and_efficiency(
    cli: Cli, fio_hosts: FioHosts, shared: Path, tmp_path: Path
) -> None:
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("# the three test hosts\n" + "\n".join(names(fio_hosts)) + "\n")
    suite = tmp_path / "one.toml"
    suite.write_text(MINI_SUITE.split('[[workload]]\nname = "rw"')[0])
    assert 'name = "rr"' in suite.read_text() and 'name = "rw"' not in suite.read_text()
    code, doc, err = run_json(
        cli, "run", str(shared), "--suite", str(suite), "--clients", f"@{hosts}",
        "--scale", "1,2,3",
    )  # fmt: skip
    assert code == 0, err
    (scaling,) = doc["clients"]["scaling"]
    assert scaling["workload"] == "rr" and scaling["direction"] == "read"
    points = scaling["points"]
    assert [p["clients"] for p in points] == [1, 2, 3]
    aggregates = {r["clients"]: r for r in doc["results"] if r["client"] == "all"}
    for p in points:
        k = p["clients"]
        assert p["iops"] == pytest.approx(aggregates[k]["read"]["iops"])
        assert p["per_client_iops"] == pytest.approx(p["iops"] / k)
        assert p["bw_bytes"] == pytest.approx(aggregates[k]["read"]["bw_bytes"])
        assert p["per_client_bw_bytes"] == pytest.approx(p["bw_bytes"] / k)
        assert p["efficiency"] == pytest.approx(p["iops"] / (k * points[0]["iops"]))
        clients = {r["client"] for r in doc["results"] if r["clients"] == k} - {"all"}
        assert clients == set(names(fio_hosts)[:k])  # the first k clients
    assert points[0]["efficiency"] == 1.0

    code, out, _ = cli("show", str(doc["run_id"]))
    assert "scaling: aggregate throughput by number of clients" in out and "efficiency" in out
    html = tmp_path / "r.html"
    code, _, err = cli("report", str(doc["run_id"]), "-o", str(html))
    assert code == 0, err
    page = html.read_text()
    chart = Page(page).json_blocks()["clients-0-0-data"]
    measured, ideal = chart["data"]
    assert measured["x"] == [1, 2, 3] and ideal["name"].endswith("ideal")
    assert measured["y"] == pytest.approx([p["iops"] for p in points])
    assert ideal["y"] == pytest.approx([points[0]["iops"] * k for k in (1, 2, 3)])
    # Every chart drawn, the scaling one included; the report kind's own checks.
    check_report(
        html, tmp_path / "profile", ("#clients table", "#clients .chart", "#overview .chart"),
        "(aggregate of 3 clients)",
    )  # fmt: skip
    md = tmp_path / "r.md"
    assert cli("report", str(doc["run_id"]), "-o", str(md))[0] == 0
    header = "| workload | dir | clients | aggregate IOPS | per client | aggregate bandwidth |"
    assert header in md.read_text()


# -- clients that do not run together ---------------------------------------------------------


def one_workload(tmp_path: Path, runtime: str) -> str:
    """The mini suite's random read alone, at ``runtime``."""
    path = tmp_path / "one.toml"
    path.write_text(
        Path(suite_file(tmp_path, runtime)).read_text().split('[[workload]]\nname = "rw"')[0]
    )
    assert 'name = "rr"' in path.read_text() and 'name = "rw"' not in path.read_text()
    return str(path)


def pause_at_first_workload(
    monkeypatch: pytest.MonkeyPatch, late: FioHost, other: FioHost, shared: Path, seconds: float
) -> None:
    """Stop ``late``'s fio server as the first workload starts, before the controller's fio
    clients connect, and let it go on ``seconds`` after ``other``'s job began its IO in
    ``shared``: fio's client waits for a server that has not started its job (FIO.md
    §2.4), so that client's job starts that much after the others'."""
    original = ProgressDisplay.started
    fired = threading.Event()

    def release() -> None:
        try:
            other.wait_for_io(shared)
            time.sleep(seconds)
        finally:
            late.signal(signal.SIGCONT)

    def started(self: ProgressDisplay, step: Any) -> None:
        original(self, step)
        if step.workload is not None and not fired.is_set():
            fired.set()
            late.signal(signal.SIGSTOP)
            threading.Thread(target=release, daemon=True).start()

    monkeypatch.setattr(ProgressDisplay, "started", started)


@pytest.mark.root
def test_the_last_step_removes_the_test_files_without_a_cleanup_of_its_own(
    cli: Cli, fio_hosts: FioHosts, shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose steps are known before it starts has fio remove each client's test file
    as its last step ends (``unlink=1`` in that step's job file only): no fio client of its
    own for the cleanup, which costs about 1.5 s whatever it does (docs/clients.md)."""
    calls: list[tuple[str, list[str], list[bool]]] = []

    def spy(fio: Any, jobs: Any, workdir: Path, **kw: Any) -> Any:
        calls.append((kw["name"], [j.key for j in jobs], ["unlink=1" in j.job_file for j in jobs]))
        return run_fio_clients(fio, jobs, workdir, **kw)

    monkeypatch.setattr(remote, "run_fio_clients", spy)
    given = names(fio_hosts)
    code, doc, err = run_json(
        cli, "run", str(shared), "--suite", suite_file(tmp_path), "--clients", ",".join(given)
    )
    assert code == 0 and doc["status"] == "complete", err
    assert [(name, keys) for name, keys, _ in calls] == [
        ("layout", given), ("step1", given), ("step2", given)
    ]  # fmt: skip
    assert [unlink for *_, unlink in calls] == [[False] * 3, [False] * 3, [True] * 3]
    assert list(shared.iterdir()) == []
    assert not [w for w in doc["warnings"] if w["id"] == "test-file-left"], doc["warnings"]
    # Both workloads were measured on the files the layout wrote (the last one too).
    assert {(r["workload"], r["client"]) for r in doc["results"]} == {
        (w, c) for w in ("rr", "rw") for c in [*given, "all"]
    }


@pytest.mark.serial
@pytest.mark.root
def test_a_client_that_starts_late_counts_only_while_all_ran(
    cli: Cli, fio_hosts: FioHosts, shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    late = fio_hosts.hosts[2]
    pause_at_first_workload(monkeypatch, late, fio_hosts.hosts[0], shared, 2.0)
    code, doc, err = run_json(
        cli, "run", str(shared), "--suite", one_workload(tmp_path, "7s"),
        "--clients", ",".join(names(fio_hosts)),
    )  # fmt: skip
    assert code == 0, err
    (step,) = doc["clients"]["steps"]
    assert step["start_skew_ms"] >= 1500  # its job really started about 2 s after the others'
    results = doc["results"]
    firsts, lasts = inner_spans(results, "rr", "read")
    window = step["window"]
    assert step["aggregate_over"] == "window" and window["clients"] == 3
    assert window["start_ms"] == max(firsts)  # the late one's second second
    assert window["end_ms"] == min(lasts)  # the first one to end: its second-to-last
    assert 1 <= window["seconds"] <= 4
    (agg,) = [r["read"] for r in results if r["client"] == "all"]
    per = [r["read"]["iops"] for r in results if r["client"] != "all"]
    assert agg["iops_whole_run"] == pytest.approx(sum(per))
    assert agg["iops"] == pytest.approx(window_mean(results, "rr", "read", step))
    # Two clients had the host's two CPUs and its disk to themselves for two seconds, the
    # late one for two more: the sums of their whole runs count those seconds too.
    assert agg["iops"] < agg["iops_whole_run"]
    assert any(w["id"] == "start-skew" for w in doc["warnings"])
    assert not any(w["id"] == "clients-not-together" for w in doc["warnings"])
    code, out, _ = cli("show", str(doc["run_id"]))
    assert code == 0
    assert (
        f"aggregate over the {seconds_text(window['seconds'])} s all 3 clients ran together: read"
        in out
    )
    assert "(whole-run sums: read" in out


@pytest.mark.serial
@pytest.mark.root
def test_clients_that_never_run_together_keep_the_sums_and_are_flagged(
    cli: Cli, fio_hosts: FioHosts, shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    late = fio_hosts.hosts[2]
    # Paused for 3 s after the others began: under the 5 s in which fio's client wants the
    # server's answer to its first command (else "timeout on cmd PROBE").
    pause_at_first_workload(monkeypatch, late, fio_hosts.hosts[0], shared, 3.0)
    code, doc, err = run_json(
        cli, "run", str(shared), "--suite", one_workload(tmp_path, "2s"),
        "--clients", ",".join(names(fio_hosts)),
    )  # fmt: skip
    assert code == 0, err
    (step,) = doc["clients"]["steps"]
    assert step["aggregate_over"] == "whole_run" and step["window"] is None
    assert step["apart"]["overlap_s"] < 0, step["apart"]  # not a moment together
    assert step["apart"]["why"].startswith(f"client {late.name}'s first logged second began ")
    (agg,) = [r["read"] for r in doc["results"] if r["client"] == "all"]
    per = [r["read"]["iops"] for r in doc["results"] if r["client"] != "all"]
    assert agg["iops"] == agg["iops_whole_run"] == pytest.approx(sum(per))
    (warning,) = [w for w in doc["warnings"] if w["id"] == "clients-not-together"]
    assert late.name in warning["message"] and "overstates" in warning["message"]
    assert warning["data"]["overlap_s"] == step["apart"]["overlap_s"]
    code, out, _ = cli("show", str(doc["run_id"]))
    assert "aggregate = the sums of each client's whole run (read " in out
    assert "clients-not-together" in out


# -- faults ------------------------------------------------------------------------------------


def kill_during_first_workload(monkeypatch: pytest.MonkeyPatch, act: Any, after_s: float) -> None:
    """Call ``act`` ``after_s`` seconds into the first workload (the progress display tells
    when a step starts)."""
    original = ProgressDisplay.started
    fired = threading.Event()

    def started(self: ProgressDisplay, step: Any) -> None:
        original(self, step)
        if step.workload is not None and not fired.is_set():
            fired.set()
            threading.Timer(after_s, act).start()

    monkeypatch.setattr(ProgressDisplay, "started", started)


@pytest.mark.root
def test_a_client_killed_mid_run_leaves_a_partial_run_with_the_others(
    cli: Cli,
    fio_hosts: FioHosts,
    shared: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    victim = fio_hosts.hosts[1]
    kill_during_first_workload(monkeypatch, victim.kill, 1.0)
    started = time.monotonic()
    code, doc, err = run_json(
        cli, "run", str(shared), "--suite", suite_file(tmp_path, "3s"),
        "--clients", ",".join(names(fio_hosts)),
    )  # fmt: skip
    elapsed = time.monotonic() - started
    # Its test file could not be removed (its server is gone): said, then removed here.
    left = [w for w in doc["warnings"] if w["id"] == "test-file-left"]
    assert len(left) == 1 and victim.name in left[0]["message"]
    path = re.search(r"test file (\S+) on client", left[0]["message"]).group(1)  # type: ignore[union-attr]
    Path(path).unlink()

    assert code == 1
    assert doc["status"] == "partial"
    assert f"{victim.name} failed in rr" in err and "run 1 is stored as partial" in err
    assert "Traceback" not in err
    assert f"client {victim.name} failed in rr" in doc["error"] or victim.name in doc["error"]
    alive = [h.name for h in fio_hosts.hosts if h is not victim]
    for workload in ("rr", "rw"):
        ok = {
            r["client"] for r in doc["results"] if r["workload"] == workload and r["status"] == "ok"
        }
        assert ok == {*alive, "all"}, workload
    (dead,) = [r for r in doc["results"] if r["status"] == "failed"]
    assert dead["client"] == victim.name and dead["workload"] == "rr"
    for step in doc["clients"]["steps"]:
        assert step["failed"] == [victim.name] and step["finished"] == alive
    (agg,) = [r for r in doc["results"] if r["workload"] == "rr" and r["client"] == "all"]
    per = [r["read"]["iops"] for r in doc["results"]
           if r["workload"] == "rr" and r["client"] in alive]  # fmt: skip
    assert agg["read"]["iops_whole_run"] == pytest.approx(sum(per), rel=1e-9)
    assert any(w["id"] == "client-failed" and victim.name in w["message"] for w in doc["warnings"])
    assert elapsed < 60  # a dead server is noticed at once, not after a timeout


def run_with_a_victim(
    fio_hosts: FioHosts,
    victim: FioHost,
    shared: Path,
    tmp_path: Path,
    db: Path,
    observer: NullObserver,
    **kw: Any,
) -> tuple[Outcome, RunRecord]:
    """The mini suite on every host in ``shared`` through the engine, the observer
    doing harm to ``victim``, which is killed afterwards whatever happened."""
    request = RunRequest(
        targets=(str(shared),),
        suite=load_suite(suite_file(tmp_path)),
        clients=tuple(parse_clients(",".join(names(fio_hosts)))),
    )
    try:
        with Store.open(db) as store:
            outcome = execute(request, store, find_fio(), observer, **kw)
            return outcome, store.get_run(outcome.run_id)
    finally:
        victim.kill()


@pytest.mark.serial
@pytest.mark.root
def test_a_stalled_client_is_cut_off_by_the_hard_timeout(
    fio_hosts: FioHosts,
    shared: Path,
    tmp_path: Path,
    isolated_db: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server that stops answering (SIGSTOP) makes fio's client wait forever in some
    states; the controller's own timeout ends it, and the run goes on without it."""
    victim = fio_hosts.hosts[2]
    monkeypatch.setattr(remote, "CLEANUP_TIMEOUT_S", 3.0)

    def stop_once_running() -> None:
        # Stopped during fio's handshake, the client gives up by itself ("timeout on cmd
        # PROBE"); only a server stopped mid-job leaves it waiting for the hard timeout.
        victim.wait_for_io(shared)
        time.sleep(0.3)
        victim.signal(signal.SIGSTOP)

    class StopAtFirstWorkload(NullObserver):
        def started(self, step: Any) -> None:
            if step.workload is not None and step.workload.name == "rr":
                threading.Thread(target=stop_once_running, daemon=True).start()

    started = time.monotonic()
    outcome, run = run_with_a_victim(
        fio_hosts, victim, shared, tmp_path, isolated_db, StopAtFirstWorkload(), timeout_margin_s=4
    )
    elapsed = time.monotonic() - started
    assert outcome.status == "partial" and outcome.error is not None
    assert victim.name in outcome.error.message and "did not finish within" in outcome.error.message
    assert elapsed < 45  # bounded: runtime x 1.5 + margin per step, plus a short cleanup
    ok = {(r.workload, r.client) for r in run.results if r.status == "ok"}
    alive = [h.name for h in fio_hosts.hosts if h is not victim]
    assert ok == {(w, c) for w in ("rr", "rw") for c in [*alive, "all"]}
    left = [w for w in run.warnings if w["id"] == "test-file-left"]
    assert len(left) == 1 and victim.name in left[0]["message"]
    Path(re.search(r"test file (\S+) on client", left[0]["message"]).group(1)).unlink()  # type: ignore[union-attr]


@pytest.mark.serial
@pytest.mark.root
def test_ctrl_c_while_the_files_are_laid_out_still_cleans_every_client(
    fio_hosts: FioHosts,
    shared: Path,
    tmp_path: Path,
    isolated_db: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """Interrupted in the layout step, the run removes the files of the clients that
    answer, and says that it could not clean the one that does not."""
    victim = fio_hosts.hosts[0]
    # The cleanup's limit, short for the victim's sake but well above what one fio client
    # invocation costs the others (about 1.5 s, up to 2.5 s with fio's server's waits of up
    # to 1 s): at 3 s, a clean-clone run saw all three time out.
    monkeypatch.setattr(remote, "CLEANUP_TIMEOUT_S", 6.0)
    # Ctrl-C as Python takes it, whatever an earlier test in this process left installed
    # (in a full serial run its SIGINT once went unheard, and the layout ran to its limit).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    if previous is not signal.default_int_handler:  # shown if the test fails
        print(f"SIGINT's handler was {previous!r} before this test")

    def interrupt_once_the_others_write() -> None:
        deadline = time.monotonic() + 15
        while len(list(shared.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)

    class InterruptTheLayout(NullObserver):
        def started(self, step: Any) -> None:
            assert step.workload is None, "the layout was not interrupted"
            victim.signal(signal.SIGSTOP)  # its layout cannot finish: the step goes on
            threading.Thread(target=interrupt_once_the_others_write, daemon=True).start()

    outcome, run = run_with_a_victim(
        fio_hosts, victim, shared, tmp_path, isolated_db, InterruptTheLayout()
    )
    assert outcome.status == "aborted" and run.results == []
    left = [w for w in run.warnings if w["id"] == "test-file-left"]
    assert len(left) == 1 and victim.name in left[0]["message"], run.warnings
    assert list(shared.iterdir()) == []  # the others' files are gone; the victim wrote none


@pytest.mark.root
def test_a_server_left_running_by_a_killed_controller_does_not_confuse_the_next_run(
    cli: Cli, fio_hosts: FioHosts, shared: Path, tmp_path: Path, isolated_db: Path
) -> None:
    """The controller dies (SIGKILL, with its fio clients) mid-run: the servers go on with
    the old jobs until their runtime ends. The next run starts at once beside them, uses
    its own test files and reads only its own jobs' results; the dead run is marked aborted
    and names the test files it left."""
    controller_tmp = tmp_path / "controller-tmp"
    controller_tmp.mkdir()
    given = ",".join(names(fio_hosts))
    env = {**os.environ, "TMPDIR": str(controller_tmp), "IOBENCH_DB": str(isolated_db)}
    said = tmp_path / "first.stderr"
    with said.open("wb") as stderr:
        first = subprocess.Popen(
            [sys.executable, "-m", "iobench", "run", str(shared), "--suite",
             suite_file(tmp_path, "4s"), "--clients", given],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(list(shared.glob("iobench-*.dat"))) < 3 or not _fio_clients(controller_tmp):
            assert time.monotonic() < deadline and first.poll() is None, (
                f"the run did not start: {said.read_text()}"
            )
            time.sleep(0.1)
        time.sleep(1.0)
    finally:
        _kill_controller(first, controller_tmp)
    old_files = sorted(p.name for p in shared.glob("iobench-*.dat"))
    assert len(old_files) == 3

    code, doc, err = run_json(
        cli, "run", str(shared), "--suite", suite_file(tmp_path), "--clients", given
    )
    assert code == 0, err
    assert doc["status"] == "complete"
    assert {r["client"] for r in doc["results"]} == {*names(fio_hosts), "all"}
    assert all(r["status"] == "ok" for r in doc["results"])
    # Only the old run's files remain: this run removed its own, and never touched those.
    assert sorted(p.name for p in shared.glob("iobench-*.dat")) == old_files

    code, out, _ = cli("list", "--json")
    runs = {r["run_id"]: r for r in json.loads(out)["runs"]}
    dead_id = min(runs)
    code, out, _ = cli("show", str(dead_id), "--json")
    dead = json.loads(out)
    assert dead["status"] == "aborted"
    for name in old_files:
        assert name in dead["error"]
        (shared / name).unlink()


def _fio_clients(tmpdir: Path) -> list[int]:
    """The fio client processes started from ``tmpdir``: they work in a private directory
    there (iobench.fio.confine), or are still its launcher, which names it."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
                cwd = str((proc / "cwd").readlink())
            except OSError:
                continue
            if "--client=" in cmdline and str(tmpdir) in cwd + cmdline:
                pids.append(int(proc.name))
    return pids


def _kill_controller(proc: subprocess.Popen[bytes], tmpdir: Path) -> None:
    """SIGKILL the controller and its fio clients (as when its machine dies)."""
    with_pids = [proc.pid, *_fio_clients(tmpdir)]
    for pid in with_pids:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while _fio_clients(tmpdir) and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"targets": ("/mnt/a", "/mnt/b")}, "with --clients give exactly one TARGET"),
        ({"destructive": True}, "--destructive does not go with --clients"),
        ({"prefill": True}, "--prefill does not go with --clients"),
        ({"spec": "aws-gp3"}, "--spec does not go with --clients"),
    ],
)
def test_the_engine_refuses_a_clients_request_the_cli_never_makes(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    """The rule `run` applies before it parses the clients is the engine's own: a caller
    that builds the request itself gets the same refusal, before any client is contacted
    (port 9 answers nothing)."""
    request = RunRequest(
        targets=(str(tmp_path),),
        suite=load_suite(suite_file(tmp_path)),
        clients=(Client("127.0.0.1:9", "127.0.0.1", 9),),
    )
    with pytest.raises(UserError, match=re.escape(message)):
        check(dataclasses.replace(request, **change), find_fio())
