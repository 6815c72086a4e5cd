"""The webhook endpoint end to end: API Gateway events through functions/webhook/app.py:lambda_handler.

DynamoDB is moto, GitHub and Telegram are the fake world's (their transport mounted on the clients'
session); every example payload GitHub publishes goes through the real handler, signed with the test
secret.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import itertools
import json
import time
from pathlib import Path

import boto3
import pytest
from moto import mock_aws
from support import TEST_ENV, github_event, load_payload, sign, telegram_event

from pager import bootstrap
from pager.admin.manifest import needed_permissions
from pager.dynamo import create_table
from pager.routing import verify_signature
from pager_world.clock import Clock
from pager_world.github import FakeGitHub
from pager_world.http import session_for
from pager_world.payloads import fixture_files
from pager_world.telegram import FakeTelegram
from pager_world.world import BOT_TOKEN, TELEGRAM_SECRET, WEBHOOK_SECRET

ROOT = Path(__file__).resolve().parents[1]


def load_function(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_function", ROOT / "functions" / name / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


webhook = load_function("webhook")


class Context:
    aws_request_id = "req-1"
    function_name = "WebhookFunction"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:WebhookFunction"

    def get_remaining_time_in_millis(self) -> int:
        return 15_000


@contextlib.contextmanager
def deployment(env):
    """A deployment in miniature: the table on moto, GitHub and Telegram emulated."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_table(client, env["PAGER_TABLE"])
        github = FakeGitHub(clock=time.time, api_url=TEST_ENV["GITHUB_API_URL"])  # the clients' clock
        github.installations[TEST_ENV["CONTROL_REPOSITORY"]] = 1
        github.installation_permissions[1] = needed_permissions()  # what the README has the maintainer accept
        telegram = FakeTelegram(clock=Clock(time.time()))  # its own clock: the tests space their messages
        telegram.add_chat(TEST_ENV["TELEGRAM_CHAT_ID"], "group")  # the maintainer's chat, the bot in it
        session = session_for({TEST_ENV["GITHUB_API_URL"]: github, TEST_ENV["TELEGRAM_API_URL"]: telegram})
        bootstrap.use(bootstrap.build_services(env, dynamodb=client, session=session, sleep=lambda s: None))
        try:
            yield github, telegram
        finally:
            bootstrap.use(None)


TABLES = itertools.count(1)


@pytest.fixture
def world(pager_env):
    with deployment(dict(pager_env, PAGER_TABLE=f"pager-test-{next(TABLES)}")) as parts:
        yield parts


@pytest.fixture(scope="module")
def one_world(private_key_pem):
    """One deployment for many deliveries (the table is created once)."""
    with deployment(dict(TEST_ENV, GITHUB_PRIVATE_KEY=private_key_pem, PAGER_TABLE="pager-test-many")) as parts:
        yield parts


def call(event):
    answer = webhook.lambda_handler(event, Context())
    return answer["statusCode"], json.loads(answer["body"])


def test_githubs_documented_signature_vector_verifies():
    body = b"Hello, World!"
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert verify_signature(body, expected, "It's a Secret to Everybody")
    assert sign(body, "It's a Secret to Everybody") == expected
    assert not verify_signature(body, expected, "another secret")
    assert not verify_signature(b"Hello, World?", expected, "It's a Secret to Everybody")


PAYLOADS = fixture_files()


def test_the_fixtures_are_there():
    assert len(PAYLOADS) > 200


@pytest.mark.parametrize("path", PAYLOADS, ids=lambda p: f"{p.parent.name}/{p.name.removesuffix('.payload.json')}")
def test_every_example_payload_is_answered_without_a_500_while_github_and_telegram_are_healthy(one_world, path):
    payload = json.loads(path.read_text())
    one_world[1].clock.advance(60)  # one delivery a minute: the payloads here, not the chat's pace
    status, body = call(github_event(path.parent.name, payload, guid=f"guid-{path.parent.name}-{path.name}"))
    assert status == 200, body


def test_a_ping_is_answered_pong(world):
    status, body = call(github_event("ping", {"zen": "Keep it logically awesome.", "hook_id": 1}))
    assert (status, body) == (200, {"outcome": "pong"})


