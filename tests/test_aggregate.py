"""merge_jobs combines job entries as fio's group_reporting does. The reference is fio
itself: in client mode fio 3.33 adds an "All clients" entry computed with the same
sum_thread_stats, so the recorded outputs hold fio's own answer for their entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from iobench.analysis.aggregate import merge_jobs
from iobench.analysis.histogram import merge_bins, percentiles_from_bins
from iobench.fio.parse import ALL_CLIENTS, parse_fio_output

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
    with pytest.raises(ValueError):
        merge_jobs([])
