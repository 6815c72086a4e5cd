"""Every signal applied twice (the decision: "every signal must leave the same state when it comes
twice"), on the in-memory store and on DynamoStore over moto; and DynamoDB throttling at each call.

Each case brings the state a delivery meets (`setup`) and then applies the same delivery, or press,
or sweep change twice: the table, the chat, the dispatches and merges, and every Telegram and GitHub
side effect (edits included) after the second are exactly those after the first. A test fails when
a registered event and action has no case here, so a new kind of signal takes its case.

The DynamoDB part drives the same world with `DynamoStore` on a boto3 client (moto) wrapped so that
a chosen call raises botocore's `ThrottlingException`, as DynamoDB does once boto's retries are
spent: the delivery answers 500, and delivering it again ends exactly as an undisturbed delivery.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from pager.dynamo import create_table
from pager.signals import SIGNALS
from pager.signals.alarm import render_now, update_alarm
from pager_world.cases import (
    HEAD,
    NEWER,
    alarmed,
    alert,
    check_run,
    delivery_entry,
    fix_run,
    issue_closed,
    issue_opened,
    live_alert,
    live_pull,
    merged,
    outside,
    pressing,
    published,
    pull,
    pull_review_approved,
    ready,
    run,
    suite,
    suite_passed,
    unstable,
)
from pager_world.faults import Faults
from pager_world.matrix import Scenario, failure_matrix
from pager_world.payloads import payload
from pager_world.store import DynamoDump, FaultyDynamoClient
from pager_world.world import ALLOWED_USER, CHAT_ID, CONTROL_ALARM, EXAMPLE_ALARM, REPO, World

# -- the cases -------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    covers: set[tuple[str, str]]  # the (event, action) pairs this case applies
    setup: Callable[[World], Any]
    apply: Callable[[World], Any]


def deliver(event: str, body: dict) -> Callable[[World], Any]:
    def apply(h: World) -> None:
        status, answer = h.deliver(event, body)
        assert status == 200, answer

    return apply


def press(label: str) -> Callable[[World], Any]:
    """A press; applied again, Telegram's retry of the same update (same callback id)."""
    updates: dict[int, dict] = {}

    def apply(h: World) -> None:
        if id(h) not in updates:
            message_id = max(h.chat.messages)
            updates[id(h)] = h.press_update(h.chat.button_data(message_id, label), message_id=message_id)
        status, answer = h.update(updates[id(h)])
        assert status == 200 and not answer["outcome"].startswith("failed"), answer

    return apply


def nothing(h: World) -> None:
    pass


def command(text: str) -> Callable[[World], Any]:
    """A command typed in the chat; applied again, Telegram's retry of the same update."""
    updates: dict[int, dict] = {}

    def apply(h: World) -> None:
        if id(h) not in updates:
            updates[id(h)] = h.chat.command_update(text, chat_id=CHAT_ID, user={"id": ALLOWED_USER, "is_bot": False,
                                                                                 "first_name": "Maintainer"})
        status, answer = h.update(updates[id(h)])
        assert status == 200, answer

    return apply


def edited(event: str, who: str) -> dict:
    """Its author from outside edits it (a later `updated_at` than the example's opening; GitHub's examples
    have no pull_request.edited: its opened one, as edited)."""
    fixture = "opened" if event == "pull_request" else "edited"
    return outside(event, fixture, who=who, **{"action": "edited", f"{who}.updated_at": "2026-12-01T12:00:00Z",
                                               f"{who}.body": "Edited: more detail"})




def opened_then(event: str, who: str, fixture_action: str = "opened"):
    return lambda h: h.deliver(event, outside(event, fixture_action, who=who))


