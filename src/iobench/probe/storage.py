"""Storage context of a target: its filesystem and mount, and the block devices beneath it.

Sources: ``findmnt -J`` (filesystem, mount options), ``lsblk -J -b -s`` (the device chain,
with a walk of /sys/class/block as fallback) and /sys/class/block/X (queue settings). Every
value that cannot be read is None; nothing here raises. Keys: docs/context.md.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from iobench.probe.context import Storage
from iobench.probe.host import read_int, read_text, run_json
from iobench.probe.queues import queue_context
from iobench.probe.throttle import process_throttles

SYS_BLOCK = Path("/sys/class/block")
SYS_DEVNO = Path("/sys/dev/block")

RAM_FSTYPES = frozenset({"tmpfs", "ramfs", "devtmpfs"})
NETWORK_FSTYPES = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "ceph",
        "glusterfs",
        "lustre",
        "gpfs",
        "beegfs",
        "afs",
        "ncpfs",
        "davfs",
        "orangefs",
        "fuse.sshfs",
        "fuse.glusterfs",
        "fuse.ceph-fuse",
        "fuse.cephfs",
        "fuse.s3fs",
        "fuse.rclone",
        "fuse.juicefs",
        "fuse.gcsfuse",
        "fuse.goofys",
        "fuse.mountpoint-s3",
        "fuse.davfs",
        "fuse.mfs",
        "fuse.lizardfs",
        "fuse.beegfs",
    }
)
# Shared from the hypervisor host: not a network, but not a local block device either.
HOST_SHARED_FSTYPES = frozenset({"9p", "virtiofs", "vboxsf", "vmhgfs", "fuse.vmhgfs-fuse"})
NFS_FSTYPES = frozenset({"nfs", "nfs4"})

_LSBLK_COLUMNS = "NAME,KNAME,PATH,TYPE,MAJ:MIN,SIZE,TRAN,MODEL,VENDOR,SERIAL"

# /sys/class/block/X/device/subsystem (or driver) -> transport, when lsblk's TRAN is empty.
_SUBSYSTEM_TRANSPORT = {
    "virtio": "virtio",
    "nvme": "nvme",
    "scsi": "scsi",
    "xen": "xen",
    "mmc": "mmc",
    "nd": "nvdimm",
}
_DRIVER_TRANSPORT = {
    "virtio_blk": "virtio",
    "nvme": "nvme",
    "sd": "scsi",
    "vbd": "xen",
    "xen-blkfront": "xen",
    "mmcblk": "mmc",
}
_KNAME_TRANSPORT = (
    ("loop", "loop"),
    ("zram", "zram"),
    ("nbd", "nbd"),
    ("rbd", "rbd"),
    ("xvd", "xen"),
    ("pmem", "nvdimm"),
    ("ram", "ram"),
    ("vd", "virtio"),
    ("nvme", "nvme"),
    ("mmcblk", "mmc"),
)


# --- pure helpers --------------------------------------------------------------------------


def split_options(options: str) -> list[str]:
    """Split a mount option string on commas outside double quotes (SELinux contexts)."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in options:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p for p in parts if p]


def parse_options(options: str | None) -> dict[str, str | bool]:
    """``"rw,relatime,rsize=1048576"`` -> ``{"rw": True, "relatime": True, "rsize": "1048576"}``."""
    parsed: dict[str, str | bool] = {}
    for item in split_options(options or ""):
        name, sep, value = item.partition("=")
        parsed[name] = value if sep else True
    return parsed


def _int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _bool_or_none(value: object) -> bool | None:
    # lsblk < 2.33 prints "1"/"0" strings; newer prints JSON booleans.
    if isinstance(value, bool):
        return value
    number = _int_or_none(value)
    return None if number is None else number != 0


def _str_or_none(value: object) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def nfs_details(source: str | None, options: dict[str, str | bool]) -> dict[str, Any]:
    """Server, export and the transfer options of an NFS mount."""
    server: str | None = None
    export: str | None = None
    if source:
        if source.startswith("["):  # [fe80::1]:/export
            host, _, rest = source[1:].partition("]")
            server, export = host or None, rest.removeprefix(":") or None
        else:
            host, sep, rest = source.partition(":")
            server, export = (host or None, rest or None) if sep else (None, source)

    def opt(name: str) -> str | None:
        value = options.get(name)
        return value if isinstance(value, str) else None

    return {
        "server": server,
        "export": export,
        "addr": opt("addr"),
        "vers": opt("vers") or opt("nfsvers"),
        "proto": opt("proto"),
        "rsize": _int_or_none(opt("rsize")),
        "wsize": _int_or_none(opt("wsize")),
        "nconnect": _int_or_none(opt("nconnect")),
        "hard": not ("soft" in options or "softerr" in options),
        "timeo": _int_or_none(opt("timeo")),
        "sec": opt("sec"),
    }


