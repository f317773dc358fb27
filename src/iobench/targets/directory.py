"""A directory: iobench creates its own test file in it, and removes it afterwards."""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

from iobench.errors import UserError
from iobench.model import Target
from iobench.targets.checks import check_access_for, check_real_storage
from iobench.targets.kind import Named, OnAFilesystem, Plan, Preparation
from iobench.targets.purge import Purge


class Directory(OnAFilesystem):
    name = "directory"
    noun = "directory"
    accepts = "a directory (iobench creates a test file in it and removes it afterwards)"
    own_file = True
    holes = False
    claimed = ""
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
            spec=found.named, path=found.real, kind=self.name, size_bytes=None, free_bytes=free
        )

    def check(self, target: Target, plan: Plan) -> None:
        check_real_storage(target)
        check_access_for(target, os.W_OK | os.X_OK, "create its test file in")

    def prepare(self, target: Target, plan: Plan) -> Preparation:
        """A test file of iobench's own, as large as the largest workload's area (or the
        precondition's size)."""
        name = f"iobench-{os.getpid()}-{uuid.uuid4().hex[:8]}.dat"
        layout = plan.area(None)
        if layout is None:
            raise UserError(
                f"{target.spec} is a directory: iobench would fill a test file of its own "
                "there, and nothing says how large",
                "give its size: --size 4G",
            )
        return Preparation(str(Path(target.path) / name), True, layout, None, False)

    def purge(self, target: Target) -> Purge:
        return Purge("none", "nothing to purge: iobench's own test file is new")


DIRECTORY = Directory()
