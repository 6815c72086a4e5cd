"""Adapter tests of pager.telegram: the Bot API client against Telegram, faked with `responses`,
and the pure HTML helpers (escape, link, cut) that message formatting relies on.

Covers what each method sends, the one short wait after a brief 429, the mapping of Telegram's
answers onto pager.errors ("not modified" is success, any other 400 of an edit is MessageNotEditable, a
delete Telegram cannot do is False), the command menu, the bot's username asked once, call counting,
the deadline, the cut at 4096 characters, and that no exception text carries the bot token.
"""

from __future__ import annotations

import json
import traceback
from html.parser import HTMLParser

import pytest
import requests
import responses
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

from pager import deadline
from pager.errors import ChatMigrated, DeadlineExceeded, MessageNotEditable, TelegramRefused, TelegramUnavailable
from pager.html import cut, escape, link
from pager.telegram import Telegram, may_post

API = "https://api.telegram.test"
TOKEN = "123456:TEST-bot-token-do-not-log"
BOT = f"{API}/bot{TOKEN}"
CHAT = "-1001"


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def mock():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        yield rsps


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def telegram(sleeps: Sleeps) -> Telegram:
    return Telegram(requests.Session(), token=TOKEN, api_url=API, sleep=sleeps)


def ok(result=True) -> dict:
    return {"ok": True, "result": result}


def error(code: int, description: str, **parameters) -> dict:
    body = {"ok": False, "error_code": code, "description": description}
    if parameters:
        body["parameters"] = parameters
    return body


def sent(mock, index: int = -1) -> dict:
    return json.loads(mock.calls[index].request.body)


def flood(seconds: int) -> dict:
    return error(429, f"Too Many Requests: retry after {seconds}", retry_after=seconds)


def exception_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)) + repr(exc)


# -- what is sent -------------------------------------------------------------------------------------------


def test_send_message_posts_html_without_link_previews_and_returns_the_message_id(mock, telegram):
    mock.post(f"{BOT}/sendMessage", json=ok({"message_id": 77, "chat": {"id": -1001}}))

    message_id = telegram.send_message(CHAT, "💬 <b>alice</b> opened an issue")

    assert message_id == 77
    assert sent(mock) == {
        "chat_id": CHAT,
        "text": "💬 <b>alice</b> opened an issue",
        "parse_mode": "HTML",
        "link_preview_options": {"is_disabled": True},
    }
    assert mock.calls[0].request.req_kwargs["timeout"] == (3.05, 5.0)


def test_send_message_names_the_topic_keeps_quiet_and_carries_buttons_when_asked(mock, telegram):
    mock.post(f"{BOT}/sendMessage", json=ok({"message_id": 78}))

    telegram.send_message(CHAT, "🚨 owner/repo", thread_id=9, notify=False, buttons=[[("🛠 Start fix", "fix:owner/repo")]])

    body = sent(mock)
    assert body["message_thread_id"] == 9
    assert body["disable_notification"] is True
    assert body["reply_markup"] == {"inline_keyboard": [[{"text": "🛠 Start fix", "callback_data": "fix:owner/repo"}]]}


def test_callback_data_longer_than_64_bytes_is_refused_before_any_call(mock, telegram):
    with pytest.raises(ValueError):
        telegram.send_message(CHAT, "x", buttons=[[("🔀 Merge", "m:" + "é" * 32)]])

    assert telegram.calls == 0


def test_an_edit_with_buttons_replaces_them_and_one_without_sends_no_keyboard(mock, telegram):
    mock.post(f"{BOT}/editMessageText", json=ok({"message_id": 5}))

    telegram.edit_message(CHAT, 5, "📦 ready", buttons=[[("🔀 Merge", "merge:1")]])
    telegram.edit_message(CHAT, 5, "📦 merged")

    with_buttons, without = sent(mock, 0), sent(mock, 1)
    assert with_buttons["reply_markup"] == {"inline_keyboard": [[{"text": "🔀 Merge", "callback_data": "merge:1"}]]}
    assert without == {
        "chat_id": CHAT,
        "message_id": 5,
        "text": "📦 merged",
        "parse_mode": "HTML",
        "link_preview_options": {"is_disabled": True},
    }


