"""The sweep's shell: gather, let the one pure plan decide (pager.sweep.cycle), commit it, carry it out.

A run (README, "Operating the sweep"):
1. load the state (`sweep#state`); a duplicate invocation of the scheduled event whose run saved it
   (EventBridge may invoke twice; its `id` tells) steps aside before any call. While something a
   handler failed on still waits for its service (pager.sweep.recovery) and a probe says the service
   still fails, the run asks GitHub for nothing (`hold`);
2. gather: the control repository's alarm, the refusals written since the last run and whether the
   services that refused would take such calls now, the ↻ job's next page of the failure list, ↻ all,
   the chat's move; then the failure list and, within what the budget leaves, the every-outcome list
   (one app JWT for every call: the GitHub client signs it once and reuses it); and plan, all of it at
   once, with no I/O (`cycle.plan_cycle`; `read_and_plan`, its deliveries' part, the property tests
   run on a simulated GitHub);
3. **commit** the plan's state, conditionally on the version read, before
   acting on it: of two overlapping runs only the one whose write lands goes on, so they never both
   redeliver; the other logs and stops (so does a run whose state a failing delivery noted meanwhile).
   The same write clears what waited for a service once the plan asks for every event it can;
4. ask GitHub for the redeliveries, oldest first; a refused (4xx) or failed (5xx, rate limit, no
   answer) redelivery is logged and the run goes on;
5. change the control repository's alarm last, only if the calls left fit one change; a failure there
   stops nothing, the change waits for the next run (the state's `alarm_due`). A change that was made
   clears `alarm_due`, the run's second write, and the only one: the state is written once per run,
   and once more when the alarm changes (besides the alarm's own records);
6. log one summary line, one "reach gap" line per list that fell short, and the EMF metrics.

So the state item is also the lease: its version orders overlapping runs, and its `asked` (the
redeliveries asked for, until GitHub lists their attempts, an hour at most) keeps a run that comes
moments after another (the recovery check's, a minute apart) from asking again for what that run asked
for. Committing before acting is safe because GitHub's list counts the attempts: what GitHub did not
take is dropped from `asked` by the run's second write, and a run that dies after its commit leaves
its events to the runs after that hour.

A list that GitHub does not serve (5xx, rate limit, refusal) ends the run before any redelivery: the
state is left as it was, only counting the run for pager's own health, so the next run reads back as far.

The run keeps a deadline (`RUN_SECONDS`, inside the function's 180 s timeout): past it the clients start
no new call, so a slow GitHub ends the run early but still lets it save the state and log its summary.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .. import chat, deadline, words
from ..errors import ConfigError, Conflict, DeadlineExceeded, PagerError, Permanent, StoreUnavailable
from ..observe import count, logger
from ..permissions import missing_permissions, needed_permissions
from ..refusals import KEY as REFUSALS_KEY
from ..services import Services
from ..settings import Settings
from ..signals import acts_on, alarm, due, release
from ..signals.alarm import OWN_PREFIX, entries_now, record_entries, render_now
from ..values import field, text
from ..waiting import Waiting, load, merged
from . import cycle, presses, recovery
from . import health as own
from . import plan as planner
from .plan import STATE_KEY, ActsOn, Limits, ListRead, Plan, Reading, State

PER_PAGE = 100
RUN_SECONDS = 150.0
ATTEND_SECONDS = 20.0  # what comes due in one minute: renders and a summary, well inside the check's minute

FetchPage = Callable[[str | None, str | None], Any]  # (status filter, next URL; None: the first page) -> DeliveryPage
_LIST_NAMES = {planner.FAILURES: "failure list", planner.ALL: "every-outcome list"}


class ListNotServed(PagerError):
    """GitHub did not serve a list (a 5xx, a rate limit, a refusal, the deadline): the run ends before any
    redelivery and keeps the state, so the next run reads back as far. `error` is what the page raised."""

    def __init__(self, reading: Reading, error: PagerError) -> None:
        super().__init__(f"{_LIST_NAMES[reading.list]}: {type(error).__name__}")
        self.error = error


def read_list(fetch: FetchPage, reading: Reading) -> ListRead:
    """Follow `Link: rel="next"` until the page that reaches `reading`'s stop, the list's end or its page cap."""
    items: list[planner.Attempt] = []
    url: str | None = None
    pages = 0
    while pages < reading.pages:
        try:
            page = fetch(reading.status, url)
        except PagerError as exc:
            raise ListNotServed(reading, exc) from exc
        pages += 1
        parsed = [a for a in (planner.Attempt.from_github(item) for item in page.items) if a is not None]
        items.extend(parsed)
        if reading.reached(parsed) or not page.next_url:
            return ListRead(tuple(items), pages, cut_short=False)
        url = page.next_url
    return ListRead(tuple(items), pages, cut_short=True)


@dataclass(frozen=True)
class Planned:
    """What a run read of both lists (`outcomes` None: no room for a page of it), and the plan made of it."""

    failures: ListRead
    outcomes: ListRead | None
    plan: Plan

    @property
    def pages(self) -> dict[str, int]:
        return {planner.FAILURES: self.failures.pages, planner.ALL: 0 if self.outcomes is None else self.outcomes.pages}

    @property
    def seen(self) -> set[int]:
        """The ids of the deliveries the two lists returned."""
        return {a.id for a in (*self.failures.items, *(self.outcomes.items if self.outcomes else ()))}


def read_lists(fetch: FetchPage, *, state: State, settings: Settings, now: float,
               calls_used: Callable[[], int]) -> tuple[ListRead, Reading, ListRead | None, Reading]:
    """Read the failure list, then, within what the budget leaves, the every-outcome list (None: no room
    for a page of it), each with how far it was to be read. Raises `ListNotServed`."""
    failure_reading = planner.failure_reading(settings, now, calls_used(), state)
    failures = read_list(fetch, failure_reading)
    all_reading = planner.all_reading(settings, state, now, calls_used())
    outcomes = read_list(fetch, all_reading) if all_reading.pages > 0 else None
    return failures, failure_reading, outcomes, all_reading


def read_and_plan(
    fetch: FetchPage,
    *,
    state: State,
    entries: planner.OpenEntries,
    settings: Settings,
    now: float,
    calls_used: Callable[[], int],
    acts_on: ActsOn,
    limits: Limits = planner.LIMITS,
    hold: bool = False,
) -> Planned:
    """Read the failure list, then, within what the budget leaves, the every-outcome list, through `fetch`,
    and plan from what they returned, the state and the alarm's open `delivery:` entries. `calls_used()`
    is the run's calls so far (the clients' own counters: a page may take more than one call). Raises
    `ListNotServed` when GitHub does not serve a list."""
    failures, failure_reading, outcomes, all_reading = read_lists(fetch, state=state, settings=settings, now=now,
                                                                  calls_used=calls_used)
    plan = planner.plan_run(
        failures=failures,
        failure_reading=failure_reading,
        outcomes=outcomes,
        all_reading=all_reading,
        state=state,
        entries=entries,
        settings=settings,
        now=now,
        calls_used=calls_used(),
        limits=limits,
        acts_on=acts_on,
        hold=hold,
    )
    return Planned(failures, outcomes, plan)


class _Calls:
    """The run's GitHub and Telegram calls, from the clients' own counters."""

    def __init__(self, services: Services) -> None:
        self._services = services
        self._start = services.calls

    @property
    def used(self) -> int:
        return self._services.calls - self._start


def run_sweep(
    services: Services,
    *,
    now: float,
    run_id: str,
    seconds: float = RUN_SECONDS,
    event_id: str | None = None,
    probed: tuple[Any, Waiting] | None = None,
) -> dict[str, Any]:
    """One run of the sweep; returns its summary (also logged as the "sweep run" line).

    `seconds` bounds the run's calls (see the module's docstring); `event_id` is the scheduled event's
    id (a duplicate invocation of it steps aside); `probed` the state item the recovery check read
    and what waits in it, whose services the check found answering just now (pager.sweep.recovery)."""
    with deadline.within(seconds):
        return _run(services, now=now, run_id=run_id, event_id=event_id, probed=probed)


def check(services: Services, *, now: float, run_id: str, seconds: float) -> dict[str, Any]:
    """The every-minute check: what comes due without an event (an alarm past its grace, the quiet hours'
    summary: pager.signals.due, one query when nothing is due); then one read when nothing waits for a
    failed service; else probe, and sweep as soon as all answer."""
    attended = _attend(services, now, run_id)
    record, waiting = load(services)
    if waiting is None:
        return {"run_id": run_id, "outcome": "nothing waits", **attended}
    if now < waiting.not_before:
        return {"run_id": run_id, "outcome": "waiting: retry later", **attended}
    failing = recovery.probe(services, waiting)
    if failing is not None:
        summary = {"run_id": run_id, "outcome": f"waiting: {failing} still failing", "since": waiting.since}
        logger.info("recovery check", extra=summary)
        return summary
    return run_sweep(services, now=now, run_id=run_id, seconds=seconds, probed=(record, waiting))


def _attend(services: Services, now: float, run_id: str) -> dict[str, Any]:
    """What came due this minute (pager.signals.due); a failure is logged, and the next minute tries again."""
    try:
        with deadline.within(ATTEND_SECONDS):
            attended = due.tick(services, now)
    except PagerError as exc:
        logger.warning("attention not checked", extra={"run_id": run_id, "error": type(exc).__name__, "reason": str(exc)})
        return {}
    if attended:
        logger.info("attention", extra={"run_id": run_id, **attended})
    return attended


def _held(services: Services, state: State, probed: tuple[Any, Waiting] | None) -> tuple[Waiting | None, str | None]:
    """What waits for a failed service, and the service still failing (then the run asks for nothing)."""
    if probed is not None:
        return probed[1], None
    waiting = Waiting.from_data(state.waiting)
    return waiting, None if waiting is None else recovery.probe(services, waiting)


def _run(services: Services, *, now: float, run_id: str, event_id: str | None,
         probed: tuple[Any, Waiting] | None) -> dict[str, Any]:
    settings = services.settings
    calls = _Calls(services)
    summary: dict[str, Any] = {"run_id": run_id, "call_budget": settings.sweep_call_budget}

    record = services.store.load(STATE_KEY) if probed is None else probed[0]  # the check read it just now
    if set(record.data) - {"waiting"} and record.data.get("v") != planner.STATE_VERSION:
        logger.warning("sweep state of another version, starting afresh", extra={"run_id": run_id, "version": record.data.get("v")})
    try:
        state = State.from_data(record.data)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        # Never stay stuck on an item that cannot be read: start afresh, like a first run.
        logger.error("sweep state unreadable, starting afresh", extra={"run_id": run_id, "error": type(exc).__name__})
        waiting = record.data.get("waiting")
        state = State(waiting=waiting if isinstance(waiting, Mapping) else {})
    if event_id is not None and event_id == state.last_event:
        summary.update(outcome="skipped: a duplicate invocation of the run that saved the state", calls_used=calls.used)
        logger.info("sweep run", extra=summary)
        return summary
    waiting, failing = _held(services, state, probed)
    if failing is not None:
        summary.update(recovery=f"held: {failing} still failing")
    _sweep(services, summary, calls, now=now, run_id=run_id, event_id=event_id, record=record, state=state,
           waiting=None if failing else waiting, hold=failing is not None)
    outcome = str(summary.get("outcome", ""))
    level = logger.error if outcome.startswith("aborted") else logger.warning if outcome.startswith("skipped") else logger.info
    level("sweep run", extra=summary)
    return summary


def _sweep(services: Services, summary: dict[str, Any], calls: _Calls, *, now: float, run_id: str, event_id: str | None,
           record: Any, state: State, waiting: Waiting | None, hold: bool) -> None:
    """Read, plan, commit and act; what happened goes into `summary`. `waiting`: what a failed service
    held, now answering (the commit clears it once the plan asks for every event it can)."""
    settings = services.settings
    github = services.github
    releases = _check_releases(services, calls, run_id)
    health = own.Health.from_data(state.health)
    control = alarm.control_alarm(services)
    try:
        shown = entries_now(services, control.ref)
        refusals = services.store.items(REFUSALS_KEY, after=own.refusals_after(health, now))
        job_record = services.store.load(own.JOB_KEY)
        job = own.Job.from_data(job_record.data)
        all_record = services.store.load(presses.ALL_KEY)
        moved = chat.move_of(services.store.load(chat.KEY).data, settings.telegram_chat_id)
        works = _refusers_answer(services, health, refusals, moved, calls, run_id)  # before the plan: its calls count
        job_page = None if hold else _job_page(services, job, run_id)
        fetch = lambda status, url: github.list_deliveries(status=status, per_page=PER_PAGE, url=url)  # noqa: E731
        failures, failure_reading, outcomes, all_reading = read_lists(fetch, state=state, settings=settings, now=now,
                                                                      calls_used=lambda: calls.used)
    except StoreUnavailable as exc:
        summary.update(outcome="aborted: the alarm's entries not read", error=str(exc), calls_used=calls.used)
        _wait_a_little(services, record, waiting, summary, now, run_id)
        return
    except ListNotServed as exc:
        summary.update(outcome=f"aborted: {exc}", error=str(exc.error), calls_used=calls.used)
        if isinstance(exc.error, DeadlineExceeded):  # the run's own deadline says nothing of GitHub
            _wait_a_little(services, record, waiting, summary, now, run_id)
        else:
            later = _later(waiting, summary, now)
            summary.update(health=_not_served(services, record, replace(state, last_event=event_id or state.last_event,
                                                                        waiting=later or state.waiting),
                                              health, exc, control, shown, job, moved, now, run_id))
        return

    gathered = cycle.Gathered(
        state=state, failures=failures, failure_reading=failure_reading, outcomes=outcomes, all_reading=all_reading,
        shown=shown, refusals=tuple((r.item, r.data) for r in refusals), refusers_answer=works, job=job,
        job_page=job_page, again_all=bool(all_record.data.get("asked_at")), moved=moved, waiting=waiting, hold=hold,
        event_id=event_id, calls_used=calls.used)
    planned = cycle.plan_cycle(gathered, settings=settings, now=now, acts_on=acts_on)
    plan, health, picked, job_after = planned.plan, planned.health, list(planned.picked), planned.job
    if planned.recovery:
        summary.update(recovery=planned.recovery)
    _log_reach(plan, calls, settings, run_id)

    # Commit before acting: only the run whose conditional write lands carries out its plan.
    try:
        committed = services.store.save(record, plan.state.to_data())
    except (Conflict, StoreUnavailable) as exc:
        summary.update(_not_committed(services, record, exc), calls_used=calls.used)
        count("ReachGaps", len(plan.gaps))
        return

    asked, refused, unasked = _ask_again(github, [(r.guid, r.delivery_id) for r in plan.redeliver], run_id)
    again, picks_refused, picks_unasked = _ask_again(github, [(a.guid, a.id) for a in picked], run_id, what="refused delivery")
    job_after = _save_job(services, job_record, job, job_after, picks_unasked - picks_refused, run_id)
    all_again = alarm.deliver_again_picked(services, control.ref, planned.again_all)
    _finish_all(services, all_record, planned.again_all_pending or all_again < len(planned.again_all), run_id)
    plan = replace(plan, opened=_name_repositories(services, plan.opened, calls, shown))
    alarm_change, new_state = _change_alarm(services, control, plan, calls, run_id)
    new_state = _put_back(new_state, waiting, (unasked - refused) | (picks_unasked - picks_refused), summary)
    saved, new_state = _save_after(services, committed, new_state, alarm_change, unasked | picks_unasked, run_id)

    applied = alarm_change == "applied"
    summary.update(
        outcome="no room for the every-outcome list" if plan.no_room else "done",
        pages={planner.FAILURES: failures.pages, planner.ALL: 0 if outcomes is None else outcomes.pages},
        deliveries_seen=len({a.id for a in (*failures.items, *(outcomes.items if outcomes else ()))}),
        redeliveries=asked,
        redeliveries_refused=len(refused),
        redeliveries_failed=len(unasked - refused),
        entries_opened=len(plan.opened) if applied else 0,
        entries_closed=len(plan.closed) if applied else 0,
        entries_open=len(shown) + (len(set(plan.opened) - set(shown)) - len(plan.closed) if applied else 0),
        alarm=alarm_change,
        calls_used=calls.used,
        reach_gaps=[gap.to_log() for gap in plan.gaps],
        decisions=dict(plan.counts),
        releases_checked=releases,
        refused_delivered_again=again,
        all_delivered_again=all_again,
        refused_job=_job_line(job_after, health),
        health=_health_line(health),
        state=saved,
        state_bytes=new_state.encoded_size(),
    )
    count("SweepCompleted")
    count("ReachGaps", len(plan.gaps))
    count("AlarmNotChanged", int(alarm_change.startswith("waiting: ") and alarm_change != "waiting: no call left"))


def _put_back(state: State, waiting: Waiting | None, failed: set[str], summary: dict[str, Any]) -> State:
    """What waited, put back when GitHub failed to take a redelivery the plan asked for (a refusal is
    named, not awaited): the check's next run asks for it again."""
    if not failed or waiting is None or state.waiting:
        return state
    summary.update(recovery=f"waiting: {len(failed)} still to come back")
    return replace(state, waiting=waiting.to_data())


