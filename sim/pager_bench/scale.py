"""A busy fleet's size: the real sweep against a model of pager's endpoint, at N deliveries a day.

`simulate.Replay` sends every delivery through the real webhook handler, which is right for a week of
the fleet's trace but too slow for 250,000 deliveries a day. Here only the sweep is pager's own code:
`pager.sweep.run_sweep` every 900 s with its scheduled event's id (one per run, as EventBridge has it)
and `pager.sweep.run.check` every 60 s, half a minute out of phase, both called through `invoke`, the
one adapter to change when their signatures do. GitHub carries out the redeliveries asked for 2 s after
each run and check (`FakeGitHub.deliver_pending`) and forgets what is older than its three days.

The endpoint is a model: it answers 200, or 502 to every attempt while "pager's endpoint fails" (an
outage), or 500 to a share `rate` of the attempts during a steady failure rate (drawn per guid and
attempt, as `fleet.Trace.no_answer` draws). An event pager does not act on (`pager.signals.acts_on`)
would be answered 200 "ignored" whenever pager answers: nothing is lost with it, and it is counted apart.

Traffic: a Poisson stream of `per_day` deliveries a day over ten repositories, its (event, action) mix
the one the fleet's day sends a deployment subscribed to pager's events (`fleet_mix`). GitHub's list
needs only the event, the action and the repository's id, so that is the whole payload.

Measured per event that failed (an attempt got a 5xx or no answer) and that pager acts on: passed (a
later attempt passed), named (a `delivery:` entry of the control repository's alarm named it at some
look, after any run or check), said (counted by pager's own alarm as "N events failed ... GitHub no
longer keeps them", up to that number), and neither: lost without a word, the number that must be 0.
Per trouble (the outage, or the period with a failure rate): the minutes from its end to the last
passing attempt of the events that failed in it, and whether all passed within `FIX_LIMIT` of it; the
table's writes from its start to the replay's end, less the one write every scheduled run makes anyway.
Per run and check: its GitHub and Telegram calls (against the call budget), its modelled time (calls
times `CALL_SECONDS`, against the run's deadline `pager.sweep.run.RUN_SECONDS` and the function's
timeout), the redeliveries GitHub carried out per minute, and the largest item of the sweep's own
(a key of the kind `sweep`: `sweep#state`, ...) written, in bytes as DynamoDB counts them (its limit is
400 KB). And the probes (a delivery that had passed, asked for again while pager's endpoint failed: safe
twice, spending no event's attempt), the other redeliveries of events that had passed already (a pass
the sweep did not see), and the most attempts of one event besides the probes.
"""

from __future__ import annotations

import hashlib
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
from pager_world.clock import Clock
from pager_world.faults import Faults
from pager_world.github import FakeGitHub
from pager_world.http import session_for
from pager_world.store import key_kind
from pager_world.telegram import FakeTelegram

