"""Property test: one repository's default branch, its workflow runs delivered in any order, twice, with faults.

History: commits c1..cN pushed in order; for each commit each workflow runs (run number = the commit's
index, per workflow) and fails or passes; a failed run is sometimes re-run as attempt 2 (which passes, or
fails again). Deliveries: each `workflow_run.completed` once in a random permutation, random duplicates,
transient faults (Telegram 502 on send/edit/delete, store failures on the alarm's saves/queries) that last a
few deliveries, then the failed ones delivered again once healed. Between deliveries the clock moves by
seconds or by minutes, and the every-minute check runs.

Invariants (docs/signals.md "The alarm", docs/attention.md "The alarm's grace"):
 1. one red alarm message in the chat at most (a repost deletes the old one; an all clear stays, and the
    next failure sends a new message);
 2. red iff, for some workflow, the newest commit's newest attempt failed; the red entries are exactly
    those workflows, each shown by its newest failing run; otherwise "green again" (or no message when
    nothing ever opened an entry that was shown);
 3. no 500 but where a fault fired, none once healed; no claim left behind;
 4. each entry opening buzzes at most once, and an alarm still red past its grace has buzzed (or, within the
    hour of its last buzz, has when the hour ended).

    make test-deep     ten times the examples, searched anew (the suite runs the same 20 per test, to stay fast)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import hypothesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from support import examples

from pager.attention import NOW_AGAIN_SECONDS
from pager.sweep.run import check as minute_check
from pager.values import iso
from pager_world.cases import run as run_payload

EXAMPLES = examples(20)
T0 = 1_796_000_000
GRACE = 15  # ALARM_GRACE_MINUTES, the default
AGAIN = NOW_AGAIN_SECONDS // 60  # an alarm that buzzed buzzes again no sooner than this
WORKFLOWS = {101: "build", 102: "lint", 103: "docs"}


@dataclass(frozen=True)
class Ev:
    workflow: int
    commit: int  # 1.. in push order; also the run number
    attempt: int
    conclusion: str

    def __repr__(self) -> str:
        return f"<{WORKFLOWS[self.workflow]} c{self.commit}#{self.attempt} {self.conclusion}>"

    @property
    def title(self) -> str:
        verb = {"failure": "failed", "timed_out": "timed out", "startup_failure": "failed to start"}[self.conclusion]
        return f"{WORKFLOWS[self.workflow]} run #{self.commit}" + (f" (attempt {self.attempt})" if self.attempt > 1 else "") + f" {verb}"

    def payload(self) -> dict[str, Any]:
        started = T0 + self.commit * 600 + (self.attempt - 1) * 300
        return run_payload(self.conclusion, workflow_id=self.workflow, number=self.commit, attempt=self.attempt,
                           name=WORKFLOWS[self.workflow], **{
                               "workflow_run.head_sha": f"{self.commit:040x}",
                               "workflow_run.id": self.workflow * 10_000 + self.commit,
                               "workflow_run.created_at": iso(T0 + self.commit * 600),
                               "workflow_run.run_started_at": iso(started),
                               "workflow_run.updated_at": iso(started + 120 + self.workflow),
                           })


FAILING = ("failure", "failure", "timed_out", "startup_failure")


@st.composite
def histories(draw) -> list[Ev]:
    workflows = draw(st.sampled_from([[101], [101, 102], [101, 102, 103]]))
    commits = draw(st.integers(1, 4))
    history = []
    for c in range(1, commits + 1):
        for w in workflows:
            if c > 1 and draw(st.integers(0, 5)) == 0:
                continue  # this workflow did not run on that commit (a path filter)
            first = draw(st.sampled_from(["success", "success", *FAILING]))
            history.append(Ev(w, c, 1, first))
            if first != "success" and draw(st.booleans()):
                history.append(Ev(w, c, 2, draw(st.sampled_from(["success", "success", "failure"]))))
    return history


def expected_red(history: list[Ev]) -> dict[int, Ev]:
    """Per workflow, the newest commit's newest attempt, when it failed; and of those, the newest failure."""
    newest: dict[int, Ev] = {}
    for ev in history:
        if ev.workflow not in newest or (ev.commit, ev.attempt) > (newest[ev.workflow].commit, newest[ev.workflow].attempt):
            newest[ev.workflow] = ev
    return {w: ev for w, ev in newest.items() if ev.conclusion != "success"}


