"""Failures that end in messages, in the fake world's closed loop: API Gateway's throttling (429), long
outages of Telegram, pager's own outage, and bursts; the real handler answers, GitHub's deliveries list
records its answers, and the sweep's redeliveries go through the handler again.
"""

from __future__ import annotations

import pytest

from pager.webhook import handle_github
from pager_world.cases import issue_opened
from pager_world.events import github_event
from pager_world.world import WEBHOOK_SECRET


@pytest.fixture
def sweeps(make_sweeps):
    world = make_sweeps(through_handler=True)
    world.answer = None  # pager's own handlers answer every delivery
    return world


def handler_but(world, first: int):
    """What answers GitHub: `first` for an event's first delivery (as API Gateway, before pager runs), pager's
    own handler for every redelivery."""

    def answer(guid: str, redelivery: bool) -> int:
        if not redelivery:
            return first
        event, body = world.github.payloads[guid]
        status, out = handle_github(github_event(event, body, guid=guid, secret=WEBHOOK_SECRET), world.services,
                                    monotonic=world.clock)
        world.answers[guid] = out
        return status

    return answer


def test_a_delivery_api_gateway_throttled_with_429_is_asked_for_again_like_a_5xx(sweeps):
    world = sweeps.world
    sweeps.answer = handler_but(world, 429)
    world.github.deliver("issues", issue_opened(), guid="throttled")
    sweeps.advance(15)
    summary = sweeps.sweep()
    assert summary["redeliveries"] == 1 and summary["decisions"]["refused"] == 0
    assert [a["status_code"] for a in world.attempts("throttled")] == [429, 200]
    assert len(world.chat.sent) == 1 and len(world.hub.dispatches) == 1
