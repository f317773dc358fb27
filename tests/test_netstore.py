"""The network storage the tests start (tests/netstore.py) is real and leaves nothing behind:
nbdkit exports as nbdinfo and nbdcopy see them, a one-node Ceph as the ceph and rbd CLIs see
it, and no process or file once a server stops or fails to start. No fio here."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

import netstore
from hosts import _free_subnet
from scratch import SBIN_PATH, run_tool, tool

pytestmark = pytest.mark.netstore

MiB = 1 << 20
NbdFactory = Callable[..., netstore.NbdServer]


def running_from(path: Path) -> list[str]:
    """The processes whose command line names ``path`` (pgrep -f)."""
    found = subprocess.run(
        ["pgrep", "-a", "-f", re.escape(str(path))], capture_output=True, text=True, check=False
    )
    return found.stdout.splitlines()


def gone(pid: int) -> bool:
    """No such process, not even a zombie."""
    return not Path(f"/proc/{pid}").exists()


def export(info: dict[str, object]) -> dict[str, object]:
    exports = info["exports"]
    assert isinstance(exports, list) and len(exports) == 1, exports
    found: dict[str, object] = exports[0]
    return found


def nbdcopy(source: str, destination: str) -> tuple[int, str, float]:
    """One connection, one request of 256 KiB at a time: the exit code, stderr, seconds."""
    argv = ["nbdcopy", "--connections=1", "--requests=1", "--request-size=262144"]
    start = time.monotonic()
    done = subprocess.run(
        [*argv, source, destination], capture_output=True, text=True, timeout=60, check=False
    )
    return done.returncode, done.stderr, time.monotonic() - start


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """1 MiB of random data (no zeros for nbdcopy to skip)."""
    path = tmp_path / "data"
    path.write_bytes(os.urandom(MiB))
    return path


# --- nbdkit --------------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "nbytes"), [("64M", 64 * MiB), ("1M", MiB), ("3G", 3 << 30)])
def test_an_export_has_the_size_given(
    nbd_server_factory: NbdFactory, size: str, nbytes: int
) -> None:
    server = nbd_server_factory(size=size)
    assert server.uri == f"nbd://127.0.0.1:{server.port}/"
    assert server.socket is None
    assert Path(f"/proc/{server.pid}/comm").read_text().strip() == "nbdkit"
    shown = export(server.info())
    assert shown["export-size"] == nbytes
    assert shown["is_read_only"] is False


def test_what_is_written_reads_back(
    nbd_server_factory: NbdFactory, data: Path, tmp_path: Path
) -> None:
    server = nbd_server_factory(size="1M")
    assert nbdcopy(str(data), server.uri)[0] == 0
    back = tmp_path / "back"
    assert nbdcopy(server.uri, str(back))[0] == 0
    assert back.read_bytes() == data.read_bytes()


@pytest.mark.parametrize("unix", [False, True])
def test_a_readonly_export_says_so_and_refuses_writes(
    nbd_server_factory: NbdFactory, data: Path, unix: bool
) -> None:
    server = nbd_server_factory(size="1M", readonly=True, unix=unix)
    assert export(server.info())["is_read_only"] is True
    code, err, _ = nbdcopy(str(data), server.uri)
    assert code != 0
    assert "read-only" in err


def test_a_unix_socket_server_serves_and_stops(
    nbd_server_factory: NbdFactory, tmp_path: Path
) -> None:
    server = nbd_server_factory(size="8M", unix=True)
    assert server.port is None and server.socket is not None
    assert server.socket.is_relative_to(tmp_path) and server.socket.is_socket()
    assert server.uri == f"nbd+unix:///?socket={server.socket}"
    assert export(server.info())["export-size"] == 8 * MiB
    server.stop()
    assert gone(server.pid)
    assert not server.socket.exists()
    assert not running_from(tmp_path)
    server.stop()  # twice does no harm


def test_a_socket_path_too_long_for_its_address_goes_elsewhere(tmp_path: Path) -> None:
    workdir = tmp_path / ("d" * 100)
    workdir.mkdir()
    with netstore.start_nbdkit(workdir, size="1M", unix=True) as server:
        assert server.socket is not None and len(os.fsencode(server.socket)) < 108
        assert export(server.info())["export-size"] == MiB
    assert not server.socket.exists() and not server.socket.parent.exists()
    assert not running_from(workdir)


@pytest.mark.parametrize("unix", [False, True])
@pytest.mark.parametrize("name", ["disk1", "my disk/2"])
def test_an_export_name_is_the_only_one_served(
    nbd_server_factory: NbdFactory, name: str, unix: bool
) -> None:
    server = nbd_server_factory(size="4M", export_name=name, unix=unix)
    assert f"/{quote(name, safe='')}" in server.uri
    shown = export(server.info())
    assert shown["export-name"] == name
    assert shown["export-size"] == 4 * MiB
    other = server.uri.replace(quote(name, safe=""), "other", 1)
    refused = subprocess.run(["nbdinfo", "--json", other], capture_output=True, text=True)
    assert refused.returncode != 0, refused.stdout


def test_the_rate_filter_limits_in_bits_per_second(
    nbd_server_factory: NbdFactory, data: Path
) -> None:
    # 1 MiB at 16 Mbit/s is 0.52 s, less the 0.1 s burst: 0.42 s; bytes per second would
    # make it 0.06 s.
    server = nbd_server_factory(size="1M", rate_bits=16_000_000, burstiness=0.1)
    code, err, seconds = nbdcopy(str(data), server.uri)
    assert code == 0, err
    assert 0.35 < seconds < 10


@pytest.mark.parametrize(("rdelay", "wdelay"), [(None, 100), (100, None), (100, 200)])
def test_the_delay_filter_delays_each_request(
    nbd_server_factory: NbdFactory,
    data: Path,
    tmp_path: Path,
    rdelay: int | None,
    wdelay: int | None,
) -> None:
    # 1 MiB in four requests of 256 KiB, one at a time
    server = nbd_server_factory(size="1M", rdelay_ms=rdelay, wdelay_ms=wdelay)
    code, err, write_s = nbdcopy(str(data), server.uri)
    assert code == 0, err
    code, err, read_s = nbdcopy(server.uri, str(tmp_path / "back"))
    assert code == 0, err
    if wdelay:
        assert write_s >= 4 * wdelay / 1000 * 0.9
    if rdelay:
        assert read_s >= 4 * rdelay / 1000 * 0.9


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"params": ("no-such-key=1",)}, "unknown parameter 'no-such-key'"),
        ({"rate_bits": 8_000_000, "params": ("rate-typo=1",)}, "unknown parameter 'rate-typo'"),
        ({"size": "lots"}, "could not parse size"),
        ({"filters": ("no-such-filter",)}, "no-such-filter"),
    ],
)
def test_a_server_that_exits_at_once_fails_fast_with_its_message(
    tmp_path: Path, options: dict[str, object], message: str
) -> None:
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="nbdkit did not come up") as failed:
        netstore.start_nbdkit(tmp_path, **options)  # type: ignore[arg-type]
    assert time.monotonic() - start < 2
    assert message in str(failed.value)
    assert "nbdkit exited" in str(failed.value)
    assert not list(tmp_path.iterdir())
    assert not running_from(tmp_path)


def test_a_server_that_never_answers_is_killed(tmp_path: Path) -> None:
    # the delay filter holds every connection 30 s before the handshake
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="not ready after 1 s"):
        netstore.start_nbdkit(
            tmp_path, size="1M", rdelay_ms=0, params=("delay-open=30",), timeout_s=1
        )
    assert time.monotonic() - start < 5
    assert not list(tmp_path.iterdir())
    assert not running_from(tmp_path)


def test_servers_of_one_test_listen_apart_and_all_stop(tmp_path: Path) -> None:
    with ExitStack() as stack:
        servers = [stack.enter_context(netstore.start_nbdkit(tmp_path, size="1M")) for _ in "ab"]
        assert servers[0].port != servers[1].port
        assert len(running_from(tmp_path)) == 2
    assert all(gone(server.pid) for server in servers)
    assert not list(tmp_path.iterdir())
    assert not running_from(tmp_path)


# --- Ceph ----------------------------------------------------------------------------------


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def image_name(ceph_cluster: netstore.CephCluster) -> Iterator[str]:
    """A name for an image of the test's own, removed afterwards if it exists."""
    name = unique("t")
    yield name
    if name in ceph_cluster.rbd("ls", "rbd").split():
        ceph_cluster.remove_image(name)


