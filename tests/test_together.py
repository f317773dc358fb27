"""The clients' aggregate over the seconds in which every client ran, and the device's own
count of those seconds (issue 26, point 4; analysis/together.py). Pure: each client's
samples are made the way a run makes them, from fio-shaped interval logs with Unix times
(fio/logs.py), one sample a second, a few milliseconds late as fio's are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from iobench.analysis.clients import ClientShare
from iobench.analysis.together import (
    Apart,
    Window,
    common_window,
    device_check,
    device_margin,
    over_window,
    together_findings,
)
from iobench.fio.logs import parse_interval_logs
from iobench.probe.diskstats import DiskStat, Snapshot
from iobench.probe.diskwatch import counted
from iobench.records import PartResult, ResultRecord
from iobench.report.clients import result_notes
from iobench.units import format_iops

T0 = 1_795_360_044_000  # a server's Unix time in ms
BS = 4096
_DDIR = {"read": 0, "write": 1}


def client(name: str, start_ms: int, **per_second: Sequence[float | None]) -> ClientShare:
    """A client whose job started at ``start_ms`` and did ``per_second`` IOPS in each
    direction, second after second (None: a second fio did not log); its whole-run figures
    are what those seconds make."""
    logs: dict[str, list[str]] = {"iops": [], "bw": [], "lat": []}
    metrics: dict[str, Any] = {}
    for direction, values in per_second.items():
        for k, v in enumerate(values, 1):
            if v is None:
                continue
            t = start_ms + 1000 * k + k % 3  # fio's samples come a few ms after the second
            ddir = _DDIR[direction]
            logs["iops"].append(f"{t}, {v:g}, {ddir}, {BS}, 0")
            logs["bw"].append(f"{t}, {v * BS / 1024:g}, {ddir}, {BS}, 0")
            logs["lat"].append(f"{t}, 250000, {ddir}, {BS}, 0")
        done = [v for v in values if v is not None]
        iops = sum(done) / len(values)
        metrics[direction] = {"iops": iops, "bw_bytes": iops * BS, "runtime_ms": 1000 * len(values)}
    samples = parse_interval_logs(
        {f"iobench_{kind}.1.log.{name}": "\n".join(lines) + "\n" for kind, lines in logs.items()},
        epoch=True,
    )
    return ClientShare(name, metrics, samples)


def summed(shares: Sequence[ClientShare]) -> dict[str, Any]:
    """The aggregate as it is before the window: the clients' whole-run figures summed."""
    out: dict[str, Any] = {}
    for s in shares:
        for d, section in s.metrics.items():
            mine = out.setdefault(d, {"iops": 0.0, "bw_bytes": 0.0, "lat_ns": {"p99": 1e6}})
            mine["iops"] += section["iops"]
            mine["bw_bytes"] += section["bw_bytes"]
    return out


def aggregate(
    shares: Sequence[ClientShare], **extra: Any
) -> tuple[dict[str, Any], dict[str, Any], ResultRecord]:
    """The aggregate's metrics over the window, the summary, and its stored record."""
    metrics, summary = over_window(summed(shares), shares)
    metrics["clients"] = {"count": len(shares), "stragglers": [], **summary, **extra}
    record = ResultRecord(
        target="/mnt/shared", workload="rr", position=0, status="ok",
        params={"rw": "randread", "bs": BS, "runtime_s": 6.0}, metrics=metrics, job_file="",
        fio_argv=[], fio_rc=0, fio_version="3.33", raw_output=None, fio_stdout=None,
        fio_stderr=None, error=None, started_at="2026-11-28T06:00:00Z",
        finished_at="2026-11-28T06:00:08Z", client="all", clients=len(shares),
    )  # fmt: skip
    return metrics, summary, record


def notes(record: ResultRecord) -> list[str]:
    return [text for _, text in result_notes(record)]


# -- the window ----------------------------------------------------------------------------------


def test_clients_that_ran_the_same_seconds_keep_the_sums_of_their_runs() -> None:
    # Three clients starting within 80 ms of each other (the servers' clocks), 6 s each.
    shares = [
        client("a", T0, read=[1000] * 6),
        client("b", T0 + 40, read=[2000] * 6),
        client("c", T0 + 80, read=[3000] * 6),
    ]
    metrics, summary, record = aggregate(shares)
    # From the start of c's second second (it started last) to the end of a's fifth (it
    # ended first): each client's first and last seconds are left out.
    assert summary == {
        "aggregate_over": "window",
        "window": {
            "start_ms": T0 + 1081,
            "end_ms": T0 + 5001,
            "seconds": 3.92,
            "clients": 3,
            "edges": False,
        },
    }
    assert metrics["read"]["iops"] == pytest.approx(6000)
    assert metrics["read"]["iops_whole_run"] == pytest.approx(6000)
    assert metrics["read"]["bw_bytes"] == pytest.approx(6000 * BS)
    assert metrics["read"]["lat_ns"] == {"p99": 1e6}  # latency: the bins' merge, untouched
    assert notes(record) == [
        "aggregate over the 3.9 s all 3 clients ran together: read 6.00k IOPS, 23.4 MiB/s "
        "(whole-run sums: read 6.00k IOPS, 23.4 MiB/s)"
    ]
    assert together_findings([record]) == []


