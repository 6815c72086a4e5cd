"""One sweep run's plan, whole: pure, from what the run gathered to what it does.

The shell (`pager.sweep.run`) gathers everything first: the state, both lists of deliveries, the control
repository's alarm as it stands, the refusals written since the last run and whether the services that
refused would take such calls now, the ↻ job's next page of the failure list, whether ↻ all waits, the
chat's move, what waits for a failed service. Then `plan_cycle` decides, with no I/O and no clock but
`now`, in named phases:

(a) the deliveries: `plan.plan_run` (what to ask GitHub for again, the `delivery:` entries, the state);
(b) pager's own health: `health.served` and its `pager:` entries (`health.wanted`, `health.change`);
(c) the ↻ job of refused deliveries: its picks from the page gathered (`health.advance`), followed from
    now on like the sweep's own redeliveries;
(d) ↻ all: the failed deliveries to ask for again in this run, within what (a) and (c) leave;
(e) what waits: pager's own outage ended (the check catches up), or everything held asked for (cleared).

The shell then commits `Cycle.plan.state` and carries the plan out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..settings import Settings
from ..signals.alarm import OWN_PREFIX, delivery_times, to_deliver_again
from ..waiting import OWN, Waiting, merged
from . import health as own
from . import plan as planner
from . import recovery
from .plan import ActsOn, Attempt, ListRead, Plan, Reading, State


@dataclass(frozen=True)
class JobPage:
    """The page of the failure list the ↻ job reads next, as GitHub served it."""

    items: tuple[Attempt, ...]
    next_url: str | None


@dataclass(frozen=True)
class Gathered:
    """Everything a run read before it plans."""

    state: State
    failures: ListRead
    failure_reading: Reading
    outcomes: ListRead | None  # None: no room for a page of the every-outcome list
    all_reading: Reading
    shown: Mapping[str, Mapping[str, Any]]  # the control repository's alarm: its open entries
    refusals: tuple[tuple[str, Mapping[str, Any]], ...]  # refusal items written since the last run (name, data)
    refusers_answer: bool  # the services that refused signals would take such calls now
    job: own.Job | None  # the ↻ job of refused deliveries
    job_page: JobPage | None  # its next page (None: not read)
    again_all: bool  # ↻ all was pressed and waits
    moved: Mapping[str, Any] | None  # the chat's move to a supergroup (pager.chat)
    waiting: Waiting | None  # what waited for a failed service that answers again (None: nothing, or still failing)
    hold: bool  # a failed service's probe still fails: ask for nothing
    event_id: str | None  # the scheduled event's id
    calls_used: int  # the run's calls so far


@dataclass(frozen=True)
class Cycle:
    """What the run does: the plan (its state to commit), pager's own health, the ↻ picks."""

    plan: Plan
    health: own.Health
    picked: tuple[Attempt, ...]  # refused deliveries the ↻ job asks for again
    job: own.Job | None  # the ↻ job once this run's picks are asked for
    again_all: tuple[tuple[str, int], ...]  # ↻ all: (entry key, attempt) to ask for again in this run
    again_all_pending: bool  # ↻ all still has entries after this run
    recovery: str | None  # what became of what waited, for the summary


def plan_cycle(g: Gathered, *, settings: Settings, now: float, acts_on: ActsOn,
               limits: planner.Limits = planner.LIMITS) -> Cycle:
    # (a) the deliveries
    plan = planner.plan_run(failures=g.failures, failure_reading=g.failure_reading, outcomes=g.outcomes,
                            all_reading=g.all_reading, state=g.state, entries=planner_entries(g.shown), settings=settings,
                            now=now, calls_used=g.calls_used, limits=limits, acts_on=acts_on, hold=g.hold)
    plan = replace(plan, state=replace(plan.state, last_event=g.event_id or g.state.last_event))
    # (b) pager's own health
    health = own.served(own.Health.from_data(g.state.health), failures=g.failures.items,
                        outcomes=g.outcomes.items if g.outcomes else (), refusals=g.refusals, job=g.job, now=now,
                        works=g.refusers_answer, forgotten=[g.shown[k] for k in plan.forgotten if k in g.shown])
    plan = with_own_entries(plan, health, g.job, g.moved, g.shown, settings, now)
    # (c) the ↻ job of refused deliveries
    picked, job = ((), g.job) if g.hold or plan.no_room else pick_refused(g, health, plan, settings)
    plan = with_picked(plan, picked, now)
    # (d) ↻ all
    room = 0 if g.hold or plan.no_room or not g.again_all else redeliveries_left(settings, plan, picked, g.calls_used)
    again_all = tuple(to_deliver_again(g.shown, room))
    again_all_pending = g.again_all and len(again_all) < len(to_deliver_again(g.shown))
    # (e) what waits
    waiting = merged(g.waiting, Waiting((OWN,), now)) if plan.own_recovered else g.waiting
    job_pending = job is not None and not job.finished and works(job, health)
    plan, said = settled(plan, waiting, job_pending or again_all_pending, now)
    if plan.state.own_outage_since is not None:
        said = "held: pager's own endpoint fails every delivery"
    return Cycle(plan, health, tuple(picked), job, again_all, again_all_pending, said)


