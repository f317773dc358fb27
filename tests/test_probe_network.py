"""Probing network targets (issue 25): NBD URIs and RBD names parsed as libnbd, Ceph and fio
read them (hostile variants refused with the reason, or accepted and rendered safely); the
recorded outputs of nbdinfo, rbd and ceph (tests/data/network, see its README) read back; and
live probes of real nbdkit servers and a real one-node Ceph that this module starts itself
(an image with a watcher, a clone and its parent, an ext4 image, QoS limits, wrong
credentials, a missing pool and image, a monitor nobody answers for and one whose packets
are dropped in a network namespace of the test's).
The servers come from tests/netstore.py (fixtures ``nbd_server_factory`` and
``ceph_cluster``, one cluster for the whole run: every image, pool and user made here is
removed again), except an nbdkit that requires TLS, which this module starts itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from iobench.errors import UserError
from iobench.probe.ceph import (
    CephAccess,
    RbdImage,
    RbdName,
    ceph_failure,
    check_access,
    parse_rbd_spec,
    probe_rbd,
    rbd_signatures,
    read_head,
)
from iobench.probe.cephtools import (
    Unreadable,
    children_of,
    cluster_of,
    info_fields,
    pools_of,
    qos_of,
    redacted,
    usage_of,
    watchers_of,
)
from iobench.probe.host import ToolRun
from iobench.probe.nbd import export_of, nbd_failure, parse_nbd_uri, probe_nbd
from netstore import CephCluster, NbdServer, free_ports

DATA = Path(__file__).parent / "data" / "network"
MiB = 1 << 20


def recorded(name: str) -> str:
    return (DATA / name).read_text()


def refusal(call: Callable[[], object]) -> UserError:
    """The UserError ``call`` raises; its message and hint print as they are (no control or
    bidi character reaches a terminal)."""
    with pytest.raises(UserError) as caught:
        call()
    error = caught.value
    assert error.message.isprintable(), error.message
    assert (error.hint or "").isprintable(), error.hint
    return error


def _run(argv: list[str], timeout_s: float = 60) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{argv} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


# -- NBD URIs ---------------------------------------------------------------------------------

# text -> (canonical uri, host, port, export, socket, tls)
ACCEPTED_NBD = {
    "nbd://127.0.0.1:10809/export": ("nbd://127.0.0.1:10809/export", "127.0.0.1", 10809,
                                     "export", None, False),
    "nbd://example.com/disk": ("nbd://example.com:10809/disk", "example.com", 10809, "disk",
                               None, False),
    "nbds://storage-1.example.com:10810": ("nbds://storage-1.example.com:10810/",
                                           "storage-1.example.com", 10810, "", None, True),
    "nbd://[::1]:10810/": ("nbd://[::1]:10810/", "::1", 10810, "", None, False),
    "nbd://[0:0:0:0:0:0:0:1]/x": ("nbd://[::1]:10809/x", "::1", 10809, "x", None, False),
    # libnbd connects to localhost when the authority names no host
    "nbd:///disk1": ("nbd://localhost:10809/disk1", "localhost", 10809, "disk1", None, False),
    # doc/uri.md: the path without its first '/' is the export name, percent-decoded
    "nbd://h//disk": ("nbd://h:10809//disk", "h", 10809, "/disk", None, False),
    "nbd://h/hello%20world": ("nbd://h:10809/hello%20world", "h", 10809, "hello world", None,
                              False),
    "nbd://h/%C3%A9t%C3%A9": ("nbd://h:10809/%C3%A9t%C3%A9", "h", 10809, "été", None, False),
    # what fio would mangle is fine percent-encoded: fio sees only the encoding
    "nbd://h/a%3Bb%23c%24d%5Ce": ("nbd://h:10809/a%3Bb%23c%24d%5Ce", "h", 10809, "a;b#c$d\\e",
                                  None, False),
    "nbd+unix:///export?socket=/run/nbd.sock": ("nbd+unix:///export?socket=/run/nbd.sock",
                                                None, None, "export", "/run/nbd.sock", False),
    "nbds+unix:///?socket=/tmp/a%24b.sock": ("nbds+unix:///?socket=/tmp/a%24b.sock", None,
                                             None, "", "/tmp/a$b.sock", True),
    "nbd+unix:///x?&socket=/s&": ("nbd+unix:///x?socket=/s", None, None, "x", "/s", False),
    "nbd://h/x?": ("nbd://h:10809/x", "h", 10809, "x", None, False),
}  # fmt: skip


@pytest.mark.parametrize("text", ACCEPTED_NBD)
def test_nbd_uris_accepted_as_libnbd_reads_them(text: str) -> None:
    uri = parse_nbd_uri(text)
    assert (uri.uri, uri.host, uri.port, uri.export, uri.socket, uri.tls) == ACCEPTED_NBD[text]
    assert uri.uri.isascii() and uri.uri.isprintable()
    assert not set(uri.uri) & set(";#$\\ ")
    assert parse_nbd_uri(uri.uri) == uri  # the canonical text reads back the same


def test_a_user_name_reaches_libnbd_but_is_never_shown() -> None:
    uri = parse_nbd_uri("nbds://alice@10.0.0.5:10809/vol")
    assert uri.user == "alice"
    assert uri.uri == "nbds://alice@10.0.0.5:10809/vol"  # what fio gets (TLS user name)
    assert uri.shown == "nbds://10.0.0.5:10809/vol"
    unix = parse_nbd_uri("nbds+unix://alice@/?socket=/tmp/nbd.sock")  # libnbd's own example
    assert (unix.user, unix.shown) == ("alice", "nbds+unix:///?socket=/tmp/nbd.sock")


# text -> what the refusal says (hand-written hostile variants)
REFUSED_NBD = {
    "": "does not start with nbd://",
    "http://h/x": "does not start with nbd://",
    "nbd:/h/x": "does not start with nbd://",
    "nbd:h": "does not start with nbd://",
    "/run/nbd.sock": "does not start with nbd://",
    "NBD://h/x": "libnbd takes it in lower case only",
    "Nbds://h/x": "libnbd takes it in lower case only",
    "nbd+vsock:///": "AF_VSOCK",
    "nbd://h/x;rm -rf /": "fio ends an option value at ';'",
    "nbd://h/x#frag": "fio ends an option value at '#'",
    "nbd://h/$HOME": "fio expands '$'",
    "nbd://h/a\\b": "fio treats '\\' in an option value as an escape",
    "nbd://h/x y": "character 10 (U+0020)",
    "nbd://h/x\n": "(U+000A) does not belong in a URI",
    "nbd://h/\x1b[31mred": "(U+001B)",
    "nbd://h/\u202eevil": "(U+202E)",
    "nbd://h/\u00e9t\u00e9": "(U+00E9)",
    "nbd://h/x%0Ay": "the export name holds U+000A, which does not print",
    "nbd://h/%1B%5B31m": "U+001B",
    "nbd://h/%E2%80%AEevil": "U+202E",
    "nbd://h/%00": "U+0000",
    "nbd://h/%zz": "'%' that is not followed by two hex digits",
    "nbd://h/%C3": "does not decode to UTF-8",
    "nbd://h/" + "a" * 1100: "iobench takes at most 1024",
    "nbd://user:secret@h/x": "holds a password",
    "nbd://a@b@h/x": "more than one '@'",
    "nbd://@h/x": "the user name before '@' is empty",
    "nbd://h/x?tls-psk-file=/etc/shadow": "tls-psk-file= makes libnbd read a local file",
    "nbds://h/x?tls-certificates=/root/.pki": "tls-certificates= makes libnbd read a local file",
    "nbds://h/x?tls-verify-peer=false": "not acted on by libnbd 1.14",
    "nbds://h/x?tls-hostname=other": "not acted on by libnbd 1.14",
    "nbd://h/x?foo=bar": '"foo" is not a query parameter libnbd takes',
    "nbd://h/x?x-debug": '"x-debug" is not a query parameter',
    "nbd://h/x?socket=/run/nbd.sock": "socket= belongs to nbd+unix://",
    "nbd+unix:///x": "needs ?socket=/PATH",
    "nbd+unix:///x?socket=": "needs ?socket=/PATH",
    "nbd+unix:///x?socket=nbd.sock": "must be absolute",
    "nbd+unix://host/x?socket=/s": "names no host or port",
    "nbd+unix://:10809/x?socket=/s": "names no host or port",
    "nbd+unix:///?socket=/" + "a" * 200: "over 107 bytes",
    "nbd+unix:///?socket=/a&socket=/b": 'names "socket" twice',
    "nbd://h:0/": "from 1 to 65535",
    "nbd://h:65536/": "from 1 to 65535",
    "nbd://h:/": "from 1 to 65535",
    "nbd://h:ab/": "from 1 to 65535",
    "nbd://h:-1/": "from 1 to 65535",
    "nbd://bad!host/": "neither an IPv4 address",
    "nbd://-h/": "neither an IPv4 address",
    "nbd://" + "a" * 64 + ".example/": "neither an IPv4 address",
    "nbd://h%41/": "neither an IPv4 address",
    "nbd://[zz]/": "is not an IPv6 address",
    "nbd://[fe80::1%25eth0]/": "is not an IPv6 address",
    "nbd://[::1/": "written [ADDRESS]",
    "nbd://[::1]x/": "written [ADDRESS]",
}


@pytest.mark.parametrize("text", REFUSED_NBD)
def test_nbd_uris_refused_with_the_reason(text: str) -> None:
    error = refusal(lambda: parse_nbd_uri(text))
    assert REFUSED_NBD[text] in error.message
    assert "nbd+unix:///EXPORT?socket=/PATH" in (error.hint or "")  # the accepted forms
    assert "\x1b" not in error.message and "\u202e" not in error.message


def test_a_refused_password_is_not_repeated() -> None:
    error = refusal(lambda: parse_nbd_uri("nbds://bob:hunter2@h/x"))
    assert error.message.startswith('NBD URI "nbds://USER:PASSWORD@h/x": it holds a password')
    assert "hunter2" not in error.message and "bob" not in error.message


# -- nbdinfo's answers, recorded -------------------------------------------------------------


def test_recorded_exports_read() -> None:
    described = export_of(parse_nbd_uri("nbd://127.0.0.1:39321/disk1"),
                          recorded("nbdinfo-described.stdout"))  # fmt: skip
    assert (described.size_bytes, described.export_name) == (64 * MiB, "disk1")
    assert described.description == "my test disk"
    sizes = (described.block_size_min, described.block_size_preferred, described.block_size_max)
    assert sizes == (512, 4096, MiB)
    assert (described.readonly, described.flag("can_trim"), described.tls) == (False, True, False)
    plain = export_of(parse_nbd_uri("nbd://127.0.0.1:39311/"), recorded("nbdinfo-memory.stdout"))
    assert (plain.description, plain.block_size_min, plain.protocol) == (
        None, None, "newstyle-fixed"
    )  # fmt: skip
    uri = parse_nbd_uri("nbd+unix:///?socket=/tmp/netprobe/nbd4.sock")
    readonly = export_of(uri, recorded("nbdinfo-readonly-unix.stdout"))
    assert readonly.readonly is True and readonly.size_bytes == 16 * MiB
    assert readonly.context()["transport"] == "unix"


def test_the_stored_context_holds_no_credential() -> None:
    # nbdinfo's own "uri" names the TLS user and the PSK file: it is not what is stored
    assert "alice" in recorded("nbdinfo-tls-psk.stdout")
    export = export_of(parse_nbd_uri("nbds://alice@127.0.0.1:39331/"),
                       recorded("nbdinfo-tls-psk.stdout"))  # fmt: skip
    context = json.dumps(export.context())
    assert export.tls is True
    assert "alice" not in context and "psk" not in context
    assert export.context()["uri"] == "nbds://127.0.0.1:39331/"


# recorded stderr -> (the URI it was made with, what the message says, what the hint says)
NBD_FAILURES = {
    "nbdinfo-refused": ("nbd://127.0.0.1:39312/", "nothing listens at 127.0.0.1:39312", "runs"),
    "nbdinfo-noexport": ("nbd://127.0.0.1:39321/nosuch", 'has no export "nosuch"', "--list"),
    "nbdinfo-nosocket": ("nbd+unix:///?socket=/tmp/netprobe/nosuch.sock",
                         "the socket /tmp/netprobe/nosuch.sock does not exist", "runs"),
    "nbdinfo-tls-required": ("nbd://127.0.0.1:39331/", "it may require TLS", "nbds://"),
    "nbdinfo-tls-unoffered": ("nbds://127.0.0.1:39321/disk1", "closed the connection when "
                              "asked for TLS", "use nbd://"),
    "nbdinfo-tls-handshake": ("nbds://127.0.0.1:39331/", "TLS handshake", "certificate"),
    "nbdinfo-unresolved": ("nbd://nosuchhost.invalid/", 'host name "nosuchhost.invalid" does '
                           "not resolve", "host name"),
    "nbdinfo-unreachable": ("nbd://10.254.77.2:10809/", "10.254.77.2:10809 cannot be reached",
                            ""),
}  # fmt: skip


@pytest.mark.parametrize("name", NBD_FAILURES)
def test_recorded_nbdinfo_failures_name_which(name: str) -> None:
    text, says, hint = NBD_FAILURES[name]
    uri = parse_nbd_uri(text)
    run = ToolRun(("nbdinfo", "--json", "--no-content", uri.uri), 1, "",
                  recorded(f"{name}.stderr"))  # fmt: skip
    error = nbd_failure(uri, run, 10)
    assert says in error.message and hint in (error.hint or "")
    assert error.message.isprintable() and "suggestion" not in error.message


def test_nbdinfo_missing_or_silent() -> None:
    uri = parse_nbd_uri("nbds://alice@h/x")
    missing = nbd_failure(uri, ToolRun(("nbdinfo",), None, "", "", "not installed"), 10)
    assert missing.message.startswith("nbdinfo is not installed")
    assert missing.hint == "install libnbd-bin (apt-get install libnbd-bin)"
    silent = nbd_failure(uri, ToolRun(("nbdinfo",), None, "", "", "timed out after 10 s"), 10)
    assert silent.message == "the NBD server at h:10809 did not answer within 10 s"
    said = nbd_failure(uri, ToolRun(("nbdinfo",), 1, "", "nbdinfo: nbds://alice@h/: \x1b[2J\n"), 10)
    assert "alice" not in said.message and "\x1b" not in said.message
    assert said.message.endswith("(nbdinfo: nbds://USER@h/: \\u001b[2J)")


# hand-written hostile answers (not recorded): what a server or a broken nbdinfo could print
HOSTILE_NBDINFO = {
    "not JSON": ("exports: [", "is not JSON"),
    "no export": ('{"exports": []}', "exactly one export"),
    "two exports": ('{"exports": [{"export-size": 1}, {"export-size": 2}]}', "exactly one"),
    "negative size": ('{"exports": [{"export-size": -1}]}', "no export size"),
    "size as text": ('{"exports": [{"export-size": "1G"}]}', "no export size"),
    "huge size": ('{"exports": [{"export-size": 1e400}]}', "no export size"),
    "deep": ("[" * 5000 + "]" * 5000, "is not JSON"),
}


@pytest.mark.parametrize("case", HOSTILE_NBDINFO)
def test_hostile_nbdinfo_answers_refused(case: str) -> None:
    text, says = HOSTILE_NBDINFO[case]
    error = refusal(lambda: export_of(parse_nbd_uri("nbd://h/x"), text))
    assert "nbdinfo's answer cannot be read" in error.message and says in error.message


def test_hostile_server_text_is_kept_printable_and_short() -> None:
    doc = {
        "protocol": "newstyle-fixed\x07",
        "exports": [{
            "export-name": "\x1b]0;owned\x07\u202eevil",
            "description": "d" * 100_000,
            "export-size": 4096,
            "is_read_only": "yes",  # not a boolean: not a flag
            "can_trim": True,
            "block_size_minimum": -5,
            "contexts": ["base:allocation", 7, "\x1b[31m"],
            "is_" + "x" * 500: True,
        }],
    }  # fmt: skip
    export = export_of(parse_nbd_uri("nbd://h/x"), json.dumps(doc))
    shown = json.dumps(export.context(), ensure_ascii=False)
    assert all(c.isprintable() for c in shown)
    assert export.readonly is None and export.flags == (("can_trim", True),)
    assert export.block_size_min is None and len(export.description or "") == 4096
    assert export.contexts == ("base:allocation", "\\u001b[31m")


# -- live: nbdkit -----------------------------------------------------------------------------


def _probed(text: str, timeout_s: float = 10.0) -> tuple[float, Any]:
    """(seconds, the export or the UserError) of probing ``text``."""
    start = time.monotonic()
    try:
        found: Any = probe_nbd(parse_nbd_uri(text), timeout_s=timeout_s)
    except UserError as e:
        found = e
    return time.monotonic() - start, found


def test_live_exports_probed(nbd_server_factory: Callable[..., NbdServer]) -> None:
    tcp = nbd_server_factory(size="64M")
    seconds, export = _probed(tcp.uri)
    assert export.size_bytes == 64 * MiB and export.readonly is False
    assert export.flag("can_flush") is True and seconds < 2
    readonly = nbd_server_factory(size="16M", readonly=True, unix=True)
    export = _probed(readonly.uri)[1]
    assert (export.size_bytes, export.readonly) == (16 * MiB, True)
    assert export.context()["uri"] == parse_nbd_uri(readonly.uri).uri


def test_live_missing_export_and_servers(nbd_server_factory: Callable[..., NbdServer]) -> None:
    named = nbd_server_factory(export_name="disk1")
    assert _probed(named.uri)[1].export_name == "disk1"
    missing = _probed(named.uri.replace("/disk1", "/disk2"))[1]
    assert 'the server has no export "disk2"' in missing.message
    port = free_ports("127.0.0.1", 1)[0]
    seconds, refused = _probed(f"nbd://127.0.0.1:{port}/")
    assert f"nothing listens at 127.0.0.1:{port} (connection refused)" in refused.message
    assert seconds < 2
    gone = _probed("nbd+unix:///?socket=/nonexistent/nbd.sock")[1]
    assert "the socket /nonexistent/nbd.sock does not exist" in gone.message


@contextlib.contextmanager
def fake_server(greeting: bytes | None) -> Iterator[int]:
    """A port on 127.0.0.1 that accepts connections and then says nothing (None) or sends
    ``greeting`` and hangs up: a hung server, or something that is not an NBD server."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)  # the kernel completes connections in the backlog: nothing is accepted

        def serve() -> None:
            with contextlib.suppress(OSError):
                while greeting is not None:
                    conn, _ = sock.accept()
                    with conn:
                        conn.sendall(greeting)

        threading.Thread(target=serve, daemon=True).start()
        yield sock.getsockname()[1]