@pytest.mark.parametrize(
    ("size", "nbytes", "config"),
    [
        ("64M", 64 * MiB, {"rbd_qos_iops_limit": 500}),
        ("48M", 48 * MiB, {"rbd_qos_bps_limit": 1048576, "rbd_qos_write_iops_limit": 200}),
        ("1G", 1 << 30, {}),
    ],
)
def test_an_image_shows_its_size_and_qos_limits(
    ceph_cluster: netstore.CephCluster,
    image_name: str,
    size: str,
    nbytes: int,
    config: dict[str, Any],
) -> None:
    assert ceph_cluster.create_image(image_name, size, **config) == f"rbd/{image_name}"
    info = json.loads(ceph_cluster.rbd("info", "--format", "json", f"rbd/{image_name}"))
    assert info["size"] == nbytes
    listed = json.loads(
        ceph_cluster.rbd("config", "image", "list", "--format", "json", f"rbd/{image_name}")
    )
    set_on_image = {row["name"]: row["value"] for row in listed if row["source"] == "image"}
    assert set_on_image == {key: str(value) for key, value in config.items()}
    ceph_cluster.remove_image(image_name)
    assert image_name not in ceph_cluster.rbd("ls", "rbd").split()


def test_an_idle_image_has_no_watchers_and_an_open_one_has(
    ceph_cluster: netstore.CephCluster, image_name: str
) -> None:
    ceph_cluster.create_image(image_name, "16M")
    status = json.loads(ceph_cluster.rbd("status", "--format", "json", f"rbd/{image_name}"))
    assert status == {"watchers": []}
    with ceph_cluster.watching(image_name) as pid:
        assert len(ceph_cluster.watchers(image_name)) == 1
        assert not gone(pid)
    assert gone(pid)
    assert ceph_cluster.watchers(image_name) == []


