"""Recovery that follows the outage, not the clock.

When a handler answers 500 because Telegram or GitHub failed, the webhook notes that something is
waiting (`note_failure`: `waiting` in the sweep's state item, written once per outage, then only read).
A check runs every minute (`check`, on its own schedule): with nothing waiting it is one read of that
item (a few kB; docs/benchmarks.md); with something waiting it probes each service that failed (Telegram's getMe; for GitHub the
app's installation on the control repository, a read on the same API as the handlers' calls) and, as
soon as every probe passes, runs the sweep at once: the same run as the scheduled one, with its budget,
its conditional commit and its rules. The run clears `waiting` in the very write that commits its plan
(`after_plan`), when that plan asks for every event it can (none deferred, resting or awaiting its
attempt); until then the check runs the sweep again each minute. So an outage costs two writes besides
the scheduled runs' own: the note, and the commit of the run the check starts. A redelivery GitHub then
fails to take puts `waiting` back in the run's second write, which it makes anyway.

While a probe fails, a sweep run (the scheduled one too) asks GitHub for nothing: an attempt spent
while the service is still down would fail again, and three of them inside one long outage would put
the event in the alarm although a single attempt after it would have passed. The events stay followed.

Everything the decision promises still holds: at most `sweep_max_attempts` attempts and
`sweep_max_redeliveries` a run, the budget, stale redeliveries changing nothing, and two runs never
asking twice for the same attempt (a run remembers the redeliveries GitHub took, until GitHub lists
their attempts, an hour at most; a duplicate invocation of a scheduled event steps aside by its id);
a redelivery that failed is asked for again no sooner than a schedule's interval later.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from ..errors import (Conflict, DeadlineExceeded, GitHubUnavailable, PagerError, StoreUnavailable, TelegramUnavailable,
                      Transient, Uncertain)
from ..observe import logger
from ..services import Services
from ..store import Record
from .plan import STATE_KEY

RETRY_SECONDS = 300  # after a run that could not complete, the check waits this long before the next
CHECK_EVENT = {"pager": "recovery-check"}  # the input of the every-minute schedule (template.yaml)
OWN = "pager"  # pager's own endpoint, back after an outage: nothing to probe, the check sweeps until caught up



def service_of(exc: Transient) -> str:
    """Which service a transient failure was about ("any" when the handler cannot tell)."""
    if isinstance(exc, TelegramUnavailable):
        return "telegram"
    if isinstance(exc, GitHubUnavailable):
        return "github"
    if isinstance(exc, StoreUnavailable):
        return "store"
    assert isinstance(exc, (DeadlineExceeded, Uncertain, Transient))
    return "any"


@dataclass(frozen=True)
class Waiting:
    """Something failed and waits for its service: since when, which services, and not before when
    the check may run the sweep (after a run that could not complete)."""

    services: tuple[str, ...]
    since: float
    not_before: float = 0.0

    def to_data(self) -> dict[str, Any]:
        return {"services": list(self.services), "since": self.since, "not_before": self.not_before}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> "Waiting | None":
        services = tuple(s for s in (data or {}).get("services", ()) if isinstance(s, str))
        if not services:
            return None
        return cls(services, float(data.get("since", 0)), float(data.get("not_before", 0)))


def noted(waiting: Waiting | None, service: str, now: float, retry_after: float | None = None) -> Waiting | None:
    """What waits after a failure of `service` (which asked to wait `retry_after` seconds, a rate
    limit); None when the note already says so (no write)."""
    not_before = now + retry_after if retry_after else 0.0
    if waiting is None:
        return Waiting((service,), now, not_before)
    later = not_before > waiting.not_before + 60  # a write only for a wait that changes the check's minute
    if service in waiting.services and not later:
        return None
    since = waiting.since if service in waiting.services else now  # a new outage: its hold counts from now
    return replace(waiting, services=tuple(sorted({*waiting.services, service})), since=since,
                   not_before=max(waiting.not_before, not_before))


def merged(a: Waiting | None, b: Waiting | None) -> Waiting | None:
    """Two notes of what waits as one: every service of both, held from the later start."""
    if a is None or b is None:
        return a or b
    return Waiting(tuple(sorted({*a.services, *b.services})), max(a.since, b.since), max(a.not_before, b.not_before))


def note_failure(services: Services, exc: Transient) -> None:
    """The webhook's 500: note what is waiting, once per outage (a read, and a write only the first time)."""
    service = service_of(exc)
    if service == "store":
        return  # the table is what failed: writing to it would only wait out boto's retries past GitHub's 10 s
    retry_after = getattr(exc, "retry_after", None)
    note(services, service, retry_after if isinstance(retry_after, (int, float)) else None)


