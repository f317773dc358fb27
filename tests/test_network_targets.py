"""NBD exports and Ceph RBD images as targets (docs/targets.md): real nbdkit servers and a
real one-node Ceph (tests/netstore.py), reached by fio's own nbd and rbd engines.

The refusals are checked with ``doctor`` where fio need not run (it exits as ``run`` would
refuse); what fio measures is checked with ``run`` on capped storage, with tolerances that
hold on a busy 2-CPU machine."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from conftest import MINI_SUITE, Cli
from hosts import FioHosts, why_no_netns
from netstore import CephCluster, NbdServer, start_ceph

NbdFactory = Callable[..., NbdServer]
Said = Callable[..., tuple[int, str]]

# conftest's read and write, through libaio: the target's engine replaces it (said).
SUITE = MINI_SUITE.replace('bs = "4k"\n', 'bs = "4k"\nioengine = "libaio"\n')

READS = """\
name = "reads"
description = "reads only"
[defaults]
runtime = "2s"
size = "4M"
numjobs = 1
[[workload]]
name = "seq-read"
rw = "read"
bs = "64k"
iodepth = 2
"""


@pytest.fixture
def suite(tmp_path: Path) -> str:
    path = tmp_path / "net.toml"
    path.write_text(SUITE)
    return str(path)


@pytest.fixture
def reads(tmp_path: Path) -> str:
    path = tmp_path / "reads.toml"
    path.write_text(READS)
    return str(path)


def _doc(out: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(out)
    return doc


@pytest.fixture
def said(cli: Cli) -> Callable[..., tuple[int, str]]:
    """The CLI's exit code and all it printed (doctor says a refusal on stdout)."""

    def run(*args: str) -> tuple[int, str]:
        code, out, err = cli(*args)
        return code, out + err

    return run


def _job_files(cli: Cli) -> list[str]:
    """The job files of the latest run, as stored."""
    code, out, err = cli("export", "latest", "--format", "json")
    assert code == 0, err
    return [r["job_file"] for r in _doc(out)["results"]]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ids(doc: dict[str, Any]) -> set[str]:
    return {w["id"] for w in doc.get("warnings") or doc.get("findings") or []}


# -- NBD ------------------------------------------------------------------------------------


def test_a_suite_runs_on_an_nbd_export_through_fio_s_nbd_engine(
    real_fio: str, cli: Cli, nbd_server_factory: NbdFactory, suite: str
) -> None:
    server = nbd_server_factory(size="16M")
    code, out, err = cli("run", server.uri, "--suite", suite, "--destructive", "--json")
    assert code == 0, err
    doc = _doc(out)
    (target,) = doc["targets"]
    assert (target["kind"], target["size_bytes"]) == ("nbd", 16 << 20)
    assert target["context"]["nbd"]["size_bytes"] == 16 << 20
    for result in doc["results"]:
        assert result["read" if result["workload"] == "rr" else "write"]["iops"] > 0
    for job in _job_files(cli):
        assert "ioengine=nbd" in job and f"uri={server.uri}" in job.splitlines()
        assert "ioengine=libaio" not in job and "filename=" not in job
    ids = _ids(doc)
    assert {"engine-replaced", "served-here"} <= ids


def test_writing_an_nbd_export_needs_destructive_and_a_writable_export(
    cli: Cli, said: Said, nbd_server_factory: NbdFactory, suite: str, reads: str
) -> None:
    server = nbd_server_factory(size="8M")
    code, err = said("doctor", server.uri, "--suite", suite)
    assert code == 3 and "--destructive" in err and "rw" in err
    ro = nbd_server_factory(size="8M", readonly=True)
    code, err = said("doctor", ro.uri, "--suite", suite, "--destructive")
    assert code == 3 and "read-only" in err, err
    code, err = said("doctor", ro.uri, "--suite", reads)  # reading it is fine
    assert code == 0, err


