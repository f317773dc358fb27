"""Every line iobench writes for fio stays within fio's limits and never carries a line break
(issue 22): for the longest and strangest inputs the limits allow, real fio's own reading of
each final job file (``--parse-only --showcmd``) holds exactly the options iobench wrote, in
the sections it wrote: the job files of a run on this host and on fio servers, the layout
and cleanup jobs, `doctor --fio-jobfile` and `suites export`.

fio 3.33 reads a job file with fgets into 8192 bytes: the rest of a longer line is a line of
its own. iobench wrote a target's real path as JSON in one comment, where a control character
takes six characters, so a directory whose real path was 2.8 KB of them made a comment whose
third 8191-byte piece read ``exec_prerun=touch ...``, which fio ran as root. The end-to-end
test here rebuilds that directory, shows that fio does run the command from the old comment,
and that `iobench run` on it runs none.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import MINI_SUITE, Cli
from hosts import FioHosts, fio_hosts_fixture
from iobench.clients import MAX_REMOTE_DIR_BYTES, check_remote_path
from iobench.errors import UserError
from iobench.fio.jobfile import (
    LINE_BYTES,
    PATH_VALUE_BYTES,
    SECTION_BYTES,
    TARGET_LINK,
    UnsafeJobFile,
    build_cleanup_jobfile,
    build_jobfile,
    build_layout_jobfile,
    checked,
    plain_job,
    plain_layout_job,
)
from iobench.fio.runner import find_fio, run_fio
from iobench.model import Workload
from iobench.store import Store
from iobench.suites import load_suite
from iobench.suites.options import OPTION_KEYS
from iobench.targets import Reach

# -- what fio reads --------------------------------------------------------------------------

# fio logs this when a bssplit holds its maximum of 64 sizes, or a random_distribution its
# maximum of 256 zones (options.c split_parse_ddir), and keeps them all: the allow-list's
# longest values have that many.
HARMLESS = {"fio: hit max of 64 split entries", "fio: hit max of 256 split entries"}


@functools.cache
def fio_name(fio: str, key: str) -> str:
    """fio's own name for an option (``ss`` is ``steadystate``), as --showcmd prints it."""
    first = subprocess.run(
        [fio, f"--cmdhelp={key}"], capture_output=True, text=True, timeout=30, check=True
    ).stdout.splitlines()[0]
    return first.split(":", 1)[0].strip()


