"""The fio servers a run uses as clients (``--clients``): naming them, and checking them
before anything runs (docs/clients.md).

A client is named ``host`` or ``host:port`` (default port 8765; ``[v6addr]:port``), in a
comma list or a file given as ``@FILE`` (one a line; ``#`` starts a comment). The check
proves, for each client, that a TCP connection opens within a few seconds and that a fio
server there runs a job for this fio: a job on fio's ``null`` engine, which touches no file.

fio 3.33 has no way to ask a server for its clock, but the probe's one IO is logged with
the server's Unix time (``log_unix_epoch``), and it happened while the controller's fio
client was running: so the server's clock minus the controller's lies between the sample
minus the client's end and the sample minus its start (``clock_offset_ms``). That bound is
as wide as the probe took (about a second); it proves a clock wrong, never exactly right.
"""

from __future__ import annotations

import dataclasses
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from iobench.errors import FioFailed, IobenchError, UserError
from iobench.fio.clientgroup import ClientJob
from iobench.fio.confine import SPOOL_BYTES, Confinement, private_directory, spool_bytes
from iobench.fio.jobfile import PATH_VALUE_BYTES
from iobench.fio.logs import log_prefix
from iobench.fio.runner import (
    FioInfo,
    FioRun,
    clipped,
    run_fio,
    run_fio_clients,
    text_outside_json,
)
from iobench.invoker import invoker_rights

FIO_PORT = 8765
CONNECT_TIMEOUT_S = 3.0
PROBE_TIMEOUT_S = 20.0
CLOCK_TOLERANCE_MS = 1000.0  # a clock proven further off than this is worth a warning
# fio reads these specially in an option value (file lists, comments, $-expansion,
# escapes): a path for a fio server must not hold them, since it cannot go through a link.
_FIO_SPECIAL = re.compile(r"[:;#$\\\s]")
# The test file's name that engine/remote.py appends (/iobench-<8 hex>-c<N>.dat) fits in
# this with room to spare; the directory takes the rest of a filename= value.
_REMOTE_NAME_BYTES = 64
MAX_REMOTE_DIR_BYTES = PATH_VALUE_BYTES - _REMOTE_NAME_BYTES
_HOST = re.compile(r"^[A-Za-z0-9._-]+$")


class ClientUnreachable(IobenchError):
    """A client cannot be used: not reachable, no fio server, or an incompatible one."""


@dataclass(frozen=True)
class Client:
    name: str  # as the user gave it: the key of its results
    host: str
    port: int

    @property
    def address(self) -> str:
        """What fio's --client takes: ``host,port``."""
        return f"{self.host},{self.port}"


def parse_client(text: str, where: str) -> Client:
    """``host``, ``host:port`` or ``[v6]:port``; UserError naming ``where`` if malformed."""
    spec = text.strip()
    host, port_text = spec, ""
    if spec.startswith("["):
        end = spec.find("]")
        if end < 0:
            raise UserError(f"{where}: {spec!r} opens [ for an IPv6 address but does not close it")
        host, rest = spec[1:end], spec[end + 1 :]
        if rest and not rest.startswith(":"):
            raise UserError(f"{where}: {spec!r}: after ] comes :port or nothing")
        port_text = rest[1:]
    elif spec.count(":") == 1:
        host, port_text = spec.split(":")
    elif ":" in spec:
        raise UserError(
            f"{where}: {spec!r} looks like an IPv6 address", "write it as [address]:port"
        )
    if not host or not (_HOST.match(host) or spec.startswith("[")):
        raise UserError(
            f"{where}: {spec!r} is not a host name or address",
            "give host or host:port, e.g. node1 or 10.0.0.5:8765",
        )
    port = FIO_PORT
    if port_text:
        if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            raise UserError(f"{where}: {spec!r}: the port must be a number from 1 to 65535")
        port = int(port_text)
    return Client(spec, host, port)


# A host file is a list of names: more than this is not one.
MAX_HOSTS_FILE_BYTES = 1 << 20