def is_network_fstype(fstype: str | None) -> bool | None:
    """True for network filesystems, False for local ones, None for an unknown FUSE type."""
    if not fstype:
        return None
    if fstype in NETWORK_FSTYPES:
        return True
    if fstype == "fuse" or fstype.startswith(("fuse.", "fuseblk")):
        return None
    return False


def scheduler_in_use(text: str | None) -> str | None:
    """``"none [mq-deadline] kyber"`` -> ``"mq-deadline"``; ``"none"`` -> ``"none"``."""
    if not text:
        return None
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    words = text.split()
    return words[0] if len(words) == 1 else None


def infer_transport(kname: str, subsystem: str | None, driver: str | None) -> str | None:
    """How a disk is attached when lsblk's TRAN is empty: from its driver, bus or name."""
    if driver and driver in _DRIVER_TRANSPORT:
        return _DRIVER_TRANSPORT[driver]
    if subsystem and subsystem in _SUBSYSTEM_TRANSPORT:
        return _SUBSYSTEM_TRANSPORT[subsystem]
    for prefix, transport in _KNAME_TRANSPORT:
        if kname.startswith(prefix):
            return transport
    return None


def no_block_reason(fstype: str | None, source: str | None) -> str:
    """Why a filesystem has no block device chain, in a few words."""
    if fstype in RAM_FSTYPES:
        return f"{fstype} is RAM-backed: no block device"
    if is_network_fstype(fstype):
        return f"{fstype} is a network filesystem: no local block device"
    if fstype in HOST_SHARED_FSTYPES:
        return f"{fstype} is shared from the hypervisor host: no local block device"
    if fstype == "overlay":
        return (
            "overlay is layered over other filesystems (see upperdir): no block device of its own"
        )
    if fstype and (fstype == "fuse" or fstype.startswith("fuse.")):
        return f"{fstype} is served by a user-space (FUSE) process: no block device"
    return f"no block device found for source {source!r} ({fstype})"


# --- sysfs ---------------------------------------------------------------------------------


def kname_of_devno(major: int, minor: int) -> str | None:
    """Kernel name (``vda``, ``loop0p1``, ``dm-0``) of a block device number."""
    link = SYS_DEVNO / f"{major}:{minor}"
    try:
        return Path(os.path.realpath(link)).name if link.exists() else None
    except OSError:
        return None


def devno_of_path(path: str) -> tuple[int, int] | None:
    """(major, minor) of a block device node, or None when ``path`` is not one."""
    try:
        st = Path(path).stat()
    except (OSError, ValueError):
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return os.major(st.st_rdev), os.minor(st.st_rdev)


def partitions_of(kname: str) -> list[str]:
    """Kernel names of the partitions of a disk (empty for a partition or a bare disk)."""
    base = SYS_BLOCK / kname
    try:
        entries = sorted(e.name for e in base.iterdir())
    except OSError:
        return []
    return [e for e in entries if e.startswith(kname) and (base / e / "partition").exists()]


def _sys_link_name(path: Path) -> str | None:
    try:
        return path.readlink().name
    except OSError:
        return None


def loop_details(kname: str) -> dict[str, Any]:
    base = SYS_BLOCK / kname / "loop"
    backing = read_text(base / "backing_file")
    return {
        "backing_file": backing,
        "offset": read_int(base / "offset"),
        "sizelimit": read_int(base / "sizelimit"),
        "dio": _bool_or_none(read_text(base / "dio")),
    }


