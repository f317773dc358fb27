"""Build fio job files. Pure: data in, text out; nothing here touches the disk."""

from __future__ import annotations

import json
import re
import shlex

from iobench import __version__
from iobench.errors import IobenchError
from iobench.fio.logs import INTERVAL_MS, log_prefix
from iobench.model import Precondition, Workload
from iobench.targets.kind import Reach
from iobench.units import fio_duration

# fio's default percentile list, which holds every percentile iobench reports.
PERCENTILE_LIST = "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"


# fio reads the target through this link in its working directory, never by the user's
# path: fio cuts option values at '#' and ';', strips trailing blanks, treats ':' and '\\'
# specially, expands $-keywords and sends values with '/' to bc; a fixed plain name
# sidesteps all of that for any path.
TARGET_LINK = "target"
# The section of an exported suite (`suites export`) that lays out the test file, which
# iobench does itself when it reads that file back as a suite. The ':' keeps it apart from
# every workload: no workload name holds one, and section_name never writes one.
LAYOUT_SECTION = "iobench:layout"
# A precondition's fill in `iobench doctor`'s job file (its purge is no fio job).
FILL_SECTION = "iobench:fill"
# fio re-creates a file that it finds smaller than the test area (filesetup.c extend_file):
# it unlinks the name, here the link to the target iobench holds, and makes a file of its
# own in the private directory, writing up to the whole test area there. On this host the
# target always exists at its full size, so fio may create nothing: should the target
# shrink (someone truncates a file they own), fio fails without writing anything.
NO_CREATE = "allow_file_create=0"


def _target_comment(reach: Reach, *, remote: bool = False) -> list[str]:
    """The target, for the stored job file: JSON-quoted, in as many comment lines as it
    takes (joined, they give the JSON back)."""
    if reach.path is None:
        where = f"(fio's {reach.engine} engine reaches it)"
    else:
        where = "on the fio server" if remote else f"(fio reaches it as ./{TARGET_LINK})"
    return comment_lines(f"target: {json.dumps(reach.shown)} {where}")


def reach_options(reach: Reach, *, remote: bool = False) -> list[str]:
    """The lines that point fio at the target: on this host ./target (and no file of
    fio's own), on a fio server the file by its path there, or the options of the
    target's own engine."""
    if reach.path is None:
        return [f"{key}={value}" for key, value in reach.options]
    return [f"filename={reach.path}"] if remote else [f"filename={TARGET_LINK}", NO_CREATE]


def section_name(name: str, client: str | None = None) -> str:
    """A workload name as a fio job section name (no brackets, spaces or odd characters);
    with ``client``, the section of that client's job (its entry in fio's report)."""
    section = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "job"
    if section.lower().startswith("global"):
        # fio takes every section whose name starts with "global" for options that every
        # job shares, not for a job (fio 3.33: [global-test] runs nothing).
        section = f"job-{section}"
    return f"{section}.{client}" if client else section


def _global_options(
    workload: Workload, size: int, engine: str | None, *, client: str | None = None
) -> list[str]:
    """A workload's options that iobench sets for it, whatever its shape (the [global]
    section of its job file), without ``filename``."""
    return [*run_options(workload, size, engine), *report_options(logs=True, client=client)]


def run_options(workload: Workload, size: int, engine: str | None = None) -> list[str]:
    """How long and over how much a workload runs, through which engine (``engine``, the
    target's, replaces the workload's)."""
    time_based = dict(workload.options).get("time_based", "1") != "0"
    lines = [
        f"size={size}",
        f"ioengine={engine or workload.ioengine}",
        f"direct={1 if workload.direct else 0}",
        f"runtime={fio_duration(workload.runtime_s)}",
    ]
    if time_based:
        lines.append("time_based=1")
    if workload.ramp_s:
        lines.append(f"ramp_time={fio_duration(workload.ramp_s)}")
    return lines


