"""The Telegram endpoint's logic (SPEC §6): `pager.buttons.handle_update`, driven through
`pager.webhook.handle_telegram` with the harness (fake chat and GitHub behind `responses`).

Who may press, every press answered at once, a failed action answered with its reason (200, so the
person presses again), a retried update acting once, and a failure at every external call of a
press of 🛠 Start fix.
"""

from __future__ import annotations

import threading
import time

import pytest

from pager.buttons import handle_update
from test_signals_harness import ALLOWED_USER, CHAT_ID, REPO, Scenario, failure_matrix, harness, make_harness, payload  # noqa: F401
from test_signals_release import pressing


def failing_run(**changes):
    return payload(
        "workflow_run",
        "completed",
        **{
            "workflow_run.conclusion": "failure",
            "workflow_run.head_branch": "master",
            "workflow_run.head_repository.full_name": REPO,
            **changes,
        },
    )


def alarmed(h):
    h.deliver("workflow_run", failing_run())


def fix_data(h) -> tuple[str, int]:
    message_id = max(h.chat.messages)
    return h.chat.button_data(message_id, "🛠"), message_id


# -- who may press -------------------------------------------------------------------------------------


def test_an_update_that_is_not_a_press_is_ignored(harness):
    assert harness.update({"update_id": 1, "message": {"text": "hi"}}) == (200, {"outcome": "ignored: not a button press"})
    assert harness.chat.answers == []


def test_a_user_who_is_not_allowed_gets_not_allowed_and_nothing_happens(harness):
    alarmed(harness)
    data, message_id = fix_data(harness)
    before = harness.store.dump()
    status, answer = harness.update(harness.press_update(data, message_id=message_id, user=7, callback_id="x"))
    assert (status, answer["outcome"]) == (200, "not allowed")
    assert harness.chat.answers == [("x", "not allowed")]
    assert harness.hub.dispatches == [] and harness.store.dump() == before


def test_an_allowed_user_in_another_chat_is_not_allowed_either(harness):
    alarmed(harness)
    data, message_id = fix_data(harness)
    status, answer = harness.update(harness.press_update(data, message_id=message_id, chat="-1002"))
    assert answer["outcome"] == "not allowed" and harness.hub.dispatches == []


# -- Start fix ----------------------------------------------------------------------------------------------


def test_start_fix_is_answered_at_once_and_dispatches_pager_fix(harness):
    alarmed(harness)
    status, answer = harness.press("🛠", callback_id="p1")
    assert (status, answer["outcome"]) == (200, "🛠 fix started")
    assert harness.chat.answers == [("p1", "🛠 fix started")]
    [dispatch] = harness.hub.dispatches
    assert dispatch["event_type"] == "pager-fix" and dispatch["client_payload"]["repository"] == REPO


def test_a_retried_update_acts_once_and_answers_the_same(harness):
    alarmed(harness)
    data, message_id = fix_data(harness)
    update = harness.press_update(data, message_id=message_id, callback_id="p1")
    harness.update(update)
    status, answer = harness.update(update)
    assert (status, answer["outcome"]) == (200, "🛠 fix started")
    assert len(harness.hub.dispatches) == 1
    assert harness.chat.answers == [("p1", "🛠 fix started"), ("p1", "🛠 fix started")]


def test_a_second_press_says_the_fix_was_started_and_dispatches_nothing(harness):
    alarmed(harness)
    harness.press("🛠")
    assert harness.press("🛠")[1]["outcome"] == "🛠 a fix was already started"
    assert len(harness.hub.dispatches) == 1


def test_a_failed_action_is_answered_with_its_reason_and_pressing_again_acts(harness):
    alarmed(harness)
    harness.calls.arm_next("github-5xx")
    status, answer = harness.press("🛠")
    assert status == 200 and answer["outcome"].startswith("failed: ")
    text = harness.chat.answers[-1][1]
    assert text.startswith("⚠️ failed for now (github") and text.endswith("press again")
    assert harness.pending_claims() == []
    assert harness.press("🛠")[1]["outcome"] == "🛠 fix started"
    assert len(harness.hub.dispatches) == 1


def test_a_press_whose_answer_cannot_reach_telegram_answers_500_and_its_retry_acts_once(harness):
    alarmed(harness)
    data, message_id = fix_data(harness)
    update = harness.press_update(data, message_id=message_id, callback_id="p1")
    harness.calls.arm_next("telegram-5xx", "answerCallbackQuery")
    assert harness.update(update)[0] == 500  # Telegram retries a non-2xx answer
    status, answer = harness.update(update)
    assert (status, answer["outcome"]) == (200, "🛠 fix started")
    assert len(harness.hub.dispatches) == 1
    assert harness.chat.answers == [("p1", "🛠 fix started")]


def test_a_button_of_a_repository_no_longer_known_says_so(harness):
    status, answer = harness.update(harness.press_update("fix:0000000000000000", message_id=1))
    assert answer["outcome"] == "this alarm is no longer known"
    status, answer = harness.update(harness.press_update("merge:0000000000000000:2", message_id=1))
    assert answer["outcome"] == "this release is no longer known"
    status, answer = harness.update(harness.press_update("what", message_id=1))
    assert answer["outcome"] == "this button is not known"


def test_a_retry_of_a_press_still_acting_is_answered_and_does_not_act(harness):
    alarmed(harness)
    data, message_id = fix_data(harness)
    slow = harness.hub.handle

    def slow_handle(method, path, body):
        time.sleep(0.3)
        return slow(method, path, body)

    harness.hub.handle = slow_handle
    update = harness.press_update(data, message_id=message_id, callback_id="p1")
    start = threading.Barrier(2)
    outcomes = []

    def send():
        start.wait()
        outcomes.append(harness.update(update))

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(harness.hub.dispatches) == 1
    assert {answer["outcome"] for _, answer in outcomes} <= {"busy: the same press is being acted on", "🛠 fix started"}
    assert "🛠 fix started" in {answer["outcome"] for _, answer in outcomes}
    assert all(status == 200 for status, _ in outcomes)
    assert len(harness.chat.answers) == 2  # each press answered at once


def test_handle_update_can_be_called_directly_with_an_update(harness):
    alarmed(harness)
    data, message_id = fix_data(harness)
    assert handle_update(harness.press_update(data, message_id=message_id), harness.services) == "🛠 fix started"


# -- failures at every call ---------------------------------------------------------------------------------


def test_a_failure_at_any_call_of_a_start_fix_press_ends_in_one_dispatch(make_harness):
    scenario = Scenario("start fix pressed", alarmed, *pressing("🛠"), presses=False)
    report = failure_matrix(make_harness, scenario)
    assert report.failed
