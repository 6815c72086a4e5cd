"""pager's own health: what keeps signals from reaching the maintainer, shown in the control repository's
alarm beside the failed deliveries, decided by the sweep from what it reads anyway.

Entries (items of the control repository's alarm, like the `delivery:` ones):

    pager:list      GitHub did not serve the deliveries list for `UNSERVED_RUNS` runs in a row and
                    `UNSERVED_SECONDS` (two scheduled runs): the runs read nothing, so nothing failed
                    can come back. Says what GitHub's answer means (401: the app's id or private key
                    is not accepted). Closes at the first run GitHub serves the list again.
    pager:secret    deliveries pager refused with 401 (the signature does not match: the webhook secret
                    differs from the app's). GitHub's list shows them, so each is a real delivery that a
                    4xx keeps from ever coming again. Once a delivery passes after the newest 401 (the
                    secret was fixed), the entry offers ↻, which delivers the refused ones of the last
                    three days again (`Job`, over as many runs as it takes); it closes when that is done,
                    or when GitHub has forgotten the last of them (three days).
    pager:forgotten events that failed and that GitHub no longer keeps (three days) before they could be
                    delivered: their `delivery:` entries close, and this entry counts them by kind and
                    repository, with when (never closed silently). It closes three days after the last.
    pager:chat      Telegram made the configured group a supergroup (pager.chat): pager writes there, and
                    says so until TELEGRAM_CHAT_ID names the new chat.
    pager:refused   signals GitHub or Telegram refused in a handler (a message refused, a bot removed from
                    the chat, a dispatch refused for a permission the app lacks): the webhook answered
                    them 424 and wrote an item each (pager.refusals); the entry counts them and names the
                    last reason. The pages are kept: GitHub lists the deliveries among its failures for
                    three days. While the entry is open, each run asks the services that refused whether
                    they would take such a call now (`probe`: Telegram, whether the bot may post in the
                    chat; GitHub, whether the installation holds the permissions pager needs); once they
                    would, the entry offers ↻, which delivers the refused ones again (`Job`, as for the
                    401s), and their pages reach the chat. It closes when that is done, or when GitHub
                    has forgotten the last of them (three days).

Everything here is pure (data in, decision out); `run.py` reads, writes and calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, tzinfo
from typing import Any

from .. import refusals as refused
from .. import words
from ..signals.alarm import OWN_PREFIX
from ..values import iso, parse_iso
from .plan import GITHUB_RETENTION, Attempt

LIST = OWN_PREFIX + "list"
SECRET = OWN_PREFIX + "secret"
REFUSED = OWN_PREFIX + "refused"
CHAT = OWN_PREFIX + "chat"
FORGOTTEN = OWN_PREFIX + "forgotten"
FORGOTTEN_KINDS = 8  # kinds and repositories the forgotten entry names (the most frequent)

UNSERVED_RUNS = 2  # runs in a row without the deliveries list before the alarm says so
UNSERVED_SECONDS = 840  # ... and this long: the recovery check's runs come more often than the schedule's
REFUSALS_FIRST_READ_SECONDS = 24 * 3600  # a first run reads the refusals of the last day
REFUSALS_OVERLAP_SECONDS = 60  # refusals are read again this far back (a write seen late), counted once
SECRET_REFUSED = 401
PAGE_REFUSED = refused.ANSWER  # the webhook's answer to a signal GitHub or Telegram refused
REFUSAL_LEAD_SECONDS = 120  # how far before the first refusal written the job looks (GitHub's 10 s, clocks apart)
JOB_KEY = "sweep#refused-again"


@dataclass(frozen=True)
class Health:
    """What the sweep's state keeps of pager's own health between runs."""

    unserved: int = 0  # runs in a row the deliveries list was not served
    unserved_since: float | None = None
    unserved_cause: str = ""  # a key of MEANING
    secret_count: int = 0  # deliveries refused with 401, counted since the entry opened
    secret_first: float | None = None
    secret_last: float | None = None
    secret_last_id: int = 0  # the newest 401 counted (an attempt's id)
    secret_works: bool = False  # a delivery passed after the newest 401
    refusals_count: int = 0
    refusals_first: float | None = None
    refusals_last: float | None = None
    refusals_reason: str = ""
    refusals_services: tuple[str, ...] = ()  # the services that refused since the entry opened
    refusals_repository: str = ""  # the repository of the last GitHub refusal (what the probe reads)
    refusals_work: bool = False  # the probe found the services taking such calls again, after the last refusal
    forgotten_count: int = 0  # events GitHub no longer keeps, whose entries closed unanswered
    forgotten_first: float | None = None  # the oldest of their last attempts
    forgotten_last: float | None = None  # the newest of their last attempts
    forgotten_noted: float | None = None  # when the last of them was counted
    forgotten_by: dict[str, int] = field(default_factory=dict)  # the thing (as words.thing_of names it) -> how many
    refusals_seen: tuple[str, ...] = ()  # the refusal items counted that the next run reads again (the overlap)
    refusals_read_to: float | None = None  # the time of the run that read the refusals last

    def to_data(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items() if v != getattr(NO_HEALTH, k)}

    @classmethod
    def from_data(cls, data: Any) -> Health:
        if not isinstance(data, Mapping):
            return NO_HEALTH
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        for name in ("refusals_seen", "refusals_services"):
            if name in known:
                known[name] = tuple(str(n) for n in known[name])
        return cls(**known)


NO_HEALTH = Health()


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


RECENT_GUIDS = 300


def advance(job: Job, items: Iterable[Attempt], next_url: str | None, room: int,
            asked: frozenset[str] = frozenset()) -> tuple[tuple[Attempt, ...], Job]:
    """One page of the failure list read at `job.url`: the 401s to deliver again (at most `room`, newest
    first as the list goes; none another run asked for already, `asked`) and the job moved past what it
    looked at."""
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
    if job is not None and not job.finished:
        if job.status != status:
            return "↻ other refused deliveries are being delivered again: press again once they are", None
        return f"↻ already delivering them again: {job.done} so far", None
    if status == SECRET_REFUSED:
        count, first, works = health.secret_count, health.secret_first, health.secret_works  # GitHub's own times
        what, not_yet = "deliveries refused with 401", "⚠️ GitHub's deliveries are still refused with 401: fix the webhook secret first"
    else:
        count, first, works = health.refusals_count, health.refusals_first, health.refusals_work
        # The handler's clock, after it ran; GitHub stamps a delivery when it sends it, to the second.
        first = None if first is None else first - REFUSAL_LEAD_SECONDS
        what, not_yet = "refused signals", "⚠️ GitHub or Telegram would still refuse them: fix the cause first (pager doctor)"
    if not count:
        return f"no {what} to deliver again", None
    if not works:
        return not_yet, None
    # Not again what an earlier ↻ delivered again: only what was refused since it began.
    earlier = job.asked_at if job is not None and job.status == status else 0.0
    since = max(now - GITHUB_RETENTION, first or now, earlier)
    when = words.local_time(since, zone, now)
    return f"↻ the {what} since {when} are delivered again over the next minutes", Job(since, now, status=status)


# -- what the state learns from a run ---------------------------------------------------------------------


def not_served(health: Health, cause: str, now: float) -> Health:
    """`cause`: what GitHub's answer means (a key of MEANING: "401", "403", "404", "429", "key", or ""
    for a 5xx or no answer); the error itself goes to the run's log line."""
    return replace(health, unserved=health.unserved + 1, unserved_since=health.unserved_since or now,
                   unserved_cause=cause)


