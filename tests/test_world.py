"""The fake world's own rules (sim/pager_world): its fault model, its fakes, its closed loop.

The rest of the suite trusts these fakes to answer as GitHub and Telegram do; each rule here names
what it follows.
"""

from __future__ import annotations

import json
import re

import jwt
import pytest

from pager.errors import StoreUnavailable, Transient
from pager_world.cases import issue_opened, run
from pager_world.faults import Faults, telegram_error
from pager_world.github import FakeGitHub
from pager_world.http import HttpRequest
from pager_world.telegram import FakeTelegram
from pager_world.world import CHAT_ID


def test_the_fake_chat_applies_edits_and_says_not_modified_and_not_found_like_telegram():
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID)
    status, answer = chat.handle("sendMessage", {"chat_id": CHAT_ID, "text": "a"})
    message_id = answer["result"]["message_id"]
    assert chat.handle("editMessageText", {"chat_id": CHAT_ID, "message_id": message_id, "text": "b"})[0] == 200
    status, answer = chat.handle("editMessageText", {"chat_id": CHAT_ID, "message_id": message_id, "text": "b"})
    assert status == 400 and answer["description"].startswith("Bad Request: message is not modified")
    status, answer = chat.handle("editMessageText", {"chat_id": CHAT_ID, "message_id": 999, "text": "b"})
    assert (status, answer["description"]) == (400, "Bad Request: message to edit not found")
    assert chat.view() == {message_id: ("b", None)}


def test_a_fault_armed_at_a_call_fires_once_at_that_call(world):
    world.faults.fail_call(1, "store")
    world.store.load("a")
    with pytest.raises(StoreUnavailable):
        world.store.load("b")
    world.store.load("c")
    assert world.faults.fired == [("store", "load b")]
    assert [name for _, name in world.faults.log] == ["load a", "load b", "load c"]


def test_records_read_or_written_together_meet_the_faults_one_by_one_and_count_one_round_trip(world):
    from pager.store import Record, Write

    store = world.store
    trips, writes = store.round_trips, sum(store.writes.values())
    world.faults.fail("store", r"^check attention \[s\]$", kind="store")
    with pytest.raises(StoreUnavailable):  # a throttled item cancels the whole transaction, as DynamoDB's does
        store.save_all([Write(Record("a"), {"n": 1}), Write(Record("attention", item="s"), None)])
    assert store.load_all([("a", ""), ("b", "x")]) == [Record("a"), Record("b", item="x")]
    store.save_all([Write(Record("a"), {"n": 1}), Write(Record("attention", item="s"), None)])
    assert world.faults.fired == [("store", "check attention [s]")]
    assert [name for service, name in world.faults.log if service == "store"] == [
        "save a", "check attention [s]", "load a", "load b [x]", "save a", "check attention [s]"]
    assert store.round_trips - trips == 3  # each a round trip, however many records
    assert sum(store.writes.values()) - writes == 2  # a check writes nothing; a write is counted as `save` counts it, throttled too
    assert store.dump() == {"a": {"n": 1}}


def test_a_telegram_fault_reaches_the_client_as_unavailable(world):
    world.faults.fail_call(0, "telegram-429")
    with pytest.raises(Transient):
        world.services.telegram.send_message(CHAT_ID, "x")
    assert world.services.telegram.send_message(CHAT_ID, "x") == 100


def test_a_rule_by_name_fails_the_next_matching_calls_and_then_heals():
    faults = Faults()
    faults.fail("github", r"/dispatches$", status=503, count=2)
    assert faults.call("github", "GET /repos/o/r/pulls/1") is None
    assert faults.call("github", "POST /repos/o/r/dispatches").status == 503
    assert faults.call("github", "POST /repos/o/r/dispatches").status == 503
    assert faults.call("github", "POST /repos/o/r/dispatches") is None


def app_jwt(private_key: str, now: float) -> dict[str, str]:
    token = jwt.encode({"iat": int(now) - 60, "exp": int(now) + 540, "iss": "12345"}, private_key, algorithm="RS256")
    return {"Authorization": f"Bearer {token}"}


def test_the_deliveries_list_pages_newest_first_filters_failures_and_chains_pages_by_its_link(private_key_pem):
    now = [1_800_000_000.0]
    github = FakeGitHub(clock=lambda: now[0], api_url="https://api.github.test")
    for code in (200, 502, 200, 0, 404, 200, 500):
        github.record("g", "issues", "opened", 1, code)
        now[0] += 1
    auth = app_jwt(private_key_pem, now[0])
    first = github(HttpRequest("GET", "https://api.github.test/app/hook/deliveries?per_page=3", auth))
    assert [d["status_code"] for d in first.body] == [500, 200, 404]
    link = first.headers["Link"]
    assert link.endswith('>; rel="next"')
    second = github(HttpRequest("GET", link[1: link.index(">")], auth))
    assert [d["status_code"] for d in second.body] == [0, 200, 502]
    failures = github(HttpRequest("GET", "https://api.github.test/app/hook/deliveries?per_page=100&status=failure", auth))
    assert [d["status_code"] for d in failures.body] == [500, 404, 502]  # 400-599 only: no answer (0) is not in it
    assert "Link" not in failures.headers


def test_a_delivery_in_the_world_goes_through_the_handler_and_into_githubs_list(world):
    status, answer = world.deliver("issues", issue_opened(), guid="g-1")
    assert (status, answer["outcome"]) == (200, "sent, draft asked")
    [attempt] = world.attempts("g-1")
    assert (attempt["status_code"], attempt["status"], attempt["redelivery"]) == (200, "OK", False)


def test_a_failed_delivery_is_listed_with_its_500_and_a_redelivery_by_hand_passes(world):
    world.faults.fail_next("telegram-5xx", "sendMessage")
    assert world.deliver("issues", issue_opened(), guid="g-2")[0] == 500
    assert world.deliver_again("g-2")[0] == 200
    assert [(a["status_code"], a["redelivery"]) for a in world.attempts("g-2")] == [(500, False), (200, True)]


def test_deliveries_at_the_same_moment_each_reach_the_table_before_any_calls_out(world):
    world.race("workflow_run", [run("failure"), run("failure", workflow_id=9, name="lint")])
    first_http = next(i for i, (service, _) in enumerate(world.faults.log) if service != "store")
    loads = [name for _, name in world.faults.log[:first_http] if name.startswith("load alarm#")]
    assert len(loads) >= 2  # both loaded the alarm before either called Telegram


