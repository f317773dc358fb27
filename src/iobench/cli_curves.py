"""``iobench sweep`` and ``iobench characterize``: curves, knees and limits.

The rules are in docs/characterize.md.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
import time
from typing import Any

import click

from iobench.cli_support import (
    EXIT_CODES_HELP,
    emit_json,
    execute_request,
    outcome_code,
    parse_list,
    parse_opt,
    stdout,
    with_options,
)
from iobench.errors import UserError
from iobench.model import READ_MODES, Suite, Workload
from iobench.suites import check_overrides
from iobench.suites.options import MAX_RUNTIME_S, WHY_RUNTIME, say_seconds
from iobench.units import format_size_short, parse_duration, parse_size

CURVE_MODES = ("randread", "read", "randwrite", "write")
_TARGET_HELP = (
    "TARGET is a directory (iobench creates and removes a test file there), an existing "
    "file, or a block device; only reads run unless --destructive allows writes."
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


def _check_destructive(destructive: bool, overwrite_signatures: bool) -> None:
    if overwrite_signatures and not destructive:
        raise UserError(
            "--overwrite-signatures only makes sense with --destructive",
            "add --destructive, or drop --overwrite-signatures",
        )


_common = [
    click.option("--size", default="1G", show_default=True, help="Test area, e.g. 256M, 4G."),
    click.option("--label", help="A name for this setup, e.g. ceph-rbd."),
    click.option(
        "--p99-under",
        help="Also report the most throughput whose p99 latency stays under this, e.g. 2ms.",
    ),
    click.option(
        "--destructive",
        is_flag=True,
        help="Allow writing (randwrite, write) on a block device or an existing file.",
    ),
    click.option(
        "--overwrite-signatures",
        is_flag=True,
        help="With --destructive: also allow a device with a filesystem or partition table.",
    ),
    click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout."),
]


_with_common = with_options(_common)  # the options sweep and characterize share


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
@_with_common
@click.pass_context
def sweep(
    ctx: click.Context,
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
    from iobench.documents.printed import run_document

    _check_destructive(destructive, overwrite_signatures)
    modes = parse_list(rw, _mode, "--rw")
    sizes = parse_list(bs, _block, "--bs")
    depths = sorted(parse_list(qd, _depth, "--qd"))
    counts = sorted(parse_list(jobs, _jobs, "--jobs"))
    runtime_s = parse_opt(runtime, parse_duration, "--runtime")
    ramp_s = parse_opt(ramp, parse_duration, "--ramp")
    area = parse_opt(size, parse_size, "--size")
    check_overrides(runtime_s=runtime_s, ramp_s=ramp_s, size=area)  # a suite's bounds
    if area < max(sizes):
        raise UserError(f"--size {size} is smaller than the largest block size")
    p99 = _p99(p99_under)
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
        for m, j, b, d in itertools.product(modes, counts, sorted(sizes), depths)
    )
    axes = {"rw": modes, "bs": sorted(sizes), "iodepth": depths, "numjobs": counts}
    suite = Suite(
        name="sweep",
        description=f"{len(workloads)} points: rw {','.join(modes)} x bs "
        f"{','.join(format_size_short(b) for b in sorted(sizes))} x QD "
        f"{','.join(map(str, depths))} x jobs {','.join(map(str, counts))}",
        workloads=workloads,
        source="sweep",
    )
    outcome, record = _execute(
        ctx, target, suite, label, destructive, overwrite_signatures,
        extra_definition={"sweep": {"axes": axes}, "p99_under_ns": p99},
    )  # fmt: skip
    if as_json:
        emit_json(run_document(record))
    else:
        _render(record)
    return outcome_code(outcome)


def _execute(
    ctx: click.Context,
    target: str,
    suite: Suite,
    label: str | None,
    destructive: bool,
    overwrite_signatures: bool,
    **extra: Any,
) -> Any:
    """Run a sweep's or a characterization's suite as `run` runs one: the same safety
    checks, progress and store; (outcome, stored run)."""
    from iobench.engine import RunRequest

    request = RunRequest(
        targets=(target,),
        suite=suite,
        label=label,
        destructive=destructive,
        overwrite_signatures=overwrite_signatures,
        argv=("iobench", *sys.argv[1:]),
        **extra,
    )
    return execute_request(ctx, request)


def _render(record: Any) -> None:
    from iobench.report.curves import render_analysis
    from iobench.report.terminal import render_run_footer, render_run_header

    out = stdout()
    render_run_header(record, out)
    render_analysis(record, out)
    render_run_footer(record, out, error=False)  # outcome_code says it, once, on stderr


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("target")
@click.option("--rw", default="randread", show_default=True, help=", ".join(CURVE_MODES) + ".")
@click.option("--max-time", default="5m", show_default=True, help="Time budget for the whole run.")
@click.option(
    "--point-time",
    default="15s",
    show_default=True,
    help="The longest one point runs; fio ends it sooner once its IOPS are steady.",
)
@click.option("--max-qd", default=256, show_default=True, type=click.IntRange(1, 4096))
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(1, 256))
@_with_common
@click.pass_context
def characterize(
    ctx: click.Context,
    target: str,
    rw: str,
    max_time: str,
    point_time: str,
    max_qd: int,
    jobs: int,
    size: str,
    label: str | None,
    p99_under: str | None,
    destructive: bool,
    overwrite_signatures: bool,
    as_json: bool,
) -> int:
    """Find TARGET's IOPS limit, bandwidth limit and crossover block size, adaptively.

    Climbs the queue depth at 4 KiB and at 1 MiB until throughput stops growing, tries
    smaller or larger blocks when one limit binds everywhere, and checks the two-limit model
    on each side of the crossover; each point ends once fio finds its IOPS steady. Every
    limit comes with a 95 % interval, or with the reason none was found in reach (the host
    was the bottleneck, throughput was still rising, ...).

    \b
    Examples:
      iobench characterize /dev/sdb
      iobench characterize /mnt/vol --max-time 2m --json
    """
    from iobench.analysis.characterize import (
        CharacterizeChooser,
        Probe,
        Settings,
        probe_workload,
    )
    from iobench.report.curves import analysis_document

    _check_destructive(destructive, overwrite_signatures)
    mode = parse_list(rw, _mode, "--rw")
    if len(mode) != 1:
        raise UserError("--rw: characterize measures one access pattern at a time")
    budget = parse_opt(max_time, parse_duration, "--max-time")
    point = parse_opt(point_time, parse_duration, "--point-time")
    area = parse_opt(size, parse_size, "--size")
    check_overrides(size=area)  # a suite's bounds
    if budget > MAX_RUNTIME_S:
        raise UserError(
            f"--max-time must be at most {say_seconds(MAX_RUNTIME_S)} ({WHY_RUNTIME}), "
            f"not {max_time}"
        )
    if point < 3:
        raise UserError("--point-time must be at least 3s (fio needs a 2 s steady window)")
    if budget < 4 * point:
        raise UserError(
            f"--max-time {max_time} leaves no room: it must be at least 4 x --point-time",
            "raise --max-time or lower --point-time",
        )
    settings = Settings(
        rw=mode[0],
        numjobs=jobs,
        max_qd=max_qd,
        budget_s=budget,
        point_s=point,
        size=area,
        max_bs=min(Settings.max_bs, area),
    )
    if area < settings.large_bs:
        raise UserError(f"--size {size} is smaller than the 1 MiB block size it measures")
    chooser = CharacterizeChooser(settings, time.monotonic)
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
    )
    outcome, record = _execute(
        ctx, target, suite, label, destructive, overwrite_signatures,
        chooser=chooser, extra_definition={"p99_under_ns": p99},
    )  # fmt: skip
    if as_json:
        doc = analysis_document(record) or {}
        emit_json(
            {
                "schema_version": 1,
                "kind": "characterization",
                "run_id": record.id,
                "status": record.status,
                "target": target,
                **{k: v for k, v in doc.items() if k != "kind"},
                "warnings": record.warnings,
            }
        )
    else:
        _render(record)
    return outcome_code(outcome)
