"""`iobench doctor`: what a run would do (its preflight), shown without running it
(docs/findings.md).

The document holds what `iobench run` would do: the host and each target's context, the
steps with their expected time, the exact fio job file of every step, the expectations it
would check (with a provider spec's promise per workload), and every finding about the
method; or, when the run would be refused, why.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shlex
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from iobench import __version__
from iobench.documents import envelope
from iobench.engine.local import STALL_S
from iobench.engine.preflight import Preflight
from iobench.errors import IobenchError
from iobench.fio.jobfile import (
    FILL_SECTION,
    LAYOUT_SECTION,
    TARGET_LINK,
    checked,
    comment_lines,
    plain_fill_job,
    plain_job,
    plain_layout_job,
    section_name,
)
from iobench.fio.logs import LOG_PREFIX
from iobench.fio.runner import TIMEOUT_MARGIN_S, fio_argv
from iobench.records import SuiteDefinition
from iobench.report.context import host_lines, render_lines, target_lines
from iobench.report.literal import (
    literal,
    literal_lines,
    markup_literal,
    markup_literal_lines,
    print_hanging,
)
from iobench.report.terminal import render_warnings
from iobench.specs import (
    SPEC_MIN_OUTSTANDING,
    SPEC_TOLERANCE,
    burst_expected,
    expected,
    promise_text,
    rate_text,
)
from iobench.suites.options import NAME_RE
from iobench.targets import kind_named
from iobench.units import format_bytes, format_duration, format_iops


def doctor_document(
    p: Preflight | None,
    refused: IobenchError | None,
    suite: Any,
    steady_state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``kind: "doctor"`` document; ``p`` is None when the run would be refused;
    ``steady_state``: the request's rule (--steady-state pts: the steps are one round)."""
    doc: dict[str, Any] = {
        **envelope("doctor"),
        "suite": SuiteDefinition.of_suite(p.suite if p else suite).as_dict(),
        "refused": None
        if refused is None
        else {
            "message": refused.message,
            "hint": refused.hint,
            "exit_code": int(refused.exit_code),
        },
    }
    if p is None:
        return {**doc, "targets": [], "steps": [], "jobs": [], "expectations": [], "spec": None,
                "warnings": []}  # fmt: skip
    steps = p.schedule()
    doc["host"] = p.host
    doc["targets"] = _targets(p)
    doc["steps"] = [
        {"target": s.target, "name": s.name, "expected_s": round(s.expected_s, 1)} for s in steps
    ]
    doc["expected_s"] = round(sum(s.expected_s for s in steps), 1)
    if steady_state is not None and steady_state.get("rule") == "pts":
        layout = sum(s.expected_s for s in steps if s.workload is None)
        round_s = doc["expected_s"] - layout
        window, most = int(steady_state["window"]), int(steady_state["max_rounds"])
        doc["steady_state"] = {
            **steady_state,
            "round_s": round(round_s, 1),
            "expected_s": [round(layout + window * round_s, 1), round(layout + most * round_s, 1)],
        }
    elif steady_state is not None:
        doc["steady_state"] = steady_state
    doc["jobs"] = _jobs(p)
    readonly = all(pt.readonly for pt in p.prepared)
    doc["fio_argv"] = fio_argv("fio", Path("stepN.fio"), Path("stepN.json"), readonly=readonly)
    doc["expectations"] = [
        {"expectation": e.text, "source": e.source} for e in p.suite.expectations
    ]
    doc["spec"] = _spec(p)
    doc["precondition"] = None if p.precondition is None else dataclasses.asdict(p.precondition)
    doc["warnings"] = [f.as_dict() for f in p.findings]
    return doc


def _targets(p: Preflight) -> list[dict[str, Any]]:
    """Each target as the run would use it: its test file, its layout, its context."""
    return [
        {
            "spec": pt.target.spec,
            "path": pt.target.path,
            "kind": pt.target.kind,
            "size_bytes": pt.target.size_bytes,
            "free_bytes": pt.target.free_bytes,
            "test_file": pt.filename,
            "created": pt.created,
            "layout_bytes": pt.layout_bytes,
            "precondition": None if pt.purge is None else {"purge": dataclasses.asdict(pt.purge)},
            "readonly": pt.readonly,
            "fio_env": dict(pt.reach.env),
            "context": ctx,
        }
        for pt, ctx in zip(p.prepared, p.contexts, strict=True)
    ]


