"""The sweep's pure core: what to read, what to ask GitHub for again, what the alarm shows, what to remember.

Nothing here does I/O or reads a clock: the shell (`run.read_and_plan`) passes the pages it read, the
remembered state, the settings and `now`, and carries out the plan that comes back (the decision, amended).

What a run knows
----------------
GitHub's list of the app's deliveries is the one truth about the attempts; the pager only remembers
what the list cannot give it again cheaply. A run knows, by delivery id:

- the **failure list** (`status=failure`: status codes 400..599) read back to the window's start,
  at most `sweep_failure_pages` pages;
- the **every-outcome list** read back to the cursor (the newest delivery the run before read; the
  window's start on a first run), at most `sweep_all_pages` pages and only what the budget leaves after
  `sweep_max_redeliveries` redeliveries and one change of the alarm;
- the **state**: deliveries that got no answer (GitHub's failure filter leaves them out) and
  redelivered attempts that passed, for the window (`sweep_window_minutes`); and every attempt of the
  events it follows (see below), whatever their age;
- the **alarm's entries**: the `delivery:<guid>` entries open in the control repository's alarm, as
  its items hold them (the shell reads them; they are the one truth about what the alarm names).

Outcomes: 200..399 passed; 400..499 refused (the pager refused it and would again: never again), but
429 (too many requests: API Gateway's throttling) failed; 500..599 failed; anything else, `0` "timed out" and also a 1xx that GitHub's two filters both leave
out, is **no answer**, treated like a failure and remembered because no filter brings it back.

An event counts only while its first delivery is known
-------------------------------------------------------
An event (a `guid`) is counted only when its first delivery (`redelivery: false`) is among what the run
knows, lies inside the window, and is newer than each point before which the run's view of failures
is incomplete: only then are all its attempts known. Once counted and still failing, it is
**followed**: the state keeps all its attempts, so later runs count it past the window (its later
attempts are newer than the cursor and the failure list's reach), until it passes, is refused, or is
named in the alarm: no cap and no window drops it silently. Why the first condition holds for each
kind of first delivery:

- first delivery **passed**: the event is done; it is never a candidate, whether the run sees it or not
  (an older one is not remembered; its guid is then unseen, and unseen events are never asked for).
- first delivery **4xx or 5xx**: it is on the failure list. When that list was cut short by its page
  cap, every event whose first delivery is older than the oldest failure read is not counted, since
  some of its failed attempts may lie beyond the pages.
- first delivery **no answer**: it was on an every-outcome page of this run or an earlier one and is
  remembered in the state. When the state had to be trimmed to stay small, the newest remembered
  deliveries are kept and the id of the newest one dropped becomes the state's `horizon`: an event
  whose first delivery is not newer than it is not counted (an attempt of it may have been dropped).

Every later attempt of a counted event is then known too: its failures are on the failure pages, its
no-answers and passed redeliveries on every-outcome pages of this run or in the state. The one accepted
hole is the decision's: when the every-outcome list is cut short, a no-answer or a pass inside that
reach gap is missed (the cursor still moves on, and the gap is logged); a 5xx never is.

The decision per counted event
------------------------------
- any attempt passed: nothing more; its `delivery:` entry, if open, closes.
- newest attempt 4xx: never again.
- an event the pager has no handler for (it answers such an event 200 "ignored"): never again, and
  not remembered; asking for it again could change nothing.
- newest attempt 5xx or no answer:
  - fewer than `sweep_max_attempts` attempts: asked for again (the newest attempt's id), oldest
    first by first delivery, at most `sweep_max_redeliveries` and within the calls left; the rest
    wait, followed, for a later run;
  - otherwise, or when GitHub is about to forget it (its first delivery nears GitHub's three days),
    or when the state has no room left to follow it: a `delivery:<guid>` entry of the control
    repository's alarm, linked to the app's Advanced page; one GitHub is about to forget with
    attempts left is still asked for while GitHub keeps it (`Reason.LAST_CHANCE`), so that a service
    back in its last hours brings it back as itself;
  - a followed event whose newest known attempt is older than the oldest failure that cut-short
    failure pages reached may have a later attempt beyond them (the redelivery a run asked for, 4xx
    or 5xx): it is followed on and asked for nothing until a run sees past it.

No event is dropped because another one passed. Whether a newer event about the same thing makes a
failed one stale is decided where it can be decided exactly: by the signal's own record, when the
event is delivered again (its handler compares order keys per thing and answers "stale", changing
nothing). The list says nothing of what an event is about, so any rule here would drop failures of
other things (another pull request, another workflow) with the stale ones.

Entries
-------
The `delivery:` entries are items of the control repository's alarm, one per event, as many as there
are (the message shows the most important and says how many more). The plan opens one for each event
that needs naming and is not open yet, and closes one when a pass of its guid is seen (the
maintainer's own redelivery from the Advanced page included, even after the window) or after
`GITHUB_RETENTION` (three days), when GitHub no longer lists the event's deliveries and nothing can
deliver it again. A change that did not fit the budget or failed in Telegram leaves the state's
`alarm_due` set, and a later run applies the change again (it is safe twice) and renders the alarm.

Calls
-----
Every GitHub and Telegram call of the run counts against `sweep_call_budget`. One change of the alarm
is reserved as `ALARM_CALLS` = 1 call (pages = budget left − redeliveries − 1):
an edit of the alarm's message, or a send when it opens. Two rarer paths take one request more and
are not reserved for: Telegram saying the message to edit is gone (the alarm then sends it anew), and
Telegram's single retry after a short 429; only they can take a run one call past its budget. The redeliveries come before the alarm and may use what the alarm would have had;
the alarm change then waits for the next run.

The phases
----------
`plan_run` composes pure phases, each with its own tests:

(a) `merge_attempts`: the events the run knows, the attempts of the state and both lists merged by id;
(b) `judge`: one `Verdict` per event, its `Reason` as data (`counted_from`: where the view is complete);
(c) `choose_redeliveries`: the candidates asked for again, oldest first, within the cap and the budget;
(d) `follow`: the failing events the next runs must still count, and those there is no room for;
(e) `reconcile_entries`: the alarm's change, against the entries it holds;
(f) `next_state`: what the next runs need, within the caps, with the horizon and the cursor.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, TypeVar

from .. import words
from ..settings import Settings
from ..signals.alarm import DELIVERY_PREFIX as ENTRY_PREFIX
from ..values import iso as format_time
from ..values import parse_iso
from ..waiting import STATE_KEY  # noqa: F401  (the store key of the `State` item)

PASSED = "passed"
REFUSED = "refused"
FAILED = "failed"
NO_ANSWER = "no answer"

FAILURES = "failures"  # the list read with status=failure
ALL = "all"  # the list of every outcome
MEMORY = "memory"  # the remembered deliveries, when trimmed

ALARM_CALLS = 1
CURSOR_OVERLAP_SECONDS = 30  # the every-outcome list reads this far past the cursor (see Reading.reached)
GITHUB_RETENTION = 3 * 24 * 3600  # GitHub lists deliveries for three days
RETENTION_MARGIN = 2 * 3600  # an event this close to GitHub's three days is named, and still asked for (last chance)
LAST_CHANCE_MARGIN = 300  # ... until this close to them (GitHub's clock and ours may differ)
STATE_VERSION = 2
ASK_MEMORY_SECONDS = 3600  # a redelivery asked for and still not listed by then is asked for again
REDELIVERY_SPACING_SECONDS = 840  # a redelivery that failed is asked for again no sooner (the schedule's 15 min, less a margin)
_NAME_MAX = 40  # event and action names are cut to this, to bound the state's size

ActsOn = Callable[[str, str | None], bool]  # whether a handler acts on an event and action
T = TypeVar("T")


TOO_MANY_REQUESTS = 429  # API Gateway's throttling answers it before pager runs: a failure a later attempt fixes


def outcome_of(status_code: int) -> str:
    """How an attempt ended, from its status code (GitHub's filters: success 200..399, failure 400..599).
    A 4xx is pager's refusal, which it would repeat, except 429: too many requests (API Gateway's throttle
    or any other) failed, like a 5xx."""
    if 200 <= status_code <= 399:
        return PASSED
    if 400 <= status_code <= 499 and status_code != TOO_MANY_REQUESTS:
        return REFUSED
    if 500 <= status_code <= 599:
        return FAILED
    return NO_ANSWER


def parse_time(text: str) -> float:
    """Epoch seconds of GitHub's ISO 8601 time ('2026-11-12T10:00:00Z'); ValueError when unreadable."""
    epoch = parse_iso(text)
    if epoch is None:
        raise ValueError(f"not a time: {text!r}")
    return epoch


