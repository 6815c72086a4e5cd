"""pager's own health, the sweep's second unit: what keeps signals from reaching the maintainer, shown in ⚙️
pager, pager's own message, beside the failed deliveries, decided once per run (`plan`) from what the run read.

Entries (items of ⚙️ pager, like the `delivery:` ones):

    pager:list      GitHub did not serve the deliveries list for `UNSERVED_RUNS` runs in a row and
                    `UNSERVED_SECONDS` (two scheduled runs): the runs read nothing, so nothing failed
                    can come back. Says what GitHub's answer means (401: the app's id or private key
                    is not accepted). Closes at the first run GitHub serves the list again.
    pager:secret    deliveries pager refused with 401 (the signature does not match: the webhook secret
                    differs from the app's). Each is a real delivery that a 4xx keeps from ever coming
                    again. Once a delivery passes after the newest 401 (the secret was fixed), the entry
                    offers ↻, which delivers the refused ones of the last three days again (`Job`, over
                    as many runs as it takes); it closes when that is done, or three days after the last.
    pager:forgotten events that failed and that GitHub no longer keeps (three days) before they could be
                    delivered: their `delivery:` entries close, and this entry counts them by kind and
                    repository, with when; and deliveries GitHub forgot before any pass read them, as a
                    span (never closed silently). It closes three days after the last.
    pager:answered  deliveries answered a 4xx that is not pager's refusal (a URL that is not the stack's, API
                    Gateway's 413): how many, since when, the last status. GitHub never sends a 4xx again and
                    the sweep never asks for one, so each is lost unless someone delivers it again; it closes
                    three days after the last (GitHub no longer keeps them).
    pager:chat      Telegram made the configured group a supergroup (pager.chat): pager writes there, and
                    says so until TELEGRAM_CHAT_ID names the new chat.
    pager:held      a hold (pager.sweep.recovery) has lasted HELD_SAID_SECONDS: what fails, since when, and
                    that what failed meanwhile comes back once it answers. Closes when the hold ends.
    pager:refused   signals GitHub or Telegram refused in a handler (a message refused, a bot removed from
                    the chat, a dispatch refused for a permission the app lacks): the webhook answered
                    them 424 and wrote an item each (pager.refusals); the entry counts them and names the
                    last reason. GitHub keeps the deliveries among its failures for three days. While the
                    entry is open, each run asks the services that refused whether they would take such a
                    call now (pager.sweep.run gathers it); once they would, the entry offers ↻, which
                    delivers the refused ones again (`Job`), and their pages reach the chat.

Each entry says it twice (`_entry`): its title, one plain sentence of what happened and what to do, which heads
⚙️ pager when it is the most important (SPEC §6.1: "GitHub refuses pager's token since Tue 08:15 — run make
doctor"), and its detail, the line below, with GitHub's answer, the setting to check and the make target.

Three records, each with its own fold: `Unserved`, `Refused` (the 401s and the 424s alike), `Forgotten`.
Everything here is pure; the run gathers, performs and saves (the `health` item of the sweep's key).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, tzinfo
from typing import Any

from .. import refusals as refused_items
from .. import words
from ..engine.effects import Redeliver
from ..signals.alarm import OWN_BUTTONS, OWN_PREFIX, OWN_TITLE
from ..values import iso, parse_iso
from .lists import GITHUB_RETENTION, PASSED, Attempt

ITEM = "health"
JOB_ITEM = "refused-again"  # the ↻ job of refused deliveries (its own item: a press writes it)

LIST = OWN_PREFIX + "list"
SECRET = OWN_PREFIX + "secret"
REFUSED = OWN_PREFIX + "refused"
CHAT = OWN_PREFIX + "chat"
HELD = OWN_PREFIX + "held"
ANSWERED = OWN_PREFIX + "answered"
HELD_SAID_SECONDS = 1800  # a hold this long is said in the alarm (a short one the maintainer never needs to know)
HOLDERS = {"pager": "pager's own endpoint has failed every delivery", "github": "GitHub has failed pager's calls",
           "redelivery": "GitHub has failed to deliver events again", "telegram": "Telegram has failed pager's calls"}
FORGOTTEN = OWN_PREFIX + "forgotten"
FORGOTTEN_KINDS = 8  # kinds and repositories the forgotten entry names (the most frequent)

UNSERVED_RUNS = 2  # runs in a row without the deliveries list before the alarm says so
UNSERVED_SECONDS = 840  # ... and this long: the recovery check's runs come more often than the schedule's
REFUSALS_FIRST_READ_SECONDS = 24 * 3600  # a first run reads the refusals of the last day
REFUSALS_OVERLAP_SECONDS = 60  # refusals are read again this far back (a write seen late), counted once
SECRET_REFUSED = 401
PAGE_REFUSED = refused_items.ANSWER  # the webhook's answer to a signal GitHub or Telegram refused
REFUSAL_LEAD_SECONDS = 120  # how far before the first refusal written the job looks (GitHub's 10 s, clocks apart)


# -- the records ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unserved:
    """GitHub not serving the deliveries list: runs in a row, since when, and what its answer means."""

    runs: int = 0
    since: float | None = None
    cause: str = ""  # a key of MEANING


@dataclass(frozen=True)
class Refused:
    """Deliveries refused for good by pager (401) or signals refused upstream (424), since the entry opened."""

    count: int = 0
    first: float | None = None
    last: float | None = None
    last_id: int = 0  # the newest refused attempt counted (401s: read from GitHub's list)
    works: bool = False  # they would be taken now
    reason: str = ""  # the last refusal in words (424s)
    services: tuple[str, ...] = ()  # the services that refused (424s)
    repository: str = ""  # the repository of the last GitHub refusal (what the run asks about)

    def counted(self, at: Iterable[float], *, last_id: int = 0, **more: Any) -> Refused:
        """With more of them (their times), no longer taken."""
        times = list(at)
        return replace(self, count=self.count + len(times), first=self.first if self.count else min(times),
                       last=max([*times, self.last or 0]), last_id=max(last_id, self.last_id), works=False, **more)

    def over(self, job: Job | None, status: int, now: float) -> bool:
        """Done with: delivered again by a ↻ that began after the last, or the last left GitHub's three days."""
        if not self.count:
            return False
        delivered = job is not None and job.status == status and job.finished and job.asked_at >= (self.last or 0)
        return delivered or (self.last or 0) < now - GITHUB_RETENTION


