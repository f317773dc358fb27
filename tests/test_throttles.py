"""Cgroup IO throttles iobench and its fio run under (issue 12, point 3): read from /proc and
the cgroup files, stored with the target, shown by info, doctor, show and reports, and used
by the findings and the limits.

cgroup v2 ``io.max`` is read from a cgroup tree made of plain files in tmp_path (this
machine's kernel binds the IO controller to v1); v1 ``blkio.throttle.*`` also for real,
on a loop device over RAM in a real blkio cgroup.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from iobench.analysis.curves import Estimate, Limits
from iobench.analysis.findings import Finding, TargetFacts, method_findings
from iobench.analysis.measured import throttled_figures
from iobench.analysis.throttles import (
    at_throttle,
    throttle_line,
    throttled_directions,
    with_throttles,
)
from iobench.engine.local import note_fio_cgroup
from iobench.model import Suite, Workload
from iobench.probe.host import read_text
from iobench.probe.storage import probe_target
from iobench.probe.throttle import (
    effective,
    parse_io_max,
    parse_mountinfo,
    parse_proc_cgroup,
    parse_v1,
    process_throttles,
    throttle_text,
    throttles_of,
)
from iobench.records import ResultRecord, TargetRecord
from scratch import MiB, Scratch, capped_volume, iobench_in

LOOP = [{"kname": "loop3", "maj_min": "7:3"}, {"kname": "vda", "maj_min": "254:0"}]


def test_proc_cgroup_gives_each_hierarchys_path() -> None:
    text = "12:blkio:/kube/pod1\n4:cpu,cpuacct:/x\n1:name=systemd:/a\n0::/kube/pod1/c\nbad\n"
    assert parse_proc_cgroup(text) == {
        "blkio": "/kube/pod1",
        "cpu": "/x",
        "cpuacct": "/x",
        "name=systemd": "/a",
        "": "/kube/pod1/c",
    }


def test_mountinfo_gives_the_cgroup_mounts_unescaped() -> None:
    text = (
        "30 25 0:26 / /sys/fs/cgroup/blkio rw,relatime shared:9 - cgroup cgroup rw,blkio\n"
        "31 25 0:27 /docker/abc /sys/fs/cgroup/my\\040dir rw - cgroup2 cgroup2 rw\n"
        "32 25 0:28 / /proc rw - proc proc rw\n"
        "garbage line\n"
    )
    assert parse_mountinfo(text) == [
        ("/sys/fs/cgroup/blkio", "/", "cgroup", {"rw", "blkio"}),
        ("/sys/fs/cgroup/my dir", "/docker/abc", "cgroup2", {"rw"}),
    ]


def test_throttle_files_are_parsed_strictly() -> None:
    assert parse_v1("7:3 5000\n8:0 0\nx:y 5\n254:0 abc\n7:4 99999999999999999999\n") == {
        "7:3": 5000
    }
    assert parse_io_max(
        "7:3 rbps=209715200 wbps=max riops=5000 wiops=max\n8:0 rbps=max wbps=max\n"
        "254:0 riops=12 bogus=3 wiops=-1\nnot a line\n"
    ) == {"7:3": {"read_bps": 209715200, "read_iops": 5000}, "254:0": {"read_iops": 12}}


def _tree(tmp_path: Path, version: int, root: str = "/") -> tuple[Path, str]:
    """A fake cgroup mount in tmp_path and the mountinfo line that names it."""
    mnt = tmp_path / f"cg{version}"
    mnt.mkdir()
    fstype, opts = ("cgroup2", "rw") if version == 2 else ("cgroup", "rw,blkio")
    return mnt, f"40 30 0:50 {root} {mnt} rw,relatime - {fstype} {fstype} {opts}\n"


def test_v2_limits_apply_from_every_level_above_the_process(tmp_path: Path) -> None:
    mnt, line = _tree(tmp_path, 2)
    (mnt / "kube" / "pod1").mkdir(parents=True)
    (mnt / "io.max").write_text("7:3 riops=9000\n")  # the root's: applies to all below
    (mnt / "kube" / "io.max").write_text("7:3 riops=1000 wbps=1048576\n254:0 wiops=50\n")
    (mnt / "kube" / "pod1" / "io.max").write_text("7:3 riops=5000 rbps=max\n9:9 riops=1\n")
    t = throttles_of("0::/kube/pod1\n", line, LOOP)
    assert t["cgroups"] == [{"version": 2, "path": "/kube/pod1"}]
    assert [(e["cgroup"], e["device"], e["read_iops"]) for e in t["limits"]] == [
        ("/kube/pod1", "loop3", 5000),
        ("/kube", "loop3", 1000),
        ("/kube", "vda", None),
        ("/", "loop3", 9000),
    ]  # 9:9 is not one of the target's devices
    eff = effective(t)
    assert eff == {
        "loop3": {
            "read_iops": (1000, "cgroup v2 /kube"),
            "write_bps": (1048576, "cgroup v2 /kube"),
        },
        "vda": {"write_iops": (50, "cgroup v2 /kube")},
    }
    assert throttle_text(eff) == (
        "loop3: read 1.00k IOPS, write 1.00 MiB/s (cgroup v2 /kube); "
        "vda: write 50.0 IOPS (cgroup v2 /kube)"
    )


def test_v1_limits_are_the_process_cgroups_own(tmp_path: Path) -> None:
    """v1 throttles are flat: a parent's limit does not hold its children (measured on this
    kernel: a parent's 2,000 IOPS left a child at 400k IOPS)."""
    mnt, line = _tree(tmp_path, 1)
    (mnt / "svc" / "job").mkdir(parents=True)
    (mnt / "svc" / "blkio.throttle.read_iops_device").write_text("7:3 100\n")
    job = mnt / "svc" / "job"
    (job / "blkio.throttle.read_iops_device").write_text("7:3 5000\n")
    (job / "blkio.throttle.write_bps_device").write_text("7:3 1048576\n254:0 2097152\n")
    t = throttles_of("9:blkio:/svc/job\n0::/\n", line, LOOP)
    assert effective(t) == {
        "loop3": {
            "read_iops": (5000, "cgroup v1 /svc/job"),
            "write_bps": (1048576, "cgroup v1 /svc/job"),
        },
        "vda": {"write_bps": (2097152, "cgroup v1 /svc/job")},
    }


