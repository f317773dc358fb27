"""A suite as one job file for plain fio (`iobench suites export`). Pure: data in, text out.

The file runs as it is with plain fio (``fio FILE.fio``): a header of comments (what it is,
how to run it, what ``iobench run`` does that plain fio does not), a ``[global]`` section
with the target and the options every section shares, then one section per step in the
order ``iobench run`` runs them, each with ``stonewall`` so that it starts when the one
before it has ended.

A suite's name, description and options and a target's path come from outside, and a job
file is code (``exec_prerun``, ``include``, ``${VAR}``): text reaches the file only in
comments (:func:`~iobench.fio.jobfile.comment_lines`), or as values that
:func:`check_plain` accepts, checked once more over the whole file before it is handed out.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from iobench import __version__
from iobench.errors import UserError
from iobench.fio.jobfile import (
    LAYOUT_SECTION,
    checked,
    comment_lines,
    layout_options,
    plain_filename,
    report_options,
    run_options,
    section_name,
    shape_options,
    why_not_plain,
)
from iobench.fio.runner import TIMEOUT_MARGIN_S
from iobench.fio.textparams import DESCRIPTION_PREFIX
from iobench.model import Fitted, Suite, Target, Workload
from iobench.suites.fit import fitted_iodepth
from iobench.suites.options import OPTION_KEYS, show_value, valid_name
from iobench.suites.pin import Pinning
from iobench.targets import kind_of
from iobench.units import format_bytes

WIDTH = 96  # the header's comments are wrapped at this many characters


@dataclass(frozen=True)
class Export:
    """What a suite's job file is made from.

    ``suite``: what the file runs: as `iobench run` runs it on this host (--runtime,
    --size, --ramp applied, a built-in suite fitted to ``cpus`` CPUs), or with
    ``unfitted`` as the suite defines it; ``fitted``: what iobench fits on this host (in
    ``suite`` unless ``unfitted``).
    ``target``: None for fio's working directory. ``size_limit``: an existing file's or
    device's size. ``prefill``: its test area is written before the workloads.
    """

    suite: Suite
    target: Target | None
    size_limit: int | None
    prefill: bool
    fitted: tuple[Fitted, ...]
    cpus: int | None
    created: str  # when, as the header says it
    file_name: str | None  # the file written, for "run it: fio NAME"; None: stdout
    pin: Pinning | None = None  # --pin-to-device: the suite's workloads are pinned to it
    unfitted: bool = False  # --unfitted: the built-in suite's own numjobs, not ``fitted``

    @property
    def engine(self) -> str | None:
        """The engine the target needs (fio's rbd, nbd), replacing the suite's; None: the
        suite's."""
        return None if self.target is None else kind_of(self.target).engine

    @property
    def own_file(self) -> bool:
        """The jobs test a file of their own (in a directory), not the user's file or device."""
        return self.target is None or kind_of(self.target).own_file

    @property
    def writes(self) -> tuple[str, ...]:
        """The steps that write to an existing file or device (a test file of iobench's
        own is another matter)."""
        if self.own_file:
            return ()
        prefill = ("the prefill",) if self.prefill else ()
        return (*prefill, *(w.name for w in self.suite.workloads if w.writes))

    @property
    def layout_bytes(self) -> int:
        biggest = max(w.size for w in self.suite.workloads)
        if self.own_file:
            return biggest
        return min(biggest, self.size_limit or biggest) if self.prefill else 0

    @property
    def test_file(self) -> str:
        """The name of the test file fio creates in a directory (or its working one)."""
        return f"iobench-{section_name(self.suite.name)[:64]}.dat"

    def size_of(self, w: Workload) -> int:
        return w.area(self.size_limit)


def quoted(text: str) -> str:
    """A string from outside as a comment shows it: JSON-quoted, on one line."""
    return json.dumps(text, ensure_ascii=False)


def _comment(text: str, *, lead: str = "", indent: str = "", wrap: bool = True) -> list[str]:
    """``text`` as wrapped ``#`` comment lines (anything not printable escaped first); a
    command line (``wrap=False``) stays on one line, to be copied whole."""
    shown = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)
    wrapped = (
        [lead + shown]
        if not wrap
        else textwrap.wrap(
            shown,
            WIDTH,
            initial_indent=lead,
            subsequent_indent=indent or " " * len(lead),
            break_long_words=True,
            break_on_hyphens=False,
        )
    )
    return [line for part in wrapped for line in comment_lines(part, "#")]


