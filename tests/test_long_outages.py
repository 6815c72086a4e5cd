"""Failures that end in messages, in the fake world's closed loop: API Gateway's throttling (429), long
outages of Telegram, pager's own outage, and bursts; the real handler answers, GitHub's deliveries list
records its answers, and the sweep's redeliveries go through the handler again.
"""

from __future__ import annotations

import pytest
from support import OWN_MESSAGE

from pager.sweep.plan import GITHUB_RETENTION, LAST_CHANCE_MARGIN
from pager.webhook import handle_github
from pager_world.cases import issue_comment_by, issue_opened, run
from pager_world.events import github_event
from pager_world.world import WEBHOOK_SECRET


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


def telegram_outage(sweeps, hours: float, every_hours: float) -> list[str]:
    """Telegram answers 502 to every call for `hours`; someone from outside comments every `every_hours`;
    the sweep runs every 15 minutes and the recovery check every minute. The comments' guids."""
    world = sweeps.world
    outage = world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    guids, n, next_comment, end = [], 0, sweeps.now, sweeps.now + hours * 3600
    while sweeps.now < end:
        if sweeps.now >= next_comment:
            guids.append(f"comment-{n}")
            world.deliver("issue_comment", issue_comment_by("alice", comment_id=9000 + n, number=200 + n), guid=guids[-1])
            n, next_comment = n + 1, next_comment + every_hours * 3600
        sweeps.advance(15)
        sweeps.sweep()
    world.faults.rules.remove(outage)  # Telegram is back
    for _ in range(30):  # half an hour of the every-minute check
        sweeps.advance(1)
        sweeps.check()
    return guids


def shown(world, n: int) -> bool:
    return any(f"issuecomment-{9000 + n}" in m.text for m in world.chat.chat())


@pytest.mark.parametrize("hours, every", [(6, 0.5), (72, 1), (84, 6)])
def test_after_a_long_telegram_outage_what_was_held_comes_back_as_the_pages_themselves(sweeps, hours, every):
    world = sweeps.world
    guids = telegram_outage(sweeps, hours, every)
    back = sweeps.now - 30 * 60  # Telegram returned half an hour ago
    # Every page GitHub still kept when Telegram returned (but for its last minutes) reached the chat as a page,
    # those in their last two hours too (named meanwhile, and asked for while GitHub keeps them).
    kept = [n for n, guid in enumerate(guids)
            if world.attempts(guid)[0]["delivered_at"] >= _iso(back - GITHUB_RETENTION + LAST_CHANCE_MARGIN + 60)]
    assert kept and all(shown(world, n) for n in kept), [n for n in kept if not shown(world, n)]
    assert all(len(world.attempts(guids[n])) <= 3 for n in kept)  # no attempt spent while Telegram was down
    forgotten = [n for n in range(len(guids)) if n not in kept]
    control = [m.text for m in world.chat.chat() if m.text.startswith(OWN_MESSAGE)]
    if forgotten:  # what GitHub no longer keeps is said, never closed silently, and named by thing
        said = f"{len(forgotten)} event{'s' * (len(forgotten) > 1)} failed between "
        assert any(said in t and "GitHub no longer keeps them" in t and "alice's comment on" in t for t in control), control
    else:
        assert not any("all attempts failed" in t for t in control)


def _iso(epoch: float) -> str:
    from pager.values import iso

    return iso(epoch)


def test_deliver_all_again_asks_once_for_each_failed_delivery_paced_within_the_budget(make_sweeps):
    sweeps = make_sweeps(through_handler=True)
    sweeps.answer = lambda guid, redelivery: 500  # pager's endpoint fails: twelve events use up their attempts
    guids = [sweeps.deliver("issue_comment", "created", 10 + n) for n in range(12)]
    while set(sweeps.entries()) != set(guids):  # ten redeliveries a run: a few runs
        sweeps.advance(15)
        sweeps.sweep()
    [control] = [m for m in sweeps.telegram.chat() if m.text.startswith(OWN_MESSAGE)]
    assert ["↻ Deliver all 12 again"] in [[b["text"] for b in row] for row in control.buttons]
    sweeps.answer = lambda guid, redelivery: 200  # fixed
    asked = len(sweeps.github.redelivery_requests)

    def press() -> str:
        return sweeps.world.update(sweeps.world.press_update("again:all", message_id=control.message_id))[1]["outcome"]

    assert press() == "↻ the 12 failed deliveries are delivered again over the next minutes"
    assert press().startswith("↻ already delivering them again")
    first = sweeps.check()  # the check runs the sweep each minute until every entry was asked for
    assert first["all_delivered_again"] == 10  # paced: SWEEP_MAX_REDELIVERIES a run
    while sweeps.check()["outcome"] != "nothing waits":
        sweeps.advance(1)
    assert len(sweeps.github.redelivery_requests) == asked + 12  # each once
    sweeps.advance(15)
    sweeps.sweep()
    assert sweeps.entries() == {} and [m.text for m in sweeps.telegram.chat() if m.text.startswith(OWN_MESSAGE)][-1].startswith(
        "✅ pager is well again")


def test_pagers_own_outage_is_held_like_a_services_and_caught_up_faster_than_ten_a_quarter_hour(make_sweeps):
    sweeps = make_sweeps(through_handler=True)
    up = {"pager": True}
    sweeps.answer = lambda guid, redelivery: 200 if up["pager"] else 502  # API Gateway's 502: pager's function fails
    sweeps.deliver("issues", "labeled", 1)  # a delivery pager ignores, passed: the probe of its outage
    sweeps.advance(15)
    sweeps.sweep()
    up["pager"] = False  # a bad deploy: every delivery 502, for three hours
    events = []
    for quarter in range(12):
        for n in range(8):
            events.append(sweeps.deliver("issue_comment", "created", 100 + 8 * quarter + n))
            sweeps.deliver("issues", "labeled", 1)
        sweeps.advance(15)
        summary = sweeps.sweep()
    assert summary["recovery"] == "held: pager's own endpoint fails every delivery"
    named_during = set(sweeps.entries())
    assert len(named_during) <= 3  # the first run's redeliveries, which told it was down; not 56 as before
    up["pager"] = True  # fixed
    sweeps.advance(15)
    sweeps.sweep()  # the probe passes
    sweeps.advance(15)
    sweeps.sweep()  # sees it pass: the check catches up, a run a minute
    minutes = 0
    while sweeps.check()["outcome"] != "nothing waits":
        sweeps.advance(1)
        minutes += 1
    back = [g for g in events if sweeps.attempts(g)[-1]["status_code"] == 200]
    assert len(back) + len(named_during) >= len(events) and minutes <= 15  # 96 events in minutes, not hours
    assert all(len(sweeps.attempts(g)) <= 3 for g in events)


def test_a_delivery_that_cannot_finish_rendering_what_others_left_to_it_answers_500_and_its_redelivery_does(make_sweeps,
                                                                                                            monkeypatch):
    from pager.signals import alarm

    monkeypatch.setattr(alarm, "RENDERS_AGAIN", 1)  # the entries keep changing past what one delivery renders
    sweeps = make_sweeps(through_handler=True, alarm_grace_minutes=60)  # (no repost with a sound meanwhile)
    sweeps.answer = None  # pager's own handlers answer
    world = sweeps.world
    assert world.deliver("workflow_run", run("failure"), guid="renderer")[0] == 500  # not a 200 nobody follows up
    sweeps.advance(15)
    sweeps.sweep()
    assert [a["status_code"] for a in world.attempts("renderer")] == [500, 200]
    [alarm_message] = world.chat.chat()
    assert alarm_message.text.startswith("🚨")
