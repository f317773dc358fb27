"""Ceph RBD images: the ``rbd:POOL/IMAGE`` a user names, how iobench reaches the cluster,
and what the cluster says about the image, its pool and itself.

**The name** (:func:`parse_rbd_spec`): ``rbd:POOL/IMAGE``. Ceph's rbd tool refuses ``/``
and ``@`` in pool, namespace and image names (``rbd_validate_names``); iobench also
refuses what fio 3.33's ``rbd`` engine cannot reach or would mangle: a namespace
(``POOL/NS/IMAGE``: the engine has no namespace option), a snapshot (``@SNAP``: no snapname
option, and snapshots are read-only), ``:`` (QEMU's ``rbd:pool/image:id=..:conf=..``
options, which iobench does not read: ``--ceph-user``, ``--ceph-conf``), ``;``, ``#``,
``$`` and ``\\`` (fio cuts, expands or escapes them in an option value), blanks at either
end (fio strips them), what does not print (control and bidi characters), and names over
:data:`NAME_BYTES`. ``{client}`` is not a name: with ``--clients`` iobench puts each
client's host name in its place before the name is read here.

**Access** (:class:`CephAccess`): the config file, the user (the id without ``client.``) and
the cluster name, as arguments for the ceph, rbd and rados tools, with librados' timeouts
cut from forever (``rados_osd_op_timeout`` 0, ``client_mount_timeout`` 300 s) to a few
seconds, so that an unreachable monitor or a dead OSD answers within ``timeout_s``. The
tools read the keyring themselves; iobench never reads a key.

**The image** (:func:`probe_rbd`): ``rbd info`` first (it tells an unreachable cluster, wrong
credentials, a missing pool or image apart: :func:`ceph_failure`), then ``rbd status``
(watchers) alone, as ``rbd config image list`` opens the image for writing and shows as a
watcher while it runs; then, at once, ``rbd du`` (only with fast-diff: without it, rbd du
reads every object), ``rbd children`` (only when the image has snapshots: a clone needs one,
and the listing reads every pool), ``rbd config image list`` (QoS), ``ceph osd dump`` (fsid,
pools, erasure-code profiles), ``ceph versions`` (the daemons' versions; ``ceph version`` is
one monitor's), ``rbd --version`` (this host's librbd, fio's) and the image's first
:data:`FIRST_BYTES` through ``rbd export`` (read-only, so no watcher; librbd follows a
clone to its parent and honours striping; one object's worth read from the cluster). What
could not be found out is None, with the reason in ``unchecked``, never a silent "none".
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from iobench.errors import UserError
from iobench.model import CLIENT_FIELD
from iobench.probe.cephtools import (
    ClusterFacts,
    Parent,
    PoolFacts,
    QosLimit,
    Unreadable,
    Watcher,
    children_of,
    cluster_of,
    info_fields,
    pools_of,
    qos_of,
    redacted,
    tail_of,
    usage_of,
    watchers_of,
)
from iobench.probe.devices import Signature, signatures_of
from iobench.probe.host import ToolRun, find_tool, run_tool
from iobench.units import printable, quoted

PREFIX = "rbd:"
FORM = "rbd:POOL/IMAGE"
NAME_BYTES = 1024  # Ceph takes longer pool names; an image's is bounded by RADOS (~2040)
FIRST_BYTES = 64 * 1024
CEPH_PACKAGE = "ceph-common"
TOOLS = ("rbd", "ceph")
_FIO_CHARS = {
    ";": "fio ends an option value at ';'",
    "#": "fio ends an option value at '#'",
    "$": "fio expands '$' in an option value",
    "\\": "fio treats '\\' in an option value as an escape",
}
_ENTITY_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]{0,127}")
_CLUSTER_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")


# -- the name -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RbdName:
    """An image named ``rbd:POOL/IMAGE``."""

    pool: str
    image: str

    @property
    def spec(self) -> str:
        """``POOL/IMAGE``, as the rbd tool takes it."""
        return f"{self.pool}/{self.image}"

    @property
    def text(self) -> str:
        return f"{PREFIX}{self.spec}"


def _rbd_refused(text: str, why: str) -> UserError:
    return UserError(f"RBD image {quoted(text)}: {why}", f"name an RBD image as {FORM}")


def parse_rbd_spec(text: str) -> RbdName:
    """``rbd:POOL/IMAGE`` checked; UserError naming the wrong part and the accepted form."""
    if len(text) > 2 * NAME_BYTES + len(PREFIX) + 1:
        raise UserError(f"RBD image name of {len(text)} characters: too long", f"name it as {FORM}")
    if not text.startswith(PREFIX):
        raise _rbd_refused(text, f"it does not start with {PREFIX!r}")
    spec = text.removeprefix(PREFIX)
    if ":" in spec:
        raise _rbd_refused(
            text,
            "it holds ':': QEMU's rbd:POOL/IMAGE:OPTION=VALUE options are not read; give "
            "--ceph-conf and --ceph-user instead",
        )
    if "@" in spec:
        raise _rbd_refused(
            text, "'@' names a snapshot, which is read-only and which fio's rbd engine cannot open"
        )
    parts = spec.split("/")
    if len(parts) == 3:
        raise _rbd_refused(
            text, "POOL/NAMESPACE/IMAGE: fio 3.33's rbd engine has no option for a namespace"
        )
    if len(parts) == 1:
        raise _rbd_refused(text, "it names no pool: write POOL/IMAGE")
    if len(parts) != 2:
        raise _rbd_refused(text, "a pool or image name holds no '/'")
    pool, image = parts
    _check_name(text, pool, "the pool name")
    _check_name(text, image, "the image name")
    return RbdName(pool, image)


def _check_name(text: str, name: str, what: str) -> None:
    if not name:
        raise _rbd_refused(text, f"{what} is empty")
    if len(name.encode()) > NAME_BYTES:
        raise _rbd_refused(text, f"{what} is over {NAME_BYTES} bytes long")
    for char in name:
        if char in _FIO_CHARS:
            raise _rbd_refused(text, f"{what} holds {char!r}: {_FIO_CHARS[char]}")
        if not char.isprintable():
            raise _rbd_refused(
                text, f"{what} holds U+{ord(char):04X}, which does not print (control or bidi)"
            )
        if char in "{}":
            raise _rbd_refused(
                text,
                f"{what} holds {char!r}: only {CLIENT_FIELD} in the image name, with --clients, "
                "gives each client its own image",
            )
    if name != name.strip():
        raise _rbd_refused(text, f"{what} starts or ends with a blank, which fio strips")


# -- access -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CephAccess:
    """How the tools reach the cluster: the config file (made absolute: fio runs in a
    directory of its own), the user's id (``admin``, not ``client.admin``), the cluster's
    name. None: the tools' defaults (CEPH_CONF, /etc/ceph/CLUSTER.conf; client.admin)."""

    conf: str | None = None
    user: str | None = None
    cluster: str = "ceph"

    def __post_init__(self) -> None:
        if self.conf is not None:
            if not self.conf or not self.conf.isprintable():
                raise UserError(f"Ceph config file {quoted(self.conf)}: not a path that prints")
            object.__setattr__(self, "conf", str(Path(self.conf).absolute()))
        if self.user is not None:
            user = self.user.removeprefix("client.")
            if not _ENTITY_RE.fullmatch(user):
                raise UserError(
                    f"Ceph user {quoted(self.user)}: not a user id",
                    "name it as Ceph does, without 'client.': admin, or volumes (letters, "
                    "digits, '_', '-', '.', '@')",
                )
            object.__setattr__(self, "user", user)
        if not _CLUSTER_RE.fullmatch(self.cluster):
            raise UserError(f"Ceph cluster name {quoted(self.cluster)}: not a cluster name")

    def tool_args(self, timeout_s: float = 10.0) -> list[str]:
        """The arguments every ceph, rbd or rados call takes: where and who, and librados'
        timeouts, each a part of ``timeout_s`` (connecting, then one operation, fit in it)."""
        each = str(max(1, int(timeout_s * 0.4)))
        args = self.who_args()
        for option in ("client_mount_timeout", "rados_mon_op_timeout", "rados_osd_op_timeout"):
            args += [f"--{option}", each]
        return args

    def who_args(self) -> list[str]:
        """``--conf FILE``, ``--id USER``, ``--cluster NAME``: those that are not defaults."""
        args = ["--conf", self.conf] if self.conf else []
        args += ["--id", self.user] if self.user else []
        return args + (["--cluster", self.cluster] if self.cluster != "ceph" else [])

    def config_file(self, env: Mapping[str, str] | None = None) -> str | None:
        """The config file the tools read: ``conf``, else $CEPH_CONF, else the first of
        librados' defaults that exists; None when there is none."""
        env = os.environ if env is None else env
        if self.conf:
            return self.conf
        if env.get("CEPH_CONF"):
            return str(Path(env["CEPH_CONF"]).absolute())
        home = env.get("HOME", "")
        for path in (f"/etc/ceph/{self.cluster}.conf", f"{home}/.ceph/{self.cluster}.conf"):
            if Path(path).exists():
                return path
        return None

    def context(self, env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Where and who, for storage: the config file's path and the user's id; no key."""
        return {
            "conf": self.config_file(env),
            "user": self.user or "admin",
            "cluster": self.cluster,
        }


def check_access(access: CephAccess, env: Mapping[str, str] | None = None) -> str:
    """The config file the tools will read, checked to be a readable regular file, and the
    tools there; UserError naming which is not. Nothing is sent to the cluster."""
    missing = [tool for tool in TOOLS if find_tool(tool) is None]
    if missing:
        raise UserError(
            f"{' and '.join(missing)} not installed: iobench reaches Ceph with Ceph's own tools",
            f"install {CEPH_PACKAGE} (apt-get install {CEPH_PACKAGE})",
        )
    path = access.config_file(env)
    if path is None:
        raise UserError(
            f"no Ceph config file: --ceph-conf not given, CEPH_CONF not set and no "
            f"/etc/ceph/{access.cluster}.conf",
            "give --ceph-conf FILE (the cluster's ceph.conf, with mon_host)",
        )
    env = os.environ if env is None else env
    named = "--ceph-conf" if access.conf else "CEPH_CONF" if env.get("CEPH_CONF") else "default"
    problem = _unreadable(path)
    if problem:
        raise UserError(
            f"Ceph config file {printable(path)} ({named}): {problem}",
            "give --ceph-conf FILE: the cluster's ceph.conf, readable by this user",
        )
    return path


def _unreadable(path: str) -> str | None:
    """Why ``path`` is not a readable regular file (opened without blocking: a FIFO would
    hang a tool); None when it is one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as e:
        return e.strerror or str(e)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "not a regular file"
    finally:
        os.close(fd)
    return None


# -- what the tools say ------------------------------------------------------------------------


@dataclass(frozen=True)
class RbdImage:
    """What the cluster says about one image. A fact that could not be found out is None,
    and ``unchecked`` says why: None is "unknown", never "none"."""

    name: RbdName
    access: CephAccess
    size_bytes: int
    object_size: int | None
    features: tuple[str, ...]
    flags: tuple[str, ...] = ()
    image_id: str | None = None
    block_name_prefix: str | None = None
    data_pool: str | None = None
    stripe_unit: int | None = None
    stripe_count: int | None = None
    snapshots: int | None = None
    parent: Parent | None = None
    used_bytes: int | None = None
    provisioned_bytes: int | None = None
    watchers: tuple[Watcher, ...] | None = None
    children: tuple[str, ...] | None = None  # POOL/IMAGE of each clone
    qos: tuple[QosLimit, ...] | None = None
    pool: PoolFacts | None = None
    data_pool_facts: PoolFacts | None = None
    cluster: ClusterFacts = field(default_factory=ClusterFacts)
    first_bytes: bytes | None = field(default=None, repr=False)
    unchecked: tuple[str, ...] = ()

    def context(self) -> dict[str, Any]:
        """JSON-ready, for storage with a run: no key, no keyring, no first bytes."""
        parent = self.parent
        return {
            "image": self.name.text,
            "access": self.access.context(),
            "size_bytes": self.size_bytes,
            "object_size": self.object_size,
            "features": list(self.features),
            "flags": list(self.flags),
            "data_pool": self.data_pool,
            "stripe": {"unit": self.stripe_unit, "count": self.stripe_count},
            "snapshots": self.snapshots,
            "parent": parent and {**parent.__dict__},
            "used_bytes": self.used_bytes,
            "provisioned_bytes": self.provisioned_bytes,
            "watchers": _listed(self.watchers, lambda w: {**w.__dict__}),
            "children": _listed(self.children, str),
            "qos": _listed(self.qos, lambda q: {**q.__dict__}),
            "pool": self.pool and self.pool.context(),
            "data_pool_facts": self.data_pool_facts and self.data_pool_facts.context(),
            "cluster": self.cluster.context(),
            "unchecked": list(self.unchecked),
        }


def _listed(items: tuple[Any, ...] | None, each: Callable[[Any], Any]) -> list[Any] | None:
    return None if items is None else [each(item) for item in items]


# -- errors ------------------------------------------------------------------------------------

# (what the tool says, as a regular expression) -> (message, hint); the first match wins
_CREDENTIALS = "check --ceph-user and the keyring its config file names for that user"
_CAUSES: tuple[tuple[str, str, str], ...] = (
    (r"parse error|error reading config file|unable to open config file",
     "the config file {conf} cannot be read as a Ceph config", "check the file"),
    (r"cannot identify monitors|no monitors specified",
     "the config file {conf} names no monitor (mon_host)", "give the cluster's ceph.conf"),
    (r"authenticate timed out|RADOS timed out \(error connecting|failed to fetch mon config",
     "no monitor answered within {each} s ({mons})",
     "check that the monitors run and that this host reaches them"),
    (r"handle_auth_bad_method|[Pp]ermission denied|\(13\)|unable to find a keyring",
     "the cluster refused client.{user}: no such user, or its key is wrong or missing",
     _CREDENTIALS),
    (r"Operation not permitted|\(1\)", "client.{user} may not use pool {pool} (its caps)",
     _CREDENTIALS),
    (r"error opening pool .*\(2\)",
     "the cluster has no pool {pool}", "`ceph osd pool ls` lists the pools"),
    (r"error opening image .*\(2\)|image .* does not exist",
     "pool {pool} has no image {image}", "`rbd ls {pool_arg}` lists the pool's images"),
    (r"\(110\)|timed out",
     "the cluster did not answer within {each} s (OSDs down or placement groups inactive?)",
     "`ceph health detail` says why"),
)  # fmt: skip


def ceph_failure(
    name: RbdName, access: CephAccess, run: ToolRun, timeout_s: float, mons: str | None = None
) -> UserError:
    """Why a ceph or rbd call failed, as a UserError naming which (pure: tests feed it
    recorded runs). ``mons``: the monitors the config names, for the message."""
    tool = run.argv[0] if run.argv else "rbd"
    if run.error == "not installed":
        return UserError(
            f"{tool} is not installed: iobench reaches Ceph with Ceph's own tools",
            f"install {CEPH_PACKAGE} (apt-get install {CEPH_PACKAGE})",
        )
    if run.returncode is None:
        return UserError(
            f"{name.text}: the Ceph cluster did not answer within {timeout_s:g} s "
            f"({mons or 'monitors as the config file names them'})",
            "check that the monitors run and that this host reaches them",
        )
    words = {
        "conf": printable(access.config_file() or "?"),
        "each": access.tool_args(timeout_s)[-1],
        "mons": f"monitors {mons}" if mons else "the monitors the config file names",
        "user": access.user or "admin",
        "pool": quoted(name.pool),
        "image": quoted(name.image),
        "pool_arg": shlex.quote(name.pool),
    }
    said = tail_of(run.stderr).removeprefix(f"{tool}: ")
    for pattern, message, hint in _CAUSES:
        if re.search(pattern, run.stderr):
            return UserError(
                f"{name.text}: {message.format(**words)} ({tool}: {said})", hint.format(**words)
            )
    return UserError(
        f"{name.text}: {tool} failed with exit code {run.returncode}: {said}",
        f"try: {shlex.join(run.argv)}",
    )


def monitors(access: CephAccess) -> str | None:
    """The monitors the config file names (``ceph-conf --lookup mon_host``: local, sends
    nothing), for a message; None when it cannot tell."""
    run = run_tool(["ceph-conf", *access.who_args(), "--lookup", "mon_host"], timeout_s=3)
    return redacted(run.stdout.strip()) if run.ok and run.stdout.strip() else None


# -- the probe ---------------------------------------------------------------------------------


def probe_rbd(access: CephAccess, name: RbdName, *, timeout_s: float = 10.0) -> RbdImage:
    """What the cluster says about ``name``, within about ``timeout_s``; UserError naming
    what is wrong (tools, config file, monitors, credentials, pool, image) before anything
    else is asked."""
    check_access(access)
    deadline = time.monotonic() + timeout_s
    args = access.tool_args(timeout_s)
    info = run_tool(["rbd", *args, "info", "--format", "json", name.spec], timeout_s=timeout_s)
    if not info.ok:
        mons = monitors(access) if info.returncode is None or "timed out" in info.stderr else None
        raise ceph_failure(name, access, info, timeout_s, mons)
    try:
        image = RbdImage(name, access, **info_fields(info.stdout))
    except Unreadable as e:
        raise UserError(f"{name.text}: rbd info's answer cannot be read: {e}") from None
    left = max(1.0, deadline - time.monotonic())
    return _completed(image, args, left)


def _calls(image: RbdImage, args: list[str]) -> dict[str, list[str]]:
    """The calls that complete an image's facts, by what they find; each only when it can
    answer quickly."""
    spec = image.name.spec
    calls = {
        "qos": ["rbd", *args, "config", "image", "list", "--format", "json", spec],
        "osd dump": ["ceph", *args, "osd", "dump", "--format", "json"],
        "versions": ["ceph", *args, "versions", "--format", "json"],
        "client": ["rbd", "--version"],
    }
    if "fast-diff" in image.features and not any("invalid" in f for f in image.flags):
        calls["usage"] = ["rbd", *args, "du", "--format", "json", spec]
    if image.snapshots != 0:
        calls["children"] = ["rbd", *args, "children", "--all", "--format", "json", spec]
    return calls


def _completed(image: RbdImage, args: list[str], timeout_s: float) -> RbdImage:
    """The image with what the other calls found: ``rbd status`` first and alone (``rbd
    config image list`` opens the image for writing, and would be seen as a watcher), then
    the rest at once (each a process: the ceph CLI alone takes half a second of CPU)."""
    status = ["rbd", *args, "status", "--format", "json", image.name.spec]
    runs = {"watchers": run_tool(status, timeout_s=timeout_s)}
    calls = _calls(image, args)
    export = ["rbd", *args, "export", "--no-progress", "--rbd-concurrent-management-ops", "1"]
    export += [image.name.spec, "-"]
    with ThreadPoolExecutor(max_workers=len(calls) + 1) as pool:
        head = pool.submit(read_head, export, FIRST_BYTES, timeout_s)
        done = pool.map(lambda argv: run_tool(argv, timeout_s=timeout_s), calls.values())
        runs.update(zip(calls, done, strict=True))
    unchecked: list[str] = []

    def answer(what: str, read: Callable[[str], Any]) -> Any:
        run = runs.get(what)
        if run is None:
            return None
        if not run.ok:
            unchecked.append(f"{what}: {run.reason() if run.error else tail_of(run.stderr)}")
            return None
        try:
            return read(run.stdout)
        except Unreadable as e:
            unchecked.append(f"{what}: {run.argv[0]} printed what iobench cannot read: {e}")
            return None

    return _assembled(image, answer, head.result(), unchecked)


def _assembled(
    image: RbdImage,
    answer: Callable[[str, Callable[[str], Any]], Any],
    head: tuple[bytes | None, str | None],
    unchecked: list[str],
) -> RbdImage:
    usage = answer("usage", lambda t: usage_of(t, image.name.image))
    if usage is None and not any(u.startswith("usage:") for u in unchecked):
        unchecked.append("usage: no valid fast-diff map: rbd du would read every object")
    pools = answer("osd dump", pools_of) or {}
    dump = answer("osd dump", lambda t: t)
    children = () if image.snapshots == 0 else answer("children", children_of)
    first, why = head
    if why:
        unchecked.append(f"first bytes: {why}")
    return replace(
        image,
        used_bytes=usage[0] if usage else None,
        provisioned_bytes=usage[1] if usage else None,
        watchers=answer("watchers", watchers_of),
        children=children,
        qos=answer("qos", qos_of),
        pool=pools.get(image.name.pool),
        data_pool_facts=pools.get(image.data_pool) if image.data_pool else None,
        cluster=cluster_of(dump, answer("versions", lambda t: t), answer("client", lambda t: t)),
        first_bytes=first,
        unchecked=tuple(dict.fromkeys(unchecked)),
    )


def read_head(argv: list[str], size: int, timeout_s: float) -> tuple[bytes | None, str | None]:
    """The first ``size`` bytes ``argv`` writes (all of them if it writes fewer and
    succeeds), then the process is killed: (bytes, None), or (None, why) when it fails or
    has not written them within ``timeout_s``. No shell, C locale, stdin closed; its
    stderr goes to a temporary file (a full pipe would stall it)."""
    exe = find_tool(argv[0])
    if exe is None:
        return None, f"{argv[0]} is not installed"
    fired = threading.Event()
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                [exe, *argv[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                env={**os.environ, "LC_ALL": "C"},
            )  # fmt: skip
        except OSError as e:
            return None, f"{argv[0]}: {e.strerror or e}"

        def expire() -> None:
            fired.set()
            proc.kill()

        timer = threading.Timer(timeout_s, expire)
        timer.start()
        with proc, contextlib.ExitStack() as stack:
            stack.callback(timer.cancel)
            assert proc.stdout is not None
            data = proc.stdout.read(size)
            if len(data) == size:
                proc.kill()
                return data, None
            if proc.wait() == 0 and not fired.is_set():
                return data, None
        err.seek(0)
        said = tail_of(err.read(64 * 1024).decode(errors="replace"))
    if fired.is_set():
        return None, f"{argv[0]} wrote {len(data)} bytes of {size} in {timeout_s:g} s"
    return None, f"{argv[0]} exited with {proc.returncode}: {said}"


def rbd_signatures(image: RbdImage) -> list[Signature]:
    """Filesystem, partition-table and RAID/LVM signatures in the image's first bytes,
    found by wipefs/blkid exactly as on a block device (probe/devices.py), on a private
    temporary file of the image's size (sparse) holding them, removed afterwards.
    UserError when the bytes were not read or no tool could look: never "none" unproven."""
    if image.first_bytes is None:
        unread = next((u for u in image.unchecked if u.startswith("first bytes")), "not read")
        raise UserError(
            f"{image.name.text}: its first bytes could not be read to look for signatures "
            f"({unread})"
        )
    with tempfile.TemporaryDirectory(prefix="iobench-rbd-") as tmp:
        path = str(Path(tmp) / "first-bytes")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with open(fd, "wb") as f:
            f.write(image.first_bytes)
            # at its size, so that a partition table's extent makes sense to blkid; if this
            # filesystem takes no file that large, the first bytes alone
            with contextlib.suppress(OSError):
                f.truncate(max(image.size_bytes, len(image.first_bytes)))
        found, problem = signatures_of(path, image.name.text)
    if problem:
        raise UserError(f"{image.name.text}: could not look for signatures: {problem}")
    return found
