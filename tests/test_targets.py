"""Target resolution and the raw-device guard, on real loop devices where it matters."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
from pathlib import Path

import pytest

import iobench.probe.host as host_module
from iobench.errors import ExitCode, TargetUnsafe, UserError
from iobench.model import Target
from iobench.probe.devices import DeviceFacts, Signature, mounts_from_mountinfo, signatures_of
from iobench.targets import (
    Refusal,
    check_block_device_writable,
    check_free_space,
    format_refusals,
    free_space_margin,
    hold_device,
    refusals,
    resolve_target,
)
from scratch import SBIN_PATH, MiB, Scratch, run_tool, sha256_of, tool


def refused(target: Target, *, destructive: bool, overwrite_signatures: bool) -> TargetUnsafe:
    with pytest.raises(TargetUnsafe) as info:
        check_block_device_writable(
            target, destructive=destructive, overwrite_signatures=overwrite_signatures
        )
    assert info.value.exit_code == ExitCode.UNSAFE_TARGET
    assert int(info.value.exit_code) == 3
    return info.value


@pytest.mark.root
def test_blank_loop_device_allowed_only_with_destructive(scratch: Scratch) -> None:
    target = resolve_target(scratch.loop())
    assert target.kind == "block"
    assert target.size_bytes == 64 * MiB
    err = refused(target, destructive=False, overwrite_signatures=False)
    assert "--destructive" in (err.hint or "")
    assert "destroying its contents" in err.message
    check_block_device_writable(target, destructive=True, overwrite_signatures=False)


@pytest.mark.root
def test_ext4_refused_with_destructive_and_left_unchanged(scratch: Scratch) -> None:
    dev = scratch.loop()
    scratch.mkfs(dev)
    before = sha256_of(dev)
    target = resolve_target(dev)
    err = refused(target, destructive=True, overwrite_signatures=False)
    assert "ext4 (UUID " in err.message
    assert "at offset 0x438" in err.message
    assert "--overwrite-signatures" in (err.hint or "")
    assert sha256_of(dev) == before
    check_block_device_writable(target, destructive=True, overwrite_signatures=True)
    assert sha256_of(dev) == before


@pytest.mark.root
def test_partition_table_refused(scratch: Scratch) -> None:
    dev = scratch.loop()
    p1, _ = scratch.partition(dev)
    target = resolve_target(dev)
    err = refused(target, destructive=True, overwrite_signatures=False)
    assert "dos" in err.message
    assert f"partitions {Path(p1).name}" in err.message
    check_block_device_writable(target, destructive=True, overwrite_signatures=True)


@pytest.mark.root
def test_mounted_device_refused_through_a_symlink_even_with_both_flags(
    scratch: Scratch, tmp_path: Path
) -> None:
    dev = scratch.loop()
    scratch.mkfs(dev)
    where = scratch.mount(dev)
    alias = tmp_path / "alias"
    alias.symlink_to(dev)
    target = resolve_target(str(alias))
    assert target.path == dev
    assert target.spec == str(alias)
    err = refused(target, destructive=True, overwrite_signatures=True)
    assert f"{dev} is mounted: {Path(dev).name} on {where}" == err.message


@pytest.mark.root
def test_whole_disk_refused_when_a_partition_is_mounted(scratch: Scratch) -> None:
    # fio's own check compares path strings and lets this one through (FIO.md §6).
    dev = scratch.loop()
    p1, _ = scratch.partition(dev)
    scratch.mkfs(p1)
    where = scratch.mount(p1)
    err = refused(resolve_target(dev), destructive=True, overwrite_signatures=True)
    assert f"{Path(p1).name} on {where}" in err.message


@pytest.mark.root
def test_active_swap_refused(scratch: Scratch) -> None:
    dev = scratch.loop()
    scratch.swapon(dev)
    err = refused(resolve_target(dev), destructive=True, overwrite_signatures=True)
    assert f"{dev} is in use as swap: {Path(dev).name}" in err.message


@pytest.mark.root
def test_device_backing_another_loop_device_refused(scratch: Scratch) -> None:
    lower = scratch.loop()
    upper = scratch.loop(backing=lower)
    err = refused(resolve_target(lower), destructive=True, overwrite_signatures=True)
    assert f"by {Path(upper).name} (loop device over it)" in err.message


@pytest.mark.root
def test_lvm_member_refused_even_with_overwrite(scratch: Scratch) -> None:
    if shutil.which("pvcreate", path=SBIN_PATH) is None:
        pytest.skip("pvcreate is not installed (Debian package lvm2)")
    dev = scratch.loop()
    env = {**os.environ, "LVM_SUPPRESS_FD_WARNINGS": "1"}
    subprocess.run(
        [tool("pvcreate"), "-y", dev], env=env, capture_output=True, timeout=60, check=True
    )
    err = refused(resolve_target(dev), destructive=True, overwrite_signatures=True)
    assert "belongs to a multi-device volume: LVM2_member (UUID " in err.message
    assert f"wipefs -a {dev}" in (err.hint or "")


@pytest.mark.root
def test_luks_member_refused_even_with_overwrite(scratch: Scratch) -> None:
    if shutil.which("cryptsetup", path=SBIN_PATH) is None:
        pytest.skip("cryptsetup is not installed (Debian package cryptsetup-bin)")
    dev = scratch.loop()
    fmt = ["cryptsetup", "luksFormat", "-q", "--type", "luks2", "--pbkdf", "pbkdf2"]
    run_tool(*fmt, "--pbkdf-force-iterations", "1000", "--key-file=-", dev, stdin="secret")
    err = refused(resolve_target(dev), destructive=True, overwrite_signatures=True)
    assert "crypto_LUKS" in err.message


@pytest.mark.root
def test_hold_device_keeps_others_from_mounting(scratch: Scratch) -> None:
    dev = scratch.loop()
    scratch.mkfs(dev)
    target = resolve_target(dev)
    where = scratch.tmp_path / "held"
    where.mkdir()
    with hold_device(target):
        mount = subprocess.run([tool("mount"), dev, str(where)], capture_output=True, timeout=60)
        if mount.returncode == 0:  # pragma: no cover - only when the claim failed
            subprocess.run([tool("umount"), str(where)], check=False)
        assert mount.returncode != 0
        fd = os.open(dev, os.O_WRONLY)  # fio's plain opens still work
        os.close(fd)
    scratch.mount(dev)
    with pytest.raises(TargetUnsafe, match="in use by the kernel"), hold_device(target):
        pass


# --- resolving (no root needed) ------------------------------------------------------------


def test_resolve_directory_and_file(tmp_path: Path) -> None:
    d = resolve_target(str(tmp_path))
    assert (d.kind, d.path, d.size_bytes) == ("directory", str(tmp_path.resolve()), None)
    assert d.free_bytes is not None and d.free_bytes > 0
    f = tmp_path / "data.bin"
    f.write_bytes(b"x" * 4096)
    link = tmp_path / "link"
    link.symlink_to(f)
    t = resolve_target(str(link))
    assert (t.kind, t.path, t.size_bytes, t.spec) == ("file", str(f), 4096, str(link))


def test_a_relative_target_is_named_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A target typed as ".", "data", "../x" or "./f.img" is stored and shown as the
    absolute path it names: "." and ".." and slashes resolved, symbolic links kept."""
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    (tmp_path / "x").mkdir()
    (work / "f.img").write_bytes(b"x" * 4096)
    (tmp_path / "via").symlink_to(work / "data")
    monkeypatch.chdir(work)
    monkeypatch.setenv("PWD", str(work))
    for typed, named in (
        (".", work),
        ("data", work / "data"),
        ("data/", work / "data"),
        ("./data//.", work / "data"),
        ("../x", tmp_path / "x"),
        ("./f.img", work / "f.img"),
        ("../via", tmp_path / "via"),  # the link as named; its path is where it leads
    ):
        t = resolve_target(typed)
        assert (typed, t.spec) == (typed, str(named))
        assert t.path == str(named.resolve())
    assert resolve_target("../via").path == str(work / "data")


