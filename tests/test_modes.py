"""Every run mode with every executor (engine/modes.py), on real fio: characterize on
several targets at once, with --repeat, and on namespace hosts sharing one capped device
(the clients' aggregate finds the device's caps); steady-state rounds judged on the
clients' aggregate; and the combinations that mean nothing, refused with their reason.

The measuring tests assert with tolerances that hold on a busy 2-CPU machine; those on
capped devices are `paced` (run beside other tests a throttle paces), the rest alone
(tests/conftest.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from conftest import Cli
from hosts import FioHosts, why_no_netns
from scratch import Cgroup, MiB, Scratch, capped_volume, check_caps_found, iobench_in
from test_steady_rounds import one_read


@pytest.mark.paced
@pytest.mark.fio
@pytest.mark.root
def test_characterize_two_capped_targets_side_by_side_each_with_its_own_caps(
    scratch: Scratch, tmp_path: Path, real_fio: str
) -> None:
    first, group = capped_volume(scratch, 32 * MiB, 3000, 48 * MiB)
    second, _ = capped_volume(scratch, 32 * MiB, 0, 0)
    # Both throttled in the one cgroup iobench runs in, each to its own caps.
    Cgroup(second, group.path, group.v1).set(read_iops=1500, read_bps=96 * MiB)
    code, out, err = iobench_in(
        group, tmp_path / "r.db", "characterize", first, second,
        "--point-time", "3s", "--max-time", "40s", "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    places = {p["place"]: p for p in doc["places"]}
    assert set(places) == {first, second} and doc["targets"] == [first, second]
    # Each place had its own budget of IO.
    for p in doc["places"]:
        assert p["elapsed_s"] <= 40, p["elapsed_s"]
    assert "characterize randread on " + first in _shown(group, tmp_path)
    caps = {
        first: {"iops": 3000, "bw_bytes": 48 * MiB},
        second: {"iops": 1500, "bw_bytes": 96 * MiB},
    }
    check_caps_found(
        *((got["limits"], caps[p], (p, got["reasons"], got["table"])) for p, got in places.items())
    )


def _shown(group: Cgroup, tmp_path: Path) -> str:
    code, out, err = iobench_in(group, tmp_path / "r.db", "show", "latest")
    assert code == 0, err
    return out


@pytest.mark.fio
def test_characterize_repeats_each_point_and_takes_their_mean(
    cli: Cli, tmp_path: Path, real_fio: str
) -> None:
    target = tmp_path / "t"
    target.mkdir()
    code, out, err = cli(
        "characterize", str(target), "--point-time", "3s", "--max-time", "24s",
        "--repeat", "2", "--size", "8M", "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    code, shown, err = cli("show", str(doc["run_id"]), "--json")
    assert code == 0, err
    results = json.loads(shown)["results"]
    by_point: dict[str, list[int]] = {}
    for r in results:
        by_point.setdefault(r["workload"], []).append(r["repetition"])
    assert by_point and all(sorted(reps) == [1, 2] for reps in by_point.values()), by_point
    # No new point once its two runs would not fit: the steps' time, fio's IO and ramps
    # within it, stays within the budget.
    assert doc["elapsed_s"] <= 24, doc["elapsed_s"]
    io = sum(r["read"]["runtime_ms"] / 1000 + r["params"]["ramp_s"] for r in results)
    assert io <= doc["elapsed_s"], (io, doc["elapsed_s"])
    assert doc["points"] == len(by_point)


@pytest.fixture
def shared_capped(scratch: Scratch, tmp_path: Path) -> Iterator[tuple[Path, Cgroup, FioHosts]]:
    """An ext4 filesystem on a loop device capped at 2000 read IOPS and 32 MiB/s, mounted
    here and seen by 3 namespace hosts whose fio servers run inside the capping cgroup."""
    why = why_no_netns()
    if why:
        pytest.skip(why)
    dev, group = capped_volume(scratch, 96 * MiB, 0, 0)
    scratch.mkfs(dev)
    mount = scratch.mount(dev)
    group.set(read_iops=2000, read_bps=32 * MiB)
    workdir = tmp_path / "hosts"
    workdir.mkdir()
    with ExitStack() as stack:
        hosts = FioHosts(workdir, 3, stack, start=False)
        for h in hosts.hosts:
            h.wrap = group.command
        hosts.ensure_running()
        yield mount, group, hosts


@pytest.mark.paced
@pytest.mark.fio
@pytest.mark.root
def test_characterize_on_three_clients_finds_the_cap_of_the_device_they_share(
    shared_capped: tuple[Path, Cgroup, FioHosts], tmp_path: Path, cli: Cli, real_fio: str
) -> None:
    mount, _, hosts = shared_capped
    names = ",".join(h.name for h in hosts.hosts)
    code, out, err = cli(
        # Points of 5 s: the aggregate leaves out each client's first and last second.
        "characterize", str(mount), "--clients", names, "--point-time", "5s",
        "--max-time", "60s", "--size", "16M", "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    (place,) = doc["places"]
    assert place["place"] == "3 clients"
    code, shown, err = cli("show", str(doc["run_id"]), "--json")
    results = json.loads(shown)["results"]
    assert {r["client"] for r in results} == {"all", *(h.name for h in hosts.hosts)}
    # The clients together meet the device's caps; none alone could tell them (34.26 MB/s
    # for 32 MiB/s, 2.1 % over, was seen once: the throttle's lead, tests/scratch.py).
    caps = {"iops": 2000, "bw_bytes": 32 * MiB}
    check_caps_found((place["limits"], caps, (place["reasons"], place["table"])))


@pytest.mark.paced
@pytest.mark.fio
@pytest.mark.root
def test_steady_state_rounds_on_clients_judge_their_aggregate(
    shared_capped: tuple[Path, Cgroup, FioHosts], tmp_path: Path, cli: Cli, real_fio: str
) -> None:
    mount, _, hosts = shared_capped
    names = ",".join(h.name for h in hosts.hosts)
    code, out, err = cli(
        # Rounds of 4 s: the clients' aggregate leaves out each one's first and last second.
        "run", str(mount), "--clients", names, "--suite", one_read(tmp_path, "4s"),
        "--size", "8M", "--steady-state", "pts", "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    judged = [w for w in doc["steady_state"]["workloads"] if w["client"] == "all"]
    (aggregate,) = judged
    assert aggregate["reached_at"] == 5 and aggregate["clients"] == 3, aggregate["series"]
    assert aggregate["window"]["average"] == pytest.approx(2000, rel=0.06)
    # Each client's own series is there to see, not judged on its own.
    own = [w for w in doc["steady_state"]["workloads"] if w["client"] not in (None, "all")]
    assert len(own) == 3 and all(len(w["series"]) == 5 for w in own)
    # Its last round was not known before it ran: the test files are removed after it.
    assert not [p for p in mount.iterdir() if p.name.startswith("iobench-")]
    assert not [w for w in doc["warnings"] if w["id"] == "test-file-left"], doc["warnings"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--steady-state", "pts", "--repeat", "3"], "the rounds are the repetitions"),
        (["--steady-state", "fio", "--repeat", "2"], "--repeat does not go with --steady-state"),
        (["--round-time", "10s"], "--round-time goes with --steady-state pts"),
        (["--max-rounds", "9"], "--max-rounds goes with --steady-state pts"),
        (["--steady-state", "fio", "--max-rounds", "9"], "--max-rounds goes with"),
        (["--steady-state", "pts", "--round-time", "1s", "--runtime", "2s"], "both set"),
        (["--steady-state", "pts", "--round-time", "1s"], "less than 1 s"),
        (["--suite", "pts-iops", "--repeat", "2"], "the rounds are the repetitions"),
        (["--steady-state", "fio", "--clients", "127.0.0.1:1"], "would end that client alone"),
    ],
)
def test_combinations_that_mean_nothing_are_refused_with_their_reason(
    cli: Cli, tmp_path: Path, mini_suite: str, args: list[str], said: str
) -> None:
    suite = [] if "--suite" in args else ["--suite", mini_suite]
    code, out, err = cli("run", str(tmp_path), *suite, *args)
    assert code == 2, (out, err)
    assert said in err and "Traceback" not in err, err
    assert not list(tmp_path.glob("iobench-*")), "nothing is written before the refusal"


def test_characterize_scale_needs_clients(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("characterize", str(tmp_path), "--scale", "1,2")
    assert code == 2 and "--scale goes with --clients" in err, err