def test_a_late_starter_is_counted_only_while_all_ran() -> None:
    # Storage that does 3000 IOPS in all, shared by whoever runs: a and b alone for 2 s
    # (1500 each), all three for 6 s (1000 each), then c alone for 2 s (3000).
    ab = [1500, 1500] + [1000] * 6
    shares = [
        client("a", T0, read=ab),
        client("b", T0, read=ab),
        client("c", T0 + 2000, read=[1000] * 6 + [3000, 3000]),
    ]
    metrics, summary, record = aggregate(shares)
    # Summed over each client's own run they "did" 3750 IOPS together: more than the
    # storage can do. Over the seconds all three ran: the 3000 it did.
    assert metrics["read"]["iops_whole_run"] == pytest.approx(3750)
    assert metrics["read"]["iops"] == pytest.approx(3000)
    assert metrics["read"]["bw_bytes"] == pytest.approx(3000 * BS)
    assert metrics["read"]["bw_bytes_whole_run"] == pytest.approx(3750 * BS)
    assert summary["window"] == {
        "start_ms": T0 + 3001, "end_ms": T0 + 7001, "seconds": 4.0, "clients": 3, "edges": False,
    }  # fmt: skip
    assert notes(record)[0] == (
        "aggregate over the 4 s all 3 clients ran together: read 3.00k IOPS, 11.7 MiB/s "
        "(whole-run sums: read 3.75k IOPS, 14.6 MiB/s)"
    )


def test_an_early_finisher_ends_the_window() -> None:
    shares = [
        client("a", T0, read=[1000] * 4 + [2000] * 4),
        client("b", T0, read=[1000] * 4),
    ]
    metrics, summary, _ = aggregate(shares)
    assert summary["window"]["seconds"] == 2.0  # b's second and third seconds
    assert summary["window"]["end_ms"] == T0 + 1 + 3000
    assert metrics["read"]["iops"] == pytest.approx(2000)
    assert metrics["read"]["iops_whole_run"] == pytest.approx(2500)


def test_the_clients_first_and_last_seconds_are_left_out() -> None:
    """Recorded: three namespace clients on a loop device throttled to 2000 read IOPS,
    whose own counters showed 1993 every second. Their starts were 113 ms apart: in its
    first second the one that started first had the device to itself for a while, in its
    last one the one that ended last did."""
    shares = [
        client("c1", T0 + 113, read=[640, 620, 574, 672, 657, 911]),
        client("c2", T0 + 101, read=[747, 719, 652, 590, 669, 690]),
        client("c3", T0, read=[833, 638, 738, 770, 678, 584]),
    ]
    metrics, summary, _ = aggregate(shares)
    assert metrics["read"]["iops"] == pytest.approx(1993, rel=0.01)
    assert metrics["read"]["iops_whole_run"] == pytest.approx(2063.7, rel=0.001)
    assert summary["window"]["seconds"] == pytest.approx(3.887)


def test_clients_that_never_ran_together_keep_the_sums_marked_and_flagged() -> None:
    shares = [client("a", T0, read=[1000] * 3), client("b", T0 + 5000, read=[1000] * 3)]
    metrics, summary, record = aggregate(shares)
    assert summary == {
        "aggregate_over": "whole_run",
        "window": None,
        "apart": {"why": "client b's first logged second began 2 s after client a's last one "
                         "ended (by their clocks)",
                  "overlap_s": -2.0},
    }  # fmt: skip
    assert metrics["read"]["iops"] == metrics["read"]["iops_whole_run"] == pytest.approx(2000)
    (finding,) = together_findings([record])
    assert finding.id == "clients-not-together" and finding.severity == "warning"
    assert finding.data == {"overlap_s": -2.0}
    assert "client b's first logged second began 2 s after client a's last one" in finding.message
    assert "overstates" in finding.message
    assert notes(record)[0] == (
        "aggregate = the sums of each client's whole run (read 2.00k IOPS, 7.81 MiB/s), not "
        "over seconds in which all ran together: client b's first logged second began 2 s after "
        "client a's last one ended (by their clocks)"
    )


def test_a_start_as_the_other_ends_is_no_window_either() -> None:
    found = common_window(
        [client("a", T0, read=[1000] * 3), client("b", T0 + 3000, read=[1000] * 3)], ["read"]
    )
    assert found == Apart(
        "client b's first logged second began as client a's last one ended (by their clocks)", 0.0
    )


