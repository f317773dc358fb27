"""A directory: iobench creates its own test file in it, and removes it afterwards."""

from __future__ import annotations

import os
import stat

from iobench.model import Target
from iobench.targets.kind import Named


class Directory:
    name = "directory"
    noun = "directory"
    accepts = "a directory (iobench creates a test file in it and removes it afterwards)"
    own_file = True
    loss = ""

    def claims(self, named: Named) -> bool:
        return stat.S_ISDIR(named.located.st.st_mode)

    def resolve(self, named: Named) -> Target:
        found = named.located
        try:
            vfs = os.statvfs(found.real)
            free: int | None = vfs.f_bavail * vfs.f_frsize
        except OSError:
            free = None
        return Target(
            spec=found.named, path=found.real, kind="directory", size_bytes=None, free_bytes=free
        )

    def under(self, path: str) -> str:
        return f" under {path}"


DIRECTORY = Directory()
