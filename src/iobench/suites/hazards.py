"""What a suite may not ask fio to do: every fio option is accepted (fio's own option set,
iobench.fio.catalogue) except those in a named hazard class, each refused with its class
and reason (docs/suites.md, "What is refused, and why").

The classes:

- ``runs programs``: fio would start a program or load native code (``exec_prerun``,
  ``ioengine=exec``, ``ioengine=external:lib.so``);
- ``outside the target``: fio would read or write files or devices other than the target
  named on iobench's command line, or beyond its test area (``read_iolog``, ``mem=mmap:
  /path``, ``fill_device``, ``file_append``, ``allow_mounted_write``, ``zonemode=zbd``);
- ``changes the host``: fio would change the host itself (``cgroup``, ``ioscheduler``);
- ``reaches endpoints``: an engine that connects to an endpoint named in the file, not on
  the command line (``net``, ``rbd``, ``nbd``, ``http`` ...);
- ``not in this fio``: an engine this fio was not built with;
- ``not I/O to the target``: an engine that deletes, truncates or defragments files, or
  reaches the device past the kernel's block layer (``filedelete``, ``sg``, ``io_uring_cmd``);
- ``nothing to measure``: fio would keep no statistics (``stats=0``), or make jobs of its
  own that iobench cannot see (``profile``).

A value that changes nothing (``fill_device=0``, ``allow_mounted_write=0``, an empty
``exec_prerun``) is not a hazard. Options iobench handles itself are not refused either:
where fio does its I/O (``filename``, ``directory`` ...: replaced by the target), fio's own
logs (left out), its reporting options (set by iobench), the order of the jobs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from iobench.targets.kinds import TARGET_ENGINES

RUNS = "runs programs"
OUTSIDE = "outside the target"
HOST = "changes the host"
ENDPOINTS = "reaches endpoints"
NOT_BUILT = "not in this fio"
NOT_IO = "not I/O to the target"
NOTHING = "nothing to measure"

CLASSES = (RUNS, OUTSIDE, HOST, ENDPOINTS, NOT_BUILT, NOT_IO, NOTHING)

# Engines that connect to an endpoint the job file names (fio 3.33's and later ones').
NETWORK_ENGINES = frozenset(
    {"net", "netsplice", "rdma", "rbd", "rados", "gfapi", "gfapi_async", "nbd", "http"}
    | {"libhdfs", "nfs", "libiscsi", "dfs", "xnvme", "libcufile", "ime_psync", "ime_psyncv"}
    | {"ime_aio", "librpma_apm_client", "librpma_apm_server", "librpma_gpspm_client"}
    | {"librpma_gpspm_server", "spdk", "spdk_bdev"}
)
_NOT_IO_ENGINES = {
    "filedelete": "it deletes files instead of doing I/O",
    "ftruncate": "it truncates the file instead of doing I/O",
    "e4defrag": "it defragments files through a donor file of its own instead of doing I/O",
    "sg": "it sends raw SCSI commands to the device, past the kernel's block layer",
    "io_uring_cmd": "it sends raw NVMe commands to a character device, past the block layer",
    "mtd": "it erases raw flash, past the kernel's block layer",
    "dev-dax": "it writes persistent memory directly",
    "libpmem": "it writes persistent memory directly",
    "pmemblk": "it writes persistent memory directly",
}
_OPTIONS: dict[str, tuple[str, str]] = {
    "exec_prerun": (RUNS, "it runs a shell command before the job"),
    "exec_postrun": (RUNS, "it runs a shell command after the job"),
    "read_iolog": (OUTSIDE, "it replays I/O recorded in a file onto the files named in it"),
    "read_iolog_chunked": (OUTSIDE, "it replays I/O recorded in a file"),
    "replay_redirect": (OUTSIDE, "it sends replayed I/O to a device named in the file"),
    "merge_blktrace_file": (OUTSIDE, "it writes a merged block trace to a file of its own"),
    "allow_mounted_write": (OUTSIDE, "it switches off fio's guard against writing to a mounted "
                            "device"),
    "fill_device": (OUTSIDE, "it writes until the device or file system is full, beyond the "
                    "test area"),
    "file_append": (OUTSIDE, "it writes after the end of the file, beyond the test area"),
    "cgroup": (HOST, "it creates a control group of its own on the host"),
    "cgroup_nodelete": (HOST, "it leaves a control group of its own on the host"),
    "cgroup_weight": (HOST, "it sets a control group's weight on the host"),
    "ioscheduler": (HOST, "it switches the device's I/O scheduler for the whole host"),
    "stats": (NOTHING, "it switches fio's statistics off: there would be nothing to store"),
    "profile": (NOTHING, "it makes jobs of its own, which iobench cannot check or read"),
}  # fmt: skip
# The value of an option above that changes nothing (fio's default), so is not a hazard.
_HARMLESS = {
    "exec_prerun": ("",),
    "exec_postrun": ("",),
    "allow_mounted_write": ("0",),
    "fill_device": ("0",),
    "file_append": ("0",),
    "cgroup_nodelete": ("0",),
    "stats": ("1",),
}


@dataclass(frozen=True)
class Hazard:
    cls: str  # one of CLASSES
    reason: str

    def say(self, spelled: str) -> str:
        """``exec_prerun is refused (runs programs): it runs a shell command ...``."""
        return f"{spelled} is refused ({self.cls}): {self.reason}"


def option_hazard(option: str, value: str | None) -> Hazard | None:
    """The hazard of fio option ``option`` (its canonical name) with ``value`` (as fio reads
    it: ``None`` for an option written alone), else None."""
    if option == "ioengine":
        return engine_hazard(value or "", None)  # said as ioengine=VALUE by the caller
    if option == "mem" and value and ":" in value:  # mmap:/path, mmaphuge:/path ...
        return Hazard(OUTSIDE, f"mem={value.split(':', 1)[0]}:PATH maps a file of its own")
    if option == "zonemode" and value == "zbd":
        return Hazard(OUTSIDE, "it resets the zones of a zoned device, beyond the test area")
    found = _OPTIONS.get(option)
    if found is None:
        return None
    harmless = _HARMLESS.get(option, ())
    if (value or "") in harmless or (value is None and "1" in harmless):
        return None
    return Hazard(*found)


def engine_hazard(engine: str, built: frozenset[str] | None) -> Hazard | None:
    """Why an ``ioengine`` value is refused (``built``: this fio's engines, when known)."""
    if engine.startswith("external") or "/" in engine or re.search(r"\.so(\.|$)", engine):
        # fio dlopen()s a name it does not know as a library (ioengines.c)
        return Hazard(RUNS, "it loads native code from a file")
    if engine == "exec":
        return Hazard(RUNS, "it runs a program")
    if engine in NETWORK_ENGINES and engine not in TARGET_ENGINES:
        # An engine of a kind of target (nbd, rbd) runs on such a target, named on the
        # command line; its options that name an endpoint give way to it (TARGET_OPTIONS).
        return Hazard(
            ENDPOINTS,
            "it connects to an endpoint named in the job file; iobench reaches only the targets "
            "named on its command line",
        )
    if engine in _NOT_IO_ENGINES:
        return Hazard(NOT_IO, _NOT_IO_ENGINES[engine])
    if built is not None and engine not in built:
        return Hazard(
            NOT_BUILT, "this fio was built without it (`fio --enghelp` lists its engines)"
        )
    return None
