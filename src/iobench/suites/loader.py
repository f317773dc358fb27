"""Load suites from TOML: the built-in ones shipped with iobench and users' own files.

A suite file is data that ends up in a fio job file, and fio job files are code (they can
run commands, delete files and write to any device). So every key is checked: iobench's own
workload fields by their typed parsers, then fio's options by the installed fio's own option
table (fio/catalogue.py), each refused only for a hazard (suites/hazards.py) and checked by
fio itself (``fio --parse-only``). Every error names the file and the line of the key.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import NamedTuple, Protocol

from iobench.analysis.findings import MIN_STEADY_RUNTIME_S
from iobench.errors import SuiteError, SuiteProblem, UserError
from iobench.fio.catalogue import Catalogue
from iobench.fio.catalogue import current as current_catalogue
from iobench.fio.jobfile import run_options, shape_options
from iobench.fio.language import Expanded, Files, HostFigures, expand
from iobench.fio.runner import fio_parse_only
from iobench.model import Expectation, Override, Suite, SuiteNote, Workload, group
from iobench.suites.hazards import option_hazard
from iobench.suites.jobfile import FIO_SPELLINGS, REPORTED, read_job_file
from iobench.suites.jobfile import SUFFIXES as JOB_FILE_SUFFIXES
from iobench.suites.options import (
    ALIASES,
    BUILTIN_DEFAULTS,
    CORE_KEYS,
    DEPRECATED,
    DOCS,
    MAX_BUFFER_BYTES,
    MAX_NUMJOBS,
    MAX_RAMP_S,
    MAX_RUNTIME_S,
    MAX_SIZE,
    MAX_STRING,
    MIXED_MODES,
    NAME_RULE,
    NO_OPS,
    OPTION_KEYS,
    REQUIRED,
    TOP_KEYS,
    WHY_RAMP,
    WHY_RUNTIME,
    WHY_SIZE,
    WORKLOAD_KEYS,
    InvalidValue,
    PerDirection,
    SizeShare,
    bssplit_largest,
    fio_text,
    refusal,
    say_seconds,
    show_key,
    show_value,
    unwritten,
    valid_name,
    zoned_abs_bytes,
)
from iobench.suites.userfile import MAX_FILE_BYTES, TOO_BIG, exists, read_suite_file
from iobench.units import format_bytes, format_size_short, listed, non_ascii_digit, printable, shown

DEFAULT_SUITE = "quick"
_PACKAGE = "iobench.suites"

# --- where keys are: tomllib gives no positions, so find them in the text -------------------

# ("top", 0), ("defaults", 0), ("workload", n), ("job", k): the k-th [[workload.job]] of the
# file (a part of a group), ("sub", 0)
Section = tuple[str, int]
# No two neighbouring parts of a pattern match the same characters, so a long line cannot
# make them backtrack (the class after the brackets holds the spaces).
_HEADER_RE = re.compile(r"^\s*(\[\[?)([A-Za-z0-9_.\-\"' ]+)\]\]?\s*(?:#.*)?$")
_KEY_RE = re.compile(r"""^\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*[.=]""")


class _Lines:
    """Line numbers of keys and table headers in a suite file's text."""

    def __init__(self, text: str) -> None:
        self._keys: dict[tuple[Section, str], int] = {}
        self._headers: dict[Section, int] = {}
        section: Section = ("top", 0)
        workloads = -1
        jobs = -1  # [[workload.job]] tables, counted over the whole file
        in_string: str | None = None
        for lineno, line in enumerate(text.splitlines(), start=1):
            if in_string is not None:
                if line.count(in_string) % 2 == 1:
                    in_string = None
                continue
            header = _HEADER_RE.match(line)
            if header:
                parts = [p.strip().strip("\"'") for p in header.group(2).split(".")]
                double = header.group(1) == "[["
                if parts == ["workload"] and double:
                    workloads += 1
                    section = ("workload", workloads)
                    self._headers[section] = lineno
                elif parts == ["workload", "job"] and double and workloads >= 0:
                    jobs += 1
                    section = ("job", jobs)
                    self._headers[section] = lineno
                elif parts == ["defaults"] and not double:
                    section = ("defaults", 0)
                    self._headers[section] = lineno
                else:
                    parent: Section = ("top", 0)
                    if len(parts) > 1 and parts[0] == "workload" and workloads >= 0:
                        parent, parts = ("workload", workloads), parts[1:]
                    elif len(parts) > 1 and parts[0] == "defaults":
                        parent, parts = ("defaults", 0), parts[1:]
                    self._keys.setdefault((parent, parts[0]), lineno)
                    section = ("sub", 0)
                continue
            key = _KEY_RE.match(line)
            if key:
                name = next(g for g in key.groups() if g is not None)
                self._keys.setdefault((section, name), lineno)
            for delimiter in ('"""', "'''"):
                if line.count(delimiter) % 2 == 1:
                    in_string = delimiter
                    break

    def key(self, section: Section, key: str) -> int | None:
        """The line of ``key`` in ``section``, else the section's header line (or, for an
        inline table such as ``defaults = {...}``, the line of the key that holds it)."""
        return (
            self._keys.get((section, key))
            or self._headers.get(section)
            or self._keys.get((("top", 0), section[0]))
        )

    def header(self, section: Section) -> int | None:
        return self._headers.get(section)

    def spelling(self, section: Section, key: str) -> str:
        """The key as the file writes it (a TOML key is always written as it is read)."""
        return key


class LineIndex(Protocol):
    """Where a suite file says things: ``_Lines`` for TOML, ``jobfile.JobLines`` for a
    fio job file (its [global] sections are ("defaults", k), its jobs ("workload", i))."""

    def key(self, section: Section, key: str) -> int | None: ...

    def header(self, section: Section) -> int | None: ...

    def spelling(self, section: Section, key: str) -> str: ...


@dataclass(frozen=True)
class Dialect:
    """How the builder's messages name the parts of a suite file."""

    workload: str  # what a workload is called: 'workload "x": ', 'job #3: '
    key: str  # what a key is called
    no_workloads: str  # how to add one
    missing: str  # where a required key may be set
    suggestions: tuple[str, ...]  # the keys an unknown key is compared with

    def named(self, name: str) -> str:
        return f'{self.workload} "{name}": ' if self.workload == "workload" else f"[{name}]: "

    def part(self, group: str, name: str) -> str:
        """How a part of a group is named: by its own section in a job file, as a job of
        its workload in TOML (``group``: how the workload is named)."""
        return self.named(name) if self.workload != "workload" else f'{group[:-2]}, job "{name}": '


