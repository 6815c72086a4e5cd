"""The one pattern every signal follows: load the record, decide, claim, act, record; again until done.

Each thing a signal is about (a contribution, a repository's alarm, a release pull request, a button
press) has one record in the store, keyed by what it is about, never by the delivery. A signal hands
`settle` the record's key and a pure `decide(data, now) -> Step`; `settle` runs one loop over a
single lease of that record:

    load the record; a live `pending` claim of another delivery?   wait for it (until the deadline)
    gather what the decision needs besides the record (the items of the key: an alarm's entries)
    step = decide(data, now)                  pure: the next external effect still to do, if any
    no effect:   save step.data if it differs from what is stored (else write nothing); done
    claim:       save the record with a `pending` marker, a lease of LEASE_SECONDS from now
    then, while there is an effect:
      act        the one external call (send, edit, dispatch, merge, index write)
      decide     again, on the data after the effect
      record     save that data in one write, together with the claim of the next effect, if any

So a contribution's record (a message, then a draft) costs four round trips to the table: one load,
the claim, the message recorded with the draft claimed, the draft recorded (its thread's `holding`,
the mutes and the attention add their own). Every save is conditional on
the version loaded (or returned by the save before), so of two deliveries of the same thing that race,
one claims and the other finds the claim (or loses the conditional write and loads again): it waits
for the first to finish and then finds the effect recorded. Waiting for another delivery is no
failure: a delivery waits as long as its deadline lets it, and only then answers 500. What is
gathered is gathered after the record was found free and before the claim, which is conditional on
the record's version: so a decision never acts on what another delivery changed meanwhile (an
alarm rendered by a delivery that lost such a race is rendered again, from what is stored then). A failed effect releases its claim, so
the redelivery can act at once; a claim whose holder died is taken over once its lease has passed.

Twice: `decide` skips what is recorded, so the same payload again changes nothing. Midway: each
effect is recorded right after it happens, so a redelivery after a failure does only what is left.
Late: records keep the order key of the newest payload applied and `decide` ignores an older one.

The one residual risk: an effect that happened but whose recording failed. The recording is tried
RECORD_ATTEMPTS times (on top of boto's own retries); if the table still refuses, the claim stays
and, once its lease has passed, a redelivery takes it over and repeats the effect: a message shown
twice, a draft or a fix asked for twice. The same holds for an effect whose answer was lost (a
read timeout, or a connection closed after the request went out: Telegram or GitHub may have acted;
`pager.transport.may_have_arrived`). Both raise `Uncertain`, so
that a button press says the action may have happened instead of inviting a second press. An edit
repeated is harmless, and a merge repeated is refused by GitHub because the head was merged already.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import deadline
from ..errors import Conflict, StoreUnavailable, Transient, Uncertain
from ..services import Services
from ..store import RECORD_WAITS, Record
from .effects import Decide, Effect, Step
from .perform import perform as perform_effect

PENDING = "pending"
# Longer than any invocation that may hold a claim (the webhook's 8 s, the sweep's 150 s run that
# changes ⚙️ pager), so that a live claim is never taken over.
LEASE_SECONDS = 180.0
BUSY_WAIT_SECONDS = 0.1  # how long a delivery waits before it looks again for another one's claim to go away
BUSY_POLLS = 15  # without a deadline (tests, tools): how often it looks before giving up with Held
MAX_CONFLICTS = 3  # without a deadline: lost conditional writes before giving up with Busy
MAX_EFFECTS = 8  # effects one settle may carry out; more means a decide that never converges
RECORD_ATTEMPTS = 3  # tries to record an effect that happened

Perform = Callable[[Services, Effect], Any]


class Busy(Transient):
    """Another delivery is acting on the same record: answer 500, a later delivery finds it done."""


class Held(Busy):
    """The record `key` is claimed by another delivery, whose lease still runs, for `effect` (its name)."""

    def __init__(self, message: str, key: str, effect: str = "") -> None:
        super().__init__(message)
        self.key = key
        self.effect = effect


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
    decide: Decide | None = None,
    *,
    gather: Callable[[], Decide] | None = None,
    item: str = "",
    ttl_seconds: float | None = None,
    wait: bool = True,
    perform: Perform | None = None,
) -> Settled:
    """Carry out a decision's steps for the record under `key` (or its `item`), each recorded right after it happens.

    The decision is `decide`, or, with `gather`, the one `gather()` returns: it is called each time
    the record was found free, reads what the decision needs besides the record, and makes it.
    `wait=False` raises Held at once when another delivery holds the record (a button press answers
    "still working" rather than wait). `perform` carries out the effects (default: `pager.engine.perform`)."""
    store = services.store
    conflicts = 0
    while True:
        record = _free(services, key, wait, item)
        if gather is not None:
            decide = gather()
        assert decide is not None, "settle needs a decision, or a gather that makes one"
        now = services.now()
        expires_at = int(now + ttl_seconds) if ttl_seconds else None
        data = _without_claim(record.data)
        step = decide(data, now)
        try:
            if step.effect is None:
                target = data if step.data is None else step.data
                if target != data or PENDING in record.data:
                    store.save(record, target, expires_at=expires_at)
                return Settled((), step.describe(), data, target)
            record = store.save(record, _claimed(data, step.effect, now), expires_at=expires_at)
        except Conflict:
            conflicts += 1  # someone wrote first: load and decide again
            if not deadline.active() and conflicts > MAX_CONFLICTS:
                raise Busy(f"{key} keeps changing under this delivery") from None
            deadline.check(f"deciding again on {key}")
            continue
        return _carry_out(services, record, data, step, decide, expires_at, perform or perform_effect)


def _carry_out(
    services: Services,
    record: Record,
    data: dict[str, Any],
    step: Step,
    decide: Decide,
    expires_at: int | None,
    perform: Perform,
) -> Settled:
    """Perform the claimed step's effect, and each next one, recording each with the next claim."""
    before, performed = data, list[str]()
    while step.effect is not None:
        if len(performed) >= MAX_EFFECTS:
            raise RuntimeError(f"{record.key}: decide asked for more than {MAX_EFFECTS} effects")
        what = f"{type(step.effect).__name__} for {record.key}"
        deadline.check(what)
        try:
            result = perform(services, step.effect)
        except Transient as exc:
            if getattr(exc, "sent", False):
                # Sent, but its answer never came: it may have acted. The claim stays until its lease
                # passes, so nothing repeats it at once.
                raise Uncertain(f"{what} may have happened ({exc})") from exc
            _release(services.store, record, data, expires_at)
            raise
        except BaseException:
            _release(services.store, record, data, expires_at)
            raise
        assert step.then is not None, "a step with an effect says what to record after it"
        data = step.then(result)
        description = step.describe(result)
        if description:  # a step may have nothing worth telling
            performed.append(description)
        now = services.now()
        step = decide(data, now)
        if step.effect is None and step.data is not None:
            data = step.data
        target = data if step.effect is None else _claimed(data, step.effect, now)
        try:
            record = _record(services, record, target, expires_at)
        except StoreUnavailable as exc:
            raise Uncertain(f"{what} happened, but recording it failed ({exc})", performed=tuple(performed)) from exc
    return Settled(tuple(performed), step.describe(), before, data)


