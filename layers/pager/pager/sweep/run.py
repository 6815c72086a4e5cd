"""The sweep's shell: one loop over its units (pager.sweep.units), a commit before anything acts, the
effects carried out, what happened folded.

A run (`run_sweep`, every 15 minutes, and at once when the check finds a held service answering again):

    take the sweep's lease (pager.sweep.lease)              nothing asks GitHub for anything meanwhile
    load the sweep's items (one query), the state's chunks  a duplicate of the scheduled event steps aside
    for each unit: gather, then plan                        reads only; plans pure (pager.sweep.units)
    commit the state (its new chunks, then the head)        conditionally on the version read
    carry out the effects                                   this minute's asks, then the alarm's change
    for each unit: fold                                     each item saved on its own
    log one summary line and the metrics; give the lease back

Nothing outside (a redelivery, a release's message, the alarm's change) happens before the commit, so a
run that dies before it did nothing, and one after it is what the next run reads.

The every-minute check (`check`) attends to what came due (pager.signals.due), then: with something held,
probes the failed services and runs the sweep as soon as all answer; else asks GitHub for the redeliveries
the last run queued for this minute, under the lease's claim of that minute, writing nothing else.

The run keeps a deadline (`RUN_SECONDS`, inside the function's 180 s timeout): past it the clients start no
new call, so a slow GitHub ends the run early, with what it read kept for the next run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import deadline
from ..engine.effects import Redeliver
from ..engine.perform import FAILED, LIMITED, TOOK, Done
from ..errors import Conflict, PagerError, StoreUnavailable
from ..observe import count, logger
from ..services import Services
from ..signals import due
from ..store import Record
from ..waiting import OWN, REDELIVERY, Waiting, note
from . import deliveries, followed, lease, recovery
from .acts import Act, ChangeAlarm, RedeliverEntry, act
from .health import SECRET_REFUSED
from .lists import Read
from .units import Calls, Context, Folded, Gathered, Items, Planned, fold, gather_and_plan

RUN_SECONDS = 150.0
ATTEND_SECONDS = 20.0  # what comes due in one minute: renders and a summary, well inside the check's minute


# -- the run ------------------------------------------------------------------------------------------


def run_sweep(services: Services, *, now: float, run_id: str, seconds: float = RUN_SECONDS, event_id: str | None = None,
              released: bool = False, probes: tuple[Done, ...] = ()) -> dict[str, Any]:
    """One run of the sweep; returns its summary (also logged as the "sweep run" line). `event_id` is the
    scheduled event's id (a duplicate invocation steps aside); `released` and `probes`: the check found every
    held service answering, and the followed events its probe asked for. The run holds the sweep's lease
    (pager.sweep.lease) from its start to its end: nothing it does outside (a ping, a probe, an ask, an edit)
    happens while another invocation asks GitHub for anything."""
    with deadline.within(seconds):
        taken = _lease(services, run_id, now)
        if taken is None:
            summary = {"run_id": run_id, "outcome": "skipped: another invocation holds the sweep's lease", "calls_used": 0}
        else:
            try:  # (from when it took the lease: after a check's asks, perhaps in the next minute, which is then its)
                summary = _run(services, now=taken[2], run_id=run_id, event_id=event_id, released=released,
                               probes=probes, minute=taken[1])
            finally:
                lease.give_back(services, taken[0], services.now())
    outcome = str(summary.get("outcome", ""))
    level = logger.error if outcome.startswith("aborted") else logger.warning if outcome.startswith("skipped") else logger.info
    level("sweep run", extra=summary)
    return summary


def _lease(services: Services, run_id: str, now: float) -> tuple[Record, bool, float] | None:
    """The sweep's lease for this run, whether the asks of its minute are the run's, and when it took it; a check's
    asks hold it a few seconds: waited for, once, and the run then begins when it took the lease."""
    try:
        taken = lease.take_for_run(services, run_id, now, lease.RUN_SECONDS, now // 60 * 60)
        if taken is None and lease.holding(services, now) == lease.CHECK:
            services.sleep(lease.CHECK_SECONDS)
            now = max(now, services.now())
            taken = lease.take_for_run(services, run_id, now, lease.RUN_SECONDS, now // 60 * 60)
    except StoreUnavailable:
        return None
    return (*taken, now) if taken else None


def _run(services: Services, *, now: float, run_id: str, event_id: str | None, released: bool,
         probes: tuple[Done, ...], minute: bool) -> dict[str, Any]:
    calls = Calls(services)
    summary: dict[str, Any] = {"run_id": run_id, "call_budget": services.settings.sweep_call_budget}
    try:
        items = Items.load(services)
        if event_id is not None and event_id == items[deliveries.ITEM].data.get("last_event"):
            return {**summary, "outcome": "skipped: a duplicate invocation of the run that saved the state", "calls_used": 0}
        state, loaded = items.state(services, run_id)
        ctx = Context(services, items, calls, now, run_id, event_id, released, probes, minute, state, loaded)
        g, p = gather_and_plan(ctx)
        head = p.deliveries.state
        committed = followed.commit(services, items[deliveries.ITEM], head.to_data(), head.followed, loaded, run_id)
    except Conflict:
        return {**summary, "outcome": "skipped: another run committed first", "calls_used": calls.used}
    except StoreUnavailable as exc:
        return {**summary, "outcome": "aborted: the table did not answer", "error": str(exc), "calls_used": calls.used}
    for gap in p.deliveries.gaps:
        logger.warning("reach gap", extra={"run_id": run_id, **gap.to_log()})
    done = carry_out(services, p.effects, calls, run_id)
    folded = fold(ctx, g, p, done, committed)
    summary.update(_summary(g, p, done, calls, folded))
    if g.every is not None and g.not_served is None:
        count("SweepCompleted")  # the dead man's switch: a run that read the list (SweepSilentAlarm)
    count("ReachGaps", len(p.deliveries.gaps))
    count("AlarmNotChanged", int(summary["alarm"].startswith("waiting: ")))
    return summary


def carry_out(services: Services, effects: list[Act], calls: Calls, run_id: str) -> list[Done]:
    """Perform the effects in order: after GitHub's rate limit, no more asks (the check waits as GitHub said);
    the alarm's change only when a call is left for it (else it waits for the next run, `alarm_due`)."""
    done: list[Done] = []
    for effect in effects:
        alarm = isinstance(effect, ChangeAlarm)
        if calls.left(0 if alarm else 1) < 1:  # an ask leaves the alarm's call
            done.append(Done(effect, FAILED, "no call left"))
        elif not alarm and any(d.fate == LIMITED for d in done):
            done.append(Done(effect, FAILED, "GitHub's rate limit"))
        else:
            done.append(act(services, effect, run_id))
    return done


