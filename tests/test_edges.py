"""Edges that must never escape as an exception or a secret: hostile bodies with a valid signature or
secret token, odd button data, effects that may have happened unrecorded, and DEBUG logging.

Driven through the real endpoints in the fake world, and, for the logs, through the real botocore
(on moto) and the real urllib3 (against a server on loopback) with the root logger at DEBUG.
"""

from __future__ import annotations

import io
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
import requests
from moto import mock_aws
from support import TEST_ENV

from pager.errors import ConfigError
from pager.settings import Settings
from pager.telegram import Telegram
from pager.webhook import handle_github, handle_telegram
from pager_world.cases import alarmed, issue_opened
from pager_world.events import github_event, telegram_event
from pager_world.world import BOT_TOKEN, TELEGRAM_SECRET, WEBHOOK_SECRET


def nested(depth: int) -> bytes:
    return b'{"a":' + b"[" * depth + b"]" * depth + b"}"


@pytest.mark.parametrize("depth", [100_000, 2_000])
def test_a_signed_body_nested_too_deeply_is_a_400_with_a_reason(world, depth):
    status, body = handle_github(github_event("issues", nested(depth), secret=WEBHOOK_SECRET), world.services)
    assert status in (200, 400)
    if status == 400:
        assert body["error"] == "body nests too deeply"


def test_a_telegram_update_nested_too_deeply_is_a_400_with_a_reason(world):
    event = telegram_event({}, secret=TELEGRAM_SECRET)
    event["body"] = nested(100_000).decode()
    assert handle_telegram(event, world.services) == (400, {"error": "body nests too deeply"})


@pytest.mark.parametrize("number", ["²", "١٢", "9" * 5000, "-1", "1e3", ""])
def test_merge_data_with_a_number_that_is_not_plain_ascii_digits_is_not_known(world, number):
    status, answer = world.update(world.press_update(f"merge:0123456789abcdef:{number}", message_id=1))
    assert (status, answer["outcome"]) == (200, "this button is not known")


def test_a_press_with_a_callback_id_too_long_for_a_table_key_is_answered(world):
    alarmed(world)
    message_id = max(world.chat.messages)
    data = world.chat.button_data(message_id, "🛠")
    long_id = "x" * 5000
    status, answer = world.update(world.press_update(data, message_id=message_id, callback_id=long_id))
    assert (status, answer["outcome"]) == (200, "🛠 fix started")
    assert all(len(key) < 100 for key in world.store.dump())
    assert world.update(world.press_update(data, message_id=message_id, callback_id=long_id))[1]["outcome"] == "🛠 fix started"
    assert len(world.hub.dispatches) == 1


# -- an effect that may have happened ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["github-no-answer", "github-reset"])
def test_a_start_fix_whose_dispatch_got_no_answer_says_it_may_have_happened_and_a_second_press_dispatches_nothing(world, kind):
    alarmed(world)
    world.faults.fail_next(kind, f"POST /repos/{world.settings.control_repository}/dispatches")
    status, answer = world.press("🛠")
    assert status == 200 and answer["outcome"].startswith("uncertain: ")
    assert world.chat.answers[-1][1].startswith("⚠️ this may have happened already")
    assert len(world.hub.dispatches) == 1  # GitHub did act
    # The claim stays until its lease passes: a second press is told to look, and dispatches nothing.
    assert world.press("🛠")[1]["outcome"].startswith("busy: ")
    assert world.chat.answers[-1][1].startswith("⏳ an earlier press is at it, or may have done it")
    assert len(world.hub.dispatches) == 1


def test_a_press_while_a_delivery_renders_its_message_is_told_pager_is_busy_not_of_an_earlier_press(world):
    from pager.engine.settle import PENDING
    from pager_world.world import REPO_ID

    alarmed(world)
    record = world.store.load(f"alarm#{REPO_ID}")  # a delivery's claim: it is editing the alarm's message
    world.store.save(record, {**record.data, PENDING: {"effect": "EditMessage", "until": world.now + 180}})
    assert world.press("🛠")[1]["outcome"].startswith("busy: ")
    assert world.chat.answers[-1][1] == "⏳ pager is busy with this message: press again in a minute"
    assert world.hub.dispatches == []


