"""The run and runs documents as commands print them (docs/json-schema.md): ``run``,
``show`` and ``sweep`` with ``--json`` and ``export --format json`` print a run
(:func:`run_document`), ``list`` and ``import`` with ``--json`` a list of runs
(:func:`runs_document`).

A run document is the stored run (iobench.documents.run) with what is computed from it:
the summary over repetitions, a sweep's, characterize's or orion's analysis, a run on many
clients' skew and scaling, the expectations checked and a spec's promise. ``import``
reads only the stored part back.
"""

from __future__ import annotations

from typing import Any

from iobench.analysis.compare import summarize_results
from iobench.documents import envelope
from iobench.documents.run import result_fields, run_fields
from iobench.expect import check_run
from iobench.metrics import without_bins
from iobench.model import DIRECTIONS
from iobench.records import ResultRecord, RunRecord
from iobench.report.clients import clients_document, is_client_run
from iobench.report.curves import analysis_document
from iobench.report.specs import spec_document


def result_document(r: ResultRecord, *, full: bool = False) -> dict[str, Any]:
    """One result; ``full`` (export): with the histogram bins, fio's errno and the evidence
    that fits in a document (job file, argv, return code; not fio's raw output)."""
    doc = result_fields(r, full=full)
    if not full:  # shown, not exported: the bins are for machines
        doc.update(without_bins({d: doc[d] for d in DIRECTIONS}))
    return doc


def run_document(run: RunRecord, *, full: bool = False) -> dict[str, Any]:
    """The ``kind: "run"`` document; ``full`` is what ``export --format json`` writes and
    ``import`` reads back: also the command line, the suite definition, the histogram bins
    and each result's evidence (docs/json-schema.md)."""
    doc = {
        **envelope("run"),
        **run_fields(run),
        "results": [result_document(r, full=full) for r in run.results],
        # Per target, workload and direction over the repetitions: n, mean, 95 % CI, CV.
        "summary": summarize_results(run),
    }
    from iobench.report.steady import steady_document

    steady = steady_document(run)
    if steady is not None:  # a run in steady-state rounds
        doc["steady_state"] = steady
    analysis = analysis_document(run)
    if analysis is not None:  # sweeps, characterize and orion-simple runs
        doc["analysis"] = analysis
    if is_client_run(run):  # --clients: each step's skew and stragglers, the scaling
        doc["clients"] = clients_document(run)
    checks = check_run(run)
    if checks:  # --expect, a suite's expect, --spec
        doc["expectations"] = [c.as_dict() for c in checks]
    spec = spec_document(run)
    if spec is not None:  # --spec: the promise and each workload's share of it
        doc["spec"] = spec
    if full:
        doc["argv"] = run.argv
        doc["suite_def"] = run.suite_def.as_dict()
    return doc


def run_summary(run: RunRecord) -> dict[str, Any]:
    """A run as ``list --json`` shows it."""
    return {
        "run_id": run.id,
        "uuid": run.uuid,
        "status": run.status,
        "suite": run.suite,
        "label": run.label,
        "origin": run.origin,
        "targets": [t.spec for t in run.targets],
        "results": run.result_count,
        "fio_version": run.fio_version,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
    }


def runs_document(runs: list[RunRecord]) -> dict[str, Any]:
    return {**envelope("runs"), "runs": [run_summary(r) for r in runs]}
