"""Job files from other people's public benchmark repositories (tests/data/jobfiles,
SOURCES.md says where each comes from): iobench runs what fio runs, and refuses only
what is dangerous or impossible, each refusal with its class and line (issue 24)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from iobench.errors import SuiteError
from iobench.fio.language import HostFigures
from iobench.model import Suite
from iobench.suites.loader import parse_job_file

CORPUS = Path(__file__).parent / "data" / "jobfiles"
# A two-CPU host with 24 GiB, as these machines are (the files' $ncpus and $mb_memory).
HOST = HostFigures(ncpus=2, mb_memory=24105, pagesize=4096)

# The environment each template is driven with, as its source sets it.
ENVIRON_TEXT = {
    "07": (
        "DIRECTORY=/testpool/fs RUNTIME=60 SYNC_TYPE=0 DIRECT=0 NUMJOBS=4 RANDSEED=1234 "
        "COMPPERCENT=66 COMPCHUNK=4096"
    ),
    "08": "TESTFS=testpool/fs NUMJOBS=4 FILE_SIZE=256m",
    "19": "unix_socket=/tmp/store_nbd_socket.sock",
    "24": "NRFILES=1 NUMJOBS=8 DIR=gcs/256kb BLOCK_SIZE=256K FILE_SIZE=256K READ_TYPE=read",
    "27": "OUTPUT=benchmark/sdb MODE=randread LOGINTERVAL=1000",
    "28": (
        "CEPH_POOL=rbd TARGET=fio-image MODE=randread BLOCK_SIZE=4k IODEPTH=1 NUMJOBS=1 "
        "DIRECT=1 INVALIDATE=1 LOOPS=1 OUTPUT=benchmark/rbd LOGINTERVAL=1000"
    ),
    "29": "rbd_name=fio_test",
    "39": (
        "directio=1 randomiofilepath=/dev/sdd:/dev/sde:/dev/sdf:/dev/sdg:/dev/sdh "
        "ioengine=libaio groupreporting=1 randomiofilesize=124G randomreadblocksize=8K "
        "randomreadiodepth=512 randomreadnumjobs=1 randomreadiops=270 durationsec=1 "
        "randomwriteblocksize=8K randomwriteiodepth=512 randomwritenumjobs=1 "
        "randomwriteiops=212 sequentialiofilepath=/dev/sdi sequentialreadblocksize=56K "
        "sequentialreadiodepth=64 sequentialreadnumjobs=1 sequentialreadiops=0 "
        "sequentialiofilesize=20G sequentialwriteblocksize=56K sequentialwriteiodepth=64 "
        "sequentialwritenumjobs=1 sequentialwriteiops=16"
    ),
    "41": "F_NAME=/data/myfio IOD=16 RW=read NJ=8 DIRECT=1 BLOCK_SIZE=4k RUN_TIME=60 SIZE=256M",
    "44": "IO_DEPTH=32",
}  # fmt: skip
ENVIRON = {n: dict(v.split("=", 1) for v in text.split()) for n, text in ENVIRON_TEXT.items()}

# The files refused, and why: a hazard class, or what cannot be (fio refuses it too, or
# it asks for what no host has). Every other file loads.
REFUSED: dict[str, tuple[str, ...]] = {
    "12": ("size must be at most 1P",),  # size=9999T: fill the file system, by size
    "13": ("(not I/O to the target)",),  # e4defrag
    "17": ("(runs programs)",),  # a Ceph objectstore engine loaded from a .so
    "18": ("(runs programs)", "unknown option"),  # the same, with the engine's options
    "20": ("(runs programs)", "unknown option", "name must be"),  # [job1]]
    "21": ("(reaches endpoints)", "unknown option"),  # spdk_bdev and its JSON config
    "24": ("fio 3.33 refuses create_serialize",),  # fio itself refuses "false"
    "38": ("(reaches endpoints)",),  # net
    "42": ("(runs programs)",),  # exec_prerun
    "43": ("not online on this host",),  # cpus_allowed=20 on a 2-CPU host
}


def _corpus() -> list[str]:
    return sorted(p.name for p in CORPUS.glob("[0-9][0-9]-*.fio"))


def test_the_corpus_is_the_field_and_says_where_it_comes_from() -> None:
    files = _corpus()
    assert len(files) >= 40
    sources = (CORPUS / "SOURCES.md").read_text()
    for name in files:
        assert name in sources, f"{name} has no source in SOURCES.md"


@pytest.mark.parametrize("name", _corpus())
def test_each_file_loads_or_is_refused_only_for_a_hazard(name: str) -> None:
    path = CORPUS / name
    number = name[:2]
    environ = ENVIRON.get(number, {})

    def load() -> Suite:
        return parse_job_file(path.read_text(), str(path), str(path), environ=environ, host=HOST)

    if number == "43" and len(os.sched_getaffinity(0)) > 20:
        number = "43 on a host with CPU 20"  # it loads there
    if number not in REFUSED:
        suite = load()
        assert suite.workloads, name
        for w in suite.workloads:
            for job in w.jobs:
                assert job.size > 0 and job.bs > 0 and job.runtime_s > 0, (name, job.name)
        return
    with pytest.raises(SuiteError) as info:
        load()
    messages = [p.message for p in info.value.problems]
    for reason in REFUSED[number]:
        assert any(reason in m for m in messages), (reason, messages)
    # every problem is at a line of a file, and is one of the reasons expected
    for p in info.value.problems:
        assert p.line is not None, p.message
        assert any(reason in p.message for reason in REFUSED[number]), p.message
        assert not re.search(r"job #\d", p.message), p.message


@pytest.mark.parametrize(
    ("number", "endpoints"),
    [
        ("19", ('uri="nbd+unix:///?socket=/tmp/store_n',)),
        ("28", ('pool="rbd" (line 4)', 'rbdname="fio-image" (line 5)')),
        ("29", ('clientname="admin" (line 4)', 'pool="rbd" (line 5)', 'rbdname="fio_test"')),
    ],
)
def test_a_job_file_for_fio_s_nbd_or_rbd_engine_loads_and_its_endpoints_give_way(
    number: str, endpoints: tuple[str, ...]
) -> None:
    """ceph's, fio-plot's and CeTune's job files run on the NBD export or RBD image named
    on the command line: the server, pool and image they name are said and never used."""
    (path,) = CORPUS.glob(f"{number}-*")
    suite = parse_job_file(
        path.read_text(), str(path), str(path), environ=ENVIRON.get(number, {}), host=HOST
    )
    engines = {job.ioengine for w in suite.workloads for job in w.jobs}
    assert engines <= {"nbd", "rbd"} and engines
    (said,) = [n.message for n in suite.notes if n.message.startswith("the job file names where")]
    for endpoint in endpoints:
        assert endpoint in said, said
    assert all(key not in dict(job.options) for w in suite.workloads for job in w.jobs
               for key in ("uri", "pool", "rbdname", "clientname"))  # fmt: skip
