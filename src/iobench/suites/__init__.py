"""Suites: the built-in ones (TOML files in this package) and users' own suite files.

See ``docs/suites.md`` for the file format, every accepted key and what is refused.
"""

from __future__ import annotations

from iobench.suites.fit import fit_to_cpus
from iobench.suites.loader import (
    DEFAULT_SUITE,
    apply_overrides,
    builtin_names,
    check_overrides,
    load_builtin,
    load_suite,
    load_suite_file,
    parse_job_file,
    parse_suite,
)

__all__ = [
    "DEFAULT_SUITE",
    "apply_overrides",
    "builtin_names",
    "check_overrides",
    "fit_to_cpus",
    "load_builtin",
    "load_suite",
    "load_suite_file",
    "parse_job_file",
    "parse_suite",
]
