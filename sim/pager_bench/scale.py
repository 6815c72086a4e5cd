"""A busy fleet's size: the real sweep against a model of pager's endpoint, at N deliveries a day.

`simulate.Replay` sends every delivery through the real webhook handler, which is right for a week of
the fleet's trace but too slow for a million deliveries a day. Here only the sweep is pager's own code:
`pager.sweep.run_sweep` every 900 s with its scheduled event's id (one per run, as EventBridge has it)
and `pager.sweep.run.check` every 60 s, half a minute out of phase, both called through `invoke`, the
one adapter to change when their signatures do. GitHub carries out the redeliveries asked for 2 s after
each run and check (`FakeGitHub.deliver_pending`) and forgets what is older than its three days; it
answers every request within its secondary rate limits (`pager_world.limits.SecondaryLimits`: 403 with
retry-after over them; a scenario may count a redelivery as content-generating, which GitHub's docs leave open).
While an invocation waits (a run waiting out a check's asks), GitHub goes on sending the traffic, as other
invocations of the webhook would answer it meanwhile: the clock never goes back for what arrived in the wait.

The endpoint is a model behind API Gateway's throttle (`pager_world.limits.Throttle`, the template's 50 a
second and burst of 200: 429 over it, before pager runs). It answers 200, or 502 to every attempt while
"pager's endpoint fails" (an outage), or 500 to a share `rate` of the attempts during a steady failure rate
(drawn per guid and attempt, as `fleet.Trace.no_answer` draws). The sweep's signed ping to the URL GitHub
delivers to meets the same throttle and the same outage (a handler failing for a share of attempts answers
a ping). An event pager does not act on (`pager.signals.acts_on`) would be answered 200 "ignored" whenever
pager answers: nothing is lost with it, and it is counted apart.

Traffic: a Poisson stream of `per_day` deliveries a day over ten repositories, its (event, action) mix
the one the fleet's day sends a deployment subscribed to pager's events (`fleet_mix`); in a "burst"
scenario, one quarter hour is instead the fleet's busiest (`busiest_quarter`), each of its events as many
times over as the size is the fleet's day, at its own second. GitHub's list needs only the event, the
action and the repository's id, so that is the whole payload.

Measured per event that failed (an attempt got a 5xx, API Gateway's 429 or no answer) and that pager acts
on: passed (a later attempt passed), named (a `delivery:` entry of the control repository's alarm named it
at some look, after any run or check), said (counted by pager's own alarm as "N events failed ... GitHub no
longer keeps them", up to that number), waiting (the sweep still follows it when the replay ends, and
GitHub keeps it `DRAIN_LIMIT` longer at least: its turn had not come; one GitHub forgets sooner is neither), and neither: lost without a word, the number that must be 0.
Per trouble (the outage, the period with a failure rate, the busiest quarter hour): the minutes from its end
to the last passing attempt of the events that failed in it, and whether all passed within the scenario's
`fix_limit` of it; the table's writes from its start to the replay's end beyond the runs' own (each
scheduled run's commit, and the lease every run and every asking check takes). Per run and check: its
GitHub and Telegram calls (against the call budget), its modelled time (calls times `CALL_SECONDS`, against
the run's deadline `pager.sweep.run.RUN_SECONDS` and the function's timeout), the redeliveries GitHub
carried out per minute, and the largest item of the sweep's own (keys of the kinds `sweep` and
`sweep-followed`) written, in bytes as DynamoDB counts them (its limit is 400 KB). And the redeliveries of
events that had passed already (a pass the sweep did not see), and the most attempts of one event.
"""

from __future__ import annotations

import hashlib
import math
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pager.signals import acts_on
from pager.signals.alarm import CONTROL
from pager.store import encode
from pager.sweep.lease import ITEM as LEASE_ITEM
from pager.sweep.lists import GITHUB_RETENTION
from pager.waiting import SWEEP_KEY
from pager_world.clock import Clock
from pager_world.faults import Faults
from pager_world.github import FakeGitHub
from pager_world.http import HttpResponse, session_for
from pager_world.limits import CONTENT, REDELIVERY, SecondaryLimits, Throttle
from pager_world.store import key_kind
from pager_world.telegram import FakeTelegram