def report_options(*, logs: bool, client: str | None = None) -> list[str]:
    """What iobench has fio measure and report for every workload: one result per job
    section, latency percentiles; with ``logs``, the per-second interval logs."""
    lines = [
        "group_reporting=1",
        "clat_percentiles=1",
        "lat_percentiles=1",
        f"percentile_list={PERCENTILE_LIST}",
        "randrepeat=0",
    ]
    if not logs:
        return lines
    prefix = log_prefix(client)
    return [
        *lines,
        # Per-second IOPS, bandwidth and latency for timelines (fio/logs.py reads them).
        f"write_iops_log={prefix}",
        f"write_bw_log={prefix}",
        f"write_lat_log={prefix}",
        f"log_avg_msec={INTERVAL_MS}",
        *(["log_unix_epoch=1"] if client else []),
    ]


def shape_options(workload: Workload) -> list[str]:
    """The workload's own shape and the suite's fio options (its job section)."""
    opts = dict(workload.options)
    lines = [
        f"rw={opts.pop('rw', workload.rw)}",  # the mode, or as written with fio's modifier
        f"bs={opts.pop('bs', workload.bs)}",  # or one a direction: 4096,65536
        f"iodepth={workload.iodepth}",
        f"numjobs={workload.numjobs}",
    ]
    if workload.rwmixread is not None:
        lines.append(f"rwmixread={workload.rwmixread}")
    opts.pop("time_based", None)  # iobench's own: see run_options
    return lines + [f"{key}={value}" for key, value in opts.items()]


def build_jobfile(
    workload: Workload, reach: Reach, size: int, *, client: str | None = None, unlink: bool = False
) -> str:
    """The job file that runs ``workload`` over ``size`` bytes of the target fio reaches
    as ``reach`` says.

    For a file or device (``reach.path``), fio must run in a directory where
    :data:`TARGET_LINK` is a symlink to it; except with ``client`` (a short tag such as
    ``c2``), for a fio server: then the file is named by its path on the server (checked
    by :func:`iobench.clients.check_remote_path`),
    the section is ``<name>.<client>`` so the report says whose it is, and the interval logs
    carry Unix times, so the clients' start times can be compared.

    Latency is always measured in full (never ``gtod_reduce``); completion and total latency
    both get percentiles and json+ histogram bins; ``group_reporting`` makes fio sum the
    jobs' histograms exactly, so numjobs > 1 yields one result per workload.

    A group (``workload.parts``) is a section per part, no stonewall between them, so fio
    starts them together; each part has ``new_group``, so fio reports each part (its
    numjobs summed) as a group of its own, in the order of the parts (groupid 0, 1, ...),
    and the part's test area is its size within ``size``.

    ``unlink`` (a run's last step on a fio server, whose test file is iobench's own): fio
    removes the file when its jobs end, instead of a cleanup job of its own afterwards.
    """
    lines = [
        *comment_lines(f"iobench {__version__}: workload {workload.name}"),
        *_target_comment(reach, remote=client is not None),
        "[global]",
        *reach_options(reach, remote=client is not None),
        *(["unlink=1"] if unlink else []),
    ]
    if not workload.parts:
        lines += [
            *_global_options(workload, size, reach.engine, client=client),
            "",
            f"[{section_name(workload.name, client)}]",
            *shape_options(workload),
        ]
        return checked("\n".join(lines) + "\n")
    lines += report_options(logs=True, client=client)
    for part in workload.parts:
        lines += [
            "",
            f"[{section_name(part.name, client)}]",
            "new_group",
            *run_options(part, min(part.size, size), reach.engine),
            *shape_options(part),
        ]
    return checked("\n".join(lines) + "\n")


def layout_options(size: int, direct: bool, engine: str | None = None) -> list[str]:
    return [
        f"size={size}",
        "rw=write",
        "bs=1M",
        f"ioengine={engine or 'psync'}",
        f"direct={1 if direct else 0}",
        "refill_buffers=1",
        "end_fsync=1",
    ]