def test_live_servers_that_hang_or_speak_no_nbd() -> None:
    with fake_server(None) as port:
        seconds, hung = _probed(f"nbd://127.0.0.1:{port}/", timeout_s=2)
    assert hung.message == f"the NBD server at 127.0.0.1:{port} did not answer within 2 s"
    assert seconds < 3
    with fake_server(b"HTTP/1.0 400 Bad Request\r\n\r\n" + bytes(range(256))) as port:
        other = _probed(f"nbd://127.0.0.1:{port}/")[1]
    assert f"127.0.0.1:{port} does not speak NBD (no NBD greeting)" in other.message
    assert other.message.endswith("(nbdinfo: nbd_connect_uri: handshake: server did not send "
                                  "expected NBD magic)")  # fmt: skip


@contextlib.contextmanager
def tls_nbdkit(workdir: Path) -> Iterator[str]:
    """nbdkit requiring TLS with a pre-shared key (tests/netstore.py's servers speak plain
    NBD, and its readiness check would wait for an answer without TLS forever): its URI."""
    psk = workdir / "psk.keys"
    psk.write_text(f"alice:{os.urandom(32).hex()}\n")
    psk.chmod(0o600)
    port = free_ports("127.0.0.1", 1)[0]
    argv = ["nbdkit", "--foreground", "--exit-with-parent", "-i", "127.0.0.1", "--port",
            str(port), "--tls=require", f"--tls-psk={psk}", "memory", "16M"]  # fmt: skip
    with open(workdir / "nbdkit-tls.log", "wb") as log:
        server = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 10
        while not _listening(port):
            assert server.poll() is None and time.monotonic() < deadline, "nbdkit did not start"
            time.sleep(0.02)
        yield f"nbd://127.0.0.1:{port}/"
    finally:
        server.kill()
        server.wait()


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_live_tls_refusals(nbd_server_factory: Callable[..., NbdServer], tmp_path: Path) -> None:
    with tls_nbdkit(tmp_path) as uri:
        plain = _probed(uri)[1]
        handshake = _probed(uri.replace("nbd://", "nbds://"))[1]  # libnbd has no PSK for it
    assert "the server refused the export: it may require TLS" in plain.message
    assert plain.hint.startswith("use nbds://")
    assert "the TLS handshake with the server failed" in handshake.message
    unoffered = _probed(nbd_server_factory().uri.replace("nbd://", "nbds://"))[1]
    assert "closed the connection when asked for TLS" in unoffered.message


