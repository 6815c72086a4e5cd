"""Whatever the webhook function is given, it answers: through functions/webhook/app.py:lambda_handler, in
the fake world, both routes (POST /github and POST /telegram).

An event API Gateway would never send (no `requestContext`, headers that are not text, a body of another
type, an odd `isBase64Encoded`) and text no client can send (a lone surrogate: a JSON `"\\ud800"` escape
makes one, which `json.loads` takes, in the body, a header's name or value, the path) are answered with a
4xx and its reason, in one log line: never an exception, never a 500 (which GitHub and Telegram would send
again), never a line lost because it could not be written. The property test draws the same examples every
run (conftest's profile, as every property test of the suite); the examples below it name the cases one by one.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import examples, invoke_webhook

from pager_world.events import github_event, telegram_event
from pager_world.world import TELEGRAM_SECRET, WEBHOOK_SECRET

# The lines that tell how a request was answered (one per request).
ANSWER_LINES = frozenset({"request refused", "delivery", "handler crashed", "telegram update", "telegram update refused",
                          "telegram update failed", "telegram update crashed"})
SIGNATURE, SECRET, EVENT, GUID = "x-hub-signature-256", "x-telegram-bot-api-secret-token", "x-github-event", "x-github-delivery"


def github(payload: dict[str, Any] | bytes | None = None) -> dict[str, Any]:
    return github_event("ping", payload if payload is not None else {"zen": "Keep it simple.", "hook_id": 1},
                        secret=WEBHOOK_SECRET)


def telegram(body: bytes | None = None) -> dict[str, Any]:
    event = telegram_event({"update_id": 1}, secret=TELEGRAM_SECRET)
    if body is not None:
        event["body"] = body.decode()
    return event


def answered(world, log_lines, event: Any) -> tuple[int, dict[str, Any]]:
    """The function's answer to `event`, which must be a 2xx or a 4xx with its reason, in one log line."""
    before = len(log_lines())
    status, body = invoke_webhook(world, event)
    lines = [line for line in log_lines()[before:] if line.get("message") in ANSWER_LINES]
    assert len(lines) == 1, lines
    assert 200 <= status < 500, (status, body)
    if status >= 400:
        assert body.get("error"), body
    return status, body


# -- the property -------------------------------------------------------------------------------------------

lone = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)  # a surrogate without its pair
plain = st.text(max_size=6)
unsendable = st.tuples(plain, lone, plain).map("".join)
odd = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.booleans(), st.lists(st.integers(), max_size=2),
                st.dictionaries(st.text(max_size=2), st.integers(), max_size=2), st.binary(max_size=4))
HEADERS = [SIGNATURE, SECRET, EVENT, GUID, "content-type", "user-agent"]


def _set(event: Any, path: tuple[str, ...], value: Any) -> None:
    """Set (or, for `...`, remove) a field of the event, when the way to it is there."""
    for name in path[:-1]:
        event = event.get(name) if isinstance(event, dict) else None
    if isinstance(event, dict):
        if value is ...:
            event.pop(path[-1], None)
        else:
            event[path[-1]] = value


@st.composite
def changes(draw) -> list[tuple[str, Any]]:
    """What to do to a request: put a lone surrogate somewhere, or give a field a value of another kind."""
    change = st.one_of(
        st.tuples(st.just("body text"), st.integers(0, 40), lone),
        st.tuples(st.just("escaped in the body, signed"), st.integers(0xD800, 0xDFFF)),
        st.tuples(st.just("header"), st.sampled_from(HEADERS), st.one_of(unsendable, odd)),
        st.tuples(st.just("header name"), unsendable),
        st.tuples(st.just("field"), st.sampled_from([("headers",), ("body",), ("isBase64Encoded",), ("requestContext",),
                                                    ("requestContext", "http"), ("requestContext", "http", "method"),
                                                    ("requestContext", "stage"), ("rawPath",)]),
                  st.one_of(odd, unsendable, st.just(...), st.sampled_from(["true", "false", "GET", "/elsewhere"]))),
        st.tuples(st.just("event"), odd),
    )
    return draw(st.lists(change, min_size=1, max_size=3))


def changed(event: dict[str, Any], steps: list[tuple[Any, ...]]) -> Any:
    event = copy.deepcopy(event)
    for kind, *how in steps:
        if kind == "event":
            return how[0]
        if kind == "body text" and isinstance(event.get("body"), str):
            at, char = how
            event["body"] = event["body"][:at] + char + event["body"][at:]
        elif kind == "escaped in the body, signed":
            body = json.dumps({"zen": f"\\u{how[0]:04x}", "hook_id": 1, "update_id": 1}).replace("\\\\u", "\\u").encode()
            event = github(body) if event.get("rawPath") == "/github" else telegram(body)
        elif kind == "header" and isinstance(event.get("headers"), dict):
            event["headers"][how[0]] = how[1]
        elif kind == "header name" and isinstance(event.get("headers"), dict):
            event["headers"][how[0]] = "x"
        elif kind == "field":
            _set(event, *how)
    return event


