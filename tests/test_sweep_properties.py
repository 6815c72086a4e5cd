"""Properties of the sweep's reading and planning (pager.sweep.read_and_plan, the shell's own).

Hypothesis generates delivery histories: events of kinds that a newer event supersedes, comments that
always come again and other kinds, in a few repositories, whose attempts pass, are refused (4xx), fail
(5xx) or get no answer, sometimes with attempts a maintainer asked for by hand. A simulated GitHub
lists them newest first in small pages (so a history runs past the page caps), filters
`status=failure`, counts its calls, and turns each redelivery the plan asks for into a new attempt
(one call each). `read_and_plan` reads it as the shell reads GitHub. Several runs 15
minutes apart carry the state from one to the next; every run's plan is checked against the true
history, not against the planner's own view of it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import hypothesis
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from support import make_settings

from pager.errors import GitHubUnavailable
from pager.sweep import plan as planner
from pager.sweep import read_and_plan
from pager.sweep.plan import ALARM_CALLS, Limits, State, format_time, outcome_of
from pager.sweep.run import ListNotServed

START = 1_800_000_000  # epoch seconds of the history's first minute
MINUTE = 60
KINDS = ("workflow_run", "issues", "issue_comment", "installation")
LIMITS = Limits(remembered=6, followed=6, asked=6)

CODES = {
    "pass": st.sampled_from([200, 202, 302]),
    "4xx": st.sampled_from([400, 401, 404, 422]),
    "5xx": st.sampled_from([500, 502, 503, 504]),
    "no answer": st.sampled_from([0, 0, 0, 101]),
}
# Failures weigh more than passes, so that events come again, use up their attempts and get overtaken.
code = st.sampled_from(["pass", "4xx", "5xx", "5xx", "no answer", "no answer"]).flatmap(lambda outcome: CODES[outcome])


@dataclass
class Event:
    guid: str
    kind: str
    repo: int | None
    minute: int  # of the first delivery
    codes: list[int]  # first delivery, then attempts asked for by hand
    spacing: int  # minutes between those attempts
    answers: list[int]  # what the pager answers each redelivery the sweep asks for, in turn


@dataclass
class GitHubHistory:
    """The app's deliveries as GitHub keeps them; ids grow with time."""

    items: list[dict[str, Any]] = field(default_factory=list)
    seq: itertools.count = field(default_factory=lambda: itertools.count(1))
    calls: int = 0  # the calls of the run under way: its pages, redeliveries and alarm change

    def add(self, event: Event, at: int, code: int, redelivery: bool) -> None:
        self.items.append({
            "id": at * 1000 + next(self.seq),
            "guid": event.guid,
            "delivered_at": format_time(at),
            "redelivery": redelivery,
            "status": "OK" if 200 <= code < 400 else "timed out" if code == 0 else f"Invalid HTTP Response: {code}",
            "status_code": code,
            "event": event.kind,
            "action": "created",
            "installation_id": 1,
            "repository_id": event.repo,
        })

    def visible(self, now: int, *, failures: bool) -> list[dict[str, Any]]:
        shown = [i for i in self.items if planner.parse_time(i["delivered_at"]) <= now]
        if failures:
            shown = [i for i in shown if 400 <= i["status_code"] <= 599]
        return sorted(shown, key=lambda i: -i["id"])

    def fetcher(self, now: int, *, page_size: int):
        """One page of a list as GitHub serves it: (status filter, next URL) -> page."""

        def fetch(status: str | None, url: str | None):
            self.calls += 1
            listed = self.visible(now, failures=status == "failure")
            offset = int(url) if url else 0
            page = listed[offset : offset + page_size]
            more = offset + page_size < len(listed)
            return SimpleNamespace(items=page, next_url=str(offset + page_size) if more else None)

        return fetch

    def attempts(self, guid: str, now: float) -> list[dict[str, Any]]:
        return sorted((i for i in self.items if i["guid"] == guid and planner.parse_time(i["delivered_at"]) <= now),
                      key=lambda i: i["id"])