@contextlib.contextmanager
def blackhole() -> Iterator[tuple[str, str]]:
    """(a network namespace, an address in it that swallows every packet): a veth pair to a
    second namespace, and for the address a permanent neighbour of a MAC nobody has, so
    frames leave and are dropped by the peer. Traffic never leaves the two namespaces."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and ip (iproute2) for network namespaces")
    ns, peer = f"ibprobe-{os.getpid()}-a", f"ibprobe-{os.getpid()}-b"
    with ExitStack() as stack:
        for name in (ns, peer):
            _run(["ip", "netns", "add", name])
            stack.callback(subprocess.run, ["ip", "netns", "del", name], check=False)
        _run(["ip", "-n", ns, "link", "add", "bh0", "type", "veth", "peer", "bh1", "netns", peer])
        _run(["ip", "-n", ns, "addr", "add", "192.0.2.1/24", "dev", "bh0"])
        for name, link in ((ns, "bh0"), (peer, "bh1"), (ns, "lo")):
            _run(["ip", "-n", name, "link", "set", link, "up"])
        _run(["ip", "-n", ns, "neigh", "add", "192.0.2.2", "lladdr", "02:00:00:00:00:99", "dev",
              "bh0", "nud", "permanent"])  # fmt: skip
        yield ns, "192.0.2.2"


def in_namespace(ns: str, code: str) -> dict[str, Any]:
    """Run ``code`` (which prints one JSON document) in a Python in namespace ``ns``."""
    done = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", code],
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout)
    return result


_PROBE_NBD = """
import json, time
from iobench.errors import UserError
from iobench.probe.nbd import parse_nbd_uri, probe_nbd
start = time.monotonic()
try:
    probe_nbd(parse_nbd_uri({uri!r}), timeout_s={timeout})
    said = "answered"
