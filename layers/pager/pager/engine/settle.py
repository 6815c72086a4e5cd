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
    record:      save the data after the last effect, together with what the effects wrote besides (the
                 phone's call, a note for a summary), in one round trip; the claim held until then

The work runs on the delivery's `pager.store.Pending` (`Services.store` inside): what it reads is read
once, what the effects write waits there, and the record is written with it at the end, all or none
(one transaction). `holding` holds a record for a few steps (a thread while a contribution in it is
shown) and, with `along`, the records those steps settle: read together (`ahead`: with what the steps
read besides, one round trip), claimed together (one round trip), and written together with everything
the steps did (one round trip). So an outsider's comment (a message, then a draft) costs three round
trips to the table, four when it is kept for the phone's call (the summary's mark of its period is read
first). Every write is conditional on the version loaded, so of two deliveries of the same thing that
race, one claims and the other finds the claim (or loses the conditional write and loads again): it
waits for the first to finish and then finds the effect recorded. Waiting for another delivery is no
failure: a delivery waits as long as its deadline lets it, and only then answers 500. What is
gathered is gathered after the record was found free and before the claim, which is conditional on
the record's version: so a decision never acts on what another delivery changed meanwhile (an
alarm rendered by a delivery that lost such a race is rendered again, from what is stored then). A
failed effect writes what the effects before it did and releases the claim, so the redelivery does
only what is left, at once; a claim whose holder died is taken over once its lease has passed. A write
of an effect's own (the phone's call, a note) whose record another writer changed before the end is
made again on what is stored then (`pager.store.Pending`); the claimed records no one else writes.

Twice: `decide` skips what is recorded, so the same payload again changes nothing. Midway: what the
effects did is written before the delivery answers, when an effect fails too, so a redelivery after a
failure does only what is left. Late: records keep the order key of the newest payload applied and
`decide` ignores an older one.

