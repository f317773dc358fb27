"""The command line: parse options, call the core, render. The only place that exits."""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.markup import escape

from iobench import __version__
from iobench.errors import ExitCode, Interrupted, IobenchError, UserError
from iobench.suites import DEFAULT_SUITE
from iobench.units import parse_duration, parse_size

EXIT_CODES_HELP = """\b
Exit codes:
  0    success
  1    the run failed (fio failed, fio missing, results unreadable)
  2    bad input or usage (options, suite file, target path)
  3    target refused as unsafe (device in use, holds data, or writes not allowed)
  130  interrupted (Ctrl-C or SIGTERM); finished workloads are kept
"""


# emoji=False: ":x:" in a label, path or error message is text, not an emoji.
def _stdout() -> Console:
    return Console(width=None if sys.stdout.isatty() else 160, highlight=False, emoji=False)


def _stderr() -> Console:
    return Console(
        stderr=True,
        width=None if sys.stderr.isatty() else 160,
        highlight=False,
        soft_wrap=True,
        emoji=False,
    )


def _emit_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()


def _parse_opt(value: str | None, parse: Any, option: str) -> Any:
    if value is None:
        return None
    try:
        return parse(value)
    except ValueError as e:
        raise UserError(f"{option}: {e}") from e


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EXIT_CODES_HELP,
)
@click.version_option(__version__, prog_name="iobench")
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
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


def _db_path(ctx: click.Context) -> Path:
    from iobench.store import default_db_path

    return Path(ctx.obj["db"] or default_db_path())


def _open_store(ctx: click.Context) -> Any:
    from iobench.store import Store

    return Store.open(_db_path(ctx))


