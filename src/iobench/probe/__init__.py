"""Context capture: what host, filesystem and block devices a result came from.

Every function returns JSON-ready plain dicts and never raises on a missing tool or an
unreadable file (the value is None instead). The keys are documented in docs/context.md.
"""

from __future__ import annotations

from typing import Any

from iobench.probe.host import probe_host
from iobench.probe.storage import probe_target

__all__ = ["probe_context", "probe_host", "probe_target"]


def probe_context(paths: list[str]) -> dict[str, Any]:
    """``{"host": probe_host(), "targets": [probe_target(p) for p in paths]}``."""
    return {"host": probe_host(), "targets": [probe_target(p) for p in paths]}