# -- GitHub's rules ------------------------------------------------------------------------------------


def test_app_endpoints_take_only_the_apps_jwt_and_repository_endpoints_only_an_installation_token(private_key_pem):
    now = 1_800_000_000.0
    github = FakeGitHub(clock=lambda: now, api_url="https://api.github.test")
    github.installations["o/r"] = 7
    github.installation_permissions[7] = {"contents": "write", "metadata": "read"}  # what a dispatch needs
    api = "https://api.github.test"
    jwt_auth = app_jwt(private_key_pem, now)
    assert github(HttpRequest("GET", f"{api}/app/hook/deliveries", {})).status == 401
    assert github(HttpRequest("GET", f"{api}/repos/o/r/installation", jwt_auth)).body["id"] == 7
    assert github(HttpRequest("GET", f"{api}/repos/o/other/installation", jwt_auth)).status == 404  # not installed
    token = github(HttpRequest("POST", f"{api}/app/installations/7/access_tokens", jwt_auth)).body["token"]
    dispatch = json.dumps({"event_type": "pager-draft", "client_payload": {}}).encode()
    assert github(HttpRequest("POST", f"{api}/repos/o/r/dispatches", jwt_auth, dispatch)).status == 401
    assert github(HttpRequest("POST", f"{api}/repos/o/r/dispatches", {"Authorization": f"Bearer {token}"}, dispatch)).status == 204
    stale = jwt.encode({"iat": int(now) - 1200, "exp": int(now) - 600, "iss": "12345"}, private_key_pem, algorithm="RS256")
    assert github(HttpRequest("GET", f"{api}/app/hook/deliveries", {"Authorization": f"Bearer {stale}"})).status == 401


@pytest.mark.parametrize(("body", "status"), [
    ({"event_type": "pager-draft", "client_payload": {str(n): n for n in range(10)}}, 204),
    ({"event_type": "pager-draft", "client_payload": {str(n): n for n in range(11)}}, 422),
    ({"event_type": "x" * 101, "client_payload": {}}, 422),
    ({"event_type": "", "client_payload": {}}, 422),
    ({"event_type": "pager-fix", "client_payload": {"entries": "x" * 70_000}}, 422),
])
def test_a_dispatch_is_refused_as_github_refuses_it(world, body, status):
    token = world.services.github.installation_token(1)
    request = HttpRequest("POST", "https://api.github.test/repos/maintainer/pager/dispatches",
                          {"Authorization": f"Bearer {token}"}, json.dumps(body).encode())
    assert world.github(request).status == status


@pytest.mark.parametrize(("state", "status"), [
    ("clean", 200), ("unstable", 200), ("has_hooks", 200), ("behind", 200), ("blocked", 405), ("dirty", 405), ("draft", 405)])
def test_a_merge_is_answered_by_the_pull_requests_mergeable_state(world, state, status):
    world.hub.pulls[("Codertocat/Hello-World", 2)] = {"number": 2, "state": "open", "head": {"sha": "a" * 40}, "mergeable_state": state}
    token = world.services.github.installation_token(1)
    merge = HttpRequest("PUT", "https://api.github.test/repos/Codertocat/Hello-World/pulls/2/merge",
                        {"Authorization": f"Bearer {token}"}, json.dumps({"sha": "a" * 40, "merge_method": "squash"}).encode())
    assert world.github(merge).status == status


def test_a_merge_of_another_head_an_unallowed_method_or_a_behind_head_where_required_is_refused(world):
    repo = "Codertocat/Hello-World"
    world.hub.pulls[(repo, 2)] = {"number": 2, "state": "open", "head": {"sha": "a" * 40}, "mergeable_state": "behind"}
    token = world.services.github.installation_token(1)

    def merge(sha, method="squash"):
        body = json.dumps({"sha": sha, "merge_method": method}).encode()
        return world.github(HttpRequest("PUT", f"https://api.github.test/repos/{repo}/pulls/2/merge",
                                        {"Authorization": f"Bearer {token}"}, body)).status

    assert merge("b" * 40) == 409
    world.hub.merge_methods[repo] = {"merge"}
    assert merge("a" * 40) == 405
    world.hub.merge_methods.pop(repo)
    world.hub.up_to_date_required.add(repo)
    assert merge("a" * 40) == 405


# -- Telegram's rules: chats, threads, presses, flood control, HTML, migration ---------------------------


class Now:
    """A clock a test moves by hand (epoch seconds)."""

    def __init__(self, at: float = 1_800_000_000.0) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at


def send(chat: FakeTelegram, chat_id, text: str = "x", **params) -> tuple[int, dict]:
    return chat.handle("sendMessage", {"chat_id": chat_id, "text": text, **params})


def test_the_bot_sends_as_its_chat_member_and_the_groups_default_permissions_allow():
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID, "supergroup")
    chat.add_chat("-1002", "channel")
    bot = chat.bot["id"]
    no_rights = (400, telegram_error(400, "Bad Request: not enough rights to send text messages to the chat"))
    assert send(chat, CHAT_ID)[0] == 200 and send(chat, "-1002")[0] == 200  # a member; a channel's administrator
    assert chat.handle("getChatMember", {"chat_id": "-1002", "user_id": bot})[1]["result"]["can_post_messages"] is True
    chat.set_permissions(CHAT_ID, can_send_messages=False)  # only admins may write
    assert chat.handle("getChat", {"chat_id": CHAT_ID})[1]["result"]["permissions"]["can_send_messages"] is False
    assert "permissions" not in chat.handle("getChat", {"chat_id": "-1002"})[1]["result"]  # groups only
    assert send(chat, CHAT_ID) == no_rights
    chat.members[bot] = {"status": "restricted"}  # its own rights allow, the group's defaults do not
    assert send(chat, CHAT_ID) == no_rights
    chat.members[bot] = {"status": "administrator", "can_post_messages": False}
    assert send(chat, CHAT_ID)[0] == 200
    assert send(chat, "-1002") == (400, telegram_error(400, "Bad Request: need administrator rights in the channel chat"))
    chat.set_permissions(CHAT_ID)
    chat.members[bot] = {"status": "restricted", "can_send_messages": False}
    assert send(chat, CHAT_ID) == no_rights
    chat.members[bot] = {"status": "left"}
    assert send(chat, CHAT_ID) == (403, telegram_error(403, "Forbidden: bot is not a member of the supergroup chat"))
    assert len(chat.sent) == 3


