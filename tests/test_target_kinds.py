"""The registry of the kinds of target (issue 25, part 1): each kind claims what it is,
the first that claims a name resolves it, a kind named by a prefix is never looked up as
a path, and what the rest of iobench asks of a kind (its noun, whether iobench makes a
test file in it, what writing to it does, where a finding puts it) comes from the kind."""

from __future__ import annotations

import ast
import contextlib
import errno
import os
import socket
from pathlib import Path
from typing import Any

import pytest

import iobench
from iobench.errors import TargetUnsafe, UserError
from iobench.model import Target
from iobench.probe.context import Storage
from iobench.probe.written import unwritten
from iobench.suites import load_builtin
from iobench.targets import (
    ACCEPTED,
    KINDS,
    Plan,
    Preparation,
    kind_named,
    kind_of,
    resolve_target,
)
from iobench.targets.kind import Named
from scratch import Scratch


def test_every_kind_is_found_by_its_stored_name_and_names_itself() -> None:
    names = [k.name for k in KINDS]
    assert names == ["nbd", "rbd", "directory", "file", "block"]  # prefixes before paths
    assert len(set(names)) == len(names)
    for kind in KINDS:
        assert kind_named(kind.name) is kind
        assert kind.accepts in ACCEPTED
    with pytest.raises(KeyError):
        kind_named("unknown")  # an imported run's target is of no kind


def test_the_accepted_list_says_the_paths_first_then_network_storage() -> None:
    assert ACCEPTED == (
        "accepted targets: a directory (iobench creates a test file in it and removes it "
        "afterwards), an existing regular file, a block device such as /dev/sdb or "
        "/dev/nvme0n1, an NBD export (nbd://HOST[:PORT]/EXPORT, nbds://... or "
        "nbd+unix:///EXPORT?socket=PATH), or a Ceph RBD image (rbd:POOL/IMAGE)"
    )


def test_a_directory_and_a_file_are_claimed_by_their_own_kind(tmp_path: Path) -> None:
    data = tmp_path / "data.bin"
    data.write_bytes(b"x" * 4096)
    link = tmp_path / "link"
    link.symlink_to(data)
    for spec, name, noun, own in (
        (str(tmp_path), "directory", "directory", True),
        (str(data), "file", "file", False),
        (str(link), "file", "file", False),
    ):
        target = resolve_target(spec)
        kind = kind_of(target)
        assert (kind.name, kind.noun, kind.own_file) == (name, noun, own)
        claimed = [k.name for k in KINDS if k.claims(Named(spec, ACCEPTED))]
        assert claimed == [name], spec
    assert kind_of(resolve_target(str(data))).under(str(data)) == f" under {data}"


@pytest.mark.root
def test_a_block_device_is_claimed_by_the_block_kind(scratch: Scratch) -> None:
    loop = scratch.loop(scratch.image(8 << 20))
    target = resolve_target(loop)
    kind = kind_of(target)
    assert (kind.name, kind.noun, kind.own_file) == ("block", "block device", False)
    assert target.size_bytes == 8 << 20
    assert [k.name for k in KINDS if k.claims(Named(loop, ACCEPTED))] == ["block"]
    assert kind.under(loop) == "", "a finding about the device is about the target itself"
    assert kind.loss == "DESTROYS ALL DATA ON IT"


def test_what_no_kind_claims_is_said_with_what_is_accepted(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock))
        for spec, what in ((fifo, "a named pipe (FIFO)"), (sock, "a socket")):
            with pytest.raises(UserError) as e:
                resolve_target(str(spec))
            assert e.value.message == f"{spec} is {what}; iobench cannot benchmark it"
            assert e.value.hint == ACCEPTED


def test_a_kind_named_by_a_prefix_comes_first_and_is_not_looked_up_as_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CEPH_CONF", str(tmp_path / "no-such.conf"))
    Path("rbd:pool", "img").mkdir(parents=True)  # a directory of that name is not meant
    Path("nbd:", "host").mkdir(parents=True)
    with pytest.raises(UserError, match=r"no-such\.conf"):
        resolve_target("rbd:pool/img")  # the RBD kind's: it asks for the cluster
    with pytest.raises(UserError, match="NBD URI"):
        resolve_target("nbd://host/x?tls-psk-file=/etc/shadow")  # refused before any lookup
    assert resolve_target("./rbd:pool/img").path == str(tmp_path / "rbd:pool" / "img")
    assert resolve_target("./nbd:/host").kind == "directory"
    for kind in KINDS:
        assert kind.opened == (kind.engine is None)  # over the network: by its own engine


