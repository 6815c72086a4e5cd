"""The sweep's shell: gather, let each unit plan with no I/O, commit, perform, fold what happened, save.

Three units, each with its own item under the sweep's key (`sweep`):

    deliveries  the decision: GitHub's list read whole, what to ask for again, paced (pager.sweep.deliveries)
    health      pager's own health, its entries and the ↻ job of refused deliveries (pager.sweep.health)
    waiting     holds and recovery: what waits for a failed service (pager.sweep.recovery, pager.waiting)

A run (`run_sweep`, every 15 minutes, and at once when the check finds a failed service answering again):

1. load every item of the sweep's key (one query); a duplicate invocation of the scheduled event whose
   run saved the deliveries item (EventBridge may invoke twice; its `id` tells) steps aside;
2. gather: the releases waiting for Merge read again (their own unit: pager.signals.release), the control
   repository's alarm, the refusals written since the last run and whether the services that refused
   would take such calls now, the ↻ job's next page, the chat's move, and the lists of deliveries as far as
   the pass goes (one app JWT for every call: the GitHub client signs it once and reuses it);
3. plan, unit by unit, pure: what holds, the decision, pager's health and the ↻ picks, ↻ all's picks;
   then name the entries about to open (a read of each one's delivery: what it was about);
4. **commit** the deliveries item, conditionally on the version read, before acting: of two overlapping
   runs only the one whose write lands goes on, so they never both redeliver;
5. perform the effects: this minute's redeliveries and picks, then the alarm's change (a failure there
   stops nothing; the change waits for the next run, `alarm_due`);
6. fold what happened and save the other items (each when it changed), then the deliveries item once more
   only when the alarm's change was made; log one summary line and the EMF metrics.

The every-minute check (`check`) attends to what came due (pager.signals.due), then: with something held,
probes the failed services and runs the sweep as soon as all answer; else asks GitHub for the redeliveries
the last run queued for this minute, writing nothing.

The run keeps a deadline (`RUN_SECONDS`, inside the function's 180 s timeout): past it the clients start no
new call, so a slow GitHub ends the run early, with what it read kept for the next run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .. import chat, deadline, words
from ..engine.effects import Redeliver
from ..engine.perform import FAILED, LIMITED, TOOK, Done
from ..errors import ConfigError, Conflict, DeadlineExceeded, GitHubRefused, PagerError, StoreUnavailable
from ..observe import count, logger
from ..permissions import missing_permissions, needed_permissions
from ..refusals import KEY as REFUSALS_KEY
from ..services import Services
from ..settings import Settings
from ..signals import acts_on, alarm, due, pages, release
from ..signals.alarm import delivery_times, entries_now, to_deliver_again
from ..store import RECORD_WAITS, Record
from ..values import field as payload_field
from ..values import iso, text
from ..waiting import ITEM as WAITING_ITEM
from ..waiting import REDELIVERY, SWEEP_KEY, Waiting, merged, note, noted
from . import deliveries, followed, health, lease, recovery
from .acts import Act, ChangeAlarm, RedeliverEntry, act
from .lists import GITHUB_RETENTION, PAGES, PER_PAGE, Read, Scan, attempts_of
from .presses import ALL_ITEM

RUN_SECONDS = 150.0
ATTEND_SECONDS = 20.0  # what comes due in one minute: renders and a summary, well inside the check's minute
NAMED_ENTRIES = 5  # entries a run names the thing of (a read of its delivery each)
RELEASE_CALLS = 4  # a release read again: a token, the pull request, once more if GitHub computes it, its check runs if unstable
PROBE_CALLS = 4  # whether the refusers answer: getChatMember and getChat, and two installations read


class ListNotServed(PagerError):
    """GitHub did not serve a list (a 5xx, a rate limit, a refusal, the deadline): the run asks for nothing,
    and the next run reads on from where this one stopped. `error` is what the page raised."""

    def __init__(self, name: str, error: PagerError, read: Read, *, link: bool = False) -> None:
        super().__init__(f"{name}: {type(error).__name__}")
        self.error = error
        self.read = read
        self.link = link  # GitHub served the head of the list, but not the links between its pages


# -- the items ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Items:
    """Every item of the sweep's key, as one query read them."""

    found: Mapping[str, Record]

    @classmethod
    def load(cls, services: Services) -> Items:
        return cls({r.item: r for r in services.store.items(SWEEP_KEY)})

    def __getitem__(self, name: str) -> Record:
        return self.found.get(name) or Record(SWEEP_KEY, item=name)

    def state(self, services: Services, run_id: str) -> tuple[deliveries.State, followed.Loaded]:
        """The deliveries unit's state with the rows its chunks hold (one more query). Raises StoreUnavailable."""
        data = self[deliveries.ITEM].data
        if data and data.get("v") not in (3, deliveries.VERSION):
            logger.warning("sweep state of another version, starting afresh", extra={"run_id": run_id, "version": data.get("v")})
        loaded = followed.load(services, data)
        try:
            return deliveries.State.from_data(data, loaded.rows), loaded
        except (KeyError, IndexError, TypeError, ValueError) as exc:  # never stuck on an item that cannot be read
            logger.error("sweep state unreadable, starting afresh", extra={"run_id": run_id, "error": type(exc).__name__})
            return deliveries.State(), loaded

    @property
    def queue(self) -> tuple[deliveries.Followed, ...]:
        """The rows the last run queued for the minutes to come (the head alone: no chunk read)."""
        try:
            return deliveries.queue_of(self[deliveries.ITEM].data)
        except (KeyError, IndexError, TypeError, ValueError):
            return ()

    @property
    def waiting(self) -> Waiting | None:
        return Waiting.from_data(self[WAITING_ITEM].data)


