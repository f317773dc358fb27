"""The launcher every fio that iobench starts runs under: fio ends when iobench ends, and
a fio client writes no more than it is allowed (docs/safety.md, docs/clients.md).

iobench starts ``python -I -S launch.py OPTIONS -- FIO ARGS...`` (this file, run as a
script: the standard library only, so it starts in milliseconds without the virtual
environment). The launcher

1. asks the kernel for a signal when iobench dies (``PR_SET_PDEATHSIG``) and checks that
   iobench is still there, so no fio outlives it, whatever kills iobench (``kill -9``, the
   OOM killer, a CI timeout): it then stops fio as Ctrl-C would (SIGTERM: fio ends its jobs;
   a fio client tells its servers to stop theirs), kills what is left after a grace
   period, removes the private directory and iobench's own test file, and exits;
2. with ``--ns``, puts fio in new PID and IPC namespaces where the kernel allows it (root,
   or an unprivileged user namespace): fio is the namespace's first process, so when it
   ends, or is killed, the kernel kills every job process it forked (fio's jobs run in
   sessions of their own, out of reach of a process-group kill), and System V shared memory
   (``mem=shm``, fio's thread area) is freed with the namespace instead of leaking;
3. with ``--spool BYTES`` (fio's client), gives fio a tmpfs of that size as its working
   directory, in a mount namespace of its own, and copies its regular files into the
   private directory after it ended: everything the client writes, however many files a
   server makes it write, fits in BYTES. Where no mount namespace can be made (or with
   ``--watch``, which tests use to exercise it), the launcher watches the directory's
   total instead and kills the client when it exceeds BYTES (a bound after the fact);
4. with ``--fsize``, ``--data``, ``--landlock`` and ``--uid``/``--gid``, confines fio's
   client: a cap on the size of each file, on its memory (a server can make it hold a
   message of 2 GiB, or inflate a log of a few MiB to gigabytes), writes denied outside
   its directory (Landlock), and the user ``nobody`` (see iobench.fio.confine); with
   ``--nofile``, room for that many descriptors (a client of many servers holds a socket
   for each).

fio runs as the launcher's child in the launcher's process group, so iobench's stop
sequence (SIGINT, SIGTERM, SIGKILL to the group) reaches fio directly; the launcher ignores
those and exits with fio's own status (the same exit code, or the same signal).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import resource
import signal
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

# Syscall numbers are the same on every architecture (added after the tables were unified).
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38

# LANDLOCK_ACCESS_FS_*: (bit, first ABI that knows it)
_WRITE_FILE = 1 << 1
WRITE_RIGHTS = {
    _WRITE_FILE: 1,
    1 << 4: 1,  # REMOVE_DIR
    1 << 5: 1,  # REMOVE_FILE
    1 << 6: 1,  # MAKE_CHAR
    1 << 7: 1,  # MAKE_DIR
    1 << 8: 1,  # MAKE_REG
    1 << 9: 1,  # MAKE_SOCK
    1 << 10: 1,  # MAKE_FIFO
    1 << 11: 1,  # MAKE_BLOCK
    1 << 12: 1,  # MAKE_SYM
    1 << 13: 2,  # REFER (links and renames between directories)
    1 << 14: 3,  # TRUNCATE
}
_TRUNCATE = 1 << 14

_CLONE_NEWNS = 0x00020000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_MS_REC, _MS_PRIVATE = 0x4000, 1 << 18
_MNT_DETACH = 2

ORPHANED = signal.SIGUSR2  # the launcher's parent-death signal: iobench is gone
STOP_FIO = signal.SIGUSR2  # to a namespace's init: stop fio (as SIGTERM does)
GRACE_S = 5.0  # how long fio may take to stop before it is killed
FAILED = 125  # the launcher itself failed; fio did not start
WATCH_S = 0.1  # how often the total is looked at where no tmpfs bounds it
STDOUT, STDERR = ".launch-stdout", ".launch-stderr"  # fio's streams in a spool
TAIL_BYTES = 4 << 20  # of fio's stdout and stderr, copied from a spool
_STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Orphaned(Exception):
    """iobench, which started the launcher, is gone."""


class LaunchError(Exception):
    """The launcher cannot start fio as it was asked to."""


@dataclass
class Options:
    parent: int
    directory: str
    argv: list[str]
    ns: bool = False
    spool: int = 0  # bytes; 0: none
    fsize: int = 0  # bytes; 0: no limit
    data: int = 0  # bytes of memory (RLIMIT_DATA); 0: no limit
    nofile: int = 0  # descriptors fio may need open at once (RLIMIT_NOFILE); 0: as it is
    landlock: int = 0  # ABI; 0: none
    uid: int | None = None
    gid: int | None = None
    status: int | None = None  # a descriptor to say what was applied on (then closed)
    watch: bool = False  # bound the spool by watching it, even where a tmpfs could
    owned: list[tuple[int, str]] = field(default_factory=list)  # (fd, path): unlink if orphaned


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="launch.py", add_help=False, exit_on_error=False)
    p.add_argument("--parent", type=int, required=True)
    p.add_argument("--dir", dest="directory", required=True)
    p.add_argument("--ns", action="store_true")
    p.add_argument("--spool", type=int, default=0)
    p.add_argument("--fsize", type=int, default=0)
    p.add_argument("--data", type=int, default=0)
    p.add_argument("--nofile", type=int, default=0)
    p.add_argument("--landlock", type=int, default=0)
    p.add_argument("--uid", type=int)
    p.add_argument("--gid", type=int)
    p.add_argument("--status", type=int)
    p.add_argument("--watch", action="store_true")
    p.add_argument("--owned", nargs=2, action="append", default=[], metavar=("FD", "PATH"))
    return p


def parse(args: list[str]) -> Options:
    """``OPTIONS -- PROGRAM ARGS...``; ValueError when it is not that."""
    if "--" not in args or args.index("--") == len(args) - 1:
        raise ValueError("no program: end the options with -- PROGRAM ARGS...")
    split = args.index("--")
    try:
        ns = _parser().parse_args(args[:split])
    except argparse.ArgumentError as e:
        raise ValueError(str(e)) from None
    owned = [(int(fd), path) for fd, path in ns.owned]
    return Options(
        **{k: v for k, v in vars(ns).items() if k != "owned"}, argv=args[split + 1 :], owned=owned
    )


# -- the kernel's interfaces ----------------------------------------------------------------


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def syscall() -> ctypes._NamedFuncPointer:
    fn = _libc().syscall
    fn.restype = ctypes.c_long
    return fn


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def die_with_parent(sig: int, parent: int) -> None:
    """``sig`` when the parent ends; Orphaned when it has ended already."""
    _check(_libc().prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:
        raise Orphaned


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when it has none or it is disabled."""
    value = syscall()(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(int(value), 0)


def landlock(directory: int, abi: int) -> None:
    """Deny every write to the filesystem except beneath ``directory`` (an open
    descriptor) and to /dev/null."""
    call = syscall()
    handled = sum(bit for bit, since in WRITE_RIGHTS.items() if abi >= since)
    attr = _RulesetAttr(handled)
    ruleset = call(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        null = os.open("/dev/null", os.O_PATH | os.O_CLOEXEC)
        try:
            for fd, allowed in ((directory, handled), (null, handled & (_WRITE_FILE | _TRUNCATE))):
                rule = _PathBeneathAttr(allowed, fd)
                _check(call(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0),
                       "landlock_add_rule")  # fmt: skip
        finally:
            os.close(null)
        _check(_libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        _check(call(_SYS_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _unshare(flags: int) -> bool:
    return bool(_libc().unshare(ctypes.c_int(flags)) == 0)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def namespaces(pid_ipc: bool, mount: bool) -> list[str]:
    """New namespaces for fio, as many of those asked for as the kernel gives; which."""
    wanted = {"pid": _CLONE_NEWPID, "ipc": _CLONE_NEWIPC} if pid_ipc else {}
    if mount:
        wanted["mount"] = _CLONE_NEWNS
    # All together first; else the mount namespace alone (for the bound).
    attempts = [wanted, {k: v for k, v in wanted.items() if k == "mount"}]
    uid, gid = os.geteuid(), os.getegid()
    for attempt in attempts:
        if not attempt:
            continue
        flags = sum(attempt.values())
        if _unshare(flags | (_CLONE_NEWUSER if uid else 0)):
            if uid:  # the same ids inside: fio runs as this user, without privileges
                _write("/proc/self/setgroups", "deny")
                _write("/proc/self/uid_map", f"{uid} {uid} 1")
                _write("/proc/self/gid_map", f"{gid} {gid} 1")
            return list(attempt)
    return []


def _mount_tmpfs(path: str, size: int, uid: int, gid: int) -> bool:
    libc = _libc()
    # Nothing mounted here reaches the host's mount table, nor the other way round.
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return False
    options = f"size={size},nr_inodes=4096,mode=0700,uid={uid},gid={gid}".encode()
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    return bool(libc.mount(b"tmpfs", os.fsencode(path), b"tmpfs", flags, options) == 0)


# -- files ----------------------------------------------------------------------------------


def _regular_files(directory: int) -> list[str]:
    names = []
    for entry in os.scandir(directory):
        if entry.is_file(follow_symlinks=False):
            names.append(entry.name)
    return names


def _copy(src_dir: int, name: str, dst_dir: int, owner: tuple[int, int] | None) -> None:
    """``name`` from one directory to the other, as a new file (of ``owner``, the confined
    user, as fio's own would be): never through a link, never over anything (the launcher
    may be root, and the directory is another user's)."""
    src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=src_dir)
    try:
        if not stat.S_ISREG(os.fstat(src).st_mode):
            return
        dst = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      0o600, dir_fd=dst_dir)  # fmt: skip
        try:
            if owner is not None:
                os.fchown(dst, *owner)
            _pour(src, dst)
        finally:
            os.close(dst)
    finally:
        os.close(src)


def _pour(src: int, dst: int, limit: int | None = None) -> None:
    if limit is not None:
        size = os.fstat(src).st_size
        os.lseek(src, max(size - limit, 0), os.SEEK_SET)
    while chunk := os.read(src, 1 << 20):
        view = memoryview(chunk)
        while view:
            view = view[os.write(dst, view) :]


def _total_bytes(directory: int) -> int:
    total = 0
    for entry in os.scandir(directory):
        try:
            total += entry.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            continue
    return total


def _remove_tree(path: str, mounted: bool, owner: int) -> None:
    """Remove the private directory (not following links; best effort), the spool over it
    first; only a directory of iobench's (``iobench-*``, of the user it was made for)."""
    import shutil

    if mounted:
        _libc().umount2(os.fsencode(path), _MNT_DETACH)
    try:
        st = os.lstat(path)
    except OSError:
        return
    mine = stat.S_ISDIR(st.st_mode) and st.st_uid in (owner, os.geteuid())
    if mine and Path(path).name.startswith("iobench-"):
        shutil.rmtree(path, ignore_errors=True)


def _unlink_owned(owned: list[tuple[int, str]]) -> None:
    """Remove iobench's own test files: the names that still lead to the very files iobench
    holds open (a name that now leads elsewhere is someone else's and stays)."""
    for fd, path in owned:
        try:
            held, named = os.fstat(fd), os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(named.st_mode) and (held.st_dev, held.st_ino) == (
            named.st_dev,
            named.st_ino,
        ):
            try:
                Path(path).unlink()
                os.ftruncate(fd, 0)
            except OSError:
                continue


def descendants(root: int) -> list[int]:
    """The processes below ``root`` (from /proc's parent links), deepest last."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


def _kill(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            continue


# -- the launcher ---------------------------------------------------------------------------


@dataclass
class Launch:
    """One fio under the launcher: what was applied, and its process."""

    options: Options
    here: int  # the private directory (on disk: iobench reads it)
    work: int  # fio's working directory: ``here``, or the spool over it
    applied: list[str] = field(default_factory=list)  # namespaces
    bound: str | None = None  # how the client's writes are bounded: tmpfs, watch
    given: set[str] = field(default_factory=set)  # the files iobench put in the directory
    child: int = 0
    alive: int = 0  # a pipe's read end the child watches: the launcher is alive
    said: int = 0  # a pipe on which a namespace's init says how fio ended
    exceeded: bool = False

    def prepare(self) -> None:
        """Namespaces, the spool, then the user: everything that needs privileges."""
        o = self.options
        self.applied = namespaces(o.ns, o.spool > 0 and not o.watch)
        if o.spool:
            if "mount" in self.applied and self._spool():
                self.bound = "tmpfs"
            else:
                self.bound = "watch"
        if o.status is not None:
            self._say_status(o.status)

    def _spool(self) -> bool:
        """A tmpfs over the private directory, holding what iobench put there (the job
        file); fio works there, and its files are copied out afterwards."""
        o = self.options
        held: list[tuple[str, bytes]] = []
        self.given = set(_regular_files(self.here))
        for name in sorted(self.given):
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.here)
            with os.fdopen(fd, "rb") as f:
                held.append((name, f.read(16 << 20)))
        uid = o.uid if o.uid is not None else os.geteuid()
        gid = o.gid if o.gid is not None else os.getegid()
        if not _mount_tmpfs(o.directory, o.spool, uid, gid):
            return False
        self.work = os.open(o.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        for name, data in held:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600,
                         dir_fd=self.work)  # fmt: skip
            try:
                os.write(fd, data)
                if o.uid is not None:
                    os.fchown(fd, uid, gid)
            finally:
                os.close(fd)
        return True

    def _say_status(self, fd: int) -> None:
        """What was applied, on a descriptor only iobench reads (closed before fio starts,
        so fio cannot write there)."""
        text = json.dumps({"namespaces": self.applied, "bound": self.bound})
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    @property
    def init(self) -> bool:
        """fio runs under an init of its own (in a PID namespace)."""
        return "pid" in self.applied

    def start(self) -> None:
        """fio, as the launcher's child; in a PID namespace, as the child of the
        namespace's first process (see :func:`_init`)."""
        alive_r, alive_w = os.pipe()
        said_r, said_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(alive_w)
            os.close(said_r)
            try:
                self._become_fio(alive_r, said_w)
            except BaseException as e:  # the child must never return into the launcher
                os.write(2, f"iobench: cannot start {self.options.argv[0]}: {e}\n".encode())
            os._exit(FAILED)
        os.close(alive_r)
        os.close(said_w)
        self.child, self.alive, self.said = pid, alive_w, said_r

    def _become_fio(self, alive: int, said: int) -> None:
        """In the launcher's child: fio, confined as asked; in a PID namespace, the child
        becomes the namespace's init and fio its child."""
        o = self.options
        for sig in (*_STOPS, signal.SIGPIPE, signal.SIGXFSZ, ORPHANED):
            signal.signal(sig, signal.SIG_DFL)
        if not self.init and o.uid is not None:
            _become(o.uid, o.gid)  # before the parent-death signal, which this clears
        _check(_libc().prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0), "prctl")
        os.set_blocking(alive, False)
        try:
            if os.read(alive, 1) == b"":  # the launcher died before the line above
                os._exit(FAILED)
        except BlockingIOError:
            pass
        os.close(alive)
        if self.init:
            fio = os.fork()
            if fio:
                _init(fio, said)
            if o.uid is not None:
                _become(o.uid, o.gid)
        if o.fsize:
            resource.setrlimit(resource.RLIMIT_FSIZE, (o.fsize, o.fsize))
        if o.data:
            resource.setrlimit(resource.RLIMIT_DATA, (o.data, o.data))
        if o.nofile:  # a socket for each of many servers: up to what the hard limit allows
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            want = o.nofile if hard == resource.RLIM_INFINITY else min(o.nofile, hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
        if o.landlock:
            landlock(self.work, o.landlock)
        os.fchdir(self.work)
        if self.bound == "tmpfs":
            for fd, name in ((1, STDOUT), (2, STDERR)):
                out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW,
                              0o600, dir_fd=self.work)  # fmt: skip
                os.dup2(out, fd)
                os.close(out)
        if o.uid is not None or o.spool:
            os.environ["HOME"] = o.directory
            os.environ["TMPDIR"] = o.directory
        os.execv(o.argv[0], o.argv)

    def wait(self) -> int:
        """fio's wait status; stops it when iobench is gone (Orphaned) or when a client
        writes more than its bound."""
        while True:
            try:
                if self.bound == "watch":
                    pid, status = os.waitpid(self.child, os.WNOHANG)
                    if pid == 0:
                        self._watch()
                        continue
                else:
                    pid, status = os.waitpid(self.child, 0)
            except ChildProcessError:  # not ours to wait for: cannot happen
                self.child = 0
                raise LaunchError("fio's process is gone") from None
            if pid == self.child:
                self.child = 0
                return self._fio_status(status)

    def _fio_status(self, status: int) -> int:
        """fio's wait status: the child's own, or what the namespace's init said of fio."""
        if not self.init:
            return status
        os.set_blocking(self.said, False)
        try:
            told = os.read(self.said, 16)
        except BlockingIOError:
            told = b""
        return int(told) if told.strip().isdigit() else status

    def _watch(self) -> None:
        time.sleep(WATCH_S)
        if os.getppid() != self.options.parent:
            _no_more_orphaned()
            raise Orphaned
        if not self.exceeded and _total_bytes(self.here) > self.options.spool:
            self.exceeded = True
            msg = f"iobench: fio's client wrote more than {self.options.spool} bytes; stopped\n"
            os.write(2, msg.encode())
            self.stop()

    def stop(self) -> None:
        """fio stopped as by Ctrl-C; what is left after GRACE_S killed (with every process
        it forked, where no PID namespace does that)."""
        if not self.child:
            return
        # An init takes SIGTERM from outside only with a handler; its STOP_FIO handler
        # passes SIGTERM on to fio.
        _kill([self.child], STOP_FIO if self.init else signal.SIGTERM)
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(self.child, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == self.child:
                self.child = 0
                return
            time.sleep(0.05)
        _kill([self.child, *descendants(self.child)], signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.child, 0)
        self.child = 0

    def collect(self) -> None:
        """From a spool: fio's files into the private directory, and the end of its output
        onto the launcher's own streams."""
        if self.bound != "tmpfs":
            return
        o = self.options
        owner = None if o.uid is None else (o.uid, o.gid if o.gid is not None else o.uid)
        for name in _regular_files(self.work):
            if name in (STDOUT, STDERR) or name in self.given:
                continue
            try:
                _copy(self.work, name, self.here, owner)
            except OSError as e:
                os.write(2, f"iobench: cannot keep {name!r}: {e}\n".encode())
        for fd, name in ((1, STDOUT), (2, STDERR)):
            try:
                src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.work)
            except OSError:
                continue
            try:
                _pour(src, fd, TAIL_BYTES)
            finally:
                os.close(src)


def _become(uid: int, gid: int | None) -> None:
    """The user fio's client runs as (no supplementary groups)."""
    os.setgroups([])
    os.setgid(gid if gid is not None else uid)
    os.setuid(uid)


def _orphaned_of(parent: int) -> Callable[[int, object], None]:
    """The handler of the parent-death signal. The kernel sends it when the *thread* that
    started the launcher ends, and again as each thread it was handed to ends: iobench
    (``parent``) is gone only when the launcher's parent is no longer iobench's process."""

    def orphaned(signum: int, frame: object) -> None:
        if os.getppid() == parent:
            return  # a thread of iobench ended; iobench goes on
        _no_more_orphaned()
        raise Orphaned

    return orphaned


def _no_more_orphaned() -> None:
    """The watch and the parent-death signal can both say the launcher is orphaned: once
    is enough, and a second Orphaned must not cut its stop and clean-up short."""
    signal.signal(ORPHANED, signal.SIG_IGN)


def _init(fio: int, said: int) -> None:
    """The first process of fio's PID namespace: waits for fio (and reaps whatever else
    ends in the namespace), says how fio ended on ``said``, and exits, whereupon the kernel
    kills every process left in the namespace. It ignores the signals iobench sends fio's
    process group (an init takes only those it has a handler for), passes STOP_FIO on to fio
    as SIGTERM, and dies with the launcher (parent-death SIGKILL, which an init cannot
    ignore from outside). fio itself runs as an ordinary process, not as an init."""
    signal.signal(STOP_FIO, lambda signum, frame: _kill([fio], signal.SIGTERM))
    status = 0
    while True:
        try:
            pid, code = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == fio:
            status = code
            break
    with contextlib.suppress(OSError):
        os.write(said, str(status).encode())
    os._exit(0)


def _exit_like(status: int) -> int:
    """Exit as fio did: its code, or its signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):  # SIGKILL's cannot change
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


def run(o: Options) -> int:
    for sig in _STOPS:  # iobench stops fio itself: it is in this process group
        signal.signal(sig, signal.SIG_IGN)
    signal.signal(ORPHANED, _orphaned_of(o.parent))
    launch: Launch | None = None
    try:
        die_with_parent(ORPHANED, o.parent)
        here = os.open(o.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        launch = Launch(o, here, here)
        launch.prepare()
        launch.start()
        status = launch.wait()
        launch.collect()
        if launch.exceeded:
            return FAILED
        return _exit_like(status)
    except Orphaned:
        _no_more_orphaned()
        try:
            if launch is not None:
                launch.stop()
        finally:
            _unlink_owned(o.owned)
            mounted = launch is not None and launch.bound == "tmpfs"
            _remove_tree(o.directory, mounted, o.uid if o.uid is not None else os.geteuid())
        return FAILED
    except (OSError, LaunchError, ValueError) as e:
        if launch is not None:
            launch.stop()
        os.write(2, f"iobench: cannot start {o.argv[0]}: {e}\n".encode())
        return FAILED


def main(args: list[str]) -> int:
    try:
        options = parse(args)
    except (ValueError, IndexError) as e:
        print(f"iobench's launcher: {e}", file=sys.stderr)
        _parser().print_usage(sys.stderr)
        return 2
    return run(options)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