def served(
    health: Health,
    *,
    failures: Iterable[Attempt],
    outcomes: Iterable[Attempt],
    refusals: Iterable[tuple[str, Mapping[str, Any]]],
    job: Job | None,
    now: float,
    works: bool = False,
    forgotten: Iterable[Mapping[str, Any]] = (),
) -> Health:
    """The health after a run that read the lists: the 401s and passes it saw, the refusals written
    since the run before (`refusals`: item name and data, as read from pager.refusals' items), whether
    the probe found the services that refused taking such calls again (`works`), and what is healthy
    again."""
    health = replace(health, unserved=0, unserved_since=None, unserved_cause="")
    health = _secret(health, list(failures), list(outcomes), job, now)
    health = _forgotten(health, list(forgotten), now)
    return _refusals(health, list(refusals), job, works, now)


def _forgotten(health: Health, entries: list[Mapping[str, Any]], now: float) -> Health:
    """Count the `delivery:` entries that close because GitHub no longer keeps their events (`entries`, as
    the alarm held them), by the thing each was about; the count starts anew three days after the last."""
    if health.forgotten_count and (health.forgotten_noted or 0) < now - GITHUB_RETENTION:
        health = replace(health, forgotten_count=0, forgotten_first=None, forgotten_last=None, forgotten_noted=None,
                         forgotten_by={})
    if not entries:
        return health
    times = [t for t in (parse_iso(e.get("order")) for e in entries) if t is not None] or [now]
    by = dict(health.forgotten_by)
    for entry in entries:
        where = entry.get("repository") or (f"repository {entry['repository_id']}" if entry.get("repository_id") else "")
        what = str(entry.get("thing") or words.thing_of(str(entry.get("event") or ""), None, where).label)
        by[what] = by.get(what, 0) + 1
    return replace(
        health,
        forgotten_count=health.forgotten_count + len(entries),
        forgotten_first=min([*times, *([health.forgotten_first] if health.forgotten_first else [])]),
        forgotten_last=max([*times, *([health.forgotten_last] if health.forgotten_last else [])]),
        forgotten_noted=now,
        forgotten_by=by,
    )