from . import bill, fleet
from .jobs import Job, shared, side_by_side
from .measure import failed, passed
from .outages import OWN, SAID
from .simulate import (
    CHECK_OFFSET,
    GITHUB_API,
    PAGER_HOST,
    REDELIVERY_DELAY,
    SWEEP_EVERY,
    SWEEP_OFFSET,
    TELEGRAM_API,
    bench_settings,
    install_on_fleet,
    join_chat,
    make_services,
    open_delivery_entries,
    quiet,
)

HOUR = 3600.0
SIZES = (10_000, 40_000, 100_000, 250_000)  # deliveries a day (a scenario may name its own)
REPOSITORIES = 10
CHECK_EVERY = 60.0
FIX_LIMIT = 2 * HOUR  # every event that failed in the trouble passed within this of its end (a scenario may say longer)
DRAIN_LIMIT = 2 * HOUR  # a drain longer than this is where it breaks
WRITES_CONSTANT = 5  # writes an outage may cost whatever its size (the hold, its release), beyond the runs' own
WRITES_PER_EVENTS = 25  # ... and one more per this many events it held
BURST_AT = HOUR  # the busiest quarter hour's shape, this long into a "burst" scenario
FUNCTION_TIMEOUT = 180.0  # the sweep function's timeout (template.yaml)
ITEM_LIMIT = 400 * 1024  # DynamoDB's largest item
ITEM_NEAR = 0.75  # an item past this share of the limit is "near" it
# Modelled time of one call from Lambda, in seconds: an assumption, not a measure. A page of GitHub's
# deliveries list (100 items) and a redelivery's POST take longer than the bill's round trip; Telegram's
# calls and the table's are quicker.
CALL_SECONDS = {"github": 0.3, "telegram": 0.2, "table": 0.01}


@dataclass(frozen=True)
class Scenario:
    """Normal traffic for `before` seconds, trouble for `trouble` seconds, then `after` seconds of normal
    traffic again. `kind` "outage": pager's endpoint answers 502 to every attempt meanwhile; "rate": 500
    to a share `rate` of the attempts; "burst": the fleet's busiest quarter hour, its shape scaled to the size,
    through API Gateway's throttle. `sizes`: the sizes it is replayed at (None: the table's); `fix_limit`: every
    event that failed in the trouble passed within this of its end; `content`: GitHub counts a redelivery as a
    content-generating request (80 a minute, 500 an hour; its docs do not say)."""

    label: str
    kind: str
    before: float
    trouble: float
    after: float
    rate: float = 1.0
    sizes: tuple[int, ...] | None = None
    fix_limit: float = FIX_LIMIT
    content: bool = False


DAY_OUTAGE = "pager's endpoint fails for 24 hours"
SCENARIOS = (
    Scenario("pager's endpoint fails for 10 minutes", "outage", 2 * HOUR, 600.0, 4 * HOUR),
    Scenario("pager's endpoint fails for 30 minutes", "outage", 2 * HOUR, 1800.0, 4 * HOUR),
    Scenario("pager's endpoint fails for 30 minutes", "outage", 2 * HOUR, 1800.0, 8 * HOUR, sizes=(500_000, 1_000_000)),
    Scenario(DAY_OUTAGE, "outage", HOUR, 24 * HOUR, 8 * HOUR, sizes=(10_000,), fix_limit=6 * HOUR),
    # GitHub forgets the outage's first events 48 h after the fix: the replay goes on until then
    Scenario(DAY_OUTAGE, "outage", HOUR, 24 * HOUR, 48 * HOUR, sizes=(100_000,), fix_limit=48 * HOUR),
    Scenario(DAY_OUTAGE + ", a redelivery counted as content-generating", "outage", HOUR, 24 * HOUR, 14 * HOUR,
             sizes=(10_000,), fix_limit=6 * HOUR, content=True),
    Scenario("the busiest quarter hour's shape", "burst", BURST_AT, 900.0, 4 * HOUR, sizes=(10_000, 100_000, 250_000)),
    Scenario("1% of attempts fail for 6 hours", "rate", 0.0, 6 * HOUR, 4 * HOUR, 0.01),
    Scenario("2% of attempts fail for 6 hours", "rate", 0.0, 6 * HOUR, 4 * HOUR, 0.02),
    Scenario("5% of attempts fail for 6 hours", "rate", 0.0, 6 * HOUR, 4 * HOUR, 0.05),
)


# ------------------------------------------------------------------------------- the sweep's entry