# -- the summary ----------------------------------------------------------------------------------------


def _summary(g: Gathered, p: Planned, done: list[Done], calls: Calls, folded: Folded) -> dict[str, Any]:
    state = p.deliveries.state
    return {
        "outcome": _outcome(g),
        **_reading(g, state),
        **_fates(done),
        "queued": sum(1 for r in state.followed if r.due > (state.ran_at or 0)),
        **_entries(g, p, done),
        "calls_used": calls.used,
        "reach_gaps": [gap.to_log() for gap in p.deliveries.gaps],
        "decisions": dict(p.deliveries.counts),
        "releases_checked": [],
        "refused_job": _job_line(p),
        **folded.summary,
        "state": "; ".join(folded.not_saved) or "saved",
        "state_bytes": state.encoded_size(),
    }


def _reading(g: Gathered, state: deliveries.State) -> dict[str, Any]:
    every, failures = g.every or Read(), g.failures or Read()
    return {"pages": {"all": every.pages, "failures": failures.pages}, "pass": "under way" if state.every.under_way else "read",
            "deliveries_seen": len(every.attempts) + len(failures.attempts)}


def _fates(done: list[Done]) -> dict[str, int]:
    """What became of the run's asks: the decision's redeliveries, the ↻ job's picks, ↻ all's."""
    asks = [d.fate for d in done if isinstance(d.effect, Redeliver) and d.effect.why == "redelivery"]
    picks = [d.fate for d in done if isinstance(d.effect, Redeliver) and d.effect.why == "refused"]
    return {"redeliveries": asks.count(TOOK), "redeliveries_refused": asks.count("refused"),
            "redeliveries_failed": len(asks) - asks.count(TOOK) - asks.count("refused"),
            "refused_delivered_again": picks.count(TOOK),
            "all_delivered_again": sum(1 for d in done if isinstance(d.effect, RedeliverEntry) and d.fate == TOOK)}


def _entries(g: Gathered, p: Planned, done: list[Done]) -> dict[str, Any]:
    change = next((d for d in done if isinstance(d.effect, ChangeAlarm)), None)
    if change is None:
        return {"entries_opened": 0, "entries_closed": 0, "entries_open": len(g.shown), "alarm": "unchanged"}
    if change.fate != TOOK:
        return {"entries_opened": 0, "entries_closed": 0, "entries_open": len(g.shown), "alarm": f"waiting: {change.reason}"}
    return {"entries_opened": len(set(p.opened) - set(g.shown)), "entries_closed": len(p.closed),
            "entries_open": len(g.shown) + len(set(p.opened) - set(g.shown)) - len(p.closed), "alarm": "applied"}


def _job_line(p: Planned) -> str:
    job = p.health.job
    if job is None or not job.under_way:
        return "none"
    if p.health.job_pending:
        return "pending"
    return "waiting for the secret" if job.status == SECRET_REFUSED else "waiting for GitHub or Telegram"


def _outcome(g: Gathered) -> str:
    if g.not_served == "key":
        return "aborted: the app's private key cannot sign a token (GITHUB_PRIVATE_KEY)"
    answer = {"link": "its links to the next pages refused"}.get(g.not_served or "", g.not_served) or "5xx or no answer"
    if g.not_served is not None and g.every is not None:
        return f"read in part: GitHub stopped serving the deliveries list ({answer}); the next run reads on"
    if g.not_served is not None:
        return f"aborted: GitHub did not serve the deliveries list ({answer})"
    return "done" if g.every is not None else "aborted: no call left for the deliveries list, or the run's deadline passed"


