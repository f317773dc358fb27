"""Method warnings: each one triggered by a case, and not by its counterpart."""

from __future__ import annotations

from dataclasses import replace

import pytest

from iobench.analysis.findings import Finding, TargetFacts, method_findings
from iobench.expect import parse_expectation
from iobench.model import Suite, Workload
from iobench.suites import apply_overrides, builtin_names, fit_to_cpus, load_builtin

GiB = 1 << 30


def _suite(*workloads: Workload, indicative: bool = False, source: str = "my.toml") -> Suite:
    return Suite("s", "d", workloads, source, indicative=indicative)


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


def _on_disk(suite: Suite, cpus: int, device: int = 256 * GiB) -> list[Finding]:
    """The findings of ``suite`` as the preflight makes them: fitted to ``cpus``, in a
    directory on a disk of ``device`` bytes."""
    fitted = fit_to_cpus(suite, cpus)
    area = max(w.size for w in fitted.workloads)
    return method_findings(fitted, _facts(area, device), cpus)


def test_clean_plan_has_no_findings() -> None:
    assert _ids(_suite(_w())) == []


def test_numjobs_over_cpu_count() -> None:
    found = method_findings(_suite(_w("a", numjobs=4), _w("b", numjobs=2)), _facts(), 2)
    assert [(f.id, f.workload) for f in found] == [("numjobs-over-cpus", "a")]
    assert "4 jobs on 2 CPUs" in found[0].message
    assert _ids(_suite(_w(numjobs=4)), cpus=None) == []


@pytest.mark.parametrize("cpus", [1, 2, 3, 4, 64])
def test_a_user_suite_keeps_its_numjobs_warning(cpus: int) -> None:
    """A suite file runs as written: more jobs than CPUs is the user's to change."""
    mine = _suite(_w("a", numjobs=4, iodepth=32), _w("b"))
    found = _on_disk(mine, cpus, device=4 * GiB)
    expected = [("numjobs-over-cpus", "warning", "a")] if cpus < 4 else []
    assert [(f.id, f.severity, f.workload) for f in found] == expected


@pytest.mark.parametrize(
    ("cpus", "said"),
    [
        (1, "run 1 job at iodepth 128 instead of 4 at 32 (the same 128 IOs in flight)"),
        (2, "run 2 jobs at iodepth 64 instead of 4 at 32 (the same 128 IOs in flight)"),
        (3, "run 3 jobs at iodepth 43 instead of 4 at 32 (129 IOs in flight for the "
            "suite's 128, as near as 3 jobs share them)"),
        (4, None),
        (64, None),
    ],
)  # fmt: skip
def test_a_builtin_suite_fitted_to_the_cpus_says_so_once(cpus: int, said: str | None) -> None:
    found = _on_disk(load_builtin("standard"), cpus)
    assert "numjobs-over-cpus" not in [f.id for f in found]
    fitted = [f for f in found if f.id == "fitted-to-cpus"]
    if said is None:
        assert fitted == []
        return
    (info,) = fitted
    assert info.severity == "info" and info.workload is None and info.data == {"cpus": cpus}
    assert info.message.startswith(f"the standard suite is fitted to the {cpus} CPU")
    assert (
        "randread-4k-qd32x4, randwrite-4k-qd32x4, read-256k-qd32x4 and write-256k-qd32x4 " + said
    ) in info.message
    assert "qd1" not in info.message
    assert "to run 4 jobs anyway" in info.fix and "suite file of your own" in info.fix


def test_the_fitted_note_names_each_shape_and_only_what_ran() -> None:
    mixed = _suite(
        _w("deep", numjobs=4, iodepth=32),
        _w("odd", numjobs=3, iodepth=5),
        _w("one", numjobs=1, iodepth=8),
        source="builtin",
    )
    fitted = fit_to_cpus(mixed, 2)
    (info,) = method_findings(fitted, _facts(), 2)
    assert info.message.endswith(
        "deep runs 2 jobs at iodepth 64 instead of 4 at 32 (the same 128 IOs in flight); "
        "odd runs 2 jobs at iodepth 8 instead of 3 at 5 (16 IOs in flight for the suite's "
        "15, as near as 2 jobs share them). The results hold what ran"
    )
    assert "the suite's job counts anyway" in info.fix
    # An interrupted run speaks only of what ran.
    (only,) = method_findings(fitted.only(["odd", "one"]), _facts(), 2)
    assert "odd runs" in only.message and "deep" not in only.message
    assert method_findings(fitted.only(["one"]), _facts(), 2) == []


