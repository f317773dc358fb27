"""A kind of target (a directory, a file, a block device ...): the one interface the rest
of iobench calls without knowing kinds. Each kind is a module of ``targets/`` with one
object of this shape, in the registry :data:`iobench.targets.kinds.KINDS`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

from iobench.model import Target
from iobench.targets.paths import Located, locate


@dataclass(frozen=True)
class Named:
    """What the user typed as a target, as the kinds look at it: the text (``spec``), and
    for the kinds named by a path, what the path leads to (``located``, found the first
    time a kind asks; UserError when it leads nowhere)."""

    spec: str
    accepted: str  # the targets iobench accepts, for the hints

    @cached_property
    def located(self) -> Located:
        return locate(self.spec, self.accepted)


class Kind(Protocol):
    """One kind of target. ``name`` is stored (``targets.kind``) and shown in reports;
    ``noun`` names it in a sentence ("the block device /dev/sdb"); ``accepts`` says it
    in the list of accepted targets; ``own_file``: iobench creates a test file in it and
    removes it (else fio uses the target itself); ``loss``: what writing to it does, said
    in an exported job file's warning."""

    name: str
    noun: str
    accepts: str
    own_file: bool
    loss: str

    def claims(self, named: Named) -> bool:
        """Whether ``named`` is of this kind (the first kind of the registry that claims
        it resolves it)."""
        ...

    def resolve(self, named: Named) -> Target:
        """The Target ``named`` is, of this kind."""
        ...

    def under(self, path: str) -> str:
        """Where a finding about the device under a target at ``path`` says the target is
        (" under PATH"; "" when the target is the device)."""
        ...