@pytest.mark.parametrize("form", ["tcp", "unix"])
def test_an_nbd_export_is_shown_by_info_and_doctor_in_each_form(
    cli: Cli, nbd_server_factory: NbdFactory, reads: str, form: str
) -> None:
    server = nbd_server_factory(size="12M", unix=form == "unix", export_name="bench")
    code, out, err = cli("info", server.uri, "--json")
    assert code == 0, err
    target = _doc(out)["target"]
    assert (target["kind"], target["size_bytes"]) == ("nbd", 12 << 20)
    code, out, err = cli("info", server.uri)
    assert code == 0 and "nbd, 12 MiB" in out and "writable" in out, out
    code, out, err = cli("doctor", server.uri, "--suite", reads, "--json")
    assert code == 0, err
    (job,) = [j["job_file"] for j in _doc(out)["jobs"] if j["workload"] == "seq-read"]
    assert "ioengine=nbd" in job and f"uri={server.uri}" in job.splitlines()


def test_an_nbd_server_that_does_not_answer_is_said_within_seconds(said: Said, reads: str) -> None:
    for uri in (f"nbd://127.0.0.1:{_free_port()}/x", "nbd+unix:///x?socket=/nonexistent.sock"):
        started = time.monotonic()
        code, err = said("doctor", uri, "--suite", reads)
        assert code == 2, err
        assert time.monotonic() - started < 10
        assert uri.split("/")[2].split("?")[0] in err or "socket" in err, err
        assert "Traceback" not in err


def test_a_capped_nbd_export_reads_at_its_rate(
    real_fio: str, cli: Cli, nbd_server_factory: NbdFactory, reads: str
) -> None:
    # nbdkit's rate filter counts bits: 16 Mbit/s is 2,000,000 bytes/s.
    server = nbd_server_factory(size="16M", rate_bits=16_000_000, burstiness=0.1)
    code, out, err = cli("run", server.uri, "--suite", reads, "--json")
    assert code == 0, err
    (result,) = _doc(out)["results"]
    bw = result["read"]["bw_bytes"]
    assert 0.85 * 2_000_000 <= bw <= 1.10 * 2_000_000, bw


def test_reading_a_thin_export_before_it_is_written_is_said(
    cli: Cli, nbd_server_factory: NbdFactory, reads: str
) -> None:
    server = nbd_server_factory(size="8M")  # nbdkit's memory: all of it a hole
    code, out, err = cli("doctor", server.uri, "--suite", reads, "--json")
    assert code == 0, err
    assert "unwritten-read" in _ids(_doc(out))
    code, out, err = cli(
        "doctor", server.uri, "--suite", reads, "--prefill", "--destructive", "--json"
    )
    assert code == 0, err
    assert "unwritten-read" not in _ids(_doc(out))


# -- RBD ------------------------------------------------------------------------------------


