"""A job's options where fio's normal text output was pasted with them: the fio command
line (``fio --rw=randread --bs=4k --name=t``), a job file shown with ``cat``, and fio's own
job header line (``t: (g=0): rw=randread, bs=(R) 4096B-4096B, ..., iodepth=32``).

Each gives options as fio's JSON echoes them (name -> value as typed), so that the import
reads them with :func:`iobench.fio.options.workload_params` like a JSON file's. Pure; every
function takes one line (or a few) of hostile text and does bounded work.
"""

from __future__ import annotations

import contextlib
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

# fio's own command-line options (not job options): they say how fio ran, not what.
_CLI_ONLY = frozenset(
    {"output", "output-format", "minimal", "append-terse", "terse-version", "version"}
    | {"help", "cmdhelp", "enghelp", "showcmd", "eta", "eta-newline", "eta-interval"}
    | {"readonly", "section", "alloc-size", "warnings-fatal", "max-jobs", "server"}
    | {"daemonize", "client", "remote-config", "idle-prof", "inflate-log", "status-interval"}
    | {"trigger-file", "trigger-timeout", "trigger", "trigger-remote", "parse-only"}
    | {"aux-path", "bandwidth-log", "debug", "latency-log", "crctest", "memcpytest"}
    | {"merge-blktrace-only", "eta-print", "write_to_file"}
)
# Options fio takes without a value on its command line (fio --cmdhelp: "empty or boolean
# value", getopt's optional argument), and fio's own such flags. Every other option takes
# the next word as its value when it has no '=' (``--rw randwrite``), as getopt does.
_FLAGS = frozenset(
    {"bs_unaligned", "norandommap", "time_based", "verify_only", "exitall", "thread"}
    | {"exitall_on_error", "stonewall", "new_group", "group_reporting", "zero_buffers"}
    | {"refill_buffers", "wait_for_previous", "minimal", "append-terse", "version", "help"}
    | {"readonly", "parse-only", "showcmd", "warnings-fatal", "bandwidth-log", "latency-log"}
    | {"server", "cmdhelp", "enghelp", "daemonize", "memcpytest", "crctest"}
)
_JOB_FILE_ENDINGS = (".fio", ".ini", ".job", ".jobs", ".cfg", ".conf", ".txt")
_PROMPT_ENDS = ("#", "$", ">", "%")
_WRAPPERS = frozenset({"sudo", "time", "nohup", "exec", "command", "env", "ionice", "nice"})
_OPTION_NAME = re.compile(r"^[A-Za-z_][\w\-]{0,63}$")
MAX_ARGS = 400  # a command line with more arguments is not read as one
MAX_COMMAND_CHARS = 4096


@dataclass
class Options:
    """The options of one job: those shared by its file or command line (``shared``) and
    its own; ``where`` says where they were read (for the import's warning).
    ``complete``: every option the job was given is here (a command line without job
    files, a job file, iobench's description), so an option that is not here is at fio's
    default; not so for what fio printed of a job (its header line, its result lines)."""

    shared: dict[str, str]
    own: dict[str, str]
    where: str
    complete: bool = True

    @property
    def effective(self) -> dict[str, str]:
        return {**self.shared, **self.own}


@dataclass
class CommandLine:
    """One fio command line: options before the first ``--name`` (shared), each ``--name``
    section's, and the job files it names."""

    shared: dict[str, str] = field(default_factory=dict)
    jobs: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    job_files: list[str] = field(default_factory=list)

    def job(self, name: str) -> Options | None:
        for job_name, own in self.jobs:
            if job_name == name:
                # A job file it names may set more (fio reads it before the options).
                return Options(
                    dict(self.shared), dict(own), "the fio command line", not self.job_files
                )
        return None


