"""Host context: name, kernel, OS, CPU, memory, virtualization.

Also the two primitives every probe uses, :func:`read_text` and :func:`run_tool`. Neither
raises: a missing tool, a timeout or an unreadable file becomes ``None`` (or a
:class:`ToolRun` that says what went wrong), because a probe that fails must never stop a
benchmark. Commands are argument lists, never a shell.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Debian puts wipefs, blkid, losetup, swapon in /usr/sbin, which is not on a normal user's PATH.
_EXTRA_PATH = ("/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin")
DEFAULT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ToolRun:
    """What happened when a tool ran; ``returncode`` is None when it never finished."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    error: str | None = None  # "not installed", "timed out after 5 s", an OSError

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def reason(self) -> str:
        """One line for a message: why the tool gave no usable answer."""
        if self.error:
            return f"{self.argv[0]}: {self.error}"
        tail = self.stderr.strip().splitlines()[-1:] or ["no message"]
        return f"{self.argv[0]} exited with {self.returncode}: {tail[0]}"


def find_tool(name: str) -> str | None:
    """Absolute path of a tool on PATH or in the sbin directories, else None."""
    path = os.pathsep.join([os.environ.get("PATH", ""), *_EXTRA_PATH])
    return shutil.which(name, path=path)


def run_tool(argv: list[str], *, timeout_s: float = DEFAULT_TIMEOUT_S) -> ToolRun:
    """Run ``argv`` (no shell) with a C locale and a timeout; never raises."""
    exe = find_tool(argv[0])
    if exe is None:
        return ToolRun(tuple(argv), None, "", "", "not installed")
    env = {**os.environ, "LC_ALL": "C"}
    try:
        done = subprocess.run(
            [exe, *argv[1:]],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout_s,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return ToolRun(tuple(argv), None, "", "", f"timed out after {timeout_s:g} s")
    except OSError as exc:
        return ToolRun(tuple(argv), None, "", "", str(exc))
    return ToolRun(tuple(argv), done.returncode, done.stdout, done.stderr)


def run_json(argv: list[str], *, timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
    """Run a tool that prints JSON; its document, or None on any failure."""
    run = run_tool(argv, timeout_s=timeout_s)
    if not run.ok or not run.stdout.strip():
        return None
    try:
        return json.loads(run.stdout)
    except ValueError:
        return None


def read_text(path: str | Path) -> str | None:
    """The stripped contents of a (small, /proc or /sys) file, or None."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except (OSError, ValueError):
        return None


def read_int(path: str | Path) -> int | None:
    text = read_text(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def cpuinfo_field(cpuinfo: str, key: str) -> str | None:
    """The first value of ``key`` in /proc/cpuinfo text (e.g. ``model name``)."""
    for line in cpuinfo.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() == key:
            return value.strip() or None
    return None


def meminfo_bytes(meminfo: str, key: str) -> int | None:
    """A /proc/meminfo entry (``MemTotal:  16318 kB``) in bytes."""
    for line in meminfo.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() == key:
            parts = value.split()
            if not parts or not parts[0].isdigit():
                return None
            factor = 1024 if len(parts) > 1 and parts[1].lower() == "kb" else 1
            return int(parts[0]) * factor
    return None


# DMI sys_vendor / product_name substrings -> systemd-detect-virt's identifiers.
_DMI_VM = (
    ("qemu", "qemu"),
    ("kvm", "kvm"),
    ("vmware", "vmware"),
    ("virtualbox", "oracle"),
    ("innotek", "oracle"),
    ("xen", "xen"),
    ("amazon ec2", "amazon"),
    ("google compute engine", "google"),
    ("parallels", "parallels"),
    ("bochs", "bochs"),
    ("bhyve", "bhyve"),
    ("openstack", "kvm"),
    ("cloud hypervisor", "kvm"),
    ("firecracker", "kvm"),
)


def vm_from_dmi(
    sys_vendor: str | None, product_name: str | None, cpu_flags: str | None
) -> str | None:
    """Guess the hypervisor without systemd-detect-virt; None when it cannot tell.

    Uses the DMI strings first, then the x86 ``hypervisor`` CPU flag (``"vm-other"``: some VM,
    unknown which). Absence of evidence is not proof of bare metal, so that is None too.
    """
    text = f"{sys_vendor or ''} {product_name or ''}".lower()
    if "microsoft" in text and "virtual" in text:
        return "microsoft"
    for needle, name in _DMI_VM:
        if needle in text:
            return name
    if cpu_flags is not None and "hypervisor" in cpu_flags.split():
        return "vm-other"
    return None


def _detect_virt(flag: str) -> str | None:
    # systemd-detect-virt prints "none" with exit status 1 when there is none.
    run = run_tool(["systemd-detect-virt", flag], timeout_s=3.0)
    out = run.stdout.strip()
    if run.returncode in (0, 1) and out:
        return out
    return None


def _container_heuristic() -> str | None:
    if Path("/.dockerenv").exists():
        return "docker"
    if Path("/run/.containerenv").exists():
        return "podman"
    environ = read_text("/proc/1/environ")
    if environ:
        for item in environ.split("\0"):
            if item.startswith("container="):
                return item.partition("=")[2] or None
    return None


def probe_virtualization(cpuinfo: str | None) -> dict[str, Any]:
    """``{"vm": ..., "container": ..., "source": ...}`` (see docs/context.md)."""
    if find_tool("systemd-detect-virt") is not None:
        vm, container = _detect_virt("--vm"), _detect_virt("--container")
        if vm is not None or container is not None:
            return {"vm": vm, "container": container, "source": "systemd-detect-virt"}
    dmi = Path("/sys/class/dmi/id")
    flags = cpuinfo_field(cpuinfo, "flags") if cpuinfo else None
    vm = vm_from_dmi(read_text(dmi / "sys_vendor"), read_text(dmi / "product_name"), flags)
    return {"vm": vm, "container": _container_heuristic(), "source": "heuristic"}


def _os_pretty_name() -> str | None:
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME")
    except OSError:
        return None


def _usable_cpus() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def probe_host() -> dict[str, Any]:
    """What machine this is; every value may be None when it could not be read."""
    cpuinfo = read_text("/proc/cpuinfo")
    meminfo = read_text("/proc/meminfo")
    uname = platform.uname()
    try:
        hostname: str | None = socket.gethostname() or None
    except OSError:
        hostname = None
    model = None
    if cpuinfo:
        # x86 "model name"; arm64 has none, so fall back to what is there.
        model = cpuinfo_field(cpuinfo, "model name") or cpuinfo_field(cpuinfo, "Model")
    return {
        "hostname": hostname,
        "kernel": {"release": uname.release or None, "version": uname.version or None},
        "os": _os_pretty_name(),
        "arch": uname.machine or None,
        "cpu": {"model": model, "online": os.cpu_count(), "usable": _usable_cpus()},
        "memory_bytes": meminfo_bytes(meminfo, "MemTotal") if meminfo else None,
        "virtualization": probe_virtualization(cpuinfo),
    }