The one residual risk: an effect that happened but whose recording failed. The recording is tried
RECORD_ATTEMPTS times (on top of boto's own retries); if the table still refuses, the claim stays
and, once its lease has passed, a redelivery takes it over and repeats what was not recorded: a
message shown twice, a draft or a fix asked for twice. The same holds for an effect whose answer was
lost (a read timeout, or a connection closed after the request went out: Telegram or GitHub may have
acted; `pager.transport.may_have_arrived`), and for an invocation that dies between its effects and
its record (the handler's deadline ends every call in time to write it). Both raise `Uncertain`, so
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
from ..observe import logger
from ..services import Services
from ..store import RECORD_ATTEMPTS, RECORD_WAITS, Pending, Record, Store, Where, Write, at_work
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
    """Carry out a decision's steps for the record under `key` (or its `item`), recorded together once they are done.

    The decision is `decide`, or, with `gather`, the one `gather()` returns: it is called each time
    the record was found free, reads what the decision needs besides the record, and makes it.
    `wait=False` raises Held at once when another delivery holds the record (a button press answers
    "still working" rather than wait). `perform` carries out the effects (default: `pager.engine.perform`).
    Inside a `holding` that holds the record too (`along`), the steps act under its claim and are written
    with it."""
    store = services.store
    carry_out = perform or perform_effect
    if isinstance(store, Pending) and store.hold and store.holds(key, item):
        return _settle_held(services, store, key, item, decide, gather, ttl_seconds, carry_out)
    pending = Pending(_table(store))
    with at_work(pending):
        try:
            settled = _settle(services, pending, key, item, decide, gather, ttl_seconds, wait, carry_out)
        except BaseException:
            _commit(services, pending, key, failing=True)
            raise
        _commit(services, pending, key, performed=settled.performed)
    return settled


def _settle(services: Services, pending: Pending, key: str, item: str, decide: Decide | None,
            gather: Callable[[], Decide] | None, ttl_seconds: float | None, wait: bool, perform: Perform) -> Settled:
    conflicts = 0
    while True:
        record = _free(services, pending, key, wait, item)
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
                    pending.table.save(record, target, expires_at=expires_at)
                return Settled((), step.describe(), data, target)
            [record] = pending.claim([Write(record, _claimed(data, step.effect, now), expires_at)])
        except Conflict:
            conflicts += 1  # someone wrote first: load and decide again
            if not deadline.active() and conflicts > MAX_CONFLICTS:
                raise Busy(f"{key} keeps changing under this delivery") from None
            deadline.check(f"deciding again on {key}")
            pending.forget()
            continue
        return _carry_out(services, pending, record, data, step, decide, expires_at, perform)


def _settle_held(services: Services, pending: Pending, key: str, item: str, decide: Decide | None,
                 gather: Callable[[], Decide] | None, ttl_seconds: float | None, perform: Perform) -> Settled:
    """A record the delivery's hold claimed already: decided and acted on under that claim, written with the hold."""
    record = pending.load(key, item)
    if gather is not None:
        decide = gather()
    assert decide is not None, "settle needs a decision, or a gather that makes one"
    now = services.now()
    expires_at = int(now + ttl_seconds) if ttl_seconds else None
    data = _without_claim(record.data)
    step = decide(data, now)
    if step.effect is None:
        target = data if step.data is None else step.data
        if target != data:
            pending.save(record, target, expires_at=expires_at)
        return Settled((), step.describe(), data, target)
    return _carry_out(services, pending, record, data, step, decide, expires_at, perform)


def _carry_out(
    services: Services,
    pending: Pending,
    record: Record,
    data: dict[str, Any],
    step: Step,
    decide: Decide,
    expires_at: int | None,
    perform: Perform,
) -> Settled:
    """Perform the claimed step's effect, and each next one, under the one claim; then leave the record's data
    to be written (a failure leaves what the effects before it did, the claim released)."""
    before, performed, n = data, list[str](), 0
    while step.effect is not None:
        what = f"{type(step.effect).__name__} for {record.key}"
        mark = (record.key, record.item, n, type(step.effect).__name__)  # the effect's, for its writes besides the record
        n += 1
        try:
            if n > MAX_EFFECTS:
                raise RuntimeError(f"{record.key}: decide asked for more than {MAX_EFFECTS} effects")
            deadline.check(what)
            with pending.acting(mark):
                result = perform(services, step.effect)
        except Transient as exc:
            if getattr(exc, "sent", False):
                # Sent, but its answer never came: it may have acted. The claim stays until its lease
                # passes, so nothing repeats it at once.
                pending.save(record, _claimed(data, step.effect, services.now()), expires_at=expires_at)
                raise Uncertain(f"{what} may have happened ({exc})") from exc
            pending.save(record, data, expires_at=expires_at)
            raise
        except BaseException:
            pending.save(record, data, expires_at=expires_at)
            raise
        pending.acted = True
        assert step.then is not None, "a step with an effect says what to record after it"
        done = step.then(result)
        pending.effects[mark] = (data, done)
        data = done
        description = step.describe(result)
        if description:  # a step may have nothing worth telling
            performed.append(description)
        step = decide(data, services.now())
        if step.effect is None and step.data is not None:
            data = step.data
    pending.save(record, data, expires_at=expires_at)
    return Settled(tuple(performed), step.describe(), before, data)


def _commit(services: Services, pending: Pending, key: str, *, failing: bool = False,
            performed: tuple[str, ...] = ()) -> None:
    """Write what the delivery's work left waiting (`_write_all`). An effect happened and the table refuses even its
    record: Uncertain (the claim stays until its lease passes); a claimed record changed meanwhile: Busy; an
    effect taken back: StoreUnavailable (its redelivery does it again). While a failure is on its way out,
    nothing else is said unless an effect happened."""
    try:
        taken_back = _write_all(services, pending)
    except StoreUnavailable as exc:
        if pending.acted:
            raise Uncertain(f"{key}: what was done happened, but recording it failed ({exc})", performed=performed) from exc
        if not failing:
            raise
        return
    except Conflict:
        if pending.acted or not failing:
            raise Busy(f"{key}: another delivery took over while this one acted") from None
        return
    finally:
        if pending.given_up:
            logger.warning("writes given up", extra={"key": key, "records": pending.given_up})
    if taken_back and not failing:
        raise StoreUnavailable(f"{key}: the table kept refusing what {', '.join(taken_back)} wrote: not recorded, "
                               "its redelivery does it again")


def _write_all(services: Services, pending: Pending) -> list[str]:
    """Write what waits, together; should that not land (the table keeps refusing one of the writes, or another
    writer keeps changing one), the claimed records alone, each without the effects whose own writes are given
    up with the rest (a note for the phone's call): what was sent is recorded, never sent again, and what was
    not kept is done again by the redelivery. The effects so taken back (none when all landed)."""
    try:
        pending.commit(services.sleep, RECORD_WAITS, RECORD_ATTEMPTS)
        return []
    except Conflict as exc:
        if not exc.keys or any(pending.holds(*where) for where in exc.keys) or not pending.besides_held():
            raise
    except StoreUnavailable:
        if not pending.besides_held():
            raise  # the claimed records are all that waits: nothing to leave out
    marks = pending.taken_back()
    pending.only_held(_without(pending, marks))
    pending.commit(services.sleep, RECORD_WAITS, RECORD_ATTEMPTS)
    return sorted({mark[3] for mark in marks})


_MISSING = object()


def _without(pending: Pending, marks: set[Any]) -> dict[Where, dict[str, Any]]:
    """The held records' data as waiting, each marked effect's changes taken back (the latest effect first)."""
    revised: dict[Where, dict[str, Any]] = {}
    for mark in sorted(marks, key=lambda m: m[2], reverse=True):
        before, after = pending.effects[mark]
        data = revised.setdefault((mark[0], mark[1]), dict(pending.load(mark[0], mark[1]).data))
        for name in set(before) | set(after):
            if before.get(name, _MISSING) != after.get(name, _MISSING):
                if name in before:
                    data[name] = before[name]
                else:
                    data.pop(name, None)
    return revised


def _free(services: Services, pending: Pending, key: str, wait: bool, item: str = "") -> Record:
    """The record, once no other delivery holds a live claim on it: waited for until the invocation's
    deadline (without one, BUSY_POLLS times)."""
    return _free_all(services, pending, [(key, item)], wait=wait)[0]


def _free_all(services: Services, pending: Pending, keys: list[Where], ahead: tuple[Where, ...] = (), *,
              wait: bool = True) -> list[Record]:
    """The records under `keys` (read with `ahead`, in one round trip), once no other delivery holds a live claim on
    any of them: waited for until the invocation's deadline (without one, BUSY_POLLS times)."""
    polls = 0
    while True:
        records = pending.load_all([*keys, *ahead])[:len(keys)] if len(keys) + len(ahead) > 1 else [pending.load(*keys[0])]
        now = services.now()
        busy = next((r for r in records if _live(r.data.get(PENDING), now)), None)
        if busy is None:
            return records
        claim = busy.data[PENDING]
        if not wait or (not deadline.active() and polls >= BUSY_POLLS):
            raise Held(f"another delivery is acting on {busy.key} ({claim.get('effect', '?')})", busy.key,
                       str(claim.get("effect", "")))
        deadline.check(f"waiting for another delivery on {busy.key}")
        polls += 1
        services.sleep(BUSY_WAIT_SECONDS)
        pending.forget(*keys)


def _claimed(data: dict[str, Any], effect: Effect | str, now: float) -> dict[str, Any]:
    name = effect if isinstance(effect, str) else type(effect).__name__
    return {**data, PENDING: {"effect": name, "until": now + LEASE_SECONDS}}


@contextlib.contextmanager
def holding(services: Services, key: str, item: str = "", *, ttl_seconds: float | None = None,
            along: tuple[Where, ...] = (), ahead: tuple[Where, ...] = ()) -> Iterator[dict[str, Any]]:
    """Hold a record while one delivery takes a few steps that another one about the same thing must not
    interleave with (a thread's first message and last buzz while a contribution in it is shown): claimed
    as an effect is, so another delivery waits for it the same way; yields its data, a dict the steps may
    change, which is written with the release (the claim taken back unchanged if a step raised).

    `along`: records (key, item) held with it, that the steps settle under this claim; `ahead`: records the
    steps read besides (what turns a buzz down), read with them. All are read in one round trip, claimed in
    one, and written, with everything the steps did, in one."""
    pending = Pending(_table(services.store), hold=True)
    keys = [(key, item), *along]
    with at_work(pending):
        conflicts = 0
        while True:
            records = _free_all(services, pending, keys, ahead)
            now = services.now()
            expires_at = int(now + ttl_seconds) if ttl_seconds else None
            try:
                claimed = pending.claim([Write(r, _claimed(_without_claim(r.data), "Hold", now), expires_at) for r in records])
                break
            except Conflict:
                conflicts += 1
                if not deadline.active() and conflicts > MAX_CONFLICTS:
                    raise Busy(f"{key} keeps changing under this delivery") from None
                deadline.check(f"holding {key}")
                pending.forget()
        data = _without_claim(records[0].data)
        held = dict(data)
        try:
            yield held
        except BaseException:
            _release(pending, claimed, data, expires_at)
            _commit(services, pending, key, failing=True)
            raise
        _release(pending, claimed, held, expires_at)
        _commit(services, pending, key)


def _release(pending: Pending, claimed: list[Record], data: dict[str, Any], expires_at: int | None) -> None:
    """The hold's record with `data`, and each record held along that no step wrote, as it was: claims taken back."""
    pending.save(claimed[0], data, expires_at=expires_at)
    for record in claimed[1:]:
        if not pending.queued(record.key, record.item):
            pending.save(record, _without_claim(record.data), expires_at=expires_at)


def _table(store: Store) -> Store:
    """The table itself, below a delivery's pending work."""
    return store.table if isinstance(store, Pending) else store


def _without_claim(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != PENDING}


def _live(claim: Any, now: float) -> bool:
    return isinstance(claim, dict) and float(claim.get("until", 0)) > now
