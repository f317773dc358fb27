"""``--steady-state``, ``--round-time`` and ``--max-rounds`` of ``run`` and ``doctor``:
checked, and what they make of the suite (docs/steady-state.md)."""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from iobench.errors import UserError
from iobench.model import Suite, Workload
from iobench.units import fio_duration, parse_duration

RULES = ("pts", "fio", "none")
# Built-in suites that are run in rounds unless --steady-state says otherwise.
STEADY_SUITES = {"pts-iops": "pts"}
# --steady-state fio: fio's own criterion inside each job (FIO.md §4, docs/steady-state.md):
# the least-squares slope of the window's per-second IOPS (bandwidth for a bandwidth test),
# as a % of their mean per second, below EXCURSION_PCT / (ss_dur - 1): the PTS's 10 %
# excursion across the window, applied to seconds instead of rounds.
EXCURSION_PCT = 10.0
FIO_WINDOW_MIN_S = 2  # fio's ss_dur: a quarter of the runtime, 2 to 60 s
FIO_WINDOW_MAX_S = 60
MIN_WORKLOAD_S = 1.0  # a round's share per workload is never below this

steady_options = [
    click.option(
        "--steady-state",
        "steady_state",
        type=click.Choice(RULES),
        help="pts: run the suite in rounds until every workload's IOPS (bandwidth for "
        "bandwidth tests) are steady by the SNIA PTS rule over the last 5 rounds (range "
        "within 20 %, trend within 10 % of their average), at most --max-rounds; the "
        "result is the window's average. fio: fio's own ss= ends each job once the trend "
        "of its per-second IOPS over a window of a quarter of its runtime moves less than "
        "10 % of their mean (a quick look on seconds, not the PTS rule on rounds). "
        "Default: none (pts for the pts-iops suite).",
    ),
    click.option(
        "--round-time",
        help="With --steady-state pts: the IO time of one round, shared equally by the "
        "suite's workloads (e.g. 30s, 2m); default: the suite's runtimes.",
    ),
    click.option(
        "--max-rounds",
        type=click.IntRange(1, 1000),
        help="With --steady-state pts: stop after this many rounds when the rule never "
        "holds (default 25, the PTS's).",
    ),
]


def steady_request(
    suite: Suite,
    rule: str | None,
    round_time: str | None,
    max_rounds: int | None,
    *,
    repeat: int = 1,
    runtime: str | None = None,
) -> tuple[Suite, dict[str, Any] | None]:
    """The suite as it runs in rounds (``--round-time``) or with fio's ss=, and the
    request's ``steady_state``; refuses what means nothing together."""
    if rule is None:
        rule = STEADY_SUITES.get(suite.name, "none") if suite.builtin else "none"
    if rule != "pts":
        given = "--round-time" if round_time else "--max-rounds" if max_rounds else None
        if given:
            raise UserError(
                f"{given} goes with --steady-state pts: it sets the rounds the rule judges",
                f"add --steady-state pts, or leave out {given}",
            )
    if rule == "none":
        return suite, None
    if repeat > 1:
        raise UserError(
            f"--repeat does not go with --steady-state {rule}: "
            + (
                "the rounds are the repetitions, and the rule says how many"
                if rule == "pts"
                else "fio ends each job once steady, and a repetition of that is a new job"
            ),
            "leave out --repeat (--max-rounds caps the rounds)"
            if rule == "pts"
            else "leave out --repeat",
        )
    if rule == "fio":
        criterion = f"slope within {EXCURSION_PCT:g} % of the mean across fio's window"
        return with_fio_steady_state(suite), {"rule": "fio", "criterion": criterion}
    if round_time and runtime:
        raise UserError(
            "--round-time and --runtime both set each workload's runtime",
            "give one: --round-time shares a round among the workloads",
        )
    from iobench.analysis.steady import Rule

    seconds = None
    if round_time:
        seconds = parse_duration(round_time)
        suite = _rounds_of(suite, seconds, round_time)
    rule_of = Rule()
    if max_rounds is not None and max_rounds < rule_of.window:
        raise UserError(
            f"--max-rounds {max_rounds} is fewer than the {rule_of.window} rounds the rule "
            "judges: it could never say the figures are steady",
            f"give --max-rounds {rule_of.window} or more",
        )
    settings = dataclasses.replace(rule_of, max_rounds=max_rounds or rule_of.max_rounds)
    suite = dataclasses.replace(suite, in_rounds=True)
    return suite, {**settings.as_dict(), "round_time_s": seconds}


def _rounds_of(suite: Suite, seconds: float, typed: str) -> Suite:
    """Each workload's runtime a share of ``seconds``, its ramp kept."""
    share = seconds / len(suite.workloads)
    if share < MIN_WORKLOAD_S:
        raise UserError(
            f"--round-time {typed} leaves {share:.2f} s to each of the suite's "
            f"{len(suite.workloads)} workloads, less than {MIN_WORKLOAD_S:g} s",
            f"give at least {len(suite.workloads) * MIN_WORKLOAD_S:g}s",
        )
    from iobench.suites import apply_overrides

    return apply_overrides(suite, runtime_s=share, written={"--runtime": typed})


def fio_criterion(job: Workload) -> tuple[tuple[str, str], ...]:
    """fio's ss= options for ``job``: its window a quarter of its runtime (2 to 60 s),
    the slope of its tracking figure within the PTS's excursion over that window."""
    from iobench.analysis.steady import tracking_metric

    window = int(min(FIO_WINDOW_MAX_S, max(FIO_WINDOW_MIN_S, job.runtime_s // 4)))
    what = "iops_slope" if tracking_metric(job.params) == "iops" else "bw_slope"
    limit = EXCURSION_PCT / (window - 1)
    return (("ss", f"{what}:{limit:.4g}%"), ("ss_dur", fio_duration(float(window))))


def with_fio_steady_state(suite: Suite) -> Suite:
    """Every job ended by fio's own steady-state detection (:func:`fio_criterion`), its
    runtime the most it may run."""

    def add(job: Workload) -> Workload:
        ours = ("ss", "ss_dur", "ss_ramp", "time_based")
        kept = tuple(o for o in job.options if o[0] not in ours)
        return dataclasses.replace(job, options=kept + fio_criterion(job) + (("time_based", "1"),))

    return dataclasses.replace(suite, workloads=tuple(w.each_job(add) for w in suite.workloads))
