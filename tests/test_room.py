"""The room commands take in a chat (pager.room): a crowd of strangers, or the maintainer typing fast, never
fills the chat or takes Telegram's room from a page. Through functions/webhook/app.py:lambda_handler, in the
fake world (whose Telegram keeps the Bot FAQ's flood limits on the world's clock); and the pure rule beneath.
"""

from __future__ import annotations

import pytest
from support import invoke_webhook

from pager import room
from pager_world.cases import issue_opened
from pager_world.events import telegram_event
from pager_world.world import ALLOWED_USER, CHAT_ID, TELEGRAM_SECRET


def typed(world, text: str, user: int, chat: str = CHAT_ID) -> tuple[int, dict]:
    """Someone types a command in a chat the bot is in: the webhook function's answer to Telegram's update."""
    person = {"id": user, "is_bot": False, "first_name": "Maintainer" if user == ALLOWED_USER else "Someone"}
    update = world.chat.command_update(text, chat_id=chat, user=person)
    return invoke_webhook(world, telegram_event(update, secret=TELEGRAM_SECRET))


def said(world) -> list[str]:
    """What the bot said in the chat, oldest first."""
    return [m.text for m in world.chat.chat() if m.author is None]


def page_is_shown_at_once(world) -> None:
    """A real page, right after: shown, with its sound, never waiting for Telegram's room."""
    waited = len(world.sleeps)
    assert world.deliver("issues", issue_opened())[0] == 200
    assert said(world)[-1].startswith("💬 alice opened issue") and world.chat.chat()[-1].notified
    assert world.sleeps[waited:] == []


# -- through the function -------------------------------------------------------------------------------------


def test_two_hundred_strangers_three_seconds_apart_are_told_not_allowed_once_a_minute(world):
    answers = []
    for stranger in range(200):
        answers.append(typed(world, "/status", user=1000 + stranger))
        world.now += 3
    assert {status for status, _ in answers} == {200}
    assert said(world) == ["not allowed"] * 10  # ten minutes: once in each
    assert sum(body["outcome"] == "not allowed" for _, body in answers) == 10
    assert world.chat.refused == [] and len(world.store.dump()) == 1  # the chat's room, one small item
    assert len(world.store.dump()["command#room#-1001"]["sent"]) == 1


def test_forty_strangers_in_one_second_are_told_once_and_the_page_after_them_is_shown_at_once(world):
    answers = [typed(world, "/help", user=2000 + stranger) for stranger in range(40)]
    assert {status for status, _ in answers} == {200}
    assert said(world) == ["not allowed"]
    page_is_shown_at_once(world)
    assert world.chat.refused == []


def test_a_hundred_status_commands_in_one_second_are_answered_once_and_the_page_after_them_is_shown_at_once(world):
    answers = [typed(world, "/status", user=ALLOWED_USER) for _ in range(100)]
    assert {status for status, _ in answers} == {200}  # the rest dropped without a word, never a 500
    outcomes = [body["outcome"] for _, body in answers]
    assert outcomes.count("answered /status") == 1
    assert set(outcomes) - {"answered /status"} == {"dropped: a command answered in this chat within 3 s"}
    assert [text.startswith("📋 pager at ") for text in said(world)] == [True]
    page_is_shown_at_once(world)
    assert world.chat.refused == []


def test_the_maintainer_is_answered_a_few_times_a_minute_one_at_a_time(world):
    outcomes = []
    for _ in range(20):  # a command every four seconds for eighty seconds
        outcomes.append(typed(world, "/help", user=ALLOWED_USER)[1]["outcome"])
        world.now += 4
    answered = [i * 4 for i, outcome in enumerate(outcomes) if outcome == "answered /help"]
    assert answered == [0, 4, 8, 12, 60, 64, 68, 72]  # four in any minute
    assert all(outcome.startswith("dropped: 4 commands answered in this chat within the minute")
               for outcome in outcomes if outcome != "answered /help")