def planner_entries(shown: Mapping[str, Mapping[str, Any]]) -> planner.OpenEntries:
    """The `delivery:` entries of the alarm as the planner counts them: guid -> their newest attempt's time."""
    return delivery_times(shown)


def with_own_entries(plan: Plan, health: own.Health, job: own.Job | None, moved: Mapping[str, Any] | None,
                     shown: Mapping[str, Any], settings: Settings, now: float) -> Plan:
    """The plan with pager's own entries changed as its health says, and the health in its state."""
    mine = {k: v for k, v in shown.items() if k.startswith(OWN_PREFIX)}
    opened, closed = own.change(own.wanted(health, job, now=now, url=settings.advanced_page, zone=settings.zone, moved=moved), mine)
    if plan.no_room:
        opened, closed = {}, ()
    state = replace(plan.state, health=health.to_data(), alarm_due=plan.state.alarm_due or bool(opened or closed))
    return replace(plan, opened={**plan.opened, **opened}, closed=plan.closed + closed, state=state)


def works(job: own.Job, health: own.Health) -> bool:
    """Whether what the job delivers again would be taken now."""
    return health.secret_works if job.status == own.SECRET_REFUSED else health.refusals_work


def redeliveries_left(settings: Settings, plan: Plan, picked: Any, calls_used: int) -> int:
    """Redeliveries a ↻ may still ask for in this run: what the plan and earlier picks leave of
    SWEEP_MAX_REDELIVERIES, within the calls the budget leaves beside the alarm's change."""
    asked = len(plan.redeliver) + len(picked)
    calls_left = settings.sweep_call_budget - calls_used - asked - planner.ALARM_CALLS
    return max(0, min(settings.sweep_max_redeliveries - asked, calls_left))


def pick_refused(g: Gathered, health: own.Health, plan: Plan, settings: Settings) -> tuple[tuple[Attempt, ...], own.Job | None]:
    """↻ of the deliveries refused with 401 or of the signals refused upstream (424): the job's next ones
    on the page gathered, as many as the run leaves room for, none another run asked for already (two
    runs overlap: the commit orders them, the asks tell). Nothing while they would still be refused."""
    job = g.job
    if job is None or job.finished or g.job_page is None or not works(job, health):
        return (), job
    room = redeliveries_left(settings, plan, (), g.calls_used)
    if room <= 0:
        return (), job
    asked = frozenset(guid for guid, _, _ in plan.state.asked)
    picked, job = own.advance(job, g.job_page.items, g.job_page.next_url, room, asked)
    return tuple(picked), job


def with_picked(plan: Plan, picked: Any, now: float) -> Plan:
    """The plan's state following the picked events from now on, like the sweep's own redeliveries: a
    redelivery of one that fails is asked for again, or named in the alarm, never dropped."""
    if not picked:
        return plan
    asks = {g: (g, at, ident) for g, at, ident in plan.state.asked}
    asks.update({a.guid: (a.guid, now, a.id) for a in picked})
    followed = {a.id: a for a in (*plan.state.followed, *picked)}
    return replace(plan, state=replace(plan.state, followed=tuple(sorted(followed.values(), key=lambda a: a.id)),
                                       asked=tuple(sorted(asks.values()))))


def settled(plan: Plan, waiting: Waiting | None, job_pending: bool, now: float) -> tuple[Plan, str | None]:
    """The plan whose commit clears what waited, when it asks for every event it can (pager.sweep.recovery),
    and what became of it."""
    if waiting is None:
        return plan, None
    after, said = recovery.after_plan(waiting, plan.counts, job_pending=job_pending, complete=not plan.no_room, now=now)
    return replace(plan, state=replace(plan.state, waiting=after.to_data() if after else {})), said