def edit(chat: FakeTelegram, chat_id, message_id: int, text: str) -> tuple[int, dict]:
    return chat.handle("editMessageText", {"chat_id": chat_id, "message_id": message_id, "text": text})


def test_a_chat_the_bot_is_not_in_is_not_found_and_a_channel_is_found_by_its_name():
    # Bot API server, Client.cpp: check_chat and TdOnCheckChatCallback ("chat not found"; by username
    # only a supergroup or a channel)
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID)
    chat.add_chat(-1002, "channel", username="News", title="News")
    chat.add_chat(77, "private", username="ann")
    not_found = (400, "Bad Request: chat not found")
    assert send(chat, int(CHAT_ID))[0] == 200  # an int names the chat as its string does
    message_id = send(chat, CHAT_ID)[1]["result"]["message_id"]
    for status, answer in (send(chat, "-1003"), send(chat, "@nobody"), send(chat, "@ann"), send(chat, "pager"),
                           edit(chat, "-1003", message_id, "y"),
                           chat.handle("getChatMember", {"chat_id": "-1003", "user_id": chat.bot["id"]})):
        assert (status, answer["description"]) == not_found
    assert send(chat, None)[1]["description"] == "Bad Request: chat_id is empty"
    status, answer = send(chat, "@news")  # usernames compare case-insensitively
    assert status == 200 and answer["result"]["chat"] == {"id": -1002, "type": "channel", "title": "News", "username": "News"}
    assert chat.messages[answer["result"]["message_id"]].chat_id == "-1002"
    assert chat.handle("getChatMember", {"chat_id": CHAT_ID, "user_id": chat.bot["id"]})[0] == 200


def test_a_thread_must_be_a_topic_of_a_forum_and_is_ignored_in_a_chat_without_topics():
    # Bot API server, Client.cpp: check_message_topic (General, id 1, is no thread to send to)
    chat = FakeTelegram()
    chat.add_chat("-1005", "supergroup", forum=True, topics=(7,))
    chat.add_chat(CHAT_ID, "group")
    status, answer = send(chat, "-1005", message_thread_id=7)
    assert status == 200 and chat.messages[answer["result"]["message_id"]].thread_id == 7
    assert answer["result"]["message_thread_id"] == 7
    for thread in (8, 1):
        assert send(chat, "-1005", message_thread_id=thread)[1]["description"] == "Bad Request: message thread not found"
    assert chat.messages[send(chat, "-1005")[1]["result"]["message_id"]].thread_id is None  # General
    status, answer = send(chat, CHAT_ID, message_thread_id=8)
    assert status == 200 and chat.messages[answer["result"]["message_id"]].thread_id is None


def test_an_edit_names_the_chat_its_message_is_in():
    # Bot API server, Client.cpp: check_message ("message to edit not found")
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID)
    chat.add_chat("-1002", "supergroup")
    message_id = send(chat, CHAT_ID, "a")[1]["result"]["message_id"]
    assert edit(chat, "-1002", message_id, "b") == (400, telegram_error(400, "Bad Request: message to edit not found"))
    assert chat.messages[message_id].text == "a"
    assert edit(chat, CHAT_ID, message_id, "b")[0] == 200


def test_a_press_is_answered_only_if_telegram_knows_it_and_within_15_minutes():
    # "query is too old" after about 15 minutes, as bot developers report it; Client.cpp maps QUERY_ID_INVALID to it
    now = Now()
    chat = FakeTelegram(clock=now)
    too_old = (400, telegram_error(400, "Bad Request: query is too old and response timeout expired or query ID is invalid"))
    assert chat.handle("answerCallbackQuery", {"callback_query_id": "never-pressed"}) == too_old
    chat.register_query("p1")
    now.at += 15 * 60
    assert chat.handle("answerCallbackQuery", {"callback_query_id": "p1", "text": "ok"})[0] == 200
    chat.register_query("p2", at=now.at - 15 * 60 - 1)
    assert chat.handle("answerCallbackQuery", {"callback_query_id": "p2"}) == too_old
    assert chat.answers == [("p1", "ok")]


def test_the_worlds_presses_are_known_to_telegram_from_the_moment_they_are_made(world):
    update = world.press_update("what", message_id=1, callback_id="p1")
    assert world.chat.queries["p1"] == world.now
    assert update["callback_query"]["message"]["chat"] == {"id": int(CHAT_ID), "type": "group"}
    world.press_update("what", message_id=1, callback_id="p2")
    assert world.chat.handle("answerCallbackQuery", {"callback_query_id": "p1"})[0] == 200
    world.advance(16)
    assert world.chat.handle("answerCallbackQuery", {"callback_query_id": "p2"})[0] == 400  # too late


def test_a_chat_takes_about_a_message_a_second_with_short_bursts_and_edits_count_too():
    # Telegram Bot FAQ, "My bot is hitting limits, how do I avoid this?"; edits count too, as bot developers report
    now = Now()
    chat = FakeTelegram(clock=now)
    chat.add_chat("-1002", "channel")
    chat.add_chat("-1003", "channel")
    first = send(chat, "-1002")[1]["result"]["message_id"]
    now.at += 0.5
    assert send(chat, "-1002")[0] == 200
    now.at += 0.5
    assert edit(chat, "-1002", first, "edited")[0] == 200
    now.at += 0.2
    status, answer = send(chat, "-1002")
    assert (status, answer) == (429, telegram_error(429, "Too Many Requests: retry after 2", retry_after=2))
    assert send(chat, "-1003")[0] == 200  # another chat has its own pace
    now.at += 1.8  # the first message is 3 s old: one more fits
    assert send(chat, "-1002")[0] == 200
    assert send(chat, "-1002")[0] == 429


def test_a_refused_message_does_not_count_towards_the_limit():
    now = Now()
    chat = FakeTelegram(clock=now)
    chat.add_chat(CHAT_ID)
    assert send(chat, CHAT_ID)[0] == send(chat, CHAT_ID)[0] == 200
    assert send(chat, CHAT_ID, "<p>no</p>", parse_mode="HTML")[0] == 400
    assert send(chat, CHAT_ID)[0] == 200
    assert send(chat, CHAT_ID)[0] == 429
    assert send(chat, CHAT_ID)[1]["parameters"] == {"retry_after": 3}  # a 429 does not count either


