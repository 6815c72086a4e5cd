"""The sweep's pure core: what to read, what to ask GitHub for again, what the alarm shows, what to remember.

Nothing here does I/O or reads a clock: the shell (`run.py`) passes the pages it read, the remembered
state, the settings and `now`, and carries out the plan that comes back (the decision, amended).

What a run knows
----------------
GitHub's list of the app's deliveries is the one truth about the attempts; the pager only remembers
what the list cannot give it again cheaply. A run knows, by delivery id:

- the **failure list** (`status=failure`: status codes 400..599) read back to the window's start,
  at most `sweep_failure_pages` pages;
- the **every-outcome list** read back to the cursor (the newest delivery the run before read; the
  window's start on a first run), at most `sweep_all_pages` pages and only what the budget leaves after
  `sweep_max_redeliveries` redeliveries and one change of the alarm;
- the **state**: deliveries that got no answer (GitHub's failure filter leaves them out), redelivered
  attempts that passed, and per `event` + `repository_id` the newest event that passed; all only for
  the window (`sweep_window_minutes`).

Outcomes: 200..399 passed; 400..499 refused (the pager refused it and would again: never again);
500..599 failed; anything else, `0` "timed out" and also a 1xx that GitHub's two filters both leave
out, is **no answer**, treated like a failure and remembered because no filter brings it back.

An event counts only while its first delivery is known
-------------------------------------------------------
An event (a `guid`) is counted only when its first delivery (`redelivery: false`) is among what the run
knows, lies inside the window, and is newer than each point before which the run's view of failures
is incomplete: only then are all its attempts known. Why that holds for each kind of first delivery:

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
  - superseded: its kind is in `SUPERSEDED` and a newer event (a different guid whose first delivery
    is newer) of the same `event` and `repository_id` passed, any of its attempts, and was one the
    pager acts on: nothing, the newer one stands (an event it only answered "ignored", such as a
    run's `in_progress`, stands for nothing); an open entry for it closes for the same reason. Comments (`ALWAYS_AGAIN`) and kinds
    in neither set are never superseded.
  - fewer than `sweep_max_attempts` attempts: asked for again (the newest attempt's id), oldest
    first by first delivery, at most `sweep_max_redeliveries` and within the calls left.
  - otherwise: a `delivery:<guid>` entry of the control repository's alarm, linked to the app's
    Advanced page.

Entries
-------
The state keeps the entries the sweep wants open (`entries`, with what closing needs: the event's first
delivery id, kind and repository) and those the alarm is known to show (`shown`). The change to apply
is their difference, so a change that did not fit or failed in Telegram is simply applied by a later
run. An entry closes when a pass of its guid is seen (the maintainer's own redelivery from the Advanced
page included, even after the window), when a newer event of its kind and repository passed (it is
superseded as above), or after `GITHUB_RETENTION` (three days), when GitHub no longer lists the
event's deliveries and nothing can deliver it again. Otherwise it stays open past the window.

Calls
-----
Every GitHub and Telegram call of the run counts against `sweep_call_budget`. One change of the alarm
is reserved as `ALARM_CALLS` = 1 call, as SPEC §7 counts it (pages = budget left − redeliveries − 1):
an edit of the alarm's message, or a send when it opens. Two rarer paths take one request more and
are not reserved for: Telegram saying the message to edit is gone (the alarm then sends it anew), and
Telegram's single retry after a short 429; only they can take a run one call past its budget. The redeliveries come before the alarm and may use what the alarm would have had;
the alarm change then waits for the next run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping

from ..settings import Settings
from ..signals import SUPERSEDED
from ..values import iso as format_time
from ..values import parse_iso

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
STATE_VERSION = 1
ENTRY_PREFIX = "delivery:"
_NAME_MAX = 40  # event and action names are cut to this, to bound the state's size


def outcome_of(status_code: int) -> str:
    """How an attempt ended, from its status code (GitHub's filters: success 200..399, failure 400..599)."""
    if 200 <= status_code <= 399:
        return PASSED
    if 400 <= status_code <= 499:
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
    def from_github(cls, item: Mapping[str, Any]) -> "Attempt | None":
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
    def decode(cls, row: list[Any]) -> "Attempt":
        ident, guid, at, redelivery, code, event, action, repo = row
        return cls(int(ident), str(guid), float(at), bool(redelivery), int(code), str(event), action, repo)


@dataclass(frozen=True)
class Entry:
    """A `delivery:<guid>` entry the sweep wants open in the control repository's alarm."""

    title: str
    order: float  # the newest attempt's time
    first_id: int
    event: str
    repository_id: int | None

    def encode(self) -> list[Any]:
        return [self.title, int(self.order), self.first_id, self.event, self.repository_id]

    @classmethod
    def decode(cls, row: list[Any]) -> "Entry":
        title, order, first_id, event, repo = row
        return cls(str(title), float(order), int(first_id), str(event), repo)


def _kind_key(event: str, repository_id: int | None) -> str:
    return f"{event}/{'' if repository_id is None else repository_id}"


@dataclass(frozen=True)
class State:
    """What one run leaves the next: one item in the store, written once per run."""

    cursor: tuple[int, float] | None = None  # id and time of the newest delivery the every-outcome list returned
    remembered: tuple[Attempt, ...] = ()  # no-answer deliveries and passed redeliveries in the window
    horizon: tuple[int, float] | None = None  # memory trimmed: complete only for ids above this one
    passes: Mapping[str, tuple[int, float]] = field(default_factory=dict)  # event/repository -> newest passed event's first delivery (id, time)
    entries: Mapping[str, Entry] = field(default_factory=dict)  # guid -> entry wanted open
    shown: frozenset[str] = frozenset()  # guids whose entry the alarm shows
    ran_at: float | None = None

    def to_data(self) -> dict[str, Any]:
        return {
            "v": STATE_VERSION,
            "ran_at": None if self.ran_at is None else int(self.ran_at),
            "cursor": None if self.cursor is None else [self.cursor[0], int(self.cursor[1])],
            "remembered": [a.encode() for a in sorted(self.remembered, key=lambda a: a.id)],
            "horizon": None if self.horizon is None else [self.horizon[0], int(self.horizon[1])],
            "passes": {key: [first_id, int(at)] for key, (first_id, at) in sorted(self.passes.items())},
            "entries": {guid: entry.encode() for guid, entry in sorted(self.entries.items())},
            "shown": sorted(self.shown),
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> "State":
        """The state stored by a run; an empty state (a first run) for nothing or another version."""
        if not data or data.get("v") != STATE_VERSION:
            return cls()
        cursor = data.get("cursor")
        horizon = data.get("horizon")
        return cls(
            cursor=None if not cursor else (int(cursor[0]), float(cursor[1])),
            remembered=tuple(Attempt.decode(row) for row in data.get("remembered", ())),
            horizon=None if not horizon else (int(horizon[0]), float(horizon[1])),
            passes={key: (int(v[0]), float(v[1])) for key, v in (data.get("passes") or {}).items()},
            entries={guid: Entry.decode(row) for guid, row in (data.get("entries") or {}).items()},
            shown=frozenset(data.get("shown", ())),
            ran_at=data.get("ran_at"),
        )

    def encoded_size(self) -> int:
        """Bytes of the stored JSON (the store's own encoding), to keep well under DynamoDB's 400 KB."""
        return len(json.dumps(self.to_data(), separators=(",", ":"), sort_keys=True).encode())


@dataclass(frozen=True)
class Limits:
    """Caps that keep the state item small; the defaults stay under ~270 KB even with the longest values."""

    remembered: int = 1200
    passes: int = 500
    entries: int = 50


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
    opened: Mapping[str, dict[str, str]]  # alarm entry key -> {"title", "url", "order"}
    closed: tuple[str, ...]  # alarm entry keys
    state: State  # the state to save when the alarm change does not happen
    gaps: tuple[ReachGap, ...]
    no_room: bool = False
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def alarm_change(self) -> bool:
        return bool(self.opened or self.closed)

    def applied(self) -> State:
        """The state to save once the alarm shows the change."""
        return replace(self.state, shown=frozenset(self.state.entries))


def window_start(settings: Settings, now: float) -> float:
    return now - settings.sweep_window_minutes * 60


def failure_reading(settings: Settings, now: float, calls_used: int) -> Reading:
    """The failure list: `status=failure` back to the window's start, within the page cap and budget."""
    start = window_start(settings, now)
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


def _title(first: Attempt, newest: Attempt, attempts: int) -> str:
    kind = f"{first.event}.{first.action}" if first.action else first.event or "event"
    where = "no repository" if first.repository_id is None else f"repository {first.repository_id}"
    last = str(newest.status_code) if newest.outcome == FAILED else "no answer"
    return f"{kind} of {where}: {attempts} attempts failed (last: {last}), delivery {first.guid}"


def plan_run(
    *,
    failures: ListRead,
    failure_reading: Reading,
    outcomes: ListRead | None,
    all_reading: Reading,
    state: State,
    settings: Settings,
    now: float,
    calls_used: int,
    limits: Limits = LIMITS,
    acts_on: Callable[[str, str | None], bool] = lambda event, action: True,
) -> Plan:
    """The run's plan from what both lists returned (`outcomes` None: no room for a page of the
    every-outcome list), the remembered state, the settings, `now` and the calls used so far.

    `acts_on(event, action)` says whether the pager has a handler for an event: one it only answers
    "ignored" is never asked for again (its redelivery could change nothing) and never remembered, so
    that the redeliveries of a run and the state's room go to the events that page."""
    start = window_start(settings, now)
    gaps = [g for g in (_gap(failure_reading, failures), None if outcomes is None else _gap(all_reading, outcomes)) if g]

    if outcomes is None:
        # Without the every-outcome pages the run cannot see a newer pass that overtakes a failed event
        # or an attempt that passed already: ask for nothing, leave the alarm and the cursor as they are.
        kept = _prune(state, start)
        return Plan(
            redeliver=(),
            opened={},
            closed=(),
            state=replace(kept, ran_at=now),
            gaps=tuple(gaps),
            no_room=True,
            counts={},
        )

    known: dict[int, Attempt] = {a.id: a for a in state.remembered}
    for attempt in (*failures.items, *outcomes.items):
        known[attempt.id] = attempt
    by_guid: dict[str, list[Attempt]] = {}
    for attempt in sorted(known.values(), key=lambda a: a.id):
        by_guid.setdefault(attempt.guid, []).append(attempt)
    firsts = {guid: next((a for a in attempts if not a.redelivery), None) for guid, attempts in by_guid.items()}
    passed = {guid for guid, attempts in by_guid.items() if any(a.outcome == PASSED for a in attempts)}

    # The newest passed event per kind and repository, by its first delivery.
    passes = {key: value for key, value in state.passes.items() if value[1] >= start}
    for guid in passed:
        first = firsts[guid]
        # Only an event that a handler applied stands for newer state: one the pager answered
        # "ignored" (a run's in_progress, a label) overtakes nothing. Only kinds that can be overtaken
        # are kept, which also keeps the map small.
        if first is None or first.at < start or first.event not in SUPERSEDED or not acts_on(first.event, first.action):
            continue
        key = _kind_key(first.event, first.repository_id)
        if key not in passes or passes[key][0] < first.id:
            passes[key] = (first.id, first.at)

    def superseded(event: str, repository_id: int | None, first_id: int) -> bool:
        newest = passes.get(_kind_key(event, repository_id))
        return event in SUPERSEDED and newest is not None and newest[0] > first_id

    # The point before which the run's view of an event's attempts may be incomplete.
    count_from = -1
    if failures.cut_short:
        count_from = min((a.id for a in failures.items), default=float("inf"))  # type: ignore[assignment]
    memory_horizon = state.horizon[0] if state.horizon is not None else -1

    counts = {"candidates": 0, "superseded": 0, "refused": 0, "ignored": 0, "exhausted": 0, "unseen": 0, "passed": 0}
    candidates: list[tuple[Attempt, Attempt, int]] = []
    exhausted: list[tuple[Attempt, Attempt, int]] = []
    for guid, attempts in by_guid.items():
        newest = attempts[-1]
        if guid in passed:
            counts["passed"] += 1
            continue
        first = firsts[guid]
        if first is None or first.at < start or first.id < count_from or first.id <= memory_horizon:
            if newest.outcome in (FAILED, NO_ANSWER):
                counts["unseen"] += 1
            continue
        if newest.outcome == REFUSED:
            counts["refused"] += 1
            continue
        if not acts_on(first.event, first.action):
            counts["ignored"] += 1
            continue
        if superseded(first.event, first.repository_id, first.id):
            counts["superseded"] += 1
            continue
        if len(attempts) < settings.sweep_max_attempts:
            candidates.append((first, newest, len(attempts)))
        else:
            exhausted.append((first, newest, len(attempts)))
    counts["candidates"] = len(candidates)
    counts["exhausted"] = len(exhausted)

    candidates.sort(key=lambda c: c[0].id)
    room = max(0, min(settings.sweep_max_redeliveries, settings.sweep_call_budget - calls_used))
    redeliver = tuple(Redelivery(newest.id, first.guid, first.event, n) for first, newest, n in candidates[:room])
    counts["deferred"] = len(candidates) - len(redeliver)

    # Entries: close what passed, was overtaken or left GitHub's list; open what used up its attempts.
    entries = dict(state.entries)
    for guid, entry in list(entries.items()):
        if guid in passed or superseded(entry.event, entry.repository_id, entry.first_id) or entry.order < now - GITHUB_RETENTION:
            del entries[guid]
    counts["entries_full"] = 0
    for first, newest, n in sorted(exhausted, key=lambda c: c[0].id):
        if first.guid in entries:
            continue
        if len(entries) >= limits.entries:
            counts["entries_full"] += 1
            continue
        entries[first.guid] = Entry(_title(first, newest, n), newest.at, first.id, first.event, first.repository_id)

    opened = {
        ENTRY_PREFIX + guid: {"title": entry.title, "url": settings.advanced_page, "order": format_time(entry.order)}
        for guid, entry in sorted(entries.items())
        if guid not in state.shown
    }
    closed = tuple(ENTRY_PREFIX + guid for guid in sorted(state.shown - set(entries)))

    # What the next runs need: no answers and passed redeliveries of the window, the newest passes.
    remembered = [
        a for a in known.values()
        if a.at >= start and (a.outcome == NO_ANSWER or (a.outcome == PASSED and a.redelivery)) and acts_on(a.event, a.action)
    ]
    remembered.sort(key=lambda a: a.id)
    horizon = state.horizon if state.horizon is not None and state.horizon[1] >= start else None
    if len(remembered) > limits.remembered:
        dropped = remembered[: len(remembered) - limits.remembered]
        remembered = remembered[len(dropped) :]
        newest_dropped = dropped[-1]
        if horizon is None or horizon[0] < newest_dropped.id:
            horizon = (newest_dropped.id, newest_dropped.at)
    if len(passes) > limits.passes:
        # A dropped pass could overtake an older failed event that a later run would then ask for
        # again: events not newer than the newest dropped pass are no longer counted (like `remembered`).
        ordered = sorted(passes.items(), key=lambda kv: kv[1][0])
        dropped_pass = ordered[-limits.passes - 1][1]
        passes = dict(ordered[-limits.passes :])
        if horizon is None or horizon[0] < dropped_pass[0]:
            horizon = dropped_pass

    cursor = state.cursor
    newest_read = max(outcomes.items, key=lambda a: a.id, default=None)
    if newest_read is not None and (cursor is None or newest_read.id > cursor[0]):
        cursor = (newest_read.id, newest_read.at)

    new_state = State(
        cursor=cursor,
        remembered=tuple(remembered),
        horizon=horizon,
        passes=passes,
        entries=entries,
        shown=state.shown,
        ran_at=now,
    )
    if horizon is not None:
        gaps.append(ReachGap(MEMORY, horizon[1], start, 0))
    return Plan(
        redeliver=redeliver,
        opened=opened,
        closed=closed,
        state=new_state,
        gaps=tuple(gaps),
        counts=counts,
    )


def _prune(state: State, start: float) -> State:
    """The state without what left the window (entries stay: they close on their own terms)."""
    return replace(
        state,
        remembered=tuple(a for a in state.remembered if a.at >= start),
        horizon=state.horizon if state.horizon is not None and state.horizon[1] >= start else None,
        passes={key: value for key, value in state.passes.items() if value[1] >= start},
    )