def _read_hosts_file(value: str, path: Path) -> str:
    """The text of ``--clients @FILE``: looked at and opened with the rights of the user who
    ran iobench through sudo (iobench.invoker: its lines are quoted in messages, so a link
    to a file only root may read must not be read), a regular file of at most
    MAX_HOSTS_FILE_BYTES (a FIFO would block, /dev/zero never end), its bytes that are
    not UTF-8 kept as escapes."""
    hint = "give a file with one host[:port] a line"
    try:
        with invoker_rights():
            looked = path.stat()  # never opened unless regular: a device may act on an open
            if not stat.S_ISREG(looked.st_mode):
                raise UserError(f"--clients {value}: {path} is not a regular file", hint)
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if (st.st_dev, st.st_ino) != (looked.st_dev, looked.st_ino):
                raise UserError(f"--clients {value}: {path} changed while iobench read it", hint)
            data = f.read(MAX_HOSTS_FILE_BYTES + 1)
    except OSError as e:
        raise UserError(f"--clients {value}: cannot read {path}: {e.strerror}", hint) from e
    if len(data) > MAX_HOSTS_FILE_BYTES:
        raise UserError(
            f"--clients {value}: {path} is larger than {MAX_HOSTS_FILE_BYTES >> 20} MiB: "
            "not a list of hosts",
            hint,
        )
    return data.decode("utf-8", errors="surrogateescape")


def parse_clients(value: str) -> list[Client]:
    """``node1,node2:8766`` or ``@hosts.txt``; every mistake named with its place."""
    if value.startswith("@"):
        path = Path(value[1:])
        lines = _read_hosts_file(value, path).splitlines()
        items = [(line.split("#", 1)[0].strip(), f"{path}:{n}") for n, line in enumerate(lines, 1)]
        items = [(text, where) for text, where in items if text]
    else:
        items = [(part, "--clients") for part in value.split(",")]
        if any(not text.strip() for text, _ in items):
            raise UserError(f"--clients {value!r} has an empty name", "e.g. --clients node1,node2")
    if not items:
        raise UserError(f"--clients {value}: names no client", "one host[:port] a line")
    clients = [parse_client(text, where) for text, where in items]
    seen: dict[tuple[str, int], str] = {}
    for c in clients:
        if (c.host, c.port) in seen:
            raise UserError(
                f"--clients: {c.name} is named twice (also as {seen[(c.host, c.port)]})",
                "name every fio server once",
            )
        seen[(c.host, c.port)] = c.name
    return clients


def check_remote_path(path: str) -> None:
    """A directory path on the clients that fio can take as it is, in the test file's
    ``filename=`` (the directory, then the name engine/remote.py gives the file)."""
    shown = repr(path) if len(path) <= 80 else f"{path[:64]!r}... ({len(path)} characters)"
    if not path.startswith("/"):
        raise UserError(
            f"{shown}: with --clients the target is a directory on every client, given as an "
            "absolute path",
            "e.g. /mnt/shared",
        )
    bad = next((c for c in path if not c.isprintable()), None)
    if bad is not None:
        what = (
            "a byte that is not UTF-8"
            if 0xDC80 <= ord(bad) <= 0xDCFF
            else f"U+{ord(bad):04X}, which is not printable (a line break, a control character)"
        )
        raise UserError(
            f"{shown}: a job file cannot carry this path to the fio servers: it holds {what}",
            "use a directory whose path is plain text",
        )
    if _FIO_SPECIAL.search(path):
        raise UserError(
            f"{shown}: fio would misread this path on its servers (it holds one of : ; # $ \\ "
            "or a blank)",
            "use a directory whose path has none of these",
        )
    size = len(path.encode())
    if size > MAX_REMOTE_DIR_BYTES:
        raise UserError(
            f"{shown}: with --clients the directory's path may be at most "
            f"{MAX_REMOTE_DIR_BYTES} bytes, not {size}: the job file names the test file in "
            f"it by its path, in at most {PATH_VALUE_BYTES} bytes, safely short of the 4096 "
            "that fio's buffers and the kernel take",
            "use a shorter path to the directory on every client (a symbolic link or a bind "
            "mount of a short name)",
        )


# -- the check -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientCheck:
    client: Client
    ok: bool
    problem: str | None  # why not, when not ok
    hostname: str | None  # the server's own name for itself
    fio_version: str | None  # the server's fio
    connect_ms: float | None  # the TCP connection's set-up time
    # The server's clock minus this one's lies in [low, high] ms; None if not measured.
    clock_offset_ms: tuple[float, float] | None = None
    bound: str | None = None  # how fio's client's writes were bounded (iobench.fio.confine)

    @property
    def clock_off(self) -> bool:
        """The server's clock is proven to differ from the controller's by over a second."""
        low, high = self.clock_offset_ms or (0.0, 0.0)
        return low > CLOCK_TOLERANCE_MS or high < -CLOCK_TOLERANCE_MS

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["client"] = self.client.name
        d["clock_offset_ms"] = (
            None
            if self.clock_offset_ms is None
            else {"low": round(self.clock_offset_ms[0]), "high": round(self.clock_offset_ms[1])}
        )
        return d


