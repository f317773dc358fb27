"""Per-second samples from fio's interval logs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from conftest import held_open
from iobench.fio.jobfile import build_jobfile
from iobench.fio.logs import interval_of, parse_interval_logs, sample_options
from iobench.fio.runner import find_fio, run_fio
from iobench.model import Workload
from iobench.targets import Reach


def test_jobs_are_summed_and_latency_weighted_by_iops() -> None:
    logs = {
        "iobench_iops.1.log": "1000, 100, 0, 0, 0\n1000, 10, 1, 0, 0\n2000, 300, 0, 0, 0\n",
        "iobench_iops.2.log": "1000, 300, 0, 0, 0\n1000, 10, 1, 0, 0\n2000, 100, 0, 0, 0\n",
        "iobench_bw.1.log": "1000, 400, 0, 0, 0\n2000, 1200, 0, 0, 0\n",
        "iobench_bw.2.log": "1000, 1200, 0, 0, 0\n1999, 400, 0, 0, 0\n",
        "iobench_lat.1.log": "1000, 1000, 0, 0, 0\n2000, 2000, 0, 0, 0\n",
        "iobench_lat.2.log": "1000, 3000, 0, 0, 0\n2000, 4000, 0, 0, 0\n",
        "iobench_clat.1.log": "1000, 5, 0, 0, 0\n",  # not used
    }
    s = parse_interval_logs(logs)
    assert s is not None
    assert s["interval_ms"] == 1000
    assert s["read"]["t_s"] == [1, 2]
    assert s["read"]["iops"] == [400, 400]
    assert s["read"]["bw_bytes"] == [1600 * 1024, 1600 * 1024], "KiB/s to bytes/s, 1999 ms is 2 s"
    # job 1 weighs 100 and 300 IOPS; job 2 300 and 100
    assert s["read"]["lat_mean_ns"] == [pytest.approx(2500), pytest.approx(2500)]
    assert s["write"]["iops"] == [20]
    assert s["write"]["bw_bytes"] == [None], "no job logged write bandwidth: missing, not 0"


def test_a_second_some_job_did_not_log_has_no_total() -> None:
    logs = {
        "iobench_iops.1.log": "1000, 100, 0, 0, 0\n2000, 100, 0, 0, 0\n",
        "iobench_iops.2.log": "1000, 100, 0, 0, 0\n",
        "iobench_bw.1.log": "1000, 400, 0, 0, 0\n2000, 400, 0, 0, 0\n",
        "iobench_bw.2.log": "1000, 400, 0, 0, 0\n",
        "iobench_lat.1.log": "1000, 1000, 0, 0, 0\n2000, 1000, 0, 0, 0\n",
        "iobench_lat.2.log": "1000, 3000, 0, 0, 0\n2000, 9000, 0, 0, 0\n",
    }
    s = parse_interval_logs(logs)
    assert s is not None
    assert s["read"]["iops"] == [200, None]
    assert s["read"]["bw_bytes"] == [800 * 1024, None]
    # job 2 has a latency but no IOPS sample in second 2: no weight, so no mean either
    assert s["read"]["lat_mean_ns"] == [pytest.approx(2000), None]
    assert "trim" not in s


def test_client_mode_logs_carry_unix_times_and_the_server_name() -> None:
    """fio's client writes a server's logs as NAME.<host>, with log_unix_epoch=1 times."""
    t0 = 1_795_360_044_718
    logs = {
        "iobench_iops.1.log.10.0.0.2": f"{t0 + 1000}, 100, 0, 0, 0\n{t0 + 2001}, 120, 0, 0, 0\n",
        "iobench_bw.1.log.10.0.0.2": f"{t0 + 1000}, 400, 0, 0, 0\n{t0 + 2001}, 480, 0, 0, 0\n",
        "iobench_lat.1.log.10.0.0.2": f"{t0 + 1000}, 900, 0, 0, 0\n{t0 + 2001}, 800, 0, 0, 0\n",
    }
    s = parse_interval_logs(logs, epoch=True)
    assert s is not None
    assert s["start_ms"] == t0  # the first sample closes the first second after the start
    assert s["read"]["t_s"] == [1, 2]
    assert s["read"]["iops"] == [100, 120]
    assert s["read"]["bw_bytes"] == [400 * 1024, 480 * 1024]
    assert parse_interval_logs(logs)["read"]["t_s"] != [1, 2]  # type: ignore[index]
    assert parse_interval_logs({"iobench_iops.1.log.h": ""}, epoch=True) is None


def test_a_short_last_sample_in_the_same_second_does_not_replace_the_full_one() -> None:
    logs = {"iobench_iops.1.log": "1000, 500, 0, 0, 0\n2000, 520, 0, 0, 0\n2004, 3, 0, 0, 0\n"}
    s = parse_interval_logs(logs)
    assert s is not None
    assert s["read"]["iops"] == [500, 520]


def test_no_logs_no_samples() -> None:
    assert parse_interval_logs({}) is None
    assert parse_interval_logs({"other.log": "1000, 1, 0, 0, 0\n"}) is None
    assert parse_interval_logs({"iobench_iops.1.log": "garbage\n"}) is None


def _windows_add_up(series: dict[str, Any], total_ios: int, window_s: float) -> None:
    """The IOs of a direction's complete windows (each sample's IOPS over its window) are
    at most fio's own count of the run's IOs and at least a tenth of them (fio's last
    window may race the end, and a busy host spreads the IOs unevenly, so the windows'
    mean rate need not be fio's: their sum is bounded whatever the spread); and every
    window's bandwidth is its IOPS times the 4 KiB block (a unit read wrongly is off by
    a factor of 8, 1,000 or 1,024)."""
    windows = [v for v in series["iops"] if v is not None]
    in_windows = sum(windows) * window_s
    assert total_ios / 10 <= in_windows <= total_ios * 1.05 + 2, (in_windows, total_ios)
    for iops, bw in zip(series["iops"], series["bw_bytes"], strict=True):
        assert (iops is None) == (bw is None)
        if iops is not None:
            assert bw == pytest.approx(iops * 4096, rel=0.1, abs=4096 / window_s), (iops, bw)


@pytest.mark.fio
def test_real_fio_samples_add_up_to_its_own_totals(real_fio: str, tmp_path: Path) -> None:
    target = tmp_path / "t.dat"
    target.write_bytes(os.urandom(8 << 20))
    w = Workload("mix", "randrw", 4096, 4, 2, runtime_s=3.0, ramp_s=1.0)
    run = run_fio(find_fio(), build_jobfile(w, Reach.file(str(target)), 8 << 20), tmp_path,
                  timeout_s=60,
                  held=held_open(target))  # fmt: skip
    s = parse_interval_logs(run.logs)
    assert s is not None and run.output is not None
    job = run.output.jobs[0]
    assert job.read is not None and job.write is not None
    for direction, fio_total in (("read", job.read), ("write", job.write)):
        series = s[direction]
        assert 2 <= len(series["t_s"]) <= 4, "about one sample per second of the 3 s runtime"
        # fio logs only full windows, and one job's last window often races with the end of
        # the run: that second has no total (None), never a partial sum.
        complete = [v for v in series["iops"] if v is not None]
        assert len(complete) >= 2
        _windows_add_up(series, fio_total.total_ios, 1.0)
        # Latency and bandwidth are missing in exactly the seconds the IOPS are.
        for key in ("lat_mean_ns", "bw_bytes"):
            assert [v is None for v in series[key]] == [v is None for v in series["iops"]]
            assert all(v is None or v > 0 for v in series[key])
    assert not list(tmp_path.glob("iobench_*.log")), "log files are removed after reading"


def test_samples_every_tenth_of_a_second_are_placed_and_add_up(
    real_fio: str, tmp_path: Path
) -> None:
    """A workload with its own sample interval (characterize's short points: fio's
    log_avg_msec=100 in its section) gets ten samples a second on the 0.1 s grid, whose IOs
    add up to fio's own count; and the interval is stored with them."""
    target = tmp_path / "t.dat"
    target.write_bytes(os.urandom(8 << 20))
    w = Workload("r", "randread", 4096, 4, 1, runtime_s=1.5, ramp_s=0.2,
                 options=sample_options(100))  # fmt: skip
    assert interval_of(w) == 100 and interval_of(Workload("x", "read", 4096, 1, 1)) == 1000
    run = run_fio(find_fio(), build_jobfile(w, Reach.file(str(target)), 8 << 20), tmp_path,
                  timeout_s=60, held=held_open(target))  # fmt: skip
    s = parse_interval_logs(run.logs, interval_of(w))
    assert s is not None and run.output is not None and run.output.jobs[0].read is not None
    assert s["interval_ms"] == 100
    t_s = s["read"]["t_s"]
    assert 12 <= len(t_s) <= 15, t_s
    # One slot each, on the 0.1 s grid, in order (fio may close its first window after the
    # ramp late). A busy host can hold fio past a window's end, and fio then logs one window
    # of 0.2 s: its slot is missing, never shared (seen once with six test workers: no
    # sample at 1.0 s). At most two of the slots between the first and the last are.
    slots = [round(t * 10, 6) for t in t_s]
    assert all(x == int(x) for x in slots) and slots == sorted(set(slots)), t_s
    assert slots[-1] - slots[0] + 1 - len(slots) <= 2 and t_s[0] <= 0.3, t_s
    _windows_add_up(s["read"], run.output.jobs[0].read.total_ios, 0.1)


def test_samples_a_fixed_time_off_their_multiples_each_keep_a_slot() -> None:
    """fio closed the first 0.1 s window after a ramp at 250 ms and every later one 50 ms
    past a multiple, give or take a millisecond (a real log): rounding each time alone put
    350 and 450 into one slot and lost a sample. Each keeps its own, in order."""
    times = [250, 350, 450, 551, 651, 751, 851, 951]
    logs = {
        "iobench_iops.1.log": "".join(f"{t}, {2000 + i}, 0, 4096, 0\n" for i, t in enumerate(times))
    }
    s = parse_interval_logs(logs, 100)
    assert s is not None
    assert s["read"]["iops"] == [2000 + i for i in range(8)]
    assert s["read"]["t_s"] == [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