NOTE_TRIES = 3  # a run's commit or another delivery's note may land between the read and the write


def note(services: Services, service: str, retry_after: float | None = None) -> None:
    """Note that something waits for `service` ("any": nothing to probe, such as the ↻ of deliveries
    refused with 401, which the check's runs then carry out a page a minute)."""
    for _ in range(NOTE_TRIES):
        try:
            record, waiting = load(services)
            new = noted(waiting, service, services.now(), retry_after)
            if new is not None:
                services.store.save(record, {**record.data, "waiting": new.to_data()})
            return
        except Conflict:  # a run committed, or another delivery noted it: read again
            continue
        except StoreUnavailable:  # the table is the outage
            break
    logger.info("recovery not noted", extra={"service": service})


def probe(services: Services, waiting: Waiting) -> str | None:
    """The first service still failing (one call each), None when all answer. A refusal is no outage:
    it is left to the alarm (pager's own health), and holds nothing. An outage holds the events for as
    long as it lasts: each one only until GitHub is about to forget it, when the plan names it in the
    alarm (`Reason.FORGOTTEN`), and what GitHub forgets is counted there (pager.sweep.health); so even a
    probe that kept failing where the handlers no longer do loses nothing silently."""
    for service in waiting.services:
        try:
            if service == "telegram":
                services.telegram.get_me()
            elif service == "github":
                services.github.probe(services.settings.control_repository)
        except Transient:
            return service
        except PagerError:
            continue
    return None


def load(services: Services) -> tuple[Record, Waiting | None]:
    """The sweep's state item and what waits, as noted in it."""
    record = services.store.load(STATE_KEY)
    data = record.data.get("waiting")
    return record, Waiting.from_data(data) if isinstance(data, Mapping) else None


STILL_TO_COME = ("deferred", "resting", "awaiting")  # a plan's reasons for an event the run does not ask for yet


def after_plan(waiting: Waiting, counts: Mapping[str, int], *, job_pending: bool, complete: bool,
               now: float) -> tuple[Waiting | None, str]:
    """What waits once the run's plan is committed (None: nothing, cleared in that same write), and the
    outcome for the summary. `complete`: the run read what it must (not cut short by
    the budget), else the check waits a little before it runs the sweep again."""
    if not complete:
        return replace(waiting, not_before=now + RETRY_SECONDS), "waiting: the run did not complete"
    still = sum(int(counts.get(reason, 0)) for reason in STILL_TO_COME) + int(job_pending)  # the ↻ job: a page a run
    if still:
        return waiting, f"waiting: {still} still to come back"
    return None, f"recovered: waited {int(now - waiting.since)} s"


def check(services: Services, *, now: float, run_id: str, seconds: float) -> dict[str, Any]:
    """The every-minute check: one read when nothing waits; else probe, and sweep as soon as all answer."""
    from .run import run_sweep

    record, waiting = load(services)
    if waiting is None:
        return {"run_id": run_id, "outcome": "nothing waits"}
    if now < waiting.not_before:
        return {"run_id": run_id, "outcome": "waiting: retry later"}
    failing = probe(services, waiting)
    if failing is not None:
        summary = {"run_id": run_id, "outcome": f"waiting: {failing} still failing", "since": waiting.since}
        logger.info("recovery check", extra=summary)
        return summary
    return run_sweep(services, now=now, run_id=run_id, seconds=seconds, probed=(record, waiting))
