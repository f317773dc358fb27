"""Real network storage servers for tests: nbdkit exports and a one-node Ceph cluster.

``start_nbdkit`` serves an export from nbdkit's ``memory`` plugin (optionally behind the
``rate`` and ``delay`` filters, which give it known limits) on a free TCP port or a unix
socket; ``start_ceph`` builds a cluster of one monitor, one memstore OSD and optionally a
manager (the recipe of ../shared/docs/CEPH.md) on free ports of one local address, with a
pool ``rbd`` ready for images. Both wait until the server answers, by polling, and say why
when it does not; both take everything they started down again (SIGKILL by pid, then the
directory removed) on ``stop()``, and at once when the start fails half way. Every daemon
gets the parent-death signal SIGKILL (nbdkit's ``--exit-with-parent``, ``setpriv
--pdeathsig`` for Ceph's), so that none outlives a test run that is killed itself. Used
through the ``ceph_cluster`` and ``nbd_server_factory`` fixtures (tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self
from urllib.parse import quote

CEPH_TOOLS = ("ceph-mon", "ceph-osd", "ceph-authtool", "monmaptool", "ceph", "rbd", "setpriv")
NBD_TOOLS = ("nbdkit", "nbdinfo", "nbdcopy")
_SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with the terminating NUL
# Without --no-content, nbdinfo reads the export's first blocks and runs file(1) on them
# (and nbdinfo 1.14 prints garbage as the "content" when file is not installed).
_NBDINFO = ["nbdinfo", "--json", "--no-content"]


def missing_tools(names: Sequence[str]) -> list[str]:
    """Those of ``names`` that are not on PATH."""
    return [name for name in names if shutil.which(name) is None]


def free_ports(address: str, count: int = 1) -> list[int]:
    """``count`` distinct TCP ports free on ``address`` just now (bound together, then
    released: the kernel's choice, so parallel tests do not pick the same ones)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket(family)) for _ in range(count)]
        try:
            for sock in socks:
                sock.bind((address, 0))
        except OSError as e:
            raise RuntimeError(f"cannot listen on {address}: {e.strerror}") from None
        return [sock.getsockname()[1] for sock in socks]


def _spawn(argv: Sequence[str], log: Path) -> subprocess.Popen[bytes]:
    """A daemon in a session of its own, its output in ``log`` (never a pipe of ours: a
    caller reading that pipe would wait for the daemon forever)."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


class _Stoppable:
    """``with start_...() as server:`` stops the server on the way out."""

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL, then reap (no zombie is left for pgrep to see)."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def tail(path: Path, lines: int = 25) -> str:
    """The last ``lines`` lines of a log, or why there are none."""
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        return f"({path}: {e.strerror})"
    return "\n".join(text.splitlines()[-lines:]) or f"({path} is empty)"


def _wait_until(
    ready: Callable[[], bool],
    procs: Mapping[str, subprocess.Popen[bytes]],
    timeout_s: float,
    failed: Callable[[str], Exception],
    interval_s: float = 0.05,
) -> None:
    """Poll ``ready`` every ``interval_s`` until it holds; ``failed(why)`` is raised when
    one of ``procs`` exits first or the time is up."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        dead = [
            f"{name} exited ({p.returncode})" for name, p in procs.items() if p.poll() is not None
        ]
        if dead:
            raise failed(", ".join(dead))
        if time.monotonic() > deadline:
            raise failed(f"not ready after {timeout_s:g} s")
        time.sleep(interval_s)


# --- nbdkit --------------------------------------------------------------------------------


@dataclass
class NbdServer(_Stoppable):
    """One nbdkit serving a memory export; ``uri`` is what fio's ``nbd`` engine and
    ``nbdinfo`` take."""

    uri: str
    port: int | None
    socket: Path | None
    pid: int
    log: Path
    cleanup: ExitStack = field(repr=False)

    def info(self) -> dict[str, object]:
        """What ``nbdinfo --json --no-content`` says about the server and its export."""
        info: dict[str, object] = json.loads(_run([*_NBDINFO, self.uri], 10))
        return info

    def stop(self) -> None:
        """Kill nbdkit and remove its files (socket, log, pid file). Idempotent."""
        self.cleanup.close()