def _not_committed(services: Services, record: Any, exc: Exception) -> dict[str, str]:
    """The summary of a run whose commit did not land."""
    if not isinstance(exc, Conflict):
        return {"outcome": "aborted: state not saved", "state": f"not saved: {exc}"}
    if _noted_since(services, record) is not None:
        return {"outcome": "skipped: what waits was noted meanwhile", "state": "not saved: a note of what waits came first"}
    return {"outcome": "skipped: another run committed first", "state": "not saved: another run wrote it first"}


def _noted_since(services: Services, record: Any) -> Any:
    """The state as stored now, when what changed it since `record` was only a note of what waits
    (pager.sweep.recovery: a delivery's 500, a ↻ press); None when another run wrote it (or it cannot be
    read). A commit steps aside all the same (a service failed moments ago, and the recovery check runs
    the sweep once its probe passes); a run's later write keeps the note (`_save_state`)."""
    try:
        now = services.store.load(STATE_KEY)
    except StoreUnavailable:
        return None
    same = {k: v for k, v in now.data.items() if k != "waiting"} == {k: v for k, v in record.data.items() if k != "waiting"}
    return now if same else None


def _save_state(services: Services, record: Any, state: State) -> Any:
    """A run's write of its state after its commit, over a note of what waits made since (kept, merged
    with the state's own); `Conflict` when another run wrote it."""
    try:
        return services.store.save(record, state.to_data())
    except Conflict:
        now = _noted_since(services, record)
        if now is None:
            raise
    waiting = merged(Waiting.from_data(now.data.get("waiting")), Waiting.from_data(state.waiting))
    return services.store.save(now, replace(state, waiting=waiting.to_data() if waiting else {}).to_data())