def suite_jobfile(export: Export) -> str:
    """The suite of ``export`` as one job file for plain fio."""
    sections = _sections(export)
    steps: list[str] = []
    for name, body in sections:  # a group's parts after its first: started with it
        if "new_group" in body and steps:
            steps[-1] += f" with {name}" if " with " not in steps[-1] else f", {name}"
        else:
            steps.append(name)
    lines = [
        *_header(export, steps),
        "",
        "[global]",
        *_target_lines(export),
        *report_options(logs=False),
    ]
    for _name, section in sections:
        lines += ["", *section]
    text = "\n".join(lines) + "\n"
    check_plain(text)
    return checked(text)


def _sections(export: Export) -> list[tuple[str, list[str]]]:
    """(section name, its lines) for each step: the layout, then every workload. A
    workload whose section cannot bear its name (fio takes [global...] for defaults; two
    names can make one section) is named by name=, so it reads back under its own."""
    out: list[tuple[str, list[str]]] = []
    taken: set[str] = set()
    if export.layout_bytes:
        direct = all(w.direct for w in export.suite.workloads)
        what = "lay out the test file" if export.own_file else "prefill the test area"
        out.append(
            (
                LAYOUT_SECTION,
                [
                    *_comment(
                        f"{what}: written once with incompressible data before the "
                        "workloads, as iobench does"
                    ),
                    f"[{LAYOUT_SECTION}]",
                    *layout_options(export.layout_bytes, direct, export.engine),
                    "stonewall",
                ],
            )
        )
    for w in export.suite.workloads:
        if w.parts:
            out += _group_sections(export, w, taken)
            continue
        section = _section(w.name, taken)
        title = f"workload {quoted(w.name)}" if section != w.name else f"workload {w.name}"
        renamed = section != w.name and valid_name(w.name)
        out.append(
            (
                section,
                [
                    *_comment(f"{title}: {_shape_text(w, _fit_of(export, w))}"),
                    f"[{section}]",
                    *([f"name={w.name}"] if renamed else []),
                    *_options(export, w),
                    "stonewall",
                ],
            )
        )
    return out


def _section(name: str, taken: set[str]) -> str:
    """A section for ``name`` that no earlier section has (``taken``: theirs, lowercase)."""
    section = base = section_name(name)
    n = 1
    while section.lower() in taken:
        n += 1
        section = f"{base}.{n}"
    taken.add(section.lower())
    return section


def _options(export: Export, w: Workload) -> list[str]:
    """A job's options: its description (them said once more), its shape, how long and
    over how much it runs."""
    options = [*shape_options(w), *run_options(w, export.size_of(w), export.engine)]
    if dict(w.options).get("time_based") == "0":
        # fio's default, said: fio's JSON echoes it, so an import knows it was not
        options.append("time_based=0")
    return [*_description(options), *options]


def _group_sections(export: Export, w: Workload, taken: set[str]) -> list[tuple[str, list[str]]]:
    """A group's parts, a section each with no stonewall between them, so fio starts them
    together: the first, which waits for the step before it (stonewall), is the section of
    the group's name with its part's as ``name=`` (so the file reads back as the same group,
    suites.jobfile); the others report apart (``new_group``)."""
    out = []
    for i, part in enumerate(w.parts):
        section = _section(w.name if i == 0 else part.name, taken)
        title = f"workload {quoted(w.name)}, job {quoted(part.name)}"
        together = f" (run together with the {len(w.parts) - 1} after it)" if i == 0 else ""
        fit = _fit_of(export, dataclasses.replace(part, name=f"{w.name}/{part.name}"))
        lines = [
            *_comment(f"{title}{together}: {_shape_text(part, fit)}"),
            f"[{section}]",
            *([f"name={part.name}"] if section != part.name else []),
            *_options(export, part),
            "stonewall" if i == 0 else "new_group",
        ]
        out.append((section, lines))
    return out


def _fit_of(export: Export, w: Workload) -> Fitted | None:
    """How the file's workload ``w`` was fitted to this host's CPUs (None: as defined)."""
    if export.unfitted:
        return None
    return next((f for f in export.fitted if f.workload == w.name), None)


