"""The one pattern every signal follows: load the record, decide, claim, act, record; again until done.

Each thing a signal is about (a contribution, a repository's alarm, a release pull request, a button
press) has one record in the store, keyed by what it is about, never by the delivery. A signal hands
`settle` the record's key and a pure `decide(data, now) -> Step`; `settle` runs this loop:

    load the record
    a live `pending` claim of another delivery?   wait a moment and load again; still there: Busy (500)
    step = decide(data, now)                      pure: the next external effect still to do, if any
    no effect:  save step.data when it differs from what is stored (else write nothing); done
    claim:      save the record with a `pending` marker, a lease of LEASE_SECONDS from now
    act:        the one external call (send, edit, dispatch, merge, index write)
    record:     save step.then(result), the data after the effect, without the marker
    loop        decide again on what is now recorded: the next effect, or nothing left

Every save is conditional on the version loaded, so of two deliveries of the same event that race,
one claims and the other finds the claim (or loses the conditional write, loads again and finds it):
it waits for the first to finish and then finds the effect recorded, or answers 500 and comes back
later. A failed effect releases its claim, so the redelivery can act at once; a claim whose holder
died is taken over once its lease has passed.

Twice: `decide` skips what is recorded, so the same payload again changes nothing. Midway: each
effect is recorded right after it happens, so a redelivery after a failure does only what is left.
Late: records keep the order key of the newest payload applied and `decide` ignores an older one.

The one residual risk: an effect that happened but whose recording failed. The recording is tried
RECORD_ATTEMPTS times (on top of boto's own retries); if the table still refuses, the claim stays
and, once its lease has passed, a redelivery takes it over and repeats the effect: a message shown
twice, a draft or a fix asked for twice. The same holds for an effect whose answer was lost (a
timeout after Telegram or GitHub acted). An edit repeated is harmless, and a merge repeated is
refused by GitHub because the head was merged already.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Union

from .. import deadline
from ..errors import Conflict, GitHubRefused, MessageNotFound, StoreUnavailable, Transient
from ..services import Services
from ..store import Record

PENDING = "pending"
LEASE_SECONDS = 60.0  # longer than any invocation's deadline, so a live claim is never taken over
BUSY_POLLS = 15  # how often a delivery looks again for another one's claim to go away ...
BUSY_WAIT_SECONDS = 0.1  # ... and how long it waits in between
MAX_CONFLICTS = 3  # lost conditional writes before giving up with Busy
MAX_EFFECTS = 8  # effects one settle may carry out; more means a decide that never converges
RECORD_ATTEMPTS = 3  # tries to record an effect that happened
RECORD_WAITS = (0.05, 0.2)


class Busy(Transient):
    """Another delivery is acting on the same record: answer 500, a later delivery finds it done."""


# -- effects: what a step asks the outside world to do -------------------------------------------------

Buttons = list[list[tuple[str, str]]]


@dataclass(frozen=True)
class SendMessage:
    text: str
    buttons: Buttons | None = None
    notify: bool = True


@dataclass(frozen=True)
class EditMessage:
    """Edit a message; when Telegram no longer has it, send the text as a new message."""

    message_id: int
    text: str
    buttons: Buttons | None = None


@dataclass(frozen=True)
class Dispatch:
    repository: str
    event_type: str
    client_payload: dict[str, Any]


@dataclass(frozen=True)
class MergePull:
    repository: str
    number: int
    sha: str
    method: str
    installation_id: int | None = None


@dataclass(frozen=True)
class Remember:
    """Write an index record once (put if absent); its content never changes."""

    key: str
    data: dict[str, Any]


Effect = Union[SendMessage, EditMessage, Dispatch, MergePull, Remember]


@dataclass(frozen=True)
class MergeResult:
    merged: bool
    sha: str = ""
    status: int = 0
    reason: str = ""


@dataclass(frozen=True)
class Step:
    """What `decide` wants next.

    Without an effect: `data` is the record's new data (None: write nothing) and `outcome` says why.
    With an effect: `then(result)` is the record's data once the effect happened; `outcome` (or
    `outcome(result)`) says what was done.
    """

    outcome: str | Callable[[Any], str]
    data: dict[str, Any] | None = None
    effect: Effect | None = None
    then: Callable[[Any], dict[str, Any]] | None = None

    def describe(self, result: Any = None) -> str:
        return self.outcome(result) if callable(self.outcome) else self.outcome


Decide = Callable[[dict[str, Any], float], Step]


@dataclass(frozen=True)
class Settled:
    """How a settle ended: what it did, and the record's data before and after."""

    performed: tuple[str, ...]
    idle: str  # the outcome of the last decision, which had nothing (more) to do
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)

    @property
    def outcome(self) -> str:
        return ", ".join(self.performed) if self.performed else self.idle


