"""Replaying a trace with one sweep design through the real webhook handler and the real sweep.

The world is `pager_world`'s, built for a long run: `FakeGitHub` (listing by bisect, three days of
retention, every attempt logged by guid), `FakeTelegram`, and the in-memory table behind
`FaultyStore`, which counts every load and write (DynamoDB bills a failed conditional write too);
one `Faults`, recording nothing, holds the outages. GitHub's deliveries call the real
`functions/webhook/app.py:lambda_handler` with a signed API Gateway event; one virtual clock is shared
by the fakes, the services and the sweep, which runs every 900 s; GitHub carries out the
redeliveries asked for right after each run.

For every attempt the endpoint answers, the replay records whether handling it changed state: a
write of a signal record (the store's counters, a lost conditional write left out), a Telegram
message sent or edited, a GitHub dispatch or merge, between the handler's start and its end. Kept
per guid, one boolean per attempt in the order of `FakeGitHub.log` (`changed`), for `measure`.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import multiprocessing
import os
import time
import warnings
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterator

from pager.services import Services
from pager.settings import Settings
from pager_local.local import load_handler
from pager_world.clock import Clock
from pager_world.events import github_event
from pager_world.faults import Faults, Rule
from pager_world.github import FakeGitHub
from pager_world.http import session_for
from pager_world.store import FaultyStore, key_kind
from pager_world.telegram import FakeTelegram

from . import alternatives, fleet
from .measure import SWEEP_KINDS, measure

GITHUB_API = "https://api.github.com"
TELEGRAM_API = "https://api.telegram.org"
WEBHOOK_SECRET = "bench-webhook-secret"
SWEEP_EVERY = 900.0
SWEEP_OFFSET = 60.0  # the schedule's first run, after the trace starts
REDELIVERY_DELAY = 2.0  # GitHub delivers again shortly after its 202
DRAIN = 4 * 3600.0  # runs after the last event: what is still failing then has had its chances

# The REST calls the handlers make (installation tokens, pull requests, dispatches): a GitHub burst
# answers them 502, not the deliveries list. A Telegram outage answers every Bot API method 502.
GITHUB_OUTAGE = r"^\w+ /repos/|^\w+ /app/installations/"

DESIGNS = {
    "pager": "pager's sweep (amended decision)",
    "first": "(a) first design: one list, 3 pages",
    "script": "(b) GitHub's redelivery script",
}


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
    installation 1), its endpoints taking only its own JWT."""
    for name in [fleet.CONTROL_REPOSITORY] + [repo.full_name for repo in trace.repos]:
        github.installations[name] = 1
    github.app_id = settings.github_app_id


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
def quiet() -> Iterator[None]:
    """Send pager's log lines and EMF blobs to /dev/null: still written (their cost counts), not shown."""
    log = logging.getLogger("pager")
    with open(os.devnull, "w") as sink:
        handlers = [h for h in log.handlers if isinstance(h, logging.StreamHandler)]
        streams = [h.setStream(sink) for h in handlers]
        propagate, log.propagate = log.propagate, False  # nor to a test runner's capture
        try:
            with contextlib.redirect_stdout(sink), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield
        finally:
            log.propagate = propagate
            for handler, stream in zip(handlers, streams):
                if stream is not None:
                    handler.setStream(stream)


def sweep_function(design: str) -> Callable[..., dict[str, Any]]:
    if design == "pager":
        from pager.sweep import run_sweep

        return run_sweep
    if design == "first":
        return alternatives.first_design_sweep
    if design == "script":
        return alternatives.github_script_sweep
    raise ValueError(f"unknown design {design!r}")


def register_signals() -> list[str]:
    """The events the signals table acts on."""
    from pager.signals import subscribed_events

    return subscribed_events()


def open_delivery_entries(store: Any, repository: str, now: float) -> set[str]:
    """The guids of the `delivery:` entries open now in a repository's alarm, as its items keep them
    (read past the counting store: a look, not a round trip of the pager's)."""
    from pager.signals.alarm import DELIVERY_PREFIX, alarm_key, open_entries

    entries = open_entries(store.inner.items(alarm_key(repository)), now)
    return {key[len(DELIVERY_PREFIX):] for key in entries if key.startswith(DELIVERY_PREFIX)}


