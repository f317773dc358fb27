"""``iobench suites``: the built-in suites, listed; ``suites export``: a suite as a job file
that plain fio runs as it is (suites/suitefile.py)."""

from __future__ import annotations

import dataclasses
import datetime
import os
from typing import TYPE_CHECKING, Any

import click

from iobench.cli import checks
from iobench.cli.env import Environment, pass_env
from iobench.cli.options import (
    access_options,
    destructive_options,
    given_access,
    json_option,
    output_option,
    parse_opt,
    size_option,
)
from iobench.documents import envelope
from iobench.output import STDOUT
from iobench.units import parse_duration, parse_size

if TYPE_CHECKING:
    from iobench.model import Suite
    from iobench.suites.pin import Pinning
    from iobench.suites.suitefile import Export


@click.group(invoke_without_command=True, subcommand_metavar="[COMMAND [ARGS]...]")
@json_option()
@click.pass_context
def suites(ctx: click.Context, as_json: bool) -> None:
    """List the built-in suites and their workloads; `suites show` checks and shows one
    (or a suite file, or a fio job file), `suites export` writes one as a fio job file.

    \b
    Examples:
      iobench suites
      iobench suites --json
      iobench suites show my-test.fio
      iobench suites export quick -o quick.fio
    """
    if ctx.invoked_subcommand is not None:
        return
    from iobench.suites import builtin_names, load_builtin

    env = ctx.find_object(Environment)
    assert env is not None  # main puts it there
    _print_suites(env, [load_builtin(n) for n in builtin_names()], as_json)


@suites.command(name="show")
@click.argument("suite", metavar="NAME|FILE")
@json_option()
@pass_env
def suites_show(env: Environment, suite: str, as_json: bool) -> None:
    """Check and show one suite: a built-in one, a TOML suite file or a fio job file.

    A file is checked as `run --suite FILE` checks it (every mistake at once, with its
    line; exit 2); a fio job file's jobs are shown as the workloads iobench runs, with the
    notes on how it was read (its filename replaced by the target, ...).

    \b
    Examples:
      iobench suites show quick
      iobench suites show my-test.fio --json
      iobench suites show /usr/share/doc/fio/examples/ssd-test.fio
    """
    from iobench.suites import load_suite

    _print_suites(env, [load_suite(suite)], as_json)


def _print_suites(env: Environment, loaded: list[Suite], as_json: bool) -> None:
    from dataclasses import asdict

    from iobench.records import SuiteDefinition
    from iobench.report.terminal import render_suites

    if as_json:
        docs = [
            {**SuiteDefinition.of_suite(s).as_dict(), "notes": [asdict(n) for n in s.notes]}
            for s in loaded
        ]
        env.emit_json({**envelope("suites"), "suites": docs})
    else:
        render_suites(loaded, env.stdout)


@suites.command(name="export")
@click.argument("name", metavar="SUITE")
@output_option(
    "Write the job file to FILE (a new file: see --force) instead of standard output (-)."
)
@click.option("--force", is_flag=True, help="Replace FILE if it exists (never a link).")
@click.option(
    "--target",
    metavar="PATH",
    help="The directory, file or block device the jobs test, as `iobench run PATH` would "
    "(default: the directory fio runs in).",
)
@click.option("--runtime", help="Override every workload's runtime, e.g. 30s, 2m.")
@click.option("--ramp", help="Override every workload's ramp time (excluded from results).")
@size_option()
@destructive_options()
@access_options()
@click.option(
    "--prefill",
    is_flag=True,
    help="Write the test area of a device or existing file first (with --destructive).",
)
@click.option(
    "--pin-to-device",
    is_flag=True,
    help="With --target: pin each job to the CPUs of the target device's blk-mq queues "
    "on this host, as `iobench run --pin-to-device` does (cpus_allowed, "
    "cpus_allowed_policy=split).",
)
@click.option(
    "--unfitted",
    is_flag=True,
    help="Keep a built-in suite's own numjobs and iodepth. By default the file holds what "
    "`iobench run` runs on this host: a built-in suite fitted to its CPUs.",
)
@pass_env
def export(env: Environment, /, name: str, output: str, force: bool, **options: Any) -> None:
    """Write SUITE (a built-in suite or a suite file) as a job file that plain fio runs
    as it is: `fio FILE.fio`, on a host with fio and nothing else.

    The file holds the steps `iobench run PATH --suite SUITE` runs on this host, in its
    order (each section waits for the one before it: stonewall): a built-in suite fitted to
    this host's CPUs as `run` fits it (the file says which workloads; --unfitted keeps the
    suite's own numjobs), so that `iobench import` of plain fio's output compares
    workload for workload with a run. Its comments say what iobench does that plain fio
    does not (its checks, its own test file). With --target the target is checked as `run`
    checks it: a block device or an existing file that the suite writes needs
    --destructive, and the file warns of it.
    Writes nothing but FILE, and an existing FILE only with --force.

    \b
    Examples:
      iobench suites export quick -o quick.fio
      iobench suites export my-suite.toml --target /mnt/vol --runtime 30s --size 4G -o my.fio
      iobench suites export volume --target /dev/sdb --destructive -o volume.fio
      iobench suites export quick --target /mnt/vol --pin-to-device -o pinned.fio
      iobench suites export quick --unfitted -o quick-as-defined.fio
    """
    from iobench.output import write_new, write_output
    from iobench.report.literal import literal
    from iobench.suites.suitefile import suite_jobfile

    checks.overwrite_needs_destructive(options["destructive"], options["overwrite_signatures"])
    exported = _export(env, name, file_name=None if output == STDOUT else output, **options)
    text = suite_jobfile(exported)
    if output == STDOUT:
        write_output(STDOUT, text)
        return
    where = write_new(output, text, force=force)
    steps = text.count("\nstonewall\n")
    env.stderr.print(
        literal(f"wrote {where} ({steps} fio jobs, one after another); run it: fio {where}"),
        highlight=False,
        markup=False,
    )


