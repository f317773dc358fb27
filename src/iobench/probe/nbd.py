"""NBD exports: the URI a user names, checked as libnbd and fio will read it, and what
``nbdinfo`` says about the export behind it.

**The URI** (:func:`parse_nbd_uri`) follows libnbd's ``nbd_connect_uri`` (libnbd 1.14, what
fio 3.33's ``nbd`` engine calls) and the NBD project's doc/uri.md:

- schemes ``nbd``, ``nbds`` (TLS required), ``nbd+unix``, ``nbds+unix``; lower case, as
  libnbd compares them. ``nbd+vsock`` reaches a VM's host only and is refused.
- TCP: ``[user@]host[:port]``, port 10809 by default, ``localhost`` when the host is empty
  (libnbd's rule); an IPv6 address in brackets. Unix: no host or port, and the query's
  ``socket=PATH`` (required there, refused elsewhere, as libnbd does). The path must be
  absolute: fio runs in a private working directory of iobench's.
- The export name is the path without its leading ``/``, percent-decoded.
- The user name is the TLS user name (libnbd's ``nbd_set_tls_username``); a password
  (``user:secret@``) has no meaning to libnbd and is refused rather than written to job
  files and process lists. The user name is a credential's half: :attr:`NbdUri.shown`
  leaves it out, and only that is stored.
- Query parameters: ``socket`` only. ``tls-certificates`` and ``tls-psk-file`` make libnbd
  read local files, which it denies unless the caller allows it
  (``nbd_set_uri_allow_local_file``): nbdinfo allows it, fio's engine does not, so such a
  URI would pass the probe and fail in fio. ``tls-type``, ``tls-hostname`` and
  ``tls-verify-peer`` (doc/uri.md) are ignored by libnbd 1.14: a user asking for peer
  verification would silently not get it. Anything else is unknown (doc/uri.md: "SHOULD be
  diagnosed").
- The text itself: printable ASCII (a URI writes every other character percent-encoded),
  no ``;``, ``#``, ``$`` or ``\\`` (fio cuts an option value at ``;`` and ``#``, expands
  ``$`` and treats ``\\`` as an escape: see fio/jobfile.py), at most :data:`MAX_URI_CHARS`.
  Percent-encoded, an export name or socket path may hold them; decoded, they must print.

:attr:`NbdUri.uri` is the canonical text (explicit port, characters outside
``A-Za-z0-9-._~/`` percent-encoded), which is what fio gets as ``uri=``.

**The export** (:func:`probe_nbd`): ``nbdinfo --json --no-content URI`` (``--no-content``:
nbdinfo would otherwise read the export's first blocks and run file(1) on them). Every
failure is a :class:`UserError` that names which: unreachable, no such export, TLS, nbdinfo
missing. A server that never answers costs ``timeout_s``, not TCP's two minutes.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote_to_bytes

from iobench import jsontext
from iobench.errors import UserError
from iobench.probe.host import ToolRun, run_tool
from iobench.units import printable, quoted

NBD_PORT = 10809
MAX_URI_CHARS = 1024  # iobench's bound: far beyond any real URI, short enough to show
EXPORT_NAME_BYTES = 4096  # the NBD protocol's limit on a string (NBD_MAX_STRING)
SOCKET_PATH_BYTES = 107  # sun_path holds 108 bytes with the terminating NUL
SERVER_TEXT_CHARS = 4096  # a server's description, as stored
SCHEMES = {"nbd": (False, False), "nbds": (False, True), "nbd+unix": (True, False)}
SCHEMES["nbds+unix"] = (True, True)  # scheme -> (unix socket, TLS)
FORMS = (
    "nbd://HOST[:PORT]/EXPORT, nbds://HOST[:PORT]/EXPORT (TLS), "
    "nbd+unix:///EXPORT?socket=/PATH or nbds+unix:///EXPORT?socket=/PATH"
)
NBDINFO_PACKAGE = "libnbd-bin"

# fio's mangling of option values (fio/jobfile.py) and what a URI writes only encoded
_FIO_CHARS = {
    ";": "fio ends an option value at ';' (and libnbd splits a query there)",
    "#": "fio ends an option value at '#' (and a URI starts its fragment there)",
    "$": "fio expands '$' in an option value",
    "\\": "fio treats '\\' in an option value as an escape",
}
_URI_SAFE = "/"  # with quote()'s own: letters, digits and -._~
_HOST_RE = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_IGNORED_BY_LIBNBD = ("tls-type", "tls-hostname", "tls-verify-peer", "tls-username")
_LOCAL_FILES = ("tls-certificates", "tls-psk-file")


@dataclass(frozen=True)
class NbdUri:
    """An NBD URI as libnbd reads it; ``uri`` is its canonical text (what fio gets)."""

    scheme: str
    host: str | None  # None for a unix socket
    port: int | None  # None for a unix socket
    export: str
    socket: str | None
    tls: bool
    uri: str
    user: str | None = None  # the TLS user name, never stored or shown

    @property
    def shown(self) -> str:
        """The URI without the user name: what iobench prints and stores."""
        return self.uri.replace(f"//{quote(self.user, safe='')}@", "//") if self.user else self.uri

    @property
    def where(self) -> str:
        """The server's address for a message: ``HOST:PORT`` or ``the socket PATH``."""
        if self.socket is not None:
            return f"the socket {printable(self.socket)}"
        host = f"[{self.host}]" if self.host and ":" in self.host else self.host
        return f"{host}:{self.port}"


