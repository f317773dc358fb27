"""fio runner: real fio for the happy path, a fake fio on PATH for every fault."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import held_open, processes_with
from iobench.errors import FioFailed, FioMissing
from iobench.fio.jobfile import build_jobfile, build_layout_jobfile
from iobench.fio.runner import Held, LiveStats, find_fio, fio_parse_only, run_fio
from iobench.model import Workload
from iobench.targets import Reach


def _job(path: Path, runtime_s: float = 1.0) -> str:
    """A 4k random-read job over ``path`` (held open by :func:`_held`)."""
    w = Workload("rr", "randread", 4096, 4, 1, ioengine="libaio", runtime_s=runtime_s)
    path.write_bytes(os.urandom(4 << 20))
    return build_jobfile(w, Reach.file(str(path)), 4 << 20)


@pytest.mark.fio
def test_real_fio_run_gives_results_and_live_progress(real_fio: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    seen: list[LiveStats] = []
    run = run_fio(
        find_fio(), _job(work / "t.dat", 2.0), work, timeout_s=60, on_progress=seen.append,
        held=held_open(work / "t.dat"),
    )  # fmt: skip
    assert (work / "target").is_symlink(), "fio read the target through the link"
    assert run.returncode == 0
    assert run.output is not None
    job = run.output.jobs[0]
    assert job.read is not None and job.read.iops > 0 and job.read.io_bytes > 0
    assert job.read.lat is not None and job.read.lat.bins, "json+ histogram bins expected"
    assert run.output.fio_version == find_fio().version
    assert any(s.iops for s in seen), "a live IOPS figure from fio's 1 s snapshots"
    assert run.argv[0] == real_fio and "--output-format=json+" in run.argv


def test_missing_fio_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FioMissing) as e:
        find_fio()
    assert "not installed" in e.value.message
    assert e.value.hint is not None and "apt-get install fio" in e.value.hint


def test_old_fio_is_refused(fake_fio: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_FIO_MODE", "old")
    with pytest.raises(FioMissing, match=r"fio 2\.1 .* too old"):
        find_fio()


def test_fio_that_prints_garbage_is_an_error(
    fake_fio: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_FIO_MODE", "garbage")
    with pytest.raises(FioFailed, match="wrote no results") as e:
        run_fio(
            find_fio(), _job(tmp_path / "t"), tmp_path, timeout_s=30, held=held_open(tmp_path / "t")
        )
    assert e.value.returncode == 0


def test_fio_option_error_quotes_fio(
    fake_fio: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_FIO_MODE", "fail")
    with pytest.raises(FioFailed) as e:
        run_fio(
            find_fio(), _job(tmp_path / "t"), tmp_path, timeout_s=30, held=held_open(tmp_path / "t")
        )
    assert "fio: failed parsing rw=bogus" in e.value.message
    assert e.value.hint is not None and "suite file" in e.value.hint
    assert e.value.returncode == 1


def test_fio_that_moves_no_data_is_an_error(
    fake_fio: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_FIO_MODE", "noio")
    with pytest.raises(FioFailed, match="after moving 0 bytes"):
        run_fio(
            find_fio(), _job(tmp_path / "t"), tmp_path, timeout_s=30, held=held_open(tmp_path / "t")
        )


def test_fio_killed_mid_run_is_an_error(
    fake_fio: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_FIO_MODE", "die")
    with pytest.raises(FioFailed, match="code -9") as e:
        run_fio(
            find_fio(), _job(tmp_path / "t"), tmp_path, timeout_s=30, held=held_open(tmp_path / "t")
        )
    assert e.value.hint is not None and "killed" in e.value.hint


def test_hung_fio_and_its_children_are_killed_at_the_timeout(
    fake_fio: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_FIO_MODE", "hang")
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("FAKE_FIO_PIDFILE", str(pidfile))
    started = time.monotonic()
    with pytest.raises(FioFailed, match="did not finish within 2 s"):
        run_fio(
            find_fio(), _job(tmp_path / "t"), tmp_path, timeout_s=2, held=held_open(tmp_path / "t")
        )
    assert time.monotonic() - started < 20
    assert len(pidfile.read_text().split()) == 2, "the fake starts a child process too"
    deadline = time.monotonic() + 5
    marker = f"FAKE_FIO_PIDFILE={pidfile}"
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not processes_with(marker)


@pytest.mark.fio
def test_real_fio_bad_option_quotes_fio_message(real_fio: str, tmp_path: Path) -> None:
    job = _job(tmp_path / "t.dat").replace("rw=randread", "rw=bogus")
    with pytest.raises(FioFailed) as e:
        run_fio(find_fio(), job, tmp_path, timeout_s=30, held=held_open(tmp_path / "t.dat"))
    assert "rw=bogus" in e.value.message
    assert e.value.returncode == 1


@pytest.mark.fio
def test_real_fio_einval_with_direct_io_explains_the_fix(real_fio: str, tmp_path: Path) -> None:
    # bs=1000 is not a multiple of the logical block size: O_DIRECT gives EINVAL.
    job = _job(tmp_path / "t.dat").replace("bs=4096", "bs=1000")
    with pytest.raises(FioFailed) as e:
        run_fio(find_fio(), job, tmp_path, timeout_s=30, held=held_open(tmp_path / "t.dat"))
    assert "EINVAL" in e.value.message
    assert "fio said:" in e.value.message
    assert e.value.hint is not None and "direct = false" in e.value.hint


@pytest.mark.fio
@pytest.mark.root
def test_real_fio_enospc_explains_the_fix(real_fio: str, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs")
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(small)], check=True)
    try:
        work = tmp_path / "work"
        work.mkdir()
        target = small / "t.dat"
        with target.open("wb") as f:
            f.truncate(16 << 20)  # sparse, as iobench creates it: the writes run out of space
        fd = os.open(target, os.O_RDONLY)
        try:
            with pytest.raises(FioFailed) as e:
                run_fio(find_fio(), build_layout_jobfile(Reach.file(str(target)), 16 << 20), work,
                        timeout_s=60, held=Held(fd))  # fmt: skip
        finally:
            os.close(fd)  # the tmpfs can be unmounted
    finally:
        subprocess.run(["umount", str(small)], check=True)
    assert "ENOSPC" in e.value.message
    assert "fio said:" in e.value.message
    assert e.value.hint is not None and "--size" in e.value.hint


@pytest.mark.fio
def test_fio_finding_the_target_too_small_is_caught(real_fio: str, tmp_path: Path) -> None:
    small = tmp_path / "small.dat"
    small.write_bytes(b"x" * 4096)
    w = Workload("w", "write", 4096, 1, 1, ioengine="psync", runtime_s=1)
    with pytest.raises(FioFailed, match="smaller than the test area"):
        run_fio(find_fio(), build_jobfile(w, Reach.file(str(small)), 1 << 20), tmp_path,
                timeout_s=30,
                held=held_open(small))  # fmt: skip
    assert small.read_bytes() == b"x" * 4096, "the real file was not touched"


# -- short questions to fio, asked once ------------------------------------------------------

COUNTING_FIO = """#!/bin/sh
echo "$*" >> "{calls}"
cat > /dev/null
echo "fio-3.33 says $IOBENCH_TEST_SAY"
"""


def test_a_question_to_the_same_fio_in_the_same_circumstances_is_asked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fio spends about 0.15 s of CPU calibrating its clock at every start: an answer of
    --parse-only (or --version, --cmdhelp) is kept for the same question to the same binary
    in the same environment and working directory; anything that could change the answer
    asks again."""
    calls = tmp_path / "calls"
    fio = tmp_path / "fio"
    fio.write_text(COUNTING_FIO.format(calls=calls))
    fio.chmod(0o755)
    monkeypatch.setenv("IOBENCH_TEST_SAY", "one")
    monkeypatch.chdir(tmp_path)
    job = "[j]\nrw=read\nsize=1m\n"

    def asked() -> int:
        return len(calls.read_text().splitlines()) if calls.exists() else 0

    assert fio_parse_only(str(fio), job) == (0, "fio-3.33 says one\n\n")
    assert fio_parse_only(str(fio), job) == (0, "fio-3.33 says one\n\n")
    assert asked() == 1
    fio_parse_only(str(fio), job + "bs=8k\n")  # another question
    assert asked() == 2
    monkeypatch.setenv("IOBENCH_TEST_SAY", "two")  # fio expands ${VAR} in job files
    assert fio_parse_only(str(fio), job) == (0, "fio-3.33 says two\n\n")
    assert asked() == 3
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # relative file names resolve elsewhere
    fio_parse_only(str(fio), job)
    assert asked() == 4
    # A job that includes another file is asked every time: that file may have changed.
    included = "include other.fio\n" + job
    fio_parse_only(str(fio), included)
    fio_parse_only(str(fio), included)
    assert asked() == 6
    # fio replaced (another inode; an upgrade): asked again.
    replacement = tmp_path / "fio.new"
    replacement.write_text(COUNTING_FIO.format(calls=calls))
    replacement.chmod(0o755)
    replacement.replace(fio)
    fio_parse_only(str(fio), job)
    assert asked() == 7
    # --version likewise, through find_fio.
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert find_fio().version == "3.33"
    assert find_fio().version == "3.33"
    assert asked() == 8


def test_a_fio_that_does_not_answer_is_asked_again(tmp_path: Path) -> None:
    """No answer (it cannot start) is kept: the next question tries again."""
    missing = tmp_path / "not-there"
    assert fio_parse_only(str(missing), "[j]\n")[0] == -1
    fio = tmp_path / "not-there"
    fio.write_text(COUNTING_FIO.format(calls=tmp_path / "calls"))
    fio.chmod(0o755)
    assert fio_parse_only(str(fio), "[j]\n")[0] == 0