from . import bill, fleet
from .jobs import Job, shared, side_by_side
from .measure import failed, passed
from .outages import OWN, SAID
from .simulate import (
    CHECK_OFFSET,
    GITHUB_API,
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
SIZES = (10_000, 40_000, 100_000, 250_000)  # deliveries a day
REPOSITORIES = 10
CHECK_EVERY = 60.0
PROBE_SLACK = 3 * CHECK_EVERY  # a probe asked in the minutes the check takes to see pager answer again
FIX_LIMIT = 2 * HOUR  # the target: every event that failed in an outage passed within 2 h of the fix
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
    to a share `rate` of the attempts."""

    label: str
    kind: str
    before: float
    trouble: float
    after: float
    rate: float = 1.0


SCENARIOS = (
    Scenario("pager's endpoint fails for 10 minutes", "outage", 2 * HOUR, 600.0, 4 * HOUR),
    Scenario("pager's endpoint fails for 30 minutes", "outage", 2 * HOUR, 1800.0, 4 * HOUR),
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


def traffic(per_day: float, seconds: float, *, start: float, seed: int = 1,
            mix: Sequence[tuple[tuple[str, str | None], int]] | None = None) -> list[Delivery]:
    """A Poisson stream of `per_day` deliveries a day for `seconds` from `start`, of the mix's kinds,
    each for one of `REPOSITORIES` repositories."""
    rng = random.Random(seed)
    pairs = list(mix if mix is not None else fleet_mix(seed))
    kinds, weights = [p for p, _ in pairs], [w for _, w in pairs]
    rate, at, out = per_day / fleet.DAY, start, []
    while True:
        at += rng.expovariate(rate)
        if at >= start + seconds:
            return out
        (event, action), = rng.choices(kinds, weights=weights)
        guid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        out.append(Delivery(at, guid, event, action, 70_000 + rng.randrange(REPOSITORIES)))


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

    def save(self, record: Any, data: dict[str, Any], *, expires_at: int | None = None) -> Any:
        if key_kind(record.key) == "sweep":
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
    clock: Clock = field(init=False)
    github: FakeGitHub = field(init=False)
    telegram: FakeTelegram = field(init=False)
    store: SizedStore = field(init=False)
    services: Any = field(init=False)

    def __post_init__(self) -> None:
        self.clock = Clock(self.start)
        faults = Faults(record=False)
        self.github = FakeGitHub(clock=self.clock, faults=faults, api_url=GITHUB_API, keep_requests=False)
        self.telegram = FakeTelegram(faults=faults, keep_requests=False, clock=self.clock)
        self.store = SizedStore(faults)
        settings = bench_settings(self.pem)
        repos = [fleet.Repo(id=70_000 + i, name=f"service-{i}") for i in range(REPOSITORIES)]
        install_on_fleet(self.github, fleet.Trace(1, self.start, self.start, repos, [], [], {}), settings)
        join_chat(self.telegram, settings)
        session = session_for({GITHUB_API: self.github, TELEGRAM_API: self.telegram})
        self.services = make_services(settings, self.store, session, self.clock)

    def writes(self) -> int:
        return sum(self.store.writes.values())


# -------------------------------------------------------------------------------------- the replay


Sweep = Callable[..., dict[str, Any]]


class ScaleReplay:
    """One scenario at one size (see the module's docstring)."""

    def __init__(self, per_day: float, scenario: Scenario, *, pem: str, seed: int = 1, sweep: Sweep = invoke,
                 mix: Sequence[tuple[tuple[str, str | None], int]] | None = None, start: float = fleet.WEEK_START) -> None:
        self.per_day, self.scenario, self.seed, self.sweep = per_day, scenario, seed, sweep
        self.world = World(pem, start)
        self.world.github.endpoint = self._endpoint
        self.start = start
        self.trouble = (start + scenario.before, start + scenario.before + scenario.trouble)
        self.end = self.trouble[1] + scenario.after
        self.deliveries = traffic(per_day, self.end - start, start=start, seed=seed, mix=mix)
        self.invocations: list[Invocation] = []
        self.named: set[str] = set()
        self._looked_at = -1  # the table's writes at the last look at the alarm
        self._next = 0  # the next delivery of the traffic to send

    # -- GitHub's side

    def _endpoint(self, guid: str, event: str, payload: dict[str, Any], redelivery: bool) -> int:
        """pager's endpoint, as a model: 502 while it fails, 500 for a share of attempts, else 200."""
        at = self.world.clock()
        if not self.trouble[0] <= at < self.trouble[1]:
            return 200
        if self.scenario.kind == "outage":
            return 502
        attempt = len(self.world.github.log.get(guid, ()))
        return 500 if draw(self.seed, guid, attempt) < self.scenario.rate else 200

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
        run_id = f"scale-{what}-{number}"
        summary = self.sweep(services, what, now=at, run_id=run_id, event_id=run_id if what == "sweep" else None) or {}
        self.invocations.append(Invocation(
            at=at, what=what, github=services.github.calls - github, telegram=services.telegram.calls - telegram,
            trips=world.store.round_trips - trips, writes=world.writes() - writes, outcome=str(summary.get("outcome", "")),
            swept=what == "sweep" or summary.get("call_budget") is not None, gaps=len(summary.get("reach_gaps") or ())))
        self._look()
        self._send_until(at + REDELIVERY_DELAY)
        world.clock.set(at + REDELIVERY_DELAY)
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


def fates(replay: ScaleReplay) -> dict[str, Any]:
    """The failed events' fates (see the module's docstring), and the guids of those that failed in the trouble."""
    log, counts = replay.world.github.log, Counter[str]()
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
            "last_pass_minutes": None if last is None else last / 60,
            "all_within": all(at is not None and at <= end + FIX_LIMIT for at in first_pass)}


def repeats(replay: ScaleReplay) -> dict[str, Any]:
    """The probes (redeliveries of a delivery that had passed, asked while pager's endpoint failed or in the
    minutes it took the check to see it answer again: every signal is safe twice, and no event's attempt is
    spent on them), the other redeliveries of events that had passed already (a pass the sweep did not see),
    and the most attempts GitHub made of one event besides the probes, against the sweep's own limit."""
    start, end = replay.trouble
    probes = again = most = 0
    for attempts in replay.world.github.log.values():
        first = next((at for at, code, _ in attempts if passed(code)), None)
        spent = 0
        for at, _, redelivery in attempts:
            after_pass = first is not None and redelivery and at > first
            probe = after_pass and start <= at <= end + PROBE_SLACK
            probes += probe
            again += after_pass and not probe
            spent += not probe
        most = max(most, spent)
    return {"probes": probes, "again_after_pass": again, "attempts_max": most,
            "max_attempts": replay.world.services.settings.sweep_max_attempts}


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
        "writes": sum(max(0, r.writes - 1) if r.what == "sweep" else r.writes for r in since),
        "largest_key": largest[0], "largest_bytes": largest[1],
        "aborted": sum(1 for r in runs if r.outcome.startswith("aborted")), "reach_gaps": sum(r.gaps for r in runs),
    }