def _refused(text: str, why: str) -> UserError:
    return UserError(f"NBD URI {quoted(text)}: {why}", f"accepted forms: {FORMS}")


def parse_nbd_uri(text: str) -> NbdUri:
    """``text`` checked and read as libnbd reads it; UserError naming the wrong part."""
    _check_text(text)
    scheme, sep, rest = text.partition("://")
    if not sep or scheme not in SCHEMES:
        raise _refused(text, _scheme_problem(scheme if sep else text))
    unix, tls = SCHEMES[scheme]
    before, _, query = rest.partition("?")
    authority, slash, path = before.partition("/")
    user, hostport = _userinfo(text, authority)
    export = _decoded(text, path, "the export name") if slash else ""
    if len(export.encode()) > EXPORT_NAME_BYTES:
        raise _refused(text, f"the export name is over {EXPORT_NAME_BYTES} bytes (NBD's limit)")
    socket = _socket(text, query, unix)
    if unix:
        if hostport:
            raise _refused(text, f"{scheme}:// names no host or port (the socket is the query's)")
        host, port = None, None
    else:
        host, port = _hostport(text, hostport)
    canonical = _canonical(scheme, user, host, port, export, socket)
    return NbdUri(scheme, host, port, export, socket, tls, canonical, user)


def _check_text(text: str) -> None:
    if len(text) > MAX_URI_CHARS:
        raise UserError(
            f"NBD URI of {len(text)} characters: iobench takes at most {MAX_URI_CHARS}",
            f"accepted forms: {FORMS}",
        )
    for i, char in enumerate(text):
        if char in _FIO_CHARS:
            raise _refused(
                text,
                f"character {i + 1} is {char!r}: {_FIO_CHARS[char]}; an export name or socket "
                f"path that holds it is written percent-encoded ({quote(char, safe='')})",
            )
        if not (char.isascii() and char.isprintable()) or char in ' "<>`{}|^':
            raise _refused(
                text,
                f"character {i + 1} (U+{ord(char):04X}) does not belong in a URI unencoded; "
                f"write it percent-encoded ({quote(char, safe='')})",
            )


def _scheme_problem(scheme: str) -> str:
    if scheme.lower() in SCHEMES:
        return f"the scheme is written {quoted(scheme)}: libnbd takes it in lower case only"
    if scheme in ("nbd+vsock", "nbds+vsock"):
        return "AF_VSOCK reaches a virtual machine's host only; iobench does not take it"
    return "it does not start with nbd://, nbds://, nbd+unix:// or nbds+unix://"