class _PortTaken(RuntimeError):
    """The free port chosen for nbdkit was taken by someone else before nbdkit bound it."""


def _nbd_uri(address: str, port: int | None, sock: Path | None, export_name: str | None) -> str:
    name = quote(export_name or "", safe="")
    if sock is not None:
        return f"nbd+unix:///{name}?socket={quote(str(sock))}"
    host = f"[{address}]" if ":" in address else address
    return f"nbd://{host}:{port}/{name}"


def _nbd_plugin(
    size: str,
    rate_bits: int | None,
    burstiness: float,
    delays_ms: tuple[int | None, int | None],
    export_name: str | None,
) -> tuple[list[str], list[str]]:
    """The filters and the parameters (the plugin's and the filters') for what was asked."""
    filters: list[str] = []
    params = [f"size={size}"]
    if rate_bits is not None:
        filters.append("rate")
        params += [f"rate={rate_bits}", f"burstiness={burstiness:g}"]
    if delays_ms != (None, None):
        filters.append("delay")
        params += [f"rdelay={delays_ms[0] or 0}ms", f"wdelay={delays_ms[1] or 0}ms"]
    if export_name is not None:
        # The memory plugin serves its one disk under any name; the exportname filter makes
        # nbdkit accept (and list) this name only, as a server with named exports does.
        filters.append("exportname")
        params += [f"exportname={export_name}", "exportname-strict=true"]
        params.append("exportname-list=explicit")
    return filters, params


def _socket_dir(server_dir: Path, stack: ExitStack) -> Path:
    """Where the unix socket goes: the server's directory, or (when that path is too long
    for a socket address) a short one of its own in the system's temporary directory."""
    if len(os.fsencode(server_dir / "nbd.sock")) <= _SOCKET_PATH_MAX:
        return server_dir
    short = Path(tempfile.mkdtemp(prefix="nbd-"))
    stack.callback(shutil.rmtree, short, ignore_errors=True)
    return short


def start_nbdkit(
    workdir: Path,
    *,
    size: str = "64M",
    rate_bits: int | None = None,
    burstiness: float = 0.1,
    rdelay_ms: int | None = None,
    wdelay_ms: int | None = None,
    readonly: bool = False,
    unix: bool = False,
    address: str = "127.0.0.1",
    export_name: str | None = None,
    filters: Sequence[str] = (),
    params: Sequence[str] = (),
    timeout_s: float = 5,
) -> NbdServer:
    """nbdkit's memory plugin of ``size`` on a free port of ``address`` (or on a unix
    socket), limited to ``rate_bits`` bits/s (the rate filter, with ``burstiness`` seconds
    of burst), each read or write delayed by ``rdelay_ms``/``wdelay_ms`` (the delay
    filter), read-only if asked, serving only ``export_name`` if one is given; more
    ``filters`` (names, e.g. ``blocksize``) and ``params`` (``KEY=VALUE``, for the plugin
    or a filter) as given. Returns once ``nbdinfo`` answers; a RuntimeError with nbdkit's
    log when it does not within ``timeout_s``."""
    chosen, chosen_params = _nbd_plugin(
        size, rate_bits, burstiness, (rdelay_ms, wdelay_ms), export_name
    )
    args = ["--readonly"] if readonly else []
    args += [f"--filter={name}" for name in (*chosen, *filters)]
    args += ["memory", *chosen_params, *params]
    for _ in range(3):
        try:
            return _nbdkit(workdir, args, unix, address, export_name, timeout_s)
        except _PortTaken:
            continue
    raise RuntimeError(f"nbdkit: three free ports of {address} were taken before it bound them")