@st.composite
def events(draw, index: int, *, earliest: int, latest: int) -> Event:
    return Event(
        guid=f"{index:08d}-0000-4000-8000-000000000000",
        kind=draw(st.sampled_from(KINDS)),
        repo=draw(st.sampled_from([1, 2, None])),
        minute=draw(st.integers(earliest, latest)),
        codes=draw(st.lists(code, min_size=1, max_size=3)),
        spacing=draw(st.integers(1, 50)),
        answers=draw(st.lists(code, min_size=1, max_size=4)),
    )


@st.composite
def worlds(draw):
    failure_pages = draw(st.integers(1, 4))
    all_pages = draw(st.integers(1, 6))
    redeliveries = draw(st.integers(0, 10))
    window = draw(st.sampled_from([30, 60, 180]))
    # Mostly a budget around what the lists and the redeliveries need, sometimes far too small.
    budget = draw(st.one_of(
        st.integers(1, 40),
        st.integers(-3, 8).map(lambda d: max(1, failure_pages + all_pages + redeliveries + ALARM_CALLS + d)),
    ))
    runs = draw(st.integers(1, 5))
    first_run = 240
    count = draw(st.integers(0, 45) | st.integers(20, 45))
    return SimpleNamespace(
        settings=make_settings(
            sweep_call_budget=budget,
            sweep_max_redeliveries=redeliveries,
            sweep_max_attempts=draw(st.sampled_from([1, 2, 3, 3, 4])),
            sweep_window_minutes=window,
            sweep_failure_pages=failure_pages,
            sweep_all_pages=all_pages,
        ),
        page_size=draw(st.integers(2, 20)),
        events=[draw(events(i, earliest=first_run - window - 40, latest=first_run + 15 * runs)) for i in range(count)],
        first_run=first_run,
        runs=runs,
        alarm_works=draw(st.lists(st.booleans(), min_size=5, max_size=5)),
    )


def size_bound(limits: Limits) -> int:
    """Bytes the state may take: a fixed part and the capped lists at their longest."""
    return 400 + 160 * limits.remembered + 160 * limits.followed + 80 * limits.asked