def test_under_a_second_together_is_no_window() -> None:
    found = common_window(
        [client("a", T0, read=[100] * 3), client("b", T0 + 2500, read=[100] * 3)], ["read"]
    )
    why = "client b's first logged second began 0.5 s before client a's last one ended"
    assert found == Apart(f"{why} (by their clocks)", 0.5)


@pytest.mark.parametrize("b_starts", [0, 2000])
def test_runs_too_short_to_leave_out_their_edges_keep_them_and_say_so(b_starts: int) -> None:
    """b logs 2 s (nothing left without its first and last), or both log 4 s but overlap
    for 2 (no whole second inside both runs without them): the window is the time they
    all ran, edges included, and the device may be exceeded by up to 25 % before it is
    flagged (edge seconds alone came out 10 % high on 1 s windows)."""
    b = [300] * (2 if b_starts == 0 else 4)
    shares = [client("a", T0, read=[100] * 4), client("b", T0 + b_starts, read=b)]
    metrics, summary, record = aggregate(shares)
    assert summary["aggregate_over"] == "window" and summary["window"]["edges"] is True
    assert summary["window"]["seconds"] == pytest.approx(2.0, abs=0.001)
    assert metrics["read"]["iops"] == pytest.approx(400)
    assert notes(record)[0].startswith(
        "aggregate over the 2 s all 2 clients ran together, their first and last seconds in "
        "it (runs too short to leave them out): read 400 IOPS"
    )
    assert together_findings([record]) == []
    for device_iops, flagged in ((400 / 1.25, False), (400 / 1.26, True)):
        start, end = summary["window"]["start_ms"], summary["window"]["end_ms"]
        check = device_check(
            ["loop7"], summary, watched(start - 300, end + 300, device_iops), ["read"]
        )
        assert check["tolerance"] == 0.25
        _, _, checked = aggregate(shares, device_check=check)
        found = [f.id for f in together_findings([checked])]
        assert found == (["aggregate-exceeds-device"] if flagged else []), device_iops


def test_a_client_without_samples_leaves_the_sums_said_as_such() -> None:
    quiet = ClientShare("b", {"read": {"iops": 900.0, "bw_bytes": 900.0 * BS}}, None)
    metrics, summary, record = aggregate([client("a", T0, read=[1000] * 3), quiet])
    assert summary["aggregate_over"] == "whole_run"
    assert summary["apart"] == {"why": "client b logged no per-second sample", "overlap_s": None}
    assert metrics["read"]["iops"] == pytest.approx(1900)
    (finding,) = together_findings([record])
    assert finding.id == "clients-window-unknown" and finding.severity == "info"


def test_a_second_one_client_did_not_log_is_left_out_of_its_mean() -> None:
    shares = [
        client("a", T0, read=[1000, 1000, None, 1000, 1000, 1000]),
        client("b", T0, read=[500, 500, 9999, 500, 500, 500]),
    ]
    found = common_window(shares, ["read"])
    assert isinstance(found, Window)
    assert found.seconds == 4.0  # the window spans the time all ran ...
    b = (500 + 9999 + 500 + 500) / 4  # ... b's mean of its four seconds there, a's of three
    assert found.figures["read"] == pytest.approx((1000 + b, (1000 + b) * BS))


def test_each_direction_of_a_mixed_workload_over_one_window() -> None:
    shares = [
        client("a", T0 + 1000, read=[800, 700, 700, 700, 900], write=[200, 300, 300, 300, 100]),
        client("b", T0, read=[800] + [700] * 4 + [900], write=[200] + [300] * 4 + [100]),
    ]
    metrics, summary, _ = aggregate(shares)
    assert summary["window"]["seconds"] == 3.0  # seconds 3 to 5 of b's run
    assert metrics["read"]["iops"] == pytest.approx(1400)
    assert metrics["write"]["iops"] == pytest.approx(600)


def test_a_client_silent_in_a_direction_through_the_window_leaves_no_window() -> None:
    found = common_window(
        [
            client("a", T0 + 1000, read=[100] * 4, write=[10] * 4),
            client("b", T0, read=[100] * 5, write=[10, 10, None, None, 10]),
        ],
        ["read", "write"],
    )
    assert found == Apart("client b logged no write sample in the 2 s they all ran", 2.0)


@pytest.mark.parametrize("offset_ms", [0, 400, 600, 3900])
def test_the_window_is_placed_to_the_millisecond(offset_ms: int) -> None:
    """A client whose job started ``offset_ms`` after another's: the window is the time
    both ran, however their seconds fall, and steady figures stay what they were."""
    found = common_window(
        [client("a", T0, read=[100] * 8), client("b", T0 + offset_ms, read=[300] * 8)], ["read"]
    )
    assert isinstance(found, Window)
    assert found.seconds == pytest.approx(6 - offset_ms / 1000)
    assert found.figures["read"] == pytest.approx((400, 400 * BS))