def test_a_mount_of_a_subtree_is_followed_from_its_root(tmp_path: Path) -> None:
    """In a container the hierarchy is mounted from the container's own cgroup."""
    mnt, line = _tree(tmp_path, 2, root="/docker/abc")
    (mnt / "app").mkdir()
    (mnt / "app" / "io.max").write_text("7:3 wiops=300\n")
    t = throttles_of("0::/docker/abc/app\n", line, LOOP)
    assert effective(t) == {"loop3": {"write_iops": (300, "cgroup v2 /docker/abc/app")}}
    # A cgroup outside what the mount shows, or a path that climbs, is not followed.
    assert throttles_of("0::/other\n", line, LOOP)["limits"] == []
    assert throttles_of("0::/docker/abc/../../etc\n", line, LOOP)["limits"] == []


def test_nothing_readable_says_why(tmp_path: Path) -> None:
    t = process_throttles(LOOP, pid=424242, proc=tmp_path)
    assert t["limits"] == [] and "cannot read" in t["note"]
    devices = [{"kname": "loop3"}]
    assert throttle_line({"throttles": t, "io_devices": devices}) == f"unknown: {t['note']}"
    assert throttle_line({"throttles": t, "io_devices": []}) is None  # tmpfs: nothing to hold
    none = throttles_of("0::/\n", "1 2 0:1 / /proc rw - proc proc rw\n", LOOP)
    assert none["note"] and "no blkio" in none["note"]
    assert throttle_line({}) is None  # a context from before iobench looked
    empty = {"cgroups": [{"version": 1, "path": "/"}], "limits": [], "note": None}
    assert throttle_line({"throttles": empty, "io_devices": devices}) == (
        "none on its devices (iobench's cgroups: v1 /)"
    )


CTX = {
    "throttles": {
        "limits": [
            {"device": "loop0", "version": 1, "cgroup": "/c", "read_iops": 5000,
             "write_iops": None, "read_bps": 200 * MiB, "write_bps": None},
        ]
    }
}  # fmt: skip


@pytest.mark.parametrize(
    ("direction", "metric", "value", "at"),
    [
        ("read", "iops", 4999.2, True),
        ("read", "iops", 4600, True),  # 92 %: a throttle rarely lets its whole rate through
        ("read", "iops", 4300, False),  # 86 %: something else limited it
        ("read", "iops", 5400, False),  # beyond the throttle: not it (another device?)
        ("write", "iops", 5000, False),  # writes are not throttled
        ("read", "bw_bytes", 202 * MiB, True),
        ("read", "bw_bytes", None, False),
    ],
)
def test_a_figure_at_a_throttle_is_named(
    direction: str, metric: str, value: float | None, at: bool
) -> None:
    found = at_throttle(CTX, direction, metric, value)
    assert (found is not None) == at
    if found and metric == "iops":
        assert found == "the read 5.00k IOPS throttle on loop0 (cgroup v1 /c)"
    assert throttled_directions(CTX) == {"read"}


