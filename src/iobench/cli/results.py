"""The stored runs, one at a time: ``list``, ``show``, ``rm``, and ``import`` and
``export`` (runs in and out of the database as files)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from os.path import lexists
from typing import TYPE_CHECKING, Any

import click

from iobench.cli import checks
from iobench.cli.env import Environment, pass_env
from iobench.cli.options import (
    EXIT_CODES_HELP,
    RUN_REFS,
    json_option,
    label_option,
    output_option,
)
from iobench.documents import envelope
from iobench.errors import UserError
from iobench.output import write_output
from iobench.report.literal import literal

if TYPE_CHECKING:
    from iobench.importer import FileRun
    from iobench.records import RunBrief, RunRecord
    from iobench.store import Store


@click.command(name="list")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--label", help="Only runs with this label.")
@json_option()
@pass_env
def list_(env: Environment, limit: int, label: str | None, as_json: bool) -> None:
    """List stored runs, newest first.

    \b
    Example:
      iobench list --label ceph-rbd
    """
    from iobench.report.printed import runs_document
    from iobench.report.terminal import render_run_list

    if not env.db_exists():  # reading creates nothing
        runs: list[RunRecord] = []
    else:
        with env.open_store(readonly=True) as store:
            runs = store.list_runs(limit=limit, label=label)
    if as_json:
        env.emit_json(runs_document(runs))
    else:
        render_run_list(runs, env.stdout)


@click.command(context_settings=RUN_REFS)
@click.argument("run_ref", metavar="RUN")
@json_option()
@click.option("--raw", is_flag=True, help="Also print the evidence: fio job files, argv, stderr.")
@pass_env
def show(env: Environment, run_ref: str, as_json: bool, raw: bool) -> None:
    """Show one stored run. RUN is an id from `iobench list`, `latest`, or -N (N-th newest).

    \b
    Examples:
      iobench show latest
      iobench show 12 --json
      iobench show 12 --raw
    """
    from iobench.report.printed import run_document
    from iobench.report.terminal import render_evidence, render_run

    env.require_db()
    with env.open_store(readonly=True) as store:
        record = store.get_run(store.resolve(run_ref), with_raw=raw and not as_json)
    if as_json:
        env.emit_json(run_document(record))
        return
    render_run(record, env.stdout)
    if raw:
        render_evidence(record, env.stdout)


@click.command(epilog=EXIT_CODES_HELP, context_settings=RUN_REFS)
@click.argument("run_refs", nargs=-1, required=True, metavar="RUN...")
@click.option("-y", "--yes", is_flag=True, help="Remove without asking.")
@json_option(needs="--yes")
@pass_env
def rm(env: Environment, run_refs: tuple[str, ...], yes: bool, as_json: bool) -> None:
    """Remove runs with their targets, results and evidence: all of them, or none.

    RUN is an id from `iobench list`, `latest`, or -N (N-th newest). Every RUN is checked
    before anything is removed: an unknown run, or one named twice, removes nothing. rm
    shows what it would remove and asks; with --yes it does not ask. When stdin is not a
    terminal and --yes is not given, it removes nothing and exits 2. A run still running
    on this host is refused. A run whose iobench was killed also has what it left on
    this host removed: its test file and private directory (only names iobench gives its
    own files). A run that other commands cannot read (damaged JSON) can still be
    removed. The database file does not shrink: SQLite reuses the space.

    \b
    Examples:
      iobench rm 12
      iobench rm 3 4 -1
      iobench rm latest --yes --json
    """
    checks.json_needs_yes(as_json, yes)
    env.require_db()
    with env.open_store(readonly=True) as store:  # what would go; nothing written yet
        ids = [store.resolve(r) for r in run_refs]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise UserError(f"run {twice[0]} is named twice", "name each run once")
        briefs = store.removal_briefs(ids)
        store.require_writable()
    if not yes and not _confirmed(env, briefs):
        return
    with env.open_store() as store:
        cleaned = _remove_leftovers(store, briefs)
        store.remove_runs(ids)
    if as_json:
        env.emit_json(_removed_document(briefs, cleaned))
        return
    for b in briefs:
        removed, skipped = cleaned.get(b.id, ([], []))
        env.stdout.print(
            f"removed run {b.id} ({literal(b.suite)}, {len(b.targets)} target(s), "
            f"{b.results} result(s))"
            + "".join(f"; removed its {literal(what)}" for what in removed)
            + "".join(
                f"; left alone {literal(what)} (not a name iobench gives its files)"
                for what in skipped
            ),
            highlight=False,
            markup=False,
        )


Cleaned = dict[int, tuple[list[str], list[str]]]  # run id -> (removed, left alone)


def _remove_leftovers(store: Store, briefs: Sequence[RunBrief]) -> Cleaned:
    """What the runs left on this host, removed first; a UserError (and no run removed)
    when something of it cannot be removed."""
    from iobench.engine.leftovers import remove_leftovers

    cleaned: Cleaned = {}
    for b in briefs:
        removed, skipped, problems = remove_leftovers(b.leftovers)
        store.forget_leftovers(b.id, [path for path, _ in b.leftovers if not lexists(path)])
        cleaned[b.id] = (removed, skipped)
        if problems:
            raise UserError(
                f"run {b.id} left files that could not be removed, so no run was removed: "
                + "; ".join(problems),
                "remove them by hand (or as a user who may), then run `iobench rm` again",
            )
    return cleaned


def _confirmed(env: Environment, briefs: Sequence[RunBrief]) -> bool:
    """rm without --yes: the runs that would go, then the question (on a terminal only)."""
    err = env.stderr
    err.print(
        f"iobench rm would remove {len(briefs)} run(s), with their targets, results and evidence:",
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
        return False
    return True


def _removed_document(briefs: Sequence[RunBrief], cleaned: Cleaned) -> dict[str, Any]:
    """``rm --json``: the ``kind: "removed"`` document (docs/json-schema.md)."""
    return {
        **envelope("removed"),
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
                "removed_files": cleaned.get(b.id, ([], []))[0],
                "left_alone": cleaned.get(b.id, ([], []))[1],
            }
            for b in briefs
        ],
    }


def _brief_line(b: RunBrief) -> str:
    """One run as `rm` lists it: id, time, status, suite, label, targets, results."""
    label = f"  label {literal(b.label)}" if b.label is not None else ""
    targets = ", ".join(literal(t) for t in b.targets) or "none"
    left = [f"its {literal(what)} {literal(path)}" for path, what in b.leftovers if lexists(path)]
    return (
        f"run {b.id}  {literal(b.started_at.replace('T', ' ')[:19])}  {literal(b.status)}  "
        f"suite {literal(b.suite)}{label}  targets {targets}  {b.results} result(s)"
        + (f", and what it left: {', '.join(left)}" if left else "")
    )


@click.command(name="import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@label_option(help="A label for the imported runs.")
@json_option()
@pass_env
def import_(env: Environment, files: tuple[str, ...], label: str | None, as_json: bool) -> None:
    """Import fio output files (fio 2.x and 3.x; JSON, normal text or terse) as runs.

    fio's JSON (json or json+, client/server) holds every figure. Its normal text output,
    as printed or pasted into an article with the shell prompt, the fio command line or
    `cat job.fio` around it, and its terse output (versions 3-5) are read too: the figures
    fio printed, the parameters from the command line or job file shown with them. A file
    that `iobench export RUN --format json` wrote comes back as the same run (a run
    already in the database is refused). A file holding several fio runs (`cat a.json
    b.json`) gives a run for each; of one run's --status-interval reports the last is
    kept; a file whose reports cannot be told apart is refused. Every file is checked
    first; if any is not fio output or an iobench export, nothing is imported.

    \b
    Examples:
      iobench import results.json --label legacy
      iobench import old/*.json --json
      iobench import old-run.txt          # fio's normal output, as pasted
      iobench import terse.out            # fio --output-format=terse
      iobench import run7.json            # exported on another machine
    """
    from iobench.importer import read_files, store_imports
    from iobench.report.printed import runs_document

    imports = read_files(list(files))  # every file checked before the database is opened
    with env.open_store() as store:
        runs = store_imports(store, [f.run for f in imports], label=label, argv=env.argv)
    if as_json:
        document = runs_document(runs)
        for entry, found, run in zip(document["runs"], imports, runs, strict=True):
            entry["source"] = run.source
            entry["position"] = found.position()
        env.emit_json(document)
        return
    for found, r in zip(imports, runs, strict=True):
        env.stdout.print(
            f"imported run {r.id} from {literal(r.source)}{_position(found)}: "
            f"{len(r.results)} result(s), fio " + literal(r.fio_version or "?"),
            highlight=False,
            markup=False,
            soft_wrap=True,  # one line per run, however long its path
        )


def _position(found: FileRun) -> str:
    """Where in its file an imported run was, when the file held more than its report."""
    where = [f"run {found.number} of {found.of} in the file, line {found.line}"]
    if found.of == 1:
        where = [f"line {found.line}"] if found.snapshots else []
    if found.snapshots:
        n = len(found.snapshots)
        where.append(f"{n} earlier --status-interval snapshot{'s' * (n > 1)} of it left out")
    return f" ({'; '.join(where)})" if where else ""


@click.command(context_settings=RUN_REFS)
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
@output_option("Write to this file instead of standard output (-).")
@pass_env
def export(env: Environment, run_ref: str, fmt: str, output: str) -> None:
    """Export one run's results as CSV or JSON.

    A file is written whole or not at all, like a report (see `iobench report --help`).

    \b
    Examples:
      iobench export latest > results.csv
      iobench export 7 --format json -o run7.json
    """
    from iobench.export import export_csv, export_json

    env.require_db()
    with env.open_store(readonly=True) as store:
        run = store.get_run(store.resolve(run_ref))
    text = export_csv(run) if fmt == "csv" else export_json(run)
    write_output(output, text)