def _nbdkit(
    workdir: Path,
    args: list[str],
    unix: bool,
    address: str,
    export_name: str | None,
    timeout_s: float,
) -> NbdServer:
    with ExitStack() as stack:
        server_dir = Path(tempfile.mkdtemp(prefix="nbdkit-", dir=workdir))
        stack.callback(shutil.rmtree, server_dir, ignore_errors=True)
        sock = _socket_dir(server_dir, stack) / "nbd.sock" if unix else None
        port = None if unix else free_ports(address)[0]
        where = ["--unix", str(sock)] if sock else ["--ipaddr", address, "--port", str(port)]
        log = server_dir / "nbdkit.log"
        argv = ["nbdkit", "--foreground", "--exit-with-parent"]
        argv += ["--pidfile", str(server_dir / "nbdkit.pid"), *where, *args]
        proc = _spawn(argv, log)
        stack.callback(_kill, proc)
        uri = _nbd_uri(address, port, sock, export_name)

        def failed(why: str) -> RuntimeError:
            if "Address already in use" in tail(log):
                return _PortTaken()
            return RuntimeError(f"nbdkit did not come up ({why}): {' '.join(argv)}\n{tail(log)}")

        answers = _succeeds(lambda: _run([*_NBDINFO, uri], 2))
        _wait_until(answers, {"nbdkit": proc}, timeout_s, failed)
        return NbdServer(uri, port, sock, proc.pid, log, stack.pop_all())
    raise AssertionError("unreachable")  # ExitStack swallows nothing; for mypy


# --- a one-node Ceph -------------------------------------------------------------------------

_CEPH_CONF = """\
[global]
fsid = {fsid}
mon_host = {mon_host}
mon_initial_members = a
public_addr = {address}
cluster_addr = {address}
ms_bind_ipv4 = {ipv4}
ms_bind_ipv6 = {ipv6}
auth_allow_insecure_global_id_reclaim = true
mon_warn_on_insecure_global_id_reclaim_allowed = false
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
mon_warn_on_pool_no_redundancy = false
mon_data_avail_crit = 0
# the monitor commits every change at once, not after 1 s: the cluster is up in 3 s, not 10
paxos_propose_interval = 0.05
paxos_min_wait = 0.01
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
osd_crush_initial_weight = 1
run_dir = {dir}/run
mon_data = {dir}/mon/$cluster-$id
mgr_data = {dir}/mgr/$cluster-$id
osd_data = {dir}/osd/$cluster-$id
osd_objectstore = memstore
memstore_device_bytes = 4294967296
memstore_page_set = true
memstore_page_size = 4096
[mon]
# a port taken since it was chosen fails the monitor at once (default: 3 tries 5 s apart)
ms_bind_retry_count = 1
admin_socket = {dir}/run/$name.asok
log_file = {dir}/log/$name.log
[mgr]
admin_socket = {dir}/run/$name.asok
log_file = {dir}/log/$name.log
[osd]
admin_socket = {dir}/run/$name.asok
log_file = {dir}/log/$name.log
[client]
keyring = {dir}/admin.keyring
log_file = /dev/null
"""

# How long the CLIs wait for the cluster before they give up (librados' default: forever).
_CLIENT_TIMEOUTS = ["--client_mount_timeout", "15", "--rados_osd_op_timeout", "30"]


