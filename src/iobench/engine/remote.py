"""A run on many clients at once: fio's client/server mode, iobench as the controller.

Each client is a fio server (``fio --server``) that sees the target directory (a shared
filesystem, or a local one on each). For each client iobench writes its own test file
there (``iobench-<run>-c<N>.dat``: no client touches another's), and every workload runs on
all clients together: one ``fio`` client for all of them, each server with its own job file
(iobench.fio.clientgroup: one process and one confinement per step, not one per client),
under a hard timeout; a client that dies or hangs fails alone and the others' results are
kept (the run is then ``partial``). Per step, every client's result is stored under the name the
user gave it, with their aggregate (``client: "all"``): IOPS and bandwidth summed second
by second over the window in which every client ran (the whole-run sums beside them),
latency merged from the histogram bins (analysis/together.py); where the clients' test
files are on this host's block device too, that device's own count of the same seconds
beside it. Test files are removed through fio on every client afterwards
(docs/clients.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import stat
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from iobench.analysis.aggregate import merge_jobs
from iobench.analysis.clients import ClientShare, aggregate_samples, step_findings, step_timing
from iobench.analysis.findings import Finding, TargetFacts, method_findings
from iobench.analysis.together import device_check, over_window, together_findings
from iobench.clients import (
    Client,
    bounded,
    check_clients,
    check_remote_path,
    require_clients,
)
from iobench.engine.lifecycle import (
    Finish,
    NewRun,
    RunEnd,
    fio_evidence,
    ran_workloads,
    recorded_run,
    run_findings,
)
from iobench.engine.modes import Driver, Planned, mode_of, upfront_steps
from iobench.engine.parts import clients_parts, group_metrics, group_result, part_entries
from iobench.engine.preflight import PreparedTarget, prepare_target
from iobench.engine.request import Outcome, RunRequest
from iobench.engine.steps import (
    LAYOUT_BYTES_PER_S,
    Observer,
    Step,
    Told,
    clients_layout,
    observed,
)
from iobench.errors import FioFailed, Interrupted, UserError, error_text
from iobench.fio.clientgroup import ClientJob
from iobench.fio.confine import (
    Confinement,
    confinement,
    private_directory,
    spool_bytes,
)
from iobench.fio.jobfile import (
    build_cleanup_jobfile,
    build_jobfile,
    build_layout_jobfile,
    section_name,
)
from iobench.fio.logs import parse_interval_logs
from iobench.fio.runner import TIMEOUT_MARGIN_S, FioInfo, FioRun, run_fio_clients
from iobench.metrics import job_metrics
from iobench.model import CLIENT_FIELD, DIRECTIONS, JobResult, Suite, Workload
from iobench.probe import probe_host
from iobench.probe.context import Storage
from iobench.probe.diskstats import disk_util
from iobench.probe.diskwatch import DiskWatch
from iobench.probe.storage import probe_target
from iobench.records import PartResult, ResultRecord, SuiteDefinition, TargetRecord
from iobench.store.repository import Store
from iobench.targets import Plan, Reach, kind_of, network_kind, resolve_target

CLEANUP_TIMEOUT_S = 30.0


def client_counts(scale: Sequence[int], n: int) -> tuple[int, ...]:
    """The client counts to run (``--scale``), checked against the number of clients."""
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


@dataclass(frozen=True)
class ClientsPreflight:
    """Everything decided before a run on clients starts; nothing starts unless every
    client passed its check."""

    target: str  # the directory on every client, or the network storage they reach
    suite: Suite
    clients: tuple[Client, ...]
    scale: tuple[int, ...]
    confined: Confinement  # how every fio client runs (iobench.fio.confine)
    host: dict[str, Any]  # this host's, with the clients' checks
    findings: tuple[Finding, ...]  # the clients' clocks
    # Network storage (an RBD image, an NBD export): each client's, checked and prepared
    # from here; empty for a directory on every client.
    network: dict[str, PreparedTarget] = field(default_factory=dict)
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)  # network's, by client

    @property
    def layout(self) -> tuple[str, int] | None:
        """The first step: each client's test file laid out, or its network storage
        prefilled (--prefill); None when nothing is written first."""
        if not self.network:
            return "lay out the test files", max(w.size for w in self.suite.workloads)
        size = max(p.layout_bytes for p in self.network.values())
        return ("prefill the test areas", size) if size else None


def check_clients_request(request: RunRequest) -> None:
    """What a run on clients does not take, each named: a spec (it is about one volume),
    several targets; on a directory, --prefill and --destructive (only iobench's own test
    files are written on clients). Network storage (each client's own RBD image ...) takes
    them as on one host."""
    network = len(request.targets) == 1 and network_kind(request.targets[0]) is not None
    if request.spec or (request.prefill and not network):
        raise UserError(
            f"{'--spec' if request.spec else '--prefill'} does not go with --clients: a spec "
            "describes one volume, and iobench writes only its own test files there",
            "hold the aggregate to a figure with --expect",
        )
    if len(request.targets) != 1:
        raise UserError(
            "with --clients give exactly one TARGET: the directory each client tests in, or "
            "the network storage they reach ({client} for each its own)",
            "e.g. iobench run /mnt/shared --clients node1,node2, or "
            "iobench run 'rbd:rbd/bench-{client}' --clients node1,node2 --destructive",
        )
    if request.destructive and not network:
        raise UserError(
            "--destructive does not go with --clients: iobench writes only test files of its "
            "own on the clients, never devices or existing files",
            "leave out --destructive",
        )
    _check_placement(request)
    if (request.steady_state or {}).get("rule") == "fio":
        raise UserError(
            "--steady-state fio does not go with --clients: fio's check inside each client's "
            "job would end that client alone once it settles, and the clients would no "
            "longer run together",
            "use --steady-state pts: its rounds judge the clients' aggregate",
        )
    host = [w for w, _, source in request.suite.variables if source == "host"]
    if host:
        raise UserError(
            f"the job file's {', '.join(dict.fromkeys(host))} are figures of the host that runs "
            "each job; with --clients that is each fio server, which iobench cannot ask, and "
            "this host's would be wrong there",
            "write the values in the job file (or run it on each host without --clients)",
        )


def _check_placement(request: RunRequest) -> None:
    """CPUs named for fio's jobs are the fio servers' CPUs, which iobench cannot read:
    neither --pin-to-device nor a suite's cpus_allowed or cpumask goes to a server."""
    if request.pin_to_device:
        raise UserError(
            "--pin-to-device does not go with --clients: the device and its blk-mq queues are "
            "each fio server's, and iobench reads only this host's /sys",
            "leave out --pin-to-device (or run iobench on each host)",
        )
    for w in request.suite.workloads:
        named = [key for j in w.jobs for key, _ in j.options if key in ("cpus_allowed", "cpumask")]
        if named:
            raise UserError(
                f"workload {w.name} sets {named[0]}, which does not go with --clients: the "
                "CPUs would be each fio server's, which iobench cannot see to check (it "
                "checked them against this host's online CPUs)",
                f"leave {named[0]} out of the suite for runs on fio servers",
            )


def clients_preflight(request: RunRequest, fio: FioInfo) -> ClientsPreflight:
    """Check the target path, the client counts and every client (connect, a probe job,
    its clock); raises before anything runs."""
    check_clients_request(request)
    (target,) = request.targets
    network = _network(request) if network_kind(target) else {}
    if not network:
        check_remote_path(target)
    scale = client_counts(request.scale, len(request.clients))
    confined = confinement()
    checks = check_clients(request.clients, fio, confined)
    require_clients(checks)
    confined = bounded(confined, checks)
    host = probe_host()
    host["clients"] = [c.as_dict() for c in checks]
    host["fio_client"] = confined.as_dict()
    clocks = tuple(
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
    )
    contexts = {name: kind_of(p.target).capture(p.target) for name, p in network.items()}
    return ClientsPreflight(
        target, request.suite, request.clients, scale, confined, host, clocks, network, contexts
    )


def client_label(c: Client) -> str:
    """What ``{client}`` in a network target becomes for client ``c``: its host name (an
    address's dots kept), without the port."""
    host = c.name.rsplit(":", 1)[0] if c.name.count(":") == 1 else c.name
    return host.strip("[]")


def _network(request: RunRequest) -> dict[str, PreparedTarget]:
    """Each client's network storage (``{client}`` filled in), resolved, checked and
    prepared from this host, as a local run's target would be; UserError when two
    clients would write to one, unless the storage is shared on purpose (no ``{client}``,
    read-only suites)."""
    (spec,) = request.targets
    plan = Plan(request.suite, prefill=request.prefill)
    if CLIENT_FIELD not in spec and len(request.clients) > 1 and plan.writes:
        raise UserError(
            f"every client would write to {spec} at once ({plan.writers}): what one writes, "
            "the others overwrite, and storage that lets one writer in at a time (an RBD "
            "image's exclusive lock) would pass between them at every write",
            f"give each client its own with {CLIENT_FIELD}, e.g. 'rbd:rbd/bench-{CLIENT_FIELD}', "
            "or run a suite that only reads",
        )
    named = {c.name: spec.replace(CLIENT_FIELD, client_label(c)) for c in request.clients}
    same = [n for n, each in named.items() if list(named.values()).count(each) > 1]
    if CLIENT_FIELD in spec and same and plan.writes:
        raise UserError(
            f"clients {', '.join(same)} would write to one image or export: {CLIENT_FIELD} "
            "is each client's host name, and theirs is the same",
            "run one fio server per host, or name each client's storage in a suite per host",
        )
    return {
        name: prepare_target(resolve_target(each, request.access), request.suite, request)
        for name, each in named.items()
    }


def execute_clients(
    request: RunRequest,
    preflight: ClientsPreflight,
    store: Store,
    fio: FioInfo,
    obs: Observer,
    *,
    timeout_margin_s: float = TIMEOUT_MARGIN_S,
) -> Outcome:
    """Run the request on its clients; ``partial`` when some clients failed."""
    on_clients = ClientsRun(request, preflight, store, fio, obs, timeout_margin_s)
    with recorded_run(store, on_clients.new_run(), on_clients.finish, hold_signals=False) as end:
        on_clients.run(end)
    return Outcome(end.run_id, end.status, end.error, end.unstored, end.lost)


@dataclass
class ClientsRun:
    """A run on clients, with what it has created so far so every way out can undo it."""

    request: RunRequest
    preflight: ClientsPreflight
    store: Store
    fio: FioInfo
    obs: Observer
    timeout_margin_s: float
    files: dict[str, str] = field(default_factory=dict)  # client -> its test file there
    tags: dict[str, str] = field(default_factory=dict)  # client -> c1, c2 ... (sections, files)
    layout_started: bool = False  # from then on, every client may hold a test file
    dead: dict[str, str] = field(default_factory=dict)  # client name -> why it left the run
    findings: list[Finding] = field(default_factory=list)  # found while running
    fio_version: str | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    # This host's block devices under the clients' test files (None: not looked for yet).
    shared: list[dict[str, Any]] | None = None
    # The run's last step when its steps are known up front: its jobs remove the test files
    # (fio's unlink), which saves a cleanup's fio client (about 1.5 s, docs/clients.md).
    last_index: int | None = None
    unlinked: set[str] = field(default_factory=set)  # clients whose last step removed it

    def new_run(self) -> NewRun:
        """The run row, and each client's test file name (a tag of its own per run)."""
        pre = self.preflight
        directory = pre.target.rstrip("/") or "/"
        tag = uuid.uuid4().hex[:8]
        self.tags = {c.name: f"c{i + 1}" for i, c in enumerate(pre.clients)}
        if pre.network:
            self.files = {name: p.target.spec for name, p in pre.network.items()}
        else:
            self.files = {
                c.name: f"{directory.rstrip('/')}/iobench-{tag}-{self.tags[c.name]}.dat"
                for c in pre.clients
            }
        self.findings += pre.findings
        names = [c.name for c in pre.clients]
        clients = {"names": names, "scale": list(pre.scale), "files": self.files}
        r = self.request
        definition = SuiteDefinition.from_dict(
            {
                **SuiteDefinition.of_suite(pre.suite).as_dict(),
                **r.extra_definition,
                "clients": clients,
                **mode_of(r, pre.suite).definition(),  # a chooser's plan, the steady-state rule
            }
        )
        context: dict[str, Any] = {
            "note": "a directory on each client; its filesystem and disks are not probed "
            "from the controller",
            "clients": names,
        }
        if pre.network:
            context = {"clients": names, "targets": pre.contexts}
        target = TargetRecord(0, pre.target, pre.target, "clients", None, context)
        return NewRun(pre.suite.name, definition, r.label, r.argv, pre.host, [target])

    def run(self, end: RunEnd) -> None:
        """The layout on every client, then at each client count the workloads the run's
        mode chooses, from the clients' aggregate so far."""
        pre = self.preflight
        mode = mode_of(self.request, pre.suite)
        steps = clients_layout(len(pre.clients), pre.layout)
        for k in pre.scale:
            steps += upfront_steps(mode, [f"{k} clients"], len(steps), k)
        self.obs.planned(steps, mode.budget_s and mode.budget_s * len(pre.scale))
        if mode.budget_s is None and not pre.network and steps and steps[-1].workload:
            self.last_index = steps[-1].index
        for p in pre.network.values():  # nobody opened it since the checks
            assert p.plan is not None
            kind_of(p.target).claim(
                p.target, p.plan, readonly=p.readonly, holds=contextlib.ExitStack()
            )
        if pre.layout is not None:
            self._layout(steps[0])
        driver = Driver(
            mode,
            lambda k, planned, step: self._run_step(end.run_id, step, planned, pre.clients[:k]),
            label=lambda k: f"{k} clients",
            context=lambda k: self._context(),
            clients=lambda k: k,
            index=1 if pre.layout is not None else 0,
        )
        for k in pre.scale:  # one client count after the other
            driver.drive([k])
        end.status = "complete"
        if self.dead:
            end.status = "partial"
            end.error = FioFailed(
                f"{len(self.dead)} of {len(pre.clients)} client(s) failed; the others' "
                "results are kept: "
                + "; ".join(f"{name} {why}" for name, why in self.dead.items()),
                "check those clients (their fio server, mount, `dmesg`), then run again",
            )

    def _context(self) -> dict[str, Any]:
        """What a chooser may know of the storage the clients share: the first client's
        network storage's context (its QoS limits ...); nothing of a directory."""
        return next(iter(self.preflight.contexts.values()), {})

    def finish(self, end: RunEnd) -> Finish:
        """Remove the test files, then the findings: the method's (for what ran), those
        found while running, the measurements', each step's and the failed clients'."""
        with contextlib.suppress(Exception):
            self.obs.close()
        self._clean_up()
        pre = self.preflight
        ran = {w.name for w in pre.suite.workloads}
        with contextlib.suppress(Exception):
            # What this run has just stored, read back for its findings; the schema check
            # (which costs about 30 ms a client) is left to whoever shows the run.
            stored = self.store.get_run(end.run_id, checked=False)
            cut_short = ran_workloads(stored, end)
            if cut_short is not None:  # speak only of the workloads that ran
                ran = cut_short
            self.findings.extend(run_findings(stored))
            self.findings.extend(step_findings(stored.results))
            self.findings.extend(together_findings(stored.results))
        self.findings[:0] = method_findings_for(pre, ran)
        self.findings.extend(
            Finding(
                "client-failed",
                "warning",
                f"client {name} {why}; the other clients' results are kept and the run is partial",
                "check that client (its fio server, its mount, `dmesg`), then run again",
            )
            for name, why in self.dead.items()
        )
        return Finish([f.as_dict() for f in self.findings], self.fio_version or self.fio.version)

    def _reach(self, c: Client) -> Reach:
        """How client ``c``'s fio reaches its test file (or its network storage)."""
        p = self.preflight.network.get(c.name)
        if p is not None:
            return kind_of(p.target).reach_from(p.target, p.filename)
        return Reach.file(self.files[c.name])

    def _area(self, c: Client, w: Workload) -> int:
        """The test area of ``w`` on client ``c``'s file or network storage."""
        p = self.preflight.network.get(c.name)
        return w.area(None) if p is None else p.size_of(w)

    def _fio_group(
        self,
        clients: Sequence[Client],
        jobs: dict[str, str],
        name: str,
        timeout_s: float | None,
        readonly: bool = False,
        spool: int | None = None,
        together: bool = False,
    ) -> dict[str, FioRun | BaseException]:
        """Each client's job on its server, all from one fio client (iobench.fio.clientgroup),
        which writes at most ``spool`` bytes (by default what a short job without logs
        needs on every one): by client, its run or why it failed. ``together``: the jobs
        must start at the same time (a step).
        A client that fails, hangs or dies fails alone; Ctrl-C stops them all."""
        group = [
            ClientJob(c.name, c.host, c.port, self.tags[c.name], jobs[c.name]) for c in clients
        ]
        if spool is None:
            spool = spool_bytes(0, 1, len(clients))
        own = private_directory(self.preflight.confined)
        try:
            done = run_fio_clients(
                self.fio, group, own, timeout_s=timeout_s, name=name,
                confined=self.preflight.confined, spool_bytes=spool, stop=self.stop,
                readonly=readonly, together=together,
            )  # fmt: skip
        finally:
            shutil.rmtree(own, ignore_errors=True)
        return dict(done)

    def _layout(self, step: Step) -> None:
        """Write every client's test file once (reads of unwritten files measure holes)."""
        suite, clients = self.preflight.suite, self.preflight.clients
        assert self.preflight.layout is not None
        size = self.preflight.layout[1]
        direct = all(w.direct for w in suite.workloads)
        timeout = 120.0 + 3 * size / LAYOUT_BYTES_PER_S
        self.layout_started = True

        jobs = {
            c.name: build_layout_jobfile(self._reach(c), size, direct=direct, remote=True)
            for c in clients
        }
        with observed(self.obs, step) as told:
            done = self._fio_group(clients, jobs, "layout", timeout)
            for c in clients:
                got = done[c.name]
                if isinstance(got, BaseException):
                    self.dead[c.name] = f"laying out its test file failed: {error_text(got)}"
                    told.notes.append(f"client {c.name} {self.dead[c.name]}")
            if len(self.dead) == len(clients):
                raise FioFailed(
                    "no client could lay out its test file: "
                    + "; ".join(f"{n}: {why}" for n, why in self.dead.items()),
                    "check that the target directory exists and is writable on the clients, "
                    "with room for --size",
                )

    def _run_step(
        self, run_id: int, step: Step, planned: Planned, clients: Sequence[Client]
    ) -> ResultRecord:
        """One workload on ``clients`` at once; every client's result and their aggregate
        stored, the aggregate returned. Clients that failed before are left out (and
        counted as failed)."""
        w = step.workload
        assert w is not None
        if w.size > max(x.size for x in self.preflight.suite.workloads) or (
            w.writes and not any(x.writes for x in self.preflight.suite.workloads)
        ):  # the checks and the test files were made for the suite's workloads
            raise ValueError(f"{w.name} was chosen, which the checks did not allow")
        # fio's own steady-state check (a characterize point's ss=) would end each client's
        # job alone, whenever that client settles: the clients would not run together, and
        # their aggregate would count seconds some of them did not share. Each runs to the end.
        w = w.each_job(without_steady_state)
        live = [c for c in clients if c.name not in self.dead]
        last = step.index == self.last_index
        jobs = {
            c.name: build_jobfile(
                w, self._reach(c), self._area(c, w), client=self.tags[c.name], unlink=last
            )
            for c in live
        }
        timeout = step.expected_s * 1.5 + self.timeout_margin_s
        spool = spool_bytes(w.runtime_s + w.ramp_s, w.numjobs, len(live))
        # The results are stored inside the step, so the observer is told the aggregate.
        with observed(self.obs, step) as told:
            with self._watch() as watch:  # the device's own count, where it is this host's
                name = f"step{step.index}"
                done = self._fio_group(
                    live, jobs, name, timeout, not w.writes, spool, together=True
                )
            if last:
                self.unlinked.update(n for n, got in done.items() if isinstance(got, FioRun))
            record = self._results(run_id, step, planned.position, clients, jobs, done, told, watch)
            told.metrics = record.metrics
        return record

    def _results(
        self,
        run_id: int,
        step: Step,
        position: int,
        clients: Sequence[Client],
        jobs: dict[str, str],
        done: dict[str, FioRun | BaseException],
        told: Told,
        watch: DiskWatch | None = None,
    ) -> ResultRecord:
        """Every client's result of ``step`` and their aggregate stored; the aggregate's
        record. A client that fails here is told as a note, and left out from now on.
        ``watch``: the counters of this host's device under the clients' files."""
        w = step.workload
        assert w is not None
        live = [c for c in clients if c.name in done]
        shares: list[ClientShare] = []
        entries: list[list[JobResult]] = []  # each client's: its job's, or its parts'
        parts: list[tuple[PartResult, ...]] = []
        failed = [c.name for c in clients if c.name in self.dead]
        for c in live:
            got = done[c.name]
            found = None if isinstance(got, BaseException) else _entries(got, w, self.tags[c.name])
            if isinstance(got, BaseException) or found is None:
                why = (
                    error_text(got)
                    if isinstance(got, BaseException)
                    else "its result is missing from fio's report"
                )
                self.dead[c.name] = f"failed in {step.name}: {why}"
                told.notes.append(f"client {c.name} failed: {why}")
                failed.append(c.name)
                self._store(
                    run_id, step, position, c.name, jobs[c.name], got, None, None, error=why
                )
                continue
            self.fio_version = self.fio_version or (got.output.fio_version if got.output else None)
            if w.parts:
                metrics, own, samples = group_result(found, w, got.logs, epoch=True)
                parts.append(own)
            else:
                metrics, own = job_metrics(found[0], (), w.params), ()
                samples = parse_interval_logs(got.logs, epoch=True)
            shares.append(ClientShare(c.name, metrics, samples))
            entries.append(found)
            self._store(
                run_id, step, position, c.name, jobs[c.name], got, metrics, samples, parts=own
            )
        if not entries:
            raise FioFailed(
                f"{w.name}: every client failed: "
                + "; ".join(f"{n}: {self.dead.get(n, 'failed')}" for n in failed),
                "see the messages; `iobench clients check` tests the clients",
            )
        return self._together(run_id, step, position, entries, shares, parts, failed, watch)

    def _together(
        self,
        run_id: int,
        step: Step,
        position: int,
        entries: list[list[JobResult]],
        shares: list[ClientShare],
        parts: list[tuple[PartResult, ...]],
        failed: list[str],
        watch: DiskWatch | None,
    ) -> ResultRecord:
        """The clients' aggregate of ``step`` stored: over the window in which they all
        ran, the whole-run sums beside it, each part's alike; and, where their test files
        are on this host's block device, what that device completed in the same seconds."""
        w = step.workload
        assert w is not None
        merged, summary = over_window(_aggregate(w, entries, shares), shares)
        merged["clients"] = {**step_timing(shares, failed), **summary}
        together: tuple[PartResult, ...] = ()
        if w.parts:
            names = [s.client for s in shares]
            together, merged["clients"]["parts"] = clients_parts(parts, entries, w, names)
        if watch is not None:
            merged["disk_util"] = disk_util(watch.readings[0][1], watch.readings[-1][1])
            directions = [d for d in DIRECTIONS if merged.get(d)]
            merged["clients"]["device_check"] = device_check(
                watch.names, summary, watch.counters(), directions
            )
        return self._store(
            run_id, step, position, "all", "", None, merged, aggregate_samples(shares), together
        )

    def _watch(self) -> contextlib.AbstractContextManager[DiskWatch | None]:
        """A watch of this host's device under the clients' test files for one step, when
        there is one (:meth:`_shared_devices`, looked for once)."""
        if self.shared is None:
            self.shared = self._shared_devices()
        return DiskWatch(self.shared) if self.shared else contextlib.nullcontext()

    def _shared_devices(self) -> list[dict[str, Any]]:
        """This host's block devices under the clients' test files when the clients'
        storage is this host's too (namespaces, containers, VMs on a host directory): every
        live client's file, laid out under a tag new to this run, is here at the same
        path, of the size laid out, all on one filesystem. Empty otherwise, and for network
        storage (an RBD image, an NBD export), which does not pass this host's block layer."""
        pre = self.preflight
        if pre.network or pre.layout is None or not self.layout_started:
            return []
        seen = set()
        for path in (p for name, p in self.files.items() if name not in self.dead):
            try:
                st = os.lstat(path)
            except OSError:
                return []
            if not stat.S_ISREG(st.st_mode) or st.st_size != pre.layout[1]:
                return []
            seen.add(st.st_dev)
        if len(seen) != 1:
            return []
        ctx = probe_target(pre.target)  # the directory, here as on the clients
        return [dict(d) for d in Storage.of(ctx).io_devices if d.get("role") == "target"]

    def _store(
        self,
        run_id: int,
        step: Step,
        position: int,
        client: str,
        job: str,
        got: FioRun | BaseException | None,
        metrics: dict[str, Any] | None,
        samples: dict[str, Any] | None,
        parts: tuple[PartResult, ...] = (),
        error: str | None = None,
    ) -> ResultRecord:
        """One client's result (or the aggregate's, with ``got`` None) stored; failed when
        ``error``. ``got`` is the client's FioRun, or the exception its fio ended with."""
        w = step.workload
        assert w is not None and step.clients is not None
        run = got if isinstance(got, FioRun) else None
        record = ResultRecord(
            target=self.preflight.target,
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
            clients=step.clients,
            parts=() if error else parts,
            **fio_evidence(run, got if isinstance(got, BaseException) else None),
        )
        self.store.add_result(run_id, record)
        return record

    def _clean_up(self) -> None:
        """Remove the test file on every client once the layout began (also when it was
        interrupted, half written); what cannot be removed is said."""
        if not self.layout_started or self.preflight.network:  # no files of iobench's own
            return
        self.stop.clear()
        clients = [c for c in self.preflight.clients if c.name not in self.unlinked]
        if not clients:
            return
        jobs = {c.name: build_cleanup_jobfile(self.files[c.name]) for c in clients}
        try:
            done: dict[str, Any] = self._fio_group(clients, jobs, "cleanup", CLEANUP_TIMEOUT_S)
        except BaseException:  # Ctrl-C during cleanup: say what may be left
            done = {c.name: Interrupted("interrupted") for c in clients}
        for c in clients:
            got = done.get(c.name)
            if isinstance(got, BaseException):
                self.findings.append(
                    Finding(
                        "test-file-left",
                        "warning",
                        f"could not remove the test file {self.files[c.name]} on client "
                        f"{c.name}: {error_text(got)}",
                        "remove it there by hand",
                        target=self.preflight.target,
                    )
                )


def without_steady_state(job: Workload) -> Workload:
    """``job`` without fio's steady-state options (ss, ss_dur, ss_ramp)."""
    kept = tuple(o for o in job.options if o[0] not in ("ss", "ss_dur", "ss_ramp"))
    return job if kept == job.options else dataclasses.replace(job, options=kept)


def method_findings_for(pre: ClientsPreflight, ran: set[str]) -> list[Finding]:
    """The method findings that need no facts about the clients' machines, about the
    workloads in ``ran``."""
    ran_suite = pre.suite.only(ran)
    if not ran_suite.workloads:
        return []
    size = max(w.size for w in ran_suite.workloads)
    kind = next((p.target.kind for p in pre.network.values()), "directory")
    facts = TargetFacts(pre.target, pre.target, kind, size, None, None)
    return method_findings(ran_suite, facts, None)


def _entries(run: FioRun, w: Workload, tag: str) -> list[JobResult] | None:
    """A client's entries in its fio report: its job's, or each part's of a group; None
    when one is missing."""
    if run.output is None:
        return None
    if w.parts:
        return part_entries(run.output.jobs, w, tag)
    section = section_name(w.name, tag)
    return next(([job] for job in run.output.jobs if job.jobname == section), None)


def _aggregate(
    w: Workload, entries: Sequence[Sequence[JobResult]], shares: Sequence[ClientShare]
) -> dict[str, Any]:
    """The clients' aggregate of a step over each one's whole run: IOPS and bandwidth
    summed, latency merged from the bins; a group's from each client's group (its IOs
    counted part by part). :func:`over_window` then takes the IOPS and bandwidth over the
    seconds in which they all ran."""
    merged = merge_jobs([merge_jobs(e) for e in entries], sum_rates=True)
    if w.parts:
        return group_metrics([s.metrics for s in shares], merged, sum_rates=True)
    # The clients' jobs together: each client's can have its own IOs in flight.
    return job_metrics(merged, (), dict(w.params, numjobs=w.numjobs * len(entries)))
