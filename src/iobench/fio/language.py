"""fio's job-file language before its options are read: ``include`` and the variables fio
replaces in values, done as fio 3.33 does them (init.c ``__parse_jobs_ini``, parse.c), so a
user's job file means what it means to fio, and what was put in is recorded.

- ``include FILE`` (a line of its own, in any section) reads FILE's options there. fio takes
  the name as it is written after ``include `` (blanks and all) and opens it from the working
  directory; when there is no such file there, from the directory of the file that includes
  it. An included file may include others but holds no section of its own ("No new sections
  in included files"). A loop, a missing file or one that cannot be read is a problem at the
  include's line.
- ``${VAR}`` in a value is the environment variable VAR (fio leaves an unset one as it is,
  and then fails to read the value: a problem here, naming it).
- ``$ncpus``, ``$mb_memory`` and ``$pagesize`` are the online CPUs, the memory in MiB and the
  page size of the host that runs the job; a value holding one is computed whole, as fio
  has bc compute it (``10*$mb_memory``), and a value in parentheses, ``(2*4)``, is computed
  (+, -, *, /, % of whole numbers); elsewhere fio reads ``128*2`` as its leading number.

The result is the file's text with every include put in its place and every variable
replaced, with where each line came from, and each replacement said. Pure: reading a file
and the host's figures are given.
"""

from __future__ import annotations

import ast
import operator
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from iobench.errors import SuiteError, SuiteProblem
from iobench.fio.jobfile import LINE_BYTES as MAX_LINE
from iobench.units import quoted

MAX_INCLUDE_DEPTH = 16
MAX_TOTAL_BYTES = 4 << 20  # every file included, together
KEYWORDS = ("$ncpus", "$mb_memory", "$pagesize")
_VAR_RE = re.compile(r"\$\{([^}]*)\}")
_KEYWORD_RE = re.compile(r"\$(ncpus|mb_memory|pagesize)\b")
# Whole-number options where fio reads ``128*2`` as 128 (strtoll, then no unit it knows):
# said as a replacement, so the user sees what fio runs.
# (Not the options that take a range, low-high: filesize, startdelay, bsrange ...)
LEADING_NUMBER_KEYS = frozenset(
    {"iodepth", "numjobs", "runtime", "timeout", "ramp_time", "size", "io_size", "io_limit"}
    | {"nrfiles", "nr_files", "loops", "iodepth_batch", "rate_iops", "iodepth_low", "fsync"}
    | {"bs", "blocksize", "thinktime", "offset"}
)
_LEADING_RE = re.compile(r"\s*([0-9]{1,30})\s*[-+*/][-+*/0-9 \t]*")
_SECTION_RE = re.compile(r"^\s*\[")
_MAX_VALUE = 1 << 62


@dataclass(frozen=True)
class Origin:
    """Where a line of the expanded text was written."""

    file: str  # as the user named it, or as the include said it
    line: int


@dataclass(frozen=True)
class Replaced:
    """A variable in a value and what it became."""

    written: str  # ${SZ}, $ncpus
    value: str
    source: str  # "environment" or "host"


@dataclass(frozen=True)
class HostFigures:
    ncpus: int
    mb_memory: int
    pagesize: int

    @classmethod
    def here(cls) -> HostFigures:
        """This host's figures, as fio reads them (online CPUs, physical memory, page)."""
        pages = os.sysconf("SC_PHYS_PAGES")
        pagesize = os.sysconf("SC_PAGESIZE")
        return cls(
            ncpus=os.sysconf("SC_NPROCESSORS_ONLN"),
            mb_memory=pages * pagesize // (1 << 20),
            pagesize=pagesize,
        )

    def of(self, keyword: str) -> int:
        return {"ncpus": self.ncpus, "mb_memory": self.mb_memory, "pagesize": self.pagesize}[
            keyword
        ]