def _decoded(text: str, part: str, what: str) -> str:
    """A percent-encoded part as libnbd passes it on: decoded, UTF-8, printable."""
    if _BAD_ESCAPE.search(part):
        raise _refused(text, f"{what} has a '%' that is not followed by two hex digits")
    try:
        value = unquote_to_bytes(part).decode("utf-8")
    except UnicodeDecodeError:
        raise _refused(text, f"{what} does not decode to UTF-8 text") from None
    bad = next((c for c in value if not c.isprintable()), None)
    if bad is not None:
        raise _refused(
            text, f"{what} holds U+{ord(bad):04X}, which does not print (control or bidi)"
        )
    return value


def _userinfo(text: str, authority: str) -> tuple[str | None, str]:
    userinfo, at, hostport = authority.rpartition("@")
    if not at:
        return None, authority
    if "@" in userinfo:
        raise _refused(text, "the authority holds more than one '@'")
    if ":" in userinfo:
        raise _refused(
            text.replace(userinfo, "USER:PASSWORD", 1),
            "it holds a password (user:password@): libnbd has no use for one, and iobench "
            "writes no secret into job files",
        )
    user = _decoded(text, userinfo, "the user name")
    if not user:
        raise _refused(text, "the user name before '@' is empty")
    return user, hostport


def _hostport(text: str, hostport: str) -> tuple[str, int]:
    if hostport.startswith("["):
        inside, bracket, tail = hostport[1:].partition("]")
        if not bracket or tail[:1] not in ("", ":"):
            raise _refused(text, "an IPv6 address is written [ADDRESS] or [ADDRESS]:PORT")
        host = _ipv6(text, inside)
    else:
        name, colon, rest = hostport.partition(":")
        host, tail = _hostname(text, name) if name else "localhost", colon + rest  # libnbd's
    if not tail:
        return host, NBD_PORT
    port_text = tail[1:]
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise _refused(text, f"the port {quoted(port_text)} is not a number from 1 to 65535")
    return host, int(port_text)


def _ipv6(text: str, inside: str) -> str:
    try:
        if "%" in inside:  # a zone (fe80::1%25eth0, RFC 6874): not taken
            raise ValueError(inside)
        return str(ipaddress.IPv6Address(inside))
    except ValueError:
        raise _refused(
            text, f"{quoted(inside)} is not an IPv6 address (zones are not taken)"
        ) from None


def _hostname(text: str, host: str) -> str:
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        pass
    labels = host.removesuffix(".").split(".")
    if len(host) > 253 or not all(_HOST_RE.fullmatch(label) for label in labels):
        raise _refused(
            text,
            f"the host {quoted(host)} is neither an IPv4 address, an [IPv6] address nor a "
            "host name (letters, digits, '-', '_' and dots)",
        )
    return host


def _query(text: str, query: str) -> dict[str, str]:
    params: dict[str, str] = {}
    for item in query.split("&"):
        if not item:
            continue  # "&&": libnbd skips an empty section too
        raw_name, _, raw_value = item.partition("=")
        name = _decoded(text, raw_name, "a query parameter's name")
        if name in params:
            raise _refused(text, f"the query names {quoted(name)} twice")
        params[name] = _decoded(text, raw_value, f"the value of {quoted(name)}")
    for name in params:
        if name in _LOCAL_FILES:
            raise _refused(
                text,
                f"{name}= makes libnbd read a local file, which fio's nbd engine does not "
                "allow (nbd_set_uri_allow_local_file): the run would fail in fio",
            )
        if name in _IGNORED_BY_LIBNBD:
            raise _refused(text, f"{name}= is not acted on by libnbd 1.14: it would be ignored")
        if name != "socket":
            raise _refused(text, f"{quoted(name)} is not a query parameter libnbd takes")
    return params


def _socket(text: str, query: str, unix: bool) -> str | None:
    socket = _query(text, query).get("socket")
    if not unix:
        if socket is not None:
            raise _refused(text, "socket= belongs to nbd+unix:// and nbds+unix:// only")
        return None
    if not socket:
        raise _refused(text, "a unix socket URI needs ?socket=/PATH")
    if not socket.startswith("/"):
        raise _refused(
            text, "the socket path must be absolute: fio runs in a working directory of its own"
        )
    if len(socket.encode()) > SOCKET_PATH_BYTES:
        raise _refused(
            text, f"the socket path is over {SOCKET_PATH_BYTES} bytes, a unix socket's limit"
        )
    return socket


