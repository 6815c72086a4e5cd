"""Failures that end in messages, in the fake world's closed loop: API Gateway's throttling (429), long
outages of Telegram, pager's own outage, and bursts; the real handler answers, GitHub's deliveries list
records its answers, and the sweep's redeliveries go through the handler again.
"""

from __future__ import annotations

import pytest

from pager.webhook import handle_github
from pager_world.cases import issue_opened, run
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


def test_a_burst_of_a_hundred_failures_on_one_repository_answers_200_for_each_stored_entry_and_shows_them(sweeps):
    world = sweeps.world
    world.telegram_latency = 0.3  # Telegram answers each call in 300 ms
    bodies = [run("failure", workflow_id=7000 + i, number=5, name=f"job-{i:03}") for i in range(100)]
    answers = world.concurrently(*(lambda b=b, i=i: world.deliver("workflow_run", b, guid=f"burst-{i}")[0]
                                   for i, b in enumerate(bodies)))
    # Each delivery stored its entry; one rendered (and rendered again for what the others stored meanwhile),
    # the others left it to that render and answered at once: none waited out its deadline into a 500.
    assert answers == [200] * 100
    outcomes = [world.answers[f"burst-{i}"]["outcome"] for i in range(100)]
    assert outcomes.count("shown by the render under way") == 99
    [alarm] = world.chat.chat()
    assert alarm.text.count("•") == 100 and len(world.chat.sent) == 1  # one message listing all of them
    sweeps.advance(15)
    assert sweeps.sweep()["redeliveries"] == 0  # nothing left to deliver again
