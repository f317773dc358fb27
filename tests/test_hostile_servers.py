"""What a hostile fio server can make the controller hold (issue 22, points 4 and 5, with
other messages than the issue's): a real fio server behind a man in the middle that sends
fio's client messages of its own (tests/hostile_server.py), on loopback. iobench's memory
and what it prints stay small whatever the server sends, and fio's client cannot be made to
hold gigabytes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hostile_server import HostileServer, text, zlib_bomb

pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (fio's client runs as nobody)"),
]


@pytest.fixture
def fio_server(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A real fio server on a free port of 127.0.0.1."""
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]
    server = subprocess.Popen(
        ["fio", f"--server=ip:127.0.0.1,{port}"], cwd=tmp_path, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.05)
        yield ("127.0.0.1", port)
    finally:
        os.killpg(server.pid, 9)
        server.wait()


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _check(
    tmp_path: Path, upstream: tuple[str, int], inject: Callable[[], Iterator[bytes]]
) -> tuple[dict[str, object], str, int, int, int]:
    """`iobench clients check --json` of the hostile server: its verdict, stderr, the most
    memory iobench and fio's client held (kB), and how many bytes it printed."""
    hostile = HostileServer(upstream, inject)
    out, said = tmp_path / "out", tmp_path / "err"
    try:
        with out.open("wb") as f, said.open("wb") as e:
            proc = subprocess.Popen(
                [sys.executable, "-m", "iobench", "clients", "check", f"127.0.0.1:{hostile.port}",
                 "--json"],
                stdout=f, stderr=e,
            )  # fmt: skip
            ours = theirs = 0
            while proc.poll() is None:
                ours = max(ours, _rss_kb(proc.pid))
                for line in Path("/proc").glob("[0-9]*/cmdline"):
                    try:
                        if b"--client=127.0.0.1" in line.read_bytes():
                            theirs = max(theirs, _rss_kb(int(line.parent.name)))
                    except OSError:
                        continue
                time.sleep(0.05)
    finally:
        hostile.close()
    (verdict,) = json.loads(out.read_text())["clients"]
    return verdict, said.read_text(), ours, theirs, out.stat().st_size


def test_a_server_that_floods_text_makes_iobench_hold_and_print_little(
    tmp_path: Path, fio_server: tuple[str, int]
) -> None:
    """160 MiB of text in lines of 1000 bytes: fio's client writes it into its output file
    (64 MiB of spool), which iobench read whole and copied over and over (290 MB resident)."""
    line = b"".join(text(b"x" * 975 + b"\n"))
    verdict, err, ours, _, printed = _check(tmp_path, fio_server, lambda: iter([line * 1024] * 160))
    assert verdict["ok"] is False, verdict
    assert ours < 150_000, f"iobench held {ours} kB"
    assert printed < 8192
    assert "did not run the test job" in str(verdict["problem"]) and not err


def test_a_server_that_sends_one_line_of_a_hundred_mib_is_quoted_short(
    tmp_path: Path, fio_server: tuple[str, int]
) -> None:
    """One line of 100 MiB (fio's client prints what it can hold of it): the check's message
    quoted it whole (64 MiB on the terminal, or in the JSON)."""
    verdict, _, ours, theirs, printed = _check(
        tmp_path, fio_server, lambda: text(b"y" * (100 << 20) + b"\n")
    )
    assert ours < 150_000 and printed < 8192, (ours, printed)
    assert theirs < (64 + 512 + 200) << 10, f"fio's client held {theirs} kB"
    if verdict["ok"] is False:
        assert "more characters)" in str(verdict["problem"]) or "[...]" in str(verdict["problem"])


def test_a_log_that_inflates_to_gigabytes_is_not_held_by_fios_client(
    tmp_path: Path, fio_server: tuple[str, int]
) -> None:
    """A compressed log of about 1.5 MiB that inflates to 1.5 GiB: fio's client allocated
    and filled it (1.29 GB resident); its memory is now bounded, and the check fails,
    saying why."""
    verdict, _, ours, theirs, _ = _check(tmp_path, fio_server, lambda: zlib_bomb(1536 << 20))
    assert theirs < (64 + 512 + 200) << 10, f"fio's client held {theirs} kB"
    assert ours < 150_000
    assert verdict["ok"] is False
    assert "fio's client died of signal" in str(verdict["problem"]) or verdict["problem"]


@pytest.mark.parametrize(
    "inject",
    [
        pytest.param(lambda: zlib_bomb(1536 << 20), id="a log inflating to 1.5 GiB"),
        pytest.param(
            lambda: iter([b"".join(text(b"z" * 999 + b"\n")) * 1024] * 80), id="80 MiB of text"
        ),
    ],
)
def test_a_hostile_server_among_honest_ones_fails_the_check_alone(
    tmp_path: Path, fio_server: tuple[str, int], inject: Callable[[], Iterator[bytes]]
) -> None:
    """The check's probe jobs run from one fio client; what the hostile server sends makes
    that client fail (past its memory bound, or its bound on what it writes), and with it
    the honest server's report. Each client that failed among others is checked again
    alone: the honest one passes, the hostile one is named with its own reason."""
    hostile = HostileServer(fio_server, inject)
    honest = f"127.0.0.1:{fio_server[1]}"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "iobench", "clients", "check",
             f"127.0.0.1:{hostile.port},{honest}", "--json"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    finally:
        hostile.close()
    assert done.returncode == 1, done.stderr
    verdicts = {v["client"]: v for v in json.loads(done.stdout)["clients"]}
    assert verdicts[honest]["ok"] is True, verdicts[honest]
    assert verdicts[honest]["problem"] is None and verdicts[honest]["fio_version"]
    bad = verdicts[f"127.0.0.1:{hostile.port}"]
    assert bad["ok"] is False and bad["problem"], bad
    assert len(done.stdout) < 8192