def test_a_part_of_a_group_whose_clients_never_ran_together_is_said_and_flagged() -> None:
    """A group's parts follow the rule part by part (engine/parts.py clients_parts, run for
    real in tests/test_groups_fio.py); the step's notes and findings name the part."""
    metrics, summary = over_window(
        {"read": {"iops": 10.0, "bw_bytes": 10.0 * BS}},
        [client("a", T0, read=[5] * 2), client("b", T0 + 9000, read=[5] * 2)],
    )
    part = {"part": "reader", **summary}
    _, _, record = aggregate([client("a", T0, read=[5] * 6), client("b", T0, read=[5] * 6)])
    record.metrics["clients"]["parts"] = [part]  # type: ignore[index]
    record = ResultRecord(**{**record.__dict__, "parts": (PartResult("reader", {}, metrics),)})
    (finding,) = together_findings([record])
    assert finding.id == "clients-not-together" and "part reader" in finding.message
    assert notes(record)[1].startswith("part reader: aggregate = the sums of each client's")


# -- the device's own count -------------------------------------------------------------------


def watched(
    start_ms: float, end_ms: float, iops: float, every_ms: float = 200
) -> list[tuple[float, float, float, float, float]]:
    """A device's counters read every ``every_ms`` while it completed ``iops`` reads of
    BS bytes a second."""
    out = []
    t = start_ms
    while t <= end_ms:
        ios = iops * (t - start_ms) / 1000
        out.append((t, ios, ios * BS, 0.0, 0.0))
        t += every_ms
    return out


def test_the_device_is_read_over_the_same_seconds() -> None:
    shares = [client("a", T0, read=[1500] * 4), client("b", T0 + 30, read=[1500] * 4)]
    metrics, summary, _ = aggregate(shares)
    # The watch began 0.3 s before the clients and ended 0.5 s after; a constant 3000 IOPS.
    check = device_check(["loop7"], summary, watched(T0 - 300, T0 + 4500, 3000), ["read"])
    assert check["devices"] == ["loop7"] and check["seconds"] == summary["window"]["seconds"]
    assert check["read"]["iops"] == pytest.approx(3000)
    assert check["read"]["bw_bytes"] == pytest.approx(3000 * BS)
    assert device_margin(metrics, check) == pytest.approx(0.0)


def test_merges_are_counted_back_in() -> None:
    """Two 4 KiB reads the block layer merged into one are two IOs the clients asked for."""
    stat = DiskStat(900, 100, 8000, 40, 10, 400, 0, 0)
    assert counted(Snapshot(0.0, {"loop7": stat}, {"loop7": "target"})) == (
        1000, 8000 * 512, 50, 400 * 512,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("device_iops", "flagged"), [(3000, False), (3000 / 1.1, False), (3000 / 1.11, True), (0, True)]
)
def test_an_aggregate_above_the_device_by_more_than_a_tenth_is_flagged(
    device_iops: float, flagged: bool
) -> None:
    shares = [client("a", T0, read=[1500] * 4), client("b", T0, read=[1500] * 4)]
    _, summary, _ = aggregate(shares)
    check = device_check(["loop7"], summary, watched(T0 - 300, T0 + 4500, device_iops), ["read"])
    _, _, record = aggregate(shares, device_check=check)
    found = together_findings([record])
    assert [f.id for f in found] == (["aggregate-exceeds-device"] if flagged else [])
    if flagged:
        assert "loop7" in found[0].message and "page cache" in found[0].message
        above = "(the device: none)" if not device_iops else "(+11%)"
        assert f"read: 3.00k IOPS, 11.7 MiB/s against {format_iops(device_iops)} IOPS" in (
            found[0].message
        )
        assert above in found[0].message
    note = notes(record)[1]
    assert note.startswith("device check, this host's loop7 over the same 2 s: read ")
    assert note.endswith("more than the 10% allowed") == flagged


@pytest.mark.parametrize(
    ("summary", "readings", "why"),
    [
        ({"window": None}, watched(T0, T0 + 5000, 100), "never all ran at once"),
        (
            {"window": {"start_ms": T0 + 1, "end_ms": T0 + 4001, "seconds": 4.0, "clients": 2}},
            watched(T0 + 6000, T0 + 11000, 100),  # this host's clock 6 s ahead of theirs
            "their clocks disagree with this host's",
        ),
    ],
)
def test_no_device_check_without_a_window_on_this_hosts_clock(
    summary: Mapping[str, Any], readings: list[Any], why: str
) -> None:
    check = device_check(["loop7"], summary, readings, ["read"])
    assert check["devices"] == ["loop7"] and why in check["why_not"] and "read" not in check