TOML = Dialect(
    workload="workload",
    key="key",
    no_workloads="add at least one [[workload]] table",
    missing="in the workload or in [defaults]",
    suggestions=WORKLOAD_KEYS,
)
JOB_FILE = Dialect(
    workload="job",
    key="option",
    no_workloads="add a job section: [NAME] followed by its options",
    missing="in the job or in [global]",
    suggestions=FIO_SPELLINGS,
)


@dataclass(frozen=True)
class Scopes:
    """A job file's [global] sections (``data["defaults"]``, a list of tables) and, for
    each job (a workload, or a part of a group), how many of them come before it and so
    apply to it."""

    labels: tuple[str, ...]  # each [global] section's name, as a message's prefix
    # per workload ("workload", i) or part of a group ("job", k): how many [global]
    # sections apply to it
    applies: Mapping[Section, int]


# --- building a suite ------------------------------------------------------------------------

# (typed value, line, the value as the file wrote it, for messages)
_ParsedValue = tuple[object, int | None, str]
_Parsed = dict[str, _ParsedValue | None]  # None: the key is there but wrong (and reported)


def _largest(bs: object) -> int:
    """A block size, or the largest of one a direction."""
    if isinstance(bs, PerDirection):
        return max(int(part) for part in bs.split(","))
    assert isinstance(bs, int)
    return bs


def _default_size() -> int:
    size = BUILTIN_DEFAULTS["size"]
    assert isinstance(size, int)
    return size


def _value(good: Mapping[str, _ParsedValue], key: str) -> object:
    """A workload's value: its own or [defaults]' (``good``), else iobench's default."""
    return good[key][0] if key in good else BUILTIN_DEFAULTS[key]


class _FioJob(NamedTuple):
    """A job fio runs (a workload, or a part of a group), the sections it was written in
    (its own first, then its group's) and how a problem names it."""

    job: Workload
    sections: tuple[Section, ...]
    where: str


# fio runs (``--parse-only``, about 0.15 s of CPU each: fio calibrates its clock at every
# start) to ask about names fio's help does not list
MAX_FIO_ASKS = 32


