"""What attention keeps in the table: mutes, the notes of the quiet hours' summary, and when alarms come due.

    mute                    one item per repository id: {repository, until, by, at}; gone after `until`
    attention               the every-minute check's index, one query: an item `alarm:<ref>` per red
                            alarm {repository, branch, since, due} (`due`: when an entry comes past its
                            grace, or a fix's hold ends), and `summary:<start>` per quiet period whose
                            summary is still to send {start, end}
    summary#<start>         a quiet period's summary: the record itself {sent} once sent, and one item per
                            thing that would have buzzed meanwhile `<kind>:<thing>` {kind, label, url,
                            repository, at}, written by the `Note` effect of the decision that kept it

Every write is conditional (through `records.settle`, or on finding nothing there yet) and writes only
what changes, so a delivery or a check that comes twice writes once. The decisions are `pager.attention`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .attention import Volume
from .errors import Conflict
from .services import Services
from .signals.records import settle
from .signals.steps import Note, Step
from .store import Record, Store
from .values import iso

MUTE_KEY = "mute"
INDEX_KEY = "attention"
ALARM_ITEM = "alarm:"
SUMMARY_ITEM = "summary:"
DAY = 24 * 3600
MUTE_DEFAULT_SECONDS = 8 * 3600
MUTE_MAX_SECONDS = 30 * DAY


@dataclass(frozen=True)
class Mute:
    repository_id: int
    repository: str
    until: float
    by: str = ""


def _mute(record: Record, now: float) -> Mute | None:
    until = record.data.get("until")
    if not isinstance(until, (int, float)) or until <= now or not record.item.isdigit():
        return None
    return Mute(int(record.item), str(record.data.get("repository") or ""), float(until), str(record.data.get("by") or ""))


def mute_of(services: Services, repository_id: int, now: float) -> Mute | None:
    return _mute(services.store.load(MUTE_KEY, str(int(repository_id))), now)


def mutes(services: Services, now: float) -> list[Mute]:
    """The repositories muted now, the soonest to end first."""
    found = [_mute(record, now) for record in services.store.items(MUTE_KEY)]
    return sorted((m for m in found if m is not None), key=lambda m: m.until)


def volume(services: Services, repository_id: int | None, now: float) -> Volume:
    """What turns a buzz down for a repository now: its mute (one read), quiet hours (the settings)."""
    quiet = services.settings.quiet
    muted = mute_of(services, repository_id, now) if repository_id else None
    return Volume(muted_until=muted.until if muted else None, quiet=quiet.period(now) if quiet else None)


def _decide_mute(repository: str, until: float, by: str, now: float):
    def decide(data: dict[str, Any], _: float) -> Step:
        if until <= now:
            return Step("unmuted", data={} if data else None)
        new = {"repository": repository, "until": until, "by": by, "at": now}
        return Step("muted", data=new)

    return decide


def set_mute(services: Services, repository_id: int, repository: str, until: float, by: str = "") -> None:
    """Mute a repository until `until` (a time not after now unmutes it)."""
    now = services.now()
    settle(services, MUTE_KEY, _decide_mute(repository, until, by, now), item=str(int(repository_id)),
           ttl_seconds=max(until - now, 0) + DAY)


# -- the every-minute check's index -------------------------------------------------------------------------


def _decide_index(wanted: Mapping[str, Any] | None):
    def decide(data: dict[str, Any], _: float) -> Step:
        if wanted is None:
            return Step("", data={} if data else None)
        return Step("", data=dict(wanted) if dict(wanted) != data else None)

    return decide


def index_alarm(services: Services, ref: str, *, repository: str, branch: str, since: float | None,
                due: float | None) -> None:
    """Keep the check's index of a red alarm (since when, when it comes due), or take it out (`since` None)."""
    wanted = None if since is None else {"repository": repository, "branch": branch, "since": since, "due": due}
    settle(services, INDEX_KEY, _decide_index(wanted), item=ALARM_ITEM + ref,
           ttl_seconds=None if wanted else DAY)


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


def keep(store: Store, note: Note) -> None:
    """Keep a note for its period's summary (once per thing: a note written already stays), and make the
    every-minute check's index hold the period until its summary is sent. Safe twice: each write is
    conditional on finding nothing there yet (a summary sent already leaves its mark, so nothing asks
    for it again)."""
    start, end = note.period
    _put_once(store, Record(summary_key(start), item=f"{note.kind}:{note.thing}"[:200]),
              {"kind": note.kind, "label": note.label, "url": note.url, "repository": note.repository, "at": note.at},
              expires_at=int(end + 3 * DAY))
    _put_once(store, Record(INDEX_KEY, item=f"{SUMMARY_ITEM}{int(start)}"), {"start": start, "end": end},
              expires_at=int(end + 3 * DAY))


def _put_once(store: Store, empty: Record, data: dict[str, Any], *, expires_at: int) -> None:
    if store.load(empty.key, empty.item).exists:
        return
    try:
        store.save(empty, data, expires_at=expires_at)
    except Conflict:
        return  # written meanwhile by another delivery: once is enough


def summary_notes(services: Services, start: float) -> list[dict[str, Any]]:
    return [dict(r.data) for r in services.store.items(summary_key(start)) if r.data.get("kind")]


def _decide_sent(data: dict[str, Any], now: float) -> Step:
    return Step("", data=None if data.get("sent") else {**data, "sent": True})


def summary_sent(services: Services, start: float) -> None:
    """The check's index no longer asks for a summary that was sent (or had nothing to say); its mark stays
    until the table's TTL takes it, days after the period, so that a late note never asks again."""
    settle(services, INDEX_KEY, _decide_sent, item=f"{SUMMARY_ITEM}{int(start)}")
