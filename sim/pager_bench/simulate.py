"""Replaying a trace with one sweep design through the real webhook handler and the real sweep.

The world is `pager_world`'s, built for a long run: `FakeGitHub` (listing by bisect, three days of
retention, every attempt logged by guid), `FakeTelegram`, and the in-memory table behind a
`FaultyStore` that also counts DynamoDB's request units (`bill.MeteredStore`); one `Faults`, recording
nothing, holds the outages. GitHub's deliveries call the real `functions/webhook/app.py:lambda_handler`
with a signed API Gateway event; one virtual clock is shared by the fakes, the services and the sweep.
The scheduled sweep runs every 900 s, invoked with its event's id as EventBridge invokes it; with the
design "pager" the recovery check (`pager.sweep.run.check`) also runs every 60 s, as its
schedule in template.yaml has it ("pager-15" is the same code with only the 15-minute runs). GitHub
carries out the redeliveries asked for right after each run, and after each check that asked for some.

For every attempt the endpoint answers, the replay records whether handling it changed state: a
write of a signal record (the store's counters, a lost conditional write left out), a Telegram
message sent or edited, a GitHub dispatch or merge, between the handler's start and its end. Kept
per guid, one boolean per attempt in the order of `FakeGitHub.log` (`changed`), for `measure`.

It also counts what AWS would bill (`bill`): each Lambda invocation of either function with its
modelled duration, the API Gateway requests, the table's request units, the bytes logged, the custom
metrics published and the scheduled events.

With the design "pager" it measures what the maintainer's phone lives through (`phone`): the table is
`phone.Ledger` (pager's in-memory store noting what attention is about), the fake chat keeps its history,
and a replay may set QUIET_HOURS (`design_jobs` replays pager once more with the maintainer's night, and once more
for each other rest, BUZZ_GAP_MINUTES).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging
import math
import os
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pager.permissions import needed_permissions
from pager.services import Services
from pager.settings import Settings
from pager.signals.alarm import CONTROL, alarm_key
from pager.waiting import ITEM as WAITING_ITEM
from pager.waiting import SWEEP_KEY
from pager_local.local import load_handler
from pager_world.clock import Clock
from pager_world.events import LambdaContext, apigw_event, github_event
from pager_world.faults import Faults, Rule
from pager_world.github import FakeGitHub
from pager_world.http import HttpRequest, HttpResponse, session_for
from pager_world.store import FaultyStore, key_kind
from pager_world.telegram import FakeTelegram

from . import alternatives, bill, fleet, phone, prices
from .jobs import Job, shared
from .measure import SWEEP_KINDS, measure

GITHUB_API = "https://api.github.com"
TELEGRAM_API = "https://api.telegram.org"
WEBHOOK_SECRET = "bench-webhook-secret"
PAGER_HOST = "https://pager.bench"  # pager's own endpoint, as GitHub's hook config gives it
HOOK_URL = f"{PAGER_HOST}/github"
SWEEP_EVERY = 900.0
CHECK_EVERY = 60.0  # the recovery check's schedule, rate(1 minute)
SWEEP_OFFSET = 60.0  # the scheduled sweep's first run, after the trace starts
# The recovery check's first run: half a minute later. The trace's faults begin and end on whole
# minutes; a rate(1 minute) schedule fires at whatever second it was created at, so the check meets
# an outage's end half its period later, the mean of a uniform phase.
CHECK_OFFSET = SWEEP_OFFSET + CHECK_EVERY / 2
REDELIVERY_DELAY = 2.0  # GitHub delivers again shortly after its 202
DRAIN = 4 * 3600.0  # runs after the last event: what is still failing then has had its chances

# The REST calls the handlers make (installation tokens, pull requests, dispatches): a GitHub burst
# answers them 502, not the deliveries list. A Telegram outage answers every Bot API method 502.
GITHUB_OUTAGE = r"^\w+ /repos/|^\w+ /app/installations/"

DESIGNS = {
    "pager": "pager, fast recovery",
    "pager-15": "pager, 15-minute runs only",
    "first": "(a) first design: one list, 3 pages",
    "script": "(b) GitHub's redelivery script",
}
PAGER_DESIGNS = ("pager", "pager-15")  # pager's own code: its sweep, its schedule(s), its bill
CHECKED = ("pager",)  # the designs whose replay runs the recovery check every minute


# ------------------------------------------------------------------------------------- the harness


def private_key() -> str:
    """A throwaway RSA key for the app's JWT."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def bench_settings(pem: str) -> Settings:
    return Settings(
        table="pager-bench",
        github_app_id="4242",
        github_app_slug="pager-bench",
        github_private_key=pem,
        github_webhook_secret=WEBHOOK_SECRET,
        telegram_bot_token="4242:bench-token",
        telegram_webhook_secret="bench-telegram-secret",
        telegram_chat_id="-1004242",
        control_repository=fleet.CONTROL_REPOSITORY,
        github_api_url=GITHUB_API,
        telegram_api_url=TELEGRAM_API,
    )


