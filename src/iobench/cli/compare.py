"""Several stored runs side by side: ``compare`` (on the terminal or as JSON) and
``report`` (an HTML or Markdown file), and how both find the runs they are given."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from iobench.cli import checks
from iobench.cli.env import Environment, pass_env
from iobench.cli.options import RUN_REFS, json_option, run_selection_options
from iobench.errors import UserError
from iobench.output import STDOUT, check_names_a_file, write_output
from iobench.report.literal import literal

if TYPE_CHECKING:
    from iobench.records import RunRecord
    from iobench.store import Store


@click.command(context_settings=RUN_REFS)
@run_selection_options()
@json_option()
@pass_env
def compare(
    env: Environment,
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

    env.require_db()
    with env.open_store(readonly=True) as store:
        runs = runs_for(env, store, run_refs, labels)
        base = store.resolve(baseline) if baseline is not None else None
    checks.baseline_compared(base, [r.id for r in runs])
    comparison = compare_runs(runs, base)
    if as_json:
        env.emit_json(comparison.to_dict())
    else:
        render_comparison(comparison, env.stdout)


@click.command(context_settings=RUN_REFS)
@run_selection_options()
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
@pass_env
def report(
    env: Environment,
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
    env.require_db()
    with env.open_store(readonly=True) as store:
        runs = runs_for(env, store, run_refs, labels)
        base = store.resolve(baseline) if baseline is not None else None
    setups = sum(max(1, len(r.targets)) for r in runs)
    checks.baseline_in_comparison(baseline, base, [r.id for r in runs], setups)
    comparison = compare_runs(runs, base) if setups > 1 else None
    text = render_html(runs, comparison) if fmt == "html" else render_markdown(runs, comparison)
    where = write_output(output, text)
    env.stderr.print(f"wrote {literal(where)} ({len(runs)} run(s))", highlight=False, markup=False)


def _report_format(output: str) -> str:
    """html or md, from the report file's name."""
    if output == STDOUT:
        return "md"
    check_names_a_file(output)  # `x.md/` has the suffix .md, and names a directory
    suffix = Path(output).suffix.lower()
    if suffix in (".html", ".htm"):
        return "html"
    if suffix in (".md", ".markdown"):
        return "md"
    raise UserError(
        f"-o {output}: the report format comes from the file name; use .html or .md",
        "or choose it with --format html|md",
    )


def runs_for(
    env: Environment, store: Store, refs: Sequence[str], labels: Sequence[str]
) -> list[RunRecord]:
    """Runs named by id/latest/-N, then the latest run of each label, in that order."""
    checks.some_run_named(refs, labels)
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
            env.stderr.print(
                f"note: the latest run labelled {label!r} is run {chosen.id}, "
                + literal(chosen.status),
                highlight=False,
                markup=False,
            )
        ids.append(chosen.id)
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise UserError(
            f"run {twice[0]} is named twice",
            "name each run once (a label names its latest complete run)",
        )
    return [store.get_run(i) for i in ids]
