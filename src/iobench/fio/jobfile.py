"""Build fio job files. Pure: data in, text out; nothing here touches the disk."""

from __future__ import annotations

import re

from iobench import __version__
from iobench.errors import UserError
from iobench.model import Workload
from iobench.units import fio_duration

# fio's default percentile list, which holds every percentile iobench reports.
PERCENTILE_LIST = "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"
# Options iobench decides itself; a workload's `options` never carry these.
_RESERVED = frozenset({"time_based"})


def fio_filename(path: str) -> str:
    """A path as a fio ``filename=`` value: ``:`` separates files in fio, so escape it.

    Paths that fio would expand (``$``-variables) or that cannot sit on one line are refused.
    """
    if "\n" in path or "\r" in path or "\0" in path:
        raise UserError(
            f"the path {path!r} contains a line break, which a fio job file cannot hold"
        )
    if "${" in path:
        raise UserError(
            f"the path {path!r} contains '${{', which fio would expand as an environment variable",
            "rename the directory or file",
        )
    return path.replace("\\", "\\\\").replace(":", "\\:")


def section_name(name: str) -> str:
    """A workload name as a fio job section name (no brackets, spaces or odd characters)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or "job"


def build_jobfile(workload: Workload, filename: str, size: int) -> str:
    """The job file that runs ``workload`` against ``filename`` over ``size`` bytes.

    Latency is always measured in full (never ``gtod_reduce``); completion and total latency
    both get percentiles and json+ histogram bins; ``group_reporting`` makes fio sum the
    jobs' histograms exactly, so numjobs > 1 yields one result per workload.
    """
    opts = dict(workload.options)
    time_based = opts.pop("time_based", "1") != "0"
    lines = [
        f"; iobench {__version__}: workload {workload.name}",
        "[global]",
        f"filename={fio_filename(filename)}",
        f"size={size}",
        f"ioengine={workload.ioengine}",
        f"direct={1 if workload.direct else 0}",
        f"runtime={fio_duration(workload.runtime_s)}",
    ]
    if time_based:
        lines.append("time_based=1")
    if workload.ramp_s:
        lines.append(f"ramp_time={fio_duration(workload.ramp_s)}")
    lines += [
        "group_reporting=1",
        "clat_percentiles=1",
        "lat_percentiles=1",
        f"percentile_list={PERCENTILE_LIST}",
        "randrepeat=0",
        "",
        f"[{section_name(workload.name)}]",
        f"rw={workload.rw}",
        f"bs={workload.bs}",
        f"iodepth={workload.iodepth}",
        f"numjobs={workload.numjobs}",
    ]
    if workload.rwmixread is not None:
        lines.append(f"rwmixread={workload.rwmixread}")
    for key, value in opts.items():
        if key not in _RESERVED:
            lines.append(f"{key}={value}")
    return "\n".join(lines) + "\n"


def build_layout_jobfile(filename: str, size: int) -> str:
    """A job that writes the whole test file once with incompressible data, then syncs it.

    Reading a file that was never written measures the filesystem's holes, not the device,
    and fio lays out write-only jobs with fallocate alone; so iobench writes its test files
    itself before any workload runs.
    """
    return "\n".join(
        [
            f"; iobench {__version__}: lay out the test file",
            "[layout]",
            f"filename={fio_filename(filename)}",
            f"size={size}",
            "rw=write",
            "bs=1M",
            "ioengine=psync",
            "direct=0",
            "refill_buffers=1",
            "end_fsync=1",
            "",
        ]
    )
