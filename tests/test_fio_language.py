"""fio's job-file language as fio reads it: include, ${VAR}, $ncpus-style keywords and
arithmetic (iobench.fio.language), checked against fio itself where it can say."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from iobench.errors import SuiteError
from iobench.fio.language import Files, HostFigures, arithmetic, expand
from iobench.suites.loader import load_suite_file, parse_job_file
from iobench.suites.userfile import exists, read_suite_file

HOST = HostFigures(ncpus=4, mb_memory=8192, pagesize=4096)
FILES = Files(read=read_suite_file, exists=exists)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_an_include_is_read_from_the_including_files_directory(tmp_path: Path, cwd: Path) -> None:
    main = write(tmp_path / "a" / "main.fio", "[global]\ninclude common.fio\n[j]\nrw=read\n")
    write(tmp_path / "a" / "common.fio", "bs=16k\nruntime=1\nsize=8m\n")
    suite = load_suite_file(main)
    (w,) = suite.workloads
    assert (w.bs, w.runtime_s, w.size) == (16384, 1.0, 8 << 20)
    assert suite.includes == (str(tmp_path / "a" / "common.fio"),)
    assert any("includes" in n.message for n in suite.notes)


def test_an_include_in_the_working_directory_comes_first_as_for_fio(
    tmp_path: Path, cwd: Path, real_fio: str
) -> None:
    """fio opens the name from its working directory first, then from the including file's
    directory: both read the same file."""
    main = write(tmp_path / "a" / "main.fio", "[global]\ninclude common.fio\n[j]\nrw=read\n")
    write(tmp_path / "a" / "common.fio", "bs=16k\n")
    write(cwd / "common.fio", "bs=64k\n")
    (w,) = load_suite_file(main).workloads
    shown = subprocess.run([real_fio, "--showcmd", str(main)], capture_output=True, text=True)
    assert "--bs=64k" in shown.stdout and w.bs == 65536
    (cwd / "common.fio").unlink()
    (w,) = load_suite_file(main).workloads
    shown = subprocess.run([real_fio, "--showcmd", str(main)], capture_output=True, text=True)
    assert "--bs=16k" in shown.stdout and w.bs == 16384


def test_nested_includes_and_their_problems_name_the_included_file(
    tmp_path: Path, cwd: Path
) -> None:
    main = write(tmp_path / "m.fio", "[global]\ninclude sub/x.fio\n[j]\nrw=read\n")
    write(tmp_path / "sub" / "x.fio", "iodepth=4\ninclude y.fio\n")
    write(tmp_path / "sub" / "y.fio", "numjobs=2\nbogus_opt=1\n")
    with pytest.raises(SuiteError) as info:
        load_suite_file(main)
    (problem,) = info.value.problems
    assert (problem.file, problem.line) == (str(tmp_path / "sub" / "y.fio"), 2)
    assert f'{tmp_path / "sub" / "y.fio"}:2: [global]: unknown option "bogus_opt"' in (
        info.value.message
    )


@pytest.mark.parametrize(
    ("files", "said"),
    [
        (
            {"m.fio": "[j]\ninclude m.fio\n"},
            "the files include each other in a loop (m.fio -> m.fio)",
        ),
        (
            {
                "m.fio": "[j]\ninclude a.inc\n",
                "a.inc": "include b.inc\n",
                "b.inc": "include a.inc\n",
            },
            "a loop (m.fio -> a.inc -> b.inc -> a.inc)",
        ),
        ({"m.fio": "[j]\ninclude none.fio\n"}, "include none.fio: "),
        ({"m.fio": "[j]\ninclude d\n", "d/x": "bs=4k\n"}, "is a directory, not a suite file"),
        ({"m.fio": "[j]\ninclude s.inc\n", "s.inc": "[k]\nrw=read\n"}, "holds options only"),
    ],
)
def test_an_include_that_cannot_be_read_as_fio_reads_it_is_a_problem_at_its_line(
    tmp_path: Path, cwd: Path, files: dict[str, str], said: str
) -> None:
    for name, text in files.items():
        write(tmp_path / name, text)
    with pytest.raises(SuiteError) as info:
        load_suite_file(tmp_path / "m.fio")
    assert any(said in p.message for p in info.value.problems), info.value.message


def test_an_included_secret_is_read_with_the_users_rights_and_never_quoted(
    tmp_path: Path, cwd: Path
) -> None:
    """An include of a file the user may not read (run under sudo: the invoking user's
    rights) is refused without a line of it in the message."""
    secret = write(tmp_path / "secret", "password=hunter2\n")
    secret.chmod(0o600)
    main = write(tmp_path / "m.fio", f"[j]\nrw=read\ninclude {secret}\n")
    text = main.read_text()
    expanded = expand(text, str(main), Files(read=_refuse, exists=exists), {}, HOST)
    assert "hunter2" not in repr(expanded.problems) and expanded.problems


def _refuse(path: str) -> str:
    raise SuiteError(path, "cannot be read: Permission denied")


def test_variables_are_replaced_and_recorded() -> None:
    suite = parse_job_file(
        "[global]\nsize=${SZ}\nnumjobs=$ncpus\niodepth=($ncpus*8)\nbs=$pagesize\n"
        "runtime=${T}s\n[j]\nrw=randread\n",
        "v.fio",
        "v.fio",
        environ={"SZ": "64m", "T": "2"},
        host=HOST,
    )
    (w,) = suite.workloads
    assert (w.size, w.numjobs, w.iodepth, w.bs, w.runtime_s) == (64 << 20, 4, 32, 4096, 2.0)
    assert set(suite.variables) == {
        ("${SZ}", "64m", "environment"),
        ("${T}", "2", "environment"),
        ("$ncpus", "4", "host"),
        ("$pagesize", "4096", "host"),
        ("(4*8)", "32", "arithmetic"),
    }
    (note,) = [n for n in suite.notes if "variables" in n.message]
    assert "${SZ} = 64m (environment)" in note.message and "$ncpus = 4 (host)" in note.message


def test_variables_agree_with_fio_on_this_host(real_fio: str, tmp_path: Path) -> None:
    """What iobench replaces $ncpus, $mb_memory and $pagesize with is what fio does here."""
    job = write(tmp_path / "v.fio", "[j]\nnumjobs=$ncpus\nnrfiles=($pagesize/1024)\n")
    shown = subprocess.run([real_fio, "--showcmd", str(job)], capture_output=True, text=True)
    here = HostFigures.here()
    assert f"--numjobs={here.ncpus}" in shown.stdout
    assert f"--nrfiles={here.pagesize // 1024}" in shown.stdout
    assert here.mb_memory == os.sysconf("SC_PHYS_PAGES") * here.pagesize >> 20


@pytest.mark.parametrize(
    ("text", "value"),
    [("(1+2*3)", 7), ("(7/2)", 3), ("(-4+10)", 6), ("((2+2)*(3+3))", 24), ("(10%4)", 2)],
)
def test_arithmetic(text: str, value: int) -> None:
    assert arithmetic(text) == value


@pytest.mark.parametrize(
    "text",
    ["(2**64)", "(1/0)", "(__import__('os'))", "(1e9)", "(1.5*2)", "(" * 300 + "1" + ")" * 300,
     "(9999999999999999999*9999999999999999999)"],
)  # fmt: skip
def test_arithmetic_refuses_anything_else(text: str) -> None:
    assert arithmetic(text) is None


@pytest.mark.parametrize(
    ("text", "kb_base", "value"),
    [("4k", 1024, 4096), ("4KiB", 1024, 4000), ("4KiB", 1000, 4096), ("4k", 1000, 4000),
     ("0x1000", 1024, 4096), ("1g", 1024, 1 << 30), ("512", 1024, 512), ("64mb", 1024, 64 << 20)],
)  # fmt: skip
def test_one_reading_of_fios_sizes_for_job_files_and_imports(
    text: str, kb_base: int, value: int
) -> None:
    from iobench.fio.language import fio_bytes
    from iobench.fio.options import fio_size

    assert fio_bytes(text, kb_base) == value == fio_size(text, kb_base)


@pytest.mark.parametrize("text", ["4 k", "1.5g", "4kx", "-4k", "4k-8k", "50%"])
def test_what_fio_misreads_is_refused_in_a_job_file_and_unknown_in_an_import(text: str) -> None:
    """fio reads "4 k" as 4 bytes and "1.5g" as 1: a job file is told, an import keeps no
    figure (missing, never a guess)."""
    from iobench.fio.language import fio_bytes
    from iobench.fio.options import fio_size

    with pytest.raises(ValueError):
        fio_bytes(text)
    assert fio_size(text) is None or text == "4kx"  # fio's first-letter rule: 4 KiB


def test_a_value_with_a_keyword_is_computed_whole_as_fio_has_bc_do_it(
    real_fio: str, tmp_path: Path
) -> None:
    """fio (init.c bc_calc) hands a value holding $ncpus, $mb_memory or $pagesize to bc,
    parentheses or not; iobench computes the same and fio --showcmd agrees."""
    text = "[j]\nrw=read\nsize=10*$pagesize\nnumjobs=$ncpus*2-1\niodepth=2*(1+$ncpus)\n"
    here = HostFigures.here()
    suite = parse_job_file(text, "k.fio", "k.fio", environ={}, host=here)
    (w,) = suite.workloads
    assert (w.size, w.numjobs, w.iodepth) == (
        10 * here.pagesize,
        here.ncpus * 2 - 1,
        2 * (1 + here.ncpus),
    )
    shown = subprocess.run(
        [real_fio, "--showcmd", str(write(tmp_path / "k.fio", text))],
        capture_output=True,
        text=True,
    ).stdout
    assert f"--size={10 * here.pagesize}" in shown
    assert f"--numjobs={here.ncpus * 2 - 1}" in shown
    assert f"--iodepth={2 * (1 + here.ncpus)}" in shown
    with pytest.raises(SuiteError) as info:
        parse_job_file("[j]\nrw=read\nsize=4k*$ncpus\n", "k.fio", "k.fio", environ={}, host=HOST)
    assert "fio computes a value holding $ncpus" in info.value.message


@pytest.mark.parametrize(
    ("line", "key", "value"),
    [
        ("iodepth=128*${LF}", "iodepth", 128),  # xfstests' LOAD_FACTOR
        ("iodepth=16/2", "iodepth", 16),
        ("numjobs=2+1", "numjobs", 2),
        ("runtime=100*1", "runtime_s", 100.0),
    ],
)
def test_arithmetic_without_parentheses_is_what_fio_reads_and_is_said(
    line: str, key: str, value: object
) -> None:
    """fio computes nothing else: strtoll reads the leading number (runtime=2*1 runs 2 s
    under fio 3.33); iobench runs that, and says so in a note."""
    suite = parse_job_file(
        f"[j]\nrw=read\nsize=1m\n{line}\n", "a.fio", "a.fio", environ={"LF": "3"}, host=HOST
    )
    (w,) = suite.workloads
    assert getattr(w, key) == value
    (note,) = [n for n in suite.notes if "variables" in n.message]
    assert "(fio reads the leading number)" in note.message


def test_an_option_that_takes_a_range_keeps_it() -> None:
    suite = parse_job_file(
        "[j]\nrw=read\nsize=8m\nfilesize=1m-4m\nstartdelay=0-2\nbsrange=4k-16k\n",
        "r.fio",
        "r.fio",
        environ={},
        host=HOST,
    )
    options = dict(suite.workloads[0].options)
    assert options["filesize"] == "1m-4m" and options["startdelay"] == "0-2"
    assert not [n for n in suite.notes if "leading number" in n.message]