def test_a_group_takes_at_most_20_messages_a_minute_and_a_channel_more():
    # Telegram Bot FAQ: "no more than 20 messages per minute in the same group"
    now = Now()
    chat = FakeTelegram(clock=now)
    chat.add_chat(CHAT_ID, "group")
    chat.add_chat("-1002", "supergroup")
    chat.add_chat("-1003", "channel")
    for second in range(20):
        now.at = 1_800_000_000.0 + second
        assert send(chat, CHAT_ID)[0] == send(chat, "-1002")[0] == send(chat, "-1003")[0] == 200
    now.at += 1
    for group in (CHAT_ID, "-1002"):
        status, answer = send(chat, group)
        assert (status, answer["parameters"]) == (429, {"retry_after": 40})  # until the first leaves the minute
    assert send(chat, "-1003")[0] == 200
    now.at += 40
    assert send(chat, CHAT_ID)[0] == 200


def test_without_flood_control_the_chat_takes_any_pace():
    chat = FakeTelegram(clock=Now(), flood=False)
    chat.add_chat(CHAT_ID)
    assert all(send(chat, CHAT_ID)[0] == 200 for _ in range(30))


@pytest.mark.parametrize(("text", "description"), [
    ('<span class="tg-spoiler">a</span>', None),
    ("<tg-spoiler>a</tg-spoiler>", None),
    ('x <span>a</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 2'),
    ('é <span class="spoiler">a</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 3'),
    ('<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>', None),
    ('<tg-emoji emoji-id="x">👍</tg-emoji>', "Invalid custom emoji identifier specified"),
    ("<tg-emoji>👍</tg-emoji>", "Invalid custom emoji identifier specified"),
    ('<tg-emoji emoji-id="0">👍</tg-emoji>', "Invalid custom emoji identifier specified"),
])
def test_a_span_must_be_a_spoiler_and_a_custom_emoji_needs_its_numeric_id(text, description):
    # TDLib, td/telegram/MessageEntity.cpp, parse_html (the Bot API server's parse_mode HTML)
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID)
    status, answer = send(chat, CHAT_ID, text, parse_mode="HTML")
    if description is None:
        assert status == 200, answer
    else:
        assert (status, answer["description"]) == (400, f"Bad Request: can't parse entities: {description}")


def test_a_group_upgraded_to_a_supergroup_answers_with_its_new_id_and_keeps_its_messages():
    # Bot API server, Client.cpp: check_chat_access (migrate_to_chat_id)
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID, "group", title="Fleet")
    before = send(chat, CHAT_ID, "a")[1]["result"]["message_id"]
    new = chat.migrate(CHAT_ID)
    assert re.fullmatch(r"-100[0-9]{10}", new) and chat.chats[new].kind == "supergroup" and chat.chats[new].title == "Fleet"
    upgraded = (400, telegram_error(400, "Bad Request: group chat was upgraded to a supergroup chat",
                                    migrate_to_chat_id=int(new)))
    assert send(chat, CHAT_ID) == upgraded
    assert send(chat, int(CHAT_ID)) == upgraded
    assert edit(chat, CHAT_ID, before, "b") == upgraded
    assert chat.handle("getChatMember", {"chat_id": CHAT_ID, "user_id": chat.bot["id"]}) == upgraded
    assert edit(chat, new, before, "b")[1]["description"] == "Bad Request: message to edit not found"
    assert chat.messages[before].chat_id == CHAT_ID and chat.messages[before].text == "a"
    status, answer = send(chat, new, "c")
    assert status == 200 and answer["result"]["chat"] == {"id": int(new), "type": "supergroup", "title": "Fleet"}
    with pytest.raises(ValueError):
        chat.migrate(new)  # a supergroup is not upgraded again


def test_the_world_is_in_its_chat_a_basic_group(world):
    assert world.chat.chats[CHAT_ID].kind == "group"
    assert world.services.telegram.send_message(CHAT_ID, "x") == max(world.chat.messages)


# -- Telegram: replies, deletes, the command menu, the bot's allowed updates, people's commands ------------


MAINTAINER = {"id": 42, "is_bot": False, "first_name": "Maintainer"}


def delete(chat: FakeTelegram, chat_id, message_id) -> tuple[int, dict]:
    return chat.handle("deleteMessage", {"chat_id": chat_id, "message_id": message_id})


def test_a_reply_names_a_message_of_its_chat_or_is_sent_plain_when_allowed_to():
    # ReplyParameters; Client.cpp check_reply_parameters and TdOnCheckMessageCallback (allow_empty)
    now = Now()
    chat = FakeTelegram(clock=now)
    chat.add_chat(CHAT_ID)
    chat.add_chat("-1002", "supergroup")
    first = send(chat, CHAT_ID, "a")[1]["result"]["message_id"]
    elsewhere = send(chat, "-1002", "b")[1]["result"]["message_id"]
    now.at += 60
    status, answer = send(chat, CHAT_ID, "c", reply_parameters={"message_id": first}, disable_notification=True)
    assert status == 200 and answer["result"]["reply_to_message"]["message_id"] == first
    assert "reply_to_message" not in answer["result"]["reply_to_message"]
    reply = chat.messages[answer["result"]["message_id"]]
    assert (reply.reply_to, reply.notified, reply.sent_at) == (first, False, now.at)
    assert answer["result"]["date"] == int(now.at)
    not_found = (400, telegram_error(400, "Bad Request: message to be replied not found"))
    assert send(chat, CHAT_ID, "d", reply_parameters={"message_id": elsewhere}) == not_found  # another chat's
    assert send(chat, CHAT_ID, "d", reply_parameters={"message_id": 999}) == not_found
    status, answer = send(chat, CHAT_ID, "e", reply_parameters={"message_id": 999, "allow_sending_without_reply": True})
    assert status == 200 and chat.messages[answer["result"]["message_id"]].reply_to is None
    assert "reply_to_message" not in answer["result"]
    # a reply into another chat is never sent without it ("Always False for replies in another chat")
    assert send(chat, CHAT_ID, "f", reply_parameters={"message_id": 999, "chat_id": "-1002",
                                                      "allow_sending_without_reply": True}) == not_found
    status, answer = send(chat, CHAT_ID, "g", reply_parameters={"message_id": elsewhere, "chat_id": "-1002"})
    assert status == 200 and chat.messages[answer["result"]["message_id"]].reply_to == elsewhere
    assert send(chat, CHAT_ID, "h", reply_parameters=[first])[1]["description"] == (
        "Bad Request: object expected as reply parameters")
    assert send(chat, CHAT_ID, "h", reply_parameters={"allow_sending_without_reply": True})[1]["description"] == (
        'Bad Request: can\'t find field "message_id"')


