"""``iobench run`` and ``iobench doctor``: a suite on targets (or on fio clients), and
what such a run would do, without running it. ``run_request`` builds the engine's
request from what both were asked."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import click

from iobench.cli import checks
from iobench.cli.env import Environment, pass_env
from iobench.cli.execution import execute_request, shown_run
from iobench.cli.options import (
    EXIT_CODES_HELP,
    access_options,
    destructive_options,
    given_access,
    json_option,
    label_option,
    parse_list,
    parse_opt,
    size_option,
    with_options,
)
from iobench.cli.precondition import precondition_option
from iobench.cli.steady import steady_options, steady_request
from iobench.errors import IobenchError, UserError
from iobench.model import Precondition
from iobench.suites import DEFAULT_SUITE
from iobench.units import parse_duration, parse_size

if TYPE_CHECKING:
    from iobench.engine import Outcome, RunRequest
    from iobench.records import RunRecord

# The options `run` and `doctor` share: what to run, where, and what to expect.
workload_options = with_options(
    [
        click.option(
            "-s",
            "--suite",
            default=DEFAULT_SUITE,
            show_default=True,
            help="A built-in suite (see `iobench suites`), or the path of a suite file "
            "(.toml) or of a fio job file (.fio).",
        ),
        click.option("--runtime", help="Override every workload's runtime, e.g. 30s, 2m."),
        click.option("--ramp", help="Override every workload's ramp time (excluded from results)."),
        size_option(),
        destructive_options(),
        access_options(),
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
        click.option(
            "--pin-to-device",
            is_flag=True,
            help="Pin fio's jobs to the CPUs of the target device's blk-mq queues, one job "
            "per CPU, CPU 0 left out where there are enough (cpus_allowed, "
            "cpus_allowed_policy=split), as cloud-disk guides do.",
        ),
        *steady_options,
        precondition_option,
    ]
)


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@workload_options
@label_option()
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
@json_option()
@pass_env
def run(
    env: Environment,
    targets: tuple[str, ...],
    suite: str,
    runtime: str | None,
    ramp: str | None,
    size: str | None,
    destructive: bool,
    overwrite_signatures: bool,
    expectations: tuple[str, ...],
    spec: str | None,
    spec_params: tuple[str, ...],
    prefill: bool,
    pin_to_device: bool,
    steady_state: str | None,
    round_time: str | None,
    max_rounds: int | None,
    precondition: bool,
    label: str | None,
    repeat: int,
    clients: str | None,
    scale: str | None,
    as_json: bool,
) -> int:
    """Run a suite on each TARGET (default: the current directory) and store the results.

    TARGET is a directory (iobench creates a test file there and removes it afterwards), an
    existing file, a block device, an NBD export (nbd://HOST[:PORT]/EXPORT,
    nbd+unix:///EXPORT?socket=PATH) or a Ceph RBD image (rbd:POOL/IMAGE, with --ceph-conf
    and --ceph-user): the last four only read unless --destructive. With --clients, TARGET
    is one directory that every client sees (a shared filesystem, or the same path on
    each): every client gets its own test file there, all run each workload together, and
    their aggregate is stored beside each client's result; or network storage that each
    client reaches itself, {client} giving each its own (rbd:rbd/bench-{client}).

    \b
    Examples:
      iobench run
      iobench run /mnt/vol --suite standard --label ceph-rbd
      iobench run /dev/nvme1n1 --suite volume --destructive
      iobench run /mnt/vol --suite my-suite.toml --runtime 30s --size 4G --json
      iobench run /mnt/vol --suite /usr/share/doc/fio/examples/ssd-test.fio
      iobench run /mnt/local /mnt/ceph --suite standard --repeat 3
      iobench run /mnt/shared --clients node1,node2,node3 --suite standard
      iobench run /mnt/shared --clients @hosts.txt --scale 1,2,3
      iobench run /mnt/vol --suite volume --expect 'rand-r.read.iops>=5000'
      iobench run /dev/nvme1n1 --suite volume --destructive --spec aws-gp3 --spec-param iops=6000
      iobench run /dev/sdb --prefill --destructive
      iobench run /dev/nvme1n1 --suite standard --destructive --precondition
      iobench run /dev/vdb --suite volume --destructive --pin-to-device
      iobench run nbd://10.0.0.5:10809/export --suite volume --destructive
      iobench run rbd:rbd/bench --ceph-conf /etc/ceph/ceph.conf --destructive --prefill
      iobench run 'rbd:rbd/bench-{client}' --clients @hosts.txt --destructive
    """

    request = run_request(
        env, targets, suite=suite, runtime=runtime, ramp=ramp, size=size,
        destructive=destructive, overwrite_signatures=overwrite_signatures,
        expectations=expectations, spec=spec, spec_params=spec_params, prefill=prefill,
        label=label, repeat=repeat, pin_to_device=pin_to_device,
        steady=(steady_state, round_time, max_rounds), precondition=precondition,
    )  # fmt: skip
    checks.scale_needs_clients(clients, scale)
    if clients:
        outcome, record = run_on_clients(env, request, clients, scale)
    else:
        outcome, record = execute_request(env, request)
    return shown_run(env, outcome, record, as_json)


def run_request(
    env: Environment,
    targets: tuple[str, ...],
    *,
    suite: str,
    runtime: str | None,
    ramp: str | None,
    size: str | None,
    destructive: bool,
    overwrite_signatures: bool,
    expectations: tuple[str, ...],
    spec: str | None,
    spec_params: tuple[str, ...],
    prefill: bool,
    label: str | None = None,
    repeat: int = 1,
    pin_to_device: bool = False,
    steady: tuple[str | None, str | None, int | None] = (None, None, None),
    precondition: bool = False,
) -> RunRequest:
    """What `run` and `doctor` were asked, checked: the engine's RunRequest. `doctor` has no
    --label or --repeat."""
    from iobench.engine import RunRequest
    from iobench.expect import with_expectations
    from iobench.specs import parse_spec_params, spec_data
    from iobench.suites import apply_overrides, load_suite

    checks.overwrite_needs_destructive(destructive, overwrite_signatures)
    checks.spec_param_needs_spec(spec, spec_params)
    checks.prefill_or_precondition(prefill, precondition)
    if spec:
        spec_data(spec)  # an unknown spec is named before anything else
    loaded = load_suite(suite)
    loaded = apply_overrides(
        loaded,
        runtime_s=parse_opt(runtime, parse_duration, "--runtime"),
        size=parse_opt(size, parse_size, "--size"),
        ramp_s=parse_opt(ramp, parse_duration, "--ramp"),
        written={"--runtime": runtime, "--size": size, "--ramp": ramp},
    )
    loaded = with_expectations(loaded, expectations)
    loaded, steady_state = steady_request(loaded, *steady, repeat=repeat, runtime=runtime)
    return RunRequest(
        targets=targets or (".",),
        suite=loaded,
        label=label,
        destructive=destructive,
        overwrite_signatures=overwrite_signatures,
        argv=env.argv,
        repeat=repeat,
        prefill=prefill,
        spec=spec,
        spec_params=parse_spec_params(spec_params),
        pin_to_device=pin_to_device,
        access=given_access(),
        steady_state=steady_state,
        precondition=Precondition() if precondition else None,
    )


def run_on_clients(
    env: Environment, request: RunRequest, clients: str, scale: str | None
) -> tuple[Outcome, RunRecord]:
    """``run --clients``: ``request`` on the clients; (outcome, stored run)."""
    from iobench.clients import parse_clients
    from iobench.engine.remote import check_clients_request

    check_clients_request(request)  # before the clients are even parsed
    counts = parse_list(scale, _count, "--scale") if scale else []
    on_clients = dataclasses.replace(
        request, clients=tuple(parse_clients(clients)), scale=tuple(counts)
    )
    return execute_request(env, on_clients)


def _count(value: str) -> int:
    n = int(value)
    if n < 1:
        raise ValueError("a number of clients is 1 or more")
    return n


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@workload_options
@click.option(
    "--fio-jobfile",
    metavar="FILE",
    help="Also write every step's fio job, in the run's order, to FILE: one job file that "
    "plain fio runs (fio FILE). Written like a report (see `iobench report --help`).",
)
@json_option()
@pass_env
def doctor(
    env: Environment,
    targets: tuple[str, ...],
    suite: str,
    runtime: str | None,
    ramp: str | None,
    size: str | None,
    destructive: bool,
    overwrite_signatures: bool,
    expectations: tuple[str, ...],
    spec: str | None,
    spec_params: tuple[str, ...],
    prefill: bool,
    pin_to_device: bool,
    steady_state: str | None,
    round_time: str | None,
    max_rounds: int | None,
    precondition: bool,
    fio_jobfile: str | None,
    as_json: bool,
) -> int:
    """Explain what `iobench run` would do, and its pitfalls, without running anything.

    Takes the same TARGETs and options as `run`. Shows the host and each target's storage,
    the steps and how long they take, the fio job of every step as plain fio runs it (the
    file or device by its path, with what iobench does around it), the expectations (and a
    provider spec's promise per workload), and every finding about the method with its
    reason and fix. Reads a few blocks of an existing file or device to see whether its
    test area was ever written; writes nothing but the --fio-jobfile FILE. Exits like `run`
    would refuse (2 or 3) when the run could not start, and then writes no job file.

    \b
    Examples:
      iobench doctor
      iobench doctor /mnt/vol --suite standard
      iobench doctor /dev/sdb --suite volume --destructive --spec aws-gp2
      iobench doctor /mnt/vol --expect 'randread-4k-qd32x4.read.iops>=20k' --json
      iobench doctor /mnt/vol --size 1G --runtime 10s --fio-jobfile plan.fio
    """
    from iobench.engine import protected_paths
    from iobench.engine.preflight import preflight
    from iobench.output import STDOUT
    from iobench.report.doctor import doctor_document, render_doctor
    from iobench.report.literal import literal

    if fio_jobfile == STDOUT:
        raise UserError(
            "--fio-jobfile -: standard output holds doctor's own output",
            "name a file: --fio-jobfile plan.fio",
        )
    request = run_request(
        env, targets, suite=suite, runtime=runtime, ramp=ramp, size=size,
        destructive=destructive, overwrite_signatures=overwrite_signatures,
        expectations=expectations, spec=spec, spec_params=spec_params, prefill=prefill,
        pin_to_device=pin_to_device, steady=(steady_state, round_time, max_rounds),
        precondition=precondition,
    )  # fmt: skip
    refused: IobenchError | None = None
    try:
        planned = preflight(request, protected_paths(env.db_path()))
    except IobenchError as e:
        planned, refused = None, e
    doc = doctor_document(planned, refused, request.suite, request.steady_state)
    # The file first: a name that cannot be written fails the command before it speaks.
    wrote = _write_fio_jobfile(fio_jobfile, doc) if fio_jobfile and not refused else None
    if as_json:
        env.emit_json(doc)
    else:
        render_doctor(doc, env.stdout)
    if fio_jobfile:
        said = wrote or f"no job file written to {fio_jobfile}: the run would be refused"
        env.stderr.print(literal(said), highlight=False, markup=False)
    return int(refused.exit_code) if refused else 0


def _write_fio_jobfile(name: str, doc: dict[str, Any]) -> str:
    """``doctor --fio-jobfile``: the plan's job file, written like a report; what to say."""
    from iobench.output import write_output
    from iobench.report.doctor import fio_command, fio_jobfile

    where = write_output(name, fio_jobfile(doc))
    n = len(doc["jobs"])
    jobs = "1 fio job" if n == 1 else f"{n} fio jobs"
    return f"wrote {where} ({jobs}); run them: {fio_command(doc, where)}"