def test_each_kind_prepares_what_fio_will_use(tmp_path: Path) -> None:
    quick = load_builtin("quick")
    reads = quick.only({w.name for w in quick.workloads if not w.writes})
    data = tmp_path / "data.bin"
    data.write_bytes(b"x" * (1 << 20))
    directory, file = resolve_target(str(tmp_path)), resolve_target(str(data))

    made = kind_of(directory).prepare(directory, Plan(quick))
    assert made.created and Path(made.filename).parent == tmp_path
    assert Path(made.filename).name.startswith(f"iobench-{os.getpid()}-")
    assert (made.layout_bytes, made.size_limit, made.readonly) == (256 << 20, None, False)
    assert not Path(made.filename).exists(), "preparing writes nothing"

    used = kind_of(file).prepare(file, Plan(reads))
    assert used == Preparation(str(data), False, 0, 1 << 20, True)
    filled = kind_of(file).prepare(file, Plan(reads, prefill=True))
    assert filled == Preparation(str(data), False, 1 << 20, 1 << 20, False)


def test_each_kind_checks_what_would_be_written(tmp_path: Path) -> None:
    quick = load_builtin("quick")
    data = tmp_path / "data.bin"
    data.write_bytes(b"x" * (1 << 20))
    file = resolve_target(str(data))
    with pytest.raises(TargetUnsafe) as e:
        kind_of(file).check(file, Plan(quick))
    assert e.value.message == (
        f"{data} is an existing file and the quick suite writes to it (randwrite-4k-qd1, "
        "randwrite-4k-qd32x4, write-256k-qd32x4): its contents would be overwritten"
    )
    kind_of(file).check(file, Plan(quick, destructive=True))
    with pytest.raises(TargetUnsafe, match="iobench's own results database"):
        kind_of(file).check(file, Plan(quick, destructive=True, protected=(str(data),)))
    directory = resolve_target(str(tmp_path))
    kind_of(directory).check(directory, Plan(quick))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.bin"], "checking writes nothing"


@pytest.mark.root
def test_a_block_device_that_will_be_written_is_checked_again_and_claimed(
    scratch: Scratch,
) -> None:
    loop = scratch.loop(scratch.image(8 << 20))
    target, kind = resolve_target(loop), kind_of(resolve_target(loop))
    quick = load_builtin("quick")
    with contextlib.ExitStack() as holds:
        assert kind.claim(target, Plan(quick), readonly=True, holds=holds) is None
        with pytest.raises(TargetUnsafe, match="is a block device and the suite writes to it"):
            kind.claim(target, Plan(quick), readonly=False, holds=holds)
        fd = kind.claim(target, Plan(quick, destructive=True), readonly=False, holds=holds)
        assert fd is not None and os.path.samestat(os.fstat(fd), Path(loop).stat())
        with pytest.raises(OSError) as busy:
            os.close(os.open(loop, os.O_RDONLY | os.O_EXCL))
        assert busy.value.errno == errno.EBUSY, "held exclusively while the run lasts"
    os.close(os.open(loop, os.O_RDONLY | os.O_EXCL))  # released with the holds


def test_a_directory_or_a_file_needs_no_claim(tmp_path: Path) -> None:
    data = tmp_path / "data.bin"
    data.write_bytes(b"x" * 4096)
    quick = load_builtin("quick")
    with contextlib.ExitStack() as holds:
        for spec in (tmp_path, data):
            target = resolve_target(str(spec))
            plan = Plan(quick, destructive=True)
            assert kind_of(target).claim(target, plan, readonly=False, holds=holds) is None


def test_a_file_s_holes_are_found_as_holes_and_a_device_s_unwritten_blocks_as_zeros(
    tmp_path: Path,
) -> None:
    sparse = tmp_path / "sparse.bin"
    with sparse.open("wb") as f:
        f.truncate(8 << 20)
    target = resolve_target(str(sparse))
    kind = kind_of(target)
    assert kind.holes and not kind_named("block").holes and not kind_named("directory").holes
    found = unwritten(str(sparse), 8 << 20, holes=kind.holes)
    assert found is not None and (found.share, found.how) == (1.0, "holes")
    as_device = unwritten(str(sparse), 8 << 20, holes=False)  # what a device's reading sees
    assert as_device is not None and (as_device.share, as_device.how) == (1.0, "zeros")