def test_answer_callback_sends_the_query_id_and_a_text_of_at_most_200_characters(mock, telegram):
    mock.post(f"{BOT}/answerCallbackQuery", json=ok())

    telegram.answer_callback("cb-1")
    telegram.answer_callback("cb-2", "x" * 300)

    assert sent(mock, 0) == {"callback_query_id": "cb-1"}
    second = sent(mock, 1)
    assert len(second["text"]) == 200 and second["text"].endswith("…")


def test_a_long_message_is_sent_cut_to_4096_characters(mock, telegram):
    mock.post(f"{BOT}/sendMessage", json=ok({"message_id": 1}))

    telegram.send_message(CHAT, "a" * 5000)

    text = sent(mock)["text"]
    assert len(text) == 4096 and text.endswith("…")


def test_every_call_counts(mock, telegram):
    mock.post(f"{BOT}/sendMessage", json=ok({"message_id": 1}))
    mock.post(f"{BOT}/answerCallbackQuery", status=400, json=error(400, "Bad Request: query is too old and response timeout expired or query ID is invalid"))

    telegram.send_message(CHAT, "one")
    with pytest.raises(TelegramRefused):
        telegram.answer_callback("old")

    assert telegram.calls == 2


# -- flood control ----------------------------------------------------------------------------------------------


def test_a_short_429_waits_its_retry_after_and_tries_once_more(mock, telegram, sleeps):
    mock.post(f"{BOT}/sendMessage", status=429, json=flood(2))
    mock.post(f"{BOT}/sendMessage", json=ok({"message_id": 12}))

    assert telegram.send_message(CHAT, "burst") == 12
    assert sleeps.waits == [2]
    assert telegram.calls == 2


def test_a_429_of_exactly_three_seconds_still_waits(mock, telegram, sleeps):
    mock.post(f"{BOT}/editMessageText", status=429, json=flood(3))
    mock.post(f"{BOT}/editMessageText", json=ok({"message_id": 5}))

    telegram.edit_message(CHAT, 5, "edit")

    assert sleeps.waits == [3]


def test_a_long_429_is_unavailable_without_waiting(mock, telegram, sleeps):
    mock.post(f"{BOT}/sendMessage", status=429, json=flood(35))

    with pytest.raises(TelegramUnavailable) as caught:
        telegram.send_message(CHAT, "burst")

    assert (caught.value.status, caught.value.retry_after) == (429, 35)
    assert sleeps.waits == []
    assert telegram.calls == 1


def test_a_second_429_after_the_wait_is_unavailable(mock, telegram, sleeps):
    mock.post(f"{BOT}/sendMessage", status=429, json=flood(1))
    mock.post(f"{BOT}/sendMessage", status=429, json=flood(1))

    with pytest.raises(TelegramUnavailable):
        telegram.send_message(CHAT, "burst")

    assert sleeps.waits == [1]
    assert telegram.calls == 2


def test_a_429_without_retry_after_is_unavailable_without_waiting(mock, telegram, sleeps):
    mock.post(f"{BOT}/sendMessage", status=429, json=error(429, "Too Many Requests"))

    with pytest.raises(TelegramUnavailable):
        telegram.send_message(CHAT, "burst")

    assert sleeps.waits == []


def test_a_short_429_that_the_deadline_cannot_wait_for_is_unavailable_at_once(mock, telegram, sleeps):
    mock.post(f"{BOT}/sendMessage", status=429, json=flood(3))

    with deadline.within(1.0):
        with pytest.raises(TelegramUnavailable):
            telegram.send_message(CHAT, "burst")

    assert sleeps.waits == []
    assert telegram.calls == 1


# -- other answers ------------------------------------------------------------------------------------------------