@settings(max_examples=examples(300),
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(route=st.sampled_from(["/github", "/telegram"]), steps=changes())
def test_whatever_the_function_is_given_it_answers_a_2xx_or_a_4xx_with_its_reason_in_one_log_line(
        world, log_lines, route, steps):
    answered(world, log_lines, changed(github() if route == "/github" else telegram(), steps))


# -- the cases, one by one ------------------------------------------------------------------------------------


def test_the_requests_as_github_and_telegram_send_them_are_answered_200(world, log_lines):
    assert answered(world, log_lines, github()) == (200, {"outcome": "pong"})
    assert answered(world, log_lines, telegram())[0] == 200


def _without(path: tuple[str, ...]):
    return lambda event: _set(event, path, ...)


def _header(name: str, value: Any):
    return lambda event: event["headers"].__setitem__(name, value)


def _field(name: str, value: Any):
    return lambda event: event.__setitem__(name, value)


CASES = [
    # text no client can send
    ("a lone surrogate in the body", _field("body", '{"zen": "\ud800"}'), 400, "body holds text no client can send"),
    ("Telegram's secret token", _header(SECRET, "\ud800"), 400, f"header {SECRET} holds text no client can send"),
    ("the signature", _header(SIGNATURE, "sha256=\udfff"), 400, f"header {SIGNATURE} holds text no client can send"),
    ("the event", _header(EVENT, "pi\ud800ng"), 400, f"header {EVENT} holds text no client can send"),
    ("a header's name", _header("x-\ud800", "1"), 400, "a header's name is not text a client can send"),
    ("a header repeated in another case", lambda event: event["headers"].update({"X-Zen": "\ud800", "x-zen": "ok"}), 400,
     "header X-Zen holds text no client can send"),
    ("the path", _field("rawPath", "/git\ud800hub"), 400, "the method or path holds text no client can send"),
    # events API Gateway does not send
    ("no requestContext", _without(("requestContext",)), 400, "not an API Gateway request: no method, stage or path"),
    ("no method", _without(("requestContext", "http", "method")), 400, "not an API Gateway request: no method, stage or path"),
    ("no stage", _without(("requestContext", "stage")), 400, "not an API Gateway request: no method, stage or path"),
    ("headers as a list", _field("headers", ["x-github-event: ping"]), 400, "headers are not names and values"),
    ("headers as a number", _field("headers", 7), 400, "headers are not names and values"),
    ("a header that is no text", _header(EVENT, None), 400, f"header {EVENT} is not text"),
    ("a header that is a list", _header(SECRET, [TELEGRAM_SECRET]), 400, f"header {SECRET} is not text"),
    ("a body that is a number", _field("body", 12), 400, "body is not text"),
    ("a body that is an object", _field("body", {"zen": "x"}), 400, "body is not text"),
    ("isBase64Encoded as text", _field("isBase64Encoded", "false"), 400, "isBase64Encoded is neither true nor false"),
    ("isBase64Encoded as a number", _field("isBase64Encoded", 1), 400, "isBase64Encoded is neither true nor false"),
    ("a body that is not base64", _field("isBase64Encoded", True), 400, "body is not valid base64"),
]


@pytest.mark.parametrize("route", ["/github", "/telegram"])
@pytest.mark.parametrize("what, change, status, reason", CASES, ids=[case[0] for case in CASES])
def test_a_request_no_client_could_send_is_answered_with_a_4xx_and_its_reason(world, log_lines, route, what, change,
                                                                           status, reason):
    event = github() if route == "/github" else telegram()
    change(event)
    assert answered(world, log_lines, event) == (status, {"error": reason})
    assert world.telegram.requests == [] and world.hub.requests == []


@pytest.mark.parametrize("event", [None, [], "POST /github", 0, {}], ids=["None", "a list", "text", "a number", "{}"])
def test_an_event_that_is_no_request_at_all_is_a_400(world, log_lines, event):
    status, body = answered(world, log_lines, event)
    assert status == 400 and body["error"].startswith("not an API Gateway request")


@pytest.mark.parametrize("route", ["/github", "/telegram"])
def test_a_lone_surrogate_escaped_in_a_signed_body_is_refused_as_json_no_client_can_send(world, log_lines, route):
    body = b'{"zen": "\\ud800", "hook_id": 1, "update_id": 1}'  # json.loads takes it, and makes a lone surrogate
    event = github(body) if route == "/github" else telegram(body)
    assert answered(world, log_lines, event) == (
        400, {"error": "body is not JSON a client can send: a string holds a lone surrogate"})


def test_a_surrogate_encoded_in_a_telegram_update_s_bytes_is_refused_as_json_no_client_can_send(world, log_lines):
    event = telegram()
    event["body"], event["isBase64Encoded"] = base64.b64encode(b'{"update_id": 1, "x": "\xed\xa0\x80"}').decode(), True
    assert answered(world, log_lines, event) == (
        400, {"error": "body is not JSON a client can send: a string holds a lone surrogate"})


def test_a_pair_of_surrogates_escaped_in_a_body_is_the_character_they_make(world, log_lines):
    status, body = answered(world, log_lines, github(b'{"zen": "\\ud83d\\ude00", "hook_id": 1}'))
    assert (status, body) == (200, {"outcome": "pong"})


@pytest.mark.parametrize("route", ["/github", "/telegram"])
def test_no_headers_at_all_is_a_request_without_its_signature_or_secret_token(world, log_lines, route):
    event = github() if route == "/github" else telegram()
    event["headers"] = None
    assert answered(world, log_lines, event)[0] == 401


def test_a_path_or_method_pager_does_not_serve_is_a_404_with_one_log_line(world, log_lines):
    event = github()
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/elsewhere"
    assert answered(world, log_lines, event) == (404, {"error": "no such endpoint: POST /github or POST /telegram"})
    event = telegram()
    event["requestContext"]["http"]["method"] = "GET"
    assert answered(world, log_lines, event)[0] == 404
    [line] = [line for line in log_lines() if line.get("method") == "GET"]
    assert (line["message"], line["status"], line["path"]) == ("request refused", 404, "/telegram")
