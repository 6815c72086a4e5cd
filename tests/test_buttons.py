"""The Telegram endpoint's logic (docs/deploy.md, "Telegram's webhook by hand"): `pager.buttons.handle_update`,
driven through `pager.webhook.handle_telegram` with the world (the fake chat and GitHub behind the clients'
session).

Who may press, every press answered at once, a failed action answered with its reason (200, so the
person presses again), a retried update acting once, and a failure at every external call of a
press of 🛠 Start fix.
"""

from __future__ import annotations

import pytest

from pager.buttons import handle_update
from pager.sweep.run import check
from pager_world.cases import alarmed, pressing
from pager_world.matrix import Scenario, failure_matrix
from pager_world.world import REPO


def fix_data(h) -> tuple[str, int]:
    message_id = max(h.chat.messages)
    return h.chat.button_data(message_id, "🛠"), message_id


# -- who may press -------------------------------------------------------------------------------------


def test_an_update_that_is_not_a_press_is_ignored(world):
    assert world.update({"update_id": 1, "edited_message": {"text": "hi"}}) == (200, {"outcome": "ignored: not a button press or a command"})
    assert world.update({"update_id": 2, "message": {"message_id": 3, "chat": {"id": -1001}, "text": "hi"}}) == \
        (200, {"outcome": "ignored: not a command"})
    assert world.chat.answers == []


def test_a_user_who_is_not_allowed_gets_not_allowed_and_nothing_happens(world):
    alarmed(world)
    data, message_id = fix_data(world)
    before = world.store.dump()
    status, answer = world.update(world.press_update(data, message_id=message_id, user=7, callback_id="x"))
    assert (status, answer["outcome"]) == (200, "not allowed")
    assert world.chat.answers == [("x", "not allowed")]
    assert world.hub.dispatches == [] and world.store.dump() == before


def test_an_allowed_user_in_another_chat_is_not_allowed_either(world):
    alarmed(world)
    data, message_id = fix_data(world)
    status, answer = world.update(world.press_update(data, message_id=message_id, chat="-1002"))
    assert answer["outcome"] == "not allowed" and world.hub.dispatches == []


# -- Start fix ----------------------------------------------------------------------------------------------


def test_start_fix_is_answered_at_once_and_dispatches_pager_fix(world):
    alarmed(world)
    status, answer = world.press("🛠", callback_id="p1")
    assert (status, answer["outcome"]) == (200, "🛠 fix started")
    assert world.chat.answers == [("p1", "🛠 fix started")]
    [dispatch] = world.hub.dispatches
    assert dispatch["event_type"] == "pager-fix" and dispatch["client_payload"]["repository"] == REPO


def test_a_retried_update_acts_once_and_answers_the_same(world):
    alarmed(world)
    data, message_id = fix_data(world)
    update = world.press_update(data, message_id=message_id, callback_id="p1")
    world.update(update)
    status, answer = world.update(update)
    assert (status, answer["outcome"]) == (200, "🛠 fix started")
    assert len(world.hub.dispatches) == 1
    assert world.chat.answers == [("p1", "🛠 fix started"), ("p1", "🛠 fix started")]


@pytest.mark.parametrize("fault", [("telegram", "^editMessageText$", "telegram-5xx"),
                                   ("telegram", "^editMessageText$", "telegram-no-answer"),
                                   ("store", r"^load mute \[call\]$", "store")])
def test_a_fix_github_started_is_answered_so_when_the_message_could_not_show_it_and_the_check_catches_up(world, fault):
    alarmed(world)
    service, pattern, kind = fault
    world.faults.fail(service, pattern, kind=kind)  # the message's render after the dispatch fails
    world.press("🛠", callback_id="p1")
    assert [d["event_type"] for d in world.hub.dispatches] == ["pager-fix"]
    assert world.chat.answers == [("p1", "🛠 fix started (the message shows it in a minute)")]
    world.advance(1)
    check(world.services, now=world.now, run_id="check", seconds=60)
    [(text, buttons)] = world.chat.view().values()
    assert "🛠 fix started" in text and not any("🛠" in label for row in buttons or () for label in row)


def test_a_second_press_says_the_fix_was_started_and_dispatches_nothing(world):
    alarmed(world)
    data, message_id = fix_data(world)
    world.update(world.press_update(data, message_id=message_id, callback_id="p1"))
    # The message no longer offers 🛠; a press on it a moment before it changed still arrives.
    assert all("🛠" not in label for row in world.chat.messages[message_id].buttons for label in row)
    status, answer = world.update(world.press_update(data, message_id=message_id, callback_id="p2"))
    assert answer["outcome"] == "🛠 a fix was started by Maintainer already"
    assert len(world.hub.dispatches) == 1


