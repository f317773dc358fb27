"""zoned_abs random_distribution (issue 22): fio reads its zone sizes with the job's
kb_base, which iobench does not hand to fio, so iobench gives fio bytes; and zones that
cover more than the test area (fio then does its I/O elsewhere, saying so on every pick)
are refused, in a job file, a TOML suite and with --size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli
from iobench.errors import SuiteError, UserError
from iobench.model import Suite
from iobench.store import Store
from iobench.suites import apply_overrides, parse_job_file, parse_suite

G, GIB = 10**9, 1 << 30


def _job(distribution: str, size: str = "10g", kb_base: str | None = "1000") -> str:
    base = f"[global]\nkb_base={kb_base}\n" if kb_base else ""
    return (
        f"{base}[a]\nrw=randread\nbs=4k\nsize={size}\nruntime=1s\n"
        f"random_distribution={distribution}\n"
    )


def _distribution(suite: Suite) -> str:
    (workload,) = suite.workloads
    return dict(workload.options)["random_distribution"]


@pytest.mark.parametrize(
    ("kb_base", "distribution", "zones", "size"),
    [
        ("1000", "zoned_abs:10/1g:90/9g", (G, 9 * G), 10 * G),
        ("1024", "zoned_abs:10/1g:90/9g", (GIB, 9 * GIB), 10 * GIB),
        (None, "zoned_abs:10/1g:90/9g", (GIB, 9 * GIB), 10 * GIB),
        ("1000", "zoned_abs:10/1000m:90/9000000k", (G, 9 * G), 10 * G),
        ("1000", "zoned_abs:50/4GiB:50/5GiB", (4 * GIB, 5 * GIB), 10 * G),  # IEC: the other base
        ("1024", "zoned_abs:50/4GiB:50/5GiB", (4 * G, 5 * G), 10 * GIB),
        ("1000", "zoned_abs:50/0x10:50/4096", (16, 4096), 10 * G),
    ],
)
def test_zone_sizes_are_read_with_the_jobs_kb_base(
    kb_base: str | None, distribution: str, zones: tuple[int, int], size: int
) -> None:
    suite = parse_job_file(_job(distribution, kb_base=kb_base), "z.fio", "z.fio")
    pcts = [zone.partition("/")[0] for zone in distribution.split(":")[1:]]
    assert _distribution(suite) == f"zoned_abs:{pcts[0]}/{zones[0]}:{pcts[1]}/{zones[1]}"
    assert suite.workloads[0].size == size


def test_a_toml_suites_zones_are_given_to_fio_in_bytes() -> None:
    text = (
        'name = "z"\ndescription = "d"\n[[workload]]\nname = "a"\nrw = "randread"\n'
        'bs = "4k"\niodepth = 1\nnumjobs = 1\nsize = "10G"\n'
        'random_distribution = "zoned_abs:10/1g:90/9G"\n'
    )
    suite = parse_suite(text, "z.toml", "z.toml")
    assert _distribution(suite) == f"zoned_abs:10/{GIB}:90/{9 * GIB}"


@pytest.mark.parametrize(
    ("distribution", "size", "kb_base", "covered"),
    [
        ("zoned_abs:10/1GiB:90/9GiB", "10g", "1000", 10 * GIB),  # 10.74 GB in a 10 GB area
        # with kb_base=1000, GB is 1024-based (fio's compatibility mode): 10 GiB, just exceeded
        (f"zoned_abs:10/1g:90/{10 * GIB - G + 1}", "10GB", "1000", 10 * GIB + 1),
        ("zoned_abs:10/1g:90/9g", "9g", None, 10 * GIB),
        ("zoned_abs:100/4097", "4k", None, 4097),
    ],
)
def test_zones_beyond_the_test_area_are_refused(
    distribution: str, size: str, kb_base: str | None, covered: int
) -> None:
    with pytest.raises(SuiteError) as e:
        parse_job_file(_job(distribution, size, kb_base), "z.fio", "z.fio")
    (problem,) = e.value.problems
    assert problem.message.startswith(f"[a]: random_distribution's zones cover {covered} bytes (")
    assert f'more than the test area, size ("{size}", ' in problem.message
    assert problem.hint == "make the zones add up to the size at most, or raise the size"
    assert problem.line == (8 if kb_base else 6)  # random_distribution's, after size's


def test_zones_that_fill_the_area_exactly_are_accepted() -> None:
    suite = parse_job_file(_job("zoned_abs:10/1g:90/9g", "10g"), "z.fio", "z.fio")
    assert suite.workloads[0].size == 10 * G


def test_a_size_override_smaller_than_the_zones_is_refused() -> None:
    suite = parse_job_file(_job("zoned_abs:10/1g:90/9g", "10g"), "z.fio", "z.fio")
    with pytest.raises(UserError) as e:
        apply_overrides(suite, size=9 * G, written={"--size": "9000m"})
    assert e.value.message == (
        "--size 9000m (9000000000 bytes) is smaller than what the zoned_abs "
        "random_distribution of a covers: fio would do no I/O in the zones beyond it"
    )
    assert apply_overrides(suite, size=10 * G).workloads[0].size == 10 * G


@pytest.mark.fio
def test_fio_places_every_io_in_the_zones_of_a_kb_base_1000_job(
    cli: Cli, real_fio: str, tmp_path: Path, isolated_db: Path
) -> None:
    """4m with kb_base=1000 is 4,000,000 bytes and so are its zones; fio given 1m:3m
    without kb_base would read 4 MiB of zones and complain on every I/O beyond the area."""
    job = tmp_path / "z.fio"
    job.write_text(
        "[global]\nkb_base=1000\n[a]\nrw=randread\nbs=4k\nsize=4m\nruntime=1s\n"
        "time_based\nioengine=psync\nrandom_distribution=zoned_abs:50/1m:50/3m\n"
    )
    target = tmp_path / "t"
    target.mkdir()
    code, out, err = cli("run", str(target), "--suite", str(job), "--json")
    assert code == 0, err
    with Store.open(isolated_db) as store:
        (result,) = store.get_run(json.loads(out)["run_id"]).results
    assert "random_distribution=zoned_abs:50/1000000:50/3000000" in result.job_file
    assert "size=4000000" in result.job_file
    assert "exceed" not in (result.fio_stderr or "")