def _later(waiting: Waiting | None, summary: dict[str, Any], now: float) -> dict[str, Any] | None:
    """What waits after a run that could not complete: the check waits a little before it runs the sweep
    again (None: nothing waited)."""
    if waiting is None:
        return None
    after, summary["recovery"] = recovery.after_plan(waiting, {}, job_pending=False, complete=False, now=now)
    return after.to_data() if after else None


def _wait_a_little(services: Services, record: Any, waiting: Waiting | None, summary: dict[str, Any], now: float,
                   run_id: str) -> None:
    """A run ended before its commit (its deadline, the table): only what waits is written, so the check
    does not start a run each minute while the last one may still be under way."""
    later = _later(waiting, summary, now)
    if later is None:
        return
    try:
        services.store.save(record, {**record.data, "waiting": later})
    except (Conflict, StoreUnavailable) as exc:
        logger.warning("recovery: the retry's time not saved", extra={"run_id": run_id, "error": type(exc).__name__})


def _log_reach(plan: Plan, calls: _Calls, settings: Settings, run_id: str) -> None:
    for gap in plan.gaps:
        logger.warning("reach gap", extra={"run_id": run_id, **gap.to_log()})
    if plan.no_room:
        logger.warning("no room for the every-outcome list",
                       extra={"run_id": run_id, "calls_used": calls.used, "call_budget": settings.sweep_call_budget})


