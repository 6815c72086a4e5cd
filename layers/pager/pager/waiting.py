"""What waits for a failed service: the note a delivery's 500 leaves for the sweep (the intake's side).

When a handler answers 500 because Telegram or GitHub failed, the webhook notes that something waits
(`note_failure`: the `waiting` item of the sweep's key, written once per outage, then only read); a ↻
press notes "any" so that the every-minute check runs the sweep each minute until its job is done. The
check (pager.sweep.run.check) reads it, probes the services (pager.sweep.recovery) and runs the sweep,
whose run clears it. The sweep itself notes "pager" when pager's own endpoint fails every delivery.
It also holds the every-minute schedule's input (`CHECK_EVENT`), by which the sweep function tells a check
from a run (pager.bootstrap). Light on purpose: the webhook and the composition root import it at the top.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .errors import Conflict, DeadlineExceeded, GitHubUnavailable, StoreUnavailable, TelegramUnavailable, Transient, Uncertain
from .observe import logger
from .services import Services
from .store import Record

SWEEP_KEY = "sweep"  # the sweep's items: `deliveries`, `health`, `waiting`, `refused-again`, `again-all`
ITEM = "waiting"
OWN = "pager"  # pager's own endpoint fails every delivery: the check probes with a passed delivery
REDELIVERY = "redelivery"  # GitHub fails to take the sweep's redeliveries: the check probes by asking for one
ANY = "any"  # nothing to probe (a ↻ job): the check sweeps each minute until it is done
CHECK_EVENT = {"pager": "recovery-check"}  # the input of the every-minute schedule (template.yaml): a check
LONGEST_WAIT_SECONDS = 3600  # a rate limit's wait taken at most this long (GitHub's limits reset within the
# hour): a wait a service names beyond it, or a header gone wrong, never holds events until GitHub forgets them


def service_of(exc: Transient) -> str:
    """Which service a transient failure was about ("any" when the handler cannot tell)."""
    if isinstance(exc, TelegramUnavailable):
        return "telegram"
    if isinstance(exc, GitHubUnavailable):
        return "github"
    if isinstance(exc, StoreUnavailable):
        return "store"
    assert isinstance(exc, (DeadlineExceeded, Uncertain, Transient))
    return ANY


@dataclass(frozen=True)
class Waiting:
    """Something failed and waits for its service: since when, which services, and not before when
    the check may probe again (a rate limit's wait, or a run that could not complete)."""

    services: tuple[str, ...]
    since: float
    not_before: float = 0.0
    first: Mapping[str, str] | None = None  # the delivery whose failure began it: {guid, event, thing, url}

    def to_data(self) -> dict[str, Any]:
        return {"services": list(self.services), "since": self.since, "not_before": self.not_before,
                **({"first": dict(self.first)} if self.first else {})}

    @classmethod
    def from_data(cls, data: Any) -> Waiting | None:
        if not isinstance(data, Mapping):
            return None
        services = tuple(s for s in data.get("services", ()) if isinstance(s, str))
        if not services:
            return None
        first = data.get("first")
        first = {str(k): str(v) for k, v in first.items()} if isinstance(first, Mapping) else None
        return cls(services, float(data.get("since", 0)), float(data.get("not_before", 0)), first)

    def without(self, *services: str) -> Waiting | None:
        left = tuple(s for s in self.services if s not in services)
        return replace(self, services=left) if left else None


def noted(waiting: Waiting | None, service: str, now: float, retry_after: float | None = None,
          since: float | None = None, first: Mapping[str, str] | None = None) -> Waiting | None:
    """What waits after a failure of `service` (which asked to wait `retry_after` seconds, a rate
    limit, taken up to LONGEST_WAIT_SECONDS), failing since `since` (now), begun by the delivery `first`; None
    when the note already says so (no write)."""
    not_before = now + min(retry_after, LONGEST_WAIT_SECONDS) if retry_after else 0.0
    began = now if since is None else since
    if waiting is None:
        return Waiting((service,), began, not_before, first)
    later = not_before > waiting.not_before + 60  # a write only for a wait that changes the check's minute
    if service in waiting.services and not later:
        return None
    began = waiting.since if service in waiting.services else began  # a new outage: its hold counts from it
    return replace(waiting, services=tuple(sorted({*waiting.services, service})), since=began,
                   not_before=max(waiting.not_before, not_before))


def merged(a: Waiting | None, b: Waiting | None) -> Waiting | None:
    """Two notes of what waits as one: every service of both, held from the earlier start."""
    if a is None or b is None:
        return a or b
    earlier = a if a.since <= b.since else b
    return Waiting(tuple(sorted({*a.services, *b.services})), earlier.since, max(a.not_before, b.not_before),
                   earlier.first or (b if earlier is a else a).first)


def note_failure(services: Services, exc: Transient, first: Mapping[str, str] | None = None) -> None:
    """The webhook's 500: note what is waiting, once per outage (a read, and a write only the first time), and
    which delivery began it (`first`: should GitHub forget it before it comes back, pager names it)."""
    service = service_of(exc)
    if service == "store":
        return  # the table is what failed: writing to it would only wait out boto's retries past GitHub's 10 s
    retry_after = getattr(exc, "retry_after", None)
    note(services, service, retry_after if isinstance(retry_after, (int, float)) else None, first=first)


NOTE_TRIES = 3  # a run's write or another delivery's note may land between the read and the write


def note(services: Services, service: str, retry_after: float | None = None, since: float | None = None,
         first: Mapping[str, str] | None = None) -> None:
    """Note that something waits for `service` ("any": nothing to probe, such as the ↻ of deliveries
    refused with 401, which the check's runs then carry out a page a minute), failing since `since` (now)."""
    for _ in range(NOTE_TRIES):
        try:
            record, waiting = load(services)
            new = noted(waiting, service, services.now(), retry_after, since, first)
            if new is not None:
                services.store.save(record, new.to_data())
            return
        except Conflict:  # a run wrote it, or another delivery noted it: read again
            continue
        except StoreUnavailable:  # the table is the outage
            break
    logger.info("recovery not noted", extra={"service": service})


def load(services: Services) -> tuple[Record, Waiting | None]:
    """The `waiting` item and what waits, as noted in it."""
    record = services.store.load(SWEEP_KEY, ITEM)
    return record, Waiting.from_data(record.data)
