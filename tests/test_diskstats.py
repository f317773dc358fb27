"""Disk statistics of the devices that really served a target's IO (issue 12, point 1).

fio reaches a local target through the link ``target`` in iobench's private directory, so
fio's own ``disk_util`` describes the disk under /tmp. iobench reads the block layer's
counters of every device in the target's IO path itself: tested on a loop device (and its
backing file's disk), a device-mapper stack, a file on the real disk, and tmpfs.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.analysis.measured import first_device, measured_findings
from iobench.probe.diskstats import DiskStat, Snapshot, disk_util, parse_stat
from iobench.probe.storage import io_devices, kname_of_devno, probe_target, ram_backed_why
from iobench.records import ResultRecord, RunRecord, SuiteDefinition, TargetRecord
from scratch import MiB, Scratch

LINE = "  4242  17  90000  300  5000  250  80000  700  0  900  1000  0  0  0  0  3  1\n"


def test_parse_stat_reads_the_kernels_fields() -> None:
    s = parse_stat(LINE)
    assert s == DiskStat(
        read_ios=4242,
        read_merges=17,
        read_sectors=90000,
        write_ios=5000,
        write_merges=250,
        write_sectors=80000,
        io_ticks_ms=900,
        in_queue_ms=1000,
    )
    assert parse_stat(" ".join(LINE.split()[:11])) is not None  # kernels before discard stats


@pytest.mark.parametrize("text", ["", "1 2 3", "a b c d e f g h i j k", "1 2 3 4 5 6 7 8 9 -1 11"])
def test_parse_stat_refuses_what_is_not_a_stat_line(text: str) -> None:
    assert parse_stat(text) is None


def _snap(t: float, **stats: tuple[int, ...]) -> Snapshot:
    return Snapshot(
        t,
        {k: DiskStat(*v) for k, v in stats.items()},
        {k: "target" if i == 0 else "backing" for i, k in enumerate(stats)},
    )


def test_disk_util_is_the_difference_in_fio_shape() -> None:
    before = _snap(10.0, loop0=(100, 0, 800, 0, 0, 0, 0, 0), vda=(5, 1, 8, 7, 2, 16, 10, 20))
    after = _snap(
        12.0, loop0=(612, 40, 1_000_800, 0, 0, 0, 1500, 2400), vda=(9, 1, 16, 7, 2, 16, 30, 50)
    )
    loop0, vda = disk_util(before, after)
    assert loop0 == {
        "name": "loop0",
        "role": "target",
        "read_ios": 512,
        "write_ios": 0,
        "read_merges": 40,
        "write_merges": 0,
        "read_bytes": 1_000_000 * 512,
        "write_bytes": 0,
        "in_queue_ms": 2400,
        "util_pct": 75.0,  # 1500 ms busy in 2 s
        "source": "iobench",
    }
    assert (vda["name"], vda["role"], vda["read_ios"], vda["util_pct"]) == (
        "vda",
        "backing",
        4,
        1.0,
    )


def test_disk_util_leaves_out_what_cannot_be_a_difference() -> None:
    before = _snap(0.0, loop0=(100, 0, 0, 0, 0, 0, 0, 0))
    # loop0 was detached and re-attached meanwhile (its counters restarted); sdb is new.
    after = _snap(1.0, loop0=(3, 0, 0, 0, 0, 0, 0, 0), sdb=(1, 0, 0, 0, 0, 0, 0, 0))
    assert disk_util(before, after) == []
    busy = disk_util(_snap(0.0, a=(0,) * 8), _snap(0.5, a=(0, 0, 0, 0, 0, 0, 900, 0)))
    assert busy[0]["util_pct"] == 100.0  # io_ticks are coarse: never above 100 %


def test_io_devices_follow_the_stack_and_the_loop_backing_file() -> None:
    backing_ctx = {"io_devices": [{"kname": "vda", "maj_min": "254:0", "type": "disk",
                                   "role": "target", "via": None}]}  # fmt: skip
    ctx = {
        "block": {
            "chain": [
                {"kname": "dm-0", "maj_min": "252:0", "type": "lvm"},
                {"kname": "loop3", "maj_min": "7:3", "type": "loop", "backing_file": "/srv/x"},
                {"kname": "loop3", "maj_min": "7:3", "type": "loop"},  # seen twice: once
            ]
        }
    }
    found = io_devices(ctx, {"loop3": backing_ctx})
    assert [(d["kname"], d["role"]) for d in found] == [
        ("dm-0", "target"),
        ("loop3", "beneath"),
        ("vda", "backing"),
    ]
    assert found[2]["via"] == "loop3's backing file /srv/x"
    assert io_devices({"block": {"chain": []}}) == []


def test_ram_backing_is_read_from_the_probed_backing_files_only() -> None:
    """The probe of a loop device's backing file is made once, depth-limited, by the caller;
    what was not probed is not guessed (nor probed again past the limit)."""
    ctx = {"block": {"chain": [{"kname": "loop3", "backing_file": "/dev/shm/x.img"}]}}
    tmpfs = {"ram_backed": "tmpfs"}
    assert ram_backed_why(ctx, {"loop3": tmpfs}) == (
        "loop3 is a loop device over /dev/shm/x.img, on tmpfs"
    )
    assert ram_backed_why(ctx, {}) is None
    assert ram_backed_why(ctx) is None


def _record(metrics: dict[str, Any]) -> RunRecord:
    r = ResultRecord(
        target="/t", workload="seq", position=0, status="ok",
        params={"rw": "read", "bs": 4096}, metrics=metrics, job_file="", fio_argv=[],
        fio_rc=0, fio_version="3.33", raw_output=None, fio_stdout=None, fio_stderr=None,
        error=None, started_at="", finished_at="",
    )  # fmt: skip
    return RunRecord(
        id=1, uuid="u", status="complete", suite="s", suite_def=SuiteDefinition(), label=None,
        argv=[],
        host={}, fio_version="3.33", iobench_version="0", warnings=[], error=None,
        started_at="", finished_at=None,
        targets=[TargetRecord(0, "/t", "/t", "block", 1, {})], results=[r],
    )  # fmt: skip


def test_io_merging_reads_the_device_that_served_the_io_first() -> None:
    read = {"read": {"iops": 1.0, "bw_bytes": 4096.0, "total_ios": 1000}}
    merged_below = {
        **read,
        "disk_util": [
            {"name": "dm-0", "role": "target", "read_ios": 1000, "read_merges": 0},
            {"name": "sda", "role": "beneath", "read_ios": 100, "read_merges": 900},
        ],
    }
    assert (first_device(merged_below) or {}).get("name") == "dm-0"
    assert not [f for f in measured_findings(_record(merged_below)) if f.id == "io-merging"]
    merged_top = {**read, "disk_util": [{"name": "loop0", "role": "target", "read_ios": 250,
                                         "read_merges": 750}]}  # fmt: skip
    (f,) = [f for f in measured_findings(_record(merged_top)) if f.id == "io-merging"]
    assert "75% of its read IOs before loop0 saw them" in f.message
    assert "16 KiB instead of 4 KiB" in f.message
    assert not [f for f in measured_findings(_record({**read, "disk_util": []}))
                if f.id == "io-merging"]  # fmt: skip


# --- real fio on real devices ----------------------------------------------------------------

SEQ_SUITE = """\
name = "seq"
description = "sequential direct reads and writes"
[defaults]
runtime = "1s"
size = "16M"
iodepth = 4
numjobs = 1
bs = "64k"
direct = true
ioengine = "libaio"
[[workload]]
name = "seqread"
rw = "read"
[[workload]]
name = "seqwrite"
rw = "write"
"""


def _run(cli: Cli, tmp_path: Path, target: str, *extra: str) -> dict[str, Any]:
    suite = tmp_path / "seq.toml"
    suite.write_text(SEQ_SUITE)
    code, out, err = cli("run", target, "--suite", str(suite), "--json", *extra)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def _moved(result: dict[str, Any]) -> int:
    return sum(int((result.get(d) or {}).get("io_bytes") or 0) for d in ("read", "write"))


def _kname_of(path: str) -> str:
    st = Path(path).stat()
    name = kname_of_devno(os.major(st.st_dev), os.minor(st.st_dev))
    assert name, f"no block device under {path}"
    return name


@pytest.mark.root
def test_a_loop_device_over_a_file_on_disk_reports_itself_and_the_disk(
    cli: Cli, scratch: Scratch, tmp_path: Path, real_fio: str
) -> None:
    disk = _kname_of(str(tmp_path))
    dev = scratch.loop(scratch.image(32 * MiB))
    loop = Path(dev).name
    doc = _run(cli, tmp_path, dev, "--destructive")
    for r in doc["results"]:
        util = {u["name"]: u for u in r["disk_util"]}
        assert r["disk_util"][0]["name"] == loop, r["disk_util"]
        assert util[loop]["role"] == "target" and util[loop]["source"] == "iobench"
        # Every byte fio moved went through the loop device (direct IO: no page cache).
        moved = util[loop]["read_bytes"] + util[loop]["write_bytes"]
        assert moved >= 0.95 * _moved(r), (moved, _moved(r))
        if disk in util:  # the backing file's disk, when the loop device reached it
            assert util[disk]["role"] == "backing"
    seqread = next(r for r in doc["results"] if r["workload"] == "seqread")
    assert {u["name"] for u in seqread["disk_util"]} <= {loop, disk}
    assert next(u for u in seqread["disk_util"] if u["name"] == loop)["read_ios"] > 0


@pytest.mark.root
def test_a_stack_of_loop_devices_reports_every_layer(
    cli: Cli, scratch: Scratch, tmp_path: Path, real_fio: str
) -> None:
    """loopA over a file on an ext4 filesystem on loopB, itself over a file on the disk:
    the IO reaches loopA, then loopB, then the disk (this kernel has no device-mapper or
    md driver; the walk for those is tested above)."""
    disk = _kname_of(str(tmp_path))
    lower = scratch.loop(scratch.image(64 * MiB))
    scratch.mkfs(lower)
    fs = scratch.mount(lower)
    upper = scratch.loop(_file(fs / "upper.img", 32 * MiB))
    ctx = probe_target(upper)
    top, below = Path(upper).name, Path(lower).name
    assert [(d["kname"], d["role"]) for d in ctx["io_devices"]] == [
        (top, "target"),
        (below, "backing"),
        (disk, "backing"),
    ]
    assert ctx["io_devices"][1]["via"] == f"{top}'s backing file {fs / 'upper.img'}"
    doc = _run(cli, tmp_path, upper, "--destructive")
    for r in doc["results"]:
        assert [u["name"] for u in r["disk_util"]] == [top, below, disk]
        top_util = r["disk_util"][0]
        assert top_util["read_bytes"] + top_util["write_bytes"] >= 0.95 * _moved(r)


def _file(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def test_a_file_on_the_real_disk_reports_that_disk(cli: Cli, tmp_path: Path, real_fio: str) -> None:
    disk = _kname_of(str(tmp_path))
    doc = _run(cli, tmp_path, str(tmp_path))
    for r in doc["results"]:
        (u,) = r["disk_util"]
        assert (u["name"], u["role"]) == (disk, "target")
        # Direct IO reached the disk (other processes' IO can only add to the counters).
        moved = u["read_bytes"] + u["write_bytes"]
        assert moved >= 0.95 * _moved(r), (moved, _moved(r))
        assert 0 < u["util_pct"] <= 100


def test_tmpfs_has_no_disk_statistics_and_no_merging_finding(
    cli: Cli, tmp_path: Path, real_fio: str
) -> None:
    where = Path("/dev/shm") / f"iobench-test-{os.getpid()}"
    where.mkdir()
    try:
        suite = SEQ_SUITE.replace("direct = true", "direct = false")
        (tmp_path / "seq.toml").write_text(suite)
        code, out, err = cli("run", str(where), "--suite", str(tmp_path / "seq.toml"), "--json")
        assert code == 0, err
        doc = json.loads(out)
    finally:
        shutil.rmtree(where)
    assert [r["disk_util"] for r in doc["results"]] == [[], []]
    assert "io-merging" not in {w["id"] for w in doc["warnings"]}
