"""The handler registry and the two lists the sweep reads: SUPERSEDED and ALWAYS_AGAIN."""

from __future__ import annotations

import re
from pathlib import Path

import pager.signals  # noqa: F401  registers every signal handler
from pager.routing import ALWAYS_AGAIN, SUPERSEDED, Registry, registry, subscribed_events


def test_every_subscribed_event_is_in_exactly_one_of_superseded_and_always_again():
    events = set(subscribed_events())
    assert events, "no signal handler is registered"
    unplaced = events - SUPERSEDED - ALWAYS_AGAIN
    assert not unplaced, f"put each of {sorted(unplaced)} into SUPERSEDED or ALWAYS_AGAIN in pager/routing.py"
    assert not SUPERSEDED & ALWAYS_AGAIN


def test_the_readme_lists_exactly_the_events_the_app_must_subscribe_to():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("<!-- events -->")[1].split("<!-- /events -->")[0]
    listed = set(re.findall(r"`([a-z_]+)`", section))
    assert listed == set(subscribed_events())


def test_a_handler_for_every_action_is_found_for_each_action():
    local = Registry()

    @local.on("issues")
    def any_action(delivery, services):
        return "any"

    @local.on("issues", "opened", "closed")
    def opened_or_closed(delivery, services):
        return "specific"

    assert local.lookup("issues", "opened") == [any_action, opened_or_closed]
    assert local.lookup("issues", "labeled") == [any_action]
    assert local.lookup("push", None) == []
    assert local.events() == {"issues"}


def test_ping_is_answered_but_not_subscribed():
    assert registry.lookup("ping", None)
    assert "ping" not in subscribed_events()