def test_an_edit_that_changes_nothing_has_succeeded(mock, telegram):
    mock.post(
        f"{BOT}/editMessageText",
        status=400,
        json=error(400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"),
    )

    telegram.edit_message(CHAT, 5, "same")

    assert telegram.calls == 1


@pytest.mark.parametrize("description", [
    "Bad Request: message to edit not found",
    "Bad Request: message can't be edited",
    "Bad Request: MESSAGE_ID_INVALID",
    "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0",
])
def test_an_edit_telegram_refuses_with_a_400_is_a_message_that_cannot_be_edited(mock, telegram, description):
    mock.post(f"{BOT}/editMessageText", status=400, json=error(400, description))

    with pytest.raises(MessageNotEditable) as caught:
        telegram.edit_message(CHAT, 5, "gone")

    assert (caught.value.status, caught.value.description) == (400, description)
    assert isinstance(caught.value, TelegramRefused) and telegram.calls == 1


def test_an_edit_refused_with_a_403_stays_a_refusal(mock, telegram):
    mock.post(f"{BOT}/editMessageText", status=403, json=error(403, "Forbidden: bot was kicked from the group chat"))

    with pytest.raises(TelegramRefused) as caught:
        telegram.edit_message(CHAT, 5, "x")

    assert type(caught.value) is TelegramRefused and caught.value.status == 403


def test_an_edit_in_a_group_upgraded_to_a_supergroup_says_which_chat_to_write_to(mock, telegram):
    mock.post(f"{BOT}/editMessageText", status=400, json=error(
        400, "Bad Request: group chat was upgraded to a supergroup chat", migrate_to_chat_id=-1001234567890))

    with pytest.raises(ChatMigrated) as caught:
        telegram.edit_message(CHAT, 5, "x")

    assert caught.value.to_chat == "-1001234567890"


# -- replies and deletes --------------------------------------------------------------------------------------


def test_a_reply_names_the_message_and_is_sent_even_when_that_one_is_gone(mock, telegram):
    mock.post(f"{BOT}/sendMessage", json=ok({"message_id": 80}))

    telegram.send_message(CHAT, "🔕 muted", reply_to=77, notify=False)
    telegram.send_message(CHAT, "plain")

    assert sent(mock, 0)["reply_parameters"] == {"message_id": 77, "allow_sending_without_reply": True}
    assert "reply_parameters" not in sent(mock, 1)


def test_a_reply_telegram_refuses_because_its_message_is_gone_is_sent_again_without_the_reply(mock, telegram):
    # in a forum topic allow_sending_without_reply is "Always False" (ReplyParameters): Telegram refuses it
    mock.post(f"{BOT}/sendMessage", json=error(400, "Bad Request: message to be replied not found"), status=400)
    mock.post(f"{BOT}/sendMessage", json=ok({"message_id": 81}))

    assert telegram.send_message(CHAT, "💬 alice commented", thread_id=7, reply_to=77, notify=False) == 81

    assert sent(mock, 0)["reply_parameters"] == {"message_id": 77, "allow_sending_without_reply": True}
    again = sent(mock, 1)
    assert "reply_parameters" not in again and again["message_thread_id"] == 7 and again["text"] == "💬 alice commented"
    assert again["disable_notification"] is True and telegram.calls == 2


@pytest.mark.parametrize("reply_to, description", [
    (None, "Bad Request: message to be replied not found"),  # no reply of pager's: not one to drop
    (77, "Bad Request: message thread not found"),
])
def test_another_refusal_of_a_message_is_not_sent_again(mock, telegram, reply_to, description):
    mock.post(f"{BOT}/sendMessage", json=error(400, description), status=400)

    with pytest.raises(TelegramRefused):
        telegram.send_message(CHAT, "x", thread_id=7, reply_to=reply_to)
    assert telegram.calls == 1


def test_a_delete_sends_the_chat_and_the_message_and_is_true_once_done(mock, telegram):
    mock.post(f"{BOT}/deleteMessage", json=ok(True))

    assert telegram.delete_message(CHAT, 77) is True
    assert sent(mock) == {"chat_id": CHAT, "message_id": 77} and telegram.calls == 1


@pytest.mark.parametrize("description", [
    "Bad Request: message to delete not found",
    "Bad Request: message can't be deleted",
    "Bad Request: message can't be deleted for everyone",
])
def test_a_delete_telegram_cannot_do_is_false_and_nothing_more_to_do(mock, telegram, description):
    mock.post(f"{BOT}/deleteMessage", status=400, json=error(400, description))

    assert telegram.delete_message(CHAT, 77) is False


@pytest.mark.parametrize(("code", "description"), [
    (400, "Bad Request: chat not found"),
    (403, "Forbidden: bot was kicked from the group chat"),
])
def test_a_delete_refused_for_another_reason_is_a_refusal(mock, telegram, code, description):
    mock.post(f"{BOT}/deleteMessage", status=code, json=error(code, description))

    with pytest.raises(TelegramRefused) as caught:
        telegram.delete_message(CHAT, 77)

    assert type(caught.value) is TelegramRefused and caught.value.status == code


def test_a_delete_in_a_group_upgraded_to_a_supergroup_says_which_chat_to_write_to(mock, telegram):
    mock.post(f"{BOT}/deleteMessage", status=400, json=error(
        400, "Bad Request: group chat was upgraded to a supergroup chat", migrate_to_chat_id=-1001234567890))

    with pytest.raises(ChatMigrated):
        telegram.delete_message(CHAT, 77)


@pytest.mark.parametrize("answer", [
    {"status": 429, "json": flood(35)},
    {"status": 502, "json": error(502, "Bad Gateway")},
    {"body": requests.ReadTimeout("Read timed out.")},
])
def test_a_delete_without_telegrams_answer_is_unavailable(mock, telegram, answer):
    mock.post(f"{BOT}/deleteMessage", **answer)

    with pytest.raises(TelegramUnavailable):
        telegram.delete_message(CHAT, 77)


# -- the command menu and the bot's name ----------------------------------------------------------------------


def test_the_command_menu_is_set_for_every_chat_without_a_scope_and_read_back(mock, telegram):
    commands = [{"command": "status", "description": "What is red now"}, {"command": "help", "description": "Help"}]
    mock.post(f"{BOT}/setMyCommands", json=ok(True))
    mock.post(f"{BOT}/getMyCommands", json=ok(commands))

    telegram.set_my_commands([("status", "What is red now"), ("help", "Help")])

    assert sent(mock) == {"commands": commands}  # no scope: BotCommandScopeDefault
    assert telegram.get_my_commands() == commands
    assert sent(mock) == {} and telegram.calls == 2


def test_the_command_menu_is_set_and_read_in_one_chats_scope(mock, telegram):
    commands = [{"command": "status", "description": "What is red now"}]
    mock.post(f"{BOT}/setMyCommands", json=ok(True))
    mock.post(f"{BOT}/getMyCommands", json=ok(commands))

    telegram.set_my_commands([("status", "What is red now")], chat=CHAT)

    assert sent(mock) == {"commands": commands, "scope": {"type": "chat", "chat_id": CHAT}}  # BotCommandScopeChat
    assert telegram.get_my_commands(chat=CHAT) == commands
    assert sent(mock) == {"scope": {"type": "chat", "chat_id": CHAT}}


def test_the_menu_of_a_group_made_a_supergroup_is_chat_migrated_as_every_call_naming_it(mock, telegram):
    mock.post(f"{BOT}/setMyCommands", status=400, json=error(400, "Bad Request: group chat was upgraded to a supergroup chat",
                                                             migrate_to_chat_id=-1001234567890))

    with pytest.raises(ChatMigrated) as caught:
        telegram.set_my_commands([("help", "Help")], chat=CHAT)

    assert caught.value.to_chat == "-1001234567890"


@pytest.mark.parametrize("commands", [
    [("Status", "capital letters")], [("mute-repo", "a hyphen")], [("", "empty")], [("x" * 33, "too long")],
    [("help", "")], [("help", "x" * 257)], [(f"c{n}", "d") for n in range(101)],
])
def test_a_command_menu_telegram_would_refuse_is_refused_before_any_call(mock, telegram, commands):
    with pytest.raises(ValueError):
        telegram.set_my_commands(commands)

    assert telegram.calls == 0


def test_a_command_menu_at_the_limits_is_sent(mock, telegram):
    mock.post(f"{BOT}/setMyCommands", json=ok(True))

    telegram.set_my_commands([("a_1" + "x" * 29, "é" * 256)] + [(f"c{n}", "d") for n in range(99)])

    assert len(sent(mock)["commands"]) == 100


def test_a_command_menu_that_is_not_a_list_is_unavailable(mock, telegram):
    mock.post(f"{BOT}/getMyCommands", json=ok({"command": "help"}))

    with pytest.raises(TelegramUnavailable):
        telegram.get_my_commands()


def test_the_bots_username_is_asked_once_and_kept(mock, telegram):
    mock.post(f"{BOT}/getMe", json=ok({"id": 123456, "is_bot": True, "first_name": "pager", "username": "pager_bot"}))

    assert telegram.bot_username() == "pager_bot"
    assert telegram.bot_username() == "pager_bot"
    assert telegram.calls == 1


def test_a_bot_without_a_username_is_an_answer_pager_cannot_use(mock, telegram):
    mock.post(f"{BOT}/getMe", json=ok({"id": 123456, "is_bot": True, "first_name": "pager"}))

    with pytest.raises(TelegramUnavailable):
        telegram.bot_username()


@pytest.mark.parametrize(
    ("code", "description"),
    [
        (400, "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0"),
        (403, "Forbidden: bot was kicked from the supergroup chat"),
        (400, "Bad Request: chat not found"),
    ],
)
def test_another_client_error_is_a_refusal_with_telegrams_description(mock, telegram, code, description):
    mock.post(f"{BOT}/sendMessage", status=code, json=error(code, description))

    with pytest.raises(TelegramRefused) as caught:
        telegram.send_message(CHAT, "x")

    assert type(caught.value) is TelegramRefused
    assert (caught.value.status, caught.value.description) == (code, description)


def test_a_group_upgraded_to_a_supergroup_is_a_refusal(mock, telegram):
    mock.post(
        f"{BOT}/sendMessage",
        status=400,
        json=error(400, "Bad Request: group chat was upgraded to a supergroup chat", migrate_to_chat_id=-100123),
    )

    with pytest.raises(TelegramRefused):
        telegram.send_message(CHAT, "x")


@pytest.mark.parametrize("status", [500, 502, 504])
def test_a_server_error_is_unavailable(mock, telegram, status):
    mock.post(f"{BOT}/sendMessage", status=status, json=error(status, "Internal Server Error"))

    with pytest.raises(TelegramUnavailable) as caught:
        telegram.send_message(CHAT, "x")

    assert caught.value.status == status


def test_a_gateway_page_instead_of_json_is_unavailable(mock, telegram):
    mock.post(f"{BOT}/sendMessage", status=502, body="<html>Bad Gateway</html>", content_type="text/html")

    with pytest.raises(TelegramUnavailable):
        telegram.send_message(CHAT, "x")


@pytest.mark.parametrize(
    "failure",
    [requests.ReadTimeout(f"HTTPSConnectionPool: Read timed out. (url: {BOT}/sendMessage)"), requests.ConnectTimeout(f"timed out {BOT}")],
)
def test_a_timeout_is_unavailable(mock, telegram, failure):
    mock.post(f"{BOT}/sendMessage", body=failure)

    with pytest.raises(TelegramUnavailable, match="no answer in time"):
        telegram.send_message(CHAT, "x")


def test_a_connection_error_is_unavailable_and_does_not_carry_requests_exception(mock, telegram):
    mock.post(f"{BOT}/sendMessage", body=requests.ConnectionError(f"Max retries exceeded with url: /bot{TOKEN}/sendMessage"))

    with pytest.raises(TelegramUnavailable) as caught:
        telegram.send_message(CHAT, "x")

    assert caught.value.__cause__ is None and caught.value.__context__ is None


def test_no_call_starts_once_the_deadline_has_passed(mock, telegram):
    clock = iter([100.0, 102.0]).__next__

    with deadline.within(1.0, clock=clock):
        with pytest.raises(DeadlineExceeded):
            telegram.answer_callback("cb")

    assert telegram.calls == 0


def test_no_exception_text_carries_the_bot_token(mock, telegram):
    mock.post(f"{BOT}/sendMessage", body=requests.ConnectionError(f"Max retries exceeded with url: /bot{TOKEN}/sendMessage"))
    mock.post(f"{BOT}/editMessageText", body=requests.ReadTimeout(f"Read timed out. (url: {BOT}/editMessageText)"))
    mock.post(f"{BOT}/answerCallbackQuery", status=401, json=error(401, f"Unauthorized: token {TOKEN} is invalid"))
    mock.post(f"{BOT}/getMe", status=429, json=flood(60))
    mock.post(f"{BOT}/deleteMessage", body=requests.ConnectionError(f"Max retries exceeded with url: /bot{TOKEN}/deleteMessage"))
    mock.post(f"{BOT}/setMyCommands", status=400, json=error(400, f"Bad Request: {TOKEN}"))

    texts = []
    for attempt in (
        lambda: telegram.send_message(CHAT, "x"),
        lambda: telegram.edit_message(CHAT, 1, "x"),
        lambda: telegram.answer_callback("cb"),
        lambda: telegram._call("getMe", {}),
        lambda: telegram.delete_message(CHAT, 1),
        lambda: telegram.set_my_commands([("help", "h")]),
    ):
        with pytest.raises((TelegramUnavailable, TelegramRefused)) as caught:
            attempt()
        texts.append(exception_text(caught.value) + getattr(caught.value, "description", ""))

    assert len(texts) == 6
    for text in texts:
        assert TOKEN not in text
        assert TOKEN.split(":")[1] not in text
    assert TOKEN not in repr(telegram)


# -- HTML helpers ------------------------------------------------------------------------------------------------


def test_escape_makes_user_text_safe_for_html_and_leaves_quotes():
    assert escape('a < b && "c" > d') == 'a &lt; b &amp;&amp; "c" &gt; d'


def test_link_escapes_its_label_and_the_quote_and_ampersand_of_its_url():
    assert link('https://x.test/?a=1&b="2"', "<script> & co") == (
        '<a href="https://x.test/?a=1&amp;b=&quot;2&quot;">&lt;script&gt; &amp; co</a>'
    )


def visible(text: str) -> str:
    """What Telegram shows of HTML text: the text between the tags, entities decoded."""

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.parts: list[str] = []

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

    parser = Text()
    parser.feed(text)
    parser.close()
    return "".join(parser.parts)


def open_tags_at_end(text: str) -> list[str]:
    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[str] = []

        def handle_starttag(self, tag, attrs) -> None:
            self.stack.append(tag)

        def handle_endtag(self, tag) -> None:
            assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack}"
            self.stack.pop()

    parser = Tags()
    parser.feed(text)
    parser.close()
    return parser.stack


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def test_a_text_within_the_limit_is_left_as_it_is():
    text = "<b>x</b> " + "y" * 4094
    assert utf16_length(visible(text)) == 4096
    assert cut(text) == text


