"""What the kernel says of a block device's users and contents, and of the files it uses
as swap or behind loop devices: read from /proc, /sys, wipefs/blkid and an exclusive open.

These are the facts :mod:`iobench.targets.guard` decides on (its
:func:`~iobench.targets.guard.refusals` is pure over :class:`DeviceFacts`); nothing here
decides anything.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from iobench.probe.host import read_int, read_text, run_tool
from iobench.probe.storage import SYS_BLOCK, devno_of_path, kname_of_devno, partitions_of

BLKGETSIZE64 = 0x80081272

# Signatures of a member of a larger volume: refused even with --overwrite-signatures.
MEMBER_TYPES = frozenset(
    {
        "LVM2_member",
        "LVM1_member",
        "linux_raid_member",
        "crypto_LUKS",
        "zfs_member",
        "ceph_bluestore",
        "bcache",
        "drbd",
        "BitLocker",
        "VMFS_volume_member",
        "ddf_raid_member",
        "isw_raid_member",
        "lsi_mega_raid_member",
        "nvidia_raid_member",
        "promise_fasttrack_raid_member",
        "silicon_medley_raid_member",
        "via_raid_member",
        "jmicron_raid_member",
        "adaptec_raid_member",
        "hpt45x_raid_member",
        "hpt37x_raid_member",
    }
)
MEMBER_USAGES = frozenset({"raid", "crypto"})


def discard_max_bytes(path: str) -> int | None:
    """The most bytes one discard may cover on the block device at ``path``, as its queue
    says (``queue/discard_max_bytes``; a partition has its disk's queue): 0 when it takes
    no discards, None when /sys does not say."""
    try:
        st = Path(path).stat()
    except OSError:
        return None
    base = Path(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    if (base / "partition").exists():
        base = base.resolve().parent
    return read_int(base / "queue" / "discard_max_bytes")


def block_device_size(path: str, st: os.stat_result) -> int | None:
    """A block device's size in bytes: /sys, else the BLKGETSIZE64 ioctl; None when
    neither answers."""
    sectors = read_int(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}/size")
    if sectors is not None:
        return sectors * 512
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        raw = fcntl.ioctl(fd, BLKGETSIZE64, b"\0" * 8)
        return int(struct.unpack("=Q", raw)[0])
    except OSError:
        return None
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Signature:
    """One signature found by wipefs/blkid: a filesystem, partition table, RAID/LVM label..."""

    device: str  # kernel name of the device it was found on (the target or a partition)
    type: str  # ext4, gpt, PMBR, swap, LVM2_member, crypto_LUKS ...
    offset: str | None = None  # "0x438"
    uuid: str | None = None
    label: str | None = None
    usage: str | None = None  # filesystem, raid, crypto, partition table, other

    @property
    def is_member(self) -> bool:
        return self.type in MEMBER_TYPES or (self.usage or "") in MEMBER_USAGES

    def describe(self, target_kname: str) -> str:
        ids = [f"UUID {self.uuid}"] if self.uuid else []
        ids += [f"LABEL {self.label}"] if self.label else []
        text = self.type + (f" ({', '.join(ids)})" if ids else "")
        text += f" at offset {self.offset}" if self.offset else ""
        return text + (f" on partition {self.device}" if self.device != target_kname else "")


@dataclass(frozen=True)
class DeviceFacts:
    """What was found about a block device; the input of :func:`refusals`."""

    path: str  # the device node, symlinks resolved
    kname: str  # kernel name: sdb, loop0, nvme0n1p2, dm-3
    partitions: tuple[str, ...] = ()  # kernel names of its partitions
    mounts: tuple[tuple[str, str], ...] = ()  # (device or partition, mount point)
    swaps: tuple[str, ...] = ()  # the device or partitions that are active swap
    holders: tuple[tuple[str, str], ...] = ()  # (device or partition, what holds it)
    stacked: str | None = None  # "device-mapper device vg-lv" when it is dm/md itself
    signatures: tuple[Signature, ...] = ()
    busy: bool = False  # open(O_RDONLY|O_EXCL) failed with EBUSY
    unchecked: tuple[str, ...] = ()  # checks that could not be made, each with its reason


_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


def _unescape(text: str) -> str:
    """/proc/self/mountinfo and /proc/swaps write a space as \\040."""
    return _OCTAL_ESCAPE.sub(lambda m: chr(int(m[1], 8)), text)


def mounts_from_mountinfo(mountinfo: str, devnos: dict[str, str]) -> list[tuple[str, str]]:
    """(kname, mount point) of mounts on any of ``devnos`` ({"7:0": "loop0", ...}).

    Compares the device number, not the path, so aliases (/dev/disk/by-id, symlinks, dm
    names) are caught. btrfs reports an anonymous 0:N device number, so for those the
    mount source is resolved to its device number instead.
    """
    found: list[tuple[str, str]] = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) < 5 or "-" not in fields[5:]:
            continue
        maj_min, mount_point = fields[2], _unescape(fields[4])
        tail = fields[fields.index("-", 5) + 1 :]
        source = _unescape(tail[1]) if len(tail) > 1 else ""
        kname = devnos.get(maj_min)
        if kname is None and maj_min.startswith("0:") and source.startswith("/"):
            devno = devno_of_path(source)
            kname = devnos.get(f"{devno[0]}:{devno[1]}") if devno else None
        if kname is not None:
            found.append((kname, mount_point))
    return found


def swaps_from_proc(swaps: str, devnos: dict[str, str]) -> list[str]:
    """Knames among ``devnos`` that /proc/swaps lists (compared by device number)."""
    found = []
    for line in swaps.splitlines()[1:]:
        fields = line.split()
        devno = devno_of_path(_unescape(fields[0])) if fields else None
        if devno and (kname := devnos.get(f"{devno[0]}:{devno[1]}")):
            found.append(kname)
    return found


def _holder_name(holder: str) -> str:
    dm_name = read_text(SYS_BLOCK / holder / "dm" / "name")
    return f"{holder} ({dm_name})" if dm_name else holder


def _holders(names: list[str], devnos: dict[str, str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for name in names:
        with contextlib.suppress(OSError):
            found += [
                (name, _holder_name(h.name))
                for h in sorted((SYS_BLOCK / name / "holders").iterdir())
            ]
    # A loop device over the raw device claims no holder link; find it through backing_file.
    with contextlib.suppress(OSError):
        for loop in sorted(e.name for e in SYS_BLOCK.iterdir()):
            backing = read_text(SYS_BLOCK / loop / "loop" / "backing_file")
            devno = devno_of_path(backing) if backing and loop.startswith("loop") else None
            if devno and (kname := devnos.get(f"{devno[0]}:{devno[1]}")):
                found.append((kname, f"{loop} (loop device over it)"))
    return found


def _stacked(kname: str) -> str | None:
    base = SYS_BLOCK / kname
    if (base / "partition").exists():  # a partition of a dm or md device is inside it too
        parent = Path(os.path.realpath(base)).parent.name
        inner = _stacked(parent)
        return f"partition of the {inner}" if inner else None
    if (base / "dm").exists():
        name = read_text(base / "dm" / "name") or kname
        uuid = read_text(base / "dm" / "uuid") or ""
        kind = uuid.split("-", 1)[0] if "-" in uuid else ""
        return f"device-mapper device {name}" + (f" ({kind})" if kind else "")
    if (base / "md").exists():
        level = read_text(base / "md" / "level")
        return "md RAID array" + (f" ({level})" if level else "")
    return None


def _node_for(kname: str, maj_min: str) -> str | None:
    for candidate in (f"/dev/{kname}", f"/dev/block/{maj_min}"):
        devno = devno_of_path(candidate)
        if devno and f"{devno[0]}:{devno[1]}" == maj_min:
            return candidate
    return None


def signatures_of(path: str, kname: str) -> tuple[list[Signature], str | None]:
    """Signatures on one device via ``wipefs --no-act --json``, else ``blkid -p``.

    Returns (signatures, None), or ([], reason) when the device cannot be read or neither
    tool gave an answer. The device is opened first because ``blkid -p`` exits with 2,
    "nothing found", also when it cannot open the device.
    """
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_CLOEXEC))
    except OSError as exc:
        return [], f"cannot read {path} to look for signatures: {exc.strerror or exc}"
    run = run_tool(
        ["wipefs", "--no-act", "--json", "-O", "DEVICE,OFFSET,TYPE,UUID,LABEL,USAGE", path]
    )
    if run.ok:
        if not run.stdout.strip():
            return [], None
        try:
            doc = json.loads(run.stdout)
            return [
                Signature(
                    device=kname,
                    type=str(s.get("type")),
                    offset=s.get("offset"),
                    uuid=s.get("uuid"),
                    label=s.get("label"),
                    usage=s.get("usage"),
                )
                for s in doc.get("signatures", [])
            ], None
        except (ValueError, AttributeError, TypeError):
            pass
    blkid = run_tool(["blkid", "-p", "-o", "export", path])
    if blkid.returncode == 2 and not blkid.stderr.strip():  # nothing found
        return [], None
    if blkid.returncode == 8:  # several signatures: libblkid's "ambivalent result"
        return [Signature(kname, "several (blkid: ambivalent probing result)")], None
    if blkid.ok:
        values = dict(line.partition("=")[::2] for line in blkid.stdout.splitlines())
        sig_type = values.get("TYPE") or values.get("PTTYPE")
        if sig_type:
            offset = values.get("SBMAGIC_OFFSET") or values.get("PTMAGIC_OFFSET")
            return [
                Signature(
                    kname,
                    sig_type,
                    hex(int(offset)) if offset and offset.isdigit() else None,
                    values.get("UUID") or values.get("PTUUID"),
                    values.get("LABEL"),
                    values.get("USAGE"),
                )
            ], None
        return [], None
    return [], f"signatures of {path} unknown ({run.reason()}; {blkid.reason()})"


def _exclusive_open(path: str) -> tuple[bool, str | None]:
    """(busy, reason it could not be checked) for an O_RDONLY|O_EXCL open of the device."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            return True, None
        return False, f"exclusive open of {path} failed: {exc.strerror or exc}"
    os.close(fd)
    return False, None


def collect_device_facts(path: str) -> DeviceFacts:
    """Gather :class:`DeviceFacts` for a block device; what cannot be read goes to ``unchecked``."""
    unchecked: list[str] = []
    devno = devno_of_path(path)
    kname = kname_of_devno(*devno) if devno else None
    if devno is None or kname is None:
        why = "not a block device" if devno is None else "not in /sys/dev/block"
        return DeviceFacts(path=path, kname=Path(path).name, unchecked=(f"{path}: {why}",))
    parts = partitions_of(kname)
    devnos = {f"{devno[0]}:{devno[1]}": kname}
    for part in parts:
        if maj_min := read_text(SYS_BLOCK / part / "dev"):
            devnos[maj_min] = part
        else:
            unchecked.append(f"device number of partition {part} unreadable")

    mountinfo = read_text("/proc/self/mountinfo")
    mounts = mounts_from_mountinfo(mountinfo, devnos) if mountinfo is not None else []
    if mountinfo is None:
        unchecked.append("/proc/self/mountinfo unreadable")
    swaps_text = read_text("/proc/swaps")
    swaps = swaps_from_proc(swaps_text, devnos) if swaps_text is not None else []
    if swaps_text is None:
        unchecked.append("/proc/swaps unreadable")

    signatures, reason = signatures_of(path, kname)
    unchecked += [reason] if reason else []
    for maj_min, name in devnos.items():
        if name == kname:
            continue
        node = _node_for(name, maj_min)
        if node is None:
            unchecked.append(f"partition {name} has no device node to inspect")
            continue
        found, reason = signatures_of(node, name)
        signatures += found
        unchecked += [reason] if reason else []

    busy, reason = _exclusive_open(path)
    unchecked += [reason] if reason else []
    return DeviceFacts(
        path=path,
        kname=kname,
        partitions=tuple(parts),
        mounts=tuple(mounts),
        swaps=tuple(swaps),
        holders=tuple(_holders([kname, *parts], devnos)),
        stacked=_stacked(kname),
        signatures=tuple(signatures),
        busy=busy,
        unchecked=tuple(unchecked),
    )


def swap_paths() -> list[str]:
    """The files and devices /proc/swaps lists as active swap."""
    swaps = read_text(Path("/proc/swaps")) or ""
    return [_unescape(fields[0]) for line in swaps.splitlines()[1:] if (fields := line.split())]


def loop_backing_files() -> list[tuple[str, str]]:
    """(loop device, the file behind it) of every loop device with a backing file."""
    out = []
    for backing in sorted(SYS_BLOCK.glob("loop*/loop/backing_file")):
        path = (read_text(backing) or "").strip().removesuffix(" (deleted)")
        if path:
            out.append((backing.parent.parent.name, path))
    return out