FAULTS = {
    "tg-send": ("telegram", "sendMessage", 502),
    "tg-edit": ("telegram", "editMessageText", 502),
    "tg-delete": ("telegram", "deleteMessage", 502),
    "store-save": ("store", r"save alarm#", 503),
    "store-query": ("store", r"query alarm#", 503),
}


@st.composite
def schedules(draw, n: int):
    order = list(draw(st.permutations(range(n))))
    for _ in range(draw(st.integers(0, n))):
        order.insert(draw(st.integers(0, len(order))), draw(st.integers(-1, n - 1)))
    m = len(order)
    faults = draw(st.lists(st.sampled_from([None, None, None, *FAULTS]), min_size=m, max_size=m))
    spans = draw(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=m, max_size=m))
    gaps = draw(st.lists(st.sampled_from([4, 4, 4, 60, 300, 600, 1200]), min_size=m, max_size=m))
    return list(zip(order, faults, spans, gaps, strict=True))


@dataclass
class Run:
    log: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    openings: set = field(default_factory=set)  # (entry key, at) seen open in the table
    max_alarm_messages: int = 0


def tick(world) -> dict:
    return minute_check(world.services, now=world.now, run_id=f"check-{int(world.now)}", seconds=60)


def alarm_messages(world) -> dict:
    return {m: shown for m, shown in world.chat.view().items() if shown[0].startswith(("🚨 ", "✅ ")) and "Hello-World" in shown[0].split("\n", 1)[0]}


def observe(world, run: Run) -> None:
    for key, data in world.store.dump().items():
        if "[entry:workflow:" in key and isinstance(data, dict) and data.get("state") == "open":
            run.openings.add((key, data.get("at")))
    red_now = [m for m, (text, _) in alarm_messages(world).items() if text.startswith("🚨")]
    run.max_alarm_messages = max(run.max_alarm_messages, len(red_now))


def run_history(world, history: list[Ev], schedule, redeliver_order) -> Run:
    run = Run()
    guids = [f"g-{i}" for i in range(len(history))]
    sent: set[int] = set()
    last: dict[int, int] = {}
    outage = {"left": 0}

    def one(i: int, fault: str | None, span: int = 1, gap: float = 4, healed: bool = False) -> None:
        world.advance(gap / 60)
        if gap >= 60:
            tick(world)
        fired_before = len(world.faults.fired)
        if fault is not None and outage["left"] <= 0:
            service, pattern, status = FAULTS[fault]
            world.faults.fail(service, pattern, status=status, count=100)
            outage["left"] = span
        if i in sent:
            status, answer = world.deliver_again(guids[i])
        else:
            status, answer = world.deliver("workflow_run", history[i].payload(), guid=guids[i])
            sent.add(i)
        outage["left"] -= 1
        if outage["left"] <= 0:
            world.faults.heal()
        last[i] = status
        fired = len(world.faults.fired) > fired_before
        run.log.append(f"+{int(world.now - world_start[0])}s {history[i]!r}"
                       + (" again (healed)" if healed else (f" +{fault}x{span}" if fault else "")) + f" -> {status} {answer.get('outcome')}")
        if status != 200 and not fired:
            run.unexpected.append(f"{history[i]!r} answered {status} without a fault: {answer}")
        observe(world, run)

    world_start = [world.now]
    for i, fault, span, gap in schedule:
        if i >= 0:
            one(i, fault, span, gap)
            continue
        for j in [j for j, s in last.items() if s != 200]:
            one(j, None, healed=True)
    world.faults.heal()
    outage["left"] = 0
    for i in redeliver_order([i for i, s in last.items() if s != 200]):
        one(i, None, healed=True)
        if last[i] != 200:
            run.unexpected.append(f"{history[i]!r} answered {last[i]} once healed")
    return run


