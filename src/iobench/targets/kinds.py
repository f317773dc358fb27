"""The registry of the kinds of target. The first kind that claims what the user named
resolves it: kinds named by a prefix (``nbd://``, ``rbd:``) come first, as they must not
be looked up as paths; the kinds named by a path, told apart by ``stat``, last. The rest
of iobench asks :func:`kind_of` instead of comparing kind names."""

from __future__ import annotations

from iobench.errors import UserError
from iobench.model import Target
from iobench.targets.block import BLOCK
from iobench.targets.directory import DIRECTORY
from iobench.targets.file import FILE
from iobench.targets.kind import Kind, Named
from iobench.targets.paths import unclaimed

KINDS: tuple[Kind, ...] = (DIRECTORY, FILE, BLOCK)


def _accepted(kinds: tuple[Kind, ...]) -> str:
    phrases = [k.accepts for k in kinds]
    listed = ", ".join(phrases[:-1]) + ", or " + phrases[-1] if len(phrases) > 1 else phrases[0]
    return f"accepted targets: {listed}"


ACCEPTED = _accepted(KINDS)


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


def resolve_target(spec: str) -> Target:
    """What ``spec`` names, resolved by the first kind that claims it: a directory, an
    existing file or a block device (symlinks followed).

    The Target's ``spec`` is the absolute path the user named (``paths.named_path``), its
    ``path`` the file or device that path leads to. Raises UserError for a missing path, a
    character device, a socket, a FIFO, or a path that cannot be accessed, saying what it
    is (as the user typed it) and what is accepted.
    """
    if not spec.strip():
        raise UserError("the target is empty", hint=ACCEPTED)
    named = Named(spec, ACCEPTED)
    for kind in KINDS:
        if kind.claims(named):
            return kind.resolve(named)
    raise unclaimed(named.located, ACCEPTED)