def build_layout_jobfile(
    reach: Reach, size: int, *, direct: bool = True, remote: bool = False
) -> str:
    """A job that writes the whole test file once with incompressible data, then syncs it.

    Reading a file that was never written measures the filesystem's holes, not the device,
    and fio lays out write-only jobs with fallocate alone; so iobench writes its test files
    itself before any workload runs. The file must already have its full (sparse) size, so
    fio writes over it in place. ``direct`` keeps gigabytes of dirty pages (and a long final
    flush) out of it; use False where the filesystem lacks O_DIRECT.
    """
    lines = [
        f"; iobench {__version__}: lay out the test file",
        *_target_comment(reach, remote=remote),
        "[layout]",
        *reach_options(reach, remote=remote),
        *layout_options(size, direct, reach.engine),
    ]
    return checked("\n".join(lines) + "\n")


def fill_options(area: int, pre: Precondition, direct: bool) -> list[str]:
    """A precondition's fill (SNIA PTS workload independent preconditioning): sequential
    writes of ``pre.bs`` over the ``area``, ``pre.passes`` times over (fio's loops),
    ``pre.iodepth`` IOs in flight, incompressible data, synced at the end."""
    return [
        f"size={area}",
        "rw=write",
        f"bs={pre.bs}",
        f"iodepth={pre.iodepth}",
        "ioengine=libaio",
        f"direct={1 if direct else 0}",
        f"loops={pre.passes}",
        "refill_buffers=1",
        "end_fsync=1",
    ]


def build_fill_jobfile(reach: Reach, area: int, pre: Precondition, *, direct: bool = True) -> str:
    """The job that fills the test area for a precondition (its bandwidth second by second
    comes from fio's status snapshots: engine/precondition.py). Like a layout, the file or
    device is there at its full size, and fio writes over it in place."""
    lines = [
        f"; iobench {__version__}: precondition: fill the test area",
        *_target_comment(reach),
        "[fill]",
        *reach_options(reach),
        *fill_options(area, pre, direct),
        *report_options(logs=False),
    ]
    return checked("\n".join(lines) + "\n")


# -- job files for plain fio (`iobench doctor`) ------------------------------------------------

# What a job file cannot carry in an option value (see TARGET_LINK): fio cuts a value at
# ';' and '#', strips trailing blanks, expands '$' keywords and ${VARIABLES} (and sends
# '$ncpus'-like values to bc), and '\' escapes; a character that does not show as itself
# cannot be pasted. ':' separates file names and is escaped as '\:'.
_UNSAFE_IN_VALUE = frozenset(";#$\\")


def why_not_plain(path: str) -> str | None:
    """Why no ``filename=`` value makes plain fio open ``path`` (a phrase); None when one
    does (see :func:`plain_filename`)."""
    if not path.isprintable() or path != path.rstrip() or _UNSAFE_IN_VALUE & set(path):
        return (
            "fio cuts a value at ';' and '#', expands '$', treats '\\' as an escape and strips "
            "trailing blanks, and a character that does not show cannot be pasted"
        )
    size = len(path.replace(":", "\\:").encode())
    if size > PATH_VALUE_BYTES:
        return (
            f"it is {size} bytes long, and iobench writes at most {PATH_VALUE_BYTES} bytes of "
            "a path in a job file: fio joins it with a file name in a buffer of 4096"
        )
    return None


def plain_filename(path: str) -> str | None:
    """The ``filename=`` value that makes plain fio open ``path``; None when no value
    can (then fio reaches it only through a link of a plain name, as iobench does)."""
    return None if why_not_plain(path) else path.replace(":", "\\:")