def _fio_at(words: list[str]) -> int | None:
    """The index of the word that runs fio: first on the line, after a shell prompt
    (``[root@h ~]#``, ``$``) or a wrapper such as sudo; None if the line does not run it."""
    for i, word in enumerate(words[:16]):
        if word != "fio" and not word.endswith("/fio"):
            continue
        before = words[:i]
        prompt = max((j for j, w in enumerate(before) if w.endswith(_PROMPT_ENDS)), default=-1)
        if all(w in _WRAPPERS or w.startswith("-") for w in before[prompt + 1 :]):
            return i
        return None
    return None


def fio_command(line: str) -> CommandLine | None:
    """The fio command line on this line, or None when the line does not run fio with
    options or a job file."""
    if len(line) > MAX_COMMAND_CHARS or "fio" not in line:
        return None
    words = line.split()
    at = _fio_at(words)
    if at is None or at + 1 >= len(words):
        return None
    first = words[at + 1].strip("'\"")
    if not (first.startswith("-") or first.endswith(_JOB_FILE_ENDINGS)):
        return None
    rest = line[line.find(words[at]) + len(words[at]) :]
    args = words[at + 1 :]
    if any(c in rest for c in "'\"\\#"):  # the shell's quoting (shlex is slow: only then)
        with contextlib.suppress(ValueError):  # an unclosed quote: plain words
            args = shlex.split(rest, comments=True)
    if not args or len(args) > MAX_ARGS:
        return None
    first = args[0]
    if not (first.startswith("-") or first.endswith(_JOB_FILE_ENDINGS)):
        return None
    return _command_line(args)


def _shell(arg: str) -> bool:
    return arg in ("|", ">", ">>", "2>&1", "&&", ";", "&") or arg.startswith((">", "|"))


def _command_line(args: list[str]) -> CommandLine:
    cmd = CommandLine()
    current = cmd.shared
    words = iter(enumerate(args))
    for i, arg in words:
        if _shell(arg):
            break  # the shell's, not fio's
        if not arg.startswith("-"):
            cmd.job_files.append(arg)
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if not _OPTION_NAME.match(name):
            continue
        following = args[i + 1] if i + 1 < len(args) else None
        if (
            not eq
            and name not in _FLAGS
            and following is not None
            and not following.startswith("-")
            and not _shell(following)
        ):
            eq, value = "=", following  # --rw randwrite: getopt takes the next word
            next(words)
        if name == "name":
            current = {}
            cmd.jobs.append((value, current))
        elif name not in _CLI_ONLY:
            # An option given without a value is one fio sets (time_based, group_reporting).
            current[name] = value if eq else "1"
    return cmd


_COMMENT = re.compile(r"[;#]")
_SECTION = re.compile(r"^\s*\[([^\[\]]{1,200})\]\s*$")
# No lazy (.*?) before \s*$: that is quadratic in a line's run of blanks.
_KEY_VALUE = re.compile(r"^\s*([A-Za-z_][\w\-]{0,63})\s*(?:=(.*))?$")


def is_section_line(line: str) -> bool:
    return len(line) <= 256 and _SECTION.match(line) is not None


def ini_line(line: str) -> bool:
    """True for a line a fio job file may hold: a section, an option, a comment, blank."""
    if len(line) > 1024:
        return False
    stripped = line.strip()
    return (
        not stripped
        or stripped.startswith(("#", ";"))
        or _SECTION.match(line) is not None
        or _KEY_VALUE.match(line) is not None
    )


def job_file(lines: list[str]) -> dict[str, Options]:
    """The job sections of a job file shown in the text, each with the ``[global]``
    options in force where it stands (fio applies a global section to the jobs after it)."""
    shared: dict[str, str] = {}
    jobs: dict[str, Options] = {}
    current: dict[str, str] | None = None
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        section = _SECTION.match(line)
        if section:
            name = section.group(1).strip()
            if name == "global":
                current = shared = dict(shared)
            else:
                current = {}
                jobs[name] = Options(shared, current, "the job file shown with it")
            continue
        kv = _KEY_VALUE.match(line)
        if kv and current is not None:
            value = kv.group(2)
            # fio cuts a value at ';' or '#' (parse.c strip_blank_end)
            current[kv.group(1)] = "1" if value is None else _COMMENT.split(value)[0].strip()
    return jobs


