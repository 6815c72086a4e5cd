"""Outages the sweep must hold through, replayed with the real handler and the real sweep (`simulate.Replay`).

`github_outage`: GitHub's whole REST API answers 502 (the calls the handlers make, the app's
endpoints, the deliveries list and the redeliveries alike) for hours while webhooks still arrive and
someone from outside comments on an issue every so often (`fleet.outage_trace`, its fault GitHub's).
Each comment asks the control repository for a draft (`repository_dispatch` `pager-draft`). At the
replay's end (`simulate.DRAIN` after GitHub returns): the drafts dispatched (each comment counted once),
the comments shown in the chat as pages, those named in the control repository's alarm at any look,
and what pager's own alarm counts as failed and no longer kept by GitHub. GitHub keeps three days of
deliveries: what is older when it returns cannot come back, and must be counted in the chat.

`endpoint_outage`: no attempt is spent to learn whether pager answers (the sweep's signed ping finds out). A quiet fleet whose list holds only pages (an
outsider's comment every 6 minutes, nothing else); pager's own endpoint answers 502 to every delivery
for 3 hours without running pager (an outage of the function, its gateway or its domain), then works
again. 90 minutes after the fix: the pages that reached the chat as pages, those named as "all attempts
failed" entries at any look, and the attempts GitHub made of them.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from pager.signals.alarm import CONTROL, DELIVERY_PREFIX, alarm_key, open_entries
from pager_world.github import RETENTION

from . import fleet
from .jobs import Job
from .outages import _pages
from .simulate import Replay

WHOLE_API = r"^\w+ /"  # every REST call: /repos/, /app/, /app/hook/deliveries, /installation/
DRAFT = "pager-draft"
# (label, hours GitHub is down, hours between two comments)
GITHUB_SCENARIOS = (("6 h, a comment every 30 min", 6.0, 0.5), ("72 h, a comment every hour", 72.0, 1.0))
ENDPOINT_HOURS = 3.0  # pager's endpoint answers 502 this long
ENDPOINT_EVERY = 0.1  # hours between two comments: every 6 minutes
ENDPOINT_LEAD = 300.0  # the outage starts this long into the trace, before the first comment (10 minutes in)
AFTER_FIX = 5400.0  # the replay goes on this long after the fix: 90 minutes
# A deployment broken from its first delivery: a page every 30 minutes, pager's endpoint down this many hours
# (no delivery ever passed), every page back within 30 minutes of the fix
BROKEN_HOURS = (3.0, 6.0, 12.0)
BROKEN_EVERY = 0.5
BROKEN_AFTER = 1800.0
EXHAUSTED = "all attempts failed"


class GitHubDown(Replay):
    """The replay, with a "github" fault failing GitHub's whole REST API (not only the handlers' calls)."""

    def _fault(self, what: str, fault: fleet.Fault) -> None:
        if what == "on" and fault.kind == "github":
            self.active[fault] = self.github.fail(WHOLE_API, 502, count=10**9)
        else:
            super()._fault(what, fault)


def _drafts(replay: Replay, trace: fleet.Trace) -> int:
    """The trace's comments a draft was dispatched for (each counted once)."""
    comments = {e.fields["comment_id"] for e in trace.events}
    drafted = {(d.get("client_payload") or {}).get("comment_id") for d in replay.github.dispatches
               if d.get("event_type") == DRAFT}
    return len(comments & drafted)


def github_outage(*, pem: str, hours: float, every_hours: float, seed: int = 1) -> dict[str, Any]:
    """GitHub down `hours` while an outsider comments every `every_hours` (see the module's docstring)."""
    began = time.perf_counter()
    trace = fleet.outage_trace(hours=hours, every_hours=every_hours, seed=seed)
    trace = dataclasses.replace(trace, faults=[fleet.Fault("github", trace.start, trace.end)])
    replay = GitHubDown(trace, "pager", pem=pem)
    replay.run()
    pages = _pages(replay, trace)
    guids = {e.guid for e in trace.events}
    kept = sum(1 for e in trace.events if e.at > trace.end - RETENTION)
    return {"hours": hours, "comments": len(trace.events), "kept": kept, "drafts": _drafts(replay, trace),
            "as_page": pages["as_page"], "named": len(replay.alarmed & guids), "said_forgotten": pages["said_forgotten"],
            "lost": pages["lost"], "back_minutes": pages["back_minutes"], "attempts_max": pages["attempts_max"],
            "seconds": time.perf_counter() - began}