def _limits(rw: str, iops: float, bw: float) -> Limits:
    return Limits(
        "/dev/loop0", rw, Estimate(iops, iops * 0.98, iops * 1.02, "plateau at 4 KiB"),
        Estimate(bw, bw * 0.98, bw * 1.02, "plateau at 1 MiB"), None, {}, (),
    )  # fmt: skip


def test_limits_equal_to_a_throttle_say_so() -> None:
    lim = with_throttles(_limits("randread", 4980, 150 * MiB), CTX)
    assert lim.throttles == {"iops": "the read 5.00k IOPS throttle on loop0 (cgroup v1 /c)"}
    assert lim.document()["throttles"] == {"iops": lim.throttles["iops"], "bw_bytes": None}
    assert with_throttles(_limits("randwrite", 4980, 200 * MiB), CTX).throttles == {}
    assert with_throttles(_limits("randrw", 4980, 200 * MiB), CTX).throttles == {}


def _facts(ram: str | None, throttled: frozenset[str]) -> TargetFacts:
    return TargetFacts("/dev/loop0", "/dev/loop0", "block", 32 * MiB, 64 * MiB, "/dev/loop0",
                       ram_backed=ram, throttles="loop0: read 5.00k IOPS (cgroup v1 /c)"
                       if throttled else None, throttled=throttled)  # fmt: skip


def _suite(*modes: str) -> Suite:
    workloads = tuple(
        Workload(name=m, rw=m, bs=4096, iodepth=1, numjobs=1, size=32 * MiB) for m in modes
    )
    return Suite("s", "d", workloads, source="test")


def ids(found: list[Finding]) -> dict[str, Finding]:
    return {f.id: f for f in found}


def test_a_throttled_ram_device_is_an_emulated_capped_volume_not_a_ram_warning() -> None:
    capped = ids(method_findings(_suite("randread"), _facts("tmpfs", frozenset({"read"})), 2))
    assert "ram-backed" not in capped
    assert capped["throttled"].severity == "info"
    assert "emulated capped volume" in capped["throttled"].message
    # Writes are not throttled: they measure memory, and the warning says so.
    mixed = ids(method_findings(_suite("randread", "randwrite"), _facts("tmpfs",
                                frozenset({"read"})), 2))  # fmt: skip
    assert mixed["ram-backed"].severity == "warning"
    assert "the throttles cap only its reads" in mixed["ram-backed"].message
    assert "emulated" not in mixed["throttled"].message
    plain = ids(method_findings(_suite("randread"), _facts("tmpfs", frozenset()), 2))
    assert "ram-backed" in plain and "throttled" not in plain


# --- real throttles ----------------------------------------------------------------------------

CAPPED_SUITE = """\
name = "capped"
description = "random and sequential reads"
[defaults]
runtime = "2s"
size = "16M"
numjobs = 1
direct = true
ioengine = "libaio"
[[workload]]
name = "randread-qd8"
rw = "randread"
bs = "4k"
iodepth = 8
"""


