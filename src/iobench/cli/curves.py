"""``iobench sweep`` and ``iobench characterize``: curves, knees and limits.

Each builds a suite (sweep: the whole matrix; characterize: one template workload that a
chooser varies) and runs it as `run` runs one. The rules are in docs/characterize.md.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import TYPE_CHECKING, Any

import click

from iobench.cli import checks
from iobench.cli.env import Environment, pass_env
from iobench.cli.execution import execute_request, outcome_code
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
from iobench.documents import envelope
from iobench.errors import UserError
from iobench.model import READ_MODES, Override, Suite, Workload
from iobench.suites import check_overrides
from iobench.suites.options import MAX_RUNTIME_S, WHY_RUNTIME, say_seconds
from iobench.units import format_size_short, parse_duration, parse_size

if TYPE_CHECKING:
    from iobench.analysis.characterize import Settings
    from iobench.engine import Chooser, RunRequest
    from iobench.records import RunRecord

CURVE_MODES = ("randread", "read", "randwrite", "write")

# The options sweep and characterize share.
curve_options = with_options(
    [
        size_option(default="1G"),
        label_option(),
        click.option(
            "--p99-under",
            help="Also report the most throughput whose p99 latency stays under this, e.g. 2ms.",
        ),
        destructive_options(),
        access_options(),
        json_option(),
    ]
)


def _mode(value: str) -> str:
    if value not in CURVE_MODES:
        raise ValueError(f"use one of {', '.join(CURVE_MODES)}")
    return value


def _depth(value: str) -> int:
    n = int(value)
    if not 1 <= n <= 4096:
        raise ValueError("a queue depth is a whole number from 1 to 4096")
    return n


def _jobs(value: str) -> int:
    n = int(value)
    if not 1 <= n <= 256:
        raise ValueError("a number of jobs is a whole number from 1 to 256")
    return n


def _block(value: str) -> int:
    n = parse_size(value)
    if n < 512 or n % 512:
        raise ValueError("a block size for direct IO is a multiple of 512 bytes, e.g. 4k")
    return n


def _p99(value: str | None) -> float | None:
    seconds = parse_opt(value, parse_duration, "--p99-under")
    if seconds is not None and seconds <= 0:
        raise UserError("--p99-under must be a latency above 0, e.g. 2ms")
    return None if seconds is None else seconds * 1e9


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("target")
@click.option(
    "--rw",
    default="randread",
    show_default=True,
    help="Comma list of " + ", ".join(CURVE_MODES) + ".",
)
@click.option("--bs", default="4k,16k,64k,256k,1m", show_default=True, help="Block sizes.")
@click.option("--qd", default="1,2,4,8,16,32,64,128", show_default=True, help="Queue depths.")
@click.option("--jobs", default="1", show_default=True, help="Numbers of jobs (processes).")
@click.option("--runtime", default="10s", show_default=True, help="Each point's runtime.")
@click.option("--ramp", default="2s", show_default=True, help="Each point's ramp (not measured).")
@curve_options
@pass_env
def sweep(
    env: Environment,
    target: str,
    rw: str,
    bs: str,
    qd: str,
    jobs: str,
    runtime: str,
    ramp: str,
    size: str,
    label: str | None,
    p99_under: str | None,
    destructive: bool,
    overwrite_signatures: bool,
    as_json: bool,
) -> int:
    """Measure the full matrix of rw x block size x queue depth x jobs on TARGET.

    Prints IOPS by block size and queue depth, each curve's knee (where more outstanding IO
    stops adding throughput), its latency floor, Little's law checks, and the IOPS limit,
    bandwidth limit and crossover block size across block sizes. Stored as one run.

    \b
    Examples:
      iobench sweep /mnt/vol --bs 4k,16k,64k,256k,1m --qd 1,2,4,8,16,32,64,128 --jobs 1,4
      iobench sweep /dev/sdb --rw randread --bs 4k --qd 1,4,16,64 --p99-under 2ms --json
    """
    from iobench.report.printed import run_document

    checks.overwrite_needs_destructive(destructive, overwrite_signatures)
    modes = parse_list(rw, _mode, "--rw")
    sizes = sorted(parse_list(bs, _block, "--bs"))
    depths = sorted(parse_list(qd, _depth, "--qd"))
    counts = sorted(parse_list(jobs, _jobs, "--jobs"))
    runtime_s = parse_opt(runtime, parse_duration, "--runtime")
    ramp_s = parse_opt(ramp, parse_duration, "--ramp")
    area = parse_opt(size, parse_size, "--size")
    check_overrides(  # a suite's bounds
        runtime_s=runtime_s,
        ramp_s=ramp_s,
        size=area,
        written={"--runtime": runtime, "--size": size, "--ramp": ramp},
    )
    checks.size_holds_blocks(size, area, sizes)
    p99 = _p99(p99_under)
    suite = sweep_suite(modes, sizes, depths, counts, runtime_s, ramp_s, area)
    # The findings ask the user to change what they typed; the defaults are iobench's.
    suite = dataclasses.replace(suite, overridden=typed("runtime", "ramp", "size"))
    axes = {"rw": modes, "bs": sizes, "iodepth": depths, "numjobs": counts}
    request = curve_request(
        env, (target,), suite, label, destructive, overwrite_signatures,
        extra_definition={"sweep": {"axes": axes}, "p99_under_ns": p99},
    )  # fmt: skip
    outcome, record = execute_request(env, request)
    if as_json:
        env.emit_json(run_document(record))
    else:
        _render(env, record)
    return outcome_code(env, outcome)


def typed(*names: Override) -> frozenset[Override]:
    """Which of the command's options ``names`` the user typed (not left at the default)."""
    ctx = click.get_current_context()
    return frozenset(
        n for n in names if ctx.get_parameter_source(n) != click.core.ParameterSource.DEFAULT
    )


