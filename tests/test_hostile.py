"""Other people's text in every field: GitHub's example payloads with hostile text put into each string
field, and random text through every signal, against the strict fake Telegram.

Titles, bodies, logins, workflow and rule names, tags, repository names are other people's text: each
reaches the chat escaped, never as markup (Telegram refuses a whole message for one bare `&`). No
delivery may answer 500 for it, and Telegram must accept every message pager sends.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import examples

from pager_world.cases import alert, issue_opened, outside, pull, run, suite
from pager_world.payloads import fixture_files
from pager_world.world import World

HOSTILE = ' <b>x & y</b> </i> "q" \'a\' <script>alert(1)</script> &amp; &nbsp; > 1 < 2 ✅ 𝕏'

# Fields whose values GitHub takes from a fixed set (or which a handler matches exactly): these keep
# their values, so that the payload still takes its way through the signals; every other string
# gets the hostile text.
KEPT = frozenset({"action", "state", "conclusion", "status", "author_association", "type", "default_branch",
                  "head_branch", "ref", "sha", "head_sha", "node_id", "created_at", "updated_at", "closed_at",
                  "merged_at", "submitted_at", "published_at", "fixed_at", "dismissed_at", "answer_chosen_at",
                  "security_severity_level", "severity", "slug", "merge_commit_sha", "after", "before"})


def hostile(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: hostile(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [hostile(v, key) for v in value]
    if isinstance(value, str) and key not in KEPT:
        return value + HOSTILE
    return value


@pytest.fixture(scope="module")
def one_world(private_key_pem):
    return World(private_key_pem)


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name.removesuffix('.payload.json')}")
def test_every_example_payload_with_hostile_text_in_each_string_field_is_answered_and_every_message_accepted(one_world, path):
    payload = hostile(json.loads(path.read_text()))
    payload["repository"] = {**payload.get("repository", {}), "full_name": "Codertocat/Hello-World"} \
        if isinstance(payload.get("repository"), dict) else payload.get("repository")
    refused = len(one_world.telegram.refused)
    status, answer = one_world.deliver(path.parent.name, payload)
    assert status != 500, answer
    assert one_world.telegram.refused[refused:] == []


def test_hostile_text_in_a_repositorys_own_name_reaches_the_chat_escaped(world):
    body = issue_opened(**{"repository.full_name": 'o&o/<r>"', "issue.title": HOSTILE})
    assert world.deliver("issues", body)[0] == 200
    assert world.telegram.refused == [] and len(world.chat.sent) == 1


text = st.lists(st.sampled_from(list('<>&"\'ab /;#=') + ["&amp;", "&lt;", "<b>", "</b>", "é", "𝕏", "\n"]), max_size=30).map("".join)


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=text, body=text, name=text, login=text)
def test_random_text_through_every_signal_is_accepted_by_telegram(private_key_pem, title, body, name, login):
    world = World(private_key_pem)
    login = login.strip() or "x"
    deliveries = [
        ("issues", issue_opened(**{"issue.title": title, "issue.body": body, "issue.user.login": login})),
        ("issue_comment", outside("issue_comment", "created", who="comment", **{"comment.body": body, "issue.title": title})),
        ("workflow_run", run("failure", name=name)),
        ("check_suite", suite("failure", slug="lint" + name.replace("/", ""), updated_at="2019-05-15T15:21:14Z")),
        ("code_scanning_alert", alert("created", **{"ref": "refs/heads/master", "alert.rule.description": name})),
        ("pull_request", pull("opened", **{"pull_request.title": title})),
    ]
    for event, payload in deliveries:
        world.advance(1)  # a minute apart: the texts here, not the chat's pace
        assert world.deliver(event, payload)[0] == 200
    assert world.telegram.refused == []
