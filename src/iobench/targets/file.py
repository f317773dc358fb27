"""An existing regular file: fio reads (and with --destructive writes) the file itself."""

from __future__ import annotations

import stat

from iobench.model import Target
from iobench.targets.kind import Named


class File:
    name = "file"
    noun = "file"
    accepts = "an existing regular file"
    own_file = False
    loss = "OVERWRITES ITS CONTENTS"

    def claims(self, named: Named) -> bool:
        return stat.S_ISREG(named.located.st.st_mode)

    def resolve(self, named: Named) -> Target:
        found = named.located
        return Target(spec=found.named, path=found.real, kind="file", size_bytes=found.st.st_size)

    def under(self, path: str) -> str:
        return f" under {path}"


FILE = File()