class Calls:
    """The run's GitHub and Telegram calls, from the clients' own counters, against its budget."""

    def __init__(self, services: Services) -> None:
        self._services = services
        self._start = services.calls
        self.budget = services.settings.sweep_call_budget

    @property
    def used(self) -> int:
        return self._services.calls - self._start

    def left(self, reserve: int = 0) -> int:
        return max(0, self.budget - self.used - reserve)


# -- gathering ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gathered:
    """Everything a run read before it plans."""

    state: deliveries.State
    every: Read | None  # None: GitHub did not serve it, or no call was left for it
    failures: Read | None
    not_served: str | None  # GitHub's answer when it did not serve a list (a key of health.MEANING); None: it did,
    # or the run could not ask (no call left, its own deadline: `every` None all the same)
    shown: Mapping[str, Mapping[str, Any]]  # ⚙️ pager: its open entries
    refusals: tuple[tuple[str, Mapping[str, Any]], ...]
    refusers_answer: bool
    job: health.Job | None
    job_page: health.JobPage | None
    again_all: bool
    moved: Mapping[str, Any] | None
    waiting: Waiting | None
    health: health.Health
    looked: tuple[release.LookedAgain, ...] = ()  # the releases waiting for Merge, read again
    releases: list[str] = field(default_factory=list)  # what became of them, once acted on after the commit
    names: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # what unnamed entries were about (read)


READ_MARGIN_SECONDS = 30.0  # a run stops reading this long before its deadline: the time to commit and act


def read_list(services: Services, scan: Scan, *, status: str | None, pages: int, stop_at: float) -> Read:
    """Read a list as far as the pass goes, at most `pages` pages (a pass under way goes on at its link), and
    no later than READ_MARGIN_SECONDS before the run's deadline. Raises ListNotServed, which carries what was
    read; a link GitHub no longer takes starts the pass anew."""
    read = Read(scan=scan)
    url = scan.next_url if scan.under_way else None
    refused: GitHubRefused | None = None  # the link refused in this run: its pass begins anew, once
    while read.pages < pages and _time_left():
        try:
            page = services.github.list_deliveries(status=status, per_page=PER_PAGE, url=url)
        except GitHubRefused as exc:
            if url is None or refused is not None:  # a link refused again after a new pass began: not served
                raise ListNotServed(status or "every outcome", exc, read, link=url is not None) from exc
            logger.warning("deliveries list: its link no longer taken, reading from its head", extra={"status": status})
            read, url, refused = Read(scan=read.scan.restarted(), pages=read.pages + 1), None, exc
            continue
        except PagerError as exc:
            raise ListNotServed(status or "every outcome", exc, read) from exc
        fresh, scan, ended = read.scan.step(attempts_of(page.items), page.next_url, stop_at)
        read = Read((*read.attempts, *fresh), scan, read.pages + 1, ended)
        if ended != PAGES:
            break
        url = page.next_url
    if refused is not None and not read.ended and read.pages >= pages:  # no page left to begin the pass anew
        raise ListNotServed(status or "every outcome", refused, read, link=True)
    return read


def _time_left() -> bool:
    left = deadline.remaining()
    return left is None or left >= READ_MARGIN_SECONDS


def read_lists(services: Services, state: deliveries.State, calls: Calls, now: float,
               run_id: str) -> tuple[Read | None, Read | None, str | None]:
    """The every-outcome list as far as its pass goes, then, until it has been read once back to GitHub's
    three days, the failure list; each within its page cap and what the budget leaves for this minute's
    redeliveries, the alarm's change and the entries' names. What was read is kept when GitHub stops serving
    a list midway (the next run reads on from there); the third value is GitHub's answer then (a key of
    health.MEANING; None: it served, or the run's own deadline ended the reading)."""
    settings = services.settings
    reserve = list_reserve(settings) - 1
    first = not state.every.top  # a first pass (under way or not) reads back SWEEP_WINDOW_MINUTES
    stop = now - settings.sweep_window_minutes * 60 if first else now - GITHUB_RETENTION
    pages = min(settings.sweep_all_pages, calls.left(reserve))
    if pages <= 0:
        return None, None, None
    try:
        every = read_list(services, state.every, status=None, pages=pages, stop_at=stop)
    except ListNotServed as exc:
        return (exc.read if exc.read.pages else None), None, _not_served(exc, run_id)
    if not every.pages:  # the run's deadline came before a page
        return None, None, None
    pages = min(settings.sweep_failure_pages, calls.left(reserve))
    if state.backfilled or pages <= 0:
        return every, None, None
    try:
        return every, read_list(services, state.failures, status="failure", pages=pages, stop_at=now - GITHUB_RETENTION), None
    except ListNotServed as exc:
        _not_served(exc, run_id)
        return every, (exc.read if exc.read.pages else None), None


def _not_served(exc: ListNotServed, run_id: str) -> str | None:
    """GitHub's answer when it stopped serving a list, as pager's health keys it (logged); None for the
    run's own deadline, which says nothing of GitHub."""
    logger.warning("deliveries list not read", extra={"run_id": run_id, "list": str(exc), "pages": exc.read.pages,
                                                      "error": type(exc.error).__name__, "reason": str(exc.error)})
    if isinstance(exc.error, DeadlineExceeded):
        return None
    return "link" if exc.link else _cause(exc.error)


def list_reserve(settings: Settings) -> int:
    """The calls a run keeps for what it cannot do without, before any other call: a page of the list, this
    minute's redeliveries, the alarm's change and the names of the entries it opens."""
    return 1 + settings.sweep_max_redeliveries + 1 + NAMED_ENTRIES