@pytest.mark.serial  # measures: run alone (scripts/test.sh)
@pytest.mark.root
def test_info_doctor_run_show_and_reports_carry_a_real_throttle(
    scratch: Scratch, tmp_path: Path, real_fio: str
) -> None:
    dev, group = capped_volume(scratch, 32 * MiB, 3000, 0)
    loop = Path(dev).name
    db = tmp_path / "r.db"
    cg = "/" + group.path.name
    want = f"{loop}: read 3.00k IOPS (cgroup v1 {cg})"
    code, out, err = iobench_in(group, db, "info", dev)
    assert code == 0, err
    assert f"io throttles     {want}" in out
    code, out, err = iobench_in(group, db, "info", dev, "--json")
    limits = json.loads(out)["target"]["context"]["throttles"]["limits"]
    assert [(e["device"], e["cgroup"], e["read_iops"]) for e in limits] == [(loop, cg, 3000)]
    suite = tmp_path / "capped.toml"
    suite.write_text(CAPPED_SUITE)
    code, out, err = iobench_in(group, db, "doctor", dev, "--suite", str(suite))
    assert code == 0, err
    assert want in out and "[throttled]" in out and "[ram-backed]" not in out
    code, out, err = iobench_in(group, db, "run", dev, "--suite", str(suite), "--json")
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    by_id = {w["id"]: w for w in doc["warnings"]}
    assert "ram-backed" not in by_id and by_id["throttled"]["severity"] == "info"
    assert f"{loop} is a loop device over /dev/shm/" in by_id["throttled"]["message"]
    assert "an emulated capped volume" in by_id["throttled"]["message"]
    (r,) = doc["results"]
    assert r["read"]["iops"] == pytest.approx(3000, rel=0.1)
    assert "the read 3.00k IOPS throttle on" in by_id["at-throttle"]["message"]
    assert doc["targets"][0]["context"]["throttles"]["limits"][0]["read_iops"] == 3000
    # Outside the cgroup: show and the reports read the stored context.
    for args, text in (
        (("show", "1"), f"throttled: {want}"),
        (("report", "1", "-o", "-"), f"throttled: {want}"),
        (("report", "1", "-o", str(tmp_path / "r.html")), None),
    ):
        done = subprocess.run([sys.executable, "-m", "iobench", "--db", str(db), *args],
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert text is None or text in done.stdout, done.stdout
    html = (tmp_path / "r.html").read_text()
    assert "io throttles" in html and f"read 3.00k IOPS (cgroup v1 {cg})" in html


@pytest.mark.root
def test_fio_in_another_cgroup_than_iobench_is_reported(scratch: Scratch) -> None:
    """fio inherits iobench's cgroups; if something moved it, its throttles differ from
    the ones stored with the target."""
    dev, group = capped_volume(scratch, 1 * MiB, 3000, 0)
    ctx = probe_target(dev)  # probed here, outside the cgroup: no throttle stored
    assert ctx["throttles"]["limits"] == []
    own = read_text("/proc/self/cgroup") or ""

    def in_blkio(path: str) -> str:
        return "".join(
            f"{line.split(':')[0]}:blkio:{path}\n" if ":blkio:" in line else f"{line}\n"
            for line in own.splitlines()
        )

    found: list[Finding] = []
    note_fio_cgroup(found, own, own, dev, ctx)  # where iobench is
    note_fio_cgroup(found, None, own, dev, ctx)  # not known (a client)
    note_fio_cgroup(found, in_blkio("/elsewhere"), own, dev, ctx)  # moved, same throttles
    assert found == []
    moved = in_blkio(f"/{group.path.name}")
    note_fio_cgroup(found, moved, own, dev, ctx)
    note_fio_cgroup(found, moved, own, dev, ctx)
    (f,) = found  # once per target
    assert f.id == "fio-cgroup" and f.target == dev
    assert f"read 3.00k IOPS (cgroup v1 /{group.path.name})" in f.message
    assert "(iobench's: none)" in f.message


def test_each_direction_at_its_throttle_is_named() -> None:
    """A reader and a writer run together (or a mixed workload) can each be at a throttle:
    the at-throttle finding names both, not only the first."""
    ctx = {
        "throttles": {
            "limits": [
                {"device": "loop0", "version": 1, "cgroup": "/c", "read_iops": 3000,
                 "write_iops": 3000, "read_bps": 100 * MiB, "write_bps": 100 * MiB},
            ]
        }
    }  # fmt: skip
    target = TargetRecord(0, "/v", "/v", "directory", None, ctx)
    metrics = {
        "read": {"iops": 3001.0, "bw_bytes": 11.7 * MiB},
        "write": {"iops": 1524.0, "bw_bytes": 99.5 * MiB},
    }
    result = ResultRecord(
        "/v", "rw", 0, "ok", {}, metrics, "", [], 0, None, None, None, None, None, "", ""
    )
    found = throttled_figures(target, result)
    assert [(d, m) for d, m, _, _ in found] == [("read", "iops"), ("write", "bw_bytes")]
    result = dataclasses.replace(result, metrics={"write": metrics["write"]})
    assert [(d, m) for d, m, _, _ in throttled_figures(target, result)] == [("write", "bw_bytes")]
    assert throttled_figures(None, result) == []


def test_an_image_s_qos_limits_are_said_without_naming_the_image_again() -> None:
    from iobench.analysis.throttles import throttle_summary

    qos = {"limits": [{"device": "rbd:rbd/img", "where": "RBD QoS rbd_qos_iops_limit, set "
                       "in the image", "read_iops": 800, "write_iops": 800}]}  # fmt: skip
    assert throttle_summary({"qos": qos}) == (
        "throttled: read 800 IOPS, write 800 IOPS (RBD QoS rbd_qos_iops_limit, set in the image)"
    )
    assert throttle_summary({}) is None


def test_the_devices_and_both_kinds_of_throttle_are_said_in_one_line() -> None:
    """``info``'s devices line names each device serving the target with its role (and how
    it serves it); the summary joins a cgroup throttle and the storage's own QoS with "; ".
    A context without devices (tmpfs, or one stored before the field) has no line."""
    from iobench.analysis.throttles import devices_line, throttle_summary

    ctx = {"io_devices": [{"kname": "loop0", "role": "target"}, "not a device",
                          {"kname": "vda", "role": "backing",
                           "via": "loop0's backing file /srv/img"}]}  # fmt: skip
    assert devices_line(ctx) == "loop0 (target), vda (backing: loop0's backing file /srv/img)"
    assert devices_line({"io_devices": [{"kname": "sdb", "role": "target", "via": ""}]}) == (
        "sdb (target)"
    )
    empties: list[dict[str, Any] | None] = [
        None, {}, {"io_devices": []}, {"io_devices": ["x", 3]}, {"io_devices": None}
    ]  # fmt: skip
    for empty in empties:
        assert devices_line(empty) is None, empty
    limits = [{"device": "loop0", "version": 1, "cgroup": "/capped", "read_iops": 5000}]
    qos = {"limits": [{"device": "rbd:rbd/img", "where": "RBD QoS rbd_qos_bps_limit",
                       "read_bps": 100 << 20}]}  # fmt: skip
    both = throttle_summary({"throttles": {"limits": limits}, "qos": qos})
    assert both == (
        "throttled: loop0: read 5.00k IOPS (cgroup v1 /capped); read 100 MiB/s (RBD QoS "
        "rbd_qos_bps_limit)"
    )
    assert throttle_summary({"throttles": {"limits": limits}}) == (
        "throttled: loop0: read 5.00k IOPS (cgroup v1 /capped)"
    )


def test_infos_throttle_line_says_what_it_found_and_where_it_looked() -> None:
    """``info``'s throttle line: the throttles found; none, with the cgroups looked at
    (each of them, ", " between); none at all when no cgroup was looked at; unknown, with
    why, when nothing could be read. The QoS and cgroup texts skip what is not a table,
    and name each QoS-limited device's limits, "; " between."""
    from iobench.analysis.throttles import cgroup_throttle_text, qos_text

    devices = [{"kname": "loop0", "role": "target"}]
    limits = [{"device": "loop0", "version": 1, "cgroup": "/capped", "read_iops": 5000}]
    found = {"limits": limits, "cgroups": [{"version": 1, "path": "/capped"}], "note": None}
    assert throttle_line({"throttles": found, "io_devices": devices}) == (
        "loop0: read 5.00k IOPS (cgroup v1 /capped)"
    )
    looked = [{"version": 1, "path": "/"}, "x", {"version": 2, "path": "/user.slice"}]
    two = {"limits": [], "cgroups": looked, "note": None}
    assert throttle_line({"throttles": two, "io_devices": devices}) == (
        "none on its devices (iobench's cgroups: v1 /, v2 /user.slice)"
    )
    bare: dict[str, Any] = {"limits": [], "cgroups": [], "note": None}
    assert throttle_line({"throttles": bare, "io_devices": devices}) == "none on its devices"
    # A note and cgroups looked at: the cgroups are what it says.
    noted = {**two, "note": "cannot read /proc/1/cgroup"}
    assert (throttle_line({"throttles": noted, "io_devices": devices}) or "").startswith("none")
    assert qos_text({"qos": "not a table"}) is None
    assert cgroup_throttle_text({"throttles": ["not", "a", "table"]}) is None
    qos = {"limits": [
        {"device": "rbd:rbd/a", "where": "RBD QoS, image a", "read_iops": 800},
        {"device": "rbd:rbd/b", "where": "RBD QoS, image b", "read_iops": 900},
    ]}  # fmt: skip
    assert qos_text({"qos": qos}) == (
        "read 800 IOPS (RBD QoS, image a); read 900 IOPS (RBD QoS, image b)"
    )