def test_a_long_plain_text_is_cut_to_4096_characters_ending_with_an_ellipsis():
    result = cut("z" * 10_000)
    assert result == "z" * 4095 + "…"


def test_the_cut_counts_what_telegram_shows_not_the_markup():
    body = link("https://github.com/owner/repo/issues/1", "owner/repo#1") + " " + escape("a&b" * 1300)
    assert len(body) > 4096 and len(visible(body)) < 4096

    assert cut(body) == body


def test_the_cut_never_splits_an_entity():
    text = "x" * 4094 + "&amp;&lt;&gt;"
    result = cut(text)
    assert result == "x" * 4094 + "&amp;…"


def test_the_cut_closes_the_tags_open_at_the_cut():
    text = "<b>alert</b> " + link("https://x.test/run/1", "r" * 5000)
    result = cut(text)

    assert result.endswith("…</a>")
    assert open_tags_at_end(result) == []
    assert utf16_length(visible(result)) == 4096


def test_characters_beyond_the_basic_plane_count_twice():
    result = cut("🚨" * 3000)
    assert result == "🚨" * 2047 + "…"


@settings(max_examples=examples(200))
@given(
    st.lists(
        st.one_of(
            st.text(min_size=0, max_size=30).map(escape),
            st.tuples(st.sampled_from(["b", "i", "code", "pre"]), st.text(max_size=20)).map(
                lambda pair: f"<{pair[0]}>{escape(pair[1])}</{pair[0]}>"
            ),
            st.tuples(st.text(max_size=20), st.text(min_size=1, max_size=20)).map(
                lambda pair: link("https://x.test/" + pair[0], pair[1])
            ),
        ),
        max_size=20,
    ),
    st.integers(min_value=1, max_value=120),
)
def test_any_cut_fits_the_limit_keeps_a_prefix_of_the_text_and_closes_every_tag(parts, limit):
    text = "".join(parts)
    result = cut(text, limit)

    assert utf16_length(visible(result)) <= limit
    assert open_tags_at_end(result) == []
    if result != text:
        shown = visible(result)
        assert shown.endswith("…")
        assert visible(text).startswith(shown[:-1])