CASES = [
    # contributions
    Case("issue opened", {("issues", "opened")}, nothing, deliver("issues", issue_opened())),
    Case("issue closed", {("issues", "closed")}, lambda h: h.deliver("issues", issue_opened()), deliver("issues", issue_closed())),
    Case("issue closed before shown", {("issues", "closed")}, nothing, deliver("issues", issue_closed())),
    Case("issue reopened", {("issues", "reopened")}, lambda h: (h.deliver("issues", issue_opened()), h.deliver("issues", issue_closed())),
         deliver("issues", outside("issues", "reopened"))),
    Case("issue reopened, closed before shown", {("issues", "reopened")}, lambda h: h.deliver("issues", issue_closed()),
         deliver("issues", outside("issues", "reopened"))),
    Case("pull request opened", {("pull_request", "opened")}, nothing,
         deliver("pull_request", outside("pull_request", "opened", who="pull_request"))),
    Case("pull request closed", {("pull_request", "closed")}, opened_then("pull_request", "pull_request"),
         deliver("pull_request", outside("pull_request", "closed", who="pull_request", **{"pull_request.merged": True}))),
    Case("discussion created", {("discussion", "created")}, nothing,
         deliver("discussion", outside("discussion", "created", who="discussion"))),
    Case("discussion answered", {("discussion", "answered")}, lambda h: h.deliver("discussion", outside("discussion", "created", who="discussion")),
         deliver("discussion", outside("discussion", "answered", who="discussion"))),
    Case("discussion no longer answered", {("discussion", "unanswered")},
         lambda h: (h.deliver("discussion", outside("discussion", "created", who="discussion")),
                    h.deliver("discussion", outside("discussion", "answered", who="discussion"))),
         deliver("discussion", outside("discussion", "unanswered", who="discussion"))),
    Case("discussion created late", {("discussion", "created")}, lambda h: h.deliver("discussion", outside("discussion", "answered", who="discussion")),
         deliver("discussion", outside("discussion", "created", who="discussion"))),
    Case("issue comment", {("issue_comment", "created")}, nothing,
         deliver("issue_comment", outside("issue_comment", "created", who="comment"))),
    Case("discussion comment", {("discussion_comment", "created")}, nothing,
         deliver("discussion_comment", outside("discussion_comment", "created", who="comment"))),
    Case("review comment", {("pull_request_review_comment", "created")}, nothing,
         deliver("pull_request_review_comment", outside("pull_request_review_comment", "created", who="comment"))),
    Case("issue edited by its author", {("issues", "edited")}, lambda h: h.deliver("issues", issue_opened()),
         deliver("issues", edited("issues", "issue"))),
    Case("discussion edited by its author", {("discussion", "edited")},
         lambda h: h.deliver("discussion", outside("discussion", "created", who="discussion")),
         deliver("discussion", edited("discussion", "discussion"))),
    Case("pull request edited by its author", {("pull_request", "edited")}, opened_then("pull_request", "pull_request"),
         deliver("pull_request", edited("pull_request", "pull_request"))),
    Case("review", {("pull_request_review", "submitted")}, nothing,
         deliver("pull_request_review", outside("pull_request_review", "submitted", who="review", **{"review.body": "Looks off."}))),
    # the alarm
    Case("run failed", {("workflow_run", "completed")}, nothing, deliver("workflow_run", run("failure"))),
    Case("run passed", {("workflow_run", "completed")}, alarmed, deliver("workflow_run", run("success", attempt=2))),
    Case("stale run failure", {("workflow_run", "completed")},
         lambda h: (alarmed(h), h.deliver("workflow_run", run("success", attempt=2))), deliver("workflow_run", run("failure"))),
    Case("suite failed", {("check_suite", "completed")}, nothing, deliver("check_suite", suite("failure"))),
    Case("stale suite failure", {("check_suite", "completed")},
         lambda h: h.deliver("check_suite", suite("success", updated_at="2019-05-15T16:00:00Z")),
         deliver("check_suite", suite("failure"))),
    Case("alert created", {("code_scanning_alert", "created")}, nothing,
         deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"}))),
    Case("alert appeared", {("code_scanning_alert", "appeared_in_branch")}, nothing,
         deliver("code_scanning_alert", alert("appeared_in_branch", "created", **{"ref": "refs/heads/master"}))),
    Case("alert reopened", {("code_scanning_alert", "reopened")}, nothing,
         deliver("code_scanning_alert", alert("reopened", **{"alert.number": 10}))),
    Case("alert reopened by a person", {("code_scanning_alert", "reopened_by_user")}, nothing,
         deliver("code_scanning_alert", alert("reopened_by_user", "reopened", **{"ref": "", "alert.number": 10}))),
    Case("alert reopened late, fixed since", {("code_scanning_alert", "reopened")},
         lambda h: h.hub.alerts.update({("Codertocat/Hello-World", 10): {"number": 10, "state": "fixed"}}),
         deliver("code_scanning_alert", alert("reopened", **{"alert.number": 10}))),
    Case("alert fixed", {("code_scanning_alert", "fixed")},
         lambda h: h.deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"})),
         deliver("code_scanning_alert", alert("fixed", **{"ref": "refs/heads/master", "alert.fixed_at": "2021-02-12T00:00:00Z"}))),
    Case("alert created late after its fix, GitHub not showing the alert", {("code_scanning_alert", "created")},
         lambda h: (h.deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"})),
                    h.deliver("code_scanning_alert", alert("fixed", **{"ref": "refs/heads/master"}))),
         deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"}))),
    Case("alert created, ordered by GitHub's alert", {("code_scanning_alert", "created")},
         lambda h: live_alert(h, "open", "2026-12-01T10:00:00Z"),
         deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"}))),
    Case("alert fixed, ordered by GitHub's alert", {("code_scanning_alert", "fixed")},
         lambda h: (live_alert(h, "open", "2026-12-01T10:00:00Z"),
                    h.deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"})),
                    live_alert(h, "fixed", "2026-12-01T10:05:00Z")),
         deliver("code_scanning_alert", alert("fixed", **{"ref": "refs/heads/master"}))),
    Case("alert dismissed", {("code_scanning_alert", "closed_by_user")},
         lambda h: h.deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"})),
         deliver("code_scanning_alert", alert("closed_by_user", "closed-by-user", **{"alert.number": 10, "alert.dismissed_at": "2021-02-12T00:00:00Z"}))),
    Case("sweep entry", set(), nothing,
         lambda h: update_alarm(h.services, CONTROL_ALARM, opened={"delivery:g1": delivery_entry("g1")}, closed=[])),
    Case("start fix", set(), alarmed, press("🛠")),
    Case("fix run started", {("workflow_run", "requested")}, lambda h: (alarmed(h), h.press("🛠")),
         deliver("workflow_run", fix_run())),
    Case("fix run started before the fix", {("workflow_run", "requested")}, lambda h: (alarmed(h), h.press("🛠")),
         deliver("workflow_run", fix_run(created_at="2027-01-15T07:59:00Z"))),
    Case("another run started", {("workflow_run", "requested")}, alarmed, deliver("workflow_run", payload("workflow_run", "requested"))),
    Case("mute pressed", set(), alarmed, press("🔕")),
    Case("a command", set(), nothing, command("/mute Codertocat/Hello-World 2h")),
    Case("alarm come due", set(), lambda h: (alarmed(h), h.advance(16)),
         lambda h: render_now(h.services, EXAMPLE_ALARM)),
    # releases
    Case("release opened", {("pull_request", "opened")}, nothing, deliver("pull_request", pull("opened"))),
    Case("release reopened", {("pull_request", "reopened")}, nothing, deliver("pull_request", pull("reopened"))),
    Case("release edited", {("pull_request", "edited")}, ready,
         deliver("pull_request", pull("edited", updated_at="2026-12-01T11:00:00Z", **{"pull_request.title": "release 1.3.0"}))),
    Case("release synchronized", {("pull_request", "synchronize")}, ready,
         deliver("pull_request", pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z"))),
    Case("stale release synchronize", {("pull_request", "synchronize")},
         lambda h: (ready(h), h.deliver("pull_request", pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z"))),
         deliver("pull_request", pull("synchronize", updated_at="2026-12-01T10:30:00Z"))),
    Case("release approved", {("pull_request_review", "submitted")}, lambda h: (live_pull(h), h.deliver("pull_request", pull("opened"))),
         deliver("pull_request_review", pull_review_approved())),
    Case("release suite passed", {("check_suite", "completed")}, lambda h: (live_pull(h), h.deliver("pull_request", pull("opened"))),
         deliver("check_suite", suite_passed())),
    Case("release suite passed, unstable", {("check_suite", "completed")},
         lambda h: (unstable(h, check_run("lint", "failure"), check_run("e2e", status="in_progress", number=2)),
                    h.deliver("pull_request", pull("opened"))),
         deliver("check_suite", suite_passed())),
    Case("release suite passed, blocked", {("check_suite", "completed")},
         lambda h: (live_pull(h, mergeable_state="blocked"), h.deliver("pull_request", pull("opened"))),
         deliver("check_suite", suite_passed())),
    Case("release suite passed, a check finished since Merge was offered", {("check_suite", "completed")},
         lambda h: (unstable(h, check_run("lint", "failure"), check_run("e2e", status="in_progress", number=2)),
                    h.deliver("pull_request", pull("opened")), h.deliver("check_suite", suite_passed()),
                    h.hub.check_runs[(REPO, HEAD)].pop()),
         deliver("check_suite", suite_passed())),
    Case("release approved, dirty", {("pull_request_review", "submitted")},
         lambda h: (live_pull(h, mergeable_state="dirty"), h.deliver("pull_request", pull("opened"))),
         deliver("pull_request_review", pull_review_approved())),
    Case("release converted to a draft", {("pull_request", "converted_to_draft")},
         lambda h: (ready(h), live_pull(h, mergeable_state="draft")), deliver("pull_request", pull("converted_to_draft"))),
    Case("release ready for review", {("pull_request", "ready_for_review")},
         lambda h: (live_pull(h, mergeable_state="draft"), h.deliver("pull_request", pull("opened")),
                    h.deliver("check_suite", suite_passed()), live_pull(h)),
         deliver("pull_request", pull("ready_for_review"))),
    Case("release merged", {("pull_request", "closed")}, ready, deliver("pull_request", merged())),
    Case("release published", {("release", "published")}, lambda h: (ready(h), h.deliver("pull_request", merged())),
         deliver("release", published())),
    Case("merge pressed", set(), ready, press("🔀")),
    Case("merge pressed, behind a base that must be up to date", set(),
         lambda h: (live_pull(h, mergeable_state="behind"), h.hub.up_to_date_required.add(REPO),
                    h.deliver("pull_request", pull("opened")), h.deliver("check_suite", suite_passed())),
         press("🔀")),
]


def test_every_registered_event_and_action_has_a_case_applied_twice():
    registered = set(SIGNALS)
    covered = set().union(*(case.covers for case in CASES))
    assert registered - covered == set(), "give each new kind of signal its case in CASES"


def _twice(h: World, case: Case) -> None:
    case.setup(h)
    case.apply(h)
    once = h.snapshot(), h.effects()
    assert not h.pending_claims()
    case.apply(h)
    assert (h.snapshot(), h.effects()) == once, f"{case.name}: applied twice differs from once"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_signal_applied_twice_leaves_the_same_state_and_side_effects_as_once(make_world, case):
    _twice(make_world(), case)


# -- DynamoDB over moto --------------------------------------------------------------------------------


@pytest.fixture
def dynamo_world(make_world, monkeypatch):
    """A factory of worlds whose store is DynamoStore on moto, each with a table of its own."""
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    names = itertools.count(1)
    with mock_aws():
        raw = boto3.client("dynamodb", region_name="us-east-1")

        def store_for(faults: Faults) -> DynamoDump:
            table = f"pager-test-{next(names)}"
            create_table(raw, table)
            return DynamoDump(FaultyDynamoClient(raw, faults), raw, table)

        yield lambda **overrides: make_world(store=store_for, **overrides)


@pytest.mark.parametrize("case", [c for c in CASES if c.name in {"issue opened", "run failed", "fix run started", "release suite passed",
                                                                 "release suite passed, unstable", "merge pressed"}],
                         ids=lambda c: c.name)
def test_on_dynamodb_a_signal_applied_twice_leaves_the_same_state_and_side_effects_as_once(dynamo_world, case):
    _twice(dynamo_world(), case)


def _status(event: str, body: dict) -> Callable[[World], int]:
    return lambda h: h.deliver(event, body)[0]


@pytest.mark.parametrize(
    "scenario",
    [
        Scenario("issue opened", nothing, _status("issues", issue_opened())),
        Scenario("run failed", nothing, _status("workflow_run", run("failure"))),
        Scenario("release merged", ready, _status("pull_request", merged())),
        Scenario("merge pressed", ready, *pressing("🔀"), presses=False),
    ],
    ids=lambda s: s.name,
)
def test_on_dynamodb_throttling_at_any_call_fails_the_step_and_doing_it_again_ends_as_undisturbed(dynamo_world, scenario):
    report = failure_matrix(dynamo_world, scenario)
    assert report.failed
    assert all(service == "store" for _, _, (service, _) in report.absorbed)
