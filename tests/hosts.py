"""Test hosts made of network namespaces, each running a real ``fio --server``.

One bridge in the root namespace holds ``.1`` of a private /24 that is free on this
machine; every host is a namespace joined to it by a veth pair, with ``.2``, ``.3`` ...
and a fio server bound to that address only. Namespaces share the filesystem, so a
directory under the test's tmp_path is a "shared filesystem" for all of them. Everything
(servers with every process they forked, namespaces, links) is removed afterwards, also when
a test fails. Used through the ``fio_hosts`` fixture in tests/test_clients.py.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from scratch import SBIN_PATH, run_tool, tool

FIO_PORT = 8765


def _free_subnet(tag: int) -> ipaddress.IPv4Network:
    """A /24 in 10.213.0.0/16 that no interface or route here uses."""
    used = run_tool("ip", "-4", "route", "show", "table", "all") + run_tool("ip", "-4", "addr")
    for i in range(250):
        net = ipaddress.IPv4Network(f"10.213.{(tag + i) % 250 + 1}.0/24")
        if str(net.network_address)[:-1] not in used:
            return net
    raise RuntimeError("no free /24 in 10.213.0.0/16")


def _descendants(root: int) -> set[int]:
    """The processes below ``root``, from /proc's parent links."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def signal_server(pid: int, sig: int) -> None:
    """``sig`` to a fio server ``pid`` led: its process group (listener and connection
    handlers, atomically, forks included), then its job processes, which fio puts in
    process groups of their own and which fork nothing."""
    jobs = _descendants(pid)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)
    for job in jobs:
        with contextlib.suppress(ProcessLookupError):
            os.kill(job, sig)