# fio's normal text output prints a job's description (``Description  : [...]``) but none
# of its options beyond rw, bs, ioengine and iodepth: the options said once more there are
# how `iobench import` knows the workload from that text (fio/textparams.py reads them).
MAX_DESCRIPTION = 3000  # within the longest line the text reader takes (4096)


def _description(options: Sequence[str]) -> list[str]:
    """``description=`` holding the section's options, or nothing when too long."""
    text = f"{DESCRIPTION_PREFIX} {' '.join(options)}"
    return [f"description={text}"] if len(text) <= MAX_DESCRIPTION else []


def _jobs(n: int) -> str:
    return "1 job" if n == 1 else f"{n} jobs"


def _shape_text(w: Workload, fit: Fitted | None = None) -> str:
    mix = f" ({w.rwmixread}% reads)" if w.rwmixread is not None else ""
    fitted = (
        f" (fitted to {_cpus(fit.cpus)} as `iobench run` runs it here; the suite defines "
        f"{_jobs(fit.numjobs)} x iodepth {fit.iodepth})"
        if fit is not None
        else ""
    )
    return (
        f"{w.rw}{mix}, {format_bytes(w.bs)} blocks, {_jobs(w.numjobs)} x iodepth "
        f"{w.iodepth}{fitted}, {w.ioengine}, {'direct' if w.direct else 'buffered'}"
    )


def _target_lines(export: Export) -> list[str]:
    """``filename=`` (and ``directory=``) of the [global] section, with a warning beside
    a file or device the jobs write."""
    t = export.target
    if t is None:
        return [
            *_comment(f"no directory=: fio creates {export.test_file} where it runs"),
            f"filename={export.test_file}",
        ]
    kind = kind_of(t)
    if kind.engine is not None:  # reached by its engine's options (uri=, pool= ...)
        reach = kind.reach(t, t.path)
        warning = _comment(
            f"!!! {_writes_text(export)} !!!" if export.writes else f"{t.kind}: only read"
        )
        env = [
            f"run it with {key}={quoted(value)} in fio's environment" for key, value in reach.env
        ]
        said = _comment("; ".join(env)) if env else []
        return [*warning, *said, *(f"{k}={v}" for k, v in reach.options)]
    value = plain_filename(t.path)
    if value is None and t.spec != t.path:
        value = plain_filename(t.spec)
    if value is None:
        raise UserError(
            f"cannot export for {show_value(t.spec)}: fio cannot take this path in a job file "
            f"({why_not_plain(t.path)})",
            "give --target a symbolic link to it whose own path is short and has none of "
            "these characters",
        )
    if kind_of(t).own_file:
        return [f"directory={value}", f"filename={export.test_file}"]
    warning = _comment(
        f"!!! {_writes_text(export)} !!!" if export.writes else f"{t.kind}: only read"
    )
    return [*warning, f"filename={value}"]


def _writes_text(export: Export) -> str:
    t = export.target
    assert t is not None
    kind = kind_of(t)
    return (
        f"this job file WRITES TO the {kind.noun} {quoted(t.spec)} ({', '.join(export.writes)}): "
        f"it {kind.loss}"
    )


def _header(export: Export, sections: Sequence[str]) -> list[str]:
    suite = export.suite
    source = "a built-in suite" if suite.builtin else f"the suite file {quoted(suite.source)}"
    name = suite.name if re.fullmatch(r"[A-Za-z0-9._-]+", suite.name) else quoted(suite.name)
    lines = [
        *_comment(f"iobench {__version__}: the {name} suite as a job file for plain fio"),
        *_comment(f"source: {source}; exported {export.created}"),
        *_comment(suite.description, lead="description: "),
    ]
    overridden = sorted(suite.overridden)
    if overridden:
        lines += _comment(f"as `iobench run` runs it with --{', --'.join(overridden)} given")
    fitted = _fitted_line(export)
    lines += _comment(fitted) if fitted else []
    lines += ["#", *_run_it(export, sections), *_where(export)]
    lines += ["#", *_comment("what `iobench run` does that plain fio does not:")]
    for note in _around(export):
        lines += _comment(note, lead="  - ")
    return lines


