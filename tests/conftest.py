"""Shared test helpers: GitHub's example payloads, signing, and API Gateway HTTP API events."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

# GitHub's example payloads (octokit/webhooks, MIT), carried in the repository: see its README.
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "github-webhooks"

WEBHOOK_SECRET = "test-webhook-secret"
TELEGRAM_SECRET = "test-telegram-secret"
BOT_TOKEN = "123456:TEST-bot-token-do-not-log"


def fixture_files() -> list[Path]:
    """Every example payload: one file per event and action."""
    return sorted(FIXTURES.glob("*/*.json"))


def load_payload(event: str, action: str | None = None) -> dict[str, Any]:
    """GitHub's example payload for an event and action (a fresh copy each call)."""
    name = f"{action}.payload.json" if action else "payload.json"
    return json.loads((FIXTURES / event / name).read_text())


def sign(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def github_event(
    event: str,
    payload: dict[str, Any] | bytes,
    *,
    guid: str = "72d3162e-cc78-11e3-81ab-4c9367dc0958",
    secret: str | None = WEBHOOK_SECRET,
    form: bool = False,
    signature: str | None = None,
) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) event for POST /github, as GitHub would send it."""
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    if form:
        raw = ("payload=" + urllib.parse.quote_plus(raw.decode())).encode()
    headers = {
        "content-type": "application/x-www-form-urlencoded" if form else "application/json",
        "user-agent": "GitHub-Hookshot/test",
        "x-github-event": event,
        "x-github-delivery": guid,
        "x-github-hook-id": "1",
    }
    if signature is not None:
        headers["x-hub-signature-256"] = signature
    elif secret is not None:
        headers["x-hub-signature-256"] = sign(raw, secret)
    return http_api_event("/github", raw, headers, base64_body=form)


def telegram_event(update: dict[str, Any], *, secret: str | None = TELEGRAM_SECRET) -> dict[str, Any]:
    headers = {"content-type": "application/json"}
    if secret is not None:
        headers["x-telegram-bot-api-secret-token"] = secret
    return http_api_event("/telegram", json.dumps(update).encode(), headers)


def http_api_event(path: str, raw: bytes, headers: dict[str, str], *, base64_body: bool = False) -> dict[str, Any]:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        base64_body = True  # API Gateway passes bytes that are not text base64-encoded
    return {
        "version": "2.0",
        "routeKey": f"POST {path}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": headers,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "api",
            "domainName": "api.example.com",
            "domainPrefix": "api",
            "http": {"method": "POST", "path": path, "protocol": "HTTP/1.1", "sourceIp": "192.0.2.1", "userAgent": "test"},
            "requestId": "req-1",
            "routeKey": f"POST {path}",
            "stage": "$default",
            "time": "02/Dec/2026:08:00:00 +0000",
            "timeEpoch": 1796198400000,
        },
        "body": base64.b64encode(raw).decode() if base64_body else raw.decode(),
        "isBase64Encoded": base64_body,
    }


TEST_ENV = {
    "PAGER_TABLE": "pager-test",
    "GITHUB_APP_ID": "12345",
    "GITHUB_APP_SLUG": "pager-test",
    "GITHUB_WEBHOOK_SECRET": WEBHOOK_SECRET,
    "TELEGRAM_BOT_TOKEN": BOT_TOKEN,
    "TELEGRAM_WEBHOOK_SECRET": TELEGRAM_SECRET,
    "TELEGRAM_CHAT_ID": "-1001",
    "TELEGRAM_ALLOWED_USERS": "42",
    "CONTROL_REPOSITORY": "maintainer/pager",
    "GITHUB_API_URL": "https://api.github.test",
    "TELEGRAM_API_URL": "https://api.telegram.test",
}


@pytest.fixture(scope="session")
def private_key_pem() -> str:
    """A throwaway RSA key for the app's JWT (generated once per test session)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


@pytest.fixture
def pager_env(monkeypatch: pytest.MonkeyPatch, private_key_pem: str) -> dict[str, str]:
    """The operator settings in the environment, as a deployment would have them."""
    env = dict(TEST_ENV, GITHUB_PRIVATE_KEY=private_key_pem)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "PagerTest")
    return env


@pytest.fixture
def log_lines():
    """The JSON lines pager logs during a test, as CloudWatch would receive them."""
    import io
    import logging

    from pager.observe import logger

    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logger.registered_formatter)
    logger.addHandler(handler)
    try:
        yield lambda: [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]
    finally:
        logger.removeHandler(handler)