def install_on_fleet(github: FakeGitHub, trace: fleet.Trace, settings: Settings) -> None:
    """The app as GitHub has it: installed on the fleet and the control repository (the payloads name
    installation 1) with the permissions pager's manifest asks for, its endpoints taking only its own JWT."""
    for name in [fleet.CONTROL_REPOSITORY] + [repo.full_name for repo in trace.repos]:
        github.installations[name] = 1
    github.installation_permissions[1] = needed_permissions()
    github.app_id = settings.github_app_id
    github.hook.update(url=HOOK_URL, secret=settings.github_webhook_secret)  # where GitHub delivers: what the sweep pings


def join_chat(telegram: FakeTelegram, settings: Settings) -> None:
    """The bot is in the maintainer's chat: a supergroup (its id says so)."""
    telegram.add_chat(settings.telegram_chat_id, "supergroup", title="fleet alarms")


def make_services(settings: Settings, store: Any, session: Any, clock: Clock) -> Services:
    from pager.bootstrap import configure_session
    from pager.github import GitHub
    from pager.telegram import Telegram

    session = configure_session(session, os.environ)  # as a deployment's session is
    return Services(
        settings=settings,
        store=store,
        github=GitHub(session, app_id=settings.github_app_id, private_key=settings.github_private_key,
                      api_url=settings.github_api_url, clock=clock),
        telegram=Telegram(session, token=settings.telegram_bot_token, api_url=settings.telegram_api_url, sleep=clock.sleep),
        clock=clock,
        sleep=clock.sleep,
    )


@contextlib.contextmanager
def quiet(sink: Any = None) -> Iterator[None]:
    """Send pager's log lines and EMF blobs to `sink` (default: /dev/null): still written (their cost
    counts), not shown."""
    log = logging.getLogger("pager")
    with open(os.devnull, "w") as devnull:
        sink = sink if sink is not None else devnull
        handlers = [h for h in log.handlers if isinstance(h, logging.StreamHandler)]
        streams = [h.setStream(sink) for h in handlers]
        propagate, log.propagate = log.propagate, False  # nor to a test runner's capture
        try:
            with contextlib.redirect_stdout(sink), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield
        finally:
            log.propagate = propagate
            for handler, stream in zip(handlers, streams, strict=True):
                if stream is not None:
                    handler.setStream(stream)


def sweep_function(design: str) -> Callable[..., dict[str, Any]]:
    if design in PAGER_DESIGNS:
        from pager.sweep import run_sweep

        return run_sweep
    if design == "first":
        return alternatives.first_design_sweep
    if design == "script":
        return alternatives.github_script_sweep
    raise ValueError(f"unknown design {design!r}")


def register_signals() -> list[str]:
    """The events the signals table acts on (the app subscribes to these)."""
    from pager.signals import subscribed_events

    return subscribed_events()


