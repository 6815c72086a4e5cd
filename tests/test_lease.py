"""The sweep's lease: one invocation at a time asks GitHub for anything (SPEC §7, amended 2026-12-07), and two
invocations never ask for one event."""

from __future__ import annotations

import uuid

from pager.sweep import lease, run_sweep
from pager.sweep.presses import BUSY
from pager.sweep.run import check
from pager.waiting import SWEEP_KEY


def queued(make_sweeps):
    """Ten deliveries that failed, a run that asked for four and queued six for the checks' minutes."""
    world = make_sweeps(sweep_max_redeliveries=4)
    world.answer = lambda guid, redelivery: 502
    guids = [world.deliver("workflow_run", "completed", i) for i in range(10)]
    world.answer = lambda guid, redelivery: 200
    world.deliver("workflow_run", "completed", 99)
    world.advance(5)
    assert world.sweep()["queued"] == 6
    return world, guids


def attempts(world, guids) -> int:
    return sum(len(world.attempts(g)) for g in guids)


def test_two_checks_of_one_minute_ask_for_its_redeliveries_once(make_sweeps):
    world, guids = queued(make_sweeps)
    world.now += 40  # the next minute has begun
    before = attempts(world, guids)
    first = world.check(later=5)  # EventBridge invokes the check twice, or a slow one overlaps the next
    second = world.check(later=5)
    assert first["redeliveries"] == 4 and second == {**second, "redeliveries": 0, "minute_taken": 1}
    assert attempts(world, guids) - before == 4
    world.now += 60
    assert world.check()["redeliveries"] == 2  # the next minute is the next check's


def test_a_run_steps_aside_while_another_holds_the_lease_and_takes_it_once_it_lapsed(sweeps):
    sweeps.deliver("workflow_run", "completed", 1)
    held = lease.take(sweeps.services, "a run that died", sweeps.now, lease.RUN_SECONDS, kind=lease.RUN)
    assert held is not None and lease.holding(sweeps.services, sweeps.now) == lease.RUN
    calls = sweeps.services.calls
    skipped = run_sweep(sweeps.services, now=sweeps.now + 60, run_id="next")
    assert skipped["outcome"].startswith("skipped") and sweeps.services.calls == calls  # asked GitHub nothing
    ran = run_sweep(sweeps.services, now=sweeps.now + lease.RUN_SECONDS + 1, run_id="after")
    assert ran["outcome"] == "done" and ran["deliveries_seen"] == 1
    assert lease.holding(sweeps.services, sweeps.services.now()) == ""  # given back at its end


