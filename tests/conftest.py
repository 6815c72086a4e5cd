"""Fixtures of the suite: a throwaway key, the operator settings, pager's log lines, the fake world.

The support itself (fake GitHub, Telegram and table, payloads, events, the failure matrix) is the
package `pager_world` (sim/pager_world), shared with the demo and the benchmark.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pager_world.events import github_event as _github_event
from pager_world.events import sign as _sign
from pager_world.events import telegram_event as _telegram_event
from pager_world.payloads import FIXTURES, example, fixture_files  # noqa: F401  (re-exported for the tests)
from pager_world.world import BOT_TOKEN, GITHUB_API, TELEGRAM_API, TELEGRAM_SECRET, WEBHOOK_SECRET, World

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
    "GITHUB_API_URL": GITHUB_API,
    "TELEGRAM_API_URL": TELEGRAM_API,
}


def load_payload(event: str, action: str | None = None) -> dict[str, Any]:
    """GitHub's example payload for an event and action (a fresh copy each call)."""
    return example(event, action)


def sign(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    return _sign(body, secret)


def github_event(event: str, payload: dict[str, Any] | bytes, *, secret: str | None = WEBHOOK_SECRET, **kwargs: Any) -> dict[str, Any]:
    """POST /github as GitHub sends it, signed with the test secret unless told otherwise."""
    return _github_event(event, payload, secret=secret, **kwargs)


def telegram_event(update: dict[str, Any], *, secret: str | None = TELEGRAM_SECRET) -> dict[str, Any]:
    return _telegram_event(update, secret=secret)


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


@pytest.fixture
def make_world(private_key_pem: str):
    """A factory of fresh fake worlds (`pager_world.World`), each with pager's real handlers."""
    return lambda **overrides: World(private_key_pem, **overrides)


@pytest.fixture
def world(make_world) -> World:
    return make_world()
