"""The fake world's own rules (sim/pager_world): its fault model, its fakes, its closed loop.

The rest of the suite trusts these fakes to answer as GitHub and Telegram do; each rule here names
what it follows.
"""

from __future__ import annotations

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


def test_the_deliveries_list_pages_newest_first_filters_failures_and_chains_pages_by_its_link():
    now = [1_800_000_000.0]
    github = FakeGitHub(clock=lambda: now[0], api_url="https://api.github.test")
    for code in (200, 502, 200, 0, 404, 200, 500):
        github.record("g", "issues", "opened", 1, code)
        now[0] += 1
    first = github(HttpRequest("GET", "https://api.github.test/app/hook/deliveries?per_page=3", {}))
    assert [d["status_code"] for d in first.body] == [500, 200, 404]
    link = first.headers["Link"]
    assert link.endswith('>; rel="next"')
    second = github(HttpRequest("GET", link[1: link.index(">")], {}))
    assert [d["status_code"] for d in second.body] == [0, 200, 502]
    failures = github(HttpRequest("GET", "https://api.github.test/app/hook/deliveries?per_page=100&status=failure", {}))
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
