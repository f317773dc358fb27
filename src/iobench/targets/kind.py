"""A kind of target (a directory, a file, a block device ...): the one interface the rest
of iobench calls without knowing kinds. Each kind is a module of ``targets/`` with one
object of this shape, in the registry :data:`iobench.targets.kinds.KINDS`."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

from iobench.errors import UserError
from iobench.model import Precondition, Suite, Target
from iobench.probe import probe_target
from iobench.probe.context import Storage
from iobench.probe.written import Unwritten, unwritten
from iobench.targets.lines import WRITES, Lines
from iobench.targets.paths import Located, identity_of, locate
from iobench.targets.purge import Purge


@dataclass(frozen=True)
class Named:
    """What the user typed as a target, as the kinds look at it: the text (``spec``), and
    for the kinds named by a path, what the path leads to (``located``, found the first
    time a kind asks; UserError when it leads nowhere)."""

    spec: str
    accepted: str  # the targets iobench accepts, for the hints
    access: tuple[tuple[str, str], ...] = ()  # how to reach network storage (--ceph-conf ...)

    @cached_property
    def located(self) -> Located:
        return locate(self.spec, self.accepted)


@dataclass(frozen=True)
class Plan:
    """What a run will do to its targets, as a kind checks and prepares one: the suite,
    --prefill, --precondition, --destructive, --overwrite-signatures, and the files never
    to write (the results database)."""

    suite: Suite
    prefill: bool = False
    destructive: bool = False
    overwrite_signatures: bool = False
    protected: tuple[str, ...] = ()
    precondition: Precondition | None = None

    @property
    def writes(self) -> bool:
        """Anything writes to the target: a writing workload, --prefill or a precondition."""
        writing = any(w.writes for w in self.suite.workloads)
        return writing or self.prefill or self.precondition is not None

    @property
    def writers(self) -> str:
        """What writes, as a refusal names it."""
        names = [w.name for w in self.suite.workloads if w.writes]
        if self.precondition is not None:
            names.insert(0, "the precondition's purge and fill")
        return ", ".join(names) or "--prefill"

    def area(self, limit: int | None) -> int | None:
        """The test area on a target of ``limit`` bytes (None: a test file of iobench's
        own), which --prefill and a precondition write: the largest workload's, else the
        precondition's size."""
        if self.precondition is not None:
            return self.precondition.area(limit, self.suite.workloads)
        return max((w.area(limit) for w in self.suite.workloads), default=None)


@dataclass(frozen=True)
class Preparation:
    """How a run uses a target: ``filename``, the file or device fio reads and writes;
    ``created``, iobench creates (and removes) it; ``layout_bytes``, how much to write
    before the workloads (0: none); ``size_limit``, the file's or device's size (None: a
    test file of iobench's own); ``readonly``, nothing writes to it."""

    filename: str
    created: bool
    layout_bytes: int
    size_limit: int | None
    readonly: bool


@dataclass(frozen=True)
class AccessOption:
    """A command-line option that says how to reach a kind's targets (``--ceph-conf
    FILE``): its value reaches the kind as ``Named.access`` / ``Target.access`` under
    ``key``. Never a credential: at most where one is kept."""

    flag: str
    key: str
    metavar: str
    help: str


@dataclass(frozen=True)
class Reach:
    """How fio reaches a target, as its job file says it. ``path``: the file or device
    fio opens (on this host through ./target, the descriptor iobench holds; on a fio
    server by its path there). Or, for storage that an engine of its own reaches, that
    ``engine`` (it replaces the suite's) and its ``options`` (``uri=``, ``pool=`` ...).
    ``env``: what fio's environment must hold (``CEPH_CONF``); ``shown``: the target as a
    job file's comment names it."""

    shown: str
    path: str | None = None
    engine: str | None = None
    options: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    @classmethod
    def file(cls, path: str) -> Reach:
        """A file or device that fio opens by ``path``."""
        return cls(shown=path, path=path)