def _plain_reach_lines(reach: Reach) -> list[str]:
    if reach.path is None:
        return reach_options(reach)
    path = reach.path
    why = why_not_plain(path)
    if why is None:
        return [f"filename={plain_filename(path)}"]
    lines = comment_lines(
        f"target: {json.dumps(path)}: fio cannot take this path in a job file ({why}); run "
        "fio where ./target is a symbolic link to it, as iobench does"
    )
    link = f"; ln -s -- {shlex.quote(path)} target"
    if path.isprintable() and len(link.encode()) <= COMMENT_BYTES:
        lines.append(link)
    return [*lines, f"filename={TARGET_LINK}"]


# fio reads a job file a line at a time into a buffer of 8 KiB and reads the rest of a longer
# line as a line of its own: the end of a long comment becomes an option (fio 3.33: a comment
# of 8191 characters, then `rw=write`, sets rw=write). Comments are cut well before that.
COMMENT_BYTES = 1000


def comment_lines(text: str, mark: str = ";") -> list[str]:
    """``text`` as comment lines that fio skips whatever ``text`` holds: a character that
    is not printable (a newline, a terminal's escape, a byte that is not UTF-8) written as
    ``\\uXXXX`` (``\\UXXXXXXXX`` past U+FFFF), and the text cut into lines of at most
    :data:`COMMENT_BYTES` bytes, never inside such an escape. The lines' text after
    ``mark`` and a blank, joined, is ``text`` with those escapes."""
    lines: list[str] = []
    line, used = "", 0
    for c in text:
        if c.isprintable():
            shown = c
        else:
            shown = f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"
        size = len(shown.encode())
        if used + size > COMMENT_BYTES:
            lines.append(line)
            line, used = "", 0
        line += shown
        used += size
    lines.append(line)
    return [f"{mark} {line}" if line else mark for line in lines]


def plain_job(workload: Workload, reach: Reach, size: int, *, section: str, title: str) -> str:
    """One workload as a section plain fio runs on its own or after others in one file:
    the options of :func:`build_jobfile`'s job file, all in the section (a [global] would
    carry over into the next step's), the file by its path, and ``stonewall`` so that it
    starts when the step before it has ended. A group is a section per part (``section``
    the first's, with its part's ``name=``; the others named for their parts), the first
    with ``stonewall``, the others with ``new_group`` so that fio starts them with it and
    reports each apart."""
    lines = comment_lines(title)
    for i, part in enumerate(workload.jobs):
        named = workload.parts and i == 0 and section != part.name  # fio reports it by name=
        lines += [
            f"[{section if i == 0 else section_name(part.name)}]",
            *([f"name={part.name}"] if named else []),
            *shape_options(part),
            *_plain_reach_lines(reach),
            *_global_options(part, min(part.size, size) if workload.parts else size, reach.engine),
            "stonewall" if i == 0 else "new_group",
        ]
    return checked("\n".join(lines) + "\n")


def plain_layout_job(reach: Reach, size: int, *, direct: bool, section: str, title: str) -> str:
    """:func:`build_layout_jobfile` as a section for plain fio (see :func:`plain_job`)."""
    lines = [
        *comment_lines(title),
        f"[{section}]",
        *_plain_reach_lines(reach),
        *layout_options(size, direct, reach.engine),
        "stonewall",
    ]
    return checked("\n".join(lines) + "\n")


def plain_fill_job(
    reach: Reach, area: int, pre: Precondition, *, direct: bool, section: str, title: str
) -> str:
    """:func:`build_fill_jobfile` as a section for plain fio (see :func:`plain_job`)."""
    lines = [
        *comment_lines(title),
        f"[{section}]",
        *_plain_reach_lines(reach),
        *fill_options(area, pre, direct),
        *report_options(logs=False),
        "stonewall",
    ]
    return checked("\n".join(lines) + "\n")