@pytest.fixture
def image(ceph_cluster: CephCluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh 32 MiB image of this test's own, removed afterwards: ``rbd:rbd/NAME``."""
    name = f"t-{request.node.name[:40].replace('[', '-').replace(']', '')}-{time.time_ns() % 10**6}"
    ceph_cluster.create_image(name, size="32M")
    yield f"rbd:rbd/{name}"
    ceph_cluster.remove_image(name)


def _conf(cluster: CephCluster) -> list[str]:
    return ["--ceph-conf", str(cluster.conf)]


def test_a_suite_runs_on_an_rbd_image_and_no_key_is_stored(
    real_fio: str, cli: Cli, ceph_cluster: CephCluster, image: str, suite: str, isolated_db: Path
) -> None:
    code, out, err = cli(
        "run", image, "--suite", suite, "--destructive", *_conf(ceph_cluster), "--json"
    )
    assert code == 0, err
    doc = _doc(out)
    (target,) = doc["targets"]
    assert (target["kind"], target["size_bytes"]) == ("rbd", 32 << 20)
    rbd = target["context"]["rbd"]
    assert rbd["cluster"]["fsid"] == ceph_cluster.fsid
    pool, name = image[4:].split("/")
    for job in _job_files(cli):
        assert {"ioengine=rbd", f"pool={pool}", f"rbdname={name}"} <= set(job.splitlines())
    key = next(
        line.split("=", 1)[1].strip()
        for line in Path(ceph_cluster.keyring).read_text().splitlines()
        if line.strip().startswith("key")
    )
    for path in isolated_db.parent.glob("iobench.db*"):
        assert key.encode() not in path.read_bytes()
    assert key not in out


def test_an_rbd_image_in_use_or_with_clones_or_data_is_refused_for_writing(
    cli: Cli, said: Said, ceph_cluster: CephCluster, image: str, suite: str, tmp_path: Path
) -> None:
    conf = _conf(ceph_cluster)
    code, err = said("doctor", image, "--suite", suite, *conf)
    assert code == 3 and "--destructive" in err
    pool, name = image[4:].split("/")
    with ceph_cluster.watching(name, pool):
        code, err = said("doctor", image, "--suite", suite, "--destructive", *conf)
        assert code == 3 and "open by another client" in err, err
    ceph_cluster.rbd("snap", "create", f"{pool}/{name}@base")
    ceph_cluster.rbd("snap", "protect", f"{pool}/{name}@base")
    ceph_cluster.rbd("clone", f"{pool}/{name}@base", f"{pool}/{name}-clone")
    try:
        code, err = said("doctor", image, "--suite", suite, "--destructive", *conf)
        assert code == 3 and "clone" in err, err
    finally:
        ceph_cluster.rbd("rm", f"{pool}/{name}-clone")
        ceph_cluster.rbd("snap", "unprotect", f"{pool}/{name}@base")
        ceph_cluster.rbd("snap", "rm", f"{pool}/{name}@base")
    fs = tmp_path / "fs.img"
    fs.write_bytes(b"\0" * (8 << 20))
    subprocess.run(["mkfs.ext4", "-q", "-F", str(fs)], check=True)
    ceph_cluster.rbd("import", str(fs), f"{pool}/{name}-fs")
    try:
        other = f"rbd:{pool}/{name}-fs"
        code, err = said("doctor", other, "--suite", suite, "--destructive", *conf)
        assert code == 3 and "ext4" in err, err
        code, err = said(
            "doctor", other, "--suite", suite, "--destructive", "--overwrite-signatures", *conf
        )
        assert code == 0, err
    finally:
        ceph_cluster.rbd("rm", f"{pool}/{name}-fs")


def test_an_unreachable_cluster_or_a_missing_image_is_said_within_seconds(
    said: Said, ceph_cluster: CephCluster, image: str, reads: str, tmp_path: Path
) -> None:
    nowhere = tmp_path / "nowhere.conf"
    nowhere.write_text(
        ceph_cluster.conf.read_text().replace(ceph_cluster.mon_host, f"127.0.0.1:{_free_port()}")
    )
    cases = [
        (image, ["--ceph-conf", str(nowhere)], "monitor"),
        (image, ["--ceph-conf", str(tmp_path / "missing.conf")], "missing.conf"),
        ("rbd:rbd/no-such-image", _conf(ceph_cluster), "no-such-image"),
        ("rbd:no-such-pool/x", _conf(ceph_cluster), "no-such-pool"),
        (image, [*_conf(ceph_cluster), "--ceph-user", "nobody"], "nobody"),
    ]
    for target, options, named in cases:
        started = time.monotonic()
        code, err = said("doctor", target, "--suite", reads, *options)
        elapsed = time.monotonic() - started
        assert code == 2, (target, options, err)
        assert named in err, err
        assert elapsed < 10, (options, elapsed)
        assert "Traceback" not in err


def test_an_rbd_image_s_qos_limit_is_what_fio_finds_and_is_said(
    real_fio: str, cli: Cli, ceph_cluster: CephCluster, image: str, tmp_path: Path
) -> None:
    pool, name = image[4:].split("/")
    ceph_cluster.rbd("config", "image", "set", f"{pool}/{name}", "rbd_qos_iops_limit", "400")
    suite = tmp_path / "rr.toml"
    suite.write_text(
        READS.replace('rw = "read"', 'rw = "randread"')
        .replace('"64k"', '"4k"')
        .replace("iodepth = 2", "iodepth = 8")
    )
    code, out, err = cli(
        "run",
        image,
        "--suite",
        str(suite),
        "--prefill",
        "--destructive",
        *_conf(ceph_cluster),
        "--json",
    )
    assert code == 0, err
    doc = _doc(out)
    (result,) = doc["results"]
    iops = result["read"]["iops"]
    assert 0.85 * 400 <= iops <= 1.10 * 400, iops
    assert "qos-limited" in _ids(doc)
    assert "unwritten-read" not in _ids(doc)  # --prefill wrote the area first


def test_a_job_file_for_fio_s_rbd_engine_runs_on_the_target_named_not_on_its_own(
    cli: Cli, said: Said, ceph_cluster: CephCluster, image: str, tmp_path: Path
) -> None:
    job = tmp_path / "theirs.fio"
    job.write_text(
        "[global]\nioengine=rbd\nclientname=admin\npool=production\nrbdname=vm-disk-1\n"
        "runtime=1\nsize=4m\n[rr]\nrw=randread\nbs=4k\n"
    )
    code, out, err = cli("doctor", image, "--suite", str(job), *_conf(ceph_cluster), "--json")
    assert code == 0, err
    doc = _doc(out)
    pool, name = image[4:].split("/")
    (ran,) = [j["job_file"] for j in doc["jobs"] if j["workload"] == "rr"]
    assert f"pool={pool}" in ran.splitlines() and f"rbdname={name}" in ran.splitlines()
    assert "production" not in ran and "vm-disk-1" not in ran
    code, err = said("doctor", str(tmp_path), "--suite", str(job))
    assert code == 2 and "rbd" in err and "RBD image" in err, err


def test_two_clients_each_write_their_own_rbd_image_over_the_network(
    real_fio: str, cli: Cli, tmp_path_factory: pytest.TempPathFactory, suite: str
) -> None:
    """Namespace hosts with fio servers reach a cluster bound to their bridge: each client
    writes the image ``{client}`` names for it, and the aggregate is stored beside them."""
    if why := why_no_netns():
        pytest.skip(why)
    with ExitStack() as stack:
        hosts = FioHosts(tmp_path_factory.mktemp("hosts"), 2, stack, start=False)
        cluster = stack.enter_context(
            start_ceph(tmp_path_factory.mktemp("ceph-bridge"), address=hosts.gateway)
        )
        for host in hosts.hosts:
            host.env = cluster.env()  # a fio server reads its own Ceph configuration
            cluster.create_image(f"bench-{host.address}", size="16M")
        hosts.ensure_running()
        names = ",".join(h.name for h in hosts.hosts)
        code, out, err = cli(
            "run", "rbd:rbd/bench-{client}", "--clients", names, "--suite", suite,
            "--destructive", "--ceph-conf", str(cluster.conf), "--json",
        )  # fmt: skip
        assert code == 0, err
        doc = _doc(out)
        by_client = {r["client"] for r in doc["results"]}
        assert by_client == {*(h.name for h in hosts.hosts), "all"}
        for host in hosts.hosts:
            used = json.loads(cluster.rbd("du", "--format", "json", f"rbd/bench-{host.address}"))
            assert used["images"][0]["used_size"] > 0, f"{host.name} wrote its own image"
        jobs = _job_files(cli)
        for host in hosts.hosts:
            assert any(f"rbdname=bench-{host.address}" in j.splitlines() for j in jobs)
        code, err2 = cli("run", "rbd:rbd/bench-shared", "--clients", names, "--suite", suite,
                         "--destructive", "--ceph-conf", str(cluster.conf))[::2]  # fmt: skip
        assert code == 2 and "{client}" in err2, err2


@pytest.mark.parametrize(
    ("target", "clients", "said"),
    [
        ("rbd:rbd/shared", "node1,node2", "every client would write to rbd:rbd/shared"),
        ("nbd://10.0.0.9/shared", "node1,node2", "every client would write to nbd://"),
        ("rbd:rbd/b-{client}", "node1:8765,node1:8766", "clients node1:8765, node1:8766"),
    ],
)
def test_clients_never_write_one_network_storage_together(
    tmp_path: Path, suite: str, target: str, clients: str, said: str
) -> None:
    """Refused before any server or cluster is asked (nothing listens at these names)."""
    from iobench.clients import parse_clients
    from iobench.engine import RunRequest
    from iobench.engine.remote import _network
    from iobench.errors import UserError
    from iobench.suites import load_suite

    request = RunRequest(
        (target,), load_suite(suite), destructive=True, clients=tuple(parse_clients(clients))
    )
    with pytest.raises(UserError, match="would write") as e:
        _network(request)
    assert said in e.value.message


def test_a_client_field_without_clients_is_said_before_anything_is_asked(
    said: Said, reads: str
) -> None:
    for target in ("rbd:rbd/bench-{client}", "nbd://10.0.0.9/export-{client}"):
        code, text = said("doctor", target, "--suite", reads)
        assert code == 2 and "{client} names each client's own storage" in text, text
        assert "--clients" in text
