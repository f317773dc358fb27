#!/usr/bin/env python3
"""Print the N slowest tests of pytest's JUnit XML reports (scripts/test.sh writes one per
test group): ``slowest.py N REPORT.xml...``. A test's time is its setup, call and teardown."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def timings(report: Path) -> list[tuple[float, str]]:
    group = report.stem
    found = []
    for case in ET.parse(report).iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        found.append((float(case.get("time", 0) or 0), f"{name} [{group}]"))
    return found


def main(argv: list[str]) -> int:
    count, reports = int(argv[0]), [Path(a) for a in argv[1:] if Path(a).is_file()]
    tests = sorted((t for r in reports for t in timings(r)), reverse=True)
    print(f"== the {min(count, len(tests))} slowest of {len(tests)} tests")
    for seconds, name in tests[:count]:
        print(f"{seconds:7.2f}s  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