def build_cleanup_jobfile(target_path: str) -> str:
    """For a fio server: remove iobench's test file at ``target_path`` (a path of its own,
    named for the run; iobench cannot reach the server's files any other way). fio reads
    4 KiB of it, then unlinks it; a file that is missing is created and removed."""
    lines = [
        f"; iobench {__version__}: remove the test file",
        *_target_comment(Reach.file(target_path), remote=True),
        "[cleanup]",
        f"filename={target_path}",
        "size=4k",
        "rw=read",
        "bs=4k",
        "ioengine=psync",
        "unlink=1",
    ]
    return checked("\n".join(lines) + "\n")


# -- the gate: every job file iobench writes, checked line by line ------------------------------

# fio 3.33 reads a job file on its own host with fgets into a buffer of 8192 bytes
# (OPT_LEN_MAX, init.c __parse_jobs_ini): a line of over 8190 bytes before its "\n" is read
# in pieces, each after the first a line of its own. A fio server gets the file whole and
# splits it only at "\n". iobench writes no line over 8000 bytes, which leaves room for the
# "\r" an editor may add, and reads none longer (suites.jobfile): every line it writes reads
# back, and fio reads each whole on any host. The longest lines it writes are options from
# a suite (a value of 4096 characters at most, suites.options.MAX_STRING) and comments
# (COMMENT_BYTES).
LINE_BYTES = 8000
# fio keeps 254 characters of a section's name (sscanf "[%255[^\n]]", then the "]" cut) and
# 127 bytes of it in its reports (thread_stat's name[FIO_JOBNAME_SIZE]), by which iobench
# reads a job's results.
SECTION_BYTES = 127
# fio joins directory= and filename= into a buffer of PATH_MAX (4096) bytes unchecked
# (filesetup.c add_file: sprintf), and the kernel refuses a path of 4096 bytes or more:
# each value is at most 2000 bytes, so that the two together stay under it.
PATH_VALUE_BYTES = 2000

_SECTION_RE = re.compile(r"\[([A-Za-z0-9._:-]+)\]")
_KEY_RE = re.compile(r"[a-z][a-z0-9_]*")


class UnsafeJobFile(IobenchError):
    """A job file iobench built has a line that fio would read otherwise than meant: a bug
    in iobench, since input that cannot be written safely is refused before, as a UserError."""


def checked(text: str) -> str:
    """``text``, a job file, when fio reads each of its lines as iobench wrote it: a comment,
    a ``[section]`` of a plain name, or an option whose value fio neither cuts, strips nor
    expands; none longer than :data:`LINE_BYTES` or holding a character that is not
    printable (a line break, a control character). Else :class:`UnsafeJobFile`: nothing
    that fio would misread is ever written or run."""
    for number, line in enumerate(text.split("\n"), start=1):
        problem = _line_problem(line)
        if problem is not None:
            shown = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in line[:80])
            raise UnsafeJobFile(
                f"iobench built a job file whose line {number} {problem} ({json.dumps(shown)}"
                f"{'...' if len(line) > 80 else ''}); fio would misread it, so it was neither "
                "written nor run",
                "this is a bug in iobench; please report it with the command you ran",
            )
    return text


def _line_problem(line: str) -> str | None:
    if not line.isprintable():
        return "holds a line break or another character that is not printable"
    if len(line.encode()) > LINE_BYTES:
        return f"is longer than {LINE_BYTES} bytes"
    if not line or line[0] in ";#":
        return None
    if line[0] == "[":
        m = _SECTION_RE.fullmatch(line)
        if m is None:
            return "is not a [section] of letters, digits and . _ : -"
        if len(m.group(1)) > SECTION_BYTES:
            return f"names a section of over {SECTION_BYTES} characters"
        return None
    key, _, value = line.partition("=")
    if not _KEY_RE.fullmatch(key) or key.startswith("include"):
        return "is neither a comment, a section nor an option"
    if set(value) & set(";#$") or value != value.strip():
        return "has a value that fio would cut, strip or expand"
    if key in ("filename", "directory") and len(value.encode()) > PATH_VALUE_BYTES:
        return f"names a path of over {PATH_VALUE_BYTES} bytes"
    return None
