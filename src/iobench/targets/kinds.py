"""The registry of the kinds of target. The first kind that claims what the user named
resolves it: kinds named by a prefix (``nbd://``, ``rbd:``) come first, as they must not
be looked up as paths; the kinds named by a path, told apart by ``stat``, last. The rest
of iobench asks :func:`kind_of` instead of comparing kind names."""

from __future__ import annotations

from iobench.errors import UserError
from iobench.model import Suite, Target
from iobench.targets.block import BLOCK
from iobench.targets.directory import DIRECTORY
from iobench.targets.file import FILE
from iobench.targets.kind import PRECONDITION_ELSEWHERE, Kind, Named
from iobench.targets.nbd import NBD
from iobench.targets.paths import unclaimed
from iobench.targets.rbd import RBD

KINDS: tuple[Kind, ...] = (NBD, RBD, DIRECTORY, FILE, BLOCK)
# The engines that reach a kind of target (a job file's ioengine=rbd runs on an rbd:
# target), and their options that name what they reach (which the target replaces).
TARGET_ENGINES = frozenset(k.engine for k in KINDS if k.engine)
ENDPOINT_OPTIONS = frozenset().union(*(k.endpoint_options for k in KINDS))


def _accepted(kinds: tuple[Kind, ...]) -> str:
    phrases = [k.accepts for k in kinds]
    listed = ", ".join(phrases[:-1]) + ", or " + phrases[-1] if len(phrases) > 1 else phrases[0]
    return f"accepted targets: {listed}"


ACCEPTED = _accepted(tuple(sorted(KINDS, key=lambda k: not k.opened)))  # paths first


def kind_named(name: str) -> Kind:
    """The kind stored as ``name``; KeyError for a name no kind has (an imported run's
    ``unknown``)."""
    for kind in KINDS:
        if kind.name == name:
            return kind
    raise KeyError(name)


def kind_of(target: Target) -> Kind:
    """The kind of a resolved target."""
    return kind_named(target.kind)


def network_kind(spec: str) -> Kind | None:
    """The kind of network storage ``spec`` names by its prefix (nbd://, rbd:), if any;
    looks nothing up (with --clients, a path is one on the clients, not here)."""
    named = Named(spec, ACCEPTED)
    return next((k for k in KINDS if not k.opened and k.claims(named)), None)


def kind_reaching(engine: str) -> Kind | None:
    """The kind of target that fio's ``engine`` reaches (rbd: an RBD image), if any."""
    return next((k for k in KINDS if k.engine == engine), None)


def resolve_target(spec: str, access: tuple[tuple[str, str], ...] = ()) -> Target:
    """What ``spec`` names, resolved by the first kind that claims it: network storage
    named by its prefix (``access``: how to reach it, from the command line), else a
    directory, an existing file or a block device (symlinks followed).

    The Target's ``spec`` is the absolute path the user named (``paths.named_path``), its
    ``path`` the file or device that path leads to. Raises UserError for a missing path, a
    character device, a socket, a FIFO, or a path that cannot be accessed, saying what it
    is (as the user typed it) and what is accepted.
    """
    if not spec.strip():
        raise UserError("the target is empty", hint=ACCEPTED)
    named = Named(spec, ACCEPTED, access)
    for kind in KINDS:
        if kind.claims(named):
            return kind.resolve(named)
    raise unclaimed(named.located, ACCEPTED)


def check_engines(target: Target, suite: Suite) -> None:
    """UserError when a workload's engine reaches another kind of target than ``target``
    (a job file's ioengine=rbd on a directory): it would have nothing to reach. On a
    network target, its own engine replaces the suite's (preflight says so)."""
    kind = kind_of(target)
    if kind.engine is not None:
        return
    for w in suite.workloads:
        for job in w.jobs:
            other = kind_reaching(job.ioengine)
            if other is not None:
                raise UserError(
                    f"workload {w.name} uses fio's {job.ioengine} engine, which reaches an "
                    f"{other.noun}, and {target.spec} is a {kind.noun}",
                    f"name one as the target: {other.accepts}",
                )


def check_precondition(spec: str) -> None:
    """UserError when ``spec`` names storage of a kind that is never preconditioned
    (network storage, ``Kind.no_precondition``), said from its name alone, before a
    server is asked anything."""
    kind = network_kind(spec)
    if kind is not None and kind.no_precondition:
        raise UserError(
            f"cannot precondition {spec} ({kind.noun}): {kind.no_precondition}",
            PRECONDITION_ELSEWHERE,
        )
