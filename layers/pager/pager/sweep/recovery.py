"""Recovery that follows the outage, not the clock.

When a handler answers 500 because Telegram or GitHub failed, the webhook notes that something is
waiting (`note_failure`: the record `recovery`, written once per outage, then only read).
A check runs every minute (`check`, on its own schedule): with nothing waiting it is one small read;
with something waiting it probes each service that failed (Telegram's getMe; for GitHub the app's
installation on the control repository, a read on the same API as the handlers' calls) and, as soon as
every probe passes, runs the sweep at once: the same run as the scheduled one, with its budget, its
conditional commit and its rules. The record is cleared once a run after the outage has every event
back or asked for (none deferred, resting or awaiting its attempt); until then the check runs the sweep
again each minute.

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

WAITING_KEY = "recovery"
RETRY_SECONDS = 300  # after a run that could not complete, the check waits this long before the next
HOLD_LIMIT_SECONDS = 6 * 3600  # past this, a probe that still fails holds nothing: the runs ask as before
CHECK_EVENT = {"pager": "recovery-check"}  # the input of the every-minute schedule (template.yaml)

SERVICES = ("telegram", "github", "store")


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
        return {"waiting": True, "services": list(self.services), "since": self.since, "not_before": self.not_before}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> "Waiting | None":
        if not data.get("waiting"):
            return None
        services = tuple(str(s) for s in data.get("services", ()) if isinstance(s, str))
        return cls(services, float(data.get("since", 0)), float(data.get("not_before", 0)))


def noted(waiting: Waiting | None, service: str, now: float, retry_after: float | None = None) -> Waiting | None:
    """The record after a failure of `service` (which asked to wait `retry_after` seconds, a rate
    limit); None when it already says so (no write)."""
    not_before = now + retry_after if retry_after else 0.0
    if waiting is None:
        return Waiting((service,), now, not_before)
    later = not_before > waiting.not_before + 60  # a write only for a wait that changes the check's minute
    if service in waiting.services and not later:
        return None
    since = waiting.since if service in waiting.services else now  # a new outage: its hold counts from now
    return replace(waiting, services=tuple(sorted({*waiting.services, service})), since=since,
                   not_before=max(waiting.not_before, not_before))


def note_failure(services: Services, exc: Transient) -> None:
    """The webhook's 500: note what is waiting, once per outage (a read, and a write only the first time)."""
    service = service_of(exc)
    if service == "store":
        return  # the table is what failed: writing to it would only wait out boto's retries past GitHub's 10 s
    retry_after = getattr(exc, "retry_after", None)
    note(services, service, retry_after if isinstance(retry_after, (int, float)) else None)


def note(services: Services, service: str, retry_after: float | None = None) -> None:
    """Note that something waits for `service` ("any": nothing to probe, such as the ↻ of deliveries
    refused with 401, which the check's runs then carry out a page a minute)."""
    try:
        record = services.store.load(WAITING_KEY)
        new = noted(Waiting.from_data(record.data), service, services.now(), retry_after)
        if new is not None:
            services.store.save(record, new.to_data())
    except (Conflict, StoreUnavailable) as failure:  # another delivery noted it, or the table is the outage
        logger.info("recovery not noted", extra={"service": service, "error": type(failure).__name__})


def probe(services: Services, waiting: Waiting) -> str | None:
    """The first service still failing (one call each), None when all answer. A refusal is no outage:
    it is left to the alarm (pager's own health), and holds nothing; nor does a probe six hours after
    the outage began (should the probe's own call fail where the handlers' no longer do, the events
    still come back, spending their attempts as they did before)."""
    if services.now() - waiting.since > HOLD_LIMIT_SECONDS:
        return None
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
    record = services.store.load(WAITING_KEY)
    return record, Waiting.from_data(record.data)


def settle_after_run(services: Services, record: Record, waiting: Waiting, summary: Mapping[str, Any], now: float) -> str:
    """After a run with nothing held: clear the record when the run asked for every event it could, or
    have the check wait a little when the run could not complete. The outcome for the summary."""
    decisions = summary.get("decisions") or {}
    deferred = sum(int(decisions.get(reason, 0)) for reason in ("deferred", "resting", "awaiting"))  # still to come back
    deferred += int(summary.get("refused_job") == "pending")  # the ↻ of deliveries refused with 401, a page a run
    deferred += int(summary.get("redeliveries_failed", 0))  # GitHub did not take them: asked for again
    done = summary.get("outcome") == "done"
    try:
        if done and deferred == 0:
            services.store.save(record, {"waiting": False, "since": waiting.since, "cleared": now})
            return f"recovered: waited {int(now - waiting.since)} s"
        if not done:
            services.store.save(record, replace(waiting, not_before=now + RETRY_SECONDS).to_data())
            return "waiting: the run did not complete"
    except (Conflict, StoreUnavailable):
        return "waiting: a failure noted meanwhile"
    return f"waiting: {deferred} still to come back"


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