def written(text: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """The sections of a job file iobench wrote, each with its options as written."""
    sections: list[tuple[str, list[tuple[str, str | None]]]] = []
    for line in text.split("\n"):
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            sections.append((line[1:-1], []))
            continue
        key, eq, value = line.partition("=")
        sections[-1][1].append((key, value if eq else None))
    return sections


def showcmd(fio: str, text: str, where: Path) -> str:
    """fio's reading of ``text`` as a job file; fails unless fio read it without a word."""
    job = where / "read-by-fio.fio"
    job.write_text(text, encoding="utf-8")
    proc = subprocess.run(
        [fio, "--parse-only", "--showcmd", str(job)], capture_output=True, encoding="utf-8",
        timeout=60, check=False,
    )  # fmt: skip
    said = set(proc.stderr.splitlines()) - HARMLESS
    # fio --showcmd exits 0 even when it dropped a job it could not parse: stderr says so.
    assert proc.returncode == 0 and not said, proc.stderr[:2000]
    return proc.stdout


def assert_fio_reads_what_iobench_wrote(fio: str, text: str, where: Path) -> str:
    """Every line within fio's limits, and fio's --showcmd exactly the options written:
    section by section (fio prints ``--name=SECTION``, then the section's options in an
    order of its own), nothing more, nothing less. Returns what fio printed."""
    for line in text.split("\n"):
        assert line.isprintable(), repr(line[:200])
        assert len(line.encode()) <= LINE_BYTES, len(line.encode())
    shown = showcmd(fio, text, where)
    assert shown.startswith("fio ") and shown.endswith(" \n"), shown[:300]
    rest = shown[len("fio ") : -1]
    for name, options in written(text):
        if not name.startswith("global"):  # fio names no [global] section
            assert rest.startswith(f"--name={name} "), (name, rest[:300])
            rest = rest[len(f"--name={name} ") :]
        left = [
            f"--{fio_name(fio, key)}" + ("" if value is None else f"={value}") + " "
            for key, value in options
        ]
        left.sort(key=len, reverse=True)
        while left:
            token = next((t for t in left if rest.startswith(t)), None)
            assert token is not None, f"fio read {rest[:300]!r} where iobench wrote {left[:5]}"
            left.remove(token)
            rest = rest[len(token) :]
    assert rest == "", f"fio read what iobench never wrote: {rest[:500]!r}"
    assert " --exec_prerun" not in f" {shown}" and " --include" not in f" {shown}"
    return shown


def recorded_target(text: str) -> str:
    """The real path a job file records in its ``; target:`` comment, however many lines."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("; target: "))
    joined = "".join(
        line[2:] for line in itertools.takewhile(lambda x: x[:1] == ";", lines[start:])
    )
    path, _ = json.JSONDecoder().raw_decode(joined, len("target: "))
    assert isinstance(path, str)
    return path


# -- the longest and strangest inputs ------------------------------------------------------------

CONTROLS = "".join(map(chr, [*range(1, 32), 127]))
INJECTED = "\n[global]\nexec_prerun=touch /tmp/PWNED\n"
FIO_SYNTAX = "a;b#c$d$ncpus${HOME}\\e:f g (1+2) [global] include /etc/passwd exec_prerun=x "


def _upto(unit: str, limit: int = 4000, lead: str = "/") -> str:
    """``lead`` and ``unit`` repeated to at most ``limit`` bytes of file name (os.fsencode)."""
    count = (limit - len(lead)) // len(os.fsencode(unit))
    return lead + unit * count


# Paths of about 4000 bytes (the kernel's limit is 4095): what a target's real path can hold.
HOSTILE_PATHS = {
    "control characters": _upto(CONTROLS),
    "newline and [global]": _upto(INJECTED),
    "carriage returns": _upto("\r"),
    "bytes that are not UTF-8": os.fsdecode(b"/" + bytes(range(0x80, 0x100)) * 31),
    "bidi and separators": _upto("\u202e\u2066\u200f\u2028\u2029\ufeff"),
    "fio's own syntax": _upto(FIO_SYNTAX),
    "non-printable past U+FFFF": _upto("\U000e0001"),
    "a line of 8 KiB, then a newline": "/" + "A" * 8190 + INJECTED,
    "plain but too long for filename=": _upto("plain-", PATH_VALUE_BYTES + 7),
}


def maximal_values() -> dict[str, object]:
    """Every option of the suite allow-list at the longest or largest value it lets
    through, as a suite file gives it (randseed: the largest fio 3.33 itself reads and a
    TOML integer holds, 2**63-1; zones that add up to less than its size)."""
    distribution = "zoned_abs:100/1000000000000"
    while len(distribution) + len(":0/1000000000000") <= 4096:
        distribution += ":0/1000000000000"
    # The last (256th) zone's size takes exactly the characters that are left.
    distribution += ":0/1" + "0" * (4096 - len(distribution) - len(":0/1"))
    given: dict[str, object] = {
        "fsync": 2**31 - 1, "fdatasync": 2**31 - 1, "end_fsync": True, "fsync_on_close": True,
        "sync": "dsync", "refill_buffers": True, "zero_buffers": True, "scramble_buffers": True,
        "norandommap": True, "randrepeat": True, "invalidate": True, "randseed": 2**63 - 1,
        "buffer_compress_percentage": 100, "buffer_compress_chunk": "1g",
        "dedupe_percentage": 100, "blockalign": "1g", "random_distribution": distribution,
        "percentage_random": 100,
        "bssplit": ",".join(":".join(["1g/100"] + ["1g/000"] * 63) for _ in range(3)),
        "rate": "1T", "rate_iops": 2**31 - 1, "thinktime": "1h", "iodepth_batch_submit": 4096,
        "iodepth_batch_complete_min": 4096, "mem": "mmapshared",
        "cpus_allowed": ",".join([str(min(os.sched_getaffinity(0)))] * 2000),
        "cpus_allowed_policy": "split", "cpumask": hex(1 << min(os.sched_getaffinity(0))),
        "thread": True, "random_generator": "tausworthe64",
    }  # fmt: skip
    assert set(given) == set(OPTION_KEYS), "a new option: give it its longest value here"
    return given


def maximal_options() -> tuple[tuple[str, str], ...]:
    """:func:`maximal_values` as the allow-list hands them to fio."""
    return tuple((key, str(OPTION_KEYS[key](key, v))) for key, v in maximal_values().items())


LONGEST_NAME = "A" + "-._z9" * 12 + "bcd"  # 64 characters, NAME_RE's most
GLOBAL_NAME = "global" + "x" * 58  # fio would take a [global...] section for defaults


def maximal(name: str = LONGEST_NAME) -> Workload:
    w = Workload(
        name=name, rw="randrw", bs=1 << 30, iodepth=4096, numjobs=256, rwmixread=100,
        runtime_s=7 * 86400, ramp_s=7 * 86400, size=1 << 50, options=maximal_options(),
    )  # fmt: skip
    assert len(name) == 64
    return w


def test_the_maximal_inputs_are_what_the_limits_allow() -> None:
    """The inputs below are the limits' own: a value line is as long as a suite's option
    gets, and every path is near the kernel's 4095 bytes or past iobench's own limit."""
    longest = max(len(f"{k}={v}") for k, v in maximal_options())
    assert longest == len("random_distribution=") + 4096
    for name, path in HOSTILE_PATHS.items():
        size = len(os.fsencode(path))
        assert 3900 <= size <= 4095 or name.startswith(("a line", "plain")), (name, size)


# -- the gate -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("; a comment\rrw=write", "not printable"),
        ("rw=read\x00", "not printable"),
        ("; \x1b[2J", "not printable"),
        ("; \u2028exec_prerun=x", "not printable"),
        ("; " + "x" * (LINE_BYTES - 1), f"longer than {LINE_BYTES} bytes"),
        ("; " + "€" * (LINE_BYTES // 3 + 1), f"longer than {LINE_BYTES} bytes"),
        ("[" + "s" * (SECTION_BYTES + 1) + "]", f"over {SECTION_BYTES} characters"),
        ("[a b]", "not a [section]"),
        ("[a]]", "not a [section]"),
        ("[a] ; x", "not a [section]"),
        ("rate=1;exec_prerun=x", "fio would cut"),
        ("rate=1 # x", "fio would cut"),
        ("rate=$mb_memory", "fio would cut"),
        ("rate=1 ", "fio would cut"),
        ("include /etc/passwd", "neither a comment"),
        ("include=/etc/passwd", "neither a comment"),
        (" rw=read", "neither a comment"),
        ("exec prerun", "neither a comment"),
        ("filename=/" + "f" * PATH_VALUE_BYTES, f"path of over {PATH_VALUE_BYTES} bytes"),
        ("directory=/" + "é" * (PATH_VALUE_BYTES // 2), f"path of over {PATH_VALUE_BYTES} bytes"),
    ],
)
def test_the_gate_refuses_every_line_fio_would_misread(line: str, why: str) -> None:
    text = f"[global]\nsize=1m\n{line}\n[j]\nrw=read\n"
    with pytest.raises(UnsafeJobFile, match="line 3 ") as e:
        checked(text)
    assert why in e.value.message
    assert e.value.hint is not None and "bug in iobench" in e.value.hint
    assert all(c.isprintable() for c in e.value.message), "the message escapes what it quotes"


def test_the_gate_passes_lines_at_its_limits(real_fio: str, tmp_path: Path) -> None:
    """A comment of LINE_BYTES bytes (UTF-8), a section name of SECTION_BYTES characters and
    a filename of PATH_VALUE_BYTES bytes pass, and fio reads each as written."""
    euros = "; " + "€" * ((LINE_BYTES - 2) // 3)
    euros += "x" * (LINE_BYTES - len(euros.encode()))
    path = str(tmp_path) + "/" + "f" * (PATH_VALUE_BYTES - len(str(tmp_path)) - 1)
    section = "s" * SECTION_BYTES
    text = (
        f"{euros}\n[global]\nfilename={path}\nsize=1m\n{euros}\n[{section}]\nrw=read\nstonewall\n"
    )
    assert len(euros.encode()) == LINE_BYTES and len(path.encode()) == PATH_VALUE_BYTES
    assert checked(text) == text
    assert_fio_reads_what_iobench_wrote(real_fio, text, tmp_path)


def test_fio_is_never_started_on_a_job_file_the_gate_refuses(tmp_path: Path) -> None:
    """run_fio checks once more before it writes the file: nothing written, nothing run."""
    with pytest.raises(UnsafeJobFile):
        run_fio(find_fio(), "[j]\nfilename=/dev/null\nrw=read\nrate=1;x\n", tmp_path, timeout_s=5)
    assert list(tmp_path.iterdir()) == []


# -- the job files of a run on this host ----------------------------------------------------------


@pytest.mark.parametrize("kind", list(HOSTILE_PATHS))
def test_a_local_target_of_any_path_is_recorded_whole_and_fio_reads_only_iobench_options(
    real_fio: str, tmp_path: Path, kind: str
) -> None:
    path = HOSTILE_PATHS[kind]
    for text in (
        build_jobfile(maximal(), Reach.file(path), 1 << 50),
        build_jobfile(maximal(GLOBAL_NAME), Reach.file(path), 1 << 20),
        build_layout_jobfile(Reach.file(path), 1 << 50),
        build_layout_jobfile(Reach.file(path), 1 << 20, direct=False),
    ):
        assert recorded_target(text) == path, "the real path stays recorded, in full"
        assert f"filename={TARGET_LINK}" in text.split("\n")
        assert_fio_reads_what_iobench_wrote(real_fio, text, tmp_path)


# -- job files for fio servers (--clients) --------------------------------------------------------


def longest_remote_dir(base: str = "/") -> str:
    """A directory path of exactly MAX_REMOTE_DIR_BYTES bytes that check_remote_path takes:
    brackets, '=', quotes, shell characters and multibyte text, in components of at most
    240 bytes (a kernel's name is at most 255)."""
    text = itertools.cycle("[global]exec_prerun=touch_PWNED'\"`%()<>|&*?!~^{}@é€😀-,.+")
    path = base.rstrip("/") + "/a"
    while (left := MAX_REMOTE_DIR_BYTES - len(path.encode())) > 0:
        if len(path.rsplit("/", 1)[1].encode()) >= 240 and left >= 2:
            path += "/a"
            continue
        c = next(text)
        path += c if len(c.encode()) <= left else "a"
    check_remote_path(path)
    return path


def remote_file(directory: str, n: int = 99) -> str:
    """The test file's path on a server, named as engine/remote.py names it."""
    return f"{directory.rstrip('/')}/iobench-0123abcd-c{n}.dat"


def test_job_files_for_fio_servers_name_the_longest_path_allowed_as_it_is(
    real_fio: str, tmp_path: Path
) -> None:
    """The path goes to the server in filename=, so it must be one fio reads as itself:
    the longest remote directory allowed, with its test file, is read exactly."""
    directory = longest_remote_dir()
    assert len(directory.encode()) == MAX_REMOTE_DIR_BYTES
    path = remote_file(directory, 10**30)  # room for a client number of 31 digits
    for text in (
        build_jobfile(maximal(), Reach.file(path), 1 << 50, client="c" + "9" * 31),
        build_jobfile(maximal(GLOBAL_NAME), Reach.file(path), 1 << 20, client="c1"),
        build_layout_jobfile(Reach.file(path), 1 << 50, remote=True),
        build_cleanup_jobfile(path),
    ):
        assert recorded_target(text) == path
        shown = assert_fio_reads_what_iobench_wrote(real_fio, text, tmp_path)
        assert f" --filename={path} " in f" {shown}"


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/mnt/a\n[global]\nexec_prerun=touch /tmp/PWNED", "U+000A, which is not printable"),
        ("/mnt/a\rb", "U+000D, which is not printable"),
        ("/mnt/\x1b[2J", "U+001B, which is not printable"),
        (os.fsdecode(b"/mnt/\xff"), "a byte that is not UTF-8"),
        ("/mnt/\u202eevil", "U+202E, which is not printable"),
        ("/mnt/\u2028x", "U+2028, which is not printable"),
        ("/mnt/a;exec_prerun=x", "fio would misread this path"),
        ("/mnt/a b", "fio would misread this path"),
        ("/mnt/a\u00a0b", "U+00A0, which is not printable"),
        (longest_remote_dir() + "x", f"at most {MAX_REMOTE_DIR_BYTES} bytes, not "),
        (longest_remote_dir() + "é", f"at most {MAX_REMOTE_DIR_BYTES} bytes, not "),
    ],
)
def test_a_remote_path_no_job_file_can_carry_is_refused_early(path: str, said: str) -> None:
    with pytest.raises(UserError) as e:
        check_remote_path(path)
    assert said in e.value.message
    assert e.value.hint and all(c.isprintable() for c in e.value.message)
    assert len(e.value.message) < 600, "a long path is cut in the message"