@dataclass
class Expanded:
    """A job file with its includes in place and its variables replaced."""

    lines: list[str] = field(default_factory=list)
    origins: list[Origin] = field(default_factory=list)
    replaced: list[Replaced] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)  # each file included, once
    problems: list[SuiteProblem] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def origin(self, line: int | None) -> Origin | None:
        """Where line ``line`` (1-based) of :attr:`text` was written."""
        if line is None or not 1 <= line <= len(self.origins):
            return None
        return self.origins[line - 1]

    def problem(self, where: Origin, message: str, hint: str | None = None) -> None:
        self.problems.append(SuiteProblem(message, where.line, hint, file=where.file))


@dataclass(frozen=True)
class Files:
    """How included files are found and read (with the rights of the user iobench runs
    for: iobench.suites.userfile)."""

    read: Callable[[str], str]  # a file's text, or SuiteError
    exists: Callable[[str], bool]


def expand(
    text: str,
    path: str,
    read: Files,
    environ: Mapping[str, str],
    host: HostFigures,
) -> Expanded:
    """``text`` (the job file ``path``) expanded; see the module's docstring."""
    out = Expanded()
    _take(text, path, _Reading(read, environ, host, out), ())
    return out


@dataclass(frozen=True)
class _Reading:
    """What reading a job file and its includes needs, and where it puts what it read."""

    files: Files
    environ: Mapping[str, str]
    host: HostFigures
    out: Expanded


def _take(text: str, path: str, how: _Reading, stack: tuple[str, ...]) -> None:
    """Append ``text``'s lines (the file at ``path``) to the expansion, its includes in
    their places."""
    out = how.out
    stack = (*stack, os.path.realpath(path))
    for number, line in enumerate(text.split("\n"), start=1):
        where = Origin(path, number)
        content = line.strip(" \t\r")
        if content.startswith("include") and not content.startswith(("#", ";")):
            _include(content, where, path, how, stack)
            continue
        if len(stack) > 1 and _SECTION_RE.match(line):
            out.problem(
                where,
                f"{line.strip()}: an included file holds options only; fio starts no "
                'section in one ("No new sections in included files")',
            )
            continue
        out.lines.append(_replaced(line, where, how.environ, how.host, out))
        out.origins.append(where)


def _include(content: str, where: Origin, real: str, how: _Reading, stack: tuple[str, ...]) -> None:
    out, read = how.out, how.files
    name = content[len("include") + 1 :]  # as fio: what follows "include" and one character
    if not name:
        out.problem(where, "include names no file: include FILE")
        return
    if name != name.lstrip(" \t"):
        out.problem(
            where,
            f"include {name!r}: fio takes the name with the blanks before it and opens no such "
            "file; write one blank between include and the name",
        )
        return
    found = _resolve(name, real, read.exists)
    if os.path.realpath(found) in stack:
        chain = " -> ".join([*(Path(p).name for p in stack), Path(found).name])
        out.problem(where, f"include {name}: the files include each other in a loop ({chain})")
        return
    if len(stack) >= MAX_INCLUDE_DEPTH:
        out.problem(where, f"include {name}: includes nest deeper than {MAX_INCLUDE_DEPTH}")
        return
    try:
        included = read.read(found)
    except SuiteError as e:
        out.problem(where, f"include {name}: {found} {e.message.split(': ', 1)[-1]}")
        return
    if sum(len(line) + 1 for line in out.lines) + len(included) > MAX_TOTAL_BYTES:
        out.problem(where, f"include {name}: the files included add up to more than 4 MiB")
        return
    out.includes.append(found)
    _take(included, found, how, stack)


def _resolve(name: str, real: str, exists: Callable[[str], bool]) -> str:
    """The file fio opens for ``include name`` in the file at ``real``: the name from the
    working directory if there is such a file, else from the including file's directory."""
    if PurePath(name).is_absolute() or exists(name):
        return name
    return str(PurePath(real).parent / name)