def _secret(health: Health, failures: list[Attempt], outcomes: list[Attempt], job: Job | None, now: float) -> Health:
    if health.secret_count and (
        (job is not None and job.finished and job.asked_at >= (health.secret_last or 0))
        or (health.secret_last or 0) < now - GITHUB_RETENTION
    ):
        health = replace(health, secret_count=0, secret_first=None, secret_last=None, secret_works=False)
    refused = sorted({a.id: a for a in failures if a.status_code == SECRET_REFUSED and a.id > health.secret_last_id}.values(),
                     key=lambda a: a.id)
    if refused:
        health = replace(
            health,
            secret_count=health.secret_count + len(refused),
            secret_first=health.secret_first if health.secret_count else refused[0].at,
            secret_last=max(refused[-1].at, health.secret_last or 0),
            secret_last_id=refused[-1].id,
            secret_works=False,
        )
    if health.secret_count and any(200 <= a.status_code < 400 and a.id > health.secret_last_id for a in outcomes):
        health = replace(health, secret_works=True)
    return health


def _refusals(health: Health, refusals: list[tuple[str, Mapping[str, Any]]], job: Job | None, works: bool,
              now: float) -> Health:
    if health.refusals_count and (
        (job is not None and job.status == PAGE_REFUSED and job.finished and job.asked_at >= (health.refusals_last or 0))
        or (health.refusals_last or 0) < now - GITHUB_RETENTION
    ):
        health = replace(health, refusals_count=0, refusals_first=None, refusals_last=None, refusals_reason="",
                         refusals_services=(), refusals_repository="", refusals_work=False)
    if health.refusals_count and works:
        health = replace(health, refusals_work=True)
    new = [(name, data) for name, data in sorted(refusals) if name not in health.refusals_seen]
    overlap = iso(now - REFUSALS_OVERLAP_SECONDS)  # the next run reads after this name again
    seen = tuple(sorted({n for n in (*health.refusals_seen, *(name for name, _ in refusals)) if n > overlap}))
    health = replace(health, refusals_seen=seen, refusals_read_to=now)
    if not new:
        return health
    times = [_time(data, now) for _, data in new]
    services = {str(s) for _, data in new for s in str(data.get("service") or "telegram github").split()}
    github = [str(data.get("repository") or "") for _, data in new if "github" in str(data.get("service") or "github")]
    return replace(
        health,
        refusals_count=health.refusals_count + len(new),
        refusals_first=health.refusals_first if health.refusals_count else min(times),
        refusals_last=max(max(times), health.refusals_last or 0),
        refusals_reason=_refusal_line(new[-1][1]),
        refusals_services=tuple(sorted(services | set(health.refusals_services if health.refusals_count else ()))),
        refusals_repository=next((r for r in reversed(github) if r), health.refusals_repository),
        refusals_work=False,  # refused again since the probe said otherwise
    )


def refusals_after(health: Health, now: float) -> str:
    """The item name the run reads the refusals after: from the run that read them last (a little
    before it: a write seen late is not missed, and counted once), or the last day on a first run."""
    if health.refusals_read_to is None:
        return iso(now - REFUSALS_FIRST_READ_SECONDS)
    return iso(health.refusals_read_to - REFUSALS_OVERLAP_SECONDS)


def _time(data: Mapping[str, Any], now: float) -> float:
    at = data.get("at")
    return float(at) if isinstance(at, (int, float)) and not isinstance(at, bool) else now


def _refusal_line(data: Mapping[str, Any]) -> str:
    """The last refusal in words: what refused and why, and the thing it was about."""
    reason = str(data.get("said") or data.get("reason") or "refused")[:200]
    event = str(data.get("event") or "").split(".")[0]
    thing = str(data.get("thing") or (words.thing_of(event, None, str(data.get("repository") or "")).label if event else ""))
    return f"{reason} ({thing})" if thing else reason


# -- the entries ------------------------------------------------------------------------------------------


MEANING = {
    "401": "GitHub answers 401: it does not accept the app's token; check GITHUB_APP_ID and GITHUB_PRIVATE_KEY (pager doctor)",
    "403": "GitHub answers 403: it refuses the app; is it suspended, or rate limited?",
    "404": "GitHub answers 404: it knows no webhook of this app; check GITHUB_APP_ID, and that the app's webhook is active",
    "429": "GitHub rate limits the app",
    "key": "the app's private key cannot sign a token: check GITHUB_PRIVATE_KEY (pager doctor)",
    "": "GitHub answers 5xx or not at all (githubstatus.com)",
}