def open_delivery_entries(store: Any, ref: str, now: float) -> set[str]:
    """The guids of the `delivery:` entries open now in a repository's alarm, as its items keep them
    (read past the counting store: a look, not a round trip of the pager's)."""
    from pager.signals.alarm import DELIVERY_PREFIX, alarm_key, open_entries

    entries = open_entries(store.inner.items(alarm_key(ref)), now)
    return {key[len(DELIVERY_PREFIX):] for key in entries if key.startswith(DELIVERY_PREFIX)}




def effects(store: FaultyStore, telegram: FakeTelegram, github: FakeGitHub) -> int:
    """Everything that changes state so far: signal records written (not the sweeps' own, where a
    handler also notes what waits; a lost conditional write changed nothing), Telegram messages sent
    and edited, dispatches and merges."""
    writes = sum(n for kind, n in store.writes.items() if kind not in SWEEP_KINDS)
    conflicts = sum(n for kind, n in store.conflicts.items() if kind not in SWEEP_KINDS)
    return writes - conflicts + len(telegram.sent) + len(telegram.edits) + len(github.dispatches) + len(github.merges)


def _end(faults: Faults, rule: Rule) -> None:
    """An outage ends: its rule leaves the list (a count set to 0 would stop it matching, but leave it in
    the list to be looked at on every call)."""
    faults.rules[:] = [r for r in faults.rules if r is not rule]


# The custom metrics pager published before they were cut to what an alarm reads (the parent of commit
# a7c4e0f): the webhook a metric per delivery and per outcome, the sweep six every run, zeros included.
METRICS_BEFORE_PER_RUN = ("Redeliveries", "EntriesOpened", "EntriesClosed", "CallsUsed", "ReachGap list=failures",
                          "ReachGap list=all")


