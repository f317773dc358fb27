"""The command line: parse options, call the core, render. The only place that exits."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from iobench import __version__
from iobench.cli_curves import characterize, sweep
from iobench.cli_support import (
    EXIT_CODES_HELP,
    db_exists,
    db_path,
    emit_json,
    execute_request,
    open_store,
    parse_list,
    parse_opt,
    print_click_error,
    print_error,
    require_db,
    run_code,
    stderr,
    stdout,
    stop_signals_as_interrupt,
    with_options,
)
from iobench.errors import ExitCode, IobenchError, UserError
from iobench.output import STDOUT, GuardedStream, OutputError, StreamClosed, write_output
from iobench.report.literal import literal, literal_lines, markup_literal
from iobench.suites import DEFAULT_SUITE
from iobench.units import parse_duration, parse_size


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EXIT_CODES_HELP,
)
@click.version_option(__version__, prog_name="iobench")
@click.option(
    "--db",
    type=click.Path(path_type=Path),  # what is refused, and why: iobench.store.dbfile
    envvar="IOBENCH_DB",
    help="Results database (default $XDG_DATA_HOME/iobench/iobench.db; env IOBENCH_DB).",
)
@click.option("--traceback", is_flag=True, help="Show a Python traceback on errors.")
@click.pass_context
def main(ctx: click.Context, db: Path | None, traceback: bool) -> None:
    """Find out what your storage really delivers.

    iobench runs standard fio workloads against a directory, file or block device, stores
    every result with the context that explains it (host, device, filesystem, fio version),
    and warns when the method makes a number misleading.
    """
    ctx.obj = {"db": db}


# For the commands that take RUNs: `-2` (the second newest run) is a RUN, not an unknown
# option.
RUN_REFS = {"ignore_unknown_options": True}

# The options `run` and `doctor` share: what to run, where, and what to expect.
plan_options = with_options(
    [
        click.option(
            "-s",
            "--suite",
            default=DEFAULT_SUITE,
            show_default=True,
            help="A built-in suite (see `iobench suites`) or the path of a suite file (.toml).",
        ),
        click.option("--runtime", help="Override every workload's runtime, e.g. 30s, 2m."),
        click.option("--ramp", help="Override every workload's ramp time (excluded from results)."),
        click.option("--size", help="Override every workload's test area, e.g. 256M, 4G."),
        click.option(
            "--destructive",
            is_flag=True,
            help="Allow writing workloads on a block device or an existing file (destroys its "
            "data).",
        ),
        click.option(
            "--overwrite-signatures",
            is_flag=True,
            help="With --destructive: also allow a device that carries a filesystem or "
            "partition table.",
        ),
        click.option(
            "--expect",
            "expectations",
            multiple=True,
            metavar="EXPR",
            help="WORKLOAD.DIRECTION.METRIC OP VALUE, e.g. 'rand-r.read.iops>=5000' or "
            "'lat-read.read.p99<5ms' (repeatable); exit 4 if one fails.",
        ),
        click.option(
            "--spec",
            help="A provider spec (see `iobench specs`), e.g. aws-gp3: expectations and a "
            "'% of promised' table.",
        ),
        click.option(
            "--spec-param",
            "spec_params",
            multiple=True,
            metavar="NAME=VALUE",
            help="A parameter of --spec, e.g. iops=6000 or size=500G (repeatable).",
        ),
        click.option(
            "--prefill",
            is_flag=True,
            help="Write the test area of a device or existing file before the workloads "
            "(with --destructive), so reads do not hit never-written blocks.",
        ),
    ]
)


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@plan_options
@click.option("--label", help="A name for this setup, e.g. ceph-rbd or local-nvme.")
@click.option(
    "--repeat",
    type=click.IntRange(1, 1000),
    default=1,
    show_default=True,
    help="Run every workload N times (interleaved across targets); results show the mean, "
    "its 95 % confidence interval and the coefficient of variation.",
)
@click.option(
    "--clients",
    help="Run on these fio servers at once (`fio --server` on each): host[:port],... or "
    "@FILE with one a line. TARGET is then a directory on every client.",
)
@click.option(
    "--scale",
    help="With --clients: run the suite with the first k clients for each k, e.g. 1,2,3.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@click.pass_context
def run(
    ctx: click.Context,
    /,
    clients: str | None,
    scale: str | None,
    spec: str | None,
    prefill: bool,
    as_json: bool,
    **_plan: Any,  # the other options (targets, label, ...): run_request reads ctx.params
) -> int:
    """Run a suite on each TARGET (default: the current directory) and store the results.

    TARGET is a directory (iobench creates a test file there and removes it afterwards), an
    existing file, or a block device (read-only workloads unless --destructive). With
    --clients, TARGET is one directory that every client sees (a shared filesystem, or the
    same path on each): every client gets its own test file there, all run each workload
    together, and their aggregate is stored beside each client's result.

    \b
    Examples:
      iobench run
      iobench run /mnt/vol --suite standard --label ceph-rbd
      iobench run /dev/nvme1n1 --suite volume --destructive
      iobench run /mnt/vol --suite my-suite.toml --runtime 30s --size 4G --json
      iobench run /mnt/local /mnt/ceph --suite standard --repeat 3
      iobench run /mnt/shared --clients node1,node2,node3 --suite standard
      iobench run /mnt/shared --clients @hosts.txt --scale 1,2,3
      iobench run /mnt/vol --suite volume --expect 'rand-r.read.iops>=5000'
      iobench run /dev/nvme1n1 --suite volume --destructive --spec aws-gp3 --spec-param iops=6000
      iobench run /dev/sdb --prefill --destructive
    """
    from iobench.documents.printed import run_document
    from iobench.report.terminal import render_run

    request = run_request(ctx.params)
    if scale and not clients:
        raise UserError("--scale goes with --clients", "name the clients with --clients")
    if clients:
        if spec or prefill:
            raise UserError(
                f"{'--spec' if spec else '--prefill'} does not go with --clients: a spec "
                "describes one volume, and iobench writes only its own test files there",
                "hold the aggregate to a figure with --expect",
            )
        outcome, record = _run_on_clients(ctx, request, clients, scale)
    else:
        outcome, record = execute_request(ctx, request)
    if as_json:
        emit_json(run_document(record))
    else:
        render_run(record, stdout(), error=False)  # run_code says it, once, on stderr
    return run_code(outcome, record)


def run_request(params: dict[str, Any]) -> Any:
    """What `run` and `doctor` were asked (their click parameters, by name), checked: a
    RunRequest. `doctor` has no --label or --repeat."""
    from iobench.engine import RunRequest
    from iobench.expect import with_expectations
    from iobench.specs import parse_spec_params, spec_data
    from iobench.suites import apply_overrides, load_suite

    p = params
    if p["overwrite_signatures"] and not p["destructive"]:
        raise UserError(
            "--overwrite-signatures only makes sense with --destructive",
            "add --destructive, or drop --overwrite-signatures",
        )
    if p["spec_params"] and not p["spec"]:
        raise UserError("--spec-param goes with --spec", "name the spec with --spec")
    if p["spec"]:
        spec_data(p["spec"])  # an unknown spec is named before anything else
    loaded = load_suite(p["suite"])
    loaded = apply_overrides(
        loaded,
        runtime_s=parse_opt(p["runtime"], parse_duration, "--runtime"),
        size=parse_opt(p["size"], parse_size, "--size"),
        ramp_s=parse_opt(p["ramp"], parse_duration, "--ramp"),
    )
    loaded = with_expectations(loaded, p["expectations"])
    return RunRequest(
        targets=p["targets"] or (".",),
        suite=loaded,
        label=p.get("label"),
        destructive=p["destructive"],
        overwrite_signatures=p["overwrite_signatures"],
        argv=("iobench", *sys.argv[1:]),
        repeat=p.get("repeat", 1),
        prefill=p["prefill"],
        spec=p["spec"],
        spec_params=parse_spec_params(p["spec_params"]),
    )


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@plan_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@click.pass_context
def doctor(ctx: click.Context, /, as_json: bool, **_plan: Any) -> int:
    """Explain what `iobench run` would do, and its pitfalls, without running anything.

    Takes the same TARGETs and options as `run`. Shows the host and each target's storage,
    the steps and how long they take, the exact fio job file of every step, the
    expectations (and a provider spec's promise per workload), and every finding about the
    method with its reason and fix. Reads a few blocks of an existing file or device to see
    whether its test area was ever written; writes nothing. Exits like `run` would refuse
    (2 or 3) when the run could not start.

    \b
    Examples:
      iobench doctor
      iobench doctor /mnt/vol --suite standard
      iobench doctor /dev/sdb --suite volume --destructive --spec aws-gp2
      iobench doctor /mnt/vol --expect 'randread-4k-qd32x4.read.iops>=20k' --json
    """
    from iobench.engine import protected_paths
    from iobench.engine.preflight import preflight
    from iobench.report.doctor import doctor_document, render_doctor

    request = run_request(ctx.params)
    refused: IobenchError | None = None
    try:
        planned = preflight(request, protected_paths(db_path(ctx)))
    except IobenchError as e:
        planned, refused = None, e
    doc = doctor_document(planned, refused, request.suite)
    if as_json:
        emit_json(doc)
    else:
        render_doctor(doc, stdout())
    return int(refused.exit_code) if refused else 0


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def specs(as_json: bool) -> None:
    """List the provider specs `--spec` takes: volume types, parameters and sources.

    A spec is what a provider publishes for a volume type (IOPS and bandwidth by size,
    vCPUs or provisioned figures, bursts). `run --spec NAME` checks a run against it and
    shows each workload's share of what was promised.

    \b
    Examples:
      iobench specs
      iobench specs --json
      iobench run /mnt/vol --suite volume --spec aws-gp3 --spec-param iops=6000
    """
    from iobench.report.specs import render_specs, specs_document

    doc = specs_document()
    if as_json:
        emit_json(doc)
    else:
        render_specs(doc, stdout())


def _run_on_clients(ctx: click.Context, request: Any, clients: str, scale: str | None) -> Any:
    """``run --clients``: ``request`` (a RunRequest) on the clients; (outcome, stored run)."""
    from iobench.clients import parse_clients

    if len(request.targets) != 1:
        raise UserError(
            "with --clients give exactly one TARGET: the directory each client tests in",
            "e.g. iobench run /mnt/shared --clients node1,node2",
        )
    if request.destructive:
        raise UserError(
            "--destructive does not go with --clients: iobench writes only test files of its "
            "own on the clients, never devices or existing files",
            "leave out --destructive",
        )
    counts = parse_list(scale, _count, "--scale") if scale else []
    on_clients = dataclasses.replace(
        request, clients=tuple(parse_clients(clients)), scale=tuple(counts)
    )
    return execute_request(ctx, on_clients)


def _count(value: str) -> int:
    n = int(value)
    if n < 1:
        raise ValueError("a number of clients is 1 or more")
    return n


@main.group()
def clients() -> None:
    """The fio servers a run can use as clients (`iobench run --clients`).

    Start `fio --server=ip:ADDRESS` on each load machine first (docs/clients.md: systemd,
    Kubernetes, and why to bind it to a private address).

    \b
    Examples:
      iobench clients check node1,node2,node3
      iobench run /mnt/shared --clients node1,node2,node3 --scale 1,2,3
    """


@clients.command(name="check")
@click.argument("names", metavar="CLIENTS")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def clients_check(names: str, as_json: bool) -> int:
    """Check that each client is reachable and runs jobs for this fio.

    CLIENTS is host[:port],... or @FILE (one a line, # comments). For each: a TCP connection
    within 3 s, then a job on fio's null engine (it touches no file). Exits 1 if any fails.

    \b
    Examples:
      iobench clients check node1,node2,node3
      iobench clients check @hosts.txt --json
    """
    from iobench.clients import check_clients, parse_clients
    from iobench.fio.confine import confinement
    from iobench.fio.runner import find_fio
    from iobench.report.clients import render_checks

    parsed = parse_clients(names)
    fio = find_fio()
    confined = confinement()
    with stop_signals_as_interrupt():
        checks = check_clients(parsed, fio, confined)
    if as_json:
        emit_json(
            {
                "schema_version": 1,
                "kind": "clients",
                "fio_version": fio.version,
                "fio_client": confined.as_dict(),
                "clients": [c.as_dict() for c in checks],
            }
        )
    else:
        render_checks(checks, fio.version, stdout(), confined.describe())
    return 0 if all(c.ok for c in checks) else int(ExitCode.RUN_FAILED)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def suites(as_json: bool) -> None:
    """List the built-in suites and their workloads.

    \b
    Example:
      iobench suites
      iobench suites --json
    """
    from iobench.records import SuiteDefinition
    from iobench.report.terminal import render_suites
    from iobench.suites import builtin_names, load_builtin

    loaded = [load_builtin(n) for n in builtin_names()]
    if as_json:
        emit_json(
            {
                "schema_version": 1,
                "kind": "suites",
                "suites": [SuiteDefinition.of_suite(s).as_dict() for s in loaded],
            }
        )
    else:
        render_suites(loaded, stdout())


@main.command()
@click.argument("target", required=False, default=".")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def info(target: str, as_json: bool) -> None:
    """Show what is under the hood: host, and TARGET's filesystem, mount and devices.

    \b
    Examples:
      iobench info
      iobench info /mnt/vol --json
      iobench info /dev/nvme0n1
    """
    from iobench.probe import probe_host, probe_target
    from iobench.report.context import render_info
    from iobench.targets import resolve_target

    resolved = resolve_target(target)
    host = probe_host()
    ctx = probe_target(resolved.path)
    doc = {
        "schema_version": 1,
        "kind": "info",
        "host": host,
        "target": {
            "spec": resolved.spec,
            "path": resolved.path,
            "kind": resolved.kind,
            "size_bytes": resolved.size_bytes,
            "free_bytes": resolved.free_bytes,
            "context": ctx,
        },
    }
    if as_json:
        emit_json(doc)
    else:
        render_info(doc, stdout())


@main.command(name="list")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--label", help="Only runs with this label.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@click.pass_context
def list_(ctx: click.Context, limit: int, label: str | None, as_json: bool) -> None:
    """List stored runs, newest first.

    \b
    Example:
      iobench list --label ceph-rbd
    """
    from iobench.documents.printed import runs_document
    from iobench.report.terminal import render_run_list

    if not db_exists(ctx):  # reading creates nothing
        runs = []
    else:
        with open_store(ctx, readonly=True) as store:
            runs = store.list_runs(limit=limit, label=label)
    if as_json:
        emit_json(runs_document(runs))
    else:
        render_run_list(runs, stdout())


@main.command(context_settings=RUN_REFS)
@click.argument("run_ref", metavar="RUN")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@click.option("--raw", is_flag=True, help="Also print the evidence: fio job files, argv, stderr.")
@click.pass_context
def show(ctx: click.Context, run_ref: str, as_json: bool, raw: bool) -> None:
    """Show one stored run. RUN is an id from `iobench list`, `latest`, or -N (N-th newest).

    \b
    Examples:
      iobench show latest
      iobench show 12 --json
      iobench show 12 --raw
    """
    from iobench.documents.printed import run_document
    from iobench.report.terminal import render_evidence, render_run

    require_db(ctx)
    with open_store(ctx, readonly=True) as store:
        record = store.get_run(store.resolve(run_ref), with_raw=raw and not as_json)
    if as_json:
        emit_json(run_document(record))
        return
    out = stdout()
    render_run(record, out)
    if raw:
        render_evidence(record, out)


@main.command(epilog=EXIT_CODES_HELP, context_settings=RUN_REFS)
@click.argument("run_refs", nargs=-1, required=True, metavar="RUN...")
@click.option("-y", "--yes", is_flag=True, help="Remove without asking.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document on stdout (needs --yes)."
)
@click.pass_context
def rm(ctx: click.Context, run_refs: tuple[str, ...], yes: bool, as_json: bool) -> None:
    """Remove runs with their targets, results and evidence: all of them, or none.

    RUN is an id from `iobench list`, `latest`, or -N (N-th newest). Every RUN is checked
    before anything is removed: an unknown run, or one named twice, removes nothing. rm
    shows what it would remove and asks; with --yes it does not ask. When stdin is not a
    terminal and --yes is not given, it removes nothing and exits 2. A run still running
    on this host is refused. A run that other commands cannot read (damaged JSON) can
    still be removed. The database file does not shrink: SQLite reuses the space.

    \b
    Examples:
      iobench rm 12
      iobench rm 3 4 -1
      iobench rm latest --yes --json
    """
    if as_json and not yes:
        raise UserError(
            "--json needs --yes: rm asks before it removes anything, and the question "
            "cannot be part of a JSON document",
            "add --yes once you have checked what would go, e.g. with `iobench list`",
        )
    require_db(ctx)
    with open_store(ctx, readonly=True) as store:  # what would go; nothing written yet
        ids = [store.resolve(r) for r in run_refs]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise UserError(f"run {twice[0]} is named twice", "name each run once")
        briefs = store.removal_briefs(ids)
        store.require_writable()
    if not yes:
        err = stderr()
        err.print(
            f"iobench rm would remove {len(briefs)} run(s), with their targets, results "
            "and evidence:",
            highlight=False,
            markup=False,
        )
        for b in briefs:
            err.print("  " + _brief_line(b), highlight=False, markup=False)
        if sys.stdin is None or not sys.stdin.isatty():
            raise UserError(
                "nothing was removed: rm asks before it removes runs, and stdin is not a terminal",
                "add --yes to remove them without asking",
            )
        if not click.confirm(f"Remove {len(briefs)} run(s)?", default=False, err=True):
            err.print("nothing was removed", highlight=False, markup=False)
            return
    with open_store(ctx) as store:
        store.remove_runs(ids)
    if as_json:
        emit_json(_removed_document(briefs))
        return
    out = stdout()
    for b in briefs:
        out.print(
            f"removed run {b.id} ({literal(b.suite)}, {len(b.targets)} target(s), "
            f"{b.results} result(s))",
            highlight=False,
            markup=False,
        )


def _removed_document(briefs: Sequence[Any]) -> dict[str, Any]:
    """``rm --json``: the ``kind: "removed"`` document (docs/json-schema.md)."""
    return {
        "schema_version": 1,
        "kind": "removed",
        "runs": [
            {
                "run_id": b.id,
                "uuid": b.uuid,
                "status": b.status,
                "suite": b.suite,
                "label": b.label,
                "started_at": b.started_at,
                "targets": list(b.targets),
                "results": b.results,
            }
            for b in briefs
        ],
    }


def _brief_line(b: Any) -> str:
    """One run as `rm` lists it: id, time, status, suite, label, targets, results."""
    label = f"  label {literal(b.label)}" if b.label is not None else ""
    targets = ", ".join(literal(t) for t in b.targets) or "none"
    return (
        f"run {b.id}  {literal(b.started_at.replace('T', ' ')[:19])}  {literal(b.status)}  "
        f"suite {literal(b.suite)}{label}  targets {targets}  {b.results} result(s)"
    )


def _runs_for(store: Any, refs: Sequence[str], labels: Sequence[str]) -> list[Any]:
    """Runs named by id/latest/-N, then the latest run of each label, in that order."""
    ids = [store.resolve(r) for r in refs]
    for label in labels:
        found = store.list_runs(label=label)
        if not found:
            raise UserError(
                f"no stored run has the label {label!r}",
                "see the labels with `iobench list`",
            )
        # The latest complete run; an aborted or failed one only when there is no other.
        chosen = next((r for r in found if r.status == "complete"), found[0])
        if chosen.status != "complete":
            stderr().print(
                f"note: the latest run labelled {label!r} is run {chosen.id}, "
                + literal(chosen.status),
                highlight=False,
                markup=False,
            )
        ids.append(chosen.id)
    if not ids:
        raise UserError("name at least one run (an id, latest, -N) or --label")
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise UserError(
            f"run {twice[0]} is named twice",
            "name each run once (a label names its latest complete run)",
        )
    return [store.get_run(i) for i in ids]


@main.command(context_settings=RUN_REFS)
@click.argument("run_refs", nargs=-1, metavar="[RUN]...")
@click.option("--label", "labels", multiple=True, help="The latest run with this label.")
@click.option("--baseline", help="The run the others are compared with (default: the first).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@click.pass_context
def compare(
    ctx: click.Context,
    run_refs: tuple[str, ...],
    labels: tuple[str, ...],
    baseline: str | None,
    as_json: bool,
) -> None:
    """Compare runs side by side: ratios to a baseline, noise, and context differences.

    Workloads are matched on identical parameters; what cannot be matched is listed. With
    repetitions (run --repeat), a difference inside the noise is shown as such. A run with
    several targets contributes one column per target.

    \b
    Examples:
      iobench compare 3 4
      iobench compare --label local-ssd --label ceph-rbd
      iobench compare 3 4 5 --baseline 4 --json
    """
    from iobench.analysis.compare import compare as compare_runs
    from iobench.report.compare import render_comparison

    require_db(ctx)
    with open_store(ctx, readonly=True) as store:
        runs = _runs_for(store, run_refs, labels)
        base = store.resolve(baseline) if baseline else None
    if base is not None and base not in [r.id for r in runs]:
        raise UserError(
            f"the baseline run {base} is not among the compared runs",
            "name it among the runs too",
        )
    comparison = compare_runs(runs, base)
    if as_json:
        emit_json(comparison.to_dict())
    else:
        render_comparison(comparison, stdout())


@main.command(context_settings=RUN_REFS)
@click.argument("run_refs", nargs=-1, metavar="[RUN]...")
@click.option("--label", "labels", multiple=True, help="The latest run with this label.")
@click.option("--baseline", help="The run the others are compared with (default: the first).")
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="FILE",
    help="The report file: .html (charts, works offline) or .md (tables for a ticket); "
    "- for standard output.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "md"]),
    help="html or md; default: from the file name's suffix (md for -).",
)
@click.pass_context
def report(
    ctx: click.Context,
    run_refs: tuple[str, ...],
    labels: tuple[str, ...],
    baseline: str | None,
    output: str,
    fmt: str | None,
) -> None:
    """Write a report of one or more runs: self-contained HTML with charts, or Markdown.

    The file is written whole or not at all; an existing file keeps its permissions, a
    symbolic link stays a link (its target is written), a terminal, FIFO or /dev/null is
    written through, and a block device or directory is refused (docs/safety.md).

    \b
    Examples:
      iobench report latest -o report.html
      iobench report 3 4 5 -o comparison.html
      iobench report --label local-ssd --label ceph-rbd -o ticket.md
      iobench report latest -o - | less
    """
    from iobench.analysis.compare import compare as compare_runs
    from iobench.report.html import render_html
    from iobench.report.markdown import render_markdown

    fmt = fmt or _report_format(output)
    require_db(ctx)
    with open_store(ctx, readonly=True) as store:
        runs = _runs_for(store, run_refs, labels)
        base = store.resolve(baseline) if baseline else None
    setups = sum(max(1, len(r.targets)) for r in runs)
    if base is not None and (setups < 2 or base not in [r.id for r in runs]):
        raise UserError(
            f"--baseline {baseline}: the baseline must be one of two or more compared runs",
            "name the baseline among the runs, or drop --baseline",
        )
    comparison = compare_runs(runs, base) if setups > 1 else None
    text = render_html(runs, comparison) if fmt == "html" else render_markdown(runs, comparison)
    where = write_output(output, text)
    stderr().print(f"wrote {literal(where)} ({len(runs)} run(s))", highlight=False, markup=False)


def _report_format(output: str) -> str:
    """html or md, from the report file's name."""
    if output == STDOUT:
        return "md"
    suffix = Path(output).suffix.lower()
    if suffix in (".html", ".htm"):
        return "html"
    if suffix in (".md", ".markdown"):
        return "md"
    raise UserError(
        f"-o {output}: the report format comes from the file name; use .html or .md",
        "or choose it with --format html|md",
    )


@main.command(name="import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--label", help="A label for the imported runs.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@click.pass_context
def import_(ctx: click.Context, files: tuple[str, ...], label: str | None, as_json: bool) -> None:
    """Import fio JSON output files (fio 2.x and 3.x, json or json+, client/server) as runs.

    A file that `iobench export RUN --format json` wrote comes back as the same run (a run
    already in the database is refused). Every file is checked first; if any is not fio
    output or an iobench export, nothing is imported.

    \b
    Examples:
      iobench import results.json --label legacy
      iobench import old/*.json --json
      iobench import run7.json            # exported on another machine
    """
    from iobench.documents.printed import runs_document
    from iobench.importer import read_files, store_imports

    imports = read_files(list(files))  # every file checked before the database is opened
    with open_store(ctx) as store:
        ids = store_imports(store, imports, label=label, argv=("iobench", *sys.argv[1:]))
        runs = [store.get_run(i) for i in ids]
    if as_json:
        emit_json(runs_document(runs))
        return
    out = stdout()
    for r in runs:
        out.print(
            f"imported run {r.id} from {literal(r.source)}: {len(r.results)} result(s), fio "
            + literal(r.fio_version or "?"),
            highlight=False,
            markup=False,
        )


@main.command(context_settings=RUN_REFS)
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "json"]),
    default="csv",
    show_default=True,
    help="csv: one row per workload, direction and repetition; json: as `show --json`, "
    "with histograms and evidence (`iobench import` reads it back).",
)
@click.option(
    "-o",
    "--output",
    default=STDOUT,
    show_default=True,
    metavar="FILE",
    help="Write to this file instead of standard output (-).",
)
@click.pass_context
def export(ctx: click.Context, run_ref: str, fmt: str, output: str) -> None:
    """Export one run's results as CSV or JSON.

    A file is written whole or not at all, like a report (see `iobench report --help`).

    \b
    Examples:
      iobench export latest > results.csv
      iobench export 7 --format json -o run7.json
    """
    from iobench.export import export_csv, export_json

    require_db(ctx)
    with open_store(ctx, readonly=True) as store:
        run = store.get_run(store.resolve(run_ref))
    text = export_csv(run) if fmt == "csv" else export_json(run)
    write_output(output, text)