@dataclass(frozen=True)
class Attempt:
    """One delivery attempt as the list shows it; all attempts of an event share its `guid`."""

    id: int
    guid: str
    at: float
    redelivery: bool
    status_code: int
    event: str
    action: str | None = None
    repository_id: int | None = None

    @property
    def outcome(self) -> str:
        return outcome_of(self.status_code)

    @classmethod
    def from_github(cls, item: Mapping[str, Any]) -> Attempt | None:
        """The attempt of one list item; None for an item without id, guid or time."""
        try:
            ident = int(item["id"])
            guid = str(item["guid"])
            at = parse_time(str(item["delivered_at"]))
        except (KeyError, TypeError, ValueError):
            return None
        code = item.get("status_code")
        repo = item.get("repository_id")
        action = item.get("action")
        return cls(
            id=ident,
            guid=guid,
            at=float(int(at)),
            redelivery=bool(item.get("redelivery")),
            status_code=code if isinstance(code, int) and not isinstance(code, bool) else 0,
            event=str(item.get("event") or "")[:_NAME_MAX],
            action=action[:_NAME_MAX] if isinstance(action, str) else None,
            repository_id=repo if isinstance(repo, int) and not isinstance(repo, bool) else None,
        )

    def encode(self) -> list[Any]:
        return [self.id, self.guid, int(self.at), int(self.redelivery), self.status_code, self.event, self.action, self.repository_id]

    @classmethod
    def decode(cls, row: list[Any]) -> Attempt:
        ident, guid, at, redelivery, code, event, action, repo = row
        return cls(int(ident), str(guid), float(at), bool(redelivery), int(code), str(event), action, repo)