@contextlib.contextmanager
def published_metrics(clock: Clock) -> Iterator[set[tuple[str, int]]]:
    """The custom metrics pager publishes meanwhile, as (metric, hour on the virtual clock): CloudWatch
    bills a metric for each hour it gets data."""
    from pager.observe import metrics

    seen: set[tuple[str, int]] = set()
    add = metrics.add_metric

    def recorded(*, name: str, unit: Any, value: float, **kwargs: Any) -> None:
        seen.add((name, int(clock() // 3600)))
        add(name=name, unit=unit, value=value, **kwargs)

    metrics.add_metric = recorded  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        del metrics.add_metric


# ------------------------------------------------------------------------------------ the replay


class Replay:
    """One replay of a trace with one sweep design: the fake world, the schedules, and what is counted."""

    def __init__(self, trace: fleet.Trace, design: str, *, pem: str, drain: float = DRAIN, quiet_hours: str = "",
                 buzz_gap: int | None = None, progress: Callable[[str], None] | None = None,
                 cpu: Callable[[], float] = time.process_time) -> None:
        from pager.bootstrap import SETTINGS_REFRESH_SECONDS

        register_signals()
        self.trace, self.design, self.drain, self.progress = trace, design, drain, progress
        self.cpu = cpu  # the CPU clock the functions' time is billed by
        self.lambda_handler = load_handler("webhook")
        self.context = LambdaContext("pager-webhook", seconds=10**9)  # the virtual clock keeps time, not this
        self.sweep = sweep_function(design)
        self.clock = Clock(trace.start)
        self.faults = Faults(record=False)
        self.telegram = FakeTelegram(faults=self.faults, keep_requests=False, clock=self.clock)
        self.github = FakeGitHub(clock=self.clock, faults=self.faults, api_url=GITHUB_API, keep_requests=False)
        self.ledger = phone.Ledger(self.clock, lambda: self.logs.function)  # what attention is about, in order
        self.store = bill.MeteredStore(self.faults, self.ledger)
        self.sweep_keys: Counter[str] = Counter()  # writes of the sweeps' own records, by key
        self.own_writes = 0  # writes of the sweep's own records and of pager's own health, all along
        self.recovery_writes: list[float] = []  # when a delivery noted what waits (in the sweep's state item)
        self.faults.observers.append(self._observe)
        self.by_guid = trace.by_guid()
        for key, pull in trace.pulls.items():
            self.github.pulls[key] = copy.deepcopy(pull)
        self.settings = dataclasses.replace(bench_settings(pem), quiet_hours=quiet_hours)
        if buzz_gap is not None:  # BUZZ_GAP_MINUTES (None: the default)
            self.settings = dataclasses.replace(self.settings, buzz_gap_minutes=buzz_gap)
        install_on_fleet(self.github, trace, self.settings)
        join_chat(self.telegram, self.settings)
        self.in_fakes = 0.0  # CPU seconds spent outside the invoked function: the fakes, a function it reached
        self.inner_trips = 0  # table round trips of every invocation, each counted once (a ping's inside the sweep's)
        self.pings: Counter[int] = Counter()  # the sweep's pings of pager's own endpoint, by status (0: no answer)
        self.pings_answered = 0  # of them, those that reached the webhook function (not down)
        session = session_for({GITHUB_API: self._timed(self.github), TELEGRAM_API: self._timed(self.telegram),
                               PAGER_HOST: self._pinged})
        self.webhook_services = make_services(self.settings, self.store, session, self.clock)
        self.sweep_services = make_services(self.settings, self.store, session, self.clock)
        self.memory_mb = bill.template_resources()["memory_mb"]
        self.lambdas = {f: bill.Invocations(bill.Environments(refresh=SETTINGS_REFRESH_SECONDS)) for f in bill.FUNCTIONS}
        self.logs = bill.LogMeter()
        self.http_api_units = 0
        self.scheduled_events = 0
        self.handler_status: Counter[int] = Counter()
        self.first_answers: Counter[int] = Counter()  # quarter hour -> events delivered the first time in it
        self.first_5xx: Counter[int] = Counter()  # quarter hour -> of them, answered 5xx
        self.earlier: set[tuple[str, int]] = set()  # what the code before the cut published, from the same replay
        self.changed: defaultdict[str, list[bool]] = defaultdict(list)  # guid -> per attempt: did handling it change state
        self.runs: list[dict[str, Any]] = []  # every sweep run: scheduled, or started by the recovery check
        self.checks: list[dict[str, Any]] = []  # every recovery check
        self.scheduled = 0
        self.started = time.perf_counter()
        self.alarmed: set[str] = set()  # every delivery entry the control repository's alarm showed
        self.active: dict[fleet.Fault, Rule] = {}
        self.github.endpoint = self._endpoint

    # -- instruments

    def _observe(self, service: str, name: str) -> None:
        if service != "store" or not name.startswith("save "):
            return
        key = name[5:]
        if key == f"{SWEEP_KEY} [{WAITING_ITEM}]" and self.logs.function == "webhook":  # a handler's 500 noted what waits
            self.recovery_writes.append(self.clock())
        elif key_kind(key.split(" [", 1)[0]) in SWEEP_KINDS:  # "sweep [lease]": the key, then its item
            self.sweep_keys[key] += 1
            self.own_writes += 1
        elif key.startswith(alarm_key(CONTROL)):  # pager's own health in the control repository's alarm
            self.own_writes += 1

    def _timed(self, fake: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
        def call(request: HttpRequest) -> HttpResponse:
            t0 = self.cpu()
            try:
                return fake(request)
            finally:
                self.in_fakes += self.cpu() - t0
        return call

    def _metered(self, function: str, services: Services, call: Callable[[], Any]) -> Any:
        """Invoke one Lambda function: its CPU time here (the fakes' left out), its calls and its table
        round trips go to the bill. An invocation inside another (the webhook function the sweep's ping
        reaches) is billed as its own, and left out of the other's as the fakes are."""
        outer, self.logs.function = self.logs.function, function
        at = self.clock()
        github, telegram, trips, inner = services.github.calls, services.telegram.calls, self.store.round_trips, self.inner_trips
        cpu, fakes = self.cpu(), self.in_fakes
        try:
            return call()
        finally:
            self.logs.function = outer  # a ping's invocation inside the sweep's: the sweep's again
            elapsed = self.cpu() - cpu
            own = elapsed - (self.in_fakes - fakes)
            table = self.store.round_trips - trips - (self.inner_trips - inner)
            calls = {"github": services.github.calls - github, "telegram": services.telegram.calls - telegram, "table": table}
            self.lambdas[function].add(at, cpu=own, calls=calls, waited=self.clock() - at, memory_mb=self.memory_mb[function])
            self.in_fakes, self.inner_trips = fakes + elapsed, self.inner_trips + table  # outside whatever invoked it

    # -- GitHub's deliveries

    def _down(self) -> int | None:
        """What pager's endpoint itself answers now to whatever reaches it (its domain, API Gateway, the
        function), without running pager; None: it runs pager."""
        return None

    def _pinged(self, request: HttpRequest) -> HttpResponse:
        """pager's own endpoint as the sweep's ping reaches it: down, or the real webhook function, billed as an
        invocation; no answer in a period without answers as a delivery's attempt gets none."""
        from pager import bootstrap

        status = self._down()
        if status is None:
            guid = request.headers.get("X-GitHub-Delivery", "")
            headers = {k.lower(): v for k, v in request.headers.items()}
            apigw = apigw_event(request.method, request.path, headers, request.body)
            self.http_api_units += 1
            bootstrap.use(self.webhook_services)
            answer = self._metered("webhook", self.webhook_services, lambda: self.lambda_handler(apigw, self.context))
            self.pings_answered += 1
            status = 0 if self.trace.no_answer(guid, 0, self.clock()) else int(answer.get("statusCode", 500))
        self.pings[status] += 1
        return HttpResponse(status, None if status else b"")

    def _endpoint(self, guid: str, event: str, payload: dict[str, Any], redelivery: bool) -> int:
        from pager import bootstrap

        down = self._down()
        if down is not None:
            self.changed[guid].append(False)  # pager did not run: nothing changed
            if down == 0:
                raise TimeoutError(guid)
            return down
        attempt = len(self.github.log.get(guid, ()))
        body = fleet.render(self.by_guid[guid], self.trace)
        apigw = github_event(event, body, guid=guid, secret=WEBHOOK_SECRET)
        self.http_api_units += max(1, math.ceil(len(body) / prices.HTTP_API_METERED_BYTES))
        bootstrap.use(self.webhook_services)
        before = effects(self.store, self.telegram, self.github)
        answer = self._metered("webhook", self.webhook_services, lambda: self.lambda_handler(apigw, self.context))
        self.changed[guid].append(effects(self.store, self.telegram, self.github) != before)
        status = int(answer.get("statusCode", 500))
        self.handler_status[status] += 1
        if attempt == 0:  # an event's first delivery: counted per quarter hour, and its 5xx
            quarter = int((self.by_guid[guid].at - self.trace.start) // fleet.QUARTER)
            self.first_answers[quarter] += 1
            self.first_5xx[quarter] += status >= 500
        hour = int(self.clock() // 3600)
        self.earlier.add(("Deliveries", hour))
        if status >= 400:
            self.earlier.add(("DeliveriesFailed" if status >= 500 else "DeliveriesRefused", hour))
        if self.trace.no_answer(guid, attempt, self.clock()):
            raise TimeoutError(guid)  # the pager answered (and may have acted), GitHub did not wait for it
        return status

    # -- the schedules

    def schedule(self) -> list[tuple[float, int, str, Any]]:
        """(time, order, what, fault): the outages' starts and ends, the scheduled runs, the checks."""
        trace, end = self.trace, self.trace.end + self.drain
        items: list[tuple[float, int, str, Any]] = []
        for every, offset, order, what in ((SWEEP_EVERY, SWEEP_OFFSET, 2, "sweep"), (CHECK_EVERY, CHECK_OFFSET, 3, "check")):
            if what == "check" and self.design not in CHECKED:
                continue
            t = trace.start + offset
            while t < end:
                items.append((t, order, what, None))
                t += every
        for fault in trace.faults:
            if fault.kind in ("telegram", "github"):
                items.append((fault.start, 0, "on", fault))
                items.append((fault.end, 1, "off", fault))
        items.sort(key=lambda s: (s[0], s[1]))
        return items

    def _fault(self, what: str, fault: fleet.Fault) -> None:
        if what == "off":
            _end(self.faults, self.active.pop(fault))
        elif fault.kind == "telegram":
            self.active[fault] = self.telegram.fail(None, 502, count=10**9)
        else:
            self.active[fault] = self.github.fail(GITHUB_OUTAGE, 502, count=10**9)

    def _writes(self) -> int:
        """The table's writes so far."""
        return sum(self.store.writes.values())

    def _invoke_sweep(self, call: Callable[[], dict[str, Any]]) -> tuple[dict[str, Any], int, dict[str, int]]:
        """A sweep function invocation: its summary, its GitHub and Telegram calls, its table writes (all, and its
        own: the sweep's records and pager's own health, not the repositories' alarms and calls it settles too)."""
        services = self.sweep_services
        calls, writes, own = services.github.calls + services.telegram.calls, self._writes(), self.own_writes
        self.scheduled_events += 1
        summary = self._metered("sweep", services, call)
        return (summary, services.github.calls + services.telegram.calls - calls,
                {"all": self._writes() - writes, "own": self.own_writes - own})

    def _scheduled(self, at: float) -> None:
        self.scheduled += 1
        run_id = f"{self.design}-{self.scheduled}"
        ids = {"event_id": run_id} if self.design in PAGER_DESIGNS else {}  # EventBridge's event id
        summary, calls, writes = self._invoke_sweep(
            lambda: self.sweep(self.sweep_services, now=at, run_id=run_id, **ids))
        self.earlier.update((name, int(at // 3600)) for name in METRICS_BEFORE_PER_RUN)
        self._ran(at, summary, calls, writes, "scheduled")

    def _check(self, at: float) -> None:
        from pager.sweep.run import RUN_SECONDS, check

        run_id = f"{self.design}-check-{len(self.checks) + 1}"
        summary, calls, writes = self._invoke_sweep(
            lambda: check(self.sweep_services, now=at, run_id=run_id, seconds=RUN_SECONDS))
        swept = "call_budget" in summary  # the check ran the sweep (its summary is the run's)
        self.checks.append({"at": at, "calls": calls, "swept": swept, "outcome": str(summary.get("outcome", ""))})
        if swept:
            self._ran(at, summary, calls, writes, "check")
        elif summary.get("redeliveries"):  # the minute's redeliveries it asked for: GitHub carries them out
            self.clock.set(at + REDELIVERY_DELAY)
            self.github.deliver_pending()

    def _ran(self, at: float, summary: dict[str, Any], calls: int, writes: dict[str, int], kind: str) -> None:
        """After a sweep run: note it, look at the alarm, and let GitHub carry out the redeliveries."""
        self.alarmed |= open_delivery_entries(self.store, CONTROL, self.clock())
        self.runs.append({"at": at, "calls": calls, "writes": writes["all"], "own_writes": writes["own"], "kind": kind,
                          "redeliveries": summary.get("redeliveries", 0), "gaps": len(summary.get("reach_gaps") or ()),
                          "outcome": str(summary.get("outcome", "")), "recovery": str(summary.get("recovery", "")),
                          "held": int((summary.get("decisions") or {}).get("held", 0)),
                          "state_bytes": int(summary.get("state_bytes", 0))})
        self.clock.set(at + REDELIVERY_DELAY)
        self.github.deliver_pending()
        self.github.prune(self.clock())
        if self.progress and kind == "scheduled" and self.scheduled % 96 == 0:
            self.progress(f"{self.design}: day {self.scheduled // 96} simulated ({time.perf_counter() - self.started:.0f} s)")

    # -- the whole replay

    def run(self) -> dict[str, Any]:
        """Replay the trace; returns the measures (see `pager_bench.measure`)."""
        from pager import bootstrap

        events, i = self.trace.events, 0
        self.started = time.perf_counter()
        with quiet(self.logs), published_metrics(self.clock) as after:
            for at, _, what, fault in self.schedule():
                while i < len(events) and events[i].at < at:
                    e = events[i]
                    self.clock.set(e.at)
                    self.github.deliver(e.event, {"action": e.action, "repository": {"id": self.trace.repos[e.repo].id}},
                                        guid=e.guid)
                    i += 1
                self.clock.set(at)
                if what in ("on", "off"):
                    self._fault(what, fault)
                elif what == "sweep":
                    self._scheduled(at)
                else:
                    self._check(at)
        bootstrap.use(None)
        return self._result(after)

    def _result(self, after: set[tuple[str, int]]) -> dict[str, Any]:
        trace, settings = self.trace, self.settings
        open_at_end = open_delivery_entries(self.store, CONTROL, self.clock())
        result = measure(trace, self.github.log, self.store, self.runs, self.alarmed | open_at_end, changed=self.changed,
                         sweep_keys=self.sweep_keys, budget=settings.sweep_call_budget, checks=self.checks,
                         recovery_writes=self.recovery_writes, max_attempts=settings.sweep_max_attempts)
        result["counts"]["alarm_open_at_end"] = len(open_at_end)
        sent = sum(self.pings.values())
        result["pings"] = {"sent": sent, "answered": self.pings_answered, "down": sent - self.pings_answered,
                           "passed": sum(n for status, n in self.pings.items() if 200 <= status < 300)}
        busiest = max(self.first_answers, key=lambda q: (self.first_answers[q], -q), default=0)
        result["first_answers"] = {"busiest_quarter": busiest, "busiest": self.first_answers[busiest],
                                   "busiest_5xx": self.first_5xx[busiest], "all_5xx": sum(self.first_5xx.values()),
                                   "max_5xx": max(self.first_5xx.values(), default=0)}
        span = trace.end + self.drain - trace.start
        if self.design in PAGER_DESIGNS:
            earlier = self.earlier | {(name, hour) for name, hour in after if name == "DeliveriesRefusedUpstream"}
            weeks = span / (7 * 24 * 3600)
            result["metrics"] = {
                when: {"names": sorted({name for name, _ in hours}), "metric_hours_per_week": len(hours) / weeks}
                for when, hours in (("before", earlier), ("after", after))
            }
        result["aws"] = {
            "span_seconds": span,
            "lambda": {f: self.lambdas[f].to_data() for f in bill.FUNCTIONS},
            "http_api_units": self.http_api_units,
            "dynamodb": {"read_units": self.store.read_units, "write_units": self.store.write_units,
                         "loads": self.store.loads, "writes": sum(self.store.writes.values()),
                         "stored_bytes": self.store.stored_bytes()},
            "log_bytes": dict(self.logs.bytes),
            "metric_hours": len(after),
            "scheduled_events": self.scheduled_events,
        }
        if self.design in CHECKED:  # the grace's model needs the every-minute check
            checks = phone.check_times(trace.start + CHECK_OFFSET, CHECK_EVERY, trace.end + self.drain)
            down = [(f.start, f.end) for f in trace.faults if f.kind == "telegram"]
            result["phone"] = phone.observe(self.telegram, self.ledger, grace=settings.alarm_grace, zone=settings.zone,
                                            quiet_hours=settings.quiet_hours, checks=checks, down=down,
                                            rest=settings.buzz_gap)
        result.update(design=self.design, call_budget=settings.sweep_call_budget, handler_status=dict(self.handler_status),
                      seconds=time.perf_counter() - self.started, chat_messages=len(self.telegram.messages),
                      dispatches=len(self.github.dispatches), events=len(trace.events))
        return result


def simulate(trace: fleet.Trace, design: str, *, pem: str, drain: float = DRAIN, quiet_hours: str = "",
             buzz_gap: int | None = None, progress: Callable[[str], None] | None = None,
             cpu: Callable[[], float] = time.process_time) -> dict[str, Any]:
    """Replay the trace with one sweep design (and QUIET_HOURS, "" for none; BUZZ_GAP_MINUTES, None for the
    default; `cpu`, the clock the functions' CPU time is billed by); returns the measures (see
    `pager_bench.measure`, and `pager_bench.phone` for the design "pager")."""
    return Replay(trace, design, pem=pem, drain=drain, quiet_hours=quiet_hours, buzz_gap=buzz_gap,
                  progress=progress, cpu=cpu).run()


# ------------------------------------------------------------------------- the designs side by side

Key = tuple[str, str, str, int | None]  # a trace's name, a design, QUIET_HOURS, BUZZ_GAP_MINUTES (None: default)


def _label(name: str, quiet_hours: str, gap: int | None) -> str:
    return (f"{name} trace" + (f", quiet hours {quiet_hours}" if quiet_hours else "")
            + (f", BUZZ_GAP_MINUTES={gap}" if gap is not None else ""))


def replay_job(name: str, design: str, quiet_hours: str, gap: int | None, *, pem: str, drain: float,
               cpu: Callable[[], float]) -> dict[str, Any]:
    """One replay of `design_jobs`, in whichever process runs it: the trace is the one shared under "traces"."""
    said = shared("progress")
    progress = (lambda text: said(f"{_label(name, quiet_hours, gap)}, {text}")) if said else None
    return simulate(shared("traces")[name], design, pem=pem, drain=drain, quiet_hours=quiet_hours, buzz_gap=gap,
                    progress=progress, cpu=cpu)


def _on(traces: dict[str, fleet.Trace], designs: list[str], quiet_on: Sequence[str]) -> list[str]:
    return [name for name in quiet_on if name in traces and "pager" in designs]


# About what a replay takes, in CPU seconds per event of its trace (more with the every-minute check): the
# jobs' weight.
CPU_PER_EVENT = {"pager": 6.5e-4}
CPU_PER_EVENT_ELSE = 5e-4


def design_jobs(traces: dict[str, fleet.Trace], designs: list[str], *, pem: str, quiet_on: Sequence[str] = (),
                gaps: Sequence[int] = phone.GAPS, drain: float = DRAIN,
                cpu: Callable[[], float] = time.process_time) -> list[Job]:
    """Each trace once per design; on each trace named in `quiet_on`, pager once more with QUIET_HOURS set to
    the maintainer's night (`phone.NIGHT`), and once more for each other BUZZ_GAP_MINUTES of `gaps`. Whoever
    runs them (`jobs.side_by_side`) shares the traces by name under "traces", and a progress callback (or
    None) under "progress"."""
    on = _on(traces, designs, quiet_on)
    default = bench_settings(pem).buzz_gap_minutes
    keys: list[Key] = [(name, d, "", None) for name in traces for d in designs]
    keys += [(name, "pager", phone.NIGHT, None) for name in on]
    keys += [(name, "pager", "", gap) for name in on for gap in gaps if gap != default]
    return [Job(key=("replay", *key), run=replay_job, args=key, kwargs={"pem": pem, "drain": drain, "cpu": cpu},
                weight=len(traces[key[0]].events) * CPU_PER_EVENT.get(key[1], CPU_PER_EVENT_ELSE),
                label=f"{_label(key[0], key[2], key[3])}, {key[1]}")
            for key in keys]


def design_results(traces: dict[str, fleet.Trace], designs: list[str], done: dict[Any, Any], *, pem: str,
                   quiet_on: Sequence[str] = (), gaps: Sequence[int] = phone.GAPS) -> dict[str, dict[str, dict[str, Any]]]:
    """The results of `design_jobs` by trace, then design; what pager's phone lived through with quiet hours
    and with each rest is its result's `phone_quiet` and `phone_gaps` (by minutes, the default's among them)."""
    results = {name: {d: done[("replay", name, d, "", None)] for d in designs} for name in traces}
    default = bench_settings(pem).buzz_gap_minutes
    for name in _on(traces, designs, quiet_on):
        mine = results[name]["pager"]
        mine["phone_quiet"] = done[("replay", name, "pager", phone.NIGHT, None)]["phone"]
        mine["phone_gaps"] = {gap: (mine if gap == default else done[("replay", name, "pager", "", gap)])["phone"]
                              for gap in gaps}
    return results