@hypothesis_settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(worlds())
def test_the_sweep_keeps_its_promises_over_generated_histories(world):
    cfg = world.settings
    history = GitHubHistory()
    for event in world.events:
        for n, c in enumerate(event.codes):
            history.add(event, START + event.minute * MINUTE + n * event.spacing * MINUTE + 1, c, redelivery=n > 0)
    by_guid = {e.guid: e for e in world.events}
    answered = {e.guid: 0 for e in world.events}
    state = State()
    alarm: dict[str, float] = {}  # the delivery entries open in the control repository's alarm: guid -> time
    ever_asked: set[str] = set()
    hidden_before = 0  # an every-outcome list cut short may hide a no answer or a pass older than this id
    redeliveries = 0
    decided: dict[str, int] = {}
    gaps: set[str] = set()

    for run in range(world.runs):
        now = START + (world.first_run + 15 * run) * MINUTE
        start = now - cfg.sweep_window_minutes * MINUTE
        history.calls = 0
        read = read_and_plan(history.fetcher(now, page_size=world.page_size), state=state, entries=dict(alarm),
                             settings=cfg, now=now, calls_used=lambda: history.calls, acts_on=lambda event, action: True,
                             limits=LIMITS)
        plan, outcomes = read.plan, read.outcomes
        known_ids = read.seen | {a.id for a in state.remembered} | {a.id for a in state.followed}
        followed_before = state.followed_guids
        if outcomes is not None and outcomes.cut_short:
            hidden_before = max(hidden_before, min(a.id for a in outcomes.items))
        redeliveries += len(plan.redeliver)
        for name, n in plan.counts.items():
            decided[name] = decided.get(name, 0) + n
        gaps |= {g.list for g in plan.gaps}
        if outcomes is not None:
            # The every-outcome pages leave the calls of the redeliveries and of one alarm change.
            assert history.calls + cfg.sweep_max_redeliveries + ALARM_CALLS <= cfg.sweep_call_budget

        # Never more than the redeliveries of a run; a run without every-outcome pages asks for nothing.
        assert len(plan.redeliver) <= cfg.sweep_max_redeliveries
        if outcomes is None:
            assert plan.redeliver == () and not plan.alarm_change and plan.state.cursor == state.cursor

        for asked in plan.redeliver:
            true = history.attempts(asked.guid, now)
            first = next(a for a in true if not a["redelivery"])
            # Never an event whose first delivery the runs did not see, nor one older than the window
            # unless a run before counted it and followed it since.
            assert first["id"] in known_ids
            assert planner.parse_time(first["delivered_at"]) >= start or asked.guid in followed_before
            # Never a 4xx again, never a passed event again.
            assert outcome_of(true[-1]["status_code"]) != planner.REFUSED
            # The decision's one accepted hole: an event older than a reach gap of the every-outcome list
            # may have a no answer or a pass in it. Every other event is judged on the whole truth.
            if first["id"] >= hidden_before:
                assert asked.delivery_id == true[-1]["id"]
                assert all(outcome_of(a["status_code"]) != planner.PASSED for a in true)
                # Never more than the attempts.
                assert len(true) < cfg.sweep_max_attempts

        for key, entry in plan.opened.items():
            true = history.attempts(key.removeprefix(planner.ENTRY_PREFIX), now)
            if true[0]["id"] >= hidden_before:
                # Named for having used up its attempts, or for want of room to follow it (and shown
                # again with its new answer when it failed again since).
                assert (len(true) >= cfg.sweep_max_attempts or "too many failed events to follow" in entry["title"]
                        or ": delivered again, failed again" in entry["title"])
                assert all(outcome_of(a["status_code"]) != planner.PASSED for a in true)

        # Carry the plan out: each redelivery is a call and becomes the next attempt of its event.
        for n, asked in enumerate(plan.redeliver):
            history.calls += 1
            event = by_guid[asked.guid]
            history.add(event, now + 1 + n, event.answers[answered[asked.guid] % len(event.answers)], redelivery=True)
            answered[asked.guid] += 1
        ever_asked |= {r.guid for r in plan.redeliver}
        state = plan.state
        # The entries are recorded in the table (no call); the message needs a call, and may fail.
        alarm.update({key.removeprefix(planner.ENTRY_PREFIX): now for key in plan.opened})
        for key in plan.closed:
            alarm.pop(key.removeprefix(planner.ENTRY_PREFIX), None)
        if plan.alarm_change and planner.alarm_fits(cfg, history.calls):
            history.calls += ALARM_CALLS
            if world.alarm_works[run]:
                state = plan.applied()
        # Never past the call budget.
        assert history.calls <= cfg.sweep_call_budget

        # Nothing lost silently: an event the sweep asked for again is, after each run, done (it passed,
        # or was refused, after which it is never asked for again: GitHub's truth), followed by the
        # state, or named in the alarm (or about to be: its entry is in the plan).
        for guid in ever_asked:
            true = history.attempts(guid, now + 60)
            done = any(outcome_of(a["status_code"]) in (planner.PASSED, planner.REFUSED) for a in true)
            if not done and true[0]["id"] >= hidden_before:
                assert guid in state.followed_guids or guid in alarm or planner.ENTRY_PREFIX + guid in plan.opened, guid

        # The state stays small, whatever the history.
        assert len(state.remembered) <= LIMITS.remembered
        assert len(state.followed) <= LIMITS.followed
        assert state.encoded_size() <= size_bound(LIMITS)
        assert State.from_data(state.to_data()) == state
    hypothesis.event(f"redeliveries: {min(redeliveries, 5)}{'+' if redeliveries >= 5 else ''}")
    hypothesis.event(f"gaps: {sorted(gaps)}")
    for name, n in decided.items():
        hypothesis.event(f"{name}: {'some' if n else 'none'}")
    hypothesis.event(f"entries: {len(alarm)}")


def test_a_list_github_does_not_serve_ends_the_reading_and_names_the_list():
    history = GitHubHistory()
    served = history.fetcher(START, page_size=5)

    def every_outcome_down(status, url):
        if status is None:
            raise GitHubUnavailable("github list deliveries: GitHub answered 503", status=503)
        return served(status, url)

    with pytest.raises(ListNotServed, match="^every-outcome list: GitHubUnavailable$") as raised:
        read_and_plan(every_outcome_down, state=State(), entries={}, settings=make_settings(), now=START,
                      calls_used=lambda: history.calls, acts_on=lambda event, action: True)
    assert raised.value.error.status == 503 and history.calls == 1
