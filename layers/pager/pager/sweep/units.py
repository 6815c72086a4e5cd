"""The sweep's units, in one table driven by one loop (pager.sweep.run), as the webhook's SIGNALS table
drives the signals. Each unit, in the table's order:

- gathers what it must read (GitHub, Telegram, the table): before the run commits, and nothing else, so
  nothing acts outside a plan that was committed;
- plans, pure, from what the units gathered and the plans before its own;
- folds what happened (the run's asks and the alarm's change, carried out after the commit) into its items.

    unit        gathers                                          plans                          folds into
    hold        the ping of pager's endpoint, the held services  what holds after the run       –
    releases    the releases waiting for Merge, read again       –                              their records
    deliveries  the alarm's entries, GitHub's lists              the decision (asks, entries)   `deliveries`
    health      refusals, whether the refusers answer, ↻ job     pager's own health, ↻'s picks  `health`, `refused-again`
    again_all   ↻ all pressed                                    its picks                      `again-all`
    entries     what the entries to open were about             the alarm's change             –
    waiting     –                                                what waits after the run       `waiting`

A unit reads only what the units before it gathered and planned: the decision needs the hold, pager's health
the decision's asks (one minute's pace for all), the entries' names what the decision and the health open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .. import chat, deadline, words
from ..engine.effects import Redeliver
from ..engine.perform import LIMITED, TOOK, Done
from ..errors import ConfigError, Conflict, DeadlineExceeded, GitHubRefused, PagerError, StoreUnavailable
from ..observe import logger
from ..permissions import missing_permissions, needed_permissions
from ..refusals import KEY as REFUSALS_KEY
from ..services import Services
from ..settings import Settings
from ..signals import acts_on, alarm, pages, release
from ..signals.alarm import delivery_times, entries_now, to_deliver_again
from ..store import RECORD_WAITS, Record
from ..values import field as payload_field
from ..values import iso, text
from ..waiting import ANY, REDELIVERY, SWEEP_KEY, Waiting, merged, noted
from ..waiting import ITEM as WAITING_ITEM
from . import deliveries, followed, health, recovery
from .acts import Act, ChangeAlarm, RedeliverEntry
from .lists import GITHUB_RETENTION, PAGES, PER_PAGE, Read, Scan, attempts_of
from .presses import ALL_ITEM

NAMED_ENTRIES = 5  # entries a run names the thing of (a read of its delivery each)
RELEASE_CALLS = 4  # a release read again: a token, the pull request, once more if GitHub computes it, its check runs if unstable
PROBE_CALLS = 4  # whether the refusers answer: getChatMember and getChat, and two installations read


# -- what a run reads with -------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class Context:
    """One run as its units see it. Gathers and folds use `services` (the I/O edge); plans never do."""

    services: Services
    items: Items
    calls: Calls
    now: float
    run_id: str
    event_id: str | None = None
    released: bool = False  # the check found every held service answering
    probes: tuple[Done, ...] = ()  # the deliveries the check asked for as its probe of GitHub's redeliveries
    minute: bool = False  # this minute's asks are the run's (pager.sweep.lease)
    state: deliveries.State = deliveries.State()  # the deliveries unit's, as the run read it (the run's head)
    loaded: followed.Loaded = followed.Loaded()  # the chunks its rows were read from

    @property
    def settings(self) -> Settings:
        return self.services.settings


@dataclass(frozen=True)
class Gathered:
    """Everything the units read before they plan (each field its unit's: the table)."""

    state: deliveries.State = deliveries.State()  # (the run's reading, with the probes' asks folded in: hold)
    waiting: Waiting | None = None  # hold: what waited when the run began
    own: bool | None = None  # hold: pager's own endpoint answered its ping (None: not asked)
    released: bool = False  # hold: every held service answers again (the check's probe, or the run's)
    probes: tuple[Done, ...] = ()  # hold: the deliveries asked for as probes of GitHub's redeliveries
    looked: tuple[release.LookedAgain, ...] = ()  # releases: those waiting for Merge, read again
    shown: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # deliveries: ⚙️ pager's open entries
    every: Read | None = None  # deliveries: None when GitHub did not serve it, or no call was left for it
    failures: Read | None = None
    not_served: str | None = None  # deliveries: GitHub's answer when it did not serve a list (a key of
    # health.MEANING); None: it did, or the run could not ask (no call left, its deadline: `every` None all the same)
    job: health.Job | None = None  # health: the ↻ job of refused deliveries, and its next page
    job_page: health.JobPage | None = None
    refusals: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    refusers_answer: bool = False
    moved: Mapping[str, Any] | None = None
    health: health.Health = health.Health()  # health: as the run before left it (last: it names its module)
    again_all: bool = False  # again_all: ↻ all was pressed
    names: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # entries: what unnamed entries were about


@dataclass(frozen=True)
class Planned:
    """What the run does: each unit's plan (each field its unit's), the effects in order, what to save."""

    hold: Waiting | None = None  # hold: what holds after the run, before what its asks and jobs add
    held: float | None = None  # since when redeliveries are held (None: they are not)
    deliveries: deliveries.Plan = deliveries.Plan(deliveries.State(), (), deliveries.EntriesChange({}, (), ()), {})
    fresh: tuple[Any, ...] = ()  # deliveries: the attempts this run read
    room: int = 0  # deliveries: what this minute's pace leaves for ↻'s picks and ↻ all's
    health: health.Plan = health.Plan(health.Health(), {}, (), (), None)
    again_all: tuple[tuple[str, int], ...] = ()  # again_all: (entry key, attempt) to ask for in this run
    again_all_pending: bool = False
    opened: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # entries: the alarm's change
    closed: tuple[str, ...] = ()
    waiting: Waiting | None = None  # waiting: what waits after the run
    redelivery_since: float | None = None  # a hold of GitHub's redeliveries the run began under: since when

    @property
    def effects(self) -> list[Act]:
        asks: list[Act] = [*self.deliveries.ask, *self.health.asks]
        asks += [RedeliverEntry(key, delivery_id) for key, delivery_id in self.again_all]
        change = self.opened or self.closed or self.deliveries.state.alarm_due
        return asks + ([ChangeAlarm(self.opened, self.closed)] if change else [])


@dataclass(frozen=True)
class Folded:
    """What a unit's fold says: what it could not save, and its lines of the run's summary."""

    not_saved: tuple[str, ...] = ()
    summary: Mapping[str, Any] = field(default_factory=dict)


Gather = Callable[[Context, Gathered, Planned], Mapping[str, Any]]
Plan = Callable[[Gathered, Planned, "Planning"], Mapping[str, Any]]
Committed = tuple[Record, followed.Loaded]  # the head as the run committed it, and its chunks
Fold = Callable[[Context, Gathered, Planned, list[Done], Committed], Folded]


@dataclass(frozen=True)
class Planning:
    """What a plan may know besides what was gathered: the settings and the run's own facts, no services."""

    settings: Settings
    now: float
    event_id: str | None = None
    minute: bool = False


@dataclass(frozen=True)
class Unit:
    name: str
    gather: Gather
    plan: Plan
    fold: Fold


def _nothing(*_: Any) -> Mapping[str, Any]:
    return {}


def _folds_nothing(*_: Any) -> Folded:
    return Folded()


def gather_and_plan(ctx: Context) -> tuple[Gathered, Planned]:
    """Each unit in turn gathers, then plans (its gather may read what the plans before it decided)."""
    g, p = Gathered(), Planned()
    planning = Planning(ctx.settings, ctx.now, ctx.event_id, ctx.minute)
    for unit in UNITS:
        g = replace(g, **unit.gather(ctx, g, p))
        p = replace(p, **unit.plan(g, p, planning))
    return g, p


def plan(g: Gathered, planning: Planning) -> Planned:
    """Every unit's plan from what was gathered, pure (what `gather_and_plan` decides, its reads given)."""
    p = Planned()
    for unit in UNITS:
        p = replace(p, **unit.plan(g, p, planning))
    return p


def fold(ctx: Context, g: Gathered, p: Planned, done: list[Done], committed: Committed) -> Folded:
    """Each unit folds what happened into its items, each on its own: what fails is logged and left to the
    next run (each unit is safe twice)."""
    folded = [unit.fold(ctx, g, p, done, committed) for unit in UNITS]
    return Folded(tuple(s for f in folded for s in f.not_saved if s), {k: v for f in folded for k, v in f.summary.items()})


# -- the units -------------------------------------------------------------------------------------------
# hold: pager's own endpoint and the services held


def _gather_hold(ctx: Context, g: Gathered, p: Planned) -> Mapping[str, Any]:
    """pager's own endpoint, observed: a scheduled run pings it (a run the check released, the check pinged
    already); a hold of Telegram or GitHub is probed as the check would (`_answering`). The followed events
    asked for as a probe are the decision's own asks (`deliveries.with_probes`)."""
    services, waiting = ctx.services, ctx.items.waiting
    own = True if ctx.released else recovery.own_endpoint(services, f"ping-{ctx.run_id}")
    asked = list(ctx.probes)
    released = ctx.released or _answering(services, waiting, ctx.state, ctx.run_id, asked)
    return {"waiting": waiting, "own": own, "released": released, "probes": tuple(asked),
            "state": deliveries.with_probes(ctx.state, asked, ctx.now)}


def _plan_hold(g: Gathered, p: Planned, planning: Planning) -> Mapping[str, Any]:
    hold = recovery.hold(g.waiting, released=g.released, now=planning.now, own=g.own)
    return {"hold": hold, "held": recovery.held_since(hold)}


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


# releases: those waiting for Merge that no event may make ready


def _gather_releases(ctx: Context, g: Gathered, p: Planned) -> Mapping[str, Any]:
    return {"looked": _look_again(ctx.services, ctx.calls, ctx.run_id)}


def _fold_releases(ctx: Context, g: Gathered, p: Planned, done: list[Done], committed: Committed) -> Folded:
    return Folded(summary={"releases_checked": _settle_releases(ctx.services, g.looked, ctx.now, ctx.run_id)})


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


# deliveries: the decision


def _gather_deliveries(ctx: Context, g: Gathered, p: Planned) -> Mapping[str, Any]:
    every, failures, cause = read_lists(ctx.services, g.state, ctx.calls, ctx.now, ctx.run_id,
                                        keep=health_calls(ctx.items))
    return {"shown": entries_now(ctx.services, alarm.CONTROL), "every": every, "failures": failures, "not_served": cause}


def _plan_deliveries(g: Gathered, p: Planned, planning: Planning) -> Mapping[str, Any]:
    """The decision, and what this minute's pace leaves: ↻'s picks and ↻ all's are mostly pages, within what
    Telegram's pace (PAGES_PER_MINUTE) leaves this minute too."""
    settings = planning.settings
    known = deliveries.Known(g.every, g.failures, delivery_times(g.shown))
    dplan = _decision(g, known, planning, held=p.held)
    asking = {a.guid for a in dplan.ask}
    paging = sum(1 for r in dplan.state.followed if r.guid in asking and pages(r.event, r.action))
    room = 0 if p.held is not None or g.every is None else max(0, min(settings.sweep_max_redeliveries - len(dplan.ask),
                                                                      deliveries.PAGES_PER_MINUTE - paging))
    return {"deliveries": dplan, "fresh": tuple(deliveries.fresh_attempts(g.state, known)), "room": room}


def _decision(g: Gathered, known: deliveries.Known, planning: Planning, *, held: float | None) -> deliveries.Plan:
    """The decision's plan; a run that read no list changes nothing but the time it ran. A probe asked in this
    minute: what an earlier plan queued for it waits its turn."""
    now = planning.now
    if g.every is None:
        return deliveries.unchanged(g.state, now, planning.event_id)
    before = recovery.held_since(g.waiting)
    # A hold that ended (the check's release, or an answer this run read): what was asked during it does not
    # count; this run's own asks do, queued for this minute (`pace`), so the hold ends before it.
    span = (before, max(before, now // 60 * 60 - 1)) if before is not None and held is None else None
    # GitHub's redeliveries held alone: pager answered what GitHub delivered all the same, and that attempt counts
    counts = g.waiting is not None and set(g.waiting.services) <= {REDELIVERY, ANY}
    return deliveries.plan(g.state, replace(known, held=held, released=span, counts=counts), planning.settings, now=now, acts_on=acts_on,
                           pages=pages, event_id=planning.event_id, minute=planning.minute and not g.probes)


def _fold_deliveries(ctx: Context, g: Gathered, p: Planned, done: list[Done], committed: Committed) -> Folded:
    """The state once more, only when what its asks became changed it (a redelivery GitHub did not take, the
    alarm's change made)."""
    state = deliveries.fold(p.deliveries.state, done)
    return Folded((_save_state(ctx.services, committed, state, ctx.run_id),) if state != p.deliveries.state else ())


class ListNotServed(PagerError):
    """GitHub did not serve a list (a 5xx, a rate limit, a refusal, the deadline): the run asks for nothing,
    and the next run reads on from where this one stopped. `error` is what the page raised."""

    def __init__(self, name: str, error: PagerError, read: Read, *, link: bool = False) -> None:
        super().__init__(f"{name}: {type(error).__name__}")
        self.error = error
        self.read = read
        self.link = link  # GitHub served the head of the list, but not the links between its pages


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


def read_lists(services: Services, state: deliveries.State, calls: Calls, now: float, run_id: str, *,
               keep: int = 0) -> tuple[Read | None, Read | None, str | None]:
    """The every-outcome list as far as its pass goes, then, until it has been read once back to GitHub's
    three days, the failure list; each within its page cap and what the budget leaves for this minute's
    redeliveries, the alarm's change, the entries' names and `keep` calls more (pager's health). What was read is kept when GitHub stops serving
    a list midway (the next run reads on from there); the third value is GitHub's answer then (a key of
    health.MEANING; None: it served, or the run's own deadline ended the reading)."""
    settings = services.settings
    reserve = list_reserve(settings) - 1 + keep
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


def health_calls(items: Items) -> int:
    """The calls pager's health may want of a run: whether the refusers answer, while refused signals wait; the
    ↻ job's next page, while it is under way. The lists leave them."""
    own, job = health.Health.from_data(items[health.ITEM].data), health.Job.from_data(items[health.JOB_ITEM].data)
    return (PROBE_CALLS if own.refusals.count else 0) + (1 if job is not None and job.under_way else 0)


def _cause(error: PagerError) -> str:
    """What a list's failure means, as pager's own health keys it."""
    if isinstance(error, ConfigError):
        return "key"
    status = getattr(error, "status", None)
    return str(status) if isinstance(status, int) and 400 <= status < 500 else ""


# health: pager's own health and the ↻ job of refused deliveries


def _gather_health(ctx: Context, g: Gathered, p: Planned) -> Mapping[str, Any]:
    services, items, settings = ctx.services, ctx.items, ctx.settings
    own = health.Health.from_data(items[health.ITEM].data)
    after = health.refusals_after(g.state.ran_at, ctx.now)
    refusals = tuple((r.item, r.data) for r in services.store.items(REFUSALS_KEY, after=after))
    job = health.Job.from_data(items[health.JOB_ITEM].data)
    moved = chat.move_of(services.store.load(chat.KEY).data, settings.telegram_chat_id)
    works = _refusers_answer(services, own, refusals, moved, ctx.calls, ctx.run_id)
    spare = ctx.calls.left(list_reserve(settings)) > 0  # (the least budget the settings accept leaves none)
    job_page = None if recovery.held_since(g.waiting) or not spare else _job_page(services, job, ctx.run_id)
    return {"health": own, "refusals": refusals, "refusers_answer": works, "job": job, "job_page": job_page, "moved": moved}


def _plan_health(g: Gathered, p: Planned, planning: Planning) -> Mapping[str, Any]:
    """pager's health and its ↻ picks with what this minute leaves; each pick followed from now on."""
    settings, now = planning.settings, planning.now
    asked = frozenset(r.guid for r in p.deliveries.state.followed if r.asked)
    hplan = health.plan(g.health, _seen(g, p), g.job, g.job_page, g.shown,
                        health.Where(settings.advanced_page, now, settings.zone, g.moved), room=p.room, asked=asked)
    state = deliveries.with_picks(p.deliveries.state, hplan.picks, now)
    return {"health": hplan, "deliveries": replace(p.deliveries, state=state)}


def _fold_health(ctx: Context, g: Gathered, p: Planned, done: list[Done], committed: Committed) -> Folded:
    """Where the ↻ job stopped, and the health."""
    said = []
    failed_picks = {d.effect.guid for d in done if isinstance(d.effect, Redeliver) and d.effect.why == "refused" and d.fate != TOOK}
    job = health.job_after(g.job, p.health.job, failed_picks)
    if job is not None and job != g.job:
        said.append(_write(ctx.services, ctx.items[health.JOB_ITEM], job.to_data(), ctx.run_id,
                           expires_at=int(ctx.now + GITHUB_RETENTION)))
    if p.health.health != g.health:
        said.append(_write(ctx.services, ctx.items[health.ITEM], p.health.health.to_data(), ctx.run_id))
    return Folded(tuple(said))


def _seen(g: Gathered, p: Planned) -> health.Seen:
    """What pager's health weighs of this run: whether GitHub served the list (None: the run could not ask),
    the attempts read, the refusals, what GitHub forgot, and the hold after the run."""
    served = None if g.every is None and g.not_served is None else g.not_served is None
    dplan, waiting, held = p.deliveries, p.hold, p.held
    return health.Seen(served=served, cause=g.not_served or "", attempts=p.fresh, refusals=g.refusals,
                       refusers_answer=g.refusers_answer,
                       forgotten=tuple(g.shown[k] for k in dplan.change.forgotten if k in g.shown) + _lost_first(g, dplan),
                       unread=next(((gap.since, gap.until) for gap in dplan.gaps), None),
                       held=None if held is None or waiting is None else health.Held(waiting.services, held, waiting.not_before))


def _lost_first(g: Gathered, dplan: deliveries.Plan) -> tuple[Mapping[str, Any], ...]:
    """The delivery whose failure began a hold that ends now, when GitHub forgot it unread meanwhile (a gap
    covers the hold's start): named, as a forgotten entry is (the others of the gap are said as its span)."""
    first = g.waiting.first if g.waiting else None
    if not first or g.waiting is None or not any(gap.since <= g.waiting.since <= gap.until for gap in dplan.gaps):
        return ()
    return ({"thing": first.get("thing") or "", "url": first.get("url") or "", "event": first.get("event") or "",
             "order": iso(g.waiting.since)},)


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
        repositories = (services.settings.control_repository, health.refused_on(refusals, record.repository))
        return "github" not in refusing or all(_installed_with_all(services, r) for r in dict.fromkeys(filter(None, repositories)))
    except PagerError as exc:
        logger.info("refusers not answering yet", extra={"run_id": run_id, "error": type(exc).__name__})
        return False


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


# again_all: ↻ Deliver all again


def _gather_again_all(ctx: Context, g: Gathered, p: Planned) -> Mapping[str, Any]:
    return {"again_all": bool(ctx.items[ALL_ITEM].data.get("asked_at"))}


def _plan_again_all(g: Gathered, p: Planned, planning: Planning) -> Mapping[str, Any]:
    """↻ all's picks: what the minute leaves after the decision's asks and the ↻ job's picks, but the entries of
    events the decision asks for in this run already (one at its last chance is named and asked for)."""
    if not g.again_all:
        return {}
    asked = {f"{alarm.DELIVERY_PREFIX}{r.guid}" for r in p.deliveries.ask}
    shown = {key: entry for key, entry in g.shown.items() if key not in asked}
    again = tuple(to_deliver_again(shown, p.room - len(p.health.picks)))
    return {"again_all": again, "again_all_pending": len(again) < len(to_deliver_again(shown))}


def _fold_again_all(ctx: Context, g: Gathered, p: Planned, done: list[Done], committed: Committed) -> Folded:
    """↻ all done once it asked for the last entry, and GitHub took every one."""
    all_taken = all(d.fate == TOOK for d in done if isinstance(d.effect, RedeliverEntry))
    if g.again_all and not p.again_all_pending and all_taken:
        return Folded((_write(ctx.services, ctx.items[ALL_ITEM], {}, ctx.run_id, expires_at=int(ctx.now + 3600)),))
    return Folded()


# entries: the alarm's change, its entries named


def _gather_entries(ctx: Context, g: Gathered, p: Planned) -> Mapping[str, Any]:
    """What the entries the plans open were about, and those ⚙️ pager shows unnamed: read (no acting)."""
    opened = {**p.deliveries.change.opened, **p.health.opened}
    return {"names": read_names(ctx.services, {**opened, **g.shown}, ctx.calls)}


def _plan_entries(g: Gathered, p: Planned, planning: Planning) -> Mapping[str, Any]:
    """The alarm's change: what the decision and pager's health open and close, named; the state says it is due."""
    closed = p.deliveries.change.closed + p.health.closed
    opened = named({**p.deliveries.change.opened, **p.health.opened}, g.shown, g.names, closed)
    state = replace(p.deliveries.state, alarm_due=p.deliveries.state.alarm_due or bool(opened or closed))
    return {"opened": opened, "closed": closed, "deliveries": replace(p.deliveries, state=state)}


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
        if entry is not None and found and key not in out and key not in set(closed):
            out[key] = {**{k: v for k, v in entry.items() if k not in ("state", "at")}, **found,
                        **deliveries.renamed(entry, found)}
    where = {e.get("repository_id"): e["repository"] for e in [*shown.values(), *out.values()] if e.get("repository")}
    for key in opened:
        if key.startswith(alarm.DELIVERY_PREFIX):
            _said_where(out[key], where)
    return out


def _said_where(entry: dict[str, Any], where: Mapping[Any, str]) -> None:
    """A `delivery:` entry's lines, saying its repository by name when the alarm knows it."""
    if not entry.get("repository") and entry.get("repository_id") in where:
        entry["repository"] = where[entry["repository_id"]]
    entry["title"], entry["detail"] = deliveries.delivery_title(entry), deliveries.delivery_detail(entry)


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


# waiting: what waits after the run


def _plan_waiting(g: Gathered, p: Planned, planning: Planning) -> Mapping[str, Any]:
    pending = p.health.job_pending or p.again_all_pending
    return {"waiting": _waiting_after(g, p.hold, pending=pending, released=g.released, now=planning.now),
            "redelivery_since": recovery.redeliveries_held_since(g.waiting)}


def _fold_waiting(ctx: Context, g: Gathered, p: Planned, done: list[Done], committed: Committed) -> Folded:
    after = waiting_after(p, done, ctx.now)
    return Folded((_save_waiting(ctx.services, ctx.items[WAITING_ITEM], after, ctx.run_id),),
                  {"recovery": _recovery_line(g.waiting, after)})


def _waiting_after(g: Gathered, waiting: Waiting | None, *, pending: bool, released: bool, now: float) -> Waiting | None:
    """What waits after the run: "any" besides while a ↻ job or a pass of the list goes on; a release whose run
    read nothing waits a little before the check tries again."""
    if g.every is None and released:
        return recovery.retry_later(g.waiting, now)
    complete = g.every is None or not g.every.scan.under_way  # a list not read is the next scheduled run's
    return recovery.keep_sweeping(waiting, pending=pending, complete=complete, now=now)


def waiting_after(planned: Planned, done: list[Done], now: float) -> Waiting | None:
    """What waits once the run is done: its plan's, and GitHub's redeliveries if it failed to take one (a hold
    the run was released from goes on from when it began: said once it lasts, however often it is tried)."""
    return merged(planned.waiting, _github_failed(done, now, planned.redelivery_since))


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


def _recovery_line(before: Waiting | None, after: Waiting | None) -> str:
    if after is not None:
        return f"waiting: {', '.join(after.services)}"
    return "recovered" if before is not None else "nothing waits"


# -- the table --------------------------------------------------------------------------------------------


UNITS: tuple[Unit, ...] = (
    Unit("hold", _gather_hold, _plan_hold, _folds_nothing),
    Unit("releases", _gather_releases, _nothing, _fold_releases),
    Unit("deliveries", _gather_deliveries, _plan_deliveries, _fold_deliveries),
    Unit("health", _gather_health, _plan_health, _fold_health),
    Unit("again_all", _gather_again_all, _plan_again_all, _fold_again_all),
    Unit("entries", _gather_entries, _plan_entries, _folds_nothing),
    Unit("waiting", _nothing, _plan_waiting, _fold_waiting),
)


# -- saving -----------------------------------------------------------------------------------------------


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
            try:  # what the failed try wrote before its head (a new chunk) is found, and named past
                loaded = followed.load(services, head.data)
            except StoreUnavailable:
                pass
        except Conflict as exc:
            return _not_saved(head, exc, run_id)
    return ""


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
