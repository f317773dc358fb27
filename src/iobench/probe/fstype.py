"""The kind of filesystem a path is on, from statfs(2)'s ``f_type``: the kernel's own
answer, whatever the mount table, a bind mount or a symbolic link says.

Used to refuse targets on pseudo-filesystems (docs/safety.md): files there are kernel
interfaces, not storage. Writing one changes the running system (``/sys/.../enabled``,
``/proc/sys/...``), writes firmware variables (efivarfs, where deleting or corrupting the
wrong one can leave a machine unbootable) or crash dumps (pstore); even reading some has
side effects or never ends (``/proc/kcore``, tracefs pipes).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

# linux/magic.h: f_type -> (name, what lives there).
PSEUDO_FILESYSTEMS: dict[int, tuple[str, str]] = {
    0x9FA0: ("proc", "process and kernel state"),
    0x62656572: ("sysfs", "the kernel's devices, drivers and settings"),
    0x64626720: ("debugfs", "kernel debugging interfaces"),
    0x74726163: ("tracefs", "the kernel's tracing interface"),
    0x73636673: ("securityfs", "security module interfaces"),
    0xDE5E81E4: ("efivarfs", "the firmware's (UEFI) variables"),
    0x0027E0EB: ("cgroup", "control groups"),
    0x63677270: ("cgroup2", "control groups"),
    0x62656570: ("configfs", "kernel objects configured from user space"),
    0xCAFE4A11: ("bpf", "pinned BPF programs and maps"),
    0x6165676C: ("pstore", "crash records kept by the firmware"),
    0x00001CD1: ("devpts", "pseudo-terminals"),
    0x19800202: ("mqueue", "POSIX message queues"),
    0x42494E4D: ("binfmt_misc", "the kernel's executable formats"),
    0x65735543: ("fusectl", "the FUSE control interface"),
    0xF97CFF8C: ("selinuxfs", "SELinux's interface"),
    0x43415D53: ("smackfs", "Smack's interface"),
    0x6E736673: ("nsfs", "namespaces"),
    0x67596969: ("rpc_pipefs", "NFS's RPC pipes"),
    0x6E667364: ("nfsd", "the NFS server's control interface"),
    0x958458F6: ("hugetlbfs", "huge pages to map, which cannot be read or written as files"),
    0x00009FA1: ("openpromfs", "the firmware's device tree"),
    0xABBA1974: ("xenfs", "Xen's interface"),
}

_libc: ctypes.CDLL | None = None


def statfs_type(path: str) -> int | None:
    """statfs(2)'s f_type for ``path`` (symlinks followed); None if it cannot be read."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    buf = ctypes.create_string_buffer(256)  # struct statfs is 120 bytes on 64-bit Linux
    if _libc.statfs(os.fsencode(path), buf) != 0:
        return None
    # f_type is the first member, a C long (__fsword_t) on every Linux ABI.
    return ctypes.c_long.from_buffer(buf).value & 0xFFFFFFFF


def pseudo_filesystem(path: str) -> tuple[str, str] | None:
    """(name, what it holds) when ``path`` is on a kernel pseudo-filesystem."""
    kind = statfs_type(path)
    return None if kind is None else PSEUDO_FILESYSTEMS.get(kind)