def test_an_event_nobody_handles_is_answered_ignored(world):
    status, body = call(github_event("star", {"action": "created", "repository": {"full_name": "o/r", "id": 1}}))
    assert (status, body) == (200, {"outcome": "ignored"})


def test_a_form_encoded_body_is_verified_and_parsed(world):
    status, body = call(github_event("ping", {"zen": "Design for failure.", "hook_id": 1}, form=True))
    assert (status, body) == (200, {"outcome": "pong"})


def test_a_json_body_sent_base64_encoded_is_verified_over_the_decoded_bytes(world):
    event = github_event("ping", {"zen": "x", "hook_id": 1})
    event["body"] = base64.b64encode(event["body"].encode()).decode()
    event["isBase64Encoded"] = True
    assert call(event) == (200, {"outcome": "pong"})


@pytest.mark.parametrize(
    "change,status,reason",
    [
        (lambda e: e["headers"].pop("x-hub-signature-256"), 401, "missing X-Hub-Signature-256"),
        (lambda e: e["headers"].update({"x-hub-signature-256": sign(b"other", WEBHOOK_SECRET)}), 401, "does not match"),
        (lambda e: e["headers"].update({"x-hub-signature-256": sign(e["body"].encode(), "wrong")}), 401, "does not match"),
        (lambda e: e["headers"].update({"x-hub-signature-256": "sha1=abc"}), 401, "does not match"),
        (lambda e: e["headers"].pop("x-github-event"), 400, "X-GitHub-Event"),
        (lambda e: e["headers"].pop("x-github-delivery"), 400, "X-GitHub-Delivery"),
    ],
    ids=["unsigned", "signature-of-another-body", "wrong-secret", "wrong-scheme", "no-event-header", "no-delivery-header"],
)
def test_a_request_the_pager_refuses_gets_its_4xx_with_a_reason(world, change, status, reason):
    event = github_event("issues", {"action": "opened"})
    change(event)
    answer_status, body = call(event)
    assert answer_status == status
    assert reason in body["error"]


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b"\xff\xfe"], ids=["text", "json-array", "not-utf8"])
def test_a_signed_body_that_is_not_a_json_object_is_a_400(world, raw):
    status, body = call(github_event("issues", raw))
    assert status == 400 and "JSON" in body["error"]


def test_a_wrong_telegram_secret_token_is_a_401_and_acts_on_nothing(world):
    github, telegram = world
    answer = webhook.lambda_handler(telegram_event({"update_id": 1}, secret="guess"), Context())
    assert answer["statusCode"] == 401
    answer = webhook.lambda_handler(telegram_event({"update_id": 1}, secret=None), Context())
    assert answer["statusCode"] == 401
    assert telegram.requests == []


def test_a_guid_is_the_lines_correlation_id_only_once_its_signature_holds_and_never_the_next_invocations(
        world, log_lines):
    # Powertools keeps a correlation id across the invocations of a warm container: an unsigned request's guid
    # is anyone's word, and must not follow the next requests' lines.
    assert call(github_event("ping", {"zen": "x"}, secret="guess", guid="chosen-by-anyone"))[0] == 401
    assert call(telegram_event({"update_id": 1}))[0] == 200
    assert call(github_event("ping", {"zen": "x"}, guid="signed-guid"))[0] == 200
    lines = [line for line in log_lines() if line.get("message") in ("delivery", "telegram update")]
    assert [line.get("correlation_id") for line in lines] == [None, None, "signed-guid"]
    assert lines[0]["guid"] == "chosen-by-anyone"  # what the request said stays in its own line, as its field


def test_an_unknown_path_is_a_404(world):
    event = github_event("ping", {"zen": "x"})
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/elsewhere"
    assert webhook.lambda_handler(event, Context())["statusCode"] == 404