def invoke(services: Any, what: str, *, now: float, run_id: str, event_id: str | None = None) -> dict[str, Any]:
    """The sweep's two public entry points, called as their schedules call them: the scheduled run
    ("sweep", with its event's id) and the every-minute check ("check"). Their summary, as returned."""
    from pager.sweep import run_sweep
    from pager.sweep.run import RUN_SECONDS, check

    if what == "sweep":
        return run_sweep(services, now=now, run_id=run_id, event_id=event_id)
    return check(services, now=now, run_id=run_id, seconds=RUN_SECONDS)


def run_seconds() -> float:
    """The run's deadline, as the sweep keeps it."""
    from pager.sweep.run import RUN_SECONDS

    return float(RUN_SECONDS)


# ---------------------------------------------------------------------------------------- traffic


@dataclass(frozen=True)
class Delivery:
    at: float
    guid: str
    event: str
    action: str | None
    repository_id: int


@cache
def fleet_mix(seed: int = 1) -> tuple[tuple[tuple[str, str | None], int], ...]:
    """The (event, action) pairs of the fleet's day that a deployment subscribed to pager's events
    receives, with their counts: the traffic's mix."""
    from pager.signals import subscribed_events

    day = fleet.only(fleet.make_trace(days=1, seed=seed), subscribed_events())
    return tuple(Counter((e.event, e.action) for e in day.events).most_common())