def _export(
    env: Environment,
    name: str,
    *,
    target: str | None,
    runtime: str | None,
    ramp: str | None,
    size: str | None,
    destructive: bool,
    overwrite_signatures: bool,
    prefill: bool,
    pin_to_device: bool,
    unfitted: bool,
    file_name: str | None,
) -> Export:
    """What `suites export` was asked, checked as `run` checks it: the Export."""
    from iobench.engine import protected_paths
    from iobench.engine.preflight import prepare_target
    from iobench.engine.request import RunRequest
    from iobench.suites import apply_overrides, fit_to_cpus, load_suite
    from iobench.suites.suitefile import Export
    from iobench.targets import resolve_target

    suite = apply_overrides(
        load_suite(name),
        runtime_s=parse_opt(runtime, parse_duration, "--runtime"),
        size=parse_opt(size, parse_size, "--size"),
        ramp_s=parse_opt(ramp, parse_duration, "--ramp"),
        written={"--runtime": runtime, "--size": size, "--ramp": ramp},
    )
    if prefill and target is None:
        raise click.UsageError("--prefill needs --target: a device or an existing file")
    if unfitted and pin_to_device:
        raise click.UsageError(
            "--unfitted and --pin-to-device exclude each other: pinning runs no more jobs "
            "than the CPUs of the device's queues"
        )
    if pin_to_device and target is None:
        raise click.UsageError(
            "--pin-to-device needs --target: the device whose queues the jobs are pinned to"
        )
    resolved = None
    limit = None
    if target is not None:
        resolved = resolve_target(target, given_access())
        request = RunRequest(
            targets=(target,), suite=suite, destructive=destructive,
            overwrite_signatures=overwrite_signatures, prefill=prefill, access=given_access(),
        )  # fmt: skip
        limit = prepare_target(resolved, suite, request, protected_paths(env.db_path())).size_limit
    pin = None
    cpus = len(os.sched_getaffinity(0))
    if pin_to_device and target is not None and resolved is not None:
        suite, pin = _pinned(suite, target, resolved.path)
        fitted = suite
    else:
        fitted = fit_to_cpus(suite, cpus)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return Export(
        suite=suite if unfitted else fitted, target=resolved, size_limit=limit,
        prefill=prefill, fitted=fitted.fitted, cpus=len(pin.cpus) if pin else cpus,
        created=now, file_name=file_name, pin=pin, unfitted=unfitted,
    )  # fmt: skip


def _pinned(suite: Suite, spec: str, path: str) -> tuple[Suite, Pinning]:
    """--pin-to-device as `run` does it: a built-in suite fitted to the queues' CPUs, no
    workload with more jobs than them, each workload's jobs on them."""
    from iobench.engine.preflight import pin_for
    from iobench.probe import probe_target
    from iobench.suites import fit_to_cpus
    from iobench.suites.pin import check_jobs, placed

    pin = pin_for(spec, probe_target(path))
    suite = fit_to_cpus(suite, len(pin.cpus))
    check_jobs(suite, pin)
    workloads = tuple(placed(w, pin) for w in suite.workloads)
    return dataclasses.replace(suite, workloads=workloads), pin