def test_a_client_finds_the_cluster_through_the_environment(
    ceph_cluster: netstore.CephCluster, image_name: str
) -> None:
    assert stat.S_IMODE(ceph_cluster.keyring.stat().st_mode) == 0o600
    assert ceph_cluster.env() == {"CEPH_CONF": str(ceph_cluster.conf)}
    ceph_cluster.create_image(image_name, "16M")
    # what fio's rbd engine has: CEPH_CONF and nothing else
    listed = subprocess.run(
        ["rbd", "ls", "rbd"], env={**os.environ, **ceph_cluster.env()},
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert image_name in listed.stdout.split()
    assert ceph_cluster.ceph("fsid").strip() == ceph_cluster.fsid


def test_the_cluster_is_one_node_with_pool_rbd(ceph_cluster: netstore.CephCluster) -> None:
    mons = json.loads(ceph_cluster.ceph("mon", "dump", "--format", "json"))["mons"]
    assert [mon["public_addrs"]["addrvec"] for mon in mons] == [
        [
            {"type": "v2", "addr": f"127.0.0.1:{ceph_cluster.mon_v2_port}", "nonce": 0},
            {"type": "v1", "addr": f"127.0.0.1:{ceph_cluster.mon_v1_port}", "nonce": 0},
        ]
    ]
    osds = json.loads(ceph_cluster.ceph("osd", "dump", "--format", "json"))["osds"]
    assert [(osd["osd"], osd["up"], osd["in"]) for osd in osds] == [(0, 1, 1)]
    pool = json.loads(ceph_cluster.ceph("osd", "pool", "get", "rbd", "all", "--format", "json"))
    assert (pool["size"], pool["min_size"], pool["pg_num"]) == (1, 1, 8)
    apps = json.loads(ceph_cluster.ceph("osd", "pool", "application", "get", "rbd"))
    assert "rbd" in apps
    assert sorted(ceph_cluster.pids) == ["mon.a", "osd.0"]


def test_a_pool_of_its_own(ceph_cluster: netstore.CephCluster) -> None:
    name = unique("tpool")
    try:
        ceph_cluster.create_pool(name, pg=4, size=2)
        pool = json.loads(ceph_cluster.ceph("osd", "pool", "get", name, "all", "--format", "json"))
        assert (pool["size"], pool["min_size"], pool["pg_num"]) == (2, 1, 4)
        # one OSD for two replicas: undersized, and writable all the same
        assert ceph_cluster.create_image("img", "8M", pool=name) == f"{name}/img"
        assert ceph_cluster.rbd("ls", name).split() == ["img"]
    finally:
        ceph_cluster.remove_pool(name)
    assert name not in ceph_cluster.ceph("osd", "pool", "ls").split()


def test_a_failing_command_says_which_and_why(ceph_cluster: netstore.CephCluster) -> None:
    with pytest.raises(
        RuntimeError, match=r"rbd .* info rbd/no-such-image failed \(2\): .*No such"
    ):
        ceph_cluster.rbd("info", "rbd/no-such-image")


# --- whole clusters started and stopped by a test -------------------------------------------


@pytest.fixture
def ceph_installed() -> None:
    if missing := netstore.missing_tools(netstore.CEPH_TOOLS):
        pytest.skip(f"needs {', '.join(missing)} (scripts/setup.sh --dev installs them)")


def test_a_second_cluster_with_a_manager_runs_beside_and_stops_without_a_trace(
    ceph_cluster: netstore.CephCluster, tmp_path: Path
) -> None:
    with netstore.start_ceph(tmp_path, mgr=True) as second:
        assert {second.mon_v2_port, second.mon_v1_port}.isdisjoint(
            {ceph_cluster.mon_v2_port, ceph_cluster.mon_v1_port}
        )
        assert second.ceph("fsid").strip() == second.fsid != ceph_cluster.fsid
        assert json.loads(second.ceph("mgr", "stat", "--format", "json"))["available"] is True
        assert sorted(second.pids) == ["mgr.x", "mon.a", "osd.0"]
        assert second.create_image("img", "8M") == "rbd/img"
        assert len(running_from(second.dir)) == 3
    assert all(gone(pid) for pid in second.pids.values())
    assert not running_from(tmp_path)
    assert not second.dir.exists() and not list(tmp_path.iterdir())
    second.stop()  # twice does no harm
    assert ceph_cluster.ceph("fsid").strip() == ceph_cluster.fsid


FAILING_OSD = """#!/bin/sh
case " $* " in *" --mkfs "*) exec {real} "$@" ;; esac
echo "fake ceph-osd: refusing to start" >&2
exit 3
"""


def test_a_cluster_that_fails_half_way_is_taken_down(
    ceph_installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "ceph-osd"
    fake.write_text(FAILING_OSD.format(real=shutil.which("ceph-osd")))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    workdir = tmp_path / "work"
    workdir.mkdir()
    with pytest.raises(RuntimeError) as failed:
        netstore.start_ceph(workdir)
    message = str(failed.value)
    assert "the osd did not come up: osd.0 exited (3)" in message
    assert "fake ceph-osd: refusing to start" in message  # the daemon's log
    assert not list(workdir.iterdir())
    assert not running_from(workdir)


def test_an_address_not_of_this_host_is_refused_at_once(
    ceph_installed: None, tmp_path: Path
) -> None:
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"cannot listen on 203\.0\.113\.9"):
        netstore.start_ceph(tmp_path, address="203.0.113.9")
    with pytest.raises(RuntimeError, match=r"cannot listen on 203\.0\.113\.9"):
        netstore.start_nbdkit(tmp_path, address="203.0.113.9")
    assert time.monotonic() - start < 2
    assert not list(tmp_path.iterdir())


def test_servers_on_an_ipv6_address(ceph_installed: None, tmp_path: Path) -> None:
    try:
        netstore.free_ports("::1")
    except RuntimeError as e:
        pytest.skip(f"no IPv6 loopback here: {e}")
    with netstore.start_ceph(tmp_path, address="::1") as cluster:
        assert (
            cluster.mon_host == f"[v2:[::1]:{cluster.mon_v2_port},v1:[::1]:{cluster.mon_v1_port}]"
        )
        cluster.create_image("img", "8M")
        assert cluster.rbd("ls", "rbd").split() == ["img"]
        with netstore.start_nbdkit(tmp_path, size="2M", address="::1") as server:
            assert server.uri == f"nbd://[::1]:{server.port}/"
            assert export(server.info())["export-size"] == 2 * MiB
    assert not running_from(tmp_path)


# --- a namespace reaches servers on a bridge -------------------------------------------------


@pytest.fixture
def netns_on_bridge() -> Iterator[tuple[str, str]]:
    """A network namespace joined to a new bridge by a veth pair: (namespace, the bridge's
    address). Both removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("needs root: creates a network namespace, a bridge and a veth pair")
    if shutil.which("ip", path=SBIN_PATH) is None:
        pytest.skip("the ip tool is not installed (Debian package iproute2)")
    tag = os.getpid() % 100000
    subnet = _free_subnet(tag + 77)
    gateway, peer_address = (str(a) for a in list(subnet.hosts())[:2])
    bridge, veth, peer, ns = f"ibnb{tag}", f"ibnv{tag}", f"ibnp{tag}", f"iobench-netstore-{tag}"
    with ExitStack() as stack:
        run_tool("ip", "link", "add", bridge, "type", "bridge")
        stack.callback(subprocess.run, [tool("ip"), "link", "del", bridge], check=False)
        run_tool("ip", "addr", "add", f"{gateway}/24", "dev", bridge)
        run_tool("ip", "link", "set", bridge, "up")
        run_tool("ip", "netns", "add", ns)
        stack.callback(subprocess.run, [tool("ip"), "netns", "del", ns], check=False)
        run_tool("ip", "link", "add", veth, "type", "veth", "peer", "name", peer)
        stack.callback(subprocess.run, [tool("ip"), "link", "del", veth], check=False)
        run_tool("ip", "link", "set", veth, "master", bridge, "up")
        run_tool("ip", "link", "set", peer, "netns", ns)
        run_tool("ip", "-n", ns, "addr", "add", f"{peer_address}/24", "dev", peer)
        run_tool("ip", "-n", ns, "link", "set", peer, "up")
        yield ns, gateway


@pytest.mark.root
def test_a_namespace_host_reaches_a_cluster_and_an_export_on_the_bridge(
    ceph_installed: None, netns_on_bridge: tuple[str, str], tmp_path: Path
) -> None:
    ns, address = netns_on_bridge
    in_ns = [tool("ip"), "netns", "exec", ns]

    def run_in_ns(*argv: str) -> str:
        done = subprocess.run([*in_ns, *argv], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{argv}: {done.stderr}"
        return done.stdout

    with netstore.start_ceph(tmp_path, address=address) as cluster:
        assert cluster.mon_host.startswith(f"[v2:{address}:")
        run_in_ns("rbd", "--conf", str(cluster.conf), "create", "rbd/from-ns", "--size", "8M")
        assert cluster.rbd("ls", "rbd").split() == ["from-ns"]
        with netstore.start_nbdkit(tmp_path, size="2M", address=address) as server:
            assert server.uri.startswith(f"nbd://{address}:")
            shown = json.loads(run_in_ns("nbdinfo", "--json", "--no-content", server.uri))
            assert shown["exports"][0]["export-size"] == 2 * MiB
    assert not running_from(tmp_path)