def _save_after(services: Services, committed: Any, state: State, alarm: str, unasked: set[str], run_id: str) -> tuple[str, State]:
    """The run's second write, when needed: the alarm's change made is no longer due, and what GitHub
    did not take is not awaited (the next run asks for it again; the state was committed before the asks)."""
    if alarm != "applied" and not unasked:
        return "saved", state
    state = replace(state, asked=tuple(a for a in state.asked if a[0] not in unasked))
    try:
        _save_state(services, committed, state)
    except (Conflict, StoreUnavailable) as exc:
        # The alarm shows the change, the state does not know it yet: the next run renders the alarm
        # again, which changes nothing (the alarm is safe twice).
        logger.warning("sweep state not updated after the alarm", extra={"run_id": run_id, "error": type(exc).__name__})
        return "saved; the alarm change not recorded, the next run applies it again", state
    return "saved", state


def _job_line(job: own.Job | None, health: own.Health) -> str:
    if job is None or job.finished:
        return "none"
    if cycle.works(job, health):
        return "pending"
    return "waiting for the secret" if job.status == own.SECRET_REFUSED else "waiting for GitHub or Telegram"


def _not_served(services: Services, record: Any, state: State, health: own.Health, exc: ListNotServed,
                control: alarm.Alarm, shown: Mapping[str, Any], job: own.Job | None, moved: Mapping[str, Any] | None,
                now: float, run_id: str) -> str:
    """A run GitHub did not serve a list: count it in the state (a run that finds it saved moments ago
    steps aside, so a duplicate invocation does not count twice), and once it lasts two runs and a
    quarter hour say so in the alarm (Telegram only: GitHub is what fails)."""
    health = own.not_served(health, _cause(exc.error), now)
    mine = {k: v for k, v in shown.items() if k.startswith(OWN_PREFIX)}
    opened, closed = own.change(own.wanted(health, job, now=now, url=services.settings.advanced_page,
                                         zone=services.settings.zone, moved=moved), mine)
    new_state = replace(state, health=health.to_data(), ran_at=now, alarm_due=state.alarm_due or bool(opened or closed))
    try:
        committed = services.store.save(record, new_state.to_data())
    except (Conflict, StoreUnavailable) as failure:
        logger.warning("sweep state not saved", extra={"run_id": run_id, "error": type(failure).__name__})
        return f"not served {health.unserved} runs in a row; state not saved"
    if not (opened or closed or state.alarm_due):
        return f"not served {health.unserved} runs in a row"
    try:
        record_entries(services, control.ref, opened=opened, closed=closed)
        render_now(services, control)
        _save_state(services, committed, replace(new_state, alarm_due=False))
    except (PagerError, Conflict) as failure:
        logger.warning("sweep alarm waits", extra={"run_id": run_id, "error": type(failure).__name__, "reason": str(failure)})
        count("AlarmNotChanged")
        return f"not served {health.unserved} runs in a row; the alarm waits"
    return f"not served {health.unserved} runs in a row; the alarm says so"