def disk_details(kname: str, lsblk: dict[str, Any] | None = None) -> dict[str, Any]:
    """Model, size, queue settings and transport of a device at the bottom of a chain."""
    lsblk = lsblk or {}
    base = SYS_BLOCK / kname
    queue = base / "queue"
    dev = base / "device"
    sectors = read_int(base / "size")
    subsystem = _sys_link_name(dev / "subsystem")
    driver = _sys_link_name(dev / "driver")
    transport = _str_or_none(lsblk.get("tran")) or infer_transport(kname, subsystem, driver)
    serial = (
        _str_or_none(lsblk.get("serial"))
        or read_text(base / "serial")
        or read_text(dev / "serial")
        or None
    )
    return {
        "kname": kname,
        "path": _str_or_none(lsblk.get("path")) or f"/dev/{kname}",
        "type": _str_or_none(lsblk.get("type")),
        "model": _str_or_none(lsblk.get("model")) or read_text(dev / "model") or None,
        "vendor": _str_or_none(lsblk.get("vendor")) or read_text(dev / "vendor") or None,
        "serial": serial,
        "size_bytes": sectors * 512 if sectors is not None else None,
        "rotational": _bool_or_none(read_text(queue / "rotational")),
        "scheduler": scheduler_in_use(read_text(queue / "scheduler")),
        "nr_requests": read_int(queue / "nr_requests"),
        "logical_block_size": read_int(queue / "logical_block_size"),
        "physical_block_size": read_int(queue / "physical_block_size"),
        "write_cache": read_text(queue / "write_cache"),
        "read_ahead_kb": read_int(queue / "read_ahead_kb"),
        "discard_max_bytes": read_int(queue / "discard_max_bytes"),
        "transport": transport,
        "driver": driver,
        "subsystem": subsystem,
        "link_bytes_per_s": pcie_link_bytes(dev / "device") if transport == "nvme" else None,
    }


def pcie_link_rate(speed: str | None, width: int | None) -> float | None:
    """``8.0 GT/s PCIe`` x 4 lanes -> bytes a second the link carries (after encoding)."""
    if not speed or not width:
        return None
    try:
        gts = float(speed.split()[0])
    except (ValueError, IndexError):
        return None
    per_lane = gts * 1e9 * (0.8 if gts <= 5.0 else 128 / 130) / 8
    return per_lane * width


def pcie_link_bytes(pci_dev: Path) -> float | None:
    """The PCIe link of an NVMe controller (its PCI device), in bytes a second."""
    return pcie_link_rate(
        read_text(pci_dev / "current_link_speed"), read_int(pci_dev / "current_link_width")
    )


def fastest_nic_bytes(net: Path = Path("/sys/class/net")) -> float | None:
    """The fastest network interface here (not loopback), in bytes a second."""
    speeds = []
    try:
        names = [p.name for p in net.iterdir() if p.name != "lo"]
    except OSError:
        return None
    for name in names:
        mbps = read_int(net / name / "speed")
        if mbps is not None and mbps > 0:
            speeds.append(mbps * 1e6 / 8)
    return max(speeds) if speeds else None


# --- the chain -----------------------------------------------------------------------------


def _find_node(nodes: list[Any], kname: str) -> dict[str, Any] | None:
    for node in nodes:
        if not isinstance(node, dict):
            continue
        if node.get("kname") == kname:
            return node
        found = _find_node(node.get("children") or [], kname)
        if found is not None:
            return found
    return None


def _chain_node(kname: str, info: dict[str, Any], parents: list[str]) -> dict[str, Any]:
    node: dict[str, Any] = {
        "name": _str_or_none(info.get("name")) or kname,
        "kname": kname,
        "path": _str_or_none(info.get("path")) or f"/dev/{kname}",
        "type": _str_or_none(info.get("type")),
        "maj_min": _str_or_none(info.get("maj:min")) or read_text(SYS_BLOCK / kname / "dev"),
        "size_bytes": _int_or_none(info.get("size")),
        "parents": parents,
    }
    if kname.startswith("loop"):
        node.update(loop_details(kname))
    return node


def chain_from_lsblk(kname: str) -> list[dict[str, Any]] | None:
    """The device and everything beneath it (partition -> disk, dm -> slaves), top first."""
    doc = run_json(["lsblk", "-J", "-b", "-s", "-o", _LSBLK_COLUMNS])
    if not isinstance(doc, dict):
        return None
    top = _find_node(doc.get("blockdevices") or [], kname)
    if top is None:
        return None
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    queue = [top]
    while queue:
        info = queue.pop(0)
        name = str(info.get("kname"))
        if name in seen:
            continue
        seen.add(name)
        children = [c for c in info.get("children") or [] if isinstance(c, dict)]
        node = _chain_node(name, info, [str(c.get("kname")) for c in children])
        node["_lsblk"] = info
        chain.append(node)
        queue.extend(children)
    return chain


def _sysfs_parents(kname: str) -> list[str]:
    base = SYS_BLOCK / kname
    if (base / "partition").exists():
        try:
            return [Path(os.path.realpath(base)).parent.name]
        except OSError:
            return []
    try:
        return sorted(e.name for e in (base / "slaves").iterdir())
    except OSError:
        return []


def _sysfs_type(kname: str) -> str | None:
    base = SYS_BLOCK / kname
    if (base / "partition").exists():
        return "part"
    if kname.startswith("loop"):
        return "loop"
    if (base / "dm").exists():
        return "dm"
    if (base / "md").exists():
        return "raid"
    return "disk" if base.exists() else None