class _Builder:
    """Checks a parsed suite file and builds its Suite.

    Every problem is recorded (one per key or rule, with its line) and all are reported
    together in one SuiteError. A check that depends on a value already found wrong is
    skipped, so one mistake is reported once, not again as the cascade it causes.
    """

    def __init__(
        self,
        data: Mapping[str, object],
        path: str,
        lines: LineIndex,
        source: str,
        *,
        dialect: Dialect = TOML,
        scopes: Scopes | None = None,
        problems: Sequence[SuiteProblem] = (),
        catalogue: Catalogue | None = None,
        placed: Callable[[Sequence[SuiteProblem]], list[SuiteProblem]] | None = None,
    ) -> None:
        self.placed = placed
        self.data = data
        self.catalogue = catalogue or current_catalogue()
        # fio options beyond iobench's typed ones, passed through as fio reads them:
        # the table's key -> (fio's name for it, the engine it belongs to, or None)
        self.passed: dict[str, tuple[str, str | None]] = {}
        self.asked: dict[str, bool] = {}  # fio_reads: what fio said of each unlisted name
        self.path = path
        self.lines = lines
        self.source = source
        self.dialect = dialect
        self.scopes = scopes
        self.problems: list[SuiteProblem] = list(problems)  # found before (a job file's)

    def fail(self, message: str, line: int | None, hint: str | None = None) -> None:
        self.problems.append(SuiteProblem(message, line, hint))

    def build(self) -> Suite:
        suite = self.suite()
        if suite is None:
            assert self.problems, "a suite file refused without a reason"
            # In file order; problems of the whole file (no line) first.
            found = self.placed(self.problems) if self.placed else self.problems
            found = list(dict.fromkeys(found))
            raise SuiteError.of(
                self.path,
                sorted(found, key=lambda p: (p.file not in (None, self.path), p.line or 0)),
            )
        return suite

    def suite(self) -> Suite | None:
        """The suite, or None when a problem was recorded."""
        suite_name, description, indicative, reported = self.head()
        defaults, defaults_known = self.defaults()
        workloads, complete = self.workloads(defaults, defaults_known=defaults_known)
        expectations = self.expectations(suite_name, workloads, complete, reported)
        if (
            not self.problems and self.source != "builtin"
        ):  # a built-in suite is checked by its tests
            self.fio_check(workloads)
        if (
            self.problems
            or suite_name is None
            or not isinstance(description, str)
            or not isinstance(indicative, bool)
        ):
            return None
        return Suite(
            name=suite_name,
            description=" ".join(description.split()),
            workloads=tuple(workloads),
            source=self.source,
            indicative=indicative,
            expectations=expectations,
            notes=unmeasured_notes(workloads),
        )

    def fio_check(self, workloads: Sequence[Workload]) -> None:
        """fio's own checks (``fio --parse-only``) of every job as iobench will write it:
        what fio refuses is reported at the line of the option it names."""
        fio = self.catalogue.fio
        jobs = self.jobs_of(workloads)
        pending = list(range(len(jobs)))
        for _ in range(SuiteError.SHOWN):
            if fio is None or not pending:
                return
            text = "\n".join(line for i in pending for line in _check_section(i, jobs[i].job))
            rc, said = fio_parse_only(fio, text)
            if rc == 0:
                return
            dropped = re.search(r"job w(\d+) dropped", said)
            if dropped is None or int(dropped.group(1)) not in pending:
                lines = [line.strip() for line in said.splitlines() if line.startswith("fio: ")]
                if lines:  # else not an fio that says why (checked again when it runs)
                    self.fail(f"fio {self.catalogue.version} refuses the suite: {lines[0]}", None)
                return
            index = int(dropped.group(1))
            pending.remove(index)
            self.fio_refused(jobs[index], said)

    def jobs_of(self, workloads: Sequence[Workload]) -> list[_FioJob]:
        """Every fio job of ``workloads`` (a group's parts, else the workload)."""
        out: list[_FioJob] = []
        for i, w in enumerate(workloads):
            named = self.dialect.named(w.name)
            if not w.parts:
                out.append(_FioJob(w, (("workload", i),), named))
                continue
            first = self.job_index(i)
            out += [
                _FioJob(p, (("job", first + k), ("workload", i)), self.dialect.part(named, p.name))
                for k, p in enumerate(w.parts)
            ]
        return out

    def fio_refused(self, job: _FioJob, said: str) -> None:
        """What fio said of ``job``, at the line of the option it names."""
        section = job.sections[0]
        found = re.search(r"(?:failed parsing |Bad option <)([A-Za-z0-9_.-]+)(?:=([^>\n]*))?", said)
        key = found.group(1) if found else None
        line = self.option_line(job.sections, key) if key else None
        what = (
            f"{key}={show_value(found.group(2) or '')}" if found and found.group(2) else key
        ) or "the job"
        self.fail(
            f"{job.where}fio {self.catalogue.version} refuses {what} (fio --parse-only)",
            line or self.lines.header(section),
            "`fio --cmdhelp=OPTION` shows what fio accepts",
        )

    def option_line(self, written: Sequence[Section], option: str) -> int | None:
        """The line of the option fio calls ``option`` in a job ``written`` in these sections
        (its own first), or in the [defaults] or [global] sections it takes from."""
        sections = list(written)
        if self.scopes is not None:
            applies = self.scopes.applies.get(written[0], 0)
            sections += [("defaults", k) for k in range(applies - 1, -1, -1)]
        else:
            sections.append(("defaults", 0))
        for where in sections:
            for key in (option, *(k for k, (o, _) in self.passed.items() if o == option)):
                line = self.lines.key(where, key)
                if line is not None and line != self.lines.header(where):
                    return line
        return None

    def head(self) -> tuple[str | None, object, object, set[str]]:
        """The suite's name, description and indicative flag, checked, and the top-level
        keys whose problem is recorded already. A file without a name is named after the
        file; one without a description has none."""
        top: Section = ("top", 0)
        reported: set[str] = set()
        for key, value in self.data.items():
            if key in ("defaults", "workload"):  # tables are checked key by key below
                continue
            line = self.lines.key(top, key)
            if not self.screen(key, value, "", line):
                reported.add(key)
            elif key not in TOP_KEYS:
                self.unknown(key, TOP_KEYS, "", line, top_level=True)
        name = self.data.get("name", name_from_path(self.path))
        if "name" not in reported and not (valid_name(name)):
            self.fail(
                f"name must be {NAME_RULE}; not {show_value(name)}", self.lines.key(top, "name")
            )
        description = self.data.get("description", "")
        if "description" in self.data and not (
            "description" in reported or (isinstance(description, str) and description.strip())
        ):
            self.fail(
                f"description must be a non-empty string, not {show_value(description)}",
                self.lines.key(top, "description"),
            )
        indicative = self.data.get("indicative", False)
        if not isinstance(indicative, bool):
            self.fail(
                f"indicative must be true or false, not {show_value(indicative)}",
                self.lines.key(top, "indicative"),
            )
        suite_name = name if valid_name(name) else None
        return suite_name, description, indicative, reported

    def defaults(self) -> tuple[Callable[[Section], _Parsed], bool]:
        """Each workload's (or part's) shared values, by its section, and whether they are
        known: TOML's [defaults] for every workload; a job file's [global] sections before
        the job."""
        if self.scopes is not None:
            tables = self.data.get("defaults")
            assert isinstance(tables, list)
            parsed = [
                self.section(table, ("defaults", k), f"[{label}]: ")
                for k, (table, label) in enumerate(zip(tables, self.scopes.labels, strict=True))
            ]
            applies = self.scopes.applies

            def scoped(section: Section) -> _Parsed:
                merged: _Parsed = {}
                for table in parsed[: applies.get(section, 0)]:
                    merged.update(table)
                return merged

            return scoped, True
        top: Section = ("top", 0)
        defaults_table = self.data.get("defaults", {})
        defaults_known = isinstance(defaults_table, dict)
        if not isinstance(defaults_table, dict):
            self.fail(
                f"defaults must be a table ([defaults] followed by key = value lines), "
                f"not {show_value(defaults_table)}",
                self.lines.key(top, "defaults"),
            )
            defaults_table = {}
        defaults = self.section(defaults_table, ("defaults", 0), "[defaults]: ")
        return (lambda _index: defaults), defaults_known

    def workloads(
        self, defaults: Callable[[Section], _Parsed], *, defaults_known: bool
    ) -> tuple[list[Workload], bool]:
        """The workloads that are right, and whether that is all of them."""
        tables = self.data.get("workload")
        if tables is None:
            self.fail(
                "no workloads: add at least one [[workload]] table with name, rw, bs, iodepth "
                "and numjobs",
                None,
            )
            return [], False
        if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
            self.fail(
                "workload must be a list of tables: start each workload with [[workload]] "
                "(double brackets)",
                self.lines.key(("top", 0), "workload"),
            )
            return [], False
        if not tables:
            self.fail(f"no workloads: {self.dialect.no_workloads}", None)
            return [], False
        workloads: list[Workload] = []
        complete = True
        seen: dict[str, int | None] = {}
        for index, table in enumerate(tables):
            workload = self.workload(index, table, defaults, defaults_known=defaults_known)
            if workload is None:
                complete = False
            else:
                workloads.append(workload)
            self.unique(table.get("name"), ("workload", index), seen, "a suite")
        return workloads, complete

    def unique(
        self,
        name: object,
        section: Section,
        seen: dict[str, int | None],
        within: str,
        group: str | None = None,
    ) -> None:
        """Record ``name`` (of a workload, or of a part within the ``group`` named so) as
        seen; a name seen before is a problem."""
        if not valid_name(name) or name.lower() == "global":
            return  # reported by name_of()
        name_line = self.lines.key(section, "name")
        if name in seen:
            first = seen[name]
            where = f" at line {first}" if first else ""
            named = self.dialect.named(name) if group is None else self.dialect.part(group, name)
            what = self.dialect.workload if group is None or self.dialect is not TOML else "job"
            self.fail(
                f"{named}the name is already used by the {what}{where}; names must be "
                f"unique within {within}",
                name_line,
            )
        else:
            seen[name] = name_line

    def expectations(
        self,
        suite_name: str | None,
        workloads: list[Workload],
        complete: bool,
        reported: set[str],
    ) -> tuple[Expectation, ...]:
        """``expect = ["rand-r.read.iops>=5000", ...]``: parsed and checked against the
        suite's workloads, each error with the file and line.

        An expectation is checked against the workloads only where they are known: against
        all of them when every workload is right, else only against the one it names, if
        that one is right (a workload with a mistake would make it look wrong too).
        """
        from iobench.expect import check_against_suite, parse_expectation

        texts = self.data.get("expect", [])
        line = self.lines.key(("top", 0), "expect")
        if "expect" in reported:
            return ()
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self.fail(
                f"expect must be a list of strings, not {show_value(texts)}",
                line,
                'e.g. expect = ["rand-r.read.iops>=5000", "lat-read.read.p99<5ms"]',
            )
            return ()
        whole = Suite(suite_name or "", "", tuple(workloads), self.source)
        right = {w.name: w for w in workloads}
        out = []
        for text in texts:
            bad = non_ascii_digit(text)
            if bad is not None:  # workload names are ASCII: a number holds it
                self.fail(
                    f"expect {shown(text)}: {bad} is not an ASCII digit; write numbers with 0-9",
                    line,
                    'e.g. expect = ["rand-r.read.iops>=5000", "lat-read.read.p99<5ms"]',
                )
                continue
            try:
                e = parse_expectation(text, "expect", source="suite")
                if complete and suite_name is not None:
                    check_against_suite([e], whole, "expect")
                elif e.workload in right:
                    one = dataclasses.replace(whole, workloads=(right[e.workload],))
                    check_against_suite([e], one, "expect")
            except UserError as err:
                self.fail(err.message, line, err.hint)
                continue
            out.append(e)
        return tuple(out)

    def screen(self, key: str, value: object, where: str, line: int | None) -> bool:
        """Refuse ``${`` and over-long strings anywhere in a value, nested ones too; True
        when the value is clean. Walks without recursion: TOML can nest tables deeply."""
        stack: list[tuple[str, object]] = [(key, value)]
        while stack:
            name, item = stack.pop()
            if isinstance(item, str) and "${" in item:
                self.fail(
                    f'{where}{show_key(name)}: "${{" is refused: fio would replace ${{VAR}} '
                    "with an environment variable, which can leak secrets into stored results "
                    f"({show_value(item)})",
                    line,
                )
                return False
            if isinstance(item, str) and len(item) > MAX_STRING:
                self.fail(
                    f"{where}{show_key(name)}: a string of {len(item)} characters is too long "
                    f"(at most {MAX_STRING})",
                    line,
                )
                return False
            if isinstance(item, list):
                stack.extend((name, sub) for sub in reversed(item))
            elif isinstance(item, dict):
                stack.extend((f"{name}.{k}", sub) for k, sub in reversed(item.items()))
        return True

    def unknown(
        self,
        key: str,
        allowed: tuple[str, ...],
        where: str,
        line: int | None,
        *,
        top_level: bool = False,
    ) -> None:
        reason = refusal(key)
        if reason is not None:
            self.fail(f"{where}{show_key(key)} is refused: {reason}", line, hint=f"See {DOCS}.")
        elif top_level and key in WORKLOAD_KEYS:
            self.fail(
                f"{key} is a workload key: put it in [defaults] (for every workload) or in a "
                "[[workload]] table",
                line,
            )
        elif key in ALIASES:  # a job file's aliases are fio's own, read before
            self.fail(f'{where}unknown key "{key}": iobench calls it {ALIASES[key]}', line)
        elif self.catalogue.canonical(key) in (*CORE_KEYS, *OPTION_KEYS):
            ours = self.catalogue.canonical(key)
            self.fail(f'{where}unknown key "{key}": fio calls it {ours}, and so does iobench', line)
        else:
            # Suggestions cost time; a hostile file can hold tens of thousands of keys, and
            # only the first few problems are shown.
            suggest = len(key) <= 64 and len(self.problems) < 10 * SuiteError.SHOWN
            close = []
            if suggest:
                pool = [*allowed, *([] if top_level else self.catalogue.names_like(key))]
                close = difflib.get_close_matches(key, pool, n=1, cutoff=0.75)
            suggestion = f'; did you mean "{close[0]}"?' if close else ""
            noun = self.dialect.key
            fio = "" if top_level else f": fio {self.catalogue.version} has no such option"
            self.fail(f'{where}unknown {noun} "{show_key(key)}"{fio}{suggestion}', line)

    def passthrough(
        self, key: str, value: object, section: Section, where: str, line: int | None
    ) -> _ParsedValue | None:
        """A fio option beyond iobench's typed ones: passed to fio as fio reads it when this
        fio has it (or one of its engines does) and it is in no hazard class (suites.hazards);
        None, with the reason recorded, otherwise."""
        spelled = self.lines.spelling(section, key)
        if value is not None and not isinstance(value, str | int | float | bool):
            if self.catalogue.canonical(key) is None:
                self.unknown(key, self.dialect.suggestions, where, line)
            else:
                self.fail(f"{where}{show_key(spelled)} must be a string, a number or true/false, "
                          f"not {show_value(value)}", line)  # fmt: skip
            return None
        if fio_text(value) in NO_OPS.get(key, ()) or key in DEPRECATED:
            return None  # changes nothing: accepted, and left out
        reason = refusal(key) if self.dialect is TOML else None
        if reason is not None:
            self.fail(f"{where}{show_key(spelled)} is refused: {reason}", line, f"See {DOCS}.")
            return None
        option = self.catalogue.canonical(key)
        engine = None if option else self.catalogue.engine_option(key, self.catalogue.engines)
        if option is None and engine is None and self.fio_reads(key, value):
            option = key  # fio's parser takes it (fio 3.33 reads threads=1 as thread)
        ours = option in ALIASES or option in CORE_KEYS or option in OPTION_KEYS
        if key in ALIASES or ours or (option is None and engine is None):
            allowed = self.dialect.suggestions
            if section[0] == "defaults":
                allowed = tuple(k for k in allowed if k != "name")
            self.unknown(key, allowed, where, line)
            return None
        text = fio_text(value)
        hazard = option_hazard(option or key, text)
        if hazard is not None:
            self.fail(f"{where}{hazard.say(show_key(spelled))}", line, f"See {DOCS}.")
            return None
        self.passed[key] = (option or key, engine)
        return (text if text is not None else "1", line, show_value(value))

    def fio_reads(self, key: str, value: object) -> bool:
        """Whether fio's job-file parser takes an option its help does not list (it matches
        some names its help does not show); asked of fio itself, for plain names only."""
        fio = self.catalogue.fio
        text = fio_text(value)
        if fio is None or self.problems or not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", key):
            return False  # (a file refused anyway runs no fio at all)
        if text is not None and not re.fullmatch(r"[A-Za-z0-9_.:/,%+-]{0,256}", text):
            return False
        job = f"[j]\n{key}" + (f"={text}" if text is not None else "") + "\n"
        if job not in self.asked:
            if len(self.asked) >= MAX_FIO_ASKS:
                return False  # a file of hundreds of unknown names: no more fio runs
            rc, said = fio_parse_only(fio, job)
            self.asked[job] = rc == 0 and "Bad option" not in said
        return self.asked[job]

    def section(self, table: Mapping[str, object], section: Section, where: str) -> _Parsed:
        """Check every key of a [defaults] or [[workload]] table, in file order; a key whose
        value is wrong maps to None (so no check or default hides that it is there)."""
        parsed: _Parsed = {}
        for key, value in table.items():
            if key == "name" and section[0] != "defaults":
                continue  # a workload's name is checked by workload()
            line = self.lines.key(section, key)
            if value is REPORTED or not self.screen(key, value, where, line):
                parsed[key] = None
                continue
            if key == "name":
                self.fail(f"{where}name belongs in each [[workload]], not in [defaults]", line)
                continue
            parser = CORE_KEYS.get(key) or OPTION_KEYS.get(key)
            if parser is None:
                passed = self.passthrough(key, value, section, where, line)
                if passed is not None:
                    parsed[key] = passed
                continue
            try:
                typed = parser(self.lines.spelling(section, key), value)
                parsed[key] = (unwritten(typed), line, show_value(value))
            except InvalidValue as e:
                self.fail(f"{where}{e}", line)
                parsed[key] = None
        return parsed

    def workload(
        self,
        index: int,
        table: Mapping[str, object],
        defaults: Callable[[Section], _Parsed],
        *,
        defaults_known: bool,
    ) -> Workload | None:
        """The workload (a group when the table has [[workload.job]] tables), or None when
        a problem was recorded (or [defaults] has one)."""
        section: Section = ("workload", index)
        before = len(self.problems)
        label = f"{self.dialect.workload} #{index + 1}: "
        if self.dialect is JOB_FILE and isinstance(table.get("name"), str):
            label = f"[{printable(str(table['name'])[:64])}]: "  # the section as written
        name = self.name_of(table, section, label, "randread-4k")
        where = self.dialect.named(name) if name is not None else label
        if "job" in table:
            return self.group(index, table, name, where, defaults, defaults_known=defaults_known)
        return self.one(
            name, defaults(section), table, section, where, before, defaults_known=defaults_known
        )

    def name_of(
        self, table: Mapping[str, object], section: Section, label: str, example: str
    ) -> str | None:
        """A workload's (or part's) name, checked; None when there is a problem with it."""
        before = len(self.problems)
        header = self.lines.header(section)
        name = table.get("name")
        name_line = self.lines.key(section, "name")
        if name is None:
            self.fail(f'{label}missing name, e.g. name = "{example}"', header)
        elif not self.screen("name", name, label, name_line):
            pass
        elif not valid_name(name):
            self.fail(f"{label}name must be {NAME_RULE}; not {show_value(name)}", name_line)
        elif name.lower() == "global":
            self.fail(
                f'{label}the name "{name}" is fio\'s section for shared options; choose another '
                "name",
                name_line,
            )
        return name if isinstance(name, str) and len(self.problems) == before else None

    def group(
        self,
        index: int,
        table: Mapping[str, object],
        name: str | None,
        where: str,
        defaults: Callable[[Section], _Parsed],
        *,
        defaults_known: bool,
    ) -> Workload | None:
        """A workload of several jobs run together: each [[workload.job]] table a part,
        with the workload's own keys and [defaults] beneath its own, checked as a workload
        of its own is; None when a problem was recorded."""
        section: Section = ("workload", index)
        before = len(self.problems)
        jobs = table["job"]
        if not isinstance(jobs, list) or not all(isinstance(j, dict) for j in jobs) or not jobs:
            self.fail(
                f"{where}job must be a list of tables: start each job of the workload with "
                "[[workload.job]] (double brackets)",
                self.lines.key(section, "job"),
            )
            return None
        shared = self.section({k: v for k, v in table.items() if k != "job"}, section, where)
        if len(jobs) == 1:  # one job: a workload of its own
            job = {k: v for k, v in jobs[0].items() if k != "name"}
            own = self.section(job, ("job", self.job_index(index)), where)
            return self.one(
                name, {**defaults(section), **shared}, {}, section, where, before,
                defaults_known=defaults_known, own=own,
            )  # fmt: skip
        parts: list[Workload | None] = []
        seen: dict[str, int | None] = {}
        for k, job in enumerate(jobs):
            part: Section = ("job", self.job_index(index) + k)
            label = f"{where[:-2]}, job #{k + 1}: "
            part_name = self.name_of(job, part, label, "reader")
            self.unique(job.get("name"), part, seen, "its workload", where)
            if part_name is None:
                parts.append(None)
                continue
            inherited = {**defaults(part), **shared}
            parts.append(
                self.one(
                    part_name, inherited, job, part, self.dialect.part(where, part_name),
                    len(self.problems), defaults_known=defaults_known,
                )
            )  # fmt: skip
        made = [p for p in parts if p is not None]
        if len(self.problems) > before or name is None or len(made) < len(parts):
            return None
        self.check_group(where, made, self.lines.header(section))
        return None if len(self.problems) > before else group(name, made)

    def check_group(self, where: str, parts: Sequence[Workload], line: int | None) -> None:
        """What a group's jobs add up to, as one fio runs them all at once: at most
        MAX_NUMJOBS processes and MAX_BUFFER_BYTES of I/O buffers."""
        jobs = sum(p.numjobs for p in parts)
        buffers = sum(p.bs * p.iodepth * p.numjobs for p in parts)
        if jobs > MAX_NUMJOBS:
            self.fail(
                f"{where}its {len(parts)} jobs run {jobs} fio jobs at once (numjobs added up); "
                f"at most {MAX_NUMJOBS}: each job is a process, more would exhaust the host",
                line,
            )
        elif buffers > MAX_BUFFER_BYTES:
            self.fail(
                f"{where}its {len(parts)} jobs together allocate {format_bytes(buffers)} of "
                f"I/O buffers (bs x iodepth x numjobs added up); at most "
                f"{format_bytes(MAX_BUFFER_BYTES)}",
                line,
            )

    def job_index(self, index: int) -> int:
        """The file-wide index of workload ``index``'s first [[workload.job]] table."""
        tables = self.data.get("workload")
        assert isinstance(tables, list)
        return sum(len(t.get("job") or []) for t in tables[:index] if isinstance(t, dict))

    def one(
        self,
        name: str | None,
        defaults: _Parsed,
        table: Mapping[str, object],
        section: Section,
        where: str,
        before: int,
        *,
        defaults_known: bool,
        own: _Parsed | None = None,
    ) -> Workload | None:
        """One fio job: ``table`` (parsed, or given parsed as ``own``) over ``defaults``,
        checked; None when a problem was recorded since ``before``."""
        header = self.lines.header(section)
        named = name is not None
        if own is None:
            own = self.section({k: v for k, v in table.items() if k != "name"}, section, where)
        merged = {**defaults, **own}
        good = {key: value for key, value in merged.items() if value is not None}
        # A key that is there but wrong is not also missing; nor is one [defaults] may hold
        # when [defaults] itself is wrong.
        missing = [key for key in REQUIRED if key not in merged]
        if missing and defaults_known:
            keys = listed(missing)
            them = "it" if len(missing) == 1 else "them"
            self.fail(f"{where}missing {keys} (set {them} {self.dialect.missing})", header)

        def get(key: str) -> object:
            return _value(good, key)

        def line_of(*keys: str) -> int | None:
            lines = [line for key in keys if key in good and (line := good[key][1])]
            return max(lines, default=None) or header

        if "rwmixread" in good and "rw" in good and get("rw") not in MIXED_MODES:
            del merged["rwmixread"], good["rwmixread"]  # fio ignores it in a pure mode
        self.check_engine(where, section, good, merged)
        if "size" in good or "size" not in merged:  # a wrong size is reported already
            self.check_area(where, good, line_of)
        self.check_buffers(where, good, "bssplit" in merged and "bssplit" not in good, line_of)
        if len(self.problems) > before or missing or len(good) < len(merged) or not named:
            return None
        assert isinstance(name, str)
        return self.make(name, good)

    def check_engine(
        self,
        where: str,
        section: Section,
        good: Mapping[str, _ParsedValue],
        merged: Mapping[str, object],
    ) -> None:
        """The engine is one this fio has, and every engine option is one of its own."""
        if "ioengine" in merged and "ioengine" not in good:
            return  # the engine is refused: its options follow from that, not said again
        engine = str(_value(good, "ioengine"))
        if "ioengine" in good and engine not in self.catalogue.engines:
            self.fail(
                f"{where}ioengine={show_value(engine)} is refused (not in this fio): fio "
                f"{self.catalogue.version} was built without it (`fio --enghelp` lists its "
                f"engines: {', '.join(sorted(self.catalogue.engines))})",
                good["ioengine"][1],
            )
            return
        for key in merged:
            option, owner = self.passed.get(key, (key, None))
            if owner is None or option in self.catalogue.options_of(engine):
                continue
            owners = [
                e for e in sorted(self.catalogue.engines) if option in self.catalogue.options_of(e)
            ]
            self.fail(
                f"{where}{show_key(self.lines.spelling(section, key))} is an option of "
                f"the {listed(owners)} engine{'s' if len(owners) > 1 else ''}; this job's ioengine "
                f"is {show_value(engine)}",
                good[key][1] if key in good else None,
            )

    def check_area(
        self, where: str, good: Mapping[str, _ParsedValue], line_of: Callable[..., int | None]
    ) -> None:
        """The test area (size) holds a block (bs) and the zones of a zoned_abs
        random_distribution: fio places no I/O beyond it."""
        size = _value(good, "size")
        if isinstance(size, SizeShare):
            return  # a share of whatever the target is: checked where it runs
        assert isinstance(size, int)

        def said(key: str, value: int) -> str:
            written = good[key][2] if key in good else None
            shown = f"{value} bytes"
            return shown if written in (None, str(value)) else f"{written}, {shown}"

        if "bs" in good:
            bs = _largest(_value(good, "bs"))
            if size < bs:
                self.fail(
                    f"{where}size ({said('size', size)}) must be at least bs ({said('bs', bs)})",
                    line_of("size") if "size" in good else line_of("bs"),
                )
        if "random_distribution" in good:
            zones = zoned_abs_bytes(str(good["random_distribution"][0]))
            if zones is not None and zones > size:
                self.fail(
                    f"{where}random_distribution's zones cover {zones} bytes "
                    f"({format_bytes(zones)}), more than the test area, size "
                    f'({said("size", size)}): fio does no I/O beyond it (it prints "zoned_abs '
                    'sizes exceed file size" and does the I/O elsewhere)',
                    line_of("random_distribution", "size"),
                    "make the zones add up to the size at most, or raise the size",
                )

    def check_buffers(
        self,
        where: str,
        good: Mapping[str, _ParsedValue],
        bssplit_wrong: bool,
        line_of: Callable[..., int | None],
    ) -> None:
        """bs x iodepth x numjobs: the I/O buffer memory fio allocates for the workload."""
        if bssplit_wrong or not all(key in good for key in ("bs", "iodepth", "numjobs")):
            return
        bs = _largest(good["bs"][0])
        iodepth, numjobs = (good[key][0] for key in ("iodepth", "numjobs"))
        assert isinstance(iodepth, int) and isinstance(numjobs, int)
        block, label, keys = bs, "bs", ("bs", "iodepth", "numjobs")
        if "bssplit" in good and bssplit_largest(str(good["bssplit"][0])) > bs:
            block = bssplit_largest(str(good["bssplit"][0]))
            label, keys = "the largest bssplit size", ("bssplit", "iodepth", "numjobs")
        total = block * iodepth * numjobs
        if total > MAX_BUFFER_BYTES:
            self.fail(
                f"{where}{label} x iodepth x numjobs is {format_size_short(block)} x {iodepth} "
                f"x {numjobs} = {format_bytes(total)} of I/O buffers, which fio allocates "
                f"up front; at most {format_bytes(MAX_BUFFER_BYTES)}",
                line_of(*keys),
            )

    def make(self, name: str, good: Mapping[str, _ParsedValue]) -> Workload:
        def get(key: str) -> object:
            return _value(good, key)

        def get_int(key: str) -> int:
            value = get(key)
            assert isinstance(value, int)
            return value

        def get_float(key: str) -> float:
            value = get(key)
            assert isinstance(value, int | float)
            return float(value)

        options: list[tuple[str, str]] = []
        for key, (value, _line, _written) in good.items():
            if key in OPTION_KEYS:
                options.append((key, str(value)))
            elif key in self.passed:
                options.append((self.passed[key][0], str(value)))
            elif key == "rw" and ":" in str(value):  # fio's modifier: the mode is the field
                options.append(("rw", str(value)))
            elif key == "bs" and isinstance(value, PerDirection):  # the read's is the field
                options.append(("bs", str(value)))
            elif key == "time_based" and value is False:
                # Not a Workload field: iobench's job builder reads it from the options.
                options.append(("time_based", "0"))
        return Workload(
            name=name,
            rw=str(get("rw")).partition(":")[0],
            bs=block.first if isinstance(block := get("bs"), PerDirection) else get_int("bs"),
            iodepth=get_int("iodepth"),
            numjobs=get_int("numjobs"),
            ioengine=str(get("ioengine")),
            direct=get("direct") is True,
            runtime_s=get_float("runtime"),
            ramp_s=get_float("ramp"),
            size=get_int("size") if not isinstance(get("size"), SizeShare) else _default_size(),
            rwmixread=get_int("rwmixread") if "rwmixread" in good else None,
            options=tuple(options),
            size_share=float(share) if isinstance(share := get("size"), SizeShare) else None,
        )