def _replaced(
    line: str, where: Origin, environ: Mapping[str, str], host: HostFigures, out: Expanded
) -> str:
    """The line with its value's variables replaced (an option's value only: what follows
    the first '=' before any comment)."""
    content = line.lstrip(" \t")
    if not content or content[0] in ";#[" or "=" not in line:
        return line
    key, _, rest = line.partition("=")
    value, cut, comment = _split_comment(rest)
    keyworded = bool(_KEYWORD_RE.search(value))

    def env(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in environ:
            out.problem(
                where,
                f"{key.strip()}: ${{{name}}} is not set in the environment (fio would read "
                f"the text ${{{name}}} and refuse it)",
                f"set it (e.g. {name}=... iobench run ...) or write the value",
            )
            return m.group(0)
        out.replaced.append(Replaced(m.group(0), environ[name], "environment"))
        return environ[name]

    def keyword(m: re.Match[str]) -> str:
        figure = str(host.of(m.group(1)))
        out.replaced.append(Replaced(m.group(0), figure, "host"))
        return figure

    value = _KEYWORD_RE.sub(keyword, _VAR_RE.sub(env, value))
    leading = _LEADING_RE.fullmatch(value)
    if leading and not keyworded and key.strip().lower() in LEADING_NUMBER_KEYS:
        # fio 3.33 computes only in parentheses or with a keyword: strtoll reads the rest
        out.replaced.append(
            Replaced(value.strip(), leading.group(1), "fio reads the leading number")
        )
        value = leading.group(1)
    if value.strip().startswith("(") and value.strip().endswith(")"):
        computed = arithmetic(value.strip())
        if computed is None:
            out.problem(
                where,
                f"{key.strip()}={value.strip()}: not arithmetic iobench can compute "
                "(whole numbers with + - * / % and parentheses)",
            )
        else:
            out.replaced.append(Replaced(value.strip(), str(computed), "arithmetic"))
            value = str(computed)
    elif keyworded and re.search(r"[-+*/]", value) and "'" not in value:
        # a value holding a keyword is computed whole, by bc (init.c bc_calc)
        computed = arithmetic(value.strip())
        if computed is None:
            out.problem(
                where,
                f"{key.strip()}={value.strip()}: fio computes a value holding $ncpus, "
                "$mb_memory or $pagesize as arithmetic of whole numbers (+ - * / % and "
                "parentheses, no units), and this is not",
                "write the value in whole numbers, e.g. ($mb_memory*1024*1024)",
            )
        else:
            out.replaced.append(Replaced(value.strip(), str(computed), "arithmetic"))
            value = str(computed)
    return f"{key}={value}{cut}{comment}"


def _split_comment(rest: str) -> tuple[str, str, str]:
    """A value and the comment after it (fio cuts a line at its first ';' or '#')."""
    m = re.search(r"[;#]", rest)
    if m is None:
        return rest, "", ""
    return rest[: m.start()], rest[m.start()], rest[m.start() + 1 :]


_OPERATORS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.floordiv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


def arithmetic(text: str) -> int | None:
    """``(2*4+1)`` computed over whole numbers (a division rounds down, as fio's integer
    options do); None when it is anything else, too long, or too large."""
    if len(text) > 200 or not re.fullmatch(r"[0-9+\-*/%() \t]+", text):
        return None
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod) and right == 0:
                raise ValueError("division by zero")
            result = _OPERATORS[type(node.op)](left, right)
            if abs(result) > _MAX_VALUE:
                raise ValueError("too large")
            return result
        raise ValueError("not arithmetic")

    try:
        return value(tree.body)
    except (ValueError, RecursionError):
        return None


# -- sections and options -------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    key: str  # as written, blanks around it removed
    value: str | None  # after the first "=", as written; None when there is no "="
    line: int


@dataclass
class Section:
    name: str
    line: int
    options: list[Option] = field(default_factory=list)

    @property
    def is_global(self) -> bool:
        return self.name.startswith("global")  # as fio: strncmp(name, "global", 6)


def _control(line: str) -> str | None:
    """The first control character of a line (a tab is a blank), described."""
    for char in line:
        if char != "\t" and (char < " " or char == "\x7f"):
            return f"U+{ord(char):04X}" + (" (a NUL byte)" if char == "\0" else "")
    return None


