"""Findings about steady state (docs/steady-state.md; docs/findings.md). Pure.

- ``not-steady`` (warning, per workload and target): in a run with ``--steady-state pts``,
  a workload whose last window does not pass the rule, with how it was still moving and
  the figure it was heading for.
- ``steady-state`` (info, once per run): every workload reached steady state; said once,
  so that the method of the figures is on record.
- ``no-steady-state`` (warning, per target): a run without a steady-state rule on storage
  known to change as it is written (flash, a virtual machine's disk: a cloud volume).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from iobench.analysis.findings import Finding
from iobench.analysis.measured import in_vm, ram_backed
from iobench.analysis.results import headline, is_ok
from iobench.analysis.steady import (
    BANDWIDTH,
    RULE_KEY,
    Convergence,
    Rule,
    Tracked,
    Window,
    run_convergence,
    stored_rule,
)
from iobench.probe.context import Storage
from iobench.records import RunRecord, TargetRecord
from iobench.targets import kind_named
from iobench.units import format_iops, format_rate, listed

FLASH_TRANSPORTS = frozenset({"nvme", "mmc"})
FLASH_KNAMES = ("nvme", "mmcblk")  # a loop device's backing disk is known by its name only


def steady_findings(run: RunRecord) -> list[Finding]:
    """``not-steady`` and ``steady-state`` for a run with the PTS rule; ``no-steady-state``
    for a run without a rule on storage that changes as it is written."""
    return [*_convergence_findings(run), *_unruled(run)]


# -- a run with the rule -------------------------------------------------------------------------


def _convergence_findings(run: RunRecord) -> list[Finding]:
    try:
        rule = stored_rule(run)
        tracked = [t for t in run_convergence(run) if t.judged]
    except ValueError:
        # Not a rule iobench wrote (findings are made for the runs it makes): the views
        # that read a stored run say what is wrong with it.
        return []
    if rule is None or not tracked:
        return []
    unsteady = [t for t in tracked if not t.convergence.steady]
    if unsteady:
        return [_not_steady(t, rule) for t in unsteady]
    return [_all_steady(tracked, rule)]


def _figure(value: float, metric: str) -> str:
    return format_rate(value) if metric == BANDWIDTH else f"{format_iops(value)} IOPS"


def _pct(value: float) -> str:
    return f"{value:.3g} %"


def _rounds(n: int) -> str:
    return f"{n} round{'s' if n != 1 else ''}"


def _where(t: Tracked) -> str:
    aggregate = f" (the {t.clients} clients' aggregate)" if t.client == "all" else ""
    return f"{t.workload} on {t.target}{aggregate}"


def _not_steady(t: Tracked, rule: Rule) -> Finding:
    c = t.convergence
    w = c.window
    if w is None:
        text = (
            f"steady state not judged in {_rounds(c.rounds)}: {_where(t)} has figures for "
            f"{_rounds(len(c.series))}, and the rule judges a window of {rule.window}"
        )
    else:
        text = (
            f"steady state not reached in {_rounds(c.rounds)}: {_where(t)} {_movement(w)} "
            f"(window rounds {w.rounds[0]} to {w.rounds[-1]}: range {_pct(w.range_pct)}, "
            f"excursion {_pct(w.excursion_pct)}; the rule allows {_pct(rule.range_pct)} and "
            f"{_pct(rule.slope_pct)} of the window's average)"
        )
    return Finding(
        "not-steady",
        "warning",
        text + _heading_text(c),
        "run more rounds (--max-rounds), precondition the device first (iobench "
        "precondition), or make each round longer (--round-time) so that one round sees past "
        "the device's short swings",
        workload=t.workload,
        target=t.target,
        data=_data(c),
    )


def _movement(w: Window) -> str:
    """How the figure was still moving in the window, by the first test it fails."""
    if not w.slope_ok:
        way = "rising" if w.slope > 0 else "falling"
        return f"is still {way} by {_pct(abs(w.slope_pct))} of its average per round"
    if not w.range_ok:
        return f"still varies by {_pct(w.range_pct)} of its average within the window"
    gaps = listed([str(r) for r in w.missing])
    rounds = "rounds" if len(w.missing) > 1 else "round"
    return f"has no figure for {rounds} {gaps} (a failed step, or no IO)"


def _heading_text(c: Convergence) -> str:
    if not c.series:
        return ""
    at, last = c.series[-1]
    text = f"; last round {_figure(last, c.metric)}"
    if at != c.rounds:
        text = f"; last figure (round {at}) {_figure(last, c.metric)}"
    if c.heading is not None and c.heading_how == "levelling":
        text += f", heading towards {_figure(c.heading, c.metric)}"
    elif c.heading is not None and c.heading_how == "average":
        text += f", swinging around {_figure(c.heading, c.metric)}"
    elif c.heading is not None and c.window is not None:
        text += f", its trend line at round {c.window.rounds[-1]}: {_figure(c.heading, c.metric)}"
    return text


def _data(c: Convergence) -> dict[str, Any]:
    """The figures behind ``not-steady``, flat (a finding's data holds names to numbers,
    texts, flags or null: the run document's schema)."""
    w = c.window
    window: dict[str, Any] = {
        "window_first": w.rounds[0] if w else None,
        "window_last": w.rounds[-1] if w else None,
        "average": w.average if w else None,
        "range_pct": w.range_pct if w else None,
        "excursion_pct": w.excursion_pct if w else None,
        "slope_pct": w.slope_pct if w else None,
    }
    return {
        "metric": c.metric,
        "rounds": c.rounds,
        **window,
        "last": c.series[-1][1] if c.series else None,
        "heading": c.heading,
        "heading_how": c.heading_how,
        "rounds_without_figure": len(set(c.missing) | set(w.missing if w else ())),
    }


def _all_steady(tracked: Sequence[Tracked], rule: Rule) -> Finding:
    reached = [t.convergence.reached_at for t in tracked if t.convergence.reached_at]
    latest = max(reached)
    n = len(tracked)
    return Finding(
        "steady-state",
        "info",
        f"steady state reached at round {latest} for every workload ({n}), by the SNIA PTS "
        f"rule: over the last {rule.window} rounds the range within {_pct(rule.range_pct)} "
        f"and the least-squares line's excursion within {_pct(rule.slope_pct)} of their "
        "average. Each figure is its window's average",
        "nothing to do",
        data={"reached_at": latest, "first_reached_at": min(reached), "workloads_steady": n},
    )


# -- a run without a rule ------------------------------------------------------------------------


def _unruled(run: RunRecord) -> list[Finding]:
    """``no-steady-state`` for each target known to change as it is written, in a run
    without a rule that quotes figures (not a first look, a sweep or characterize)."""
    suite = run.suite_def
    if (
        run.origin != "run"
        or suite.as_dict().get(RULE_KEY) is not None
        or suite.indicative
        or suite.sweep is not None
        or suite.plan is not None
    ):
        return []
    found = []
    for t in sorted(run.targets, key=lambda t: t.position):
        ran = [r for r in run.results if r.target == t.spec and headline(r) and is_ok(r)]
        # A workload with fio's own ss= ran until fio saw it settle.
        if all("ss" in (r.params.get("options") or {}) for r in ran):
            continue
        why = changing_storage(t, run.host)
        if why is not None:
            found.append(
                Finding(
                    "no-steady-state",
                    "warning",
                    f"{t.spec} was measured without a steady-state rule, on {why}. Its "
                    "figures are of the device's state at that moment; a later run can differ",
                    "precondition it (iobench precondition), then run with --steady-state "
                    "pts: the suite repeats in rounds until every figure settles by the SNIA "
                    "PTS rule (--steady-state fio: each workload stops once fio sees it "
                    "settle, a quicker answer)",
                    target=t.spec,
                )
            )
    return found


def changing_storage(t: TargetRecord, host: dict[str, Any]) -> str | None:
    """What makes the storage under a target change as it is written, as a finding says
    it; None when iobench cannot tell that it does.

    Never for storage in RAM (tmpfs, a RAM disk, a loop device over a file in RAM), and
    never for network storage (NFS and other network filesystems, an NBD export, an RBD
    image): what serves it (its disks, its caches, replication) is out of this host's
    sight, so a warning would be a guess."""
    if ram_backed(t):
        return None
    try:
        if not kind_named(t.kind).opened:
            return None  # reached by an engine over the network
    except KeyError:
        return None  # an imported target is of no kind
    storage = Storage.of(t.context)
    if storage.filesystem.get("network") or not storage.disks:
        return None  # no block device under it (NFS, 9p, virtiofs ...), or none found
    device = _device(storage)
    if in_vm(host):
        vm = (host.get("virtualization") or {}).get("vm")
        return (
            f"{device}, a virtual machine's disk ({vm}): a cloud volume or its host's "
            "storage, whose speed changes as it is written (burst credits spent, throttles, "
            "the flash behind it filling up)"
        )
    flash = _flash(storage)
    if flash is not None:
        return (
            f"{flash}, flash storage: an SSD is fastest fresh and slows as it is written, "
            "once its spare area is used up (the write cliff)"
        )
    return None


def _device(storage: Storage) -> str:
    """The disks under a target, a loop device with the devices under its file."""
    backing = [str(d.get("kname")) for d in storage.io_devices if d.get("role") == "backing"]
    names = []
    for d in storage.disks:
        name = str(d.get("path") or d.get("kname"))
        if d.get("type") == "loop" and backing:
            name += f" (a loop device over a file on {listed(backing)})"
        names.append(name)
    return listed(names)


def _flash(storage: Storage) -> str | None:
    """The flash device under a target on real hardware: a disk that reports itself
    non-rotational (a loop device does when the kernel saw its file's disk is) or is
    attached as NVMe or MMC; the disk under a loop device's file, known by its name."""
    for d in storage.disks:
        if d.get("rotational") is False or d.get("transport") in FLASH_TRANSPORTS:
            return str(d.get("path") or d.get("kname"))
    for d in storage.io_devices:
        kname = str(d.get("kname") or "")
        if d.get("role") == "backing" and kname.startswith(FLASH_KNAMES):
            return _device(storage)
    return None