# A job's description as `iobench suites export` writes it: the section's options once
# more, for fio's normal output, which prints a description but not the options.
DESCRIPTION_PREFIX = "iobench workload:"
_DESCRIBED = re.compile(r"([a-z][a-z0-9_]{0,63})=([A-Za-z0-9._:/,%+-]{1,200})")


def described(description: str | None) -> Options | None:
    """The options an iobench description states (``iobench workload: rw=read bs=4096
    ...``), or None when the description is not one."""
    if description is None or not description.startswith(DESCRIPTION_PREFIX + " "):
        return None
    words = description[len(DESCRIPTION_PREFIX) + 1 : 4096].split(" ")
    found = [_DESCRIBED.fullmatch(w) for w in words]
    if not words or any(m is None for m in found):
        return None
    own = {m.group(1): m.group(2) for m in found if m is not None}
    return Options({}, own, "the job's description, where iobench's suites export states them")


# fio's job header line. 2.x: ``bs=4K-4K/4K-4K/4K-4K``; 3.x: ``bs=(R) 4096B-4096B, (W) ...``
_HEADER_BS_3 = re.compile(r"\(R\) ([0-9.]+)([KMGTP]i)?B-([0-9.]+)([KMGTP]i)?B, \(W\) ")
_HEADER_BS_2 = re.compile(r"^([0-9.]+)([KMGTP])?-([0-9.]+)([KMGTP])?/")
_HEADER_FIELD = re.compile(r"(?:^|, )(rw|ioengine|iodepth)=([^,\s]{1,64})")
_POWER = {None: 0, "": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5}


def _size(number: str, unit: str | None) -> int | None:
    try:
        value = float(number) * 1024 ** _POWER[(unit or "")[:1]]
    except ValueError:
        return None
    return int(value) if value == int(value) and value < 2**62 else None


def header_options(rest: str) -> dict[str, str]:
    """The options fio printed on a job's header line (what follows ``(g=N): ``): ``rw``,
    ``bs`` (when reads, writes and trims use one fixed size), ``ioengine`` and ``iodepth``,
    as it printed them (fio's sizes here are powers of 1024; ``bs`` is written in bytes)."""
    options = {m.group(1): m.group(2) for m in _HEADER_FIELD.finditer(rest[:1024])}
    bs_at = rest.find("bs=")
    if bs_at >= 0:
        bs_text = rest[bs_at + 3 : bs_at + 200]
        m3 = _HEADER_BS_3.match(bs_text)
        m2 = _HEADER_BS_2.match(bs_text)
        m = m3 or m2
        if m:
            low, high = _size(m.group(1), m.group(2)), _size(m.group(3), m.group(4))
            same = (
                bs_text.count(bs_text[: bs_text.find(",")].removeprefix("(R)").strip()) == 3
                if m3
                else len(set(bs_text.split(",")[0].split("/"))) == 1
            )
            if low is not None and low == high and same:
                options["bs"] = str(low)
    return options


def options_shown(lines: Sequence[str]) -> Callable[[str], Options | None]:
    """A job's options (by its name) from what a text shows of how fio was run: its fio
    command line when there is one (with two or more, which ran is not known: none), else
    a job file shown in it. Reading stops at a second command line: each costs a parse."""
    commands: list[CommandLine] = []
    for line in lines:
        command = fio_command(line)
        if command is not None:
            commands.append(command)
            if len(commands) > 1:
                break
    shown = job_file([line for line in lines if ini_line(line)])

    def of(name: str) -> Options | None:
        found = commands[0].job(name) if len(commands) == 1 else None
        return found or shown.get(name)

    return of
