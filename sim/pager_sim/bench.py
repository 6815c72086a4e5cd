"""`make bench`: a busy fleet's week on a virtual clock, through the real webhook handler and the real sweep.

    python -m pager_sim.bench [--days 7] [--seed 1] [--jobs 2] [--out docs/benchmarks.md]

What it does:
1. makes the fleet's trace (`pager_sim.fleet`): every event GitHub sends, with its faults;
2. replays it three times, once per sweep (pager's `run_sweep`, the decision's first design, GitHub's
   documented script, `pager_sim.alternatives`): GitHub's side is the emulator of `pager_sim.emulators`,
   whose deliveries call the real `functions/webhook/app.py:lambda_handler` with a signed API Gateway
   event; Telegram's side is its emulator; the table is the in-memory store, counted; one virtual clock
   is shared by the emulator, the services and the sweep, which runs every 900 s, and GitHub carries
   out the redeliveries asked for right after each run;
3. measures the webhook handler's own cost per delivery next to the floor (signature check plus JSON
   parse of the same body), and the cold import of both functions from the built layer with and
   without compiled bytecode;
4. writes the tables to docs/benchmarks.md, each target with its measured value and met / not met.

Definitions (per event, that is per guid, from GitHub's list of attempts):
- failed: an attempt got a 5xx or no answer (GitHub records status_code 0, "timed out");
- recovered: failed, and a later attempt passed; time to recovery runs from the first failed attempt
  to the passing one;
- alarmed: failed, never passed, and a `delivery:<guid>` entry of the control repository's alarm
  (looked at after every run: an entry the sweep closes three days later, when GitHub no longer lists
  the event, was shown all that time);
- superseded: failed, never passed, of a kind in SUPERSEDED, and a newer event of the same kind and
  repository, one the pager acts on, passed;
- ignored: failed, never passed, and the pager has no handler for its event and action (it answers
  such an event 200 "ignored", so a redelivery could change nothing and nothing is lost);
- lost silently: failed, never passed, neither alarmed, superseded nor ignored;
- stale redelivery applied: a redelivery of a SUPERSEDED kind that passed after a newer event of the
  same kind and repository had passed.
"""

from __future__ import annotations

import argparse
import base64
import bisect
import contextlib
import hashlib
import hmac
import importlib.metadata
import json
import logging
import multiprocessing
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlencode

from pager.errors import Conflict
from pager.signals import SUPERSEDED
from pager.services import Services
from pager.settings import Settings
from pager.store import MemoryStore, Record

from . import alternatives, fleet
from .emulators import GitHubEmulator, HttpRequest, HttpResponse, TelegramEmulator, session_for
from pager_local.local import load_handler
from pager_world.events import apigw_event

ROOT = Path(__file__).resolve().parents[2]
GITHUB_API = "https://api.github.com"
TELEGRAM_API = "https://api.telegram.org"
WEBHOOK_SECRET = "bench-webhook-secret"
SWEEP_EVERY = 900.0
SWEEP_OFFSET = 60.0  # the schedule's first run, after the trace starts
REDELIVERY_DELAY = 2.0  # GitHub delivers again shortly after its 202
DRAIN = 4 * 3600.0  # runs after the last event: what is still failing then has had its chances
RETENTION = 3 * 86_400.0  # GitHub lists deliveries for three days
RECOVERY_LIMIT = 1800.0  # the target: delivered within 30 minutes of an outage's end

DESIGNS = {
    "pager": "pager's sweep (amended decision)",
    "first": "(a) first design: one list, 3 pages",
    "script": "(b) GitHub's redelivery script",
}


# ------------------------------------------------------------------------------------- the harness


class Clock:
    """The one virtual clock: the emulators, the services and the sweep all read it."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def set(self, t: float) -> None:
        self.now = max(self.now, t)

    def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)


SWEEP_KINDS = ("sweep", "script")  # the sweeps' own records: pager's state, the script's last run


def key_kind(key: str) -> str:
    """What a table key is about: `sweep`, `alarm`, or the signal record's kind (its prefix)."""
    for sep in ("#", ":"):
        if sep in key:
            return key.split(sep, 1)[0]
    return key


class CountingStore:
    """The in-memory store, counting every write it is asked for (DynamoDB bills a failed conditional
    write too) by the kind of its key."""

    def __init__(self, inner: MemoryStore | None = None) -> None:
        self.inner = inner or MemoryStore()
        self.writes: Counter[str] = Counter()
        self.conflicts: Counter[str] = Counter()
        self.sweep_keys: Counter[str] = Counter()  # writes of the sweeps' own records, by key

    def load(self, key: str) -> Record:
        return self.inner.load(key)

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        kind = key_kind(record.key)
        self.writes[kind] += 1
        if kind in SWEEP_KINDS:
            self.sweep_keys[record.key] += 1
        try:
            return self.inner.save(record, data, expires_at=expires_at)
        except Conflict:
            self.conflicts[kind] += 1
            raise

    def dump(self) -> dict[str, Any]:
        return self.inner.dump()