def test_a_start_fix_dispatched_but_not_recorded_says_so(world):
    alarmed(world)
    control = world.settings.control_repository

    def after_the_dispatch(service, name):  # the table refuses the dispatch's record, and its retries
        if (service, name) == ("github", f"POST /repos/{control}/dispatches"):
            world.faults.fail("store", r"^save alarm#[^ ]+$", kind="store", count=3)

    world.faults.observers.append(after_the_dispatch)
    status, answer = world.press("🛠")
    assert status == 200 and answer["outcome"].startswith("uncertain: ") and "recording it failed" in answer["outcome"]
    assert world.chat.answers[-1][1].startswith("⚠️ this may have happened already")
    assert len(world.hub.dispatches) == 1


# -- secrets in DEBUG logs ------------------------------------------------------------------------------


@pytest.fixture
def debug_logs():
    """Everything any logger writes, with the root logger at DEBUG (as LogLevel=DEBUG sets it)."""
    from pager.observe import quiet_libraries  # what importing pager does at a cold start

    root = logging.getLogger()
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setLevel(logging.DEBUG)
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    quiet_libraries()
    try:
        yield buffer
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


@pytest.mark.parametrize("store", ["ssm", "secretsmanager"])
def test_reading_the_secret_at_debug_level_logs_no_secret(debug_logs, monkeypatch, private_key_pem, store):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    secrets = {"GITHUB_PRIVATE_KEY": private_key_pem, "GITHUB_WEBHOOK_SECRET": "hook-secret-4711",
               "TELEGRAM_BOT_TOKEN": "99:bot-token-4711", "TELEGRAM_WEBHOOK_SECRET": "tg-secret-4711"}
    env = {k: v for k, v in TEST_ENV.items() if k not in secrets}
    with mock_aws():
        if store == "ssm":  # the stack's: a SecureString parameter
            secret_id = "/pager/secrets"
            boto3.client("ssm", region_name="us-east-1").put_parameter(
                Name=secret_id, Value=json.dumps(secrets), Type="SecureString")
        else:  # a Secrets Manager secret (a stack of before, or one of the operator's own)
            secret_id = boto3.client("secretsmanager", region_name="us-east-1").create_secret(
                Name="pager-test", SecretString=json.dumps(secrets))["ARN"]
        from aws_lambda_powertools.utilities import parameters

        parameters.clear_caches()
        settings = Settings.from_env({**env, "PAGER_SECRET_ID": secret_id})
        parameters.clear_caches()
        with pytest.raises(ConfigError, match="does not exist yet: run `make setup`"):
            Settings.from_env({**env, "PAGER_SECRET_ID": "/elsewhere/secrets" if store == "ssm" else "elsewhere"})
    assert settings.telegram_bot_token == "99:bot-token-4711"
    out = debug_logs.getvalue()
    for value in ("hook-secret-4711", "bot-token-4711", "tg-secret-4711", private_key_pem.splitlines()[1]):
        assert value not in out


def test_a_telegram_call_at_debug_level_logs_no_bot_token(debug_logs):
    class Bot(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = json.dumps({"ok": True, "result": {"message_id": 7}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Bot)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        session = requests.Session()
        session.trust_env = False
        telegram = Telegram(session, token=BOT_TOKEN, api_url=f"http://127.0.0.1:{server.server_address[1]}")
        assert telegram.send_message("-1", "hello") == 7
    finally:
        server.shutdown()
        server.server_close()
    assert BOT_TOKEN not in debug_logs.getvalue()
    assert BOT_TOKEN.split(":")[1] not in debug_logs.getvalue()


@pytest.mark.parametrize("kind", ["telegram-no-answer", "telegram-reset"])
def test_a_message_whose_answer_never_came_is_not_sent_again_by_the_redelivery_that_follows(world, kind):
    # Telegram showed it, then the answer timed out or the connection closed before it: 500, and the
    # claim stays for its lease, so GitHub's redelivery moments later shows it no second time.
    world.faults.fail_next(kind, "sendMessage")
    guid = "shown-once"
    assert world.deliver("issues", issue_opened(), guid=guid)[0] == 500
    assert world.deliver_again(guid)[0] == 500
    assert len(world.chat.sent) == 1


def test_a_message_that_never_reached_telegram_is_sent_by_the_redelivery(world):
    world.faults.fail_next("telegram-unreachable", "sendMessage")
    guid = "never-reached"
    assert world.deliver("issues", issue_opened(), guid=guid)[0] == 500 and world.chat.sent == []
    assert world.deliver_again(guid)[0] == 200 and len(world.chat.sent) == 1