def test_the_device_under_a_target_is_the_disk_probed_or_the_device_itself(
    tmp_path: Path,
) -> None:
    disk = {"block": {"disks": [{"name": "vdb", "path": "/dev/vdb", "size_bytes": 1 << 30}]}}
    directory = resolve_target(str(tmp_path))
    assert kind_of(directory).device_under(directory, Storage.of(disk)) == (1 << 30, "/dev/vdb")
    assert kind_of(directory).device_under(directory, Storage.of({})) == (None, None)
    device = Target(spec="/dev/sdz", path="/dev/sdz", kind="block", size_bytes=1 << 40)
    assert kind_of(device).device_under(device, Storage.of(disk)) == (1 << 40, "/dev/sdz")
    assert kind_named("block").claimed.startswith("holds the device open with O_EXCL")
    assert kind_named("file").claimed == kind_named("directory").claimed == ""


def test_no_module_outside_targets_compares_a_kind_s_name() -> None:
    """The rest of iobench asks a kind (kind_of, kind_named) and its answers; it never
    branches on a kind's name (`t.kind == "block"`, `kind_named("rbd")`)."""
    names = {k.name for k in KINDS}
    src = Path(iobench.__file__).parent
    found = []
    for path in sorted(src.rglob("*.py")):
        if path.parent.name == "targets":
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            constants: list[ast.expr] = []
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any("kind" in ast.unparse(s) for s in sides):
                    constants = sides
            elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("kind_named"):
                constants = list(node.args)
            for c in constants:
                values = [c] if isinstance(c, ast.Constant) else getattr(c, "elts", [])
                if any(isinstance(v, ast.Constant) and v.value in names for v in values):
                    where = f"{path.relative_to(src)}:{getattr(node, 'lineno', '?')}"
                    found.append(f"{where}: {ast.unparse(node)}")
    assert not found, "\n".join(found)


EC_4_2 = {"k": "4", "m": "2"}


@pytest.mark.parametrize(
    ("pools", "said"),
    [
        ({"pool": {"name": "rbd", "kind": "replicated", "size": 3, "min_size": 2}}, "all 3 copies"),
        ({"pool": {"name": "rbd", "kind": "replicated", "size": 1}}, "its one copy"),
        (
            {
                "pool": {"name": "rbd", "kind": "replicated", "size": 3},
                "data_pool_facts": {
                    "name": "ec",
                    "kind": "erasure",
                    "erasure": {"k": "4", "m": "2"},
                },
            },
            "all 4+2 erasure-coded chunks",
        ),
        ({}, "when the OSDs have written"),  # a context stored without the pool: no crash
    ],
)
def test_an_rbd_image_s_context_says_when_a_write_is_done(pools: dict[str, Any], said: str) -> None:
    ctx = {"rbd": {"size_bytes": 1 << 30, "features": ["layering"], **pools}}
    rbd = kind_named("rbd")
    lines = dict(rbd.describe(ctx, identity=False))
    assert said in lines["a write is done"]
    assert "fsid" not in str(lines) and "served here" not in lines
    local = dict(kind_named("file").describe({}, identity=False))
    assert local["a write is done"] != lines["a write is done"]
    shown = dict(
        rbd.describe({**ctx, "served_here": "127.0.0.1 is this host's own address"}, identity=True)
    )
    assert shown["served here"].startswith("127.0.0.1")
    if "data_pool_facts" in pools:
        assert shown["ceph data pool"].startswith("ec, erasure k=4 m=2")


@pytest.mark.parametrize(
    "odd", [None, [], "x", {"rbd": "x"}, {"rbd": {"pool": 3, "qos": "x"}}, {"nbd": {"flags": [1]}}]
)
def test_a_stored_context_of_any_shape_is_described_without_a_crash(odd: Any) -> None:
    for kind in KINDS:
        for identity in (True, False):
            lines = kind.describe(odd if isinstance(odd, dict) else {}, identity=identity)
            assert all(isinstance(k, str) and isinstance(v, str) for k, v in lines)