def test_buffered_io() -> None:
    found = method_findings(_suite(_w("a", direct=False), _w("b", direct=False)), _facts(), 8)
    assert [(f.id, f.severity, f.workload) for f in found] == [
        ("buffered-io", "warning", "a"), ("buffered-io", "warning", "b")
    ]  # fmt: skip
    assert "direct = true" in found[0].fix


def test_a_builtin_suite_buffered_by_its_method_says_so_once() -> None:
    (info,) = _on_disk(load_builtin("dd"), 2, device=4 * GiB)
    assert (info.id, info.severity, info.workload) == ("buffered-io", "info", None)
    assert "the dd suite uses buffered IO (direct=0) in write-dsync and read-back" in info.message
    assert "--suite standard" in info.fix


def test_small_file_on_a_big_device() -> None:
    found = method_findings(_suite(_w()), _facts(256 << 20, 256 << 30), 8)
    assert [(f.id, f.severity) for f in found] == [("small-file", "warning")]
    assert "256 MiB" in found[0].message and "0.098 %" in found[0].message
    assert "/dev/vdb" in found[0].message and "under /data" in found[0].message
    assert found[0].fix == "use --size 26G or more, or test the whole device"
    assert _ids(_suite(_w()), _facts(1 << 30, 4 << 30)) == []
    assert _ids(_suite(_w()), _facts(1 << 30, None)) == []


@pytest.mark.parametrize(
    ("device", "size"),
    [(256 * GiB, "26G"), (80 * GiB, "8G"), (4 * GiB, "410M"), (12 << 40, "1229G"),
     (200 << 40, "20T")],
)  # fmt: skip
def test_the_small_file_fix_is_a_size_to_type(device: int, size: str) -> None:
    (found,) = method_findings(_suite(_w(size=1 << 20)), _facts(1 << 20, device), 8)
    assert found.fix == f"use --size {size} or more, or test the whole device"


def test_small_file_of_a_builtin_suite_warns_only_when_the_user_chose_the_size() -> None:
    standard = load_builtin("standard")
    (own,) = [f for f in _on_disk(standard, 64) if f.id == "small-file"]
    assert own.severity == "info"
    assert "(4 GiB, the size the standard suite defines) is 1.6 %" in own.message
    assert own.fix == "use --size 26G or more, or test the whole device"
    chosen = apply_overrides(standard, size=8 * GiB)
    (warned,) = [f for f in _on_disk(chosen, 64) if f.id == "small-file"]
    assert warned.severity == "warning" and "defines" not in warned.message
    # The quick suite's own small area is part of its one note.
    quick = _on_disk(load_builtin("quick"), 64)
    assert [(f.id, f.severity) for f in quick] == [("indicative", "info")]
    chosen_quick = _on_disk(apply_overrides(load_builtin("quick"), size=16 << 20), 64)
    assert [(f.id, f.severity) for f in chosen_quick] == [
        ("small-file", "warning"), ("indicative", "info")
    ]  # fmt: skip


@pytest.mark.parametrize("source", ["sweep", "characterize"])
def test_a_commands_own_defaults_are_information_what_was_typed_warns(source: str) -> None:
    """sweep and characterize build their suite from options: the defaults the user did not
    type (a 10 s point, a 1 GiB area) are said once as information; --runtime and --size
    typed warn, with what to type instead. characterize chooses how long each point runs
    (as long as its figure needs, at most --point-time): no short-runtime for it."""
    points = [_w(f"p{i}", runtime_s=10.0, size=GiB) for i in range(6)]
    own = Suite(source, "d", tuple(points), source)
    found = method_findings(own, _facts(GiB, 256 * GiB), 8)
    short = [("short-runtime", "info")] if source == "sweep" else []
    assert [(f.id, f.severity) for f in found] == [("small-file", "info"), *short]
    assert f"{source}'s default --size" in found[0].message
    if short:
        assert f"{source} runs each point for 10s, its default --runtime" in found[1].message
    typed = replace(own, overridden=frozenset({"runtime", "size"}))
    found = method_findings(typed, _facts(GiB, 256 * GiB), 8)
    short = [("short-runtime", "warning")] if source == "sweep" else []
    assert [(f.id, f.severity) for f in found] == [("small-file", "warning"), *short]
    assert found[0].fix.startswith("use --size 26G or more")
    # The CPU fitting is for built-in suites only: a sweep's --jobs is the user's axis.
    many = Suite(source, "d", (_w("p", numjobs=4),), source)
    assert fit_to_cpus(many, 2) == many
    assert "numjobs-over-cpus" in _ids(many, cpus=2)