def _run_it(export: Export, sections: Sequence[str]) -> list[str]:
    name = export.file_name or "FILE.fio"
    shown = shlex.quote(name) if name.isprintable() else quoted(name)
    # As iobench passes it to fio when nothing is written (a test file of its own is).
    readonly = "" if export.own_file or export.writes else " --readonly"
    steps = ", ".join(sections)
    return [
        *_comment(f"run it: fio{readonly} {shown}", wrap=False),
        *_comment("fio's JSON, which `iobench import result.json` reads:"),
        *_comment(
            f"fio{readonly} --output-format=json+ --output=result.json {shown}",
            lead="  ",
            wrap=False,
        ),
        *_comment(f"its steps, one after another (stonewall): {steps}"),
    ]


def _where(export: Export) -> list[str]:
    t = export.target
    biggest = format_bytes(export.layout_bytes) if export.layout_bytes else ""
    if t is None:
        return _comment(
            f"target: fio's working directory, where it creates the test file "
            f"{export.test_file} ({biggest}) and leaves it: rm -- {export.test_file}"
        )
    kind = kind_of(t)
    if kind.own_file:
        return _comment(
            f"target: the {kind.noun} {quoted(t.spec)}, where fio creates the test file "
            f"{export.test_file} ({biggest}) and leaves it"
        )
    lines = _comment(f"target: the {kind.noun} {quoted(t.spec)}")
    if export.writes:
        border = f"# {'!' * 64}"
        warning = (
            f"WARNING: {_writes_text(export)}. iobench exported it with --destructive after "
            "checking the target then; check it again before you run this file."
        )
        lines += [border, *_comment(warning, lead="!!! ", indent="!!! "), border]
    return lines


def _around(export: Export) -> list[str]:
    notes = [
        "it checks the target first: a device that is mounted, in use, part of a volume "
        "or holding a filesystem or partition table is never written (a filesystem or "
        "partition table only with --destructive --overwrite-signatures), an existing file "
        "is written only with --destructive, and the free space is checked; plain fio "
        "refuses only to write a device mounted under the very path it was given",
    ]
    if export.own_file:
        notes.append(
            "it creates its test file with O_EXCL (so never over a file that is there) at its "
            f"full size, writes it once ({LAYOUT_SECTION} here does that) and removes it "
            "after the last workload, on a failure or Ctrl-C too; plain fio leaves it"
        )
    elif not export.prefill:
        notes.append(
            "it reads a few blocks of the test area first and warns when it was never "
            "written (reads of unwritten blocks measure nothing); --prefill writes it first"
        )
    notes.append(_fitted_note(export) if export.pin is None else _pinned_note(export.pin))
    notes += [
        "it runs each step as a fio of its own, with a hard time limit of 1.5 x (ramp + "
        f"runtime) + {TIMEOUT_MARGIN_S:.0f}s, and checks fio's exit code, each job's "
        "error and the bytes it moved; it keeps per-second logs for the timelines "
        "(write_*_log, left out here)",
        "it stores each result with the host's and the target's context and warns about "
        "the method (`iobench doctor` shows those findings before a run)",
    ]
    return notes


def _fits(export: Export) -> str:
    return ", ".join(
        f"{f.workload} as {_jobs(f.cpus)} x iodepth "
        f"{fitted_iodepth(f.iodepth, f.numjobs, f.cpus)} (the suite: "
        f"{_jobs(f.numjobs)} x iodepth {f.iodepth})"
        for f in export.fitted
    )


def _fitted_line(export: Export) -> str | None:
    """What the header says at once of a built-in suite fitted to this host's CPUs."""
    if not export.suite.builtin or export.pin is not None or export.cpus is None:
        return None
    cpus = _cpus(export.cpus)
    if export.unfitted:
        return (
            f"as the suite defines it (--unfitted), not as `iobench run` runs it on the host "
            f"that exported it ({cpus})" + (f", {_fits(export)}" if export.fitted else "")
        )
    if not export.fitted:
        return f"as `iobench run` runs it on the host that exported it ({cpus}): as defined"
    return (
        f"fitted to the host that exported it ({cpus}) as `iobench run` runs it there: "
        f"{_fits(export)}; on a host with other CPUs export it there, or with --unfitted "
        "for the suite's own numjobs"
    )


