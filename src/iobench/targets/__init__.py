"""What the user named as a target, resolved, checked and guarded before anything writes
to it. A kind of target is a module (``directory``, ``file``, ``block``) with one object
of the shape ``kind.Kind``, in the registry ``kinds.KINDS`` (``kind_of``, and
``resolve_target``: the first kind that claims a name resolves it); ``paths`` is what
the kinds named by a path share (located, the path as named, its identity); ``checks``
(real storage, access, free space) and ``guard`` (what may be written: a device's
refusals, a file's users, the exclusive claim on a device)."""

from iobench.targets.checks import (
    check_access,
    check_free_space,
    check_real_storage,
    free_space_margin,
    shared_with,
)
from iobench.targets.guard import (
    Refusal,
    check_block_device_writable,
    check_file_writable,
    format_refusals,
    hold_device,
    refusals,
)
from iobench.targets.kind import Kind, Named, Plan, Preparation, Reach
from iobench.targets.kinds import (
    ACCEPTED,
    KINDS,
    check_engines,
    check_precondition,
    kind_named,
    kind_of,
    network_kind,
    resolve_target,
)
from iobench.targets.paths import identity, identity_of, named_path

__all__ = [
    "ACCEPTED",
    "KINDS",
    "Kind",
    "Named",
    "Plan",
    "Preparation",
    "Reach",
    "Refusal",
    "check_access",
    "check_block_device_writable",
    "check_engines",
    "check_file_writable",
    "check_free_space",
    "check_precondition",
    "check_real_storage",
    "format_refusals",
    "free_space_margin",
    "hold_device",
    "identity",
    "identity_of",
    "kind_named",
    "kind_of",
    "named_path",
    "network_kind",
    "refusals",
    "resolve_target",
    "shared_with",
]