def test_every_settings_problem_fails_the_invocation_with_one_log_line_naming_them_all(monkeypatch, log_lines, pager_env):
    bootstrap.use(None)
    monkeypatch.delenv("TELEGRAM_CHAT_ID")
    monkeypatch.delenv("GITHUB_APP_SLUG")
    monkeypatch.setenv("GITHUB_API_URL", "ftp://api.github.com")
    monkeypatch.setenv("SWEEP_MAX_ATTEMPTS", "0")
    answer = webhook.lambda_handler(github_event("ping", {"zen": "x"}), Context())
    assert answer["statusCode"] == 500 and "not configured" in answer["body"]
    [line] = [line for line in log_lines() if line.get("message") == "configuration"]
    assert line["problems"] == ["missing GITHUB_APP_SLUG, TELEGRAM_CHAT_ID",
                                "GITHUB_API_URL must be an https URL (plain http only to this machine)",
                                "SWEEP_MAX_ATTEMPTS must be at least 1"]
    assert line["error"] == "settings: " + "; ".join(line["problems"])


def test_each_delivery_logs_one_structured_line_with_its_guid_and_no_secret(world, log_lines, private_key_pem):
    call(github_event("ping", {"zen": "x", "hook_id": 1}, guid="guid-log-1"))
    call(github_event("issues", {"action": "opened"}, guid="guid-log-2", secret="wrong"))
    records = [r for r in log_lines() if r["message"] == "delivery"]
    assert len(records) == 2
    by_guid = {r["guid"]: r for r in records}
    assert by_guid["guid-log-1"]["correlation_id"] == "guid-log-1"
    assert "correlation_id" not in by_guid["guid-log-2"]  # unsigned: its guid is anyone's word, kept as a field only
    out = json.dumps(log_lines())
    assert by_guid["guid-log-1"]["outcome"] == "pong" and by_guid["guid-log-1"]["status"] == 200
    assert by_guid["guid-log-1"]["event"] == "ping" and "duration_ms" in by_guid["guid-log-1"]
    assert by_guid["guid-log-2"]["status"] == 401
    # Powertools' inject_lambda_context: each line carries the invocation's request id and whether it was cold
    assert all(r["function_request_id"] == "req-1" and r["function_name"] == "WebhookFunction" for r in records)
    assert all(isinstance(r["cold_start"], bool) for r in records)
    for secret in (WEBHOOK_SECRET, TELEGRAM_SECRET, BOT_TOKEN, private_key_pem.splitlines()[1]):
        assert secret not in out


def test_a_handler_past_its_deadline_answers_500_and_starts_no_new_step(world, monkeypatch):
    from pager import webhook as intake

    github, telegram = world
    ticks = itertools.chain([0.0, 0.0], itertools.repeat(100.0))
    payload = load_payload("issues", "opened")
    payload["issue"]["author_association"] = "NONE"
    from pager.bootstrap import services

    status, body = intake.handle_github(github_event("issues", payload), services(), seconds=8, monotonic=lambda: next(ticks))
    assert status == 500 and "deadline" in body["error"]
    assert telegram.requests == [] and github.requests == []


def test_a_refusal_no_retry_can_fix_is_answered_424_and_logged_as_an_error(world, log_lines):
    github, telegram = world
    github.fail(r"/dispatches$", 404, count=5, body={"message": "Not Found"})
    payload = load_payload("issues", "opened")
    payload["issue"]["author_association"] = "NONE"
    status, body = call(github_event("issues", payload, guid="guid-refused"))
    assert status == 424 and body["outcome"] == "refused"
    (line,) = [r for r in log_lines() if r["message"] == "delivery" and r["guid"] == "guid-refused"]
    assert line["level"] == "ERROR" and line["outcome"] == "refused upstream" and "404" in line["reason"]


def test_settings_that_cannot_be_read_now_answer_500_with_one_log_line(monkeypatch, log_lines, pager_env):
    from pager.errors import SecretsUnavailable

    def throttled(env, **kwargs):
        raise SecretsUnavailable("the secret /pager/pager/secrets could not be read now: ThrottlingException")

    bootstrap.use(None)
    monkeypatch.setattr(bootstrap, "build_services", throttled)
    answer = webhook.lambda_handler(github_event("ping", {"zen": "x"}), Context())
    assert answer["statusCode"] == 500 and "could not read its settings now" in answer["body"]
    [line] = [line for line in log_lines() if line.get("message") == "settings not read"]
    assert line["kind"] == "SecretsUnavailable" and "ThrottlingException" in line["error"]
