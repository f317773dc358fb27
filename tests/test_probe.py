"""Context capture: real host, real filesystems, real loop devices; and the parsers it uses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

import iobench.probe.host as host_module
from iobench.probe import probe_context, probe_host, probe_target
from iobench.probe.host import cpuinfo_field, meminfo_bytes, run_tool, vm_from_dmi
from iobench.probe.storage import (
    chain_from_lsblk,
    chain_from_sysfs,
    infer_transport,
    is_network_fstype,
    nfs_details,
    parse_options,
    scheduler_in_use,
)

MiB = 1 << 20
SBIN_PATH = "/usr/local/sbin:/usr/sbin:/sbin:/usr/local/bin:/usr/bin:/bin"


def tool(name: str) -> str:
    """Absolute path of a tool, so cleanup still works when a test changes PATH."""
    return shutil.which(name, path=SBIN_PATH) or name


def _run(*argv: str) -> str:
    done = subprocess.run(
        [tool(argv[0]), *argv[1:]], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, f"{argv} failed ({done.returncode}): {done.stderr.strip()}"
    return done.stdout


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    if os.geteuid() != 0:
        pytest.skip("needs root: creates loop devices and mounts")
    if shutil.which("losetup", path=SBIN_PATH) is None:
        pytest.skip("losetup is not installed (Debian package mount)")
    with ExitStack() as s:
        yield s


def attach(stack: ExitStack, img: Path) -> str:
    with open(img, "wb") as f:
        f.truncate(64 * MiB)
    dev = _run("losetup", "--find", "--show", str(img)).strip()
    stack.callback(subprocess.run, [tool("losetup"), "-d", dev], capture_output=True, check=False)
    if list(Path("/sys/class/block", Path(dev).name).glob("*p[0-9]*")):
        # partitions added by partx survive a detach on a kernel without table parsers
        subprocess.run([tool("partx"), "-d", dev], capture_output=True, check=False)
    return dev


def mount(stack: ExitStack, dev: str, where: Path) -> None:
    where.mkdir()
    _run("mount", dev, str(where))
    stack.callback(subprocess.run, [tool("umount"), str(where)], capture_output=True, check=False)


# --- host ----------------------------------------------------------------------------------


def test_probe_host_has_the_basics() -> None:
    host = probe_host()
    assert host["hostname"]
    assert host["kernel"]["release"] == os.uname().release
    assert host["kernel"]["version"]
    assert host["arch"] == os.uname().machine
    assert host["cpu"]["online"] >= 1
    assert 1 <= host["cpu"]["usable"] <= host["cpu"]["online"]
    assert host["memory_bytes"] > 64 * MiB
    assert set(host["virtualization"]) == {"vm", "container", "source"}
    json.dumps(host)  # JSON-ready


def test_probe_host_on_this_debian_vm() -> None:
    host = probe_host()
    if not Path("/etc/debian_version").exists():
        pytest.skip("written for the Debian development machine")
    assert host["os"].startswith("Debian GNU/Linux")
    assert host["cpu"]["model"]


def test_vm_from_dmi() -> None:
    assert vm_from_dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)", None) == "qemu"
    assert vm_from_dmi("Microsoft Corporation", "Virtual Machine", None) == "microsoft"
    assert vm_from_dmi("Amazon EC2", "m5.large", None) == "amazon"
    assert vm_from_dmi("innotek GmbH", "VirtualBox", None) == "oracle"
    assert vm_from_dmi(None, None, "fpu vme hypervisor lahf_lm") == "vm-other"
    assert vm_from_dmi("Dell Inc.", "PowerEdge R640", "fpu vme lahf_lm") is None
    assert vm_from_dmi(None, None, None) is None


def test_cpuinfo_and_meminfo_parsers() -> None:
    cpuinfo = (
        "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t\t: fpu hypervisor\n"
    )
    assert cpuinfo_field(cpuinfo, "model name") == "Intel(R) Xeon(R) Processor"
    assert cpuinfo_field(cpuinfo, "Model") is None
    assert (
        meminfo_bytes("MemTotal:       24684096 kB\nMemFree: 1 kB\n", "MemTotal") == 24684096 * 1024
    )
    assert meminfo_bytes("HugePages_Total:       0\n", "HugePages_Total") == 0
    assert meminfo_bytes("", "MemTotal") is None


def test_run_tool_never_raises() -> None:
    missing = run_tool(["iobench-no-such-tool", "--version"])
    assert (missing.returncode, missing.error) == (None, "not installed")
    slow = run_tool(["sleep", "5"], timeout_s=0.2)
    assert slow.error == "timed out after 0.2 s"
    assert not slow.ok
    failing = run_tool(["ls", "/iobench-not-there"])
    assert failing.returncode not in (0, None)
    assert failing.reason().startswith("ls exited with")


def test_probes_without_any_tools_return_nulls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(host_module, "_EXTRA_PATH", ())
    result = probe_target(str(tmp_path))
    assert result["kind"] == "directory"
    assert result["filesystem"] is None
    assert result["error"] == "findmnt found no filesystem for this path"
    host = probe_host()
    assert host["hostname"]
    assert host["virtualization"]["source"] == "heuristic"


# --- targets on this machine ---------------------------------------------------------------


def test_a_file_on_this_machines_disk(tmp_path: Path) -> None:
    """Whatever disk holds tmp_path (a virtio vda here, an NVMe or SCSI disk elsewhere): the
    probe says what findmnt, lsblk and sysfs say about it."""
    f = tmp_path / "data.bin"
    f.write_bytes(b"\1" * 8192)
    result = probe_target(str(f))
    source, fstype = subprocess.run(
        ["findmnt", "-n", "-o", "SOURCE,FSTYPE", "--target", str(f)],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    if not source.startswith("/dev/"):
        pytest.skip(f"tmp_path is on {fstype} from {source}: no block device under it here")
    assert result["kind"] == "file"
    assert result["size_bytes"] == 8192
    assert result["allocated_bytes"] >= 8192
    fs = result["filesystem"]
    assert (fs["fstype"], fs["ram_backed"], fs["network"]) == (fstype, False, False)
    assert fs["nfs"] is None
    assert fs["options_parsed"]["rw"] is True
    assert fs["free_bytes"] > 0
    listed = json.loads(subprocess.run(
        ["lsblk", "-J", "-b", "-s", "-o", "KNAME,TYPE,TRAN,LOG-SEC,ROTA,SIZE", source],
        capture_output=True, text=True, check=True,
    ).stdout)["blockdevices"]  # fmt: skip
    below: list[dict[str, Any]] = []
    while listed:  # -s lists the device with its parents nested under it
        node = listed.pop()
        below.append(node)
        listed.extend(node.get("children", []))
    disks = {d["kname"]: d for d in below if d["type"] == "disk"}
    assert sorted(d["kname"] for d in result["block"]["disks"]) == sorted(disks)
    for disk in result["block"]["disks"]:
        truth = disks[disk["kname"]]
        assert disk["size_bytes"] == truth["size"]
        assert disk["logical_block_size"] == truth["log-sec"]
        assert disk["rotational"] is truth["rota"]
        assert disk["scheduler"] in disk_schedulers(disk["kname"])
        driver = Path(f"/sys/block/{disk['kname']}/device/driver")
        if driver.exists():
            assert disk["driver"] == driver.resolve().name
        if truth["tran"]:
            assert disk["transport"] == truth["tran"]
        elif disk["driver"] == "virtio_blk":
            assert disk["transport"] == "virtio"
    json.dumps(result)


def disk_schedulers(kname: str) -> list[str]:
    text = Path(f"/sys/class/block/{kname}/queue/scheduler").read_text()
    return [w.strip("[]") for w in text.split()]


def test_dev_shm_is_ram_backed() -> None:
    if not Path("/dev/shm").is_dir():
        pytest.skip("no /dev/shm")
    result = probe_target("/dev/shm")
    fs = result["filesystem"]
    assert (fs["fstype"], fs["ram_backed"], fs["network"]) == ("tmpfs", True, False)
    assert result["block"]["chain"] == []
    assert result["block"]["note"] == "tmpfs is RAM-backed: no block device"


def test_missing_path_is_recorded_not_raised(tmp_path: Path) -> None:
    result = probe_target(str(tmp_path / "nothing"))
    assert (result["kind"], result["error"]) == (None, "No such file or directory")
    assert probe_context([str(tmp_path)])["targets"][0]["kind"] == "directory"


# --- loop devices --------------------------------------------------------------------------


@pytest.mark.root
def test_loop_device_chain_shows_backing_file(stack: ExitStack, tmp_path: Path) -> None:
    img = tmp_path / "disk.img"
    dev = attach(stack, img)
    result = probe_target(dev)
    assert (result["kind"], result["size_bytes"], result["filesystem"]) == ("block", 64 * MiB, None)
    [node] = result["block"]["chain"]
    assert (node["kname"], node["type"], node["backing_file"]) == (Path(dev).name, "loop", str(img))
    assert node["parents"] == []
    [disk] = result["block"]["disks"]
    assert (disk["transport"], disk["size_bytes"]) == ("loop", 64 * MiB)
    assert result["mounts"] == []


@pytest.mark.root
def test_file_on_a_mounted_loop_partition(stack: ExitStack, tmp_path: Path) -> None:
    if shutil.which("sfdisk", path=SBIN_PATH) is None:
        pytest.skip("sfdisk is not installed (Debian package fdisk)")
    img = tmp_path / "disk.img"
    dev = attach(stack, img)
    subprocess.run(
        [tool("sfdisk"), "--quiet", "--no-reread", dev],
        input="label: dos\n,,L\n",
        text=True,
        check=True,
    )
    subprocess.run([tool("partx"), "-a", dev], capture_output=True, check=False)
    part = f"{dev}p1"
    stack.callback(subprocess.run, [tool("partx"), "-d", dev], capture_output=True, check=False)
    _run("mkfs.ext4", "-q", part)
    where = tmp_path / "mnt"
    mount(stack, part, where)
    (where / "f").write_bytes(b"x")

    result = probe_target(str(where / "f"))
    assert result["filesystem"]["fstype"] == "ext4"
    assert result["filesystem"]["source"] == part
    assert result["filesystem"]["target"] == str(where)
    chain = result["block"]["chain"]
    loop, p1 = Path(dev).name, Path(part).name
    assert [(n["kname"], n["type"], n["parents"]) for n in chain] == [
        (p1, "part", [loop]),
        (loop, "loop", []),
    ]
    assert chain[1]["backing_file"] == str(img)
    assert [d["kname"] for d in result["block"]["disks"]] == [loop]
    sysfs = [(n["kname"], n["type"], n["parents"]) for n in chain_from_sysfs(p1)]
    lsblk = chain_from_lsblk(p1)
    assert lsblk is not None
    assert sysfs == [(n["kname"], n["type"], n["parents"]) for n in lsblk]

    whole = probe_target(dev)
    assert [(m["device"], m["target"]) for m in whole["mounts"]] == [(p1, str(where))]


# --- parsers -------------------------------------------------------------------------------


def test_parse_options_keeps_quoted_commas() -> None:
    parsed = parse_options('rw,relatime,context="system_u:object_r:nfs_t:s0:c1,c2",rsize=1048576')
    assert parsed == {
        "rw": True,
        "relatime": True,
        "context": '"system_u:object_r:nfs_t:s0:c1,c2"',
        "rsize": "1048576",
    }
    assert parse_options(None) == {}


def test_nfs_details() -> None:
    opts = parse_options(
        "rw,relatime,vers=4.2,rsize=1048576,wsize=524288,namlen=255,hard,proto=tcp,"
        "nconnect=4,timeo=600,retrans=2,sec=sys,clientaddr=10.0.0.2,addr=10.0.0.1"
    )
    nfs = nfs_details("filer:/export/data", opts)
    assert nfs == {
        "server": "filer",
        "export": "/export/data",
        "addr": "10.0.0.1",
        "vers": "4.2",
        "proto": "tcp",
        "rsize": 1048576,
        "wsize": 524288,
        "nconnect": 4,
        "hard": True,
        "timeo": 600,
        "sec": "sys",
    }
    v6 = nfs_details("[fd00::1]:/srv", parse_options("soft,vers=3,proto=udp"))
    assert (v6["server"], v6["export"], v6["hard"], v6["rsize"]) == ("fd00::1", "/srv", False, None)


def test_filesystem_kinds() -> None:
    assert is_network_fstype("nfs4") is True
    assert is_network_fstype("fuse.sshfs") is True
    assert is_network_fstype("ext4") is False
    assert is_network_fstype("fuse.someunknownfs") is None
    assert is_network_fstype(None) is None


def test_scheduler_in_use() -> None:
    assert scheduler_in_use("none [mq-deadline] kyber bfq") == "mq-deadline"
    assert scheduler_in_use("[none] mq-deadline") == "none"
    assert scheduler_in_use("none") == "none"
    assert scheduler_in_use("") is None


def test_infer_transport() -> None:
    assert infer_transport("vda", "virtio", "virtio_blk") == "virtio"
    assert infer_transport("nvme0n1", "nvme", None) == "nvme"
    assert infer_transport("sda", "scsi", "sd") == "scsi"
    assert infer_transport("xvda", "xen", "vbd") == "xen"
    assert infer_transport("loop3", None, None) == "loop"
    assert infer_transport("zram0", None, None) == "zram"
    assert infer_transport("weird0", None, None) is None