def test_a_reply_in_a_forum_topic_whose_message_is_gone_is_refused_even_when_allowed_without_it():
    # ReplyParameters: allow_sending_without_reply is "Always False for replies in another chat or forum topic"
    chat = FakeTelegram(clock=Now())
    chat.add_chat("-1005", "supergroup", forum=True, topics=[7])
    first = send(chat, "-1005", "a", message_thread_id=7)[1]["result"]["message_id"]
    chat.delete(first)
    gone = {"message_id": first, "allow_sending_without_reply": True}
    assert send(chat, "-1005", "b", message_thread_id=7, reply_parameters=gone) == (
        400, telegram_error(400, "Bad Request: message to be replied not found"))
    status, answer = send(chat, "-1005", "c", reply_parameters=gone)  # the General topic: no thread id
    assert status == 200 and "reply_to_message" not in answer["result"]
    status, answer = send(chat, "-1005", "d", message_thread_id=7)  # the same without the reply
    assert status == 200 and answer["result"]["message_thread_id"] == 7


def test_the_bot_deletes_its_own_messages_for_48_hours_and_each_once():
    # deleteMessage's limitations; Client.cpp process_delete_message_query and check_message;
    # MessagesManager.cpp delete_messages (the words per kind of chat)
    now = Now()
    chat = FakeTelegram(clock=now)
    chat.add_chat(CHAT_ID, "group")
    chat.add_chat("-1002", "supergroup")
    kept = {where: [send(chat, where, str(n))[1]["result"]["message_id"] for n in range(2)] for where in (CHAT_ID, "-1002")}
    now.at += 48 * 3600 - 1
    assert delete(chat, CHAT_ID, kept[CHAT_ID][0]) == (200, {"ok": True, "result": True})
    assert kept[CHAT_ID][0] not in chat.messages and chat.deleted == [kept[CHAT_ID][0]]
    assert delete(chat, CHAT_ID, kept[CHAT_ID][0]) == (400, telegram_error(400, "Bad Request: message to delete not found"))
    assert delete(chat, "-1002", kept[CHAT_ID][1])[1]["description"] == "Bad Request: message to delete not found"
    now.at += 1  # 48 hours old
    assert delete(chat, CHAT_ID, kept[CHAT_ID][1]) == (
        400, telegram_error(400, "Bad Request: message can't be deleted for everyone"))
    assert delete(chat, "-1002", kept["-1002"][0]) == (400, telegram_error(400, "Bad Request: message can't be deleted"))
    assert kept[CHAT_ID][1] in chat.messages and chat.deleted == [kept[CHAT_ID][0]]
    assert chat.handle("deleteMessage", {"message_id": 1})[1]["description"] == "Bad Request: chat identifier is not specified"
    assert delete(chat, CHAT_ID, 0)[1]["description"] == "Bad Request: message identifier is not specified"
    assert delete(chat, "-1003", 1)[1]["description"] == "Bad Request: chat not found"


def test_another_persons_message_is_the_bots_to_delete_only_as_an_administrator_who_may():
    # deleteMessage: "If the bot is an administrator of a group, it can delete any message there"; in a
    # supergroup only with can_delete_messages; incoming messages in a private chat always
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID, "group")
    chat.add_chat("-1002", "supergroup")
    chat.add_chat(42, "private")

    def typed(where) -> int:
        return chat.command_update("/status", chat_id=where, user=MAINTAINER)["message"]["message_id"]

    assert delete(chat, CHAT_ID, typed(CHAT_ID))[1]["description"] == "Bad Request: message can't be deleted for everyone"
    assert delete(chat, "-1002", typed("-1002"))[1]["description"] == "Bad Request: message can't be deleted"
    assert delete(chat, 42, typed(42))[0] == 200
    chat.members[chat.bot["id"]] = {"status": "administrator"}
    assert delete(chat, CHAT_ID, typed(CHAT_ID))[0] == 200
    assert delete(chat, "-1002", typed("-1002"))[0] == 400
    chat.members[chat.bot["id"]] = {"status": "administrator", "can_delete_messages": True}
    assert delete(chat, "-1002", typed("-1002"))[0] == 200


def test_a_delete_answers_as_every_call_for_a_group_upgraded_or_a_bot_removed():
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID, "group")
    message_id = send(chat, CHAT_ID)[1]["result"]["message_id"]
    new = chat.migrate(CHAT_ID)
    assert delete(chat, CHAT_ID, message_id) == (400, telegram_error(
        400, "Bad Request: group chat was upgraded to a supergroup chat", migrate_to_chat_id=int(new)))
    chat.kicked = True
    assert delete(chat, new, message_id) == (403, telegram_error(403, "Forbidden: bot was kicked from the supergroup chat"))


def test_a_delete_does_not_count_towards_flood_control():
    # undocumented (tdlib/telegram-bot-api#572: "The limits are high enough to cover all reasonable usages")
    chat = FakeTelegram(clock=Now())
    chat.add_chat(CHAT_ID)
    sent = [send(chat, CHAT_ID, str(n))[1]["result"]["message_id"] for n in range(2)]
    assert [delete(chat, CHAT_ID, m)[0] for m in sent] == [200, 200]
    assert send(chat, CHAT_ID, "third")[0] == 200  # the third message in the window: deletes took no room
    assert send(chat, CHAT_ID, "fourth")[0] == 429


def test_the_command_menu_is_kept_per_scope_and_language_as_telegram_cleans_it():
    # setMyCommands, getMyCommands; BotCommand.cpp set_commands (trimmed, a leading "/" dropped)
    chat = FakeTelegram()
    assert chat.handle("getMyCommands", {}) == (200, {"ok": True, "result": []})
    commands = [{"command": "/status ", "description": " What is red "}, {"command": "help", "description": "Help"}]
    assert chat.handle("setMyCommands", {"commands": json.dumps(commands)}) == (200, {"ok": True, "result": True})
    kept = [{"command": "status", "description": "What is red"}, {"command": "help", "description": "Help"}]
    assert chat.handle("getMyCommands", {})[1]["result"] == kept
    assert chat.handle("getMyCommands", {"scope": {"type": "default"}})[1]["result"] == kept
    assert chat.handle("getMyCommands", {"language_code": "de"})[1]["result"] == []
    assert chat.handle("getMyCommands", {"scope": {"type": "all_group_chats"}})[1]["result"] == []
    assert chat.handle("setMyCommands", {})[0] == 200 and chat.handle("getMyCommands", {})[1]["result"] == []


