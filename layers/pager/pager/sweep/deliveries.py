"""The redelivery unit of the sweep: the decision (docs: the ADR, amended; SPEC §7), as data in, a plan out.

What it keeps (the `deliveries` item of the sweep's key, the head, committed once per run before it acts;
the followed rows in chunks of their own: pager.sweep.followed)
------------------------------------------------------------------------------------------------------
- the every-outcome list's `Scan` (pager.sweep.lists): read whole, each delivery once, a pass resumed by
  the next run when one run cannot read it all;
- the failure list's `Scan`, read once, back to GitHub's three days, for what failed before the first
  pass (`backfill`): what lies below `floor`, where the every-outcome list's view begins;
- the events it **follows**: each event pager acts on whose newest attempt failed (a 5xx, a 429 or no
  answer) and that neither passed nor was named yet, with what the decision needs of its attempts (how
  many count, the newest), and when it is (was) asked for again (`due`);
- the newest passed delivery it read (`probe`: what a hold asks for to learn whether pager answers), the
  holds of the last three days (an attempt made during one does not count, but during one of GitHub's
  redeliveries alone, whose attempts pager answered: `Hold.counts`), and whether the alarm's
  change is still due.

The decision per followed event (`judge`, in this order)
---------------------------------------------------------
passed: done, its `delivery:` entry closes · refused (newest attempt 4xx, not 429): never again · no
handler acts on it (pager answers it 200 "ignored"): never again · asked for and GitHub lists no newer
attempt yet (or the pass that would show it is under way): awaiting · its attempts used up
(SWEEP_MAX_ATTEMPTS, the first delivery included), or picked by ↻ from the failure list and failed:
an entry · GitHub forgets it within minutes: an entry · delivered again moments ago and failed: resting,
asked for again REDELIVERY_SPACING_SECONDS later · GitHub forgets it within hours: an entry, and asked
for (its last chance) · else a candidate.

Paced, not capped: the candidates are asked for oldest first, at most SWEEP_MAX_REDELIVERIES a minute
(and PAGES_PER_MINUTE of those whose handler sends a message: Telegram takes 20 a minute in a group),
each given the minute it is due within QUEUE_MINUTES (`pace`; the rest wait for a later plan). The run asks
for the first minute's; the every-minute check (pager.sweep.run.check) asks for each later minute's from the
head's `queue`, writing nothing: the next run learns from GitHub's list which were taken. A hold
(pager.sweep.recovery) asks for nothing but its probe.

No cap of pager's own: every event is followed until it passes, is refused or is named, however many (the
table holds them: pager.sweep.followed); one GitHub forgets is named, then counted by pager's own health;
deliveries GitHub forgot before any pass read them are said as a span (`gap`).
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, NamedTuple

from .. import words
from ..engine.effects import Redeliver
from ..engine.perform import REFUSED as REFUSED_BY_GITHUB
from ..engine.perform import TOOK, Done
from ..settings import Settings
from ..signals.alarm import DELIVERY_PREFIX as ENTRY_PREFIX
from ..signals.alarm import OWN_TITLE
from ..values import iso
from .acts import ChangeAlarm
from .lists import END, FAILED, GITHUB_RETENTION, NO_ANSWER, OVERLAP_SECONDS, PASSED, REFUSED, WINDOW, Attempt, Read, Scan

ITEM = "deliveries"
PASSED_PROBE = "probe"  # a Redeliver's `why`: the newest passed delivery asked for again to probe GitHub's redeliveries
VERSION = 4  # 4: the followed rows in chunks (3 kept them in the head, and is read still)
RETENTION_MARGIN = 2 * 3600  # an event this close to GitHub's three days is named, and still asked for (last chance)
LAST_CHANCE_MARGIN = 300  # ... until this close to them (GitHub's clock and ours may differ)
REDELIVERY_SPACING_SECONDS = 840  # a redelivery that failed is asked for again no sooner
ASK_WAIT_SECONDS = 600  # asked for, and GitHub lists no newer attempt after this long: not taken, asked for again
KEEP_AHEAD_SECONDS = 180  # a minute queued this close may be under way in a check: a new plan keeps it
PAGES_PER_MINUTE = 6  # redeliveries a minute of events whose handler sends a message (Telegram: 20 a minute in a group, 3 in 3 s)
QUEUE_MINUTES = 30  # how far ahead a plan gives candidates their minute (two runs'): the rest wait for a later plan
HOLDS_KEPT = 20

ActsOn = Callable[[str, str | None], bool]  # whether a handler acts on an event and action


# -- what is followed ------------------------------------------------------------------------------------


class Hold(NamedTuple):
    """A span when the sweep asked GitHub for nothing but probes: what held it failed (Telegram, GitHub's API or
    pager's own endpoint: an attempt GitHub made then does not count), or GitHub's redeliveries alone (`counts`:
    what GitHub delivered all the same reached a pager that answered, and counts)."""

    since: float
    until: float
    counts: bool = False

    @classmethod
    def from_data(cls, data: Any) -> Hold:
        return cls(float(data[0]), float(data[1]), bool(data[2]) if len(data) > 2 else False)


@dataclass(frozen=True)
class Followed:
    """An event the sweep follows: what the decision needs of its attempts."""

    guid: str
    first: int  # its first delivery's id; 0: not known (picked by ↻ from the failure list)
    at: float  # its first delivery's time (else the oldest attempt known)
    event: str
    action: str | None
    repository_id: int | None
    attempts: int  # the attempts that count toward SWEEP_MAX_ATTEMPTS
    newest: int  # its newest attempt: what a redelivery asks for
    newest_at: float
    code: int  # the newest attempt's status code (0: no answer)
    again: bool  # the newest attempt is a redelivery
    due: float = 0.0  # when it is (was) asked for again; 0: not queued
    above: int = 0  # the attempt asked for lies above this id (the newest delivery read when it was queued)
    refused: int = 0  # GitHub refused to deliver it again (its status): named, never asked for again
    low: int = 0  # while its first delivery is not known: the oldest attempt counted (0: the newest)

    @classmethod
    def begun(cls, attempt: Attempt, known_first: bool = True) -> Followed:
        return cls(attempt.guid, attempt.id if known_first else 0, attempt.at, attempt.event, attempt.action,
                   attempt.repository_id, 1, attempt.id, attempt.at, attempt.status_code, attempt.redelivery)

    def after(self, attempt: Attempt, counts: bool) -> Followed:
        """With one more attempt. An older one counts only while the first delivery is not known (a pass that
        spans runs reads an event's redelivery before its first delivery), and only once (a pass begun anew
        reads again what it read: below the oldest counted is new); else it was read already."""
        if attempt.id > self.newest:
            return replace(self, attempts=self.attempts + counts, newest=attempt.id, newest_at=attempt.at,
                           code=attempt.status_code, again=attempt.redelivery)
        if self.first or attempt.id >= (self.low or self.newest):
            return self
        older = replace(self, attempts=self.attempts + counts, low=attempt.id)
        return older if attempt.redelivery else replace(older, first=attempt.id, at=attempt.at)

    @property
    def outcome(self) -> str:
        return Attempt(self.newest, self.guid, self.newest_at, self.again, self.code, self.event).outcome

    @property
    def asked(self) -> bool:
        """Queued (for a minute that may not have come yet), and GitHub lists no attempt since."""
        return bool(self.due) and self.newest <= self.above

    def queued(self, due: float, above: int) -> Followed:
        return replace(self, due=due, above=above)


_COLUMNS = ("guid", "first", "at", "event", "action", "repository_id", "attempts", "newest", "newest_at", "code",
            "again", "due", "above", "refused", "low")


def pack(rows: Iterable[Followed]) -> str:
    """The rows as compact text: their columns as JSON, compressed (a busy hour follows thousands)."""
    rows = list(rows)
    columns = {name: [_plain(getattr(r, name)) for r in rows] for name in _COLUMNS}
    return base64.b64encode(zlib.compress(json.dumps(columns, separators=(",", ":")).encode(), 9)).decode()


def unpack(text: str) -> tuple[Followed, ...]:
    if not text:
        return ()
    columns = json.loads(zlib.decompress(base64.b64decode(text)))
    rows = len(columns["guid"])
    # (a column a state saved before it existed lacks, `low`: 0)
    typed = [_typed(name, columns.get(name, [0] * rows)) for name in _COLUMNS]
    if any(len(column) != rows for column in typed):
        raise ValueError("followed rows: columns of different lengths")
    return tuple(map(Followed, *typed))


def _plain(value: Any) -> Any:
    return int(value) if isinstance(value, float) or isinstance(value, bool) else value


def _typed(name: str, column: list[Any]) -> list[Any]:
    if name in ("at", "newest_at", "due"):
        return [float(value) for value in column]
    return [bool(value) for value in column] if name == "again" else column


# -- the state -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class State:
    """What a run leaves the next (the `deliveries` item)."""

    every: Scan = Scan()  # the every-outcome list
    failures: Scan = Scan()  # the failure list, read once back to GitHub's three days
    floor: int = 0  # the every-outcome list's view begins here (its first pass's oldest delivery)
    backfilled: bool = False  # the failure list was read below `floor`
    followed: tuple[Followed, ...] = ()
    probe: tuple[int, str, float] | None = None  # the newest passed delivery read: (id, guid, time)
    probed: tuple[tuple[str, float], ...] = ()  # passed deliveries GitHub took again as a hold's probe: (guid, when)
    holds: tuple[Hold, ...] = ()  # nothing was asked for then but probes
    alarm_due: bool = False
    closing: tuple[str, ...] = ()  # events passed whose `delivery:` entries are to close, until the alarm's change happens
    settled: tuple[str, ...] = ()  # events done, read before their first delivery in the pass under way (`follow`)
    ran_at: float | None = None
    last_event: str | None = None  # the scheduled event whose run saved it (a duplicate steps aside)

    def to_data(self) -> dict[str, Any]:
        """The head's data: all but the followed rows (kept in chunks: pager.sweep.followed), and the rows
        queued for the minutes to come (`queue`: what the check asks for)."""
        return {"v": VERSION, "every": self.every.to_data(), "failures": self.failures.to_data(), "floor": self.floor,
                "backfilled": self.backfilled, "queue": pack(r for r in self.followed if askable(r)), "count": len(self.followed),
                "probe": list(self.probe) if self.probe else None, "probed": [list(p) for p in self.probed], "holds": [list(h) for h in self.holds],
                "alarm_due": self.alarm_due, "closing": list(self.closing), "settled": list(self.settled), "ran_at": self.ran_at,
                "last_event": self.last_event}

    @classmethod
    def from_data(cls, data: Mapping[str, Any], followed: Iterable[Followed] = ()) -> State:
        """The state a run stored, with the rows its chunks hold (a state of version 3 kept them in the head);
        a first run's for nothing or another version."""
        if data.get("v") not in (3, VERSION):
            return cls()
        followed = (*followed, *unpack(str(data.get("followed") or "")))
        probe = data.get("probe")
        return cls(every=Scan.from_data(data.get("every")), failures=Scan.from_data(data.get("failures")),
                   floor=int(data.get("floor") or 0), backfilled=bool(data.get("backfilled")),
                   followed=tuple(followed),
                   probe=(int(probe[0]), str(probe[1]), float(probe[2])) if probe else None,
                   probed=tuple((str(g), float(at)) for g, at in data.get("probed") or ()),
                   holds=tuple(Hold.from_data(h) for h in data.get("holds") or ()),
                   alarm_due=bool(data.get("alarm_due")), closing=tuple(str(g) for g in data.get("closing") or ()),
                   settled=tuple(str(g) for g in data.get("settled") or ()),
                   ran_at=data.get("ran_at"), last_event=data.get("last_event"))

    @property
    def newest_read(self) -> int:
        return self.every.newest

    def encoded_size(self) -> int:
        return len(json.dumps(self.to_data(), separators=(",", ":"), sort_keys=True).encode())


# -- what a run knows besides its state ------------------------------------------------------------------


@dataclass(frozen=True)
class Known:
    """The rest of a plan's input: the pages read, the alarm's open `delivery:` entries (guid -> the time of
    the newest attempt each shows), and the holds that apply (`held`: the hold under way, since when; `released`:
    one that ended just now)."""

    every: Read | None = None  # None: GitHub did not serve the list, or the run had no room for it
    failures: Read | None = None
    entries: Mapping[str, float] = field(default_factory=dict)
    held: float | None = None
    released: tuple[float, float] | None = None
    counts: bool = False  # the hold under way (or just ended) is GitHub's redeliveries' alone: its attempts count


class Reason(StrEnum):
    PASSED = "passed"
    REFUSED = "refused"
    IGNORED = "ignored"
    AWAITING = "awaiting"
    UNSURE = "unsure"
    EXHAUSTED = "exhausted"
    FORGOTTEN = "forgotten"
    RESTING = "resting"
    LAST_CHANCE = "last chance"
    CANDIDATE = "candidate"


NAMED = frozenset({Reason.EXHAUSTED, Reason.FORGOTTEN, Reason.LAST_CHANCE})  # what the alarm names
ASKED = frozenset({Reason.CANDIDATE, Reason.LAST_CHANCE})  # asked for again, as the pace allows
KEPT = ASKED | {Reason.AWAITING, Reason.RESTING, Reason.UNSURE}  # still failing: followed on
PACED = ASKED | {Reason.RESTING}  # given a minute by the pace (a resting one, no sooner than its rest ends)


@dataclass(frozen=True)
class Context:
    """What `judge` weighs besides the event."""

    now: float
    max_attempts: int
    acts_on: ActsOn
    scanning: bool = False  # a pass of the every-outcome list is under way: an answer may lie where it has not read
    holds: tuple[Hold, ...] = ()

    def in_hold(self, at: float) -> bool:
        return _within(self.holds, at)


def _awaiting(row: Followed, c: Context) -> bool:
    if not row.asked or row.due > c.now // 60 * 60 or c.in_hold(row.due):  # a minute's asks are its check's
        return False
    return c.scanning or c.now - row.due < ASK_WAIT_SECONDS


RULES: tuple[tuple[Reason, Callable[[Followed, Context], bool]], ...] = (
    (Reason.AWAITING, _awaiting),  # its newest attempt is from before the ask: what it says is not the answer
    (Reason.PASSED, lambda r, c: r.outcome == PASSED),
    (Reason.REFUSED, lambda r, c: r.outcome == REFUSED),
    (Reason.IGNORED, lambda r, c: not c.acts_on(r.event, r.action)),
    # delivered again and failed, its first delivery not read yet: the pass under way may read it (and its
    # other attempts) further down
    (Reason.UNSURE, lambda r, c: not r.first and not r.refused and c.scanning),
    (Reason.EXHAUSTED, lambda r, c: not r.first or r.attempts >= c.max_attempts or bool(r.refused)),
    (Reason.FORGOTTEN, lambda r, c: r.at <= c.now - GITHUB_RETENTION + LAST_CHANCE_MARGIN),
    (Reason.RESTING, lambda r, c: r.again and not c.in_hold(r.newest_at) and c.now - r.newest_at < REDELIVERY_SPACING_SECONDS),
    (Reason.LAST_CHANCE, lambda r, c: r.at <= c.now - GITHUB_RETENTION + RETENTION_MARGIN),
)


def judge(row: Followed, c: Context) -> Reason:
    """The decision for one followed event (see the module's docstring)."""
    return next((reason for reason, applies in RULES if applies(row, c)), Reason.CANDIDATE)


# -- (a) what the pages add --------------------------------------------------------------------------------


def fresh_attempts(state: State, known: Known) -> list[Attempt]:
    """The attempts read this run, both lists, each once (the failure list's only below the floor)."""
    every = list(known.every.attempts) if known.every else []
    floor = state.floor or min((a.id for a in every), default=0)
    below = [a for a in (known.failures.attempts if known.failures else ()) if not floor or a.id < floor]
    return sorted({a.id: a for a in (*every, *below)}.values(), key=lambda a: a.id)


def follow(rows: Iterable[Followed], fresh: Iterable[Attempt], acts_on: ActsOn, counts: Callable[[Attempt], bool],
           settled: Iterable[str] = (), probes: frozenset[str] = frozenset()) -> tuple[dict[str, Followed], frozenset[str]]:
    """The followed events with this run's attempts (of events a handler acts on): a followed one gains
    them; another is followed from its first delivery when the run read it (and judged on all it read:
    one that passed or was refused is done); and an event done before, or older than the view, that someone
    delivered again by hand and failed is followed as one whose earlier attempts are not known (named, so
    that the maintainer sees it and may press ↻). `counts(attempt)`: whether it counts (not in a hold).
    `settled`: events whose redelivery passed or was refused, read before their first delivery in the pass
    under way (done: the first delivery, read later, follows nothing); returned with this run's."""
    followed = {r.guid: r for r in rows}
    done = set(settled)
    by_guid: dict[str, list[Attempt]] = {}
    for attempt in sorted(fresh, key=lambda a: a.id):
        by_guid.setdefault(attempt.guid, []).append(attempt)
    for guid, attempts in by_guid.items():
        row = followed.get(guid) or (None if guid in done else _begun(attempts, acts_on, probes))
        if row is None:
            done |= {guid} if attempts[-1].redelivery and attempts[-1].outcome in (PASSED, REFUSED) else set()
            continue
        for attempt in sorted(attempts, key=lambda a: a.id, reverse=not row.first):
            row = row.after(attempt, counts(attempt))
        followed[guid] = row
    return followed, frozenset(done)


def _begun(attempts: list[Attempt], acts_on: ActsOn, probes: frozenset[str]) -> Followed | None:
    """A new followed event from this run's attempts: from its first delivery; else, delivered again by hand
    (or ↻) and failed, during a hold too, as one whose earlier attempts are not known (not a hold's probe: a
    passed delivery asked for again only to learn whether GitHub takes redeliveries, the one probed now or,
    read later, one GitHub took before)."""
    first = next((a for a in attempts if not a.redelivery), None)
    if first is not None:
        return Followed.begun(first) if acts_on(first.event, first.action) else None
    newest = attempts[-1]
    failed = newest.outcome in (FAILED, NO_ANSWER) and newest.guid not in probes
    return Followed.begun(newest, known_first=False) if failed and acts_on(newest.event, newest.action) else None


def with_picks(state: State, picks: Iterable[Attempt], now: float) -> State:
    """The state following the deliveries ↻ picked from the failure list (refused with 401 or 424), from now
    on, like the sweep's own redeliveries: their earlier attempts are not known, so one that fails again is
    named."""
    rows = {r.guid: r for r in state.followed}
    for attempt in picks:
        rows[attempt.guid] = Followed.begun(attempt, known_first=False).queued(now // 60 * 60, state.newest_read)
    return replace(state, followed=tuple(rows.values()))


def with_probes(state: State, probes: Iterable[Done], now: float) -> State:
    """The state once the check (or the run) asked for deliveries to probe GitHub's redeliveries: a followed
    event GitHub took is asked for in this minute, as the decision's own (awaited, never asked again by the
    run that follows); one it refused is named; one it failed to take stays as it was. A passed delivery it
    took is remembered while GitHub keeps it: its attempt, read by a later run, is a probe's, not an event
    delivered again by hand."""
    probes = list(probes)
    took = {d.effect.guid: d.effect.why for d in probes if isinstance(d.effect, Redeliver) and d.fate == TOOK}
    state = fold(state, [d for d in probes if d.fate == REFUSED_BY_GITHUB])
    probed = {g: at for g, at in state.probed if at > now - GITHUB_RETENTION}
    probed.update({g: now for g, why in took.items() if why == PASSED_PROBE})
    return replace(state, probed=tuple(sorted(probed.items())),
                   followed=tuple(r.queued(now // 60 * 60, state.newest_read) if took.get(r.guid) not in (None, PASSED_PROBE)
                                  else r for r in state.followed))


# -- (b) the pace ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pace:
    """How fast candidates are asked for: `per_minute` in all, `pages_per_minute` of those whose handler sends
    a message (`pages(event, action)`)."""

    per_minute: int
    pages_per_minute: int = PAGES_PER_MINUTE
    pages: Callable[[str, str | None], bool] = lambda event, action: False


Slots = dict[int, list[int]]  # minute (from a plan's start) -> [asks, of them paging]


def pace(rows: Iterable[tuple[Followed, float]], p: Pace, *, start: float, above: int, taken: Slots | None = None) -> list[Followed]:
    """Each row with the minute it is asked for, oldest first (by first delivery), none before its own earliest
    time: minute 0 is `start`, each minute holds at most `per_minute`, and `pages_per_minute` of the ones that
    page; `taken`: what the minutes hold already (rows queued earlier, kept). A row whose minute lies past
    QUEUE_MINUTES is left unqueued: a later plan gives it its minute."""
    if p.per_minute <= 0:
        return [replace(row, due=0.0) for row, _ in rows]
    used: Slots = {m: list(v) for m, v in (taken or {}).items()}
    first_free = {False: 0, True: 0}  # the first minute with room, for rows that page and for the others
    queued = []
    for row, earliest in sorted(rows, key=lambda x: (x[0].at, x[0].first or x[0].newest)):
        pages = p.pages(row.event, row.action)
        minute = max(first_free[pages], math.ceil((earliest - start) / 60))
        while _full(used.get(minute), pages, p):
            minute += 1
        if earliest <= start:
            first_free[pages] = minute
        if minute >= QUEUE_MINUTES:  # a later plan gives it its minute
            queued.append(replace(row, due=0.0))
            continue
        slot = used.setdefault(minute, [0, 0])
        slot[0], slot[1] = slot[0] + 1, slot[1] + pages
        queued.append(row.queued(start + 60 * minute, above))
    return queued


def _full(slot: list[int] | None, pages: bool, p: Pace) -> bool:
    return slot is not None and (slot[0] >= p.per_minute or (pages and slot[1] >= p.pages_per_minute))


def slots_of(rows: Iterable[Followed], start: float, p: Pace) -> Slots:
    """The minutes rows queued earlier hold, counted from `start`."""
    used: Slots = {}
    for row in rows:
        slot = used.setdefault(max(0, round((row.due - start) / 60)), [0, 0])
        slot[0], slot[1] = slot[0] + 1, slot[1] + p.pages(row.event, row.action)
    return used


# -- (c) the entries -------------------------------------------------------------------------------------


AGAIN = "press ↻ Deliver again"  # what to do about a failed delivery: its button says so (pager.signals.alarm)


def delivery_title(entry: Mapping[str, Any]) -> str:
    """A `delivery:` entry's title, one plain sentence for the first line of ⚙️ pager: what pager missed, and
    that ↻ delivers it again; the thing named as short as the line needs, never by a repository's id."""
    missed = next((m for _, said, m in UNDONE if said == entry.get("undone")), "") if entry.get("undone") else ""
    head, tail = f"pager missed {missed} " if missed else "pager missed ", f" — {AGAIN}"
    return head + _short_thing(entry, OWN_TITLE - words.units(head + tail)) + tail


def _short_thing(entry: Mapping[str, Any], room: int) -> str:
    """The thing an entry is about in at most `room` characters: its name as GitHub's pages give it, without a
    title it carries ("alice's issue acme/lib#3"), without its author ("a comment on acme/lib#3"), its
    shortest name, or cut; a repository known by its id alone is not named (the detail says it)."""
    noun = words.event_noun(str(entry.get("event") or ""))
    some = f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"
    if not entry.get("repository"):
        return some
    label = str(entry.get("thing") or f"{some} in {entry['repository']}")  # not read yet: the kind of thing, and where
    named = label.split(": ")[0]
    anyone = named.split("'s ", 1)[-1]  # "issue acme/lib#3"; "comment on acme/lib#3", then with its article
    anyone = f"{'an' if anyone[:1] in 'aeiou' else 'a'} {anyone}" if " on " in anyone else anyone
    for name in (label, named, anyone, str(entry.get("short") or "")):
        if name and words.units(name) <= room:
            return name
    return words.fit(label, room)


def delivery_detail(entry: Mapping[str, Any]) -> str:
    """A `delivery:` entry's line below the first, in words: the thing its event was about (as the delivery's
    payload names it, once a run read it; else the kind of thing and where), what became of it, and GitHub's
    answers."""
    thing = entry.get("thing") or words.thing_of(str(entry.get("event") or ""), None, where(entry)).label
    n = entry.get("attempts")
    counted = f"{n} {'delivery' if n == 1 else 'deliveries'}, " if n else ""
    undone = f" {entry['undone']}" if entry.get("undone") else ""
    return f"{thing}{undone}: {entry.get('reason')} ({counted}the last {entry.get('last')})"


def renamed(entry: Mapping[str, Any], named: Mapping[str, Any]) -> dict[str, str]:
    """An entry's title and detail once a later run read what its event was about: the thing named anew (with
    what its delivery left undone), the rest of its detail as it was (the entry as stored keeps its lines, not
    the fields they were made from)."""
    detail = str(entry.get("detail") or entry.get("title") or "")  # an entry of a version before: its title
    before = entry.get("thing") or words.thing_of(str(entry.get("event") or ""), None, where(entry)).label
    undone = f" {named['undone']}" if named.get("undone") else ""
    if detail.startswith(before):
        detail = str(named["thing"]) + undone + detail[len(before):]
    return {"title": delivery_title({**entry, **named}), "detail": detail}


# What the webhook's last answer to a delivery (its 500 names the step that failed, and GitHub keeps the
# answer) says was left undone, where the step alone tells: a delivery's only dispatch is a contribution's
# draft, asked for after its message. (A Telegram step does not tell: an edit or a reply fails after the
# thing was shown.) Each: the step, what the detail says, what pager missed of the thing (the title).
UNDONE = (("github dispatch", "is shown, its draft was not asked for", "the draft of"),)


def undone_of(answer: Any) -> str:
    """What a delivery left undone, read from the webhook's answer as GitHub kept it (a JSON text, or none);
    "" when the answer does not say."""
    try:
        error = json.loads(answer).get("error") if isinstance(answer, str) else None
    except (ValueError, AttributeError):
        return ""
    return next((said for step, said, _ in UNDONE if isinstance(error, str) and error.startswith(step)), "")


def where(entry: Mapping[str, Any]) -> str:
    """Where an entry's event was, as its line says it: the repository's name, else its id."""
    if entry.get("repository"):
        return str(entry["repository"])
    return f"repository {entry['repository_id']}" if entry.get("repository_id") is not None else "no repository"


def entry_of(row: Followed, reason: str, url: str, attempts: bool = True) -> dict[str, Any]:
    """A `delivery:` entry: what it is about as fields (the event, the repository's id, the reason), its
    line made from them. It keeps the newest attempt's id, which ↻ asks GitHub to deliver again."""
    last = "without an answer in time" if row.outcome == NO_ANSWER else f"answered {row.code}"
    entry = {"url": url, "order": iso(row.newest_at), "delivery_id": row.newest, "guid": row.guid,
             "event": row.event or "event", "repository_id": row.repository_id, "reason": reason,
             "attempts": row.attempts if attempts else None, "last": last}
    return {"title": delivery_title(entry), "detail": delivery_detail(entry), **entry}


WHY = {Reason.EXHAUSTED: "all attempts failed", Reason.FORGOTTEN: "GitHub forgets it soon, still failing",
       Reason.LAST_CHANCE: "GitHub forgets it soon, still failing"}


def why_named(row: Followed, reason: Reason) -> str:
    if reason is Reason.EXHAUSTED and row.refused:
        return f"GitHub refused to deliver it again ({row.refused})"
    if reason is Reason.EXHAUSTED and not row.first:
        return "delivered again, failed again"
    return WHY[reason]


@dataclass(frozen=True)
class EntriesChange:
    opened: dict[str, dict[str, Any]]
    closed: tuple[str, ...]
    forgotten: tuple[str, ...]  # of those closed, the ones GitHub no longer keeps (pager's health counts them)


def change_entries(entries: Mapping[str, float], named: Iterable[tuple[Followed, str]], fresh: Iterable[Attempt],
                   *, now: float, url: str, closing: Iterable[str] = ()) -> EntriesChange:
    """The alarm's change: an entry for each event named that is not open yet; an open entry whose event
    failed again since (↻, or by hand) shows the new answer; one whose event passed closes (this run's
    passes, and those of runs whose change did not happen: `closing`), and so does one GitHub no longer
    keeps (counted by pager's own health: never closed silently)."""
    opened = {ENTRY_PREFIX + row.guid: entry_of(row, reason, url) for row, reason in named if row.guid not in entries}
    newest = _newest_of(entries, fresh)
    passed = {g for g, a in newest.items() if a.outcome == PASSED} | {g for g in closing if g in entries}
    for guid, a in sorted(newest.items()):
        if guid not in passed and a.at > entries[guid]:
            row = Followed.begun(a, known_first=False)
            opened[ENTRY_PREFIX + guid] = entry_of(row, "delivered again, failed again", url, attempts=False)
    forgotten = tuple(ENTRY_PREFIX + g for g, at in sorted(entries.items()) if g not in passed and at < now - GITHUB_RETENTION)
    return EntriesChange(opened, tuple(ENTRY_PREFIX + g for g in sorted(passed)) + forgotten, forgotten)


def _newest_of(entries: Mapping[str, float], fresh: Iterable[Attempt]) -> dict[str, Attempt]:
    """Of the events the alarm names, the newest attempt this run read."""
    newest: dict[str, Attempt] = {}
    for attempt in sorted(fresh, key=lambda a: a.id):
        if attempt.guid in entries:
            newest[attempt.guid] = attempt
    return newest


# -- the plan --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gap:
    """A reach gap: deliveries GitHub no longer lists that no pass read, between `since` (where the pass
    before began: how far the list was to be read back) and `until` (the oldest the list still holds)."""

    list: str
    since: float
    until: float

    def to_log(self) -> dict[str, Any]:
        """The "reach gap" log line's fields: which list, how far back it reached, how far it wanted."""
        return {"list": self.list, "reached": iso(self.until), "wanted": iso(self.since)}


@dataclass(frozen=True)
class Plan:
    state: State  # to commit before acting (the lease)
    ask: tuple[Redeliver, ...]  # this run's minute of redeliveries
    change: EntriesChange
    counts: Mapping[str, int]
    gaps: tuple[Gap, ...] = ()

    @property
    def effects(self) -> tuple[Redeliver | ChangeAlarm, ...]:
        change = self.change
        alarm = (ChangeAlarm(change.opened, change.closed),) if change.opened or change.closed or self.state.alarm_due else ()
        return (*self.ask, *alarm)


def plan(state: State, known: Known, settings: Settings, *, now: float, acts_on: ActsOn,
         pages: Callable[[str, str | None], bool], event_id: str | None = None, minute: bool = False) -> Plan:
    """The run's plan: the state with this run's pages, the minute of redeliveries to ask for now, and the
    alarm's change. `pages(event, action)`: whether its handler sends a message (paced for Telegram).
    `minute`: the run took its minute's asks with the sweep's lease (no check asked for them yet): it asks
    for what an earlier plan queued for this minute too."""
    holds = _holds(state, known, now)
    fresh = fresh_attempts(state, known)
    every = known.every.scan if known.every else state.every
    spent = tuple(h for h in holds if not h.counts)  # pager could not answer: an attempt then does not count
    rows, settled = follow(state.followed, fresh, acts_on, lambda a: not (a.redelivery and _within(spent, a.at)),
                           state.settled, _probes(state))
    context = Context(now, settings.sweep_max_attempts, acts_on, scanning=every.under_way, holds=holds)
    verdicts = [(row, judge(row, context)) for row in rows.values()]
    kept = _kept(verdicts, known.entries)
    queue = Queue(Pace(settings.sweep_max_redeliveries, pages=pages), now // 60 * 60, max(every.newest, state.newest_read),
                  held=known.held is not None, minute=minute)
    followed, asked = queue.of(kept)
    named = [(r, why_named(r, v)) for r, v in kept if v in NAMED]
    change = change_entries(known.entries, named, fresh, now=now, url=settings.advanced_page, closing=state.closing)
    new = replace(state, every=every, followed=followed, holds=holds, ran_at=now, last_event=event_id or state.last_event,
                  alarm_due=state.alarm_due or bool(change.opened or change.closed),
                  closing=tuple(k.removeprefix(ENTRY_PREFIX) for k in change.closed if k not in change.forgotten),
                  settled=tuple(sorted(settled)) if every.under_way else (),
                  probe=_probe(state.probe, fresh, now), **_backfill(state, known))
    ask = tuple(Redeliver(r.newest, r.guid, "redelivery") for r in asked)
    return Plan(new, ask, change, _tally(verdicts, queue.held), _gaps(state, known, now))


def _within(holds: Iterable[Hold], at: float) -> bool:
    return any(h.since < at <= h.until for h in holds)


@dataclass(frozen=True)
class Queue:
    """What a plan queues: the candidates, and those resting, paced from `now`, the minute the run is in (none
    while `held`); the minutes queued by a plan before that a check may be asking for while this run plans
    (KEEP_AHEAD_SECONDS) kept as they are; the others as `_unqueued` says. `above`: the newest delivery read
    (the answer to an ask lies above it). Minutes are the clock's whole minutes, as the checks count them."""

    pace: Pace
    now: float
    above: int
    held: bool
    minute: bool = False  # this minute's asks are the plan's (pager.sweep.lease): those queued before too

    def of(self, kept: list[tuple[Followed, Reason]]) -> tuple[tuple[Followed, ...], tuple[Followed, ...]]:
        """Every row kept, each with when it is asked for, and the rows asked for now."""
        paced = [(r, v) for r, v in kept if v in PACED] if not self.held else []
        near = self.near(r for r, _ in paced)
        this_minute = self.this_minute(r for r, _ in kept)  # a check's, maybe
        rows = [(r, self.earliest(r, v)) for r, v in paced if r.guid not in near]
        queued = {r.guid: r for r in pace(rows, self.pace, start=self.now, above=self.above,
                                          taken=slots_of([*near.values(), *this_minute], self.now, self.pace))}
        queued.update(near)
        every = tuple(queued.get(r.guid) or _unqueued(r, self.now, self.held) for r, _ in kept)
        return every, (*self.mine(this_minute), *(r for r in queued.values() if r.due == self.now))

    def this_minute(self, rows: Iterable[Followed]) -> list[Followed]:
        """The rows an earlier plan queued for the minute this plan is in."""
        return [r for r in rows if r.asked and self.now - 60 < r.due <= self.now]

    def mine(self, this_minute: list[Followed]) -> list[Followed]:
        """Of those, what this plan asks for: all still to ask, when the minute's asks are its own (the lease)."""
        return [r for r in this_minute if askable(r)] if self.minute and not self.held else []

    def earliest(self, row: Followed, reason: Reason) -> float:
        """A candidate is due from now; one resting, once its rest ends."""
        return self.now if reason in ASKED else row.newest_at + REDELIVERY_SPACING_SECONDS

    def near(self, rows: Iterable[Followed]) -> dict[str, Followed]:
        """The rows queued for a minute a check may be asking for while this run plans."""
        return {r.guid: r for r in rows if r.asked and self.now < r.due <= self.now + KEEP_AHEAD_SECONDS}


def unchanged(state: State, now: float, event_id: str | None = None) -> Plan:
    """A run that read no list: nothing asked for, nothing named; the state only says the run happened."""
    return Plan(replace(state, ran_at=now, last_event=event_id or state.last_event), (), EntriesChange({}, (), ()), {})


def _holds(state: State, known: Known, now: float) -> tuple[Hold, ...]:
    """The holds of GitHub's three days, each once (by its start, until its latest known end); the one under way
    or just ended counts its attempts when it is of GitHub's redeliveries alone (`known.counts`)."""
    holds = {h.since: h for h in state.holds}
    for since, end in (*([known.released] if known.released else []), *([(known.held, now)] if known.held is not None else [])):
        before = holds.get(since)
        holds[since] = Hold(since, max(end, before.until if before else end), known.counts)
    return tuple(sorted(h for h in holds.values() if h.until >= now - GITHUB_RETENTION))[-HOLDS_KEPT:]


def _unqueued(row: Followed, now: float, held: bool) -> Followed:
    """A followed event this plan does not pace: one already asked keeps when; one queued for a minute to come
    is not, while a hold lasts or once it is no longer to be asked for."""
    if row.asked and row.due <= now:
        return row
    return replace(row, due=0.0) if held or row.due > now else row


def _kept(verdicts: list[tuple[Followed, Reason]], entries: Mapping[str, float]) -> list[tuple[Followed, Reason]]:
    """What the state keeps, however many: the events still to be asked for or awaited, and the events to name
    whose entry the alarm does not show yet (its change may not happen in this run), oldest first."""
    kept = [(r, v) for r, v in verdicts if v in KEPT or (v in NAMED and r.guid not in entries)]
    return sorted(kept, key=lambda rv: (rv[0].at, rv[0].guid))


def _probes(state: State) -> frozenset[str]:
    """The passed deliveries a hold may have asked for again: the one it asks for now, those GitHub took."""
    return frozenset({g for g, _ in state.probed} | ({state.probe[1]} if state.probe else set()))


def _probe(known: tuple[int, str, float] | None, fresh: Iterable[Attempt], now: float) -> tuple[int, str, float] | None:
    """The newest passed delivery read (any: every signal is safe twice), while GitHub still keeps it."""
    passed = max((a for a in fresh if a.outcome == PASSED), key=lambda a: a.id, default=None)
    if passed is not None and (known is None or passed.id > known[0]):
        return (passed.id, passed.guid, passed.at)
    return known if known and known[2] > now - GITHUB_RETENTION + RETENTION_MARGIN else None


def _backfill(state: State, known: Known) -> dict[str, Any]:
    """Where the every-outcome list's view begins, and how far the failure list was read below it."""
    floor = state.floor
    if not floor and known.every and known.every.attempts:
        floor = min(a.id for a in known.every.attempts)
    failures = known.failures.scan if known.failures else state.failures
    done = state.backfilled or bool(known.failures and not known.failures.under_way and known.failures.pages)
    return {"floor": floor, "failures": failures, "backfilled": done}


def _gaps(state: State, known: Known, now: float) -> tuple[Gap, ...]:
    """A pass that found the list ending, or reached GitHub's three days, before it met the pass before: GitHub
    forgot what lay between (or lists it a little longer than three days, too late to be asked for). And a
    hold that ends now, begun (a delivery failed: the note of what waits) before what GitHub still keeps, with
    no pass having read the list past its start (GitHub itself was down): what failed first in it is gone."""
    read = known.every
    if read is None:
        return ()
    gap = None
    if read.ended in (END, WINDOW) and state.every.top and read.scan.low and read.scan.low_at > state.every.top_at + OVERLAP_SECONDS:
        gap = Gap("all", state.every.top_at, read.scan.low_at if read.ended == END else max(read.scan.low_at, now - GITHUB_RETENTION))
    kept_from = now - GITHUB_RETENTION
    if known.released is not None and known.released[0] < kept_from and state.every.top_at < known.released[0]:
        since = known.released[0] if gap is None else min(gap.since, known.released[0])
        gap = Gap("all", since, max(kept_from, gap.until if gap else kept_from))
    return (gap,) if gap else ()


def _tally(verdicts: list[tuple[Followed, Reason]], held: bool) -> dict[str, int]:
    """How many events got each verdict (the run's summary logs them as its decisions), and those a hold keeps
    from being asked for."""
    counts = {reason.value: 0 for reason in Reason}
    for _, reason in verdicts:
        counts[reason.value] += 1
    counts["held"] = sum(1 for _, r in verdicts if r in ASKED) if held else 0
    return counts


def fold(state: State, done: Iterable[Done]) -> State:
    """The state once the run's effects were performed: an alarm change made is no longer due; a redelivery
    GitHub did not take is no longer awaited (the next run asks for it again)."""
    done = list(done)
    untaken = {x.effect.guid: x for x in done if isinstance(x.effect, Redeliver) and x.fate != TOOK}
    applied = any(isinstance(x.effect, ChangeAlarm) and x.fate == TOOK for x in done)
    if untaken:
        state = replace(state, followed=tuple(_untaken(r, untaken[r.guid]) if r.guid in untaken else r for r in state.followed))
    return replace(state, alarm_due=False, closing=()) if applied else state


def _untaken(row: Followed, done: Done) -> Followed:
    """A row whose redelivery GitHub did not take: asked for again by a later run; refused, named."""
    return replace(row, due=0.0, refused=done.status if done.fate == REFUSED_BY_GITHUB else 0)


def askable(row: Followed) -> bool:
    """Queued for a minute, and still what was queued: GitHub lists no attempt since, and it failed."""
    return bool(row.due) and row.newest <= row.above and row.outcome in (FAILED, NO_ANSWER)


def queue_of(head: Mapping[str, Any]) -> tuple[Followed, ...]:
    """The rows a head queued for the minutes to come (what the check reads, without the chunks)."""
    if head.get("v") == VERSION:
        return unpack(str(head.get("queue") or ""))
    return tuple(r for r in State.from_data(head).followed if askable(r))


def due_now(queue: Iterable[Followed], since: float, until: float) -> tuple[Redeliver, ...]:
    """The every-minute check's redeliveries: the followed events queued for a minute in (since, until]."""
    return tuple(Redeliver(r.newest, r.guid, "redelivery") for r in sorted(queue, key=lambda r: (r.due, r.at))
                 if askable(r) and since < r.due <= until)