@settings(max_examples=examples(300))
@given(st.lists(st.one_of(st.text(max_size=12).map(escape),
                          st.sampled_from(["<b>", "</b>", '<a href="x">', "</a>", "&amp;", "&lt;", "&#128680;", "&#x41;"])),
                max_size=15).map("".join))
def test_the_length_telegram_counts_is_the_text_between_the_tags_entities_decoded(text):
    from pager.html import visible_length

    assert visible_length(text) == utf16_length(visible(text))


def test_a_group_upgraded_to_a_supergroup_says_which_chat_to_write_to(mock, telegram):
    mock.post(f"{BOT}/sendMessage", status=400, json={
        "ok": False, "error_code": 400, "description": "Bad Request: group chat was upgraded to a supergroup chat",
        "parameters": {"migrate_to_chat_id": -1001234567890}})
    with pytest.raises(ChatMigrated, match="the supergroup -1001234567890") as caught:
        telegram.send_message(-42, "hello")
    assert caught.value.to_chat == "-1001234567890" and isinstance(caught.value, TelegramRefused)


READ_ONLY_GROUP = {"type": "supergroup", "permissions": {"can_send_messages": False}}


@pytest.mark.parametrize("member, chat, may", [
    ({"status": "creator"}, None, True),
    ({"status": "administrator"}, READ_ONLY_GROUP, True),  # a group's default permissions do not bind its admins
    ({"status": "administrator", "can_post_messages": False}, {"type": "channel"}, False),
    ({"status": "administrator", "can_post_messages": True}, {"type": "channel"}, True),
    ({"status": "member"}, {"type": "supergroup", "permissions": {"can_send_messages": True}}, True),
    ({"status": "member"}, READ_ONLY_GROUP, False),  # only admins may write there
    ({"status": "member"}, {"type": "channel"}, False),  # in a channel only administrators post
    ({"status": "member"}, None, True),  # the chat not read: the member may, as far as pager knows
    ({"status": "restricted", "can_send_messages": True}, {"type": "group", "permissions": {}}, True),
    ({"status": "restricted", "can_send_messages": True}, READ_ONLY_GROUP, False),
    ({"status": "restricted", "can_send_messages": False}, None, False),
    ({"status": "left"}, None, False),
    ({"status": "kicked"}, None, False),
])
def test_whether_the_bot_may_post_follows_its_chat_member_and_the_groups_default_permissions(member, chat, may):
    # the Bot API's ChatMember kinds, ChatFullInfo.permissions ("Default chat member permissions, for groups and
    # supergroups") and ChatPermissions.can_send_messages
    assert may_post(member, chat) is may