def test_an_indicative_suite_says_so_once() -> None:
    found = method_findings(
        _suite(_w("a", runtime_s=5, ramp_s=1), _w("b", runtime_s=5, ramp_s=1), indicative=True),
        _facts(),
        8,
    )
    assert [(f.id, f.severity, f.workload) for f in found] == [("indicative", "info", None)]
    assert found[0].message == (
        "the s suite is a first look: each workload runs 5s after a 1s ramp on a test area of "
        "1 GiB, too short for a steady state and too small to get past caches, so its numbers "
        "are indicative"
    )
    assert "--suite standard" in found[0].fix


def test_the_quick_suite_names_its_time_and_area() -> None:
    (info,) = [f for f in _on_disk(load_builtin("quick"), 2) if f.id == "indicative"]
    assert "each workload runs 5s after a 1s ramp on a test area of 256 MiB" in info.message


def test_short_runtime_in_a_suite_meant_for_quoting() -> None:
    found = method_findings(_suite(_w("a", runtime_s=10), _w("b", runtime_s=30)), _facts(), 8)
    assert [(f.id, f.severity, f.workload) for f in found] == [("short-runtime", "warning", "a")]
    assert found[0].fix == "use --runtime 30s or more"


def test_short_runtime_of_a_builtin_method_is_said_once_as_information() -> None:
    orion = load_builtin("orion-simple")
    (info,) = [f for f in _on_disk(orion, 2) if f.id == "short-runtime"]
    assert (info.severity, info.workload) == ("info", None)
    assert info.message.startswith("the orion-simple suite runs each workload for 20s, as its")
    # A short --runtime the user typed warns, once; a long one says nothing.
    typed = [
        f for f in _on_disk(apply_overrides(orion, runtime_s=10), 2) if f.id == "short-runtime"
    ]
    assert [(f.severity, f.workload) for f in typed] == [("warning", None)]
    assert typed[0].message.startswith("--runtime 10s is too short for the storage")
    long = _on_disk(apply_overrides(orion, runtime_s=30), 2)
    assert "short-runtime" not in [f.id for f in long]
    # So does a short --runtime on the indicative quick suite, beside its note.
    quick = _on_disk(apply_overrides(load_builtin("quick"), runtime_s=2), 2)
    assert [(f.id, f.severity) for f in quick if f.id != "fitted-to-cpus"] == [
        ("indicative", "info"), ("short-runtime", "warning")
    ]  # fmt: skip


def test_steady_state_detection_is_not_short() -> None:
    steady = _w("a", runtime_s=15, options=(("ss", "iops_slope:0.1%"),))
    assert _ids(_suite(steady)) == []


@pytest.mark.parametrize("cpus", [1, 2, 3, 4, 64])
@pytest.mark.parametrize("name", builtin_names())
def test_no_builtin_suite_warns_about_itself(name: str, cpus: int) -> None:
    """What the user did not choose is information; a warning is something to act on."""
    for device in (4 * GiB, 256 * GiB, 4 << 40):
        found = _on_disk(load_builtin(name), cpus, device)
        assert [f for f in found if f.severity == "warning"] == [], (name, cpus, device)
        assert len({f.id for f in found}) == len(found), "each said once"


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
    # Reads after a sequential write of the whole area read what it wrote.
    writes_first = _suite(_w("w1", rw="write"), _w("r1"))
    assert _ids(writes_first, sparse) == []
    assert _ids(_suite(_w("r0"), _w("w1", rw="randwrite")), sparse) == ["unwritten-read"]


