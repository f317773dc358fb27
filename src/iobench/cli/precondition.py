"""``iobench precondition``: purge and fill each target's test area (the SNIA PTS
preconditioning) as a run of its own, stored and printed like a run; and the
``--precondition`` option that `run` and `doctor` take (docs/precondition.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from iobench.cli.env import Environment, pass_env
from iobench.cli.execution import execute_request, shown_run
from iobench.cli.options import (
    EXIT_CODES_HELP,
    destructive_options,
    json_option,
    label_option,
    parse_opt,
)
from iobench.errors import UserError
from iobench.model import Precondition, Suite
from iobench.units import format_bytes, parse_size

if TYPE_CHECKING:
    from iobench.engine import RunRequest

PRECONDITION_SUITE = "precondition"
# Direct IO writes whole logical blocks, which are 512 bytes or 4 KiB.
FILL_BS_ALIGN = 4096
MAX_FILL_BS = 64 << 20

precondition_option = click.option(
    "--precondition",
    is_flag=True,
    help="Before the workloads, purge each target's test area (a discard on a device, holes "
    "punched in a file) and fill it with 2 passes of sequential 128 KiB writes (SNIA PTS "
    "preconditioning), in place of the layout or --prefill. Files and devices of this host "
    "only; a device or an existing file needs --destructive. `iobench precondition` does "
    "this alone, with more options.",
)


def precondition_suite() -> Suite:
    """The suite of a precondition run: no workloads, only the purge and the fill."""
    return Suite(
        PRECONDITION_SUITE,
        "purge and precondition the test area (SNIA PTS): no workloads",
        (),
        source=PRECONDITION_SUITE,
    )


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("targets", nargs=-1, required=True, metavar="TARGET...")
@destructive_options()
@click.option(
    "--passes",
    type=click.IntRange(1, 100),
    default=2,
    show_default=True,
    help="How many times the fill writes the whole test area.",
)
@click.option(
    "--bs",
    default="128k",
    show_default=True,
    help="The fill's block size (a multiple of 4 KiB), written 32 IOs deep.",
)
@click.option(
    "--size",
    help="The test area: the first SIZE bytes of a file or device (default: all of it); in a "
    "directory, the size of the test file (needed there).",
)
@click.option(
    "--no-purge",
    is_flag=True,
    help="Fill without purging first.",
)
@label_option()
@json_option()
@pass_env
def precondition(
    env: Environment,
    targets: tuple[str, ...],
    destructive: bool,
    overwrite_signatures: bool,
    passes: int,
    bs: str,
    size: str | None,
    no_purge: bool,
    label: str | None,
    as_json: bool,
) -> int:
    """Purge and precondition each TARGET, as the SNIA PTS does before it measures flash.

    First the purge, where the target can: a block device that takes discards has its test
    area discarded (BLKDISCARD: an SSD frees those blocks, a thin volume gives them back);
    an existing file has holes punched over it; a directory gets a new test file of
    iobench's own, with nothing to purge. A secure erase (nvme format --ses, hdparm
    --security-erase, blkdiscard --secure) is yours to do: iobench never does one. Then
    the fill: sequential writes over the whole test area, --passes times (libaio, direct
    IO, 32 IOs in flight, incompressible data), with live progress. What was done (which
    purge, how long, the fill's bandwidth second by second) is stored as a run (suite
    "precondition") and shown like one. Devices and existing files need --destructive
    and pass the same checks as `iobench run`; network storage (nbd://, rbd:) is refused.
    `iobench run --precondition` does the same before its workloads.

    \b
    Examples:
      iobench precondition /dev/nvme1n1 --destructive
      iobench precondition /dev/sdb --destructive --passes 3 --bs 1M
      iobench precondition /data/scratch.img --destructive --size 8G --no-purge
      iobench precondition /dev/vdb --destructive --json
    """
    request = precondition_request(
        env, targets, destructive=destructive, overwrite_signatures=overwrite_signatures,
        passes=passes, bs=bs, size=size, no_purge=no_purge, label=label,
    )  # fmt: skip
    outcome, record = execute_request(env, request)
    return shown_run(env, outcome, record, as_json)


def precondition_request(
    env: Environment,
    targets: tuple[str, ...],
    *,
    destructive: bool,
    overwrite_signatures: bool,
    passes: int,
    bs: str,
    size: str | None,
    no_purge: bool,
    label: str | None,
) -> RunRequest:
    """What ``iobench precondition`` was asked: a run of the precondition alone."""
    from iobench.cli import checks
    from iobench.engine import RunRequest

    checks.overwrite_needs_destructive(destructive, overwrite_signatures)
    block = fill_block_size(bs)
    area = parse_opt(size, parse_size, "--size")
    if area is not None and area < block:
        raise UserError(
            f"--size {size} is smaller than the fill's block size ({format_bytes(block)})",
            "give a larger --size, or a smaller --bs",
        )
    return RunRequest(
        targets=targets,
        suite=precondition_suite(),
        label=label,
        destructive=destructive,
        overwrite_signatures=overwrite_signatures,
        argv=env.argv,
        precondition=Precondition(passes=passes, bs=block, purge=not no_purge, size=area),
    )


def fill_block_size(text: str) -> int:
    """--bs: a multiple of 4 KiB (direct IO writes whole logical blocks), at most 64 MiB."""
    value = parse_opt(text, parse_size, "--bs")
    if value <= 0 or value % FILL_BS_ALIGN or value > MAX_FILL_BS:
        raise UserError(
            f"--bs {text}: the fill's block size must be a multiple of 4 KiB, at most "
            f"{format_bytes(MAX_FILL_BS)}",
            "e.g. --bs 128k (the PTS's) or --bs 1M",
        )
    return value