class Kind(Protocol):
    """One kind of target. ``name`` is stored (``targets.kind``) and shown in reports;
    ``noun`` names it in a sentence ("the block device /dev/sdb"); ``accepts`` says it
    in the list of accepted targets; ``own_file``: iobench creates a test file in it and
    removes it (else fio uses the target itself); ``loss``: what writing to it does, said
    in an exported job file's warning; ``holes``: its unwritten areas may be holes, found
    exactly without reading them (a file); ``claimed``: what iobench does while the run
    writes to it, beyond its checks, as ``iobench doctor`` says it ("" when nothing);
    ``engine``: the fio engine that reaches it, replacing the suite's (None: the suite's
    own, on a file or device that iobench holds open: ``opened``); ``endpoint_options``:
    that engine's options that name what it reaches, which in a user's job file give way
    to the target named on the command line; ``no_precondition``: why ``iobench
    precondition`` refuses a target of this kind ("" when it does not)."""

    name: str
    noun: str
    accepts: str
    own_file: bool
    loss: str
    holes: bool
    claimed: str
    engine: str | None
    endpoint_options: frozenset[str]
    access: tuple[AccessOption, ...]  # options of the commands that name targets
    no_precondition: str

    @property
    def opened(self) -> bool:
        """fio reaches the target by a file or device on this host that iobench holds
        open (else by an engine of its own, through the network)."""
        ...

    def claims(self, named: Named) -> bool:
        """Whether ``named`` is of this kind (the first kind of the registry that claims
        it resolves it)."""
        ...

    def resolve(self, named: Named) -> Target:
        """The Target ``named`` is, of this kind."""
        ...

    def check(self, target: Target, plan: Plan) -> None:
        """Raise (TargetUnsafe, UserError) for the first reason not to run ``plan`` on
        ``target``, before anything is written or fio starts (docs/safety.md)."""
        ...

    def prepare(self, target: Target, plan: Plan) -> Preparation:
        """How the run uses ``target`` (writes nothing; UserError when it cannot be
        used: an empty file ...)."""
        ...

    def claim(
        self, target: Target, plan: Plan, *, readonly: bool, holds: contextlib.ExitStack
    ) -> int | None:
        """Just before the run's first step: what the run holds beyond a plain open, for
        as long as ``holds`` lasts, checked again first (a device that will be written,
        claimed exclusively): its descriptor, which fio then reaches; None when a plain
        open is enough."""
        ...

    def purge(self, target: Target) -> Purge:
        """How a precondition purges the target's test area (iobench.targets.purge): what
        the run will do, decided before anything runs; UserError for a kind that is not
        preconditioned (``no_precondition``)."""
        ...

    def device_under(self, target: Target, storage: Storage) -> tuple[int | None, str | None]:
        """Size and name of the device that holds the target, from its probed context."""
        ...

    def reach(self, target: Target, filename: str) -> Reach:
        """How fio on this host reaches ``target`` (``filename``: the prepared file)."""
        ...

    def reach_from(self, target: Target, filename: str) -> Reach:
        """How fio on a fio server reaches ``target`` (``filename``: the file or storage
        that server uses)."""
        ...

    def capture(self, target: Target) -> dict[str, Any]:
        """The context stored with a run on ``target``: what is under it (never a
        credential)."""
        ...

    def identity(self, target: Target) -> tuple[int, int] | None:
        """What the checks are made on, to see that the run uses that very target (device
        and inode); None when the target has none on this host."""
        ...

    def unwritten(self, target: Target, filename: str, area: int) -> Unwritten | None:
        """How much of the first ``area`` bytes of ``filename`` was never written; None
        when that cannot be said."""
        ...

    def describe(self, ctx: Mapping[str, Any], *, identity: bool) -> Lines:
        """Lines of a stored context that only this kind has (the server's words of an
        export or an image), for ``info``, ``doctor`` and reports; without ``identity``,
        only what describes the storage (for a comparison: no names, addresses)."""
        ...

    def under(self, path: str) -> str:
        """Where a finding about the device under a target at ``path`` says the target is
        (" under PATH"; "" when the target is the device)."""
        ...


PRECONDITION_ELSEWHERE = (
    "precondition the storage where it lives (on its server, a file or device there), or "
    "run without --precondition"
)


class OnThisHost:
    """What the kinds that are a file or device of this host share: the suite's engine on
    the file or device, held open (fio reaches it by ./target), its context probed from
    /proc and /sys."""

    engine: str | None = None
    endpoint_options: frozenset[str] = frozenset()
    access: tuple[AccessOption, ...] = ()
    holes: bool
    no_precondition = ""

    @property
    def opened(self) -> bool:
        return True

    def reach(self, target: Target, filename: str) -> Reach:
        return Reach.file(filename)

    def reach_from(self, target: Target, filename: str) -> Reach:
        return Reach.file(filename)

    def capture(self, target: Target) -> dict[str, Any]:
        return probe_target(target.path)

    def identity(self, target: Target) -> tuple[int, int] | None:
        return identity_of(target)

    def unwritten(self, target: Target, filename: str, area: int) -> Unwritten | None:
        return unwritten(filename, area, holes=self.holes)

    def describe(self, ctx: Mapping[str, Any], *, identity: bool) -> Lines:
        """Nothing but when a write is done: the rest is probe_target's, which every path
        kind shares (analysis/context.py)."""
        return [] if identity else [(WRITES, "when this host's own storage stack has it")]


class OnAFilesystem(OnThisHost):
    """What the kinds that live on a mounted filesystem (a directory, a file) share: no
    claim beyond a plain open, the disk under the filesystem, "under PATH" in findings."""

    def claim(
        self, target: Target, plan: Plan, *, readonly: bool, holds: contextlib.ExitStack
    ) -> int | None:
        return None

    def device_under(self, target: Target, storage: Storage) -> tuple[int | None, str | None]:
        disk = storage.first_disk
        if disk:
            return disk.get("size_bytes"), disk.get("path") or disk.get("name")
        return None, None

    def under(self, path: str) -> str:
        return f" under {path}"


class OverTheNetwork:
    """What the kinds that fio reaches through the network by an engine of its own share
    (an NBD export, an RBD image): nothing of this host to hold open or to identify, the
    storage itself as "the device", no "under PATH" in findings."""

    noun: str
    own_file = False
    holes = False
    claimed = ""
    access: tuple[AccessOption, ...] = ()
    no_precondition = (
        "iobench purges and fills files and block devices of this host only; the storage "
        "behind it lies on its server, out of the reach of a discard from here"
    )

    @property
    def opened(self) -> bool:
        return False

    def purge(self, target: Target) -> Purge:
        raise UserError(
            f"cannot precondition {target.spec} ({self.noun}): {self.no_precondition}",
            PRECONDITION_ELSEWHERE,
        )

    def claim(
        self, target: Target, plan: Plan, *, readonly: bool, holds: contextlib.ExitStack
    ) -> int | None:
        return None

    def device_under(self, target: Target, storage: Storage) -> tuple[int | None, str | None]:
        return target.size_bytes, target.spec

    def under(self, path: str) -> str:
        return ""

    def identity(self, target: Target) -> tuple[int, int] | None:
        return None
