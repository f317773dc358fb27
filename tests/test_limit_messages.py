"""A refused value is shown as the user wrote it (issue 22): a fio job file's `10081m`, not
the 604860.0 seconds iobench converted it to; `--size 1.5P`, not 1536T. Every bound of a
duration, size, rate and count, in a job file, a TOML suite and the CLI. No fio runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Cli
from iobench.errors import SuiteError
from iobench.suites import parse_job_file, parse_suite

# The bounds as the messages say them.
WEEK = "must be at most 7d (a week; no measurement needs longer)"
WARM = "must be at most 7d (a week; no warm-up needs longer)"
PETA = "must be at most 1P (larger than any single device)"
RATE = "must be at most 1T/s (faster than any storage; a higher cap is no cap)"
THINK = "must be at most 1h (fio counts it in microseconds in 32 bits, about 71 minutes)"
DEPTH = "must be a whole number from 1 to 4096 (deeper queues only exhaust kernel and fio memory)"
JOBS = "must be a whole number from 1 to 256 (each job is a process; more would exhaust the host)"
LARGER = "block sizes must be at most 1G, like bs;"
U64 = "a whole number from 0 to 18446744073709551615"
INT32 = "must be a whole number from 1 to 2147483647"

JOB = "[w]\nrw=randrw\nbs=4k\niodepth=1\nnumjobs=1\nruntime=1s\nsize=1m\n"

# (a line of a job's section, what the problem says) -- each line replaces the job's own key
JOB_LIMITS = [
    ("runtime=10081m", f'runtime {WEEK}, not "10081m"'),
    ("runtime=168h1", 'runtime must be a whole number with an optional unit'),
    ("timeout=604801", f'timeout {WEEK}, not "604801"'),
    ("runtime=0m", 'runtime must be longer than 0 seconds, not "0m"'),
    ("ramp_time=8d", f'ramp_time {WARM}, not "8d"'),
    ("size=2P", f'size {PETA}, not "2P"'),
    ("size=1025t", f'size {PETA}, not "1025t"'),
    ("size=0x0", 'size must be at least 1 byte, not "0x0"'),
    ("size=0k", 'size must be at least 1 byte, not "0k"'),
    ("bs=2g", 'bs must be at most 1G, not "2g"'),
    ("blocksize=0x80000000", 'blocksize must be at most 1G, not "0x80000000"'),
    ("blockalign=2GiB", 'blockalign must be at most 1G, not "2GiB"'),
    ("buffer_compress_chunk=0k", 'buffer_compress_chunk must be at least 1 byte, not "0k"'),
    ("rate=2t", f'rate {RATE}, not "2t"'),
    ("thinktime=2h", f'thinktime {THINK}, not "2h"'),
    ("thinktime=3600000001", f'thinktime {THINK}, not "3600000001"'),
    ("iodepth=0x2000", f'iodepth {DEPTH}, not "0x2000"'),
    ("numjobs=0x101", f'numjobs {JOBS}, not "0x101"'),
    ("rwmixread=0x65", 'rwmixread must be a whole number from 0 to 100, not "0x65"'),
    ("rate_iops=0x80000000", f'rate_iops {INT32.replace("1 to", "0 to")}, not "0x80000000"'),
    ("fsync=0x80000000", f'fsync {INT32.replace("1 to", "0 to")}, not "0x80000000"'),
    ("randseed=0x10000000000000000", f'randseed must be {U64}, not "0x10000000000000000"'),
    ("iodepth_batch=0x1001", 'iodepth_batch must be a whole number from 0 to 4096, not "0x1001"'),
    ("bssplit=4k/50:2g/50", f'bssplit {LARGER} "2g/50" in "4k/50:2g/50" is larger'),
    ("bssplit=4k/5,0x40000001/1", f'bssplit {LARGER} "0x40000001/1" in "4k/5,0x40000001/1"'),
    ("size=2k", 'size ("2k", 2048 bytes) must be at least bs ("4k", 4096 bytes)'),
]  # fmt: skip


def _job_problem(line: str, global_section: bool = False) -> str:
    key = line.split("=", 1)[0]
    kept = [k for k in JOB.splitlines()[1:] if k.split("=")[0] != key]
    if key in ("timeout", "blocksize"):
        kept = [k for k in kept if not k.startswith(("runtime=", "bs="))]
    text = "\n".join(["[global]", line, "[w]", *kept] if global_section else ["[w]", *kept, line])
    with pytest.raises(SuiteError) as e:
        parse_job_file(text + "\n", "job.fio", "job.fio")
    return "\n".join(p.message for p in e.value.problems)


@pytest.mark.parametrize(("line", "said"), JOB_LIMITS, ids=[line for line, _ in JOB_LIMITS])
def test_a_job_file_value_is_shown_as_written(line: str, said: str) -> None:
    problem = _job_problem(line)
    assert said in problem
    assert "." not in problem.split(", not ")[-1].strip('"'), "no converted float"


@pytest.mark.parametrize("line", ["runtime=10081m", "size=2P", "iodepth=0x2000", "rate=2t"])
def test_a_global_sections_value_is_shown_as_written_too(line: str) -> None:
    problem = _job_problem(line, global_section=True)
    assert problem.startswith("[global]: ")
    assert f'not "{line.split("=", 1)[1]}"' in problem


def test_kb_base_changes_what_a_value_is_not_how_it_is_shown() -> None:
    """1126t is 1.0P with kb_base=1024 but 1.126P, over the bound, with kb_base=1000."""
    text = "[global]\nkb_base=1000\n[w]\nrw=read\nbs=4k\nsize=1126t\nruntime=1s\n"
    with pytest.raises(SuiteError) as e:
        parse_job_file(text, "job.fio", "job.fio")
    (problem,) = e.value.problems
    assert problem.message.endswith(f'size {PETA}, not "1126t"')


TOML = """\
name = "t"
description = "limits"
[[workload]]
name = "w"
rw = "randread"
bs = "4k"
iodepth = 1
numjobs = 1
runtime = "1s"
size = "1M"
"""


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('runtime = "10081m"', f'runtime {WEEK}, not "10081m"'),
        ("runtime = 604801", f"runtime {WEEK}, not 604801"),
        ('size = "1.5P"', f'size {PETA}, not "1.5P"'),
        ('size = "0k"', 'size must be at least 1 byte, not "0k"'),
        ('size = "2k"', 'size ("2k", 2048 bytes) must be at least bs ("4k", 4096 bytes)'),
        ("size = 2048", 'size (2048 bytes) must be at least bs ("4k", 4096 bytes)'),
        ('thinktime = "61m"', f'thinktime {THINK}, not "61m"'),
        ('rate = "2T/s"', f'rate {RATE}, not "2T/s"'),
        ("iodepth = 4097", f"iodepth {DEPTH}, not 4097"),
    ],
)  # fmt: skip
def test_a_toml_value_is_shown_as_written(line: str, said: str) -> None:
    key = line.split(" = ")[0]
    text = "\n".join(k for k in TOML.splitlines() if not k.startswith(key + " ")) + "\n" + line
    with pytest.raises(SuiteError) as e:
        parse_suite(text + "\n", "t.toml", "t.toml")
    assert e.value.message.endswith(said)


@pytest.mark.parametrize(
    "command", [("doctor", "{tmp}"), ("suites", "export", "quick"), ("sweep", "{tmp}")]
)
@pytest.mark.parametrize(
    ("option", "said"),
    [
        (("--runtime", "605000"), f"--runtime {WEEK}, not 605000"),
        (("--runtime", "168.5h"), f"--runtime {WEEK}, not 168.5h"),
        (("--runtime", "10081m"), f"--runtime {WEEK}, not 10081m"),
        (("--runtime", "9" * 29 + "d"), f"--runtime {WEEK}, not {'9' * 29}d"),
        (("--runtime", "0m"), "--runtime must be longer than 0 seconds, not 0m"),
        (("--runtime", "0.0s"), "--runtime must be longer than 0 seconds, not 0.0s"),
        (("--ramp", "8d"), f"--ramp {WARM}, not 8d"),
        (("--size", "1.5P"), f"--size {PETA}, not 1.5P"),
        (("--size", "2000000000000000000"), f"--size {PETA}, not 2000000000000000000"),
        (("--size", "0k"), "--size must be at least 1 byte, not 0k"),
    ],
)  # fmt: skip
def test_an_option_is_shown_as_typed(
    cli: Cli, tmp_path: Path, command: tuple[str, ...], option: tuple[str, str], said: str
) -> None:
    args = [a.format(tmp=tmp_path) for a in command]
    code, out, err = cli(*args, *option)
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == f"iobench: error: {said}"


@pytest.mark.parametrize("command", [("characterize", "{tmp}"), ("doctor", "{tmp}")])
def test_a_size_option_smaller_than_a_block_is_shown_as_typed(
    cli: Cli, tmp_path: Path, command: tuple[str, ...]
) -> None:
    args = [a.format(tmp=tmp_path) for a in command]
    code, _, err = cli(*args, "--size", "0k")
    assert (code, err.splitlines()[0]) == (
        2,
        "iobench: error: --size must be at least 1 byte, not 0k",
    )
    code, _, err = cli("doctor", str(tmp_path), "--size", "2k")
    assert code == 2
    assert err.startswith(
        "iobench: error: --size 2k (2048 bytes) is smaller than the block size of "
    )