def _canonical(
    scheme: str, user: str | None, host: str | None, port: int | None, export: str, sock: str | None
) -> str:
    authority = f"{quote(user, safe='')}@" if user else ""
    if host is not None:
        authority += f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    query = f"?socket={quote(sock, safe=_URI_SAFE)}" if sock is not None else ""
    return f"{scheme}://{authority}/{quote(export, safe=_URI_SAFE)}{query}"


# -- the export ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class NbdExport:
    """What nbdinfo says about one export. ``flags`` holds every ``is_*`` and ``can_*`` that
    nbdinfo printed (a flag the server did not state is absent); block sizes are None when
    the server advertises none."""

    uri: NbdUri
    size_bytes: int
    export_name: str  # the server's (canonical) name for it
    description: str | None
    flags: tuple[tuple[str, bool], ...]
    block_size_min: int | None
    block_size_preferred: int | None
    block_size_max: int | None
    protocol: str | None  # "newstyle-fixed", "newstyle", "oldstyle"
    tls: bool | None  # negotiated
    structured_replies: bool | None
    contexts: tuple[str, ...] = ()  # meta contexts: base:allocation ...

    def flag(self, name: str) -> bool | None:
        return dict(self.flags).get(name)

    @property
    def readonly(self) -> bool | None:
        return self.flag("is_read_only")

    def context(self) -> dict[str, Any]:
        """JSON-ready, for storage with a run: the URI without its user name."""
        return {
            "uri": self.uri.shown,
            "transport": "unix" if self.uri.socket is not None else "tcp",
            "export": self.export_name,
            "description": self.description,
            "size_bytes": self.size_bytes,
            "readonly": self.readonly,
            "flags": dict(self.flags),
            "block_size": {
                "minimum": self.block_size_min,
                "preferred": self.block_size_preferred,
                "maximum": self.block_size_max,
            },
            "protocol": self.protocol,
            "tls": self.tls,
            "structured_replies": self.structured_replies,
            "contexts": list(self.contexts),
        }


def probe_nbd(uri: NbdUri, *, timeout_s: float = 10.0) -> NbdExport:
    """The export ``uri`` names, as nbdinfo sees it; UserError naming what failed."""
    run = run_tool(["nbdinfo", "--json", "--no-content", uri.uri], timeout_s=timeout_s)
    if not run.ok:
        raise nbd_failure(uri, run, timeout_s)
    return export_of(uri, run.stdout)


def nbd_failure(uri: NbdUri, run: ToolRun, timeout_s: float) -> UserError:
    """Why nbdinfo gave no answer, as a UserError naming which (pure: tests feed it
    recorded runs)."""
    if run.error == "not installed":
        return UserError(
            "nbdinfo is not installed: iobench reads an NBD export's size and flags with it",
            f"install {NBDINFO_PACKAGE} (apt-get install {NBDINFO_PACKAGE})",
        )
    if run.returncode is None:
        return UserError(
            f"the NBD server at {uri.where} did not answer within {timeout_s:g} s",
            "check the address, that the server runs and that no firewall drops the packets",
        )
    said = _said(uri, run.stderr)
    message, hint = _classified(uri, said)
    return UserError(f"{uri.shown}: {message} (nbdinfo: {said})", hint)


def _said(uri: NbdUri, stderr: str) -> str:
    """nbdinfo's first line that is not its --list suggestion, printable, short, without the
    user name."""
    lines = [line for line in stderr.splitlines() if line.strip() and "suggestion:" not in line]
    said = re.sub(r"^\S*nbdinfo: ", "", lines[0]) if lines else "no message"
    for written in {uri.user, quote(uri.user, safe="")} if uri.user else ():
        said = said.replace(f"{written}@", "USER@")  # as nbdinfo writes it in a URI
    said = printable(said)
    return said if len(said) <= 300 else said[:300] + "..."