def _cause(error: PagerError) -> str:
    """What a list's failure means, as pager's own health keys it."""
    if isinstance(error, ConfigError):
        return "key"
    status = getattr(error, "status", None)
    return str(status) if isinstance(status, int) and 400 <= status < 500 else ""


def _health_line(health: own.Health) -> dict[str, Any]:
    return {"refused_401": health.secret_count, "secret_works": health.secret_works, "refusals": health.refusals_count,
            "refusers_answer": health.refusals_work}


PROBE_CALLS = 3  # whether the refusers answer: getChatMember, and two installations read


def _refusers_answer(services: Services, health: own.Health, refusals: list[Any], moved: Mapping[str, Any] | None,
                     calls: _Calls, run_id: str) -> bool:
    """Whether the services that refused signals would take such calls now (pager's own health offers ↻
    then): Telegram, whether the bot may post in the chat pager writes to (the one Telegram moved it to,
    if it did); GitHub, whether the app's installations on the control repository (dispatches) and on
    the repository of the last refusal hold every permission pager needs and are not suspended. A few
    calls, only while refused signals wait and only when the run's budget leaves them beside a page of
    each list, the redeliveries and the alarm's change; a failure of either is a no."""
    if health.refusals_work and not refusals:
        return True
    if not (health.refusals_count or refusals):
        return False
    settings = services.settings
    room = settings.sweep_call_budget - calls.used - (settings.sweep_failure_pages + 1 + settings.sweep_max_redeliveries
                                                       + planner.ALARM_CALLS)
    if room < PROBE_CALLS:
        logger.info("refusers not asked: no room in the budget", extra={"run_id": run_id})
        return False
    refusing = set(health.refusals_services) | {s for r in refusals for s in str(r.data.get("service") or "").split()}
    repository = next((str(r.data.get("repository")) for r in reversed(refusals)
                       if "github" in str(r.data.get("service")) and r.data.get("repository")), health.refusals_repository)
    try:
        chat_to = str(moved["to"]) if moved else services.chat.send_to
        if "telegram" in refusing and not services.telegram.may_post(chat_to):
            return False
        if "github" in refusing:
            for name in dict.fromkeys(r for r in (settings.control_repository, repository) if r):
                installation = services.github.installation(name)
                granted = installation.get("permissions")
                held = granted if isinstance(granted, dict) else {}
                if installation.get("suspended_at") or missing_permissions(held, needed_permissions()):
                    return False
    except PagerError as exc:
        logger.info("refusers not answering yet", extra={"run_id": run_id, "error": type(exc).__name__})
        return False
    return True


