"""Steady-state rounds (``run --steady-state pts``) on real fio, on storage whose behaviour
round by round is known: a capped loop device whose cap a watcher changes when a round's
result is stored (lowered round by round, then held; or alternating), and tmpfs.

These tests measure throughput and assert with tolerances that hold on a busy 2-CPU
machine (the caps' steps are far larger than the noise). They run alone (serial): a watcher
changes the cap when a round's result is stored, and on a busy machine its change fell in
the next round.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from scratch import Cgroup, MiB, Scratch, capped_volume, iobench_in

pytestmark = [pytest.mark.fio]

ONE_READ = """\
name = "one-read"
description = "4k random reads at QD4, a second each"
[defaults]
runtime = "{runtime}"
ramp = "500ms"
size = "32M"
ioengine = "libaio"
direct = true
numjobs = 1
[[workload]]
name = "rand-r"
rw = "randread"
bs = "4k"
iodepth = 4
"""


def one_read(tmp_path: Path, runtime: str = "1s") -> str:
    path = tmp_path / "one-read.toml"
    path.write_text(ONE_READ.format(runtime=runtime))
    return str(path)


def stored_rounds(db: Path) -> int:
    """How many results the run in ``db`` has stored so far (0 before it exists)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT count(*) FROM results").fetchone()[0])
    except sqlite3.Error:  # not created yet
        return 0


@contextmanager
def caps_by_round(group: Cgroup, db: Path, caps: Sequence[int]) -> Iterator[list[int]]:
    """While the block runs: the read IOPS cap of round r+1 set as soon as round r's
    result is stored (the next round's ramp absorbs the moment it takes), the last one
    held. Yields the rounds seen."""
    group.set(read_iops=caps[0])
    seen: list[int] = []
    stop = threading.Event()

    def watch() -> None:
        done = 0
        while not stop.is_set():
            now = stored_rounds(db)
            if now != done:
                done = now
                seen.append(done)
                group.set(read_iops=caps[min(done, len(caps) - 1)])
            time.sleep(0.01)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join()


def convergence(doc: dict[str, Any]) -> dict[str, Any]:
    (one,) = [c for c in doc["steady_state"]["workloads"] if c.get("client") in (None, "all")]
    assert isinstance(one, dict)
    return one


def series(doc: dict[str, Any]) -> list[float]:
    return [v for _, v in convergence(doc)["series"]]


@pytest.mark.root
def test_a_cap_lowered_round_by_round_then_held_is_steady_at_the_known_round(
    scratch: Scratch, tmp_path: Path, real_fio: str
) -> None:
    """Caps 4000, 2800, 2000, 1500, then 1000 IOPS held from round 5: the windows ending at
    rounds 5-8 hold a step of 33 % or more (rule: range within 20 %), the one ending at 9
    is flat: steady state is declared at round 9, its result the window's ~1000 IOPS."""
    dev, group = capped_volume(scratch, 32 * MiB, 4000, 0)
    db = tmp_path / "r.db"
    with caps_by_round(group, db, [4000, 2800, 2000, 1500, 1000]):
        code, out, err = iobench_in(
            group, db, "run", dev, "--suite", one_read(tmp_path), "--steady-state", "pts", "--json"
        )
    assert code == 0, err
    doc = json.loads(out)
    got = convergence(doc)
    values = series(doc)
    assert got["reached_at"] == 9 and got["rounds"] == 9, values
    for measured, cap in zip(values, [4000, 2800, 2000, 1500, 1000, 1000], strict=False):
        assert measured == pytest.approx(cap, rel=0.1), values
    assert got["window"]["rounds"] == [5, 6, 7, 8, 9]
    assert got["window"]["average"] == pytest.approx(1000, rel=0.06)
    # Every view says it: the run's own output, and show.
    code, shown, err = iobench_in(group, db, "show", "latest")
    assert code == 0, err
    assert "steady state reached at round 9" in shown, shown


@pytest.mark.root
def test_a_cap_that_alternates_round_by_round_is_never_steady(
    scratch: Scratch, tmp_path: Path, real_fio: str
) -> None:
    """2000 and 1000 IOPS in turn: every window's range is about 2/3 of its average."""
    dev, group = capped_volume(scratch, 32 * MiB, 2000, 0)
    db = tmp_path / "r.db"
    caps = [2000, 1000] * 10
    with caps_by_round(group, db, caps):
        code, out, err = iobench_in(
            group, db, "run", dev, "--suite", one_read(tmp_path), "--steady-state", "pts",
            "--max-rounds", "7", "--json",
        )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    got = convergence(doc)
    assert got["reached_at"] is None and got["rounds"] == 7, series(doc)
    assert not got["window"]["range_ok"]
    not_steady = [w for w in doc["warnings"] if w["id"] == "not-steady"]
    assert len(not_steady) == 1 and "7 rounds" in not_steady[0]["message"], doc["warnings"]


@pytest.fixture
def shm_target(tmp_path: Path) -> Iterator[Path]:
    """A directory in RAM (/dev/shm), removed with what a run left there."""
    target = Path("/dev/shm") / f"iobench-steady-{tmp_path.name}"
    target.mkdir()
    yield target
    for f in target.iterdir():
        f.unlink()
    target.rmdir()


def capped_read(tmp_path: Path, runtime: str) -> str:
    """ONE_READ capped by fio's own rate_iops at 20k IOPS, far below what RAM gives on a
    busy 2-CPU host: unthrottled, RAM is CPU-bound, and 3 s rounds of it swung between 184k
    and 293k IOPS in a full run; capped, every second gives what the store gives."""
    path = tmp_path / "capped-read.toml"
    path.write_text(ONE_READ.format(runtime=runtime) + "rate_iops = 20000\n")
    return str(path)


def test_tmpfs_is_steady_at_once(cli: Cli, shm_target: Path, tmp_path: Path, real_fio: str) -> None:
    """RAM does not change as it is written: steady at the first window, round 5."""
    suite = capped_read(tmp_path, "1s")
    code, out, err = cli(
        "run", str(shm_target), "--suite", suite, "--steady-state", "pts", "--json"
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    got = convergence(doc)
    assert got["reached_at"] == 5 and got["rounds"] == 5, series(doc)
    assert all(v == pytest.approx(20000, rel=0.05) for v in series(doc)), series(doc)


def test_fio_s_own_check_ends_each_job_and_its_window_is_stored(
    cli: Cli, shm_target: Path, tmp_path: Path, real_fio: str
) -> None:
    """--steady-state fio: each job carries fio's slope check over a quarter of its
    runtime; on steady storage it settles long before its 8 s, and fio's window is stored.
    (On a file of the disk, beside other work, it once settled only at the end.)"""
    target = shm_target
    suite = capped_read(tmp_path, "8s")
    code, out, err = cli("run", str(target), "--suite", suite, "--steady-state", "fio", "--json")
    assert code == 0, err
    doc = json.loads(out)
    (result,) = doc["results"]
    ss = result["steadystate"]
    assert ss["criterion"].startswith("iops_slope:") and ss["duration_s"] == 2, ss
    assert ss["attained"] is True, ss
    assert result["read"]["runtime_ms"] < 7000, "fio ended the job once it was steady"
    code, shown, err = cli("show", str(doc["run_id"]))
    assert code == 0, err
    assert f"rand-r on {target}: fio found it steady after" in shown, shown