def breaks(row: dict[str, Any]) -> list[str]:
    """Where the sweep breaks at this size, in words (none: it holds)."""
    notes = []
    if row["counts"]["neither"]:
        notes.append(f"{row['counts']['neither']:,} events neither passed nor named")
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
           "trouble_seconds": replay.scenario.trouble, "rate": replay.scenario.rate,
           "deliveries": len(replay.deliveries), "counts": dict(fate["counts"]),
           "deliveries_in_trouble": sum(1 for d in replay.deliveries if replay.trouble[0] <= d.at < replay.trouble[1]),
           **after_trouble(replay, fate["during"]), **per_run(replay), **repeats(replay)}
    for key in ("failed", "ignored", "passed", "named", "said", "neither"):
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
    return [Job(key=("scale", s.label, n), run=row, args=(n, s), kwargs={"pem": pem, "seed": seed},
                weight=CPU_PER_DELIVERY * n * (s.before + s.trouble + s.after) / fleet.DAY,
                label=f"scale, {s.label} at {n:,}/day")
            for s in scenarios for n in sizes]


def table_of(done: dict[Any, Any], sizes: Sequence[int] = SIZES,
             scenarios: Sequence[Scenario] = SCENARIOS) -> dict[str, dict[int, dict[str, Any]]]:
    """The rows of `table_jobs` by the scenario's label, then the size."""
    return {s.label: {n: done[("scale", s.label, n)] for n in sizes} for s in scenarios}


def scale_table(sizes: Sequence[int] = SIZES, scenarios: Sequence[Scenario] = SCENARIOS, *, pem: str, seed: int = 1,
                jobs: int = 1, progress: Callable[[str], None] | None = None) -> dict[str, dict[int, dict[str, Any]]]:
    """Every scenario at every size (`table_jobs`), `jobs` at a time in forked processes, the largest first:
    by the scenario's label, then the size (`table_of`)."""
    done = side_by_side(table_jobs(sizes, scenarios, pem=pem, seed=seed), jobs=jobs, shared={"progress": progress})
    return table_of(done, sizes, scenarios)
