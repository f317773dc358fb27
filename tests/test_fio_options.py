"""fio's whole option set in suites: derived from fio itself (iobench.fio.catalogue), every
option accepted except the hazard classes (iobench.suites.hazards), fio's own checks of
the final job, and the options users' files rely on run the way fio runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Cli
from iobench.errors import SuiteError
from iobench.fio.catalogue import SHIPPED_VERSION, current, shipped
from iobench.suites.hazards import CLASSES, option_hazard
from iobench.suites.loader import load_suite_file

ROOT = Path(__file__).parent.parent


def test_the_shipped_catalogue_says_what_this_fio_says(real_fio: str) -> None:
    """The shipped answers of fio 3.33 are what scripts/fio-catalogue writes from it now."""
    version = subprocess.run([real_fio, "--version"], capture_output=True, text=True).stdout
    if version.strip() != f"fio-{SHIPPED_VERSION}":
        pytest.skip(f"the shipped catalogue is fio {SHIPPED_VERSION}'s; this is {version}")
    made = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fio-catalogue")],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(made.stdout)
    c = shipped()
    assert set(data["options"]) == c.options and data["aliases"] == c.aliases
    assert set(data["engines"]) == c.engines
    assert {e: set(o) for e, o in data["engine_options"].items()} == {
        e: set(o) for e, o in c.engine_options.items()
    }


def test_the_catalogue_knows_fios_names_aliases_and_engines() -> None:
    c = current()
    for alias, option in (("nr_files", "nrfiles"), ("blocksize_range", "bsrange"),
                          ("timeout", "runtime"), ("fill_fs", "fill_device")):  # fmt: skip
        assert c.canonical(alias) == option
    real = ("loops", "filesize", "startdelay", "overwrite", "fallocate", "verify", "do_verify",
            "verify_fatal", "clocksource", "iodepth_low", "openfiles")  # fmt: skip
    for option in real:
        assert c.canonical(option) == option
    assert c.canonical("openfile") is None and "openfiles" in c.names_like("openfile")
    assert c.engine_option("hipri", ["libaio", "io_uring"]) == "io_uring"
    assert c.engine_option("clientname", c.engines) in ("rados", "rbd")
    assert {"libaio", "io_uring", "psync", "null"} <= c.engines


@pytest.mark.parametrize(
    ("option", "value", "cls"),
    [
        ("exec_prerun", "id", "runs programs"),
        ("exec_postrun", "", None),
        ("read_iolog", "/x", "outside the target"),
        ("fill_device", "1", "outside the target"),
        ("fill_device", "0", None),
        ("allow_mounted_write", None, "outside the target"),
        ("mem", "mmaphuge:/hugetlbfs/x", "outside the target"),
        ("mem", "shm", None),
        ("zonemode", "zbd", "outside the target"),
        ("zonemode", "strided", None),
        ("cgroup", "x", "changes the host"),
        ("ioscheduler", "none", "changes the host"),
        ("stats", "0", "nothing to measure"),
        ("stats", "1", None),
        ("ioengine", "rbd", "reaches endpoints"),
        ("ioengine", "external:/x.so", "runs programs"),
        ("ioengine", "sg", "not I/O to the target"),
        ("ioengine", "libaio", None),
        ("verify", "md5", None),
        ("gtod_reduce", "1", None),
        ("prioclass", "1", None),
    ],
)
def test_each_hazard_has_its_class_and_harmless_values_are_not_hazards(
    option: str, value: str | None, cls: str | None
) -> None:
    hazard = option_hazard(option, value)
    assert (hazard.cls if hazard else None) == cls
    assert hazard is None or hazard.cls in CLASSES


def _fio_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.fio"
    path.write_text(text)
    return path


def test_fios_own_checks_of_the_job_are_shown_at_the_users_line(tmp_path: Path) -> None:
    """fio --parse-only runs on what iobench will write: what fio refuses is reported at
    the line of the option it names, for every job."""
    path = _fio_file(
        tmp_path,
        "[global]\nruntime=1\nsize=8m\nverify=sha1x\n[a]\nrw=read\n"
        "[b]\nstonewall\nrw=read\nfadvise_hint=maybe\n[c]\nstonewall\nrw=read\n",
    )
    with pytest.raises(SuiteError) as info:
        load_suite_file(path)
    assert [(p.line, p.message) for p in info.value.problems] == [
        (4, '[a]: fio 3.33 refuses verify="sha1x" (fio --parse-only)'),
        (4, '[b]: fio 3.33 refuses verify="sha1x" (fio --parse-only)'),
        (4, '[c]: fio 3.33 refuses verify="sha1x" (fio --parse-only)'),
    ] or [(p.line, p.message) for p in info.value.problems] == [
        (4, '[a]: fio 3.33 refuses verify="sha1x" (fio --parse-only)'),
        (10, '[b]: fio 3.33 refuses fadvise_hint="maybe" (fio --parse-only)'),
    ]


def test_an_engine_option_needs_its_engine(tmp_path: Path) -> None:
    path = _fio_file(tmp_path, "[j]\nrw=read\nioengine=libaio\nhipri=1\nsize=8m\nruntime=1\n")
    with pytest.raises(SuiteError) as info:
        load_suite_file(path)
    (problem,) = info.value.problems
    assert problem.line == 4
    assert problem.message == (
        "[j]: hipri is an option of the io_uring, io_uring_cmd, pvsync2 and sg engines; this "
        'job\'s ioengine is "libaio"'
    )
    (w,) = load_suite_file(
        _fio_file(tmp_path, "[j]\nrw=read\nioengine=io_uring\nhipri=0\nsize=8m\nruntime=1\n")
    ).workloads
    assert ("hipri", "0") in w.options


REAL_WORLD = """\
[global]
ioengine=libaio
direct=1
size=100%
runtime=1
time_based
loops=1
verify=0
rate_iops=0
unified_rw_reporting=0
nr_files=1
startdelay=0
fadvise_hint=0
clocksource=gettimeofday
group_reporting
[job-/dev/nvme8n1]
rw=randread
rwmixread=70
bs=4k
iodepth=4
[rand_16k_read_100%-io-depth-1-num-jobs-2]
stonewall
rw=randrw
blocksize=16k,4k
gtod_reduce=1
numjobs=2
[backwards]
stonewall
rw=read:-8k
bs=8k
"""


def test_a_real_world_job_file_runs_as_fio_reads_it(
    cli: Cli, tmp_path: Path, real_fio: str, isolated_db: Path
) -> None:
    """Section names fio allows, size=100%, per-direction blocks, rw's modifier, latency
    switched off, no-op values: loaded, run by real fio, and stored as they ran."""
    path = _fio_file(tmp_path, REAL_WORLD)
    target = tmp_path / "target"
    target.mkdir()
    code, out, err = cli("run", str(target), "--suite", str(path), "--size", "4M", "--json")
    assert code == 0, err
    doc = json.loads(out)
    results = {r["workload"]: r for r in doc["results"]}
    assert list(results) == [
        "job-/dev/nvme8n1",
        "rand_16k_read_100%-io-depth-1-num-jobs-2",
        "backwards",
    ]
    assert all(r["status"] == "ok" for r in results.values())
    first, mixed, back = results.values()
    assert first["params"]["size_share"] == 1.0 and first["params"]["rwmixread"] is None
    assert mixed["params"]["options"]["bs"] == "16384,4096" and mixed["params"]["bs"] == 16384
    assert back["params"]["options"]["rw"] == "read:-8k" and back["params"]["rw"] == "read"
    # Latency off (gtod_reduce): not measured, never 0; IOPS and bandwidth are there.
    read = mixed["read"]
    assert read["iops"] > 0 and read["lat_ns"] is None and read["clat_ns"] is None
    assert first["read"]["lat_ns"]["n"] > 0
    notes = " ".join(w["message"] for w in doc["warnings"])
    assert "ask fio not to measure latency" in notes
    # The job fio ran holds the blocks per direction and the modifier as written.
    jobs = {r["workload"]: r["job_file"] for r in _stored(isolated_db)}
    assert "bs=16384,4096" in jobs[mixed["workload"]] and "rw=read:-8k" in jobs["backwards"]
    assert f"size={4 << 20}" in jobs["job-/dev/nvme8n1"]  # 100 % of the 4 MiB test file


def _stored(db: Path) -> list[dict[str, str]]:
    import sqlite3

    with sqlite3.connect(db) as con:
        return [
            {"workload": w, "job_file": j}
            for w, j in con.execute("SELECT workload, job_file FROM results ORDER BY id")
        ]