def _job_page(services: Services, job: own.Job | None, run_id: str) -> cycle.JobPage | None:
    """The page of the failure list the ↻ job of refused deliveries reads next (one call, only while a
    job is under way; None when none is, or GitHub did not serve it: the next run reads it again)."""
    if job is None or job.finished:
        return None
    try:
        page = services.github.list_deliveries(status="failure", per_page=PER_PAGE, url=job.url)
    except PagerError as exc:
        logger.warning("refused deliveries not read", extra={"run_id": run_id, "error": type(exc).__name__, "reason": str(exc)})
        return None
    return cycle.JobPage(tuple(a for a in (planner.Attempt.from_github(item) for item in page.items) if a is not None),
                         page.next_url)


def _finish_all(services: Services, record: Any, pending: bool, run_id: str) -> None:
    """↻ all is done once a run asked for the last of its entries (a failure leaves it to the next run)."""
    if pending or not record.data.get("asked_at"):
        return
    try:
        services.store.save(record, {}, expires_at=int(services.now()) + 3600)
    except (Conflict, StoreUnavailable) as exc:
        logger.warning("↻ all: its end not saved", extra={"run_id": run_id, "error": type(exc).__name__})


def _save_job(services: Services, record: Any, job: own.Job | None, job_after: own.Job | None, failed: set[str],
              run_id: str) -> own.Job | None:
    """Save where the ↻ job stopped: back where this run began when GitHub failed to take one of its
    picks (the next run picks it again; those it took it skips, as recent), else past them. The job saved."""
    if job_after is None or job_after == job:
        return job_after
    if failed and job is not None:
        job_after = replace(job_after, url=job.url, below=job.below, finished=False,
                            recent=tuple(g for g in job_after.recent if g not in failed))
    try:
        services.store.save(record, job_after.to_data(), expires_at=int(services.now()) + planner.GITHUB_RETENTION)
    except (Conflict, StoreUnavailable) as exc:
        logger.warning("refused deliveries: progress not saved", extra={"run_id": run_id, "error": type(exc).__name__})
    return job_after