@cache
def busiest_quarter(seed: int = 1) -> tuple[tuple[tuple[float, str, str | None], ...], float]:
    """The fleet's busiest quarter hour of its week (the subscribed events): each event's (offset in the quarter
    hour, event, action), and the deliveries of the fleet's mean day, to scale it by."""
    from pager.signals import subscribed_events

    week = fleet.only(fleet.make_trace(days=7, seed=seed), subscribed_events())
    quarters = Counter(int((e.at - week.start) // fleet.QUARTER) for e in week.events)
    busiest = quarters.most_common(1)[0][0]
    start = week.start + busiest * fleet.QUARTER
    shape = tuple((e.at - start, e.event, e.action) for e in week.events if start <= e.at < start + fleet.QUARTER)
    return shape, len(week.events) / 7


def traffic(per_day: float, seconds: float, *, start: float, seed: int = 1,
            mix: Sequence[tuple[tuple[str, str | None], int]] | None = None, burst: float | None = None) -> list[Delivery]:
    """A Poisson stream of `per_day` deliveries a day for `seconds` from `start`, of the mix's kinds,
    each for one of `REPOSITORIES` repositories; from `burst` on, instead, the fleet's busiest quarter hour
    (`busiest_quarter`) as many times over as `per_day` is the fleet's day, each copy of an event at its time."""
    rng = random.Random(seed)
    pairs = list(mix if mix is not None else fleet_mix(seed))
    kinds, weights = [p for p, _ in pairs], [w for _, w in pairs]
    rate, at, out = per_day / fleet.DAY, start, []
    quiet = (burst, burst + fleet.QUARTER) if burst is not None else (math.inf, math.inf)

    def add(at: float, event: str, action: str | None) -> None:
        guid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        out.append(Delivery(at, guid, event, action, 70_000 + rng.randrange(REPOSITORIES)))

    while True:
        at += rng.expovariate(rate)
        if at >= start + seconds:
            break
        (event, action), = rng.choices(kinds, weights=weights)
        if not quiet[0] <= at < quiet[1]:
            add(at, event, action)
    if burst is not None:
        shape, fleet_day = busiest_quarter(seed)
        times = per_day / fleet_day
        for offset, event, action in shape:
            for _ in range(int(times) + (rng.random() < times % 1)):
                add(burst + offset, event, action)
        out.sort(key=lambda d: d.at)
    return out


def draw(seed: int, guid: str, attempt: int) -> float:
    """A number in [0, 1) decided by the guid and the attempt alone."""
    digest = hashlib.blake2b(f"{seed}:{guid}:{attempt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


# --------------------------------------------------------------------------------------- the world


class SizedStore(bill.MeteredStore):
    """The replay's table, keeping the largest size written of each of the sweep's own items."""

    def __init__(self, faults: Faults) -> None:
        super().__init__(faults)
        self.largest: dict[str, int] = {}
        self.lease = 0  # writes of the sweep's lease: every run's and every asking check's own

    def save(self, record: Any, data: dict[str, Any], *, expires_at: int | None = None) -> Any:
        self.lease += (record.key, record.item) == (SWEEP_KEY, LEASE_ITEM)
        if key_kind(record.key) in ("sweep", "sweep-followed"):
            name = f"{record.key} [{record.item}]" if record.item else record.key
            size = bill.item_bytes(record.key, record.item, encode(data), record.version + 1, expires_at)
            self.largest[name] = max(size, self.largest.get(name, 0))
        return super().save(record, data, expires_at=expires_at)


@dataclass
class Invocation:
    """One run or check: when, which, its calls, table round trips and writes, and its summary's outcome."""

    at: float
    what: str
    github: int
    telegram: int
    trips: int
    writes: int
    lease: int
    outcome: str
    swept: bool
    gaps: int

    @property
    def calls(self) -> int:
        return self.github + self.telegram

    @property
    def seconds(self) -> float:
        return (self.github * CALL_SECONDS["github"] + self.telegram * CALL_SECONDS["telegram"]
                + self.trips * CALL_SECONDS["table"])


@dataclass
class World:
    """GitHub, Telegram, the table and pager's services on one virtual clock."""

    pem: str
    start: float
    content: bool = False  # GitHub counts a redelivery as content-generating
    clock: Clock = field(init=False)
    github: FakeGitHub = field(init=False)
    telegram: FakeTelegram = field(init=False)
    store: SizedStore = field(init=False)
    services: Any = field(init=False)

    def __post_init__(self) -> None:
        self.clock = Clock(self.start)
        faults = Faults(record=False)
        self.github = FakeGitHub(clock=self.clock, faults=faults, api_url=GITHUB_API, keep_requests=False)
        self.github.limits = SecondaryLimits(content=CONTENT + ((REDELIVERY,) if self.content else ()))
        self.gateway = Throttle()  # template.yaml's ApiRateLimit and ApiBurstLimit, their defaults
        self.telegram = FakeTelegram(faults=faults, keep_requests=False, clock=self.clock)
        self.store = SizedStore(faults)
        settings = bench_settings(self.pem)
        repos = [fleet.Repo(id=70_000 + i, name=f"service-{i}") for i in range(REPOSITORIES)]
        install_on_fleet(self.github, fleet.Trace(1, self.start, self.start, repos, [], [], {}), settings)
        join_chat(self.telegram, settings)
        session = session_for({GITHUB_API: self.github, TELEGRAM_API: self.telegram,
                               PAGER_HOST: lambda request: HttpResponse(self.ping())})
        self.services = make_services(settings, self.store, session, self.clock)

    def ping(self) -> int:
        """What pager's own endpoint answers the sweep's ping (the replay's model sets it)."""
        return 200

    def writes(self) -> int:
        return sum(self.store.writes.values())


# -------------------------------------------------------------------------------------- the replay


Sweep = Callable[..., dict[str, Any]]


class ScaleReplay:
    """One scenario at one size (see the module's docstring)."""

    def __init__(self, per_day: float, scenario: Scenario, *, pem: str, seed: int = 1, sweep: Sweep = invoke,
                 mix: Sequence[tuple[tuple[str, str | None], int]] | None = None, start: float = fleet.WEEK_START) -> None:
        self.per_day, self.scenario, self.seed, self.sweep = per_day, scenario, seed, sweep
        self.world = World(pem, start, content=scenario.content)
        self.world.github.endpoint = self._endpoint
        self.world.ping = self._ping  # type: ignore[method-assign]
        self.world.services.sleep = self._sleep  # (Telegram's client keeps the clock's: it waits on a page alone)
        self.start = start
        self.trouble = (start + scenario.before, start + scenario.before + scenario.trouble)
        self.end = self.trouble[1] + scenario.after
        self.deliveries = traffic(per_day, self.end - start, start=start, seed=seed, mix=mix,
                                  burst=self.trouble[0] if scenario.kind == "burst" else None)
        self.invocations: list[Invocation] = []
        self.named: set[str] = set()
        self._looked_at = -1  # the table's writes at the last look at the alarm
        self._next = 0  # the next delivery of the traffic to send

    # -- GitHub's side

    def _endpoint(self, guid: str, event: str, payload: dict[str, Any], redelivery: bool) -> int:
        """pager's endpoint, as a model: API Gateway's 429 over its throttle, 502 while it fails, 500 for a share
        of attempts, else 200."""
        at = self.world.clock()
        if not self.world.gateway.take(at):
            return 429
        if self.scenario.kind == "burst" or not self.trouble[0] <= at < self.trouble[1]:
            return 200
        if self.scenario.kind == "outage":
            return 502
        attempt = len(self.world.github.log.get(guid, ()))
        return 500 if draw(self.seed, guid, attempt) < self.scenario.rate else 200

    def _ping(self) -> int:
        """pager's endpoint as the sweep's ping finds it: API Gateway's 429 over its throttle, 502 in an outage; a
        handler failing for a share of the attempts answers a ping (it needs nothing that fails)."""
        start, end = self.trouble
        if not self.world.gateway.take(self.world.clock()):
            return 429
        return 502 if self.scenario.kind == "outage" and start <= self.world.clock() < end else 200

    def _sleep(self, seconds: float) -> None:
        """An invocation waits (a run waiting out a check's asks): GitHub goes on sending the traffic meanwhile, which
        other invocations of the webhook answer, so the clock never goes back for what arrived during the wait."""
        until = self.world.clock() + seconds
        self._send_until(until)
        self.world.clock.set(until)

    def _send_until(self, until: float) -> None:
        """GitHub sends every delivery of the traffic before `until`."""
        github, clock, deliveries = self.world.github, self.world.clock, self.deliveries
        while self._next < len(deliveries) and deliveries[self._next].at < until:
            d = deliveries[self._next]
            clock.set(d.at)
            github.deliver(d.event, {"action": d.action, "repository": {"id": d.repository_id}}, guid=d.guid)
            self._next += 1

    # -- the schedules

    def schedule(self) -> list[tuple[float, str]]:
        """(time, "sweep" or "check") until the replay's end, in order."""
        ticks = []
        for every, offset, what in ((SWEEP_EVERY, SWEEP_OFFSET, "sweep"), (CHECK_EVERY, CHECK_OFFSET, "check")):
            t = self.start + offset
            while t < self.end:
                ticks.append((t, what))
                t += every
        return sorted(ticks, key=lambda tick: (tick[0], tick[1] != "sweep"))

    def _invoke(self, at: float, what: str, number: int) -> None:
        """One run or check, counted; then a look at the alarm, and GitHub's redeliveries 2 s later."""
        world, services = self.world, self.world.services
        github, telegram, trips, writes = services.github.calls, services.telegram.calls, world.store.round_trips, world.writes()
        lease = world.store.lease
        run_id = f"scale-{what}-{number}"
        summary = self.sweep(services, what, now=at, run_id=run_id, event_id=run_id if what == "sweep" else None) or {}
        self.invocations.append(Invocation(
            at=at, what=what, github=services.github.calls - github, telegram=services.telegram.calls - telegram,
            trips=world.store.round_trips - trips, writes=world.writes() - writes, lease=world.store.lease - lease, outcome=str(summary.get("outcome", "")),
            swept=what == "sweep" or summary.get("call_budget") is not None, gaps=len(summary.get("reach_gaps") or ())))
        self._look()
        self._send_until(at + REDELIVERY_DELAY)
        world.clock.set(max(world.clock(), at + REDELIVERY_DELAY))  # (after a wait, the clock is past it already)
        world.github.deliver_pending()
        world.github.prune(world.clock())

    def _look(self) -> None:
        """The guids the control repository's alarm names now (looked at again only after a write)."""
        writes = self.world.writes()
        if writes != self._looked_at:
            self._looked_at = writes
            self.named |= open_delivery_entries(self.world.store, CONTROL, self.world.clock())

    def run(self) -> dict[str, Any]:
        began = time.perf_counter()
        counts: Counter[str] = Counter()
        with quiet():
            for at, what in self.schedule():
                self._send_until(at)
                self.world.clock.set(at)
                counts[what] += 1
                self._invoke(at, what, counts[what])
            self._send_until(self.end)
        return {**measure(self), "seconds": time.perf_counter() - began}


# -------------------------------------------------------------------------------------- the figures


def said_forgotten(telegram: FakeTelegram) -> int:
    """What pager's own alarm counts as failed and no longer kept by GitHub."""
    texts = [m.text for m in telegram.chat() if m.text.startswith(OWN)]
    return max((int(n) for t in texts for n in SAID.findall(t)), default=0)


def still_followed(replay: ScaleReplay) -> set[str]:
    """The events the sweep still follows at the replay's end: what waits for its turn, GitHub keeping it."""
    from pager.sweep.deliveries import State
    from pager.sweep.followed import load

    services = replay.world.services
    head = services.store.load(SWEEP_KEY, "deliveries").data
    return {r.guid for r in State.from_data(head, load(services, head).rows).followed}


def fates(replay: ScaleReplay) -> dict[str, Any]:
    """The failed events' fates (see the module's docstring), and the guids of those that failed in the trouble."""
    log, counts = replay.world.github.log, Counter[str]()
    followed = still_followed(replay)
    rest, during = [], []
    start, end = replay.trouble
    for d in replay.deliveries:
        codes = [(at, code) for at, code, _ in log.get(d.guid, ())]
        fails = [at for at, code in codes if failed(code)]
        if not fails:
            continue
        if not acts_on(d.event, d.action):
            counts["ignored"] += 1
            continue
        counts["failed"] += 1
        if start <= fails[0] < end:
            during.append(d.guid)
        if any(passed(code) for _, code in codes):
            counts["passed"] += 1
        elif d.guid in replay.named:
            counts["named"] += 1
        elif d.guid in followed and d.at > replay.end - GITHUB_RETENTION + DRAIN_LIMIT:  # kept a while yet
            counts["waiting"] += 1
        else:
            rest.append(d.guid)
    counts["said"] = min(said_forgotten(replay.world.telegram), len(rest))
    counts["neither"] = len(rest) - counts["said"]
    return {"counts": counts, "during": during}


def after_trouble(replay: ScaleReplay, during: Iterable[str]) -> dict[str, Any]:
    """From the trouble's end to the last pass of the events that failed in it; whether all passed in time."""
    log, end = replay.world.github.log, replay.trouble[1]
    first_pass = [next((at for at, code, _ in log[g] if passed(code)), None) for g in during]
    passes = [at for at in first_pass if at is not None]
    last = max((max(0.0, at - end) for at in passes), default=None)
    return {"failed_in_it": len(first_pass), "passed_in_it": len(passes),
            "last_pass_minutes": None if last is None else last / 60, "fix_limit": replay.scenario.fix_limit,
            "all_within": all(at is not None and at <= end + replay.scenario.fix_limit for at in first_pass)}


def repeats(replay: ScaleReplay) -> dict[str, Any]:
    """The probes of GitHub's redeliveries (a passed delivery the sweep asked for again to learn whether GitHub
    takes redeliveries after refusing one: safe twice, no event's attempt spent; the state's `probed`), the
    other redeliveries of events that had passed already (a pass the sweep did not see), and the most attempts
    GitHub made of one event besides the probes, against the sweep's own limit (pager's own outage is found by
    the sweep's ping: no attempt is spent on it)."""
    probed = probed_guids(replay)
    probes = again = most = 0
    for guid, attempts in replay.world.github.log.items():
        first = next((at for at, code, _ in attempts if passed(code)), None)
        after = sum(1 for at, _, redelivery in attempts if first is not None and redelivery and at > first)
        probes += after if guid in probed else 0
        again += 0 if guid in probed else after
        most = max(most, len(attempts) - (after if guid in probed else 0))
    return {"probes": probes, "again_after_pass": again, "attempts_max": most,
            "max_attempts": replay.world.services.settings.sweep_max_attempts}


def probed_guids(replay: ScaleReplay) -> set[str]:
    """The passed deliveries the sweep asked for again as probes of GitHub's redeliveries (its state keeps them
    while GitHub does)."""
    from pager.sweep.deliveries import State

    return {guid for guid, _ in State.from_data(replay.world.services.store.load(SWEEP_KEY, "deliveries").data).probed}


def per_run(replay: ScaleReplay) -> dict[str, Any]:
    """Calls, modelled time, redeliveries a minute, table writes over the trouble, the largest sweep item."""
    runs, budget = replay.invocations, replay.world.services.settings.sweep_call_budget
    log = replay.world.github.log
    per_minute = Counter(int(at // 60) for attempts in log.values() for at, _, again in attempts if again)
    since = [r for r in runs if r.at >= replay.trouble[0]]
    largest = max(replay.world.store.largest.items(), key=lambda kv: kv[1], default=("", 0))
    return {
        "runs": sum(1 for r in runs if r.what == "sweep"), "checks": sum(1 for r in runs if r.what == "check"),
        "check_runs": sum(1 for r in runs if r.what == "check" and r.swept),
        "calls_max": max((r.calls for r in runs), default=0), "budget": budget,
        "over_budget": sum(1 for r in runs if r.calls > budget),
        "seconds_max": max((r.seconds for r in runs), default=0.0), "deadline": run_seconds(),
        "past_deadline": sum(1 for r in runs if r.seconds > run_seconds()),
        "past_timeout": sum(1 for r in runs if r.seconds > FUNCTION_TIMEOUT),
        "redeliveries": sum(per_minute.values()), "redeliveries_per_minute_max": max(per_minute.values(), default=0),
        # beyond the runs' own: a scheduled run's commit and every lease (a run's, an asking check's)
        "writes": sum(max(0, r.writes - r.lease - (r.what == "sweep")) for r in since),
        "lease_writes": sum(r.lease for r in since),
        "largest_key": largest[0], "largest_bytes": largest[1],
        "aborted": sum(1 for r in runs if r.outcome.startswith("aborted")), "reach_gaps": sum(r.gaps for r in runs),
    }


def writes_allowed(row: dict[str, Any]) -> int:
    """The writes an outage may cost beyond the runs' own: a constant, and one per `WRITES_PER_EVENTS` it held."""
    return WRITES_CONSTANT + row["failed_in_it"] // WRITES_PER_EVENTS


def breaks(row: dict[str, Any]) -> list[str]:
    """Where the sweep breaks at this size, in words (none: it holds)."""
    notes = []
    if row["counts"]["neither"]:
        notes.append(f"{row['counts']['neither']:,} events neither passed nor named")
    if row["counts"]["waiting"]:
        notes.append(f"{row['counts']['waiting']:,} events still waiting their turn when the replay ended "
                     f"{row['after_seconds'] / HOUR:.0f} h after the trouble (GitHub keeps them)")
    if row["kind"] != "rate" and row["counts"]["named"]:
        notes.append(f"{row['counts']['named']:,} events named (their attempts spent)")
    if row["counts"]["said"]:
        notes.append(f"{row['counts']['said']:,} counted as no longer kept by GitHub")
    if (row["last_pass_minutes"] or 0) * 60 > DRAIN_LIMIT:
        notes.append(f"a drain of {row['last_pass_minutes'] / 60:.1f} h after the trouble (over {DRAIN_LIMIT / HOUR:.0f} h)")
    if not row["all_within"]:
        notes.append(f"not every event back within {row['fix_limit'] / HOUR:.0f} h of the trouble's end")
    if row["writes"] > writes_allowed(row):
        notes.append(f"{row['writes']:,} writes, over {writes_allowed(row):,} ({WRITES_CONSTANT} and one per "
                     f"{WRITES_PER_EVENTS} events held)")
    if row["throttled"]:
        notes.append(f"API Gateway answered {row['throttled']:,} requests 429 (its throttle, {row['gateway'][0]:g} a second, "
                     f"a burst of {row['gateway'][1]:,})")
    if row["limited"]:
        notes.append(f"GitHub refused {row['limited']:,} requests for its secondary rate limits (403, retry-after)")
    if row["past_deadline"]:
        notes.append(f"{row['past_deadline']} runs past the {row['deadline']:.0f} s deadline by their modelled time"
                     + (f", {row['past_timeout']} past the function's {FUNCTION_TIMEOUT:.0f} s timeout" if row["past_timeout"] else ""))
    if row["over_budget"]:
        notes.append(f"{row['over_budget']} runs over the budget of {row['budget']} calls")
    if row["largest_bytes"] >= ITEM_NEAR * ITEM_LIMIT:
        notes.append(f"`{row['largest_key']}` at {row['largest_bytes'] / 1024:.0f} KB of DynamoDB's 400 KB")
    if row["again_after_pass"]:
        n = row["again_after_pass"]
        notes.append(f"{n:,} redeliver{'y' if n == 1 else 'ies'} of events that had passed already (a pass the sweep "
                     "did not see)")
    if row["attempts_max"] > row["max_attempts"]:
        notes.append(f"an event attempted {row['attempts_max']} times (the limit is {row['max_attempts']})")
    if row["aborted"]:
        notes.append(f"{row['aborted']} runs aborted")
    if row["reach_gaps"]:
        notes.append(f"{row['reach_gaps']} reach gaps (a list read short of where it had to reach)")
    return notes


def measure(replay: ScaleReplay) -> dict[str, Any]:
    """The figures of one replay (see the module's docstring)."""
    fate = fates(replay)
    row = {"per_day": replay.per_day, "label": replay.scenario.label, "kind": replay.scenario.kind,
           "trouble_seconds": replay.scenario.trouble, "rate": replay.scenario.rate, "after_seconds": replay.scenario.after,
           "content": replay.scenario.content,
           "deliveries": len(replay.deliveries), "counts": dict(fate["counts"]),
           "deliveries_in_trouble": sum(1 for d in replay.deliveries if replay.trouble[0] <= d.at < replay.trouble[1]),
           **after_trouble(replay, fate["during"]), **per_run(replay), **repeats(replay),
           "throttled": replay.world.gateway.refused, "limited": replay.world.github.limits.refused,
           "gateway": (replay.world.gateway.rate, replay.world.gateway.burst)}
    for key in ("failed", "ignored", "passed", "named", "said", "waiting", "neither"):
        row["counts"].setdefault(key, 0)
    row["breaks"] = breaks(row)
    return row


# ------------------------------------------------------------------------------------- the table


def scale(per_day: float, scenario: Scenario, *, pem: str, seed: int = 1, sweep: Sweep = invoke) -> dict[str, Any]:
    """One scenario at one size, replayed and measured."""
    return ScaleReplay(per_day, scenario, pem=pem, seed=seed, sweep=sweep).run()


def row(per_day: int, scenario: Scenario, *, pem: str, seed: int = 1) -> dict[str, Any]:
    """One row of the table, a scenario at a size: a job of `table_jobs`, in whichever process runs it."""
    out = scale(per_day, scenario, pem=pem, seed=seed)
    progress = shared("progress")
    if progress:
        progress(f"scale, {scenario.label} at {per_day:,}/day: failed {out['counts']['failed']:,}, passed "
                 f"{out['counts']['passed']:,}, named {out['counts']['named']:,}, neither "
                 f"{out['counts']['neither']:,} ({out['seconds']:.0f} s)")
    return out


CPU_PER_DELIVERY = 4e-5  # about what a row takes, in CPU seconds per delivery replayed: the jobs' weight


def table_jobs(sizes: Sequence[int] = SIZES, scenarios: Sequence[Scenario] = SCENARIOS, *, pem: str,
               seed: int = 1) -> list[Job]:
    """Every scenario at every size, a job each (`jobs.side_by_side`; a progress callback or None shared
    under "progress")."""
    fleet_mix(seed)  # computed once, before the fork
    busiest_quarter(seed)
    return [Job(key=("scale", s.label, n), run=row, args=(n, s), kwargs={"pem": pem, "seed": seed},
                weight=CPU_PER_DELIVERY * n * (s.before + s.trouble + s.after) / fleet.DAY,
                label=f"scale, {s.label} at {n:,}/day")
            for s in scenarios for n in (s.sizes or sizes)]


def table_of(done: dict[Any, Any], sizes: Sequence[int] = SIZES,
             scenarios: Sequence[Scenario] = SCENARIOS) -> dict[str, dict[int, dict[str, Any]]]:
    """The rows of `table_jobs` by the scenario's label, then the size."""
    table: dict[str, dict[int, dict[str, Any]]] = {}
    for s in scenarios:
        table.setdefault(s.label, {}).update({n: done[("scale", s.label, n)] for n in (s.sizes or sizes)})
    return table


def scale_table(sizes: Sequence[int] = SIZES, scenarios: Sequence[Scenario] = SCENARIOS, *, pem: str, seed: int = 1,
                jobs: int = 1, progress: Callable[[str], None] | None = None) -> dict[str, dict[int, dict[str, Any]]]:
    """Every scenario at every size (`table_jobs`), `jobs` at a time in forked processes, the largest first:
    by the scenario's label, then the size (`table_of`)."""
    done = side_by_side(table_jobs(sizes, scenarios, pem=pem, seed=seed), jobs=jobs, shared={"progress": progress})
    return table_of(done, sizes, scenarios)