except UserError as e:
    said = e.message
print(json.dumps({{"seconds": time.monotonic() - start, "said": said}}))
"""


def test_live_a_server_that_drops_packets_answers_within_the_timeout() -> None:
    with blackhole() as (ns, address):  # TCP alone would try for two minutes
        got = in_namespace(ns, _PROBE_NBD.format(uri=f"nbd://{address}:10809/", timeout=3))
    assert got["said"] == f"the NBD server at {address}:10809 did not answer within 3 s"
    assert got["seconds"] < 4


# -- RBD names and access ---------------------------------------------------------------------

ACCEPTED_RBD = {
    "rbd:rbd/img": ("rbd", "img"),
    "rbd:my-pool.1/img_2.v3": ("my-pool.1", "img_2.v3"),
    "rbd:rbd/with space": ("rbd", "with space"),  # Ceph takes it, fio keeps inner blanks
    "rbd:volumes/été": ("volumes", "été"),
    "rbd:" + "p" * 1024 + "/i": ("p" * 1024, "i"),
}


@pytest.mark.parametrize("text", ACCEPTED_RBD)
def test_rbd_names_accepted(text: str) -> None:
    name = parse_rbd_spec(text)
    assert (name.pool, name.image) == ACCEPTED_RBD[text]
    assert name.text == text and name.spec == text.removeprefix("rbd:")


REFUSED_RBD = {
    "rbd/img": "does not start with 'rbd:'",
    "RBD:rbd/img": "does not start with 'rbd:'",
    "rbd:img": "it names no pool",
    "rbd:a/b/c/d": "a pool or image name holds no '/'",
    "rbd:/img": "the pool name is empty",
    "rbd:rbd/": "the image name is empty",
    "rbd:rbd/ns/img": "has no option for a namespace",
    "rbd:rbd/img@snap": "'@' names a snapshot",
    "rbd:rbd/img:id=admin:conf=/etc/ceph/ceph.conf": "QEMU's rbd:POOL/IMAGE:OPTION=VALUE",
    "rbd:rbd/img;rm": "fio ends an option value at ';'",
    "rbd:rbd/img#x": "fio ends an option value at '#'",
    "rbd:rbd/$HOME": "fio expands '$'",
    "rbd:rbd/a\\b": "fio treats '\\'",
    "rbd:rbd/img ": "starts or ends with a blank",
    "rbd: rbd/img": "starts or ends with a blank",
    "rbd:rbd/img\n": "U+000A, which does not print",
    "rbd:rbd/\x1b[31mimg": "U+001B",
    "rbd:rbd/\u202egmi": "U+202E",
    "rbd:rbd\u200b/img": "U+200B",
    "rbd:rbd/bench-{client}": "only {client} in the image name, with --clients",
    "rbd:rbd/" + "i" * 1025: "over 1024 bytes long",
    "rbd:" + "p" * 5000: "too long",
}


@pytest.mark.parametrize("text", REFUSED_RBD)
def test_rbd_names_refused_with_the_reason(text: str) -> None:
    error = refusal(lambda: parse_rbd_spec(text))
    assert REFUSED_RBD[text] in error.message
    assert "rbd:POOL/IMAGE" in (error.hint or "")


def test_a_client_field_is_no_name_here_and_what_fills_it_is_checked_again() -> None:
    """With --clients, iobench puts each client's host name in the place of {client}
    before the name is read (engine/remote.py): the field itself is refused here, with
    where it belongs, and what fills it is checked like any name."""
    said = refusal(lambda: parse_rbd_spec("rbd:rbd/bench-{client}")).message
    assert "{client}" in said and "--clients" in said
    for filled in ("rbd:rbd/bench-a;b", "rbd:rbd/bench-a#b", "rbd:rbd/bench-a$b"):
        refusal(lambda t=filled: parse_rbd_spec(t))  # type: ignore[misc]
    assert parse_rbd_spec("rbd:rbd/bench-10.0.0.2") == RbdName("rbd", "bench-10.0.0.2")


def test_access_as_the_tools_take_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    access = CephAccess(conf="ceph.conf", user="client.volumes")
    assert (access.conf, access.user) == (str(tmp_path / "ceph.conf"), "volumes")
    args = access.tool_args(10)
    assert args[:4] == ["--conf", str(tmp_path / "ceph.conf"), "--id", "volumes"]
    assert args[4:] == ["--client_mount_timeout", "4", "--rados_mon_op_timeout", "4",
                        "--rados_osd_op_timeout", "4"]  # fmt: skip
    assert CephAccess(cluster="east").tool_args(3)[:2] == ["--cluster", "east"]
    assert CephAccess().context({"CEPH_CONF": "/etc/x.conf"}) == {
        "conf": "/etc/x.conf", "user": "admin", "cluster": "ceph"
    }  # fmt: skip
    for user in ("-x", "a b", "adm;in", "", "client.", "\u202eadmin"):
        assert "not a user id" in refusal(lambda u=user: CephAccess(user=u)).message  # type: ignore[misc]
    for cluster in ("../etc", "", "a/b", "-c"):
        assert "not a cluster name" in refusal(lambda c=cluster: CephAccess(cluster=c)).message  # type: ignore[misc]
    assert "not a path that prints" in refusal(lambda: CephAccess(conf="a\nb")).message


def test_config_files_checked_before_any_tool_runs(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.conf"
    os.mkfifo(fifo)  # opening it for reading would hang a tool
    cases = {
        str(tmp_path / "none.conf"): "No such file or directory",
        str(tmp_path): "not a regular file",
        str(fifo): "not a regular file",
        "/dev/null": "not a regular file",
    }
    for conf, says in cases.items():
        error = refusal(lambda c=conf: check_access(CephAccess(conf=c)))  # type: ignore[misc]
        assert says in error.message and "(--ceph-conf)" in error.message
    env = {"CEPH_CONF": str(tmp_path / "gone.conf"), "HOME": str(tmp_path)}
    assert "(CEPH_CONF)" in refusal(lambda: check_access(CephAccess(), env)).message
    nothing = refusal(lambda: check_access(CephAccess(cluster="nosuch"), {"HOME": str(tmp_path)}))
    assert nothing.message.startswith("no Ceph config file")
    assert nothing.hint == "give --ceph-conf FILE (the cluster's ceph.conf, with mon_host)"


# -- rbd's and ceph's answers, recorded -------------------------------------------------------


def test_recorded_image_facts_read() -> None:
    clone = info_fields(recorded("rbd-info-clone.stdout"))
    assert (clone["size_bytes"], clone["object_size"], clone["snapshots"]) == (32 * MiB, 4 * MiB, 0)
    parent = clone["parent"]
    assert (parent.pool, parent.image, parent.snapshot, parent.overlap_bytes) == (
        "rbd", "parent", "s1", 32 * MiB
    )  # fmt: skip
    assert "fast-diff" in clone["features"]
    striped = info_fields(recorded("rbd-info-striped.stdout"))
    assert (striped["data_pool"], striped["stripe_unit"], striped["stripe_count"]) == (
        "rbddata", 65536, 4
    )  # fmt: skip
    assert info_fields(recorded("rbd-info-parent.stdout"))["snapshots"] == 1
    assert children_of(recorded("rbd-children.stdout")) == ("rbd/child",)
    assert watchers_of(recorded("rbd-status-idle.stdout")) == ()
    (watcher,) = watchers_of(recorded("rbd-status-watched.stdout"))
    assert (watcher.address, watcher.client) == ("127.0.0.1:0/1107588610", "client.4408")
    assert usage_of(recorded("rbd-du.stdout"), "img") == (64 * MiB, 64 * MiB)
    # a parent's du has a row per snapshot before its own
    assert usage_of(recorded("rbd-du-parent.stdout"), "parent") == (0, 32 * MiB)


def test_recorded_qos_limits_with_their_source() -> None:
    qos = qos_of(recorded("rbd-config-image-list.stdout"))
    assert {(q.name, q.value, q.source) for q in qos} == {
        ("rbd_qos_iops_limit", 500, "image"), ("rbd_qos_write_iops_limit", 200, "pool")
    }  # fmt: skip


def test_recorded_pools_and_cluster_read() -> None:
    pools = pools_of(recorded("ceph-osd-dump.stdout"))
    rbd, ec = pools["rbd"], pools["ecdata"]
    assert (rbd.kind, rbd.size, rbd.min_size, rbd.pg_num, rbd.applications) == (
        "replicated", 1, 1, 8, ("rbd",)
    )  # fmt: skip
    assert (ec.kind, ec.size, ec.min_size, ec.erasure_profile) == ("erasure", 3, 2, "ec21")
    assert dict(ec.erasure)["k"] == "2" and dict(ec.erasure)["m"] == "1"
    assert ec.context()["erasure"]["crush-failure-domain"] == "osd"
    cluster = cluster_of(recorded("ceph-osd-dump.stdout"), recorded("ceph-versions.stdout"),
                         recorded("rbd-version.stdout"))  # fmt: skip
    assert cluster.fsid == "f6a9f360-2c51-4deb-9ac0-3ceffede988f"
    assert {d for d, _, _ in cluster.versions} == {"mon", "mgr", "osd"}
    assert all("16.2.15" in v and n == 1 for _, v, n in cluster.versions)
    assert (cluster.osds, cluster.osds_up, cluster.require_osd_release) == (1, 1, "pacific")
    assert cluster.client_version is not None and "pacific" in cluster.client_version
    assert cluster_of(None, "not json", None) == cluster_of(None, None, None)


# recorded stderr -> (the RBD name it was made with, the access, what the message says)
CEPH_FAILURES = {
    "rbd-info-nopool": ("rbd:nopool/img", {}, 'the cluster has no pool "nopool"'),
    "rbd-info-noimage": ("rbd:rbd/noimg", {}, 'pool "rbd" has no image "noimg"'),
    "rbd-info-wrongkey": ("rbd:rbd/img", {}, "the cluster refused client.admin: no such user"),
    "rbd-info-nouser": ("rbd:rbd/img", {"user": "ghost"}, "the cluster refused client.ghost"),
    "rbd-info-caps": ("rbd:rbddata/x", {"user": "bench"},
                      'client.bench may not use pool "rbddata" (its caps)'),
    "rbd-info-deadmon": ("rbd:rbd/img", {}, "no monitor answered within 4 s"),
    "ceph-versions-deadmon": ("rbd:rbd/img", {}, "no monitor answered within 4 s"),
    "rbd-info-osd-timeout": ("rbd:ecdata/x", {}, "did not answer within 4 s (OSDs down or "
                             "placement groups inactive?)"),
    "rbd-info-nomon": ("rbd:rbd/img", {}, "names no monitor (mon_host)"),
    "rbd-info-badconf": ("rbd:rbd/img", {}, "cannot be read as a Ceph config"),
}  # fmt: skip


@pytest.mark.parametrize("name", CEPH_FAILURES)
def test_recorded_ceph_failures_name_which(name: str) -> None:
    text, access, says = CEPH_FAILURES[name]
    run = ToolRun(("rbd", "info"), 1, "", recorded(f"{name}.stderr"))
    error = ceph_failure(parse_rbd_spec(text), CephAccess(**access), run, 10)
    assert says in error.message, error.message
    assert error.message.isprintable() and (error.hint or "").isprintable()


def test_tools_missing_or_silent() -> None:
    name = parse_rbd_spec("rbd:rbd/img")
    missing = ceph_failure(name, CephAccess(), ToolRun(("rbd",), None, "", "", "not installed"), 10)
    assert missing.message.startswith("rbd is not installed")
    assert missing.hint == "install ceph-common (apt-get install ceph-common)"
    silent = ToolRun(("rbd",), None, "", "", "timed out after 10 s")
    error = ceph_failure(name, CephAccess(), silent, 10, "[v2:10.0.0.1:3300]")
    assert error.message == (
        "rbd:rbd/img: the Ceph cluster did not answer within 10 s ([v2:10.0.0.1:3300])"
    )


def test_the_first_bytes_read_bounded_in_bytes_and_time() -> None:
    """read_head with real processes: one that writes without end, one that writes less and
    succeeds, one that fails, one that writes nothing and never ends."""
    assert read_head(["yes"], 100_000, 5) == (b"y\n" * 50_000, None)
    assert read_head(["printf", "abc"], 65536, 5) == (b"abc", None)
    data, why = read_head(["sh", "-c", "printf ab; echo 'it broke' >&2; exit 3"], 10, 5)
    assert data is None and why == "sh exited with 3: it broke"
    start = time.monotonic()
    data, why = read_head(["sleep", "30"], 10, 1)
    assert (data, why) == (None, "sleep wrote 0 bytes of 10 in 1 s")
    assert time.monotonic() - start < 2
    assert read_head(["no-such-tool-here"], 10, 1) == (None, "no-such-tool-here is not installed")


# hand-written hostile variants (not recorded)
def test_no_key_is_ever_repeated() -> None:
    key = "AQBjZ2VmYWtla2V5Zm9ydGVzdHNvbmx5MTIzNDU2Nw=="
    for said in (f"auth: bad key {key} for client.admin", f"[client.admin]\n\tkey = {key}\n",
                 f"key={key[:20]}"):  # fmt: skip
        assert key[:20] not in redacted(said), said
        error = ceph_failure(parse_rbd_spec("rbd:rbd/img"), CephAccess(),
                             ToolRun(("rbd",), 22, "", said), 10)  # fmt: skip
        assert key[:20] not in error.message + (error.hint or "")


HOSTILE_CEPH_JSON = {
    "not JSON": "{",
    "a list for a dict": "[1, 2]",
    "deep": "[" * 5000 + "]" * 5000,
    "no size": '{"name": "img"}',
    "negative size": '{"size": -1}',
    "NaN": '{"size": NaN}',
}


@pytest.mark.parametrize("case", HOSTILE_CEPH_JSON)
def test_hostile_ceph_answers_are_unreadable(case: str) -> None:
    text = HOSTILE_CEPH_JSON[case]
    for read in (info_fields, watchers_of, children_of, qos_of, pools_of,
                 lambda t: usage_of(t, "img")):  # fmt: skip
        with pytest.raises(Unreadable):
            read(text)


def test_hostile_ceph_text_is_kept_printable() -> None:
    dump = json.dumps({
        "fsid": "\x1b]0;x\x07",
        "pools": [{"pool_name": "p\u202e", "type": 1, "size": "3", "application_metadata":
                   {"rbd\x1b[2J": {}}}],
        "osds": [{"up": 1}, {"up": "1"}, "x"],
    })  # fmt: skip
    pools = pools_of(dump)
    assert pools["p\u202e"].name == "p\\u202e" and pools["p\u202e"].size is None
    cluster = cluster_of(dump, '{"osd": {"\\u001b[31m16.2": 1, "x": "many"}}', None)
    assert (cluster.osds, cluster.osds_up) == (3, 1)
    shown = json.dumps([pools["p\u202e"].context(), cluster.context()], ensure_ascii=False)
    assert all(c.isprintable() for c in shown)
    watchers = watchers_of('{"watchers": [{"address": "\\u001b[2J", "client": "x"}]}')
    assert watchers[0].address == "\\u001b[2J" and watchers[0].client == "client.?"
    with pytest.raises(Unreadable):  # one watcher not understood: not "no watchers"
        watchers_of('{"watchers": [{"address": "a", "client": 1}, 5]}')
    with pytest.raises(Unreadable):
        children_of('[{"pool": "rbd", "image": "c"}, "x"]')


# -- live: a one-node Ceph --------------------------------------------------------------------


def _timed(access: CephAccess, text: str, timeout_s: float = 10.0) -> tuple[float, Any]:
    """(seconds, the image or the UserError) of probing ``text``."""
    start = time.monotonic()
    try:
        found: Any = probe_rbd(access, parse_rbd_spec(text), timeout_s=timeout_s)
    except UserError as e:
        found = e
    return time.monotonic() - start, found


def _key(cluster: CephCluster) -> str:
    """client.admin's secret, to check it is never repeated."""
    line = next(ln for ln in cluster.keyring.read_text().splitlines() if "key =" in ln)
    return line.split("=", 1)[1].strip()