# --- public API --------------------------------------------------------------------------


def parse_suite(text: str, path: str, source: str) -> Suite:
    """Validate suite TOML ``text``; errors name ``path`` and the line of the offending key.

    Every mistake in the file is reported at once, in one SuiteError; only TOML that
    cannot be read at all stops at its first error.
    """
    if len(text) > MAX_FILE_BYTES:
        raise SuiteError(path, TOO_BIG)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        message = str(e)
        m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
        line = int(m.group(1)) if m else None
        if m:
            message = f"{message[: m.start()]} (column {m.group(2)})"
        raise SuiteError(path, f"not valid TOML: {message}", line=line) from None
    except RecursionError:
        raise SuiteError(
            path,
            "arrays or inline tables are nested too deeply to read; no key of a suite file "
            "takes more than an array of strings",
            line=_deep_nesting_line(text),
        ) from None
    except ValueError as e:  # tomllib lets int()'s limit through (4300 digits)
        long = re.search(r"[0-9_]{4300,}", text)
        if long is None:
            raise SuiteError(path, f"not valid TOML: {e}") from None
        raise SuiteError(
            path,
            "a number has thousands of digits, too many to read",
            line=text.count("\n", 0, long.start()) + 1,
        ) from None
    return _Builder(data, path, _Lines(text), source).build()


