"""Built-in suites fitted to the host: no workload runs more jobs than there are CPUs.

A built-in suite is iobench's, not the user's: a warning that its 4 jobs compete for 2 CPUs
would be about something the user did not choose. So a workload with more jobs than CPUs
runs one job per CPU, each with a deeper queue, keeping the IOs in flight (iodepth x
numjobs) as they were, or as near as that many jobs can share them. A user's suite file
runs as written (its ``numjobs-over-cpus`` warning is theirs to act on).
"""

from __future__ import annotations

import dataclasses

from iobench.model import Fitted, Suite, Workload
from iobench.suites.options import MAX_IODEPTH

# Engines whose jobs each keep one IO in flight whatever iodepth says: fewer jobs would
# mean less IO in flight, so their workloads are not fitted.
SYNC_ENGINES = frozenset({"psync", "pvsync", "pvsync2", "sync", "mmap"})


def fitted_iodepth(iodepth: int, numjobs: int, cpus: int) -> int:
    """The iodepth of ``cpus`` jobs nearest to ``iodepth x numjobs`` IOs in flight (the
    deeper of two equally near; within 1 and MAX_IODEPTH)."""
    total = iodepth * numjobs
    below = max(1, min(MAX_IODEPTH, total // cpus))
    above = max(1, min(MAX_IODEPTH, -(-total // cpus)))
    return below if abs(below * cpus - total) < abs(above * cpus - total) else above


def fit_to_cpus(suite: Suite, cpus: int | None) -> Suite:
    """``suite`` with every workload of more jobs than ``cpus`` run as ``cpus`` jobs at a
    deeper queue (:func:`fitted_iodepth`), each recorded in ``Suite.fitted``. Only a
    built-in suite is fitted; a user's suite, or any suite when the CPU count is unknown,
    is returned as it is."""
    if not suite.builtin or not cpus or cpus < 1:
        return suite
    fitted: list[Fitted] = []

    def fit(w: Workload, name: str, most: int) -> Workload:
        if w.numjobs <= most or w.ioengine in SYNC_ENGINES:
            return w
        fitted.append(Fitted(name, w.numjobs, w.iodepth, most))
        return dataclasses.replace(
            w, numjobs=most, iodepth=fitted_iodepth(w.iodepth, w.numjobs, most)
        )

    def fit_group(w: Workload) -> Workload:
        """A group's jobs run together: with more of them than CPUs, each part runs at most
        its share of the CPUs (at least one job)."""
        if w.numjobs <= cpus:
            return w
        share = max(1, cpus // len(w.parts))
        return w.each_job(lambda part: fit(part, f"{w.name}/{part.name}", share))

    workloads = tuple(fit_group(w) if w.parts else fit(w, w.name, cpus) for w in suite.workloads)
    if not fitted:
        return suite
    return dataclasses.replace(suite, workloads=workloads, fitted=(*suite.fitted, *fitted))
