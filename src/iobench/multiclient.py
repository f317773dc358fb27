"""A suite on many clients at once: fio's client/server mode, iobench as the controller.

Each client is a fio server (``fio --server``) that sees the target directory (a shared
filesystem, or a local one on each). For each client iobench writes its own test file
there (``iobench-<run>-c<N>.dat``: no client touches another's), and every workload runs on
all clients together: one ``fio --client`` process per client, started at once, each with a
hard timeout, so a client that dies or hangs fails alone and the others' results are kept
(the run is then ``partial``). Per step, every client's result is stored under the name the
user gave it, with their aggregate (``client: "all"``): IOPS and bandwidth summed,
latency merged from the histogram bins. Test files are removed through fio on every client
afterwards (docs/clients.md).
"""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from iobench import __version__
from iobench.analysis.aggregate import merge_jobs
from iobench.analysis.clients import (
    ClientShare,
    aggregate_samples,
    step_findings,
    step_summary,
)
from iobench.analysis.findings import Finding, TargetFacts, method_findings
from iobench.benchmark import (
    LAYOUT_BYTES_PER_S,
    NullObserver,
    Observer,
    Outcome,
    Step,
    expected_seconds,
    fio_evidence,
    run_findings,
    suite_definition,
)
from iobench.clients import Client, check_clients, check_remote_path, require_clients
from iobench.errors import FioFailed, Interrupted, IobenchError, UserError, error_text
from iobench.fio.confine import Confinement, confinement, private_directory
from iobench.fio.jobfile import (
    build_cleanup_jobfile,
    build_jobfile,
    build_layout_jobfile,
    section_name,
)
from iobench.fio.logs import parse_interval_logs
from iobench.fio.runner import FioInfo, FioRun, run_fio
from iobench.metrics import job_metrics
from iobench.model import JobResult, Suite, Workload
from iobench.probe import probe_host
from iobench.store.repository import ResultRecord, Store, TargetRecord

CLEANUP_TIMEOUT_S = 30.0
# Beyond runtime + ramp, how long a fio client may take: fio itself gives up on a server
# that stops answering after about 43 s (FIO.md §2.4), and that is worth waiting for.
CLIENT_MARGIN_S = 60.0

T = TypeVar("T")


@dataclass(frozen=True)
class ClientRunRequest:
    target: str  # a directory on every client
    suite: Suite
    clients: tuple[Client, ...]
    scale: tuple[int, ...] = ()  # client counts to run the suite with; () = all of them
    label: str | None = None
    argv: tuple[str, ...] = ()
    repeat: int = 1


def plan_scale(scale: Sequence[int], n: int) -> tuple[int, ...]:
    """The client counts to run, checked against the number of clients."""
    if not scale:
        return (n,)
    bad = [k for k in scale if not 1 <= k <= n]
    if bad:
        raise UserError(
            f"--scale {','.join(map(str, scale))}: {bad[0]} clients are asked for, but "
            f"--clients names {n}",
            f"use counts from 1 to {n}",
        )
    if len(set(scale)) != len(scale):
        raise UserError(
            f"--scale {','.join(map(str, scale))} names a count twice", "give each count once"
        )
    return tuple(sorted(scale))


@dataclass
class _State:
    confined: Confinement  # how every fio client runs (iobench.fio.confine)
    files: dict[str, str]  # client name -> its test file on the server
    tags: dict[str, str]  # client name -> c1, c2 ... (job sections, file names)
    layout_started: bool = False  # from then on, every client may hold a test file
    dead: dict[str, str] = field(default_factory=dict)  # client name -> why it left the run
    findings: list[Finding] = field(default_factory=list)
    fio_version: str | None = None
    stop: threading.Event = field(default_factory=threading.Event)