@dataclass
class CephCluster(_Stoppable):
    """One monitor (``mon.a``), one memstore OSD (``osd.0``), a manager (``mgr.x``) if
    asked, all on ``mon_addr``; clients find it through ``conf`` (``CEPH_CONF``), which names
    the admin ``keyring``. Pool ``rbd`` (8 PGs, one replica) is ready for images."""

    dir: Path
    conf: Path
    keyring: Path
    fsid: str
    mon_addr: str
    mon_v2_port: int
    mon_v1_port: int
    pids: dict[str, int]
    cleanup: ExitStack = field(repr=False)

    @property
    def mon_host(self) -> str:
        """The monitor as ``mon_host`` names it: ``[v2:IP:PORT,v1:IP:PORT]``."""
        return _mon_host(self.mon_addr, self.mon_v2_port, self.mon_v1_port)

    def env(self) -> dict[str, str]:
        """The environment a client (fio's rbd engine, iobench) needs to find this cluster:
        only ``CEPH_CONF``; merge it into ``os.environ`` yourself."""
        return {"CEPH_CONF": str(self.conf)}

    def ceph(self, *args: str, timeout_s: float = 60) -> str:
        """``ceph ARGS`` against this cluster; its stdout (RuntimeError with stderr if it fails)."""
        return _run(["ceph", "--conf", str(self.conf), "--connect-timeout", "15", *args], timeout_s)

    def rbd(self, *args: str, timeout_s: float = 60) -> str:
        return _run(["rbd", "--conf", str(self.conf), *_CLIENT_TIMEOUTS, *args], timeout_s)

    def rados(self, *args: str, timeout_s: float = 60) -> str:
        return _run(["rados", "--conf", str(self.conf), *_CLIENT_TIMEOUTS, *args], timeout_s)

    def create_pool(self, name: str, pg: int = 8, *, size: int = 1) -> str:
        """A replicated pool of ``pg`` PGs and ``size`` replicas (more than 1 on this one
        OSD: undersized, yet writable with min_size 1), initialised for RBD; its name."""
        self.ceph("osd", "pool", "create", name, str(pg), str(pg), "replicated")
        if size != 1:
            self.ceph("osd", "pool", "set", name, "size", str(size), "--yes-i-really-mean-it")
            self.ceph("osd", "pool", "set", name, "min_size", "1")
        self.rbd("pool", "init", name)
        return name

    def remove_pool(self, name: str) -> None:
        self.ceph("osd", "pool", "delete", name, name, "--yes-i-really-really-mean-it")

    def create_image(
        self, name: str, size: str = "64M", pool: str = "rbd", **config: object
    ) -> str:
        """An image of ``size`` in ``pool``, each of ``config`` set on it (``rbd config image
        set``, e.g. ``rbd_qos_iops_limit=500``); its spec ``POOL/NAME``."""
        spec = f"{pool}/{name}"
        self.rbd("create", spec, "--size", size)
        for key, value in config.items():
            self.rbd("config", "image", "set", spec, key, str(value))
        return spec

    def remove_image(self, name: str, pool: str = "rbd") -> None:
        self.rbd("remove", "--no-progress", f"{pool}/{name}")

    def watchers(self, name: str, pool: str = "rbd") -> list[dict[str, object]]:
        """The clients that have the image open (``rbd status``)."""
        status = json.loads(self.rbd("status", "--format", "json", f"{pool}/{name}"))
        found: list[dict[str, object]] = status["watchers"]
        return found

    @contextlib.contextmanager
    def watching(self, name: str, pool: str = "rbd") -> Iterator[int]:
        """Another client has the image open inside the block (``rbd watch``, as krbd,
        rbd-nbd or a VM would); its pid. It closes the image on the way out (a killed client
        would stay a watcher for 30 s, osd_client_watch_timeout)."""
        argv = ["setpriv", "--pdeathsig", "KILL", "--", "rbd", "--conf", str(self.conf)]
        argv += [*_CLIENT_TIMEOUTS, "watch", f"{pool}/{name}"]
        log = self.dir / "log" / f"watch-{time.monotonic_ns()}.out"
        with open(log, "wb") as out:
            # `rbd watch` ends when a line comes on its stdin
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out, stderr=out)
        try:
            _wait_until(
                lambda: bool(self.watchers(name, pool)), {"rbd watch": proc}, 30,
                lambda why: RuntimeError(f"rbd watch {pool}/{name}: {why}\n{tail(log)}"),
            )  # fmt: skip
            yield proc.pid
        finally:
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                proc.communicate(b"\n", timeout=10)
            _kill(proc)
            log.unlink(missing_ok=True)

    def stop(self) -> None:
        """SIGKILL every daemon (the data is throwaway), then remove the directory. Idempotent."""
        self.cleanup.close()