def gather(services: Services, items: Items, calls: Calls, state: deliveries.State, now: float, run_id: str) -> Gathered:
    """Everything the units plan from (see the module's docstring). Raises StoreUnavailable."""
    settings = services.settings
    own = health.Health.from_data(items[health.ITEM].data)
    waiting = items.waiting
    looked = _look_again(services, calls, run_id)
    shown = entries_now(services, alarm.CONTROL)
    refusals = tuple((r.item, r.data) for r in services.store.items(REFUSALS_KEY, after=health.refusals_after(state.ran_at, now)))
    job = health.Job.from_data(items[health.JOB_ITEM].data)
    moved = chat.move_of(services.store.load(chat.KEY).data, settings.telegram_chat_id)
    works = _refusers_answer(services, own, refusals, moved, calls, run_id)
    spare = calls.left(list_reserve(settings)) > 0  # (the least budget the settings accept leaves none)
    job_page = None if recovery.held_since(waiting) or not spare else _job_page(services, job, run_id)
    every, failures, cause = read_lists(services, state, calls, now, run_id)
    return Gathered(state, every, failures, cause, shown, refusals, works, job, job_page,
                    bool(items[ALL_ITEM].data.get("asked_at")), moved, waiting, own, looked)


def _cause(error: PagerError) -> str:
    """What a list's failure means, as pager's own health keys it."""
    if isinstance(error, ConfigError):
        return "key"
    status = getattr(error, "status", None)
    return str(status) if isinstance(status, int) and 400 <= status < 500 else ""


