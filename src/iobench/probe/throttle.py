"""Block IO throttles a process runs under: cgroup v1 ``blkio.throttle.*`` and v2 ``io.max``.

A process in a cgroup with such limits on a device gets at most those limits from it: the
way containers, systemd units and Kubernetes cap IO. In v2 the limits of every cgroup above
the process's apply too (the tightest wins); in v1 only the process's own cgroup's do (the
kernel keeps v1 throttles flat; measured here: a parent's 2,000 IOPS v1 limit left its
child's fio at 400k IOPS, the same limit on the child's own cgroup held it at 2,000).
iobench's fio runs inherit iobench's cgroups, so the limits found for iobench's own process
are fio's (the runner checks that fio started in the same cgroups).

Sources: /proc/PID/cgroup (the process's cgroup in each hierarchy), /proc/PID/mountinfo
(where each hierarchy is mounted, and from which root), and in each cgroup directory from
the process's up to the root: ``blkio.throttle.read_bps_device``, ``write_bps_device``,
``read_iops_device``, ``write_iops_device`` (v1: lines ``MAJ:MIN VALUE``) and ``io.max``
(v2: lines ``MAJ:MIN rbps=N wbps=max riops=N wiops=max``). Nothing here raises: what
cannot be read is left out, and ``note`` says why when nothing could be read at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from iobench.probe.host import read_text
from iobench.units import format_iops, format_rate

KEYS = ("read_iops", "write_iops", "read_bps", "write_bps")
V1_FILES = {
    "read_iops": "blkio.throttle.read_iops_device",
    "write_iops": "blkio.throttle.write_iops_device",
    "read_bps": "blkio.throttle.read_bps_device",
    "write_bps": "blkio.throttle.write_bps_device",
}
V2_KEYS = {"riops": "read_iops", "wiops": "write_iops", "rbps": "read_bps", "wbps": "write_bps"}
_DEVNO = re.compile(r"^\d{1,10}:\d{1,10}$")
MAX_LEVELS = 64  # cgroup trees are never this deep; a bound against a looping path
MAX_VALUE = 1 << 63


def parse_proc_cgroup(text: str) -> dict[str, str]:
    """``/proc/PID/cgroup`` -> {controller: path}; the v2 (unified) entry under ``""``."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3 or not parts[2].startswith("/"):
            continue
        _, controllers, path = parts
        if controllers == "":
            out[""] = path
        for c in controllers.split(","):
            if c:
                out[c] = path
    return out


def parse_mountinfo(text: str) -> list[tuple[str, str, str, set[str]]]:
    """The cgroup mounts of ``/proc/PID/mountinfo``: (mount point, root within the
    hierarchy, fstype ``cgroup``/``cgroup2``, super options)."""
    found = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        found.append((_unescape(fields[4]), _unescape(fields[3]), tail[0], set(tail[2].split(","))))
    return found


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal (``\\040``)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_v1(text: str) -> dict[str, int]:
    """A ``blkio.throttle.*_device`` file -> {MAJ:MIN: value}."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and _DEVNO.match(parts[0]) and parts[1].isdigit():
            value = int(parts[1])
            if 0 < value < MAX_VALUE:
                out[parts[0]] = value
    return out


def parse_io_max(text: str) -> dict[str, dict[str, int]]:
    """An ``io.max`` file -> {MAJ:MIN: {read_iops: N, ...}} (``max`` is no limit)."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts or not _DEVNO.match(parts[0]):
            continue
        limits: dict[str, int] = {}
        for item in parts[1:]:
            key, _, value = item.partition("=")
            if key in V2_KEYS and value.isdigit() and 0 < int(value) < MAX_VALUE:
                limits[V2_KEYS[key]] = int(value)
        if limits:
            out[parts[0]] = limits
    return out


def _directories(
    mounts: list[tuple[str, str, str, set[str]]], cgroups: dict[str, str]
) -> list[tuple[int, list[tuple[str, Path]]]]:
    """For the blkio (v1) and the unified (v2) hierarchy, where mounted so that the
    process's cgroup is seen: (version, [(cgroup path, its directory)] from the process's
    cgroup up to the root the mount shows)."""
    out: list[tuple[int, list[tuple[str, Path]]]] = []
    for point, root, fstype, opts in mounts:
        version = 2 if fstype == "cgroup2" else 1
        path = cgroups.get("" if version == 2 else "blkio")
        if path is None or (version == 1 and "blkio" not in opts):
            continue
        if any(v == version for v, _ in out):
            continue  # the same hierarchy mounted twice
        cgroup, base = PurePosixPath(path), PurePosixPath(root)
        if ".." in cgroup.parts or not cgroup.is_relative_to(base):
            continue  # the process's cgroup is outside what this mount shows
        rel = cgroup.relative_to(base).parts[:MAX_LEVELS]
        levels = [
            (str(base.joinpath(*rel[:n])), Path(point, *rel[:n])) for n in range(len(rel), -1, -1)
        ]
        out.append((version, levels))
    return out


