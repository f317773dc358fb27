"""merge_jobs combines job entries as fio's group_reporting does. The reference is fio
itself: in client mode fio 3.33 adds an "All clients" entry computed with the same
sum_thread_stats, so the recorded outputs hold fio's own answer for their entries."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from iobench.analysis.aggregate import merge_directions, merge_jobs
from iobench.analysis.histogram import merge_bins, percentiles_from_bins
from iobench.fio.parse import ALL_CLIENTS, parse_fio_output
from iobench.model import DirectionResult, JobResult, LatencyStats
from test_groups import direction, latency

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"


@pytest.mark.parametrize(
    "name", ["client-server-2-jsonplus.json", "client-numjobs2-no-group-reporting-json.json"]
)
def test_merge_equals_fios_own_sum(name: str) -> None:
    out = parse_fio_output((RECORDED / name).read_text())
    jobs = [j for j in out.jobs if j.jobname != ALL_CLIENTS]
    (fio_sum,) = [j for j in out.jobs if j.jobname == ALL_CLIENTS]
    assert len(jobs) == 2
    merged = merge_jobs(jobs)
    ours, fios = merged.read, fio_sum.read
    assert ours is not None and fios is not None
    assert (ours.io_bytes, ours.total_ios, ours.runtime_ms) == (
        fios.io_bytes,
        fios.total_ios,
        fios.runtime_ms,
    )
    assert ours.iops == pytest.approx(fios.iops, rel=1e-9)  # fio prints 6 decimals
    assert ours.bw_bytes == pytest.approx(fios.bw_bytes, abs=1)  # fio's is an integer
    assert ours.clat is not None and fios.clat is not None
    assert ours.clat.n == fios.clat.n
    assert (ours.clat.min_ns, ours.clat.max_ns) == (fios.clat.min_ns, fios.clat.max_ns)
    assert ours.clat.mean_ns == pytest.approx(fios.clat.mean_ns, rel=1e-9)
    assert ours.clat.stddev_ns == pytest.approx(fios.clat.stddev_ns, rel=1e-9)
    assert merged.usr_cpu_pct == pytest.approx(fio_sum.usr_cpu_pct)
    assert merged.write is None


def test_percentiles_come_from_the_summed_bins_never_averaged() -> None:
    out = parse_fio_output((RECORDED / "client-server-2-jsonplus.json").read_text())
    jobs = [j for j in out.jobs if j.jobname != ALL_CLIENTS]
    merged = merge_jobs(jobs).read
    assert merged is not None and merged.clat is not None
    bins = merge_bins(*(j.read.clat.bins for j in jobs if j.read and j.read.clat))
    assert merged.clat.bins == bins
    assert merged.clat.percentile(99.0) == dict(percentiles_from_bins(bins, [99.0]))[99.0]


def test_without_bins_there_is_no_percentile() -> None:
    out = parse_fio_output((RECORDED / "client-numjobs2-no-group-reporting-json.json").read_text())
    jobs = [j for j in out.jobs if j.jobname != ALL_CLIENTS]
    assert all(j.read and j.read.clat and not j.read.clat.bins for j in jobs)
    merged = merge_jobs(jobs).read
    assert merged is not None and merged.clat is not None
    assert merged.clat.percentiles == () and merged.clat.percentile(99.0) is None


def test_one_job_is_itself_and_none_is_an_error() -> None:
    out = parse_fio_output((RECORDED / "libaio-randread-4k-qd8-jsonplus.json").read_text())
    assert merge_jobs(out.jobs[:1]) is out.jobs[0]
    with pytest.raises(ValueError, match=r"^merge_jobs needs at least one job$"):
        merge_jobs([])


def _dir(ios: int, runtime_ms: int, **fields: Any) -> DirectionResult:
    """test_groups' direction of 4 KiB IOs, with the fields it leaves out (an slat, terse's
    KiB step), ``fields`` replaced."""
    d = direction(ios, 4096, runtime_ms, {100: ios})
    return dataclasses.replace(d, **{"slat": latency({20: ios}), "io_bytes_step": 1024, **fields})


def _job(name: str, read: DirectionResult | None, trim: DirectionResult | None = None, **kw: Any
         ) -> JobResult:  # fmt: skip
    job = JobResult(
        jobname=name, groupid=3, error=0, read=read, write=None, trim=trim, usr_cpu_pct=10.0,
        sys_cpu_pct=20.0, job_runtime_ms=1000, hostname=f"h-{name}", port=8765,
    )  # fmt: skip
    return dataclasses.replace(job, **kw)


def test_two_jobs_merge_field_by_field_as_fios_group_reporting() -> None:
    a = _job("a", _dir(1000, 1000), trim=_dir(10, 500), sys_cpu_pct=30.0, error=0)
    b = _job("b", _dir(3000, 2000), trim=_dir(30, 500), sys_cpu_pct=10.0, error=5,
             job_runtime_ms=2000, hostname="h-b", port=9000)  # fmt: skip
    merged = merge_jobs([a, b])
    assert (merged.jobname, merged.groupid, merged.hostname, merged.port) == ("a", 3, "h-a", 8765)
    assert merged.error == 5  # the first error among them
    assert (merged.usr_cpu_pct, merged.sys_cpu_pct) == (10.0, 20.0)  # the mean per job
    assert merged.job_runtime_ms == 3000
    read = merged.read
    assert read is not None
    assert (read.io_bytes, read.total_ios, read.runtime_ms) == (4000 * 4096, 4000, 2000)
    assert read.iops == 2000.0  # fio's: summed IOs over the longest runtime
    assert read.bw_bytes == 4000 * 4096 / 2.0
    assert read.completions == 4000 and read.io_bytes_step == 2048
    assert read.slat is not None and read.slat.n == 4000 and read.slat.mean_ns == 20.0
    assert read.clat is not None and read.clat.n == 4000
    assert merged.trim is not None and merged.trim.total_ios == 40
    assert merged.write is None


def test_clients_at_once_sum_their_rates() -> None:
    merged = merge_jobs([_job("a", _dir(1000, 1000)), _job("b", _dir(3000, 2000))],
                        sum_rates=True)  # fmt: skip
    assert merged.read is not None
    assert merged.read.iops == 1000.0 + 1500.0  # each over its own runtime
    assert merged.read.bw_bytes == (1000 + 1500) * 4096.0


def test_what_some_jobs_lack_the_merge_does_not_claim() -> None:
    a = _job("a", _dir(1000, 1000, slat=None, completions=None), job_runtime_ms=None,
             sys_cpu_pct=None)  # fmt: skip
    b = _job("b", _dir(1000, 1000))
    merged = merge_jobs([a, b])
    assert merged.job_runtime_ms is None and merged.sys_cpu_pct is None
    assert merged.usr_cpu_pct == 10.0 and merged.error == 0
    assert merged.read is not None
    assert merged.read.slat is None and merged.read.completions is None


def test_a_latency_with_no_samples_is_no_latency_but_one_sample_is() -> None:
    one = DirectionResult(4096, 4096.0, 1.0, 1, 1000, latency({50: 1}), latency({60: 1}))
    empty = DirectionResult(0, 0.0, 0.0, 0, 0, LatencyStats(0, 0.0, 0.0, 0.0, 0.0), None)
    merged = merge_directions([one, one])
    assert merged is not None and merged.clat is not None and merged.clat.n == 2
    nothing = merge_directions([empty, empty])
    assert nothing is not None and nothing.clat is None
    assert (nothing.iops, nothing.bw_bytes) == (0.0, 0.0)  # no runtime: no rate
    assert merge_directions([None, None]) is None


def test_zeros_are_summed_as_zeros_and_fios_rates_are_the_default() -> None:
    quick, slow = _dir(1000, 1000), _dir(1000, 4000)
    merged = merge_directions([quick, slow])
    assert merged is not None and merged.iops == 500.0  # 2,000 IOs over 4 s, not 1,250
    none_done = dataclasses.replace(quick, completions=None)
    zero = DirectionResult(0, 0.0, 0.0, 0, 1000, None, None, completions=0)
    merged = merge_directions([zero, zero])
    assert merged is not None and merged.completions == 0
    merged = merge_directions([zero, none_done])
    assert merged is not None and merged.completions is None  # unknown for some: unknown
    idle = [_job("a", None, job_runtime_ms=0), _job("b", None, job_runtime_ms=0)]
    assert merge_jobs(idle).job_runtime_ms == 0