def _fitted_note(export: Export) -> str:
    if not export.suite.builtin:
        return (
            "it runs your suite as written, numjobs too (it warns when a workload has more "
            "jobs than the host has CPUs)"
        )
    rule = (
        "it fits a built-in suite to the CPUs of the host it runs on: a workload with more "
        "jobs than CPUs runs one job per CPU at a deeper queue, the same IOs in flight"
    )
    if export.unfitted:
        return f"{rule}; this file keeps the suite's own numjobs (--unfitted)"
    return f"{rule}; this file holds what it runs on the host that exported it"


def _pinned_note(pin: Pinning) -> str:
    return (
        f"--pin-to-device placed each job on the CPUs of {' and '.join(pin.devices)}'s "
        f"blk-mq queues on the host that exported it ({pin.queues} queue"
        f"{'' if pin.queues == 1 else 's'}, CPUs {pin.queue_cpus}; cpus_allowed and "
        "cpus_allowed_policy=split below, a built-in suite fitted to those CPUs): these "
        "are that host's CPU numbers, so on another host export the suite there, or "
        "delete the cpus_allowed lines"
    )


def _cpus(n: int) -> str:
    return "1 CPU" if n == 1 else f"{n} CPUs"


# -- the last check: nothing but comments, sections and plain key=value lines --------------------

_SECTION_RE = re.compile(r"\[([A-Za-z0-9._:-]{1,80})\]")
_KEY_RE = re.compile(r"[a-z][a-z0-9_]*")
# What an option's value may hold: no '$' (fio expands it), no '(' (an expression), no ';'
# or '#' (a comment), no '\' (an escape), no blank, nothing beyond ASCII.
_VALUE_RE = re.compile(r"[A-Za-z0-9._:/,%+-]*")
_PATH_KEYS = frozenset({"filename", "directory"})
# The options an exported file holds: iobench's own and those a suite may set.
_KEYS = frozenset(
    {"rw", "bs", "iodepth", "numjobs", "rwmixread", "size", "ioengine", "direct", "runtime"}
    | {"time_based", "ramp_time", "group_reporting", "clat_percentiles", "lat_percentiles"}
    | {"percentile_list", "randrepeat", "refill_buffers", "end_fsync", "name", "description"}
    | _PATH_KEYS
    | set(OPTION_KEYS)
)
_FLAGS = frozenset({"stonewall", "new_group"})


def check_plain(text: str) -> None:
    """Raise UserError unless every line of ``text`` is a comment, a ``[section]`` or a
    ``key=value`` of an option an export holds, with a value fio takes as it is, and the
    first section is ``[global]``: stricter than the gate every job file goes through
    (:func:`~iobench.fio.jobfile.checked`, which also bounds the lines' length and
    characters), which it comes before."""
    sections = 0
    for number, line in enumerate(text.split("\n"), start=1):
        problem = None
        if not line or line[0] in "#;":
            pass
        elif m := _SECTION_RE.fullmatch(line):
            sections += 1
            first, name = sections == 1, m.group(1)
            if (first and name != "global") or (not first and name.lower().startswith("global")):
                problem = "is a section header out of place"
        elif line in _FLAGS:
            pass
        else:
            problem = _option_problem(line)
        if problem:
            raise UserError(
                f"cannot export: line {number} of the job file {problem}: {quoted(line[:80])}",
                "this is a bug in iobench's export; please report it with the suite",
            )


def _option_problem(line: str) -> str | None:
    key, eq, value = line.partition("=")
    if not eq or not _KEY_RE.fullmatch(key) or key == "include":
        return "is not a plain option"
    if key not in _KEYS:
        return "sets an option iobench does not export"
    if key == "description":
        return _description_problem(value)
    if key in _PATH_KEYS:
        if plain_filename(value.replace("\\:", ":")) is None or value != value.strip():
            return "names a path fio would not take as it is"
        return None
    if not _VALUE_RE.fullmatch(value):
        return "has a value fio would expand or cut"
    return None


def _description_problem(value: str) -> str | None:
    """A description is iobench's own: the prefix, then the section's plain options."""
    words = value.removeprefix(DESCRIPTION_PREFIX + " ").split(" ")
    if not value.startswith(DESCRIPTION_PREFIX + " ") or any(
        _option_problem(w) or w.startswith("description=") for w in words
    ):
        return "has a description that is not iobench's list of the section's options"
    return None
