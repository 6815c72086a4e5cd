"""Failures that end in messages, in the fake world's closed loop: API Gateway's throttling (429), long
outages of Telegram, pager's own outage, and bursts; the real handler answers, GitHub's deliveries list
records its answers, and the sweep's redeliveries go through the handler again.
"""

from __future__ import annotations

import pytest
from support import OWN_MESSAGE, paced

from pager.sweep.deliveries import LAST_CHANCE_MARGIN, PAGES_PER_MINUTE
from pager.sweep.lists import GITHUB_RETENTION
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
    # (one renders; a delivery that stored its entry just after a render ended renders too: a few on a loaded machine)
    assert outcomes.count("shown by the render under way") >= 90
    [alarm] = world.chat.chat()
    assert alarm.text.count("•") == 100 and len(world.chat.sent) == 1  # one message listing all of them
    sweeps.advance(15)
    assert sweeps.sweep()["redeliveries"] == 0  # nothing left to deliver again


def telegram_outage(sweeps, hours: float, every_hours: float) -> list[str]:
    """Telegram answers 502 to every call for `hours`; someone from outside comments every `every_hours`;
    the sweep runs every 15 minutes (the every-minute check meanwhile would only probe Telegram, as the
    runs do: left out), then, Telegram back, half an hour of the check each minute. The comments' guids."""
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
    sweeps.minutes(30)
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
    # held: no attempt spent while Telegram was down, one once it was back
    assert all([a["status_code"] for a in world.attempts(guids[n])] == [500, 200] for n in kept)
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


def test_deliver_all_again_asks_once_for_each_failed_delivery_paced_for_the_chat(make_sweeps):
    sweeps = make_sweeps(through_handler=True)
    broken = {"issue_comment"}  # their handler fails; the fleet's other deliveries pass
    sweeps.answer = lambda guid, redelivery: 500 if sweeps.github.payloads[guid][0] in broken else 200
    failing = {sweeps.deliver("issue_comment", "created", 10 + n) for n in range(15)}
    for _ in range(5):  # each uses up its three attempts, a quarter hour and its checks at a time
        sweeps.deliver("issues", "labeled", 1)  # the fleet's other deliveries pass meanwhile: pager's endpoint works
        sweeps.sweep()
        sweeps.minutes(15)
        if set(sweeps.entries()) == failing:
            break
    assert set(sweeps.entries()) == failing
    [control] = [m for m in sweeps.telegram.chat() if m.text.startswith(OWN_MESSAGE)]
    assert ["↻ Deliver all 15 again"] in [[b["text"] for b in row] for row in control.buttons]
    broken.clear()  # fixed
    asked = len(sweeps.github.redelivery_requests)

    def press() -> str:
        return sweeps.world.update(sweeps.world.press_update("again:all", message_id=control.message_id))[1]["outcome"]

    assert press() == "↻ the 15 failed deliveries are delivered again over the next minutes"
    assert press().startswith("↻ already delivering them again")
    runs = [s for s in sweeps.minutes(6) if "all_delivered_again" in s]  # the check runs the sweep each minute until done
    # paced: comments page, and Telegram takes 20 messages a minute in a group
    assert [s["all_delivered_again"] for s in runs] == paced(15, PAGES_PER_MINUTE)
    assert len(sweeps.github.redelivery_requests) == asked + 15  # each once
    sweeps.advance(15)
    sweeps.sweep()
    assert sweeps.entries() == {} and [m.text for m in sweeps.telegram.chat() if m.text.startswith(OWN_MESSAGE)][-1].startswith(
        "✅ pager is well again")


def test_pagers_own_outage_is_held_like_a_services_and_caught_up_within_minutes_of_its_end(make_sweeps):
    sweeps = make_sweeps(through_handler=True)
    sweeps.answer = lambda guid, redelivery: 200
    sweeps.deliver("issues", "labeled", 1)
    sweeps.advance(15)
    sweeps.sweep()
    sweeps.down = 502  # a bad deploy: API Gateway's 502 to every delivery and every ping, for three hours
    events = []
    for quarter in range(12):  # a run every quarter hour, the check every minute
        for n in range(8):
            events.append(sweeps.deliver("issue_comment", "created", 100 + 8 * quarter + n))
            sweeps.deliver("issues", "labeled", 1)
        sweeps.minutes(14)
        summary = sweeps.sweep()
        sweeps.advance(1)
    assert summary["recovery"] == "waiting: pager" and summary["decisions"]["held"] == len(events)
    assert sweeps.entries() == {}  # nothing asked for while it would fail again: no attempt spent, none named
    assert "pager's own endpoint has failed every delivery since" in sweeps.alarm_text()
    sweeps.down = None  # fixed
    summaries = sweeps.minutes(30)
    released = next(i for i, s in enumerate(summaries) if s["outcome"] == "done")
    assert released == 0  # the check pings pager's endpoint each minute: the first one after the fix ends the hold
    asked = [i for i, s in enumerate(summaries) if s.get("redeliveries")]
    assert asked[-1] - released <= len(events) // PAGES_PER_MINUTE  # then a minute's pace at a time: 96 events in minutes
    assert all([a["status_code"] for a in sweeps.attempts(g)] == [502, 200] for g in events)  # each once, and it passed
    sweeps.advance(15)
    sweeps.sweep()
    assert sweeps.alarm_text().startswith("✅ pager is well again")