def _jobs(p: Preflight) -> list[dict[str, Any]]:
    """Every step's fio job in the order `run` runs them, as plain fio takes it: the
    options of the job file iobench runs, the file or device named by its path (iobench's
    own names it ./target, a link), each a section that waits for the one before it."""
    several = len(p.prepared) > 1
    by_spec = {pt.target.spec: (i, pt) for i, pt in enumerate(p.prepared)}
    direct = all(w.direct for w in p.suite.workloads)
    jobs = []
    for step in p.schedule():
        i, pt = by_spec[step.target]
        tag = f".target{i + 1}" if several else ""
        w = step.workload
        what = step.name if w is None else f"workload {w.name}"
        title = f"iobench {__version__}: {what} on {json.dumps(step.target)}"
        if step.stage == "purge":  # no fio job: iobench's own (iobench.targets.purge)
            continue
        if step.stage == "fill" and p.precondition is not None:
            text = plain_fill_job(
                pt.reach,
                pt.layout_bytes,
                p.precondition,
                direct=direct,
                section=f"{FILL_SECTION}{tag}",
                title=title,
            )
        elif w is None:
            text = plain_layout_job(
                pt.reach,
                pt.layout_bytes,
                direct=direct,
                section=f"{LAYOUT_SECTION}{tag}",
                title=title,
            )
        else:
            section = section_name(w.name) + tag
            placed = pt.placed(w)  # pinned with --pin-to-device
            text = plain_job(placed, pt.reach, pt.size_of(w), section=section, title=title)
        jobs.append(
            {
                "target": step.target,
                "workload": w.name if w else None,
                "job_file": text,
                **({"step": "fill"} if step.stage == "fill" else {}),
            }
        )
    return jobs


# How a purge is done by hand (util-linux), for the notes around a plan's job files.
_PURGE_TOOLS = {"discard": "blkdiscard", "punch-hole": "fallocate --punch-hole"}


def _claimed(name: str) -> str:
    """What iobench does while a run writes to a target of the kind ``name``, to close
    the note's parenthesis."""
    claimed = kind_named(name).claimed
    return f", and {claimed})" if claimed else ")"


def _path_shown(path: str) -> str:
    """A path as a shell takes it, on one line."""
    return shlex.quote(path) if path.isprintable() else json.dumps(path)


def around_jobs(doc: dict[str, Any]) -> list[str]:
    """What `iobench run` does around the job files that ``doc`` (a doctor document)
    shows, which plain fio does not: one sentence each."""
    targets = doc.get("targets") or []
    readonly = all(t["readonly"] for t in targets)
    argv = " ".join(doc.get("fio_argv") or [])
    linked = [t for t in targets if kind_named(t["kind"]).opened]
    engines = sorted({e for t in targets if (e := kind_named(t["kind"]).engine)})
    where = (
        f"where ./{TARGET_LINK} is a symbolic link to the file or device (the job files it "
        f"stores say filename={TARGET_LINK})"
        if linked
        else f"(fio's {' and '.join(engines)} engine reaches the target itself)"
    )
    notes = [
        f"iobench runs each step as a fio process of its own, `{argv}`, in a private "
        f"temporary directory {where}",
        f"each step has a hard time limit of 1.5 x (ramp + runtime) + {TIMEOUT_MARGIN_S:.0f} s; "
        f"a layout runs until it makes no progress for {format_duration(STALL_S)}",
        f"fio's interval logs ({LOG_PREFIX}_iops.1.log ...) land in the private directory "
        "and go with it; from one job file they land in fio's working directory, and each "
        "step waits for the one before it (stonewall)",
        "fio runs in iobench's own cgroups, so under the IO throttles shown for each target",
        *(
            f"fio reaches {_path_shown(t['path'])} with {key}={_path_shown(value)} in its "
            "environment, which iobench sets (and the command above needs)"
            for t in targets
            for key, value in (t.get("fio_env") or {}).items()
        ),
    ]
    for t in targets:
        name = _path_shown(t["test_file"])
        purge = (t.get("precondition") or {}).get("purge") or {}
        tool = _PURGE_TOOLS.get(str(purge.get("method")))
        if tool:
            notes.append(
                f"before the fill iobench purges the test area ({purge['method']}), which no "
                f"fio job does; this does the same: {tool} --offset 0 --length "
                f"{t['layout_bytes']} {_path_shown(t['path'])}"
            )
        if t["created"]:
            notes.append(
                f"iobench creates the test file {name} (O_EXCL, at its full size, so it "
                "never writes over a file that is there) before laying it out, and removes "
                "it after the last step, on a failure or Ctrl-C too; plain fio creates it "
                f"itself and leaves it: rm -- {name}"
            )
        elif not t["readonly"]:
            notes.append(
                f"these jobs WRITE to {_path_shown(t['path'])}, destroying its data "
                "(iobench does only with --destructive, after its checks" + _claimed(t["kind"])
            )
        elif not readonly:
            notes.append(
                f"iobench passes --readonly to fio for the steps on {_path_shown(t['path'])}"
            )
    return notes


