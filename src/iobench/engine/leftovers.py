"""What a run whose iobench was killed left on this host, removed by `iobench rm`.

A run lists in the database the test files and private directories it makes, before it
makes them, until it has removed them (Store.note_leftover). The list comes from the
database, which may be forged: only names iobench gives its own files are removed, a file
is unlinked (never followed, so a link planted under that name loses only itself) and a
directory is removed without following links.
"""

from __future__ import annotations

import re
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path

# The names iobench makes: its test files (engine/preflight.py) and private directories
# (tempfile.mkdtemp with the prefix "iobench-" or "iobench-client-").
TEST_FILE = re.compile(r"iobench-\d+-[0-9a-f]{8}\.dat")
PRIVATE_DIRECTORY = re.compile(r"iobench-(?:client-)?[a-z0-9_]{8}")


def remove_leftovers(
    items: Sequence[tuple[str, str]],
) -> tuple[list[str], list[str], list[str]]:
    """Remove what a run left: (path, what) pairs. Returns what was removed, what was left
    alone as not iobench's (each ``what path``), and why each other one could not be."""
    removed: list[str] = []
    skipped: list[str] = []
    problems: list[str] = []
    for path, what in items:
        name = Path(path).name
        try:
            st = Path(path).lstat()
        except FileNotFoundError:
            continue  # gone already
        except OSError as e:
            problems.append(f"{what} {path}: {e.strerror or e}")
            continue
        try:
            if stat.S_ISDIR(st.st_mode) and PRIVATE_DIRECTORY.fullmatch(name):
                shutil.rmtree(path)
            elif not stat.S_ISDIR(st.st_mode) and TEST_FILE.fullmatch(name):
                Path(path).unlink()
            else:  # a forged list, or someone else's file there now
                skipped.append(f"{what} {path}")
                continue
        except OSError as e:
            problems.append(f"{what} {path}: {e.strerror or e}")
            continue
        removed.append(f"{what} {path}")
    return removed, skipped, problems