_PROBE_LINE = re.compile(r"hostname=(?P<host>[^,]*),.*\bfio=(?P<fio>[^,\s]+)")


def _probe_job(name: str, tag: str | None = None) -> str:
    """One 4 KiB read on fio's null engine (it touches no file), its completion logged with
    the server's Unix time; the job's ``name`` is new for every check, so a report that
    holds it comes from a job run now. ``tag``: its logs' own prefix among a group's."""
    return (
        f"[{name}]\nioengine=null\nsize=4k\nrw=read\nbs=4k\n"
        f"write_lat_log={log_prefix(tag)}\nlog_unix_epoch=1\n"
    )


def _connect_ms(c: Client, timeout_s: float) -> float:
    started = time.monotonic()
    with socket.create_connection((c.host, c.port), timeout=timeout_s):
        return (time.monotonic() - started) * 1000


def check_client(c: Client, fio: FioInfo, confined: Confinement) -> ClientCheck:
    """Whether ``c`` can run this fio's jobs, and what it says about itself; fio's client
    runs ``confined`` (iobench.fio.confine), as every client of a run does, writing at
    most SPOOL_BYTES, and iobench keeps at most the end of what it prints.

    The check passes only when fio's report holds this check's own job (a name made for
    it) with its 4 KiB read done: a server that merely answers, or prints the right words,
    does not pass."""
    connect = _connected(c)
    if isinstance(connect, ClientCheck):
        return connect
    own = private_directory(confined)  # fio's client writes the log here, and only here
    name = f"iobench-probe-{secrets.token_hex(8)}"
    try:
        started = time.time()
        run = run_fio(
            fio, _probe_job(name), own, timeout_s=PROBE_TIMEOUT_S, name="probe",
            client=c.address, confined=confined, spool_bytes=SPOOL_BYTES, check=False,
            formats="normal,json",
        )  # fmt: skip
        ended = time.time()
    except FioFailed:  # stopped at the time limit
        return ClientCheck(c, False, _NO_JOB, None, None, connect)
    finally:
        shutil.rmtree(own, ignore_errors=True)
    return _checked(c, fio, run, name, connect, (started, ended))


def _checked(
    c: Client, fio: FioInfo, run: FioRun, name: str, connect: float, span: tuple[float, float]
) -> ClientCheck:
    """The check's verdict from fio's report of the probe job."""
    text = run.raw_output + "\n" + run.stdout + "\n" + run.stderr
    probe = _PROBE_LINE.search(text)
    hostname = probe.group("host") if probe else None
    version = probe.group("fio").removeprefix("fio-") if probe else None
    jobs = [j for j in (run.output.jobs if run.output else ()) if j.jobname == name]
    read = jobs[0].read if jobs and jobs[0].error == 0 else None
    if run.returncode != 0 or read is None or read.io_bytes != 4096:
        # fio's last lines, as it wrote them (a line ends at a newline only).
        shown = text_outside_json(run.raw_output) + "\n" + run.stdout + "\n" + run.stderr
        lines = [clipped(line.strip()) for line in shown.split("\n") if line.strip()]
        said = "; ".join(lines[-3:]) or "nothing"
        if run.returncode < 0 and -run.returncode != signal.SIGPIPE:
            # fio's client died of what it was sent (SIGPIPE: the server hung up on it)
            why = (
                f"fio's client died of signal {-run.returncode} on what the server sent (a "
                "broken or hostile server, or more than the client may hold)"
            )
        elif version and version != fio.version:
            why = (
                f"its fio {version} cannot run jobs for this fio {fio.version} (fio's "
                "client/server protocol must match exactly)"
            )
        elif probe is None and not jobs:
            why = "it does not answer as a fio server (or speaks another fio version)"
        else:
            why = "the fio server did not run the test job"
        return ClientCheck(c, False, f"{why}; fio said: {said}", hostname, version, connect)
    sample = _first_sample_ms(run.logs)
    started, ended = span
    offset = None if sample is None else (sample - ended * 1000, sample - started * 1000)
    bound = run.launched.get("bound")
    return ClientCheck(c, True, None, hostname, version, connect, offset,
                       bound if isinstance(bound, str) else None)  # fmt: skip


