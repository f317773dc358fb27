#!/usr/bin/env python3
"""How long does finding fio's JSON in a file take, crafted text included?

`iobench import` and the live progress display find JSON objects in text with anything
around them. The scan is meant to be linear in the text's size whatever the text; this
prints, for crafted texts (of the kind that made the old scanner quadratic) and for real
fio output repeated, the time and the work counted by the scanner at growing sizes.

    .venv/bin/python bench/json_scan.py [--sizes 100000,200000,400000,800000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from iobench.jsontext import scan_objects

RECORDED = Path(__file__).parent.parent / "tests" / "data" / "fio-outputs" / "recorded"

CRAFTED: dict[str, Callable[[int], str]] = {
    "open braces": lambda n: "{" * n,
    "quoted braces": lambda n: '"{' * (n // 2),
    "nested, never closed": lambda n: '{"a":' * (n // 5),
    "nested, closed, invalid": lambda n: '{"a":' * (n // 10) + "x" + "}" * (n // 10),
    "braces in strings": lambda n: ('{"x": "' + "{" * 100 + '"\n') * (n // 108),
    "fio messages, stray {": lambda n: "fio: {oops\n" * (n // 11),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,200000,400000,800000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    real = (RECORDED / "status-interval-jsonplus.json").read_text()
    print(f"{'text':26} {'chars':>10} {'seconds':>8} {'walked/char':>12} {'decoded/char':>13}")
    for name, make in CRAFTED.items():
        for n in sizes:
            measure(name, make(n))
    for copies in (10, 100, 1000):
        measure(f"fio json+ x{copies}", real * copies)


def measure(name: str, text: str) -> None:
    cost: dict[str, int] = {}
    started = time.perf_counter()
    scan_objects(text, cost=cost)
    took = time.perf_counter() - started
    n = len(text)
    print(
        f"{name:26} {n:>10} {took:>8.3f} {cost['walked'] / n:>12.2f} {cost['decoded'] / n:>13.2f}"
    )


if __name__ == "__main__":
    main()