def execute_clients(
    request: ClientRunRequest,
    store: Store,
    fio: FioInfo,
    observer: Observer | None = None,
    *,
    margin_s: float = CLIENT_MARGIN_S,
) -> Outcome:
    """Run the request on its clients; nothing starts unless every client passes its check.
    Returns the stored run's id and status (``partial`` when some clients failed)."""
    obs = observer or NullObserver()
    suite = request.suite
    check_remote_path(request.target)
    scale = plan_scale(request.scale, len(request.clients))
    confined = confinement()
    checks = check_clients(request.clients, fio, confined)
    require_clients(checks)
    host = probe_host()
    host["clients"] = [c.as_dict() for c in checks]
    host["fio_client"] = confined.as_dict()
    directory = request.target.rstrip("/") or "/"
    tag = uuid.uuid4().hex[:8]
    tags = {c.name: f"c{i + 1}" for i, c in enumerate(request.clients)}
    files = {
        c.name: f"{directory.rstrip('/')}/iobench-{tag}-{tags[c.name]}.dat" for c in request.clients
    }
    state = _State(confined=confined, files=files, tags=tags)
    state.findings += [
        Finding(
            "client-clock",
            "warning",
            f"client {c.client.name}'s clock is {c.clock_offset_ms[0] / 1000:+.1f} s to "
            f"{c.clock_offset_ms[1] / 1000:+.1f} s off this machine's, so the start skew and "
            "finish spread, which compare the clients' clocks, are not to be trusted",
            "synchronise the clients' clocks (NTP, chrony), then run again",
        )
        for c in checks
        if c.clock_off and c.clock_offset_ms is not None
    ]
    run_id = store.create_run(
        suite=suite.name,
        suite_def={
            **suite_definition(suite),
            "clients": {
                "names": [c.name for c in request.clients],
                "scale": list(scale),
                "files": files,
            },
        },
        label=request.label,
        argv=request.argv,
        host=host,
        iobench_version=__version__,
        targets=[
            TargetRecord(
                0,
                request.target,
                request.target,
                "clients",
                None,
                {
                    "note": "a directory on each client; its filesystem and disks are not "
                    "probed from the controller",
                    "clients": [c.name for c in request.clients],
                },
            )
        ],
    )
    status = "failed"
    error: IobenchError | None = None
    internal: str | None = None
    try:
        steps = _plan(suite, scale, request.repeat, len(request.clients))
        obs.planned([step for _, step in steps])
        _layout(fio, obs, steps[0][1], request, state)
        for k, step in steps[1:]:
            _run_step(store, fio, obs, run_id, step, request.clients[:k], request, state, margin_s)
        status = "complete"
        if state.dead:
            status = "partial"
            error = FioFailed(
                f"{len(state.dead)} of {len(request.clients)} client(s) failed; the others' "
                "results are kept: "
                + "; ".join(f"{name} {why}" for name, why in state.dead.items()),
                "check those clients (their fio server, mount, `dmesg`), then run again",
            )
    except (KeyboardInterrupt, Interrupted):
        status, error = "aborted", Interrupted("interrupted; the workloads that finished are kept")
    except IobenchError as e:
        status, error = "failed", e
    except BaseException as e:
        internal = f"internal error: {type(e).__name__}: {e}"
        raise
    finally:
        with contextlib.suppress(Exception):
            obs.close()
        _cleanup(fio, request, state)
        ran = {w.name for w in suite.workloads}
        with contextlib.suppress(Exception):
            stored = store.get_run(run_id)
            if status in ("aborted", "failed"):  # speak only of the workloads that ran
                ran = {r.workload for r in stored.results}
            state.findings.extend(run_findings(stored))
            state.findings.extend(step_findings(stored.results))
        state.findings[:0] = _plan_findings(suite, request.target, ran)
        state.findings.extend(_client_findings(state))
        message = internal if error is None else error.message
        store.finish_run(
            run_id,
            status=status,
            fio_version=state.fio_version or fio.version,
            warnings=[f.as_dict() for f in state.findings],
            error=message,
        )
    return Outcome(run_id, status, error)


def _plan_findings(suite: Suite, target: str, ran: set[str]) -> list[Finding]:
    """The method findings that need no facts about the clients' machines, about the
    workloads in ``ran``."""
    ran_suite = suite.only(ran)
    if not ran_suite.workloads:
        return []
    size = max(w.size for w in ran_suite.workloads)
    return method_findings(
        ran_suite, TargetFacts(target, target, "directory", size, None, None), None
    )