main.add_command(sweep)
main.add_command(characterize)


def run_cli(argv: Sequence[str]) -> int:
    """Run the CLI and return the exit code; errors become messages, not tracebacks."""
    real_stdout = sys.stdout
    sys.stdout = GuardedStream(real_stdout, "standard output")
    try:
        code = _run(argv)
        try:
            sys.stdout.flush()
        except OutputError as e:
            code = _stdout_failed(e)
    finally:
        sys.stdout = real_stdout
    return code


def _run(argv: Sequence[str]) -> int:
    want_traceback = "--traceback" in argv or os.environ.get("IOBENCH_TRACEBACK") == "1"
    err = stderr()
    try:
        result = main.main(args=list(argv), prog_name="iobench", standalone_mode=False)
    except click.exceptions.Abort:
        err.print("iobench: interrupted")
        return int(ExitCode.INTERRUPTED)
    except click.ClickException as e:
        print_click_error(e, err)
        return int(ExitCode.BAD_INPUT) if e.exit_code == 2 else e.exit_code
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except KeyboardInterrupt:
        err.print("iobench: interrupted")
        return int(ExitCode.INTERRUPTED)
    except OutputError as e:
        if want_traceback:
            err.print(literal_lines(traceback.format_exc()), end="", markup=False)
        return _stdout_failed(e)
    except IobenchError as e:
        if want_traceback:
            err.print(literal_lines(traceback.format_exc()), end="", markup=False)
        print_error(e, err)
        return int(e.exit_code)
    except Exception:
        if want_traceback:
            raise
        err.print(
            "[red]iobench: internal error[/] (a bug): "
            + markup_literal(traceback.format_exc().splitlines()[-1])
        )
        err.print("  rerun with --traceback and report it")
        return int(ExitCode.RUN_FAILED)
    return int(result) if isinstance(result, int) else 0


def _stdout_failed(e: OutputError) -> int:
    """A failed write: said on stderr (a broken pipe quietly), and whatever is still
    buffered for stdout dropped, so that Python's exit does not fail on it again."""
    if not isinstance(e, StreamClosed):
        print_error(e, stderr())
    if e.stream == "standard output":
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ else 1)
            os.close(devnull)
    return int(e.exit_code)