@dataclass(frozen=True)
class Forgotten:
    """What GitHub no longer keeps and never came back: events by the thing each was about, and spans of
    deliveries no pass read."""

    count: int = 0
    first: float | None = None
    last: float | None = None
    noted: float | None = None  # when the last of them was counted
    by: Mapping[str, int] = field(default_factory=dict)
    unread: tuple[float, float] | None = None  # deliveries GitHub forgot before any pass read them


@dataclass(frozen=True)
class Health:
    """What the `health` item keeps between runs."""

    unserved: Unserved = Unserved()
    secret: Refused = Refused()
    stray: Refused = Refused()  # deliveries answered a 4xx that is not pager's refusal (`_stray`)
    refusals: Refused = Refused()
    forgotten: Forgotten = Forgotten()
    refusals_seen: tuple[str, ...] = ()  # the refusal items counted that the next run reads again (the overlap)

    def to_data(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_data(cls, data: Any) -> Health:
        if not isinstance(data, Mapping):
            return cls()
        try:
            return cls(unserved=Unserved(**data.get("unserved", {})), secret=_refused(data.get("secret")),
                       stray=_refused(data.get("stray")),
                       refusals=_refused(data.get("refusals")), forgotten=_forgotten(data.get("forgotten")),
                       refusals_seen=tuple(data.get("refusals_seen") or ()))
        except TypeError:  # another shape (an older version): start afresh
            return cls()


def _refused(data: Any) -> Refused:
    data = dict(data or {})
    data["services"] = tuple(data.get("services") or ())
    return Refused(**data)


def _forgotten(data: Any) -> Forgotten:
    data = dict(data or {})
    unread = data.get("unread")
    data["unread"] = (float(unread[0]), float(unread[1])) if unread else None
    return Forgotten(**data)


@dataclass(frozen=True)
class Job:
    """↻ on the secret entry or the refused entry: deliver again the deliveries answered `status` (401: the
    signature did not match; 424: a signal GitHub or Telegram refused) since `since`, walking the failure
    list from the newest page to the oldest, a few per run. `url` is the page to read (None: the first),
    `below` the id under which deliveries are still to look at, `recent` the guids asked for on the way
    (an event refused twice is asked for once). One job at a time."""

    since: float
    asked_at: float
    url: str | None = None
    below: int | None = None
    done: int = 0
    finished: bool = False
    recent: tuple[str, ...] = ()
    status: int = SECRET_REFUSED

    def to_data(self) -> dict[str, Any]:
        return {**asdict(self), "recent": list(self.recent)}

    @classmethod
    def from_data(cls, data: Any) -> Job | None:
        if not isinstance(data, Mapping) or "since" not in data:
            return None
        return cls(float(data["since"]), float(data.get("asked_at", data["since"])), data.get("url"), data.get("below"),
                   int(data.get("done", 0)), bool(data.get("finished")), tuple(data.get("recent", ())),
                   int(data.get("status", SECRET_REFUSED)))

    @property
    def under_way(self) -> bool:
        return not self.finished

    def works(self, health: Health) -> bool:
        """Whether what the job delivers again would be taken now."""
        return health.secret.works if self.status == SECRET_REFUSED else health.refusals.works


RECENT_GUIDS = 300


def advance(job: Job, items: Iterable[Attempt], next_url: str | None, room: int,
            asked: frozenset[str] = frozenset()) -> tuple[tuple[Attempt, ...], Job]:
    """One page of the failure list read at `job.url`: the refused ones to deliver again (at most `room`,
    newest first as the list goes; none another run asked for already, `asked`) and the job moved past what
    it looked at."""
    picked: list[Attempt] = []
    recent = list(job.recent)
    below = job.below
    for attempt in sorted(items, key=lambda a: a.id, reverse=True):
        if below is not None and attempt.id >= below:
            continue
        if attempt.at < job.since:
            return tuple(picked), replace(job, below=attempt.id, done=job.done + len(picked), finished=True, recent=())
        if attempt.status_code == job.status and attempt.guid not in recent and attempt.guid not in asked:
            if len(picked) == room:
                return tuple(picked), replace(job, below=below, done=job.done + len(picked), recent=tuple(recent[-RECENT_GUIDS:]))
            picked.append(attempt)
            recent.append(attempt.guid)
        below = attempt.id
    done = job.done + len(picked)
    if next_url is None:
        return tuple(picked), replace(job, below=below, done=done, finished=True, recent=())
    return tuple(picked), replace(job, url=next_url, below=below, done=done, recent=tuple(recent[-RECENT_GUIDS:]))


def start_job(job: Job | None, now: float, health: Health, status: int = SECRET_REFUSED,
              zone: tzinfo = UTC) -> tuple[str, Job | None]:
    """The ↻ press on the secret entry (status 401) or the refused entry (424): the answer, and the job to
    store (None: nothing to store)."""
    if job is not None and job.under_way:
        if job.status != status:
            return "↻ other refused deliveries are being delivered again: press again once they are", None
        return f"↻ already delivering them again: {job.done} so far", None
    if status == SECRET_REFUSED:
        record, first = health.secret, health.secret.first  # GitHub's own times
        what, not_yet = "refused deliveries", "⚠️ pager still refuses GitHub's deliveries: fix the webhook secret first (make doctor)"
    else:
        record = health.refusals
        # The handler's clock, after it ran; GitHub stamps a delivery when it sends it, to the second.
        first = None if record.first is None else record.first - REFUSAL_LEAD_SECONDS
        what, not_yet = "refused pages", "⚠️ GitHub or Telegram would still refuse them: fix the cause first (make doctor)"
    if not record.count:
        return f"no {what} to deliver again", None
    if not record.works:
        return not_yet, None
    # Not again what an earlier ↻ delivered again: only what was refused since it began.
    earlier = job.asked_at if job is not None and job.status == status else 0.0
    since = max(now - GITHUB_RETENTION, first or now, earlier)
    return f"↻ the {what} since {words.local_time(since, zone, now)} are delivered again over the next minutes", \
        Job(since, now, status=status)


# -- what a run learns ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Held:
    """A hold after a run (pager.sweep.recovery): what fails, since when, and until when its service asked pager
    to wait (a rate limit's retry-after; 0: it named none)."""

    services: tuple[str, ...]
    since: float
    named_until: float = 0.0


@dataclass(frozen=True)
class Seen:
    """What a run read that pager's health weighs."""

    served: bool | None  # GitHub served the deliveries list (None: the run could not ask it, and learns nothing)
    cause: str = ""  # when not: what GitHub's answer means (a key of MEANING)
    attempts: tuple[Attempt, ...] = ()  # the attempts read (each once)
    refusals: tuple[tuple[str, Mapping[str, Any]], ...] = ()  # refusal items written since the last run (name, data)
    refusers_answer: bool = False  # the services that refused signals would take such calls now
    forgotten: tuple[Mapping[str, Any], ...] = ()  # `delivery:` entries closing because GitHub no longer keeps them
    unread: tuple[float, float] | None = None  # deliveries GitHub forgot before a pass read them
    held: Held | None = None  # the hold after the run


def learn(health: Health, seen: Seen, job: Job | None, now: float) -> Health:
    """The health after a run: each record folded with what the run saw. The refusals (read from the table)
    are folded whether or not GitHub served the list: the next run reads on after this one."""
    if seen.served is False:
        unserved = health.unserved
        health = replace(health, unserved=Unserved(unserved.runs + 1, unserved.since or now, seen.cause))
    elif seen.served:
        health = replace(health, unserved=Unserved())
    if seen.served is not None:  # what the run read (all of the list, or a part before GitHub stopped serving it)
        health = replace(health, forgotten=_forget(health.forgotten, seen, now),
                         secret=_secret(health.secret, seen.attempts, job, now), stray=_stray(health.stray, seen.attempts, now))
    return _refusals(health, seen, job, now)


NOT_PAGERS = frozenset(range(400, 500)) - {SECRET_REFUSED, PAGE_REFUSED, 429}  # 4xx pager never answers on purpose


def _stray(record: Refused, attempts: tuple[Attempt, ...], now: float) -> Refused:
    """The deliveries answered a 4xx that is not pager's refusal (a 404 or 403 of a URL that is not the
    stack's /github, API Gateway's 413 for a body too large; pager's own 400, a body it cannot read): each
    counted once, by id; GitHub sends none of them again, and the sweep never asks for a 4xx."""
    if record.count and (record.last or 0) < now - GITHUB_RETENTION:
        record = Refused(last_id=record.last_id)
    new = sorted((a for a in attempts if a.status_code in NOT_PAGERS and a.id > record.last_id), key=lambda a: a.id)
    if not new:
        return record
    return record.counted([a.at for a in new], last_id=new[-1].id, reason=f"answered {new[-1].status_code}")


def _secret(record: Refused, attempts: tuple[Attempt, ...], job: Job | None, now: float) -> Refused:
    """The deliveries refused with 401 (each counted once, by id), and whether one passed after the newest."""
    if record.over(job, SECRET_REFUSED, now):
        record = Refused(last_id=record.last_id)
    new = sorted((a for a in attempts if a.status_code == SECRET_REFUSED and a.id > record.last_id), key=lambda a: a.id)
    if new:
        record = record.counted([a.at for a in new], last_id=new[-1].id)
    if record.count and any(a.outcome == PASSED and a.id > record.last_id for a in attempts):
        record = replace(record, works=True)
    return record


def _refusals(health: Health, seen: Seen, job: Job | None, now: float) -> Health:
    """The signals refused upstream: each refusal item counted once (those read again in the overlap are
    known by name), and whether the services that refused would take such calls now."""
    record = Refused() if health.refusals.over(job, PAGE_REFUSED, now) else health.refusals
    if record.count and seen.refusers_answer:
        record = replace(record, works=True)
    new = [(name, data) for name, data in sorted(seen.refusals) if name not in health.refusals_seen]
    overlap = iso(now - REFUSALS_OVERLAP_SECONDS)  # the next run reads after this name again
    names = {*health.refusals_seen, *(name for name, _ in seen.refusals)}
    health = replace(health, refusals_seen=tuple(sorted(n for n in names if n > overlap)))
    if new:
        record = _more_refusals(record, [data for _, data in new], now)
    return replace(health, refusals=record)


def _more_refusals(record: Refused, new: list[Mapping[str, Any]], now: float) -> Refused:
    services = {s for data in new for s in str(data.get("service") or "telegram github").split()}
    github = [str(data.get("repository") or "") for data in new if "github" in str(data.get("service") or "github")]
    return record.counted([_time(data, now) for data in new], reason=_refusal_line(new[-1]),
                          services=tuple(sorted(services | set(record.services))),
                          repository=next((r for r in reversed(github) if r), record.repository))


def _forget(record: Forgotten, seen: Seen, now: float) -> Forgotten:
    """Count the `delivery:` entries that close because GitHub no longer keeps their events, by the thing each
    was about, and the spans no pass read; all of it starts anew three days after the last."""
    if (record.count or record.unread) and (record.noted or 0) < now - GITHUB_RETENTION:
        record = Forgotten()
    if seen.unread:
        record = replace(record, unread=_span(record.unread, seen.unread), noted=now)
    things = [_thing(entry) for entry in seen.forgotten]
    if not things:
        return record
    times = [t for t in (parse_iso(e.get("order")) for e in seen.forgotten) if t is not None] or [now]
    by = dict(record.by)
    for thing in things:
        by[thing] = by.get(thing, 0) + 1
    return replace(record, count=record.count + len(things), noted=now, by=_most(by),
                   first=min([*times, *([record.first] if record.first else [])]),
                   last=max([*times, *([record.last] if record.last else [])]))


def _span(known: tuple[float, float] | None, more: tuple[float, float]) -> tuple[float, float]:
    return more if known is None else (min(known[0], more[0]), max(known[1], more[1]))


BY_KEPT = 40  # things the forgotten record names at most (the most frequent; the others summed as "others")


def _most(by: Mapping[str, int]) -> dict[str, int]:
    """The BY_KEPT most frequent things, the rest summed: the record stays small whatever GitHub forgets."""
    ranked = sorted(by.items(), key=lambda item: (-item[1], item[0]))
    rest = sum(n for _, n in ranked[BY_KEPT - 1:]) if len(ranked) > BY_KEPT else 0
    return dict(ranked[:BY_KEPT - 1] + ([("other things", rest)] if rest else [])) if rest else dict(ranked)


def _thing(entry: Mapping[str, Any]) -> str:
    where = entry.get("repository") or (f"repository {entry['repository_id']}" if entry.get("repository_id") else "")
    return str(entry.get("thing") or words.thing_of(str(entry.get("event") or ""), None, where).label)


def refusals_after(last_run: float | None, now: float) -> str:
    """The item name the run reads the refusals after: from the run before (a little before it: a write seen
    late is not missed, and counted once), or the last day on a first run."""
    if last_run is None:
        return iso(now - REFUSALS_FIRST_READ_SECONDS)
    return iso(last_run - REFUSALS_OVERLAP_SECONDS)


def _time(data: Mapping[str, Any], now: float) -> float:
    at = data.get("at")
    return float(at) if isinstance(at, (int, float)) and not isinstance(at, bool) else now


def _refusal_line(data: Mapping[str, Any]) -> str:
    """The last refusal in words: the thing it was about, then who refused and why."""
    reason = str(data.get("said") or data.get("reason") or "refused")[:200]
    event = str(data.get("event") or "").split(".")[0]
    thing = str(data.get("thing") or (words.thing_of(event, None, str(data.get("repository") or "")).label if event else ""))
    return f"{thing}: {reason}" if thing else reason


# -- the entries ------------------------------------------------------------------------------------------


# What to do, said last in a title (at most OWN_TITLE characters in all).
DOCTOR = "run make doctor"
WAIT = "nothing to do, pager waits"

# What GitHub's answer means when it does not serve the deliveries list: the first line (`{since}`: since
# when), and what the answer says, in the detail.
MEANING = {
    "401": ("GitHub refuses pager's token since {since} — " + DOCTOR,
            "GitHub answers 401: it does not accept the app's token; check GITHUB_APP_ID and GITHUB_PRIVATE_KEY (make doctor)"),
    "403": ("GitHub refuses pager's app since {since} — see if it is suspended",
            "GitHub answers 403: it refuses the app; is it suspended, or rate limited?"),
    "404": ("GitHub knows no webhook of pager's app since {since} — " + DOCTOR,
            "GitHub answers 404: it knows no webhook of this app; check GITHUB_APP_ID, and that the app's webhook is active"),
    "429": ("GitHub rate limits pager since {since} — " + WAIT, "GitHub rate limits the app"),
    "key": ("pager's private key cannot sign since {since} — " + DOCTOR,
            "the app's private key cannot sign a token: check GITHUB_PRIVATE_KEY (make doctor)"),
    "link": ("GitHub refuses pager its older deliveries since {since} — " + DOCTOR,
             "GitHub serves the newest page, but refuses the links to the next (or links off its API host)"),
    "": ("GitHub is not answering pager since {since} — see githubstatus.com",
         "GitHub answers 5xx or not at all (githubstatus.com)"),
}
# Who fails, in the first line (HOLDERS: what fails, below it), pager's own first (the maintainer's to fix).
HELD_NAMES = {"pager": "pager's own endpoint", "github": "GitHub", "telegram": "Telegram", "redelivery": "GitHub's redelivery"}
LABELS = {button: label for button, label, _ in OWN_BUTTONS}  # an entry's `button`: what its ↻ says

Entries = dict[str, dict[str, Any] | None]


@dataclass(frozen=True)
class Where:
    """What the entries' words need besides the health: the app's Advanced page, the maintainer's clock,
    the chat's move to a supergroup (pager.chat; None: none) and now."""

    url: str
    now: float
    zone: tzinfo = UTC
    moved: Mapping[str, Any] | None = None

    def at(self, epoch: float | None) -> str:  # in a message that stays in the chat for days
        return words.stamp(epoch if epoch is not None else self.now, self.zone)


def wanted(health: Health, job: Job | None, where: Where, held: Held | None = None) -> Entries:
    """The `pager:` entries the alarm should show (None: closed), each {title, detail, url, order[, button]}."""
    return {LIST: _list_entry(health.unserved, where), SECRET: _secret_entry(health.secret, job, where),
            ANSWERED: _stray_entry(health.stray, where),
            REFUSED: _refused_entry(health.refusals, job, where), CHAT: _chat_entry(where),
            FORGOTTEN: _forgotten_entry(health.forgotten, where), HELD: _held_entry(held, where)}


def _entry(title: str, detail: str, url: str = "", **more: Any) -> dict[str, Any]:
    return {"title": words.fit(title, OWN_TITLE), "detail": detail, "url": url, "order": "", **more}


def _held_entry(held: Held | None, w: Where) -> dict[str, Any] | None:
    """A hold said once it has lasted HELD_SAID_SECONDS beyond the wait its service named (pager waiting as
    GitHub's rate limit asks is nothing to know: a drain GitHub paces for hours says nothing each hour)."""
    if held is None or w.now - max(held.since, held.named_until) < HELD_SAID_SECONDS:
        return None
    failing = sorted((s for s in held.services if s in HOLDERS), key=list(HELD_NAMES).index)
    if not failing:
        return None
    what = "; ".join(HOLDERS[s] for s in held.services if s in HOLDERS)
    own = "pager" in failing  # pager's own to fix; the others' outages pass
    names = [HELD_NAMES[s] for s in failing]
    said = f"{'fails' if len(names) == 1 else 'fail'} since {w.at(held.since)} — {DOCTOR if own else WAIT}"
    title = f"{' and '.join(names)} {said}"
    if words.units(title) > OWN_TITLE:  # the first named, the others counted (the detail names them all)
        title = f"{names[0]} and {len(names) - 1} more {said}"
    return _entry(title, f"{what} since {w.at(held.since)}: nothing is delivered again meanwhile, and what failed comes "
                         f"back once it answers{' (make doctor)' if own else ''}", w.url)


def _list_entry(unserved: Unserved, w: Where) -> dict[str, Any] | None:
    since = unserved.since or w.now
    if unserved.runs < UNSERVED_RUNS or w.now - since < UNSERVED_SECONDS:
        return None
    title, meaning = MEANING.get(unserved.cause, MEANING[""])
    return _entry(title.format(since=w.at(since)),
                  f"GitHub has not served pager its webhook's deliveries since {w.at(since)}: {meaning}; "
                  "nothing that failed comes back meanwhile", w.url)


def _chat_entry(w: Where) -> dict[str, Any] | None:
    moved = w.moved
    if not moved:
        return None
    return _entry("Telegram made pager's group a supergroup — set its new chat id",
                  f"Telegram made the group {moved['from']} the supergroup {moved['to']}"
                  f" ({w.at(float(moved.get('at') or w.now))}): pager writes there now; set TELEGRAM_CHAT_ID "
                  f"(the TelegramChatId parameter) to {moved['to']} (make doctor says so too)")


def _forgotten_entry(record: Forgotten, w: Where) -> dict[str, Any] | None:
    said = []
    if record.count:
        things = sorted(record.by.items(), key=lambda item: (-item[1], item[0]))
        named = "; ".join(f"{what} ({n} times)" if n > 1 else what for what, n in things[:FORGOTTEN_KINDS])
        more = f"; and {len(things) - FORGOTTEN_KINDS} more" if len(things) > FORGOTTEN_KINDS else ""
        said.append(f"{_count(record.count, 'event')} failed between {w.at(record.first)} and {w.at(record.last)} and "
                    f"GitHub no longer keeps them, so they never reached you: {named}{more}")
    if record.unread:
        said.append(f"GitHub no longer keeps its deliveries between {w.at(record.unread[0])} and "
                    f"{w.at(record.unread[1])}, which pager never read: what failed then did not come back")
    if not said:
        return None
    if record.count:
        gone = "is" if record.count == 1 else "are"
        title = f"{_count(record.count, 'event')} never reached pager and {gone} gone from GitHub — see which below"
    else:
        assert record.unread is not None
        title = f"Events between {w.at(record.unread[0])} and {w.at(record.unread[1])} may be lost — check GitHub for them"
    return _entry(title, "; ".join(said))


def _stray_entry(record: Refused, w: Where) -> dict[str, Any] | None:
    if not record.count:
        return None
    deliveries = _count(record.count, "delivery", "deliveries")
    return _entry(f"{deliveries} never reached pager since {w.at(record.first)} — {DOCTOR}",
                  f"{deliveries} {record.reason} since {w.at(record.first)}, not an answer of pager's: is the app's "
                  "webhook URL the stack's /github (make doctor)? GitHub sends none of them again; Redeliver them on "
                  "the app's Advanced page once it is fixed", w.url)


def _secret_entry(record: Refused, job: Job | None, w: Where) -> dict[str, Any] | None:
    if not record.count:
        return None
    refused = f"{_count(record.count, 'delivery', 'deliveries')} refused"
    first, last = w.at(record.first or 0), w.at(record.last or 0)
    if not record.works:
        return _entry(f"pager refuses GitHub's deliveries since {first} — fix the webhook secret",
                      f"{refused} with {SECRET_REFUSED} since {first}: their signature does not match, "
                      "GITHUB_WEBHOOK_SECRET differs from the app's webhook secret (make doctor), and GitHub sends none "
                      "of them again by itself", w.url)
    if job is not None and job.under_way and job.asked_at >= (record.last or 0):
        return _entry(f"pager delivers the refused deliveries again, {job.done} so far — nothing to do",
                      f"{refused} with {SECRET_REFUSED} between {first} and {last}: delivering them again, "
                      f"{job.done} so far", w.url)
    return _entry(f"The webhook secret is fixed — press {LABELS['refused']}",
                  f"{refused} with {SECRET_REFUSED} between {first} and {last}: the webhook secret works again, and "
                  "GitHub sends none of them again by itself", w.url, button="refused")


def _refused_entry(record: Refused, job: Job | None, w: Where) -> dict[str, Any] | None:
    if not record.count:
        return None
    who = {"github": "GitHub", "telegram": "Telegram"}.get(record.services[0], "") if len(set(record.services)) == 1 else ""
    who = who or "GitHub or Telegram"
    pages, first = _count(record.count, "page"), w.at(record.first)
    refused = f"{pages} {who} refused since {first}"
    last = f"the last: {record.reason}"
    if not record.works:
        return _entry(f"{who} refused {pages} since {first} — {DOCTOR}",
                      f"{refused}, kept; {last}; once the cause is fixed (make doctor), this message offers "
                      f"{LABELS['pages']} (GitHub keeps them three days)", w.url)
    if job is not None and job.status == PAGE_REFUSED and job.under_way and job.asked_at >= (record.last or 0):
        return _entry(f"pager delivers the refused pages again, {job.done} so far — nothing to do",
                      f"{refused}: delivering them again, {job.done} so far", w.url)
    return _entry(f"Pages go through again — press {LABELS['pages']}",
                  f"{refused}: GitHub and Telegram take such calls again; {last}", w.url, button="pages")


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


SHOWN_FIELDS = ("title", "detail", "url", "button")


def change(wanted_entries: Entries, shown: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, dict[str, Any]], tuple[str, ...]]:
    """The alarm's change for the `pager:` entries: those to open or update (what they show differs),
    and those to close."""
    opened = {key: dict(entry) for key, entry in wanted_entries.items()
              if entry is not None and (key not in shown or any(shown[key].get(k) != entry.get(k) for k in SHOWN_FIELDS))}
    closed = tuple(key for key, entry in wanted_entries.items() if entry is None and key in shown)
    return opened, closed