def test_a_run_waits_once_for_a_checks_asks_whatever_their_invocations_are_called(sweeps):
    # as deployed, both are called by Lambda's request id (a UUID): the lease says which kind holds it
    lease.take(sweeps.services, str(uuid.uuid4()), sweeps.now, lease.CHECK_SECONDS, minute=sweeps.now // 60 * 60)
    slept = len(sweeps.world.sleeps)
    assert run_sweep(sweeps.services, now=sweeps.now, run_id=str(uuid.uuid4()))["outcome"] == "done"
    assert sweeps.world.sleeps[slept:][0] == lease.CHECK_SECONDS


def test_a_scheduled_run_after_a_checks_asks_waits_them_out_with_lambdas_request_ids(make_sweeps):
    world, guids = queued(make_sweeps)
    world.now = (world.now // 60 + 1) * 60 + 1
    assert check(world.services, now=world.now, run_id=str(uuid.uuid4()), seconds=60)["redeliveries"] == 4
    world.now += 5
    assert run_sweep(world.services, now=world.now, run_id=str(uuid.uuid4()))["outcome"] == "done"  # was skipped


def test_a_press_while_the_sweep_asks_says_so_and_asks_nothing(make_sweeps):
    sweeps = make_sweeps(through_handler=True)
    sweeps.answer = lambda guid, redelivery: 500
    guid = sweeps.deliver("issues", "opened", 10)
    for _ in range(3):
        sweeps.advance(15)
        sweeps.sweep()
    data = f"again:{sweeps.attempts(guid)[-1]['id']}"
    taken = lease.take(sweeps.services, "run-9", sweeps.now, lease.RUN_SECONDS)
    assert sweeps.press_control(data) == BUSY
    sweeps.github.deliver_pending()
    assert len(sweeps.attempts(guid)) == 3
    lease.give_back(sweeps.services, taken, sweeps.now)
    sweeps.press_control(data)
    sweeps.github.deliver_pending()
    assert len(sweeps.attempts(guid)) == 4
    assert lease.holding(sweeps.services, sweeps.now) == ""  # the press gave it back


def test_a_lease_taken_between_the_read_and_the_write_is_not_taken_again(sweeps):
    record = sweeps.store.load(SWEEP_KEY, lease.ITEM)
    assert lease.take(sweeps.services, "first", sweeps.now, lease.CHECK_SECONDS) is not None
    # a second taker read the free lease before the first wrote: its conditional write fails, it holds nothing
    sweeps.store.load = lambda key, item: record  # type: ignore[method-assign]
    assert lease.take(sweeps.services, "second", sweeps.now, lease.CHECK_SECONDS) is None


def test_give_back_after_another_took_the_lapsed_lease_leaves_it_with_them(sweeps):
    mine = lease.take(sweeps.services, "slow", sweeps.now, lease.PRESS_SECONDS)
    later = sweeps.now + lease.PRESS_SECONDS + 1
    assert lease.take(sweeps.services, "next", later, lease.RUN_SECONDS) is not None
    lease.give_back(sweeps.services, mine, later)
    assert lease.Lease.of(sweeps.store.load(SWEEP_KEY, lease.ITEM).data).by == "next"



def test_two_checks_and_a_run_of_one_minute_ask_for_each_event_once_whichever_comes_first(make_sweeps):
    for order in (("check", "check", "run"), ("run", "check", "check"), ("check", "run", "check")):
        world, guids = queued(make_sweeps)
        minute = (world.now // 60 + 1) * 60  # the next minute: four events are queued for it, two for the one after
        world.now = minute + 1
        for who in order:  # a few seconds apart (a run waits out a check's asks), each done before the next begins
            world.sweep(f"run-{who}") if who == "run" else world.check(later=5)
        for later in (61, 121):  # the checks of the minutes after
            world.now = max(world.now, minute + later)
            world.check()
        world.github.deliver_pending()
        assert [len(world.attempts(g)) for g in guids] == [2] * 10, order  # its failure, and one ask: each once


def test_a_run_a_check_releases_begins_when_it_begins_and_ends_inside_the_checks_deadline(make_sweeps, monkeypatch):
    from pager.sweep import run as run_module

    sweeps = make_sweeps()
    sweeps.pager_held()
    sweeps.down = None  # the fix is deployed: the check's ping passes and releases a run
    tick, runs = run_module.due.tick, []

    def slow_tick(services, now):  # what came due this minute took 25 s (renders, a summary)
        sweeps.now += 25
        return tick(services, now)

    def recorded(services, **kwargs):
        runs.append({**kwargs, "lease_from": services.now()})
        return run_sweep(services, **kwargs)

    monkeypatch.setattr(run_module.due, "tick", slow_tick)
    monkeypatch.setattr(run_module, "run_sweep", recorded)
    started = sweeps.now
    assert sweeps.check()["outcome"] == "done"
    [released] = runs
    assert released["now"] >= started + 25  # the run's lease and minute are counted from when it begins
    assert released["now"] + released["seconds"] <= started + run_module.RUN_SECONDS  # inside the check's deadline
    assert released["seconds"] < lease.RUN_SECONDS


def test_a_check_about_to_ask_pings_first_and_holds_pagers_endpoint_failing_since_the_run(make_sweeps):
    """pager breaks while what a run queued drains (a bad deploy between two runs): the check that would ask
    for its minute pings the endpoint first, holds it, and spends no attempt into it; the fix brings all back."""
    world, guids = queued(make_sweeps)
    world.down = 502
    world.now = (world.now // 60 + 1) * 60 + 1
    before = attempts(world, guids)
    assert world.check()["outcome"] == "waiting: pager's endpoint failed the check's ping"
    assert attempts(world, guids) == before  # no attempt spent into the broken endpoint
    world.minutes(10)
    assert attempts(world, guids) == before
    world.down = None
    world.minutes(5)
    assert all(world.attempts(g)[-1]["status_code"] == 200 for g in guids) and world.entries() == {}


def test_a_short_outage_the_checks_ping_caught_does_not_hold_back_its_minutes_asks(make_sweeps):
    world, guids = queued(make_sweeps)
    world.down = 502
    world.now = (world.now // 60 + 1) * 60 + 1
    before = attempts(world, guids)
    assert world.check()["outcome"] == "waiting: pager's endpoint failed the check's ping"
    assert attempts(world, guids) == before
    world.now = (world.now // 60 + 1) * 60 + 1
    world.down = None  # fixed a minute later: the next check's ping passes and its run asks for all
    world.minutes(4)
    assert all(world.attempts(g)[-1]["status_code"] == 200 for g in guids)


def test_asks_github_took_before_its_redeliveries_failed_count_among_an_events_three_attempts(make_sweeps, monkeypatch):
    """GitHub takes a check's first two asks of a minute, then its redeliveries fail (a hold of GitHub's
    redeliveries, noted from before the minute), while pager's handler fails on its own: no event gets a
    fourth attempt, and each that keeps failing is named."""
    from pager.errors import GitHubUnavailable

    world, guids = queued(make_sweeps)
    world.answer = lambda guid, redelivery: 502
    github, taken = world.services.github, {"asks": 0, "failing": True}
    redeliver = github.redeliver

    def flaky(delivery_id):
        taken["asks"] += 1
        if taken["failing"] and taken["asks"] > 2:
            raise GitHubUnavailable("github redeliver: GitHub answered 502")
        return redeliver(delivery_id)

    monkeypatch.setattr(github, "redeliver", flaky)
    world.now = (world.now // 60 + 1) * 60 + 1
    assert world.check()["redeliveries"] == 2
    world.minutes(3)
    taken["failing"] = False  # GitHub's redeliveries work again
    world.quarter_hours(120)
    codes = {g: [a["status_code"] for a in world.attempts(g)] for g in guids}
    assert max(len(c) for c in codes.values()) <= 3, codes
    assert all(c[-1] == 200 or g in world.entries() for g, c in codes.items()), (codes, world.entries())


def test_a_run_that_waited_out_a_checks_asks_into_the_next_minute_takes_that_minutes_asks_from_its_check(make_sweeps):
    """The check of that minute may find the run still holding the lease (and ask nothing): the run, begun in
    that minute, asks for its queue itself."""
    world, guids = queued(make_sweeps)  # six queued: four for the next minute, two for the one after
    minute = (world.now // 60 + 1) * 60
    world.now = minute + 1
    assert world.check(later=0)["redeliveries"] == 4  # the minute's check asks, holding the lease its 40 s
    world.now = minute + 30
    ran = run_sweep(world.services, now=world.now, run_id=str(uuid.uuid4()))  # waits the check out: past the minute
    assert ran["outcome"] == "done" and world.services.now() >= minute + 60
    world.github.deliver_pending()
    world.now = max(world.now, world.services.now()) + 1
    after = world.check(later=0)
    assert after.get("redeliveries", 0) == 0  # the minute after is the run's: asked for once, by it
    world.github.deliver_pending()
    assert all(world.attempts(g)[-1]["status_code"] == 200 for g in guids)
    assert all(len(world.attempts(g)) == 2 for g in guids)  # each asked for once