def _plan(suite: Suite, scale: Sequence[int], repeat: int, n: int) -> list[tuple[int, Step]]:
    """(client count, step): the layout on all ``n``, then for each client count, each
    repetition, each workload. A step's target is "<k> clients"."""
    layout_s = 1.0 + max(w.size for w in suite.workloads) / LAYOUT_BYTES_PER_S
    steps = [(n, Step(0, f"{n} clients", "lay out the test files", layout_s, None))]
    for k in scale:
        for rep in range(1, repeat + 1):
            for w in suite.workloads:
                name = w.name + (f" ({rep}/{repeat})" if repeat > 1 else "")
                steps.append(
                    (k, Step(len(steps), f"{k} clients", name, expected_seconds(w), w, rep))
                )
    return steps


def _parallel(
    clients: Sequence[Client], work: Callable[[Client], T], state: _State
) -> dict[str, T | BaseException]:
    """``work`` for every client at once; its result or exception per client. Ctrl-C stops
    every fio (through ``state.stop``) before it propagates."""
    with ThreadPoolExecutor(max_workers=max(1, len(clients))) as pool:
        futures: dict[str, Future[T]] = {c.name: pool.submit(work, c) for c in clients}
        try:
            while not all(f.done() for f in futures.values()):
                time.sleep(0.1)
        except BaseException:
            state.stop.set()
            raise
    out: dict[str, T | BaseException] = {}
    for name, f in futures.items():
        exc = f.exception()
        out[name] = exc if exc is not None else f.result()
    return out


def _observed(
    obs: Observer,
    step: Step,
    clients: Sequence[Client],
    work: Callable[[Client], T],
    state: _State,
) -> dict[str, T | BaseException]:
    """:func:`_parallel` as one step of the progress display."""
    obs.started(step)
    outcome = "failed"
    try:
        done = _parallel(clients, work, state)
        outcome = "done"
        return done
    except BaseException:
        outcome = "interrupted"
        raise
    finally:
        obs.finished(step, outcome)


def _fio_on(
    fio: FioInfo,
    c: Client,
    job: str,
    state: _State,
    name: str,
    timeout_s: float | None,
    readonly: bool = False,
) -> FioRun:
    own = private_directory(state.confined)
    try:
        return run_fio(
            fio,
            job,
            own,
            timeout_s=timeout_s,
            name=name,
            client=c.address,
            confined=state.confined,
            stop=state.stop,
            readonly=readonly,
        )
    finally:
        shutil.rmtree(own, ignore_errors=True)


def _layout(
    fio: FioInfo, obs: Observer, step: Step, request: ClientRunRequest, state: _State
) -> None:
    """Write every client's test file once (reads of unwritten files measure holes)."""
    size = max(w.size for w in request.suite.workloads)
    direct = all(w.direct for w in request.suite.workloads)
    timeout = 120.0 + 3 * size / LAYOUT_BYTES_PER_S
    state.layout_started = True
    done = _observed(
        obs,
        step,
        request.clients,
        lambda c: _fio_on(
            fio,
            c,
            build_layout_jobfile(state.files[c.name], size, direct=direct, remote=True),
            state,
            "layout",
            timeout,
        ),
        state,
    )
    for c in request.clients:
        got = done[c.name]
        if isinstance(got, BaseException):
            state.dead[c.name] = f"laying out its test file failed: {error_text(got)}"
    if len(state.dead) == len(request.clients):
        raise FioFailed(
            "no client could lay out its test file: "
            + "; ".join(f"{n}: {why}" for n, why in state.dead.items()),
            "check that the target directory exists and is writable on the clients, with "
            "room for --size",
        )


def _entry(run: FioRun, section: str) -> JobResult | None:
    if run.output is None:
        return None
    for job in run.output.jobs:
        if job.jobname == section:
            return job
    return None


