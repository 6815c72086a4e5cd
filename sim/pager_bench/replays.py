"""Every replay `make bench` makes, as one list of jobs run side by side (`jobs.side_by_side`): the week's
traces with each design, pager again with quiet hours and with each other rest (`simulate.design_jobs`),
the long Telegram outages with each design (`outages.outage_jobs`), the burst, the scale table's rows
(`scale.table_jobs`) and the outages the sweep must hold through (`held.held_jobs`); and, among them, two
jobs that time nothing: the modules an ignored delivery loads (`costs.ignored_delivery_modules`) and the
trees the cold starts run from (`costs.cold_trees`). One pool for them all: the short ones fill in beside
the long ones, and no stage waits for the slowest replay of another.

The measures of time (the handler's cost, the cold starts) are not among them: `__main__` runs them after
these, alone, so that no replay competes with them for a CPU.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import costs, fleet, held, outages, phone, scale, simulate
from .jobs import Job, processes, shared, side_by_side


@dataclass
class Replays:
    results: dict[str, dict[str, dict[str, Any]]]  # by trace, then design (`simulate.design_results`)
    outages: dict[str, dict[str, dict[str, Any]]]  # by scenario, then design
    burst: dict[str, Any]
    scale: dict[str, Any] | None  # {"table": by scenario, then size; "held": `held.held_of`}; None: not replayed
    modules: dict[str, Any] | None  # `costs.ignored_delivery_modules`; None: not counted
    trees: costs.ColdTrees | None  # `costs.cold_trees`; None: not laid out
    processes: int  # how many processes replayed them


@dataclass(frozen=True)
class Plan:
    """What to replay besides the traces and the designs; the defaults are `make bench`'s."""

    seed: int = 1
    quiet_on: Sequence[str] = ("subscribed", "full")  # the first of them replayed
    gaps: Sequence[int] = phone.GAPS
    drain: float = simulate.DRAIN
    long_outages: tuple[tuple[str, float, float], ...] = outages.SCENARIOS
    burst: int = outages.BURST  # failures at once
    sizes: Sequence[int] | None = scale.SIZES  # None: no scale table, nor the outages the sweep must hold through
    scenarios: Sequence[scale.Scenario] = scale.SCENARIOS
    github_down: tuple[tuple[str, float, float], ...] = held.GITHUB_SCENARIOS
    modules: bool = True  # count the modules an ignored delivery loads
    cold_trees: bool = True  # lay out the trees the cold starts run from


def _cold_trees() -> costs.ColdTrees:
    progress = shared("progress")
    return costs.cold_trees(progress) if progress else costs.cold_trees()


def plan_jobs(traces: dict[str, fleet.Trace], designs: list[str], plan: Plan, *, pem: str,
              cpu: Callable[[], float] = time.process_time) -> list[Job]:
    on = [name for name in plan.quiet_on if name in traces][:1]
    work = simulate.design_jobs(traces, designs, pem=pem, quiet_on=on, gaps=plan.gaps, drain=plan.drain, cpu=cpu)
    work += outages.outage_jobs(designs, pem=pem, seed=plan.seed, scenarios=plan.long_outages)
    work.append(Job(key=("burst",), run=outages.burst, kwargs={"pem": pem, "n": plan.burst}, weight=0.0, label="burst"))
    if plan.sizes is not None:
        work += scale.table_jobs(plan.sizes, plan.scenarios, pem=pem, seed=plan.seed)
        work += held.held_jobs(pem=pem, seed=plan.seed, github_scenarios=plan.github_down)
    if plan.modules:  # a few fresh interpreters, counted, not timed
        work.append(Job(key=("modules",), run=costs.ignored_delivery_modules, kwargs={"pem": pem}, weight=3.0,
                        label="modules of an ignored delivery"))
    if plan.cold_trees:  # copies and compiles (and installs, the first time): first, as it may wait on pip
        work.append(Job(key=("cold trees",), run=_cold_trees, weight=1000.0, label="the cold starts' trees"))
    return work


def replay_all(traces: dict[str, fleet.Trace], designs: list[str], plan: Plan = Plan(), *, pem: str, jobs: int,
               progress: Callable[[str], None] | None = None, cpu: Callable[[], float] = time.process_time) -> Replays:
    """Every replay of `plan` in up to `jobs` processes (forked: they inherit the traces), the longest first.
    `cpu`: the clock the replays of the traces bill the functions' CPU time by (the process's CPU time)."""
    work = plan_jobs(traces, designs, plan, pem=pem, cpu=cpu)
    done = side_by_side(work, jobs=jobs, shared={"traces": dict(traces), "progress": progress}, progress=progress)
    on = [name for name in plan.quiet_on if name in traces][:1]
    return Replays(
        results=simulate.design_results(traces, designs, done, pem=pem, quiet_on=on, gaps=plan.gaps),
        outages=outages.outages_of(done, designs, plan.long_outages),
        burst=done[("burst",)],
        scale=None if plan.sizes is None else {"table": scale.table_of(done, plan.sizes, plan.scenarios),
                                               "held": held.held_of(done, plan.github_down)},
        modules=done.get(("modules",)),
        trees=done.get(("cold trees",)),
        processes=processes(jobs, len(work)),
    )
