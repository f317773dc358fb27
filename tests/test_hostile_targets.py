"""Hostile targets (issue 11, point 2): pseudo-filesystems are refused by their statfs type
before anything runs, and a directory iobench cannot write is found by the plan.

Never a writing workload on a real sysfs or procfs file: refusals are checked with
`doctor`, and `run` only with a reading suite (and it must not get as far as fio)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Cli

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (mount, seteuid)")

READ_SUITE = """\
name = "reads"
description = "reads only"
[[workload]]
name = "rr"
rw = "randread"
bs = "4k"
iodepth = 1
numjobs = 1
runtime = "1s"
size = "4k"
"""

# name -> (a file to aim at inside a fresh mount, or "" for the mount's root directory)
PSEUDO = {
    "proc": "self/status",
    "sysfs": "kernel/mm/transparent_hugepage/enabled",
    "cgroup2": "cgroup.procs",
    "debugfs": "",
    "tracefs": "README",
    "securityfs": "lsm",
    "bpf": "",
    "pstore": "",
    "mqueue": "",
    "devpts": "",
    "binfmt_misc": "status",
    "hugetlbfs": "",
    "fusectl": "",
    "configfs": "",
    "efivarfs": "",
}


@contextlib.contextmanager
def _mounted(fstype: str, where: Path, options: str = "") -> Iterator[Path]:
    where.mkdir()
    argv = ["mount", "-t", fstype, *(["-o", options] if options else []), "none", str(where)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        where.rmdir()
        pytest.skip(f"this kernel cannot mount {fstype}: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)
        where.rmdir()


def _doctor(cli: Cli, *args: str) -> tuple[int, dict[str, object], str]:
    code, out, err = cli("doctor", *args, "--json")
    return code, json.loads(out), err


@needs_root
@pytest.mark.parametrize("fstype", sorted(PSEUDO))
def test_a_pseudo_filesystem_is_refused_by_its_type(cli: Cli, tmp_path: Path, fstype: str) -> None:
    with _mounted(fstype, tmp_path / fstype) as root:
        inside = root / PSEUDO[fstype] if PSEUDO[fstype] else root
        link = tmp_path / "innocent-name"
        link.symlink_to(inside)
        for target in (str(inside), str(link)):
            extra = ["--destructive"] if inside.is_file() else []
            code, doc, err = _doctor(cli, target, *extra)
            assert code == 3, err
            refused = doc["refused"]
            assert isinstance(refused, dict)
            assert refused["exit_code"] == 3
            assert f"is on {fstype} (" in refused["message"]
            assert "a kernel pseudo-filesystem" in refused["message"]
            assert (
                refused["hint"] == "benchmark a directory on a real filesystem, or a block device"
            )
        if not inside.is_file():
            assert not [p for p in inside.iterdir() if p.name.startswith("iobench-")]


@needs_root
def test_run_on_a_proc_file_stops_before_fio_and_stores_nothing(
    cli: Cli, tmp_path: Path, isolated_db: Path
) -> None:
    suite = tmp_path / "reads.toml"
    suite.write_text(READ_SUITE)
    with _mounted("proc", tmp_path / "proc") as proc:
        code, out, err = cli("run", str(proc / "self" / "status"), "--suite", str(suite))
    assert code == 3
    assert "is on proc (process and kernel state), a kernel pseudo-filesystem" in err
    assert out == ""
    assert not isolated_db.exists(), "refused before the database was opened"


def test_real_filesystems_are_not_pseudo(cli: Cli, tmp_path: Path) -> None:
    shm = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        for target in (tmp_path, shm):
            code, doc, err = _doctor(cli, str(target))
            assert code == 0, err
            assert doc["refused"] is None
    finally:
        shutil.rmtree(shm)


@contextlib.contextmanager
def _as_nobody() -> Iterator[None]:
    """Effective uid and gid of nobody in this process (root can switch back)."""
    os.setegid(65534)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@needs_root
def test_a_directory_the_user_cannot_write_is_found_by_the_plan(
    cli: Cli, isolated_db: Path
) -> None:
    base = Path(tempfile.mkdtemp())
    try:
        base.chmod(0o755)
        locked = base / "locked"
        locked.mkdir(mode=0o755)
        with _as_nobody():
            code, doc, err = _doctor(cli, str(locked))
            run_code, _, run_err = cli("run", str(locked))
        assert code == 2, err
        refused = doc["refused"]
        assert isinstance(refused, dict)
        assert refused["message"] == (
            f"iobench cannot create its test file in {locked}: user nobody (uid 65534) has "
            "no permission"
        )
        assert run_code == 2
        assert f"iobench cannot create its test file in {locked}" in run_err
        assert list(locked.iterdir()) == []
        assert not isolated_db.exists()
    finally:
        shutil.rmtree(base)


@needs_root
def test_a_read_only_filesystem_is_found_by_the_plan(cli: Cli, tmp_path: Path) -> None:
    with _mounted("tmpfs", tmp_path / "ro", "ro,size=1m") as ro:
        code, doc, err = _doctor(cli, str(ro))
    assert code == 2, err
    refused = doc["refused"]
    assert isinstance(refused, dict)
    assert refused["message"] == (
        f"iobench cannot create its test file in {ro}: its filesystem is mounted read-only"
    )
    assert refused["hint"] == "remount it read-write, or choose another target"


@needs_root
def test_a_file_the_user_cannot_read_is_found_by_the_plan(cli: Cli, tmp_path: Path) -> None:
    base = Path(tempfile.mkdtemp())
    try:
        base.chmod(0o755)
        secret = base / "data.bin"
        secret.write_bytes(b"\0" * 65536)
        secret.chmod(0o600)
        suite = base / "reads.toml"
        suite.write_text(READ_SUITE)
        with _as_nobody():
            code, doc, err = _doctor(cli, str(secret), "--suite", str(suite))
        assert code == 2, err
        refused = doc["refused"]
        assert isinstance(refused, dict)
        assert refused["message"] == (
            f"iobench cannot read {secret}: user nobody (uid 65534) has no permission"
        )
    finally:
        shutil.rmtree(base)