def test_failures_a_scheduled_run_reads_where_a_pass_goes_on_below_the_lists_head_hold_nothing(make_sweeps):
    sweeps = make_sweeps(sweep_all_pages=1)  # a run reads a page: a busy quarter hour is read over many runs
    sweeps.sweep()
    for _ in range(50):
        sweeps.deliver("issues", "labeled", 1)
    sweeps.answer = lambda guid, redelivery: 502  # a minute of pager failing
    failed = [sweeps.deliver("issue_comment", "created", 10 + n) for n in range(5)]
    sweeps.answer = lambda guid, redelivery: 200  # and working again since: fifteen pages of deliveries pass
    for _ in range(1500):
        sweeps.deliver("issues", "labeled", 1)
    sweeps.advance(15)
    assert sweeps.sweep()["pass"] == "under way"
    assert all(s["pass"] == "under way" for s in sweeps.minutes(14))  # the check's runs read on, a page a minute
    scheduled = sweeps.sweep()  # the next quarter hour's run reads the page below: the failures are its newest
    # older than the list's head, they say nothing of pager's endpoint now: no hold, asked for again
    assert scheduled["pass"] == "read" and "pager" not in scheduled["recovery"] and scheduled["redeliveries"] == 5
    assert all([a["status_code"] for a in sweeps.attempts(g)] == [502, 200] for g in failed)


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


def test_after_three_days_of_githubs_outage_a_comment_whose_draft_was_never_asked_for_is_named_not_dropped(sweeps):
    # GitHub fails every call for three days (its API, its deliveries list, its redeliveries; webhooks still
    # arrive): each comment is shown, its draft's dispatch fails, and pager answers 500. GitHub returns as the
    # first comment's three days end.
    world = sweeps.world
    down = world.faults.fail("github", None, kind="github-5xx", count=10**9)
    guids, end = [], sweeps.now + GITHUB_RETENTION
    n = 0
    while sweeps.now < end:
        if n < 12 and sweeps.now >= end - GITHUB_RETENTION + n * 6 * 3600:
            guids.append(f"comment-{n}")
            assert world.deliver("issue_comment", issue_comment_by("alice", comment_id=9000 + n, number=200 + n),
                                 guid=guids[-1])[0] == 500
            n += 1
        sweeps.advance(15)
        sweeps.sweep()
    world.faults.rules.remove(down)  # GitHub is back
    for minute in range(60):
        start = sweeps.now
        sweeps.sweep() if minute % 15 == 14 else sweeps.check()
        sweeps.now = start + 60
    drafted = {d["client_payload"].get("comment_id") for d in world.github.dispatches if d.get("event_type") == "pager-draft"}
    control = [m.text for m in world.chat.chat() if m.text.startswith(OWN_MESSAGE)]
    # the first comment, whose three days ended as GitHub came back, is named where pager says what GitHub no
    # longer keeps (never "well again" with nothing said); every other comment's draft was asked for
    assert drafted == {9000 + k for k in range(1, len(guids))}
    (said,) = control
    assert said.startswith("⚙️ 1 event never reached pager and is gone from GitHub") and \
        "they never reached you: alice's comment on Codertocat/Hello-World#200" in said, said


def test_deliver_all_again_asks_nothing_more_for_an_event_the_sweep_asks_for_at_its_last_chance(make_sweeps):
    """An event at its last chance is named (an entry with ↻) and asked for by the decision: ↻ Deliver all again,
    pressed meanwhile, leaves it to the decision's ask in the run, which asks GitHub for it once."""
    sweeps = make_sweeps(through_handler=True)
    sweeps.deliver("issues", "labeled", 1)
    sweeps.advance(15)
    sweeps.sweep()
    sweeps.down = 502  # pager's own endpoint fails (a bad deploy)
    comment = sweeps.deliver("issue_comment", "created", 10)
    sweeps.advance(15)
    assert sweeps.sweep()["recovery"] == "waiting: pager"
    sweeps.advance(70 * 60 + 30)  # the outage lasts: the comment is 70.75 h old, at its last chance
    summary = sweeps.sweep()
    assert summary["decisions"]["last chance"] == 1 and comment in sweeps.entries()
    [control] = [m for m in sweeps.telegram.chat() if m.text.startswith(OWN_MESSAGE)][-1:]
    pressed = sweeps.world.update(sweeps.world.press_update("again:all", message_id=control.message_id))[1]["outcome"]
    assert pressed.startswith("↻ the 1 failed")
    sweeps.down = None  # fixed: the next check's ping passes and releases the run
    released = sweeps.check()
    assert released.get("redeliveries", 0) + released.get("all_delivered_again", 0) == 1, released
    assert [a["status_code"] for a in sweeps.attempts(comment)] == [502, 200]