def _unwritten(*workloads: Workload, share: float = 1.0, prefill: bool = False) -> Finding | None:
    """The unwritten-read finding of a suite on a device whose area is ``share`` unwritten."""
    facts = replace(
        _facts(), kind="block", unwritten_share=share, unwritten_how="zeros", prefill=prefill
    )
    found = [f for f in method_findings(_suite(*workloads), facts, 8) if f.id == "unwritten-read"]
    return found[0] if found else None


def _named(f: Finding | None) -> list[str]:
    return list((f.data or {})["workloads"]) if f else []


def test_every_read_of_never_written_blocks_is_named() -> None:
    """Issue 23: not only the first reading workload. A time-based random write leaves
    part of the area unwritten, so the reads after it still read never-written blocks; a
    sequential write of the whole area does not."""
    quick = load_builtin("quick").workloads  # rr, rw, rr x4, rw x4, read, write
    f = _unwritten(*quick)
    assert _named(f) == ["randread-4k-qd1", "randread-4k-qd32x4", "read-256k-qd32x4"]
    assert f is not None and "3 reading workloads read blocks no workload before them" in f.message
    assert "randread-4k-qd1 (before any write)" in f.message
    assert (
        "randread-4k-qd32x4 (after randwrite-4k-qd1, whose random writes leave part of the "
        "area unwritten)"
    ) in f.message
    # Reads before, between and after writes of each kind.
    r1, r2, r3 = _w("r1"), _w("r2", rw="read"), _w("r3", rw="randrw")
    seq, rand = _w("seq", rw="write"), _w("rand", rw="randwrite")
    assert _named(_unwritten(r1, seq, r2, r3)) == ["r1"]
    assert _named(_unwritten(seq, r1, rand, r2)) == []
    assert _named(_unwritten(rand, r1, r2, seq, r3)) == ["r1", "r2"]
    assert _named(_unwritten(r1, r2, r3)) == ["r1", "r2", "r3"]
    assert _named(_unwritten(seq, r1, rand, r2, share=0.2)) == []  # written before
    assert _named(_unwritten(r1, rand, r2, prefill=True)) == []
    # A mixed workload reads as it writes: its own reads count, and it writes only part.
    assert _named(_unwritten(_w("mix", rw="randrw"), r1)) == ["mix", "r1"]
    assert _named(_unwritten(_w("mix", rw="randrw", rwmixread=0), r1)) == ["r1"]
    # A smaller sequential write covers only its own area: a larger read goes beyond it.
    small = _w("small", rw="write", size=64 << 20)
    f = _unwritten(small, _w("big", size=1 << 30))
    assert _named(f) == ["big"] and "which writes only the first 64 MiB" in (f.message if f else "")
    assert _named(_unwritten(small, _w("inside", size=32 << 20))) == []


def test_random_writes_that_cover_the_area_and_trims_that_unwrite_it() -> None:
    r = _w("r")
    # Not time-based, with fio's random map: every block once (it ends when all are done).
    whole = _w("rand", rw="randwrite", options=(("time_based", "0"),))
    assert _named(_unwritten(whole, r)) == []
    nomap = _w("rand", rw="randwrite", options=(("time_based", "0"), ("norandommap", "1")))
    assert _named(_unwritten(nomap, r)) == ["r"]
    zipf = _w(
        "rand", rw="randwrite", options=(("time_based", "0"), ("random_distribution", "zipf:1.2"))
    )
    assert _named(_unwritten(zipf, r)) == ["r"]
    mixed_seq = _w("seq", rw="write", options=(("percentage_random", "50"),))
    assert _named(_unwritten(mixed_seq, r)) == ["r"]
    # A trim unwrites what was written, also on an area that was written before the run.
    trim = _w("trim", rw="randtrim")
    f = _unwritten(_w("seq", rw="write"), trim, r, share=0.0)
    assert _named(f) == ["r"] and f is not None
    assert "a trim discards blocks of the test area" in f.message
    assert "r (after trim, which discards blocks of the area)" in f.message
    assert _named(_unwritten(trim, _w("seq", rw="trimwrite"), r, share=0.0)) == []
