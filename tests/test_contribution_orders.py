"""Property test: one outsider's contribution's GitHub history, delivered in any order, twice, with faults.

A history of one thing (an issue, a discussion or a pull request): opened at t0, then closings and
reopenings, edits by its author and comments by outsiders at increasing times. Its events are delivered
to the real handlers in the fake world in a random permutation, with random duplicates and optionally
transient faults (Telegram 502 on a send or an edit, GitHub 502 on the draft's dispatch); every delivery
answered 500 is delivered again once the faults are healed. Then the chat must show the thing as GitHub
last left it (docs/signals.md, docs/attention.md).

    make test-deep     ten times the examples, searched anew (the suite runs the same 20 per test, to stay fast)
    FUZZ_MIN_GAP=0                   allow GitHub events in the same second (order keys tie: a closing and
                                     a reopening, the one delivered last wins; two edits in one second are
                                     one edit to pager, keyed by its time: the second is not shown)

Invariants: (1) one message for the opening at most, each comment shown once, each edit at most once and
never an older one after a newer one, one draft per message shown; (2) the opening ends with its verdict
iff the thing is closed on GitHub, an open thing is shown, the newest text is in the thread (the opening
or an edit's reply), and the opening never goes back to an older text; (3) at most one buzz within the
hour, the first contact's, everything else a reply to the thread's first message (and, with the clock
moving by hours, a contact buzzes again only after a quiet hour); (4) no 500 but where a fault fired,
none once healed, no claim left behind.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

import hypothesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from support import examples

from pager.values import iso
from pager_world.cases import issue_comment_by, outside
from pager_world.payloads import payload
from pager_world.world import REPO

T0 = 1_796_000_000  # 2026-11-30, GitHub's time of the opening (the world's clock is its own)
EXAMPLES = examples(20)
MIN_GAP = int(os.environ.get("FUZZ_MIN_GAP", "1"))  # minutes between GitHub's events (0: some in the same second)
STEP_SECONDS = 4.0  # world time between deliveries: under Telegram's flood windows, far within the hour

# Per kind of thing: (event, opening action, closing action, reopening action, comment event)
KINDS = {
    "issue": ("issues", "opened", "closed", "reopened", "issue_comment"),
    "discussion": ("discussion", "created", "answered", "unanswered", "discussion_comment"),
    "pull": ("pull_request", "opened", "closed", "reopened", "issue_comment"),
}
VERDICT = {"issue": "✅ closed", "discussion": "✅ answered", "pull": None}  # pull: closed or merged


def title(v: int) -> str:
    return f"Title v{v}"


def body(v: int) -> str:
    return f"Body text version {v}"


class Ev:
    """One event of the history, as GitHub sent it (its repr is what a shrunk example prints)."""

    def __init__(self, name: str, at: int, event: str, payload: dict[str, Any], version: int, state: str,
                 comment_id: int | None = None, merged: bool = False) -> None:
        self.name = name  # opened, closed, reopened, edited, comment
        self.at = at  # epoch seconds
        self.event, self.payload = event, payload
        self.version = version  # the thing's text version in the payload
        self.state = state  # the thing's state after it: open or closed (merged counts as closed)
        self.comment_id, self.merged = comment_id, merged

    def __repr__(self) -> str:
        extra = f" c{self.comment_id}" if self.comment_id else ""
        return f"<{self.name}@+{(self.at - T0) // 60}m v{self.version} {self.state}{' merged' if self.merged else ''}{extra}>"


def thing_payload(kind: str, action: str, at: int, version: int, state: str, *, merged: bool = False) -> tuple[str, dict]:
    event = KINDS[kind][0]
    if kind == "issue":
        who = "issue"
        changes = {"issue.state": state, "issue.closed_at": iso(at) if state == "closed" else None}
        body_ = payload_outside(event, "opened", who, action)
    elif kind == "discussion":
        who = "discussion"
        changes = {"discussion.state": "open", "discussion.answer_chosen_at": iso(at) if state == "closed" else None}
        body_ = payload_outside(event, "created", who, action)
    else:
        who = "pull_request"
        changes = {"pull_request.state": state, "pull_request.merged": merged,
                   "pull_request.closed_at": iso(at) if state == "closed" else None,
                   "pull_request.merged_at": iso(at) if merged else None}
        body_ = payload_outside(event, "opened", who, action)
    changes.update({f"{who}.title": title(version), f"{who}.body": body(version), f"{who}.updated_at": iso(at),
                    f"{who}.created_at": iso(T0)})
    for path, value in changes.items():
        _set(body_, path, value)
    return event, body_


def payload_outside(event: str, fixture: str, who: str, action: str) -> dict[str, Any]:
    b = outside(event, fixture, who=who)
    b["action"] = action
    return b


def _set(data: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for name in parents:
        data = data.setdefault(name, {})
    data[last] = value


def comment_payload(kind: str, at: int, version: int, state: str, comment_id: int, login: str) -> tuple[str, dict]:
    if kind == "discussion":
        b = payload("discussion_comment", "created", **{
            "comment.user.login": login, "sender.login": login, "comment.author_association": "NONE",
            "comment.id": comment_id, "comment.created_at": iso(at), "comment.updated_at": iso(at),
            "comment.body": f"comment {comment_id}",
            "comment.html_url": f"https://github.com/{REPO}/discussions/90#discussioncomment-{comment_id}",
            "discussion.title": title(version), "discussion.updated_at": iso(at), "discussion.user.login": "alice",
            "discussion.author_association": "NONE"})
        return "discussion_comment", b
    number = 1
    changes = {"comment.created_at": iso(at), "comment.updated_at": iso(at), "comment.body": f"comment {comment_id}",
               "issue.title": title(version), "issue.updated_at": iso(at), "issue.state": state}
    if kind == "pull":
        number = pull_number()
        changes["issue.pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}"}
    return "issue_comment", issue_comment_by(login, comment_id=comment_id, number=number, **changes)


def pull_number() -> int:
    return int(payload("pull_request", "opened")["pull_request"]["number"])


def discussion_number() -> int:
    return int(payload("discussion", "created")["discussion"]["number"])


@st.composite
def histories(draw, kinds=("issue",)) -> tuple[str, list[Ev]]:
    kind = draw(st.sampled_from(kinds))
    ev_name, opening, closing, reopening, _ = KINDS[kind]
    at, version, state = T0, 0, "open"
    event, b = thing_payload(kind, opening, at, version, state)
    history = [Ev("opened", at, event, b, version, state)]
    next_comment = 9000
    merged = False
    for step in draw(st.lists(st.sampled_from(["toggle", "edit", "comment"]), max_size=8)):
        at += 60 * draw(st.integers(MIN_GAP, 30))
        if step == "toggle":
            if merged:
                continue  # a merged pull request stays merged
            if state == "open":
                state = "closed"
                merged = kind == "pull" and draw(st.booleans())
                event, b = thing_payload(kind, closing, at, version, state, merged=merged)
                history.append(Ev("closed", at, event, b, version, state, merged=merged))
            else:
                state = "open"
                event, b = thing_payload(kind, reopening, at, version, state)
                history.append(Ev("reopened", at, event, b, version, state))
        elif step == "edit":
            version += 1
            event, b = thing_payload(kind, "edited", at, version, state, merged=merged)
            history.append(Ev("edited", at, event, b, version, state, merged=merged))
        else:
            next_comment += 1
            login = draw(st.sampled_from(["alice", "bob"]))
            event, b = comment_payload(kind, at, version, "closed" if state == "closed" else "open", next_comment, login)
            history.append(Ev("comment", at, event, b, version, state, comment_id=next_comment, merged=merged))
    return kind, history


FAULTS = {
    "tg-send": ("telegram", "sendMessage"),
    "tg-edit": ("telegram", "editMessageText"),
    "gh-dispatch": ("github", r"POST /repos/.*/dispatches"),
}


@st.composite
def schedules(draw, n: int) -> list[tuple[int, str | None, int]]:
    """The deliveries: each event once in a random order, some again at random places, each maybe with a
    fault that lasts for `span` deliveries (an outage); -1: the sweep redelivers the failed ones now."""
    order = list(draw(st.permutations(range(n))))
    for _ in range(draw(st.integers(0, n))):
        order.insert(draw(st.integers(0, len(order))), draw(st.integers(-1, n - 1)))
    faults = draw(st.lists(st.sampled_from([None, None, None, *FAULTS]), min_size=len(order), max_size=len(order)))
    spans = draw(st.lists(st.sampled_from([1, 1, 1, 2, 3]), min_size=len(order), max_size=len(order)))
    return list(zip(order, faults, spans, strict=True))


VERSION = re.compile(r"Title v(\d+)")


def version_of(text: str) -> int | None:
    m = VERSION.search(text)
    return int(m.group(1)) if m else None


@dataclass
class Run:
    log: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    regressed: str | None = None
    shown_version: int | None = None  # the opening's text went from a version to an older one


def watch_opening(world, kind: str, run: Run) -> None:
    noun = {"issue": "issue", "discussion": "discussion", "pull": "pull request"}[kind]
    versions = [version_of(m.text) for m in world.chat.chat() if m.text.startswith(f"💬 alice opened {noun} ")]
    if len(versions) != 1 or versions[0] is None:
        return
    now = versions[0]
    if run.shown_version is not None and now < run.shown_version and run.regressed is None:
        run.regressed = f"v{run.shown_version} -> v{now} after delivery {len(run.log) + 1}"
    run.shown_version = now if run.shown_version is None else max(run.shown_version, now)


def run_history(world, kind: str, history: list[Ev], schedule: list[tuple[int, str | None, int]], redeliver_order,
                gaps=None) -> Run:
    run = Run()
    guids = [f"g-{i}" for i in range(len(history))]
    first_sent: set[int] = set()
    last_status: dict[int, int] = {}

    outage = {"left": 0}

    steps = iter(gaps or ())

    def one(i: int, fault: str | None, span: int = 1, healed: bool = False) -> None:
        world.advance(next(steps, STEP_SECONDS) / 60)
        fired_before = len(world.faults.fired)
        if fault is not None and outage["left"] <= 0:
            service, pattern = FAULTS[fault]
            world.faults.fail(service, pattern, status=502, count=100)
            outage["left"] = span
        ev = history[i]
        if i in first_sent:
            status, answer = world.deliver_again(guids[i])
        else:
            status, answer = world.deliver(ev.event, ev.payload, guid=guids[i])
            first_sent.add(i)
        outage["left"] -= 1
        if outage["left"] <= 0:
            world.faults.heal()
        watch_opening(world, kind, run)
        fired = len(world.faults.fired) > fired_before
        last_status[i] = status
        how = " again (redelivered)" if healed else (" +" + fault if fault else "")
        run.log.append(f"{ev!r}{how} -> {status} {answer.get('outcome')}")
        if status != 200 and not fired:
            run.unexpected.append(f"{ev!r} answered {status} without a fault: {answer}")

    for i, fault, span in schedule:
        if i >= 0:
            one(i, fault, span)
            continue
        for j in [j for j, s in last_status.items() if s != 200]:  # the sweep: faults may still hold
            one(j, None, healed=True)
    world.faults.heal()
    outage["left"] = 0
    failed = [i for i, s in last_status.items() if s != 200]
    for i in redeliver_order(failed):
        one(i, None, healed=True)
        if last_status[i] != 200:
            run.unexpected.append(f"{history[i]!r} answered {last_status[i]} once healed")
    return run


def check(world, kind: str, history: list[Ev], run: Run) -> None:
    final = history[-1]
    messages = world.chat.chat()
    trace = "\n".join(run.log) + "\n" + world.chat.render()
    # 4. no delivery fails but for a fault, none once healed
    assert not run.unexpected, "\n".join(run.unexpected) + "\n" + trace

    noun = {"issue": "issue", "discussion": "discussion", "pull": "pull request"}[kind]
    openings = [m for m in messages if m.text.startswith(f"💬 alice opened {noun} ")]
    edits = [m for m in messages if m.text.startswith(f"💬 alice edited {noun} ")]
    comments = [m for m in messages if " commented on " in m.text.split("\n", 1)[0]]
    assert len(openings) + len(edits) + len(comments) == len(messages), trace

    # 1. at most one message for the opening; one per comment, each comment shown; at most one per edit
    assert len(openings) <= 1, "more than one message for the opening\n" + trace
    ids = [c.comment_id for c in history if c.name == "comment"]
    for cid in ids:
        shown = [m for m in comments if f"comment-{cid}" in m.text]
        assert len(shown) == 1, f"comment {cid} shown {len(shown)} times\n" + trace
    edit_versions = [version_of(m.text) for m in edits]
    assert len(edit_versions) == len(set(edit_versions)), "an edit shown twice\n" + trace
    assert edit_versions == sorted(edit_versions), "an older edit shown after a newer one\n" + trace

    # 2. the thing as GitHub last left it
    closed = final.state == "closed"
    verdict = VERDICT[kind] or ("✅ merged" if final.merged else "✅ closed")
    if not closed:
        assert openings, f"the {noun} is open on GitHub but not shown in the chat\n" + trace
    if openings:
        [opening] = openings
        text = opening.text
        if closed:
            assert text.endswith("\n" + verdict), f"closed on GitHub, the message does not say {verdict}\n" + trace
            assert not opening.buttons, trace
        else:
            assert "✅" not in text, "open on GitHub, the message says it is closed\n" + trace
            assert opening.buttons, "open on GitHub, its 🔕 is gone\n" + trace
        # The newest text is in the thread: the opening shows it, or an edit's reply under it does.
        newest = final.version
        shown_versions = {version_of(text)} | set(edit_versions)
        assert newest in shown_versions, f"the newest text (v{newest}) is nowhere in the thread\n" + trace
        # The opening never goes back to an older text than one it showed already.
        assert run.regressed is None, f"the opening went back to an older text: {run.regressed}\n" + trace

    # 1b. one draft per message of an opening or a comment, none for an edit; no claim left behind
    drafts = [d["client_payload"] for d in world.hub.dispatches if d["event_type"] == "pager-draft"]
    assert len([d for d in drafts if d["comment_id"] is None]) == len(openings), "drafts of the opening\n" + trace
    for cid in ids:
        assert len([d for d in drafts if d["comment_id"] == cid]) == 1, f"drafts of comment {cid}\n" + trace
    assert world.pending_claims() == [], trace

    # 3. threads: at most one buzz; every other message replies to the thread's first
    thread = openings + edits + comments
    buzzed = [m for m in thread if m.notified]
    assert len(buzzed) <= 1, "more than one buzz in the thread within the hour\n" + trace
    if thread:
        first = min(thread, key=lambda m: m.sent_at * 10**6 + m.message_id)
        assert buzzed or not (openings or comments), "no first contact buzzed\n" + trace
        assert not buzzed or buzzed[0] is first, "a follow-up buzzed, not the first contact\n" + trace
        for m in thread:
            if m is not first:
                assert m.reply_to == first.message_id, f"message {m.message_id} is not threaded under {first.message_id}\n" + trace


def check_buzzes_by_the_hour(world, run: Run) -> None:
    """docs/attention.md (the phone's rest off): a contact buzzes; a follow-up within the hour of the thread's
    last buzz does not; one after a quiet hour does again; an edit never buzzes."""
    assert not run.unexpected, "\n".join(run.unexpected)
    last: float | None = None
    trace = "\n".join(run.log) + "\n" + world.chat.render() + "\n" + str(
        [(m.message_id, m.sent_at - world.clock.now, m.notified) for m in world.chat.chat()])
    for m in sorted(world.chat.chat(), key=lambda m: (m.sent_at, m.message_id)):
        head = m.text.split("\n", 1)[0]
        if " edited " in head:
            assert not m.notified, "an edit buzzed\n" + trace
            continue
        should = last is None or m.sent_at - last >= 3600
        assert m.notified == should, f"message {m.message_id} buzz={m.notified}, expected {should}\n" + trace
        if m.notified:
            last = m.sent_at


def _settings(n: int = EXAMPLES):
    return hypothesis_settings(max_examples=n, deadline=None, print_blob=True,
                               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                                      HealthCheck.data_too_large])


def _property(make_world, data, kinds, faults: bool, hours: bool = False):
    kind, history = data.draw(histories(kinds), label="history")
    schedule = data.draw(schedules(len(history)), label="schedule")
    if not faults:
        schedule = [(i, None, 1) for i, _, _ in schedule]
    gaps = None
    if hours:  # the world's clock between deliveries: seconds, or long enough for the follow-up hour to end
        gaps = data.draw(st.lists(st.sampled_from([STEP_SECONDS, STEP_SECONDS, 600, 1800, 3000, 3700]), max_size=40),
                         label="clock gaps (seconds)")
    world = make_world(buzz_gap_minutes=0) if hours else make_world()
    run = run_history(world, kind, history, schedule,
                      lambda failed: data.draw(st.permutations(failed), label="redelivered") if failed else [], gaps)
    if hours:
        check_buzzes_by_the_hour(world, run)
        return
    hypothesis.event(f"kind {kind}; final {history[-1].state}; events {len(history)}")
    hypothesis.event(f"faults fired: {min(len(world.faults.fired), 3)}")
    assert faults or not world.faults.fired
    check(world, kind, history, run)


@_settings()
@given(data=st.data())
def test_issue_lifecycle_in_any_order_without_faults(make_world, data):
    _property(make_world, data, ("issue",), faults=False)


@_settings()
@given(data=st.data())
def test_issue_lifecycle_in_any_order_with_faults(make_world, data):
    _property(make_world, data, ("issue",), faults=True)


@_settings()
@given(data=st.data())
def test_discussion_lifecycle_in_any_order(make_world, data):
    _property(make_world, data, ("discussion",), faults=True)


@_settings()
@given(data=st.data())
def test_pull_request_lifecycle_in_any_order(make_world, data):
    _property(make_world, data, ("pull",), faults=True)


@_settings()
@given(data=st.data())
def test_issue_buzzes_by_the_hour(make_world, data):
    _property(make_world, data, ("issue", "pull", "discussion"), faults=True, hours=True)


# -- the shrunk examples the property found, each a plain test ------------------------------------------------


def deliver_in(world, events: list[tuple[str, dict]], order: list[int], faults: dict[int, tuple[str, str]] | None = None):
    """Deliver `events` in `order` (an index again: GitHub's redelivery), a fault on the nth delivery if given."""
    for n, i in enumerate(order):
        world.advance(0.1)
        if faults and n in faults:
            world.faults.fail(*faults[n], status=502)
        if f"g-{i}" in world.hub.payloads:
            world.deliver_again(f"g-{i}")
        else:
            world.deliver(*events[i], guid=f"g-{i}")
        world.faults.heal()


def closed_then_reopened(kind: str = "issue") -> list[tuple[str, dict]]:
    _, opening, closing, reopening, _ = KINDS[kind]
    return [thing_payload(kind, opening, T0, 0, "open"), thing_payload(kind, closing, T0 + 60, 0, "closed"),
            thing_payload(kind, reopening, T0 + 120, 0, "open")]


def test_a_reopening_delivered_before_its_closing_leaves_it_shown_open(world):
    deliver_in(world, closed_then_reopened(), [0, 2, 1])
    [(text, buttons)] = world.chat.view().values()
    assert "✅" not in text and buttons


def test_an_opening_that_came_while_a_closing_was_recorded_is_shown_once_reopened(world):
    deliver_in(world, closed_then_reopened(), [1, 0, 2])
    [(text, _)] = world.chat.view().values()
    assert "Title v0" in text and "✅" not in text
    assert len([d for d in world.hub.dispatches if d["event_type"] == "pager-draft"]) == 1


def test_a_reopening_shows_the_newest_text_not_its_own_older_one(world):
    events = closed_then_reopened() + [thing_payload("issue", "edited", T0 + 180, 1, "open")]
    deliver_in(world, events, [3, 0, 1, 2])  # the edit (kept), the opening (shown with it), closed, reopened
    [(text, _)] = world.chat.view().values()
    assert "Title v1" in text


def test_a_merge_after_a_closing_already_shown_says_merged(world):
    events = closed_then_reopened("pull") + [thing_payload("pull", "closed", T0 + 180, 0, "closed", merged=True)]
    deliver_in(world, events, [0, 1, 3, 2])  # opened, closed, merged, the reopening between them late
    [(text, _)] = world.chat.view().values()
    assert text.endswith("\n✅ merged") and "✅ closed" not in text


def test_a_shown_opening_whose_draft_failed_is_drafted_when_it_comes_again_after_its_closing(world):
    deliver_in(world, closed_then_reopened()[:2], [0, 1, 0], faults={0: ("github", r"/dispatches")})
    assert len(world.chat.view()) == 1 and len(world.hub.dispatches) == 1


def test_a_closing_and_a_reopening_in_the_same_second_delivered_in_order_end_open(world):
    events = [thing_payload("issue", "opened", T0, 0, "open"), thing_payload("issue", "closed", T0 + 60, 0, "closed"),
              thing_payload("issue", "reopened", T0 + 60, 0, "open")]
    deliver_in(world, events, [0, 1, 2])
    [(text, _)] = world.chat.view().values()
    assert "✅" not in text


def test_an_edit_in_the_openings_second_delivered_first_is_what_the_opening_shows(world):
    deliver_in(world, [thing_payload("issue", "opened", T0, 0, "open"), thing_payload("issue", "edited", T0, 1, "open")],
               [1, 0])
    assert any("Title v1" in text for text, _ in world.chat.view().values())