def test_a_remote_path_too_long_is_refused_by_the_cli_before_anything_starts(cli: Cli) -> None:
    code, out, err = cli("run", longest_remote_dir() + "/x", "--clients", "127.0.0.1:1")
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"may be at most {MAX_REMOTE_DIR_BYTES} bytes" in err
    assert "use a shorter path to the directory on every client" in err


# -- doctor: plain jobs and --fio-jobfile -------------------------------------------------------


@pytest.mark.parametrize("kind", list(HOSTILE_PATHS))
def test_a_plain_job_for_a_path_fio_cannot_take_goes_through_the_link(
    real_fio: str, tmp_path: Path, kind: str
) -> None:
    path = HOSTILE_PATHS[kind]
    title = f"iobench: workload {LONGEST_NAME} on {json.dumps(path)}"
    for text in (
        plain_job(
            maximal(), Reach.file(path), 1 << 50, section=LONGEST_NAME + ".target99", title=title
        ),
        plain_layout_job(
            Reach.file(path), 1 << 50, direct=True, section="iobench:layout", title=title
        ),
    ):
        assert recorded_target(text) == path
        assert f"filename={TARGET_LINK}" in text.split("\n")
        assert_fio_reads_what_iobench_wrote(real_fio, text, tmp_path)


def test_a_plain_path_up_to_the_limit_is_named_and_past_it_goes_through_the_link(
    real_fio: str, tmp_path: Path
) -> None:
    at = str(tmp_path) + "/" + "p:" * ((PATH_VALUE_BYTES - len(str(tmp_path)) - 1) // 3)
    at += "p" * (PATH_VALUE_BYTES - len(at.replace(":", "\\:")))
    value = at.replace(":", "\\:")
    assert len(value.encode()) == PATH_VALUE_BYTES
    text = plain_job(maximal(), Reach.file(at), 1 << 20, section="s", title="t")
    assert f"filename={value}" in text.split("\n")
    assert f" --filename={value} " in assert_fio_reads_what_iobench_wrote(real_fio, text, tmp_path)
    over = plain_job(maximal(), Reach.file(at + "p"), 1 << 20, section="s", title="t")
    assert f"filename={TARGET_LINK}" in over.split("\n") and recorded_target(over) == at + "p"
    assert f"it is {PATH_VALUE_BYTES + 1} bytes long, and iobench writes at most" in over
    assert_fio_reads_what_iobench_wrote(real_fio, over, tmp_path)


# -- a real directory whose path once became fio options ------------------------------------------

OLD_HEAD = "; target: "
# Mostly characters of one byte that JSON writes in six (control characters, bytes that are
# not UTF-8), so that the path fits the kernel's 4095 bytes; and bidi marks and line breaks.
FILLERS = "\x01\x1b\udcff\x0b\udc80\x1f\x10\x02\x03\x04" * 5 + '\u202e\n\r\t\\"\u2028\x7f'


def _old_width(path: str) -> int:
    """The bytes of iobench's old one-line comment (``; target: "<JSON>" ...``) up to the
    end of ``path``'s JSON."""
    return len(OLD_HEAD) + len(json.dumps(path)) - 1


def _pad(path: str, until: int, fill: Iterator[str]) -> str:
    """``path`` grown by directories of hostile characters until the old comment holds
    exactly ``until`` bytes up to its end."""
    while (left := until - _old_width(path)) > 0:
        if len(os.fsencode(path.rsplit("/", 1)[1])) >= 200 and left >= 2:
            path += "/"
            continue
        c = next(fill)
        path += c if len(json.dumps(c)) - 2 <= left else "a"
    return path


def attack_directory(tmp_path: Path, marker: Path, *, utf8: bool = False) -> Path:
    """A real directory whose path, JSON-quoted in one comment, put ``[global]`` at the
    start of fio's second 8191-byte piece of the line and ``exec_prerun=touch MARKER;`` at
    the start of its third: about 3 KB of control characters, bytes that are not UTF-8
    (none with ``utf8``), bidi marks and line breaks, the issue's directory."""
    fill = itertools.cycle(
        FILLERS.replace("\udcff", "\x05").replace("\udc80", "\x06") if utf8 else FILLERS
    )
    path = _pad(f"{tmp_path}/d/", 8191, fill) + "[global]"
    path = _pad(path, 2 * 8191, fill) + f"exec_prerun=touch {marker};"
    path += "/x\n[evil]\nexec_prerun=touch PWNED\r"
    real = Path(path)
    real.mkdir(parents=True)
    return real


def test_iobench_runs_nothing_from_a_target_path_that_fio_ran_as_a_command(
    cli: Cli, real_fio: str, tmp_path: Path, mini_suite: str, isolated_db: Path
) -> None:
    marker = tmp_path / "marker"
    # Bytes that are not UTF-8 in a target's path stop `iobench run` before anything runs,
    # in the results store (not a job file's matter); doctor and export take them, below.
    real = attack_directory(tmp_path, marker, utf8=True)
    assert 2700 < len(os.fsencode(str(real))) < 4000
    # The attack is real: fio runs the command from iobench's old comment.
    test_file = str(real / "iobench-1-0123abcd.dat")
    old = f"{OLD_HEAD}{json.dumps(test_file)} (fio reaches it as ./{TARGET_LINK})"
    assert len(old.encode()) > 2 * 8191
    shown = showcmd(real_fio, f"{old}\n[global]\nfilename=x\nsize=1m\n[rr]\nrw=read\n", tmp_path)
    assert f"--exec_prerun=touch {marker} " in shown

    link = tmp_path / "plain"  # a plainly named link; iobench records the real path
    link.symlink_to(real)
    code, out, err = cli("run", str(link), "--suite", mini_suite, "--json")
    assert code == 0, err[-3000:]
    doc = json.loads(out)
    assert doc["status"] == "complete"
    assert not marker.exists() and not (tmp_path / "PWNED").exists()
    assert list(real.iterdir()) == [], "the test file is removed"
    with Store.open(isolated_db) as store:
        results = store.get_run(doc["run_id"], with_raw=True).results
    assert {r.workload for r in results} == {"rr", "rw"}
    for r in results:
        assert recorded_target(r.job_file).startswith(f"{real}/iobench-")
        assert_fio_reads_what_iobench_wrote(real_fio, r.job_file, tmp_path)


def test_doctor_fio_jobfile_for_hostile_paths_is_read_as_written(
    cli: Cli, real_fio: str, tmp_path: Path, mini_suite: str
) -> None:
    """The plan for the attack's directory, named by its link and by itself: every step's
    job goes through ./target, the header and the comments hold the paths."""
    real = attack_directory(tmp_path, tmp_path / "marker")
    link = tmp_path / "plain"
    link.symlink_to(real)
    for i, target in enumerate((str(link), str(real))):
        plan = tmp_path / f"plan{i}.fio"
        code, _, err = cli("doctor", target, "--suite", mini_suite, "--fio-jobfile", str(plan))
        assert code == 0 and "Traceback" not in err, err[-2000:]
        text = plan.read_text(encoding="utf-8")
        assert [name for name, _ in written(text)] == ["iobench:layout", "rr", "rw"]
        assert recorded_target(text).startswith(f"{real}/iobench-")
        assert_fio_reads_what_iobench_wrote(real_fio, text, tmp_path)
        assert not list(real.glob("iobench-*")), "doctor writes nothing there"


# -- suites export ----------------------------------------------------------------------------


def maximal_suite_file(directory: Path) -> Path:
    """A TOML suite with the longest name, a hostile description, a workload named as
    iobench's old layout section, one named global..., and every option at its most."""
    options = "\n".join(f"{key} = {json.dumps(v)}" for key, v in maximal_values().items())
    description = (INJECTED + FIO_SYNTAX.replace("${HOME}", "$HOME") + CONTROLS) * 20
    workload = '\n[[workload]]\nname = {name}\nrw = "randrw"\nrwmixread = 100\nbs = "1g"\n'
    text = (
        f"name = {json.dumps(LONGEST_NAME)}\ndescription = {json.dumps(description[:4096])}\n"
        f'[defaults]\nruntime = "7d"\nramp = "7d"\nsize = "1p"\niodepth = 16\n'
        f"numjobs = 1\n{options}\n"
    )
    for name in ("iobench-layout", GLOBAL_NAME, LONGEST_NAME):
        text += workload.format(name=json.dumps(name))
    suite = directory / "s.toml"
    suite.write_text(text, encoding="utf-8")
    return suite


def test_suites_export_of_the_maximal_suite_is_read_as_written_and_reads_back(
    cli: Cli, real_fio: str, tmp_path: Path
) -> None:
    """The suite file in the attack's directory (its path is in the header), exported for
    a target named by a link: fio reads the options written; read back, it is the same
    suite, each workload under its own name (iobench-layout too)."""
    real = attack_directory(tmp_path, tmp_path / "marker")
    suite = maximal_suite_file(real)
    link = tmp_path / "plain"
    link.symlink_to(real)
    out = tmp_path / f"{LONGEST_NAME}.fio"  # a job file's suite is named after the file
    code, stdout, err = cli("suites", "export", str(suite), "-o", str(out), "--target", str(link))
    assert (code, stdout) == (0, ""), err[-2000:]
    text = out.read_text(encoding="utf-8")
    sections = [name for name, _ in written(text)]
    assert sections == ["global", "iobench:layout", "iobench-layout", "job-" + GLOBAL_NAME,
                        LONGEST_NAME]  # fmt: skip
    assert f"directory={link}" in text.split("\n")
    shown = assert_fio_reads_what_iobench_wrote(real_fio, text, tmp_path)
    assert f" --name=job-{GLOBAL_NAME} " in shown and f" --name={GLOBAL_NAME} " in shown
    back, before = load_suite(str(out)), load_suite(str(suite))
    assert back.name == before.name
    assert [w.name for w in back.workloads] == ["iobench-layout", GLOBAL_NAME, LONGEST_NAME]
    for w, was in zip(back.workloads, before.workloads, strict=True):
        assert (w.rw, w.bs, w.iodepth, w.numjobs, w.size, w.runtime_s, w.ramp_s) == (
            was.rw, was.bs, was.iodepth, was.numjobs, was.size, was.runtime_s, was.ramp_s
        )  # fmt: skip
        assert sorted(w.options) == sorted(was.options)


def test_suites_export_for_a_target_path_too_long_for_a_job_file_says_what_to_do(
    cli: Cli, tmp_path: Path
) -> None:
    deep = Path(_upto("d" * 200 + "/", PATH_VALUE_BYTES + 300, lead=str(tmp_path) + "/"))
    deep.mkdir(parents=True)
    code, out, err = cli("suites", "export", "quick", "--target", str(deep))
    assert code == 2 and out == "" and "Traceback" not in err
    assert "fio cannot take this path in a job file (it is " in err
    assert f"iobench writes at most {PATH_VALUE_BYTES} bytes of a path in a job file" in err
    assert "symbolic link" in err
    link = tmp_path / "short"
    link.symlink_to(deep)
    code, out, err = cli("suites", "export", "quick", "--target", str(link))
    assert code == 0 and f"\ndirectory={link}\n" in out, err


# -- a run on a fio server, at the longest remote path --------------------------------------------


@pytest.fixture(scope="module")
def one_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FioHosts]:
    yield from fio_hosts_fixture(tmp_path_factory.mktemp("host"), 1)