# -- the every-minute check ----------------------------------------------------------------------------


def check(services: Services, *, now: float, run_id: str, seconds: float) -> dict[str, Any]:
    """The every-minute check: what came due without an event (pager.signals.due); then, unless something is
    held, the redeliveries the last run queued for this minute; then, with something waiting, a probe of each
    failed service and a run of the sweep as soon as all answer (and each minute while a ↻ job or a pass of
    the list goes on). The minutes are the clock's (`now` to the whole minute): one check a minute asks for
    what is due in it, whatever second the schedule fires at."""
    attended = _attend(services, now, run_id)
    items = Items.load(services)
    waiting, queue = items.waiting, items.queue
    asked = {} if recovery.held_since(waiting) is not None else _this_minute(services, queue, now, seconds, run_id)
    if asked.get("held"):
        summary = {"run_id": run_id, "outcome": "waiting: pager's endpoint failed the check's ping", **attended}
        logger.info("recovery check", extra=summary)
        return summary
    if waiting is not None:
        summary = _held(services, items, waiting, now, run_id, seconds, attended)
        return {**summary, "redeliveries": summary.get("redeliveries", 0) + asked.get("redeliveries", 0)} if asked else summary
    if not asked:
        later = any(r.due > now // 60 * 60 for r in queue)
        return {"run_id": run_id, "outcome": "nothing due this minute" if later else "nothing waits", **attended}
    summary = {"run_id": run_id, "outcome": "redeliveries asked", **asked, **attended}
    logger.info("sweep check", extra=summary)
    return summary


def _this_minute(services: Services, queue: tuple[deliveries.Followed, ...], now: float, seconds: float,
                 run_id: str) -> dict[str, int]:
    """The redeliveries due in this minute, asked for under the sweep's lease (taken for this minute: another
    check of the same minute, or a run, asks for none of them again): how many GitHub took, how many not ({}:
    none due, or the minute is another's)."""
    minute = now // 60 * 60
    asks = deliveries.due_now(queue, minute - 60, minute)
    if not asks:
        return {}
    if lease.take(services, run_id, now, lease.CHECK_SECONDS, minute=minute) is None:
        return {"redeliveries": 0, "minute_taken": 1}
    with deadline.within(min(seconds, lease.CHECK_SECONDS)):
        if recovery.own_endpoint(services, f"ping-{run_id}") is False:  # seen before an attempt is spent into it
            note(services, OWN, since=minute - 1)  # (from before the minute: its asks are not made, as below)
            return {"redeliveries": 0, "held": 1}
        done = _ask_paced(services, asks, minute, run_id)
    return {"redeliveries": sum(d.fate == TOOK for d in done), "redeliveries_failed": sum(d.fate != TOOK for d in done)}


def _held(services: Services, items: Items, waiting: Waiting, now: float, run_id: str, seconds: float,
          attended: Mapping[str, Any]) -> dict[str, Any]:
    if now < waiting.not_before:
        return {"run_id": run_id, "outcome": "waiting: retry later", **attended}
    # a probe of GitHub's redeliveries may take a held event in turn: only it reads the followed rows
    state = items.state(services, run_id)[0] if REDELIVERY in waiting.services else deliveries.State.from_data(items[deliveries.ITEM].data)
    asked: list[Done] = []
    asks = REDELIVERY in waiting.services and recovery.probe_minute(now - waiting.since)  # a probe asks GitHub
    if asks and lease.take(services, run_id, now, lease.CHECK_SECONDS) is None:
        return {"run_id": run_id, "outcome": "waiting: another invocation holds the sweep's lease", **attended}
    failing = recovery.probe(services, waiting, state, run_id, asked=asked)
    if failing is not None:
        summary = {"run_id": run_id, "outcome": f"waiting: {failing} still failing", "since": waiting.since, **attended}
        logger.info("recovery check", extra=summary)
        return summary
    # the run begins now, with what is left of the check's deadline: its lease then outlasts its deadline, and
    # its deadline ends inside the function's timeout, however long what came due and the probes took
    started = services.now()
    ran = run_sweep(services, now=started, run_id=run_id, seconds=max(1.0, seconds - (started - now)), released=True,
                    probes=tuple(asked))
    return {**ran, **attended}  # what came due this minute, said with the run it released


def _ask_paced(services: Services, asks: tuple[Redeliver, ...], minute: float, run_id: str) -> list[Done]:
    """This minute's redeliveries. GitHub failing one stops them and is noted as what waits, from this minute
    on (the sweep's runs then see the minute's asks as not made): the check probes GitHub's redeliveries, and
    runs the sweep once GitHub takes one (after a rate limit, no sooner than GitHub said)."""
    done: list[Done] = []
    for ask in asks:
        result = act(services, ask, run_id)
        done.append(result)
        if result.fate in (FAILED, LIMITED):  # the rest wait for the next minute
            if result.github:  # (out of time, or the app's key: nothing GitHub should be probed for)
                note(services, REDELIVERY, result.retry_after if result.fate == LIMITED else None, since=minute - 1)
            break
    return done


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