RELEASE_CALLS = 3  # a release read again: an installation token, the pull request, once more if GitHub computes it


def _check_releases(services: Services, calls: _Calls, run_id: str) -> list[str]:
    """The run's first step: read again the release pull requests waiting for Merge that no event may
    make ready (opened with GITHUB_TOKEN, or without CI: no check suite comes), within what the budget
    leaves the lists (a page of each), the redeliveries and the alarm."""
    settings = services.settings
    room = settings.sweep_call_budget - (settings.sweep_failure_pages + 1 + settings.sweep_max_redeliveries + planner.ALARM_CALLS)
    limit = min(release.RELEASES_CHECKED, max(0, room) // RELEASE_CALLS)
    if not limit:
        return []
    try:
        return release.check_waiting(services, limit=limit)
    except PagerError as exc:
        logger.warning("releases not checked", extra={"run_id": run_id, "error": type(exc).__name__, "reason": str(exc)})
        return [f"not checked: {type(exc).__name__}"]


NAMED_REPOSITORIES = 5  # entries a run names the thing of (one call each)


def _name_repositories(services: Services, opened: Mapping[str, dict[str, Any]], calls: _Calls,
                       shown: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The entries to open, each with the thing its event was about, named and linked as GitHub's pages do
    (the list gives only the kind of event and the repository's id): an entry the alarm shows already keeps
    the name it has; another is read from the delivery's own payload, one call each, for at most
    NAMED_REPOSITORIES entries and as many as the budget leaves beside the alarm's change; the others keep
    the kind and the id."""
    named: dict[str, dict[str, Any]] = {}
    asked = 0
    for key, entry in opened.items():
        entry = dict(entry)
        known = shown.get(key) or {}
        if known.get("thing"):
            entry.update({k: known[k] for k in ("thing", "short", "url", "repository") if known.get(k)})
            entry["title"] = planner.delivery_title(entry)
            named[key] = entry
            continue
        delivery_id = entry.get("delivery_id")
        room = services.settings.sweep_call_budget - calls.used - planner.ALARM_CALLS
        if delivery_id and entry.get("repository_id") is not None and room > 0 and asked < NAMED_REPOSITORIES:
            asked += 1
            try:
                payload = field(services.github.get_delivery(int(delivery_id)), "request", "payload")
            except PagerError:
                payload = None
            name = text(field(payload, "repository", "full_name"))
            if name:
                thing = words.thing_of(str(entry.get("event") or ""), payload, name)
                entry.update(repository=name, thing=thing.label, short=thing.short)
                if thing.url:
                    entry["url"] = thing.url
                entry["title"] = planner.delivery_title(entry)
        named[key] = entry
    return named


def _ask_again(github: Any, items: list[tuple[str, int]], run_id: str, what: str = "redelivery") -> tuple[int, set[str], set[str]]:
    """Ask GitHub to deliver each (guid, delivery id) again; a refusal (a 4xx other than a rate limit)
    or a failure is logged and the run goes on. How many it took, the guids it refused, and those it
    did not take (refused or failed)."""
    asked, refused, unasked = 0, set(), set()
    for guid, delivery_id in items:
        try:
            github.redeliver(delivery_id)
        except PagerError as exc:
            unasked.add(guid)
            if isinstance(exc, Permanent):
                refused.add(guid)
            logger.warning(f"{what} not accepted", extra={"run_id": run_id, "guid": guid, "delivery_id": delivery_id,
                                                          "error": type(exc).__name__, "reason": str(exc)})
            continue
        asked += 1
        logger.info(f"{what} asked", extra={"run_id": run_id, "guid": guid, "delivery_id": delivery_id})
    return asked, refused, unasked


def _change_alarm(services: Services, control: alarm.Alarm, plan: Plan, calls: _Calls,
                  run_id: str) -> tuple[str, State]:
    """Apply the change of delivery entries last: its records always (the table: no call), its message
    if one call fits; what fails waits for the next run (`alarm_due`)."""
    if plan.no_room:
        return "left as it is", plan.state
    if not plan.alarm_change:
        return "unchanged", plan.applied()
    try:
        record_entries(services, control.ref, opened=plan.opened, closed=plan.closed)
        if not planner.alarm_fits(services.settings, calls.used):
            return "waiting: no call left", plan.state
        render_now(services, control)
    except PagerError as exc:
        logger.warning("sweep alarm waits", extra={"run_id": run_id, "error": type(exc).__name__, "reason": str(exc)})
        return f"waiting: {type(exc).__name__}", plan.state
    return "applied", plan.applied()
