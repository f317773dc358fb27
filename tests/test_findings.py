"""Method warnings: each one triggered by a case, and not by its counterpart."""

from __future__ import annotations

from iobench.analysis.findings import TargetFacts, method_findings
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