def _mon_host(address: str, v2: int, v1: int) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"[v2:{host}:{v2},v1:{host}:{v1}]"


def _run(argv: list[str], timeout_s: float) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, errors="replace", timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{' '.join(argv)}: no answer within {timeout_s:g} s") from None
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def start_ceph(workdir: Path, *, address: str = "127.0.0.1", mgr: bool = False) -> CephCluster:
    """A one-node cluster under a new directory in ``workdir``, its monitor on two free
    ports of ``address`` (a local address: 127.0.0.1, or a test bridge's for clients in
    network namespaces), with pool ``rbd`` ready. Returns once ``rbd ls`` answers; on any
    failure, a RuntimeError with the tail of the daemons' logs, and nothing left running or
    on disk."""
    for _ in range(3):
        try:
            return _start_ceph(workdir, address, mgr)
        except _PortTaken:
            continue
    raise RuntimeError(
        f"ceph: three pairs of free ports of {address} were taken before the mon bound them"
    )


def _start_ceph(workdir: Path, address: str, mgr: bool) -> CephCluster:
    with ExitStack() as stack:
        top = Path(tempfile.mkdtemp(prefix="ceph-", dir=workdir))
        stack.callback(shutil.rmtree, top, ignore_errors=True)
        try:
            cluster = _configure(top, address, stack)
            daemons = _Daemons(cluster, stack)
            daemons.mon()
            if mgr:
                daemons.mgr()  # it loads its Python modules for seconds: waited for last
            daemons.osd()
            daemons.pool("rbd")
            if mgr:
                daemons.wait("mgr", daemons.mgr_available, interval_s=1)
        except RuntimeError as e:
            raise _with_logs(e, top / "log") from None
        cluster.cleanup = stack.pop_all()
        return cluster
    raise AssertionError("unreachable")  # ExitStack swallows nothing; for mypy


def _with_logs(error: RuntimeError, logs: Path) -> RuntimeError:
    """``error`` with the tails of the daemons' logs, or _PortTaken when the monitor found
    its port taken."""
    tails = "\n".join(f"--- {log}\n{tail(log)}" for log in sorted(logs.glob("*")))
    if "Address already in use" in tails:
        return _PortTaken()
    return RuntimeError(f"{error}\n{tails}")


def _configure(top: Path, address: str, stack: ExitStack) -> CephCluster:
    """ceph.conf, the keyrings (mode 0600), the monmap and the monitor's store."""
    for sub in ("run", "log", "mon/ceph-a", "mgr/ceph-x", "osd"):
        (top / sub).mkdir(parents=True)
    fsid = str(uuid.uuid4())
    v2, v1 = free_ports(address, 2)
    mon_host = _mon_host(address, v2, v1)
    conf = top / "ceph.conf"
    ipv6 = ":" in address
    conf.write_text(
        _CEPH_CONF.format(
            fsid=fsid,
            mon_host=mon_host,
            address=address,
            dir=top,
            ipv4=str(not ipv6).lower(),
            ipv6=str(ipv6).lower(),
        )
    )
    keyring, mon_keyring = top / "admin.keyring", top / "mon.keyring"
    _run(["ceph-authtool", "--create-keyring", str(mon_keyring), "--gen-key", "-n", "mon.",
          "--cap", "mon", "allow *"], 30)  # fmt: skip
    caps = [arg for svc in ("mon", "osd", "mds", "mgr") for arg in ("--cap", svc, "allow *")]
    _run(["ceph-authtool", "--create-keyring", str(keyring), "--gen-key", "-n", "client.admin",
          *caps], 30)  # fmt: skip
    _run(["ceph-authtool", str(mon_keyring), "--import-keyring", str(keyring)], 30)
    for ring in (keyring, mon_keyring):
        ring.chmod(0o600)
    monmap = top / "monmap"
    _run(["monmaptool", "--create", "--addv", "a", mon_host, "--fsid", fsid, str(monmap)], 30)
    _run(["ceph-mon", "--conf", str(conf), "--mkfs", "-i", "a", "--monmap", str(monmap),
          "--keyring", str(mon_keyring)], 60)  # fmt: skip
    return CephCluster(top, conf, keyring, fsid, address, v2, v1, {}, stack)


