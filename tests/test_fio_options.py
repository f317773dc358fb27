"""fio's whole option set in suites: derived from fio itself (iobench.fio.catalogue), every
option accepted except the hazard classes (iobench.suites.hazards), fio's own checks of
the final job, and the options users' files rely on run the way fio runs them."""

from __future__ import annotations

import json
import os
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
        ("ioengine", "rados", "reaches endpoints"),
        ("ioengine", "net", "reaches endpoints"),
        ("ioengine", "rbd", None),  # runs on an rbd: target named on the command line
        ("ioengine", "nbd", None),
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
    ]  # fio names the first option it cannot parse in a job: [b]'s verify, from [global]


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


def test_fios_own_checks_reach_each_part_of_a_group(tmp_path: Path) -> None:
    """Jobs fio runs together are one workload; fio still checks each, at its own line."""
    path = _fio_file(
        tmp_path,
        "[global]\nruntime=1\nsize=8m\n[a]\nrw=read\n[b]\nrw=write\nfadvise_hint=maybe\n",
    )
    with pytest.raises(SuiteError) as info:
        load_suite_file(path)
    assert [(p.line, p.message) for p in info.value.problems] == [
        (8, '[b]: fio 3.33 refuses fadvise_hint="maybe" (fio --parse-only)')
    ]
    toml = tmp_path / "s.toml"
    toml.write_text(
        '[[workload]]\nname = "w"\nbs = "4k"\niodepth = 1\nnumjobs = 1\nruntime = "1s"\n'
        'size = "8M"\n[[workload.job]]\nname = "r"\nrw = "read"\n'
        '[[workload.job]]\nname = "x"\nrw = "write"\nfadvise_hint = "maybe"\n'
    )
    with pytest.raises(SuiteError) as info:
        load_suite_file(toml)
    assert [(p.line, p.message) for p in info.value.problems] == [
        (14, 'workload "w", job "x": fio 3.33 refuses fadvise_hint="maybe" (fio --parse-only)')
    ]


def test_a_refused_engines_options_are_not_refused_again(tmp_path: Path) -> None:
    """The engine is the problem; its options only follow from it (fio's exec.fio)."""
    path = _fio_file(
        tmp_path, "[j]\nioengine=exec\nprogram=/bin/true\narguments=x\nrw=read\nsize=8m\n"
    )
    with pytest.raises(SuiteError) as info:
        load_suite_file(path)
    assert [(p.line, p.message) for p in info.value.problems] == [
        (2, '[j]: ioengine="exec" is refused (runs programs): it runs a program')
    ]


@pytest.mark.parametrize(
    ("written", "given"),
    [
        ("rate=300k,,1m", ("rate", "307200,,1048576")),
        ("rate=1m,0", ("rate", "1048576,")),
        ("rate_iops=,200", ("rate_iops", ",200")),
        ("rate_iops=500,100,7", ("rate_iops", "500,100,7")),
    ],
)
def test_a_rate_a_direction_is_given_as_fio_reads_it(
    tmp_path: Path, written: str, given: tuple[str, str]
) -> None:
    (w,) = load_suite_file(
        _fio_file(tmp_path, f"[j]\nrw=randrw\n{written}\nsize=8m\nruntime=1\n")
    ).workloads
    assert given in w.options


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("rate=300k,x", "each direction's value (READ,WRITE[,TRIM]; empty: no cap) must be"),
        ("rate_iops=1,2,3,4", 'rate_iops per direction is READ,WRITE or READ,WRITE,TRIM, not "'),
        ("rate=1m,9t", "rate must be at most 1T/s"),
        ("rate_iops=5,1.5", "must be a whole number as fio reads it"),
    ],
)
def test_a_wrong_rate_a_direction_is_refused_with_why(
    tmp_path: Path, written: str, said: str
) -> None:
    with pytest.raises(SuiteError) as info:
        load_suite_file(_fio_file(tmp_path, f"[j]\nrw=randrw\n{written}\nsize=8m\n"))
    ((line, message),) = [(p.line, p.message) for p in info.value.problems]
    assert line == 3 and said in message, message


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


# It checks fio's rate caps as measured: beside other tests' work the capped reads were
# seen at 8.7 IOPS of 200.
@pytest.mark.serial
def test_a_template_with_includes_and_variables_runs_as_fio_would(
    cli: Cli, tmp_path: Path, real_fio: str, isolated_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A template of the field's shape: shared options in an included file beside it,
    ${VAR}s from the environment, $ncpus computed as fio has bc compute it, arithmetic in
    parentheses, a value fio reads as its leading number; run by real fio and stored with
    what was replaced."""
    (tmp_path / "common.inc").write_text("ioengine=psync\nsize=${SIZE}\ntime_based\nruntime=1\n")
    path = _fio_file(
        tmp_path,
        "[global]\ninclude common.inc\nrw=${RW}\n"
        "[qd]\nbs=${BS}\niodepth=(${QD}*2)\nnumjobs=$ncpus/2\n"
        "[capped]\nstonewall\nrw=randrw\nbs=4k\nrate_iops=200,100\nloops=128*1\n",
    )
    monkeypatch.setenv("SIZE", "4m")
    monkeypatch.setenv("RW", "randread")
    monkeypatch.setenv("QD", "2")
    monkeypatch.setenv("BS", "8k")
    monkeypatch.chdir(tmp_path.parent)  # fio looks in the working directory first
    target = tmp_path / "target"
    target.mkdir()
    code, out, err = cli("run", str(target), "--suite", str(path), "--json")
    assert code == 0, err
    doc = json.loads(out)
    first, capped = doc["results"]
    assert first["workload"] == "qd" and first["status"] == "ok"
    assert first["params"]["bs"] == 8192 and first["params"]["iodepth"] == 4
    assert first["params"]["numjobs"] == max(1, len(os.sched_getaffinity(0)) // 2)
    assert capped["status"] == "ok" and capped["params"]["rw"] == "randrw"
    # the caps per direction held: fio's IOPS, each direction within its own cap
    assert capped["read"]["iops"] == pytest.approx(200, rel=0.2)
    assert capped["write"]["iops"] == pytest.approx(100, rel=0.2)
    code, exported, err = cli("export", str(doc["run_id"]), "--format", "json")
    assert code == 0, err
    suite = json.loads(exported)["suite_def"]
    assert str(tmp_path / "common.inc") in suite["includes"]
    written = {v["written"] for v in suite["variables"]}
    assert {"${SIZE}", "${QD}", "$ncpus", "128*1"} <= written
    notes = " ".join(w["message"] for w in doc["warnings"])
    assert "128*1 = 128 (fio reads the leading number)" in notes
    jobs = {r["workload"]: r["job_file"] for r in _stored(isolated_db)}
    assert "rate_iops=200,100" in jobs["capped"]