def fio_command(doc: dict[str, Any], jobfile: str) -> str:
    """How plain fio runs the job file of a doctor document's plan (``--readonly`` when
    every step only reads, as iobench passes it), as a shell takes it."""
    targets = doc.get("targets") or []
    readonly = bool(targets) and all(t["readonly"] for t in targets)
    flags = " --readonly" if readonly else ""
    env = {k: v for t in targets for k, v in (t.get("fio_env") or {}).items()}
    prefix = "".join(f"{k}={_path_shown(v)} " for k, v in env.items())
    return f"{prefix}fio --output-format=json+ --output=result.json{flags} {_path_shown(jobfile)}"


def _name_shown(name: str) -> str:
    """A suite's name as written when it is a plain one, else JSON-quoted."""
    return name if NAME_RE.fullmatch(name) else json.dumps(name)


def fio_jobfile(doc: dict[str, Any]) -> str:
    """Every step of a doctor document's plan in one job file for plain fio: what
    ``iobench doctor --fio-jobfile`` writes."""
    targets = doc.get("targets") or []
    suite = doc["suite"]["name"]
    on = ", ".join(json.dumps(t["spec"]) for t in targets)
    head = [
        f"the steps `iobench run` would run with the {_name_shown(suite)} suite on {on}, in its "
        f"order, as plain fio runs them (iobench {__version__}, `iobench doctor --fio-jobfile`).",
        f"run them: {fio_command(doc, 'THIS-FILE')}",
        "what iobench does around them, which plain fio does not:",
        *(f" - {note}" for note in around_jobs(doc)),
    ]
    # Each line a comment fio skips, whatever a suite's name or a path holds.
    head = [line for text in head for line in comment_lines(text)] + [""]
    jobs = "\n".join(j["job_file"] for j in doc.get("jobs") or [])
    return checked("\n".join(head) + "\n" + jobs)


def _spec(p: Preflight) -> dict[str, Any] | None:
    """A provider spec's promise, and what it promises each workload; None without one."""
    if p.promise is None:
        return None
    return {
        **p.promise.as_dict(),
        "tolerance": SPEC_TOLERANCE,
        "min_outstanding": SPEC_MIN_OUTSTANDING,
        "workloads": [
            {
                "workload": w.name,
                "bs": w.bs,
                "outstanding": w.iodepth * w.numjobs,
                "iops": (e := expected(p.promise, w.bs)).iops,
                "bw_bytes": e.bw_bytes,
                "bound": e.bound,
                **_burst_figures(p.promise, w.bs),
            }
            for w in p.suite.workloads
            if not w.parts  # a group mixes what it asks of the volume (specs)
        ],
    }


def _burst_figures(promise: Any, bs: int) -> dict[str, Any]:
    b = burst_expected(promise, bs)
    return {} if b is None else {"burst_iops": b.iops, "burst_bw_bytes": b.bw_bytes}


def _how_long(doc: dict[str, Any]) -> str:
    """The steps' time in all, or for a run in rounds the least and the most it takes."""
    rounds = doc.get("steady_state") or {}
    if rounds.get("rule") != "pts":
        return f"in all about {format_duration(round(doc['expected_s']))}"
    low, high = (format_duration(round(x)) for x in rounds["expected_s"])
    return (
        f"one round; in rounds until steady (the SNIA PTS rule over the last "
        f"{rounds['window']}): at least {rounds['window']}, at most "
        f"{rounds['max_rounds']} rounds, about {low} to {high} in all"
    )