@contextmanager
def _stop_signals_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP (a closed ssh session) stop a run like Ctrl-C does."""

    def handler(signum: int, frame: FrameType | None) -> NoReturn:
        raise Interrupted(f"stopped by {signal.Signals(signum).name}")

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@click.option(
    "-s",
    "--suite",
    default=DEFAULT_SUITE,
    show_default=True,
    help="A built-in suite (see `iobench suites`) or the path of a suite file (.toml).",
)
@click.option("--label", help="A name for this setup, e.g. ceph-rbd or local-nvme.")
@click.option("--runtime", help="Override every workload's runtime, e.g. 30s, 2m.")
@click.option("--ramp", help="Override every workload's ramp time (excluded from results).")
@click.option("--size", help="Override every workload's test area, e.g. 256M, 4G.")
@click.option(
    "--destructive",
    is_flag=True,
    help="Allow writing workloads on a block device or an existing file (destroys its data).",
)
@click.option(
    "--overwrite-signatures",
    is_flag=True,
    help="With --destructive: also allow a device that carries a filesystem or partition table.",
)
@click.option(
    "--repeat",
    type=click.IntRange(1, 1000),
    default=1,
    show_default=True,
    help="Run every workload N times (interleaved across targets); results show the mean, "
    "its 95 % confidence interval and the coefficient of variation.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@click.pass_context
def run(
    ctx: click.Context,
    targets: tuple[str, ...],
    suite: str,
    label: str | None,
    runtime: str | None,
    ramp: str | None,
    size: str | None,
    destructive: bool,
    overwrite_signatures: bool,
    repeat: int,
    as_json: bool,
) -> int:
    """Run a suite on each TARGET (default: the current directory) and store the results.

    TARGET is a directory (iobench creates a test file there and removes it afterwards), an
    existing file, or a block device (read-only workloads unless --destructive).

    \b
    Examples:
      iobench run
      iobench run /mnt/vol --suite standard --label ceph-rbd
      iobench run /dev/nvme1n1 --suite volume --destructive
      iobench run /mnt/vol --suite my-suite.toml --runtime 30s --size 4G --json
      iobench run /mnt/local /mnt/ceph --suite standard --repeat 3
    """
    from iobench.benchmark import RunRequest, execute
    from iobench.fio.runner import find_fio
    from iobench.report.jsondoc import run_document
    from iobench.report.progress import ProgressDisplay
    from iobench.report.terminal import render_run
    from iobench.suites import apply_overrides, load_suite

    if overwrite_signatures and not destructive:
        raise UserError(
            "--overwrite-signatures only makes sense with --destructive",
            "add --destructive, or drop --overwrite-signatures",
        )
    loaded = load_suite(suite)
    loaded = apply_overrides(
        loaded,
        runtime_s=_parse_opt(runtime, parse_duration, "--runtime"),
        size=_parse_opt(size, parse_size, "--size"),
        ramp_s=_parse_opt(ramp, parse_duration, "--ramp"),
    )
    fio = find_fio()
    request = RunRequest(
        targets=targets or (".",),
        suite=loaded,
        label=label,
        destructive=destructive,
        overwrite_signatures=overwrite_signatures,
        argv=("iobench", *sys.argv[1:]),
        repeat=repeat,
    )
    err = _stderr()
    with _open_store(ctx) as store, _stop_signals_as_interrupt():
        outcome = execute(request, store, fio, ProgressDisplay(err))
        record = store.get_run(outcome.run_id)
    if as_json:
        _emit_json(run_document(record))
    else:
        render_run(record, _stdout())
    if outcome.error is not None:
        _print_error(outcome.error, err)
        err.print(f"run {outcome.run_id} is stored as {outcome.status}", highlight=False)
        return int(outcome.error.exit_code)
    return 0


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def suites(as_json: bool) -> None:
    """List the built-in suites and their workloads.

    \b
    Example:
      iobench suites
      iobench suites --json
    """
    from iobench.benchmark import suite_definition
    from iobench.report.terminal import render_suites
    from iobench.suites import builtin_names, load_builtin

    loaded = [load_builtin(n) for n in builtin_names()]
    if as_json:
        _emit_json(
            {
                "schema_version": 1,
                "kind": "suites",
                "suites": [suite_definition(s) for s in loaded],
            }
        )
    else:
        render_suites(loaded, _stdout())


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
        _emit_json(doc)
    else:
        render_info(doc, _stdout())


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
    from iobench.report.jsondoc import runs_document
    from iobench.report.terminal import render_run_list

    if not _db_path(ctx).exists():  # reading creates nothing
        runs = []
    else:
        with _open_store(ctx) as store:
            runs = store.list_runs(limit=limit, label=label)
    if as_json:
        _emit_json(runs_document(runs))
    else:
        render_run_list(runs, _stdout())


@main.command()
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
    from iobench.report.jsondoc import run_document
    from iobench.report.terminal import render_evidence, render_run

    _require_db(ctx)
    with _open_store(ctx) as store:
        record = store.get_run(store.resolve(run_ref), with_raw=raw and not as_json)
    if as_json:
        _emit_json(run_document(record))
        return
    out = _stdout()
    render_run(record, out)
    if raw:
        render_evidence(record, out)


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
            _stderr().print(
                f"note: the latest run labelled {label!r} is run {chosen.id}, {chosen.status}",
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


def _require_db(ctx: click.Context) -> None:
    if not _db_path(ctx).exists():  # reading creates nothing
        raise UserError(
            f"no runs are stored yet: there is no database at {_db_path(ctx)}",
            "run a benchmark first with `iobench run`, or point --db at your database",
        )


@main.command()
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

    _require_db(ctx)
    with _open_store(ctx) as store:
        runs = _runs_for(store, run_refs, labels)
        base = store.resolve(baseline) if baseline else None
    if base is not None and base not in [r.id for r in runs]:
        raise UserError(
            f"the baseline run {base} is not among the compared runs",
            "name it among the runs too",
        )
    comparison = compare_runs(runs, base)
    if as_json:
        _emit_json(comparison.to_dict())
    else:
        render_comparison(comparison, _stdout())


@main.command()
@click.argument("run_refs", nargs=-1, metavar="[RUN]...")
@click.option("--label", "labels", multiple=True, help="The latest run with this label.")
@click.option("--baseline", help="The run the others are compared with (default: the first).")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The report file: .html (charts, works offline) or .md (tables for a ticket).",
)
@click.pass_context
def report(
    ctx: click.Context,
    run_refs: tuple[str, ...],
    labels: tuple[str, ...],
    baseline: str | None,
    output: Path,
) -> None:
    """Write a report of one or more runs: self-contained HTML with charts, or Markdown.

    \b
    Examples:
      iobench report latest -o report.html
      iobench report 3 4 5 -o comparison.html
      iobench report --label local-ssd --label ceph-rbd -o ticket.md
    """
    from iobench.analysis.compare import compare as compare_runs
    from iobench.report.html import render_html
    from iobench.report.markdown import render_markdown

    suffix = output.suffix.lower()
    if suffix not in (".html", ".htm", ".md", ".markdown"):
        raise UserError(
            f"-o {output}: the report format comes from the file name; use .html or .md"
        )
    _require_db(ctx)
    with _open_store(ctx) as store:
        runs = _runs_for(store, run_refs, labels)
        base = store.resolve(baseline) if baseline else None
    setups = sum(max(1, len(r.targets)) for r in runs)
    if base is not None and (setups < 2 or base not in [r.id for r in runs]):
        raise UserError(
            f"--baseline {baseline}: the baseline must be one of two or more compared runs",
            "name the baseline among the runs, or drop --baseline",
        )
    comparison = compare_runs(runs, base) if setups > 1 else None
    text = (
        render_html(runs, comparison)
        if suffix in (".html", ".htm")
        else render_markdown(runs, comparison)
    )
    _write_atomically(output, text)
    _stderr().print(f"wrote {output} ({len(runs)} run(s))", highlight=False, markup=False)


def _write_atomically(path: Path, text: str) -> None:
    """Write the whole file or nothing: a temporary file beside it, then a rename."""
    if not path.parent.is_dir():
        raise UserError(f"cannot write {path}: the directory {path.parent} does not exist")
    try:
        # A new file of our own (O_EXCL, random name) beside the target, then a rename.
        fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror}") from e
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:  # what the HTML's <meta> says
            f.write(text)
        tmp.chmod(0o644)
        tmp.replace(path)
    except BaseException as e:  # also Ctrl-C: no temporary file is left behind
        tmp.unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise UserError(f"cannot write {path}: {e.strerror}") from e
        raise


def _write_stdout(text: str) -> None:
    """Text on stdout as UTF-8, whatever the locale says."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
    else:
        buffer.write(text.encode("utf-8"))
        buffer.flush()


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
    from iobench.importer import import_files
    from iobench.report.jsondoc import runs_document

    with _open_store(ctx) as store:
        ids = import_files(store, list(files), label=label, argv=("iobench", *sys.argv[1:]))
        runs = [store.get_run(i) for i in ids]
    if as_json:
        _emit_json(runs_document(runs))
        return
    out = _stdout()
    for r in runs:
        out.print(
            f"imported run {r.id} from {r.source}: {len(r.results)} result(s), fio "
            f"{r.fio_version or '?'}",
            highlight=False,
            markup=False,
        )