def sweep_suite(
    modes: list[str],
    sizes: list[int],
    depths: list[int],
    counts: list[int],
    runtime_s: float,
    ramp_s: float,
    area: int,
) -> Suite:
    """The matrix as a suite: one workload per mode, jobs, block size and depth, in that
    order (block sizes, depths and job counts sorted)."""
    workloads = tuple(
        Workload(
            name=f"{m}-{format_size_short(b)}-qd{d}" + (f"x{j}" if j > 1 else ""),
            rw=m,
            bs=b,
            iodepth=d,
            numjobs=j,
            runtime_s=runtime_s,
            ramp_s=ramp_s,
            size=area,
        )
        for m, j, b, d in itertools.product(modes, counts, sizes, depths)
    )
    return Suite(
        name="sweep",
        description=f"{len(workloads)} points: rw {','.join(modes)} x bs "
        f"{','.join(format_size_short(b) for b in sizes)} x QD "
        f"{','.join(map(str, depths))} x jobs {','.join(map(str, counts))}",
        workloads=workloads,
        source="sweep",
    )


def curve_request(
    env: Environment,
    targets: tuple[str, ...],
    suite: Suite,
    label: str | None,
    destructive: bool,
    overwrite_signatures: bool,
    *,
    extra_definition: dict[str, Any],
    chooser: Chooser | None = None,
    repeat: int = 1,
) -> RunRequest:
    """A sweep's or a characterization's suite as a request that runs as `run` runs one:
    the same safety checks, progress and store."""
    from iobench.engine import RunRequest

    return RunRequest(
        targets=targets,
        suite=suite,
        label=label,
        destructive=destructive,
        overwrite_signatures=overwrite_signatures,
        argv=env.argv,
        chooser=chooser,
        extra_definition=extra_definition,
        access=given_access(),
        repeat=repeat,
    )