def render_doctor(doc: dict[str, Any], console: Console) -> None:
    suite = doc["suite"]
    console.print(
        f"[bold]doctor[/]: what `iobench run` would do with the "
        f"{markup_literal(suite['name'])} suite ({len(suite['workloads'])} workloads); "
        "nothing is run or written",
        highlight=False,
    )
    if doc.get("host"):
        render_lines(host_lines(doc["host"]), console)
    for t in doc.get("targets") or []:
        console.print()
        render_lines(target_lines(t), console)
        area = format_bytes(t["layout_bytes"])
        if t.get("precondition"):
            print_hanging(console, "  tests: ", _preconditioned(t, doc.get("precondition")))
            continue
        how = (
            f"a test file of its own, {t['test_file']}, written once ({area})"
            " and removed afterwards"
            if t["created"]
            else f"{t['path']} itself"
            + (", read only" if t["readonly"] else ", written (--destructive)")
            + (f", its first {area} written first (--prefill)" if t["layout_bytes"] else "")
        )  # fmt: skip
        print_hanging(console, "  tests: ", how)
    if doc.get("steps"):
        console.print()
        table = Table(title="steps", title_justify="left", title_style="bold")
        for col in ("target", "step", "about"):
            table.add_column(col, justify="right" if col == "about" else "left")
        for s in doc["steps"]:
            table.add_row(
                markup_literal(s["target"]),
                markup_literal(s["name"]),
                format_duration(round(s["expected_s"])),
            )
        console.print(table)
        console.print(f"  {_how_long(doc)}", style="dim")
    if doc.get("jobs"):
        console.print(
            "\n[bold]fio job files[/]: each step as plain fio runs it (paste one, or all of "
            "them in order into one file; --fio-jobfile FILE writes that file); around "
            "them:",
            highlight=False,
        )
        for note in around_jobs(doc):
            print_hanging(console, "  - ", note)
    for job in doc.get("jobs") or []:
        what = job["workload"] or job.get("step") or "layout"
        console.print(
            f"\n[bold]job file[/] {markup_literal(what)} on {markup_literal(job['target'])}:",
            highlight=False,
        )
        # soft_wrap: a long line stays one line (the terminal folds it), so it pastes.
        console.print(
            literal_lines(job["job_file"].rstrip()),
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    _render_spec(doc.get("spec"), console)
    if doc.get("expectations"):
        console.print("\n[bold]expectations[/] (checked after the run; exit 4 if one fails)")
        for e in doc["expectations"]:
            console.print(
                literal(f"  {e['expectation']}  ({e['source']})"), highlight=False, markup=False
            )
    console.print()
    render_warnings(doc.get("warnings") or [], console)
    if not (doc.get("warnings") or doc.get("refused")):
        console.print("no findings: nothing about the method makes these numbers misleading")
    refused = doc.get("refused")
    if refused:
        message = markup_literal_lines(refused["message"]).replace("\n", "\n" + " " * 26)
        console.print(f"\n[red]the run would be refused[/]: {message}", highlight=False)
        if refused.get("hint"):
            hint = literal_lines(refused["hint"]).replace("\n", "\n" + " " * 14)
            console.print(f"  what to do: {hint}", highlight=False, markup=False)


def _preconditioned(t: dict[str, Any], pre: dict[str, Any] | None) -> str:
    """How a target is used with --precondition, in `doctor`'s words."""
    area = format_bytes(t["layout_bytes"])
    where = f"a test file of its own, {t['test_file']}," if t["created"] else t["path"]
    purge = t["precondition"]["purge"]
    passes = (pre or {}).get("passes", 2)
    bs = format_bytes((pre or {}).get("bs"))
    said = purge["note"]
    if purge["method"] != "none":
        said = f"purged by {purge['method']}: {said}"
    return (
        f"{where} preconditioned first: {said}; then {passes} x {area} of sequential {bs} "
        "writes (32 deep, direct IO unless a workload is buffered)"
        + ("; removed afterwards" if t["created"] else "")
    )


def _render_spec(spec: dict[str, Any] | None, console: Console) -> None:
    if not spec:
        return
    console.print(f"\n[bold]promised[/] by {markup_literal(promise_text(spec))}", highlight=False)
    for line in spec.get("basis") or []:
        console.print(literal(f"  {line}"), highlight=False, markup=False)
    table = Table(show_edge=False)
    workloads = spec.get("workloads") or []
    bursts = any("burst_iops" in w for w in workloads)
    for col in ("workload", "bs", "outstanding IO", "promised", "limit", "burst")[
        : 6 if bursts else 5
    ]:
        table.add_column(col)
    for w in workloads:
        # The provider's own units in brackets only where its bandwidth figure is quoted:
        # where the bandwidth limit binds, not a bandwidth derived from its IOPS.
        units = spec.get("rate_units") if w["bound"] == "bandwidth" else None
        promised = f"{format_iops(w['iops'])} IOPS = {rate_text(w['bw_bytes'], units)}"
        row = [w["workload"], format_bytes(w["bs"]), str(w["outstanding"]), promised, w["bound"]]
        if bursts:
            burst_bw = (spec.get("burst") or {}).get("bw_bytes")
            quoted = burst_bw is not None and math.isclose(w.get("burst_bw_bytes", 0), burst_bw)
            row.append(
                f"{format_iops(w['burst_iops'])} IOPS = "
                f"{rate_text(w['burst_bw_bytes'], spec.get('rate_units') if quoted else None)}"
                if "burst_iops" in w
                else "-"
            )
        table.add_row(*(markup_literal(c) for c in row))
    console.print(table)
    console.print(
        literal(f"  sources: {'; '.join(spec['sources'])}"),
        style="dim",
        highlight=False,
        markup=False,
    )