def wanted(health: Health, job: Job | None, *, now: float, url: str, zone: tzinfo = UTC,
           moved: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any] | None]:
    """The `pager:` entries the alarm should show (None: closed), each {title, url, order[, button]}, times
    on the maintainer's clock (`zone`). `moved`: the configured chat's move to a supergroup, as pager.chat
    records it (None: none)."""
    def at(epoch: float | None) -> str:  # in a message that stays in the chat for days
        return words.stamp(epoch if epoch is not None else now, zone)

    entries: dict[str, dict[str, Any] | None] = {LIST: None, SECRET: None, REFUSED: None, CHAT: None, FORGOTTEN: None}
    if health.forgotten_count:
        things = sorted(health.forgotten_by.items(), key=lambda item: (-item[1], item[0]))
        named = "; ".join(f"{what} ({n} times)" if n > 1 else what for what, n in things[:FORGOTTEN_KINDS])
        more = f"; and {len(things) - FORGOTTEN_KINDS} more" if len(things) > FORGOTTEN_KINDS else ""
        entries[FORGOTTEN] = {"title": f"{_count(health.forgotten_count, 'event')} failed between "
                                       f"{at(health.forgotten_first)} and {at(health.forgotten_last)} and GitHub no "
                                       f"longer keeps them, so they never reached you: {named}{more}",
                              "url": "", "order": ""}
    if moved:
        entries[CHAT] = {"title": f"Telegram made the group {moved['from']} the supergroup {moved['to']}"
                                  f" ({at(float(moved.get('at') or now))}): pager writes there now; set TELEGRAM_CHAT_ID "
                                  f"(the TelegramChatId parameter) to {moved['to']}", "url": "", "order": ""}
    since = health.unserved_since or now
    if health.unserved >= UNSERVED_RUNS and now - since >= UNSERVED_SECONDS:
        meaning = MEANING.get(health.unserved_cause, MEANING[""])
        entries[LIST] = {"title": f"GitHub has not served pager its webhook's deliveries since {at(since)}: {meaning}; "
                                  "nothing that failed comes back meanwhile", "url": url, "order": ""}
    if health.secret_count:
        entries[SECRET] = _secret_entry(health, job, url, at)
    if health.refusals_count:
        entries[REFUSED] = _refused_entry(health, job, url, at)
    return entries


def _secret_entry(health: Health, job: Job | None, url: str, at: Any) -> dict[str, Any]:
    refused = f"{_count(health.secret_count, 'delivery', 'deliveries')} refused"
    first, last = at(health.secret_first or 0), at(health.secret_last or 0)
    if not health.secret_works:
        title = (f"{refused} since {first}: their signature does not match, GITHUB_WEBHOOK_SECRET differs from the "
                 "app's webhook secret, and GitHub sends none of them again by itself")
        return {"title": title, "url": url, "order": ""}
    if job is not None and not job.finished and job.asked_at >= (health.secret_last or 0):
        return {"title": f"{refused} between {first} and {last}: delivering them again, {job.done} so far", "url": url, "order": ""}
    title = f"{refused} between {first} and {last}: the webhook secret works again, ↻ delivers them again"
    return {"title": title, "url": url, "order": "", "button": "refused"}


def _refused_entry(health: Health, job: Job | None, url: str, at: Any) -> dict[str, Any]:
    refused = f"{_count(health.refusals_count, 'page')} GitHub or Telegram refused since {at(health.refusals_first)}"
    last = f"the last: {health.refusals_reason}"
    if not health.refusals_work:
        return {"title": f"{refused}, kept; {last}; once the cause is fixed (pager doctor), ↻ delivers them again "
                         "(GitHub keeps them three days)", "url": url, "order": ""}
    if job is not None and job.status == PAGE_REFUSED and not job.finished and job.asked_at >= (health.refusals_last or 0):
        return {"title": f"{refused}: delivering them again, {job.done} so far", "url": url, "order": ""}
    return {"title": f"{refused}: GitHub and Telegram take such calls again, ↻ delivers them again; {last}", "url": url,
            "order": "", "button": "pages"}


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


SHOWN_FIELDS = ("title", "url", "button")


def change(
    wanted_entries: Mapping[str, Mapping[str, Any] | None], shown: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, dict[str, Any]], tuple[str, ...]]:
    """The alarm's change for the `pager:` entries: those to open or update (what they show differs),
    and those to close."""
    opened = {
        key: dict(entry)
        for key, entry in wanted_entries.items()
        if entry is not None and (key not in shown or any(shown[key].get(k) != entry.get(k) for k in SHOWN_FIELDS))
    }
    closed = tuple(key for key, entry in wanted_entries.items() if entry is None and key in shown)
    return opened, closed