def test_a_chats_command_menu_is_its_own_scope_and_deleting_the_default_one_leaves_it():
    # BotCommandScopeChat, deleteMyCommands; Client.cpp get_bot_command_scope, check_bot_command_scope
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID, "supergroup")
    menu, other = [{"command": "status", "description": "Status"}], [{"command": "help", "description": "Help"}]
    assert chat.handle("setMyCommands", {"commands": other})[0] == 200  # the default scope: every chat
    scope = {"type": "chat", "chat_id": int(CHAT_ID)}
    assert chat.handle("setMyCommands", {"commands": menu, "scope": scope}) == (200, {"ok": True, "result": True})
    assert chat.handle("getMyCommands", {"scope": json.dumps({"type": "chat", "chat_id": str(CHAT_ID)})})[1]["result"] == menu
    assert chat.handle("getMyCommands", {})[1]["result"] == other  # each scope answers its own list
    assert chat.handle("deleteMyCommands", {}) == (200, {"ok": True, "result": True})
    assert chat.handle("getMyCommands", {})[1]["result"] == [] and chat.menu() == []
    assert chat.menu(CHAT_ID) == [("status", "Status")]  # the chat's is left
    assert chat.handle("deleteMyCommands", {"scope": scope})[0] == 200 and chat.menu(CHAT_ID) == []
    assert chat.handle("deleteMyCommands", {"scope": scope})[0] == 200  # nothing to delete: still True


def test_a_scope_telegram_cannot_take_is_refused_with_its_words():
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID, "group")
    chat.add_chat(-1002, "channel", username="news")
    chat.add_chat(42, "private")
    parse = "Bad Request: can't parse BotCommandScope: "
    for scope, description in [
        ("{", "Bad Request: can't parse BotCommandScope JSON object"),
        (["chat"], parse + "BotCommandScope must be an Object"),
        ({"chat_id": CHAT_ID}, parse + 'Can\'t find field "type"'),
        ({"type": "everyone"}, parse + "Unsupported type specified"),
        ({"type": "chat"}, parse + 'Can\'t find field "chat_id"'),
        ({"type": "chat", "chat_id": ""}, parse + "Empty chat_id specified"),
        ({"type": "chat_member", "chat_id": CHAT_ID, "user_id": 0}, parse + "Invalid user_id specified"),
        ({"type": "chat", "chat_id": -1009}, "Bad Request: chat not found"),
        ({"type": "chat", "chat_id": "@news"}, "Bad Request: can't change commands in channel chats"),
        ({"type": "chat_administrators", "chat_id": 42}, "Bad Request: can't use specified scope in private chats"),
    ]:
        for method in ("setMyCommands", "getMyCommands", "deleteMyCommands"):
            params = {"scope": scope, "commands": [{"command": "help", "description": "Help"}]}
            assert chat.handle(method, params) == (400, telegram_error(400, description)), (method, scope)
    assert chat.handle("getMyCommands", {"scope": {"type": "chat", "chat_id": 42}}) == (200, {"ok": True, "result": []})
    new = chat.migrate(CHAT_ID)  # an upgraded group: its members are read no more, as for every call that needs them
    assert chat.handle("setMyCommands", {"commands": [{"command": "help", "description": "Help"}],
                                         "scope": {"type": "chat", "chat_id": CHAT_ID}}) == (400, telegram_error(
        400, "Bad Request: group chat was upgraded to a supergroup chat", migrate_to_chat_id=int(new)))
    chat.kicked = True
    assert chat.handle("getMyCommands", {"scope": {"type": "chat", "chat_id": new}}) == (
        403, telegram_error(403, "Forbidden: bot was kicked from the supergroup chat"))


@pytest.mark.parametrize(("commands", "description"), [
    ("[{", "Bad Request: can't parse commands JSON object"),
    ({"command": "help"}, "Bad Request: expected an Array of BotCommand"),
    (["help"], "Bad Request: can't parse BotCommand: expected an Object"),
    ([{"command": "help"}], 'Bad Request: can\'t parse BotCommand: Can\'t find field "description"'),
    ([{"command": ["help"], "description": "d"}], 'Bad Request: can\'t parse BotCommand: Field "command" must be of type String'),
    ([{"command": " / ", "description": "d"}], "Bad Request: command must be non-empty"),
    ([{"command": "x" * 33, "description": "d"}], "Bad Request: command length must not exceed 32"),
    ([{"command": "help", "description": "  "}], "Bad Request: command description must be non-empty"),
    ([{"command": "help", "description": "d" * 257}], "Bad Request: command description length must not exceed 256"),
    ([{"command": "Help", "description": "d"}], "Bad Request: BOT_COMMAND_INVALID"),
    ([{"command": "мут", "description": "d"}], "Bad Request: BOT_COMMAND_INVALID"),
    ([{"command": f"c{n}", "description": "d"} for n in range(101)], "Bad Request: BOT_COMMANDS_TOO_MUCH"),
])
def test_a_command_menu_telegram_refuses_is_refused_with_its_words_and_keeps_the_one_before(commands, description):
    chat = FakeTelegram()
    chat.handle("setMyCommands", {"commands": [{"command": "help", "description": "Help"}]})
    assert chat.handle("setMyCommands", {"commands": commands}) == (400, telegram_error(400, description))
    assert chat.handle("getMyCommands", {})[1]["result"] == [{"command": "help", "description": "Help"}]


def test_the_bots_allowed_updates_outlive_the_webhook_and_are_reported_in_telegrams_order():
    # Client.cpp update_allowed_update_types, JsonWebhookInfo; Client.h UpdateType, DEFAULT_ALLOWED_UPDATE_TYPES
    chat = FakeTelegram()

    def allowed():
        return chat.handle("getWebhookInfo", {})[1]["result"].get("allowed_updates")

    assert allowed() is None  # the default: not reported
    chat.handle("setWebhook", {"url": "https://example.test/telegram", "allowed_updates": ["callback_query", "MESSAGE"]})
    assert allowed() == ["message", "callback_query"]
    chat.handle("setWebhook", {"url": "https://example.test/telegram"})  # not given: as it was
    chat.handle("deleteWebhook", {})
    assert allowed() == ["message", "callback_query"]
    chat.handle("getUpdates", {"allowed_updates": json.dumps(["callback_query", "no_such_update"])})
    assert allowed() == ["callback_query"]
    chat.handle("getUpdates", {"allowed_updates": "not json"})
    assert allowed() == ["callback_query"]
    chat.handle("setWebhook", {"url": "https://example.test/telegram", "allowed_updates": []})
    assert allowed() is None


