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
    ("clean", 200), ("unstable", 200), ("has_hooks", 200), ("behind", 200), ("blocked", 405), ("dirty", 405)])
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
    # API-NOTES ("query is too old" after about 15 minutes); Client.cpp maps QUERY_ID_INVALID to the description
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
    # Telegram Bot FAQ, "My bot is hitting limits, how do I avoid this?"; API-NOTES: edits count too
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
    # Bot API server, Client.cpp: check_chat_access (migrate_to_chat_id); API-NOTES
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