class FleetGitHub(GitHubEmulator):
    """The GitHub emulator for a week of deliveries: listing by binary search instead of a scan, the
    three days of retention, and a log of every attempt by guid for the report."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._times: list[float] = []
        self._failures: list[dict[str, Any]] = []
        self._failure_times: list[float] = []
        self._by_id: dict[int, dict[str, Any]] = {}
        self.log: dict[str, list[tuple[float, int, bool]]] = defaultdict(list)  # guid -> (at, status_code, redelivery)

    def record(self, guid: str, event: str, action: str | None, repository_id: int | None, status_code: int, **kw: Any) -> dict[str, Any]:
        item = super().record(guid, event, action, repository_id, status_code, **kw)
        now = self.clock()
        self._times.append(now)
        self._by_id[item["id"]] = item
        if 400 <= status_code <= 599:
            self._failures.append(item)
            self._failure_times.append(now)
        self.log[guid].append((now, status_code, bool(item["redelivery"])))
        return item

    def _list(self, request: HttpRequest) -> HttpResponse:
        query = request.query
        status = query.get("status")
        if status not in (None, "failure"):
            return super()._list(request)
        per_page = min(int(query.get("per_page", 30)), 100)
        source = self._failures if status == "failure" else self.deliveries  # oldest first, ids growing
        end = len(source)
        if "cursor" in query:
            below = int(base64.urlsafe_b64decode(query["cursor"].encode()).decode())
            end = bisect.bisect_left(source, below, key=lambda d: d["id"])
        start = max(0, end - per_page)
        page = source[start:end][::-1]
        headers = {}
        if start > 0 and page:
            params = {k: v for k, v in query.items() if k != "cursor"}
            params["cursor"] = base64.urlsafe_b64encode(str(page[-1]["id"]).encode()).decode()
            headers["Link"] = f'<{self.api_url}/app/hook/deliveries?{urlencode(params)}>; rel="next"'
        return HttpResponse(200, page, headers)

    def _redeliver(self, delivery_id: int) -> HttpResponse:
        item = self._by_id.get(delivery_id)
        if item is None:
            return HttpResponse(404, {"message": "Not Found"})
        self.redelivery_requests.append(delivery_id)
        self.pending.append(item["guid"])
        return HttpResponse(202, {})

    def prune(self, now: float) -> None:
        """Forget what GitHub no longer lists (older than three days), and the request log."""
        cut = bisect.bisect_left(self._times, now - RETENTION)
        if cut:
            for item in self.deliveries[:cut]:
                self._by_id.pop(item["id"], None)
            del self.deliveries[:cut]
            del self._times[:cut]
        cut = bisect.bisect_left(self._failure_times, now - RETENTION)
        if cut:
            del self._failures[:cut]
            del self._failure_times[:cut]
        self.requests.clear()


def signed_event(event: str, guid: str, body: bytes, secret: str) -> dict[str, Any]:
    """The API Gateway HTTP API (payload 2.0) event of GitHub's POST, signed with the webhook secret."""
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    headers = {
        "content-type": "application/json",
        "user-agent": "GitHub-Hookshot/bench",
        "x-github-event": event,
        "x-github-delivery": guid,
        "x-github-hook-id": "1",
        "x-hub-signature-256": signature,
    }
    return apigw_event("POST", "/github", headers, body)


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
            with contextlib.redirect_stdout(sink), _no_warnings():
                yield
        finally:
            log.propagate = propagate
            for handler, stream in zip(handlers, streams):
                if stream is not None:
                    handler.setStream(stream)


@contextlib.contextmanager
def _no_warnings() -> Iterator[None]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


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


# ------------------------------------------------------------------------------------ the simulation