def test_a_relative_target_under_a_linked_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The working directory as the shell names it ($PWD, when it is the directory the
    process is in); a ".." after a link goes where the kernel goes: the real path."""
    real = tmp_path / "real" / "work"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(real)
    monkeypatch.chdir(tmp_path / "link")
    monkeypatch.setenv("PWD", str(tmp_path / "link"))
    t = resolve_target(".")
    assert (t.spec, t.path) == (str(tmp_path / "link"), str(real.resolve()))
    # "link/.." is tmp_path/real to the kernel, not tmp_path as the text suggests.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PWD", str(tmp_path))
    up = resolve_target("link/..")
    assert up.spec == up.path == str((tmp_path / "real").resolve()), "named and tested alike"
    # A $PWD that is not the working directory (a stale one, a lie) is not believed.
    monkeypatch.setenv("PWD", str(real))
    assert resolve_target(".").spec == str(tmp_path.resolve())
    monkeypatch.setenv("PWD", "relative/dir")
    assert resolve_target(".").spec == str(tmp_path.resolve())


def test_missing_path_suggests_mkdir(tmp_path: Path) -> None:
    with pytest.raises(UserError) as info:
        resolve_target(str(tmp_path / "new"))
    assert info.value.message == f"{tmp_path / 'new'} does not exist"
    assert f"mkdir {tmp_path / 'new'}" in (info.value.hint or "")
    assert info.value.exit_code == ExitCode.BAD_INPUT


def test_missing_parent(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="neither does its parent directory"):
        resolve_target(str(tmp_path / "a" / "b"))


def test_dangling_symlink(tmp_path: Path) -> None:
    (tmp_path / "l").symlink_to(tmp_path / "gone")
    with pytest.raises(UserError, match=r"is a symbolic link to .*gone, which does not exist"):
        resolve_target(str(tmp_path / "l"))


def test_character_device_refused_with_what_is_accepted() -> None:
    with pytest.raises(UserError) as info:
        resolve_target("/dev/null")
    assert info.value.message == "/dev/null is a character device; iobench cannot benchmark it"
    assert "a directory" in (info.value.hint or "")
    assert "block device" in (info.value.hint or "")


def test_fifo_and_socket_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="is a named pipe"):
        resolve_target(str(fifo))
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        with pytest.raises(UserError, match="is a socket"):
            resolve_target(str(tmp_path / "sock"))


def test_empty_spec() -> None:
    with pytest.raises(UserError, match="empty"):
        resolve_target("  ")


def test_block_check_needs_a_block_target(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs a block device"):
        check_block_device_writable(
            resolve_target(str(tmp_path)), destructive=True, overwrite_signatures=True
        )


# --- free space ----------------------------------------------------------------------------


def test_free_space_margin() -> None:
    assert free_space_margin(MiB) == 64 * MiB
    assert free_space_margin(100 << 30) == 5 << 30


def test_check_free_space(tmp_path: Path) -> None:
    target = resolve_target(str(tmp_path))
    check_free_space(target, 16 * MiB)
    vfs = os.statvfs(tmp_path)
    free = vfs.f_bavail * vfs.f_frsize
    with pytest.raises(UserError) as info:
        check_free_space(target, free)
    assert "not enough free space in" in info.value.message
    assert "is free" in info.value.message
    assert "plus a" in info.value.message
    assert "--size" in (info.value.hint or "")


def test_check_free_space_ignores_files(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"")
    check_free_space(resolve_target(str(f)), 1 << 60)


# --- the pure decision ---------------------------------------------------------------------

BLANK = DeviceFacts(path="/dev/sdz", kname="sdz")
EXT4 = Signature("sdz", "ext4", "0x438", "0d1e-uuid", None, "filesystem")


def rules(facts: DeviceFacts, *, destructive: bool = True, overwrite: bool = False) -> list[str]:
    found = refusals(facts, destructive=destructive, overwrite_signatures=overwrite)
    return [r.rule for r in found]


def with_(**changes: object) -> DeviceFacts:
    return DeviceFacts(**{"path": "/dev/sdz", "kname": "sdz", **changes})  # type: ignore[arg-type]


def test_blank_device_needs_only_destructive() -> None:
    assert rules(BLANK) == []
    assert rules(BLANK, destructive=False) == ["destructive"]


@pytest.mark.parametrize(
    ("facts", "rule"),
    [
        (with_(mounts=(("sdz1", "/srv"),)), "mounted"),
        (with_(swaps=("sdz2",)), "swap"),
        (with_(holders=(("sdz", "dm-0 (vg-data)"),)), "holders"),
        (with_(stacked="device-mapper device vg-lv (LVM)"), "stacked"),
        (with_(signatures=(Signature("sdz", "LVM2_member", "0x218", "u"),)), "member"),
        (with_(signatures=(Signature("sdz", "linux_raid_member", "0x1000"),)), "member"),
        (with_(signatures=(Signature("sdz", "crypto_LUKS", "0x0"),)), "member"),
        (with_(signatures=(Signature("sdz1", "zfs_member", "0x3f000"),)), "member"),
        (with_(signatures=(Signature("sdz", "some_future_raid", usage="raid"),)), "member"),
        (with_(busy=True), "busy"),
        (with_(unchecked=("signatures of /dev/sdz unknown",)), "unchecked"),
    ],
)
def test_refused_even_with_both_flags(facts: DeviceFacts, rule: str) -> None:
    assert rules(facts, overwrite=True) == [rule]
    assert rules(facts, destructive=False, overwrite=True) == ["destructive", rule]


def test_signatures_refused_unless_overwrite() -> None:
    facts = with_(
        signatures=(EXT4, Signature("sdz", "gpt", "0x200", None, None, "partition table"))
    )
    found = refusals(facts, destructive=True, overwrite_signatures=False)
    assert [r.rule for r in found] == ["signatures"]
    assert found[0].message == (
        "/dev/sdz holds data: ext4 (UUID 0d1e-uuid) at offset 0x438; gpt at offset 0x200"
    )
    assert rules(facts, overwrite=True) == []


def test_partitions_count_as_data_even_without_a_signature() -> None:
    facts = with_(partitions=("sdz1",), signatures=(Signature("sdz1", "xfs", "0x0", "u2"),))
    found = refusals(facts, destructive=True, overwrite_signatures=False)
    assert found[0].message == (
        "/dev/sdz holds data: xfs (UUID u2) at offset 0x0 on partition sdz1; partitions sdz1"
    )
    assert rules(with_(partitions=("sdz1",))) == ["signatures"]
    assert rules(with_(partitions=("sdz1",)), overwrite=True) == []


def test_busy_is_not_repeated_when_the_reason_is_known() -> None:
    assert rules(with_(busy=True, mounts=(("sdz", "/mnt"),)), overwrite=True) == ["mounted"]
    assert rules(with_(busy=True, swaps=("sdz",)), overwrite=True) == ["swap"]


def test_non_member_signature_on_partition_is_not_a_member() -> None:
    assert not Signature("sdz1", "swap", "0xff6", usage="other").is_member
    assert Signature("sdz1", "LVM2_member").is_member


def test_format_refusals() -> None:
    one = (Refusal("mounted", "m1", "h1"),)
    assert format_refusals(one) == ("m1", "h1")
    two = (*one, Refusal("swap", "m2", "h1"))
    message, hint = format_refusals(two)
    assert message == "refusing to write to the device:\n  - m1\n  - m2"
    assert hint == "h1"


def test_mounts_from_mountinfo_matches_device_numbers_and_unescapes() -> None:
    mountinfo = "\n".join(
        [
            "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
            r"42 22 259:3 / /mnt/my\040disk rw,relatime - ext4 /dev/disk/by-id/x-part1 rw",
            "43 22 7:1 / /other rw - ext4 /dev/loop1 rw",
        ]
    )
    found = mounts_from_mountinfo(mountinfo, {"7:0": "loop0", "259:3": "loop0p1"})
    assert found == [("loop0p1", "/mnt/my disk")]


# --- reading signatures when tools or the device fail --------------------------------------


@pytest.mark.root
def test_signatures_fall_back_to_blkid_without_wipefs(
    scratch: Scratch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blkid = shutil.which("blkid", path=SBIN_PATH)
    assert blkid is not None
    dev = scratch.loop()
    scratch.mkfs(dev)
    tools = tmp_path / "only-blkid"
    tools.mkdir()
    (tools / "blkid").symlink_to(blkid)
    monkeypatch.setenv("PATH", str(tools))
    monkeypatch.setattr(host_module, "_EXTRA_PATH", ())
    found, reason = signatures_of(dev, Path(dev).name)
    assert reason is None
    assert [(s.type, s.usage) for s in found] == [("ext4", "filesystem")]
    err = refused(resolve_target(dev), destructive=True, overwrite_signatures=False)
    assert "ext4 (UUID " in err.message


@pytest.mark.root
def test_unreadable_device_is_refused_not_assumed_blank(tmp_path: Path) -> None:
    # blkid -p exits 2 ("nothing found") also when it cannot open the device: never trust that.
    if os.geteuid() != 0:
        pytest.skip("needs root: creates a device node")
    # Major 240 is reserved for local use and has no driver here (a loop major would not do:
    # opening /dev/loopN creates loopN).
    assert " 240 " not in Path("/proc/devices").read_text()
    node = tmp_path / "ghost"
    os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(240, 7))
    found, reason = signatures_of(str(node), "ghost")
    assert found == []
    assert reason is not None and reason.startswith(f"cannot read {node} to look for signatures")
    target = resolve_target(str(node))
    assert (target.kind, target.size_bytes) == ("block", None)
    err = refused(target, destructive=True, overwrite_signatures=True)
    assert err.message == f"could not prove that {node} is unused: {node}: not in /sys/dev/block"
