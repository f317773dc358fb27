"""The clients' aggregate checked against the device they share (issue 26, point 4): namespace
hosts whose fio servers test in a directory on this host's own block device, a loop device
with ext4 (tests/scratch.py). Their test files are on this host's storage, so iobench reads
the device's counters around each step and sets them beside the aggregate.

The hosts are made after the mount: `ip netns exec` gives each server a copy of the mounts
of that moment (this machine's / is a private mount), so a mount made later is not seen by
servers already running.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from conftest import MINI_SUITE, Cli
from hosts import FioHosts, why_no_netns
from iobench.analysis.together import seconds_text
from scratch import MiB, Scratch

pytestmark = [pytest.mark.fio, pytest.mark.root]


def reads(tmp_path: Path, *, direct: bool) -> str:
    """The mini suite's random read alone, 5 s (seconds enough for a window), direct or
    from the page cache (the layout wrote the file through it, and fio is told not to drop
    it: with fio's `invalidate`, most buffered reads of a time-based job still reach the
    device)."""
    path = tmp_path / f"reads-{direct}.toml"
    text = MINI_SUITE.split('[[workload]]\nname = "rw"')[0].replace(
        'runtime = "1s"', 'runtime = "5s"'
    )
    path.write_text(text + ("" if direct else "direct = false\ninvalidate = false\n"))
    return str(path)


def run_on(cli: Cli, hosts: FioHosts, shared: Path, suite: str) -> dict[str, Any]:
    code, out, err = cli(
        "run", str(shared), "--suite", suite, "--json",
        "--clients", ",".join(h.name for h in hosts.hosts),
    )  # fmt: skip
    assert code == 0, err
    assert list(shared.iterdir()) == []  # the test files are gone
    return json.loads(out)  # type: ignore[no-any-return]


def test_the_aggregate_is_checked_against_the_device_the_clients_share(
    cli: Cli, scratch: Scratch, tmp_path: Path
) -> None:
    if why := why_no_netns():
        pytest.skip(why)
    dev = scratch.loop(scratch.image(64 * MiB))
    scratch.mkfs(dev)
    shared = scratch.mount(dev) / "shared"
    shared.mkdir()
    loop = Path(dev).name
    with ExitStack() as stack:
        (tmp_path / "hosts").mkdir()
        hosts = FioHosts(tmp_path / "hosts", 3, stack)

        doc = run_on(cli, hosts, shared, reads(tmp_path, direct=True))
        (step,) = doc["clients"]["steps"]
        check = step["device_check"]
        assert check["devices"] == [loop] and check["seconds"] == step["window"]["seconds"]
        (agg,) = [r for r in doc["results"] if r["client"] == "all"]
        # Direct IO: every read the clients count reached the device, in the same seconds.
        assert agg["read"]["iops"] == pytest.approx(check["read"]["iops"], rel=0.10)
        assert agg["read"]["bw_bytes"] == pytest.approx(check["read"]["bw_bytes"], rel=0.10)
        (util,) = agg["disk_util"]  # the device's own counters over the whole step
        assert util["name"] == loop and util["read_ios"] >= agg["read"]["total_ios"]
        assert not any(w["id"] == "aggregate-exceeds-device" for w in doc["warnings"])
        code, out, _ = cli("show", str(doc["run_id"]))
        assert code == 0
        seconds = seconds_text(check["seconds"])
        said = f"device check, this host's {loop} over the same {seconds} s: read "
        assert said in out

        # Through the page cache: the clients count reads the device never saw.
        doc = run_on(cli, hosts, shared, reads(tmp_path, direct=False))
        (step,) = doc["clients"]["steps"]
        (agg,) = [r for r in doc["results"] if r["client"] == "all"]
        assert agg["read"]["iops"] > 1.1 * step["device_check"]["read"]["iops"]
        (warning,) = [w for w in doc["warnings"] if w["id"] == "aggregate-exceeds-device"]
        assert loop in warning["message"] and "page cache" in warning["message"]

        # A directory on tmpfs: the clients' files are here too, on no block device.
        ram = Path("/dev/shm") / f"iobench-test-{tmp_path.name}"
        ram.mkdir()
        stack.callback(ram.rmdir)
        doc = run_on(cli, hosts, ram, reads(tmp_path, direct=False))
        (step,) = doc["clients"]["steps"]
        assert "device_check" not in step and step["aggregate_over"] == "window"
