"""Fixtures of the suite: a throwaway key, the operator settings in the environment, pager's log lines,
the fake world, the sweep in it. What the tests share besides fixtures is in support.py.
"""

from __future__ import annotations

import json
import os
import weakref

import pytest
from hypothesis import settings as hypothesis_settings
from support import OWN_MESSAGE, START, TEST_ENV, Sweeps, first_line_words, own_words, said

from pager_world.world import World

# The property tests draw the same examples on every run (derandomized: seeded from each test, no database),
# so a run of the suite, in CI or here, is the run before it: a case found by chance is not a defect of CI.
# `make test-deep` (HYPOTHESIS_PROFILE=deep) searches anew, many more examples, saving what it finds in
# .hypothesis/: a case found that way becomes an @example of its test, then is fixed.
hypothesis_settings.register_profile("pager", derandomize=True, database=None, deadline=None, print_blob=True)
hypothesis_settings.register_profile("deep", derandomize=False, deadline=None, print_blob=True)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "pager"))


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


_WORLDS: weakref.WeakKeyDictionary[World, None] = weakref.WeakKeyDictionary()  # every fake world made


@pytest.fixture(scope="session", autouse=True)
def _every_world_is_known():
    """Each fake world a test makes, through a fixture or by hand, is known to `githubs_words`."""
    made = World.__init__

    def init(self, *args, **kwargs) -> None:
        made(self, *args, **kwargs)
        _WORLDS[self] = None

    World.__init__ = init  # type: ignore[method-assign]
    yield
    World.__init__ = made  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def githubs_words():
    """Once a test is over, nothing pager said meanwhile in any fake world's chat is in pager's own words (a
    delivery's guid, an event's name, a raw ISO time, a table key, an exception's class); and each of pager's
    own messages (⚙️) began with one plain sentence: no status code, setting name, chat id or GUID, and short."""
    before = {world: len(world.telegram.requests) for world in list(_WORLDS)}
    yield
    texts = [text for world in list(_WORLDS) for text in said(world.telegram.requests[before.get(world, 0):])]
    found = [(words, text[:200]) for text in texts for words in own_words(text)]
    assert not found, f"the chat was told, in pager's own words: {found}"
    found = [(words, text[:200]) for text in texts if text.startswith(OWN_MESSAGE[0]) for words in first_line_words(text)]
    assert not found, f"pager's own message began with what the maintainer would have to decode: {found}"


@pytest.fixture
def make_world(private_key_pem: str):
    """A factory of fresh fake worlds (`pager_world.World`), each with pager's real handlers."""
    return lambda **overrides: World(private_key_pem, **overrides)


@pytest.fixture
def world(make_world) -> World:
    return make_world()


@pytest.fixture
def make_sweeps(private_key_pem):
    def make(*, through_handler: bool = False, **settings):
        return Sweeps(World(private_key_pem, start=START, **settings), through_handler=through_handler)

    return make


@pytest.fixture
def sweeps(make_sweeps) -> Sweeps:
    """A fake world seen from the sweep, through its lambda_handler, with pager's own handlers answering."""
    world = make_sweeps(through_handler=True)
    world.answer = None
    return world