def _conf_variant(cluster: CephCluster, path: Path, **replaced: str) -> CephAccess:
    """The cluster's ceph.conf with some settings replaced (``mon_host``, ``keyring``)."""
    lines = cluster.conf.read_text().splitlines()
    for key, value in replaced.items():
        lines = [f"{key} = {value}" if ln.startswith(f"{key} =") else ln for ln in lines]
    path.write_text("\n".join(lines) + "\n")
    return CephAccess(conf=str(path))


@pytest.fixture
def made(ceph_cluster: CephCluster) -> Iterator[ExitStack]:
    """What a test makes on the shared cluster, undone after it, last made first undone."""
    with ExitStack() as undo:
        yield undo


def _image(cluster: CephCluster, made: ExitStack, name: str, data: bytes | None = None) -> str:
    """Image ``rbd/NAME`` of ``data`` (imported), or of 16 MiB never written; removed after
    the test. Its ``rbd:`` name."""
    if data is None:
        cluster.create_image(name, "16M")
    else:
        with tempfile.NamedTemporaryFile() as source:
            source.write(data)
            source.flush()
            cluster.rbd("import", "--no-progress", source.name, f"rbd/{name}")
    made.callback(cluster.remove_image, name)
    return f"rbd:rbd/{name}"


def test_live_image_probed(ceph_cluster: CephCluster, made: ExitStack) -> None:
    data = os.urandom(96 * 1024) + bytes(8 * MiB - 96 * 1024)
    text = _image(ceph_cluster, made, "probe-data", data)
    ceph_cluster.rbd("config", "image", "set", "rbd/probe-data", "rbd_qos_iops_limit", "500")
    access = CephAccess(conf=str(ceph_cluster.conf))
    seconds, image = _timed(access, text)
    assert isinstance(image, RbdImage), image
    assert (image.size_bytes, image.object_size, image.first_bytes) == (
        8 * MiB, 4 * MiB, data[: 64 * 1024]
    )  # fmt: skip
    assert (image.watchers, image.children, image.parent, image.unchecked) == ((), (), None, ())
    assert image.used_bytes and image.provisioned_bytes == 8 * MiB
    assert [(q.name, q.value, q.source) for q in image.qos or ()] == [
        ("rbd_qos_iops_limit", 500, "image")
    ]
    assert image.pool is not None
    assert (image.pool.kind, image.pool.size, image.pool.pg_num) == ("replicated", 1, 8)
    assert image.cluster.fsid == ceph_cluster.fsid and image.cluster.versions
    context = json.dumps(image.context())
    assert _key(ceph_cluster) not in context and "keyring" not in context
    # not a timing: a tool waiting on the cluster would take its 10 s timeout or more
    assert seconds < 9, f"probe_rbd took {seconds:.2f} s"


