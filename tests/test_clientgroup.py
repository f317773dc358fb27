"""One fio client for many servers (issue 27, point 2): what comes back is told apart per
server (iobench.fio.clientgroup). Pure: a recorded report of fio's client with two servers,
and the texts fio's client writes. The real thing, with fio servers in namespaces, is
tests/test_clients_group.py."""

from __future__ import annotations

import socket
import struct
from pathlib import Path

import pytest

from iobench.fio.clientgroup import (
    CLIENT_CLOCK,
    ClientJob,
    _address,
    group_argv,
    lines_about,
    logs_by_client,
    split_output,
)
from iobench.fio.confine import SPOOL_BYTES, spool_bytes
from iobench.fio.logs import job_number, parse_interval_logs
from iobench.fio.parse import ALL_CLIENTS, parse_fio_output

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"


def job(key: str, host: str, port: int, tag: str, sections: str = "[csjob]") -> ClientJob:
    return ClientJob(key, host, port, tag, f"[global]\nsize=8M\n{sections}\nrw=randread\n")


def test_each_server_gets_only_its_own_entries_of_a_report() -> None:
    """fio's client with two servers on one host (two ports): each share holds that
    connection's job and disk entries, never the other's, nor fio's "All clients" sum
    (which fio attaches to whichever server reported last)."""
    raw = (RECORDED / "client-server-2-jsonplus.json").read_text()
    jobs = [job("a", "127.0.0.1", 42717, "c1"), job("b", "127.0.0.1", 46639, "c2")]
    shares = split_output(raw, jobs)
    whole = parse_fio_output(raw)
    for j in jobs:
        text = shares[j.key].text
        own = parse_fio_output(text, source=j.key)
        assert [(e.jobname, e.port) for e in own.jobs] == [("csjob", j.port)]
        (same,) = [e for e in whole.jobs if e.port == j.port and e.jobname != ALL_CLIENTS]
        assert own.jobs[0].read == same.read  # the very figures
        assert f'"port": {j.port}' in text
        other = 46639 if j.port == 42717 else 42717
        assert f'"port": {other}' not in text
    assert shares["a"].text != shares["b"].text


def test_a_server_with_no_entry_gets_a_report_without_jobs() -> None:
    """A server that hung up (or never answered) has nothing in the report: its share is
    a report without jobs, which check_run calls 0 bytes moved."""
    raw = (RECORDED / "client-server-2-jsonplus.json").read_text()
    gone = job("gone", "10.0.0.9", 8765, "c3")
    share = split_output(raw, [job("a", "127.0.0.1", 42717, "c1"), gone])["gone"]
    assert parse_fio_output(share.text).jobs == ()


def test_no_report_at_all_leaves_each_server_its_lines() -> None:
    said = "fio: connect: Connection refused\nfio: failed to connect to 10.0.0.3:8765\n"
    err = "fio: client 10.0.0.2, timeout on cmd PROBE\nfio: client 10.0.0.2 timed out\n"
    jobs = [job("a", "10.0.0.2", 8765, "c1"), job("b", "10.0.0.3", 8765, "c2")]
    shares = split_output(said, jobs, "", err)
    assert shares["a"].text == "" and shares["a"].stderr == err.rstrip("\n")
    assert shares["b"].text == "fio: failed to connect to 10.0.0.3:8765\n"
    assert shares["b"].stderr == ""


TEXT = """\
<node1> rr.c1: (g=0): rw=randread, bs=(R) 4096B-4096B, ioengine=psync, iodepth=1
<node2> rr.c2: (g=0): rw=randread, bs=(R) 4096B-4096B, ioengine=psync, iodepth=1
<node20> rr.c3: (g=0): rw=randread, bs=(R) 4096B-4096B, ioengine=psync, iodepth=1
hostname=node1, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1
hostname=node2, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.32, flags=1
<node1> fio: io_u error on file /mnt/x: Invalid argument: read offset=0, buflen=4096
<node20> fio: pid=7, err=5/file:io_u.c:1876, func=io_u error, error=Input/output error
client: host=10.0.0.2 disconnected
fio: open log /outside/abs_bw.1.log.10.0.0.2: Permission denied
fio: fopen log ../dotdot_lat.1.log.10.0.0.2 : Permission denied
fio: failed to connect to 10.0.0.20:8765
client <10.0.0.2>: exited with error 1
fio: client 10.0.0.2, timeout on cmd SEND_ETA
"""