class FioHost:
    """One namespace with its address and fio server."""

    def __init__(self, netns: str, address: str, workdir: Path) -> None:
        self.netns = netns
        self.address = address
        self.workdir = workdir
        self.server: subprocess.Popen[bytes] | None = None
        self.env: dict[str, str] = {}  # added to its fio server's environment (CEPH_CONF)
        # How its fio server's command line is run (scratch.Cgroup.command: inside a cgroup
        # that throttles a device the hosts share).
        self.wrap: Callable[[list[str]], list[str]] = lambda argv: argv

    @property
    def name(self) -> str:
        """How a user names this client: its address."""
        return self.address

    def start(self) -> None:
        """Start its fio server (if not running) and wait until it accepts connections."""
        if self.server is not None and self.server.poll() is None:
            return
        log = open(self.workdir / f"server-{self.address}.log", "ab")  # noqa: SIM115
        with log:
            self.server = subprocess.Popen(
                self.wrap([tool("ip"), "netns", "exec", self.netns, shutil.which("fio") or "fio",
                           f"--server=ip:{self.address}"]),
                cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
                env={**os.environ, **self.env},
            )  # fmt: skip
        deadline = time.monotonic() + 15
        while True:
            try:
                with socket.create_connection((self.address, FIO_PORT), timeout=1):
                    return
            except OSError:
                if self.server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"fio server on {self.address} did not start: "
                        + (self.workdir / f"server-{self.address}.log").read_text()
                    ) from None
                time.sleep(0.05)

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the whole server: its process group (listener and connection
        handlers, atomically, forks included), then the job processes, which fio puts in
        process groups of their own and which fork nothing."""
        assert self.server is not None
        signal_server(self.server.pid, sig)

    def wait_for_io(self, directory: Path, timeout_s: float = 15.0) -> None:
        """Return once a process the server forked holds a file in ``directory`` open: a
        job is running there, past fio's connection handshake. (fio puts its job processes
        in process groups of their own, so they are found by parentage.)"""
        assert self.server is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for pid in _descendants(self.server.pid):
                try:
                    links = [str(fd.readlink()) for fd in Path(f"/proc/{pid}/fd").iterdir()]
                except OSError:
                    continue
                if any(link.startswith(f"{directory}/") for link in links):
                    return
            time.sleep(0.02)
        raise AssertionError(f"no job of the server on {self.address} opened a file in {directory}")

    def kill(self) -> None:
        """The server and everything it forked dies at once, as in a crash. It is stopped
        first, so that no process forked while it dies (a handler for a connection that
        was waiting) survives holding the listening socket."""
        if self.server is None:
            return
        self.signal(signal.SIGSTOP)
        self.signal(signal.SIGKILL)
        self.server.wait(timeout=30)
        self.server = None
        # Whatever else still lives in the namespace is ours too: nothing outlives a test.
        left = subprocess.run(
            [tool("ip"), "netns", "pids", self.netns], capture_output=True, text=True, check=False
        ).stdout.split()
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)


class FioHosts:
    """``count`` namespace hosts on one private /24; their fio servers started unless
    ``start`` is False (then ``ensure_running`` starts them, e.g. once each host's ``env``
    is set)."""

    def __init__(self, workdir: Path, count: int, stack: ExitStack, *, start: bool = True) -> None:
        tag = os.getpid() % 100000
        self.subnet = _free_subnet(tag)
        addresses = list(self.subnet.hosts())
        self.gateway = str(addresses[0])
        self.bridge = f"ibtb{tag}"
        run_tool("ip", "link", "add", self.bridge, "type", "bridge")
        stack.callback(subprocess.run, [tool("ip"), "link", "del", self.bridge], check=False)
        run_tool("ip", "addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        run_tool("ip", "link", "set", self.bridge, "up")
        self.hosts: list[FioHost] = []
        for i in range(count):
            ns = f"iobench-test-{tag}-{i}"
            veth, peer = f"ibv{tag}h{i}", f"ibp{tag}h{i}"
            run_tool("ip", "netns", "add", ns)
            stack.callback(subprocess.run, [tool("ip"), "netns", "del", ns], check=False)
            run_tool("ip", "link", "add", veth, "type", "veth", "peer", "name", peer)
            stack.callback(subprocess.run, [tool("ip"), "link", "del", veth], check=False)
            run_tool("ip", "link", "set", veth, "master", self.bridge, "up")
            run_tool("ip", "link", "set", peer, "netns", ns)
            address = str(addresses[i + 1])
            run_tool("ip", "-n", ns, "addr", "add", f"{address}/24", "dev", peer)
            run_tool("ip", "-n", ns, "link", "set", peer, "up")
            run_tool("ip", "-n", ns, "link", "set", "lo", "up")
            host = FioHost(ns, address, workdir)
            stack.callback(host.kill)
            self.hosts.append(host)
        if start:
            self.ensure_running()

    def unused_address(self) -> str:
        """An address in the subnet that no host has (nothing answers there)."""
        return str(list(self.subnet.hosts())[-1])

    def ensure_running(self) -> None:
        for host in self.hosts:
            host.start()


def why_no_netns() -> str | None:
    """None when namespace hosts can be made here, else why not."""
    if os.geteuid() != 0:
        return "needs root: creates network namespaces, a bridge and veth pairs"
    if shutil.which("ip", path=SBIN_PATH) is None:
        return "the ip tool is not installed (Debian package iproute2)"
    if shutil.which("fio") is None:
        return "fio is not installed (scripts/setup.sh --dev installs it)"
    probe = f"iobench-probe-{os.getpid()}"
    done = subprocess.run([tool("ip"), "netns", "add", probe], capture_output=True, text=True)
    if done.returncode != 0:
        return f"cannot create a network namespace here: {done.stderr.strip()}"
    subprocess.run([tool("ip"), "netns", "del", probe], capture_output=True, check=False)
    return None


def fio_hosts_fixture(workdir: Path, count: int) -> Iterator[FioHosts]:
    """Yield FioHosts (skipping, with the reason, only where namespaces are unavailable)."""
    why = why_no_netns()
    if why:
        pytest.skip(why)
    with ExitStack() as stack:
        yield FioHosts(workdir, count, stack)