def test_live_watchers_seen(ceph_cluster: CephCluster, made: ExitStack) -> None:
    text = _image(ceph_cluster, made, "probe-watched")
    access = CephAccess(conf=str(ceph_cluster.conf))
    with ceph_cluster.watching("probe-watched"):  # `rbd watch`: open as krbd or a VM has it
        image = probe_rbd(access, parse_rbd_spec(text))
    assert image.watchers is not None and len(image.watchers) == 1
    assert image.watchers[0].address.startswith("127.0.0.1:")
    assert image.context()["watchers"][0]["client"].startswith("client.")
    assert probe_rbd(access, parse_rbd_spec(text)).watchers == ()


def test_live_clone_and_parent(ceph_cluster: CephCluster, made: ExitStack) -> None:
    data = b"parent's first bytes" + os.urandom(70 * 1024)
    _image(ceph_cluster, made, "probe-parent", data)
    ceph_cluster.rbd("snap", "create", "rbd/probe-parent@s1")
    made.callback(ceph_cluster.rbd, "snap", "purge", "--no-progress", "rbd/probe-parent")
    ceph_cluster.rbd("snap", "protect", "rbd/probe-parent@s1")
    made.callback(ceph_cluster.rbd, "snap", "unprotect", "rbd/probe-parent@s1")
    ceph_cluster.rbd("clone", "rbd/probe-parent@s1", "rbd/probe-child")
    made.callback(ceph_cluster.remove_image, "probe-child")
    access = CephAccess(conf=str(ceph_cluster.conf))
    parent = probe_rbd(access, parse_rbd_spec("rbd:rbd/probe-parent"))
    assert (parent.snapshots, parent.children) == (1, ("rbd/probe-child",))
    child = probe_rbd(access, parse_rbd_spec("rbd:rbd/probe-child"))
    assert child.parent is not None
    assert (child.parent.image, child.parent.snapshot) == ("probe-parent", "s1")
    # the clone holds no data of its own; its first bytes are read through to the parent
    assert child.used_bytes == 0 and child.first_bytes == data[: 64 * 1024]