def chain_from_sysfs(kname: str) -> list[dict[str, Any]]:
    """The same walk as :func:`chain_from_lsblk`, from /sys only (when lsblk is missing)."""
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    queue = [kname]
    while queue:
        name = queue.pop(0)
        if name in seen or not (SYS_BLOCK / name).exists():
            continue
        seen.add(name)
        parents = _sysfs_parents(name)
        dm_name = read_text(SYS_BLOCK / name / "dm" / "name")
        sectors = read_int(SYS_BLOCK / name / "size")
        info = {
            "name": dm_name or name,
            "type": _sysfs_type(name),
            "size": sectors * 512 if sectors is not None else None,
        }
        chain.append(_chain_node(name, info, parents))
        queue.extend(parents)
    return chain


def block_context(kname: str | None, note: str | None = None) -> dict[str, Any]:
    """``{"device", "chain", "disks", "source", "note"}`` for a device kernel name."""
    if kname is None:
        return {"device": None, "chain": [], "disks": [], "source": None, "note": note}
    chain = chain_from_lsblk(kname)
    source = "lsblk"
    if chain is None:
        chain, source = chain_from_sysfs(kname), "sysfs"
    disks = []
    for node in chain:
        info = node.pop("_lsblk", None)
        if not node["parents"]:
            disks.append(disk_details(node["kname"], info))
    if not chain:
        note = note or f"{kname} not found in lsblk or /sys/class/block"
    return {"device": kname, "chain": chain, "disks": disks, "source": source, "note": note}


# --- filesystems ---------------------------------------------------------------------------


def _findmnt(args: list[str]) -> list[dict[str, Any]]:
    doc = run_json(["findmnt", "-J", "-o", "TARGET,SOURCE,FSTYPE,OPTIONS,MAJ:MIN", *args])
    if not isinstance(doc, dict):
        return []
    found: list[dict[str, Any]] = []

    def walk(entries: list[Any]) -> None:
        for e in entries:
            if isinstance(e, dict):
                found.append(e)
                walk(e.get("children") or [])

    walk(doc.get("filesystems") or [])
    return found


def _source_device(source: str | None, maj_min: str | None) -> str | None:
    """Kernel name of the device a filesystem is on, or None (tmpfs, nfs, btrfs subvolume ...)."""
    if source and source.startswith("/"):
        devno = devno_of_path(source.split("[", 1)[0])  # btrfs: "/dev/sda2[/@home]"
        if devno is not None:
            return kname_of_devno(*devno)
    if maj_min and ":" in maj_min:
        major, _, minor = maj_min.partition(":")
        if major.isdigit() and minor.isdigit() and int(major) != 0:
            return kname_of_devno(int(major), int(minor))
    return None


def filesystem_context(entry: dict[str, Any]) -> dict[str, Any]:
    fstype = _str_or_none(entry.get("fstype"))
    source = _str_or_none(entry.get("source"))
    options = _str_or_none(entry.get("options"))
    parsed = parse_options(options)
    network = is_network_fstype(fstype)
    return {
        "fstype": fstype,
        "source": source,
        "target": _str_or_none(entry.get("target")),
        "options": options,
        "options_parsed": parsed,
        "ram_backed": fstype in RAM_FSTYPES,
        "network": network,
        "nfs": nfs_details(source, parsed) if fstype in NFS_FSTYPES else None,
        # A network filesystem cannot move data faster than the host's fastest link.
        "link_bytes_per_s": fastest_nic_bytes() if network else None,
    }


def _statvfs(path: str) -> tuple[int | None, int | None]:
    try:
        st = os.statvfs(path)
    except OSError:
        return None, None
    return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize


def _mounts_of_device(kname: str) -> list[dict[str, Any]]:
    mounts: list[dict[str, Any]] = []
    for name in [kname, *partitions_of(kname)]:
        maj_min = read_text(SYS_BLOCK / name / "dev")
        if not maj_min:
            continue
        for entry in _findmnt(["-S", maj_min]):
            mounts.append({"device": name, **filesystem_context(entry)})
    return mounts


MAX_BACKING_DEPTH = 4  # loop over a file on a loop over a file ... (a loop cannot be its own)


