"""Many fio servers driven by one fio client: ``fio --client=A a.fio --client=B b.fio ...``.

One fio client process (and one launcher confining it, :mod:`iobench.fio.launch`) per
step, whatever the number of servers, instead of one of each per server: fio's client
connects to every server, sends each its own job file and collects every report. What
comes back is told apart here (docs/clients.md, "Many clients in one fio client"):

- fio's report: each ``client_stats`` entry carries the ``hostname`` and ``port`` of the
  connection it came in on (fio's client sets them, not the server), so a server's entries
  go to that server's client only, with its own ``disk_util`` entries;
- the interval logs: fio's client writes each as ``<name>.<host>``; the job file of client
  ``cN`` names its logs ``iobench-cN_...``, so two servers on one host (two ports) do not
  share names;
- fio's messages: a line that names the client's host (``client: host=10.0.0.3
  disconnected``), or that a server sent (``<name> ...``) under the name the server gave
  itself in a line about that client's own job (``<vm> rr.c2: (g=0): ...``).

A server that stops answering before its job started makes fio's client wait forever
(FIO.md §2.4), and would hold every other server's report with it: at the step's time
limit iobench notes which servers fio's client is still connected to (those did not
finish), asks fio to stop as Ctrl-C would, and then cuts those connections itself
(:func:`cut_connections`: a duplicate of fio's socket, ``pidfd_getfd``, shut down), so fio's
client writes the report of everyone who did finish. Linux only, like the launcher.
"""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import json
import os
import re
import socket
import struct
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iobench.fio.launch import descendants
from iobench.fio.logs import LOG_PREFIX
from iobench.fio.parse import ALL_CLIENTS
from iobench.jsontext import Bad, scan_objects

_SYS_PIDFD_GETFD = 438  # the same number on every architecture
_TCP_FILES = ("tcp", "tcp6")
_CLOSE = "07"  # TCP_CLOSE in /proc/net/tcp: a socket no longer connected

# fio's client's own clock source, given before its first --client (after it, it would be
# a server's job option). It skips the client's clock check (about 0.13 s), so ``RUN``
# follows the job files at once instead of reaching a server that has already gone to
# sleep for a second (fio 3.33 server.c, handle_connection). Left out when several servers
# must start together: they would race ``RUN`` and start up to a second apart. The servers'
# own clocks are untouched. docs/clients.md, "The fio client's clock".
CLIENT_CLOCK = "--clocksource=clock_gettime"


@dataclass(frozen=True)
class ClientJob:
    """One server's share of a group: its job file, under the controller's name for it."""

    key: str  # the client as the user named it (results are stored under it)
    host: str  # what fio's --client gets, before the port
    port: int
    tag: str  # c1, c2 ... (the job file's and its logs' names carry it)
    job_file: str

    @property
    def sections(self) -> tuple[str, ...]:
        """Its job sections' names (its entries in fio's report are named so)."""
        found = re.findall(r"^\[([^\]\n]+)\]", self.job_file, re.M)
        return tuple(name for name in found if name != "global")

    @property
    def address(self) -> str:
        """What fio's --client takes: ``host,port``."""
        return f"{self.host},{self.port}"


def group_argv(
    fio: str,
    out_name: str,
    jobs: Sequence[tuple[ClientJob, str]],
    *,
    readonly: bool,
    formats: str,
    together: bool = False,
) -> list[str]:
    """fio's command line for ``jobs`` (each with its job file's name in the private
    directory): a job file right after its ``--client`` is that server's only; options
    after it (``--readonly``) go to that server too (FIO.md §2.1). ``together``: the jobs
    must start at the same time (a measuring step), so fio's client keeps its clock check
    when there are several (CLIENT_CLOCK)."""
    argv = [fio, f"--output-format={formats}", f"--output={out_name}"]
    if not together or len(jobs) == 1:
        argv.append(CLIENT_CLOCK)
    for job, path in jobs:
        argv += [f"--client={job.address}", path, *(["--readonly"] if readonly else [])]
    return argv


# -- fio's report, told apart ------------------------------------------------------------