def parse_job_file(
    text: str,
    path: str,
    source: str,
    *,
    environ: Mapping[str, str] | None = None,
    host: HostFigures | None = None,
) -> Suite:
    """Validate a fio job file's ``text`` (its includes put in place and its variables
    replaced as fio does it: iobench.fio.language; then suites.jobfile reads it) with the
    checks of TOML suites; errors name the file (``path``, or the included one) and the
    line, every mistake at once."""
    if len(text) > MAX_FILE_BYTES:
        raise SuiteError(path, TOO_BIG)
    expanded = expand(
        text,
        path,
        Files(read=read_suite_file, exists=exists),
        os.environ if environ is None else environ,
        host or HostFigures.here(),
    )
    job_file = read_job_file(expanded.text)
    suite = _Builder(
        job_file.data,
        path,
        job_file.lines,
        source,
        dialect=JOB_FILE,
        scopes=Scopes(job_file.labels, job_file.applies),
        problems=[*expanded.problems, *job_file.problems],
        placed=lambda problems: _placed(problems, expanded, path),
    ).build()
    notes = (*job_file.notes, *_expansion_notes(expanded), *suite.notes)
    variables = tuple(dict.fromkeys((r.written, r.value, r.source) for r in expanded.replaced))
    includes = tuple(dict.fromkeys(expanded.includes))
    return dataclasses.replace(suite, notes=notes, variables=variables, includes=includes)