def probe_target(path: str, *, _depth: int = 0) -> dict[str, Any]:
    """Filesystem, mount and block devices under ``path`` (file, directory or device)."""
    real = os.path.realpath(path)
    result: dict[str, Any] = {
        "path": real,
        "kind": None,
        "error": None,
        "size_bytes": None,
        "allocated_bytes": None,
        "filesystem": None,
        "mounts": [],
        "block": block_context(None),
        "ram_backed": None,
        "io_devices": [],
        "throttles": None,
        "queues": None,
    }
    try:
        st = Path(real).stat()
    except OSError as exc:
        result["error"] = exc.strerror or str(exc)
        return result
    if stat.S_ISBLK(st.st_mode):
        result["kind"] = "block"
        kname = kname_of_devno(os.major(st.st_rdev), os.minor(st.st_rdev))
        sectors = read_int(SYS_BLOCK / kname / "size") if kname else None
        result["size_bytes"] = sectors * 512 if sectors is not None else None
        result["mounts"] = _mounts_of_device(kname) if kname else []
        result["block"] = block_context(kname, None if kname else "not in /sys/dev/block")
        return _beneath(result, _depth)
    if stat.S_ISDIR(st.st_mode):
        result["kind"] = "directory"
    elif stat.S_ISREG(st.st_mode):
        result["kind"] = "file"
        result["size_bytes"] = st.st_size
        result["allocated_bytes"] = st.st_blocks * 512
    else:
        result["kind"] = "other"
    entries = _findmnt(["-T", real])
    if not entries:
        result["error"] = "findmnt found no filesystem for this path"
        return result
    entry = entries[-1]  # the last one listed is the topmost of stacked mounts
    fs = filesystem_context(entry)
    fs["size_bytes"], fs["free_bytes"] = _statvfs(real)
    result["filesystem"] = fs
    kname = _source_device(fs["source"], _str_or_none(entry.get("maj:min")))
    note = None if kname else no_block_reason(fs["fstype"], fs["source"])
    result["block"] = block_context(kname, note)
    return _beneath(result, _depth)


def _beneath(result: dict[str, Any], depth: int) -> dict[str, Any]:
    """Add what lies under the block chain: the probed backing files of its loop devices,
    every device that serves the target's IO, and whether it all lives in RAM."""
    backings: dict[str, dict[str, Any]] = {}
    if depth < MAX_BACKING_DEPTH:
        for node in Storage.of(result).chain:
            if node.get("backing_file"):
                backings[str(node["kname"])] = probe_target(
                    str(node["backing_file"]), _depth=depth + 1
                )
    result["io_devices"] = io_devices(result, backings)
    result["ram_backed"] = ram_backed_why(result, backings)
    if depth == 0:
        result["throttles"] = process_throttles(result["io_devices"])
        result["queues"] = queue_context(result["block"] or {})
    return result


def io_devices(
    ctx: dict[str, Any], backings: dict[str, dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Every block device that serves IO to the target, top first: the device under it and
    the chain beneath (partition -> disk, dm and md -> their members), then, for a loop
    device, the devices under its backing file. ``role``: ``target`` (fio's IO arrives
    there), ``beneath`` (the same stack), ``backing`` (under a loop device's file).
    Empty when no block device is involved (tmpfs, NFS)."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, node in enumerate(Storage.of(ctx).chain):
        kname = str(node.get("kname") or "")
        if not kname or kname in seen:
            continue
        seen.add(kname)
        out.append(
            {
                "kname": kname,
                "maj_min": node.get("maj_min"),
                "type": node.get("type"),
                "role": "target" if i == 0 else "beneath",
                "via": None,
            }
        )
        under = (backings or {}).get(kname)
        for d in (under or {}).get("io_devices") or []:
            if d["kname"] not in seen:
                seen.add(d["kname"])
                via = d.get("via") or f"{kname}'s backing file {node.get('backing_file')}"
                out.append({**d, "role": "backing", "via": via})
    return out


def ram_backed_why(
    ctx: dict[str, Any], backings: dict[str, dict[str, Any]] | None = None
) -> str | None:
    """Why a probed target lives in RAM: tmpfs, a RAM block device, a loop device over a
    file in RAM; None when it does not (as far as iobench can tell). ``backings``: the
    probed backing files of the chain's loop devices (:func:`_beneath` probes them, up to
    MAX_BACKING_DEPTH loop devices deep)."""
    storage = Storage.of(ctx)
    fs = storage.filesystem
    if fs.get("ram_backed"):
        return f"{fs.get('fstype') or 'a RAM filesystem'}"
    for node in storage.chain:
        kname = str(node.get("kname") or "")
        if kname.startswith("zram"):
            return f"{kname} is a compressed RAM disk"
        if kname.startswith("ram"):
            return f"{kname} is a RAM disk (brd)"
        backing = node.get("backing_file")
        under = ((backings or {}).get(kname) or {}).get("ram_backed")
        if backing and under:
            return f"{kname} is a loop device over {backing}, on {under}"
    return None
