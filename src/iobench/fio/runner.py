"""The only code that starts fio.

fio runs without a shell, in its own process group, under iobench's launcher
(:mod:`iobench.fio.launch`: fio ends when iobench ends, however iobench ends), writing
``json+`` to a file of its own (never parsed from stdout, which may hold other text).
``--status-interval=1`` makes fio append a cumulative snapshot every second, which drives
the live progress display; the last object in the file is the final report. A hard timeout,
Ctrl-C and SIGTERM stop fio and every process it forked.

fio is started from the thread that waits for it: the launcher's parent-death signal comes
when that *thread* ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iobench.errors import FioFailed, FioMissing, FioOutputError
from iobench.fio import launch
from iobench.fio.clientgroup import (
    CLIENT_CLOCK,
    ClientJob,
    Share,
    connections,
    cut_connections,
    fio_processes,
    group_argv,
    logs_by_client,
    peers,
    split_output,
)
from iobench.fio.confine import (
    CLIENT_MEMORY_BYTES,
    FILE_SIZE_LIMIT,
    SERVER_MEMORY_BYTES,
    SERVER_SPOOL_BYTES,
    SPOOL_BYTES,
    Confinement,
)
from iobench.fio.jobfile import TARGET_LINK, checked
from iobench.fio.logs import LOG_PREFIX
from iobench.fio.parse import parse_fio_output
from iobench.jsontext import scan_objects
from iobench.model import FioOutput
from iobench.probe.host import read_text

MIN_FIO = (3, 0)
INSTALL_HINT = (
    "install fio from your distribution: `apt-get install fio` (Debian/Ubuntu), "
    "`dnf install fio` (Fedora/RHEL), `zypper install fio` (SUSE)"
)
POLL_S = 0.25
# Seconds of margin on top of ramp + runtime before a step is declared hung. For a fio
# client, fio itself gives up on a server that stops answering after about 43 s (FIO.md
# §2.4), and that is worth waiting for.
TIMEOUT_MARGIN_S = 60.0
GRACE_S = 3.0


@dataclass(frozen=True)
class FioInfo:
    path: str
    version: str  # e.g. "3.33"


@dataclass(frozen=True)
class LiveStats:
    """What fio reported in its latest snapshot; rates cover the last interval."""

    elapsed_s: float
    iops: float | None
    bw_bytes: float | None
    io_bytes: int | None = None  # moved so far, all jobs and directions
    io_s: float | None = None  # fio's own time of IO at its latest snapshot


@dataclass(frozen=True)
class FioRun:
    """Everything one fio invocation left behind: the evidence and the parsed result."""

    argv: list[str]
    job_file: str
    returncode: int
    stdout: str
    stderr: str
    raw_output: str
    output: FioOutput | None
    started_at: float
    finished_at: float
    logs: dict[str, str] = field(default_factory=dict)  # interval logs: file name -> text
    cgroup: str | None = None  # fio's /proc/PID/cgroup as it started: the throttles it ran under
    launched: dict[str, Any] = field(default_factory=dict)  # what the launcher applied


def find_fio() -> FioInfo:
    """Locate fio on PATH and check its version (>= 3.0)."""
    path = shutil.which("fio")
    if path is None:
        raise FioMissing("fio is not installed (no `fio` on PATH)", INSTALL_HINT)
    rc, said = _ask_fio([path, "--version"], None)
    if rc == -1:
        raise FioMissing(f"{path} --version did not answer: {said}", INSTALL_HINT)
    text = said.strip()
    m = re.search(r"fio-(\d+)\.(\d+)", text)
    if rc != 0 or m is None:
        raise FioMissing(
            f"{path} does not look like fio: `fio --version` printed {text[:120]!r}", INSTALL_HINT
        )
    major, minor = int(m.group(1)), int(m.group(2))
    if (major, minor) < MIN_FIO:
        raise FioMissing(
            f"fio {major}.{minor} at {path} is too old; iobench needs fio 3.0 or newer",
            INSTALL_HINT,
        )
    return FioInfo(path=path, version=text.removeprefix("fio-").split()[0])


HELP_TIMEOUT_S = 15
MAX_HELP_BYTES = 1 << 20  # fio 3.33's whole --cmdhelp=all is 13 KB


def fio_help(path: str, args: list[str]) -> str:
    """What ``fio ARGS`` (``--cmdhelp=...``, ``--enghelp=...``: fio's own description of its
    options, iobench.fio.catalogue) prints, stdout then stderr, bounded; "" when it does not
    answer."""
    rc, out = _ask_fio([path, *args], None)
    return "" if rc == -1 else out


def fio_parse_only(path: str, job_text: str) -> tuple[int, str]:
    """``fio --parse-only`` on ``job_text`` (given on fio's standard input): fio's own
    checks of every option, nothing run; (its exit status, what it printed)."""
    return _ask_fio([path, "--parse-only", "-"], job_text.encode("utf-8"))


# Answers of short fio commands (--version, --parse-only, --cmdhelp) already given in this
# process: each fio start costs about 0.15 s of CPU in fio's clock calibration (gettime.c
# fio_clock_init, twice on a TSC it trusts), whatever it is asked, and a process asks the
# same again (the same suite checked by several commands of one session, a test run). An
# answer is kept by everything it can depend on: the binary's identity (device, inode,
# size, change time: a replaced or updated fio is another key), the question, the
# environment (fio expands ${VAR} in job files) and the working directory; a job text that
# includes other files is asked every time (they may change). Bounded: a file of many
# distinct jobs asks once each, and the oldest answers go first.
_ASKED: dict[tuple[object, ...], tuple[int, str]] = {}
MAX_ASKED = 512
_INCLUDES = re.compile(rb"^\s*include\s", re.MULTILINE)


def _identity(path: str) -> tuple[object, ...] | None:
    """What an answer of the fio at ``path`` depends on besides the question: the binary
    (device, inode, size, change time), the working directory and the environment; None
    when one of them cannot be read (the answer is then not kept)."""
    try:
        st = Path(path).stat()
        cwd = str(Path.cwd())
    except OSError:
        return None
    binary = (st.st_dev, st.st_ino, st.st_size, st.st_ctime_ns)
    return binary, cwd, tuple(sorted(os.environ.items()))


def _ask_fio(argv: list[str], given: bytes | None) -> tuple[int, str]:
    """(exit status, stdout then stderr, bounded) of a short fio command that does no I/O;
    (-1, why) when it cannot start or does not answer within HELP_TIMEOUT_S, in which case
    it is killed with everything it started (a session of its own). An answer is kept for
    the same question in the same circumstances (``_ASKED``); a failure to answer is not."""
    identity = _identity(argv[0])
    if given is not None and _INCLUDES.search(given):
        identity = None  # never kept
    key = (argv[0], identity, tuple(argv[1:]), given)
    if identity is not None and key in _ASKED:
        return _ASKED[key]
    answer = _ask_fio_now(argv, given)
    if identity is not None and answer[0] != -1:
        if len(_ASKED) >= MAX_ASKED:
            del _ASKED[next(iter(_ASKED))]
        _ASKED[key] = answer
    return answer


def _ask_fio_now(argv: list[str], given: bytes | None) -> tuple[int, str]:
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if given is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except (OSError, ValueError) as e:
        return -1, str(e)
    try:
        out, err = proc.communicate(given, timeout=HELP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return -1, f"{argv[0]} did not answer within {HELP_TIMEOUT_S} s"
    return proc.returncode, (out[:MAX_HELP_BYTES] + b"\n" + err[:MAX_HELP_BYTES]).decode(
        "utf-8", "replace"
    )


@dataclass(frozen=True)
class Held:
    """The target as fio reaches it: a descriptor iobench holds open (``/proc/self/fd/N``,
    which fio inherits), never a path that someone could point elsewhere meanwhile; with
    ``created``, its path, iobench's own test file, which the launcher removes if iobench
    dies (docs/safety.md)."""

    fd: int
    created: str | None = None


def link_target(workdir: Path, held: Held) -> None:
    """Point ``workdir/target`` (the name job files use) at the file or device iobench
    holds open."""
    link = workdir / TARGET_LINK
    link.unlink(missing_ok=True)
    link.symlink_to(f"/proc/self/fd/{held.fd}")


def fio_argv(
    fio: str,
    job_path: Path,
    out_path: Path,
    *,
    client: str | None = None,
    readonly: bool = False,
    formats: str = "json+",
) -> list[str]:
    """How iobench starts fio for one job file."""
    return [
        fio,
        f"--output-format={formats}",
        f"--output={out_path}",
        # Arguments after --client go to the server too: it refuses writes itself.
        *([CLIENT_CLOCK, f"--client={client}"] if client else ["--status-interval=1"]),
        *(["--readonly"] if readonly else []),
        str(job_path),
    ]


def run_fio(
    fio: FioInfo,
    job_file: str,
    workdir: Path,
    *,
    timeout_s: float | None,
    stall_s: float | None = None,
    on_progress: Callable[[LiveStats], None] | None = None,
    name: str = "job",
    readonly: bool = False,
    client: str | None = None,
    confined: Confinement | None = None,
    spool_bytes: int = SPOOL_BYTES,
    held: Held | None = None,
    stop: threading.Event | None = None,
    check: bool = True,
    formats: str = "json+",
    env: tuple[tuple[str, str], ...] = (),
) -> FioRun:
    """Run one job file and return its evidence; raise FioFailed when fio failed (with
    ``check``; else only when iobench stopped it), and UnsafeJobFile (before fio starts)
    when fio would misread a line of it.

    ``client`` (``host,port``): run it on that fio server (``fio --client``); the job file
    then names its files by their paths on the server, fio's client writes the logs the
    server sends as ``NAME.<host>``, and no snapshots drive the progress (fio would append
    them to the report). The client is ``confined`` (required then) to ``workdir``, which
    must come from :func:`iobench.fio.confine.private_directory`: a server chooses the
    names of the files it writes, and it may write ``spool_bytes`` in all. ``held``: the
    target fio reaches through ``workdir/target`` (runs on this host). ``stop``: when set
    (from another thread), fio is stopped as on a timeout. ``formats``: fio's
    ``--output-format`` (``normal,json+`` adds fio's text around the report).
    ``workdir`` is a private directory owned by the caller, and fio's working directory;
    the job file, fio's output and its stdout/stderr are written there. ``timeout_s`` is a
    hard limit (None: none); ``stall_s`` stops fio when the bytes it has moved stop growing
    for that long. ``readonly`` adds fio's own ``--readonly`` guard. On KeyboardInterrupt
    (or any exception raised by a signal handler) fio's whole process group is stopped
    before the exception propagates.
    """
    job_path = workdir / f"{name}.fio"
    out_path = workdir / f"{name}.json"
    job_path.write_text(checked(job_file), encoding="utf-8")
    argv = fio_argv(
        fio.path,
        Path(job_path.name),
        Path(out_path.name),
        client=client,
        readonly=readonly,
        formats=formats,
    )
    if client is not None and confined is None:
        raise ValueError("fio's client runs only confined")
    if held is not None:
        link_target(workdir, held)
    ended = _execute(
        Launcher(workdir, argv, confined if client else None, spool_bytes, held, env),
        name,
        out_path,
        local=client is None,
        timeout_s=timeout_s,
        stall_s=stall_s,
        on_progress=on_progress,
        stop=stop,
    )
    run = _evidence(
        workdir, name, argv, job_file, ended, local=client is None, linked=held is not None
    )
    if ended.stopped is not None:
        raise FioFailed(
            ended.stopped,
            _stopped_hint(client),
            argv=argv,
            returncode=ended.returncode,
            stderr=ended.stderr,
        )
    if check:
        check_run(run)
    return run


def run_fio_clients(
    fio: FioInfo,
    jobs: Sequence[ClientJob],
    workdir: Path,
    *,
    timeout_s: float | None,
    name: str,
    confined: Confinement,
    spool_bytes: int,
    stop: threading.Event | None = None,
    readonly: bool = False,
    formats: str = "json+",
    check: bool = True,
    together: bool = False,
) -> dict[str, FioRun | FioFailed]:
    """Each job of ``jobs`` on its own fio server, all from one fio client under one
    launcher (:mod:`iobench.fio.clientgroup`), confined as :func:`run_fio` confines one; by
    client key, its own evidence checked as :func:`check_run` checks a run (its entries,
    its logs, the lines about it), or why it failed. At ``timeout_s`` the servers fio's
    client still waits for fail ("did not finish"), the others' results are kept; when
    ``stop`` is set every one fails. Without ``check`` a client's evidence is returned as
    it is, unless it did not finish. ``together``: the jobs must start at the same time
    (a measuring step; :func:`iobench.fio.clientgroup.group_argv`)."""
    named = []
    for job in jobs:
        path = workdir / f"{name}.{job.tag}.fio"
        path.write_text(checked(job.job_file), encoding="utf-8")
        named.append((job, path.name))
    out_path = workdir / f"{name}.json"
    argv = group_argv(
        fio.path, out_path.name, named, readonly=readonly, formats=formats, together=together
    )
    stopper = _GroupStopper(jobs)
    launcher = Launcher(workdir, argv, confined, spool_bytes, servers=len(jobs))
    ended = _execute(
        launcher, name, out_path, local=False, timeout_s=timeout_s, stall_s=None,
        on_progress=None, stop=stop, stopper=stopper,
    )  # fmt: skip
    for _, path_name in named:
        (workdir / path_name).unlink(missing_ok=True)
    run = _evidence(
        workdir, name, argv, "", ended, local=False, linked=False, parse=False, servers=len(jobs)
    )
    shares = split_output(run.raw_output, jobs, run.stdout, run.stderr)
    logs = logs_by_client(run.logs, jobs)
    everyone = ended.stopped is not None and stop is not None and stop.is_set()
    out: dict[str, FioRun | FioFailed] = {}
    for job in jobs:
        own = _share(run, job, shares[job.key], logs[job.key])
        if ended.stopped and (everyone or job.key in stopper.unfinished):
            out[job.key] = FioFailed(
                ended.stopped, _stopped_hint(job.address), argv=argv,
                returncode=ended.returncode, stderr=own.stderr,
            )  # fmt: skip
            continue
        try:
            if check:
                check_run(own)
        except FioFailed as e:
            out[job.key] = e
            continue
        out[job.key] = own
    return out


def _share(run: FioRun, job: ClientJob, share: Share, logs: dict[str, str]) -> FioRun:
    """One client's part of a group's evidence: its share of the output (the lines about
    it and its report), of fio's stdout and stderr, its logs; exit code 0 when its report
    is there without an error, else fio's."""
    output: FioOutput | None = None
    with contextlib.suppress(FioOutputError):
        output = parse_fio_output(share.text, source=f"fio's report for {job.key}")
    clean = output is not None and bool(output.jobs) and not any(j.error for j in output.jobs)
    return dataclasses.replace(
        run,
        job_file=job.job_file,
        returncode=0 if clean else (run.returncode or 1),
        stdout=share.stdout,
        stderr=share.stderr,
        raw_output=share.text,
        output=output,
        logs=logs,
    )


class _GroupStopper:
    """Stops a group's fio client at its time limit, noting which servers it was still
    connected to (those did not finish): Ctrl-C's way first (fio's client asks those
    servers to stop their jobs and waits for their reports), then their connections cut
    from outside (a server that does not answer at all), then the usual stop sequence."""

    def __init__(self, jobs: Sequence[ClientJob]) -> None:
        self.jobs = jobs
        self.unfinished: set[str] = set()
        self._peers: dict[tuple[str, int], str] | None = None

    def __call__(self, proc: subprocess.Popen[bytes]) -> None:
        self._peers = peers(self.jobs)
        fios = fio_processes(proc.pid)
        self._note(fios)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        if self._wait(proc, fios):
            return
        for pid in fios:
            cut_connections(pid, connections(pid))
        if not self._wait(proc, fios):
            stop_process_group(proc)

    def _note(self, fios: list[int]) -> None:
        assert self._peers is not None
        for pid in fios:
            for peer in connections(pid).values():
                key = self._peers.get(peer)
                if key is not None:
                    self.unfinished.add(key)

    def _wait(self, proc: subprocess.Popen[bytes], fios: list[int]) -> bool:
        """Whether fio's client ended within GRACE_S; the servers it is connected to
        meanwhile are noted too (one it had not reached yet at the limit)."""
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return True
            self._note(fios)
            time.sleep(0.1)
        return proc.poll() is not None


def _evidence(
    workdir: Path,
    name: str,
    argv: list[str],
    job_file: str,
    ended: _Ended,
    *,
    local: bool,
    linked: bool,
    parse: bool = True,
    servers: int = 1,
) -> FioRun:
    """What one fio left in ``workdir``, read (bounded, never through a link) and removed;
    ``linked``: fio reached the target through ./target (not through an engine of its own);
    ``parse``: its report parsed (else left to the caller: output None)."""
    out_path = workdir / f"{name}.json"
    tail = MAX_CLIENT_OUTPUT_BYTES + (servers - 1) * SERVER_SPOOL_BYTES  # each one's report
    raw = read_private(out_path, tail=None if local else tail)
    logs = _take_logs(workdir)
    for suffix in ("fio", "json", "stdout", "stderr"):
        (workdir / f"{name}.{suffix}").unlink(missing_ok=True)  # the caller stores what it
        # needs; keep /tmp small
    if linked:
        _check_target_link(workdir, argv, ended)
    output: FioOutput | None = None
    with contextlib.suppress(FioOutputError):
        output = parse_fio_output(raw, source=str(out_path)) if parse else None
    return FioRun(
        argv=argv,
        job_file=job_file,
        returncode=ended.returncode,
        stdout=ended.stdout,
        stderr=ended.stderr,
        raw_output=raw,
        output=output,
        started_at=ended.started_at,
        finished_at=ended.finished_at,
        logs=logs,
        cgroup=ended.cgroup,
        launched=ended.launched,
    )


@dataclass(frozen=True)
class Launcher:
    """How one fio is started: under the launcher (iobench.fio.launch), in ``workdir``;
    a client ``confined``, writing at most ``spool_bytes``; the target ``held``."""

    workdir: Path
    argv: list[str]  # fio's own, names relative to the workdir (a confined client may not
    # see the way there)
    confined: Confinement | None = None
    spool_bytes: int = SPOOL_BYTES
    held: Held | None = None
    env: tuple[tuple[str, str], ...] = ()  # added to fio's environment
    servers: int = 1  # how many fio servers the client talks to (iobench.fio.clientgroup)

    def command(self, status_fd: int | None) -> tuple[list[str], tuple[int, ...]]:
        """The command line, and the descriptors it inherits."""
        options = ["--parent", str(os.getpid()), "--dir", str(self.workdir), "--ns"]
        fds: list[int] = []
        if status_fd is not None:
            options += ["--status", str(status_fd)]
            fds.append(status_fd)
        c = self.confined
        if c is not None:
            options += ["--spool", str(self.spool_bytes), "--fsize", str(FILE_SIZE_LIMIT)]
            memory = self.spool_bytes + CLIENT_MEMORY_BYTES + self.servers * SERVER_MEMORY_BYTES
            options += ["--data", str(memory), "--nofile", str(64 + 2 * self.servers)]
            options += ["--landlock", str(c.landlock_abi)]
            if c.uid is not None:
                options += ["--uid", str(c.uid), "--gid", str(c.gid)]
        if self.held is not None:
            fds.append(self.held.fd)
            if self.held.created:
                options += ["--owned", str(self.held.fd), self.held.created]
        script = [sys.executable, "-I", "-S", launch.__file__]
        return [*script, *options, "--", *self.argv], tuple(fds)


@dataclass(frozen=True)
class _Ended:
    """How one fio process ended, before its output is read."""

    returncode: int
    stdout: str
    stderr: str
    started_at: float
    finished_at: float
    cgroup: str | None  # fio's /proc/PID/cgroup as it started (local runs only)
    stopped: str | None  # why iobench stopped it; None when it exited by itself
    launched: dict[str, Any]  # what the launcher applied (namespaces, the bound)


# Of fio's stdout and stderr, iobench keeps the end: fio's messages, not a server's flood.
MAX_TEXT_BYTES = 1 << 20


def _tail(f: Any) -> str:
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(max(size - MAX_TEXT_BYTES, 0))
    text: str = f.read(MAX_TEXT_BYTES).decode(errors="replace")
    return text if size <= MAX_TEXT_BYTES else "[...]\n" + text.partition("\n")[2]


def _execute(
    launcher: Launcher,
    name: str,
    out_path: Path,
    *,
    local: bool,
    timeout_s: float | None,
    stall_s: float | None,
    on_progress: Callable[[LiveStats], None] | None,
    stop: threading.Event | None,
    stopper: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> _Ended:
    """Start fio under the launcher, without a shell, stdin closed, in a new session (its
    own process group), wait for it under the limits, and reap its group. Any exception
    while waiting (Ctrl-C, a signal handler's) stops the whole group before it propagates."""
    workdir = launcher.workdir
    started = time.time()
    status_r, status_w = os.pipe()
    with (
        (workdir / f"{name}.stdout").open("w+b") as out_f,
        (workdir / f"{name}.stderr").open("w+b") as err_f,
        os.fdopen(status_r, "rb") as status_f,
    ):
        command, fds = launcher.command(status_w)
        try:
            proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out_f,
                stderr=err_f,
                start_new_session=True,
                cwd=workdir,
                pass_fds=fds,
                env={**os.environ, **dict(launcher.env)} if launcher.env else None,
            )
        finally:
            os.close(status_w)
        # Local runs: the cgroups fio runs in (and so its IO throttles); a client's are not
        # the server's.
        cgroup = read_text(f"/proc/{proc.pid}/cgroup") if local else None
        try:
            watch = _Watch(proc, out_path, timeout_s, stall_s, on_progress, stop, stopper)
            stopped = watch.wait()
        except BaseException:
            stop_process_group(proc)
            raise
        finally:
            _reap_group(proc.pid)
        stdout, stderr = _tail(out_f), _tail(err_f)
        os.set_blocking(status_r, False)  # said before fio started, or never
        try:
            said = status_f.read(4096) or b""
        except BlockingIOError:
            said = b""
        launched = _launched(said)
    return _Ended(
        returncode=proc.returncode,
        stdout=stdout,
        stderr=stderr,
        started_at=started,
        finished_at=time.time(),
        cgroup=cgroup,
        stopped=stopped,
        launched=launched,
    )


def _launched(said: bytes) -> dict[str, Any]:
    """What the launcher said it applied ({} when it said nothing readable)."""
    try:
        value = json.loads(said or b"{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _take_logs(workdir: Path) -> dict[str, str]:
    """fio's interval logs in ``workdir`` (file name -> text), removed once read."""
    logs: dict[str, str] = {}
    for log in workdir.glob(f"{LOG_PREFIX}[-_]*.log*"):
        logs[log.name] = read_private(log)
        log.unlink()
    return logs


def _check_target_link(workdir: Path, argv: list[str], ended: _Ended) -> None:
    """Raise FioFailed when fio removed the link to the target, or replaced it with a file
    of its own: it does that to a file it finds smaller than the test area (jobfile.NO_CREATE
    keeps it from creating one), which happens only when the target shrank since iobench
    checked its size before the step."""
    link = workdir / TARGET_LINK
    if link.is_symlink():
        return
    made = link.exists()
    if made:  # fio was allowed to create it: it would have measured the private directory
        link.unlink()
        did = "replaced the link to it with a file of its own"
    else:
        did = "removed the link to it, then was not allowed to make a file of its own "
        did += "(nothing was written)"
    raise FioFailed(
        f"fio found the target smaller than the test area and {did}, so it did not test the "
        "target: the target shrank while fio started (someone truncated it)",
        "make sure nobody else changes the target while iobench runs",
        argv=argv,
        returncode=ended.returncode,
        stderr=ended.stderr,
    )


def _stopped_hint(client: str | None) -> str:
    """What to check when iobench had to stop fio (timeout, stall)."""
    if client:
        return (
            f"the fio server {client} or the storage under it may be hanging: check that "
            "host, its `dmesg` and the mount; then retry"
        )
    return (
        "the target may be hanging (a stalled network mount or a failing disk): "
        "check `dmesg` and the mount; then retry"
    )


MAX_OUTPUT_BYTES = 256 << 20  # far beyond any fio report or interval log
# Of the output file of fio's client, iobench keeps the end: the report, which fio's client
# writes last, after the text its server sent (a server may send hundreds of MiB of it).
MAX_CLIENT_OUTPUT_BYTES = 16 << 20
_HEAD_BYTES = 64 << 10  # ... and its start: what fio's client says of the server it reached
# A line of fio's that a message quotes is cut to this many characters (a fio server can
# send a line of megabytes).
QUOTED_LINE_CHARS = 300
_ODD = (
    "fio (or, with --clients, a fio server) left something else than its report in "
    "iobench's private directory: run again, and if it recurs, check the fio server"
)


def read_private(path: Path, *, tail: int | None = None) -> str:
    """A file fio (or its confined client) wrote in a private directory: never through a
    link, only a regular file, at most MAX_OUTPUT_BYTES; "" when there is none. With
    ``tail``, whatever its size: its first lines (_HEAD_BYTES) and its last ``tail`` bytes
    (from a line's start)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return ""
    except OSError as e:
        raise FioOutputError(f"cannot read fio's output {path}: {e.strerror or e}", _ODD) from e
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FioOutputError(f"fio's output {path} is not a regular file", _ODD)
        if tail is not None and st.st_size > tail + _HEAD_BYTES:
            head = f.read(_HEAD_BYTES).rpartition(b"\n")[0]  # fio's first lines
            f.seek(st.st_size - tail)
            end = f.read(tail).partition(b"\n")[2]
            return (head + b"\n[...]\n" + end).decode(errors="replace")
        data = f.read(MAX_OUTPUT_BYTES + 1)
    if len(data) > MAX_OUTPUT_BYTES:
        raise FioOutputError(
            f"fio's output {path} is larger than {MAX_OUTPUT_BYTES >> 20} MiB: not a report",
            _ODD,
        )
    return data.decode(errors="replace")


class _Watch:
    """Waits for fio: reads its 1 s snapshots for progress and enforces the limits."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        out_path: Path,
        timeout_s: float | None,
        stall_s: float | None,
        on_progress: Callable[[LiveStats], None] | None,
        stop: threading.Event | None = None,
        stopper: Callable[[subprocess.Popen[bytes]], None] | None = None,
    ) -> None:
        self.stop = stop
        self.stopper = stopper or stop_process_group
        self.proc = proc
        self.out_path = out_path
        self.timeout_s = timeout_s
        self.stall_s = stall_s
        self.on_progress = on_progress
        self.offset = 0  # fio's output up to here has been read
        self.last: tuple[float, int, int] | None = None  # (elapsed_ms, total_ios, io_bytes)
        self.rate: tuple[float | None, float | None] = (None, None)  # latest interval
        self.started = time.monotonic()
        self.moved_at = self.started  # when the byte count last grew

    def wait(self) -> str | None:
        """None when fio exited by itself; else why it was stopped."""
        while self.proc.poll() is None:
            now = time.monotonic()
            if self.stop is not None and self.stop.is_set():
                self.stopper(self.proc)
                return "fio was stopped: the run is ending"
            if self.timeout_s is not None and now - self.started > self.timeout_s:
                self.stopper(self.proc)
                return (
                    f"fio did not finish within {self.timeout_s:.0f} s (runtime plus margin) "
                    "and was stopped"
                )
            if self.stall_s is not None and now - self.moved_at > self.stall_s:
                self.stopper(self.proc)
                return f"fio moved no data for {self.stall_s:.0f} s and was stopped"
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=POLL_S)  # returns as soon as fio ends
            if self.on_progress is None and self.stall_s is None:
                continue  # client mode: no snapshots to read
            self._read_snapshots()
            if self.on_progress is not None:
                moved = self.last[2] if self.last else None
                io_s = self.last[0] / 1000 if self.last else None
                elapsed = time.monotonic() - self.started
                self.on_progress(LiveStats(elapsed, *self.rate, moved, io_s))
        return None

    def _read_snapshots(self) -> None:
        try:
            with self.out_path.open("rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except OSError:
            return
        # Only complete snapshots count; a partly written one is read again next time.
        text = chunk.decode(errors="replace")
        reports = [(end, o) for _, end, o in scan_objects(text) if "jobs" in o]
        if not reports:
            return
        self.offset += len(text[: reports[-1][0]].encode())
        snap = _totals(reports[-1][1])
        base = self.last or (0.0, 0, 0)
        if snap[0] > base[0]:
            dt = (snap[0] - base[0]) / 1000
            self.rate = ((snap[1] - base[1]) / dt, (snap[2] - base[2]) / dt)
        if snap[2] > base[2]:
            self.moved_at = time.monotonic()
        self.last = snap


def _totals(report: dict[str, Any]) -> tuple[float, int, int]:
    """(elapsed ms, total IOs, bytes) over all jobs and directions of one snapshot."""
    elapsed = 0.0
    ios = nbytes = 0
    for job in report["jobs"]:
        for d in ("read", "write", "trim"):
            section = job.get(d) or {}
            elapsed = max(elapsed, float(section.get("runtime", 0)))
            ios += int(section.get("total_ios", 0))
            nbytes += int(section.get("io_bytes", 0))
    return (elapsed, ios, nbytes)


def stop_process_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT fio (it then writes what it has), then SIGTERM, then SIGKILL its group."""
    for sig, wait_s in ((signal.SIGINT, GRACE_S), (signal.SIGTERM, GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue
    _reap_group(proc.pid)


def _reap_group(pgid: int) -> None:
    """Kill whatever is left in fio's process group (job processes outliving their parent)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


_FIO_MESSAGE = re.compile(r"^(?:fio:|<[^>]*> fio:|note:|client|error|.*\berr=)", re.I)


def fio_messages(run: FioRun) -> list[str]:
    """fio's own diagnostic lines, from stderr, stdout and any text around the JSON."""
    lines: list[str] = []
    shapes: set[str] = set()
    text = run.stderr + "\n" + run.stdout + "\n" + text_outside_json(run.raw_output)
    for line in text.splitlines():
        line = clipped(line.strip())
        shape = re.sub(r"\d+", "N", line)  # one line per kind of message, not per offset
        if line and _FIO_MESSAGE.match(line) and shape not in shapes:
            shapes.add(shape)
            lines.append(line)
    return lines


def clipped(line: str) -> str:
    """A line of fio's as a message quotes it: at most QUOTED_LINE_CHARS characters."""
    if len(line) <= QUOTED_LINE_CHARS:
        return line
    return f"{line[:QUOTED_LINE_CHARS]}... ({len(line) - QUOTED_LINE_CHARS} more characters)"


def text_outside_json(raw: str) -> str:
    """What fio's output file holds before its JSON report (fio's messages, a client's
    server text)."""
    brace = raw.find("\n{")
    return raw if brace < 0 and not raw.startswith("{") else raw[: max(brace, 0)]


_ERRNO_HINTS = {
    22: (
        "fio got EINVAL (invalid argument). With direct=1 this usually means the filesystem "
        "does not support O_DIRECT (tmpfs on older kernels, some FUSE filesystems) or the "
        "block size is not a multiple of the device's logical block size",
        "use a suite with `direct = false` for this target, or a block size that is a "
        "multiple of the logical block size (see `iobench info TARGET`)",
    ),
    28: (
        "fio ran out of space (ENOSPC)",
        "free space on the target or use a smaller --size",
    ),
    13: ("fio was denied access (EACCES)", "run as a user who may write the target, or as root"),
    1: ("fio was not permitted (EPERM)", "run as a user who may write the target, or as root"),
    5: ("fio got an IO error (EIO) from the target", "check `dmesg` for device errors"),
    95: (
        "the target does not support this operation (EOPNOTSUPP), e.g. trim on a file",
        "drop trim workloads for this target",
    ),
}


def check_run(run: FioRun) -> None:
    """Raise FioFailed unless fio's exit code, its job errors and its IO all say success."""
    messages = fio_messages(run)
    quoted = "; ".join(messages[-4:]) if messages else "(fio printed no message)"

    def fail(what: str, hint: str | None) -> FioFailed:
        return FioFailed(
            f"{what}. fio said: {quoted}",
            hint,
            argv=run.argv,
            returncode=run.returncode,
            stderr=run.stderr,
        )

    jobs = run.output.jobs if run.output else ()
    errors = sorted({j.error for j in jobs if j.error})
    if errors:
        code = errors[0]
        what, hint = _ERRNO_HINTS.get(
            code, (f"fio reported error {code} ({os.strerror(code)})", None)
        )
        raise fail(what, hint)
    if run.output is None:
        if any("failed parsing" in m or "Bad option" in m or "dropped" in m for m in messages):
            hint = "fio rejected an option; check the suite file against docs/suites.md"
        elif run.returncode < 0 or run.returncode >= 128:
            hint = "fio was killed (out of memory, or by another process?); see `dmesg`"
        else:
            hint = "see fio's full output with `iobench show RUN --raw`"
        raise fail(f"fio exited with code {run.returncode} and wrote no results", hint)
    if any("appears mounted" in m for m in messages):
        raise fail("fio refused the device as mounted", "unmount it, or test another device")
    moved = sum(d.io_bytes for j in jobs for d in (j.read, j.write, j.trim) if d is not None)
    if run.returncode != 0 or moved == 0:
        raise fail(
            f"fio exited with code {run.returncode} after moving {moved} bytes",
            "see fio's full output with `iobench show RUN --raw`",
        )