def _final_report(raw: str) -> tuple[dict[str, Any] | None, str]:
    """The last report of fio's client in ``raw`` and the text around it."""
    found = [(s, e, o) for s, e, o in scan_objects(raw) if "client_stats" in o]
    if not found:
        return None, raw
    start, end, report = found[-1]
    return report, raw[:start] + raw[end:]


def _of(entries: Any, job: ClientJob) -> list[Any]:
    """The entries of ``job``'s connection, without fio's "All clients" (the sum of every
    server's, attached to whichever reported last)."""
    if not isinstance(entries, list):
        return []
    return [
        e
        for e in entries
        if isinstance(e, dict)
        and e.get("hostname") == job.host
        and e.get("port") == job.port
        and e.get("jobname") != ALL_CLIENTS
    ]


_HEADER = re.compile(r"^<([^>\n]*)> ([^:\n]+): \(g=", re.M)
_SENT = re.compile(r"<([^>\n]*)> |hostname=([^,\n]*),")


class Lines:
    """fio's text indexed once (a group's text grows with its servers, so it is not read
    again for each): the lines that name each host, and those each server name sent
    (``<name> ...``, and the probe's ``hostname=name, ...``)."""

    def __init__(self, text: str, hosts: Iterable[str]) -> None:
        self.lines = text.split("\n")
        self.by_host: dict[str, list[int]] = defaultdict(list)
        self.by_name: dict[str, list[int]] = defaultdict(list)
        wanted = "|".join(sorted({re.escape(h) for h in hosts}, key=len, reverse=True))
        # the host as a word, or ending the name of a log fio's client wrote for it
        # ("fio: open log NAME.<host>: ...", "fio: fopen log NAME.<host> : ...")
        named = (
            re.compile(rf"(?<![\w.:-])({wanted})(?![\w.-])|\.({wanted}) ?: ") if wanted else None
        )
        for i, line in enumerate(self.lines):
            if named is not None:
                for host in {m.group(1) or m.group(2) for m in named.finditer(line)}:
                    self.by_host[host].append(i)
            sent = _SENT.match(line)
            if sent:
                self.by_name[sent.group(1) or sent.group(2)].append(i)

    def about(self, host: str, names: Iterable[str] = ()) -> str:
        """The lines that name ``host`` or that its server sent under ``names``."""
        at = set(self.by_host.get(host, ()))
        for name in names:
            at.update(self.by_name.get(name, ()))
        return "\n".join(self.lines[i] for i in sorted(at))


def lines_about(text: str, job: ClientJob, names: Iterable[str]) -> str:
    """The lines of fio's ``text`` about ``job``'s server (:class:`Lines`)."""
    return Lines(text, [job.host]).about(job.host, names)


def server_names(text: str, jobs: Sequence[ClientJob]) -> dict[str, set[str]]:
    """By client, the names its server gave itself, from the lines it sent about job
    sections that are its alone (``<vm> rr.c2: (g=0): rw=randread ...``)."""
    sent: dict[str, set[str]] = defaultdict(set)
    for m in _HEADER.finditer(text):
        sent[m.group(2)].add(m.group(1))
    counted = Counter(s for job in jobs for s in set(job.sections))
    return {
        job.key: {n for s in job.sections if counted[s] == 1 for n in sent.get(s, ())}
        for job in jobs
    }


def _encode(value: Any) -> Any:
    if isinstance(value, Bad):
        return f"{value.text} ({value.why})"
    raise TypeError(type(value).__name__)


@dataclass(frozen=True)
class Share:
    """One server's share of what a group's fio client left."""

    text: str  # the lines about it, then a report of fio's shape with only its entries
    stdout: str  # its lines of fio's stdout and stderr
    stderr: str
    names: frozenset[str]  # the names its server gave itself