class EndpointDown(Replay):
    """The replay, with pager's endpoint answering 502 without running pager from `down[0]` to `down[1]`;
    after every run and check, the reason of each `delivery:` entry the control repository's alarm shows."""

    def __init__(self, trace: fleet.Trace, *, pem: str, down: tuple[float, float], drain: float) -> None:
        super().__init__(trace, "pager", pem=pem, drain=drain)
        self.down = down
        self.reasons: dict[str, set[str]] = {}  # guid -> every reason (or detail) its entry was shown with

    def _down(self) -> int | None:
        return 502 if self.down[0] <= self.clock() < self.down[1] else None

    def _ran(self, at: float, summary: dict[str, Any], calls: int, writes: dict[str, int], kind: str) -> None:
        entries = open_entries(self.store.inner.items(alarm_key(CONTROL)), self.clock())
        for key, data in entries.items():
            if key.startswith(DELIVERY_PREFIX):
                said = str(data.get("reason") or data.get("detail") or data.get("title") or "")  # the detail says the reason
                self.reasons.setdefault(key[len(DELIVERY_PREFIX):], set()).add(said)
        super()._ran(at, summary, calls, writes, kind)


def endpoint_outage(*, pem: str, hours: float = ENDPOINT_HOURS, every_hours: float = ENDPOINT_EVERY,
                    after: float = AFTER_FIX, seed: int = 1) -> dict[str, Any]:
    """pager's endpoint down `hours` while only pages arrive (see the module's docstring)."""
    began, seconds = time.perf_counter(), ENDPOINT_LEAD + hours * 3600
    trace = fleet.outage_trace(hours=seconds / 3600, every_hours=every_hours, seed=seed)
    trace = dataclasses.replace(trace, faults=[])  # the outage is the endpoint's, kept by the replay
    replay = EndpointDown(trace, pem=pem, down=(trace.start + ENDPOINT_LEAD, trace.end), drain=after)
    replay.run()
    texts = [m.text for m in replay.telegram.chat()]
    as_page = sum(1 for e in trace.events if any(f"issuecomment-{e.fields['comment_id']}" in t for t in texts))
    attempts = [len(replay.github.log.get(e.guid, ())) for e in trace.events]
    exhausted = sum(1 for e in trace.events if any(EXHAUSTED in said for said in replay.reasons.get(e.guid, ())))
    return {"hours": hours, "pages": len(trace.events), "as_page": as_page, "exhausted": exhausted,
            "named": sum(1 for e in trace.events if e.guid in replay.reasons), "attempts": sum(attempts),
            "attempts_max": max(attempts, default=0), "after_minutes": after / 60,
            "seconds": time.perf_counter() - began}


# About what each replay takes, in CPU seconds per hour GitHub is down: the jobs' weight.
CPU_PER_HOUR = 0.03


def held_jobs(*, pem: str, seed: int = 1, github_scenarios: tuple[tuple[str, float, float], ...] = GITHUB_SCENARIOS) -> list[Job]:
    """Both scenarios, a job each replay (`jobs.side_by_side`)."""
    return [*(Job(key=("held", "github", label), run=github_outage, kwargs={"pem": pem, "hours": hours, "every_hours": every,
                                                                             "seed": seed},
                  weight=CPU_PER_HOUR * hours, label=f"GitHub down {label}")
              for label, hours, every in github_scenarios),
            Job(key=("held", "endpoint"), run=endpoint_outage, kwargs={"pem": pem, "seed": seed},
                weight=CPU_PER_HOUR * ENDPOINT_HOURS, label=f"pager's endpoint down {ENDPOINT_HOURS:g} h"),
            *(Job(key=("held", "broken", hours), run=endpoint_outage,
                  kwargs={"pem": pem, "seed": seed, "hours": hours, "every_hours": BROKEN_EVERY, "after": BROKEN_AFTER},
                  weight=CPU_PER_HOUR * hours, label=f"a deployment broken from its first delivery, {hours:g} h")
              for hours in BROKEN_HOURS)]


def held_of(done: dict[Any, Any], github_scenarios: tuple[tuple[str, float, float], ...] = GITHUB_SCENARIOS) -> dict[str, Any]:
    """The results of `held_jobs`: {"github": by label, "endpoint": one result, "broken": by hours}."""
    return {"github": {label: done[("held", "github", label)] for label, _, _ in github_scenarios},
            "endpoint": done[("held", "endpoint")], "broken": {hours: done[("held", "broken", hours)] for hours in BROKEN_HOURS}}