def _check_section(index: int, w: Workload) -> list[str]:
    """Workload ``w`` as fio --parse-only reads it (the shape and options iobench writes)."""
    return [f"[w{index}]", *run_options(w, w.area(None)), *shape_options(w)]


# fio options that switch a measurement off: the user's choice, said once.
_LATENCY_OFF = ("gtod_reduce", "disable_lat", "disable_clat", "disable_slat")
_BW_OFF = ("disable_bw_measurement",)


def unmeasured_notes(workloads: Sequence[Workload]) -> tuple[SuiteNote, ...]:
    """A note for the workloads that ask fio not to measure latency (or bandwidth samples):
    what they lose, once."""
    notes = []
    for keys, what in (
        (_LATENCY_OFF, "latency, which is shown as not measured (never as 0); IOPS and "
         "bandwidth are fio's"),
        (_BW_OFF, "per-second bandwidth samples (fio's bandwidth figure is still there)"),
    ):  # fmt: skip
        found = [
            f"{w.name if j is w else f'{w.name}/{j.name}'} ({key}={value})"
            for w in workloads
            for j in w.jobs
            for key, value in j.options
            if key in keys and value not in ("0", "false")
        ]
        if found:
            notes.append(
                SuiteNote(
                    f"{listed(found, most=5)} ask fio not to measure {what}",
                    "nothing to do if that is what you meant; leave the option out to measure it",
                )
            )
    return tuple(notes)