def test_a_command_typed_in_the_chat_comes_as_telegram_sends_it_with_its_bot_command_entity():
    # MessageEntity (offset and length in UTF-16 code units); MessageEntity.cpp match_bot_commands
    now = Now()
    chat = FakeTelegram(clock=now)
    chat.add_chat(CHAT_ID, "group", title="pager")
    update = chat.command_update("/mute@pager_test_bot acme/app 8h", chat_id=CHAT_ID, user=MAINTAINER)
    message = update["message"]
    assert message == {"message_id": message["message_id"], "from": MAINTAINER, "date": int(now.at), "text":
                       "/mute@pager_test_bot acme/app 8h", "chat": {"id": int(CHAT_ID), "type": "group", "title": "pager"},
                       "entities": [{"offset": 0, "length": 20, "type": "bot_command"}]}
    assert chat.messages[message["message_id"]].author == MAINTAINER
    assert chat.command_update("/status", chat_id=CHAT_ID, user=MAINTAINER)["message"]["entities"][0]["length"] == 7
    assert chat.command_update("/help\nmore", chat_id=CHAT_ID, user=MAINTAINER)["message"]["entities"][0]["length"] == 5
    second = chat.command_update("/status", chat_id=CHAT_ID, user=MAINTAINER)
    assert second["update_id"] == update["update_id"] + 3  # one sequence of updates
    assert edit(chat, CHAT_ID, message["message_id"], "x") == (400, telegram_error(400, "Bad Request: message can't be edited"))
    for text in ("status", "/", "/status/x", "hi /status", "/mute@ab x"):
        with pytest.raises(ValueError):
            chat.command_update(text, chat_id=CHAT_ID, user=MAINTAINER)
    with pytest.raises(ValueError):
        chat.command_update("/status", chat_id="-1003", user=MAINTAINER)  # a chat the bot is not in


def test_a_bot_in_privacy_mode_gets_no_command_for_another_bot_and_none_without_message_updates():
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID, "group")
    chat.add_chat(42, "private")
    with pytest.raises(ValueError, match="privacy mode"):
        chat.command_update("/status@other_bot", chat_id=CHAT_ID, user=MAINTAINER)
    assert chat.command_update("/status@PAGER_TEST_BOT", chat_id=CHAT_ID, user=MAINTAINER)  # usernames ignore case
    assert chat.command_update("/status@other_bot", chat_id=42, user=MAINTAINER)  # a private chat has no privacy mode
    chat.bot["can_read_all_group_messages"] = True  # privacy mode off (@BotFather's /setprivacy)
    assert chat.command_update("/status@other_bot", chat_id=CHAT_ID, user=MAINTAINER)
    chat.handle("setWebhook", {"url": "https://example.test/telegram", "allowed_updates": ["callback_query"]})
    with pytest.raises(ValueError, match="allowed_updates"):
        chat.command_update("/status", chat_id=CHAT_ID, user=MAINTAINER)


def test_the_chat_shows_which_messages_buzzed_what_they_reply_to_and_who_wrote_them():
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID, "group")
    loud = send(chat, CHAT_ID, "<b>CI</b> failed")[1]["result"]["message_id"]
    typed = chat.command_update("/mute acme/app", chat_id=CHAT_ID, user=MAINTAINER)["message"]["message_id"]
    quiet = send(chat, CHAT_ID, "muted", disable_notification=True, reply_parameters={"message_id": typed})[1]["result"]
    assert chat.render().splitlines() == [f"🔔 [{loud}] CI failed", f"👤 [{typed}] Maintainer: /mute acme/app",
                                          f"🔕 [{quiet['message_id']}] ↳ [{typed}] muted"]
    view = chat.view()
    assert view == {loud: ("<b>CI</b> failed", None), typed: ("/mute acme/app", None), quiet["message_id"]: ("muted", None)}
    shown = view[quiet["message_id"]]
    assert (shown.notified, shown.reply_to, shown.author, view[typed].author) == (False, typed, None, 42)
    assert repr(shown) == f"🔕 ↳ [{typed}] ('muted', None)"
    chat.messages[loud].notified = False
    assert chat.view() != view and chat.view()[typed] == view[typed]  # two views compare the sound too


def test_a_command_in_the_world_goes_through_the_real_endpoint_and_stays_in_the_chat(world):
    page = world.services.telegram.send_message(CHAT_ID, "a page", buttons=[[("🛠 Start fix", "fix:x")]])
    status, _ = world.command("/status")
    assert status == 200
    [(typed, shown)] = [(m, s) for m, s in world.chat.view().items() if s.author is not None]
    assert shown == ("/status", None) and shown.author == 42 and typed > page
    update = world.press_update("fix:x", message_id=page)
    assert update["update_id"] > 0 and world.chat.button_data(page, "🛠") == "fix:x"


# -- GitHub's rules: permissions, merges, collaborators ----------------------------------------------------


def installation_token(github: FakeGitHub, private_key: str, installation: int) -> dict[str, str]:
    auth = app_jwt(private_key, github.clock())
    answer = github(HttpRequest("POST", f"https://api.github.test/app/installations/{installation}/access_tokens", auth))
    return {"Authorization": f"Bearer {answer.body['token']}"}


@pytest.fixture
def hub(private_key_pem):
    """A fake GitHub where the app is installed on o/r (installation 7), with a pull request and an alert."""
    github = FakeGitHub(clock=lambda: 1_800_000_000.0, api_url="https://api.github.test")
    github.installations["o/r"] = 7
    github.pulls[("o/r", 2)] = {"number": 2, "state": "open", "head": {"sha": "a" * 40}, "mergeable_state": "clean"}
    github.alerts[("o/r", 10)] = {"number": 10, "state": "open"}
    github.token = installation_token(github, private_key_pem, 7)
    return github


def call(github: FakeGitHub, method: str, path: str, body: dict | None = None):
    data = json.dumps(body).encode() if body is not None else b""
    return github(HttpRequest(method, f"https://api.github.test{path}", github.token, data))


