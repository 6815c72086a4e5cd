"""The fake world's own rules (sim/pager_world): its fault model, its fakes, its closed loop.

The rest of the suite trusts these fakes to answer as GitHub and Telegram do; each rule here names
what it follows.
"""

from __future__ import annotations

import json

import jwt
import pytest

from pager.errors import StoreUnavailable, Transient
from pager_world.cases import issue_opened, run
from pager_world.faults import Faults
from pager_world.github import FakeGitHub
from pager_world.http import HttpRequest
from pager_world.telegram import FakeTelegram
from pager_world.world import CHAT_ID


def test_the_fake_chat_applies_edits_and_says_not_modified_and_not_found_like_telegram():
    chat = FakeTelegram()
    status, answer = chat.handle("sendMessage", {"chat_id": CHAT_ID, "text": "a"})
    message_id = answer["result"]["message_id"]
    assert chat.handle("editMessageText", {"message_id": message_id, "text": "b"})[0] == 200
    status, answer = chat.handle("editMessageText", {"message_id": message_id, "text": "b"})
    assert status == 400 and answer["description"].startswith("Bad Request: message is not modified")
    status, answer = chat.handle("editMessageText", {"message_id": 999, "text": "b"})
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