# (what nbdinfo says, for which transport or TLS) -> (message, hint); first match wins
_RUNNING = "check that the server runs and listens there"
_CAUSES: tuple[tuple[str, str | None, str, str], ...] = (
    ("Connection refused", "tcp", "nothing listens at {where} (connection refused)", _RUNNING),
    ("Connection refused", "unix", "nobody listens on {where} (connection refused)", _RUNNING),
    ("No such file or directory", "connect", "{where} does not exist", _RUNNING),
    ("Permission denied", "connect", "may not connect to {where} (permission denied)", ""),
    ("No route to host", None, "{where} cannot be reached (no route to host)", ""),
    ("Network is unreachable", None, "{where} cannot be reached (network unreachable)", ""),
    ("getaddrinfo", None, "the host name {host} does not resolve", "check the host name"),
    ("has no export named", None, "the server has no export {export}", "{list}"),
    ("request: No such file or directory", None, "the server has no export {export}", "{list}"),
    ("requires TLS", None, "the server requires TLS", "use nbds:// (or nbds+unix://)"),
    ("NBD magic", None, "{where} does not speak NBD (no NBD greeting)", "check the port"),
    ("Operation not supported", "plain", "the server refused the export: it may require TLS",
     "use nbds:// (or nbds+unix://) if the server requires TLS"),
    ("gnutls", None, "the TLS handshake with the server failed",
     "check the server's certificate and libnbd's (~/.pki/libnbd or /etc/pki/libnbd)"),
    ("connection is closed", "tls", "the server closed the connection when asked for TLS: "
     "it may offer no TLS", "use nbd:// if the server offers no TLS"),
)  # fmt: skip


def _classified(uri: NbdUri, said: str) -> tuple[str, str]:
    kinds = {
        "tcp" if uri.socket is None else "unix",
        "tls" if uri.tls else "plain",
        *(("connect",) if "connect:" in said else ()),
    }
    words = {
        "where": uri.where,
        "host": quoted(uri.host or ""),
        "export": quoted(uri.export),
        "list": f"nbdinfo --list '{uri.shown}' lists the server's exports",
    }
    for needle, kind, message, hint in _CAUSES:
        if needle in said and (kind is None or kind in kinds):
            return message.format(**words), hint.format(**words)
    return "nbdinfo could not read the export", _RUNNING


def export_of(uri: NbdUri, stdout: str) -> NbdExport:
    """nbdinfo's JSON read into an NbdExport (pure); UserError when it is not what nbdinfo
    prints."""
    try:
        doc = jsontext.load(stdout)
    except ValueError as e:
        raise _unreadable(uri, f"it is not JSON ({e})") from None
    exports = doc.get("exports") if isinstance(doc, dict) else None
    if not isinstance(exports, list) or len(exports) != 1 or not isinstance(exports[0], dict):
        raise _unreadable(uri, "it does not describe exactly one export")
    found = exports[0]
    size = found.get("export-size")
    if type(size) is not int or size < 0:
        raise _unreadable(uri, "it gives no export size")
    return NbdExport(
        uri=uri,
        size_bytes=size,
        export_name=_text(found.get("export-name")) or "",
        description=_text(found.get("description")),
        flags=tuple(
            (key, value)
            for key, value in found.items()
            if re.fullmatch(r"(is|can)_[a-z_]{1,40}", key) and isinstance(value, bool)
        ),
        block_size_min=_positive(found.get("block_size_minimum")),
        block_size_preferred=_positive(found.get("block_size_preferred")),
        block_size_max=_positive(found.get("block_size_maximum")),
        protocol=_text(doc.get("protocol")),
        tls=_bool(doc.get("TLS")),
        structured_replies=_bool(doc.get("structured")),
        contexts=tuple(t for c in found.get("contexts") or [] if (t := _text(c)) is not None)[:32],
    )


def _unreadable(uri: NbdUri, why: str) -> UserError:
    return UserError(
        f"{uri.shown}: nbdinfo's answer cannot be read: {why}",
        f"check nbdinfo ({NBDINFO_PACKAGE}) with: nbdinfo --json '{uri.shown}'",
    )


def _text(value: object) -> str | None:
    """A server's text as iobench keeps it: printable, bounded."""
    if not isinstance(value, str):
        return None
    return printable(value[:SERVER_TEXT_CHARS])


def _positive(value: object) -> int | None:
    return value if type(value) is int and 0 < value < 2**63 else None


def _bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None
