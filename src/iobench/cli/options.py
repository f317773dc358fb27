"""What commands share in their declarations: every option more than one command takes,
declared once as a decorator; the exit-code epilog; and the parsing of option values
(text) into typed ones, with errors that name the option."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

import click

from iobench.errors import UserError
from iobench.output import STDOUT

EXIT_CODES_HELP = """\b
Exit codes:
  0    success
  1    the run failed (fio failed, fio missing, results unreadable)
  2    bad input or usage (options, suite file, target path)
  3    target refused as unsafe (device in use, holds data, or writes not allowed)
  4    the run finished but an expectation (--expect, --spec, the suite's) failed
  130  interrupted (Ctrl-C or SIGTERM); finished workloads are kept
"""

# For the commands that take RUNs: `-2` (the second newest run) is a RUN, not an unknown
# option.
RUN_REFS = {"ignore_unknown_options": True}

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


def with_options(options: Sequence[Callable[[F], F]]) -> Callable[[F], F]:
    """One decorator applying click ``options`` in the order given (as if stacked)."""

    def apply(f: F) -> F:
        for option in reversed(options):
            f = option(f)
        return f

    return apply


def json_option(needs: str | None = None) -> Callable[[F], F]:
    """``--json`` (the parameter ``as_json``); ``needs``: the option it only works with."""
    note = f" (needs {needs})" if needs else ""
    return click.option(
        "--json", "as_json", is_flag=True, help=f"Print one JSON document on stdout{note}."
    )


def output_option(help: str) -> Callable[[F], F]:
    """``-o/--output FILE`` (the parameter ``output``), standard output (``-``) by default."""
    return click.option(
        "-o", "--output", default=STDOUT, show_default=True, metavar="FILE", help=help
    )


def label_option(
    help: str = "A name for this setup, e.g. ceph-rbd or local-nvme.",
) -> Callable[[F], F]:
    """``--label``: the label the new run (or runs) is stored with."""
    return click.option("--label", help=help)


def size_option(default: str | None = None) -> Callable[[F], F]:
    """``--size``: the test area. Without a default it overrides each workload's own."""
    if default is None:
        return click.option("--size", help="Override every workload's test area, e.g. 256M, 4G.")
    return click.option(
        "--size", default=default, show_default=True, help="Test area, e.g. 256M, 4G."
    )


def destructive_options() -> Callable[[F], F]:
    """``--destructive`` and ``--overwrite-signatures`` (checks.overwrite_needs_destructive)."""
    return with_options(
        [
            click.option(
                "--destructive",
                is_flag=True,
                help="Allow writing workloads on a block device or an existing file (destroys "
                "its data).",
            ),
            click.option(
                "--overwrite-signatures",
                is_flag=True,
                help="With --destructive: also allow a device that carries a filesystem or "
                "partition table.",
            ),
        ]
    )


_ACCESS = "iobench.access"  # where the access options keep their values (click's meta)


def _keep_access(key: str) -> Callable[[click.Context, click.Parameter, str | None], None]:
    def keep(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is not None:
            ctx.meta[_ACCESS] = {**ctx.meta.get(_ACCESS, {}), key: value}

    return keep


def access_options() -> Callable[[F], F]:
    """The options that say how to reach network storage named as a target, as each kind
    of target declares them (``Kind.access``: ``--ceph-conf``, ``--ceph-user`` for an
    ``rbd:`` image); read with :func:`given_access`."""
    from iobench.targets import KINDS

    return with_options(
        [
            click.option(
                option.flag,
                metavar=option.metavar,
                expose_value=False,
                callback=_keep_access(option.key),
                help=option.help,
            )
            for kind in KINDS
            for option in kind.access
        ]
    )


def given_access() -> tuple[tuple[str, str], ...]:
    """The access options of the running command (``(("ceph_conf", FILE), ...)``)."""
    ctx = click.get_current_context(silent=True)
    return tuple(sorted(ctx.meta.get(_ACCESS, {}).items())) if ctx is not None else ()


def run_selection_options() -> Callable[[F], F]:
    """The runs `compare` and `report` take: RUNs, the latest run of labels, a baseline."""
    return with_options(
        [
            click.argument("run_refs", nargs=-1, metavar="[RUN]..."),
            click.option(
                "--label", "labels", multiple=True, help="The latest run with this label."
            ),
            click.option(
                "--baseline", help="The run the others are compared with (default: the first)."
            ),
        ]
    )


@overload
def parse_opt(value: str, parse: Callable[[str], T], option: str) -> T: ...
@overload
def parse_opt(value: str | None, parse: Callable[[str], T], option: str) -> T | None: ...
def parse_opt(value: str | None, parse: Callable[[str], T], option: str) -> T | None:
    """An option's value parsed; a UserError naming the option when it is not valid."""
    if value is None:
        return None
    try:
        return parse(value)
    except ValueError as e:
        raise UserError(f"{option}: {e}") from e


def parse_list(value: str, parse: Callable[[str], T], option: str) -> list[T]:
    """``4k,16k,64k`` -> parsed items; a UserError naming the option and the bad item."""
    items = [v.strip() for v in value.split(",")]
    if not items or any(not v for v in items):
        raise UserError(
            f"{option}: give a comma-separated list, e.g. {option} 1,2,4, not {value!r}"
        )
    out = []
    for item in items:
        try:
            out.append(parse(item))
        except ValueError as e:
            raise UserError(f"{option}: {item!r}: {e}") from e
    if len(set(out)) != len(out):
        raise UserError(f"{option}: {value!r} names a value twice")
    return out