def split_output(
    raw: str, jobs: Sequence[ClientJob], stdout: str = "", stderr: str = ""
) -> dict[str, Share]:
    """Each client's share of fio's output file (``raw``) and streams."""
    report, text = _final_report(raw)
    names = server_names(text, jobs)
    hosts = [job.host for job in jobs]
    said, out, err = Lines(text, hosts), Lines(stdout, hosts), Lines(stderr, hosts)
    shares: dict[str, Share] = {}
    for job in jobs:
        own = ""
        if report is not None:
            mine = {
                **report,
                "client_stats": _of(report.get("client_stats"), job),
                "disk_util": _of(report.get("disk_util"), job),
            }
            own = json.dumps(mine, indent=2, default=_encode)
        if len(jobs) == 1:  # every line is about the one server, as it is
            lines, outs, errs = text.strip("\n"), stdout, stderr
        else:
            lines = said.about(job.host, names[job.key])
            outs, errs = out.about(job.host, names[job.key]), err.about(job.host, names[job.key])
        shares[job.key] = Share(
            (lines + "\n" if lines else "") + own, outs, errs, frozenset(names[job.key])
        )
    return shares


_TAGGED = re.compile(rf"^{LOG_PREFIX}-([A-Za-z0-9]+)_")


def logs_by_client(logs: dict[str, str], jobs: Sequence[ClientJob]) -> dict[str, dict[str, str]]:
    """Each client's interval logs: named by its job file (``iobench-cN_...``) and written
    by fio's client for its host (``... .<host>``)."""
    tags = {job.tag: job for job in jobs}
    found: dict[str, dict[str, str]] = {job.key: {} for job in jobs}
    for name, text in logs.items():
        m = _TAGGED.match(name)
        job = tags.get(m.group(1)) if m else None
        if job is not None and name.endswith(f".{job.host}"):
            found[job.key][name] = text
    return found


# -- fio's connections -------------------------------------------------------------------


def fio_processes(launcher: int) -> list[int]:
    """The fio processes below the launcher (through a PID namespace's init)."""
    found = []
    for pid in descendants(launcher):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip() == "fio":
                found.append(pid)
    return found


def _address(hex_address: str) -> str:
    """An address of /proc/net/tcp{,6} (32-bit words in host order) as text."""
    raw = bytes.fromhex(hex_address)
    words = struct.unpack(f"={len(raw) // 4}I", raw)
    packed = struct.pack(f"!{len(words)}I", *words)
    ip = ipaddress.ip_address(packed)
    mapped = getattr(ip, "ipv4_mapped", None)
    return str(mapped or ip)


def connections(pid: int) -> dict[int, tuple[str, int]]:
    """fio's TCP connections: descriptor -> the server's (address, port)."""
    inodes: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                link = str(fd.readlink())
                if link.startswith("socket:["):
                    inodes[link[8:-1]] = int(fd.name)
    found: dict[int, tuple[str, int]] = {}
    for name in _TCP_FILES:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/net/{name}").read_text().splitlines()[1:]:
                fields = line.split()
                if len(fields) > 9 and fields[9] in inodes and fields[3] != _CLOSE:
                    address, port = fields[2].split(":")
                    found[inodes[fields[9]]] = (_address(address), int(port, 16))
    return found


def peers(jobs: Sequence[ClientJob]) -> dict[tuple[str, int], str]:
    """(address, port) -> the client's key, for every address its host resolves to."""
    found: dict[tuple[str, int], str] = {}
    for job in jobs:
        with contextlib.suppress(OSError):
            for *_, sockaddr in socket.getaddrinfo(job.host, job.port, type=socket.SOCK_STREAM):
                ip = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
                mapped = getattr(ip, "ipv4_mapped", None)
                found[(str(mapped or ip), job.port)] = job.key
    return found


def cut_connections(pid: int, fds: Iterable[int]) -> None:
    """Shut down fio's sockets ``fds`` from outside (a duplicate taken with pidfd_getfd,
    Linux 5.6, which needs the right to trace fio: root, or the user who started it): fio
    sees those servers hang up and goes on without them. Best effort."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return
    getfd = ctypes.CDLL(None, use_errno=True).syscall
    getfd.restype = ctypes.c_long
    try:
        for fd in fds:
            dup = int(getfd(_SYS_PIDFD_GETFD, pidfd, fd, 0))
            if dup < 0:
                continue
            with socket.socket(fileno=dup) as s, contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
    finally:
        os.close(pidfd)