def _look_again(services: Services, calls: Calls, run_id: str) -> tuple[release.LookedAgain, ...]:
    """Read again the release pull requests waiting for Merge that no event may make ready (opened with
    GITHUB_TOKEN, or without CI, no check suite comes), a few calls each, within what the budget leaves; acted
    on once the run has committed (`_settle_releases`)."""
    settings = services.settings
    room = calls.left(settings.sweep_all_pages + settings.sweep_max_redeliveries + 1 + NAMED_ENTRIES)
    limit = min(release.RELEASES_CHECKED, room // RELEASE_CALLS)
    if not limit:
        return ()
    try:
        return release.look_again(services, limit=limit)
    except PagerError as exc:
        logger.warning("releases not checked", extra={"run_id": run_id, "error": type(exc).__name__, "reason": str(exc)})
        return ()


def _settle_releases(services: Services, looked: tuple[release.LookedAgain, ...], now: float, run_id: str) -> list[str]:
    """What the run read of the releases waiting for Merge, acted on after its commit: their outcomes."""
    try:
        return release.settle_looked(services, looked, now)
    except PagerError as exc:
        logger.warning("releases not checked", extra={"run_id": run_id, "error": type(exc).__name__, "reason": str(exc)})
        return [f"not checked: {type(exc).__name__}"]


def _refusers_answer(services: Services, own: health.Health, refusals: tuple[tuple[str, Mapping[str, Any]], ...],
                     moved: Mapping[str, Any] | None, calls: Calls, run_id: str) -> bool:
    """Whether the services that refused signals would take such calls now (pager's own health offers ↻
    then): Telegram, whether the bot may post in the chat pager writes to; GitHub, whether the app's
    installations on the control repository and on the repository of the last refusal hold every permission
    pager needs and are not suspended. A few calls, only while refused signals wait; a failure is a no."""
    record = own.refusals
    if record.works and not refusals:
        return True
    if not (record.count or refusals) or calls.left(list_reserve(services.settings)) < PROBE_CALLS:
        return False
    refusing = set(record.services) | {s for _, data in refusals for s in str(data.get("service") or "").split()}
    try:
        if "telegram" in refusing and not services.telegram.may_post(str(moved["to"]) if moved else services.chat.send_to):
            return False
        repositories = (services.settings.control_repository, _refused_on(refusals, record.repository))
        return "github" not in refusing or all(_installed_with_all(services, r) for r in dict.fromkeys(filter(None, repositories)))
    except PagerError as exc:
        logger.info("refusers not answering yet", extra={"run_id": run_id, "error": type(exc).__name__})
        return False


def _refused_on(refusals: tuple[tuple[str, Mapping[str, Any]], ...], known: str) -> str:
    """The repository of the last refusal GitHub made (else the one the health knows)."""
    on_github = [str(data["repository"]) for _, data in refusals if "github" in str(data.get("service")) and data.get("repository")]
    return on_github[-1] if on_github else known


def _installed_with_all(services: Services, repository: str) -> bool:
    installation = services.github.installation(repository)
    granted = installation.get("permissions")
    return not installation.get("suspended_at") and not missing_permissions(granted if isinstance(granted, dict) else {},
                                                                             needed_permissions())


def _job_page(services: Services, job: health.Job | None, run_id: str) -> health.JobPage | None:
    """The page of the failure list the ↻ job reads next (one call, only while a job is under way; None when
    none is, or GitHub did not serve it: the next run reads it again)."""
    if job is None or not job.under_way:
        return None
    try:
        page = services.github.list_deliveries(status="failure", per_page=PER_PAGE, url=job.url)
    except PagerError as exc:
        logger.warning("refused deliveries not read", extra={"run_id": run_id, "error": type(exc).__name__, "reason": str(exc)})
        return None
    return health.JobPage(tuple(attempts_of(page.items)), page.next_url)


def read_names(services: Services, entries: Mapping[str, Mapping[str, Any]], calls: Calls) -> dict[str, dict[str, Any]]:
    """What `delivery:` entries without their thing were about (the list gives only the kind of event and the
    repository's id), read from each one's delivery: at most NAMED_ENTRIES a run, within the budget. The
    gather's part of naming (`named` is the plan's): the entries the plan opens, then those ⚙️ pager shows
    unnamed (a run before had no read left for them)."""
    names: dict[str, dict[str, Any]] = {}
    for key, entry in entries.items():
        if len(names) >= NAMED_ENTRIES or calls.left(list_reserve(services.settings)) <= 0:
            break
        if key.startswith(alarm.DELIVERY_PREFIX) and not entry.get("thing"):
            names[key] = _named(services, entry)
    return names


def named(opened: Mapping[str, Mapping[str, Any]], shown: Mapping[str, Mapping[str, Any]],
          names: Mapping[str, Mapping[str, Any]], closed: Iterable[str] = ()) -> dict[str, dict[str, Any]]:
    """The entries to open, and those shown unnamed that the run read the names of, pure: one the alarm
    shows already keeps its name; another opens unnamed, saying where by the repository's name when the
    alarm knows it ("a comment on acme/lib"), never by its id, and a later run reads what it was about; one
    shown unnamed whose delivery the run read is named (updated in place, linked to the thing)."""
    out = {key: {**_to_open(key, entry, shown.get(key) or {}), **(names.get(key) or {})} for key, entry in opened.items()}
    for key, found in names.items():
        entry = shown.get(key)
        if entry is None or key in out or key in set(closed) or not found:
            continue
        out[key] = {**{k: v for k, v in entry.items() if k not in ("state", "at")}, **found,
                    **deliveries.renamed(entry, found)}
    where = {e.get("repository_id"): e["repository"] for e in [*shown.values(), *out.values()] if e.get("repository")}
    for key in opened:
        entry = out[key]
        if key.startswith(alarm.DELIVERY_PREFIX):
            if not entry.get("repository") and entry.get("repository_id") in where:
                entry["repository"] = where[entry["repository_id"]]
            entry["title"], entry["detail"] = deliveries.delivery_title(entry), deliveries.delivery_detail(entry)
    return out


def _to_open(key: str, entry: Mapping[str, Any], known: Mapping[str, Any]) -> dict[str, Any]:
    """An entry to open: named as the alarm shows it already, or unnamed for a later run to read."""
    entry = dict(entry)
    if known.get("thing"):
        entry.update({k: known[k] for k in ("thing", "short", "url", "repository", "undone") if known.get(k)})
    return entry


def _named(services: Services, entry: Mapping[str, Any]) -> dict[str, Any]:
    """What an entry's event was about, read from its delivery: empty when GitHub did not answer now (a later
    run reads it again); its line as it stands, kept as its name, when GitHub never will say (the delivery
    refused or forgotten, a payload naming no repository), so that no later run spends a read on it."""
    try:
        delivery = services.github.get_delivery(int(entry.get("delivery_id") or 0))
    except GitHubRefused:
        delivery = None
    except PagerError:
        return {}
    payload = payload_field(delivery, "request", "payload")
    undone = deliveries.undone_of(payload_field(delivery, "response", "payload"))  # what its last answer says
    name = text(payload_field(payload, "repository", "full_name"))
    if not name:
        return {"thing": words.thing_of(str(entry.get("event") or ""), None, deliveries.where(entry)).label}
    thing = words.thing_of(str(entry.get("event") or ""), payload, name)
    return {"repository": name, "thing": thing.label, "short": thing.short, **({"url": thing.url} if thing.url else {}),
            **({"undone": undone} if undone else {})}


# -- the plan ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Planned:
    """What the run does: each unit's plan, the effects in order, and what to save."""

    deliveries: deliveries.Plan
    health: health.Plan
    again_all: tuple[tuple[str, int], ...]  # ↻ all: (entry key, attempt) to ask for in this run
    again_all_pending: bool
    waiting: Waiting | None
    opened: Mapping[str, Mapping[str, Any]]  # the alarm's change: deliveries' and pager's own entries
    closed: tuple[str, ...]
    redelivery_since: float | None = None  # a hold of GitHub's redeliveries the run began under: since when

    @property
    def effects(self) -> list[Act]:
        asks: list[Act] = [*self.deliveries.ask, *self.health.asks]
        asks += [RedeliverEntry(key, delivery_id) for key, delivery_id in self.again_all]
        change = self.opened or self.closed or self.deliveries.state.alarm_due
        return asks + ([ChangeAlarm(self.opened, self.closed)] if change else [])


def plan(g: Gathered, settings: Settings, *, now: float, released: bool, event_id: str | None,
         own: bool | None = None, minute: bool = False) -> Planned:
    """The run's plan from what it gathered, pure: holds first (what they hold, nobody asks for), then the
    decision, pager's health and its ↻ picks with what this minute leaves, ↻ all's, and what waits after."""
    known = deliveries.Known(g.every, g.failures, delivery_times(g.shown))
    fresh = deliveries.fresh_attempts(g.state, known)
    waiting = recovery.hold(g.waiting, released=released, now=now, own=own)
    held = recovery.held_since(waiting)
    dplan = _decision(g, known, settings, now=now, held=held, event_id=event_id, minute=minute)
    # ↻'s picks and ↻ all's are mostly pages: within what Telegram's pace (PAGES_PER_MINUTE) leaves this minute too
    asking = {a.guid for a in dplan.ask}
    paging = sum(1 for r in dplan.state.followed if r.guid in asking and pages(r.event, r.action))
    room = 0 if held is not None or g.every is None else max(0, min(settings.sweep_max_redeliveries - len(dplan.ask),
                                                                    deliveries.PAGES_PER_MINUTE - paging))
    asked = frozenset(r.guid for r in dplan.state.followed if r.asked)
    hplan = health.plan(g.health, _seen(g, fresh, dplan, waiting), g.job, g.job_page, g.shown,
                        health.Where(settings.advanced_page, now, settings.zone, g.moved), room=room, asked=asked)
    again = tuple(to_deliver_again(g.shown, room - len(hplan.picks))) if g.again_all else ()
    again_pending = g.again_all and len(again) < len(to_deliver_again(g.shown))
    closed = dplan.change.closed + hplan.closed
    opened = named({**dplan.change.opened, **hplan.opened}, g.shown, g.names, closed)
    state = deliveries.with_picks(dplan.state, hplan.picks, now)
    state = replace(state, alarm_due=state.alarm_due or bool(opened or closed))
    waiting = _waiting_after(g, waiting, pending=hplan.job_pending or again_pending, released=released, now=now)
    return Planned(replace(dplan, state=state), hplan, again, again_pending, waiting, opened, closed,
                   recovery.redeliveries_held_since(g.waiting))


def _decision(g: Gathered, known: deliveries.Known, settings: Settings, *, now: float, held: float | None,
              event_id: str | None, minute: bool) -> deliveries.Plan:
    """The decision's plan; a run that read no list changes nothing but the time it ran."""
    if g.every is None:
        return deliveries.unchanged(g.state, now, event_id)
    before = recovery.held_since(g.waiting)
    # A hold that ended (the check's release, or an answer this run read): what was asked during it does not
    # count; this run's own asks do, queued for this minute (`pace`), so the hold ends before it.
    span = (before, max(before, now // 60 * 60 - 1)) if before is not None and held is None else None
    return deliveries.plan(g.state, replace(known, held=held, released=span), settings, now=now, acts_on=acts_on,
                           pages=pages, event_id=event_id, minute=minute)


def _seen(g: Gathered, fresh: list[Any], dplan: deliveries.Plan, waiting: Waiting | None) -> health.Seen:
    """What pager's health weighs of this run: whether GitHub served the list (None: the run could not ask),
    the attempts read, the refusals, what GitHub forgot, and the hold after the run."""
    served = None if g.every is None and g.not_served is None else g.not_served is None
    held = recovery.held_since(waiting)
    return health.Seen(served=served, cause=g.not_served or "", attempts=tuple(fresh), refusals=g.refusals,
                       refusers_answer=g.refusers_answer,
                       forgotten=tuple(g.shown[k] for k in dplan.change.forgotten if k in g.shown) + _lost_first(g, dplan),
                       unread=next(((gap.since, gap.until) for gap in dplan.gaps), None),
                       held=None if held is None or waiting is None else (waiting.services, held))


def _lost_first(g: Gathered, dplan: deliveries.Plan) -> tuple[Mapping[str, Any], ...]:
    """The delivery whose failure began a hold that ends now, when GitHub forgot it unread meanwhile (a gap
    covers the hold's start): named, as a forgotten entry is (the others of the gap are said as its span)."""
    first = g.waiting.first if g.waiting else None
    if not first or g.waiting is None or not any(gap.since <= g.waiting.since <= gap.until for gap in dplan.gaps):
        return ()
    return ({"thing": first.get("thing") or "", "url": first.get("url") or "", "event": first.get("event") or "",
             "order": iso(g.waiting.since)},)


def _waiting_after(g: Gathered, waiting: Waiting | None, *, pending: bool, released: bool, now: float) -> Waiting | None:
    """What waits after the run: "any" besides while a ↻ job or a pass of the list goes on; a release whose run
    read nothing waits a little before the check tries again."""
    if g.every is None and released:
        return recovery.retry_later(g.waiting, now)
    complete = g.every is None or not g.every.scan.under_way  # a list not read is the next scheduled run's
    return recovery.keep_sweeping(waiting, pending=pending, complete=complete, now=now)


# -- the run ------------------------------------------------------------------------------------------


def run_sweep(services: Services, *, now: float, run_id: str, seconds: float = RUN_SECONDS, event_id: str | None = None,
              released: bool = False, probes: tuple[Done, ...] = ()) -> dict[str, Any]:
    """One run of the sweep; returns its summary (also logged as the "sweep run" line). `event_id` is the
    scheduled event's id (a duplicate invocation steps aside); `released` and `probes`: the check found every
    held service answering, and the followed events its probe asked for. The run holds the sweep's lease
    (pager.sweep.lease) from its start to its end: nothing it does outside (a ping, a probe, an ask, an edit)
    happens while another invocation asks GitHub for anything."""
    with deadline.within(seconds):
        taken = _lease(services, run_id, now)
        if taken is None:
            summary = {"run_id": run_id, "outcome": "skipped: another invocation holds the sweep's lease", "calls_used": 0}
        else:
            try:
                summary = _run(services, now=now, run_id=run_id, event_id=event_id, released=released, probes=probes,
                               minute=taken[1])
            finally:
                lease.give_back(services, taken[0], services.now())
    outcome = str(summary.get("outcome", ""))
    level = logger.error if outcome.startswith("aborted") else logger.warning if outcome.startswith("skipped") else logger.info
    level("sweep run", extra=summary)
    return summary


def _lease(services: Services, run_id: str, now: float) -> tuple[Record, bool] | None:
    """The sweep's lease for this run, and whether this minute's asks are the run's; a check's asks hold it a
    few seconds: waited for, once."""
    minute = now // 60 * 60
    try:
        taken = lease.take_for_run(services, run_id, now, lease.RUN_SECONDS, minute)
        if taken is None and lease.holder(services, now).startswith("check"):
            services.sleep(lease.CHECK_SECONDS)
            taken = lease.take_for_run(services, run_id, services.now(), lease.RUN_SECONDS, minute)
    except StoreUnavailable:
        return None
    return taken


def _run(services: Services, *, now: float, run_id: str, event_id: str | None, released: bool,
         probes: tuple[Done, ...], minute: bool) -> dict[str, Any]:
    settings = services.settings
    calls = Calls(services)
    summary: dict[str, Any] = {"run_id": run_id, "call_budget": settings.sweep_call_budget}
    try:
        items = Items.load(services)
        if event_id is not None and event_id == items[deliveries.ITEM].data.get("last_event"):
            return {**summary, "outcome": "skipped: a duplicate invocation of the run that saved the state", "calls_used": 0}
        state, loaded = items.state(services, run_id)
        # pager's own endpoint, observed: a scheduled run pings it; a run the check released, it pinged already
        own = True if released else recovery.own_endpoint(services, f"ping-{run_id}")
        asked = list(probes)
        released = released or _answering(services, items.waiting, state, run_id, asked)
        state = deliveries.with_probes(state, asked, now)
        minute = minute and not asked  # a probe asked in this minute: what was queued for it waits its turn
        gathered = gather(services, items, calls, state, now, run_id)
        planned = plan(gathered, settings, now=now, released=released, event_id=event_id, own=own, minute=minute)
        # what the entries the plan opens were about, and those shown unnamed, read; then planned with their names
        gathered = replace(gathered, names=read_names(services, {**planned.opened, **gathered.shown}, calls))
        planned = plan(gathered, settings, now=now, released=released, event_id=event_id, own=own, minute=minute)
        head = planned.deliveries.state
        committed, loaded = followed.commit(services, items[deliveries.ITEM], head.to_data(), head.followed, loaded, run_id)
    except Conflict:
        return {**summary, "outcome": "skipped: another run committed first", "calls_used": calls.used}
    except StoreUnavailable as exc:
        return {**summary, "outcome": "aborted: the table did not answer", "error": str(exc), "calls_used": calls.used}
    for gap in planned.deliveries.gaps:
        logger.warning("reach gap", extra={"run_id": run_id, **gap.to_log()})
    done = carry_out(services, planned.effects, calls, run_id)
    gathered = replace(gathered, releases=_settle_releases(services, gathered.looked, now, run_id))
    saved = _save(services, items, (committed, loaded), planned, gathered, done, now, run_id)
    summary.update(_summary(gathered, planned, done, calls, saved, waiting_after(planned, done, now)))
    if gathered.every is not None and gathered.not_served is None:
        count("SweepCompleted")  # the dead man's switch: a run that read the list (SweepSilentAlarm)
    count("ReachGaps", len(planned.deliveries.gaps))
    count("AlarmNotChanged", int(summary["alarm"].startswith("waiting: ")))
    return summary


def _answering(services: Services, waiting: Waiting | None, state: deliveries.State, run_id: str,
               asked: list[Done]) -> bool:
    """A scheduled run under a hold of Telegram or GitHub probes them as the check would: answering, it
    brings back what was held (pager's own endpoint is judged from the list the run reads). Never before
    the hold says (a rate limit's reset: a probe on another limit would answer, and spend attempts)."""
    if waiting is None or not {"telegram", "github", REDELIVERY} & set(waiting.services):
        return False
    if services.now() < waiting.not_before:
        return False
    return recovery.probe(services, waiting, state, run_id, check=False, asked=asked) is None


def carry_out(services: Services, effects: list[Act], calls: Calls, run_id: str) -> list[Done]:
    """Perform the effects in order: after GitHub's rate limit, no more asks (the check waits as GitHub said);
    the alarm's change only when a call is left for it (else it waits for the next run, `alarm_due`)."""
    done: list[Done] = []
    for effect in effects:
        alarm = isinstance(effect, ChangeAlarm)
        if calls.left(0 if alarm else 1) < 1:  # an ask leaves the alarm's call
            done.append(Done(effect, FAILED, "no call left"))
        elif not alarm and any(d.fate == LIMITED for d in done):
            done.append(Done(effect, FAILED, "GitHub's rate limit"))
        else:
            done.append(act(services, effect, run_id))
    return done


def _save(services: Services, items: Items, committed: tuple[Record, followed.Loaded], planned: Planned, g: Gathered,
          done: list[Done], now: float, run_id: str) -> str:
    """Fold what happened into each item and save it, each on its own; what fails is logged and left to the
    next run (each unit is safe twice)."""
    state = deliveries.fold(planned.deliveries.state, done)
    said = [_save_state(services, committed, state, run_id) if state != planned.deliveries.state else ""]
    said += _save_health(services, items, planned, g, done, now, run_id)
    said.append(_save_waiting(services, items[WAITING_ITEM], waiting_after(planned, done, now), run_id))
    return "; ".join(s for s in said if s) or "saved"


def _save_state(services: Services, committed: tuple[Record, followed.Loaded], state: deliveries.State, run_id: str) -> str:
    """The deliveries unit's state once more, after what its asks became (conditionally on the run's commit),
    tried again while the table throttles, as `_write` does."""
    head, loaded = committed
    for wait in (*RECORD_WAITS, None):
        try:
            followed.commit(services, head, state.to_data(), state.followed, loaded, run_id)
            return ""
        except StoreUnavailable as exc:
            if wait is None:
                return _not_saved(head, exc, run_id)
            services.sleep(wait)
        except Conflict as exc:
            return _not_saved(head, exc, run_id)
    return ""


def _save_health(services: Services, items: Items, planned: Planned, g: Gathered, done: list[Done], now: float,
                 run_id: str) -> list[str]:
    """The health unit's items: where the ↻ job stopped, the health, and ↻ all once it asked for the last."""
    said = []
    failed_picks = {d.effect.guid for d in done if isinstance(d.effect, Redeliver) and d.effect.why == "refused" and d.fate != TOOK}
    job = _job_after(g.job, planned.health.job, failed_picks)
    if job is not None and job != g.job:
        said.append(_write(services, items[health.JOB_ITEM], job.to_data(), run_id, expires_at=int(now + GITHUB_RETENTION)))
    if planned.health.health != g.health:
        said.append(_write(services, items[health.ITEM], planned.health.health.to_data(), run_id))
    all_taken = all(d.fate == TOOK for d in done if isinstance(d.effect, RedeliverEntry))
    if g.again_all and not planned.again_all_pending and all_taken:
        said.append(_write(services, items[ALL_ITEM], {}, run_id, expires_at=int(now + 3600)))
    return said


def waiting_after(planned: Planned, done: list[Done], now: float) -> Waiting | None:
    """What waits once the run is done: its plan's, and GitHub's redeliveries if it failed to take one (a hold
    the run was released from goes on from when it began: said once it lasts, however often it is tried)."""
    return merged(planned.waiting, _github_failed(done, now, planned.redelivery_since))


def _job_after(job: health.Job | None, after: health.Job | None, failed: set[str]) -> health.Job | None:
    """Where the ↻ job stopped: back where this run began when GitHub failed to take one of its picks (the
    next run picks it again; those it took it skips, as recent), else past them."""
    if after is None or after == job or not failed or job is None:
        return after
    return replace(after, url=job.url, below=job.below, finished=False, recent=tuple(g for g in after.recent if g not in failed))


def _github_failed(done: list[Done], now: float, since: float | None = None) -> Waiting | None:
    """GitHub failed to take a redelivery (a 5xx, no answer, its rate limit): what waits for it, so that the
    check probes it (by asking for one) and runs the sweep once GitHub takes it (after a rate limit, no
    sooner than GitHub said). An ask the run had no call or no time left for says nothing of GitHub."""
    failed = [d for d in done if isinstance(d.effect, Redeliver) and d.github]
    if not failed:
        return None
    waits = [d.retry_after or 60.0 for d in failed if d.fate == LIMITED]
    return noted(None, REDELIVERY, now, max(waits) if waits else None, since=since)


def _save_waiting(services: Services, record: Record, after: Waiting | None, run_id: str) -> str:
    """The `waiting` item after the run, over a note a delivery wrote meanwhile (what it noted is kept)."""
    read = Waiting.from_data(record.data)
    if read == after:
        return ""
    for wait in (*RECORD_WAITS, None):  # tried again while the table throttles, as `_write` does: a hold
        try:                           # whose end is not saved is ended again by the next check
            services.store.save(record, after.to_data() if after else {})
            return ""
        except Conflict:  # a delivery noted a failure meanwhile: keep what it added
            break
        except StoreUnavailable as exc:
            if wait is None:
                return _waiting_not_saved(exc, run_id)
            services.sleep(wait)
    try:
        now = services.store.load(SWEEP_KEY, WAITING_ITEM)
    except StoreUnavailable as exc:
        return _waiting_not_saved(exc, run_id)
    both = merged(after, recovery.noted_since(read, Waiting.from_data(now.data)))
    return _write(services, now, both.to_data() if both else {}, run_id)


def _waiting_not_saved(exc: Exception, run_id: str) -> str:
    logger.warning("what waits not saved", extra={"run_id": run_id, "error": type(exc).__name__})
    return "what waits not saved"


def _write(services: Services, record: Record, data: dict[str, Any], run_id: str, expires_at: int | None = None) -> str:
    """Save one of the run's items after its commit, tried again twice while the table throttles
    (the write is conditional on the version the run read: a retry never writes over another run's)."""
    for wait in (*RECORD_WAITS, None):
        try:
            services.store.save(record, data, expires_at=expires_at)
            return ""
        except StoreUnavailable as exc:
            if wait is None:
                return _not_saved(record, exc, run_id)
            services.sleep(wait)
        except Conflict as exc:
            return _not_saved(record, exc, run_id)
    return ""


def _not_saved(record: Record, exc: Exception, run_id: str) -> str:
    """An item the run could not save. The health item is what the run learned of pager's own health from
    attempts and refusals no later run reads again: said as an error, for what it costs."""
    if record.item == health.ITEM:
        logger.error("pager's health not saved", extra={"run_id": run_id, "error": type(exc).__name__,
                                                        "lost": "what this run read of pager's own health"})
        return f"{record.item} not saved: what this run read of pager's own health is lost"
    logger.warning("sweep item not saved", extra={"run_id": run_id, "item": record.item, "error": type(exc).__name__})
    return f"{record.item} not saved: the next run does it again"


def _summary(g: Gathered, p: Planned, done: list[Done], calls: Calls, saved: str, after: Waiting | None) -> dict[str, Any]:
    state = p.deliveries.state
    return {
        "outcome": _outcome(g),
        **_reading(g, state),
        **_fates(done),
        "queued": sum(1 for r in state.followed if r.due > (state.ran_at or 0)),
        **_entries(g, p, done),
        "calls_used": calls.used,
        "reach_gaps": [gap.to_log() for gap in p.deliveries.gaps],
        "decisions": dict(p.deliveries.counts),
        "releases_checked": g.releases,
        "refused_job": _job_line(p.health),
        "recovery": _recovery_line(g.waiting, after),
        "state": saved,
        "state_bytes": state.encoded_size(),
    }


def _reading(g: Gathered, state: deliveries.State) -> dict[str, Any]:
    every, failures = g.every or Read(), g.failures or Read()
    return {"pages": {"all": every.pages, "failures": failures.pages}, "pass": "under way" if state.every.under_way else "read",
            "deliveries_seen": len(every.attempts) + len(failures.attempts)}


def _fates(done: list[Done]) -> dict[str, int]:
    """What became of the run's asks: the decision's redeliveries, the ↻ job's picks, ↻ all's."""
    asks = [d.fate for d in done if isinstance(d.effect, Redeliver) and d.effect.why == "redelivery"]
    picks = [d.fate for d in done if isinstance(d.effect, Redeliver) and d.effect.why == "refused"]
    return {"redeliveries": asks.count(TOOK), "redeliveries_refused": asks.count("refused"),
            "redeliveries_failed": len(asks) - asks.count(TOOK) - asks.count("refused"),
            "refused_delivered_again": picks.count(TOOK),
            "all_delivered_again": sum(1 for d in done if isinstance(d.effect, RedeliverEntry) and d.fate == TOOK)}


def _entries(g: Gathered, p: Planned, done: list[Done]) -> dict[str, Any]:
    change = next((d for d in done if isinstance(d.effect, ChangeAlarm)), None)
    if change is None:
        return {"entries_opened": 0, "entries_closed": 0, "entries_open": len(g.shown), "alarm": "unchanged"}
    if change.fate != TOOK:
        return {"entries_opened": 0, "entries_closed": 0, "entries_open": len(g.shown), "alarm": f"waiting: {change.reason}"}
    return {"entries_opened": len(set(p.opened) - set(g.shown)), "entries_closed": len(p.closed),
            "entries_open": len(g.shown) + len(set(p.opened) - set(g.shown)) - len(p.closed), "alarm": "applied"}


def _job_line(hplan: health.Plan) -> str:
    job = hplan.job
    if job is None or not job.under_way:
        return "none"
    if hplan.job_pending:
        return "pending"
    return "waiting for the secret" if job.status == health.SECRET_REFUSED else "waiting for GitHub or Telegram"


def _outcome(g: Gathered) -> str:
    if g.not_served == "key":
        return "aborted: the app's private key cannot sign a token (GITHUB_PRIVATE_KEY)"
    answer = {"link": "its links to the next pages refused"}.get(g.not_served or "", g.not_served) or "5xx or no answer"
    if g.not_served is not None and g.every is not None:
        return f"read in part: GitHub stopped serving the deliveries list ({answer}); the next run reads on"
    if g.not_served is not None:
        return f"aborted: GitHub did not serve the deliveries list ({answer})"
    return "done" if g.every is not None else "aborted: no call left for the deliveries list, or the run's deadline passed"


def _recovery_line(before: Waiting | None, after: Waiting | None) -> str:
    if after is not None:
        return f"waiting: {', '.join(after.services)}"
    return "recovered" if before is not None else "nothing waits"


# -- the every-minute check ----------------------------------------------------------------------------


def check(services: Services, *, now: float, run_id: str, seconds: float) -> dict[str, Any]:
    """The every-minute check: what came due without an event (pager.signals.due); then, unless something is
    held, the redeliveries the last run queued for this minute; then, with something waiting, a probe of each
    failed service and a run of the sweep as soon as all answer (and each minute while a ↻ job or a pass of
    the list goes on). The minutes are the clock's (`now` to the whole minute): one check a minute asks for
    what is due in it, whatever second the schedule fires at."""
    attended = _attend(services, now, run_id)
    items = Items.load(services)
    waiting, queue = items.waiting, items.queue
    asked = {} if recovery.held_since(waiting) is not None else _this_minute(services, queue, now, seconds, run_id)
    if waiting is not None:
        summary = _held(services, items, waiting, now, run_id, seconds, attended)
        return {**summary, "redeliveries": summary.get("redeliveries", 0) + asked.get("redeliveries", 0)} if asked else summary
    if not asked:
        later = any(r.due > now // 60 * 60 for r in queue)
        return {"run_id": run_id, "outcome": "nothing due this minute" if later else "nothing waits", **attended}
    summary = {"run_id": run_id, "outcome": "redeliveries asked", **asked, **attended}
    logger.info("sweep check", extra=summary)
    return summary


def _this_minute(services: Services, queue: tuple[deliveries.Followed, ...], now: float, seconds: float,
                 run_id: str) -> dict[str, int]:
    """The redeliveries due in this minute, asked for under the sweep's lease (taken for this minute: another
    check of the same minute, or a run, asks for none of them again): how many GitHub took, how many not ({}:
    none due, or the minute is another's)."""
    minute = now // 60 * 60
    asks = deliveries.due_now(queue, minute - 60, minute)
    if not asks:
        return {}
    if lease.take(services, run_id, now, lease.CHECK_SECONDS, minute=minute) is None:
        return {"redeliveries": 0, "minute_taken": 1}
    with deadline.within(min(seconds, lease.CHECK_SECONDS)):
        done = _ask_paced(services, asks, minute, run_id)
    return {"redeliveries": sum(d.fate == TOOK for d in done), "redeliveries_failed": sum(d.fate != TOOK for d in done)}


def _held(services: Services, items: Items, waiting: Waiting, now: float, run_id: str, seconds: float,
          attended: Mapping[str, Any]) -> dict[str, Any]:
    if now < waiting.not_before:
        return {"run_id": run_id, "outcome": "waiting: retry later", **attended}
    # a probe of GitHub's redeliveries may take a held event in turn: only it reads the followed rows
    state = items.state(services, run_id)[0] if REDELIVERY in waiting.services else deliveries.State.from_data(items[deliveries.ITEM].data)
    asked: list[Done] = []
    asks = REDELIVERY in waiting.services and recovery.probe_minute(now - waiting.since)  # a probe asks GitHub
    if asks and lease.take(services, run_id, now, lease.CHECK_SECONDS) is None:
        return {"run_id": run_id, "outcome": "waiting: another invocation holds the sweep's lease", **attended}
    failing = recovery.probe(services, waiting, state, run_id, asked=asked)
    if failing is not None:
        summary = {"run_id": run_id, "outcome": f"waiting: {failing} still failing", "since": waiting.since, **attended}
        logger.info("recovery check", extra=summary)
        return summary
    ran = run_sweep(services, now=now, run_id=run_id, seconds=seconds, released=True, probes=tuple(asked))
    return {**ran, **attended}  # what came due this minute, said with the run it released


def _ask_paced(services: Services, asks: tuple[Redeliver, ...], minute: float, run_id: str) -> list[Done]:
    """This minute's redeliveries. GitHub failing one stops them and is noted as what waits, from this minute
    on (the sweep's runs then see the minute's asks as not made): the check probes GitHub's redeliveries, and
    runs the sweep once GitHub takes one (after a rate limit, no sooner than GitHub said)."""
    done: list[Done] = []
    for ask in asks:
        result = act(services, ask, run_id)
        done.append(result)
        if result.fate in (FAILED, LIMITED):  # the rest wait for the next minute
            if result.github:  # (out of time, or the app's key: nothing GitHub should be probed for)
                note(services, REDELIVERY, result.retry_after if result.fate == LIMITED else None, since=minute - 1)
            break
    return done


def _attend(services: Services, now: float, run_id: str) -> dict[str, Any]:
    """What came due this minute (pager.signals.due); a failure is logged, and the next minute tries again."""
    try:
        with deadline.within(ATTEND_SECONDS):
            attended = due.tick(services, now)
    except PagerError as exc:
        logger.warning("attention not checked", extra={"run_id": run_id, "error": type(exc).__name__, "reason": str(exc)})
        return {}
    if attended:
        logger.info("attention", extra={"run_id": run_id, **attended})
    return attended