@main.command()
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
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of stdout.",
)
@click.pass_context
def export(ctx: click.Context, run_ref: str, fmt: str, output: Path | None) -> None:
    """Export one run's results as CSV or JSON.

    \b
    Examples:
      iobench export latest > results.csv
      iobench export 7 --format json -o run7.json
    """
    from iobench.export import export_csv, export_json

    _require_db(ctx)
    with _open_store(ctx) as store:
        run = store.get_run(store.resolve(run_ref))
    text = export_csv(run) if fmt == "csv" else export_json(run)
    if output is None:
        _write_stdout(text)
    else:
        _write_atomically(output, text)


def _print_error(e: IobenchError, console: Console) -> None:
    console.print(f"[red]iobench: error:[/] {escape(e.message)}", highlight=False)
    if e.hint:
        hint = escape(e.hint).replace("\n", "\n" + " " * 14)
        console.print(f"  [dim]what to do:[/] {hint}", highlight=False)


def run_cli(argv: Sequence[str]) -> int:
    """Run the CLI and return the exit code; errors become messages, not tracebacks."""
    want_traceback = "--traceback" in argv or os.environ.get("IOBENCH_TRACEBACK") == "1"
    err = _stderr()
    try:
        result = main.main(args=list(argv), prog_name="iobench", standalone_mode=False)
    except click.exceptions.Abort:
        err.print("iobench: interrupted")
        return int(ExitCode.INTERRUPTED)
    except click.ClickException as e:
        e.show()
        return int(ExitCode.BAD_INPUT) if e.exit_code == 2 else e.exit_code
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except KeyboardInterrupt:
        err.print("iobench: interrupted")
        return int(ExitCode.INTERRUPTED)
    except IobenchError as e:
        if want_traceback:
            traceback.print_exc()
        _print_error(e, err)
        return int(e.exit_code)
    except Exception:
        if want_traceback:
            raise
        err.print(
            "[red]iobench: internal error[/] (a bug): "
            + escape(traceback.format_exc().splitlines()[-1])
        )
        err.print("  rerun with --traceback and report it")
        return int(ExitCode.RUN_FAILED)
    return int(result) if isinstance(result, int) else 0