def test_live_signatures_found_as_on_a_device(
    ceph_cluster: CephCluster, made: ExitStack, tmp_path: Path
) -> None:
    for tool in ("mkfs.ext4", "sfdisk", "wipefs"):
        if shutil.which(tool, path="/usr/sbin:/sbin:/usr/bin:/bin") is None:
            pytest.skip(f"needs {tool}")
    fs = tmp_path / "fs.img"
    fs.write_bytes(bytes(16 * MiB))
    _run(["mkfs.ext4", "-q", "-F", "-L", "probe-fs", str(fs)])
    access = CephAccess(conf=str(ceph_cluster.conf))
    text = _image(ceph_cluster, made, "probe-ext4", fs.read_bytes())
    (found,) = rbd_signatures(probe_rbd(access, parse_rbd_spec(text)))
    assert (found.type, found.label, found.device) == ("ext4", "probe-fs", "rbd:rbd/probe-ext4")
    table = tmp_path / "gpt.img"
    table.write_bytes(bytes(16 * MiB))
    subprocess.run(["sfdisk", "-q", str(table)], input=b"label: gpt\n,\n", check=True)
    text = _image(ceph_cluster, made, "probe-gpt", table.read_bytes())
    types = {s.type for s in rbd_signatures(probe_rbd(access, parse_rbd_spec(text)))}
    assert "gpt" in types  # found because the copy has the image's size (a GPT's extent)
    blank = _image(ceph_cluster, made, "probe-blank")
    assert rbd_signatures(probe_rbd(access, parse_rbd_spec(blank))) == []