def statuses(github: FakeGitHub) -> dict[str, int]:
    return {
        "dispatch": call(github, "POST", "/repos/o/r/dispatches", {"event_type": "pager-fix", "client_payload": {}}).status,
        "read pull": call(github, "GET", "/repos/o/r/pulls/2").status,
        "alert": call(github, "GET", "/repos/o/r/code-scanning/alerts/10").status,
        "collaborator": call(github, "GET", "/repos/o/r/collaborators/octocat").status,
        "repositories": call(github, "GET", "/installation/repositories").status,
    }


def test_an_installation_token_reaches_only_the_endpoints_its_permissions_allow(hub):
    # GitHub docs: "Permissions required for GitHub Apps" and each endpoint's "Fine-grained access tokens" section
    hub.installation_permissions[7] = {}
    assert statuses(hub) == {"dispatch": 403, "read pull": 403, "alert": 403, "collaborator": 403, "repositories": 200}
    answer = call(hub, "PUT", "/repos/o/r/pulls/2/merge", {"sha": "a" * 40, "merge_method": "squash"})
    assert (answer.status, answer.body["message"]) == (403, "Resource not accessible by integration")
    assert "documentation_url" in answer.body and hub.merges == [] and hub.dispatches == []
    hub.installation_permissions[7] = {"metadata": "read", "contents": "read", "security_events": "read"}
    assert statuses(hub) == {"dispatch": 403, "read pull": 200, "alert": 200, "collaborator": 404, "repositories": 200}
    hub.installation_permissions[7] = {"metadata": "read", "pull_requests": "write"}  # write includes read
    assert statuses(hub)["read pull"] == 200
    hub.installation_permissions[7] = {"metadata": "read", "contents": "write"}
    assert statuses(hub)["dispatch"] == 204
    assert call(hub, "PUT", "/repos/o/r/pulls/2/merge", {"sha": "a" * 40, "merge_method": "squash"}).status == 200


def test_an_installation_without_its_own_permissions_holds_the_apps(hub, private_key_pem):
    hub.register_app({"name": "pager", "url": "https://example.test", "default_permissions": {"metadata": "read"}},
                     app_id=12345, pem=private_key_pem)
    assert statuses(hub)["dispatch"] == 403
    hub.app["permissions"] = {"metadata": "read", "contents": "write"}
    assert statuses(hub)["dispatch"] == 204


def test_a_reinstalled_app_holds_what_its_owner_accepted_before(hub, private_key_pem):
    hub.installation_permissions[7] = {"metadata": "read", "contents": "write"}
    new = hub.reinstall(7)
    hub.token = installation_token(hub, private_key_pem, new)
    assert hub.installation_permissions[new] == {"metadata": "read", "contents": "write"} and statuses(hub)["dispatch"] == 204


def test_the_worlds_installation_holds_exactly_what_pagers_manifest_asks_for(world):
    from pager.admin.manifest import needed_permissions

    assert world.hub.installation_permissions[1] == needed_permissions()


def test_a_merge_of_a_closed_pull_request_or_with_an_unknown_method_is_refused(hub):
    # GitHub docs, "Merge a pull request": 405 not mergeable; 422 validation failed (merge_method's enum)
    hub.installation_permissions[7] = {"metadata": "read", "contents": "write"}
    answer = call(hub, "PUT", "/repos/o/r/pulls/2/merge", {"sha": "a" * 40, "merge_method": "fast-forward"})
    assert (answer.status, answer.body["message"]) == (422, "Validation Failed")
    [error] = answer.body["errors"]
    assert error["code"] == "invalid" and error["field"] == "merge_method" and error["value"] == "fast-forward"
    hub.pulls[("o/r", 2)]["state"] = "closed"
    answer = call(hub, "PUT", "/repos/o/r/pulls/2/merge", {"sha": "a" * 40, "merge_method": "squash"})
    assert (answer.status, answer.body["message"]) == (405, "Pull Request is not mergeable")
    assert hub.merges == []


def test_a_collaborator_is_any_login_with_access_compared_case_insensitively(hub):
    # GitHub docs, "Check if a user is a repository collaborator": 204 or 404, no body; Metadata read
    hub.installation_permissions[7] = {"metadata": "read"}
    hub.collaborators["o/r"] = {"Octocat", "team-member"}
    for login, status in (("octocat", 204), ("OCTOCAT", 204), ("Team-Member", 204), ("stranger", 404)):
        answer = call(hub, "GET", f"/repos/o/r/collaborators/{login}")
        assert (answer.status, answer.body) == (status, None), login
    hub.installations["o/other"] = 7
    assert call(hub, "GET", "/repos/o/other/collaborators/octocat").status == 404


@pytest.mark.parametrize("text, words", [
    ("⚙️ pager needs you: delivery 6b65b9c8-1d2e-11ef-9f1c-5b3e1a2b3c4d failed", "a delivery's guid"),
    ("1 signal refused since 2026-12-04T16:31:39Z", "a raw ISO time"),
    ("issues.opened of acme/lib: all attempts failed", "an event.action"),
    ("a workflow_run event of acme/lib", "an event's name"),
    ("failed for now: DynamoDB load release#186853002#2", "a table key"),
    ("⚠️ failed for now: ThrottlingException", "an exception's class"),
    ("⚠️ <b>TelegramUnavailable</b>", "an exception's class"),
    ("⚠️ MessageNotEditable", "an exception's class"),
    ("delivery 6B65B9C8-1D2E-11EF-9F1C-5B3E1A2B3C4D", "a delivery's guid"),
    ("refused since 2026-12-04 16:31:39", "a raw ISO time"),
    ("DynamoDB load command#77: busy", "a table key"),
    ("⚙️ delivery:6b65b9c8 failed", "a table key"),
])
def test_the_chats_guard_knows_pagers_own_words(text, words):
    from support import own_words

    assert [found.split(":")[0] for found in own_words(text)] == [words]


def test_the_chats_guard_lets_githubs_words_and_links_by():
    from support import own_words

    assert own_words('💬 bob\'s comment on <a href="https://github.com/acme/lib/issues/3#issuecomment-1">acme/lib#3</a>'
                     ' at 16:31, CI run #88 on main failed; <a href="https://x.test/2026-12-04T16:31:39Z">Error log</a>') == []
    # a repository called release, a file of a branch, English words that are also pager's classes' names
    assert own_words("🚨 acme/release#1 is red on docs/issues.md: Busy loop, Conflict resolved, Held back") == []