def settle(
    services: Services,
    key: str,
    decide: Decide,
    *,
    ttl_seconds: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Settled:
    """Carry out `decide`'s steps for the record under `key`, each recorded right after it happens."""
    store = services.store
    performed: list[str] = []
    before: dict[str, Any] | None = None
    effects = conflicts = polls = 0
    while True:
        record = store.load(key)
        data = _without_claim(record.data)
        if before is None:
            before = data
        now = services.now()
        claim = record.data.get(PENDING)
        if _live(claim, now):
            if polls >= BUSY_POLLS:
                raise Busy(f"another delivery is acting on {key} ({claim.get('effect', '?')})")
            deadline.check(f"waiting for another delivery on {key}")
            polls += 1
            sleep(BUSY_WAIT_SECONDS)
            continue
        step = decide(data, now)
        expires_at = int(now + ttl_seconds) if ttl_seconds else None
        if step.effect is None:
            target = data if step.data is None else step.data
            if target != data or PENDING in record.data:
                try:
                    store.save(record, target, expires_at=expires_at)
                except Conflict:
                    conflicts += 1
                    if conflicts > MAX_CONFLICTS:
                        raise Busy(f"{key} keeps changing under this delivery") from None
                    continue
            return Settled(tuple(performed), step.describe(), before, target)
        if effects >= MAX_EFFECTS:
            raise RuntimeError(f"{key}: decide asked for more than {MAX_EFFECTS} effects")
        name = type(step.effect).__name__
        deadline.check(f"{name} for {key}")
        try:
            claimed = store.save(record, {**data, PENDING: {"effect": name, "until": now + LEASE_SECONDS}}, expires_at=expires_at)
        except Conflict:
            conflicts += 1
            if conflicts > MAX_CONFLICTS:
                raise Busy(f"{key} keeps changing under this delivery") from None
            continue
        try:
            result = perform(services, step.effect)
        except BaseException:
            _release(store, claimed, data, expires_at)
            raise
        assert step.then is not None, "a step with an effect says what to record after it"
        _record(store, claimed, step.then(result), expires_at, sleep)
        effects += 1
        description = step.describe(result)
        if description:  # an index write says nothing worth telling
            performed.append(description)


def perform(services: Services, effect: Effect) -> Any:
    """Carry out one effect; the result is what the step's `then` records."""
    settings = services.settings
    if isinstance(effect, SendMessage):
        return services.telegram.send_message(
            settings.telegram_chat_id,
            effect.text,
            thread_id=settings.telegram_thread_id,
            buttons=effect.buttons,
            notify=effect.notify,
        )
    if isinstance(effect, EditMessage):
        try:
            services.telegram.edit_message(settings.telegram_chat_id, effect.message_id, effect.text, buttons=effect.buttons)
            return effect.message_id
        except MessageNotFound:
            # Deleted in the chat: the text is still worth showing (SPEC §5, Messages).
            return services.telegram.send_message(
                settings.telegram_chat_id, effect.text, thread_id=settings.telegram_thread_id, buttons=effect.buttons
            )
    if isinstance(effect, Dispatch):
        services.github.dispatch(effect.repository, effect.event_type, effect.client_payload)
        return None
    if isinstance(effect, MergePull):
        try:
            answer = services.github.merge_pull(
                effect.repository,
                effect.number,
                sha=effect.sha,
                method=effect.method,
                installation_id=effect.installation_id,
            )
        except GitHubRefused as exc:
            return MergeResult(merged=False, status=exc.status, reason=exc.reason or f"refused ({exc.status})")
        return MergeResult(merged=True, sha=str(answer.get("sha") or ""))
    if isinstance(effect, Remember):
        record = services.store.load(effect.key)
        if not record.exists:
            try:
                services.store.save(record, effect.data)
            except Conflict:
                pass  # written by another delivery at the same moment, with the same content
        return None
    raise TypeError(f"not an effect: {effect!r}")


def _without_claim(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != PENDING}


def _live(claim: Any, now: float) -> bool:
    return isinstance(claim, dict) and float(claim.get("until", 0)) > now


def _release(store: Any, claimed: Record, data: dict[str, Any], expires_at: int | None) -> None:
    """Take back a claim whose effect failed; if even that fails, its lease runs out by itself."""
    try:
        store.save(claimed, data, expires_at=expires_at)
    except (Conflict, StoreUnavailable):
        pass


def _record(store: Any, claimed: Record, data: dict[str, Any], expires_at: int | None, sleep: Callable[[float], None]) -> None:
    """Record what an effect did. Tried again, since the effect cannot be taken back."""
    for attempt in range(RECORD_ATTEMPTS):
        try:
            store.save(claimed, data, expires_at=expires_at)
            return
        except Conflict:
            if attempt > 0 and store.load(claimed.key).data == data:
                return  # the earlier attempt was written after all, only its answer was lost
            raise Busy(f"{claimed.key}: another delivery took over while this one acted") from None
        except StoreUnavailable:
            if attempt + 1 >= RECORD_ATTEMPTS:
                raise
            sleep(RECORD_WAITS[min(attempt, len(RECORD_WAITS) - 1)])