def read_sections(text: str) -> tuple[list[Section], list[SuiteProblem]]:
    """The file's sections with their options, and what cannot be read (each line's)."""
    sections: list[Section] = []
    problems: list[SuiteProblem] = []
    current: Section | None = None
    skipping = False  # after a bad header: its options belong to no section
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        size = len(line.encode("utf-8", "replace")) if len(line) * 4 > MAX_LINE else len(line)
        if size > MAX_LINE:
            problems.append(
                SuiteProblem(f"a line of {size} bytes is too long (at most {MAX_LINE})", lineno)
            )
            continue
        bad = _control(line)
        if bad is not None:
            problems.append(
                SuiteProblem(
                    f"the line holds the control character {bad}; a job file is text", lineno
                )
            )
            continue
        content = line.strip(" \t")
        if not content or content[0] in ";#":
            continue
        content = re.split(r"[;#]", content, maxsplit=1)[0].rstrip(" \t")
        if content.startswith("["):
            name = content[1:-1]
            if not content.endswith("]") or not name.strip():
                problems.append(
                    SuiteProblem(
                        f"a section header is [NAME] alone on its line, not {quoted(content)}",
                        lineno,
                    )
                )
                current, skipping = None, True
                continue
            current, skipping = Section(name, lineno), False
            sections.append(current)
        elif current is None:
            if not skipping:
                problems.append(
                    SuiteProblem(
                        f"{quoted(content)} comes before any section: fio reads options only "
                        "in [global] or in a job's [NAME] section",
                        lineno,
                    )
                )
        else:
            key, equals, value = content.partition("=")
            current.options.append(Option(key.rstrip(" \t"), value if equals else None, lineno))
    return sections, problems


# -- fio's units: the one strict reading (iobench.fio.options has the lenient one) ---------

_NUMBER = r"([0-9]{1,30})"
_SIZE_RE = re.compile(r"0[xX]([0-9a-fA-F]{1,30})|" + _NUMBER + r"([A-Za-z]{0,3})")
_TIME_RE = re.compile(_NUMBER + r"([A-Za-z]{0,4})")
_TIME_UNITS_US = {"": 0, "us": 1, "usec": 1, "ms": 10**3, "msec": 10**3, "s": 10**6}
_TIME_UNITS_US |= {"m": 60 * 10**6, "h": 3600 * 10**6, "d": 86400 * 10**6}
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def fio_bytes(text: str, kb_base: int = 1024) -> int:
    """A size as fio reads it: ``4k`` = 4096, ``4KiB`` = 4000 (IEC units are the opposite
    base, fio's "compatibility mode"; kb_base=1000 swaps both), ``0x1000``; ValueError
    otherwise (fio itself reads ``1.5g`` as 1 byte and ``4 k`` as 4)."""
    m = _SIZE_RE.fullmatch(text)
    if m is None:
        raise ValueError(text)
    if m.group(1) is not None:
        return int(m.group(1), 16)
    unit = m.group(3).lower()
    if unit in ("", "b"):
        return int(m.group(2))
    iec = unit.endswith("ib") and len(unit) == 3
    if unit[0] not in _POWERS or not (iec or unit in (unit[0], unit[0] + "b")):
        raise ValueError(text)
    base = (1000 if kb_base == 1024 else 1024) if iec else kb_base
    return int(m.group(2)) * int(base ** _POWERS[unit[0]])


def fio_microseconds(text: str, default_us: int) -> int:
    """A time as fio reads it: a whole number with us, ms, s, m, h or d, else
    ``default_us`` a unit (runtime: seconds; thinktime: microseconds)."""
    m = _TIME_RE.fullmatch(text)
    if m is None or m.group(2).lower() not in _TIME_UNITS_US:
        raise ValueError(text)
    return int(m.group(1)) * (_TIME_UNITS_US[m.group(2).lower()] or default_us)