def _render(env: Environment, record: RunRecord) -> None:
    from iobench.report.curves import render_analysis
    from iobench.report.terminal import render_run_footer, render_run_header

    render_run_header(record, env.stdout)
    render_analysis(record, env.stdout)
    render_run_footer(record, env.stdout, error=False)  # outcome_code says it, on stderr


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("targets", nargs=-1, metavar="TARGET...", required=True)
@click.option("--rw", default="randread", show_default=True, help=", ".join(CURVE_MODES) + ".")
@click.option(
    "--max-time",
    default="5m",
    show_default=True,
    help="Time budget of each target (or each client count with --clients).",
)
@click.option(
    "--point-time",
    default="15s",
    show_default=True,
    help="The longest one point runs (after a 0.55 s ramp); each runs as long as its figure "
    "needs to be within 1 %, from 1 s.",
)
@click.option(
    "--method",
    type=click.Choice(("fast", "steady")),  # analysis.characterize.METHODS
    default="fast",
    show_default=True,
    help="fast: short points, each as long as its figure needs; steady: each point until "
    "fio finds its IOPS steady (5 s or more), slower, for storage whose rate changes over "
    "seconds.",
)
@click.option("--max-qd", default=256, show_default=True, type=click.IntRange(1, 4096))
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(1, 256))
@click.option(
    "--repeat",
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
    help="Run every point N times in a row; the point is their mean, the next one chosen from it.",
)
@click.option(
    "--clients",
    help="Characterize the storage TARGET that these fio servers share, from all of them at "
    "once (host[:port],... or @FILE): the limits are those of the clients' aggregate.",
)
@click.option(
    "--scale",
    help="With --clients: characterize with the first k clients for each k, e.g. 1,2,4.",
)
@curve_options
@pass_env
def characterize(
    env: Environment,
    targets: tuple[str, ...],
    rw: str,
    max_time: str,
    point_time: str,
    method: str,
    max_qd: int,
    jobs: int,
    repeat: int,
    clients: str | None,
    scale: str | None,
    size: str,
    label: str | None,
    p99_under: str | None,
    destructive: bool,
    overwrite_signatures: bool,
    as_json: bool,
) -> int:
    """Find each TARGET's IOPS limit, bandwidth limit and crossover block size, adaptively.

    Climbs the queue depth at 4 KiB and at 1 MiB until throughput stops growing, tries
    smaller or larger blocks when one limit binds everywhere, and checks the two-limit model
    on each side of the crossover; each point ends once fio finds its IOPS steady. Every
    limit comes with a 95 % interval, or with the reason none was found in reach (the host
    was the bottleneck, throughput was still rising, ...). Several TARGETs are
    characterized side by side, point for point interleaved; with --clients, TARGET is the
    directory (or network storage) the clients share, and the limits are their aggregate's.

    \b
    Examples:
      iobench characterize /dev/sdb
      iobench characterize /mnt/vol --max-time 2m --json
      iobench characterize /mnt/local /mnt/ceph --max-time 2m
      iobench characterize /mnt/shared --clients @hosts.txt
      iobench characterize /mnt/shared --clients node1,node2,node3 --scale 1,3
    """
    from iobench.analysis.characterize import (
        CharacterizeChooser,
        Probe,
        on_clients,
        probe_workload,
    )

    checks.overwrite_needs_destructive(destructive, overwrite_signatures)
    checks.scale_needs_clients(clients, scale)
    settings = characterize_settings(
        rw, max_time, point_time, max_qd, jobs, size, repeat, method=method
    )
    if clients:
        settings = on_clients(settings)
    p99 = _p99(p99_under)
    # The shape every probe has (what the safety checks and the test file are made for).
    template = dataclasses.replace(
        probe_workload(Probe(settings.large_bs, 1, "template"), settings), name="characterize"
    )
    suite = Suite(
        name="characterize",
        description=f"adaptive {settings.rw}: limits and crossover within "
        f"{max_time}" + ("" if settings.rw in READ_MODES else " (writes)"),
        workloads=(template,),
        source="characterize",
        overridden=typed("size"),
    )
    request = curve_request(
        env, targets, suite, label, destructive, overwrite_signatures,
        chooser=CharacterizeChooser(settings), extra_definition={"p99_under_ns": p99},
        repeat=repeat,
    )  # fmt: skip
    if clients:
        from iobench.cli.run import run_on_clients

        outcome, record = run_on_clients(env, request, clients, scale)
    else:
        outcome, record = execute_request(env, request)
    if as_json:
        env.emit_json(characterization_document(record, targets))
    else:
        _render(env, record)
    return outcome_code(env, outcome)


def characterize_settings(
    rw: str,
    max_time: str,
    point_time: str,
    max_qd: int,
    jobs: int,
    size: str,
    repeat: int = 1,
    *,
    method: str = "fast",
) -> Settings:
    """characterize's options parsed and checked: the chooser's Settings."""
    from iobench.analysis.characterize import Settings

    mode = parse_list(rw, _mode, "--rw")
    if len(mode) != 1:
        raise UserError("--rw: characterize measures one access pattern at a time")
    budget = parse_opt(max_time, parse_duration, "--max-time")
    point = parse_opt(point_time, parse_duration, "--point-time")
    area = parse_opt(size, parse_size, "--size")
    check_overrides(size=area, written={"--size": size})  # a suite's bounds
    if budget > MAX_RUNTIME_S:
        raise UserError(
            f"--max-time must be at most {say_seconds(MAX_RUNTIME_S)} ({WHY_RUNTIME}), "
            f"not {max_time}"
        )
    if method == "steady" and point < 3:
        raise UserError("--point-time must be at least 3s (fio needs a 2 s steady window)")
    if point < Settings.min_point_s:
        raise UserError(
            f"--point-time must be at least {Settings.min_point_s:g}s, not {point_time}"
        )
    settings = Settings(
        rw=mode[0],
        numjobs=jobs,
        max_qd=max_qd,
        budget_s=budget,
        point_s=point,
        size=area,
        max_bs=min(Settings.max_bs, area),
        repeat=repeat,
        method=method,
    )
    checks.budget_holds_points(max_time, budget, settings.shortest_point_s * repeat, method)
    if area < settings.large_bs:
        raise UserError(f"--size {size} is smaller than the 1 MiB block size it measures")
    return settings


def characterization_document(record: RunRecord, targets: tuple[str, ...]) -> dict[str, Any]:
    """``characterize --json``: the ``kind: "characterization"`` document."""
    from iobench.report.curves import analysis_document

    doc = analysis_document(record) or {}
    return {
        **envelope("characterization"),
        "run_id": record.id,
        "status": record.status,
        "target": targets[0],
        "targets": list(targets),
        **{k: v for k, v in doc.items() if k != "kind"},
        "warnings": record.warnings,
    }
