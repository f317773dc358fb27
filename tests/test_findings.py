"""Method warnings: each one triggered by a case, and not by its counterpart."""

from __future__ import annotations

from dataclasses import replace

from iobench.analysis.findings import TargetFacts, method_findings
from iobench.expect import parse_expectation
from iobench.model import Suite, Workload


def _suite(*workloads: Workload, indicative: bool = False) -> Suite:
    return Suite("s", "d", workloads, "builtin", indicative=indicative)


def _w(name: str = "w", **kw: object) -> Workload:
    base: dict[str, object] = {
        "name": name, "rw": "randread", "bs": 4096, "iodepth": 1, "numjobs": 1,
        "runtime_s": 60.0,
    }  # fmt: skip
    base.update(kw)
    return Workload(**base)  # type: ignore[arg-type]


def _facts(test_bytes: int = 1 << 30, device_bytes: int | None = 4 << 30) -> TargetFacts:
    return TargetFacts(".", "/data", "directory", test_bytes, device_bytes, "/dev/vdb")


def _ids(suite: Suite, facts: TargetFacts | None = None, cpus: int | None = 8) -> list[str]:
    return [f.id for f in method_findings(suite, facts or _facts(), cpus)]


def test_clean_plan_has_no_findings() -> None:
    assert _ids(_suite(_w())) == []


def test_numjobs_over_cpu_count() -> None:
    found = method_findings(_suite(_w("a", numjobs=4), _w("b", numjobs=2)), _facts(), 2)
    assert [(f.id, f.workload) for f in found] == [("numjobs-over-cpus", "a")]
    assert "4 jobs on 2 CPUs" in found[0].message
    assert _ids(_suite(_w(numjobs=4)), cpus=None) == []


def test_buffered_io() -> None:
    assert _ids(_suite(_w(direct=False))) == ["buffered-io"]


def test_small_file_on_a_big_device() -> None:
    found = method_findings(_suite(_w()), _facts(256 << 20, 256 << 30), 8)
    assert [f.id for f in found] == ["small-file"]
    assert "256 MiB" in found[0].message and "0.098 %" in found[0].message
    assert "/dev/vdb" in found[0].message and "under /data" in found[0].message
    assert "25.6 GiB" in found[0].fix
    assert _ids(_suite(_w()), _facts(1 << 30, 4 << 30)) == []
    assert _ids(_suite(_w()), _facts(1 << 30, None)) == []


def test_short_runtime_indicative_suite_says_so_once() -> None:
    found = method_findings(
        _suite(_w("a", runtime_s=5), _w("b", runtime_s=5), indicative=True), _facts(), 8
    )
    assert [(f.id, f.severity) for f in found] == [("short-runtime", "info")]
    assert "indicative" in found[0].message


def test_short_runtime_in_a_suite_meant_for_quoting() -> None:
    found = method_findings(_suite(_w("a", runtime_s=10), _w("b", runtime_s=30)), _facts(), 8)
    assert [(f.id, f.severity, f.workload) for f in found] == [("short-runtime", "warning", "a")]


# -- what the target is (issue 6) ---------------------------------------------------------------


def test_ram_backed_target() -> None:
    facts = replace(_facts(), ram_backed="tmpfs")
    found = method_findings(_suite(_w()), facts, 8)
    assert [f.id for f in found] == ["ram-backed"]
    assert "in RAM (tmpfs)" in found[0].message and found[0].target == "."
    assert _ids(_suite(_w()), replace(_facts(), ram_backed=None)) == []


def test_compressible_data_on_a_compressing_filesystem() -> None:
    btrfs = replace(_facts(), compressing="is btrfs mounted with compress=zstd:3")
    zeros = _w("zw", rw="write", options=(("zero_buffers", "1"),))
    squeezed = _w("cw", rw="randwrite", options=(("buffer_compress_percentage", "50"),))
    dedup = _w("dw", rw="write", options=(("scramble_buffers", "0"),))
    plain = _w("pw", rw="write")
    reads_zero = _w("zr", rw="read", options=(("zero_buffers", "1"),))
    found = method_findings(_suite(zeros, squeezed, dedup, plain, reads_zero), btrfs, 8)
    assert [(f.id, f.workload) for f in found] == [
        ("compressible-data", "zw"), ("compressible-data", "cw"), ("compressible-data", "dw")
    ]  # fmt: skip
    assert "zero_buffers = 1 writes zeros" in found[0].message
    assert "compress=zstd:3" in found[0].message
    refilled = _w("rw", rw="write", options=(("scramble_buffers", "0"), ("refill_buffers", "1")))
    assert _ids(_suite(plain, refilled), btrfs) == []
    assert _ids(_suite(zeros), _facts()) == []  # ext4 and the like store zeros as they are


def test_random_io_on_a_spinning_disk_with_high_expectations() -> None:
    expect = (parse_expectation("w.read.iops>=5000"), parse_expectation("seq.read.p99<1ms"))
    disk = replace(_facts(), rotational="/dev/sdb", expectations=expect)
    seq = _w("seq", rw="read")
    found = method_findings(_suite(_w(), seq), disk, 8)
    assert [(f.id, f.workload) for f in found] == [("rotational-random", "w")]
    assert "w.read.iops>=5000 expects 5.00k IOPS" in found[0].message
    modest = replace(disk, expectations=(parse_expectation("w.read.iops>=150"),))
    assert _ids(_suite(_w()), modest) == []
    assert _ids(_suite(_w()), replace(disk, expectations=())) == []
    assert _ids(_suite(_w()), replace(disk, rotational=None)) == []
    fast = replace(disk, expectations=(parse_expectation("*.read.p50<500us"),))
    assert _ids(_suite(_w()), fast) == ["rotational-random"]


def test_reads_of_an_area_never_written() -> None:
    sparse = replace(_facts(), kind="block", unwritten_share=1.0, unwritten_how="zeros")
    found = method_findings(_suite(_w()), sparse, 8)
    assert [f.id for f in found] == ["unwritten-read"]
    assert "100% of the test area" in found[0].message and "--prefill" in found[0].fix
    holes = replace(sparse, unwritten_share=0.6, unwritten_how="holes")
    assert "holes of a sparse file" in method_findings(_suite(_w()), holes, 8)[0].message
    assert _ids(_suite(_w()), replace(sparse, unwritten_share=0.2)) == []
    assert _ids(_suite(_w()), replace(sparse, prefill=True)) == []
    # Reads after a workload that writes the area read what it wrote.
    writes_first = _suite(_w("w1", rw="randwrite"), _w("r1"))
    assert _ids(writes_first, sparse) == []
    assert _ids(_suite(_w("r0"), _w("w1", rw="randwrite")), sparse) == ["unwritten-read"]