def effects(store: FaultyStore, telegram: FakeTelegram, github: FakeGitHub) -> int:
    """Everything that changes state so far: signal records written (not the sweeps' own; a lost
    conditional write changed nothing), Telegram messages sent and edited, dispatches and merges."""
    writes = sum(n for kind, n in store.writes.items() if kind not in SWEEP_KINDS)
    conflicts = sum(n for kind, n in store.conflicts.items() if kind not in SWEEP_KINDS)
    return writes - conflicts + len(telegram.sent) + len(telegram.edits) + len(github.dispatches) + len(github.merges)


def _end(faults: Faults, rule: Rule) -> None:
    """An outage ends: its rule leaves the list (a count set to 0 would stop it matching, but leave it in
    the list to be looked at on every call)."""
    faults.rules[:] = [r for r in faults.rules if r is not rule]


# ------------------------------------------------------------------------------------ the replay


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


def simulate(trace: fleet.Trace, design: str, *, pem: str, drain: float = DRAIN, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Replay the trace with one sweep design; returns the measures (see `pager_bench.measure`)."""
    from pager import bootstrap

    register_signals()
    lambda_handler = load_handler("webhook")
    clock = Clock(trace.start)
    faults = Faults(record=False)
    telegram = FakeTelegram(faults=faults, keep_requests=False)
    github = FakeGitHub(clock=clock, faults=faults, api_url=GITHUB_API, keep_requests=False)
    store = FaultyStore(faults)
    sweep_keys: Counter[str] = Counter()  # writes of the sweeps' own records, by key

    def count_sweep_keys(service: str, name: str) -> None:
        if service == "store" and name.startswith("save ") and key_kind(name[5:]) in SWEEP_KINDS:
            sweep_keys[name[5:]] += 1

    faults.observers.append(count_sweep_keys)
    by_guid = trace.by_guid()
    for key, pull in trace.pulls.items():
        github.pulls[key] = copy.deepcopy(pull)
    settings = bench_settings(pem)
    install_on_fleet(github, trace, settings)
    session = session_for({GITHUB_API: github, TELEGRAM_API: telegram})
    webhook_services = make_services(settings, store, session, clock)
    sweep_services = make_services(settings, store, session, clock)
    handler_status: Counter[int] = Counter()
    earlier: set[tuple[str, int]] = set()  # what the code before the cut published, from the same replay
    changed: defaultdict[str, list[bool]] = defaultdict(list)  # guid -> per attempt: did handling it change state

    def endpoint(guid: str, event: str, payload: dict[str, Any], redelivery: bool) -> int:
        attempt = len(github.log.get(guid, ()))
        body = fleet.render(by_guid[guid], trace)
        bootstrap.use(webhook_services)
        before = effects(store, telegram, github)
        answer = lambda_handler(github_event(event, body, guid=guid, secret=WEBHOOK_SECRET), None)
        changed[guid].append(effects(store, telegram, github) != before)
        status = int(answer.get("statusCode", 500))
        handler_status[status] += 1
        hour = int(clock() // 3600)
        earlier.add(("Deliveries", hour))
        if status >= 400:
            earlier.add(("DeliveriesFailed" if status >= 500 else "DeliveriesRefused", hour))
        if trace.no_answer(guid, attempt, clock()):
            raise TimeoutError(guid)  # the pager answered (and may have acted), GitHub did not wait for it
        return status

    github.endpoint = endpoint
    sweep = sweep_function(design)
    schedule: list[tuple[float, int, str, Any]] = []
    t = trace.start + SWEEP_OFFSET
    while t < trace.end + drain:
        schedule.append((t, 2, "sweep", None))
        t += SWEEP_EVERY
    for fault in trace.faults:
        if fault.kind in ("telegram", "github"):
            schedule.append((fault.start, 0, "on", fault))
            schedule.append((fault.end, 1, "off", fault))
    schedule.sort(key=lambda s: (s[0], s[1]))
    active: dict[fleet.Fault, Rule] = {}
    runs: list[dict[str, Any]] = []
    alarmed: set[str] = set()  # every delivery entry the control repository's alarm showed
    events = trace.events
    i = 0
    started = time.perf_counter()
    with quiet(), published_metrics(clock) as after:
        for at, _, what, fault in schedule:
            while i < len(events) and events[i].at < at:
                e = events[i]
                clock.set(e.at)
                github.deliver(e.event, {"action": e.action, "repository": {"id": trace.repos[e.repo].id}}, guid=e.guid)
                i += 1
            clock.set(at)
            if what == "on":
                if fault.kind == "telegram":
                    active[fault] = telegram.fail(None, 502, count=10**9)
                else:
                    active[fault] = github.fail(GITHUB_OUTAGE, 502, count=10**9)
            elif what == "off":
                _end(faults, active.pop(fault))
            else:
                before = sweep_services.github.calls + sweep_services.telegram.calls
                summary = sweep(sweep_services, now=at, run_id=f"{design}-{len(runs) + 1}")
                earlier.update((name, int(at // 3600)) for name in METRICS_BEFORE_PER_RUN)
                calls = sweep_services.github.calls + sweep_services.telegram.calls - before
                alarmed |= open_delivery_entries(store, settings.control_repository, clock())
                runs.append({"at": at, "calls": calls, "redeliveries": summary.get("redeliveries", 0),
                             "gaps": len(summary.get("reach_gaps") or ()), "outcome": str(summary.get("outcome", ""))})
                clock.set(at + REDELIVERY_DELAY)
                github.deliver_pending()
                github.prune(clock())
                if progress and len(runs) % 96 == 0:
                    progress(f"{design}: day {len(runs) // 96} simulated ({time.perf_counter() - started:.0f} s)")
    bootstrap.use(None)
    open_at_end = open_delivery_entries(store, settings.control_repository, clock())
    result = measure(trace, github.log, store, runs, alarmed | open_at_end, changed=changed, sweep_keys=sweep_keys,
                     budget=settings.sweep_call_budget)
    result["counts"]["alarm_open_at_end"] = len(open_at_end)
    if design == "pager":
        earlier |= {(name, hour) for name, hour in after if name == "DeliveriesRefusedUpstream"}  # published alike before
        weeks = (trace.end + drain - trace.start) / (7 * 24 * 3600)
        result["metrics"] = {
            when: {"names": sorted({name for name, _ in hours}), "metric_hours_per_week": len(hours) / weeks}
            for when, hours in (("before", earlier), ("after", after))
        }
    result.update(design=design, call_budget=settings.sweep_call_budget, handler_status=dict(handler_status),
                  seconds=time.perf_counter() - started, chat_messages=len(telegram.messages),
                  dispatches=len(github.dispatches))
    return result


# ------------------------------------------------------------------------- the designs side by side

_TRACE: fleet.Trace | None = None
_PEM = ""
_PROGRESS: Callable[[str], None] | None = None


def _simulate_one(design: str) -> dict[str, Any]:
    assert _TRACE is not None
    return simulate(_TRACE, design, pem=_PEM, progress=_PROGRESS)


def simulate_designs(trace: fleet.Trace, designs: list[str], *, pem: str, jobs: int = 1,
                     progress: Callable[[str], None] | None = None) -> dict[str, dict[str, Any]]:
    """Replay the trace once per design, `jobs` of them at a time in forked processes (which inherit
    the trace instead of receiving it pickled)."""
    global _TRACE, _PEM, _PROGRESS
    _TRACE, _PEM, _PROGRESS = trace, pem, progress
    try:
        if jobs > 1 and len(designs) > 1 and "fork" in multiprocessing.get_all_start_methods():
            with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
                return dict(zip(designs, pool.map(_simulate_one, designs)))
        return {d: _simulate_one(d) for d in designs}
    finally:
        _TRACE, _PEM, _PROGRESS = None, "", None