def _placed(problems: Sequence[SuiteProblem], expanded: Expanded, path: str) -> list[SuiteProblem]:
    """Problems at lines of the expanded text, placed where those lines were written (an
    included file's lines in that file)."""
    out = []
    for p in problems:
        if p.file is not None:
            out.append(p)
            continue
        where = expanded.origin(p.line)
        if where is None or where.file == path:
            out.append(dataclasses.replace(p, line=where.line if where else p.line))
        else:
            out.append(dataclasses.replace(p, line=where.line, file=where.file))
    return out


def _expansion_notes(expanded: Expanded) -> tuple[SuiteNote, ...]:
    """What was put in the job file: its includes, and each variable with its value."""
    notes = []
    if expanded.includes:
        notes.append(
            SuiteNote(
                f"the job file includes {listed(list(dict.fromkeys(expanded.includes)))}, "
                "read as fio reads them",
                "nothing to do",
            )
        )
    said = list(dict.fromkeys(f"{r.written} = {r.value} ({r.source})" for r in expanded.replaced))
    if said:
        notes.append(
            SuiteNote(
                f"variables in the job file, as they were replaced for this run: {listed(said)}",
                "nothing to do: the workloads hold these values",
            )
        )
    return tuple(notes)


def name_from_path(path: str) -> str:
    """A suite's name when its file gives none: the file's name without its suffix, made
    to fit NAME_RULE (``my test.fio`` -> ``my-test``)."""
    stem = Path(path.removeprefix("builtin:")).stem
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).lstrip("._-")[:64].rstrip("-")
    return name or "suite"


def is_job_file(path: str, text: str) -> bool:
    """A fio job file rather than TOML: by its suffix (.fio, .job, .ini; .toml is TOML),
    else by its first line that is not blank or a # comment: a ; comment, or a [section]
    that is neither [[table]] nor TOML's [defaults]."""
    suffix = Path(path).suffix.lower()
    if suffix in JOB_FILE_SUFFIXES or suffix == ".toml":
        return suffix != ".toml"
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line.startswith(";") or (
                line.startswith("[") and not line.startswith("[[") and line != "[defaults]"
            )
    return False


_DEEP = 100  # levels: no suite file nests more than 3; tomllib gives up at a few hundred


def _deep_nesting_line(text: str) -> int | None:
    """The line where arrays and inline tables first nest more than _DEEP levels deep,
    skipping strings and comments (for the message only: if unsure, no line)."""
    depth = 0
    quote = ""  # the string being skipped: ", ', """ or '''
    i, line = 0, 1
    while i < len(text):
        c = text[i]
        if c == "\n":
            line += 1
            if len(quote) == 1:  # a one-line string cannot go on
                quote = ""
        elif quote:
            if c == "\\" and quote[0] == '"':  # an escape: skip the next character
                i += 1
                line += text.startswith("\n", i)
            elif text.startswith(quote, i):
                i += len(quote) - 1
                quote = ""
        elif c == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif c in "\"'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            i += len(quote) - 1
        elif c in "[{":
            depth += 1
            if depth > _DEEP:
                return line
        elif c in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return None


