"""Expectations: what a run must deliver, checked against what it measured (docs/expect.md).

An expectation is ``WORKLOAD.DIRECTION.METRIC OP VALUE``, for example
``rand-r.read.iops>=5000``, ``lat-read.read.p99<5ms`` or ``*.write.bw>=200MB/s``:

- WORKLOAD: a workload of the suite, or ``*`` for every workload that has DIRECTION;
- DIRECTION: ``read``, ``write``, ``trim``, or ``total`` (IOPS and bandwidth of all
  directions together, for mixed workloads);
- METRIC: ``iops``; ``bw`` (bandwidth); total latency ``mean``, ``min``, ``max`` or a
  percentile ``p1`` ... ``p50`` ... ``p99.99`` (fio's total latency, submission to
  completion);
- OP: ``>=``, ``<=``, ``>`` or ``<``;
- VALUE: a count for ``iops`` (``5000``, ``5k``, ``1.2M``: k = 1000 here); a rate for
  ``bw`` (``200MB/s`` = 200 x 10^6 bytes/s, ``190MiB/s`` = 190 x 2^20, as fio prints them);
  a duration for latencies (``500us``, ``5ms``, ``1s``; a unit is required).

A measured value is the mean over the repetitions of the workload on that target (for a
run on several clients: their aggregate, at each client count). Pure.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from iobench.analysis.results import headline, metric_value
from iobench.errors import UserError
from iobench.model import (
    DIRECTIONS,
    PERCENTILES,
    Expectation,
    Suite,
    directions_of,
    percentile_key,
)
from iobench.records import ResultRecord, RunRecord
from iobench.units import parse_count, parse_latency_ns, parse_rate, rate_is_decimal

OPS = (">=", "<=", ">", "<")
LATENCY_METRICS = ("mean", "min", "max", *(percentile_key(p) for p in PERCENTILES))
METRICS = ("iops", "bw", *LATENCY_METRICS)
EXPECT_DIRECTIONS = (*DIRECTIONS, "total")
DOCS = "docs/expect.md"

_EXPR = re.compile(r"^\s*(?P<lhs>[^<>=\s]+)\s*(?P<op>>=|<=|>|<)\s*(?P<value>\S.*?)\s*$")
_EXAMPLES = "e.g. rand-r.read.iops>=5000, lat-read.read.p99<5ms or *.write.bw>=200MB/s"


def _value(metric: str, text: str, where: str) -> float:
    compact = text.replace(" ", "")
    if metric == "iops":
        try:
            return parse_count(compact)
        except ValueError:
            raise UserError(
                f"{where}: iops takes a count such as 5000, 5k or 1.2M, not {text!r}", _EXAMPLES
            ) from None
    if metric == "bw":
        try:
            return parse_rate(compact)
        except ValueError as e:
            raise UserError(
                f"{where}: bw takes a rate: {e}",
                "MB/s is 10^6 bytes a second, MiB/s 2^20, as fio prints them",
            ) from e
    try:
        return parse_latency_ns(compact)
    except ValueError:
        raise UserError(
            f"{where}: {metric} takes a duration with its unit, such as 500us, 5ms or 1s, "
            f"not {text!r}",
            _EXAMPLES,
        ) from None


def parse_expectation(text: str, where: str = "--expect", source: str = "--expect") -> Expectation:
    """``rand-r.read.iops>=5000`` -> Expectation; a UserError naming ``where`` if malformed."""
    m = _EXPR.match(text)
    if not m:
        raise UserError(
            f"{where} {text!r}: not WORKLOAD.DIRECTION.METRIC OP VALUE",
            f"{_EXAMPLES}; OP is one of >= <= > <",
        )
    parts = m.group("lhs").split(".")
    # Workload names may hold dots and percentiles do (p99.9): the direction is the token
    # whose left is a workload name and whose right is a metric.
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] in EXPECT_DIRECTIONS and ".".join(parts[i + 1 :]) in METRICS:
            workload, direction, metric = ".".join(parts[:i]), parts[i], ".".join(parts[i + 1 :])
            break
    else:
        raise UserError(
            f"{where} {text!r}: cannot find WORKLOAD.DIRECTION.METRIC in {m.group('lhs')!r}",
            f"DIRECTION is one of {', '.join(EXPECT_DIRECTIONS)}; METRIC one of "
            f"{', '.join(METRICS)}; {_EXAMPLES}",
        )
    if direction == "total" and metric not in ("iops", "bw"):
        raise UserError(
            f"{where} {text!r}: total has only iops and bw (latency belongs to a direction)",
            "use read or write for latency",
        )
    value = _value(metric, m.group("value"), f"{where} {text!r}")
    normal = f"{workload}.{direction}.{metric}{m.group('op')}{m.group('value').replace(' ', '')}"
    return Expectation(normal, workload, direction, metric, m.group("op"), value, source)


def written_in_decimal(e: Expectation) -> bool:
    """True for a bandwidth expectation whose value was written in decimal units
    (``*.write.bw>=150MB/s``): the measured figure beside it is then shown in those units
    too, in brackets after the binary one (docs/report.md, "Numbers and units")."""
    if e.metric != "bw":
        return False
    value = e.text.split(e.op, 1)[-1]  # the left-hand side holds no <, > or =
    return rate_is_decimal(value) is True


def check_against_suite(expectations: Iterable[Expectation], suite: Suite, where: str) -> None:
    """Every expectation names a workload of the suite and a direction it does IO in."""
    names = [w.name for w in suite.workloads]
    for e in expectations:
        matching = suite.workloads if e.workload == "*" else [
            w for w in suite.workloads if w.name == e.workload
        ]  # fmt: skip
        if not matching:
            raise UserError(
                f"{where} {e.text!r}: the {suite.name} suite has no workload {e.workload!r}",
                f"its workloads: {', '.join(names)} (or * for all)",
            )
        if e.direction == "total":
            continue
        if not any(e.direction in directions_of(w) for w in matching):
            does = "; ".join(f"{w.name} does {'/'.join(directions_of(w))}" for w in matching)
            raise UserError(
                f"{where} {e.text!r}: no {e.direction} IO in {e.workload} ({does})",
                "name a direction the workload does, or total",
            )


def with_expectations(suite: Suite, texts: Sequence[str]) -> Suite:
    """``suite`` with the ``--expect`` expectations added, all checked before anything runs."""
    import dataclasses

    parsed = [parse_expectation(t) for t in texts]
    check_against_suite(parsed, suite, "--expect")
    return dataclasses.replace(suite, expectations=(*suite.expectations, *parsed))


# -- checking a run --------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    expectation: Expectation
    workload: str
    target: str  # the target as given; for many clients "TARGET, k clients"
    measured: float | None  # None: not measured (the workload failed)
    passed: bool

    def as_dict(self) -> dict[str, Any]:
        e = self.expectation
        return {
            "expectation": e.text,
            "source": e.source,
            "workload": self.workload,
            "direction": e.direction,
            "metric": e.metric,
            "op": e.op,
            "value": e.value,
            "target": self.target,
            "measured": self.measured,
            "passed": self.passed,
        }


def _compare(measured: float, op: str, value: float) -> bool:
    return {
        ">=": measured >= value,
        "<=": measured <= value,
        ">": measured > value,
        "<": measured < value,
    }[op]


def _where(r: ResultRecord) -> str:
    return r.target if r.clients is None else f"{r.target}, {r.clients} clients"


def check_run(run: RunRecord) -> list[Check]:
    """Every stored expectation of the run, on every target (and client count) it ran on."""
    out: list[Check] = []
    results = [r for r in run.results if headline(r)]
    for e in stored_expectations(run):
        keys: dict[tuple[str, str], list[ResultRecord]] = {}
        for r in results:
            if e.workload in ("*", r.workload):
                keys.setdefault((r.workload, _where(r)), []).append(r)
        for (workload, where), rs in keys.items():
            values = [
                v
                for r in rs
                if r.status == "ok"
                and (v := metric_value(r.metrics, e.direction, e.metric)) is not None
            ]
            if e.workload == "*" and not values and all(r.status == "ok" for r in rs):
                continue  # the wildcard does not apply to a workload without that direction
            measured = statistics.fmean(values) if values else None
            passed = measured is not None and _compare(measured, e.op, e.value)
            out.append(Check(e, workload, where, measured, passed))
    return out


def stored_expectations(run: RunRecord) -> list[Expectation]:
    """The expectations a run was started with (kept in its suite definition)."""
    out = []
    for d in run.suite_def.expectations or ():
        try:
            out.append(Expectation(**d))
        except TypeError:
            continue  # written by a newer iobench: skip what this one cannot read
    return out


def failed_checks(checks: Sequence[Check]) -> list[Check]:
    return [c for c in checks if not c.passed]
