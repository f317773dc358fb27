"""Every rule that ties one option to another (or to the command's arguments), each a small
function that raises the UserError a user sees. The commands call them, in the order
their messages should come; a rule about one option's own value stays where it is
parsed. What a run on clients does not take (--spec, --prefill, --destructive, several
TARGETs) is the engine's rule (engine.remote.check_clients_request), called by `run` as
early as these."""

from __future__ import annotations

from collections.abc import Sequence

from iobench.errors import UserError
from iobench.suites.options import say_seconds


def overwrite_needs_destructive(destructive: bool, overwrite_signatures: bool) -> None:
    """run, doctor, sweep, characterize."""
    if overwrite_signatures and not destructive:
        raise UserError(
            "--overwrite-signatures only makes sense with --destructive",
            "add --destructive, or drop --overwrite-signatures",
        )


def spec_param_needs_spec(spec: str | None, spec_params: Sequence[str]) -> None:
    """run, doctor."""
    if spec_params and not spec:
        raise UserError("--spec-param goes with --spec", "name the spec with --spec")


def prefill_or_precondition(prefill: bool, precondition: bool) -> None:
    """run, doctor: a precondition writes the test area already."""
    if prefill and precondition:
        raise UserError(
            "--prefill and --precondition both write the test area before the workloads",
            "give one: --precondition purges the area, then writes it twice over",
        )


def scale_needs_clients(clients: str | None, scale: str | None) -> None:
    """run."""
    if scale and not clients:
        raise UserError("--scale goes with --clients", "name the clients with --clients")


def size_holds_blocks(size: str, area: int, block_sizes: Sequence[int]) -> None:
    """sweep: --size against the largest of --bs."""
    if area < max(block_sizes):
        raise UserError(f"--size {size} is smaller than the largest block size")


def budget_holds_points(max_time: str, budget_s: float, point_s: float, method: str) -> None:
    """characterize: --max-time against the shortest a point can take (``point_s``: with
    --method steady, --point-time; with fast, a shortest point and its ramp; times --repeat)."""
    if budget_s >= 4 * point_s:
        return
    if method == "steady":
        raise UserError(
            f"--max-time {max_time} leaves no room: it must be at least 4 x --point-time",
            "raise --max-time or lower --point-time",
        )
    raise UserError(
        f"--max-time {max_time} leaves no room: it must hold at least 4 of the shortest "
        f"points ({say_seconds(4 * point_s)})",
        "raise --max-time",
    )


def json_needs_yes(as_json: bool, yes: bool) -> None:
    """rm."""
    if as_json and not yes:
        raise UserError(
            "--json needs --yes: rm asks before it removes anything, and the question "
            "cannot be part of a JSON document",
            "add --yes once you have checked what would go, e.g. with `iobench list`",
        )


def some_run_named(run_refs: Sequence[str], labels: Sequence[str]) -> None:
    """compare, report: RUNs, --label, or both."""
    if not run_refs and not labels:
        raise UserError("name at least one run (an id, latest, -N) or --label")


def baseline_compared(base: int | None, run_ids: Sequence[int]) -> None:
    """compare: --baseline names one of the compared runs."""
    if base is not None and base not in run_ids:
        raise UserError(
            f"the baseline run {base} is not among the compared runs",
            "name it among the runs too",
        )


def baseline_in_comparison(
    baseline: str | None, base: int | None, run_ids: Sequence[int], setups: int
) -> None:
    """report: --baseline needs a comparison (two setups or more) that holds it."""
    if base is not None and (setups < 2 or base not in run_ids):
        raise UserError(
            f"--baseline {baseline}: the baseline must be one of two or more compared runs",
            "name the baseline among the runs, or drop --baseline",
        )
