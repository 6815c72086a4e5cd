"""What attention keeps in the table: mutes, the phone's last call, the notes of the summaries (quiet hours',
and the call at the end of the phone's rest), and when alarms come due.

    mute                    what turns a buzz down, one query: an item per repository id muted {repository,
                            until, by, at}, and one per thread muted alone, `<repository id>#<issue|pull|
                            discussion>#<number>` {the same}, each gone a day after `until` (an unmute keeps
                            only {repository}: the name a later 🔔 says); and `call` {at}: when the phone
                            last called and began to rest (BUZZ_GAP_MINUTES)
    attention               the every-minute check's index, one query: an item `alarm:<ref>` per red
                            alarm {repository, branch, since, due} (`due`: when an entry comes past its
                            grace, or a fix's hold ends), and `summary:<start>` per period (quiet hours,
                            a rest of the phone) whose summary is still to send {start, end, closing}
                            (`closing`: its summary is under way; `sent`: sent, kept until the TTL)
    summary#<start>         a period's summary: the record itself {sent} once sent, and one item per
                            thing that would have buzzed meanwhile `<kind>:<thing>` {kind, label, url,
                            repository, at}, written by the `Note` effect of the decision that kept it

Every write is conditional (through `records.settle`, or on finding nothing there yet) and writes only
what changes, so a delivery or a check that comes twice writes once; in a delivery's pending work
(`pager.store.Pending`) they wait to be written with its record. The decisions are `pager.attention`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .attention import Volume, rest_of
from .errors import Conflict, PagerError, StoreUnavailable
from .observe import logger
from .services import Services
from .store import RECORD_WAITS, Record, Store, Write, update
from .values import iso

MUTE_KEY = "mute"
INDEX_KEY = "attention"
ALARM_ITEM = "alarm:"
SUMMARY_ITEM = "summary:"
CALL_ITEM = "call"
DAY = 24 * 3600
MUTE_DEFAULT_SECONDS = 8 * 3600
MUTE_MAX_SECONDS = 30 * DAY
SUMMARY_TTL_SECONDS = 3 * DAY  # a summary's mark in the check's index, from its send: past any late note
KEEP_TRIES = 3  # periods a note tries when each one's summary is under way as it is written
THREAD_ITEM = re.compile(r"([0-9]{1,19})#(issue|pull|discussion)#([0-9]{1,10})")

Thread = tuple[str, int]  # a thread of a repository: issue, pull or discussion, and its number


@dataclass(frozen=True)
class Mute:
    repository_id: int
    repository: str
    until: float
    by: str = ""
    thread: Thread | None = None  # a thread muted alone; None: the whole repository


def mute_item(repository_id: int, thread: Thread | None = None) -> str:
    """The item of a repository's mute (its id), or of one of its threads' (`<id>#<thing>#<number>`)."""
    return str(int(repository_id)) + (f"#{thread[0]}#{int(thread[1])}" if thread else "")


def _mute(record: Record, now: float) -> Mute | None:
    until = record.data.get("until")
    thread = THREAD_ITEM.fullmatch(record.item)
    if not isinstance(until, (int, float)) or until <= now or not (record.item.isdigit() or thread):
        return None
    return Mute(int(thread.group(1)) if thread else int(record.item), str(record.data.get("repository") or ""),
                float(until), str(record.data.get("by") or ""), (thread.group(2), int(thread.group(3))) if thread else None)


def mute_of(services: Services, repository_id: int, now: float, thread: Thread | None = None) -> Mute | None:
    return _mute(services.store.load(MUTE_KEY, mute_item(repository_id, thread)), now)


def muted_name(services: Services, repository_id: int, thread: Thread | None = None) -> str:
    """The repository's name as its mute's item (or its thread's) keeps it: while muted, and for a day after
    the mute ended or was undone; "" when there is none."""
    return str(services.store.load(MUTE_KEY, mute_item(repository_id, thread)).data.get("repository") or "")


def mutes(services: Services, now: float, *, threads: bool = False) -> list[Mute]:
    """The repositories muted now (with `threads`, the threads muted alone too), the soonest to end first."""
    found = [_mute(record, now) for record in services.store.items(MUTE_KEY)]
    return sorted((m for m in found if m is not None and (threads or m.thread is None)), key=lambda m: m.until)


def volume_keys(repository_id: int | None, thread: Thread | None = None) -> tuple[tuple[str, str], ...]:
    """The items `volume` reads: the phone's last call, the repository's mute and its thread's (a delivery that holds
    its records reads them ahead with those)."""
    mutes = (mute_item(repository_id), *((mute_item(repository_id, thread),) if thread else ())) if repository_id else ()
    return ((MUTE_KEY, CALL_ITEM), *((MUTE_KEY, item) for item in mutes))


def volume(services: Services, repository_id: int | None, now: float, thread: Thread | None = None) -> Volume:
    """What turns a buzz down for a repository now (and for a contribution in `thread`), in one read: its
    mute (and its thread's), and the phone's rest since its last call (BUZZ_GAP_MINUTES); quiet hours are
    the settings'."""
    quiet = services.settings.quiet
    found = {record.item: record for record in services.store.load_all(volume_keys(repository_id, thread))}

    def until(of: Thread | None = None) -> float | None:
        item = mute_item(repository_id, of) if repository_id else ""
        muted = _mute(found[item], now) if item in found else None
        return muted.until if muted else None

    return Volume(muted_until=until(), quiet=quiet.period(now) if quiet else None,
                  rest=_rest(services, found.get(CALL_ITEM), now), thread_muted_until=until(thread) if thread else None)


def _rest(services: Services, call: Record | None, now: float) -> tuple[float, float] | None:
    return rest_of(_call(call), services.settings.buzz_gap, now, services.settings.quiet)


def rest_now(services: Services, now: float) -> tuple[tuple[float, float], int] | None:
    """The phone's rest now (its period) and how many things wait for its call; None when it is not resting."""
    rest = _rest(services, services.store.load(MUTE_KEY, CALL_ITEM), now)
    return (rest, len(summary_notes(services, rest[0]))) if rest is not None else None


# -- the phone's rest ---------------------------------------------------------------------------------------


def last_call(services: Services) -> float | None:
    return _call(services.store.load(MUTE_KEY, CALL_ITEM))


def _call(record: Record | None) -> float | None:
    """When the phone last called and began to rest (None: not within the item's life)."""
    at = record.data.get("at") if record is not None else None
    return float(at) if isinstance(at, (int, float)) else None


def _call_at(at: float):
    def change(data: dict[str, Any]) -> dict[str, Any] | None:
        known = data.get("at")
        return None if isinstance(known, (int, float)) and known >= at else {"at": at}

    return change


def called(services: Services, at: float) -> None:
    """The phone called at `at` and rests from then (a later call kept, never an earlier one). A call while
    the phone rested (a moment of urgency now: it does not wait) ends that rest there: the every-minute check
    reads it from here (`rest_ended`). Its message is sent already: a table that keeps failing here is logged
    and costs at most one more buzz within the rest, never the step that sent it (in a delivery's pending work
    too: the write is given up rather than the message's record). Nothing to write when the phone never rests
    (BUZZ_GAP_MINUTES=0)."""
    if services.settings.buzz_gap <= 0:
        return
    for wait in (*RECORD_WAITS, None):  # tried again while the table throttles: the message cannot be taken back
        try:
            update(services.store, MUTE_KEY, _call_at(at), item=CALL_ITEM,
                   expires_at=int(services.now() + services.settings.buzz_gap + DAY), must_land=False)
            return
        except StoreUnavailable as exc:
            if wait is None:
                logger.warning("the phone's call not recorded", extra={"error": type(exc).__name__, "reason": str(exc)})
                return
            services.sleep(wait)
        except PagerError as exc:
            logger.warning("the phone's call not recorded", extra={"error": type(exc).__name__, "reason": str(exc)})
            return


def rest_ended(start: float, end: float, call: float | None) -> float:
    """When the period (start, end) a call is kept for ends: at its end, or earlier, when the phone called
    after it began (a moment of urgency now rang while the phone rested: what the rest kept comes with it).
    Quiet hours never end early: nothing calls inside them."""
    return call if call is not None and start < call < end else end


def _muted(repository: str, until: float, by: str, now: float):
    def change(data: dict[str, Any]) -> dict[str, Any] | None:
        if until <= now:  # its name stays, for a 🔔 pressed again to say
            return {"repository": repository} if data else None
        return {"repository": repository, "until": until, "by": by, "at": now}

    return change


def set_mute(services: Services, repository_id: int, repository: str, until: float, by: str = "",
             thread: Thread | None = None) -> None:
    """Mute a repository, or only one of its threads, until `until` (a time not after now unmutes it)."""
    now = services.now()
    update(services.store, MUTE_KEY, _muted(repository, until, by, now), item=mute_item(repository_id, thread),
           expires_at=int(now + max(until - now, 0) + DAY))


# -- the every-minute check's index -------------------------------------------------------------------------


def _indexed(wanted: Mapping[str, Any] | None):
    def change(data: dict[str, Any]) -> dict[str, Any] | None:
        if wanted is None:
            return {} if data else None
        return dict(wanted)

    return change


def index_alarm(services: Services, ref: str, *, repository: str, branch: str, since: float | None,
                due: float | None) -> None:
    """Keep the check's index of a red alarm (since when, when it comes due), or take it out (`since` None)."""
    wanted = None if since is None else {"repository": repository, "branch": branch, "since": since, "due": due}
    update(services.store, INDEX_KEY, _indexed(wanted), item=ALARM_ITEM + ref,
           expires_at=None if wanted else int(services.now() + DAY))


@dataclass(frozen=True)
class Red:
    """A red alarm as the index holds it."""

    ref: str
    repository: str
    branch: str
    since: float
    due: float | None


@dataclass(frozen=True)
class Index:
    red: tuple[Red, ...]
    summaries: tuple[tuple[float, float], ...]  # quiet periods (start, end) whose summary is still to send


def index(services: Services) -> Index:
    """The check's index, in one query."""
    red, summaries = [], []
    for record in services.store.items(INDEX_KEY):
        data = record.data
        if record.item.startswith(ALARM_ITEM) and isinstance(data.get("since"), (int, float)):
            due = data.get("due")
            red.append(Red(record.item[len(ALARM_ITEM):], str(data.get("repository") or ""), str(data.get("branch") or ""),
                           float(data["since"]), float(due) if isinstance(due, (int, float)) else None))
        elif record.item.startswith(SUMMARY_ITEM) and isinstance(data.get("end"), (int, float)) and not data.get("sent"):
            summaries.append((float(data["start"]), float(data["end"])))
    return Index(tuple(sorted(red, key=lambda r: r.since)), tuple(sorted(summaries)))


# -- the quiet hours' summary -------------------------------------------------------------------------------


def summary_key(start: float) -> str:
    return f"summary#{iso(start)}"


class Kept(Protocol):
    """What a note keeps for a period's call (`pager.engine.effects.Note` is one)."""

    @property
    def kind(self) -> str: ...
    @property
    def thing(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def period(self) -> tuple[float, float]: ...
    @property
    def repository(self) -> str: ...
    @property
    def at(self) -> float: ...
    @property
    def message(self) -> str: ...


def keep(services: Services, note: Kept) -> None:
    """Keep a note for its period's summary (once per thing: a note written already stays), with the
    every-minute check's index holding the period until its summary is sent. Safe twice: the note is written
    only where there is none, the index only where it is not yet or as it was read. The period is looked at
    first and the note written together with the index, both or neither: a summary marks its period
    `closing` before it reads its notes, so a note written before that mark is among them, and one that finds
    the mark (its delivery failed midway and came again late, the rest's length changed, or it raced the
    summary) is kept again for the phone's rest now, or, when that is the same period or none, for a call at
    the next check: called twice at worst, never lost."""
    start, end = note.period
    for _ in range(KEEP_TRIES):
        data = {"kind": note.kind, "label": note.label, "url": note.url, "repository": note.repository, "at": note.at,
                **({"message": note.message} if note.message else {})}
        if _kept(services.store, Record(summary_key(start), item=f"{note.kind}:{note.thing}"[:200]), data, start, end):
            return
        start, end = _later(services, start)
    logger.warning("a note kept for a summary already under way", extra={"kind": note.kind})


def _kept(store: Store, empty: Record, data: dict[str, Any], start: float, end: float) -> bool:
    """Write the note (where there is none yet) together with the index holding its period (one round trip after
    one read of the index); False when the period's summary is under way or sent already (a note for it now
    might never be called)."""
    index = store.load(INDEX_KEY, f"{SUMMARY_ITEM}{int(start)}")
    if index.data.get("sent") or index.data.get("closing"):
        return False
    expires_at = int(end + 3 * DAY)
    held = Write(index, None) if index.exists else Write(index, {"start": start, "end": end}, expires_at)
    try:
        store.save_all([Write(empty, data, expires_at, once=True), held])
        return True
    except Conflict:  # the index changed since it was read: the old way, a write at a time
        _put_once(store, empty, data, expires_at=expires_at)
        return _held(store, start, end)


def _later(services: Services, start: float) -> tuple[float, float]:
    """Where a note goes whose period's summary is under way: the phone's rest now, else a call at the next check."""
    now = services.now()
    rest = _rest(services, services.store.load(MUTE_KEY, CALL_ITEM), now)
    return (now, now) if rest is None or rest[0] == start else rest


def _held(store: Store, start: float, end: float) -> bool:
    """Make the check's index hold the period (start, end) until its summary is sent; False when its summary
    is under way or sent already (a note for it now might never be called)."""
    empty = Record(INDEX_KEY, item=f"{SUMMARY_ITEM}{int(start)}")
    try:
        store.save(empty, {"start": start, "end": end}, expires_at=int(end + 3 * DAY))
        return True
    except Conflict:
        return _open(store, start)


def _open(store: Store, start: float) -> bool:
    """The period's summary is not under way yet: a note kept for it now is in it."""
    data = store.load(INDEX_KEY, f"{SUMMARY_ITEM}{int(start)}").data
    return not (data.get("sent") or data.get("closing"))


def _put_once(store: Store, empty: Record, data: dict[str, Any], *, expires_at: int) -> None:
    """Write an item only where there is none yet (one conditional write, no read before it)."""
    try:
        store.save(empty, data, expires_at=expires_at)
    except Conflict:
        return  # written already, by this note's first delivery or another: once is enough


def summary_notes(services: Services, start: float) -> list[dict[str, Any]]:
    """A summary's notes, each with the thing it is about (`thing`: an alarm's ref, a record's key)."""
    return [{**r.data, "thing": r.item.split(":", 1)[-1]} for r in services.store.items(summary_key(start))
            if r.data.get("kind")]


def _closing(data: dict[str, Any]) -> dict[str, Any] | None:
    return None if data.get("closing") or data.get("sent") else {**data, "closing": True}


def summary_closing(services: Services, start: float) -> None:
    """The period's summary is under way: notes from now on go to a later call (`keep`). Written before the
    summary reads its notes, so that a note either is among them or finds this mark."""
    update(services.store, INDEX_KEY, _closing, item=f"{SUMMARY_ITEM}{int(start)}",
           expires_at=int(services.now() + SUMMARY_TTL_SECONDS))


def _sent(data: dict[str, Any]) -> dict[str, Any] | None:
    return None if data.get("sent") else {**data, "sent": True}


def summary_sent(services: Services, start: float) -> None:
    """The check's index no longer asks for a summary that was sent (or had nothing to say); its mark stays
    until the table's TTL takes it, days after the period, so that a late note never asks again."""
    update(services.store, INDEX_KEY, _sent, item=f"{SUMMARY_ITEM}{int(start)}",
           expires_at=int(services.now() + SUMMARY_TTL_SECONDS))