@pytest.mark.root
def test_a_run_on_a_fio_server_at_the_longest_remote_path(
    cli: Cli, real_fio: str, one_host: FioHosts, tmp_path: Path, isolated_db: Path
) -> None:
    """The server reads the job file from a buffer split at "\\n" only; the directory at
    the longest path allowed: the run completes, every file is laid out, measured and
    removed there, and every job file names it whole."""
    one_host.ensure_running()
    directory = Path(longest_remote_dir(str(tmp_path)))
    directory.mkdir(parents=True)
    suite = tmp_path / "mini.toml"
    suite.write_text(MINI_SUITE)
    host = one_host.hosts[0].name
    code, out, err = cli("run", str(directory), "--suite", str(suite), "--clients", host, "--json")
    assert code == 0, err[-3000:]
    doc = json.loads(out)
    assert doc["status"] == "complete"
    assert list(directory.iterdir()) == [], "the cleanup job removed the test file"
    with Store.open(isolated_db) as store:
        results = store.get_run(doc["run_id"], with_raw=True).results
    jobs = [r.job_file for r in results if r.client != "all"]
    assert len(jobs) == 2
    for job in jobs:
        (filename,) = [line[9:] for line in job.split("\n") if line.startswith("filename=")]
        assert filename.startswith(f"{directory}/iobench-") and filename.endswith("-c1.dat")
        assert_fio_reads_what_iobench_wrote(real_fio, job, tmp_path)