def _free(services: Services, key: str, wait: bool, item: str = "") -> Record:
    """The record, once no other delivery holds a live claim on it: waited for until the invocation's
    deadline (without one, BUSY_POLLS times)."""
    polls = 0
    while True:
        record = services.store.load(key, item)
        claim = record.data.get(PENDING)
        if not isinstance(claim, dict) or not _live(claim, services.now()):
            return record
        if not wait or (not deadline.active() and polls >= BUSY_POLLS):
            raise Held(f"another delivery is acting on {key} ({claim.get('effect', '?')})", key, str(claim.get("effect", "")))
        deadline.check(f"waiting for another delivery on {key}")
        polls += 1
        services.sleep(BUSY_WAIT_SECONDS)


def _claimed(data: dict[str, Any], effect: Effect | str, now: float) -> dict[str, Any]:
    name = effect if isinstance(effect, str) else type(effect).__name__
    return {**data, PENDING: {"effect": name, "until": now + LEASE_SECONDS}}


@contextlib.contextmanager
def holding(services: Services, key: str, item: str = "", *, ttl_seconds: float | None = None) -> Iterator[dict[str, Any]]:
    """Hold a record while one delivery takes a few steps that another one about the same thing must not
    interleave with (a thread's first message and last buzz while a contribution in it is shown): claimed
    as an effect is, so another delivery waits for it the same way; yields its data, a dict the steps may
    change, which is written with the release (the claim taken back unchanged if a step raised)."""
    store = services.store
    while True:
        record = _free(services, key, True, item)
        now = services.now()
        expires_at = int(now + ttl_seconds) if ttl_seconds else None
        data = _without_claim(record.data)
        try:
            claimed = store.save(record, _claimed(data, "Hold", now), expires_at=expires_at)
            break
        except Conflict:
            deadline.check(f"holding {key}")
    held = dict(data)
    try:
        yield held
    except BaseException:
        _release(store, claimed, data, expires_at)
        raise
    _record(services, claimed, held, expires_at)


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


def _record(services: Services, claimed: Record, data: dict[str, Any], expires_at: int | None) -> Record:
    """Record what an effect did. Tried again, since the effect cannot be taken back."""
    store = services.store
    for attempt in range(RECORD_ATTEMPTS):
        try:
            return store.save(claimed, data, expires_at=expires_at)
        except Conflict:
            if attempt > 0:
                current = store.load(claimed.key)
                if current.data == data:
                    return current  # the earlier attempt was written after all, only its answer was lost
            raise Busy(f"{claimed.key}: another delivery took over while this one acted") from None
        except StoreUnavailable:
            if attempt + 1 >= RECORD_ATTEMPTS:
                raise
            services.sleep(RECORD_WAITS[min(attempt, len(RECORD_WAITS) - 1)])
    raise AssertionError("unreachable")