# -- the plan --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobPage:
    """The page of the failure list the ↻ job reads next, as GitHub served it."""

    items: tuple[Attempt, ...]
    next_url: str | None


@dataclass(frozen=True)
class Plan:
    health: Health
    opened: dict[str, dict[str, Any]]
    closed: tuple[str, ...]
    picks: tuple[Attempt, ...]  # refused deliveries the ↻ job asks for again now
    job: Job | None  # the ↻ job once they are asked for

    @property
    def asks(self) -> tuple[Redeliver, ...]:
        return tuple(Redeliver(a.id, a.guid, "refused") for a in self.picks)

    @property
    def job_pending(self) -> bool:
        """The ↻ job has more to deliver again, and it would be taken: the check sweeps each minute."""
        return self.job is not None and self.job.under_way and self.job.works(self.health)


def plan(health: Health, seen: Seen, job: Job | None, page: JobPage | None, shown: Mapping[str, Mapping[str, Any]],
         where: Where, *, room: int, asked: frozenset[str] = frozenset()) -> Plan:
    """pager's health after this run, the change of its entries, and the ↻ job's picks from the page gathered
    (at most `room`; none another run asked for, `asked`; nothing while they would still be refused)."""
    health = learn(health, seen, job, where.now)
    picks: tuple[Attempt, ...] = ()
    if job is not None and job.under_way and page is not None and job.works(health) and room > 0:
        picks, job = advance(job, page.items, page.next_url, room, asked)
    mine = {k: v for k, v in shown.items() if k.startswith(OWN_PREFIX)}
    opened, closed = change(wanted(health, job, where, seen.held), mine)
    return Plan(health, opened, closed, picks, job)


def job_after(job: Job | None, after: Job | None, failed: set[str]) -> Job | None:
    """Where the ↻ job stopped: back where this run began when GitHub failed to take one of its picks (the
    next run picks it again; those it took it skips, as recent), else past them."""
    if after is None or after == job or not failed or job is None:
        return after
    return replace(after, url=job.url, below=job.below, finished=False, recent=tuple(g for g in after.recent if g not in failed))


def refused_on(refusals: tuple[tuple[str, Mapping[str, Any]], ...], known: str) -> str:
    """The repository of the last refusal GitHub made (else the one the health knows)."""
    on_github = [str(data["repository"]) for _, data in refusals if "github" in str(data.get("service")) and data.get("repository")]
    return on_github[-1] if on_github else known