def test_a_stranger_takes_at_most_one_of_the_minutes_answers_from_the_maintainer(world):
    assert typed(world, "/status", user=7)[1]["outcome"] == "not allowed"
    for _ in range(5):
        world.now += 4
        typed(world, "/status", user=7)
        typed(world, "/help", user=ALLOWED_USER)
    assert said(world)[0] == "not allowed" and said(world).count("not allowed") == 1
    assert len(said(world)) == room.MESSAGES


def test_presses_are_always_answered_whatever_the_commands_took(world):
    for stranger in range(10):
        typed(world, "/status", user=3000 + stranger)
    typed(world, "/status", user=ALLOWED_USER)
    world.deliver("issues", issue_opened())
    page = world.chat.chat()[-1].message_id
    for stranger in range(10):  # answerCallbackQuery is no message in the chat: each press is answered
        status, body = world.update(world.press_update("mute:c:1:i1", message_id=page, user=3000 + stranger))
        assert (status, body["outcome"]) == (200, "not allowed")
    assert len(world.chat.answers) == 10


def test_a_stranger_whose_not_allowed_meets_telegrams_flood_limit_is_told_nothing_and_nothing_fails(world):
    world.chat.fail("sendMessage", 429, body={"ok": False, "error_code": 429,
                                              "description": "Too Many Requests: retry after 2", "parameters": {"retry_after": 2}})
    status, body = typed(world, "/status", user=7)
    assert status == 200 and body["outcome"].startswith("not allowed (not said: telegram sendMessage: rate limited")
    assert world.sleeps == [] and said(world) == []


def test_a_command_telegram_sends_again_takes_no_more_room(world):
    person = {"id": ALLOWED_USER, "is_bot": False, "first_name": "Maintainer"}
    update = world.chat.command_update("/status", chat_id=CHAT_ID, user=person)
    world.chat.fail("sendMessage", 502)  # its answer failed: a 500, and Telegram sends the update again
    assert invoke_webhook(world, telegram_event(update, secret=TELEGRAM_SECRET))[0] == 500
    world.now += 1
    assert invoke_webhook(world, telegram_event(update, secret=TELEGRAM_SECRET)) == (200, {"outcome": "answered /status"})
    assert len(world.store.dump()["command#room#-1001"]["sent"]) == 1


# -- the rule, pure ---------------------------------------------------------------------------------------------


def test_a_chat_with_no_commands_has_room():
    assert room.no_room({}, 1000.0) == "" and room.no_room({}, 1000.0, not_allowed=True) == ""
    assert room.taken({}, 1000.0, 1) == {"sent": [[1000.0, 1]]}
    assert room.taken({}, 1000.0, 1, not_allowed=True) == {"sent": [[1000.0, 1]], "not_allowed": 1000.0}


@pytest.mark.parametrize("sent, now, why", [
    ([[1000.0, 1]], 1002.9, "a command answered in this chat within 3 s"),
    ([[1000.0, 1], [1010.0, 2], [1020.0, 3], [1030.0, 4]], 1059.0, "4 commands answered in this chat within the minute"),
])
def test_no_room_says_why(sent, now, why):
    assert room.no_room({"sent": sent}, now) == why


def test_what_is_older_than_the_minute_counts_nothing_and_is_forgotten():
    data = {"sent": [[1000.0, 1], [1010.0, 2], [1020.0, 3], [1030.0, 4]], "not_allowed": 1000.0}
    assert room.no_room(data, 1059.9) == "4 commands answered in this chat within the minute"
    assert room.no_room(data, 1060.0) == "" and room.no_room(data, 1060.0, not_allowed=True) == ""
    assert room.taken(data, 1085.0, 9) == {"sent": [[1030.0, 4], [1085.0, 9]], "not_allowed": 1000.0}


@pytest.mark.parametrize("data", [{"sent": "x"}, {"sent": [1, [2], ["a", 1], None]}, {"not_allowed": "x"}, {"sent": None}])
def test_a_room_item_of_another_shape_counts_nothing(data):
    assert room.no_room(data, 1000.0) == "" and room.no_room(data, 1000.0, not_allowed=True) == ""
