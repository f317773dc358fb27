"""`iobench doctor` on real targets: every finding it knows, triggered by one case and not
by its counterpart; the job files it shows are the run's; nothing is written."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.analysis.measured import in_vm, spinning_disk
from scratch import MiB, Scratch, run_tool

SUITE = """\
name = "doc"
description = "a suite for the doctor's tests"
[defaults]
runtime = "{runtime}"
size = "4M"
iodepth = 4
numjobs = {numjobs}
bs = "4k"
direct = {direct}
[[workload]]
name = "rr"
rw = "randread"
{extra}
"""


def suite(
    tmp_path: Path,
    *,
    runtime: str = "60s",
    numjobs: int = 1,
    direct: bool = True,
    extra: str = "",
    name: str = "doc.toml",
) -> str:
    path = tmp_path / name
    path.write_text(
        SUITE.format(runtime=runtime, numjobs=numjobs, direct=str(direct).lower(), extra=extra)
    )
    return str(path)


def doctor(cli: Cli, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = cli("doctor", *args, "--json")
    assert "Traceback" not in err
    return code, json.loads(out)


def ids(doc: dict[str, Any]) -> set[str]:
    return {w["id"] for w in doc["warnings"]}


def test_doctor_shows_the_plan_and_the_exact_job_files_and_writes_nothing(
    cli: Cli, tmp_path: Path, isolated_db: Path
) -> None:
    target = tmp_path / "t"
    target.mkdir()
    code, doc = doctor(cli, str(target), "--suite", suite(tmp_path))
    assert code == 0 and doc["kind"] == "doctor" and doc["refused"] is None
    assert [s["name"] for s in doc["steps"]] == ["lay out test file", "rr"]
    (t,) = doc["targets"]
    assert t["created"] and t["test_file"].startswith(f"{target}/iobench-")
    layout, rr = doc["jobs"]
    assert layout["workload"] is None and "[iobench:layout]" in layout["job_file"]
    assert rr["workload"] == "rr" and "[rr]\nrw=randread\nbs=4096" in rr["job_file"]
    for job in (layout, rr):  # the test file by its path, not iobench's private link
        assert f"\nfilename={t['test_file']}\n" in job["job_file"]
    assert doc["fio_argv"][:2] == ["fio", "--output-format=json+"]
    assert list(target.iterdir()) == [] and not isolated_db.exists()
    code, out, _ = cli("doctor", str(target), "--suite", suite(tmp_path))
    assert code == 0 and "job file rr on" in out and "[rr]" in out and "nothing is run" in out
    assert "./target is a symbolic link" in out and "iobench creates the test file" in out


def _options(job_file: str) -> dict[str, str]:
    return dict(
        line.split("=", 1) for line in job_file.splitlines() if "=" in line and line[0] != ";"
    )


@pytest.mark.fio
def test_the_jobs_doctor_shows_are_the_jobs_run_runs(
    cli: Cli, real_fio: str, tmp_path: Path
) -> None:
    """Option for option, but for the file's name (iobench's own job file reaches it
    through ./target), allow_file_create=0 (iobench's target exists; plain fio makes the
    file it names) and stonewall (which keeps the steps of one file apart)."""
    target = tmp_path / "t"
    target.mkdir()
    args = (str(target), "--suite", suite(tmp_path, runtime="1s"), "--runtime", "1s")
    code, doc = doctor(cli, *args)
    assert code == 0
    shown = {j["workload"]: _options(j["job_file"]) for j in doc["jobs"]}
    code, out, err = cli("run", *args)
    assert code == 0, err
    code, out, err = cli("export", "latest", "--format", "json")
    (result,) = json.loads(out)["results"]
    ran = _options(result["job_file"])
    assert ran["filename"] == "target"
    assert ran.pop("allow_file_create") == "0"
    expected = {**ran, "filename": doc["targets"][0]["test_file"], "stonewall": ""}
    assert {**shown["rr"], "stonewall": ""} == expected


def _fio(fio: str, job: Path, cwd: Path) -> list[dict[str, Any]]:
    """Plain fio on ``job`` in ``cwd``: its jobs' reports."""
    proc = subprocess.run(
        [fio, "--output-format=json", "--output=out.json", str(job)],
        cwd=cwd, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    jobs: list[dict[str, Any]] = json.loads((cwd / "out.json").read_text())["jobs"]
    return jobs


@pytest.mark.fio
def test_plain_fio_runs_the_fio_jobfile_and_the_job_files_shown(
    cli: Cli, real_fio: str, tmp_path: Path
) -> None:
    """--fio-jobfile writes every step in the run's order; plain fio runs the file, and
    the text doctor shows, pasted into a file, as it is."""
    target = tmp_path / "a: b"  # a colon, escaped; a blank, kept
    target.mkdir()
    two = suite(tmp_path, runtime="1s", extra='[[workload]]\nname = "rw"\nrw = "randwrite"')
    plan, work = tmp_path / "plan.fio", tmp_path / "work"
    work.mkdir()
    code, out, err = cli("doctor", str(target), "-s", two, "--fio-jobfile", str(plan))
    assert code == 0, err
    assert f"wrote {plan} (3 fio jobs); run them: fio " in err
    test_file = Path(re.findall(r"^filename=(.*)$", plan.read_text(), re.M)[0].replace("\\:", ":"))
    assert test_file.parent == target and not test_file.exists(), "doctor writes nothing there"
    jobs = _fio(real_fio, plan, work)
    assert [(j["jobname"], j["groupid"]) for j in jobs] == [
        ("iobench:layout", 0),
        ("rr", 1),
        ("rw", 2),
    ]
    assert jobs[0]["write"]["io_bytes"] == 4 * MiB
    assert jobs[1]["read"]["io_bytes"] > 0 and jobs[2]["write"]["io_bytes"] > 0
    assert sorted(p.name for p in target.iterdir()) == [test_file.name]  # as the notes say
    test_file.unlink()
    # The text on the terminal: each job file between its heading and a blank line.
    shown = re.findall(r"^job file (\S+) on .*?:\n(.*?)(?:\n\n|\Z)", out, re.M | re.S)
    assert [name for name, _ in shown] == ["layout", "rr", "rw"]
    pasted = tmp_path / "pasted.fio"
    pasted.write_text(dict(shown)["rr"] + "\n")
    (rr,) = _fio(real_fio, pasted, work)
    assert rr["jobname"] == "rr" and rr["read"]["io_bytes"] > 0
    assert rr["job options"]["filename"] == str(test_file).replace(":", "\\:")
    test_file.unlink()


def test_fio_jobfile_is_written_like_a_report(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "t"
    target.mkdir()
    plan = tmp_path / "plan.fio"
    plan.write_text("old")
    plan.chmod(0o640)
    code, out, err = cli("doctor", str(target), "-s", suite(tmp_path), "--fio-jobfile", str(plan))
    assert code == 0, err
    assert plan.read_text().startswith("; the steps `iobench run` would run with the doc suite")
    assert f"wrote {plan} (2 fio jobs); run them: fio --output-format=json+ " in err
    assert (plan.stat().st_mode & 0o777) == 0o640, "an existing file keeps its permissions"
    code, out, err = cli("doctor", str(target), "--fio-jobfile", str(tmp_path))
    assert code == 2 and "cannot write" in err and "a directory" in err
    code, out, err = cli("doctor", str(target), "--fio-jobfile", "-")
    assert (code, out) == (2, "") and "standard output holds doctor's own output" in err
    assert list(target.iterdir()) == []


def test_no_fio_jobfile_for_a_run_that_would_be_refused(cli: Cli, tmp_path: Path) -> None:
    data = tmp_path / "data.bin"
    data.write_bytes(b"precious" * 1000)
    plan = tmp_path / "plan.fio"
    writes = suite(tmp_path, extra='[[workload]]\nname = "rw"\nrw = "randwrite"')
    code, out, err = cli("doctor", str(data), "-s", writes, "--fio-jobfile", str(plan))
    assert code == 3 and "the run would be refused" in out
    assert f"no job file written to {plan}: the run would be refused" in err
    assert not plan.exists() and data.read_bytes() == b"precious" * 1000
    code, out, err = cli(
        "doctor", str(data), "-s", writes, "--destructive", "--fio-jobfile", str(plan)
    )
    assert code == 0, err
    assert f";  - these jobs WRITE to {data}, destroying its data" in plan.read_text()
    # Only reads: iobench gives fio --readonly, and so does the command it suggests.
    code, out, err = cli("doctor", str(data), "-s", suite(tmp_path), "--fio-jobfile", str(plan))
    assert code == 0, err
    assert f"wrote {plan} (1 fio job); run them: fio --output-format=json+ " in err
    assert "--output=result.json --readonly " in err
    assert "; run them: fio --output-format=json+ --output=result.json --readonly THIS-FILE\n" in (
        plan.read_text()
    )
    assert data.read_bytes() == b"precious" * 1000


def test_buffered_io(cli: Cli, tmp_path: Path) -> None:
    assert "buffered-io" in ids(doctor(cli, str(tmp_path), "-s", suite(tmp_path, direct=False))[1])
    assert "buffered-io" not in ids(doctor(cli, str(tmp_path), "-s", suite(tmp_path))[1])


def test_numjobs_over_the_cpu_count(cli: Cli, tmp_path: Path) -> None:
    cpus = len(os.sched_getaffinity(0))
    many = suite(tmp_path, numjobs=cpus + 1)
    assert "numjobs-over-cpus" in ids(doctor(cli, str(tmp_path), "-s", many)[1])
    assert "numjobs-over-cpus" not in ids(doctor(cli, str(tmp_path), "-s", suite(tmp_path))[1])


def test_the_default_suite_fits_the_machine_and_warns_of_nothing_it_chose(
    cli: Cli, tmp_path: Path, one_cpu: int
) -> None:
    code, doc = doctor(cli, str(tmp_path))
    assert code == 0 and doc["suite"]["name"] == "quick"
    mine = {"numjobs-over-cpus", "small-file", "short-runtime", "buffered-io", "indicative"}
    assert not [w for w in doc["warnings"] if w["id"] in mine and w["severity"] == "warning"]
    notes = [w["id"] for w in doc["warnings"] if w["severity"] == "info"]
    assert notes[:2] == ["fitted-to-cpus", "indicative"]
    jobs = {j["workload"]: j["job_file"] for j in doc["jobs"] if j["workload"]}
    assert "numjobs=1\n" in jobs["randread-4k-qd32x4"]
    assert "iodepth=128\n" in jobs["randread-4k-qd32x4"]
    # A suite file of the user's runs as written, and keeps its warning.
    many = suite(tmp_path, numjobs=4)
    code, doc = doctor(cli, str(tmp_path), "-s", many)
    assert "numjobs-over-cpus" in ids(doc) and "fitted-to-cpus" not in ids(doc)
    (rr,) = [j["job_file"] for j in doc["jobs"] if j["workload"] == "rr"]
    assert "numjobs=4\n" in rr and "iodepth=4\n" in rr


def test_short_runtime(cli: Cli, tmp_path: Path) -> None:
    short = suite(tmp_path, runtime="2s")
    assert "short-runtime" in ids(doctor(cli, str(tmp_path), "-s", short)[1])
    assert "short-runtime" not in ids(doctor(cli, str(tmp_path), "-s", suite(tmp_path))[1])


def test_ram_backed(cli: Cli, tmp_path: Path) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir():
        pytest.skip("no /dev/shm here")
    code, doc = doctor(cli, str(shm), "-s", suite(tmp_path))
    assert code == 0 and "ram-backed" in ids(doc)
    # tmp_path is on the disk here; if the machine keeps /tmp in RAM, use the repository.
    on_disk = Path(__file__).parent
    assert "ram-backed" not in ids(doctor(cli, str(on_disk), "-s", suite(tmp_path))[1])


@pytest.mark.root
def test_small_file_on_a_big_device(cli: Cli, scratch: Scratch, tmp_path: Path) -> None:
    small = scratch.loop(scratch.image(256 * MiB))
    dev = scratch.loop(scratch.image(8 * MiB))
    for d in (small, dev):
        run_tool("dd", "if=/dev/urandom", f"of={d}", "bs=1M", "count=4", "conv=fsync")
    assert "small-file" in ids(doctor(cli, small, "-s", suite(tmp_path))[1])  # 4 of 256 MiB
    assert "small-file" not in ids(doctor(cli, dev, "-s", suite(tmp_path))[1])  # 4 of 8 MiB


@pytest.mark.root
def test_unwritten_reads_and_prefill(cli: Cli, scratch: Scratch, tmp_path: Path) -> None:
    sparse = scratch.loop()  # a sparse image: every block reads as zeros
    code, doc = doctor(cli, sparse, "-s", suite(tmp_path))
    (f,) = [w for w in doc["warnings"] if w["id"] == "unwritten-read"]
    assert code == 0 and f["target"] == sparse and "100% of the test area" in f["message"]
    code, doc = doctor(cli, sparse, "-s", suite(tmp_path), "--prefill", "--destructive")
    assert code == 0 and "unwritten-read" not in ids(doc)
    assert doc["steps"][0]["name"] == "prefill the test area"
    code, doc = doctor(cli, sparse, "-s", suite(tmp_path), "--prefill")
    assert code == 3 and "--destructive" in doc["refused"]["message"] + doc["refused"]["hint"]
    written = scratch.loop(scratch.image(16 * MiB))
    run_tool("dd", "if=/dev/urandom", f"of={written}", "bs=1M", "count=16", "conv=fsync")
    assert "unwritten-read" not in ids(doctor(cli, written, "-s", suite(tmp_path))[1])
    # A sparse file (existing-file target): found by its holes.
    holes = tmp_path / "sparse.dat"
    holes.write_bytes(b"")
    os.truncate(holes, 8 * MiB)
    (f,) = [w for w in doctor(cli, str(holes), "-s", suite(tmp_path))[1]["warnings"]
            if w["id"] == "unwritten-read"]  # fmt: skip
    assert "holes of a sparse file" in f["message"]


READS_AND_WRITES = """\
[[workload]]
name = "w-rand"
rw = "randwrite"
[[workload]]
name = "rr2"
rw = "randread"
[[workload]]
name = "w-seq"
rw = "write"
bs = "1M"
[[workload]]
name = "seq-read"
rw = "read"
"""


def _unwritten_named(doc: dict[str, Any]) -> list[str]:
    found = [w for w in doc["warnings"] if w["id"] == "unwritten-read"]
    return list(found[0]["data"]["workloads"]) if found else []


@pytest.mark.root
def test_every_read_of_never_written_blocks_is_named_on_a_device_and_a_file(
    cli: Cli, scratch: Scratch, tmp_path: Path
) -> None:
    """Issue 23: rr (first), then a time-based random write, rr2 (still reads blocks it left
    unwritten), a sequential write of the whole area, seq-read (reads what it wrote)."""
    mixed = suite(tmp_path, extra=READS_AND_WRITES, name="mixed.toml")
    reads = suite(
        tmp_path, extra='[[workload]]\nname = "rr2"\nrw = "randread"\n', name="reads.toml"
    )
    holes = tmp_path / "sparse.dat"
    holes.write_bytes(b"")
    os.truncate(holes, 8 * MiB)
    for target in (scratch.loop(), str(holes)):  # zeros on a sparse device; a file's holes
        code, doc = doctor(cli, target, "-s", mixed, "--destructive")
        assert code == 0 and _unwritten_named(doc) == ["rr", "rr2"], doc["warnings"]
        (f,) = [w for w in doc["warnings"] if w["id"] == "unwritten-read"]
        assert "2 reading workloads read blocks no workload before them wrote" in f["message"]
        assert (
            "rr2 (after w-rand, whose random writes leave part of the area unwritten)"
            in (f["message"])
        )
        assert _unwritten_named(doctor(cli, target, "-s", reads)[1]) == ["rr", "rr2"]
    # A suite that writes first is looked at too: its later reads may read unwritten blocks.
    writes_first = suite(tmp_path, extra=READS_AND_WRITES, name="w.toml")
    first = Path(writes_first)
    first.write_text(first.read_text().replace('rw = "randread"', 'rw = "randwrite"', 1))
    code, doc = doctor(cli, scratch.loop(), "-s", writes_first, "--destructive")
    assert code == 0 and _unwritten_named(doc) == ["rr2"], doc["warnings"]


@pytest.mark.root
def test_random_io_on_a_spinning_disk_with_high_expectations(
    cli: Cli, scratch: Scratch, tmp_path: Path
) -> None:
    dev = scratch.loop(scratch.image(16 * MiB))
    run_tool("dd", "if=/dev/urandom", f"of={dev}", "bs=1M", "count=16", "conv=fsync")
    rotational = Path(f"/sys/block/{Path(dev).name}/queue/rotational")
    rotational.write_text("1")  # a loop device over a spinning disk says so
    assert rotational.read_text().strip() == "1"
    high = ("--expect", "rr.read.iops>=5k")
    doc = doctor(cli, dev, "-s", suite(tmp_path), *high)[1]
    assert doc["expectations"] == [{"expectation": "rr.read.iops>=5k", "source": "--expect"}]
    found = [w for w in doc["warnings"] if w["id"] == "rotational-random"]
    if in_vm(doc["host"]):
        # In a VM every disk's rotational flag is the hypervisor's (GCP's and Azure's SSD
        # volumes say 1), and so is a loop device's over them: no finding. The finding
        # itself is triggered in tests/test_findings.py and spinning_disk's rule below.
        assert found == []
        ctx = doc["targets"][0]["context"]
        assert spinning_disk(ctx, doc["host"]) is None
        bare = {**doc["host"], "virtualization": {"vm": "none", "container": None}}
        assert spinning_disk(ctx, bare) == dev
        return
    (f,) = found
    assert f["workload"] == "rr" and dev in f["message"]
    assert "rotational-random" not in ids(doctor(cli, dev, "-s", suite(tmp_path))[1])
    modest = ("--expect", "rr.read.iops>=100")
    assert "rotational-random" not in ids(doctor(cli, dev, "-s", suite(tmp_path), *modest)[1])
    rotational.write_text("0")
    assert "rotational-random" not in ids(doctor(cli, dev, "-s", suite(tmp_path), *high)[1])


@pytest.mark.root
def test_compressible_data_on_btrfs_with_compression(
    cli: Cli, scratch: Scratch, tmp_path: Path
) -> None:
    if not Path("/usr/sbin/mkfs.btrfs").exists() and not Path("/sbin/mkfs.btrfs").exists():
        pytest.skip("mkfs.btrfs is not installed (scripts/setup.sh --dev installs btrfs-progs)")
    if "btrfs" not in Path("/proc/filesystems").read_text():
        pytest.skip("this kernel has no btrfs")
    dev = scratch.loop(scratch.image(256 * MiB))
    run_tool("mkfs.btrfs", "-q", "-f", dev)
    where = tmp_path / "btrfs"
    where.mkdir()
    run_tool("mount", "-o", "compress=zstd", dev, str(where))
    scratch.stack.callback(run_tool, "umount", str(where))
    zeros = suite(tmp_path, name="z.toml", extra='[[workload]]\nname = "zw"\nrw = "write"\n'
                  "zero_buffers = true\n")  # fmt: skip
    plain = suite(tmp_path, name="p.toml", extra='[[workload]]\nname = "pw"\nrw = "write"\n')
    (f,) = [w for w in doctor(cli, str(where), "-s", zeros)[1]["warnings"]
            if w["id"] == "compressible-data"]  # fmt: skip
    assert f["workload"] == "zw" and "compress=zstd" in f["message"]
    assert "compressible-data" not in ids(doctor(cli, str(where), "-s", plain)[1])
    # The same suite on a filesystem that stores zeros as zeros.
    assert "compressible-data" not in ids(doctor(cli, str(tmp_path), "-s", zeros)[1])


@pytest.mark.root
def test_a_refused_run_is_explained_with_its_exit_code(
    cli: Cli, scratch: Scratch, tmp_path: Path
) -> None:
    dev = scratch.loop()
    writes = suite(tmp_path, extra='[[workload]]\nname = "w"\nrw = "randwrite"\n')
    code, out, _ = cli("doctor", dev, "-s", writes)
    assert code == 3
    assert "the run would be refused" in out and "--destructive" in out


@pytest.mark.root
@pytest.mark.fio
def test_prefill_writes_the_area_before_the_reads(
    cli: Cli, scratch: Scratch, tmp_path: Path, real_fio: str
) -> None:
    dev = scratch.loop()  # sparse: reads of it touch nothing
    reads = suite(tmp_path, runtime="1s")
    code, out, err = cli("run", dev, "-s", reads, "--json")
    assert code == 0, err
    assert "unwritten-read" in ids(json.loads(out))
    code, out, err = cli("run", dev, "-s", reads, "--prefill", "--destructive", "--json")
    assert code == 0, err
    assert "prefill the test area" in err
    assert "unwritten-read" not in ids(json.loads(out))
    with open(dev, "rb") as f:  # the first 4 MiB (the test area) now hold data, not zeros
        area = f.read(4 * MiB)
        rest = f.read(4 * MiB)
    assert area.count(0) < len(area) // 100 and rest == bytes(len(rest))


def test_a_hostile_target_name_cannot_forge_a_line_of_the_fio_jobfile(
    cli: Cli, tmp_path: Path
) -> None:
    target = tmp_path / "d\n[evil]\nexec_prerun=touch pwned;#"
    target.mkdir()
    plan = tmp_path / "plan.fio"
    code, out, err = cli("doctor", str(target), "-s", suite(tmp_path), "--fio-jobfile", str(plan))
    assert code == 0, err
    lines = plan.read_text().splitlines()
    assert not [line for line in lines if line.startswith(("[evil]", "exec_prerun"))]
    assert [line for line in lines if line.startswith("filename=")] == ["filename=target"] * 2
    assert "run fio where ./target is a" in plan.read_text()
    assert "\n[evil]" not in out and "\\n[evil]\\nexec_prerun" in out