def process_throttles(
    devices: Sequence[dict[str, Any]], pid: int | str = "self", proc: Path = Path("/proc")
) -> dict[str, Any]:
    """The throttles on ``devices`` (``io_devices`` entries: ``kname``, ``maj_min``) that
    apply to process ``pid``: ``{"cgroups": [{"version", "path"}], "limits": [{"device",
    "maj_min", "version", "cgroup", <KEYS>...}], "note"}``: one entry per device and cgroup
    level that sets a limit; :func:`effective` folds them."""
    return throttles_of(
        read_text(proc / str(pid) / "cgroup"), read_text(proc / str(pid) / "mountinfo"), devices
    )


def throttles_of(
    cgroup_text: str | None, mountinfo: str | None, devices: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """:func:`process_throttles` from a process's ``cgroup`` and ``mountinfo`` files."""
    result: dict[str, Any] = {"cgroups": [], "limits": [], "note": None}
    if cgroup_text is None or mountinfo is None:
        result["note"] = "cannot read the process's cgroup or mountinfo in /proc"
        return result
    by_devno = {
        str(d["maj_min"]): str(d.get("kname") or d["maj_min"])
        for d in devices
        if isinstance(d.get("maj_min"), str) and _DEVNO.match(d["maj_min"])
    }
    dirs = _directories(parse_mountinfo(mountinfo), parse_proc_cgroup(cgroup_text))
    if not dirs:
        result["note"] = "no blkio (v1) or unified (v2) cgroup hierarchy is mounted here"
    for version, levels in dirs:
        result["cgroups"].append({"version": version, "path": levels[0][0]})
        # v1 throttles are flat (blk-throttle.c, throtl_pd_init: off the default hierarchy
        # "limits of a group don't interact with limits of other groups"): only the
        # process's own cgroup limits it. v2's io.max limits a whole subtree.
        for cg, level in levels if version == 2 else levels[:1]:
            found: dict[str, dict[str, int]] = {}
            if version == 1:
                for key, fname in V1_FILES.items():
                    for devno, value in parse_v1(read_text(level / fname) or "").items():
                        found.setdefault(devno, {})[key] = value
            else:
                found = parse_io_max(read_text(level / "io.max") or "")
            for devno, limits in found.items():
                if devno in by_devno:
                    result["limits"].append(
                        {
                            "device": by_devno[devno],
                            "maj_min": devno,
                            "version": version,
                            "cgroup": cg,
                            **{k: limits.get(k) for k in KEYS},
                        }
                    )
    return result


def effective(throttles: dict[str, Any] | None) -> dict[str, dict[str, tuple[int, str]]]:
    """{device: {key: (the tightest limit, the cgroup that sets it)}} over every level;
    an entry's ``where`` says what sets a limit that is not a cgroup's (an RBD image's
    QoS)."""
    out: dict[str, dict[str, tuple[int, str]]] = {}
    for entry in (throttles or {}).get("limits") or []:
        if not isinstance(entry, dict):
            continue
        dev = out.setdefault(str(entry.get("device")), {})
        for key in KEYS:
            value = entry.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                where = entry.get("where")  # a storage's own limit (an RBD image's QoS)
                if not isinstance(where, str):
                    where = f"cgroup v{entry.get('version')} {entry.get('cgroup')}"
                if key not in dev or value < dev[key][0]:
                    dev[key] = (value, where)
    return {d: v for d, v in out.items() if v}


LABELS = {
    "read_iops": ("read", "IOPS"),
    "write_iops": ("write", "IOPS"),
    "read_bps": ("read", "bytes/s"),
    "write_bps": ("write", "bytes/s"),
}


def limit_text(key: str, value: float) -> str:
    """``read 5,000 IOPS``, ``write 200 MiB/s``."""
    direction, unit = LABELS[key]
    amount = f"{format_iops(value)} IOPS" if unit == "IOPS" else format_rate(value)
    return f"{direction} {amount}"


def throttle_text(eff: dict[str, dict[str, tuple[int, str]]]) -> str:
    """``loop0: read 5,000 IOPS, read 200 MiB/s (cgroup v1 /capped)``; "" for none."""
    return "; ".join(f"{device}: {limits_text(limits)}" for device, limits in sorted(eff.items()))


def limits_text(limits: dict[str, tuple[int, str]]) -> str:
    """One device's limits grouped by what sets them: ``read 5,000 IOPS, read 200 MiB/s
    (cgroup v1 /capped)``."""
    by_where: dict[str, list[str]] = {}
    for key in KEYS:
        if key in limits:
            value, where = limits[key]
            by_where.setdefault(where, []).append(limit_text(key, value))
    return "; ".join(f"{', '.join(v)} ({w})" for w, v in by_where.items())
