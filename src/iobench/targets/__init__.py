"""What the user named as a target, resolved, checked and guarded before anything writes
to it: ``paths`` (a path resolved into a Target, its identity), ``checks`` (real storage,
access, free space), ``guard`` (what may be written: a device's refusals, a file's users,
the exclusive claim on a device)."""

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
from iobench.targets.paths import ACCEPTED, identity, identity_of, named_path, resolve_target

__all__ = [
    "ACCEPTED",
    "Refusal",
    "check_access",
    "check_block_device_writable",
    "check_file_writable",
    "check_free_space",
    "check_real_storage",
    "format_refusals",
    "free_space_margin",
    "hold_device",
    "identity",
    "identity_of",
    "named_path",
    "refusals",
    "resolve_target",
    "shared_with",
]
