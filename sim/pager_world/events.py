"""What AWS hands pager's functions: API Gateway HTTP API events (payload 2.0) and Lambda's context.

As docs.aws.amazon.com describes HTTP API payload 2.0: header names lowercased, a body of a text
content type passed as text, any other body base64-encoded with `isBase64Encoded: true` (GitHub's
form encoding `application/x-www-form-urlencoded` is such a body). GitHub signs the raw body:
`X-Hub-Signature-256: sha256=<hex HMAC-SHA256>` (docs.github.com, Validating webhook deliveries).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import time
import urllib.parse
from typing import Any

from pager.values import iso

TEXT_TYPES = ("application/json", "text/")
_requests = itertools.count(1)


def sign(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def apigw_event(method: str, path: str, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    """The HTTP API (payload 2.0) event for a request: lowercased headers, non-text bodies base64."""
    lowered = {k.lower(): v for k, v in headers.items()}
    as_text = lowered.get("content-type", "").startswith(TEXT_TYPES)
    try:
        text = body.decode("utf-8") if as_text else None
    except UnicodeDecodeError:
        text = None
    request_id = f"req-{next(_requests)}"
    return {
        "version": "2.0",
        "routeKey": f"{method} {path}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": lowered,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "api",
            "domainName": "api.example.com",
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "192.0.2.1",
                     "userAgent": lowered.get("user-agent", "")},
            "requestId": request_id,
            "routeKey": f"{method} {path}",
            "stage": "$default",
            "timeEpoch": int(time.time() * 1000),
        },
        "body": text if text is not None else base64.b64encode(body).decode(),
        "isBase64Encoded": text is None,
    }


def github_event(
    event: str,
    payload: dict[str, Any] | bytes,
    *,
    secret: str | None,
    guid: str = "72d3162e-cc78-11e3-81ab-4c9367dc0958",
    form: bool = False,
    signature: str | None = None,
) -> dict[str, Any]:
    """POST /github as GitHub sends it: its headers, the body signed with `secret` (None: unsigned)."""
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    if form:
        raw = ("payload=" + urllib.parse.quote_plus(raw.decode())).encode()
    headers = {
        "content-type": "application/x-www-form-urlencoded" if form else "application/json",
        "user-agent": "GitHub-Hookshot/fake",
        "x-github-event": event,
        "x-github-delivery": guid,
        "x-github-hook-id": "1",
    }
    if signature is not None:
        headers["x-hub-signature-256"] = signature
    elif secret is not None:
        headers["x-hub-signature-256"] = sign(raw, secret)
    return apigw_event("POST", "/github", headers, raw)


def telegram_event(update: dict[str, Any], *, secret: str | None) -> dict[str, Any]:
    """POST /telegram as Telegram sends an update, with its secret token header (None: without)."""
    headers = {"content-type": "application/json"}
    if secret is not None:
        headers["x-telegram-bot-api-secret-token"] = secret
    return apigw_event("POST", "/telegram", headers, json.dumps(update).encode())


def scheduled_event(run_id: str, at: float) -> dict[str, Any]:
    """EventBridge's scheduled event, as the sweep function receives it."""
    return {"version": "0", "id": run_id, "detail-type": "Scheduled Event", "source": "aws.events",
            "account": "123456789012", "time": iso(at),
            "region": "us-east-1", "resources": [], "detail": {}}


class LambdaContext:
    """The parts of Lambda's context object that pager reads."""

    def __init__(self, name: str, seconds: float = 15.0, request_id: str | None = None) -> None:
        self.function_name = name
        self.aws_request_id = request_id or f"local-{next(_requests)}"
        self.memory_limit_in_mb = 512
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{name}"
        self._until = time.monotonic() + seconds

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._until - time.monotonic()) * 1000))