SERVERS = [("10.0.0.2", "c1"), ("10.0.0.3", "c2"), ("10.0.0.20", "c3")]


@pytest.mark.parametrize(
    ("host", "tag", "kept"),
    [
        (
            "10.0.0.2",
            "c1",
            [
                "<node1> rr.c1: (g=0)",
                "hostname=node1, ",
                "<node1> fio: io_u error",
                "client: host=10.0.0.2 disconnected",
                "abs_bw.1.log.10.0.0.2: Permission denied",
                "dotdot_lat.1.log.10.0.0.2 : Permission denied",
                "client <10.0.0.2>: exited",
                "fio: client 10.0.0.2, timeout",
            ],
        ),
        (
            "10.0.0.20",
            "c3",
            ["<node20> rr.c3: (g=0)", "<node20> fio: pid=7", "failed to connect to 10.0.0.20:8765"],
        ),
        ("10.0.0.3", "c2", ["<node2> rr.c2: (g=0)", "hostname=node2, "]),
    ],
)
def test_the_lines_about_a_server_are_its_own(host: str, tag: str, kept: list[str]) -> None:
    """A line is a server's when it names its host (10.0.0.2 is not 10.0.0.20), or when
    the server sent it under the name it gave itself about its own job section. (A group
    of one server takes every line: all are about it.)"""
    jobs = [job(h, h, 8765, t, f"[rr.{t}]") for h, t in SERVERS]
    share = split_output(TEXT, jobs, stdout=TEXT)[host]
    assert share.names == {kept[0][1:].split(">")[0]}  # the name its server gave itself
    assert share.stdout == share.text.rstrip("\n")  # its lines of fio's stdout alike
    lines = share.text.splitlines()
    assert len(lines) == len(kept), share.text
    for line, start in zip(lines, kept, strict=True):
        assert start in line
    (alone,) = split_output(TEXT, [jobs[0]]).values()
    assert alone.text == TEXT.rstrip("\n") + "\n"


def test_a_section_every_server_shares_names_no_server() -> None:
    """The layout's and cleanup's job sections are called alike on every server: a line
    about one of them says nothing about whose it is."""
    text = "<node1> layout: (g=0): rw=write\n<node2> layout: (g=0): rw=write\n<node2> fio: ENOSPC\n"
    jobs = [
        job("a", "10.0.0.2", 8765, "c1", "[layout]"),
        job("b", "10.0.0.3", 8765, "c2", "[layout]"),
    ]
    shares = split_output(text, jobs)
    assert shares["a"].text == shares["b"].text == ""
    assert shares["a"].names == shares["b"].names == frozenset()
    alone = split_output(text, jobs[1:])["b"]
    assert alone.names == {"node1", "node2"}  # alone, both lines are about its section


def test_lines_about_quotes_only_whole_names() -> None:
    j = job("n", "node1", 8765, "c1")
    text = (
        "client: host=node1 disconnected\nclient: host=node10 disconnected\nclient: host=a.node1 x"
    )
    assert lines_about(text, j, ()) == "client: host=node1 disconnected"