def builtin_names() -> list[str]:
    """The names of the suites shipped with iobench, sorted."""
    files = resources.files(_PACKAGE)
    return sorted(f.name.removesuffix(".toml") for f in files.iterdir() if f.name.endswith(".toml"))


def load_builtin(name: str) -> Suite:
    """A built-in suite by name (see :func:`builtin_names`)."""
    if name not in builtin_names():
        raise UserError(
            f'unknown built-in suite "{name}"; built-in suites: {", ".join(builtin_names())}'
        )
    resource = resources.files(_PACKAGE) / f"{name}.toml"
    return parse_suite(resource.read_text(encoding="utf-8"), f"builtin:{name}.toml", "builtin")


def load_suite_file(path: str | Path) -> Suite:
    """A user's suite file; ``Suite.source`` is the path as given."""
    shown = str(path)
    text = read_suite_file(shown)
    if is_job_file(shown, text):
        return parse_job_file(text, shown, shown)
    return parse_suite(text, shown, shown)


def load_suite(name_or_path: str) -> Suite:
    """A built-in suite by name, or a suite file by path: anything there by that name
    (whatever it is: reading it says what), or with a '/', '.toml' or a job file's suffix."""
    if name_or_path in builtin_names():
        return load_builtin(name_or_path)
    if (
        "/" in name_or_path
        or name_or_path.endswith((".toml", *JOB_FILE_SUFFIXES))
        or exists(name_or_path)
    ):
        return load_suite_file(name_or_path)
    raise UserError(
        f'unknown suite "{name_or_path}": not a built-in suite and not a file; '
        f"built-in suites: {', '.join(builtin_names())}",
        hint=f"Or give the path of a .toml suite file or a fio job file ({DOCS} describes both).",
    )


def apply_overrides(
    suite: Suite,
    *,
    runtime_s: float | None = None,
    size: int | None = None,
    ramp_s: float | None = None,
    written: Mapping[str, str | None] | None = None,
) -> Suite:
    """A copy of ``suite`` with runtime, size and/or ramp replaced in every workload, and
    named in ``Suite.overridden`` (the user chose them).

    The values come from the CLI's --runtime, --size and --ramp, which its errors name;
    ``written``: each option's value as the user typed it (``{"--size": "4k"}``), which
    they show. They have the bounds of a suite file's runtime, size and ramp
    (:func:`check_overrides`).
    """
    runtime_s, ramp_s, size = check_overrides(
        runtime_s=runtime_s, ramp_s=ramp_s, size=size, written=written
    )
    if size is not None:
        typed = (written or {}).get("--size")
        shown = f"{size} bytes" if typed in (None, str(size)) else f"{typed} ({size} bytes)"
        small = [w.name for w in suite.workloads if w.bs > size]
        if small:
            raise UserError(f"--size {shown} is smaller than the block size of {', '.join(small)}")
        zoned = [w.name for w in suite.workloads if (_zones_of(w) or 0) > size]
        if zoned:
            raise UserError(
                f"--size {shown} is smaller than what the zoned_abs random_distribution of "
                f"{', '.join(zoned)} covers: fio would do no I/O in the zones beyond it",
                "give a --size that holds the zones, or leave --size out",
            )

    def override(job: Workload) -> Workload:
        return dataclasses.replace(
            job,
            runtime_s=job.runtime_s if runtime_s is None else float(runtime_s),
            ramp_s=job.ramp_s if ramp_s is None else float(ramp_s),
            size=job.size if size is None else int(size),
        )

    # A suite that is indicative because its runs are short stops being so when the user
    # gives a runtime long enough for steady state.
    indicative = suite.indicative and (runtime_s is None or runtime_s < MIN_STEADY_RUNTIME_S)
    given: dict[Override, object] = {"runtime": runtime_s, "size": size, "ramp": ramp_s}
    return dataclasses.replace(
        suite,
        workloads=tuple(w.each_job(override) for w in suite.workloads),
        indicative=indicative,
        notes=tuple(n for n in suite.notes if n.about not in given or given[n.about] is None),
        overridden=suite.overridden | {name for name, value in given.items() if value is not None},
    )


def _zones_of(w: Workload) -> int | None:
    """The bytes a workload's zoned_abs random_distribution covers (the most of a group's
    parts), if it has one."""
    distributions = [dict(job.options).get("random_distribution") for job in w.jobs]
    zones = [zoned_abs_bytes(d) for d in distributions if d is not None]
    return max((z for z in zones if z is not None), default=None)


def check_overrides(
    *,
    runtime_s: float | None = None,
    ramp_s: float | None = None,
    size: int | None = None,
    written: Mapping[str, str | None] | None = None,
) -> tuple[float | None, float | None, int | None]:
    """--runtime, --ramp and --size checked against the bounds of a suite file's runtime,
    ramp and size (UserError naming the option, and the value as ``written`` has it, else
    as iobench writes it); the same values, durations as floats."""
    typed = written or {}
    if runtime_s is not None:
        runtime_s = _override_seconds(
            runtime_s, "--runtime", MAX_RUNTIME_S, WHY_RUNTIME, typed.get("--runtime")
        )
    if ramp_s is not None:
        ramp_s = _override_seconds(ramp_s, "--ramp", MAX_RAMP_S, WHY_RAMP, typed.get("--ramp"))
    if size is not None:
        given = typed.get("--size") or (
            format_size_short(size) if 0 <= size < 1 << 64 else show_value(size)
        )
        if isinstance(size, bool) or size <= 0:
            raise UserError(f"--size must be at least 1 byte, not {given}")
        if size > MAX_SIZE:
            raise UserError(
                f"--size must be at most {format_size_short(MAX_SIZE)} ({WHY_SIZE}), not {given}"
            )
    return runtime_s, ramp_s, size


def _override_seconds(
    value: float, option: str, most: float, why: str, written: str | None
) -> float:
    """A duration given to apply_overrides, checked: up to ``most`` seconds, and more than
    0 for --runtime (fio reads runtime=0 as no limit), 0 or more for --ramp."""
    try:
        seconds = float(value)
    except OverflowError:  # an int too large for a float
        seconds = math.inf
    given = written or (say_seconds(seconds) if seconds > 0 else f"{seconds:g}")
    if option == "--runtime" and not seconds > 0:
        raise UserError(f"--runtime must be longer than 0 seconds, not {given}")
    if not seconds >= 0:
        raise UserError(f"{option} must be 0 seconds or longer, not {given}")
    if seconds > most:
        raise UserError(f"{option} must be at most {say_seconds(most)} ({why}), not {given}")
    return seconds
