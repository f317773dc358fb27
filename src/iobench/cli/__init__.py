"""The command line: the click group ``main`` with its global options (--db, --traceback),
the commands registered on it, and ``run_cli``, the one error boundary that turns what
happened into a message and an exit code. Only the CLI prints errors and exits.

The commands live in modules by family: run.py (run, doctor), precondition.py
(precondition, and run's --precondition), curves.py (sweep, characterize), results.py
(list, show, rm, import, export), compare.py (compare, report), host.py (info, specs,
clients check), suites.py (suites, suites export). What they share:
options.py (options and their parsing), checks.py (rules between options), env.py (the
Environment they print and store with), execution.py (running a benchmark), failures.py
(errors, as shown).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

import click

from iobench import __version__
from iobench.cli import compare, curves, host, precondition, results, run, suites
from iobench.cli.env import Environment
from iobench.cli.failures import print_click_error, print_error
from iobench.cli.options import EXIT_CODES_HELP
from iobench.errors import ExitCode, IobenchError
from iobench.output import GuardedStream, OutputError, StreamClosed
from iobench.report.literal import literal_lines, markup_literal


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
    # --traceback is read by run_cli, before the command line is parsed.
    env = ctx.find_object(Environment) or Environment.standard()
    ctx.obj = env if db is None else dataclasses.replace(env, db=db)


for _command in (
    run.run,
    run.doctor,
    precondition.precondition,
    curves.sweep,
    curves.characterize,
    results.list_,
    results.show,
    results.rm,
    results.import_,
    results.export,
    compare.compare,
    compare.report,
    host.info,
    suites.suites,
    host.specs,
    host.clients,
):
    main.add_command(_command)


def run_cli(argv: Sequence[str], env: Environment | None = None) -> int:
    """Run the CLI and return the exit code; errors become messages, not tracebacks.
    ``env``: the streams and database to use instead of the process's own."""
    real_stdout = sys.stdout
    sys.stdout = GuardedStream(real_stdout, "standard output")
    try:
        env = env or Environment.standard()
        code = _run(argv, env)
        try:
            sys.stdout.flush()
        except OutputError as e:
            code = _stdout_failed(e, env)
    finally:
        sys.stdout = real_stdout
    return code


def _run(argv: Sequence[str], env: Environment) -> int:
    want_traceback = "--traceback" in argv or os.environ.get("IOBENCH_TRACEBACK") == "1"
    err = env.stderr
    try:
        result = main.main(args=list(argv), prog_name="iobench", standalone_mode=False, obj=env)
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
        return _stdout_failed(e, env)
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


def _stdout_failed(e: OutputError, env: Environment) -> int:
    """A failed write: said on stderr (a broken pipe quietly), and whatever is still
    buffered for stdout dropped, so that Python's exit does not fail on it again."""
    if not isinstance(e, StreamClosed):
        print_error(e, env.stderr)
    if e.stream == "standard output":
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ else 1)
            os.close(devnull)
    return int(e.exit_code)