def _run_step(
    store: Store,
    fio: FioInfo,
    obs: Observer,
    run_id: int,
    step: Step,
    clients: Sequence[Client],
    request: ClientRunRequest,
    state: _State,
    margin_s: float,
) -> None:
    """One workload on ``clients`` at once; every client's result and their aggregate
    stored. Clients that failed before are left out (and counted as failed)."""
    w = step.workload
    assert w is not None
    k = len(clients)
    live = [c for c in clients if c.name not in state.dead]
    jobs = {
        c.name: build_jobfile(w, state.files[c.name], w.size, client=state.tags[c.name])
        for c in live
    }
    timeout = step.expected_s * 1.5 + margin_s
    done = _observed(
        obs,
        step,
        live,
        lambda c: _fio_on(
            fio, c, jobs[c.name], state, f"step{step.index}", timeout, readonly=not w.writes
        ),
        state,
    )
    position = request.suite.workloads.index(w)
    shares: list[ClientShare] = []
    entries: list[JobResult] = []
    failed = [c.name for c in clients if c.name in state.dead]
    for c in live:
        got = done[c.name]
        section = section_name(w.name, state.tags[c.name])
        entry = None if isinstance(got, BaseException) else _entry(got, section)
        if isinstance(got, BaseException) or entry is None:
            why = (
                error_text(got)
                if isinstance(got, BaseException)
                else "its result is missing from fio's report"
            )
            state.dead[c.name] = f"failed in {step.name}: {why}"
            failed.append(c.name)
            store.add_result(
                run_id,
                _record(request, w, position, step, c.name, k, jobs[c.name], got, None, None, why),
            )
            continue
        assert not isinstance(got, BaseException)
        state.fio_version = state.fio_version or (got.output.fio_version if got.output else None)
        metrics = job_metrics(entry, ())
        samples = parse_interval_logs(got.logs, epoch=True)
        shares.append(ClientShare(c.name, metrics, samples))
        entries.append(entry)
        store.add_result(
            run_id,
            _record(request, w, position, step, c.name, k, jobs[c.name], got, metrics, samples),
        )
    if not entries:
        raise FioFailed(
            f"{w.name}: every client failed: "
            + "; ".join(f"{n}: {state.dead.get(n, 'failed')}" for n in failed),
            "see the messages; `iobench clients check` tests the clients",
        )
    merged = job_metrics(merge_jobs(entries, sum_rates=True), ())
    merged["clients"] = step_summary(shares, failed)
    store.add_result(
        run_id,
        _record(request, w, position, step, "all", k, "", None, merged, aggregate_samples(shares)),
    )


def _record(
    request: ClientRunRequest,
    w: Workload,
    position: int,
    step: Step,
    client: str,
    k: int,
    job: str,
    got: Any,
    metrics: dict[str, Any] | None,
    samples: dict[str, Any] | None,
    error: str | None = None,
) -> ResultRecord:
    """One client's result (or the aggregate's, with ``got`` None); failed when ``error``.
    ``got`` is the client's FioRun, or the exception its fio ended with."""
    run = got if isinstance(got, FioRun) else None
    return ResultRecord(
        target=request.target,
        workload=w.name,
        position=position,
        status="failed" if error else "ok",
        params=w.params,
        metrics=None if error else metrics,
        job_file=job,
        fio_version=run.output.fio_version if run and run.output and not error else None,
        error=f"client {client}: {error}" if error else None,
        repetition=step.repetition,
        samples=None if error else samples,
        client=client,
        clients=k,
        **fio_evidence(run, got if isinstance(got, BaseException) else None),
    )


def _cleanup(fio: FioInfo, request: ClientRunRequest, state: _State) -> None:
    """Remove the test file on every client once the layout began (also when it was
    interrupted, half written); what cannot be removed is said."""
    if not state.layout_started:
        return
    state.stop.clear()
    clients = request.clients
    try:
        done = _parallel(
            clients,
            lambda c: _fio_on(
                fio,
                c,
                build_cleanup_jobfile(state.files[c.name]),
                state,
                "cleanup",
                CLEANUP_TIMEOUT_S,
            ),
            state,
        )
    except BaseException:  # Ctrl-C during cleanup: say what may be left
        done = {c.name: Interrupted("interrupted") for c in clients}
    for c in clients:
        got = done.get(c.name)
        if isinstance(got, BaseException):
            state.findings.append(
                Finding(
                    "test-file-left",
                    "warning",
                    f"could not remove the test file {state.files[c.name]} on client {c.name}: "
                    f"{error_text(got)}",
                    "remove it there by hand",
                    target=request.target,
                )
            )


def _client_findings(state: _State) -> list[Finding]:
    return [
        Finding(
            "client-failed",
            "warning",
            f"client {name} {why}; the other clients' results are kept and the run is partial",
            "check that client (its fio server, its mount, `dmesg`), then run again",
        )
        for name, why in state.dead.items()
    ]