def test_live_refusals_name_which(
    ceph_cluster: CephCluster, made: ExitStack, tmp_path: Path
) -> None:
    text = _image(ceph_cluster, made, "probe-here")
    conf = str(ceph_cluster.conf)
    wrong = tmp_path / "wrong.keyring"
    _run(["ceph-authtool", "--create-keyring", str(wrong), "--gen-key", "-n", "client.admin"])
    wrong_key = str(_conf_variant(ceph_cluster, tmp_path / "k.conf", keyring=str(wrong)).conf)
    cases = {
        (conf, "ghost", text): "the cluster refused client.ghost",
        (wrong_key, None, text): "the cluster refused client.admin",
        (conf, None, "rbd:nopool/probe-here"): 'the cluster has no pool "nopool"',
        (conf, None, "rbd:rbd/nothere"): 'pool "rbd" has no image "nothere"',
    }
    for (path, user, name), says in cases.items():
        seconds, error = _timed(CephAccess(conf=path, user=user), name)
        assert isinstance(error, UserError) and says in error.message, error
        assert _key(ceph_cluster) not in error.message + (error.hint or "")
        assert seconds < 2


def test_live_restricted_user(ceph_cluster: CephCluster, made: ExitStack, tmp_path: Path) -> None:
    """A user with the usual client caps (profile rbd on one pool) probes its pool's images,
    and is refused another pool's with the reason."""
    keyring = tmp_path / "bench.keyring"
    ceph_cluster.ceph("auth", "get-or-create", "client.probe-bench", "mon", "profile rbd",
                      "osd", "profile rbd pool=rbd", "-o", str(keyring))  # fmt: skip
    made.callback(ceph_cluster.ceph, "auth", "del", "client.probe-bench")
    ceph_cluster.create_pool("probe-other")
    made.callback(ceph_cluster.remove_pool, "probe-other")
    ceph_cluster.create_image("img", "16M", pool="probe-other")
    mine = _image(ceph_cluster, made, "probe-mine")
    conf = _conf_variant(ceph_cluster, tmp_path / "bench.conf", keyring=str(keyring)).conf
    access = CephAccess(conf=conf, user="probe-bench")
    image = probe_rbd(access, parse_rbd_spec(mine))
    assert image.watchers == () and image.cluster.fsid == ceph_cluster.fsid
    other = _timed(access, "rbd:probe-other/img")[1]
    assert 'client.probe-bench may not use pool "probe-other" (its caps)' in other.message


def test_live_unreachable_monitors_answer_within_seconds(
    ceph_cluster: CephCluster, tmp_path: Path
) -> None:
    v2, v1 = free_ports("127.0.0.1", 2)
    mons = f"[v2:127.0.0.1:{v2},v1:127.0.0.1:{v1}]"
    access = _conf_variant(ceph_cluster, tmp_path / "dead.conf", mon_host=mons)
    seconds, error = _timed(access, "rbd:rbd/anything")
    assert f"no monitor answered within 4 s (monitors {mons})" in error.message
    assert seconds < 10
    blackholed = "[v2:192.0.2.2:3300,v1:192.0.2.2:6789]"
    access = _conf_variant(ceph_cluster, tmp_path / "bh.conf", mon_host=blackholed)
    code = _PROBE_RBD.format(conf=access.conf)
    with blackhole() as (ns, _):
        got = in_namespace(ns, code)
    assert f"no monitor answered within 4 s (monitors {blackholed})" in got["said"]
    assert got["seconds"] < 10
    with fake_server(None) as v2, fake_server(None) as v1:  # they accept, then say nothing
        mons = f"[v2:127.0.0.1:{v2},v1:127.0.0.1:{v1}]"
        access = _conf_variant(ceph_cluster, tmp_path / "hung.conf", mon_host=mons)
        seconds, error = _timed(access, "rbd:rbd/anything", timeout_s=5)
    assert f"no monitor answered within 2 s (monitors {mons})" in error.message
    assert seconds < 5


_PROBE_RBD = """
import json, time
from iobench.errors import UserError
from iobench.probe.ceph import CephAccess, parse_rbd_spec, probe_rbd
start = time.monotonic()
try:
    probe_rbd(CephAccess(conf={conf!r}), parse_rbd_spec("rbd:rbd/anything"))
    said = "answered"
except UserError as e:
    said = e.message
print(json.dumps({{"seconds": time.monotonic() - start, "said": said}}))
"""


def test_live_a_stuck_pool_answers_within_seconds(ceph_cluster: CephCluster) -> None:
    """Two replicas required on a one-OSD cluster: the pool's placement groups never become
    active, and librados would wait forever for them."""
    ceph_cluster.ceph("osd", "pool", "create", "probe-stuck", "8", "8")
    try:
        ceph_cluster.ceph("osd", "pool", "set", "probe-stuck", "size", "2",
                          "--yes-i-really-mean-it")  # fmt: skip
        ceph_cluster.ceph("osd", "pool", "set", "probe-stuck", "min_size", "2")
        seconds, error = _timed(CephAccess(conf=str(ceph_cluster.conf)), "rbd:probe-stuck/x", 5)
    finally:  # at once: while it is here, every listing of clones waits for it
        ceph_cluster.remove_pool("probe-stuck")
    assert "the cluster did not answer within 2 s (OSDs down or placement groups inactive?)" in (
        error.message
    )
    assert seconds < 5