def test_two_servers_on_one_host_keep_their_own_logs() -> None:
    """fio's client names a log ``<name>.<host>``: two servers on one host (two ports) are
    told apart by their job files' prefixes; a log named for another server's job but
    sent from another host is not that server's."""
    logs = {
        "iobench-c1_bw.1.log.10.0.0.2": "1000, 400, 0, 4096, 0\n",
        "iobench-c2_bw.1.log.10.0.0.2": "1000, 800, 0, 4096, 0\n",
        "iobench-c1_bw.1.log.10.0.0.3": "1000, 999, 0, 4096, 0\n",  # another host's, as c1
        "iobench-c12_bw.1.log.10.0.0.2": "1000, 1, 0, 4096, 0\n",  # no client c12
        "x-c1_bw.1.log.10.0.0.2": "1000, 1, 0, 4096, 0\n",  # not iobench's name
    }
    found = logs_by_client(
        logs, [job("a", "10.0.0.2", 8765, "c1"), job("b", "10.0.0.2", 8766, "c2")]
    )
    one, two = found["a"], found["b"]
    assert list(one) == ["iobench-c1_bw.1.log.10.0.0.2"]
    assert list(two) == ["iobench-c2_bw.1.log.10.0.0.2"]
    assert job_number("iobench-c2_bw.1.log.10.0.0.2") == 1
    samples = parse_interval_logs({**one, "iobench-c1_iops.1.log.10.0.0.2": "1000, 5, 0, 0, 0\n"})
    assert samples is not None and samples["read"]["bw_bytes"] == [400 * 1024]


def test_the_command_line_gives_each_server_its_own_job_file() -> None:
    a, b = job("a", "10.0.0.2", 8765, "c1"), job("[fd00::5]:9000", "fd00::5", 9000, "c2")
    argv = group_argv("fio", "step.json", [(a, "s.c1.fio"), (b, "s.c2.fio")], readonly=True,
                      formats="json+")  # fmt: skip
    assert argv == [
        "fio", "--output-format=json+", "--output=step.json", "--clocksource=clock_gettime",
        "--client=10.0.0.2,8765", "s.c1.fio", "--readonly",
        "--client=fd00::5,9000", "s.c2.fio", "--readonly",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("servers", "together", "own_clock"),
    [(2, False, True), (1, True, True), (2, True, False), (16, True, False)],
)
def test_fio_clients_clock_is_its_own_unless_several_servers_must_start_together(
    servers: int, together: bool, own_clock: bool
) -> None:
    """The clock source goes before the first --client (after it, it would be a server's
    job option); left out, several servers of a step all wait fio's same second."""
    jobs = [(job(f"h{i}", f"10.0.0.{i + 2}", 8765, f"c{i + 1}"), f"s.c{i + 1}.fio")
            for i in range(servers)]  # fmt: skip
    argv = group_argv("fio", "s.json", jobs, readonly=False, formats="json+", together=together)
    assert (CLIENT_CLOCK in argv) is own_clock
    if own_clock:
        assert argv.index(CLIENT_CLOCK) < min(
            i for i, a in enumerate(argv) if a.startswith("--client=")
        )
    assert [a for a in argv if a.startswith("--client=")] == [
        f"--client=10.0.0.{i + 2},8765" for i in range(servers)
    ]


def _proc_hex(address: str) -> str:
    """An address as /proc/net/tcp{,6} writes it: 32-bit words in this host's order."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    packed = socket.inet_pton(family, address)
    return "".join(
        f"{struct.unpack('=I', packed[i : i + 4])[0]:08X}" for i in range(0, len(packed), 4)
    )


@pytest.mark.parametrize(
    ("address", "shown"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("10.213.7.2", "10.213.7.2"),
        ("::1", "::1"),
        ("fd00::13", "fd00::13"),
        ("::ffff:10.0.0.5", "10.0.0.5"),  # a v4 server reached over a v6 socket
    ],
)
def test_fios_connections_are_read_as_addresses(address: str, shown: str) -> None:
    assert _address(_proc_hex(address)) == shown


def test_a_group_may_write_more_the_more_servers_it_has() -> None:
    one = spool_bytes(3, 1)
    assert one == spool_bytes(3, 1, 1) >= SPOOL_BYTES
    assert spool_bytes(3, 1, 16) > one
    # each further server adds room for its report and logs, not another 64 MiB
    assert spool_bytes(3, 1, 1000) - spool_bytes(3, 1, 999) < 2 << 20