def _not_up(step: str) -> Callable[[str], RuntimeError]:
    return lambda why: RuntimeError(f"ceph: the {step} did not come up: {why}")


def _succeeds(call: Callable[[], object]) -> Callable[[], bool]:
    """``call`` as a readiness check: True when it raises no RuntimeError."""

    def ready() -> bool:
        try:
            call()
        except RuntimeError:
            return False
        return True

    return ready


class _Daemons:
    """Starting the daemons of a cluster being built, each registered with the stack (killed
    when the start fails or the cluster stops), and waiting for each to be of use."""

    def __init__(self, cluster: CephCluster, stack: ExitStack) -> None:
        self.cluster = cluster
        self.stack = stack
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def spawn(self, kind: str, ident: str) -> None:
        name = f"{kind}.{ident}"
        argv = ["setpriv", "--pdeathsig", "KILL", "--", f"ceph-{kind}"]
        argv += ["--conf", str(self.cluster.conf), "-i", ident, "-f"]
        proc = _spawn(argv, self.cluster.dir / "log" / f"{name}.out")
        self.stack.callback(_kill, proc)
        self.procs[name] = proc
        self.cluster.pids[name] = proc.pid

    def wait(
        self, step: str, ready: Callable[[], bool], timeout_s: float = 60, interval_s: float = 0.05
    ) -> None:
        _wait_until(ready, self.procs, timeout_s, _not_up(step), interval_s)

    def mon(self) -> None:
        self.spawn("mon", "a")
        status = ["ceph", "--conf", str(self.cluster.conf), "-s", "--connect-timeout", "5"]
        self.wait("mon", _succeeds(lambda: _run(status, 10)))

    def mgr(self) -> None:
        keyring = self.cluster.dir / "mgr" / "ceph-x" / "keyring"
        self.cluster.ceph("auth", "get-or-create", "mgr.x", "mon", "allow profile mgr", "osd",
                          "allow *", "mds", "allow *", "-o", str(keyring))  # fmt: skip
        self.spawn("mgr", "x")

    def mgr_available(self) -> bool:
        stat = json.loads(self.cluster.ceph("mgr", "stat", "--format", "json"))
        return bool(stat["available"])

    def osd(self) -> None:
        osd_uuid = str(uuid.uuid4())
        ident = self.cluster.ceph("osd", "create", osd_uuid).strip()
        data = self.cluster.dir / "osd" / f"ceph-{ident}"
        data.mkdir()
        _run(["ceph-osd", "--conf", str(self.cluster.conf), "-i", ident, "--mkfs", "--mkkey",
              "--osd-uuid", osd_uuid, "--no-mon-config"], 60)  # fmt: skip
        self.cluster.ceph("auth", "add", f"osd.{ident}", "osd", "allow *", "mon",
                          "allow profile osd", "mgr", "allow profile osd",
                          "-i", str(data / "keyring"))  # fmt: skip
        self.spawn("osd", ident)

        def up() -> bool:
            dump = json.loads(self.cluster.ceph("osd", "dump", "--format", "json"))
            return any(osd["up"] for osd in dump["osds"])

        self.wait("osd", up)

    def pool(self, name: str) -> None:
        self.cluster.create_pool(name)
        self.wait("pool", _succeeds(lambda: self.cluster.rbd("ls", name, timeout_s=10)))
