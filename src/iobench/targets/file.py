"""An existing regular file: fio reads (and with --destructive writes) the file itself."""

from __future__ import annotations

import stat

from iobench.errors import TargetUnsafe
from iobench.model import Target
from iobench.targets.checks import check_access, check_real_storage, in_place
from iobench.targets.guard import check_file_writable
from iobench.targets.kind import Named, OnAFilesystem, Plan, Preparation
from iobench.targets.purge import Purge


class File(OnAFilesystem):
    name = "file"
    noun = "file"
    accepts = "an existing regular file"
    own_file = False
    holes = True
    claimed = ""
    loss = "OVERWRITES ITS CONTENTS"

    def claims(self, named: Named) -> bool:
        return stat.S_ISREG(named.located.st.st_mode)

    def resolve(self, named: Named) -> Target:
        found = named.located
        return Target(
            spec=found.named, path=found.real, kind=self.name, size_bytes=found.st.st_size
        )

    def check(self, target: Target, plan: Plan) -> None:
        """Writing needs --destructive, and a file nothing else uses (swap, a loop
        device's backing file, the results database)."""
        check_real_storage(target)
        check_access(target, writes=plan.writes)
        if not plan.writes:
            return
        if not plan.destructive:
            raise TargetUnsafe(
                f"{target.spec} is an existing file and the {plan.suite.name} suite writes to "
                f"it ({plan.writers}): its contents would be overwritten",
                "pass --destructive if it is a scratch file, or give a directory and iobench "
                "creates (and removes) its own test file there",
            )
        check_file_writable(target, plan.protected)

    def prepare(self, target: Target, plan: Plan) -> Preparation:
        return in_place(target, plan)

    def purge(self, target: Target) -> Purge:
        return Purge(
            "punch-hole",
            "holes punched over the area (fallocate PUNCH_HOLE, the file's size kept); the "
            "filesystem may pass the freed blocks to its device as discards",
        )


FILE = File()