@dataclass(frozen=True)
class State:
    """What one run leaves the next: one item in the store, written once per run."""

    cursor: tuple[int, float] | None = None  # id and time of the newest delivery the every-outcome list returned
    remembered: tuple[Attempt, ...] = ()  # no-answer deliveries and passed redeliveries in the window
    horizon: tuple[int, float] | None = None  # memory trimmed: complete only for ids above this one
    followed: tuple[Attempt, ...] = ()  # every attempt of the failing events the sweep follows past the window
    alarm_due: bool = False  # a change of the alarm did not happen: apply it again and render
    ran_at: float | None = None
    health: Mapping[str, Any] = field(default_factory=dict)  # pager's own health (sweep.health), carried as is
    asked: tuple[tuple[str, float, int], ...] = ()  # (guid, when, the attempt asked for again) in the last ASK_MEMORY_SECONDS
    last_event: str | None = None  # the id of the scheduled event whose run saved the state (a duplicate steps aside)
    gap_reached: float | None = None  # the newest time an every-outcome list's reach gap ended (its `reached`)
    waiting: Mapping[str, Any] = field(default_factory=dict)  # what a failed service holds (sweep.recovery), carried as is
    own_outage_since: float | None = None  # pager's own endpoint failing every delivery since then (`own_outage`)
    probe: tuple[int, str] | None = None  # a passed delivery pager ignores: (id, guid) (`probe_delivery`)

    def to_data(self) -> dict[str, Any]:
        return {
            "v": STATE_VERSION,
            "ran_at": None if self.ran_at is None else int(self.ran_at),
            "cursor": None if self.cursor is None else [self.cursor[0], int(self.cursor[1])],
            "remembered": [a.encode() for a in sorted(self.remembered, key=lambda a: a.id)],
            "horizon": None if self.horizon is None else [self.horizon[0], int(self.horizon[1])],
            "followed": [a.encode() for a in sorted(self.followed, key=lambda a: a.id)],
            "alarm_due": self.alarm_due,
            **({"health": dict(self.health)} if self.health else {}),
            **({"asked": [[g, int(at), ident] for g, at, ident in self.asked]} if self.asked else {}),
            **({"last_event": self.last_event} if self.last_event else {}),
            **({"gap_reached": int(self.gap_reached)} if self.gap_reached is not None else {}),
            **({"waiting": dict(self.waiting)} if self.waiting else {}),
            **({"own_outage_since": int(self.own_outage_since)} if self.own_outage_since is not None else {}),
            **({"probe": list(self.probe)} if self.probe else {}),
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> State:
        """The state stored by a run; an empty state (a first run) for nothing or another version,
        keeping what waits (a handler notes it even before the first run)."""
        noted = data.get("waiting")
        waiting = noted if isinstance(noted, Mapping) else {}
        if not data or data.get("v") != STATE_VERSION:
            return cls(waiting=waiting)
        cursor = data.get("cursor")
        horizon = data.get("horizon")
        return cls(
            cursor=None if not cursor else (int(cursor[0]), float(cursor[1])),
            remembered=tuple(Attempt.decode(row) for row in data.get("remembered", ())),
            horizon=None if not horizon else (int(horizon[0]), float(horizon[1])),
            followed=tuple(Attempt.decode(row) for row in data.get("followed", ())),
            alarm_due=bool(data.get("alarm_due")),
            ran_at=data.get("ran_at"),
            health=data["health"] if isinstance(data.get("health"), Mapping) else {},
            asked=tuple((str(g), float(at), int(ident)) for g, at, ident in data.get("asked", ())),
            last_event=data.get("last_event"),
            gap_reached=None if data.get("gap_reached") is None else float(data["gap_reached"]),
            waiting=waiting,
            own_outage_since=None if data.get("own_outage_since") is None else float(data["own_outage_since"]),
            probe=None if not data.get("probe") else (int(data["probe"][0]), str(data["probe"][1])),
        )

    @property
    def followed_guids(self) -> frozenset[str]:
        return frozenset(a.guid for a in self.followed)

    @property
    def followed_reach(self) -> float | None:
        """The oldest of the newest known attempts of the followed events: the lists must reach back to it."""
        newest: dict[str, float] = {}
        for a in self.followed:
            newest[a.guid] = max(a.at, newest.get(a.guid, a.at))
        return min(newest.values(), default=None)

    def encoded_size(self) -> int:
        """Bytes of the stored JSON (the store's own encoding), to keep well under DynamoDB's 400 KB."""
        return len(json.dumps(self.to_data(), separators=(",", ":"), sort_keys=True).encode())


@dataclass(frozen=True)
class Limits:
    """Caps that keep the state item small; the defaults stay under ~300 KB even with the longest values."""

    remembered: int = 1100  # attempts
    followed: int = 600  # attempts of followed events (a few per event: about 200 events)
    asked: int = 400  # redeliveries remembered until GitHub lists them (the newest kept)


LIMITS = Limits()


@dataclass(frozen=True)
class Reading:
    """How far to read one list: at most `pages` pages, back to `stop_id` (the cursor) or `stop_at`."""

    list: str
    status: str | None
    pages: int
    stop_at: float  # the window's start
    stop_id: int | None = None  # the cursor's id
    wanted: float = 0.0  # how far back the list is meant to reach (for the reach gap)

    def reached(self, items: Iterable[Attempt]) -> bool:
        """True once a page holds a delivery at or past the point this list reads back to.

        Back to the cursor means a little past it (`CURSOR_OVERLAP_SECONDS`): a delivery that got no
        answer is known only after GitHub's 10 s wait, and should GitHub list it only then, its id
        would lie below a cursor that a faster, newer delivery moved on meanwhile (GitHub does not
        say; the overlap costs a few deliveries read twice, which the planner merges by id)."""
        return any(
            a.at < self.stop_at
            or (self.stop_id is not None and a.id <= self.stop_id and a.at < self.wanted - CURSOR_OVERLAP_SECONDS)
            for a in items
        )


@dataclass(frozen=True)
class ListRead:
    """What one list returned: its deliveries, the pages read, and whether the page cap cut it short."""

    items: tuple[Attempt, ...] = ()
    pages: int = 0
    cut_short: bool = False


@dataclass(frozen=True)
class ReachGap:
    list: str
    reached: float | None  # the oldest delivery time the list reached; None: it read nothing
    wanted: float  # how far back it wanted to reach
    pages: int

    def to_log(self) -> dict[str, Any]:
        return {
            "list": self.list,
            "reached": None if self.reached is None else format_time(self.reached),
            "wanted": format_time(self.wanted),
            "pages": self.pages,
        }


@dataclass(frozen=True)
class Redelivery:
    delivery_id: int  # the newest attempt's id; GitHub delivers the event again from any of them
    guid: str
    event: str
    attempts: int


@dataclass(frozen=True)
class Plan:
    redeliver: tuple[Redelivery, ...]
    opened: Mapping[str, dict[str, Any]]  # alarm entry key -> {"title", "url", "order", "delivery_id", "kind", "repository_id", ...}
    closed: tuple[str, ...]  # alarm entry keys
    state: State  # the state to save when the alarm change does not happen (alarm_due set if one was wanted)
    gaps: tuple[ReachGap, ...]
    no_room: bool = False
    forgotten: tuple[str, ...] = ()  # of those closed, the ones GitHub no longer keeps (none can deliver them now)
    own_recovered: bool = False  # pager's own outage ended in this run: what it held comes back, a run a minute
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def alarm_change(self) -> bool:
        """Whether the alarm is to change, or to be rendered again after a change that did not happen (a
        run without room for the every-outcome list leaves it as it is)."""
        return not self.no_room and bool(self.opened or self.closed or self.state.alarm_due)

    def applied(self) -> State:
        """The state to save once the alarm shows the change."""
        return replace(self.state, alarm_due=False)


def window_start(settings: Settings, now: float) -> float:
    return now - settings.sweep_window_minutes * 60


def failure_reading(settings: Settings, now: float, calls_used: int, state: State | None = None) -> Reading:
    """The failure list: `status=failure` back to the window's start, or further back to the newest
    known attempt of each event the state follows (a redelivery of it since then, failed or refused,
    is on this list), within the page cap and budget."""
    start = window_start(settings, now)
    reach = None if state is None else state.followed_reach
    if reach is not None:
        start = min(start, reach)
    pages = max(0, min(settings.sweep_failure_pages, settings.sweep_call_budget - calls_used))
    return Reading(list=FAILURES, status="failure", pages=pages, stop_at=start, wanted=start)


def all_reading(settings: Settings, state: State, now: float, calls_used: int) -> Reading:
    """The every-outcome list: back to the cursor (the window's start on a first run or when the cursor
    left the window); its pages leave the calls of the redeliveries and of one alarm change."""
    start = window_start(settings, now)
    room = settings.sweep_call_budget - calls_used - settings.sweep_max_redeliveries - ALARM_CALLS
    pages = max(0, min(settings.sweep_all_pages, room))
    if state.cursor is not None and state.cursor[1] >= start:
        return Reading(list=ALL, status=None, pages=pages, stop_at=start, stop_id=state.cursor[0], wanted=state.cursor[1])
    return Reading(list=ALL, status=None, pages=pages, stop_at=start, wanted=start)


def alarm_fits(settings: Settings, calls_used: int) -> bool:
    """Whether one change of the alarm fits in what the run's budget leaves."""
    return settings.sweep_call_budget - calls_used >= ALARM_CALLS


def _gap(reading: Reading, read: ListRead) -> ReachGap | None:
    if not read.cut_short:
        return None
    reached = min((a.at for a in read.items), default=None)
    return ReachGap(reading.list, reached, reading.wanted, read.pages)


def _in_window(point: tuple[int, float] | None, start: float) -> tuple[int, float] | None:
    return point if point is not None and point[1] >= start else None


def _prune(state: State, start: float) -> State:
    """The state without what left the window (the followed events stay: they are followed past it)."""
    return replace(state, remembered=tuple(a for a in state.remembered if a.at >= start), horizon=_in_window(state.horizon, start))


# -- (a) merge the attempts ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """One event (a `guid`) with the attempts of it that the run knows, oldest first."""

    guid: str
    attempts: tuple[Attempt, ...]

    @property
    def first(self) -> Attempt | None:
        """Its first delivery (`redelivery: false`); None when the run does not know it."""
        return next((a for a in self.attempts if not a.redelivery), None)

    @property
    def newest(self) -> Attempt:
        return self.attempts[-1]

    @property
    def oldest(self) -> Attempt:
        """Its first delivery, or, when the run does not know it, its oldest attempt it knows."""
        return self.first or self.attempts[0]

    @property
    def passed(self) -> bool:
        return any(a.outcome == PASSED for a in self.attempts)


def merge_attempts(*sources: Iterable[Attempt]) -> tuple[Event, ...]:
    """The events the run knows: the attempts of all sources (the state's, then the lists') merged by id,
    a later source's copy winning and a delivery read twice counted once, grouped by guid, oldest first."""
    known = {a.id: a for source in sources for a in source}
    by_guid: dict[str, list[Attempt]] = {}
    for attempt in sorted(known.values(), key=lambda a: a.id):
        by_guid.setdefault(attempt.guid, []).append(attempt)
    return tuple(Event(guid, tuple(attempts)) for guid, attempts in by_guid.items())


# -- (b) one verdict per event ----------------------------------------------------------------------------


def counted_from(failures: ListRead, horizon: tuple[int, float] | None) -> float:
    """The lowest first-delivery id whose attempts the run knows all of: not below the oldest failure read
    when the failure list was cut short, and above the state's horizon when its memory was trimmed."""
    oldest_failure = min((a.id for a in failures.items), default=float("inf")) if failures.cut_short else -1
    return max(oldest_failure, (-1 if horizon is None else horizon[0]) + 1)


class Reason(StrEnum):
    """Why an event gets what it gets, in the order they are decided."""

    PASSED = "passed"  # an attempt passed: nothing more
    UNSEEN = "unseen"  # its first delivery is not known, left the window or lies where the view is incomplete
    REFUSED = "refused"  # newest attempt 4xx: never again
    IGNORED = "ignored"  # no handler acts on it: never again
    CANDIDATE = "candidate"  # asked for again, as the room allows
    EXHAUSTED = "exhausted"  # used up its attempts: an entry
    LAST_CHANCE = "last chance"  # GitHub forgets it within hours, still failing: an entry, and asked for again
    FORGOTTEN = "forgotten"  # GitHub forgets it within minutes, still failing: an entry
    UNSURE = "unsure"  # followed, but a later attempt may lie beyond the failure pages read: kept, not asked for
    AWAITING = "awaiting"  # asked for moments ago and GitHub lists no newer attempt yet: kept, not asked for again
    RESTING = "resting"  # its redelivery failed moments ago: kept, asked for again REDELIVERY_SPACING_SECONDS later


@dataclass(frozen=True)
class Verdict:
    """What the run makes of one event, and why."""

    event: Event
    reason: Reason

    @property
    def counted(self) -> bool:
        """Whether the run's counts include it: `unseen` counts the failures the run cannot count, not a refusal."""
        return self.reason is not Reason.UNSEEN or self.event.newest.outcome != REFUSED


def judge(
    event: Event, *, start: float, counted_from: float, followed: frozenset[str], now: float, max_attempts: int,
    acts_on: ActsOn, failures_from: float = -1, asked: Mapping[str, int] | None = None, gap_after: float | None = None,
) -> Verdict:
    """The decision for one event (see "The decision per counted event"); `counted_from` is `counted_from()`'s,
    `followed` the guids the state follows past the window, `failures_from` the oldest failure the
    failure pages reached when they were cut short (-1: they reached as far as they meant to), and
    `gap_after` the newest end of a reach gap of the every-outcome list (None: there was none)."""
    first = event.first
    if event.passed:
        return Verdict(event, Reason.PASSED)
    if first is None and event.guid in followed:
        # Picked by ↻ from the failure list (pager.sweep.health.Job: a 424 is often not the first
        # attempt): its earlier attempts are not known, so none is counted on. Never asked for again by
        # the sweep; named in the alarm once it fails, where ↻ can deliver it again.
        if (asked or {}).get(event.guid, -1) >= event.newest.id:
            return Verdict(event, Reason.AWAITING)
        return Verdict(event, Reason.REFUSED if event.newest.outcome == REFUSED else Reason.EXHAUSTED)
    if first is None or (event.guid not in followed and (first.at < start or first.id < counted_from)):
        return Verdict(event, Reason.UNSEEN)
    if (asked or {}).get(event.guid, -1) >= event.newest.id:
        # A run asked for it (a refused one too: the ↻ of deliveries refused with 401) and GitHub lists
        # no newer attempt yet (it delivers within seconds, and lists the attempt once it has an
        # answer). Asking again would spend an attempt twice.
        return Verdict(event, Reason.AWAITING)
    if event.newest.outcome == REFUSED:
        return Verdict(event, Reason.REFUSED)
    if not acts_on(first.event, first.action):
        return Verdict(event, Reason.IGNORED)
    if len(event.attempts) >= max_attempts:
        return Verdict(event, Reason.EXHAUSTED)
    if first.at <= now - GITHUB_RETENTION + LAST_CHANCE_MARGIN:
        return Verdict(event, Reason.FORGOTTEN)
    if event.newest.redelivery and now - event.newest.at < REDELIVERY_SPACING_SECONDS:
        # The runs a minute apart after an outage would otherwise spend the attempts in minutes when a
        # service answers the probe but still fails the call itself (a chat's flood limit, say).
        return Verdict(event, Reason.RESTING)
    if event.guid in followed and event.newest.id < failures_from and (gap_after or 0) > event.newest.at:
        # A redelivery since its newest known attempt (a 4xx, a 5xx) may lie in a reach gap of the
        # every-outcome list and beyond the failure pages that were cut short: followed on, asked for
        # once a run sees past it.
        return Verdict(event, Reason.UNSURE)
    if first.at <= now - GITHUB_RETENTION + RETENTION_MARGIN:
        # Named, so that the maintainer sees it while ↻ can still deliver it; and asked for as a candidate
        # is, so that a service back in the event's last hours brings it back as itself.
        return Verdict(event, Reason.LAST_CHANCE)
    return Verdict(event, Reason.CANDIDATE)


_COUNTS = {  # the plan's counts of the verdicts, by reason
    Reason.CANDIDATE: "candidates",
    Reason.FORGOTTEN: "forgotten",
    Reason.LAST_CHANCE: "forgotten",  # (counted with the ones GitHub forgets soon)
    Reason.REFUSED: "refused",
    Reason.IGNORED: "ignored",
    Reason.EXHAUSTED: "exhausted",
    Reason.UNSEEN: "unseen",
    Reason.PASSED: "passed",
    Reason.UNSURE: "unsure",
    Reason.AWAITING: "awaiting",
    Reason.RESTING: "resting",
}


def tally(verdicts: Iterable[Verdict]) -> dict[str, int]:
    """How many events got each verdict (the run's summary logs them as its decisions)."""
    counts = dict.fromkeys(_COUNTS.values(), 0)
    for verdict in verdicts:
        if verdict.counted:
            counts[_COUNTS[verdict.reason]] += 1
    return counts


# -- (c) choose the redeliveries --------------------------------------------------------------------------


def choose_redeliveries(candidates: Iterable[Event], *, settings: Settings, calls_used: int) -> tuple[Redelivery, ...]:
    """The candidates asked for again, each by its newest attempt: oldest first by first delivery, at
    most `sweep_max_redeliveries` and within the calls the budget leaves."""
    room = max(0, min(settings.sweep_max_redeliveries, settings.sweep_call_budget - calls_used))
    oldest_first = sorted(candidates, key=lambda e: e.oldest.id)[:room]
    return tuple(Redelivery(e.newest.id, e.guid, e.oldest.event, len(e.attempts)) for e in oldest_first)


# -- (d) follow the failing events -----------------------------------------------------------------------


NAMED = frozenset({Reason.EXHAUSTED, Reason.FORGOTTEN, Reason.LAST_CHANCE})  # what the alarm names
ASKED = frozenset({Reason.CANDIDATE, Reason.LAST_CHANCE})  # asked for again, as the room allows
KEPT = ASKED | {Reason.UNSURE, Reason.AWAITING, Reason.RESTING}  # still failing, asked for later


def follow(verdicts: Iterable[Verdict], cap: int, entries: Mapping[str, float]) -> tuple[tuple[Event, ...], tuple[Event, ...]]:
    """The events the next runs must still count: those still failing and asked for again (or waiting
    for a run with room), and those to be named whose entry the alarm does not hold yet (the change may
    not fit this run). The newest are kept when their attempts pass `cap`; the oldest ones there was no
    room for are returned, for the alarm to name at once (nothing is dropped silently)."""
    pending = [v.event for v in verdicts
               if v.reason in KEPT or (v.reason in NAMED and v.event.guid not in entries)]
    waiting = sorted(pending, key=lambda e: e.oldest.id, reverse=True)
    kept: list[Event] = []
    size = 0
    for index, event in enumerate(waiting):
        if size + len(event.attempts) > cap:
            return tuple(kept), tuple(waiting[index:])
        kept.append(event)
        size += len(event.attempts)
    return tuple(kept), ()


# -- (e) reconcile the entries ----------------------------------------------------------------------------

OpenEntries = Mapping[str, float]  # guid -> when its entry's newest attempt was (the alarm's delivery entries)


def delivery_title(entry: Mapping[str, Any]) -> str:
    """A `delivery:` entry's line, in words: the thing its event was about (as the delivery's payload names
    it, once the run read it; else the kind of thing and where), what became of it, and GitHub's answers."""
    thing = entry.get("thing") or words.thing_of(str(entry.get("event") or ""), None, _where(entry)).label
    counted = f"{entry['attempts']} deliveries, " if entry.get("attempts") else ""
    return f"{thing}: {entry.get('reason')} ({counted}the last {entry.get('last')})"


def _where(entry: Mapping[str, Any]) -> str:
    if entry.get("repository"):
        return str(entry["repository"])
    return f"repository {entry['repository_id']}" if entry.get("repository_id") is not None else "no repository"


def _entry(event: Event, reason: str, url: str, attempts: bool = True) -> dict[str, Any]:
    """A `delivery:` entry: what it is about as fields (the event, the repository's id, the reason), its
    title made from them."""
    about, newest = event.oldest, event.newest
    entry = {"url": url, "order": format_time(newest.at), "delivery_id": newest.id, "guid": event.guid,
             "event": about.event or "event", "repository_id": about.repository_id, "reason": reason,
             "attempts": len(event.attempts) if attempts else None,
             "last": "without an answer in time" if newest.outcome == NO_ANSWER else f"answered {newest.status_code}"}
    return {"title": delivery_title(entry), **entry}


def reconcile_entries(
    entries: OpenEntries, verdicts: Iterable[Verdict], unfollowed: Iterable[Event], *, now: float, url: str
) -> tuple[dict[str, dict[str, Any]], tuple[str, ...], tuple[str, ...]]:
    """The alarm's change: an entry for each event that used up its attempts, that GitHub is about to
    forget, or that the state had no room to follow, unless open already; an open entry whose event
    failed again since (delivered again by ↻ or by hand) shows the new answer; an open entry closes when
    its event passed or left GitHub's three days. Each entry keeps its newest attempt's id, which ↻
    asks GitHub to deliver again. Returns the entries to open, to close, and of those closed, the ones
    GitHub no longer keeps (pager's own health counts them in the alarm: never closed silently)."""
    verdicts = list(verdicts)
    passed = {v.event.guid for v in verdicts if v.reason is Reason.PASSED}
    named = [(v.event, "all attempts failed" if v.event.first else "delivered again with ↻, failed again")
             for v in verdicts if v.reason is Reason.EXHAUSTED]
    named += [(v.event, "GitHub forgets it soon, still failing") for v in verdicts
              if v.reason in (Reason.FORGOTTEN, Reason.LAST_CHANCE)]
    named += [(e, "too many failed events to follow at once") for e in unfollowed if not any(e is n for n, _ in named)]
    opened = {
        ENTRY_PREFIX + event.guid: _entry(event, reason, url)
        for event, reason in sorted(named, key=lambda item: item[0].oldest.id)
        if event.guid not in entries
    }
    failed_again = sorted((v.event for v in verdicts if v.event.guid in entries and v.event.guid not in passed
                           and v.event.newest.at > entries[v.event.guid]), key=lambda e: e.newest.id)
    opened.update({ENTRY_PREFIX + e.guid: _entry(e, "delivered again, failed again", url, attempts=False)
                   for e in failed_again})
    forgotten = tuple(ENTRY_PREFIX + guid for guid, at in sorted(entries.items())
                      if guid not in passed and at < now - GITHUB_RETENTION)
    closed = tuple(ENTRY_PREFIX + guid for guid in sorted(entries) if guid in passed) + forgotten
    return opened, closed, forgotten


# -- (f) trim the state -----------------------------------------------------------------------------------


def _later(horizon: tuple[int, float] | None, point: tuple[int, float]) -> tuple[int, float]:
    return point if horizon is None or horizon[0] < point[0] else horizon


def _keep_newest(
    items: list[T], cap: int, point: Callable[[T], tuple[int, float]], horizon: tuple[int, float] | None
) -> tuple[list[T], tuple[int, float] | None]:
    """The newest `cap` of `items` (oldest first), and the horizon moved up to the newest one dropped:
    an event not newer than what was dropped is no longer counted."""
    if len(items) <= cap:
        return items, horizon
    return items[len(items) - cap :], _later(horizon, point(items[-cap - 1]))


def _needed_later(attempt: Attempt) -> bool:
    """No filter of GitHub's brings back a no answer or a passed redelivery once behind the cursor."""
    return attempt.outcome == NO_ANSWER or (attempt.outcome == PASSED and attempt.redelivery)


def _moved_cursor(cursor: tuple[int, float] | None, read: Iterable[Attempt]) -> tuple[int, float] | None:
    """The newest delivery the every-outcome list returned; never back."""
    newest = max(read, key=lambda a: a.id, default=None)
    if newest is None or (cursor is not None and newest.id <= cursor[0]):
        return cursor
    return (newest.id, newest.at)


def next_state(
    state: State,
    *,
    events: Iterable[Event],
    followed: Iterable[Event],
    read: Iterable[Attempt],
    start: float,
    now: float,
    alarm_due: bool,
    acts_on: ActsOn,
    limits: Limits,
    asked: Iterable[Redelivery] = (),
) -> State:
    """What the next runs need: the no answers and passed redeliveries of the window of events a handler
    acts on (within its cap: what the cap drops moves the horizon up), every attempt of the followed
    events, the cursor moved to the newest delivery `read`, and whether an alarm change is due."""
    remembered = sorted(
        (a for e in events for a in e.attempts if a.at >= start and _needed_later(a) and acts_on(a.event, a.action)),
        key=lambda a: a.id,
    )
    remembered, horizon = _keep_newest(remembered, limits.remembered, lambda a: (a.id, a.at), _in_window(state.horizon, start))
    return State(
        cursor=_moved_cursor(state.cursor, read),
        remembered=tuple(remembered),
        horizon=horizon,
        followed=tuple(sorted((a for e in followed for a in e.attempts), key=lambda a: a.id)),
        alarm_due=alarm_due,
        ran_at=now,
        health=state.health,
        asked=_kept_asks(state, asked, now, limits.asked),
        last_event=state.last_event,
        waiting=state.waiting,
        own_outage_since=state.own_outage_since,
        probe=state.probe,
    )


def _kept_asks(state: State, asked: Iterable[Redelivery], now: float, cap: int) -> tuple[tuple[str, float, int], ...]:
    """The asks the next runs must know: this run's, and the earlier ones of the last hour, the newest `cap`."""
    kept = {g: (g, at, ident) for g, at, ident in state.asked if 0 <= now - at < ASK_MEMORY_SECONDS}
    kept.update({r.guid: (r.guid, now, r.delivery_id) for r in asked})
    return tuple(sorted(sorted(kept.values(), key=lambda a: (a[1], a[2]))[-cap:]))


def _recent_asks(state: State, now: float) -> dict[str, int]:
    """guid -> the attempt a run asked GitHub to deliver again, in the last ASK_MEMORY_SECONDS."""
    return {guid: ident for guid, at, ident in state.asked if 0 <= now - at < ASK_MEMORY_SECONDS}


# -- pager's own outage -----------------------------------------------------------------------------------

OWN_OUTAGE_ASKS = 3  # redeliveries the sweep asked for that failed again, none passing: pager's own endpoint is down


def own_outage(events: Iterable[Event], read: Iterable[Attempt], state: State, now: float) -> bool | None:
    """Whether pager's own endpoint fails every delivery: at least OWN_OUTAGE_ASKS of the redeliveries the
    runs asked for (the state's asks) came back failed or without an answer, and none passed, and of the
    deliveries the every-outcome list returned past the cursor none passed or was refused (a delivery
    pager ignores passes whenever pager answers at all; a 4xx is pager answering). False once any of them
    passed; None when the run cannot tell (the state then says what it said). A Telegram or GitHub
    outage leaves the deliveries pager ignores passing: it is no own outage; its probe holds the events."""
    cursor = state.cursor
    new = [a for a in read if cursor is None or a.id > cursor[0]]
    if any(a.outcome in (PASSED, REFUSED) for a in new):
        return False
    asked = _recent_asks(state, now)
    answers = [a for e in events if e.guid in asked for a in e.attempts if a.redelivery and a.id > asked[e.guid]]
    if any(a.outcome == PASSED for a in answers):
        return False
    return True if sum(1 for a in answers if a.outcome in (FAILED, NO_ANSWER)) >= OWN_OUTAGE_ASKS else None


def probe_delivery(read: Iterable[Attempt], acts_on: ActsOn, known: tuple[int, str] | None) -> tuple[int, str] | None:
    """The delivery a run held by pager's own outage asks for again to learn whether pager answers: the
    newest that passed of an event pager ignores (delivered twice it changes nothing, and spends no
    failed event's attempt), as the every-outcome pages show one, else the one the state knows."""
    passed = [a for a in read if a.outcome == PASSED and not acts_on(a.event, a.action)]
    newest = max(passed, key=lambda a: a.id, default=None)
    return (newest.id, newest.guid) if newest is not None else known


# -- the run's plan ---------------------------------------------------------------------------------------


def plan_run(
    *,
    failures: ListRead,
    failure_reading: Reading,
    outcomes: ListRead | None,
    all_reading: Reading,
    state: State,
    entries: OpenEntries,
    settings: Settings,
    now: float,
    calls_used: int,
    limits: Limits = LIMITS,
    acts_on: ActsOn = lambda event, action: True,
    hold: bool = False,
) -> Plan:
    """The run's plan from what both lists returned (`outcomes` None: no room for a page of the
    every-outcome list), the remembered state, the `delivery:` entries open in the alarm (guid -> the
    time of their newest attempt), the settings, `now` and the calls used so far.

    `acts_on(event, action)` says whether the pager has a handler for an event: one it only answers
    "ignored" is never asked for again (its redelivery could change nothing) and never remembered, so
    that the redeliveries of a run and the state's room go to the events that page.

    `hold`: a service the handlers need is still failing (pager.sweep.recovery): ask for nothing, so
    that no attempt is spent while it would fail again; the candidates stay followed. So does pager's
    own outage (`own_outage`): while the new deliveries all fail, none passing, the run asks for nothing;
    the first run that sees one pass again ends it (`Plan.own_recovered`: the recovery check then runs
    the sweep each minute, catching up ten a minute)."""
    start = window_start(settings, now)
    gaps = tuple(g for g in (_gap(failure_reading, failures), None if outcomes is None else _gap(all_reading, outcomes)) if g)
    if outcomes is None:
        # Without the every-outcome pages the run cannot see an attempt that passed already: ask for
        # nothing, leave the alarm and the cursor as they are.
        return Plan(redeliver=(), opened={}, closed=(), state=replace(_prune(state, start), ran_at=now), gaps=gaps, no_room=True)

    events = merge_attempts(state.remembered, state.followed, failures.items, outcomes.items)
    own = own_outage(events, outcomes.items, state, now)
    own_since = (state.own_outage_since or now) if own or (own is None and state.own_outage_since) else None
    probe = probe_delivery(outcomes.items, acts_on, state.probe)
    counted = counted_from(failures, state.horizon)
    failures_from = min((a.id for a in failures.items), default=float("inf")) if failures.cut_short else -1
    gap_ends = [now if g.reached is None else g.reached for g in gaps if g.list == ALL]
    gap_after = max([*gap_ends, *([state.gap_reached] if state.gap_reached is not None else [])], default=None)
    verdicts = [
        judge(e, start=start, counted_from=counted, followed=state.followed_guids, now=now,
              max_attempts=settings.sweep_max_attempts, acts_on=acts_on, failures_from=failures_from,
              asked=_recent_asks(state, now), gap_after=gap_after)
        for e in events
    ]
    candidates = [v.event for v in verdicts if v.reason in ASKED]
    if hold:
        redeliver: tuple[Redelivery, ...] = ()
    elif own_since is not None:  # one redelivery, to learn whether pager answers again
        redeliver = ((Redelivery(probe[0], probe[1], "probe", 1),) if probe is not None
                     else choose_redeliveries(candidates, settings=replace(settings, sweep_max_redeliveries=1),
                                              calls_used=calls_used))
    else:
        redeliver = choose_redeliveries(candidates, settings=settings, calls_used=calls_used)
    held = hold or own_since is not None
    followed, unfollowed = follow(verdicts, limits.followed, entries)
    opened, closed, forgotten = reconcile_entries(entries, verdicts, unfollowed, now=now, url=settings.advanced_page)
    kept = next_state(
        state, events=events, followed=followed, read=outcomes.items, start=start, now=now,
        alarm_due=bool(opened or closed or state.alarm_due), acts_on=acts_on, limits=limits,
        asked=redeliver,
    )
    kept = replace(kept, gap_reached=gap_after, own_outage_since=own_since, probe=probe)
    memory_gap = () if kept.horizon is None else (ReachGap(MEMORY, kept.horizon[1], start, 0),)
    past_window = sum(1 for e in followed if e.oldest.at < start)
    return Plan(
        redeliver=redeliver,
        opened=opened,
        closed=closed,
        forgotten=forgotten,
        own_recovered=state.own_outage_since is not None and own_since is None,
        state=kept,
        gaps=gaps + memory_gap,
        counts={**tally(verdicts), "deferred": 0 if held else len(candidates) - len(redeliver),
                "held": len(candidates) - len([r for r in redeliver if r.event != "probe"]) if held else 0, "followed_past_window": past_window, "unfollowed": len(unfollowed)},
    )