def _first_sample_ms(logs: dict[str, str]) -> float | None:
    """The Unix time (ms, server clock) of the probe's IO, from the log fio's client wrote."""
    for log_name, text in logs.items():
        if "_lat." in log_name:
            first = text.split(",", 1)[0].strip()
            if first.isdigit():
                return float(first)
    return None


def check_clients(
    clients: Sequence[Client], fio: FioInfo, confined: Confinement
) -> list[ClientCheck]:
    """Every client checked at once: a connection to each (CONNECT_TIMEOUT_S), then a
    probe job on every one that answered, all from one fio client (within PROBE_TIMEOUT_S).
    A client that fails among the others is checked again alone (unless it did not answer
    in time), so that what is said of it is its own doing, not another server's."""
    with ThreadPoolExecutor(max_workers=min(64, max(1, len(clients)))) as pool:
        connected = dict(zip(clients, pool.map(_connected, clients), strict=True))
    reachable = [c for c, got in connected.items() if isinstance(got, float)]
    probed = _probe_all(reachable, fio, confined, connected) if reachable else {}
    verdicts: list[ClientCheck] = []
    for c in clients:
        got = connected[c]
        verdict = got if isinstance(got, ClientCheck) else probed[c.name]
        if not verdict.ok and len(reachable) > 1 and verdict.problem != _NO_JOB:
            verdict = check_client(c, fio, confined)
        verdicts.append(verdict)
    return verdicts


def _connected(c: Client) -> float | ClientCheck:
    """The time to connect to ``c`` (ms), or its failed check."""
    try:
        return _connect_ms(c, CONNECT_TIMEOUT_S)
    except OSError as e:
        why = (
            f"no answer within {CONNECT_TIMEOUT_S:g} s"
            if isinstance(e, TimeoutError)
            else (e.strerror or str(e))
        )
        return ClientCheck(c, False, f"cannot connect to {c.host} port {c.port}: {why}",
                           None, None, None)  # fmt: skip


def _probe_all(
    clients: Sequence[Client],
    fio: FioInfo,
    confined: Confinement,
    connected: dict[Client, float | ClientCheck],
) -> dict[str, ClientCheck]:
    """The probe job on every client of ``clients`` from one fio client: each verdict."""
    names = {c.name: f"iobench-probe-{secrets.token_hex(8)}" for c in clients}
    jobs = [
        ClientJob(c.name, c.host, c.port, f"p{i + 1}", _probe_job(names[c.name], f"p{i + 1}"))
        for i, c in enumerate(clients)
    ]
    own = private_directory(confined)  # fio's client writes the logs here, and only here
    try:
        started = time.time()
        runs = run_fio_clients(
            fio, jobs, own, timeout_s=PROBE_TIMEOUT_S, name="probe", confined=confined,
            spool_bytes=spool_bytes(0, 1, len(jobs)), formats="normal,json", check=False,
        )  # fmt: skip
        ended = time.time()
    finally:
        shutil.rmtree(own, ignore_errors=True)
    verdicts = {}
    for c in clients:
        run, connect = runs[c.name], connected[c]
        assert isinstance(connect, float)
        if isinstance(run, FioRun):
            verdicts[c.name] = _checked(c, fio, run, names[c.name], connect, (started, ended))
        else:  # it did not finish in time
            verdicts[c.name] = ClientCheck(c, False, _NO_JOB, None, None, connect)
    return verdicts


_NO_JOB = (
    f"the fio server accepted the connection but did not run a test job within "
    f"{PROBE_TIMEOUT_S:.0f} s (hung or overloaded?)"
)


def bounded(confined: Confinement, checks: Sequence[ClientCheck]) -> Confinement:
    """``confined`` with the bound the checks' clients really had."""
    bound = next((c.bound for c in checks if c.bound), None)
    return dataclasses.replace(confined, bound=bound)


def require_clients(checks: Sequence[ClientCheck]) -> None:
    """ClientUnreachable naming every client that failed its check."""
    bad = [c for c in checks if not c.ok]
    if bad:
        names = "; ".join(f"{c.client.name}: {c.problem}" for c in bad)
        raise ClientUnreachable(
            f"{len(bad)} of {len(checks)} client(s) cannot be used, so nothing was started: "
            f"{names}",
            "start `fio --server` there (the same fio version as here), or leave the client "
            "out; `iobench clients check` tests them",
        )