def simulate(trace: fleet.Trace, design: str, *, pem: str, drain: float = DRAIN, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Replay the trace with one sweep design; returns the measures (see `measure`)."""
    from pager import bootstrap

    register_signals()
    lambda_handler = load_handler("webhook")
    clock = Clock(trace.start)
    telegram = TelegramEmulator()
    by_guid = trace.by_guid()
    github = FleetGitHub(clock=clock, api_url=GITHUB_API)
    for key, pull in trace.pulls.items():
        github.pulls[key] = json.loads(json.dumps(pull))
    github.installations[fleet.CONTROL_REPOSITORY] = 1
    session = session_for({GITHUB_API: github, TELEGRAM_API: telegram})
    settings = bench_settings(pem)
    store = CountingStore()
    webhook_services = make_services(settings, store, session, clock)
    sweep_services = make_services(settings, store, session, clock)
    handler_status: Counter[int] = Counter()

    def endpoint(guid: str, event: str, payload: dict[str, Any], redelivery: bool) -> int:
        attempt = len(github.log.get(guid, ()))
        body = fleet.render(by_guid[guid], trace)
        bootstrap.use(webhook_services)
        answer = lambda_handler(signed_event(event, guid, body, WEBHOOK_SECRET), None)
        status = int(answer.get("statusCode", 500))
        handler_status[status] += 1
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
    active: dict[fleet.Fault, Any] = {}
    runs: list[dict[str, Any]] = []
    alarmed: set[str] = set()  # every delivery entry the control repository's alarm showed
    events = trace.events
    i = 0
    started = time.perf_counter()
    with quiet():
        for at, _, what, fault in schedule:
            while i < len(events) and events[i].at < at:
                e = events[i]
                clock.set(e.at)
                github.deliver(e.event, {"action": e.action, "repository": {"id": trace.repos[e.repo].id}}, guid=e.guid)
                i += 1
            clock.set(at)
            if what == "on":
                if fault.kind == "telegram":
                    active[fault] = telegram.fail(r"^/bot", 502, 10**9, {"ok": False, "error_code": 502, "description": "Bad Gateway"})
                else:
                    active[fault] = github.fail(r"^/repos/|^/app/installations/", 502, 10**9, {"message": "Server Error"})
            elif what == "off":
                active.pop(fault).count = 0
            else:
                before = sweep_services.github.calls + sweep_services.telegram.calls
                summary = sweep(sweep_services, now=at, run_id=f"{design}-{len(runs) + 1}")
                calls = sweep_services.github.calls + sweep_services.telegram.calls - before
                alarmed |= open_delivery_entries(store, settings.control_repository)
                runs.append({"at": at, "calls": calls, "redeliveries": summary.get("redeliveries", 0),
                             "gaps": len(summary.get("reach_gaps") or ()), "outcome": str(summary.get("outcome", ""))})
                clock.set(at + REDELIVERY_DELAY)
                github.deliver_pending()
                github.prune(clock())
                telegram.requests.clear()
                if progress and len(runs) % 96 == 0:
                    progress(f"{design}: day {len(runs) // 96} simulated ({time.perf_counter() - started:.0f} s)")
    bootstrap.use(None)
    open_at_end = open_delivery_entries(store, settings.control_repository)
    result = measure(trace, github.log, store, runs, alarmed | open_at_end, budget=settings.sweep_call_budget)
    result["counts"]["alarm_open_at_end"] = len(open_at_end)
    result.update(design=design, call_budget=settings.sweep_call_budget, handler_status=dict(handler_status), seconds=time.perf_counter() - started,
                  chat_messages=len(telegram.messages), dispatches=len(github.dispatches))
    return result


def alarm_key(repository: str) -> str:
    try:
        from pager.signals.alarm import alarm_key as key
    except ImportError:  # the alarm signal is not there yet: its documented key
        return f"alarm#{repository}"
    return key(repository)


def open_delivery_entries(store: CountingStore, repository: str) -> set[str]:
    """The guids of the `delivery:` entries open now in a repository's alarm, as its record keeps them."""
    entries = store.load(alarm_key(repository)).data.get("entries") or {}
    return {key[len("delivery:"):] for key in entries if key.startswith("delivery:")}


# ------------------------------------------------------------------------------------- the measures


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def measure(trace: fleet.Trace, log: dict[str, list[tuple[float, int, bool]]], store: CountingStore,
            runs: list[dict[str, Any]], alarmed_guids: set[str], *, budget: int = 50) -> dict[str, Any]:
    """The report's figures for one replay, from GitHub's attempts, the table and the runs."""
    by_guid = trace.by_guid()

    from pager.signals import acts_on

    def failed(code: int) -> bool:  # a 5xx, or no answer (status_code 0, or anything outside 100..599)
        return not 100 <= code <= 499

    first_pass: dict[str, float] = {}
    for guid, attempts in log.items():
        for at, code, _ in attempts:
            if 200 <= code <= 399:
                first_pass[guid] = at
                break
    # per kind and repository: events in trace order with their first pass, and the suffix minimum
    newer_pass: dict[tuple[str, int], tuple[list[int], list[float]]] = {}
    groups: dict[tuple[str, int], list[tuple[int, float]]] = defaultdict(list)
    for e in trace.events:
        # only an event a handler applied stands for newer state (an "ignored" one overtakes nothing)
        passed_at = first_pass.get(e.guid, float("inf")) if acts_on(e.event, e.action) else float("inf")
        groups[(e.event, e.repo)].append((e.seq, passed_at))
    for key, rows in groups.items():
        seqs = [s for s, _ in rows]
        suffix = [float("inf")] * (len(rows) + 1)
        for k in range(len(rows) - 1, -1, -1):
            suffix[k] = min(rows[k][1], suffix[k + 1])
        newer_pass[key] = (seqs, suffix)

    def newer_passed_before(e: fleet.Event, t: float) -> bool:
        seqs, suffix = newer_pass[(e.event, e.repo)]
        k = bisect.bisect_right(seqs, e.seq)
        return suffix[k] < t

    counts = Counter()
    ttr: list[float] = []
    ttr_5xx: list[float] = []
    ttr_no_answer: list[float] = []
    lost: list[str] = []
    outage_rows = []
    failed_events: dict[str, tuple[float, bool]] = {}  # guid -> (first failed attempt, got a 5xx)
    superseded: set[str] = set()
    ignored: set[str] = set()
    alarmed: set[str] = set()
    lost_5xx: list[str] = []
    for guid, attempts in log.items():
        e = by_guid[guid]
        for at, code, redelivery in attempts:
            if redelivery and 200 <= code <= 399 and e.event in SUPERSEDED and newer_passed_before(e, at):
                counts["stale_applied"] += 1
        fails = [(at, code) for at, code, _ in attempts if failed(code)]
        counts["attempts"] += len(attempts)
        counts["redelivered_attempts"] += sum(1 for a in attempts if a[2])
        if not fails:
            continue
        counts["failed"] += 1
        first_fail = fails[0][0]
        five = any(500 <= code <= 599 for _, code in fails)
        failed_events[guid] = (first_fail, five)
        counts["failed_5xx" if five else "failed_no_answer"] += 1
        if guid in first_pass:
            counts["recovered"] += 1
            ttr.append(first_pass[guid] - first_fail)
            (ttr_5xx if five else ttr_no_answer).append(first_pass[guid] - first_fail)
        elif guid in alarmed_guids:
            counts["alarmed"] += 1
            alarmed.add(guid)
        elif e.event in SUPERSEDED and newer_passed_before(e, float("inf")):
            counts["superseded"] += 1
            superseded.add(guid)
        elif not acts_on(e.event, e.action):
            counts["ignored"] += 1
            ignored.add(guid)
        else:
            counts["lost"] += 1
            counts["lost_5xx" if five else "lost_no_answer"] += 1
            lost.append(guid)
            if five:
                lost_5xx.append(guid)
    for fault in trace.faults:
        # what the fault caused: a 5xx in an outage, no answer in a period without answers
        caused_5xx = fault.kind != "timeout"
        during = [g for g, (t, five) in failed_events.items() if fault.start <= t < fault.end and five == caused_5xx]
        in_time = [g for g in during if first_pass.get(g, float("inf")) <= fault.end + RECOVERY_LIMIT]
        stood = [g for g in during if g in superseded]
        outage_rows.append({"fault": fault.label, "kind": fault.kind, "failed": len(during), "in_time": len(in_time),
                            "superseded": len(stood), "ignored": sum(1 for g in during if g in ignored),
                            "alarmed": sum(1 for g in during if g in alarmed)})
    calls = [r["calls"] for r in runs]
    duration_days = (runs[-1]["at"] - trace.start) / fleet.DAY if runs else trace.days
    writes = dict(store.writes)
    sweep_writes = sum(v for k, v in writes.items() if k in SWEEP_KINDS)
    alarm_writes = writes.get("alarm", 0)
    signal_writes = sum(writes.values()) - sweep_writes - alarm_writes
    return {
        "counts": dict(counts),
        "ttr_median": percentile(ttr, 0.5),
        "ttr_p95": percentile(ttr, 0.95),
        "ttr_5xx_median": percentile(ttr_5xx, 0.5),
        "ttr_no_answer_median": percentile(ttr_no_answer, 0.5),
        "runs": len(runs),
        "calls_mean": statistics.fmean(calls) if calls else 0.0,
        "calls_max": max(calls) if calls else 0,
        "over_budget": sum(1 for c in calls if c > budget),
        "redeliveries": sum(r["redeliveries"] for r in runs),
        "reach_gaps": sum(r["gaps"] for r in runs),
        "runs_aborted": sum(1 for r in runs if r["outcome"].startswith("aborted")),
        "days": duration_days,
        "writes": writes,
        "conflicts": dict(store.conflicts),
        "sweep_keys": {key: n / len(runs) for key, n in store.sweep_keys.items()} if runs else {},
        "writes_per_day": sum(writes.values()) / duration_days,
        "sweep_writes_per_day": sweep_writes / duration_days,
        "alarm_writes_per_day": alarm_writes / duration_days,
        "signal_writes_per_day": signal_writes / duration_days,
        "runs_per_day": len(runs) / duration_days,
        "outages": outage_rows,
        "lost_5xx_examples": [
            {"guid": g, "event": by_guid[g].event, "action": by_guid[g].action,
             "attempts": [(round(at - trace.start), code, redelivery) for at, code, redelivery in log[g]]}
            for g in sorted(lost_5xx, key=lambda g: by_guid[g].seq)[:5]
        ],
        "lost_kinds": dict(Counter(by_guid[g].event for g in lost)),
    }


# ---------------------------------------------------------------------------- the handler's cost


def handler_cost(n: int = 2000, *, pem: str | None = None) -> dict[str, Any]:
    """Time `handle_github` per delivery next to the floor (HMAC compare + json.loads of the same body),
    interleaved, for an event the pager ignores and for a contribution (with the emulated transports)."""
    from pager.routing import verify_signature
    from pager.webhook import handle_github

    register_signals()
    pem = pem or private_key()
    trace = fleet.tiny_trace(hours=1)
    clock = Clock(time.time())
    github = FleetGitHub(clock=clock, api_url=GITHUB_API)
    telegram = TelegramEmulator()
    inside = [0.0]

    def timed(emulator: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
        def call(request: HttpRequest) -> HttpResponse:
            t0 = time.perf_counter()
            try:
                return emulator(request)
            finally:
                inside[0] += time.perf_counter() - t0
        return call

    session = session_for({GITHUB_API: timed(github), TELEGRAM_API: timed(telegram)})
    services = make_services(bench_settings(pem), CountingStore(), session, clock)
    ignored = next(e for e in trace.events if e.event == "check_run")
    base = next(e for e in trace.events if e.event == "workflow_job")
    contribution_template = fleet.payload(next(e for e in trace.events if e.event == "issues" or e.event == "issue_comment"), trace)

    def contribution(k: int) -> tuple[str, bytes]:
        p = json.loads(json.dumps(contribution_template))
        p["action"] = "opened"
        issue = p["issue"]
        issue.update(number=10_000 + k, title=f"Bench issue {k}", author_association="NONE")
        issue["user"] = dict(issue["user"], login="alice-out", type="User")
        p["sender"] = dict(issue["user"])
        p.pop("comment", None)
        return "issues", json.dumps(p, separators=(",", ":")).encode()

    cases = {
        "ignored": [(ignored.event, fleet.render(ignored, trace)), (base.event, fleet.render(base, trace))],
        "contribution": [contribution(k) for k in range(n)],
    }
    secret = WEBHOOK_SECRET
    out: dict[str, Any] = {"n": n}
    with quiet():
        for name, bodies in cases.items():
            floor, handler, emulated = [], [], []
            calls: list[int] = []
            writes: list[int] = []
            outcomes: Counter[str] = Counter()
            for k in range(n):
                event, body = bodies[k % len(bodies)]
                apigw = signed_event(event, f"bench-{name}-{k}", body, secret)
                signature = apigw["headers"]["x-hub-signature-256"]
                order = (0, 1) if k % 2 == 0 else (1, 0)
                for which in order:
                    if which == 0:
                        t0 = time.perf_counter()
                        raw = apigw["body"].encode()
                        verify_signature(raw, signature, secret)
                        json.loads(raw)
                        floor.append(time.perf_counter() - t0)
                    else:
                        inside[0] = 0.0
                        calls_before = services.github.calls + services.telegram.calls
                        writes_before = sum(services.store.writes.values())
                        t0 = time.perf_counter()
                        status, answer = handle_github(apigw, services)
                        handler.append(time.perf_counter() - t0)
                        emulated.append(inside[0])
                        calls.append(services.github.calls + services.telegram.calls - calls_before)
                        writes.append(sum(services.store.writes.values()) - writes_before)
                        outcomes[f"{status} {answer.get('outcome', answer.get('error', ''))}"[:60]] += 1
            warm = slice(min(50, n // 10), None)  # the first calls warm caches (JWT, installation token)
            f_med = statistics.median(floor[warm])
            h_med = statistics.median(handler[warm])
            own = [h - e for h, e in zip(handler[warm], emulated[warm])]
            out[name] = {
                "body_bytes": statistics.median(len(b) for _, b in bodies),
                "floor_us": f_med * 1e6,
                "handler_us": h_med * 1e6,
                "own_us": statistics.median(own) * 1e6,
                "ratio": h_med / f_med,
                "own_ratio": statistics.median(own) / f_med,
                "outcomes": dict(outcomes.most_common(3)),
                "calls": statistics.median(calls[warm]),
                "writes": statistics.median(writes[warm]),
            }
    return out


# ------------------------------------------------------------------------------------- cold import


def _python_for_tag(tag: str) -> str | None:
    """An interpreter for a bytecode tag such as cpython-313: on PATH, or pyenv's."""
    if not tag.startswith("cpython-") or len(tag) < 11:
        return None
    version = f"{tag[8]}.{tag[9:]}"
    if sys.implementation.cache_tag == tag:
        return sys.executable
    candidates = [shutil.which(f"python{version}")]
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        root = ""
    if root:
        candidates += sorted(str(p) for p in Path(root, "versions").glob(f"{version}.*/bin/python{version}"))
    for candidate in candidates:
        if not candidate:
            continue
        try:
            ok = subprocess.run([candidate, "-c", "import sys; print(sys.implementation.cache_tag)"],
                                capture_output=True, text=True, timeout=30).stdout.strip() == tag
        except (OSError, subprocess.SubprocessError):
            ok = False
        if ok:
            return candidate
    return None


def _run(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... failed: {done.stderr.strip()[-800:]}")


def _pip(python: str, target: Path, *requirements: str) -> None:
    _run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
         "--target", str(target), *requirements)


def _compile(python: str, path: Path) -> None:
    _run(python, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", str(path))


def bench_layer(log: Callable[[str], None], built: Path | None = None) -> tuple[Path, Path, str, str]:
    """(layer, runtime, python, where from): the layer's dependencies with the current `pager`, compiled,
    and boto3 as the Lambda runtime brings it, in .aws-sam/bench.

    The dependencies come from `make build`'s layer (.aws-sam/build/PagerLayer/python) when it is
    there and an interpreter of its bytecode version is found; else they are installed from the
    layer's requirements with the current python."""
    work = ROOT / ".aws-sam" / "bench"
    built = built or ROOT / ".aws-sam" / "build" / "PagerLayer" / "python"
    requirements = ROOT / "layers" / "pager" / "requirements.txt"
    python, source = None, ""
    if (built / "pager").is_dir():
        tags = {p.name.split(".")[1] for p in built.glob("*/__pycache__/*.pyc")}
        python = next((p for p in (_python_for_tag(t) for t in sorted(tags)) if p), None)
        source = "the layer built by `make build`"
    layer = work / "layer"
    if layer.exists():
        shutil.rmtree(layer)
    if python:
        log(f"layer: dependencies from {built}")
        shutil.copytree(built, layer, ignore=shutil.ignore_patterns("pager"))
    else:
        python = sys.executable
        source = "the layer's requirements installed with this python (`make build` had not built the layer)"
        stamp = hashlib.sha256(requirements.read_bytes() + python.encode()).hexdigest()[:12]
        cached = work / f"deps-{stamp}"
        if not cached.exists():
            log("layer: installing the layer's requirements (once)")
            _pip(python, cached.with_suffix(".tmp"), "-r", str(requirements))
            cached.with_suffix(".tmp").rename(cached)
        shutil.copytree(cached, layer, ignore=shutil.ignore_patterns("bin"))
    shutil.copytree(ROOT / "layers" / "pager" / "pager", layer / "pager", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _compile(python, layer)
    tag = subprocess.run([python, "-c", "import sys; print(sys.implementation.cache_tag)"], capture_output=True, text=True).stdout.strip()
    runtime = work / f"runtime-{tag}"
    if not runtime.exists():
        log("runtime: installing boto3 as the Lambda runtime has it (once)")
        version = importlib.metadata.version("boto3")
        _pip(python, runtime.with_suffix(".tmp"), f"boto3=={version}")
        _compile(python, runtime.with_suffix(".tmp"))
        runtime.with_suffix(".tmp").rename(runtime)
    return layer, runtime, python, source


FIRST_INVOCATION = {
    "webhook": ["pager.webhook", "pager.signals", "pager.github", "pager.telegram", "pager.store", "boto3", "botocore.config"],
    "sweep": ["pager.sweep", "pager.signals.alarm", "pager.github", "pager.telegram", "pager.store", "boto3", "botocore.config"],
}

_TIMER = """
import importlib, sys, time
sys.path[:0] = {paths!r}
t0 = time.perf_counter()
import app
t1 = time.perf_counter()
for name in {lazy!r}:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
t2 = time.perf_counter()
print(t1 - t0, t2 - t0)
"""


def cold_imports(repeats: int = 7, log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Median seconds to import each function's module (and then what its first invocation imports) in
    a fresh interpreter: from the compiled layer, and from a copy without __pycache__ run with -B."""
    layer, runtime, python, source = bench_layer(log)
    work = ROOT / ".aws-sam" / "bench"
    bare_layer, bare_runtime = work / "layer-bare", work / "runtime-bare"
    for src, dst in ((layer, bare_layer), (runtime, bare_runtime)):
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    functions = {}
    for name in ("webhook", "sweep"):
        for flavour in ("compiled", "bare"):
            fdir = work / f"function-{name}-{flavour}"
            if fdir.exists():
                shutil.rmtree(fdir)
            fdir.mkdir(parents=True)
            shutil.copy2(ROOT / "functions" / name / "app.py", fdir / "app.py")
            if flavour == "compiled":
                _compile(python, fdir)
            functions[(name, flavour)] = fdir
    env = {"PATH": os.environ.get("PATH", ""), "AWS_DEFAULT_REGION": "us-east-1", "LANG": "C.UTF-8"}
    out: dict[str, Any] = {"python": subprocess.run([python, "--version"], capture_output=True, text=True).stdout.strip(),
                           "source": source, "repeats": repeats}
    for name in ("webhook", "sweep"):
        for flavour, paths, flags in (("compiled", [str(functions[(name, "compiled")]), str(layer), str(runtime)], ["-I", "-S"]),
                                      ("bare", [str(functions[(name, "bare")]), str(bare_layer), str(bare_runtime)], ["-I", "-S", "-B"])):
            module_times, total_times = [], []
            code = _TIMER.format(paths=paths, lazy=FIRST_INVOCATION[name])
            for _ in range(repeats):
                done = subprocess.run([python, *flags, "-c", code], capture_output=True, text=True, env=env, timeout=120)
                if done.returncode != 0:
                    raise RuntimeError(f"importing the {name} function failed: {done.stderr.strip()[-500:]}")
                module, total = (float(x) for x in done.stdout.split())
                module_times.append(module)
                total_times.append(total)
            out[f"{name}_{flavour}"] = {"module": statistics.median(module_times), "first_invocation": statistics.median(total_times)}
            log(f"cold import {name} ({flavour}): {statistics.median(module_times) * 1000:.0f} ms")
    return out


# ------------------------------------------------------------------------------------------ report


def _fmt_s(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


def _pct(part: int, whole: int) -> str:
    return "–" if not whole else f"{100 * part / whole:.1f}%"


def targets(results: dict[str, dict[str, Any]], cost: dict[str, Any] | None, imports: dict[str, Any] | None,
            budget: int) -> list[tuple[str, str, bool | None]]:
    """(target, measured, met) for pager's sweep and its webhook function."""
    p = results["pager"]
    c = p["counts"]
    rows: list[tuple[str, str, bool | None]] = []
    rows.append(("on the busy trace no 5xx failure lost silently",
                 f"{c.get('lost_5xx', 0)} of {c.get('failed_5xx', 0)} events that got a 5xx", c.get("lost_5xx", 0) == 0))
    for kinds, what in ((("telegram", "github"), "an outage (Telegram 502, GitHub 5xx)"),
                        (("timeout",), "a period without answers")):
        outages = [o for o in p["outages"] if o["kind"] in kinds]
        failed = sum(o["failed"] for o in outages)
        in_time = sum(o["in_time"] for o in outages)
        stood = sum(o["superseded"] for o in outages)
        idle = sum(o["ignored"] for o in outages)
        share = (in_time + stood + idle) / failed if failed else 1.0
        rows.append((f"≥ 99% of events that failed during {what} delivered within 30 min of its end "
                     "(an event superseded by a newer passed one counts as done: the newer one stands; so does one "
                     "the pager only ignores)",
                     f"{in_time} delivered + {stood} superseded + {idle} ignored of {failed} ({share:.1%}); "
                     f"{sum(o['alarmed'] for o in outages)} alarmed", share >= 0.99))
    rows.append((f"at most the call budget ({budget}) per run",
                 f"max {p['calls_max']}, mean {p['calls_mean']:.1f}; {p['over_budget']} runs over", p["calls_max"] <= budget))
    expected = p["runs_per_day"] + p["alarm_writes_per_day"] + p["signal_writes_per_day"]
    rows.append(("table writes per day within 10% of one per run plus the alarm and signal records",
                 f"{p['writes_per_day']:.0f} per day against {expected:.0f} ({p['runs_per_day']:.0f} runs + "
                 f"{p['alarm_writes_per_day']:.0f} alarm + {p['signal_writes_per_day']:.0f} signal records): "
                 f"{p['writes_per_day'] / expected - 1:+.0%}" if expected else "–",
                 abs(p["writes_per_day"] - expected) <= 0.1 * expected if expected else None))
    if cost:
        ig = cost["ignored"]
        rows.append(("webhook handler warm: its own cost per delivery within 3× the floor (an ignored event)",
                     f"{ig['handler_us']:.0f} µs against {ig['floor_us']:.0f} µs: {ig['ratio']:.1f}×", ig["ratio"] <= 3))
        co = cost["contribution"]
        rows.append(("the same for a contribution (its own cost: time in the emulated GitHub and Telegram left out)",
                     f"{co['own_us']:.0f} µs against {co['floor_us']:.0f} µs: {co['own_ratio']:.1f}×", co["own_ratio"] <= 3))
    if imports:
        w = imports["webhook_compiled"]
        rows.append(("cold import of the webhook function under 0.5 s with compiled bytecode",
                     f"{w['module'] * 1000:.0f} ms (with its first invocation's imports {w['first_invocation'] * 1000:.0f} ms)",
                     w["module"] < 0.5))
    return rows


def report(trace: fleet.Trace, results: dict[str, dict[str, Any]], cost: dict[str, Any] | None,
           imports: dict[str, Any] | None, *, args: argparse.Namespace, handled: list[str], elapsed: float) -> str:
    budget = results["pager"]["call_budget"]
    lines: list[str] = []
    add = lines.append
    quarters = trace.runs_per_quarter
    per_quarter = Counter(int((e.at - trace.start) // fleet.QUARTER) for e in trace.events)
    add("# Benchmarks")
    add("")
    add(f"Written by `make bench` (`python -m pager_sim.bench --days {args.days:g} --seed {args.seed}`) on "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs; the whole run took {elapsed / 60:.1f} min. "
        "Everything runs in process on a virtual clock: GitHub and Telegram are the emulators of `pager_sim.emulators`, "
        "the table is the in-memory store (every write counted), and each delivery goes through the real "
        "`functions/webhook/app.py:lambda_handler` with a signed API Gateway event. Definitions are in the docstring "
        "of `sim/pager_sim/bench.py`.")
    add("")
    add("## The trace")
    add("")
    add(f"- {trace.days:g} days from {fleet.iso(trace.start)[:10]} (a Monday), {len(trace.repos)} repositories, "
        f"{len(trace.events):,} events (first deliveries), {sum(quarters):,} workflow runs.")
    add(f"- Busiest quarter hour: {max(quarters)} workflow runs, {max(per_quarter.values()):,} deliveries; "
        f"{sum(1 for q in quarters if q >= 100)} quarter hours with 100 runs or more.")
    add("- Events by kind: " + ", ".join(f"{k} {n:,}" for k, n in fleet.iter_kinds(trace)) + ".")
    add(f"- Signals registered when this ran (events with a handler; the rest are answered 200 \"ignored\"): "
        f"{', '.join(handled) or 'none'}.")
    add("- Faults: " + "; ".join(f.label for f in trace.faults) + f"; besides, {trace.background_timeout_rate:.2%} of "
        "all attempts get no answer. A Telegram outage answers 502 to every Bot API call; a GitHub burst answers 502 "
        "to the REST calls the handlers make (installation tokens, pull requests, dispatches), not to the deliveries "
        "list; an attempt without an answer is handled by the pager, but GitHub records status_code 0.")
    add(f"- The sweep runs every {SWEEP_EVERY / 60:.0f} minutes, and for {DRAIN / 3600:.0f} hours after the last event; "
        "GitHub carries out the redeliveries asked for right after each run.")
    add("")
    add("## The sweeps compared on the same trace")
    add("")
    names = [d for d in DESIGNS if d in results]
    add("| | " + " | ".join(DESIGNS[d] for d in names) + " |")
    add("|---|" + "---:|" * len(names))

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        add(f"| {label} | " + " | ".join(cell(results[d]) for d in names) + " |")

    def cnt(key: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: f"{r['counts'].get(key, 0):,}"

    row("failed events (a 5xx or no answer)", lambda r: f"{r['counts'].get('failed', 0):,} ({r['counts'].get('failed_5xx', 0):,} 5xx, {r['counts'].get('failed_no_answer', 0):,} no answer)")
    row("recovered", lambda r: f"{r['counts'].get('recovered', 0):,} ({_pct(r['counts'].get('recovered', 0), r['counts'].get('failed', 0))})")
    row("alarmed", cnt("alarmed"))
    row("superseded by a newer passed event", cnt("superseded"))
    row("ignored by the pager (no handler: nothing to lose)", cnt("ignored"))
    row("**lost silently** (5xx / no answer)", lambda r: f"**{r['counts'].get('lost', 0):,}** ({r['counts'].get('lost_5xx', 0):,} / {r['counts'].get('lost_no_answer', 0):,})")
    row("stale redeliveries applied after a newer event", cnt("stale_applied"))
    row("time to recovery, median", lambda r: _fmt_s(r["ttr_median"]))
    row("time to recovery, 95th percentile", lambda r: _fmt_s(r["ttr_p95"]))
    row("… median after a 5xx / after no answer", lambda r: f"{_fmt_s(r['ttr_5xx_median'])} / {_fmt_s(r['ttr_no_answer_median'])}")
    row("calls per run, mean", lambda r: f"{r['calls_mean']:.1f}")
    row("calls per run, max", lambda r: f"{r['calls_max']:,}")
    row(f"runs over the budget of {budget} calls", lambda r: f"{r['over_budget']:,} of {r['runs']:,}")
    row("redeliveries asked for", lambda r: f"{r['redeliveries']:,}")
    row("table writes per day", lambda r: f"{r['writes_per_day']:.0f}")
    row("… of them the sweep's own (state, last run)", lambda r: f"{r['sweep_writes_per_day']:.1f}")
    row("… alarm records", lambda r: f"{r['alarm_writes_per_day']:.1f}")
    row("… signal records", lambda r: f"{r['signal_writes_per_day']:.1f}")
    row("runs aborted (a list not served)", lambda r: f"{r['runs_aborted']:,}")
    row("reach gaps logged", lambda r: f"{r['reach_gaps']:,}" if r["design"] == "pager" else "–")
    add("")
    add("Table writes by key kind: " + "; ".join(
        f"{DESIGNS[d]}: " + ", ".join(f"{k} {v:,}" for k, v in sorted(results[d]["writes"].items()))
        for d in names) + ".")
    add("")
    lost_lines = [f"{DESIGNS[d]}: " + ", ".join(f"{k} {v}" for k, v in sorted(results[d]["lost_kinds"].items()))
                  for d in names if results[d]["lost_kinds"]]
    if lost_lines:
        add("Lost silently, by kind: " + "; ".join(lost_lines) + ".")
        add("")
    add("## Recovery after each fault")
    add("")
    add("Events whose first failed attempt fell inside the fault and failed the way it fails (a 5xx in an outage, "
        "no answer in a period without answers): delivered within 30 minutes of its end / superseded by a newer "
        "passed event / ignored by the pager / alarmed, of all that failed in it.")
    add("")
    add("| fault | " + " | ".join(DESIGNS[d] for d in names) + " |")
    add("|---|" + "---:|" * len(names))
    for k, fault in enumerate(trace.faults):
        cells = []
        for d in names:
            o = results[d]["outages"][k]
            cells.append(f"{o['in_time']:,} / {o['superseded']:,} / {o['ignored']:,} / {o['alarmed']:,} of {o['failed']:,}")
        add(f"| {fault.label} | " + " | ".join(cells) + " |")
    add("")
    add("## Targets (pager)")
    add("")
    add("| target | measured | |")
    add("|---|---|---|")
    for target, measured, met in targets(results, cost, imports, budget):
        add(f"| {target} | {measured} | {'met' if met else ('–' if met is None else '**not met**')} |")
    add("")
    if cost:
        add("## The webhook handler's cost per delivery (warm)")
        add("")
        add(f"`pager.webhook.handle_github` against the floor (HMAC-SHA256 check plus `json.loads` of the same body), "
            f"timed side by side in one run, {cost['n']:,} deliveries each, medians after the first "
            f"{min(50, cost['n'] // 10)}. The contribution goes through the emulated GitHub and Telegram; its own cost "
            "leaves out the time spent inside the emulators (not the `requests` machinery, which is the handler's).")
        add("")
        add("| delivery | body | floor | handler | ratio | own cost | own ratio | HTTP calls | table writes |")
        add("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, label in (("ignored", "ignored (check_run, workflow_job)"), ("contribution", "contribution (issues.opened by an outsider)")):
            c = cost[name]
            add(f"| {label} | {c['body_bytes'] / 1000:.1f} kB | {c['floor_us']:.0f} µs | {c['handler_us']:.0f} µs | "
                f"{c['ratio']:.1f}× | {c['own_us']:.0f} µs | {c['own_ratio']:.1f}× | {c['calls']:g} | {c['writes']:g} |")
        add("")
        add("Answers: " + "; ".join(f"{name}: " + ", ".join(f"{k} ×{v}" for k, v in cost[name]["outcomes"].items())
                                     for name in ("ignored", "contribution")) + ".")
        add("")
    if imports:
        add("## Cold import of each function")
        add("")
        add(f"A fresh `{imports['python']}` (`-I -S`) imports `app` from the function's folder with the layer and boto3 "
            f"(the runtime's) on its path; median of {imports['repeats']} runs. The layer: {imports['source']}, with the "
            "current `pager` copied in and everything compiled (unchecked-hash), as `layers/pager/Makefile` does; "
            "without bytecode: the same trees copied without `__pycache__`, run with `-B`. \"With its first "
            "invocation\" adds what the first event imports lazily (the webhook: the signals, clients and boto3; "
            "the sweep: the sweep, the alarm, clients and boto3).")
        add("")
        add("| function | with bytecode | with bytecode, with its first invocation | without bytecode | without, with its first invocation |")
        add("|---|---:|---:|---:|---:|")
        for name in ("webhook", "sweep"):
            c, b = imports[f"{name}_compiled"], imports[f"{name}_bare"]
            add(f"| {name} | {c['module'] * 1000:.0f} ms | {c['first_invocation'] * 1000:.0f} ms | "
                f"{b['module'] * 1000:.0f} ms | {b['first_invocation'] * 1000:.0f} ms |")
        add("")
    add("## How to read it")
    add("")
    add("- (a) is the decision as first accepted: one list, the 300 newest deliveries, so on a busy day its view "
        "is shorter than the 15 minutes between runs and failures fall off it. (b) has no cap and no attempt "
        "count: it asks again for everything without an OK since its last run, in one burst, whatever the calls.")
    for d in names:
        if results[d]["sweep_keys"]:
            add(f"- {DESIGNS[d]} wrote its own records " + ", ".join(
                f"`{key}` {per_run:.2f}" for key, per_run in sorted(results[d]["sweep_keys"].items())) + " times per run.")
    add("- Simulation times: " + ", ".join(f"{DESIGNS[d]} {results[d]['seconds']:.0f} s" for d in names) + ".")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------- main

_TRACE: fleet.Trace | None = None
_PEM: str = ""


def _simulate_one(design: str) -> dict[str, Any]:
    assert _TRACE is not None
    return simulate(_TRACE, design, pem=_PEM, progress=_log)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    global _TRACE, _PEM
    parser = argparse.ArgumentParser(prog="python -m pager_sim.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=float, default=7.0, help="days of the fleet's trace (default: a week)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=len(DESIGNS), help="replays in parallel (processes)")
    parser.add_argument("--designs", default=",".join(DESIGNS), help="which sweeps to replay")
    parser.add_argument("--handler-n", type=int, default=3000, help="deliveries per case in the handler's cost")
    parser.add_argument("--import-repeats", type=int, default=7)
    parser.add_argument("--skip-imports", action="store_true", help="no cold import measure (needs pip the first time)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    args = parser.parse_args(argv)
    began = time.perf_counter()
    designs = [d for d in args.designs.split(",") if d]
    _TRACE = fleet.make_trace(seed=args.seed, days=args.days)
    _PEM = private_key()
    handled = register_signals()
    _log(f"trace: {args.days:g} days, {len(_TRACE.events):,} events; replaying {', '.join(designs)} with {args.jobs} jobs")
    if args.jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            results = dict(zip(designs, pool.map(_simulate_one, designs)))
    else:
        results = {d: _simulate_one(d) for d in designs}
    for d in designs:
        c = results[d]["counts"]
        _log(f"{d}: failed {c.get('failed', 0)}, recovered {c.get('recovered', 0)}, alarmed {c.get('alarmed', 0)}, "
             f"lost {c.get('lost', 0)}, stale {c.get('stale_applied', 0)}, calls max {results[d]['calls_max']}")
    _log("handler cost ...")
    cost = handler_cost(args.handler_n, pem=_PEM)
    imports = None
    if not args.skip_imports:
        _log("cold imports ...")
        imports = cold_imports(args.import_repeats, log=_log)
    if "pager" not in results:
        _log("no report: the pager design was not replayed")
        return 0
    text = report(_TRACE, results, cost, imports, args=args, handled=handled, elapsed=time.perf_counter() - began)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    _log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