def verify(world, history: list[Ev], run: Run) -> None:
    trace = "\n".join(run.log) + "\n--- chat:\n" + world.chat.render()
    assert not run.unexpected, "\n".join(run.unexpected) + "\n" + trace
    assert world.pending_claims() == [], f"claims left: {world.pending_claims()}\n" + trace

    # 1. one alarm message at most, at all times
    # (an all clear stays in the chat, and the next failure sends a new message: docs/signals.md)
    # (a repost whose old message Telegram did not delete meanwhile leaves two for a while: tidied by the next render)
    every = alarm_messages(world)
    shown = {max(every): every[max(every)]} if every else {}
    red = expected_red(history)

    # 2. red iff the newest attempts of the newest commits fail, with exactly those entries
    if red:
        assert shown, "red on GitHub, no alarm in the chat\n" + trace
        [(text, buttons)] = shown.values()
        assert text.startswith("🚨 "), f"red on GitHub ({sorted(red.values(), key=repr)}), the chat says otherwise\n" + trace
        head, *rest = text.splitlines()  # the headline names the one entry (cut within 80 characters: listed below then)
        listed = "\n".join(rest) if any(line.startswith("• ") for line in rest) else head
        titles = set(re.findall(r"(\w+ run #\d+(?: \(attempt \d+\))? (?:failed to start|failed|timed out))(?![\w…])", listed))
        assert titles == {ev.title for ev in red.values()}, f"red entries {sorted(titles)} != {sorted(ev.title for ev in red.values())}\n" + trace
        assert buttons and any("🛠 Start fix" in row for row in buttons), trace
    elif shown:
        [(text, buttons)] = shown.values()
        assert text.startswith("✅ ") and " is green again " in text, "green on GitHub, the chat says red\n" + trace
        assert "<s>" in text and buttons is None, trace

    # 4. buzzes: the alarm still red past its grace buzzes (once per opening; within the hour of its last
    # buzz, when the hour ends), green never later
    before = len(world.chat.buzzes)
    for _ in range(GRACE + AGAIN + 2):
        world.advance(1)
        tick(world)
    observe(world, run)
    alarm_buzzes = [b for b in world.chat.buzzes if b[2].startswith("🚨 ")]
    trace = trace + "\n--- buzzes: " + repr(alarm_buzzes) + "\n--- openings: " + repr(sorted(run.openings))
    assert len(alarm_buzzes) <= len(run.openings), "more buzzes than entry openings\n" + trace
    if red:
        assert alarm_buzzes, "red past its grace, never buzzed\n" + trace
        mid = max(alarm_messages(world))
        assert world.chat.messages[mid].notified or any(b[1] >= max(a for _, a in run.openings if a) for b in alarm_buzzes), trace
    else:
        assert len(world.chat.buzzes) == before, "green, yet a buzz afterwards\n" + trace
    for _ in range(5):
        world.advance(1)
        tick(world)
    reds = [m for m, (text, _) in alarm_messages(world).items() if text.startswith("🚨")]
    assert len(reds) <= 1, f"{len(reds)} red alarm messages left\n" + trace + "\n" + world.chat.render()
    every = alarm_messages(world)
    assert all(text.startswith("✅ ") for m, (text, _) in every.items() if m != max(every)), trace + "\n" + world.chat.render()
    assert len([b for b in world.chat.buzzes if b[2].startswith("🚨 ")]) == len(alarm_buzzes), "buzzed again\n" + trace


def _settings(n: int = EXAMPLES):
    return hypothesis_settings(max_examples=n, deadline=None, print_blob=True,
                               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                                      HealthCheck.data_too_large])


def _property(make_world, data, faults: bool):
    history = data.draw(histories(), label="history")
    schedule = data.draw(schedules(len(history)), label="schedule")
    if not faults:
        schedule = [(i, None, 1, g) for i, _, _, g in schedule]
    world = make_world(buzz_gap_minutes=0)
    run = run_history(world, history, schedule,
                      lambda failed: data.draw(st.permutations(failed), label="redelivered") if failed else [])
    hypothesis.event(f"red at the end: {bool(expected_red(history))}")
    hypothesis.event(f"faults fired: {min(len(world.faults.fired), 3)}")
    verify(world, history, run)


@_settings()
@given(data=st.data())
def test_alarm_runs_in_any_order_without_faults(make_world, data):
    _property(make_world, data, faults=False)


@_settings()
@given(data=st.data())
def test_alarm_runs_in_any_order_with_faults(make_world, data):
    _property(make_world, data, faults=True)