def test_a_failed_action_is_answered_with_its_reason_and_pressing_again_acts(world):
    alarmed(world)
    world.faults.fail_next("github-5xx")
    status, answer = world.press("🛠")
    assert status == 200 and answer["outcome"].startswith("failed: ")
    text = world.chat.answers[-1][1]
    assert text == "⚠️ GitHub is not answering: try again in a minute"
    assert world.pending_claims() == []
    assert world.press("🛠")[1]["outcome"] == "🛠 fix started"
    assert len(world.hub.dispatches) == 1


def test_a_press_whose_answer_cannot_reach_telegram_answers_500_and_its_retry_acts_once(world):
    alarmed(world)
    data, message_id = fix_data(world)
    update = world.press_update(data, message_id=message_id, callback_id="p1")
    world.faults.fail_next("telegram-5xx", "answerCallbackQuery")
    assert world.update(update)[0] == 500  # Telegram retries a non-2xx answer
    status, answer = world.update(update)
    assert (status, answer["outcome"]) == (200, "🛠 fix started")
    assert len(world.hub.dispatches) == 1
    assert world.chat.answers == [("p1", "🛠 fix started")]


def test_a_button_of_a_repository_no_longer_known_says_so(world):
    status, answer = world.update(world.press_update("fix:0000000000000000", message_id=1))
    assert answer["outcome"] == "this alarm is no longer known"
    status, answer = world.update(world.press_update("merge:0000000000000000:2", message_id=1))
    assert answer["outcome"] == "this release is no longer known"
    status, answer = world.update(world.press_update("what", message_id=1))
    assert answer["outcome"] == "this button is not known"


def test_a_retry_of_a_press_still_acting_is_answered_and_does_not_act(world):
    alarmed(world)
    data, message_id = fix_data(world)
    update = world.press_update(data, message_id=message_id, callback_id="p1")
    # Both arrive together: each reaches the table before either may call GitHub or Telegram.
    outcomes = world.concurrently(lambda: world.update(update), lambda: world.update(update))
    assert len(world.hub.dispatches) == 1
    assert sorted(answer["outcome"] for _, answer in outcomes) == ["busy: the same press is being acted on", "🛠 fix started"]
    assert all(status == 200 for status, _ in outcomes)
    assert sorted(text for _, text in world.chat.answers) == ["⏳ still working on it", "🛠 fix started"]  # each answered


def test_handle_update_can_be_called_directly_with_an_update(world):
    alarmed(world)
    data, message_id = fix_data(world)
    assert handle_update(world.press_update(data, message_id=message_id), world.services) == "🛠 fix started"


# -- failures at every call ---------------------------------------------------------------------------------


def test_a_failure_at_any_call_of_a_start_fix_press_ends_in_one_dispatch(make_world):
    scenario = Scenario("start fix pressed", alarmed, *pressing("🛠"), presses=False)
    report = failure_matrix(make_world, scenario)
    assert report.failed


def test_in_a_channel_given_as_its_name_the_allowed_users_presses_work(make_world):
    world = make_world(telegram_chat_id="@fleetalarms")
    world.chat.add_chat("-1009999", "channel", username="FleetAlarms")  # the bot posts in the channel
    alarmed(world)
    data, message_id = fix_data(world)
    update = world.press_update(data, message_id=message_id, chat="-1009999")
    update["callback_query"]["message"]["chat"].update(type="channel", username="FleetAlarms")
    assert world.update(update)[1]["outcome"] == "🛠 fix started"
    other = world.press_update(data, message_id=message_id, chat="-1008888")
    other["callback_query"]["message"]["chat"].update(type="channel", username="elsewhere")
    assert world.update(other)[1]["outcome"] == "not allowed"


def test_a_command_to_the_bot_by_name_while_telegram_refuses_the_token_is_answered_and_logged_as_an_error(
        world, log_lines):
    # getMe (the bot's name, asked for a command addressed to it) refused for good: a revoked token. The
    # update is answered 200 (Telegram's retries would be refused the same way), never a crash out of the handler.
    world.chat.token = "654321:another-bot"
    status, answer = world.command("/status@pager_test_bot")
    assert status == 200 and answer["outcome"].startswith("refused: telegram getMe: Telegram refused (401)")
    [line] = [line for line in log_lines() if line.get("message") == "telegram update"]
    assert line["level"] == "ERROR" and line["outcome"] == answer["outcome"]


def test_a_press_github_refuses_for_good_is_said_to_the_presser_and_logged_as_an_error(world, log_lines):
    message_id = alarmed(world)
    world.hub.fail(r"POST /repos/[^/]+/[^/]+/dispatches", 404, count=5)  # the app no longer reaches the control repository
    status, answer = world.press("🛠", message_id)
    assert status == 200 and answer["outcome"].startswith("refused: ")
    assert world.chat.answers[-1][1].startswith("⚠️ GitHub refused")
    [line] = [line for line in log_lines() if line.get("message") == "telegram update"]
    assert line["level"] == "ERROR"
